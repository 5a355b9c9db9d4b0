"""gradhub-nn-ops: array functions (nnabla names and argument conventions).

Cumulative sums and products, gathers and scatters, sorting, ranges, diagonal and triangular
matrices, ``dot`` and the classification losses and errors of nnabla.

Every gradient is written with registered functions, so each function is differentiable to any
order. The scatters and gathers are closed under differentiation through two primitives that are
each other's adjoints: ``GatherNd`` (``y = data[tuple(indices)]``) and ``ScatterNd`` with
``add=True`` (``y = zeros(shape); y[tuple(indices)] += data``). ``gather``, ``scatter_add`` and
the gradients of ``sort`` and ``top_k_data`` are built on them with the indices as an input of the
graph, so that re-executing a graph with ``forward()`` on new indices stays correct.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from gradhub import Sample, Variable
from gradhub.device import context_device
from gradhub.ops import call

from .math import whole_numbers
from .reductions import _shift
from .shape import _axis

Shape = tuple[int, ...]

# -- helpers -----------------------------------------------------------------------------------


def _as_var(v: Any) -> Any:
    """A Variable (integer data such as indices needs no gradient) from array-likes."""
    if isinstance(v, Variable):
        return v
    return Variable(np.asarray(v), need_grad=False)


def _const(xp: Any, a: Any) -> Variable:
    """A constant leaf on the device of ``xp``."""
    return Variable.leaf(xp.asarray(a))


def _along_axis_index(idx: Any, axis: int) -> Any:
    """The ``GatherNd``/``ScatterNd`` index ``(idx.ndim, *idx.shape)`` of
    ``take_along_axis(x, idx, axis)``: each element's own coordinates, ``idx`` on ``axis``.

    Built with registered functions (``Stack``) from ``idx``, so that the index follows
    ``idx`` when a graph is re-executed.
    """
    shape = tuple(idx.shape)
    nd = len(shape)
    xp = idx.device.xp
    rows = []
    for a in range(nd):
        if a == axis:
            rows.append(idx)
        else:
            # (made on the device: a host array copied there cannot be recorded in a CUDA graph)
            grid = xp.arange(shape[a], dtype=np.int64).reshape(
                [-1 if i == a else 1 for i in range(nd)]
            )
            rows.append(_const(xp, xp.broadcast_to(grid, shape).copy()))
    return call("Stack", *rows, axis=0)


def _install_api(fdef: Any, api: Any) -> Any:
    """Install ``api`` (nnabla's signature, which the primitive's differs from) as ``fdef``'s
    public callable, with the primitive's name and docstring."""
    api.__name__ = api.__qualname__ = fdef.snake
    api.__doc__ = fdef.doc
    api.fdef = fdef
    fdef.api = api
    return fdef


def _index_array(xp: Any, fn: str, arg: str, a: Any) -> Any:
    return whole_numbers(xp, f"{fn}: {arg}", a, "indices")


# -- CumSum ------------------------------------------------------------------------------------


def _cumsum(
    xp: Any, x: Any, axis: Any = None, exclusive: bool = False, reverse: bool = False
) -> Any:
    if x.ndim == 0:
        raise ValueError("cumsum: x must have at least 1 dim")
    ax = _axis("cumsum", "axis", 0 if axis is None else axis, x.ndim)
    y = xp.flip(x, ax) if reverse else x
    c = xp.cumsum(y, axis=ax, dtype=x.dtype if x.dtype.kind == "f" else None)
    if exclusive:
        lead = (slice(None),) * ax
        zero = xp.zeros_like(c[(*lead, slice(0, 1))])
        c = xp.concatenate([zero, c[(*lead, slice(0, -1))]], axis=ax)
    return xp.flip(c, ax) if reverse else c


def _cumsum_bw(gy, inputs, in_shapes, outputs, out_shapes, axis, exclusive, reverse):  # type: ignore[no-untyped-def]
    return [call("CumSum", gy[0], axis=axis, exclusive=exclusive, reverse=not reverse)]


def _cum_ref(op: Any) -> Any:
    def ref(
        x: np.ndarray, axis: Any = None, exclusive: bool = False, reverse: bool = False
    ) -> np.ndarray:
        ax = (0 if axis is None else axis) % x.ndim
        xm = np.moveaxis(x, ax, -1)
        out = np.empty_like(xm)
        n = xm.shape[-1]
        for pos in np.ndindex(*xm.shape[:-1]):
            row = xm[pos]
            for i in range(n):
                part = row[i + exclusive :] if reverse else row[: i + 1 - exclusive]
                out[pos + (i,)] = op(part) if part.size else op(part[:0])
        return np.moveaxis(out, -1, ax)

    return ref


def _cum_samples(positive: bool) -> Any:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        def x_of(shape: Shape) -> np.ndarray:
            if positive:
                return rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
            return rng.uniform(-2.0, 2.0, shape)

        x = x_of((2, 5))
        for ex in (False, True):
            for rv in (False, True):
                yield Sample(
                    (x,),
                    {"axis": 1, "exclusive": ex, "reverse": rv},
                    name=f"exclusive={ex},reverse={rv}",
                )
        yield Sample((x_of((3, 2, 2)),), {}, name="default axis 0")
        yield Sample((x_of((2, 3, 2)),), {"axis": -2, "reverse": True}, name="axis -2")
        yield Sample((x_of((3, 2)).T,), {"axis": 1, "exclusive": True}, name="non-contiguous")
        yield Sample((x_of((1,)),), {"exclusive": True}, name="one element")
        yield Sample((x_of((2, 0)),), {"axis": 1}, name="size-0")

    return samples


# -- CumProd (composite: exact with zeros at every order) ---------------------------------------


def cumprod(x: Any, axis: Any = None, exclusive: bool = False, reverse: bool = False) -> Variable:
    r"""Cumulative product along ``axis`` (nnabla ``F.cumprod``; ``axis=None`` means 0).

    :math:`y_i = \prod_{j \le i} x_j`; ``exclusive`` leaves :math:`x_i` out (:math:`y_0 = 1`),
    ``reverse`` runs from the end (:math:`y_i = \prod_{j \ge i} x_j`). Composed of products,
    slices and padding with ones (a Hillis-Steele scan, ``O(n log n)``), so every derivative is
    a polynomial in ``x``: exact with zeros, at every order, as ``prod``'s rule.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.array([2.0, 0.0, 3.0]))
        >>> y = F.cumprod(x)
        >>> y.d
        array([2., 0., 0.])
        >>> F.sum(y).backward()
        >>> x.g
        array([1., 8., 0.])
    """
    x = _as_var(x)
    shape = tuple(x.shape)
    nd = len(shape)
    if nd == 0:
        raise ValueError("cumprod: x must have at least 1 dim")
    ax = _axis("cumprod", "axis", 0 if axis is None else axis, nd)
    k = shape[ax]
    if math.prod(shape) == 0:
        return call("MulScalar", x, val=1.0)  # type: ignore[no-any-return]
    perm = [i for i in range(nd) if i != ax] + [ax]
    same = perm == list(range(nd))
    xt = x if same else call("Transpose", x, axes=tuple(perm))
    moved = tuple(shape[i] for i in perm)
    p = call("Reshape", xt, shape=(math.prod(moved[:-1]), k))
    forward = not reverse
    d = 1
    while d < k:
        p = p * _shift(p, d, k, forward)
        d *= 2
    if exclusive:
        p = _shift(p, 1, k, forward)
    p = call("Reshape", p, shape=moved)
    return p if same else call("Transpose", p, axes=tuple(np.argsort(perm).tolist()))  # type: ignore[no-any-return]


# -- GatherNd / ScatterNd ----------------------------------------------------------------------


def _nd_index(xp: Any, fn: str, indices: Any, shape: Sequence[int]) -> tuple[Any, ...]:
    idx = _index_array(xp, fn, "indices", indices)
    if idx.ndim < 1 or idx.shape[0] > len(shape):
        raise ValueError(
            f"{fn}: indices must have at least 1 dim with indices.shape[0] <= {len(shape)} "
            f"(the dims of the array indexed), got indices of shape {tuple(idx.shape)}"
        )
    for m in range(idx.shape[0]):
        n = shape[m]
        if idx[m].size and (int(idx[m].min()) < -n or int(idx[m].max()) >= n):
            raise ValueError(
                f"{fn}: indices[{m}] must be in [-{n}, {n}), got values in "
                f"[{int(idx[m].min())}, {int(idx[m].max())}]"
            )
    return tuple(idx[m] for m in range(idx.shape[0]))


def _gather_nd(xp: Any, data: Any, indices: Any) -> Any:
    key = _nd_index(xp, "gather_nd", indices, data.shape)
    return xp.asarray(data[key])


def _gather_nd_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    shape = tuple(in_shapes[0])
    return [call("ScatterNd", gy[0], inputs[1], shape=shape, add=True), None]


def _scatter_shape(shape: Any) -> Shape:
    try:
        vals = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"scatter_nd: shape must be a sequence of ints, got {shape!r}") from None
    if any(v < 0 for v in vals):
        raise ValueError(f"scatter_nd: shape must hold sizes >= 0, got {shape!r}")
    return vals


def _scatter_nd(xp: Any, data: Any, indices: Any, shape: Any = None, add: bool = False) -> Any:
    if shape is None:
        raise TypeError("scatter_nd: one of shape or out must be given")
    shp = _scatter_shape(shape)
    key = _nd_index(xp, "scatter_nd", indices, shp)
    m = len(key)
    want = tuple(key[0].shape) + shp[m:] if m else shp
    if tuple(data.shape) != want:
        raise ValueError(
            f"scatter_nd: data must have shape indices.shape[1:] + shape[indices.shape[0]:] = "
            f"{want}, got {tuple(data.shape)}"
        )
    out = xp.zeros(shp, dtype=data.dtype)
    if add:
        xp.add.at(out, key, data)
    else:
        out[key] = data
    return out


def _scatter_nd_bw(gy, inputs, in_shapes, outputs, out_shapes, shape, add):  # type: ignore[no-untyped-def]
    return [call("GatherNd", gy[0], inputs[1]), None]


def _scatter_nd_api(fdef: Any) -> Any:
    """The public ``scatter_nd``: nnabla's signature with ``out`` (an existing array whose
    elements at ``indices`` are replaced, or added to with ``add=True``)."""
    inner = fdef.api

    def scatter_nd(
        data: Any, indices: Any, shape: Any = None, out: Any = None, add: bool = False
    ) -> Any:
        indices = _as_var(indices)
        if shape is None and out is None:
            raise TypeError("scatter_nd: one of shape or out must be given")
        if shape is not None and out is not None:
            raise TypeError("scatter_nd: only one of shape or out may be given")
        if out is None:
            return inner(data, indices, shape=tuple(int(s) for s in shape), add=add)
        out = _as_var(out)
        shp = tuple(out.shape)
        y = inner(data, indices, shape=shp, add=add)
        if add:
            return out + y
        xp = out.device.xp
        ones = _const(xp, xp.ones(tuple(data.shape), dtype=out.dtype))
        hit = inner(ones, indices, shape=shp, add=False)
        return out * (1.0 - hit) + y

    return _install_api(fdef, scatter_nd)


def _gather_nd_ref(data: np.ndarray, indices: np.ndarray) -> np.ndarray:
    idx = indices.astype(np.int64)
    m = idx.shape[0]
    flat = idx.reshape(m, -1)
    rows = [data[tuple(int(v) for v in flat[:, j])] for j in range(flat.shape[1])]
    out = np.array(rows, dtype=data.dtype).reshape(idx.shape[1:] + data.shape[m:])
    return out


def _scatter_nd_ref(
    data: np.ndarray, indices: np.ndarray, shape: Any = None, add: bool = False
) -> np.ndarray:
    out = np.zeros(tuple(shape), dtype=data.dtype)
    idx = indices.astype(np.int64)
    m = idx.shape[0]
    flat = idx.reshape(m, -1)
    d = data.reshape((flat.shape[1],) + tuple(shape)[m:])
    for j in range(flat.shape[1]):
        pos = tuple(int(v) for v in flat[:, j])
        out[pos] = out[pos] + d[j] if add else d[j]
    return out


def _gather_nd_samples(rng: np.random.Generator) -> Iterator[Sample]:
    d = rng.standard_normal((2, 5))
    yield Sample((d, np.array([[1, 1, 0]])), name="rows, repeated")
    yield Sample((d, np.array([[1, 1, 0], [0, 1, 4]])), name="elements")
    yield Sample((d, np.array([[-1], [-2]])), name="negative indices")
    yield Sample((rng.standard_normal((3, 2, 2)), np.array([[[2, 0], [1, 2]]])), name="2-d index")
    yield Sample((rng.standard_normal((4, 3)).T, np.array([[2, 0]])), name="non-contiguous")
    yield Sample((d, np.zeros((1, 0), dtype=np.int64)), name="no indices")
    yield Sample((d, np.array([[1.0, 0.0]])), grad_inputs=(0,), name="float indices")


def _scatter_nd_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample(
        (rng.standard_normal((4,)), np.array([[4, 3, 1, 7]])),
        {"shape": (8,), "add": False},
        name="elements",
    )
    yield Sample(
        (rng.standard_normal((4,)), np.array([[4, 3, 4, 7]])),
        {"shape": (8,), "add": True},
        name="duplicates add",
    )
    yield Sample(
        (rng.standard_normal((2, 2)), np.array([[2, -3]])),
        {"shape": (3, 2), "add": False},
        name="rows, negative index",
    )
    yield Sample(
        (rng.standard_normal((2,)), np.array([[1, 0], [2, 2]])),
        {"shape": (2, 3), "add": True},
        name="2-d",
    )
    yield Sample(
        (rng.standard_normal((3, 2)).T, np.array([[0, 2]])),
        {"shape": (3, 3), "add": False},
        name="non-contiguous",
    )


# -- Gather / ScatterAdd (composites of GatherNd and ScatterNd) ---------------------------------


def gather(x: Any, indices: Any, axis: Any = 0, batch_dims: Any = 0) -> Variable:
    r"""Gather slices of ``x`` along ``axis`` (nnabla ``F.gather``).

    With ``B = batch_dims``:
    :math:`y[d_0..d_{a-1}, i_B..i_{M-1}, d_{a+1}..] = x[d_0..d_{a-1}, I[i_0..i_{M-1}],
    d_{a+1}..]` where :math:`i_b = d_b` for :math:`b < B`; the output has shape
    ``x.shape[:axis] + indices.shape[batch_dims:] + x.shape[axis + 1:]``. Composed of
    ``GatherNd`` (the gradient scatter-adds into ``x``; ``indices`` gets none). Negative
    indices count from the end (nnabla's CPU kernel refuses them).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.arange(6.0).reshape(2, 3))
        >>> F.gather(x, np.array([2, 0]), axis=1).d
        array([[2., 0.],
               [5., 3.]])
    """
    x = _as_var(x)
    idx = _as_var(indices)
    nd = len(x.shape)
    ax = _axis("gather", "axis", 0 if axis is None else axis, nd)
    b = 0 if batch_dims is None else int(batch_dims)
    ishape = tuple(idx.shape)
    if not 0 <= b <= ax or b > len(ishape):
        raise ValueError(
            f"gather: batch_dims={batch_dims} must be in [0, axis] and at most indices.ndim "
            f"({len(ishape)}); axis={ax}"
        )
    if tuple(x.shape[:b]) != ishape[:b]:
        raise ValueError(
            f"gather: x.shape[:batch_dims] {tuple(x.shape[:b])} must equal "
            f"indices.shape[:batch_dims] {ishape[:b]}"
        )
    perm = list(range(b)) + [ax] + list(range(b, ax)) + list(range(ax + 1, nd))
    xt = x if perm == list(range(nd)) else call("Transpose", x, axes=tuple(perm))
    xp = x.device.xp
    rows = []
    for a in range(b):
        grid = xp.arange(ishape[a], dtype=np.int64).reshape(  # (on the device, as above)
            [-1 if i == a else 1 for i in range(len(ishape))]
        )
        rows.append(_const(xp, xp.broadcast_to(grid, ishape).copy()))
    rows.append(idx)
    nd_idx = call("Stack", *rows, axis=0)
    g = call("GatherNd", xt, nd_idx)
    m = len(ishape) - b
    mid = ax - b
    order = (
        list(range(b))
        + list(range(b + m, b + m + mid))
        + list(range(b, b + m))
        + list(range(b + m + mid, len(g.shape)))
    )
    if order == list(range(len(g.shape))):
        return g  # type: ignore[no-any-return]
    return call("Transpose", g, axes=tuple(order))  # type: ignore[no-any-return]


def _gather_ref(x: np.ndarray, indices: np.ndarray, axis: Any = 0, batch_dims: Any = 0) -> Any:
    b = int(batch_dims or 0)
    ax = int(axis or 0) % x.ndim
    idx = indices.astype(np.int64)
    if b == 0:
        return np.take(x, idx, axis=ax)
    parts = [_gather_ref(x[i], idx[i], ax - 1, b - 1) for i in range(x.shape[0])]
    return np.stack(parts)


def _gather_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.standard_normal((2, 3, 4))
    yield Sample((x, np.array([[2, 0], [1, 1]])), {"axis": 1}, name="axis 1, 2-d index")
    yield Sample((x, np.array([1, 1, 0])), {}, name="default axis 0")
    yield Sample((x, np.array([[3, 0], [1, 1]])), {"axis": 2, "batch_dims": 1}, name="batch 1")
    yield Sample(
        (x, np.array([[2, 0, 2], [1, 1, 0]])), {"axis": 1, "batch_dims": 1}, name="batch, axis 1"
    )
    yield Sample((x, np.array([0, 3])), {"axis": -1}, name="negative axis")
    yield Sample((x, np.array(2)), {"axis": 1}, name="0-d index")
    yield Sample((rng.standard_normal((4, 3)).T, np.array([3, 0])), {"axis": 1}, name="transposed")


def scatter_add(x0: Any, indices: Any, x1: Any, axis: Any = None) -> Variable:
    r"""Add ``x1`` into a copy of ``x0`` at ``indices`` along ``axis`` (nnabla
    ``F.scatter_add``; ``axis=None`` means 0).

    For 3-d inputs and ``axis=1``: ``y = copy(x0); y[i, indices[i, j, k], k] += x1[i, j, k]``
    for every position of ``indices`` (which may be smaller than ``x1``: the rest of ``x1`` is
    unused). Duplicate indices accumulate. Composed of ``ScatterNd(add=True)``: the gradient of
    ``x0`` is ``dy``, that of ``x1`` ``dy`` gathered at ``indices`` (zero where unused).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x0 = gh.Variable(np.zeros((2, 3)))
        >>> x1 = gh.Variable(np.array([[1.0, 2.0, 3.0]]))
        >>> F.scatter_add(x0, np.array([[1, 0, 1]]), x1).d
        array([[0., 2., 0.],
               [1., 0., 3.]])
    """
    x0 = _as_var(x0)
    x1 = _as_var(x1)
    idx = _as_var(indices)
    shape0, shape1, ishape = tuple(x0.shape), tuple(x1.shape), tuple(idx.shape)
    nd = len(shape0)
    if not (len(shape1) == len(ishape) == nd):
        raise ValueError(
            f"scatter_add: x0, indices and x1 must have the same number of dims, got shapes "
            f"{shape0}, {ishape}, {shape1}"
        )
    ax = _axis("scatter_add", "axis", 0 if axis is None else axis, nd)
    for a in range(nd):
        if ishape[a] > shape1[a] or (a != ax and ishape[a] > shape0[a]):
            raise ValueError(
                f"scatter_add: indices {ishape} must not be larger than x1 {shape1}, nor than "
                f"x0 {shape0} on the axes other than axis={ax}"
            )
    part = x1
    if ishape != shape1:
        part = call("GetItem", x1, key=tuple(slice(0, n) for n in ishape))
    y = call("ScatterNd", part, _along_axis_index(idx, ax), shape=shape0, add=True)
    return x0 + y  # type: ignore[no-any-return]


def _scatter_add_ref(
    x0: np.ndarray, indices: np.ndarray, x1: np.ndarray, axis: Any = None
) -> np.ndarray:
    ax = int(axis or 0) % x0.ndim
    out = x0.copy()
    for pos in np.ndindex(*indices.shape):
        dst = list(pos)
        dst[ax] = int(indices[pos])
        out[tuple(dst)] += x1[pos]
    return out


def _scatter_add_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x0 = rng.standard_normal((2, 3))
    x1 = rng.standard_normal((2, 3))
    yield Sample((x0, np.array([[1, 0, 1]]), x1), {"axis": 0}, name="axis 0, part of x1")
    yield Sample((x0, np.array([[0, 0], [2, 1]]), x1), {"axis": 1}, name="axis 1, duplicates")
    yield Sample((x0, np.array([[1, 1, 1], [0, 1, 0]]), x1), {}, name="default axis")
    yield Sample((x0, np.array([[0, 2], [2, 1]]), x1), {"axis": -1}, name="negative axis")
    yield Sample(
        (
            rng.standard_normal((3, 2, 2)),
            np.array([[[2, 0]], [[1, 1]]]),
            rng.standard_normal((2, 2, 3)),
        ),
        {"axis": 0},
        name="3-d",
    )


# -- Sort / TopKData ---------------------------------------------------------------------------


def _argsort(xp: Any, key: Any, axis: int, descending: bool) -> Any:
    """Stable argsort (ties keep their order, as nnabla's sort)."""
    if descending:
        key = -(key.astype(np.int64) if key.dtype.kind in "ub" else key)
    return xp.argsort(key, axis=axis, kind="stable")


def _sort(xp: Any, x: Any, axis: int = -1, reverse: bool = False, only_index: bool = False) -> Any:
    if x.ndim == 0:
        raise ValueError("sort: x must have at least 1 dim")
    ax = _axis("sort", "axis", axis, x.ndim)
    idx = _argsort(xp, x, ax, bool(reverse))
    if only_index:
        return idx.astype(np.int64)
    return xp.take_along_axis(x, idx, axis=ax)


def _sort_bw(gy, inputs, in_shapes, outputs, out_shapes, axis, reverse, only_index):  # type: ignore[no-untyped-def]
    if only_index:
        return [None]
    x = inputs[0]
    shape = tuple(in_shapes[0])
    ax = _axis("sort", "axis", axis, len(shape))
    idx = call("Sort", x, axis=axis, reverse=reverse, only_index=True)
    return [call("ScatterNd", gy[0], _along_axis_index(idx, ax), shape=shape, add=True)]


def _sort_api(prim: Any) -> Any:
    def sort(
        x: Any,
        axis: int = -1,
        reverse: bool = False,
        with_index: bool = False,
        only_index: bool = False,
    ) -> Any:
        if only_index:
            return prim(x, axis=axis, reverse=reverse, only_index=True)
        y = prim(x, axis=axis, reverse=reverse)
        if with_index:
            return y, prim(x, axis=axis, reverse=reverse, only_index=True)
        return y

    return sort


def _sort_ref(
    x: np.ndarray,
    axis: int = -1,
    reverse: bool = False,
    with_index: bool = False,
    only_index: bool = False,
) -> Any:
    xm = np.moveaxis(x, axis, -1)
    vals = np.empty_like(xm)
    idx = np.empty(xm.shape, dtype=np.int64)
    for pos in np.ndindex(*xm.shape[:-1]):
        row = list(enumerate(xm[pos].tolist()))
        row.sort(key=lambda t: -t[1] if reverse else t[1])  # stable
        idx[pos] = [i for i, _ in row]
        vals[pos] = [v for _, v in row]
    vals, idx = np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)
    if only_index:
        return idx
    return (vals, idx) if with_index else vals


def _distinct(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    n = math.prod(shape)
    vals = rng.permutation(n) * 0.3 - 0.15 * n
    return (vals + rng.uniform(-0.05, 0.05, n)).reshape(shape)


def _sort_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = _distinct(rng, (2, 4))
    yield Sample((x,), {}, name="last axis")
    yield Sample((x,), {"axis": 0, "reverse": True}, name="axis 0, reverse")
    yield Sample((_distinct(rng, (2, 3, 3)),), {"axis": 1, "with_index": True}, name="with index")
    yield Sample((x,), {"only_index": True}, name="only index")
    yield Sample((_distinct(rng, (4, 3)).T,), {"reverse": True}, name="non-contiguous")
    yield Sample(
        (np.array([2.0, 1.0, 2.0, 1.0]),),
        {"with_index": True},
        grad_inputs=(),
        name="ties (stable)",
    )


def _topk_geometry(fn: str, shape: Shape, k: Any, base_axis: Any) -> tuple[int, int, int]:
    nd = len(shape)
    ba = int(base_axis)
    if ba < 0:
        ba += nd
    if not 0 <= ba < nd:
        raise ValueError(f"{fn}: base_axis={base_axis} must be in [0, {nd}) for x of shape {shape}")
    s = math.prod(shape[ba:])
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= int(k) <= s:
        raise ValueError(f"{fn}: k must be an int in [1, {s}] (the sample size), got {k!r}")
    return ba, math.prod(shape[:ba]), s


def _top_k_data(
    xp: Any,
    x: Any,
    k: int = 1,
    abs: bool = False,
    reduce: bool = True,
    base_axis: int = 1,
    largest: bool = True,
    only_index: bool = False,
) -> Any:
    shape = tuple(x.shape)
    ba, n, s = _topk_geometry("top_k_data", shape, k, base_axis)
    k = int(k)
    x2 = x.reshape(n, s)
    key = xp.abs(x2) if abs else x2
    idx = _argsort(xp, key, 1, bool(largest))[:, :k]
    if only_index:
        return idx.astype(np.int64).reshape(shape[:ba] + (k,))
    vals = xp.take_along_axis(x2, idx, axis=1)
    if reduce:
        return vals.reshape(shape[:ba] + (k,))
    out = xp.zeros_like(x2)
    out[xp.arange(n)[:, None], idx] = vals
    return out.reshape(shape)


def _top_k_data_bw(  # type: ignore[no-untyped-def]
    gy, inputs, in_shapes, outputs, out_shapes, k, abs, reduce, base_axis, largest, only_index
):
    if only_index:
        return [None]
    x = inputs[0]
    shape = tuple(in_shapes[0])
    ba, n, s = _topk_geometry("top_k_data", shape, k, base_axis)
    idx = call(
        "TopKData", x, k=k, abs=abs, reduce=True, base_axis=ba, largest=largest, only_index=True
    )
    nd_idx = _along_axis_index(call("Reshape", idx, shape=(n, int(k))), 1)
    g = gy[0]
    if reduce:
        g2 = call("Reshape", g, shape=(n, int(k)))
        dx = call("ScatterNd", g2, nd_idx, shape=(n, s), add=True)
        return [call("Reshape", dx, shape=shape)]
    xp = g.device.xp
    ones = _const(xp, xp.ones((n, int(k)), dtype=g.dtype))
    mask = call("Reshape", call("ScatterNd", ones, nd_idx, shape=(n, s), add=True), shape=shape)
    return [g * mask]


def _top_k_api(prim: Any) -> Any:
    def top_k_data(
        x: Any,
        k: int,
        abs: bool = False,
        reduce: bool = True,
        base_axis: int = 1,
        largest: bool = True,
        with_index: bool = False,
    ) -> Any:
        attrs = {"k": k, "abs": abs, "reduce": reduce, "base_axis": base_axis, "largest": largest}
        if with_index and not reduce:
            raise ValueError("top_k_data: reduce must be True when with_index=True")
        y = prim(x, **attrs)
        if with_index:
            return y, prim(x, only_index=True, **attrs)
        return y

    return top_k_data


def _top_k_ref(
    x: np.ndarray,
    k: int = 1,
    abs: bool = False,
    reduce: bool = True,
    base_axis: int = 1,
    largest: bool = True,
    with_index: bool = False,
) -> Any:
    ba = base_axis % x.ndim
    lead = x.shape[:ba]
    x2 = x.reshape(math.prod(lead), -1)
    vals = np.zeros((x2.shape[0], k), dtype=x.dtype)
    idx = np.zeros((x2.shape[0], k), dtype=np.int64)
    full = np.zeros_like(x2)
    for r in range(x2.shape[0]):
        row = list(enumerate(x2[r].tolist()))
        row.sort(key=lambda t: (-1 if largest else 1) * (builtins_abs(t[1]) if abs else t[1]))
        for j, (i, v) in enumerate(row[:k]):
            vals[r, j], idx[r, j], full[r, i] = v, i, v
    if not reduce:
        return full.reshape(x.shape)
    out = vals.reshape(lead + (k,))
    return (out, idx.reshape(lead + (k,))) if with_index else out


builtins_abs = abs


def _top_k_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = _distinct(rng, (2, 5))
    yield Sample((x,), {"k": 2}, name="k=2")
    yield Sample((x,), {"k": 3, "with_index": True}, name="with index")
    yield Sample((x,), {"k": 2, "abs": True, "with_index": True}, name="abs")
    yield Sample((x,), {"k": 2, "reduce": False}, name="not reduced")
    yield Sample((x,), {"k": 2, "largest": False, "with_index": True}, name="smallest")
    x3 = _distinct(rng, (2, 2, 3))
    yield Sample((x3,), {"k": 2, "base_axis": 2, "with_index": True}, name="base_axis 2")
    yield Sample((x3,), {"k": 3, "base_axis": 0}, name="base_axis 0")
    yield Sample((x3,), {"k": 4, "base_axis": -2, "reduce": False}, name="base_axis -2")


# -- Arange / Linspace (constants) -------------------------------------------------------------


def _new_constant(a: np.ndarray) -> Variable:
    dev = context_device()
    with dev.activate():
        arr = dev.xp.asarray(a)
    return Variable(arr, need_grad=False)


def _arange_values(start: float, stop: float, step: float) -> np.ndarray:
    if step == 0:
        raise ValueError("arange: step must not be 0")
    n = max(0, math.ceil((float(stop) - float(start)) / float(step)))
    return (float(start) + np.arange(n) * float(step)).astype(np.float32)


def arange(start: float, stop: float, step: float = 1) -> Variable:
    """The values ``start, start + step, ...`` in ``[start, stop)`` (nnabla ``F.arange``):
    a float32 1-d Variable that needs no gradient, on the current context's device.

    Example::

        >>> import gradhub.functions as F
        >>> F.arange(1, 2, 0.25).d
        array([1.  , 1.25, 1.5 , 1.75], dtype=float32)
    """
    return _new_constant(_arange_values(start, stop, step))


def _linspace_values(start: float, stop: float, num: int) -> np.ndarray:
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num < 0:
        raise ValueError(f"linspace: num must be an int >= 0, got {num!r}")
    return np.linspace(float(start), float(stop), int(num)).astype(np.float32)


def linspace(start: float, stop: float, num: int) -> Variable:
    """``num`` evenly spaced values from ``start`` to ``stop``, both included (nnabla
    ``F.linspace``): a float32 1-d Variable that needs no gradient.

    Example::

        >>> import gradhub.functions as F
        >>> F.linspace(0, 1, 5).d
        array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    return _new_constant(_linspace_values(start, stop, num))


def _arange_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for start, stop, step in ((0, 5, 1), (0.5, 3, 0.7), (5, 0, -1.5), (2, 1, 1), (0, 1, 0.3)):
        yield Sample((), {"start": start, "stop": stop, "step": step}, name=f"{start},{stop}")


def _linspace_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for start, stop, num in ((0, 1, 5), (1, -1, 3), (2, 3, 1), (0, 1, 0)):
        yield Sample((), {"start": start, "stop": stop, "num": num}, name=f"num={num}")


def _arange_ref(start: float, stop: float, step: float = 1) -> np.ndarray:
    vals = []
    v, i = float(start), 0
    while (step > 0 and v < stop) or (step < 0 and v > stop):
        vals.append(v)
        i += 1
        v = float(start) + i * float(step)
    return np.array(vals, dtype=np.float32)


def _linspace_ref(start: float, stop: float, num: int) -> np.ndarray:
    if num == 1:
        return np.array([start], dtype=np.float32)
    return np.array([start + (stop - start) * i / (num - 1) for i in range(num)], dtype=np.float32)


# -- EyeLike / MatrixDiag / MatrixDiagPart / Trilu ---------------------------------------------


def _out_float(dtype: Any) -> Any:
    return dtype if np.dtype(dtype).kind == "f" else np.float32


def _eye_like(xp: Any, x: Any, k: int = 0) -> Any:
    if x.ndim != 2:
        raise ValueError(f"eye_like: x must be 2-d, got shape {tuple(x.shape)}")
    return xp.eye(x.shape[0], x.shape[1], int(k), dtype=_out_float(x.dtype))


def _matrix_diag(xp: Any, x: Any) -> Any:
    if x.ndim < 1:
        raise ValueError("matrix_diag: x must have at least 1 dim")
    n = x.shape[-1]
    out = xp.zeros(tuple(x.shape) + (n,), dtype=x.dtype)
    i = xp.arange(n)
    out[..., i, i] = x
    return out


def _matrix_diag_part(xp: Any, x: Any) -> Any:
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"matrix_diag_part: the last two dims of x must be equal (square matrices), got "
            f"shape {tuple(x.shape)}"
        )
    return xp.diagonal(x, axis1=-2, axis2=-1).copy()


def _trilu(xp: Any, x: Any, k: int = 0, upper: bool = True) -> Any:
    if x.ndim < 2:
        raise ValueError(f"trilu: x must have at least 2 dims, got shape {tuple(x.shape)}")
    r, c = x.shape[-2:]
    ones = xp.ones((r, c), dtype=bool)
    mask = xp.triu(ones, int(k)) if upper else xp.tril(ones, int(k))
    return xp.where(mask, x, x.dtype.type(0))


def _mat_samples(kind: str) -> Any:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        if kind == "diag":
            yield Sample((rng.standard_normal((3,)),), name="vector")
            yield Sample((rng.standard_normal((2, 3)),), name="batch")
            yield Sample((rng.standard_normal((3, 2)).T,), name="non-contiguous")
            yield Sample((rng.standard_normal((2, 0)),), name="size-0")
        elif kind == "part":
            yield Sample((rng.standard_normal((3, 3)),), name="matrix")
            yield Sample((rng.standard_normal((2, 2, 2)),), name="batch")
            yield Sample((rng.standard_normal((3, 3)).T,), name="non-contiguous")
        elif kind == "trilu":
            x = rng.standard_normal((3, 4))
            for k in (0, 1, -1):
                for up in (True, False):
                    yield Sample((x,), {"k": k, "upper": up}, name=f"k={k},upper={up}")
            yield Sample((rng.standard_normal((2, 2, 3)),), {"upper": False}, name="batch")
            yield Sample((rng.standard_normal((3, 3)).T,), {"k": 2}, name="non-contiguous")
        else:  # eye
            yield Sample((rng.standard_normal((2, 3)),), name="wide")
            yield Sample((rng.standard_normal((3, 3)),), {"k": 1}, name="k=1")
            yield Sample((rng.standard_normal((3, 2)),), {"k": -2}, name="k=-2")

    return samples


def _matrix_diag_ref(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    out = np.zeros(x.shape + (n,), dtype=x.dtype)
    for pos in np.ndindex(*x.shape):
        out[pos + (pos[-1],)] = x[pos]
    return out


def _matrix_diag_part_ref(x: np.ndarray) -> np.ndarray:
    out = np.zeros(x.shape[:-1], dtype=x.dtype)
    for pos in np.ndindex(*out.shape):
        out[pos] = x[pos + (pos[-1],)]
    return out


def _trilu_ref(x: np.ndarray, k: int = 0, upper: bool = True) -> np.ndarray:
    out = x.copy()
    for pos in np.ndindex(*x.shape):
        i, j = pos[-2], pos[-1]
        keep = (j - i >= k) if upper else (j - i <= k)
        if not keep:
            out[pos] = 0.0
    return out


# -- Dot (composite, nnabla's numpy-compatible dot) ----------------------------------------------


def dot(a: Any, b: Any, out: Any = None) -> Any:
    """numpy's ``dot`` for Variables (nnabla ``F.dot``).

    Both 1-d: the inner product ``sum(a * b)``; both 2-d: the matrix product; either 0-d: the
    product ``a * b``; ``b`` 1-d: a sum product over the last axis of ``a`` and ``b``; ``b``
    M-d (M >= 2): a sum product over the last axis of ``a`` and the second-to-last of ``b``
    (shape ``a.shape[:-1] + b.shape[:-2] + b.shape[-1:]``). Composed of ``Affine``, ``Sum``,
    ``Mul2`` and ``Transpose``, so it is differentiable in both arguments. With one Variable the
    other argument (a number, a numpy array) is a constant; with none, ``numpy.dot``. ``out`` is
    not supported.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> a = gh.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> F.dot(a, gh.Variable(np.array([1.0, 1.0]))).d
        array([3., 7.])
    """
    if out is not None:
        raise NotImplementedError("dot: the out argument is not supported; use the result")
    if not isinstance(a, Variable) and not isinstance(b, Variable):
        return np.dot(a, b)
    # one Variable: the other (a number, a numpy array) is a constant of its graph
    a = a if isinstance(a, Variable) else _as_var(np.asarray(a))
    b = b if isinstance(b, Variable) else _as_var(np.asarray(b))
    na, nb = len(a.shape), len(b.shape)
    if na == 0 or nb == 0:
        return a * b
    if na == 1 and nb == 1:
        return call("Sum", a * b)
    if na == 2 and nb == 2:
        return call("Affine", a, b)
    if nb == 1:
        h = call("Affine", a, call("Reshape", b, shape=(b.shape[0], 1)), base_axis=na - 1)
        return call("Reshape", h, shape=tuple(h.shape[:-1]))
    order = list(range(nb))
    order.insert(0, order.pop(nb - 2))
    bt = call("Transpose", b, axes=tuple(order))
    return call("Affine", a, bt, base_axis=na - 1)


def _dot_samples(rng: np.random.Generator) -> Iterator[Sample]:
    r = rng.standard_normal
    yield Sample((r((2, 3)), r((3, 2))), name="2-d, 2-d")
    yield Sample((r((3,)), r((3,))), name="1-d, 1-d")
    yield Sample((r((2, 3)), r((3,))), name="2-d, 1-d")
    yield Sample((r((2,)), r((2, 3))), name="1-d, 2-d")
    yield Sample((r((2, 2, 3)), r((3, 2))), name="3-d, 2-d")
    yield Sample((r((2, 3)), r((2, 3, 2))), name="2-d, 3-d")
    yield Sample((r(()), r((2, 3))), name="0-d")
    yield Sample((r((3, 2)).T, r((3, 2))), name="non-contiguous")


# -- CategoricalCrossEntropy / TopNError / BinaryError ------------------------------------------


def _check_labels_shape(fn: str, xs: Shape, ts: Shape, ax: int) -> None:
    if (
        len(ts) != len(xs)
        or ts[ax] != 1
        or any(t != x for i, (t, x) in enumerate(zip(ts, xs)) if i != ax)
    ):
        want = xs[:ax] + (1,) + xs[ax + 1 :]
        raise ValueError(f"{fn}: target must have shape {want} (x {xs}, axis {ax}), got {ts}")


def categorical_cross_entropy(x: Any, target: Any, axis: Any = None) -> Variable:
    r"""Cross entropy of probabilities ``x`` and category labels (nnabla
    ``F.categorical_cross_entropy``): :math:`y_j = -\ln x_{j, t_j}` along ``axis`` (the last
    when None).

    ``target`` has ``x``'s shape with 1 on ``axis``; a negative label gives a loss of 0 and no
    gradient, as nnabla's. The gradient is :math:`-dy / x_{j, t_j}` at the label, 0 elsewhere
    (composed of ``GatherNd`` and ``Log``, differentiable to any order).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.array([[0.25, 0.75], [0.5, 0.5]]))
        >>> F.categorical_cross_entropy(x, np.array([[1], [-1]])).d
        array([[0.28768207],
               [0.        ]])
    """
    x = _as_var(x)
    t = _as_var(target)
    xs, ts = tuple(x.shape), tuple(t.shape)
    if not xs:
        raise ValueError("categorical_cross_entropy: x must have at least 1 dim")
    ax = _axis("categorical_cross_entropy", "axis", len(xs) - 1 if axis is None else axis, len(xs))
    _check_labels_shape("categorical_cross_entropy", xs, ts, ax)
    valid = call("Cast", call("GreaterEqualScalar", t, val=0.0), dtype=str(x.dtype))
    safe = call("MaximumScalar", t, val=0)
    p = call("GatherNd", x, _along_axis_index(safe, ax))
    return 0.0 - call("Log", p * valid + (1.0 - valid)) * valid  # type: ignore[no-any-return]


def _cce_ref(x: np.ndarray, target: np.ndarray, axis: Any = None) -> np.ndarray:
    ax = x.ndim - 1 if axis is None else axis % x.ndim
    out = np.zeros(target.shape, dtype=x.dtype)
    for pos in np.ndindex(*target.shape):
        lab = int(target[pos])
        if lab >= 0:
            src = list(pos)
            src[ax] = lab
            out[pos] = -np.log(x[tuple(src)])
    return out


def _cce_samples(rng: np.random.Generator) -> Iterator[Sample]:
    p = rng.uniform(0.1, 1.0, (3, 4))
    yield Sample((p, np.array([[1], [0], [3]])), name="last axis")
    yield Sample((p, np.array([[-1], [2], [0]])), name="negative label")
    yield Sample((p, np.array([[1, 0, 2, 2]])), {"axis": 0}, name="axis 0")
    yield Sample(
        (rng.uniform(0.1, 1.0, (2, 3, 2)), np.array([[[0, 2]], [[1, 1]]])),
        {"axis": 1},
        name="3-d, axis 1",
    )
    yield Sample((p, np.array([[1.0], [0.0], [3.0]])), grad_inputs=(0,), name="float labels")


def _top_n_error(xp: Any, x: Any, target: Any, axis: Any = None, n: int = 1) -> Any:
    if x.ndim == 0:
        raise ValueError("top_n_error: x must have at least 1 dim")
    ax = _axis("top_n_error", "axis", x.ndim - 1 if axis is None else axis, x.ndim)
    _check_labels_shape("top_n_error", tuple(x.shape), tuple(target.shape), ax)
    t = whole_numbers(xp, "top_n_error: target", target, "labels")
    c = x.shape[ax]
    if t.size and (int(t.min()) < 0 or int(t.max()) >= c):
        raise ValueError(
            f"top_n_error: labels in target must be in [0, {c}), got values in "
            f"[{int(t.min())}, {int(t.max())}]"
        )
    thr = xp.take_along_axis(x, t.astype(np.int64), axis=ax)
    count = (x >= thr).sum(axis=ax, keepdims=True)
    return (count > int(n)).astype(_out_float(x.dtype))


def _top_n_error_ref(x: np.ndarray, target: np.ndarray, axis: Any = None, n: int = 1) -> Any:
    ax = x.ndim - 1 if axis is None else axis % x.ndim
    out = np.zeros(target.shape, dtype=x.dtype)
    for pos in np.ndindex(*target.shape):
        src = list(pos)
        src[ax] = int(target[pos])
        thr = x[tuple(src)]
        line = [x[tuple(src[:ax] + [i] + src[ax + 1 :])] for i in range(x.shape[ax])]
        out[pos] = float(sum(v >= thr for v in line) > n)
    return out


def _top_n_error_samples(rng: np.random.Generator) -> Iterator[Sample]:
    s = np.array([[0.1, 0.5, 0.4], [0.3, 0.3, 0.4], [0.2, 0.2, 0.6]])
    yield Sample((s, np.array([[1], [2], [0]])), name="n=1")
    yield Sample((s, np.array([[1], [0], [0]])), {"n": 2}, name="n=2, ties")
    yield Sample((s, np.array([[0, 1, 2]])), {"axis": 0}, name="axis 0")
    yield Sample((rng.uniform(0, 1, (2, 4, 2)), np.array([[[3, 0]], [[1, 2]]])), {"axis": 1})


def _binary_error(xp: Any, x: Any, target: Any) -> Any:
    dtype = _out_float(np.result_type(x.dtype, target.dtype))
    return ((x >= 0.5) != (target >= 0.5)).astype(dtype)


def _binary_error_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((np.array([0.2, 0.5, 0.7, 0.49, -1.0]), np.array([0.0, 0.0, 1.0, 0.5, 0.0])))
    yield Sample((rng.uniform(-1, 2, (3, 4)), rng.integers(0, 2, (3, 4)).astype(np.float64)))


def _binary_error_ref(x: np.ndarray, target: np.ndarray) -> np.ndarray:
    return np.array(
        [float((a >= 0.5) != (b >= 0.5)) for a, b in zip(x.ravel(), target.ravel())]
    ).reshape(x.shape)


# -- registration ------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register the array functions."""
    f = register.function
    f(
        "CumSum",
        _cumsum,
        snake="cumsum",
        attrs={"axis": None, "exclusive": False, "reverse": False},
        rule=_cumsum_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_cum_samples(False),
        reference=_cum_ref(np.sum),
        doc=r"""cumsum(x, axis=None, exclusive=False, reverse=False): the cumulative sum along
``axis`` (nnabla ``F.cumsum``; ``axis=None`` means 0).

:math:`y_i = \sum_{j \le i} x_j`; ``exclusive`` leaves :math:`x_i` out (:math:`y_0 = 0`),
``reverse`` sums from the end. The gradient is the cumulative sum of ``dy`` in the other
direction.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([[1.0, 2.0, 3.0]]))
    >>> F.cumsum(x, axis=1).d
    array([[1., 3., 6.]])
    >>> F.cumsum(x, axis=1, exclusive=True, reverse=True).d
    array([[5., 3., 0.]])
""",
    )
    register.composite(
        "CumProd",
        cumprod,
        snake="cumprod",
        samples=_chain(_cum_samples(True), _cumprod_zero_samples),
        reference=_cum_ref(np.prod),
    )
    f(
        "GatherNd",
        _gather_nd,
        inputs=("data", "indices"),
        rule=_gather_nd_bw,
        need_inputs=(1,),
        need_outputs=(),
        samples=_gather_nd_samples,
        reference=_gather_nd_ref,
        doc="""gather_nd(data, indices): ``y = data[tuple(indices)]`` (nnabla ``F.gather_nd``).

``indices`` has shape ``(M, Y_0, ..., Y_{K-1})`` with ``M <= data.ndim``; the output has shape
``(Y_0, ..., Y_{K-1}) + data.shape[M:]``. Negative indices count from the end. Integer indices,
or floats holding whole numbers (nnabla's float32 ``nn.Variable``). The gradient of ``data`` is
``scatter_nd(dy, indices, shape=data.shape, add=True)`` (duplicates accumulate); ``indices``
gets none.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> data = gh.Variable(np.arange(1.0, 11.0).reshape(2, 5))
    >>> F.gather_nd(data, gh.Variable(np.array([[1, 1, 0], [0, 1, 0]]))).d
    array([6., 7., 1.])
""",
    )
    scatter = f(
        "ScatterNd",
        _scatter_nd,
        inputs=("data", "indices"),
        attrs={"shape": None, "add": False},
        rule=_scatter_nd_bw,
        need_inputs=(1,),
        need_outputs=(),
        samples=_scatter_nd_samples,
        reference=_scatter_nd_ref,
        doc="""scatter_nd(data, indices, shape=None, out=None, add=False): scatter ``data``
into a new array of ``shape`` (nnabla ``F.scatter_nd``), ``y[tuple(indices)] = data``.

``indices`` has shape ``(M, Y_0, ...)``, ``data`` shape ``(Y_0, ...) + shape[M:]``. ``add=True``
accumulates duplicates (``y[tuple(indices)] += data``); without it the last duplicate wins. With
``out`` (an existing array, instead of ``shape``) the result is a copy of ``out`` whose elements
at ``indices`` are replaced (added to, with ``add=True``). The gradient of ``data`` is
``gather_nd(dy, indices)`` (as nnabla's, also for duplicates without ``add``); that of ``out``
is ``dy``, zero at the replaced elements.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> data = gh.Variable(np.array([9.0, 10.0, 11.0, 12.0]))
    >>> F.scatter_nd(data, np.array([[4, 3, 1, 7]]), shape=(8,)).d
    array([ 0., 11.,  0., 10.,  9.,  0.,  0., 12.])
""",
    )
    _scatter_nd_api(scatter)
    register.composite("Gather", gather, samples=_gather_samples, reference=_gather_ref)
    register.composite(
        "ScatterAdd", scatter_add, samples=_scatter_add_samples, reference=_scatter_add_ref
    )
    sort = f(
        "Sort",
        _sort,
        attrs={"axis": -1, "reverse": False, "only_index": False},
        rule=_sort_bw,
        need_inputs=(0,),
        need_outputs=(),
        samples=_sort_samples,
        reference=_sort_ref,
        doc="""sort(x, axis=-1, reverse=False, with_index=False, only_index=False): ``x``
sorted along ``axis`` (nnabla ``F.sort``), ascending (descending with ``reverse``).

The sort is stable: tied elements keep their order. ``with_index=True`` returns ``(sorted,
indices)``, ``only_index=True`` only the indices (int64, no gradient). The gradient scatters
``dy`` back to the elements' places.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> y, i = F.sort(gh.Variable(np.array([3.0, 1.0, 2.0])), with_index=True)
    >>> y.d, i.d
    (array([1., 2., 3.]), array([1, 2, 0]))
""",
    )
    _install_api(sort, _sort_api(sort.api))
    topk = f(
        "TopKData",
        _top_k_data,
        attrs={
            "k": 1,
            "abs": False,
            "reduce": True,
            "base_axis": 1,
            "largest": True,
            "only_index": False,
        },
        rule=_top_k_data_bw,
        need_inputs=(0,),
        need_outputs=(),
        samples=_top_k_samples,
        reference=_top_k_ref,
        doc="""top_k_data(x, k, abs=False, reduce=True, base_axis=1, largest=True,
with_index=False): the ``k`` largest (``largest=False``: smallest) values of each sample
(nnabla ``F.top_k_data``).

The dims from ``base_axis`` on form one sample. ``abs=True`` ranks by magnitude (the values keep
their sign). ``reduce=True``: the output is ``x.shape[:base_axis] + (k,)``, the values in rank
order; ``with_index=True`` also returns their indices within the flattened sample (int64).
``reduce=False``: ``x``'s shape, the other values set to 0. The gradient goes to the selected
elements only (nnabla's ``reduce=False`` passes all of ``dy``; see the migration guide). Ties
are ranked in order of position.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([[1.0, -5.0, 3.0, 2.0]]))
    >>> F.top_k_data(x, 2).d
    array([[3., 2.]])
    >>> F.top_k_data(x, 2, abs=True, reduce=False).d
    array([[ 0., -5.,  3.,  0.]])
""",
    )
    _install_api(topk, _top_k_api(topk.api))
    register.composite(
        "Arange", arange, samples=_arange_samples, reference=_arange_ref, differentiable=False
    )
    register.composite(
        "Linspace",
        linspace,
        samples=_linspace_samples,
        reference=_linspace_ref,
        differentiable=False,
    )
    f(
        "EyeLike",
        _eye_like,
        attrs={"k": 0},
        differentiable=False,
        samples=_mat_samples("eye"),
        reference=lambda x, k=0: np.eye(x.shape[0], x.shape[1], k),
        doc="""eye_like(x, k=0): a 2-d array of ``x``'s shape with ones on diagonal ``k``
(nnabla ``F.eye_like``; ``k > 0`` above the main diagonal). No gradient.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> F.eye_like(gh.Variable(np.zeros((2, 3))), k=1).d
    array([[0., 1., 0.],
           [0., 0., 1.]])
""",
    )
    f(
        "MatrixDiag",
        _matrix_diag,
        rule=lambda gy, i, s, o, os: [call("MatrixDiagPart", gy[0])],
        need_inputs=(),
        need_outputs=(),
        samples=_mat_samples("diag"),
        reference=_matrix_diag_ref,
        doc="""matrix_diag(x): diagonal matrices of the last axis of ``x`` (nnabla
``F.matrix_diag``), shape ``x.shape + x.shape[-1:]``. The gradient is ``matrix_diag_part(dy)``.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> F.matrix_diag(gh.Variable(np.array([1.0, 2.0]))).d
    array([[1., 0.],
           [0., 2.]])
""",
    )
    f(
        "MatrixDiagPart",
        _matrix_diag_part,
        rule=lambda gy, i, s, o, os: [call("MatrixDiag", gy[0])],
        need_inputs=(),
        need_outputs=(),
        samples=_mat_samples("part"),
        reference=_matrix_diag_part_ref,
        doc="""matrix_diag_part(x): the diagonals of the square matrices in the last two axes
of ``x`` (nnabla ``F.matrix_diag_part``). The gradient is ``matrix_diag(dy)``.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> F.matrix_diag_part(gh.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]))).d
    array([1., 4.])
""",
    )
    f(
        "Trilu",
        _trilu,
        attrs={"k": 0, "upper": True},
        rule=lambda gy, i, s, o, os, k, upper: [call("Trilu", gy[0], k=k, upper=upper)],
        need_inputs=(),
        need_outputs=(),
        samples=_mat_samples("trilu"),
        reference=_trilu_ref,
        doc="""trilu(x, k=0, upper=True): the upper (``j - i >= k``) or lower (``j - i <= k``)
triangle of the matrices in the last two axes of ``x``, zeros elsewhere (nnabla ``F.trilu``,
numpy's ``triu``/``tril``). The gradient is ``trilu(dy, k, upper)``.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> F.trilu(gh.Variable(np.ones((2, 3))), k=1).d
    array([[0., 1., 1.],
           [0., 0., 1.]])
""",
    )
    register.composite("Dot", dot, samples=_dot_samples, reference=np.dot)
    register.composite(
        "CategoricalCrossEntropy",
        categorical_cross_entropy,
        samples=_cce_samples,
        reference=_cce_ref,
    )
    f(
        "TopNError",
        _top_n_error,
        inputs=("x", "target"),
        attrs={"axis": None, "n": 1},
        differentiable=False,
        samples=_top_n_error_samples,
        reference=_top_n_error_ref,
        doc="""top_n_error(x, target, axis=None, n=1): 1 where the label's score is not among
the ``n`` largest along ``axis`` (the last when None), else 0 (nnabla ``F.top_n_error``).

``target`` has ``x``'s shape with 1 on ``axis``. As nnabla's, the count includes ties:
``y = [#{i : x_i >= x_t} > n]``. No gradient.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([[0.1, 0.5, 0.4], [0.2, 0.2, 0.6]]))
    >>> F.top_n_error(x, gh.Variable(np.array([[1], [0]]))).d
    array([[0.],
           [1.]])
""",
    )
    f(
        "BinaryError",
        _binary_error,
        inputs=("x", "target"),
        differentiable=False,
        elementwise=True,
        samples=_binary_error_samples,
        reference=_binary_error_ref,
        doc="""binary_error(x, target): ``[(x >= 0.5) != (target >= 0.5)]`` elementwise
(nnabla ``F.binary_error``). No gradient.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> F.binary_error(gh.Variable(np.array([0.2, 0.7])), gh.Variable(np.array([1.0, 1.0]))).d
    array([1., 0.])
""",
    )


def _chain(*fns: Any) -> Any:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        for fn in fns:
            yield from fn(rng)

    return samples


def _cumprod_zero_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.uniform(0.5, 1.5, (2, 7)) * rng.choice([-1.0, 1.0], (2, 7))
    x[0, 2] = 0.0
    x[1, 1] = x[1, 5] = 0.0
    for ex in (False, True):
        for rv in (False, True):
            yield Sample(
                (x,), {"axis": 1, "exclusive": ex, "reverse": rv}, name=f"zeros, ex={ex},rv={rv}"
            )
