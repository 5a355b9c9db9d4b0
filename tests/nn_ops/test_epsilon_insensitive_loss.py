"""EpsilonInsensitiveLoss of gradhub-nn-ops: values (nnabla 1.39's), gradients to order 2."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck

X0 = np.array([[0.1, 2.0, -3.0], [1.0, -0.2, 0.5]])
X1 = np.array([[0.3, 0.5, -1.0], [1.0, 0.6, 0.0]])


def test_values_and_gradients_as_nnabla() -> None:
    a, b = gh.Variable(X0), gh.Variable(X1)
    y = F.epsilon_insensitive_loss(a, b, 0.5)
    # nnabla 1.39: [[0, 1, 1.5], [0, 0.3, 0]]; gradients sign(x0 - x1) beyond epsilon
    np.testing.assert_allclose(y.d, [[0.0, 1.0, 1.5], [0.0, 0.3, 0.0]], atol=1e-12)
    g = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    ga, gb = gh.grad([y], [a, b], [g])
    np.testing.assert_array_equal(ga.d, [[0, 2, -3], [0, -5, 0]])
    np.testing.assert_array_equal(gb.d, -ga.d)


def test_zero_gradient_at_epsilon_as_nnabla() -> None:
    a = gh.Variable(np.array([1.0, 0.0]))
    y = F.epsilon_insensitive_loss(a, gh.Variable(np.array([0.5, 0.5])), 0.5)
    (g,) = gh.grad([F.sum(y)], [a])
    np.testing.assert_array_equal(g.d, [0.0, 0.0])  # nnabla 1.39: 0 at |x0 - x1| = epsilon


def test_gradcheck_order_2() -> None:
    assert gradcheck(
        lambda u, v: F.epsilon_insensitive_loss(u, v, 0.5) ** 2, [X0, X1 + 0.05], order=2
    )


def test_shapes_must_match() -> None:
    with pytest.raises(ValueError, match="epsilon_insensitive_loss"):
        F.epsilon_insensitive_loss(gh.Variable(np.ones(3)), gh.Variable(np.ones((2, 3))), 0.1)
