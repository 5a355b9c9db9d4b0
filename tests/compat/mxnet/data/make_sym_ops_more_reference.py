"""Writes ``sym_ops_more_reference.json`` and ``sym_ops_more_reference.npz`` (next to this
script) with mxnet 1.9.1: run ``python make_sym_ops_more_reference.py`` in an environment with
mxnet 1.9.1 (not gradhub).

Case ``k`` of :data:`CASES` (in order) builds ``mx.sym.<fn>(*inputs, name="n", **kwargs)``
(without ``name`` for ``hypot``/``pow``/``power``, whose Python wrappers take none) on the
variables ``x0``, ``x1``... of its inputs (an input of shape ``()`` is the number its kind
spells), binds it with the float32 inputs of :func:`make_input`, input ``i`` from
``np.random.RandomState(10 * k + i)`` (``kind``: ``"n"`` normal, ``"u"`` uniform in
(-0.9, 0.9), ``"p"`` uniform in (0.5, 2), ``"g"`` uniform in (1.2, 3), ``"s"`` distinct values
(a permutation), ``"l"`` lengths in [1, 4], ``"iK"`` integers in [0, K)), runs forward in
training and, where the case asks for gradients, backward with the head gradient ``randn`` of
seed ``10 * k + 100`` (gradients of the inputs of kind ``n``/``u``/``p``/``g``, the others
``grad_req="null"``). The JSON holds per case the arguments, output names, ``infer_shape``,
the output dtype, the JSON nodes (op, attrs) and the whole JSON text; the npz holds
``<id>/x<i>``, ``<id>/out``, ``<id>/head`` and ``<id>/grad_x<i>``.
tests/compat/mxnet/test_symbol_ops_more.py reads both.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

_UNARY = {
    "arccos": "u",
    "arcsin": "u",
    "arctan": "n",
    "arctanh": "u",
    "arcsinh": "n",
    "arccosh": "g",
    "cosh": "n",
    "sinh": "n",
    "tan": "u",
    "cbrt": "n",
    "rcbrt": "p",
    "ceil": "n",
    "floor": "n",
    "fix": "n",
    "rint": "n",
    "round": "n",
    "trunc": "n",
    "degrees": "n",
    "radians": "n",
    "erf": "n",
    "erfinv": "u",
    "expm1": "n",
    "log10": "p",
    "log1p": "p",
    "log2": "p",
    "gamma": "p",
    "gammaln": "p",
    "reciprocal": "p",
    "rsqrt": "p",
    "negative": "n",
    "sign": "n",
    "softsign": "n",
    "ones_like": "n",
    "zeros_like": "n",
}
_COMPARE = (
    "broadcast_equal broadcast_not_equal broadcast_greater broadcast_greater_equal "
    "broadcast_lesser broadcast_lesser_equal broadcast_logical_and broadcast_logical_or "
    "broadcast_logical_xor"
).split()

#: (id, fn, inputs [(shape, kind)], kwargs, gradients?)
CASES: list[tuple[str, str, list, dict, bool]] = [
    *[(u, u, [((2, 3), k)], {}, True) for u, k in _UNARY.items()],
    *[(c, c, [((2, 3), "i3"), ((1, 3), "i3")], {}, False) for c in _COMPARE],
    ("hard_sigmoid", "hard_sigmoid", [((2, 5), "n")], {"alpha": 0.3, "beta": 0.4}, True),
    ("smooth_l1", "smooth_l1", [((2, 5), "n")], {"scalar": 2.0}, True),
    ("l2norm", "L2Normalization", [((2, 3, 4), "n")], {"mode": "channel"}, True),
    ("l2norm_inst", "L2Normalization", [((2, 3, 4), "n")], {}, True),
    (
        "seqmask",
        "SequenceMask",
        [((4, 2, 3), "n"), ((2,), "l")],
        {"use_sequence_length": True, "value": -1.0},
        True,
    ),
    (
        "seqlast",
        "SequenceLast",
        [((4, 2, 3), "n"), ((2,), "l")],
        {"use_sequence_length": True},
        True,
    ),
    ("seqlast_plain", "SequenceLast", [((4, 2, 3), "n")], {}, True),
    (
        "seqrev",
        "SequenceReverse",
        [((4, 2, 3), "n"), ((2,), "l")],
        {"use_sequence_length": True},
        True,
    ),
    ("argmax", "argmax", [((3, 4), "s")], {"axis": 1}, False),
    ("argmin_keep", "argmin", [((3, 4), "s")], {"axis": 0, "keepdims": True}, False),
    ("argmax_channel", "argmax_channel", [((3, 4), "s")], {}, False),
    ("argsort", "argsort", [((3, 4), "s")], {"is_ascend": False}, False),
    ("sort", "sort", [((3, 4), "s")], {"axis": 0}, True),
    ("topk_idx", "topk", [((3, 5), "s")], {"k": 2}, False),
    ("topk_val", "topk", [((3, 5), "s")], {"k": 3, "ret_typ": "value", "axis": 0}, True),
    ("batch_dot", "batch_dot", [((2, 3, 4), "n"), ((2, 5, 4), "n")], {"transpose_b": True}, True),
    ("broadcast_axis", "broadcast_axis", [((2, 1, 3), "n")], {"axis": 1, "size": 4}, True),
    ("broadcast_to", "broadcast_to", [((2, 1, 3), "n")], {"shape": (2, 4, 3)}, True),
    ("broadcast_like", "broadcast_like", [((1, 3), "n"), ((4, 3), "n")], {}, True),
    ("cast", "cast", [((2, 3), "n")], {"dtype": "float64"}, False),
    ("flip", "flip", [((2, 3, 4), "n")], {"axis": 1}, True),
    ("reverse", "reverse", [((2, 3), "n")], {"axis": 0}, True),
    ("max", "max", [((3, 4), "s")], {"axis": 1}, True),
    ("min_keep", "min", [((3, 4), "s")], {"axis": 0, "keepdims": True}, True),
    ("prod", "prod", [((3, 4), "p")], {"axis": 1}, True),
    ("nansum", "nansum", [((3, 4), "n")], {}, True),
    ("nanprod", "nanprod", [((3, 4), "p")], {"axis": 0}, True),
    ("norm", "norm", [((3, 4), "n")], {}, True),
    ("norm_axis", "norm", [((3, 4), "n")], {"axis": 1, "ord": 1}, True),
    ("one_hot", "one_hot", [((4,), "i3")], {"depth": 3}, False),
    ("repeat", "repeat", [((2, 3), "n")], {"repeats": 2, "axis": 1}, True),
    ("tile", "tile", [((2, 3), "n")], {"reps": (2, 1, 2)}, True),
    ("shape_array", "shape_array", [((2, 3), "n")], {}, False),
    ("size_array", "size_array", [((2, 3), "n")], {}, False),
    ("slice", "slice", [((4, 5), "n")], {"begin": (1, None), "end": (3, None)}, True),
    (
        "slice_step",
        "slice",
        [((4, 5), "n")],
        {"begin": (0, 4), "end": (4, 0), "step": (2, -2)},
        True,
    ),
    ("slice_axis", "slice_axis", [((4, 5), "n")], {"axis": 1, "begin": 1, "end": -1}, True),
    ("slice_like", "slice_like", [((4, 5), "n"), ((2, 3), "n")], {"axes": (1,)}, True),
    ("squeeze", "squeeze", [((2, 1, 3, 1), "n")], {}, True),
    ("squeeze_axis", "squeeze", [((2, 1, 3, 1), "n")], {"axis": 1}, True),
    ("stack", "stack", [((2, 3), "n"), ((2, 3), "n")], {"axis": 1}, True),
    ("add_n", "add_n", [((2, 3), "n"), ((2, 3), "n"), ((2, 3), "n")], {}, True),
    ("elementwisesum", "ElementWiseSum", [((2, 3), "n"), ((2, 3), "n")], {}, True),
    ("sum_axis", "sum_axis", [((2, 3), "n")], {"axis": 1}, True),
    ("take", "take", [((4, 3), "n"), ((2, 2), "i4")], {}, True),
    ("take_wrap", "take", [((4, 3), "n"), ((3,), "i5")], {"axis": 1, "mode": "wrap"}, True),
    (
        "gemm2",
        "linalg_gemm2",
        [((2, 3), "n"), ((4, 3), "n")],
        {"transpose_b": True, "alpha": 2.0},
        True,
    ),
    ("hypot", "hypot", [((2, 3), "n"), ((2, 3), "n")], {}, True),
    ("pow", "pow", [((2, 3), "p"), ((2, 3), "n")], {}, True),
    ("power_scalar", "power", [((2, 3), "p"), ((), "3.0")], {}, True),
    (
        "rnn_lstm",
        "RNN",
        [((4, 2, 5), "n"), ((216,), "n"), ((2, 2, 3), "n"), ((2, 2, 3), "n")],
        {"state_size": 3, "num_layers": 2, "mode": "lstm"},
        True,
    ),
    (
        "rnn_gru_bi",
        "RNN",
        [((4, 2, 5), "n"), ((378,), "n"), ((4, 2, 3), "n")],
        {"state_size": 3, "num_layers": 2, "mode": "gru", "bidirectional": True},
        True,
    ),
    (
        "rnn_relu",
        "RNN",
        [((3, 2, 4), "n"), ((16,), "n"), ((1, 2, 2), "n")],
        {"state_size": 2, "num_layers": 1, "mode": "rnn_relu"},
        True,
    ),
    ("arange", "arange", [], {"start": 1, "stop": 7, "step": 2}, False),
    ("arange_repeat", "arange", [], {"start": 3, "repeat": 2}, False),
    ("linspace", "linspace", [], {"start": 0, "stop": 1, "num": 5}, False),
    ("full", "full", [], {"shape": (2, 3), "val": 1.5}, False),
    ("ones", "ones", [], {"shape": (2, 3)}, False),
    ("zeros", "zeros", [], {"shape": (3,), "dtype": "float64"}, False),
    ("hypot_scalar", "hypot", [((2, 3), "n"), ((), "3.0")], {}, True),
    ("hypot_rscalar", "hypot", [((), "2.5"), ((2, 3), "n")], {}, True),
]


def make_input(shape: tuple[int, ...], kind: str, seed: int) -> np.ndarray:
    g = np.random.RandomState(seed)
    v: Any
    if kind == "n":
        v = g.randn(*shape)
    elif kind == "u":
        v = g.uniform(-0.9, 0.9, shape)
    elif kind == "p":
        v = g.uniform(0.5, 2.0, shape)
    elif kind == "g":
        v = g.uniform(1.2, 3.0, shape)
    elif kind == "s":
        v = g.permutation(int(np.prod(shape))).reshape(shape) * 0.5 - 1.0
    elif kind == "l":
        v = g.randint(1, 5, shape)
    else:
        v = g.randint(0, int(kind[1:]), shape)
    return np.asarray(v, dtype=np.float32)


def build(fn: str, syms: list, kwargs: dict):
    f = mx.sym
    for part in fn.split("."):
        f = getattr(f, part)
    if fn in ("hypot", "pow", "power"):  # (mxnet's Python wrappers take no name)
        return f(*syms, **kwargs)
    return f(*syms, name="n", **kwargs)


def write_reference(
    cases: list[Any],
    make_input: Callable[[tuple[int, ...], str, int], np.ndarray],
    diff_kinds: Sequence[str],
    stem: str,
) -> None:
    """Run ``cases`` (``(id, fn, inputs, kwargs, grads)``) with inputs from ``make_input``
    (gradients of the inputs whose kind is in ``diff_kinds``) and write ``<stem>.json`` and
    ``<stem>.npz`` next to this script."""
    meta: dict[str, Any] = {}
    arrays: dict[str, Any] = {}
    for cid, fn, inputs, kwargs, grads in cases:
        syms, vals = [], []
        for i, (shape, kind) in enumerate(inputs):
            if shape == ():  # a number operand
                syms.append(float(kind))
                continue
            syms.append(mx.sym.var(f"x{i}"))
            vals.append((f"x{i}", make_input(shape, kind, 10 * len(meta) + i), kind))
        sym = build(fn, syms, kwargs)
        shapes = {n: v.shape for n, v, _ in vals}
        arg_shapes, out_shapes, _ = sym.infer_shape(**shapes)
        args = {n: mx.nd.array(v) for n, v, _ in vals}
        diff = [n for n, _, k in vals if k in diff_kinds and grads]
        arg_grads = {n: mx.nd.zeros(args[n].shape) for n in diff}
        reqs = {n: ("write" if n in diff else "null") for n in args}
        ex = sym.bind(mx.cpu(), args, args_grad=arg_grads, grad_req=reqs)
        out = ex.forward(is_train=True)[0]
        for n, v, _ in vals:
            arrays[f"{cid}/{n}"] = v
        arrays[f"{cid}/out"] = out.asnumpy()
        if diff:
            head = np.random.RandomState(10 * len(meta) + 100).randn(*out.shape).astype(out.dtype)
            ex.backward([mx.nd.array(head, dtype=out.dtype)])
            arrays[f"{cid}/head"] = head
            for n in diff:
                arrays[f"{cid}/grad_{n}"] = arg_grads[n].asnumpy()
        graph = json.loads(sym.tojson())
        meta[cid] = {
            "fn": fn,
            "inputs": [[list(s), k] for s, k in inputs],
            "kwargs": {k: list(v) if isinstance(v, tuple) else v for k, v in kwargs.items()},
            "arguments": sym.list_arguments(),
            "outputs": sym.list_outputs(),
            "arg_shapes": [list(s) for s in arg_shapes],
            "out_shapes": [list(s) for s in out_shapes],
            "out_dtype": np.dtype(out.dtype).name,
            "grads": diff,
            "nodes": [[n["op"], n.get("attrs", {})] for n in graph["nodes"] if n["op"] != "null"],
            "json": sym.tojson(),
        }
    with open(os.path.join(HERE, f"{stem}.json"), "w") as f:
        json.dump({"mxnet": mx.__version__, "cases": meta}, f, sort_keys=True)
    np.savez_compressed(os.path.join(HERE, f"{stem}.npz"), **arrays)


def main() -> None:
    write_reference(CASES, make_input, ("n", "u", "p", "g"), "sym_ops_more_reference")


if __name__ == "__main__":
    main()
