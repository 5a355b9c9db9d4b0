"""Writes ``normalization_reference.json`` (next to this script) with mxnet 1.9.1: run
``python make_normalization_reference.py`` in an environment with mxnet 1.9.1 (not gradhub).

Each case of :data:`CASES` runs one operator (``LayerNorm``, ``InstanceNorm``, ``GroupNorm``)
on the float32 inputs ``np.random.RandomState(seed).randn(*shape)`` (data, then gamma, then
beta, each from its own seed: ``seed``, ``seed + 1``, ``seed + 2``), recorded and
backpropagated with the head gradient ``randn`` of seed ``seed + 3``: ``{"outputs": [...],
"grads": [data, gamma, beta]}``. ``bnrelu``: ``gluon.nn.BatchNormReLU`` on the data of seed 7
(shape (2, 3, 2, 2)) in training (output, data gradient of ``sum(out * head)``, running
statistics after the backward pass) and then outside training. ``pad``: ``mx.nd.pad`` of the data
of seed 0 (shape (1, 2, 3, 3)) for each mode of :data:`PADS`, with the head gradient of seed 1:
``[output, data gradient]``. tests/compat/mxnet/
test_normalization_layers.py builds the same inputs.
"""

from __future__ import annotations

import json
import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

#: (name, operator, data shape, gamma/beta shape, seed, keyword arguments)
CASES = [
    ("ln_last", "LayerNorm", (2, 3, 4), (4,), 0, {}),
    ("ln_axis1", "LayerNorm", (2, 3, 4), (3,), 10, {"axis": 1, "eps": 1e-3}),
    ("ln_axis0_stats", "LayerNorm", (3, 2), (3,), 20, {"axis": 0, "output_mean_var": True}),
    ("ln_stats", "LayerNorm", (2, 5), (5,), 30, {"output_mean_var": True}),
    ("in_4d", "InstanceNorm", (2, 3, 4, 5), (3,), 40, {}),
    ("in_3d_eps", "InstanceNorm", (2, 3, 5), (3,), 50, {"eps": 1e-5}),
    ("gn_2", "GroupNorm", (2, 4, 3, 3), (2,), 60, {"num_groups": 2}),
    ("gn_1", "GroupNorm", (3, 2, 4), (1,), 70, {}),
    ("gn_4_stats", "GroupNorm", (2, 4, 3), (4,), 80, {"num_groups": 4, "output_mean_var": True}),
    ("gn_3d", "GroupNorm", (2, 6, 2), (3,), 90, {"num_groups": 3, "eps": 1e-3}),
]

#: (mode, pad_width, constant_value) of ``mx.nd.pad``
PADS = [
    ("reflect", (0, 0, 0, 0, 1, 2, 2, 1), 0.0),
    ("edge", (0, 0, 0, 0, 2, 0, 1, 3), 0.0),
    ("constant", (0, 0, 0, 0, 1, 1, 0, 2), 5.0),
]


def randn(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def run_case(op: str, dshape: tuple[int, ...], pshape: tuple[int, ...], seed: int, kw: dict):
    arrays = [mx.nd.array(randn(seed + i, s)) for i, s in enumerate((dshape, pshape, pshape))]
    for a in arrays:
        a.attach_grad()
    head = mx.nd.array(randn(seed + 3, dshape))
    with mx.autograd.record():
        out = getattr(mx.nd, op)(*arrays, **kw)
        first = out[0] if isinstance(out, (list, tuple)) else out
        loss = (first * head).sum()
    loss.backward()
    outs = out if isinstance(out, (list, tuple)) else [out]
    return {
        "outputs": [o.asnumpy().tolist() for o in outs],
        "grads": [a.grad.asnumpy().tolist() for a in arrays],
    }


def bnrelu() -> dict:
    x = mx.nd.array(randn(7, (2, 3, 2, 2)))
    x.attach_grad()
    head = mx.nd.array(randn(8, (2, 3, 2, 2)))
    net = mx.gluon.nn.BatchNormReLU(in_channels=3)
    net.initialize()
    net.gamma.set_data(mx.nd.array([0.5, 1.5, -1.0]))
    net.beta.set_data(mx.nd.array([0.1, -0.2, 0.3]))
    with mx.autograd.record():
        y = net(x)
        loss = (y * head).sum()
    loss.backward()
    return {
        "train": y.asnumpy().tolist(),
        "grad": x.grad.asnumpy().tolist(),
        "gamma_grad": net.gamma.grad().asnumpy().tolist(),
        "running_mean": net.running_mean.data().asnumpy().tolist(),
        "running_var": net.running_var.data().asnumpy().tolist(),
        "predict": net(x).asnumpy().tolist(),
    }


def pads() -> list:
    res = []
    for mode, width, value in PADS:
        x = mx.nd.array(randn(0, (1, 2, 3, 3)))
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.pad(x, mode=mode, pad_width=width, constant_value=value)
            loss = (y * mx.nd.array(randn(1, y.shape))).sum()
        loss.backward()
        res.append([y.asnumpy().tolist(), x.grad.asnumpy().tolist()])
    return res


def main() -> None:
    ref = {name: run_case(op, d, p, s, kw) for name, op, d, p, s, kw in CASES}
    ref["bnrelu"] = bnrelu()
    ref["pad"] = pads()
    path = os.path.join(HERE, "normalization_reference.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(ref, f)
        f.write("\n")


if __name__ == "__main__":
    main()
