"""chainer's ``chainer.training.triggers`` (chainer 7.8.1): :class:`IntervalTrigger`,
:class:`ManualScheduleTrigger`, :class:`BestValueTrigger`, :class:`MaxValueTrigger`,
:class:`MinValueTrigger`, :class:`EarlyStoppingTrigger`, :class:`OnceTrigger`,
:class:`TimeTrigger`.

A trigger is a callable ``trigger(trainer) -> bool`` called once per iteration. The epoch
triggers compare ``epoch_detail`` with the value at their previous call, so a trigger
``(1, 'epoch')`` fires at the iteration that completes each epoch; their state
(``previous_iteration``, ``previous_epoch_detail``...) is saved in snapshots under chainer's keys.

Example::

    >>> from gradhub_compat.chainer import training
    >>> training.triggers.IntervalTrigger(2, "epoch").get_training_length()
    (2, 'epoch')
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

from .._device import _missing_attribute
from ._summary import DictSummary, is_writer
from ._triggers_more import OnceTrigger, TimeTrigger

__all__ = [
    "BestValueTrigger",
    "EarlyStoppingTrigger",
    "IntervalTrigger",
    "ManualScheduleTrigger",
    "MaxValueTrigger",
    "MinValueTrigger",
    "OnceTrigger",
    "TimeTrigger",
]


def _current_and_previous(trigger: Any, updater: Any) -> tuple[Any, Any]:
    """The updater's ``epoch_detail`` (``iteration``) for an epoch (iteration) trigger and
    its value at the trigger's previous call (guessed from the updater after a snapshot that
    lacked it)."""
    if trigger.unit == "epoch":
        current = updater.epoch_detail
        previous = trigger._previous_epoch_detail
        if previous < 0:
            previous = updater.previous_epoch_detail
    else:
        current = updater.iteration
        previous = trigger._previous_iteration
        if previous < 0:
            previous = current - 1
    return current, previous


def _remember(trigger: Any, updater: Any) -> None:
    """Keep the updater's ``iteration`` and ``epoch_detail`` for the trigger's next call."""
    trigger._previous_iteration = updater.iteration
    if hasattr(updater, "epoch_detail"):
        trigger._previous_epoch_detail = updater.epoch_detail


class IntervalTrigger:
    """``IntervalTrigger(period, unit)``: fires every ``period`` epochs or iterations
    (``unit`` 'epoch' or 'iteration'); ``get_training_length()`` is ``(period, unit)`` (as a
    stop trigger: the training length)."""

    def __init__(self, period: float, unit: str) -> None:
        if unit not in ("epoch", "iteration"):
            raise ValueError("Trigger unit must be either 'epoch' or 'iteration'.")
        self.period = period
        self.unit = unit
        self._previous_iteration = 0
        self._previous_epoch_detail = 0.0
        self.count = 0

    def __call__(self, trainer: Any) -> bool:
        updater = trainer.updater
        current, previous = _current_and_previous(self, updater)
        if self.unit == "epoch":
            self.count = current // self.period
        fire = previous // self.period != current // self.period
        _remember(self, updater)
        return bool(fire)

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``previous_iteration``, ``previous_epoch_detail``."""
        try:
            self._previous_iteration = serializer("previous_iteration", self._previous_iteration)
        except KeyError:
            warnings.warn(
                "The previous value of iteration is not saved. IntervalTrigger guesses it "
                "using current iteration.",
                stacklevel=2,
            )
            self._previous_iteration = -1
        try:
            self._previous_epoch_detail = serializer(
                "previous_epoch_detail", self._previous_epoch_detail
            )
        except KeyError:
            warnings.warn(
                "The previous value of epoch_detail is not saved. IntervalTrigger uses the "
                "value of trainer.updater.previous_epoch_detail.",
                stacklevel=2,
            )
            self._previous_epoch_detail = -1.0

    def get_training_length(self) -> tuple[float, str]:
        """``(period, unit)``."""
        return (self.period, self.unit)

    def __str__(self) -> str:
        return f"{type(self).__name__}({self.period}, '{self.unit}')"


class ManualScheduleTrigger:
    """``ManualScheduleTrigger(points, unit)``: fires at the iteration reaching or crossing
    each point (an epoch or iteration number, or a list of them); ``finished`` turns True
    after the last point."""

    def __init__(self, points: Any, unit: str) -> None:
        if unit not in ("epoch", "iteration"):
            raise ValueError("Trigger unit must be either 'epoch' or 'iteration'.")
        self.points = points if isinstance(points, list) else [points]
        self.unit = unit
        self.finished = False
        self._previous_iteration = 0
        self._previous_epoch_detail = 0.0
        self._finished_is_tmp = False

    def __call__(self, trainer: Any) -> bool:
        updater = trainer.updater
        current, previous = _current_and_previous(self, updater)
        fire = any(previous < p <= current for p in self.points)
        if self._finished_is_tmp:
            self._finished_is_tmp = False
            if current >= max(self.points):
                self.finished = True
        if fire and current >= max(self.points):
            self.finished = True
        _remember(self, updater)
        return fire

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``previous_iteration``, ``previous_epoch_detail``,
        ``finished``."""
        try:
            self._previous_iteration = serializer("previous_iteration", self._previous_iteration)
        except KeyError:
            warnings.warn("The previous value of iteration is not saved.", stacklevel=2)
            self._previous_iteration = -1
        try:
            self._previous_epoch_detail = serializer(
                "previous_epoch_detail", self._previous_epoch_detail
            )
        except KeyError:
            warnings.warn("The previous value of epoch_detail is not saved.", stacklevel=2)
            self._previous_epoch_detail = -1.0
        try:
            self.finished = serializer("finished", self.finished)
        except KeyError:
            warnings.warn("The flag of finished is not saved.", stacklevel=2)
            self.finished = False
            self._finished_is_tmp = True


class BestValueTrigger:
    """``BestValueTrigger(key, compare, trigger=(1, 'epoch'))``: at each firing of
    ``trigger``, the mean of ``observation[key]`` since the last firing is compared with the
    best so far (``compare(best, new)``); fires when it is better (or the first)."""

    def __init__(self, key: str, compare: Any, trigger: Any = (1, "epoch")) -> None:
        from .util import get_trigger

        self._key = key
        self._best_value: float | None = None
        self._interval_trigger = get_trigger(trigger)
        self._init_summary()
        self._compare = compare

    def __call__(self, trainer: Any) -> bool:
        observation = trainer.observation
        summary = self._summary
        key = self._key
        if key in observation:
            summary.add({key: observation[key]})
        if not self._interval_trigger(trainer):
            return False
        stats = summary.compute_mean()
        if key not in stats:
            raise KeyError(
                f"chainer {type(self).__name__}: no value of {key!r} was reported since the "
                "last firing"
            )
        value = float(stats[key])
        self._init_summary()
        if self._best_value is None or self._compare(self._best_value, value):
            self._best_value = value
            return True
        return False

    def _init_summary(self) -> None:
        self._summary = DictSummary()

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``interval_trigger/...``, ``summary/...``, ``best_value`` (not
        written while there is none: chainer would write a pickled None)."""
        self._interval_trigger.serialize(serializer["interval_trigger"])
        self._summary.serialize(serializer["summary"])
        if is_writer(serializer):
            if self._best_value is not None:
                serializer("best_value", self._best_value)
            return
        try:
            self._best_value = float(serializer("best_value", 0.0))
        except KeyError:
            self._best_value = None


class MaxValueTrigger(BestValueTrigger):
    """``MaxValueTrigger(key, trigger=(1, 'epoch'))``: fires when the mean of ``key`` is the
    largest so far."""

    def __init__(self, key: str, trigger: Any = (1, "epoch")) -> None:
        super().__init__(key, lambda max_value, new_value: new_value > max_value, trigger)


class MinValueTrigger(BestValueTrigger):
    """``MinValueTrigger(key, trigger=(1, 'epoch'))``: fires when the mean of ``key`` is the
    smallest so far."""

    def __init__(self, key: str, trigger: Any = (1, "epoch")) -> None:
        super().__init__(key, lambda min_value, new_value: new_value < min_value, trigger)


class EarlyStoppingTrigger:
    """``EarlyStoppingTrigger(check_trigger=(1, 'epoch'), monitor='main/loss', patience=3,
    mode='auto', verbose=False, max_trigger=(100, 'epoch'))``: a stop trigger for
    ``Trainer`` that fires when the monitored value has not improved for ``patience``
    successive checks, or when ``max_trigger`` fires (``get_training_length()`` is
    ``max_trigger``'s, for ``ProgressBar``).

    Each call (the trainer calls its stop trigger before each iteration, with the observation
    of the iteration before) adds ``observation[monitor]``, when present, to a running mean;
    when ``check_trigger`` fires and the observation holds ``monitor``, the mean since the last
    check is compared with ``best`` (``mode`` ``'max'``: larger is better, ``'min'``: smaller;
    ``'auto'``: ``'max'`` when ``monitor`` contains ``'accuracy'``): better sets ``best`` and
    resets ``count``, otherwise ``count`` grows; ``count >= patience`` fires. When
    ``check_trigger`` fires without ``monitor`` in the observation it warns
    ``'<monitor> is not in observation'`` and keeps the running mean. ``verbose`` prints
    chainer's lines (the comparison chosen, and ``'Epoch N: early stopping'``).
    ``patients=`` is chainer's alias of ``patience``. As chainer's, it has no ``serialize``:
    a snapshot does not keep its state.

    Example::

        >>> from gradhub_compat.chainer.training import triggers
        >>> stop = triggers.EarlyStoppingTrigger(monitor="validation/main/accuracy")
        >>> stop.best, stop.patience, stop.get_training_length()
        (-inf, 3, (100, 'epoch'))
    """

    def __init__(
        self,
        check_trigger: Any = (1, "epoch"),
        monitor: str = "main/loss",
        patience: int | None = None,
        mode: str = "auto",
        verbose: bool = False,
        max_trigger: Any = (100, "epoch"),
        **kwargs: Any,
    ) -> None:
        from .util import get_trigger

        patients = kwargs.pop("patients", None)
        if kwargs:
            names = ", ".join(repr(k) for k in sorted(kwargs))
            raise TypeError(
                f"EarlyStoppingTrigger.__init__() got unexpected keyword argument(s) {names}"
            )
        if patients is not None:
            if patience is not None:
                raise TypeError(
                    "Both 'patience' and 'patients' arguments are specified. 'patients' is an "
                    "alias of the former. Specify only 'patience'."
                )
            patience = patients
        elif patience is None:
            patience = 3
        self.count = 0
        self.patience = patience
        self.monitor = monitor
        self.verbose = verbose
        self.already_warning = False
        self._max_trigger = get_trigger(max_trigger)
        self._interval_trigger = get_trigger(check_trigger)
        self._init_summary()
        if mode == "max" or (mode not in ("max", "min") and "accuracy" in monitor):
            self._compare: Any = operator.gt
            if verbose:
                print("early stopping: operator is greater")
            self.best: Any = float("-inf")
        else:
            self._compare = operator.lt
            if verbose:
                print("early stopping: operator is less")
            self.best = float("inf")

    def __call__(self, trainer: Any) -> bool:
        observation = trainer.observation
        if self.monitor in observation:
            self._summary.add({self.monitor: observation[self.monitor]})
        if self._max_trigger(trainer):
            return True
        if not self._interval_trigger(trainer):
            return False
        if self.monitor not in observation:
            warnings.warn(f"{self.monitor} is not in observation", stacklevel=2)
            return False
        current = self._summary.compute_mean()[self.monitor]
        self._init_summary()
        if self._compare(current, self.best):
            self.best = current
            self.count = 0
        else:
            self.count += 1
        if self.count >= self.patience:
            if self.verbose:
                print(f"Epoch {trainer.updater.epoch}: early stopping")
            return True
        return False

    def _init_summary(self) -> None:
        self._summary = DictSummary()

    def get_training_length(self) -> Any:
        """``max_trigger``'s training length."""
        return self._max_trigger.get_training_length()


def __getattr__(name: str) -> Any:
    _missing_attribute(__name__, "chainer.training.triggers", name, name[:1].isupper(), __all__)
