"""TopKGrad of gradhub-nn-ops: the identity forward, the k largest gradients backward (nnabla
1.39's values), differentiable again."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np

X = np.array([[1.0, -4.0, 3.0, 2.0], [-0.5, 0.2, 0.3, -0.1]])
G = np.array([[1.0, -2.0, 3.0, 4.0], [5.0, -9.0, 7.0, 8.0]])


def test_forward_is_the_identity() -> None:
    np.testing.assert_array_equal(F.top_k_grad(gh.Variable(X), 2).d, X)


def test_backward_keeps_the_k_largest_gradients() -> None:
    x = gh.Variable(X)
    (g,) = gh.grad([F.top_k_grad(x, 2)], [x], [G])
    np.testing.assert_array_equal(g.d, [[0, 0, 3, 4], [0, 0, 7, 8]])
    (g,) = gh.grad([F.top_k_grad(x, 2, abs=True)], [x], [G])
    np.testing.assert_array_equal(g.d, [[0, 0, 3, 4], [0, -9, 0, 8]])
    (g,) = gh.grad([F.top_k_grad(x, 1, base_axis=0)], [x], [G])
    np.testing.assert_array_equal(g.d, [[0, 0, 0, 0], [0, 0, 0, 8]])


def test_second_order_goes_through_the_selection() -> None:
    # d/dx of sum(g_x^2) with g_x = topk(2 x) (the gradient of sum(y^2)): 8 x on the kept ones
    x = gh.Variable(X)
    y = F.top_k_grad(x, 2)
    (g,) = gh.grad([F.sum(y * y)], [x], create_graph=True)
    (h,) = gh.grad([F.sum(g * g)], [x])
    # 2x = [2, -8, 6, 4] keeps 6 and 4; [-1, 0.4, 0.6, -0.2] keeps 0.6 and 0.4
    keep = np.array([[0, 0, 1, 1], [0, 1, 1, 0]], bool)
    np.testing.assert_allclose(h.d, np.where(keep, 8 * X, 0.0))
