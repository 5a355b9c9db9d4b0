"""mxnet 1.9.1's tensor functions of ``mx.nd``: joining and reshaping (``concat``, ``stack``,
``transpose``, ``tile``, ``repeat``...), broadcasting (``broadcast_to``, ``broadcast_add``...),
selection (``clip``, ``where``, ``take``, ``slice``, ``topk``...), reductions (``max``, ``prod``,
``norm``, ``argmax``...), elementwise math (``floor``, ``arcsin``, ``log2``...) and array makers
(``arange``, ``linspace``, ``one_hot``).

Each function follows mxnet 1.9.1's signature, defaults, output shapes and dtypes (integer arrays
keep their dtype, ``argmax`` gives indices in the input's dtype, ``argsort``/``topk`` float32
indices by default) and raises ``mx.base.MXNetError`` where mxnet does. Float inputs are recorded
by ``mx.autograd`` as compositions of registered gradhub functions, so their gradients (and
higher derivatives through ``mx.autograd.grad(..., create_graph=True)``) come from the native
engine; the functions mxnet gives no gradient (comparisons, ``argmax``, ``one_hot``...) are not
recorded, those with a zero gradient (``floor``, ``sign``...) pass zeros.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> x = mx.nd.array([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    >>> mx.nd.concat(x, x, dim=0).shape, mx.nd.argmax(x, axis=1).asnumpy()
    ((4, 3), array([1., 2.], dtype=float32))
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gradhub.modes import no_grad, set_recording
from gradhub.variable import Variable as NativeVariable

from .._common import call_native as _call
from . import _autograd_mode as _ag
from .base import MXNetError
from .context import Context
from .ndarray import (
    _STATE,
    NDArray,
    _ctx,
    _float_to_int,
    _fresh,
    _int_scalar,
    _mx_reshape,
    int_kernel,
    write_out,
)

__all__ = [
    "ElementWiseSum",
    "L2Normalization",
    "SequenceMask",
    "add_n",
    "arange",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
    "argmax",
    "argmax_channel",
    "argmin",
    "argsort",
    "batch_dot",
    "broadcast_axes",
    "broadcast_axis",
    "broadcast_equal",
    "broadcast_greater",
    "broadcast_greater_equal",
    "broadcast_lesser",
    "broadcast_lesser_equal",
    "broadcast_like",
    "broadcast_logical_and",
    "broadcast_logical_or",
    "broadcast_logical_xor",
    "broadcast_not_equal",
    "broadcast_power",
    "broadcast_to",
    "cast",
    "cbrt",
    "ceil",
    "clip",
    "concat",
    "cosh",
    "degrees",
    "erf",
    "erfinv",
    "expand_dims",
    "expm1",
    "fix",
    "flip",
    "floor",
    "gamma",
    "gammaln",
    "hard_sigmoid",
    "linalg_gemm2",
    "linspace",
    "log1p",
    "log2",
    "log10",
    "max",
    "maximum",
    "min",
    "minimum",
    "nanprod",
    "nansum",
    "negative",
    "one_hot",
    "power",
    "prod",
    "radians",
    "rcbrt",
    "reciprocal",
    "repeat",
    "reshape",
    "reshape_like",
    "reverse",
    "rint",
    "round",
    "rsqrt",
    "shape_array",
    "sign",
    "sinh",
    "size_array",
    "slice",
    "slice_axis",
    "slice_like",
    "smooth_l1",
    "softsign",
    "sort",
    "squeeze",
    "stack",
    "sum_axis",
    "swapaxes",
    "take",
    "tan",
    "tile",
    "topk",
    "transpose",
    "trunc",
]

_DOCS = "docs/migration-mxnet.md"


# -- helpers -------------------------------------------------------------------------------------


def _nd(fn: str, arg: str, v: Any) -> NDArray:
    if not isinstance(v, NDArray):
        raise TypeError(f"mx.nd.{fn}: {arg} must be an NDArray, got {type(v).__name__}")
    return v


def _no_out(fn: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"mx.nd.{fn}: out= is not supported ({_DOCS})")


def _same_dtype(fn: str, arrays: Sequence[NDArray]) -> None:
    dt = arrays[0]._arr.dtype
    for i, a in enumerate(arrays[1:], 1):
        if a._arr.dtype != dt:
            raise MXNetError(
                f"mx.nd.{fn}: Incompatible attr at {i}-th input: expected {dt.name}, got "
                f"{a._arr.dtype.name} (mxnet refuses mixed dtypes)"
            )


def _run(arrays: Sequence[NDArray], fn: Callable[..., NativeVariable]) -> NDArray:
    """``fn`` on the native Variables of ``arrays``: recorded by ``mx.autograd`` when it records
    and an input belongs to a graph (all inputs of a float dtype), else computed without a
    graph. A 0-d result becomes shape (1,), as mxnet; a result sharing memory with an
    input is copied (mxnet's operators return new arrays)."""
    rec = (
        _STATE.recording
        and builtins.any(a._var is not None for a in arrays)
        and builtins.all(a._arr.dtype.kind == "f" for a in arrays)
    )
    with set_recording(True) if rec else no_grad():
        r = fn(*[a._as_var() for a in arrays])
        if r.ndim == 0:
            r = _call("reshape", r, shape=(1,))
    out = NDArray(r._data, arrays[0]._ctx, r if rec else None)
    for a in arrays:
        out = _fresh(out, a)
    return out


def _host(x: NDArray) -> np.ndarray:
    return np.asarray(x._ctx.device().to_numpy(x._arr))


def _from_host(arr: np.ndarray, like: NDArray | Context) -> NDArray:
    ctx = like._ctx if isinstance(like, NDArray) else like
    arr = np.asarray(arr)
    return NDArray(ctx.device().asarray(np.ascontiguousarray(arr.reshape(arr.shape or (1,)))), ctx)


def _leaf(arr: Any, like: NativeVariable) -> NativeVariable:
    """A constant (no gradient) on ``like``'s device."""
    return NativeVariable.leaf(like.device.asarray(np.ascontiguousarray(arr)), False)


def _axis(fn: str, axis: Any, ndim: int, extra: int = 0) -> int:
    """``axis`` in ``[0, ndim + extra)`` (negative counted from the end), else MXNetError."""
    n = ndim + extra
    a = int(axis)
    if not -n <= a < n:
        raise MXNetError(
            f"mx.nd.{fn}: axis {a} is out of range for an array of {ndim} dimensions "
            f"(in [{-n}, {n - 1}])"
        )
    return a % n


def _axes(fn: str, axis: Any, ndim: int, exclude: bool = False) -> tuple[int, ...]:
    """mxnet's reduction axes: None or ``()`` are every axis (with ``exclude`` too, as mxnet);
    ``exclude`` reduces the axes not given."""
    if axis is None or (isinstance(axis, (tuple, list)) and len(axis) == 0):
        return tuple(range(ndim))
    raw = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in raw:
        if not -ndim <= int(a) < ndim:
            raise MXNetError(
                f"mx.nd.{fn}: Reduction axis {int(a)} Exceeds input dimensions (an array of "
                f"{ndim} dimensions)"
            )
        out.append(int(a) % ndim)
    if exclude:
        return tuple(a for a in range(ndim) if a not in out)
    return tuple(sorted(set(out)))


def _kept(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes) or (1,)


# -- joining and reshaping ------------------------------------------------------------------------


def concat(*data: NDArray, dim: int = 1, num_args: int | None = None, **kwargs: Any) -> NDArray:
    """mxnet's ``concat`` (``Concat``): the arrays joined along ``dim`` (negative counts from the
    end); every other dimension and the dtype must agree (else ``MXNetError``). Recorded by
    ``mx.autograd``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.concat(mx.nd.ones((2, 1)), mx.nd.zeros((2, 2))).asnumpy()
        array([[1., 0., 0.],
               [1., 0., 0.]], dtype=float32)
    """
    _no_out("concat", kwargs.pop("out", None))
    if not data:
        raise MXNetError("mx.nd.concat: at least one array is needed")
    arrays = [_nd("concat", f"data[{i}]", d) for i, d in enumerate(data)]
    if num_args is not None and int(num_args) != len(arrays):
        raise MXNetError(f"mx.nd.concat: num_args={num_args} but {len(arrays)} arrays given")
    _same_dtype("concat", arrays)
    first = arrays[0]
    ax = _axis("concat", dim, first.ndim)
    for a in arrays[1:]:
        if a.ndim != first.ndim or builtins.any(
            s != t for i, (s, t) in enumerate(zip(a.shape, first.shape)) if i != ax
        ):
            raise MXNetError(
                f"mx.nd.concat: Incompatible input shape: {list(a.shape)} cannot be joined with "
                f"{list(first.shape)} along dim {dim}"
            )
    if len(arrays) == 1:
        return _run(arrays, lambda x: _call("reshape", x, shape=x.shape))
    return _run(arrays, lambda *xs: _call("concatenate", *xs, axis=ax))


def _same_shape_arrays(fn: str, arg: str, items: Any) -> list[NDArray]:
    """``items`` as NDArrays of one dtype and one shape (at least one) for ``mx.nd.<fn>``."""
    if not items:
        raise MXNetError(f"mx.nd.{fn}: at least one array is needed")
    arrays = [_nd(fn, f"{arg}[{i}]", d) for i, d in enumerate(items)]
    _same_dtype(fn, arrays)
    for a in arrays[1:]:
        if a.shape != arrays[0].shape:
            raise MXNetError(
                f"mx.nd.{fn}: the arrays must have one shape, got {list(arrays[0].shape)} and "
                f"{list(a.shape)}"
            )
    return arrays


def stack(*data: NDArray, axis: int = 0, num_args: int | None = None, **kwargs: Any) -> NDArray:
    """mxnet's ``stack``: the arrays (one shape and dtype) joined along a new axis ``axis``
    (in ``[-ndim - 1, ndim]``). Recorded by ``mx.autograd``. Arrays of different shapes raise
    ``MXNetError`` (mxnet 1.9.1's imperative ``stack`` does not check the shapes and reads past
    the smaller arrays).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.stack(mx.nd.ones((2, 3)), mx.nd.zeros((2, 3)), axis=1).shape
        (2, 2, 3)
    """
    _no_out("stack", kwargs.pop("out", None))
    arrays = _same_shape_arrays("stack", "data", data)
    ax = _axis("stack", axis, arrays[0].ndim, extra=1)
    return _run(arrays, lambda *xs: _call("stack", *xs, axis=ax))


def transpose(data: NDArray, axes: Any = (), out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``transpose``: the axes permuted by ``axes`` (non-negative, one per axis; the
    default ``()`` reverses them). Recorded by ``mx.autograd``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.transpose(mx.nd.zeros((2, 3, 4)), axes=(1, 0, 2)).shape
        (3, 2, 4)
    """
    _nd("transpose", "data", data)
    _no_out("transpose", out)
    nd_ = data.ndim
    ax = tuple(int(a) for a in (axes or ()))
    if not ax:
        ax = tuple(range(nd_ - 1, -1, -1))
    if len(ax) != nd_:
        raise MXNetError(
            f"mx.nd.transpose: axes {ax} must give one axis per dimension ({nd_} vs. {len(ax)})"
        )
    if sorted(ax) != list(range(nd_)):
        raise MXNetError(
            f"mx.nd.transpose: axes {ax} must be a permutation of 0..{nd_ - 1} (mxnet "
            "accepts no negative axes here)"
        )
    return _run([data], lambda x: _call("transpose", x, axes=ax))


def _reshaped(data: NDArray, shape: tuple[int, ...]) -> NDArray:
    return _run([data], lambda x: _call("reshape", x, shape=shape))


def expand_dims(data: NDArray, axis: int, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``expand_dims``: a new axis of length 1 at ``axis`` (in ``[-ndim - 1, ndim]``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.expand_dims(mx.nd.zeros((3, 4)), axis=-1).shape
        (3, 4, 1)
    """
    _nd("expand_dims", "data", data)
    _no_out("expand_dims", out)
    n = data.ndim
    if not -n - 1 <= int(axis) <= n:
        raise MXNetError(
            f"mx.nd.expand_dims: axis must be in the range [{-n - 1}, {n}] ({axis} provided)"
        )
    ax = int(axis) % (n + 1)
    shape = data.shape[:ax] + (1,) + data.shape[ax:]
    return _reshaped(data, shape)


def squeeze(data: NDArray, axis: Any = None, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``squeeze``: the length-1 axes removed (all of them, or those of ``axis``, an int
    or a tuple; another length raises ``MXNetError``); an array of only length-1 axes gives
    shape (1,), as mxnet.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.squeeze(mx.nd.zeros((1, 3, 1))).shape, mx.nd.squeeze(mx.nd.zeros((1, 1))).shape
        ((3,), (1,))
    """
    _nd("squeeze", "data", data)
    _no_out("squeeze", out)
    if axis is None:
        drop = {i for i, s in enumerate(data.shape) if s == 1}
    else:
        raw = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        drop = {_axis("squeeze", a, data.ndim) for a in raw}
        for a in sorted(drop):
            if data.shape[a] != 1:
                raise MXNetError(
                    f"mx.nd.squeeze: cannot select an axis to squeeze out which has "
                    f"size={data.shape[a]} not equal to one (axis {a})"
                )
    shape = tuple(s for i, s in enumerate(data.shape) if i not in drop) or (1,)
    return _reshaped(data, shape)


def swapaxes(
    data: NDArray, dim1: int = 0, dim2: int = 0, out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``swapaxes`` (``SwapAxis``): axes ``dim1`` and ``dim2`` exchanged.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.swapaxes(mx.nd.zeros((2, 3, 4)), 0, 2).shape
        (4, 3, 2)
    """
    _nd("swapaxes", "data", data)
    _no_out("swapaxes", out)
    a, b = _axis("swapaxes", dim1, data.ndim), _axis("swapaxes", dim2, data.ndim)
    perm = list(range(data.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return _run([data], lambda x: _call("transpose", x, axes=tuple(perm)))


def flip(data: NDArray, axis: Any, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``flip`` (``reverse``): the order of the elements along ``axis`` (an int or a
    tuple; non-negative, as mxnet) reversed.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.flip(mx.nd.array([[1, 2, 3]]), axis=1).asnumpy()
        array([[3., 2., 1.]], dtype=float32)
    """
    _nd("flip", "data", data)
    _no_out("flip", out)
    raw = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    for a in raw:
        if not 0 <= int(a) < data.ndim:
            raise MXNetError(
                f"mx.nd.flip: axis {int(a)} must be in range [0, {data.ndim}) (mxnet accepts no "
                "negative axes here)"
            )
    ax = tuple(int(a) for a in raw)
    return _run([data], lambda x: _call("flip", x, axes=ax))


reverse = flip


def tile(data: NDArray, reps: Any, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``tile``: the array repeated ``reps[i]`` times along each axis; more ``reps`` than
    axes add leading axes (as numpy); fewer raise ``MXNetError`` (as mxnet 1.9.1).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.tile(mx.nd.array([[1, 2]]), reps=(2, 2)).asnumpy()
        array([[1., 2., 1., 2.],
               [1., 2., 1., 2.]], dtype=float32)
    """
    _nd("tile", "data", data)
    _no_out("tile", out)
    r = (int(reps),) if isinstance(reps, (int, np.integer)) else tuple(int(v) for v in reps)
    if len(r) < data.ndim or builtins.any(v <= 0 for v in r):
        raise MXNetError(
            f"mx.nd.tile: reps {r} must have at least one positive entry per axis of the data "
            f"(shape {data.shape}); mxnet 1.9.1 cannot infer the shape otherwise"
        )
    if not r:
        return _reshaped(data, data.shape)
    return _run([data], lambda x: _call("tile", x, reps=r))


def repeat(
    data: NDArray, repeats: int, axis: int | None = None, out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``repeat``: each element repeated ``repeats`` times along ``axis`` (without
    ``axis``, of the flattened array).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.repeat(mx.nd.array([[1, 2]]), repeats=2, axis=1).asnumpy()
        array([[1., 1., 2., 2.]], dtype=float32)
    """
    _nd("repeat", "data", data)
    _no_out("repeat", out)
    n = int(repeats)
    if n < 0:
        raise MXNetError(f"mx.nd.repeat: repeats={n} must be non-negative")
    src = data
    if axis is None:
        src = _reshaped(data, (data.size,))
        ax = 0
    else:
        ax = _axis("repeat", axis, data.ndim)
    shape = src.shape
    wide = shape[: ax + 1] + (n,) + shape[ax + 1 :]
    final = shape[:ax] + (shape[ax] * n,) + shape[ax + 1 :]

    def rep(x: NativeVariable) -> NativeVariable:
        y = _call("reshape", x, shape=shape[: ax + 1] + (1,) + shape[ax + 1 :])
        y = _call("broadcast_to", y, shape=wide)
        return _call("reshape", y, shape=final)

    return _run([src], rep)


def reshape(
    data: NDArray, shape: Any = None, reverse: bool = False, out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``reshape`` as a function: ``data.reshape(shape, reverse=reverse)`` with mxnet's
    codes (0, -1, -2, -3, -4; see ``NDArray.reshape``), as a new array.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.reshape(mx.nd.zeros((2, 3, 4)), shape=(-1, 0), reverse=True).shape
        (6, 4)
    """
    _nd("reshape", "data", data)
    _no_out("reshape", out)
    if shape is None:
        raise MXNetError("mx.nd.reshape: Required parameter shape is not presented")
    codes = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    try:
        target = _mx_reshape(data.shape, codes, bool(reverse))
    except ValueError as e:
        raise MXNetError(f"mx.nd.reshape: {e}") from None
    return _reshaped(data, target)


def reshape_like(
    lhs: NDArray,
    rhs: NDArray,
    lhs_begin: Any = None,
    lhs_end: Any = None,
    rhs_begin: Any = None,
    rhs_end: Any = None,
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``reshape_like``: ``lhs`` with the shape of ``rhs`` (the same size); the
    dimensions ``lhs[lhs_begin:lhs_end]`` replaced by ``rhs[rhs_begin:rhs_end]`` when those are
    given (None: the start or end).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.reshape_like(mx.nd.zeros((2, 6)), mx.nd.zeros((3, 4))).shape
        (3, 4)
    """
    _nd("reshape_like", "lhs", lhs)
    _nd("reshape_like", "rhs", rhs)
    _no_out("reshape_like", out)

    def span(b: Any, e: Any, n: int) -> tuple[int, int]:
        lo = 0 if b is None else int(b) % n if n else 0
        hi = n if e is None else (int(e) if int(e) >= 0 else int(e) + n)
        return lo, hi

    lb, le = span(lhs_begin, lhs_end, lhs.ndim)
    rb, re_ = span(rhs_begin, rhs_end, rhs.ndim)
    shape = lhs.shape[:lb] + rhs.shape[rb:re_] + lhs.shape[le:]
    if math.prod(shape) != lhs.size:
        raise MXNetError(
            f"mx.nd.reshape_like: cannot reshape lhs of shape {list(lhs.shape)} into "
            f"{list(shape)} (the sizes differ)"
        )
    return _reshaped(lhs, tuple(shape))


# -- broadcasting ---------------------------------------------------------------------------------


def _broadcast(data: NDArray, shape: tuple[int, ...]) -> NDArray:
    if shape == data.shape:
        return _reshaped(data, shape)
    return _run([data], lambda x: _call("broadcast_to", x, shape=shape))


def broadcast_to(data: NDArray, shape: Any = (), out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``broadcast_to``: ``data`` (the same number of axes as ``shape``) with its
    length-1 axes repeated to ``shape``; a 0 in ``shape`` keeps that dimension. Recorded (the
    gradient sums over the broadcast axes).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.broadcast_to(mx.nd.ones((1, 3)), shape=(2, 0)).shape
        (2, 3)
    """
    _nd("broadcast_to", "data", data)
    _no_out("broadcast_to", out)
    target = tuple(int(s) for s in shape)
    if len(target) != data.ndim:
        raise MXNetError(
            f"mx.nd.broadcast_to: Operand of shape {list(data.shape)} cannot be broadcasted to "
            f"{list(target)} (the number of axes differ)"
        )
    target = tuple(s if t == 0 else t for s, t in zip(data.shape, target))
    for s, t in zip(data.shape, target):
        if s != t and s != 1:
            raise MXNetError(
                f"mx.nd.broadcast_to: Array cannot be broadcasted from {list(data.shape)} to "
                f"{list(target)}"
            )
    return _broadcast(data, target)


def broadcast_like(
    lhs: NDArray,
    rhs: NDArray,
    lhs_axes: Any = None,
    rhs_axes: Any = None,
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``broadcast_like``: ``lhs`` broadcast to the shape of ``rhs`` (the same number of
    axes), or only its ``lhs_axes`` to the lengths of ``rhs``'s ``rhs_axes``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.broadcast_like(mx.nd.ones((1, 4)), mx.nd.zeros((3, 4))).shape
        (3, 4)
    """
    _nd("broadcast_like", "lhs", lhs)
    _nd("broadcast_like", "rhs", rhs)
    _no_out("broadcast_like", out)
    if lhs_axes is None and rhs_axes is None:
        return broadcast_to(lhs, rhs.shape)
    la = [int(a) for a in ((lhs_axes,) if isinstance(lhs_axes, int) else lhs_axes or ())]
    ra = [int(a) for a in ((rhs_axes,) if isinstance(rhs_axes, int) else rhs_axes or ())]
    if len(la) != len(ra):
        raise MXNetError("mx.nd.broadcast_like: lhs_axes and rhs_axes must have one length")
    target = list(lhs.shape)
    for a, b in zip(la, ra):
        target[_axis("broadcast_like", a, lhs.ndim)] = rhs.shape[
            _axis("broadcast_like", b, rhs.ndim)
        ]
    return broadcast_to(lhs, tuple(target))


def broadcast_axis(
    data: NDArray, axis: Any = (), size: Any = (), out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``broadcast_axis`` (``broadcast_axes``): the length-1 axes ``axis`` repeated to
    ``size`` (ints or tuples of one length).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.broadcast_axis(mx.nd.ones((2, 1)), axis=1, size=3).shape
        (2, 3)
    """
    _nd("broadcast_axis", "data", data)
    _no_out("broadcast_axis", out)
    ax = [int(a) for a in ((axis,) if isinstance(axis, (int, np.integer)) else axis)]
    sz = [int(s) for s in ((size,) if isinstance(size, (int, np.integer)) else size)]
    if len(ax) != len(sz):
        raise MXNetError("mx.nd.broadcast_axis: axis and size must have one length")
    target = list(data.shape)
    for a, s in zip(ax, sz):
        i = _axis("broadcast_axis", a, data.ndim)
        if data.shape[i] != 1:
            raise MXNetError(
                f"mx.nd.broadcast_axis: Broadcasting axis must have size 1 (axis {i} has "
                f"{data.shape[i]})"
            )
        target[i] = s
    return _broadcast(data, tuple(target))


broadcast_axes = broadcast_axis


def _bshape(fn: str, lhs: NDArray, rhs: NDArray) -> tuple[int, ...]:
    _nd(fn, "lhs", lhs)
    _nd(fn, "rhs", rhs)
    if lhs._arr.dtype != rhs._arr.dtype:
        raise MXNetError(
            f"mx.nd.{fn}: Incompatible attr at 1-th input: expected {lhs._arr.dtype.name}, got "
            f"{rhs._arr.dtype.name}"
        )
    try:
        return tuple(np.broadcast_shapes(lhs.shape, rhs.shape))
    except ValueError:
        raise MXNetError(
            f"mx.nd.{fn}: operands could not be broadcast together with shapes "
            f"{list(lhs.shape)} {list(rhs.shape)}"
        ) from None


def _select2(op: str, a: NativeVariable, b: NativeVariable) -> NativeVariable:
    """``maximum``/``minimum`` of two Variables of one shape; at ties the gradient goes to ``a``
    (mxnet's ``_maximum``: ``a >= b``)."""
    return _call("maximum2" if op == "maximum" else "minimum2", a, b, ties="first")


def _bin_native(op: str, shape: tuple[int, ...]) -> Callable[..., NativeVariable]:
    def f(a: NativeVariable, b: NativeVariable) -> NativeVariable:
        if op in ("maximum", "minimum"):
            if tuple(a.shape) != shape:
                a = _call("broadcast_to", a, shape=shape)
            if tuple(b.shape) != shape:
                b = _call("broadcast_to", b, shape=shape)
            return _select2(op, a, b)
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        if op == "div":
            return a / b
        return a**b

    return f


_INT_BIN = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "power": "pow"}


def _binary_op(fn: str, op: str, lhs: NDArray, rhs: NDArray) -> NDArray:
    shape = _bshape(fn, lhs, rhs)
    dt = lhs._arr.dtype
    if dt.kind in "iub":
        a = np.broadcast_to(_host(lhs), shape)
        b = np.broadcast_to(_host(rhs), shape)
        if op in ("maximum", "minimum"):
            res = (np.maximum if op == "maximum" else np.minimum)(a, b)
        else:
            res = int_kernel(_INT_BIN[op], [np.ascontiguousarray(a), np.ascontiguousarray(b)])
        return _from_host(np.asarray(res, dtype=dt), lhs)
    return _run([lhs, rhs], _bin_native(op, shape))


def _make_binary(fn: str, op: str, formula: str) -> Callable[..., NDArray]:
    def function(lhs: NDArray, rhs: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
        _no_out(fn, out)
        return _binary_op(fn, op, lhs, rhs)

    function.__name__ = function.__qualname__ = fn
    function.__doc__ = (
        f"mxnet's ``{fn}``: ``{formula}`` elementwise with numpy broadcasting, in the operands' "
        "dtype (one dtype, else ``MXNetError``; integer division truncates toward zero, integer "
        "powers are computed in double precision and converted back). Recorded by "
        "``mx.autograd`` (each gradient summed back to its operand's shape).\n\n"
        "Example::\n\n    >>> import gradhub_compat.mxnet as mx\n"
        f"    >>> mx.nd.{fn}(mx.nd.ones((2, 1)), mx.nd.ones((1, 3))).shape\n    (2, 3)\n"
    )
    return function


broadcast_power = _make_binary("broadcast_power", "power", "lhs ** rhs")


def _make_compare(fn: str, op: Callable[[Any, Any], Any], formula: str) -> Callable[..., NDArray]:
    def function(lhs: NDArray, rhs: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
        _no_out(fn, out)
        shape = _bshape(fn, lhs, rhs)
        a = np.broadcast_to(_host(lhs), shape)
        b = np.broadcast_to(_host(rhs), shape)
        res = np.asarray(op(a, b)).astype(lhs._arr.dtype)
        if lhs._arr.dtype.kind in "iub":
            return _from_host(res, lhs)

        def f(x: NativeVariable, y: NativeVariable) -> NativeVariable:
            # recorded with gradient 0 for both operands, as mxnet
            off = _leaf(np.zeros(shape, bool), x)
            xb = x if tuple(x.shape) == shape else _call("broadcast_to", x, shape=shape)
            yb = y if tuple(y.shape) == shape else _call("broadcast_to", y, shape=shape)
            return _call("where", off, xb, _leaf(res, x)) + _call(
                "where", off, yb, _leaf(np.zeros(shape, res.dtype), x)
            )

        return _run([lhs, rhs], f)

    function.__name__ = function.__qualname__ = fn
    function.__doc__ = (
        f"mxnet's ``{fn}``: 1 where ``{formula}``, else 0, in the operands' dtype, with numpy "
        "broadcasting; recorded with gradient 0 (as mxnet).\n\n"
        "Example::\n\n    >>> import gradhub_compat.mxnet as mx\n"
        f"    >>> mx.nd.{fn}(mx.nd.array([1, 2]), mx.nd.array([2])).shape\n    (2,)\n"
    )
    return function


broadcast_equal = _make_compare("broadcast_equal", np.equal, "lhs == rhs")
broadcast_not_equal = _make_compare("broadcast_not_equal", np.not_equal, "lhs != rhs")
broadcast_greater = _make_compare("broadcast_greater", np.greater, "lhs > rhs")
broadcast_greater_equal = _make_compare("broadcast_greater_equal", np.greater_equal, "lhs >= rhs")
broadcast_lesser = _make_compare("broadcast_lesser", np.less, "lhs < rhs")
broadcast_lesser_equal = _make_compare("broadcast_lesser_equal", np.less_equal, "lhs <= rhs")
broadcast_logical_and = _make_compare(
    "broadcast_logical_and", np.logical_and, "lhs != 0 and rhs != 0"
)
broadcast_logical_or = _make_compare("broadcast_logical_or", np.logical_or, "lhs != 0 or rhs != 0")
broadcast_logical_xor = _make_compare(
    "broadcast_logical_xor", np.logical_xor, "exactly one of lhs, rhs is non-zero"
)


def _scalar_like(x: NDArray, value: Any) -> NDArray:
    dt = x._arr.dtype
    v = _int_scalar(value, dt) if dt.kind in "iu" else dt.type(value)
    return _from_host(np.full(x.shape, v, dtype=dt), x)


def _extremum(fn: str, op: str, lhs: Any, rhs: Any) -> Any:
    l_nd, r_nd = isinstance(lhs, NDArray), isinstance(rhs, NDArray)
    if not l_nd and not r_nd:
        return (builtins.max if op == "maximum" else builtins.min)(lhs, rhs)
    if l_nd and r_nd:
        return _binary_op(fn, op, lhs, rhs)
    arr, num = (lhs, rhs) if l_nd else (rhs, lhs)
    if not isinstance(num, (int, float, np.number)) or isinstance(num, bool):
        raise TypeError(f"mx.nd.{fn}: type {type(num).__name__} not supported (NDArray or number)")
    # mxnet's _maximum_scalar: the number converted to the array's dtype; at ties the gradient
    # goes to the array
    return _binary_op(fn, op, arr, _scalar_like(arr, num))


def maximum(lhs: Any, rhs: Any, out: Any = None, **kwargs: Any) -> Any:
    """mxnet's ``mx.nd.maximum``: the elementwise maximum of two NDArrays (broadcasting) or of an
    NDArray and a number (converted to its dtype first: ``int32`` with 1.7 compares with 1);
    two numbers give Python's ``max``. At ties the gradient goes to the left NDArray (to the
    NDArray, with a number). Recorded by ``mx.autograd``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.maximum(mx.nd.array([-1.0, 2.0]), 0).asnumpy()
        array([0., 2.], dtype=float32)
    """
    _no_out("maximum", out)
    return _extremum("maximum", "maximum", lhs, rhs)


def minimum(lhs: Any, rhs: Any, out: Any = None, **kwargs: Any) -> Any:
    """mxnet's ``mx.nd.minimum``: as :func:`maximum`, the elementwise minimum."""
    _no_out("minimum", out)
    return _extremum("minimum", "minimum", lhs, rhs)


def power(base: Any, exp: Any, out: Any = None, **kwargs: Any) -> Any:
    """mxnet's ``mx.nd.power``: ``base ** exp`` of two NDArrays (broadcasting) or an NDArray and
    a number on either side; recorded by ``mx.autograd``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.power(mx.nd.array([2.0, 3.0]), 2).asnumpy()
        array([4., 9.], dtype=float32)
    """
    _no_out("power", out)
    if isinstance(base, NDArray) and isinstance(exp, NDArray):
        return _binary_op("power", "power", base, exp)
    return base**exp  # an NDArray and a number: NDArray's ** (two numbers: Python's)


def _clipped(v: np.ndarray, lo: Any, hi: Any) -> np.ndarray:
    """mxnet's clip kernel: ``hi`` where ``v > hi``, else ``lo`` where ``v < lo``, else ``v``."""
    return np.where(v > hi, hi, np.where(v < lo, lo, v))


def clip(data: NDArray, a_min: float, a_max: float, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``clip``: ``a_max`` where ``x > a_max``, else ``a_min`` where ``x < a_min``, else
    ``x`` (integer arrays: the bounds truncated to the dtype first; with ``a_min > a_max`` this
    is mxnet's order of tests). The gradient passes where neither test holds (the bounds
    included) and is 0 elsewhere, as mxnet. ``out=`` receives the result.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.clip(mx.nd.array([-2.0, 0.5, 3.0]), 0, 1).asnumpy()
        array([0. , 0.5, 1. ], dtype=float32)
    """
    _nd("clip", "data", data)
    return write_out("clip", _clip(data, a_min, a_max), out)


def _clip(data: NDArray, a_min: float, a_max: float) -> NDArray:
    if a_min is None or a_max is None:
        raise MXNetError("mx.nd.clip: Required parameters a_min and a_max are not presented")
    dt = data._arr.dtype
    if dt.kind in "iu":
        lo, hi = _int_scalar(a_min, dt), _int_scalar(a_max, dt)
        return _from_host(_clipped(_host(data), lo, hi).astype(dt), data)
    lo_, hi_ = dt.type(a_min), dt.type(a_max)

    def f(x: NativeVariable) -> NativeVariable:
        xd = np.asarray(x.device.to_numpy(x._data))
        inside = ~(xd > hi_) & ~(xd < lo_)
        value = _clipped(xd, lo_, hi_).astype(dt)
        # x where it passes, the clipped constant elsewhere (gradient: the mask)
        r = _call("where", _leaf(inside, x), x, _leaf(value, x))
        if r.creator is not None:
            _ag.MX_OPS[r.creator] = "clip"
        return r

    return _run([data], f)


def _reduction(
    fn: str,
    data: NDArray,
    axis: Any,
    keepdims: bool,
    exclude: bool,
    native: Callable[[NativeVariable, tuple[int, ...]], NativeVariable],
    int_fn: Callable[[np.ndarray, tuple[int, ...]], np.ndarray],
) -> NDArray:
    _nd(fn, "data", data)
    axes = _axes(fn, axis, data.ndim, exclude)
    shape = _kept(data.shape, axes, bool(keepdims))
    if not axes:  # nothing to reduce: a copy
        return _reshaped(data, shape)
    if data._arr.dtype.kind in "iu":
        with np.errstate(all="ignore"):
            res = int_fn(_host(data), axes)
        return _from_host(np.asarray(res).astype(data._arr.dtype).reshape(shape), data)

    def f(x: NativeVariable) -> NativeVariable:
        return _call("reshape", native(x, axes), shape=shape)

    return _run([data], f)


def _make_reduce(
    fn: str,
    native: Callable[[NativeVariable, tuple[int, ...]], NativeVariable],
    int_fn: Callable[[np.ndarray, tuple[int, ...]], np.ndarray],
    doc: str,
) -> Callable[..., NDArray]:
    def function(
        data: NDArray,
        axis: Any = None,
        keepdims: bool = False,
        exclude: bool = False,
        out: Any = None,
        **kwargs: Any,
    ) -> NDArray:
        _no_out(fn, out)
        return _reduction(fn, data, axis, keepdims, exclude, native, int_fn)

    function.__name__ = function.__qualname__ = fn
    function.__doc__ = (
        f"mxnet's ``{fn}(data, axis=None, keepdims=False, exclude=False)``: {doc} over ``axis`` "
        "(an int or a tuple; every axis for None or ``()``; with ``exclude`` every axis but "
        "those); a full reduction without ``keepdims`` has shape (1,); an axis out of range "
        "raises ``MXNetError``. Integer arrays keep their dtype. Recorded by ``mx.autograd``.\n\n"
        "Example::\n\n    >>> import gradhub_compat.mxnet as mx\n"
        f"    >>> mx.nd.{fn}(mx.nd.ones((2, 3)), axis=1).shape\n    (2,)\n"
    )
    return function


def _nan_to(value: float) -> Callable[[NativeVariable], NativeVariable]:
    def f(x: NativeVariable) -> NativeVariable:
        bad = np.isnan(np.asarray(x.device.to_numpy(x._data)))
        fill = np.full(x.shape, value, dtype=x.dtype)
        return _call("where", _leaf(bad, x), _leaf(fill, x), x)

    return f


max = _make_reduce(
    "max",
    lambda x, a: _call("max", x, axis=a, keepdims=False, ties="all"),
    lambda v, a: np.max(v, axis=a),
    "the maximum (at ties every maximal element gets the whole gradient, as mxnet)",
)
min = _make_reduce(
    "min",
    lambda x, a: _call("min", x, axis=a, keepdims=False, ties="all"),
    lambda v, a: np.min(v, axis=a),
    "the minimum (at ties every minimal element gets the whole gradient, as mxnet)",
)
prod = _make_reduce(
    "prod",
    lambda x, a: _call("prod", x, axis=a, keepdims=False),
    lambda v, a: np.prod(v, axis=a, dtype=v.dtype),
    "the product",
)
nansum = _make_reduce(
    "nansum",
    lambda x, a: _call("sum", _nan_to(0.0)(x), axis=a, keepdims=False),
    lambda v, a: np.sum(v, axis=a, dtype=v.dtype),
    "the sum with NaN counted as 0 (NaN elements get gradient 0)",
)
nanprod = _make_reduce(
    "nanprod",
    lambda x, a: _call("prod", _nan_to(1.0)(x), axis=a, keepdims=False),
    lambda v, a: np.prod(v, axis=a, dtype=v.dtype),
    "the product with NaN counted as 1 (NaN elements get gradient 0)",
)


def sum_axis(
    data: NDArray, axis: Any = None, keepdims: bool = False, exclude: bool = False, **kwargs: Any
) -> NDArray:
    """mxnet's ``sum_axis``: the same function as ``mx.nd.sum``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.sum_axis(mx.nd.ones((2, 3)), axis=1).asnumpy()
        array([3., 3.], dtype=float32)
    """
    from . import ndarray as _ndmod

    return _ndmod.sum(data, axis=axis, keepdims=keepdims, exclude=exclude, **kwargs)


def _arg(fn: str, data: NDArray, axis: Any, keepdims: bool) -> NDArray:
    v = _host(data)
    pick = np.argmax if fn == "argmax" else np.argmin
    if axis is None:
        r = np.asarray(pick(v.reshape(-1)))
        shape: tuple[int, ...] = (1,) * data.ndim if keepdims else (1,)
    else:
        a = _axis(fn, axis, data.ndim)
        r = pick(v, axis=a)
        shape = _kept(data.shape, (a,), bool(keepdims))
    return _from_host(np.asarray(r).astype(data._arr.dtype).reshape(shape), data)


def argmax(
    data: NDArray, axis: Any = None, keepdims: bool = False, out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``argmax``: the index of the first maximum along ``axis`` (of the flattened array
    without ``axis``: shape (1,)), **in the input's dtype** (float32 indices for float32 data, as
    mxnet). Not differentiable (not recorded).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.argmax(mx.nd.array([[1, 3, 2], [4, 0, 4]]), axis=1).asnumpy()
        array([1., 0.], dtype=float32)
    """
    _nd("argmax", "data", data)
    _no_out("argmax", out)
    return _arg("argmax", data, axis, keepdims)


def argmin(
    data: NDArray, axis: Any = None, keepdims: bool = False, out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``argmin``: as :func:`argmax`, the index of the first minimum."""
    _nd("argmin", "data", data)
    _no_out("argmin", out)
    return _arg("argmin", data, axis, keepdims)


def argmax_channel(data: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``argmax_channel``: ``argmax(data, axis=-1)``."""
    _nd("argmax_channel", "data", data)
    _no_out("argmax_channel", out)
    return _arg("argmax", data, -1, False)


# -- sorting ---------------------------------------------------------------------------------------


def _order(v: np.ndarray, axis: int, ascend: bool) -> np.ndarray:
    """Indices sorting ``v`` along ``axis``, ties in their order (both directions, as mxnet);
    NaN comes after every number in both directions."""
    if ascend:
        return np.argsort(v, axis=axis, kind="stable")
    if v.dtype.kind in "ub":
        key = -v.astype(np.int64)
    else:
        key = -v
    return np.argsort(key, axis=axis, kind="stable")


def _sort_axis(fn: str, data: NDArray, axis: Any) -> tuple[NDArray, int]:
    if axis is None:
        return _reshaped(data, (data.size,)), 0
    return data, _axis(fn, axis, data.ndim)


def _gathered(data: NDArray, idx: np.ndarray, axis: int) -> NDArray:
    """``take_along_axis(data, idx, axis)``, recorded (the gradient is scattered back)."""
    # (numpy's stubs type ``indices`` of a shape of unknown length as an empty tuple)
    grids: tuple[np.ndarray, ...] = np.indices(idx.shape, sparse=True)
    key = tuple(idx if i == axis else np.broadcast_to(g, idx.shape) for i, g in enumerate(grids))
    if data._arr.dtype.kind in "iub":
        return _from_host(_host(data)[key], data)
    return _run([data], lambda x: _call("get_item", x, key=key))


def argsort(
    data: NDArray,
    axis: Any = -1,
    is_ascend: bool = True,
    dtype: Any = "float32",
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``argsort``: the indices sorting ``data`` along ``axis`` (the flattened array for
    None), ascending or not, as ``dtype`` (float32 by default, whatever the data's dtype). Not
    differentiable.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.argsort(mx.nd.array([3, 1, 2])).asnumpy()
        array([1., 2., 0.], dtype=float32)
    """
    _nd("argsort", "data", data)
    _no_out("argsort", out)
    src, ax = _sort_axis("argsort", data, axis)
    idx = _order(_host(src), ax, bool(is_ascend))
    return _from_host(idx.astype(np.dtype(dtype)), data)


def sort(
    data: NDArray, axis: Any = -1, is_ascend: bool = True, out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``sort``: the values sorted along ``axis`` (the flattened array for None),
    ascending or not. Recorded (each value's gradient goes back to its position).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.sort(mx.nd.array([3, 1, 2]), is_ascend=False).asnumpy()
        array([3., 2., 1.], dtype=float32)
    """
    _nd("sort", "data", data)
    _no_out("sort", out)
    src, ax = _sort_axis("sort", data, axis)
    return _gathered(src, _order(_host(src), ax, bool(is_ascend)), ax)


def topk(
    data: NDArray,
    axis: Any = -1,
    k: int = 1,
    ret_typ: str = "indices",
    is_ascend: bool = False,
    dtype: Any = "float32",
    out: Any = None,
    **kwargs: Any,
) -> Any:
    """mxnet's ``topk``: the ``k`` largest (``is_ascend``: smallest) elements along ``axis`` (the
    flattened array for None; ``k <= 0``: all of them). ``ret_typ`` picks the result:
    ``"indices"`` (as ``dtype``, float32 by default), ``"value"`` (recorded: the gradient goes
    back to the picked positions), ``"both"`` (``[value, indices]``) or ``"mask"`` (1 at the
    picked positions, 0 elsewhere, in the data's dtype). ``k`` beyond the axis length raises
    ``MXNetError``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[1, 5, 3]])
        >>> mx.nd.topk(x, k=2).asnumpy(), mx.nd.topk(x, k=2, ret_typ="value").asnumpy()
        (array([[1., 2.]], dtype=float32), array([[5., 3.]], dtype=float32))
    """
    _nd("topk", "data", data)
    _no_out("topk", out)
    if ret_typ not in ("indices", "value", "both", "mask"):
        raise MXNetError(
            f"mx.nd.topk: Invalid Input: '{ret_typ}', valid values are: "
            "{'both', 'indices', 'mask', 'value'}"
        )
    src, ax = _sort_axis("topk", data, axis)
    n = src.shape[ax]
    kk = int(k)
    if kk > n:
        raise MXNetError(f"mx.nd.topk: k must be smaller than {n}, get k = {kk}")
    if kk <= 0:
        kk = n
    order = _order(_host(src), ax, bool(is_ascend))
    idx = np.take(order, np.arange(kk), axis=ax)
    if ret_typ == "mask":
        m = np.zeros(src.shape, dtype=data._arr.dtype)
        np.put_along_axis(m, idx, 1, axis=ax)
        return _from_host(m.reshape(data.shape), data)
    ind = _from_host(idx.astype(np.dtype(dtype)), data)
    if ret_typ == "indices":
        return ind
    val = _gathered(src, idx, ax)
    return val if ret_typ == "value" else [val, ind]


# -- selection and indexing ------------------------------------------------------------------------


def one_hot(
    indices: NDArray,
    depth: int,
    on_value: float = 1.0,
    off_value: float = 0.0,
    dtype: Any = "float32",
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``one_hot``: an array of shape ``indices.shape + (depth,)`` holding ``on_value``
    at each index (truncated to an integer) and ``off_value`` elsewhere (an index outside
    ``[0, depth)`` gives a row of ``off_value``), as ``dtype``. Not differentiable.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.one_hot(mx.nd.array([1, 0, 3]), 3).asnumpy()
        array([[0., 1., 0.],
               [1., 0., 0.],
               [0., 0., 0.]], dtype=float32)
    """
    _nd("one_hot", "indices", indices)
    _no_out("one_hot", out)
    d = int(depth)
    if d < 0:
        raise MXNetError(f"mx.nd.one_hot: depth={d} must be non-negative")
    with np.errstate(invalid="ignore"):
        idx = np.trunc(_host(indices).astype(np.float64))
    hit = idx[..., None] == np.arange(d)
    res = np.where(hit, on_value, off_value).astype(np.dtype(dtype))
    return _from_host(res, indices)


def take(
    a: NDArray,
    indices: NDArray,
    axis: int = 0,
    mode: str = "clip",
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``take``: the slices of ``a`` along ``axis`` at ``indices`` (truncated to
    integers), shape ``a.shape[:axis] + indices.shape + a.shape[axis + 1:]``; out-of-range
    indices are clipped (``mode="clip"``) or wrapped (``"wrap"``). Recorded for ``a`` (the
    gradient is summed at repeated indices); ``indices`` get none.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.take(mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([1, 5])).asnumpy()
        array([[3., 4.],
               [3., 4.]], dtype=float32)
    """
    _nd("take", "a", a)
    _nd("take", "indices", indices)
    _no_out("take", out)
    if mode not in ("clip", "wrap", "raise"):
        raise MXNetError(
            f"mx.nd.take: Invalid Input: '{mode}', valid values are: {{'clip', 'raise', 'wrap'}}"
        )
    if mode == "raise":
        raise NotImplementedError(f"mx.nd.take: mode='raise' is not supported ({_DOCS})")
    ax = _axis("take", axis, a.ndim)
    n = a.shape[ax]
    idx = np.trunc(_host(indices).astype(np.float64)).astype(np.int64)
    idx = np.clip(idx, 0, n - 1) if mode == "clip" else np.mod(idx, n)
    key = (builtins.slice(None),) * ax + (idx,)
    if a._arr.dtype.kind in "iub":
        return _from_host(_host(a)[key], a)
    return _run([a], lambda x: _call("get_item", x, key=key))


def _norm_slice(
    fn: str, begin: Any, end: Any, step: Any, shape: tuple[int, ...]
) -> tuple[builtins.slice, ...]:
    """Python slices of mxnet's ``begin``/``end``/``step`` (None entries: the default bound);
    an end beyond a dimension is clipped, as Python's and mxnet 1.9.1's slicing; a begin before
    ``-dimension`` raises ``MXNetError`` (mxnet fails to construct the result)."""
    b = tuple(begin) if begin is not None else ()
    e = tuple(end) if end is not None else ()
    st = tuple(step) if step is not None else ()
    if len(b) != len(e) or (st and len(st) != len(b)):
        raise MXNetError(f"mx.nd.{fn}: begin {b}, end {e} and step {st} must have one length")
    if len(b) > len(shape):
        raise MXNetError(
            f"mx.nd.{fn}: {len(b)} begin/end entries for an array of {len(shape)} dimensions"
        )
    key = []
    for i in range(len(b)):
        s = 1 if not st or st[i] is None else int(st[i])
        if s == 0:
            raise MXNetError(f"mx.nd.{fn}: slice step cannot be 0")
        bi = None if b[i] is None else int(b[i])
        if bi is not None and bi < -shape[i]:
            raise MXNetError(
                f"mx.nd.{fn}: begin[{i}]={bi} is out of range for dimension[{i}]={shape[i]}"
            )
        ei = None if e[i] is None else int(e[i])
        key.append(builtins.slice(bi, ei, s))
    return tuple(key)


def _sliced(fn: str, data: NDArray, key: tuple[builtins.slice, ...]) -> NDArray:
    if data._arr.dtype.kind in "iub":
        return _from_host(np.array(_host(data)[key]), data)
    return _run([data], lambda x: _call("get_item", x, key=key))


def slice(
    data: NDArray,
    begin: Any,
    end: Any,
    step: Any = (),
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``slice`` (``crop``): ``data[begin[0]:end[0]:step[0], ...]`` over the first
    ``len(begin)`` axes (None entries: the default bound; negative values count from the end;
    bounds beyond a dimension are clipped and may give an empty array, as mxnet). Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
        >>> mx.nd.slice(x, begin=(0, 1), end=(2, 3)).asnumpy()
        array([[2., 3.],
               [5., 6.]], dtype=float32)
    """
    _nd("slice", "data", data)
    _no_out("slice", out)
    return _sliced("slice", data, _norm_slice("slice", begin, end, step, data.shape))


def slice_axis(
    data: NDArray, axis: int, begin: int, end: int | None, out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``slice_axis``: ``data[..., begin:end, ...]`` along ``axis`` (``end`` None: the
    end; negative values count from the end). Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.slice_axis(mx.nd.zeros((2, 5)), axis=1, begin=1, end=-1).shape
        (2, 3)
    """
    _nd("slice_axis", "data", data)
    _no_out("slice_axis", out)
    ax = _axis("slice_axis", axis, data.ndim)
    n = data.shape[ax]
    b = int(begin)
    e = n if end is None else int(end)
    b2 = b + n if b < 0 else b
    e2 = e + n if e < 0 else e
    if not (0 <= b2 < n or (b2 == 0 and n == 0)) or not 0 <= e2 <= n or e2 <= b2:
        raise MXNetError(
            f"mx.nd.slice_axis: Invalid begin, end, get begin={b}, end={end} for axis {ax} of "
            f"length {n}"
        )
    key = (builtins.slice(None),) * ax + (builtins.slice(b2, e2),)
    return _sliced("slice_axis", data, key)


def slice_like(
    data: NDArray, shape_like: NDArray, axes: Any = (), out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``slice_like``: the first elements of ``data`` along ``axes`` (every axis of
    ``shape_like`` for ``()``), as many as ``shape_like`` has there. Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.slice_like(mx.nd.zeros((3, 4)), mx.nd.zeros((2, 2)), axes=(1,)).shape
        (3, 2)
    """
    _nd("slice_like", "data", data)
    _nd("slice_like", "shape_like", shape_like)
    _no_out("slice_like", out)
    if not axes:
        if shape_like.ndim != data.ndim:
            raise MXNetError(
                "mx.nd.slice_like: data and shape_like must have one number of axes when axes "
                f"is empty ({data.ndim} vs. {shape_like.ndim})"
            )
        axs = list(range(data.ndim))
    else:
        axs = [_axis("slice_like", a, data.ndim) for a in axes]
    key = [builtins.slice(None)] * data.ndim
    for a in axs:
        if a >= shape_like.ndim or shape_like.shape[a] > data.shape[a]:
            raise MXNetError(
                f"mx.nd.slice_like: shape_like {list(shape_like.shape)} does not fit data "
                f"{list(data.shape)} along axis {a}"
            )
        key[a] = builtins.slice(0, shape_like.shape[a])
    return _sliced("slice_like", data, tuple(key))


# -- products --------------------------------------------------------------------------------------


def batch_dot(
    lhs: NDArray,
    rhs: NDArray,
    transpose_a: bool = False,
    transpose_b: bool = False,
    forward_stype: Any = None,
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``batch_dot``: the matrix products of the last two axes, batched over the leading
    ones (which must agree), each operand transposed first by ``transpose_a``/``transpose_b``.
    Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.batch_dot(mx.nd.ones((2, 3, 4)), mx.nd.ones((2, 4, 5))).shape
        (2, 3, 5)
    """
    _nd("batch_dot", "lhs", lhs)
    _nd("batch_dot", "rhs", rhs)
    _no_out("batch_dot", out)
    if forward_stype not in (None, "default"):
        raise NotImplementedError(f"mx.nd.batch_dot: forward_stype is not supported ({_DOCS})")
    return _matmul("batch_dot", lhs, rhs, bool(transpose_a), bool(transpose_b), 1.0)


def _matmul(fn: str, a: NDArray, b: NDArray, ta: bool, tb: bool, alpha: float) -> NDArray:
    _same_dtype(fn, [a, b])
    if (a.ndim < 3 and fn == "batch_dot") or a.ndim != b.ndim or a.ndim < 2:
        raise MXNetError(
            f"mx.nd.{fn}: the operands must have one number of axes (3 or more for batch_dot, 2 "
            f"or more for linalg_gemm2), got {list(a.shape)} and {list(b.shape)}"
        )
    k = a.shape[-2] if ta else a.shape[-1]
    k2 = b.shape[-1] if tb else b.shape[-2]
    if a.shape[:-2] != b.shape[:-2] or k != k2:
        raise MXNetError(
            f"mx.nd.{fn}: shapes {list(a.shape)} and {list(b.shape)} do not match "
            f"(transpose_a={ta}, transpose_b={tb})"
        )
    if a._arr.dtype.kind in "iub":
        x, y = _host(a), _host(b)
        x = np.swapaxes(x, -1, -2) if ta else x
        y = np.swapaxes(y, -1, -2) if tb else y
        return _from_host((np.matmul(x, y) * alpha).astype(a._arr.dtype), a)

    def f(x: NativeVariable, y: NativeVariable) -> NativeVariable:
        r = _call("batch_matmul", x, y, transpose_a=ta, transpose_b=tb)
        return r if alpha == 1.0 else _call("mul_scalar", r, val=float(alpha))

    return _run([a, b], f)


def linalg_gemm2(
    A: NDArray,
    B: NDArray,
    transpose_a: bool = False,
    transpose_b: bool = False,
    alpha: float = 1.0,
    axis: int = -2,
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``linalg_gemm2`` (``linalg.gemm2``): ``alpha * op(A) op(B)`` over the last two
    axes (batched over the leading ones), ``op`` transposing when asked; float dtypes only.
    ``axis`` other than -2 raises NotImplementedError.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.linalg_gemm2(mx.nd.ones((2, 3)), mx.nd.ones((3, 4)), alpha=2.0).asnumpy()[0]
        array([6., 6., 6., 6.], dtype=float32)
    """
    _nd("linalg_gemm2", "A", A)
    _nd("linalg_gemm2", "B", B)
    _no_out("linalg_gemm2", out)
    if int(axis) != -2:
        raise NotImplementedError(f"mx.nd.linalg_gemm2: axis={axis} is not supported ({_DOCS})")
    if A._arr.dtype.kind != "f":
        raise MXNetError(
            f"mx.nd.linalg_gemm2: This operation only supports floating point types, not "
            f"{A._arr.dtype.name}"
        )
    return _matmul("linalg_gemm2", A, B, bool(transpose_a), bool(transpose_b), float(alpha))


def add_n(*args: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``add_n`` (``ElementWiseSum``): the sum of arrays of one shape and dtype.
    Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.add_n(mx.nd.ones((2,)), mx.nd.ones((2,)), mx.nd.ones((2,))).asnumpy()
        array([3., 3.], dtype=float32)
    """
    _no_out("add_n", out)
    arrays = _same_shape_arrays("add_n", "args", args)
    if arrays[0]._arr.dtype.kind in "iub":
        total = _host(arrays[0]).copy()
        with np.errstate(over="ignore"):
            for a in arrays[1:]:
                total = (total + _host(a)).astype(total.dtype)
        return _from_host(total, arrays[0])

    def f(*xs: NativeVariable) -> NativeVariable:
        r = xs[0]
        for x in xs[1:]:
            r = r + x
        return r if len(xs) > 1 else _call("reshape", r, shape=r.shape)

    return _run(arrays, f)


ElementWiseSum = add_n


# -- elementwise math ------------------------------------------------------------------------------


def _zero_grad(value: Callable[[np.ndarray], np.ndarray]) -> Callable[..., NativeVariable]:
    """A function of gradient 0 (mxnet's ``floor``, ``sign``...): ``value(x)`` recorded as
    ``where(False, x, value)``, which passes 0 to ``x``."""

    def f(x: NativeVariable) -> NativeVariable:
        v = value(np.asarray(x.device.to_numpy(x._data))).astype(x.dtype)
        return _call("where", _leaf(np.zeros(x.shape, bool), x), x, _leaf(v, x))

    return f


def _u(
    fn: str,
    native: Callable[[NativeVariable], NativeVariable],
    np_fn: Callable[[np.ndarray], np.ndarray],
    formula: str,
    int_ok: bool = True,
    int_exact: bool = False,
    example: float = 0.5,
) -> Callable[..., NDArray]:
    def function(data: NDArray, out: Any = None, name: Any = None, **kwargs: Any) -> NDArray:
        _nd(fn, "data", data)
        dt = data._arr.dtype
        if dt.kind in "iub":
            if not int_ok:
                raise MXNetError(
                    f"mx.nd.{fn}: This operation only support floating point types, not {dt.name}"
                )
            v = _host(data)
            with np.errstate(all="ignore"):
                if int_exact:
                    r = np.asarray(np_fn(v)).astype(dt)
                else:
                    r = _float_to_int(np_fn(v.astype(np.float64)), dt)
            return write_out(fn, _from_host(r, data), out)
        return write_out(fn, _run([data], native), out)

    function.__name__ = function.__qualname__ = fn
    function.__doc__ = (
        f"mxnet's ``{fn}``: ``{formula}`` elementwise, recorded by ``mx.autograd``. Integer "
        "arrays keep their dtype (computed in double precision and truncated back, as mxnet); "
        "``out=`` receives the result.\n\n"
        "Example::\n\n    >>> import gradhub_compat.mxnet as mx\n"
        f"    >>> mx.nd.{fn}(mx.nd.array([{example}])).shape\n    (1,)\n"
    )
    return function


def _c(name: str, **attrs: Any) -> Callable[[NativeVariable], NativeVariable]:
    return lambda x: _call(name, x, **attrs)


def _round_half_away(v: np.ndarray) -> np.ndarray:
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _cbrt(x: NativeVariable) -> NativeVariable:
    return _call("sign", x, alpha=0.0) * _call("pow_scalar", _call("abs", x), val=1.0 / 3.0)


negative = _u("negative", _c("neg"), np.negative, "-x", int_exact=True)
reciprocal = _u("reciprocal", _c("r_div_scalar", val=1.0), lambda v: 1.0 / v, "1 / x")
rsqrt = _u(
    "rsqrt",
    lambda x: _call("r_div_scalar", _call("sqrt", x), val=1.0),
    lambda v: 1.0 / np.sqrt(v),
    "1 / sqrt(x)",
)
cbrt = _u("cbrt", _cbrt, np.cbrt, "x^(1/3) (negative for negative x)")
rcbrt = _u(
    "rcbrt",
    lambda x: _call("r_div_scalar", _cbrt(x), val=1.0),
    lambda v: 1.0 / np.cbrt(v),
    "1 / x^(1/3)",
)
log1p = _u("log1p", _c("log1p"), np.log1p, "ln(1 + x)")
expm1 = _u("expm1", _c("expm1"), np.expm1, "e^x - 1")
log2 = _u(
    "log2",
    lambda x: _call("mul_scalar", _call("log", x), val=1.0 / math.log(2.0)),
    np.log2,
    "log2(x)",
)
log10 = _u(
    "log10",
    lambda x: _call("mul_scalar", _call("log", x), val=1.0 / math.log(10.0)),
    np.log10,
    "log10(x)",
)


# mxnet's factors, computed in float32 (``PI / 180``, ``180 / PI`` with a float32 ``PI``)
_TO_RAD = float(np.float32(math.pi) / np.float32(180.0))
_TO_DEG = float(np.float32(180.0) / np.float32(math.pi))


def _radians(x: NativeVariable) -> NativeVariable:
    r = _call("mul_scalar", x, val=_TO_RAD)
    if r.creator is not None:  # mxnet's _backward_radians has a zero gradient (second order)
        _ag.MX_OPS[r.creator] = "radians"
    return r


radians = _u(
    "radians", _radians, lambda v: v * _TO_RAD, "x * (pi / 180) (a float32 factor)", example=90.0
)
degrees = _u(
    "degrees",
    _c("mul_scalar", val=_TO_DEG),
    lambda v: v * _TO_DEG,
    "x * (180 / pi) (a float32 factor)",
    example=1.0,
)


floor = _u("floor", _zero_grad(np.floor), np.floor, "floor(x) (gradient 0)", int_exact=True)
ceil = _u("ceil", _zero_grad(np.ceil), np.ceil, "ceil(x) (gradient 0)", int_exact=True)
round = _u(
    "round",
    _zero_grad(_round_half_away),
    _round_half_away,
    "x rounded to the nearest integer, halves away from 0 (gradient 0)",
    int_exact=True,
)


def _rint(v: np.ndarray) -> np.ndarray:
    f = np.floor(v)
    return np.where(v - f <= 0.5, f, f + 1)


rint = _u(
    "rint",
    _zero_grad(_rint),
    _rint,
    "x rounded to the nearest integer, halves down (mxnet's kernel: ``floor(x)`` where "
    "``x - floor(x) <= 0.5``, else ``ceil(x)``; gradient 0)",
    int_exact=True,
)
fix = _u("fix", _zero_grad(np.trunc), np.trunc, "x rounded toward 0 (gradient 0)", int_exact=True)
trunc = _u(
    "trunc", _zero_grad(np.trunc), np.trunc, "x rounded toward 0 (gradient 0)", int_exact=True
)
sign = _u("sign", _zero_grad(np.sign), np.sign, "-1, 0 or 1 (gradient 0)", int_exact=True)
tan = _u("tan", _c("tan"), np.tan, "tan(x)")
arcsin = _u("arcsin", _c("asin"), np.arcsin, "arcsin(x)")
arccos = _u("arccos", _c("acos"), np.arccos, "arccos(x)")
arctan = _u("arctan", _c("atan"), np.arctan, "arctan(x)")
sinh = _u("sinh", _c("sinh"), np.sinh, "sinh(x)")
cosh = _u("cosh", _c("cosh"), np.cosh, "cosh(x)")
arcsinh = _u("arcsinh", _c("asinh"), np.arcsinh, "arcsinh(x)")
arccosh = _u("arccosh", _c("acosh"), np.arccosh, "arccosh(x)", example=1.5)
arctanh = _u("arctanh", _c("atanh"), np.arctanh, "arctanh(x)")
erf = _u("erf", _c("erf"), np.vectorize(math.erf, otypes=[np.float64]), "erf(x)")


def _on_host(name: str) -> Callable[[np.ndarray], np.ndarray]:
    """The registered function ``name`` on float64 host data (for the integer dtypes)."""

    def run(v: np.ndarray) -> np.ndarray:
        leaf = NativeVariable.leaf(np.asarray(v, dtype=np.float64), False)
        return np.asarray(_call(name, leaf)._data)

    return run


def _gamma_native(x: NativeVariable) -> NativeVariable:
    """Gamma(x) = sign * exp(lgamma(x)): the sign (a constant) is -1 where ``x < 0`` and
    ``ceil(-x)`` is odd, NaN at the negative integers (mxnet's ``tgamma``); the gradient is
    ``Gamma(x) digamma(x)``."""
    v = np.asarray(x.device.to_numpy(x._data))
    dt = v.dtype
    with np.errstate(invalid="ignore", over="ignore"):
        odd = (v < 0) & (np.mod(np.ceil(-v), 2) == 1)
        sign = np.where((v < 0) & (v == np.floor(v)), np.nan, np.where(odd, -1.0, 1.0))
        # in float64, so that exp does not magnify the rounding of a float32 lgamma
        x64 = x if dt == np.float64 else _call("Cast", x, dtype="float64")
        y = _call("Mul2", _call("exp", _call("lgamma", x64)), _leaf(sign, x))
        return y if dt == np.float64 else _call("Cast", y, dtype=dt.name)


def _gamma_host(v: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        odd = (v < 0) & (np.mod(np.ceil(-v), 2) == 1)
        sign = np.where((v < 0) & (v == np.floor(v)), np.nan, np.where(odd, -1.0, 1.0))
        return sign * np.exp(_on_host("lgamma")(v))


def _erfinv_host(v: np.ndarray) -> np.ndarray:
    # mxnet's integer erfinv: +-inf at +-1 (the dtype's minimum), 0 outside [-1, 1]
    return np.where(np.abs(v) > 1, 0.0, _on_host("erfinv")(v))


gamma = _u(
    "gamma",
    _gamma_native,
    _gamma_host,
    "Gamma(x) (sign * exp(lgamma(x)); gradient Gamma(x) digamma(x), differentiable again)",
)
gammaln = _u(
    "gammaln",
    _c("lgamma"),
    _on_host("lgamma"),
    "log|Gamma(x)| (gradhub's ``lgamma``; gradient digamma(x), differentiable again)",
)
erfinv = _u(
    "erfinv",
    _c("erfinv"),
    _erfinv_host,
    "the inverse of erf (gradhub's ``erfinv``; gradient sqrt(pi)/2 exp(y^2))",
)
softsign = _u("softsign", _c("softsign"), lambda v: v / (1.0 + np.abs(v)), "x / (1 + |x|)")


def hard_sigmoid(
    data: NDArray, alpha: float = 0.2, beta: float = 0.5, out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``hard_sigmoid``: ``clip(alpha * x + beta, 0, 1)``; float dtypes only (others
    raise ``MXNetError``, as mxnet). Recorded: the gradient is ``alpha`` where ``0 < alpha * x +
    beta < 1``, else 0.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.hard_sigmoid(mx.nd.array([-5.0, 0.0, 5.0])).asnumpy()
        array([0. , 0.5, 1. ], dtype=float32)
    """
    _nd("hard_sigmoid", "data", data)
    _no_out("hard_sigmoid", out)
    dt = data._arr.dtype
    if dt.kind != "f":
        raise MXNetError(
            f"mx.nd.hard_sigmoid: This operation only support floating point types, not {dt.name}"
        )
    a, b = dt.type(alpha), dt.type(beta)

    def f(x: NativeVariable) -> NativeVariable:
        lin = _call("add_scalar", _call("mul_scalar", x, val=float(a)), val=float(b))
        v = np.asarray(x.device.to_numpy(lin._data))
        inside = (v > 0) & (v < 1)
        value = np.clip(v, 0, 1).astype(dt)
        return _call("where", _leaf(inside, x), lin, _leaf(value, x))

    return _run([data], f)


def smooth_l1(data: NDArray, scalar: float = 1.0, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``smooth_l1``: ``0.5 (s x)^2`` where ``|x| < 1 / s^2``, else ``|x| - 0.5 / s^2``
    (``s``: ``scalar``). Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.smooth_l1(mx.nd.array([0.5, -2.0])).asnumpy()
        array([0.125, 1.5  ], dtype=float32)
    """
    _nd("smooth_l1", "data", data)
    _no_out("smooth_l1", out)
    s2 = float(scalar) ** 2
    dt = data._arr.dtype
    if dt.kind in "iub":
        v = _host(data).astype(np.float64)
        r = np.where(np.abs(v) < 1.0 / s2, 0.5 * s2 * v * v, np.abs(v) - 0.5 / s2)
        return _from_host(_float_to_int(r, dt), data)

    def f(x: NativeVariable) -> NativeVariable:
        small = np.abs(np.asarray(x.device.to_numpy(x._data))) < 1.0 / s2
        quad = _call("mul_scalar", x * x, val=0.5 * s2)
        lin = _call("add_scalar", _call("abs", x), val=-0.5 / s2)
        return _call("where", _leaf(small, x), quad, lin)

    return _run([data], f)


def cast(data: NDArray, dtype: Any, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``cast`` (``Cast``): ``data`` converted to ``dtype`` (float to integer truncates
    toward zero); a cast to a float dtype is recorded (gradient cast back).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.cast(mx.nd.array([1.7, -1.7]), dtype="int32").asnumpy()
        array([ 1, -1], dtype=int32)
    """
    _nd("cast", "data", data)
    _no_out("cast", out)
    dt = np.dtype(dtype)
    if dt.kind == "f" and data._arr.dtype.kind == "f":
        return _run([data], lambda x: _call("cast", x, dtype=dt.name))
    with np.errstate(invalid="ignore"):
        return _from_host(_host(data).astype(dt), data)


# -- normalization and masks -----------------------------------------------------------------------


def L2Normalization(
    data: NDArray, eps: float = 1e-10, mode: str = "instance", out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``L2Normalization``: ``x / sqrt(sum(x^2) + eps)``, the sum over every axis but the
    first (``mode="instance"``), over axis 1 (``"channel"``) or over the axes after the first
    two (``"spatial"``). Recorded.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.L2Normalization(mx.nd.array([[3.0, 4.0]])).asnumpy()
        array([[0.6, 0.8]], dtype=float32)
    """
    _nd("L2Normalization", "data", data)
    _no_out("L2Normalization", out)
    if mode not in ("instance", "channel", "spatial"):
        raise MXNetError(
            f"mx.nd.L2Normalization: Invalid Input: '{mode}', valid values are: "
            "{'channel', 'instance', 'spatial'}"
        )
    if data._arr.dtype.kind != "f":
        raise MXNetError(
            f"mx.nd.L2Normalization: only floating point types are supported, not "
            f"{data._arr.dtype.name}"
        )
    need = {"instance": 2, "channel": 2, "spatial": 3}[mode]
    if data.ndim < need:
        raise MXNetError(
            f"mx.nd.L2Normalization: mode {mode!r} needs data of {need} or more axes, got shape "
            f"{list(data.shape)}"
        )
    axes = {
        "instance": tuple(range(1, data.ndim)),
        "channel": (1,),
        "spatial": tuple(range(2, data.ndim)),
    }[mode]

    def f(x: NativeVariable) -> NativeVariable:
        s = _call("sum", x * x, axis=axes, keepdims=True)
        n = _call("sqrt", _call("add_scalar", s, val=float(eps)))
        return x / _call("broadcast_to", n, shape=tuple(x.shape))

    return _run([data], f)


def SequenceMask(
    data: NDArray,
    sequence_length: NDArray | None = None,
    use_sequence_length: bool = False,
    value: float = 0.0,
    axis: int = 0,
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``SequenceMask``: with ``use_sequence_length``, the steps at or beyond
    ``sequence_length[b]`` along ``axis`` (0 or 1; the batch is the other of the first two axes)
    set to ``value``; otherwise the data unchanged. Recorded for ``data`` (masked steps get
    gradient 0).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.ones((3, 2))
        >>> mx.nd.SequenceMask(x, mx.nd.array([1, 3]), use_sequence_length=True).asnumpy()
        array([[1., 1.],
               [0., 1.],
               [0., 1.]], dtype=float32)
    """
    _nd("SequenceMask", "data", data)
    _no_out("SequenceMask", out)
    if int(axis) not in (0, 1):
        raise MXNetError(f"mx.nd.SequenceMask: axis={axis} must be 0 or 1")
    if data.ndim < 2:
        raise MXNetError(
            f"mx.nd.SequenceMask: data must have 2 or more axes, got shape {list(data.shape)}"
        )
    if not use_sequence_length:
        return _reshaped(data, data.shape)
    if sequence_length is None:
        raise MXNetError("mx.nd.SequenceMask: use_sequence_length needs sequence_length")
    _nd("SequenceMask", "sequence_length", sequence_length)
    ax = int(axis)
    batch = data.shape[1 - ax]
    if sequence_length.shape != (batch,):
        raise MXNetError(
            f"mx.nd.SequenceMask: sequence_length must have shape ({batch},), got "
            f"{list(sequence_length.shape)}"
        )
    lengths = np.trunc(_host(sequence_length).astype(np.float64))
    steps = np.arange(data.shape[ax])
    keep2 = steps[:, None] < lengths[None, :]  # (time, batch)
    if ax == 1:
        keep2 = keep2.T
    keep = np.ascontiguousarray(
        np.broadcast_to(keep2.reshape(keep2.shape + (1,) * (data.ndim - 2)), data.shape)
    )
    dt = data._arr.dtype
    fill = np.full(data.shape, value).astype(dt)
    if dt.kind in "iub":
        return _from_host(np.where(keep, _host(data), fill), data)
    return _run([data], lambda x: _call("where", _leaf(keep, x), x, _leaf(fill, x)))


# -- array makers ----------------------------------------------------------------------------------


def arange(
    start: float,
    stop: float | None = None,
    step: float = 1.0,
    repeat: int = 1,
    infer_range: bool = False,
    ctx: Context | None = None,
    dtype: Any = "float32",
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``arange``: ``start, start + step, ...`` below ``stop`` (from 0 to ``start`` when
    ``stop`` is None), each value ``repeat`` times, as ``dtype`` (float32 by default).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.arange(3, repeat=2).asnumpy()
        array([0., 0., 1., 1., 2., 2.], dtype=float32)
    """
    if infer_range:
        raise NotImplementedError(f"mx.nd.arange: infer_range=True is not supported ({_DOCS})")
    if float(step) == 0:
        raise MXNetError("mx.nd.arange: step cannot be 0")
    if int(repeat) < 1:
        raise MXNetError(f"mx.nd.arange: repeat={repeat} must be positive")
    lo, hi = (0.0, float(start)) if stop is None else (float(start), float(stop))
    n = builtins.max(math.ceil((hi - lo) / float(step)), 0)
    dt = np.dtype(dtype)
    if dt.kind in "iu":  # mxnet computes start + i * step in the dtype (2.5 -> 2)
        v = _int_scalar(lo, dt) + np.arange(n) * _int_scalar(step, dt)
    else:
        v = lo + np.arange(n, dtype=np.float64) * float(step)
    v = np.repeat(v, int(repeat))
    c = _ctx(ctx)
    return _from_host(v.astype(dt), c)


def linspace(
    start: float,
    stop: float,
    num: int,
    endpoint: bool = True,
    ctx: Context | None = None,
    dtype: Any = "float32",
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``linspace``: ``num`` evenly spaced values from ``start`` to ``stop`` (included
    with ``endpoint``), as ``dtype``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.linspace(0, 1, 5).asnumpy()
        array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    if int(num) < 0:
        raise MXNetError(f"mx.nd.linspace: num={num} must be non-negative")
    v = np.linspace(float(start), float(stop), int(num), endpoint=bool(endpoint))
    return _from_host(v.astype(np.dtype(dtype)), _ctx(ctx))


def shape_array(data: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``shape_array``: the shape of ``data`` as an int64 array.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.shape_array(mx.nd.zeros((2, 3))).asnumpy()
        array([2, 3])
    """
    _nd("shape_array", "data", data)
    return _from_host(np.asarray(data.shape, dtype=np.int64), data)


def size_array(data: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``size_array``: the element count of ``data`` as an int64 array of shape (1,).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.size_array(mx.nd.zeros((2, 3))).asnumpy()
        array([6])
    """
    _nd("size_array", "data", data)
    return _from_host(np.asarray([data.size], dtype=np.int64), data)
