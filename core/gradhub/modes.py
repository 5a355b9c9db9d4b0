"""Thread-local graph recording switch (``no_grad``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _GradMode(threading.local):
    recording: bool = True
    # while not recording: whether results still need a gradient when an input does (chainer's
    # no_backprop_mode: roots of later graphs) rather than never (no_grad, as PyTorch)
    keep_need_grad: bool = False


state = _GradMode()


@contextmanager
def no_grad() -> Iterator[None]:
    """Stop graph recording in this thread; results of functions need no gradient.

    Example::

        >>> import gradhub as gh
        >>> x = gh.Variable([1.0, 2.0])
        >>> with gh.no_grad():
        ...     y = x * 2.0
        >>> y.need_grad
        False
    """
    prev = state.recording
    state.recording = False
    try:
        yield
    finally:
        state.recording = prev


class set_recording:
    """Set graph recording on or off in this thread for the duration of a ``with`` block.

    A small class rather than a generator: the engine enters it several times per ``grad``.
    """

    __slots__ = ("on", "prev")

    def __init__(self, on: bool) -> None:
        self.on = on

    def __enter__(self) -> None:
        self.prev = state.recording
        state.recording = self.on

    def __exit__(self, *exc: object) -> None:
        state.recording = self.prev


def is_recording() -> bool:
    """Whether functions called in this thread now record a graph."""
    return state.recording
