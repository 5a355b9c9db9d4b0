"""``backward``: each input gets its own gradient array, gradients of ``create_graph=True`` are
writable and stay differentiable, a stale ``.g`` of another shape is refused (naming the
Variable and both shapes) without changing any gradient, ``backward()`` on a Variable that needs
no gradient is refused, and ``loss_scale`` is checked."""

from __future__ import annotations

import re
from typing import Any

import gradhub as gh
import numpy as np
import pytest


def test_set_grad_gives_each_input_its_own_array() -> None:
    a = gh.Variable([1.0, 2.0])
    b = gh.Variable([3.0, 4.0])
    gh.grad([a + b], [a, b], create_graph=False, set_grad=True)
    a.g[0] = 100.0
    np.testing.assert_array_equal(b.g, [1.0, 1.0])


def test_create_graph_backward_gives_writable_grads_of_their_own() -> None:
    """Sum's gradient is a read-only broadcast view; .g must be a writable array of its own."""
    w = gh.Variable(np.ones((100, 100)))
    w.sum().backward(create_graph=True)
    w.g *= 0.5
    np.testing.assert_array_equal(w.g, np.full((100, 100), 0.5))
    v = np.ones(2, np.float32)
    a = gh.Variable([1.0, 2.0])
    (a * 1.0).backward(grad=v, create_graph=True)
    a.g[0] = 7.0
    np.testing.assert_array_equal(v, [1.0, 1.0])


def test_create_graph_backward_grad_stays_differentiable() -> None:
    """The copy made for .g under create_graph=True is recorded: d(sum(x.g))/dx = 2 for x*x."""
    x = gh.Variable(np.array([1.0, 3.0]))
    (x * x).sum().backward(create_graph=True)
    (gg,) = gh.grad([x._grad.sum()], [x])  # type: ignore[union-attr]
    np.testing.assert_allclose(gg.d, [2.0, 2.0])


V = gh.Variable


# -- a stale .g of another shape is not accumulated into ----------------------------------------


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize(("old", "new"), [((3, 1), (3, 3)), ((3,), (2,))])
def test_backward_refuses_to_accumulate_into_a_stale_grad(
    old: tuple[int, ...], new: tuple[int, ...], create_graph: bool
) -> None:
    x = V(np.ones(old), name="w")
    (x * x).sum().backward(create_graph=create_graph)
    np.testing.assert_array_equal(x.g, np.full(old, 2.0))
    x.d = np.ones(new)
    with pytest.raises(ValueError, match=r"Variable 'w'.*stale: call cleargrad\(\)"):
        (x * x).sum().backward(create_graph=create_graph)
    np.testing.assert_array_equal(x.g, np.full(old, 2.0))  # untouched
    x.cleargrad()
    (x * x).sum().backward(create_graph=create_graph)
    np.testing.assert_array_equal(x.g, np.full(new, 2.0))


def test_stale_grad_error_names_the_variable_and_both_shapes() -> None:
    x = V(np.ones((3, 1)), name="w")
    (x * x).sum().backward()
    x.d = np.ones((3, 3))
    with pytest.raises(ValueError) as e:
        (x * x).sum().backward()
    assert "'w'" in str(e.value) and "(3, 1)" in str(e.value) and "(3, 3)" in str(e.value)
    y = V(np.ones(2))
    (y * 1.0).sum().backward()
    y.d = np.ones(3)
    with pytest.raises(ValueError, match=r"a leaf Variable of shape \(3,\).*\(2,\).*\(3,\)"):
        (y * 1.0).sum().backward()


def test_a_refused_accumulation_leaves_every_grad_as_it_was() -> None:
    a = V(np.ones(2))
    b = V(np.ones(2))
    c = V(np.ones(2))
    (a * b * c).sum().backward()
    b.d = np.ones((1, 2))  # broadcasts with a and c: the new gradient of b is (1, 2)
    fresh = V(np.ones(2))
    with pytest.raises(ValueError, match="stale"):
        (a * b * c * fresh).sum().backward()
    for v in (a, b, c):
        np.testing.assert_array_equal(v.g, np.ones(v.g.shape))
    assert b.g.shape == (2,)
    assert fresh.g is None


# -- backward() on a Variable that needs no gradient ---------------------------------------------


def _no_grad_result() -> gh.Variable:
    x = gh.Variable([1.0, 2.0])
    with gh.no_grad():
        return (x * x).sum()


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (
            _no_grad_result,
            r"it is a leaf created with need_grad=False, or the result of a computation "
            r"under gh.no_grad\(\); create the leaves to differentiate with need_grad=True",
        ),
        (
            lambda: (gh.Variable([1.0, 2.0], need_grad=False) * 3.0).sum(),
            r"it was computed by sum\(\) from inputs none of which needs a gradient;",
        ),
        (
            lambda: gh.Variable([1.0, 2.0], need_grad=False),
            "it is a leaf created with need_grad=False",
        ),
    ],
    ids=["no_grad", "constant-leaves", "constant-leaf"],
)
def test_backward_on_a_variable_that_needs_no_gradient_raises(make: Any, why: str) -> None:
    """It silently did nothing; PyTorch raises ("does not require grad")."""
    y = make()
    with pytest.raises(
        RuntimeError,
        match=rf"backward: the Variable \(shape {re.escape(str(y.shape))}, dtype {y.dtype}\) "
        rf"needs no gradient \(need_grad=False\), so no gradient would be accumulated: {why}",
    ):
        y.backward()
    with pytest.raises(RuntimeError, match="needs no gradient"):
        gh.backward(y)


def test_backward_from_an_output_set_need_grad_false_raises() -> None:
    x = gh.Variable([1.0, 2.0])
    y = (x * x).sum()
    y.need_grad = False
    with pytest.raises(RuntimeError, match=r"needs no gradient .*its need_grad was set to False"):
        y.backward()
    assert x.g is None
    y.need_grad = True
    y.backward()
    np.testing.assert_array_equal(x.g, [2.0, 4.0])


# -- loss_scale ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scale", "cls", "msg"),
    [
        ("a", TypeError, "loss_scale must be a number \\(or None\\), got str 'a'"),
        ([2.0], TypeError, r"loss_scale must be a number \(or None\), got list \[2.0\]"),
        (True, TypeError, r"loss_scale must be a number \(or None\), got bool True"),
        (0.0, ValueError, "loss_scale must be a finite positive number, got 0.0"),
        (-2, ValueError, "loss_scale must be a finite positive number, got -2"),
        (float("inf"), ValueError, "loss_scale must be a finite positive number, got inf"),
        (float("nan"), ValueError, "loss_scale must be a finite positive number, got nan"),
    ],
)
def test_loss_scale_must_be_a_finite_positive_number(scale: Any, cls: type, msg: str) -> None:
    """``loss_scale="a"`` gave a bare numpy UFuncTypeError."""
    x = gh.Variable([1.0, 2.0])
    y = (x * x).sum()
    with pytest.raises(cls, match="backward: " + msg):
        y.backward(loss_scale=scale)
    with pytest.raises(cls, match="grad: " + msg):
        gh.grad([y], [x], loss_scale=scale)
    assert x.g is None
    y.backward(loss_scale=np.float32(8.0))  # numpy numbers are numbers
    np.testing.assert_array_equal(x.g, [16.0, 32.0])
