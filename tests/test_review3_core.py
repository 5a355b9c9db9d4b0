"""Regression tests for the third review (whole programs fuzzed against PyTorch).

1. ``gh.grad([c], [c])`` with ``c.need_grad == False`` follows ``unreachable`` (zeros, None or an
   error), as an input needing no gradient does everywhere else; it returned ones.
2. ``x[[]]`` (an empty list index) selects nothing along the axis, as numpy and PyTorch; it
   raised a TypeError calling the list float64.
"""

from __future__ import annotations

import gradhub as gh
import numpy as np
import pytest


def test_output_that_is_an_input_needing_no_gradient_follows_unreachable() -> None:
    c = gh.Variable(np.array([1.0, 2.0]), need_grad=False)
    (g,) = gh.grad([c], [c])
    np.testing.assert_array_equal(g.d, [0.0, 0.0])
    assert gh.grad([c], [c], unreachable="none") == [None]
    with pytest.raises(ValueError, match=r"grad: inputs\[0\] needs no gradient"):
        gh.grad([c], [c], unreachable="error")
    # the same input reached through a function already gave None: both spellings now agree
    assert gh.grad([c * 2.0], [c], unreachable="none") == [None]


def test_output_that_is_an_input_needing_a_gradient_gets_the_seed() -> None:
    x = gh.Variable(np.array([1.0, 2.0]))
    (g,) = gh.grad([x], [x], grad_outputs=[np.array([3.0, 4.0])])
    np.testing.assert_array_equal(g.d, [3.0, 4.0])


def test_grad_inputs_still_added_for_an_input_needing_no_gradient() -> None:
    c = gh.Variable(np.array([1.0, 2.0]), need_grad=False)
    (g,) = gh.grad([c], [c], grad_inputs=[np.array([5.0, 6.0])])
    np.testing.assert_array_equal(g.d, [5.0, 6.0])


def test_empty_list_index_selects_nothing() -> None:
    x0 = np.arange(24.0).reshape(3, 4, 2)
    x = gh.Variable(x0)
    y = x[[]]
    assert y.shape == x0[[]].shape == (0, 4, 2)
    (g,) = gh.grad([y], [x], grad_outputs=[np.zeros((0, 4, 2))])
    np.testing.assert_array_equal(g.d, np.zeros_like(x0))
    assert x[1, []].shape == x0[1, []].shape


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
