"""nnabla's ``Network`` messages (the network of an NNP file) written from a recorded gradhub
graph, and gradhub graphs built from them.

:func:`network_message` walks the graph producing the output Variables (producers first, with
:func:`gradhub.engine.collect_graph`) and writes each recorded function as nnabla's function
type with its ``*_param`` message (the table :data:`WRITERS`), naming the Variables as nnabla
1.39's ``save`` does: the names given in ``contents`` (``names`` and ``outputs``), parameters by
their names relative to the current parameter scope, the other Variables ``@<net>/<Type>_out``
(``_1``, ``_2``... for the next ones of a type). With ``variable_batch_size`` the first dimension
of the data Variables (and of ``Reshape``/``Broadcast`` shapes) equal to the batch size becomes
``-1``, as nnabla's ``variable_batch_size``. A function without a row raises
``NotImplementedError`` naming it: no file is written.

:func:`build_network` runs the other way: each nnabla function of a ``Network`` becomes the call
of :mod:`gradhub_compat.nnabla.functions` of :data:`READERS` (registered gradhub functions, so
the graph is an ordinary recorded one); an unknown type raises ``NotImplementedError``.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from gradhub.engine import collect_graph
from gradhub.variable import Variable as NativeVariable

from ._hooks import FunctionView
from ._nnp_proto import SCHEMA, Message

DOCS = "see docs/migration-nnabla.md, 'NNP files'"

#: nnabla function type -> the field of ``Function`` holding its parameter message
PARAM_FIELD: dict[str, str] = {
    f.type[: -len("Parameter")]: f.name
    for f in SCHEMA["Function"].by_name.values()
    if f.name.endswith("_param") and f.type.endswith("Parameter")
}


def _ints(v: Any) -> list[int]:
    return [int(e) for e in v]


def _axes(axis: Any, ndim: int) -> list[int]:
    if axis is None:
        return list(range(ndim))
    if isinstance(axis, (int, np.integer)):
        return [int(axis) % max(ndim, 1)]
    return [int(a) % max(ndim, 1) for a in axis]


def _last_axis(axis: Any, ndim: int) -> int:
    return ndim - 1 if axis is None else int(axis)


Args = dict[str, Any]
Shapes = list[tuple[int, ...]]
#: a writer: (nnabla type, the parameter fields from the nnabla-style args and input shapes)
Writer = tuple[str, Callable[[Args, Shapes], dict[str, Any]]]


def _conv(a: Args, s: Shapes) -> dict[str, Any]:
    out = {
        "base_axis": int(a.get("base_axis", 1)),
        "pad": _ints(a["pad"]),
        "stride": _ints(a["stride"]),
        "dilation": _ints(a["dilation"]),
        "group": int(a.get("group", 1)),
        "channel_last": bool(a.get("channel_last", False)),
    }
    if "output_padding" in a:
        out["output_padding"] = _ints(a["output_padding"])
    return out


def _pool(a: Args, s: Shapes) -> dict[str, Any]:
    out = {
        "kernel": _ints(a["kernel"]),
        "stride": _ints(a["stride"]),
        "ignore_border": bool(a.get("ignore_border", True)),
        "pad": _ints(a["pad"]),
        "channel_last": bool(a.get("channel_last", False)),
    }
    if "including_pad" in a:
        out["including_pad"] = bool(a["including_pad"])
    return out


def _bn(a: Args, s: Shapes) -> dict[str, Any]:
    if a.get("output_stat"):
        raise NotImplementedError(
            f"nnabla.utils.save: BatchNormalization with output_stat=True is not supported ({DOCS})"
        )
    return {
        "axes": _ints(a.get("axes", [1])),
        "decay_rate": float(a.get("decay_rate", 0.9)),
        "eps": float(a.get("eps", 1e-5)),
        "batch_stat": bool(a.get("batch_stat", True)),
    }


def _reduce(a: Args, s: Shapes) -> dict[str, Any]:
    if a.get("with_index") or a.get("only_index"):
        raise NotImplementedError(
            f"nnabla.utils.save: Max/Min with with_index or only_index is not supported ({DOCS})"
        )
    return {"axes": _axes(a.get("axis"), len(s[0])), "keep_dims": bool(a.get("keepdims", False))}


def _none(a: Args, s: Shapes) -> dict[str, Any]:
    return {}


def _val(a: Args, s: Shapes) -> dict[str, Any]:
    return {"val": float(a["val"])}


#: recorded gradhub function name -> (nnabla type, its parameters)
WRITERS: dict[str, Writer] = {
    "Affine": ("Affine", lambda a, s: {"base_axis": int(a.get("base_axis", 1))}),
    "Convolution": ("Convolution", _conv),
    "Deconvolution": ("Deconvolution", _conv),
    "MaxPooling": ("MaxPooling", _pool),
    "AveragePooling": ("AveragePooling", _pool),
    "GlobalAveragePooling": ("GlobalAveragePooling", _none),
    "ReLU": ("ReLU", lambda a, s: {"inplace": False}),
    "LeakyReLU": ("LeakyReLU", lambda a, s: {"alpha": float(a.get("alpha", 0.1))}),
    "ELU": ("ELU", lambda a, s: {"alpha": float(a.get("alpha", 1.0))}),
    "Softplus": ("SoftPlus", lambda a, s: {"beta": float(a.get("beta", 1.0))}),
    "SoftPlus": ("SoftPlus", lambda a, s: {"beta": float(a.get("beta", 1.0))}),
    "Softmax": ("Softmax", lambda a, s: {"axis": _last_axis(a.get("axis"), len(s[0]))}),
    "LogSoftmax": ("LogSoftmax", lambda a, s: {"axis": _last_axis(a.get("axis"), len(s[0]))}),
    "SoftmaxCrossEntropy": (
        "SoftmaxCrossEntropy",
        lambda a, s: {"axis": _last_axis(a.get("axis"), len(s[0]))},
    ),
    "BatchNormalization": ("BatchNormalization", _bn),
    "Reshape": ("Reshape", lambda a, s: {"shape": _ints(a["shape"]), "inplace": True}),
    "Concatenate": ("Concatenate", lambda a, s: {"axis": int(a.get("axis", len(s[0]) - 1))}),
    "Transpose": ("Transpose", lambda a, s: {"axes": _ints(a["axes"])}),
    "Sum": ("Sum", _reduce),
    "Mean": ("Mean", _reduce),
    "Max": ("Max", _reduce),
    "Min": ("Min", _reduce),
    "Tile": ("Tile", lambda a, s: {"reps": _ints(a["reps"])}),
    "BroadcastTo": ("Broadcast", lambda a, s: {"shape": _ints(a["shape"])}),
    "Broadcast": ("Broadcast", lambda a, s: {"shape": _ints(a["shape"])}),
    "Slice": (
        "Slice",
        lambda a, s: {
            "start": _ints(a["start"]),
            "stop": _ints(a["stop"]),
            "step": _ints(a["step"]),
        },
    ),
    "Dropout": ("Dropout", lambda a, s: {"p": float(a["p"]), "seed": int(a.get("seed", -1))}),
}
for _name in ("Add2", "Sub2", "Mul2", "Div2", "Pow2"):
    WRITERS[_name] = (_name, lambda a, s: {"inplace": False})
for _name in (
    "AddScalar",
    "MulScalar",
    "PowScalar",
    "RSubScalar",
    "RDivScalar",
    "RPowScalar",
    "MaximumScalar",
    "MinimumScalar",
    "GreaterScalar",
    "GreaterEqualScalar",
    "LessScalar",
    "LessEqualScalar",
    "EqualScalar",
    "NotEqualScalar",
):
    WRITERS[_name] = (_name, _val)
for _name in (
    "Tanh",
    "Sigmoid",
    "Identity",
    "Exp",
    "Log",
    "Abs",
    "Sin",
    "Cos",
    "Maximum2",
    "Minimum2",
    "Swish",
    "GELU",
    "HardSigmoid",
    "ReLU6",
    "SigmoidCrossEntropy",
    "SquaredError",
    "Greater",
    "Less",
):
    WRITERS[_name] = (_name, _none)
del _name


def _set_params(msg: Message, params: dict[str, Any]) -> None:
    """Set the fields of a ``*_param`` message (a ``Shape`` field from a list of ints)."""
    for k, v in params.items():
        f = msg._field(k)
        if f.type == "Shape":
            getattr(msg, k).dim = list(v)
        else:
            setattr(msg, k, v)


class _Namer:
    """nnabla's names of unnamed Variables and functions: ``@net/Type``, ``@net/Type_1``..."""

    def __init__(self, net: str, taken: set[str]) -> None:
        self.net = net
        self.counts: dict[str, int] = {}
        self.taken = taken

    def function(self, type_name: str) -> tuple[str, str]:
        n = self.counts.get(type_name, 0)
        self.counts[type_name] = n + 1
        suffix = f"_{n}" if n else ""
        return f"@{self.net}/{type_name}{suffix}", f"@{self.net}/{type_name}_out{suffix}"


def _source(v: NativeVariable, where: str) -> NativeVariable:
    """The Variable an unlinked view (``get_unlinked_variable``, the parameters' views) shares
    its data with."""
    from ._variable import _Unlinked

    while isinstance(v, _Unlinked):
        src = v._src
        if tuple(src.shape) != tuple(v.shape):
            raise NotImplementedError(
                f"{where}: a Variable seen through another shape (reshape(unlink=True)) cannot "
                f"be written ({DOCS})"
            )
        v = src
    return v


def _output_key(v: NativeVariable) -> Any:
    node = v._creator
    if node is None:
        return ("leaf", id(_source(v, "nnabla.utils.save")))
    for k, r in enumerate(node.outputs):
        if r() is v:
            return (id(node), k)
    raise ValueError("nnabla.utils.save: an output Variable is not among its function's outputs")


def network_message(
    name: str,
    batch_size: int,
    outputs: Mapping[str, Any],
    names: Mapping[str, Any],
    parameters: Mapping[str, Any],
    variable_batch_size: bool = True,
) -> tuple[Message, list[str]]:
    """The ``Network`` message of the graph producing ``outputs`` (name -> Variable) and the
    names of the parameters it uses (in order of first use). ``names``: more name -> Variable
    (inputs, intermediates); ``parameters``: name -> parameter Variable."""
    where = f"nnabla.utils.save: network {name!r}"
    outs = list(outputs.items())
    for k, v in [*outs, *names.items()]:
        if not isinstance(v, NativeVariable):
            raise TypeError(f"{where}: {k!r} must be a Variable, got {type(v).__name__}")
    param_names = {id(v): k for k, v in parameters.items()}
    given: dict[Any, str] = {}
    for k, v in [*names.items(), *outs]:
        given[_output_key(v)] = k
    nodes = collect_graph([v for _, v in outs if v._creator is not None])
    net = Message("Network", name=name, batch_size=int(batch_size))
    namer = _Namer(name, set(given.values()))
    var_names: dict[Any, str] = {}
    buffers: list[tuple[str, tuple[int, ...]]] = []
    used_params: list[tuple[str, tuple[int, ...]]] = []
    functions: list[tuple[str, str, list[str], list[str], dict[str, Any]]] = []
    masks: dict[tuple[int, int], tuple[Any, Any, dict[str, Any]]] = {}
    leaves_seen: set[int] = set()

    def leaf_name(v: NativeVariable) -> str:
        v = _source(v, where)
        key = ("leaf", id(v))
        if key in var_names:
            return var_names[key]
        if id(v) in param_names:
            nm = param_names[id(v)]
            used_params.append((nm, tuple(v.shape)))
        else:
            nm = given.get(key) or _unique(f"@{name}/Input", namer.taken)
            buffers.append((nm, tuple(v.shape)))
        namer.taken.add(nm)
        var_names[key] = nm
        leaves_seen.add(id(v))
        return nm

    for node in nodes:
        fname = str(node.fdef.name)
        view = FunctionView(node)
        if fname == "DropoutMask":  # F.dropout records DropoutMask then Mul2(x, mask)
            masks[(id(node), 0)] = (node.srcs[0], node.idxs[0], dict(node.attrs))
            continue
        srcs = list(zip(node.srcs, node.idxs))
        in_shapes = [tuple(s) for s in node.in_shapes]
        args = view.info.args
        if fname == "Mul2" and any(idx >= 0 and (id(src), idx) in masks for src, idx in srcs):
            m = next(i for i, (src, idx) in enumerate(srcs) if idx >= 0 and (id(src), idx) in masks)
            x_src, x_idx, mask_args = masks[(id(srcs[m][0]), srcs[m][1])]
            other = srcs[1 - m]
            if other[0] is not x_src or other[1] != x_idx:
                raise NotImplementedError(
                    f"{where}: a dropout mask multiplies another Variable than its input ({DOCS})"
                )
            fname, srcs, args = "Dropout", [other], mask_args
            in_shapes = [in_shapes[1 - m]]
        row = WRITERS.get(fname)
        if row is None:
            raise NotImplementedError(
                f"{where}: the function {fname} cannot be written to an NNP file by "
                f"gradhub_compat.nnabla ({DOCS})"
            )
        ntype, conv = row
        params = conv(args, in_shapes)
        inputs = []
        for src, idx in srcs:
            if idx < 0:
                inputs.append(leaf_name(src))
            else:
                key = (id(src), idx)
                if key in masks:
                    raise NotImplementedError(
                        f"{where}: a dropout mask used other than by its multiplication ({DOCS})"
                    )
                inputs.append(var_names[key])
        fn_name, out_base = namer.function(ntype)
        out_names = []
        for oi in range(len(node.outputs)):
            okey = (id(node), oi)
            nm = given.get(okey) or _unique(out_base + (f"_{oi}" if oi else ""), namer.taken)
            namer.taken.add(nm)
            var_names[okey] = nm
            out_names.append(nm)
            buffers.append((nm, tuple(node.out_shapes[oi])))
        functions.append((fn_name, ntype, inputs, out_names, params))
    for _, v in outs:  # an output that is a leaf
        if v._creator is None:
            leaf_name(v)
    expect = _expected_batch(functions, dict(buffers))
    for nm, shape in buffers:
        dims = list(shape)
        if variable_batch_size and expect is not None and dims and dims[0] == expect:
            dims[0] = -1
        var = net.add("variable", name=nm, type="Buffer")
        var.shape.dim = dims
    for nm, shape in used_params:
        var = net.add("variable", name=nm, type="Parameter")
        var.shape.dim = list(shape)
    for fn_name, ntype, inputs, out_names, params in functions:
        if variable_batch_size and expect is not None and ntype in ("Reshape", "Broadcast"):
            if params["shape"] and params["shape"][0] == expect:
                params = dict(params, shape=[-1, *params["shape"][1:]])
        f = net.add("function", name=fn_name, type=ntype, input=inputs, output=out_names)
        field = PARAM_FIELD.get(ntype)
        if field is not None:
            _set_params(getattr(f, field), params)
    return net, [nm for nm, _ in used_params]


def _unique(base: str, taken: set[str]) -> str:
    nm, n = base, 0
    while nm in taken:
        n += 1
        nm = f"{base}_{n}"
    return nm


def _expected_batch(
    functions: list[tuple[str, str, list[str], list[str], dict[str, Any]]],
    shapes: dict[str, tuple[int, ...]],
) -> int | None:
    """nnabla's batch size of a network: the product of the dimensions before ``base_axis`` of
    the first data input of the last function with a ``base_axis``."""
    expect = None
    for _, _, inputs, _, params in functions:
        base = params.get("base_axis")
        if base:
            for nm in inputs:
                if nm in shapes:
                    expect = int(np.prod(shapes[nm][:base]))
                    break
    return expect


# -- building a graph ------------------------------------------------------------------------


def _dims(m: Message) -> list[int]:
    return [int(d) for d in m.dim]


def _opt(xs: list[Any], i: int) -> Any:
    return xs[i] if len(xs) > i else None


def _sum_axes(p: Message) -> Any:
    return list(p.axes) if p.axes else None


def _read_bn(F: Any, xs: list[Any], p: Message) -> Any:
    if p.no_scale or p.no_bias or len(xs) != 5:
        raise NotImplementedError(
            f"nnabla NNP: BatchNormalization without scale or bias is not supported ({DOCS})"
        )
    return F.batch_normalization(
        *xs, axes=list(p.axes) or [1], decay_rate=p.decay_rate, eps=p.eps, batch_stat=p.batch_stat
    )


Reader = Callable[[Any, list[Any], Message, int], Any]


def _binary(fn: str) -> Reader:
    return lambda F, xs, p, b: getattr(F, fn)(xs[0], xs[1])


def _unary(fn: str) -> Reader:
    return lambda F, xs, p, b: getattr(F, fn)(xs[0])


def _scalar(fn: str) -> Reader:
    return lambda F, xs, p, b: getattr(F, fn)(xs[0], p.val)


#: nnabla function type -> the call building it (F: the layer's functions module, xs: inputs,
#: p: the parameter message, b: the batch size for the -1 of Broadcast shapes)
READERS: dict[str, Reader] = {
    "Affine": lambda F, xs, p, b: F.affine(xs[0], xs[1], _opt(xs, 2), p.base_axis),
    "Convolution": lambda F, xs, p, b: F.convolution(
        xs[0],
        xs[1],
        _opt(xs, 2),
        p.base_axis,
        _dims(p.pad),
        _dims(p.stride),
        _dims(p.dilation),
        p.group or 1,
        p.channel_last,
    ),
    "Deconvolution": lambda F, xs, p, b: F.deconvolution(
        xs[0],
        xs[1],
        _opt(xs, 2),
        p.base_axis,
        _dims(p.pad),
        _dims(p.stride),
        _dims(p.dilation),
        p.group or 1,
        p.channel_last,
        _dims(p.output_padding) or None,
    ),
    "MaxPooling": lambda F, xs, p, b: F.max_pooling(
        xs[0],
        _dims(p.kernel),
        _dims(p.stride) or None,
        p.ignore_border,
        _dims(p.pad) or None,
        p.channel_last,
    ),
    "AveragePooling": lambda F, xs, p, b: F.average_pooling(
        xs[0],
        _dims(p.kernel),
        _dims(p.stride) or None,
        p.ignore_border,
        _dims(p.pad) or None,
        p.channel_last,
        p.including_pad,
    ),
    "GlobalAveragePooling": lambda F, xs, p, b: F.global_average_pooling(xs[0]),
    "ReLU": lambda F, xs, p, b: F.relu(xs[0]),
    "LeakyReLU": lambda F, xs, p, b: F.leaky_relu(xs[0], p.alpha),
    "ELU": lambda F, xs, p, b: F.elu(xs[0], p.alpha),
    "SoftPlus": lambda F, xs, p, b: F.softplus(xs[0], p.beta),
    "Softmax": lambda F, xs, p, b: F.softmax(xs[0], p.axis),
    "LogSoftmax": lambda F, xs, p, b: F.log_softmax(xs[0], p.axis),
    "SoftmaxCrossEntropy": lambda F, xs, p, b: F.softmax_cross_entropy(xs[0], xs[1], p.axis),
    "BatchNormalization": lambda F, xs, p, b: _read_bn(F, xs, p),
    "Reshape": lambda F, xs, p, b: F.reshape(xs[0], _dims(p.shape)),
    "Concatenate": lambda F, xs, p, b: F.concatenate(*xs, axis=p.axis),
    "Transpose": lambda F, xs, p, b: F.transpose(xs[0], list(p.axes)),
    "Sum": lambda F, xs, p, b: F.sum(xs[0], axis=_sum_axes(p), keepdims=p.keep_dims),
    "Mean": lambda F, xs, p, b: F.mean(xs[0], axis=_sum_axes(p), keepdims=p.keep_dims),
    "Max": lambda F, xs, p, b: F.max(xs[0], axis=_sum_axes(p), keepdims=p.keep_dims),
    "Min": lambda F, xs, p, b: F.min(xs[0], axis=_sum_axes(p), keepdims=p.keep_dims),
    "Tile": lambda F, xs, p, b: F.tile(xs[0], list(p.reps)),
    "Broadcast": lambda F, xs, p, b: F.broadcast(
        xs[0], [b if (i == 0 and d == -1) else d for i, d in enumerate(_dims(p.shape))]
    ),
    "Slice": lambda F, xs, p, b: F.slice(xs[0], list(p.start), list(p.stop), list(p.step)),
    "Dropout": lambda F, xs, p, b: F.dropout(xs[0], p.p, p.seed),
}
for _t, _f in (
    ("Add2", "add2"),
    ("Sub2", "sub2"),
    ("Mul2", "mul2"),
    ("Div2", "div2"),
    ("Pow2", "pow2"),
    ("Maximum2", "maximum2"),
    ("Minimum2", "minimum2"),
    ("SquaredError", "squared_error"),
    ("SigmoidCrossEntropy", "sigmoid_cross_entropy"),
    ("Greater", "greater"),
    ("Less", "less"),
):
    READERS[_t] = _binary(_f)
for _t, _f in (
    ("Tanh", "tanh"),
    ("Sigmoid", "sigmoid"),
    ("Identity", "identity"),
    ("Exp", "exp"),
    ("Log", "log"),
    ("Abs", "abs"),
    ("Sin", "sin"),
    ("Cos", "cos"),
    ("Swish", "swish"),
    ("GELU", "gelu"),
    ("HardSigmoid", "hard_sigmoid"),
    ("ReLU6", "relu6"),
):
    READERS[_t] = _unary(_f)
for _t in (
    "AddScalar",
    "MulScalar",
    "PowScalar",
    "RSubScalar",
    "RDivScalar",
    "RPowScalar",
    "MaximumScalar",
    "MinimumScalar",
    "GreaterScalar",
    "GreaterEqualScalar",
    "LessScalar",
    "LessEqualScalar",
    "EqualScalar",
    "NotEqualScalar",
):
    _f = re.sub(r"(?<!^)(?=[A-Z])", "_", _t).lower()
    READERS[_t] = _scalar(_f)
del _t, _f


class NnpNetwork:
    """A graph built from a network of an NNP file (nnabla's ``NnpNetwork``): ``inputs`` (the
    data Variables no function produces), ``outputs`` (the Variables no function consumes) and
    ``variables`` (every Variable, parameters included), OrderedDicts name -> Variable; each
    Variable's ``name`` is its name in the file. ``name`` and ``batch_size`` of the network."""

    def __init__(
        self,
        name: str,
        batch_size: int,
        inputs: OrderedDict[str, Any],
        outputs: OrderedDict[str, Any],
        variables: OrderedDict[str, Any],
    ) -> None:
        self.name = name
        self.batch_size = batch_size
        self._inputs = inputs
        self._outputs = outputs
        self._variables = variables

    @property
    def inputs(self) -> OrderedDict[str, Any]:
        return self._inputs

    @property
    def outputs(self) -> OrderedDict[str, Any]:
        return self._outputs

    @property
    def variables(self) -> OrderedDict[str, Any]:
        return self._variables

    def __repr__(self) -> str:
        return (
            f"<NnpNetwork {self.name!r}: inputs {list(self._inputs)}, outputs "
            f"{list(self._outputs)}>"
        )


def build_network(
    net: Message, params: Mapping[str, Any], batch_size: int | None, source: str
) -> NnpNetwork:
    """The graph of the ``Network`` message ``net`` on the parameter Variables ``params``
    (name -> Variable), with ``-1`` dimensions set to ``batch_size`` (default: the network's
    ``batch_size``)."""
    from . import functions as F
    from ._variable import Variable

    where = f"nnabla NNP: {source}: network {net.name!r}"
    if net.repeat_info:
        raise NotImplementedError(f"{where}: repeat (loop) networks are not supported ({DOCS})")
    b = int(batch_size) if batch_size is not None else int(net.batch_size or 1)
    if b < 1:
        raise ValueError(f"{where}: batch_size must be >= 1, got {b}")
    declared: dict[str, Message] = {}
    for v in net.variable:
        if v.name in declared:
            raise ValueError(f"{where}: the variable {v.name!r} is declared twice")
        declared[v.name] = v
    produced = {o for f in net.function for o in f.output}
    consumed = {i for f in net.function for i in f.input}
    values: OrderedDict[str, Any] = OrderedDict()
    inputs: OrderedDict[str, Any] = OrderedDict()
    for v in net.variable:
        if v.type == "Parameter":
            p = params.get(v.name)
            if p is None:
                raise ValueError(
                    f"{where}: the parameter {v.name!r} has no values (load the file with its "
                    "parameters)"
                )
            values[v.name] = p
        elif v.name not in produced:
            shape = [b if d < 0 else d for d in _dims(v.shape)]
            x = Variable(shape)
            x.name = v.name
            values[v.name] = x
            inputs[v.name] = x
    for f in net.function:
        reader = READERS.get(f.type)
        if reader is None:
            raise NotImplementedError(
                f"{where}: the function {f.name!r} of type {f.type} is not supported by "
                f"gradhub_compat.nnabla ({DOCS})"
            )
        xs = []
        for i in f.input:
            if i not in values:
                raise ValueError(
                    f"{where}: function {f.name!r} reads {i!r}, which is neither declared nor "
                    "produced before it"
                )
            xs.append(values[i])
        field = PARAM_FIELD.get(f.type)
        p = getattr(f, field) if field is not None else Message("Shape")
        try:
            y = reader(F, xs, p, b)
        except (TypeError, ValueError, IndexError) as e:
            raise ValueError(f"{where}: function {f.name!r} ({f.type}): {e}") from e
        ys = list(y) if isinstance(y, (tuple, list)) else [y]
        if len(ys) != len(f.output):
            raise ValueError(
                f"{where}: function {f.name!r} ({f.type}) has {len(ys)} outputs, the file "
                f"names {len(f.output)}"
            )
        for o, yv in zip(f.output, ys):
            yv.name = o
            values[o] = yv
    outputs: OrderedDict[str, Any] = OrderedDict(
        (k, values[k]) for k in values if k in produced and k not in consumed
    )
    ordered: OrderedDict[str, Any] = OrderedDict()
    for v in net.variable:
        if v.name in values:
            ordered[v.name] = values[v.name]
    for k, val in values.items():
        ordered.setdefault(k, val)
    return NnpNetwork(net.name, b, inputs, outputs, ordered)
