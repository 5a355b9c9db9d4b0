"""gradhub-nn-ops: reductions (nnabla names): mean, max, min, prod, logsumexp, norm.

``axis`` is None (all axes), an int or a tuple of ints; ``keepdims`` keeps the reduced axes with
size 1. ``sum`` is a core function.

Ties in ``max``/``min``: the gradient is split evenly among the tied elements (each of k tied
maxima gets 1/k of it), which is the average of the one-sided derivatives' choices and keeps
``sum(grad) == incoming grad``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from gradhub import Sample, Variable
from gradhub.ops import call

from .math import Shape, floating_kernel, kept_shape, norm_axes, to_kept

# -- max / min -----------------------------------------------------------------------------------


def _flat_index(xp: Any, x: Any, axes: tuple[int, ...], keepdims: bool, arg: str) -> Any:
    """Index of the max/min within the reduced axes, flattened in C order (nnabla)."""
    kept = [i for i in range(x.ndim) if i not in axes]
    xt = xp.transpose(x, kept + list(axes)).reshape([x.shape[i] for i in kept] + [-1])
    idx = getattr(xt, arg)(axis=-1)
    if keepdims:
        idx = idx.reshape(kept_shape(x.shape, axes))
    return xp.asarray(idx)


#: how the gradient of Max/Min is shared among tied extrema (attribute ``ties``)
SELECT_TIES = ("split", "all", "first")


def _check_ties(fname: str, ties: Any) -> None:
    if ties not in SELECT_TIES:
        raise ValueError(f"{fname}(): ties must be one of {SELECT_TIES}, got {ties!r}")


def _select(fname: str, reduce: str, arg: str) -> Any:
    def kernel(
        xp: Any,
        x: Any,
        axis: Any = None,
        keepdims: bool = False,
        only_index: bool = False,
        ties: str = "split",
    ) -> Any:
        _check_ties(fname, ties)
        axes = norm_axes(fname, axis, x.ndim)
        if any(x.shape[a] == 0 for a in axes):
            raise ValueError(
                f"{fname}(): cannot reduce over an axis of size 0 (x.shape "
                f"{x.shape}, axis {axis!r})"
            )
        if only_index:
            return _flat_index(xp, x, axes, keepdims, arg)
        return xp.asarray(getattr(x, reduce)(axis=axes, keepdims=keepdims))

    return kernel


def _with_index_api(fdef: Any) -> Any:
    """The public callable of Max/Min: nnabla's signature, with ``with_index``.

    The primitive has one output (the values, or the indices with ``only_index``), so that
    ``F.max(x)`` is a Variable; ``with_index=True`` calls it twice and returns both.
    """
    prim = fdef.api
    fname = fdef.snake

    def api(
        x: Any,
        axis: Any = None,
        keepdims: bool = False,
        with_index: bool = False,
        only_index: bool = False,
        ties: str = "split",
    ) -> Any:
        if only_index:
            return prim(x, axis=axis, keepdims=keepdims, only_index=True)
        y = prim(x, axis=axis, keepdims=keepdims, ties=ties)
        if with_index:
            return y, prim(x, axis=axis, keepdims=keepdims, only_index=True)
        return y

    api.__name__ = api.__qualname__ = fname
    api.__doc__ = fdef.doc
    api.fdef = fdef  # type: ignore[attr-defined]
    return api


def _group_positions(shape: Sequence[int], axes: Sequence[int]) -> np.ndarray:
    """Each element's position within its group of the reduced ``axes``, flattened in C order
    over ``axes`` as given (the index ``only_index`` returns)."""
    pos = np.zeros(tuple(shape), dtype=np.int64)
    stride = 1
    for a in reversed(tuple(axes)):
        along = np.arange(shape[a]).reshape([-1 if i == a else 1 for i in range(len(shape))])
        pos += along * stride
        stride *= shape[a]
    return pos


def _select_rule(name: str) -> Any:
    def rule(
        gy: Sequence[Any],
        ins: Sequence[Any],
        in_shapes: Sequence[Shape],
        outs: Sequence[Any],
        out_shapes: Sequence[Shape],
        axis: Any = None,
        keepdims: bool = False,
        only_index: bool = False,
        ties: str = "split",
    ) -> list[Any]:
        if only_index:
            return [None]
        x = ins[0]
        shape = in_shapes[0]
        axes = norm_axes(name.lower(), axis, len(shape))
        g = to_kept(gy[0], shape, axes)
        # each element's share (a constant, non-differentiable): at the k tied extrema 1/k
        # ("split"), 1 ("all") or 1 at the first of them, 0 at the others ("first")
        if ties == "first":
            idx = call(name, x, axis=axis, keepdims=True, only_index=True)
            xp = x.device.xp
            pos = Variable.leaf(xp.asarray(_group_positions(shape, axes)))
            return [g * call("Cast", call("Equal", pos, idx), dtype=str(g.dtype))]
        mask = call("Equal", x, to_kept(outs[0], shape, axes))
        if ties == "all":
            return [g * mask]
        return [g * (mask / call("Sum", mask, axis=axes, keepdims=True))]

    rule.__name__ = rule.__qualname__ = f"{name.lower()}_backward"
    return rule


def _select_fast_for(name: str) -> Any:
    arg = "argmax" if name == "Max" else "argmin"

    def fast(
        xp: Any,
        gy: Any,
        x: Any,
        xs: Any,
        y: Any,
        ys: Any,
        axis: Any = None,
        keepdims: bool = False,
        only_index: bool = False,
        ties: str = "split",
    ) -> list[Any]:
        if only_index:
            return [None]
        shape = tuple(xs[0])
        axes = norm_axes(name.lower(), axis, len(shape))
        k = kept_shape(shape, axes)
        if ties == "first":
            idx = _flat_index(xp, x[0], axes, True, arg)
            mask = (xp.asarray(_group_positions(shape, axes)) == idx).astype(x[0].dtype)
            return [gy[0].reshape(k) * mask]
        mask = (x[0] == y[0].reshape(k)).astype(x[0].dtype)
        if ties == "all":
            return [gy[0].reshape(k) * mask]
        return [gy[0].reshape(k) * (mask / mask.sum(axis=axes, keepdims=True))]

    return fast


# -- prod ----------------------------------------------------------------------------------------


def _prod(xp: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    axes = norm_axes("prod", axis, x.ndim)
    if x.dtype == np.float16:  # float32 partial products: no overflow/underflow in between
        return xp.asarray(x.prod(axis=axes, keepdims=keepdims, dtype=np.float32)).astype(np.float16)
    return xp.asarray(x.prod(axis=axes, keepdims=keepdims))


def _shift(p: Any, d: int, k: int, forward: bool) -> Any:
    """``p`` (R, K) shifted by ``d`` along axis 1, the vacated places filled with ones.

    ``forward``: ``q[:, i] = p[:, i - d]`` (ones for ``i < d``); else ``q[:, i] = p[:, i + d]``.
    """
    if forward:
        part = call("GetItem", p, key=(slice(None), slice(0, k - d)))
        return call("Pad", part, pad_width=(d, 0), constant_value=1.0)
    part = call("GetItem", p, key=(slice(None), slice(d, k)))
    return call("Pad", part, pad_width=(0, d), constant_value=1.0)


def _exclusive_scan(x2: Any, k: int, forward: bool) -> Any:
    """Exclusive cumulative product of ``x2`` (R, K) along axis 1, in either direction.

    ``forward``: ``out[:, i] = prod_{j < i} x2[:, j]``; else ``prod_{j > i} x2[:, j]``. A
    Hillis-Steele scan (``p <- p * shift(p, d)`` for ``d = 1, 2, 4, ...``): only products,
    slices and padding with ones, so it is a polynomial in ``x`` (exact with zeros, at every
    order), its graph depends on the shape alone, and it costs ``O(R K log K)``.
    """
    p = _shift(x2, 1, k, forward)
    d = 1
    while d < k:
        p = p * _shift(p, d, k, forward)
        d *= 2
    return p


def _exclusive_prod(x: Any, axes: tuple[int, ...]) -> Any:
    """For each element, the product of the other elements of its group over ``axes``.

    No division: the product of the exclusive prefix and suffix products of each group (the
    reduced axes moved last and flattened), built from registered differentiable functions.
    """
    shape = tuple(x.shape)
    nd = len(shape)
    kept = [i for i in range(nd) if i not in axes]
    perm = kept + list(axes)
    k = math.prod(shape[a] for a in axes)
    if k == 0:  # nothing in any group: an empty gradient
        return x
    r = math.prod(shape[i] for i in kept)
    moved = tuple(shape[i] for i in perm)
    same = perm == list(range(nd))
    xt = x if same else call("Transpose", x, axes=tuple(perm))
    x2 = call("Reshape", xt, shape=(r, k))
    e = _exclusive_scan(x2, k, True) * _exclusive_scan(x2, k, False)
    e = call("Reshape", e, shape=moved)
    return e if same else call("Transpose", e, axes=tuple(np.argsort(perm).tolist()))


def _prod_bw(
    gy: Sequence[Any],
    ins: Sequence[Any],
    in_shapes: Sequence[Shape],
    outs: Sequence[Any],
    out_shapes: Sequence[Shape],
    axis: Any = None,
    keepdims: bool = False,
) -> list[Any]:
    x = ins[0]
    shape = in_shapes[0]
    axes = norm_axes("prod", axis, len(shape))
    g = to_kept(gy[0], shape, axes)
    if not axes:
        return [g]
    # the graph must not depend on x's values (it is re-run by forward() on new data), so it
    # always takes the division-free exclusive product rather than y / x
    return [g * _exclusive_prod(x, axes)]


def _prod_fast(
    xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any, axis: Any = None, keepdims: bool = False
) -> list[Any]:
    shape = tuple(xs[0])
    axes = norm_axes("prod", axis, len(shape))
    k = kept_shape(shape, axes)
    g = gy[0].reshape(k)
    if not axes:
        return [g]
    xx = x[0]
    if bool((xx == 0).any()):
        return [g * exclusive_prod_array(xp, xx, axes)]
    return [g * (y[0].reshape(k) / xx)]


def exclusive_prod_array(xp: Any, x: Any, axes: tuple[int, ...]) -> Any:
    r"""For each element of ``x``, the product of the other elements of its group over ``axes``:
    :math:`e_i = \prod_{j \ne i} x_j`, by prefix and suffix products (O(n), no division, so
    zeros are exact). Prod's array rule uses it where ``x`` holds a zero; a device plugin's rule
    kernel of Prod calls it to give the same numbers.

    Example::

        >>> import numpy as np
        >>> from gradhub_nn_ops.reductions import exclusive_prod_array
        >>> exclusive_prod_array(np, np.array([[2.0, 0.0, 3.0]]), (1,)).tolist()
        [[0.0, 6.0, 0.0]]
    """
    kept = [i for i in range(x.ndim) if i not in axes]
    perm = kept + list(axes)
    xt = xp.transpose(x, perm)
    moved_shape = xt.shape
    xt = xt.reshape(-1, math.prod(x.shape[a] for a in axes))
    ones = xp.ones((xt.shape[0], 1), dtype=x.dtype)
    left = xp.concatenate([ones, xp.cumprod(xt[:, :-1], axis=1)], axis=1)
    rev = xt[:, ::-1]
    right = xp.concatenate([ones, xp.cumprod(rev[:, :-1], axis=1)], axis=1)[:, ::-1]
    e = (left * right).reshape(moved_shape)
    return xp.transpose(e, np.argsort(perm).tolist())


# -- logsumexp -----------------------------------------------------------------------------------


@floating_kernel  # integer inputs in floating point, float16 in float32
def _logsumexp(xp: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    axes = norm_axes("logsumexp", axis, x.ndim)
    if not axes:
        return x.copy()
    if x.size == 0:
        y = xp.full(kept_shape(x.shape, axes), -xp.inf, dtype=x.dtype)
    else:
        m = x.max(axis=axes, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)
        y = xp.log(xp.exp(x - m).sum(axis=axes, keepdims=True)) + m
    return y if keepdims else y.reshape([n for i, n in enumerate(x.shape) if i not in axes])


def _logsumexp_bw(
    gy: Sequence[Any],
    ins: Sequence[Any],
    in_shapes: Sequence[Shape],
    outs: Sequence[Any],
    out_shapes: Sequence[Shape],
    axis: Any = None,
    keepdims: bool = False,
) -> list[Any]:
    shape = in_shapes[0]
    axes = norm_axes("logsumexp", axis, len(shape))
    g = to_kept(gy[0], shape, axes)
    y = to_kept(outs[0], shape, axes)
    return [g * call("Exp", ins[0] - y)]


def _logsumexp_fast(
    xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any, axis: Any = None, keepdims: bool = False
) -> list[Any]:
    shape = tuple(xs[0])
    k = kept_shape(shape, norm_axes("logsumexp", axis, len(shape)))
    return [gy[0].reshape(k) * xp.exp(x[0] - y[0].reshape(k))]


# -- mean and norm --------------------------------------------------------------------------------


def _mean_count(shape: Sequence[int], axes: tuple[int, ...]) -> float:
    """``1/n`` for the ``n`` elements reduced over ``axes`` (NaN when there are none)."""
    n = math.prod(shape[a] for a in axes)
    return 1.0 / n if n else math.nan


def _mean(xp: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    axes = norm_axes("mean", axis, x.ndim)
    if x.dtype == np.float16:  # accumulated and divided in float32, then cast back
        s = xp.asarray(x.sum(axis=axes, keepdims=keepdims, dtype=np.float32))
        return (s * np.float32(_mean_count(x.shape, axes))).astype(np.float16)
    return xp.asarray(x.sum(axis=axes, keepdims=keepdims)) * _mean_count(x.shape, axes)


def _mean_bw(gy, inputs, in_shapes, outputs, out_shapes, axis=None, keepdims=False):  # type: ignore[no-untyped-def]
    # n comes from the shape the node has now: forward() on a new batch size updates it
    shape = tuple(in_shapes[0])
    axes = norm_axes("mean", axis, len(shape))
    g = call("BroadcastTo", to_kept(gy[0], shape, axes), shape=shape)
    return [call("MulScalar", g, val=_mean_count(shape, axes))]


def _mean_fast(
    xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any, axis: Any = None, keepdims: bool = False
) -> list[Any]:
    shape = tuple(xs[0])
    axes = norm_axes("mean", axis, len(shape))
    g = gy[0].reshape(kept_shape(shape, axes)) * _mean_count(shape, axes)
    return [xp.broadcast_to(g, shape)]


_MEAN_DOC = r"""mean(x, axis=None, keepdims=False): the mean over ``axis`` (all axes when None).

    :math:`y = \frac{1}{n}\sum_{i \in \mathrm{axis}} x_i`, ``n`` the number of reduced
    elements (NaN when ``n == 0``). Gradient: :math:`1/n` broadcast over the reduced axes. A
    primitive rather than ``sum(x) * (1/n)``, so that ``n`` follows the input's shape when
    ``forward()`` re-runs the graph on data of another batch size.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.mean(gh.Variable([[1.0, 2.0], [3.0, 6.0]]), axis=1).d
        array([1.5, 4.5], dtype=float32)
    """


def _norm_p(p: Any) -> float:
    """``p`` as a float (None means 2); ValueError naming norm() and 'p' unless positive."""
    if p is None:
        return 2.0
    if not isinstance(p, (int, float, np.integer, np.floating)) or isinstance(p, bool) or not p > 0:
        raise ValueError(f"norm(): argument 'p' must be a positive number or inf, got {p!r}")
    return float(p)


@floating_kernel  # integer inputs in floating point, float16 in float32
def _norm(xp: Any, x: Any, p: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    q = _norm_p(p)
    axes = norm_axes("norm", axis, x.ndim)
    if q == 2:
        return xp.sqrt(xp.asarray((x * x).sum(axis=axes, keepdims=keepdims)))
    a = xp.abs(x)
    if q == 1:
        return xp.asarray(a.sum(axis=axes, keepdims=keepdims))
    if math.isinf(q):
        if a.size == 0:  # the max-norm of nothing is 0, as every p-norm of nothing
            return xp.zeros(
                kept_shape(x.shape, axes)
                if keepdims
                else [n for i, n in enumerate(x.shape) if i not in axes],
                x.dtype,
            )
        return xp.asarray(a.max(axis=axes, keepdims=keepdims))
    return xp.asarray((a**q).sum(axis=axes, keepdims=keepdims)) ** (1.0 / q)


def _norm_bw(gy, ins, in_shapes, outs, out_shapes, p=None, axis=None, keepdims=False):  # type: ignore[no-untyped-def]
    # dy/dx_i = sign(x_i) |x_i|^(p-1) / y^(p-1); y + [y == 0] in the denominator makes it 0 at
    # the zero vector (x = 0 there), as PyTorch; the mask [y == 0] is a constant
    x, shape = ins[0], in_shapes[0]
    q, axes = _norm_p(p), norm_axes("norm", axis, len(shape))
    g = to_kept(gy[0], shape, axes)
    if q == 1:
        return [g * call("Sign", x, alpha=0.0)]
    y = to_kept(outs[0], shape, axes)
    if math.isinf(q):  # the max-norm: split among the elements of largest |x_i|, as max does
        top = call("Equal", call("Abs", x), y)
        return [call("Sign", x, alpha=0.0) * top * (g / call("Sum", top, axis=axes, keepdims=True))]
    safe = y + call("EqualScalar", y, val=0.0)
    if q == 2:
        return [x * (g / safe)]
    lead = call("Sign", x, alpha=0.0) * call("PowScalar", call("Abs", x), val=q - 1.0)
    return [lead * (g / call("PowScalar", safe, val=q - 1.0))]


def _norm_fast(
    xp: Any,
    gy: Any,
    x: Any,
    xs: Any,
    y: Any,
    ys: Any,
    p: Any = None,
    axis: Any = None,
    keepdims: bool = False,
) -> list[Any]:
    x0, q = x[0], _norm_p(p)
    axes = norm_axes("norm", axis, len(xs[0]))
    k = kept_shape(xs[0], axes)
    g = gy[0].reshape(k)
    if q == 1:
        return [g * xp.sign(x0)]
    yk = y[0].reshape(k)
    if math.isinf(q):
        top = xp.abs(x0) == yk
        return [xp.sign(x0) * top * (g / top.sum(axis=axes, keepdims=True, dtype=g.dtype))]
    safe = yk + (yk == 0)
    if q == 2:
        return [x0 * (g / safe)]
    return [xp.sign(x0) * xp.abs(x0) ** (q - 1.0) * (g / safe ** (q - 1.0))]


_NORM_DOC = r"""norm(x, p=None, axis=None, keepdims=False): the p-norm over ``axis`` (nnabla).

    :math:`y = (\sum_i |x_i|^p)^{1/p}`; ``p=None`` means 2; ``p=inf`` the max-norm
    :math:`\max_i |x_i|`. Gradient :math:`\mathrm{sign}(x_i)\,|x_i|^{p-1} / y^{p-1}` (for
    ``p=inf``, split evenly among the elements of largest :math:`|x_i|`, as ``max``). A primitive
    whose rule is written with registered functions, so it is differentiable to any order.

    At a zero vector (``y = 0``) the gradient is 0, the sub-gradient PyTorch also returns: the
    rule divides by ``y + [y == 0]`` (a constant mask), so the gradient there is ``0 * g / 1``
    instead of ``0 / 0``. This holds for every ``p >= 1``; the second derivative at the zero
    vector is a convention. For ``0 < p < 1`` the derivative of ``|x_i|^p`` at ``x_i = 0`` is
    infinite and stays so. Integer and bool inputs are computed in floating point (float16 for
    8-bit types, float32 for 16-bit, float64 wider); float16 inputs are computed in float32 and
    the result cast back (``x * x`` overflows float16 past 256).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.norm(gh.Variable([3.0, -4.0])).d
        array(5., dtype=float32)
        >>> F.norm(gh.Variable([3.0, -4.0]), p=1).d
        array(7., dtype=float32)
    """


# -- samples and references ----------------------------------------------------------------------

_AXES: tuple[tuple[Any, bool], ...] = ((None, False), (1, False), ((0, 2), True), (-1, True))


def _reduce_samples(
    positive: bool = False, distinct: bool = False, extra: tuple[dict[str, Any], ...] = ()
) -> Any:
    """Reduction samples: several axis/keepdims choices, a 0-d and a transposed input.

    ``distinct``: well-separated values (no ties, so max/min are differentiable); ``positive``:
    magnitudes in [0.5, 1.5] (for prod); ``extra``: more attribute sets on a (2, 3) input.
    """

    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        def x_of(shape: Shape) -> np.ndarray:
            if distinct:
                vals = rng.permutation(math.prod(shape)) * 0.3 - 1.0
                return (vals + rng.uniform(-0.05, 0.05, vals.shape)).reshape(shape)
            if positive:
                return rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
            return rng.uniform(-2.0, 2.0, shape)

        x = x_of((2, 3, 2))
        for axis, keep in _AXES:
            yield Sample((x,), {"axis": axis, "keepdims": keep}, name=f"axis={axis},keep={keep}")
        yield Sample((x_of(()),), {"axis": None}, name="0-d")
        yield Sample((x_of((3, 2)).T,), {"axis": 0}, name="transposed")
        for e in extra:
            yield Sample((x_of((2, 3)),), dict(e), name=str(e))

    return samples


def _np_axes(axis: Any) -> Any:
    return None if axis is None else tuple(np.atleast_1d(axis).tolist())


def _select_ref(reduce: Any, arg: Any) -> Any:
    def ref(
        x: np.ndarray,
        axis: Any = None,
        keepdims: bool = False,
        with_index: bool = False,
        only_index: bool = False,
        ties: str = "split",
    ) -> Any:
        ax = _np_axes(axis)
        y = reduce(x, axis=ax, keepdims=keepdims)
        if not (with_index or only_index):
            return y
        axes = tuple(range(x.ndim)) if ax is None else tuple(a % x.ndim for a in ax)
        kept = [i for i in range(x.ndim) if i not in axes]
        moved = np.moveaxis(x, axes, range(x.ndim - len(axes), x.ndim))
        idx = arg(moved.reshape([x.shape[i] for i in kept] + [-1]), axis=-1)
        if keepdims:
            idx = idx.reshape([1 if i in axes else n for i, n in enumerate(x.shape)])
        return idx if only_index else (y, idx)

    return ref


def _empty_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.uniform(-1, 1, (0, 3)),), {"axis": 1}, name="size-0 kept")


def _chain(*fns: Any) -> Any:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        for fn in fns:
            yield from fn(rng)

    return samples


def _norm_ref(x: np.ndarray, p: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    p = 2 if p is None else p
    ax = _np_axes(axis)
    if math.isinf(p):
        return np.max(np.abs(x), axis=ax, keepdims=keepdims)
    return np.sum(np.abs(x) ** p, axis=ax, keepdims=keepdims) ** (1.0 / p)


def _norm_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.uniform(0.5, 1.5, (2, 3)) * rng.choice([-1.0, 1.0], (2, 3))
    for p, axis, keep in (
        (None, None, False),
        (2, 1, True),
        (1, 0, False),
        (3, None, False),
        (1.5, 1, False),
        (math.inf, 1, False),
    ):
        yield Sample((x,), {"p": p, "axis": axis, "keepdims": keep}, name=f"p={p},axis={axis}")
    yield Sample((rng.uniform(0.5, 1.5, (3, 2)).T,), {"axis": 0}, name="transposed")
    yield Sample((np.asarray(rng.uniform(0.5, 1.5)),), {}, name="0-d")


def _logsumexp_ref(x: np.ndarray, axis: Any = None, keepdims: bool = False) -> Any:
    ax = _np_axes(axis)
    return np.log(np.sum(np.exp(x), axis=ax, keepdims=keepdims))


# -- registration --------------------------------------------------------------------------------

_SELECT_DOC = r"""{snake}(x, axis=None, keepdims=False, with_index=False, only_index=False,
    ties="split"): the {what} over ``axis`` (all axes when None), as nnabla.

    ``with_index=True`` also returns the index of the {what} (the first one at ties) within the
    reduced axes, flattened in C order; ``only_index=True`` returns only that index (int64, no
    gradient). Gradient: :math:`\partial y / \partial x_i = s_i`, nonzero only at the k tied
    elements equal to the {what}; ``ties`` chooses the share ``s``: ``"split"`` 1/k each (as
    ``torch.amax`` and JAX), ``"all"`` 1 each (as chainer), ``"first"`` 1 at the first of them
    in the order of ``with_index``, 0 at the others (as nnabla and ``torch.max(x, dim)``). The
    rule is again differentiable (the shares are constants).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> x = gh.Variable([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
        >>> F.{snake}(x, axis=1).d
        array({ex_val}, dtype=float32)
        >>> F.{snake}(x, axis=1, only_index=True).d
        array({ex_idx})
    """


def register_functions(register: Any) -> None:
    """Register the reductions."""
    f = register.function
    attrs = {"axis": None, "keepdims": False, "only_index": False, "ties": "split"}
    for name, reduce, arg, ref, aref, what, ex_val, ex_idx in (
        ("Max", "max", "argmax", np.max, np.argmax, "maximum", "[5., 7.]", "[1, 0]"),
        ("Min", "min", "argmin", np.min, np.argmin, "minimum", "[1., 0.]", "[0, 1]"),
    ):
        fdef = f(
            name,
            _select(reduce, reduce, arg),
            attrs=dict(attrs),
            rule=_select_rule(name),
            fast_backward=_select_fast_for(name),
            need_inputs=(0,),
            need_outputs=(0,),
            samples=_chain(
                _reduce_samples(
                    distinct=True,
                    extra=(
                        {"axis": 1, "with_index": True},
                        {"axis": (0, 1), "only_index": True},
                        {"axis": 0, "keepdims": True, "with_index": True},
                    ),
                ),
                _ties_samples,
            ),
            reference=_select_ref(ref, aref),
            doc=_SELECT_DOC.format(snake=reduce, what=what, ex_val=ex_val, ex_idx=ex_idx),
        )
        fdef.api = _with_index_api(fdef)
    f(
        "Prod",
        _prod,
        attrs={"axis": None, "keepdims": False},
        rule=_prod_bw,
        fast_backward=_prod_fast,
        need_inputs=(0,),
        need_outputs=(0,),
        samples=_chain(_reduce_samples(positive=True), _prod_zero_samples),
        reference=lambda x, axis=None, keepdims=False: np.prod(
            x, axis=_np_axes(axis), keepdims=keepdims
        ),
        doc=r"""prod(x, axis=None, keepdims=False): the product over ``axis`` (all axes when None).

    :math:`y = \prod_{i \in \mathrm{axis}} x_i`. Gradient:
    :math:`\partial y / \partial x_i = \prod_{j \ne i} x_j`, the product of the other elements
    of the group. The first-order array rule computes it as ``y / x`` when ``x`` has no zeros and
    by prefix and suffix products otherwise. The differentiable rule (``create_graph=True``)
    always takes the division-free form ``prefix_i * suffix_i`` (exclusive cumulative products
    built from registered functions), so it is exact with zeros at every order, and its graph
    depends only on the shapes: re-running it with ``forward()`` on new data (zeros included)
    stays correct. That graph holds ``O(n log k)`` elements for ``n`` inputs in groups of ``k``.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.prod(gh.Variable([[1.0, 2.0], [3.0, 4.0]]), axis=0).d
        array([3., 8.], dtype=float32)
    """,
    )
    f(
        "LogSumExp",
        _logsumexp,
        snake="logsumexp",
        attrs={"axis": None, "keepdims": False},
        rule=_logsumexp_bw,
        fast_backward=_logsumexp_fast,
        need_inputs=(0,),
        need_outputs=(0,),
        samples=_chain(_reduce_samples(), _empty_samples),
        reference=_logsumexp_ref,
        doc=r"""logsumexp(x, axis=None, keepdims=False): :math:`y = \ln\sum_i e^{x_i}`
    over ``axis``.

    Computed stably as :math:`m + \ln\sum_i e^{x_i - m}` with :math:`m = \max_i x_i`; gradient
    :math:`e^{x_i - y}` (the softmax along ``axis``).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.logsumexp(gh.Variable([1000.0, 1000.0])).d
        array(1000.6932, dtype=float32)
    """,
    )
    f(
        "Mean",
        _mean,
        attrs={"axis": None, "keepdims": False},
        rule=_mean_bw,
        fast_backward=_mean_fast,
        need_inputs=(),
        need_outputs=(),
        samples=_chain(_reduce_samples(), _empty_samples),
        reference=lambda x, axis=None, keepdims=False: np.mean(
            x, axis=_np_axes(axis), keepdims=keepdims
        ),
        doc=_MEAN_DOC,
    )
    f(
        "Norm",
        _norm,
        attrs={"p": None, "axis": None, "keepdims": False},
        rule=_norm_bw,
        fast_backward=_norm_fast,
        need_inputs=(0,),
        need_outputs=(0,),
        samples=_norm_samples,
        reference=_norm_ref,
        doc=_NORM_DOC,
    )


def _ties_samples(rng: np.random.Generator) -> Iterator[Sample]:
    # forward only at ties (the gradient there is a convention, tested separately)
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    yield Sample((x,), {"axis": 1, "with_index": True}, grad_inputs=(), name="ties")
    # away from ties every ``ties`` gives the same derivative
    d = rng.permutation(24).reshape(2, 3, 4) + rng.uniform(0.0, 0.5, (2, 3, 4))
    yield Sample((d,), {"axis": (2, 0), "ties": "first"}, name="ties=first, axis=(2, 0)")
    yield Sample((d,), {"axis": 1, "keepdims": True, "ties": "all"}, name="ties=all")


def _prod_zero_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.uniform(0.5, 1.5, (2, 3, 2))
    x[0, 1, 0] = 0.0
    x[1, 0, 1] = x[1, 2, 1] = 0.0
    yield Sample((x,), {"axis": 1}, name="zeros, axis=1")
    yield Sample((x,), {"axis": (0, 1), "keepdims": True}, name="zeros, axis=(0,1)")
    yield Sample((x[:, :, 0],), {"axis": None}, name="one zero, all axes")
    # groups of 7 (not a power of two) with one, two and no zeros
    z = rng.uniform(0.5, 1.5, (3, 7)) * rng.choice([-1.0, 1.0], (3, 7))
    z[0, 3] = z[1, 0] = z[1, 6] = 0.0
    yield Sample((z,), {"axis": 1}, name="zeros, groups of 7")
    yield Sample((z.T,), {"axis": 0, "keepdims": True}, name="zeros, groups of 7, transposed")
