"""Writes ``deconvolution_symbol_reference.json`` (next to this script) with mxnet 1.9.1: run
``MXNET_MKLDNN_ENABLED=0 python make_deconvolution_symbol_reference.py`` in an environment with
mxnet 1.9.1 (not gradhub; oneDNN's kernel refuses the dilated case, mxnet's own kernel runs it).

For each case of :data:`CASES`, ``mx.sym.Deconvolution(x, name="dc", **options)`` bound by
``simple_bind`` on ``X`` (``np.random.RandomState(0).randn(2, 4, 4, 5)``, its first column for
the 1-D case), the weight and bias from ``np.random.RandomState(1).randn`` in argument order,
then the head gradient from the same generator: the argument names, their inferred shapes, the
output shape, the node's JSON attributes, the output and the gradients of every argument.
tests/compat/mxnet/test_deconvolution_symbol.py builds the same inputs.
"""

from __future__ import annotations

import json
import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = {
    "basic": {"kernel": (3, 3), "num_filter": 4},
    "stride_pad_adj": {
        "kernel": (4, 3),
        "stride": (2, 3),
        "pad": (1, 1),
        "adj": (1, 2),
        "num_filter": 2,
        "no_bias": False,
    },
    "target": {"kernel": (4, 4), "stride": (2, 2), "target_shape": (9, 8), "num_filter": 3},
    "group": {
        "kernel": (3, 2),
        "stride": (1, 2),
        "num_filter": 6,
        "num_group": 2,
        "no_bias": False,
    },
    "dil": {"kernel": (3, 2), "stride": (1, 2), "dilate": (2, 1), "num_filter": 3},
    "1d": {"kernel": (3,), "stride": (2,), "pad": (1,), "num_filter": 3, "no_bias": False},
}


def main() -> dict:
    x0 = np.random.RandomState(0).randn(2, 4, 4, 5).astype(np.float32)
    res = {}
    for name, kw in CASES.items():
        d = mx.sym.Deconvolution(mx.sym.var("x"), name="dc", **kw)
        xv = x0[:, :, :, 0] if name == "1d" else x0
        args, outs, _ = d.infer_shape(x=xv.shape)
        rs = np.random.RandomState(1)
        ex = d.simple_bind(mx.cpu(), x=xv.shape)
        for n, s in zip(d.list_arguments(), args):
            ex.arg_dict[n][:] = xv if n == "x" else rs.randn(*s).astype(np.float32)
        o = ex.forward(is_train=True)[0]
        ex.backward(mx.nd.array(rs.randn(*o.shape).astype(np.float32)))
        res[name] = {
            "args": d.list_arguments(),
            "shapes": [list(a) for a in args],
            "out": list(outs[0]),
            "attrs": json.loads(d.tojson())["nodes"][-1].get("attrs"),
            "y": o.asnumpy().tolist(),
            "grads": {n: ex.grad_dict[n].asnumpy().tolist() for n in d.list_arguments()},
        }
    return res


if __name__ == "__main__":
    with open(
        os.path.join(HERE, "deconvolution_symbol_reference.json"), "w", encoding="utf-8"
    ) as f:
        json.dump(main(), f)
