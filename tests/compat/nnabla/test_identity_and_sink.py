"""``F.identity`` and ``F.sink`` of the nnabla layer (nnabla's Identity and Sink), with the
values nnabla 1.39 gives (recorded 2026-11-25)."""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest


def _x() -> nn.Variable:
    return nn.Variable.from_numpy_array(np.array([1.0, 2.0, 3.0]), need_grad=True)


def test_identity_copies_and_passes_the_gradient() -> None:
    x = _x()
    y = F.identity(x)
    assert y.parent.name == "Identity" and y.d is not x.d
    np.testing.assert_array_equal(y.d, [1.0, 2.0, 3.0])
    y.backward()
    np.testing.assert_array_equal(x.g, [1.0, 1.0, 1.0])
    x.d = [4.0, 5.0, 6.0]
    y.forward()
    np.testing.assert_array_equal(y.d, [4.0, 5.0, 6.0])
    (gx,) = nn.grad([F.sum(F.identity(x) ** 2)], [x])  # differentiable again
    np.testing.assert_allclose(nn.grad([F.sum(gx * gx)], [x])[0].d, 8 * x.d)


def test_sink_backward_fills_one_into_each_input() -> None:
    # nnabla 1.39: a = 2x, b = sum(x^2); sink(a, b).backward() gives x.g = 2 + 2x = [4, 6, 8];
    # the output is a scalar named Sink
    x = _x()
    a, b = x * 2.0, F.sum(x * x)
    s = F.sink(a, b)
    assert s.shape == () and s.parent.name == "Sink" and s.parent.info.type_name == "Sink"
    s.forward()
    s.backward()
    np.testing.assert_array_equal(x.g, [4.0, 6.0, 8.0])
    x.g = 0
    s.backward(grad=5.0)  # the incoming gradient is ignored (nnabla fills 1)
    np.testing.assert_array_equal(x.g, [4.0, 6.0, 8.0])


def test_sink_without_one_input_grad_uses_the_inputs_gradients() -> None:
    # nnabla 1.39: with a.g = 3 and b.g = 5 set beforehand, sink(a, b, one_input_grad=False)
    # backpropagates them: x.g = 2 * 3 + 2x * 5 = [16, 26, 36]
    x = _x()
    a, b = x * 2.0, F.sum(x * x)
    a.g = 3
    b.g = 5
    s = F.sink(a, b, one_input_grad=False)
    s.forward()
    s.backward()
    np.testing.assert_array_equal(x.g, [16.0, 26.0, 36.0])


def test_sink_needs_an_input() -> None:
    with pytest.raises(TypeError, match="sink: give at least one Variable"):
        F.sink()
    with pytest.raises(TypeError, match=r"sink \(input 0\): expected a Variable"):
        F.sink(3.0)
