"""Functions that only the nnabla layer has: ``Identity``, ``Sink`` and ``SetItem``.

They are recorded graph nodes like any registered function (``forward()`` re-executes them,
``backward``/``nn.grad`` differentiate them) but are not added to gradhub's registry: their
semantics are nnabla's own (``Sink``'s backward ignores the incoming gradient). Each is a
:class:`gradhub.registry.FunctionDef` applied with :func:`gradhub.graph.apply`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gradhub.graph import apply
from gradhub.ops import call
from gradhub.registry import FunctionDef, Provider, Rule
from gradhub.variable import Variable as NativeVariable

_PROVIDER = Provider("gradhub-compat", "", "gradhub_compat.nnabla")


# -- Identity -------------------------------------------------------------------------------------


def _identity_kernel(xp: Any, x: Any) -> Any:
    return x.copy()


def _identity_bw(
    gy: Sequence[Any], ins: Any, in_shapes: Any, outs: Any, out_shapes: Any
) -> list[Any]:
    return [gy[0]]


def _identity_fast(
    xp: Any, gy: Sequence[Any], ins: Any, in_shapes: Any, outs: Any, out_shapes: Any
) -> list[Any]:
    return [gy[0]]


IDENTITY = FunctionDef(
    "Identity",
    _identity_kernel,
    _PROVIDER,
    inputs=("x",),
    rule=Rule(_identity_bw, _PROVIDER, (), (), fast=_identity_fast),
    doc="nnabla's Identity: y = x (a copy), gradient passed through",
)


# -- Sink -----------------------------------------------------------------------------------------


def _sink_kernel(xp: Any, *xs: Any, one_input_grad: bool = True, refs: Any = ()) -> Any:
    return xp.zeros((), dtype=np.float32)


def _sink_grads(xp: Any, shapes: Any, dtypes: Any, one_input_grad: bool, refs: Any) -> list[Any]:
    """nnabla's Sink backward: each input's gradient is 1 (``one_input_grad``, the incoming
    gradient is ignored) or the gradient the input holds in ``.g`` at that time."""
    res: list[Any] = []
    for i, (shape, dtype) in enumerate(zip(shapes, dtypes)):
        if np.dtype(dtype).kind not in "fc":
            res.append(None)
            continue
        v = refs[i]() if i < len(refs) else None
        if one_input_grad or v is None:
            res.append(xp.ones(shape, dtype=dtype))
        else:
            g = v.g  # the layer's .g: zeros when nothing was stored
            res.append(xp.array(g, dtype=dtype, copy=True))
    return res


def _sink_bw(
    gy: Sequence[Any],
    ins: Any,
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    one_input_grad: bool = True,
    refs: Any = (),
) -> list[Any]:
    xp = gy[0].device.xp
    dtypes = [r().dtype if r() is not None else np.float32 for r in refs]
    arrays = _sink_grads(xp, in_shapes, dtypes, one_input_grad, refs)
    return [None if a is None else NativeVariable.leaf(a, False) for a in arrays]


def _sink_fast(
    xp: Any,
    gy: Sequence[Any],
    ins: Any,
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    one_input_grad: bool = True,
    refs: Any = (),
) -> list[Any]:
    dtypes = [r().dtype if r() is not None else np.float32 for r in refs]
    return _sink_grads(xp, in_shapes, dtypes, one_input_grad, refs)


SINK = FunctionDef(
    "Sink",
    _sink_kernel,
    _PROVIDER,
    inputs=("*x",),
    attrs={"one_input_grad": True, "refs": ()},
    rule=Rule(_sink_bw, _PROVIDER, (), (), fast=_sink_fast),
    doc="nnabla's Sink: a scalar that depends on every input; backward fills their gradients",
)


def identity(x: Any) -> Any:
    """Apply nnabla's Identity to ``x``."""
    return apply(IDENTITY, (x,), {})


def sink(xs: Sequence[Any], one_input_grad: bool = True) -> Any:
    """Apply nnabla's Sink to ``xs``."""
    refs = tuple(weakref.ref(x) for x in xs)
    return apply(SINK, tuple(xs), {"one_input_grad": bool(one_input_grad), "refs": refs})


# -- SetItem --------------------------------------------------------------------------------------


def _set_item_kernel(xp: Any, x: Any, v: Any, key: Any = None) -> Any:
    out = x.copy()
    out[key] = v
    return out


def _set_item_bw(
    gy: Sequence[Any], ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, key: Any = None
) -> list[Any]:
    g = gy[0]
    mask = g.device.xp.ones(tuple(in_shapes[0]), dtype=g.dtype)
    mask[key] = 0
    gx = g * NativeVariable.leaf(mask, False)
    gv = call("GetItem", g, key=key)
    if tuple(gv.shape) != tuple(in_shapes[1]):  # the value was broadcast into the slice
        gv = _sum_to(gv, tuple(in_shapes[1]))
    return [gx, gv]


def _sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1
    )
    if axes:
        g = call("Sum", g, axis=axes, keepdims=True)
    return call("Reshape", g, shape=shape)


SET_ITEM = FunctionDef(
    "SetItem",
    _set_item_kernel,
    _PROVIDER,
    inputs=("x", "v"),
    attrs={"key": None},
    rule=Rule(_set_item_bw, _PROVIDER, (), ()),
    doc="x with x[key] replaced by v (a new array): the gradient of x is zero at key",
)


def set_item(x: Any, key: Any, value: Any) -> Any:
    """``x`` with ``x[key] = value``, recorded (both ``x`` and ``value`` get gradients)."""
    return apply(SET_ITEM, (x, value), {"key": key})


# -- SoftmaxCrossEntropy skipping negative labels ------------------------------------------------
#
# nnabla 1.39 gives a negative label a loss of 0 and no gradient. The layer's function wraps the
# registered SoftmaxCrossEntropy (its kernels and its rule): negative labels are replaced by 0
# for the computation and their rows masked (one node in the graph, as nnabla's). The masking is
# done whether or not the batch has a negative label (a comparison and two selections over the
# labels' rows): asking first would read a device array on the host, a synchronisation on a GPU
# that a CUDA-graph recording refuses. A row without a negative label keeps the native loss and
# gradient bit for bit (its label unchanged, its gradient multiplied by 1).


def _negative(xp: Any, t: Any) -> Any:
    return t < 0


def _masked_sce_kernel(xp: Any, x: Any, t: Any, axis: Any = None) -> Any:
    from gradhub.ops import kernel

    native = kernel("SoftmaxCrossEntropy", x)
    if t.dtype.kind == "u" or t.dtype == bool:  # never negative (bool: the native error)
        return native(xp, x, t, axis=axis)
    neg = _negative(xp, t)
    loss = native(xp, x, xp.where(neg, 0, t), axis=axis)
    return xp.where(neg.reshape(loss.shape), xp.zeros((), dtype=loss.dtype), loss)


def _masked_sce_bw(
    gy: Sequence[Any],
    ins: Sequence[Any],
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    axis: Any = None,
) -> list[Any]:
    from gradhub.ops import fdef

    rule = fdef("SoftmaxCrossEntropy").rule
    x, t = ins
    xp = t.device.xp
    g = gy[0]
    if not (t._data.dtype.kind == "u" or t._data.dtype == bool):
        neg = _negative(xp, t._data)
        keep = NativeVariable.leaf((~neg).reshape(g.shape).astype(g._data.dtype), False)
        g = g * keep
        t = NativeVariable.leaf(xp.where(neg, 0, t._data), False)
    res = rule.fn([g], [x, t], in_shapes, outs, out_shapes, axis=axis)
    return [res[0], None]


def _masked_sce_fast(
    xp: Any,
    gy: Sequence[Any],
    ins: Sequence[Any],
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    axis: Any = None,
) -> list[Any]:
    from gradhub.ops import fdef

    rule = fdef("SoftmaxCrossEntropy").rule
    x, t = ins
    g = gy[0]
    if not (t.dtype.kind == "u" or t.dtype == bool):
        neg = _negative(xp, t)
        g = g * (~neg).reshape(g.shape).astype(g.dtype)
        t = xp.where(neg, 0, t)
    if rule.fast is None:  # a rule registered in place of the library's: run it on constants
        gv = [NativeVariable.leaf(g, False)]
        iv = [NativeVariable.leaf(x, False), NativeVariable.leaf(t, False)]
        res = rule.fn(gv, iv, in_shapes, outs, out_shapes, axis=axis)
        return [None if res[0] is None else res[0]._data, None]
    res = rule.fast(xp, [g], [x, t], in_shapes, outs, out_shapes, axis=axis)
    return [res[0], None]


SOFTMAX_CROSS_ENTROPY = FunctionDef(
    "SoftmaxCrossEntropy",
    _masked_sce_kernel,
    _PROVIDER,
    inputs=("x", "target"),
    attrs={"axis": None},
    rule=Rule(_masked_sce_bw, _PROVIDER, (0, 1), (), fast=_masked_sce_fast),
    doc="softmax cross entropy where a negative label gives 0 and no gradient (nnabla)",
)


def softmax_cross_entropy(x: Any, target: Any, axis: Any = None) -> Any:
    """nnabla's softmax cross entropy (negative labels skipped), one recorded node."""
    return apply(SOFTMAX_CROSS_ENTROPY, (x, target), {"axis": axis})


# -- MeanSubtraction ------------------------------------------------------------------------------
#
# nnabla's MeanSubtraction: with update_running_mean, each execution increments the counter t and
# moves the running mean to the cumulative average of the batch means (in place, as batch
# normalization's running statistics), then subtracts it; the backward is nnabla's approximation
# dx = dy (1 - 1 / (t N)) with t read at backward time (N the batch size: the elements before
# base_axis). Without update_running_mean: y = x - mean, dx = dy.


def _ms_batch(shape: Any, base_axis: int) -> int:
    n = 1
    for s in tuple(shape)[:base_axis]:
        n *= int(s)
    return n


def _mean_subtraction_kernel(
    xp: Any, x: Any, mean: Any, t: Any, base_axis: int = 1, update_running_mean: bool = True
) -> Any:
    if update_running_mean:
        for name, a in (("mean", mean), ("t", t)):
            if not getattr(getattr(a, "flags", None), "writeable", True):
                raise ValueError(
                    f"nnabla mean_subtraction: the running {name} array is read-only; it is "
                    "updated in place when update_running_mean=True"
                )
        t[...] = t + 1
        batch_mean = x.mean(axis=tuple(range(base_axis))) if base_axis > 0 else x
        mean[...] = mean + (batch_mean.astype(mean.dtype) - mean) / t.astype(mean.dtype)
    return x - mean


def _ms_factor(t: Any, shape: Any, base_axis: int, dtype: Any) -> Any:
    n = _ms_batch(shape, base_axis)
    tv = float(t.reshape(-1)[0])
    return np.dtype(dtype).type(1.0 - 1.0 / (tv * n))


def _ms_grads(
    gy: Sequence[Any],
    t: Callable[[], Any],
    in_shapes: Any,
    base_axis: int,
    update_running_mean: bool,
) -> list[Any]:
    """MeanSubtraction's gradients: the output's, scaled by :func:`_ms_factor` of the count
    ``t()`` when the running mean is updated; none for the mean and the count."""
    g = gy[0]
    if not update_running_mean:
        return [g, None, None]
    return [g * _ms_factor(t(), in_shapes[0], base_axis, g.dtype), None, None]


def _mean_subtraction_bw(
    gy: Sequence[Any],
    ins: Any,
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    base_axis: int = 1,
    update_running_mean: bool = True,
) -> list[Any]:
    return _ms_grads(gy, lambda: ins[2]._data, in_shapes, base_axis, update_running_mean)


def _mean_subtraction_fast(
    xp: Any,
    gy: Sequence[Any],
    ins: Any,
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    base_axis: int = 1,
    update_running_mean: bool = True,
) -> list[Any]:
    return _ms_grads(gy, lambda: ins[2], in_shapes, base_axis, update_running_mean)


MEAN_SUBTRACTION = FunctionDef(
    "MeanSubtraction",
    _mean_subtraction_kernel,
    _PROVIDER,
    inputs=("x", "mean", "t"),
    attrs={"base_axis": 1, "update_running_mean": True},
    rule=Rule(_mean_subtraction_bw, _PROVIDER, (2,), (), fast=_mean_subtraction_fast),
    doc="nnabla's MeanSubtraction: x minus a running mean updated at each execution",
)


def mean_subtraction(
    x: Any, mean: Any, t: Any, base_axis: int = 1, update_running_mean: bool = True
) -> Any:
    """Apply nnabla's MeanSubtraction (one recorded node)."""
    return apply(
        MEAN_SUBTRACTION,
        (x, mean, t),
        {"base_axis": int(base_axis), "update_running_mean": bool(update_running_mean)},
    )


# -- SpectralNorm ---------------------------------------------------------------------------------
#
# nnabla's SpectralNorm: W (its axis dim moved first, reshaped to (d0, d1)) divided by its
# largest singular value sigma = u^T W v estimated by itr power iterations from u,
#     v = W^T u / sqrt(|W^T u|^2 + eps),  u = W v / sqrt(|W v|^2 + eps);
# u is written back in place at each execution unless test. The gradient treats u and v as
# constants, as nnabla's: dW = G / sigma - sum(G * W) / sigma^2 u v^T. The u and v of the last
# execution are kept in two hidden buffers (inputs 2 and 3) for the backward pass.


def _sn_matrix(xp: Any, w: Any, dim: int) -> tuple[Any, tuple[int, ...]]:
    wt = xp.moveaxis(w, dim, 0)
    return wt.reshape(wt.shape[0], -1), tuple(wt.shape)


def _spectral_norm_kernel(
    xp: Any,
    w: Any,
    u: Any,
    u_buf: Any,
    v_buf: Any,
    dim: int = 0,
    itr: int = 1,
    eps: float = 1e-12,
    test: bool = False,
) -> Any:
    w2, shape = _sn_matrix(xp, w, dim)
    e = w2.dtype.type(eps)
    uu = u.astype(w2.dtype)
    v = None
    for _ in range(itr):
        v = w2.T @ uu
        v = v / xp.sqrt(xp.sum(v * v) + e)
        uu = w2 @ v
        uu = uu / xp.sqrt(xp.sum(uu * uu) + e)
    if not test:
        if not getattr(getattr(u, "flags", None), "writeable", True):
            raise ValueError(
                "nnabla spectral_norm: u is read-only; it is updated in place unless test=True"
            )
        u[...] = uu
    u_buf[...] = uu
    v_buf[...] = v
    sigma = uu @ (w2 @ v)
    return xp.moveaxis((w2 / sigma).reshape(shape), 0, dim)


def _sn_grad(xp: Any, g: Any, w: Any, u: Any, v: Any, dim: int) -> Any:
    w2, shape = _sn_matrix(xp, w, dim)
    g2, _ = _sn_matrix(xp, g, dim)
    sigma = u @ (w2 @ v)
    gw = g2 / sigma - xp.sum(g2 * w2) / (sigma * sigma) * xp.outer(u, v)
    return xp.moveaxis(gw.reshape(shape), 0, dim)


def _spectral_norm_bw(
    gy: Sequence[Any],
    ins: Any,
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    dim: int = 0,
    itr: int = 1,
    eps: float = 1e-12,
    test: bool = False,
) -> list[Any]:
    g = gy[0]
    xp = g.device.xp
    gw = _sn_grad(xp, g._data, ins[0]._data, ins[2]._data, ins[3]._data, dim)
    return [NativeVariable.leaf(gw, False), None, None, None]


def _spectral_norm_fast(
    xp: Any,
    gy: Sequence[Any],
    ins: Any,
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    dim: int = 0,
    itr: int = 1,
    eps: float = 1e-12,
    test: bool = False,
) -> list[Any]:
    return [_sn_grad(xp, gy[0], ins[0], ins[2], ins[3], dim), None, None, None]


SPECTRAL_NORM = FunctionDef(
    "SpectralNorm",
    _spectral_norm_kernel,
    _PROVIDER,
    inputs=("w", "u", "u_buf", "v_buf"),
    attrs={"dim": 0, "itr": 1, "eps": 1e-12, "test": False},
    rule=Rule(
        _spectral_norm_bw,
        _PROVIDER,
        (0, 2, 3),
        (),
        first_order_only=True,
        fast=_spectral_norm_fast,
    ),
    doc="nnabla's SpectralNorm: W / sigma(W), sigma by power iteration from u (updated)",
)


def spectral_norm(w: Any, u: Any, dim: int, itr: int, eps: float, test: bool) -> Any:
    """Apply nnabla's SpectralNorm (one recorded node; two hidden buffers keep u and v)."""
    xp = w.device.xp
    shape = tuple(int(s) for s in w.shape)
    d1 = 1
    for i, s in enumerate(shape):
        if i != dim:
            d1 *= s
    with w.device.activate():
        u_buf = NativeVariable.leaf(xp.zeros((shape[dim],), dtype=w.dtype), False)
        v_buf = NativeVariable.leaf(xp.zeros((d1,), dtype=w.dtype), False)
    attrs = {"dim": int(dim), "itr": int(itr), "eps": float(eps), "test": bool(test)}
    return apply(SPECTRAL_NORM, (w, u, u_buf, v_buf), attrs)


# -- FixedPointQuantize ---------------------------------------------------------------------------
#
# nnabla's FixedPointQuantize: q = clip(sign(x) floor(|x| / delta + 1/2) delta, min, max) with
# (min, max) = (-(2^(n-1) - 1) delta, (2^(n-1) - 1) delta) when sign, (0, (2^n - 1) delta)
# otherwise; the straight-through gradient is dy, or dy where min <= x <= max (0 elsewhere) with
# ste_fine_grained. The variant with a second input writes q into that array at each execution
# too (nnabla's outputs=[W_q.data] in the quantized parametric functions).


def _written(out: Any, q: Any) -> Any:
    """``q``, also written into the array ``out`` (the variants that keep their result)."""
    out[...] = q
    return q


def _with_into(
    name: str,
    kernel: Callable[..., Any],
    into_kernel: Callable[..., Any],
    attrs: dict[str, Any],
    rule: tuple[Callable[..., Any], tuple[int, ...], Callable[..., Any]],
    doc: str,
    into_doc: str,
) -> tuple[FunctionDef, FunctionDef]:
    """The function ``name`` of the input ``x``, and its variant that also writes its result
    into the array of a second input ``out`` (``into_kernel``), with the same attributes and
    the gradient ``rule`` (backward, saved inputs, fast path)."""
    bw, saved, fast = rule

    def make(k: Callable[..., Any], inputs: tuple[str, ...], d: str) -> FunctionDef:
        return FunctionDef(
            name,
            k,
            _PROVIDER,
            inputs=inputs,
            attrs=dict(attrs),
            rule=Rule(bw, _PROVIDER, saved, (), fast=fast),
            doc=d,
        )

    return make(kernel, ("x",), doc), make(into_kernel, ("x", "out"), into_doc)


def _fpq_bounds(sign: bool, n: int, delta: float) -> tuple[float, float]:
    if sign:
        top = ((1 << (int(n) - 1)) - 1) * float(delta)
        return -top, top
    return 0.0, ((1 << int(n)) - 1) * float(delta)


def _fpq(xp: Any, x: Any, sign: bool, n: int, delta: float) -> Any:
    lo, hi = _fpq_bounds(sign, n, delta)
    dt = x.dtype.type
    q = xp.sign(x) * xp.floor(xp.abs(x) / dt(delta) + dt(0.5)) * dt(delta)
    q = xp.where(x > dt(hi), dt(hi), q)
    return xp.where(x < dt(lo), dt(lo), q).astype(x.dtype)


def _fpq_kernel(
    xp: Any,
    x: Any,
    sign: bool = True,
    n: int = 8,
    delta: float = 0.0625,
    ste_fine_grained: bool = True,
) -> Any:
    return _fpq(xp, x, sign, n, delta)


def _fpq_into_kernel(
    xp: Any,
    x: Any,
    out: Any,
    sign: bool = True,
    n: int = 8,
    delta: float = 0.0625,
    ste_fine_grained: bool = True,
) -> Any:
    return _written(out, _fpq(xp, x, sign, n, delta))


def _fpq_mask(xp: Any, x: Any, sign: bool, n: int, delta: float, dtype: Any) -> Any:
    lo, hi = _fpq_bounds(sign, n, delta)
    dt = x.dtype.type
    return ((x >= dt(lo)) & (x <= dt(hi))).astype(dtype)


def _fpq_ste(
    gy: Sequence[Any], ins: Any, ste_fine_grained: bool, mask: Callable[[Any], Any]
) -> list[Any]:
    """FixedPointQuantize's straight-through gradient: the output's gradient ``g``, times
    ``mask(g)`` (1 inside the representable range, 0 outside) with ``ste_fine_grained``; none
    for the other inputs."""
    g = gy[0]
    rest = [None] * (len(ins) - 1)
    if not ste_fine_grained:
        return [g, *rest]
    return [g * mask(g), *rest]


def _fpq_bw(
    gy: Sequence[Any],
    ins: Any,
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    sign: bool = True,
    n: int = 8,
    delta: float = 0.0625,
    ste_fine_grained: bool = True,
) -> list[Any]:
    def mask(g: Any) -> Any:
        x = ins[0]
        return NativeVariable.leaf(_fpq_mask(x.device.xp, x._data, sign, n, delta, g.dtype), False)

    return _fpq_ste(gy, ins, ste_fine_grained, mask)


def _fpq_fast(
    xp: Any,
    gy: Sequence[Any],
    ins: Any,
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    sign: bool = True,
    n: int = 8,
    delta: float = 0.0625,
    ste_fine_grained: bool = True,
) -> list[Any]:
    return _fpq_ste(
        gy, ins, ste_fine_grained, lambda g: _fpq_mask(xp, ins[0], sign, n, delta, g.dtype)
    )


_FPQ_ATTRS = {"sign": True, "n": 8, "delta": 0.0625, "ste_fine_grained": True}

FIXED_POINT_QUANTIZE, FIXED_POINT_QUANTIZE_INTO = _with_into(
    "FixedPointQuantize",
    _fpq_kernel,
    _fpq_into_kernel,
    _FPQ_ATTRS,
    (_fpq_bw, (0,), _fpq_fast),
    "nnabla's FixedPointQuantize with its straight-through gradient",
    "nnabla's FixedPointQuantize, its result also written into the array of `out`",
)


def fixed_point_quantize(x: Any, out: Any, attrs: dict[str, Any]) -> Any:
    """Apply nnabla's FixedPointQuantize (``out``: None, or a Variable whose array receives the
    result at each execution)."""
    if out is None:
        return apply(FIXED_POINT_QUANTIZE, (x,), attrs)
    return apply(FIXED_POINT_QUANTIZE_INTO, (x, out), attrs)


# -- the binarized weights of BinaryConnect / BinaryWeight affine and convolution -----------------
#
# nnabla's BinaryConnect{Affine,Convolution}: the layer uses sign(W) (quantize_zero_to where W is
# 0), written into the binary_weight array at each execution, and passes the weight's gradient
# straight through to W. BinaryWeight{Affine,Convolution} scales it by alpha = mean(|W|) over the
# input axes (one value per output map, written into the alpha array), the gradient again straight
# through (not scaled). Here one node makes the (scaled) binary weight; the layer's affine or
# convolution then runs on it.


def _binarize(xp: Any, w: Any, zero_to: float) -> Any:
    dt = w.dtype.type
    return xp.where(w > 0, dt(1), xp.where(w < 0, dt(-1), dt(zero_to))).astype(w.dtype)


def _binary_connect_kernel(xp: Any, w: Any, wb: Any, quantize_zero_to: float = 1.0) -> Any:
    return _written(wb, _binarize(xp, w, quantize_zero_to))


def _binary_weight_kernel(
    xp: Any,
    w: Any,
    wb: Any,
    alpha: Any,
    quantize_zero_to: float = 1.0,
    in_axes: Any = (0,),
) -> Any:
    q = _binarize(xp, w, quantize_zero_to)
    wb[...] = q
    a = xp.abs(w).mean(axis=tuple(in_axes), keepdims=True)
    alpha[...] = a.reshape(alpha.shape)
    return (q * a).astype(w.dtype)


def _straight_bw(gy: Sequence[Any], ins: Any, *_: Any, **__: Any) -> list[Any]:
    return [gy[0]] + [None] * (len(ins) - 1)


def _straight_fast(xp: Any, gy: Sequence[Any], ins: Any, *_: Any, **__: Any) -> list[Any]:
    return _straight_bw(gy, ins)


BINARY_CONNECT_WEIGHT = FunctionDef(
    "BinaryConnectWeight",
    _binary_connect_kernel,
    _PROVIDER,
    inputs=("w", "wb"),
    attrs={"quantize_zero_to": 1.0},
    rule=Rule(_straight_bw, _PROVIDER, (), (), fast=_straight_fast),
    doc="sign(W) (written into wb) with a straight-through gradient (nnabla's BinaryConnect)",
)

BINARY_WEIGHT_WEIGHT = FunctionDef(
    "BinaryWeightWeight",
    _binary_weight_kernel,
    _PROVIDER,
    inputs=("w", "wb", "alpha"),
    attrs={"quantize_zero_to": 1.0, "in_axes": (0,)},
    rule=Rule(_straight_bw, _PROVIDER, (), (), fast=_straight_fast),
    doc="sign(W) mean(|W|) (written into wb and alpha), straight-through (nnabla's BinaryWeight)",
)


def binary_connect_weight(w: Any, wb: Any, quantize_zero_to: float) -> Any:
    """The binary weight of nnabla's BinaryConnect layers (one recorded node)."""
    return apply(BINARY_CONNECT_WEIGHT, (w, wb), {"quantize_zero_to": float(quantize_zero_to)})


def binary_weight_weight(
    w: Any, wb: Any, alpha: Any, quantize_zero_to: float, in_axes: tuple[int, ...]
) -> Any:
    """The scaled binary weight of nnabla's BinaryWeight layers (one recorded node)."""
    attrs = {"quantize_zero_to": float(quantize_zero_to), "in_axes": tuple(in_axes)}
    return apply(BINARY_WEIGHT_WEIGHT, (w, wb, alpha), attrs)


# -- Prune ----------------------------------------------------------------------------------------
#
# nnabla's Prune: x where |x| >= threshold, 0 elsewhere, the threshold the value of index
# int((size - 1) * rate) (in float32, truncated) of the sorted |x|; rate 1 gives zeros. The
# gradient goes straight through. As FixedPointQuantize, a variant writes the result into the
# array of a second input at each execution.


def _prune(xp: Any, x: Any, rate: float) -> Any:
    if float(rate) == 1.0:
        return xp.zeros_like(x)
    flat = xp.sort(xp.abs(x).ravel())
    idx = int(np.float32(flat.size - 1) * np.float32(rate))
    thr = flat[idx]
    return xp.where(xp.abs(x) < thr, x.dtype.type(0), x)


def _prune_kernel(xp: Any, x: Any, rate: float = 0.9) -> Any:
    return _prune(xp, x, rate)


def _prune_into_kernel(xp: Any, x: Any, out: Any, rate: float = 0.9) -> Any:
    return _written(out, _prune(xp, x, rate))


PRUNE, PRUNE_INTO = _with_into(
    "Prune",
    _prune_kernel,
    _prune_into_kernel,
    {"rate": 0.9},
    (_straight_bw, (), _straight_fast),
    "nnabla's Prune (the smallest |x| set to 0), straight-through gradient",
    "nnabla's Prune, its result also written into the array of `out`",
)


def prune(x: Any, out: Any, rate: float) -> Any:
    """Apply nnabla's Prune (``out``: None, or a Variable whose array receives the result)."""
    if out is None:
        return apply(PRUNE, (x,), {"rate": float(rate)})
    return apply(PRUNE_INTO, (x, out), {"rate": float(rate)})
