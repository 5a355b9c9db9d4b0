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


def grad_mode() -> tuple[bool, bool]:
    """This thread's two switches, ``(recording, keep_need_grad)``.

    ``recording`` is :func:`is_recording`. ``keep_need_grad`` says what happens while not
    recording: results still need a gradient when an input does (chainer's
    ``no_backprop_mode``: they become roots of later graphs) instead of never (:func:`no_grad`,
    as PyTorch). A service for front-ends with their own recording switches (gradhub-compat).
    """
    return state.recording, state.keep_need_grad


def set_grad_mode(recording: bool, keep_need_grad: bool) -> None:
    """Set this thread's two switches (see :func:`grad_mode`) until they are set again.

    Not scoped: a caller that sets them for a block saves :func:`grad_mode` first and restores
    it after (``with no_grad():`` and ``with set_recording(on):`` do so for ``recording``).
    """
    state.recording = recording
    state.keep_need_grad = keep_need_grad
