"""A fake second device for tests that need one without a GPU: its arrays are a numpy subclass
(:class:`FakeArray`) and its array module returns them; register :class:`FakeType` from a test
plugin's ``gradhub_add_devices``."""

from __future__ import annotations

from typing import Any

import numpy as np
from gradhub.device import Device, DeviceType
from gradhub.errors import DeviceError


class FakeArray(np.ndarray):
    """The arrays of the fake device."""


def _to_fake(r: Any) -> Any:
    return r.view(FakeArray) if type(r) is np.ndarray else r


class FakeXP:
    """numpy, with every array result moved onto the fake device."""

    def __getattr__(self, name: str) -> Any:
        obj = getattr(np, name)
        if callable(obj) and not isinstance(obj, type):

            def wrapped(*args: Any, **kwargs: Any) -> Any:
                return _to_fake(obj(*args, **kwargs))

            return wrapped
        return obj


class FakeDevice(Device):
    """The one device of the kind ``fake``."""

    def __init__(self) -> None:
        super().__init__("fake", FakeXP(), 0)  # type: ignore[arg-type]

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        if isinstance(data, np.ndarray):
            data = data.view(np.ndarray)
        return np.asarray(data, dtype=dtype).view(FakeArray)

    def to_numpy(self, array: Any) -> np.ndarray:
        return np.array(array.view(np.ndarray))


class FakeType(DeviceType):
    """The device kind ``fake`` (index 0 only)."""

    kind = "fake"
    array_types = (FakeArray,)

    def __init__(self) -> None:
        self.device = FakeDevice()

    def get(self, index: int = 0) -> Device:
        if index != 0:
            raise DeviceError(f"device 'fake:{index}': only index 0 exists")
        return self.device
