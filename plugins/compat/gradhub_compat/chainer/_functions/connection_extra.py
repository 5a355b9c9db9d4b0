"""chainer 7.8.1's ``F.deformable_convolution_2d_sampler`` (re-exported by
:mod:`gradhub_compat.chainer.functions`), computed by gradhub-nn-ops'
``DeformableConvolution`` (nnabla's layout of the offsets) after rearranging chainer's offsets;
every order of gradient comes from the registered functions."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._common import call_native as _call
from .. import Variable
from .. import functions as F
from ..functions import _dtype, _out, _pair, _shape
from ._common import _invalid, _kind

__all__ = ["deformable_convolution_2d_sampler"]


def deformable_convolution_2d_sampler(
    x: Any, offset: Any, W: Any, b: Any = None, stride: Any = 1, pad: Any = 0
) -> Variable:
    r"""Deformable convolution (v1), chainer's layout: ``x`` (n, c, h, w), ``offset``
    (n, 2 kh kw, out_h, out_w), ``W`` (out_c, c, kh, kw), ``b`` (out_c,) or None. The input
    is zero-padded by ``pad``; output position :math:`(i, j)` reads, for kernel position
    :math:`k = p\, k_w + q`, the padded input bilinearly (zeros outside it) at

    .. math::
        y_{pos} = i\, s_y + p + \mathrm{offset}[k_h k_w + k, i, j], \quad
        x_{pos} = j\, s_x + q + \mathrm{offset}[k, i, j]

    (the first ``kh kw`` offset channels move along the width, the last along the height),
    and :math:`y_{o,i,j} = b_o + \sum_{c,k} W_{o,c,k}\, \mathrm{bilinear}(x_c, y_{pos},
    x_{pos})`. ``out_h`` and ``out_w`` are the offset's (usually the convolution's output
    size). A ``ValueError`` when ``offset.shape[1] != 2 kh kw``, as chainer; ``x``,
    ``offset`` and ``W`` must be floating point of one dtype (chainer's ``InvalidType``).

    Computed by nn_ops' ``DeformableConvolution`` on the padded input, with the offsets
    rearranged into nnabla's layout (``(dy, dx)`` pairs per kernel position, on a map of the
    input's size read at ``(i s_y, j s_x)``); gradients of every order (chainer's are first
    order). At whole-pixel sample positions the offset gradient is one-sided (the cell
    ``[floor, floor + 1]``), as chainer's.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
        >>> W = np.ones((1, 1, 1, 1), np.float32)
        >>> offset = np.full((1, 2, 3, 3), 0.5, np.float32)  # half a pixel right and down
        >>> F.deformable_convolution_2d_sampler(x, offset, W)
        variable([[[[2.  , 3.  , 1.75],
                    [5.  , 6.  , 3.25],
                    [3.25, 3.75, 2.  ]]]])
    """
    where = "deformable_convolution_2d_sampler"
    sy, sx = _pair(stride, "stride", f"chainer F.{where}")
    ph, pw = _pair(pad, "pad", f"chainer F.{where}")
    xs, os_, ws = _shape(x), _shape(offset), _shape(W)
    if len(xs) != 4 or len(os_) != 4 or len(ws) != 4:
        raise _invalid(
            where,
            "x.ndim == 4, offset.ndim == 4, W.ndim == 4",
            f"x {xs}, offset {os_}, W {ws}",
        )
    out_c, wc, kh, kw = ws
    n, c, h, w = xs
    _, khkw2, out_h, out_w = os_
    if khkw2 != 2 * kh * kw:
        raise ValueError("The shape of the offset does not match the kernel size")
    dt = _dtype(x) if _dtype(x) is not None else np.asarray(x).dtype
    for what, v in (("offset", offset), ("W", W)):
        vdt = _dtype(v) if _dtype(v) is not None else np.asarray(v).dtype
        if np.dtype(vdt) != np.dtype(dt):
            raise _invalid(where, f"{what}.dtype == x.dtype", f"{vdt} != {dt}")
    if _kind(x) != "f":
        raise _invalid(where, "x.dtype.kind == f", f"{np.dtype(dt).kind} != f")
    if os_[0] != n or wc != c:
        raise _invalid(
            where,
            "offset.shape[0] == x.shape[0], W.shape[1] == x.shape[1]",
            f"x {xs}, offset {os_}, W {ws}",
        )
    if b is not None and tuple(_shape(b)) != (out_c,):
        raise _invalid(where, "b.shape == (W.shape[0],)", f"b {_shape(b)}, W {ws}")
    k = kh * kw
    # the padded input, grown at the bottom and right (zeros, read as outside anyway) so that
    # the convolution has at least out_h x out_w positions
    hp, wp = h + 2 * ph, w + 2 * pw
    hin = max(hp, (out_h - 1) * sy + kh)
    win = max(wp, (out_w - 1) * sx + kw)
    xpad = F.pad(x, ((0, 0), (0, 0), (ph, ph + hin - hp), (pw, pw + win - wp)), "constant")
    # nnabla's offsets: (dy, dx) for each kernel position, on a (hin, win) map read at
    # (i sy, j sx)
    dx = F.get_item(offset, (slice(None), slice(0, k)))
    dy = F.get_item(offset, (slice(None), slice(k, 2 * k)))
    pairs = F.reshape(F.stack([dy, dx], axis=2), (n, 2 * k, out_h, 1, out_w, 1))
    spread = F.pad(pairs, ((0, 0), (0, 0), (0, 0), (0, sy - 1), (0, 0), (0, sx - 1)), "constant")
    spread = F.reshape(spread, (n, 2 * k, out_h * sy, out_w * sx))
    spread = F.get_item(spread, (Ellipsis, slice(0, hin), slice(0, win)))
    off_map = F.pad(
        spread,
        ((0, 0), (0, 0), (0, max(hin - out_h * sy, 0)), (0, max(win - out_w * sx, 0))),
        "constant",
    )
    y = _call("DeformableConvolution", xpad, W, off_map, None, b, stride=(sy, sx))
    if tuple(y.shape[2:]) != (out_h, out_w):
        y = _call("GetItem", y, key=(Ellipsis, slice(0, out_h), slice(0, out_w)))
    return _out(y)  # type: ignore[no-any-return]
