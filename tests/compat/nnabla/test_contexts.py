"""Contexts in the nnabla layer: ``ext_utils.get_extension_context`` (cpu, options, the CPU
ignoring the device id, cudnn without a usable GPU), ``import_extension_module``,
``set_default_context`` and context scopes. Checked against nnabla 1.39.
"""

from __future__ import annotations

import gradhub as gh
import gradhub_compat.nnabla as nn
import pytest
from gradhub_compat.nnabla.ext_utils import get_extension_context, list_extensions


def test_get_extension_context_cpu_and_options() -> None:
    ctx = get_extension_context("cpu")
    assert ctx == gh.Context("cpu", 0, "float")
    ctx = get_extension_context("cpu", device_id="0", type_config="half")
    assert ctx.type_config == "half"
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        get_extension_context("cpu", colour="red")
    assert "cpu" in list_extensions()


def test_get_extension_context_cudnn_without_a_usable_gpu_raises_clearly() -> None:
    if "cudnn" in list_extensions():
        pytest.skip("a usable CUDA device is installed here")
    with pytest.raises(gh.DeviceError, match=r"gradhub-cuda|CuPy"):
        get_extension_context("cudnn")


def test_set_default_context_and_scopes() -> None:
    before = gh.get_default_context()
    try:
        ctx = get_extension_context("cpu", type_config="half")
        nn.set_default_context(ctx)
        assert nn.get_current_context() == ctx
        other = get_extension_context("cpu")
        with nn.context_scope(other):
            assert nn.get_current_context() == other
    finally:
        gh.set_default_context(before)


def test_import_extension_module_cpu() -> None:
    from gradhub_compat.nnabla.ext_utils import get_extension_context, import_extension_module

    ext = import_extension_module("cpu")
    ext.synchronize(device_id="0")
    ext.clear_memory_cache()
    assert ext.context() == get_extension_context("cpu")
    assert ext.get_device_count() == 1


def test_cpu_context_ignores_the_device_id() -> None:
    from gradhub_compat.nnabla.ext_utils import get_extension_context

    ctx = get_extension_context("cpu", device_id="1")  # nnabla 1.39 accepts it
    assert ctx.backend == "cpu" and ctx.device_id == 0
    with pytest.raises(ValueError, match="device_id must be a non-negative integer"):
        get_extension_context("cpu", device_id="-1")


def test_array_class_is_accepted_and_recorded_as_nnabla() -> None:
    # nnabla 1.39: get_extension_context("cpu", array_class="CpuCachedArray") and
    # nn.Context(backend=["cpu:float"], array_class="CpuArray", device_id="0") are contexts
    # with that array_class; set_default_context takes them
    ctx = get_extension_context("cpu", array_class="CpuCachedArray")
    assert ctx.array_class == "CpuCachedArray"  # type: ignore[attr-defined]
    assert ctx == get_extension_context("cpu")
    ctx = nn.Context(backend=["cpu:float"], array_class="CpuArray", device_id="0")
    assert (ctx.backend, ctx.type_config, ctx.array_class) == ("cpu", "float", "CpuArray")
    assert nn.Context().array_class == ""
    assert isinstance(ctx, nn.Context) and isinstance(get_extension_context("cpu"), nn.Context)
    assert not isinstance("cpu", nn.Context)
    assert nn.Context(backend="cpu:half").type_config == "half"
    with nn.context_scope(ctx):
        assert nn.get_current_context() == ctx
        x = nn.Variable((2,))
        assert x.d.dtype == "float32"
    with pytest.raises(TypeError, match="array_class must be a string"):
        get_extension_context("cpu", array_class=1)
    with pytest.raises(TypeError, match="backend must be a list of strings"):
        nn.Context(backend=[1])
