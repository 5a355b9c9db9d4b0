"""``F.onnx_resize``, ``F.patch_correlation`` and ``F.adaptive_separable_convolution`` against
nnabla 1.39: values, and gradients where nnabla has them, recorded by
data/make_resize_correlation_reference.py in data/resize_correlation_reference.npz; NNP files
nnabla 1.39 wrote with these functions (data/nnp_resize_correlation.nntxt,
data/nnp_patch_correlation.nntxt: written byte for byte the same, read and run); float64
finite differences up to the second order; the arguments nnabla refuses."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck
from gradhub.variable import Variable as NativeVariable
from gradhub_compat.nnabla.utils.nnp_graph import NnpLoader
from gradhub_compat.nnabla.utils.save import save


def _load() -> tuple[dict[str, Any], np.ndarray]:
    with np.load(Path(__file__).parent / "data" / "resize_correlation_reference.npz") as f:
        return json.loads(str(f["index"])), f["data"]


_INDEX, _DATA = _load()


class _Reference:
    """The recorded arrays by key (see data/make_resize_correlation_reference.py)."""

    def __getitem__(self, key: str) -> np.ndarray:
        shape, offset = _INDEX[key]
        size = int(np.prod(shape))
        return _DATA[offset : offset + size].reshape(shape).copy()


_REF = _Reference()


def _cases(fn: str) -> list[int]:
    return sorted({int(k.split("/")[1]) for k in _INDEX if k.startswith(fn + "/")})


def _kwargs(fn: str, k: int) -> dict[str, Any]:
    return dict(json.loads(_INDEX[f"{fn}/{k}/kwargs"]))


def _v(a: Any, need_grad: bool = False) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.asarray(a, np.float32), need_grad=need_grad)


def test_reference_written_by_nnabla_1_39() -> None:
    assert str(_INDEX["nnabla_version"]).startswith("1.39")


# -- onnx_resize ----------------------------------------------------------------------------------


@pytest.mark.parametrize("k", _cases("onnx_resize"))
def test_onnx_resize_matches_nnabla(k: int) -> None:
    kw = _kwargs("onnx_resize", k)
    y = F.onnx_resize(_v(_REF[f"onnx_resize/{k}/in0"]), **kw)
    y.forward()
    ref = _REF[f"onnx_resize/{k}/y"]  # nnabla 1.39
    assert y.shape == ref.shape and y.d.dtype == np.float32
    if kw.get("mode", "nearest") == "nearest":
        np.testing.assert_array_equal(y.d, ref)
    else:
        np.testing.assert_allclose(y.d, ref, rtol=1e-6, atol=1e-6)


def test_onnx_resize_on_ndarrays_and_new_data() -> None:
    x = _REF["onnx_resize/0/in0"]
    kw = _kwargs("onnx_resize", 0)
    out = F.onnx_resize(nn.NdArray.from_numpy_array(x), **kw)
    assert isinstance(out, nn.NdArray)
    np.testing.assert_array_equal(out.data, _REF["onnx_resize/0/y"])
    v = _v(np.zeros_like(x))
    y = F.onnx_resize(v, **kw)
    v.d = x
    y.forward()
    np.testing.assert_array_equal(y.d, _REF["onnx_resize/0/y"])


@pytest.mark.parametrize(
    "kw",
    [
        dict(scales=[1, 1, 1.5, 0.75], mode="linear"),
        dict(sizes=[1, 2, 5, 3], mode="cubic", exclude_outside=1),
        dict(sizes=[1, 2, 5, 3], mode="cubic", coordinate_transformation_mode="align_corners"),
        dict(scales=[1, 1, 2.0, 1.5], mode="nearest", nearest_mode="ceil"),
        dict(
            roi=[0, 0, 0.2, -0.1, 1, 1, 0.9, 1.3],
            sizes=[1, 2, 4, 5],
            mode="linear",
            coordinate_transformation_mode="tf_crop_and_resize",
            extrapolation_value=3.0,
        ),
    ],
)
def test_onnx_resize_gradients_against_finite_differences(kw: dict[str, Any]) -> None:
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4))
    assert gradcheck(lambda v: F.onnx_resize(v, **kw), [x], order=2)


def test_onnx_resize_backward_is_the_transposed_interpolation() -> None:
    x = _v([[1.0, 2.0, 4.0]], need_grad=True)
    y = F.onnx_resize(x, scales=[1.0, 2.0], mode="linear")
    y.forward()
    np.testing.assert_allclose(y.d, [[1.0, 1.25, 1.75, 2.5, 3.5, 4.0]])
    x.grad.zero()
    y.backward(np.array([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]], np.float32))
    # positions -0.25, 0.25, .., 2.25: the end ones read x[0] and x[2] alone
    np.testing.assert_allclose(x.g, [[3.25, 7.0, 10.75]])


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        (dict(), ValueError, "exactly one of sizes and scales"),
        (dict(scales=[1, 1, 2, 2], sizes=[1, 1, 4, 4]), ValueError, "exactly one"),
        (dict(scales=[2, 2]), ValueError, "scales must have one entry per axis"),
        (dict(sizes=[1, 1, 4]), ValueError, "sizes must have one entry per axis"),
        (dict(scales=[1, 1, 1, 1]), NotImplementedError, "1-D, 2-D and 3-D"),
        (dict(scales=[2, 1, 1, 1]), NotImplementedError, "1-D, 2-D and 3-D"),
        (dict(scales=[1, 1, 2, 2], mode="area"), ValueError, "mode 'area'"),
        (
            dict(scales=[1, 1, 2, 2], coordinate_transformation_mode="half"),
            ValueError,
            "coordinate_transformation_mode 'half'",
        ),
        (dict(scales=[1, 1, 2, 2], nearest_mode="up"), ValueError, "nearest_mode 'up'"),
        (
            dict(scales=[1, 1, 2, 2], mode="linear", nearest_mode="up"),
            ValueError,
            "nearest_mode 'up'",
        ),
        (
            dict(scales=[1, 1, 2, 2], coordinate_transformation_mode="tf_crop_and_resize"),
            ValueError,
            "roi must have 2 \\* x.ndim = 8",
        ),
        (
            dict(
                scales=[1, 1, 2, 2],
                roi=[0, 0.5, 0, 0, 1, 1, 1, 1],
                coordinate_transformation_mode="tf_crop_and_resize",
            ),
            NotImplementedError,
            "axis 1",
        ),
        (dict(scales=[1, 1, 2, 2], exclude_outside=0.5), TypeError, "exclude_outside"),
        (dict(scales=[1, 1, 2, -2]), ValueError, "negative output size"),
        (dict(sizes=[1, 1, 2, -2]), ValueError, "sizes must not be negative"),
        (dict(scales="1122"), TypeError, "scales must be a sequence"),
        (dict(sizes=[1, 1, 2.5, 2]), TypeError, "sizes must be a sequence of ints"),
        (dict(scales=[1, 1, 2, 2], mode=3), TypeError, "mode must be a str"),
    ],
)
def test_onnx_resize_refuses_as_nnabla(kw: dict[str, Any], error: type, match: str) -> None:
    x = _v(np.ones((1, 1, 2, 2)))
    with pytest.raises(error, match=match) as info:
        F.onnx_resize(x, **kw)
    assert "nnabla F.onnx_resize" in str(info.value)


# -- patch_correlation ----------------------------------------------------------------------------


@pytest.mark.parametrize("k", _cases("patch_correlation"))
def test_patch_correlation_matches_nnabla(k: int) -> None:
    kw = _kwargs("patch_correlation", k)
    a, b = (_v(_REF[f"patch_correlation/{k}/in{i}"], True) for i in range(2))
    y = F.patch_correlation(a, b, **kw)
    y.forward()
    ref = _REF[f"patch_correlation/{k}/y"]  # nnabla 1.39
    assert y.shape == ref.shape
    np.testing.assert_allclose(y.d, ref, rtol=1e-5, atol=1e-5)
    a.grad.zero()
    b.grad.zero()
    y.backward(_REF[f"patch_correlation/{k}/gy"])
    np.testing.assert_allclose(a.g, _REF[f"patch_correlation/{k}/g0"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.g, _REF[f"patch_correlation/{k}/g1"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "kw",
    [
        dict(
            patch=(2, 3), shift=(1, 2), patch_step=(2, 1), shift_step=(1, 2), padding=(1, 0, 2, 1)
        ),
        dict(patch=2, shift=1, padding=1),
    ],
)
def test_patch_correlation_gradients_against_finite_differences(kw: dict[str, Any]) -> None:
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 2, 4, 5)), rng.standard_normal((2, 2, 4, 5))
    assert gradcheck(lambda p, q: F.patch_correlation(p, q, **kw), [a, b], order=2)


def test_patch_correlation_padding_forms() -> None:
    # nnabla 1.39's own test values (ones, C channels)
    x = F.constant(1.0, (1, 2, 2, 3))
    y = F.patch_correlation(x, x, patch=(2, 3), padding=(0, 1))
    y.forward()
    np.testing.assert_array_equal(y.d, [[[[[8, 12, 8]]]]])
    x3 = F.constant(1.0, (1, 2, 3, 3))
    y = F.patch_correlation(x3, x3, patch=3, padding=(0, 0, 0, 2))
    y.forward()
    np.testing.assert_array_equal(y.d, [[[[[18, 12, 6]]]]])


@pytest.mark.parametrize(
    ("shapes", "kw", "match"),
    [
        (((1, 1, 3, 3), (1, 1, 3, 4)), dict(), "the same shape"),
        (((1, 3, 3), (1, 3, 3)), dict(), "4 axes"),
        (((1, 1, 3, 3),) * 2, dict(patch=0), "patch must be greater than zero"),
        (((1, 1, 3, 3),) * 2, dict(shift=-1), "shift must be non-negative"),
        (((1, 1, 3, 3),) * 2, dict(patch_step=(1, 0)), "patch_step must be greater"),
        (((1, 1, 3, 3),) * 2, dict(shift_step=0), "shift_step must be greater"),
        (((1, 1, 3, 3),) * 2, dict(padding=(0, -1)), "padding must be non-negative"),
        (((1, 1, 3, 3),) * 2, dict(padding=(0, 1, 2)), "padding must be an int, two"),
        (((1, 1, 3, 3),) * 2, dict(patch=(1, 2, 3)), "patch must be an int or two ints"),
        (((1, 1, 3, 3),) * 2, dict(shift=(3,)), "shift must be an int or two ints"),
        (((1, 1, 3, 3),) * 2, dict(padding=(1,)), "padding must be an int, two"),
        (((1, 1, 3, 3),) * 2, dict(patch=1.5), "patch must be a sequence of ints"),
        (((1, 1, 3, 3),) * 2, dict(patch=5), "larger than the padded input"),
    ],
)
def test_patch_correlation_refuses_bad_arguments(
    shapes: tuple[tuple[int, ...], ...], kw: dict[str, Any], match: str
) -> None:
    a, b = (_v(np.ones(s)) for s in shapes)
    with pytest.raises((ValueError, TypeError), match=match) as info:
        F.patch_correlation(a, b, **kw)
    assert "nnabla F.patch_correlation" in str(info.value)


# -- adaptive_separable_convolution ---------------------------------------------------------------


@pytest.mark.parametrize("k", _cases("adaptive_separable_convolution"))
def test_adaptive_separable_convolution_matches_nnabla(k: int) -> None:
    name = "adaptive_separable_convolution"
    vs = [_v(_REF[f"{name}/{k}/in{i}"], True) for i in range(3)]
    y = F.adaptive_separable_convolution(*vs)
    y.forward()
    ref = _REF[f"{name}/{k}/y"]  # nnabla 1.39
    assert y.shape == ref.shape
    np.testing.assert_allclose(y.d, ref, rtol=1e-5, atol=1e-5)
    for v in vs:
        v.grad.zero()
    y.backward(_REF[f"{name}/{k}/gy"])
    for i, v in enumerate(vs):
        np.testing.assert_allclose(v.g, _REF[f"{name}/{k}/g{i}"], rtol=1e-5, atol=1e-5)


def test_adaptive_separable_convolution_gradients_against_finite_differences() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 2, 4, 5))
    kv = rng.standard_normal((2, 2, 4, 3))
    kh = rng.standard_normal((2, 3, 3, 4))
    assert gradcheck(F.adaptive_separable_convolution, [x, kv, kh], order=2)


@pytest.mark.parametrize(
    ("shapes", "match"),
    [
        (((2, 1, 4, 4), (1, 2, 3, 3), (2, 2, 3, 3)), "batch sizes"),
        (((1, 1, 4, 4), (1, 5, 3, 3), (1, 2, 3, 3)), "must not exceed"),
        (((1, 1, 4, 4), (1, 2, 2, 3), (1, 2, 3, 3)), "height of vertical_kernel"),
        (((1, 1, 4, 4), (1, 2, 3, 3), (1, 2, 3, 5)), "width of horizontal_kernel"),
        (((1, 1, 4, 4), (1, 2, 3, 2), (1, 2, 3, 3)), "at least 3 wide"),
        (((1, 1, 4, 4), (1, 2, 3, 3), (1, 2, 2, 3)), "at least 3 wide"),
        (((1, 4, 4), (1, 2, 3, 3), (1, 2, 3, 3)), "x must have 4 axes"),
    ],
)
def test_adaptive_separable_convolution_refuses_bad_shapes(
    shapes: tuple[tuple[int, ...], ...], match: str
) -> None:
    vs = [_v(np.ones(s)) for s in shapes]
    with pytest.raises(ValueError, match=match) as info:
        F.adaptive_separable_convolution(*vs)
    assert "nnabla F.adaptive_separable_convolution" in str(info.value)


def test_onnx_resize_empty_output_and_lenient_arguments_as_nnabla() -> None:
    x = _v(np.arange(4.0).reshape(1, 1, 2, 2))
    # nnabla 1.39: an axis of size 0, exclude_outside given as a bool, sizes as integral floats
    assert F.onnx_resize(x, sizes=[1, 1, 0, 2]).shape == (1, 1, 0, 2)
    assert F.onnx_resize(x, scales=[1, 1, 0.2, 2]).shape == (1, 1, 0, 4)
    y = F.onnx_resize(x, scales=[1, 1, 2, 2], exclude_outside=True, cubic_coeff_a=None)
    y.forward()
    assert y.d.ravel()[:8].tolist() == [0, 0, 1, 1, 0, 0, 1, 1]
    y = F.onnx_resize(x, sizes=[1, 1, 3.0, 2])  # type: ignore[list-item]
    y.forward()
    assert y.d.ravel().tolist() == [0, 1, 0, 1, 2, 3]


def _reference_script() -> Any:
    """data/make_resize_correlation_reference.py as a module (the networks it saved)."""
    import importlib.util

    path = Path(__file__).parent / "data" / "make_resize_correlation_reference.py"
    spec = importlib.util.spec_from_file_location("make_resize_correlation_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_SCRIPT = _reference_script()


def test_nnp_file_equals_nnablas_and_runs() -> None:
    # data/nnp_resize_correlation.nntxt: nnabla 1.39's save of the same network: ONNXResize
    # (3 settings), PatchCorrelation (between nnabla's transposes), AdaptiveSeparableConvolution
    xs = {k: nn.Variable(s) for k, s in _SCRIPT.NETWORK_INPUTS.items()}
    ys = _SCRIPT.network(F, **xs)
    text = io.StringIO()
    save(text, _SCRIPT.contents(xs, ys), extension=".nntxt")
    path = Path(__file__).parent / "data" / "nnp_resize_correlation.nntxt"
    assert text.getvalue() == path.read_text()
    net = NnpLoader(str(path)).get_network("rc")
    for k in _SCRIPT.NETWORK_INPUTS:
        net.inputs[k].d = _REF[f"nnp/{k}"]
    for k in ys:
        y = net.outputs[k]
        y.forward()
        # nnabla 1.39's outputs of the same network on the same inputs
        np.testing.assert_allclose(y.d, _REF[f"nnp/{k}"], rtol=1e-5, atol=1e-5)


def test_recorded_functions_as_nnablas() -> None:
    a = nn.Variable((1, 2, 4, 5))
    y = F.onnx_resize(a, scales=[1, 1, 2, 0.5])
    assert y.parent.name == "ONNXResize"
    assert y.parent.info.args == {  # nnabla 1.39
        "roi": [],
        "scales": [1.0, 1.0, 2.0, 0.5],
        "sizes": [],
        "mode": "nearest",
        "coordinate_transformation_mode": "half_pixel",
        "cubic_coeff_a": -0.75,
        "exclude_outside": 0,
        "extrapolation_value": 0.0,
        "nearest_mode": "round_prefer_floor",
    }
    y = F.onnx_resize(
        a,
        sizes=(1, 2, 7, 3),
        roi=(0, 0, 0, 0, 1, 1, 1, 1),
        mode="cubic",
        exclude_outside=True,
        cubic_coeff_a=None,
    )
    assert y.parent.info.args["roi"] == [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]  # nnabla 1.39
    assert y.parent.info.args["sizes"] == [1, 2, 7, 3]
    assert y.parent.info.args["exclude_outside"] == 1
    k = nn.Variable((1, 3, 3, 3))
    z = F.adaptive_separable_convolution(a, nn.Variable((1, 2, 3, 3)), k)
    assert z.parent.name == "AdaptiveSeparableConvolution"
    assert z.parent.info.args == {}  # nnabla 1.39


def test_patch_correlation_nnp_file_equals_nnablas() -> None:
    # data/nnp_patch_correlation.nntxt: nnabla 1.39's save of the same network (the layer
    # records nnabla's PatchCorrelation between the same transposes and reshapes)
    xs = {k: nn.Variable(s) for k, s in _SCRIPT.CORRELATION_INPUTS.items()}
    ys = _SCRIPT.correlation_network(F, **xs)
    assert ys["y2"].parent.name == "PatchCorrelation"
    assert ys["y2"].parent.info.args == {
        "patch": [1, 1],
        "shift": [1, 1],
        "patch_step": [1, 1],
        "shift_step": [1, 1],
        "padding": [0, 1, 1, 0],
    }  # nnabla 1.39
    text = io.StringIO()
    save(text, _SCRIPT.contents(xs, ys), extension=".nntxt")
    path = Path(__file__).parent / "data" / "nnp_patch_correlation.nntxt"
    assert text.getvalue() == path.read_text()
    net = NnpLoader(str(path)).get_network("rc")
    rng = np.random.default_rng(5)
    for k, s in _SCRIPT.CORRELATION_INPUTS.items():
        net.inputs[k].d = xs[k].d = rng.standard_normal(s)
    for k, y in ys.items():
        y.forward()
        out = net.outputs[k]
        out.forward()
        np.testing.assert_array_equal(out.d, y.d)


def test_functions_listed_and_native_inputs() -> None:
    names = dir(F)
    for name in ("onnx_resize", "patch_correlation", "adaptive_separable_convolution"):
        assert name in names
    x = NativeVariable(np.ones((1, 1, 2, 2), np.float32), need_grad=False)
    y = F.onnx_resize(x, scales=[1, 1, 2, 2])
    assert isinstance(y, nn.Variable) and y.shape == (1, 1, 4, 4)
