"""gradhub-nn-ops: random sources (nnabla's ``F.rand``, ``F.randn`` and ``F.randint``).

Each draws a constant (no gradient) from numpy's generator: the library's global generator for
``seed=-1`` (reseeded by ``gradhub.seed``, shared with dropout), else a generator of its own seed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub import Sample, Variable

from .arrays import _new_constant
from .math import int_arg
from .misc import _global_rng

Shape = tuple[int, ...]

# -- Rand / Randn / Randint --------------------------------------------------------------------


def _generator(fn: str, seed: Any) -> np.random.Generator:
    s = int_arg(fn, "seed", seed)
    if s < -1:
        raise ValueError(f"{fn}: seed must be -1 (the global generator) or >= 0, got {s}")
    return _global_rng() if s == -1 else np.random.default_rng(s)


def _shape(fn: str, shape: Any) -> Shape:
    vals = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    out = tuple(int_arg(fn, "shape", v) for v in vals)
    if any(v < 0 for v in out):
        raise ValueError(f"{fn}: shape must hold sizes >= 0, got {shape!r}")
    return out


def rand(low: float = 0, high: float = 1, shape: Any = (), seed: int = -1) -> Variable:
    r"""Uniform samples :math:`x \sim U(low, high)` of ``shape`` (nnabla ``F.rand``): a float32
    Variable that needs no gradient, on the current context's device.

    ``seed=-1`` draws from the global generator of dropout (reseeded by ``gradhub.seed``),
    ``seed >= 0`` gives the same values on every call (numpy's generator: not nnabla's values).

    Example::

        >>> import gradhub.functions as F
        >>> x = F.rand(-1, 1, shape=(2, 3), seed=0)
        >>> x.shape, x.d.dtype, bool((abs(x.d) <= 1).all())
        ((2, 3), dtype('float32'), True)
    """
    rng = _generator("rand", seed)
    return _new_constant(
        rng.uniform(float(low), float(high), _shape("rand", shape)).astype(np.float32)
    )


def randn(mu: float = 0, sigma: float = 1, shape: Any = (), seed: int = -1) -> Variable:
    r"""Normal samples :math:`x \sim N(\mu, \sigma)` of ``shape`` (nnabla ``F.randn``): a
    float32 Variable that needs no gradient. ``seed`` as in :func:`rand`.

    Example::

        >>> import gradhub.functions as F
        >>> F.randn(shape=(3,), seed=0).shape
        (3,)
    """
    rng = _generator("randn", seed)
    vals = rng.normal(float(mu), float(sigma), _shape("randn", shape))
    return _new_constant(np.asarray(vals).astype(np.float32))


def randint(low: int = 0, high: int = 1, shape: Any = (), seed: int = -1) -> Variable:
    r"""Integers drawn uniformly from :math:`[low, high)` of ``shape`` (nnabla ``F.randint``):
    an int32 Variable that needs no gradient. ``seed`` as in :func:`rand`.

    Example::

        >>> import gradhub.functions as F
        >>> x = F.randint(0, 5, shape=(4,), seed=0)
        >>> x.d.dtype, bool(((0 <= x.d) & (x.d < 5)).all())
        (dtype('int32'), True)
    """
    lo, hi = int_arg("randint", "low", low), int_arg("randint", "high", high)
    if hi <= lo:
        raise ValueError(f"randint: high must be larger than low, got low={lo}, high={hi}")
    rng = _generator("randint", seed)
    return _new_constant(rng.integers(lo, hi, _shape("randint", shape), dtype=np.int32))


def _rand_samples(kind: str) -> Any:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        a, b = (0, 5) if kind == "randint" else (-1.0, 2.0)
        yield Sample(
            (),
            {
                "low" if kind != "randn" else "mu": a,
                "high" if kind != "randn" else "sigma": b,
                "shape": (2, 3),
                "seed": 3,
            },
            name="2x3",
        )
        yield Sample((), {"shape": (), "seed": 0}, name="0-d")
        yield Sample((), {"shape": (0, 2), "seed": 1}, name="size-0")

    return samples


def _rand_ref(kind: str) -> Any:
    def ref(**kw: Any) -> np.ndarray:
        g = np.random.default_rng(kw.get("seed", -1))
        shape = tuple(kw.get("shape", ()))
        if kind == "rand":
            return g.uniform(kw.get("low", 0), kw.get("high", 1), shape).astype(np.float32)
        if kind == "randn":
            v = g.normal(kw.get("mu", 0), kw.get("sigma", 1), shape)
            return np.asarray(v).astype(np.float32)
        return g.integers(kw.get("low", 0), kw.get("high", 1), shape, dtype=np.int32)

    return ref


# -- registration ------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register the random sources."""
    c = register.composite
    c(
        "Rand",
        rand,
        samples=_rand_samples("rand"),
        reference=_rand_ref("rand"),
        differentiable=False,
    )
    c(
        "Randn",
        randn,
        samples=_rand_samples("randn"),
        reference=_rand_ref("randn"),
        differentiable=False,
    )
    c(
        "Randint",
        randint,
        samples=_rand_samples("randint"),
        reference=_rand_ref("randint"),
        differentiable=False,
    )
