"""chainer's ``chainer.training.util``: :func:`get_trigger`."""

from __future__ import annotations

from typing import Any

from .triggers import IntervalTrigger

__all__ = ["get_trigger"]


def get_trigger(trigger: Any) -> Any:
    """A trigger from its specification: a callable as it is, None a trigger that never
    fires, a ``(period, unit)`` pair an :class:`~.triggers.IntervalTrigger`."""
    if callable(trigger):
        return trigger
    if trigger is None:
        return _never_fire_trigger
    try:
        period, unit = trigger
    except (TypeError, ValueError):
        raise TypeError(
            "chainer get_trigger: a trigger must be a callable, None or a (period, unit) pair, "
            f"got {trigger!r}"
        ) from None
    return IntervalTrigger(period, unit)


def _never_fire_trigger(trainer: Any) -> bool:
    return False
