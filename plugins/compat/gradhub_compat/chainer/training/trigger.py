"""chainer's ``chainer.training.trigger`` module path (chainer 7.8.1): :class:`IntervalTrigger`
and :func:`get_trigger`, as ``training.trigger.IntervalTrigger(2, "epoch")`` in chainer's
programs.

Example::

    >>> from gradhub_compat.chainer.training import trigger
    >>> trigger.IntervalTrigger(2, "epoch").period
    2
"""

from __future__ import annotations

from .triggers import IntervalTrigger
from .util import _never_fire_trigger, get_trigger

__all__ = ["IntervalTrigger", "_never_fire_trigger", "get_trigger"]
