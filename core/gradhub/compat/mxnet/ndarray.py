"""mxnet's NDArray: ``mx.nd.array``, ``mx.nd.ones``, ``mx.nd.zeros``, ``mx.nd.full``.

An NDArray holds an array of a gradhub device (numpy on the CPU). As in mxnet, ``mx.nd.array``
makes float32 arrays unless the source is an NDArray, indexing and ``x[:] = value`` work in place,
``asnumpy()`` and ``copy()`` copy.

Example::

    >>> import gradhub.compat.mxnet as mx
    >>> a = mx.nd.array([1, 2, 3])
    >>> a[:] = 5
    >>> (a * 2).asnumpy()
    array([10., 10., 10.], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .context import Context, current_context

_DEFAULT_DTYPE = np.float32


def _ctx(ctx: Any) -> Context:
    if ctx is None:
        return current_context()
    if not isinstance(ctx, Context):
        raise TypeError(f"mxnet: ctx must be a Context such as mx.cpu(), got {type(ctx).__name__}")
    return ctx


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


class NDArray:
    """An n-dimensional array on a context (``.context``), mxnet style."""

    __slots__ = ("_arr", "_ctx")

    def __init__(self, arr: Any, ctx: Context | None = None) -> None:
        self._arr = arr
        self._ctx = ctx or Context("cpu", 0)

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
        return NDArray(self._arr.T.copy(), self._ctx)

    # -- conversion ------------------------------------------------------------------------------
    def asnumpy(self) -> np.ndarray:
        """A numpy copy of the data."""
        return np.array(self._ctx.device().to_numpy(self._arr), copy=True)

    def asscalar(self) -> Any:
        """The single element as a numpy scalar."""
        if self.size != 1:
            raise ValueError(f"NDArray.asscalar: the array has {self.size} elements, not 1")
        return self.asnumpy().reshape(()).item()

    def copy(self) -> NDArray:
        """A copy on the same context."""
        return NDArray(self._arr.copy(), self._ctx)

    def copyto(self, other: NDArray | Context) -> NDArray:
        """Copy into the NDArray ``other`` (in place) or onto the context ``other``."""
        if isinstance(other, NDArray):
            if other.shape != self.shape:
                raise ValueError(
                    f"NDArray.copyto: shapes differ: {self.shape} into {other.shape}"
                )
            other._arr[...] = other._ctx.device().asarray(self.asnumpy())
            return other
        dev = _ctx(other).device()
        return NDArray(dev.asarray(self.asnumpy()), other)

    as_in_context = copyto

    def astype(self, dtype: Any) -> NDArray:
        """A copy converted to ``dtype``."""
        return NDArray(self._arr.astype(dtype), self._ctx)

    def reshape(self, *shape: Any) -> NDArray:
        """The same data with another shape (a view)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return NDArray(self._arr.reshape(tuple(int(s) for s in shape)), self._ctx)

    def wait_to_read(self) -> None:
        """Accepted for mxnet compatibility: gradhub computes synchronously."""

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = self.asnumpy()
        return arr if dtype is None else arr.astype(dtype)

    # -- indexing --------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._arr)

    def __getitem__(self, key: Any) -> NDArray:
        return NDArray(self._arr[key], self._ctx)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._arr[key] = self._value(value)

    def _value(self, value: Any) -> Any:
        if isinstance(value, NDArray):
            return self._ctx.device().asarray(value.asnumpy())
        if isinstance(value, (bool, int, float, np.number)):
            return value
        return self._ctx.device().asarray(np.asarray(value))

    # -- arithmetic ------------------------------------------------------------------------------
    def _binary(self, other: Any, op: Callable[[Any, Any], Any]) -> NDArray:
        res = op(self._arr, self._value(other))
        if type(res) is not type(self._arr):
            res = self._ctx.device().asarray(res)
        if res.dtype != self._arr.dtype and res.dtype.kind == "f":
            res = res.astype(self._arr.dtype)
        return NDArray(res, self._ctx)

    def __add__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: a + b)

    def __radd__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: b + a)

    def __sub__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: a - b)

    def __rsub__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: b - a)

    def __mul__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: a * b)

    def __rmul__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: b * a)

    def __truediv__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: a / b)

    def __rtruediv__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: b / a)

    def __pow__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: a**b)

    def __rpow__(self, o: Any) -> NDArray:
        return self._binary(o, lambda a, b: b**a)

    def __neg__(self) -> NDArray:
        return NDArray(-self._arr, self._ctx)

    def __iadd__(self, o: Any) -> NDArray:
        self._arr += self._value(o)
        return self

    def __isub__(self, o: Any) -> NDArray:
        self._arr -= self._value(o)
        return self

    def __imul__(self, o: Any) -> NDArray:
        self._arr *= self._value(o)
        return self

    def __itruediv__(self, o: Any) -> NDArray:
        self._arr /= self._value(o)
        return self

    def __repr__(self) -> str:
        shape = "x".join(str(s) for s in self.shape)
        return f"\n{self.asnumpy()}\n<NDArray {shape} @{self._ctx}>"


def _make(data: Any, ctx: Any, dtype: Any) -> NDArray:
    c = _ctx(ctx)
    return NDArray(c.device().asarray(np.asarray(data, dtype=dtype)), c)


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An NDArray holding a copy of ``source_array``.

    ``dtype`` defaults to the source's dtype for an NDArray and to float32 otherwise (as mxnet).
    """
    if isinstance(source_array, NDArray):
        data = source_array.asnumpy()
        dtype = dtype or data.dtype
    else:
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

