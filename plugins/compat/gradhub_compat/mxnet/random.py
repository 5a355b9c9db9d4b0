"""mxnet's random numbers: ``mx.random.seed`` and ``mx.nd.random.uniform``/``normal``
(also ``mx.random.uniform``/``normal``), with mxnet 1.9.1's signatures.

The draws come from gradhub's shared generator (:func:`gradhub.random.generator`), and
``mx.random.seed(n)`` is :func:`gradhub.seed` (it reseeds every gradhub random source, as
mxnet's ``ctx="all"``). Seeded programs repeat their draws, but the numbers differ from
mxnet's own generator (docs/migration-mxnet.md).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> mx.random.seed(42)
    >>> a = mx.nd.random.uniform(0, 1, shape=(2, 3))
    >>> mx.random.seed(42)
    >>> b = mx.nd.random.uniform(0, 1, shape=(2, 3))
    >>> a.shape, a.dtype.__name__, bool((a.asnumpy() == b.asnumpy()).all())
    ((2, 3), 'float32', True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradhub
import numpy as np

from .context import Context
from .ndarray import NDArray, _ctx, _shape, refuse_traced

__all__ = ["normal", "seed", "uniform"]

_DTYPES = (np.float16, np.float32, np.float64)


def seed(seed_state: int, ctx: Any = "all") -> None:
    """Seed the random draws with ``seed_state`` (an int >= 0): :func:`gradhub.seed`. ``ctx``
    is ``"all"`` or a Context; gradhub has one generator for every context, so both reseed it.
    """
    if isinstance(seed_state, bool) or not isinstance(seed_state, (int, np.integer)):
        raise ValueError(f"mx.random.seed: seed_state must be int, got {seed_state!r}")
    if not (ctx == "all" or isinstance(ctx, Context)):
        raise ValueError(f'mx.random.seed: ctx must be "all" or a Context, got {ctx!r}')
    gradhub.seed(int(seed_state))


def _draw(
    fn: str,
    sample: Callable[[np.random.Generator, Any, Any, tuple[int, ...]], np.ndarray],
    p1: Any,
    p2: Any,
    shape: Any,
    dtype: Any,
    ctx: Any,
    out: NDArray | None,
) -> NDArray:
    """Samples of shape ``shape`` ((1,) when None) for number parameters, or
    ``p1.shape + shape`` for NDArray parameters (one set of draws per parameter element)."""
    refuse_traced(f"nd.random.{fn}()", "every later call would get this call's draws (a constant)")
    extra = () if shape is None else _shape(shape)
    arrays = [p for p in (p1, p2) if isinstance(p, NDArray)]
    if arrays:
        if len(arrays) == 1 or p1.shape != p2.shape:
            raise ValueError(
                f"mx.nd.random.{fn}: both parameters must be NDArrays of one shape or both "
                f"numbers, got {type(p1).__name__} and {type(p2).__name__}"
            )
        size = (*p1.shape, *extra)
        pad = (Ellipsis,) + (None,) * len(extra)
        a, b = p1.asnumpy()[pad], p2.asnumpy()[pad]
        dt = np.dtype(dtype) if dtype is not None else np.dtype(p1.dtype)
        ctx = ctx if ctx is not None else p1.context
    else:
        for name, p in (("1st", p1), ("2nd", p2)):
            if isinstance(p, bool) or not isinstance(p, (int, float, np.number)):
                raise TypeError(
                    f"mx.nd.random.{fn}: the {name} parameter must be a number or an NDArray, "
                    f"got {type(p).__name__}"
                )
        size = extra or (1,)
        a, b = float(p1), float(p2)
        dt = np.dtype(dtype if dtype is not None else np.float32)
    if dt.type not in _DTYPES:
        raise TypeError(
            f"mx.nd.random.{fn}: dtype must be float16, float32 or float64, got {dt.name}"
        )
    values = sample(gradhub.random.generator(), a, b, size).astype(dt)
    if out is not None:
        if not isinstance(out, NDArray) or out.shape != values.shape:
            raise ValueError(
                f"mx.nd.random.{fn}: out must be an NDArray of shape {values.shape}, got "
                f"{getattr(out, 'shape', type(out).__name__)}"
            )
        out[:] = values.astype(out.dtype)
        return out
    c = _ctx(ctx)
    return NDArray(c.device().asarray(values), c)


def uniform(
    low: Any = 0,
    high: Any = 1,
    shape: Any = None,
    dtype: Any = None,
    ctx: Context | None = None,
    out: NDArray | None = None,
    **kwargs: Any,
) -> NDArray:
    """Samples of the uniform distribution on ``[low, high)``: shape ``shape`` ((1,) when not
    given) and float32 by default; NDArray ``low``/``high`` (one shape) give
    ``low.shape + shape``, one set of draws per element, in their dtype (as mxnet)."""

    def sample(g: np.random.Generator, a: Any, b: Any, size: tuple[int, ...]) -> np.ndarray:
        return a + (b - a) * g.random(size)

    return _draw("uniform", sample, low, high, shape, dtype, ctx, out)


def normal(
    loc: Any = 0,
    scale: Any = 1,
    shape: Any = None,
    dtype: Any = None,
    ctx: Context | None = None,
    out: NDArray | None = None,
    **kwargs: Any,
) -> NDArray:
    """Samples of the normal distribution with mean ``loc`` and standard deviation ``scale``
    (``>= 0``); shapes and dtypes as :func:`uniform`."""

    def sample(g: np.random.Generator, a: Any, b: Any, size: tuple[int, ...]) -> np.ndarray:
        if np.any(np.asarray(b) < 0):
            raise ValueError("mx.nd.random.normal: scale must be >= 0")
        return a + b * g.standard_normal(size)

    return _draw("normal", sample, loc, scale, shape, dtype, ctx, out)
