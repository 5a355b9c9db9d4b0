"""gradhub-nn-ops: pooling (nnabla semantics), vectorized over kernel offsets.

The kernel covers the last ``len(kernel)`` axes of ``x`` (the ones before the last axis when
``channel_last``). Window ``o`` along an axis starts at ``o * stride - pad`` and ends at
``min(start + kernel, size + pad)``; only its part inside the input is pooled. Output size::

    ignore_border=True:  (size + 2 * pad - kernel) // stride + 1
    ignore_border=False: (size + pad - 1) // stride + 1          (nnabla's formula)

Every kernel works on strided views of a padded copy of ``x``, one view per kernel offset, so it
costs ``prod(kernel)`` vectorized array operations and runs on every device.

Max pooling's sub-gradient at ties: the whole gradient of a window goes to its FIRST maximal
element in row-major order of the window (as nnabla). A window holding NaN has the output NaN and
its gradient goes to its first NaN, the element that produced the output (as numpy's ``argmax``;
PyTorch's CPU kernel takes the last NaN). Gradients are routed by multiplying with 0/1 masks, so
a non-finite incoming gradient also turns the other elements of its window into NaN.
Differentiation is closed::

    MaxPooling(x)                 dx  = MaxPoolingBackward(gy, x)
                                  (windows that do not overlap: m = MaxPoolingMask(x, y),
                                   dx = MaskedUnpooling(gy, m), so that higher derivatives reuse m)
    MaskedUnpooling(dy, m)        ddy = MaskedPooling(g, m)         (m: bool, no gradient)
    MaskedPooling(g, m)           dg  = MaskedUnpooling(gy, m)
    MaxPoolingBackward(dy, x)     ddy = MaxPoolingGather(g, x)      (d/dx = 0 almost everywhere)
    MaxPoolingGather(g, x)        dg  = MaxPoolingBackward(gy, x)   (d/dx = 0 almost everywhere)
    AveragePooling(x)             dx  = AveragePoolingBackward(gy)  (and back: linear adjoints)

Device plugins that replace these kernels (gradhub-cuda, which depends on gradhub-nn-ops) read a
call's geometry with the public helpers :class:`PoolGeom`, :func:`pool_geom` and
:func:`disjoint_windows`.
"""

from __future__ import annotations

import functools
import itertools
import math
import sys
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
from gradhub import Sample, Variable, as_variable
from gradhub.memory import output_array
from gradhub.ops import call
from gradhub.ops import kernel as kernel_of
from gradhub.parallel import get_num_threads, parallel_for

from . import native
from .conv import ints
from .math import int_arg, is_int

# -- geometry ----------------------------------------------------------------------------------


class PoolGeom(NamedTuple):  # a NamedTuple: a dataclass costs 0.5 ms of import time
    """Normalized pooling parameters for an input shape."""

    shape: tuple[int, ...]
    axes: tuple[int, ...]
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    pad: tuple[int, ...]
    out: tuple[int, ...]
    right: tuple[int, ...]

    @property
    def out_shape(self) -> tuple[int, ...]:
        s = list(self.shape)
        for a, o in zip(self.axes, self.out):
            s[a] = o
        return tuple(s)

    @property
    def padded_shape(self) -> tuple[int, ...]:
        s = list(self.shape)
        for a, p, r in zip(self.axes, self.pad, self.right):
            s[a] += p + r
        return tuple(s)

    def offsets(self) -> Iterator[tuple[int, ...]]:
        """Kernel offsets in row-major order."""
        return itertools.product(*(range(k) for k in self.kernel))

    def window(self, off: Sequence[int]) -> tuple[slice, ...]:
        """Index of the padded array giving, for every output position, the element at ``off``."""
        idx = [slice(None)] * len(self.shape)
        for a, o, s, n in zip(self.axes, off, self.stride, self.out):
            idx[a] = slice(o, o + s * (n - 1) + 1, s)
        return tuple(idx)

    def interior(self) -> tuple[slice, ...]:
        """Index of the padded array giving back the unpadded input."""
        idx = [slice(None)] * len(self.shape)
        for a, p, n in zip(self.axes, self.pad, (self.shape[a] for a in self.axes)):
            idx[a] = slice(p, p + n)
        return tuple(idx)


def pool_geom(
    fname: str,
    shape: Sequence[int],
    kernel: Any,
    stride: Any,
    ignore_border: bool,
    pad: Any,
    channel_last: bool,
) -> PoolGeom:
    """Validate pooling arguments for an input of ``shape``; raise naming ``fname``."""
    shape = tuple(int(s) for s in shape)
    if kernel is None:
        raise TypeError(f"{fname}(): kernel is required (a tuple with one size per pooled axis)")
    for arg, v in (("kernel", kernel), ("stride", stride), ("pad", pad)):
        _check_integers(fname, arg, v)
    nk = 1 if isinstance(kernel, (int, np.integer)) else len(tuple(kernel))
    k = ints(kernel, nk, 1, fname, "kernel", 1)
    if nk == 0:
        raise ValueError(f"{fname}(): kernel must have at least one entry")
    s = k if stride is None else ints(stride, nk, 1, fname, "stride", 1)
    p = ints(pad, nk, 0, fname, "pad")
    need = nk + (1 if channel_last else 0)
    if len(shape) < need:
        raise ValueError(
            f"{fname}(): x of shape {shape} has fewer axes than the kernel {k}"
            + (" plus the channel axis (channel_last=True)" if channel_last else "")
        )
    first = len(shape) - nk - (1 if channel_last else 0)
    axes = tuple(range(first, first + nk))
    out = []
    right = []
    for i, a in enumerate(axes):
        w = shape[a]
        if p[i] >= k[i]:
            raise ValueError(f"{fname}(): pad {p} must be smaller than kernel {k} on every axis")
        if ignore_border:
            if w + 2 * p[i] < k[i]:
                raise ValueError(
                    f"{fname}(): kernel {k} is larger than the padded input (shape {shape}, pad "
                    f"{p}) with ignore_border=True"
                )
            o = (w + 2 * p[i] - k[i]) // s[i] + 1
        else:
            o = (w + p[i] - 1) // s[i] + 1
        out.append(o)
        right.append(max(0, (o - 1) * s[i] - p[i] + k[i] - w))
    return PoolGeom(shape, axes, k, s, p, tuple(out), tuple(right))


def _check_integers(fname: str, arg: str, v: Any) -> None:
    """Raise a TypeError naming ``fname`` and ``arg`` unless ``v`` is None, an integer or a
    sequence of integers (Python or numpy; bool is not an integer here)."""
    if v is None or is_int(v):
        return
    try:
        vals = list(v)
    except TypeError:
        vals = [v]
    for e in vals:
        if not is_int(e):
            raise TypeError(f"{fname}(): every entry of {arg} must be an integer, got {arg}={v!r}")


def _padded(xp: Any, x: Any, geo: PoolGeom, fill: Any) -> Any:
    if not any(geo.pad) and not any(geo.right):
        return x
    out = xp.full(geo.padded_shape, fill, dtype=x.dtype)
    out[geo.interior()] = x
    return out


def _unpadded(xp: Any, a: Any, geo: PoolGeom) -> Any:
    """The input-shaped part of a padded-shaped array (the array itself without padding)."""
    if not any(geo.pad) and not any(geo.right):
        return a
    return xp.ascontiguousarray(a[geo.interior()])


def _reduce_windows(xp: Any, xpad: Any, geo: PoolGeom, op: Any) -> Any:
    """``op`` (``xp.maximum``, ``xp.add``) folded over the kernel offsets of every window of the
    padded input: an output-shaped new array."""
    y = None
    for off in geo.offsets():
        v = xpad[geo.window(off)]
        if y is None:
            y = v.copy()
        else:
            op(y, v, out=y)
    return y


def _check_pooled(fname: str, name: str, a: Any, of: str, geo: PoolGeom) -> None:
    """Raise unless the array ``a`` (argument ``name``) has the pooled shape of ``of``."""
    if tuple(a.shape) != geo.out_shape:
        raise ValueError(
            f"{fname}(): {name} has shape {tuple(a.shape)}, the pooled output of "
            f"{of} {geo.shape} has shape {geo.out_shape}"
        )


def _lowest(x: Any) -> Any:
    return -np.inf if x.dtype.kind in "fc" else np.iinfo(x.dtype).min


def _first_max_masks(
    xp: Any, x: Any, geo: PoolGeom, y: Any = None
) -> Iterator[tuple[tuple[int, ...], Any]]:
    """For each kernel offset, the output-shaped mask of the windows whose first maximum
    (row-major order in the window) is at that offset. The masks are disjoint. ``y``: the
    windows' maxima if known (more generally, the value whose first occurrence is marked)."""
    xpad = _padded(xp, x, geo, _lowest(x))
    views = [(off, xpad[geo.window(off)]) for off in geo.offsets()]
    if y is None:
        y = views[0][1].copy()
        for _, v in views[1:]:
            xp.maximum(y, v, out=y)
    # a window holding NaN has the maximum NaN, equal to nothing: its first NaN is marked
    ynan = y != y if x.dtype.kind == "f" else None
    if ynan is not None and not ynan.any():
        ynan = None
    taken = None
    last = len(views) - 1
    for j, (off, v) in enumerate(views):
        m = v == y
        if ynan is not None:
            m |= (v != v) & ynan
        if taken is None:
            taken = m.copy() if last else m
        else:
            m &= ~taken
            if j < last:
                taken |= m
        yield off, m


def disjoint_windows(geo: PoolGeom) -> bool:
    """Whether the pooling windows of ``geo`` (:func:`pool_geom`) never overlap (each stride at
    least its kernel size): each input element is then in at most one window."""
    return all(s >= k for s, k in zip(geo.stride, geo.kernel))


def _exact_cover(geo: PoolGeom) -> bool:
    """Whether the windows tile the input exactly (every element in exactly one window)."""
    return (
        all(s == k for s, k in zip(geo.stride, geo.kernel))
        and not any(geo.pad)
        and not any(geo.right)
        and all(o * k == geo.shape[a] for a, o, k in zip(geo.axes, geo.out, geo.kernel))
    )


# -- 2x2 fast path (CPU) -----------------------------------------------------------------------
# The common case: kernel == stride == (2, 2) over the last two axes, windows tiling the input
# exactly, a float32/float64 numpy array. The kernels then work on the window rows of the input
# (``x3 = x.reshape(R, 2, W)``, R = L * H / 2: ``x3[i, r]`` is row ``r`` of the i-th row of
# windows, contiguous along W) with as many operations as possible on whole contiguous arrays:
# numpy's loops over the short rows of a strided view cost several times more per element.
#
# - The maxima: ``h = max(x[:-1], x[1:])`` and ``v = max(h[:-W], h[W:])`` over the flat input
#   (``v`` holds each window's maximum at its top-left element), then one strided copy.
# - The first-maximum mask: ``x3 == y4`` (``y4``: each maximum at the four places of its
#   window, from one pass that writes every value twice and one copy of every row twice),
#   tie-broken with 16-bit operations on the byte pairs of a window row (column 0 wins over
#   column 1) and on whole window rows (row 0 wins over row 1, with a pattern marking the rows 1
#   so that the shifted operation runs over the whole flat mask).
# - Masks are turned into 0/1 floats by one copy before they multiply: numpy's float-times-bool
#   loop casts in small buffers and takes twice as long as a float product.
#
# Calls on inputs of at least _PARALLEL_BYTES (twice that for the kernels with fewer passes)
# split their window rows into chunks of about _CHUNK_BYTES, run on the threads of
# gradhub.parallel: each chunk writes its own rows of the result, and the chunks do not depend
# on the number of threads, so neither does the result.
# Results are identical to the generic kernels' (same comparisons, same order of additions).

_PAIR = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}

#: inputs (bytes) from which a 2x2 kernel runs its chunks on several threads: the mask and the
#: backward (about 12 passes over the input: 0.9 ms on one thread for a (64, 8, 32, 32) float32
#: input), twice that input for the maxima, the unpooling and the masked sums (4 to 6 passes). A
#: loop costs about 0.1 ms, and each chunk's calls and new temporaries more CPU time: for the
#: backward on (64, 8, 32, 32) float32, 2 chunks of 1 MiB took 6% more CPU time than the whole
#: array, 4 chunks of 512 KiB 21% more (2026-11-26)
_PARALLEL_BYTES = 1 << 21
#: input bytes per chunk of window rows when running on several threads
_CHUNK_BYTES = 1 << 20


def _fast2x2(xp: Any, geo: PoolGeom, *arrays: Any) -> bool:
    return (
        xp is np
        and sys.byteorder == "little"
        and geo.kernel == (2, 2)
        and geo.stride == (2, 2)
        and geo.axes[-1] == len(geo.shape) - 1
        and math.prod(geo.shape) > 0
        and _exact_cover(geo)
        and all(a.dtype in _PAIR and a.dtype == arrays[0].dtype for a in arrays)
    )


def _rows3(a: Any, geo: PoolGeom) -> Any:
    """(R, 2, W) view (or contiguous copy) of an input-shaped array: its rows of windows."""
    return np.ascontiguousarray(a).reshape(-1, 2, geo.shape[-1])


def _rows2(a: Any, geo: PoolGeom) -> Any:
    """(R, W / 2) view (or contiguous copy) of an output-shaped array."""
    return np.ascontiguousarray(a).reshape(-1, geo.shape[-1] // 2)


def _scratch(shape: Any, dtype: Any) -> Any:
    """A temporary array of a 2x2 kernel, from gradhub.memory's recycled arrays: dropped before
    the kernel returns, it is handed out again at the next call instead of fresh pages (a fresh
    2 MiB array costs about 500 page faults)."""
    return output_array(np, shape, dtype)


def _twice(a: Any) -> Any:
    """(..., n) -> (..., 2n): every value twice along the last axis, in one pass: float32 bits
    times 2**32 + 1 as 64-bit integers, float64 through a complex array whose real and imaginary
    parts are both the value."""
    if a.dtype == np.float32:
        u = np.multiply(a.view(np.uint32), np.uint64(0x100000001), out=_scratch(a.shape, np.uint64))
        return u.view(np.float32)
    c = _scratch(a.shape, _PAIR[a.dtype])
    c.real = a
    c.imag = a
    return c.view(a.dtype)


def _spread(a2: Any, r: int, w: int) -> Any:
    """(r, W / 2) -> (2r, W): each value at the four places of its window (``np.repeat`` copies
    each row with one ``memcpy``: faster than a broadcast copy into a recycled array)."""
    return np.repeat(_twice(a2), 2, axis=0)


#: patterns of _second_rows up to this many bytes are kept for the next calls (8 at most)
_KEEP_PATTERN_BYTES = 1 << 20


def _second_rows(rows: int, half: int, dtype: Any = bool) -> Any:
    """Flat read-only pattern (bool, or 0/1 of ``dtype``) of ``rows`` rows of windows of
    ``half`` window pairs each: 1 at the pairs of row 1 of each window row (kept for the next
    calls when small)."""
    if 2 * rows * half * np.dtype(dtype).itemsize <= _KEEP_PATTERN_BYTES:
        return _kept_second_rows(rows, half, dtype)
    return _build_second_rows(rows, half, dtype)


@functools.lru_cache(maxsize=8)
def _kept_second_rows(rows: int, half: int, dtype: Any) -> Any:
    return _build_second_rows(rows, half, dtype)


def _build_second_rows(rows: int, half: int, dtype: Any = bool) -> Any:
    p = np.zeros((rows, 2, half), dtype=dtype)
    p[:, 1] = 1
    flat = p.reshape(-1)
    flat.flags.writeable = False
    return flat


def _over_rows(
    rows: int,
    row_bytes: int,
    half: int | None,
    body: Any,
    factor: int = 2,
    chunk_factor: int = 1,
) -> None:
    """``body(start, stop, pattern)`` over the window rows ``[0, rows)``: at once, or in chunks of
    about ``chunk_factor`` times _CHUNK_BYTES on the threads of gradhub.parallel from ``factor``
    times _PARALLEL_BYTES (1: the kernels that make a mask, 2: the others) when there are
    several threads (on one, chunks would only add their calls). ``pattern``:
    :func:`_second_rows` for at least ``stop - start`` rows, None without ``half`` (the compiled
    kernels need none). Each window row's result is computed alone, so the chunks change no bit
    of it."""
    if rows * row_bytes < factor * _PARALLEL_BYTES or get_num_threads() == 1:
        body(0, rows, None if half is None else _second_rows(rows, half))
        return
    step = max(1, chunk_factor * _CHUNK_BYTES // row_bytes)
    count = -(-rows // step)
    pattern = None if half is None else _second_rows(min(step, rows), half)

    def chunk(i: int) -> None:
        body(i * step, min(rows, (i + 1) * step), pattern)

    parallel_for(count, chunk)


def _max2x2_rows(x3: Any, y2: Any) -> None:
    """The maxima of the windows of ``x3`` (r, 2, W) into ``y2`` (r, W / 2)."""
    r, _, w = x3.shape
    xf = x3.reshape(-1)
    n = xf.size
    h = np.maximum(xf[:-1], xf[1:], out=_scratch((n,), xf.dtype)[:-1])  # at even positions:
    # the maximum of a window row's pair
    v = _scratch((n,), xf.dtype)
    np.maximum(h[:-w], h[w:], out=v[: n - 1 - w])  # at the windows' top-left elements: maxima
    np.copyto(y2, v.reshape(r, 2 * w)[:, 0:w:2])


def _mask2x2_rows(x3: Any, y2: Any, m3: Any, second: Any) -> None:
    """Into the bool ``m3`` (r, 2, W): the first maximum (or first NaN, where the maximum is NaN)
    of each window of ``x3``, ``y2`` (r, W / 2) holding the windows' maxima."""
    r, _, w = x3.shape
    y4 = _spread(y2, r, w)  # (2r, W): each maximum at the four places of its window
    np.equal(x3.reshape(y4.shape), y4, out=m3.reshape(y4.shape))
    if np.isnan(np.max(y2)):  # a window's NaN maximum: its NaNs are marked
        m3 |= np.isnan(x3) & np.isnan(y4).reshape(x3.shape)
    e = m3.reshape(-1).view(np.uint16)  # one uint16 per window row: low byte column 0
    t = np.left_shift(e, 8, out=_scratch(e.shape, np.uint16))
    np.invert(t, out=t)
    e &= t  # column 0 wins over column 1
    keep = np.equal(e, 0, out=_scratch(e.shape, bool))
    keep |= second[: keep.size]  # row 1 of a window: kept where row 0 has no maximum
    half = w // 2
    np.multiply(e[half:], keep[:-half], out=e[half:])


def _unpool2x2_rows(dy2: Any, m3: Any, dx3: Any) -> None:
    """``dx3`` (r, 2, W) = each value of ``dy2`` (r, W / 2) spread over its window, times the
    bool mask ``m3``."""
    np.copyto(dx3, m3)  # 0/1 floats
    d = _spread(dy2, dx3.shape[0], dx3.shape[2])
    np.multiply(d, dx3.reshape(d.shape), out=dx3.reshape(d.shape))


def _mpool2x2_rows(g3: Any, m3: Any, y2: Any) -> None:
    """``y2`` (r, W / 2) = the sums over the windows of ``g3 * m3`` ((r, 2, W), ``m3`` bool),
    added as (row 0 + row 1) of column 0 + (row 0 + row 1) of column 1."""
    r, _, w = g3.shape
    t = _scratch(g3.shape, g3.dtype)
    np.copyto(t, m3)
    tf = np.multiply(g3, t, out=t).reshape(-1)
    n = tf.size
    s = np.add(tf[:-w], tf[w:], out=_scratch((n,), tf.dtype)[:-w])  # in rows 0: the sums of
    # the windows' columns
    v = _scratch((n,), tf.dtype)
    np.add(s[:-1], s[1:], out=v[: n - 1 - w])  # at the windows' top-left elements: the sums
    np.copyto(y2, v.reshape(r, 2 * w)[:, 0:w:2])


#: The compiled kernels (gradhub_nn_ops.native) pass over inputs from this many times
#: _PARALLEL_BYTES in parallel chunks of as many times _CHUNK_BYTES: they take about a tenth of
#: the numpy kernels' time (0.16 ms for the backward on (64, 8, 32, 32) float32, one thread), so
#: a loop on the pool pays only for larger inputs
_NATIVE_FACTOR = 4


def _native_rows(rows: int, row_bytes: int, name: str, *arrays: Any) -> None:
    """The compiled kernel ``name`` (:func:`gradhub_nn_ops.native.pool`) over the window rows
    of ``arrays`` (their first axis), by :func:`_over_rows` (each window's result is computed
    alone: the same for any chunking)."""

    def body(a: int, b: int, pattern: Any) -> None:
        native.pool(name, *(x[a:b] for x in arrays))

    _over_rows(rows, row_bytes, None, body, factor=_NATIVE_FACTOR, chunk_factor=_NATIVE_FACTOR)


def _max2x2(x: Any, geo: PoolGeom) -> Any:
    x3 = _rows3(x, geo)
    rows, _, w = x3.shape
    y = output_array(np, geo.out_shape, x.dtype)
    y2 = y.reshape(rows, w // 2)
    if native.dtype_usable(x.dtype):
        _native_rows(rows, 2 * w * x.dtype.itemsize, "max", x3, y2)
        return y

    def body(a: int, b: int, second: Any) -> None:
        _max2x2_rows(x3[a:b], y2[a:b])

    _over_rows(rows, 2 * w * x.dtype.itemsize, w // 2, body)
    return y


def _mask2x2(x: Any, y: Any, geo: PoolGeom) -> Any:
    x3 = _rows3(x, geo)
    rows, _, w = x3.shape
    y2 = _rows2(y, geo)
    m = output_array(np, geo.shape, bool)
    m3 = m.reshape(x3.shape)
    if native.dtype_usable(x.dtype):
        _native_rows(rows, 2 * w * x.dtype.itemsize, "mask", x3, y2, m3)
        return m

    def body(a: int, b: int, second: Any) -> None:
        _mask2x2_rows(x3[a:b], y2[a:b], m3[a:b], second)

    _over_rows(rows, 2 * w * x.dtype.itemsize, w // 2, body, factor=1)
    return m


def _pairwise_mask_rows(xs: Any, m3: Any) -> bool:
    """Into the bool ``m3`` (r, 2, W): the first maximum of each window of ``xs`` (r, 2, W) by
    pairwise comparisons, without the windows' maxima; False where some window holds NaN (its
    maximum is NaN), and ``m3`` is then left to :func:`_mask2x2_rows`.

    Without NaN the first maximum of a window (a, b / c, d) is in row 1 exactly when
    max(c, d) > max(a, b), and in a row (p, q) at q exactly when q > p: one comparison of the
    flat input with itself shifted by one element (at the even positions: q > p), the pairs'
    maxima (the same shift) and their comparison shifted by one row (at the pairs of rows 0:
    row 1 wins), then 16-bit operations on one word per pair (low byte: column 0): the word is
    1 or 256 from the pair's comparison, times 1 - (row 1 wins) on rows 0 and times (row 1
    wins) of the pair above on rows 1, the rows told apart by a 0/1 pattern. The same mask as
    ``x == y`` tie-broken in window order: ties (signed zeros included, -0.0 == 0.0) keep the
    first element of a pair and row 0."""
    r, _, w = xs.shape
    half = w // 2
    xf = xs.reshape(-1)
    n = xf.size
    hm = np.maximum(xf[:-1], xf[1:], out=_scratch((n,), xf.dtype)[:-1])  # at even positions:
    # the maxima of the pairs
    if np.isnan(np.max(hm)):  # every element is in a pair: NaN in some window
        return False
    gb = _scratch((n,), bool)
    np.greater(xf[1:], xf[:-1], out=gb[:-1])  # at even positions: column 1 wins
    gb[-1] = False
    sb = _scratch((n,), bool)
    np.greater(hm[w:], hm[:-w], out=sb[: n - 1 - w])  # at the pairs of rows 0: row 1 wins
    sb[n - 1 - w :] = False
    words = m3.reshape(-1).view(np.uint16)
    np.bitwise_and(gb.view(np.uint16), 1, out=words)
    words *= 255
    words += 1  # 1: column 0, 256: column 1
    s = np.bitwise_and(sb.view(np.uint16), 1, out=_scratch(words.shape, np.uint16))
    rows1 = _second_rows(r, half, np.uint16)
    t = np.bitwise_xor(s, 1, out=_scratch(words.shape, np.uint16))
    t |= rows1  # rows 0: 1 - (row 1 wins); rows 1: 1
    words *= t
    np.bitwise_or(s, rows1, out=t)  # rows 0: row 1 wins; rows 1: 1
    np.multiply(words[half:], t[:-half], out=words[half:])  # rows 1 by the pair above
    return True


def _first_max_mask(xs: Any, ys: Any, second: Any) -> Any:
    """The first-maximum mask (a scratch array) of the window rows ``xs`` given their maxima
    ``ys`` (by equality with them), or when ``ys`` is None by pairwise comparisons
    (:func:`_pairwise_mask_rows`: 25-30% less time than finding the maxima first, and about
    5% more than the equality with known maxima; 2026-11-26), and in windows holding NaN with
    the maxima computed here."""
    m3 = _scratch(xs.shape, bool)
    if ys is None and _pairwise_mask_rows(xs, m3):
        return m3
    if ys is None:
        ys = _scratch((xs.shape[0], xs.shape[2] // 2), xs.dtype)
        _max2x2_rows(xs, ys)
    _mask2x2_rows(xs, ys, m3, second)
    return m3


def _backward2x2(dy: Any, x: Any, geo: PoolGeom, y: Any = None) -> Any:
    x3 = _rows3(x, geo)
    rows, _, w = x3.shape
    dy2 = _rows2(dy, geo)
    y2 = None if y is None else _rows2(y, geo)
    dx = output_array(np, geo.shape, dy.dtype)
    dx3 = dx.reshape(x3.shape)
    if native.dtype_usable(dy.dtype):  # y is the maxima of x: the mask is found from x alone
        _native_rows(rows, 2 * w * x.dtype.itemsize, "backward", x3, dy2, dx3)
        return dx

    def body(a: int, b: int, second: Any) -> None:
        m3 = _first_max_mask(x3[a:b], None if y2 is None else y2[a:b], second)
        _unpool2x2_rows(dy2[a:b], m3, dx3[a:b])

    _over_rows(rows, 2 * w * x.dtype.itemsize, w // 2, body, factor=1)
    return dx


def _gather2x2(g: Any, x: Any, geo: PoolGeom) -> Any:
    x3 = _rows3(x, geo)
    rows, _, w = x3.shape
    g3 = _rows3(g, geo)
    out = output_array(np, geo.out_shape, g.dtype)
    out2 = out.reshape(rows, w // 2)
    if native.dtype_usable(g.dtype):
        _native_rows(rows, 2 * w * x.dtype.itemsize, "gather", x3, g3, out2)
        return out

    def body(a: int, b: int, second: Any) -> None:
        _mpool2x2_rows(g3[a:b], _first_max_mask(x3[a:b], None, second), out2[a:b])

    _over_rows(rows, 2 * w * x.dtype.itemsize, w // 2, body, factor=1)
    return out


def _unpool2x2(dy: Any, mask: Any, geo: PoolGeom) -> Any:
    m3 = _rows3(mask, geo)
    rows, _, w = m3.shape
    dy2 = _rows2(dy, geo)
    dx = output_array(np, geo.shape, dy.dtype)
    dx3 = dx.reshape(m3.shape)
    if native.dtype_usable(dy.dtype):
        _native_rows(rows, 2 * w * dy.dtype.itemsize, "unpool", dy2, m3, dx3)
        return dx

    def body(a: int, b: int, second: Any) -> None:
        _unpool2x2_rows(dy2[a:b], m3[a:b], dx3[a:b])

    _over_rows(rows, 2 * w * dy.dtype.itemsize, w // 2, body)
    return dx


def _mpool2x2(g: Any, mask: Any, geo: PoolGeom) -> Any:
    m3 = _rows3(mask, geo)
    rows, _, w = m3.shape
    g3 = _rows3(g, geo)
    out = output_array(np, geo.out_shape, g.dtype)
    out2 = out.reshape(rows, w // 2)
    if native.dtype_usable(g.dtype):
        _native_rows(rows, 2 * w * g.dtype.itemsize, "masked", g3, m3, out2)
        return out

    def body(a: int, b: int, second: Any) -> None:
        _mpool2x2_rows(g3[a:b], m3[a:b], out2[a:b])

    _over_rows(rows, 2 * w * g.dtype.itemsize, w // 2, body)
    return out


# -- forward kernels ---------------------------------------------------------------------------


def _max_pooling(
    xp: Any,
    x: Any,
    kernel: Any = None,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> Any:
    geo = pool_geom("max_pooling", x.shape, kernel, stride, ignore_border, pad, channel_last)
    if _fast2x2(xp, geo, x):
        return _max2x2(x, geo)
    return _reduce_windows(xp, _padded(xp, x, geo, _lowest(x)), geo, xp.maximum)


def _max_pooling_backward(
    xp: Any,
    dy: Any,
    x: Any,
    kernel: Any = None,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> Any:
    fname = "max_pooling_backward"
    geo = pool_geom(fname, x.shape, kernel, stride, ignore_border, pad, channel_last)
    _check_pooled(fname, "dy", dy, "x", geo)
    if _fast2x2(xp, geo, x, dy):
        return _backward2x2(dy, x, geo)
    if _exact_cover(geo):
        dx = xp.empty(x.shape, dtype=dy.dtype)
        for off, m in _first_max_masks(xp, x, geo):
            xp.multiply(dy, m, out=dx[geo.window(off)])
        return dx
    buf = xp.zeros(geo.padded_shape, dtype=dy.dtype)
    disjoint = disjoint_windows(geo)
    for off, m in _first_max_masks(xp, x, geo):
        if disjoint:
            xp.multiply(dy, m, out=buf[geo.window(off)])
        else:
            buf[geo.window(off)] += dy * m
    return _unpadded(xp, buf, geo)


def _max_pooling_gather(
    xp: Any,
    g: Any,
    x: Any,
    kernel: Any = None,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> Any:
    fname = "max_pooling_gather"
    geo = pool_geom(fname, x.shape, kernel, stride, ignore_border, pad, channel_last)
    if tuple(g.shape) != tuple(x.shape):
        raise ValueError(f"{fname}(): g has shape {tuple(g.shape)} but x has {tuple(x.shape)}")
    if _fast2x2(xp, geo, x, g):
        return _gather2x2(g, x, geo)
    gpad = _padded(xp, g, geo, 0)
    out = tmp = None
    for off, m in _first_max_masks(xp, x, geo):
        if out is None:
            out = xp.multiply(gpad[geo.window(off)], m)
        else:
            if tmp is None:
                tmp = xp.empty(geo.out_shape, dtype=g.dtype)
            xp.multiply(gpad[geo.window(off)], m, out=tmp)
            out += tmp
    return out


def _disjoint_geom(
    fname: str,
    shape: Sequence[int],
    kernel: Any,
    stride: Any,
    ignore_border: bool,
    pad: Any,
    channel_last: bool,
) -> PoolGeom:
    geo = pool_geom(fname, shape, kernel, stride, ignore_border, pad, channel_last)
    if not disjoint_windows(geo):
        raise ValueError(
            f"{fname}(): needs windows that do not overlap (stride >= kernel on "
            f"every axis), got kernel {geo.kernel} and stride {geo.stride}"
        )
    return geo


def _mask_geom(
    fname: str,
    mask: Any,
    kernel: Any,
    stride: Any,
    ignore_border: bool,
    pad: Any,
    channel_last: bool,
) -> PoolGeom:
    """The geometry of the windows of a bool ``mask`` (from max_pooling_mask)."""
    if mask.dtype.kind != "b":
        raise TypeError(
            f"{fname}(): mask must be a bool array (from max_pooling_mask), got dtype {mask.dtype}"
        )
    return _disjoint_geom(fname, mask.shape, kernel, stride, ignore_border, pad, channel_last)


def _max_pooling_mask(
    xp: Any,
    x: Any,
    y: Any,
    kernel: Any = None,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> Any:
    fname = "max_pooling_mask"
    geo = _disjoint_geom(fname, x.shape, kernel, stride, ignore_border, pad, channel_last)
    _check_pooled(fname, "y", y, "x", geo)
    if _fast2x2(xp, geo, x, y):
        return _mask2x2(x, y, geo)
    mpad = xp.zeros(geo.padded_shape, dtype=bool)
    for off, m in _first_max_masks(xp, x, geo, y):
        mpad[geo.window(off)] = m
    return _unpadded(xp, mpad, geo)


def _masked_unpooling(
    xp: Any,
    dy: Any,
    mask: Any,
    kernel: Any = None,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> Any:
    fname = "masked_unpooling"
    geo = _mask_geom(fname, mask, kernel, stride, ignore_border, pad, channel_last)
    _check_pooled(fname, "dy", dy, "mask", geo)
    if _fast2x2(xp, geo, dy):
        return _unpool2x2(dy, mask, geo)
    mpad = _padded(xp, mask, geo, False)
    buf = xp.zeros(geo.padded_shape, dtype=dy.dtype)
    for off in geo.offsets():
        w = geo.window(off)
        xp.multiply(dy, mpad[w], out=buf[w])
    return _unpadded(xp, buf, geo)


def _masked_pooling(
    xp: Any,
    g: Any,
    mask: Any,
    kernel: Any = None,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> Any:
    fname = "masked_pooling"
    geo = _mask_geom(fname, mask, kernel, stride, ignore_border, pad, channel_last)
    if tuple(g.shape) != tuple(mask.shape):
        raise ValueError(
            f"{fname}(): g has shape {tuple(g.shape)} but mask has {tuple(mask.shape)}"
        )
    if _fast2x2(xp, geo, g):
        return _mpool2x2(g, mask, geo)
    return _reduce_windows(xp, _padded(xp, g * mask, geo, 0), geo, xp.add)


def _avg_divisor(xp: Any, geo: PoolGeom, including_pad: bool, dtype: Any) -> Any:
    """Window sizes (nnabla's rule), shaped to broadcast against the output.

    Built with ``xp`` on the data's device (no host data copied: a CUDA-graph recording could
    not replay such a copy); the sizes are whole numbers, so their float64 product is exact."""
    div = xp.ones((1,) * len(geo.shape))
    for a, k, s, p, o in zip(geo.axes, geo.kernel, geo.stride, geo.pad, geo.out):
        w = geo.shape[a]
        start = xp.arange(o) * s - p
        end = xp.minimum(start + k, w + p)
        size = end - start if including_pad else xp.minimum(end, w) - xp.maximum(start, 0)
        shape = [1] * len(geo.shape)
        shape[a] = o
        div = div * size.reshape(shape)
    return div.astype(dtype)


def _average_pooling(
    xp: Any,
    x: Any,
    kernel: Any = None,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
    including_pad: bool = True,
) -> Any:
    geo = pool_geom("average_pooling", x.shape, kernel, stride, ignore_border, pad, channel_last)
    if x.dtype.kind in "biu":  # integer and bool data: averaged in float64, as numpy's mean
        x = x.astype(np.float64)
    half = x.dtype == np.float16  # float16: summed and divided in float32, then cast back
    xf = x.astype(np.float32) if half else x
    y = _reduce_windows(xp, _padded(xp, xf, geo, 0), geo, xp.add)
    y /= _avg_divisor(xp, geo, including_pad, xf.dtype)
    return y.astype(np.float16) if half else y


def _average_pooling_backward(
    xp: Any,
    dy: Any,
    kernel: Any = None,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
    including_pad: bool = True,
    x_shape: Any = (),
) -> Any:
    fname = "average_pooling_backward"
    geo = pool_geom(fname, x_shape, kernel, stride, ignore_border, pad, channel_last)
    _check_pooled(fname, "dy", dy, "x_shape", geo)
    if dy.dtype == np.float16:  # float32 inside (the divisor overflows float16), cast back
        dx = _average_pooling_backward(
            xp,
            dy.astype(np.float32),
            kernel,
            stride,
            ignore_border,
            pad,
            channel_last,
            including_pad,
            x_shape,
        )
        return dx.astype(np.float16)
    g = dy / _avg_divisor(xp, geo, including_pad, dy.dtype)
    if _exact_cover(geo):
        dx = xp.empty(geo.shape, dtype=dy.dtype)
        for off in geo.offsets():
            dx[geo.window(off)] = g
        return dx
    buf = xp.zeros(geo.padded_shape, dtype=dy.dtype)
    disjoint = disjoint_windows(geo)
    for off in geo.offsets():
        if disjoint:
            buf[geo.window(off)] = g
        else:
            buf[geo.window(off)] += g
    return _unpadded(xp, buf, geo)


# -- backward rules ----------------------------------------------------------------------------
# (the array-level ones call each function's kernel for the array's device: gradhub.ops.kernel)


def _call(name: str, *args: Any, **attrs: Any) -> Any:
    from gradhub.ops import call

    return call(name, *args, **attrs)


def _max_pooling_bw(gy, inputs, in_shapes, outputs, out_shapes, **attrs):  # type: ignore[no-untyped-def]
    x, y = inputs[0], outputs[0]
    if y is not None and disjoint_windows(pool_geom("max_pooling", in_shapes[0], **attrs)):
        # the mask becomes part of the graph: higher derivatives reuse it
        return [_call("MaskedUnpooling", gy[0], _call("MaxPoolingMask", x, y, **attrs), **attrs)]
    return [_call("MaxPoolingBackward", gy[0], x, **attrs)]


def _max_pooling_fast(  # type: ignore[no-untyped-def]
    xp,
    gy,
    inputs,
    in_shapes,
    outputs,
    out_shapes,
    kernel=None,
    stride=None,
    ignore_border=True,
    pad=None,
    channel_last=False,
):
    """Array version of the MaxPooling rule; reuses the forward output y (2x2 fast path)."""
    x, y = inputs[0], outputs[0]
    g = gy[0]
    geo = pool_geom("max_pooling", x.shape, kernel, stride, ignore_border, pad, channel_last)
    if y is not None and tuple(g.shape) == geo.out_shape and _fast2x2(xp, geo, x, g, y):
        return [_backward2x2(g, x, geo, y)]
    return [
        kernel_of("MaxPoolingBackward", x)(
            xp, g, x, kernel, stride, ignore_border, pad, channel_last
        )
    ]


def _adjoint_rules(name: str) -> tuple[Any, Any]:
    """The two backward rules of a function linear in its first input whose adjoint is the
    function ``name`` with the same second input (``x`` or the mask, which gets no gradient),
    from that one statement: the graph rule calls ``name`` (so it is differentiable again), the
    array-level first-order rule runs ``name``'s kernel for the gradient's device."""

    def rule(gy, inputs, in_shapes, outputs, out_shapes, **attrs):  # type: ignore[no-untyped-def]
        return [_call(name, gy[0], inputs[1], **attrs), None]

    def fast(xp, gy, inputs, in_shapes, outputs, out_shapes, **attrs):  # type: ignore[no-untyped-def]
        return [kernel_of(name, gy[0])(xp, gy[0], inputs[1], **attrs), None]

    rule.__name__ = rule.__qualname__ = f"adjoint_{name}"
    fast.__name__ = fast.__qualname__ = f"adjoint_{name}_fast"
    return rule, fast


# MaxPoolingBackward and MaxPoolingGather are each other's adjoints, as are MaskedUnpooling and
# MaskedPooling (see the module docstring)
_max_pooling_backward_bw, _max_pooling_backward_fast = _adjoint_rules("MaxPoolingGather")
_max_pooling_gather_bw, _max_pooling_gather_fast = _adjoint_rules("MaxPoolingBackward")
_masked_unpooling_bw, _masked_unpooling_fast = _adjoint_rules("MaskedPooling")
_masked_pooling_bw, _masked_pooling_fast = _adjoint_rules("MaskedUnpooling")


def _average_pooling_bw(gy, inputs, in_shapes, outputs, out_shapes, **attrs):  # type: ignore[no-untyped-def]
    return [_call("AveragePoolingBackward", gy[0], x_shape=tuple(in_shapes[0]), **attrs)]


def _average_pooling_backward_bw(  # type: ignore[no-untyped-def]
    gy,
    inputs,
    in_shapes,
    outputs,
    out_shapes,
    x_shape,
    **attrs,
):
    return [_call("AveragePooling", gy[0], **attrs)]


# -- GlobalAveragePooling (composite) ----------------------------------------------------------


def global_average_pooling(x: Any) -> Any:
    """Average over every axis after the first two; output shape (N, C, 1, 1) as nnabla.

    y[n, c, 0, 0] = mean_{h, w} x[n, c, h, w]

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2))
        >>> F.global_average_pooling(x).d.ravel()
        array([1.5, 5.5], dtype=float32)
    """
    from gradhub import as_variable

    x = as_variable(x)
    if x.ndim < 2:
        raise ValueError(
            f"global_average_pooling(): x must have at least 2 axes (N, C, ...), got shape "
            f"{x.shape}"
        )
    n = math.prod(x.shape[2:])
    if n == 0:
        raise ValueError(f"global_average_pooling(): x of shape {x.shape} has no spatial element")
    # Mean: float16 is accumulated in float32 (a float16 sum overflows), integers give float64
    s = _call("Mean", x, axis=tuple(range(2, x.ndim)), keepdims=True) if x.ndim > 2 else x
    shape = (x.shape[0], x.shape[1], 1, 1)
    return s if tuple(s.shape) == shape else _call("Reshape", s, shape=shape)


# -- references (independent naive loops, nnabla's algorithm) ----------------------------------


def _ref_windows(
    shape: Sequence[int],
    kernel: Any,
    stride: Any,
    ignore_border: bool,
    pad: Any,
    channel_last: bool,
) -> tuple[list[int], list[list[tuple[int, int]]]]:
    """Spatial axes and, per axis, the (start, end) of every window (end counts the padding)."""
    kernel = list(kernel)
    nk = len(kernel)
    stride = kernel if stride is None else list(stride)
    pad = [0] * nk if pad is None else list(pad)
    first = len(shape) - nk - (1 if channel_last else 0)
    axes = list(range(first, first + nk))
    bounds = []
    for i, a in enumerate(axes):
        w = shape[a]
        if ignore_border:
            n_out = (w + 2 * pad[i] - kernel[i]) // stride[i] + 1
        else:
            n_out = (w + pad[i] - 1) // stride[i] + 1
        b = []
        for o in range(n_out):
            start = o * stride[i] - pad[i]
            end = min(start + kernel[i], w + pad[i])
            b.append((start, end))
        bounds.append(b)
    return axes, bounds


def _ref_pool(
    x: np.ndarray,
    kernel: Any,
    stride: Any,
    ignore_border: bool,
    pad: Any,
    channel_last: bool,
    mode: str,
    including_pad: bool = True,
) -> np.ndarray:
    axes, bounds = _ref_windows(x.shape, kernel, stride, ignore_border, pad, channel_last)
    out_shape = list(x.shape)
    for a, b in zip(axes, bounds):
        out_shape[a] = len(b)
    y = np.zeros(out_shape, dtype=x.dtype)
    other = [a for a in range(x.ndim) if a not in axes]
    for rest in itertools.product(*(range(x.shape[a]) for a in other)):
        for pos in itertools.product(*(range(len(b)) for b in bounds)):
            ranges = []
            full = 1
            for a, b, o in zip(axes, bounds, pos):
                start, end = b[o]
                full *= end - start
                ranges.append(range(max(start, 0), min(end, x.shape[a])))
            vals = []
            for idx in itertools.product(*ranges):
                full_idx = [0] * x.ndim
                for a, v in zip(other, rest):
                    full_idx[a] = v
                for a, v in zip(axes, idx):
                    full_idx[a] = v
                vals.append(x[tuple(full_idx)])
            out_idx = [0] * x.ndim
            for a, v in zip(other, rest):
                out_idx[a] = v
            for a, v in zip(axes, pos):
                out_idx[a] = v
            if mode == "max":
                best = vals[0]
                for v in vals[1:]:
                    if best < v:
                        best = v
                y[tuple(out_idx)] = best
            else:
                y[tuple(out_idx)] = sum(vals) / (full if including_pad else len(vals))
    return y


def _max_pooling_ref(
    x: np.ndarray,
    kernel: Any,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> np.ndarray:
    return _ref_pool(x, kernel, stride, ignore_border, pad, channel_last, "max")


def _average_pooling_ref(
    x: np.ndarray,
    kernel: Any,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
    including_pad: bool = True,
) -> np.ndarray:
    return _ref_pool(x, kernel, stride, ignore_border, pad, channel_last, "avg", including_pad)


def _window_members(
    shape: Sequence[int],
    kernel: Any,
    stride: Any,
    ignore_border: bool,
    pad: Any,
    channel_last: bool,
) -> Iterator[tuple[tuple[int, ...], list[tuple[int, ...]]]]:
    """(output index, input indices of its window in row-major order), for every output."""
    axes, bounds = _ref_windows(shape, kernel, stride, ignore_border, pad, channel_last)
    other = [a for a in range(len(shape)) if a not in axes]
    for rest in itertools.product(*(range(shape[a]) for a in other)):
        for pos in itertools.product(*(range(len(b)) for b in bounds)):
            ranges = [
                range(max(b[o][0], 0), min(b[o][1], shape[a])) for a, b, o in zip(axes, bounds, pos)
            ]
            out_idx = [0] * len(shape)
            for a, v in zip(other, rest):
                out_idx[a] = v
            for a, v in zip(axes, pos):
                out_idx[a] = v
            members = []
            for idx in itertools.product(*ranges):
                full = [0] * len(shape)
                for a, v in zip(other, rest):
                    full[a] = v
                for a, v in zip(axes, idx):
                    full[a] = v
                members.append(tuple(full))
            yield tuple(out_idx), members


def _argmax_positions(
    x: np.ndarray, kernel: Any, stride: Any, ignore_border: bool, pad: Any, channel_last: bool
) -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(output index, input index of the first maximum of its window, or of its first NaN), for
    every output: numpy's ``argmax`` of the window in row-major order."""
    for o, members in _window_members(x.shape, kernel, stride, ignore_border, pad, channel_last):
        yield o, members[int(np.argmax(np.array([x[i] for i in members])))]


def _max_pooling_backward_ref(
    dy: np.ndarray,
    x: np.ndarray,
    kernel: Any,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> np.ndarray:
    dx = np.zeros(x.shape, dtype=dy.dtype)
    for o, i in _argmax_positions(x, kernel, stride, ignore_border, pad, channel_last):
        dx[i] += dy[o]
    return dx


def _max_pooling_gather_ref(
    g: np.ndarray,
    x: np.ndarray,
    kernel: Any,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> np.ndarray:
    pairs = list(_argmax_positions(x, kernel, stride, ignore_border, pad, channel_last))
    shape = list(x.shape)
    axes, bounds = _ref_windows(x.shape, kernel, stride, ignore_border, pad, channel_last)
    for a, b in zip(axes, bounds):
        shape[a] = len(b)
    y = np.zeros(shape, dtype=g.dtype)
    for o, i in pairs:
        y[o] = g[i]
    return y


def _max_pooling_mask_ref(
    x: np.ndarray,
    y: np.ndarray,
    kernel: Any,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> np.ndarray:
    m = np.zeros(x.shape, dtype=bool)
    for o, members in _window_members(x.shape, kernel, stride, ignore_border, pad, channel_last):
        for i in members:
            if x[i] == y[o]:
                m[i] = True
                break
    return m


def _masked_unpooling_ref(
    dy: np.ndarray,
    mask: np.ndarray,
    kernel: Any,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> np.ndarray:
    dx = np.zeros(mask.shape, dtype=dy.dtype)
    for o, members in _window_members(mask.shape, kernel, stride, ignore_border, pad, channel_last):
        for i in members:
            dx[i] += dy[o] * mask[i]
    return dx


def _masked_pooling_ref(
    g: np.ndarray,
    mask: np.ndarray,
    kernel: Any,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> np.ndarray:
    attrs = {
        "kernel": kernel,
        "stride": stride,
        "ignore_border": ignore_border,
        "pad": pad,
        "channel_last": channel_last,
    }
    y = np.zeros(_out_shape(tuple(mask.shape), attrs), dtype=g.dtype)
    for o, members in _window_members(mask.shape, **attrs):
        y[o] = sum((g[i] * mask[i] for i in members), g.dtype.type(0))
    return y


def _average_pooling_backward_ref(
    dy: np.ndarray,
    kernel: Any,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
    including_pad: bool = True,
    x_shape: Any = (),
) -> np.ndarray:
    """The transpose of average pooling, built column by column from the forward reference."""
    size = math.prod(x_shape)
    dx = np.zeros(size, dtype=dy.dtype)
    for j in range(size):
        e = np.zeros(size)
        e[j] = 1.0
        col = _average_pooling_ref(
            e.reshape(x_shape), kernel, stride, ignore_border, pad, channel_last, including_pad
        )
        dx[j] = np.sum(col * dy)
    return dx.reshape(x_shape)


# -- samples -----------------------------------------------------------------------------------

#: (x shape, attrs, name): shared by max and average pooling
_POOL_CASES: list[tuple[tuple[int, ...], dict[str, Any], str]] = [
    ((2, 2, 4, 4), {"kernel": (2, 2)}, "2x2"),
    ((1, 1, 5, 5), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}, "overlap pad"),
    ((1, 2, 5, 3), {"kernel": (2, 2), "ignore_border": False}, "ignore_border=False"),
    (
        (1, 1, 4, 4),
        {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "ignore_border": False},
        "ignore_border=False pad",
    ),
    ((1, 4, 4, 2), {"kernel": (2, 2), "channel_last": True}, "channel_last"),
    ((2, 3, 6), {"kernel": (2,), "stride": (1,)}, "1d overlap"),
    ((1, 1, 4, 4, 2), {"kernel": (2, 2, 2)}, "3d"),
    ((4, 5), {"kernel": (2, 3), "stride": (2, 1)}, "no batch axes"),
    ((0, 2, 4, 4), {"kernel": (2, 2)}, "size-0"),
]


def _transposed(rng: np.random.Generator) -> np.ndarray:
    return rng.standard_normal((4, 4, 2, 1)).transpose(3, 2, 1, 0)


def _pool_samples(extra: Sequence[tuple[dict[str, Any], str]] = ()):  # type: ignore[no-untyped-def]
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        for shape, attrs, name in _POOL_CASES:
            yield Sample((rng.standard_normal(shape),), dict(attrs), name=name)
        yield Sample(
            (_transposed(rng),), {"kernel": (2, 2), "stride": (1, 2)}, name="non-contiguous"
        )
        for attrs, name in extra:
            yield Sample((rng.standard_normal((1, 2, 5, 4)),), dict(attrs), name=name)

    return samples


_AVG_EXTRA = [
    ({"kernel": (3, 2), "pad": (1, 1), "including_pad": False}, "excluding pad"),
    (
        {
            "kernel": (3, 3),
            "stride": (2, 2),
            "pad": (1, 1),
            "ignore_border": False,
            "including_pad": False,
        },
        "ignore_border=False excluding pad",
    ),
]


def _out_shape(shape: tuple[int, ...], attrs: dict[str, Any]) -> tuple[int, ...]:
    a = {k: v for k, v in attrs.items() if k != "including_pad"}
    return pool_geom(
        "sample",
        shape,
        a["kernel"],
        a.get("stride"),
        a.get("ignore_border", True),
        a.get("pad"),
        a.get("channel_last", False),
    ).out_shape


def _max_pooling_backward_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for shape, attrs, name in _POOL_CASES:
        if name in (
            "2x2",
            "overlap pad",
            "ignore_border=False pad",
            "1d overlap",
            "size-0",
            "channel_last",
        ):
            dy = rng.standard_normal(_out_shape(shape, attrs))
            yield Sample((dy, rng.standard_normal(shape)), dict(attrs), name=name)


def _max_pooling_gather_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for shape, attrs, name in _POOL_CASES:
        if name in ("2x2", "overlap pad", "ignore_border=False", "1d overlap", "size-0", "3d"):
            yield Sample(
                (rng.standard_normal(shape), rng.standard_normal(shape)), dict(attrs), name=name
            )


#: the cases of _POOL_CASES whose windows do not overlap
_DISJOINT = ("2x2", "ignore_border=False", "channel_last", "3d", "size-0")


def _with_ties(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Values from a small set, so that windows have tied maxima (first-maximum rule)."""
    return rng.integers(-2, 3, shape).astype(np.float64)


def _max_pooling_mask_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for shape, attrs, name in _POOL_CASES:
        if name in _DISJOINT:
            x = _with_ties(rng, shape)
            y = _max_pooling_ref(x, **attrs)
            yield Sample((x, y), dict(attrs), grad_inputs=(), name=name)


def _masked_samples(rng: np.random.Generator, pooled: bool) -> Iterator[Sample]:
    for shape, attrs, name in _POOL_CASES:
        if name in _DISJOINT:
            x = _with_ties(rng, shape)
            mask = _max_pooling_mask_ref(x, _max_pooling_ref(x, **attrs), **attrs)
            first = rng.standard_normal(shape if pooled else _out_shape(shape, attrs))
            yield Sample((first, mask), dict(attrs), grad_inputs=(0,), name=name)


def _masked_unpooling_samples(rng: np.random.Generator) -> Iterator[Sample]:
    return _masked_samples(rng, pooled=False)


def _masked_pooling_samples(rng: np.random.Generator) -> Iterator[Sample]:
    return _masked_samples(rng, pooled=True)


def _average_pooling_backward_samples(rng: np.random.Generator) -> Iterator[Sample]:
    cases = [
        (s, a, n)
        for s, a, n in _POOL_CASES
        if n in ("2x2", "overlap pad", "channel_last", "ignore_border=False pad", "size-0")
    ]
    cases += [((1, 2, 5, 4), a, n) for a, n in _AVG_EXTRA]
    for shape, attrs, name in cases:
        dy = rng.standard_normal(_out_shape(shape, attrs))
        yield Sample((dy,), {**attrs, "x_shape": shape}, name=name)


_DOC_MAX = """Max pooling (nnabla): the maximum of each window of the last len(kernel) axes.

    y[..., o] = max_{k} x[..., o * stride - pad + k]   (window clipped to the input)

    stride defaults to kernel; pad (default 0) must be < kernel; ignore_border=False also keeps
    the partial windows at the end: output size (L + pad - 1) // stride + 1 instead of
    (L + 2 * pad - kernel) // stride + 1. channel_last: the pooled axes are those before the
    last. Sub-gradient at ties: the window's gradient goes to its first maximal element
    (row-major order in the window); a window holding NaN has the output NaN and its gradient
    goes to its first NaN (as numpy's argmax).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
        >>> F.max_pooling(x, (2, 2)).d.ravel()
        array([ 5.,  7., 13., 15.], dtype=float32)
    """

_DOC_AVG = """Average pooling (nnabla): the mean of each window of the last len(kernel) axes.

    y[..., o] = sum_{k in window} x[..., o * stride - pad + k] / size

    size counts the padding when including_pad (windows end at L + pad), else only the elements
    inside the input. kernel, stride, ignore_border, pad, channel_last: as max_pooling.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
        >>> F.average_pooling(x, (2, 2)).d.ravel()
        array([ 2.5,  4.5, 10.5, 12.5], dtype=float32)
    """

_DOC_MAXBW = """Gradient of max_pooling: routes dy to the first maximum of each window of x.

    dx[i] = sum_{o : argmax(window o of x) = i} dy[o]

    Linear in dy; zero derivative w.r.t. x almost everywhere. Same attributes as max_pooling.

    Example::

        >>> import numpy as np, gradhub.functions as F
        >>> x = np.array([[[[1.0, 3.0], [2.0, 0.0]]]])
        >>> F.max_pooling_backward(np.ones((1, 1, 1, 1)), x, (2, 2)).d.ravel()
        array([0., 1., 0., 0.])
    """

_DOC_GATHER = """Gathers g at the first maximum of each max-pooling window of x (output-shaped).

    y[o] = g[argmax(window o of x)]

    The adjoint of max_pooling_backward w.r.t. dy. Same attributes as max_pooling.

    Example::

        >>> import numpy as np, gradhub.functions as F
        >>> x = np.array([[[[1.0, 3.0], [2.0, 0.0]]]])
        >>> F.max_pooling_gather(np.arange(4.0).reshape(1, 1, 2, 2), x, (2, 2)).d.ravel()
        array([1.])
    """

_DOC_MASK = """The first maximum of every max-pooling window of x, as a bool array shaped like x.

    m[i] = (i is the first element of its window, in row-major order, with x[i] == y[o])

    With y = max_pooling(x) this marks where max pooling's gradient goes. Windows must not
    overlap (stride >= kernel on every axis). Same attributes as max_pooling. Not
    differentiable (a bool output).

    Example::

        >>> import numpy as np, gradhub.functions as F
        >>> x = np.array([[[[1.0, 3.0], [3.0, 0.0]]]])
        >>> F.max_pooling_mask(x, np.array([[[[3.0]]]]), (2, 2)).d.ravel()
        array([False,  True, False, False])
    """

_DOC_UNPOOL = """Spreads dy over the max-pooling windows where the bool mask is set (x-shaped).

    dx[i] = dy[o] * mask[i]   (o: the window of i; 0 outside every window)

    With mask = max_pooling_mask(x, max_pooling(x)) this is max_pooling's gradient. Linear in
    dy, whose adjoint is masked_pooling; no gradient w.r.t. the mask. Windows must not overlap.
    Same attributes as max_pooling.

    Example::

        >>> import numpy as np, gradhub.functions as F
        >>> m = np.array([[[[False, True], [False, False]]]])
        >>> F.masked_unpooling(np.full((1, 1, 1, 1), 5.0), m, (2, 2)).d.ravel()
        array([0., 5., 0., 0.])
    """

_DOC_MPOOL = """Sums g over every max-pooling window where the bool mask is set (output-shaped).

    y[o] = sum_{i in window o} g[i] * mask[i]

    The adjoint of masked_unpooling w.r.t. dy; no gradient w.r.t. the mask. Windows must not
    overlap. Same attributes as max_pooling.

    Example::

        >>> import numpy as np, gradhub.functions as F
        >>> m = np.array([[[[False, True], [False, False]]]])
        >>> F.masked_pooling(np.arange(4.0).reshape(1, 1, 2, 2), m, (2, 2)).d.ravel()
        array([1.])
    """

_DOC_AVGBW = """Gradient of average_pooling for an input of shape x_shape (its linear adjoint).

    dx[i] = sum_{o : i in window o} dy[o] / size[o]

    Example::

        >>> import numpy as np, gradhub.functions as F
        >>> F.average_pooling_backward(np.ones((1, 1, 1, 1)), (2, 2), x_shape=(1, 1, 2, 2)).d
        array([[[[0.25, 0.25],
                 [0.25, 0.25]]]])
    """


# -- SumPooling / Unpooling ----------------------------------------------------------------------


def sum_pooling(
    x: Any,
    kernel: Any,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> Variable:
    r"""Sum pooling (nnabla ``F.sum_pooling``): :math:`y_{i} = \sum_{k} x_{s i + k - p}` over
    each window, the zero padding counting as zeros.

    The arguments are those of :func:`average_pooling` (``ignore_border=False`` keeps the
    partial windows at the end). Computed as the zero-padded input's average pooling times the
    kernel's size.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.arange(5.0).reshape(1, 1, 5))
        >>> F.sum_pooling(x, (2,), ignore_border=False).d
        array([[[1., 5., 4.]]])
    """
    x = as_variable(x)
    geo = pool_geom("sum_pooling", x.shape, kernel, stride, ignore_border, pad, channel_last)
    nd = len(x.shape)
    widths: list[int] = []
    for a in range(geo.axes[0], nd):
        if a in geo.axes:
            i = geo.axes.index(a)
            widths += [geo.pad[i], geo.right[i]]
        else:
            widths += [0, 0]
    xpad = call("Pad", x, pad_width=tuple(widths)) if any(widths) else x
    nk = len(geo.kernel)
    y = call(
        "AveragePooling",
        xpad,
        kernel=geo.kernel,
        stride=geo.stride,
        ignore_border=True,
        pad=(0,) * nk,
        channel_last=channel_last,
        including_pad=True,
    )
    return call("MulScalar", y, val=float(math.prod(geo.kernel)))  # type: ignore[no-any-return]


def _sum_pooling_ref(
    x: np.ndarray,
    kernel: Any,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> np.ndarray:
    geo = pool_geom("sum_pooling", x.shape, kernel, stride, ignore_border, pad, channel_last)
    big = np.zeros(
        tuple(
            s + (geo.pad[geo.axes.index(a)] + geo.right[geo.axes.index(a)] if a in geo.axes else 0)
            for a, s in enumerate(x.shape)
        )
    )
    big[geo.interior()] = x
    y = np.zeros(geo.out_shape)
    for off in geo.offsets():
        y += big[geo.window(off)]
    return y


def _sum_pooling_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.standard_normal((1, 1, 5, 5))
    yield Sample((x,), {"kernel": (2, 2)}, name="2x2")
    yield Sample((x,), {"kernel": (2, 2), "ignore_border": False}, name="partial windows")
    yield Sample((x,), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}, name="pad, stride")
    yield Sample(
        (x,), {"kernel": (2, 2), "pad": (1, 1), "ignore_border": False}, name="pad, partial"
    )
    yield Sample(
        (rng.standard_normal((1, 4, 3)),),
        {"kernel": (2,), "channel_last": True},
        name="channel_last",
    )
    yield Sample((rng.standard_normal((2, 5)),), {"kernel": (3,), "stride": (1,)}, name="1-d")


def unpooling(x: Any, kernel: Any, channel_last: bool = False) -> Variable:
    r"""Unpooling (nnabla ``F.unpooling``): each element repeated ``kernel`` times along the
    last ``len(kernel)`` axes (those before the channel with ``channel_last``),
    :math:`y_{k i + j} = x_{i}`.

    The gradient sums ``dy`` over each block. Composed of ``Reshape`` and ``BroadcastTo``.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> F.unpooling(gh.Variable(np.array([[1.0, 2.0]])), (2,)).d
        array([[1., 1., 2., 2.]])
    """
    x = as_variable(x)
    fn = "unpooling"
    if kernel is None:
        raise TypeError(f"{fn}: kernel is required")
    ks = (kernel,) if isinstance(kernel, (int, np.integer)) else tuple(kernel)
    k = tuple(int_arg(fn, "kernel", v) for v in ks)
    if not k or any(v < 1 for v in k):
        raise ValueError(f"{fn}: kernel must hold at least one size >= 1, got {kernel!r}")
    shape = tuple(x.shape)
    cl = 1 if channel_last else 0
    nd = len(shape)
    if nd < len(k) + cl:
        raise ValueError(f"{fn}: x of shape {shape} has fewer axes than the kernel {k}")
    first = nd - len(k) - cl
    split = list(shape[:first])
    big = list(shape[:first])
    out = list(shape[:first])
    for a, kk in zip(range(first, first + len(k)), k):
        split += [shape[a], 1]
        big += [shape[a], kk]
        out.append(shape[a] * kk)
    tail = list(shape[first + len(k) :])
    y = call("Reshape", x, shape=tuple(split + tail))
    y = call("BroadcastTo", y, shape=tuple(big + tail))
    return call("Reshape", y, shape=tuple(out + tail))  # type: ignore[no-any-return]


def _unpooling_ref(x: np.ndarray, kernel: Any, channel_last: bool = False) -> np.ndarray:
    k = tuple(kernel)
    first = x.ndim - len(k) - (1 if channel_last else 0)
    y = x
    for i, kk in enumerate(k):
        y = np.repeat(y, kk, axis=first + i)
    return y


def _unpooling_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((1, 2, 3)),), {"kernel": (2,)}, name="1-d")
    yield Sample((rng.standard_normal((1, 2, 2, 3)),), {"kernel": (2, 3)}, name="2-d")
    yield Sample(
        (rng.standard_normal((2, 3, 2)),), {"kernel": (3,), "channel_last": True}, name="cl"
    )
    yield Sample((rng.standard_normal((2, 3)).T,), {"kernel": (1, 2)}, name="non-contiguous")


def register_functions(register: Any) -> None:
    """Register the pooling functions."""
    pool_attrs = {
        "kernel": None,
        "stride": None,
        "ignore_border": True,
        "pad": None,
        "channel_last": False,
    }
    register.function(
        "MaxPooling",
        _max_pooling,
        inputs=("x",),
        attrs=dict(pool_attrs),
        rule=_max_pooling_bw,
        fast_backward=_max_pooling_fast,
        need_inputs=(0,),
        need_outputs=(0,),
        samples=_pool_samples(),
        reference=_max_pooling_ref,
        doc=_DOC_MAX,
    )
    register.function(
        "MaxPoolingBackward",
        _max_pooling_backward,
        inputs=("dy", "x"),
        attrs=dict(pool_attrs),
        rule=_max_pooling_backward_bw,
        fast_backward=_max_pooling_backward_fast,
        need_inputs=(1,),
        need_outputs=(),
        samples=_max_pooling_backward_samples,
        reference=_max_pooling_backward_ref,
        doc=_DOC_MAXBW,
    )
    register.function(
        "MaxPoolingGather",
        _max_pooling_gather,
        inputs=("g", "x"),
        attrs=dict(pool_attrs),
        rule=_max_pooling_gather_bw,
        fast_backward=_max_pooling_gather_fast,
        need_inputs=(1,),
        need_outputs=(),
        samples=_max_pooling_gather_samples,
        reference=_max_pooling_gather_ref,
        doc=_DOC_GATHER,
    )
    register.function(
        "MaxPoolingMask",
        _max_pooling_mask,
        inputs=("x", "y"),
        attrs=dict(pool_attrs),
        differentiable=False,
        samples=_max_pooling_mask_samples,
        reference=_max_pooling_mask_ref,
        doc=_DOC_MASK,
    )
    register.function(
        "MaskedUnpooling",
        _masked_unpooling,
        inputs=("dy", "mask"),
        attrs=dict(pool_attrs),
        rule=_masked_unpooling_bw,
        fast_backward=_masked_unpooling_fast,
        need_inputs=(1,),
        need_outputs=(),
        samples=_masked_unpooling_samples,
        reference=_masked_unpooling_ref,
        doc=_DOC_UNPOOL,
    )
    register.function(
        "MaskedPooling",
        _masked_pooling,
        inputs=("g", "mask"),
        attrs=dict(pool_attrs),
        rule=_masked_pooling_bw,
        fast_backward=_masked_pooling_fast,
        need_inputs=(1,),
        need_outputs=(),
        samples=_masked_pooling_samples,
        reference=_masked_pooling_ref,
        doc=_DOC_MPOOL,
    )
    avg_attrs = {**pool_attrs, "including_pad": True}
    register.function(
        "AveragePooling",
        _average_pooling,
        inputs=("x",),
        attrs=dict(avg_attrs),
        rule=_average_pooling_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_pool_samples(_AVG_EXTRA),
        reference=_average_pooling_ref,
        doc=_DOC_AVG,
    )
    register.function(
        "AveragePoolingBackward",
        _average_pooling_backward,
        inputs=("dy",),
        attrs={**avg_attrs, "x_shape": ()},
        rule=_average_pooling_backward_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_average_pooling_backward_samples,
        reference=_average_pooling_backward_ref,
        doc=_DOC_AVGBW,
    )
    register.composite(
        "GlobalAveragePooling",
        global_average_pooling,
        samples=_gap_samples,
        reference=_gap_ref,
    )
    c = register.composite
    c("SumPooling", sum_pooling, samples=_sum_pooling_samples, reference=_sum_pooling_ref)
    c("Unpooling", unpooling, samples=_unpooling_samples, reference=_unpooling_ref)


def _gap_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((2, 3, 2, 2)),), name="4d")
    yield Sample((rng.standard_normal((2, 3)),), name="2d")
    yield Sample((rng.standard_normal((2, 2, 3)),), name="3d")
    yield Sample((rng.standard_normal((0, 2, 2, 2)),), name="size-0")
    yield Sample((rng.standard_normal((2, 2, 3, 2)).transpose(0, 1, 3, 2),), name="transposed")


def _gap_ref(x: np.ndarray) -> np.ndarray:
    flat = x.reshape(x.shape[0], x.shape[1], math.prod(x.shape[2:]))
    return flat.mean(axis=2).reshape(x.shape[0], x.shape[1], 1, 1)
