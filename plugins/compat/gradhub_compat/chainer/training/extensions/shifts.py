"""chainer's schedule extensions ``StepShift``, ``MultistepShift``, ``InverseShift``,
``PolynomialShift`` and ``WarmupShift`` (chainer 7.8.1): each sets an attribute of an
optimizer (``'lr'``, ``'alpha'``...) at each firing of its trigger (every iteration unless
``trainer.extend(..., trigger=...)`` says otherwise) from ``t``, the number of firings so far.
The optimizer defaults to the updater's ``'main'``; the state (``_t``, and ``_last_value`` or
``_current_step``) is saved in the trainer's snapshot under chainer's keys.

Example::

    >>> from gradhub_compat import chainer
    >>> import gradhub_compat.chainer.links as L
    >>> from gradhub_compat.chainer.training import extensions
    >>> opt = chainer.optimizers.SGD(lr=0.1).setup(L.Linear(1, 1))
    >>> shift = extensions.StepShift("lr", 0.5, 2, optimizer=opt)
    >>> shift.initialize(None)
    >>> values = []
    >>> for _ in range(5):
    ...     shift(None)
    ...     values.append(float(opt.lr))
    >>> values
    [0.1, 0.05, 0.05, 0.025, 0.025]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .value_extensions import _clip_to_target, _InitShift, _ValueShift

__all__ = ["InverseShift", "MultistepShift", "PolynomialShift", "StepShift", "WarmupShift"]


class StepShift(_InitShift):
    """``StepShift(attr, gamma, step, init=None, target=None, optimizer=None)``: at the
    ``t``-th firing sets ``attr`` to ``init * gamma ** floor(t / step)`` (a numpy float64, as
    chainer's ``numpy.floor`` gives), stopping at ``target`` (a ceiling when ``gamma > 1``, a
    floor otherwise). ``init`` defaults to the attribute's value when training starts."""

    def __init__(
        self,
        attr: str,
        gamma: float,
        step: int,
        init: float | None = None,
        target: float | None = None,
        optimizer: Any = None,
    ) -> None:
        self._start_init(attr, optimizer, init, target)
        self._gamma = gamma
        self._step = step

    def _compute_next_value(self) -> Any:
        value = self._init * self._gamma ** np.floor(self._t / self._step)
        return _clip_to_target(value, self._target, self._gamma > 1)


class InverseShift(_InitShift):
    """``InverseShift(attr, gamma, power, init=None, target=None, optimizer=None)``: Caffe's
    ``inv`` policy, ``init * (1 + gamma * t) ** (-power)`` at the ``t``-th firing, stopping at
    ``target`` (a ceiling when ``power < 0``, a floor otherwise). A negative ``gamma`` raises
    ``ValueError``, as chainer."""

    def __init__(
        self,
        attr: str,
        gamma: float,
        power: float,
        init: float | None = None,
        target: float | None = None,
        optimizer: Any = None,
    ) -> None:
        if gamma < 0:
            raise ValueError("InverseShift does not support negative gamma")
        self._start_init(attr, optimizer, init, target)
        self._gamma = gamma
        self._power = power

    def _compute_next_value(self) -> Any:
        value = self._init * (1 + self._gamma * self._t) ** (-self._power)
        return _clip_to_target(value, self._target, self._power < 0)


class PolynomialShift(_InitShift):
    """``PolynomialShift(attr, rate, max_count, init=None, target=None, optimizer=None)``:
    ``init * max(1 - t / max_count, 0) ** rate`` at the ``t``-th firing; with ``target``, as
    chainer, ``target / value > 1`` (``rate > 0``) or ``< 1`` gives ``target`` (so a value
    reaching 0 raises ``ZeroDivisionError`` there, as in chainer)."""

    def __init__(
        self,
        attr: str,
        rate: float,
        max_count: int,
        init: float | None = None,
        target: float | None = None,
        optimizer: Any = None,
    ) -> None:
        self._start_init(attr, optimizer, init, target)
        self._rate = rate
        self._max_count = max_count

    def _compute_next_value(self) -> Any:
        decay = max(1 - self._t / self._max_count, 0)
        value = self._init * decay**self._rate
        if self._target is not None:
            ratio = self._target / value
            if (ratio > 1) if self._rate > 0 else (ratio < 1):
                value = self._target
        return value


class MultistepShift(_ValueShift):
    """``MultistepShift(attr, gamma, step_value, init, optimizer=None)``: ``attr`` is
    ``init * gamma ** k`` where ``k`` counts the entries of ``step_value`` reached by ``t``,
    the number of firings (it moves at most one step per firing, as chainer). ``init`` None
    takes the attribute's value when training starts; otherwise it is set then. Its state is
    ``_t`` and ``_current_step``."""

    def __init__(
        self,
        attr: str,
        gamma: float,
        step_value: Any,
        init: float | None,
        optimizer: Any = None,
    ) -> None:
        self._start(attr, optimizer)
        self._gamma = gamma
        self._step_value = step_value
        self._init: Any = init
        self._stepvalue_size = len(step_value)
        self._current_step = 0

    def initialize(self, trainer: Any) -> None:
        """Take or set ``init``."""
        self._init = self._take_or_set(trainer, self._init)

    def __call__(self, trainer: Any) -> None:
        self._t += 1
        optimizer = self._get_optimizer(trainer)
        if (
            self._current_step < self._stepvalue_size
            and self._t >= self._step_value[self._current_step]
        ):
            self._current_step += 1
        setattr(optimizer, self._attr, self._init * pow(self._gamma, self._current_step))

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``_t``, ``_current_step``."""
        self._t = serializer("_t", self._t)
        self._current_step = serializer("_current_step", self._current_step)


class WarmupShift(_ValueShift):
    """``WarmupShift(attr, warmup_start, warmup_iter, init, optimizer=None)``: during the
    first ``warmup_iter`` firings ``attr`` goes linearly from ``warmup_start`` to ``init``,
    ``(t * init + (warmup_iter - t) * warmup_start) / warmup_iter``, and is left alone after.
    ``warmup_start`` None takes the attribute's value when training starts; otherwise it is
    set then. Its state is ``_t``."""

    def __init__(
        self,
        attr: str,
        warmup_start: float | None,
        warmup_iter: int,
        init: float,
        optimizer: Any = None,
    ) -> None:
        self._start(attr, optimizer)
        self._warmup_start: Any = warmup_start
        self._warmup_iter = warmup_iter
        self._init = init

    def initialize(self, trainer: Any) -> None:
        """Take or set ``warmup_start``."""
        self._warmup_start = self._take_or_set(trainer, self._warmup_start)

    def __call__(self, trainer: Any) -> None:
        self._t += 1
        if self._t <= self._warmup_iter:
            value = (
                self._t * self._init + (self._warmup_iter - self._t) * self._warmup_start
            ) / self._warmup_iter
            setattr(self._get_optimizer(trainer), self._attr, value)

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``_t``."""
        self._t = serializer("_t", self._t)
