"""Regression tests for the third review of the chainer and nnabla compatibility layers.

chainer: ``chainer.grad`` differentiates inputs with ``requires_grad=False`` and, with
``retain_grad=True``, stores the gradient of an intermediate input; ``Variable.backward`` leaves
the output's ``.grad`` None unless ``retain_grad``. nnabla: batch normalization updates the
running statistics only when the graph is executed (``forward()``, or building it with
auto_forward on), and a second backward after ``clear_buffer=True`` names nnabla's remedy.
"""

from __future__ import annotations

from collections.abc import Callable

import gradhub.compat.chainer.functions as CF
import numpy as np
from gradhub.compat import chainer


def _c(values: object, requires_grad: bool = True) -> chainer.Variable:
    return chainer.Variable(np.array(values, dtype=np.float64), requires_grad=requires_grad)


def _fd(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central finite differences of a scalar function of a float64 array."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


# -- chainer F1: inputs with requires_grad=False are differentiated ------------------------------


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
    np.testing.assert_allclose(gw.array, _fd(f, w.array.copy()), rtol=1e-7)
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


def test_chainer_grad_of_an_unreachable_constant_is_still_none() -> None:
    x = _c([1.0, 2.0])
    w = _c([1.0, 2.0], requires_grad=False)
    c = w * 2  # not used by y
    y = x * x
    assert chainer.grad([y], [w, c]) == [None, None]
    assert c.requires_grad is False


# -- chainer F2: retain_grad stores the gradient of an intermediate input -------------------------


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


# -- chainer F3: backward leaves the output's .grad None without retain_grad ----------------------


def test_chainer_backward_clears_the_output_grad_without_retain_grad() -> None:
    x = _c(1.0)
    y = 2 * x
    y.backward()
    assert y.grad is None
    np.testing.assert_allclose(x.grad, 2.0)
    y.grad = np.array(5.0)
    y.backward()  # the user's initial error is used, then dropped
    assert y.grad is None
    np.testing.assert_allclose(x.grad, 12.0)
    y.backward(retain_grad=True)
    np.testing.assert_allclose(y.grad, 1.0)
    np.testing.assert_allclose(x.grad, 14.0)
    z = CF.sum(2 * x)
    z.backward(loss_scale=3.0)
    assert z.grad is None
    np.testing.assert_allclose(x.grad, 20.0)  # 14 + 3 * 2
