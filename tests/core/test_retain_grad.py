"""``retain_grad``: gradients stored on leaves and intermediates by ``backward`` and ``grad``."""

from __future__ import annotations

import gradhub as gh
import numpy as np
import pytest


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_retain_grad_stores_the_gradient_of_an_intermediate_input(create_graph: bool) -> None:
    """An input of grad() that is an intermediate Variable is one whose gradient retain_grad
    keeps (as chainer); it was pruned from the pass and kept no .g."""
    x = gh.Variable(np.array([1.0, 2.0]))
    h = 2.0 * x
    z = 3.0 * h
    (g,) = gh.grad([z], [h], retain_grad=True, create_graph=create_graph)
    np.testing.assert_array_equal(g.d, [3.0, 3.0])
    np.testing.assert_array_equal(h.g, [3.0, 3.0])
    np.testing.assert_array_equal(z.g, [1.0, 1.0])
    assert x.g is None  # leaves keep their .g (set_grad is what stores on them)


def test_grad_retain_grad_leaves_an_unreached_intermediate_input_alone() -> None:
    x = gh.Variable(np.array([1.0, 2.0]))
    h = 2.0 * x
    (g,) = gh.grad([3.0 * x], [h], retain_grad=True)  # h is not on a path: zeros, no .g
    np.testing.assert_array_equal(g.d, [0.0, 0.0])
    assert h.g is None


def test_backward_retain_grad_on_a_leaf_accumulates_once() -> None:
    """backward(retain_grad=True) on a leaf set .g to the seed and then added the seed again."""
    x = gh.Variable([1.0, 2.0])
    x.backward(retain_grad=True)
    np.testing.assert_array_equal(x.g, [1.0, 1.0])
    x.g = 5.0
    x.backward(retain_grad=True)
    np.testing.assert_array_equal(x.g, [6.0, 6.0])


def test_retained_intermediate_grad_is_not_the_leaf_grad() -> None:
    x = gh.Variable([1.0, 2.0])
    h = x + 1.0
    (h * h).sum().backward(retain_grad=True)
    np.testing.assert_array_equal(h.g, [4.0, 6.0])
    h.g[0] = 99.0
    np.testing.assert_array_equal(x.g, [4.0, 6.0])
