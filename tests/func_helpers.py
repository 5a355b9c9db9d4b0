"""Shared cases of the gradhub.func tests: small functions of core operations, their numpy
twins, and float64 central differences."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))


def num_jac(fn: Callable[..., np.ndarray], args: list[np.ndarray], i: int) -> np.ndarray:
    """d fn / d args[i] by float64 central differences, shape out.shape + args[i].shape."""
    eps = 1e-6
    x = args[i].astype(np.float64)
    out = np.asarray(fn(*args))
    jac = np.zeros(out.shape + x.shape)
    for k in range(x.size):
        d = np.zeros(x.size)
        d[k] = eps
        plus = [*args]
        minus = [*args]
        plus[i] = x + d.reshape(x.shape)
        minus[i] = x - d.reshape(x.shape)
        col = (np.asarray(fn(*plus)) - np.asarray(fn(*minus))) / (2 * eps)
        jac[(..., *np.unravel_index(k, x.shape))] = col
    return jac


def f_vec(x: Any, y: Any) -> Any:
    """R^4 x R^3 -> R^3, nonlinear in both (core functions only)."""
    return (A @ (x * x)) * y + y**3.0 / 2.0


def f_vec_np(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return (A @ (x * x)) * y + y**3.0 / 2.0


def f_scalar(x: Any, y: Any) -> Any:
    return (f_vec(x, y) * f_vec(x, y)).sum()


def f_scalar_np(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return (f_vec_np(x, y) ** 2).sum()


X = RNG.standard_normal(4)
Y = RNG.standard_normal(3)
