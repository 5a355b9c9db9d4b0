"""Seeded random graphs of the core's own functions, for the tests that compare two ways of
computing the same thing on many graphs (plans against the engine, transforms against loops).

:func:`grow` appends functions of values already in a pool, so values get shared by several
consumers. Every function is defined for every real input (logarithms of positive values,
divisions by values at least 1), and takes arrays of any shape (sums run over the last axis).
"""

from __future__ import annotations

from collections.abc import Callable

import gradhub as gh
import numpy as np

Unary = Callable[[gh.Variable], gh.Variable]
Binary = Callable[[gh.Variable, gh.Variable], gh.Variable]

#: one-input functions (operators, Log, Abs, powers, sums)
UNARY: list[Unary] = [
    lambda v: v * 1.5,
    lambda v: v + 0.25,
    lambda v: -v,
    lambda v: v * v,
    lambda v: 2.0 - v,
    lambda v: v / 3.0,
    lambda v: 1.0 / (v * v + 1.0),
    lambda v: gh.functions.log(v * v + 0.5),
    lambda v: abs(v),
    lambda v: (v * v + 1.0) ** 1.5,
    lambda v: gh.functions.sum(v, axis=-1, keepdims=True) * v,
    lambda v: v - gh.functions.sum(v) * 0.1,
]
#: two-input functions (of values of one shape)
BINARY: list[Binary] = [
    lambda a, b: a + b,
    lambda a, b: a * b,
    lambda a, b: a - b,
    lambda a, b: a / (b * b + 1.0),
]


def grow(rng: np.random.Generator, pool: list[gh.Variable], n: int) -> None:
    """Append ``n`` random functions of values already in ``pool`` (drawn from ``rng``)."""
    for _ in range(n):
        if rng.random() < 0.55:
            f = UNARY[int(rng.integers(len(UNARY)))]
            pool.append(f(pool[int(rng.integers(len(pool)))]))
        else:
            g = BINARY[int(rng.integers(len(BINARY)))]
            pool.append(g(pool[int(rng.integers(len(pool)))], pool[int(rng.integers(len(pool)))]))
