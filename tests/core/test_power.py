"""``x ** y`` (Pow2): the exponent's gradient at base zero, to second order, and gradcheck."""

from __future__ import annotations

import math

import gradhub as gh
import gradhub.functions as F
import numpy as np
from gradhub.testing import gradcheck

V = gh.Variable


# -- pow2 at base 0 --------------------------------------------------------------------------


def test_pow2_exponent_gradient_at_base_zero() -> None:
    b = V(np.array([0.0, 2.0]))
    e = V(np.array([2.0, 2.0]))
    F.sum(b**e).backward()
    np.testing.assert_allclose(e.g, [0.0, 4.0 * math.log(2.0)])
    np.testing.assert_allclose(b.g, [0.0, 4.0])
    x = V(np.array([0.0, 0.0, 2.0, 2.0]))
    y = V(np.array([0.0, 3.0, 3.0, 0.0]))
    gx, gy = gh.grad([x**y], [x, y])
    np.testing.assert_allclose(gy.d, [0.0, 0.0, 8.0 * math.log(2.0), math.log(2.0)])
    np.testing.assert_allclose(gx.d, [0.0, 0.0, 12.0, 0.0])  # d/dx x^0 = 0, at x = 0 too


def test_pow2_exponent_gradient_at_base_zero_second_order_is_finite() -> None:
    x = V(np.array([0.0, 1.5]))
    y = V(np.array([2.0, 2.5]))
    (gy,) = gh.grad([F.sum(x**y)], [y], create_graph=True)
    gyy, gyx = gh.grad([F.sum(gy)], [y, x])
    assert np.all(np.isfinite(gyy.d)) and np.all(np.isfinite(gyx.d))
    np.testing.assert_allclose(gyy.d[1], 1.5**2.5 * math.log(1.5) ** 2)


def test_pow2_gradcheck_away_from_zero() -> None:
    r = np.random.default_rng(0)
    assert gradcheck(F.pow2, [r.uniform(0.5, 2.0, (2, 3)), r.uniform(-2.0, 2.0, (2, 3))], order=2)


def test_pow2_mixed_second_derivative_at_a_zero_exponent() -> None:
    # regression: the rule took x0^0 in place of x0^(x1 - 1) wherever x1 == 0, so the mixed
    # derivative d/dx1 (dy/dx0) was 1 instead of 1 / x0 (x0 > 0) while d/dx0 (dy/dx1) was 1 / x0:
    # an asymmetric Hessian; d2(x0^x1)/dx0 dx1 = x0^(x1 - 1) (1 + x1 ln x0) = 1 / x0 at x1 = 0
    import gradhub.func as ghf

    a = gh.Variable(np.array([2.0, 3.0, 0.5]))
    e = gh.Variable(np.zeros(3))
    ga, ge = gh.grad([a**e], [a, e])
    np.testing.assert_allclose(gh.grad([ga], [e])[0].d, 1 / a.d, rtol=1e-15)
    np.testing.assert_allclose(gh.grad([ge], [a])[0].d, 1 / a.d, rtol=1e-15)
    H = ghf.hessian(lambda p: (p[0] ** p[1]).sum())(np.array([2.0, 0.0]))
    np.testing.assert_allclose(H.d, [[0.0, 0.5], [0.5, np.log(2.0) ** 2]], rtol=1e-15)
    # forward mode (the JVP rule) agrees
    _, t = ghf.jvp(
        lambda x: ghf.grad(lambda y: (y[0] ** y[1]).sum())(x),
        (np.array([2.0, 0.0]),),
        (np.array([0.0, 1.0]),),
    )
    np.testing.assert_allclose(t.d, [0.5, np.log(2.0) ** 2], rtol=1e-15)
