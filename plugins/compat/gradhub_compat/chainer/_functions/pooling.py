"""chainer 7.8.1's ``chainer/functions/pooling`` functions beyond the core of
:mod:`gradhub_compat.chainer.functions` (which re-exports them): the N-d, 1-d and 3-d max and
average poolings, the unpoolings (``unpooling_2d``, ``unpooling_nd``, ``unpooling_1d``,
``unpooling_3d``), ``upsampling_2d``, ``spatial_pyramid_pooling_2d`` and the ROI poolings and
aligns.

Each is a composition of the registered gradhub functions, so every order of gradient comes from
the native engine; the ROI max poolings and the max align read their inputs in Python."""

from __future__ import annotations

import itertools
from builtins import max as builtins_max
from collections.abc import Callable
from typing import Any

import numpy as np
from gradhub.batching import refuse_data
from gradhub.variable import Variable as _NativeVariable
from gradhub.variable import observe_read

from ..._common import call_native as _call
from ..._common import host_array
from .. import Variable, as_variable
from .. import functions as F
from ..functions import _check_float, _const, _dtype, _out, _pair, _pool_out, _shape
from ._common import (
    _conv_outsize,
    _data,
    _deconv_outsize,
    _fdtype,
    _invalid,
    _kind,
    _ntuple,
    _spatial,
    _tuple_n,
)

__all__ = [
    "average_pooling_1d",
    "average_pooling_3d",
    "average_pooling_nd",
    "max_pooling_1d",
    "max_pooling_3d",
    "max_pooling_nd",
    "roi_average_align_2d",
    "roi_average_pooling_2d",
    "roi_max_align_2d",
    "roi_max_pooling_2d",
    "roi_pooling_2d",
    "spatial_pyramid_pooling_2d",
    "unpooling_1d",
    "unpooling_2d",
    "unpooling_3d",
    "unpooling_nd",
    "upsampling_2d",
]


def unpooling_nd(
    x: Any,
    ksize: Any,
    stride: Any = None,
    pad: Any = 0,
    outsize: Any = None,
    cover_all: bool = True,
) -> Variable:
    """The inverse of pooling over the spatial axes of x (N, C, d_1, ..., d_n): each element
    copied over its ``ksize`` window (stride defaults to ksize; overlapping copies add up), the
    result seen from ``pad`` on (chainer's ``col2im_nd``), of size ``outsize`` or
    ``s (d - 1) + k - 2 p`` (``- s + 1`` with ``cover_all``); ``outsize`` must map back to x's
    size (chainer's ``InvalidType``). A composition of gradhub functions (every order).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.unpooling_nd(np.array([[[1.0, 2.0]]], np.float32), 2, cover_all=False)
        variable([[[1., 1., 2., 2.]]])
    """
    shape = _shape(x)
    nd = len(shape) - 2
    if nd <= 0:
        raise ValueError("pooling operation requires at least one spatial dimension.")
    k = _tuple_n(ksize, nd)
    s = _tuple_n(ksize if stride is None else stride, nd)
    p = _tuple_n(pad, nd)
    if len(k) != nd or len(s) != nd or len(p) != nd:
        raise ValueError(
            f"chainer F.unpooling_nd: ksize, stride and pad must have {nd} entries (x's spatial "
            f"axes), got {k}, {s}, {p}"
        )
    label = "UnpoolingND"
    if _kind(x) != "f":
        raise _invalid(label, "x.dtype.kind == f", f"{_dtype(x)} != f")
    dims = shape[2:]
    if outsize is None:
        out = tuple(
            _deconv_outsize(d, kk, ss, pp, cover_all) for d, kk, ss, pp in zip(dims, k, s, p)
        )
    else:
        out = _tuple_n(outsize, nd)
        expected = tuple(
            _conv_outsize(o, kk, ss, pp, cover_all) for o, kk, ss, pp in zip(out, k, s, p)
        )
        if expected != dims:
            raise _invalid(label, f"x.shape[2:] == {expected}", f"{dims} != {expected}")
    c = shape[1]
    ones = F._const(np.ones((c, 1, *k), dtype=np.dtype(_dtype(x))), x)
    y = _call("Deconvolution", x, ones, None, base_axis=1, pad=(0,) * nd, stride=s, group=c)
    full = _shape(y)[2:]
    need = tuple(builtins_max(pp + o - f, 0) for pp, o, f in zip(p, out, full))
    if any(need):
        y = _call("Pad", y, pad_width=tuple(v for e in need for v in (0, e)), mode="constant")
    key = (slice(None), slice(None), *(slice(pp, pp + o) for pp, o in zip(p, out)))
    return _out(_call("GetItem", y, key=key))  # type: ignore[no-any-return]


def _unpool_fixed(fname: str, nd: int) -> Callable[..., Variable]:
    def fn(
        x: Any,
        ksize: Any,
        stride: Any = None,
        pad: Any = 0,
        outsize: Any = None,
        cover_all: bool = True,
    ) -> Variable:
        got = len(_shape(x)[2:])
        if got != nd:
            raise ValueError(
                "The number of dimensions under channel dimension of the input 'x' should be "
                f"{nd}. But the actual ndim was {got}."
            )
        return unpooling_nd(x, ksize, stride, pad, outsize, cover_all)

    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f""":func:`unpooling_nd` of x with {nd} spatial axes (another number raises
    chainer's ``ValueError``)."""
    return fn


unpooling_1d = _unpool_fixed("unpooling_1d", 1)


unpooling_3d = _unpool_fixed("unpooling_3d", 3)


def spatial_pyramid_pooling_2d(x: Any, pyramid_height: int, pooling: str | None = None) -> Variable:
    """chainer's spatial pyramid pooling of x (N, C, H, W): for each level ``l <
    pyramid_height``, :func:`max_pooling_2d` into ``2 ** l`` bins per axis (window
    ``ceil(H / 2 ** l)``, padding half the remainder, ``cover_all=True``), flattened to
    (N, C 4 ** l, 1, 1), all levels concatenated along axis 1. ``pooling`` must be ``"max"``
    (chainer's ``ValueError`` otherwise, its default None included).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> F.spatial_pyramid_pooling_2d(x, 2, pooling="max").shape
        (1, 5, 1, 1)
    """
    import math

    _c, bh, bw = _shape(x)[1:]
    ys = []
    for level in range(pyramid_height):
        n_bins = int(2**level)
        kh = math.ceil(bh / float(n_bins))
        kw = math.ceil(bw / float(n_bins))
        ph = (kh * n_bins - bh) // 2
        pw = (kw * n_bins - bw) // 2
        if pooling != "max":
            raise ValueError("Unsupported pooling operation: ", pooling)
        y = F.max_pooling_2d(x, ksize=(kh, kw), stride=None, pad=(ph, pw), cover_all=True)
        n, c, h, w = y.shape
        ys.append(F.reshape(y, (n, c * h * w, 1, 1)))
    return F.concat(ys)


def _roi_slice(size: int, stride: float, max_size: int, roi_offset: int) -> tuple[int, int]:
    """chainer's ``_roi_pooling_slice``: the (start, end) of bin ``size``."""
    start = int(np.floor(size * stride))
    end = int(np.ceil((size + 1) * stride))
    start = min(max(start + roi_offset, 0), max_size)
    end = min(max(end + roi_offset, 0), max_size)
    return start, end


def _outsize_pair(outsize: Any) -> tuple[int, int]:
    import numbers

    outh, outw = outsize if hasattr(outsize, "__iter__") else (outsize, outsize)
    if not (isinstance(outh, numbers.Integral) and int(outh) > 0):
        raise TypeError(f"outsize[0] must be positive integer: {type(outh)}, {outh}")
    if not (isinstance(outw, numbers.Integral) and int(outw) > 0):
        raise TypeError(f"outsize[1] must be positive integer: {type(outw)}, {outw}")
    return int(outh), int(outw)


def _scale_check(spatial_scale: Any) -> float:
    import numbers

    if isinstance(spatial_scale, numbers.Integral):
        spatial_scale = float(spatial_scale)
    if not (isinstance(spatial_scale, numbers.Real) and float(spatial_scale) > 0):
        raise TypeError(
            f"spatial_scale must be a positive float number: {type(spatial_scale)}, {spatial_scale}"
        )
    return float(spatial_scale)


def _roi_check(
    label: str, x: Any, rois: Any, roi_indices: Any, n_coords: int, float32_only: bool = False
) -> tuple[Any, Any]:
    xs, rs = _shape(x), _shape(rois)
    xdt, rdt = _dtype(x), _dtype(rois)
    if rdt is None:
        rdt = np.asarray(rois).dtype
    if float32_only:
        if xdt != np.float32 or rdt != np.float32:
            raise _invalid(label, "x.dtype == rois.dtype == float32", f"{xdt}, {rdt}")
    elif _kind(x) != "f" or xdt != rdt:
        raise _invalid(label, "x.dtype.kind == f, x.dtype == rois.dtype", f"{xdt}, {rdt}")
    if len(xs) != 4:
        raise _invalid(label, "x.ndim == 4", f"{len(xs)} != 4")
    if len(rs) != 2 or rs[1] != n_coords:
        raise _invalid(label, f"rois.ndim == 2, rois.shape[1] == {n_coords}", f"{rs}")
    ra = host_array(_data(rois, label))  # (read in Python: the bins)
    if roi_indices is None:
        return ra, None
    ia = host_array(_data(roi_indices, label))
    if ia.dtype != np.int32 or ia.ndim != 1 or ia.shape[0] != rs[0]:
        raise _invalid(
            label,
            "roi_indices.dtype == int32, roi_indices.ndim == 1, rois.shape[0] == "
            "roi_indices.shape[0]",
            f"{ia.dtype}, {ia.shape}, {rs}",
        )
    return ra, ia


def _pick(x: Any, flat: np.ndarray, fill: float) -> Any:
    """``x.ravel()[flat]`` with the entries ``-1`` of ``flat`` given ``fill`` (a gather, so the
    gradient goes to the picked elements)."""
    dt = np.dtype(_dtype(x))
    xf = F.reshape(x, (-1,))
    ext = F.concat([xf, F._const(np.full((1,), fill, dt), x)], axis=0)
    idx = np.where(flat < 0, int(np.prod(_shape(x))), flat)
    return F.get_item(ext, idx)


def _weighted(x: Any, pos: np.ndarray, w: np.ndarray) -> Any:
    """``sum_l x[n, c, h, w at pos[..., l]] * w[..., l]`` for each channel: ``pos`` (..., L)
    flat positions in (N, H, W) (``-1``: none), ``w`` their weights; shape (..., C)."""
    n, c, h, wd = _shape(x)
    dt = np.dtype(_dtype(x))
    xt = F.reshape(F.transpose(x, (0, 2, 3, 1)), (n * h * wd, c))
    ext = F.concat([xt, F._const(np.zeros((1, c), dt), x)], axis=0)
    idx = np.where(pos < 0, n * h * wd, pos)
    g = F.get_item(ext, idx)  # (..., L, C)
    wv = F._const(w.astype(dt)[..., None], x)
    return F.sum(g * F.broadcast_to(wv, g.shape), axis=len(pos.shape) - 1)


def _roi_bins(
    ra: np.ndarray,
    ia: np.ndarray | None,
    outh: int,
    outw: int,
    scale: float,
    height: int,
    width: int,
) -> list[tuple[int, int, int, int, int, int, int]]:
    """For each roi and bin of chainer's ROI poolings: (roi, bin, image, h0, h1, w0, w1)
    (empty bins left out). ``ia`` None: ``roi_pooling_2d``'s rois (index, xmin, ymin, xmax,
    ymax) and sizes ``max + 1 - min``; else (ymin, xmin, ymax, xmax) and ``max - min``."""
    out = []
    for r in range(ra.shape[0]):
        if ia is None:
            idx, xmin, ymin, xmax, ymax = ra[r]
            plus = 1
        else:
            idx = ia[r]
            ymin, xmin, ymax, xmax = ra[r]
            plus = 0
        xmin = int(np.rint(xmin * scale))
        xmax = int(np.rint(xmax * scale))
        ymin = int(np.rint(ymin * scale))
        ymax = int(np.rint(ymax * scale))
        roi_w = max(xmax - xmin + plus, 1)
        roi_h = max(ymax - ymin + plus, 1)
        sh = 1.0 * roi_h / outh
        sw = 1.0 * roi_w / outw
        for oh in range(outh):
            h0, h1 = _roi_slice(oh, sh, height, ymin)
            if h1 <= h0:
                continue
            for ow in range(outw):
                w0, w1 = _roi_slice(ow, sw, width, xmin)
                if w1 <= w0:
                    continue
                out.append((r, oh * outw + ow, int(idx), h0, h1, w0, w1))
    return out


def _roi_max(x: Any, bins: list[Any], n_rois: int, outh: int, outw: int, fill: float) -> Variable:
    xa = host_array(_data(x, "roi_pooling"))  # (maxima found on the host)
    _n, c, h, w = xa.shape
    flat = np.full((n_rois, c, outh * outw), -1, np.int64)
    for r, b, idx, h0, h1, w0, w1 in bins:
        region = xa[idx, :, h0:h1, w0:w1].reshape(c, -1)
        am = region.argmax(axis=1)
        hh = am // (w1 - w0) + h0
        ww = am % (w1 - w0) + w0
        flat[r, :, b] = ((idx * c + np.arange(c)) * h + hh) * w + ww
    return F.reshape(_pick(x, flat, fill), (n_rois, c, outh, outw))


def roi_pooling_2d(x: Any, rois: Any, outh: int, outw: int, spatial_scale: float) -> Variable:
    """Fast R-CNN's ROI max pooling: ``rois`` (R, 5) rows ``(image, xmin, ymin, xmax, ymax)``
    in input coordinates (times ``spatial_scale``, rounded), each divided into ``outh x outw``
    bins whose maximum is taken (0 for an empty bin), shape (R, C, outh, outw). As chainer on
    the CPU (the bins of ``_roi_pooling_slice``); the gradient goes to each bin's first
    maximum (rois get none). x's data is read in Python to find the maxima.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> rois = np.array([[0, 0, 0, 3, 3]], np.float32)
        >>> F.roi_pooling_2d(x, rois, 2, 2, 1.0)
        variable([[[[ 5.,  7.],
                    [13., 15.]]]])
    """
    ra, _ = _roi_check("ROIPooling2D", x, rois, None, 5)
    _n, _c, h, w = _shape(x)
    bins = _roi_bins(ra, None, outh, outw, spatial_scale, h, w)
    return _roi_max(x, bins, ra.shape[0], outh, outw, 0.0)


def roi_max_pooling_2d(
    x: Any, rois: Any, roi_indices: Any, outsize: Any, spatial_scale: float
) -> Variable:
    """ROI max pooling with ``rois`` (R, 4) rows ``(ymin, xmin, ymax, xmax)`` and
    ``roi_indices`` (R,) int32 their images; ``outsize`` an int or (outh, outw); an empty bin
    is ``-inf``, as chainer. The gradient goes to each bin's first maximum.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> rois = np.array([[0, 0, 4, 4]], np.float32)
        >>> F.roi_max_pooling_2d(x, rois, np.array([0], np.int32), 2, 1.0)
        variable([[[[ 5.,  7.],
                    [13., 15.]]]])
    """
    n_rois, bins, outh, outw = _roi_pooling_bins(
        "ROIMaxPooling2D", x, rois, roi_indices, outsize, spatial_scale
    )
    return _roi_max(x, bins, n_rois, outh, outw, -np.inf)


def _roi_pooling_bins(
    label: str, x: Any, rois: Any, roi_indices: Any, outsize: Any, spatial_scale: float
) -> tuple[int, Any, int, int]:
    """``(n_rois, bins, outh, outw)`` of roi_max/average_pooling_2d: the arguments checked and
    the bins of each (ymin, xmin, ymax, xmax) roi of ``rois`` on its image of ``x``."""
    outh, outw = _outsize_pair(outsize)
    scale = _scale_check(spatial_scale)
    ra, ia = _roi_check(label, x, rois, roi_indices, 4)
    _n, _c, h, w = _shape(x)
    return ra.shape[0], _roi_bins(ra, ia, outh, outw, scale, h, w), outh, outw


def roi_average_pooling_2d(
    x: Any, rois: Any, roi_indices: Any, outsize: Any, spatial_scale: float
) -> Variable:
    """ROI average pooling (arguments as :func:`roi_max_pooling_2d`): each bin's mean (0 for
    an empty bin); the gradient spreads evenly over the bin.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> rois = np.array([[0, 0, 4, 4]], np.float32)
        >>> F.roi_average_pooling_2d(x, rois, np.array([0], np.int32), 2, 1.0)
        variable([[[[ 2.5,  4.5],
                    [10.5, 12.5]]]])
    """
    n_rois, bins, outh, outw = _roi_pooling_bins(
        "ROIAveragePooling2D", x, rois, roi_indices, outsize, spatial_scale
    )
    _n, c, h, w = _shape(x)
    longest = max([(h1 - h0) * (w1 - w0) for _, _, _, h0, h1, w0, w1 in bins], default=1)
    pos = np.full((n_rois, outh * outw, longest), -1, np.int64)
    wt = np.zeros((n_rois, outh * outw, longest))
    for r, b, idx, h0, h1, w0, w1 in bins:
        hh, ww = np.meshgrid(np.arange(h0, h1), np.arange(w0, w1), indexing="ij")
        p = ((idx * h + hh) * w + ww).ravel()
        pos[r, b, : p.size] = p
        wt[r, b, : p.size] = 1.0 / p.size
    y = _weighted(x, pos, wt)  # (R, bins, C)
    return F.reshape(F.transpose(y, (0, 2, 1)), (n_rois, c, outh, outw))


def _get_bounds(p: float, limit: int) -> tuple[Any, Any, Any]:
    if p < -1 or p > limit:
        return None, None, None
    low = int(np.floor(p))
    if low == limit:
        low = low - 1
    high = low + 1
    if low <= -1:
        p = 0
    elif high >= limit:
        p = limit - 1
    return p, low, high


def _align_samples(
    ra: np.ndarray,
    ia: np.ndarray,
    outh: int,
    outw: int,
    scale: float,
    sampling_ratio: tuple[Any, Any],
    height: int,
    width: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """chainer's ROI-align sample points: for each roi, bin and sample, the 4 flat positions
    in (N, H, W) and bilinear weights (``-1``/0 where chainer adds nothing), whether the
    sample counts, and each bin's sample count."""
    n_rois = ra.shape[0]
    grids = []
    for r in range(n_rois):
        sh, sw, eh, ew = (ra[r, k] * scale for k in range(4))
        rh = max(eh - sh, 1.0)
        rw = max(ew - sw, 1.0)
        gh = int(np.ceil(rh / outh)) if sampling_ratio[0] is None else sampling_ratio[0]
        gw = int(np.ceil(rw / outw)) if sampling_ratio[1] is None else sampling_ratio[1]
        grids.append((sh, sw, rh / outh, rw / outw, gh, gw))
    n_samples = max(g[4] * g[5] for g in grids) if grids else 1
    pos = np.full((n_rois, outh * outw, n_samples, 4), -1, np.int64)
    wt = np.zeros((n_rois, outh * outw, n_samples, 4))
    valid = np.zeros((n_rois, outh * outw, n_samples), bool)
    count = np.ones((n_rois, outh * outw))
    for r, (sh, sw, bh, bw, gh, gw) in enumerate(grids):
        img = int(ia[r])
        for ph in range(outh):
            for pw in range(outw):
                b = ph * outw + pw
                count[r, b] = gh * gw
                for iy in range(gh):
                    y = sh + ph * bh + (iy + 0.5) * bh / gh
                    y, yl, yh = _get_bounds(y, height)
                    if y is None or yl is None or yh is None:
                        continue
                    for ix in range(gw):
                        x = sw + pw * bw + (ix + 0.5) * bw / gw
                        x, xl, xh = _get_bounds(x, width)
                        if x is None or xl is None or xh is None:
                            continue
                        s = iy * gw + ix
                        valid[r, b, s] = True
                        ly, lx = y - yl, x - xl
                        hy, hx = yh - y, xh - x
                        corners = (
                            (hy * hx, yl >= 0 and xl >= 0, yl, xl),
                            (hy * lx, yl >= 0 and xh <= width - 1, yl, xh),
                            (ly * hx, yh <= height - 1 and xl >= 0, yh, xl),
                            (ly * lx, yh <= height - 1 and xh <= width - 1, yh, xh),
                        )
                        for k, (wk, ok, yy, xx) in enumerate(corners):
                            if wk > 0 and ok:
                                pos[r, b, s, k] = (img * height + yy) * width + xx
                                wt[r, b, s, k] = wk
    return pos, wt, valid, count


def _align_args(
    label: str, x: Any, rois: Any, roi_indices: Any, outsize: Any, spatial_scale: Any, sr: Any
) -> tuple[Any, ...]:
    import numbers

    outh, outw = _outsize_pair(outsize)
    scale = _scale_check(spatial_scale)
    pair = tuple(sr) if hasattr(sr, "__iter__") else (sr, sr)
    if not all((isinstance(s, numbers.Integral) and int(s) >= 1) or s is None for s in pair):
        raise TypeError(f"sampling_ratio must be integer >= 1 or a pair of it: {pair}")
    ra, ia = _roi_check(label, x, rois, roi_indices, 4, float32_only=True)
    _n, c, h, w = _shape(x)
    pos, wt, valid, count = _align_samples(ra, ia, outh, outw, scale, pair, h, w)
    return outh, outw, c, pos, wt, valid, count


def roi_average_align_2d(
    x: Any,
    rois: Any,
    roi_indices: Any,
    outsize: Any,
    spatial_scale: float,
    sampling_ratio: Any = None,
) -> Variable:
    """Mask R-CNN's ROI Align, averaging: ``rois`` (R, 4) rows ``(ymin, xmin, ymax, xmax)``
    (times ``spatial_scale``, not rounded), ``roi_indices`` (R,) int32; each of the
    ``outsize`` bins is the mean of ``sampling_ratio`` (default ``ceil(bin size)``) bilinear
    samples per axis, chainer's CPU sampling. x and rois float32, as chainer. A linear function
    of x (a weighted gather), so every order of gradient; rois get none.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> rois = np.array([[0, 0, 4, 4]], np.float32)
        >>> F.roi_average_align_2d(x, rois, np.array([0], np.int32), 2, 1.0)
        variable([[[[ 5.  ,  6.75],
                    [12.  , 13.75]]]])
    """
    outh, outw, c, pos, wt, _valid, count = _align_args(
        "ROIAverageAlign2D", x, rois, roi_indices, outsize, spatial_scale, sampling_ratio
    )
    n_rois = pos.shape[0]
    w = wt / count[:, :, None, None]
    y = _weighted(x, pos.reshape(n_rois, outh * outw, -1), w.reshape(n_rois, outh * outw, -1))
    return F.reshape(F.transpose(y, (0, 2, 1)), (n_rois, c, outh, outw))


def roi_max_align_2d(
    x: Any,
    rois: Any,
    roi_indices: Any,
    outsize: Any,
    spatial_scale: float,
    sampling_ratio: Any = None,
) -> Variable:
    """ROI Align taking each bin's largest bilinear sample (arguments as
    :func:`roi_average_align_2d`; ``-inf`` for a bin without samples, as chainer); the
    gradient goes to the first largest sample's four neighbours. x's data is read in Python to
    find the maxima.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> rois = np.array([[0, 0, 4, 4]], np.float32)
        >>> F.roi_max_align_2d(x, rois, np.array([0], np.int32), 2, 1.0)
        variable([[[[ 7.5,  9. ],
                    [13.5, 15. ]]]])
    """
    outh, outw, c, pos, wt, valid, _count = _align_args(
        "ROIMaxAlign2D", x, rois, roi_indices, outsize, spatial_scale, sampling_ratio
    )
    n_rois, n_bins, _n_samples, _ = pos.shape
    xa = host_array(_data(x, "roi_max_align_2d"))  # (maxima found on the host)
    n, _c, h, w = xa.shape
    xt = np.concatenate([xa.transpose(0, 2, 3, 1).reshape(n * h * w, c), np.zeros((1, c))])
    vals = (xt[np.where(pos < 0, n * h * w, pos)] * wt[..., None]).sum(axis=3)  # (R, B, S, C)
    vals = np.where(valid[..., None], vals, -np.inf)
    best = vals.argmax(axis=2)  # (R, B, C): the first largest sample
    empty = ~valid.any(axis=2)  # (R, B)
    r_i, b_i = np.meshgrid(np.arange(n_rois), np.arange(n_bins), indexing="ij")
    sel_pos = pos[r_i[..., None], b_i[..., None], best]  # (R, B, C, 4)
    sel_w = wt[r_i[..., None], b_i[..., None], best]
    # one weighted gather per channel: positions of (n, h, w) into the (N*H*W, C) layout
    dt = np.dtype(_dtype(x))
    xt_v = F.reshape(F.transpose(x, (0, 2, 3, 1)), (n * h * w * c,))
    ext = F.concat([xt_v, F._const(np.zeros((1,), dt), x)], axis=0)
    ch = np.arange(c)[None, None, :, None]
    flat = np.where(sel_pos < 0, n * h * w * c, sel_pos * c + ch)
    g = F.get_item(ext, flat)  # (R, B, C, 4)
    y = F.sum(g * F._const(sel_w.astype(dt), x), axis=3)  # (R, B, C)
    y = F.where(
        np.broadcast_to(empty[..., None], y.shape), F._const(np.full(y.shape, -np.inf, dt), x), y
    )
    return F.reshape(F.transpose(y, (0, 2, 1)), (n_rois, c, outh, outw))


def _max_pool(
    fname: str,
    x: Any,
    ksize: Any,
    stride: Any,
    pad: Any,
    cover_all: bool,
    return_indices: bool,
    nd: int | None,
) -> Any:
    where = f"chainer F.{fname}"
    n = _spatial(fname, x, nd)
    k = _ntuple(ksize, n, "ksize", where)
    s = k if stride is None else _ntuple(stride, n, "stride", where)
    p = _ntuple(pad, n, "pad", where)
    shape = _shape(x)
    widths = []
    for i in range(n):
        size = shape[2 + i]
        out = _pool_out(size, k[i], s[i], p[i], cover_all)
        extra = builtins_max((out - 1) * s[i] + k[i] - (size + 2 * p[i]), 0)
        widths += [p[i], p[i] + int(extra)]
    h = x
    if any(widths):
        h = _call("Pad", x, pad_width=tuple(widths), mode="constant", constant_value=-np.inf)
    y = _out(_call("MaxPooling", h, kernel=k, stride=s, ignore_border=True, pad=(0,) * n))
    if not return_indices:
        return y
    hv = h if isinstance(h, _NativeVariable) else as_variable(h)
    return y, _pool_indices_nd(hv, k, s, tuple(y.shape), fname)


def _pool_indices_nd(
    h: _NativeVariable, k: tuple[int, ...], s: tuple[int, ...], out: tuple[int, ...], fname: str
) -> Any:
    """chainer's ``return_indices`` of an n-d max pooling: the flat position of each maximum
    inside its window (row-major over the kernel, counting padding; the first on ties)."""
    refuse_data(h, f"chainer.functions.{fname}(return_indices=True)")
    observe_read(h, f"chainer.functions.{fname}(return_indices=True), which reads it in Python")
    data = h._data
    xp = h.device.xp
    best = None
    idx = xp.zeros(out, dtype=np.int64)
    for flat, offs in enumerate(itertools.product(*(range(kk) for kk in k))):
        key = (slice(None), slice(None)) + tuple(
            slice(o, o + st * (m - 1) + 1, st) for o, st, m in zip(offs, s, out[2:], strict=True)
        )
        win = data[key]
        if best is None:
            best = win.copy()
            continue
        better = win > best
        best = xp.where(better, win, best)
        idx = xp.where(better, flat, idx)
    return idx


def max_pooling_nd(
    x: Any,
    ksize: Any,
    stride: Any = None,
    pad: Any = 0,
    cover_all: bool = True,
    return_indices: bool = False,
) -> Any:
    """N-d max pooling of x (N, C, d_1, ..., d_n), as :func:`max_pooling_2d` (stride defaults
    to ksize, padding never wins, ``cover_all`` adds the windows covering the whole input,
    ``return_indices`` also returns each maximum's flat position in its window).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.max_pooling_nd(np.arange(8, dtype=np.float32).reshape(1, 1, 2, 2, 2), 2)
        variable([[[[[7.]]]]])
    """
    return _max_pool("max_pooling_nd", x, ksize, stride, pad, cover_all, return_indices, None)


def max_pooling_1d(
    x: Any,
    ksize: Any,
    stride: Any = None,
    pad: Any = 0,
    cover_all: bool = True,
    return_indices: bool = False,
) -> Any:
    """1-d max pooling (:func:`max_pooling_nd` of x (N, C, L)).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.max_pooling_1d(np.array([[[1.0, 3.0, 2.0]]], np.float32), 2)
        variable([[[3., 2.]]])
    """
    return _max_pool("max_pooling_1d", x, ksize, stride, pad, cover_all, return_indices, 1)


def max_pooling_3d(
    x: Any,
    ksize: Any,
    stride: Any = None,
    pad: Any = 0,
    cover_all: bool = True,
    return_indices: bool = False,
) -> Any:
    """3-d max pooling (:func:`max_pooling_nd` of x (N, C, D, H, W)).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.max_pooling_3d(np.zeros((1, 1, 4, 4, 4), np.float32), 2).shape
        (1, 1, 2, 2, 2)
    """
    return _max_pool("max_pooling_3d", x, ksize, stride, pad, cover_all, return_indices, 3)


def _avg_pool(
    fname: str, x: Any, ksize: Any, stride: Any, pad: Any, pad_value: Any, nd: int | None
) -> Variable:
    where = f"chainer F.{fname}"
    if not (pad_value is None or pad_value == 0):
        raise ValueError(f"pad_value must be either 0 or None, not {pad_value}.")
    n = _spatial(fname, x, nd)
    k = _ntuple(ksize, n, "ksize", where)
    s = k if stride is None else _ntuple(stride, n, "stride", where)
    p = _ntuple(pad, n, "pad", where)
    y = _call(
        "AveragePooling",
        x,
        kernel=k,
        stride=s,
        ignore_border=True,
        pad=p,
        including_pad=pad_value is not None,
    )
    return _out(y)  # type: ignore[no-any-return]


def average_pooling_nd(
    x: Any, ksize: Any, stride: Any = None, pad: Any = 0, pad_value: Any = 0
) -> Variable:
    """N-d average pooling of x (N, C, d_1, ..., d_n) (stride defaults to ksize): padded zeros
    count in the average (``pad_value=0``) or not (``None``, the mean of the window's elements
    inside x).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 2, 2, 2), np.float32)
        >>> F.average_pooling_nd(x, 2, pad=1).array[0, 0, 0, 0]
        array([0.125, 0.125], dtype=float32)
    """
    return _avg_pool("average_pooling_nd", x, ksize, stride, pad, pad_value, None)


def average_pooling_1d(
    x: Any, ksize: Any, stride: Any = None, pad: Any = 0, pad_value: Any = 0
) -> Variable:
    """1-d average pooling (:func:`average_pooling_nd` of x (N, C, L)).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.average_pooling_1d(np.array([[[1.0, 3.0, 2.0, 4.0]]], np.float32), 2)
        variable([[[2., 3.]]])
    """
    return _avg_pool("average_pooling_1d", x, ksize, stride, pad, pad_value, 1)


def average_pooling_3d(
    x: Any, ksize: Any, stride: Any = None, pad: Any = 0, pad_value: Any = 0
) -> Variable:
    """3-d average pooling (:func:`average_pooling_nd` of x (N, C, D, H, W)).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.average_pooling_3d(np.ones((1, 1, 2, 2, 2), np.float32), 2)
        variable([[[[[1.]]]]])
    """
    return _avg_pool("average_pooling_3d", x, ksize, stride, pad, pad_value, 3)


def _unpool_sizes(
    fname: str, x: Any, ksize: Any, stride: Any, pad: Any, outsize: Any, cover_all: bool
) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int], tuple[int, int]]:
    where = f"chainer F.{fname}"
    _check_float(fname, x=x)
    xs = _shape(x)
    if len(xs) != 4:
        raise TypeError(f"{where}: x must be 4-d (N, C, H, W), got shape {xs}")
    k = _pair(ksize, "ksize", where)
    s = k if stride is None else _pair(stride, "stride", where)
    p = _pair(pad, "pad", where)
    if outsize is None:
        out = tuple(_deconv_outsize(xs[2 + i], k[i], s[i], p[i], cover_all) for i in range(2))
    else:
        out = tuple(int(o) for o in outsize)
        for i in range(2):
            if _conv_outsize(out[i], k[i], s[i], p[i], cover_all) != xs[2 + i]:
                raise TypeError(
                    f"{where}: outsize {out} does not give back x's spatial shape {xs[2:]}"
                )
    return k, s, p, (out[0], out[1])


def _col2im_crop(y: Any, p: tuple[int, int], out: tuple[int, int]) -> Any:
    """chainer's ``col2im``: the full transposed result ``y`` seen from ``p`` on, ``out`` long
    (zeros past its end)."""
    full = tuple(y.shape[2:])
    need = (p[0] + out[0] - full[0], p[1] + out[1] - full[1])
    if need[0] > 0 or need[1] > 0:
        y = _call(
            "Pad",
            y,
            pad_width=(0, builtins_max(need[0], 0), 0, builtins_max(need[1], 0)),
            mode="constant",
        )
    key = (slice(None), slice(None), slice(p[0], p[0] + out[0]), slice(p[1], p[1] + out[1]))
    return _call("GetItem", y, key=key)


def unpooling_2d(
    x: Any,
    ksize: Any,
    stride: Any = None,
    pad: Any = 0,
    outsize: Any = None,
    cover_all: bool = True,
) -> Variable:
    """The inverse of pooling: each element of x (N, C, h, w) copied over its ksize window
    (stride defaults to ksize; overlapping copies add up), as chainer's ``col2im``; the output
    size is ``outsize`` or ``s (h - 1) + k - 2 p`` (``- s + 1`` with ``cover_all``). As chainer,
    when the windows tile the output exactly (``outsize = k (h - p)``, stride = ksize, even
    pads) the output is x cropped by ``p // 2`` on each side, each element repeated k times.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.unpooling_2d(np.array([[[[1.0, 2.0]]]], np.float32), 2, cover_all=False)
        variable([[[[1., 1., 2., 2.],
                    [1., 1., 2., 2.]]]])
    """
    k, s, p, out = _unpool_sizes("unpooling_2d", x, ksize, stride, pad, outsize, cover_all)
    n, c, h, w = _shape(x)
    if (
        h - p[0] != 0
        and w - p[1] != 0
        and out[0] % (h - p[0]) == 0
        and out[1] % (w - p[1]) == 0
        and out[0] // (h - p[0]) == k[0]
        and out[1] // (w - p[1]) == k[1]
        and p[0] % 2 == 0
        and p[1] % 2 == 0
        and s[1] == k[0]
        and s[0] == k[1]
    ):  # chainer's integer-scale path
        hx = x
        if p[0] > 0 or p[1] > 0:
            key = (
                slice(None),
                slice(None),
                slice(p[0] // 2, -p[0] // 2),
                slice(p[1] // 2, -p[1] // 2),
            )
            hx = _call("GetItem", x, key=key)
        hh, ww = _shape(hx)[2:]
        r = _call("Reshape", hx, shape=(n, c, hh, 1, ww, 1))
        r = _call("BroadcastTo", r, shape=(n, c, hh, k[0], ww, k[1]))
        return _out(_call("Reshape", r, shape=(n, c, hh * k[0], ww * k[1])))  # type: ignore[no-any-return]
    ones = _const(
        np.ones((c, 1, *k), dtype=_fdtype(x)), x if isinstance(x, _NativeVariable) else None
    )
    y = _call("Deconvolution", x, ones, None, base_axis=1, pad=(0, 0), stride=s, group=c)
    return _out(_col2im_crop(y, p, out))  # type: ignore[no-any-return]


def upsampling_2d(
    x: Any,
    indexes: Any,
    ksize: Any,
    stride: Any = None,
    pad: Any = 0,
    outsize: Any = None,
    cover_all: bool = True,
) -> Variable:
    """The inverse of max pooling with ``return_indices``: each element of x (N, C, h, w) put
    at the position ``indexes`` (an integer array of x's shape, as :func:`max_pooling_2d`
    returns) names inside its window, zeros elsewhere (overlapping windows add up); the output
    size is ``outsize`` or that of :func:`unpooling_2d`.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[[[5.0]]]], np.float32)
        >>> F.upsampling_2d(x, np.array([[[[2]]]]), 2, cover_all=False)
        variable([[[[0., 0.],
                    [5., 0.]]]])
    """
    k, s, p, out = _unpool_sizes("upsampling_2d", x, ksize, stride, pad, outsize, cover_all)
    idx = host_array(indexes)  # (host index tables; _const puts them on x's device)
    xs = _shape(x)
    if idx.shape != xs:
        raise TypeError(
            f"chainer F.upsampling_2d: indexes of shape {idx.shape} must have x's shape {xs}"
        )
    n, c, h, w = xs
    oy = np.arange(h).reshape(1, 1, h, 1) * s[0] + idx // k[1] - p[0]
    ox = np.arange(w).reshape(1, 1, 1, w) * s[1] + idx % k[1] - p[1]
    inside = (oy >= 0) & (oy < out[0]) & (ox >= 0) & (ox < out[1])
    size = n * c * out[0] * out[1]
    nc = np.arange(n * c).reshape(n, c, 1, 1)
    flat = np.where(inside, (nc * out[0] + oy) * out[1] + ox, size)
    dt = _fdtype(x)
    like = x if isinstance(x, _NativeVariable) else None
    zeros = _const(np.zeros(size + 1, dtype=dt), like)
    xf = _call("Reshape", x, shape=(n * c * h * w,))
    y = _call("ScatterAdd", zeros, _const(flat.reshape(-1), zeros), xf, axis=0)
    y = _call("GetItem", y, key=slice(0, size))
    return _out(_call("Reshape", y, shape=(n, c, out[0], out[1])))  # type: ignore[no-any-return]
