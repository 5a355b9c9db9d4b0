"""The default floating-point dtype: :func:`set_default_dtype`, :func:`default_dtype`,
:func:`get_default_dtype`.

The dtype gradhub gives floating-point data that it creates from Python numbers and lists
(``gh.Variable([1.0, 2.0])``, ``gh.Variable(0.5)``) and that gradhub-nn-ops' initializers
create. float32 by default, as PyTorch and nnabla; numpy arrays keep their own dtype.

Threads: :func:`set_default_dtype` sets the process-wide default (as
``torch.set_default_dtype``), seen by every thread that is not inside a :func:`default_dtype`
block; :func:`default_dtype` changes it for the current thread only, for the duration of the
block (thread-local, as :func:`gradhub.no_grad`), so a thread computing in float64 does not
change what another thread creates. Reading the default is one attribute read of a
thread-local object (its class attribute holds the process-wide value).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

_FLOATS = ("float16", "float32", "float64")


class _Default(threading.local):
    #: the class attribute is the process-wide default; an instance attribute (set by
    #: ``default_dtype`` in one thread) overrides it in that thread
    float: np.dtype[Any] = np.dtype(np.float32)


DEFAULT = _Default()


def _floating(who: str, dtype: Any) -> np.dtype[Any]:
    try:  # (np.dtype(None) would be float64)
        dt = None if dtype is None else np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.name not in _FLOATS:
        raise TypeError(
            f"{who}: dtype must be one of {', '.join(_FLOATS)} (a name or numpy dtype), "
            f"got {dtype!r}"
        )
    return dt


def get_default_dtype() -> np.dtype[Any]:
    """The current default floating-point dtype (``dtype('float32')`` unless changed).

    Example::

        >>> import gradhub as gh
        >>> gh.get_default_dtype()
        dtype('float32')
    """
    return DEFAULT.float


def set_default_dtype(dtype: Any) -> None:
    """Set the process-wide default floating-point dtype (``"float16"``, ``"float32"``,
    ``"float64"`` or the numpy dtype) of data created from Python numbers and lists and by
    initializers.

    Example::

        >>> import gradhub as gh
        >>> gh.set_default_dtype("float64")
        >>> gh.Variable([1.0, 2.0]).dtype
        dtype('float64')
        >>> gh.set_default_dtype("float32")
    """
    _Default.float = _floating("set_default_dtype", dtype)


@contextmanager
def default_dtype(dtype: Any) -> Iterator[None]:
    """Use ``dtype`` as the default floating-point dtype inside the block, in this thread only.

    Example::

        >>> import gradhub as gh
        >>> with gh.default_dtype("float64"):
        ...     gh.Variable(0.1).dtype
        dtype('float64')
        >>> gh.Variable(0.1).dtype
        dtype('float32')
    """
    dt = _floating("default_dtype", dtype)
    had = "float" in DEFAULT.__dict__
    prev = DEFAULT.__dict__.get("float")
    DEFAULT.float = dt
    try:
        yield
    finally:
        if had:
            DEFAULT.float = prev  # type: ignore[assignment]
        else:
            del DEFAULT.float


__all__ = ["default_dtype", "get_default_dtype", "set_default_dtype"]
