"""Reuse of large CPU output arrays: :func:`output_array`.

A training step allocates the same output shapes every time. glibc returns freed multi-megabyte
arrays to the system (``mmap`` above its threshold, heap trimming below), so every fresh array
costs a minor page fault per 4 KiB page on every step: about 1,500 faults per step of the seed
CNN here, several milliseconds. Kernels that return a large array can ask :func:`output_array`
for it instead of ``xp.empty``. On the CPU it keeps the arrays it handed out in per-thread lists
keyed by shape and dtype, and hands one out again only when the list holds the **only**
reference to it (``sys.getrefcount``): no Variable, graph node, user variable or view (a view
refers to its ``base``) can see it any more, so reusing it is as safe as a new allocation. An
array whose last user changed it in place before dropping it (its ``shape``, ``dtype`` or
writeable flag) is dropped from the list instead of handed out.

The lists hold strong references, which their users can notice: a weak reference or
``weakref.finalize`` of a dropped output array stays alive (and may see the array reused), and
``ndarray.resize`` refuses the array while it is kept. ``GRADHUB_REUSE_ARRAYS=0`` (or
:func:`set_reuse`) turns reuse off for programs that rely on either.

Bounds: arrays below :data:`MIN_BYTES` are never kept (small allocations are cheap), at most
:data:`PER_KEY` per shape and dtype, at most :data:`MAX_BYTES` per thread. Of the kept arrays of
one shape and dtype that nothing uses, a request hands out one, keeps :data:`IDLE_PER_KEY` more
and gives the others back (so the memory held idle stays bounded: the activations a backward
pass frees one by one do not all stay allocated); :func:`release` drops this thread's. The
defaults remove every page fault of a step of the seed CNN's gradient penalty (about 2,000) and
cost a 16-layer 1024-wide MLP about 4 MB of peak memory (74.0 against 69.7 MB).

The "only reference" test compares ``sys.getrefcount`` with a calibration taken through the same
code path, so a change in how the interpreter counts its own temporaries (Python 3.14 borrows
stack references) moves both sides alike. Reuse is off where reference counts are not meaningful
(no ``sys.getrefcount``, or a free-threaded interpreter) and when the environment variable
``GRADHUB_REUSE_ARRAYS`` is ``0`` (read on first use); :func:`set_reuse` switches it at run time.
Other devices get ``xp.empty``.

Example::

    >>> import numpy as np
    >>> from gradhub import memory
    >>> a = memory.output_array(np, (256, 1024), np.float32)
    >>> a_id = id(a)
    >>> del a                                   # nothing refers to it any more
    >>> b = memory.output_array(np, (256, 1024), np.float32)
    >>> id(b) == a_id or not memory.reuse_enabled()
    True
"""

from __future__ import annotations

import math
import os
import sys
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

#: ``sys.getrefcount`` (absent on some interpreters: reuse is then off, see _refcounts_meaningful)
_getrefcount = getattr(sys, "getrefcount", len)

#: arrays smaller than this (bytes) are always new
MIN_BYTES = 1 << 16
#: at most this many kept arrays per (shape, dtype) and thread
PER_KEY = 8
#: at most this many bytes of kept arrays per thread
MAX_BYTES = 1 << 26
#: idle arrays of one key kept when a request finds more (besides the one it hands out)
IDLE_PER_KEY = 4

_local = threading.local()
#: the reference count of an array held only by a pool list; 0: reuse off; None: not yet known
_free_refs: int | None = None


def _refcount(lst: list[Any], i: int) -> int:
    return _getrefcount(lst[i])  # the expression output_array evaluates


def _calibrate() -> int:
    if not _refcounts_meaningful():
        return 0
    return _refcount([np.empty(1)], 0)  # measured the way output_array measures


def reuse_enabled() -> bool:
    """Whether :func:`output_array` reuses arrays in this process."""
    global _free_refs
    if _free_refs is None:
        off = os.environ.get("GRADHUB_REUSE_ARRAYS", "").strip() == "0"
        _free_refs = 0 if off else _calibrate()
    return bool(_free_refs)


def set_reuse(enabled: bool) -> None:
    """Switch array reuse on or off for the whole process, whatever ``GRADHUB_REUSE_ARRAYS``
    said (off also releases this thread's kept arrays)."""
    global _free_refs
    _free_refs = _calibrate() if enabled else 0
    if not enabled:
        release()


def release() -> None:
    """Drop this thread's kept arrays (those still in use elsewhere stay alive there)."""
    _local.pools = {}
    _local.kept_bytes = 0


def output_array(xp: Any, shape: Sequence[int], dtype: Any) -> Any:
    """An uninitialized array of ``shape`` and ``dtype``: ``xp.empty``, or on the CPU a kept
    array that nothing refers to any more.

    Only for arrays that become (part of) a kernel's result: the caller must not keep a second
    reference to it beyond that result, and must write every element.
    """
    if type(shape) is not tuple:
        shape = tuple(shape)
    if not isinstance(dtype, np.dtype):
        dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    free = _free_refs
    if free is None:
        reuse_enabled()
        free = _free_refs
    if xp is not np or nbytes < MIN_BYTES or not free:
        return xp.empty(shape, dtype=dtype)
    try:
        pools: dict[tuple[tuple[int, ...], np.dtype[Any]], list[Any]] = _local.pools
    except AttributeError:
        release()
        pools = _local.pools
    key = (shape, dtype)
    lst = pools.get(key)
    if lst is None:
        lst = pools[key] = []
    # with too few kept arrays of this key for any to be given back, the first one nothing uses
    # is taken at once; otherwise the scan goes on and gives back the idle ones beyond a few
    n = len(lst)
    trim = n > IDLE_PER_KEY + 1
    found = None
    spare = IDLE_PER_KEY
    i = 0
    while i < n:
        if _getrefcount(lst[i]) == free:  # (measured as _calibrate measures)
            if found is None:
                found = lst[i]
                if not _intact(found, shape, dtype):
                    # its owner reshaped, retyped or froze it in place before dropping it: it
                    # no longer fits this key (numpy would broadcast or cast into it); forget it
                    found = None
                    _local.kept_bytes -= nbytes
                    del lst[i]
                    n -= 1
                    continue
                if not trim:
                    return found
            elif spare:  # keep a few idle arrays of this key for the next requests
                spare -= 1
            else:  # more idle arrays than that: give the memory back
                _local.kept_bytes -= nbytes
                del lst[i]
                n -= 1
                continue
        i += 1
    if found is not None:
        return found
    out = np.empty(shape, dtype=dtype)
    if len(lst) < PER_KEY and _local.kept_bytes + nbytes <= MAX_BYTES:
        lst.append(out)
        _local.kept_bytes += nbytes
    return out


def _intact(a: np.ndarray, shape: tuple[int, ...], dtype: np.dtype[Any]) -> bool:
    """Whether the kept array ``a`` is still what :func:`output_array` handed out: ``shape``,
    ``dtype``, writeable, C-contiguous and owning its memory. Its last user may have changed the
    array object in place (``a.shape = ...``, ``a.dtype = ...``, ``a.flags.writeable = False``)
    before dropping it; the list's key does not see that."""
    if a.shape != shape or a.dtype != dtype:
        return False
    flags = a.flags
    return bool(flags.writeable and flags.c_contiguous and flags.owndata)


def sole_owner(arr: Any) -> bool:
    """Whether ``arr`` owns its memory alone: it is not a view, or it is a view (say, the
    transposed result of a matrix product) of an array that nothing but ``arr`` refers to.
    Without meaningful reference counts only non-views count (a copy is then made needlessly,
    never wrongly)."""
    global _sole_refs
    base = getattr(arr, "base", None)
    if base is None:
        return True
    if getattr(base, "base", None) is not None:
        return False
    del base  # not counted below
    if _sole_refs is None:  # measured the way it is used below; 0: counts are not meaningful
        _sole_refs = _base_refs(np.empty((2, 2)).T) if _refcounts_meaningful() else 0
    return bool(_sole_refs) and _base_refs(arr) == _sole_refs


_sole_refs: int | None = None


def _base_refs(view: Any) -> int:
    base = view.base
    return sys.getrefcount(base)


def _refcounts_meaningful() -> bool:
    return hasattr(sys, "getrefcount") and getattr(sys, "_is_gil_enabled", lambda: True)()


def kept_bytes() -> int:
    """Bytes of arrays this thread keeps for reuse (in use or not)."""
    return int(getattr(_local, "kept_bytes", 0))


def binary(ufunc: Any, a: Any, b: Any) -> Any:
    """``ufunc(a, b)`` into an :func:`output_array` when ``a`` and ``b`` are numpy arrays of one
    shape and dtype (the large products and sums of a training step), else plainly."""
    if (
        type(a) is np.ndarray
        and type(b) is np.ndarray
        and a.shape == b.shape
        and a.dtype == b.dtype
    ):
        return ufunc(a, b, out=output_array(np, a.shape, a.dtype))
    return ufunc(a, b)
