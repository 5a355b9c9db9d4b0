"""Helpers shared by test files (not collected: the name does not start with ``test_``)."""

from __future__ import annotations

from collections.abc import Callable

import gradhub as gh
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


def grad1(fn: object, *xs: gh.Variable, create_graph: bool = False) -> list[np.ndarray]:
    """Gradients of sum(fn(*xs)) w.r.t. xs, as arrays."""
    y = fn(*xs)  # type: ignore[operator]
    gs = gh.grad([y], list(xs), create_graph=create_graph)
    return [g.d for g in gs]  # type: ignore[union-attr]


def both_modes(fn: object, *xs: gh.Variable) -> list[np.ndarray]:
    """Gradients with the fast first-order rules and with the differentiable rules; they agree."""
    fast = grad1(fn, *xs)
    slow = grad1(fn, *xs, create_graph=True)
    for a, b in zip(fast, slow):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    return fast


def batch_normalization_reference(
    x: np.ndarray,
    gamma: np.ndarray | None,
    beta: np.ndarray | None,
    red: tuple[int, ...],
    eps: float = 1e-5,
) -> np.ndarray:
    mu = x.mean(axis=red, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=red, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y


def assert_same_arrays(a: list[np.ndarray], b: list[np.ndarray], what: str) -> None:
    """``a`` and ``b`` hold as many arrays, each pair of the same dtype and shape and equal bit
    for bit (the failure names ``what`` and the index)."""
    assert len(a) == len(b), what
    for k, (x, z) in enumerate(zip(a, b)):
        assert x.dtype == z.dtype and x.shape == z.shape, f"{what}: value {k}"
        np.testing.assert_array_equal(x, z, err_msg=f"{what}: value {k}")
