"""nnabla's linear quantization functions ``QuantizeLinear`` and ``DequantizeLinear``.

Recorded functions of the layer (a :class:`gradhub.registry.FunctionDef` applied with
:func:`gradhub.graph.apply`, not added to gradhub's registry), computed as nnabla 1.39's CPU
kernels in float32: ``forward()`` runs them again on the inputs' current data. Their gradients
are nnabla's: ``dy / scale`` (quantize, straight through the rounding and the saturation) and
``dy * scale`` (dequantize) for ``x``; a ``scale`` or ``zero_point`` that needs a gradient makes
the rule raise ``NotImplementedError`` (the backward pass then raises gradhub's
``BackwardRuleError``), as nnabla's backward refuses it. The module also holds nnabla's
``Pow2Quantize`` and ``MinMaxQuantize`` (its ranges updated in place at each execution; see the
comment of its section), with their straight-through gradients.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from gradhub.graph import apply
from gradhub.ops import call
from gradhub.registry import FunctionDef, Rule
from gradhub.variable import Variable as NativeVariable

from . import _layer_functions as _layer
from .functions import _check_ints

#: nnabla's dtype codes (``dtypes::BYTE``, ``dtypes::UBYTE``) and the saturation ranges
DTYPE_CODES = {np.dtype(np.int8): 1, np.dtype(np.uint8): 2}
_RANGES = {1: (-128, 127), 2: (0, 255)}
ROUND_MODES = ("HALF_AWAY_FROM_ZERO", "HALF_TO_EVEN")


def _round_away(xp: Any, v: Any) -> Any:
    """``std::round``: to the nearest integer, halves away from zero (exactly, also where
    ``v + 0.5`` would round in float32)."""
    t = xp.trunc(v)
    return xp.where(xp.abs(v - t) >= 0.5, t + xp.sign(v), t).astype(v.dtype)


def _round(xp: Any, v: Any, round_mode: str) -> Any:
    t = _round_away(xp, v)
    if round_mode == "HALF_TO_EVEN":  # nnabla's: round(v / 2) * 2 where |v - round(v)| == 1/2
        half = v * v.dtype.type(0.5)
        t = xp.where(xp.abs(v - t) == 0.5, _round_away(xp, half) * v.dtype.type(2), t)
    return t


def _saturate(xp: Any, v: Any, lo: float, hi: float) -> Any:
    # (nnabla's: x < lo ? lo : x > hi ? hi : x, which keeps NaN)
    return xp.where(v < lo, v.dtype.type(lo), xp.where(v > hi, v.dtype.type(hi), v))


def _float(x: Any) -> Any:
    return x if x.dtype.kind == "f" else x.astype(np.float32)


def _quantize_kernel(
    xp: Any,
    x: Any,
    scale: Any,
    zero_point: Any,
    round_mode: str = "HALF_AWAY_FROM_ZERO",
    narrow_range: bool = False,
    dtype: int = 1,
) -> Any:
    x = _float(x)
    lo, hi = _RANGES[dtype]
    if narrow_range:
        lo += 1
    y = _round(xp, x / scale.astype(x.dtype, copy=False), round_mode)
    zp = _saturate(xp, _round(xp, zero_point.astype(x.dtype), round_mode), lo, hi)
    return _saturate(xp, y + zp, lo, hi)


def _refuse(where: str, scale_grad: bool, zero_point_grad: bool) -> None:
    for name, need in (("scale", scale_grad), ("zero_point", zero_point_grad)):
        if need:
            raise NotImplementedError(
                f"nnabla F.{where}: the gradient with respect to {name} is not supported (nor "
                "by nnabla 1.39's backward); set its need_grad to False (docs: "
                "migration-nnabla.md)"
            )


def _needs(v: Any) -> bool:
    return bool(getattr(v, "need_grad", False))


def _scale_rule(where: str, by_scale: Callable[[Any, Any], Any]) -> Rule:
    """The rule of ``where`` (``F.quantize_linear`` or ``F.dequantize_linear``): ``dx =
    by_scale(dy, scale)`` (on Variables, or on arrays in the fast version), no gradient for
    ``scale`` and ``zero_point``, refused (:func:`_refuse`) where they need one."""

    def rule(gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, **a: Any) -> Any:
        _refuse(where, _needs(ins[1]), _needs(ins[2]))
        return [by_scale(gy[0], ins[1]), None, None]

    def fast(
        xp: Any,
        gy: Any,
        ins: Any,
        in_shapes: Any,
        outs: Any,
        out_shapes: Any,
        need_grads: tuple[bool, ...] = (True, False, False),
        **a: Any,
    ) -> Any:
        _refuse(where, need_grads[1], need_grads[2])
        return [by_scale(gy[0], ins[1].astype(gy[0].dtype, copy=False)), None, None]

    rule.__name__ = rule.__qualname__ = f"_{where}_bw"
    fast.__name__ = fast.__qualname__ = f"_{where}_fast"
    return Rule(rule, _layer._PROVIDER, None, (), fast=fast)


QUANTIZE_LINEAR = FunctionDef(
    "QuantizeLinear",
    _quantize_kernel,
    _layer._PROVIDER,
    inputs=("x", "scale", "zero_point"),
    attrs={"round_mode": "HALF_AWAY_FROM_ZERO", "narrow_range": False, "dtype": 1},
    rule=_scale_rule("quantize_linear", operator.truediv),
    doc="nnabla's QuantizeLinear: saturate(round(x / scale) + zero_point); dx = dy / scale",
)


def _dequantize_kernel(xp: Any, x: Any, scale: Any, zero_point: Any) -> Any:
    x = _float(x)
    return (x - zero_point.astype(x.dtype)) * scale.astype(x.dtype, copy=False)


DEQUANTIZE_LINEAR = FunctionDef(
    "DequantizeLinear",
    _dequantize_kernel,
    _layer._PROVIDER,
    inputs=("x", "scale", "zero_point"),
    rule=_scale_rule("dequantize_linear", operator.mul),
    doc="nnabla's DequantizeLinear: (x - zero_point) * scale; dx = dy * scale",
)


def check_shapes(where: str, x: Any, scale: Any, zero_point: Any) -> None:
    """nnabla's check: ``scale`` and ``zero_point`` have ``x``'s number of axes, each of size 1
    or ``x``'s."""
    xs = tuple(x.shape)
    for name, v in (("scale", scale), ("zero_point", zero_point)):
        vs = tuple(v.shape)
        if len(vs) != len(xs) or any(b not in (1, a) for a, b in zip(xs, vs)):
            raise ValueError(
                f"nnabla F.{where}: {name} must have x's number of axes ({len(xs)}), each of size "
                f"1 or x's (x: {xs}), got {vs}"
            )


def quantize_linear(
    x: NativeVariable,
    scale: NativeVariable,
    zero_point: NativeVariable,
    round_mode: str,
    narrow_range: bool,
    dtype: Any,
) -> Any:
    """Apply nnabla's QuantizeLinear (``dtype`` numpy's int8 or uint8; checked here)."""
    check_shapes("quantize_linear", x, scale, zero_point)
    if round_mode not in ROUND_MODES:
        raise ValueError(
            "nnabla F.quantize_linear: round_mode must be 'HALF_AWAY_FROM_ZERO' or "
            f"'HALF_TO_EVEN', got {round_mode!r}"
        )
    try:
        code = DTYPE_CODES[np.dtype(dtype)]
    except (TypeError, KeyError):
        raise ValueError(
            f"nnabla F.quantize_linear: dtype must be numpy.int8 or numpy.uint8, got {dtype!r}"
        ) from None
    attrs = {"round_mode": round_mode, "narrow_range": bool(narrow_range), "dtype": code}
    return apply(QUANTIZE_LINEAR, (x, scale, zero_point), attrs)


def dequantize_linear(x: NativeVariable, scale: NativeVariable, zero_point: NativeVariable) -> Any:
    """Apply nnabla's DequantizeLinear."""
    check_shapes("dequantize_linear", x, scale, zero_point)
    return apply(DEQUANTIZE_LINEAR, (x, scale, zero_point), {})


# -- Pow2Quantize ---------------------------------------------------------------------------------


def pow2_bounds(sign: bool, with_zero: bool, n: int, m: int) -> tuple[float, float, float]:
    """nnabla's ``p_max``, ``p_min`` and pruning threshold, as float32 values."""
    bits = n - 1 if sign else n
    bits = bits - 1 if with_zero else bits
    p_max = np.float32(2.0**m)
    p_min = np.float32(2.0 ** (m - ((1 << bits) - 1)))
    return float(p_max), float(p_min), float(np.float32(float(p_min) * 2.0**-0.5))


def _pow2_q(xp: Any, x: Any) -> Any:
    """``2^round(log2 |x|)`` (halves away from zero), in x's dtype."""
    with np.errstate(divide="ignore", invalid="ignore"):  # (log2(0) = -inf: q = 0)
        e = _round_away(xp, xp.log2(xp.abs(x)))
    return xp.exp2(e.astype(np.float64)).astype(x.dtype)


def _pow2_kernel(
    xp: Any,
    x: Any,
    sign: bool = True,
    with_zero: bool = True,
    n: int = 8,
    m: int = 1,
    ste_fine_grained: bool = True,
) -> Any:
    x = _float(x)
    t = x.dtype.type
    p_max, p_min, thr = pow2_bounds(sign, with_zero, n, m)
    q = _pow2_q(xp, x)
    ax = xp.abs(x)
    small = xp.where(ax < thr, t(0), t(p_min)) if with_zero else t(p_min)
    q = xp.where(q > p_max, t(p_max), xp.where(q < p_min, small, q))
    neg = x < 0
    if sign:
        return xp.where(neg, -q, q)
    return xp.where(neg, t(0) if with_zero else t(p_min), q)


def _pow2_mask(
    xp: Any, x: Any, sign: bool, with_zero: bool, n: int, m: int, ste_fine_grained: bool
) -> Any:
    """nnabla's straight-through factor: 1, or with ``ste_fine_grained`` 0 where
    ``2^round(log2 |x|)`` is above ``2^m`` (and, unsigned, where ``x < 0``); NaN gets 1, as
    nnabla's test ``!(q > p_max)``."""
    x = _float(x)
    if not ste_fine_grained:
        return xp.ones(x.shape, dtype=x.dtype)
    p_max = pow2_bounds(sign, with_zero, n, m)[0]
    c = ~(_pow2_q(xp, x) > p_max)
    if not sign:
        c &= ~(x < 0)
    return c.astype(x.dtype)


def _pow2_bw(gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, **a: Any) -> Any:
    x = ins[0]
    mask = _pow2_mask(x.device.xp, x._data, **a)
    return [gy[0] * NativeVariable.leaf(mask.astype(gy[0].dtype, copy=False), False)]


def _pow2_fast(
    xp: Any, gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, **a: Any
) -> Any:
    return [gy[0] * _pow2_mask(xp, ins[0], **a).astype(gy[0].dtype, copy=False)]


POW2_QUANTIZE = FunctionDef(
    "Pow2Quantize",
    _pow2_kernel,
    _layer._PROVIDER,
    inputs=("x",),
    attrs={"sign": True, "with_zero": True, "n": 8, "m": 1, "ste_fine_grained": True},
    rule=Rule(_pow2_bw, _layer._PROVIDER, (0,), (), fast=_pow2_fast),
    doc="nnabla's Pow2Quantize: sign(x) 2^round(log2|x|) within [2^(m - 2^n' + 1), 2^m]; STE",
)


def pow2_quantize(
    x: NativeVariable, sign: bool, with_zero: bool, n: int, m: int, ste_fine_grained: bool
) -> Any:
    """Apply nnabla's Pow2Quantize (the bit widths checked here, as nnabla's setup)."""
    _check_ints("nnabla F.pow2_quantize", n=n, m=m)
    if n <= 0:
        raise ValueError(f"nnabla F.pow2_quantize: the bit width n must be positive, got {n}")
    bits = n - int(bool(sign)) - int(bool(with_zero))
    if bits <= 0:
        raise ValueError(
            f"nnabla F.pow2_quantize: n={n} leaves no bit for the value once the sign "
            f"(sign={bool(sign)}) and zero (with_zero={bool(with_zero)}) take theirs"
        )
    attrs = {
        "sign": bool(sign),
        "with_zero": bool(with_zero),
        "n": int(n),
        "m": int(m),
        "ste_fine_grained": bool(ste_fine_grained),
    }
    return apply(POW2_QUANTIZE, (x,), attrs)


# -- MinMaxQuantize -------------------------------------------------------------------------------
#
# nnabla's MinMaxQuantize on x and the ranges qr_min, qr_max (real) and ql_min, ql_max (quantized
# levels), all four of one shape whose axes are x's or 1 (the axes of size 1 are the reduction
# axes). Each execution, in float32:
#   with x_min_max (and ema): qr_min <- decay qr_min + (1 - decay) min(x), likewise qr_max with
#     max(x) (without ema: qr_min <- min(x), qr_max <- max(x)), in place;
#   qr_max <- qr_min + eps where qr_max - qr_min < eps (in place, every execution);
#   scale = (qr_max - qr_min) / (ql_max - ql_min); the zero point ql_min - qr_min / scale clipped
#     to [ql_min, ql_max] and rounded (halves away from zero); qr_min', qr_max' = (ql_min - zp)
#     scale, (ql_max - zp) scale (the nudged range);
#   y = round((clip(x, qr_min', qr_max') - qr_min') / scale) scale + qr_min'.
# The gradient (read from the ranges as they are after the execution, as nnabla's): dx = dy, or
# dy where qr_min' <= x <= qr_max' with ste_fine_grained; without x_min_max and ema,
# d qr_min = sum(dy where x < qr_min') and d qr_max = sum(dy where x > qr_max') over the reduction
# axes, and none otherwise; ql_min and ql_max get none (a need for one is refused, as nnabla's).


def mmq_nudged(xp: Any, qr_min: Any, qr_max: Any, ql_min: Any, ql_max: Any) -> tuple[Any, Any, Any]:
    """nnabla's nudged range ``(qr_min', qr_max', scale)`` of MinMaxQuantize (all in
    ``qr_min``'s dtype)."""
    scale = (qr_max - qr_min) / (ql_max - ql_min)
    zp_min = ql_min - qr_min / scale
    zp = xp.where(
        zp_min <= ql_min, ql_min, xp.where(zp_min >= ql_max, ql_max, _round_away(xp, zp_min))
    )
    return (ql_min - zp) * scale, (ql_max - zp) * scale, scale


def _mmq_ranges(dtype: Any, *ranges: Any) -> list[Any]:
    return [r.astype(dtype, copy=False) for r in ranges]


def _mmq_kernel(
    xp: Any,
    x: Any,
    qr_min: Any,
    qr_max: Any,
    ql_min: Any,
    ql_max: Any,
    decay: float = 0.999,
    x_min_max: bool = False,
    ema: bool = False,
    ste_fine_grained: bool = True,
    eps: float = 0.01,
) -> Any:
    x = _float(x)
    t = x.dtype.type
    for name, r in (("qr_min", qr_min), ("qr_max", qr_max)):
        if not getattr(getattr(r, "flags", None), "writeable", True):
            raise ValueError(
                f"nnabla F.min_max_quantize: {name} is read-only; it is updated in place"
            )
    lo, hi = _mmq_ranges(x.dtype, qr_min, qr_max)
    if x_min_max:
        axes = tuple(i for i, n in enumerate(qr_min.shape) if n == 1)
        x_lo = x.min(axis=axes, keepdims=True)
        x_hi = x.max(axis=axes, keepdims=True)
        if ema:
            lo = lo * t(decay) + x_lo * t(1.0 - decay)
            hi = hi * t(decay) + x_hi * t(1.0 - decay)
        else:
            lo, hi = x_lo, x_hi
        qr_min[...] = lo
    hi = xp.where(hi - lo < t(eps), lo + t(eps), hi)
    qr_max[...] = hi
    lmin, lmax = _mmq_ranges(x.dtype, ql_min, ql_max)
    lo_n, hi_n, scale = mmq_nudged(xp, lo, hi, lmin, lmax)
    y = xp.minimum(xp.maximum(x, lo_n), hi_n)
    return (_round_away(xp, (y - lo_n) / scale) * scale + lo_n).astype(x.dtype, copy=False)


def _mmq_grads(
    xp: Any,
    x: Any,
    ranges: tuple[Any, Any, Any, Any],
    need_range_grads: tuple[bool, bool, bool, bool],
    x_min_max: bool,
    ema: bool,
    ste_fine_grained: bool,
) -> tuple[Any, Any, Any, tuple[int, ...]]:
    """The masks of MinMaxQuantize's gradient: for ``x`` (None: straight through), for
    ``qr_min`` and ``qr_max`` (None: no gradient), and the reduction axes; refuses a need for a
    gradient of ``ql_min``/``ql_max``, as nnabla's backward."""
    for name, need in zip(("ql_min", "ql_max"), need_range_grads[2:]):
        if need:
            raise ValueError(
                f"nnabla F.min_max_quantize: the gradient with respect to {name} is not "
                "supported (nor by nnabla 1.39's backward); set its need_grad to False"
            )
    x = _float(x)
    lo, hi, lmin, lmax = _mmq_ranges(x.dtype, *ranges)
    lo_n, hi_n, _ = mmq_nudged(xp, lo, hi, lmin, lmax)
    mask_x = ((x >= lo_n) & (x <= hi_n)).astype(x.dtype) if ste_fine_grained else None
    mask_lo = mask_hi = None
    if not (x_min_max or ema):
        if need_range_grads[0]:
            mask_lo = (x < lo_n).astype(x.dtype)
        if need_range_grads[1]:
            mask_hi = (x > hi_n).astype(x.dtype)
    axes = tuple(i for i, n in enumerate(ranges[0].shape) if n == 1)
    return mask_x, mask_lo, mask_hi, axes


def _mmq_bw(
    gy: Any,
    ins: Any,
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    x_min_max: bool = False,
    ema: bool = False,
    ste_fine_grained: bool = True,
    **a: Any,
) -> Any:
    g = gy[0]
    x = ins[0]
    xp = x.device.xp
    ranges = (ins[1]._data, ins[2]._data, ins[3]._data, ins[4]._data)
    needs = (_needs(ins[1]), _needs(ins[2]), _needs(ins[3]), _needs(ins[4]))
    masks = _mmq_grads(xp, x._data, ranges, needs, x_min_max, ema, ste_fine_grained)
    mask_x, mask_lo, mask_hi, axes = masks

    def leaf(m: Any) -> Any:
        return NativeVariable.leaf(m.astype(g.dtype, copy=False), False)

    gx = g if mask_x is None else g * leaf(mask_x)
    out: list[Any] = [gx, None, None, None, None]
    for i, m in ((1, mask_lo), (2, mask_hi)):
        if m is not None:
            s = call("Sum", g * leaf(m), axis=axes, keepdims=True) if axes else g * leaf(m)
            out[i] = call("Reshape", s, shape=tuple(in_shapes[i]))
    return out


def _mmq_fast(
    xp: Any,
    gy: Any,
    ins: Any,
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    need_grads: tuple[bool, ...] = (True, False, False, False, False),
    x_min_max: bool = False,
    ema: bool = False,
    ste_fine_grained: bool = True,
    **a: Any,
) -> Any:
    g = gy[0]
    needs = (bool(need_grads[1]), bool(need_grads[2]), bool(need_grads[3]), bool(need_grads[4]))
    ranges = (ins[1], ins[2], ins[3], ins[4])
    masks = _mmq_grads(xp, ins[0], ranges, needs, x_min_max, ema, ste_fine_grained)
    mask_x, mask_lo, mask_hi, axes = masks
    gx = g if mask_x is None else g * mask_x.astype(g.dtype, copy=False)
    out: list[Any] = [gx, None, None, None, None]
    for i, m in ((1, mask_lo), (2, mask_hi)):
        if m is not None:
            s = (g * m.astype(g.dtype, copy=False)).sum(axis=axes, keepdims=True)
            out[i] = s.reshape(tuple(in_shapes[i]))
    return out


MIN_MAX_QUANTIZE = FunctionDef(
    "MinMaxQuantize",
    _mmq_kernel,
    _layer._PROVIDER,
    inputs=("x", "qr_min", "qr_max", "ql_min", "ql_max"),
    attrs={
        "decay": 0.999,
        "x_min_max": False,
        "ema": False,
        "ste_fine_grained": True,
        "eps": 0.01,
    },
    rule=Rule(_mmq_bw, _layer._PROVIDER, None, (), fast=_mmq_fast),
    doc="nnabla's MinMaxQuantize: x on the nudged grid of [qr_min, qr_max] (ranges updated); STE",
)


def min_max_quantize(
    x: NativeVariable,
    qr_min: NativeVariable,
    qr_max: NativeVariable,
    ql_min: NativeVariable,
    ql_max: NativeVariable,
    decay: float,
    x_min_max: bool,
    ema: bool,
    ste_fine_grained: bool,
    eps: float,
) -> Any:
    """Apply nnabla's MinMaxQuantize (the shapes checked here, as nnabla's setup)."""
    where = "nnabla F.min_max_quantize"
    xs = tuple(int(n) for n in x.shape)
    shapes = {
        n: tuple(int(s) for s in v.shape)
        for n, v in (("qr_min", qr_min), ("qr_max", qr_max), ("ql_min", ql_min), ("ql_max", ql_max))
    }
    ref = shapes["ql_min"]
    for name, s in shapes.items():
        if s != ref:
            raise ValueError(
                f"{where}: qr_min, qr_max, ql_min and ql_max must have one shape, got ql_min "
                f"{ref} and {name} {s}"
            )
    if len(ref) != len(xs) or any(b not in (1, a) for a, b in zip(xs, ref)):
        raise ValueError(
            f"{where}: ql_min (and the other ranges) must have x's number of axes ({len(xs)}), "
            f"each of size 1 or x's (x: {xs}), got {ref}"
        )
    attrs = {
        "decay": float(decay),
        "x_min_max": bool(x_min_max),
        "ema": bool(ema),
        "ste_fine_grained": bool(ste_fine_grained),
        "eps": float(eps),
    }
    return apply(MIN_MAX_QUANTIZE, (x, qr_min, qr_max, ql_min, ql_max), attrs)
