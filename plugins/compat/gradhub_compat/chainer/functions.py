"""chainer's functions: ``import gradhub_compat.chainer.functions as F``.

Each function keeps chainer's name, arguments and defaults (``F.softmax(x, axis=1)``,
``F.linear(x, W, b)`` with ``W`` of shape (out, in), ``F.softmax_cross_entropy`` averaging over the
batch and ignoring label -1, ``F.max_pooling_2d(..., cover_all=True)``) and maps onto the
registered gradhub functions (nnabla conventions), so every derivative, of any order, comes from
the native engine. Inputs may be Variables or arrays; results are
:class:`gradhub_compat.chainer.Variable` objects. See ``docs/migration-chainer.md`` for the list.

This module holds the core functions and the helpers the others use; the rest of chainer
7.8.1's functions live in the modules of :mod:`gradhub_compat.chainer._functions`, one for each
of chainer's ``chainer/functions/`` categories, and are re-exported here.

Example::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> import gradhub_compat.chainer.functions as F
    >>> x = chainer.Variable(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32))
    >>> y = F.sum(x, axis=1)
    >>> y
    variable([3., 7.])
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal, overload

import numpy as np
from gradhub.batching import refuse_data
from gradhub.modes import is_tracing
from gradhub.variable import Variable as _NativeVariable
from gradhub.variable import observe_read

from .._common import adopt, device_array
from .._common import call_native as _call
from . import Variable, as_variable, config, match_dtype

__all__ = [
    "absolute",
    "absolute_error",
    "arccos",
    "arcsin",
    "arctan",
    "average",
    "average_pooling_2d",
    "batch_matmul",
    "broadcast_to",
    "cast",
    "ceil",
    "clip",
    "concat",
    "convolution_2d",
    "cos",
    "cosh",
    "dropout",
    "elu",
    "embed_id",
    "erf",
    "exp",
    "expand_dims",
    "expm1",
    "flatten",
    "flip",
    "floor",
    "get_item",
    "identity",
    "leaky_relu",
    "linear",
    "log",
    "log1p",
    "log2",
    "log10",
    "log_softmax",
    "logsumexp",
    "lstm",
    "matmul",
    "max",
    "max_pooling_2d",
    "maximum",
    "mean",
    "mean_absolute_error",
    "mean_squared_error",
    "min",
    "minimum",
    "prod",
    "relu",
    "reshape",
    "selu",
    "sigmoid",
    "sigmoid_cross_entropy",
    "sin",
    "sinh",
    "slstm",
    "softmax",
    "softmax_cross_entropy",
    "softplus",
    "split_axis",
    "sqrt",
    "square",
    "squared_error",
    "squeeze",
    "stack",
    "sum",
    "tan",
    "tanh",
    "tile",
    "transpose",
    "where",
]


def _out(v: Any) -> Any:
    return adopt(v, Variable)


def _arr(x: Any, where: str) -> Any:
    """The array of a Variable or array-like (for labels and masks, which take no gradient),
    read in Python by the function ``where`` (refused inside a step that gradhub.compile
    traces: what Python computes from it would be computed at the first call only)."""
    if isinstance(x, _NativeVariable):
        refuse_data(x, f"chainer.functions.{where}")
        observe_read(x, f"chainer.functions.{where}, which reads it in Python")
        return x._data
    return device_array(x)


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _pair(v: Any, what: str, where: str) -> tuple[int, int]:
    if isinstance(v, (int, np.integer)):
        return (int(v), int(v))
    t = tuple(int(a) for a in v)
    if len(t) != 2:
        raise ValueError(f"{where}: {what} must be an int or a pair of ints, got {v!r}")
    return (t[0], t[1])


def _const(arr: Any, like: Any) -> _NativeVariable:
    """A constant leaf on the device of ``like``."""
    dev = like.device if isinstance(like, _NativeVariable) else None
    data = dev.asarray(arr) if dev is not None else device_array(arr)
    return _NativeVariable.leaf(data, False)


def _match(fname: str, *xs: Any) -> list[Any]:
    """The operands of a chainer function of several data operands, with chainer's dtype rule
    for functions (their ``check_type_forward``): the Variables and arrays among them must have
    one dtype, else TypeError naming the function and both dtypes (chainer raises InvalidType;
    unlike the operators, functions cast no array); numpy scalars are cast to that dtype."""
    dt = next((_dtype(x) for x in xs if _dtype(x) is not None), None)
    if dt is None:
        return list(xs)
    where = f"chainer F.{fname}"
    for x in xs:
        other = _dtype(x)
        if other is not None and other != dt:
            raise TypeError(
                f"{where}: the operands have different dtypes {dt} and {other}; chainer's "
                "functions require one dtype (cast the array of one of them)"
            )
    return [match_dtype(where, dt, x) if isinstance(x, np.generic) else x for x in xs]


def _dtype(x: Any) -> Any:
    """The dtype of a Variable or array operand, None for scalars and None."""
    if isinstance(x, _NativeVariable):
        return x._data.dtype
    if x is None or isinstance(x, (np.generic, int, float)):
        return None
    return getattr(x, "dtype", None)


def _check_float(fname: str, **operands: Any) -> None:
    """Refuse operands that are not floating point, as chainer's ``dtype.kind == 'f'`` checks
    (TypeError naming the function and the argument)."""
    for what, x in operands.items():
        dt = _dtype(x)
        if dt is None and x is not None and not isinstance(x, (np.generic, int, float)):
            dt = np.asarray(x).dtype
        if dt is not None and dt.kind != "f":
            raise TypeError(
                f"chainer F.{fname}: {what} must be floating point (as in chainer), got dtype {dt}"
            )


def _as_dtype(y: Any, dtype: Any) -> Any:
    """``y`` cast (differentiably) to ``dtype``: chainer's ``.astype(x.dtype)`` of the result of
    a function computed in the operands' promoted dtype."""
    return y if y.dtype == dtype else _call("Cast", y, dtype=np.dtype(dtype).name)


def _unary(name: str, native: str, formula: str) -> Callable[[Any], Variable]:
    def fn(x: Any) -> Variable:
        return _out(_call(native, x))  # type: ignore[no-any-return]

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"Elementwise {formula} (chainer's ``F.{name}``; gradhub's ``{native}``).\n\n"
        f"Example::\n\n    >>> import numpy as np\n"
        f"    >>> import gradhub_compat.chainer.functions as F\n"
        f"    >>> F.{name}(np.array([0.5], dtype=np.float32)).shape\n    (1,)\n"
    )
    return fn


sin = _unary("sin", "Sin", "sin(x)")
cos = _unary("cos", "Cos", "cos(x)")
tan = _unary("tan", "Tan", "tan(x)")
arcsin = _unary("arcsin", "ASin", "arcsin(x)")
arccos = _unary("arccos", "ACos", "arccos(x)")
arctan = _unary("arctan", "ATan", "arctan(x)")
sinh = _unary("sinh", "Sinh", "sinh(x)")
cosh = _unary("cosh", "Cosh", "cosh(x)")
exp = _unary("exp", "Exp", "exp(x)")
expm1 = _unary("expm1", "Expm1", "exp(x) - 1")
log = _unary("log", "Log", "log(x)")
log1p = _unary("log1p", "Log1p", "log(1 + x)")
sqrt = _unary("sqrt", "Sqrt", "sqrt(x)")
tanh = _unary("tanh", "Tanh", "tanh(x)")
sigmoid = _unary("sigmoid", "Sigmoid", "1 / (1 + exp(-x))")
relu = _unary("relu", "ReLU", "max(x, 0)")
erf = _unary("erf", "Erf", "erf(x)")
absolute = _unary("absolute", "Abs", "|x|")


def log2(x: Any) -> Variable:
    """Elementwise log2(x) = log(x) / log(2); x must be floating point (as chainer).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.log2(np.array([1.0, 2.0, 4.0], dtype=np.float32))
        variable([0., 1., 2.])
    """
    _check_float("log2", x=x)
    return _out(_call("Log", x) * (1.0 / math.log(2.0)))  # type: ignore[no-any-return]


def log10(x: Any) -> Variable:
    """Elementwise log10(x) = log(x) / log(10); x must be floating point (as chainer).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.log10(np.array([1.0, 100.0], dtype=np.float32))
        variable([0., 2.])
    """
    _check_float("log10", x=x)
    return _out(_call("Log", x) * (1.0 / math.log(10.0)))  # type: ignore[no-any-return]


def identity(*inputs: Any) -> Variable | tuple[Variable, ...]:
    """The inputs themselves as new Variables of the graph (gradient 1): one Variable for one
    input, a tuple for several, as chainer.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.identity(np.array([1.0], dtype=np.float32))
        variable([1.])
    """
    if not inputs:
        raise TypeError("chainer F.identity: at least one input is required")
    outs = tuple(_out(_call("Reshape", x, shape=_shape(x))) for x in inputs)
    return outs[0] if len(outs) == 1 else outs


def cast(x: Any, typ: Any) -> Variable:
    """x cast to the dtype ``typ`` (the gradient is cast back to x's dtype). As chainer, when x
    already has dtype ``typ`` and ``chainer.config.enable_backprop`` is False, x itself (as a
    Variable) is returned.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.cast(np.array([1.5], dtype=np.float32), np.float64).dtype
        dtype('float64')
    """
    dt = np.dtype(typ)
    xdt = _dtype(x) if _dtype(x) is not None else np.asarray(x).dtype
    if xdt == dt:
        if not config.enable_backprop:
            return as_variable(x)
        return _out(_call("Reshape", x, shape=_shape(x)))  # type: ignore[no-any-return]
    return _out(_call("Cast", x, dtype=dt.name))  # type: ignore[no-any-return]


def square(x: Any) -> Variable:
    """Elementwise x ** 2.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.square(np.array([3.0], dtype=np.float32))
        variable([9.])
    """
    return _out(_call("PowScalar", x, val=2.0))  # type: ignore[no-any-return]


def leaky_relu(x: Any, slope: float = 0.2) -> Variable:
    """x for x >= 0, ``slope * x`` otherwise (chainer's default slope is 0.2).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.leaky_relu(np.array([-1.0, 2.0], dtype=np.float32))
        variable([-0.2,  2. ])
    """
    return _out(_call("LeakyReLU", x, alpha=slope))  # type: ignore[no-any-return]


def elu(x: Any, alpha: float = 1.0) -> Variable:
    """x for x >= 0, ``alpha * (exp(x) - 1)`` otherwise.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.elu(np.array([0.0, 2.0], dtype=np.float32))
        variable([0., 2.])
    """
    return _out(_call("ELU", x, alpha=alpha))  # type: ignore[no-any-return]


def selu(x: Any, alpha: float = 1.6732632423543772, scale: float = 1.0507009873554805) -> Variable:
    """``scale * elu(x, alpha)``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.selu(np.array([0.0], dtype=np.float32))
        variable([0.])
    """
    return _out(_call("SELU", x, scale=scale, alpha=alpha))  # type: ignore[no-any-return]


def softplus(x: Any, beta: float = 1.0) -> Variable:
    """``log(1 + exp(beta * x)) / beta``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.softplus(np.array([0.0], dtype=np.float32)).array.round(4)
        array([0.6931], dtype=float32)
    """
    if beta == 1.0:
        return _out(_call("Softplus", x))  # type: ignore[no-any-return]
    return _out(_call("Softplus", _call("MulScalar", x, val=beta)) * (1.0 / beta))  # type: ignore[no-any-return]


def clip(x: Any, x_min: float | None, x_max: float | None) -> Variable:
    """x clipped to [x_min, x_max] (gradient 1 inside, 0 outside); one bound may be None
    (one-sided clipping, as chainer 7).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.clip(np.array([-2.0, 0.5, 2.0], dtype=np.float32), -1.0, 1.0)
        variable([-1. ,  0.5,  1. ])
        >>> F.clip(np.array([-2.0, 0.5, 2.0], dtype=np.float32), None, 1.0)
        variable([-2. ,  0.5,  1. ])
    """
    if x_min is None and x_max is None:
        raise ValueError("chainer F.clip: x_min and x_max are both None; set either (or both)")
    if x_min is None:
        return _out(_call("MinimumScalar", x, val=x_max))  # type: ignore[no-any-return]
    if x_max is None:
        return _out(_call("MaximumScalar", x, val=x_min))  # type: ignore[no-any-return]
    if x_min >= x_max:
        raise ValueError(f"chainer F.clip: need x_min < x_max, got {x_min!r} and {x_max!r}")
    return _out(_call("ClipByValue", x, x_min, x_max))  # type: ignore[no-any-return]


def maximum(x1: Any, x2: Any) -> Variable:
    """Elementwise maximum of two arrays of the same shape; at a tie the gradient goes to
    ``x1`` (chainer's ``x1 >= x2``)."""
    x1, x2 = _match("maximum", x1, x2)
    return _out(_call("Maximum2", x1, x2, ties="first"))  # type: ignore[no-any-return]


def minimum(x1: Any, x2: Any) -> Variable:
    """Elementwise minimum of two arrays of the same shape; at a tie the gradient goes to
    ``x1`` (chainer's ``x1 <= x2``)."""
    x1, x2 = _match("minimum", x1, x2)
    return _out(_call("Minimum2", x1, x2, ties="first"))  # type: ignore[no-any-return]


def where(condition: Any, x: Any, y: Any) -> Variable:
    """``x`` where ``condition`` is true, ``y`` elsewhere (no gradient w.r.t. the condition)."""
    x, y = _match("where", x, y)
    if isinstance(condition, _NativeVariable):  # a recorded cast (computed again by replays)
        c = condition
        cond = c if c.dtype == np.bool_ else _call("Cast", c, dtype="bool")
    else:
        cond = _const(device_array(condition).astype(bool), x)  # (an xp mask stays put)
    return _out(_call("Where", cond, x, y))  # type: ignore[no-any-return]


def _constant_of(y: Any) -> Variable:
    """``y`` cut from the graph: a Variable that needs no gradient and has no creator, as
    chainer's ``as_variable(array)`` results (recorded without a gradient inside a trace)."""
    return _out(y.detach())  # type: ignore[no-any-return]


def _rounding(native: str, fname: str, formula: str) -> Callable[[Any], Variable]:
    def fn(x: Any) -> Variable:
        return _constant_of(_call(native, x))

    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = (
        f"Elementwise {formula}, a constant as chainer's (a Variable without a creator that "
        f"needs no gradient), of x's dtype (integers are returned unchanged).\n\n"
        f"Example::\n\n    >>> import numpy as np\n"
        f"    >>> import gradhub_compat.chainer.functions as F\n"
        f"    >>> F.{fname}(np.array([-1.5, 0.5], dtype=np.float32)).requires_grad\n    False\n"
    )
    return fn


floor = _rounding("Floor", "floor", "floor(x)")


ceil = _rounding("Ceil", "ceil", "ceil(x)")


# -- reductions -----------------------------------------------------------------------------


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Sum of the elements over ``axis`` (all axes when None).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.sum(np.ones((2, 3), dtype=np.float32), axis=0)
        variable([2., 2., 2.])
    """
    if not (axis is None or isinstance(axis, (int, np.integer, tuple))):
        raise TypeError(
            f"chainer F.sum: axis must be None, an int or a tuple of ints (as chainer: 'None, "
            f"int or tuple of int are required'), got {type(axis).__name__}"
        )
    return _out(_call("Sum", x, axis=axis, keepdims=keepdims))  # type: ignore[no-any-return]


def mean(x: Any, axis: Any = None, weights: Any = None, keepdims: bool = False) -> Variable:
    """The (weighted) mean over ``axis`` (all axes when None).

    ``weights``: None, or an array of x's shape (``axis=None``) or of shape ``(x.shape[axis],)``
    (an int ``axis``); the result is ``sum(x * w) / sum(w)``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
        >>> F.mean(x), F.mean(x, weights=np.array([1.0, 0.0, 1.0], dtype=np.float32))
        (variable(2.), variable(2.))
    """
    if weights is None:
        return _out(_call("Mean", x, axis=axis, keepdims=keepdims))  # type: ignore[no-any-return]
    w = weights if isinstance(weights, _NativeVariable) else _const(device_array(weights), x)
    if axis is None:
        if tuple(w.shape) != _shape(x):
            raise ValueError(
                f"chainer F.mean: weights of shape {tuple(w.shape)} must have x's shape "
                f"{_shape(x)} when axis is None"
            )
        wb = w
    else:
        if isinstance(axis, (tuple, list)) and len(axis) == 1:
            axis = axis[0]  # chainer accepts a one-element tuple
        if not isinstance(axis, (int, np.integer)):
            raise ValueError(
                f"chainer F.mean: weights need axis None, an int or a one-element tuple, got "
                f"{axis!r}"
            )
        nd = len(_shape(x))
        ax = int(axis) % nd
        if tuple(w.shape) != (_shape(x)[ax],):
            raise ValueError(
                f"chainer F.mean: weights must have shape ({_shape(x)[ax]},) for axis={axis}, "
                f"got {tuple(w.shape)}"
            )
        wb = _call("Reshape", w, shape=tuple(w.shape[0] if i == ax else 1 for i in range(nd)))
    num = _call(
        "Sum", x * wb if isinstance(x, _NativeVariable) else wb * x, axis=axis, keepdims=keepdims
    )
    return _out(num / _call("Sum", w))  # type: ignore[no-any-return]


#: chainer's ``F.average`` (``F.mean`` is the same function in chainer 7.8.1).
average = mean


def max(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """The maximum over ``axis`` (all axes when None); every element equal to the maximum gets
    the whole gradient (chainer's ``x == y`` mask)."""
    return _out(_call("Max", x, axis=axis, keepdims=keepdims, ties="all"))  # type: ignore[no-any-return]


def min(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """The minimum over ``axis`` (all axes when None); every element equal to the minimum gets
    the whole gradient (chainer's ``x == y`` mask)."""
    return _out(_call("Min", x, axis=axis, keepdims=keepdims, ties="all"))  # type: ignore[no-any-return]


def prod(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """The product over ``axis`` (all axes when None)."""
    return _out(_call("Prod", x, axis=axis, keepdims=keepdims))  # type: ignore[no-any-return]


def logsumexp(x: Any, axis: Any = None) -> Variable:
    """``log(sum(exp(x), axis))``, computed stably."""
    return _out(_call("LogSumExp", x, axis=axis))  # type: ignore[no-any-return]


def softmax(x: Any, axis: int = 1) -> Variable:
    """``exp(x) / sum(exp(x), axis)`` over ``axis`` (chainer's default: 1).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.softmax(np.zeros((1, 4), dtype=np.float32))
        variable([[0.25, 0.25, 0.25, 0.25]])
    """
    return _out(_call("Softmax", x, axis=axis))  # type: ignore[no-any-return]


def log_softmax(x: Any, axis: int = 1) -> Variable:
    """``x - logsumexp(x, axis)`` over ``axis`` (chainer's default: 1)."""
    return _out(_call("LogSoftmax", x, axis=axis))  # type: ignore[no-any-return]


# -- losses ---------------------------------------------------------------------------------


def _reduce_masked(per: Any, mask: np.ndarray | None, normalize: bool, n_batch: int) -> Any:
    count = float(mask.sum()) if normalize and mask is not None else float(n_batch)
    return _call("Sum", per) * (1.0 / _maxf(count, 1.0))


def _maxf(a: float, b: float) -> float:
    return a if a > b else b


def softmax_cross_entropy(
    x: Any,
    t: Any,
    normalize: bool = True,
    cache_score: bool = True,
    class_weight: Any = None,
    ignore_label: int = -1,
    reduce: str = "mean",
    enable_double_backprop: bool = False,
    soft_target_loss: str = "cross-entropy",
) -> Variable:
    """Softmax cross entropy of scores ``x`` (N, C, ...) and labels ``t``, as chainer 7.8.1.

    Integer labels ``t`` (N, ...): the loss of a label is
    :math:`-w_{t} \\log \\mathrm{softmax}(x)_{t}` (:math:`w` is ``class_weight``, an array of
    shape (C,), or 1); labels equal to ``ignore_label`` contribute 0. ``reduce="mean"``: the sum
    divided by the number of non-ignored labels (``normalize=True``) or by N; ``reduce="no"``:
    the loss per label, of t's shape.

    Float labels ``t`` of x's shape are soft targets (a distribution over the classes, axis 1):
    the loss per position is :math:`-\\sum_c t_c \\log \\mathrm{softmax}(x)_c`
    (``soft_target_loss="cross-entropy"``) or :math:`\\sum_c t_c (\\log(t_c + 10^{-7}) -
    \\log \\mathrm{softmax}(x)_c)` (``"kl-divergence"``); ``reduce="mean"`` divides the sum
    by ``x.size / x.shape[1]``. ``cache_score`` and ``enable_double_backprop`` are accepted
    (every gradhub graph is differentiable again). The loss is differentiable with respect to
    ``x`` only.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.zeros((2, 4), dtype=np.float32)
        >>> round(float(F.softmax_cross_entropy(x, np.array([1, -1])).array), 4)  # log 4
        1.3863
        >>> w = np.array([1.0, 2.0, 1.0, 1.0], dtype=np.float32)
        >>> round(float(F.softmax_cross_entropy(x, np.array([1, -1]), class_weight=w).array), 4)
        2.7726
        >>> soft = np.full((2, 4), 0.25, dtype=np.float32)
        >>> round(float(F.softmax_cross_entropy(x, soft).array), 4)
        1.3863
    """
    where = "chainer F.softmax_cross_entropy"
    if soft_target_loss not in ("cross-entropy", "kl-divergence"):
        raise ValueError(
            f"{where}: soft_target_loss must be 'cross-entropy' or 'kl-divergence', got "
            f"{soft_target_loss!r}"
        )
    if reduce not in ("mean", "no"):
        raise ValueError(f"{where}: reduce must be 'mean' or 'no', got {reduce!r}")
    if class_weight is not None:
        if isinstance(class_weight, _NativeVariable):
            raise ValueError(
                f"{where}: class_weight should be a numpy.ndarray or cupy.ndarray, not a "
                "chainer.Variable"
            )
        if class_weight.ndim != 1:
            raise ValueError(f"{where}: class_weight.ndim should be 1, got {class_weight.ndim}")
        if class_weight.dtype.kind != "f":
            raise ValueError(
                f"{where}: the dtype of class_weight should be 'f', got {class_weight.dtype}"
            )
    _check_float("softmax_cross_entropy", x=x)
    if (
        isinstance(t, _NativeVariable)
        and t.dtype.kind in "iu"
        and class_weight is None
        and len(_shape(x)) >= 2
        and tuple(t.shape) == (_shape(x)[0], *_shape(x)[2:])
    ):
        return _sce_of_label_variable(x, t, normalize, ignore_label, reduce, where)
    labels = _arr(t, "softmax_cross_entropy (its labels t)")
    xs = _shape(x)
    dt = _dtype(x) if _dtype(x) is not None else np.asarray(x).dtype
    if labels.dtype.kind == "f":
        if tuple(labels.shape) != xs:
            raise ValueError(
                f"{where}: soft targets t (float labels) must have x's shape {xs}, got "
                f"{tuple(labels.shape)}"
            )
        return _soft_target_loss(x, labels.astype(dt, copy=False), soft_target_loss, reduce)
    if labels.dtype.kind not in "iu":
        raise TypeError(
            f"{where}: t must hold integer labels or float soft targets, got dtype {labels.dtype}"
        )
    if len(xs) < 2 or tuple(labels.shape) != (xs[0], *xs[2:]):
        raise ValueError(
            f"{where}: t of shape {tuple(labels.shape)} does not match "
            f"x of shape {xs} (expected {(xs[0], *xs[2:]) if len(xs) >= 2 else '(N, ...)'})"
        )
    if class_weight is not None and tuple(class_weight.shape) != (xs[1],):
        raise ValueError(
            f"{where}: class_weight must have shape ({xs[1]},) (one weight per class of x), "
            f"got {tuple(class_weight.shape)}"
        )
    mask = labels != ignore_label
    if not ((labels >= 0) & (labels < xs[1]) | ~mask).all():
        raise ValueError(
            f"{where}: each label t must satisfy 0 <= t < x.shape[1] ({xs[1]}) or "
            f"t == ignore_label ({ignore_label}) (as chainer's debug mode checks)"
        )
    safe = np.where(mask, labels, 0)
    target = _const(np.expand_dims(safe, 1), x)
    per = _call("SoftmaxCrossEntropy", x, target, axis=1)
    per = _call("Reshape", per, shape=tuple(labels.shape))
    if class_weight is not None:
        cw = class_weight
        if not isinstance(cw, np.ndarray):
            cw = per.device.to_numpy(cw)
        per = per * _const((cw[safe] * mask).astype(per.dtype), per)
    elif not mask.all():
        per = per * _const(mask.astype(per.dtype), per)
    if reduce == "no":
        return _out(per)  # type: ignore[no-any-return]
    return _out(_reduce_masked(per, mask, normalize, xs[0]))  # type: ignore[no-any-return]


def _sce_of_label_variable(
    x: Any, t: _NativeVariable, normalize: bool, ignore_label: int, reduce: str, where: str
) -> Variable:
    """softmax_cross_entropy of integer labels held by a Variable, by recorded functions of
    ``t`` (a compiled step computes the mask and the count again at every call); the same
    values as the path of labels read in Python (a product by a mask of ones is exact)."""
    xs = _shape(x)
    if not is_tracing():  # (inside a trace the kernel checks the labels at every call)
        labels = t._data
        mask_a = labels != ignore_label
        if not ((labels >= 0) & (labels < xs[1]) | ~mask_a).all():
            raise ValueError(
                f"{where}: each label t must satisfy 0 <= t < x.shape[1] ({xs[1]}) or "
                f"t == ignore_label ({ignore_label}) (as chainer's debug mode checks)"
            )
    mask = _call("NotEqualScalar", t, val=ignore_label)
    safe = _call("Mul2", t, _call("Cast", mask, dtype=t.dtype.name))
    target = _call("Reshape", safe, shape=(xs[0], 1, *xs[2:]))
    per = _call("SoftmaxCrossEntropy", x, target, axis=1)
    per = _call("Reshape", per, shape=tuple(t.shape))
    per = per * _call("Cast", mask, dtype=per.dtype.name)
    if reduce == "no":
        return _out(per)  # type: ignore[no-any-return]
    if not normalize:
        return _out(_reduce_masked(per, None, False, xs[0]))  # type: ignore[no-any-return]
    count = _call("MaximumScalar", _call("Sum", _call("Cast", mask, dtype="float64")), val=1.0)
    scale = _call("Cast", _call("RDivScalar", count, val=1.0), dtype=per.dtype.name)
    return _out(_call("Sum", per) * scale)  # type: ignore[no-any-return]


def _soft_target_loss(x: Any, t: Any, kind: str, reduce: str) -> Variable:
    """chainer's soft-target loss of scores ``x`` and target distributions ``t`` (axis 1)."""
    log_y = _call("LogSoftmax", x, axis=1)
    per = -_call("Sum", log_y * _const(t, x), axis=1)
    if kind == "kl-divergence":
        per = per + _const(np.sum(t * np.log(t + 1e-7), axis=1), x)
    if reduce == "no":
        return _out(per)  # type: ignore[no-any-return]
    n = int(math.prod(_shape(x))) // _shape(x)[1] if _shape(x)[1] else 0
    return _out(_call("Sum", per) * (1.0 / n if n else 0.0))  # type: ignore[no-any-return]


def sigmoid_cross_entropy(x: Any, t: Any, normalize: bool = True, reduce: str = "mean") -> Variable:
    """Sigmoid cross entropy of scores ``x`` and binary labels ``t`` (same shape; -1 ignored).

    ``reduce="mean"``: the sum divided by the number of non-ignored labels (``normalize=True``)
    or by the batch size; ``reduce="no"``: the elementwise loss.
    """
    if reduce not in ("mean", "no"):
        raise ValueError(
            f"chainer F.sigmoid_cross_entropy: reduce must be 'mean' or 'no', got {reduce!r}"
        )
    labels = _arr(t, "sigmoid_cross_entropy (its labels t)")
    if tuple(labels.shape) != _shape(x):
        raise ValueError(
            f"chainer F.sigmoid_cross_entropy: t of shape {tuple(labels.shape)} must have x's "
            f"shape {_shape(x)}"
        )
    mask = labels != -1
    dtype = x.dtype if isinstance(x, _NativeVariable) else np.asarray(x).dtype
    target = _const(np.where(mask, labels, 0).astype(dtype), x)
    per = _call("SigmoidCrossEntropy", x, target)
    if not mask.all():
        per = per * _const(mask.astype(per.dtype), per)
    if reduce == "no":
        return _out(per)  # type: ignore[no-any-return]
    return _out(_reduce_masked(per, mask, normalize, _shape(x)[0]))  # type: ignore[no-any-return]


def _loss_operands(fname: str, x0: Any, x1: Any) -> list[Any]:
    """The operands of chainer's elementwise loss ``fname``: of equal shapes (chainer does not
    broadcast them), under chainer's dtype rule (:func:`_match`)."""
    s0, s1 = _shape(x0), _shape(x1)
    if s0 != s1:
        raise ValueError(
            f"chainer F.{fname}: x0 and x1 must have the same shape (chainer does not "
            f"broadcast them), got {s0} and {s1}"
        )
    _check_float(fname, x0=x0, x1=x1)
    return _match(fname, x0, x1)


def squared_error(x0: Any, x1: Any) -> Variable:
    """Elementwise ``(x0 - x1) ** 2`` of two arrays of the same shape."""
    x0, x1 = _loss_operands("squared_error", x0, x1)
    d = _call("Sub2", x0, x1)
    return _out(d * d)  # type: ignore[no-any-return]


def absolute_error(x0: Any, x1: Any) -> Variable:
    """Elementwise ``|x0 - x1|`` of two arrays of the same shape."""
    x0, x1 = _loss_operands("absolute_error", x0, x1)
    return _out(_call("Abs", _call("Sub2", x0, x1)))  # type: ignore[no-any-return]


def mean_squared_error(x0: Any, x1: Any) -> Variable:
    """``mean((x0 - x1) ** 2)`` over all elements (a 0-d Variable); x0 and x1 must have the
    same shape.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> a = np.array([1.0, 2.0], dtype=np.float32)
        >>> F.mean_squared_error(a, a + 2)
        variable(4.)
    """
    x0, x1 = _loss_operands("mean_squared_error", x0, x1)
    d = _call("Sub2", x0, x1)
    return _out(_call("Sum", d * d) * (1.0 / _maxf(d.size, 1)))  # type: ignore[no-any-return]


def mean_absolute_error(x0: Any, x1: Any) -> Variable:
    """``mean(|x0 - x1|)`` over all elements (a 0-d Variable); x0 and x1 must have the same
    shape."""
    x0, x1 = _loss_operands("mean_absolute_error", x0, x1)
    d = _call("Abs", _call("Sub2", x0, x1))
    return _out(_call("Sum", d) * (1.0 / _maxf(d.size, 1)))  # type: ignore[no-any-return]


# -- linear algebra -------------------------------------------------------------------------


def linear(x: Any, W: Any, b: Any = None, n_batch_axes: int = 1) -> Variable:
    """``x W^T + b`` with ``W`` of shape (out, in), as chainer; x is flattened after the batch
    axes.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((2, 3), dtype=np.float32)
        >>> W = np.arange(6, dtype=np.float32).reshape(2, 3)
        >>> F.linear(x, W)
        variable([[ 3., 12.],
                  [ 3., 12.]])
    """
    if n_batch_axes < 1:
        raise ValueError(f"chainer F.linear: n_batch_axes must be >= 1, got {n_batch_axes}")
    if len(_shape(W)) != 2:
        raise ValueError(f"chainer F.linear: W must be 2-d (out, in), got shape {_shape(W)}")
    _check_float("linear", x=x, W=W, b=b)
    dt = _dtype(x) if _dtype(x) is not None else np.asarray(x).dtype
    if b is not None and _dtype(b) is not None and _dtype(b) != dt:
        raise TypeError(
            f"chainer F.linear: b has dtype {_dtype(b)} but x has dtype {dt}; chainer requires "
            "b.dtype == x.dtype"
        )
    wt = _call("Transpose", W, axes=(1, 0))
    y = _call("Affine", x, wt, b, base_axis=n_batch_axes)
    return _out(_as_dtype(y, dt))  # type: ignore[no-any-return]


def matmul(a: Any, b: Any, transa: bool = False, transb: bool = False) -> Variable:
    """The matrix product of ``a`` and ``b`` (batched over leading axes), optionally transposed.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> a = np.eye(2, dtype=np.float32)
        >>> F.matmul(a, 2 * a)
        variable([[2., 0.],
                  [0., 2.]])
    """
    _check_float("matmul", a=a, b=b)  # two float dtypes: numpy's promotion, as chainer
    return _out(_call("BatchMatmul", a, b, transpose_a=transa, transpose_b=transb))  # type: ignore[no-any-return]


def batch_matmul(a: Any, b: Any, transa: bool = False, transb: bool = False) -> Variable:
    """The batched matrix products ``a[i] @ b[i]`` (deprecated in chainer, which warns; use
    :func:`matmul`). As chainer: float32 operands of 2 or 3 axes; a 2-d operand (n, k) is the
    batch of column vectors (n, k, 1); the result is 3-d.

    Example::

        >>> import numpy as np
        >>> import warnings
        >>> import gradhub_compat.chainer.functions as F
        >>> a = np.ones((2, 3), dtype=np.float32)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     F.batch_matmul(a, a, transb=True).shape
        (2, 3, 3)
    """
    warnings.warn(
        "batch_matmul is deprecated. Use matmul instead.", DeprecationWarning, stacklevel=2
    )
    ops = []
    for what, x in (("a", a), ("b", b)):
        dt = _dtype(x) if _dtype(x) is not None else np.asarray(x).dtype
        if dt != np.float32:
            raise TypeError(
                f"chainer F.batch_matmul: {what} must be float32 (as chainer), got dtype {dt}"
            )
        shape = _shape(x)
        if len(shape) not in (2, 3):
            raise TypeError(
                f"chainer F.batch_matmul: {what} must have 2 or 3 axes (as chainer), got shape "
                f"{shape}"
            )
        ops.append(_call("Reshape", x, shape=(*shape[:2], -1)) if len(shape) == 2 else x)
    ka = ops[0].shape[1 if transa else 2]
    kb = ops[1].shape[2 if transb else 1]
    if ka != kb:
        raise ValueError(
            f"chainer F.batch_matmul: the inner sizes differ ({ka} and {kb}) for shapes "
            f"{_shape(a)} and {_shape(b)} with transa={transa}, transb={transb}"
        )
    y = _call("BatchMatmul", ops[0], ops[1], transpose_a=transa, transpose_b=transb)
    return _out(y)  # type: ignore[no-any-return]


# -- shapes ---------------------------------------------------------------------------------


def reshape(x: Any, shape: Sequence[int]) -> Variable:
    """x with another shape (one dimension may be -1)."""
    shape = tuple(int(s) for s in shape)
    size = int(math.prod(_shape(x)))
    if shape.count(-1) == 1:
        rest = int(math.prod(s for s in shape if s != -1))
        shape = tuple(size // rest if s == -1 else s for s in shape) if rest else shape
    if int(math.prod(shape)) != size:
        raise ValueError(f"chainer F.reshape: cannot reshape {_shape(x)} into {shape}")
    return _out(_call("Reshape", x, shape=shape))  # type: ignore[no-any-return]


def flatten(x: Any) -> Variable:
    """x as a 1-d Variable."""
    return reshape(x, (-1,))


def transpose(x: Any, axes: Sequence[int] | None = None) -> Variable:
    """x with permuted axes (reversed when None)."""
    nd = len(_shape(x))
    perm = tuple(range(nd))[::-1] if axes is None else tuple(int(a) % nd for a in axes)
    return _out(_call("Transpose", x, axes=perm))  # type: ignore[no-any-return]


def broadcast_to(x: Any, shape: Sequence[int]) -> Variable:
    """x broadcast to ``shape``."""
    return _out(_call("BroadcastTo", x, shape=tuple(int(s) for s in shape)))  # type: ignore[no-any-return]


def expand_dims(x: Any, axis: int) -> Variable:
    """x with a new axis of length 1 at ``axis``."""
    return _out(_call("ExpandDims", x, axis=axis))  # type: ignore[no-any-return]


def squeeze(x: Any, axis: Any = None) -> Variable:
    """x without its axes of length 1 (those in ``axis`` when given)."""
    shape = _shape(x)
    nd = len(shape)
    if axis is None:
        axes = {i for i, s in enumerate(shape) if s == 1}
    else:
        axes = {int(a) % nd for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
        for a in axes:
            if shape[a] != 1:
                raise ValueError(f"chainer F.squeeze: axis {a} of shape {shape} is not 1")
    new = tuple(s for i, s in enumerate(shape) if i not in axes)
    return _out(_call("Reshape", x, shape=new))  # type: ignore[no-any-return]


def concat(xs: Sequence[Any], axis: int = 1) -> Variable:
    """The Variables ``xs`` joined along ``axis`` (chainer's default: 1)."""
    return _out(_call("Concatenate", *_match("concat", *xs), axis=axis))  # type: ignore[no-any-return]


def stack(xs: Sequence[Any], axis: int = 0) -> Variable:
    """The Variables ``xs`` stacked along a new axis ``axis``."""
    return _out(_call("Stack", *_match("stack", *xs), axis=axis))  # type: ignore[no-any-return]


def get_item(x: Any, slices: Any) -> Variable:
    """``x[slices]`` (basic and integer-array indexing)."""
    return _out(_call("GetItem", x, key=slices))  # type: ignore[no-any-return]


@overload
def split_axis(
    x: Any, indices_or_sections: Any, axis: int, force_tuple: Literal[True] = True
) -> tuple[Variable, ...]: ...


@overload
def split_axis(
    x: Any, indices_or_sections: Any, axis: int, force_tuple: bool = True
) -> tuple[Variable, ...] | Variable: ...


def split_axis(
    x: Any, indices_or_sections: Any, axis: int, force_tuple: bool = True
) -> tuple[Variable, ...] | Variable:
    """x split along ``axis`` into equal sections (an int) or at the given indices."""
    n = _shape(x)[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise ValueError(f"chainer F.split_axis: cannot split length {n} into {k} sections")
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        indices = [int(i) for i in indices_or_sections]
        if indices and indices[-1] > n:
            raise ValueError(
                f"chainer F.split_axis: the last index {indices[-1]} is past the end of axis "
                f"{axis} of length {n}"
            )
        bounds = [0, *indices, n]
    nd = len(_shape(x))
    ax = axis % nd
    parts = []
    for lo, hi in itertools.pairwise(bounds):
        key = tuple(slice(lo, hi) if i == ax else slice(None) for i in range(nd))
        parts.append(get_item(x, key))
    if len(parts) == 1 and not force_tuple:
        return parts[0]
    return tuple(parts)


def tile(x: Any, reps: Any) -> Variable:
    """x repeated ``reps`` times along each axis."""
    reps = (int(reps),) if isinstance(reps, (int, np.integer)) else tuple(int(r) for r in reps)
    return _out(_call("Tile", x, reps=reps))  # type: ignore[no-any-return]


def flip(x: Any, axis: int) -> Variable:
    """x reversed along ``axis``."""
    return _out(_call("Flip", x, axes=(int(axis),)))  # type: ignore[no-any-return]


# -- neural-network layers ------------------------------------------------------------------


def convolution_2d(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    cover_all: bool = False,
    *,
    dilate: Any = 1,
    groups: int = 1,
) -> Variable:
    """2-d convolution of x (N, C, H, W) with filters W (out, C // groups, kh, kw), plus b.

    ``cover_all=True`` adds the windows that cover the whole input, as chainer: the output has
    :math:`\\lfloor (n + 2p - d_k + s - 1) / s \\rfloor + 1` positions per axis
    (:math:`d_k = (k - 1) \\cdot dilate + 1`), the input padded with zeros past its end.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 3, 3), dtype=np.float32)
        >>> F.convolution_2d(x, np.ones((1, 1, 2, 2), dtype=np.float32)).shape
        (1, 1, 2, 2)
        >>> F.convolution_2d(x, np.ones((1, 1, 2, 2), dtype=np.float32), stride=2,
        ...                  cover_all=True).shape
        (1, 1, 2, 2)
    """
    where = "chainer F.convolution_2d"
    _check_float("convolution_2d", x=x, W=W, b=b)
    dt = _dtype(x) if _dtype(x) is not None else np.asarray(x).dtype
    if b is not None and _dtype(b) is not None and _dtype(b) != dt:
        raise TypeError(
            f"chainer F.convolution_2d: b has dtype {_dtype(b)} but x has dtype {dt}; chainer "
            "requires b.dtype == x.dtype"
        )
    p, st, dl = (
        _pair(pad, "pad", where),
        _pair(stride, "stride", where),
        _pair(dilate, "dilate", where),
    )
    if cover_all:
        xshape, wshape = _shape(x), _shape(W)
        if len(xshape) != 4 or len(wshape) != 4:
            raise ValueError(f"{where}: x and W must be 4-d, got shapes {xshape} and {wshape}")
        extra = []
        for i in range(2):
            n, dk = xshape[2 + i], (wshape[2 + i] - 1) * dl[i] + 1
            out = (n + 2 * p[i] - dk + st[i] - 1) // st[i] + 1
            extra.append(int(_maxf((out - 1) * st[i] + dk - (n + 2 * p[i]), 0)))
        if any(extra):
            x = _call(
                "Pad", x, pad_width=(p[0], p[0] + extra[0], p[1], p[1] + extra[1]), mode="constant"
            )
            p = (0, 0)
    y = _call("Convolution", x, W, b, base_axis=1, pad=p, stride=st, dilation=dl, group=int(groups))
    return _out(_as_dtype(y, dt))  # type: ignore[no-any-return]


def _pool_out(size: int, k: int, s: int, p: int, cover_all: bool) -> int:
    if cover_all:
        return (size + 2 * p - k + s - 1) // s + 1
    return (size + 2 * p - k) // s + 1


def max_pooling_2d(
    x: Any,
    ksize: Any,
    stride: Any = None,
    pad: Any = 0,
    cover_all: bool = True,
    return_indices: bool = False,
) -> Any:
    """2-d max pooling (stride defaults to ksize), as chainer: padding never wins the maximum,
    and ``cover_all=True`` (the default) adds windows covering the whole input.
    ``return_indices=True`` returns ``(y, indexes)``: ``indexes`` (an int64 array of y's shape,
    not a Variable) holds the position of each maximum inside its window, ``ky * kw + kx``
    counting the padding (the first maximum on ties), as chainer's CPU implementation.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
        >>> F.max_pooling_2d(x, 2)          # cover_all: 2 windows per axis
        variable([[[[4., 5.],
                    [7., 8.]]]])
    """
    where = "chainer F.max_pooling_2d"
    k = _pair(ksize, "ksize", where)
    s = k if stride is None else _pair(stride, "stride", where)
    p = _pair(pad, "pad", where)
    shape = _shape(x)
    if len(shape) != 4:
        raise ValueError(f"{where}: x must be 4-d (N, C, H, W), got shape {shape}")
    widths = []
    for i in range(2):
        n = shape[2 + i]
        out = _pool_out(n, k[i], s[i], p[i], cover_all)
        extra = _maxf((out - 1) * s[i] + k[i] - (n + 2 * p[i]), 0)
        widths += [p[i], p[i] + int(extra)]
    h = x
    if any(widths):
        h = _call("Pad", x, pad_width=tuple(widths), mode="constant", constant_value=-np.inf)
    y = _out(_call("MaxPooling", h, kernel=k, stride=s, ignore_border=True, pad=(0, 0)))
    if not return_indices:
        return y  # type: ignore[no-any-return]
    return y, _pool_indices(h if isinstance(h, _NativeVariable) else as_variable(h), k, s, y.shape)


def _pool_indices(h: _NativeVariable, k: tuple[int, int], s: tuple[int, int], out: Any) -> Any:
    """chainer's ``return_indices``: for each output, the position of the maximum inside its
    window (``ky * kw + kx``, counting padding; the first maximum on ties), an int64 array."""
    refuse_data(h, "chainer.functions.max_pooling_2d(return_indices=True)")
    observe_read(
        h, "chainer.functions.max_pooling_2d(return_indices=True), which reads it in Python"
    )
    data = h._data
    xp = h.device.xp
    oh, ow = out[2], out[3]
    best = None
    idx = xp.zeros(tuple(out), dtype=np.int64)
    for ky in range(k[0]):
        for kx in range(k[1]):
            win = data[
                :, :, ky : ky + s[0] * (oh - 1) + 1 : s[0], kx : kx + s[1] * (ow - 1) + 1 : s[1]
            ]
            if best is None:
                best = win.copy()
                continue
            better = win > best
            best = xp.where(better, win, best)
            idx = xp.where(better, ky * k[1] + kx, idx)
    return idx


def average_pooling_2d(x: Any, ksize: Any, stride: Any = None, pad: Any = 0) -> Variable:
    """2-d average pooling (stride defaults to ksize); padded zeros count in the average.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.average_pooling_2d(np.ones((1, 1, 4, 4), dtype=np.float32), 2).shape
        (1, 1, 2, 2)
    """
    where = "chainer F.average_pooling_2d"
    k = _pair(ksize, "ksize", where)
    s = k if stride is None else _pair(stride, "stride", where)
    return _out(  # type: ignore[no-any-return]
        _call(
            "AveragePooling",
            x,
            kernel=k,
            stride=s,
            ignore_border=True,
            pad=_pair(pad, "pad", where),
            including_pad=True,
        )
    )


def dropout(x: Any, ratio: float = 0.5, **kwargs: Any) -> Any:
    """Zero each element with probability ``ratio`` and scale the rest by 1 / (1 - ratio);
    the identity (``x`` itself as a Variable) when ``chainer.config.train`` is False.

    The mask is chainer's CPU one, ``x.dtype.type(1 / (1 - ratio)) * (numpy.random.rand(*x.shape)
    >= ratio)``, drawn from numpy's global generator (a run seeded with ``numpy.random.seed``
    drops what chainer drops); ``y = x * mask``, and the gradient is ``gy * mask``. chainer's
    keyword arguments: ``mask=`` (an array used instead of a draw) and ``return_mask=True``
    (returns ``(y, mask)``, the mask None in test mode); ``train=`` raises chainer's
    ValueError. Inside a step that gradhub.compile traces (without ``mask``), the mask is
    gradhub's draw at every call (a numpy draw would be fixed when the step is traced), and
    ``return_mask`` raises NotImplementedError naming the page.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> np.random.seed(0)
        >>> F.dropout(np.ones((2, 3), np.float32), 0.5)
        variable([[2., 2., 2.],
                  [2., 0., 2.]])
    """
    mask = kwargs.pop("mask", None)
    return_mask = kwargs.pop("return_mask", False)
    if "train" in kwargs:
        raise ValueError("train argument is not supported anymore. Use chainer.using_config")
    if kwargs:
        names = ", ".join(repr(k) for k in kwargs)
        raise TypeError(f"dropout() got unexpected keyword argument(s) {names}")
    if not 0.0 <= ratio < 1.0:
        raise ValueError(f"chainer F.dropout: ratio must be in [0, 1), got {ratio}")
    if not config.train:  # chainer: evaluation mode
        out = as_variable(x)
        return (out, None) if return_mask else out
    dt = _dtype(x)
    dt = np.dtype(dt if dt is not None else np.asarray(x).dtype)
    if dt.kind != "f":
        from .utils.type_check import InvalidType

        raise InvalidType(
            "x.dtype.kind == f",
            f"{dt.kind} != f",
            "\nInvalid operation is performed in: Dropout (Forward)\n\n"
            f"Expect: x.dtype.kind == f\nActual: {dt.kind} != f",
        )
    if mask is None and is_tracing():
        if return_mask:
            raise NotImplementedError(
                "chainer F.dropout: return_mask inside a step that gradhub.compile traces is "
                "not supported (the mask is drawn by gradhub at every call); see "
                "docs/migration-chainer.md"
            )
        return _out(_call("Dropout", x, p=ratio))
    if mask is None:
        scale = dt.type(1.0 / (1 - ratio))
        mask = scale * (np.random.rand(*_shape(x)) >= ratio)
    y = _out(_call("Mul2", x, _const(mask, x)))
    return (y, mask) if return_mask else y


def embed_id(x: Any, W: Any, ignore_label: int | None = None) -> Variable:
    """The rows of ``W`` selected by the integer ids ``x`` (rows of zeros for ``ignore_label``)."""
    if ignore_label is None and isinstance(x, _NativeVariable) and x.dtype.kind in "iu":
        return _out(_call("Embed", x, W))  # type: ignore[no-any-return]
    ids = _arr(x, "embed_id (its ids x, with ignore_label)")
    if ids.dtype.kind not in "iu":
        raise TypeError(f"chainer F.embed_id: x must hold integer ids, got dtype {ids.dtype}")
    if ignore_label is None:
        return _out(_call("Embed", _const(ids, W), W))  # type: ignore[no-any-return]
    mask = ids != ignore_label
    e = _call("Embed", _const(np.where(mask, ids, 0), W), W)
    return _out(e * _const(mask[..., None].astype(e.dtype), e))  # type: ignore[no-any-return]


def _lstm_invalid(expect: str, actual: str, label: str = "LSTM") -> Exception:
    """chainer's ``InvalidType`` of ``F.lstm``'s (or ``F.slstm``'s) ``check_type_forward``."""
    from .utils.type_check import InvalidType

    return InvalidType(
        expect,
        actual,
        f"\nInvalid operation is performed in: {label} (Forward)\n\nExpect: {expect}\n"
        f"Actual: {actual}",
    )


def _lstm_sigmoid(x: Any) -> Any:
    """chainer's ``_sigmoid`` of the LSTM gates: ``tanh(x / 2) / 2 + 1 / 2`` (the same values
    as chainer's CPU code, not ``1 / (1 + exp(-x))``)."""
    return _call(
        "AddScalar",
        _call("MulScalar", _call("Tanh", _call("MulScalar", x, val=0.5)), val=0.5),
        val=0.5,
    )


def lstm(c_prev: Any, x: Any) -> tuple[Variable, Variable]:
    """Long short-term memory units as an activation function (chainer's ``F.lstm``); returns
    ``(c, h)``.

    ``x`` (B, 4n, ...) holds the gate sources interleaved along axis 1, chainer's layout:
    ``x.reshape(B, n, 4, ...)[:, :, k]`` is a, i, f, o for k = 0, 1, 2, 3. With ``c_prev``
    (B_c, n, ...) and B <= B_c (the sequences sorted by decreasing length)::

        c[:B] = tanh(a) * sigmoid(i) + sigmoid(f) * c_prev[:B]
        c[B:] = c_prev[B:]
        h = sigmoid(o) * tanh(c[:B])

    with ``sigmoid(z) = tanh(z / 2) / 2 + 1 / 2``, as chainer computes it. A composition of
    registered gradhub functions, so gradients of every order come from the engine. Shapes
    and dtypes are checked as chainer's ``check_type_forward`` (``InvalidType``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> c, h = F.lstm(np.zeros((1, 2), np.float32), np.zeros((1, 8), np.float32))
        >>> c.shape, h.shape
        ((1, 2), (1, 2))
    """
    cdt = _dtype(c_prev) if _dtype(c_prev) is not None else np.asarray(c_prev).dtype
    xdt = _dtype(x) if _dtype(x) is not None else np.asarray(x).dtype
    cs, xs = _shape(c_prev), _shape(x)
    if cdt.kind != "f":
        raise _lstm_invalid("c.dtype.kind == f", f"{cdt.kind} != f")
    if xdt != cdt:
        raise _lstm_invalid("x.dtype == c.dtype", f"{xdt} != {cdt}")
    if len(cs) < 2:
        raise _lstm_invalid("c.ndim >= 2", f"{len(cs)} < 2")
    if len(xs) < 2:
        raise _lstm_invalid("x.ndim >= 2", f"{len(xs)} < 2")
    if len(cs) != len(xs):
        raise _lstm_invalid("c.ndim == x.ndim", f"{len(cs)} != {len(xs)}")
    if xs[0] > cs[0]:
        raise _lstm_invalid("x.shape[0] <= c.shape[0]", f"{xs[0]} > {cs[0]}")
    if xs[1] != 4 * cs[1]:
        raise _lstm_invalid("x.shape[1] == 4 * c.shape[1]", f"{xs[1]} != {4 * cs[1]}")
    for k in range(2, len(cs)):
        if xs[k] != cs[k]:
            raise _lstm_invalid(f"x.shape[{k}] == c.shape[{k}]", f"{xs[k]} != {cs[k]}")
    batch, n = xs[0], cs[1]
    gates = _lstm_gates(x, n)
    a = _call("Tanh", gates[0])
    i, f, o = (_lstm_sigmoid(g) for g in gates[1:])
    full = batch == cs[0]
    c_head = c_prev if full else _call("GetItem", c_prev, key=slice(0, batch))
    c_new = _call("Add2", _call("Mul2", a, i), _call("Mul2", f, c_head))
    h = _call("Mul2", o, _call("Tanh", c_new))
    if not full:
        c_new = _call(
            "Concatenate", c_new, _call("GetItem", c_prev, key=slice(batch, None)), axis=0
        )
    return _out(c_new), _out(h)


def _lstm_gates(x: Any, n: int) -> Any:
    """The gate sources a, i, f, o of ``x`` (B, 4n, ...): ``x.reshape(B, n, 4, ...)[:, :, k]``."""
    xs = _shape(x)
    return _call("Split", _call("Reshape", x, shape=(xs[0], n, 4, *xs[2:])), axis=2)


def slstm(c_prev1: Any, c_prev2: Any, x1: Any, x2: Any) -> tuple[Variable, Variable]:
    """S-LSTM units (chainer's ``F.slstm``), merging two LSTM cells (tree-structured LSTM);
    returns ``(c, h)``.

    ``x1`` and ``x2`` (B, 4n, ...) hold the gate sources of each child, laid out as in
    :func:`lstm` (a1, i1, f1, o1 and a2, i2, f2, o2); ``c_prev1``, ``c_prev2`` (B, n, ...)::

        c = tanh(a1) * sigmoid(i1) + tanh(a2) * sigmoid(i2)
            + sigmoid(f1) * c_prev1 + sigmoid(f2) * c_prev2
        h = sigmoid(o1 + o2) * tanh(c)

    with ``sigmoid(z) = tanh(z / 2) / 2 + 1 / 2`` as chainer computes it; all four operands
    have one batch size (chainer's ``check_type_forward``, ``InvalidType``). A composition of
    registered gradhub functions (gradients of every order).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> c0, x0 = np.zeros((1, 2), np.float32), np.zeros((1, 8), np.float32)
        >>> c, h = F.slstm(c0, c0, x0, x0)
        >>> c.shape, h.shape
        ((1, 2), (1, 2))
    """
    ops = {"c_prev1": c_prev1, "c_prev2": c_prev2, "x1": x1, "x2": x2}
    dts = {k: (_dtype(v) if _dtype(v) is not None else np.asarray(v).dtype) for k, v in ops.items()}
    shs = {k: _shape(v) for k, v in ops.items()}
    nd = {k: len(v) for k, v in shs.items()}
    checks: list[tuple[bool, str, str]] = [
        (dts["c_prev1"].kind == "f", "c_prev1.dtype.kind == f", f"{dts['c_prev1'].kind} != f")
    ]
    for k in ("c_prev2", "x1", "x2"):
        checks.append(
            (
                dts[k] == dts["c_prev1"],
                f"{k}.dtype == c_prev1.dtype",
                f"{dts[k]} != {dts['c_prev1']}",
            )
        )
    for k in ops:
        checks.append((nd[k] >= 2, f"{k}.ndim >= 2", f"{nd[k]} < 2"))
    for k in ("x1", "c_prev2", "x2"):
        checks.append(
            (nd["c_prev1"] == nd[k], f"c_prev1.ndim == {k}.ndim", f"{nd['c_prev1']} != {nd[k]}")
        )
    if all(ok for ok, _, _ in checks):
        b = shs["c_prev1"][0]
        for k in ("x1", "c_prev2", "x2"):
            checks.append(
                (b == shs[k][0], f"c_prev1.shape[0] == {k}.shape[0]", f"{b} != {shs[k][0]}")
            )
        for xk, ck in (("x1", "c_prev1"), ("x2", "c_prev2")):
            got, want = shs[xk][1], 4 * shs[ck][1]
            checks.append((got == want, f"{xk}.shape[1] == 4 * {ck}.shape[1]", f"{got} != {want}"))
        for i in range(2, nd["c_prev1"]):
            for u, v in (("x1", "c_prev1"), ("x2", "c_prev2"), ("x1", "x2")):
                got, want = shs[u][i], shs[v][i]
                checks.append(
                    (got == want, f"{u}.shape[{i}] == {v}.shape[{i}]", f"{got} != {want}")
                )
    for ok, expect, actual in checks:
        if not ok:
            raise _lstm_invalid(expect, actual, "SLSTM")
    n = shs["c_prev1"][1]
    a1, i1, f1, o1 = _lstm_gates(x1, n)
    a2, i2, f2, o2 = _lstm_gates(x2, n)
    c = _call(
        "Add2",
        _call(
            "Add2",
            _call(
                "Add2",
                _call("Mul2", _call("Tanh", a1), _lstm_sigmoid(i1)),
                _call("Mul2", _call("Tanh", a2), _lstm_sigmoid(i2)),
            ),
            _call("Mul2", _lstm_sigmoid(f1), c_prev1),
        ),
        _call("Mul2", _lstm_sigmoid(f2), c_prev2),
    )
    h = _call("Mul2", _lstm_sigmoid(_call("Add2", o1, o2)), _call("Tanh", c))
    return _out(c), _out(h)


# the functions of the training surface (links, optimizers), in their own module
from ._training_functions import (  # noqa: E402
    accuracy,
    batch_normalization,
    fixed_batch_normalization,
)

__all__ += ["accuracy", "batch_normalization", "fixed_batch_normalization"]


# the other functions of chainer 7.8.1, one module of the ``_functions`` subpackage for each of
# chainer's categories (activation, array, connection, evaluation, loss, math, noise,
# normalization, pooling, rnn, util)
from ._functions import *  # noqa: E402, F403
from ._functions import __all__ as _category_all  # noqa: E402

__all__ += _category_all

# chainer's module paths (``chainer.functions.loss.vae``...) holding these functions
import sys as _sys  # noqa: E402

from . import _function_modules  # noqa: E402

_function_modules.install(_sys.modules[__name__])


#: chainer 7.8.1's functions the layer does not provide
_NOT_PROVIDED: tuple[str, ...] = ()


def __getattr__(name: str) -> Any:
    if name in _NOT_PROVIDED:
        raise NotImplementedError(
            f"chainer.functions.{name} is not supported by gradhub; see docs/migration-chainer.md"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
