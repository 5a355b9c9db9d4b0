"""chainer's :class:`OnceTrigger` and :class:`TimeTrigger` (chainer 7.8.1
``chainer.training.triggers``), exported by :mod:`gradhub_compat.chainer.training.triggers`.

Example::

    >>> from types import SimpleNamespace
    >>> from gradhub_compat.chainer.training import triggers
    >>> once = triggers.OnceTrigger()
    >>> [once(None) for _ in range(3)], once.finished
    ([True, False, False], True)
    >>> every = triggers.TimeTrigger(1.5)
    >>> [every(SimpleNamespace(elapsed_time=t)) for t in (1.0, 1.6, 2.0, 7.0, 7.1)]
    [False, True, False, True, True]
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["OnceTrigger", "TimeTrigger"]


class OnceTrigger:
    """``OnceTrigger(call_on_resume=False)``: fires at its first call only; with
    ``call_on_resume`` it fires once more at the first call after a snapshot is loaded into it.

    ``finished`` is ``not (first or resumed)``: True once it has fired (and, resumed, fired
    again), so a ``Trainer`` skips the ``initialize`` of an extension whose ``OnceTrigger`` is
    finished, as chainer's. Each call returns ``not finished`` and then clears both flags.

    Its snapshot state is chainer's key ``_flag_first`` (a bool: whether it has not been
    called yet). Loading a snapshot without that key warns (chainer's UserWarning) and takes
    the trigger as called already; ``call_on_resume`` is not saved, only taken from the
    constructor, so a trigger made with ``call_on_resume=True`` fires again after loading.

    Example::

        >>> from gradhub_compat.chainer.training import triggers
        >>> t = triggers.OnceTrigger(call_on_resume=True)
        >>> t.finished, t(None), t(None), t.finished
        (False, True, False, True)
    """

    def __init__(self, call_on_resume: bool = False) -> None:
        self._flag_first = True
        self._flag_resumed = call_on_resume

    @property
    def finished(self) -> bool:
        """Whether the trigger will not fire again: ``not (first or resumed)``."""
        return not (self._flag_first or self._flag_resumed)

    def __call__(self, trainer: Any) -> bool:
        fire = not self.finished
        self._flag_resumed = False
        self._flag_first = False
        return fire

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``_flag_first``; a missing key warns and reads as False."""
        try:
            self._flag_first = serializer("_flag_first", self._flag_first)
        except KeyError:
            warnings.warn(
                "The flag is not saved.OnceTrigger guess it is not first when resumed. If this "
                "trigger is resumed before first called, it may not work correctly.",
                stacklevel=2,
            )
            self._flag_first = False


class TimeTrigger:
    """``TimeTrigger(period)``: fires at the calls where ``trainer.elapsed_time`` (seconds)
    has passed the next firing time.

    The next firing time starts at ``period``; a call fires when
    :math:`t_{\\text{elapsed}} > t_{\\text{next}}` (strictly) and then moves it on by one
    ``period`` only, so after a long pause it fires at several successive calls until it has
    caught up (chainer's behaviour: ``period`` 1.5 at elapsed times 3.01, 7.0, 7.1 fires at each
    of them, the next time going 4.5, 6.0, 7.5). The next time keeps the type of ``period``
    (an int period gives int times).

    Its snapshot state is chainer's key ``next_time``; loading a snapshot without it raises
    KeyError, as chainer's.

    Example::

        >>> from types import SimpleNamespace
        >>> from gradhub_compat.chainer.training import triggers
        >>> t = triggers.TimeTrigger(2)
        >>> [t(SimpleNamespace(elapsed_time=s)) for s in (2, 2.0001, 4, 4.5)], t._next_time
        ([False, True, False, True], 6)
    """

    def __init__(self, period: float) -> None:
        self._period = period
        self._next_time = self._period

    def __call__(self, trainer: Any) -> bool:
        if self._next_time < trainer.elapsed_time:
            self._next_time += self._period
            return True
        return False

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``next_time``."""
        self._next_time = serializer("next_time", self._next_time)
