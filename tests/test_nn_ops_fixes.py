"""Regression tests for review findings in gradhub-nn-ops (prod, losses, ids, bias dtypes).

1. Prod's differentiable rule builds a graph that does not depend on the data, so re-running it
   with ``forward()`` after new leaf data (zeros included) stays correct, at every order.
2. binary_cross_entropy clamps its logs as nnabla (no NaN for perfect predictions).
3. Integer/boolean targets for the sigmoid/binary cross entropies and float ids for
   embed/one_hot are accepted as nnabla does (whole-number floats only).
4. Affine/Convolution/Deconvolution promote the result for a wider bias dtype.
5. sigmoid_cross_entropy/binary_cross_entropy require x and target of the same shape.
"""

from __future__ import annotations

import itertools
import math

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck

RNG = np.random.default_rng(7)


def v64(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


# -- 1. prod: a data-independent gradient graph ----------------------------------------------


def _exclusive(x: np.ndarray, axis: int) -> np.ndarray:
    """Independent reference: product of the other elements along ``axis`` (explicit loop)."""
    xm = np.moveaxis(x, axis, -1)
    out = np.empty_like(xm)
    k = xm.shape[-1]
    for idx in np.ndindex(*xm.shape[:-1]):
        for i in range(k):
            out[idx + (i,)] = math.prod(float(xm[idx + (j,)]) for j in range(k) if j != i)
    return np.moveaxis(out, -1, axis)


def _hessian_of_prod(x: np.ndarray) -> np.ndarray:
    """d^2/dx_i dx_j of prod(x) for a 1-d x: prod of the others except i and j (0 on i == j)."""
    k = x.size
    h = np.zeros((k, k))
    for i, j in itertools.product(range(k), range(k)):
        if i != j:
            h[i, j] = math.prod(float(x[m]) for m in range(k) if m not in (i, j))
    return h


def test_prod_gradient_graph_reruns_correctly_on_new_data_with_zeros() -> None:
    """The review's repro: built on data without zeros, re-run with zeros (was NaN)."""
    x = gh.Variable(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    (gx,) = gh.grad([F.prod(x, axis=1)], [x], create_graph=True)
    np.testing.assert_allclose(gx.d, [[6.0, 3.0, 2.0], [30.0, 24.0, 20.0]])
    x.d = np.array([[0.0, 2.0, 3.0], [4.0, 0.0, 6.0]])
    gx.forward()
    np.testing.assert_array_equal(gx.d, [[6.0, 0.0, 0.0], [0.0, 24.0, 0.0]])
    # and back to data built with zeros, re-run without them
    x.d = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    gx.forward()
    np.testing.assert_allclose(gx.d, [[6.0, 3.0, 2.0], [30.0, 24.0, 20.0]])


@pytest.mark.parametrize("axis", [0, 1, 2, (0, 2), None])
def test_prod_rerun_matches_the_exclusive_product(axis: object) -> None:
    x = gh.Variable(RNG.uniform(0.5, 1.5, (3, 5, 2)))
    (gx,) = gh.grad([F.prod(x, axis=axis)], [x], create_graph=True)
    new = RNG.uniform(0.5, 1.5, (3, 5, 2)) * RNG.choice([-1.0, 1.0], (3, 5, 2))
    new[0, 1, 0] = new[2, 4, 1] = new[2, 0, 1] = new[1, 3, 0] = 0.0
    x.d = new
    gx.forward()
    axes = (0, 1, 2) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    # the reference: move the reduced axes last, flatten them, exclusive product, move back
    kept = [i for i in range(3) if i not in axes]
    moved = np.transpose(new, kept + list(axes))
    flat = moved.reshape(*moved.shape[:len(kept)], -1)
    ref = _exclusive(flat, -1).reshape(moved.shape)
    ref = np.transpose(ref, np.argsort(kept + list(axes)))
    np.testing.assert_allclose(gx.d, ref, rtol=1e-12, atol=1e-15)
    # the fresh first-order (array) rule agrees
    (g1,) = gh.grad([F.prod(x, axis=axis)], [x], create_graph=False)
    np.testing.assert_allclose(g1.d, ref, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17])
def test_prod_second_order_graph_reruns_with_zeros(k: int) -> None:
    """The Hessian graph (built on nonzero data) re-run with one and two zeros in the group."""
    x = gh.Variable(RNG.uniform(0.5, 1.5, (k,)))
    (gx,) = gh.grad([F.prod(x)], [x], create_graph=True)
    u = RNG.standard_normal(k)
    (hu,) = gh.grad([F.sum(gx * gh.Variable(u, need_grad=False))], [x], create_graph=True)
    for zeros in ([0], [0, k - 1], []):
        new = RNG.uniform(0.5, 1.5, (k,)) * RNG.choice([-1.0, 1.0], (k,))
        new[[z for z in zeros if z < k]] = 0.0
        x.d = new
        gx.forward()
        hu.forward()
        np.testing.assert_allclose(gx.d, _exclusive(new, 0), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(hu.d, _hessian_of_prod(new) @ u, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("shape, axis", [((6,), None), ((2, 5), 1), ((4, 3, 2), (0, 2))])
def test_prod_gradients_at_zeros_match_finite_differences_to_order_3(shape: tuple[int, ...],
                                                                     axis: object) -> None:
    x = RNG.uniform(0.5, 1.5, shape) * RNG.choice([-1.0, 1.0], shape)
    flat = x.reshape(-1)
    flat[0] = flat[-1] = 0.0  # two zeros (in one group for the 1-d case)
    gradcheck(lambda u: F.prod(u, axis=axis), [x], order=3)


def test_prod_graph_rule_on_a_long_axis() -> None:
    """k = 4096: the exclusive product is a log-depth scan (a k x k matrix would hold 16M)."""
    k = 4096
    x = np.ones(k)
    x[5] = 0.0
    x[7] = 2.0
    xv = gh.Variable(x)
    (gx,) = gh.grad([F.prod(xv)], [xv], create_graph=True)
    expect = np.zeros(k)
    expect[5] = 2.0
    np.testing.assert_array_equal(gx.d, expect)
    xv.d = np.where(np.arange(k) == 1000, 0.0, 1.0)
    gx.forward()
    expect = np.zeros(k)
    expect[1000] = 1.0
    np.testing.assert_array_equal(gx.d, expect)


# -- 2. binary_cross_entropy: clamped logs -------------------------------------------------


def test_bce_perfect_predictions_give_zero_loss_and_gradient() -> None:
    x = v64([0.0, 1.0, 0.0, 1.0])
    t = v64([0.0, 1.0, 1.0, 0.0])
    y = F.binary_cross_entropy(x, t)
    big = -math.log(np.finfo(np.float64).tiny)  # nnabla's clamp: log(max(., tiny))
    np.testing.assert_array_equal(y.d, [0.0, 0.0, big, big])
    assert not np.signbit(y.d[:2]).any()
    for create_graph in (False, True):
        gx, gt = gh.grad([y], [x, t], create_graph=create_graph)
        # d/dx = -t/x + (1-t)/(1-x) outside the clamp; 0 inside it (the clamped log is constant)
        np.testing.assert_array_equal(gx.d, [1.0, -1.0, 0.0, 0.0])
        # d/dt = ln max(1-x, tiny) - ln max(x, tiny)
        np.testing.assert_allclose(gt.d, [big, -big, big, -big], rtol=1e-15)


def test_bce_of_a_saturated_float32_sigmoid_is_finite() -> None:
    z = gh.Variable(np.array([20.0, -20.0, 0.0], dtype=np.float32))
    p = F.sigmoid(z)
    assert p.d[0] == 1.0  # rounds to exactly 1 in float32
    t = gh.Variable(np.array([1.0, 0.0, 1.0], dtype=np.float32), need_grad=False)
    y = F.binary_cross_entropy(p, t)
    assert y.dtype == np.float32
    ref = -np.log(1.0 / (1.0 + np.exp(-np.array([20.0, 20.0, 0.0]))))  # float64, unclamped
    np.testing.assert_allclose(y.d, ref, rtol=1e-6, atol=1e-7)
    for create_graph in (False, True):
        (gz,) = gh.grad([y], [z], create_graph=create_graph)
        assert np.isfinite(gz.d).all()
        np.testing.assert_allclose(gz.d[2], -0.5, rtol=1e-6)  # sigma(z) - t


def test_bce_higher_derivatives_at_the_boundary_have_no_nan() -> None:
    for dtype in (np.float32, np.float64):
        x = gh.Variable(np.array([0.0, 1.0, 0.0, 1.0, 0.3], dtype=dtype))
        t = gh.Variable(np.array([0.0, 1.0, 1.0, 0.0, 0.4], dtype=dtype))
        y = F.binary_cross_entropy(x, t)
        (g1,) = gh.grad([y], [x], create_graph=True)
        (g2,) = gh.grad([g1], [x], create_graph=True)
        (g3,) = gh.grad([g2], [x], create_graph=True)
        # exact derivatives of -t ln x - (1-t) ln(1-x) where unclamped, 0 where clamped
        x5, t5 = 0.3, 0.4
        np.testing.assert_allclose(g1.d, [1.0, -1.0, 0.0, 0.0, -t5 / x5 + (1 - t5) / (1 - x5)],
                                   rtol=1e-6)
        np.testing.assert_allclose(g2.d, [1.0, 1.0, 0.0, 0.0, t5 / x5**2 + (1 - t5) / (1 - x5)**2],
                                   rtol=1e-6)
        np.testing.assert_allclose(
            g3.d, [2.0, -2.0, 0.0, 0.0, -2 * t5 / x5**3 + 2 * (1 - t5) / (1 - x5)**3], rtol=1e-6)


def test_bce_matches_finite_differences_inside_the_domain() -> None:
    x = RNG.uniform(0.05, 0.95, (3, 4))
    t = RNG.uniform(0, 1, (3, 4))
    gradcheck(F.binary_cross_entropy, [x, t], order=3)


# -- 3. label dtypes ----------------------------------------------------------------------------


@pytest.mark.parametrize("fname", ["sigmoid_cross_entropy", "binary_cross_entropy"])
@pytest.mark.parametrize("ldtype", [np.int64, np.int32, np.uint8, np.bool_])
def test_cross_entropies_accept_integer_and_bool_labels(fname: str, ldtype: type) -> None:
    fn = getattr(F, fname)
    raw = RNG.uniform(-2, 2, (3, 4)) if fname == "sigmoid_cross_entropy" else RNG.uniform(
        0.1, 0.9, (3, 4))
    labels = RNG.integers(0, 2, (3, 4))
    for dtype in (np.float32, np.float64):
        x = gh.Variable(raw.astype(dtype))
        t_int = gh.Variable(labels.astype(ldtype), need_grad=False)
        t_flt = gh.Variable(labels.astype(dtype), need_grad=False)
        y = fn(x, t_int)
        assert y.dtype == dtype
        np.testing.assert_array_equal(y.d, fn(x, t_flt).d)
        for create_graph in (False, True):
            (g_int,) = gh.grad([fn(x, t_int)], [x], create_graph=create_graph)
            (g_flt,) = gh.grad([fn(x, t_flt)], [x], create_graph=create_graph)
            assert g_int.dtype == dtype
            np.testing.assert_array_equal(g_int.d, g_flt.d)
    # sigma(x) - t, in float64
    if fname == "sigmoid_cross_entropy":
        x = v64(raw)
        (g,) = gh.grad([fn(x, gh.Variable(labels, need_grad=False))], [x])
        np.testing.assert_allclose(g.d, 1 / (1 + np.exp(-raw)) - labels, rtol=1e-12)


def test_embed_accepts_whole_number_float_ids() -> None:
    w = gh.Variable(RNG.standard_normal((5, 3)))
    ids = np.array([[0, 4], [2, 2]])
    for fdtype in (np.float32, np.float64):
        idf = gh.Variable(ids.astype(fdtype))  # need_grad=True, as a float nn.Variable
        y = F.embed(idf, w)
        np.testing.assert_array_equal(y.d, w.d[ids])
        for create_graph in (False, True):
            (gw,) = gh.grad([y], [w], create_graph=create_graph)
            expect = np.zeros((5, 3))
            np.add.at(expect, ids.reshape(-1), np.ones((4, 3)))
            np.testing.assert_array_equal(gw.d, expect)


def test_nnabla_style_pf_embed_with_a_float32_variable() -> None:
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.parametric_functions as PF

    x = nn.Variable((2, 3))  # float32, as nnabla's nn.Variable
    x.d = np.array([[0, 1, 2], [3, 4, 1]])
    y = PF.embed(x, 5, 4)
    y.forward()
    assert y.shape == (2, 3, 4)
    assert np.isfinite(y.d).all()


def test_one_hot_accepts_whole_number_float_indices() -> None:
    xi = np.array([[1, 2], [0, 0]])
    y = F.one_hot(gh.Variable(xi.astype(np.float32), need_grad=False), (2, 3))
    np.testing.assert_array_equal(y.d, F.one_hot(gh.Variable(xi, need_grad=False), (2, 3)).d)
    assert y.d[0, 1, 2] == 1.0 and y.d[1, 0, 0] == 1.0 and y.d.sum() == 2.0


@pytest.mark.parametrize("bad", [1.5, -0.25, np.nan, np.inf, 1e20])
def test_non_integral_float_ids_raise_naming_function_and_argument(bad: float) -> None:
    w = gh.Variable(np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"embed: x0 must hold integer ids"):
        F.embed(gh.Variable(np.array([0.0, bad])), w)
    with pytest.raises(ValueError, match=r"one_hot: x must hold integer ids"):
        F.one_hot(gh.Variable(np.array([[bad]]), need_grad=False), (4,))


def test_out_of_range_float_ids_raise() -> None:
    w = gh.Variable(np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"embed: ids in x0 must be in \[0, 4\)"):
        F.embed(gh.Variable(np.array([4.0])), w)
    with pytest.raises(ValueError, match=r"embed: ids in x0 must be in \[0, 4\)"):
        F.embed(gh.Variable(np.array([-1.0])), w)
    with pytest.raises(ValueError, match=r"one_hot: x\[..., 0\] must be in \[0, 3\)"):
        F.one_hot(gh.Variable(np.array([[3.0]]), need_grad=False), (3,))


# -- 4. a wider bias promotes the result ---------------------------------------------------


def _check_grad_dtypes_and_values(fn: object, arrays: list[np.ndarray]) -> None:
    """fn on the mixed-dtype arrays: result and gradients vs fn on float64 copies."""
    vs = [gh.Variable(a) for a in arrays]
    v64s = [gh.Variable(a.astype(np.float64)) for a in arrays]
    y = fn(*vs)  # type: ignore[operator]
    y64 = fn(*v64s)  # type: ignore[operator]
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.d, y64.d, rtol=1e-5, atol=1e-5)
    gy = RNG.standard_normal(y.shape)
    ref = gh.grad([y64], v64s, [gy], create_graph=False)
    for create_graph in (False, True):
        gs = gh.grad([y], vs, [gy], create_graph=create_graph)
        for a, g, r in zip(arrays, gs, ref):
            assert g.dtype == a.dtype  # each input gets a gradient of its own dtype
            np.testing.assert_allclose(g.d, r.d, rtol=1e-4, atol=1e-4)


def test_affine_with_a_float64_bias_promotes() -> None:
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    w = RNG.standard_normal((4, 2)).astype(np.float32)
    b = RNG.standard_normal(2) + 1e-3 * np.pi  # not representable in float32
    y = F.affine(gh.Variable(x), gh.Variable(w), gh.Variable(b))
    assert y.dtype == np.float64
    # the float64 bias is added in float64 (a float32 add would round it)
    np.testing.assert_allclose(y.d, (x @ w).astype(np.float64) + b, rtol=0, atol=1e-12)
    _check_grad_dtypes_and_values(lambda *a: F.affine(*a), [x, w, b])
    _check_grad_dtypes_and_values(lambda *a: F.affine(*a, base_axis=2),
                                  [RNG.standard_normal((2, 2, 3)).astype(np.float32),
                                   RNG.standard_normal((3, 2, 2)).astype(np.float32),
                                   RNG.standard_normal((2, 2))])


def test_affine_same_and_narrower_bias_dtypes_are_unchanged() -> None:
    x = gh.Variable(RNG.standard_normal((3, 4)).astype(np.float32))
    w = gh.Variable(RNG.standard_normal((4, 2)).astype(np.float32))
    assert F.affine(x, w, gh.Variable(np.zeros(2, np.float32))).dtype == np.float32
    x64 = gh.Variable(RNG.standard_normal((3, 4)))
    w64 = gh.Variable(RNG.standard_normal((4, 2)))
    assert F.affine(x64, w64, gh.Variable(np.zeros(2, np.float32))).dtype == np.float64


@pytest.mark.parametrize("name, w_shape, pad, stride", [
    ("convolution", (3, 2, 3, 3), (0, 0), (1, 1)),
    ("convolution", (3, 2, 3, 3), (1, 1), (1, 1)),
    ("convolution", (3, 2, 3, 3), (1, 0), (2, 2)),
    ("convolution", (3, 2, 3, 3), (0, 0), (2, 1)),
    ("deconvolution", (2, 3, 3, 3), (0, 0), (1, 1)),
    ("deconvolution", (2, 3, 3, 3), (1, 1), (2, 2)),
])
def test_convolutions_with_a_float64_bias_promote(name: str, w_shape: tuple[int, ...],
                                                  pad: tuple[int, int],
                                                  stride: tuple[int, int]) -> None:
    fn = getattr(F, name)
    x = RNG.standard_normal((2, 2, 5, 5)).astype(np.float32)
    w = RNG.standard_normal(w_shape).astype(np.float32)
    b = RNG.standard_normal(3) + 1e-3 * np.pi
    y = fn(gh.Variable(x), gh.Variable(w), gh.Variable(b), pad=pad, stride=stride)
    nob = fn(gh.Variable(x), gh.Variable(w), pad=pad, stride=stride)
    assert nob.dtype == np.float32
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.d, nob.d.astype(np.float64) + b[:, None, None], rtol=0,
                               atol=1e-12)
    _check_grad_dtypes_and_values(lambda *a: fn(*a, pad=pad, stride=stride), [x, w, b])


def test_convolution_same_dtype_bias_stays_float32() -> None:
    x = gh.Variable(RNG.standard_normal((1, 2, 4, 4)).astype(np.float32))
    w = gh.Variable(RNG.standard_normal((3, 2, 3, 3)).astype(np.float32))
    b = gh.Variable(RNG.standard_normal(3).astype(np.float32))
    assert F.convolution(x, w, b, pad=(1, 1)).dtype == np.float32
    assert F.convolution(x, w, b).dtype == np.float32


# -- 5. x and target shapes must match ---------------------------------------------------------


@pytest.mark.parametrize("fname", ["sigmoid_cross_entropy", "binary_cross_entropy"])
@pytest.mark.parametrize("xs, ts", [((3, 1), (3,)), ((3,), (3, 1)), ((2, 3), (3,)),
                                    ((2, 3), ())])
def test_cross_entropies_reject_mismatched_shapes(fname: str, xs: tuple[int, ...],
                                                  ts: tuple[int, ...]) -> None:
    x = v64(np.full(xs, 0.5))
    t = v64(np.ones(ts), need_grad=False)
    with pytest.raises(ValueError, match=rf"{fname}\(\).*x {re_shape(xs)} and target "
                                         rf"{re_shape(ts)}"):
        getattr(F, fname)(x, t)


def re_shape(shape: tuple[int, ...]) -> str:
    import re

    return re.escape(str(tuple(shape)))
