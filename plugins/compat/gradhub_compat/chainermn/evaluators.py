"""chainermn's ``create_multi_node_evaluator``: an evaluator whose ``evaluate()`` returns each
metric's mean over the ranks.

chainermn patches the evaluator it is given (a ``chainer.training.extensions.Evaluator`` there)
so that ``evaluate()`` calls the original, then replaces every value ``v`` of the returned dict by
``allreduce_obj(v) / size``, the names taken in sorted order. The same here, for any object with
an ``evaluate()`` that returns a dict of numbers, numpy arrays or Variables (the chainer layer has
no ``Evaluator`` of its own: write the evaluation loop, return the local means). Where chainermn
sums any pickled object, the values here are summed as float64 arrays (nothing is pickled), and
before that the ranks check that they report the same names and values that can be averaged: a
rank with other names raises ``ValueError``, a value of another type ``TypeError``, on every rank,
instead of leaving the others waiting in a collective.

With ``r`` ranks each averaging over its own equal-size part of the data, the result is
:math:`\\frac{1}{r}\\sum_{k} \\bar m_k`, the mean over the whole data set.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from .communicators import Communicator


def _value(name: str, v: Any) -> Any:
    """A number or numpy array for ``allreduce_obj``: Variables give their array."""
    for attr in ("array", "d"):
        inner = getattr(v, attr, None)
        if isinstance(inner, np.ndarray):
            v = inner
            break
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]
    if isinstance(v, (bool, np.bool_)) or not isinstance(
        v, (int, float, np.integer, np.floating, np.ndarray)
    ):
        raise TypeError(
            "chainermn.create_multi_node_evaluator: evaluate() returned "
            f"{name!r}: {type(v).__name__}; the ranks average numbers, numpy arrays and Variables"
        )
    return v


def create_multi_node_evaluator(actual_evaluator: Any, communicator: Any) -> Any:
    """Patch ``actual_evaluator`` so that ``evaluate()`` returns the mean over the ranks of each
    value its own ``evaluate()`` returns (chainermn's function); returns the same object.

    Every rank must call ``evaluate()`` (it runs collectives) and report the same names.

    Example (one process: the mean over one rank is the value itself)::

        >>> from gradhub_compat import chainermn
        >>> class Local:
        ...     def evaluate(self):
        ...         return {"main/loss": 0.25, "main/accuracy": 0.5}
        >>> comm = chainermn.create_communicator("naive")  # doctest: +SKIP
        >>> ev = chainermn.create_multi_node_evaluator(Local(), comm)  # doctest: +SKIP
        >>> ev.evaluate()  # doctest: +SKIP
        {'main/accuracy': 0.5, 'main/loss': 0.25}
    """
    if not isinstance(communicator, Communicator):
        raise TypeError(
            "chainermn.create_multi_node_evaluator: 'communicator' must be a chainermn "
            f"communicator (create_communicator(...)), got {type(communicator).__name__}"
        )
    original = getattr(actual_evaluator, "evaluate", None)
    if not callable(original):
        raise TypeError(
            "chainermn.create_multi_node_evaluator: 'actual_evaluator' needs an evaluate() "
            f"method, {type(actual_evaluator).__name__} has none"
        )

    def evaluate(self: Any) -> dict[str, Any]:
        local = original()
        if not isinstance(local, dict):
            raise TypeError(
                "chainermn.create_multi_node_evaluator: evaluate() must return a dict of "
                f"metrics, got {type(local).__name__}"
            )
        names = sorted(local)
        first = communicator.bcast_obj(names)
        values: dict[str, Any] = {}
        problem: Exception | None = None
        try:
            values = {n: _value(n, local[n]) for n in names}
        except TypeError as e:
            problem = e
        flags = np.array([names != first, problem is not None], dtype=np.float64)
        differs, bad = (int(f) for f in communicator.allreduce_obj(flags))
        if bad:  # raised on every rank, with the rank's own message where it has one
            raise problem or TypeError(
                "chainermn.create_multi_node_evaluator: evaluate() returned a value that cannot "
                f"be averaged on {bad} other rank(s)"
            )
        if differs:
            raise ValueError(
                "chainermn.create_multi_node_evaluator: the ranks' evaluate() returned different "
                f"names ({differs} rank(s) differ from rank 0's {first}; rank "
                f"{communicator.rank} has {names})"
            )
        size = communicator.size
        return {n: communicator.allreduce_obj(values[n]) / size for n in names}

    actual_evaluator._mn_original_evaluate = original
    actual_evaluator._mn_communicator = communicator
    actual_evaluator.evaluate = types.MethodType(evaluate, actual_evaluator)
    return actual_evaluator
