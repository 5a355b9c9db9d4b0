"""Norm at the edges: float16 data, gradients at the zero vector (also as a gradient penalty),
NaN propagation and gradcheck away from zero."""

from __future__ import annotations

import math
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck

V = gh.Variable


def test_norm_float16() -> None:
    """Formerly: 10000 values of 300 in float16 gave inf (x * x overflows float16)."""
    x = V(np.full(10000, 300.0, np.float16))
    y = F.norm(x)
    assert y.dtype == np.float16
    assert float(y.d) == 30000.0
    (g,) = gh.grad([y], [x])
    assert g.dtype == np.float16
    np.testing.assert_allclose(g.d.astype(np.float64), 0.01, rtol=1e-3)
    for p in (3, math.inf):
        ref = np.linalg.norm(np.full(10000, 300.0), ord=p)
        np.testing.assert_allclose(float(F.norm(x, p=p).d), ref, rtol=1e-3)


# -- norm at the zero vector -----------------------------------------------------------------


@pytest.mark.parametrize("p", [None, 2, 1, 3, 1.5, math.inf])
def test_norm_gradient_at_zero_vector_is_zero(p: Any) -> None:
    x = V(np.zeros(3))
    (g,) = gh.grad([F.norm(x, p=p)], [x])
    np.testing.assert_array_equal(g.d, [0.0, 0.0, 0.0])
    x = V(np.zeros((2, 3)))
    x.d[1] = [3.0, -4.0, 0.0]
    (g,) = gh.grad([F.sum(F.norm(x, p=p, axis=1))], [x])
    assert np.all(np.isfinite(g.d))
    np.testing.assert_array_equal(g.d[0], [0.0, 0.0, 0.0])


def test_norm_gradient_penalty_with_a_zero_gradient() -> None:
    """The demo's pattern: the norm of a gradient that is exactly 0 must not give NaN."""
    w = V(np.array([1.0, 2.0]))
    x = V(np.array([0.0, 0.0]), need_grad=False)
    (gw,) = gh.grad([F.sum(w * w * x)], [w], create_graph=True)  # 2 w x = 0
    F.norm(gw).backward()
    np.testing.assert_array_equal(w.g, [0.0, 0.0])


@pytest.mark.parametrize("p", [None, 3, 1.5])
def test_norm_gradcheck_order_2_away_from_zero(p: Any) -> None:
    r = np.random.default_rng(1)
    x = r.uniform(0.5, 1.5, (2, 3)) * r.choice([-1.0, 1.0], (2, 3))
    assert gradcheck(lambda v: F.norm(v, p=p, axis=1), [x], order=2)


def test_norm_propagates_nan() -> None:
    assert np.isnan(F.norm(V(np.array([np.nan, 1.0]))).d)
