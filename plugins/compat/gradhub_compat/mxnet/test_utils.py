"""mxnet's ``mx.test_utils`` comparison helpers, as mxnet 1.9.1 defines them.

``assert_almost_equal(a, b)`` passes where ``|a - b| <= atol + rtol * |b|`` elementwise
(numpy's ``allclose``); without ``rtol``/``atol`` the tolerances are the larger of the two
operands' dtype defaults (float16: rtol 1e-2, atol 1e-1; float32: 1e-4, 1e-3; float64: 1e-5,
1e-20; integers and bool: 0), as mxnet's. NDArrays are compared through ``asnumpy()``. A failure
raises ``AssertionError`` with mxnet's message (``Error 2.000000 exceeds tolerance rtol=...``).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> mx.test_utils.assert_almost_equal(mx.nd.array([1.0, 2.0]), [1.00001, 2.0])
    >>> mx.test_utils.same(mx.nd.ones((2,)).asnumpy(), [1.0, 1.0])
    True
"""

from __future__ import annotations

import contextlib
import numbers
import os
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

import gradhub_compat.mxnet as mx  # noqa: F401  (exported by ``import *``, as mxnet's)

from .context import Context, cpu
from .ndarray import NDArray, array

# No ``__all__``: as mxnet's module, ``from mxnet.test_utils import *`` also gives ``np``, ``mx``
# and ``NDArray``.

_INT_KINDS = (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64)


def default_context() -> Context:
    """The context tests run on: ``mx.cpu()``."""
    return cpu()


def default_dtype() -> type:
    """``numpy.float32``, mxnet's default dtype."""
    return np.float32


def default_rtols() -> dict[np.dtype, float]:
    """mxnet 1.9.1's relative tolerances per dtype (float16 1e-2, float32 1e-4, float64 1e-5)."""
    tols: dict[np.dtype, float] = {
        np.dtype(np.float16): 1e-2,
        np.dtype(np.float32): 1e-4,
        np.dtype(np.float64): 1e-5,
    }
    tols.update({np.dtype(t): 0.0 for t in _INT_KINDS})
    return tols


def default_atols() -> dict[np.dtype, float]:
    """mxnet 1.9.1's absolute tolerances per dtype (float16 1e-1, float32 1e-3, float64 1e-20)."""
    tols: dict[np.dtype, float] = {
        np.dtype(np.float16): 1e-1,
        np.dtype(np.float32): 1e-3,
        np.dtype(np.float64): 1e-20,
    }
    tols.update({np.dtype(t): 0.0 for t in _INT_KINDS})
    return tols


def get_atol(atol: float | None = None, dtype: Any = np.float64) -> float:
    """``atol``, or the default absolute tolerance of ``dtype`` (float64: 1e-20)."""
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_rtol(rtol: float | None = None, dtype: Any = np.float64) -> float:
    """``rtol``, or the default relative tolerance of ``dtype`` (float64: 1e-5)."""
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def _np(x: Any) -> np.ndarray:
    return x.asnumpy() if isinstance(x, NDArray) else np.asarray(x)


def _tol(x: np.ndarray, tol: Any, defaults: dict[np.dtype, float]) -> float:
    if isinstance(tol, numbers.Number):
        return float(tol)  # type: ignore[arg-type]
    if isinstance(tol, dict) and x.dtype in tol:
        return float(tol[x.dtype])
    return defaults.get(x.dtype, 0.0)


def same(a: Any, b: Any) -> bool:
    """Whether two arrays have the same shape and elements (``numpy.array_equal``)."""
    return bool(np.array_equal(_np(a), _np(b)))


def almost_equal(
    a: Any,
    b: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    use_broadcast: bool = True,
) -> bool:
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere (defaults: float64's tolerances)."""
    x, y = _np(a), _np(b)
    if not use_broadcast and x.shape != y.shape:
        return False
    return bool(np.allclose(x, y, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan))


def assert_almost_equal(
    a: Any,
    b: Any,
    rtol: Any = None,
    atol: Any = None,
    names: tuple[str, str] = ("a", "b"),
    equal_nan: bool = False,
    use_broadcast: bool = True,
    mismatches: tuple[int, int] = (10, 10),
) -> None:
    """Raise ``AssertionError`` unless ``|a - b| <= atol + rtol * |b|`` elementwise, the
    tolerances defaulting to the larger of the operands' dtype defaults (mxnet 1.9.1)."""
    x, y = _np(a), _np(b)
    if not use_broadcast and x.shape != y.shape:
        raise AssertionError(
            f"assert_almost_equal: {names[0]}.shape = {x.shape} and {names[1]}.shape = "
            f"{y.shape} are not equal"
        )
    r = max(_tol(x, rtol, default_rtols()), _tol(y, rtol, default_rtols()))
    t = max(_tol(x, atol, default_atols()), _tol(y, atol, default_atols()))
    if x.dtype == np.bool_ and y.dtype == np.bool_:
        np.testing.assert_equal(x, y)
        return
    try:
        if np.allclose(x, y, rtol=r, atol=t, equal_nan=equal_nan):
            return
    except ValueError as e:  # shapes that do not broadcast
        raise AssertionError(f"assert_almost_equal: {names[0]} and {names[1]}: {e}") from None
    xb, yb = np.broadcast_arrays(x.astype(np.float64), y.astype(np.float64))
    absdiff = np.where(np.equal(xb, yb), 0.0, np.abs(xb - yb))
    violation = absdiff / (t + r * np.abs(yb) + 1e-20)
    violation = np.where(np.isnan(violation), np.inf, violation)
    idx = (
        tuple(int(i) for i in np.unravel_index(int(np.argmax(violation)), violation.shape))
        if violation.ndim
        else ()
    )
    bad = int(np.count_nonzero(~np.isclose(xb, yb, rtol=r, atol=t, equal_nan=equal_nan)))
    raise AssertionError(
        f"Error {float(np.max(violation)):f} exceeds tolerance rtol={r:e}, atol={t:e} "
        f"(mismatch {100.0 * bad / max(xb.size, 1):f}%).\n"
        f"Location of maximum error: {idx}, {names[0]}={float(xb[idx]):.8f}, "
        f"{names[1]}={float(yb[idx]):.8f}"
    )


def assert_allclose(
    a: Any, b: Any, rtol: float = 1e-07, atol: float = 0, equal_nan: bool = True
) -> None:
    """``assert_almost_equal`` with numpy's ``assert_allclose`` defaults."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_exception(
    f: Any, exception_type: type[BaseException], *args: Any, **kwargs: Any
) -> None:
    """Raise ``AssertionError`` unless ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"assert_exception: {f!r} did not raise {exception_type.__name__}")


@contextlib.contextmanager
def discard_stderr() -> Iterator[None]:
    """Discard what is written to the standard error stream (file descriptor 2) inside the
    ``with`` block."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        yield
        return
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as sink:
            os.dup2(sink.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def rand_shape_2d(dim0: int = 10, dim1: int = 10, allow_zero_size: bool = False) -> tuple[int, int]:
    """A random 2-D shape with sizes in ``[1, dim]`` (``[0, dim]`` with ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return int(np.random.randint(low, dim0 + 1)), int(np.random.randint(low, dim1 + 1))


def rand_shape_3d(
    dim0: int = 10, dim1: int = 10, dim2: int = 10, allow_zero_size: bool = False
) -> tuple[int, int, int]:
    """A random 3-D shape with sizes in ``[1, dim]``."""
    low = 0 if allow_zero_size else 1
    return tuple(int(np.random.randint(low, d + 1)) for d in (dim0, dim1, dim2))  # type: ignore[return-value]


def rand_shape_nd(num_dim: int, dim: int = 10, allow_zero_size: bool = False) -> tuple[int, ...]:
    """A random ``num_dim``-D shape with sizes in ``[1, dim]``."""
    low = 0 if allow_zero_size else 1
    return tuple(int(s) for s in np.random.randint(low, dim + 1, size=num_dim))


def rand_ndarray(
    shape: Any,
    stype: str = "default",
    density: Any = None,
    dtype: Any = None,
    modifier_func: Any = None,
    shuffle_csr_indices: bool = False,
    distribution: Any = None,
    ctx: Any = None,
) -> NDArray:
    """A dense NDArray of ``shape`` with uniform draws from [-1, 1) (numpy's global generator,
    as mxnet's ``rand_ndarray``); sparse ``stype`` raises NotImplementedError."""
    if stype != "default":
        raise NotImplementedError(
            f"mx.test_utils.rand_ndarray: stype={stype!r}: sparse storage is not supported by "
            "gradhub_compat.mxnet (docs/migration-mxnet.md)"
        )
    dt = np.dtype(np.float32 if dtype is None else dtype)
    data = np.random.uniform(-1, 1, size=shape)
    if modifier_func is not None:
        data = modifier_func(data)
    return array(data, ctx=ctx, dtype=dt)


def _unsupported(fn: str) -> Any:
    def function(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"mx.test_utils.{fn} is not provided by gradhub_compat.mxnet "
            "(docs/migration-mxnet.md); compare with assert_almost_equal, or check gradients "
            "with gradhub.testing"
        )

    function.__name__ = function.__qualname__ = fn
    function.__doc__ = f"mxnet's ``{fn}``: not provided; raises NotImplementedError."
    return function


check_numeric_gradient = _unsupported("check_numeric_gradient")
check_symbolic_forward = _unsupported("check_symbolic_forward")
check_symbolic_backward = _unsupported("check_symbolic_backward")
check_consistency = _unsupported("check_consistency")
check_speed = _unsupported("check_speed")
