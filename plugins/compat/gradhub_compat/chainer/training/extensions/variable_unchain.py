"""chainer's ``unchain_variables`` extension (chainer 7.8.1
``chainer/training/extensions/variable_unchain.py``)."""

from __future__ import annotations

from typing import Any

from ..extension import Extension

__all__ = ["unchain_variables"]


def _keep_graph_on_report() -> Any:
    from ... import config

    return getattr(config, "keep_graph_on_report", False)


class unchain_variables(Extension):
    """``unchain_variables()``: a trainer extension that cuts the graphs of the Variables in
    ``trainer.observation`` (``Variable.unchain_backward()`` on each), to free the graphs that
    reported values keep while ``chainer.config.keep_graph_on_report`` is True.

    Its ``priority`` is 0, so it runs after every other extension of the iteration. Its
    ``trigger`` is a method: each call returns the value ``keep_graph_on_report`` had at the
    previous call (at ``initialize``, for the first call; None before ``initialize``) and
    remembers the current value, so the extension runs in the iterations that reported with
    the flag on. Entries of the observation that are not Variables (numbers, arrays) are left
    as they are.

    Example::

        >>> import numpy as np
        >>> from types import SimpleNamespace
        >>> from gradhub_compat import chainer
        >>> from gradhub_compat.chainer.training import extensions
        >>> x = chainer.Variable(np.array([1.0, 2.0], np.float32))
        >>> loss = chainer.functions.sum(x * x)
        >>> ext = extensions.unchain_variables()
        >>> ext(SimpleNamespace(observation={"main/loss": loss}))
        >>> ext.priority, loss.creator is None
        (0, True)
    """

    priority = 0

    def __init__(self) -> None:
        self._prev_flag: Any = None

    def initialize(self, trainer: Any) -> None:
        """Remember ``chainer.config.keep_graph_on_report`` for the first trigger call."""
        self._prev_flag = _keep_graph_on_report()

    def trigger(self, trainer: Any) -> Any:  # type: ignore[override]
        """The flag's value at the previous call (see the class docstring)."""
        flag = self._prev_flag
        self._prev_flag = _keep_graph_on_report()
        return flag

    def __call__(self, trainer: Any) -> None:
        from ... import Variable

        for var in list(trainer.observation.values()):
            if isinstance(var, Variable):
                var.unchain_backward()
