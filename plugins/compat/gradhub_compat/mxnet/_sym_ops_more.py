"""mxnet 1.9.1's symbol forms of the elementwise math, comparison, reduction, indexing, array
making, sampling, vision and linear algebra operators that ``mx.nd`` has (``mx.sym.arccos``,
``mx.sym.broadcast_equal``, ``mx.sym.max``, ``mx.sym.take``, ``mx.sym.arange``,
``mx.sym.random.normal``, ``mx.sym.ROIPooling``, ``mx.sym.linalg.gemm``...): their
constructors (installed into :mod:`.symbol` by :func:`install`), shape rules (:mod:`.shapes`),
executor kernels (:mod:`.executor`) and JSON parameters (:mod:`.serialization`).

Each operator is one row of :data:`OPS`: mxnet's registered operator name (the ``"op"`` of its
JSON node: ``mx.sym.flip`` writes ``reverse``, ``mx.sym.arange`` ``_arange``), its input names,
its parameters and the ``mx.nd`` function that computes it. The executor runs that same ``mx.nd``
function on the node's recorded values, so values, dtypes, errors and gradients (and the
higher derivatives of the native engine) are those of ``mx.nd``; an executor holding one of
them builds its graph at each forward (no recorded plan: some read values on the host). Shapes:
the elementwise operators share one shape between data and output (both ways, as mxnet's
``ElemwiseShape``), ``add_n`` one shape for all its inputs, the broadcast comparisons broadcast,
the reductions follow mxnet's ``ReduceAxesShape``, ``RNN`` infers its parameter and state shapes
from data's, the samplers read their ``shape``, and the others are inferred forward once every
input shape is known, by running the ``mx.nd`` function on arrays of ones of those shapes.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> x = mx.sym.var("x")
    >>> y = mx.sym.topk(mx.sym.arccos(x), k=2, ret_typ="value", name="t")
    >>> y.infer_shape(x=(3, 5))[1], mx.sym.arange(0, 6, 2).infer_shape()[1]
    ([(3, 2)], [(3,)])
"""

from __future__ import annotations

import ast
import builtins
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .base import MXNetError, _MXNetValueError

if TYPE_CHECKING:
    from gradhub.variable import Variable as NativeVariable

    from .symbol import Symbol

__all__ = [
    "ANY_DTYPE_INPUTS",
    "EXECUTOR_KERNELS",
    "JSON_PARAMS",
    "OPS",
    "SHAPE_RULES",
    "VARIADIC",
    "install",
]


class OpSpec(NamedTuple):
    """One operator: ``inputs`` (their names), ``params`` (their names, in mxnet's order),
    ``nd`` (the ``mx.nd`` function computing it; ``"random.normal"`` reads ``mx.nd.random``),
    ``shape`` (``"same"``: data's shape, both ways; ``"broadcast"``: numpy broadcasting of
    the two inputs; ``"reduce"``: mxnet's reduction rule; ``"all_same"``: one shape for every
    input and the output; ``"eval"``: the ``mx.nd`` function run on ones of the input
    shapes)."""

    inputs: tuple[str, ...]
    params: tuple[str, ...]
    nd: str
    shape: str


_UNARY = (
    "arccos arccosh arcsin arcsinh arctan arctanh cosh sinh tan cbrt rcbrt ceil floor fix rint "
    "round trunc degrees radians erf erfinv expm1 log10 log1p log2 gamma gammaln reciprocal "
    "rsqrt negative sign softsign ones_like zeros_like"
).split()
_COMPARE = (
    "broadcast_equal broadcast_not_equal broadcast_greater broadcast_greater_equal "
    "broadcast_lesser broadcast_lesser_equal broadcast_logical_and broadcast_logical_or "
    "broadcast_logical_xor"
).split()
_REDUCE = ("max", "min", "prod", "nansum", "nanprod")
_SEQ = ("use_sequence_length", "axis")
_D = ("data",)
#: the linear algebra operators whose output has the shape of their input ``A``
_LINALG_SAME = ("potrf", "potri", "inverse")
#: the ``mx.sym.linalg.<name>`` operators (``mx.sym.linalg_<name>``, operator ``_linalg_<name>``)
_LINALG = (
    "gemm gemm2 potrf potri trmm trsm syrk sumlogdiag inverse det extractdiag makediag".split()
)

#: mxnet's operator name -> its row
OPS: dict[str, OpSpec] = {
    **{u: OpSpec(_D, (), u, "same") for u in _UNARY},
    **{c: OpSpec(("lhs", "rhs"), (), c, "broadcast") for c in _COMPARE},
    **{r: OpSpec(_D, ("axis", "keepdims", "exclude"), r, "reduce") for r in _REDUCE},
    "_hypot": OpSpec(("lhs", "rhs"), (), "", "broadcast"),
    "hard_sigmoid": OpSpec(_D, ("alpha", "beta"), "hard_sigmoid", "same"),
    "smooth_l1": OpSpec(_D, ("scalar",), "smooth_l1", "same"),
    "L2Normalization": OpSpec(_D, ("eps", "mode"), "L2Normalization", "same"),
    "SequenceMask": OpSpec(
        ("data", "sequence_length"),
        ("use_sequence_length", "value", "axis"),
        "SequenceMask",
        "same",
    ),
    "SequenceLast": OpSpec(("data", "sequence_length"), _SEQ, "SequenceLast", "eval"),
    "SequenceReverse": OpSpec(("data", "sequence_length"), _SEQ, "SequenceReverse", "same"),
    "argmax": OpSpec(_D, ("axis", "keepdims"), "argmax", "eval"),
    "argmin": OpSpec(_D, ("axis", "keepdims"), "argmin", "eval"),
    "argmax_channel": OpSpec(_D, (), "argmax_channel", "eval"),
    "argsort": OpSpec(_D, ("axis", "is_ascend", "dtype"), "argsort", "same"),
    "sort": OpSpec(_D, ("axis", "is_ascend"), "sort", "same"),
    "topk": OpSpec(_D, ("axis", "k", "ret_typ", "is_ascend", "dtype"), "topk", "eval"),
    "batch_dot": OpSpec(
        ("lhs", "rhs"), ("transpose_a", "transpose_b", "forward_stype"), "batch_dot", "eval"
    ),
    "broadcast_axis": OpSpec(_D, ("axis", "size"), "broadcast_axis", "eval"),
    "broadcast_to": OpSpec(_D, ("shape",), "broadcast_to", "eval"),
    "broadcast_like": OpSpec(("lhs", "rhs"), ("lhs_axes", "rhs_axes"), "broadcast_like", "eval"),
    "Cast": OpSpec(_D, ("dtype",), "cast", "same"),
    "reverse": OpSpec(_D, ("axis",), "flip", "same"),
    "norm": OpSpec(_D, ("ord", "axis", "out_dtype", "keepdims"), "norm", "eval"),
    "one_hot": OpSpec(("indices",), ("depth", "on_value", "off_value", "dtype"), "one_hot", "eval"),
    "repeat": OpSpec(_D, ("repeats", "axis"), "repeat", "eval"),
    "tile": OpSpec(_D, ("reps",), "tile", "eval"),
    "shape_array": OpSpec(_D, (), "shape_array", "eval"),
    "size_array": OpSpec(_D, (), "size_array", "eval"),
    "slice": OpSpec(_D, ("begin", "end", "step"), "slice", "eval"),
    "slice_axis": OpSpec(_D, ("axis", "begin", "end"), "slice_axis", "eval"),
    "slice_like": OpSpec(("data", "shape_like"), ("axes",), "slice_like", "eval"),
    "squeeze": OpSpec(_D, ("axis",), "squeeze", "eval"),
    "take": OpSpec(("a", "indices"), ("axis", "mode"), "take", "eval"),
    "_linalg_gemm2": OpSpec(
        ("A", "B"), ("transpose_a", "transpose_b", "alpha", "axis"), "linalg_gemm2", "eval"
    ),
    "stack": OpSpec((), ("axis", "num_args"), "stack", "eval"),
    "add_n": OpSpec((), ("num_args",), "add_n", "all_same"),
    "_arange": OpSpec(
        (), ("start", "stop", "step", "repeat", "infer_range", "ctx", "dtype"), "arange", "eval"
    ),
    "_linspace": OpSpec(
        (), ("start", "stop", "num", "endpoint", "ctx", "dtype"), "linspace", "eval"
    ),
    "_full": OpSpec((), ("shape", "value", "ctx", "dtype"), "full", "eval"),
    "_ones": OpSpec((), ("shape", "ctx", "dtype"), "ones", "eval"),
    "_zeros": OpSpec((), ("shape", "ctx", "dtype"), "zeros", "eval"),
    "RNN": OpSpec(
        ("data", "parameters", "state", "state_cell"),
        (
            "state_size",
            "num_layers",
            "bidirectional",
            "mode",
            "p",
            "state_outputs",
            "projection_size",
            "lstm_state_clip_min",
            "lstm_state_clip_max",
            "lstm_state_clip_nan",
            "use_sequence_length",
        ),
        "RNN",
        "rnn",
    ),
    "_random_normal": OpSpec(
        (), ("loc", "scale", "shape", "ctx", "dtype"), "random.normal", "eval"
    ),
    "_random_uniform": OpSpec(
        (), ("low", "high", "shape", "ctx", "dtype"), "random.uniform", "eval"
    ),
    "_sample_multinomial": OpSpec(_D, ("shape", "get_prob", "dtype"), "sample_multinomial", "eval"),
    "LRN": OpSpec(_D, ("alpha", "beta", "knorm", "nsize"), "LRN", "same"),
    "UpSampling": OpSpec(
        (),
        ("scale", "num_filter", "sample_type", "multi_input_mode", "num_args", "workspace"),
        "UpSampling",
        "eval",
    ),
    "Crop": OpSpec((), ("num_args", "offset", "h_w", "center_crop"), "Crop", "eval"),
    "ROIPooling": OpSpec(("data", "rois"), ("pooled_size", "spatial_scale"), "ROIPooling", "eval"),
    "Correlation": OpSpec(
        ("data1", "data2"),
        ("kernel_size", "max_displacement", "stride1", "stride2", "pad_size", "is_multiply"),
        "Correlation",
        "eval",
    ),
    "GridGenerator": OpSpec(_D, ("transform_type", "target_shape"), "GridGenerator", "eval"),
    "BilinearSampler": OpSpec(("data", "grid"), ("cudnn_off",), "BilinearSampler", "eval"),
    "SpatialTransformer": OpSpec(
        ("data", "loc"),
        ("target_shape", "transform_type", "sampler_type", "cudnn_off"),
        "SpatialTransformer",
        "eval",
    ),
    "_np_cumsum": OpSpec(("a",), ("axis", "dtype"), "cumsum", "eval"),
    "diag": OpSpec(_D, ("k", "axis1", "axis2"), "diag", "eval"),
    "depth_to_space": OpSpec(_D, ("block_size",), "depth_to_space", "eval"),
    "space_to_depth": OpSpec(_D, ("block_size",), "space_to_depth", "eval"),
    "gather_nd": OpSpec(("data", "indices"), (), "gather_nd", "eval"),
    "scatter_nd": OpSpec(("data", "indices"), ("shape",), "scatter_nd", "eval"),
    "_linalg_gemm": OpSpec(
        ("A", "B", "C"),
        ("transpose_a", "transpose_b", "alpha", "beta", "axis"),
        "linalg_gemm",
        "eval",
    ),
    **{f"_linalg_{n}": OpSpec(("A",), (), f"linalg_{n}", "same") for n in _LINALG_SAME},
    **{
        f"_linalg_{n}": OpSpec(
            ("A", "B"), ("transpose", "rightside", "lower", "alpha"), f"linalg_{n}", "eval"
        )
        for n in ("trmm", "trsm")
    },
    "_linalg_syrk": OpSpec(("A",), ("transpose", "alpha"), "linalg_syrk", "eval"),
    "_linalg_sumlogdiag": OpSpec(("A",), (), "linalg_sumlogdiag", "eval"),
    "_linalg_det": OpSpec(("A",), (), "linalg_det", "eval"),
    "_linalg_extractdiag": OpSpec(("A",), ("offset",), "linalg_extractdiag", "eval"),
    "_linalg_makediag": OpSpec(("A",), ("offset",), "linalg_makediag", "eval"),
}
#: operators of any number of inputs (``num_args``)
VARIADIC = ("stack", "add_n", "UpSampling", "Crop")
#: operators whose inputs at these positions take any dtype (indices, lengths, the input of
#: ``Cast``/``shape_array``...; the others share the output's dtype)
ANY_DTYPE_INPUTS: dict[str, tuple[int, ...]] = {
    "Cast": (0,),
    "one_hot": (0,),
    "take": (1,),
    "SequenceMask": (1,),
    "SequenceLast": (1,),
    "SequenceReverse": (1,),
    "shape_array": (0,),
    "size_array": (0,),
    "argsort": (0,),
    "_sample_multinomial": (0,),
    "slice_like": (1,),
    "broadcast_like": (1,),
    "gather_nd": (1,),
    "scatter_nd": (1,),
}
#: the operators whose ``ctx`` parameter is the context of their output (not written to JSON)
_MAKERS = ("_arange", "_linspace", "_full", "_ones", "_zeros", "_random_normal", "_random_uniform")
#: operators whose ``axis=None`` means the flattened array (their default axis is -1)
_AXIS_NONE = ("sort", "argsort", "topk")
#: public name -> (operator, name hint of unnamed nodes)
_NAMES: dict[str, tuple[str, str]] = {
    **{op: (op, op.lower()) for op in OPS if not op.startswith("_")},  # (rnn0, as mxnet)
    "ElementWiseSum": ("add_n", "elementwisesum"),
    "flip": ("reverse", "flip"),
    "cast": ("Cast", "cast"),
    "Cast": ("Cast", "cast"),
    "broadcast_axes": ("broadcast_axis", "broadcast_axes"),
    "linalg_gemm2": ("_linalg_gemm2", "linalg_gemm2"),
    "random_normal": ("_random_normal", "random_normal"),
    "random_uniform": ("_random_uniform", "random_uniform"),
    "normal": ("_random_normal", "normal"),
    "uniform": ("_random_uniform", "uniform"),
    "sample_multinomial": ("_sample_multinomial", "sample_multinomial"),
    "cumsum": ("_np_cumsum", "cumsum"),
    **{f"linalg_{n}": (f"_linalg_{n}", f"linalg_{n}") for n in _LINALG if n != "gemm2"},
}


# -- constructors ---------------------------------------------------------------------------------


def _value(text: Any) -> Any:
    """A parameter as the constructors keep it: a JSON string (``"(2, 3)"``, ``"True"``,
    ``"1.5"``, ``"None"``) read as the Python literal it spells; other strings
    (``"float32"``, ``"value"``) and non-strings unchanged."""
    if not isinstance(text, str):
        return text
    t = text.strip()
    if t in ("true", "false"):
        return t == "true"
    try:
        return ast.literal_eval(t)
    except (ValueError, SyntaxError):
        return t


def _node(
    op: str, hint: str, name: str | None, inputs: list[Any], params: dict[str, Any]
) -> Symbol:
    from .symbol import Symbol, _auto_name

    for i, v in enumerate(inputs):
        if not isinstance(v, Symbol):
            what = OPS[op].inputs[i] if i < len(OPS[op].inputs) else f"data[{i}]"
            raise TypeError(f"mx.sym.{hint}: {what} must be a Symbol, got {type(v).__name__}")
    attrs = {k: _value(v) for k, v in params.items() if v is not None}
    return Symbol(op, name or _auto_name(hint), inputs, attrs)


def _check_params(fn: str, op: str, params: dict[str, Any]) -> None:
    spec = OPS[op]
    extra = sorted(set(params) - set(spec.params) - {"out"})
    if extra:
        raise _MXNetValueError(
            f"mx.sym.{fn}: unexpected arguments {extra} (parameters of {op}: {list(spec.params)})"
        )
    if op == "topk" and _value(params.get("ret_typ")) == "both":
        raise NotImplementedError(
            f"mx.sym.{fn}: ret_typ='both' (two outputs) is not supported as a symbol; build "
            "one topk for the values and one for the indices (docs/migration-mxnet.md)"
        )
    if op == "UpSampling" and _value(params.get("sample_type")) != "nearest":
        raise NotImplementedError(
            f"mx.sym.{fn}: only sample_type='nearest' is supported as a symbol (bilinear adds "
            "a weight input; docs/migration-mxnet.md)"
        )
    if op == "_sample_multinomial" and _value(params.get("get_prob")):
        raise NotImplementedError(
            f"mx.sym.{fn}: get_prob=True (two outputs) is not supported as a symbol "
            "(docs/migration-mxnet.md)"
        )


def _fixed(fn: str, op: str, hint: str) -> Callable[..., Symbol]:
    """The constructor of an operator with fixed inputs (mxnet's generated ``mx.sym.<fn>``)."""
    spec = OPS[op]

    def function(name: str | None = None, **kwargs: Any) -> Symbol:
        from .symbol import Variable

        ins = {k: kwargs.pop(k, None) for k in spec.inputs}
        kwargs.pop("out", None)
        _check_params(fn, op, kwargs)
        inputs = [ins[k] for k in spec.inputs[:1]]
        if len(spec.inputs) > 1:
            if spec.inputs[1] == "sequence_length":  # (an input only when used, as mxnet)
                if _value(kwargs.get("use_sequence_length")):
                    seq = ins["sequence_length"]
                    inputs.append(seq if seq is not None else Variable(f"{name}_sequence_length"))
                elif ins["sequence_length"] is not None:
                    raise _MXNetValueError(
                        f"mx.sym.{fn}: sequence_length is given but use_sequence_length is False"
                    )
            elif op == "RNN":  # (state_cell: an input of an LSTM only, as mxnet)
                inputs.extend(ins[k] for k in spec.inputs[1:3])
                _rnn_checks(fn, kwargs)
                cell = ins["state_cell"]
                if _value(kwargs.get("mode")) == "lstm":
                    inputs.append(cell if cell is not None else Variable(f"{name}_state_cell"))
                elif cell is not None:
                    raise _MXNetValueError(f"mx.sym.{fn}: state_cell is an input of lstm only")
            else:
                inputs.extend(ins[k] for k in spec.inputs[1:])
        return _node(op, hint, name, inputs, kwargs)

    free = spec.inputs
    if spec.inputs[1:2] == ("sequence_length",):
        free = spec.inputs[:1]
    elif op == "RNN":
        free = spec.inputs[:3]
    function.__name__ = function.__qualname__ = fn
    function.__doc__ = _doc(fn, op)
    from .symbol import _layer

    layered = _layer(hint, spec.inputs, free)(function)

    def constructor(*args: Any, **kwargs: Any) -> Symbol:
        _dtype_names(kwargs)
        if op in _AXIS_NONE and "axis" in kwargs and kwargs["axis"] is None:
            kwargs["axis"] = "None"  # (the flattened array, written to JSON as mxnet does)
        return layered(*args, **kwargs)  # type: ignore[no-any-return]

    constructor.__name__ = constructor.__qualname__ = fn
    constructor.__doc__ = function.__doc__
    return constructor


def _dtype_names(kwargs: dict[str, Any]) -> None:
    """``dtype``/``out_dtype`` given as numpy types written by name (``np.float32`` ->
    ``"float32"``), as mxnet's JSON holds them."""
    for k in ("dtype", "out_dtype"):
        v = kwargs.get(k)
        if v is not None and not isinstance(v, str):
            kwargs[k] = np.dtype(v).name


def _rnn_checks(fn: str, kwargs: dict[str, Any]) -> None:
    """mx.sym.RNN's parameters: ``mode``, ``state_size`` and ``num_layers`` required; the
    extra outputs of ``state_outputs`` and ``use_sequence_length`` are not supported."""
    mode = _value(kwargs.get("mode"))
    if mode not in ("rnn_relu", "rnn_tanh", "lstm", "gru"):
        raise _MXNetValueError(
            f"mx.sym.{fn}: Invalid Input: {mode!r}, valid values are: "
            "{'gru', 'lstm', 'rnn_relu', 'rnn_tanh'}"
        )
    for k in ("state_size", "num_layers"):
        if kwargs.get(k) is None:
            raise _MXNetValueError(f"mx.sym.{fn}: Required parameter {k} is not presented")
    if _value(kwargs.get("state_outputs")):
        raise NotImplementedError(
            f"mx.sym.{fn}: state_outputs=True (several outputs) is not supported as a symbol "
            "(docs/migration-mxnet.md)"
        )
    if _value(kwargs.get("use_sequence_length")):
        raise NotImplementedError(
            f"mx.sym.{fn}: use_sequence_length is not supported (docs/migration-mxnet.md)"
        )


def _doc(fn: str, op: str) -> str:
    spec = OPS[op]
    what = {
        "same": "the output has data's shape",
        "broadcast": "the output has the inputs' broadcast shape",
        "eval": "the output's shape is that of ``mx.nd." + (spec.nd or fn) + "``",
        "reduce": "the reduced axes are dropped (kept as 1 with ``keepdims``)",
        "all_same": "the inputs and the output have one shape",
        "rnn": "the output is ``(T, N, directions * state_size)``, the parameters, state and "
        "cell state shapes are inferred from data's",
    }[spec.shape]
    return (
        f"mxnet's ``{fn}`` (operator ``{op}`` in JSON), computed by ``mx.nd.{spec.nd or fn}`` "
        f"on the inputs {list(spec.inputs) or 'none'} with the parameters "
        f"{list(spec.params) or 'none'}; {what}.\n"
    )


def _variadic(fn: str, op: str, hint: str) -> Callable[..., Symbol]:
    """``stack``/``add_n``: the input symbols by position, ``num_args`` written to JSON."""

    def function(*data: Any, **kwargs: Any) -> Symbol:
        name = kwargs.pop("name", None)
        attr = kwargs.pop("attr", None)
        kwargs.pop("out", None)
        if len(data) == 1 and isinstance(data[0], (list, tuple)):
            data = tuple(data[0])
        if not data:
            raise _MXNetValueError(f"mx.sym.{fn}: at least one input symbol is needed")
        num = kwargs.get("num_args")
        if num is not None and int(_value(num)) != len(data):
            raise _MXNetValueError(
                f"mx.sym.{fn}: num_args={num} but {len(data)} input symbols are given"
            )
        kwargs["num_args"] = len(data)
        _check_params(fn, op, kwargs)
        node = _node(op, hint, name, list(data), kwargs)
        node._json = {k: str(v) for k, v in kwargs.items() if v is not None}
        for k, v in dict(attr or {}).items():
            node._json[str(k)] = str(v)
        return node

    function.__name__ = function.__qualname__ = fn
    function.__doc__ = _doc(fn, op)
    return function


def _maker(fn: str, op: str, hint: str, defaults: dict[str, Any]) -> Callable[..., Symbol]:
    """The array makers (``arange``, ``zeros``, ``random.normal``...): no input; the
    parameters that mxnet's Python wrapper fills (``dtype="float32"``...) are written to JSON
    too."""

    def function(*args: Any, **kwargs: Any) -> Symbol:
        names = [k for k in OPS[op].params if k != "ctx"]
        if op == "_full":
            names = ["shape", "value", "dtype"]
            if "val" in kwargs:
                kwargs["value"] = kwargs.pop("val")
        if len(args) > len(names):
            raise TypeError(f"mx.sym.{fn}: at most {len(names)} positional arguments")
        for k, v in zip(names, args):
            if k in kwargs:
                raise TypeError(f"mx.sym.{fn}: {k!r} given twice")
            kwargs[k] = v
        name = kwargs.pop("name", None)
        attr = kwargs.pop("attr", None)
        kwargs.pop("out", None)
        for k, v in defaults.items():
            if kwargs.get(k) is None:
                kwargs[k] = v
        if op in ("_full", "_ones", "_zeros", "_random_normal", "_random_uniform"):
            if op != "_random_normal" and op != "_random_uniform" and kwargs.get("shape") is None:
                raise _MXNetValueError(f"mx.sym.{fn}: Required parameter shape is not presented")
        if op == "_arange" and kwargs.get("start") is None:
            raise _MXNetValueError(f"mx.sym.{fn}: Required parameter start is not presented")
        if op == "_linspace" and any(kwargs.get(k) is None for k in ("start", "stop", "num")):
            raise _MXNetValueError(
                f"mx.sym.{fn}: Required parameters start, stop and num are not presented"
            )
        ctx = kwargs.pop("ctx", None)
        _dtype_names(kwargs)
        if op == "_arange":
            kwargs.setdefault("stop", None)
        _check_params(fn, op, kwargs)
        node = _node(op, hint, name, [], kwargs)
        node._json = {  # (mxnet writes arange's stop=None as "None")
            k: str(_shape_text(v) if k == "shape" else v)
            for k, v in kwargs.items()
            if v is not None or (op == "_arange" and k == "stop")
        }
        for k, v in dict(attr or {}).items():
            node._json[str(k)] = str(v)
        if ctx is not None:
            node._attrs["ctx"] = ctx
        return node

    function.__name__ = function.__qualname__ = fn
    function.__doc__ = _doc(fn, op)
    return function


def _shape_text(v: Any) -> Any:
    """mxnet's Python wrappers write an int shape as a tuple (``shape=3`` -> ``(3,)``)."""
    return (int(v),) if isinstance(v, (int, np.integer)) else tuple(v) if isinstance(v, list) else v


def _hypot(left: Any, right: Any, name: str | None = None, **kwargs: Any) -> Any:
    """mxnet's ``hypot``: ``sqrt(left^2 + right^2)`` elementwise with broadcasting, of two
    symbols (operator ``_hypot``) or of a symbol and a number (operator ``_hypot_scalar``, its
    ``scalar`` written as Python's ``str``, as mxnet 1.9.1); two numbers give Python's
    ``math.hypot``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> a, b = mx.sym.var("a"), mx.sym.var("b")
        >>> mx.sym.hypot(a, b).infer_shape(a=(2, 3), b=(1, 3))[1]
        [(2, 3)]
    """
    import math

    from .symbol import Symbol, _auto_name

    if isinstance(left, Symbol) and isinstance(right, Symbol):
        return _node("_hypot", "_hypot", name, [left, right], {})
    if isinstance(left, Symbol) or isinstance(right, Symbol):
        s, v = (left, right) if isinstance(left, Symbol) else (right, left)
        return Symbol(
            "_HypotScalar",
            name or _auto_name("_hypotscalar"),
            [s],
            {"scalar": float(v)},
            {"scalar": str(v)},
        )
    return math.hypot(left, right)


def _power(base: Any, exp: Any, name: str | None = None, **kwargs: Any) -> Any:
    """mxnet's ``pow``/``power``: ``base ** exp`` of symbols (``_power``), or of a symbol and a
    number (``_power_scalar``, ``_rpower_scalar``); two numbers give Python's ``**``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.sym.pow(mx.sym.var("x"), 2).infer_shape(x=(2,))[1]
        [(2,)]
    """
    from .symbol import Symbol

    if isinstance(base, Symbol) or isinstance(exp, Symbol):
        out = base**exp
        if name is not None and isinstance(out, Symbol):
            out._name = name
        return out
    return base**exp


def _sum_axis(
    data: Any = None,
    axis: Any = None,
    keepdims: bool = False,
    exclude: bool = False,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``sum_axis``: the operator ``sum`` (the same node, named ``sum_axis0``...).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.sym.sum_axis(mx.sym.var("x"), axis=1).infer_shape(x=(2, 3))[1]
        [(2,)]
    """
    from .symbol import _auto_name, sum

    kw = {"axis": axis} if axis is not None else {}
    if keepdims:
        kw["keepdims"] = keepdims
    if exclude:
        kw["exclude"] = exclude
    return sum(data, name=name or _auto_name("sum_axis"), **kw, **kwargs)  # type: ignore[no-any-return]


def install(namespace: dict[str, Any]) -> None:
    """Put the constructors into ``namespace`` (:mod:`.symbol`'s): the public names
    (``arccos``, ``flip``, ``arange``, ``random``...) and mxnet's operator names that JSON
    reading looks up (``_arange``, ``reverse``, ``Cast``...). Names already there are kept."""
    made: dict[str, Any] = {}
    for fn, (op, hint) in _NAMES.items():
        if op in VARIADIC:
            made[fn] = _variadic(fn, op, hint)
        elif OPS[op].inputs:
            made[fn] = _fixed(fn, op, hint)
    makers: dict[str, tuple[str, dict[str, Any]]] = {
        "arange": ("_arange", {"step": 1.0, "repeat": 1, "infer_range": False, "dtype": "float32"}),
        "linspace": ("_linspace", {"endpoint": True, "dtype": "float32"}),
        "full": ("_full", {"dtype": "float32"}),
        "ones": ("_ones", {"dtype": "float32"}),
        "zeros": ("_zeros", {"dtype": "float32"}),
        "random_normal": ("_random_normal", {}),
        "random_uniform": ("_random_uniform", {}),
        "normal": ("_random_normal", {}),
        "uniform": ("_random_uniform", {}),
    }
    for fn, (op, defaults) in makers.items():
        hint = fn if fn.startswith("random_") or op[1:] != fn else op  # (random_normal0)
        made[fn] = _maker(fn, op, hint, defaults)
    made["hypot"] = _hypot
    made["pow"] = made["power"] = _power
    made["sum_axis"] = _sum_axis
    made["linalg"] = types.SimpleNamespace(
        **{n: _fixed(f"linalg.{n}", f"_linalg_{n}", n) for n in _LINALG}
    )
    made["random"] = types.SimpleNamespace(
        normal=_maker("normal", "_random_normal", "_random_normal", {"loc": 0, "scale": 1}),
        uniform=_maker("uniform", "_random_uniform", "_random_uniform", {"low": 0, "high": 1}),
    )
    # mxnet's operator names, read by JSON loading (serialization calls mx.sym.<op>)
    for op in OPS:
        if op in VARIADIC or not OPS[op].inputs:
            continue
        made.setdefault(op, _fixed(op, op, op.lstrip("_")))
    for op in _MAKERS:
        made.setdefault(op, _maker(op, op, op, {}))
    made.setdefault("_hypot", _hypot)
    for k, v in made.items():
        namespace.setdefault(k, v)
    namespace["ANY_DTYPE_INPUTS"].update(ANY_DTYPE_INPUTS)


def from_json(
    op: str, name: str, ins: list[Symbol], kwargs: dict[str, Any], json_attrs: dict[str, str]
) -> Symbol:
    """The node of operator ``op`` read from mxnet's JSON (``kwargs``: its parameters as text,
    ``ins``: its input symbols in order); called by :mod:`.serialization`."""
    from . import symbol as _sym

    spec = OPS[op]
    if op in VARIADIC:
        sym = getattr(_sym, op)(*ins, name=name, **kwargs)
    elif not spec.inputs:
        if ins:
            raise MXNetError(f"mx.sym.load_json: node {name!r}: {op} takes no inputs")
        sym = getattr(_sym, op)(name=name, **kwargs)
    else:
        seq = spec.inputs[1:2] == ("sequence_length",)
        want = 1 + bool(_value(kwargs.get("use_sequence_length"))) if seq else len(spec.inputs)
        if op == "RNN":
            want = 4 if _value(kwargs.get("mode")) == "lstm" else 3
        if len(ins) != want:
            raise MXNetError(
                f"mx.sym.load_json: node {name!r}: {op} takes the inputs "
                f"{list(spec.inputs[:want])}, got {len(ins)}"
            )
        sym = getattr(_sym, op)(*ins, name=name, **kwargs)
    sym._json = dict(json_attrs)
    return sym  # type: ignore[no-any-return]


_TWO_OUTPUTS = ("sort", "L2Normalization", "LRN", "ROIPooling", "GridGenerator", "BilinearSampler")


def num_outputs(node: Symbol) -> int:
    """The outputs mxnet 1.9.1 registers for the node, visible or not (``node_row_ptr``):
    ``sort`` 2 (values, indices), ``topk`` 2 unless it returns indices or a mask,
    ``L2Normalization`` 2 (output, norm), else 1."""
    if node._op in _TWO_OUTPUTS:
        return 2
    if node._op in ("Correlation", "SpatialTransformer", "_linalg_det"):
        return 3
    if node._op == "topk":
        return 1 if node._attrs.get("ret_typ", "indices") in ("indices", "mask") else 2
    return 1


def hidden_outputs(node: Symbol) -> bool:
    """Whether the node has outputs that mxnet hides (its visible output is then named
    ``NAME_output0``, as mxnet's)."""
    if node._op == "_linalg_det":  # (det, LU factors, pivots: the first visible)
        return True
    return node._op in ("sort", "topk") and num_outputs(node) > 1


#: operator -> (its dtype parameter, the default) for the operators whose output dtype is a
#: parameter, not their input's (mxnet's type inference)
_DTYPE_PARAMS = {
    "Cast": ("dtype", None),
    "argsort": ("dtype", "float32"),
    "one_hot": ("dtype", "float32"),
    "_sample_multinomial": ("dtype", "int32"),
    "_np_cumsum": ("dtype", None),
    **{op: ("dtype", "float32") for op in _MAKERS},
}


def output_dtype(node: Symbol) -> np.dtype | None:
    """The node's output dtype where it does not follow its inputs (``Cast``'s ``dtype``,
    ``argsort``/``topk`` indices, ``one_hot``, ``shape_array`` int64, the array makers...), as
    mxnet 1.9.1's type inference; None for the others (one dtype for inputs and output)."""
    op, a = node._op, node._attrs
    if op in ("shape_array", "size_array"):
        return np.dtype(np.int64)
    if op == "topk" and a.get("ret_typ", "indices") == "indices":  # (a mask: data's dtype)
        return np.dtype(a.get("dtype", "float32"))
    if op == "norm" and a.get("out_dtype") is not None:
        return np.dtype(a["out_dtype"])
    if op in _DTYPE_PARAMS:
        key, default = _DTYPE_PARAMS[op]
        dt = a.get(key, default)
        return None if dt is None else np.dtype(dt)
    return None


# -- shape inference (shapes.py) ------------------------------------------------------------------


def _error(node: Symbol, why: str) -> MXNetError:
    return MXNetError(f"infer_shape: Error in operator {node._name}: {why}")


def _call_nd(op: str, arrays: list[Any], attrs: dict[str, Any], ctx: Any) -> Any:
    """The ``mx.nd`` function of ``op`` on ``arrays`` (NDArrays) with the node's ``attrs``."""
    from . import ndarray as nd

    spec = OPS[op]
    kw = {k: v for k, v in attrs.items() if k in spec.params and k != "ctx"}
    if op == "_hypot":
        from ._nd_tensor import _run

        return _run(arrays, lambda a, b: _native_hypot(a, b))
    fn: Any = nd
    for part in spec.nd.split("."):
        fn = getattr(fn, part)
    if not spec.inputs and op not in VARIADIC:
        if op == "_full":
            kw["val"] = kw.pop("value")
        if op == "_arange" and kw.get("stop") is None:
            kw.pop("stop", None)
        return fn(ctx=ctx, **kw)
    return fn(*arrays, **kw)


def _native_hypot(a: NativeVariable, b: NativeVariable) -> NativeVariable:
    from .._common import call_native as _call

    shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    if tuple(a.shape) != shape:
        a = _call("broadcast_to", a, shape=shape)
    if tuple(b.shape) != shape:
        b = _call("broadcast_to", b, shape=shape)
    return _call("sqrt", a * a + b * b)  # type: ignore[no-any-return]


def _eval_shape(inf: Any, node: Symbol, ins: list[Any], out: Any) -> None:
    """The output shape of the ``mx.nd`` function run on arrays of ones of the input shapes
    (each known), without recording; its error as mxnet's ``infer_shape`` error. The sampling
    operators read their ``shape`` parameter instead."""
    from .context import Context
    from .ndarray import NDArray
    from .shapes import is_known

    if not builtins.all(is_known(s) for s in ins):
        return
    from gradhub.modes import no_grad

    import gradhub_compat.mxnet._autograd_mode as ag

    a = node._attrs
    if node._op in ("_random_normal", "_random_uniform", "_sample_multinomial"):
        # (from the parameters: drawing would move the random generator)
        size = _shape_text(a.get("shape")) or ()
        lead = tuple(ins[0][:-1]) if ins else ()
        inf.assign(node, node, (lead + tuple(size)) or (1,))
        return
    ctx = Context("cpu", 0)
    arrays = [NDArray(np.ones(s, dtype=np.float32), ctx) for s in ins]
    attrs = dict(a)
    saved = ag.state.recording
    ag.state.recording = False
    try:
        with no_grad():
            r = _call_nd(node._op, arrays, attrs, ctx)
    except (MXNetError, ValueError, TypeError, IndexError) as e:
        raise _error(node, str(e)) from None
    finally:
        ag.state.recording = saved
    inf.assign(node, node, tuple(r.shape))


def _same_shape(inf: Any, node: Symbol, ins: list[Any], out: Any) -> None:
    from .shapes import _data_like_output

    _data_like_output(inf, node, ins[0], out)
    if node._op == "SequenceMask" or node._op == "SequenceReverse":
        s = inf.get(node)
        if s is not None and len(node._inputs) > 1 and len(s) >= 2:
            ax = node._attrs.get("axis", 0) if node._op == "SequenceMask" else 0
            inf.assign(node, node._inputs[1], (s[1 - int(ax)],))


def _broadcast_shape(inf: Any, node: Symbol, ins: list[Any], out: Any) -> None:
    from .shapes import _broadcast

    _broadcast(inf, node, ins[0], ins[1])


def _reduce_shape(inf: Any, node: Symbol, ins: list[Any], out: Any) -> None:
    """mxnet's ReduceAxesShape (``max``, ``min``, ``prod``, ``nansum``, ``nanprod``): the
    reduced axes dropped (1 with ``keepdims``), every axis for no ``axis``, the others with
    ``exclude``; a full reduction without ``keepdims`` has shape (1,)."""
    from .shapes import mx_shape

    x = ins[0]
    if x is None:
        return
    a = node._attrs
    axis = a.get("axis")
    axes = () if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
    bad = [d for d in axes if not -len(x) <= d < len(x)]
    if bad:
        raise _error(node, f"Reduction axis {bad[0]} Exceeds input dimensions {mx_shape(x)}")
    given = {d % len(x) for d in axes}
    if not axes:
        red = set(range(len(x)))
    elif a.get("exclude"):
        red = set(range(len(x))) - given
    else:
        red = given
    if a.get("keepdims"):
        inf.assign(node, node, tuple(1 if i in red else d for i, d in enumerate(x)))
    else:
        inf.assign(node, node, tuple(d for i, d in enumerate(x) if i not in red) or (1,))


def _all_same_shape(inf: Any, node: Symbol, ins: list[Any], out: Any) -> None:
    """mxnet's ElemwiseShape of ``add_n``: every input and the output share one shape (known
    from any of them)."""
    from .shapes import _Conflict, mx_shape, unify

    s = out
    for i, x in enumerate(ins):
        try:
            s = unify(s, x)
        except _Conflict:
            raise _error(
                node,
                f"Incompatible attr in node {node._name} at {i}-th input: expected "
                f"{mx_shape(s or ())}, got {mx_shape(x or ())}",
            ) from None
    for target in (*node._inputs, node):
        inf.assign(node, target, s)


def _rnn_shape(inf: Any, node: Symbol, ins: list[Any], out: Any) -> None:
    """mxnet's RNNShape: data ``(T, N, I)``; ``parameters`` ``(P,)`` (every weight and bias of
    every layer and direction), ``state`` ``(L * D, N, H')`` (``H'`` the projection size or
    the state size), ``state_cell`` ``(L * D, N, H)``; the output ``(T, N, D * H')``."""
    from .shapes import mx_shape

    x = ins[0]
    if x is None:
        return
    if len(x) != 3:
        raise _error(
            node,
            "Input data should be rank-3 tensor of dim [steps, batch, input size], got "
            + mx_shape(x),
        )
    a = node._attrs
    h, layers = int(a["state_size"]), int(a["num_layers"])
    dirs = 2 if a.get("bidirectional") else 1
    gates = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}[a["mode"]]
    proj = int(a.get("projection_size") or 0)
    size = proj or h
    total, ni = 0, x[2]
    for _ in range(layers):
        total += dirs * (gates * h * ni + gates * h * size + proj * h + 2 * gates * h)
        ni = size * dirs
    inf.assign(node, node._inputs[1], (total,))
    inf.assign(node, node._inputs[2], (layers * dirs, x[1], size))
    if len(node._inputs) > 3:
        inf.assign(node, node._inputs[3], (layers * dirs, x[1], h))
    inf.assign(node, node, (x[0], x[1], dirs * size))


_RULES = {
    "rnn": _rnn_shape,
    "same": _same_shape,
    "broadcast": _broadcast_shape,
    "eval": _eval_shape,
    "reduce": _reduce_shape,
    "all_same": _all_same_shape,
}
#: the shape rules of :mod:`.shapes` (``_LAYER_RULES``), by operator
SHAPE_RULES = {op: _RULES[spec.shape] for op, spec in OPS.items()}


def _roi_pooling_shape(inf: Any, node: Symbol, ins: list[Any], out: Any) -> None:
    """mxnet's ROIPooling shape: data ``(N, C, H, W)``, rois ``(R, 5)``; the output
    ``(R, C, ph, pw)`` (no values read)."""
    from .shapes import mx_shape

    x, rois = ins
    if x is not None and len(x) != 4:
        raise _error(node, f"data should be a 4D tensor, got {mx_shape(x)}")
    if rois is not None and (len(rois) != 2 or rois[1] != 5):
        raise _error(node, f"rois should be a 2D tensor of shape [batch, 5], got {mx_shape(rois)}")
    if x is None or rois is None:
        return
    p = node._attrs["pooled_size"]
    ph, pw = (p, p) if isinstance(p, int) else tuple(p)
    inf.assign(node, node, (rois[0], x[1], int(ph), int(pw)))


def _gather_nd_shape(inf: Any, node: Symbol, ins: list[Any], out: Any) -> None:
    """mxnet's gather_nd shape: indices ``(M, Y...)`` pick the first ``M`` axes of data
    ``(X_0..X_{M-1}, Z...)``; the output ``(Y..., Z...)``."""
    from .shapes import mx_shape

    x, idx = ins
    if x is None or idx is None:
        return
    if not idx or idx[0] > len(x):
        raise _error(node, f"indices {mx_shape(idx)} index more axes than data has {mx_shape(x)}")
    inf.assign(node, node, tuple(idx[1:]) + tuple(x[idx[0] :]))


def _scatter_nd_shape(inf: Any, node: Symbol, ins: list[Any], out: Any) -> None:
    """mxnet's scatter_nd shape: the output is the ``shape`` parameter."""
    inf.assign(node, node, tuple(_shape_text(node._attrs["shape"])))


SHAPE_RULES.update(
    ROIPooling=_roi_pooling_shape, gather_nd=_gather_nd_shape, scatter_nd=_scatter_nd_shape
)


# -- executor kernels (executor.py) -------------------------------------------------------------


def _kernel(node: Symbol, ins: list[NativeVariable], build: Any) -> NativeVariable:
    """The node's ``mx.nd`` function on its recorded input values: recorded (so the executor's
    backward differentiates it) where ``mx.nd`` records it, a constant otherwise (integer
    inputs, indices, comparisons, samples). The graph is built at each forward (some of these
    functions read values on the host: masks, orders, samples)."""
    from gradhub.variable import Variable as NativeVariable

    import gradhub_compat.mxnet._autograd_mode as ag

    from .context import Context, current_context
    from .ndarray import NDArray

    build.static = False
    ctx = current_context()
    if ins and ctx.device() != ins[0].device:
        ctx = Context("cpu", 0)
    if node._attrs.get("ctx") is not None:
        ctx = node._attrs["ctx"]
    arrays = [NDArray(v._data, ctx, v) for v in ins]
    saved = ag.state.recording
    ag.state.recording = True
    try:
        r = _call_nd(node._op, arrays, node._attrs, ctx)
    except (MXNetError, ValueError, TypeError, IndexError) as e:
        raise MXNetError(f"{node._op} {node._name!r}: {e}") from None
    finally:
        ag.state.recording = saved
    if r._var is not None:
        return r._var  # type: ignore[no-any-return]
    return NativeVariable.leaf(r._arr, False)


#: the executor's kernels (``executor._LAYERS``), by operator
EXECUTOR_KERNELS = {op: _kernel for op in OPS}


# -- JSON (serialization.py) --------------------------------------------------------------------

#: per operator: its inputs and its parameters with their parsers (``serialization._PARAMS``);
#: every parameter is read as text and turned into its value by the constructor
JSON_PARAMS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    op: (spec.inputs, {p: "str" for p in spec.params if p != "ctx"}) for op, spec in OPS.items()
}
