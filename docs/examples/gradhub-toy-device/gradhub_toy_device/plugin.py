"""The "toy" device: numpy arrays tagged as living on another device.

A device plugin provides three things:

* the array type of the device (here :class:`ToyArray`) and its array module ``xp`` (here
  :data:`toy_xp`, numpy whose array results are toy arrays), so that the generic forward kernels
  of every function, written against ``xp``, run on it unchanged;
* a :class:`gradhub.Device` that moves arrays onto the device and back to numpy, and a
  :class:`gradhub.DeviceType` that gradhub asks for devices, for the device of an array and for
  the device's availability (registered in :func:`gradhub_add_devices`);
* optionally, faster forward kernels of existing functions for this device kind
  (:func:`gradhub_add_kernels`).
"""

from __future__ import annotations

import functools
import os
import types
from collections import Counter
from typing import Any

import numpy as np
from gradhub import Device, DeviceError, DeviceType, hookimpl

KIND = "toy"

#: How often each toy kernel ran (so that tests and the tutorial can see the kernel is used).
KERNEL_CALLS: Counter[str] = Counter()


class ToyArray(np.ndarray):
    """An array on the toy device (numpy computes with it; gradhub tells it apart by its type)."""


def _tag(result: Any) -> Any:
    """Tag plain numpy arrays (also inside tuples) as toy arrays; leave anything else alone."""
    if type(result) is np.ndarray:
        return result.view(ToyArray)
    if isinstance(result, tuple):
        return tuple(_tag(r) for r in result)
    return result


def _on_device(fn: Any) -> Any:
    """``fn`` with its array results tagged as toy arrays."""

    @functools.wraps(fn)
    def on_device(*args: Any, **kwargs: Any) -> Any:
        return _tag(fn(*args, **kwargs))

    return on_device


class ToyUfunc:
    """A numpy ufunc of the toy ``xp``: called, or through its methods (``xp.add.at``,
    ``xp.add.reduce``...), it computes as numpy's and returns toy arrays.

    Kernels use ufunc methods as they use functions (``xp.add.at(out, idx, values)`` scatter-adds
    with repeated indices, on numpy and on CuPy alike), so the toy ``xp`` must keep them.
    """

    def __init__(self, ufunc: np.ufunc) -> None:
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__
        self.__doc__ = ufunc.__doc__
        self._call = _on_device(ufunc)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        obj = getattr(self._ufunc, name)  # nin, nout, identity... or a method: at, reduce...
        return _on_device(obj) if callable(obj) else obj  # ``at`` works in place: None

    def __repr__(self) -> str:
        return f"<toy ufunc {self.__name__!r}>"


class ToyArrayModule(types.ModuleType):
    """The ``xp`` of the toy device: numpy, with every array result returned as a ToyArray.

    A kernel calling ``xp.zeros(...)`` or ``xp.tanh(x)`` thus creates data on the device that
    ``xp`` belongs to, as CuPy does on a GPU. Ufuncs stay ufuncs (:class:`ToyUfunc`): their
    methods, such as ``xp.add.at``, are there as in numpy and CuPy.
    """

    def __getattr__(self, name: str) -> Any:
        obj = getattr(np, name)
        if isinstance(obj, np.ufunc):
            wrapped: Any = ToyUfunc(obj)
        elif isinstance(obj, (type, types.ModuleType)) or not callable(obj):
            return obj  # dtypes, constants and submodules are numpy's own
        else:
            wrapped = _on_device(obj)
        setattr(self, name, wrapped)  # cache: __getattr__ runs once per name
        return wrapped


toy_xp = ToyArrayModule("toy_xp")


class ToyDevice(Device):
    """The one toy device, ``toy`` (a :class:`gradhub.Device` with the toy array module)."""

    def __init__(self) -> None:
        super().__init__(KIND, toy_xp, 0)

    @property
    def name(self) -> str:
        return KIND

    def asarray(self, data: Any, dtype: Any = None) -> ToyArray:
        """``data`` (a scalar, a list, a numpy or toy array) as a toy array."""
        return np.asarray(data, dtype=dtype).view(ToyArray)

    def to_numpy(self, array: Any) -> np.ndarray:
        """A plain numpy view of a toy array (a real device would copy to the host here)."""
        return np.asarray(array)


class ToyDeviceType(DeviceType):
    """The toy device kind: its array type, its single device and its availability."""

    kind = KIND
    array_types = (ToyArray,)

    def __init__(self) -> None:
        self._device = ToyDevice()

    def availability(self) -> tuple[bool, str]:
        """Usable unless ``GRADHUB_TOY_DEVICE_OFF`` is set (a real plugin checks its driver)."""
        if os.environ.get("GRADHUB_TOY_DEVICE_OFF", "") not in ("", "0"):
            return False, "switched off by GRADHUB_TOY_DEVICE_OFF"
        return True, ""

    def get(self, index: int = 0) -> Device:
        """The device ``toy:index``; there is only index 0."""
        if index != 0:
            raise DeviceError(f"device 'toy:{index}': the toy device has only index 0")
        return self._device

    def device_of(self, array: Any) -> Device:
        """Every toy array lives on the single toy device."""
        return self._device


def toy_mul2(xp: Any, a: Any, b: Any) -> Any:
    """The toy device's own forward kernel of ``Mul2`` (same result, counted)."""
    KERNEL_CALLS["Mul2"] += 1
    return xp.multiply(a, b)


@hookimpl
def gradhub_add_devices(register: Any) -> None:
    """Register the toy device type, also reachable as ``"toy-alias"``."""
    register.device(ToyDeviceType(), aliases=("toy-alias",))


@hookimpl
def gradhub_add_kernels(register: Any) -> None:
    """Add the toy kernel of ``Mul2`` (a core function, so it is always there)."""
    if register.has_function("Mul2"):
        register.kernel("Mul2", KIND, toy_mul2)
