"""mxnet's symbol forms of ``LayerNorm``, ``InstanceNorm``, ``GroupNorm`` and ``pad`` (``Pad``),
as mxnet 1.9.1: the constructors of ``mx.sym`` (wrapped by :func:`~.symbol._layer` in
:mod:`.symbol`), their shape inference rules (:mod:`.shapes`), their executor kernels
(:mod:`.executor`, the formulas of ``mx.nd.LayerNorm``... in :mod:`._nd_layers`) and their JSON
parameters (:mod:`.serialization`). Gluon's ``LayerNorm``, ``InstanceNorm``, ``GroupNorm`` and
``ReflectionPad2D`` run these operators when called on Symbols, so that ``export`` writes them
and ``SymbolBlock.imports`` reads them.

The operators and their JSON names are mxnet's: ``LayerNorm`` (inputs ``data``, ``gamma``,
``beta``; parameters ``axis``, ``eps``, ``output_mean_var``), ``InstanceNorm`` (``eps``),
``GroupNorm`` (``num_groups``, ``eps``, ``output_mean_var``) and ``Pad`` (``mode``,
``pad_width``, ``constant_value``). A layer creates the arguments ``NAME_gamma`` and
``NAME_beta`` that are not given. ``LayerNorm`` and ``GroupNorm`` with ``output_mean_var=True``
have three outputs, ``NAME_output``, ``NAME_mean`` and ``NAME_std`` (``std = sqrt(var + eps)``,
biased variance), and no gradient flows back through the last two (as mxnet).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> ln = mx.sym.LayerNorm(mx.sym.var("x"), name="ln")
    >>> ln.list_arguments(), ln.infer_shape(x=(2, 3, 4))[0]
    (['x', 'ln_gamma', 'ln_beta'], [(2, 3, 4), (4,), (4,)])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._sym_ops_more import _error
from .base import MXNetError, _MXNetValueError

if TYPE_CHECKING:
    from gradhub.variable import Variable as NativeVariable

    from .symbol import Symbol

__all__ = [
    "EXECUTOR_KERNELS",
    "JSON_PARAMS",
    "NUM_OUTPUTS",
    "SHAPE_RULES",
    "STAT_OUTPUTS",
    "GroupNorm",
    "InstanceNorm",
    "LayerNorm",
    "pad",
]

#: mxnet's names of the outputs of ``LayerNorm`` and ``GroupNorm`` (``output_mean_var=True``)
STAT_OUTPUTS = ("output", "mean", "std")
#: mxnet's pad modes -> gradhub's ``Pad`` modes
_PAD_MODES = {"constant": "constant", "edge": "repeat", "reflect": "reflect"}
_DOCS = "docs/migration-mxnet.md"


# -- constructors (mx.sym.LayerNorm...) ---------------------------------------------------------


def _int(fn: str, arg: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise _MXNetValueError(f"mx.sym.{fn}: {arg} must be an int, got {v!r}")
    return int(v)


def _eps(fn: str, eps: Any) -> float:
    try:
        return float(eps)
    except (TypeError, ValueError):
        raise _MXNetValueError(f"mx.sym.{fn}: eps must be a number, got {eps!r}") from None


def _normalization(
    op: str,
    name: str | None,
    data: Any,
    gamma: Any,
    beta: Any,
    attrs: dict[str, Any],
    output_mean_var: bool,
) -> Symbol:
    """The node(s) of a normalization ``op`` on ``data``: ``gamma`` and ``beta`` (new variables
    ``NAME_gamma``, ``NAME_beta`` when None); with ``output_mean_var`` a group of the three
    output nodes (``output``, ``mean``, ``std``) sharing one token, as ``BatchNorm``'s."""
    from .symbol import Symbol, Variable, _auto_name, _data_arg

    data = _data_arg(op, data)
    for arg, v in (("gamma", gamma), ("beta", beta)):
        if v is not None and not isinstance(v, Symbol):
            raise TypeError(f"mx.sym.{op}: {arg} must be a Symbol, got {type(v).__name__}")
    name = name or _auto_name(op.lower())
    inputs = [
        data,
        gamma if gamma is not None else Variable(f"{name}_gamma"),
        beta if beta is not None else Variable(f"{name}_beta"),
    ]
    if not output_mean_var:
        return Symbol(op, name, inputs, attrs)
    token = object()
    outs = [Symbol(op, name, inputs, {**attrs, "index": i, "key": token}) for i in range(3)]
    return Symbol("Group", name, outs)


def LayerNorm(
    data: Symbol | None = None,
    gamma: Symbol | None = None,
    beta: Symbol | None = None,
    axis: int = -1,
    eps: float = 1e-5,
    output_mean_var: bool = False,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``LayerNorm`` over the axis ``axis`` (the formula of ``mx.nd.LayerNorm``):
    ``y = (x - mean) / sqrt(var + eps) * gamma + beta``, the biased statistics taken along
    ``axis`` for each position of the other axes. Creates ``NAME_gamma`` and ``NAME_beta`` of
    shape ``(data.shape[axis],)`` unless given. ``output_mean_var=True`` adds the outputs
    ``NAME_mean`` and ``NAME_std`` (``sqrt(var + eps)``), of data's shape with 1 on ``axis``,
    without gradients (as mxnet 1.9.1).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> ln = mx.sym.LayerNorm(mx.sym.var("x"), axis=1, output_mean_var=True, name="ln")
        >>> ln.list_outputs(), ln.infer_shape(x=(2, 3, 4))[1]
        (['ln_output', 'ln_mean', 'ln_std'], [(2, 3, 4), (2, 1, 4), (2, 1, 4)])
    """
    attrs = {"axis": _int("LayerNorm", "axis", axis), "eps": _eps("LayerNorm", eps)}
    return _normalization("LayerNorm", name, data, gamma, beta, attrs, bool(output_mean_var))


def InstanceNorm(
    data: Symbol | None = None,
    gamma: Symbol | None = None,
    beta: Symbol | None = None,
    eps: float = 1e-3,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``InstanceNorm`` (data ``(N, C, ...)``, at least 3 axes; the formula of
    ``mx.nd.InstanceNorm``): ``y[n, c] = (x[n, c] - mean[n, c]) / sqrt(var[n, c] + eps) *
    gamma[c] + beta[c]``, the biased statistics over the axes after the second. Creates
    ``NAME_gamma`` and ``NAME_beta`` of shape ``(C,)`` unless given.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.sym.InstanceNorm(mx.sym.var("x"), name="in").infer_shape(x=(2, 3, 5))[0]
        [(2, 3, 5), (3,), (3,)]
    """
    attrs = {"eps": _eps("InstanceNorm", eps)}
    return _normalization("InstanceNorm", name, data, gamma, beta, attrs, False)


def GroupNorm(
    data: Symbol | None = None,
    gamma: Symbol | None = None,
    beta: Symbol | None = None,
    num_groups: int = 1,
    eps: float = 1e-5,
    output_mean_var: bool = False,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet 1.9.1's ``GroupNorm`` (data ``(N, C, ...)``, at least 3 axes; the formula of
    ``mx.nd.GroupNorm``): the channels split into ``num_groups`` groups of consecutive
    channels, ``y = (x - mean[n, g]) / sqrt(var[n, g] + eps) * gamma[g] + beta[g]`` (biased
    variance). As mxnet 1.9.1, ``NAME_gamma`` and ``NAME_beta`` have one value per group, shape
    ``(num_groups,)``. ``output_mean_var=True`` adds ``NAME_mean`` and ``NAME_std``
    (``sqrt(var + eps)``) of shape ``(N, num_groups)``, without gradients.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> gn = mx.sym.GroupNorm(mx.sym.var("x"), num_groups=2, name="gn")
        >>> gn.infer_shape(x=(2, 4, 3))[0]
        [(2, 4, 3), (2,), (2,)]
    """
    g = _int("GroupNorm", "num_groups", num_groups)
    if g < 1:
        raise _MXNetValueError(f"mx.sym.GroupNorm: num_groups={num_groups} must be positive")
    attrs = {"num_groups": g, "eps": _eps("GroupNorm", eps)}
    return _normalization("GroupNorm", name, data, gamma, beta, attrs, bool(output_mean_var))


def pad(
    data: Symbol | None = None,
    mode: str | None = None,
    pad_width: Any = None,
    constant_value: float = 0.0,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``pad`` (the operator ``Pad``) of 4-D or 5-D data (the rules of
    ``mx.nd.pad``): ``pad_width`` gives ``(before, after)`` for each axis, zeros on the first
    two; ``mode`` (required, as mxnet's) is ``"constant"`` (``constant_value``), ``"edge"`` or
    ``"reflect"`` (each width smaller than its axis). Each spatial size grows by its two
    widths.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> p = mx.sym.pad(mx.sym.var("x"), mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 2, 2))
        >>> p.infer_shape(x=(1, 3, 4, 5))[1]
        [(1, 3, 6, 9)]
    """
    from .symbol import Symbol, _auto_name, _data_arg, _ints

    data = _data_arg("pad", data)
    if mode is None:
        raise _MXNetValueError("mx.sym.pad: Required parameter mode of int is not presented")
    if mode not in _PAD_MODES:
        raise _MXNetValueError(
            f"mx.sym.pad: Invalid Input: '{mode}', valid values are: "
            "{'constant', 'edge', 'reflect'}"
        )
    if pad_width is None:
        raise _MXNetValueError(
            "mx.sym.pad: Required parameter pad_width of Shape(tuple) is not presented"
        )
    width = _ints("pad", "pad_width", pad_width)
    if min(width, default=0) < 0:
        raise _MXNetValueError(f"mx.sym.pad: pad_width={pad_width!r} must not be negative")
    attrs = {"mode": mode, "pad_width": width, "constant_value": float(constant_value)}
    return Symbol("Pad", name or _auto_name("pad"), [data], attrs)


# -- shape inference (shapes.py) ------------------------------------------------------------------


def _data_shape(inf: Any, node: Symbol, ins: list[Any], out: Any) -> Any:
    """Data's shape: shared with the main output (both ways); the ``mean``/``std`` output nodes
    of ``output_mean_var`` only read it."""
    from .shapes import _data_like_output

    if node._attrs.get("index", 0) > 0:
        return ins[0]
    return _data_like_output(inf, node, ins[0], out)


def _layer_norm_shape(inf: Any, node: Symbol, ins: list[Any], out: Any) -> None:
    """mxnet's LayerNormShape: the output has data's shape; gamma and beta ``(C,)``, ``C =
    data.shape[axis]``; ``mean``/``std`` data's shape with 1 on ``axis``."""
    from .shapes import mx_shape

    s = _data_shape(inf, node, ins, out)
    if s is None:
        return
    ax = node._attrs["axis"]
    if not -len(s) <= ax < len(s):
        raise _error(node, f"Channel axis out of range: axis={ax} for data {mx_shape(s)}")
    ax %= len(s)
    for target in node._inputs[1:]:
        inf.assign(node, target, (s[ax],))
    if node._attrs.get("index", 0) > 0:
        inf.assign(node, node, tuple(1 if i == ax else d for i, d in enumerate(s)))


def _channels_first(node: Symbol, s: tuple[int, ...]) -> None:
    from .shapes import mx_shape

    if len(s) < 3:
        raise _error(
            node,
            f"{node._op} needs data of at least 3 axes (N, C, ...), got {mx_shape(s)}",
        )


def _instance_norm_shape(inf: Any, node: Symbol, ins: list[Any], out: Any) -> None:
    """mxnet's InstanceNorm shape: the output has data's shape; gamma and beta ``(C,)``,
    ``C = data.shape[1]`` (as mxnet, data of fewer than 3 axes is refused at forward)."""
    s = _data_shape(inf, node, ins, out)
    if s is None or len(s) < 2:
        return
    for target in node._inputs[1:]:
        inf.assign(node, target, (s[1],))


def _group_norm_shape(inf: Any, node: Symbol, ins: list[Any], out: Any) -> None:
    """mxnet 1.9.1's GroupNormShape: the output has data's shape, ``C`` divisible by
    ``num_groups``; gamma and beta ``(num_groups,)``; ``mean``/``std`` ``(N, num_groups)``."""
    from .shapes import mx_shape

    g = node._attrs["num_groups"]
    for target in node._inputs[1:]:
        inf.assign(node, target, (g,))
    s = _data_shape(inf, node, ins, out)
    if s is None:
        return
    _channels_first(node, s)
    if s[1] and s[1] % g:
        raise _error(
            node,
            f"# of channels must be divisible by # of groups (num_groups={g}, data {mx_shape(s)})",
        )
    if node._attrs.get("index", 0) > 0:
        inf.assign(node, node, (s[0], g))


def _pad_check(where: str, s: tuple[int, ...], attrs: dict[str, Any]) -> None:
    """mxnet's PadShape checks (``where`` begins the message)."""
    width = attrs["pad_width"]
    if len(s) not in (4, 5):
        raise MXNetError(
            f"{where}: Current implementation only supports 4-D or 5-D input (data of shape "
            f"{tuple(s)})"
        )
    if len(width) != 2 * len(s):
        raise MXNetError(
            f"{where}: Input shape vs padding spec mismatch (pad_width={width} for data of "
            f"shape {tuple(s)}: two values per axis)"
        )
    if any(width[:4]):
        raise MXNetError(
            f"{where}: Current implementation expects padding on the first two axes to be zero "
            f"(pad_width={width})"
        )
    if attrs["mode"] == "reflect" and any(
        n and w >= n for i, n in enumerate(s) for w in width[2 * i : 2 * i + 2]
    ):
        raise MXNetError(
            f"{where}: Current implementation of reflection padding only supports padding sizes "
            f"smaller than the input size (pad_width={width}, data of shape {tuple(s)})"
        )


def _pad_shape(inf: Any, node: Symbol, ins: list[Any], out: Any) -> None:
    """mxnet's PadShape: each axis grows by its two widths (an unknown one stays unknown)."""
    s = ins[0]
    if s is None:
        return
    _pad_check(f"infer_shape: Error in operator {node._name}", s, node._attrs)
    w = node._attrs["pad_width"]
    inf.assign(node, node, tuple(d and d + w[2 * i] + w[2 * i + 1] for i, d in enumerate(s)))


#: the shape rules of :mod:`.shapes` (``_LAYER_RULES``), by operator
SHAPE_RULES = {
    "LayerNorm": _layer_norm_shape,
    "InstanceNorm": _instance_norm_shape,
    "GroupNorm": _group_norm_shape,
    "Pad": _pad_shape,
}


# -- executor kernels (executor.py) -------------------------------------------------------------


def _check_params(node: Symbol, ins: list[NativeVariable], shape: tuple[int, ...]) -> None:
    for i, v in enumerate(ins[1:], 1):
        if tuple(v.shape) != shape:
            raise ValueError(
                f"{node._op} {node._name!r}: {node._inputs[i]._name!r} has shape {v.shape}, data "
                f"of shape {ins[0].shape} needs {shape}"
            )


def _normalized(
    node: Symbol,
    ins: list[NativeVariable],
    build: Any,
    view: tuple[int, ...],
    red: tuple[int, ...],
    pshape: tuple[int, ...],
    stat_shape: tuple[int, ...],
) -> NativeVariable:
    """``StandardizeAffine(x viewed as view, gamma, beta, red)`` (gamma, beta reshaped to
    ``pshape``), back in data's shape; for the output nodes of ``output_mean_var`` the three
    outputs computed once: ``y``, the mean and ``sqrt(var + eps)`` of shape ``stat_shape``,
    without gradients (mxnet's backward reads the head gradient of ``y`` only)."""
    from .._common import call_native as _call
    from ._nd_layers import _scaled
    from .executor import _block
    from .symbol import is_multi_output, output_key

    a = node._attrs
    key = output_key(node) if is_multi_output(node) else None
    if key is not None and key in build.shared:
        return build.shared[key][a["index"]]  # type: ignore[no-any-return]
    x, g, b = ins
    e = a["eps"]
    v = x if tuple(x.shape) == view else _call("Reshape", x, shape=view)
    y = _scaled(v, red, e, g, b, pshape)
    if tuple(y.shape) != tuple(x.shape):
        y = _call("Reshape", y, shape=tuple(x.shape))
    if key is None:
        return y  # type: ignore[no-any-return]
    mean = _call("Mean", v, axis=red, keepdims=True)
    d = v - mean
    var = _call("Mean", d * d, axis=red, keepdims=True)
    std = _call("PowScalar", _call("AddScalar", var, val=e), val=0.5)
    outs = [
        y,
        _block(_call("Reshape", mean, shape=stat_shape)),
        _block(_call("Reshape", std, shape=stat_shape)),
    ]
    build.shared[key] = outs
    return outs[a["index"]]  # type: ignore[no-any-return]


def _layer_norm(node: Symbol, ins: list[NativeVariable], build: Any) -> NativeVariable:
    """``mx.nd.LayerNorm``'s formula along ``axis``."""
    x = ins[0]
    ax = node._attrs["axis"]
    if x.ndim == 0 or not -x.ndim <= ax < x.ndim:
        raise ValueError(
            f"LayerNorm {node._name!r}: axis {ax} is out of range for data of shape {x.shape}"
        )
    ax %= x.ndim
    c = x.shape[ax]
    _check_params(node, ins, (c,))
    shape = tuple(x.shape)
    pshape = tuple(c if i == ax else 1 for i in range(x.ndim))
    stat = tuple(1 if i == ax else n for i, n in enumerate(shape))
    return _normalized(node, ins, build, shape, (ax,), pshape, stat)


def _instance_norm(node: Symbol, ins: list[NativeVariable], build: Any) -> NativeVariable:
    """``mx.nd.InstanceNorm``'s formula: each sample's each channel over the other axes."""
    x = ins[0]
    if x.ndim < 3:
        raise ValueError(
            f"InstanceNorm {node._name!r}: InstanceNorm only supports input tensors of rank >= 3 "
            f"(data of shape {x.shape})"
        )
    c = x.shape[1]
    _check_params(node, ins, (c,))
    shape = tuple(x.shape)
    pshape = (1, c) + (1,) * (x.ndim - 2)
    return _normalized(node, ins, build, shape, tuple(range(2, x.ndim)), pshape, shape[:2])


def _group_norm(node: Symbol, ins: list[NativeVariable], build: Any) -> NativeVariable:
    """``mx.nd.GroupNorm``'s formula: data viewed as ``(N, G, C / G, ...)``, each sample's each
    group over its channels and the other axes."""
    x = ins[0]
    g = node._attrs["num_groups"]
    if x.ndim < 3 or x.shape[1] % g:
        raise ValueError(
            f"GroupNorm {node._name!r}: data of shape {x.shape} must have at least 3 axes and "
            f"a number of channels divisible by num_groups={g}"
        )
    _check_params(node, ins, (g,))
    view = (x.shape[0], g, x.shape[1] // g, *x.shape[2:])
    pshape = (1, g) + (1,) * (len(view) - 2)
    return _normalized(node, ins, build, view, tuple(range(2, len(view))), pshape, (x.shape[0], g))


def _pad(node: Symbol, ins: list[NativeVariable], build: Any) -> NativeVariable:
    """``mx.nd.pad``'s gradhub function ``Pad`` (widths of the spatial axes)."""
    from .._common import call_native as _call

    x = ins[0]
    a = node._attrs
    _pad_check(f"Pad {node._name!r}", tuple(x.shape), a)
    return _call(  # type: ignore[no-any-return]
        "Pad",
        x,
        pad_width=tuple(a["pad_width"][4:]),
        mode=_PAD_MODES[a["mode"]],
        constant_value=float(a["constant_value"]),
    )


#: the executor's kernels (``executor._LAYERS``), by operator
EXECUTOR_KERNELS = {
    "LayerNorm": _layer_norm,
    "InstanceNorm": _instance_norm,
    "GroupNorm": _group_norm,
    "Pad": _pad,
}


# -- JSON (serialization.py) --------------------------------------------------------------------

_BOOL, _INT, _FLOAT, _STR, _AXIS = "bool", "int", "float", "str", "axis"
_NORM_INPUTS = ("data", "gamma", "beta")

#: per operator: its inputs and its parameters with their parsers (``serialization._PARAMS``)
JSON_PARAMS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "LayerNorm": (_NORM_INPUTS, {"axis": _INT, "eps": _FLOAT, "output_mean_var": _BOOL}),
    "InstanceNorm": (_NORM_INPUTS, {"eps": _FLOAT}),
    "GroupNorm": (_NORM_INPUTS, {"num_groups": _INT, "eps": _FLOAT, "output_mean_var": _BOOL}),
    "Pad": (("data",), {"mode": _STR, "pad_width": _AXIS, "constant_value": _FLOAT}),
}

#: the outputs mxnet 1.9.1 registers for each operator, visible or not (``node_row_ptr``)
NUM_OUTPUTS = {"LayerNorm": 3, "InstanceNorm": 3, "GroupNorm": 3, "Pad": 1}
