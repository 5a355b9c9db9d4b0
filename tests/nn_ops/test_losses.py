"""The losses of gradhub-nn-ops: binary_cross_entropy's clamped logs (log1p, perfect
predictions, saturated sigmoids, higher derivatives), integer and bool labels and target shapes
of the cross entropies, softmax_cross_entropy's nnabla shapes and label errors, huber_loss,
absolute_error and kl_multinomial (against nnabla 1.39's values)."""

from __future__ import annotations

import math

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck
from numeric_helpers import both_modes

RNG = np.random.default_rng(7)


def v64(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


# -- binary_cross_entropy: clamped logs -------------------------------------------------


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
        np.testing.assert_allclose(
            g1.d, [1.0, -1.0, 0.0, 0.0, -t5 / x5 + (1 - t5) / (1 - x5)], rtol=1e-6
        )
        np.testing.assert_allclose(
            g2.d, [1.0, 1.0, 0.0, 0.0, t5 / x5**2 + (1 - t5) / (1 - x5) ** 2], rtol=1e-6
        )
        np.testing.assert_allclose(
            g3.d, [2.0, -2.0, 0.0, 0.0, -2 * t5 / x5**3 + 2 * (1 - t5) / (1 - x5) ** 3], rtol=1e-6
        )


def test_bce_matches_finite_differences_inside_the_domain() -> None:
    x = RNG.uniform(0.05, 0.95, (3, 4))
    t = RNG.uniform(0, 1, (3, 4))
    gradcheck(F.binary_cross_entropy, [x, t], order=3)


# -- label dtypes ----------------------------------------------------------------------------


@pytest.mark.parametrize("fname", ["sigmoid_cross_entropy", "binary_cross_entropy"])
@pytest.mark.parametrize("ldtype", [np.int64, np.int32, np.uint8, np.bool_])
def test_cross_entropies_accept_integer_and_bool_labels(fname: str, ldtype: type) -> None:
    fn = getattr(F, fname)
    raw = (
        RNG.uniform(-2, 2, (3, 4))
        if fname == "sigmoid_cross_entropy"
        else RNG.uniform(0.1, 0.9, (3, 4))
    )
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


# -- x and target shapes must match ---------------------------------------------------------


@pytest.mark.parametrize("fname", ["sigmoid_cross_entropy", "binary_cross_entropy"])
@pytest.mark.parametrize("xs, ts", [((3, 1), (3,)), ((3,), (3, 1)), ((2, 3), (3,)), ((2, 3), ())])
def test_cross_entropies_reject_mismatched_shapes(
    fname: str, xs: tuple[int, ...], ts: tuple[int, ...]
) -> None:
    x = v64(np.full(xs, 0.5))
    t = v64(np.ones(ts), need_grad=False)
    with pytest.raises(
        ValueError,
        match=rf"{fname}\(\).*x {re_shape(xs)} and target "
        rf"{re_shape(ts)}",
    ):
        getattr(F, fname)(x, t)


def re_shape(shape: tuple[int, ...]) -> str:
    import re

    return re.escape(str(tuple(shape)))


def var(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


def _bce_exact(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    tiny = np.finfo(x.dtype).tiny
    x = x.astype(np.float64)
    with np.errstate(divide="ignore"):
        lx = np.maximum(np.log(x), np.log(tiny))
        l1 = np.maximum(np.log1p(-x), np.log(tiny))
    return -(t * lx + (1 - t) * l1)


# -- softmax and losses --------------------------------------------------------------------------


def test_softmax_cross_entropy_shapes_as_nnabla() -> None:
    rng = np.random.default_rng(0)
    x = var(rng.standard_normal((4, 3)))
    t = gh.Variable(np.array([[0], [2], [1], [2]]), need_grad=False)
    loss = F.softmax_cross_entropy(x, t)
    assert loss.shape == (4, 1) and loss.dtype == np.float64
    logp = x.d - np.log(np.exp(x.d).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(loss.d[:, 0], -logp[np.arange(4), t.d[:, 0]])
    loss_flat = F.softmax_cross_entropy(x, gh.Variable(t.d[:, 0], need_grad=False))
    assert loss_flat.shape == (4,)
    np.testing.assert_allclose(loss_flat.d, loss.d[:, 0])
    # axis=1 of an (N, C, H) input: labels (N, 1, H), loss (N, 1, H)
    x3 = var(rng.standard_normal((2, 3, 5)))
    t3 = gh.Variable(rng.integers(0, 3, (2, 1, 5)), need_grad=False)
    assert F.softmax_cross_entropy(x3, t3, axis=1).shape == (2, 1, 5)
    # float labels holding integers (nnabla's usual float Variables) give the same loss
    tf = gh.Variable(t.d.astype(np.float32), need_grad=True)
    np.testing.assert_allclose(F.softmax_cross_entropy(x, tf).d, loss.d)


def test_softmax_cross_entropy_gradient_and_labels() -> None:
    rng = np.random.default_rng(1)
    x = var(rng.standard_normal((3, 4)))
    t = gh.Variable(np.array([[1], [0], [3]], dtype=np.float64), need_grad=True)
    (gx,) = both_modes(lambda v: F.softmax_cross_entropy(v, t), x)
    p = np.exp(x.d) / np.exp(x.d).sum(axis=1, keepdims=True)
    p[np.arange(3), [1, 0, 3]] -= 1.0
    np.testing.assert_allclose(gx, p)
    F.softmax_cross_entropy(x, t).backward()
    assert t.g is None  # no gradient w.r.t. labels, even float ones


def test_softmax_cross_entropy_errors() -> None:
    x = var(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"softmax_cross_entropy\(\).*'target'.*shape"):
        F.softmax_cross_entropy(x, gh.Variable(np.zeros((2, 3), dtype=np.int64), False))
    with pytest.raises(ValueError, match=r"softmax_cross_entropy\(\).*'target'.*\[0, 3\)"):
        F.softmax_cross_entropy(x, gh.Variable(np.array([[0], [3]]), False))
    with pytest.raises(ValueError, match=r"softmax_cross_entropy\(\).*'axis'"):
        F.softmax_cross_entropy(x, gh.Variable(np.array([[0], [1]]), False), axis=2)


def test_huber_loss_matches_nnabla_definition() -> None:
    x0 = var([0.0, 0.5, -0.5, 2.0, -3.0])
    x1 = var(np.zeros(5), need_grad=False)
    np.testing.assert_allclose(F.huber_loss(x0, x1).d, [0.0, 0.25, 0.25, 3.0, 5.0])
    np.testing.assert_allclose(F.huber_loss(x0, x1, delta=2.0).d, [0.0, 0.25, 0.25, 4.0, 8.0])
    (g,) = both_modes(lambda v: F.huber_loss(v, x1), x0)
    np.testing.assert_allclose(g, [0.0, 1.0, -1.0, 2.0, -2.0])


@pytest.mark.parametrize(
    "dtype,xs",
    [
        (np.float32, [1e-8, 1e-6, 1e-4, 1e-3, 0.3]),
        (np.float64, [1e-17, 1e-16, 1e-14, 1e-9, 0.3]),
    ],
)
def test_bce_small_x_value_and_gradients_match_log1p(dtype, xs) -> None:  # type: ignore[no-untyped-def]
    x = np.array(xs, dtype)
    t = np.array([0.0, 0.0, 0.25, 0.0, 0.0], dtype)
    xv, tv = gh.Variable(x), gh.Variable(t)
    y = F.binary_cross_entropy(xv, tv)
    gx, gt = gh.grad([F.sum(y)], [xv, tv])
    xd, td = x.astype(np.float64), t.astype(np.float64)
    eps = np.finfo(dtype).eps
    assert y.dtype == gx.dtype == gt.dtype == dtype
    # the loss was 0 at x = 1e-8 (float32) and 11% off at x = 1e-16 (float64)
    np.testing.assert_allclose(y.d, _bce_exact(x, td), rtol=4 * eps)
    np.testing.assert_allclose(gx.d, -td / xd + (1 - td) / (1 - xd), rtol=4 * eps)
    np.testing.assert_allclose(gt.d, np.log1p(-xd) - np.log(xd), rtol=4 * eps)


def test_bce_clamp_at_one_and_perfect_predictions_to_order_3() -> None:
    x = np.array([1.0, 1.0, 0.0, 1.0 - 2.0**-53])
    t = np.array([0.5, 1.0, 0.0, 0.0])
    xv, tv = gh.Variable(x), gh.Variable(t)
    y = F.binary_cross_entropy(xv, tv)
    ln_tiny = np.log(np.finfo(np.float64).tiny)
    np.testing.assert_array_equal(y.d[:3], [-0.5 * ln_tiny, 0.0, 0.0])
    np.testing.assert_allclose(y.d[3], 53 * np.log(2.0), rtol=1e-15)  # ln(1 - x) exact
    gx, gt = gh.grad([F.sum(y)], [xv, tv], create_graph=True)
    np.testing.assert_array_equal(gx.d[:3], [-0.5, -1.0, 1.0])  # the clamped log: no gradient
    np.testing.assert_array_equal(gt.d[:3], [ln_tiny, ln_tiny, -ln_tiny])
    (g2,) = gh.grad([F.sum(gx)], [xv], create_graph=True)
    (g3,) = gh.grad([F.sum(g2)], [xv])
    assert np.isfinite(g2.d).all() and np.isfinite(g3.d).all()  # never 0 * inf or 0 / 0
    np.testing.assert_array_equal(g2.d[:3], [0.5, 1.0, 1.0])  # t / x^2 + (1 - t) / (1 - x)^2
    np.testing.assert_array_equal(g3.d[:3], [-1.0, -2.0, 2.0])
    assert np.isnan(F.binary_cross_entropy(gh.Variable([np.nan]), gh.Variable([0.0])).d).all()


def test_bce_gradcheck_ordinary_points() -> None:
    x = np.array([[0.1, 0.45, 0.9], [0.3, 0.7, 0.02]])
    t = np.array([[0.0, 1.0, 0.2], [1.0, 0.6, 0.0]])
    assert gradcheck(F.binary_cross_entropy, [x, t], order=3, eps=1e-7)


def test_absolute_error_value_and_gradient() -> None:
    a = gh.Variable(np.array([1.0, 2.0, -1.5]))
    b = gh.Variable(np.array([3.0, 2.0, -4.0]))
    y = F.absolute_error(a, b)
    np.testing.assert_array_equal(y.d, [2.0, 0.0, 2.5])
    ga, gb = gh.grad([F.sum(y)], [a, b])
    np.testing.assert_array_equal(ga.d, [-1.0, 0.0, 1.0])  # 0 at equality, as torch's l1_loss
    np.testing.assert_array_equal(gb.d, [1.0, 0.0, -1.0])
    with pytest.raises(ValueError, match=r"absolute_error\(\): arguments 'x0' and 'x1'"):
        F.absolute_error(a, gh.Variable(np.zeros((3, 1))))


def test_kl_multinomial_matches_nnabla_values() -> None:
    """Values printed by nnabla 1.39's F.kl_multinomial (float32) for these inputs."""
    p = np.array([[[0.2, 0.8], [0.5, 0.5]]])
    q = np.array([[[0.4, 0.6], [0.1, 0.9]]])
    y1 = F.kl_multinomial(gh.Variable(p), gh.Variable(q))
    assert y1.shape == (1, 1)
    np.testing.assert_allclose(y1.d, [[0.6023418]], rtol=1e-6)
    y2 = F.kl_multinomial(gh.Variable(p), gh.Variable(q), base_axis=2)
    assert y2.shape == (1, 2, 1)
    np.testing.assert_allclose(y2.d.ravel(), [0.09151623, 0.5108255], rtol=1e-6)
    # the clamps: p = 0 adds nothing; q = 0 is taken as 1e-8
    y0 = F.kl_multinomial(gh.Variable([[0.0, 1.0]]), gh.Variable([[0.4, 0.6]]))
    np.testing.assert_allclose(y0.d, [[0.5108256]], rtol=1e-6)
    yq = F.kl_multinomial(gh.Variable([[0.3, 0.7]]), gh.Variable([[0.0, 1.0]]))
    np.testing.assert_allclose(yq.d, [[4.9153404]], rtol=1e-6)
    assert F.kl_multinomial(
        gh.Variable(np.full((2, 3), 0.3)), gh.Variable(np.full((2, 3), 0.5)), base_axis=0
    ).shape == (1,)
    with pytest.raises(ValueError, match=r"kl_multinomial\(\): argument 'base_axis'"):
        F.kl_multinomial(gh.Variable(p), gh.Variable(q), base_axis=4)


def test_kl_multinomial_gradients_to_second_order() -> None:
    rng = np.random.default_rng(3)
    p = rng.uniform(0.2, 1.0, (2, 3))
    q = rng.uniform(0.2, 1.0, (2, 3))
    pv, qv = gh.Variable(p), gh.Variable(q)
    gp, gq = gh.grad([F.sum(F.kl_multinomial(pv, qv))], [pv, qv], create_graph=True)
    np.testing.assert_allclose(gp.d, np.log(p) + 1 - np.log(q), rtol=1e-12)
    np.testing.assert_allclose(gq.d, -p / q, rtol=1e-12)
    (hq,) = gh.grad([F.sum(gq)], [qv])  # d/dq sum(-p/q) = p/q^2
    np.testing.assert_allclose(hq.d, p / q**2, rtol=1e-12)


@pytest.mark.parametrize("ldtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64])
@pytest.mark.parametrize("bad", [-1, -128, 3, 100])
def test_softmax_cross_entropy_labels_out_of_range_name_both_ends(ldtype: type, bad: int) -> None:
    # the range is checked with one reduction over the labels viewed unsigned: a negative label
    # is caught as surely as one too large, and the message gives the true minimum and maximum
    if np.dtype(ldtype).kind == "u" and bad < 0:
        pytest.skip("unsigned labels are never negative")
    x = var(np.zeros((3, 3)))
    labels = np.array([[0], [bad], [2]]).astype(ldtype)
    lo, hi = int(labels.min()), int(labels.max())
    with pytest.raises(
        ValueError, match=rf"softmax_cross_entropy\(\).*outside \[0, 3\) \(min {lo}, max {hi}\)"
    ):
        F.softmax_cross_entropy(x, gh.Variable(labels, False))
    ok = np.array([[0], [1], [2]]).astype(ldtype)
    assert F.softmax_cross_entropy(x, gh.Variable(ok, False)).shape == (3, 1)


@pytest.mark.parametrize("shape", [(64, 10), (40, 32), (64, 33), (8, 10)])
def test_softmax_cross_entropy_of_many_rows_of_few_classes(shape: tuple[int, int]) -> None:
    # many rows of few classes take the row maxima from a transposed copy: the loss and its
    # gradient match the formulas (float64, against the definition), NaN where the definition
    # has it (a row holding one)
    rng = np.random.default_rng(11)
    a = rng.standard_normal(shape) * 30.0
    a[6, 2] = np.nan
    x = var(a)
    t = rng.integers(0, shape[1], (shape[0], 1))
    loss = F.softmax_cross_entropy(x, gh.Variable(t, False))
    m = a.max(axis=1, keepdims=True)
    z = a - m
    want = np.log(np.exp(z).sum(axis=1)) - z[np.arange(shape[0]), t[:, 0]]
    np.testing.assert_array_equal(np.isnan(loss.d[:, 0]), np.isnan(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(loss.d[fin, 0], want[fin], rtol=1e-12)
    good = np.isfinite(a).all(axis=1)
    xg = var(a[good])
    (gx,) = both_modes(
        lambda v: F.mean(F.softmax_cross_entropy(v, gh.Variable(t[good], False))), xg
    )
    p = np.exp(a[good] - a[good].max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(int(good.sum())), t[good, 0]] -= 1.0
    np.testing.assert_allclose(gx, p / good.sum(), rtol=1e-12, atol=1e-15)
    assert gradcheck(
        lambda v: F.softmax_cross_entropy(v, gh.Variable(t[:4], False)), [var(a[:4] / 30.0)]
    )


def test_binary_cross_entropy_inside_vmap_and_jacrev() -> None:
    # regression: its range check read x.d, which a batched Variable refuses: vmap, jacrev and
    # vmap(hessian) of any function calling it raised; the check now reads the whole batch
    import gradhub.func as ghf

    x = np.array([[0.2, 0.7], [0.9, 0.4]])
    t = np.array([[1.0, 0.0], [0.0, 1.0]])
    g = ghf.vmap(ghf.grad(lambda a, b: F.binary_cross_entropy(a, b).sum()))(x, t)
    np.testing.assert_allclose(g.d, (x - t) / (x * (1 - x)), rtol=1e-12)
    J = ghf.jacrev(lambda a: F.binary_cross_entropy(a, t[0]))(x[0])
    np.testing.assert_allclose(J.d, np.diag((x[0] - t[0]) / (x[0] * (1 - x[0]))), rtol=1e-12)
    with pytest.raises(ValueError, match=r"must hold probabilities in \[0, 1\].*got the value 1.5"):
        ghf.vmap(lambda a: F.binary_cross_entropy(a, t[0]))(np.array([[0.2, 0.5], [0.1, 1.5]]))
