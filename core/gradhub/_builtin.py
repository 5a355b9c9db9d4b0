"""The functions the engine and the Variable operators need, registered as the built-in plugin.

They register through the same hooks as any plugin (provider ``gradhub``). Each rule is written
with registered functions, so it is differentiable to any order. This module holds the
arithmetic, reduction, shape, cast and transfer functions; the modules of
:mod:`gradhub.builtin` hold the rest (``Pow2``, ``Abs``, ``BatchMatmul``, ``GetItem`` and the
functions their rules call), so that the core needs no plugin.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .broadcasting import sum_to, sum_to_array
from .builtin import batch_rules, elementwise, indexing, jvp, linalg, shape
from .device import parse_device_name
from .hookspecs import hookimpl
from .memory import MIN_BYTES as _REUSE_MIN
from .memory import binary as _into_reused
from .ops import call, with_real_scalars
from .registry import REGISTRY, Sample, ignore_arguments, one_input_fast

_call = call


# -- forward kernels (xp is the device's array module) ----------------------------------------


def _add2(xp: Any, a: Any, b: Any) -> Any:
    if xp is np and a.nbytes >= _REUSE_MIN:  # large: into a reused array (no page faults)
        return _into_reused(np.add, a, b)
    return a + b


def _sub2(xp: Any, a: Any, b: Any) -> Any:
    return a - b


def _mul2(xp: Any, a: Any, b: Any) -> Any:
    if xp is np and a.nbytes >= _REUSE_MIN:
        return _into_reused(np.multiply, a, b)
    return a * b


def _div2(xp: Any, a: Any, b: Any) -> Any:
    return a / b


def _neg(xp: Any, x: Any) -> Any:
    return -x


_PY_SCALARS = (int, float)
_ndarray = np.ndarray


_OPERANDS: dict[tuple[Any, Any], Any] = {}


def _operand(x: Any, val: Any) -> Any:
    """The scalar ``val`` as the other operand of the array ``x``, in x's dtype.

    Python scalars keep the array's dtype (NEP 50) and numpy scalars are cast to it first. For a
    numpy float array and a non-zero Python number, a cached read-only 0-d array of x's dtype: numpy
    multiplies by one about twice as fast as by a Python float, with the same result (the
    cast is the same). Zero is left out of the cache because -0.0 == 0.0 (one key for two values).
    """
    if type(val) is float:  # the common case first: a float already cached for x's dtype
        a = _OPERANDS.get((val, x.dtype))
        if a is not None and type(x) is _ndarray:
            return a
    dt = x.dtype
    if type(x) is _ndarray and dt.kind == "f" and type(val) in _PY_SCALARS and val:
        key = (val, dt)
        a = _OPERANDS.get(key)
        if a is None:
            if len(_OPERANDS) >= 256:  # a bound for loops over many distinct scalars
                _OPERANDS.clear()
            a = np.array(val, dt)
            a.flags.writeable = False
            if val == val:  # NaN is never found again: not kept
                _OPERANDS[key] = a
        return a
    return val if type(val) in _PY_SCALARS else dt.type(val)


def _add_scalar(xp: Any, x: Any, val: float) -> Any:
    return x + _operand(x, val)


def _mul_scalar(xp: Any, x: Any, val: float) -> Any:
    return x * _operand(x, val)


def _scalar_operand(dtype: Any, val: Any) -> Any:
    """:func:`_operand` for every numpy array of ``dtype``: the constant operand a plan binds
    once (``plan_operator``, see :mod:`gradhub.plan`)."""
    return _operand(np.empty(0, dtype), val)


# a plan writes these calls as ``x + C`` and ``x * C`` (C made once per dtype and value)
_add_scalar.plan_operator = ("+", _scalar_operand)  # type: ignore[attr-defined]
_mul_scalar.plan_operator = ("*", _scalar_operand)  # type: ignore[attr-defined]


def _pow_scalar(xp: Any, x: Any, val: float) -> Any:
    if val == 2:
        return x * x
    if x.dtype.kind == "f":
        return x ** x.dtype.type(val)
    if isinstance(val, (int, np.integer)) and val < 0 and x.dtype.kind in "iub":
        raise ValueError(
            f"argument 'val': an integer base (x of dtype {x.dtype}) to the negative integer "
            f"power {val} is not defined in integers (numpy: 'Integers to negative integer powers "
            "are not allowed'); cast x to a floating dtype first, or pass a float val"
        )
    return x**val


def _rdiv_scalar(xp: Any, x: Any, val: float) -> Any:
    return x.dtype.type(val) / x if x.dtype.kind == "f" else val / x


def _rpow_scalar(xp: Any, x: Any, val: float) -> Any:
    return x.dtype.type(val) ** x if x.dtype.kind == "f" else val**x


def _axes(axis: Any) -> tuple[int, ...]:
    """A reduction's ``axis`` (not None) as a tuple of ints: an int, a numpy integer or a sequence
    of them; anything else (a float, say) raises a TypeError naming the argument (the graph adds
    the function)."""
    if type(axis) is int:
        return (axis,)
    if type(axis) is tuple and all(type(a) is int for a in axis):
        return axis
    if isinstance(axis, np.ndarray):
        axis = axis.tolist()
    try:
        if isinstance(axis, str):
            raise TypeError
        if hasattr(axis, "__iter__"):
            return tuple(operator.index(a) for a in axis)
        return (operator.index(axis),)
    except TypeError:
        raise TypeError(
            f"argument 'axis' must be an int, a tuple of ints or None, got {axis!r}"
        ) from None


def _norm_axis(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(a % ndim if ndim else a for a in _axes(axis)))


_F16 = np.dtype(np.float16)


def _sum(xp: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    ax = None if axis is None else _axes(axis)
    if x.dtype is _F16:  # accumulated in float32, as PyTorch (a float16 sum overflows at 65504)
        return xp.asarray(x.sum(axis=ax, keepdims=keepdims, dtype=np.float32).astype(_F16))
    return xp.asarray(x.sum(axis=ax, keepdims=keepdims))


def _broadcast_to(xp: Any, x: Any, shape: Sequence[int]) -> Any:
    shape = tuple(shape)
    if xp is np and x.size == 1 and math.prod(shape) <= 4096:
        # small results: filling a new array is several times cheaper than numpy's
        # broadcast_to view machinery (Sum's rule broadcasts a 0-d gradient this way); not on
        # CuPy, whose fill() with a device scalar compares it with 0 on the host (a sync)
        out = xp.empty(shape, dtype=x.dtype)  # empty + fill: about half of xp.full's cost
        out.fill(x.reshape(()))
        return out
    return xp.broadcast_to(x, shape)


def _reshape(xp: Any, x: Any, shape: Sequence[int]) -> Any:
    return x.reshape(tuple(shape))


def _cast(xp: Any, x: Any, dtype: str) -> Any:
    return x.astype(dtype, copy=False)


def _to_device(xp: Any, x: Any, device: str) -> Any:
    kind, idx = parse_device_name(device)
    return REGISTRY.device_type(kind).get(idx).asarray(x)


# -- backward rules ----------------------------------------------------------------------------


def _add2_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    g = gy[0]
    return [sum_to(g, in_shapes[0]), sum_to(g, in_shapes[1])]


def _sub2_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    g = gy[0]
    return [sum_to(g, in_shapes[0]), sum_to(-g, in_shapes[1])]


def _mul2_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    a, b = inputs  # only the inputs that need a gradient get one computed
    return [
        sum_to(gy[0] * b, in_shapes[0]) if a.need_grad else None,
        sum_to(gy[0] * a, in_shapes[1]) if b.need_grad else None,
    ]


def _div2_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    a, b = inputs
    ga = gy[0] / b
    return [
        sum_to(ga, in_shapes[0]) if a.need_grad else None,
        sum_to(-ga * a / b, in_shapes[1]) if b.need_grad else None,
    ]


def _neg_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    return [-gy[0]]


def _add_scalar_bw(gy, inputs, in_shapes, outputs, out_shapes, val):  # type: ignore[no-untyped-def]
    return [gy[0]]


def _mul_scalar_bw(gy, inputs, in_shapes, outputs, out_shapes, val):  # type: ignore[no-untyped-def]
    return [gy[0] * val]


def _pow_scalar_bw(gy, inputs, in_shapes, outputs, out_shapes, val):  # type: ignore[no-untyped-def]
    if val == 0:
        return [gy[0] * 0.0]
    if val == 1:
        return [gy[0]]
    return [gy[0] * (inputs[0] ** (val - 1)) * val]


def _rdiv_scalar_bw(gy, inputs, in_shapes, outputs, out_shapes, val):  # type: ignore[no-untyped-def]
    return [gy[0] * (inputs[0] ** -2) * (-val)]


def _rpow_scalar_bw(gy, inputs, in_shapes, outputs, out_shapes, val):  # type: ignore[no-untyped-def]
    # d(val**x)/dx = val**x * log(val); written with the input so that it is differentiable again
    if val == 0:  # 0**x is constant where it is finite: 0 (as PyTorch), not 0 * log(0) = NaN
        return [gy[0] * 0.0]
    y = _call("RPowScalar", inputs[0], val=val)
    return [gy[0] * y * float(np.log(val))]


def _sum_bw(gy, inputs, in_shapes, outputs, out_shapes, axis, keepdims):  # type: ignore[no-untyped-def]
    shape = tuple(in_shapes[0])
    g = gy[0]
    if not keepdims and g.ndim:  # a 0-d gradient broadcasts as it is
        kept = list(shape)
        for a in _norm_axis(axis, len(shape)):
            kept[a] = 1
        g = _call("Reshape", g, shape=tuple(kept))
    return [_call("BroadcastTo", g, shape=shape)]


def _broadcast_to_bw(gy, inputs, in_shapes, outputs, out_shapes, shape):  # type: ignore[no-untyped-def]
    return [sum_to(gy[0], in_shapes[0])]


def _reshape_bw(gy, inputs, in_shapes, outputs, out_shapes, shape):  # type: ignore[no-untyped-def]
    return [_call("Reshape", gy[0], shape=tuple(in_shapes[0]))]


def _cast_bw(gy, inputs, in_shapes, outputs, out_shapes, dtype):  # type: ignore[no-untyped-def]
    return [_call("Cast", gy[0], dtype=inputs[0].dtype.name)]


def _cast_fast(xp, gy, x, xs, y, ys, dtype):  # type: ignore[no-untyped-def]
    return [gy[0].astype(x[0].dtype)]


def _cast_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample(
        (rng.standard_normal((3, 4)),), {"dtype": "float64"}, name="to float64", keeps_float32=False
    )
    yield Sample((rng.standard_normal(()),), {"dtype": "float64"}, name="0-d", keeps_float32=False)


def _to_device_bw(gy, inputs, in_shapes, outputs, out_shapes, device):  # type: ignore[no-untyped-def]
    # the input is kept only to know its device (transfers are rarely on a hot path)
    return [_call("ToDevice", gy[0], device=inputs[0].device.name)]


def _to_device_fast(xp, gy, x, xs, y, ys, device):  # type: ignore[no-untyped-def]
    src = REGISTRY.by_array_type[type(x[0])].device_of(x[0])
    return [src.asarray(gy[0])]


# -- fast first-order rules: the same formulas on arrays (used when create_graph=False) -------


def _add2_fast(xp, gy, x, xs, y, ys):  # type: ignore[no-untyped-def]
    return [sum_to_array(gy[0], xs[0]), sum_to_array(gy[0], xs[1])]


def _sub2_fast(xp, gy, x, xs, y, ys):  # type: ignore[no-untyped-def]
    return [sum_to_array(gy[0], xs[0]), sum_to_array(-gy[0], xs[1])]


def _mul2_fast(xp, gy, x, xs, y, ys, need_grads):  # type: ignore[no-untyped-def]
    # a product with a constant (a mask, a scale) computes only the one gradient it needs
    g = gy[0]
    return [
        sum_to_array(_mul2(xp, g, x[1]), xs[0]) if need_grads[0] else None,
        sum_to_array(_mul2(xp, g, x[0]), xs[1]) if need_grads[1] else None,
    ]


def _div2_fast(xp, gy, x, xs, y, ys, need_grads):  # type: ignore[no-untyped-def]
    ga = gy[0] / x[1]
    return [
        sum_to_array(ga, xs[0]) if need_grads[0] else None,
        sum_to_array(-ga * x[0] / x[1], xs[1]) if need_grads[1] else None,
    ]


def _neg_fast(xp, gy, x, y):  # type: ignore[no-untyped-def]
    return -gy


def _add_scalar_fast(xp, gy, x, y, val):  # type: ignore[no-untyped-def]
    return gy


def _mul_scalar_fast(xp, gy, x, y, val):  # type: ignore[no-untyped-def]
    return _mul_scalar(xp, gy, val)


# a plan writes these rules as ``gy`` and ``gy * C`` (see _mul_scalar)
_add_scalar_fast.plan_operator = ("", None)  # type: ignore[attr-defined]
_mul_scalar_fast.plan_operator = ("*", _scalar_operand)  # type: ignore[attr-defined]


def _pow_scalar_fast(xp, gy, x, y, val):  # type: ignore[no-untyped-def]
    if val == 0:
        return gy * 0
    return gy * _mul_scalar(xp, _pow_scalar(xp, x, val - 1), val)


def _rdiv_scalar_fast(xp, gy, x, y, val):  # type: ignore[no-untyped-def]
    return gy * _mul_scalar(xp, _pow_scalar(xp, x, -2), -val)


def _rpow_scalar_fast(xp, gy, x, y, val):  # type: ignore[no-untyped-def]
    if val == 0:
        return gy * 0
    return gy * _mul_scalar(xp, _rpow_scalar(xp, x, val), float(np.log(val)))


def _sum_fast(xp, gy, x, xs, y, ys, axis, keepdims):  # type: ignore[no-untyped-def]
    shape = tuple(xs[0])
    g = gy[0]
    if not keepdims:
        kept = list(shape)
        for a in _norm_axis(axis, len(shape)):
            kept[a] = 1
        g = g.reshape(kept)
    return [_broadcast_to(xp, g, shape)]


def _broadcast_to_fast(xp, gy, x, xs, y, ys, shape):  # type: ignore[no-untyped-def]
    return [sum_to_array(gy[0], xs[0])]


def _reshape_fast(xp, gy, x, xs, y, ys, shape):  # type: ignore[no-untyped-def]
    return [gy[0].reshape(xs[0])]


# -- samples -----------------------------------------------------------------------------------

_BINARY_SHAPES = [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3)), ((5,), ())]


def _binary(lo: float = -2.0, hi: float = 2.0, positive_b: bool = False):  # type: ignore[no-untyped-def]
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        for sa, sb in _BINARY_SHAPES:
            a = rng.uniform(lo, hi, sa)
            b = rng.uniform(0.5, 2.0, sb) * (rng.choice([-1.0, 1.0], sb) if not positive_b else 1)
            yield Sample((a, b), name=f"{sa}x{sb}")

    return samples


def _unary(  # type: ignore[no-untyped-def]
    lo: float = -2.0,
    hi: float = 2.0,
    attrs: dict[str, Any] | None = None,
    shapes: Sequence[tuple[int, ...]] = ((3, 4), (), (2, 0), (5,)),
):
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        for s in shapes:
            yield Sample((rng.uniform(lo, hi, s),), dict(attrs or {}), name=str(s))

    return samples


def _away_from_zero(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def _pow_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for val in (2.0, 3.0, 0.5, -1.5, 1.0):
        x = rng.uniform(0.5, 2.0, (3, 4))
        yield Sample((x,), {"val": val}, name=f"val={val}")
    yield Sample((rng.uniform(-2, 2, (4,)),), {"val": 2}, name="int power")


def _rdiv_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((_away_from_zero(rng, (3, 4)),), {"val": 2.5})
    yield Sample((_away_from_zero(rng, ()),), {"val": -1.0})


def _rpow_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.uniform(-1, 1, (3, 4)),), {"val": 2.0})
    yield Sample((rng.uniform(-1, 1, (5,)),), {"val": 0.5})


def _sum_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.standard_normal((2, 3, 4))
    for axis, keep in ((None, False), (1, False), ((0, 2), True), (-1, True), ((), False)):
        yield Sample((x,), {"axis": axis, "keepdims": keep}, name=f"axis={axis},keep={keep}")
    yield Sample((rng.standard_normal(()),), {"axis": None, "keepdims": False}, name="0-d")
    yield Sample((rng.standard_normal((0, 3)),), {"axis": 0, "keepdims": False}, name="size-0")


def _broadcast_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((3, 1)),), {"shape": (2, 3, 4)})
    yield Sample((rng.standard_normal(()),), {"shape": (2, 2)})
    yield Sample((rng.standard_normal((4,)),), {"shape": (3, 4)})


def _reshape_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((2, 6)),), {"shape": (3, 4)})
    yield Sample(
        (rng.standard_normal((2, 3, 4)).transpose(2, 0, 1),),
        {"shape": (24,)},
        name="non-contiguous",
    )
    yield Sample((rng.standard_normal(()),), {"shape": (1, 1)})


def _sum_ref(x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
    ax = None if axis is None else tuple(np.atleast_1d(axis))
    return np.asarray(np.add.reduce(x, axis=ax, keepdims=keepdims))  # type: ignore[call-overload]


_DOC_BROADCAST_TO = """broadcast_to(x, y=None, axis=None, shape=None): broadcasting, in two forms.

    nnabla's form, ``broadcast_to(x, y, axis=None)`` with ``y`` a Variable or array: ``y``
    broadcast to the shape of ``x``, its axes aligned with x's axes ``axis, axis + 1, ...``
    (the trailing axes of x when ``axis`` is None or -1, as nnabla). Each of y's sizes must equal
    x's size there (or be 1, which broadcasts: a superset of nnabla). Only ``y`` gets a gradient
    (the sum of the output's gradient over the broadcast axes); ``x`` only gives the shape.

    gradhub's form, ``broadcast_to(x, shape)`` with ``shape`` a tuple or list of ints (or the
    keyword ``shape=``): ``x`` broadcast to ``shape`` (numpy's rules), its gradient summed back.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> big, small = gh.Variable(np.zeros((2, 3))), gh.Variable([1.0, 2.0])
        >>> F.broadcast_to(big, small, axis=0).d
        array([[1., 1., 1.],
               [2., 2., 2.]], dtype=float32)
        >>> F.broadcast_to(gh.Variable([1.0, 2.0, 3.0]), (2, 3)).shape
        (2, 3)
    """


def _is_shape(value: Any) -> bool:
    """Whether ``value`` is a shape (a tuple or list of ints) rather than data."""
    return isinstance(value, (tuple, list)) and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value
    )


def _broadcast_to_api(fdef: Any) -> Any:
    """Install the public callable ``F.broadcast_to`` of BroadcastTo: nnabla's form ``(x, y,
    axis=None)`` (``y`` broadcast to x's shape) when ``y`` is data, gradhub's ``(x, shape)`` when
    it is a shape. Rules and ``call("BroadcastTo", x, shape=...)`` apply the function directly."""
    inner = fdef.api

    def broadcast_to(x: Any, y: Any = None, axis: Any = None, shape: Any = None) -> Any:
        if shape is not None or y is None or _is_shape(y):
            if shape is not None and y is not None:
                raise TypeError(
                    "broadcast_to(): pass either y (nnabla's form: the data to "
                    "broadcast to x's shape) or shape, not both"
                )
            if axis is not None:
                raise TypeError(
                    "broadcast_to(): argument 'axis' belongs to nnabla's form "
                    "broadcast_to(x, y, axis) with y a Variable or array; with a shape "
                    f"({y if shape is None else shape!r}) it is not accepted"
                )
            return inner(x, () if y is None and shape is None else (shape if y is None else y))
        xshape = tuple(getattr(x, "shape", np.shape(x)))
        yshape = tuple(getattr(y, "shape", np.shape(y)))
        nx, ny = len(xshape), len(yshape)
        if ny > nx:
            raise ValueError(
                f"broadcast_to(): argument 'y' of shape {yshape} has more axes than "
                f"x of shape {xshape} (nnabla's form broadcasts y to x's shape)"
            )
        if axis is None or (type(axis) is int and axis == -1):
            a = nx - ny
        elif isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
            a = int(axis)
            if not 0 <= a <= nx - ny:
                raise ValueError(
                    f"broadcast_to(): argument 'axis' must be in [0, {nx - ny}] (or -1 or None) "
                    f"to align y of shape {yshape} with x of shape {xshape}, got {axis}"
                )
        else:
            raise TypeError(f"broadcast_to(): argument 'axis' must be an int or None, got {axis!r}")
        for i, n in enumerate(yshape):
            if n != xshape[a + i] and n != 1:
                raise ValueError(
                    f"broadcast_to(): argument 'y' of shape {yshape} does not match x of shape "
                    f"{xshape} on x's axes {a}..{a + ny - 1} (axis={axis}): size {n} against "
                    f"{xshape[a + i]}"
                )
        full = (1,) * a + yshape + (1,) * (nx - a - ny)
        if full != yshape:
            y = _call("Reshape", y, shape=full)
        return _call("BroadcastTo", y, shape=xshape)

    broadcast_to.__doc__ = _DOC_BROADCAST_TO
    broadcast_to.fdef = fdef  # type: ignore[attr-defined]
    fdef.api = broadcast_to
    return fdef


@hookimpl
def gradhub_add_functions(register: Any) -> None:
    """Register the core arithmetic, reduction and shape functions, then those of
    :mod:`gradhub.builtin` (the rest of what the Variable operators need)."""
    f = register.function
    ignore_arguments(
        f(
            "Add2",
            _add2,
            inputs=("x0", "x1"),
            fast_backward=_add2_fast,
            rule=_add2_bw,
            need_inputs=(),
            need_outputs=(),
            samples=_binary(),
            reference=np.add,
            elementwise=True,
            doc="x0 + x1 (broadcasting).",
        ),
        inplace=False,
    )
    ignore_arguments(
        f(
            "Sub2",
            _sub2,
            inputs=("x0", "x1"),
            fast_backward=_sub2_fast,
            rule=_sub2_bw,
            need_inputs=(),
            need_outputs=(),
            samples=_binary(),
            reference=np.subtract,
            elementwise=True,
            doc="x0 - x1 (broadcasting).",
        ),
        inplace=False,
    )
    ignore_arguments(
        f(
            "Mul2",
            _mul2,
            inputs=("x0", "x1"),
            fast_backward=_mul2_fast,
            rule=_mul2_bw,
            need_inputs=(0, 1),
            need_outputs=(),
            samples=_binary(),
            reference=np.multiply,
            elementwise=True,
            doc="x0 * x1 (broadcasting).",
        ),
        inplace=False,
    )
    ignore_arguments(
        f(
            "Div2",
            _div2,
            inputs=("x0", "x1"),
            fast_backward=_div2_fast,
            rule=_div2_bw,
            need_inputs=(0, 1),
            need_outputs=(),
            samples=_binary(),
            reference=np.divide,
            elementwise=True,
            kinks=(0.0,),
            doc="x0 / x1 (broadcasting).",
        ),
        inplace=False,
    )
    f(
        "Neg",
        _neg,
        fast_backward=one_input_fast(_neg_fast),
        rule=_neg_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_unary(),
        reference=np.negative,
        elementwise=True,
        doc="-x.",
    )
    with_real_scalars(
        ignore_arguments(
            f(
                "AddScalar",
                _add_scalar,
                attrs={"val": 1.0},
                fast_backward=one_input_fast(_add_scalar_fast),
                rule=_add_scalar_bw,
                need_inputs=(),
                need_outputs=(),
                samples=_unary(attrs={"val": 1.5}),
                reference=lambda x, val: x + val,
                elementwise=True,
                doc="x + val.",
            ),
            inplace=False,
        )
    )
    with_real_scalars(
        ignore_arguments(
            f(
                "MulScalar",
                _mul_scalar,
                attrs={"val": 1.0},
                fast_backward=one_input_fast(_mul_scalar_fast),
                rule=_mul_scalar_bw,
                need_inputs=(),
                need_outputs=(),
                samples=_unary(attrs={"val": -2.5}),
                reference=lambda x, val: x * val,
                elementwise=True,
                doc="x * val.",
            ),
            inplace=False,
        )
    )
    with_real_scalars(
        ignore_arguments(
            f(
                "PowScalar",
                _pow_scalar,
                attrs={"val": 1.0},
                fast_backward=one_input_fast(_pow_scalar_fast),
                rule=_pow_scalar_bw,
                need_inputs=(0,),
                need_outputs=(),
                samples=_pow_samples,
                reference=lambda x, val: np.power(x, val),
                elementwise=True,
                kinks=(0.0,),
                doc="x ** val.",
            ),
            inplace=False,
        )
    )
    with_real_scalars(
        f(
            "RDivScalar",
            _rdiv_scalar,
            attrs={"val": 1.0},
            fast_backward=one_input_fast(_rdiv_scalar_fast),
            rule=_rdiv_scalar_bw,
            need_inputs=(0,),
            need_outputs=(),
            samples=_rdiv_samples,
            reference=lambda x, val: val / x,
            elementwise=True,
            kinks=(0.0,),
            doc="val / x.",
        )
    )
    with_real_scalars(
        f(
            "RPowScalar",
            _rpow_scalar,
            attrs={"val": 1.0},
            fast_backward=one_input_fast(_rpow_scalar_fast),
            rule=_rpow_scalar_bw,
            need_inputs=(0,),
            need_outputs=(),
            samples=_rpow_samples,
            reference=lambda x, val: np.power(val, x),
            elementwise=True,
            doc="val ** x (val > 0; for val == 0 the derivative is taken as 0, as PyTorch).",
        )
    )
    f(
        "Sum",
        _sum,
        attrs={"axis": None, "keepdims": False},
        fast_backward=_sum_fast,
        rule=_sum_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_sum_samples,
        reference=_sum_ref,
        doc="Sum over axis (all axes when None).",
    )
    _broadcast_to_api(
        f(
            "BroadcastTo",
            _broadcast_to,
            attrs={"shape": ()},
            fast_backward=_broadcast_to_fast,
            rule=_broadcast_to_bw,
            need_inputs=(),
            need_outputs=(),
            samples=_broadcast_samples,
            reference=lambda x, shape: np.broadcast_to(x, shape),
            doc=_DOC_BROADCAST_TO,
        )
    )
    ignore_arguments(
        f(
            "Reshape",
            _reshape,
            attrs={"shape": ()},
            fast_backward=_reshape_fast,
            rule=_reshape_bw,
            need_inputs=(),
            need_outputs=(),
            samples=_reshape_samples,
            reference=lambda x, shape: np.reshape(x, shape),
            doc="x with another shape.",
        ),
        inplace=True,
    )
    f(
        "Cast",
        _cast,
        attrs={"dtype": "float32"},
        fast_backward=_cast_fast,
        rule=_cast_bw,
        need_inputs=(0,),
        need_outputs=(),
        samples=_cast_samples,
        reference=lambda x, dtype: x.astype(dtype),
        doc="x converted to dtype; the gradient is converted back to x's dtype.",
    )
    f(
        "ToDevice",
        _to_device,
        attrs={"device": "cpu"},
        rule=_to_device_bw,
        fast_backward=_to_device_fast,
        need_inputs=(0,),
        need_outputs=(),
        samples=_unary(attrs={"device": "cpu"}, shapes=((3,), ())),
        reference=lambda x, device: x,
        doc="x moved to the device named ``device`` (``cpu``, ``cuda:1``); its gradient moves "
        "back to x's device.",
    )
    for module in (elementwise, linalg, indexing, shape):
        module.register_functions(register)


@hookimpl
def gradhub_add_jvp_rules(register: Any) -> None:
    """Register the native forward-mode rules of the core's functions
    (:mod:`gradhub.builtin.jvp`)."""
    jvp.register_jvp_rules(register)


@hookimpl
def gradhub_add_batching_rules(register: Any) -> None:
    """Set the batching rules of the core's functions that are not elementwise
    (:mod:`gradhub.builtin.batch_rules`)."""
    batch_rules.register_batching_rules(register)
