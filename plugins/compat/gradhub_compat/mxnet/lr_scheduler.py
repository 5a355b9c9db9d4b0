"""mxnet 1.9.1's learning-rate schedulers (``mx.lr_scheduler``): :class:`FactorScheduler`,
:class:`MultiFactorScheduler`, :class:`PolyScheduler`, :class:`CosineScheduler`, each with a
warmup.

A scheduler is called with ``num_update`` (the optimizer's largest per-weight update count) and
returns the learning rate. Before ``warmup_steps`` it returns the warmup rate: ``linear`` rises
from ``warmup_begin_lr`` to ``base_lr`` in equal increments, ``constant`` stays at
``warmup_begin_lr``. As mxnet's, the schedulers keep state (``FactorScheduler`` and
``MultiFactorScheduler`` decay ``base_lr`` in place as updates pass their steps; ``Poly`` and
``Cosine`` start from the ``base_lr`` given at construction).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> s = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    >>> [s(n) for n in (1, 2, 3, 5)]
    [1.0, 1.0, 0.5, 0.25]
"""

from __future__ import annotations

import logging
from math import cos, pi

__all__ = [
    "CosineScheduler",
    "FactorScheduler",
    "LRScheduler",
    "MultiFactorScheduler",
    "PolyScheduler",
]


def _int(what: str, name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{what}: {name} must be an int, got {type(value).__name__}")
    return value


class LRScheduler:
    """The base class: ``base_lr`` and the warmup (``warmup_steps``, ``warmup_begin_lr``,
    ``warmup_mode`` ``"linear"`` or ``"constant"``); subclasses define ``__call__``."""

    def __init__(
        self,
        base_lr: float = 0.01,
        warmup_steps: int = 0,
        warmup_begin_lr: float = 0,
        warmup_mode: str = "linear",
    ) -> None:
        what = type(self).__name__
        self.base_lr = base_lr
        self.warmup_steps = _int(what, "warmup_steps", warmup_steps)
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise ValueError("Base lr has to be higher than warmup_begin_lr")
        if self.warmup_steps < 0:
            raise ValueError("Warmup steps has to be positive or 0")
        if warmup_mode not in ["linear", "constant"]:
            raise ValueError("Supports only linear and constant modes of warmup")
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update: int) -> float:
        """The warmup learning rate at ``num_update`` (< ``warmup_steps``): ``linear``:
        ``begin + (base_lr - begin) * num_update / warmup_steps``; ``constant``: ``begin``."""
        if num_update >= self.warmup_steps:
            raise ValueError(
                f"{type(self).__name__}.get_warmup_lr: num_update {num_update} is not below "
                f"warmup_steps {self.warmup_steps}"
            )
        if self.warmup_mode == "linear":
            increase = (
                (self.warmup_final_lr - self.warmup_begin_lr)
                * float(num_update)
                / float(self.warmup_steps)
            )
            return self.warmup_begin_lr + increase
        return self.warmup_begin_lr

    def __call__(self, num_update: int) -> float:
        raise NotImplementedError("must override this")


class FactorScheduler(LRScheduler):
    """``base_lr * factor ** floor((num_update - 1) / step)`` after warmup (mxnet decays once
    ``num_update`` exceeds each multiple of ``step``), never below ``stop_factor_lr``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> s = mx.lr_scheduler.FactorScheduler(step=10, factor=0.9, base_lr=0.1,
        ...                                     warmup_steps=4, warmup_begin_lr=0.02)
        >>> [round(s(n), 4) for n in (0, 2, 4, 11)]
        [0.02, 0.06, 0.1, 0.09]
    """

    def __init__(
        self,
        step: int,
        factor: float = 1,
        stop_factor_lr: float = 1e-8,
        base_lr: float = 0.01,
        warmup_steps: int = 0,
        warmup_begin_lr: float = 0,
        warmup_mode: str = "linear",
    ) -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                logging.info(
                    "Update[%d]: now learning rate arrived at %0.5e, will not change in the future",
                    num_update,
                    self.base_lr,
                )
            else:
                logging.info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """``base_lr * factor ** k`` where ``k`` is the number of entries of ``step`` (an increasing
    list) that ``num_update`` exceeds.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> s = mx.lr_scheduler.MultiFactorScheduler(step=[2, 4], factor=0.1, base_lr=1.0)
        >>> [round(s(n), 4) for n in (1, 2, 3, 5)]
        [1.0, 1.0, 0.1, 0.01]
    """

    def __init__(
        self,
        step: list[int],
        factor: float = 1,
        base_lr: float = 0.01,
        warmup_steps: int = 0,
        warmup_begin_lr: float = 0,
        warmup_mode: str = "linear",
    ) -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, list) or len(step) < 1:
            raise TypeError("MultiFactorScheduler: step must be a non-empty list of int")
        for i, s in enumerate(step):
            if i != 0 and step[i] <= step[i - 1]:
                raise ValueError("Schedule step must be an increasing integer list")
            if s < 1:
                raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind <= len(self.step) - 1:
            if num_update > self.step[self.cur_step_ind]:
                self.count = self.step[self.cur_step_ind]
                self.cur_step_ind += 1
                self.base_lr *= self.factor
                logging.info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
            else:
                return self.base_lr
        return self.base_lr


def _check_max_update(what: str, max_update: int) -> None:
    """Refuse a ``max_update`` that is not a whole number of at least 1, as mxnet."""
    _int(what, "max_update", max_update)
    if max_update < 1:
        raise ValueError("maximum number of updates must be strictly positive")


def _decay_fields(
    sched: LRScheduler, base_lr_orig: float, max_update: int, final_lr: float
) -> tuple[float, int, float, int]:
    """``base_lr_orig, max_update, final_lr, max_steps`` of a decay over ``max_update``."""
    return base_lr_orig, max_update, final_lr, max_update - sched.warmup_steps


class PolyScheduler(LRScheduler):
    """``final_lr + (base_lr - final_lr) * (1 - (n - warmup_steps) / (max_update -
    warmup_steps)) ** pwr`` for ``n <= max_update``; afterwards the last value.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> s = mx.lr_scheduler.PolyScheduler(max_update=10, base_lr=1.0, pwr=2)
        >>> [round(s(n), 4) for n in (0, 5, 10, 12)]
        [1.0, 0.25, 0.0, 0.0]
    """

    def __init__(
        self,
        max_update: int,
        base_lr: float = 0.01,
        pwr: float = 2,
        final_lr: float = 0,
        warmup_steps: int = 0,
        warmup_begin_lr: float = 0,
        warmup_mode: str = "linear",
    ) -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        _check_max_update("PolyScheduler", max_update)
        self.power = pwr
        self.base_lr_orig, self.max_update, self.final_lr, self.max_steps = _decay_fields(
            self, self.base_lr, max_update, final_lr
        )

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * pow(
                1 - float(num_update - self.warmup_steps) / float(self.max_steps), self.power
            )
        return self.base_lr


class CosineScheduler(LRScheduler):
    """``final_lr + (base_lr - final_lr) * (1 + cos(pi * (n - warmup_steps) / (max_update -
    warmup_steps))) / 2`` for ``n <= max_update``; afterwards the last value.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> s = mx.lr_scheduler.CosineScheduler(max_update=10, base_lr=1.0, final_lr=0.1)
        >>> [round(s(n), 4) for n in (0, 5, 10, 20)]
        [1.0, 0.55, 0.1, 0.1]
    """

    def __init__(
        self,
        max_update: int,
        base_lr: float = 0.01,
        final_lr: float = 0,
        warmup_steps: int = 0,
        warmup_begin_lr: float = 0,
        warmup_mode: str = "linear",
    ) -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        _check_max_update("CosineScheduler", max_update)
        self.base_lr_orig, self.max_update, self.final_lr, self.max_steps = _decay_fields(
            self, base_lr, max_update, final_lr
        )

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            self.base_lr = (
                self.final_lr
                + (self.base_lr_orig - self.final_lr)
                * (1 + cos(pi * (num_update - self.warmup_steps) / self.max_steps))
                / 2
            )
        return self.base_lr
