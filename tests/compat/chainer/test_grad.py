"""``chainer.grad`` in the chainer layer: chainer Variables returned without touching ``.grad``,
None for unreachable inputs, ``set_grad``, ``retain_grad``, ``grad_outputs``/``grad_inputs``,
``loss_scale``, ``enable_double_backprop``, argument errors, and inputs with
``requires_grad=False`` differentiated through every path (also when their intermediates are
gone). Expected behaviour was checked against chainer 7.8.1.
"""

from __future__ import annotations

from typing import Any

import gradhub_compat.chainer.functions as CF
import numpy as np
import pytest
from compat.chainer.helpers import _c, _v
from gradhub_compat import chainer
from gradhub_compat.chainer import Variable
from numeric_helpers import central_differences


def _graph() -> tuple[Variable, Variable, Variable, Variable]:
    x0 = _v([0.0, 1.0])
    x1 = _v([2.0, 3.0])
    y = 2 * x0 + 3 * x1
    z = 2 * y
    return x0, x1, y, z


def test_grad_returns_chainer_variables_without_touching_grad() -> None:
    x0, x1, _, z = _graph()
    g0, g1 = chainer.grad([z], [x0, x1])
    assert type(g0) is Variable
    np.testing.assert_array_equal(g0.array, [4.0, 4.0])
    np.testing.assert_array_equal(g1.array, [6.0, 6.0])
    assert x0.grad is None
    (again,) = chainer.grad((z,), (x0,))  # tuples too; nothing accumulates between calls
    np.testing.assert_array_equal(again.array, [4.0, 4.0])
    assert g0.creator is None  # not differentiable by default


def test_grad_unreachable_inputs_give_none() -> None:
    x0, _, y, _ = _graph()
    other = _v([1.0, 1.0])
    assert chainer.grad([y], [other]) == [None]
    g = chainer.grad([x0 * 1], [x0, other])
    assert g[1] is None


def test_grad_set_grad() -> None:
    x0, _, y, _ = _graph()
    (g,) = chainer.grad([y], [x0], set_grad=True)
    np.testing.assert_array_equal(g.array, [2.0, 2.0])
    np.testing.assert_array_equal(x0.grad, [2.0, 2.0])


def test_grad_retain_grad_stores_output_and_intermediate_grads() -> None:
    x0, _, y, z = _graph()
    (g,) = chainer.grad([z], [x0], retain_grad=True, set_grad=True)
    np.testing.assert_array_equal(g.array, [4.0, 4.0])
    np.testing.assert_array_equal(z.grad, [1.0, 1.0])
    np.testing.assert_array_equal(y.grad, [2.0, 2.0])
    assert x0.grad is None  # set_grad is ignored with retain_grad (documented)


def test_grad_grad_outputs_and_grad_inputs() -> None:
    x0, x1, y, _ = _graph()
    (g,) = chainer.grad([y], [x0], grad_outputs=[_v([1.0, 10.0])])
    np.testing.assert_array_equal(g.array, [2.0, 20.0])
    (g,) = chainer.grad([y], [x0], grad_outputs=[None])
    np.testing.assert_array_equal(g.array, [2.0, 2.0])
    g0, g1 = chainer.grad([y], [x0, x1], grad_inputs=[_v([100.0, 100.0]), None])
    np.testing.assert_array_equal(g0.array, [102.0, 102.0])
    np.testing.assert_array_equal(g1.array, [3.0, 3.0])
    other = _v([0.0, 0.0])
    (g,) = chainer.grad([y], [other], grad_inputs=[_v([5.0, 5.0])])
    np.testing.assert_array_equal(g.array, [5.0, 5.0])


def test_grad_inputs_seed_the_backward_pass() -> None:
    """Regression: ``grad_inputs`` used to be added to the results at the end ([4, 102] below);
    chainer 7.8.1 seeds them into the backward pass, so the entry of an intermediate input flows
    on upstream. Values from chainer 7.8.1: [204, 102]; with ``retain_grad`` x2.grad is 102 and
    y.grad 1; a leaf's entry is added (14 = 4 + 10)."""
    x1 = _v(1.0)
    x2 = x1 * 2
    y = x2 * 2
    g1, g2 = chainer.grad([y], [x1, x2], grad_inputs=[None, np.array(100.0, np.float32)])
    assert (float(g1.array), float(g2.array)) == (204.0, 102.0)
    g1, g2 = chainer.grad([y], [x1, x2], grad_inputs=[np.array(10.0, np.float32), None])
    assert (float(g1.array), float(g2.array)) == (14.0, 2.0)
    g1, g2 = chainer.grad([y], [x1, x2], grad_inputs=[None, _v(100.0)], retain_grad=True)
    assert (float(g1.array), float(g2.array)) == (204.0, 102.0)
    assert (float(x2.grad), float(y.grad)) == (102.0, 1.0)


def test_grad_inputs_of_unreached_inputs_are_returned_as_given() -> None:
    """chainer 7.8.1: ``a -> b = 3a`` lies on no path to ``y = 5c``; b's entry (7) is returned
    as given (the array itself) and does not flow on to a (None)."""
    a, c = _v(3.0), _v(2.0)
    b = a * 3
    y = c * 5
    seven = np.array(7.0, np.float32)
    ga, gb, gc = chainer.grad([y], [a, b, c], grad_inputs=[None, seven, None])
    assert ga is None
    assert gb is seven
    assert float(gc.array) == 5.0


def test_grad_loss_scale() -> None:
    x0, _, y, _ = _graph()
    (g,) = chainer.grad([y], [x0], loss_scale=4.0)
    np.testing.assert_array_equal(g.array, [8.0, 8.0])


def test_grad_enable_double_backprop() -> None:
    x = _v([1.0, 2.0])
    y = x * x * x
    (g,) = chainer.grad([y], [x], enable_double_backprop=True)
    (gg,) = chainer.grad([g], [x], enable_double_backprop=True)
    (ggg,) = chainer.grad([gg], [x])
    np.testing.assert_allclose(g.array, [3.0, 12.0])
    np.testing.assert_allclose(gg.array, [6.0, 12.0])
    np.testing.assert_allclose(ggg.array, [6.0, 6.0])


def test_grad_argument_errors() -> None:
    x0, _, y, _ = _graph()
    with pytest.raises(TypeError, match="outputs must be a tuple or a list"):
        chainer.grad(y, [x0])
    with pytest.raises(TypeError, match="inputs must be a tuple or a list"):
        chainer.grad([y], x0)
    with pytest.raises(TypeError, match="grad_outputs must be a tuple or a list or None"):
        chainer.grad([y], [x0], grad_outputs=_v([1.0, 1.0]))
    with pytest.raises(ValueError, match="grad_outputs must be of the same length as outputs"):
        chainer.grad([y], [x0], grad_outputs=[None, None])
    with pytest.raises(ValueError, match="grad_inputs must be of the same length as inputs"):
        chainer.grad([y], [x0], grad_inputs=[None, None])


def test_chainer_grad_of_an_input_that_requires_no_grad_is_computed() -> None:
    x = _c([1.0, 2.0])
    w = _c([1.0, 2.0], requires_grad=False)
    (gw,) = chainer.grad([w * w], [w])
    np.testing.assert_allclose(gw.array, [2.0, 4.0])  # 2 w
    gw, gx = chainer.grad([w * x], [w, x])
    np.testing.assert_allclose(gw.array, [1.0, 2.0])  # x
    np.testing.assert_allclose(gx.array, [1.0, 2.0])  # w


def test_chainer_grad_of_a_constant_goes_through_every_path() -> None:
    # paths through functions of constants only, and through functions that also take x
    x = _c([0.5, -1.5])
    w = _c([0.3, 1.2], requires_grad=False)
    a = np.array([0.5, -1.5])

    def f(wd: np.ndarray) -> float:
        return float(np.sum(np.exp(wd) * np.sin(2 * wd) * a + wd * a * a + wd))

    y = CF.sum(CF.exp(w) * CF.sin(2 * w) * x + (w * x) * x + w)
    (gw,) = chainer.grad([y], [w])
    np.testing.assert_allclose(gw.array, central_differences(f, w.array.copy()), rtol=1e-7)
    assert w.grad is None and x.grad is None
    assert w.requires_grad is False  # restored after the call
    y.backward()  # a plain backward still leaves the constant alone
    assert w.grad is None
    np.testing.assert_allclose(x.grad, np.exp(w.array) * np.sin(2 * w.array) + 2 * w.array * a)


def test_chainer_grad_of_a_constant_whose_intermediates_are_gone() -> None:
    w = _c([0.3, 1.2], requires_grad=False)
    y = CF.sum(CF.tanh(CF.exp(w) * 3.0))  # the intermediate Variables are collected
    (gw,) = chainer.grad([y], [w])
    t = np.tanh(3 * np.exp(w.array))
    np.testing.assert_allclose(gw.array, (1 - t * t) * 3 * np.exp(w.array), rtol=1e-12)


def test_chainer_grad_of_an_intermediate_constant_and_double_backprop() -> None:
    w = _c([1.0, 2.0], requires_grad=False)
    h = 2 * w
    assert h.requires_grad is False
    (gh_,) = chainer.grad([CF.sum(h * h * h)], [h])
    np.testing.assert_allclose(gh_.array, 3 * (2 * w.array) ** 2)
    (g,) = chainer.grad([w * w * w], [w], enable_double_backprop=True)
    np.testing.assert_allclose(g.array, 3 * w.array**2)
    (gg,) = chainer.grad([g], [w])
    np.testing.assert_allclose(gg.array, 6 * w.array)


def test_chainer_grad_of_a_constant_that_is_also_the_output_is_the_seed() -> None:
    w = _c([1.0, 2.0], requires_grad=False)
    (g,) = chainer.grad([w], [w])
    np.testing.assert_array_equal(g.array, [1.0, 1.0])
    h = 2 * w
    (g,) = chainer.grad([h], [h], grad_outputs=[np.array([3.0, 4.0])])
    np.testing.assert_array_equal(g.array, [3.0, 4.0])
    assert w.requires_grad is False and h.requires_grad is False


def test_chainer_grad_of_an_unreachable_constant_is_still_none() -> None:
    x = _c([1.0, 2.0])
    w = _c([1.0, 2.0], requires_grad=False)
    c = w * 2  # not used by y
    y = x * x
    assert chainer.grad([y], [w, c]) == [None, None]
    assert c.requires_grad is False


def test_chainer_grad_retain_grad_stores_the_gradient_of_an_intermediate_input() -> None:
    x = _c([1.0, 2.0])
    h = 2 * x
    z = 3 * h
    (gh_,) = chainer.grad([z], [h], retain_grad=True)
    np.testing.assert_allclose(gh_.array, [3.0, 3.0])
    np.testing.assert_allclose(z.grad, [1.0, 1.0])
    np.testing.assert_allclose(h.grad, [3.0, 3.0])
    assert x.grad is None  # a leaf input: retain_grad stores nothing on it


def test_chainer_grad_without_retain_grad_leaves_intermediate_inputs_alone() -> None:
    x = _c([1.0, 2.0])
    h = 2 * x
    chainer.grad([3 * h], [h])
    assert h.grad is None


def test_chainer_grad_of_a_constant_through_a_deep_chain_of_dead_intermediates() -> None:
    """Recomputing the values of collected constant nodes is iterative: no RecursionError."""
    w = _c([0.3, -0.2], requires_grad=False)
    h = w
    for _ in range(3000):  # deeper than Python's recursion limit
        h = CF.tanh(h)  # each intermediate Variable dies at the next iteration
    (gw,) = chainer.grad([CF.sum(h)], [w])
    v, d = w.array.copy(), np.ones(2)
    for _ in range(3000):
        v = np.tanh(v)
        d = d * (1 - v * v)
    np.testing.assert_allclose(gw.array, d, rtol=1e-10)


def test_grad_of_an_argument_inside_a_compiled_step_is_refused() -> None:
    # regression: chainer.grad with respect to a compiled step's array argument (requires_grad
    # False) changes the graph for the call; replays returned an empty gradient, silently
    import gradhub as gh

    w = chainer.Parameter(np.array([0.5, -1.0, 2.0], dtype=np.float32))

    def step(x: Any) -> Any:
        y = CF.sum(CF.tanh(x * w))
        return chainer.grad([y], [x, w])

    with pytest.raises(NotImplementedError, match="requires_grad=False"):
        gh.compile(step)(np.ones(3, np.float32))
    xv = chainer.Variable(np.ones(3, np.float32))  # (requires_grad: the same one at each call)
    fast = gh.compile(lambda: step(xv))
    for k in range(3):
        xv.array = np.full(3, k + 1.0, np.float32)
        got, want = fast(), step(xv)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.array, b.array, err_msg=f"call {k}")
