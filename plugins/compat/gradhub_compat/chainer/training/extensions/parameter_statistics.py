"""chainer's ``ParameterStatistics`` extension (chainer 7.8.1)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ... import reporter
from ...backend import get_array_module, get_array_types
from .._summary import DictSummary
from ..extension import PRIORITY_WRITER, Extension
from ..util import get_trigger

__all__ = ["ParameterStatistics"]

_PERCENTS = (0.13, 2.28, 15.87, 50, 84.13, 97.72, 99.87)

_default_statistics: dict[str, Callable[[Any], Any]] = {
    "mean": lambda x: get_array_module(x).mean(x),
    "std": lambda x: get_array_module(x).std(x),
    "min": lambda x: get_array_module(x).min(x),
    "max": lambda x: get_array_module(x).max(x),
    "zeros": lambda x: get_array_module(x).count_nonzero(x == 0),
    "percentile": lambda x: get_array_module(x).percentile(x, _PERCENTS),
}


class ParameterStatistics(Extension):
    """``ParameterStatistics(links, statistics='default', report_params=True,
    report_grads=True, prefix=None, trigger=(1, 'epoch'), skip_nan_params=False)``: statistics
    of the parameters (``data``) and of their gradients (``grad``) of one link or a list of
    links, averaged over the iterations between firings of ``trigger`` and reported then.

    It runs at every iteration (its own trigger, ``PRIORITY_WRITER``, default name
    ``'parameter_statistics'``). For each link, each of its parameters ``namedparams()``
    (``/l1/W``...), each of ``data``/``grad`` and each statistic ``name: f`` it computes
    ``f(array.ravel())`` under the key ``'{prefix}/{link.name}{param}/{attr}/{name}'`` (no
    ``prefix/`` without a prefix; a link without a name, the model itself, gives ``'None'``,
    as chainer: ``'None/predictor/l1/W/data/mean'``); a statistic returning an array of
    several values gives the keys ``.../0``, ``.../1``.... The default statistics are
    ``mean``, ``std``, ``min``, ``max``, ``zeros`` (``count_nonzero(x == 0)``) and
    ``percentile`` (``percentile(x, (0.13, 2.28, 15.87, 50, 84.13, 97.72, 99.87))``, seven
    keys); ``statistics`` None reports nothing; ``register_statistics(name, f)`` adds one.
    With ``skip_nan_params`` an array holding a NaN gives ``nan`` for each statistic (one key,
    also for ``percentile``). The values are reported without an observer prefix, so
    ``LogReport`` logs them. As chainer's, an uninitialized parameter raises (``AttributeError``
    on its data, ``RuntimeError`` on its gradient) and the gradients before the first backward
    are NaN.

    Example::

        >>> import gradhub_compat.chainer.links as L
        >>> from gradhub_compat.chainer.training import extensions
        >>> ext = extensions.ParameterStatistics(L.Linear(2, 2), statistics={"max": max})
        >>> ext.default_name, ext.priority
        ('parameter_statistics', 300)
    """

    default_name = "parameter_statistics"  # type: ignore[assignment]
    priority = PRIORITY_WRITER
    report_key_template = "{prefix}{link_name}{param_name}/{attr_name}/{function_name}"
    default_statistics = _default_statistics

    def __init__(
        self,
        links: Any,
        statistics: Any = "default",
        report_params: bool = True,
        report_grads: bool = True,
        prefix: str | None = None,
        trigger: Any = (1, "epoch"),
        skip_nan_params: bool = False,
    ) -> None:
        if not isinstance(links, (list, tuple)):
            links = (links,)
        self._links: Iterable[Any] = links
        if statistics is None:
            statistics = {}
        elif isinstance(statistics, str):
            if statistics != "default":
                raise ValueError(
                    "ParameterStatistics: statistics must be a dict of functions, 'default' or "
                    f"None, got {statistics!r}"
                )
            statistics = self.default_statistics
        self._statistics: dict[str, Callable[[Any], Any]] = dict(statistics)
        self._attrs = [
            attr for attr, wanted in (("data", report_params), ("grad", report_grads)) if wanted
        ]
        self._prefix = prefix
        self._trigger = get_trigger(trigger)
        self._summary = DictSummary()
        self._skip_nan_params = skip_nan_params

    def __call__(self, trainer: Any) -> None:
        statistics: dict[str, Any] = {}
        array_types: Any = get_array_types()
        for link in self._links:
            link_name = getattr(link, "name", "None")
            for param_name, param in link.namedparams():
                for attr_name in self._attrs:
                    for function_name, function in self._statistics.items():
                        params = getattr(param, attr_name).ravel()
                        if self._skip_nan_params and get_array_module(params).isnan(params).any():
                            value: Any = np.nan
                        else:
                            value = function(params)
                        key = self.report_key_template.format(
                            prefix=self._prefix + "/" if self._prefix else "",
                            link_name=link_name,
                            param_name=param_name,
                            attr_name=attr_name,
                            function_name=function_name,
                        )
                        if isinstance(value, array_types) and value.size > 1:
                            statistics.update({f"{key}/{i}": v for i, v in enumerate(value)})
                        else:
                            statistics[key] = value
        self._summary.add(statistics)
        if self._trigger(trainer):
            reporter.report(self._summary.compute_mean())
            self._summary = DictSummary()

    def register_statistics(self, name: str, function: Callable[[Any], Any]) -> None:
        """Add the statistic ``name``: ``function(x)`` of the flattened array, one number or
        an array of several."""
        self._statistics[name] = function
