"""chainer's ``chainer.utils.WalkerAlias`` (chainer 7.8.1's ``chainer/utils/walker_alias.py``):
Walker's alias method, drawing indices with given probabilities from numpy's global generator
with chainer's table and draws (a seeded run draws chainer's samples).

Example::

    >>> import numpy as np
    >>> from gradhub_compat.chainer.utils import WalkerAlias
    >>> np.random.seed(0)
    >>> WalkerAlias([0.0, 1.0, 3.0]).sample((5,))
    array([1, 2, 2, 1, 1], dtype=int32)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["WalkerAlias"]


class WalkerAlias:
    """``WalkerAlias(probs)``: the alias table of the probabilities ``probs`` (normalized by
    their sum, in float32): ``threshold`` (float32) and ``values`` (int32, two per entry), as
    chainer builds them. ``sample(shape)`` draws ``pb = numpy.random.uniform(0, n, shape)`` and
    gives ``values[2 * int(pb) + (threshold[int(pb)] < pb - int(pb))]`` (int32)."""

    def __init__(self, probs: Sequence[float] | np.ndarray) -> None:
        prob = np.array(probs, np.float32)
        prob /= np.sum(prob)
        n = len(prob)
        threshold = np.ndarray(n, np.float32)
        values = np.ndarray(n * 2, np.int32)
        il, ir = 0, 0
        pairs = sorted(zip(prob, range(n)))
        for p_i, i in pairs:
            # in float64, as chainer 7.8.1 computes it with numpy 1.x's scalar promotion
            p = float(p_i) * n
            while p > 1 and ir < il:
                values[ir * 2 + 1] = i
                p -= 1.0 - float(threshold[ir])
                ir += 1
            threshold[il] = p
            values[il * 2] = i
            il += 1
        for i in range(ir, n):
            values[i * 2 + 1] = 0
        self.threshold = threshold
        self.values = values

    def sample(self, shape: Any) -> np.ndarray:
        """Indices of the given shape drawn with the probabilities (numpy's global
        generator)."""
        thr_dtype = self.threshold.dtype
        pb = np.random.uniform(0, len(self.threshold), shape)
        index = pb.astype(np.int32)
        left_right = self.threshold[index] < (pb.astype(thr_dtype) - index.astype(thr_dtype))
        return self.values[index * 2 + left_right.astype(np.int32)]  # type: ignore[no-any-return]

    def sample_xp(self, xp: Any, shape: Any) -> np.ndarray:
        """:meth:`sample` (``xp`` must be numpy)."""
        if xp is not np:
            raise NotImplementedError(
                "chainer WalkerAlias.sample_xp: only numpy; see docs/migration-chainer.md"
            )
        return self.sample(shape)
