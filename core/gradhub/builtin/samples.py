"""Sample generators of elementwise functions, for registrations' ``samples=``.

Each generator takes a ``numpy.random.Generator`` and yields :class:`gradhub.Sample` inputs that
the audit and the gradient checks evaluate: a matrix, a 0-d, a size-0 and a transposed
(non-contiguous) input for one-input functions; broadcasting pairs for two-input ones. Values
are drawn in ``[lo, hi]`` and kept away from the kinks named in ``avoid``, where a numerical
derivative is meaningless.

Example::

    >>> import numpy as np
    >>> from gradhub.builtin.samples import unary_samples
    >>> [s.name for s in unary_samples(0.5, 2.0)(np.random.default_rng(0))]
    ['(2,3)', '0-d', 'size-0', 'transposed']
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..registry import Sample, SampleFn

__all__ = ["BINARY_SHAPES", "binary_samples", "draw", "unary_samples"]

Shape = tuple[int, ...]


def draw(
    rng: np.random.Generator,
    shape: Shape,
    lo: float = -2.0,
    hi: float = 2.0,
    avoid: Sequence[float] = (),
    margin: float = 0.05,
) -> np.ndarray:
    """Uniform float64 values in ``[lo, hi]``, each at least ``margin`` away from ``avoid``."""
    x = rng.uniform(lo, hi, shape)
    for _ in range(100):
        bad = np.zeros(x.shape, dtype=bool)
        for k in avoid:
            bad |= np.abs(x - k) < margin
        if not bad.any():
            return x
        x = np.where(bad, rng.uniform(lo, hi, shape), x)
    raise RuntimeError("draw(): could not keep the samples away from the kinks")


def unary_samples(
    lo: float = -2.0,
    hi: float = 2.0,
    avoid: Sequence[float] = (),
    attrs: dict[str, Any] | None = None,
) -> SampleFn:
    """Samples of an elementwise function: a matrix, a 0-d, a size-0 and a transposed input."""

    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        a = dict(attrs or {})
        yield Sample((draw(rng, (2, 3), lo, hi, avoid),), dict(a), name="(2,3)")
        yield Sample((draw(rng, (), lo, hi, avoid),), dict(a), name="0-d")
        yield Sample((draw(rng, (0, 3), lo, hi, avoid),), dict(a), name="size-0")
        yield Sample((draw(rng, (3, 2), lo, hi, avoid).T,), dict(a), name="transposed")

    return samples


#: the operand shapes of :func:`binary_samples` (same shape, trailing, both ways, 0-d)
BINARY_SHAPES: tuple[tuple[Shape, Shape], ...] = (
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((3, 1), (1, 2)),
    ((), (2, 2)),
)


def binary_samples(
    lo0: float = -2.0,
    hi0: float = 2.0,
    lo1: float = -2.0,
    hi1: float = 2.0,
    avoid_equal: bool = False,
) -> SampleFn:
    """Samples of a broadcasting binary function (including a transposed operand)."""

    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        pairs = [(draw(rng, s0, lo0, hi0), s1, f"{s0}x{s1}") for s0, s1 in BINARY_SHAPES]
        pairs.append((draw(rng, (3, 2), lo0, hi0).T, (2, 3), "transposed"))
        for a, s1, name in pairs:
            b = draw(rng, s1, lo1, hi1)
            while avoid_equal and np.any(np.abs(a - b) < 0.05):
                b = draw(rng, s1, lo1, hi1)
            yield Sample((a, b), name=name)

    return samples
