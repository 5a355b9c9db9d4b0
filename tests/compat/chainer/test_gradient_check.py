"""``chainer.gradient_check`` (``check_backward``, ``check_double_backward``,
``numerical_grad``): each case passes or fails as it does on chainer 7.8.1 (outcomes recorded
from chainer 7.8.1, 2026-11-25), with user FunctionNodes, an old-style Function, parameters and
non-differentiable points."""

from __future__ import annotations

import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import functions as F
from gradhub_compat.chainer import gradient_check


class Exp(chainer.FunctionNode):
    def forward(self, inputs):
        self.retain_outputs((0,))
        return (np.exp(inputs[0]),)

    def backward(self, target_input_indexes, grad_outputs):
        (y,) = self.get_retained_outputs()
        return (grad_outputs[0] * y,)


class Mul(chainer.FunctionNode):
    scale = 1.0

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        return (inputs[0] * inputs[1],)

    def backward(self, target_input_indexes, grad_outputs):
        a, b = self.get_retained_inputs()
        return grad_outputs[0] * b * self.scale, grad_outputs[0] * a


class WrongMul(Mul):
    scale = 1.01


class Square(chainer.Function):
    def forward(self, inputs):
        return (inputs[0] ** 2,)

    def backward(self, inputs, grad_outputs):
        return (2 * inputs[0] * grad_outputs[0],)


class Take(chainer.FunctionNode):
    """x[i] with integer indexes i (not differentiated)."""

    def forward(self, inputs):
        x, i = inputs
        self.retain_inputs((1,))
        self.n = x.shape[0]
        return (x[i],)

    def backward(self, target_input_indexes, grad_outputs):
        (i,) = self.get_retained_inputs()
        g = np.zeros(self.n, grad_outputs[0].dtype)
        np.add.at(g, i.array, grad_outputs[0].array)
        return chainer.Variable(g), None


_RNG = np.random.RandomState(0)
X, W, GY, GGX, GGW = (_RNG.uniform(-1, 1, (3, 2)) for _ in range(5))


def _exp(x):
    return Exp().apply((x,))[0]


def _mul(a, b):
    return Mul().apply((a, b))[0]


def test_user_functions_pass_to_the_second_order() -> None:
    gradient_check.check_backward(_exp, X, GY)
    gradient_check.check_double_backward(_exp, X, GY, GGX)
    gradient_check.check_backward(_mul, (X, W), GY)
    gradient_check.check_double_backward(_mul, (X, W), GY, (GGX, GGW))
    take = (np.array([1.0, 2.0, 3.0]), np.array([0, 2, 2]))  # the int input is not checked
    gradient_check.check_backward(lambda a, i: Take().apply((a, i))[0], take, np.ones(3))


def test_a_wrong_backward_fails() -> None:
    with pytest.raises(AssertionError, match=r"check_backward failed \(eps=0.001 atol=1e-05"):
        gradient_check.check_backward(lambda a, b: WrongMul().apply((a, b))[0], (X, W), GY)


def test_old_style_function_is_first_order_only() -> None:
    gradient_check.check_backward(lambda v: Square()(v), X, GY)
    # chainer 7.8.1: RuntimeError 'cannot twice-differentiate an old style Function "Square"'
    with pytest.raises(RuntimeError, match=r"Square.*first-order-only"):
        gradient_check.check_double_backward(lambda v: Square()(v), X, GY, GGX)


def test_nondifferentiable_points() -> None:
    with pytest.raises(gradient_check.NondifferentiableError, match=r"non-differentiable point"):
        gradient_check.check_backward(
            F.relu, np.array([0.0, 1.0]), np.ones(2), detect_nondifferentiable=True
        )
    gradient_check.check_backward(
        F.relu, np.array([-0.5, 1.0]), np.ones(2), detect_nondifferentiable=True
    )


def test_losses_params_and_dtype() -> None:
    gradient_check.check_backward(lambda a: F.sum(a * a), X, None)
    with pytest.raises(ValueError, match=r"y_grad argument cannot be omitted"):
        gradient_check.check_backward(lambda a: a * a, X, None)
    gradient_check.check_backward(
        F.tanh, X.astype(np.float32), GY.astype(np.float32), dtype=np.float64, atol=1e-4, rtol=1e-3
    )
    p = chainer.Variable(W.copy())
    gradient_check.check_backward(lambda a: a * p, X, GY, params=(p,))
    gradient_check.check_double_backward(
        lambda a: F.tanh(a * p), X, GY, GGX, params=(p,), params_grad_grad=(GGW,)
    )
    assert p.array.tolist() == W.tolist()  # restored after the perturbations
    with pytest.raises(ValueError, match=r"Length of no_grads param and xs should be same"):
        gradient_check.check_backward(_exp, X, GY, no_grads=[False, True])
    with pytest.raises(ValueError, match=r"`dtype` is allowed only float type"):
        gradient_check.check_backward(_exp, X, GY, dtype=np.int32)


def test_numerical_grad() -> None:
    x = X.copy()
    (g,) = gradient_check.numerical_grad(lambda: (x**2,), (x,), (GY,))
    np.testing.assert_allclose(g, 2 * X * GY, rtol=1e-9)
    (g,) = gradient_check.numerical_grad(
        lambda: (x**3,), (x,), (GY,), eps=1e-2, detect_nondifferentiable=True
    )
    np.testing.assert_allclose(g, 3 * X**2 * GY, rtol=1e-9)  # the 4-point formula is exact here
    assert x.tolist() == X.tolist()
    with pytest.raises(ValueError, match=r"eps must be positive"):
        gradient_check.numerical_grad(lambda: (x,), (x,), (GY,), eps=0)
