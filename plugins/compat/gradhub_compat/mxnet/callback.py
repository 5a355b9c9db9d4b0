"""mxnet 1.9.1's training callbacks (``mx.callback``): :class:`Speedometer`,
:func:`do_checkpoint`, :func:`module_checkpoint`, :func:`log_train_metric`,
:class:`ProgressBar`, :class:`LogValidationMetricsCallback`, and :data:`BatchEndParam`, the
record ``Module.fit`` passes to batch-end callbacks.

Batch-end callbacks are called with a ``BatchEndParam(epoch, nbatch, eval_metric, locals)``;
epoch-end callbacks with ``(epoch, symbol, arg_params, aux_params)``. The messages are logged
with :mod:`logging` in mxnet's formats.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> acc = mx.metric.Accuracy()
    >>> acc.update([mx.nd.array([1, 0])], [mx.nd.array([[0.2, 0.8], [0.9, 0.1]])])
    >>> p = mx.callback.BatchEndParam(epoch=0, nbatch=4, eval_metric=acc, locals=None)
    >>> mx.callback.log_train_metric(2)(p)  # logs 'Iter[0] Batch[4] Train-accuracy=1.000000'
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

from .model import BatchEndParam, save_checkpoint

__all__ = [
    "BatchEndParam",
    "LogValidationMetricsCallback",
    "ProgressBar",
    "Speedometer",
    "do_checkpoint",
    "log_train_metric",
    "module_checkpoint",
]


def module_checkpoint(
    mod: Any, prefix: str, period: int = 1, save_optimizer_states: bool = False
) -> Callable[..., None]:
    """An epoch-end callback calling ``mod.save_checkpoint(prefix, epoch + 1,
    save_optimizer_states)`` every ``period`` epochs."""
    period = int(max(1, period))

    def _callback(iter_no: int, sym: Any = None, arg: Any = None, aux: Any = None) -> None:
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)

    return _callback


def do_checkpoint(prefix: str, period: int = 1) -> Callable[..., None]:
    """An epoch-end callback writing ``mx.model.save_checkpoint(prefix, epoch + 1, symbol,
    arg_params, aux_params)`` every ``period`` epochs, as mxnet's.

    Example::

        >>> import os, tempfile
        >>> import gradhub_compat.mxnet as mx
        >>> fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
        >>> with tempfile.TemporaryDirectory() as d:
        ...     cb = mx.callback.do_checkpoint(os.path.join(d, "net"), period=2)
        ...     for epoch in range(4):
        ...         cb(epoch, fc, {"fc_weight": mx.nd.ones((2, 3))}, {})
        ...     sorted(os.listdir(d))
        ['net-0002.params', 'net-0004.params', 'net-symbol.json']
    """
    period = int(max(1, period))

    def _callback(iter_no: int, sym: Any, arg: Any, aux: Any) -> None:
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)

    return _callback


def log_train_metric(period: int, auto_reset: bool = False) -> Callable[[Any], None]:
    """A batch-end callback logging ``Iter[EPOCH] Batch[N] Train-NAME=VALUE`` every ``period``
    batches (and, with ``auto_reset``, resetting the metric's local counters), as mxnet's."""

    def _callback(param: Any) -> None:
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info(
                    "Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch, name, value
                )
            if auto_reset:
                param.eval_metric.reset_local()

    return _callback


class Speedometer:
    """A batch-end callback logging the speed (samples per second) and the metric every
    ``frequent`` batches, as mxnet's: ``Epoch[E] Batch [A-B]\\tSpeed: S samples/sec\\tNAME=V``
    (``auto_reset`` resets the metric's local counters after each message; without it the
    range reads ``[0-B]``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> sp = mx.callback.Speedometer(batch_size=32, frequent=2)
        >>> for n in range(3):
        ...     sp(mx.callback.BatchEndParam(epoch=0, nbatch=n, eval_metric=None, locals=None))
        >>> sp.init, sp.last_count
        (True, 2)
    """

    def __init__(self, batch_size: int, frequent: int = 50, auto_reset: bool = True) -> None:
        self.batch_size = batch_size
        self.frequent = frequent
        self.init = False
        self.tic = 0.0
        self.last_count = 0
        self.auto_reset = auto_reset

    def __call__(self, param: Any) -> None:
        count = param.nbatch
        if self.last_count > count:
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent != 0:
            return
        try:
            speed = self.frequent * self.batch_size / (time.time() - self.tic)
        except ZeroDivisionError:
            speed = float("inf")
        if param.eval_metric is not None:
            name_value = param.eval_metric.get_name_value()
            values = sum(name_value, ())
            if self.auto_reset:
                param.eval_metric.reset_local()
                msg = "Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec" + "\t%s=%f" * len(
                    name_value
                )
                logging.info(msg, param.epoch, count - self.frequent, count, speed, *values)
            else:
                msg = "Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec" + "\t%s=%f" * len(
                    name_value
                )
                logging.info(msg, param.epoch, count, speed, *values)
        else:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count, speed)
        self.tic = time.time()


class ProgressBar:
    """A batch-end callback logging a progress bar of ``length`` characters for ``total``
    batches, as mxnet's."""

    def __init__(self, total: int, length: int = 80) -> None:
        self.bar_len = length
        self.total = total

    def __call__(self, param: Any) -> None:
        count = param.nbatch
        filled_len = round(self.bar_len * count / float(self.total))
        percents = math.ceil(100.0 * count / float(self.total))
        prog_bar = "=" * filled_len + "-" * (self.bar_len - filled_len)
        logging.info("[%s] %s%s\r", prog_bar, percents, "%")


class LogValidationMetricsCallback:
    """An ``eval_end_callback`` logging ``Epoch[E] Validation-NAME=VALUE``, as mxnet's."""

    def __call__(self, param: Any) -> None:
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)
