"""chainer's functions: ``import gradhub_compat.chainer.functions as F``.

Each function keeps chainer's name, arguments and defaults (``F.softmax(x, axis=1)``,
``F.linear(x, W, b)`` with ``W`` of shape (out, in), ``F.softmax_cross_entropy`` averaging over the
batch and ignoring label -1, ``F.max_pooling_2d(..., cover_all=True)``) and maps onto the
registered gradhub functions (nnabla conventions), so every derivative, of any order, comes from
the native engine. Inputs may be Variables or arrays; results are
:class:`gradhub_compat.chainer.Variable` objects. See ``docs/migration-chainer.md`` for the list.

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
from builtins import max as builtins_max
from builtins import min as builtins_min
from collections.abc import Callable, Sequence
from typing import Any, Literal, overload

import numpy as np
from gradhub.batching import refuse_data
from gradhub.modes import is_tracing
from gradhub.variable import Variable as _NativeVariable
from gradhub.variable import observe_read

from .._common import adopt
from .._common import call_native as _call
from . import Variable, as_variable, config, match_dtype

__all__ = [
    "absolute",
    "absolute_error",
    "arccos",
    "arcsin",
    "arctan",
    "arctan2",
    "arctanh",
    "argmax",
    "argmin",
    "average",
    "average_pooling_1d",
    "average_pooling_2d",
    "average_pooling_3d",
    "average_pooling_nd",
    "batch_l2_norm_squared",
    "batch_matmul",
    "bernoulli_nll",
    "bias",
    "broadcast",
    "broadcast_to",
    "cast",
    "ceil",
    "clip",
    "clipped_relu",
    "concat",
    "contrastive",
    "convolution_1d",
    "convolution_2d",
    "convolution_3d",
    "convolution_nd",
    "copy",
    "cos",
    "cosh",
    "cumprod",
    "cumsum",
    "deconvolution_2d",
    "depth2space",
    "depthwise_convolution_2d",
    "diagonal",
    "dilated_convolution_2d",
    "dropout",
    "dstack",
    "einsum",
    "elu",
    "embed_id",
    "erf",
    "erfc",
    "exp",
    "expand_dims",
    "expm1",
    "fix",
    "flatten",
    "flip",
    "fliplr",
    "flipud",
    "floor",
    "fmod",
    "gaussian_kl_divergence",
    "gaussian_nll",
    "get_item",
    "group_normalization",
    "hard_sigmoid",
    "hinge",
    "hstack",
    "huber_loss",
    "identity",
    "layer_normalization",
    "leaky_relu",
    "linear",
    "local_response_normalization",
    "log",
    "log1p",
    "log2",
    "log10",
    "log_softmax",
    "logsumexp",
    "lstm",
    "matmul",
    "max",
    "max_pooling_1d",
    "max_pooling_2d",
    "max_pooling_3d",
    "max_pooling_nd",
    "maximum",
    "maxout",
    "mean",
    "mean_absolute_error",
    "mean_squared_error",
    "min",
    "minimum",
    "moveaxis",
    "normalize",
    "pad",
    "prelu",
    "prod",
    "relu",
    "relu6",
    "repeat",
    "reshape",
    "resize_images",
    "rollaxis",
    "rrelu",
    "rsqrt",
    "scale",
    "scatter_add",
    "select_item",
    "selu",
    "sigmoid",
    "sigmoid_cross_entropy",
    "sign",
    "sin",
    "sinh",
    "slstm",
    "softmax",
    "softmax_cross_entropy",
    "softplus",
    "space2depth",
    "split_axis",
    "sqrt",
    "square",
    "squared_difference",
    "squared_error",
    "squeeze",
    "stack",
    "sum",
    "sum_to",
    "swapaxes",
    "swish",
    "tan",
    "tanh",
    "tensordot",
    "tile",
    "transpose",
    "triplet",
    "unpooling_2d",
    "upsampling_2d",
    "vstack",
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
    return np.asarray(x)


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
    data = dev.asarray(arr) if dev is not None else np.asarray(arr)
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
        cond = _const(np.asarray(condition).astype(bool), x)
    return _out(_call("Where", cond, x, y))  # type: ignore[no-any-return]


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
    w = weights if isinstance(weights, _NativeVariable) else _const(np.asarray(weights), x)
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


# -- more arrays and shapes (since 2026-11-27) ----------------------------------------------


def _fdtype(x: Any) -> Any:
    return _dtype(x) if _dtype(x) is not None else np.asarray(x).dtype


def _constant_of(y: Any) -> Variable:
    """``y`` cut from the graph: a Variable that needs no gradient and has no creator, as
    chainer's ``as_variable(array)`` results (recorded without a gradient inside a trace)."""
    return _out(y.detach())  # type: ignore[no-any-return]


def _norm_axis(axis: int, nd: int, where: str) -> int:
    if not -nd <= axis < nd:
        raise ValueError(f"chainer F.{where}: axis {axis} is out of bounds for {nd} dimensions")
    return axis % nd


def _arg_extremum(op: str, fname: str, x: Any, axis: Any) -> Variable:
    _check_float(fname, x=x)
    if axis is not None:
        _norm_axis(int(axis), len(_shape(x)), fname)
    idx = _call(op, x, axis=axis, only_index=True)
    return _constant_of(_call("Cast", idx, dtype="int32"))


def argmax(x: Any, axis: int | None = None) -> Variable:
    """The index of the maximum over ``axis`` (of the flattened x when None): an int32 Variable
    without a gradient, as chainer; x must be floating point.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.argmax(np.array([[1.0, 3.0], [4.0, 2.0]], dtype=np.float32), axis=1)
        variable([1, 0])
    """
    return _arg_extremum("Max", "argmax", x, axis)


def argmin(x: Any, axis: int | None = None) -> Variable:
    """The index of the minimum over ``axis`` (of the flattened x when None): an int32 Variable
    without a gradient, as chainer; x must be floating point.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.argmin(np.array([[1.0, 3.0], [4.0, 2.0]], dtype=np.float32), axis=1)
        variable([0, 1])
    """
    return _arg_extremum("Min", "argmin", x, axis)


def select_item(x: Any, t: Any) -> Variable:
    """``y[i] = x[i, t[i]]`` for x of shape (N, C) and integer t of shape (N,) (differentiable
    with respect to x).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
        >>> F.select_item(x, np.array([1, 0], dtype=np.int32))
        variable([2., 3.])
    """
    xs, ts = _shape(x), _shape(t)
    tdt = _fdtype(t)
    if len(xs) != 2 or len(ts) != 1 or xs[0] != ts[0] or tdt.kind != "i":
        raise TypeError(
            f"chainer F.select_item: x must be 2-d (N, C) and t 1-d signed integer (N,), got "
            f"shapes {xs} and {ts}, t of dtype {tdt}"
        )
    if isinstance(t, _NativeVariable):
        tv = t
        if not is_tracing():
            labels = t._data
        else:
            labels = None
    else:
        labels = np.asarray(t)
        tv = _const(labels, x)
    if labels is not None and labels.size and not ((labels >= 0) & (labels < xs[1])).all():
        raise IndexError("chainer F.select_item: out of bounds index (t must be in [0, C))")
    y = _call("Gather", x, _call("Reshape", tv, shape=(xs[0], 1)), axis=1, batch_dims=1)
    return _out(_call("Reshape", y, shape=(xs[0],)))  # type: ignore[no-any-return]


def _pad_pairs(pad_width: Any, nd: int) -> list[tuple[int, int]]:
    """numpy's ``pad_width`` (an int, a pair, or one pair per axis) as one pair per axis."""
    a = np.asarray(pad_width, dtype=np.int64)
    return [(int(p[0]), int(p[1])) for p in np.broadcast_to(a, (nd, 2))]


def pad(x: Any, pad_width: Any, mode: str, **keywords: Any) -> Variable:
    """x padded as ``numpy.pad(x, pad_width, mode, **keywords)`` (chainer's ``F.pad``); x must be
    floating point.

    As chainer, the gradient of x is the gradient of the output at x's own positions, in every
    mode: the copies that ``"edge"``, ``"reflect"`` and the other modes make pass no gradient
    back (chainer's ``Pad.backward`` is ``gy[input_slices]``). Modes ``"constant"`` (with a
    scalar ``constant_values``), ``"edge"`` and ``"reflect"`` are gradhub functions; the others
    read x's data in Python (numpy's ``pad``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.pad(np.array([1.0, 2.0], dtype=np.float32), 1, "constant", constant_values=9)
        variable([9., 1., 2., 9.])
        >>> F.pad(np.array([1.0, 2.0, 3.0], dtype=np.float32), (2, 1), "reflect")
        variable([3., 2., 1., 2., 3., 2.])
    """
    _check_float("pad", x=x)
    shape = _shape(x)
    pairs = _pad_pairs(pad_width, len(shape))
    if any(a < 0 or b < 0 for a, b in pairs):
        raise ValueError("chainer F.pad: index can't contain negative values")
    flat = tuple(v for p in pairs for v in p)
    cv = keywords.get("constant_values", 0)
    zero = _call("Pad", x, pad_width=flat, mode="constant", constant_value=0.0)
    if mode == "constant" and not keywords.keys() - {"constant_values"} and np.ndim(cv) == 0:
        if cv == 0:
            return _out(zero)  # type: ignore[no-any-return]
        filled = _call("Pad", x, pad_width=flat, mode="constant", constant_value=float(cv))
    elif mode in ("edge", "reflect") and not keywords:
        native = "repeat" if mode == "edge" else "reflect"
        filled = _call("Pad", x, pad_width=flat, mode=native)
    else:
        data = _arr(x, f"pad (mode={mode!r})")
        padded = np.pad(data, pairs, mode=mode, **keywords)  # type: ignore[call-overload]
        filled = _const(padded, zero)
        return _out(zero + (filled - _call("StopGradient", zero)))  # type: ignore[no-any-return]
    extra = _call("StopGradient", _call("Sub2", filled, zero))
    return _out(_call("Add2", zero, extra))  # type: ignore[no-any-return]


def _stack_along(
    fname: str,
    xs: Sequence[Any],
    lift: Callable[[tuple[int, ...]], tuple[int, ...]],
    axis: Callable[[int], int],
) -> Variable:
    """numpy's ``hstack``/``vstack``/``dstack``: each array reshaped by ``lift``, joined along
    ``axis(ndim)``; one dtype for all (chainer's check)."""
    if len(xs) == 0:
        raise ValueError(f"chainer F.{fname}: need at least one array to concatenate")
    ops = _match(fname, *xs)
    nd = len(_shape(ops[0]))
    parts = [_call("Reshape", x, shape=lift(_shape(x))) for x in ops]
    if len(parts) == 1:
        return _out(parts[0])  # type: ignore[no-any-return]
    return _out(_call("Concatenate", *parts, axis=axis(nd)))  # type: ignore[no-any-return]


def hstack(xs: Sequence[Any]) -> Variable:
    """numpy's ``hstack``: the arrays joined along axis 1 (axis 0 for 1-d arrays; 0-d arrays
    are 1-d ones of length 1).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.hstack([np.ones((2, 1), np.float32), np.zeros((2, 2), np.float32)]).shape
        (2, 3)
    """
    return _stack_along("hstack", xs, lambda s: s if s else (1,), lambda nd: 1 if nd >= 2 else 0)


def vstack(xs: Sequence[Any]) -> Variable:
    """numpy's ``vstack``: the arrays (as 2-d: (N,) is (1, N)) joined along axis 0.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.vstack([np.ones(3, np.float32), np.zeros(3, np.float32)]).shape
        (2, 3)
    """
    return _stack_along(
        "vstack",
        xs,
        lambda s: s if len(s) >= 2 else (1, *s) if s else (1, 1),
        lambda nd: 0,
    )


def dstack(xs: Sequence[Any]) -> Variable:
    """numpy's ``dstack``: the arrays as 3-d (``(N,)`` is (1, N, 1), ``(M, N)`` is (M, N, 1))
    joined along axis 2.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.dstack([np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)]).shape
        (2, 3, 2)
    """
    return _stack_along("dstack", xs, _atleast_3d, lambda nd: 2)


def _atleast_3d(s: tuple[int, ...]) -> tuple[int, ...]:
    if len(s) == 0:
        return (1, 1, 1)
    if len(s) == 1:
        return (1, s[0], 1)
    if len(s) == 2:
        return (*s, 1)
    return s


def repeat(x: Any, repeats: Any, axis: int | None = None) -> Variable:
    """numpy's ``repeat``: each element repeated ``repeats`` times (an int, or a tuple with one
    count per element of the axis) along ``axis`` (of the flattened x when None).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.repeat(np.array([1.0, 2.0], dtype=np.float32), 2)
        variable([1., 1., 2., 2.])
    """
    if isinstance(repeats, (int, np.integer)) and not isinstance(repeats, bool):
        reps: tuple[int, ...] = (int(repeats),)
    elif isinstance(repeats, tuple) and all(
        isinstance(r, (int, np.integer)) and not isinstance(r, bool) for r in repeats
    ):
        reps = tuple(int(r) for r in repeats)
    else:
        raise TypeError("chainer F.repeat: repeats must be int or tuple of ints")
    if not all(r >= 0 for r in reps):
        raise ValueError("chainer F.repeat: all elements in repeats must be zero or larger")
    if axis is not None and (not isinstance(axis, (int, np.integer)) or isinstance(axis, bool)):
        raise TypeError("chainer F.repeat: axis must be int or None")
    h = x
    if axis is None:
        h = _call("Reshape", x, shape=(int(math.prod(_shape(x))),))
        axis = 0
    ax = _norm_axis(int(axis), len(_shape(h)), "repeat")
    n = _shape(h)[ax]
    idx = np.repeat(np.arange(n), reps[0] if len(reps) == 1 else reps)
    return _out(_call("Gather", h, _const(idx, h), axis=ax))  # type: ignore[no-any-return]


def _perm_of(fn: Callable[[Any], Any], nd: int) -> tuple[int, ...]:
    """The permutation numpy's ``fn`` (a moveaxis, rollaxis or swapaxes) makes of ``nd`` axes
    (numpy's errors for bad axes)."""
    probe = np.lib.stride_tricks.as_strided(
        np.zeros(1, np.int8), shape=tuple(range(2, nd + 2)), strides=(0,) * nd
    )
    return tuple(int(s) - 2 for s in fn(probe).shape)


def swapaxes(x: Any, axis1: int, axis2: int) -> Variable:
    """x with the axes ``axis1`` and ``axis2`` interchanged.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.swapaxes(np.zeros((2, 3, 4), np.float32), 0, 2).shape
        (4, 3, 2)
    """
    perm = _perm_of(lambda a: np.swapaxes(a, axis1, axis2), len(_shape(x)))
    return _out(_call("Transpose", x, axes=perm))  # type: ignore[no-any-return]


def moveaxis(x: Any, source: Any, destination: Any) -> Variable:
    """numpy's ``moveaxis``: the axes ``source`` (an int or a tuple) moved to ``destination``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.moveaxis(np.zeros((2, 3, 4), np.float32), 0, -1).shape
        (3, 4, 2)
    """
    _check_float("moveaxis", x=x)
    for what, v in (("source", source), ("destination", destination)):
        if not isinstance(v, (int, tuple)):
            raise TypeError(f"chainer F.moveaxis: int or tuple of int are required ({what})")
    nd = len(_shape(x))
    for v in (source, destination):
        for a in (v,) if isinstance(v, int) else v:
            if not -nd <= a < nd:
                raise TypeError(f"chainer F.moveaxis: axis {a} is out of bounds for {nd} axes")
    perm = _perm_of(lambda a: np.moveaxis(a, source, destination), nd)
    return _out(_call("Transpose", x, axes=perm))  # type: ignore[no-any-return]


def rollaxis(x: Any, axis: int, start: int = 0) -> Variable:
    """numpy's ``rollaxis``: axis ``axis`` moved to lie before position ``start``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.rollaxis(np.zeros((2, 3, 4), np.float32), 2).shape
        (4, 2, 3)
    """
    if not isinstance(axis, (int, np.integer)):
        raise TypeError("chainer F.rollaxis: axis must be int")
    if not isinstance(start, (int, np.integer)):
        raise TypeError("chainer F.rollaxis: start must be int")
    nd = len(_shape(x))
    if not (-nd <= axis < nd and -nd - 1 <= start <= nd):
        raise TypeError(
            f"chainer F.rollaxis: axis {axis} or start {start} is out of bounds for {nd} axes"
        )
    perm = _perm_of(lambda a: np.rollaxis(a, axis, start), nd)
    return _out(_call("Transpose", x, axes=perm))  # type: ignore[no-any-return]


def broadcast(*args: Any) -> Variable | tuple[Variable, ...]:
    """The arrays broadcast to their common shape (numpy's rules): a tuple of Variables for
    several inputs; for one input, the input itself as a Variable (as chainer).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> a, b = F.broadcast(np.ones((2, 1), np.float32), np.ones(3, np.float32))
        >>> a.shape, b.shape
        ((2, 3), (2, 3))
    """
    if not args:
        raise ValueError("chainer F.broadcast: at least one input is required")
    if len(args) == 1:  # chainer: the input itself, as a Variable
        return as_variable(args[0])
    shape = tuple(np.broadcast_shapes(*(_shape(a) for a in args)))
    outs = tuple(
        _out(
            _call("Reshape", a, shape=shape)
            if _shape(a) == shape
            else _call("BroadcastTo", a, shape=shape)
        )
        for a in args
    )
    return outs[0] if len(outs) == 1 else outs


def copy(x: Any, dst: Any) -> Variable:
    """A copy of x on the device ``dst`` (-1 or ``"@numpy"``: the CPU), differentiable (the
    gradient goes back to x's device).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.copy(np.array([1.0], dtype=np.float32), -1)
        variable([1.])
    """
    from ._device import get_device

    dev = get_device(dst, "chainer F.copy")
    return _out(_call("ToDevice", x, device=dev.name))  # type: ignore[no-any-return]


def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """numpy's ``diagonal``: ``y[..., i] = x[..., i, i + offset]`` over the axes ``axis1`` and
    ``axis2`` (removed; the diagonal is the last axis of y).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.diagonal(np.arange(9, dtype=np.float32).reshape(3, 3))
        variable([0., 4., 8.])
    """
    shape = _shape(x)
    nd = len(shape)
    if not (builtins_max(axis1, axis2) < nd and -nd <= builtins_min(axis1, axis2)):
        raise TypeError(f"chainer F.diagonal: axes {axis1}, {axis2} out of range for {nd} axes")
    a1, a2 = axis1 % nd, axis2 % nd
    if a1 == a2:
        raise ValueError("chainer F.diagonal: axis1 and axis2 cannot be the same")
    rest = [i for i in range(nd) if i not in (a1, a2)]
    h = _call("Transpose", x, axes=(*rest, a1, a2))
    n1, n2 = shape[a1], shape[a2]
    i0 = builtins_max(-offset, 0)
    j0 = builtins_max(offset, 0)
    k = builtins_max(builtins_min(n1 - i0, n2 - j0), 0)
    rows, cols = np.arange(i0, i0 + k), np.arange(j0, j0 + k)
    return _out(_call("GetItem", h, key=(Ellipsis, rows, cols)))  # type: ignore[no-any-return]


def fliplr(a: Any) -> Variable:
    """a reversed along axis 1 (a needs at least 2 axes).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.fliplr(np.array([[1.0, 2.0]], dtype=np.float32))
        variable([[2., 1.]])
    """
    _check_float("fliplr", a=a)
    if len(_shape(a)) < 2:
        raise TypeError("chainer F.fliplr: a.ndim >= 2 is required")
    return _out(_call("Flip", a, axes=(1,)))  # type: ignore[no-any-return]


def flipud(a: Any) -> Variable:
    """a reversed along axis 0 (a needs at least 1 axis).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.flipud(np.array([1.0, 2.0], dtype=np.float32))
        variable([2., 1.])
    """
    _check_float("flipud", a=a)
    if len(_shape(a)) < 1:
        raise TypeError("chainer F.flipud: a.ndim >= 1 is required")
    return _out(_call("Flip", a, axes=(0,)))  # type: ignore[no-any-return]


def space2depth(X: Any, r: int) -> Variable:
    """(N, C, H, W) to (N, r * r * C, H / r, W / r): each r x r block of pixels into channels,
    ``y[n, (i * r + j) * C + c, h, w] = X[n, c, h * r + i, w * r + j]``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.space2depth(np.zeros((1, 1, 4, 6), np.float32), 2).shape
        (1, 4, 2, 3)
    """
    s = _shape(X)
    _check_float("space2depth", X=X)
    if len(s) != 4:
        raise TypeError(f"chainer F.space2depth: X must be 4-d (N, C, H, W), got shape {s}")
    if s[2] % r or s[3] % r:
        raise ValueError(
            f"chainer F.space2depth: X must be 4-d with H and W divisible by r={r}, got {s}"
        )
    n, c, a, b = s
    h = _call("Reshape", X, shape=(n, c, a // r, r, b // r, r))
    h = _call("Transpose", h, axes=(0, 3, 5, 1, 2, 4))
    return _out(_call("Reshape", h, shape=(n, r * r * c, a // r, b // r)))  # type: ignore[no-any-return]


def depth2space(X: Any, r: int) -> Variable:
    """(N, r * r * C, H, W) to (N, C, H * r, W * r), the inverse of :func:`space2depth`:
    ``y[n, c, h * r + i, w * r + j] = X[n, (i * r + j) * C + c, h, w]``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.depth2space(np.zeros((1, 4, 2, 3), np.float32), 2).shape
        (1, 1, 4, 6)
    """
    s = _shape(X)
    _check_float("depth2space", X=X)
    if len(s) != 4:
        raise TypeError(f"chainer F.depth2space: X must be 4-d (N, C, H, W), got shape {s}")
    if s[1] % (r * r):
        raise ValueError(
            f"chainer F.depth2space: X must be 4-d with channels divisible by r * r={r * r}, "
            f"got {s}"
        )
    n, c, a, b = s
    c //= r * r
    h = _call("Reshape", X, shape=(n, r, r, c, a, b))
    h = _call("Transpose", h, axes=(0, 3, 4, 1, 5, 2))
    return _out(_call("Reshape", h, shape=(n, c, a * r, b * r)))  # type: ignore[no-any-return]


def _scan(native: str, fname: str, x: Any, axis: Any) -> Variable:
    if not (axis is None or isinstance(axis, (int, np.integer))):
        raise TypeError(f"chainer F.{fname}: axis must be int or None")
    _check_float(fname, x=x)
    h = x
    if axis is None:
        h = _call("Reshape", x, shape=(int(math.prod(_shape(x))),))
        axis = 0
    ax = _norm_axis(int(axis), len(_shape(h)), fname)
    return _out(_call(native, h, axis=ax))  # type: ignore[no-any-return]


def cumsum(x: Any, axis: int | None = None) -> Variable:
    """The cumulative sum :math:`y_i = \\sum_{j \\le i} x_j` along ``axis`` (of the flattened x
    when None).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.cumsum(np.array([1.0, 2.0, 3.0], dtype=np.float32))
        variable([1., 3., 6.])
    """
    return _scan("CumSum", "cumsum", x, axis)


def cumprod(x: Any, axis: int | None = None) -> Variable:
    """The cumulative product :math:`y_i = \\prod_{j \\le i} x_j` along ``axis`` (of the
    flattened x when None).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.cumprod(np.array([1.0, 2.0, 3.0], dtype=np.float32))
        variable([1., 2., 6.])
    """
    return _scan("CumProd", "cumprod", x, axis)


def scatter_add(a: Any, slices: Any, b: Any) -> Variable:
    """A copy of ``a`` with ``b`` added at ``a[slices]`` (numpy's ``add.at``: repeated indices
    accumulate); the gradient of ``a`` is the output's, that of ``b`` the output's at
    ``slices``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> a = np.zeros(3, dtype=np.float32)
        >>> F.scatter_add(a, np.array([0, 0, 2]), np.ones(3, dtype=np.float32))
        variable([2., 0., 1.])
    """
    a, b = _match("scatter_add", a, b)
    shape = _shape(a)
    size = int(math.prod(shape))
    pos = np.arange(size).reshape(shape)[slices]
    bb = b
    if _shape(b) != pos.shape:
        bb = _call("BroadcastTo", b, shape=pos.shape)
    flat_b = _call("Reshape", bb, shape=(pos.size,))
    dt = _fdtype(a)
    zeros = _const(np.zeros(size, dtype=dt), a if isinstance(a, _NativeVariable) else b)
    added = _call("ScatterAdd", zeros, _const(pos.reshape(-1), zeros), flat_b, axis=0)
    return _out(_call("Add2", a, _call("Reshape", added, shape=shape)))  # type: ignore[no-any-return]


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def tensordot(a: Any, b: Any, axes: Any = 2) -> Variable:
    """numpy's ``tensordot``: the sum of products over the last ``axes`` axes of ``a`` and the
    first of ``b`` (an int), or over the given pairs of axes (two sequences).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.tensordot(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32), axes=1).shape
        (2, 4)
    """
    _check_float("tensordot", a=a, b=b)
    sa, sb = _shape(a), _shape(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > len(sa) or n > len(sb):
            raise ValueError(f"chainer F.tensordot: axes={n} is out of range")
        ax_a, ax_b = list(range(len(sa) - n, len(sa))), list(range(n))
    else:
        if len(axes) != 2:
            raise ValueError("chainer F.tensordot: axes must be an int or a pair of sequences")
        pa, pb = axes
        pa = [pa] if isinstance(pa, (int, np.integer)) else list(pa)
        pb = [pb] if isinstance(pb, (int, np.integer)) else list(pb)
        if len(pa) != len(pb):
            raise ValueError("chainer F.tensordot: axes of a and b must have the same length")
        ax_a = [int(i) % len(sa) for i in pa]
        ax_b = [int(i) % len(sb) for i in pb]
    for i, j in zip(ax_a, ax_b, strict=True):
        if sa[i] != sb[j]:
            raise ValueError(
                f"chainer F.tensordot: shape-mismatch for sum ({sa} and {sb}, axes {axes})"
            )
    la = list(_LETTERS[: len(sa)])
    lb = list(_LETTERS[len(sa) : len(sa) + len(sb)])
    for i, j in zip(ax_a, ax_b, strict=True):
        lb[j] = la[i]
    out = [c for i, c in enumerate(la) if i not in ax_a] + [
        c for j, c in enumerate(lb) if j not in ax_b
    ]
    eq = f"{''.join(la)},{''.join(lb)}->{''.join(out)}"
    return _out(_call("Einsum", a, b, equation=eq))  # type: ignore[no-any-return]


def einsum(*operands: Any) -> Variable:
    """numpy's ``einsum(subscripts, *operands)`` (chainer's signature: the subscripts first),
    e.g. ``F.einsum("ij,jk->ik", a, b)``; ``...`` allowed.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.einsum("ij->j", np.ones((2, 3), np.float32))
        variable([2., 2., 2.])
    """
    if not operands or not isinstance(operands[0], str):
        raise TypeError("chainer F.einsum: the first argument must be the subscripts (a str)")
    subscripts, xs = operands[0], operands[1:]
    _check_float("einsum", **{f"operand {i}": x for i, x in enumerate(xs)})
    return _out(_call("Einsum", *_match("einsum", *xs), equation=subscripts.replace(" ", "")))  # type: ignore[no-any-return]


def sum_to(x: Any, shape: Sequence[int]) -> Variable:
    """x summed to ``shape`` (the reverse of broadcasting x from ``shape``): x itself (as a
    Variable) when it already has that shape, as chainer.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.sum_to(np.ones((2, 3), np.float32), (2, 1))
        variable([[3.],
                  [3.]])
    """
    shape = tuple(int(s) for s in shape)
    xs = _shape(x)
    if xs == shape:
        return as_variable(x)
    lead = len(xs) - len(shape)
    if lead < 0:
        raise ValueError(f"chainer F.sum_to: cannot sum shape {xs} to the larger {shape}")
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and xs[lead + i] != 1
    )
    for i, s in enumerate(shape):
        if s != 1 and s != xs[lead + i]:
            raise ValueError(f"chainer F.sum_to: shape {xs} cannot be summed to {shape}")
    y = _call("Sum", x, axis=axes, keepdims=True) if axes else x
    return _out(_call("Reshape", y, shape=shape))  # type: ignore[no-any-return]


# -- more elementwise functions and activations (since 2026-11-27) --------------------------


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


def fix(x: Any) -> Variable:
    """Elementwise rounding toward zero, ``sign(x) * floor(|x|)``: a constant as chainer's (no
    creator, needs no gradient), of x's dtype (integers are returned unchanged).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.fix(np.array([-1.5, 1.5], dtype=np.float32))
        variable([-1.,  1.])
    """
    xv = x if isinstance(x, _NativeVariable) else _const(np.asarray(x), None)
    return _constant_of(
        _call(
            "Where", _call("GreaterEqualScalar", xv, val=0.0), _call("Floor", xv), _call("Ceil", xv)
        )
    )


def sign(x: Any) -> Variable:
    """Elementwise sign (-1, 0 or 1, of x's dtype): a constant as chainer's (no creator,
    needs no gradient).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.sign(np.array([-2.0, 0.0, 3.0], dtype=np.float32))
        variable([-1.,  0.,  1.])
    """
    return _constant_of(_as_dtype(_call("Sign", x, alpha=0.0), _fdtype(x)))


def fmod(x: Any, divisor: Any) -> Variable:
    """Elementwise remainder of ``x / divisor`` with the sign of x (C's ``fmod``, exactly; the
    same as ``x - fix(x / divisor) * divisor``); the gradients are chainer's, ``gy`` and
    ``-fix(x / divisor) * gy``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.fmod(np.array([-5.0, 5.0], np.float32), np.array([3.0, 3.0], np.float32))
        variable([-2.,  2.])
    """
    _check_float("fmod", x=x, divisor=divisor)
    x, divisor = _match("fmod", x, divisor)
    q = fix(_call("Div2", x, divisor))
    composed = _call("Sub2", x, _call("Mul2", q, divisor))
    exact = _call("Mod2", x, divisor, fmod=True)  # C's fmod, the values chainer computes
    return _out(_call("Add2", composed, _call("StopGradient", _call("Sub2", exact, composed))))  # type: ignore[no-any-return]


def rsqrt(x: Any) -> Variable:
    """Elementwise ``1 / sqrt(x)``; x must be floating point.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.rsqrt(np.array([4.0], dtype=np.float32))
        variable([0.5])
    """
    _check_float("rsqrt", x=x)
    return _out(_call("RDivScalar", _call("Sqrt", x), val=1.0))  # type: ignore[no-any-return]


def arctanh(x: Any) -> Variable:
    """Elementwise ``arctanh(x)`` (``1 / (1 - x^2)`` the derivative); x floating point.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.arctanh(np.array([0.0], dtype=np.float32))
        variable([0.])
    """
    _check_float("arctanh", x=x)
    return _out(_call("ATanh", x))  # type: ignore[no-any-return]


def arctan2(x1: Any, x2: Any) -> Variable:
    """Elementwise ``arctan2(x1, x2)``, the angle of the point (x2, x1); both floating point.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.arctan2(np.array([1.0], np.float32), np.array([0.0], np.float32)).array.round(4)
        array([1.5708], dtype=float32)
    """
    _check_float("arctan2", x1=x1, x2=x2)
    return _out(_call("ATan2", *_match("arctan2", x1, x2)))  # type: ignore[no-any-return]


def clipped_relu(x: Any, z: float = 20.0) -> Variable:
    """``min(max(0, x), z)``; the gradient is 1 where ``0 < x < z``, else 0 (chainer's).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.clipped_relu(np.array([-1.0, 1.0, 30.0], dtype=np.float32))
        variable([ 0.,  1., 20.])
    """
    _check_float("clipped_relu", x=x)
    xv = x if isinstance(x, _NativeVariable) else _const(np.asarray(x), None)
    inside = _call(
        "LogicalAnd",
        _call("GreaterScalar", xv, val=0.0),
        _call("LessScalar", xv, val=float(z)),
    )
    out = _call("MulScalar", _call("GreaterEqualScalar", xv, val=float(z)), val=float(z))
    return _out(_call("Where", inside, xv, _as_dtype(out, xv.dtype)))  # type: ignore[no-any-return]


def relu6(x: Any) -> Variable:
    """``min(max(0, x), 6)`` (:func:`clipped_relu` with ``z = 6``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.relu6(np.array([-1.0, 3.0, 7.0], dtype=np.float32))
        variable([0., 3., 6.])
    """
    return clipped_relu(x, 6.0)


def hard_sigmoid(x: Any) -> Variable:
    """``clip(0.2 x + 0.5, 0, 1)``; the gradient is 0.2 where ``-2.5 < x < 2.5``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.hard_sigmoid(np.array([-3.0, 0.0, 3.0], dtype=np.float32))
        variable([0. , 0.5, 1. ])
    """
    _check_float("hard_sigmoid", x=x)
    y = _call("AddScalar", _call("MulScalar", x, val=0.2), val=0.5)
    return _out(_clip01(y))  # type: ignore[no-any-return]


def _clip01(y: Any) -> Any:
    """``clip(y, 0, 1)`` with gradient 1 strictly inside (0, 1), 0 elsewhere."""
    inside = _call(
        "LogicalAnd", _call("GreaterScalar", y, val=0.0), _call("LessScalar", y, val=1.0)
    )
    high = _as_dtype(_call("GreaterEqualScalar", y, val=1.0), y.dtype)
    return _call("Where", inside, y, high)


def _extended(w: Any, x: Any, fname: str, what: str) -> Any:
    """``w`` of shape ``x.shape[1:1 + w.ndim]`` reshaped to broadcast against x (chainer's
    ``_get_extended_shape``)."""
    ws, xs = _shape(w), _shape(x)
    if len(xs) < len(ws) + 1 or tuple(xs[1 : 1 + len(ws)]) != ws:
        raise TypeError(
            f"chainer F.{fname}: {what} of shape {ws} must equal x.shape[1:1 + {what}.ndim] "
            f"(x of shape {xs})"
        )
    return _call("Reshape", w, shape=(1, *ws, *(1,) * (len(xs) - len(ws) - 1)))


def swish(x: Any, beta: Any) -> Variable:
    """``x * sigmoid(beta * x)`` with ``beta`` of shape ``x.shape[1:1 + beta.ndim]``
    (broadcast over the other axes); the sigmoid is chainer's ``tanh(z / 2) / 2 + 1 / 2``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.swish(np.zeros((1, 2), np.float32), np.ones(2, np.float32))
        variable([[0., 0.]])
    """
    _check_float("swish", x=x, beta=beta)
    x, beta = _match("swish", x, beta)
    b = _extended(beta, x, "swish", "beta")
    return _out(_call("Mul2", x, _lstm_sigmoid(_call("Mul2", b, x))))  # type: ignore[no-any-return]


def prelu(x: Any, W: Any) -> Variable:
    """x where ``x >= 0``, ``W * x`` elsewhere, with the slopes ``W`` of shape
    ``x.shape[1:1 + W.ndim]`` (broadcast over the other axes).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.prelu(np.array([[-1.0, 2.0]], np.float32), np.array([0.5, 0.5], np.float32))
        variable([[-0.5,  2. ]])
    """
    _check_float("prelu", x=x, W=W)
    x, W = _match("prelu", x, W)
    w = _extended(W, x, "prelu", "W")
    xv = x if isinstance(x, _NativeVariable) else _const(np.asarray(x), w)
    cond = _call("GreaterEqualScalar", xv, val=0.0)
    return _out(_call("Where", cond, xv, _call("Mul2", xv, w)))  # type: ignore[no-any-return]


def rrelu(x: Any, l: float = 1.0 / 8, u: float = 1.0 / 3, **kwargs: Any) -> Any:
    """Randomized leaky ReLU: x where ``x >= 0``, ``r * x`` elsewhere. In test mode
    (``chainer.config.train`` False) ``r = (l + u) / 2``; in training ``r`` is drawn uniformly
    in [l, u) for each element (numpy's generator), unless given (``r=``, an array of x's
    shape). ``return_r=True`` returns ``(y, r)``.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> import gradhub_compat.chainer.functions as F
        >>> with chainer.using_config("train", False):
        ...     F.rrelu(np.array([-2.4, 1.0], np.float32), l=0.1, u=0.2)
        variable([-0.36,  1.  ])
    """
    unknown = set(kwargs) - {"r", "return_r"}
    if "train" in kwargs:
        raise ValueError(
            "chainer F.rrelu: train argument is not supported anymore. Use chainer.using_config"
        )
    if unknown:
        raise TypeError(f"chainer F.rrelu: got unexpected keyword argument(s) {sorted(unknown)}")
    r = kwargs.get("r")
    return_r = bool(kwargs.get("return_r", False))
    _check_float("rrelu", x=x)
    if not 0.0 <= l < u:
        raise ValueError(f"chainer F.rrelu: need 0 <= l < u, got l={l}, u={u}")
    dt = _fdtype(x)
    shape = _shape(x)
    if not config.train:
        r = np.full(shape, (l + u) / 2, dtype=dt)
    elif r is None:
        r = np.random.uniform(l, u, shape).astype(dt, copy=False)
    else:
        r = np.asarray(r)
        if r.shape != shape or r.dtype != dt:
            raise ValueError("chainer F.rrelu: r must have the shape and dtype of x")
    xv = x if isinstance(x, _NativeVariable) else _const(np.asarray(x), None)
    rv = _const(r, xv)
    y = _out(_call("Where", _call("GreaterEqualScalar", xv, val=0.0), xv, _call("Mul2", xv, rv)))
    return (y, r) if return_r else y


def maxout(x: Any, pool_size: int, axis: int = 1) -> Variable:
    """The maximum over groups of ``pool_size`` consecutive channels along ``axis``:
    ``x.reshape(..., C / pool_size, pool_size, ...).max(axis + 1)`` (every element equal to
    the maximum gets the whole gradient, chainer's ``F.max``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.maxout(np.array([[1.0, 3.0, 2.0, 0.0]], np.float32), 2)
        variable([[3., 2.]])
    """
    _check_float("maxout", x=x)
    shape = _shape(x)
    if pool_size <= 0:
        raise ValueError(f"chainer F.maxout: pool_size must be a positive integer, got {pool_size}")
    ax = _norm_axis(axis, len(shape), "maxout")
    if shape[ax] % pool_size:
        raise ValueError(
            f"chainer F.maxout: axis dimension {shape[ax]} must be a multiple of pool_size "
            f"{pool_size}"
        )
    new = (*shape[:ax], shape[ax] // pool_size, pool_size, *shape[ax + 1 :])
    h = _call("Reshape", x, shape=new)
    return _out(_call("Max", h, axis=ax + 1, ties="all"))  # type: ignore[no-any-return]


def erfc(x: Any) -> Variable:
    """Elementwise ``1 - erf(x)``; x floating point.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.erfc(np.array([0.0], dtype=np.float32))
        variable([1.])
    """
    _check_float("erfc", x=x)
    return _out(_call("RSubScalar", _call("Erf", x), val=1.0))  # type: ignore[no-any-return]


def squared_difference(x1: Any, x2: Any) -> Variable:
    """Elementwise ``(x1 - x2) ** 2`` of two floating arrays of one dtype.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.squared_difference(np.array([3.0], np.float32), np.array([1.0], np.float32))
        variable([4.])
    """
    _check_float("squared_difference", x1=x1, x2=x2)
    d = _call("Sub2", *_match("squared_difference", x1, x2))
    return _out(_call("Mul2", d, d))  # type: ignore[no-any-return]


def batch_l2_norm_squared(x: Any) -> Variable:
    """``y[n] = sum(x[n] ** 2)``: the squared L2 norm of each sample (x has 1 axis or more).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.batch_l2_norm_squared(np.array([[1.0, 2.0], [3.0, 0.0]], np.float32))
        variable([5., 9.])
    """
    _check_float("batch_l2_norm_squared", x=x)
    s = _shape(x)
    if len(s) < 1:
        raise TypeError("chainer F.batch_l2_norm_squared: x.ndim >= 1 is required")
    h = _call("Reshape", x, shape=(s[0], int(math.prod(s[1:]))))
    return _out(_call("Sum", _call("Mul2", h, h), axis=1))  # type: ignore[no-any-return]


def normalize(x: Any, eps: float = 1e-5, axis: Any = 1) -> Variable:
    """``x / (sqrt(sum(x ** 2, axis)) + eps)``: each vector along ``axis`` (an int or a tuple)
    scaled to unit L2 norm.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.normalize(np.array([[3.0, 4.0]], np.float32), eps=0.0)
        variable([[0.6, 0.8]])
    """
    _check_float("normalize", x=x)
    x2 = _call("Mul2", x, x) if isinstance(x, _NativeVariable) else _call("PowScalar", x, val=2.0)
    sq = _call("Sum", x2, axis=axis, keepdims=True)
    # the norm, with the gradient 0 (not nan) at a zero vector, as chainer's backward
    nonzero = _call("GreaterScalar", sq, val=0.0)
    safe = _call("Where", nonzero, sq, _call("AddScalar", _call("MulScalar", sq, val=0.0), val=1.0))
    norm = _call("Where", nonzero, _call("Sqrt", safe), _call("MulScalar", sq, val=0.0))
    norm = _call("AddScalar", norm, val=float(eps))
    return _out(_call("Div2", x, _call("BroadcastTo", norm, shape=_shape(x))))  # type: ignore[no-any-return]


def _caffe_broadcast(fname: str, x: Any, y: Any, axis: int) -> Any:
    xs, ys = _shape(x), _shape(y)
    ax = axis % len(xs) if xs else axis
    if tuple(xs[ax : ax + len(ys)]) != ys:
        raise TypeError(
            f"chainer F.{fname}: y of shape {ys} must equal x.shape[axis:axis + y.ndim] "
            f"(x of shape {xs}, axis={axis})"
        )
    y1 = reshape(y, (*(1,) * ax, *ys, *(1,) * (len(xs) - ax - len(ys))))
    return broadcast_to(y1, xs)


def bias(x: Any, y: Any, axis: int = 1) -> Variable:
    """``x + y`` with y of shape ``x.shape[axis:axis + y.ndim]`` broadcast (Caffe's bias).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.bias(np.zeros((1, 2, 2), np.float32), np.array([1.0, 2.0], np.float32))
        variable([[[1., 1.],
                   [2., 2.]]])
    """
    y2 = _caffe_broadcast("bias", x, y, axis)
    return x + y2 if isinstance(x, _NativeVariable) else y2.__radd__(x)  # type: ignore[no-any-return]


def scale(x: Any, y: Any, axis: int = 1) -> Variable:
    """``x * y`` with y of shape ``x.shape[axis:axis + y.ndim]`` broadcast (Caffe's scale).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.scale(np.ones((1, 2, 2), np.float32), np.array([1.0, 2.0], np.float32))
        variable([[[1., 1.],
                   [2., 2.]]])
    """
    y2 = _caffe_broadcast("scale", x, y, axis)
    return x * y2 if isinstance(x, _NativeVariable) else y2.__rmul__(x)  # type: ignore[no-any-return]


# -- more losses and normalizations (since 2026-11-27) --------------------------------------


def _reduce_check(fname: str, reduce: str, valid: tuple[str, ...]) -> None:
    if reduce not in valid:
        opts = ", ".join(repr(v) for v in valid)
        raise ValueError(
            f"chainer F.{fname}: only {opts} are valid for 'reduce', but {reduce!r} is given"
        )


def _same_float(fname: str, **ops: Any) -> None:
    """chainer's ``check_type_forward`` of a loss: floating operands of one dtype."""
    _check_float(fname, **ops)
    _match(fname, *ops.values())


def huber_loss(x: Any, t: Any, delta: float, reduce: str = "sum_along_second_axis") -> Variable:
    """The Huber loss of ``a = x - t``: ``a ** 2 / 2`` where ``|a| <= delta``, else
    ``delta * (|a| - delta / 2)``; summed along axis 1 (``reduce="sum_along_second_axis"``,
    the default) or elementwise (``"no"``). The gradient is ``clip(a, -delta, delta)``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[0.5, 3.0]], np.float32)
        >>> F.huber_loss(x, np.zeros_like(x), 1.0)
        variable([2.625])
    """
    _reduce_check("huber_loss", reduce, ("sum_along_second_axis", "no"))
    _same_float("huber_loss", x=x, t=t)
    y = _call("MulScalar", _call("HuberLoss", x, t, delta=float(delta)), val=0.5)
    if reduce == "sum_along_second_axis":
        y = _call("Sum", y, axis=1)
    return _out(y)  # type: ignore[no-any-return]


def hinge(x: Any, t: Any, norm: str = "L1", reduce: str = "mean") -> Variable:
    """The hinge loss of scores x (N, K) and integer labels t (N,): with
    ``d[n, k] = max(0, 1 - s x[n, k])`` (``s = 1`` for ``k = t[n]``, else -1), the loss is
    ``sum(d)`` (``norm="L1"``) or ``sum(d ** 2)`` (``"L2"``) divided by N (``reduce="mean"``),
    or ``d`` (``d ** 2``) itself (``"no"``). Differentiable with respect to x.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.hinge(np.array([[2.0, -1.0]], np.float32), np.array([0], np.int32))
        variable(0.)
    """
    if norm not in ("L1", "L2"):
        raise NotImplementedError("norm should be either 'L1' or 'L2'")
    _reduce_check("hinge", reduce, ("mean", "no"))
    _check_float("hinge", x=x)
    xs = _shape(x)
    labels = _arr(t, "hinge (its labels t)")
    if labels.dtype.kind != "i" or len(xs) != 2 or labels.shape != (xs[0],):
        raise TypeError(
            f"chainer F.hinge: x must be 2-d (N, K) and t signed integer labels (N,), got "
            f"shapes {xs} and {labels.shape}, t of dtype {labels.dtype}"
        )
    sgn = np.ones(xs, dtype=_fdtype(x))
    sgn[np.arange(xs[0]), labels] = -1
    d = _call("ReLU", _call("AddScalar", _call("Mul2", x, _const(sgn, x)), val=1.0))
    if norm == "L2":
        d = _call("Mul2", d, d)
    if reduce == "no":
        return _out(d)  # type: ignore[no-any-return]
    return _out(_call("MulScalar", _call("Sum", d), val=1.0 / xs[0]))  # type: ignore[no-any-return]


def contrastive(x0: Any, x1: Any, y: Any, margin: float = 1, reduce: str = "mean") -> Variable:
    """The contrastive loss of pairs x0, x1 (N, K) with integer labels y (N,) (1: similar,
    0: dissimilar): with ``d = ||x0 - x1||``,
    ``L = (y d ** 2 + (1 - y) max(margin - d, 0) ** 2) / 2``, summed and divided by N
    (``reduce="mean"``) or per pair (``"no"``). In the second term the distance is
    ``sqrt(max(d ** 2, eps ** 2))``, ``eps = 1e-7`` (5e-3 for float16), so that its gradient
    stays finite, as chainer's (which uses ``max(d, eps)`` in the gradient only).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x0 = np.array([[0.0, 0.0]], np.float32)
        >>> F.contrastive(x0, np.array([[0.6, 0.8]], np.float32), np.array([1], np.int32))
        variable(0.5)
    """
    if margin <= 0:
        raise ValueError("chainer F.contrastive: margin should be positive value.")
    _reduce_check("contrastive", reduce, ("mean", "no"))
    _same_float("contrastive", x0=x0, x1=x1)
    s0, s1 = _shape(x0), _shape(x1)
    labels = _arr(y, "contrastive (its labels y)")
    if (
        labels.dtype.kind != "i"
        or s0 != s1
        or len(s0) != 2
        or labels.shape[:1] != s0[:1]
        or s0[0] == 0
    ):
        raise TypeError(
            f"chainer F.contrastive: x0 and x1 must be 2-d of one shape (N, K), N > 0, and y "
            f"signed integer labels (N,); got shapes {s0}, {s1} and {labels.shape}"
        )
    dt = _fdtype(x0)
    eps = 5e-3 if dt == np.float16 else 1e-7
    diff = _call("Sub2", x0, x1)
    dist_sq = _call("Sum", _call("Mul2", diff, diff), axis=1)
    dist = _call("Sqrt", _call("MaximumScalar", dist_sq, val=eps * eps))
    mdist = _call("ReLU", _call("RSubScalar", dist, val=float(margin)))
    yf = _const(labels.astype(dt), diff)
    loss = _call(
        "MulScalar",
        _call(
            "Add2",
            _call("Mul2", yf, dist_sq),
            _call("Mul2", _call("RSubScalar", yf, val=1.0), _call("Mul2", mdist, mdist)),
        ),
        val=0.5,
    )
    if reduce == "no":
        return _out(loss)  # type: ignore[no-any-return]
    return _out(_call("MulScalar", _call("Sum", loss), val=1.0 / s0[0]))  # type: ignore[no-any-return]


def triplet(
    anchor: Any, positive: Any, negative: Any, margin: float = 0.2, reduce: str = "mean"
) -> Variable:
    """The triplet loss ``max(||a - p|| ** 2 - ||a - n|| ** 2 + margin, 0)`` of rows of
    anchor, positive and negative (N, K): the mean over N (``reduce="mean"``) or per row
    (``"no"``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> a = np.zeros((1, 2), np.float32)
        >>> F.triplet(a, a, a + 1)
        variable(0.)
    """
    if margin <= 0:
        raise ValueError("chainer F.triplet: margin should be positive value.")
    _reduce_check("triplet", reduce, ("mean", "no"))
    _same_float("triplet", anchor=anchor, positive=positive, negative=negative)
    sa, sp, sn = _shape(anchor), _shape(positive), _shape(negative)
    if not sa == sp == sn:
        raise TypeError(
            f"chainer F.triplet: anchor, positive and negative must have one shape, got "
            f"{sa}, {sp} and {sn}"
        )
    dp = _call("Sub2", anchor, positive)
    dn = _call("Sub2", anchor, negative)
    d = _call("Sum", _call("Sub2", _call("Mul2", dp, dp), _call("Mul2", dn, dn)), axis=1)
    hinge_ = _call("ReLU", _call("AddScalar", d, val=float(margin)))
    if reduce == "no":
        return _out(hinge_)  # type: ignore[no-any-return]
    return _out(_call("MulScalar", _call("Sum", hinge_), val=1.0 / sa[0]))  # type: ignore[no-any-return]


def _reduce_vae(loss: Any, reduce: str) -> Variable:
    if reduce == "sum":
        return sum(loss)
    if reduce == "mean":
        return mean(loss)
    return loss  # type: ignore[no-any-return]


def gaussian_kl_divergence(mean: Any, ln_var: Any, reduce: str = "sum") -> Variable:
    """The KL divergence of N(mean, exp(ln_var)) from N(0, 1), elementwise
    ``(mean ** 2 + exp(ln_var) - ln_var - 1) / 2``: summed (``reduce="sum"``), averaged
    (``"mean"``) or not (``"no"``); computed with chainer's operators, as chainer.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.gaussian_kl_divergence(np.zeros(2, np.float32), np.zeros(2, np.float32))
        variable(0.)
    """
    _reduce_check("gaussian_kl_divergence", reduce, ("sum", "mean", "no"))
    _check_float("gaussian_kl_divergence", ln_var=ln_var)
    var = exp(ln_var)
    mean_square = mean * mean
    loss = (mean_square + var - ln_var - 1) * 0.5
    return _reduce_vae(loss, reduce)


def gaussian_nll(x: Any, mean: Any, ln_var: Any, reduce: str = "sum") -> Variable:
    """The negative log-likelihood of x under N(mean, exp(ln_var)), elementwise
    ``(ln_var + log(2 pi)) / 2 + (x - mean) ** 2 exp(-ln_var) / 2``: summed (``"sum"``),
    averaged (``"mean"``) or not (``"no"``); computed with chainer's operators.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> z = np.zeros(1, np.float32)
        >>> round(float(F.gaussian_nll(z, z, z).array), 4)
        0.9189
    """
    _reduce_check("gaussian_nll", reduce, ("sum", "mean", "no"))
    _check_float("gaussian_nll", ln_var=ln_var)
    x_prec = exp(-ln_var)
    x_diff = x - mean
    x_power = (x_diff * x_diff) * x_prec * -0.5
    loss = (ln_var + math.log(2 * math.pi)) / 2 - x_power
    return _reduce_vae(loss, reduce)


def bernoulli_nll(x: Any, y: Any, reduce: str = "sum") -> Variable:
    """The negative log-likelihood of x under Bernoulli(sigmoid(y)), elementwise
    ``softplus(y) - x y``: summed (``"sum"``), averaged (``"mean"``) or not (``"no"``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> round(float(F.bernoulli_nll(np.ones(1, np.float32), np.zeros(1, np.float32)).array), 4)
        0.6931
    """
    _reduce_check("bernoulli_nll", reduce, ("sum", "mean", "no"))
    _check_float("bernoulli_nll", y=y)
    loss = softplus(y) - x * y
    return _reduce_vae(loss, reduce)


def layer_normalization(x: Any, gamma: Any, beta: Any, eps: float = 1e-5) -> Variable:
    """Each row of x (N, D) normalized, ``(x - mean) / sqrt(var + eps)`` (the biased variance
    of the row), then scaled by gamma (D,) and shifted by beta (D,).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[1.0, 3.0]], np.float32)
        >>> g, b = np.ones(2, np.float32), np.zeros(2, np.float32)
        >>> F.layer_normalization(x, g, b, eps=0.0)
        variable([[-1.,  1.]])
    """
    _check_float("layer_normalization", x=x)
    xs, gs, bs = _shape(x), _shape(gamma), _shape(beta)
    dt = _fdtype(x)
    if (
        len(xs) != 2
        or len(gs) != 1
        or len(bs) != 1
        or _fdtype(gamma) != dt
        or _fdtype(beta) != dt
        or gs != bs
    ):
        raise TypeError(
            f"chainer F.layer_normalization: x must be 2-d and gamma, beta 1-d of one shape "
            f"and x's dtype; got shapes {xs}, {gs}, {bs}"
        )
    mu = _call("Mean", x, axis=1, keepdims=True)
    x_mu = _call("Sub2", x, _call("BroadcastTo", mu, shape=xs))
    var = _call("Mean", _call("Mul2", x_mu, x_mu), axis=1, keepdims=True)
    inv_std = _call("RDivScalar", _call("Sqrt", _call("AddScalar", var, val=float(eps))), val=1.0)
    x_hat = _call("Mul2", x_mu, _call("BroadcastTo", inv_std, shape=xs))
    g = _call("BroadcastTo", _call("Reshape", gamma, shape=(1, *gs)), shape=xs)
    b = _call("BroadcastTo", _call("Reshape", beta, shape=(1, *bs)), shape=xs)
    return _out(_call("Add2", _call("Mul2", x_hat, g), b))  # type: ignore[no-any-return]


def group_normalization(x: Any, groups: int, gamma: Any, beta: Any, eps: float = 1e-5) -> Variable:
    """x (N, C, ...) normalized within each of ``groups`` groups of channels of each sample,
    ``(x - mean) / sqrt(var + eps)`` (the biased variance of the group), then scaled by gamma
    (C,) and shifted by beta (C,) per channel.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[[1.0], [3.0]]], np.float32)
        >>> g, b = np.ones(2, np.float32), np.zeros(2, np.float32)
        >>> F.group_normalization(x, 1, g, b, eps=0.0)
        variable([[[-1.],
                   [ 1.]]])
    """
    if not isinstance(groups, (int, np.integer)) or isinstance(groups, bool):
        raise TypeError("Argument: 'groups' type must be (int).")
    _check_float("group_normalization", x=x, gamma=gamma)
    xs, gs, bs = _shape(x), _shape(gamma), _shape(beta)
    if (
        len(xs) < 2
        or len(gs) != 1
        or len(bs) != 1
        or _fdtype(gamma) != _fdtype(beta)
        or xs[1] != gs[0]
        or gs != bs
    ):
        raise TypeError(
            f"chainer F.group_normalization: x must have 2 axes or more and gamma, beta be 1-d "
            f"of shape (C,), one dtype; got shapes {xs}, {gs}, {bs}"
        )
    if xs[1] % groups:
        raise ValueError(
            f"The number of channels {xs[1]} is not divisible by 'groups' argument {groups}."
        )
    n, c = xs[:2]
    rest = int(math.prod(xs[2:]))
    h = _call("Reshape", x, shape=(n * groups, (c // groups) * rest))
    mu = _call("Mean", h, axis=1, keepdims=True)
    x_mu = _call("Sub2", h, _call("BroadcastTo", mu, shape=tuple(h.shape)))
    var = _call("Mean", _call("Mul2", x_mu, x_mu), axis=1, keepdims=True)
    inv_std = _call("RDivScalar", _call("Sqrt", _call("AddScalar", var, val=float(eps))), val=1.0)
    x_hat = _call("Mul2", x_mu, _call("BroadcastTo", inv_std, shape=tuple(h.shape)))
    x_hat = _call("Reshape", x_hat, shape=(n, c, rest))
    g = _call("BroadcastTo", _call("Reshape", gamma, shape=(1, c, 1)), shape=(n, c, rest))
    b = _call("BroadcastTo", _call("Reshape", beta, shape=(1, c, 1)), shape=(n, c, rest))
    y = _call("Add2", _call("Mul2", x_hat, _as_dtype(g, x_hat.dtype)), _as_dtype(b, x_hat.dtype))
    return _out(_call("Reshape", y, shape=xs))  # type: ignore[no-any-return]


def local_response_normalization(
    x: Any, n: int = 5, k: float = 2, alpha: float = 1e-4, beta: float = 0.75
) -> Variable:
    """``y[:, c] = x[:, c] / (k + alpha * sum(x[:, c'] ** 2)) ** beta`` over the channels
    ``c - n // 2 <= c' <= c + n // 2`` (axis 1; x has 2 axes or more).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.local_response_normalization(np.ones((1, 3), np.float32), n=3, k=1, alpha=1,
        ...                                beta=1)
        variable([[0.33333334, 0.25      , 0.33333334]])
    """
    _check_float("local_response_normalization", x=x)
    xs = _shape(x)
    if len(xs) < 2:
        raise TypeError("chainer F.local_response_normalization: x.ndim >= 2 is required")
    half = n // 2
    x2 = _call("Mul2", x, x) if isinstance(x, _NativeVariable) else _call("PowScalar", x, val=2.0)
    widths = (half, half) + (0, 0) * (len(xs) - 2)
    padded = _call("Pad", x2, pad_width=widths, mode="constant", constant_value=0.0)
    c = xs[1]
    parts = [
        _call("GetItem", padded, key=(slice(None), slice(i, i + c))) for i in range(2 * half + 1)
    ]
    total = parts[0] if len(parts) == 1 else _call("AddN", *parts)
    unit = _call("AddScalar", _call("MulScalar", total, val=float(alpha)), val=float(k))
    return _out(_call("Mul2", x, _call("PowScalar", unit, val=-float(beta))))  # type: ignore[no-any-return]


# -- more layers (since 2026-11-27) ---------------------------------------------------------


def _ntuple(v: Any, n: int, what: str, where: str) -> tuple[int, ...]:
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    t = tuple(int(a) for a in v)
    if len(t) != n:
        raise ValueError(f"{where}: {what} must be an int or a tuple of {n} ints, got {v!r}")
    return t


def _conv_outsize(size: int, k: int, s: int, p: int, cover_all: bool = False, d: int = 1) -> int:
    """chainer's ``get_conv_outsize``."""
    dk = k + (k - 1) * (d - 1)
    if cover_all:
        return (size + p * 2 - dk + s - 1) // s + 1
    return (size + p * 2 - dk) // s + 1


def _deconv_outsize(size: int, k: int, s: int, p: int, cover_all: bool = False, d: int = 1) -> int:
    """chainer's ``get_deconv_outsize``."""
    dk = (k - 1) * d + 1
    if cover_all:
        return s * (size - 1) + dk - s + 1 - 2 * p
    return s * (size - 1) + dk - 2 * p


def _spatial(fname: str, x: Any, nd: int | None) -> int:
    """The number of spatial axes of x (N, C, ...), checked against ``nd`` (chainer's
    message)."""
    got = len(_shape(x)) - 2
    if nd is not None and got != nd:
        raise ValueError(
            f"chainer F.{fname}: the number of dimensions under channel dimension of the input "
            f"'x' should be {nd}. But the actual ndim was {got}."
        )
    if got < 1:
        raise ValueError(f"chainer F.{fname}: x must have a batch, a channel and a spatial axis")
    return got


def _conv(
    fname: str,
    x: Any,
    W: Any,
    b: Any,
    stride: Any,
    pad: Any,
    cover_all: bool,
    dilate: Any,
    groups: int,
    nd: int | None,
) -> Variable:
    where = f"chainer F.{fname}"
    n = _spatial(fname, x, nd)
    _check_float(fname, x=x, W=W, b=b)
    dt = _fdtype(x)
    if b is not None and _dtype(b) is not None and _dtype(b) != dt:
        raise TypeError(
            f"{where}: b has dtype {_dtype(b)} but x has dtype {dt}; chainer requires "
            "b.dtype == x.dtype"
        )
    xshape, wshape = _shape(x), _shape(W)
    if len(wshape) != len(xshape):
        raise TypeError(f"{where}: W must have x's {len(xshape)} axes, got shape {wshape}")
    st, p, dl = (
        _ntuple(v, n, w, where) for v, w in ((stride, "stride"), (pad, "pad"), (dilate, "dilate"))
    )
    if cover_all:
        widths = []
        for i in range(n):
            size, dk = xshape[2 + i], (wshape[2 + i] - 1) * dl[i] + 1
            out = _conv_outsize(size, wshape[2 + i], st[i], p[i], True, dl[i])
            extra = builtins_max((out - 1) * st[i] + dk - (size + 2 * p[i]), 0)
            widths += [p[i], p[i] + extra]
        if any(widths[1::2]) or any(widths[0::2]):
            x = _call("Pad", x, pad_width=tuple(widths), mode="constant")
            p = (0,) * n
    y = _call("Convolution", x, W, b, base_axis=1, pad=p, stride=st, dilation=dl, group=int(groups))
    return _out(_as_dtype(y, dt))  # type: ignore[no-any-return]


def convolution_nd(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    cover_all: bool = False,
    dilate: Any = 1,
    groups: int = 1,
) -> Variable:
    """N-d convolution of x (N, C, d_1, ..., d_n) with filters W (out, C // groups, k_1, ...,
    k_n), plus b: ``y[n, o, ...] = sum(W[o, c, ...] x[n, c, s * i + d * k - p]) + b[o]``
    (``cover_all`` adds the windows covering the whole input, as :func:`convolution_2d`).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 3, 3, 3), np.float32)
        >>> F.convolution_nd(x, np.ones((2, 1, 2, 2, 2), np.float32)).shape
        (1, 2, 2, 2, 2)
    """
    return _conv("convolution_nd", x, W, b, stride, pad, cover_all, dilate, groups, None)


def convolution_1d(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    cover_all: bool = False,
    dilate: Any = 1,
    groups: int = 1,
) -> Variable:
    """1-d convolution (:func:`convolution_nd` of x (N, C, L)).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.convolution_1d(np.ones((1, 1, 4), np.float32), np.ones((1, 1, 2), np.float32))
        variable([[[2., 2., 2.]]])
    """
    return _conv("convolution_1d", x, W, b, stride, pad, cover_all, dilate, groups, 1)


def convolution_3d(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    cover_all: bool = False,
    dilate: Any = 1,
    groups: int = 1,
) -> Variable:
    """3-d convolution (:func:`convolution_nd` of x (N, C, D, H, W)).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 2, 2, 2), np.float32)
        >>> F.convolution_3d(x, np.ones((1, 1, 2, 2, 2), np.float32))
        variable([[[[[8.]]]]])
    """
    return _conv("convolution_3d", x, W, b, stride, pad, cover_all, dilate, groups, 3)


def dilated_convolution_2d(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    dilate: Any = 1,
    cover_all: bool = False,
) -> Variable:
    """:func:`convolution_2d` with the filter taps ``dilate`` apart.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 5, 5), np.float32)
        >>> F.dilated_convolution_2d(x, np.ones((1, 1, 3, 3), np.float32), dilate=2).shape
        (1, 1, 1, 1)
    """
    return _conv("dilated_convolution_2d", x, W, b, stride, pad, cover_all, dilate, 1, 2)


def depthwise_convolution_2d(
    x: Any, W: Any, b: Any = None, stride: Any = 1, pad: Any = 0
) -> Variable:
    """Depthwise 2-d convolution: W (multiplier, C, kh, kw) filters each channel of x
    separately; the output has ``C * multiplier`` channels (chainer's order: W transposed to
    (C, multiplier, kh, kw) and reshaped, then :func:`convolution_2d` with ``groups=C``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 3, 4, 4), np.float32)
        >>> F.depthwise_convolution_2d(x, np.ones((2, 3, 3, 3), np.float32)).shape
        (1, 6, 2, 2)
    """
    multiplier, in_channels, kh, kw = _shape(W)
    w = _call("Transpose", W, axes=(1, 0, 2, 3))
    w = _call("Reshape", w, shape=(multiplier * in_channels, 1, kh, kw))
    return convolution_2d(x, w, b, stride, pad, groups=in_channels)


def deconvolution_2d(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    outsize: Any = None,
    **kwargs: Any,
) -> Variable:
    """deconvolution_2d(x, W, b=None, stride=1, pad=0, outsize=None, *, dilate=1, groups=1)

    The transposed 2-d convolution of x (N, C, h, w) with W (C, out // groups, kh, kw), plus b:
    the output has ``s (h - 1) + d (kh - 1) + 1 - 2 p`` rows (``outsize`` may ask for up to
    ``s - 1`` more: those of the unpadded output that the padding would crop at the end, then
    rows that get only the bias), and likewise columns. W of another float dtype than x is
    computed with numpy's promotion and the result cast to x's dtype (as chainer 7.8.1); b must
    have x's dtype, unless ``chainer.config.type_check`` is False (as in the numerical
    gradients of ``gradient_check``), where chainer adds it with numpy's promotion too.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 2, 2), np.float32)
        >>> F.deconvolution_2d(x, np.ones((1, 1, 2, 2), np.float32), stride=2).shape
        (1, 1, 4, 4)
    """
    where = "chainer F.deconvolution_2d"
    unknown = set(kwargs) - {"dilate", "groups"}
    if "deterministic" in kwargs:
        raise ValueError(
            "deterministic argument is not supported anymore. Use "
            "chainer.using_config('cudnn_deterministic', value) context where value is either "
            "`True` or `False`."
        )
    if unknown:
        raise TypeError(f"{where}: got unexpected keyword argument(s) {sorted(unknown)}")
    dl = _pair(kwargs.get("dilate", 1), "dilate", where)
    groups = int(kwargs.get("groups", 1))
    if dl[0] <= 0 or dl[1] <= 0:
        raise ValueError(f"Dilate should be positive, but {kwargs.get('dilate')} is supplied.")
    _check_float("deconvolution_2d", x=x, W=W, b=b)
    st, p = _pair(stride, "stride", where), _pair(pad, "pad", where)
    xs, ws = _shape(x), _shape(W)
    dt = _fdtype(x)
    if len(xs) != 4 or len(ws) != 4 or xs[1] != ws[0]:
        raise TypeError(
            f"{where}: x (N, C, h, w) and W (C, out // groups, kh, kw) are required, got shapes "
            f"{xs} and {ws}"
        )
    strict = getattr(config, "type_check", True)  # chainer checks b's dtype only then
    if b is not None and (_shape(b) != (ws[1] * groups,) or (strict and _fdtype(b) != dt)):
        raise TypeError(f"{where}: b must have shape ({ws[1] * groups},) and x's dtype")
    default = tuple(_deconv_outsize(xs[2 + i], ws[2 + i], st[i], p[i], d=dl[i]) for i in range(2))
    if outsize is None:
        out = default
    else:
        out = tuple(int(o) for o in outsize)
        for i in range(2):
            if _conv_outsize(out[i], ws[2 + i], st[i], p[i], d=dl[i]) != xs[2 + i]:
                raise TypeError(
                    f"{where}: outsize {out} does not give back x's spatial shape "
                    f"{xs[2:]} by a convolution"
                )
    if any(o <= 0 for o in out):
        raise RuntimeError("Height in the output must be positive.")
    extra = (out[0] - default[0], out[1] - default[1])
    if any(extra):
        # the rows past the default size are those the padding crops at the end (chainer's
        # col2im): the full output (no padding) cut at [p, p + out), zeros past its end
        y = _call("Deconvolution", x, W, None, base_axis=1, stride=st, dilation=dl, group=groups)
        full = tuple(y.shape[2:])
        short = tuple(builtins_max(p[i] + out[i] - full[i], 0) for i in range(2))
        if any(short):
            y = _call("Pad", y, pad_width=(0, short[0], 0, short[1]), mode="constant")
        y = _call(
            "GetItem",
            y,
            key=(slice(None), slice(None), slice(p[0], p[0] + out[0]), slice(p[1], p[1] + out[1])),
        )
    else:
        y = _call(
            "Deconvolution", x, W, None, base_axis=1, pad=p, stride=st, dilation=dl, group=groups
        )
    if b is not None:
        y = _call(
            "Add2",
            y,
            _call("BroadcastTo", _call("Reshape", b, shape=(1, -1, 1, 1)), shape=tuple(y.shape)),
        )
    return _out(_as_dtype(y, dt))  # type: ignore[no-any-return]


def _max_pool(
    fname: str,
    x: Any,
    ksize: Any,
    stride: Any,
    pad: Any,
    cover_all: bool,
    return_indices: bool,
    nd: int | None,
) -> Any:
    where = f"chainer F.{fname}"
    n = _spatial(fname, x, nd)
    k = _ntuple(ksize, n, "ksize", where)
    s = k if stride is None else _ntuple(stride, n, "stride", where)
    p = _ntuple(pad, n, "pad", where)
    shape = _shape(x)
    widths = []
    for i in range(n):
        size = shape[2 + i]
        out = _pool_out(size, k[i], s[i], p[i], cover_all)
        extra = builtins_max((out - 1) * s[i] + k[i] - (size + 2 * p[i]), 0)
        widths += [p[i], p[i] + int(extra)]
    h = x
    if any(widths):
        h = _call("Pad", x, pad_width=tuple(widths), mode="constant", constant_value=-np.inf)
    y = _out(_call("MaxPooling", h, kernel=k, stride=s, ignore_border=True, pad=(0,) * n))
    if not return_indices:
        return y
    hv = h if isinstance(h, _NativeVariable) else as_variable(h)
    return y, _pool_indices_nd(hv, k, s, tuple(y.shape), fname)


def _pool_indices_nd(
    h: _NativeVariable, k: tuple[int, ...], s: tuple[int, ...], out: tuple[int, ...], fname: str
) -> Any:
    """chainer's ``return_indices`` of an n-d max pooling: the flat position of each maximum
    inside its window (row-major over the kernel, counting padding; the first on ties)."""
    refuse_data(h, f"chainer.functions.{fname}(return_indices=True)")
    observe_read(h, f"chainer.functions.{fname}(return_indices=True), which reads it in Python")
    data = h._data
    xp = h.device.xp
    best = None
    idx = xp.zeros(out, dtype=np.int64)
    for flat, offs in enumerate(itertools.product(*(range(kk) for kk in k))):
        key = (slice(None), slice(None)) + tuple(
            slice(o, o + st * (m - 1) + 1, st) for o, st, m in zip(offs, s, out[2:], strict=True)
        )
        win = data[key]
        if best is None:
            best = win.copy()
            continue
        better = win > best
        best = xp.where(better, win, best)
        idx = xp.where(better, flat, idx)
    return idx


def max_pooling_nd(
    x: Any,
    ksize: Any,
    stride: Any = None,
    pad: Any = 0,
    cover_all: bool = True,
    return_indices: bool = False,
) -> Any:
    """N-d max pooling of x (N, C, d_1, ..., d_n), as :func:`max_pooling_2d` (stride defaults
    to ksize, padding never wins, ``cover_all`` adds the windows covering the whole input,
    ``return_indices`` also returns each maximum's flat position in its window).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.max_pooling_nd(np.arange(8, dtype=np.float32).reshape(1, 1, 2, 2, 2), 2)
        variable([[[[[7.]]]]])
    """
    return _max_pool("max_pooling_nd", x, ksize, stride, pad, cover_all, return_indices, None)


def max_pooling_1d(
    x: Any,
    ksize: Any,
    stride: Any = None,
    pad: Any = 0,
    cover_all: bool = True,
    return_indices: bool = False,
) -> Any:
    """1-d max pooling (:func:`max_pooling_nd` of x (N, C, L)).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.max_pooling_1d(np.array([[[1.0, 3.0, 2.0]]], np.float32), 2)
        variable([[[3., 2.]]])
    """
    return _max_pool("max_pooling_1d", x, ksize, stride, pad, cover_all, return_indices, 1)


def max_pooling_3d(
    x: Any,
    ksize: Any,
    stride: Any = None,
    pad: Any = 0,
    cover_all: bool = True,
    return_indices: bool = False,
) -> Any:
    """3-d max pooling (:func:`max_pooling_nd` of x (N, C, D, H, W)).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.max_pooling_3d(np.zeros((1, 1, 4, 4, 4), np.float32), 2).shape
        (1, 1, 2, 2, 2)
    """
    return _max_pool("max_pooling_3d", x, ksize, stride, pad, cover_all, return_indices, 3)


def _avg_pool(
    fname: str, x: Any, ksize: Any, stride: Any, pad: Any, pad_value: Any, nd: int | None
) -> Variable:
    where = f"chainer F.{fname}"
    if not (pad_value is None or pad_value == 0):
        raise ValueError(f"pad_value must be either 0 or None, not {pad_value}.")
    n = _spatial(fname, x, nd)
    k = _ntuple(ksize, n, "ksize", where)
    s = k if stride is None else _ntuple(stride, n, "stride", where)
    p = _ntuple(pad, n, "pad", where)
    y = _call(
        "AveragePooling",
        x,
        kernel=k,
        stride=s,
        ignore_border=True,
        pad=p,
        including_pad=pad_value is not None,
    )
    return _out(y)  # type: ignore[no-any-return]


def average_pooling_nd(
    x: Any, ksize: Any, stride: Any = None, pad: Any = 0, pad_value: Any = 0
) -> Variable:
    """N-d average pooling of x (N, C, d_1, ..., d_n) (stride defaults to ksize): padded zeros
    count in the average (``pad_value=0``) or not (``None``, the mean of the window's elements
    inside x).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 2, 2, 2), np.float32)
        >>> F.average_pooling_nd(x, 2, pad=1).array[0, 0, 0, 0]
        array([0.125, 0.125], dtype=float32)
    """
    return _avg_pool("average_pooling_nd", x, ksize, stride, pad, pad_value, None)


def average_pooling_1d(
    x: Any, ksize: Any, stride: Any = None, pad: Any = 0, pad_value: Any = 0
) -> Variable:
    """1-d average pooling (:func:`average_pooling_nd` of x (N, C, L)).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.average_pooling_1d(np.array([[[1.0, 3.0, 2.0, 4.0]]], np.float32), 2)
        variable([[[2., 3.]]])
    """
    return _avg_pool("average_pooling_1d", x, ksize, stride, pad, pad_value, 1)


def average_pooling_3d(
    x: Any, ksize: Any, stride: Any = None, pad: Any = 0, pad_value: Any = 0
) -> Variable:
    """3-d average pooling (:func:`average_pooling_nd` of x (N, C, D, H, W)).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.average_pooling_3d(np.ones((1, 1, 2, 2, 2), np.float32), 2)
        variable([[[[[1.]]]]])
    """
    return _avg_pool("average_pooling_3d", x, ksize, stride, pad, pad_value, 3)


def _unpool_sizes(
    fname: str, x: Any, ksize: Any, stride: Any, pad: Any, outsize: Any, cover_all: bool
) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int], tuple[int, int]]:
    where = f"chainer F.{fname}"
    _check_float(fname, x=x)
    xs = _shape(x)
    if len(xs) != 4:
        raise TypeError(f"{where}: x must be 4-d (N, C, H, W), got shape {xs}")
    k = _pair(ksize, "ksize", where)
    s = k if stride is None else _pair(stride, "stride", where)
    p = _pair(pad, "pad", where)
    if outsize is None:
        out = tuple(_deconv_outsize(xs[2 + i], k[i], s[i], p[i], cover_all) for i in range(2))
    else:
        out = tuple(int(o) for o in outsize)
        for i in range(2):
            if _conv_outsize(out[i], k[i], s[i], p[i], cover_all) != xs[2 + i]:
                raise TypeError(
                    f"{where}: outsize {out} does not give back x's spatial shape {xs[2:]}"
                )
    return k, s, p, (out[0], out[1])


def _col2im_crop(y: Any, p: tuple[int, int], out: tuple[int, int]) -> Any:
    """chainer's ``col2im``: the full transposed result ``y`` seen from ``p`` on, ``out`` long
    (zeros past its end)."""
    full = tuple(y.shape[2:])
    need = (p[0] + out[0] - full[0], p[1] + out[1] - full[1])
    if need[0] > 0 or need[1] > 0:
        y = _call(
            "Pad",
            y,
            pad_width=(0, builtins_max(need[0], 0), 0, builtins_max(need[1], 0)),
            mode="constant",
        )
    key = (slice(None), slice(None), slice(p[0], p[0] + out[0]), slice(p[1], p[1] + out[1]))
    return _call("GetItem", y, key=key)


def unpooling_2d(
    x: Any,
    ksize: Any,
    stride: Any = None,
    pad: Any = 0,
    outsize: Any = None,
    cover_all: bool = True,
) -> Variable:
    """The inverse of pooling: each element of x (N, C, h, w) copied over its ksize window
    (stride defaults to ksize; overlapping copies add up), as chainer's ``col2im``; the output
    size is ``outsize`` or ``s (h - 1) + k - 2 p`` (``- s + 1`` with ``cover_all``). As chainer,
    when the windows tile the output exactly (``outsize = k (h - p)``, stride = ksize, even
    pads) the output is x cropped by ``p // 2`` on each side, each element repeated k times.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.unpooling_2d(np.array([[[[1.0, 2.0]]]], np.float32), 2, cover_all=False)
        variable([[[[1., 1., 2., 2.],
                    [1., 1., 2., 2.]]]])
    """
    k, s, p, out = _unpool_sizes("unpooling_2d", x, ksize, stride, pad, outsize, cover_all)
    n, c, h, w = _shape(x)
    if (
        h - p[0] != 0
        and w - p[1] != 0
        and out[0] % (h - p[0]) == 0
        and out[1] % (w - p[1]) == 0
        and out[0] // (h - p[0]) == k[0]
        and out[1] // (w - p[1]) == k[1]
        and p[0] % 2 == 0
        and p[1] % 2 == 0
        and s[1] == k[0]
        and s[0] == k[1]
    ):  # chainer's integer-scale path
        hx = x
        if p[0] > 0 or p[1] > 0:
            key = (
                slice(None),
                slice(None),
                slice(p[0] // 2, -p[0] // 2),
                slice(p[1] // 2, -p[1] // 2),
            )
            hx = _call("GetItem", x, key=key)
        hh, ww = _shape(hx)[2:]
        r = _call("Reshape", hx, shape=(n, c, hh, 1, ww, 1))
        r = _call("BroadcastTo", r, shape=(n, c, hh, k[0], ww, k[1]))
        return _out(_call("Reshape", r, shape=(n, c, hh * k[0], ww * k[1])))  # type: ignore[no-any-return]
    ones = _const(
        np.ones((c, 1, *k), dtype=_fdtype(x)), x if isinstance(x, _NativeVariable) else None
    )
    y = _call("Deconvolution", x, ones, None, base_axis=1, pad=(0, 0), stride=s, group=c)
    return _out(_col2im_crop(y, p, out))  # type: ignore[no-any-return]


def upsampling_2d(
    x: Any,
    indexes: Any,
    ksize: Any,
    stride: Any = None,
    pad: Any = 0,
    outsize: Any = None,
    cover_all: bool = True,
) -> Variable:
    """The inverse of max pooling with ``return_indices``: each element of x (N, C, h, w) put
    at the position ``indexes`` (an integer array of x's shape, as :func:`max_pooling_2d`
    returns) names inside its window, zeros elsewhere (overlapping windows add up); the output
    size is ``outsize`` or that of :func:`unpooling_2d`.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[[[5.0]]]], np.float32)
        >>> F.upsampling_2d(x, np.array([[[[2]]]]), 2, cover_all=False)
        variable([[[[0., 0.],
                    [5., 0.]]]])
    """
    k, s, p, out = _unpool_sizes("upsampling_2d", x, ksize, stride, pad, outsize, cover_all)
    idx = np.asarray(indexes)
    xs = _shape(x)
    if idx.shape != xs:
        raise TypeError(
            f"chainer F.upsampling_2d: indexes of shape {idx.shape} must have x's shape {xs}"
        )
    n, c, h, w = xs
    oy = np.arange(h).reshape(1, 1, h, 1) * s[0] + idx // k[1] - p[0]
    ox = np.arange(w).reshape(1, 1, 1, w) * s[1] + idx % k[1] - p[1]
    inside = (oy >= 0) & (oy < out[0]) & (ox >= 0) & (ox < out[1])
    size = n * c * out[0] * out[1]
    nc = np.arange(n * c).reshape(n, c, 1, 1)
    flat = np.where(inside, (nc * out[0] + oy) * out[1] + ox, size)
    dt = _fdtype(x)
    like = x if isinstance(x, _NativeVariable) else None
    zeros = _const(np.zeros(size + 1, dtype=dt), like)
    xf = _call("Reshape", x, shape=(n * c * h * w,))
    y = _call("ScatterAdd", zeros, _const(flat.reshape(-1), zeros), xf, axis=0)
    y = _call("GetItem", y, key=slice(0, size))
    return _out(_call("Reshape", y, shape=(n, c, out[0], out[1])))  # type: ignore[no-any-return]


def _interp_axis(x: Any, axis: int, out: int, size: int, mode: str, align_corners: bool) -> Any:
    """x interpolated along ``axis`` (of length ``size``) to ``out`` positions with chainer's
    ``compute_indices_and_weights``."""
    if mode == "bilinear":
        if align_corners:
            v = np.linspace(0, size - 1, num=out, dtype=np.float64)
        else:
            v = np.maximum((np.arange(out, dtype=np.float64) + 0.5) * (size / out) - 0.5, 0)
        vw, v = np.modf(v)
    else:
        v = np.minimum(np.floor(np.arange(out, dtype=np.float64) * (size / out)), size - 1)
        vw = np.zeros_like(v)
    v0 = v.astype(np.intp)
    v1 = np.minimum(v0 + 1, size - 1)
    dt = x.dtype
    shape = [1] * len(x.shape)
    shape[axis] = out
    w1 = _const(vw.astype(dt).reshape(shape), x)
    w0 = _const((1 - vw.astype(dt)).reshape(shape), x)
    full = list(x.shape)
    full[axis] = out
    a = _call("Gather", x, _const(v0, x), axis=axis)
    b = _call("Gather", x, _const(v1, x), axis=axis)
    return _call(
        "Add2",
        _call("Mul2", a, _call("BroadcastTo", w0, shape=tuple(full))),
        _call("Mul2", b, _call("BroadcastTo", w1, shape=tuple(full))),
    )


def resize_images(
    x: Any, output_shape: Sequence[int], *, mode: str = "bilinear", align_corners: bool = True
) -> Variable:
    """x (N, C, H, W), float32, resized to ``output_shape`` (out_H, out_W) by bilinear
    interpolation (``align_corners=True``: the corners' pixels coincide, source position
    ``v = i (H - 1) / (out_H - 1)``; else ``v = max((i + 1/2) H / out_H - 1/2, 0)``) or by the
    nearest pixel (``mode="nearest"``: ``v = min(floor(i H / out_H), H - 1)``); differentiable
    in x at every order (a linear map).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.resize_images(np.array([[[[0.0, 1.0]]]], np.float32), (1, 3))
        variable([[[[0. , 0.5, 1. ]]]])
    """
    if mode not in ("bilinear", "nearest"):
        raise ValueError(
            f"chainer F.resize_images: mode must be 'bilinear' or 'nearest', got {mode!r}"
        )
    xs = _shape(x)
    dt = _fdtype(x)
    if dt != np.float32 or len(xs) != 4:
        raise TypeError(
            f"chainer F.resize_images: x must be float32 and 4-d, got dtype {dt}, shape {xs}"
        )
    h = x if isinstance(x, _NativeVariable) else _const(np.asarray(x), None)
    h = _interp_axis(h, 2, int(output_shape[0]), xs[2], mode, align_corners)
    h = _interp_axis(h, 3, int(output_shape[1]), xs[3], mode, align_corners)
    return _out(h)  # type: ignore[no-any-return]


# -- the functions of the links added on 2026-11-27: bilinear and the n-step RNNs ----------


def bilinear(e1: Any, e2: Any, W: Any, V1: Any = None, V2: Any = None, b: Any = None) -> Variable:
    """The bilinear function of chainer's ``L.Bilinear``: ``y[n, l] = sum_jk e1[n, j]
    e2[n, k] W[j, k, l]`` (+ ``e1 V1 + e2 V2 + b`` when the three are given), with e1 (N, J)
    and e2 (N, K) (axes after the first flattened), W (J, K, L), V1 (J, L), V2 (K, L), b (L,).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> e = np.ones((1, 2), np.float32)
        >>> F.bilinear(e, e, np.ones((2, 2, 3), np.float32))
        variable([[4., 4., 4.]])
    """
    where = "chainer F.bilinear"
    flags = [V1 is None, V2 is None, b is None]
    if any(flags) and not all(flags):
        raise ValueError(
            "All coefficients and bias for bilinear() must be None, if at least one of them "
            "is None."
        )
    _check_float("bilinear", e1=e1, e2=e2, W=W)
    s1, s2, sw = _shape(e1), _shape(e2), _shape(W)
    dt = _fdtype(e1)
    if (
        len(s1) < 2
        or len(s2) < 2
        or s1[0] != s2[0]
        or len(sw) != 3
        or math.prod(s1[1:]) != sw[0]
        or math.prod(s2[1:]) != sw[1]
        or _fdtype(e2) != dt
        or _fdtype(W) != dt
    ):
        raise TypeError(
            f"{where}: e1 (N, J), e2 (N, K) and W (J, K, L) of one dtype are required, got "
            f"shapes {s1}, {s2}, {sw}"
        )
    n, j, k, out = s1[0], sw[0], sw[1], sw[2]
    a = reshape(e1, (n, j, 1))
    c = reshape(e2, (n, 1, k))
    outer = reshape(matmul(a, c), (n, j * k))
    y = matmul(outer, reshape(W, (j * k, out)))
    if V1 is not None:
        if (
            _shape(V1) != (j, out)
            or _shape(V2) != (k, out)
            or _shape(b) != (out,)
            or any(_fdtype(v) != dt for v in (V1, V2, b))
        ):
            raise TypeError(
                f"{where}: V1 ({j}, {out}), V2 ({k}, {out}) and b ({out},) of e1's dtype are "
                f"required, got shapes {_shape(V1)}, {_shape(V2)}, {_shape(b)}"
            )
        # (a chainer Variable at run time, as install_operators makes the operators return;
        # mypy sees gradhub's Variable.__add__, hence _out, which leaves it as it is)
        y = _out(
            y
            + matmul(reshape(e1, (n, j)), V1)
            + matmul(reshape(e2, (n, k)), V2)
            + broadcast_to(b, (n, out))
        )
    return y


def _n_step_check(
    fname: str,
    n_layers: int,
    directions: int,
    n_weights: int,
    hx: Any,
    cx: Any,
    ws: Any,
    bs: Any,
    xs: Any,
    kwargs: dict[str, Any],
) -> None:
    """chainer's argument checks of the n-step RNN functions, and the layouts they read."""
    where = f"chainer F.{fname}"
    for key, what in (("train", "train"), ("use_cudnn", "use_cudnn")):
        if key in kwargs:
            raise ValueError(f"{what} argument is not supported anymore. Use chainer.using_config")
    if kwargs:
        raise TypeError(f"{where} got unexpected keyword argument(s) {sorted(kwargs)}")
    if not isinstance(xs, (list, tuple)) or not xs:
        raise TypeError(f"{where}: xs must be a non-empty list of Variables (B_t, in_size)")
    n = n_layers * directions
    if len(ws) != n or len(bs) != n:
        raise ValueError(
            f"{where}: ws and bs need n_layers * directions = {n} lists, got {len(ws)} and "
            f"{len(bs)}"
        )
    for i in range(n):
        if len(ws[i]) != n_weights or len(bs[i]) != n_weights:
            raise ValueError(
                f"{where}: ws[{i}] and bs[{i}] must hold {n_weights} arrays each, got "
                f"{len(ws[i])} and {len(bs[i])}"
            )
    x_in = _shape(xs[0])[1]
    w_in = _shape(ws[0][0])[1]
    if x_in != w_in:
        raise ValueError(
            f"Inconsistent input size in input values and weight parameters: {x_in} != {w_in}"
        )
    batches = [_shape(x)[0] for x in xs]
    if any(b1 < b2 for b1, b2 in itertools.pairwise(batches)):
        raise ValueError(
            f"{where}: the batch sizes of xs must not increase (the sequences sorted by "
            f"decreasing length, as F.transpose_sequence gives them), got {batches}"
        )
    for name, h in (("hx", hx), ("cx", cx)):
        if h is None and name == "cx":
            continue
        hs = _shape(h)
        if len(hs) != 3 or hs[0] != n or hs[1] < batches[0]:
            raise TypeError(
                f"{where}: {name} must have shape (n_layers * directions = {n}, B >= "
                f"{batches[0]}, out_size), got {hs}"
            )
        if _fdtype(h) != _fdtype(xs[0]):
            raise TypeError(f"{where}: {name} must have xs's dtype {_fdtype(xs[0])}")


def _n_step_impl(
    cell: Callable[[Any, Any, Any, Any, Any], tuple[Any, Any]],
    n_layers: int,
    dropout_ratio: float,
    hx: Any,
    cx: Any,
    ws: Any,
    bs: Any,
    xs: Any,
    bidirectional: bool,
) -> tuple[Variable, Variable | None, tuple[Variable, ...]]:
    """chainer's ``n_step_rnn_impl``: each layer (and direction) runs ``cell`` over the time
    steps of xs, updating the first ``B_t`` rows of its state; the next layer reads the
    outputs (the two directions concatenated), after ``dropout(ratio)``."""
    direction = 2 if bidirectional else 1
    hx_l = [get_item(hx, i) for i in range(_shape(hx)[0])]
    cx_l = [get_item(cx, i) for i in range(_shape(cx)[0])] if cx is not None else None
    xs_next = list(xs)
    hy, cy = [], []
    for layer in range(n_layers):
        for di in range(direction):
            idx = direction * layer + di
            seq = xs_next if layer == 0 else [dropout(x, ratio=dropout_ratio) for x in xs_next]
            if di == 1:
                seq = seq[::-1]
            h = hx_l[idx]
            c = cx_l[idx] if cx_l is not None else None
            outs = []
            for x in seq:
                batch = _shape(x)[0]
                split = _shape(h)[0] > batch
                if split:
                    h, h_rest = split_axis(h, [batch], axis=0)
                    if c is not None:
                        c, c_rest = split_axis(c, [batch], axis=0)
                h, c = cell(x, h, c, ws[idx], bs[idx])
                outs.append(h)
                if split:
                    h = concat([h, h_rest], axis=0)
                    if c is not None:
                        c = concat([c, c_rest], axis=0)
            hy.append(h)
            cy.append(c)
            if di == 0:
                forward_outs = outs
            else:
                outs.reverse()
                xs_next = [
                    concat([f, bk], axis=1) for f, bk in zip(forward_outs, outs, strict=True)
                ]
        if direction == 1:
            xs_next = forward_outs
    return stack(hy), (stack(cy) if cx is not None else None), tuple(xs_next)


def _rnn_cell(activation: str) -> Callable[[Any, Any, Any, Any, Any], tuple[Any, Any]]:
    def cell(x: Any, h: Any, c: Any, w: Any, b: Any) -> tuple[Any, Any]:
        z = linear(x, w[0], b[0]) + linear(h, w[1], b[1])
        return (tanh(z) if activation == "tanh" else relu(z)), None

    return cell


def _stack_weight(ws: Any) -> Any:
    """chainer's ``_stack_weight``: the gate blocks interleaved row by row (F.lstm's layout)."""
    w = stack(ws, axis=1)
    s = _shape(w)
    return reshape(w, (s[0] * s[1], *s[2:]))


def _lstm_cell(x: Any, h: Any, c: Any, w: Any, b: Any) -> tuple[Any, Any]:
    xw = _stack_weight([w[2], w[0], w[1], w[3]])
    hw = _stack_weight([w[6], w[4], w[5], w[7]])
    xb = _stack_weight([b[2], b[0], b[1], b[3]])
    hb = _stack_weight([b[6], b[4], b[5], b[7]])
    c_new, h_new = lstm(c, linear(x, xw, xb) + linear(h, hw, hb))
    return h_new, c_new


def _gru_cell(x: Any, h: Any, c: Any, w: Any, b: Any) -> tuple[Any, Any]:
    gru_x = linear(x, concat([w[0], w[1], w[2]], axis=0), concat([b[0], b[1], b[2]], axis=0))
    gru_h = linear(h, concat([w[3], w[4], w[5]], axis=0), concat([b[3], b[4], b[5]], axis=0))
    r_x, z_x, w_x = split_axis(gru_x, 3, axis=1)
    r_h, z_h, u_h = split_axis(gru_h, 3, axis=1)
    r = sigmoid(r_x + r_h)
    z = sigmoid(z_x + z_h)
    h_bar = tanh(w_x + r * u_h)
    return (1 - z) * h_bar + z * h, None


def n_step_rnn(
    n_layers: int,
    dropout_ratio: float,
    hx: Any,
    ws: Any,
    bs: Any,
    xs: Any,
    activation: str = "tanh",
    **kwargs: Any,
) -> tuple[Variable, tuple[Variable, ...]]:
    """A stacked Elman RNN over the time steps ``xs`` (``xs[t]`` of shape (B_t, in), batch
    sizes not increasing: F.transpose_sequence's layout): for each layer,
    ``h_t = act(W0 x_t + b0 + W1 h_{t-1} + b1)`` with ``act`` tanh or relu, ``ws[layer] =
    [W0, W1]`` (W0 (out, in) for layer 0, (out, out) above, W1 (out, out)), ``bs[layer] = [b0,
    b1]``; only the first ``B_t`` rows of the state advance at step t. ``hx`` (n_layers, B,
    out) is the initial state; returns ``(hy, ys)``, hy the last states (n_layers, B, out),
    ys the top layer's outputs, one per step. ``dropout_ratio`` drops the inputs of the layers
    above the first (``chainer.config.train``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> w = [[np.ones((1, 2), np.float32), np.zeros((1, 1), np.float32)]]
        >>> b = [[np.zeros(1, np.float32), np.zeros(1, np.float32)]]
        >>> hy, ys = F.n_step_rnn(1, 0.0, np.zeros((1, 1, 1), np.float32), w, b,
        ...                       [np.full((1, 2), 0.25, np.float32)], activation="relu")
        >>> ys[0]
        variable([[0.5]])
    """
    return _n_step_rnn_base(
        "n_step_rnn", n_layers, dropout_ratio, hx, ws, bs, xs, activation, False, kwargs
    )


def n_step_birnn(
    n_layers: int,
    dropout_ratio: float,
    hx: Any,
    ws: Any,
    bs: Any,
    xs: Any,
    activation: str = "tanh",
    **kwargs: Any,
) -> tuple[Variable, tuple[Variable, ...]]:
    """The bidirectional :func:`n_step_rnn`: ``ws[2 l]`` runs forward in time and ``ws[2 l +
    1]`` backward, each with its own state (hx (2 n_layers, B, out)); the outputs of the two
    directions are concatenated (2 out features) as the next layer's input (W0 of the layers
    above the first has shape (out, 2 out)) and as ys."""
    return _n_step_rnn_base(
        "n_step_birnn", n_layers, dropout_ratio, hx, ws, bs, xs, activation, True, kwargs
    )


def _n_step_rnn_base(
    fname: str,
    n_layers: int,
    dropout_ratio: float,
    hx: Any,
    ws: Any,
    bs: Any,
    xs: Any,
    activation: str,
    bi: bool,
    kwargs: dict[str, Any],
) -> tuple[Variable, tuple[Variable, ...]]:
    if activation not in ("tanh", "relu"):
        raise ValueError(f'Invalid activation: "{activation}". Please select from [tanh,relu]')
    _n_step_check(fname, n_layers, 2 if bi else 1, 2, hx, None, ws, bs, xs, kwargs)
    hy, _, ys = _n_step_impl(
        _rnn_cell(activation), n_layers, dropout_ratio, hx, None, ws, bs, xs, bi
    )
    return hy, ys


def n_step_lstm(
    n_layers: int, dropout_ratio: float, hx: Any, cx: Any, ws: Any, bs: Any, xs: Any, **kwargs: Any
) -> tuple[Variable, Variable, tuple[Variable, ...]]:
    """A stacked LSTM over the time steps ``xs`` (as :func:`n_step_rnn`), chainer's weight
    layout: ``ws[layer] = [W0, ..., W7]``, W0..W3 (out, in) on the input (out, out above the
    first layer) for the input gate i, forget gate f, cell input a and output gate o, W4..W7
    (out, out) on the state for the same gates, ``bs[layer]`` the 8 biases (out,):
    ``a = tanh(W2 x + b2 + W6 h + b6)``, ``i = sigmoid(W0 x + b0 + W4 h + b4)``,
    ``f = sigmoid(W1 x + b1 + W5 h + b5)``, ``o = sigmoid(W3 x + b3 + W7 h + b7)``,
    ``c' = a i + f c``, ``h' = o tanh(c')`` (:func:`lstm`). Returns ``(hy, cy, ys)``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> ws = [[np.zeros((2, 3), np.float32)] * 4 + [np.zeros((2, 2), np.float32)] * 4]
        >>> bs = [[np.zeros(2, np.float32)] * 8]
        >>> h0 = np.zeros((1, 2, 2), np.float32)
        >>> hy, cy, ys = F.n_step_lstm(1, 0.0, h0, h0, ws, bs, [np.ones((2, 3), np.float32)])
        >>> hy.shape, len(ys)
        ((1, 2, 2), 1)
    """
    if cx is None:
        raise TypeError("chainer F.n_step_lstm: cx (the initial cell states) is required")
    _n_step_check("n_step_lstm", n_layers, 1, 8, hx, cx, ws, bs, xs, kwargs)
    hy, cy, ys = _n_step_impl(_lstm_cell, n_layers, dropout_ratio, hx, cx, ws, bs, xs, False)
    return hy, cy, ys  # type: ignore[return-value]


def n_step_bilstm(
    n_layers: int, dropout_ratio: float, hx: Any, cx: Any, ws: Any, bs: Any, xs: Any, **kwargs: Any
) -> tuple[Variable, Variable, tuple[Variable, ...]]:
    """The bidirectional :func:`n_step_lstm` (directions as :func:`n_step_birnn`)."""
    if cx is None:
        raise TypeError("chainer F.n_step_bilstm: cx (the initial cell states) is required")
    _n_step_check("n_step_bilstm", n_layers, 2, 8, hx, cx, ws, bs, xs, kwargs)
    hy, cy, ys = _n_step_impl(_lstm_cell, n_layers, dropout_ratio, hx, cx, ws, bs, xs, True)
    return hy, cy, ys  # type: ignore[return-value]


def n_step_gru(
    n_layers: int, dropout_ratio: float, hx: Any, ws: Any, bs: Any, xs: Any, **kwargs: Any
) -> tuple[Variable, tuple[Variable, ...]]:
    """A stacked GRU over the time steps ``xs`` (as :func:`n_step_rnn`), chainer's layout:
    ``ws[layer] = [W0, ..., W5]`` (W0..W2 on the input, W3..W5 (out, out) on the state),
    ``bs[layer]`` the 6 biases: ``r = sigmoid(W0 x + b0 + W3 h + b3)``, ``z = sigmoid(W1 x +
    b1 + W4 h + b4)``, ``h_bar = tanh(W2 x + b2 + r (W5 h + b5))``, ``h' = (1 - z) h_bar +
    z h``. Returns ``(hy, ys)``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> ws = [[np.zeros((2, 3), np.float32)] * 3 + [np.zeros((2, 2), np.float32)] * 3]
        >>> bs = [[np.zeros(2, np.float32)] * 6]
        >>> hy, ys = F.n_step_gru(1, 0.0, np.ones((1, 1, 2), np.float32), ws, bs,
        ...                       [np.ones((1, 3), np.float32)])
        >>> ys[0]
        variable([[0.5, 0.5]])
    """
    _n_step_check("n_step_gru", n_layers, 1, 6, hx, None, ws, bs, xs, kwargs)
    hy, _, ys = _n_step_impl(_gru_cell, n_layers, dropout_ratio, hx, None, ws, bs, xs, False)
    return hy, ys


def n_step_bigru(
    n_layers: int, dropout_ratio: float, hx: Any, ws: Any, bs: Any, xs: Any, **kwargs: Any
) -> tuple[Variable, tuple[Variable, ...]]:
    """The bidirectional :func:`n_step_gru` (directions as :func:`n_step_birnn`)."""
    _n_step_check("n_step_bigru", n_layers, 2, 6, hx, None, ws, bs, xs, kwargs)
    hy, _, ys = _n_step_impl(_gru_cell, n_layers, dropout_ratio, hx, None, ws, bs, xs, True)
    return hy, ys


__all__ += [
    "bilinear",
    "n_step_bigru",
    "n_step_bilstm",
    "n_step_birnn",
    "n_step_gru",
    "n_step_lstm",
    "n_step_rnn",
]


def _deconv(
    fname: str,
    x: Any,
    W: Any,
    b: Any,
    stride: Any,
    pad: Any,
    outsize: Any,
    dilate: Any,
    groups: int,
    nd: int | None,
) -> Variable:
    """chainer's ``deconvolution_nd``: the transposed convolution, its output cut from the
    unpadded one at ``[p, p + out)`` (zeros past its end) when ``outsize`` is not the
    default size."""
    where = f"chainer F.{fname}"
    n = _spatial(fname, x, nd)
    _check_float(fname, x=x, W=W, b=b)
    xs, ws = _shape(x), _shape(W)
    dt = _fdtype(x)
    groups = int(groups)
    if len(ws) != n + 2 or xs[1] != ws[0] or _fdtype(W) != dt:
        raise TypeError(
            f"{where}: x (N, C, ...) and W (C, out // groups, k_1, ..., k_{n}) of one dtype "
            f"are required, got shapes {xs} and {ws}"
        )
    if xs[1] % groups:
        raise TypeError("The number of groups must be a divisor of that of input channels")
    strict = getattr(config, "type_check", True)  # chainer checks b's dtype only then
    if b is not None and (_shape(b) != (ws[1] * groups,) or (strict and _fdtype(b) != dt)):
        raise TypeError(f"{where}: b must have shape ({ws[1] * groups},) and x's dtype")
    st, p, dl = (
        _ntuple(v, n, w, where) for v, w in ((stride, "stride"), (pad, "pad"), (dilate, "dilate"))
    )
    default = tuple(_deconv_outsize(xs[2 + i], ws[2 + i], st[i], p[i], d=dl[i]) for i in range(n))
    if outsize is None:
        out = default
    else:
        out = _ntuple(outsize, n, "outsize", where)
        for i in range(n):
            lo = _conv_outsize(out[i], ws[2 + i], st[i], p[i], d=dl[i])
            hi = _conv_outsize(out[i], ws[2 + i], st[i], p[i], True, d=dl[i])
            if not lo <= xs[2 + i] <= hi:
                raise TypeError(
                    f"{where}: outsize {out} does not give back x's spatial shape {xs[2:]} by "
                    "a convolution"
                )
    if any(o <= 0 for o in out):
        raise RuntimeError(f"{where}: the output size {out} must be positive")
    if out == default:
        y = _call(
            "Deconvolution", x, W, None, base_axis=1, pad=p, stride=st, dilation=dl, group=groups
        )
    else:
        y = _call("Deconvolution", x, W, None, base_axis=1, stride=st, dilation=dl, group=groups)
        full = tuple(y.shape[2:])
        short = [builtins_max(p[i] + out[i] - full[i], 0) for i in range(n)]
        if any(short):
            widths = tuple(w for s in short for w in (0, s))
            y = _call("Pad", y, pad_width=widths, mode="constant")
        key = (slice(None), slice(None), *(slice(p[i], p[i] + out[i]) for i in range(n)))
        y = _call("GetItem", y, key=key)
    if b is not None:
        bshape = (1, -1) + (1,) * n
        y = _call(
            "Add2", y, _call("BroadcastTo", _call("Reshape", b, shape=bshape), shape=tuple(y.shape))
        )
    return _out(_as_dtype(y, dt))  # type: ignore[no-any-return]


def deconvolution_nd(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    outsize: Any = None,
    dilate: Any = 1,
    groups: int = 1,
) -> Variable:
    """The transposed N-d convolution of x (N, C, d_1, ..., d_n) with W (C, out // groups,
    k_1, ..., k_n), plus b (out,): axis i of the output has ``s (d_i - 1) + dil (k_i - 1) + 1
    - 2 p`` entries unless ``outsize`` asks for another size that a convolution maps back to
    ``d_i`` (the rows of the unpadded output from ``p`` on, zeros past its end), as chainer.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 2), np.float32)
        >>> F.deconvolution_nd(x, np.ones((1, 1, 2), np.float32), stride=2)
        variable([[[1., 1., 1., 1.]]])
    """
    return _deconv("deconvolution_nd", x, W, b, stride, pad, outsize, dilate, groups, None)


def deconvolution_1d(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    outsize: Any = None,
    dilate: Any = 1,
    groups: int = 1,
) -> Variable:
    """:func:`deconvolution_nd` of x (N, C, L) (another number of axes raises chainer's
    ``ValueError``)."""
    return _deconv("deconvolution_1d", x, W, b, stride, pad, outsize, dilate, groups, 1)


def deconvolution_3d(
    x: Any,
    W: Any,
    b: Any = None,
    stride: Any = 1,
    pad: Any = 0,
    outsize: Any = None,
    dilate: Any = 1,
    groups: int = 1,
) -> Variable:
    """:func:`deconvolution_nd` of x (N, C, D, H, W) (another number of axes raises chainer's
    ``ValueError``)."""
    return _deconv("deconvolution_3d", x, W, b, stride, pad, outsize, dilate, groups, 3)


__all__ += ["deconvolution_1d", "deconvolution_3d", "deconvolution_nd"]


# the functions of the training surface (links, optimizers), in their own module
from ._training_functions import (  # noqa: E402
    accuracy,
    batch_normalization,
    fixed_batch_normalization,
)

__all__ += ["accuracy", "batch_normalization", "fixed_batch_normalization"]


# the sequence helpers, metrics, linear algebra, CRF, CTC, ROI, normalizations and the other
# functions of chainer 7.8.1 (since 2026-11-27)
from ._functions_more import *  # noqa: E402, F403
from ._functions_more import __all__ as _more_all  # noqa: E402

__all__ += _more_all

# chainer's module paths (``chainer.functions.loss.vae``...) holding these functions
import sys as _sys  # noqa: E402

from . import _function_modules  # noqa: E402

_function_modules.install(_sys.modules[__name__])

# -- special functions (chainer 7.8.1's need SciPy; here gradhub's registered functions) --------


def _invalid_unless(fname: str, what: str, x: Any, kind: str) -> Any:
    """The dtype of ``x``; chainer's ``InvalidType`` (its ``check_type_forward``) unless its
    kind is ``kind`` (``"f"``: floating point, ``"i"``: signed integer)."""
    dt = _dtype(x)
    dt = np.dtype(dt if dt is not None else np.asarray(x).dtype)
    if dt.kind != kind:
        from .utils.type_check import InvalidType

        expect = f"{what}.dtype.kind == {kind}"
        raise InvalidType(
            expect,
            f"{dt.kind} != {kind}",
            f"\nInvalid operation is performed in: {fname} (Forward)\n\nExpect: {expect}\n"
            f"Actual: {dt.kind} != {kind}",
        )
    return dt


def _special_unary(name: str, native: str, formula: str, example: str, out: str) -> Any:
    def fn(x: Any) -> Variable:
        _invalid_unless(name, "x", x, "f")
        return _out(_call(native, x))  # type: ignore[no-any-return]

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"Elementwise {formula} (chainer's ``F.{name}``; gradhub's ``{native}``, computed "
        "without SciPy, so on every device; see docs/migration-chainer.md).\n\n"
        "x must be floating point (else chainer's ``InvalidType``); the result has x's dtype "
        "and is differentiable to any order.\n\n"
        f"Example::\n\n    >>> import numpy as np\n"
        f"    >>> import gradhub_compat.chainer.functions as F\n"
        f"    >>> F.{name}(np.array({example}))\n    {out}\n"
    )
    return fn


lgamma = _special_unary(
    "lgamma", "LGamma", "log|Gamma(x)|", "[1.0, 5.0]", "variable([0.        , 3.17805383])"
)
digamma = _special_unary(
    "digamma", "Digamma", "digamma(x) = d lgamma(x) / dx", "[1.0]", "variable([-0.57721566])"
)
erfinv = _special_unary(
    "erfinv",
    "ErfInv",
    "inverse of erf on [-1, 1]",
    "[0.0, 0.5]",
    "variable([0.        , 0.47693628])",
)
erfcinv = _special_unary(
    "erfcinv",
    "ErfcInv",
    "inverse of erfc on [0, 2]",
    "[1.0, 0.5]",
    "variable([0.        , 0.47693628])",
)
erfcx = _special_unary(
    "erfcx", "Erfcx", "exp(x^2) erfc(x)", "[0.0, 100.0]", "variable([1.        , 0.00564161])"
)
ndtr = _special_unary(
    "ndtr", "Ndtr", "standard normal distribution function", "[0.0]", "variable([0.5])"
)
ndtri = _special_unary("ndtri", "Ndtri", "inverse of ndtr on [0, 1]", "[0.5]", "variable([0.])")
log_ndtr = _special_unary(
    "log_ndtr",
    "LogNdtr",
    "log(ndtr(x)), finite where ndtr underflows",
    "[-40.0]",
    "variable([-804.60844201])",
)


def _per_value(fname: str, values: Any, x: Any, compute: Callable[[Any, Any], Any]) -> Variable:
    """``compute(x, v)`` where the array ``values`` (broadcast with ``x``) holds ``v``: one call
    of the registered function per distinct value, joined with ``Where`` (each call sees 1.0
    where the value is another, so no pole there reaches the gradient)."""
    values = np.asarray(values.get() if hasattr(values, "get") else values)
    shape = np.broadcast_shapes(values.shape, _shape(x))
    xv = x if _shape(x) == shape else _call("BroadcastTo", x, shape=shape)
    distinct = np.unique(values)
    if distinct.size == 1:
        return compute(xv, distinct[0])
    vb = np.broadcast_to(values, shape)
    dt = _dtype(xv)
    y = None
    for v in distinct:
        mask = _const(vb == v, xv)
        safe = _call("Where", mask, xv, _const(np.ones(shape, dtype=dt), xv))
        part = _call("Where", mask, compute(safe, v), _const(np.zeros(shape, dtype=dt), xv))
        y = part if y is None else y + part
    if y is None:  # size 0
        return compute(xv, 0)
    return y


def polygamma(n: Any, x: Any) -> Variable:
    """Elementwise polygamma(n, x), the n-th derivative of digamma (chainer's ``F.polygamma``;
    gradhub's ``Polygamma``).

    ``n`` is an array (or Variable) of signed integers, as chainer: a Python int raises
    ``TypeError`` (chainer: "incompatible array types are mixed"), another dtype chainer's
    ``InvalidType``, as does a non-floating x; n and x broadcast. Only x is differentiated
    (:math:`\\psi^{(n+1)}(x)`); a negative n gives NaN (chainer: SciPy's NaN).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.polygamma(np.array([1]), np.array([1.0]))  # pi^2 / 6
        variable([1.64493407])
    """
    if not hasattr(n, "dtype") or isinstance(n, np.generic):
        raise TypeError(
            "chainer F.polygamma: n must be an integer array or Variable, got "
            f"{type(n).__name__} (chainer: incompatible array types are mixed in the forward "
            "input (polygamma))"
        )
    _invalid_unless("polygamma", "n", n, "i")
    _invalid_unless("polygamma", "x", x, "f")

    def order(xv: Any, k: Any) -> Any:
        k = int(k)
        if k < 0:  # SciPy's NaN
            return _call("MulScalar", xv, val=float("nan"))
        return _call("Polygamma", xv, n=k)

    nd = _arr(n, "polygamma (its orders n)")
    return _out(_per_value("polygamma", nd, x, order))  # type: ignore[no-any-return]


def zeta(x: Any, q: Any) -> Variable:
    """The Hurwitz zeta function :math:`\\zeta(x, q) = \\sum_k (q + k)^{-x}`, elementwise in q
    (chainer's ``F.zeta(x, q)``; gradhub's ``Zeta``).

    ``x`` is a number (or an array of them, broadcast with q), not differentiated, as chainer;
    q must be floating point (else chainer's ``InvalidType``), and the result has q's dtype;
    :math:`\\partial/\\partial q = -x\\,\\zeta(x + 1, q)`. As SciPy: NaN for ``x < 1``, inf
    for ``x = 1``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.zeta(2.0, np.array([1.0]))  # pi^2 / 6
        variable([1.64493407])
    """
    _invalid_unless("zeta", "q", q, "f")
    if isinstance(x, _NativeVariable):
        raise TypeError(
            "chainer F.zeta: x (the exponent) is not differentiated: pass a number or an array, "
            "not a Variable"
        )
    xs = np.asarray(x)
    if xs.dtype.kind not in "iuf":
        raise TypeError(f"chainer F.zeta: x must be a real number or array, got {x!r}")

    def at(qv: Any, s: Any) -> Any:
        return _call("Zeta", qv, x=float(s))

    if xs.ndim == 0:
        return _out(at(q, xs))  # type: ignore[no-any-return]
    return _out(_per_value("zeta", xs, q, at))  # type: ignore[no-any-return]


__all__ += [
    "digamma",
    "erfcinv",
    "erfcx",
    "erfinv",
    "lgamma",
    "log_ndtr",
    "ndtr",
    "ndtri",
    "polygamma",
    "zeta",
]

#: chainer 7.8.1's functions the layer does not provide
_NOT_PROVIDED = (
    "add",
    "deformable_convolution_2d_sampler",
)


def __getattr__(name: str) -> Any:
    if name in _NOT_PROVIDED:
        raise NotImplementedError(
            f"chainer.functions.{name} is not supported by gradhub; see docs/migration-chainer.md"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
