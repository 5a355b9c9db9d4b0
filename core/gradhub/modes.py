"""Thread-local graph recording switch (``no_grad``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _GradMode(threading.local):
    recording: bool = True
    # while not recording: whether results still need a gradient when an input does (chainer's
    # no_backprop_mode: roots of later graphs) rather than never (no_grad, as PyTorch)
    keep_need_grad: bool = False
    # while gradhub.compile traces a step and the step's own code turned recording off (no_grad(),
    # a front-end's set_grad_mode): functions are recorded all the same, their results needing no
    # gradient, so that a replay of the step computes them again (see set_tracing)
    traced_no_grad: bool = False
    # whether gradhub.compile is tracing a step in this thread (see set_tracing)
    tracing: bool = False


state = _GradMode()


def set_tracing(on: bool) -> bool:
    """While ``on`` (in this thread), a ``no_grad()`` block (or a front-end's
    :func:`set_grad_mode` turning recording off) still records the functions it runs, their
    results needing no gradient: a compiled step (gradhub.plan.compile) replays its graph, and a
    value computed without a graph would be a constant of the trace. The switches the library
    sets around its own work (:class:`set_recording`) record nothing, as always. Returns the
    previous setting."""
    before = state.tracing
    state.tracing = bool(on)
    return before


def is_tracing() -> bool:
    """Whether :func:`gradhub.compile` is tracing a step in this thread now (front-ends refuse
    graph edits that a replay of the step could not make).

    Example::

        >>> import gradhub as gh
        >>> from gradhub.modes import is_tracing
        >>> is_tracing()
        False
        >>> seen = []
        >>> step = gh.compile(lambda x: seen.append(is_tracing()) or x * 2.0)
        >>> _ = step([1.0])
        >>> seen
        [True]
    """
    return state.tracing


def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


class PerThread:
    """Objects set per thread (a traced step's observer, see gradhub.variable.set_observer),
    behind one module-level name that its module keeps None while no thread has set one, so
    that the common case costs one test. Its attributes are those of the calling thread's
    object; a thread without one gets methods that do nothing and return None. A module sets
    objects under its own lock and keeps its name as :meth:`holder` says.

    Example::

        >>> import threading
        >>> from gradhub.modes import PerThread
        >>> class Greeter:
        ...     def hello(self):
        ...         return "hello"
        >>> objs = PerThread()
        >>> objs.set(Greeter()) is None
        True
        >>> out = []
        >>> t = threading.Thread(target=lambda: out.append(objs.hello()))
        >>> t.start(); t.join()
        >>> objs.hello(), out
        ('hello', [None])
    """

    def __init__(self) -> None:
        self._by_thread: dict[int, Any] = {}

    def get(self) -> Any:
        """This thread's object, or None."""
        return self._by_thread.get(threading.get_ident())

    def set(self, obj: Any) -> Any:
        """Make ``obj`` (None: none) this thread's object; returns the previous one."""
        ident = threading.get_ident()
        before = self._by_thread.pop(ident, None)
        if obj is not None:
            self._by_thread[ident] = obj
        return before

    def holder(self) -> PerThread | None:
        """What the module-level name holds: this object while any thread has one, else None."""
        return self if self._by_thread else None

    def __getattr__(self, name: str) -> Any:
        obj = self._by_thread.get(threading.get_ident())
        return _nothing if obj is None else getattr(obj, name)


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
    prev, traced = state.recording, state.traced_no_grad
    state.recording = False
    state.traced_no_grad = state.tracing
    try:
        yield
    finally:
        state.recording, state.traced_no_grad = prev, traced


class set_recording:
    """Set graph recording on or off in this thread for the duration of a ``with`` block.

    A small class rather than a generator: the engine enters it several times per ``grad``.
    """

    __slots__ = ("on", "prev", "traced")

    def __init__(self, on: bool) -> None:
        self.on = on

    def __enter__(self) -> None:
        self.prev = state.recording
        self.traced = state.traced_no_grad
        state.recording = self.on
        state.traced_no_grad = False

    def __exit__(self, *exc: object) -> None:
        state.recording = self.prev
        state.traced_no_grad = self.traced


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
    state.traced_no_grad = state.tracing and not recording
