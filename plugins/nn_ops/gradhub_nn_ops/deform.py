"""gradhub-nn-ops: deformable convolution, 2-d (nnabla's ``DeformableConvolution``, v1 and v2).

``DeformableConvolution`` is a composite of registered functions: the input is sampled
bilinearly at the kernel positions moved by the offsets (``Gather`` of the four neighbouring
pixels weighted by the fractional parts, pixels outside the image read as zero), multiplied by
the modulation mask (v2), and the sampled patches, laid out as an image of ``kh x kw`` tiles,
are convolved with the weight by ``Convolution`` with ``stride = kernel``. The gradients with
respect to ``x``, ``weight``, ``offset``, ``mask`` and ``bias`` come from the rules of those
functions, so they are differentiable again (to any order).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub import Sample, Variable, as_variable
from gradhub.ops import call

from .conv import conv_geom, conv_out_shape

_FN = "deformable_convolution"


def _const(like: Any, a: np.ndarray) -> Variable:
    """A constant leaf holding ``a`` on ``like``'s device, floats in ``like``'s dtype."""
    dt = like.dtype if like.dtype.kind == "f" else np.dtype(float)
    return Variable.leaf(like.device.xp.asarray(a.astype(dt)))


def _to_channel_first(v: Any, ba: int) -> Any:
    """``(*batch, *spatial, C)`` to ``(*batch, C, *spatial)``."""
    nd = len(v.shape)
    return call("Transpose", v, axes=(*range(ba), nd - 1, *range(ba, nd - 1)))


def _check_shape(what: str, v: Any, want: tuple[int, ...], layout: str) -> None:
    if tuple(int(s) for s in v.shape) != want:
        raise ValueError(f"{_FN}(): {what} of shape {tuple(v.shape)} must be {layout} = {want}")


def deformable_convolution(
    x: Any,
    weight: Any,
    offset: Any,
    mask: Any = None,
    bias: Any = None,
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    deformable_group: int = 1,
    channel_last: bool = False,
) -> Variable:
    r"""deformable_convolution(x, weight, offset, mask=None, bias=None, base_axis=1, pad=None,
    stride=None, dilation=None, group=1, deformable_group=1, channel_last=False): 2-d
    deformable convolution (nnabla ``F.deformable_convolution``; v2, modulated, with ``mask``).

    ``x`` is ``(*batch, C, H, W)``, ``weight`` ``(O, C / group, kh, kw)``, ``offset``
    ``(*batch, 2 kh kw G, H, W)`` and ``mask`` ``(*batch, kh kw G, H, W)`` with
    ``G = deformable_group``, ``bias`` ``(O,)``. Output position :math:`(i, j)` reads, for
    kernel position :math:`k = (p, q)` and an input channel :math:`c` of deformable group
    :math:`g = \lfloor c G / C \rfloor`, the input at

    .. math::
        h = i s_h + p d_h - \mathrm{pad}_h + \Delta h, \quad
        w = j s_w + q d_w - \mathrm{pad}_w + \Delta w,

    :math:`\Delta h = \mathrm{offset}[2 (g\, k_h k_w + k)]` and
    :math:`\Delta w = \mathrm{offset}[2 (g\, k_h k_w + k) + 1]` taken at the input position
    :math:`(i s_h, j s_w)` (the offset and mask maps have the input's spatial size, as
    nnabla's); the value is bilinear in the four neighbouring pixels, those outside the image
    read as 0, times :math:`\mathrm{mask}[g\, k_h k_w + k]` at the same position:

    .. math::
        y_{o,i,j} = b_o + \sum_{c \in \mathrm{group}(o)} \sum_k W_{o,c,k}\,
        m_{g,k,i,j}\, \mathrm{bilinear}(x_c, h, w).

    With zero offsets and ``mask`` of ones it is ``convolution``. At whole-pixel sample
    positions (the kinks) the offset gradient is the one-sided derivative over the cell
    ``[floor(h), floor(h) + 1]``, and a sample at ``h <= -1``, ``h >= H``, ``w <= -1`` or
    ``w >= W`` has no gradient, as nnabla's. ``channel_last``: ``x``,
    ``offset``, ``mask`` and the result have the channel last, ``weight`` is
    ``(O, kh, kw, C / group)``. The output positions must read offsets inside the offset map:
    :math:`(H_o - 1) s_h < H` and :math:`(W_o - 1) s_w < W` (a ValueError otherwise).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.arange(9.0).reshape(1, 1, 3, 3))
        >>> w = gh.Variable(np.ones((1, 1, 1, 1)))
        >>> off = gh.Variable(np.full((1, 2, 3, 3), 0.5))  # half a pixel down and right
        >>> F.deformable_convolution(x, w, off).d
        array([[[[2.  , 3.  , 1.75],
                 [5.  , 6.  , 3.25],
                 [3.25, 3.75, 2.  ]]]])
    """
    x, weight, offset = as_variable(x), as_variable(weight), as_variable(offset)
    mask = None if mask is None else as_variable(mask)
    bias = None if bias is None else as_variable(bias)
    if not isinstance(channel_last, (bool, np.bool_)):
        raise TypeError(f"{_FN}(): channel_last must be a bool, got {channel_last!r}")
    if len(weight.shape) != 4:
        raise NotImplementedError(
            f"{_FN}(): only 2-d deformable convolution is supported: weight must be "
            f"(O, C / group, kh, kw), got shape {tuple(weight.shape)}"
        )
    nd = len(x.shape)
    ba = base_axis
    if isinstance(ba, (int, np.integer)) and not isinstance(ba, bool) and ba < 0:
        ba += nd
    if channel_last:
        if not isinstance(ba, (int, np.integer)) or isinstance(ba, bool) or not 0 <= ba < nd - 1:
            raise ValueError(
                f"{_FN}(): base_axis={base_axis!r} must leave a channel axis and 2 spatial axes "
                f"in x of shape {tuple(x.shape)} (channel_last=True)"
            )
        ba = int(ba)
        x = _to_channel_first(x, ba)
        offset = _to_channel_first(offset, ba) if len(offset.shape) == nd else offset
        if mask is not None and len(mask.shape) == nd:
            mask = _to_channel_first(mask, ba)
        weight = call("Transpose", weight, axes=(0, 3, 1, 2))
    geo = conv_geom(_FN, tuple(x.shape), tuple(weight.shape), ba, pad, stride, dilation, group)
    ba = geo.base_axis
    batch = geo.batch
    c, h, w = (int(s) for s in x.shape[ba:])
    o, cg, kh, kw = (int(s) for s in weight.shape)
    g = geo.group
    dg = deformable_group
    if not isinstance(dg, (int, np.integer)) or isinstance(dg, bool):
        raise TypeError(f"{_FN}(): deformable_group must be an int, got {dg!r}")
    if dg < 1:
        raise ValueError(f"{_FN}(): deformable_group must be >= 1, got {dg!r}")
    dg = int(dg)
    if c % g or o % g or c // g != cg:
        raise ValueError(
            f"{_FN}(): with group={g}, x's {c} channels and weight's {o} output channels must "
            f"be divisible by group and weight.shape[1] must be {c} / {g}, got weight of shape "
            f"{tuple(weight.shape)}"
        )
    if c % dg or o % dg:
        raise ValueError(
            f"{_FN}(): deformable_group={dg} must divide x's {c} channels and weight's {o} "
            "output channels"
        )
    nk = kh * kw
    _check_shape("offset", offset, (*batch, 2 * nk * dg, h, w), "(*batch, 2 kh kw G, H, W)")
    if mask is not None:
        _check_shape("mask", mask, (*batch, nk * dg, h, w), "(*batch, kh kw G, H, W)")
    if bias is not None and tuple(bias.shape) != (o,):
        raise ValueError(f"{_FN}(): bias of shape {tuple(bias.shape)} must be ({o},)")
    ho, wo = conv_out_shape(_FN, (h, w), (kh, kw), geo)
    (sh, sw), (ph, pw), (dh, dw) = geo.stride, geo.pad, geo.dilation
    if (ho - 1) * sh >= h or (wo - 1) * sw >= w:
        raise ValueError(
            f"{_FN}(): the {ho}x{wo} output positions read the offsets at (i * stride_h, "
            f"j * stride_w), outside the {h}x{w} offset map: pad={geo.pad} is too large for "
            f"the kernel {(kh, kw)}"
        )
    n = math.prod(batch)
    cd = c // dg
    npos = nk * ho * wo

    # offsets (and mask) at the output positions: (N, G, K, Ho, Wo)
    rows_h, cols_w = slice(0, (ho - 1) * sh + 1, sh), slice(0, (wo - 1) * sw + 1, sw)
    off = call("Reshape", offset, shape=(n, dg, nk, 2, h, w))
    off = call("GetItem", off, key=(Ellipsis, rows_h, cols_w))
    ii, pp = np.meshgrid(np.arange(ho), np.arange(kh), indexing="ij")
    base_h = np.repeat((ii * sh + pp * dh - ph).T, kw, axis=0)  # (K, Ho): k = p kw + q
    jj, qq = np.meshgrid(np.arange(wo), np.arange(kw), indexing="ij")
    base_w = np.tile((jj * sw + qq * dw - pw).T, (kh, 1))  # (K, Wo)
    cy = call("GetItem", off, key=(slice(None), slice(None), slice(None), 0)) + _const(
        x, base_h.reshape(1, 1, nk, ho, 1)
    )
    cx = call("GetItem", off, key=(slice(None), slice(None), slice(None), 1)) + _const(
        x, base_w.reshape(1, 1, nk, 1, wo)
    )
    cy = call("Reshape", cy, shape=(n * dg, npos))
    cx = call("Reshape", cx, shape=(n * dg, npos))
    # samples with h <= -1, h >= H, w <= -1 or w >= W read nothing, and (as nnabla's) have no
    # gradient either: this only changes the one-sided derivative at h = -1 or w = -1 exactly
    modulation = (
        call("GreaterScalar", cy, val=-1.0)
        * call("LessScalar", cy, val=float(h))
        * call("GreaterScalar", cx, val=-1.0)
        * call("LessScalar", cx, val=float(w))
    )
    if mask is not None:
        m = call("Reshape", mask, shape=(n, dg, nk, h, w))
        m = call("GetItem", m, key=(Ellipsis, rows_h, cols_w))
        modulation = modulation * call("Reshape", m, shape=(n * dg, npos))

    # one row per pixel and deformable group: (N G, H W, C / G)
    xs = call("Reshape", x, shape=(n, dg, cd, h * w))
    rows = call("Reshape", call("Transpose", xs, axes=(0, 1, 3, 2)), shape=(n * dg, h * w, cd))

    def inside(v: Any, size: int) -> Any:
        return call("GreaterEqualScalar", v, val=0.0) * call("LessScalar", v, val=float(size))

    def read(iy: Any, ix: Any, wt: Any) -> Any:
        wt = wt * inside(iy, h) * inside(ix, w) * modulation
        ciy = call("MinimumScalar", call("MaximumScalar", iy, val=0.0), val=h - 1.0)
        cix = call("MinimumScalar", call("MaximumScalar", ix, val=0.0), val=w - 1.0)
        idx = call("MulScalar", ciy, val=float(w)) + cix
        vals = call("Gather", rows, idx, axis=1, batch_dims=1)  # (N G, K Ho Wo, C / G)
        return vals * call("Reshape", wt, shape=(n * dg, npos, 1))

    fy, fx = call("Floor", cy), call("Floor", cx)
    ly, lx = cy - fy, cx - fx
    hy, hx = call("RSubScalar", ly, val=1.0), call("RSubScalar", lx, val=1.0)
    fy1, fx1 = call("AddScalar", fy, val=1.0), call("AddScalar", fx, val=1.0)
    cols = read(fy, fx, hy * hx) + read(fy, fx1, hy * lx) + read(fy1, fx, ly * hx)
    cols = cols + read(fy1, fx1, ly * lx)
    # tiles of kh x kw samples per output position: (N, C, Ho kh, Wo kw)
    cols = call("Reshape", cols, shape=(n, dg, kh, kw, ho, wo, cd))
    cols = call("Transpose", cols, axes=(0, 1, 6, 4, 2, 5, 3))
    cols = call("Reshape", cols, shape=(n, c, ho * kh, wo * kw))
    y = call("Convolution", cols, weight, bias, base_axis=1, stride=(kh, kw), group=g)
    y = call("Reshape", y, shape=(*batch, o, ho, wo))
    if channel_last:
        y = call("Transpose", y, axes=(*range(ba), ba + 1, ba + 2, ba))
    return y  # type: ignore[no-any-return]


def _deformable_ref(
    x: np.ndarray,
    weight: np.ndarray,
    offset: np.ndarray,
    mask: np.ndarray | None = None,
    bias: np.ndarray | None = None,
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    deformable_group: int = 1,
    channel_last: bool = False,
) -> np.ndarray:
    """Direct loops over output positions, kernel positions and channels (channel-first)."""
    assert not channel_last
    batch = x.shape[:base_axis]
    xs = x.reshape((-1,) + x.shape[base_axis:])
    offs = offset.reshape((xs.shape[0],) + offset.shape[base_axis:])
    ms = None if mask is None else mask.reshape((xs.shape[0],) + mask.shape[base_axis:])
    nb, c, h, w = xs.shape
    o, cg, kh, kw = weight.shape
    ph, pw = (0, 0) if pad is None else tuple(pad)
    sh, sw = (1, 1) if stride is None else tuple(stride)
    dh, dw = (1, 1) if dilation is None else tuple(dilation)
    ho, wo = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    cd, og = c // deformable_group, o // group

    def pixel(b: int, ch: int, yy: int, xx: int) -> float:
        return float(xs[b, ch, yy, xx]) if 0 <= yy < h and 0 <= xx < w else 0.0

    def bilinear(b: int, ch: int, py: float, px: float) -> float:
        y0, x0 = math.floor(py), math.floor(px)
        ly, lx = py - y0, px - x0
        return (
            pixel(b, ch, y0, x0) * (1 - ly) * (1 - lx)
            + pixel(b, ch, y0, x0 + 1) * (1 - ly) * lx
            + pixel(b, ch, y0 + 1, x0) * ly * (1 - lx)
            + pixel(b, ch, y0 + 1, x0 + 1) * ly * lx
        )

    y = np.zeros((nb, o, ho, wo))
    for b in range(nb):
        for i in range(ho):
            for j in range(wo):
                for ch in range(c):
                    gd = ch // cd
                    for p in range(kh):
                        for q in range(kw):
                            k = p * kw + q
                            oy = offs[b, 2 * (gd * kh * kw + k), i * sh, j * sw]
                            ox = offs[b, 2 * (gd * kh * kw + k) + 1, i * sh, j * sw]
                            v = bilinear(
                                b, ch, i * sh + p * dh - ph + oy, j * sw + q * dw - pw + ox
                            )
                            if ms is not None:
                                v *= ms[b, gd * kh * kw + k, i * sh, j * sw]
                            grp = ch // cg
                            for oc in range(grp * og, (grp + 1) * og):
                                y[b, oc, i, j] += weight[oc, ch - grp * cg, p, q] * v
    if bias is not None:
        y += bias.reshape(1, -1, 1, 1)
    return y.reshape(batch + y.shape[1:])


def _fractional(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Offsets in about [-1.5, 1.5] away from whole pixels (the kinks of bilinear sampling)."""
    return np.round(rng.uniform(-1.5, 1.5, shape) * 8) / 8 + 1 / 37


def _deformable_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.standard_normal((2, 2, 4, 4))
    w = rng.standard_normal((2, 2, 2, 2))
    yield Sample((x, w, _fractional(rng, (2, 8, 4, 4))), name="v1")
    yield Sample(
        (
            x,
            w,
            _fractional(rng, (2, 8, 4, 4)),
            rng.uniform(0.2, 1.0, (2, 4, 4, 4)),
            rng.standard_normal(2),
        ),
        name="v2, bias",
    )
    yield Sample(
        (
            rng.standard_normal((1, 4, 5, 4)),
            rng.standard_normal((2, 2, 3, 2)),
            _fractional(rng, (1, 24, 5, 4)),
            rng.uniform(0.2, 1.0, (1, 12, 5, 4)),
        ),
        {"pad": (1, 0), "stride": (2, 1), "group": 2, "deformable_group": 2},
        name="pad, stride, group 2, deformable_group 2",
    )
    yield Sample(
        (x[:1], w[:, :, :1], _fractional(rng, (1, 4, 4, 4))),
        {"dilation": (1, 2), "pad": (0, 1)},
        name="dilation",
    )


def deformable_convolution_layer(
    inp: Any,
    outmaps: int,
    kernel: Any,
    offset: Any,
    mask: Any = None,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    deformable_group: int = 1,
    channel_last: bool = False,
    w_init: Any = None,
    b_init: Any = None,
    base_axis: int = 1,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
    apply_w: Any = None,
    apply_b: Any = None,
    name: str | None = None,
) -> Variable:
    """2-d deformable convolution with parameters ``deformable_conv/W`` and
    ``deformable_conv/b`` (nnabla ``PF.deformable_convolution``, offered as
    ``PF.deformable_convolution``).

    ``W`` has shape ``(outmaps, inmaps // group, *kernel)`` (``(outmaps, *kernel, inmaps //
    group)`` with ``channel_last``), Glorot uniform over ``inmaps * prod(kernel)`` and
    ``outmaps * prod(kernel)`` unless ``w_init``; ``b`` has shape ``(outmaps,)`` (zeros unless
    ``b_init``; none without ``with_bias``); ``inmaps`` is the input's channel count. The
    ``offset`` and ``mask`` inputs are computed outside (usually by a convolution of the same
    input); see :func:`deformable_convolution`. ``apply_w``/``apply_b`` are called in the
    layer's parameter scope, as nnabla's.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.parametric_functions as PF
        >>> gh.clear_parameters()
        >>> x = gh.Variable(np.ones((2, 4, 5, 5)))
        >>> off = gh.Variable(np.zeros((2, 18, 5, 5)))
        >>> y = PF.deformable_convolution(x, 3, (3, 3), off, pad=(1, 1), name="dc")
        >>> y.shape, gh.get_parameters()["dc/deformable_conv/W"].shape
        ((2, 3, 5, 5), (3, 4, 3, 3))
    """
    from .parametric import _apply_wb, _conv_params, _scopes

    fn = "deformable_convolution"
    w, b = _conv_params(
        fn,
        "deformable_conv",
        inp,
        outmaps,
        kernel,
        group,
        w_init,
        b_init,
        base_axis,
        fix_parameters,
        rng,
        with_bias,
        name,
        transposed=False,
        channel_last=channel_last,
    )
    with _scopes(name, "deformable_conv"):
        w, b = _apply_wb(fn, w, b, apply_w, apply_b)
    import gradhub.functions as F

    return F.deformable_convolution(  # type: ignore[no-any-return]
        inp,
        w,
        offset,
        mask,
        b,
        base_axis,
        pad,
        stride,
        dilation,
        group,
        deformable_group,
        channel_last,
    )


def register_functions(register: Any) -> None:
    """Register the deformable convolution and its parametric function."""
    register.composite(
        "DeformableConvolution",
        deformable_convolution,
        samples=_deformable_samples,
        reference=_deformable_ref,
    )
    register.parametric("deformable_convolution", deformable_convolution_layer)
