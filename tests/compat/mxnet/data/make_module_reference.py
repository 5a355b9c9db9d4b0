"""Writes ``module_reference.npz`` (next to this script) with mxnet 1.9.1: run
``python make_module_reference.py`` in an environment with mxnet 1.9.1 (not gradhub).

The classic symbolic MLP ``data -> FullyConnected(16, fc1) -> relu -> FullyConnected(8, fc2)
-> tanh -> FullyConnected(3, fc3) -> SoftmaxOutput(softmax)`` is trained by ``Module.fit`` on
an ``NDArrayIter`` of 50 examples of 6 features (batch size 8: the last batch is padded with 6
examples) for 2 epochs with SGD (learning rate 0.1, momentum 0.9, weight decay 1e-3), from the
initial parameters of :func:`initial_params` (``arg_params=``, ``allow_missing=False``), with
an evaluation iterator of 20 examples scored after each epoch. Two runs: ``shuffle=False``
(keys ``plain_*``) and ``shuffle=True`` after ``np.random.seed(7)`` (keys ``shuffle_*``).
Each run stores the parameters after training (``*_arg_NAME``), the training accuracy after
every batch (``*_train_acc``, from a batch-end callback), the validation accuracy of each
epoch (``*_val_acc``), ``score`` of the evaluation data with ``"acc"`` and ``"ce"``
(``*_score``) and ``predict`` of the evaluation data (``*_predict``, 20 x 3). The inputs are
stored too (``train_x``, ``train_y``, ``val_x``, ``val_y``) and the initial parameters
(``init_NAME``).
"""

from __future__ import annotations

import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def network() -> mx.sym.Symbol:
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(net, num_hidden=16, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=8, name="fc2")
    net = mx.sym.Activation(net, act_type="tanh", name="tanh2")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="fc3")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def initial_params() -> dict[str, np.ndarray]:
    rng = np.random.RandomState(1)
    shapes = {
        "fc1_weight": (16, 6), "fc1_bias": (16,),
        "fc2_weight": (8, 16), "fc2_bias": (8,),
        "fc3_weight": (3, 8), "fc3_bias": (3,),
    }  # fmt: skip
    return {k: (rng.uniform(-0.5, 0.5, s)).astype(np.float32) for k, s in shapes.items()}


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.RandomState(0)
    x = rng.randn(70, 6).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.float32) + (x[:, 2] > 1).astype(np.float32)
    return {"train_x": x[:50], "train_y": y[:50], "val_x": x[50:], "val_y": y[50:]}


def run(shuffle: bool) -> dict[str, np.ndarray]:
    d = inputs()
    if shuffle:
        np.random.seed(7)
    train = mx.io.NDArrayIter(d["train_x"], d["train_y"], batch_size=8, shuffle=shuffle)
    val = mx.io.NDArrayIter(d["val_x"], d["val_y"], batch_size=8)
    mod = mx.mod.Module(network(), context=mx.cpu())
    train_acc: list[float] = []
    val_acc: list[float] = []

    def on_batch(param):
        train_acc.append(param.eval_metric.get()[1])

    def on_eval(param):
        val_acc.append(param.eval_metric.get()[1])

    mod.fit(
        train,
        eval_data=val,
        eval_metric="acc",
        batch_end_callback=on_batch,
        eval_end_callback=on_eval,
        optimizer="sgd",
        optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3},
        arg_params={k: mx.nd.array(v) for k, v in initial_params().items()},
        allow_missing=False,
        num_epoch=2,
    )
    out: dict[str, np.ndarray] = {}
    arg, _ = mod.get_params()
    for k, v in arg.items():
        out[f"arg_{k}"] = v.asnumpy()
    out["train_acc"] = np.array(train_acc)
    out["val_acc"] = np.array(val_acc)
    score = mod.score(val, ["acc", "ce"])
    out["score"] = np.array([v for _, v in score], dtype=np.float64)
    out["predict"] = mod.predict(val).asnumpy()
    return out


def main() -> None:
    data = {k: v for k, v in inputs().items()}
    data.update({f"init_{k}": v for k, v in initial_params().items()})
    for tag, shuffle in (("plain", False), ("shuffle", True)):
        data.update({f"{tag}_{k}": v for k, v in run(shuffle).items()})
    np.savez(os.path.join(HERE, "module_reference.npz"), **data)


if __name__ == "__main__":
    main()
