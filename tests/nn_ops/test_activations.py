"""Activations of gradhub-nn-ops: the relu family at kinks, stable sigmoid and softmax families
(float16 sums, integer and bool inputs), gelu's exact erf form, elu/selu at very negative x and
near zero, and prelu's nnabla keywords."""

from __future__ import annotations

import math
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck
from numeric_helpers import both_modes


def var(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


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


V = gh.Variable


def const(a: Any) -> gh.Variable:
    return V(np.asarray(a), need_grad=False)


def _np_softmax64(x: np.ndarray) -> np.ndarray:
    z = x.astype(np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# -- kinks and ties: the documented sub-gradients ----------------------------------------------


def test_relu_family_at_kinks() -> None:
    x = var([-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(both_modes(F.relu, x)[0], [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(
        both_modes(F.relu6, var([0.0, 3.0, 6.0, 7.0]))[0], [0.0, 1.0, 0.0, 0.0]
    )
    np.testing.assert_array_equal(
        both_modes(F.hard_tanh, var([-1.0, 0.5, 1.0]))[0], [0.0, 1.0, 0.0]
    )
    np.testing.assert_allclose(
        both_modes(lambda v: F.leaky_relu(v, alpha=0.2), x)[0], [0.2, 0.2, 1.0]
    )
    np.testing.assert_allclose(
        both_modes(lambda v: F.elu(v, alpha=0.5), x)[0], [0.5 * math.exp(-1.0), 0.5, 1.0]
    )
    np.testing.assert_array_equal(both_modes(F.abs, x)[0], [-1.0, 0.0, 1.0])
    gx, gw = both_modes(F.prelu, var([[0.0, -2.0], [3.0, 0.0]]), var([0.25, 0.5]))
    np.testing.assert_allclose(gx, [[0.25, 0.5], [1.0, 0.5]])
    np.testing.assert_allclose(gw, [-0.0, -2.0])


def test_relu_second_derivative_is_zero() -> None:
    x = var([-1.0, 0.5, 2.0])
    (g,) = gh.grad([F.relu(x) * x], [x], create_graph=True)  # d(x relu x)/dx = 2x (x > 0)
    np.testing.assert_allclose(g.d, [0.0, 1.0, 4.0])
    (gg,) = gh.grad([g], [x])
    np.testing.assert_allclose(gg.d, [0.0, 2.0, 2.0])


def test_softmax_is_stable_and_sums_to_one() -> None:
    x = var([[1000.0, 1000.0, -1000.0], [0.0, 1.0, 2.0]])
    y = F.softmax(x)
    np.testing.assert_allclose(y.d.sum(axis=1), [1.0, 1.0])
    np.testing.assert_allclose(y.d[0], [0.5, 0.5, 0.0])
    np.testing.assert_allclose(F.log_softmax(x).d[1], np.log(y.d[1]))
    np.testing.assert_allclose(F.logsumexp(x, axis=1).d[0], 1000.0 + math.log(2.0))
    assert F.log_softmax(x).d[0, 2] == pytest.approx(-2000.0 - math.log(2.0))


def test_sigmoid_family_is_stable() -> None:
    x = var([-800.0, 0.0, 800.0])
    np.testing.assert_array_equal(F.sigmoid(x).d, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(F.softplus(x).d, [0.0, math.log(2.0), 800.0])
    np.testing.assert_allclose(F.log_sigmoid(x).d, [-800.0, -math.log(2.0), 0.0])
    t = var([1.0, 1.0, 0.0], need_grad=False)
    np.testing.assert_allclose(F.sigmoid_cross_entropy(x, t).d, [800.0, math.log(2.0), 800.0])


def test_gelu_is_the_exact_erf_form() -> None:
    xs = np.linspace(-4, 4, 9)
    want = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in xs]
    np.testing.assert_allclose(F.gelu(var(xs)).d, want, rtol=1e-14, atol=1e-300)


def test_gelu_tanh_approximation() -> None:
    xs = np.linspace(-4, 4, 9)
    c = math.sqrt(2 / math.pi)
    want = [0.5 * v * (1 + math.tanh(c * (v + 0.044715 * v**3))) for v in xs]
    np.testing.assert_allclose(F.gelu(var(xs), approximate="tanh").d, want, rtol=1e-14, atol=1e-15)
    # d/dx by hand: 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 * 0.044715 x^2)
    t = np.tanh(c * (xs + 0.044715 * xs**3))
    dwant = 0.5 * (1 + t) + 0.5 * xs * (1 - t**2) * c * (1 + 3 * 0.044715 * xs**2)
    (g,) = both_modes(lambda v: F.gelu(v, approximate="tanh"), var(xs))
    np.testing.assert_allclose(g, dwant, rtol=1e-10)
    with pytest.raises(ValueError, match=r"gelu.*approximate"):
        F.gelu(var(xs), approximate="sigmoid")


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


def test_softmax_family_float16_sums_in_float32() -> None:
    """Formerly: softmax of (1, 70000) float16 zeros gave 0 (the sum overflowed to inf)."""
    z = np.zeros((1, 70000), np.float16)
    y = F.softmax(V(z))
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.d.astype(np.float64), 1 / 70000, rtol=1e-2)
    ly = F.log_softmax(V(z))
    assert ly.dtype == np.float16
    np.testing.assert_allclose(ly.d.astype(np.float64), -math.log(70000), rtol=1e-3)
    t = const(np.array([[1], [0]]))
    loss = F.softmax_cross_entropy(V(np.zeros((2, 70000), np.float16)), t)
    assert loss.dtype == np.float16
    np.testing.assert_allclose(loss.d.astype(np.float64), math.log(70000), rtol=1e-3)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int64, np.bool_])
def test_softmax_family_integer_and_bool_inputs(dtype: Any) -> None:
    """Formerly: softmax of uint8 [1, 2, 3] gave [nan, nan, 0]; bool data raised numpy's
    'boolean subtract' error."""
    a = (
        np.array([[1, 0, 1]], dtype)
        if dtype is np.bool_
        else np.array([[-128 if np.dtype(dtype).kind == "i" else 0, 2, 100]], dtype)
    )
    ref = _np_softmax64(a)
    want = np.result_type(a.dtype, np.float16)
    y = F.softmax(const(a))
    assert y.dtype == want
    tol = 2e-3 if want == np.float16 else 1e-6
    np.testing.assert_allclose(y.d.astype(np.float64), ref, rtol=tol, atol=tol)
    ly = F.log_softmax(const(a))
    assert ly.dtype == want
    ok = ref > 1e-30
    np.testing.assert_allclose(ly.d.astype(np.float64)[ok], np.log(ref[ok]), rtol=tol, atol=tol)
    loss = F.softmax_cross_entropy(const(a), const(np.array([[2]])))
    np.testing.assert_allclose(float(loss.d[0, 0]), -math.log(ref[0, 2]), rtol=tol, atol=tol)


# -- small ones ------------------------------------------------------------------------


def test_prelu_nnabla_keywords() -> None:
    x = gh.Variable([[-1.0, -1.0], [2.0, -4.0]])
    w = gh.Variable([0.1, 0.5])
    want = F.prelu(x, w).d
    np.testing.assert_allclose(F.prelu(x0=x, x1=w).d, want)
    np.testing.assert_allclose(F.prelu(x=x, weight=w).d, want)
    np.testing.assert_allclose(F.prelu(x, w, 1).d, want)
    with pytest.raises(TypeError, match=r"prelu.*'x1'"):
        F.prelu(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_kernel_and_fast_rule_give_the_bits_of_the_plain_formulas(dtype: type) -> None:
    """ReLU's CPU kernel (rows of ``_ZEROS`` elements against a row of zeros, the rest against
    the scalar) and first-order fast rule (the mask copied to 0/1 floats, then a product) give
    the same bits as ``np.maximum(x, 0)`` and ``g * (y > 0)``: NaN inputs, signed zeros and
    non-finite gradients included."""
    from gradhub_nn_ops import activations as A

    rng = np.random.default_rng(41)
    x = rng.standard_normal((3, 5, 17, 31)).astype(dtype)  # 3 rows of 2048 and 1761 more
    assert x.size // A._ZEROS == 3 and x.size % A._ZEROS
    x.ravel()[-3:] = [np.nan, -0.0, -1.0]  # in the last, partial row
    x.ravel()[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan]
    g = rng.standard_normal(x.shape).astype(dtype)
    g.ravel()[6:10] = [np.inf, -np.inf, np.nan, -0.0]
    y = A._relu(np, x)
    want_y = np.maximum(x, 0)
    assert y.dtype == dtype
    assert np.array_equal(y.view(np.uint8), want_y.view(np.uint8))
    with np.errstate(invalid="ignore"):
        (gx,) = A._relu_fast(np, [g], [x], [x.shape], [y], [y.shape])
        want_g = g * (want_y > 0)
    assert gx.dtype == dtype
    assert np.array_equal(gx.view(np.uint8), want_g.view(np.uint8))
    # a view with negative strides and a small array take numpy's loop with the scalar 0
    for other in (x[:, :, ::-1], x[:1, :1, :2]):
        want = np.maximum(other, 0)
        assert np.array_equal(A._relu(np, other).view(np.uint8), want.view(np.uint8))
    # Fortran-ordered 2-d arrays (Affine's transposed products) keep their order, same bits
    xf, gf = x.reshape(-1, 31).T, g.reshape(-1, 31).T
    assert xf.flags.f_contiguous and not xf.flags.c_contiguous
    yf = A._relu(np, xf)
    assert yf.flags.f_contiguous and not yf.flags.c_contiguous
    assert np.array_equal(
        yf.T.view(np.uint8), np.ascontiguousarray(np.maximum(xf, 0).T).view(np.uint8)
    )
    with np.errstate(invalid="ignore"):
        (gxf,) = A._relu_fast(np, [gf], [xf], [xf.shape], [yf], [yf.shape])
        want_gf = gf * (yf > 0)
    assert gxf.flags.f_contiguous and not gxf.flags.c_contiguous
    assert np.array_equal(gxf.T.view(np.uint8), np.ascontiguousarray(want_gf.T).view(np.uint8))


def test_gelu_tanh_is_accurate_for_large_negative_x() -> None:
    # regression: 0.5 x (1 + tanh(u)) cancels in float32 for x < -3 (30% off at -5, 0 at -6);
    # the values below are the exact tanh approximation (50-digit arithmetic), rounded
    x = gh.Variable(np.array([-5.0, -6.0], np.float32))
    y = F.gelu(x, approximate="tanh")
    np.testing.assert_allclose(y.d, [-2.291796e-07, -8.439647e-11], rtol=2e-6)
