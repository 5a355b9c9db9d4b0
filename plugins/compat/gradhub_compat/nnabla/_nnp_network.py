"""nnabla's ``Network`` messages (the network of an NNP file) written from a recorded gradhub
graph, and gradhub graphs built from them.

:func:`network_message` walks the graph producing the output Variables in nnabla's order of
``Variable.visit`` (depth first from the outputs, inputs in order) and writes each recorded
function as nnabla's function type with its ``*_param`` message (the table :data:`WRITERS`);
the functions the layer records as several are written as nnabla's one function where the form
of the graph shows them (:func:`_fusions`: ``BinaryTanh``, ``BinarySigmoid``, ``LeakyReLU``,
``SquaredError``; the binary weight of ``F.binary_connect_*``/``F.binary_weight_*`` with the
convolution or affine reading it as ``BinaryConnectConvolution`` and the like). The Variables
are named as nnabla 1.39's ``save`` does: the names given in ``contents`` (``names`` and
``outputs``), parameters by their names relative to the current parameter scope, the other
Variables ``@<net>/<Type>_out`` (``_1``, ``_2``... for the next ones of a type). With
``variable_batch_size`` the first dimension of the data Variables (and of ``Reshape``/``Broadcast``
shapes) equal to the batch size becomes ``-1``, as nnabla's ``variable_batch_size``. A function
without a row raises ``NotImplementedError`` naming it: no file is written.

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

from ._hooks import FunctionView, nnabla_name
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
    out: dict[str, Any] = {"val": float(a["val"])}
    if a.get("inplace"):  # (AddScalar, MulScalar, PowScalar)
        out["inplace"] = True
    return out


def _binary_conv(a: Args, s: Shapes) -> dict[str, Any]:
    out = _conv(a, s)
    del out["channel_last"]
    out.pop("output_padding", None)
    out["quantize_zero_to"] = float(a.get("quantize_zero_to", 1.0))
    return out


def _binary_affine(a: Args, s: Shapes) -> dict[str, Any]:
    return {
        "base_axis": int(a.get("base_axis", 1)),
        "quantize_zero_to": float(a.get("quantize_zero_to", 1.0)),
    }


#: recorded gradhub function name -> (nnabla type, its parameters)
WRITERS: dict[str, Writer] = {
    "Affine": ("Affine", lambda a, s: {"base_axis": int(a.get("base_axis", 1))}),
    "Convolution": ("Convolution", _conv),
    "Deconvolution": ("Deconvolution", _conv),
    "MaxPooling": ("MaxPooling", _pool),
    "AveragePooling": ("AveragePooling", _pool),
    "GlobalAveragePooling": ("GlobalAveragePooling", _none),
    "ReLU": ("ReLU", lambda a, s: {"inplace": bool(a.get("inplace", False))}),
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
    # fused by network_message: a BinaryConnectWeight/BinaryWeightWeight node and the
    # Convolution/Affine using its result (the layer's F.binary_*_convolution/affine)
    "BinaryConnectConvolution": ("BinaryConnectConvolution", _binary_conv),
    "BinaryWeightConvolution": ("BinaryWeightConvolution", _binary_conv),
    "BinaryConnectAffine": ("BinaryConnectAffine", _binary_affine),
    "BinaryWeightAffine": ("BinaryWeightAffine", _binary_affine),
    # fused by network_message from the graph of the layer's F.binary_tanh/binary_sigmoid
    "BinaryTanh": ("BinaryTanh", _none),
    "BinarySigmoid": ("BinarySigmoid", _none),
    # F.roi_align: a RoIAlign node shown as nnabla's RoiAlign
    "RoiAlign": (
        "RoiAlign",
        lambda a, s: {
            "output_size": _ints(a["output_size"]),
            "spatial_scale": [float(v) for v in a["spatial_scale"]],
            "sampling_ratio": int(a["sampling_ratio"]),
            "channel_last": bool(a["channel_last"]),
        },
    ),
    # F.patch_correlation: nnabla's PatchCorrelation (NHWC) between its transposes
    "PatchCorrelation": (
        "PatchCorrelation",
        lambda a, s: {
            k: _ints(a[k]) for k in ("patch", "shift", "patch_step", "shift_step", "padding")
        },
    ),
    "AdaptiveSeparableConvolution": ("AdaptiveSeparableConvolution", _none),
    "ONNXResize": (
        "ONNXResize",
        lambda a, s: {
            "roi": [float(v) for v in a["roi"]],
            "scales": [float(v) for v in a["scales"]],
            "sizes": _ints(a["sizes"]),
            "mode": str(a["mode"]),
            "coordinate_transformation_mode": str(a["coordinate_transformation_mode"]),
            "cubic_coeff_a": float(a["cubic_coeff_a"]),
            "exclude_outside": int(a["exclude_outside"]),
            "extrapolation_value": float(a["extrapolation_value"]),
            "nearest_mode": str(a["nearest_mode"]),
        },
    ),
}
for _name in ("Add2", "BcAdd2", "Sub2", "Mul2", "Div2", "Pow2"):
    WRITERS[_name] = (_name, lambda a, s: {"inplace": bool(a.get("inplace", False))})
# The nnabla functions of one input and one scalar argument ``val``.
_SCALAR_FUNCTIONS = (
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
)
for _name in _SCALAR_FUNCTIONS:
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


def _visit_order(nodes: list[Any], outs: list[tuple[str, Any]]) -> list[Any]:
    """``nodes`` in nnabla's order of ``Variable.visit``: depth first from each output in turn,
    the producers of a function's inputs in input order before it (post-order)."""
    known = {id(n) for n in nodes}
    done: set[int] = set()
    order: list[Any] = []
    for _, v in outs:
        root = v._creator
        if root is None or id(root) in done:
            continue
        stack: list[tuple[Any, int]] = [(root, 0)]
        done.add(id(root))
        while stack:
            node, k = stack.pop()
            srcs = [s for s, i in zip(node.srcs, node.idxs) if i >= 0]
            if k < len(srcs):
                stack.append((node, k + 1))
                src = srcs[k]
                if id(src) in known and id(src) not in done:
                    done.add(id(src))
                    stack.append((src, 0))
            else:
                order.append(node)
    return order


def _producer(src: Any, idx: int, fname: str, **attrs: float) -> Any:
    """``src`` when it is a recorded node of function ``fname`` (with these attribute values)
    whose output ``idx`` is read, else None."""
    if idx != 0 or str(getattr(getattr(src, "fdef", None), "name", "")) != fname:
        return None
    if any(float(src.attrs.get(k, float("nan"))) != v for k, v in attrs.items()):
        return None
    return src


Fused = dict[int, tuple[str, list[tuple[Any, int]], dict[str, Any]]]


def _fusions(nodes: list[Any], given: Mapping[Any, str]) -> tuple[set[int], Fused]:
    """The functions nnabla has as one that the layer records as several, found by the form of
    their graph: ``F.binary_tanh`` / ``F.binary_sigmoid`` (``(x > 0) * 2 - 1`` or ``x > 0``,
    plus ``s * (c - StopGradient(c))``, ``c`` = ``HardTanh(x)``, ``s`` 1 or 1/2),
    ``F.leaky_relu`` (``x * ((x > 0) * (1 - alpha) + alpha)``) and ``F.squared_error``
    (``d * d``, ``d = x0 - x1``). Only where
    the inner results are used by nothing else and not named. Returns the ids of the inner nodes
    and id of the last node -> (nnabla type, its inputs as (source, output index), its args)."""
    uses: dict[tuple[int, int], int] = {}
    for node in nodes:
        for src, idx in zip(node.srcs, node.idxs):
            if idx >= 0:
                uses[(id(src), idx)] = uses.get((id(src), idx), 0) + 1

    def private(n: Any, count: int) -> bool:
        key = (id(n), 0)
        return len(n.outputs) == 1 and uses.get(key, 0) == count and key not in given

    def same(a: tuple[Any, int], b: tuple[Any, int]) -> bool:
        return a[0] is b[0] and a[1] == b[1]

    inner: set[int] = set()
    fused: Fused = {}
    for node in nodes:
        name = nnabla_name(node)
        ins = list(zip(node.srcs, node.idxs))
        if len(ins) != 2:
            continue
        (p, pi), (q, qi) = ins
        if name == "Add2":  # binary_tanh / binary_sigmoid
            scale = _producer(q, qi, "MulScalar", val=0.5)
            sub = (
                _producer(*ins[1], "Sub2")
                if scale is None
                else _producer(scale.srcs[0], scale.idxs[0], "Sub2")
            )
            if sub is None or min(sub.idxs) < 0:
                continue
            c = _producer(sub.srcs[0], sub.idxs[0], "HardTanh")
            sg = _producer(sub.srcs[1], sub.idxs[1], "StopGradient")
            if c is None or sg is None or sg.srcs[0] is not c or sg.idxs[0] != 0:
                continue
            x = (c.srcs[0], c.idxs[0])
            if scale is not None:
                chain: list[Any] = [_producer(p, pi, "GreaterScalar", val=0.0)]
                kind, counts = "BinarySigmoid", [1]
            else:
                add = _producer(p, pi, "AddScalar", val=-1.0)
                mul = _producer(add.srcs[0], add.idxs[0], "MulScalar", val=2.0) if add else None
                gt = _producer(mul.srcs[0], mul.idxs[0], "GreaterScalar", val=0.0) if mul else None
                chain, kind, counts = [add, mul, gt], "BinaryTanh", [1, 1, 1]
            gt = chain[-1]
            parts = [*chain, c, sg, sub] + ([scale] if scale is not None else [])
            counts = [*counts, 2, 1, 1] + ([1] if scale is not None else [])
            if gt is None or not same((gt.srcs[0], gt.idxs[0]), x):
                continue
            if not all(private(n, k) for n, k in zip(parts, counts)):
                continue
            inner.update(id(n) for n in parts)
            fused[id(node)] = (kind, [x], {})
        elif name == "Mul2" and pi >= 0 and same(ins[0], ins[1]):  # squared_error: d * d
            d = _producer(p, pi, "Sub2")
            if d is None or not private(d, 2):
                continue
            inner.add(id(d))
            fused[id(node)] = ("SquaredError", list(zip(d.srcs, d.idxs)), {})
        elif name == "Mul2" and qi >= 0:  # leaky_relu: x * AddScalar(MulScalar(x > 0))
            add = _producer(q, qi, "AddScalar")
            mul = _producer(add.srcs[0], add.idxs[0], "MulScalar") if add else None
            gt = _producer(mul.srcs[0], mul.idxs[0], "GreaterScalar", val=0.0) if mul else None
            if add is None or mul is None or gt is None:
                continue
            if not same((gt.srcs[0], gt.idxs[0]), (p, pi)):
                continue
            alpha = float(add.attrs["val"])
            if abs(float(mul.attrs["val"]) - (1.0 - alpha)) > 1e-12:
                continue
            if not all(private(n, 1) for n in (add, mul, gt)):
                continue
            inner.update((id(add), id(mul), id(gt)))
            fused[id(node)] = ("LeakyReLU", [(p, pi)], {"alpha": alpha})
    return inner, fused


def _shape_of(src: Any, idx: int) -> tuple[int, ...]:
    """The shape of input ``(src, idx)`` of a node: a leaf Variable's, or a node's output."""
    return tuple(src.shape) if idx < 0 else tuple(src.out_shapes[idx])


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
    nodes = _visit_order(collect_graph([v for _, v in outs if v._creator is not None]), outs)
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

    inner, fused = _fusions(nodes, given)
    binary_weights: dict[tuple[int, int], tuple[str, list[Any], dict[str, Any]]] = {}
    for node in nodes:
        fname = nnabla_name(node)
        if id(node) in inner:  # written as part of a BinaryTanh / BinarySigmoid
            continue
        view = FunctionView(node)
        if fname in ("BinaryConnectWeight", "BinaryWeightWeight"):
            wsrcs = list(zip(node.srcs, node.idxs))
            binary_weights[(id(node), 0)] = (fname, wsrcs, dict(node.attrs))
            continue
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
        if id(node) in fused:
            fname, srcs, args = fused[id(node)]
            in_shapes = [tuple(_shape_of(src, idx)) for src, idx in srcs]
        w_key = (id(srcs[1][0]), srcs[1][1]) if len(srcs) > 1 and srcs[1][1] >= 0 else None
        if fname in ("Convolution", "Affine") and w_key in binary_weights:
            wname, wsrcs, wattrs = binary_weights[w_key]  # type: ignore[index]
            fname = wname[: -len("Weight")] + fname  # BinaryConnect..., BinaryWeight...
            srcs = [srcs[0], *wsrcs, *srcs[2:]]
            args = dict(args, quantize_zero_to=float(wattrs.get("quantize_zero_to", 1.0)))
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
                if key in binary_weights:
                    raise NotImplementedError(
                        f"{where}: a binary weight used other than by a convolution or affine "
                        f"({DOCS})"
                    )
                if key not in var_names:
                    raise NotImplementedError(
                        f"{where}: an intermediate of F.binary_tanh/binary_sigmoid used by "
                        f"another function ({DOCS})"
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


def _binary_inplace(fn: str) -> Reader:
    return lambda F, xs, p, b: getattr(F, fn)(xs[0], xs[1], inplace=bool(p.inplace))


def _unary(fn: str) -> Reader:
    return lambda F, xs, p, b: getattr(F, fn)(xs[0])


def _scalar(fn: str) -> Reader:
    if fn in ("add_scalar", "mul_scalar", "pow_scalar"):  # (nnabla's inplace flag kept)
        return lambda F, xs, p, b: getattr(F, fn)(xs[0], p.val, inplace=bool(p.inplace))
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
    "BinaryConnectConvolution": lambda F, xs, p, b: F.binary_connect_convolution(
        *xs[:3],
        _opt(xs, 3),
        p.base_axis,
        _dims(p.pad),
        _dims(p.stride),
        _dims(p.dilation),
        p.group or 1,
        p.quantize_zero_to,
    ),
    "BinaryWeightConvolution": lambda F, xs, p, b: F.binary_weight_convolution(
        *xs[:4],
        _opt(xs, 4),
        p.base_axis,
        _dims(p.pad),
        _dims(p.stride),
        _dims(p.dilation),
        p.group or 1,
        p.quantize_zero_to,
    ),
    "BinaryConnectAffine": lambda F, xs, p, b: F.binary_connect_affine(
        *xs[:3], _opt(xs, 3), p.base_axis, p.quantize_zero_to
    ),
    "BinaryWeightAffine": lambda F, xs, p, b: F.binary_weight_affine(
        *xs[:4], _opt(xs, 4), p.base_axis, p.quantize_zero_to
    ),
    "BinaryTanh": lambda F, xs, p, b: F.binary_tanh(xs[0]),
    "BinarySigmoid": lambda F, xs, p, b: F.binary_sigmoid(xs[0]),
    "RoiAlign": lambda F, xs, p, b: F.roi_align(
        xs[0],
        xs[1],
        _dims(p.output_size),
        list(p.spatial_scale) or [1.0, 1.0],
        p.sampling_ratio,
        p.channel_last,
    ),
    "ONNXResize": lambda F, xs, p, b: F.onnx_resize(
        xs[0],
        list(p.roi),
        list(p.scales),
        _ints(p.sizes),
        p.mode or "nearest",
        p.coordinate_transformation_mode or "half_pixel",
        p.cubic_coeff_a,
        p.exclude_outside,
        p.extrapolation_value,
        p.nearest_mode or "round_prefer_floor",
    ),
    # nnabla's PatchCorrelation function is F.patch_correlation on NHWC inputs
    "PatchCorrelation": lambda F, xs, p, b: F.patch_correlation(
        xs[0],
        xs[1],
        _dims(p.patch),
        _dims(p.shift),
        _dims(p.patch_step),
        _dims(p.shift_step),
        _dims(p.padding),
        channel_last=True,
    ),
    "AdaptiveSeparableConvolution": lambda F, xs, p, b: F.adaptive_separable_convolution(
        xs[0], xs[1], xs[2]
    ),
}
for _t, _f in (
    ("Add2", "add2"),
    ("BcAdd2", "bc_add2"),
    ("Sub2", "sub2"),
    ("Mul2", "mul2"),
    ("Div2", "div2"),
    ("Pow2", "pow2"),
):
    READERS[_t] = _binary_inplace(_f)
for _t, _f in (
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
for _t in _SCALAR_FUNCTIONS:
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
