"""chainer's ``MicroAverage`` extension (chainer 7.8.1)."""

from __future__ import annotations

from typing import Any

from ... import reporter
from ..extension import PRIORITY_EDITOR, Extension
from ..util import get_trigger

__all__ = ["MicroAverage"]


class MicroAverage(Extension):
    """``MicroAverage(numerator_key, denominator_key, result_key, trigger=(1, 'epoch'))``:
    the micro-average ``sum_i n_i / sum_i d_i`` of two reported values (typically the number
    of correct predictions and of examples of each batch), reported as ``result_key`` (a
    Python float, no observer prefix) at each firing of ``trigger``.

    It runs at every iteration (its own trigger) with ``PRIORITY_EDITOR``: when both keys are
    in the observation it adds them to its sums, then calls ``trigger`` (only then, as
    chainer) and, when it fires, reports the ratio and restarts the sums. The sums are saved
    in the snapshot as ``_numerator``, ``_denominator``.

    Example::

        >>> from gradhub_compat.chainer.training import extensions
        >>> ext = extensions.MicroAverage("main/correct", "main/total", "main/accuracy")
        >>> ext.priority
        200
    """

    priority = PRIORITY_EDITOR

    def __init__(
        self,
        numerator_key: str,
        denominator_key: str,
        result_key: str,
        trigger: Any = (1, "epoch"),
    ) -> None:
        self._trigger = get_trigger(trigger)
        self._numerator_key = numerator_key
        self._denominator_key = denominator_key
        self._result_key = result_key
        self._numerator: Any = 0
        self._denominator: Any = 0

    def __call__(self, trainer: Any) -> None:
        observation = trainer.observation
        if not (self._numerator_key in observation and self._denominator_key in observation):
            return
        self._numerator += observation[self._numerator_key]
        self._denominator += observation[self._denominator_key]
        if self._trigger(trainer):
            result = float(self._numerator) / self._denominator
            self._numerator = 0
            self._denominator = 0
            reporter.report({self._result_key: result})

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``_numerator``, ``_denominator``."""
        self._numerator = serializer("_numerator", self._numerator)
        self._denominator = serializer("_denominator", self._denominator)
