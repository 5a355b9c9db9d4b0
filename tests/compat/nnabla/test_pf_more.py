"""``PF.pow2_quantized_affine``/``_convolution``, ``PF.min_max_quantized_affine``/
``_convolution``, ``PF.svd_affine``, ``PF.svd_convolution``, ``PF.cpd3_convolution`` and the
initializers ``PF`` re-exports, against nnabla 1.39 (its values written by
data/make_pf_more_reference.py in data/pf_more_reference.npz): parameter names, order, shapes,
``need_grad`` and values (the draws from ``rng``, the SVD and CP factors, the quantized copies
written at ``forward()`` only), outputs and gradients; finite differences (to second order) of
the layers and of the node writing the quantized copies; reuse of existing parameters; bad
inputs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gradhub as gh
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.initializer as I
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest
from gradhub.graph import apply
from gradhub.testing import gradcheck
from gradhub_compat.nnabla._pf_more import WRITE_INTO

# nnabla 1.39's values (tests/compat/nnabla/data/make_pf_more_reference.py)
_REF = np.load(Path(__file__).parent / "data" / "pf_more_reference.npz")

_CASES = sorted(
    {tuple(k.split("/")[:2]) for k in _REF.files if k.count("/") >= 2},
    key=lambda c: (c[0], int(c[1])),
)


def _arguments(p: str) -> dict[str, Any]:
    """The case's keyword arguments, as the reference script makes them."""
    out: dict[str, Any] = {}
    for k, v in json.loads(str(_REF[f"{p}/kwargs"])).items():
        if k == "rng":
            out[k] = None if v is None else np.random.RandomState(v)
        elif k.endswith("_init") and isinstance(v, list):
            out[k] = I.UniformInitializer((v[0], v[1]), rng=np.random.RandomState(v[2]))
        else:
            out[k] = v
    for key in ("uv_init", "oik_init"):
        if f"{p}/{key}" in _REF.files:
            out[key] = _REF[f"{p}/{key}"]
    return out


def test_reference_is_nnabla_1_39() -> None:
    assert str(_REF["nnabla_version"]).startswith("1.39")
    assert len(_CASES) == 19


@pytest.mark.parametrize(("fn", "k"), _CASES)
def test_matches_nnabla(fn: str, k: str) -> None:
    p = f"{fn}/{k}"
    nn.random.seed(313)  # (nnabla's generator as a fresh process has it: the rng=None case)
    x = nn.Variable.from_numpy_array(_REF[f"{p}/x"], need_grad=True)
    y = getattr(PF, fn)(x, **_arguments(p))
    params = nn.get_parameters(grad_only=False)
    names = json.loads(str(_REF[f"{p}/names"]))
    assert list(params) == names  # (nnabla's order of creation)
    assert y.shape == tuple(_REF[f"{p}/y_shape"])
    for n in names:
        assert params[n].need_grad == bool(_REF[f"{p}/need_grad/{n}"]), n
        # the draws (W_q: a second draw of W's initializer), the decompositions; the quantized
        # copies and the ranges are not written by the build
        np.testing.assert_allclose(
            _signless(fn, n, params[n].d), _signless(fn, n, _REF[f"{p}/built/{n}"]), atol=1e-6
        )
    if f"{p}/y" not in _REF.files:
        return  # (nnabla's CPU convolution refuses channel_last: compared as built)
    y.forward()
    np.testing.assert_allclose(y.d, _REF[f"{p}/y"], rtol=1e-5, atol=1e-5)
    for n in names:
        np.testing.assert_allclose(
            _signless(fn, n, params[n].d), _signless(fn, n, _REF[f"{p}/param/{n}"]), atol=1e-6
        )
        params[n].g = 0
    x.g = 0
    y.backward(np.cos(np.arange(y.size)).reshape(y.shape).astype(np.float32))
    np.testing.assert_allclose(x.g, _REF[f"{p}/gx"], rtol=1e-5, atol=1e-5)
    for n in names:
        if _flips(fn, n):  # (a parameter and its gradient change sign together)
            got, want = params[n].g * params[n].d, _REF[f"{p}/grad/{n}"] * _REF[f"{p}/param/{n}"]
        else:
            got, want = params[n].g, _REF[f"{p}/grad/{n}"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _flips(fn: str, name: str) -> bool:
    """Whether the parameter ``name`` of ``PF.<fn>`` is a singular-vector factor: the SVD gives
    each pair of singular vectors up to a common sign, which differs between LAPACK builds
    (numpy 1.23's and 2.4's give opposite signs on some of these matrices), while U V does
    not."""
    return fn.startswith("svd_") and name.rsplit("/", 1)[-1] in ("U", "V")


def _signless(fn: str, name: str, a: Any) -> Any:
    """``a``, or its magnitudes for a factor whose sign the SVD leaves open (:func:`_flips`)."""
    return np.abs(a) if _flips(fn, name) else a


def test_channel_last_min_max_convolution_is_the_channel_first_one() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)  # (N, H, W, C)
    kw: dict[str, Any] = {"outmaps": 2, "kernel": (3, 2), "pad": (1, 0), "group": 2}
    y_last = PF.min_max_quantized_convolution(
        nn.Variable.from_numpy_array(x), channel_last=True, name="last", **kw
    )
    w = nn.get_parameters()["last/min_max_quantized_conv/W"]
    assert w.shape == (2, 3, 2, 2)  # (outmaps, *kernel, inmaps // group)
    y_first = PF.min_max_quantized_convolution(
        nn.Variable.from_numpy_array(x.transpose(0, 3, 1, 2)),
        w_init=w.d.transpose(0, 3, 1, 2).copy(),
        name="first",
        **kw,
    )
    y_last.forward()
    y_first.forward()
    np.testing.assert_allclose(y_last.d.transpose(0, 3, 1, 2), y_first.d, rtol=1e-5, atol=1e-5)


def test_quantized_copies_are_written_by_forward() -> None:
    x = nn.Variable.from_numpy_array(np.ones((2, 3), np.float32))
    y = PF.pow2_quantized_affine(x, 4, rng=np.random.RandomState(0))
    p = nn.get_parameters(grad_only=False)
    w, w_q = p["pow2_quantized_affine/W"], p["pow2_quantized_affine/W_q"]
    drawn = w_q.d.copy()
    assert not np.array_equal(drawn, w.d)  # a second draw, as nnabla's
    w.d = np.full((3, 4), 0.3, np.float32)
    np.testing.assert_array_equal(w_q.d, drawn)  # (built, not executed)
    y.forward()
    np.testing.assert_array_equal(w_q.d, np.full((3, 4), 0.25, np.float32))
    np.testing.assert_allclose(y.d, np.full((2, 4), 0.75, np.float32))
    nn.clear_parameters()
    nn.set_auto_forward(True)
    PF.min_max_quantized_affine(x, 2, w_init=np.full((3, 2), 0.5, np.float32), ql_max_w=4)
    w_q = nn.get_parameters(grad_only=False)["min_max_quantized_affine/W_q"]
    # executed at the build: the grid of step 1 on [-2, 2], 2.5 steps rounded away from zero
    np.testing.assert_array_equal(w_q.d, np.full((3, 2), 1.0, np.float32))


def test_fix_parameters_and_no_grad() -> None:
    x = nn.Variable.from_numpy_array(np.ones((2, 4), np.float32), need_grad=True)
    y = PF.svd_affine(x, 3, r=2, fix_parameters=True, rng=np.random.RandomState(0))
    p = nn.get_parameters(grad_only=False)
    assert all(v.need_grad for v in p.values())  # (registered trainable, as nnabla's)
    y.backward(np.ones((2, 3), np.float32))
    assert not np.any(p["svd_affine/U"].g) and not np.any(p["svd_affine/V"].g)
    assert np.any(x.g)
    with nn.no_grad():
        z = PF.cpd3_convolution(nn.Variable((1, 2, 4, 4)), 2, (2, 2), r=2)
    assert not z.need_grad and len(nn.get_parameters()) == 7  # (U, V, b; I, O, K, b)


def test_existing_factors_are_used_and_the_initializer_still_draws() -> None:
    x = nn.Variable.from_numpy_array(np.ones((1, 4), np.float32))
    rng = np.random.RandomState(5)
    PF.svd_affine(x, 3, r=2, rng=rng)
    u = nn.get_parameters()["svd_affine/U"].d.copy()
    y = PF.svd_affine(x, 3, r=2, rng=rng)  # U and V exist: used as they are
    np.testing.assert_array_equal(nn.get_parameters()["svd_affine/U"].d, u)
    twin = np.random.RandomState(5)
    twin.uniform(size=24)
    assert rng.rand() == twin.rand()  # (the weight drawn again, as nnabla's)
    assert y.shape == (1, 3)
    PF.cpd3_convolution(nn.Variable((1, 2, 3, 3)), 2, (2, 2), r=2, name="c")
    k = nn.get_parameters()["c/cpd3_conv/K"]
    k.d = np.ones((2, 2, 2), np.float32)
    PF.cpd3_convolution(nn.Variable((1, 2, 3, 3)), 2, (2, 2), r=2, name="c")
    np.testing.assert_array_equal(nn.get_parameters()["c/cpd3_conv/K"].d, 1.0)
    nn.clear_parameters()
    w = np.random.RandomState(0).randn(4, 3).astype(np.float32)
    PF.svd_affine(x, 3, r=3, uv_init=w)  # full rank: U V is the weight
    p = nn.get_parameters()
    np.testing.assert_allclose(p["svd_affine/U"].d @ p["svd_affine/V"].d, w, atol=1e-5)


def test_initializers_are_the_initializer_module_s() -> None:
    assert PF.ConstantInitializer is I.ConstantInitializer
    assert PF.NormalInitializer is I.NormalInitializer
    assert PF.UniformInitializer is I.UniformInitializer
    assert PF.WeightNormalizationScaleInitializer is I.WeightNormalizationScaleInitializer
    assert issubclass(I.WeightNormalizationScaleInitializer, I.BaseInitializer)
    names = {
        "WeightNormalizationScaleInitializer",
        "cpd3_convolution",
        "min_max_quantized_affine",
        "min_max_quantized_convolution",
        "pow2_quantized_affine",
        "pow2_quantized_convolution",
        "svd_affine",
        "svd_convolution",
    }
    assert names <= set(dir(PF))


def test_weight_normalization_scale_initializer() -> None:
    w = nn.Variable.from_numpy_array(np.array([[3.0, 0.0], [4.0, 2.0]], np.float32))
    init = PF.WeightNormalizationScaleInitializer(w, dim=1, eps=1e-12)
    w.d = np.array([[0.0, 1.0], [2.0, 0.0]], np.float32)  # (read when called, as nnabla's)
    g = init((2,))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [2.0, 1.0])
    np.testing.assert_allclose(PF.WeightNormalizationScaleInitializer(w)((2,)), [1.0, 2.0])
    y = PF.weight_normalization(w, 1, g_init=PF.WeightNormalizationScaleInitializer(w, 1))
    y.forward()
    np.testing.assert_allclose(y.d, w.d, atol=1e-6)
    assert "dim=0" in repr(PF.WeightNormalizationScaleInitializer(w))
    with pytest.raises(ValueError, match="WeightNormalizationScaleInitializer: dim=2"):
        PF.WeightNormalizationScaleInitializer(w, dim=2)((2,))


@pytest.mark.parametrize(
    ("fn", "kw"),
    [
        ("svd_convolution", {"outmaps": 4, "kernel": (3, 3), "r": 2, "pad": (1, 1)}),
        ("cpd3_convolution", {"outmaps": 3, "kernel": (2, 2), "r": 2, "stride": (2, 1)}),
        ("pow2_quantized_convolution", {"outmaps": 2, "kernel": (2, 2), "dilation": (2, 1)}),
        ("min_max_quantized_convolution", {"outmaps": 2, "kernel": (2, 2)}),
    ],
)
def test_layer_gradients_against_finite_differences(fn: str, kw: dict[str, Any]) -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5))
    layer = getattr(PF, fn)
    # (the parameters created by the first call are used by the others)
    assert gradcheck(lambda xv: layer(xv, rng=np.random.RandomState(1), **kw), [x], order=2)


def test_svd_affine_gradients_against_finite_differences() -> None:
    x = np.random.default_rng(1).standard_normal((2, 2, 3))
    assert gradcheck(lambda xv: PF.svd_affine(xv, (2, 2), r=2), [x], order=2)


def test_write_into_node_against_finite_differences() -> None:
    out = gh.Variable(np.zeros(3))
    x = np.array([0.5, -1.5, 2.0])
    assert gradcheck(lambda xv: apply(WRITE_INTO, (xv * xv, out), {}) * xv, [x], order=3)
    np.testing.assert_allclose(np.asarray(out._data), x * x)


def test_bad_inputs() -> None:
    x = nn.Variable((2, 4))
    with pytest.raises(ValueError, match=r"PF\.svd_affine: the rank r must be a positive"):
        PF.svd_affine(x, 3, r=0)
    with pytest.raises(ValueError, match=r"PF\.svd_affine: the rank r=5 is larger"):
        PF.svd_affine(x, 3, r=5)
    with pytest.raises(ValueError, match=r"PF\.svd_affine: uv_init must have 12 values"):
        PF.svd_affine(x, 3, r=1, uv_init=np.ones((4, 4), np.float32))
    with pytest.raises(TypeError, match=r"PF\.svd_affine: uv_init must be a numpy array"):
        PF.svd_affine(x, 3, r=1, uv_init=1.0)
    xc = nn.Variable((1, 2, 4, 4))
    with pytest.raises(ValueError, match=r"PF\.svd_convolution: the rank r=5 is larger"):
        PF.svd_convolution(xc, 4, (2, 2), r=5)
    with pytest.raises(ValueError, match=r"PF\.cpd3_convolution: the rank r must be"):
        PF.cpd3_convolution(xc, 4, (2, 2), r=-1)
    with pytest.raises(ValueError, match=r"PF\.cpd3_convolution: max_iter must be >= 1"):
        PF.cpd3_convolution(xc, 4, (2, 2), r=2, max_iter=0)
    with pytest.raises(ValueError, match=r"PF\.pow2_quantized_convolution: group must be"):
        PF.pow2_quantized_convolution(xc, 4, (2, 2), group=0)
    with pytest.raises(ValueError, match=r"F\.pow2_quantize: n=2 leaves no bit"):
        PF.pow2_quantized_affine(x, 3, n_w=2, with_zero_w=True)
