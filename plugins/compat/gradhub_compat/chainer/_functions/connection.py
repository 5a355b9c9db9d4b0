"""chainer 7.8.1's ``chainer/functions/connection`` functions beyond the core of
:mod:`gradhub_compat.chainer.functions` (which re-exports them): the N-d, 1-d and 3-d
convolutions, ``dilated_convolution_2d``, ``depthwise_convolution_2d``, the deconvolutions
(``deconvolution_2d``, ``_nd``, ``_1d``, ``_3d``), ``bilinear``, ``shift`` and
``local_convolution_2d``.

Compositions of the registered gradhub functions (``Convolution``, ``Deconvolution``...), so
every order of gradient comes from the native engine."""

from __future__ import annotations

import math
from builtins import max as builtins_max
from typing import Any

import numpy as np

from ..._common import call_native as _call
from .. import Variable, config
from .. import functions as F
from ..functions import (
    _as_dtype,
    _check_float,
    _dtype,
    _out,
    _pair,
    _shape,
    broadcast_to,
    convolution_2d,
    matmul,
    reshape,
)
from ._common import (
    _conv_outsize,
    _deconv_outsize,
    _fdtype,
    _invalid,
    _kind,
    _ntuple,
    _spatial,
    _tuple_n,
)

__all__ = [
    "bilinear",
    "convolution_1d",
    "convolution_3d",
    "convolution_nd",
    "deconvolution_1d",
    "deconvolution_2d",
    "deconvolution_3d",
    "deconvolution_nd",
    "depthwise_convolution_2d",
    "dilated_convolution_2d",
    "local_convolution_2d",
    "shift",
]


def shift(x: Any, ksize: Any = 3, dilate: Any = 1) -> Variable:
    """chainer's shift (zero-FLOP convolution): the channels of x (N, C, H, W) split into
    ``kh * kw`` groups (C >= kh kw; the centre group last), each shifted by its offset in the
    ``ksize`` window (times ``dilate``), zeros shifted in. kh and kw must be odd. A composition
    of padding and slicing (every order of gradient).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(9, dtype=np.float32).reshape(1, 9, 1, 1)
        >>> F.shift(x).shape
        (1, 9, 1, 1)
    """
    kh, kw = _tuple_n(ksize, 2)
    if kh % 2 != 1:
        raise ValueError("kh must be odd")
    if kw % 2 != 1:
        raise ValueError("kw must be odd")
    dy, dx = _tuple_n(dilate, 2)
    s = _shape(x)
    if _kind(x) != "f" or len(s) != 4 or s[1] < kh * kw:
        raise _invalid(
            "Shift",
            f"x.dtype.kind == f, x.ndim == 4, x.shape[1] >= {kh * kw}",
            f"x {s} {_dtype(x)}",
        )
    _b, c, h, w = s
    py = kh // 2 * abs(dy)
    px = kw // 2 * abs(dx)
    xp = F.pad(x, ((0, 0), (0, 0), (py, py), (px, px)), "constant")
    n_groups = kh * kw
    group_size = c // n_groups
    parts = []
    for i in range(n_groups):
        g = i
        if g == (n_groups - 1) // 2:
            g = n_groups - 1
        elif g == n_groups - 1:
            g = (n_groups - 1) // 2
        ky = (g // kw) - py // abs(dy)
        kx = (g % kw) - px // abs(dx)
        hs = py - ky * dy
        ws = px - kx * dx
        cs = i * group_size
        ce = (i + 1) * group_size if i < n_groups - 1 else c
        parts.append(
            F.get_item(xp, (slice(None), slice(cs, ce), slice(hs, hs + h), slice(ws, ws + w)))
        )
    return F.concat(parts, axis=1)


def local_convolution_2d(x: Any, W: Any, b: Any = None, stride: Any = 1) -> Variable:
    """Locally connected 2-d layer (unshared weights): ``y[n, o, i, j] = sum_{c, k, l}
    x[n, c, i sy + k, j sx + l] W[o, i, j, c, k, l] (+ b[o, i, j])``, W of shape
    (out, out_h, out_w, C, kh, kw), no padding, as chainer. A composition of gradhub functions
    (every order of gradient; chainer's gradient cannot be differentiated again).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 2, 2), np.float32)
        >>> W = np.ones((1, 1, 1, 1, 2, 2), np.float32)
        >>> F.local_convolution_2d(x, W)
        variable([[[[4.]]]])
    """
    sy, sx = _tuple_n(stride, 2)
    xs, ws = _shape(x), _shape(W)
    label = "LocalConvolution2DFunction"
    if _kind(x) != "f" or _kind(W) != "f" or len(xs) != 4 or len(ws) != 6 or xs[1] != ws[3]:
        raise _invalid(
            label,
            "x.dtype.kind == f, W.dtype.kind == f, x.ndim == 4, W.ndim == 6, "
            "x.shape[1] == W.shape[3]",
            f"x {xs} {_dtype(x)}, W {ws} {_dtype(W)}",
        )
    if b is not None and (_dtype(b) != _dtype(x) or _shape(b) != ws[:3]):
        raise _invalid(label, "b.dtype == x.dtype, b.shape == W.shape[:3]", f"{_shape(b)}")
    _o, oh, ow, _c, kh, kw = ws
    rows = []
    for k in range(kh):
        cols = []
        for l in range(kw):
            cols.append(
                F.get_item(
                    x,
                    (
                        slice(None),
                        slice(None),
                        slice(k, k + sy * (oh - 1) + 1, sy),
                        slice(l, l + sx * (ow - 1) + 1, sx),
                    ),
                )
            )
        rows.append(F.stack(cols, axis=2))  # (N, C, kw, oh, ow)
    patches = F.stack(rows, axis=2)  # (N, C, kh, kw, oh, ow)
    y: Any = F.einsum("ncklij,oijckl->noij", patches, W)
    if y.dtype != np.dtype(_dtype(x)):
        y = F.cast(y, _dtype(x))
    if b is not None:
        y = y + F.broadcast_to(F.expand_dims(b, 0), y.shape)
    return y


def _conv(
    fname: str,
    x: Any,
    W: Any,
    b: Any,
    stride: Any,
    pad: Any,
    cover_all: bool,
    dilate: Any,
    groups: int,
    nd: int | None,
) -> Variable:
    where = f"chainer F.{fname}"
    n = _spatial(fname, x, nd)
    _check_float(fname, x=x, W=W, b=b)
    dt = _fdtype(x)
    if b is not None and _dtype(b) is not None and _dtype(b) != dt:
        raise TypeError(
            f"{where}: b has dtype {_dtype(b)} but x has dtype {dt}; chainer requires "
            "b.dtype == x.dtype"
        )
    xshape, wshape = _shape(x), _shape(W)
    if len(wshape) != len(xshape):
        raise TypeError(f"{where}: W must have x's {len(xshape)} axes, got shape {wshape}")
    st, p, dl = (
        _ntuple(v, n, w, where) for v, w in ((stride, "stride"), (pad, "pad"), (dilate, "dilate"))
    )
    if cover_all:
        widths = []
        for i in range(n):
            size, dk = xshape[2 + i], (wshape[2 + i] - 1) * dl[i] + 1
            out = _conv_outsize(size, wshape[2 + i], st[i], p[i], True, dl[i])
            extra = builtins_max((out - 1) * st[i] + dk - (size + 2 * p[i]), 0)
            widths += [p[i], p[i] + extra]
        if any(widths[1::2]) or any(widths[0::2]):
            x = _call("Pad", x, pad_width=tuple(widths), mode="constant")
            p = (0,) * n
    y = _call("Convolution", x, W, b, base_axis=1, pad=p, stride=st, dilation=dl, group=int(groups))
    return _out(_as_dtype(y, dt))  # type: ignore[no-any-return]


def convolution_nd(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    cover_all: bool = False,
    dilate: Any = 1,
    groups: int = 1,
) -> Variable:
    """N-d convolution of x (N, C, d_1, ..., d_n) with filters W (out, C // groups, k_1, ...,
    k_n), plus b: ``y[n, o, ...] = sum(W[o, c, ...] x[n, c, s * i + d * k - p]) + b[o]``
    (``cover_all`` adds the windows covering the whole input, as :func:`convolution_2d`).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 3, 3, 3), np.float32)
        >>> F.convolution_nd(x, np.ones((2, 1, 2, 2, 2), np.float32)).shape
        (1, 2, 2, 2, 2)
    """
    return _conv("convolution_nd", x, W, b, stride, pad, cover_all, dilate, groups, None)


def convolution_1d(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    cover_all: bool = False,
    dilate: Any = 1,
    groups: int = 1,
) -> Variable:
    """1-d convolution (:func:`convolution_nd` of x (N, C, L)).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.convolution_1d(np.ones((1, 1, 4), np.float32), np.ones((1, 1, 2), np.float32))
        variable([[[2., 2., 2.]]])
    """
    return _conv("convolution_1d", x, W, b, stride, pad, cover_all, dilate, groups, 1)


def convolution_3d(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    cover_all: bool = False,
    dilate: Any = 1,
    groups: int = 1,
) -> Variable:
    """3-d convolution (:func:`convolution_nd` of x (N, C, D, H, W)).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 2, 2, 2), np.float32)
        >>> F.convolution_3d(x, np.ones((1, 1, 2, 2, 2), np.float32))
        variable([[[[[8.]]]]])
    """
    return _conv("convolution_3d", x, W, b, stride, pad, cover_all, dilate, groups, 3)


def dilated_convolution_2d(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    dilate: Any = 1,
    cover_all: bool = False,
) -> Variable:
    """:func:`convolution_2d` with the filter taps ``dilate`` apart.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 5, 5), np.float32)
        >>> F.dilated_convolution_2d(x, np.ones((1, 1, 3, 3), np.float32), dilate=2).shape
        (1, 1, 1, 1)
    """
    return _conv("dilated_convolution_2d", x, W, b, stride, pad, cover_all, dilate, 1, 2)


def depthwise_convolution_2d(
    x: Any, W: Any, b: Any = None, stride: Any = 1, pad: Any = 0
) -> Variable:
    """Depthwise 2-d convolution: W (multiplier, C, kh, kw) filters each channel of x
    separately; the output has ``C * multiplier`` channels (chainer's order: W transposed to
    (C, multiplier, kh, kw) and reshaped, then :func:`convolution_2d` with ``groups=C``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 3, 4, 4), np.float32)
        >>> F.depthwise_convolution_2d(x, np.ones((2, 3, 3, 3), np.float32)).shape
        (1, 6, 2, 2)
    """
    multiplier, in_channels, kh, kw = _shape(W)
    w = _call("Transpose", W, axes=(1, 0, 2, 3))
    w = _call("Reshape", w, shape=(multiplier * in_channels, 1, kh, kw))
    return convolution_2d(x, w, b, stride, pad, groups=in_channels)


def deconvolution_2d(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    outsize: Any = None,
    **kwargs: Any,
) -> Variable:
    """deconvolution_2d(x, W, b=None, stride=1, pad=0, outsize=None, *, dilate=1, groups=1)

    The transposed 2-d convolution of x (N, C, h, w) with W (C, out // groups, kh, kw), plus b:
    the output has ``s (h - 1) + d (kh - 1) + 1 - 2 p`` rows (``outsize`` may ask for up to
    ``s - 1`` more: those of the unpadded output that the padding would crop at the end, then
    rows that get only the bias), and likewise columns. W of another float dtype than x is
    computed with numpy's promotion and the result cast to x's dtype (as chainer 7.8.1); b must
    have x's dtype, unless ``chainer.config.type_check`` is False (as in the numerical
    gradients of ``gradient_check``), where chainer adds it with numpy's promotion too.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 2, 2), np.float32)
        >>> F.deconvolution_2d(x, np.ones((1, 1, 2, 2), np.float32), stride=2).shape
        (1, 1, 4, 4)
    """
    where = "chainer F.deconvolution_2d"
    unknown = set(kwargs) - {"dilate", "groups"}
    if "deterministic" in kwargs:
        raise ValueError(
            "deterministic argument is not supported anymore. Use "
            "chainer.using_config('cudnn_deterministic', value) context where value is either "
            "`True` or `False`."
        )
    if unknown:
        raise TypeError(f"{where}: got unexpected keyword argument(s) {sorted(unknown)}")
    dl = _pair(kwargs.get("dilate", 1), "dilate", where)
    groups = int(kwargs.get("groups", 1))
    if dl[0] <= 0 or dl[1] <= 0:
        raise ValueError(f"Dilate should be positive, but {kwargs.get('dilate')} is supplied.")
    _check_float("deconvolution_2d", x=x, W=W, b=b)
    st, p = _pair(stride, "stride", where), _pair(pad, "pad", where)
    xs, ws = _shape(x), _shape(W)
    dt = _fdtype(x)
    if len(xs) != 4 or len(ws) != 4 or xs[1] != ws[0]:
        raise TypeError(
            f"{where}: x (N, C, h, w) and W (C, out // groups, kh, kw) are required, got shapes "
            f"{xs} and {ws}"
        )
    strict = getattr(config, "type_check", True)  # chainer checks b's dtype only then
    if b is not None and (_shape(b) != (ws[1] * groups,) or (strict and _fdtype(b) != dt)):
        raise TypeError(f"{where}: b must have shape ({ws[1] * groups},) and x's dtype")
    default = tuple(_deconv_outsize(xs[2 + i], ws[2 + i], st[i], p[i], d=dl[i]) for i in range(2))
    if outsize is None:
        out = default
    else:
        out = tuple(int(o) for o in outsize)
        for i in range(2):
            if _conv_outsize(out[i], ws[2 + i], st[i], p[i], d=dl[i]) != xs[2 + i]:
                raise TypeError(
                    f"{where}: outsize {out} does not give back x's spatial shape "
                    f"{xs[2:]} by a convolution"
                )
    if any(o <= 0 for o in out):
        raise RuntimeError("Height in the output must be positive.")
    extra = (out[0] - default[0], out[1] - default[1])
    if any(extra):
        # the rows past the default size are those the padding crops at the end (chainer's
        # col2im): the full output (no padding) cut at [p, p + out), zeros past its end
        y = _call("Deconvolution", x, W, None, base_axis=1, stride=st, dilation=dl, group=groups)
        full = tuple(y.shape[2:])
        short = tuple(builtins_max(p[i] + out[i] - full[i], 0) for i in range(2))
        if any(short):
            y = _call("Pad", y, pad_width=(0, short[0], 0, short[1]), mode="constant")
        y = _call(
            "GetItem",
            y,
            key=(slice(None), slice(None), slice(p[0], p[0] + out[0]), slice(p[1], p[1] + out[1])),
        )
    else:
        y = _call(
            "Deconvolution", x, W, None, base_axis=1, pad=p, stride=st, dilation=dl, group=groups
        )
    if b is not None:
        y = _call(
            "Add2",
            y,
            _call("BroadcastTo", _call("Reshape", b, shape=(1, -1, 1, 1)), shape=tuple(y.shape)),
        )
    return _out(_as_dtype(y, dt))  # type: ignore[no-any-return]


def bilinear(e1: Any, e2: Any, W: Any, V1: Any = None, V2: Any = None, b: Any = None) -> Variable:
    """The bilinear function of chainer's ``L.Bilinear``: ``y[n, l] = sum_jk e1[n, j]
    e2[n, k] W[j, k, l]`` (+ ``e1 V1 + e2 V2 + b`` when the three are given), with e1 (N, J)
    and e2 (N, K) (axes after the first flattened), W (J, K, L), V1 (J, L), V2 (K, L), b (L,).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> e = np.ones((1, 2), np.float32)
        >>> F.bilinear(e, e, np.ones((2, 2, 3), np.float32))
        variable([[4., 4., 4.]])
    """
    where = "chainer F.bilinear"
    flags = [V1 is None, V2 is None, b is None]
    if any(flags) and not all(flags):
        raise ValueError(
            "All coefficients and bias for bilinear() must be None, if at least one of them "
            "is None."
        )
    _check_float("bilinear", e1=e1, e2=e2, W=W)
    s1, s2, sw = _shape(e1), _shape(e2), _shape(W)
    dt = _fdtype(e1)
    if (
        len(s1) < 2
        or len(s2) < 2
        or s1[0] != s2[0]
        or len(sw) != 3
        or math.prod(s1[1:]) != sw[0]
        or math.prod(s2[1:]) != sw[1]
        or _fdtype(e2) != dt
        or _fdtype(W) != dt
    ):
        raise TypeError(
            f"{where}: e1 (N, J), e2 (N, K) and W (J, K, L) of one dtype are required, got "
            f"shapes {s1}, {s2}, {sw}"
        )
    n, j, k, out = s1[0], sw[0], sw[1], sw[2]
    a = reshape(e1, (n, j, 1))
    c = reshape(e2, (n, 1, k))
    outer = reshape(matmul(a, c), (n, j * k))
    y = matmul(outer, reshape(W, (j * k, out)))
    if V1 is not None:
        if (
            _shape(V1) != (j, out)
            or _shape(V2) != (k, out)
            or _shape(b) != (out,)
            or any(_fdtype(v) != dt for v in (V1, V2, b))
        ):
            raise TypeError(
                f"{where}: V1 ({j}, {out}), V2 ({k}, {out}) and b ({out},) of e1's dtype are "
                f"required, got shapes {_shape(V1)}, {_shape(V2)}, {_shape(b)}"
            )
        # (a chainer Variable at run time, as install_operators makes the operators return;
        # mypy sees gradhub's Variable.__add__, hence _out, which leaves it as it is)
        y = _out(
            y
            + matmul(reshape(e1, (n, j)), V1)
            + matmul(reshape(e2, (n, k)), V2)
            + broadcast_to(b, (n, out))
        )
    return y


def _deconv(
    fname: str,
    x: Any,
    W: Any,
    b: Any,
    stride: Any,
    pad: Any,
    outsize: Any,
    dilate: Any,
    groups: int,
    nd: int | None,
) -> Variable:
    """chainer's ``deconvolution_nd``: the transposed convolution, its output cut from the
    unpadded one at ``[p, p + out)`` (zeros past its end) when ``outsize`` is not the
    default size."""
    where = f"chainer F.{fname}"
    n = _spatial(fname, x, nd)
    _check_float(fname, x=x, W=W, b=b)
    xs, ws = _shape(x), _shape(W)
    dt = _fdtype(x)
    groups = int(groups)
    if len(ws) != n + 2 or xs[1] != ws[0] or _fdtype(W) != dt:
        raise TypeError(
            f"{where}: x (N, C, ...) and W (C, out // groups, k_1, ..., k_{n}) of one dtype "
            f"are required, got shapes {xs} and {ws}"
        )
    if xs[1] % groups:
        raise TypeError("The number of groups must be a divisor of that of input channels")
    strict = getattr(config, "type_check", True)  # chainer checks b's dtype only then
    if b is not None and (_shape(b) != (ws[1] * groups,) or (strict and _fdtype(b) != dt)):
        raise TypeError(f"{where}: b must have shape ({ws[1] * groups},) and x's dtype")
    st, p, dl = (
        _ntuple(v, n, w, where) for v, w in ((stride, "stride"), (pad, "pad"), (dilate, "dilate"))
    )
    default = tuple(_deconv_outsize(xs[2 + i], ws[2 + i], st[i], p[i], d=dl[i]) for i in range(n))
    if outsize is None:
        out = default
    else:
        out = _ntuple(outsize, n, "outsize", where)
        for i in range(n):
            lo = _conv_outsize(out[i], ws[2 + i], st[i], p[i], d=dl[i])
            hi = _conv_outsize(out[i], ws[2 + i], st[i], p[i], True, d=dl[i])
            if not lo <= xs[2 + i] <= hi:
                raise TypeError(
                    f"{where}: outsize {out} does not give back x's spatial shape {xs[2:]} by "
                    "a convolution"
                )
    if any(o <= 0 for o in out):
        raise RuntimeError(f"{where}: the output size {out} must be positive")
    if out == default:
        y = _call(
            "Deconvolution", x, W, None, base_axis=1, pad=p, stride=st, dilation=dl, group=groups
        )
    else:
        y = _call("Deconvolution", x, W, None, base_axis=1, stride=st, dilation=dl, group=groups)
        full = tuple(y.shape[2:])
        short = [builtins_max(p[i] + out[i] - full[i], 0) for i in range(n)]
        if any(short):
            widths = tuple(w for s in short for w in (0, s))
            y = _call("Pad", y, pad_width=widths, mode="constant")
        key = (slice(None), slice(None), *(slice(p[i], p[i] + out[i]) for i in range(n)))
        y = _call("GetItem", y, key=key)
    if b is not None:
        bshape = (1, -1) + (1,) * n
        y = _call(
            "Add2", y, _call("BroadcastTo", _call("Reshape", b, shape=bshape), shape=tuple(y.shape))
        )
    return _out(_as_dtype(y, dt))  # type: ignore[no-any-return]


def deconvolution_nd(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    outsize: Any = None,
    dilate: Any = 1,
    groups: int = 1,
) -> Variable:
    """The transposed N-d convolution of x (N, C, d_1, ..., d_n) with W (C, out // groups,
    k_1, ..., k_n), plus b (out,): axis i of the output has ``s (d_i - 1) + dil (k_i - 1) + 1
    - 2 p`` entries unless ``outsize`` asks for another size that a convolution maps back to
    ``d_i`` (the rows of the unpadded output from ``p`` on, zeros past its end), as chainer.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 2), np.float32)
        >>> F.deconvolution_nd(x, np.ones((1, 1, 2), np.float32), stride=2)
        variable([[[1., 1., 1., 1.]]])
    """
    return _deconv("deconvolution_nd", x, W, b, stride, pad, outsize, dilate, groups, None)


def deconvolution_1d(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    outsize: Any = None,
    dilate: Any = 1,
    groups: int = 1,
) -> Variable:
    """:func:`deconvolution_nd` of x (N, C, L) (another number of axes raises chainer's
    ``ValueError``)."""
    return _deconv("deconvolution_1d", x, W, b, stride, pad, outsize, dilate, groups, 1)


def deconvolution_3d(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    outsize: Any = None,
    dilate: Any = 1,
    groups: int = 1,
) -> Variable:
    """:func:`deconvolution_nd` of x (N, C, D, H, W) (another number of axes raises chainer's
    ``ValueError``)."""
    return _deconv("deconvolution_3d", x, W, b, stride, pad, outsize, dilate, groups, 3)
