"""gradhub-nn-ops: searching (nnabla's ``SearchSorted`` and ``NonZero``).

Both return indices (int64) and have no gradient. Their kernels are array operations only
(comparisons and sums, ``nonzero``), so they run on every device.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub import Sample


def _searchsorted(xp: Any, sorted_sequence: Any, values: Any, right: bool = False) -> Any:
    s, v = sorted_sequence, values
    if s.ndim < 1 or v.ndim < 1 or s.ndim != v.ndim or s.shape[:-1] != v.shape[:-1]:
        raise ValueError(
            f"searchsorted: sorted_sequence of shape {tuple(s.shape)} and values of shape "
            f"{tuple(v.shape)} must have the same leading axes (..., N) and (..., M)"
        )
    a, b = s[..., None, :], v[..., :, None]
    before = (a <= b) if right else (a < b)
    return before.sum(axis=-1, dtype=np.int64)


def _nonzero(xp: Any, x: Any) -> Any:
    if x.ndim == 0:
        return xp.zeros((0, int(x != 0)), dtype=np.int64)
    return xp.stack(xp.nonzero(x)).astype(np.int64, copy=False)


def _searchsorted_samples(rng: np.random.Generator) -> Iterator[Sample]:
    s = np.sort(rng.integers(0, 10, (2, 5)).astype(np.float64), axis=-1)
    v = rng.integers(-1, 11, (2, 4)).astype(np.float64)
    yield Sample((s, v), {"right": False}, name="left")
    yield Sample((s, v), {"right": True}, name="right")
    yield Sample((np.array([1.0, 3.0, 5.0]), np.array([0.0, 3.0, 6.0, 4.0])), name="1-d")
    yield Sample(
        (np.sort(rng.standard_normal((2, 1, 3)), -1), rng.standard_normal((2, 1, 2))), name="3-d"
    )


def _nonzero_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((np.array([[0.0, 1.0, 0.0], [2.0, 0.0, -3.0]]),), name="2-d")
    yield Sample((np.array([0.0, 0.5, 0.0, 0.0, 1.0]),), name="1-d")
    yield Sample((np.zeros((2, 2)),), name="none")


def _searchsorted_ref(s: np.ndarray, v: np.ndarray, right: bool = False) -> np.ndarray:
    out = np.empty(v.shape, np.int64)
    for idx in np.ndindex(*v.shape[:-1]):
        out[idx] = np.searchsorted(s[idx], v[idx], side="right" if right else "left")
    return out


def register_functions(register: Any) -> None:
    """Register the searching functions."""
    f = register.function
    f(
        "SearchSorted",
        _searchsorted,
        snake="searchsorted",
        inputs=("sorted_sequence", "values"),
        attrs={"right": False},
        differentiable=False,
        samples=_searchsorted_samples,
        reference=_searchsorted_ref,
        doc="""searchsorted(sorted_sequence, values, right=False): for each of ``values`` the
index at which it would be inserted into its row of ``sorted_sequence`` to keep it sorted
(nnabla ``F.searchsorted``; ``numpy.searchsorted`` row by row).

``sorted_sequence`` has shape ``(..., N)`` (each row sorted ascending), ``values`` ``(..., M)``
with the same leading axes; the output (int64, no gradient) has ``values``' shape. With
``right=False`` the index is the number of elements ``< v``, with ``right=True`` of those
``<= v``.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> s = gh.Variable(np.array([[1.0, 3.0, 5.0, 7.0]]))
    >>> v = gh.Variable(np.array([[3.0, 6.0, 9.0]]))
    >>> F.searchsorted(s, v).d, F.searchsorted(s, v, right=True).d
    (array([[1, 3, 4]]), array([[2, 3, 4]]))
""",
    )
    f(
        "NonZero",
        _nonzero,
        snake="nonzero",
        differentiable=False,
        samples=_nonzero_samples,
        reference=lambda x: np.stack(np.nonzero(x)).astype(np.int64),
        doc="""nonzero(x): the indices of the nonzero elements of ``x`` (nnabla ``F.nonzero``),
one row per axis: shape ``(x.ndim, count)``, int64, in row-major order; no gradient.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> F.nonzero(gh.Variable(np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]))).d
    array([[0, 1, 1],
           [1, 0, 2]])
""",
    )
