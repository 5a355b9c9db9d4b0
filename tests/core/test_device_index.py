"""Work on device index N > 0 runs with that device current, as CuPy needs (regression tests).

``TwoIndexDevice`` is a numpy-backed device with two indices that follows CuPy's rule: an
operation on an array of another index than the current one raises, and new arrays are made on
the current index. Before the fix, gradient sums, forward() re-execution, loss scaling, ``.d``
and ``.g`` assignment, the optimizers and nnabla's Variable constructor worked on index 0
(the nnabla layer's test is in tests/compat/nnabla/test_device_index.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import DeviceError, plugins
from two_index_device import TwoIndexPlugin as _Plugin
from two_index_device import on_index_1 as _on_one


@pytest.fixture
def one() -> Iterator[Any]:
    """Loaded with the two-index device; yields its context for index 1."""
    plugins.reset()
    plugins.load_plugins(extra=[("two-index", _Plugin)])
    yield gh.get_extension_context("two:1")
    plugins.reset()


def test_first_order_backward_sums_gradients_on_index_1(one: Any) -> None:
    with gh.context_scope(one):
        x = gh.Variable([1.0, 2.0, 3.0])
    (x * x + x * x).sum().backward()
    (x * x).sum().backward()  # accumulates into .g
    _on_one(x.g)
    np.testing.assert_array_equal(np.asarray(x.g), [6.0, 12.0, 18.0])
    x.cleargrad()
    (x * x).sum().backward(loss_scale=4.0)
    np.testing.assert_array_equal(np.asarray(x.g), [8.0, 16.0, 24.0])


def test_forward_reexecution_and_assignment_on_index_1(one: Any) -> None:
    with gh.context_scope(one):
        x = gh.Variable([1.0, 2.0])
    y = (x * x).sum()
    x.d = [3.0, 4.0]
    y.forward()
    _on_one(y)
    assert float(np.asarray(y.d)) == 25.0
    x.d = 0.0
    _on_one(x)
    x.g = 1.0
    _on_one(x.g)


def test_optimizers_update_on_index_1(one: Any) -> None:
    from gradhub.optim import SGD, Adam

    for opt_type in (SGD, Adam):
        with gh.context_scope(one):
            w = gh.Variable([1.0, -1.0])
        opt = opt_type([w], lr=0.1)
        (w * w).sum().backward()
        opt.update()
        _on_one(w)


def test_a_seed_variable_on_another_device_is_a_device_error(one: Any) -> None:
    with gh.context_scope(one):
        t = gh.Variable([1.0, 1.0], need_grad=False)
    c = gh.Variable([1.0, 2.0])
    with pytest.raises(DeviceError, match=r"grad_outputs\[0\] is on two:1"):
        gh.grad([c * c], [c], grad_outputs=[t])
    with pytest.raises(DeviceError, match="backward: grad is on two:1"):
        (c * c).backward(grad=t)


def test_assigning_another_devices_array_to_d_copies_it_here(one: Any) -> None:
    with gh.context_scope(one):
        x = gh.Variable([1.0, 2.0])
    y = gh.Variable([5.0, 6.0]).to("two:0")
    x.d = y.d  # a two:0 array into a two:1 Variable
    _on_one(x)
    c = gh.Variable([0.0, 0.0])
    c.d = x.d  # a device array (a numpy subclass) into a CPU Variable
    assert type(c.d) is np.ndarray and c.device.name == "cpu"
    np.testing.assert_array_equal(c.d, [5.0, 6.0])
