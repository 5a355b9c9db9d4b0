"""F.deformable_convolution and PF.deformable_convolution as nnabla 1.39's: outputs and the
gradients with respect to x, weight, offset, mask and bias (v1 and v2, group and
deformable_group 1 and 2, stride, pad and dilation, fractional offsets with some samples outside
the image, whole-pixel offsets, where the one-sided derivatives at the kinks are nnabla's); PF's
parameter names, shapes and initial weights; channel_last; argument errors.

The expected values were written by nnabla 1.39.0 (data/make_deformable_convolution_reference.py
wrote data/deformable_convolution_reference.npz).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest

_DATA = Path(__file__).parent / "data"
_REF = dict(np.load(_DATA / "deformable_convolution_reference.npz"))


def _reference_script() -> Any:
    """data/make_deformable_convolution_reference.py as a module (its cases)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_deformable_convolution_reference",
        _DATA / "make_deformable_convolution_reference.py",
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_SCRIPT = _reference_script()


def _case(name: str) -> tuple[Any, ...]:
    return _SCRIPT.CASES[name]  # type: ignore[no-any-return]


_NAMES = sorted({k.split("/")[0] for k in _REF if not k.startswith("pf")})


@pytest.mark.parametrize("name", _NAMES)
def test_values_and_gradients_as_nnabla(name: str) -> None:
    kw = _case(name)[-1]
    keys = [k for k in ("x", "w", "offset", "mask", "b") if f"{name}/{k}" in _REF]
    vs = {k: nn.Variable.from_numpy_array(_REF[f"{name}/{k}"], need_grad=True) for k in keys}
    y = F.deformable_convolution(vs["x"], vs["w"], vs["offset"], vs.get("mask"), vs.get("b"), **kw)
    loss = F.sum(y * nn.Variable.from_numpy_array(_REF[f"{name}/dy"]))
    loss.forward()
    loss.backward()
    np.testing.assert_allclose(y.d, _REF[f"{name}/y"], rtol=1e-5, atol=1e-5)
    for k in keys:
        want = _REF[f"{name}/g{k}"]
        np.testing.assert_allclose(vs[k].g, want, rtol=1e-5, atol=2e-5, err_msg=f"{name}: {k}")


def test_parametric_function_as_nnabla() -> None:
    nn.clear_parameters()
    x = nn.Variable.from_numpy_array(_REF["pf/x"])
    offset = nn.Variable.from_numpy_array(_REF["pf/offset"])
    mask = nn.Variable.from_numpy_array(_REF["pf/mask"])
    y = _SCRIPT.pf_layer(PF, x, offset, mask)  # nnabla 1.39 ran the same call
    y.forward()
    params = nn.get_parameters()
    assert list(params) == list(_REF["pf/names"])
    np.testing.assert_allclose(params["dc/deformable_conv/W"].d, _REF["pf/W"], rtol=1e-6)
    np.testing.assert_array_equal(params["dc/deformable_conv/b"].d, _REF["pf/b"])
    np.testing.assert_allclose(y.d, _REF["pf/y"], rtol=1e-5, atol=1e-5)
    nn.clear_parameters()
    y = PF.deformable_convolution(
        x, 2, (3, 3), offset[:, :18], None, pad=(1, 1), with_bias=False, name="nb"
    )
    assert list(nn.get_parameters()) == list(_REF["pf_no_bias/names"])
    assert list(y.shape) == list(_REF["pf_no_bias/shape"])
    nn.clear_parameters()


def test_channel_last() -> None:
    name = "v2"
    kw = _case(name)[-1]
    t = (0, 2, 3, 1)
    arrays = {k: _REF[f"{name}/{k}"] for k in ("x", "w", "offset", "mask", "b")}
    y = F.deformable_convolution(
        *(
            nn.Variable.from_numpy_array(arrays[k].transpose(t) if k != "b" else arrays[k])
            for k in ("x", "w", "offset", "mask", "b")
        ),
        channel_last=True,
        **kw,
    )
    y.forward()
    np.testing.assert_allclose(y.d, _REF[f"{name}/y"].transpose(t), rtol=1e-5, atol=1e-5)


def test_errors_name_the_function_and_argument() -> None:
    x = nn.Variable((1, 2, 4, 4))
    w = nn.Variable((2, 2, 3, 3))
    with pytest.raises(ValueError, match=r"deformable_convolution\(\): offset of shape"):
        F.deformable_convolution(x, w, nn.Variable((1, 9, 4, 4)), pad=(1, 1))
    with pytest.raises(ValueError, match=r"deformable_convolution\(\): mask of shape"):
        F.deformable_convolution(
            x, w, nn.Variable((1, 18, 4, 4)), nn.Variable((1, 18, 4, 4)), pad=(1, 1)
        )
    with pytest.raises(NotImplementedError, match="only 2-d"):
        F.deformable_convolution(
            nn.Variable((1, 2, 4)), nn.Variable((2, 2, 3)), nn.Variable((1, 6, 4))
        )
