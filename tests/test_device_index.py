"""Work on device index N > 0 runs with that device current, as CuPy needs (regression tests).

``TwoIndexDevice`` is a numpy-backed device with two indices that follows CuPy's rule: an
operation on an array of another index than the current one raises, and new arrays are made on
the current index. Before the fix, gradient sums, forward() re-execution, loss scaling, ``.d``
and ``.g`` assignment, the optimizers and nnabla's Variable constructor worked on index 0.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import Device, DeviceError, DeviceType, hookimpl, plugins

CURRENT = [0]


class TwoIndexArray(np.ndarray):
    dev_index: int

    def __array_finalize__(self, obj: Any) -> None:
        self.dev_index = getattr(obj, "dev_index", CURRENT[0])

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kw: Any) -> Any:
        for a in inputs:
            if isinstance(a, TwoIndexArray) and a.dev_index != CURRENT[0]:
                raise ValueError(f"array on index {a.dev_index}, current {CURRENT[0]}")
        ins = [np.asarray(a) if isinstance(a, TwoIndexArray) else a for a in inputs]
        if "out" in kw:
            kw["out"] = tuple(np.asarray(o) if isinstance(o, TwoIndexArray) else o
                              for o in kw["out"])
        return _tag(getattr(ufunc, method)(*ins, **kw))

    def copy(self, *a: Any, **k: Any) -> Any:  # CuPy copies onto the current device
        return _tag(np.asarray(self).copy(*a, **k))

    def astype(self, dtype: Any, *a: Any, **k: Any) -> Any:
        if self.dev_index != CURRENT[0]:
            raise ValueError(f"array on index {self.dev_index}, current {CURRENT[0]}")
        return _tag(np.asarray(self).astype(dtype, *a, **k))


def _tag(r: Any, index: int | None = None) -> Any:
    if type(r) is np.ndarray:
        v = r.view(TwoIndexArray)
        v.dev_index = CURRENT[0] if index is None else index
        return v
    if isinstance(r, tuple):
        return tuple(_tag(x, index) for x in r)
    return r


class _Module(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        obj = getattr(np, name)
        if isinstance(obj, (type, types.ModuleType)) or not callable(obj):
            return obj

        def f(*a: Any, **k: Any) -> Any:
            r = obj(*a, **k)
            return r if isinstance(r, TwoIndexArray) else _tag(r)

        setattr(self, name, f)
        return f


XP = _Module("two_index_xp")


class _Current:
    def __init__(self, index: int) -> None:
        self.index = index

    def __enter__(self) -> None:
        self.prev = CURRENT[0]
        CURRENT[0] = self.index

    def __exit__(self, *exc: object) -> None:
        CURRENT[0] = self.prev


class TwoIndexDevice(Device):
    def __init__(self, index: int) -> None:
        super().__init__("two", XP, index)

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        if isinstance(data, TwoIndexArray) and data.dev_index == self.index:
            return data if dtype is None or data.dtype == dtype else data.astype(dtype)
        return _tag(np.array(np.asarray(data), dtype=dtype), self.index)

    def to_numpy(self, a: Any) -> Any:
        return np.array(np.asarray(a))

    def activate(self) -> Any:
        return _Current(self.index)


class TwoIndexType(DeviceType):
    kind = "two"
    array_types = (TwoIndexArray,)

    def __init__(self) -> None:
        self.devices = {0: TwoIndexDevice(0), 1: TwoIndexDevice(1)}

    def get(self, index: int = 0) -> Device:
        if index not in self.devices:
            raise DeviceError(f"two:{index} does not exist")
        return self.devices[index]

    def device_of(self, a: Any) -> Device:
        return self.devices[a.dev_index]


class _Plugin:
    @staticmethod
    @hookimpl
    def gradhub_add_devices(register: Any) -> None:
        register.device(TwoIndexType())


@pytest.fixture
def one() -> Iterator[Any]:
    """Loaded with the two-index device; yields its context for index 1."""
    plugins.reset()
    plugins.load_plugins(extra=[("two-index", _Plugin)])
    yield gh.get_extension_context("two:1")
    plugins.reset()


def _on_one(v: Any) -> None:
    arr = v.d if isinstance(v, gh.Variable) else v
    assert isinstance(arr, TwoIndexArray) and arr.dev_index == 1


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


def test_nnabla_variables_are_created_on_the_context_index(one: Any) -> None:
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.parametric_functions as PF

    gh.clear_parameters()
    with nn.context_scope(one):
        x = nn.Variable((2, 3))
        x.d = np.ones((2, 3))
        _on_one(x)
        y = PF.affine(x, 4, name="fc")
    _on_one(y)
    gh.clear_parameters()


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
