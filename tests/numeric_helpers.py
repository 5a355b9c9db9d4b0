"""Helpers shared by test files (not collected: the name does not start with ``test_``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def central_differences(
    f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6
) -> np.ndarray:
    """Central finite differences (float64) of the scalar function ``f`` at ``x``."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g
