"""gradhub-nn-ops: the convolution family, N-d (nnabla layout).

``x`` has shape ``(*batch, C, *spatial)`` with ``batch = x.shape[:base_axis]``; the number of
spatial axes is ``weight.ndim - 2``. Padding is symmetric (``pad[i]`` zeros on both sides of
spatial axis ``i``).

Kernels build a column matrix of the zero-padded input (one row per channel and kernel offset,
one column per output position: one copy from a strided view) and multiply it with the weight
matrix (``xp.matmul``, BLAS on the CPU); groups are a batch dimension of that product. The filter
gradient multiplies dy with the transposed columns and sums over the batch. Deconvolution
multiplies first and scatters the products back with one add per kernel offset, or, with stride
1 and not many more input than output channels, is computed as the convolution of its input
with the flipped weight (a gather, cheaper than the adds; see ``_GATHER_RATIO``). On the CPU the
batch is processed in chunks of about 2 MiB of columns held in reused per-thread scratch buffers
(cache-resident, no page faults from fresh temporaries), the chunks in parallel on
:mod:`gradhub.parallel`'s threads; results do not depend on the number of threads. On other
devices the whole batch is one chunk. For numpy float32/float64 arrays, 1-d and 2-d
convolutions with stride 1 (the forward, the filter gradient, and the data gradient as a gather)
run the compiled kernels of :mod:`gradhub_nn_ops.native` instead: direct sums, no column
matrix; the forward in one chunk of the batch per thread, the filter gradient in the chunks
above. The first-order rules of Convolution (when its data gradient gathers) and of
Deconvolution compute both gradients from one set of columns (those of gy). Large outputs (of
these kernels, of 2x2 max pooling and of ReLU) come from :func:`gradhub.memory.output_array`,
which on the CPU hands out again an array of the same shape that nothing refers to any more.

The family is closed under differentiation, so every rule is differentiable to any order::

    Convolution(x, W, b)      dx  = Deconvolution(gy, W)       dW = ConvolutionFilterGrad(x, gy)
                              db  = Sum(gy)
    Deconvolution(x, W, b)    dx  = Convolution(gy, W)         dW = ConvolutionFilterGrad(gy, x)
                              db  = Sum(gy)
    ConvolutionFilterGrad(x, dy) -> dW
                              dx  = Deconvolution(dy, gW)      ddy = Convolution(x, gW)

Device plugins that replace these kernels (gradhub-cuda, which depends on gradhub-nn-ops) read a
call's geometry with the public helpers :class:`ConvGeom`, :func:`conv_geom`,
:func:`conv_out_shape`, :func:`conv_out_len`, :func:`deconv_out_len`, :func:`ints` and
:func:`filter_kernel`, so that their checks and messages are those of the generic kernels.
"""

from __future__ import annotations

import inspect
import itertools
import math
import threading
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
from gradhub import Sample, Variable, as_variable
from gradhub.memory import output_array
from gradhub.ops import call, fdef
from gradhub.ops import kernel as kernel_of
from gradhub.parallel import get_num_threads, parallel_for

from . import native
from .math import int_arg, is_int

# -- geometry ----------------------------------------------------------------------------------


def an_int(value: Any, fname: str, arg: str) -> int:
    """``value`` (a Python or numpy integer) as an int; a TypeError naming ``fname`` and ``arg``
    for anything else (a float such as 1.5 is never truncated)."""
    if not is_int(value):
        raise TypeError(f"{fname}(): {arg} must be an int, got {value!r}")
    return int(value)


def ints(
    value: Any, nd: int, default: int, fname: str, arg: str, minimum: int = 0
) -> tuple[int, ...]:
    """``value`` (None, an int or a sequence) as a tuple of ``nd`` ints, validated.

    Raises a ValueError/TypeError naming the function ``fname`` and the argument ``arg``.
    """
    if value is None:
        vals: tuple[int, ...] = (default,) * nd
    elif is_int(value):
        vals = (int(value),) * nd
    else:
        try:
            entries = tuple(value)
        except TypeError:
            entries = (None,)  # not iterable: reported below
        if not all(is_int(v) for v in entries):  # 1.5 is never truncated to 1
            raise TypeError(
                f"{fname}(): {arg} must be an int or a sequence of ints, got {value!r}"
            ) from None
        vals = tuple(int(v) for v in entries)
        if len(vals) != nd:
            raise ValueError(
                f"{fname}(): {arg} has {len(vals)} entries but there are {nd} spatial axes "
                f"(got {arg}={value!r})"
            )
    if any(v < minimum for v in vals):
        raise ValueError(f"{fname}(): every entry of {arg} must be >= {minimum}, got {value!r}")
    return vals


class ConvGeom(NamedTuple):  # a NamedTuple: a dataclass costs 0.5 ms of import time
    """Normalized convolution parameters for one call."""

    base_axis: int
    batch: tuple[int, ...]
    n: int
    pad: tuple[int, ...]
    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    group: int

    @property
    def nd(self) -> int:
        return len(self.pad)


def conv_out_len(size: int, k: int, p: int, s: int, d: int) -> int:
    """Output length of a convolution along one axis: ``(L + 2p - d(k-1) - 1) // s + 1``."""
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def deconv_out_len(size: int, k: int, p: int, s: int, d: int, op: int = 0) -> int:
    """Output length of a deconvolution along one axis: ``(I-1)s - 2p + d(k-1) + 1 + op``."""
    return (size - 1) * s - 2 * p + d * (k - 1) + 1 + op


def conv_geom(
    fname: str,
    x_shape: Sequence[int],
    w_shape: Sequence[int],
    base_axis: Any,
    pad: Any,
    stride: Any,
    dilation: Any,
    group: Any,
) -> ConvGeom:
    """The :class:`ConvGeom` of a convolution (or deconvolution) call: ``base_axis`` made
    non-negative, ``pad``, ``stride``, ``dilation`` one int per spatial axis, ``group`` checked.

    Raises ValueError or TypeError naming ``fname`` and the argument for bad arguments, a weight
    with a kernel axis of size 0, or an ``x`` that does not match a ``len(w_shape) - 2``-d
    kernel. Device plugins (gradhub-cuda) call it to read a call's geometry as the generic
    kernels do.
    """
    if len(w_shape) < 3:
        raise ValueError(
            f"{fname}(): weight must have at least 3 axes (out, in, *kernel), got shape "
            f"{tuple(w_shape)}"
        )
    nd = len(w_shape) - 2
    if 0 in tuple(w_shape)[2:]:
        raise ValueError(
            f"{fname}(): weight of shape {tuple(w_shape)} has a kernel axis of size 0 (the axes "
            "after the first two): every kernel size must be at least 1"
        )
    ba = an_int(base_axis, fname, "base_axis")
    if ba < 0:
        ba += len(x_shape)
    if ba < 0 or len(x_shape) != ba + 1 + nd:
        raise ValueError(
            f"{fname}(): x of shape {tuple(x_shape)} with base_axis={base_axis} does not match a "
            f"{nd}-d kernel: x needs base_axis + 1 + {nd} axes (*batch, channels, *spatial)"
        )
    g = an_int(group, fname, "group")
    if g < 1:
        raise ValueError(f"{fname}(): group must be >= 1, got {group!r}")
    batch = tuple(int(s) for s in x_shape[:ba])
    return ConvGeom(
        base_axis=ba,
        batch=batch,
        n=math.prod(batch),
        pad=ints(pad, nd, 0, fname, "pad"),
        stride=ints(stride, nd, 1, fname, "stride", 1),
        dilation=ints(dilation, nd, 1, fname, "dilation", 1),
        group=g,
    )


def _attrs(geo: ConvGeom) -> dict[str, Any]:
    return {
        "base_axis": geo.base_axis,
        "pad": geo.pad,
        "stride": geo.stride,
        "dilation": geo.dilation,
        "group": geo.group,
    }


def conv_out_shape(
    fname: str, spatial: Sequence[int], kernel: Sequence[int], geo: ConvGeom
) -> tuple[int, ...]:
    """The spatial output shape of a convolution of an input of spatial shape ``spatial`` with
    ``kernel`` and the geometry ``geo`` (:func:`conv_geom`); a ValueError naming ``fname`` when
    the dilated kernel does not fit in the padded input."""
    out = tuple(
        conv_out_len(L, k, p, s, d)
        for L, k, p, s, d in zip(spatial, kernel, geo.pad, geo.stride, geo.dilation)
    )
    if any(o < 1 for o in out):
        raise ValueError(
            f"{fname}(): the input's spatial shape {tuple(spatial)} (pad {geo.pad}) is smaller "
            f"than the dilated kernel {tuple(kernel)} (dilation {geo.dilation})"
        )
    return out


# -- array helpers (xp = numpy or cupy) --------------------------------------------------------


def _pad(xp: Any, x: Any, pad: Sequence[int]) -> Any:
    """Zero-pad the trailing ``len(pad)`` axes of ``x`` symmetrically."""
    if not any(pad):
        return x
    lead = x.ndim - len(pad)
    out = xp.zeros(
        x.shape[:lead] + tuple(s + 2 * p for s, p in zip(x.shape[lead:], pad)), dtype=x.dtype
    )
    out[(Ellipsis, *(slice(p, p + s) for s, p in zip(x.shape[lead:], pad)))] = x
    return out


#: On the CPU, column matrices are built and consumed a few samples at a time (chunks of the
#: batch of about ``_BLOCK_BYTES`` of columns, so that each stays in a core's 1 MiB L2 cache), in
#: per-thread scratch buffers reused from call to call (fresh multi-megabyte temporaries cost a
#: page fault per 4 KiB on every call); the chunks run on ``gradhub.parallel``'s threads. The
#: chunking depends on the shapes only, never on the number of threads, so results (the filter
#: gradient's partial sums included, combined in chunk order) are the same for any thread count.
#: Devices take the whole batch at once. Measured on the W3 shapes (2026-11-26, one thread,
#: first quartiles): 0.5, 1 and 2 MiB blocks within 5% of one another for the forward kernel,
#: the filter gradient 2.6 / 2.6 / 1.8 ms (conv1) at 0.5 / 1 / 2 MiB: 2 MiB kept.
_BLOCK_BYTES = 2097152
#: The number of chunks is rounded up to a multiple of this, so that they share out evenly over
#: 1, 2 or 4 threads (3 chunks on 2 threads take two rounds).
_CHUNK_MULTIPLE = 4
_SCRATCH_MAX = 1 << 22
_scratch_store = threading.local()


#: OpenBLAS runs a GEMM with ``m * n * k`` at most ``65536 * GEMM_MULTITHREAD_THRESHOLD`` (4 by
#: default) on one thread; above that it splits the product over its thread pool. For the skinny
#: per-sample products of a convolution the split buys nothing (measured: no faster on 2 cores)
#: and costs milliseconds per call whenever another process holds a core (the pool's threads wait
#: for one another); inside the chunks, which run on several threads already, it would also put
#: two OpenBLAS pools on the same cores. So on the CPU the products are cut along their long axis
#: into pieces below that size. (While gradhub.parallel's pool exists, it also keeps OpenBLAS on
#: one thread: its idle threads spin for about 0.1 s after each multithreaded product, such as
#: W3's affine layer, and took the chunks' cores; see gradhub.parallel.)
_GEMM_ST = 1 << 18


#: the shortest piece :func:`_piece` cuts: where ``rest`` alone is above ``_GEMM_ST``, pieces
#: of a few columns would turn one product into thousands of matrix-vector ones (a strided
#: convolution's filter gradient took 13x its stride-1 time), so they stay this long
_PIECE_MIN = 128


def _piece(xp: Any, rest: int, length: int) -> int:
    """Length of the pieces of an axis of ``length`` such that a GEMM of ``rest * piece`` stays
    single-threaded (the whole length on other devices), and at least ``_PIECE_MIN`` long."""
    if xp is not np or rest * length <= _GEMM_ST:
        return max(length, 1)
    count = -(-rest * length // _GEMM_ST)
    return max(1, min(length, _PIECE_MIN), -(-length // count))


def _matmul_cols(xp: Any, a: Any, b: Any, out: Any) -> None:
    """``out[...] = a @ b`` computed in pieces along the last axis of ``b`` (see ``_GEMM_ST``)."""
    m = b.shape[-1]
    step = _piece(xp, a.shape[-2] * a.shape[-1], m)
    if step >= m:
        xp.matmul(a, b, out=out)
        return
    for j in range(0, m, step):
        xp.matmul(a, b[..., j : j + step], out=out[..., j : j + step])


def _chunks(xp: Any, n: int, per_sample_bytes: int) -> list[tuple[int, int]]:
    """The batch ``range(n)`` cut into equal chunks of about ``_BLOCK_BYTES`` (one chunk on
    devices other than the CPU). Depends on the shapes only (never on the thread count)."""
    if xp is not np or n <= 1:
        return [(0, n)]
    count = max(1, -(-n * per_sample_bytes // _BLOCK_BYTES))
    count = min(n, -(-count // _CHUNK_MULTIPLE) * _CHUNK_MULTIPLE)
    step = -(-n // count)
    return [(i, min(n, i + step)) for i in range(0, n, step)]


def _each(chunks: Sequence[tuple[int, int]], body: Any) -> None:
    """``body(i)`` for every chunk, on ``gradhub.parallel``'s threads when there are several."""
    if len(chunks) == 1:
        body(0)
    else:
        parallel_for(len(chunks), body)


def _scratch(xp: Any, shape: Sequence[int], dtype: Any, slot: str, zero: bool = False) -> Any:
    """A temporary array for use within one chunk (a reused buffer of the calling thread on the
    CPU: chunks running on pool threads use the pool threads' own buffers).

    Each ``slot`` holds one live temporary at a time; the result must not outlive the chunk.
    """
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if xp is not np or nbytes > _SCRATCH_MAX:
        return (xp.zeros if zero else xp.empty)(tuple(shape), dtype=dtype)
    store = getattr(_scratch_store, "bufs", None)
    if store is None:
        store = _scratch_store.bufs = {}
    buf = store.get(slot)
    if buf is None or buf.nbytes < nbytes:
        buf = store[slot] = np.empty(max(nbytes, 64), dtype=np.uint8)
    out = buf[:nbytes].view(dtype).reshape(tuple(shape))
    if zero:
        out.fill(0)
    return out


def _columns(
    xp: Any,
    x: Any,
    kernel: Sequence[int],
    out: Sequence[int],
    pad: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    dtype: Any,
) -> Any:
    """The columns ``(B, C, K, M)`` of ``x`` (B, C, *spatial): ``cols[b, c, k, p]`` is the
    zero-padded input that kernel offset ``k`` (row-major) sees at output position ``p``, that is
    ``xpad[b, c, p * stride + k * dilation]``, in ``dtype``. One copy from a strided view of
    the padded input (a scratch buffer of the chunk); ``x`` itself when it already is that
    matrix (1x1 kernels, stride 1, no padding). Valid until the next call in the thread."""
    b, c = x.shape[:2]
    k = math.prod(kernel)
    m = math.prod(out)
    if any(pad):
        full = tuple(s + 2 * p for s, p in zip(x.shape[2:], pad))
        xpad = _scratch(xp, (b, c, *full), x.dtype, "pad", zero=True)
        xpad[(slice(None), slice(None), *(slice(p, p + s) for s, p in zip(x.shape[2:], pad)))] = x
    else:
        if k == 1 and all(s == 1 for s in stride) and x.dtype == dtype and x.flags.c_contiguous:
            return x.reshape(b, c, 1, m)
        xpad = x
    st = xpad.strides
    nd = len(kernel)
    view = xp.lib.stride_tricks.as_strided(
        xpad,
        shape=(b, c, *kernel, *out),
        strides=(
            st[0],
            st[1],
            *(st[2 + i] * dilation[i] for i in range(nd)),
            *(st[2 + i] * stride[i] for i in range(nd)),
        ),
    )
    cols = _scratch(xp, (b, c, *kernel, *out), dtype, "cols")
    cols[...] = view
    return cols.reshape(b, c, k, m)


# Stride-1 layout ("flat offsets"): the padded input is flattened over its spatial axes, so the
# value that kernel offset ``k`` sees at output position ``p`` is at flat index
# ``p . st + k . (dilation * st)`` (``st``: the padded array's row-major strides in elements).
# Outputs are computed on an extended grid (first axis: the output length, other axes: the
# padded lengths) and the extra positions are discarded: every row of the columns is then one
# contiguous slice (copied in long runs) where the exact grid copies runs of one output row.
#
#: Measured (2026-11-26, one thread, thread CPU time, first quartiles of 60 in one process, W3's
#: shapes, flat over exact grid): output rows of 16 (W3's second layer, 8 -> 16 maps on 16x16):
#: forward 0.94, filter gradient 0.90, data gradient (gather) 0.79, Convolution's shared rule
#: 0.89; rows of 32 (the first layer, 3 -> 8 maps on 32x32): forward 0.97, filter gradient 1.16
#: (dy copied onto the extended grid, 6% more columns). So the flat layout is used for stride 1
#: when the output's last axis is shorter than ``_FLAT_BELOW``.
_FLAT_BELOW = 32


def _flat_offsets(
    full: Sequence[int], kernel: Sequence[int], dilation: Sequence[int]
) -> tuple[list[int], int]:
    """Flat offset of every kernel offset (row-major) in an array of spatial shape ``full``, and
    the slack needed after the array."""
    st = tuple(math.prod(full[i + 1 :]) for i in range(len(full)))
    offs = [
        sum(k * d * t for k, d, t in zip(off, dilation, st))
        for off in itertools.product(*(range(k) for k in kernel))
    ]
    slack = sum((k - 1) * d * t for k, d, t in zip(kernel[1:], dilation[1:], st[1:]))
    return offs, slack


def _conv_pass(
    xp: Any,
    x: Any,
    kernel: Sequence[int],
    out: Sequence[int],
    geo: ConvGeom,
    pad: Sequence[int],
    dtype: Any,
    wm: Any = None,
    y: Any = None,
    bias: Any = None,
    dy: Any = None,
) -> Any:
    """The products of the columns of ``x`` (N, C, *spatial) of a convolution with output
    spatial shape ``out`` (padding ``pad``; stride, dilation and group of ``geo``), chunk by chunk
    over the batch (in parallel on the CPU), each chunk's columns built once for both:

    - with ``y`` (N, O, *out): ``y`` = the convolution with the weight matrix ``wm`` (group,
      O // group, C // group * K), plus ``bias`` (O,) if given;
    - with ``dy`` (N, O, *out): returns the filter gradient (group, O // group, C // group * K),
      ``sum_n (cols[n] @ dy[n]^T)^T``, the chunks' partial sums added in chunk order (so the same
      for any number of threads); None without ``dy``.

    With stride 1 and short output rows the columns are those of the extended grid (see
    ``_FLAT_BELOW``).
    """
    n, c = x.shape[:2]
    g = geo.group
    cg = c // g
    k = math.prod(kernel)
    nd = len(kernel)
    out = tuple(out)
    dtype = np.dtype(dtype)
    if native.usable(xp, dtype, nd, geo.stride):
        return _native_pass(x, kernel, out, geo, pad, dtype, wm, y, bias, dy)
    flat = (
        out[-1] < _FLAT_BELOW
        and all(s == 1 for s in geo.stride)
        and not (k == 1 and not any(pad) and x.dtype == dtype and x.flags.c_contiguous)
    )
    if flat:
        full = tuple(s + 2 * p for s, p in zip(x.shape[2:], pad))
        offs, slack = _flat_offsets(full, kernel, geo.dilation)
        total = math.prod(full)
        ext = (out[0], *full[1:])
        inner = (slice(None), slice(None), *(slice(p, p + s) for s, p in zip(x.shape[2:], pad)))
    else:
        ext = out
    valid = (slice(None), slice(None), *(slice(0, s) for s in out))
    crop = ext != out
    m = math.prod(ext)
    bb = None if bias is None else bias.reshape((-1,) + (1,) * (nd if crop else 1))
    dyr = None
    if dy is not None:
        dyr = dy.reshape(n, g, -1, math.prod(out)).astype(dtype, copy=False)
    step = m if dyr is None else _piece(xp, dyr.shape[2] * cg * k, m)
    chunks = _chunks(xp, n, c * k * m * dtype.itemsize)
    parts: list[Any] = [None] * len(chunks)

    def body(i: int) -> None:
        a, b = chunks[i]
        if flat:
            src = _scratch(xp, (b - a, c, total + slack), x.dtype, "pad", zero=True)
            src[:, :, :total].reshape(b - a, c, *full)[inner] = x[a:b]
            cols = _scratch(xp, (b - a, c, k, m), dtype, "cols")
            for j, f in enumerate(offs):
                cols[:, :, j] = src[:, :, f : f + m]
        else:
            cols = _columns(xp, x[a:b], kernel, out, pad, geo.stride, geo.dilation, dtype)
        cols = cols.reshape(b - a, g, cg * k, m)
        if y is not None:
            if crop:  # the extended grid in scratch memory, its valid part copied into y
                ye = _scratch(xp, (b - a, g, wm.shape[1], m), dtype, "yext")
                _matmul_cols(xp, wm, cols, ye)
                ye = ye.reshape(b - a, -1, *ext)[valid]
                if bb is None:
                    y[a:b] = ye
                else:
                    xp.add(ye, bb, out=y[a:b])
            else:
                yc = y[a:b].reshape(b - a, g, -1, m)
                _matmul_cols(xp, wm, cols, yc)
                if bb is not None:
                    yb = yc.reshape(b - a, -1, m)
                    yb += bb
        if dyr is not None:
            # per sample and group (Cg*K, M) @ (M, Og), summed over the chunk (transposed at
            # the end: this orientation measured 7-25% faster than (Og, M) @ (M, Cg*K) on W3's
            # shapes, one thread); the contraction over M in single-threaded pieces (_GEMM_ST)
            d = dyr[a:b]
            if crop:  # dy on the extended grid, zero at the extra positions
                de = _scratch(xp, (b - a, dy.shape[1], *ext), dtype, "dyext", zero=True)
                de[valid] = dy[a:b]
                d = de.reshape(b - a, g, -1, m)
            acc = None
            for j in range(0, m, step):
                p = xp.matmul(cols[..., j : j + step], d[..., j : j + step].swapaxes(-1, -2))
                p = p.sum(axis=0)
                if acc is None:
                    acc = p
                else:
                    acc += p
            parts[i] = acc

    _each(chunks, body)
    if dyr is None:
        return None
    dw = parts[0]
    for p in parts[1:]:  # in chunk order: the same sum for any number of threads
        dw += p
    return xp.ascontiguousarray(dw.swapaxes(-1, -2))


def _native_pass(
    x: Any,
    kernel: Sequence[int],
    out: Sequence[int],
    geo: ConvGeom,
    pad: Sequence[int],
    dtype: np.dtype[Any],
    wm: Any,
    y: Any,
    bias: Any,
    dy: Any,
) -> Any:
    """:func:`_conv_pass` by the compiled kernels (:mod:`gradhub_nn_ops.native`), for numpy
    arrays when :func:`gradhub_nn_ops.native.usable`, on :mod:`gradhub.parallel`'s threads: the
    forward alone in one chunk of the batch per thread, the filter gradient in the chunks of
    :func:`_chunks` (fixed by the shapes), their partial sums added in chunk order; no column
    matrix. ``y`` is C-contiguous (an :func:`gradhub.memory.output_array`, as for the numpy
    kernels)."""
    n, c = x.shape[:2]
    g = geo.group
    xc = np.ascontiguousarray(x, dtype=dtype)
    if dy is None:  # each sample's output alone: any split gives the same bits; one per thread
        threads = min(n, get_num_threads())
        step = -(-n // threads)
        chunks = [(i, min(n, i + step)) for i in range(0, n, step)]
    else:  # the filter gradient's partial sums: chunks fixed by the shapes alone
        chunks = _chunks(np, n, c * math.prod(kernel) * math.prod(out) * dtype.itemsize)
    w = None
    if y is not None:
        w = np.ascontiguousarray(wm, dtype=dtype).reshape(y.shape[1], c // g, *kernel)
    b = None if bias is None else np.ascontiguousarray(bias, dtype=dtype)
    dyc = None if dy is None else np.ascontiguousarray(dy, dtype=dtype)
    parts: list[Any] = [None] * len(chunks)

    def body(i: int) -> None:
        a, e = chunks[i]
        if y is not None:
            native.conv_forward(xc[a:e], w, b, y[a:e], pad, geo.dilation, g)
        if dyc is not None:
            gw = np.zeros((dyc.shape[1], c // g, *kernel), dtype)
            native.filter_grad(xc[a:e], dyc[a:e], gw, kernel, pad, geo.dilation, g)
            parts[i] = gw

    _each(chunks, body)
    if dyc is None:
        return None
    dw = parts[0]
    for p in parts[1:]:  # in chunk order: the same sum for any number of threads
        dw += p
    return dw.reshape(g, dyc.shape[1] // g, c // g * math.prod(kernel))


def _conv_nd(xp: Any, x: Any, w: Any, geo: ConvGeom, fname: str, bias: Any = None) -> Any:
    """Convolution of ``x`` (N, C, *spatial) with ``w`` (O, C // group, *kernel), plus ``bias``
    (O,) if given."""
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    kernel = w.shape[2:]
    g = geo.group
    if c != cg * g:
        raise ValueError(
            f"{fname}(): x has {c} channels but weight {tuple(w.shape)} with group={g} expects "
            f"{cg * g} (weight.shape[1] * group)"
        )
    if o % g:
        raise ValueError(f"{fname}(): weight has {o} output maps, which group={g} does not divide")
    out = conv_out_shape(fname, x.shape[2:], kernel, geo)
    dtype = np.result_type(x.dtype, w.dtype)
    late_bias = bias is not None and np.result_type(dtype, bias.dtype) != dtype
    y = output_array(xp, (n, o, *out), dtype)
    if n:
        wm = w.reshape(g, o // g, cg * math.prod(kernel)).astype(dtype, copy=False)
        _conv_pass(xp, x, kernel, out, geo, geo.pad, dtype, wm, y, None if late_bias else bias)
    if late_bias:  # a wider bias promotes the result (numpy's rules)
        y = y + bias.reshape((-1,) + (1,) * len(out))
    return y


#: Deconvolution with stride 1 is also the convolution of its input, padded by ``d * (k - 1) -
#: p``, with the weight transposed and flipped: columns of the input copied (a gather) instead of
#: products scattered into the output with one add per kernel offset. The gather copies ``Cin *
#: K`` rows per sample where the scatter adds ``Cout * K``; copies cost less than adds, but the
#: gather's product has only ``Cout`` rows (a thin, memory-bound GEMM). Measured (2026-11-26,
#: ``f5e2fc2``, one thread, thread CPU time, batch 64, 3x3, pad 1, float32, first quartiles of
#: 40, time of the gather over the scatter) by ``Cin / Cout``: 0.5 (16 -> 32 maps, 8x8): 0.53;
#: 1 (16 -> 16, 16x16; 8 -> 8, 32x32): 0.66, 0.66; 1.33 (16 -> 12): 0.76; 2 (16 -> 8, 16x16,
#: W3's second layer; 32 -> 16, 8x8): 0.83, 0.90; 2.67 (8 -> 3, 32x32, W3's first layer): 1.54;
#: 4 (16 -> 4): 1.21. The gather is used up to the crossover, ``Cin <= 2.25 * Cout`` (per
#: group).
_GATHER_RATIO = 2.25


def _deconv_gathers(
    cig: int,
    og: int,
    geo: ConvGeom,
    kernel: Sequence[int],
    op: Sequence[int],
    xp: Any,
    dtype: Any,
) -> bool:
    """Whether :func:`_deconv_nd` computes the deconvolution as a convolution (see
    ``_GATHER_RATIO``): stride 1, no output_padding, ``pad <= dilation * (kernel - 1)``, and
    not many more input than output channels per group (any number where the compiled kernels
    compute that convolution: no columns there)."""
    return (
        all(s == 1 for s in geo.stride)
        and not any(op)
        and all(p <= d * (k - 1) for p, d, k in zip(geo.pad, geo.dilation, kernel))
        and (cig <= _GATHER_RATIO * og or native.usable(xp, dtype, len(kernel), geo.stride))
    )


def _deconv_nd(xp: Any, x: Any, w: Any, geo: ConvGeom, op: Sequence[int], fname: str) -> Any:
    """Deconvolution of ``x`` (N, Cin, *spatial) with ``w`` (Cin, Og, *kernel)."""
    n, c = x.shape[:2]
    ci, og = w.shape[:2]
    kernel = tuple(w.shape[2:])
    g = geo.group
    if c != ci:
        raise ValueError(
            f"{fname}(): x has {c} channels but weight {tuple(w.shape)} expects {ci} "
            "(weight.shape[0])"
        )
    if ci % g:
        raise ValueError(f"{fname}(): weight has {ci} input maps, which group={g} does not divide")
    insp = x.shape[2:]
    out = tuple(
        deconv_out_len(i, k, p, s, d, e)
        for i, k, p, s, d, e in zip(insp, kernel, geo.pad, geo.stride, geo.dilation, op)
    )
    if any(L < 1 for L in out):
        raise ValueError(
            f"{fname}(): the output shape {out} is empty: pad {geo.pad} is too large for input "
            f"{tuple(insp)} and kernel {tuple(kernel)}"
        )
    k = math.prod(kernel)
    cig = ci // g
    nd = len(kernel)
    dtype = np.result_type(x.dtype, w.dtype)
    y = output_array(xp, (n, g * og, *out), dtype)
    if n == 0:
        return y
    if _deconv_gathers(cig, og, geo, kernel, op, xp, dtype):
        # y = conv(x padded by d(k-1)-p, W'), W'[g, o, c, k] = W[g*cig + c, o, K-1-k]
        flip = (slice(None),) * 3 + (slice(None, None, -1),) * nd
        wf = w.reshape(g, cig, og, *kernel).swapaxes(1, 2)[flip]
        wm = xp.ascontiguousarray(wf, dtype=dtype).reshape(g, og, cig * k)
        cpad = tuple(d * (kk - 1) - p for p, d, kk in zip(geo.pad, geo.dilation, kernel))
        _conv_pass(xp, x, kernel, out, geo, cpad, dtype, wm, y)
        return y
    full = tuple(L + 2 * p for L, p in zip(out, geo.pad))
    total = math.prod(full)
    # stride 1: the products on the input's extended grid, each kernel offset's add one
    # contiguous slice of the flat padded output (see _FLAT_BELOW). Measured against the adds on
    # the exact grid (2026-11-26, one thread, thread CPU time, first quartiles of 60): 0.88 of
    # the time for 8 -> 3 maps on 32x32 (W3's first layer), 0.76 for 16 -> 8 on 16x16
    flat = all(s == 1 for s in geo.stride)
    ext = (insp[0], *full[1:]) if flat else tuple(insp)
    offs, slack = _flat_offsets(full, kernel, geo.dilation) if flat else ([], 0)
    m = math.prod(ext)
    crop = flat or any(geo.pad)
    wt = w.reshape(g, cig, og * k).transpose(0, 2, 1).astype(dtype, copy=False)
    offsets = list(itertools.product(*(range(kk) for kk in kernel)))
    slices = [
        (
            slice(None),
            slice(None),
            *(
                slice(o * d, o * d + s * (i - 1) + 1, s)
                for o, d, s, i in zip(off, geo.dilation, geo.stride, insp)
            ),
        )
        for off in offsets
    ]
    inner = (slice(None), slice(None), *(slice(p, p + L) for p, L in zip(geo.pad, out)))
    valid = (slice(None), slice(None), *(slice(0, s) for s in insp))
    chunks = _chunks(xp, n, g * og * k * m * np.dtype(dtype).itemsize)

    def body(i: int) -> None:
        # per chunk: the products (B, g, Og*K, M), then one add per kernel offset into the padded
        # output (a scratch buffer when it is cropped afterwards)
        a, b = chunks[i]
        xb = x[a:b]
        if ext != tuple(insp):  # x on the extended grid, zero at the extra positions
            e = _scratch(xp, (b - a, c, *ext), x.dtype, "ext", zero=True)
            e[valid] = xb
            xb = e
        cols = _scratch(xp, (b - a, g, og * k, m), dtype, "cols")
        _matmul_cols(xp, wt, xb.reshape(b - a, g, cig, m), cols)
        if flat:
            cols = cols.reshape(b - a, g * og, k, m)
            buf = _scratch(xp, (b - a, g * og, total + slack), dtype, "pad", zero=True)
            for j, f in enumerate(offs):
                buf[:, :, f : f + m] += cols[:, :, j]
            buf = buf[:, :, :total].reshape(b - a, g * og, *full)
        else:
            cols = cols.reshape(b - a, g * og, *kernel, *insp)
            if crop:
                buf = _scratch(xp, (b - a, g * og, *full), dtype, "pad", zero=True)
            else:
                buf = y[a:b]
                buf.fill(0)
            for off, sl in zip(offsets, slices):
                buf[sl] += cols[(slice(None), slice(None), *off)]
        if crop:
            y[a:b] = buf[inner]

    _each(chunks, body)
    return y


def _filter_grad_nd(
    xp: Any, x: Any, dy: Any, kernel: Sequence[int], geo: ConvGeom, fname: str
) -> Any:
    """Gradient of a convolution w.r.t. its weight: shape (O, C // group, *kernel)."""
    n, c = x.shape[:2]
    o = dy.shape[1]
    g = geo.group
    if c % g or o % g:
        raise ValueError(
            f"{fname}(): group={g} must divide the channels of x ({c}) and of dy ({o})"
        )
    out = conv_out_shape(fname, x.shape[2:], kernel, geo)
    if tuple(dy.shape[2:]) != out:
        raise ValueError(
            f"{fname}(): dy has spatial shape {tuple(dy.shape[2:])} but the convolution of x "
            f"{tuple(x.shape)} gives {out}"
        )
    cg = c // g
    dtype = np.result_type(x.dtype, dy.dtype)
    if n == 0:
        return xp.zeros((o, cg, *kernel), dtype=dtype)
    dw = _conv_pass(xp, x, kernel, out, geo, geo.pad, dtype, dy=dy)
    return dw.reshape(o, cg, *kernel)


def _flat(x: Any, geo: ConvGeom) -> Any:
    return x.reshape(geo.n, *x.shape[geo.base_axis :])


def _check_bias(fname: str, b: Any, o: int) -> None:
    if tuple(b.shape) != (o,):
        raise ValueError(f"{fname}(): bias must have shape ({o},), got {tuple(b.shape)}")


# -- forward kernels ---------------------------------------------------------------------------


def _convolution(
    xp: Any,
    x: Any,
    w: Any,
    b: Any = None,
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
) -> Any:
    geo = conv_geom("convolution", x.shape, w.shape, base_axis, pad, stride, dilation, group)
    if b is not None:
        _check_bias("convolution", b, w.shape[0])
    y = _conv_nd(xp, _flat(x, geo), w, geo, "convolution", b)
    return y.reshape(geo.batch + y.shape[1:])


def _deconvolution(
    xp: Any,
    x: Any,
    w: Any,
    b: Any = None,
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    output_padding: Any = None,
) -> Any:
    geo = conv_geom("deconvolution", x.shape, w.shape, base_axis, pad, stride, dilation, group)
    op = ints(output_padding, geo.nd, 0, "deconvolution", "output_padding")
    if any(e >= s and e >= d for e, s, d in zip(op, geo.stride, geo.dilation)):
        raise ValueError(
            f"deconvolution(): output_padding {op} must be smaller than stride {geo.stride} "
            f"or dilation {geo.dilation} (axis by axis, as PyTorch)"
        )
    y = _deconv_nd(xp, _flat(x, geo), w, geo, op, "deconvolution")
    if b is not None:
        _check_bias("deconvolution", b, y.shape[1])
        bb = b.reshape((-1,) + (1,) * geo.nd)
        if bb.dtype != y.dtype and np.result_type(y.dtype, bb.dtype) != y.dtype:
            y = y + bb  # a wider bias promotes the result (numpy's rules), as x and w do
        else:
            y += bb
    return y.reshape(geo.batch + y.shape[1:])


def filter_kernel(kernel: Any) -> tuple[int, ...]:
    """ConvolutionFilterGrad's ``kernel`` as a tuple of ints >= 1 (an int ``k`` means ``(k,)``,
    one spatial axis), checked; the forward kernel and both backward rules use it."""
    fname = "convolution_filter_grad"
    if is_int(kernel):
        nd = 1
    else:
        try:
            nd = len(tuple(kernel))
        except TypeError:
            raise TypeError(
                f"{fname}(): kernel must be an int or a sequence of ints, got {kernel!r}"
            ) from None
        if nd == 0:
            raise ValueError(f"{fname}(): kernel must have at least one entry, got {kernel!r}")
    return ints(kernel, nd, 1, fname, "kernel", 1)


def _convolution_filter_grad(
    xp: Any,
    x: Any,
    dy: Any,
    kernel: Any = (1,),
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
) -> Any:
    fname = "convolution_filter_grad"
    k = filter_kernel(kernel)
    w_shape = (1, 1, *k)
    geo = conv_geom(fname, x.shape, w_shape, base_axis, pad, stride, dilation, group)
    if tuple(dy.shape[: geo.base_axis]) != geo.batch or dy.ndim != x.ndim:
        raise ValueError(
            f"{fname}(): dy of shape {tuple(dy.shape)} does not match x of shape "
            f"{tuple(x.shape)} (same batch axes and number of axes expected)"
        )
    return _filter_grad_nd(xp, _flat(x, geo), _flat(dy, geo), k, geo, fname)


# -- backward rules: each differentiable graph rule (registered functions only), then beside it
# the fast first-order rule computing the same products on arrays (each product through the kernel
# of its function for the array's device: gradhub.ops.kernel) ------------------------------------


def _call(name: str, *args: Any, **attrs: Any) -> Any:
    from gradhub.ops import call

    return call(name, *args, **attrs)


def _needs(v: Any) -> bool:
    return v is not None and bool(v.need_grad)


def _bias_grad(g: Any, base_axis: int) -> Any:
    axes = tuple(i for i in range(g.ndim) if i != base_axis)
    return _call("Sum", g, axis=axes, keepdims=False)


def _bias_grad_array(xp: Any, g: Any, base_axis: int) -> Any:
    # the Sum kernel of g's device (gradhub-cuda's sums over all axes but one as one reduction
    # over a contiguous axis)
    axes = tuple(i for i in range(g.ndim) if i != base_axis)
    return kernel_of("Sum", g)(xp, g, axis=axes, keepdims=False)


def _dx_output_padding(
    x_spatial: Sequence[int], y_spatial: Sequence[int], kernel: Sequence[int], geo: ConvGeom
) -> tuple[int, ...]:
    return tuple(
        L - deconv_out_len(i, k, p, s, d)
        for L, i, k, p, s, d in zip(x_spatial, y_spatial, kernel, geo.pad, geo.stride, geo.dilation)
    )


def _convolution_bw(  # type: ignore[no-untyped-def]
    gy,
    inputs,
    in_shapes,
    outputs,
    out_shapes,
    base_axis,
    pad,
    stride,
    dilation,
    group,
):
    g = gy[0]
    x, w = inputs[0], inputs[1]
    xs, ws = in_shapes[0], in_shapes[1]
    geo = conv_geom("convolution", xs, ws, base_axis, pad, stride, dilation, group)
    kernel = tuple(ws[2:])
    ba = geo.base_axis
    res: list[Any] = [None, None]
    if _needs(x):
        op = _dx_output_padding(xs[ba + 1 :], out_shapes[0][ba + 1 :], kernel, geo)
        res[0] = _call("Deconvolution", g, w, output_padding=op, **_attrs(geo))
    if _needs(w):
        res[1] = _call("ConvolutionFilterGrad", x, g, kernel=kernel, **_attrs(geo))
    if len(in_shapes) > 2:
        res.append(_bias_grad(g, ba))
    return res


def _convolution_fast(  # type: ignore[no-untyped-def]
    xp,
    gy,
    inputs,
    in_shapes,
    outputs,
    out_shapes,
    base_axis,
    pad,
    stride,
    dilation,
    group,
    need_grads,
):
    g = gy[0]
    x, w = inputs[0], inputs[1]
    xs, ws = in_shapes[0], in_shapes[1]
    geo = conv_geom("convolution", xs, ws, base_axis, pad, stride, dilation, group)
    kernel = tuple(ws[2:])
    ba = geo.base_axis
    res: list[Any] = [None, None]
    both = _data_and_filter_grads(xp, g, w, x, geo) if need_grads[0] and need_grads[1] else None
    if both is not None:
        res = list(both)
    else:
        if need_grads[0]:
            op = _dx_output_padding(xs[ba + 1 :], out_shapes[0][ba + 1 :], kernel, geo)
            dc = kernel_of("Deconvolution", g)
            res[0] = dc(xp, g, w, None, output_padding=op, **_attrs(geo))
        if need_grads[1]:
            res[1] = kernel_of("ConvolutionFilterGrad", x)(xp, x, g, kernel, **_attrs(geo))
    if len(in_shapes) > 2:
        res.append(_bias_grad_array(xp, g, ba) if need_grads[2] else None)
    return res


def _generic_kernels(like: Any, *names: str) -> bool:
    """Whether the functions ``names`` run their generic kernels (these) on ``like``'s device,
    that is, no device plugin serves them there (then a rule may compute their products
    together)."""
    return all(kernel_of(n, like) is fdef(n).forward for n in names)


def _data_and_filter_grads(xp: Any, gy: Any, w: Any, x: Any, geo: ConvGeom) -> Any:
    """Convolution's two gradients ``(dx, dW)`` from one set of columns, those of ``gy`` padded
    by ``d * (k - 1) - p``, when the data gradient gathers (stride 1, see ``_GATHER_RATIO``):
    ``dx = conv(gy, W')`` with the flipped, transposed weight ``W'``, and, with the same columns,
    ``dW[o, c, k] = sum_{n, q} x[n, c, q] * gypad[n, o, q + K - 1 - k]`` (the filter gradient
    of that convolution, flipped back). The columns of ``x`` are never built. None when another
    kernel serves either function on the arrays' device, the dtypes differ, or the data
    gradient scatters (the two kernels are called then)."""
    if not (
        _generic_kernels(gy, "Deconvolution", "ConvolutionFilterGrad")
        and gy.dtype == w.dtype == x.dtype
    ):
        return None
    kernel = tuple(w.shape[2:])
    nd = len(kernel)
    o, cg = w.shape[:2]
    grp = geo.group
    og = o // grp
    if not _deconv_gathers(og, cg, geo, kernel, (0,) * nd, xp, gy.dtype):
        return None
    xf = _flat(x, geo)
    gf = gy.reshape(geo.n, *gy.shape[geo.base_axis :])
    n, c = xf.shape[:2]
    sp = tuple(xf.shape[2:])
    if c != cg * grp or gf.shape[1] != o:
        return None
    dtype = xf.dtype
    dx = output_array(xp, xf.shape, dtype)
    if n == 0:
        return dx.reshape(x.shape), xp.zeros((o, cg, *kernel), dtype=dtype)
    flip = (slice(None),) * 3 + (slice(None, None, -1),) * nd
    wf = w.reshape(grp, og, cg, *kernel).swapaxes(1, 2)[flip]
    wm = xp.ascontiguousarray(wf).reshape(grp, cg, og * math.prod(kernel))
    cpad = tuple(d * (k - 1) - p for p, d, k in zip(geo.pad, geo.dilation, kernel))
    dwf = _conv_pass(xp, gf, kernel, sp, geo, cpad, dtype, wm, dx, None, xf)
    dw = dwf.reshape(grp, cg, og, *kernel)[flip].swapaxes(1, 2)
    return dx.reshape(x.shape), xp.ascontiguousarray(dw).reshape(o, cg, *kernel)


def _extra_rows(output_padding: Any, geo: ConvGeom) -> tuple[int, ...]:
    """Per spatial axis, ``output_padding // stride``: how many more positions the convolution
    of the deconvolution's output gives than its input has (nonzero only when output_padding
    >= stride, allowed below the dilation). Zeros for every usual deconvolution."""
    op = ints(output_padding, geo.nd, 0, "deconvolution", "output_padding")
    return tuple(e // s for e, s in zip(op, geo.stride))


def _deconvolution_bw(  # type: ignore[no-untyped-def]
    gy,
    inputs,
    in_shapes,
    outputs,
    out_shapes,
    base_axis,
    pad,
    stride,
    dilation,
    group,
    output_padding,
):
    g = gy[0]
    x, w = inputs[0], inputs[1]
    xs, ws = in_shapes[0], in_shapes[1]
    geo = conv_geom("deconvolution", xs, ws, base_axis, pad, stride, dilation, group)
    extra = _extra_rows(output_padding, geo)
    res: list[Any] = [None, None]
    if _needs(x):
        res[0] = _call("Convolution", g, w, **_attrs(geo))
        if any(extra):  # the trailing positions past x's size: not x's gradient
            res[0] = _call(
                "Slice", res[0], start=(0,) * geo.nd, stop=tuple(xs[-geo.nd :]), step=(1,) * geo.nd
            )
    if _needs(w):
        if any(extra):  # x zero-padded to the size the convolution of g gives
            pw = tuple(v for e in extra for v in (0, e))
            xe = _call("Pad", x, pad_width=pw)
        else:
            xe = x
        res[1] = _call("ConvolutionFilterGrad", g, xe, kernel=tuple(ws[2:]), **_attrs(geo))
    if len(in_shapes) > 2:
        res.append(_bias_grad(g, geo.base_axis))
    return res


def _deconvolution_fast(  # type: ignore[no-untyped-def]
    xp,
    gy,
    inputs,
    in_shapes,
    outputs,
    out_shapes,
    base_axis,
    pad,
    stride,
    dilation,
    group,
    output_padding,
    need_grads,
):
    g = gy[0]
    x, w = inputs[0], inputs[1]
    xs, ws = in_shapes[0], in_shapes[1]
    geo = conv_geom("deconvolution", xs, ws, base_axis, pad, stride, dilation, group)
    extra = _extra_rows(output_padding, geo)
    res: list[Any] = [None, None]
    xe = x
    if need_grads[1] and any(extra):
        # as the rule: x zero-padded to the size the convolution of g gives
        xe = xp.zeros(
            (*x.shape[: -geo.nd], *(n + e for n, e in zip(x.shape[-geo.nd :], extra))),
            dtype=x.dtype,
        )
        xe[(Ellipsis, *(slice(0, n) for n in x.shape[-geo.nd :]))] = x
    both = None
    if need_grads[0] and need_grads[1]:
        both = _conv_and_filter_grad(xp, g, w, xe, geo)
    if both is not None:
        res = list(both)
    else:
        if need_grads[0]:
            res[0] = kernel_of("Convolution", g)(xp, g, w, None, **_attrs(geo))
        if need_grads[1]:
            cfg = kernel_of("ConvolutionFilterGrad", g)
            res[1] = cfg(xp, g, xe, tuple(ws[2:]), **_attrs(geo))
    if need_grads[0] and any(extra):  # as the rule: the positions past x's size dropped
        crop = res[0][(Ellipsis, *(slice(0, n) for n in xs[-geo.nd :]))]
        res[0] = xp.ascontiguousarray(crop)
    if len(in_shapes) > 2:
        res.append(_bias_grad_array(xp, g, geo.base_axis) if need_grads[2] else None)
    return res


def _conv_and_filter_grad(xp: Any, gy: Any, w: Any, x: Any, geo: ConvGeom) -> Any:
    """``(Convolution(gy, w), ConvolutionFilterGrad(gy, x))`` with the attributes of ``geo``,
    the columns of ``gy`` built once for both products (Deconvolution's first-order rule, where
    both take the columns of the same array); None when another kernel serves either function
    on ``gy``'s device, or the dtypes differ (the two kernels are called then)."""
    if not (
        _generic_kernels(gy, "Convolution", "ConvolutionFilterGrad")
        and gy.dtype == w.dtype == x.dtype
    ):
        return None
    cgeo = conv_geom("convolution", gy.shape, w.shape, **_attrs(geo))
    gf, xf = _flat(gy, cgeo), _flat(x, cgeo)
    n, c = gf.shape[:2]
    o, cg = w.shape[:2]
    kernel = tuple(w.shape[2:])
    out = conv_out_shape("convolution", gf.shape[2:], kernel, cgeo)
    if tuple(xf.shape) != (n, o, *out) or c != cg * cgeo.group:
        return None
    dtype = gf.dtype
    y = output_array(xp, (n, o, *out), dtype)
    if n == 0:
        dw = xp.zeros((o, cg, *kernel), dtype=dtype)
    else:
        wm = w.reshape(cgeo.group, o // cgeo.group, cg * math.prod(kernel))
        dw = _conv_pass(xp, gf, kernel, out, cgeo, cgeo.pad, dtype, wm, y, None, xf)
    return y.reshape(cgeo.batch + y.shape[1:]), dw.reshape(o, cg, *kernel)


def _convolution_filter_grad_bw(  # type: ignore[no-untyped-def]
    gw,
    inputs,
    in_shapes,
    outputs,
    out_shapes,
    kernel,
    base_axis,
    pad,
    stride,
    dilation,
    group,
):
    g = gw[0]
    x, dy = inputs
    xs, ys = in_shapes
    kernel = filter_kernel(kernel)
    geo = conv_geom(
        "convolution_filter_grad", xs, (1, 1, *kernel), base_axis, pad, stride, dilation, group
    )
    ba = geo.base_axis
    res: list[Any] = [None, None]
    if _needs(x):
        op = _dx_output_padding(xs[ba + 1 :], ys[ba + 1 :], tuple(kernel), geo)
        res[0] = _call("Deconvolution", dy, g, output_padding=op, **_attrs(geo))
    if _needs(dy):
        res[1] = _call("Convolution", x, g, **_attrs(geo))
    return res


def _convolution_filter_grad_fast(  # type: ignore[no-untyped-def]
    xp,
    gw,
    inputs,
    in_shapes,
    outputs,
    out_shapes,
    kernel,
    base_axis,
    pad,
    stride,
    dilation,
    group,
    need_grads,
):
    g = gw[0]
    x, dy = inputs
    xs, ys = in_shapes
    kernel = filter_kernel(kernel)
    geo = conv_geom(
        "convolution_filter_grad", xs, (1, 1, *kernel), base_axis, pad, stride, dilation, group
    )
    ba = geo.base_axis
    res: list[Any] = [None, None]
    if need_grads[0]:
        op = _dx_output_padding(xs[ba + 1 :], ys[ba + 1 :], tuple(kernel), geo)
        res[0] = kernel_of("Deconvolution", dy)(xp, dy, g, None, output_padding=op, **_attrs(geo))
    if need_grads[1]:
        res[1] = kernel_of("Convolution", x)(xp, x, g, None, **_attrs(geo))
    return res


# -- references (independent naive loops) ------------------------------------------------------


def _ref_params(
    nd: int, pad: Any, stride: Any, dilation: Any
) -> tuple[list[int], list[int], list[int]]:
    def one(v: Any, default: int) -> list[int]:
        if v is None:
            return [default] * nd
        return [int(v)] * nd if isinstance(v, int) else [int(a) for a in v]

    return one(pad, 0), one(stride, 1), one(dilation, 1)


def _convolution_ref(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None = None,
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
) -> np.ndarray:
    ba = base_axis % x.ndim
    batch, xf = x.shape[:ba], x.reshape((-1,) + x.shape[ba:])
    p, s, d = _ref_params(w.ndim - 2, pad, stride, dilation)
    n = xf.shape[0]
    o, cg = w.shape[:2]
    kernel = w.shape[2:]
    sp = xf.shape[2:]
    out = [(sp[i] + 2 * p[i] - d[i] * (kernel[i] - 1) - 1) // s[i] + 1 for i in range(len(sp))]
    y = np.zeros((n, o, *out), dtype=np.result_type(x, w))
    og = o // group
    for b_ in range(n):
        for oc in range(o):
            gi = oc // og
            for pos in itertools.product(*(range(v) for v in out)):
                acc = 0.0
                for ci in range(cg):
                    for off in itertools.product(*(range(k) for k in kernel)):
                        idx = [pos[i] * s[i] + off[i] * d[i] - p[i] for i in range(len(sp))]
                        if all(0 <= idx[i] < sp[i] for i in range(len(sp))):
                            acc += xf[(b_, gi * cg + ci, *idx)] * w[(oc, ci, *off)]
                y[(b_, oc, *pos)] = acc
    if b is not None:
        y += b.reshape((-1,) + (1,) * len(out))
    return y.reshape(batch + y.shape[1:])


def _deconvolution_ref(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None = None,
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    output_padding: Any = None,
) -> np.ndarray:
    ba = base_axis % x.ndim
    batch, xf = x.shape[:ba], x.reshape((-1,) + x.shape[ba:])
    p, s, d = _ref_params(w.ndim - 2, pad, stride, dilation)
    n, ci = xf.shape[:2]
    og = w.shape[1]
    kernel = w.shape[2:]
    sp = xf.shape[2:]
    nd = len(sp)
    op = (
        [0] * nd
        if output_padding is None
        else ([output_padding] * nd if isinstance(output_padding, int) else list(output_padding))
    )
    out = [(sp[i] - 1) * s[i] - 2 * p[i] + d[i] * (kernel[i] - 1) + 1 + op[i] for i in range(nd)]
    y = np.zeros((n, og * group, *out), dtype=np.result_type(x, w))
    cig = ci // group
    for b_ in range(n):
        for ic in range(ci):
            gi = ic // cig
            for pos in itertools.product(*(range(v) for v in sp)):
                for oc in range(og):
                    for off in itertools.product(*(range(k) for k in kernel)):
                        idx = [pos[i] * s[i] + off[i] * d[i] - p[i] for i in range(nd)]
                        if all(0 <= idx[i] < out[i] for i in range(nd)):
                            y[(b_, gi * og + oc, *idx)] += xf[(b_, ic, *pos)] * w[(ic, oc, *off)]
    if b is not None:
        y += b.reshape((-1,) + (1,) * nd)
    return y.reshape(batch + y.shape[1:])


def _convolution_filter_grad_ref(
    x: np.ndarray,
    dy: np.ndarray,
    kernel: Any = (1,),
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
) -> np.ndarray:
    kernel = tuple(kernel)
    ba = base_axis % x.ndim
    xf, dyf = x.reshape((-1,) + x.shape[ba:]), dy.reshape((-1,) + dy.shape[ba:])
    p, s, d = _ref_params(len(kernel), pad, stride, dilation)
    n, c = xf.shape[:2]
    o = dyf.shape[1]
    cg, og = c // group, o // group
    sp = xf.shape[2:]
    out = dyf.shape[2:]
    nd = len(sp)
    dw = np.zeros((o, cg, *kernel), dtype=np.result_type(x, dy))
    for oc in range(o):
        gi = oc // og
        for cc in range(cg):
            for off in itertools.product(*(range(k) for k in kernel)):
                acc = 0.0
                for b_ in range(n):
                    for pos in itertools.product(*(range(v) for v in out)):
                        idx = [pos[i] * s[i] + off[i] * d[i] - p[i] for i in range(nd)]
                        if all(0 <= idx[i] < sp[i] for i in range(nd)):
                            acc += dyf[(b_, oc, *pos)] * xf[(b_, gi * cg + cc, *idx)]
                dw[(oc, cc, *off)] = acc
    return dw


# -- samples -----------------------------------------------------------------------------------


def _conv_samples(rng: np.random.Generator) -> Iterator[Sample]:
    r = rng.standard_normal
    yield Sample((r((2, 2, 4, 4)), r((3, 2, 3, 3)), r((3,))), {"pad": (1, 1)}, name="2d pad bias")
    yield Sample(
        (r((1, 2, 5, 5)), r((2, 2, 2, 2))), {"pad": (1, 0), "stride": (2, 2)}, name="2d stride"
    )
    yield Sample(
        (r((1, 4, 4, 3)), r((4, 2, 2, 2)), r((4,))),
        {"group": 2, "dilation": (2, 1), "pad": 1},
        name="2d group dilation",
    )
    yield Sample((r((2, 3, 6)), r((2, 3, 3)), r((2,))), {"pad": 1, "stride": 2}, name="1d")
    yield Sample((r((2, 2, 2, 4)), r((2, 2, 3))), {"base_axis": 2}, name="1d base_axis=2")
    yield Sample((r((2, 5)), r((3, 2, 2))), {"base_axis": 0}, name="no batch axis")
    yield Sample((r((0, 2, 3, 3)), r((2, 2, 2, 2))), {}, name="size-0 batch")
    yield Sample(
        (r((3, 4, 2, 1)).transpose(3, 2, 1, 0), r((2, 2, 2, 2))),
        {"pad": (0, 1)},
        name="non-contiguous x",
    )
    yield Sample(
        (r((1, 1, 3, 3, 3)), r((2, 1, 2, 2, 2)), r((2,))), {"stride": (1, 2, 1)}, name="3d"
    )
    # x itself as the column matrix (1x1 kernel, stride 1, no padding)
    yield Sample((r((2, 3, 3, 2)), r((2, 3, 1, 1)), r((2,))), {}, name="1x1 kernel")
    # stride 1 with output rows of 32 or more: columns on the exact grid (see _FLAT_BELOW)
    yield Sample((r((1, 1, 2, 33)), r((2, 1, 2, 2)), r((2,))), {}, name="2d rows of 32")


def _deconv_samples(rng: np.random.Generator) -> Iterator[Sample]:
    r = rng.standard_normal
    yield Sample((r((2, 2, 3, 3)), r((2, 3, 3, 3)), r((3,))), {"pad": (1, 1)}, name="2d pad bias")
    yield Sample(
        (r((1, 2, 2, 3)), r((2, 2, 2, 2))),
        {"stride": (2, 2), "pad": (0, 1), "output_padding": (1, 0)},
        name="2d stride output_padding",
    )
    yield Sample(
        (r((1, 4, 2, 2)), r((4, 1, 2, 2)), r((2,))),
        {"group": 2, "dilation": (2, 1)},
        name="2d group dilation",
    )
    yield Sample((r((2, 2, 3)), r((2, 2, 3)), r((2,))), {"stride": 2, "pad": 1}, name="1d")
    yield Sample((r((2, 5)), r((2, 3, 2))), {"base_axis": 0}, name="no batch axis")
    yield Sample((r((0, 2, 2, 2)), r((2, 2, 2, 2))), {}, name="size-0 batch")
    yield Sample(
        (r((3, 2, 2, 1)).transpose(3, 2, 1, 0), r((2, 2, 2, 2))), {}, name="non-contiguous x"
    )
    yield Sample((r((1, 1, 2, 2, 2)), r((1, 2, 2, 1, 2))), {"stride": (1, 2, 1)}, name="3d")
    # stride 1 computed by scatter: many more input than output channels (see _GATHER_RATIO), or
    # a pad past dilation * (kernel - 1); the samples above with stride 1 gather
    yield Sample(
        (r((2, 5, 3, 3)), r((5, 2, 3, 3)), r((2,))), {"pad": 1}, name="2d scatter, 5 -> 2 maps"
    )
    yield Sample((r((1, 2, 5, 4)), r((2, 2, 2, 2))), {"pad": (2, 1)}, name="2d pad past kernel")
    yield Sample((r((1, 2, 1, 32)), r((2, 1, 2, 2))), {}, name="2d gather, rows of 33")


def _filter_grad_samples(rng: np.random.Generator) -> Iterator[Sample]:
    r = rng.standard_normal
    yield Sample(
        (r((2, 2, 4, 4)), r((2, 3, 4, 4))), {"kernel": (3, 3), "pad": (1, 1)}, name="2d pad"
    )
    yield Sample(
        (r((1, 2, 5, 5)), r((1, 2, 3, 2))),
        {"kernel": (2, 2), "pad": (1, 0), "stride": (2, 2)},
        name="2d stride",
    )
    yield Sample(
        (r((1, 4, 4, 3)), r((1, 4, 2, 2))),
        {"kernel": (2, 2), "group": 2, "dilation": (2, 1)},
        name="2d group dilation",
    )
    yield Sample((r((2, 3, 6)), r((2, 2, 3))), {"kernel": (3,), "pad": 1, "stride": 2}, name="1d")
    yield Sample((r((0, 2, 3, 3)), r((0, 2, 2, 2))), {"kernel": (2, 2)}, name="size-0 batch")
    yield Sample((r((2, 3, 3, 2)), r((2, 2, 3, 2))), {"kernel": (1, 1)}, name="1x1 kernel")
    yield Sample((r((1, 1, 2, 33)), r((1, 2, 1, 32))), {"kernel": (2, 2)}, name="2d rows of 32")


_DOC_CONV = """Convolution (nnabla layout), N-d.

    y[n, o, p] = b[o] + sum_{c, k} W[o, c, k] * xpad[n, g(o)*C/group + c, p*stride + k*dilation]

    x: (*batch, C, *spatial) with batch = x.shape[:base_axis]; weight: (outmaps, C // group,
    *kernel); bias: (outmaps,) or None. pad/stride/dilation: an int or one int per spatial axis
    (defaults 0/1/1). Output spatial size: (L + 2*pad - dilation*(k - 1) - 1) // stride + 1.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.ones((1, 1, 4, 4), np.float32))
        >>> w = gh.Variable(np.ones((2, 1, 3, 3), np.float32))
        >>> F.convolution(x, w, pad=(1, 1)).shape
        (1, 2, 4, 4)
    """

_DOC_DECONV = """Deconvolution (transposed convolution, the adjoint of convolution w.r.t. x), N-d.

    y[n, g*Og + o, i * stride + k * dilation - pad] += x[n, g*Cg + c, i] * W[g*Cg + c, o, k]

    x: (*batch, Cin, *spatial); weight: (Cin, outmaps // group, *kernel); bias: (outmaps,) or
    None. Output size: (L - 1) * stride - 2 * pad + dilation * (k - 1) + 1 + output_padding, with
    0 <= output_padding < max(stride, dilation) on each axis (as PyTorch); positions no input
    reaches hold the bias only.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.ones((1, 2, 3, 3), np.float32))
        >>> w = gh.Variable(np.ones((2, 4, 2, 2), np.float32))
        >>> F.deconvolution(x, w, stride=(2, 2)).shape
        (1, 4, 6, 6)
    """

_DOC_FG = """Gradient of a convolution w.r.t. its weight (a primitive of the convolution family).

    dW[o, c, k] = sum_{n, p} dy[n, o, p] * xpad[n, g(o) * C/group + c, p * stride + k * dilation]

    x: the convolution's input (*batch, C, *spatial); dy: the gradient of its output
    (*batch, O, *out); kernel: the kernel's spatial shape. Returns (O, C // group, *kernel).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.ones((1, 1, 4, 4), np.float32))
        >>> dy = gh.Variable(np.ones((1, 2, 2, 2), np.float32))
        >>> F.convolution_filter_grad(x, dy, kernel=(3, 3)).shape
        (2, 1, 3, 3)
    """


def _channel_last(
    fname: str, inner: Any, x: Any, weight: Any, bias: Any, base_axis: Any, kw: dict[str, Any]
) -> Any:
    """``F.<fname>`` with ``channel_last=True`` (nnabla's layouts): x is ``(*batch, *spatial,
    C)``, the weight ``(O, *kernel, I / group)`` (convolution) or ``(I, *kernel, O / group)``
    (deconvolution), the result ``(*batch, *spatial_out, O)``. Computed with transposes around the
    channel-first function (so it is differentiable like it)."""
    nd = len(x.shape)
    ba = an_int(base_axis, fname, "base_axis")
    if not 0 <= ba < nd - 1:
        raise ValueError(
            f"{fname}(): base_axis={base_axis} must leave a channel axis and at "
            f"least one spatial axis in x of shape {tuple(x.shape)} "
            "(channel_last=True)"
        )
    ndw = len(weight.shape)
    xt = _call("Transpose", x, axes=(*range(ba), nd - 1, *range(ba, nd - 1)))
    wt = _call("Transpose", weight, axes=(0, ndw - 1, *range(1, ndw - 1)))
    y = inner(xt, wt, bias, ba, **kw)
    ny = len(y.shape)
    return _call("Transpose", y, axes=(*range(ba), *range(ba + 1, ny), ba))


def _nnabla_conv_api(fdef: Any, transposed: bool) -> None:
    """Install ``F.convolution``/``F.deconvolution`` with nnabla's parameters: ``channel_last``
    9th (before ``output_padding`` in deconvolution). The common calls (channel-first, at most 8
    positional arguments) go on to the registered callable unchanged."""
    from gradhub.ops import replace_api

    inner = fdef.api
    fname = fdef.snake

    def api(*args: Any, **kw: Any) -> Any:
        if len(args) <= 8 and "channel_last" not in kw:
            return inner(*args, **kw)
        names = _NN_CONV_NAMES + (("output_padding",) if transposed else ())
        if len(args) > len(names):
            raise TypeError(f"{fname}() takes at most {len(names)} arguments ({len(args)} given)")
        for n, v in zip(names[8:], args[8:]):
            if n in kw:
                raise TypeError(f"{fname}() got multiple values for argument {n!r}")
            kw[n] = v
        args = args[:8]
        channel_last = kw.pop("channel_last", False)
        if not isinstance(channel_last, (bool, np.bool_)):
            raise TypeError(
                f"{fname}(): argument 'channel_last' must be a bool, got "
                f"{channel_last!r} (nnabla's order: ..., group, channel_last"
                f"{', output_padding' if transposed else ''})"
            )
        if not channel_last:
            return inner(*args, **kw)
        a = dict(zip(_NN_CONV_NAMES, args))
        for n in ("x", "weight", "bias", "base_axis"):
            if n in kw:
                if n in a:
                    raise TypeError(f"{fname}() got multiple values for argument {n!r}")
                a[n] = kw.pop(n)
        if "x" not in a or "weight" not in a:
            missing = "x" if "x" not in a else "weight"
            raise TypeError(f"{fname}() missing required input {missing!r}")
        rest = {n: v for n, v in a.items() if n not in ("x", "weight", "bias", "base_axis")}
        from gradhub import as_variable

        return _channel_last(
            fname,
            inner,
            as_variable(a["x"]),
            as_variable(a["weight"]),
            a.get("bias"),
            a.get("base_axis", 1),
            {**rest, **kw},
        )

    replace_api(fdef, api)
    P = inspect.Parameter
    params = [P("x", P.POSITIONAL_OR_KEYWORD), P("weight", P.POSITIONAL_OR_KEYWORD)]
    params += [
        P(n, P.POSITIONAL_OR_KEYWORD, default=v)
        for n, v in {"bias": None, **fdef.attrs}.items()
        if n != "output_padding"
    ]
    params.append(P("channel_last", P.POSITIONAL_OR_KEYWORD, default=False))
    if transposed:
        params.append(P("output_padding", P.POSITIONAL_OR_KEYWORD, default=None))
    api.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]


_NN_CONV_NAMES = (
    "x",
    "weight",
    "bias",
    "base_axis",
    "pad",
    "stride",
    "dilation",
    "group",
    "channel_last",
)


# -- DepthwiseConvolution / DepthwiseDeconvolution ---------------------------------------------


def _depthwise_channels(fn: str, x: Any, weight: Any, base_axis: Any) -> tuple[int, int]:
    ba = int_arg(fn, "base_axis", base_axis)
    nd = len(x.shape)
    if ba < 0:
        ba += nd
    if not 0 <= ba < nd - 1:
        raise ValueError(
            f"{fn}: base_axis={base_axis} must leave a channel axis and at least one spatial "
            f"axis in x of shape {tuple(x.shape)}"
        )
    if len(weight.shape) != nd - ba:
        raise ValueError(
            f"{fn}: weight must have 1 + {nd - ba - 1} dims (channels, *kernel), got shape "
            f"{tuple(weight.shape)}"
        )
    return ba, int(x.shape[ba])


def depthwise_convolution(
    x: Any,
    weight: Any,
    bias: Any = None,
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    multiplier: int = 1,
) -> Variable:
    r"""Depthwise convolution (nnabla ``F.depthwise_convolution``): each input channel is
    convolved with its own ``multiplier`` filters.

    ``x`` is ``(*batch, C, *spatial)``, ``weight`` ``(C * multiplier, *kernel)``, ``bias``
    ``(C * multiplier,)``; output channel :math:`o` uses input channel
    :math:`\lfloor o / m \rfloor`:
    :math:`y_{o} = b_o + \sum_k w_{o, k}\, x_{\lfloor o/m \rfloor, s \cdot i + d \cdot k - p}`.
    Computed as ``convolution(x, weight.reshape(C * m, 1, *kernel), bias, ..., group=C)``.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.arange(8.0).reshape(1, 2, 4))
        >>> w = gh.Variable(np.array([[1.0, 1.0], [1.0, -1.0]]))
        >>> F.depthwise_convolution(x, w).d
        array([[[ 1.,  3.,  5.],
                [-1., -1., -1.]]])
    """
    x, weight = as_variable(x), as_variable(weight)
    fn = "depthwise_convolution"
    ba, c = _depthwise_channels(fn, x, weight, base_axis)
    m = int_arg(fn, "multiplier", multiplier)
    if m < 1:
        raise ValueError(f"{fn}: multiplier must be >= 1, got {m}")
    if weight.shape[0] != c * m:
        raise ValueError(
            f"{fn}: weight.shape[0] must be channels * multiplier = {c * m}, got "
            f"{weight.shape[0]} (weight of shape {tuple(weight.shape)})"
        )
    w = call("Reshape", weight, shape=(c * m, 1, *weight.shape[1:]))
    return call(
        "Convolution",
        x,
        w,
        bias,
        base_axis=ba,
        pad=pad,
        stride=stride,  # type: ignore[no-any-return]
        dilation=dilation,
        group=c,
    )


def depthwise_deconvolution(
    x: Any,
    weight: Any,
    bias: Any = None,
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    divisor: int = 1,
) -> Variable:
    r"""Depthwise deconvolution (nnabla ``F.depthwise_deconvolution``), the transpose of
    :func:`depthwise_convolution`: ``divisor`` consecutive input channels are summed into one
    output channel.

    ``x`` is ``(*batch, C, *spatial)``, ``weight`` ``(C, *kernel)``, ``bias`` ``(C / divisor,)``;
    the output has ``C / divisor`` channels and spatial sizes
    :math:`L' = s (L - 1) - 2 p + d (k - 1) + 1`. Computed as
    ``deconvolution(x, weight.reshape(C, 1, *kernel), bias, ..., group=C / divisor)``.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.array([[[1.0, 2.0], [10.0, 20.0]]]))
        >>> w = gh.Variable(np.array([[1.0, 1.0], [1.0, 0.0]]))
        >>> F.depthwise_deconvolution(x, w, divisor=2).d
        array([[[11., 23.,  2.]]])
    """
    x, weight = as_variable(x), as_variable(weight)
    fn = "depthwise_deconvolution"
    ba, c = _depthwise_channels(fn, x, weight, base_axis)
    d = int_arg(fn, "divisor", divisor)
    if d < 1 or c % d:
        raise ValueError(f"{fn}: divisor must be >= 1 and divide the {c} channels, got {d}")
    if weight.shape[0] != c:
        raise ValueError(
            f"{fn}: weight.shape[0] must be the {c} channels of x, got shape {tuple(weight.shape)}"
        )
    w = call("Reshape", weight, shape=(c, 1, *weight.shape[1:]))
    return call(
        "Deconvolution",
        x,
        w,
        bias,
        base_axis=ba,
        pad=pad,
        stride=stride,  # type: ignore[no-any-return]
        dilation=dilation,
        group=c // d,
    )


def _dw_ref(
    x: np.ndarray,
    w: np.ndarray,
    b: Any = None,
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    multiplier: int = 1,
) -> np.ndarray:
    """Direct loops: y[n, o, i...] = sum_k w[o, k] x[n, o // m, i*s + k*d - p]."""
    lead = x.shape[:base_axis]
    xs = x.reshape((-1,) + x.shape[base_axis:])
    c, sp = xs.shape[1], xs.shape[2:]
    nk = len(sp)
    kern = w.shape[1:]
    p = (0,) * nk if pad is None else tuple(pad)
    s = (1,) * nk if stride is None else tuple(stride)
    dl = (1,) * nk if dilation is None else tuple(dilation)
    out_sp = tuple((sp[i] + 2 * p[i] - dl[i] * (kern[i] - 1) - 1) // s[i] + 1 for i in range(nk))
    y = np.zeros((xs.shape[0], c * multiplier) + out_sp)
    for n in range(xs.shape[0]):
        for o in range(c * multiplier):
            for pos in np.ndindex(*out_sp):
                acc = 0.0 if b is None else b[o]
                for k in np.ndindex(*kern):
                    src = [pos[i] * s[i] + k[i] * dl[i] - p[i] for i in range(nk)]
                    if all(0 <= src[i] < sp[i] for i in range(nk)):
                        acc += w[(o, *k)] * xs[(n, o // multiplier, *src)]
                y[(n, o, *pos)] = acc
    return y.reshape(lead + y.shape[1:])


def _ddw_ref(
    x: np.ndarray,
    w: np.ndarray,
    b: Any = None,
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    divisor: int = 1,
) -> np.ndarray:
    """Direct scatter: y[n, c // d, i*s + k*dl - p] += w[c, k] x[n, c, i]."""
    lead = x.shape[:base_axis]
    xs = x.reshape((-1,) + x.shape[base_axis:])
    c, sp = xs.shape[1], xs.shape[2:]
    nk = len(sp)
    kern = w.shape[1:]
    p = (0,) * nk if pad is None else tuple(pad)
    s = (1,) * nk if stride is None else tuple(stride)
    dl = (1,) * nk if dilation is None else tuple(dilation)
    full = tuple(s[i] * (sp[i] - 1) + dl[i] * (kern[i] - 1) + 1 for i in range(nk))
    out_sp = tuple(full[i] - 2 * p[i] for i in range(nk))
    y = np.zeros((xs.shape[0], c // divisor) + full)
    for n in range(xs.shape[0]):
        for ch in range(c):
            for pos in np.ndindex(*sp):
                for k in np.ndindex(*kern):
                    dst = tuple(pos[i] * s[i] + k[i] * dl[i] for i in range(nk))
                    y[(n, ch // divisor, *dst)] += w[(ch, *k)] * xs[(n, ch, *pos)]
    y = y[(slice(None), slice(None), *(slice(p[i], p[i] + out_sp[i]) for i in range(nk)))]
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * nk)
    return y.reshape(lead + y.shape[1:])


def _dw_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((1, 2, 5)), rng.standard_normal((2, 3))), name="1-d")
    yield Sample(
        (rng.standard_normal((1, 2, 4)), rng.standard_normal((4, 2)), rng.standard_normal(4)),
        {"multiplier": 2, "pad": (1,), "stride": (2,)},
        name="multiplier 2, bias, pad, stride",
    )
    yield Sample(
        (rng.standard_normal((1, 2, 3, 3)), rng.standard_normal((2, 2, 2))),
        {"dilation": (1, 2), "pad": (1, 1)},
        name="2-d dilation",
    )
    yield Sample(
        (rng.standard_normal((2, 1, 2, 4)), rng.standard_normal((2, 2))),
        {"base_axis": 2},
        name="base_axis 2",
    )


def _ddw_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((1, 2, 3)), rng.standard_normal((2, 2))), name="1-d")
    yield Sample(
        (rng.standard_normal((1, 4, 3)), rng.standard_normal((4, 2)), rng.standard_normal(2)),
        {"divisor": 2, "stride": (2,), "pad": (1,)},
        name="divisor 2, bias, stride, pad",
    )
    yield Sample(
        (rng.standard_normal((1, 2, 2, 2)), rng.standard_normal((2, 2, 2))),
        {"dilation": (2, 1)},
        name="2-d dilation",
    )


def register_functions(register: Any) -> None:
    """Register the conv functions."""
    conv_attrs = {"base_axis": 1, "pad": None, "stride": None, "dilation": None, "group": 1}
    conv = register.function(
        "Convolution",
        _convolution,
        inputs=("x", "weight", "bias?"),
        attrs=dict(conv_attrs),
        rule=_convolution_bw,
        fast_backward=_convolution_fast,
        need_inputs=(0, 1),
        need_outputs=(),
        samples=_conv_samples,
        reference=_convolution_ref,
        doc=_DOC_CONV,
    )
    _nnabla_conv_api(conv, transposed=False)
    deconv = register.function(
        "Deconvolution",
        _deconvolution,
        inputs=("x", "weight", "bias?"),
        attrs={**conv_attrs, "output_padding": None},
        rule=_deconvolution_bw,
        fast_backward=_deconvolution_fast,
        need_inputs=(0, 1),
        need_outputs=(),
        samples=_deconv_samples,
        reference=_deconvolution_ref,
        doc=_DOC_DECONV,
    )
    _nnabla_conv_api(deconv, transposed=True)
    register.function(
        "ConvolutionFilterGrad",
        _convolution_filter_grad,
        inputs=("x", "dy"),
        attrs={"kernel": (1,), **conv_attrs},
        rule=_convolution_filter_grad_bw,
        fast_backward=_convolution_filter_grad_fast,
        need_inputs=(0, 1),
        need_outputs=(),
        samples=_filter_grad_samples,
        reference=_convolution_filter_grad_ref,
        doc=_DOC_FG,
    )
    c = register.composite
    c("DepthwiseConvolution", depthwise_convolution, samples=_dw_samples, reference=_dw_ref)
    c(
        "DepthwiseDeconvolution",
        depthwise_deconvolution,
        samples=_ddw_samples,
        reference=_ddw_ref,
    )
