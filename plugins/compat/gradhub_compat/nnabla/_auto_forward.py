"""nnabla's auto_forward flag, and what it changes in the layer: batch normalization statistics.

gradhub computes every function when it is called. nnabla, with auto_forward off (its default),
only connects the graph and computes it on ``forward()``. The values computed at build time are
harmless (a superset of nnabla), with one exception: a training-mode batch normalization updates
its running mean and variance in place each time its kernel runs. So while auto_forward is off
the layer's batch normalization (``F.batch_normalization``, ``PF.batch_normalization``) puts the
running statistics back as they were before the build, and only ``forward()`` updates them, as in
nnabla; with auto_forward on, building updates them once (nnabla computes at build time then).
Likewise, numpy's floating-point warnings of the build-time computation (``0 / 0`` on a new
Variable's zeros, as in ``noise / F.sum(noise ** 2) ** 0.5``) are not shown while auto_forward is
off (:func:`quiet_unless_auto_forward`): nnabla computes nothing there.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from gradhub.variable import Variable as _NativeVariable


class _Flag(threading.local):
    auto: bool = False


_flag = _Flag()


def get_auto_forward() -> bool:
    """Whether graphs count as executed when built (this thread's setting; False by default)."""
    return _flag.auto


def set_auto_forward(auto: bool) -> None:
    """Set this thread's auto_forward flag (see :func:`get_auto_forward`)."""
    _flag.auto = bool(auto)


def running_array(value: Any) -> Any:
    """The array a batch normalization updates in place for the running statistic ``value`` (a
    Variable or an array), or None when it updates none that the caller can see."""
    if isinstance(value, _NativeVariable):
        return value._data
    if hasattr(value, "shape") and hasattr(value, "copy") and hasattr(value, "__setitem__"):
        return value
    return None


@contextmanager
def kept_unless_auto_forward(arrays: Sequence[Any]) -> Iterator[None]:
    """Restore ``arrays`` (in place) after the block unless auto_forward is on: the block builds
    a graph, and building is not executing it."""
    if _flag.auto:
        yield
        return
    saved = [
        (a, a.copy())
        for a in arrays
        if a is not None and getattr(getattr(a, "flags", None), "writeable", True)
    ]
    try:
        yield
    finally:
        for a, s in saved:
            a[...] = s


@contextmanager
def quiet_unless_auto_forward() -> Iterator[None]:
    """Ignore numpy's floating-point warnings (``divide``, ``invalid``, ``over``, ``under``) in
    the block unless auto_forward is on: the block builds a graph, whose values nnabla does not
    compute until ``forward()``, so warnings about them (a new Variable holds zeros) are noise."""
    if _flag.auto:
        yield
        return
    with np.errstate(all="ignore"):
        yield
