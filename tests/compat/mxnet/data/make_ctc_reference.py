"""Writes ``ctc_reference.json`` (next to this script) with mxnet 1.9.1: run
``python make_ctc_reference.py`` in an environment with mxnet 1.9.1 (not gradhub).

``nd_cases``: ``mx.nd.CTCLoss`` of the activations ``X`` (6 steps, 3 sequences, 5 classes,
``np.random.RandomState(0).randn``) for the labels and options of :data:`ND_CASES`, recorded
and backpropagated with the head gradient ``head`` (ones when None): ``[loss, data gradient]``.
``gluon_cases``: ``gluon.loss.CTCLoss`` (blank last) on NDArrays and on Symbols (bound by
``simple_bind``, forward and backward run twice), each with the head gradient ``1, 2, 3``:
``[loss, pred gradient]``; ``fit``: ``[fc_weight, fc_bias, score]`` after ``Module.fit`` (3
epochs of SGD, learning rate 0.1) of ``make_loss(CTCLoss()(FullyConnected(data, 5,
flatten=False), label))``. tests/compat/mxnet/test_ctc_loss.py builds the same inputs.
"""

from __future__ import annotations

import json
import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

#: (labels, head gradient, keyword arguments of CTCLoss)
ND_CASES = [
    ([[1, 2, 2, 0], [3, 0, 0, 0], [4, 4, 4, 4]], [1.0, 0.5, 2.0], {}),
    (
        [[1, 2, 2, 0], [3, 0, 0, 0], [4, 4, 4, 4]],
        None,
        {"data_lengths": [6, 4, 2], "use_data_lengths": True},
    ),
    ([[0, 1, 1, -1], [2, -1, -1, -1], [3, 3, -1, -1]], None, {"blank_label": "last"}),
    (
        [[0, 1, 1, -1], [2, -1, -1, -1], [3, 3, -1, -1]],
        None,
        {"label_lengths": [2, 1, 1], "use_label_lengths": True, "blank_label": "last"},
    ),
    (
        [[0, 1, 1, -1], [2, -1, -1, -1], [3, 3, -1, -1]],
        None,
        {
            "label_lengths": [3, 0, 2],
            "use_label_lengths": True,
            "data_lengths": [5, 6, 3],
            "use_data_lengths": True,
            "blank_label": "last",
        },
    ),
    ([[1, 1, 1, 1], [2, 3, 2, 3], [0, 0, 0, 0]], None, {}),
]


def nd_cases() -> list:
    x0 = np.random.RandomState(0).randn(6, 3, 5).astype(np.float32)
    out = []
    for lab, head, kw in ND_CASES:
        x = mx.nd.array(x0)
        x.attach_grad()
        kw = {k: mx.nd.array(v) if isinstance(v, list) else v for k, v in kw.items()}
        with mx.autograd.record():
            loss = mx.nd.CTCLoss(x, mx.nd.array(lab), **kw)
        loss.backward(None if head is None else mx.nd.array(head))
        out.append([loss.asnumpy().tolist(), x.grad.asnumpy().tolist()])
    return out


def gluon_inputs() -> dict[str, np.ndarray]:
    rs = np.random.RandomState(3)
    d = {
        "P": rs.randn(3, 7, 5).astype(np.float32),
        "LAB": np.array([[0, 1, 1, -1], [2, 3, -1, -1], [3, 2, 1, 0]], np.float32),
        "PL": np.array([7, 5, 6], np.float32),
        "LL": np.array([3, 1, 4], np.float32),
        "SW": np.array([1.0, 0.5, 2.0], np.float32),
    }
    d["X"] = rs.uniform(-1, 1, (6, 7, 4)).astype(np.float32)
    d["Y"] = np.array(
        [[0, 1, -1], [1, 1, 2], [2, -1, -1], [0, 2, 1], [3, 3, -1], [1, 0, 3]], np.float32
    )
    d["W0"] = rs.uniform(-0.5, 0.5, (5, 4)).astype(np.float32)
    return d


def gluon_cases() -> dict:
    d = gluon_inputs()
    loss_cls = mx.gluon.loss.CTCLoss
    res = {}

    def nd_case(loss, pred, lab, *extra):
        x = mx.nd.array(pred)
        x.attach_grad()
        with mx.autograd.record():
            out = loss(x, mx.nd.array(lab), *[None if e is None else mx.nd.array(e) for e in extra])
        out.backward(mx.nd.array(np.arange(1, out.shape[0] + 1, dtype=np.float32)))
        return [out.asnumpy().tolist(), x.grad.asnumpy().tolist()]

    def sym_case(loss, arrays, names):
        out = loss(*[mx.sym.var(n) for n in names])
        ex = out.simple_bind(
            mx.cpu(), grad_req={"pred": "write"}, **{k: arrays[k].shape for k in names}
        )
        for k in names:
            ex.arg_dict[k][:] = arrays[k]
        for _ in range(2):
            o = ex.forward(is_train=True)[0]
            ex.backward(mx.nd.array(np.arange(1, o.shape[0] + 1, dtype=np.float32)))
        return [o.asnumpy().tolist(), ex.grad_dict["pred"].asnumpy().tolist()]

    p, lab = d["P"], d["LAB"]
    res["ntc"] = nd_case(loss_cls(), p, lab)
    res["tnc_tn"] = nd_case(loss_cls(layout="TNC", label_layout="TN"), p.transpose(1, 0, 2), lab.T)
    res["lengths"] = nd_case(loss_cls(weight=0.5), p, lab, d["PL"], d["LL"], d["SW"])
    res["pred_len_only"] = nd_case(loss_cls(), p, lab, d["PL"])
    a = {"pred": p, "label": lab, "pl": d["PL"], "ll": d["LL"], "sw": d["SW"]}
    res["sym_ntc"] = sym_case(loss_cls(), a, ["pred", "label"])
    res["sym_lengths"] = sym_case(loss_cls(weight=0.5), a, ["pred", "label", "pl", "ll", "sw"])
    t = {"pred": p.transpose(1, 0, 2), "label": lab.T}
    res["sym_tn"] = sym_case(loss_cls(layout="TNC", label_layout="TN"), t, ["pred", "label"])
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=5, flatten=False, name="fc")
    net = mx.sym.make_loss(loss_cls()(fc, mx.sym.var("label")))
    it = mx.io.NDArrayIter(d["X"], d["Y"], batch_size=3, label_name="label")
    mod = mx.mod.Module(net, data_names=("data",), label_names=("label",))
    mod.fit(
        it,
        num_epoch=3,
        optimizer="sgd",
        optimizer_params={"learning_rate": 0.1},
        arg_params={"fc_weight": mx.nd.array(d["W0"]), "fc_bias": mx.nd.zeros(5)},
        eval_metric=mx.metric.Loss(),
    )
    params, _ = mod.get_params()
    res["fit"] = [
        params["fc_weight"].asnumpy().tolist(),
        params["fc_bias"].asnumpy().tolist(),
        float(mod.score(it, mx.metric.Loss())[0][1]),
    ]
    return res


if __name__ == "__main__":
    with open(os.path.join(HERE, "ctc_reference.json"), "w", encoding="utf-8") as f:
        json.dump({"nd_cases": nd_cases(), "gluon_cases": gluon_cases()}, f)
