"""Regression tests for review 4 (numerics at the extremes): float16 optimizers, elu/selu's
gradient for very negative x, binary_cross_entropy's ln(1 - x), atan2's partials at tiny inputs.

Every reference is an exact float64 formula (CI has no PyTorch)."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.optim import SGD, Adam
from gradhub.testing import gradcheck

# -- F1: float16 parameters in Adam and SGD ------------------------------------------------------


def _adam_f64(
    p: np.ndarray, grads: list[np.ndarray], lr: float, wd: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """torch.optim.Adam's update in float64: the parameter, m and v after ``grads``."""
    p = p.astype(np.float64)
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        g = g.astype(np.float64) + wd * p
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        p = p - lr / (1 - 0.9**t) * m / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return p, m, v


def test_adam_float16_large_gradient_does_not_overflow_v() -> None:
    g = np.array([0.5, 200.0, 300.0, 1000.0, 5000.0], np.float16)
    w = gh.Variable(np.ones(5, np.float16))
    opt = Adam([w], lr=0.01)
    opt.update([g])
    p, m, v = _adam_f64(np.ones(5), [g], 0.01)
    assert w.d.dtype == opt.m[0].dtype == opt.v[0].dtype == np.float16
    assert np.isfinite(opt.v[0]).all()
    np.testing.assert_allclose(opt.v[0], v, rtol=1e-3)  # 90, 1000 and 25000: was inf
    np.testing.assert_allclose(opt.m[0], m, rtol=1e-3)
    np.testing.assert_allclose(w.d, p, rtol=1e-3)  # every entry moves by lr (was 0 past 256)


def test_adam_float16_entry_keeps_moving_after_a_large_gradient() -> None:
    grads = [np.array([300.0, 0.5], np.float16)] + [np.array([0.5, 0.5], np.float16)] * 100
    w = gh.Variable(np.ones(2, np.float16))
    opt = Adam([w], lr=0.01)
    for g in grads:
        opt.update([g])
    p, _, v = _adam_f64(np.ones(2), grads, 0.01)
    assert np.isfinite(opt.v[0]).all()
    # v stored in float16 decays in steps of its spacing (0.0625 near 80): 83.75 vs 81.5, as torch
    np.testing.assert_allclose(opt.v[0], v, rtol=4e-2)
    # 100 float16 roundings of p drift by ~0.01 (torch too); entry 0 was frozen at 1.0 (off 0.07)
    np.testing.assert_allclose(w.d, p, atol=2e-2)


def test_adam_float16_weight_decay_matches_float64() -> None:
    grads = [np.array([300.0, -0.5, 4.0], np.float16)] * 5
    w = gh.Variable(np.array([2.0, -1.0, 0.5], np.float16))
    opt = Adam([w], lr=0.01, weight_decay=0.1)
    for g in grads:
        opt.update([g])
    p, _, _ = _adam_f64(np.array([2.0, -1.0, 0.5]), grads, 0.01, wd=0.1)
    assert w.d.dtype == np.float16
    np.testing.assert_allclose(w.d, p, atol=2e-3)


def test_adam_float32_unchanged() -> None:
    grads = [np.array([0.3, -2.0, 1e3], np.float32)] * 3
    w = gh.Variable(np.array([1.0, 2.0, 3.0], np.float32))
    opt = Adam([w], lr=0.1)
    for g in grads:
        opt.update([g])
    p, _, v = _adam_f64(np.array([1.0, 2.0, 3.0]), grads, 0.1)
    assert w.d.dtype == opt.v[0].dtype == np.float32
    np.testing.assert_allclose(w.d, p, rtol=1e-6)
    np.testing.assert_allclose(opt.v[0], v, rtol=1e-6)


@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_float16_momentum_matches_float64(nesterov: bool) -> None:
    g = np.array([3000.0, -0.25, 7.0], np.float16)
    w = gh.Variable(np.array([1.0, 2.0, -3.0], np.float16))
    opt = SGD([w], lr=1e-3, momentum=0.9, weight_decay=0.01, nesterov=nesterov)
    p = w.d.astype(np.float64)
    b = None
    for _ in range(5):
        opt.update([g])
        gg = g.astype(np.float64) + 0.01 * p
        b = gg if b is None else 0.9 * b + gg
        p = p - 1e-3 * (gg + 0.9 * b if nesterov else b)
    assert w.d.dtype == opt.velocity[0].dtype == np.float16
    np.testing.assert_allclose(w.d, p, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(opt.velocity[0], b, rtol=2e-3)


# -- F2: elu / selu: the derivative for x < 0 is alpha * exp(x), not expm1(x) + 1 ----------------

_SELU = (1.05070098735548, 1.673263242354377)


def _grads(fn, x: np.ndarray, order: int) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    v = gh.Variable(x)
    out = [fn(v)]
    res = []
    for _ in range(order):
        (g,) = gh.grad([F.sum(out[-1])], [v], create_graph=True)
        out.append(g)
        res.append(g.d)
    return res


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize(
    "name,fn,scale,alpha",
    [
        ("elu", F.elu, 1.0, 1.0),
        ("elu a=0.5", lambda v: F.elu(v, alpha=0.5), 1.0, 0.5),
        ("selu", F.selu, *_SELU),
    ],
)
def test_elu_selu_derivatives_for_very_negative_x(name, fn, scale, alpha, dtype) -> None:  # type: ignore[no-untyped-def]
    x = {
        np.float64: [-5.0, -20.0, -30.0, -40.0, -100.0, -700.0],
        np.float32: [-5.0, -10.0, -15.0, -20.0, -30.0, -80.0],
        np.float16: [-4.0, -8.0, -10.0, -12.0, -15.0],
    }[dtype]
    x = np.array(x, dtype)
    exact = scale * alpha * np.exp(x.astype(np.float64))  # every derivative order, x < 0
    g1, g2 = _grads(fn, x, 2)
    assert g1.dtype == g2.dtype == dtype
    tiny = 2 * np.finfo(dtype).smallest_subnormal  # two roundings (alpha, scale) in subnormals
    rtol = {np.float64: 1e-14, np.float32: 1e-6, np.float16: 2e-3}[dtype]
    for g in (g1, g2):  # was expm1(x) + 1: 0 below x = -17 in float32, -37 in float64
        np.testing.assert_allclose(g, exact, rtol=rtol, atol=tiny)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_elu_value_keeps_expm1_accuracy_near_zero(dtype) -> None:  # type: ignore[no-untyped-def]
    x = np.array([-1e-10, -1e-7, -1e-4, -0.3, -3.0, 0.0, 1e-8, 2.0], dtype)
    xd = x.astype(np.float64)
    for alpha in (1.0, 0.5):
        y = F.elu(gh.Variable(x), alpha=alpha).d
        exact = np.where(xd > 0, xd, alpha * np.expm1(xd))
        assert y.dtype == dtype
        np.testing.assert_allclose(y, exact, rtol=np.finfo(dtype).eps, atol=0)


def test_elu_kink_and_extremes() -> None:
    x = np.array([0.0, -np.inf, np.inf, 1.5])
    v = gh.Variable(x)
    (g,) = gh.grad([F.sum(F.elu(v, alpha=0.5))], [v])
    np.testing.assert_array_equal(F.elu(v, alpha=0.5).d, [0.0, -0.5, np.inf, 1.5])
    np.testing.assert_array_equal(g.d, [0.5, 0.0, 1.0, 1.0])  # elu'(0) = alpha, as documented
    assert np.isnan(F.elu(gh.Variable(np.array([np.nan]))).d).all()


@pytest.mark.parametrize("alpha", [1.0, 0.5, 2.0])
def test_elu_selu_gradcheck_ordinary_points(alpha: float) -> None:
    x = np.array([[-2.3, -0.7, -0.05], [0.4, 1.1, 2.5]])
    assert gradcheck(lambda v: F.elu(v, alpha=alpha), [x], order=3)
    assert gradcheck(lambda v: F.selu(v, alpha=alpha), [x], order=2)


def test_elu_integer_input_and_alpha_checks() -> None:
    y = F.elu(gh.Variable(np.array([-1, 2], np.int16), need_grad=False))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.d, [np.expm1(-1.0), 2.0], rtol=1e-6)
    np.testing.assert_allclose(
        F.elu(gh.Variable([-1.0]), alpha=np.array(2.0)).d, [2 * np.expm1(-1.0)], rtol=1e-6
    )
    assert F.elu(gh.Variable([-1.0]), alpha=np.array(2.0)).dtype == np.float32
    with pytest.raises(TypeError, match=r"elu\(\): argument 'alpha'"):
        F.elu(gh.Variable([-1.0]), alpha=None)


# -- F4: binary_cross_entropy computes ln(1 - x) as log1p(-x) -----------------------------------


def _bce_exact(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    tiny = np.finfo(x.dtype).tiny
    x = x.astype(np.float64)
    with np.errstate(divide="ignore"):
        lx = np.maximum(np.log(x), np.log(tiny))
        l1 = np.maximum(np.log1p(-x), np.log(tiny))
    return -(t * lx + (1 - t) * l1)


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


# -- F3: atan2's partials without underflow or overflow of x0^2 + x1^2 ---------------------------


def _atan2_partials(a: float, b: float) -> tuple[float, float]:
    """The exact partials of atan2(a, b), from the inputs scaled to order 1 (float64)."""
    s = max(abs(a), abs(b))
    u, w = a / s, b / s
    q = u * u + w * w
    return (w / q) / s, (-u / q) / s


@pytest.mark.parametrize(
    "dtype,a,b",
    [
        (np.float64, 1e-170, 2e-170),  # was inf, -inf
        (np.float64, -3e-160, 1e-161),
        (np.float64, 1e200, 2e200),  # was 0, -0
        (np.float32, 1e-25, 2e-25),
        (np.float32, 1e25, -2e25),
        (np.float32, 0.6, -0.8),
    ],
)
def test_atan2_first_order_at_tiny_and_huge_inputs(dtype, a, b) -> None:  # type: ignore[no-untyped-def]
    for create_graph in (False, True):  # the array rule and the differentiable rule
        x0, x1 = gh.Variable(np.array([a], dtype)), gh.Variable(np.array([b], dtype))
        g0, g1 = gh.grad([F.atan2(x0, x1)], [x0, x1], create_graph=create_graph)
        e0, e1 = _atan2_partials(float(x0.d[0]), float(x1.d[0]))
        assert g0.dtype == g1.dtype == dtype
        rtol = 4 * np.finfo(dtype).eps
        np.testing.assert_allclose(g0.d, [e0], rtol=rtol)
        np.testing.assert_allclose(g1.d, [e1], rtol=rtol)


def test_atan2_second_order_at_tiny_inputs() -> None:
    a, b = 1e-100, -2e-100  # the squared denominator (x0^2 + x1^2)^2 underflowed
    x0, x1 = gh.Variable(np.array([a])), gh.Variable(np.array([b]))
    g0, _ = gh.grad([F.atan2(x0, x1)], [x0, x1], create_graph=True)
    h00, h01 = gh.grad([F.sum(g0)], [x0, x1])
    u, w = a / 1e-100, b / 1e-100  # exact, scaled: d2/dx0^2 = -2 x0 x1 / q^2, d2/dx0dx1 = ...
    q = u * u + w * w
    np.testing.assert_allclose(h00.d, [-2 * u * w / q**2 * 1e200], rtol=1e-14)
    np.testing.assert_allclose(h01.d, [(u * u - w * w) / q**2 * 1e200], rtol=1e-14)


def test_atan2_gradcheck_ordinary_points_and_origin() -> None:
    x0 = np.array([[0.3, -1.2, 2.0], [-0.4, 0.9, 0.05]])
    x1 = np.array([[1.1, 0.7, -0.5], [-2.0, 0.9, -0.3]])  # includes |x0| == |x1| (a tie in s)
    assert gradcheck(F.atan2, [x0, x1], order=3)
    assert gradcheck(F.atan2, [x0, np.array([0.8, -0.6, 1.5])], order=2)  # broadcasting
    v0, v1 = gh.Variable(np.zeros(1)), gh.Variable(np.zeros(1))
    with np.errstate(all="ignore"):
        g0, g1 = gh.grad([F.atan2(v0, v1)], [v0, v1])
    assert np.isnan(g0.d).all() and np.isnan(g1.d).all()  # documented: not differentiable
