"""Elementwise functions of the core: ``Pow2``, ``Abs``, ``Log``, ``Sign`` and ``EqualScalar``.

``Variable ** Variable`` dispatches to ``Pow2`` and ``abs(x)`` to ``Abs``; the others are what
their backward rules call (``Pow2``'s rule uses ``Log`` and ``EqualScalar``, ``Abs``'s uses
``Sign``), so that derivatives of any order of these operators need no plugin. Every rule is
written with registered functions; ``Sign`` and ``EqualScalar`` are not differentiable (their
outputs need no gradient).

The helpers :func:`unary_rule`, :func:`needs` and :func:`float_dtype` are public: gradhub-nn-ops'
elementwise functions are written with them too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..broadcasting import sum_to
from ..ops import call, with_real_scalars
from ..registry import Sample, ignore_arguments, one_input_fast
from .samples import binary_samples, unary_samples

Shape = tuple[int, ...]
RuleFn = Callable[..., list[Any]]


def unary_rule(fn: Callable[..., Any]) -> RuleFn:
    """A backward rule ``[fn(g, x, y, **attrs)]`` for a one-input, one-output function."""

    def rule(
        gy: Sequence[Any],
        ins: Sequence[Any],
        in_shapes: Sequence[Shape],
        outs: Sequence[Any],
        out_shapes: Sequence[Shape],
        **attrs: Any,
    ) -> list[Any]:
        return [fn(gy[0], ins[0], outs[0], **attrs)]

    rule.__name__ = getattr(fn, "__name__", "rule")
    return rule


def needs(v: Any) -> bool:
    """Whether the rule must compute a gradient for the input Variable ``v``."""
    return v is not None and v.need_grad


def float_dtype(xp: Any, *arrays: Any) -> Any:
    """The dtype of a mask computed from ``arrays``: their promoted floating dtype, else float32."""
    floats = [a.dtype for a in arrays if a.dtype.kind == "f"]
    return np.result_type(*floats) if floats else np.dtype(np.float32)


# -- Pow2 --------------------------------------------------------------------------------------


def _pow2(xp: Any, x0: Any, x1: Any) -> Any:
    return x0**x1


def _pow2_bw(
    gy: Sequence[Any],
    ins: Sequence[Any],
    in_shapes: Sequence[Shape],
    outs: Sequence[Any],
    out_shapes: Sequence[Shape],
) -> list[Any]:
    x0, x1 = ins
    g = gy[0]
    g0 = g1 = None
    if needs(x0):
        # d/dx0 = x1 x0^(x1 - 1), 0 where x1 == 0 (x0^0 is constant, as PyTorch); where also
        # x0 == 0 the power is taken with exponent 0 (x1 - 1 + [x1 == 0][x0 == 0]), not
        # 0 * 0^-1 = NaN. Elsewhere the exponent stays x1 - 1, so that the derivative of this
        # gradient in x1 is x0^(x1 - 1) (1 + x1 ln x0) = 1 / x0 at x1 == 0
        e = pow2_exponent(x0, x1)
        g0 = sum_to(g * x1 * call("Pow2", x0, e), in_shapes[0])
    if needs(x1):
        # d/dx1 = y ln x0; where x0 == 0 the log is taken of 1 instead (x0 + [x0 == 0], the mask
        # a constant), so the derivative there is 0 for x1 >= 0 (0**x1 is constant in x1, as
        # PyTorch) instead of 0 * -inf = NaN; for x1 < 0 it is inf * 0 = NaN (y = inf there)
        safe = x0 + call("EqualScalar", x0, val=0.0)
        g1 = sum_to(g * outs[0] * call("Log", safe), in_shapes[1])
    return [g0, g1]


def pow2_exponent(x0: Any, x1: Any) -> Any:
    """``x1 - 1``, with 0 where ``x0 == 0`` and ``x1 == 0`` (the masks are constants): the
    exponent of ``x0`` in ``Pow2``'s derivative in ``x0`` (its rule and its JVP rule)."""
    both = call("EqualScalar", x1, val=0.0) * call("EqualScalar", x0, val=0.0)
    return call("AddScalar", x1, val=-1.0) + both


_POW2_DOC = r"""pow2(x0, x1): elementwise power :math:`y = x_0^{x_1}` (broadcasting).

    ``Variable ** Variable`` dispatches here. :math:`\partial y/\partial x_0 = x_1 x_0^{x_1 - 1}`,
    :math:`\partial y/\partial x_1 = y \ln x_0` (``x0 > 0``), taken as 0 where ``x0 == 0`` and
    ``x1 >= 0`` (``0 ** x1`` does not depend on ``x1`` there; as PyTorch); the first is taken as
    0 where ``x1 == 0`` (also at ``x0 == 0``, as PyTorch).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.pow2(gh.Variable([2.0, 3.0]), gh.Variable([3.0, 2.0])).d
        array([8., 9.], dtype=float32)
    """

# -- Abs ---------------------------------------------------------------------------------------


def _abs_bw(g: Any, x: Any, y: Any) -> Any:
    return g * call("Sign", x, alpha=0.0)


def _abs_fast(xp: Any, g: Any, x: Any, y: Any) -> Any:
    return g * xp.sign(x)


_ABS_DOC = r"""abs(x): elementwise :math:`y = |x|`.

    Gradient :math:`\mathrm{sign}(x)`, with the sub-gradient 0 at ``x = 0`` (as PyTorch).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.abs(gh.Variable([-1.5, 2.0])).d
        array([1.5, 2. ], dtype=float32)
    """

# -- Log ---------------------------------------------------------------------------------------


def _log_bw(g: Any, x: Any, y: Any) -> Any:
    return g / x


_LOG_DOC = r"""log(x): elementwise natural logarithm, :math:`y = \ln x`; :math:`dy/dx = 1/x`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.log(gh.Variable([1.0])).d
        array([0.], dtype=float32)
    """

# -- Sign and EqualScalar (non-differentiable) --------------------------------------------------


def _sign(xp: Any, x: Any, alpha: float = 1.0) -> Any:
    dt = float_dtype(xp, x)
    s = xp.sign(x.astype(dt) if x.dtype.kind == "b" else x).astype(dt)
    if alpha != 0:
        s = xp.where(x == 0, dt.type(alpha), s).astype(dt, copy=False)
    return s


def _sign_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.integers(-2, 3, (3, 4)).astype(np.float64)
    yield Sample((x,), {"alpha": 1.0}, name="alpha=1")
    yield Sample((x,), {"alpha": 0.0}, name="alpha=0")
    yield Sample((np.array(0.0),), {"alpha": -1.0}, name="0-d")
    yield Sample((np.zeros((0,)),), {"alpha": 1.0}, name="size-0")


def _sign_ref(x: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    return np.where(x > 0, 1.0, np.where(x < 0, -1.0, alpha))


_SIGN_DOC = r"""sign(x, alpha=1.0): elementwise sign, ``alpha`` at 0 (nnabla).

    :math:`y = 1` for :math:`x > 0`, :math:`-1` for :math:`x < 0`, ``alpha`` for :math:`x = 0`.
    The result has the floating dtype of ``x`` (float32 for integer inputs). Non-differentiable
    here (nnabla's straight-through gradient is not used): the output needs no gradient.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.sign(gh.Variable([-2.0, 0.0, 3.0])).d
        array([-1.,  1.,  1.], dtype=float32)
        >>> F.sign(gh.Variable([-2.0, 0.0, 3.0]), alpha=0.0).d
        array([-1.,  0.,  1.], dtype=float32)
    """


def _equal_scalar(xp: Any, x0: Any, val: float = 1.0) -> Any:
    v = x0.dtype.type(val) if x0.dtype.kind == "f" else val
    return xp.equal(x0, v).astype(float_dtype(xp, x0))


def _equal_scalar_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.integers(-2, 3, (3, 4)).astype(np.float64),), {"val": 1.0}, name="(3,4)")
    yield Sample((np.array(0.5),), {"val": 0.5}, name="0-d tie")
    yield Sample((np.zeros((0, 2)),), {"val": 0.0}, name="size-0")
    yield Sample((rng.integers(-2, 3, (5,)),), {"val": 0}, name="int")


def _equal_scalar_ref(x0: np.ndarray, x1: Any = 1.0, val: float | None = None) -> np.ndarray:
    return np.asarray(np.equal(x0, x1 if val is None else val), dtype=np.float64)


_EQUAL_SCALAR_DOC = """equal_scalar(x0, val=1): elementwise ``x0 == val`` as 1.0 / 0.0.

    As in nnabla the result is floating, not bool: it has the dtype of ``x0`` (float32 for
    integer inputs). Non-differentiable: the output needs no gradient.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.equal_scalar(gh.Variable([1.0, 2.0, 3.0]), 2.0).d
        array([0., 1., 0.], dtype=float32)
    """


def register_functions(register: Any) -> None:
    """Register Pow2, Abs, Log, Sign and EqualScalar (provider ``gradhub``)."""
    f = register.function
    ignore_arguments(
        f(
            "Pow2",
            _pow2,
            inputs=("x0", "x1"),
            rule=_pow2_bw,
            need_inputs=(0, 1),
            need_outputs=(0,),
            samples=binary_samples(lo0=0.5, hi0=2.0),
            reference=np.power,
            elementwise=True,
            doc=_POW2_DOC,
        ),
        inplace=False,
    )  # nnabla's inplace: accepted and ignored
    f(
        "Abs",
        lambda xp, x: xp.abs(x),
        rule=unary_rule(_abs_bw),
        fast_backward=one_input_fast(_abs_fast),
        need_inputs=(0,),
        need_outputs=(),
        samples=unary_samples(avoid=(0.0,)),
        reference=np.abs,
        elementwise=True,
        kinks=(0.0,),
        doc=_ABS_DOC,
    )
    f(
        "Log",
        lambda xp, x: xp.log(x),
        snake="log",
        rule=unary_rule(_log_bw),
        fast_backward=one_input_fast(lambda xp, g, x, y: g / x),
        need_inputs=(0,),
        need_outputs=(),
        samples=unary_samples(0.2, 3),
        reference=np.log,
        elementwise=True,
        doc=_LOG_DOC,
    )
    with_real_scalars(
        f(
            "Sign",
            _sign,
            attrs={"alpha": 1.0},
            differentiable=False,
            samples=_sign_samples,
            reference=_sign_ref,
            elementwise=True,
            doc=_SIGN_DOC,
        ),
        ("alpha",),
    )
    with_real_scalars(
        f(
            "EqualScalar",
            _equal_scalar,
            inputs=("x0",),
            attrs={"val": 1.0},
            differentiable=False,
            samples=_equal_scalar_samples,
            reference=_equal_scalar_ref,
            elementwise=True,
            doc=_EQUAL_SCALAR_DOC,
        )
    )
