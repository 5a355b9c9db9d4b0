"""Axis permutation of the core: ``Transpose`` (``x.T``, ``F.transpose(x, axes)``).

Transpose's backward rule is Transpose by the inverse permutation, so derivatives of any order
need no plugin. The core uses it for ``Variable.T`` and to move a batch axis
(:func:`gradhub.batching.moveaxis`, ``vmap``'s ``in_axes``/``out_axes``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..ops import call
from ..registry import Sample


def permutation(axes: Any, ndim: int) -> tuple[int, ...]:
    """The permutation ``axes`` of ``ndim`` axes, normalized (negative entries count from the
    end); ``None`` reverses the axes. Raises naming ``transpose`` and ``axes`` for anything that
    is not a permutation.

    Example::

        >>> permutation((-1, 0, 1), 3), permutation(None, 3)
        ((2, 0, 1), (2, 1, 0))
    """
    if axes is None:
        return tuple(range(ndim))[::-1]
    if isinstance(axes, (int, np.integer)):
        axes = (axes,)
    out = []
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"transpose: axes must hold ints, got {tuple(axes)!r}")
        if not -ndim <= int(a) < ndim:
            raise ValueError(
                f"transpose: axes={tuple(axes)} holds {a}, out of range for an input with "
                f"{ndim} dims"
            )
        out.append(int(a) % ndim)
    if sorted(out) != list(range(ndim)):
        raise ValueError(
            f"transpose: axes={tuple(axes)} must be a permutation of the {ndim} input dims"
        )
    return tuple(out)


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _transpose(xp: Any, x: Any, axes: Any = None) -> Any:
    return x.transpose(permutation(axes, x.ndim))


def _transpose_bw(gy, inputs, in_shapes, outputs, out_shapes, axes):  # type: ignore[no-untyped-def]
    perm = permutation(axes, len(in_shapes[0]))
    return [call("Transpose", gy[0], axes=_inverse(perm))]


def _transpose_fast(xp, gy, x, xs, y, ys, axes):  # type: ignore[no-untyped-def]
    return [gy[0].transpose(_inverse(permutation(axes, len(xs[0]))))]


def _transpose_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((2, 3, 4)),), {"axes": (2, 0, 1)}, name="3-d")
    yield Sample((rng.standard_normal((3, 4)),), {"axes": (1, 0)}, name="2-d")
    yield Sample((rng.standard_normal((2, 3, 2)),), {"axes": (-1, 0, -2)}, name="negative axes")
    yield Sample((rng.standard_normal((3, 2)),), {"axes": None}, name="axes=None reverses")
    yield Sample((rng.standard_normal(()),), {"axes": ()}, name="0-d")
    yield Sample((rng.standard_normal((0, 3)),), {"axes": (1, 0)}, name="size-0")
    yield Sample(
        (rng.standard_normal((4, 3, 2)).transpose(2, 0, 1),),
        {"axes": (1, 2, 0)},
        name="non-contiguous",
    )


def _transpose_ref(x: np.ndarray, axes: Any = None) -> np.ndarray:
    if axes is None:
        return np.transpose(x)
    return np.transpose(x, [a % x.ndim for a in axes])


_DOC = """Permute the axes of ``x``: ``y.shape[i] = x.shape[axes[i]]``.

``axes=None`` reverses the axes (``x.T``); negative entries count from the end. The gradient is
the incoming gradient permuted back: ``Transpose(gy, argsort(axes))``.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> F.transpose(gh.Variable(np.zeros((2, 3, 4))), (2, 0, 1)).shape
    (4, 2, 3)
"""


def register_functions(register: Any) -> None:
    """Register Transpose."""
    register.function(
        "Transpose",
        _transpose,
        attrs={"axes": None},
        fast_backward=_transpose_fast,
        rule=_transpose_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_transpose_samples,
        reference=_transpose_ref,
        doc=_DOC,
    )
