"""gradhub-nn-ops: more nnabla functions (nnabla 1.39 names and argument conventions).

Depthwise (de)convolution, sum pooling, unpooling, interpolation, shifts, the clipping and
normalization helpers of nnabla and its random sources. All but two are composites of registered
functions (``Convolution`` with ``group``, ``Pad``, ``AveragePooling``, ``Gather``,
``Reshape``...), so each is differentiable to any order through its parts. The two primitives,
``ClipGradByValue`` and ``ClipGradByNorm``, are the identity whose backward rule is not the
derivative: they clip the gradient that flows through them, as nnabla's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub import Sample, Variable, as_variable
from gradhub.ops import call

from .arrays import _new_constant
from .misc import _global_rng
from .pooling import pool_geom

Shape = tuple[int, ...]


def _const_like(x: Any, a: np.ndarray) -> Variable:
    """A constant leaf holding ``a`` on ``x``'s device (floats in ``x``'s dtype)."""
    xp = x.device.xp
    if a.dtype.kind == "f":
        a = a.astype(x.dtype)
    return Variable.leaf(xp.asarray(a))


def _int(fn: str, arg: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{fn}: {arg} must be an int, got {v!r}")
    return int(v)


def _axes(fn: str, axes: Any, nd: int) -> tuple[int, ...]:
    """``None``: every axis; an int or a sequence of ints (negative from the end)."""
    if axes is None:
        return tuple(range(nd))
    vals = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    out = []
    for a in vals:
        a = _int(fn, "axes", a)
        if not -nd <= a < max(nd, 1):
            raise ValueError(f"{fn}: axis {a} is out of range for an input with {nd} dims")
        out.append(a % max(nd, 1))
    return tuple(sorted(set(out)))


# -- DepthwiseConvolution / DepthwiseDeconvolution ---------------------------------------------


def _depthwise_channels(fn: str, x: Any, weight: Any, base_axis: Any) -> tuple[int, int]:
    ba = _int(fn, "base_axis", base_axis)
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
    m = _int(fn, "multiplier", multiplier)
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
    d = _int(fn, "divisor", divisor)
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
    k = tuple(_int(fn, "kernel", v) for v in ks)
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


# -- Interpolate -------------------------------------------------------------------------------


def _sizes(fn: str, arg: str, v: Any) -> tuple[Any, ...]:
    return (v,) if isinstance(v, (int, float, np.integer, np.floating)) else tuple(v)


def _source_coords(n_in: int, n_out: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    """nnabla's input coordinate of each output position: ``scale * i``, or with ``half_pixel``
    ``max(0, scale * (i + 0.5) - 0.5)``; ``scale`` is ``(n_in - 1) / (n_out - 1)`` with
    ``align_corners``, else ``n_in / n_out``, and 0 for an output of one element (nnabla's
    ``compute_scale``)."""
    i = np.arange(n_out, dtype=np.float64)
    if n_out <= 1:
        scale = 0.0
    else:
        scale = (n_in - 1) / (n_out - 1) if align_corners else n_in / n_out
    if half_pixel:
        return np.maximum(0.0, scale * (i + 0.5) - 0.5)
    return i * scale


def _interp_plan(
    mode: str,
    n_in: int,
    n_out: int,
    align_corners: bool,
    half_pixel: bool,
    half_pixel_for_nn: bool,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """``(i0, i1, t)``: ``y = x[i0] * (1 - t) + x[i1] * t`` (nearest: ``y = x[i0]``)."""
    if mode == "nearest":
        if half_pixel_for_nn:
            c = (np.arange(n_out) + 0.5) * (n_in / n_out)
        else:
            c = _source_coords(n_in, n_out, align_corners, half_pixel)
        return np.clip(np.floor(c), 0, n_in - 1).astype(np.int64), None, None
    c = np.clip(_source_coords(n_in, n_out, align_corners, half_pixel), 0.0, n_in - 1.0)
    i0 = np.floor(c).astype(np.int64)
    i1 = np.minimum(i0 + 1, n_in - 1)
    return i0, i1, c - i0


def _interp_args(
    fn: str,
    shape: Shape,
    scale: Any,
    output_size: Any,
    mode: str,
    align_corners: bool,
    half_pixel: bool,
    channel_last: bool,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The resized axes and their output sizes."""
    if mode not in ("nearest", "linear"):
        raise ValueError(f"{fn}: mode must be 'nearest' or 'linear', got {mode!r}")
    if align_corners and half_pixel:
        raise ValueError(f"{fn}: align_corners and half_pixel cannot both be True")
    if output_size is None:
        if scale is None:
            raise ValueError(f"{fn}: one of scale or output_size must be given")
        sc = _sizes(fn, "scale", scale)
        nk = len(sc)
        first = len(shape) - nk - (1 if channel_last else 0)
        if first < 0:
            raise ValueError(f"{fn}: x of shape {shape} has fewer than {nk} spatial axes")
        out = tuple(math.floor(float(s) * shape[first + i]) for i, s in enumerate(sc))
    else:
        out = tuple(_int(fn, "output_size", v) for v in _sizes(fn, "output_size", output_size))
        nk = len(out)
        first = len(shape) - nk - (1 if channel_last else 0)
        if first < 0:
            raise ValueError(f"{fn}: x of shape {shape} has fewer than {nk} spatial axes")
    if not out or any(o < 1 for o in out):
        raise ValueError(f"{fn}: the output sizes must be >= 1, got {out}")
    return tuple(range(first, first + nk)), out


def interpolate(
    x: Any,
    scale: Any = None,
    output_size: Any = None,
    mode: str = "linear",
    align_corners: bool = False,
    half_pixel: bool = False,
    half_pixel_for_nn: bool = False,
    channel_last: bool = False,
) -> Variable:
    r"""Resize the last ``len(output_size)`` axes (before the channel with ``channel_last``)
    by nearest or (multi)linear interpolation (nnabla ``F.interpolate``).

    ``output_size[i] = floor(scale[i] * size[i])`` when ``scale`` is given. Output position
    :math:`i` reads the input coordinate :math:`c = i (n_{in} - 1) / (n_{out} - 1)`
    (``align_corners``), :math:`(i + 0.5)\, n_{in} / n_{out} - 0.5` (``half_pixel``) or
    :math:`i\, n_{in} / n_{out}`. ``linear``: :math:`y = (1 - t) x_{\lfloor c \rfloor} +
    t x_{\lfloor c \rfloor + 1}`, :math:`t = c - \lfloor c \rfloor`, ``c`` clamped to the
    input. ``nearest``: :math:`y = x_{\lfloor c \rfloor}` (clamped), or
    :math:`x_{\lfloor (i + 0.5) n_{in} / n_{out} \rfloor}` with ``half_pixel_for_nn``.
    Composed of ``Gather`` along each axis and products, so the gradient scatters ``dy`` back
    with the same weights.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.array([[[0.0, 1.0, 4.0]]]))
        >>> F.interpolate(x, output_size=(5,), align_corners=True).d
        array([[[0. , 0.5, 1. , 2.5, 4. ]]])
        >>> F.interpolate(x, scale=(2,), mode="nearest").d
        array([[[0., 0., 1., 1., 4., 4.]]])
    """
    x = as_variable(x)
    fn = "interpolate"
    axes, out = _interp_args(
        fn, tuple(x.shape), scale, output_size, mode, align_corners, half_pixel, channel_last
    )
    y = x
    nd = len(x.shape)
    for a, n_out in zip(axes, out):
        i0, i1, t = _interp_plan(
            mode, int(x.shape[a]), n_out, align_corners, half_pixel, half_pixel_for_nn
        )
        g0 = call("Gather", y, _const_like(y, i0), axis=a)
        if t is None or i1 is None:
            y = g0
            continue
        g1 = call("Gather", y, _const_like(y, i1), axis=a)
        tb = t.reshape([-1 if d == a else 1 for d in range(nd)])
        y = g0 * _const_like(y, 1.0 - tb) + g1 * _const_like(y, tb)
    return y  # type: ignore[no-any-return]


def _interpolate_ref(
    x: np.ndarray,
    scale: Any = None,
    output_size: Any = None,
    mode: str = "linear",
    align_corners: bool = False,
    half_pixel: bool = False,
    half_pixel_for_nn: bool = False,
    channel_last: bool = False,
) -> np.ndarray:
    """Per output element, from the coordinates (loops, no gathers)."""
    axes, out = _interp_args(
        "interpolate", x.shape, scale, output_size, mode, align_corners, half_pixel, channel_last
    )
    y = x
    for a, n_out in zip(axes, out):
        n_in = y.shape[a]
        ym = np.moveaxis(y, a, -1)
        res = np.empty(ym.shape[:-1] + (n_out,))
        for j in range(n_out):
            if mode == "nearest":
                if half_pixel_for_nn:
                    c = (j + 0.5) * n_in / n_out
                elif align_corners:
                    c = j * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
                elif half_pixel:
                    c = (j + 0.5) * n_in / n_out - 0.5
                else:
                    c = j * n_in / n_out
                res[..., j] = ym[..., min(max(math.floor(c), 0), n_in - 1)]
            else:
                if align_corners:
                    c = j * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
                elif half_pixel:
                    c = (j + 0.5) * n_in / n_out - 0.5
                else:
                    c = j * n_in / n_out
                c = min(max(c, 0.0), n_in - 1.0)
                lo = math.floor(c)
                hi = min(lo + 1, n_in - 1)
                res[..., j] = ym[..., lo] * (1 - (c - lo)) + ym[..., hi] * (c - lo)
        y = np.moveaxis(res, -1, a)
    return y


def _interpolate_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x1 = rng.standard_normal((1, 2, 4))
    for mode in ("linear", "nearest"):
        for ac, hp in ((False, False), (True, False), (False, True)):
            for n in (7, 3):
                yield Sample(
                    (x1,),
                    {"output_size": (n,), "mode": mode, "align_corners": ac, "half_pixel": hp},
                    name=f"{mode} ac={ac} hp={hp} {n}",
                )
    yield Sample(
        (x1,), {"output_size": (5,), "mode": "nearest", "half_pixel_for_nn": True}, name="hpnn"
    )
    x2 = rng.standard_normal((1, 1, 3, 3))
    yield Sample((x2,), {"scale": (1.5, 2), "mode": "linear"}, name="2-d scale")
    yield Sample(
        (x2,), {"output_size": (2, 4), "mode": "linear", "align_corners": True}, name="2-d ac"
    )
    yield Sample((x2,), {"output_size": (5, 2), "mode": "nearest"}, name="2-d nearest")
    yield Sample(
        (rng.standard_normal((1, 3, 2)),),
        {"output_size": (5,), "channel_last": True},
        name="channel_last",
    )
    yield Sample((x1,), {"output_size": (1,), "align_corners": True}, name="one output")


# -- Shift -------------------------------------------------------------------------------------


def _shift_index(n: int, s: int, border_mode: str) -> np.ndarray:
    src = np.arange(n) - s
    if border_mode == "nearest":
        return np.clip(src, 0, n - 1)
    period = 2 * n
    m = np.mod(src, period)
    return np.where(m < n, m, period - 1 - m)


def shift(x: Any, shifts: Any = None, border_mode: str = "nearest") -> Variable:
    r"""Shift the elements of the last ``len(shifts)`` axes by ``shifts`` (nnabla
    ``F.shift``): :math:`y_i = x_{i - s}`, the positions outside the input filled from its border
    (``"nearest"``: the end element; ``"reflect"``: the input mirrored, the end element repeated,
    numpy's ``"symmetric"``).

    Composed of ``Gather`` along each shifted axis; the gradient scatter-adds ``dy`` back.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.array([0.0, 1.0, 2.0, 3.0]))
        >>> F.shift(x, (2,)).d
        array([0., 0., 0., 1.])
        >>> F.shift(x, (2,), border_mode="reflect").d
        array([1., 0., 0., 1.])
    """
    x = as_variable(x)
    fn = "shift"
    if border_mode not in ("nearest", "reflect"):
        raise ValueError(f"{fn}: border_mode must be 'nearest' or 'reflect', got {border_mode!r}")
    nd = len(x.shape)
    sh = (0,) * nd if shifts is None else tuple(_int(fn, "shifts", s) for s in shifts)
    if len(sh) > nd:
        raise ValueError(f"{fn}: {len(sh)} shifts for an input with {nd} dims")
    y = x
    for a, s in zip(range(nd - len(sh), nd), sh):
        n = int(x.shape[a])
        if s == 0 or n == 0:
            continue
        y = call("Gather", y, _const_like(y, _shift_index(n, s, border_mode)), axis=a)
    if y is x:
        return call("MulScalar", x, val=1.0)  # type: ignore[no-any-return]
    return y  # type: ignore[no-any-return]


def _shift_ref(x: np.ndarray, shifts: Any = None, border_mode: str = "nearest") -> np.ndarray:
    sh = tuple(shifts) if shifts is not None else (0,) * x.ndim
    first = x.ndim - len(sh)
    out = np.empty_like(x)
    for pos in np.ndindex(*x.shape):
        src = list(pos)
        for i, s in enumerate(sh):
            a = first + i
            n = x.shape[a]
            j = pos[a] - s
            if border_mode == "nearest":
                j = min(max(j, 0), n - 1)
            else:
                while not 0 <= j < n:
                    j = -j - 1 if j < 0 else 2 * n - 1 - j
            src[a] = j
        out[pos] = x[tuple(src)]
    return out


def _shift_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.standard_normal((3, 4))
    for sh in ((1,), (0, 2), (-1, -3), (2, -1), (5, 0)):
        for bm in ("nearest", "reflect"):
            yield Sample((x,), {"shifts": sh, "border_mode": bm}, name=f"{sh} {bm}")
    yield Sample((x,), {}, name="no shift")
    yield Sample((rng.standard_normal((2, 3)).T,), {"shifts": (-9,), "border_mode": "reflect"})


# -- ClipByNorm, NormNormalization, WeightStandardization ---------------------------------------


def _widened(x: Variable) -> tuple[Variable, bool]:
    """``x`` cast to float32 when it is float16 (and whether it was): the squares and sums of
    the norm-based functions overflow float16 above 256, as the reductions accumulate float16
    in float32 (docs/numerics.md)."""
    if x.dtype == np.float16:
        return call("Cast", x, dtype="float32"), True
    return x, False


def _narrowed(y: Any, half: bool) -> Any:
    return call("Cast", y, dtype="float16") if half else y


def clip_by_norm(x: Any, clip_norm: Any, axis: Any = None) -> Variable:
    r"""Rescale ``x`` to the L2 norm ``clip_norm`` where its norm over ``axis`` (all axes when
    None) is larger (nnabla ``F.clip_by_norm``):
    :math:`y = N x / \max(\|x\|_2, N)`. ``clip_norm`` is a positive number or a Variable.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> F.clip_by_norm(gh.Variable(np.array([3.0, 4.0])), 1.0).d
        array([0.6, 0.8])
    """
    x, half = _widened(as_variable(x))
    axes = _axes("clip_by_norm", axis, len(x.shape))
    norm = call("PowScalar", call("Sum", x * x, axis=axes, keepdims=True), val=0.5)
    if isinstance(clip_norm, Variable):
        c_var, _ = _widened(clip_norm)
        return _narrowed(x * c_var / call("Maximum2", norm, c_var), half)  # type: ignore[no-any-return]
    if float(clip_norm) <= 0:
        raise ValueError(f"clip_by_norm: clip_norm must be positive, got {clip_norm}")
    c = float(clip_norm)
    y = call("MulScalar", x, val=c) / call("MaximumScalar", norm, val=c)
    return _narrowed(y, half)  # type: ignore[no-any-return]


def _clip_by_norm_ref(x: np.ndarray, clip_norm: Any, axis: Any = None) -> np.ndarray:
    ax = tuple(range(x.ndim)) if axis is None else axis
    n = np.sqrt(np.sum(x**2, axis=ax, keepdims=True))
    return x * clip_norm / np.maximum(n, clip_norm)


def _clip_by_norm_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    yield Sample((x,), {"clip_norm": 2.0}, name="clipped")
    yield Sample((x,), {"clip_norm": 10.0}, name="not clipped")
    yield Sample((x,), {"clip_norm": 3.0, "axis": 1}, name="axis 1: one row clipped")
    yield Sample((x.T,), {"clip_norm": 1.0, "axis": (0,)}, name="non-contiguous")


def norm_normalization(x: Any, p: Any = None, axes: Any = None, eps: float = 1e-12) -> Variable:
    r"""Divide ``x`` by its p-norm over ``axes`` (all axes when None; ``p=None`` means 2)
    (nnabla ``F.norm_normalization``):
    :math:`y = x / (\sum |x|^p + \epsilon)^{1/p}`, ``eps`` added before the root as
    nnabla's documentation says (nnabla 1.39's CPU kernel leaves it out; with the default
    ``1e-12`` the values agree to float precision).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> F.norm_normalization(gh.Variable(np.array([3.0, 4.0]))).d
        array([0.6, 0.8])
    """
    x, half = _widened(as_variable(x))
    pp = 2.0 if p is None else float(p)
    if pp <= 0:
        raise ValueError(f"norm_normalization: p must be positive, got {p}")
    ax = _axes("norm_normalization", axes, len(x.shape))
    a = x * x if pp == 2.0 else call("PowScalar", call("Abs", x), val=pp)
    s = call("AddScalar", call("Sum", a, axis=ax, keepdims=True), val=float(eps))
    return _narrowed(x * call("PowScalar", s, val=-1.0 / pp), half)  # type: ignore[no-any-return]


def _norm_normalization_ref(
    x: np.ndarray, p: Any = None, axes: Any = None, eps: float = 1e-12
) -> np.ndarray:
    pp = 2.0 if p is None else float(p)
    ax = tuple(range(x.ndim)) if axes is None else tuple(axes)
    return x / (np.sum(np.abs(x) ** pp, axis=ax, keepdims=True) + eps) ** (1.0 / pp)


def _norm_normalization_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    yield Sample((x,), {}, name="p=2, all axes")
    yield Sample((x,), {"p": 1, "axes": (1,), "eps": 0.5}, name="p=1, axis 1")
    yield Sample((x,), {"p": 3, "axes": (0,)}, name="p=3, axis 0")
    yield Sample((x.T,), {"p": 2.5, "axes": (1,)}, name="non-contiguous")


def weight_standardization(
    w: Any, channel_axis: int = 0, eps: float = 1e-05, output_stat: bool = False
) -> Any:
    r"""Standardize a weight over every axis but ``channel_axis`` (nnabla
    ``F.weight_standardization``): :math:`\mu_i = \operatorname{mean}_j W_{ij}`,
    :math:`\sigma^2_i = \operatorname{mean}_j (W_{ij} - \mu_i)^2`,
    :math:`y_{ij} = (W_{ij} - \mu_i) / \sqrt{\sigma^2_i + \epsilon}`.

    ``output_stat=True`` returns ``(y, mean, variance)``, the statistics with kept dims (as
    nnabla's, whose third output is the variance).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> w = gh.Variable(np.array([[1.0, 3.0], [0.0, 4.0]]))
        >>> F.weight_standardization(w, eps=0.0).d
        array([[-1.,  1.],
               [-1.,  1.]])
    """
    w, half = _widened(as_variable(w))
    nd = len(w.shape)
    ca = _int("weight_standardization", "channel_axis", channel_axis)
    if not -nd <= ca < nd:
        raise ValueError(
            f"weight_standardization: channel_axis={ca} is out of range for a weight with {nd} dims"
        )
    ca %= nd
    axes = tuple(a for a in range(nd) if a != ca)
    mean = call("Mean", w, axis=axes, keepdims=True)
    d = w - mean
    var = call("Mean", d * d, axis=axes, keepdims=True)
    y = d * call("PowScalar", call("AddScalar", var, val=float(eps)), val=-0.5)
    if not output_stat:
        return _narrowed(y, half)
    return tuple(_narrowed(v, half) for v in (y, mean, var))


def _weight_standardization_ref(
    w: np.ndarray, channel_axis: int = 0, eps: float = 1e-05, output_stat: bool = False
) -> Any:
    axes = tuple(a for a in range(w.ndim) if a != channel_axis % w.ndim)
    m = w.mean(axis=axes, keepdims=True)
    v = ((w - m) ** 2).mean(axis=axes, keepdims=True)
    y = (w - m) / np.sqrt(v + eps)
    return (y, m, v) if output_stat else y


def _weight_standardization_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    yield Sample((x,), {}, name="axis 0")
    yield Sample((x,), {"channel_axis": 1, "eps": 0.1}, name="axis 1")
    yield Sample((rng.standard_normal((3, 2, 2)),), {"output_stat": True}, name="output_stat")
    yield Sample((rng.standard_normal((2, 3)).T,), {"channel_axis": -1}, name="non-contiguous")


# -- ClipGradByValue / ClipGradByNorm (identity forward, clipped gradient) -----------------------


def _identity(xp: Any, x: Any, *rest: Any, **attrs: Any) -> Any:
    return x.copy()


def _clip_grad_by_value_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    g = call("Minimum2", call("Maximum2", gy[0], inputs[1]), inputs[2])
    return [g, None, None]


def _clip_grad_by_norm_bw(gy, inputs, in_shapes, outputs, out_shapes, clip_norm, axes):  # type: ignore[no-untyped-def]
    g = gy[0]
    ax = _axes("clip_grad_by_norm", axes, len(in_shapes[0]))
    n2 = call("Sum", g * g, axis=ax, keepdims=True)
    return [call("MulScalar", g, val=float(clip_norm)) * call("PowScalar", n2, val=-0.5)]


def _clip_grad_samples(rng: np.random.Generator) -> Iterator[Sample]:
    # The gradient is not the derivative of the identity: the values are checked here, the
    # gradients against nnabla's in tests/nn_ops/test_more.py.
    x = rng.standard_normal((2, 3))
    yield Sample((x, -np.ones((2, 3)), np.ones((2, 3))), grad_inputs=(), name="values")


def _clip_grad_norm_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.standard_normal((2, 3))
    yield Sample((x,), {"clip_norm": 1.0, "axes": None}, grad_inputs=(), name="all axes")
    yield Sample((x,), {"clip_norm": 2.0, "axes": (1,)}, grad_inputs=(), name="axis 1")


# -- Rand / Randn / Randint --------------------------------------------------------------------


def _generator(fn: str, seed: Any) -> np.random.Generator:
    s = _int(fn, "seed", seed)
    if s < -1:
        raise ValueError(f"{fn}: seed must be -1 (the global generator) or >= 0, got {s}")
    return _global_rng() if s == -1 else np.random.default_rng(s)


def _shape(fn: str, shape: Any) -> Shape:
    vals = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    out = tuple(_int(fn, "shape", v) for v in vals)
    if any(v < 0 for v in out):
        raise ValueError(f"{fn}: shape must hold sizes >= 0, got {shape!r}")
    return out


def rand(low: float = 0, high: float = 1, shape: Any = (), seed: int = -1) -> Variable:
    r"""Uniform samples :math:`x \sim U(low, high)` of ``shape`` (nnabla ``F.rand``): a float32
    Variable that needs no gradient, on the current context's device.

    ``seed=-1`` draws from the global generator of dropout (reseeded by ``gradhub.seed``),
    ``seed >= 0`` gives the same values on every call (numpy's generator: not nnabla's values).

    Example::

        >>> import gradhub.functions as F
        >>> x = F.rand(-1, 1, shape=(2, 3), seed=0)
        >>> x.shape, x.d.dtype, bool((abs(x.d) <= 1).all())
        ((2, 3), dtype('float32'), True)
    """
    rng = _generator("rand", seed)
    return _new_constant(
        rng.uniform(float(low), float(high), _shape("rand", shape)).astype(np.float32)
    )


def randn(mu: float = 0, sigma: float = 1, shape: Any = (), seed: int = -1) -> Variable:
    r"""Normal samples :math:`x \sim N(\mu, \sigma)` of ``shape`` (nnabla ``F.randn``): a
    float32 Variable that needs no gradient. ``seed`` as in :func:`rand`.

    Example::

        >>> import gradhub.functions as F
        >>> F.randn(shape=(3,), seed=0).shape
        (3,)
    """
    rng = _generator("randn", seed)
    vals = rng.normal(float(mu), float(sigma), _shape("randn", shape))
    return _new_constant(np.asarray(vals).astype(np.float32))


def randint(low: int = 0, high: int = 1, shape: Any = (), seed: int = -1) -> Variable:
    r"""Integers drawn uniformly from :math:`[low, high)` of ``shape`` (nnabla ``F.randint``):
    an int32 Variable that needs no gradient. ``seed`` as in :func:`rand`.

    Example::

        >>> import gradhub.functions as F
        >>> x = F.randint(0, 5, shape=(4,), seed=0)
        >>> x.d.dtype, bool(((0 <= x.d) & (x.d < 5)).all())
        (dtype('int32'), True)
    """
    lo, hi = _int("randint", "low", low), _int("randint", "high", high)
    if hi <= lo:
        raise ValueError(f"randint: high must be larger than low, got low={lo}, high={hi}")
    rng = _generator("randint", seed)
    return _new_constant(rng.integers(lo, hi, _shape("randint", shape), dtype=np.int32))


def _rand_samples(kind: str) -> Any:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        a, b = (0, 5) if kind == "randint" else (-1.0, 2.0)
        yield Sample(
            (),
            {
                "low" if kind != "randn" else "mu": a,
                "high" if kind != "randn" else "sigma": b,
                "shape": (2, 3),
                "seed": 3,
            },
            name="2x3",
        )
        yield Sample((), {"shape": (), "seed": 0}, name="0-d")
        yield Sample((), {"shape": (0, 2), "seed": 1}, name="size-0")

    return samples


def _rand_ref(kind: str) -> Any:
    def ref(**kw: Any) -> np.ndarray:
        g = np.random.default_rng(kw.get("seed", -1))
        shape = tuple(kw.get("shape", ()))
        if kind == "rand":
            return g.uniform(kw.get("low", 0), kw.get("high", 1), shape).astype(np.float32)
        if kind == "randn":
            v = g.normal(kw.get("mu", 0), kw.get("sigma", 1), shape)
            return np.asarray(v).astype(np.float32)
        return g.integers(kw.get("low", 0), kw.get("high", 1), shape, dtype=np.int32)

    return ref


# -- registration ------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register the functions of this module."""
    c = register.composite
    c("DepthwiseConvolution", depthwise_convolution, samples=_dw_samples, reference=_dw_ref)
    c(
        "DepthwiseDeconvolution",
        depthwise_deconvolution,
        samples=_ddw_samples,
        reference=_ddw_ref,
    )
    c("SumPooling", sum_pooling, samples=_sum_pooling_samples, reference=_sum_pooling_ref)
    c("Unpooling", unpooling, samples=_unpooling_samples, reference=_unpooling_ref)
    c("Interpolate", interpolate, samples=_interpolate_samples, reference=_interpolate_ref)
    c("Shift", shift, samples=_shift_samples, reference=_shift_ref)
    c("ClipByNorm", clip_by_norm, samples=_clip_by_norm_samples, reference=_clip_by_norm_ref)
    c(
        "NormNormalization",
        norm_normalization,
        samples=_norm_normalization_samples,
        reference=_norm_normalization_ref,
    )
    c(
        "WeightStandardization",
        weight_standardization,
        samples=_weight_standardization_samples,
        reference=_weight_standardization_ref,
    )
    register.function(
        "ClipGradByValue",
        _identity,
        inputs=("x", "min", "max"),
        rule=_clip_grad_by_value_bw,
        need_inputs=(1, 2),
        need_outputs=(),
        samples=_clip_grad_samples,
        reference=lambda x, lo, hi: x,
        doc=r"""clip_grad_by_value(x, min, max): the identity whose gradient is clipped
(nnabla ``F.clip_grad_by_value``).

Forward :math:`y = x`; backward :math:`g_x = \min(\max(g_y, min), max)` elementwise.
``min`` and ``max`` are arrays of ``x``'s shape and get no gradient. The clipped gradient is
built with ``Maximum2``/``Minimum2``, so it can be differentiated again.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([1.0, 2.0, 3.0]))
    >>> lo, hi = gh.Variable(-np.ones(3)), gh.Variable(np.ones(3))
    >>> y = F.clip_grad_by_value(x, lo, hi)
    >>> y.backward(np.array([3.0, -0.5, -2.0]))
    >>> x.g
    array([ 1. , -0.5, -1. ])
""",
    )
    register.function(
        "ClipGradByNorm",
        _identity,
        attrs={"clip_norm": 1.0, "axes": None},
        rule=_clip_grad_by_norm_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_clip_grad_norm_samples,
        reference=lambda x, clip_norm=1.0, axes=None: x,
        doc=r"""clip_grad_by_norm(x, clip_norm=1.0, axes=None): the identity whose gradient is
rescaled to the L2 norm ``clip_norm`` over ``axes`` (all axes when None) (nnabla
``F.clip_grad_by_norm``).

Forward :math:`y = x`; backward :math:`g_x = N g_y / \|g_y\|_2`, always (also when the norm
is smaller than ``N``, as nnabla's). A zero gradient gives NaN, as nnabla's.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([1.0, 2.0]))
    >>> y = F.clip_grad_by_norm(x, 1.0)
    >>> y.backward(np.array([3.0, 4.0]))
    >>> x.g
    array([0.6, 0.8])
""",
    )
    c(
        "Rand",
        rand,
        samples=_rand_samples("rand"),
        reference=_rand_ref("rand"),
        differentiable=False,
    )
    c(
        "Randn",
        randn,
        samples=_rand_samples("randn"),
        reference=_rand_ref("randn"),
        differentiable=False,
    )
    c(
        "Randint",
        randint,
        samples=_rand_samples("randint"),
        reference=_rand_ref("randint"),
        differentiable=False,
    )
