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
