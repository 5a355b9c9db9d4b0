"""nnabla's initializers: ``import gradhub_compat.nnabla.initializer as I``.

The initializers that the parametric functions accept as ``w_init``/``b_init`` (callables taking
the parameter's shape), with nnabla 1.39's names, arguments and formulas. ``UniformInitializer``,
``NormalInitializer``, ``ConstantInitializer`` and ``calc_uniform_lim_glorot`` are gradhub-nn-ops'
(float32 by default); the others follow nnabla's code. With ``rng=None`` an initializer draws
from a generator seeded 313, as nnabla's ``random.prng``.

Example::

    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.initializer as I
    >>> import gradhub_compat.nnabla.parametric_functions as PF
    >>> h = PF.affine(nn.Variable((1, 2)), 1, w_init=I.ConstantInitializer(1.0))
    >>> nn.get_parameters()["affine/W"].d
    array([[1.],
           [1.]], dtype=float32)
    >>> nn.clear_parameters()
    >>> I.calc_normal_std_he_forward(2, 4, kernel=(3, 3))  # sqrt(2 / (9 * 2))
    0.3333333333333333
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from gradhub import get_default_dtype
from gradhub_nn_ops.parametric import (
    ConstantInitializer,
    NormalInitializer,
    UniformInitializer,
    calc_uniform_lim_glorot,
)

__all__ = [
    "BaseInitializer",
    "ConstantInitializer",
    "NormalInitializer",
    "OrthogonalInitializer",
    "RangeInitializer",
    "UniformInitializer",
    "UniformIntInitializer",
    "calc_normal_std_glorot",
    "calc_normal_std_he_backward",
    "calc_normal_std_he_forward",
    "calc_uniform_lim_glorot",
]


_PRNG: list[Any] = []


def _rng(rng: Any) -> Any:
    """``rng``, or this module's generator (seed 313, as nnabla's ``random.prng``; made on use)."""
    if rng is not None:
        return rng
    if not _PRNG:
        _PRNG.append(np.random.RandomState(313))
    return _PRNG[0]


class BaseInitializer:
    """Base class of user-defined initializers (as nnabla's): subclass and define
    ``__call__(shape)`` returning an array of that shape."""

    def __call__(self, shape: Sequence[int]) -> np.ndarray:
        raise NotImplementedError(
            f"nnabla.initializer: {type(self).__name__} must define __call__(shape)"
        )


class UniformIntInitializer(BaseInitializer):
    """Integers drawn uniformly from ``[lim[0], lim[1])`` (numpy's ``randint``), as nnabla."""

    def __init__(self, lim: Sequence[int] = (0, 10), rng: Any = None) -> None:
        self.lim = tuple(lim)
        self.rng = rng

    def __call__(self, shape: Sequence[int]) -> np.ndarray:
        return np.asarray(_rng(self.rng).randint(self.lim[0], self.lim[1], size=tuple(shape)))

    def __repr__(self) -> str:
        return f"UniformIntInitializer({self.lim!r})"


class RangeInitializer(BaseInitializer):
    r"""``x[..., i] = start + step * i`` along the last axis, broadcast over the others."""

    def __init__(self, start: float = 0, step: float = 1) -> None:
        self.start = start
        self.step = step

    def __call__(self, shape: Sequence[int]) -> np.ndarray:
        shape = tuple(shape)
        a = np.arange(0, shape[-1], 1)
        return np.broadcast_to(self.start + a * self.step, shape)


class OrthogonalInitializer(BaseInitializer):
    """An orthogonal matrix (Saxe et al.) over ``(shape[0], prod(shape[1:]))`` times ``gain``:
    the orthonormal factor of the SVD of a standard normal draw, as nnabla."""

    def __init__(self, gain: float = 1.0, rng: Any = None) -> None:
        self.gain = gain
        self.rng = rng

    def __call__(self, shape: Sequence[int]) -> np.ndarray:
        shape = tuple(shape)
        flat_shape = (shape[0], math.prod(shape[1:]))
        x = _rng(self.rng).normal(0.0, 1.0, flat_shape)
        u, _, v = np.linalg.svd(x, full_matrices=False)
        q = u if u.shape == flat_shape else v
        return np.asarray(q.reshape(shape) * self.gain, dtype=get_default_dtype())

    def __repr__(self) -> str:
        return f"OrthogonalInitializer({self.gain})"


def calc_normal_std_he_forward(inmaps: int, outmaps: int, kernel: Sequence[int] = (1, 1)) -> float:
    r"""He's standard deviation for the forward pass: :math:`\sqrt{2 / (K \cdot inmaps)}`."""
    return float(np.sqrt(2.0 / (math.prod(kernel) * inmaps)))


def calc_normal_std_he_backward(inmaps: int, outmaps: int, kernel: Sequence[int] = (1, 1)) -> float:
    r"""He's standard deviation for the backward pass: :math:`\sqrt{2 / (K \cdot outmaps)}`."""
    return float(np.sqrt(2.0 / (math.prod(kernel) * outmaps)))


def calc_normal_std_glorot(inmaps: int, outmaps: int, kernel: Sequence[int] = (1, 1)) -> float:
    r"""Glorot's standard deviation: :math:`\sqrt{2 / (K (inmaps + outmaps))}`."""
    return float(np.sqrt(2.0 / (math.prod(kernel) * (inmaps + outmaps))))


def __getattr__(name: str) -> Any:
    if name == "WeightNormalizationScaleInitializer":  # (defined with the PF layers using it)
        from ._pf_more import WeightNormalizationScaleInitializer

        return WeightNormalizationScaleInitializer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
