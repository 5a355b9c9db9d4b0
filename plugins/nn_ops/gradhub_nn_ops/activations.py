"""gradhub-nn-ops: activation functions (nnabla names and defaults).

ReLU, ReLU6 and HardTanh are primitives (ReLU is on the hot path): their rules multiply the
incoming gradient by a mask computed with a non-differentiable comparison, so the rule is again
differentiable (its own derivative is zero away from the kinks). ELU is a primitive too, so that
its value comes from expm1 and its gradient from exp (its rule: a mask and Exp). The others are
composed from registered functions and need no rule of their own.

Sub-gradients at kinks: ``relu'(0) = 0`` (as PyTorch), ``relu6'`` and ``hard_tanh'`` are 0 at both
ends of the linear piece (as PyTorch's hardtanh), ``leaky_relu'(0) = alpha``, ``prelu'(0) = w``,
``elu'(0) = alpha``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub import Sample, as_variable
from gradhub.memory import output_array
from gradhub.ops import call, real_scalar, with_real_scalars

from . import native
from .math import (
    Elementwise,
    draw,
    float_input,
    float_variable,
    formula_fast,
    formula_rule,
    unary_fast,
    unary_rule,
    unary_samples,
)

# -- primitives ----------------------------------------------------------------------------------


#: length of the row of zeros that ReLU's CPU kernel compares against (see _relu)
_ZEROS = 2048


def _fortran(a: Any) -> bool:
    """Whether the 2-d numpy array ``a`` is in Fortran order only (a transposed C array)."""
    flags = a.flags
    return a.ndim == 2 and flags.f_contiguous and not flags.c_contiguous


def _relu(xp: Any, x: Any, inplace: bool = False) -> Any:
    if x.dtype.kind != "f":
        return xp.maximum(x, 0)
    if xp is np and _fortran(x):  # Affine's output in Fortran order: the result in that order
        return _relu(xp, x.T).T
    out = output_array(xp, x.shape, x.dtype)
    if xp is np and x.size >= _ZEROS and x.flags.c_contiguous and out.flags.c_contiguous:
        if native.dtype_usable(x.dtype):  # one compiled pass, the same bits as numpy's maximum
            native.relu(x, out)
            return out
        # rows of _ZEROS elements against one row of zeros, not against the scalar 0: numpy's
        # vectorized loop needs both operands contiguous along the inner axis (2-3x faster on a
        # (64, 8, 32, 32) float32 array); a row, not a whole array of zeros, whose fresh pages
        # would cost a page fault each
        n = x.size - x.size % _ZEROS
        xf, of = x.reshape(-1), out.reshape(-1)
        zeros = np.zeros(_ZEROS, dtype=x.dtype)
        np.maximum(xf[:n].reshape(-1, _ZEROS), zeros, out=of[:n].reshape(-1, _ZEROS))
        if n < x.size:
            np.maximum(xf[n:], zeros[: x.size - n], out=of[n:])
        return out
    return xp.maximum(x, 0, out=out)


def _relu_bw(g: Any, x: Any, y: Any, inplace: bool = False) -> Any:
    return g * call("GreaterScalar", y, val=0.0)


def _relu_fast(
    xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any, inplace: bool = False
) -> list[Any]:
    g, yy = gy[0], y[0]
    if g.shape != yy.shape or g.dtype.kind != "f":
        return [g * (yy > 0)]
    if xp is np and _fortran(g) and _fortran(yy):  # both in Fortran order: work on C views
        return [_relu_fast(xp, [g.T], x, xs, [yy.T], ys)[0].T]
    # the mask as 0/1 floats, then a float product: numpy's float-times-bool loop casts in small
    # buffers and takes longer than the copy and the product together
    out = output_array(xp, g.shape, g.dtype)
    if (
        xp is np
        and g.size >= _ZEROS
        and g.dtype == yy.dtype
        and g.flags.c_contiguous
        and yy.flags.c_contiguous
        and out.flags.c_contiguous
        and native.dtype_usable(g.dtype)
    ):  # one compiled pass, the same bits
        native.relu_backward(g, yy, out)
        return [out]
    xp.copyto(out, yy > 0)
    return [xp.multiply(g, out, out=out)]


def _relu6(xp: Any, x: Any) -> Any:
    return xp.clip(x, 0, 6)


def _hard_tanh(xp: Any, x: Any) -> Any:
    return xp.clip(x, -1, 1)


def _d_open_interval(lo: float, hi: float) -> Any:
    """The derivative formula ``g`` where ``lo < y < hi`` (equivalently ``lo < x < hi`` for a clip
    to [lo, hi]), else 0: the graph rule and the array rule (see ``math.VariableMath``)."""

    def d_open_interval(F: Any, g: Any, x: Any, y: Any) -> Any:
        return g * (F.greater(y, lo) * F.less(y, hi))

    return d_open_interval


_d_relu6 = _d_open_interval(0.0, 6.0)
_d_hard_tanh = _d_open_interval(-1.0, 1.0)


# -- composites ----------------------------------------------------------------------------------


def leaky_relu(x: Any, alpha: float = 0.1, inplace: bool = False) -> Any:
    """leaky_relu(x, alpha=0.1, inplace=False): :math:`y = x` for :math:`x > 0`, else
    :math:`\\alpha x` (nnabla; ``inplace`` is accepted and ignored).

    Gradient 1 for :math:`x > 0`, ``alpha`` otherwise (``alpha`` at 0, as PyTorch).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.leaky_relu(gh.Variable([-2.0, 3.0]), alpha=0.5).d
        array([-1.,  3.], dtype=float32)
    """
    x = as_variable(x)
    alpha = real_scalar("leaky_relu", "alpha", alpha)
    # slope: a constant computed with a non-differentiable comparison
    slope = call(
        "AddScalar",
        call("MulScalar", call("GreaterScalar", x, val=0.0), val=1.0 - alpha),
        val=alpha,
    )
    return x * slope


# ELU: a primitive (expm1 for the value, exp for the derivative; a composite of Expm1 would get
# the derivative as expm1(x) + 1, which cancels)


def _elu(xp: Any, x: Any, alpha: float = 1.0) -> Any:
    x = float_input(x)
    neg = xp.expm1(xp.minimum(x, 0))  # expm1: accurate for small |x|, where e^x - 1 cancels
    if alpha != 1:
        neg = neg * x.dtype.type(alpha)
    return xp.where(x > 0, x, neg)


def _elu_bw(g: Any, x: Any, y: Any, alpha: float = 1.0) -> Any:
    # 1 for x > 0, alpha * e^x for x <= 0: from exp itself, not y + alpha (= alpha * (expm1(x) +
    # 1), which cancels to 0 below x = -17 in float32); differentiable again through Exp
    pos = call("GreaterScalar", x, val=0.0)  # a constant mask
    e = call("Exp", call("MinimumScalar", x, val=0.0))
    if alpha != 1:
        e = call("MulScalar", e, val=alpha)
    return g * (pos + e * call("RSubScalar", pos, val=1.0))


def _elu_fast(xp: Any, g: Any, x: Any, y: Any, alpha: float = 1.0) -> Any:
    e = xp.exp(xp.minimum(x, 0))
    if alpha != 1:
        e = e * x.dtype.type(alpha)
    return xp.where(x > 0, g, g * e)


_ELU_DOC = r"""elu(x, alpha=1.0): :math:`y = x` for :math:`x > 0`, else :math:`\alpha (e^x - 1)`
    (nnabla).

    A primitive: the value is computed with ``expm1`` (accurate for small :math:`|x|`), the
    gradient is 1 for :math:`x > 0` and :math:`\alpha e^x` for :math:`x \le 0` (``alpha`` at
    0), computed with ``exp`` (accurate down to the smallest :math:`e^x`, as PyTorch), to any
    order.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.elu(gh.Variable([0.0, 2.0])).d
        array([0., 2.], dtype=float32)
    """


_SELU_SCALE = 1.05070098735548
_SELU_ALPHA = 1.673263242354377


def selu(x: Any, scale: float = _SELU_SCALE, alpha: float = _SELU_ALPHA) -> Any:
    """selu(x, scale=1.0507..., alpha=1.6733...): :math:`y = \\lambda\\,\\mathrm{elu}(x, \\alpha)`
    (nnabla defaults, Klambauer et al. 2017).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.selu(gh.Variable([0.0, 1.0])).d
        array([0.      , 1.050701], dtype=float32)
    """
    scale = real_scalar("selu", "scale", scale)
    alpha = real_scalar("selu", "alpha", alpha)
    return call("MulScalar", call("ELU", as_variable(x), alpha=alpha), val=scale)


def gelu(x: Any, approximate: str = "none") -> Any:
    """gelu(x, approximate="none"): the Gaussian error linear unit.

    ``approximate="none"``: the exact erf form
    :math:`y = \\frac{x}{2}(1 + \\mathrm{erf}(x/\\sqrt2))` (as PyTorch's default);
    ``"tanh"``: the tanh approximation
    :math:`y = \\frac{x}{2}(1 + \\tanh u)`, :math:`u = \\sqrt{2/\\pi}\\,(x + 0.044715 x^3)`
    (nnabla's GELU, PyTorch's ``approximate="tanh"``), computed as the equal
    :math:`x\\,\\mathrm{sigmoid}(2u)`, accurate also for large negative x. Both are
    compositions, differentiable to any order.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.gelu(gh.Variable([0.0, 1.0])).d
        array([0.       , 0.8413447], dtype=float32)
        >>> F.gelu(gh.Variable([0.0, 1.0]), approximate="tanh").d
        array([0.      , 0.841192], dtype=float32)
    """
    x = float_variable(as_variable(x))
    if approximate == "tanh":
        # (1 + tanh u) / 2 = sigmoid(2 u): no cancellation for large negative x
        inner = x + call("MulScalar", call("PowScalar", x, val=3.0), val=0.044715)
        return x * call("Sigmoid", call("MulScalar", inner, val=2.0 * math.sqrt(2.0 / math.pi)))
    if approximate != "none":
        raise ValueError(f'gelu(): approximate must be "none" or "tanh", got {approximate!r}')
    e = call("Erf", call("MulScalar", x, val=1.0 / math.sqrt(2.0)))
    return call("MulScalar", x * call("AddScalar", e, val=1.0), val=0.5)


def _gelu_ref(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1.0 + _erf_np(x / math.sqrt(2.0)))


def swish(x: Any) -> Any:
    """swish(x): :math:`y = x\\,\\mathrm{sigmoid}(x)` (nnabla; also called SiLU).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.swish(gh.Variable([0.0, 1.0])).d
        array([0.       , 0.7310586], dtype=float32)
    """
    x = float_variable(as_variable(x))
    return x * call("Sigmoid", x)


def silu(x: Any) -> Any:
    """silu(x): the sigmoid linear unit :math:`y = x\\,\\mathrm{sigmoid}(x)`, same as ``swish``.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.silu(gh.Variable([0.0, 1.0])).d
        array([0.       , 0.7310586], dtype=float32)
    """
    return swish(x)


def softsign(x: Any) -> Any:
    """softsign(x): :math:`y = x / (1 + |x|)` (nnabla).

    Its second derivative jumps at 0 (a kink of order 2); ``abs'(0) = 0`` is used there.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.softsign(gh.Variable([-1.0, 3.0])).d
        array([-0.5 ,  0.75], dtype=float32)
    """
    x = float_variable(as_variable(x))
    return x / call("AddScalar", call("Abs", x), val=1.0)


def log_sigmoid(x: Any) -> Any:
    """log_sigmoid(x): :math:`y = \\ln \\mathrm{sigmoid}(x) = -\\mathrm{softplus}(-x)` (nnabla).

    Stable for large ``|x|``; gradient :math:`\\mathrm{sigmoid}(-x)`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.log_sigmoid(gh.Variable([0.0])).d
        array([-0.6931472], dtype=float32)
    """
    x = float_variable(as_variable(x))
    return -call("Softplus", -x)


def prelu(
    x0: Any = None, x1: Any = None, base_axis: int = 1, *, x: Any = None, weight: Any = None
) -> Any:
    """prelu(x0, x1, base_axis=1): parametric ReLU (nnabla; x0 is the input, x1 the slopes,
    also accepted by the keywords ``x`` and ``weight``).

    :math:`y = \\max(x, 0) + w \\min(x, 0)`.
    ``weight`` has shape ``()`` or ``(1,)`` (one slope shared by all elements) or
    ``(x.shape[base_axis],)`` (one slope per channel, the channel axis being ``base_axis``).
    Gradient w.r.t. x: 1 for :math:`x > 0`, else :math:`w` (``w`` at 0, as PyTorch).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> x = gh.Variable([[-1.0, -1.0], [2.0, -4.0]])
        >>> F.prelu(x, gh.Variable([0.1, 0.5])).d
        array([[-0.1, -0.5],
               [ 2. , -2. ]], dtype=float32)
    """
    for nn_name, alias, value in (("x0", "x", x), ("x1", "weight", weight)):
        if value is not None:
            if (x0 if nn_name == "x0" else x1) is not None:
                raise TypeError(f"prelu(): got values for both {nn_name!r} and its alias {alias!r}")
            if nn_name == "x0":
                x0 = value
            else:
                x1 = value
    if x0 is None or x1 is None:
        raise TypeError(
            f"prelu() missing required argument {'x0' if x0 is None else 'x1'!r} "
            "(the input and the slopes: prelu(x0, x1, base_axis=1))"
        )
    x = as_variable(x0)
    w = as_variable(x1)
    nd = x.ndim
    if not isinstance(base_axis, (int, np.integer)) or not -nd <= base_axis < max(nd, 1):
        raise ValueError(
            f"prelu(): argument 'base_axis' {base_axis!r} is out of range for x of ndim {nd}"
        )
    ax = int(base_axis) % nd if nd else 0
    if w.size == 1 and w.ndim <= 1:
        wb = w if w.ndim == 0 else call("Reshape", w, shape=())
    elif w.ndim == 1 and nd and w.shape[0] == x.shape[ax]:
        wb = call("Reshape", w, shape=(w.shape[0],) + (1,) * (nd - ax - 1))
    else:
        raise ValueError(
            f"prelu(): argument 'weight' of shape {w.shape} must have shape (), (1,) or "
            f"({x.shape[ax] if nd else 1},) (x.shape[base_axis]) for x of shape {x.shape}"
        )
    return call("ReLU", x) + wb * call("MinimumScalar", x, val=0.0)


# -- nnabla's hard sigmoid, concatenated activations, tanh shrink, sinc ---------------------------


def _hard_sigmoid(xp: Any, x: Any) -> Any:
    x = float_input(x)
    t = x.dtype.type
    return xp.clip(x * t(0.2) + t(0.5), t(0), t(1))


def _d_hard_sigmoid(F: Any, g: Any, x: Any, y: Any) -> Any:
    # 0.2 on the open interval -2.5 < x < 2.5, 0 outside and at both ends (PyTorch's hardsigmoid)
    return (g * 0.2) * (F.greater(x, -2.5) * F.less(x, 2.5))


_HARD_SIGMOID_DOC = r"""hard_sigmoid(x): :math:`y = \min(\max(0.2 x + 0.5, 0), 1)` (nnabla's
    piecewise linear sigmoid: 0 below -2.5, 1 above 2.5).

    Gradient 0.2 for :math:`-2.5 < x < 2.5`, else 0 (0 at both kinks, as PyTorch's hardsigmoid;
    nnabla's backward passes 0.2 at :math:`x = \pm 2.5`, as ``gradhub_compat.nnabla``).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.hard_sigmoid(gh.Variable([-3.0, 0.0, 1.0])).d
        array([0. , 0.5, 0.7], dtype=float32)
    """


def _d_tanh_shrink(F: Any, g: Any, x: Any, y: Any) -> Any:
    t = F.tanh(x)
    return g * (t * t)


TANH_SHRINK = Elementwise(
    name="TanhShrink",
    snake="tanh_shrink",
    kernel=lambda xp, x: x - xp.tanh(x),
    derivative=_d_tanh_shrink,
    uses="x",
    reference=lambda x: x - (np.exp(2 * x) - 1.0) / (np.exp(2 * x) + 1.0),
    domain=(-3, 3),
    doc=r"""tanh_shrink(x): :math:`y = x - \tanh x` (nnabla); :math:`dy/dx = \tanh^2 x`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.tanh_shrink(gh.Variable([0.0, 1.0])).d
        array([0.        , 0.23840582], dtype=float32)
    """,
)


def _concat_axis(fname: str, x: Any, axis: Any) -> int:
    nd = x.ndim
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{fname}(): argument 'axis' must be an int, got {axis!r}")
    if not -nd <= axis < nd:
        raise ValueError(f"{fname}(): argument 'axis' {axis} is out of range for x of ndim {nd}")
    return int(axis) % nd


def celu(x: Any, alpha: float = 1.0, axis: int = 1) -> Any:
    """celu(x, alpha=1.0, axis=1): the concatenated ELU (nnabla): ``elu(x, alpha)`` and
    ``elu(-x, alpha)`` joined along ``axis``, so the output is twice as long on that axis.

    :math:`y = [\\mathrm{elu}(x), \\mathrm{elu}(-x)]`. The gradient is the sum of both halves'
    (0 at :math:`x = 0`, as nnabla: ``elu'(0) = alpha`` from each side). Not to be confused with
    PyTorch's ``celu`` (the continuously differentiable ELU).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.celu(gh.Variable([[-1.0, 2.0]])).d
        array([[-0.63212055,  2.        ,  1.        , -0.86466473]], dtype=float32)
    """
    x = float_variable(as_variable(x))
    alpha = real_scalar("celu", "alpha", alpha)
    ax = _concat_axis("celu", x, axis)
    return call("Concatenate", call("ELU", x, alpha=alpha), call("ELU", -x, alpha=alpha), axis=ax)


def crelu(x: Any, axis: int = 1) -> Any:
    """crelu(x, axis=1): the concatenated ReLU (nnabla, Shang et al. 2016): ``relu(x)`` and
    ``relu(-x)`` joined along ``axis``, so the output is twice as long on that axis.

    :math:`y = [\\max(x, 0), \\max(-x, 0)]`. The gradient is 1 for :math:`x > 0`, -1 for
    :math:`x < 0`, and 0 at :math:`x = 0` (``relu'(0) = 0`` for both halves, as PyTorch;
    nnabla gives -1 there, as ``gradhub_compat.nnabla``).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.crelu(gh.Variable([[-1.0, 2.0]])).d
        array([[0., 2., 1., 0.]], dtype=float32)
    """
    x = float_variable(as_variable(x))
    ax = _concat_axis("crelu", x, axis)
    return call("Concatenate", call("ReLU", x), call("ReLU", -x), axis=ax)


#: below this magnitude sinc is its Taylor polynomial (the next term, x^10 / 11!, is < 3e-18)
_SINC_SERIES = 0.1
_SINC_COEFFS = (1.0, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880)


def sinc(x: Any) -> Any:
    """sinc(x): the unnormalized sinc :math:`y = \\sin(x) / x`, 1 at :math:`x = 0` (nnabla).

    Smooth everywhere: for :math:`|x| < 0.1` it is computed as its Taylor polynomial
    :math:`1 - x^2/6 + x^4/120 - \\dots` (exact in floating point), elsewhere as
    :math:`\\sin(x)/x`, each branch fed only the inputs it serves, so the derivatives are right
    to any order at 0 too (:math:`y'(0) = 0`, :math:`y''(0) = -1/3`). Differs from numpy's
    normalized ``np.sinc`` (:math:`\\sin(\\pi x)/(\\pi x)`).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.sinc(gh.Variable([0.0, 1.0])).d
        array([1.       , 0.841471], dtype=float32)
    """
    x = float_variable(as_variable(x))
    small = call("LessScalar", call("Abs", x), val=_SINC_SERIES)  # a constant mask
    zero = call("MulScalar", x, val=0.0)
    xs = call("Where", small, x, zero)  # the series' inputs, 0 elsewhere
    xl = call("Where", small, call("AddScalar", zero, val=1.0), x)  # sin(x)/x's, 1 elsewhere
    z = xs * xs
    series = call("AddScalar", call("MulScalar", z, val=_SINC_COEFFS[-1]), val=_SINC_COEFFS[-2])
    for c in reversed(_SINC_COEFFS[:-2]):
        series = call("AddScalar", series * z, val=c)
    return call("Where", small, series, call("Sin", xl) / xl)


def _sinc_ref(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return np.sinc(x / np.pi)


def _crelu_ref(x: np.ndarray, axis: int = 1) -> np.ndarray:
    return np.concatenate([np.maximum(x, 0.0), np.maximum(-x, 0.0)], axis=axis)


def _celu_ref(x: np.ndarray, alpha: float = 1.0, axis: int = 1) -> np.ndarray:
    return np.concatenate([_elu_np(x, alpha), _elu_np(-x, alpha)], axis=axis)


def _concat_samples(attrs: tuple[dict[str, Any], ...]) -> Any:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        for a in attrs:
            yield Sample((draw(rng, (2, 3), avoid=(0.0,)),), dict(a), name=f"(2,3) {a}")
        yield Sample((draw(rng, (2, 2, 2), avoid=(0.0,)),), {"axis": -1}, name="axis -1")
        yield Sample((draw(rng, (3, 2), avoid=(0.0,)).T,), {"axis": 0}, name="transposed")
        yield Sample((draw(rng, (0, 2), avoid=(0.0,)),), {"axis": 1}, name="size-0")

    return samples


def _sinc_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield from unary_samples(-4.0, 4.0)(rng)
    yield Sample((np.array([0.0, 0.05, -0.09, 0.1, -0.2]),), name="near 0")


# -- samples and references ----------------------------------------------------------------------


def _prelu_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample(
        (draw(rng, (2, 3), avoid=(0.0,)), rng.uniform(0.05, 0.5, (3,))), name="channel-wise"
    )
    yield Sample(
        (draw(rng, (2, 2, 2), avoid=(0.0,)), rng.uniform(0.05, 0.5, (2,))),
        {"base_axis": 1},
        name="channel-wise NCH",
    )
    yield Sample((draw(rng, (2, 3), avoid=(0.0,)), rng.uniform(0.05, 0.5, ())), name="shared 0-d")
    yield Sample(
        (draw(rng, (3, 2), avoid=(0.0,)).T, rng.uniform(0.05, 0.5, (1,))), name="shared, transposed"
    )
    yield Sample(
        (draw(rng, (2, 3), avoid=(0.0,)), rng.uniform(0.05, 0.5, (2,))),
        {"base_axis": 0},
        name="base_axis=0",
    )


def _prelu_ref(x: np.ndarray, w: np.ndarray, base_axis: int = 1) -> np.ndarray:
    w = np.asarray(w)
    if w.size > 1:
        w = w.reshape((-1,) + (1,) * (x.ndim - base_axis - 1))
    else:
        w = w.reshape(())
    return np.where(x > 0, x, w * x)


def _erf_np(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.vectorize(math.erf, otypes=[np.float64])(x))


def _sigmoid_np(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _elu_np(x: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0.0)))


# -- registration --------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register the activation functions."""
    f = register.function
    f(
        "ReLU",
        _relu,
        snake="relu",
        attrs={"inplace": False},
        rule=unary_rule(_relu_bw),
        fast_backward=_relu_fast,
        need_inputs=(),
        need_outputs=(0,),
        samples=unary_samples(avoid=(0.0,)),
        reference=lambda x, inplace=False: np.maximum(x, 0.0),
        elementwise=True,
        kinks=(0.0,),
        doc=r"""relu(x, inplace=False): the rectified linear unit :math:`y = \max(x, 0)` (nnabla).

    Gradient 1 for :math:`x > 0`, else 0, with the sub-gradient ``relu'(0) = 0`` (as PyTorch).
    ``inplace`` is accepted for nnabla compatibility and ignored (the input is never modified).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.relu(gh.Variable([-1.0, 0.0, 2.0])).d
        array([0., 0., 2.], dtype=float32)
    """,
    )
    f(
        "ReLU6",
        _relu6,
        snake="relu6",
        rule=formula_rule(_d_relu6),
        fast_backward=formula_fast(_d_relu6),
        need_inputs=(),
        need_outputs=(0,),
        samples=unary_samples(-2.0, 8.0, avoid=(0.0, 6.0)),
        reference=lambda x: np.minimum(np.maximum(x, 0.0), 6.0),
        elementwise=True,
        kinks=(0.0, 6.0),
        doc=r"""relu6(x): :math:`y = \min(\max(x, 0), 6)` (nnabla).

    Gradient 1 for :math:`0 < x < 6`, else 0 (0 at both kinks, as PyTorch).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.relu6(gh.Variable([-1.0, 3.0, 8.0])).d
        array([0., 3., 6.], dtype=float32)
    """,
    )
    f(
        "HardTanh",
        _hard_tanh,
        snake="hard_tanh",
        rule=formula_rule(_d_hard_tanh),
        fast_backward=formula_fast(_d_hard_tanh),
        need_inputs=(),
        need_outputs=(0,),
        samples=unary_samples(-2.0, 2.0, avoid=(-1.0, 1.0)),
        reference=lambda x: np.minimum(np.maximum(x, -1.0), 1.0),
        elementwise=True,
        kinks=(-1.0, 1.0),
        doc=r"""hard_tanh(x): :math:`y = \min(\max(x, -1), 1)` (nnabla).

    Gradient 1 for :math:`-1 < x < 1`, else 0 (0 at both kinks, as PyTorch's hardtanh).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.hard_tanh(gh.Variable([-3.0, 0.5, 2.0])).d
        array([-1. ,  0.5,  1. ], dtype=float32)
    """,
    )
    with_real_scalars(
        f(
            "ELU",
            _elu,
            snake="elu",
            attrs={"alpha": 1.0},
            rule=unary_rule(_elu_bw),
            fast_backward=unary_fast(_elu_fast),
            need_inputs=(0,),
            need_outputs=(),
            samples=_chain_attrs(avoid=(0.0,), attrs=({}, {"alpha": 0.5})),
            reference=_elu_np,
            elementwise=True,
            kinks=(0.0,),
            doc=_ELU_DOC,
        ),
        names=("alpha",),
    )

    c = register.composite
    c(
        "LeakyReLU",
        leaky_relu,
        snake="leaky_relu",
        elementwise=True,
        kinks=(0.0,),
        samples=_chain_attrs(avoid=(0.0,), attrs=({}, {"alpha": 0.3})),
        reference=lambda x, alpha=0.1, inplace=False: np.where(x > 0, x, alpha * x),
    )
    c(
        "SELU",
        selu,
        snake="selu",
        elementwise=True,
        kinks=(0.0,),
        samples=unary_samples(avoid=(0.0,)),
        reference=lambda x, scale=_SELU_SCALE, alpha=_SELU_ALPHA: scale * _elu_np(x, alpha),
    )
    c(
        "GELU",
        gelu,
        snake="gelu",
        elementwise=True,
        samples=_chain_attrs(lo=-3.0, hi=3.0, attrs=({}, {"approximate": "tanh"})),
        reference=_gelu_ref,
    )
    c(
        "Swish",
        swish,
        snake="swish",
        elementwise=True,
        samples=unary_samples(-3.0, 3.0),
        reference=lambda x: x * _sigmoid_np(x),
    )
    c(
        "SiLU",
        silu,
        snake="silu",
        elementwise=True,
        samples=unary_samples(-3.0, 3.0),
        reference=lambda x: x / (1.0 + np.exp(-x)),
    )
    c(
        "Softsign",
        softsign,
        snake="softsign",
        elementwise=True,
        kinks=(0.0,),
        samples=unary_samples(avoid=(0.0,)),
        reference=lambda x: x / (1.0 + np.abs(x)),
    )
    c(
        "LogSigmoid",
        log_sigmoid,
        snake="log_sigmoid",
        elementwise=True,
        samples=unary_samples(-4.0, 4.0),
        reference=lambda x: -np.log1p(np.exp(-x)),
    )
    c("PReLU", prelu, snake="prelu", samples=_prelu_samples, reference=_prelu_ref)
    f(
        "HardSigmoid",
        _hard_sigmoid,
        snake="hard_sigmoid",
        rule=formula_rule(_d_hard_sigmoid),
        fast_backward=formula_fast(_d_hard_sigmoid),
        need_inputs=(0,),
        need_outputs=(),
        samples=unary_samples(-3.5, 3.5, avoid=(-2.5, 2.5)),
        reference=lambda x: np.minimum(np.maximum(0.2 * x + 0.5, 0.0), 1.0),
        elementwise=True,
        kinks=(-2.5, 2.5),
        doc=_HARD_SIGMOID_DOC,
    )
    TANH_SHRINK.register(register)
    c("Sinc", sinc, snake="sinc", elementwise=True, samples=_sinc_samples, reference=_sinc_ref)
    c(
        "CELU",
        celu,
        snake="celu",
        kinks=(0.0,),
        samples=_concat_samples(({}, {"alpha": 0.5, "axis": 0})),
        reference=_celu_ref,
    )
    c(
        "CReLU",
        crelu,
        snake="crelu",
        kinks=(0.0,),
        samples=_concat_samples(({}, {"axis": 0})),
        reference=_crelu_ref,
    )


def _chain_attrs(
    attrs: tuple[dict[str, Any], ...], avoid: tuple[float, ...] = (), **bounds: float
) -> Any:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        for a in attrs:
            for s in unary_samples(avoid=avoid, attrs=a, **bounds)(rng):
                s.name = f"{s.name} {a}" if a else s.name
                yield s

    return samples
