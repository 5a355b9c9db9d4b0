"""User-defined functions with ``nnabla.function.PythonFunction`` in the nnabla layer: nnabla
1.39's documented Mul2 example and a two-output function, with nnabla's values (recorded
2026-11-25), re-execution with ``forward()``, and the errors."""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest
from gradhub.errors import BackwardRuleError
from gradhub_compat.nnabla.function import PythonFunction


class Mul2(PythonFunction):
    def __init__(self, ctx: Any = None) -> None:
        super().__init__(ctx)

    @property
    def name(self) -> str:
        return self.__class__.__name__

    def min_outputs(self) -> int:
        return 1

    def setup_impl(self, inputs: Any, outputs: Any) -> None:
        outputs[0].reset_shape(inputs[0].shape, True)

    def forward_impl(self, inputs: Any, outputs: Any) -> None:
        outputs[0].data.copy_from(F.mul2(inputs[0].data, inputs[1].data))

    def backward_impl(self, inputs: Any, outputs: Any, propagate_down: Any, accum: Any) -> None:
        x0, x1 = inputs[0].data, inputs[1].data
        dx0, dx1, dy = inputs[0].grad, inputs[1].grad, outputs[0].grad
        if propagate_down[0]:
            if accum[0]:
                dx0 += F.mul2(dy, x1)
            else:
                dx0.copy_from(F.mul2(dy, x1))
        if propagate_down[1]:
            if accum[1]:
                dx1 += F.mul2(dy, x0)
            else:
                dx1.copy_from(F.mul2(dy, x0))

    def grad_depends_output_data(self, i: int, o: int) -> bool:
        return False

    def grad_depends_input_data(self, i: int, j: int) -> bool:
        return True


class SquareAndTriple(PythonFunction):
    def min_outputs(self) -> int:
        return 2

    def setup_impl(self, inputs: Any, outputs: Any) -> None:
        for o in outputs:
            o.reset_shape(inputs[0].shape, True)

    def forward_impl(self, inputs: Any, outputs: Any) -> None:
        x = inputs[0].data
        outputs[0].data.copy_from(x * x)
        outputs[1].data.copy_from(x * 3)

    def backward_impl(self, inputs: Any, outputs: Any, propagate_down: Any, accum: Any) -> None:
        g = outputs[0].grad * inputs[0].data * 2 + outputs[1].grad * 3
        if accum[0]:
            inputs[0].grad += g
        else:
            inputs[0].grad.copy_from(g)

    def grad_depends_output_data(self, i: int, o: int) -> bool:
        return False

    def grad_depends_input_data(self, i: int, j: int) -> bool:
        return True


def _x() -> nn.Variable:
    return nn.Variable.from_numpy_array(np.array([1.0, 2.0, 3.0]), need_grad=True)


def test_mul2_as_nnabla() -> None:
    x = _x()
    w = nn.Variable.from_numpy_array(np.array([4.0, 5.0, 6.0]), need_grad=True)
    f = Mul2()
    y = f(x, w)
    assert isinstance(y, nn.Variable) and y.shape == (3,) and f.name == "Mul2"
    z = F.sum(y * y)
    z.forward()
    np.testing.assert_array_equal(y.d, [4.0, 10.0, 18.0])
    assert z.d == 440.0
    z.backward()  # nnabla 1.39: x.g = [32, 100, 216], w.g = [8, 40, 108]
    np.testing.assert_array_equal(x.g, [32.0, 100.0, 216.0])
    np.testing.assert_array_equal(w.g, [8.0, 40.0, 108.0])
    x.d = [2.0, 2.0, 2.0]
    z.forward()  # re-executes forward_impl
    assert z.d == 308.0
    x.g = 0
    s = F.sum(Mul2()(x, x))  # one Variable twice: the two gradients add (nnabla: [2, 4, 6])
    s.backward()
    np.testing.assert_array_equal(x.g, 2 * x.d)


def test_several_outputs_as_nnabla() -> None:
    x = _x()
    a, b = SquareAndTriple()(x)
    s = F.sum(a) + F.sum(b * 2.0)
    s.forward()
    s.backward()  # nnabla 1.39: a = [1, 4, 9], b = [3, 6, 9], x.g = [8, 10, 12]
    np.testing.assert_array_equal(a.d, [1.0, 4.0, 9.0])
    np.testing.assert_array_equal(b.d, [3.0, 6.0, 9.0])
    np.testing.assert_array_equal(x.g, [8.0, 10.0, 12.0])


def test_first_order_grad_and_second_order_refused() -> None:
    x = _x()
    w = nn.Variable.from_numpy_array(np.array([4.0, 5.0, 6.0]), need_grad=True)
    z = F.sum(Mul2()(x, w) ** 2)
    (gx,) = nn.grad([z], [x])  # 2 x w^2 (nnabla 1.39 gives zeros here: no grad for Callback)
    np.testing.assert_array_equal(gx.d, 2 * x.d * w.d**2)
    with pytest.raises(BackwardRuleError, match=r"Mul2.*first-order-only"):
        nn.grad([F.sum(gx)], [x])


def test_missing_methods_raise_as_nnabla() -> None:
    class NoDepends(PythonFunction):
        def setup_impl(self, inputs: Any, outputs: Any) -> None:
            outputs[0].reset_shape(inputs[0].shape, True)

    with pytest.raises(NotImplementedError, match="Implement `grad_depends_output_data`"):
        NoDepends()(_x())
    with pytest.raises(TypeError, match="input 0 must be a Variable"):
        Mul2()(np.ones(3), _x())
