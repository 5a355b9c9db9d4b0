"""gradhub-nn-ops: resampling (nnabla 1.39 names and argument conventions).

``Interpolate`` (linear or nearest, nnabla's ``align_corners``/``half_pixel`` conventions) and
``Shift`` (a shift of the last axes with nnabla's border modes). Both are composites of
registered functions (``Gather``, ``Mul2``, ``Add2``...), so each is differentiable to any order
through its parts.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub import Sample, Variable, as_variable
from gradhub.ops import call

from .math import int_arg

Shape = tuple[int, ...]


def _const_like(x: Any, a: np.ndarray) -> Variable:
    """A constant leaf holding ``a`` on ``x``'s device (floats in ``x``'s dtype)."""
    xp = x.device.xp
    if a.dtype.kind == "f":
        a = a.astype(x.dtype)
    return Variable.leaf(xp.asarray(a))


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
        out = tuple(int_arg(fn, "output_size", v) for v in _sizes(fn, "output_size", output_size))
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
    sh = (0,) * nd if shifts is None else tuple(int_arg(fn, "shifts", s) for s in shifts)
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


# -- registration ------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register the resampling functions."""
    c = register.composite
    c("Interpolate", interpolate, samples=_interpolate_samples, reference=_interpolate_ref)
    c("Shift", shift, samples=_shift_samples, reference=_shift_ref)
