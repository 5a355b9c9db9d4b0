"""A stand-in for a device that records its work into graphs (CUDA graphs), without a GPU.

Its arrays are a numpy subclass (:class:`RecArray`); every one created while a run is recorded
or replayed is noted, in order. :meth:`RecordingDevice.capture` runs the run once (the recording
pass) and keeps the arrays it created; each :meth:`RecGraph.launch` runs it again and copies each
array the new run created into the one the recording pass created at the same place, so that,
as after a CUDA graph's replay, the recorded arrays hold the new values and the Python objects
made by the replayed run are not the ones anybody reads. (The run must create the same arrays in
the same order each time: a launch asserts it.) Register :class:`RecordingType` from a test
plugin's ``gradhub_add_devices``; the device kind is ``rec``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gradhub.device import Device, DeviceType
from gradhub.errors import DeviceError

_noted: list[list[Any]] = []


class RecArray(np.ndarray):
    """The arrays of the recording device."""

    def __array_finalize__(self, obj: Any) -> None:
        if _noted:
            _noted[-1].append(self)


def _to_rec(r: Any) -> Any:
    return r.view(RecArray) if type(r) is np.ndarray else r


class RecXP:
    """numpy, with every array result on the recording device."""

    def __getattr__(self, name: str) -> Any:
        obj = getattr(np, name)
        if callable(obj) and not isinstance(obj, type):

            def wrapped(*args: Any, **kwargs: Any) -> Any:
                return _to_rec(obj(*args, **kwargs))

            return wrapped
        return obj


def _noting(run: Callable[[], None]) -> list[Any]:
    """The arrays of the device that ``run()`` creates, in order."""
    _noted.append([])
    try:
        run()
    finally:
        made = _noted.pop()
    return made


class RecGraph:
    """A recorded run: each launch runs it again and writes the new arrays into the recorded
    ones."""

    def __init__(self, run: Callable[[], None], made: list[Any]) -> None:
        self.run = run
        self.made = made
        self.launches = 0
        #: set by a test: the next launches report a failed deferred check
        self.fail = False

    def launch(self) -> bool:
        again = _noting(self.run)
        assert len(again) == len(self.made), (
            f"a replay created {len(again)} arrays, the recording {len(self.made)}"
        )
        for old, new in zip(self.made, again):
            assert old.shape == new.shape and old.dtype == new.dtype, (old.shape, new.shape)
            if old.flags.writeable:
                old[...] = new
        self.launches += 1
        return not self.fail


class RecordingDevice(Device):
    """The one device of the kind ``rec``; it records."""

    can_capture = True

    def __init__(self) -> None:
        super().__init__("rec", RecXP(), 0)  # type: ignore[arg-type]
        #: every graph recorded so far
        self.graphs: list[RecGraph] = []

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        if isinstance(data, np.ndarray):
            data = data.view(np.ndarray)
        return np.array(data, dtype=dtype).view(RecArray)

    def to_numpy(self, array: Any) -> np.ndarray:
        return np.array(array.view(np.ndarray))

    def capture(self, run: Callable[[], None]) -> RecGraph:
        graph = RecGraph(run, _noting(run))
        self.graphs.append(graph)
        return graph


class RecordingType(DeviceType):
    """The device kind ``rec`` (index 0 only)."""

    kind = "rec"
    array_types = (RecArray,)

    def __init__(self) -> None:
        self.device = RecordingDevice()

    def get(self, index: int = 0) -> Device:
        if index != 0:
            raise DeviceError(f"device 'rec:{index}': only index 0 exists")
        return self.device
