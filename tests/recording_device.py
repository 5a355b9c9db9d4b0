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

import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import gradhub as gh
import numpy as np
from gradhub import capture, plan, plugins
from gradhub.device import Device, DeviceType
from gradhub.errors import CaptureUnsupported, DeviceError
from numeric_helpers import assert_same_arrays

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
        #: set by a test: the reason for which recordings fail after their recording pass
        self.refuse = ""
        #: recordings started (also those refused)
        self.attempts = 0

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        if isinstance(data, np.ndarray):
            data = data.view(np.ndarray)
        return np.array(data, dtype=dtype).view(RecArray)

    def to_numpy(self, array: Any) -> np.ndarray:
        return np.array(array.view(np.ndarray))

    def capture(self, run: Callable[[], None]) -> RecGraph:
        self.attempts += 1
        made = _noting(run)
        if self.refuse:
            raise CaptureUnsupported(self.refuse)
        graph = RecGraph(run, made)
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


@contextmanager
def recording_device() -> Iterator[RecordingDevice]:
    """The plugins that the environment selects (the caller sets ``GRADHUB_DISABLE_PLUGIN_
    AUTOLOAD`` and the like, e.g. with monkeypatch) and the recording device loaded, plans and
    recording on, the default context on the device; all put back afterwards."""
    mod = types.ModuleType("recording_device_plugin")
    mod.gradhub_add_devices = gh.hookimpl(  # type: ignore[attr-defined]
        lambda register: register.device(RecordingType())
    )
    plugins.reset()
    plugins.load_plugins(extra=[("recording_device", mod)])
    default = gh.get_default_context()
    before = plan.set_enabled(True), capture.set_enabled(True)
    gh.set_default_context(gh.get_extension_context("rec"))
    try:
        yield gh.Variable(np.zeros(1)).device  # type: ignore[misc]
    finally:
        gh.set_default_context(default)
        plan.set_enabled(before[0])
        capture.set_enabled(before[1])
        plugins.reset()


def on_rec(a: Any) -> RecArray:
    """``a`` as an array of the recording device."""
    return np.asarray(a).view(RecArray)


#: how a static program runs: plans off (the engine walks the graph at every call), as plans,
#: or as plans recorded on the device
MODES = ("engine", "plan", "recorded")


@contextmanager
def run_mode(mode: str) -> Iterator[None]:
    """Plans and recording set for ``mode`` (one of :data:`MODES`); put back afterwards."""
    plans = plan.set_enabled(mode != "engine")
    before = capture.set_enabled(mode == "recorded")
    try:
        yield
    finally:
        capture.set_enabled(before)
        plan.set_enabled(plans)


def assert_modes_agree(run: Callable[[str], list[np.ndarray]]) -> None:
    """``run(mode)`` (a program's values as host arrays, run in :func:`run_mode`) gives the
    same arrays as plans and recorded as with the engine walking: same dtypes and shapes, equal
    bit for bit."""
    engine = run("engine")
    for mode in MODES[1:]:
        assert_same_arrays(run(mode), engine, mode)
