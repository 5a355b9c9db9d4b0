"""mxnet's JSON form of a symbol: :meth:`~.symbol.Symbol.tojson` and
:func:`~.symbol.load_json`.

The layout is mxnet 1.9.1's (nnvm's graph JSON): ``nodes`` in the order inputs before their
consumers, each ``{"op", "name", "attrs", "inputs": [[node, output, version], ...]}`` (``attrs``
left out when empty; variables have the op ``"null"``), ``arg_nodes`` (the positions of the
variables), ``node_row_ptr``, ``heads`` and ``attrs`` (``mxnet_version``), with mxnet's registered
operator names (``elemwise_add`` for ``a + b``, ``_mul_scalar`` for ``a * 2``) and the given
keyword arguments as strings. The text is written as mxnet writes it (same indentation and
separators).

Loading only parses: the text goes through :func:`json.loads`, attribute strings through a
parser of numbers, booleans and tuples of integers, and each node through the layer's own
constructor; nothing is executed or unpickled.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    >>> c = mx.sym.load_json(mx.sym.broadcast_add(2 * a, b, name="s").tojson())
    >>> c.list_arguments(), c.list_outputs()
    (['a', 'b'], ['s_output'])
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import _sym_norm, _sym_ops_more
from .base import MXNetError
from .shapes import UNARY_OPS
from .symbol import Symbol, Variable, is_multi_output, output_key

#: the layer's operator -> mxnet's registered operator name
_MX_OPS = {
    "_Plus": "elemwise_add",
    "_Minus": "elemwise_sub",
    "_Mul": "elemwise_mul",
    "_Div": "elemwise_div",
    "_Power": "_power",
    "_Maximum": "_maximum",
    "_Minimum": "_minimum",
    "_PlusScalar": "_plus_scalar",
    "_MinusScalar": "_minus_scalar",
    "_RMinusScalar": "_rminus_scalar",
    "_MulScalar": "_mul_scalar",
    "_DivScalar": "_div_scalar",
    "_RDivScalar": "_rdiv_scalar",
    "_PowerScalar": "_power_scalar",
    "_RPowerScalar": "_rpower_scalar",
    "_MaximumScalar": "_maximum_scalar",
    "_MinimumScalar": "_minimum_scalar",
    "_HypotScalar": "_hypot_scalar",
    "_Greater": "_greater",
    "_GreaterEqual": "_greater_equal",
    "_Lesser": "_lesser",
    "_LesserEqual": "_lesser_equal",
    "_GreaterScalar": "_greater_scalar",
    "_GreaterEqualScalar": "_greater_equal_scalar",
    "_LesserScalar": "_lesser_scalar",
    "_LesserEqualScalar": "_lesser_equal_scalar",
}
_LAYER_OPS = {v: k for k, v in _MX_OPS.items()}
_LAYER_OPS.update({"_plus": "_Plus", "_minus": "_Minus", "_mul": "_Mul", "_div": "_Div"})
_LAYER_OPS.update({"_Plus": "_Plus", "_Minus": "_Minus", "_Mul": "_Mul", "_Div": "_Div"})

#: per operator: its inputs (in order) and its parameters with their parsers
_BOOL, _INT, _FLOAT, _STR = "bool", "int", "float", "str"
_AXIS = "axis"  # None, an integer or a tuple of integers
_PARAMS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "FullyConnected": (
        ("data", "weight", "bias"),
        {"num_hidden": _INT, "no_bias": _BOOL, "flatten": _BOOL},
    ),
    "Activation": (("data",), {"act_type": _STR}),
    "SoftmaxOutput": (
        ("data", "label"),
        {
            "grad_scale": _FLOAT,
            "ignore_label": _FLOAT,
            "multi_output": _BOOL,
            "use_ignore": _BOOL,
            "preserve_shape": _BOOL,
            "normalization": _STR,
            "out_grad": _BOOL,
            "smooth_alpha": _FLOAT,
        },
    ),
    "MakeLoss": (
        ("data",),
        {"grad_scale": _FLOAT, "valid_thresh": _FLOAT, "normalization": _STR},
    ),
    "BlockGrad": (("data",), {}),
    "dot": (
        ("lhs", "rhs"),
        {"transpose_a": _BOOL, "transpose_b": _BOOL, "forward_stype": _STR},
    ),
    "softmax": (("data",), {"axis": _INT, "temperature": _FLOAT}),
    "Convolution": (
        ("data", "weight", "bias"),
        {
            "kernel": _AXIS,
            "stride": _AXIS,
            "dilate": _AXIS,
            "pad": _AXIS,
            "num_filter": _INT,
            "num_group": _INT,
            "workspace": _INT,
            "no_bias": _BOOL,
            "cudnn_tune": _STR,
            "cudnn_off": _BOOL,
            "layout": _STR,
        },
    ),
    "Deconvolution": (
        ("data", "weight", "bias"),
        {
            "kernel": _AXIS,
            "stride": _AXIS,
            "dilate": _AXIS,
            "pad": _AXIS,
            "adj": _AXIS,
            "target_shape": _AXIS,
            "num_filter": _INT,
            "num_group": _INT,
            "workspace": _INT,
            "no_bias": _BOOL,
            "cudnn_tune": _STR,
            "cudnn_off": _BOOL,
            "layout": _STR,
        },
    ),
    "Pooling": (
        ("data",),
        {
            "kernel": _AXIS,
            "pool_type": _STR,
            "global_pool": _BOOL,
            "cudnn_off": _BOOL,
            "pooling_convention": _STR,
            "stride": _AXIS,
            "pad": _AXIS,
            "p_value": _INT,
            "count_include_pad": _BOOL,
            "layout": _STR,
        },
    ),
    "Flatten": (("data",), {}),
    "Dropout": (
        ("data",),
        {"p": _FLOAT, "mode": _STR, "axes": _AXIS, "cudnn_off": _BOOL},
    ),
    "BatchNorm": (
        ("data", "gamma", "beta", "moving_mean", "moving_var"),
        {
            "eps": _FLOAT,
            "momentum": _FLOAT,
            "fix_gamma": _BOOL,
            "use_global_stats": _BOOL,
            "output_mean_var": _BOOL,
            "axis": _INT,
            "cudnn_off": _BOOL,
        },
    ),
    "Reshape": (
        ("data",),
        {"shape": _AXIS, "reverse": _BOOL, "target_shape": _AXIS, "keep_highest": _BOOL},
    ),
    "Concat": ((), {"dim": _INT, "num_args": _INT}),
    "Embedding": (
        ("data", "weight"),
        {"input_dim": _INT, "output_dim": _INT, "dtype": _STR, "sparse_grad": _BOOL},
    ),
    "LeakyReLU": (
        ("data", "gamma"),
        {"act_type": _STR, "slope": _FLOAT, "lower_bound": _FLOAT, "upper_bound": _FLOAT},
    ),
    "transpose": (("data",), {"axes": _AXIS}),
    "expand_dims": (("data",), {"axis": _INT}),
    "clip": (("data",), {"a_min": _FLOAT, "a_max": _FLOAT}),
    "SliceChannel": (("data",), {"num_outputs": _INT, "axis": _INT, "squeeze_axis": _BOOL}),
    "log_softmax": (("data",), {"axis": _INT, "temperature": _FLOAT}),
    "reshape_like": (("lhs", "rhs"), {}),
    "pick": (("data", "index"), {"axis": _INT, "keepdims": _BOOL, "mode": _STR}),
    "where": (("condition", "x", "y"), {}),
    "make_loss": (("data",), {}),
    "SwapAxis": (("data",), {"dim1": _INT, "dim2": _INT}),
    "CTCLoss": (
        ("data", "label", "data_lengths", "label_lengths"),
        {"use_data_lengths": _BOOL, "use_label_lengths": _BOOL, "blank_label": _STR},
    ),
}
for _op in ("LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"):
    _PARAMS[_op] = (("data", "label"), {"grad_scale": _FLOAT})
for _op in UNARY_OPS:
    _PARAMS[_op] = (("data",), {})
for _op in ("sum", "mean"):
    _PARAMS[_op] = (("data",), {"axis": _AXIS, "keepdims": _BOOL, "exclude": _BOOL})
for _op in (
    "broadcast_add",
    "broadcast_sub",
    "broadcast_mul",
    "broadcast_div",
    "broadcast_power",
    "broadcast_maximum",
    "broadcast_minimum",
):
    _PARAMS[_op] = (("lhs", "rhs"), {})
_PARAMS.update(_sym_norm.JSON_PARAMS)
_PARAMS.update(_sym_ops_more.JSON_PARAMS)

_MXNET_VERSION = 10901


def _num_outputs(node: Symbol) -> int:
    """The outputs mxnet 1.9.1 (built with oneDNN, as its pip wheels) registers for the node,
    visible or not (``node_row_ptr`` counts them): BatchNorm 3 (output, mean, var), Dropout 2
    (output, mask), CTCLoss 2, max Pooling 2 (output, workspace), every other operator 1."""
    if node._op == "BatchNorm":
        return 3
    if node._op in _sym_norm.NUM_OUTPUTS:  # (LayerNorm, InstanceNorm, GroupNorm: 3; Pad: 1)
        return _sym_norm.NUM_OUTPUTS[node._op]
    if node._op == "SliceChannel":
        return int(node._attrs["num_outputs"])
    if node._op in _sym_ops_more.OPS:  # (sort 2, topk 2 unless indices or mask)
        return _sym_ops_more.num_outputs(node)
    if node._op in ("Dropout", "CTCLoss"):  # (CTCLoss: the loss and its hidden gradient)
        return 2
    if node._op == "Pooling" and node._attrs["pool_type"] == "max":
        return 2
    return 1


# -- writing ------------------------------------------------------------------------------------


def _dumps(obj: Any, indent: int = 0) -> str:
    """``obj`` as mxnet's JSON writer (dmlc-core's ``JSONWriter``) prints it, its first line
    at column ``indent``: an object of more than one entry and an array of more than ten items
    take one line per entry, indented two more columns, each followed by ``", "``; smaller ones
    stay on one line."""
    if isinstance(obj, dict):
        items = [f"{json.dumps(k)}: {_dumps(v, indent + 2)}" for k, v in obj.items()]
        many = len(items) > 1
        opening, closing = "{", "}"
    elif isinstance(obj, list):
        items = [_dumps(v, indent + 2) for v in obj]
        many = len(items) > 10
        opening, closing = "[", "]"
    else:
        return json.dumps(obj)
    if not many:
        return opening + ", ".join(items) + closing
    pad = " " * (indent + 2)
    return f"{opening}\n{pad}" + f", \n{pad}".join(items) + f"\n{' ' * indent}{closing}"


def to_json(sym: Symbol) -> str:
    """mxnet's JSON text of ``sym`` (see the module docstring)."""
    # the output nodes of one operator (SliceChannel, BatchNorm with output_mean_var) are one
    # JSON node, read as [node, output, 0]
    nodes: list[Symbol] = []
    index: dict[int, tuple[int, int]] = {}
    slices: dict[Any, int] = {}
    for n in sym._topo():
        if n._op == "Group":
            continue
        out = 0
        if is_multi_output(n):
            out = n._attrs["index"]
            key = output_key(n)
            if key in slices:
                index[id(n)] = (slices[key], out)
                continue
            slices[key] = len(nodes)
        index[id(n)] = (len(nodes), out)
        nodes.append(n)
    aux = sym._aux_set()
    parts = []
    for n in nodes:
        lines = [
            f'      "op": {_dumps(_MX_OPS.get(n._op, n._op))}',
            f'      "name": {_dumps(n._name)}',
        ]
        if n._json:
            lines.append(f'      "attrs": {_dumps(dict(sorted(n._json.items())), 6)}')
        # an auxiliary state is read at version 1 (mxnet counts its in-place update)
        ins = [[*index[id(i)], int(i._op == "null" and i._name in aux)] for i in n._inputs]
        lines.append(f'      "inputs": {_dumps(ins, 6)}')
        parts.append("    {\n" + ", \n".join(lines) + "\n    }")
    heads = [[*index[id(h)], 0] for h in sym._heads()]
    arg_nodes = [i for i, n in enumerate(nodes) if n._op == "null"]
    row_ptr = [0]
    for n in nodes:
        row_ptr.append(row_ptr[-1] + _num_outputs(n))
    return (
        '{\n  "nodes": [\n'
        + ", \n".join(parts)
        + "\n  ], \n"
        + f'  "arg_nodes": {_dumps(arg_nodes, 2)}, \n'
        + f'  "node_row_ptr": {_dumps(row_ptr, 2)}, \n'
        + f'  "heads": {_dumps(heads, 2)}, \n'
        + f'  "attrs": {_dumps({"mxnet_version": ["int", _MXNET_VERSION]}, 2)}\n'
        + "}"
    )


# -- reading ------------------------------------------------------------------------------------

_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?(inf|nan)$", re.IGNORECASE)


def _bad(why: str) -> MXNetError:
    return MXNetError(f"mx.sym.load_json: {why}")


def _parse(node: str, key: str, text: Any, kind: str) -> Any:
    if not isinstance(text, str):
        raise _bad(f"node {node!r}: attribute {key!r} must be a string, got {text!r}")
    t = text.strip()
    if kind == _STR:
        return t
    if kind == _BOOL:
        if t.lower() in ("true", "1"):
            return True
        if t.lower() in ("false", "0"):
            return False
    elif kind == _INT and re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    elif kind == _FLOAT and _NUMBER.match(t):
        return float(t)
    elif kind == _AXIS and t == "None":
        return None
    elif kind == _AXIS and re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    elif kind == _AXIS and re.fullmatch(r"[\(\[]\s*([+-]?\d+\s*(,\s*[+-]?\d+\s*)*,?)?\s*[\)\]]", t):
        return tuple(int(d) for d in re.findall(r"[+-]?\d+", t))
    raise _bad(f"node {node!r}: attribute {key}={text!r} is not a valid {kind}")


def _parse_shape(node: str, text: Any) -> tuple[int, ...]:
    if isinstance(text, str) and re.fullmatch(
        r"\s*[\(\[]\s*(\d+\s*(,\s*\d+\s*)*,?)?\s*[\)\]]\s*", text
    ):
        return tuple(int(d) for d in re.findall(r"\d+", text))
    raise _bad(f"node {node!r}: __shape__={text!r} is not a shape")


def _node_attrs(node: dict[str, Any], name: str) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for key in ("param", "attr", "attrs"):  # older mxnet JSON used "param" and "attr"
        value = node.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise _bad(f"node {name!r}: {key!r} must be an object")
        attrs.update(value)
    return attrs


def from_json(text: Any) -> Symbol:
    """The symbol of mxnet's JSON ``text`` (see the module docstring)."""
    if not isinstance(text, str):
        raise TypeError(
            f"mx.sym.load_json: json_str required to be a string, got {type(text).__name__}"
        )
    try:
        graph = json.loads(text)
    except ValueError as e:
        raise _bad(f"the text is not JSON: {e}") from None
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list):
        raise _bad('expected an object with a "nodes" list (mxnet\'s symbol JSON)')
    heads = graph.get("heads")
    if not isinstance(heads, list) or not heads:
        raise _bad('expected a non-empty "heads" list')
    built: list[Symbol | list[Symbol]] = []  # (a list: the outputs of a SliceChannel)
    for pos, node in enumerate(graph["nodes"]):
        if not isinstance(node, dict) or not isinstance(node.get("name"), str):
            raise _bad(f"node {pos} must be an object with a string name")
        name, op = node["name"], node.get("op")
        inputs = node.get("inputs", [])
        if not isinstance(inputs, list):
            raise _bad(f"node {name!r}: inputs must be a list")
        ins: list[Symbol] = []
        for entry in inputs:
            if (
                not isinstance(entry, list)
                or not entry
                or not all(isinstance(i, int) and not isinstance(i, bool) for i in entry)
                or not 0 <= entry[0] < pos
            ):
                raise _bad(f"node {name!r}: input {entry!r} does not name an earlier node")
            ins.append(_output(built[entry[0]], entry, f"node {name!r}: input"))
        attrs = _node_attrs(node, name)
        built.append(_build(name, op, ins, attrs))
    out: list[Symbol] = []
    for h in heads:
        if (
            not isinstance(h, list)
            or not h
            or not isinstance(h[0], int)
            or not 0 <= h[0] < len(built)
        ):
            raise _bad(f"head {h!r} does not name a node")
        out.append(_output(built[h[0]], h, "head"))
    if len(out) == 1:
        return out[0]
    return Symbol("Group", "group", out)


def _output(node: Symbol | list[Symbol], entry: list[Any], what: str) -> Symbol:
    """The output ``entry[1]`` of a built node (only a SliceChannel has several)."""
    i = entry[1] if len(entry) > 1 else 0
    outs = node if isinstance(node, list) else [node]
    if not isinstance(i, int) or not 0 <= i < len(outs):
        raise _bad(f"{what} {entry!r} reads output {i} of a node of {len(outs)} outputs")
    return outs[i]


def _build(name: str, op: Any, ins: list[Symbol], attrs: dict[str, Any]) -> Symbol | list[Symbol]:
    json_attrs = {str(k): str(v) for k, v in attrs.items()}
    if op == "null":
        if ins:
            raise _bad(f"variable {name!r} has inputs")
        shape = _parse_shape(name, attrs["__shape__"]) if "__shape__" in attrs else None
        sym = Variable(name, shape=shape)
        sym._json = json_attrs
        return sym
    if op in _LAYER_OPS:
        layer_op = _LAYER_OPS[op]
        scalar = layer_op.endswith("Scalar")
        want = 1 if scalar else 2
        if len(ins) != want:
            raise _bad(f"node {name!r}: {op} takes {want} inputs, got {len(ins)}")
        extra = sorted(k for k in attrs if not k.startswith("__") and k != "scalar")
        if extra or (scalar and "scalar" not in attrs):
            raise _bad(
                f"node {name!r}: {op} takes the attribute 'scalar' only, got {sorted(attrs)}"
            )
        sattrs = {"scalar": _parse(name, "scalar", attrs["scalar"], _FLOAT)} if scalar else {}
        return Symbol(layer_op, name, ins, sattrs, json_attrs)
    if not isinstance(op, str) or op not in _PARAMS:
        raise NotImplementedError(
            f"mx.sym.load_json: operator {op!r} (node {name!r}) is not supported by "
            "gradhub_compat.mxnet (docs/migration-mxnet.md lists the operators)"
        )
    from . import symbol as _sym

    input_names, params = _PARAMS[op]
    kwargs: dict[str, Any] = {}
    for key, text in attrs.items():
        if key.startswith("__"):
            continue
        if key not in params:
            raise _bad(
                f"node {name!r}: {op} has no parameter {key!r} (parameters: {sorted(params)})"
            )
        kwargs[key] = _parse(name, key, text, params[key])
    if op == "SliceChannel":
        if len(ins) != 1:
            raise _bad(f"node {name!r}: SliceChannel takes one input, got {len(ins)}")
        if "num_outputs" not in kwargs:
            raise _bad(f"node {name!r}: Required parameter num_outputs is not presented")
        group = _sym.SliceChannel(ins[0], name=name, **kwargs)
        outs = group._heads()
        for o in outs:
            o._json = dict(json_attrs)
        return outs
    if op in _sym_ops_more.OPS:  # (inputs by position: optional or any number)
        return _sym_ops_more.from_json(op, name, ins, kwargs, json_attrs)
    if op == "Concat":
        sym = _sym.Concat(*ins, name=name, **kwargs)
        sym._json = json_attrs
        return sym
    if op == "LeakyReLU" and kwargs.get("act_type", "leaky") != "prelu":
        input_names = input_names[:1]
    if op in ("softmax", "log_softmax") and "temperature" not in kwargs:
        kwargs["temperature"] = None
    if op == "FullyConnected":
        if "num_hidden" not in kwargs:
            raise _bad(
                f"node {name!r}: Required parameter num_hidden of FullyConnected is not presented"
            )
        input_names = input_names[:2] if kwargs.get("no_bias") else input_names
    if op == "Convolution" and kwargs.get("no_bias"):
        input_names = input_names[:2]
    if op == "Deconvolution" and kwargs.get("no_bias", True):  # (mxnet's default: no bias)
        input_names = input_names[:2]
    if op == "CTCLoss":  # (the lengths are inputs only when used)
        input_names = ("data", "label") + tuple(
            k for k in ("data_lengths", "label_lengths") if kwargs.get(f"use_{k}")
        )
    if len(ins) != len(input_names):
        raise _bad(f"node {name!r}: {op} takes the inputs {list(input_names)}, got {len(ins)}")
    kwargs.update(zip(input_names, ins))
    sym = getattr(_sym, op)(name=name, **kwargs)
    if sym._op == "Group":  # BatchNorm(output_mean_var=True): its three outputs
        outs = sym._heads()
        for o in outs:
            o._json = dict(json_attrs)
        return outs
    sym._json = json_attrs
    return sym
