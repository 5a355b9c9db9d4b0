"""A numpy-backed device with two indices that follows CuPy's rule (not collected: the name does
not start with ``test_``): an operation on an array of another index than the current one raises,
and new arrays are made on the current index."""

from __future__ import annotations

import types
from typing import Any

import gradhub as gh
import numpy as np
from gradhub import DeviceError, hookimpl
from gradhub.device import Device, DeviceType

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
            kw["out"] = tuple(
                np.asarray(o) if isinstance(o, TwoIndexArray) else o for o in kw["out"]
            )
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


class TwoIndexPlugin:
    @staticmethod
    @hookimpl
    def gradhub_add_devices(register: Any) -> None:
        register.device(TwoIndexType())


def on_index_1(v: Any) -> None:
    arr = v.d if isinstance(v, gh.Variable) else v
    assert isinstance(arr, TwoIndexArray) and arr.dev_index == 1
