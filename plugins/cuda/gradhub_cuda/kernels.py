"""Faster CUDA kernels keyed by function name (the table :data:`KERNELS`).

A kernel is added here only where a GPU measurement showed a gain over the function's generic
``xp`` kernel running on CuPy (docs/cuda.md gives the numbers), or where it lets a compiled step
be recorded into a CUDA graph (the index checks below), and each one is covered by the op
matrix on ``cuda`` like the generic kernels. On a GPU the generic kernels are bound by the host:
CuPy costs some microseconds of Python per launched kernel, and the generic convolution and
pooling launch one small kernel (or several) per kernel offset. These kernels do the same work in
a few launches:

* **Convolution, Deconvolution, ConvolutionFilterGrad** (2-d, ``group=1``, float32/float64):
  one im2col kernel builds the column matrix ``(C*KH*KW, N*Ho*Wo)``, one cuBLAS product does the
  contraction, and one kernel reorders the result to NCHW (adding the bias) or, for the
  deconvolution, gathers the columns back onto the image (col2im, without atomics, so results
  are deterministic)::

      y[n, o]  = W2 @ col(x)[:, n]            W2 = W.reshape(O, C*KH*KW)
      dx       = col2im(W2.T @ gy2)           gy2 = gy as (O, N*Ho*Wo)
      dW       = gy2 @ col(x).T

* **SoftmaxCrossEntropy** of (N, C) logits with integer labels: one thread per row, and one
  synchronisation for the label check where the generic kernel takes two.

* **Sum over every axis but one** (the bias gradients of convolutions): one reduction over the
  contiguous trailing axes, then one over the leading ones.

* **Embed, EmbedBackward, OneHot**: the index checks in one kernel setting a device flag,
  read with one synchronisation (the generic kernels read the minimum and the maximum), or,
  while a CUDA graph is recorded, after each launch (:func:`gradhub_cuda.capture.defer_check`),
  so that steps holding them can be recorded; OneHot's output written by one kernel.

* **GetItem, GetItemBackward** with host integer arrays in the key: the generic kernels, the
  arrays copied to the GPU once per array instead of at every call (recordable).

* **MaxPooling and its derivative family** (2-d windows over the last two axes,
  float32/float64): one kernel per call, one thread per output (or input) element, with the
  generic kernels' first-maximum rule (row-major within the window, padding counted as -inf) and
  their NaN behaviour (a window holding NaN routes its gradient to its first NaN; gradients
  routed by multiplying with 0/1).

Anything else (other dimensions, groups, integer or mixed dtypes, empty batches, invalid
arguments) goes to the generic kernel, which also raises the library's errors. Argument checks
and shapes come from gradhub-nn-ops' own geometry helpers, so both paths agree on them.
Nothing here imports CuPy before a kernel runs.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from .capture import defer_check, keep

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

# -- the CUDA sources --------------------------------------------------------------------------

# Index arithmetic: each source is compiled twice, with ``IDX_T`` as ``int`` (32-bit, for launches
# whose arrays all hold fewer than 2**31 elements) and as ``long long`` (64-bit: column matrices
# can pass 2**31 elements). 64-bit division and remainder are emulated by many instructions on
# NVIDIA GPUs; the im2col and pooling kernels do several of each per element. ``ii`` is the
# element index in the kernel's index type.

# im2col, one thread per (channel, output position): the thread writes the KH*KW rows of its
# column (threads of consecutive positions write consecutive addresses of each row), so the index
# arithmetic is done once per KH*KW elements; launched with size C * NP
_IM2COL = """
IDX_T q = ii % NP, c = ii / NP;
IDX_T ox = q % Wo, t = q / Wo;
IDX_T oy = t % Ho, n = t / Ho;
IDX_T y0 = oy * sh - ph, x0 = ox * sw - pw;
IDX_T src = (n * C + c) * H * W, dst = c * KH * KW * NP + q;
for (IDX_T ky = 0; ky < KH; ++ky) {
    IDX_T yy = y0 + ky * dh;
    bool row = yy >= 0 && yy < H;
    for (IDX_T kx = 0; kx < KW; ++kx) {
        IDX_T xx = x0 + kx * dw;
        col[dst] = (row && xx >= 0 && xx < W) ? x[src + yy * W + xx] : (T)0;
        dst += NP;
    }
}
"""

_COL2IM = """
IDX_T xx = ii % W, t = ii / W;
IDX_T yy = t % H; t /= H;
IDX_T c = t % C, n = t / C;
T s = 0;
for (IDX_T ky = 0; ky < KH; ++ky) {
    IDX_T ty = yy + ph - ky * dh;
    if (ty < 0 || ty % sh) continue;
    IDX_T oy = ty / sh;
    if (oy >= Ho) continue;
    for (IDX_T kx = 0; kx < KW; ++kx) {
        IDX_T tx = xx + pw - kx * dw;
        if (tx < 0 || tx % sw) continue;
        IDX_T ox = tx / sw;
        if (ox >= Wo) continue;
        s += col[((c * KH + ky) * KW + kx) * NP + (n * Ho + oy) * Wo + ox];
    }
}
out = has_b ? (T)(s + b[c]) : s;
"""

_TO_NCHW = """
IDX_T p = ii % P, t = ii / P;
IDX_T o = t % O, n = t / O;
T v = y2[o * NP + n * P + p];
y = has_b ? (T)(v + b[o]) : v;
"""

_FROM_NCHW = """
IDX_T q = ii % NP, o = ii / NP;
g2 = g[(q / P * O + o) * P + q % P];
"""

# Pooling: the window of output (oy, ox) starts at (oy * sh - ph, ox * sw - pw); positions outside
# the input count as ``lowest`` (-inf), as in the generic kernels' padded copy.
_POOL_PREAMBLE = """
template <typename A, typename T>
__device__ T gh_window_max(const A& x, IDX_T base, IDX_T H, IDX_T W, IDX_T y0, IDX_T x0,
                           IDX_T KH, IDX_T KW, T lowest) {
    T m = lowest;
    bool first = true;
    for (IDX_T ky = 0; ky < KH; ++ky) {
        for (IDX_T kx = 0; kx < KW; ++kx) {
            IDX_T yy = y0 + ky, xx = x0 + kx;
            T v = (yy >= 0 && yy < H && xx >= 0 && xx < W) ? (T)x[base + yy * W + xx] : lowest;
            if (first) { m = v; first = false; }
            else if (!isnan(m) && (isnan(v) || v > m)) m = v;
        }
    }
    return m;
}

/* offset ky * KW + kx of the first element equal to m in the window (the first NaN when m is
   NaN), or -1 */
template <typename A, typename T>
__device__ IDX_T gh_window_first(const A& x, IDX_T base, IDX_T H, IDX_T W, IDX_T y0,
                                  IDX_T x0, IDX_T KH, IDX_T KW, T lowest, T m) {
    for (IDX_T ky = 0; ky < KH; ++ky) {
        for (IDX_T kx = 0; kx < KW; ++kx) {
            IDX_T yy = y0 + ky, xx = x0 + kx;
            T v = (yy >= 0 && yy < H && xx >= 0 && xx < W) ? (T)x[base + yy * W + xx] : lowest;
            if (v == m || (isnan(m) && isnan(v))) return ky * KW + kx;
        }
    }
    return -1;
}
"""

_POOL_OUT_INDEX = """
IDX_T ox = ii % Wo, t = ii / Wo;
IDX_T oy = t % Ho, l = t / Ho;
IDX_T y0 = oy * sh - ph, x0 = ox * sw - pw, base = l * H * W;
"""

_MAX_POOL = _POOL_OUT_INDEX + "y = gh_window_max(x, base, H, W, y0, x0, KH, KW, lowest);"

_MAX_POOL_GATHER = (
    _POOL_OUT_INDEX
    + """
T m = gh_window_max(x, base, H, W, y0, x0, KH, KW, lowest);
IDX_T arg = gh_window_first(x, base, H, W, y0, x0, KH, KW, lowest, m);
T s = 0;
for (IDX_T ky = 0; ky < KH; ++ky) {
    for (IDX_T kx = 0; kx < KW; ++kx) {
        IDX_T yy = y0 + ky, xx = x0 + kx;
        T v = (yy >= 0 && yy < H && xx >= 0 && xx < W) ? (T)g[base + yy * W + xx] : (T)0;
        s += v * (T)(ky * KW + kx == arg);
    }
}
out = s;
"""
)

_MASKED_POOL = (
    _POOL_OUT_INDEX
    + """
T s = 0;
for (IDX_T ky = 0; ky < KH; ++ky) {
    for (IDX_T kx = 0; kx < KW; ++kx) {
        IDX_T yy = y0 + ky, xx = x0 + kx;
        if (yy >= 0 && yy < H && xx >= 0 && xx < W)
            s += g[base + yy * W + xx] * (T)mask[base + yy * W + xx];
    }
}
out = s;
"""
)

_POOL_IN_INDEX = """
IDX_T xx = ii % W, t = ii / W;
IDX_T yy = t % H, l = t / H;
IDX_T base = l * H * W, obase = l * Ho * Wo;
"""

# the windows containing input (yy, xx): oy from ceil((yy + ph - KH + 1) / sh) to (yy + ph) / sh
_WINDOWS_OF_INPUT = """
IDX_T ay = yy + ph - KH + 1, ax = xx + pw - KW + 1;
IDX_T oy0 = ay <= 0 ? 0 : (ay + sh - 1) / sh, ox0 = ax <= 0 ? 0 : (ax + sw - 1) / sw;
IDX_T oy1 = min((yy + ph) / sh, Ho - 1), ox1 = min((xx + pw) / sw, Wo - 1);
"""

_MAX_POOL_BACKWARD = (
    _POOL_IN_INDEX
    + _WINDOWS_OF_INPUT
    + """
T s = 0;
for (IDX_T oy = oy0; oy <= oy1; ++oy) {
    for (IDX_T ox = ox0; ox <= ox1; ++ox) {
        IDX_T y0 = oy * sh - ph, x0 = ox * sw - pw;
        T m = gh_window_max(x, base, H, W, y0, x0, KH, KW, lowest);
        IDX_T arg = gh_window_first(x, base, H, W, y0, x0, KH, KW, lowest, m);
        s += dy[obase + oy * Wo + ox] * (T)((yy - y0) * KW + (xx - x0) == arg);
    }
}
dx = s;
"""
)

# MaxPoolingBackward where windows do not overlap: one thread per window finds its first
# maximum once and writes the window's inputs (the same sum as _MAX_POOL_BACKWARD's over the one
# window holding each input: 0 + dy * [first maximum]); inputs outside every window are left to
# the caller (zeros); launched with size L * Ho * Wo
_MAX_POOL_BACKWARD_DISJOINT = (
    _POOL_OUT_INDEX
    + """
T m = gh_window_max(x, base, H, W, y0, x0, KH, KW, lowest);
IDX_T arg = gh_window_first(x, base, H, W, y0, x0, KH, KW, lowest, m);
T d = dy[ii];
for (IDX_T ky = 0; ky < KH; ++ky) {
    IDX_T yy = y0 + ky;
    if (yy < 0 || yy >= H) continue;
    for (IDX_T kx = 0; kx < KW; ++kx) {
        IDX_T xx = x0 + kx;
        if (xx < 0 || xx >= W) continue;
        T s = 0;
        s += d * (T)(ky * KW + kx == arg);
        dx[base + yy * W + xx] = s;
    }
}
"""
)

# windows that do not overlap: an input element lies in at most one
_ONE_WINDOW = """
IDX_T oy = (yy + ph) / sh, ox = (xx + pw) / sw;
bool inside = (yy + ph) % sh < KH && (xx + pw) % sw < KW && oy < Ho && ox < Wo;
"""

_MAX_POOL_MASK = (
    _POOL_IN_INDEX
    + _ONE_WINDOW
    + """
bool hit = false;
if (inside) {
    IDX_T y0 = oy * sh - ph, x0 = ox * sw - pw;
    IDX_T arg = gh_window_first(x, base, H, W, y0, x0, KH, KW, lowest, y[obase + oy * Wo + ox]);
    hit = (yy - y0) * KW + (xx - x0) == arg;
}
mask = hit;
"""
)

_MASKED_UNPOOL = (
    _POOL_IN_INDEX
    + _ONE_WINDOW
    + """
dx = inside ? (T)(dy[obase + oy * Wo + ox] * (T)mask[ii]) : (T)0;
"""
)

# Softmax cross entropy over the classes of (N, C) logits, one thread per row; a label outside
# [0, C), or a float label that is not a whole number (NaN included), is counted in bad[0] (the
# caller then lets the generic kernel raise the error); labels are compared as doubles, so integer
# labels beyond 2**53 are still outside [0, C)
_SCE = """
IDX_T row = ii * C;
double tv = (double)t[ii];
T m = x[row];
for (IDX_T c = 1; c < C; ++c) {
    T v = x[row + c];
    if (isnan(v) || v > m) m = v;
}
T s = 0;
for (IDX_T c = 0; c < C; ++c) s += exp(x[row + c] - m);
if (!(tv >= 0 && tv < (double)C) || tv != floor(tv)) {
    atomicAdd(&bad[0], 1);
    loss = 0;
} else {
    loss = log(s) - (x[row + (long long)tv] - m);
}
"""

# Rule kernels (array-level first-order rules on ``cuda``, see RULE_KERNELS):
# ReLU's backward, one launch where the generic formula takes two (a comparison, a product); the
# product with the 0/1 mask as in the generic rule, so NaN and infinite gradients behave the same
_RELU_BW = "gx = g * (T)(y > (T)0);"

# an index outside [0, n), or a float index that is no whole number (NaN included), sets the flag
_INDEX_CHECK = "if (!(x >= (T)0 && x < bound) || (T)(long long)x != x) bad[0] = 1;"

_ONE_HOT = "y = (flat[i / P] == i % P) ? 1.0f : 0.0f;"

# SoftmaxCrossEntropy's backward over the class axis of x seen as (outer, C, K) (C-contiguous),
# one thread per (outer, k) row: dx = (softmax(x) - onehot(t)) * gy, computed in the generic
# rule's order (exp(x - max), divided by the sum, 1 subtracted at the label, times gy). A label
# outside [0, C) subtracts nothing (the forward pass rejects such labels, so only labels changed
# in place after it reach here)
_SCE_BW = """
IDX_T o = ii / K, k = ii % K;
IDX_T base = o * C * K + k;
long long lab = (long long)t;
T m = x[base];
for (IDX_T c = 1; c < C; ++c) {
    T v = x[base + c * K];
    if (isnan(v) || v > m) m = v;
}
T s = 0;
for (IDX_T c = 0; c < C; ++c) s += exp(x[base + c * K] - m);
for (IDX_T c = 0; c < C; ++c) {
    T p = exp(x[base + c * K] - m) / s;
    if (c == lab) p -= (T)1;
    dx[base + c * K] = p * g;
}
"""

# the same for many classes (more than _SCE_ROW_CLASSES), where one thread per row would loop too
# long: the row's max and sum of exp(x - max) from two reductions, then one thread per element
_SCE_BW_WIDE = """
IDX_T k = ii % K, r = ii / K;
IDX_T c = r % C, row = (r / C) * K + k;
T p = exp(x - m[row]) / s[row];
if (c == (long long)t[row]) p -= (T)1;
dx = p * g[row];
"""

#: the most classes for which SoftmaxCrossEntropy's backward runs one thread per row (measured on
#: an H200 at 256 rows, docs/cuda.md: one thread per row 15 us for 10 classes, 52 us for 128,
#: 101 us for 256, 310 us for 1000; the three-launch path 60-68 us throughout)
_SCE_ROW_CLASSES = 128

_CONV_PARAMS = (
    "IDX C, IDX H, IDX W, IDX KH, IDX KW, IDX Ho, IDX Wo, IDX ph, "
    "IDX pw, IDX sh, IDX sw, IDX dh, IDX dw, IDX NP"
)
_POOL_PARAMS = (
    "IDX H, IDX W, IDX Ho, IDX Wo, IDX KH, IDX KW, IDX sh, IDX sw, IDX ph, IDX pw, T lowest"
)


@cache
def _k(narrow: bool = False) -> dict[str, Any]:
    """The CuPy kernel objects (compiled by CuPy on first launch, cached on disk), with 32-bit
    index arithmetic when ``narrow`` (see :func:`_narrow`), else 64-bit."""
    import cupy

    ctype, ptype = ("int", "int32") if narrow else ("long long", "int64")
    suffix = "32" if narrow else ""

    def ew(name: str, params: str, out: str, body: str, preamble: str = "") -> Any:
        return cupy.ElementwiseKernel(
            params.replace("IDX ", ptype + " "),
            out,
            f"const {ctype} ii = ({ctype})i;\n" + body.replace("IDX_T", ctype),
            f"gradhub_{name}{suffix}",
            preamble=preamble.replace("IDX_T", ctype),
        )

    return {
        "im2col": ew("im2col", "raw T x, " + _CONV_PARAMS, "raw T col", _IM2COL),
        "col2im": ew("col2im", "raw T col, raw T b, bool has_b, " + _CONV_PARAMS, "T out", _COL2IM),
        "to_nchw": ew(
            "to_nchw", "raw T y2, raw T b, bool has_b, IDX O, IDX P, IDX NP", "T y", _TO_NCHW
        ),
        "from_nchw": ew("from_nchw", "raw T g, IDX O, IDX P, IDX NP", "T g2", _FROM_NCHW),
        "max_pool": ew("max_pool", "raw T x, " + _POOL_PARAMS, "T y", _MAX_POOL, _POOL_PREAMBLE),
        "max_pool_backward": ew(
            "max_pool_backward",
            "raw T dy, raw T x, " + _POOL_PARAMS,
            "T dx",
            _MAX_POOL_BACKWARD,
            _POOL_PREAMBLE,
        ),
        "max_pool_backward_disjoint": ew(
            "max_pool_backward_disjoint",
            "raw T dy, raw T x, " + _POOL_PARAMS,
            "raw T dx",
            _MAX_POOL_BACKWARD_DISJOINT,
            _POOL_PREAMBLE,
        ),
        "max_pool_gather": ew(
            "max_pool_gather",
            "raw T g, raw T x, " + _POOL_PARAMS,
            "T out",
            _MAX_POOL_GATHER,
            _POOL_PREAMBLE,
        ),
        "max_pool_mask": ew(
            "max_pool_mask",
            "raw T x, raw T y, " + _POOL_PARAMS,
            "bool mask",
            _MAX_POOL_MASK,
            _POOL_PREAMBLE,
        ),
        "masked_unpool": ew(
            "masked_unpool", "raw T dy, raw bool mask, " + _POOL_PARAMS, "T dx", _MASKED_UNPOOL
        ),
        "masked_pool": ew(
            "masked_pool", "raw T g, raw bool mask, " + _POOL_PARAMS, "T out", _MASKED_POOL
        ),
        "sce": ew("sce", "raw T x, raw L t, IDX C", "T loss, raw int32 bad", _SCE),
        "relu_bw": ew("relu_bw", "T g, T y", "T gx", _RELU_BW),
        "index_check": ew("index_check", "T x, int64 bound", "raw int32 bad", _INDEX_CHECK),
        "one_hot": ew("one_hot", "raw int64 flat, int64 P", "float32 y", _ONE_HOT),
        "sce_bw": ew("sce_bw", "raw T x, L t, T g, IDX C, IDX K", "raw T dx", _SCE_BW),
        "sce_bw_wide": ew(
            "sce_bw_wide",
            "T x, raw T m, raw T s, raw L t, raw T g, IDX C, IDX K",
            "T dx",
            _SCE_BW_WIDE,
        ),
        "sum_exp": cupy.ReductionKernel(
            "T x, T m", "T s", "exp(x - m)", "a + b", "s = a", "0", "gradhub_sum_exp"
        ),
    }


#: launches whose arrays all hold fewer elements than this use the kernels with 32-bit index
#: arithmetic (:func:`_k`); the index expressions of every kernel stay below the largest array's
#: size
NARROW_LIMIT = 2**31


def _narrow(*sizes: int) -> bool:
    """True when every array of a launch holds fewer than :data:`NARROW_LIMIT` elements."""
    return max(sizes) < NARROW_LIMIT


def _generic_rule(name: str) -> Callable[..., Any]:
    """The array-level first-order rule (``fast_backward``) of the function ``name``'s rule: the
    one a rule kernel runs in place of (rule kernels belong to the rule registered with them)."""
    from gradhub.ops import fdef

    return fdef(name).rule.fast  # type: ignore[no-any-return]


@cache
def _generic(name: str) -> Callable[..., Any]:
    """The generic ``xp`` kernel of the function ``name``."""
    from gradhub.ops import fdef

    return fdef(name).forward  # type: ignore[no-any-return]


def _conv_module() -> Any:
    from gradhub_nn_ops import conv

    return conv


def _pool_module() -> Any:
    from gradhub_nn_ops import pooling

    return pooling


def _same_float(*arrays: Any) -> bool:
    """All arrays of one floating dtype (float32 or float64), none empty."""
    dt = arrays[0].dtype
    return dt in _FLOATS and all(a.dtype == dt and a.size for a in arrays)


# -- convolution -------------------------------------------------------------------------------


def _geometry(
    kind: str,
    x_shape: Any,
    w_shape: Any,
    base_axis: Any,
    pad: Any,
    stride: Any,
    dilation: Any,
    group: Any,
) -> Any:
    """nn-ops' ConvGeom when this module handles the call (2-d, one group), else None."""
    if len(w_shape) != 4:
        return None
    geo = _conv_module().conv_geom(kind, x_shape, w_shape, base_axis, pad, stride, dilation, group)
    return geo if geo.group == 1 and geo.n > 0 else None


def _im2col(xp: Any, x: Any, kh: int, kw: int, out: tuple[int, int], geo: Any) -> Any:
    """Column matrix ``(C*KH*KW, N*Ho*Wo)`` of ``x`` (N, C, H, W)."""
    n, c, h, w = x.shape
    npos = n * out[0] * out[1]
    col = xp.empty((c * kh * kw, npos), dtype=x.dtype)
    if col.size == 0:
        return col
    _k(_narrow(col.size, x.size))["im2col"](
        xp.ascontiguousarray(x),
        c,
        h,
        w,
        kh,
        kw,
        out[0],
        out[1],
        *geo.pad,
        *geo.stride,
        *geo.dilation,
        npos,
        col,
        size=c * npos,
    )
    return col


def _from_nchw(xp: Any, g: Any) -> Any:
    """``g`` (N, O, *spatial) as the matrix ``(O, N * prod(spatial))``."""
    n, o = g.shape[:2]
    p = math.prod(g.shape[2:])
    g2 = xp.empty((o, n * p), dtype=g.dtype)
    _k(_narrow(g.size))["from_nchw"](xp.ascontiguousarray(g), o, p, n * p, g2)
    return g2


def convolution(
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
    """Convolution on ``cuda``: im2col, one GEMM, one reorder to NCHW with the bias."""
    geo = _geometry("convolution", x.shape, w.shape, base_axis, pad, stride, dilation, group)
    if (
        geo is None
        or not _same_float(x, w, *(() if b is None else (b,)))
        or x.shape[geo.base_axis] != w.shape[1]
        or (b is not None and b.shape != w.shape[:1])
    ):
        return _generic("Convolution")(xp, x, w, b, base_axis, pad, stride, dilation, group)
    conv = _conv_module()
    xf = x.reshape(geo.n, *x.shape[geo.base_axis :])
    o, _, kh, kw = w.shape
    out = conv.conv_out_shape("convolution", xf.shape[2:], (kh, kw), geo)
    col = _im2col(xp, xf, kh, kw, out, geo)
    y2 = xp.dot(w.reshape(o, -1), col)
    p = out[0] * out[1]
    y = xp.empty((geo.n, o, *out), dtype=x.dtype)
    _k(_narrow(y.size))["to_nchw"](y2, y2 if b is None else b, b is not None, o, p, geo.n * p, y)
    return y.reshape(geo.batch + y.shape[1:])


def deconvolution(
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
    """Deconvolution on ``cuda``: one GEMM, then col2im (a gather) with the bias."""
    args = (base_axis, pad, stride, dilation, group, output_padding)
    geo = _geometry("deconvolution", x.shape, w.shape, base_axis, pad, stride, dilation, group)
    if (
        geo is None
        or not _same_float(x, w, *(() if b is None else (b,)))
        or x.shape[geo.base_axis] != w.shape[0]
        or (b is not None and b.shape != w.shape[1:2])
    ):
        return _generic("Deconvolution")(xp, x, w, b, *args)
    conv = _conv_module()
    op = conv.ints(output_padding, 2, 0, "deconvolution", "output_padding")
    if any(e >= s and e >= d for e, s, d in zip(op, geo.stride, geo.dilation)):
        return _generic("Deconvolution")(xp, x, w, b, *args)  # raises
    ci, co, kh, kw = w.shape
    hi, wi = x.shape[-2:]
    size = tuple(
        conv.deconv_out_len(i, k, p, s, d, e)
        for i, k, p, s, d, e in zip((hi, wi), (kh, kw), geo.pad, geo.stride, geo.dilation, op)
    )
    if min(size) < 1:
        return _generic("Deconvolution")(xp, x, w, b, *args)  # raises
    xf = x.reshape(geo.n, ci, hi * wi)
    col = xp.dot(w.reshape(ci, -1).T, _from_nchw(xp, xf))  # (Co*KH*KW, N*Hi*Wi)
    y = xp.empty((geo.n, co, *size), dtype=x.dtype)
    _k(_narrow(col.size, y.size))["col2im"](
        col,
        col if b is None else b,
        b is not None,
        co,
        size[0],
        size[1],
        kh,
        kw,
        hi,
        wi,
        *geo.pad,
        *geo.stride,
        *geo.dilation,
        geo.n * hi * wi,
        y,
    )
    return y.reshape(geo.batch + y.shape[1:])


def convolution_filter_grad(
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
    """The weight gradient on ``cuda``: ``dy2 @ col(x).T``, one GEMM."""
    args = (kernel, base_axis, pad, stride, dilation, group)
    conv = _conv_module()
    k = conv.filter_kernel(kernel)
    geo = _geometry(
        "convolution_filter_grad", x.shape, (1, 1, *k), base_axis, pad, stride, dilation, group
    )
    if geo is None or not _same_float(x, dy) or dy.ndim != x.ndim:
        return _generic("ConvolutionFilterGrad")(xp, x, dy, *args)
    ba = geo.base_axis
    xf = x.reshape(geo.n, *x.shape[ba:])
    dyf = dy.reshape(-1, *dy.shape[ba:])
    out = conv.conv_out_shape("convolution_filter_grad", xf.shape[2:], k, geo)
    if tuple(dy.shape[:ba]) != geo.batch or tuple(dyf.shape[2:]) != out:
        return _generic("ConvolutionFilterGrad")(xp, x, dy, *args)  # raises
    col = _im2col(xp, xf, k[0], k[1], out, geo)
    dw = xp.dot(_from_nchw(xp, dyf), col.T)
    return dw.reshape(dyf.shape[1], xf.shape[1], *k)


# -- max pooling -------------------------------------------------------------------------------


def _pool_geometry(
    fname: str,
    shape: Any,
    kernel: Any,
    stride: Any,
    ignore_border: bool,
    pad: Any,
    channel_last: bool,
    disjoint: bool = False,
) -> Any:
    """nn-ops' PoolGeom when this module handles the call (2-d windows, channels first, and
    with ``disjoint`` windows that do not overlap), else None."""
    if channel_last:
        return None
    pooling = _pool_module()
    geo = pooling.pool_geom(fname, shape, kernel, stride, ignore_border, pad, channel_last)
    if len(geo.kernel) != 2 or (disjoint and not pooling.disjoint_windows(geo)):
        return None
    return geo


def _pool_args(geo: Any, dtype: Any) -> tuple[Any, ...]:
    h, w = geo.shape[-2:]
    return (h, w, *geo.out, *geo.kernel, *geo.stride, *geo.pad, dtype.type(-np.inf))


def _pool_launch(
    xp: Any, name: str, a: Any, b: Any, geo: Any, shape: Any, dtype: Any, out_dtype: Any = None
) -> Any:
    """Run the two-input pooling kernel ``name`` on ``a`` and ``b`` (data of ``dtype``) into a new
    array of ``shape`` (``out_dtype``, else ``dtype``)."""
    out = xp.empty(shape, dtype=dtype if out_dtype is None else out_dtype)
    _k(_narrow(a.size, b.size, out.size))[name](
        xp.ascontiguousarray(a), xp.ascontiguousarray(b), *_pool_args(geo, dtype), out
    )
    return out


def max_pooling(
    xp: Any,
    x: Any,
    kernel: Any = None,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> Any:
    """Max pooling on ``cuda``: one thread per output."""
    args = (kernel, stride, ignore_border, pad, channel_last)
    geo = _pool_geometry("max_pooling", x.shape, *args)
    if geo is None or not _same_float(x):
        return _generic("MaxPooling")(xp, x, *args)
    y = xp.empty(geo.out_shape, dtype=x.dtype)
    _k(_narrow(x.size, y.size))["max_pool"](xp.ascontiguousarray(x), *_pool_args(geo, x.dtype), y)
    return y


def max_pooling_backward(
    xp: Any,
    dy: Any,
    x: Any,
    kernel: Any = None,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> Any:
    """MaxPoolingBackward on ``cuda``: one thread per input element, summing over its windows."""
    args = (kernel, stride, ignore_border, pad, channel_last)
    geo = _pool_geometry("max_pooling_backward", x.shape, *args)
    if geo is None or not _same_float(x, dy) or tuple(dy.shape) != geo.out_shape:
        return _generic("MaxPoolingBackward")(xp, dy, x, *args)
    if not _pool_module().disjoint_windows(geo):
        return _pool_launch(xp, "max_pool_backward", dy, x, geo, x.shape, x.dtype)
    # windows that do not overlap: one thread per window; the inputs outside every window (a
    # remainder of rows or columns, padding) are zeros
    (h, w), (ho, wo), (kh, kw) = x.shape[-2:], geo.out, geo.kernel
    covered = geo.stride == geo.kernel and not any(geo.pad) and ho * kh == h and wo * kw == w
    dx = (xp.empty if covered else xp.zeros)(x.shape, dtype=x.dtype)
    if dy.size:
        _k(_narrow(x.size, dy.size))["max_pool_backward_disjoint"](
            xp.ascontiguousarray(dy),
            xp.ascontiguousarray(x),
            *_pool_args(geo, x.dtype),
            dx,
            size=dy.size,
        )
    return dx


def max_pooling_gather(
    xp: Any,
    g: Any,
    x: Any,
    kernel: Any = None,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> Any:
    """MaxPoolingGather on ``cuda``: one thread per output."""
    args = (kernel, stride, ignore_border, pad, channel_last)
    geo = _pool_geometry("max_pooling_gather", x.shape, *args)
    if geo is None or not _same_float(x, g) or g.shape != x.shape:
        return _generic("MaxPoolingGather")(xp, g, x, *args)
    return _pool_launch(xp, "max_pool_gather", g, x, geo, geo.out_shape, x.dtype)


def max_pooling_mask(
    xp: Any,
    x: Any,
    y: Any,
    kernel: Any = None,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> Any:
    """MaxPoolingMask on ``cuda``: one thread per input element (windows that do not overlap)."""
    args = (kernel, stride, ignore_border, pad, channel_last)
    geo = _pool_geometry("max_pooling_mask", x.shape, *args, disjoint=True)
    if geo is None or not _same_float(x, y) or tuple(y.shape) != geo.out_shape:
        return _generic("MaxPoolingMask")(xp, x, y, *args)
    return _pool_launch(xp, "max_pool_mask", x, y, geo, x.shape, x.dtype, np.bool_)


def masked_unpooling(
    xp: Any,
    dy: Any,
    mask: Any,
    kernel: Any = None,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> Any:
    """MaskedUnpooling on ``cuda``: one thread per input element."""
    args = (kernel, stride, ignore_border, pad, channel_last)
    geo = (
        _pool_geometry("masked_unpooling", mask.shape, *args, disjoint=True)
        if mask.dtype == np.bool_
        else None
    )
    if geo is None or not _same_float(dy) or tuple(dy.shape) != geo.out_shape:
        return _generic("MaskedUnpooling")(xp, dy, mask, *args)
    return _pool_launch(xp, "masked_unpool", dy, mask, geo, mask.shape, dy.dtype)


def masked_pooling(
    xp: Any,
    g: Any,
    mask: Any,
    kernel: Any = None,
    stride: Any = None,
    ignore_border: bool = True,
    pad: Any = None,
    channel_last: bool = False,
) -> Any:
    """MaskedPooling on ``cuda``: one thread per output."""
    args = (kernel, stride, ignore_border, pad, channel_last)
    geo = (
        _pool_geometry("masked_pooling", mask.shape, *args, disjoint=True)
        if mask.dtype == np.bool_
        else None
    )
    if geo is None or not _same_float(g) or g.shape != mask.shape:
        return _generic("MaskedPooling")(xp, g, mask, *args)
    return _pool_launch(xp, "masked_pool", g, mask, geo, geo.out_shape, g.dtype)


# -- softmax cross entropy ---------------------------------------------------------------------


def softmax_cross_entropy(xp: Any, x: Any, target: Any, axis: Any = None) -> Any:
    """SoftmaxCrossEntropy of (N, C) logits on ``cuda``: one kernel (the generic one launches
    about fifteen), and one synchronisation for the label check (the generic one takes two).
    Integer labels, or float32/float64 labels holding whole numbers (nnabla's label Variables
    are float): a label outside [0, C) or not a whole number makes the generic kernel raise its
    error; while recording, the check is deferred to after each launch."""
    n = x.shape[0]
    if (
        x.ndim != 2
        or axis not in (None, 1, -1)
        or not _same_float(x)
        or target.size != n
        or not (target.dtype.kind in "iu" or target.dtype in _FLOATS)
        or tuple(target.shape) not in ((n, 1), (n,))
    ):
        return _generic("SoftmaxCrossEntropy")(xp, x, target, axis)
    bad = xp.zeros(1, dtype=np.int32)
    loss = xp.empty(target.shape, dtype=x.dtype)
    _k(_narrow(x.size))["sce"](
        xp.ascontiguousarray(x), xp.ascontiguousarray(target), x.shape[1], loss, bad
    )
    if _failed(bad):
        return _generic("SoftmaxCrossEntropy")(xp, x, target, axis)  # raises, naming the labels
    return loss


def _failed(bad: Any) -> bool:
    """Whether the device flag ``bad`` (int32, nonzero where a check failed) is set, read now;
    False while a CUDA graph is recorded (the recording keeps the flag to read after each
    launch, :func:`gradhub_cuda.capture.defer_check`)."""
    if defer_check(bad):
        return False
    return bool(int(bad.get()[0]))


# -- index checks deferred: Embed, EmbedBackward, OneHot ----------------------------------------

#: index dtypes the device-side check reads (the generic kernels take the others and raise)
_INDEX_DTYPES = (
    tuple(
        np.dtype(t)
        for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
    )
    + _FLOATS
)


def _sizes(shape: Any) -> tuple[int, ...] | None:
    """``shape`` as a tuple of ints >= 0, or None (the generic kernel then raises its error)."""
    try:
        vals = tuple(shape)
    except TypeError:
        return None
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in vals):
        return None
    return tuple(int(v) for v in vals) if all(v >= 0 for v in vals) else None


def _checked_ids(xp: Any, ids: Any, bounds: tuple[int, ...], bad: Any) -> bool:
    """Set ``bad`` (an int32 device flag) where an id of ``ids`` is outside ``[0, bound)`` or a
    float id is no whole number (``ids[..., j]`` against ``bounds[j]`` when several bounds are
    given); True when the check failed (read now), False when it passed or a recording keeps
    the flag to read after each launch."""
    check = _k()["index_check"]
    if len(bounds) == 1:
        check(ids, bounds[0], bad)
    else:
        for j, n in enumerate(bounds):
            check(ids[..., j], n, bad)
    return _failed(bad)


def _as_ids(ids: Any) -> Any:
    """Checked ids as the generic kernels use them (floats cast to int64, as
    :func:`gradhub_nn_ops.math.whole_numbers`)."""
    return ids if ids.dtype.kind in "iu" else ids.astype(np.int64)


def embed(xp: Any, x0: Any, w: Any) -> Any:
    """Embed on ``cuda``: the ids' range check (and, for float ids, the whole-number check) in
    one kernel setting a device flag, read once (the generic kernel reads the minimum and the
    maximum, two synchronisations) or, while a CUDA graph is recorded, after each launch
    (:func:`gradhub_cuda.capture.defer_check`); the rows gathered as the generic kernel does."""
    if w.ndim < 1 or x0.dtype not in _INDEX_DTYPES or not x0.size:
        return _generic("Embed")(xp, x0, w)
    bad = xp.zeros(1, dtype=np.int32)
    if _checked_ids(xp, x0, (w.shape[0],), bad):
        return _generic("Embed")(xp, x0, w)  # raises, naming the ids
    return xp.take(w, _as_ids(x0), axis=0)


def embed_backward(xp: Any, x0: Any, g: Any, shape: Any = ()) -> Any:
    """EmbedBackward on ``cuda``: the ids checked as by :func:`embed`, the rows scatter-added
    as the generic kernel does."""
    sizes = _sizes(shape)
    if (
        sizes is None
        or not sizes
        or x0.dtype not in _INDEX_DTYPES
        or not x0.size
        or tuple(g.shape) != tuple(x0.shape) + sizes[1:]
    ):
        return _generic("EmbedBackward")(xp, x0, g, shape)
    bad = xp.zeros(1, dtype=np.int32)
    if _checked_ids(xp, x0, sizes[:1], bad):
        return _generic("EmbedBackward")(xp, x0, g, shape)  # raises, naming the ids
    out = xp.zeros(sizes, dtype=g.dtype)
    xp.add.at(out, _as_ids(x0).reshape(-1), g.reshape((x0.size, *sizes[1:])))
    return out


def one_hot(xp: Any, x: Any, shape: Any = ()) -> Any:
    """OneHot on ``cuda``: the indices checked as by :func:`embed` (each last-axis position
    against its size), and the float32 output written by one kernel (the generic kernel fills
    zeros and scatters ones, which copies the host scalar 1.0 to the GPU)."""
    sizes = _sizes(shape)
    if (
        sizes is None
        or not sizes
        or x.dtype not in _INDEX_DTYPES
        or x.ndim < 1
        or x.shape[-1] != len(sizes)
        or not x.size
    ):
        return _generic("OneHot")(xp, x, shape)
    bad = xp.zeros(1, dtype=np.int32)
    if _checked_ids(xp, x, sizes, bad):
        return _generic("OneHot")(xp, x, shape)  # raises, naming the position and its range
    lead = tuple(x.shape[:-1])
    m = math.prod(lead)
    idx = _as_ids(x).reshape(m, len(sizes))
    flat = xp.zeros((m,), dtype=np.int64)
    stride = 1
    for k in reversed(range(len(sizes))):
        flat += idx[:, k].astype(np.int64) * stride
        stride *= sizes[k]
    y = xp.empty((m, stride), dtype=np.float32)
    if y.size:
        _k()["one_hot"](flat, stride, y)
    return y.reshape((*lead, *sizes))


# -- integer-array keys of GetItem and GetItemBackward, copied to the GPU once ----------------

#: id of a host integer array used in a key -> (its contents when copied, GPU id -> the copy);
#: an entry lives as long as the host array (the node attributes holding the key), so that a
#: recorded graph reading the copy never outlives it
_KEY_COPIES: dict[int, tuple[Any, dict[int, Any]]] = {}


def _device_key_entry(xp: Any, a: Any) -> Any:
    """The GPU copy of the host integer array ``a`` (made once per GPU, again when ``a``'s
    contents changed since)."""
    dev = xp.cuda.Device().id
    key = id(a)
    entry = _KEY_COPIES.get(key)
    if entry is not None and not (entry[0].shape == a.shape and np.array_equal(entry[0], a)):
        entry = None
    if entry is None:
        entry = _KEY_COPIES[key] = (a.copy(), {})
        weakref.finalize(a, _KEY_COPIES.pop, key, None)
    copies = entry[1]
    d = copies.get(dev)
    if d is None:
        d = copies[dev] = xp.asarray(a)
    keep(d)  # recording a CUDA graph: it reads d as long as it lives
    return d


def _device_key(xp: Any, key: Any) -> Any:
    """``key`` with its host integer arrays replaced by their GPU copies (other entries,
    boolean masks among them, as they are)."""
    entries = key if isinstance(key, tuple) else (key,)
    if not any(type(k) is np.ndarray and k.dtype.kind in "iu" for k in entries):
        return key
    out = tuple(
        _device_key_entry(xp, k) if type(k) is np.ndarray and k.dtype.kind in "iu" else k
        for k in entries
    )
    return out if isinstance(key, tuple) else out[0]


def get_item(xp: Any, x: Any, key: Any = ()) -> Any:
    """GetItem on ``cuda``: the generic kernel, with the key's host integer arrays copied to the
    GPU once (:func:`_device_key`) instead of at every call, so that a step indexing with them
    can be recorded into a CUDA graph."""
    return _generic("GetItem")(xp, x, _device_key(xp, key))


def get_item_backward(xp: Any, g: Any, key: Any = (), shape: Any = ()) -> Any:
    """GetItemBackward on ``cuda`` (Pad's reflect/repeat gradients among its callers), the key
    as for :func:`get_item`."""
    return _generic("GetItemBackward")(xp, g, _device_key(xp, key), shape)


# -- sums over all axes but one ---------------------------------------------------------------


def sum_(xp: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Sum on ``cuda``. Over every axis but one, ``k`` (the bias gradients of convolutions: N, H
    and W of NCHW), of a C-contiguous float array: the sum over the contiguous trailing axes as
    one reduction of ``x.reshape(lead, n_k, trail)`` over its last axis, then over the leading
    ones, where the trailing axes hold at least 32 elements per kept one. Measured on an H200
    (2026-11-26, GPU time per call): (256, 8, 32, 32) 67 us against CuPy's 147 us for axes
    (0, 2, 3) at once, (256, 16, 16, 16) 66 against 62, (256, 64, 8, 8) 68 against 40. Anything
    else goes to the generic kernel."""
    k = _two_step_axis(x, axis)
    if k is None:
        return _generic("Sum")(xp, x, axis, keepdims)
    lead, trail = math.prod(x.shape[:k]), math.prod(x.shape[k + 1 :])
    y = x.reshape(lead, x.shape[k], trail).sum(axis=2).sum(axis=0)
    if keepdims:
        y = y.reshape(tuple(n if i == k else 1 for i, n in enumerate(x.shape)))
    return y


def _two_step_axis(x: Any, axis: Any) -> int | None:
    """The one axis a sum of ``x`` over ``axis`` keeps, where :func:`sum_` sums in two steps
    (an inner axis of a nonempty C-contiguous float array, at least 32 trailing elements per
    kept one: with more channels over smaller images CuPy's one reduction wins); else None."""
    nd = x.ndim
    if axis is None or nd < 3 or x.dtype not in _FLOATS or not x.flags.c_contiguous or not x.size:
        return None
    try:
        axes = {int(a) % nd for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
    except (TypeError, ValueError):
        return None
    kept = [i for i in range(nd) if i not in axes]
    if len(kept) != 1 or kept[0] in (0, nd - 1):
        return None
    k = kept[0]
    return k if math.prod(x.shape[k + 1 :]) >= 32 * x.shape[k] else None


KERNELS: dict[str, Callable[..., Any]] = {
    "Sum": sum_,
    "Convolution": convolution,
    "Deconvolution": deconvolution,
    "ConvolutionFilterGrad": convolution_filter_grad,
    "MaxPooling": max_pooling,
    "MaxPoolingBackward": max_pooling_backward,
    "MaxPoolingGather": max_pooling_gather,
    "MaxPoolingMask": max_pooling_mask,
    "MaskedUnpooling": masked_unpooling,
    "MaskedPooling": masked_pooling,
    "SoftmaxCrossEntropy": softmax_cross_entropy,
    "Embed": embed,
    "EmbedBackward": embed_backward,
    "OneHot": one_hot,
    "GetItem": get_item,
    "GetItemBackward": get_item_backward,
}
"""Function name -> its ``cuda`` kernel (same signature as the generic ``xp`` kernel)."""


# -- rule kernels --------------------------------------------------------------------------------


def relu_backward(
    xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any, inplace: bool = False
) -> list[Any]:
    """ReLU's first-order backward on ``cuda``: :math:`g_x = g_y \\cdot [y > 0]` in one kernel
    (the generic rule launches a comparison and a product)."""
    g, yy = gy[0], y[0]
    if g.shape != yy.shape or g.dtype != yy.dtype or g.dtype not in _FLOATS:
        return _generic_rule("ReLU")(xp, gy, x, xs, y, ys, inplace=inplace)  # type: ignore[no-any-return]
    return [_k()["relu_bw"](g, yy)]


def softmax_cross_entropy_backward(
    xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any, axis: Any = None
) -> list[Any]:
    """SoftmaxCrossEntropy's first-order backward on ``cuda``:
    :math:`g_x = (\\mathrm{softmax}(x) - \\mathrm{onehot}(t))\\, g_y` along the class axis in
    one kernel, one thread per row (the generic rule launches about ten: max, exp, sum, divide,
    the label update, the product); with more than 128 classes, three (the row's max, the sum of
    exponentials, one thread per element)."""
    xx, t = x
    g = gy[0]
    nd = xx.ndim
    ax = axis if axis is not None else nd - 1
    if type(ax) is int and -nd <= ax < 0:
        ax += nd
    if (
        type(ax) is not int
        or not 0 <= ax < nd
        or xx.dtype not in _FLOATS
        or g.dtype != xx.dtype
        or t.dtype.kind not in "iuf"
        or xx.size == 0
    ):
        return _generic_rule("SoftmaxCrossEntropy")(xp, gy, x, xs, y, ys, axis=axis)  # type: ignore[no-any-return]
    c = xx.shape[ax]
    k = math.prod(xx.shape[ax + 1 :])
    rows = xx.size // c
    if t.size != rows or g.size != rows:
        return _generic_rule("SoftmaxCrossEntropy")(xp, gy, x, xs, y, ys, axis=axis)  # type: ignore[no-any-return]
    xc = xp.ascontiguousarray(xx)
    if c <= _SCE_ROW_CLASSES:
        dx = xp.empty(xx.shape, dtype=xx.dtype)
        _k(_narrow(xx.size))["sce_bw"](xc, t.reshape(rows), g.reshape(rows), c, k, dx)
        return [dx, None]
    m = xc.max(axis=ax, keepdims=True)
    s = _k()["sum_exp"](xc, m, axis=ax, keepdims=True)
    tr = xp.ascontiguousarray(t.reshape(rows))
    gr = xp.ascontiguousarray(g.reshape(rows))
    return [_k(_narrow(xx.size))["sce_bw_wide"](xc, m, s, tr, gr, c, k), None]


def _exclusive_prod(xp: Any, x: Any, axes: tuple[int, ...]) -> Any:
    """For each element of ``x``, the product of the other elements of its group over ``axes``
    (gradhub-nn-ops' own function, which its array rule of Prod uses: the same numbers)."""
    from gradhub_nn_ops.reductions import exclusive_prod_array

    return exclusive_prod_array(xp, x, axes)


def prod_backward(
    xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any, axis: Any = None, keepdims: bool = False
) -> list[Any]:
    """Prod's first-order backward on ``cuda``: :math:`g_x = g_y \\cdot y / x` where no element
    of ``x`` is zero, else :math:`g_y` times the product of the other elements of each group
    (prefix and suffix products), as the generic rule; both computed and one kept by
    ``where`` on the device, instead of reading on the host whether ``x`` holds a zero (a
    synchronisation, which a CUDA graph cannot record). The values are those of the generic
    rule."""
    from gradhub_nn_ops.math import kept_shape, norm_axes

    xx, g0 = x[0], gy[0]
    yy = y[0] if y else None
    if xx.dtype not in _FLOATS or yy is None or g0.dtype != xx.dtype or not xx.size:
        return _generic_rule("Prod")(xp, gy, x, xs, y, ys, axis=axis, keepdims=keepdims)  # type: ignore[no-any-return]
    shape = tuple(xs[0])
    axes = norm_axes("prod", axis, len(shape))
    if not axes:
        return _generic_rule("Prod")(xp, gy, x, xs, y, ys, axis=axis, keepdims=keepdims)  # type: ignore[no-any-return]
    k = kept_shape(shape, axes)
    g = g0.reshape(k)
    by_division = yy.reshape(k) / xx
    others = _exclusive_prod(xp, xx, axes)
    return [g * xp.where((xx == 0).any(), others, by_division)]


RULE_KERNELS: dict[str, Callable[..., Any]] = {
    "ReLU": relu_backward,
    "SoftmaxCrossEntropy": softmax_cross_entropy_backward,
    "Prod": prod_backward,
}
"""Function name -> the ``cuda`` rule kernel of its rule (the signature of the rule's
``fast_backward``; registered with ``register.rule_kernel``)."""
