"""Elementwise math of gradhub-nn-ops at the extremes: atan2's partials at tiny and huge inputs
(against exact float64 formulas) and erf's accuracy."""

from __future__ import annotations

import math

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck

# -- atan2's partials without underflow or overflow of x0^2 + x1^2 ---------------------------


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


def var(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


# -- erf -------------------------------------------------------------------------------------------


def test_erf_accuracy() -> None:
    xs = np.concatenate([np.linspace(-7.0, 7.0, 20001), [0.0, 1e-300, -1e-12, 2.5, -2.5, 30.0]])
    got = F.erf(var(xs)).d
    want = np.array([math.erf(v) for v in xs])
    rel = np.abs(got - want) / np.maximum(np.abs(want), 1e-300)
    assert rel.max() < 1e-14
    assert F.erf(var([-np.inf, np.inf])).d.tolist() == [-1.0, 1.0]
    y32 = F.erf(gh.Variable(np.float32([0.5, -1.5])))
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32.d, [math.erf(0.5), math.erf(-1.5)], rtol=1e-6)
