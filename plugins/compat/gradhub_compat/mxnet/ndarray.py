"""mxnet's NDArray: ``mx.nd.array``, ``mx.nd.ones``, ``mx.nd.zeros``, ``mx.nd.full``.

An NDArray holds an array of a gradhub device (numpy on the CPU). As in mxnet, ``mx.nd.array``
makes float32 arrays unless the source is an NDArray, indexing and ``x[:] = value`` work in place,
``asnumpy()`` and ``copy()`` copy.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> a = mx.nd.array([1, 2, 3])
    >>> a[:] = 5
    >>> (a * 2).asnumpy()
    array([10., 10., 10.], dtype=float32)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from gradhub.modes import is_tracing, no_grad, set_recording
from gradhub.variable import Variable as NativeVariable
from gradhub.variable import observe_wrap

from .._common import call_native as _call
from . import _autograd_mode as _ag
from .base import MXNetError, _MXNetTypeError, _MXNetValueError
from .context import Context, current_context

_DEFAULT_DTYPE = np.float32
#: the mx.autograd switches of this thread (read on every operation)
_STATE = _ag.state


def _ctx(ctx: Any) -> Context:
    if ctx is None:
        return current_context()
    if not isinstance(ctx, Context):
        raise TypeError(f"mxnet: ctx must be a Context such as mx.cpu(), got {type(ctx).__name__}")
    return ctx


def refuse_traced(what: str, why: str) -> None:
    """Raise ``NotImplementedError`` naming ``gradhub.compile`` and the mxnet call ``what`` when
    this thread traces a step with :func:`gradhub.compile`: mxnet's imperative NDArrays are not
    traced (their writes, the gradient buffers ``backward()`` fills, the arrays ``grad()`` and
    ``nd.array()`` make hold values computed in Python at that call, which a replay would not
    compute again). ``why``: what would go wrong at later calls."""
    if is_tracing():
        raise NotImplementedError(
            f"gradhub.compile: the step calls mxnet's {what}; a compiled step replays its graph, "
            f"not its Python code, and mxnet's imperative NDArrays are not traced, so {why}. "
            "Call the step without gradhub.compile, or bind a Symbol (simple_bind, an "
            "Executor: mxnet's static graph, planned once and run again; docs/plans.md)"
        )


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _const(arr: Any, like: NativeVariable) -> NativeVariable:
    """``arr`` as a leaf needing no gradient on ``like``'s device."""
    return NativeVariable.leaf(like.device.asarray(arr), False)


def _divide(a: Any, b: Any) -> Any:
    """``a / b`` as mxnet divides: a Variable divided by a number is divided by the number (a
    0-d constant of its dtype, ``Div2``; the gradient ``gy / b`` too), as mxnet's
    ``_div_scalar`` does, where gradhub's ``/`` multiplies by the reciprocal (chainer's and
    nnabla's form, which differs in the last bit of some elements; see docs/numerics.md)."""
    if isinstance(a, NativeVariable) and not isinstance(b, NativeVariable) and np.ndim(b) == 0:
        with a.device.activate():  # (CuPy allocates on the current device)
            c = _const(np.asarray(b, dtype=a.dtype), a)
        return a / c
    return a / b


#: mxnet's functions that compute an integer array in double precision and convert the result
#: back (``exp`` of int32 is int32): their numpy forms
_INT_VIA_FLOAT: dict[str, Callable[[Any], Any]] = {
    "exp": np.exp,
    "log": np.log,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "sigmoid": lambda a: 1.0 / (1.0 + np.exp(-a)),
    "sqrt": np.sqrt,
}
#: the native functions of the NDArray layer and the integer kernels computing them
_NATIVE_INT = {
    "Exp": "exp",
    "Log": "log",
    "Sin": "sin",
    "Cos": "cos",
    "Tanh": "tanh",
    "Sigmoid": "sigmoid",
    "Sqrt": "sqrt",
    "ReLU": "relu",
    "Abs": "abs",
    "Sum": "sum",
    "Mean": "mean",
}


def _float_to_int(r: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Double-precision values converted to the integer dtype ``dt`` as mxnet's kernels (C++
    casts on x86): truncated toward zero into int32 (int64 for 64-bit dtypes), NaN and
    values out of that range giving its minimum, then wrapped into ``dt``."""
    wide = np.dtype(np.int64 if dt.itemsize == 8 else np.int32)
    info = np.iinfo(wide)  # type: ignore[type-var]
    with np.errstate(invalid="ignore"):
        t = np.trunc(np.asarray(r, dtype=np.float64))
        bad = ~np.isfinite(t) | (t < float(info.min)) | (t >= -float(info.min))
        out = np.where(bad, 0.0, t).astype(wide)
    out[bad] = info.min
    return out.astype(dt)


def _trunc_div(a: np.ndarray, b: Any) -> np.ndarray:
    """Integer division truncated toward zero (C++'s ``/``), in ``a``'s dtype."""
    b = np.asarray(b, dtype=a.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.floor_divide(a, b)
        fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return (q + fix.astype(a.dtype)).astype(a.dtype)


def _int_scalar(value: Any, dt: np.dtype) -> Any:
    """A number converted to the integer dtype ``dt`` as mxnet converts an operator's scalar
    (``int32 * 1.5`` multiplies by 1, ``uint8 / -2`` divides by 254)."""
    return np.asarray(int(value)).astype(dt)[()]


def int_kernel(op: str, arrays: list[np.ndarray], **attrs: Any) -> np.ndarray:
    """mxnet's integer kernel of ``op`` on the numpy integer ``arrays``, in their dtype (mxnet
    keeps an integer dtype through every operator): sums wrap around in the dtype, ``mean``
    divides the wrapped sum by the element count converted to the dtype (truncated), ``/``
    truncates toward zero, powers and the other functions are computed in double precision and
    converted back (:func:`_float_to_int`). ``op`` is one of the names below; ``scalar`` (an
    operator's number) is converted to the dtype first."""
    a = arrays[0]
    dt = a.dtype
    b: Any = arrays[1] if len(arrays) > 1 else None
    if "scalar" in attrs:
        b = _int_scalar(attrs["scalar"], dt)
    if op in _INT_VIA_FLOAT:
        with np.errstate(all="ignore"):
            return _float_to_int(_INT_VIA_FLOAT[op](a.astype(np.float64)), dt)
    if op in ("sum", "mean"):
        axis = attrs.get("axis")
        keep = bool(attrs.get("keepdims", False))
        total = np.sum(a, axis=axis, dtype=dt, keepdims=keep)
        if op == "sum":
            return np.asarray(total, dtype=dt)
        count = a.size // (np.asarray(total).size or 1)  # (mx.nd.max shadows max here)
        return _trunc_div(np.asarray(total, dtype=dt), _int_scalar(count, dt))
    if op in ("pow", "rpow"):
        base, exp_ = (a, b) if op == "pow" else (b, a)
        with np.errstate(all="ignore"):
            r = np.power(np.asarray(base, np.float64), np.asarray(exp_, np.float64))
        return _float_to_int(r, dt)
    with np.errstate(over="ignore"):
        if op == "relu":
            return np.maximum(a, 0).astype(dt)
        if op == "abs":
            return np.abs(a).astype(dt)
        if op == "square":
            return (a * a).astype(dt)
        if op == "div":
            return _trunc_div(a, b)
        if op == "rdiv":
            return _trunc_div(np.asarray(b, dtype=dt) + np.zeros_like(a), a)
        binary = {
            "add": np.add,
            "sub": np.subtract,
            "rsub": lambda x, y: np.subtract(y, x),
            "mul": np.multiply,
            "maximum": np.maximum,
            "minimum": np.minimum,
        }
        return np.asarray(binary[op](a, b)).astype(dt)  # type: ignore[operator]


class NDArray:
    """An n-dimensional array on a context (``.context``), mxnet style."""

    __slots__ = ("_arr", "_ctx", "_var")

    def __init__(self, arr: Any, ctx: Context | None = None, var: Any = None) -> None:
        self._arr = arr
        self._ctx = ctx or Context("cpu", 0)
        # the native Variable of this array in a recorded graph (mx.autograd), or None
        self._var: NativeVariable | None = var

    # -- autograd (see gradhub_compat.mxnet.autograd) ---------------------------------------------
    def _in_graph(self) -> bool:
        return self._var is not None

    def _as_var(self) -> NativeVariable:
        """The Variable of this array in the graph, or a constant leaf holding its data."""
        if self._var is not None:
            return self._var
        return NativeVariable.leaf(self._arr, False)

    def _check_assign(self, what: str) -> None:
        """mxnet refuses to write into an array of a graph while recording; inside a step that
        :func:`gradhub.compile` traces, every write is refused (see :func:`refuse_traced`)."""
        refuse_traced(f"NDArray {what}", "later calls would not make this write into the NDArray")
        if _STATE.recording and self._var is not None:
            raise MXNetError(
                f"NDArray {what}: Assigning to NDArrays that are already in a computational graph "
                "will cause undefined behavior when evaluating gradients. Please call backward "
                "first to clear the graph or do this out side of a record section. Also note that "
                "you cannot use inplace operations like +=, *=, relu(x, out=x), y[idx]=x, etc "
                "inside a record section."
            )

    def attach_grad(self, grad_req: str = "write", stype: Any = None) -> None:
        """Make this array a variable of ``mx.autograd``: allocate ``.grad`` (zeros) and let
        :meth:`backward` write (``"write"``), add (``"add"``) or not store (``"null"``) the
        gradient into it.

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> x = mx.nd.array([1.0, 2.0])
            >>> x.attach_grad()
            >>> with mx.autograd.record():
            ...     y = x * x
            >>> y.backward()
            >>> x.grad.asnumpy()
            array([2., 4.], dtype=float32)
        """
        if stype not in (None, "default"):
            raise NotImplementedError(
                f"NDArray.attach_grad: stype={stype!r} (sparse gradients) is not supported "
                "(docs/migration-mxnet.md)"
            )
        req = _ag.check_grad_req(grad_req, "NDArray.attach_grad")
        grad = NDArray(self._ctx.device().xp.zeros_like(self._arr), self._ctx)
        _mark(self, grad, req)

    @property
    def grad(self) -> NDArray | None:
        """The gradient buffer of a marked array (:meth:`attach_grad`), else None."""
        if self._var is None:
            return None
        entry = _ag.MARKED.get(self._var)
        return None if entry is None else entry[0]  # type: ignore[no-any-return]

    @property
    def stype(self) -> str:
        """The storage type: always ``"default"`` (dense; sparse storage is not supported)."""
        return "default"

    def tostype(self, stype: str) -> NDArray:
        """This array for ``stype="default"``; sparse storage types raise NotImplementedError."""
        if stype != "default":
            raise NotImplementedError(
                f"NDArray.tostype: stype={stype!r} (sparse storage) is not supported by "
                "gradhub_compat.mxnet (docs/migration-mxnet.md)"
            )
        return self

    def detach(self) -> NDArray:
        """The same data, outside any recorded graph."""
        return NDArray(self._arr, self._ctx)

    def backward(
        self, out_grad: NDArray | None = None, retain_graph: bool = False, train_mode: bool = True
    ) -> None:
        """``mx.autograd.backward([self], [out_grad], retain_graph, train_mode)``."""
        from .autograd import backward

        backward([self], [out_grad], retain_graph=retain_graph, train_mode=train_mode)

    def sum(self, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> NDArray:
        """``mx.nd.sum(self, axis, keepdims)``."""
        return sum(self, axis=axis, keepdims=keepdims, **kwargs)

    def mean(self, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> NDArray:
        """``mx.nd.mean(self, axis, keepdims)``."""
        return mean(self, axis=axis, keepdims=keepdims, **kwargs)

    # -- mx.nd tensor functions as methods (gradhub_compat.mxnet._nd_tensor) -----------------------
    def max(
        self, axis: Any = None, keepdims: bool = False, exclude: bool = False, **kwargs: Any
    ) -> NDArray:
        """``mx.nd.max(self, ...)``."""
        from . import _nd_tensor as t

        return t.max(self, axis=axis, keepdims=keepdims, exclude=exclude, **kwargs)

    def min(
        self, axis: Any = None, keepdims: bool = False, exclude: bool = False, **kwargs: Any
    ) -> NDArray:
        """``mx.nd.min(self, ...)``."""
        from . import _nd_tensor as t

        return t.min(self, axis=axis, keepdims=keepdims, exclude=exclude, **kwargs)

    def prod(
        self, axis: Any = None, keepdims: bool = False, exclude: bool = False, **kwargs: Any
    ) -> NDArray:
        """``mx.nd.prod(self, ...)``."""
        from . import _nd_tensor as t

        return t.prod(self, axis=axis, keepdims=keepdims, exclude=exclude, **kwargs)

    def nansum(
        self, axis: Any = None, keepdims: bool = False, exclude: bool = False, **kwargs: Any
    ) -> NDArray:
        """``mx.nd.nansum(self, ...)``."""
        from . import _nd_tensor as t

        return t.nansum(self, axis=axis, keepdims=keepdims, exclude=exclude, **kwargs)

    def nanprod(
        self, axis: Any = None, keepdims: bool = False, exclude: bool = False, **kwargs: Any
    ) -> NDArray:
        """``mx.nd.nanprod(self, ...)``."""
        from . import _nd_tensor as t

        return t.nanprod(self, axis=axis, keepdims=keepdims, exclude=exclude, **kwargs)

    def argmax(self, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> NDArray:
        """``mx.nd.argmax(self, ...)``."""
        from . import _nd_tensor as t

        return t.argmax(self, axis=axis, keepdims=keepdims, **kwargs)

    def argmin(self, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> NDArray:
        """``mx.nd.argmin(self, ...)``."""
        from . import _nd_tensor as t

        return t.argmin(self, axis=axis, keepdims=keepdims, **kwargs)

    def transpose(self, *axes: Any, **kwargs: Any) -> NDArray:
        """``mx.nd.transpose(self, ...)``."""
        from . import _nd_tensor as t

        return t.transpose(
            self,
            axes=axes[0]
            if len(axes) == 1 and isinstance(axes[0], (tuple, list))
            else axes or kwargs.pop("axes", ()),
            **kwargs,
        )

    def expand_dims(self, axis: int, **kwargs: Any) -> NDArray:
        """``mx.nd.expand_dims(self, ...)``."""
        from . import _nd_tensor as t

        return t.expand_dims(self, axis=axis, **kwargs)

    def squeeze(self, axis: Any = None, **kwargs: Any) -> NDArray:
        """``mx.nd.squeeze(self, ...)``."""
        from . import _nd_tensor as t

        return t.squeeze(self, axis=axis, **kwargs)

    def swapaxes(self, dim1: int = 0, dim2: int = 0, **kwargs: Any) -> NDArray:
        """``mx.nd.swapaxes(self, ...)``."""
        from . import _nd_tensor as t

        return t.swapaxes(self, dim1=dim1, dim2=dim2, **kwargs)

    def flip(self, axis: Any, **kwargs: Any) -> NDArray:
        """``mx.nd.flip(self, ...)``."""
        from . import _nd_tensor as t

        return t.flip(self, axis=axis, **kwargs)

    def tile(self, reps: Any, **kwargs: Any) -> NDArray:
        """``mx.nd.tile(self, ...)``."""
        from . import _nd_tensor as t

        return t.tile(self, reps=reps, **kwargs)

    def repeat(self, repeats: int, axis: int | None = None, **kwargs: Any) -> NDArray:
        """``mx.nd.repeat(self, ...)``."""
        from . import _nd_tensor as t

        return t.repeat(self, repeats=repeats, axis=axis, **kwargs)

    def clip(self, a_min: float, a_max: float, **kwargs: Any) -> NDArray:
        """``mx.nd.clip(self, ...)``."""
        from . import _nd_tensor as t

        return t.clip(self, a_min, a_max, **kwargs)

    def broadcast_to(self, shape: Any, **kwargs: Any) -> NDArray:
        """``mx.nd.broadcast_to(self, ...)``."""
        from . import _nd_tensor as t

        return t.broadcast_to(self, shape=shape, **kwargs)

    def broadcast_like(self, other: NDArray, **kwargs: Any) -> NDArray:
        """``mx.nd.broadcast_like(self, ...)``."""
        from . import _nd_tensor as t

        return t.broadcast_like(self, other, **kwargs)

    def broadcast_axes(self, axis: Any = (), size: Any = (), **kwargs: Any) -> NDArray:
        """``mx.nd.broadcast_axes(self, ...)``."""
        from . import _nd_tensor as t

        return t.broadcast_axes(self, axis=axis, size=size, **kwargs)

    def reshape_like(self, other: NDArray, **kwargs: Any) -> NDArray:
        """``mx.nd.reshape_like(self, ...)``."""
        from . import _nd_tensor as t

        return t.reshape_like(self, other, **kwargs)

    def one_hot(
        self,
        depth: int,
        on_value: float = 1.0,
        off_value: float = 0.0,
        dtype: Any = "float32",
        **kwargs: Any,
    ) -> NDArray:
        """``mx.nd.one_hot(self, ...)``."""
        from . import _nd_tensor as t

        return t.one_hot(self, depth, on_value=on_value, off_value=off_value, dtype=dtype, **kwargs)

    def take(self, indices: NDArray, axis: int = 0, mode: str = "clip", **kwargs: Any) -> NDArray:
        """``mx.nd.take(self, ...)``."""
        from . import _nd_tensor as t

        return t.take(self, indices, axis=axis, mode=mode, **kwargs)

    def sort(self, axis: Any = -1, is_ascend: bool = True, **kwargs: Any) -> NDArray:
        """``mx.nd.sort(self, ...)``."""
        from . import _nd_tensor as t

        return t.sort(self, axis=axis, is_ascend=is_ascend, **kwargs)

    def argsort(
        self, axis: Any = -1, is_ascend: bool = True, dtype: Any = "float32", **kwargs: Any
    ) -> NDArray:
        """``mx.nd.argsort(self, ...)``."""
        from . import _nd_tensor as t

        return t.argsort(self, axis=axis, is_ascend=is_ascend, dtype=dtype, **kwargs)

    def topk(
        self,
        axis: Any = -1,
        k: int = 1,
        ret_typ: str = "indices",
        is_ascend: bool = False,
        dtype: Any = "float32",
        **kwargs: Any,
    ) -> Any:
        """``mx.nd.topk(self, ...)``."""
        from . import _nd_tensor as t

        return t.topk(
            self, axis=axis, k=k, ret_typ=ret_typ, is_ascend=is_ascend, dtype=dtype, **kwargs
        )

    def slice(self, begin: Any, end: Any, step: Any = (), **kwargs: Any) -> NDArray:
        """``mx.nd.slice(self, ...)``."""
        from . import _nd_tensor as t

        return t.slice(self, begin, end, step, **kwargs)

    def slice_axis(self, axis: int, begin: int, end: int | None, **kwargs: Any) -> NDArray:
        """``mx.nd.slice_axis(self, ...)``."""
        from . import _nd_tensor as t

        return t.slice_axis(self, axis, begin, end, **kwargs)

    def slice_like(self, shape_like: NDArray, axes: Any = (), **kwargs: Any) -> NDArray:
        """``mx.nd.slice_like(self, ...)``."""
        from . import _nd_tensor as t

        return t.slice_like(self, shape_like, axes=axes, **kwargs)

    def negative(self, **kwargs: Any) -> NDArray:
        """``mx.nd.negative(self, ...)``."""
        from . import _nd_tensor as t

        return t.negative(self, **kwargs)

    def reciprocal(self, **kwargs: Any) -> NDArray:
        """``mx.nd.reciprocal(self, ...)``."""
        from . import _nd_tensor as t

        return t.reciprocal(self, **kwargs)

    def rsqrt(self, **kwargs: Any) -> NDArray:
        """``mx.nd.rsqrt(self, ...)``."""
        from . import _nd_tensor as t

        return t.rsqrt(self, **kwargs)

    def cbrt(self, **kwargs: Any) -> NDArray:
        """``mx.nd.cbrt(self, ...)``."""
        from . import _nd_tensor as t

        return t.cbrt(self, **kwargs)

    def rcbrt(self, **kwargs: Any) -> NDArray:
        """``mx.nd.rcbrt(self, ...)``."""
        from . import _nd_tensor as t

        return t.rcbrt(self, **kwargs)

    def log1p(self, **kwargs: Any) -> NDArray:
        """``mx.nd.log1p(self, ...)``."""
        from . import _nd_tensor as t

        return t.log1p(self, **kwargs)

    def expm1(self, **kwargs: Any) -> NDArray:
        """``mx.nd.expm1(self, ...)``."""
        from . import _nd_tensor as t

        return t.expm1(self, **kwargs)

    def log2(self, **kwargs: Any) -> NDArray:
        """``mx.nd.log2(self, ...)``."""
        from . import _nd_tensor as t

        return t.log2(self, **kwargs)

    def log10(self, **kwargs: Any) -> NDArray:
        """``mx.nd.log10(self, ...)``."""
        from . import _nd_tensor as t

        return t.log10(self, **kwargs)

    def floor(self, **kwargs: Any) -> NDArray:
        """``mx.nd.floor(self, ...)``."""
        from . import _nd_tensor as t

        return t.floor(self, **kwargs)

    def ceil(self, **kwargs: Any) -> NDArray:
        """``mx.nd.ceil(self, ...)``."""
        from . import _nd_tensor as t

        return t.ceil(self, **kwargs)

    def round(self, **kwargs: Any) -> NDArray:
        """``mx.nd.round(self, ...)``."""
        from . import _nd_tensor as t

        return t.round(self, **kwargs)

    def rint(self, **kwargs: Any) -> NDArray:
        """``mx.nd.rint(self, ...)``."""
        from . import _nd_tensor as t

        return t.rint(self, **kwargs)

    def fix(self, **kwargs: Any) -> NDArray:
        """``mx.nd.fix(self, ...)``."""
        from . import _nd_tensor as t

        return t.fix(self, **kwargs)

    def trunc(self, **kwargs: Any) -> NDArray:
        """``mx.nd.trunc(self, ...)``."""
        from . import _nd_tensor as t

        return t.trunc(self, **kwargs)

    def sign(self, **kwargs: Any) -> NDArray:
        """``mx.nd.sign(self, ...)``."""
        from . import _nd_tensor as t

        return t.sign(self, **kwargs)

    def tan(self, **kwargs: Any) -> NDArray:
        """``mx.nd.tan(self, ...)``."""
        from . import _nd_tensor as t

        return t.tan(self, **kwargs)

    def arcsin(self, **kwargs: Any) -> NDArray:
        """``mx.nd.arcsin(self, ...)``."""
        from . import _nd_tensor as t

        return t.arcsin(self, **kwargs)

    def arccos(self, **kwargs: Any) -> NDArray:
        """``mx.nd.arccos(self, ...)``."""
        from . import _nd_tensor as t

        return t.arccos(self, **kwargs)

    def arctan(self, **kwargs: Any) -> NDArray:
        """``mx.nd.arctan(self, ...)``."""
        from . import _nd_tensor as t

        return t.arctan(self, **kwargs)

    def sinh(self, **kwargs: Any) -> NDArray:
        """``mx.nd.sinh(self, ...)``."""
        from . import _nd_tensor as t

        return t.sinh(self, **kwargs)

    def cosh(self, **kwargs: Any) -> NDArray:
        """``mx.nd.cosh(self, ...)``."""
        from . import _nd_tensor as t

        return t.cosh(self, **kwargs)

    def arcsinh(self, **kwargs: Any) -> NDArray:
        """``mx.nd.arcsinh(self, ...)``."""
        from . import _nd_tensor as t

        return t.arcsinh(self, **kwargs)

    def arccosh(self, **kwargs: Any) -> NDArray:
        """``mx.nd.arccosh(self, ...)``."""
        from . import _nd_tensor as t

        return t.arccosh(self, **kwargs)

    def arctanh(self, **kwargs: Any) -> NDArray:
        """``mx.nd.arctanh(self, ...)``."""
        from . import _nd_tensor as t

        return t.arctanh(self, **kwargs)

    def softsign(self, **kwargs: Any) -> NDArray:
        """``mx.nd.softsign(self, ...)``."""
        from . import _nd_tensor as t

        return t.softsign(self, **kwargs)

    def exp(self, **kwargs: Any) -> NDArray:
        """``mx.nd.exp(self)``."""
        return exp(self, **kwargs)

    def log(self, **kwargs: Any) -> NDArray:
        """``mx.nd.log(self)``."""
        return log(self, **kwargs)

    def sin(self, **kwargs: Any) -> NDArray:
        """``mx.nd.sin(self)``."""
        return sin(self, **kwargs)

    def cos(self, **kwargs: Any) -> NDArray:
        """``mx.nd.cos(self)``."""
        return cos(self, **kwargs)

    def tanh(self, **kwargs: Any) -> NDArray:
        """``mx.nd.tanh(self)``."""
        return tanh(self, **kwargs)

    def sigmoid(self, **kwargs: Any) -> NDArray:
        """``mx.nd.sigmoid(self)``."""
        return sigmoid(self, **kwargs)

    def relu(self, **kwargs: Any) -> NDArray:
        """``mx.nd.relu(self)``."""
        return relu(self, **kwargs)

    def sqrt(self, **kwargs: Any) -> NDArray:
        """``mx.nd.sqrt(self)``."""
        return sqrt(self, **kwargs)

    def square(self, **kwargs: Any) -> NDArray:
        """``mx.nd.square(self)``."""
        return square(self, **kwargs)

    def abs(self, **kwargs: Any) -> NDArray:
        """``mx.nd.abs(self)``."""
        return abs(self, **kwargs)

    def norm(
        self, ord: int = 2, axis: Any = None, keepdims: bool = False, **kwargs: Any
    ) -> NDArray:
        """``mx.nd.norm(self, ord, axis, keepdims)``."""
        return norm(self, ord=ord, axis=axis, keepdims=keepdims, **kwargs)

    def flatten(self, **kwargs: Any) -> NDArray:
        """``mx.nd.flatten(self)``: shape ``(shape[0], -1)``."""
        return flatten(self, **kwargs)

    # -- properties ------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._arr.shape)

    @property
    def dtype(self) -> Any:
        return self._arr.dtype.type

    @property
    def size(self) -> int:
        return int(self._arr.size)

    @property
    def ndim(self) -> int:
        return int(self._arr.ndim)

    @property
    def context(self) -> Context:
        return self._ctx

    ctx = context

    @property
    def T(self) -> NDArray:
        return _fresh(_transposed(self, tuple(range(self.ndim - 1, -1, -1))), self)

    # -- conversion ------------------------------------------------------------------------------
    def asnumpy(self) -> np.ndarray:
        """A numpy copy of the data."""
        return np.array(self._ctx.device().to_numpy(self._arr), copy=True)

    def asscalar(self) -> Any:
        """The single element as a numpy scalar of the array's dtype (``numpy.float32`` ...)."""
        if self.size != 1:
            raise ValueError(f"NDArray.asscalar: the array has {self.size} elements, not 1")
        return self.asnumpy().reshape(())[()]

    def copy(self) -> NDArray:
        """A copy on the same context (recorded inside ``autograd.record()``)."""
        if _STATE.recording and self._var is not None:
            return _fresh(_apply("Reshape", [self], shape=self.shape), self)
        return NDArray(self._arr.copy(), self._ctx)

    def copyto(self, other: NDArray | Context) -> NDArray:
        """Copy into the NDArray ``other`` (in place) or onto the context ``other``. Inside
        ``autograd.record()`` a copy of an array of the graph is recorded (an identity, or a
        cast into ``other``'s dtype), as mxnet's ``_copyto``."""
        if isinstance(other, NDArray):
            if other.shape != self.shape:
                raise ValueError(f"NDArray.copyto: shapes differ: {self.shape} into {other.shape}")
            other._check_assign("copyto")
            node = _copy_node(self, other._ctx, other._arr.dtype, other.shape, "NDArray.copyto")
            other._arr[...] = other._ctx.device().asarray(self.asnumpy())
            _adopt_copy(other, node)
            return other
        ctx = _ctx(other)
        dev = ctx.device()
        res = NDArray(dev.asarray(self.asnumpy()), ctx)
        _adopt_copy(res, _copy_node(self, ctx, self._arr.dtype, self.shape, "NDArray.copyto"))
        return res

    def as_in_context(self, context: Context) -> NDArray:
        """This array itself when it is on ``context`` already, else a copy there (as mxnet)."""
        if _ctx(context) == self._ctx:
            return self
        return self.copyto(context)

    def astype(self, dtype: Any, copy: bool = True) -> NDArray:
        """A copy converted to ``dtype``; with ``copy=False`` the array itself when it has that
        dtype already (as mxnet)."""
        if not copy and np.dtype(dtype) == self._arr.dtype:
            return self
        if _STATE.recording and self._var is not None and np.dtype(dtype).kind == "f":
            return _fresh(_apply("Cast", [self], dtype=np.dtype(dtype).name), self)
        return NDArray(self._arr.astype(dtype), self._ctx)

    def reshape(self, *shape: Any, **kwargs: Any) -> NDArray:
        """The same data with another shape (a view), with mxnet's special codes: ``0`` copies
        the input dimension, ``-1`` infers one dimension, ``-2`` copies all remaining ones,
        ``-3`` merges two consecutive ones, ``-4`` splits one into the next two values (one may
        be ``-1``). ``reverse=True`` matches the codes from the right.

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> x = mx.nd.zeros((2, 3, 4))
            >>> x.reshape((0, -1)).shape, x.reshape((-3, -2)).shape
            ((2, 12), (6, 4))
            >>> x.reshape(2, -4, -1, 3, 4).shape, x.reshape(shape=(-1, 0), reverse=True).shape
            ((2, 1, 3, 4), (6, 4))
        """
        unknown = set(kwargs) - {"shape", "reverse"}
        if unknown:
            raise TypeError(
                f"NDArray.reshape: unknown keyword arguments {sorted(unknown)} (accepted: 'shape' "
                "and 'reverse')"
            )
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        elif not shape:
            shape = kwargs.get("shape")  # type: ignore[assignment]
            if shape is None:
                raise TypeError("NDArray.reshape: no shape given")
            shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        target = _mx_reshape(self.shape, tuple(shape), bool(kwargs.get("reverse", False)))
        if _STATE.recording and self._var is not None:
            return _apply("Reshape", [self], shape=target)
        return NDArray(self._arr.reshape(target), self._ctx)

    def wait_to_read(self) -> None:
        """Accepted for mxnet compatibility: gradhub computes synchronously."""

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = self.asnumpy()
        return arr if dtype is None else arr.astype(dtype)

    # -- indexing --------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._arr)

    def __getitem__(self, key: Any) -> NDArray:
        if _STATE.recording and self._var is not None:
            return self._recorded_index(key)
        res = self._arr[key]
        if getattr(res, "ndim", 0) == 0 and self._arr.ndim > 0:
            # mxnet gives shape (1,) for a single element, as a view of the original
            res = self._arr[_last_as_slice(key, self._arr.shape)]
        elif not res.flags.c_contiguous:
            # mxnet returns a view only for a contiguous slice (a strided one is a copy)
            res = res.copy()
        return NDArray(res, self._ctx)

    def _recorded_index(self, key: Any) -> NDArray:
        """``self[key]`` inside ``autograd.record()`` for an array of a graph: basic indexing
        (integers and slices, one per leading axis) is a recorded ``slice`` (a copy), then the
        axes of the integers are dropped (one element: shape ``(1,)``), as mxnet 1.9.1; other
        keys raise NotImplementedError."""
        import builtins

        from ._nd_tensor import slice as _slice

        k = key if isinstance(key, tuple) else (key,)
        basic = all(
            isinstance(i, builtins.slice)
            or (isinstance(i, (int, np.integer)) and not isinstance(i, bool))
            for i in k
        )
        if basic and len(k) > self.ndim:
            raise IndexError(
                f"too many indices for array: array is {self.ndim}-dimensional, but {len(k)} "
                "were indexed"
            )
        if not basic:
            raise NotImplementedError(
                f"NDArray[...]: the key {key!r} on an array of a recorded graph inside "
                "autograd.record() is not supported (integers and slices only; "
                "docs/migration-mxnet.md)"
            )
        begin: list[Any] = []
        end: list[Any] = []
        step: list[Any] = []
        keep: list[int] = []
        for axis, i in enumerate(k):
            n = self.shape[axis]
            if isinstance(i, builtins.slice):
                begin.append(i.start)
                end.append(i.stop)
                step.append(1 if i.step is None else i.step)
                keep.append(axis)
                continue
            j = int(i) + n if int(i) < 0 else int(i)
            if not 0 <= j < n:
                raise IndexError(f"index {int(i)} is out of bounds for axis {axis} with size {n}")
            begin.append(j)
            end.append(j + 1)
            step.append(1)
        out = _slice(self, begin=tuple(begin), end=tuple(end), step=tuple(step))
        shape = tuple(out.shape[a] for a in keep) + out.shape[len(k) :]
        return out.reshape(shape if shape else (1,))

    def __setitem__(self, key: Any, value: Any) -> None:
        """Write ``value`` into the selected elements. Inside ``autograd.record()``, assigning an
        array of the graph to the whole array (``out[:] = y``) is recorded as a copy (broadcast
        and cast to this array's shape and dtype), as mxnet; assigning it to a part raises
        MXNetError, as mxnet."""
        self._check_assign("[...] =")
        recorded = isinstance(value, NDArray) and _STATE.recording and value._var is not None
        if recorded and not _whole(key, self.shape):
            raise MXNetError(
                "NDArray [...] =: Inplace operations (+=, -=, x[:]=, etc) are not supported when "
                "recording with autograd (assigning an array of the graph to a part of an array)"
            )
        self._arr[key] = self._value(value)  # (checks the shapes)
        if recorded:
            node = _copy_node(value, self._ctx, self._arr.dtype, self.shape, "NDArray [...] =")
            _adopt_copy(self, node)

    def __bool__(self) -> bool:
        if self.size == 0:
            return False
        if self.size > 1:
            raise ValueError(
                "The truth value of an NDArray with multiple elements is ambiguous (use "
                "asnumpy().any() or .all())"
            )
        return bool(self.asnumpy().reshape(()))

    __hash__ = object.__hash__

    def _value(self, value: Any) -> Any:
        if isinstance(value, NDArray):
            return self._ctx.device().asarray(value.asnumpy())
        if isinstance(value, (bool, int, float, np.number)):
            return value
        return self._ctx.device().asarray(np.asarray(value))

    # -- arithmetic ------------------------------------------------------------------------------
    def _operand(self, other: Any, what: str) -> Any:
        """``other`` as an operand of ``self``'s dtype: an NDArray of the same dtype (mxnet
        refuses mixed dtypes) or a number converted to the dtype first (as mxnet's scalar
        operators: ``int32 array * 1.5`` multiplies by 1)."""
        dt = self._arr.dtype
        if isinstance(other, NDArray):
            if other._arr.dtype != dt:
                raise _MXNetTypeError(
                    f"NDArray {what}: the operands have different dtypes {dt.name} and "
                    f"{other._arr.dtype.name} (mxnet refuses mixed dtypes; convert one with "
                    "astype)"
                )
            if other._ctx != self._ctx:
                raise ValueError(
                    f"NDArray {what}: the operands are on different contexts {self._ctx} and "
                    f"{other._ctx}"
                )
            return other._arr
        if isinstance(other, (bool, int, float, np.number)):
            try:
                if dt.kind in "iu":  # truncated, then wrapped into the dtype (uint8 - 1: 255)
                    return _int_scalar(other, dt)
                return dt.type(other)
            except (OverflowError, ValueError) as e:
                raise ValueError(
                    f"NDArray {what}: the scalar {other!r} does not fit the dtype {dt.name}: {e}"
                ) from None
        raise TypeError(
            f"NDArray {what}: type {type(other).__name__} not supported (an NDArray or a number)"
        )

    def _binary(
        self, other: Any, op: Callable[[Any, Any], Any], what: str, diff: bool = True
    ) -> NDArray:
        b = self._operand(other, what)
        if (
            _STATE.recording
            and diff
            and (self._var is not None or (isinstance(other, NDArray) and other._var is not None))
            and self._arr.dtype.kind == "f"
        ):  # mx.autograd: record the operation in a native graph
            vb = other._as_var() if isinstance(other, NDArray) else b
            with set_recording(True):
                r = op(self._as_var(), vb)
            return NDArray(r._data, self._ctx, r)
        try:
            res = op(self._arr, b)
        except ValueError:
            if isinstance(other, NDArray) and self.shape != other.shape:
                raise _MXNetValueError(
                    f"NDArray {what}: operands could not be broadcast together with shapes "
                    f"{list(self.shape)} {list(other.shape)}"
                ) from None
            raise
        if type(res) is not type(self._arr):
            res = self._ctx.device().asarray(res)
        if res.dtype != self._arr.dtype:
            res = res.astype(self._arr.dtype)  # int / int: truncated, as mxnet
        return NDArray(res, self._ctx)

    def _inplace(self, other: Any, op: Callable[[Any, Any], Any], what: str) -> NDArray:
        self._check_assign(what)
        self._arr[...] = self._binary(other, op, what)._arr
        return self

    def __add__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: a + b, "+")

    def __radd__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: b + a, "+")

    def __sub__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: a - b, "-")

    def __rsub__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: b - a, "-")

    def __mul__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: a * b, "*")

    def __rmul__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: b * a, "*")

    def __truediv__(self, o: Any) -> NDArray:
        return self._binary(o, _divide, "/")

    def __rtruediv__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: b / a, "/")

    def __pow__(self, o: Any) -> NDArray:
        if self._arr.dtype.kind in "iu":  # mxnet's integer power (negative powers truncate)
            return self._binary(o, lambda a, b: _int_pow(a, b, False), "**")
        return self._binary(o, lambda a, b: a**b, "**")

    def __rpow__(self, o: Any) -> NDArray:
        if self._arr.dtype.kind in "iu":
            return self._binary(o, lambda a, b: _int_pow(a, b, True), "**")
        return self._binary(o, lambda a, b: b**a, "**")

    def __neg__(self) -> NDArray:
        if _STATE.recording and self._var is not None:
            return _apply("Neg", [self])
        return NDArray(-self._arr, self._ctx)

    def __iadd__(self, o: Any) -> NDArray:
        return self._inplace(o, lambda a, b: a + b, "+=")

    def __isub__(self, o: Any) -> NDArray:
        return self._inplace(o, lambda a, b: a - b, "-=")

    def __imul__(self, o: Any) -> NDArray:
        return self._inplace(o, lambda a, b: a * b, "*=")

    def __itruediv__(self, o: Any) -> NDArray:
        return self._inplace(o, _divide, "/=")

    # -- comparisons (elementwise, 1/0 in the array's dtype, as mxnet) ----------------------------
    def __eq__(self, o: Any) -> NDArray:  # type: ignore[override]
        return self._binary(o, lambda a, b: a == b, "==", diff=False)

    def __ne__(self, o: Any) -> NDArray:  # type: ignore[override]
        return self._binary(o, lambda a, b: a != b, "!=", diff=False)

    def __lt__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: a < b, "<", diff=False)

    def __le__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: a <= b, "<=", diff=False)

    def __gt__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: a > b, ">", diff=False)

    def __ge__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: a >= b, ">=", diff=False)

    def __repr__(self) -> str:
        shape = "x".join(str(s) for s in self.shape)
        return f"\n{self.asnumpy()}\n<NDArray {shape} @{self._ctx}>"


def _int_pow(a: Any, b: Any, reverse: bool) -> Any:
    """``a ** b`` (``b ** a`` with ``reverse``) of an integer array ``a`` as mxnet: in double
    precision, converted back to ``a``'s dtype (``int32 ** -1`` is 0 for |a| > 1)."""
    host = a if isinstance(a, np.ndarray) else a.get()  # (CuPy: computed on the host)
    other = np.asarray(b.get() if hasattr(b, "get") and not np.isscalar(b) else b)
    ins = [host, other.astype(host.dtype)] if other.ndim else [host]
    attrs = {} if other.ndim else {"scalar": other[()]}
    return int_kernel("rpow" if reverse else "pow", ins, **attrs)


def _last_as_slice(key: Any, shape: tuple[int, ...]) -> Any:
    """``key`` (integers selecting one element) with its last integer made a length-1 slice, so
    that indexing gives a (1,)-shaped view; ``key`` is known to be in range."""
    parts = list(key) if isinstance(key, tuple) else [key]
    for i in range(len(parts) - 1, -1, -1):
        k = parts[i]
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            axis = i if Ellipsis not in parts else len(shape) - (len(parts) - i)
            k = int(k) + (shape[axis] if k < 0 else 0)
            parts[i] = np.s_[k : k + 1]  # (a slice: mx.nd.slice shadows the builtin here)
            return tuple(parts)
    return (*parts, None)  # no integer (e.g. a 0-d result of a mask): add an axis


def _mx_reshape(src: tuple[int, ...], codes: tuple[Any, ...], reverse: bool) -> tuple[int, ...]:
    """The shape mxnet's ``reshape(codes, reverse)`` gives an array of shape ``src``."""

    def bad(why: str) -> ValueError:
        return ValueError(
            f"NDArray.reshape: cannot reshape an array of shape {src} into {codes}: {why}"
        )

    try:
        spec = [int(c) for c in codes]
    except (TypeError, ValueError):
        raise bad("the shape must be integers") from None
    dims = list(src)
    if reverse:
        spec.reverse()
        dims.reverse()
    out: list[int] = []
    infer = -1
    j = 0  # the next input dimension
    i = 0
    while i < len(spec):
        c = spec[i]
        if c == 0:
            if j >= len(dims):
                raise bad("0 copies an input dimension, but none is left")
            out.append(dims[j])
            j += 1
        elif c == -1:
            if infer >= 0:
                raise bad("only one dimension can be -1 (inferred)")
            infer = len(out)
            out.append(1)
            j += 1
        elif c == -2:
            out.extend(dims[j:])
            j = len(dims)
        elif c == -3:
            if j + 1 >= len(dims):
                raise bad("-3 merges two input dimensions, but fewer are left")
            out.append(dims[j] * dims[j + 1])
            j += 2
        elif c == -4:
            if i + 2 >= len(spec):
                raise bad("-4 must be followed by the two sizes it splits into")
            if j >= len(dims):
                raise bad("-4 splits an input dimension, but none is left")
            d0, d1, d2 = dims[j], spec[i + 1], spec[i + 2]
            j += 1
            i += 2
            if d1 == -1 and d2 == -1:
                raise bad("-4 cannot split into two inferred (-1) sizes")
            if d1 < -1 or d2 < -1 or d1 == 0 or d2 == 0:
                raise bad("the sizes after -4 must be positive or -1")
            if d1 == -1:
                d1 = d0 // d2 if d2 else 0
            elif d2 == -1:
                d2 = d0 // d1 if d1 else 0
            if d1 * d2 != d0:
                raise bad(f"-4 splits {d0} into {d1} x {d2}")
            out.extend((d1, d2))
        elif c < -4:
            raise bad(f"{c} is not a valid code (0, -1, -2, -3, -4 or a size)")
        else:
            out.append(c)
            j += 1
        i += 1
    total = math.prod(src)
    if infer >= 0:
        rest = math.prod(out)  # the inferred dimension counts as 1
        if rest == 0 or total % rest:
            raise bad("the inferred (-1) dimension does not divide the size")
        out[infer] = total // rest
    if reverse:
        out.reverse()
    if math.prod(out) != total:
        raise bad(f"the sizes differ ({total} elements into {math.prod(out)})")
    return tuple(out)


def _make(data: Any, ctx: Any, dtype: Any) -> NDArray:
    c = _ctx(ctx)
    return NDArray(c.device().asarray(np.asarray(data, dtype=dtype)), c)


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An NDArray holding a copy of ``source_array``.

    ``dtype`` defaults to the source's dtype for an NDArray and to float32 otherwise (as mxnet).
    Inside ``autograd.record()`` the copy of an NDArray of the graph is recorded (as mxnet).
    """
    if isinstance(source_array, NDArray):
        # inside autograd.record() the copy of an array of the graph is recorded (mxnet's
        # array() is copyto on a new array)
        dtype = dtype or source_array._arr.dtype
        res = _make(source_array.asnumpy().astype(dtype, copy=True), ctx, dtype)
        node = _copy_node(source_array, res._ctx, res._arr.dtype, res.shape, "mx.nd.array")
        _adopt_copy(res, node)
        return res
    elif isinstance(source_array, NativeVariable):  # (its values; .d raises inside vmap)
        refuse_traced(
            "nd.array() of a Variable (an argument of the step)",
            "the NDArray would hold this call's copy of its values at every later call",
        )
        data = np.array(source_array.numpy())
        dtype = dtype or _DEFAULT_DTYPE
    else:
        if is_tracing():  # an argument's array, or one taken from a Variable (.d, .g, numpy())
            try:
                observe_wrap(source_array)
            except NotImplementedError:
                refuse_traced(
                    "nd.array() of an argument's array or of an array taken from a Variable",
                    "the NDArray would hold this call's copy of its values at every later call",
                )
                raise
        data = np.array(source_array)
        dtype = dtype or _DEFAULT_DTYPE
    return _make(np.array(data, dtype=dtype, copy=True), ctx, dtype)


def zeros(shape: Any, ctx: Context | None = None, dtype: Any = None, **kwargs: Any) -> NDArray:
    """An NDArray of zeros (float32 by default)."""
    return _make(np.zeros(_shape(shape)), ctx, dtype or _DEFAULT_DTYPE)


def ones(shape: Any, ctx: Context | None = None, dtype: Any = None, **kwargs: Any) -> NDArray:
    """An NDArray of ones (float32 by default)."""
    return _make(np.ones(_shape(shape)), ctx, dtype or _DEFAULT_DTYPE)


def full(
    shape: Any, val: float, ctx: Context | None = None, dtype: Any = None, **kwargs: Any
) -> NDArray:
    """An NDArray filled with ``val`` (float32 by default)."""
    return _make(np.full(_shape(shape), val), ctx, dtype or _DEFAULT_DTYPE)


def empty(shape: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An NDArray of the given shape (zeros in gradhub)."""
    return zeros(shape, ctx, dtype)


def zeros_like(data: NDArray, **kwargs: Any) -> NDArray:
    """Zeros of the shape, dtype and context of ``data``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.zeros_like(mx.nd.ones((2,), dtype="float64")).asnumpy()
        array([0., 0.])
    """
    if not isinstance(data, NDArray):
        raise TypeError(f"mx.nd.zeros_like: data must be an NDArray, got {type(data).__name__}")
    return zeros(data.shape, data.context, data._arr.dtype)


def ones_like(data: NDArray, **kwargs: Any) -> NDArray:
    """Ones of the shape, dtype and context of ``data``."""
    if not isinstance(data, NDArray):
        raise TypeError(f"mx.nd.ones_like: data must be an NDArray, got {type(data).__name__}")
    return ones(data.shape, data.context, data._arr.dtype)


def _elemwise(fn: str, op: Callable[[Any, Any], Any], formula: str) -> Callable[..., NDArray]:
    def function(lhs: NDArray, rhs: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
        for arg, v in (("lhs", lhs), ("rhs", rhs)):
            if not isinstance(v, NDArray):
                raise TypeError(f"mx.nd.{fn}: {arg} must be an NDArray, got {type(v).__name__}")
        if out is not None:
            raise NotImplementedError(
                f"mx.nd.{fn}: out= is not supported (docs/migration-mxnet.md)"
            )
        if lhs.shape != rhs.shape:  # mxnet's elemwise_* do not broadcast
            raise _MXNetValueError(
                f"mx.nd.{fn}: Incompatible attr at 1-th input: expected {list(lhs.shape)}, got "
                f"{list(rhs.shape)} (use broadcast_* operators or the arithmetic operators)"
            )
        return lhs._binary(rhs, op, fn)

    function.__name__ = function.__qualname__ = fn
    function.__doc__ = (
        f"``{formula}`` of two NDArrays of one shape and dtype (recorded by ``mx.autograd``)."
    )
    return function


elemwise_add = _elemwise("elemwise_add", lambda a, b: a + b, "lhs + rhs")
elemwise_sub = _elemwise("elemwise_sub", lambda a, b: a - b, "lhs - rhs")
elemwise_mul = _elemwise("elemwise_mul", lambda a, b: a * b, "lhs * rhs")
elemwise_div = _elemwise("elemwise_div", lambda a, b: a / b, "lhs / rhs")


# -- mx.autograd support ----------------------------------------------------------------------


def _mark(array: NDArray, grad: NDArray, req: str) -> None:
    """Make ``array`` a variable of mx.autograd with the gradient buffer ``grad``: a new leaf of
    the native graph holding its data (its earlier graph, if any, is cut, as mxnet's)."""
    leaf = NativeVariable.leaf(array._arr, req != "null" and array._arr.dtype.kind == "f")
    array._var = leaf
    _ag.MARKED[leaf] = (grad, req)


def _whole(key: Any, shape: tuple[int, ...]) -> bool:
    """Whether ``x[key] = value`` writes the whole array ``x`` of ``shape`` in order: mxnet's
    direct assignment (basic indexing selecting every element with positive steps)."""
    parts = key if isinstance(key, tuple) else (key,)
    for k in parts:
        if k is None or k is Ellipsis:
            continue
        if isinstance(k, type(np.s_[:])):  # (mx.nd.slice shadows slice here)
            if k.step is not None and int(k.step) <= 0:
                return False
        elif not isinstance(k, (int, np.integer)) or isinstance(k, bool):
            return False  # advanced indexing: mxnet's partial assignment
    size = math.prod(shape)
    try:
        sel = np.arange(size).reshape(shape)[key]
    except IndexError:
        return False
    return bool(sel.size == size and (sel.ravel() == np.arange(size)).all())


def _copy_node(
    src: NDArray, ctx: Context, dtype: Any, shape: tuple[int, ...], what: str
) -> NativeVariable | None:
    """The recorded copy of ``src`` (mxnet records ``nd.array(y)``, ``y.copyto(out)`` and
    ``out[:] = y`` as operations of the graph): ``src``'s Variable with its leading length-1
    axes beyond ``shape`` dropped, broadcast to ``shape``, cast to ``dtype`` and moved to
    ``ctx``'s device; None when nothing is recorded (not recording, ``src`` outside any graph
    or of an integer dtype, whose operations gradhub does not record)."""
    if not (_STATE.recording and src._var is not None and src._arr.dtype.kind == "f"):
        return None
    dt = np.dtype(dtype)
    if dt.kind != "f":
        raise NotImplementedError(
            f"{what}: copying an array of the recorded graph into the integer dtype {dt.name} "
            "inside autograd.record() is not supported (mxnet passes the gradient through the "
            "integer copy; gradhub records float arrays only; docs/migration-mxnet.md)"
        )
    with set_recording(True):
        v = src._var
        extra = v.ndim - len(shape)
        if extra > 0:
            v = _call("Reshape", v, shape=tuple(v.shape[extra:]))
        if tuple(v.shape) != tuple(shape):
            v = _call("BroadcastTo", v, shape=tuple(shape))
        if v.dtype != dt:
            v = _call("Cast", v, dtype=dt.name)
        else:  # a node of its own (the copy is not the source)
            v = _call("Reshape", v, shape=tuple(shape))
        dev = ctx.device()
        if dev != src._ctx.device():
            v = v.to(dev)
    return v


def _adopt_copy(dst: NDArray, node: NativeVariable | None) -> None:
    """Make ``node`` (from :func:`_copy_node`) the Variable of ``dst``, whose array already
    holds the copied values: the node's data becomes ``dst``'s array (as mxnet, where the
    output of the recorded copy is ``dst`` itself)."""
    if node is None:
        return
    node._data = dst._arr
    dst._var = node


def _fresh(r: NDArray, source: NDArray) -> NDArray:
    """``r`` holding an array of its own where it shares memory with ``source`` (a recorded
    Transpose, Cast or Slice returns a view): mxnet's operators other than ``reshape`` and
    contiguous slicing return new arrays, so a write into the result must leave the source
    alone."""
    arr = r._arr
    share = getattr(r._ctx.device().xp, "may_share_memory", None)
    if share is None or not share(arr, source._arr):
        return r
    own = arr.copy()
    if r._var is not None:
        r._var._data = own
    r._arr = own
    return r


def _transposed(x: NDArray, axes: tuple[int, ...]) -> NDArray:
    """``x`` with its axes in the order ``axes``: recorded by ``mx.autograd`` (a view of
    ``x``'s array), else a copy."""
    if _STATE.recording and x._var is not None:
        return _apply("Transpose", [x], axes=axes)
    return NDArray(x._arr.transpose(axes).copy(), x._ctx)


def _moved(x: NDArray, src: int, dst: int) -> NDArray:
    """``x`` with axis ``src`` moved to ``dst`` (mxnet's dot transposes a matrix view)."""
    axes = [i for i in range(x.ndim) if i != src]
    axes.insert(dst, src)
    return _transposed(x, tuple(axes))


def _apply(name: str, arrays: list[NDArray], **attrs: Any) -> NDArray:
    """The registered function ``name`` on ``arrays``: recorded in the native graph when
    ``mx.autograd`` records and an input belongs to a graph, computed without a graph otherwise.
    A 0-d result becomes shape (1,), as mxnet's reductions. Integer arrays run mxnet's integer
    kernels (:func:`int_kernel`: the result keeps their dtype)."""
    ctx = arrays[0]._ctx
    if all(a._arr.dtype.kind in "iu" for a in arrays) and (
        name in _NATIVE_INT or name == "PowScalar"
    ):
        dev = ctx.device()
        ins = [np.asarray(dev.to_numpy(a._arr)) for a in arrays]
        if name == "PowScalar":
            res = int_kernel("pow", ins, scalar=attrs["val"])
        else:
            res = int_kernel(_NATIVE_INT[name], ins, **attrs)
        return NDArray(dev.asarray(res.reshape(res.shape or (1,))), ctx)
    rec = (
        _STATE.recording
        and any(a._var is not None for a in arrays)
        and all(a._arr.dtype.kind == "f" for a in arrays)
    )
    with set_recording(True) if rec else no_grad():
        r = _call(name, *[a._as_var() for a in arrays], **attrs)
        if r.ndim == 0:
            r = _call("Reshape", r, shape=(1,))
    return NDArray(r._data, ctx, r if rec else None)


def waitall() -> None:
    """mxnet's ``mx.nd.waitall()``: wait until every pending operation has finished. The
    layer's operations finish when they return, so there is nothing to wait for.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.waitall()
    """


def write_out(fn: str, result: NDArray, out: Any) -> NDArray:
    """mxnet's ``out=`` of the elementwise functions: ``result`` written into ``out`` (an
    NDArray of the same shape and dtype, or a view such as ``grad[row]``, whose base array sees
    the write) and ``out`` returned; ``out=None`` returns ``result``. A shape or dtype mismatch
    raises :class:`~.base.MXNetError` (as mxnet); ``out=`` on a result ``mx.autograd`` records
    raises NotImplementedError (the layer does not rebind ``out`` into the graph)."""
    if out is None:
        return result
    if not isinstance(out, NDArray):
        raise TypeError(f"mx.nd.{fn}: out must be an NDArray, got {type(out).__name__}")
    if out.shape != result.shape or out._arr.dtype != result._arr.dtype:
        raise MXNetError(
            f"mx.nd.{fn}: out has shape {out.shape} and dtype {out._arr.dtype.name} but the "
            f"result has shape {result.shape} and dtype {result._arr.dtype.name}"
        )
    if result._var is not None:
        raise NotImplementedError(
            f"mx.nd.{fn}: out= while mx.autograd records is not supported (docs/migration-mxnet.md)"
        )
    out._check_assign(f"mx.nd.{fn}(out=...)")
    out._arr[...] = result._arr
    return out


def _unary(name: str, fn: str, formula: str) -> Callable[..., NDArray]:
    def function(data: NDArray, out: Any = None, name: Any = None, **kwargs: Any) -> NDArray:
        if not isinstance(data, NDArray):
            raise TypeError(f"mx.nd.{fn}: data must be an NDArray, got {type(data).__name__}")
        return write_out(fn, _apply(name_, [data]), out)

    name_ = name
    function.__name__ = function.__qualname__ = fn
    function.__doc__ = (
        f"``{formula}`` elementwise (recorded by ``mx.autograd``).\n\n"
        f"Example::\n\n    >>> import gradhub_compat.mxnet as mx\n"
        f"    >>> mx.nd.{fn}(mx.nd.array([1.0])).shape\n    (1,)\n"
    )
    return function


exp = _unary("Exp", "exp", "e^x")
log = _unary("Log", "log", "ln(x)")
sin = _unary("Sin", "sin", "sin(x)")
cos = _unary("Cos", "cos", "cos(x)")
tanh = _unary("Tanh", "tanh", "tanh(x)")
sigmoid = _unary("Sigmoid", "sigmoid", "1 / (1 + e^-x)")
relu = _unary("ReLU", "relu", "max(x, 0)")
sqrt = _unary("Sqrt", "sqrt", "x^(1/2)")
abs = _unary("Abs", "abs", "|x|")


def square(data: NDArray, out: Any = None, name: Any = None, **kwargs: Any) -> NDArray:
    """``x^2`` elementwise (recorded by ``mx.autograd``); ``out=`` receives the result (see
    :func:`write_out`).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.square(mx.nd.array([3.0])).asnumpy()
        array([9.], dtype=float32)
    """
    if not isinstance(data, NDArray):
        raise TypeError(f"mx.nd.square: data must be an NDArray, got {type(data).__name__}")
    return write_out("square", _apply("PowScalar", [data], val=2.0), out)


def _reduce(fn: str, native: str, data: Any, axis: Any, keepdims: bool, exclude: bool) -> NDArray:
    if not isinstance(data, NDArray):
        raise TypeError(f"mx.nd.{fn}: data must be an NDArray, got {type(data).__name__}")
    if axis is not None:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        bad = [a for a in axes if not -data.ndim <= int(a) < data.ndim]
        if bad:
            raise MXNetError(
                f"mx.nd.{fn}: axis {axis!r} is out of range for data of shape {data.shape}"
            )
        # axis=() (mxnet's default) reduces every axis, as None (also with exclude=True)
        axis = tuple(int(a) % data.ndim for a in axes) or None
        if exclude and axis is not None:  # the axes not listed (none left: no reduction)
            axis = tuple(a for a in range(data.ndim) if a not in axis)
            if not axis:
                return (
                    _apply("MulScalar", [data], val=1.0)
                    if data._arr.dtype.kind == "f"
                    else data.copy()
                )
    return _apply(native, [data], axis=axis, keepdims=bool(keepdims))


def sum(
    data: NDArray, axis: Any = None, keepdims: bool = False, exclude: bool = False, **kwargs: Any
) -> NDArray:
    """The sum over ``axis`` (all axes by default or with ``axis=()``, mxnet's default; a full
    reduction has shape (1,), as mxnet); ``exclude=True`` reduces the axes not in ``axis``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.sum(mx.nd.ones((2, 3)), axis=1).asnumpy()
        array([3., 3.], dtype=float32)
    """
    return _reduce("sum", "Sum", data, axis, keepdims, exclude)


def mean(
    data: NDArray, axis: Any = None, keepdims: bool = False, exclude: bool = False, **kwargs: Any
) -> NDArray:
    """The mean over ``axis`` (all axes by default or with ``axis=()``, mxnet's default; a full
    reduction has shape (1,)); ``exclude=True`` reduces the axes not in ``axis``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.mean(mx.nd.array([1.0, 2.0])).asnumpy()
        array([1.5], dtype=float32)
    """
    return _reduce("mean", "Mean", data, axis, keepdims, exclude)


def dot(
    lhs: NDArray,
    rhs: NDArray,
    transpose_a: bool = False,
    transpose_b: bool = False,
    forward_stype: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``dot``: ``lhs`` contracted over its last axis with the first axis of ``rhs``
    (``out[i..., j...] = sum_k lhs[i..., k] rhs[k, j...]``); as mxnet, ``transpose_a`` views
    ``lhs`` as the matrix (shape[0], rest) transposed (its first axis is contracted, the
    others lead the result) and ``transpose_b`` views ``rhs`` as (rest, shape[-1]) transposed
    (its last axis is contracted); two 1-D operands give shape (1,). Recorded by
    ``mx.autograd``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((3, 4))).shape
        (2, 4)
    """
    for arg, v in (("lhs", lhs), ("rhs", rhs)):
        if not isinstance(v, NDArray):
            raise TypeError(f"mx.nd.dot: {arg} must be an NDArray, got {type(v).__name__}")
    if forward_stype not in (None, "default"):
        raise NotImplementedError(
            f"mx.nd.dot: forward_stype={forward_stype!r} is not supported (docs/migration-mxnet.md)"
        )
    if lhs._arr.dtype != rhs._arr.dtype:
        raise _MXNetTypeError(
            f"mx.nd.dot: the operands have different dtypes {lhs._arr.dtype.name} and "
            f"{rhs._arr.dtype.name} (mxnet refuses mixed dtypes)"
        )
    a = _moved(lhs, 0, lhs.ndim - 1) if transpose_a and lhs.ndim > 1 else lhs
    b = _moved(rhs, rhs.ndim - 1, 0) if transpose_b and rhs.ndim > 1 else rhs
    if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != b.shape[0]:
        raise MXNetError(
            f"mx.nd.dot: dot shape error: {list(lhs.shape)} X {list(rhs.shape)} "
            f"(transpose_a={transpose_a}, transpose_b={transpose_b})"
        )
    out_shape = (*a.shape[:-1], *b.shape[1:]) or (1,)
    k = a.shape[-1]
    am = a.reshape((int(math.prod(a.shape[:-1])), k))
    bm = b.reshape((k, int(math.prod(b.shape[1:]))))
    rec = _STATE.recording and (am._var is not None or bm._var is not None)
    with set_recording(True) if rec else no_grad():
        r = am._as_var() @ bm._as_var()
        r = _call("Reshape", r, shape=out_shape)
    return NDArray(r._data, lhs._ctx, r if rec else None)


def _record(
    arrays: list[NDArray], fn: Callable[..., NativeVariable]
) -> tuple[NativeVariable, bool]:
    """``fn`` on the native Variables of ``arrays``, recorded when ``mx.autograd`` records and an
    input belongs to a graph (as :func:`_apply`); returns the result and whether it was recorded."""
    rec = (
        _STATE.recording
        and any(a._var is not None for a in arrays)
        and all(a._arr.dtype.kind == "f" for a in arrays)
    )
    with set_recording(True) if rec else no_grad():
        return fn(*[a._as_var() for a in arrays]), rec


def FullyConnected(
    data: NDArray,
    weight: NDArray,
    bias: NDArray | None = None,
    num_hidden: int | None = None,
    no_bias: bool = False,
    flatten: bool = True,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``mx.nd.FullyConnected``: ``y = x W^T + b`` with ``W`` of shape
    ``(num_hidden, in)``; ``flatten`` flattens ``x`` to ``(batch, -1)`` first, otherwise the last
    axis is transformed. Recorded by ``mx.autograd``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> y = mx.nd.FullyConnected(mx.nd.ones((2, 3)), mx.nd.ones((4, 3)), mx.nd.ones((4,)),
        ...                          num_hidden=4)
        >>> y.asnumpy()
        array([[4., 4., 4., 4.],
               [4., 4., 4., 4.]], dtype=float32)
    """
    if num_hidden is None:
        raise MXNetError(
            "mx.nd.FullyConnected: Required parameter num_hidden of int is not presented"
        )
    if out is not None:
        raise NotImplementedError(
            "mx.nd.FullyConnected: out= is not supported (docs/migration-mxnet.md)"
        )
    arrays = [data, weight] if no_bias or bias is None else [data, weight, bias]
    for arg, v in zip(("data", "weight", "bias"), arrays):
        if not isinstance(v, NDArray):
            raise TypeError(
                f"mx.nd.FullyConnected: {arg} must be an NDArray, got {type(v).__name__}"
            )
        if v._arr.dtype != data._arr.dtype:
            raise _MXNetTypeError(
                f"mx.nd.FullyConnected: {arg} has dtype {v._arr.dtype.name}, data "
                f"{data._arr.dtype.name} (mxnet refuses mixed dtypes)"
            )
    nh = int(num_hidden)
    n_in = int(math.prod(data.shape[1:])) if flatten else data.shape[-1]
    if weight.shape != (nh, n_in):
        raise MXNetError(
            "mx.nd.FullyConnected: Shape inconsistent, Provided = "
            f"[{','.join(map(str, weight.shape))}], "
            f"inferred shape=({nh},{n_in}) (weight, for data of shape {data.shape})"
        )
    if len(arrays) == 3 and arrays[2].shape not in ((nh,), (nh, 1)):
        raise MXNetError(
            "mx.nd.FullyConnected: Shape inconsistent, Provided = "
            f"[{','.join(map(str, arrays[2].shape))}], "
            f"inferred shape=({nh},) (bias)"
        )

    def fc(x: NativeVariable, w: NativeVariable, b: NativeVariable | None = None) -> Any:
        if flatten and x.ndim != 2:
            x = _call("Reshape", x, shape=(x.shape[0], n_in))
        if b is not None and b.ndim == 2:
            b = _call("Reshape", b, shape=(nh,))
        wt = _call("Transpose", w, axes=(1, 0))
        return _call("Affine", x, wt, b, base_axis=1 if flatten else x.ndim - 1)

    r, rec = _record(arrays, fc)
    return NDArray(r._data, data._ctx, r if rec else None)


def Dropout(
    data: NDArray,
    p: float = 0.5,
    mode: str = "training",
    axes: Any = (),
    cudnn_off: bool = False,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``mx.nd.Dropout``: in training (``mx.autograd.is_training()``, or
    ``mode="always"``) each element is kept with probability ``1 - p`` and scaled by
    ``1 / (1 - p)`` (the others are 0); ``axes`` share one draw along those axes. Otherwise the
    data pass unchanged (as mxnet, the result is still recorded, with gradient 1). The mask comes
    from ``gradhub.random.generator()`` (``mx.random.seed``), not mxnet's generator.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.Dropout(mx.nd.ones((2, 2)), p=0.5).asnumpy()  # not training: unchanged
        array([[1., 1.],
               [1., 1.]], dtype=float32)
    """
    import gradhub.random

    if not isinstance(data, NDArray):
        raise TypeError(f"mx.nd.Dropout: data must be an NDArray, got {type(data).__name__}")
    if mode not in ("training", "always"):
        raise MXNetError(
            f"mx.nd.Dropout: Invalid Input: '{mode}', valid values are: {{'always', 'training'}}"
        )
    if not 0.0 <= float(p) <= 1.0:
        raise MXNetError(f"mx.nd.Dropout: p={p} must be in [0, 1]")
    if out is not None:
        raise NotImplementedError("mx.nd.Dropout: out= is not supported (docs/migration-mxnet.md)")
    active = (mode == "always" or _STATE.training) and float(p) > 0.0
    if not active:
        r, rec = _record([data], lambda x: _call("MulScalar", x, val=1.0))
        if rec and r.creator is not None:
            _ag.MX_OPS[r.creator] = "Dropout"
        return NDArray(r._data, data._ctx, r if rec else None)
    ax = (axes,) if isinstance(axes, int) else tuple(axes)
    mshape = tuple(1 if i in {a % data.ndim for a in ax} else s for i, s in enumerate(data.shape))
    keep = gradhub.random.generator().random(mshape) >= float(p)
    scale = 0.0 if float(p) >= 1.0 else 1.0 / (1.0 - float(p))
    mask = np.broadcast_to((keep * scale).astype(data._arr.dtype), data.shape)
    xp = data._ctx.device().xp
    m = NativeVariable.leaf(xp.asarray(np.ascontiguousarray(mask)), False)
    r, rec = _record([data], lambda x: x * m)
    if rec and r.creator is not None:
        _ag.MX_OPS[r.creator] = "Dropout"
    return NDArray(r._data, data._ctx, r if rec else None)


def split(
    data: NDArray,
    num_outputs: int,
    axis: int = 1,
    squeeze_axis: bool = False,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> Any:
    """mxnet's ``mx.nd.split`` (``SliceChannel``): ``num_outputs`` equal parts along ``axis``
    (a list of NDArrays, one NDArray when ``num_outputs`` is 1); ``squeeze_axis`` drops the axis
    (its parts must have size 1). Recorded by ``mx.autograd``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> [p.shape for p in mx.nd.split(mx.nd.ones((2, 6)), num_outputs=3)]
        [(2, 2), (2, 2), (2, 2)]
    """
    if not isinstance(data, NDArray):
        raise TypeError(f"mx.nd.split: data must be an NDArray, got {type(data).__name__}")
    if "indices" in kwargs:
        raise MXNetError("mx.nd.split: Cannot find argument 'indices' (mxnet 1.9.1's split)")
    if out is not None:
        raise NotImplementedError("mx.nd.split: out= is not supported (docs/migration-mxnet.md)")
    n = int(num_outputs)
    if not -data.ndim <= axis < data.ndim:
        raise MXNetError(f"mx.nd.split: axis {axis} is out of range for data of shape {data.shape}")
    ax = axis % data.ndim
    size = data.shape[ax]
    if n < 1 or size % n:
        raise MXNetError(
            f"mx.nd.split: You are trying to split the {ax}-th axis of input tensor with shape "
            f"{list(data.shape)} into num_outputs={n} evenly sized chunks, but this is not "
            f"possible because {n} does not evenly divide {size}"
        )
    step = size // n
    if squeeze_axis and step != 1:
        raise MXNetError(
            f"mx.nd.split: squeeze_axis=True needs parts of size 1 along axis {ax}, got {step}"
        )
    parts = []
    for i in range(n):
        start = tuple(i * step if d == ax else 0 for d in range(data.ndim))
        stop = tuple((i + 1) * step if d == ax else s for d, s in enumerate(data.shape))
        shape = tuple(s for d, s in enumerate(data.shape) if not (squeeze_axis and d == ax))

        def part(
            x: NativeVariable, start: Any = start, stop: Any = stop, shape: Any = shape
        ) -> Any:
            y = _call("Slice", x, start=start, stop=stop, step=(1,) * x.ndim)
            return _call("Reshape", y, shape=shape) if squeeze_axis else y

        r, rec = _record([data], part)
        parts.append(_fresh(NDArray(r._data, data._ctx, r if rec else None), data))
    return parts[0] if n == 1 else parts


def __getattr__(name: str) -> Any:
    """``mx.nd.random``: the module :mod:`gradhub_compat.mxnet.random` (imported on first use,
    as it imports this module); ``mx.nd.uniform``/``normal`` and mxnet 1.x's older names
    ``mx.nd.random_uniform``/``random_normal`` are its functions (as mxnet)."""
    if name in ("random", "uniform", "normal", "random_uniform", "random_normal"):
        from . import random

        return random if name == "random" else getattr(random, name.replace("random_", ""))
    if name == "reverse":  # (mx.nd.flip; not a module global: functions here take reverse=)
        from ._nd_tensor import reverse

        return reverse
    raise AttributeError(
        f"module {__name__!r} has no attribute {name!r} (mx.nd.{name} is not part of "
        "gradhub_compat.mxnet; docs/migration-mxnet.md lists the NDArray functions)"
    )


from ._nd_array_more import (  # noqa: E402, F401
    add,
    batch_take,
    broadcast_hypot,
    broadcast_mod,
    choose_element_0index,
    col2im,
    concatenate,
    cumsum,
    depth_to_space,
    diag,
    divide,
    equal,
    eye,
    fill_element_0index,
    from_dlpack,
    from_numpy,
    gather_nd,
    greater,
    greater_equal,
    histogram,
    im2col,
    khatri_rao,
    lesser,
    lesser_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    max_axis,
    min_axis,
    modulo,
    moments,
    moveaxis,
    multiply,
    not_equal,
    onehot_encode,
    ravel_multi_index,
    scatter_nd,
    shuffle,
    softmax_cross_entropy,
    softmin,
    space_to_depth,
    split_v2,
    subtract,
    to_dlpack_for_read,
    to_dlpack_for_write,
    true_divide,
    unravel_index,
)
from ._nd_layers import (  # noqa: E402, F401
    Activation,
    BatchNorm,
    Convolution,
    Deconvolution,
    Embedding,
    Flatten,
    GroupNorm,
    InstanceNorm,
    LayerNorm,
    LeakyReLU,
    Pad,
    Pooling,
    flatten,
    pad,
)
from ._nd_legacy import (  # noqa: E402, F401
    LRN,
    BatchNorm_v1,
    BilinearSampler,
    BlockGrad,
    Cast,
    Concat,
    Convolution_v1,
    Correlation,
    Crop,
    GridGenerator,
    IdentityAttachKLSparseReg,
    LinearRegressionOutput,
    LogisticRegressionOutput,
    MAERegressionOutput,
    MakeLoss,
    Pooling_v1,
    Reshape,
    ROIPooling,
    SliceChannel,
    Softmax,
    SoftmaxActivation,
    SoftmaxOutput,
    SpatialTransformer,
    SVMOutput,
    SwapAxis,
    UpSampling,
    crop,
    identity,
    make_loss,
    stop_gradient,
)
from ._nd_linalg import (  # noqa: E402, F401
    linalg,
    linalg_det,
    linalg_extractdiag,
    linalg_extracttrian,
    linalg_gelqf,
    linalg_gemm,
    linalg_inverse,
    linalg_makediag,
    linalg_maketrian,
    linalg_potrf,
    linalg_potri,
    linalg_slogdet,
    linalg_sumlogdiag,
    linalg_syrk,
    linalg_trmm,
    linalg_trsm,
)
from ._nd_losses import (  # noqa: E402, F401
    CTCLoss,
    broadcast_add,
    broadcast_div,
    broadcast_maximum,
    broadcast_minimum,
    broadcast_minus,
    broadcast_mul,
    broadcast_plus,
    broadcast_sub,
    contrib,
    ctc_loss,
    log_softmax,
    norm,
    pick,
    softmax,
    where,
)
from ._nd_random_more import (  # noqa: E402, F401
    random_exponential,
    random_gamma,
    random_generalized_negative_binomial,
    random_negative_binomial,
    random_pdf_dirichlet,
    random_pdf_exponential,
    random_pdf_gamma,
    random_pdf_generalized_negative_binomial,
    random_pdf_negative_binomial,
    random_pdf_normal,
    random_pdf_poisson,
    random_pdf_uniform,
    random_poisson,
    random_randint,
    sample_exponential,
    sample_gamma,
    sample_generalized_negative_binomial,
    sample_negative_binomial,
    sample_normal,
    sample_poisson,
    sample_uniform,
)
from ._nd_rnn import RNN, SequenceLast, SequenceReverse  # noqa: E402, F401
from ._nd_sample import sample_multinomial  # noqa: E402, F401
from ._nd_tensor import (  # noqa: E402, F401
    ElementWiseSum,
    L2Normalization,
    SequenceMask,
    add_n,
    arange,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctanh,
    argmax,
    argmax_channel,
    argmin,
    argsort,
    batch_dot,
    broadcast_axes,
    broadcast_axis,
    broadcast_equal,
    broadcast_greater,
    broadcast_greater_equal,
    broadcast_lesser,
    broadcast_lesser_equal,
    broadcast_like,
    broadcast_logical_and,
    broadcast_logical_or,
    broadcast_logical_xor,
    broadcast_not_equal,
    broadcast_power,
    broadcast_to,
    cast,
    cbrt,
    ceil,
    clip,
    concat,
    cosh,
    degrees,
    erf,
    erfinv,
    expand_dims,
    expm1,
    fix,
    flip,
    floor,
    gamma,
    gammaln,
    hard_sigmoid,
    linalg_gemm2,
    linspace,
    log1p,
    log2,
    log10,
    max,
    maximum,
    min,
    minimum,
    nanprod,
    nansum,
    negative,
    one_hot,
    power,
    prod,
    radians,
    rcbrt,
    reciprocal,
    repeat,
    reshape,
    reshape_like,
    rint,
    round,
    rsqrt,
    shape_array,
    sign,
    sinh,
    size_array,
    slice,
    slice_axis,
    slice_like,
    smooth_l1,
    softsign,
    sort,
    squeeze,
    stack,
    sum_axis,
    swapaxes,
    take,
    tan,
    tile,
    topk,
    transpose,
    trunc,
)
from ._nd_updates import (  # noqa: E402, F401
    adam_update,
    all_finite,
    ftml_update,
    ftrl_update,
    lamb_update_phase1,
    lamb_update_phase2,
    mp_lamb_update_phase1,
    mp_lamb_update_phase2,
    mp_nag_mom_update,
    mp_sgd_mom_update,
    mp_sgd_update,
    multi_all_finite,
    multi_lars,
    multi_mp_sgd_mom_update,
    multi_mp_sgd_update,
    multi_sgd_mom_update,
    multi_sgd_update,
    multi_sum_sq,
    nag_mom_update,
    preloaded_multi_mp_sgd_mom_update,
    preloaded_multi_mp_sgd_update,
    preloaded_multi_sgd_mom_update,
    preloaded_multi_sgd_update,
    reset_arrays,
    rmsprop_update,
    rmspropalex_update,
    sgd_mom_update,
    sgd_update,
    signsgd_update,
    signum_update,
)
from .ndarray_io import load, load_frombuffer, save  # noqa: E402, F401
