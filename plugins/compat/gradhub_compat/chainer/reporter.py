"""chainer's reporter (``chainer.Reporter``, ``chainer.report``, ``chainer.report_scope``,
``chainer.get_current_reporter``), as chainer 7.8.1's ``chainer/reporter.py`` without its
statistics (``Summary``, ``DictSummary``).

A :class:`Reporter` used as a context (``with reporter:`` or ``with reporter.scope(obs):``) is
the current reporter of the thread; :func:`report` stores values into its ``observation`` dict,
under ``<observer name>/<key>`` for a registered observer (``add_observer``), and does nothing
when no reporter is current. As chainer (``keep_graph_on_report`` False, the default), a
reported Variable is stored as a new Variable holding the same array without its graph.
``L.Classifier`` reports ``loss`` and ``accuracy`` this way.

Example::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> import gradhub_compat.chainer.links as L
    >>> model = L.Classifier(L.Linear(2, 3))
    >>> reporter = chainer.Reporter()
    >>> reporter.add_observer("main", model)
    >>> observation = {}
    >>> with reporter.scope(observation):
    ...     loss = model(np.ones((1, 2), np.float32), np.array([0], np.int32))
    >>> sorted(observation)
    ['main/accuracy', 'main/loss']
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from gradhub.variable import Variable as _NativeVariable

__all__ = ["Reporter", "get_current_reporter", "report", "report_scope"]

_thread_local = threading.local()


def _get_reporters() -> list[Reporter]:
    try:
        return _thread_local.reporters  # type: ignore[no-any-return]
    except AttributeError:
        _thread_local.reporters = []
        return _thread_local.reporters  # type: ignore[no-any-return]


def _copy_variable(value: Any) -> Any:
    if isinstance(value, _NativeVariable):
        from . import Variable

        if value._data is None:
            return Variable(None, name=value.name)
        return Variable(value._data, name=value.name, requires_grad=value.need_grad)
    return value


class Reporter:
    """Collects reported values into ``observation`` while it is the current reporter."""

    def __init__(self) -> None:
        self._observer_names: dict[int, str] = {}
        self.observation: dict[str, Any] = {}

    def __enter__(self) -> None:
        _get_reporters().append(self)

    def __exit__(self, *exc: Any) -> None:
        _get_reporters().pop()

    @contextlib.contextmanager
    def scope(self, observation: dict[str, Any]) -> Iterator[None]:
        """Make this the current reporter, reporting into ``observation``, for the block."""
        old = self.observation
        self.observation = observation
        self.__enter__()
        try:
            yield
        finally:
            self.__exit__(None, None, None)
            self.observation = old

    def add_observer(self, name: str, observer: Any) -> None:
        """Register ``observer`` (a link, usually) under ``name``."""
        self._observer_names[id(observer)] = name

    def add_observers(self, prefix: str, observers: Any) -> None:
        """Register ``(name, observer)`` pairs under ``prefix + name`` (``link.namedlinks()``)."""
        for name, observer in observers:
            self._observer_names[id(observer)] = prefix + name

    def report(self, values: dict[str, Any], observer: Any = None) -> None:
        """Store ``values`` into ``observation`` (keys prefixed by the observer's name)."""
        from . import config

        if not getattr(config, "keep_graph_on_report", False):
            values = {k: _copy_variable(v) for k, v in values.items()}
        if observer is not None:
            if id(observer) not in self._observer_names:
                raise KeyError("Given observer is not registered to the reporter.")
            prefix = self._observer_names[id(observer)]
            for key, value in values.items():
                self.observation[f"{prefix}/{key}"] = value
        else:
            self.observation.update(values)


def get_current_reporter() -> Reporter:
    """The current reporter of the thread (IndexError when there is none, as chainer)."""
    return _get_reporters()[-1]


def report(values: dict[str, Any], observer: Any = None) -> None:
    """Report ``values`` to the current reporter; nothing when there is none."""
    reporters = _get_reporters()
    if reporters:
        reporters[-1].report(values, observer)


@contextlib.contextmanager
def report_scope(observation: dict[str, Any]) -> Iterator[None]:
    """Report into ``observation`` in the block (the current reporter's, temporarily)."""
    current = _get_reporters()[-1]
    old = current.observation
    current.observation = observation
    try:
        yield
    finally:
        current.observation = old
