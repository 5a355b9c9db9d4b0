"""The mxnet layer's contexts: ``mx.cpu()``, ``mx.gpu(i)``, ``with ctx:``, ``current_context`` and
``num_gpus``, and a clear error for a GPU context without a usable device.
"""

from __future__ import annotations

import gradhub as gh
import gradhub_compat.mxnet as mx
import pytest


def test_contexts() -> None:
    assert repr(mx.cpu()) == "cpu(0)" and str(mx.gpu(2)) == "gpu(2)"
    assert mx.cpu() == mx.Context("cpu", 0) and mx.cpu() != mx.gpu(0)
    assert mx.Context(mx.gpu(1)) == mx.gpu(1) and hash(mx.gpu(1)) == hash(mx.gpu(1))
    assert mx.cpu_pinned().device() is mx.cpu().device()
    assert mx.current_context() == mx.cpu()
    with mx.cpu(0) as ctx:
        assert mx.current_context() is ctx
    with pytest.raises(ValueError, match="device_type must be one of"):
        mx.Context("tpu")
    assert mx.num_gpus() >= 0


def test_gpu_without_a_usable_device_raises_clearly() -> None:
    if mx.num_gpus() > 0:
        pytest.skip("a usable GPU is installed here")
    with pytest.raises(gh.DeviceError, match=r"gradhub-cuda|CuPy"):
        mx.nd.ones(2, ctx=mx.gpu(0))
    a = mx.sym.Variable("a")
    with pytest.raises(gh.DeviceError, match=r"gradhub-cuda|CuPy"):
        (a * 2).bind(mx.gpu(0), {"a": mx.nd.ones(2)})
