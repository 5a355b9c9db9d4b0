"""mxnet 1.9.1's array and math functions of ``mx.nd`` beyond the tensor basics: the
``numpy``-style arithmetic/comparison front-ends taking NDArrays or numbers (``add``,
``subtract``, ``equal``, ``logical_and``...), ``broadcast_mod``/``broadcast_hypot``, joining and
reordering (``concatenate``, ``moveaxis``, ``split_v2``, ``depth_to_space``...), ``cumsum``,
``diag``, ``eye``, indexing (``gather_nd``, ``scatter_nd``, ``batch_take``...), ``moments``,
``histogram``, index conversions, ``im2col``/``col2im`` and the NumPy/DLPack bridges.

Float inputs are recorded by ``mx.autograd`` as compositions of registered gradhub functions (so
their gradients, and higher derivatives, come from the native engine); functions mxnet gives a
zero gradient (comparisons, ``logical_not``) are recorded with gradient 0, those mxnet cannot
differentiate (``fill_element_0index``, ``histogram``, ``shuffle``...) are not recorded.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> mx.nd.add(mx.nd.array([1.0, 2.0]), 3).asnumpy()
    array([4., 5.], dtype=float32)
"""

from __future__ import annotations

import builtins
import ctypes
import itertools
import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import gradhub
import numpy as np
from gradhub.variable import Variable as NativeVariable

from .._common import call_native as _call
from . import _nd_tensor
from ._nd_losses import (
    broadcast_add,
    broadcast_div,
    broadcast_mul,
    broadcast_sub,
    log_softmax,
    pick,
    softmax,
)
from ._nd_tensor import (
    _axes,
    _axis,
    _bshape,
    _from_host,
    _host,
    _kept,
    _leaf,
    _nd,
    _no_out,
    _run,
    concat,
    negative,
)
from .base import MXNetError
from .context import Context, cpu, gpu
from .ndarray import NDArray, _ctx

__all__ = [
    "add",
    "batch_take",
    "broadcast_hypot",
    "broadcast_mod",
    "choose_element_0index",
    "col2im",
    "concatenate",
    "cumsum",
    "depth_to_space",
    "diag",
    "divide",
    "equal",
    "eye",
    "fill_element_0index",
    "from_dlpack",
    "from_numpy",
    "gather_nd",
    "greater",
    "greater_equal",
    "histogram",
    "im2col",
    "khatri_rao",
    "lesser",
    "lesser_equal",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "max_axis",
    "min_axis",
    "modulo",
    "moments",
    "moveaxis",
    "multiply",
    "not_equal",
    "onehot_encode",
    "ravel_multi_index",
    "scatter_nd",
    "shuffle",
    "softmax_cross_entropy",
    "softmin",
    "space_to_depth",
    "split_v2",
    "subtract",
    "to_dlpack_for_read",
    "to_dlpack_for_write",
    "true_divide",
    "unravel_index",
]

_DOCS = "docs/migration-mxnet.md"


#: mxnet's ``max_axis``/``min_axis``: other names of ``max``/``min`` (the same operators)
max_axis = _nd_tensor.max
min_axis = _nd_tensor.min


# -- helpers -------------------------------------------------------------------------------------


def _is_number(v: Any) -> bool:
    return isinstance(v, (numbers.Number, np.number))


def _scalar_array(value: Any, like: NDArray) -> NDArray:
    """``value`` as an NDArray of shape (1,) in ``like``'s dtype and context (no gradient)."""
    dt = like._arr.dtype
    return _from_host(np.asarray([value]).astype(dt), like)


def _zero_grad(x: NativeVariable, res: np.ndarray) -> NativeVariable:
    """``res`` as a node depending on ``x`` with gradient 0 (``x`` has ``res``'s shape)."""
    off = _leaf(np.zeros(res.shape, bool), x)
    return _call("where", off, x, _leaf(res, x))


def _exact(v: NativeVariable, res: np.ndarray) -> NativeVariable:
    """``v``'s gradient with the values ``res`` (``v - const(v) + res``: exact in floating
    point)."""
    return v - NativeVariable.leaf(v._data.copy(), False) + _leaf(res, v)


# -- numpy-style front-ends ----------------------------------------------------------------------


def _ufunc(
    fn: str,
    lhs: Any,
    rhs: Any,
    both: Callable[[NDArray, NDArray], NDArray],
    left: Callable[[NDArray, Any], NDArray],
    right: Callable[[Any, NDArray], NDArray],
    numbers_only: Callable[[Any, Any], Any],
) -> Any:
    """mxnet's ``_ufunc_helper``: two NDArrays broadcast, an NDArray and a number use the scalar
    operator, two numbers give a number."""
    lnd, rnd = isinstance(lhs, NDArray), isinstance(rhs, NDArray)
    if lnd and rnd:
        return both(lhs, rhs)
    if lnd and _is_number(rhs):
        return left(lhs, rhs)
    if rnd and _is_number(lhs):
        return right(lhs, rhs)
    if _is_number(lhs) and _is_number(rhs):
        return numbers_only(lhs, rhs)
    raise TypeError(
        f"mx.nd.{fn}: type {type(rhs if lnd else lhs).__name__} not supported (NDArrays and "
        "numbers are)"
    )


def _doc_ufunc(fn: str, formula: str, example: str) -> str:
    return (
        f"mxnet's ``mx.nd.{fn}(lhs, rhs)``: ``{formula}`` elementwise; NDArrays broadcast (as "
        f"``broadcast_*``), an NDArray with a number uses the scalar operator, two numbers give "
        "a number. Recorded by ``mx.autograd`` for float arrays.\n\n"
        f"Example::\n\n    >>> import gradhub_compat.mxnet as mx\n    >>> {example}\n"
    )


def add(lhs: Any, rhs: Any) -> Any:
    return _ufunc(
        "add", lhs, rhs, broadcast_add, lambda x, s: x + s, lambda s, x: s + x, lambda a, b: a + b
    )


def subtract(lhs: Any, rhs: Any) -> Any:
    return _ufunc(
        "subtract",
        lhs,
        rhs,
        broadcast_sub,
        lambda x, s: x - s,
        lambda s, x: s - x,
        lambda a, b: a - b,
    )


def multiply(lhs: Any, rhs: Any) -> Any:
    return _ufunc(
        "multiply",
        lhs,
        rhs,
        broadcast_mul,
        lambda x, s: x * s,
        lambda s, x: s * x,
        lambda a, b: a * b,
    )


def divide(lhs: Any, rhs: Any) -> Any:
    return _ufunc(
        "divide",
        lhs,
        rhs,
        broadcast_div,
        lambda x, s: x / s,
        lambda s, x: s / x,
        lambda a, b: a / b,
    )


true_divide = divide


def modulo(lhs: Any, rhs: Any) -> Any:
    return _ufunc(
        "modulo",
        lhs,
        rhs,
        broadcast_mod,
        lambda x, s: broadcast_mod(x, _scalar_array(s, x)),
        lambda s, x: broadcast_mod(_scalar_array(s, x), x),
        lambda a, b: a % b,
    )


add.__doc__ = _doc_ufunc("add", "lhs + rhs", "mx.nd.add(mx.nd.ones((2,)), 1).shape\n    (2,)")
subtract.__doc__ = _doc_ufunc(
    "subtract", "lhs - rhs", "mx.nd.subtract(1, mx.nd.ones((2,))).shape\n    (2,)"
)
multiply.__doc__ = _doc_ufunc(
    "multiply",
    "lhs * rhs",
    "mx.nd.multiply(mx.nd.ones((2, 1)), mx.nd.ones((3,))).shape\n    (2, 3)",
)
divide.__doc__ = _doc_ufunc(
    "divide",
    "lhs / rhs",
    "mx.nd.divide(mx.nd.ones((2,)), 2).asnumpy()\n    array([0.5, 0.5], dtype=float32)",
)
modulo.__doc__ = _doc_ufunc(
    "modulo",
    "lhs mod rhs (the sign of rhs; 0 where rhs is 0)",
    "mx.nd.modulo(mx.nd.array([-5.0]), 3).asnumpy()\n    array([1.], dtype=float32)",
)


def _make_cmp(
    fn: str, both_name: str, flipped_name: str, py: Callable[[Any, Any], Any]
) -> Callable[..., Any]:
    def function(lhs: Any, rhs: Any) -> Any:
        both: Callable[..., NDArray] = getattr(_nd_tensor, both_name)
        flipped: Callable[..., NDArray] = getattr(_nd_tensor, flipped_name)
        return _ufunc(
            fn,
            lhs,
            rhs,
            both,
            lambda x, s: both(x, _scalar_array(s, x)),
            lambda s, x: flipped(x, _scalar_array(s, x)),
            lambda a, b: 1 if py(a, b) else 0,
        )

    function.__name__ = function.__qualname__ = fn
    function.__doc__ = (
        f"mxnet's ``mx.nd.{fn}(lhs, rhs)``: 1 where the relation holds, else 0, in the array's "
        "dtype; NDArrays broadcast, a number is compared with every element, two numbers give 1 "
        "or 0. Recorded with gradient 0 (as mxnet).\n\n"
        f"Example::\n\n    >>> import gradhub_compat.mxnet as mx\n"
        f"    >>> mx.nd.{fn}(mx.nd.array([1.0, 2.0]), 2).shape\n    (2,)\n"
    )
    return function


equal = _make_cmp("equal", "broadcast_equal", "broadcast_equal", lambda a, b: a == b)
not_equal = _make_cmp(
    "not_equal", "broadcast_not_equal", "broadcast_not_equal", lambda a, b: a != b
)
greater = _make_cmp("greater", "broadcast_greater", "broadcast_lesser", lambda a, b: a > b)
greater_equal = _make_cmp(
    "greater_equal", "broadcast_greater_equal", "broadcast_lesser_equal", lambda a, b: a >= b
)
lesser = _make_cmp("lesser", "broadcast_lesser", "broadcast_greater", lambda a, b: a < b)
lesser_equal = _make_cmp(
    "lesser_equal", "broadcast_lesser_equal", "broadcast_greater_equal", lambda a, b: a <= b
)
logical_and = _make_cmp(
    "logical_and", "broadcast_logical_and", "broadcast_logical_and", lambda a, b: a and b
)
logical_or = _make_cmp(
    "logical_or", "broadcast_logical_or", "broadcast_logical_or", lambda a, b: a or b
)
logical_xor = _make_cmp(
    "logical_xor",
    "broadcast_logical_xor",
    "broadcast_logical_xor",
    lambda a, b: bool(a) != bool(b),
)


def logical_not(data: NDArray, out: Any = None, name: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``logical_not``: ``1`` where ``data == 0``, else ``0``, in ``data``'s dtype;
    recorded with gradient 0 (as mxnet).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.logical_not(mx.nd.array([0.0, 2.0])).asnumpy()
        array([1., 0.], dtype=float32)
    """
    _nd("logical_not", "data", data)
    _no_out("logical_not", out)
    res = (_host(data) == 0).astype(data._arr.dtype)
    if data._arr.dtype.kind != "f":
        return _from_host(res, data)
    return _run([data], lambda x: _zero_grad(x, res))


def _mx_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """mxnet's ``mod``: the remainder with the sign of ``b`` (0 where ``b`` is 0), in the
    operands' dtype."""
    zero = b == 0
    safe = np.where(zero, np.ones_like(b), b)
    with np.errstate(all="ignore"):
        r = np.fmod(a, safe)
        r = np.where((r != 0) & ((r < 0) != (safe < 0)), r + safe, r)
    return np.where(zero, np.zeros_like(r), r).astype(a.dtype)


def broadcast_mod(lhs: NDArray, rhs: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``broadcast_mod``: ``lhs mod rhs`` with numpy broadcasting, the remainder taking
    the sign of ``rhs`` (``lhs - floor(lhs / rhs) * rhs``; 0 where ``rhs`` is 0). The gradients
    are mxnet's: ``1`` for ``lhs`` and ``-floor(lhs / rhs)`` for ``rhs``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.broadcast_mod(mx.nd.array([5.0, -5.0]), mx.nd.array([3.0])).asnumpy()
        array([2., 1.], dtype=float32)
    """
    _no_out("broadcast_mod", out)
    shape = _bshape("broadcast_mod", lhs, rhs)
    a = np.broadcast_to(_host(lhs), shape)
    b = np.broadcast_to(_host(rhs), shape)
    res = _mx_mod(a, b)
    if lhs._arr.dtype.kind != "f":
        return _from_host(res, lhs)
    with np.errstate(all="ignore"):
        q = np.where(b == 0, 0, np.floor(a / np.where(b == 0, 1, b))).astype(a.dtype)

    def f(x: NativeVariable, y: NativeVariable) -> NativeVariable:
        xb = x if tuple(x.shape) == shape else _call("broadcast_to", x, shape=shape)
        yb = y if tuple(y.shape) == shape else _call("broadcast_to", y, shape=shape)
        return _exact(xb - yb * _leaf(q, x), res)

    return _run([lhs, rhs], f)


def broadcast_hypot(lhs: NDArray, rhs: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``broadcast_hypot``: ``sqrt(lhs^2 + rhs^2)`` with numpy broadcasting; gradients
    ``lhs / out`` and ``rhs / out``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.broadcast_hypot(mx.nd.array([3.0]), mx.nd.array([4.0])).asnumpy()
        array([5.], dtype=float32)
    """
    _no_out("broadcast_hypot", out)
    shape = _bshape("broadcast_hypot", lhs, rhs)
    if lhs._arr.dtype.kind != "f":
        a = np.broadcast_to(_host(lhs), shape).astype(np.float64)
        b = np.broadcast_to(_host(rhs), shape).astype(np.float64)
        return _from_host(np.hypot(a, b).astype(lhs._arr.dtype), lhs)
    res = np.hypot(np.broadcast_to(_host(lhs), shape), np.broadcast_to(_host(rhs), shape)).astype(
        lhs._arr.dtype
    )

    def f(x: NativeVariable, y: NativeVariable) -> NativeVariable:
        xb = x if tuple(x.shape) == shape else _call("broadcast_to", x, shape=shape)
        yb = y if tuple(y.shape) == shape else _call("broadcast_to", y, shape=shape)
        return _exact(_call("sqrt", xb * xb + yb * yb), res)

    return _run([lhs, rhs], f)


# -- joining, reordering ------------------------------------------------------------------------


def concatenate(arrays: Sequence[NDArray], axis: int = 0, always_copy: bool = True) -> NDArray:
    """mxnet's ``mx.nd.concatenate``: the arrays joined along ``axis`` (every other dimension and
    the dtype must agree). One array with ``always_copy=False`` is returned as is. Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.concatenate([mx.nd.ones((1, 2)), mx.nd.zeros((2, 2))]).shape
        (3, 2)
    """
    if not isinstance(arrays, (list, tuple)) or len(arrays) == 0:
        raise MXNetError("mx.nd.concatenate: arrays must be a non-empty list of NDArrays")
    for i, a in enumerate(arrays):
        _nd("concatenate", f"arrays[{i}]", a)
    if not always_copy and len(arrays) == 1:
        return arrays[0]
    return concat(*arrays, dim=axis)


def _perm_run(x: NDArray, perm: Sequence[int]) -> NDArray:
    axes = tuple(int(p) for p in perm)
    if x._arr.dtype.kind != "f":
        return _from_host(np.ascontiguousarray(_host(x).transpose(axes)), x)
    return _run([x], lambda v: _call("transpose", v, axes=axes))


def moveaxis(tensor: NDArray, source: Any, destination: Any) -> NDArray:
    """mxnet's ``moveaxis``: the axes ``source`` (an int or a sequence) moved to the positions
    ``destination``, the others keeping their order (numpy's ``moveaxis``). Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.moveaxis(mx.nd.ones((2, 3, 4)), 0, -1).shape
        (3, 4, 2)
    """
    _nd("moveaxis", "tensor", tensor)
    src = [source] if isinstance(source, (int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    if len(src) != len(dst):
        raise ValueError(
            "mx.nd.moveaxis: `source` and `destination` arguments must have the same number "
            f"of elements, got {len(src)} and {len(dst)}"
        )
    n = tensor.ndim
    src = [_axis("moveaxis", a, n) for a in src]
    dst = [_axis("moveaxis", a, n) for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("mx.nd.moveaxis: repeated axis in `source` or `destination`")
    order = [a for a in range(n) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(int(d), int(s))
    return _perm_run(tensor, order)


def _check_block(fn: str, data: NDArray, block_size: int) -> int:
    _nd(fn, "data", data)
    b = int(block_size)
    if data.ndim != 4:
        raise MXNetError(f"mx.nd.{fn}: Depth To Space requires exactly 4D tensor, got {data.shape}")
    if b <= 0:
        raise MXNetError(f"mx.nd.{fn}: block_size must be positive, got {b}")
    return b


def _reshape_perm_reshape(
    x: NDArray, s1: tuple[int, ...], perm: tuple[int, ...], s2: tuple[int, ...]
) -> NDArray:
    if x._arr.dtype.kind != "f":
        h = np.ascontiguousarray(_host(x).reshape(s1).transpose(perm)).reshape(s2)
        return _from_host(h, x)
    return _run(
        [x],
        lambda v: _call(
            "reshape",
            _call("transpose", _call("reshape", v, shape=s1), axes=perm),
            shape=s2,
        ),
    )


def depth_to_space(data: NDArray, block_size: int, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``depth_to_space``: ``(N, C, H, W) -> (N, C / b^2, H b, W b)`` moving blocks of
    channels into ``b x b`` spatial blocks (``out[n, c, h b + i, w b + j] = x[n, (i b + j) C / b^2
    + c, h, w]``). Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.depth_to_space(mx.nd.ones((1, 4, 2, 2)), 2).shape
        (1, 1, 4, 4)
    """
    _no_out("depth_to_space", out)
    b = _check_block("depth_to_space", data, block_size)
    n, c, h, w = data.shape
    if c % (b * b):
        raise MXNetError(
            f"mx.nd.depth_to_space: the number of channels {c} must be a multiple of "
            f"block_size^2 = {b * b}"
        )
    c2 = c // (b * b)
    return _reshape_perm_reshape(
        data, (n, b, b, c2, h, w), (0, 3, 4, 1, 5, 2), (n, c2, h * b, w * b)
    )


def space_to_depth(data: NDArray, block_size: int, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``space_to_depth`` (the inverse of :func:`depth_to_space`): ``(N, C, H, W) ->
    (N, C b^2, H / b, W / b)``. Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.space_to_depth(mx.nd.ones((1, 1, 4, 4)), 2).shape
        (1, 4, 2, 2)
    """
    _no_out("space_to_depth", out)
    b = _check_block("space_to_depth", data, block_size)
    n, c, h, w = data.shape
    if h % b or w % b:
        raise MXNetError(
            f"mx.nd.space_to_depth: the height {h} and width {w} must be multiples of "
            f"block_size {b}"
        )
    return _reshape_perm_reshape(
        data, (n, c, h // b, b, w // b, b), (0, 3, 5, 1, 2, 4), (n, c * b * b, h // b, w // b)
    )


def split_v2(
    ary: NDArray, indices_or_sections: Any, axis: int = 0, squeeze_axis: bool = False
) -> Any:
    """mxnet's ``split_v2``: ``ary`` split along ``axis`` into ``indices_or_sections`` equal
    parts (an int, which must divide the axis) or at the given indices (a sequence, as numpy's
    ``split``); ``squeeze_axis`` drops the axis from parts of length 1. A list of NDArrays (one
    NDArray for a single part). Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> [p.shape for p in mx.nd.split_v2(mx.nd.ones((6,)), (1, 4))]
        [(1,), (3,), (2,)]
    """
    _nd("split_v2", "ary", ary)
    ax = _axis("split_v2", axis, ary.ndim)
    n = ary.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise ValueError(
                f"mx.nd.split_v2: array split does not result in an equal division ({n} along "
                f"axis {ax} into {k} sections)"
            )
        bounds = [i * (n // k) for i in range(k + 1)]
    elif isinstance(indices_or_sections, (tuple, list)):
        bounds = [0, *(int(i) for i in indices_or_sections), n]
    else:
        raise ValueError(
            "mx.nd.split_v2: indices_or_sections must be an int or a tuple of ints, got "
            f"{type(indices_or_sections).__name__}"
        )
    parts = []
    for lo, hi in itertools.pairwise(bounds):
        lo2, hi2 = min(max(lo, 0), n), min(max(hi, 0), n)
        hi2 = max(hi2, lo2)
        key = (builtins.slice(None),) * ax + (builtins.slice(lo2, hi2),)
        size = hi2 - lo2
        if squeeze_axis and size != 1:
            raise MXNetError(
                f"mx.nd.split_v2: squeeze_axis needs parts of length 1 along axis {ax}, got {size}"
            )
        shape = tuple(s for i, s in enumerate(ary.shape) if i != ax) if squeeze_axis else None
        if ary._arr.dtype.kind != "f":
            h = np.array(_host(ary)[key])
            parts.append(_from_host(h.reshape(shape) if shape is not None else h, ary))
            continue

        def f(v: NativeVariable, key: Any = key, shape: Any = shape) -> NativeVariable:
            r = v[key]
            return _call("reshape", r, shape=shape if shape is not None else tuple(r.shape))

        parts.append(_run([ary], f))
    return parts[0] if len(parts) == 1 else parts


# -- cumulative sums, diagonals -----------------------------------------------------------------


def cumsum(
    a: NDArray, axis: int | None = None, dtype: Any = None, out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``cumsum``: ``out_i = sum_{j <= i} a_j`` along ``axis`` (the flattened array for
    None), in ``dtype`` (default ``a``'s). The gradient is the reversed cumulative sum of the
    output gradient. Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.cumsum(mx.nd.array([[1.0, 2.0], [3.0, 4.0]])).asnumpy()
        array([ 1.,  3.,  6., 10.], dtype=float32)
    """
    _nd("cumsum", "a", a)
    _no_out("cumsum", out)
    dt = np.dtype(dtype) if dtype is not None else a._arr.dtype
    ax = None if axis is None else _axis("cumsum", axis, a.ndim)
    if a._arr.dtype.kind != "f" or dt.kind != "f":
        h = _host(a)
        h = h.reshape(-1) if ax is None else h
        return _from_host(np.cumsum(h, axis=0 if ax is None else ax, dtype=dt), a)

    def f(v: NativeVariable) -> NativeVariable:
        if ax is None:
            v = _call("reshape", v, shape=(int(math.prod(v.shape)),))
        r = _call("cumsum", v, axis=0 if ax is None else ax)
        return r if r.dtype == dt else _call("cast", r, dtype=dt.name)

    return _run([a], f)


def _cells(v: NativeVariable, idx: np.ndarray) -> NativeVariable:
    """``w[..., idx]`` where ``w`` is ``v`` (shape ``(..., L)``) with a zero prepended on the last
    axis: index 0 gives 0, ``i + 1`` gives ``v[..., i]``. A gather: differentiable again."""
    zero = _leaf(np.zeros((*v.shape[:-1], 1), v.dtype), v)
    w = _call("concatenate", zero, v, axis=v.ndim - 1)
    return w[(Ellipsis, idx)]


def _diag_map(n: int, k: int) -> np.ndarray:
    """For a vector of length ``n``: the cell map (see :func:`_cells`) of the square matrix
    of side ``n + |k|`` holding it on diagonal ``k``."""
    m = n + abs(k)
    idx = np.zeros((m, m), np.int64)
    i = np.arange(n)
    r, c = (i, i + k) if k >= 0 else (i - k, i)
    idx[r, c] = i + 1
    return idx


def _diag_part_index(rows: int, cols: int, k: int) -> np.ndarray:
    """Flat indices (row-major, shape ``(rows, cols)``) of diagonal ``k``."""
    i = np.arange(rows)
    j = i + k
    ok = (j >= 0) & (j < cols)
    return (i[ok] * cols + j[ok]).astype(np.int64)


def diag(
    data: NDArray,
    k: int = 0,
    axis1: int = 0,
    axis2: int = 1,
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``diag``: for 1-D ``data`` the square matrix with ``data`` on diagonal ``k``
    (``k > 0`` above the main one); for N-D ``data`` diagonal ``k`` of the matrices in axes
    ``axis1``/``axis2``, as the last axis (numpy's ``diagonal``). Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.diag(mx.nd.array([1.0, 2.0]), k=1).shape
        (3, 3)
    """
    _nd("diag", "data", data)
    _no_out("diag", out)
    k = int(k)
    if data.ndim == 1:
        idx = _diag_map(data.shape[0], k)
        if data._arr.dtype.kind != "f":
            h = np.concatenate([np.zeros(1, data._arr.dtype), _host(data)])
            return _from_host(h[idx], data)
        return _run([data], lambda v: _cells(v, idx))
    a1 = _axis("diag", axis1, data.ndim)
    a2 = _axis("diag", axis2, data.ndim)
    if a1 == a2:
        raise MXNetError(f"mx.nd.diag: axis1 and axis2 cannot refer to the same axis {a1}")
    rest = [i for i in range(data.ndim) if i not in (a1, a2)]
    perm = (*rest, a1, a2)
    rows, cols = data.shape[a1], data.shape[a2]
    flat = np.array(_diag_part_index(rows, cols, k))
    lead = tuple(data.shape[i] for i in rest)
    if data._arr.dtype.kind != "f":
        h = _host(data).transpose(perm).reshape((*lead, rows * cols))
        return _from_host(np.ascontiguousarray(h[..., flat]), data)

    def f(v: NativeVariable) -> NativeVariable:
        t = _call("reshape", _call("transpose", v, axes=perm), shape=(*lead, rows * cols))
        return t[(Ellipsis, flat)]

    return _run([data], f)


def eye(
    N: int, M: int = 0, k: int = 0, ctx: Context | None = None, dtype: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``eye``: an ``N x M`` array (``M = 0``: ``N``) with ones on diagonal ``k`` and
    zeros elsewhere, float32 by default.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.eye(2, 3, 1).asnumpy()
        array([[0., 1., 0.],
               [0., 0., 1.]], dtype=float32)
    """
    n, m = int(N), int(M) if int(M) > 0 else int(N)
    if n < 0:
        raise MXNetError(f"mx.nd.eye: N must be non-negative, got {n}")
    c = _ctx(ctx)
    arr = np.eye(n, m, int(k), dtype=np.dtype(dtype or np.float32))
    return NDArray(c.device().asarray(arr), c)


# -- indexing --------------------------------------------------------------------------------


def _indices(fn: str, indices: Any, ndim: int) -> np.ndarray:
    _nd(fn, "indices", indices)
    idx = _host(indices)
    if idx.shape[0] > ndim:
        raise MXNetError(
            f"mx.nd.{fn}: indices.shape[0] ({idx.shape[0]}) must not exceed the number of "
            f"dimensions of the data ({ndim})"
        )
    return np.trunc(idx).astype(np.int64) if idx.dtype.kind == "f" else idx.astype(np.int64)


def gather_nd(data: NDArray, indices: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``gather_nd``: ``out[y...] = data[indices[0, y...], ..., indices[M-1, y...]]``,
    shape ``indices.shape[1:] + data.shape[M:]``; negative indices count from the end. The
    gradient scatters (adds) back into ``data``; ``indices`` gets none. Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
        >>> mx.nd.gather_nd(x, mx.nd.array([[1, 0], [0, 1]])).asnumpy()
        array([3., 2.], dtype=float32)
    """
    _nd("gather_nd", "data", data)
    _no_out("gather_nd", out)
    idx = _indices("gather_nd", indices, data.ndim)
    for d in range(idx.shape[0]):
        size = data.shape[d]
        idx[d] = np.where(idx[d] < 0, idx[d] + size, idx[d])
        if idx[d].size and (idx[d].min() < 0 or idx[d].max() >= size):
            raise MXNetError(f"mx.nd.gather_nd: index out of range for axis {d} of size {size}")
    if data._arr.dtype.kind != "f":
        return _from_host(np.ascontiguousarray(_host(data)[tuple(idx)]), data)
    return _run([data], lambda v: _call("gather_nd", v, _leaf(idx, v)))


def scatter_nd(
    data: NDArray, indices: NDArray, shape: Any, out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``scatter_nd``: zeros of ``shape`` with ``out[indices[0, y...], ...] = data[y...]``
    (``data.shape == indices.shape[1:] + shape[M:]``; where an index repeats, one of the values
    is kept, as mxnet leaves it unspecified). The gradient of ``data`` gathers the output
    gradient. Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> idx = mx.nd.array([[1, 0], [0, 2]])
        >>> mx.nd.scatter_nd(mx.nd.array([1.0, 2.0]), idx, shape=(2, 3)).asnumpy()
        array([[0., 0., 2.],
               [1., 0., 0.]], dtype=float32)
    """
    _nd("scatter_nd", "data", data)
    _no_out("scatter_nd", out)
    shp = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    idx = _indices("scatter_nd", indices, len(shp))
    m = idx.shape[0]
    want = (*idx.shape[1:], *shp[m:])
    if tuple(data.shape) != want:
        raise MXNetError(
            f"mx.nd.scatter_nd: data has shape {data.shape}, expected {want} (indices.shape[1:] "
            "+ shape[M:])"
        )
    for d in range(m):
        idx[d] = np.where(idx[d] < 0, idx[d] + shp[d], idx[d])
        if idx[d].size and (idx[d].min() < 0 or idx[d].max() >= shp[d]):
            raise MXNetError(f"mx.nd.scatter_nd: index out of range for axis {d} of size {shp[d]}")
    if data._arr.dtype.kind != "f":
        res = np.zeros(shp, data._arr.dtype)
        res[tuple(idx)] = _host(data)
        return _from_host(res, data)
    return _run([data], lambda v: _call("scatter_nd", v, _leaf(idx, v), shape=shp))


def batch_take(a: NDArray, indices: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``batch_take`` (deprecated there for ``pick``): ``out[i] = a[i, indices[i]]`` for
    a 2-D ``a`` and integer ``indices`` of length ``a.shape[0]`` (indices clipped into range).
    Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
        >>> mx.nd.batch_take(x, mx.nd.array([1, 0], dtype="int32")).asnumpy()
        array([2., 3.], dtype=float32)
    """
    _nd("batch_take", "a", a)
    _nd("batch_take", "indices", indices)
    _no_out("batch_take", out)
    if indices._arr.dtype.kind not in "iu":
        raise MXNetError(
            f"mx.nd.batch_take: Type inconsistent, Provided = {indices._arr.dtype.name}, "
            "inferred type = int32"
        )
    flat = a.reshape((a.shape[0], -1)) if a.ndim != 2 else a
    return pick(flat, indices.astype(a._arr.dtype) if a._arr.dtype.kind == "f" else indices, axis=1)


def choose_element_0index(lhs: NDArray, rhs: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's legacy ``choose_element_0index``: ``out[i] = lhs[i, rhs[i]]`` (``pick`` along the
    last axis); the gradient goes to the chosen elements. Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
        >>> mx.nd.choose_element_0index(x, mx.nd.array([1, 0])).asnumpy()
        array([2., 3.], dtype=float32)
    """
    _nd("choose_element_0index", "lhs", lhs)
    _nd("choose_element_0index", "rhs", rhs)
    _no_out("choose_element_0index", out)
    return pick(lhs, rhs, axis=-1)


def fill_element_0index(
    lhs: NDArray, mhs: NDArray, rhs: NDArray, out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's legacy ``fill_element_0index``: a copy of the 2-D ``lhs`` with
    ``out[i, rhs[i]] = mhs[i]``. Not differentiable (as mxnet): not recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
        >>> mx.nd.fill_element_0index(x, mx.nd.array([7.0, 8.0]), mx.nd.array([1, 0])).asnumpy()
        array([[1., 7.],
               [8., 4.]], dtype=float32)
    """
    for arg, v in (("lhs", lhs), ("mhs", mhs), ("rhs", rhs)):
        _nd("fill_element_0index", arg, v)
    _no_out("fill_element_0index", out)
    if lhs.ndim != 2 or mhs.shape != (lhs.shape[0],) or rhs.shape != (lhs.shape[0],):
        raise MXNetError(
            "mx.nd.fill_element_0index: lhs must be 2-D and mhs, rhs 1-D of length "
            f"lhs.shape[0]; got {lhs.shape}, {mhs.shape}, {rhs.shape}"
        )
    res = np.array(_host(lhs), copy=True)
    cols = np.clip(np.trunc(_host(rhs)).astype(np.int64), 0, lhs.shape[1] - 1)
    res[np.arange(lhs.shape[0]), cols] = _host(mhs).astype(res.dtype)
    return _from_host(res, lhs)


def onehot_encode(indices: NDArray, out: NDArray) -> NDArray:
    """mxnet's legacy ``onehot_encode``: writes ``out[i, j] = (j == indices[i])`` into ``out``
    (shape ``(N, depth)``) and returns it.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> o = mx.nd.zeros((2, 3))
        >>> mx.nd.onehot_encode(mx.nd.array([2, 0]), o).asnumpy()[0]
        array([0., 0., 1.], dtype=float32)
    """
    _nd("onehot_encode", "indices", indices)
    _nd("onehot_encode", "out", out)
    if out.ndim != 2 or indices.shape != (out.shape[0],):
        raise MXNetError(
            f"mx.nd.onehot_encode: out must be 2-D (N, depth) with N = len(indices); got "
            f"indices {indices.shape} and out {out.shape}"
        )
    idx = np.trunc(_host(indices)).astype(np.int64)
    res = (idx[:, None] == np.arange(out.shape[1])[None, :]).astype(out._arr.dtype)
    out[:] = res
    return out


def khatri_rao(*args: NDArray, **kwargs: Any) -> NDArray:
    """mxnet's ``khatri_rao``: the column-wise Kronecker product of matrices ``(n_i, k)``, shape
    ``(prod n_i, k)``: ``out[i n_1 + j, c] = A[i, c] B[j, c]`` for two. Recorded (mxnet has no
    gradient for it; here it differentiates through the products).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.khatri_rao(mx.nd.ones((2, 3)), mx.nd.ones((4, 3))).shape
        (8, 3)
    """
    if not args:
        raise MXNetError("mx.nd.khatri_rao: at least one matrix is needed")
    for i, a in enumerate(args):
        _nd("khatri_rao", f"args[{i}]", a)
        if a.ndim != 2 or a.shape[1] != args[0].shape[1]:
            raise MXNetError(
                f"mx.nd.khatri_rao: every input must be a matrix with {args[0].shape[1]} "
                f"columns, got {a.shape}"
            )
    k = args[0].shape[1]

    def f(*vs: NativeVariable) -> NativeVariable:
        r = vs[0]
        for v in vs[1:]:
            n0, n1 = r.shape[0], v.shape[0]
            p = _call("reshape", r, shape=(n0, 1, k)) * _call("reshape", v, shape=(1, n1, k))
            r = _call("reshape", p, shape=(n0 * n1, k))
        return r if len(vs) > 1 else _call("reshape", r, shape=tuple(r.shape))

    if builtins.any(a._arr.dtype.kind != "f" for a in args):
        hs = [_host(a) for a in args]
        r = hs[0]
        for h in hs[1:]:
            r = (r[:, None, :] * h[None, :, :]).reshape(-1, k)
        return _from_host(r.astype(args[0]._arr.dtype), args[0])
    return _run(list(args), f)


# -- statistics ---------------------------------------------------------------------------------


def moments(
    data: NDArray, axes: Any = None, keepdims: bool = False, out: Any = None, **kwargs: Any
) -> list[NDArray]:
    """mxnet's ``moments``: ``[mean, var]`` over ``axes`` (required, as mxnet), the variance
    the population one ``mean((x - mean)^2)``. Both recorded (the variance's gradient includes
    the mean's dependence on ``x``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> m, v = mx.nd.moments(mx.nd.array([[1.0, 3.0]]), axes=(1,))
        >>> m.asnumpy(), v.asnumpy()
        (array([2.], dtype=float32), array([1.], dtype=float32))
    """
    _nd("moments", "data", data)
    _no_out("moments", out)
    if axes is None or (isinstance(axes, (tuple, list)) and len(axes) == 0):
        raise MXNetError(
            "mx.nd.moments: Empty axes is not supported, if you would like to do global "
            "moments, please pass all axes to axes argument"
        )
    ax = _axes("moments", axes, data.ndim)
    shape = _kept(data.shape, ax, bool(keepdims))
    if data._arr.dtype.kind != "f":
        h = _host(data).astype(np.float64)
        m = h.mean(axis=ax, keepdims=True)
        var = ((h - m) ** 2).mean(axis=ax, keepdims=True)
        dt = data._arr.dtype
        return [
            _from_host(m.reshape(shape).astype(dt), data),
            _from_host(var.reshape(shape).astype(dt), data),
        ]

    def mean_of(v: NativeVariable) -> NativeVariable:
        return _call("reshape", _call("mean", v, axis=ax, keepdims=True), shape=shape)

    def var_of(v: NativeVariable) -> NativeVariable:
        d = v - _call("mean", v, axis=ax, keepdims=True)
        return _call("reshape", _call("mean", d * d, axis=ax, keepdims=True), shape=shape)

    return [_run([data], mean_of), _run([data], var_of)]


def histogram(
    a: NDArray, bins: Any = 10, range: Any = None, **kwargs: Any
) -> tuple[NDArray, NDArray]:
    """mxnet's ``histogram``: ``(counts, bin_edges)`` of ``a``'s values, as numpy's
    ``histogram``. ``bins`` is a count (edges spread over ``range``: int64 counts; without
    ``range`` over the data's min and max, counts and edges in float32, as mxnet) or an NDArray
    of edges (int64 counts; the edges returned as given). Not recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> c, e = mx.nd.histogram(mx.nd.array([1.0, 2.0, 3.0, 4.0, 5.0]), bins=3)
        >>> c.asnumpy()
        array([2., 1., 2.], dtype=float32)
    """
    _nd("histogram", "a", a)
    h = _host(a).astype(np.float64)
    if isinstance(bins, NDArray):
        counts, _ = np.histogram(h, bins=_host(bins))
        return _from_host(counts.astype(np.int64), a), bins
    if not isinstance(bins, (int, np.integer)) or int(bins) <= 0:
        raise ValueError(
            f"mx.nd.histogram: bins argument should be either an integer or an NDArray, got "
            f"{bins!r}"
        )
    if range is None:  # mxnet returns numpy's result as float32 arrays
        counts, edges = np.histogram(_host(a), bins=int(bins))
        return _from_host(counts.astype(np.float32), a), _from_host(edges.astype(np.float32), a)
    counts, edges = np.histogram(h, bins=int(bins), range=(float(range[0]), float(range[1])))
    return _from_host(counts.astype(np.int64), a), _from_host(edges.astype(a._arr.dtype), a)


def ravel_multi_index(data: NDArray, shape: Any, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``ravel_multi_index``: the flat (row-major) indices of the index tuples in the
    columns of ``data`` (shape ``(len(shape), N)``) into an array of ``shape``, in ``data``'s
    dtype: ``sum_d data[d] prod_{e > d} shape[e]``. Not recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.ravel_multi_index(mx.nd.array([[0, 1], [2, 3]]), shape=(3, 4)).asnumpy()
        array([2., 7.], dtype=float32)
    """
    _nd("ravel_multi_index", "data", data)
    _no_out("ravel_multi_index", out)
    shp = tuple(int(s) for s in shape)
    if data.shape[0] != len(shp):
        raise MXNetError(
            f"mx.nd.ravel_multi_index: data.shape[0] ({data.shape[0]}) must equal len(shape) "
            f"({len(shp)})"
        )
    h = np.trunc(_host(data)).astype(np.int64)
    strides = np.array([math.prod(shp[d + 1 :]) for d in builtins.range(len(shp))], np.int64)
    res = np.tensordot(strides, h, axes=(0, 0))
    return _from_host(np.asarray(res).astype(data._arr.dtype), data)


def unravel_index(data: NDArray, shape: Any, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``unravel_index``: the index tuples (as rows: shape ``(len(shape),) +
    data.shape``) of the flat indices ``data`` into an array of ``shape``, in ``data``'s dtype.
    Not recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.unravel_index(mx.nd.array([2, 7]), shape=(3, 4)).asnumpy()
        array([[0., 1.],
               [2., 3.]], dtype=float32)
    """
    _nd("unravel_index", "data", data)
    _no_out("unravel_index", out)
    shp = tuple(int(s) for s in shape)
    h = np.trunc(_host(data)).astype(np.int64)
    rows = []
    rest = h.copy()
    for d in reversed(builtins.range(len(shp))):
        rows.append(rest % shp[d])
        rest = rest // shp[d]
    res = np.stack(rows[::-1]).astype(data._arr.dtype)
    return _from_host(res, data)


# -- softmax variants --------------------------------------------------------------------------


def softmin(
    data: NDArray,
    axis: int = -1,
    temperature: float | None = None,
    dtype: Any = None,
    use_length: bool = False,
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``softmin``: ``exp(-x / t) / sum(exp(-x / t), axis)`` (``softmax`` of ``-x``).
    Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.softmin(mx.nd.array([0.0, 0.0])).asnumpy()
        array([0.5, 0.5], dtype=float32)
    """
    _nd("softmin", "data", data)
    _no_out("softmin", out)
    if use_length:
        raise NotImplementedError(f"mx.nd.softmin: use_length=True is not supported ({_DOCS})")
    return softmax(negative(data), axis=axis, temperature=temperature, dtype=dtype)


def softmax_cross_entropy(data: NDArray, label: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``softmax_cross_entropy``: ``-sum_i log softmax(data)[i, label[i]]`` over the
    batch, shape (1,). The gradient of ``data`` is ``softmax(data) - one_hot(label)``; ``label``
    gets none. Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[0.0, 0.0]])
        >>> mx.nd.softmax_cross_entropy(x, mx.nd.array([1])).asnumpy().round(4)
        array([0.6931], dtype=float32)
    """
    _nd("softmax_cross_entropy", "data", data)
    _nd("softmax_cross_entropy", "label", label)
    _no_out("softmax_cross_entropy", out)
    if data.ndim != 2 or label.shape != (data.shape[0],):
        raise MXNetError(
            "mx.nd.softmax_cross_entropy: data must be 2-D (batch, classes) and label 1-D of "
            f"length batch; got {data.shape} and {label.shape}"
        )
    picked = pick(log_softmax(data, axis=-1), label.astype(data._arr.dtype), axis=-1)
    return _run([picked], lambda v: _call("reshape", -_call("sum", v), shape=(1,)))


def shuffle(data: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``shuffle``: ``data`` with its first axis randomly permuted (gradhub's random
    generator: ``mx.random.seed`` makes it repeatable). Not recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> sorted(mx.nd.shuffle(mx.nd.array([1.0, 2.0, 3.0])).asnumpy().tolist())
        [1.0, 2.0, 3.0]
    """
    _nd("shuffle", "data", data)
    _no_out("shuffle", out)
    h = _host(data)
    perm = gradhub.random.generator().permutation(h.shape[0])
    return _from_host(np.ascontiguousarray(h[perm]), data)


# -- im2col / col2im ---------------------------------------------------------------------------


def _tup(fn: str, arg: str, v: Any, n: int, default: int) -> tuple[int, ...]:
    if v is None or (isinstance(v, (tuple, list)) and len(v) == 0):
        return (default,) * n
    t = (int(v),) * n if isinstance(v, (int, np.integer)) else tuple(int(x) for x in v)
    if len(t) != n:
        raise MXNetError(f"mx.nd.{fn}: {arg} must have {n} elements (as kernel), got {t}")
    return t


def _patch_index(
    c: int,
    padded: tuple[int, ...],
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    dilate: tuple[int, ...],
) -> tuple[np.ndarray, tuple[int, ...]]:
    """The gather indices ``(1 + nd, C, K, L)`` into an array ``(C, *padded, N)`` of the patch
    elements, and the output spatial shape."""
    outs = []
    for p, k, s, d in zip(padded, kernel, stride, dilate):
        o = (p - d * (k - 1) - 1) // s + 1
        if o <= 0:
            raise MXNetError(
                "mx.nd.im2col: the kernel (dilated) does not fit into the padded input "
                f"{padded} (kernel {kernel}, dilate {dilate})"
            )
        outs.append(o)
    ks = list(itertools.product(*[range(k) for k in kernel]))
    ls = list(itertools.product(*[range(o) for o in outs]))
    kk = np.array(ks, np.int64).reshape(len(ks), len(kernel))
    ll = np.array(ls, np.int64).reshape(len(ls), len(kernel))
    idx = np.zeros((1 + len(kernel), c, len(ks), len(ls)), np.int64)
    idx[0] = np.arange(c)[:, None, None]
    for d in range(len(kernel)):
        pos = ll[None, :, d] * stride[d] + kk[:, None, d] * dilate[d]
        idx[1 + d] = pos[None]
    return idx, tuple(outs)


def _conv_args(
    fn: str, kernel: Any, stride: Any, dilate: Any, pad: Any
) -> tuple[tuple[int, ...], ...]:
    if kernel is None:
        raise MXNetError(f"mx.nd.{fn}: kernel is required")
    k = (int(kernel),) if isinstance(kernel, (int, np.integer)) else tuple(int(x) for x in kernel)
    n = len(k)
    return (
        k,
        _tup(fn, "stride", stride, n, 1),
        _tup(fn, "dilate", dilate, n, 1),
        _tup(fn, "pad", pad, n, 0),
    )


def im2col(
    data: NDArray,
    kernel: Any = None,
    stride: Any = (),
    dilate: Any = (),
    pad: Any = (),
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``im2col``: the sliding ``kernel`` patches of ``data`` ``(N, C, *spatial)`` as
    columns, shape ``(N, C prod(kernel), L)`` (``L`` the number of patch positions; row ``c
    prod(kernel) + k`` holds kernel element ``k`` of channel ``c``), after zero padding by
    ``pad``. A gather: recorded, its gradient is :func:`col2im`. 2-D kernels as mxnet; 1-D
    and 3-D kernels work too (mxnet 1.9.1 fails on them).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.im2col(mx.nd.ones((1, 2, 4, 4)), kernel=(2, 2), stride=(2, 2)).shape
        (1, 8, 4)
    """
    _nd("im2col", "data", data)
    _no_out("im2col", out)
    k, s, d, p = _conv_args("im2col", kernel, stride, dilate, pad)
    if data.ndim != 2 + len(k):
        raise MXNetError(
            f"mx.nd.im2col: data must have {2 + len(k)} dimensions for a {len(k)}-D kernel, "
            f"got {data.shape}"
        )
    n, c = data.shape[:2]
    padded = tuple(sz + 2 * q for sz, q in zip(data.shape[2:], p))
    idx, _ = _patch_index(c, padded, k, s, d)
    kl = idx.shape[2]
    el = idx.shape[3]
    nd_ = len(k)
    perm = (1, *range(2, 2 + nd_), 0)

    if data._arr.dtype.kind != "f":
        h = np.pad(_host(data), [(0, 0), (0, 0), *[(q, q) for q in p]]).transpose(perm)
        g = h[tuple(idx)].transpose(3, 0, 1, 2).reshape(n, c * kl, el)
        return _from_host(np.ascontiguousarray(g), data)

    def f(v: NativeVariable) -> NativeVariable:
        if builtins.any(p):
            v = _call("pad", v, pad_width=tuple(q for q in p for _ in (0, 1)))
        t = _call("transpose", v, axes=perm)
        g = _call("gather_nd", t, _leaf(idx, v))
        return _call("reshape", _call("transpose", g, axes=(3, 0, 1, 2)), shape=(n, c * kl, el))

    return _run([data], f)


def col2im(
    data: NDArray,
    output_size: Any = None,
    kernel: Any = None,
    stride: Any = (),
    dilate: Any = (),
    pad: Any = (),
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``col2im`` (the adjoint of :func:`im2col`): the columns ``(N, C prod(kernel), L)``
    summed back into an image ``(N, C, *output_size)``, overlapping patch elements adding up,
    the padding cut off. A scatter-add: recorded, its gradient is :func:`im2col`.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> cols = mx.nd.ones((1, 4, 4))
        >>> mx.nd.col2im(cols, output_size=(4, 4), kernel=(2, 2), stride=(2, 2)).shape
        (1, 1, 4, 4)
    """
    _nd("col2im", "data", data)
    _no_out("col2im", out)
    k, s, d, p = _conv_args("col2im", kernel, stride, dilate, pad)
    if output_size is None:
        raise MXNetError("mx.nd.col2im: output_size is required")
    size = _tup("col2im", "output_size", output_size, len(k), 0)
    kl = math.prod(k)
    if data.ndim != 3 or data.shape[1] % kl:
        raise MXNetError(f"mx.nd.col2im: data must be (N, C * {kl}, L), got {data.shape}")
    n, c = data.shape[0], data.shape[1] // kl
    padded = tuple(sz + 2 * q for sz, q in zip(size, p))
    idx, outs = _patch_index(c, padded, k, s, d)
    if data.shape[2] != math.prod(outs):
        raise MXNetError(
            f"mx.nd.col2im: output size does not match convolution parameters ({data.shape[2]} "
            f"vs. {math.prod(outs)})"
        )
    crop = (builtins.slice(None),) * 2 + tuple(builtins.slice(q, q + sz) for q, sz in zip(p, size))
    nd_ = len(k)
    back = (nd_ + 1, 0, *range(1, nd_ + 1))
    if data._arr.dtype.kind != "f":
        h = _host(data).reshape(n, c, kl, -1).transpose(1, 2, 3, 0)
        res = np.zeros((c, *padded, n), data._arr.dtype)
        np.add.at(res, tuple(idx), h)
        return _from_host(np.ascontiguousarray(res.transpose(back)[crop]), data)

    def f(v: NativeVariable) -> NativeVariable:
        t = _call("transpose", _call("reshape", v, shape=(n, c, kl, v.shape[2])), axes=(1, 2, 3, 0))
        r = _call("scatter_nd", t, _leaf(idx, v), shape=(c, *padded, n), add=True)
        r = _call("transpose", r, axes=back)
        return r[crop] if builtins.any(p) else r

    return _run([data], f)


# -- NumPy and DLPack bridges ------------------------------------------------------------------


def from_numpy(ndarray: np.ndarray, zero_copy: bool = True) -> NDArray:
    """mxnet's ``from_numpy``: an NDArray on the CPU holding ``ndarray``'s data (sharing its
    memory when ``zero_copy`` and the array is C-contiguous, else a copy).

    Example::

        >>> import numpy as np, gradhub_compat.mxnet as mx
        >>> mx.nd.from_numpy(np.ones((2, 2), np.float32)).shape
        (2, 2)
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(
            f"mx.nd.from_numpy: ndarray must be a numpy.ndarray, got {type(ndarray).__name__}"
        )
    if zero_copy and not ndarray.flags["C_CONTIGUOUS"]:
        raise ValueError("mx.nd.from_numpy: only C-contiguous arrays are supported for zero-copy")
    arr = ndarray if zero_copy else np.array(ndarray, copy=True)
    c = cpu()
    return NDArray(c.device().asarray(arr.reshape(arr.shape or (1,))), c)


def to_dlpack_for_read(data: NDArray) -> Any:
    """mxnet's ``to_dlpack_for_read``: a DLPack capsule sharing ``data``'s memory (for
    ``torch.utils.dlpack.from_dlpack`` or :func:`from_dlpack`).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.ones((2,))
        >>> mx.nd.from_dlpack(mx.nd.to_dlpack_for_read(x)).shape
        (2,)
    """
    _nd("to_dlpack_for_read", "data", data)
    return data._arr.__dlpack__()


def to_dlpack_for_write(data: NDArray) -> Any:
    """mxnet's ``to_dlpack_for_write``: a DLPack capsule sharing ``data``'s memory; writes
    through the importer are seen by ``data``.

    Example::

        >>> import numpy as np, gradhub_compat.mxnet as mx
        >>> x = mx.nd.zeros((2,))
        >>> mx.nd.from_dlpack(mx.nd.to_dlpack_for_write(x)).shape
        (2,)
    """
    _nd("to_dlpack_for_write", "data", data)
    return data._arr.__dlpack__(max_version=(1, 0))  # (versioned: importers may write)


class _Capsule:
    """A DLPack capsule wrapped as an object of the protocol (``__dlpack__``,
    ``__dlpack_device__``), its device read from the capsule's ``DLTensor``."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule
        api = ctypes.pythonapi
        api.PyCapsule_GetName.restype = ctypes.c_char_p
        api.PyCapsule_GetName.argtypes = [ctypes.py_object]
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        try:
            name = api.PyCapsule_GetName(capsule)
        except (TypeError, ValueError):
            name = None
        if name not in (b"dltensor", b"dltensor_versioned"):
            raise TypeError(
                "mx.nd.from_dlpack: dlpack must be a DLPack capsule (not yet consumed) or an "
                f"object with __dlpack__, got {type(capsule).__name__}"
            )
        ptr = api.PyCapsule_GetPointer(capsule, name)
        # DLManagedTensorVersioned starts with a version, manager_ctx, deleter and flags
        tensor = ptr + (32 if name == b"dltensor_versioned" else 0)
        dev = (ctypes.c_int32 * 2).from_address(tensor + ctypes.sizeof(ctypes.c_void_p))
        self._device = (int(dev[0]), int(dev[1]))

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._device


def from_dlpack(dlpack: Any) -> NDArray:
    """mxnet's ``from_dlpack``: an NDArray sharing the memory of a DLPack capsule (from
    :func:`to_dlpack_for_read`, ``torch.utils.dlpack.to_dlpack``...) or of an object of the
    DLPack protocol (a ``torch.Tensor``, a numpy array), without a copy (see
    :func:`gradhub.from_dlpack`).

    Example::

        >>> import numpy as np, gradhub_compat.mxnet as mx
        >>> mx.nd.from_dlpack(np.arange(3.0)).shape
        (3,)
    """
    obj = dlpack if hasattr(dlpack, "__dlpack__") else _Capsule(dlpack)
    var = gradhub.from_dlpack(obj, need_grad=False)
    dev_type, dev_id = obj.__dlpack_device__()
    ctx = cpu() if dev_type in (1, 3) else gpu(dev_id)
    arr = var._data
    return NDArray(arr.reshape(arr.shape or (1,)), ctx)
