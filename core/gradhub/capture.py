"""Captured steps: a compiled step's device work recorded once and replayed with one launch.

A step compiled with :func:`gradhub.compile` runs as a plan: the same kernels in the same order,
launched one by one from Python. On a device that can record its work into a graph (``cuda``,
through CUDA graphs), the plan's run is recorded once and each later call replays it with one
launch, so the host's per-kernel cost (tens of microseconds of Python per CuPy launch) is gone.

A graph replays fixed memory: the arrays a recorded run read and wrote. So a captured step

* copies each call's array arguments into the step's own input buffers (one copy each);
* reads the other leaves of its graph (the parameters, the constants) from the arrays they held
  when it was recorded: a leaf whose ``.d`` was replaced by another array of the same shape and
  dtype since is copied back into the recorded array, which becomes its ``.d`` again (in-place
  updates, ``w.d -= lr * g.d``, need no copy);
* hands out copies of its results (a later call overwrites the recorded ones);
* walks each ``backward()`` of the step inside the recording without touching ``.g``, and after
  each launch sets the leaves' ``.g`` on the host as ``backward()`` does, from the gradients the
  launch wrote: a copy where ``.g`` was None, ``.g + gradient`` where it was not (a new array
  either way, never one that the next launch writes into).

It is recorded at the third call (the first traces, the second runs the plan: kernels are
compiled and memory pools filled by then) and recorded again when the plan is planned again
(a leaf's shape or dtype, a rule or kernel, ``need_grad``), up to :data:`MAX_CAPTURES` times.
A step is not recorded (it runs as a plan, and :attr:`gradhub.plan.Compiled.capture_refused`
says why) when its functions run on several devices, when it calls ``backward()`` with
``retain_grad=True`` or ``communicator_callbacks``, when a function draws random numbers
(``FunctionDef.random``: a replay would repeat the draw), or when the device refuses what the
run does (a host synchronisation, host data copied to the device; the device's message names
it). ``GRADHUB_GRAPH_CAPTURE=0`` in the
environment (read at import), or :func:`set_enabled`, turns recording off.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import variable as _variable
from .device import Device, DeviceGraph
from .errors import CaptureUnsupported
from .registry import REGISTRY
from .variable import Variable

#: how many times one compiled step is recorded (again) before it stays a plan
MAX_CAPTURES = 8

_enabled = os.environ.get("GRADHUB_GRAPH_CAPTURE", "1") != "0"


def set_enabled(on: bool) -> bool:
    """Turn the recording of compiled steps into device graphs on or off; returns the previous
    setting.

    Example::

        >>> import gradhub.capture as capture
        >>> before = capture.set_enabled(False)
        >>> capture.set_enabled(before)
        False
    """
    global _enabled
    before = _enabled
    _enabled = bool(on)
    return before


def enabled() -> bool:
    """Whether compiled steps are recorded into device graphs where the device can."""
    return _enabled


def copy_into(rec: Any, a: Any) -> bool:
    """Copy ``a`` into the recorded array ``rec`` (nothing when it is ``rec``, or a view of all
    of it: an update in place, ``w.d -= step``), on ``rec``'s device; False where ``a`` has
    another array type, shape, dtype or device (the recording cannot read it).

    Example::

        >>> import numpy as np
        >>> from gradhub.capture import copy_into
        >>> rec = np.zeros(2)
        >>> copy_into(rec, np.array([1.0, 2.0])), rec.tolist()
        (True, [1.0, 2.0])
        >>> copy_into(rec, np.zeros(3))
        False
    """
    if a is rec:
        return True
    if type(a) is not type(rec) or a.shape != rec.shape or a.dtype != rec.dtype:
        return False
    if a.strides == rec.strides and getattr(a, "base", None) is rec:
        return True  # a view of all of it (an update in place: ``w.d -= step``)
    dev = REGISTRY.array_device(rec)
    if REGISTRY.array_device(a) is not dev:
        return False
    if dev is None:  # numpy
        np.copyto(rec, a)
        return True
    with dev.activate():
        dev.xp.copyto(rec, a)
    return True


def step_device(nodes: Sequence[Any], leaves: Sequence[Variable]) -> Device:
    """The one device every node of a step runs on and every leaf lives on; raises
    :class:`CaptureUnsupported` otherwise."""
    if not nodes:
        raise CaptureUnsupported("the step runs no function")
    dev = nodes[0].device
    if not dev.can_capture:
        dev.capture(lambda: None)  # raises the device's own reason
    for node in nodes:
        if node.device is not dev:
            raise CaptureUnsupported(
                f"the step's functions run on several devices ({dev.name}, {node.device.name})"
            )
        if getattr(node.fdef, "random", False):
            raise CaptureUnsupported(
                f"{node.fdef.name} draws random numbers: a replayed graph would repeat its draw"
            )
    for k, leaf in enumerate(leaves):
        where = REGISTRY.array_device(leaf._data)
        if where is not dev:
            name = leaf.name or f"leaf #{k}"
            raise CaptureUnsupported(
                f"{name} is on {'cpu' if where is None else where.name}, the step runs on "
                f"{dev.name}"
            )
    return dev


class CapturedStep:
    """A compiled step's run recorded on its device (see the module's docstring).

    ``inputs``: (argument position, leaf Variable) of the array arguments; ``leaves``: every leaf
    of the step's graph (the inputs among them); ``flat``: the step's results (Variables or
    constants); ``run()``: one run of the step's plan and first-order walks, leaving the results'
    arrays in ``flat``; ``valid()``: whether the plan still holds. Construction records the run
    and launches it once; :meth:`result` gives that run's results.
    """

    def __init__(
        self,
        nodes: Sequence[Any],
        inputs: Sequence[tuple[int, Variable]],
        leaves: Sequence[Variable],
        flat: Sequence[Any],
        run: Callable[[], None],
        valid: Callable[[], bool],
    ) -> None:
        dev = step_device(nodes, leaves)
        self.valid = valid
        # the step's own input buffers (an argument array is the caller's: copied into them)
        self.inputs = []
        for i, v in inputs:
            buf = v._data.copy()
            v._data = buf
            self.inputs.append((i, v, buf))
        own = {id(v) for _, v in inputs}
        self.leaves = [(v, v._data) for v in leaves if id(v) not in own]
        self.need_grad_generation = _variable.need_grad_generation
        self.graph: DeviceGraph = dev.capture(run)
        self.flat = list(flat)
        #: whether the first launch passed its deferred checks
        self.ok = self.graph.launch()

    def replay(self, args: Sequence[Any]) -> list[Any] | None:
        """Launch the recorded run on new arguments; None (having launched nothing) when the
        recording no longer holds, or when a check deferred to the device failed (the caller
        runs the plan, which raises the check's error)."""
        for i, v, buf in self.inputs:
            a = args[i]
            if a is not buf:
                if type(a) is not type(buf) or a.shape != buf.shape or a.dtype != buf.dtype:
                    return None
                buf[...] = a
            v._data = buf
        for v, rec in self.leaves:
            if not copy_into(rec, v._data):
                return None
            v._data = rec
        if self.need_grad_generation != _variable.need_grad_generation or not self.valid():
            return None
        if not self.graph.launch():
            return None
        return self.result()

    def result(self) -> list[Any]:
        """The last launch's results: new Variables holding copies of the result Variables'
        arrays (the recorded ones: a launch writes into them)."""
        return [
            v._detached_copy(v._data.copy()) if isinstance(v, Variable) else v for v in self.flat
        ]
