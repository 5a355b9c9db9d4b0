"""chainer's ``chainer.reporter.Summary`` and ``DictSummary`` (chainer 7.8.1 ``reporter.py``),
the running means that :class:`~.extensions.LogReport`, :class:`~.extensions.Evaluator` and the
best-value triggers keep."""

from __future__ import annotations

import collections
import json
import warnings
from typing import Any

import numpy as np
from gradhub.variable import Variable as _NativeVariable

from .._device import activate as _activate

__all__ = ["DictSummary", "Summary", "is_writer"]


def activate(value: Any) -> Any:
    """The context making the device of ``value`` current (nothing for numbers and numpy)."""
    if isinstance(value, (np.ndarray, np.generic)) or not hasattr(value, "shape"):
        return _activate(None)
    return _activate(value)


def is_writer(serializer: Any) -> bool:
    """Whether ``serializer`` saves (chainer's ``isinstance(s, serializer.Serializer)``) rather
    than loads."""
    from ..serializers import DictionarySerializer

    return isinstance(serializer, DictionarySerializer)


class Summary:
    """The running sums of a sequence of scalars: ``add(value, weight=1)`` accumulates
    ``weight * value`` and ``weight * value**2`` (in the values' dtype, as chainer),
    ``compute_mean()`` is ``sum / total weight``, ``make_statistics()`` the mean and the
    standard deviation ``sqrt(E[x²] - mean²)``."""

    def __init__(self) -> None:
        self._x: Any = 0.0
        self._x2: Any = 0.0
        self._n: Any = 0

    def add(self, value: Any, weight: Any = 1) -> None:
        """Accumulate a scalar (a number or a 0-d array) with ``weight``."""
        with activate(value):
            self._x += weight * value
            self._x2 += weight * value * value
            self._n += weight

    def compute_mean(self) -> Any:
        """The weighted mean."""
        return self._x / self._n

    def make_statistics(self) -> tuple[Any, Any]:
        """(mean, standard deviation)."""
        mean = self._x / self._n
        var = self._x2 / self._n - mean * mean
        with activate(var):
            return mean, np.sqrt(var)

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``_x``, ``_x2``, ``_n``."""
        try:
            self._x = serializer("_x", self._x)
            self._x2 = serializer("_x2", self._x2)
            self._n = serializer("_n", self._n)
        except KeyError:
            warnings.warn("The previous statistics are not saved.", stacklevel=2)


class DictSummary:
    """A :class:`Summary` per key: ``add(d)`` accumulates the scalar entries of ``d`` (numbers,
    0-d arrays, Variables of 0-d arrays; a tuple ``(value, weight)`` is weighted), other
    entries are skipped; ``compute_mean()`` gives ``{key: mean}``, ``make_statistics()`` adds
    ``key.std``."""

    def __init__(self) -> None:
        self._summaries: collections.defaultdict[str, Summary] = collections.defaultdict(Summary)

    def add(self, d: dict[str, Any]) -> None:
        """Accumulate the scalar entries of ``d``."""
        summaries = self._summaries
        for k, v in d.items():
            w: Any = 1
            if isinstance(v, tuple):
                w = v[1]
                v = v[0]
                if isinstance(w, _NativeVariable):
                    w = w._data
                if not np.isscalar(w) and getattr(w, "ndim", -1) != 0:
                    raise ValueError(f"Given weight to {k} was not scalar.")
            if isinstance(v, _NativeVariable):
                v = v._data
            if np.isscalar(v) or getattr(v, "ndim", -1) == 0:
                summaries[k].add(v, weight=w)

    def compute_mean(self) -> dict[str, Any]:
        """``{key: mean}``."""
        return {name: summary.compute_mean() for name, summary in self._summaries.items()}

    def make_statistics(self) -> dict[str, Any]:
        """``{key: mean, key + '.std': standard deviation}``."""
        stats = {}
        for name, summary in self._summaries.items():
            mean, std = summary.make_statistics()
            stats[name] = mean
            stats[name + ".std"] = std
        return stats

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``_names`` (a JSON list) and ``_summaries/<i>/...``."""
        if is_writer(serializer):
            names = list(self._summaries.keys())
            serializer("_names", json.dumps(names))
            for index, name in enumerate(names):
                self._summaries[name].serialize(serializer["_summaries"][str(index)])
        else:
            self._summaries.clear()
            try:
                names = json.loads(serializer("_names", ""))
            except KeyError:
                warnings.warn("The names of statistics are not saved.", stacklevel=2)
                return
            for index, name in enumerate(names):
                self._summaries[name].serialize(serializer["_summaries"][str(index)])
