"""chainer's ``ExponentialShift``, ``LinearShift``, ``observe_value``, ``observe_lr`` and
``FailOnNonNumber`` extensions (chainer 7.8.1)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..extension import PRIORITY_WRITER, Extension, make_extension

__all__ = ["ExponentialShift", "FailOnNonNumber", "LinearShift", "observe_lr", "observe_value"]


class _ValueShift(Extension):
    """What the value shifts share: the optimizer (``'main'`` of the updater unless given),
    the value set on its ``attr``, chainer's ``_t`` / ``_last_value`` state and the firing
    (``_t`` counts it, then ``_compute_next_value()`` is set)."""

    def _start(self, attr: str, optimizer: Any) -> None:
        self._attr = attr
        self._optimizer = optimizer
        self._t = 0
        self._last_value: float | None = None

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``_t``, ``_last_value``."""
        self._t = serializer("_t", self._t)
        self._last_value = _serialize_optional_float(serializer, "_last_value", self._last_value)

    def _get_optimizer(self, trainer: Any) -> Any:
        return self._optimizer or trainer.updater.get_optimizer("main")

    def _update_value(self, optimizer: Any, value: float) -> None:
        setattr(optimizer, self._attr, value)
        self._last_value = value

    def __call__(self, trainer: Any) -> None:
        self._t += 1
        optimizer = self._get_optimizer(trainer)
        self._update_value(optimizer, self._compute_next_value())

    def _compute_next_value(self) -> Any:
        """The value at the ``self._t``-th firing."""
        raise NotImplementedError

    def _take_or_set(self, trainer: Any, value: Any) -> Any:
        """``value`` set on the optimizer's ``attr``, or, when None, the attribute's value
        (left as it is): the starting value of the shifts that take one."""
        optimizer = self._get_optimizer(trainer)
        if value is None:
            return getattr(optimizer, self._attr)
        setattr(optimizer, self._attr, value)
        return value


def _clip_to_target(value: Any, target: float | None, grows: bool) -> Any:
    """chainer's stop at ``target``: ``value / target > 1`` (growing) or ``< 1``
    (shrinking) gives ``target`` (a ratio, so that negative values work too)."""
    if target is None:
        return value
    if grows:
        return target if value / target > 1 else value
    return target if value / target < 1 else value


class _InitShift(_ValueShift):
    """The shifts starting from ``init`` (the attribute's value when training starts if None)
    towards ``target``, whose ``initialize`` sets ``init`` or, when resuming, the saved
    ``_last_value``."""

    def _start_init(
        self, attr: str, optimizer: Any, init: float | None, target: float | None
    ) -> None:
        self._start(attr, optimizer)
        self._init: Any = init
        self._target = target

    def initialize(self, trainer: Any) -> None:
        """Set the starting value (the saved one when resuming)."""
        optimizer = self._get_optimizer(trainer)
        if self._init is None:
            self._init = getattr(optimizer, self._attr)
        if self._last_value is not None:
            self._update_value(optimizer, self._last_value)
        else:
            self._update_value(optimizer, self._init)


class ExponentialShift(_InitShift):
    """``ExponentialShift(attr, rate, init=None, target=None, optimizer=None)``: at each
    firing (default every iteration; usually ``trigger=(1, 'epoch')``) sets the optimizer's
    ``attr`` (``'lr'``) to ``init * rate**t`` (``t`` the number of firings; ``init`` defaults
    to the value when training starts), stopping at ``target``. The optimizer defaults to the
    updater's ``'main'``."""

    def __init__(
        self,
        attr: str,
        rate: float,
        init: float | None = None,
        target: float | None = None,
        optimizer: Any = None,
    ) -> None:
        if rate < 0:
            raise ValueError("ExponentialShift does not support negative rate")
        self._start_init(attr, optimizer, init, target)
        self._rate = rate

    def _compute_next_value(self) -> Any:
        value = self._init * (self._rate**self._t)
        return _clip_to_target(value, self._target, self._rate > 1)


class LinearShift(_ValueShift):
    """``LinearShift(attr, value_range, time_range, optimizer=None)``: the optimizer's
    ``attr`` moves linearly from ``value_range[0]`` to ``value_range[1]`` while the number of
    firings ``t`` goes from ``time_range[0]`` to ``time_range[1]`` (constant outside)."""

    def __init__(self, attr: str, value_range: Any, time_range: Any, optimizer: Any = None) -> None:
        self._start(attr, optimizer)
        self._value_range = value_range
        self._time_range = time_range

    def initialize(self, trainer: Any) -> None:
        """Set the starting value (the saved one when resuming)."""
        optimizer = self._get_optimizer(trainer)
        value = self._last_value if self._last_value is not None else self._compute_next_value()
        self._update_value(optimizer, value)

    def _compute_next_value(self) -> float:
        t1, t2 = self._time_range
        v1, v2 = self._value_range
        if self._t <= t1:
            return v1  # type: ignore[no-any-return]
        if self._t >= t2:
            return v2  # type: ignore[no-any-return]
        rate = (self._t - t1) / (t2 - t1)
        return v1 + rate * (v2 - v1)  # type: ignore[no-any-return]


def _serialize_optional_float(serializer: Any, key: str, value: float | None) -> float | None:
    """``serializer(key, value)`` for a float that may be None: None is not written (chainer
    would write a pickled None) and a missing key reads back as None."""
    from .._summary import is_writer

    if is_writer(serializer):
        if value is not None:
            serializer(key, value)
        return value
    try:
        loaded = serializer(key, 0.0)
    except KeyError:
        return None
    return float(loaded.item() if isinstance(loaded, np.ndarray) else loaded)


def observe_value(observation_key: str, target_func: Any) -> Any:
    """An extension (once per epoch, ``PRIORITY_WRITER``) putting ``target_func(trainer)``
    into the observation under ``observation_key``."""

    @make_extension(trigger=(1, "epoch"), priority=PRIORITY_WRITER)
    def _observe_value(trainer: Any) -> None:
        trainer.observation[observation_key] = target_func(trainer)

    return _observe_value


def observe_lr(optimizer_name: str = "main", observation_key: str = "lr") -> Any:
    """:func:`observe_value` of the optimizer's ``lr``."""
    return observe_value(
        observation_key, lambda trainer: trainer.updater.get_optimizer(optimizer_name).lr
    )


class FailOnNonNumber(Extension):
    """Raises RuntimeError when a parameter of an optimizer's target holds a NaN or an
    infinity (chainer's message)."""

    def __call__(self, trainer: Any) -> None:
        for name, optimizer in trainer.updater.get_all_optimizers().items():
            target = optimizer.target
            xp = target.xp
            for param in target.params():
                if param.array is not None and not xp.isfinite(param.array).all():
                    raise RuntimeError(
                        f"Kill the process since parameters in optimizer '{name}' diverge. R.I.P."
                    )
