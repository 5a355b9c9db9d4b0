"""``gh.grad``: an output that is also an input (needing a gradient or not) gets the seed or
follows ``unreachable``; ``grad_inputs`` are added; with ``set_grad=True`` the caller's
``grad_outputs``/``grad_inputs`` arrays are copied, never stored as ``.g``."""

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


V = gh.Variable


# -- grad(set_grad=True) never stores the caller's arrays as .g ------------------------------------


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_set_grad_copies_the_callers_grad_outputs(create_graph: bool) -> None:
    x = V(np.zeros(4, np.float32))
    y = x + 1.0
    go = np.full(4, 3.0, np.float32)
    gh.grad([y], [x], grad_outputs=[go], set_grad=True, create_graph=create_graph)
    assert x.g is not go
    x.g *= 0.5
    np.testing.assert_array_equal(go, np.full(4, 3.0, np.float32))
    np.testing.assert_array_equal(x.g, np.full(4, 1.5, np.float32))


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_set_grad_copies_a_grad_outputs_variable(create_graph: bool) -> None:
    x = V(np.zeros(3))
    gov = V(np.arange(3.0), need_grad=False)
    gh.grad([x + 1.0], [x], grad_outputs=[gov], set_grad=True, create_graph=create_graph)
    assert x.g is not gov.d
    x.g[:] = 7.0
    np.testing.assert_array_equal(gov.d, np.arange(3.0))


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_set_grad_copies_the_callers_grad_inputs(create_graph: bool) -> None:
    x = V(np.ones(3))
    unreached = V(np.ones(3))
    gi = np.full(3, 2.0)
    gh.grad(
        [x * x], [x, unreached], grad_inputs=[None, gi], set_grad=True, create_graph=create_graph
    )
    assert unreached.g is not gi
    unreached.g[:] = 0.0
    np.testing.assert_array_equal(gi, np.full(3, 2.0))
    np.testing.assert_array_equal(x.g, np.full(3, 2.0))


def test_grad_set_grad_of_an_output_that_is_an_input() -> None:
    x = V(np.zeros(3))
    go = np.ones(3)
    gh.grad([x], [x], grad_outputs=[go], set_grad=True, create_graph=False)
    assert x.g is not go
    np.testing.assert_array_equal(x.g, go)
