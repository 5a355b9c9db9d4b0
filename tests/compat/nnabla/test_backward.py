"""``Variable.backward`` of the nnabla layer (``gradhub_compat.nnabla``): the default grad of 1,
accumulation into the leaves, the forms of ``grad``, intermediate gradients and
``clear_buffer`` (freed arrays until ``forward()``, and the error naming nnabla's remedy), a leaf
as the output, ``need_grad=False`` stopping the pass, and refused hooks. Expected behaviour was
checked against nnabla 1.39.
"""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as NF
import numpy as np
import pytest
from compat.nnabla.helpers import _var, _var64
from gradhub.errors import BackwardRuleError


def test_nnabla_backward_after_clear_buffer_asks_for_forward() -> None:
    x = nn.Variable.from_numpy_array(np.array([1.0, 2.0]), need_grad=True)
    y = NF.sum(NF.sin(x) * x)
    y.backward(clear_buffer=True)
    with pytest.raises(BackwardRuleError, match=r"backward\(clear_buffer=True\).*forward\(\)") as e:
        y.backward()
    assert "retain_graph" not in str(e.value)
    assert "nnabla Variable.backward" in str(e.value)
    with pytest.raises(BackwardRuleError, match=r"nnabla\.grad: .*forward\(\)") as e:
        nn.grad([y], [x])
    assert "retain_graph" not in str(e.value)
    y.forward()
    x.g = 0
    y.backward()
    xd = np.array([1.0, 2.0])
    np.testing.assert_allclose(x.g, np.sin(xd) + xd * np.cos(xd), rtol=1e-6)


def test_backward_default_grad_is_one_and_accumulates_into_leaves() -> None:
    x = _var([1.0, 2.0])
    y = x * x * x
    y.backward()
    np.testing.assert_allclose(x.g, [3.0, 12.0])
    y.backward()
    np.testing.assert_allclose(x.g, [6.0, 24.0])
    x.grad.zero()
    y.backward()
    np.testing.assert_allclose(x.g, [3.0, 12.0])


@pytest.mark.parametrize("kind", ["scalar", "numpy", "NdArray", "Variable"])
def test_backward_grad_argument_forms(kind: str) -> None:
    x = _var([1.0, 2.0])
    y = x * x
    grad: object = {
        "scalar": 2.0,
        "numpy": np.array([2.0, 2.0]),
        "NdArray": nn.Variable.from_numpy_array(np.array([2.0, 2.0])).data,
        "Variable": _var([2.0, 2.0], need_grad=False),
    }[kind]
    y.backward(grad)
    np.testing.assert_allclose(x.g, [4.0, 8.0])
    np.testing.assert_array_equal(y.g, [0.0, 0.0])  # the incoming gradient is not stored


def test_backward_grad_none_uses_the_current_g() -> None:
    x = _var([1.0, 2.0])
    y = x * x
    y.g = [1.0, 0.0]
    y.backward(grad=None)
    np.testing.assert_allclose(x.g, [2.0, 0.0])
    np.testing.assert_array_equal(y.g, [1.0, 0.0])  # unchanged
    with pytest.raises(ValueError, match=r"nnabla Variable\.backward: grad has shape"):
        y.backward(np.ones(3))


def test_backward_keeps_intermediate_grads_unless_clear_buffer() -> None:
    x = _var([1.0, 2.0])
    h = x * x
    y = (h * 3.0).sum()
    y.backward()
    np.testing.assert_allclose(h.g, [3.0, 3.0])
    y.backward()
    np.testing.assert_allclose(h.g, [3.0, 3.0])  # overwritten, not accumulated
    np.testing.assert_allclose(x.g, [12.0, 24.0])  # leaves accumulate

    x2 = _var([1.0, 2.0])
    h2 = x2 * x2
    y2 = (h2 * 3.0).sum()
    y2.backward(clear_buffer=True)
    np.testing.assert_array_equal(h2.g, [0.0, 0.0])
    np.testing.assert_allclose(x2.g, [6.0, 12.0])


def test_backward_on_a_leaf_raises_as_nnabla() -> None:
    x = _var([1.0, 2.0])
    with pytest.raises(RuntimeError, match="has no parent"):  # nnabla 1.39 raises likewise
        x.backward()
    np.testing.assert_array_equal(x.g, [0.0, 0.0])


def test_backward_stops_at_need_grad_false() -> None:
    x = _var([1.0, 2.0])
    c = _var([3.0, 4.0], need_grad=False)
    (x * c).backward()
    np.testing.assert_allclose(x.g, [3.0, 4.0])
    np.testing.assert_array_equal(c.g, [0.0, 0.0])


def test_bad_callbacks_are_refused_clearly() -> None:
    x = _var([1.0])
    y = x * 2.0
    # callbacks go to the engine, which checks them
    with pytest.raises(TypeError, match=r"backward: communicator_callbacks\[0\] must have"):
        y.backward(communicator_callbacks=[object()])


def test_backward_clear_buffer_frees_saved_arrays_until_forward() -> None:
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.functions as NF
    from gradhub.errors import BackwardRuleError

    x = nn.Variable.from_numpy_array(np.array([1.0, 2.0, 3.0]))
    x.need_grad = True
    y = NF.sum(x * x)
    y.backward(clear_buffer=True)
    np.testing.assert_allclose(x.g, 2 * x.d)
    with pytest.raises(BackwardRuleError, match=r"clear_buffer=True\).*forward\(\)"):
        y.backward()
    y.forward()  # recomputes the freed buffers, as in nnabla
    x.g = 0
    y.backward()
    np.testing.assert_allclose(x.g, 2 * x.d)


def test_backward_of_a_leaf_raises() -> None:
    x = _var64([1.0, 2.0])
    with pytest.raises(
        RuntimeError, match=r"nnabla Variable\.backward: the variable has no parent"
    ):
        x.backward()


def test_persistent_intermediate_keeps_its_grad_through_clear_buffer() -> None:
    """Regression: a persistent intermediate's ``.g`` was zeros after
    ``backward(clear_buffer=True)``; nnabla 1.39 keeps persistent Variables' data and gradients
    through the clear options. nnabla's values for ``h = 2x``, ``y = sum(h * h)``, x = [1, 2, 3]:
    h.g [4, 8, 12], h.d [2, 4, 6], x.g [8, 16, 24]; a second pass after ``forward()``
    overwrites h.g (not accumulated) and, without clear_buffer, x.g accumulates [16, 32, 48]."""
    x = nn.Variable.from_numpy_array(np.array([1.0, 2.0, 3.0]), need_grad=True)
    h = x * 2
    h.persistent = True
    other = h * 1  # an intermediate that is not persistent: .g not stored with clear_buffer
    y = NF.sum(other * h)
    y.forward()
    y.backward(clear_buffer=True)
    np.testing.assert_array_equal(h.g, [4.0, 8.0, 12.0])
    np.testing.assert_array_equal(h.d, [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(x.g, [8.0, 16.0, 24.0])
    np.testing.assert_array_equal(other.g, [0.0, 0.0, 0.0])
    y.forward()
    y.backward(clear_buffer=False)
    np.testing.assert_array_equal(h.g, [4.0, 8.0, 12.0])
    np.testing.assert_array_equal(x.g, [16.0, 32.0, 48.0])
    h.persistent = False
    x.g = 0
    h.g = 0
    y.forward()
    y.backward(clear_buffer=True)
    np.testing.assert_array_equal(h.g, [0.0, 0.0, 0.0])  # no longer persistent: not stored
    np.testing.assert_array_equal(x.g, [8.0, 16.0, 24.0])
