"""BoolGather, BoolScatter and BoolFill of gradhub-nn-ops: values against numpy indexing,
gradients to order 2 in float64, and argument checks."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck

RNG = np.random.default_rng(5)
MASK = np.array([1.0, 0.0, 1.0, 1.0])


def test_bool_gather_values() -> None:
    x = RNG.standard_normal((4, 2))
    np.testing.assert_array_equal(F.bool_gather(gh.Variable(x), MASK).d, x[[0, 2, 3]])
    m2 = np.array([[True, False], [False, True], [True, True], [False, False]])
    np.testing.assert_array_equal(F.bool_gather(gh.Variable(x), m2).d, x[m2])


def test_bool_scatter_values_and_output() -> None:
    x = RNG.standard_normal((3, 2))
    y = F.bool_scatter(gh.Variable(x), MASK).d
    ref = np.zeros((4, 2))
    ref[[0, 2, 3]] = x
    np.testing.assert_array_equal(y, ref)
    out = np.full((4, 2), 9.0)
    y = F.bool_scatter(gh.Variable(x), MASK, gh.Variable(out)).d
    ref[1] = 9.0
    np.testing.assert_array_equal(y, ref)
    np.testing.assert_array_equal(out, 9.0)  # not modified


def test_bool_fill_broadcasts_the_mask() -> None:
    x = np.arange(6.0).reshape(2, 3)
    y = F.bool_fill(gh.Variable(x), np.array([1, 0, 1]), value=-1.0).d
    np.testing.assert_array_equal(y, [[-1, 1, -1], [-1, 4, -1]])
    y = F.bool_fill(gh.Variable(x), np.array([[0], [1]]), 2.5).d
    np.testing.assert_array_equal(y, [[0, 1, 2], [2.5, 2.5, 2.5]])


def test_gradients_order_2() -> None:
    x = RNG.standard_normal((4, 2))
    assert gradcheck(lambda v: F.bool_gather(v, MASK) ** 2, [x], order=2)
    assert gradcheck(lambda v: F.bool_scatter(v, MASK) ** 2, [x[:3]], order=2)
    assert gradcheck(
        lambda v, o: F.bool_scatter(v, MASK, o) ** 2, [x[:3], RNG.standard_normal((4, 2))], order=2
    )
    assert gradcheck(lambda v: F.bool_fill(v, np.array([0, 1]), 3.0) ** 2, [x], order=2)


def test_gradient_values() -> None:
    x = gh.Variable(RNG.standard_normal((4, 2)))
    g = RNG.standard_normal((3, 2))
    (gx,) = gh.grad([F.bool_gather(x, MASK)], [x], [g])
    ref = np.zeros((4, 2))
    ref[[0, 2, 3]] = g
    np.testing.assert_array_equal(gx.d, ref)
    inp, out = gh.Variable(g), gh.Variable(np.ones((4, 2)))
    gy = RNG.standard_normal((4, 2))
    gi, go = gh.grad([F.bool_scatter(inp, MASK, out)], [inp, out], [gy])
    np.testing.assert_array_equal(gi.d, gy[[0, 2, 3]])
    np.testing.assert_array_equal(go.d, np.where(MASK[:, None] > 0, 0.0, gy))


def test_checks() -> None:
    with pytest.raises(ValueError, match="bool_gather: mask of shape"):
        F.bool_gather(gh.Variable(np.ones((3, 2))), np.ones(2))
    with pytest.raises(ValueError, match="bool_scatter: input of shape"):
        F.bool_scatter(gh.Variable(np.ones((2, 2))), MASK)
    with pytest.raises(ValueError, match="bool_scatter: output has shape"):
        F.bool_scatter(gh.Variable(np.ones((3, 2))), MASK, gh.Variable(np.ones((4, 3))))
    with pytest.raises(ValueError, match="bool_fill: mask of shape"):
        F.bool_fill(gh.Variable(np.ones((2, 3))), np.ones(2))
