"""nnabla's ``ONNXResize`` (ONNX's Resize, ``F.onnx_resize``) as a recorded function of the
layer (a :class:`gradhub.registry.FunctionDef` applied with :func:`gradhub.graph.apply`, not
added to gradhub's registry).

The sampling positions, the neighbours and the interpolation weights of each resized axis are
computed on the host with nnabla 1.39's arithmetic (float32, operation by operation, as its CPU
kernel ``onnx_resize.cpp``); the kernel then sums the weighted neighbours axis by axis (the
last first) in nnabla's order, so the values are nnabla's bit for bit. The output is linear in
``x`` (plus ``extrapolation_value`` where a crop reads outside the input): its gradient is the
transpose of the linear part, the function ``ONNXResizeBackward``, whose gradient is
``ONNXResize`` again (without the extrapolation value), so gradients are exact to every order
(nnabla 1.39 has no backward for ``ONNXResize``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gradhub import functions as _native
from gradhub.graph import apply
from gradhub.registry import FunctionDef, Rule
from gradhub.variable import Variable as NativeVariable

from . import _layer_functions as _layer

_F32 = np.float32
WHERE = "nnabla F.onnx_resize"

#: the coordinate transformation modes nnabla 1.39 implements
COORD_MODES = (
    "half_pixel",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_half_pixel_for_nn",
    "tf_crop_and_resize",
)
#: the nearest modes nnabla 1.39 implements
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
#: the interpolation modes nnabla 1.39 implements
MODES = ("nearest", "linear", "cubic")


def _round_away(v: np.ndarray) -> np.ndarray:
    """``std::round`` of the float32 values ``v``: halves away from zero, exactly."""
    d = v.astype(np.float64)
    t = np.trunc(d)
    return np.where(np.abs(d - t) >= 0.5, t + np.sign(d), t)


def nearest_index(fx: np.ndarray, nearest_mode: str) -> np.ndarray:
    """nnabla's ``get_nearest_index`` of the float32 positions ``fx`` (int64, unclamped)."""
    d = fx.astype(np.float64)
    if nearest_mode == "round_prefer_ceil":
        out = _round_away(fx)
    elif nearest_mode == "floor":
        out = np.floor(d)
    elif nearest_mode == "ceil":
        out = np.ceil(d)
    else:  # round_prefer_floor
        out = np.where(d == np.floor(d) + 0.5, np.floor(d), _round_away(fx))
    return out.astype(np.int64)


def source_positions(
    coord_mode: str,
    scale: np.float32,
    out_size: int,
    in_size: int,
    roi: Sequence[float],
    axis: int,
    ndim: int,
) -> np.ndarray:
    """nnabla's ``get_src_index`` for the ``out_size`` outputs of ``axis`` (of ``ndim``):
    the float32 position in the input of each output index."""
    xr = np.arange(out_size, dtype=_F32)
    if scale == _F32(1):
        return xr
    lr, lo = _F32(out_size), _F32(in_size)
    one, half = _F32(1), _F32(0.5)
    if coord_mode == "half_pixel":
        return (xr + half) / scale - half
    if coord_mode == "pytorch_half_pixel":
        return (xr + half) / scale - half if lr > one else np.zeros_like(xr)
    if coord_mode == "align_corners":
        return np.zeros_like(xr) if lr == one else xr * (lo - one) / (lr - one)
    if coord_mode == "asymmetric":
        return xr / scale
    if coord_mode == "tf_half_pixel_for_nn":
        return (xr + half) / scale
    start, end = _F32(roi[axis]), _F32(roi[ndim + axis])  # tf_crop_and_resize
    if lr > one:
        return start * (lo - one) + xr * (end - start) * (lo - one) / (lr - one)
    return np.full_like(xr, half * (start + end) * (lo - one))


def _cubic_coeffs(fx: np.ndarray, in_size: int, a: np.float32, exclude_outside: bool) -> Any:
    """nnabla's ``CubicInterpolation::compute_coeffs``: the float32 weights ``(n, 4)`` of the
    neighbours ``floor(fx) - 1 .. floor(fx) + 2``."""
    one, two, three = _F32(1), _F32(2), _F32(3)

    def c01(x: np.ndarray) -> np.ndarray:
        return (a + two) * (x * x * x) - (a + three) * (x * x) + one

    def c12(x: np.ndarray) -> np.ndarray:
        return a * (x * x * x) - _F32(5) * a * (x * x) + _F32(8) * a * x - _F32(4) * a

    fl = np.floor(fx)
    lx = fx - fl
    c = np.stack([c12(one + lx), c01(_F32(0) + lx), c01(one - lx), c12(two - lx)], axis=1)
    if exclude_outside:
        base = fl.astype(np.int64)
        nb = base[:, None] + np.arange(-1, 3)
        c = np.where((nb < 0) | (nb >= in_size), _F32(0), c)
        total = ((c[:, 0] + c[:, 1]) + c[:, 2]) + c[:, 3]
        with np.errstate(divide="ignore", invalid="ignore"):
            c = c / total[:, None]
    return c.astype(_F32)


def axis_weights(
    mode: str,
    fx: np.ndarray,
    in_size: int,
    nearest_mode: str,
    cubic_coeff_a: float,
    exclude_outside: bool,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The input indices (``(n,)`` for nearest, ``(n, K)`` else) and the float32 weights
    (``(n, K)``, None for nearest) of the sampling positions ``fx`` on an axis of
    ``in_size``, as nnabla's kernels."""
    hi = in_size - 1
    if mode == "nearest":
        return np.clip(nearest_index(fx, nearest_mode), 0, hi), None
    base = np.floor(fx.astype(np.float64)).astype(np.int64)
    if mode == "linear":
        x0 = np.clip(base, 0, hi)
        lx1 = fx - x0.astype(_F32)
        idx = np.stack([x0, np.clip(base + 1, 0, hi)], axis=1)
        return idx, np.stack([_F32(1) - lx1, lx1], axis=1).astype(_F32)
    idx = np.clip(base[:, None] + np.arange(-1, 3), 0, hi)
    return idx, _cubic_coeffs(fx, in_size, _F32(cubic_coeff_a), exclude_outside)


def plan(
    in_shape: tuple[int, ...],
    roi: Sequence[float],
    scales: Sequence[float],
    sizes: Sequence[int],
    mode: str,
    coordinate_transformation_mode: str,
    nearest_mode: str,
) -> tuple[tuple[int, ...], list[float], int]:
    """nnabla's ``setup_impl``: the output shape, the float32 scales used and the number of
    leading axes left as they are; raises as nnabla refuses (``ValueError``, and
    ``NotImplementedError`` for nnabla's ``not_implemented`` errors)."""
    ndim = len(in_shape)
    if coordinate_transformation_mode not in COORD_MODES:
        raise ValueError(
            f"{WHERE}: coordinate_transformation_mode {coordinate_transformation_mode!r} is not "
            f"supported (one of {', '.join(COORD_MODES)})"
        )
    if nearest_mode not in NEAREST_MODES:
        raise ValueError(
            f"{WHERE}: nearest_mode {nearest_mode!r} is not supported (one of "
            f"{', '.join(NEAREST_MODES)})"
        )
    if not ((len(sizes) >= 1) != (len(scales) >= 1)):
        raise ValueError(f"{WHERE}: exactly one of sizes and scales must be given")
    if sizes:
        if len(sizes) != ndim:
            raise ValueError(
                f"{WHERE}: sizes must have one entry per axis of x ({ndim}), got {len(sizes)}"
            )
        out = tuple(int(s) for s in sizes)
        if any(s < 0 for s in out):
            raise ValueError(f"{WHERE}: sizes must not be negative, got {list(out)}")
        used = [_F32(_F32(o) / _F32(i)) for o, i in zip(out, in_shape)]
    else:
        if len(scales) != ndim:
            raise ValueError(
                f"{WHERE}: scales must have one entry per axis of x ({ndim}), got {len(scales)}"
            )
        used = [_F32(s) for s in scales]
        out = tuple(int(np.floor(_F32(i) * s)) for i, s in zip(in_shape, used))
        if any(s < 0 for s in out):
            raise ValueError(f"{WHERE}: scales give a negative output size {list(out)}")
    outer = 0
    for s in used:
        if s != _F32(1):
            break
        outer += 1
    if not 1 <= ndim - outer <= 3:
        raise NotImplementedError(
            f"{WHERE}: only 1-D, 2-D and 3-D interpolation are implemented (as nnabla's): the "
            f"axes from the first whose scale is not 1 to the last are resized; scales "
            f"{[float(s) for s in used]}"
        )
    if mode not in MODES:
        raise ValueError(f"{WHERE}: mode {mode!r} is not supported (one of {', '.join(MODES)})")
    if coordinate_transformation_mode == "tf_crop_and_resize":
        if len(roi) != 2 * ndim:
            raise ValueError(
                f"{WHERE}: roi must have 2 * x.ndim = {2 * ndim} values (the starts, then the "
                f"ends) with coordinate_transformation_mode 'tf_crop_and_resize', got {len(roi)}"
            )
        for i in range(outer):
            if _F32(roi[i]) != 0 or _F32(roi[ndim + i]) != 1:
                raise NotImplementedError(
                    f"{WHERE}: the roi of an axis that is not resized (axis {i}) must be "
                    f"(0.0, 1.0), as nnabla's"
                )
    return out, [float(s) for s in used], outer


def _axes(
    in_shape: tuple[int, ...],
    roi: Sequence[float],
    scales: Sequence[float],
    sizes: Sequence[int],
    mode: str,
    coordinate_transformation_mode: str,
    cubic_coeff_a: float,
    exclude_outside: int,
    nearest_mode: str,
) -> tuple[tuple[int, ...], list[tuple[int, np.ndarray, np.ndarray | None]], np.ndarray | None]:
    """The output shape, the ``(axis, indices, weights)`` of the resized axes (the last first)
    and the mask of the outputs that read outside the input (``tf_crop_and_resize``; None
    when there is none)."""
    ndim = len(in_shape)
    out_shape, used, outer = plan(
        in_shape, roi, scales, sizes, mode, coordinate_transformation_mode, nearest_mode
    )
    crop = coordinate_transformation_mode == "tf_crop_and_resize"
    invalid = np.zeros((1,) * ndim, dtype=bool)
    steps = []
    for axis in range(ndim - 1, outer - 1, -1):
        n_in, n_out = in_shape[axis], out_shape[axis]
        fx = source_positions(
            coordinate_transformation_mode, _F32(used[axis]), n_out, n_in, roi, axis, ndim
        )
        if crop:
            bad = (fx < 0) | (fx > _F32(n_in - 1))
            invalid = invalid | bad.reshape((n_out,) + (1,) * (ndim - axis - 1))
        idx, w = axis_weights(mode, fx, n_in, nearest_mode, cubic_coeff_a, bool(exclude_outside))
        steps.append((axis, idx, w))
    mask = np.broadcast_to(invalid, out_shape) if crop and invalid.any() else None
    return out_shape, steps, mask


def _bcast(w: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """The weights ``w`` of one neighbour (one per output index of ``axis``) shaped to
    broadcast along ``axis`` of an ``ndim``-d array."""
    return w.reshape((-1,) + (1,) * (ndim - axis - 1))


def _resize_kernel(xp: Any, x: Any, **a: Any) -> Any:
    """``ONNXResize``: each resized axis (the last first, as nnabla's inner loop) replaced by
    the sum, in nnabla's order, of its neighbours times their float32 weights."""
    if x.dtype.kind != "f":
        x = x.astype(np.float32)
    out_shape, steps, mask = _axes(tuple(int(v) for v in x.shape), **_plan_args(a))
    y = x
    for axis, idx, w in steps:
        if w is None:
            y = xp.take(y, xp.asarray(idx), axis=axis)
            continue
        acc = None
        for k in range(idx.shape[1]):
            term = xp.take(y, xp.asarray(idx[:, k]), axis=axis) * xp.asarray(
                _bcast(w[:, k].astype(y.dtype), axis, y.ndim)
            )
            acc = term if acc is None else acc + term
        y = acc
    if mask is not None:
        fill = y.dtype.type(_F32(a["extrapolation_value"]))
        y = xp.where(xp.asarray(mask), fill, y)
    return xp.ascontiguousarray(y).reshape(out_shape)


def _resize_t_kernel(xp: Any, g: Any, shape: tuple[int, ...] = (), **a: Any) -> Any:
    """``ONNXResizeBackward``: the transpose of ``ONNXResize``'s linear part (the outputs set
    to ``extrapolation_value`` take no part) applied to ``g``, giving ``shape``."""
    in_shape = tuple(int(v) for v in shape)
    ndim = len(in_shape)
    _, steps, mask = _axes(in_shape, **_plan_args(a))
    if mask is not None:
        g = xp.where(xp.asarray(mask), g.dtype.type(0), g)
    for axis, idx, w in reversed(steps):
        n_in = in_shape[axis]
        m = np.zeros((idx.shape[0], n_in), dtype=np.float64)  # m[o, i]: weight of i in o
        if w is None:
            np.add.at(m, (np.arange(idx.shape[0]), idx), 1.0)
        else:
            for k in range(idx.shape[1]):
                np.add.at(m, (np.arange(idx.shape[0]), idx[:, k]), w[:, k].astype(np.float64))
        mt = xp.asarray(m.astype(g.dtype))
        moved = xp.moveaxis(g, axis, ndim - 1)
        g = xp.moveaxis(moved @ mt, ndim - 1, axis)
    return xp.ascontiguousarray(g)


_PLAN_KEYS = (
    "roi",
    "scales",
    "sizes",
    "mode",
    "coordinate_transformation_mode",
    "cubic_coeff_a",
    "exclude_outside",
    "nearest_mode",
)


def _plan_args(a: dict[str, Any]) -> dict[str, Any]:
    return {k: a[k] for k in _PLAN_KEYS}


def _resize_bw(gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, **a: Any) -> Any:
    return [apply(ONNX_RESIZE_T, (gy[0],), dict(a, shape=tuple(int(v) for v in in_shapes[0])))]


def _resize_fast(
    xp: Any, gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, **a: Any
) -> Any:
    return [_resize_t_kernel(xp, gy[0], tuple(int(v) for v in in_shapes[0]), **a)]


def _resize_t_bw(
    gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, shape: Any = (), **a: Any
) -> Any:
    # the transpose of the transpose: ONNXResize's linear part (no extrapolation value)
    return [apply(ONNX_RESIZE, (gy[0],), dict(a, extrapolation_value=0.0))]


def _resize_t_fast(
    xp: Any, gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, **a: Any
) -> Any:
    a.pop("shape", None)
    return [_resize_kernel(xp, gy[0], **dict(a, extrapolation_value=0.0))]


_RESIZE_ATTRS: dict[str, Any] = {
    "roi": (),
    "scales": (),
    "sizes": (),
    "mode": "nearest",
    "coordinate_transformation_mode": "half_pixel",
    "cubic_coeff_a": -0.75,
    "exclude_outside": 0,
    "extrapolation_value": 0.0,
    "nearest_mode": "round_prefer_floor",
}

#: nnabla's ``ONNXResize`` (no inputs need the kernel's data in its rule)
ONNX_RESIZE = FunctionDef(
    "ONNXResize",
    _resize_kernel,
    _layer._PROVIDER,
    inputs=("x",),
    attrs=dict(_RESIZE_ATTRS),
    rule=Rule(_resize_bw, _layer._PROVIDER, (), (), fast=_resize_fast),
    doc="nnabla's ONNXResize (ONNX's Resize): nearest, linear or cubic resampling",
)

#: the transpose of ``ONNXResize``'s linear part: its gradient
ONNX_RESIZE_T = FunctionDef(
    "ONNXResizeBackward",
    _resize_t_kernel,
    _layer._PROVIDER,
    inputs=("dy",),
    attrs=dict(_RESIZE_ATTRS, shape=()),
    rule=Rule(_resize_t_bw, _layer._PROVIDER, (), (), fast=_resize_t_fast),
    doc="the gradient of ONNXResize: the transpose of its linear part",
)


def onnx_resize(
    x: NativeVariable,
    roi: Sequence[float],
    scales: Sequence[float],
    sizes: Sequence[int],
    mode: str,
    coordinate_transformation_mode: str,
    cubic_coeff_a: float,
    exclude_outside: int,
    extrapolation_value: float,
    nearest_mode: str,
) -> NativeVariable:
    """``x`` resized as nnabla 1.39's ``ONNXResize``: one function (arguments as nnabla's
    ``info.args``: float32 values shown as floats), its gradient ``ONNXResizeBackward``
    (whose gradient is ``ONNXResize`` again). The arguments are checked here, as nnabla's
    setup does (:func:`plan`), before the function is recorded."""
    plan(
        tuple(int(v) for v in x.shape),
        roi,
        scales,
        sizes,
        mode,
        coordinate_transformation_mode,
        nearest_mode,
    )
    if x.dtype.kind != "f":
        x = _native.cast(x, "float32")
    attrs = {
        "roi": [float(_F32(v)) for v in roi],
        "scales": [float(_F32(v)) for v in scales],
        "sizes": tuple(int(v) for v in sizes),
        "mode": mode,
        "coordinate_transformation_mode": coordinate_transformation_mode,
        "cubic_coeff_a": float(_F32(cubic_coeff_a)),
        "exclude_outside": int(exclude_outside),
        "extrapolation_value": float(_F32(extrapolation_value)),
        "nearest_mode": nearest_mode,
    }
    return apply(ONNX_RESIZE, (x,), attrs)  # type: ignore[no-any-return]
