"""gradhub-nn-ops: elementwise math, arithmetic and comparison functions.

Every forward kernel is written against the array module ``xp`` of the device it runs on, and every
backward rule only calls registered functions, so that gradients are differentiable to any order.
Comparisons are non-differentiable: they return floating masks (nnabla style), which the rules of
``maximum2``, ``relu`` etc. use as constants. The functions the core's Variable operators need
(``Pow2``, ``Abs``, ``Log``, ``Sign``, ``EqualScalar``) are the core's own
(:mod:`gradhub.builtin.elementwise`).

The helpers at the top (axis checks, rule wrappers; the sample generators ``draw``,
``unary_samples``, ``binary_samples`` come from :mod:`gradhub.builtin.samples`) are shared by
the other modules of this part of the library (activations, reductions, losses).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

import numpy as np
from gradhub import Sample, as_variable
from gradhub.broadcasting import sum_to, sum_to_array
from gradhub.builtin.elementwise import float_dtype, needs, unary_rule
from gradhub.builtin.samples import BINARY_SHAPES, binary_samples, draw, unary_samples
from gradhub.jvp_rules import unary_jvp
from gradhub.memory import output_array
from gradhub.ops import call, replace_api, with_real_scalars
from gradhub.registry import SampleFn, one_input_fast

Shape = tuple[int, ...]
RuleFn = Callable[..., list[Any]]

# -- shared helpers ------------------------------------------------------------------------------


def is_scalar(v: Any) -> bool:
    """Whether ``v`` is a Python or numpy scalar number (not an array, not a Variable)."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
        v, (bool, np.bool_)
    )


def is_int(v: Any) -> bool:
    """Whether ``v`` is a Python or numpy integer (not a bool, not a float holding one)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def broadcasts_to(shape: Sequence[int], target: Sequence[int]) -> bool:
    """Whether an array of ``shape`` broadcasts to ``target`` unchanged: each of its axes is 1 or
    the target's size, counted from the last; the target may add leading axes."""
    return len(shape) <= len(target) and all(
        s in (1, n) for s, n in zip(reversed(shape), reversed(target))
    )


def float_input(x: Any) -> Any:
    """The array ``x`` itself when it is floating; integer and bool data converted to the floating
    dtype numpy's ufuncs compute them in (``np.result_type(dtype, np.float16)``: float16 for
    bool, int8 and uint8, float32 for int16 and uint16, float64 for wider integers).

    Called at the top of kernels whose result is defined in floating point (sigmoid, softplus,
    erf, logsumexp, average pooling...), so that integer inputs do not wrap around or overflow
    in the integer arithmetic. Floating inputs pay one ``dtype.kind`` test.
    """
    if x.dtype.kind in "biu":
        return x.astype(np.result_type(x.dtype, np.float16))
    return x


def whole_numbers(xp: Any, where: str, a: Any, what: str) -> Any:
    """``a`` as an integer array: integer arrays as they are; floating arrays (nnabla's
    ``nn.Variable`` is float32) cast to int64 when every value is a whole number.

    Raises a TypeError for other dtypes (bool included: True is no index) and a ValueError for
    non-integral or non-finite values (never truncated); both messages start with ``where``
    (``"embed: x0"``) and call the values integer ``what`` (``"ids"``, ``"labels"``).
    """
    kind = a.dtype.kind
    if kind in "iu":
        return a
    if kind != "f":
        raise TypeError(
            f"{where} must hold integer {what} (an integer dtype, or floats "
            f"holding whole numbers), got dtype {a.dtype}"
        )
    if a.size:
        # whole numbers small enough for int64 (NaN fails both comparisons, inf the second)
        ok = (xp.floor(a) == a) & (xp.abs(a) < 2.0**62)
        if not bool(ok.all()):
            bad = float(a[~ok].reshape(-1)[0])
            raise ValueError(
                f"{where} must hold integer {what} (whole numbers within the "
                f"int64 range), got the float value {bad}"
            )
    return a.astype(np.int64)


def floating_kernel(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """The array kernel ``kernel(xp, x, *args, **attrs)`` of a function defined in floating point
    whose reductions must not overflow: integer and bool ``x`` computed as :func:`float_input`
    converts it, float16 ``x`` computed in float32 and the result cast back to float16 (a float16
    sum of exponentials overflows past 65504), as PyTorch. Other inputs pay two dtype tests."""

    def run(xp: Any, x: Any, *args: Any, **attrs: Any) -> Any:
        x = float_input(x)
        if x.dtype == np.float16:
            return kernel(xp, x.astype(np.float32), *args, **attrs).astype(np.float16)
        return kernel(xp, x, *args, **attrs)

    run.__name__ = run.__qualname__ = kernel.__name__
    run.__doc__ = kernel.__doc__
    return run


def float_variable(x: Any) -> Any:
    """The Variable ``x`` itself when it is floating; integer and bool data ``Cast`` to the
    floating dtype of :func:`float_input` (for composites; such a Variable needs no gradient)."""
    if x.dtype.kind in "biu":
        return call("Cast", x, dtype=np.result_type(x.dtype, np.float16).name)
    return x


def int_arg(fn: str, arg: str, v: Any) -> int:
    """``v`` as a Python int; a bool or a non-integer raises TypeError naming ``fn`` and ``arg``
    (the nnabla-style functions' integer arguments: ``multiplier``, ``seed``, ``shape``...)."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{fn}: {arg} must be an int, got {v!r}")
    return int(v)


def axes_arg(fn: str, axes: Any, nd: int) -> tuple[int, ...]:
    """nnabla's ``axes`` argument: ``None`` is every axis; an int or a sequence of ints (negative
    from the end), returned sorted without repeats. An axis out of range raises ValueError."""
    if axes is None:
        return tuple(range(nd))
    vals = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    out = []
    for a in vals:
        a = int_arg(fn, "axes", a)
        if not -nd <= a < max(nd, 1):
            raise ValueError(f"{fn}: axis {a} is out of range for an input with {nd} dims")
        out.append(a % max(nd, 1))
    return tuple(sorted(set(out)))


def norm_axes(fname: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a sequence of ints) as a sorted tuple of non-negative axes.

    Raises ValueError naming the function and the argument when an axis is out of range or
    repeated.
    """
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        raw: tuple[Any, ...] = (axis,)
    else:
        try:
            raw = tuple(axis)
        except TypeError:
            raise TypeError(
                f"{fname}(): argument 'axis' must be None, an int or ints, got {axis!r}"
            ) from None
    out = []
    for a in raw:
        if not is_int(a):
            raise TypeError(
                f"{fname}(): argument 'axis' must be None, an int or ints, got {axis!r}"
            )
        if not -ndim <= a < ndim:
            raise ValueError(
                f"{fname}(): argument 'axis' {axis!r} is out of range for an input of ndim {ndim}"
            )
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}(): argument 'axis' {axis!r} repeats an axis")
    return tuple(sorted(out))


def norm_axis(fname: str, axis: Any, ndim: int, default_last: bool = True) -> int:
    """One axis (``None``: the last one, as nnabla's softmax), made non-negative and checked."""
    if axis is None and default_last:
        axis = ndim - 1
    if not is_int(axis):
        raise TypeError(f"{fname}(): argument 'axis' must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"{fname}(): argument 'axis' {axis} is out of range for an input of ndim {ndim}"
        )
    return int(axis) % ndim


def kept_shape(shape: Sequence[int], axes: Sequence[int]) -> Shape:
    """``shape`` with the reduced ``axes`` set to 1 (the keepdims shape)."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def to_kept(v: Any, shape: Sequence[int], axes: Sequence[int]) -> Any:
    """Reshape a reduction result (or its gradient) ``v`` to the keepdims shape."""
    k = kept_shape(shape, axes)
    return v if tuple(v.shape) == k else call("Reshape", v, shape=k)


def unary_fast(fn: Callable[..., Any]) -> RuleFn:
    """The array-level first-order rule ``[fn(xp, g, x, y, **attrs)]`` of a one-input function
    (:func:`gradhub.registry.one_input_fast`, which the engine calls without building lists)."""
    return one_input_fast(fn)


# -- one derivative formula for both rules -------------------------------------------------------


def _compare_op(name: str) -> Callable[[Any, Any], Any]:
    """``name(a, b)`` on Variables as the comparison function (``NameScalar`` for a number ``b``):
    a floating 1.0/0.0 mask, a constant for the rules."""
    scalar = name + "Scalar"

    def compare(a: Any, b: Any) -> Any:
        return call(scalar, a, val=b) if is_scalar(b) else call(name, a, b)

    compare.__name__ = compare.__qualname__ = name
    return compare


class VariableMath:
    """The names of the array module that derivative formulas use, applied to Variables.

    A derivative formula ``formula(F, g, x, y, **attrs)`` is written once, with ``F.cos(x)``,
    ``F.exp(x)`` and operators (``*``, ``+``, ``1.0 - v``, ``v ** -0.5``). Called with the array
    module ``xp`` as ``F`` on arrays it is the array-level first-order rule (:func:`formula_fast`);
    called with :data:`VARIABLE_MATH` on Variables it is the differentiable graph rule
    (:func:`formula_rule`), since every attribute here calls the registered function of that
    name and Variable operators with numbers call ``AddScalar``, ``MulScalar``, ``RDivScalar``,
    ``PowScalar``... (``1.0 - v`` calls ``Neg`` and ``AddScalar``). The comparisons return
    floating masks (numpy's return bools; multiplying a gradient by either gives the same array).

    Example::

        >>> import gradhub as gh
        >>> import numpy as np
        >>> from gradhub_nn_ops.math import VARIABLE_MATH
        >>> formula = lambda F, g, x, y: g * F.cos(x)
        >>> formula(np, np.ones(1), np.zeros(1), None)
        array([1.])
        >>> formula(VARIABLE_MATH, gh.Variable([1.0]), gh.Variable([0.0]), None).d
        array([1.], dtype=float32)
    """

    __slots__ = ()

    # partial objects (no descriptors, so no binding): ``F.cos(v)`` is ``call("Cos", v)`` with
    # no Python frame between
    sin = partial(call, "Sin")
    cos = partial(call, "Cos")
    tan = partial(call, "Tan")
    exp = partial(call, "Exp")
    log = partial(call, "Log")
    sqrt = partial(call, "Sqrt")
    sinh = partial(call, "Sinh")
    cosh = partial(call, "Cosh")
    tanh = partial(call, "Tanh")
    greater = staticmethod(_compare_op("Greater"))
    greater_equal = staticmethod(_compare_op("GreaterEqual"))
    less = staticmethod(_compare_op("Less"))
    less_equal = staticmethod(_compare_op("LessEqual"))


#: the namespace that makes a derivative formula a differentiable rule (see :class:`VariableMath`)
VARIABLE_MATH = VariableMath()


def formula_rule(formula: Callable[..., Any]) -> RuleFn:
    """The differentiable backward rule ``[formula(VARIABLE_MATH, g, x, y, **attrs)]`` of a
    one-input, one-output function whose derivative is written as a formula (see
    :class:`VariableMath`)."""
    ns = VARIABLE_MATH

    def rule(
        gy: Sequence[Any],
        ins: Sequence[Any],
        in_shapes: Sequence[Shape],
        outs: Sequence[Any],
        out_shapes: Sequence[Shape],
        **attrs: Any,
    ) -> list[Any]:
        return [formula(ns, gy[0], ins[0], outs[0], **attrs)]

    rule.__name__ = rule.__qualname__ = getattr(formula, "__name__", "rule")
    return rule


def formula_fast(formula: Callable[..., Any]) -> RuleFn:
    """The array-level first-order rule of the same formula: the engine calls
    ``formula(xp, g, x, y, **attrs)`` itself (:func:`gradhub.registry.one_input_fast`), so it
    costs what the formula's array operations cost."""
    return one_input_fast(formula)


def _plan_expression(fn: Callable[..., Any], *names: str | None) -> str | None:
    """``gradhub.expression.expression(fn, *names)`` (what ``traced(fn)`` would declare), its
    module imported when a plan first asks (at its code generation), not when the library is
    loaded."""
    from gradhub.expression import expression

    return expression(fn, *names)


class Elementwise:
    """One elementwise function of one input, as a record: everything it needs, by name.

    ``derivative(F, g, x, y, **attrs)`` is its derivative formula, the input's gradient from the
    output's gradient ``g``, written once for both rules (:class:`VariableMath`); ``uses`` says
    what it reads of the forward pass (``"x"``, ``"y"``, ``"xy"`` or ``""``), so that the graph
    keeps only that. ``domain`` is the interval the samples are drawn from (or ``samples`` the
    sample maker itself), ``reference`` an independent numpy implementation, ``doc`` the
    docstring of ``gradhub.functions.<snake>`` (``snake``: the name in lower case unless given).
    Optional: ``attrs`` the keyword attributes and their defaults, ``input`` the input's name,
    ``jvp=True`` registers the formula with the tangent for ``g`` as the forward-mode rule (the
    library's :mod:`~gradhub_nn_ops.jvp` otherwise derives it), ``expression=False`` keeps a plan
    from writing the kernel and formula inline (they are not single numpy expressions). Fields
    are keyword-only. (A plain class, not a dataclass: importing :mod:`dataclasses` would add to
    the start-up time.)
    """

    __slots__ = (
        "attrs",
        "derivative",
        "doc",
        "domain",
        "expression",
        "input",
        "jvp",
        "kernel",
        "name",
        "reference",
        "samples",
        "snake",
        "uses",
    )

    def __init__(
        self,
        *,
        name: str,
        kernel: Callable[..., Any],
        derivative: Callable[..., Any],
        uses: str,
        reference: Callable[..., Any],
        doc: str,
        domain: tuple[float, float] | None = None,
        samples: SampleFn | None = None,
        snake: str = "",
        attrs: dict[str, Any] | None = None,
        input: str = "x",
        jvp: bool = False,
        expression: bool = True,
    ) -> None:
        if set(uses) - {"x", "y"}:
            raise ValueError(
                f"Elementwise({name!r}): 'uses' must name 'x' and/or 'y', got {uses!r}"
            )
        if (domain is None) == (samples is None):
            raise ValueError(f"Elementwise({name!r}): give either 'domain' or 'samples'")
        self.name = name
        self.kernel = kernel
        self.derivative = derivative
        self.uses = uses
        self.reference = reference
        self.domain = domain
        self.samples = samples if samples is not None else unary_samples(*domain)  # type: ignore[misc]
        self.doc = doc
        self.snake = snake or name.lower()
        self.attrs = dict(attrs or {})
        self.input = input
        self.jvp = jvp
        self.expression = expression
        if getattr(derivative, "__name__", "") in ("<lambda>", ""):
            derivative.__name__ = derivative.__qualname__ = f"d_{self.snake}"

    def __repr__(self) -> str:
        return f"Elementwise(name={self.name!r}, uses={self.uses!r}, domain={self.domain!r})"

    def register(self, register: Any) -> Any:
        """Register the function with ``register.function`` (its FunctionDef). The kernel and
        the formula are marked as numpy expressions (:func:`gradhub.expression.traced`), which a
        plan writes inline where they are one (``xp.sin(x)``, ``g * xp.cos(x)``); the module is
        imported by the first plan that asks."""
        if self.expression:
            for fn in (self.kernel, self.derivative):
                fn.plan_expression = partial(_plan_expression, fn)  # type: ignore[attr-defined]
        tangent = None
        if self.jvp:
            derivative = self.derivative

            def tangent(t: Any, x: Any, y: Any, /, **attrs: Any) -> Any:
                return derivative(VARIABLE_MATH, t, x, y, **attrs)

            tangent.__name__ = f"d_{self.snake}"
        return register.function(
            self.name,
            self.kernel,
            snake=self.snake,
            inputs=(self.input,),
            attrs=self.attrs,
            rule=formula_rule(self.derivative),
            fast_backward=formula_fast(self.derivative),
            jvp=None if tangent is None else unary_jvp(tangent),
            need_inputs=(0,) if "x" in self.uses else (),
            need_outputs=(0,) if "y" in self.uses else (),
            samples=self.samples,
            reference=self.reference,
            elementwise=True,
            doc=self.doc,
        )


# -- elementwise math: forward kernels -----------------------------------------------------------

_SQRT_PI = math.sqrt(math.pi)
_ERF_SPLIT = 2.5  # series below, continued fraction above
_ERF_SERIES_TERMS = 36
_ERF_CF_TERMS = 28


def _erf(xp: Any, x: Any) -> Any:
    """erf(x) to about 1e-15 (relative), from ``xp`` operations only.

    For ``|x| < 2.5`` the series ``erf(a) = 2/sqrt(pi) exp(-a^2) sum_n 2^n a^(2n+1) / (2n+1)!!``
    (all terms positive, so no cancellation); above, ``erf(a) = 1 - erfc(a)`` with the continued
    fraction ``erfc(a) = exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...))))``.
    Integer and bool inputs are computed in floating point (:func:`float_input`).
    """
    x = float_input(x)
    a = xp.abs(x)
    s = xp.minimum(a, _ERF_SPLIT)
    z = s * s
    term = s
    total = s
    for n in range(_ERF_SERIES_TERMS):
        term = term * (z * (2.0 / (2 * n + 3)))
        total = total + term
    series = total * xp.exp(-z) * (2.0 / _SQRT_PI)
    c = xp.maximum(a, _ERF_SPLIT)
    f = c
    for k in range(_ERF_CF_TERMS, 0, -1):
        f = c + (k / 2.0) / f
    tail = 1.0 - xp.exp(-(c * c)) / (f * _SQRT_PI)
    r = xp.where(a < _ERF_SPLIT, series, tail)
    return xp.where(x < 0, -r, r).astype(r.dtype, copy=False)


def _sigmoid(xp: Any, x: Any) -> Any:
    x = float_input(x)
    e = xp.exp(-xp.abs(x))
    r = 1.0 / (1.0 + e)
    return xp.where(x >= 0, r, e * r)


def _softplus(xp: Any, x: Any, beta: float = 1.0) -> Any:
    if beta == 0:
        raise ValueError("softplus(): argument 'beta' must not be 0 (y = ln(1 + e^(bx)) / b)")
    x = float_input(x)
    bx = x * beta if beta != 1 else x
    y = xp.maximum(bx, 0) + xp.log1p(xp.exp(-xp.abs(bx)))
    return y / beta if beta != 1 else y


# -- softplus and atan2: graph rules and, beside them, the array rules --------------------------


def _softplus_bw(g: Any, x: Any, y: Any, beta: float = 1.0) -> Any:
    bx = x if beta == 1 else call("MulScalar", x, val=beta)
    return g * call("Sigmoid", bx)


def _softplus_fast(xp: Any, g: Any, x: Any, y: Any, beta: float = 1.0) -> Any:
    # the rule above on arrays (the array module has no sigmoid: the forward kernel computes it)
    return g * _sigmoid(xp, x * beta if beta != 1 else x)


def _atan2_bw(
    gy: Sequence[Any],
    ins: Sequence[Any],
    in_shapes: Sequence[Shape],
    outs: Sequence[Any],
    out_shapes: Sequence[Shape],
) -> list[Any]:
    # x1 / (x0^2 + x1^2) and -x0 / (...) with both scaled by s = max(|x0|, |x1|) first, so that
    # the squares neither underflow (inf for tiny inputs) nor overflow; the result does not
    # depend on s, so s's own (sub)gradient cancels at every order. NaN at (0, 0) (s = 0).
    x0, x1 = ins
    s = call("Maximum2", call("Abs", x0), call("Abs", x1))
    a, b = x0 / s, x1 / s
    r = gy[0] / (s * (a * a + b * b))
    g0 = sum_to(r * b, in_shapes[0]) if needs(x0) else None
    g1 = sum_to(-(r * a), in_shapes[1]) if needs(x1) else None
    return [g0, g1]


def _atan2_fast(xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any) -> list[Any]:
    # the rule above, on arrays
    x0, x1 = x
    s = xp.maximum(xp.abs(x0), xp.abs(x1))  # scaled as _atan2_bw (xp.hypot is slower)
    a, b = x0 / s, x1 / s
    r = gy[0] / (s * (a * a + b * b))
    return [sum_to_array(r * b, xs[0]), sum_to_array(-(r * a), xs[1])]


# -- elementwise math: the records ---------------------------------------------------------------

_TWO_OVER_SQRT_PI = 2.0 / _SQRT_PI


def _erf_ref(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.vectorize(math.erf, otypes=[np.float64])(x))


#: the one-input elementwise functions; each derivative formula is both the graph rule and the
#: array-level first-order rule (see :class:`VariableMath`)
ELEMENTWISE: tuple[Elementwise, ...] = (
    Elementwise(
        name="Sin",
        kernel=lambda xp, x: xp.sin(x),
        derivative=lambda F, g, x, y: g * F.cos(x),
        uses="x",
        reference=np.sin,
        domain=(-3, 3),
        doc=r"""sin(x): elementwise sine, :math:`y = \sin x`; :math:`dy/dx = \cos x`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.sin(gh.Variable([0.0])).d
        array([0.], dtype=float32)
    """,
    ),
    Elementwise(
        name="Cos",
        kernel=lambda xp, x: xp.cos(x),
        derivative=lambda F, g, x, y: -(g * F.sin(x)),
        uses="x",
        reference=np.cos,
        domain=(-3, 3),
        doc=r"""cos(x): elementwise cosine, :math:`y = \cos x`; :math:`dy/dx = -\sin x`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.cos(gh.Variable([0.0])).d
        array([1.], dtype=float32)
    """,
    ),
    Elementwise(
        name="Tan",
        kernel=lambda xp, x: xp.tan(x),
        derivative=lambda F, g, x, y: g * (y * y + 1.0),
        uses="y",
        reference=np.tan,
        domain=(-1.2, 1.2),
        doc=r"""tan(x): elementwise tangent, :math:`y = \tan x`; :math:`dy/dx = 1 + y^2`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.tan(gh.Variable([0.0])).d
        array([0.], dtype=float32)
    """,
    ),
    Elementwise(
        name="Exp",
        kernel=lambda xp, x: xp.exp(x),
        derivative=lambda F, g, x, y: g * y,
        uses="y",
        reference=np.exp,
        domain=(-2, 2),
        doc=r"""exp(x): elementwise exponential, :math:`y = e^x`; :math:`dy/dx = y`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.exp(gh.Variable([0.0, 1.0])).d
        array([1.      , 2.718282], dtype=float32)
    """,
    ),
    Elementwise(
        name="Sqrt",
        kernel=lambda xp, x: xp.sqrt(x),
        derivative=lambda F, g, x, y: g * (0.5 / y),
        uses="y",
        reference=np.sqrt,
        domain=(0.2, 3),
        doc=r"""sqrt(x): elementwise square root, :math:`y = \sqrt{x}`; :math:`dy/dx = 1/(2y)`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.sqrt(gh.Variable([4.0, 9.0])).d
        array([2., 3.], dtype=float32)
    """,
    ),
    Elementwise(
        name="Tanh",
        kernel=lambda xp, x: xp.tanh(x),
        derivative=lambda F, g, x, y: g * (1.0 - y * y),
        uses="y",
        reference=np.tanh,
        domain=(-2, 2),
        doc=r"""tanh(x): elementwise hyperbolic tangent; :math:`dy/dx = 1 - y^2`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.tanh(gh.Variable([0.0])).d
        array([0.], dtype=float32)
    """,
    ),
    Elementwise(
        name="Sigmoid",
        kernel=_sigmoid,
        derivative=lambda F, g, x, y: g * (y * (1.0 - y)),
        uses="y",
        reference=lambda x: 1.0 / (1.0 + np.exp(-x)),
        domain=(-3, 3),
        doc=r"""sigmoid(x): the logistic function :math:`y = 1 / (1 + e^{-x})`;
    :math:`dy/dx = y (1-y)`.

    Computed without overflow for large ``|x|``.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.sigmoid(gh.Variable([0.0])).d
        array([0.5], dtype=float32)
    """,
    ),
    Elementwise(
        name="Sinh",
        kernel=lambda xp, x: xp.sinh(x),
        derivative=lambda F, g, x, y: g * F.cosh(x),
        uses="x",
        reference=np.sinh,
        domain=(-2, 2),
        doc=r"""sinh(x): elementwise hyperbolic sine; :math:`dy/dx = \cosh x`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.sinh(gh.Variable([0.0])).d
        array([0.], dtype=float32)
    """,
    ),
    Elementwise(
        name="Cosh",
        kernel=lambda xp, x: xp.cosh(x),
        derivative=lambda F, g, x, y: g * F.sinh(x),
        uses="x",
        reference=np.cosh,
        domain=(-2, 2),
        doc=r"""cosh(x): elementwise hyperbolic cosine; :math:`dy/dx = \sinh x`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.cosh(gh.Variable([0.0])).d
        array([1.], dtype=float32)
    """,
    ),
    Elementwise(
        name="ASin",
        kernel=lambda xp, x: xp.arcsin(x),
        derivative=lambda F, g, x, y: g * (1.0 - x * x) ** -0.5,
        uses="x",
        reference=np.arcsin,
        domain=(-0.8, 0.8),
        doc=r"""asin(x): elementwise arcsine on [-1, 1]; :math:`dy/dx = 1/\sqrt{1 - x^2}`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.asin(gh.Variable([0.0])).d
        array([0.], dtype=float32)
    """,
    ),
    Elementwise(
        name="ACos",
        kernel=lambda xp, x: xp.arccos(x),
        derivative=lambda F, g, x, y: -(g * (1.0 - x * x) ** -0.5),
        uses="x",
        reference=np.arccos,
        domain=(-0.8, 0.8),
        doc=r"""acos(x): elementwise arccosine on [-1, 1]; :math:`dy/dx = -1/\sqrt{1 - x^2}`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.acos(gh.Variable([1.0])).d
        array([0.], dtype=float32)
    """,
    ),
    Elementwise(
        name="ATan",
        kernel=lambda xp, x: xp.arctan(x),
        derivative=lambda F, g, x, y: g * (1.0 / (x * x + 1.0)),
        uses="x",
        reference=np.arctan,
        domain=(-2, 2),
        doc=r"""atan(x): elementwise arctangent; :math:`dy/dx = 1/(1 + x^2)`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.atan(gh.Variable([0.0])).d
        array([0.], dtype=float32)
    """,
    ),
    Elementwise(
        name="ASinh",
        kernel=lambda xp, x: xp.arcsinh(x),
        derivative=lambda F, g, x, y: g * (x * x + 1.0) ** -0.5,
        uses="x",
        reference=lambda x: np.log(x + np.sqrt(x * x + 1.0)),
        domain=(-3, 3),
        doc=r"""asinh(x): elementwise inverse hyperbolic sine, :math:`y = \operatorname{arsinh} x
    = \ln(x + \sqrt{x^2 + 1})` (nnabla); :math:`dy/dx = 1/\sqrt{x^2 + 1}`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.asinh(gh.Variable([0.0, 1.0])).d
        array([0.       , 0.8813736], dtype=float32)
    """,
    ),
    Elementwise(
        name="ATanh",
        kernel=lambda xp, x: xp.arctanh(x),
        derivative=lambda F, g, x, y: g / ((1.0 - x) * (x + 1.0)),
        uses="x",
        reference=lambda x: 0.5 * np.log((1.0 + x) / (1.0 - x)),
        domain=(-0.8, 0.8),
        doc=r"""atanh(x): elementwise inverse hyperbolic tangent on :math:`(-1, 1)`,
    :math:`y = \operatorname{artanh} x = \frac12 \ln\frac{1 + x}{1 - x}` (nnabla);
    :math:`dy/dx = 1/((1 - x)(1 + x))`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.atanh(gh.Variable([0.0, 0.5])).d
        array([0.        , 0.54930615], dtype=float32)
    """,
    ),
    Elementwise(
        name="Erf",
        kernel=_erf,
        derivative=lambda F, g, x, y: g * (F.exp(-(x * x)) * _TWO_OVER_SQRT_PI),
        uses="x",
        reference=_erf_ref,
        domain=(-3.5, 3.5),
        doc=r"""erf(x): the error function :math:`y = \frac{2}{\sqrt\pi}\int_0^x e^{-t^2} dt`;
    :math:`dy/dx = \frac{2}{\sqrt\pi} e^{-x^2}`.

    Computed with array operations only (a positive series for ``|x| < 2.5``, a continued
    fraction of erfc above), accurate to about 1e-15 in float64, on every device.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.erf(gh.Variable([0.0, 10.0])).d
        array([0., 1.], dtype=float32)
    """,
    ),
    Elementwise(
        name="Log1p",
        kernel=lambda xp, x: xp.log1p(x),
        derivative=lambda F, g, x, y: g / (x + 1.0),
        uses="x",
        reference=np.log1p,
        domain=(-0.8, 2),
        doc=r"""log1p(x): :math:`y = \ln(1 + x)`, accurate for small ``x``; :math:`dy/dx = 1/(1+x)`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.log1p(gh.Variable([0.0])).d
        array([0.], dtype=float32)
    """,
    ),
    Elementwise(
        name="Expm1",
        kernel=lambda xp, x: xp.expm1(x),
        derivative=lambda F, g, x, y: g * (y + 1.0),
        uses="y",
        reference=np.expm1,
        domain=(-2, 2),
        doc=r"""expm1(x): :math:`y = e^x - 1`, accurate for small ``x``; :math:`dy/dx = y + 1`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.expm1(gh.Variable([0.0])).d
        array([0.], dtype=float32)
    """,
    ),
)


#: acosh, registered beside ELEMENTWISE but outside it: its domain is [1, inf), while the
#: tests that run every ELEMENTWISE formula draw inputs inside (0.2, 0.8)
ACOSH = Elementwise(
    name="ACosh",
    kernel=lambda xp, x: xp.arccosh(x),
    derivative=lambda F, g, x, y: g * ((x - 1.0) * (x + 1.0)) ** -0.5,
    uses="x",
    reference=lambda x: np.log(x + np.sqrt(x * x - 1.0)),
    domain=(1.2, 3),
    doc=r"""acosh(x): elementwise inverse hyperbolic cosine on :math:`[1, \infty)`,
:math:`y = \operatorname{arcosh} x = \ln(x + \sqrt{x^2 - 1})` (nnabla);
:math:`dy/dx = 1/\sqrt{(x - 1)(x + 1)}` (infinite at :math:`x = 1`, as nnabla).

Example::

    >>> import gradhub as gh
    >>> import gradhub.functions as F
    >>> F.acosh(gh.Variable([1.0, 2.0])).d
    array([0.      , 1.316958], dtype=float32)
""",
)

_SOFTPLUS_DOC = r"""softplus(x, beta=1.0): :math:`y = \frac{1}{\beta}\ln(1 + e^{\beta x})` (nnabla).

    :math:`dy/dx = \mathrm{sigmoid}(\beta x)`. Computed as
    :math:`\max(\beta x, 0) + \ln(1 + e^{-|\beta x|})` (divided by beta), so it never overflows.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.softplus(gh.Variable([0.0]), beta=2.0).d
        array([0.3465736], dtype=float32)
    """

_ATAN2_DOC = r"""atan2(x0, x1): elementwise :math:`\arctan(x_0 / x_1)` in the right quadrant.

    Broadcasting. :math:`\partial y/\partial x_0 = x_1/(x_0^2 + x_1^2)`,
    :math:`\partial y/\partial x_1 = -x_0/(x_0^2 + x_1^2)`, computed with the inputs scaled by
    the larger magnitude first, so the squares neither underflow nor overflow (finite for tiny
    and huge inputs); not differentiable at (0, 0) (NaN there).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.atan2(gh.Variable([1.0]), gh.Variable([0.0])).d
        array([1.5707964], dtype=float32)
    """

# -- arithmetic ----------------------------------------------------------------------------------


def _r_sub_scalar(xp: Any, x: Any, val: float = 1.0) -> Any:
    return (x.dtype.type(val) if x.dtype.kind == "f" else val) - x


def _d_r_sub_scalar(F: Any, g: Any, x: Any, y: Any, val: float = 1.0) -> Any:
    return -g


#: who gets the gradient of Maximum2/Minimum2 at a tie (attribute ``ties``)
BINARY_TIES = {"split": 0.5, "first": 1.0, "second": 0.0}


def max_mask(x0: Any, x1: Any, greater: str, ties: str = "split") -> Any:
    """The share of ``x0`` in the gradient of Maximum2 (``greater="Greater"``) or Minimum2
    (``"Less"``): 1 where x0 wins, 0 where x1 wins, at ties 1/2 (``ties="split"``), 1
    (``"first"``) or 0 (``"second"``). A constant: built from comparisons."""
    share = BINARY_TIES[ties]
    if share == 0.0:
        return call(greater, x0, x1)
    return call(greater, x0, x1) + call("MulScalar", call("Equal", x0, x1), val=share)


def _check_binary_ties(fname: str, ties: Any) -> None:
    if ties not in BINARY_TIES:
        raise ValueError(f"{fname}(): ties must be one of {tuple(BINARY_TIES)}, got {ties!r}")


def _binary_select_rule(greater: str) -> RuleFn:
    def rule(
        gy: Sequence[Any],
        ins: Sequence[Any],
        in_shapes: Sequence[Shape],
        outs: Sequence[Any],
        out_shapes: Sequence[Shape],
        ties: str = "split",
    ) -> list[Any]:
        x0, x1 = ins
        g = gy[0]
        g0 = g * max_mask(x0, x1, greater, ties)
        return [
            sum_to(g0, in_shapes[0]) if needs(x0) else None,
            sum_to(g - g0, in_shapes[1]) if needs(x1) else None,
        ]

    return rule


def _binary_select_fast(greater: str) -> RuleFn:
    def fast(xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any, ties: str = "split") -> list[Any]:
        x0, x1 = x
        g = gy[0]
        m = getattr(xp, greater)(x0, x1) + BINARY_TIES[ties] * (x0 == x1)
        g0 = g * m.astype(g.dtype, copy=False)
        return [sum_to_array(g0, xs[0]), sum_to_array(g - g0, xs[1])]

    return fast


def _maximum2(xp: Any, x0: Any, x1: Any, ties: str = "split") -> Any:
    _check_binary_ties("maximum2", ties)
    return xp.maximum(x0, x1)


def _minimum2(xp: Any, x0: Any, x1: Any, ties: str = "split") -> Any:
    _check_binary_ties("minimum2", ties)
    return xp.minimum(x0, x1)


def _maximum_scalar(xp: Any, x: Any, val: float = 1.0) -> Any:
    return xp.maximum(x, x.dtype.type(val) if x.dtype.kind == "f" else val)


def _minimum_scalar(xp: Any, x: Any, val: float = 1.0) -> Any:
    return xp.minimum(x, x.dtype.type(val) if x.dtype.kind == "f" else val)


def _d_maximum_scalar(F: Any, g: Any, x: Any, y: Any, val: float = 1.0) -> Any:
    return g * F.greater_equal(x, val)


def _d_minimum_scalar(F: Any, g: Any, x: Any, y: Any, val: float = 1.0) -> Any:
    return g * F.less_equal(x, val)


def _where(xp: Any, condition: Any, x_true: Any, x_false: Any) -> Any:
    return xp.where(condition, x_true, x_false)


def _where_bw(
    gy: Sequence[Any],
    ins: Sequence[Any],
    in_shapes: Sequence[Shape],
    outs: Sequence[Any],
    out_shapes: Sequence[Shape],
) -> list[Any]:
    cond = ins[0]
    g = gy[0]
    gt = call("Where", cond, g, call("MulScalar", g, val=0.0))
    return [None, sum_to(gt, in_shapes[1]), sum_to(g - gt, in_shapes[2])]


def _where_fast(xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any) -> list[Any]:
    g = gy[0]
    gt = xp.where(x[0], g, 0)
    return [None, sum_to_array(gt, xs[1]), sum_to_array(g - gt, xs[2])]


def _check_bounds(fname: str, lo: Any, hi: Any) -> None:
    for arg, v in (("min", lo), ("max", hi)):
        if v is not None and not is_scalar(v):
            raise TypeError(f"{fname}(): argument {arg!r} must be a number or None, got {v!r}")
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"{fname}(): argument 'min' ({lo}) is larger than 'max' ({hi})")


def _clip(xp: Any, x: Any, min: Any = None, max: Any = None) -> Any:
    _check_bounds("clip", min, max)
    if min is None and max is None:
        return x.copy()
    t = x.dtype.type if x.dtype.kind == "f" else (lambda v: v)
    y = x if min is None else xp.maximum(x, t(min))
    return y if max is None else xp.minimum(y, t(max))


def _d_clip(F: Any, g: Any, x: Any, y: Any, min: Any = None, max: Any = None) -> Any:
    if min is None and max is None:
        return g
    if min is None:
        return g * F.less_equal(x, max)
    if max is None:
        return g * F.greater_equal(x, min)
    return g * (F.greater_equal(x, min) * F.less_equal(x, max))


# -- comparisons (non-differentiable) ------------------------------------------------------------


def _compare(op: str) -> Callable[..., Any]:
    def kernel(xp: Any, x0: Any, x1: Any) -> Any:
        return getattr(xp, op)(x0, x1).astype(float_dtype(xp, x0, x1))

    return kernel


def _compare_scalar(op: str) -> Callable[..., Any]:
    def kernel(xp: Any, x0: Any, val: float = 1.0) -> Any:
        v = x0.dtype.type(val) if x0.dtype.kind == "f" else val
        mask = getattr(xp, op)(x0, v)
        # the 0/1 floats in a recycled array (gradhub.memory): a fresh one cost ReLU's mask in
        # W4's recorded backward 448 page faults per step at c315099
        out = output_array(xp, mask.shape, float_dtype(xp, x0))
        xp.copyto(out, mask)
        return out

    return kernel


class Comparison:
    """One comparison, as a record: it registers ``name`` (two broadcasting inputs) and, unless
    ``scalar=False``, ``name + "Scalar"`` (an input and a number ``val``), both
    non-differentiable, with the numpy ``reference``, the operator ``symbol`` for the docs and the
    result of the docs' ``example`` (``[1, 2, 3] symbol [2, 2, 2]``, and the same with 2)."""

    __slots__ = ("example", "name", "reference", "scalar", "snake", "symbol")

    def __init__(
        self,
        *,
        name: str,
        snake: str,
        reference: Callable[..., Any],
        symbol: str,
        example: str,
        scalar: bool = True,
    ) -> None:
        self.name = name
        self.snake = snake
        self.reference = reference
        self.symbol = symbol
        self.example = example
        #: whether to register ``name + "Scalar"`` too (False: the core has it)
        self.scalar = scalar

    def register(self, register: Any) -> None:
        """Register both functions with ``register.function``."""
        fmt = {"snake": self.snake, "sym": self.symbol, "example": self.example}
        register.function(
            self.name,
            _compare(self.snake),
            inputs=("x0", "x1"),
            differentiable=False,
            samples=_compare_samples,
            reference=_float_ref(self.reference),
            elementwise=True,
            doc=_COMPARE_DOC.format(**fmt),
        )
        if not self.scalar:
            return
        with_real_scalars(
            register.function(
                self.name + "Scalar",
                _compare_scalar(self.snake),
                inputs=("x0",),
                attrs={"val": 1.0},
                differentiable=False,
                samples=_compare_scalar_samples,
                reference=_float_ref(self.reference),
                elementwise=True,
                doc=_COMPARE_SCALAR_DOC.format(**fmt),
            )
        )


COMPARISONS: tuple[Comparison, ...] = (
    Comparison(
        name="Greater", snake="greater", reference=np.greater, symbol=">", example="[0., 0., 1.]"
    ),
    Comparison(
        name="GreaterEqual",
        snake="greater_equal",
        reference=np.greater_equal,
        symbol=">=",
        example="[0., 1., 1.]",
    ),
    Comparison(name="Less", snake="less", reference=np.less, symbol="<", example="[1., 0., 0.]"),
    Comparison(
        name="LessEqual",
        snake="less_equal",
        reference=np.less_equal,
        symbol="<=",
        example="[1., 1., 0.]",
    ),
    # EqualScalar is the core's (Pow2's rule uses it)
    Comparison(
        name="Equal",
        snake="equal",
        reference=np.equal,
        symbol="==",
        example="[0., 1., 0.]",
        scalar=False,
    ),
    Comparison(
        name="NotEqual",
        snake="not_equal",
        reference=np.not_equal,
        symbol="!=",
        example="[1., 0., 1.]",
    ),
)

_COMPARE_DOC = """{snake}(x0, x1): elementwise ``x0 {sym} x1`` as 1.0 / 0.0 (broadcasting).

    As in nnabla the result is floating, not bool: its dtype is the promoted floating dtype of the
    inputs (float32 when neither is floating), so it can multiply a gradient directly.
    Non-differentiable: the output needs no gradient.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.{snake}(gh.Variable([1.0, 2.0, 3.0]), gh.Variable([2.0, 2.0, 2.0])).d
        array({example}, dtype=float32)
    """

_COMPARE_SCALAR_DOC = """{snake}_scalar(x0, val=1): elementwise ``x0 {sym} val`` as 1.0 / 0.0.

    As in nnabla the result is floating, not bool: it has the dtype of ``x0`` (float32 for
    integer inputs). Non-differentiable: the output needs no gradient.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.{snake}_scalar(gh.Variable([1.0, 2.0, 3.0]), 2.0).d
        array({example}, dtype=float32)
    """


def _compare_samples(rng: np.random.Generator) -> Iterator[Sample]:
    # integer-valued floats, so that ties (the interesting case) occur
    for s0, s1 in BINARY_SHAPES:
        a = rng.integers(-2, 3, s0).astype(np.float64)
        yield Sample((a, rng.integers(-2, 3, s1).astype(np.float64)), name=f"{s0}x{s1}")
    yield Sample((rng.integers(-2, 3, (4,)), rng.integers(-2, 3, (4,))), name="int")


def _compare_scalar_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.integers(-2, 3, (3, 4)).astype(np.float64),), {"val": 1.0}, name="(3,4)")
    yield Sample((np.array(0.5),), {"val": 0.5}, name="0-d tie")
    yield Sample((np.zeros((0, 2)),), {"val": 0.0}, name="size-0")
    yield Sample((rng.integers(-2, 3, (5,)),), {"val": 0}, name="int")


# -- rounding, NaN/inf tests, logical operations, mod2 (nnabla) ----------------------------------


def _round_half_away(xp: Any, x: Any) -> Any:
    """Round to the nearest integer, halves away from zero (C's ``round``, as nnabla; numpy's
    ``round`` takes halves to the even neighbour). ``x - trunc(x)`` is exact, so no half is
    misjudged."""
    if x.dtype.kind in "biu":
        return x.copy()
    finite = xp.isfinite(x)
    xf = xp.where(finite, x, x.dtype.type(0))  # inf - inf would be NaN (and warn)
    t = xp.trunc(xf)
    r = xp.where(xp.abs(xf - t) >= 0.5, t + xp.sign(xf), t)
    return xp.where(finite, r, x)


def _integral(op: str) -> Callable[..., Any]:
    def kernel(xp: Any, x: Any) -> Any:
        if x.dtype.kind in "biu":
            return x.copy()
        return getattr(xp, op)(x)

    kernel.__name__ = kernel.__qualname__ = f"_{op}"
    return kernel


def _round_ref(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))


def _rounding_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.0, -0.0]),), name="halves")
    yield Sample((draw(rng, (2, 3), -3.0, 3.0),), name="(2,3)")
    yield Sample((draw(rng, (), -3.0, 3.0),), name="0-d")
    yield Sample((np.zeros((0, 3)),), name="size-0")
    yield Sample((draw(rng, (3, 2), -3.0, 3.0).T,), name="transposed")
    yield Sample((np.array([np.nan, np.inf, -np.inf, 1e30]),), name="non-finite")
    yield Sample((rng.integers(-3, 4, (4,)),), name="int")


_ROUNDING_DOC = r"""{snake}(x): elementwise {what}, :math:`y = {formula}` (nnabla).

    Non-differentiable in gradhub, as ``sign``: the output needs no gradient, so a loss reached
    only through it has no gradient with respect to ``x`` (PyTorch's ``torch.{snake}`` gives
    zero gradients; the derivative is 0 wherever it exists). nnabla's ``F.{snake}`` passes
    the gradient straight through (:math:`dy/dx = 1`); ``gradhub_compat.nnabla.functions``
    does that. Integer inputs are returned unchanged.{extra}

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.{snake}(gh.Variable([-1.5, 0.5, 1.2])).d
        array({example}, dtype=float32)
    """


def _nonfinite_test(op: str) -> Callable[..., Any]:
    def kernel(xp: Any, x0: Any) -> Any:
        return getattr(xp, op)(x0).astype(float_dtype(xp, x0))

    kernel.__name__ = kernel.__qualname__ = f"_{op}"
    return kernel


def _nonfinite_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((np.array([np.nan, np.inf, -np.inf, 1.0, -2.0, 0.0]),), name="mixed")
    yield Sample((draw(rng, (2, 3)),), name="finite")
    yield Sample((np.array(np.nan),), name="0-d")
    yield Sample((np.zeros((0, 2)),), name="size-0")
    yield Sample((rng.integers(-2, 3, (3,)),), name="int")


def _reset(op: str) -> Callable[..., Any]:
    def kernel(xp: Any, x0: Any, val: float = 0.0) -> Any:
        if x0.dtype.kind != "f":
            return x0.copy()
        return xp.where(getattr(xp, op)(x0), x0.dtype.type(val), x0)

    kernel.__name__ = kernel.__qualname__ = f"_reset_{op}"
    return kernel


def _reset_rule(test: str) -> RuleFn:
    def d_reset(g: Any, x: Any, y: Any, val: float = 0.0) -> Any:
        # 1 where x is kept, 0 where it was replaced by the constant val; a constant mask
        return g * call("LogicalNot", call(test, x))

    return unary_rule(d_reset)


def _reset_fast(op: str) -> RuleFn:
    def d_reset(xp: Any, g: Any, x: Any, y: Any, val: float = 0.0) -> Any:
        return xp.where(getattr(xp, op)(x), g.dtype.type(0), g)

    return unary_fast(d_reset)


def _reset_samples(bad: float) -> SampleFn:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        yield from unary_samples(attrs={"val": 0.0})(rng)
        x = draw(rng, (2, 3))
        x[0, 1] = x[1, 2] = bad
        yield Sample((x,), {"val": 5.0}, name=f"with {bad}")
        yield Sample((np.array([bad, 1.0]),), {"val": -1.0}, grad_inputs=(), name="0-d")

    return samples


def _reset_ref(test: Callable[..., Any]) -> Callable[..., Any]:
    def ref(x0: np.ndarray, val: float = 0.0) -> np.ndarray:
        x0 = np.asarray(x0)
        return np.where(test(x0), val, x0) if x0.dtype.kind == "f" else x0

    return ref


_RESET_DOC = r"""reset_{what}(x0, val=0): ``x0`` with every {which} replaced by ``val`` (nnabla).

    :math:`y = \mathrm{{val}}` where :math:`x` is {which}, else :math:`x`. The gradient passes
    where ``x0`` is kept and is 0 where it was replaced (a constant), as nnabla's backward.

    Example::

        >>> import numpy as np
        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.reset_{what}(gh.Variable(np.array([1.0, {bad}, -2.0])), val=5.0).d
        array([ 1.,  5., -2.], dtype=float32)
    """


def _logical(op: str) -> Callable[..., Any]:
    def kernel(xp: Any, x0: Any, x1: Any) -> Any:
        return getattr(xp, op)(x0, x1).astype(float_dtype(xp, x0, x1))

    kernel.__name__ = kernel.__qualname__ = f"_{op}"
    return kernel


def _logical_scalar(op: str) -> Callable[..., Any]:
    def kernel(xp: Any, x0: Any, val: Any = None) -> Any:
        if val is None:
            raise TypeError(f"{op}_scalar(): missing the argument 'val' (a bool)")
        return getattr(xp, op)(x0, bool(val)).astype(float_dtype(xp, x0))

    kernel.__name__ = kernel.__qualname__ = f"_{op}_scalar"
    return kernel


def _logical_not(xp: Any, x0: Any) -> Any:
    return xp.logical_not(x0).astype(float_dtype(xp, x0))


def _logical_samples(rng: np.random.Generator) -> Iterator[Sample]:
    # small integers as floats, so that zeros (false) occur
    for s0, s1 in BINARY_SHAPES:
        a = rng.integers(-1, 2, s0).astype(np.float64)
        yield Sample((a, rng.integers(-1, 2, s1).astype(np.float64)), name=f"{s0}x{s1}")
    yield Sample((rng.integers(-1, 2, (4,)), rng.random(4) < 0.5), name="int and bool")


def _logical_scalar_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for val in (True, False):
        yield Sample((rng.integers(-1, 2, (3, 4)).astype(np.float64),), {"val": val}, name=f"{val}")
    yield Sample((np.array(0.0),), {"val": True}, name="0-d")
    yield Sample((np.zeros((0, 2)),), {"val": True}, name="size-0")
    yield Sample((rng.integers(-1, 2, (5,)),), {"val": 1}, name="int")


def _logical_ref(op: Callable[..., Any]) -> Callable[..., Any]:
    def ref(x0: np.ndarray, x1: Any = None, val: Any = None) -> np.ndarray:
        other = bool(val) if x1 is None else x1
        return np.asarray(op(x0, other), dtype=np.float64)

    return ref


class Logical:
    """One logical operation, as a record: it registers ``name`` (two broadcasting inputs) and
    ``name + "Scalar"`` (an input and a bool ``val``), non-differentiable, with 1.0/0.0 results
    in the inputs' floating dtype (float32 for others), as nnabla; ``example`` is the result of
    the docs' ``[0, 0, 1, 2] op [0, 3, 0, 1]``, ``scalar_example`` of ``[0, 0, 1, 2] op True``."""

    __slots__ = ("example", "scalar_example", "snake", "symbol")

    def __init__(self, *, snake: str, symbol: str, example: str, scalar_example: str) -> None:
        self.snake = snake
        self.symbol = symbol
        self.example = example
        self.scalar_example = scalar_example

    def register(self, register: Any) -> None:
        """Register both functions with ``register.function``."""
        name = "Logical" + self.snake.capitalize()
        op = "logical_" + self.snake
        ref = getattr(np, op)
        fmt = {"op": op, "sym": self.symbol}
        register.function(
            name,
            _logical(op),
            snake=op,
            inputs=("x0", "x1"),
            differentiable=False,
            samples=_logical_samples,
            reference=_logical_ref(ref),
            elementwise=True,
            doc=_LOGICAL_DOC.format(example=self.example, **fmt),
        )
        register.function(
            name + "Scalar",
            _logical_scalar(op),
            snake=op + "_scalar",
            inputs=("x0",),
            attrs={"val": None},
            differentiable=False,
            samples=_logical_scalar_samples,
            reference=_logical_ref(ref),
            elementwise=True,
            doc=_LOGICAL_SCALAR_DOC.format(example=self.scalar_example, **fmt),
        )


LOGICALS: tuple[Logical, ...] = (
    Logical(
        snake="and", symbol="and", example="[0., 0., 0., 1.]", scalar_example="[0., 0., 1., 1.]"
    ),
    Logical(snake="or", symbol="or", example="[0., 1., 1., 1.]", scalar_example="[1., 1., 1., 1.]"),
    Logical(
        snake="xor", symbol="xor", example="[0., 1., 1., 0.]", scalar_example="[1., 1., 0., 0.]"
    ),
)

_LOGICAL_DOC = """{op}(x0, x1): elementwise ``(x0 != 0) {sym} (x1 != 0)`` as 1.0 / 0.0 (nnabla;
    broadcasting).

    As in nnabla the result is floating: the promoted floating dtype of the inputs (float32 when
    neither is floating). Non-differentiable: the output needs no gradient.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.{op}(gh.Variable([0.0, 0.0, 1.0, 2.0]), gh.Variable([0.0, 3.0, 0.0, 1.0])).d
        array({example}, dtype=float32)
    """

_LOGICAL_SCALAR_DOC = """{op}_scalar(x0, val): elementwise ``(x0 != 0) {sym} val`` as 1.0 / 0.0
    (nnabla; ``val`` a bool).

    The result has the dtype of ``x0`` (float32 for integer inputs). Non-differentiable.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.{op}_scalar(gh.Variable([0.0, 0.0, 1.0, 2.0]), True).d
        array({example}, dtype=float32)
    """


def _mod2(xp: Any, x0: Any, x1: Any, fmod: bool = False) -> Any:
    if fmod or x0.dtype.kind == "f":
        return xp.fmod(x0, x1)
    return xp.mod(x0, x1)


def _mod2_ref(x0: np.ndarray, x1: np.ndarray, fmod: bool = False) -> np.ndarray:
    if fmod or np.asarray(x0).dtype.kind == "f":
        return np.asarray(np.vectorize(math.fmod, otypes=[np.float64])(x0, x1))
    return np.mod(x0, x1)


def _mod2_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for s0, s1 in BINARY_SHAPES:
        b = rng.uniform(0.5, 2.0, s1) * rng.choice([-1.0, 1.0], s1)
        yield Sample((draw(rng, s0, -5.0, 5.0), b), name=f"{s0}x{s1}")
    a, b = np.array([5, -5, 5, -5]), np.array([3, 3, -3, -3])
    yield Sample((a, b), name="int (numpy.mod)")
    yield Sample((a, b), {"fmod": True}, name="int, fmod")


_MOD2_DOC = r"""mod2(x0, x1, fmod=False): the elementwise remainder (nnabla; broadcasting).

    ``numpy.fmod(x0, x1)`` (the sign of ``x0``) when ``x0`` is floating or ``fmod`` is True,
    else ``numpy.mod(x0, x1)`` (the sign of ``x1``), as nnabla. Non-differentiable, as nnabla's
    (whose backward is not implemented): the output needs no gradient.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.mod2(gh.Variable([5.5, -5.5]), gh.Variable([2.0, 2.0])).d
        array([ 1.5, -1.5], dtype=float32)
    """


_ADD_N_DOC = """add_n(*x): the elementwise sum :math:`y = x_0 + \\dots + x_{n-1}` (nnabla).

    The inputs broadcast (nnabla requires equal shapes); the gradient of each input is the
    incoming gradient (summed over its broadcast axes). One input gives a copy, a new node as
    nnabla's. A list or tuple of inputs is accepted too.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.add_n(gh.Variable([1.0, 2.0]), gh.Variable([3.0, 4.0]), gh.Variable([5.0, 6.0])).d
        array([ 9., 12.], dtype=float32)
    """

_MUL_N_DOC = """mul_n(*x): the elementwise product :math:`y = x_0 \\cdots x_{n-1}` (nnabla).

    The inputs broadcast; the gradient of :math:`x_i` is the incoming gradient times the
    product of the other inputs, also where an input is 0 (nnabla 1.39 divides the output by
    :math:`x_i` and gives NaN there). A list or tuple of inputs is accepted too.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.mul_n(gh.Variable([1.0, 2.0]), gh.Variable([3.0, 4.0]), gh.Variable([5.0, 6.0])).d
        array([15., 48.], dtype=float32)
    """


def _n_ary(op: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def kernel(xp: Any, *xs: Any) -> Any:
        y = xs[0]
        for v in xs[1:]:
            y = op(y, v)
        return xp.array(y, copy=True) if len(xs) == 1 else y

    return kernel


def _add_n_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    return [sum_to(gy[0], s) for s in in_shapes]  # (the engine drops those not needed)


def _mul_n_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    grads = []
    for i, (x, s) in enumerate(zip(inputs, in_shapes)):
        if not needs(x):
            grads.append(None)
            continue
        g = gy[0]
        for j, other in enumerate(inputs):
            if j != i:
                g = g * other
        grads.append(sum_to(g, s))
    return grads


def _n_ary_api(fdef: Any) -> Any:
    """The public callable of AddN/MulN: the inputs as arguments, or as one list or tuple."""
    prim = fdef.api
    fname = fdef.snake

    def api(*x: Any) -> Any:
        if len(x) == 1 and isinstance(x[0], (list, tuple)):
            x = tuple(x[0])
        if not x:
            raise TypeError(f"{fname}(): give at least one input")
        return prim(*x)

    return replace_api(fdef, api)


def _n_ary_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample(tuple(draw(rng, (2, 3)) for _ in range(3)), name="three (2,3)")
    yield Sample((draw(rng, (2, 2)),), name="one")
    yield Sample((draw(rng, (2, 3)), draw(rng, (3,))), name="broadcasting")
    yield Sample((draw(rng, ()), draw(rng, ())), name="0-d")
    yield Sample((draw(rng, (3, 2)).T, draw(rng, (2, 3))), name="transposed")


def _register_nnabla_elementwise(register: Any) -> None:
    """Register the rounding functions, the NaN/inf tests and resets, the logical operations,
    mod2, add_n and mul_n."""
    f = register.function
    for name, kernel, ref, what, formula, example, extra in (
        (
            "Round",
            _round_half_away,
            _round_ref,
            "rounding to the nearest integer",
            r"\mathrm{round}(x)",
            "[-2.,  1.,  1.]",
            " Halves are rounded away from zero (``round(0.5) = 1``, ``round(-2.5) = -3``), as"
            " nnabla and C's ``round``, not to the even neighbour as numpy and PyTorch.",
        ),
        ("Ceil", _integral("ceil"), np.ceil, "ceiling", r"\lceil x \rceil", "[-1.,  1.,  2.]", ""),
        (
            "Floor",
            _integral("floor"),
            np.floor,
            "floor",
            r"\lfloor x \rfloor",
            "[-2.,  0.,  1.]",
            "",
        ),
    ):
        snake = name.lower()
        f(
            name,
            kernel,
            snake=snake,
            differentiable=False,
            samples=_rounding_samples,
            reference=ref,
            elementwise=True,
            doc=_ROUNDING_DOC.format(
                snake=snake, what=what, formula=formula, example=example, extra=extra
            ),
        )
    for name, op, what, example in (
        ("IsNaN", "isnan", "NaN", "[1., 0., 0.]"),
        ("IsInf", "isinf", "``inf`` or ``-inf``", "[0., 1., 0.]"),
    ):
        f(
            name,
            _nonfinite_test(op),
            snake=op,
            inputs=("x0",),
            differentiable=False,
            samples=_nonfinite_samples,
            reference=_float_ref1(getattr(np, op)),
            elementwise=True,
            doc=_NONFINITE_DOC.format(op=op, what=what, example=example),
        )
    for name, op, test, which, bad in (
        ("ResetNaN", "isnan", "IsNaN", "NaN", "np.nan"),
        ("ResetInf", "isinf", "IsInf", "``inf``/``-inf``", "np.inf"),
    ):
        with_real_scalars(
            f(
                name,
                _reset(op),
                snake="reset_" + op[2:],
                inputs=("x0",),
                attrs={"val": 0.0},
                rule=_reset_rule(test),
                fast_backward=_reset_fast(op),
                need_inputs=(0,),
                need_outputs=(),
                samples=_reset_samples(float(getattr(np, bad[3:]))),
                reference=_reset_ref(getattr(np, op)),
                elementwise=True,
                doc=_RESET_DOC.format(what=op[2:], which=which, bad=bad),
            )
        )
    f(
        "LogicalNot",
        _logical_not,
        snake="logical_not",
        inputs=("x0",),
        differentiable=False,
        samples=_logical_scalar_samples_not,
        reference=lambda x0: np.asarray(np.logical_not(x0), dtype=np.float64),
        elementwise=True,
        doc="""logical_not(x0): elementwise ``x0 == 0`` as 1.0 / 0.0 (nnabla).

    The result has the dtype of ``x0`` (float32 for integer inputs). Non-differentiable.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.logical_not(gh.Variable([0.0, 2.0])).d
        array([1., 0.], dtype=float32)
    """,
    )
    for logical in LOGICALS:
        logical.register(register)
    f(
        "Mod2",
        _mod2,
        inputs=("x0", "x1"),
        attrs={"fmod": False},
        differentiable=False,
        samples=_mod2_samples,
        reference=_mod2_ref,
        elementwise=True,
        doc=_MOD2_DOC,
    )
    for name, ufunc, rule, need, doc in (
        ("AddN", np.add, _add_n_bw, (), _ADD_N_DOC),
        ("MulN", np.multiply, _mul_n_bw, None, _MUL_N_DOC),
    ):
        _n_ary_api(
            f(
                name,
                _n_ary(ufunc),
                snake=name[:-1].lower() + "_n",
                inputs=("*xs",),
                rule=rule,
                need_inputs=need,
                need_outputs=(),
                samples=_n_ary_samples,
                reference=_n_ary_ref(ufunc),
                doc=doc,
            )
        )


_NONFINITE_DOC = """{op}(x0): 1.0 where ``x0`` is {what}, else 0.0 (nnabla).

    The result has the dtype of ``x0`` (float32 for integer inputs). Non-differentiable.

    Example::

        >>> import numpy as np
        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.{op}(gh.Variable(np.array([np.nan, np.inf, 1.0]))).d
        array({example}, dtype=float32)
    """


def _float_ref1(ref: Callable[..., Any]) -> Callable[..., Any]:
    def float_ref(x0: np.ndarray) -> np.ndarray:
        return np.asarray(ref(x0), dtype=np.float64)

    return float_ref


def _logical_scalar_samples_not(rng: np.random.Generator) -> Iterator[Sample]:
    for s in _logical_scalar_samples(rng):
        s.attrs = {}
        yield s


def _n_ary_ref(op: Callable[..., Any]) -> Callable[..., Any]:
    def ref(*x: np.ndarray) -> np.ndarray:
        y = np.asarray(x[0], dtype=np.float64)
        for v in x[1:]:
            y = op(y, v)
        return y

    return ref


# -- composites: add/sub/mul/div/pow with scalars in either position -----------------------------


def _both_scalars(fname: str, x0: Any, x1: Any) -> None:
    if is_scalar(x0) and is_scalar(x1):
        raise TypeError(
            f"{fname}(): at least one of the arguments 'x0', 'x1' must be a Variable or an array; "
            f"got the scalars {x0!r} and {x1!r}"
        )


def add(x0: Any, x1: Any) -> Any:
    """add(x0, x1): ``x0 + x1`` where either operand may be a Python scalar.

    Dispatches to ``add_scalar`` (a scalar operand) or ``add2`` (two arrays, broadcasting).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.add(1.0, gh.Variable([1.0, 2.0])).d
        array([2., 3.], dtype=float32)
    """
    _both_scalars("add", x0, x1)
    if is_scalar(x1):
        return call("AddScalar", x0, val=x1)
    if is_scalar(x0):
        return call("AddScalar", x1, val=x0)
    return call("Add2", x0, x1)


def sub(x0: Any, x1: Any) -> Any:
    """sub(x0, x1): ``x0 - x1`` where either operand may be a Python scalar.

    Dispatches to ``add_scalar`` (``x1`` scalar), ``r_sub_scalar`` (``x0`` scalar) or ``sub2``.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.sub(1.0, gh.Variable([1.0, 2.0])).d
        array([ 0., -1.], dtype=float32)
    """
    _both_scalars("sub", x0, x1)
    if is_scalar(x1):
        return call("AddScalar", x0, val=-x1)
    if is_scalar(x0):
        return call("RSubScalar", x1, val=x0)
    return call("Sub2", x0, x1)


def mul(x0: Any, x1: Any) -> Any:
    """mul(x0, x1): ``x0 * x1`` where either operand may be a Python scalar.

    Dispatches to ``mul_scalar`` (a scalar operand) or ``mul2`` (two arrays, broadcasting).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.mul(gh.Variable([1.0, 2.0]), 3.0).d
        array([3., 6.], dtype=float32)
    """
    _both_scalars("mul", x0, x1)
    if is_scalar(x1):
        return call("MulScalar", x0, val=x1)
    if is_scalar(x0):
        return call("MulScalar", x1, val=x0)
    return call("Mul2", x0, x1)


def div(x0: Any, x1: Any) -> Any:
    """div(x0, x1): ``x0 / x1`` where either operand may be a Python scalar.

    Dispatches to ``mul_scalar`` by ``1/x1`` (``x1`` a non-zero scalar), ``r_div_scalar``
    (``x0`` scalar) or ``div2`` (two arrays, broadcasting; also a zero scalar divisor, which gives
    infinities as numpy does).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.div(1.0, gh.Variable([1.0, 2.0])).d
        array([1. , 0.5], dtype=float32)
    """
    _both_scalars("div", x0, x1)
    if is_scalar(x1):
        if x1 != 0:
            return call("MulScalar", x0, val=1.0 / x1)
        v = as_variable(x0)
        return call("Div2", v, as_variable(v.device.xp.zeros((), dtype=v.dtype)))
    if is_scalar(x0):
        return call("RDivScalar", x1, val=x0)
    return call("Div2", x0, x1)


def pow(x0: Any, x1: Any) -> Any:
    """pow(x0, x1): ``x0 ** x1`` where either operand may be a Python scalar.

    Dispatches to ``pow_scalar`` (``x1`` scalar), ``r_pow_scalar`` (``x0`` scalar, which must be
    positive for the gradient) or ``pow2`` (two arrays, broadcasting).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.pow(2.0, gh.Variable([1.0, 3.0])).d
        array([2., 8.], dtype=float32)
    """
    _both_scalars("pow", x0, x1)
    if is_scalar(x1):
        return call("PowScalar", x0, val=x1)
    if is_scalar(x0):
        return call("RPowScalar", x1, val=x0)
    return call("Pow2", x0, x1)


def clip_by_value(x: Any, min: Any, max: Any) -> Any:
    """clip_by_value(x, min, max): ``x`` limited to ``[min, max]`` (nnabla).

    :math:`y = \\min(\\max(x, \\mathrm{min}), \\mathrm{max})`. ``min``/``max`` are numbers or
    Variables (broadcasting). With number bounds this is ``clip``, whose gradient passes where
    ``min <= x <= max`` (the boundaries included, as ``torch.clamp``). With Variable bounds it is
    ``minimum2(maximum2(x, min), max)``: gradients also reach the bounds, and at a tie the gradient
    is split evenly between ``x`` and the bound.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.clip_by_value(gh.Variable([-2.0, 0.5, 2.0]), -1.0, 1.0).d
        array([-1. ,  0.5,  1. ], dtype=float32)
    """
    if is_scalar(min) and is_scalar(max):
        return call("Clip", x, min=min, max=max)
    y = call("MaximumScalar", x, val=min) if is_scalar(min) else call("Maximum2", x, min)
    return call("MinimumScalar", y, val=max) if is_scalar(max) else call("Minimum2", y, max)


def _scalar_operand_samples(op: str) -> SampleFn:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        lo = 0.5 if op in ("div", "pow") else -2.0
        yield from binary_samples(lo0=lo, lo1=0.5 if op == "div" else -2.0)(rng)
        yield Sample((draw(rng, (2, 3), lo, 2.0),), {"x1": 2.5}, name="x1 scalar")

    return samples


def _composite_ref(fn: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def ref(x0: Any, x1: Any) -> Any:
        return fn(x0, x1)

    return ref


def _clip_by_value_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = draw(rng, (2, 3), -2, 2, avoid=(-1.0, 1.0))
    yield Sample((x,), {"min": -1.0, "max": 1.0}, name="scalar bounds")
    lo = rng.uniform(-1.5, -0.5, (3,))
    hi = rng.uniform(0.5, 1.5, (2, 1))
    x = draw(rng, (2, 3), -2, 2)
    x = np.where(np.abs(x - lo) < 0.05, x + 0.1, x)
    x = np.where(np.abs(x - hi) < 0.05, x - 0.1, x)
    yield Sample((x, lo, hi), name="Variable bounds")


# -- registration --------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register the elementwise math, arithmetic and comparison functions."""
    f = register.function
    for op in ELEMENTWISE:
        op.register(register)
    ACOSH.register(register)
    with_real_scalars(
        f(
            "Softplus",
            _softplus,
            snake="softplus",
            attrs={"beta": 1.0},
            rule=unary_rule(_softplus_bw),
            fast_backward=unary_fast(_softplus_fast),
            need_inputs=(0,),
            need_outputs=(),
            elementwise=True,
            doc=_SOFTPLUS_DOC,
            samples=_chain(unary_samples(-3, 3), unary_samples(-3, 3, attrs={"beta": 2.0})),
            reference=lambda x, beta=1.0: np.log1p(np.exp(beta * x)) / beta,
        ),
        ("beta",),
    )
    f(
        "ATan2",
        lambda xp, x0, x1: xp.arctan2(x0, x1),
        snake="atan2",
        inputs=("x0", "x1"),
        rule=_atan2_bw,
        fast_backward=_atan2_fast,
        need_inputs=(0, 1),
        need_outputs=(),
        samples=binary_samples(lo1=0.5, hi1=2.0),
        reference=np.arctan2,
        elementwise=True,
        doc=_ATAN2_DOC,
    )

    with_real_scalars(
        f(
            "RSubScalar",
            _r_sub_scalar,
            attrs={"val": 1.0},
            rule=formula_rule(_d_r_sub_scalar),
            fast_backward=formula_fast(_d_r_sub_scalar),
            need_inputs=(),
            need_outputs=(),
            samples=unary_samples(attrs={"val": 1.5}),
            reference=lambda x, val=1.0: val - x,
            elementwise=True,
            doc=r"""r_sub_scalar(x, val=1): :math:`y = \mathrm{val} - x`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.r_sub_scalar(gh.Variable([1.0, 2.0]), 3.0).d
        array([2., 1.], dtype=float32)
    """,
        )
    )
    f(
        "Maximum2",
        _maximum2,
        inputs=("x0", "x1"),
        attrs={"ties": "split"},
        rule=_binary_select_rule("Greater"),
        fast_backward=_binary_select_fast("greater"),
        need_inputs=(0, 1),
        need_outputs=(),
        samples=binary_samples(avoid_equal=True),
        reference=lambda x0, x1, ties="split": np.maximum(x0, x1),
        elementwise=True,
        doc=r"""maximum2(x0, x1): elementwise :math:`\max(x_0, x_1)` (broadcasting).

    The gradient goes to the larger operand; at a tie ``ties`` chooses: ``"split"`` 1/2 each
    (as ``torch.maximum``), ``"first"`` all to ``x0`` (as chainer), ``"second"`` all to ``x1``
    (as nnabla).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.maximum2(gh.Variable([1.0, 5.0]), gh.Variable([3.0, 2.0])).d
        array([3., 5.], dtype=float32)
    """,
    )
    f(
        "Minimum2",
        _minimum2,
        inputs=("x0", "x1"),
        attrs={"ties": "split"},
        rule=_binary_select_rule("Less"),
        fast_backward=_binary_select_fast("less"),
        need_inputs=(0, 1),
        need_outputs=(),
        samples=binary_samples(avoid_equal=True),
        reference=lambda x0, x1, ties="split": np.minimum(x0, x1),
        elementwise=True,
        doc=r"""minimum2(x0, x1): elementwise :math:`\min(x_0, x_1)` (broadcasting).

    The gradient goes to the smaller operand; at a tie ``ties`` chooses: ``"split"`` 1/2 each
    (as ``torch.minimum``), ``"first"`` all to ``x0`` (as chainer), ``"second"`` all to ``x1``
    (as nnabla).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.minimum2(gh.Variable([1.0, 5.0]), gh.Variable([3.0, 2.0])).d
        array([1., 2.], dtype=float32)
    """,
    )
    with_real_scalars(
        f(
            "MaximumScalar",
            _maximum_scalar,
            attrs={"val": 1.0},
            rule=formula_rule(_d_maximum_scalar),
            fast_backward=formula_fast(_d_maximum_scalar),
            need_inputs=(0,),
            need_outputs=(),
            samples=unary_samples(avoid=(0.5,), attrs={"val": 0.5}),
            reference=lambda x, val=1.0: np.maximum(x, val),
            elementwise=True,
            doc=r"""maximum_scalar(x, val=1.0): elementwise :math:`\max(x, \mathrm{val})`.

    The gradient passes where ``x >= val`` (ties included, as ``torch.clamp``), else 0.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.maximum_scalar(gh.Variable([-1.0, 2.0]), 0.0).d
        array([0., 2.], dtype=float32)
    """,
        )
    )
    with_real_scalars(
        f(
            "MinimumScalar",
            _minimum_scalar,
            attrs={"val": 1.0},
            rule=formula_rule(_d_minimum_scalar),
            fast_backward=formula_fast(_d_minimum_scalar),
            need_inputs=(0,),
            need_outputs=(),
            samples=unary_samples(avoid=(0.5,), attrs={"val": 0.5}),
            reference=lambda x, val=1.0: np.minimum(x, val),
            elementwise=True,
            doc=r"""minimum_scalar(x, val=1.0): elementwise :math:`\min(x, \mathrm{val})`.

    The gradient passes where ``x <= val`` (ties included, as ``torch.clamp``), else 0.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.minimum_scalar(gh.Variable([-1.0, 2.0]), 0.0).d
        array([-1.,  0.], dtype=float32)
    """,
        )
    )
    f(
        "Where",
        _where,
        inputs=("condition", "x_true", "x_false"),
        rule=_where_bw,
        fast_backward=_where_fast,
        need_inputs=(0,),
        need_outputs=(),
        samples=_where_samples,
        reference=np.where,
        elementwise=True,
        doc=r"""where(condition, x_true, x_false): elementwise selection (nnabla).

    :math:`y = x_\mathrm{true}` where ``condition`` is non-zero (or True), else
    :math:`x_\mathrm{false}`; the three broadcast together. Gradients go to the selected operand;
    ``condition`` gets none.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> c = gh.Variable([1.0, 0.0], need_grad=False)
        >>> F.where(c, gh.Variable([1.0, 2.0]), gh.Variable([-1.0, -2.0])).d
        array([ 1., -2.], dtype=float32)
    """,
    )
    f(
        "Clip",
        _clip,
        attrs={"min": None, "max": None},
        rule=formula_rule(_d_clip),
        fast_backward=formula_fast(_d_clip),
        need_inputs=(0,),
        need_outputs=(),
        samples=_clip_samples,
        reference=_clip_ref,
        elementwise=True,
        doc=r"""clip(x, min=None, max=None): ``x`` limited to ``[min, max]``.

    :math:`y = \min(\max(x, \mathrm{min}), \mathrm{max})` with number bounds (``None``: no bound
    on that side). The gradient passes where ``min <= x <= max``, boundaries included (as
    ``torch.clamp``). ``clip_by_value`` also takes Variable bounds.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.clip(gh.Variable([-2.0, 0.5, 2.0]), -1.0, 1.0).d
        array([-1. ,  0.5,  1. ], dtype=float32)
    """,
    )

    # comparisons
    for comparison in COMPARISONS:
        comparison.register(register)
    # composites
    c = register.composite
    for fn, ref in (
        (add, np.add),
        (sub, np.subtract),
        (mul, np.multiply),
        (div, np.divide),
        (pow, np.power),
    ):
        c(
            fn.__name__.capitalize(),
            fn,
            snake=fn.__name__,
            samples=_scalar_operand_samples(fn.__name__),
            reference=_composite_ref(ref),
            elementwise=True,
        )
    c(
        "ClipByValue",
        clip_by_value,
        snake="clip_by_value",
        samples=_clip_by_value_samples,
        reference=lambda x, min, max: np.minimum(np.maximum(x, min), max),
        elementwise=True,
    )
    _register_nnabla_elementwise(register)


def _chain(*fns: SampleFn) -> SampleFn:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        for fn in fns:
            yield from fn(rng)

    return samples


def _float_ref(ref: Callable[..., Any]) -> Callable[..., Any]:
    def float_ref(x0: np.ndarray, x1: Any = 1.0, val: float | None = None) -> np.ndarray:
        return np.asarray(ref(x0, x1 if val is None else val), dtype=np.float64)

    return float_ref


def _where_samples(rng: np.random.Generator) -> Iterator[Sample]:
    cond = rng.random((2, 3)) < 0.5
    yield Sample((cond, draw(rng, (2, 3)), draw(rng, (2, 3))), name="bool")
    yield Sample(
        (cond.astype(np.float64), draw(rng, (3,)), draw(rng, (2, 1))),
        grad_inputs=(1, 2),
        name="float condition, broadcasting",
    )
    yield Sample((np.array(True), draw(rng, ()), draw(rng, (2,))), name="0-d condition")
    yield Sample((np.zeros((0, 2), dtype=bool), draw(rng, (0, 2)), draw(rng, (2,))), name="size-0")
    yield Sample(
        (rng.random((2, 3)) < 0.5, draw(rng, (3, 2)).T, draw(rng, (2, 3))), name="transposed"
    )


def _clip_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield from unary_samples(-2, 2, avoid=(-1.0, 1.0), attrs={"min": -1.0, "max": 1.0})(rng)
    yield Sample((draw(rng, (2, 3), avoid=(0.5,)),), {"min": 0.5, "max": None}, name="min only")
    yield Sample((draw(rng, (2, 3), avoid=(0.0,)),), {"min": None, "max": 0.0}, name="max only")
    yield Sample((draw(rng, (4,)),), {"min": None, "max": None}, name="no bounds")


def _clip_ref(x: np.ndarray, min: Any = None, max: Any = None) -> np.ndarray:
    y = np.array(x, dtype=np.float64)
    if min is not None:
        y = np.where(y < min, min, y)
    if max is not None:
        y = np.where(y > max, max, y)
    return y
