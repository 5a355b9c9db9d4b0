"""Native forward-mode (JVP) rules of gradhub-nn-ops (the hook ``gradhub_add_jvp_rules``).

A rule maps the tangents ``t`` of one call's inputs to its output tangents (see
:mod:`gradhub.jvp_rules`), written with registered functions so that it is differentiable again:

* the elementwise records of :mod:`gradhub_nn_ops.math` (``Sin``... ``Softplus``): the tangent is
  the record's own derivative formula with ``t`` in place of the output gradient,
  ``derivative(F, t, x, y)`` (:class:`~gradhub_nn_ops.math.VariableMath`), written once for both
  directions;
* the other elementwise functions of one input (``ReLU``, ``ELU``, ``Clip``, ``Softplus``...) and
  ``Softmax``
  have a symmetric Jacobian: their backward rule applied to the tangent
  (:func:`gradhub.jvp_rules.symmetric_jvp`);
* linear functions (``Mean``, ``Pad``, ``AveragePooling``, ``Embed`` in its
  weight...) apply themselves to the tangent; multilinear ones (``Affine``, ``Convolution``,
  ``Deconvolution``, ``Einsum``, ``ConvolutionFilterGrad``) sum one term per input;
* ``StandardizeAffine``: :math:`\\dot y = \\gamma J \\dot x + \\hat x \\dot\\gamma + \\dot\\beta`,
  ``J`` Standardize's (symmetric) Jacobian, its backward rule applied to the tangent;
* ``MaxPooling`` gathers the tangent at the window maxima (``MaxPoolingGather``); ``LogSoftmax``
  and ``LogSumExp`` weigh it by the softmax; ``Maximum2``/``Minimum2``, ``Where`` and ``ATan2``
  follow their backward rules' conventions.

* the reductions ``Max``, ``Min``, ``Prod``, ``Norm`` and ``SoftmaxCrossEntropy``: the weights
  their backward rule gives each element (``g = 1``) times the tangent, summed over the reduced
  axes (:func:`reduction`).

* ``BatchNormalization``: in training (``batch_stat=True``) the tangent of the normalized
  input through the batch statistics,
  :math:`\\dot y = \\dot\\beta + \\dot\\gamma \\hat x + \\gamma\\, r (\\dot x_c - \\hat x\\,
  \\overline{\\hat x \\dot x_c})` with :math:`\\dot x_c = \\dot x - \\overline{\\dot x}`,
  :math:`r = (\\sigma^2 + \\epsilon)^{-1/2}` and the means over the reduced axes (the running
  statistics do not enter the output); in inference the running statistics' tangents as well,
  :math:`\\dot y = \\dot\\beta + \\dot\\gamma \\hat x + \\gamma r (\\dot x - \\dot\\mu) -
  \\tfrac12 \\gamma \\hat x r^2 \\dot\\sigma^2` (:func:`batch_normalization`).

The losses written as composites (``SquaredError``, ``HuberLoss``...) need none: forward mode goes
through the functions they call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gradhub import Variable
from gradhub.jvp_rules import linear_jvp, symmetric_jvp, tangent_sum, unary_jvp
from gradhub.ops import call
from gradhub.ops import fdef as fdef_of

from .math import (
    ELEMENTWISE,
    VARIABLE_MATH,
    Elementwise,
    max_mask,
    norm_axes,
    norm_axis,
    to_kept,
)

Vars = Sequence[Any]


def from_derivative(op: Elementwise) -> Callable[..., Any]:
    """The JVP rule of an elementwise record: its derivative formula with the tangent for the
    output gradient (the Jacobian is diagonal, so ``J t`` is ``f'(x) t``)."""
    derivative = op.derivative

    def tangent(t: Any, x: Any, y: Any, **attrs: Any) -> Any:
        return derivative(VARIABLE_MATH, t, x, y, **attrs)

    tangent.__name__ = f"d_{op.snake}"
    return unary_jvp(tangent)


def _zeros_like(x: Any) -> Any:
    return Variable.leaf(x.device.xp.zeros(x.shape, dtype=x.dtype))


def _filled(ts: Vars, ins: Vars) -> list[Any]:
    """The tangents with zeros for the inputs that have none."""
    return [_zeros_like(x) if t is None else t for t, x in zip(ts, ins)]


def linear_in(name: str, slot: int) -> Callable[..., Any]:
    """The JVP rule of a function linear in its input ``slot`` and locally constant in the
    others (an index, a mask, the input whose window maxima are gathered): the function applied
    with the tangent at ``slot``."""

    def rule(ins: Vars, outs: Vars, ts: Vars, **attrs: Any) -> tuple[Any]:
        t = ts[slot]
        if t is None:
            return (None,)
        args = [t if i == slot else x for i, x in enumerate(ins)]
        return (call(name, *args, **attrs),)

    rule.__name__ = rule.__qualname__ = f"jvp_{name}"
    return rule


def multilinear(name: str, affine: bool = False) -> Callable[..., Any]:
    """The JVP rule of a function linear in each input (``Einsum``, ``ConvolutionFilterGrad``):
    one term per input with a tangent, that input replaced by its tangent. ``affine``: inputs
    ``(x, weight, bias?)`` (``Affine``, ``Convolution``): the first term carries the bias's
    tangent, ``f(t_x, W, t_b)``, the second is ``f(x, t_W)`` without bias."""

    def rule(ins: Vars, outs: Vars, ts: Vars, **attrs: Any) -> tuple[Any]:
        parts = []
        if affine:
            tx, tw = ts[0], ts[1]
            tb = ts[2] if len(ts) > 2 else None
            if tx is not None or tb is not None:
                x_part = _zeros_like(ins[0]) if tx is None else tx
                bias = [] if tb is None else [tb]
                parts.append(call(name, x_part, ins[1], *bias, **attrs))
            if tw is not None:
                parts.append(call(name, ins[0], tw, **attrs))
        else:
            for i, t in enumerate(ts):
                if t is not None:
                    args = [t if k == i else x for k, x in enumerate(ins)]
                    parts.append(call(name, *args, **attrs))
        return (tangent_sum(parts, outs[0].shape),)

    rule.__name__ = rule.__qualname__ = f"jvp_{name}"
    return rule


def _stacking(name: str) -> Callable[..., Any]:
    """``Concatenate``/``Stack``: the tangents joined the same way (zeros for inputs without)."""

    def rule(ins: Vars, outs: Vars, ts: Vars, **attrs: Any) -> tuple[Any]:
        return (call(name, *_filled(ts, ins), **attrs),)

    rule.__name__ = rule.__qualname__ = f"jvp_{name}"
    return rule


def _split(ins: Vars, outs: Vars, ts: Vars, axis: int = 0) -> tuple[Any, ...]:
    res = call("Split", ts[0], axis=axis)
    return tuple(res) if isinstance(res, (tuple, list)) else (res,)


def _pad(
    ins: Vars,
    outs: Vars,
    ts: Vars,
    pad_width: Any = (),
    mode: str = "constant",
    constant_value: float = 0.0,
) -> tuple[Any]:
    # linear in x; the constant fill does not depend on x, so the tangent is padded with zeros
    return (call("Pad", ts[0], pad_width=pad_width, mode=mode, constant_value=0.0),)


def _select(greater: str) -> Callable[..., Any]:
    """``Maximum2``/``Minimum2``: ``m t0 + (1 - m) t1`` with the backward rule's mask ``m`` (1
    where x0 wins, the share ``ties`` gives x0 at ties)."""

    def rule(ins: Vars, outs: Vars, ts: Vars, ties: str = "split") -> tuple[Any]:
        (x0, x1), (t0, t1) = ins, ts
        m = max_mask(x0, x1, greater, ties)
        parts = [None if t0 is None else t0 * m, None if t1 is None else t1 * (1.0 - m)]
        return (tangent_sum(parts, outs[0].shape),)

    rule.__name__ = rule.__qualname__ = f"jvp_select_{greater}"
    return rule


def _where(ins: Vars, outs: Vars, ts: Vars) -> tuple[Any]:
    cond = ins[0]
    tt, tf = ts[1], ts[2]
    if tt is None and tf is None:
        return (None,)
    tt = _zeros_like(ins[1]) if tt is None else tt
    tf = _zeros_like(ins[2]) if tf is None else tf
    return (tangent_sum([call("Where", cond, tt, tf)], outs[0].shape),)


def _atan2(ins: Vars, outs: Vars, ts: Vars) -> tuple[Any]:
    # (x1 t0 - x0 t1) / (x0^2 + x1^2), with the inputs scaled by s = max(|x0|, |x1|) as in the
    # backward rule (no overflow or underflow of the squares)
    (x0, x1), (t0, t1) = ins, ts
    s = call("Maximum2", call("Abs", x0), call("Abs", x1))
    a, b = x0 / s, x1 / s
    r = 1.0 / (s * (a * a + b * b))
    parts = [None if t0 is None else t0 * b, None if t1 is None else -(t1 * a)]
    total = tangent_sum(parts, outs[0].shape)
    return (total * r,)


def _log_softmax(ins: Vars, outs: Vars, ts: Vars, axis: Any = None) -> tuple[Any]:
    # y = x - logsumexp(x): t - sum(softmax(x) t) along the axis
    t, y = ts[0], outs[0]
    ax = norm_axis("log_softmax", axis, y.ndim)
    return (t - call("Sum", call("Exp", y) * t, axis=ax, keepdims=True),)


def _logsumexp(ins: Vars, outs: Vars, ts: Vars, axis: Any = None, keepdims: bool = False) -> Any:
    # sum(exp(x - y) t) along the axes: the softmax-weighted tangent
    x, t = ins[0], ts[0]
    axes = norm_axes("logsumexp", axis, x.ndim)
    if not axes:
        return (t,)
    w = call("Exp", x - to_kept(outs[0], x.shape, axes))
    return (call("Sum", w * t, axis=axes, keepdims=keepdims),)


def reduction(name: str, single_axis: bool = False) -> Callable[..., Any]:
    """The JVP rule of a reduction whose backward rule is ``g * D`` with ``g`` broadcast along
    the reduced axes (``Max``, ``Min``, ``Prod``, ``Norm``, ``SoftmaxCrossEntropy``): each output
    element depends on its own group of input elements, with the weights ``D`` (``D = dy/dx``)
    that the backward rule gives for ``g = 1``, so :math:`\\dot y = \\sum_{axes} D\\,\\dot x`.
    The axes are the attribute ``axis`` (``None``: all; ``single_axis``: one axis, the last by
    default)."""
    which = "softmax_cross_entropy" if single_axis else name.lower()

    def rule(ins: Vars, outs: Vars, ts: Vars, **attrs: Any) -> tuple[Any]:
        t, x, y = ts[0], ins[0], outs[0]
        if t is None or y.dtype.kind != "f":
            return (None,)
        axis = attrs.get("axis")
        axes = (norm_axis(which, axis, x.ndim),) if single_axis else norm_axes(which, axis, x.ndim)
        ones = Variable.leaf(y.device.xp.ones(y.shape, dtype=y.dtype))
        back = fdef_of(name).rule
        d = back.fn([ones], list(ins), [v.shape for v in ins], list(outs), [y.shape], **attrs)[0]
        s = call("Sum", d * t, axis=axes, keepdims=True) if axes else d * t
        return (s if s.shape == y.shape else call("Reshape", s, shape=y.shape),)

    rule.__name__ = rule.__qualname__ = f"jvp_reduction_{name}"
    return rule


def batch_normalization(
    ins: Vars,
    outs: Vars,
    ts: Vars,
    axes: Any = (1,),
    decay_rate: float = 0.9,
    eps: float = 1e-5,
    batch_stat: bool = True,
) -> tuple[Any]:
    """The JVP rule of ``BatchNormalization`` (inputs x, beta, gamma, mean, variance), in float32
    for float16 inputs as the forward kernel."""
    return bn_jvp(ins, outs, ts, axes, eps, batch_stat, None)


def bn_jvp(
    ins: Vars,
    outs: Vars,
    ts: Vars,
    axes: Any,
    eps: float,
    batch_stat: bool,
    mean_of: Callable[[Any, tuple[int, ...]], Any] | None,
) -> tuple[Any]:
    """The JVP rule of a batch normalization whose batch statistics are the means
    ``mean_of(v, reduced_axes)`` (None: ``Mean`` over the axes, kept)."""
    from .normalization import _bn_geometry

    x, _, gamma, mean, var = ins
    tx, tbeta, tgamma, tmean, tvar = ts
    y = outs[0]
    half = x.dtype.name == "float16"

    def up(v: Any) -> Any:
        return call("Cast", v, dtype="float32") if half and v.dtype.name == "float16" else v

    _, red, _, _ = _bn_geometry(x.shape, axes)

    def mean_red(v: Any) -> Any:
        if mean_of is not None:
            return mean_of(v, red)
        return call("Mean", v, axis=red, keepdims=True) if red else v

    x, gamma = up(x), up(gamma)
    if batch_stat:
        xc = x - mean_red(x)
        rstd = call("PowScalar", call("AddScalar", mean_red(xc * xc), val=eps), val=-0.5)
        tmean = tvar = None  # the running statistics do not enter the output
    else:
        mean, var = up(mean), up(var)
        xc = x - mean
        rstd = call("PowScalar", call("AddScalar", var, val=eps), val=-0.5)
    xhat = xc * rstd
    parts: list[Any] = []
    if tbeta is not None:
        parts.append(up(tbeta))
    if tgamma is not None:
        parts.append(up(tgamma) * xhat)
    if batch_stat:
        if tx is not None:
            tc = up(tx)
            tc = tc - mean_red(tc)
            parts.append(gamma * rstd * (tc - xhat * mean_red(xhat * tc)))
    else:
        lin = tangent_sum(
            [None if tx is None else up(tx), None if tmean is None else -up(tmean)], x.shape
        )
        if lin is not None:
            parts.append(gamma * rstd * lin)
        if tvar is not None:
            parts.append(call("MulScalar", gamma * xhat * rstd * rstd * up(tvar), val=-0.5))
    total = tangent_sum(parts, y.shape)
    if total is not None and total.dtype != y.dtype:
        total = call("Cast", total, dtype=y.dtype.name)
    return (total,)


def _sync_batch_normalization(ins: Vars, outs: Vars, ts: Vars, **attrs: Any) -> tuple[Any]:
    from .distributed import sync_batch_normalization_jvp

    return sync_batch_normalization_jvp(ins, outs, ts, **attrs)


_STANDARDIZE_JVP = symmetric_jvp("Standardize")


def _standardize_affine(ins: Vars, outs: Vars, ts: Vars, axis: Any, eps: float) -> tuple[Any]:
    # y = S(x) gamma + beta: S's Jacobian is symmetric (its backward rule gives J t), so
    # dy = gamma J tx + S(x) tgamma + tbeta
    x, gamma = ins[0], ins[1]
    parts: list[Any] = []
    if ts[0] is not None:
        (jt,) = _STANDARDIZE_JVP((x,), (), (ts[0],), axis=axis, eps=eps)
        parts.append(gamma * jt)
    if ts[1] is not None:
        parts.append(call("Standardize", x, axis=axis, eps=eps) * ts[1])
    parts.append(ts[2])
    return (tangent_sum(parts, outs[0].shape),)


def _max_pooling(ins: Vars, outs: Vars, ts: Vars, **attrs: Any) -> tuple[Any]:
    # the tangent at each window's maximum (the adjoint of MaxPoolingBackward)
    return (call("MaxPoolingGather", ts[0], ins[0], **attrs),)


#: functions whose Jacobian is symmetric: their backward rule is their JVP rule
SYMMETRIC = (
    "ReLU",
    "ReLU6",
    "HardTanh",
    "ELU",
    "RSubScalar",
    "MaximumScalar",
    "MinimumScalar",
    "Clip",
    "Softplus",
    "Softmax",
    "Standardize",
)

#: linear functions of one input: applied to the tangent
LINEAR = (
    "Flip",
    "Tile",
    "Mean",
    "AveragePooling",
    "AveragePoolingBackward",
    "AllReduce",
    "DistributedMean",
)


def rules() -> dict[str, Callable[..., Any]]:
    """Every JVP rule of the library, by function name."""
    out: dict[str, Callable[..., Any]] = {op.name: from_derivative(op) for op in ELEMENTWISE}
    out.update({name: symmetric_jvp(name) for name in SYMMETRIC})
    out.update({name: linear_jvp(name) for name in LINEAR})
    out.update(
        {
            "Pad": _pad,
            "Split": _split,
            "Concatenate": _stacking("Concatenate"),
            "Stack": _stacking("Stack"),
            "Embed": linear_in("Embed", 1),
            "EmbedBackward": linear_in("EmbedBackward", 1),
            "MaxPoolingBackward": linear_in("MaxPoolingBackward", 0),
            "MaxPoolingGather": linear_in("MaxPoolingGather", 0),
            "MaskedUnpooling": linear_in("MaskedUnpooling", 0),
            "MaskedPooling": linear_in("MaskedPooling", 0),
            "MaxPooling": _max_pooling,
            "StandardizeAffine": _standardize_affine,
            "Affine": multilinear("Affine", affine=True),
            "Convolution": multilinear("Convolution", affine=True),
            "Deconvolution": multilinear("Deconvolution", affine=True),
            "ConvolutionFilterGrad": multilinear("ConvolutionFilterGrad"),
            "Einsum": multilinear("Einsum"),
            "Maximum2": _select("Greater"),
            "Minimum2": _select("Less"),
            "Where": _where,
            "ATan2": _atan2,
            "LogSoftmax": _log_softmax,
            "LogSumExp": _logsumexp,
            "Max": reduction("Max"),
            "Min": reduction("Min"),
            "Prod": reduction("Prod"),
            "Norm": reduction("Norm"),
            "SoftmaxCrossEntropy": reduction("SoftmaxCrossEntropy", single_axis=True),
            "BatchNormalization": batch_normalization,
            "SyncBatchNormalization": _sync_batch_normalization,
        }
    )
    return out


def register_jvp_rules(register: Any) -> None:
    """Register every rule of :func:`rules` (``register.jvp_rule``)."""
    for name, rule in rules().items():
        register.jvp_rule(name, rule)
