"""Indexing of the core: ``GetItem`` (``x[key]``) and its scatter-add adjoint ``GetItemBackward``.

``Variable.__getitem__`` dispatches to GetItem. GetItem and GetItemBackward are each other's
adjoints, which closes indexing under differentiation: derivatives of any order of ``x[key]``
need no plugin. Keys follow numpy: ints, slices, None, Ellipsis, integer arrays (lists, integer
Variables) and boolean masks.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..ops import call
from ..registry import Sample
from ..variable import Variable


def _as_xp(xp: Any, a: Any) -> Any:
    return a if xp is np else xp.asarray(a)


def _scatter_add(xp: Any, out: Any, key: Any, values: Any) -> None:
    """``out[key] += values`` with duplicate indices accumulated, on any array module.

    ``xp.add.at`` is that operation in numpy and in CuPy (>= 12; gradhub-cuda needs >= 13), and
    a device's ``xp`` must provide it: no device branch here.
    """
    xp.add.at(out, key, values)


# -- GetItem / GetItemBackward ------------------------------------------------------------------


def normalize_key(key: Any, xp: Any = np, shape: Sequence[int] | None = None) -> tuple[Any, bool]:
    """Normalize an indexing key; return ``(key_tuple, has_advanced_index)``.

    Ints, slices, None and Ellipsis are kept; lists, integer arrays and integer Variables become
    integer index arrays; boolean arrays become the integer arrays of their ``nonzero()``, after
    a check (given the ``shape`` of the indexed array) that they have the sizes of the axes they
    index, as numpy's IndexError.
    """
    if not isinstance(key, tuple):
        key = (key,)
    out: list[Any] = []
    advanced = False
    used: list[int] = []  # per key entry: how many axes of the array it indexes (-1: Ellipsis)
    masks: list[tuple[int, Any]] = []  # (key entry, boolean array)
    for k in key:
        if isinstance(k, Variable):
            k = k.d
        if k is None or k is Ellipsis or isinstance(k, slice):
            out.append(k)
            used.append(-1 if k is Ellipsis else 0 if k is None else 1)
            continue
        if isinstance(k, (bool, np.bool_)):
            out.append(bool(k))
            used.append(0)
            advanced = True
            continue
        if isinstance(k, (int, np.integer)):
            out.append(int(k))
            used.append(1)
            continue
        a = np.asarray(k) if isinstance(k, (list, tuple)) else k
        if isinstance(k, (list, tuple)) and a.size == 0:  # [] is an empty index, as in numpy
            a = a.astype(np.intp)
        dtype = getattr(a, "dtype", None)
        if dtype is None or dtype.kind not in "biu":
            raise TypeError(
                "get_item: key entries must be ints, slices, None, Ellipsis or integer/boolean "
                f"arrays; got {type(k).__name__}"
                + (f" of dtype {dtype}" if dtype is not None else "")
            )
        advanced = True
        if dtype.kind == "b" and a.ndim > 0:
            masks.append((len(used), a))
            used.append(a.ndim)
            out.extend(_as_xp(xp, i) for i in a.nonzero())
        else:
            used.append(1)
            out.append(_as_xp(xp, a))
    if masks and shape is not None:
        _check_masks(masks, used, tuple(shape))
    return tuple(out), advanced


def _check_masks(masks: list[tuple[int, Any]], used: list[int], shape: tuple[int, ...]) -> None:
    """Each boolean array of a key has the sizes of the axes it indexes (``nonzero()`` of a
    shorter mask would silently index fewer rows)."""
    if -1 in used:  # the axes after Ellipsis count from the end
        cut = used.index(-1)
        rest = sum(used[cut + 1 :])
    else:
        cut, rest = len(used), 0
    for entry, mask in masks:
        if entry < cut:
            axis = sum(used[:entry])
        else:
            axis = len(shape) - rest + sum(used[cut + 1 : entry])
        for j, n in enumerate(mask.shape):
            if axis + j >= len(shape):
                break  # too many indices: numpy's own IndexError says so
            if shape[axis + j] != n:
                raise IndexError(
                    f"get_item: key: boolean index did not match the indexed array along axis "
                    f"{axis + j}: the axis has size {shape[axis + j]} but the boolean index has "
                    f"size {n} (a mask must have the shape of the axes it indexes)"
                )


def _get_item(xp: Any, x: Any, key: Any = ()) -> Any:
    k, _ = normalize_key(key, xp, x.shape)
    y = x[k]
    return y if type(y) is type(x) else xp.asarray(y)


def _get_item_bw(gy, inputs, in_shapes, outputs, out_shapes, key):  # type: ignore[no-untyped-def]
    return [call("GetItemBackward", gy[0], key=key, shape=tuple(in_shapes[0]))]


def _get_item_backward(xp: Any, g: Any, key: Any = (), shape: Sequence[int] = ()) -> Any:
    k, advanced = normalize_key(key, xp, shape)
    out = xp.zeros(tuple(shape), dtype=g.dtype)
    if advanced:
        _scatter_add(xp, out, k, g)
    else:
        out[k] = g
    return out


def _get_item_backward_bw(gy, inputs, in_shapes, outputs, out_shapes, key, shape):  # type: ignore[no-untyped-def]
    return [call("GetItem", gy[0], key=key)]


_KEYS: list[tuple[str, tuple[int, ...], Any]] = [
    ("int", (3, 4), 1),
    ("negative int", (3, 4), (-1, 2)),
    ("slices with steps", (4, 5), (slice(1, None, 2), slice(None, None, -2))),
    ("None and Ellipsis", (2, 3, 4), (None, Ellipsis, 1)),
    ("int to 0-d", (3, 4), (2, 3)),
    ("empty slice", (3, 4), (slice(2, 2), slice(None))),
    ("int array with duplicates", (4, 3), np.array([0, 2, 0, 3, 0])),
    ("list index", (5,), [4, 4, 1]),
    ("two arrays broadcast", (3, 4), (np.array([[0], [2]]), np.array([1, 1, 3]))),
    ("array after slice", (2, 3, 4), (slice(None), np.array([2, 0, 2]))),
    ("boolean mask", (3, 4), np.array([True, False, True])),
    ("negative array index", (6,), np.array([-1, -6, -1])),
]


def _get_item_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for name, shape, key in _KEYS:
        yield Sample((rng.standard_normal(shape),), {"key": key}, name=name)
    x = rng.standard_normal((4, 3)).T
    yield Sample((x,), {"key": (slice(None), np.array([3, 0, 3]))}, name="non-contiguous input")
    yield Sample((rng.standard_normal(()),), {"key": ()}, name="0-d with ()")
    yield Sample((rng.standard_normal(()),), {"key": None}, name="0-d with None")


def _flat_index(shape: Sequence[int], key: Any) -> np.ndarray:
    """Which flat input element each output element of ``x[key]`` reads (numpy, for references)."""
    k, _ = normalize_key(key)
    return np.asarray(np.arange(math.prod(shape)).reshape(tuple(shape))[k])


def _get_item_ref(x: np.ndarray, key: Any = ()) -> np.ndarray:
    return x.reshape(-1)[_flat_index(x.shape, key)]


def _get_item_backward_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for name, shape, key in _KEYS:
        out_shape = _flat_index(shape, key).shape
        yield Sample((rng.standard_normal(out_shape),), {"key": key, "shape": shape}, name=name)


def _get_item_backward_ref(g: np.ndarray, key: Any = (), shape: Sequence[int] = ()) -> np.ndarray:
    idx = _flat_index(shape, key)
    out = np.zeros(math.prod(shape), dtype=g.dtype)
    for pos in np.ndindex(*idx.shape):
        out[idx[pos]] += g[pos]
    return out.reshape(tuple(shape))


def register_functions(register: Any) -> None:
    """Register GetItem and GetItemBackward (provider ``gradhub``)."""
    f = register.function
    f(
        "GetItem",
        _get_item,
        attrs={"key": ()},
        rule=_get_item_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_get_item_samples,
        reference=_get_item_ref,
        doc="""``x[key]`` with numpy semantics; ``Variable.__getitem__`` dispatches here.

``key`` holds ints, slices, None, Ellipsis, and integer arrays (lists, integer Variables) or
boolean masks for advanced indexing. Its gradient scatters back with GetItemBackward, where
duplicate indices accumulate: ``dx = zeros_like(x); dx[key] += dy``.

Example::

    >>> import numpy as np, gradhub as gh
    >>> x = gh.Variable(np.arange(6.0).reshape(2, 3))
    >>> y = x[:, [0, 0, 2]]
    >>> y.backward()
    >>> x.g
    array([[2., 0., 1.],
           [2., 0., 1.]])
""",
    )
    f(
        "GetItemBackward",
        _get_item_backward,
        inputs=("g",),
        attrs={"key": (), "shape": ()},
        rule=_get_item_backward_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_get_item_backward_samples,
        reference=_get_item_backward_ref,
        doc="""Scatter-add, the adjoint of GetItem: ``y = zeros(shape); y[key] += g``.

Duplicate indices in ``key`` accumulate. Its own gradient is ``GetItem(dy, key)``.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> g = gh.Variable(np.array([1.0, 2.0, 3.0]))
    >>> F.get_item_backward(g, key=np.array([0, 2, 0]), shape=(3,)).d
    array([4., 0., 2.])
""",
    )
