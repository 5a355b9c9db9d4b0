"""Writes ``cnn_module_reference.npz`` (next to this script) with mxnet 1.9.1: run
``python make_cnn_module_reference.py`` in an environment with mxnet 1.9.1 (not gradhub).

The network (:func:`network`) is a small LeNet-style CNN with batch normalization:
``data (N, 2, 10, 10) -> Convolution(3x3, 4, conv1) -> BatchNorm(bn1, fix_gamma default) ->
relu -> max Pooling(2x2, stride 2) -> Convolution(3x3, 6, pad 1, conv2) -> BatchNorm(bn2,
fix_gamma=False, eps=1e-5, momentum=0.8) -> tanh -> avg Pooling(2x2, stride 2) -> Flatten ->
FullyConnected(5, fc) -> SoftmaxOutput(softmax)``.

Two records, from the parameters and auxiliary states of :func:`initial_params`:

* ``exec_*``: an executor (``simple_bind``, batch 6) run for 3 steps of
  ``forward(is_train=True)`` + ``backward()`` on the batches of :func:`exec_batches`; per step
  the output (``exec_sK_out``), the parameter gradients (``exec_sK_grad_NAME``) and the moving
  statistics after the step (``exec_sK_aux_NAME``), then ``forward(is_train=False)``
  (``exec_test_out``).
* ``fit_*``: ``Module.fit`` for 2 epochs on an ``NDArrayIter`` of 40 examples (batch 8,
  ``shuffle=False``) with SGD (learning rate 0.1, momentum 0.9, weight decay 1e-4), given
  ``arg_params`` and ``aux_params``; the parameters and auxiliary states after training
  (``fit_arg_NAME``, ``fit_aux_NAME``), the training accuracy after every batch
  (``fit_train_acc``) and ``predict`` of the first 16 examples (``fit_predict``).

The inputs are stored too (``train_x``, ``train_y``, ``init_NAME``). The script also writes
``lenet-symbol.json``: ``tojson()`` of :func:`lenet` (a LeNet with every layer kind and
parameters given and defaulted), and ``tensor-layers-symbol.json``: ``tojson()`` of
:func:`tensor_layers` (Embedding, Reshape, expand_dims, transpose, Flatten, concat, clip,
LeakyReLU, log_softmax and the regression outputs).
"""

from __future__ import annotations

import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def network() -> mx.sym.Symbol:
    data = mx.sym.Variable("data")
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="conv1")
    net = mx.sym.BatchNorm(net, name="bn1")
    net = mx.sym.Activation(net, act_type="relu", name="act1")
    net = mx.sym.Pooling(net, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool1")
    net = mx.sym.Convolution(net, kernel=(3, 3), num_filter=6, pad=(1, 1), name="conv2")
    net = mx.sym.BatchNorm(net, fix_gamma=False, eps=1e-5, momentum=0.8, name="bn2")
    net = mx.sym.Activation(net, act_type="tanh", name="act2")
    net = mx.sym.Pooling(net, pool_type="avg", kernel=(2, 2), stride=(2, 2), name="pool2")
    net = mx.sym.Flatten(net, name="flat")
    net = mx.sym.FullyConnected(net, num_hidden=5, name="fc")
    return mx.sym.SoftmaxOutput(net, name="softmax")


SHAPES = {
    "conv1_weight": (4, 2, 3, 3), "conv1_bias": (4,), "bn1_gamma": (4,), "bn1_beta": (4,),
    "conv2_weight": (6, 4, 3, 3), "conv2_bias": (6,), "bn2_gamma": (6,), "bn2_beta": (6,),
    "fc_weight": (5, 24), "fc_bias": (5,),
}  # fmt: skip
AUX_SHAPES = {
    "bn1_moving_mean": (4,), "bn1_moving_var": (4,),
    "bn2_moving_mean": (6,), "bn2_moving_var": (6,),
}  # fmt: skip


def initial_params() -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    rng = np.random.RandomState(3)
    args = {k: rng.uniform(-0.5, 0.5, s).astype(np.float32) for k, s in SHAPES.items()}
    auxs = {k: rng.uniform(0.5, 1.5, s).astype(np.float32) for k, s in AUX_SHAPES.items()}
    return args, auxs


def exec_batches() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.RandomState(5)
    return [
        (rng.randn(6, 2, 10, 10).astype(np.float32), rng.randint(0, 5, 6).astype(np.float32))
        for _ in range(3)
    ]


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.RandomState(0)
    x = rng.randn(40, 2, 10, 10).astype(np.float32)
    y = (x[:, 0, :5].mean(axis=(1, 2)) * 10 + x[:, 1].mean(axis=(1, 2)) * 5).astype(np.float32)
    y = np.digitize(y, [-1.5, -0.5, 0.5, 1.5]).astype(np.float32)
    return {"train_x": x, "train_y": y}


def run_executor() -> dict[str, np.ndarray]:
    sym = network()
    ex = sym.simple_bind(mx.cpu(), data=(6, 2, 10, 10), softmax_label=(6,))
    args, auxs = initial_params()
    ex.copy_params_from({k: mx.nd.array(v) for k, v in args.items()},
                        {k: mx.nd.array(v) for k, v in auxs.items()})  # fmt: skip
    out: dict[str, np.ndarray] = {}
    for step, (x, y) in enumerate(exec_batches()):
        out[f"s{step}_out"] = ex.forward(is_train=True, data=x, softmax_label=y)[0].asnumpy()
        ex.backward()
        for name in SHAPES:
            out[f"s{step}_grad_{name}"] = ex.grad_dict[name].asnumpy()
        for name in AUX_SHAPES:
            out[f"s{step}_aux_{name}"] = ex.aux_dict[name].asnumpy()
    out["test_out"] = ex.forward(is_train=False)[0].asnumpy()
    return out


def run_fit() -> dict[str, np.ndarray]:
    d = inputs()
    train = mx.io.NDArrayIter(d["train_x"], d["train_y"], batch_size=8, shuffle=False)
    mod = mx.mod.Module(network(), context=mx.cpu())
    train_acc: list[float] = []

    def on_batch(param):
        train_acc.append(param.eval_metric.get()[1])

    args, auxs = initial_params()
    mod.fit(
        train,
        eval_metric="acc",
        batch_end_callback=on_batch,
        optimizer="sgd",
        optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-4},
        arg_params={k: mx.nd.array(v) for k, v in args.items()},
        aux_params={k: mx.nd.array(v) for k, v in auxs.items()},
        allow_missing=False,
        num_epoch=2,
    )
    out: dict[str, np.ndarray] = {}
    arg, aux = mod.get_params()
    for k, v in arg.items():
        out[f"arg_{k}"] = v.asnumpy()
    for k, v in aux.items():
        out[f"aux_{k}"] = v.asnumpy()
    out["train_acc"] = np.array(train_acc)
    pred = mx.io.NDArrayIter(d["train_x"][:16], batch_size=8)
    out["predict"] = mod.predict(pred).asnumpy()
    return out


def lenet() -> mx.sym.Symbol:
    data = mx.sym.Variable("data")
    net = mx.sym.Convolution(data, kernel=(5, 5), num_filter=20, name="conv1")
    net = mx.sym.BatchNorm(net, name="bn1")
    net = mx.sym.Activation(net, act_type="tanh", name="act1")
    net = mx.sym.Pooling(net, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool1")
    net = mx.sym.Convolution(net, kernel=(3, 3), num_filter=8, pad=(1, 1), no_bias=True)
    net = mx.sym.BatchNorm(net, fix_gamma=False, eps=1e-5, momentum=0.8, name="bn2")
    net = mx.sym.Pooling(net, pool_type="avg", global_pool=True)
    net = mx.sym.Flatten(net)
    net = mx.sym.Dropout(net, p=0.5)
    net = mx.sym.FullyConnected(net, num_hidden=10, name="fc")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def tensor_layers() -> mx.sym.Symbol:
    x = mx.sym.Variable("data")
    e = mx.sym.Embedding(x, input_dim=10, output_dim=4, name="emb")
    r = mx.sym.Reshape(e, shape=(0, -1), name="r")
    t = mx.sym.expand_dims(r, axis=1, name="ex")
    t = mx.sym.transpose(t, axes=(0, 2, 1), name="tr")
    f = mx.sym.Flatten(t, name="fl")
    c = mx.sym.concat(f, mx.sym.clip(f, a_min=-1, a_max=1.5, name="cl"), dim=1, name="cat")
    p = mx.sym.LeakyReLU(c, act_type="prelu", name="pr")
    leaky = mx.sym.LeakyReLU(p, slope=0.1, name="lk")
    h = mx.sym.log_softmax(leaky, axis=-1, name="ls")
    h = mx.sym.FullyConnected(h, num_hidden=3, name="fc")
    a = mx.sym.LinearRegressionOutput(h, name="lin", grad_scale=0.5)
    b = mx.sym.LogisticRegressionOutput(h, name="logi")
    m = mx.sym.MAERegressionOutput(mx.sym.reshape(h, shape=(-1,), name="flat"), name="mae")
    return mx.sym.Group([a, b, m])


def main() -> None:
    with open(os.path.join(HERE, "lenet-symbol.json"), "w") as f:
        f.write(lenet().tojson())
    with open(os.path.join(HERE, "tensor-layers-symbol.json"), "w") as f:
        f.write(tensor_layers().tojson())
    data = dict(inputs())
    args, auxs = initial_params()
    data.update({f"init_{k}": v for k, v in {**args, **auxs}.items()})
    data.update({f"exec_{k}": v for k, v in run_executor().items()})
    data.update({f"fit_{k}": v for k, v in run_fit().items()})
    np.savez(os.path.join(HERE, "cnn_module_reference.npz"), **data)


if __name__ == "__main__":
    main()
