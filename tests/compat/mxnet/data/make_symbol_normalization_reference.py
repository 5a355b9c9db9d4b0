"""Writes ``normnet-symbol.json``, ``normnet-0000.params`` and
``symbol_normalization_reference.json`` (next to this script) with mxnet 1.9.1: run
``python make_symbol_normalization_reference.py`` in an environment with mxnet 1.9.1 (not
gradhub).

``normnet``: :func:`net` (``gluon.nn.HybridSequential(prefix="net_")`` of ``ReflectionPad2D(1)``,
``LayerNorm()``, ``GroupNorm(num_groups=2)``, ``InstanceNorm(scale=True)``), each parameter set
to ``np.random.RandomState(10 + k).randn`` (``k``: its position in ``collect_params()``),
hybridized, run once on the data ``np.random.RandomState(0).randn(2, 4, 3, 3)`` and exported;
the reference holds its output (``"net"``).

``"ops"``: for each case of :data:`CASES`, the symbol ``mx.sym.<op>(mx.sym.var("x"), name="n",
**kwargs)`` bound by ``simple_bind`` with every argument from ``np.random.RandomState(seed)``
(in argument order), run forward in training and backward with one head gradient per output from
the same generator: the argument names, the inferred shapes, the output names and shapes, the
JSON node (op, attrs) and ``node_row_ptr``, the outputs and the gradients.
tests/compat/mxnet/test_symbol_normalization.py builds the same inputs.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

mx: Any = None  # mxnet, imported when the script runs (the tests import CASES without it)

HERE = os.path.dirname(os.path.abspath(__file__))

#: (name, operator, data shape, seed, keyword arguments)
CASES: list[tuple[Any, ...]] = [
    ("ln", "LayerNorm", (2, 3, 4), 0, {}),
    ("ln_axis1_stats", "LayerNorm", (2, 3, 4), 1,
     {"axis": 1, "eps": 1e-3, "output_mean_var": True}),
    ("in", "InstanceNorm", (2, 3, 2, 2), 2, {}),
    ("gn", "GroupNorm", (2, 4, 3), 3, {"num_groups": 2}),
    ("gn_stats", "GroupNorm", (2, 6, 2, 2), 4,
     {"num_groups": 3, "eps": 1e-3, "output_mean_var": True}),
    ("pad_reflect", "pad", (1, 2, 3, 4), 5,
     {"mode": "reflect", "pad_width": (0, 0, 0, 0, 1, 2, 2, 1)}),
    ("pad_edge", "pad", (1, 2, 2, 2, 3), 6,
     {"mode": "edge", "pad_width": (0, 0, 0, 0, 1, 0, 0, 2, 1, 1)}),
    ("pad_constant", "pad", (1, 1, 2, 3), 7,
     {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 1, 0, 2), "constant_value": 1.5}),
]  # fmt: skip


def net() -> Any:
    from mxnet.gluon import nn

    seq = nn.HybridSequential(prefix="net_")
    with seq.name_scope():
        seq.add(
            nn.ReflectionPad2D(1),
            nn.LayerNorm(),
            nn.GroupNorm(num_groups=2),
            nn.InstanceNorm(scale=True),
        )
    return seq


def run_case(op: str, dshape: tuple, seed: int, kw: dict) -> dict:
    s = getattr(mx.sym, op)(mx.sym.var("x"), name="n", **kw)
    args, outs, _ = s.infer_shape(x=dshape)
    rs = np.random.RandomState(seed)
    ex = s.simple_bind(mx.cpu(), x=dshape)
    for n, shape in zip(s.list_arguments(), args):
        ex.arg_dict[n][:] = rs.randn(*shape).astype(np.float32)
    ys = ex.forward(is_train=True)
    heads = [mx.nd.array(rs.randn(*o).astype(np.float32)) for o in outs]
    ex.backward(heads)
    graph = json.loads(s.tojson())
    return {
        "args": s.list_arguments(),
        "shapes": [list(a) for a in args],
        "outputs": s.list_outputs(),
        "out_shapes": [list(o) for o in outs],
        "op": graph["nodes"][-1]["op"],
        "attrs": graph["nodes"][-1].get("attrs"),
        "node_row_ptr": graph["node_row_ptr"],
        "y": [y.asnumpy().tolist() for y in ys],
        "grads": {n: ex.grad_dict[n].asnumpy().tolist() for n in s.list_arguments()},
    }


def main() -> dict:
    global mx
    import mxnet  # type: ignore[import-not-found]

    mx = mxnet
    seq = net()
    seq.initialize()
    x = mx.nd.array(np.random.RandomState(0).randn(2, 4, 3, 3).astype(np.float32))
    seq(x)  # (deferred initialization)
    for k, p in enumerate(seq.collect_params().values()):
        p.set_data(mx.nd.array(np.random.RandomState(10 + k).randn(*p.shape).astype(np.float32)))
    seq.hybridize()
    y = seq(x)
    seq.export(os.path.join(HERE, "normnet"))
    ops = {name: run_case(op, shape, seed, kw) for name, op, shape, seed, kw in CASES}
    return {"net": y.asnumpy().tolist(), "ops": ops}


if __name__ == "__main__":
    with open(
        os.path.join(HERE, "symbol_normalization_reference.json"), "w", encoding="utf-8"
    ) as f:
        json.dump(main(), f)
