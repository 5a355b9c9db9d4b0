"""The mxnet layer's Gluon layers (``gluon.nn``): an MLP (Dense with tanh) and a small CNN
(Conv2D + relu, BatchNorm, MaxPool2D, AvgPool2D, GlobalAvgPool2D, Flatten, Dense) given the same
parameters as mxnet 1.9.1 (copied in with ``set_data``): parameter names, shapes before and after
deferred initialization, forward outputs in inference and training, every ``param.grad()`` after
``autograd.record(); loss.backward()`` and the running statistics, all as mxnet 1.9.1 printed
them; a gradient penalty through Gluon against float64 finite differences; the other layers and
the errors.
"""

from __future__ import annotations

from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet.gluon import nn

# mxnet 1.9.1 (tests/compat/mxnet/test_gluon_nn.py's _mlp and _cnn, same inputs and parameters)
MLP_OUT = np.array([[-0.257581, 0.4788594], [0.0511094, 0.3500249]])

MLP_GW0 = np.array(
    [
        [-0.6696261, -0.3530374, -0.0364487, 0.28014],
        [0.4328054, 0.1771475, -0.0785103, -0.3341681],
        [0.3027529, 0.1736564, 0.04456, -0.0845365],
    ]
)

MLP_GB0 = np.array([1.2663547, -1.0226313, -0.5163859])

MLP_GW1 = np.array([[-0.2426301, 0.0729908, -0.02063], [0.5835845, -0.4927365, 0.0828195]])

MLP_GB1 = np.array([-0.4129431, 1.6577685])

MLP_GX = np.array(
    [[-0.6288821, -0.0882508, 0.2590473, 0.2390443], [-0.3899895, 0.0374781, 0.1520333, 0.1175038]]
)

CNN_EVAL = np.array([[-0.4393066, 0.3744733], [-0.4432634, 0.3665597]])

CNN_TRAIN = np.array([[-0.5434359, 0.3006106], [-0.5499688, 0.2875448]])

CNN_G_CONV0_WEIGHT = np.array(
    [
        [
            [
                [0.001699, 0.0235701, 0.0002257],
                [0.0173382, -0.0400804, -0.019394],
                [-0.0262065, 0.0540538, 0.0025684],
            ]
        ],
        [
            [
                [-0.000347, 0.0001848, 0.0002039],
                [0.0002022, 0.0004191, -0.0003416],
                [-0.0003335, 0.0001231, 0.0003389],
            ]
        ],
    ]
)

CNN_G_CONV0_BIAS = np.array([0.078777, -0.0003279])

CNN_G_BATCHNORM0_GAMMA = np.array([-0.2103958, 0.0187947])

CNN_G_BATCHNORM0_BETA = np.array([0.3865412, 0.0122824])

CNN_BATCHNORM0_RUNNING_MEAN = np.array([0.019375, 0.1438542])

CNN_BATCHNORM0_RUNNING_VAR = np.array([0.9126697, 1.1708549])

CNN_G_DENSE0_WEIGHT = np.array([[0.2952654, -0.392717], [-0.1588268, 0.211897]])

CNN_G_DENSE0_BIAS = np.array([-2.1868095, 1.1763109])


def _mlp_inputs() -> tuple[np.ndarray, list[np.ndarray]]:
    x = (np.arange(8).reshape(2, 4) - 3.5) / 4.0
    w0 = (np.arange(12).reshape(3, 4) % 5 - 2) / 5.0
    b0 = np.array([0.1, -0.2, 0.3])
    w1 = (np.arange(6).reshape(2, 3) % 4 - 1.5) / 2.0
    b1 = np.array([0.05, -0.05])
    return x, [w0, b0, w1, b1]


def _mlp() -> Any:
    net = nn.HybridSequential(prefix="mlp_")
    with net.name_scope():
        net.add(nn.Dense(3, activation="tanh"), nn.Dense(2, in_units=3))
    return net


def test_mlp_names_shapes_values_and_gradients_as_mxnet() -> None:
    net = _mlp()
    params = net.collect_params()
    assert list(params.keys()) == [
        "mlp_dense0_weight",
        "mlp_dense0_bias",
        "mlp_dense1_weight",
        "mlp_dense1_bias",
    ]
    assert [p.shape for p in params.values()] == [(3, 0), (3,), (2, 3), (2,)]
    assert net[0].act.prefix == "mlp_dense0_tanh_"
    net.initialize()
    # mxnet 1.9.1's message
    with pytest.raises(
        mx.gluon.DeferredInitializationError,
        match="Parameter 'mlp_dense0_weight' "
        "has not been initialized yet because initialization was deferred",
    ):
        net[0].weight.data()
    x, ws = _mlp_inputs()
    xx = mx.nd.array(x)
    xx.attach_grad()
    net(xx)
    assert [p.shape for p in params.values()] == [(3, 4), (3,), (2, 3), (2,)]
    for p, w in zip(params.values(), ws):
        p.set_data(mx.nd.array(w))
    with mx.autograd.record():
        y = net(xx)
        loss = (y * y).sum()
    loss.backward()
    np.testing.assert_allclose(y.asnumpy(), MLP_OUT, rtol=1e-5, atol=1e-6)
    for p, g in zip(params.values(), [MLP_GW0, MLP_GB0, MLP_GW1, MLP_GB1]):
        np.testing.assert_allclose(p.grad().asnumpy(), g, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xx.grad.asnumpy(), MLP_GX, rtol=1e-5, atol=1e-6)
    # grad_req="add" accumulates: twice the gradient after a second pass
    params.setattr("grad_req", "add")
    for _ in range(2):
        with mx.autograd.record():
            loss = (net(xx) * net(xx)).sum()
        loss.backward()
    np.testing.assert_allclose(net[0].weight.grad().asnumpy(), 2 * MLP_GW0, rtol=1e-5, atol=1e-6)
    params.zero_grad()
    np.testing.assert_array_equal(net[0].weight.grad().asnumpy(), np.zeros((3, 4)))


def test_gradient_penalty_through_gluon() -> None:
    net = nn.HybridSequential(prefix="gp_")
    with net.name_scope():
        net.add(nn.Dense(3, in_units=4), nn.HybridLambda(lambda F, v: F.tanh(v)), nn.Dense(2))
    net.initialize()
    x, ws = _mlp_inputs()
    for p, w in zip(net.collect_params().values(), ws):
        p.set_data(mx.nd.array(w))
    xx = mx.nd.array(x)
    xx.attach_grad()
    with mx.autograd.record():
        g = mx.autograd.grad(net(xx).sum(), [xx], create_graph=True)[0]
        gp = (g * g).sum()
    gp.backward()

    def penalty(w0: np.ndarray, b0: np.ndarray, w1: np.ndarray) -> float:
        d = 1 - np.tanh(x @ w0.T + b0) ** 2
        gx = (d * (np.ones((2, 2)) @ w1)) @ w0
        return float((gx * gx).sum())

    w0, b0, w1, _ = ws
    np.testing.assert_allclose(gp.asnumpy(), [penalty(w0, b0, w1)], rtol=1e-5)
    for i, p in enumerate(list(net.collect_params().values())[:3]):
        num = np.zeros(p.shape)
        for j in np.ndindex(p.shape):
            args = [w0.copy(), b0.copy(), w1.copy()]
            args[i][j] += 1e-6
            up = penalty(*args)
            args[i][j] -= 2e-6
            num[j] = (up - penalty(*args)) / 2e-6
        np.testing.assert_allclose(p.grad().asnumpy(), num, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(net[2].bias.grad().asnumpy(), [0, 0])


def _cnn() -> Any:
    net = nn.HybridSequential(prefix="cnn_")
    with net.name_scope():
        net.add(nn.Conv2D(2, kernel_size=3, padding=1, activation="relu"))
        net.add(nn.BatchNorm())
        net.add(nn.MaxPool2D())
        net.add(nn.AvgPool2D(pool_size=2, strides=1, padding=1))
        net.add(nn.GlobalAvgPool2D())
        net.add(nn.Flatten())
        net.add(nn.Dense(2))
    return net


def test_cnn_names_shapes_values_gradients_and_statistics_as_mxnet() -> None:
    net = _cnn()
    params = net.collect_params()
    # mxnet 1.9.1
    assert list(params.keys()) == [
        "cnn_conv0_weight",
        "cnn_conv0_bias",
        "cnn_batchnorm0_gamma",
        "cnn_batchnorm0_beta",
        "cnn_batchnorm0_running_mean",
        "cnn_batchnorm0_running_var",
        "cnn_dense0_weight",
        "cnn_dense0_bias",
    ]
    assert [p.shape for p in params.values()] == [
        (2, 0, 3, 3),
        (2,),
        (0,),
        (0,),
        (0,),
        (0,),
        (2, 0),
        (2,),
    ]
    assert [p.grad_req for p in params.values()] == ["write"] * 4 + ["null"] * 2 + ["write"] * 2
    net.initialize()
    xc = mx.nd.array(((np.arange(32).reshape(2, 1, 4, 4) * 7) % 11 - 5) / 5.0)
    net(xc)
    assert [p.shape for p in params.values()] == [
        (2, 1, 3, 3),
        (2,),
        (2,),
        (2,),
        (2,),
        (2,),
        (2, 2),
        (2,),
    ]
    # the initial values: zeros and ones where mxnet's layers name them
    np.testing.assert_array_equal(net[1].gamma.data().asnumpy(), [1, 1])
    np.testing.assert_array_equal(net[1].running_var.data().asnumpy(), [1, 1])
    np.testing.assert_array_equal(net[0].bias.data().asnumpy(), [0, 0])
    for p in params.values():
        n = int(np.prod(p.shape))
        v = ((np.arange(n) * 5) % 9 - 4) / 6.0
        if p.name.endswith("running_var"):
            v = 1.0 + np.arange(n) / 4.0
        if p.name.endswith("running_mean"):
            v = np.arange(n) / 10.0
        p.set_data(mx.nd.array(v.reshape(p.shape)))
    np.testing.assert_allclose(net(xc).asnumpy(), CNN_EVAL, rtol=1e-5, atol=1e-6)
    with mx.autograd.record():
        y = net(xc)
        loss = (y * y).sum()
    loss.backward()
    np.testing.assert_allclose(y.asnumpy(), CNN_TRAIN, rtol=1e-5, atol=1e-6)
    expected = {
        "conv0_weight": CNN_G_CONV0_WEIGHT,
        "conv0_bias": CNN_G_CONV0_BIAS,
        "batchnorm0_gamma": CNN_G_BATCHNORM0_GAMMA,
        "batchnorm0_beta": CNN_G_BATCHNORM0_BETA,
        "dense0_weight": CNN_G_DENSE0_WEIGHT,
        "dense0_bias": CNN_G_DENSE0_BIAS,
    }
    for name, g in expected.items():
        np.testing.assert_allclose(params["cnn_" + name].grad().asnumpy(), g, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        net[1].running_mean.data().asnumpy(), CNN_BATCHNORM0_RUNNING_MEAN, rtol=1e-5
    )
    np.testing.assert_allclose(
        net[1].running_var.data().asnumpy(), CNN_BATCHNORM0_RUNNING_VAR, rtol=1e-5
    )


def test_wrong_input_size_as_mxnet() -> None:
    d = nn.Dense(2, in_units=3)
    d.initialize()
    # mxnet 1.9.1: "Shape inconsistent, Provided = [2,3], inferred shape=(2,4)"
    with pytest.raises(
        mx.MXNetError,
        match=r"Shape inconsistent, Provided = \[2,3\], inferred "
        r"shape=\(2,4\)",
    ):
        d(mx.nd.ones((2, 4)))
    c = nn.Conv2D(2, 3, in_channels=2)
    c.initialize()
    with pytest.raises(mx.MXNetError, match="Shape inconsistent"):
        c(mx.nd.ones((1, 3, 5, 5)))
    fresh = nn.Dense(2)
    # mxnet 1.9.1's message
    with pytest.raises(
        RuntimeError, match=r"has not been initialized. Note that you should initialize parameters"
    ):
        fresh(mx.nd.ones((1, 3)))


def test_dense_options_and_repr() -> None:
    d = nn.Dense(2, flatten=False, use_bias=False, prefix="nf_")
    assert list(d.collect_params().keys()) == ["nf_weight"] and d.bias is None
    d.initialize(mx.init.One())
    y = d(mx.nd.ones((2, 3, 4)))
    assert y.shape == (2, 3, 2) and d.weight.shape == (2, 4)  # mxnet 1.9.1
    np.testing.assert_array_equal(y.asnumpy(), np.full((2, 3, 2), 4.0))
    f = nn.Dense(2, prefix="fl_")
    f.initialize(mx.init.One())
    assert f(mx.nd.ones((2, 3, 4))).shape == (2, 2) and f.weight.shape == (2, 12)
    d64 = nn.Dense(2, in_units=2, dtype="float64")
    d64.initialize()
    assert d64.weight.data().dtype == np.float64
    # mxnet 1.9.1
    assert repr(nn.Dense(3, in_units=2)) == "Dense(2 -> 3, linear)"
    assert repr(nn.Dense(3, activation="relu")) == "Dense(None -> 3, Activation(relu))"
    assert repr(nn.Conv2D(3, 3, padding=1, in_channels=2)) == (
        "Conv2D(2 -> 3, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
    )
    assert repr(nn.MaxPool2D()) == (
        "MaxPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), ceil_mode=False, "
        "global_pool=False, pool_type=max, layout=NCHW)"
    )
    assert repr(nn.BatchNorm()) == (
        "BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, use_global_stats=False, "
        "in_channels=None)"
    )


def test_activation_layers() -> None:
    x = mx.nd.array([-2.0, -0.5, 0.0, 1.5])
    xv = x.asnumpy().astype(np.float64)
    np.testing.assert_allclose(
        nn.Activation("softsign")(x).asnumpy(), xv / (1 + np.abs(xv)), rtol=1e-6
    )
    np.testing.assert_allclose(
        nn.LeakyReLU(0.1)(x).asnumpy(), np.where(xv > 0, xv, 0.1 * xv), rtol=1e-6
    )
    np.testing.assert_allclose(
        nn.ELU(0.5)(x).asnumpy(), np.where(xv > 0, xv, 0.5 * np.expm1(xv)), rtol=1e-6
    )
    np.testing.assert_allclose(nn.Swish()(x).asnumpy(), xv / (1 + np.exp(-xv)), rtol=1e-6)
    assert nn.SELU()(x).shape == (4,) and nn.GELU()(x).shape == (4,)
    with pytest.raises(AssertionError, match="Slope coefficient for LeakyReLU must be no less"):
        nn.LeakyReLU(-1)
    assert nn.Activation("relu").prefix.startswith("relu")
    pr = nn.PReLU(in_channels=2, prefix="prelu0_")
    pr.initialize()
    assert list(pr.collect_params().keys()) == ["prelu0_alpha"]  # mxnet 1.9.1
    np.testing.assert_array_equal(pr.alpha.data().asnumpy(), [0.25, 0.25])
    xp = mx.nd.array([[[-1.0, 2.0], [-3.0, 4.0]]])
    with mx.autograd.record():
        y = pr(xp)
    y.backward()
    # mxnet 1.9.1
    np.testing.assert_allclose(y.asnumpy(), [[[-0.25, 2.0], [-0.75, 4.0]]])
    np.testing.assert_allclose(pr.alpha.grad().asnumpy(), [-1.0, -3.0])


def test_dropout_embedding_flatten() -> None:
    x = mx.nd.ones((100, 50))
    drop = nn.Dropout(0.4)
    np.testing.assert_array_equal(drop(x).asnumpy(), x.asnumpy())  # not training: identity
    mx.random.seed(1)
    with mx.autograd.record():
        y = drop(x)
    v = y.asnumpy()
    assert set(np.unique(v)) <= {0.0, np.float32(1 / 0.6)}
    assert abs((v == 0).mean() - 0.4) < 0.02
    shared = nn.Dropout(0.5, axes=(1,))
    with mx.autograd.record():
        s = shared(mx.nd.ones((4, 6))).asnumpy()
    assert all(len(set(row)) == 1 for row in s)
    assert repr(drop) == "Dropout(p = 0.4, axes=())"
    with mx.autograd.record():
        np.testing.assert_array_equal(nn.Dropout(0.0)(x).asnumpy(), x.asnumpy())
    emb = nn.Embedding(4, 3, prefix="emb_")
    assert list(emb.collect_params().keys()) == ["emb_weight"] and emb.weight.shape == (4, 3)
    emb.initialize()
    emb.weight.set_data(mx.nd.array(np.arange(12).reshape(4, 3)))
    with mx.autograd.record():
        e = emb(mx.nd.array([[0, 3], [3, 1]]))
    e.backward()
    np.testing.assert_array_equal(e.asnumpy()[0], [[0, 1, 2], [9, 10, 11]])
    np.testing.assert_array_equal(emb.weight.grad().asnumpy()[:, 0], [1, 1, 0, 2])
    assert repr(emb) == "Embedding(4 -> 3, float32)"
    with pytest.raises(NotImplementedError, match="sparse_grad"):
        nn.Embedding(4, 3, sparse_grad=True)
    assert nn.Flatten()(mx.nd.ones((2, 3, 4))).shape == (2, 12)


def test_batchnorm_options() -> None:
    bn = nn.BatchNorm(scale=False, center=False, in_channels=3, prefix="bn_")
    assert [p.grad_req for p in bn.collect_params().values()] == ["null"] * 4
    assert bn.gamma.shape == (3,)
    bn.initialize()
    x = mx.nd.array(np.arange(12.0).reshape(2, 3, 2))
    with mx.autograd.record():
        y = bn(x)
    # mxnet 1.9.1: the moving statistics change when a backward pass goes through the layer
    np.testing.assert_array_equal(bn.running_mean.data().asnumpy(), [0, 0, 0])
    x.attach_grad()
    with mx.autograd.record():
        y = bn(x)
    y.backward()
    xv = x.asnumpy()
    mean, var = xv.mean(axis=(0, 2), keepdims=True), xv.var(axis=(0, 2), keepdims=True)
    np.testing.assert_allclose(y.asnumpy(), (xv - mean) / np.sqrt(var + 1e-5), rtol=1e-5)
    np.testing.assert_allclose(bn.running_mean.data().asnumpy(), 0.1 * mean.ravel(), rtol=1e-6)
    np.testing.assert_allclose(bn.running_var.data().asnumpy(), 0.9 + 0.1 * var.ravel(), rtol=1e-6)
    last = nn.BatchNorm(axis=-1)
    last.initialize()
    last(x)
    assert last.gamma.shape == (2,)
    glob = nn.BatchNorm(use_global_stats=True, in_channels=3)
    glob.initialize()
    with mx.autograd.record():
        np.testing.assert_allclose(glob(x).asnumpy(), xv / np.sqrt(1 + 1e-5), rtol=1e-6)
    np.testing.assert_array_equal(glob.running_mean.data().asnumpy(), [0, 0, 0])
    half = nn.BatchNorm(in_channels=3)
    half.cast("float16")
    assert half.gamma.dtype == "float32"


def test_conv_and_pool_layers() -> None:
    conv = nn.Conv2D(
        4,
        kernel_size=(3, 2),
        strides=(2, 1),
        padding=(1, 0),
        dilation=(1, 2),
        groups=2,
        use_bias=False,
        prefix="c_",
    )
    conv.initialize(mx.init.One())
    y = conv(mx.nd.ones((1, 6, 7, 5)))
    assert conv.weight.shape == (4, 3, 3, 2) and y.shape == (1, 4, 4, 3)
    assert list(conv.collect_params().keys()) == ["c_weight"]
    c1 = nn.Conv1D(2, 3, in_channels=1)
    c1.initialize()
    assert c1(mx.nd.ones((2, 1, 8))).shape == (2, 2, 6)
    c3 = nn.Conv3D(1, 2)
    c3.initialize()
    assert c3(mx.nd.ones((1, 2, 3, 3, 3))).shape == (1, 1, 2, 2, 2)
    x = mx.nd.array(np.arange(32.0).reshape(1, 2, 4, 4))
    np.testing.assert_array_equal(nn.MaxPool2D()(x).asnumpy()[0, 0], [[5, 7], [13, 15]])
    np.testing.assert_array_equal(nn.AvgPool2D()(x).asnumpy()[0, 0], [[2.5, 4.5], [10.5, 12.5]])
    np.testing.assert_array_equal(nn.GlobalMaxPool2D()(x).asnumpy().ravel(), [15, 31])
    np.testing.assert_array_equal(nn.GlobalAvgPool2D()(x).asnumpy().ravel(), [7.5, 23.5])
    assert nn.MaxPool1D()(mx.nd.ones((1, 1, 6))).shape == (1, 1, 3)
    assert nn.AvgPool3D()(mx.nd.ones((1, 1, 4, 4, 4))).shape == (1, 1, 2, 2, 2)
    assert nn.GlobalAvgPool1D()(mx.nd.ones((1, 3, 5))).shape == (1, 3, 1)
    nopad = nn.AvgPool2D(pool_size=3, strides=2, padding=1, count_include_pad=False)
    np.testing.assert_allclose(nopad(x).asnumpy()[0, 0, 0, 0], np.mean([0, 1, 4, 5]))
    with pytest.raises(NotImplementedError, match="layout='NHWC' is not supported"):
        nn.Conv2D(2, 3, layout="NHWC")
    with pytest.raises(NotImplementedError, match="layout='NHWC' is not supported"):
        nn.MaxPool2D(layout="NHWC")
    with pytest.raises(NotImplementedError, match="pooling_convention='full'"):
        nn.MaxPool2D(ceil_mode=True)(mx.nd.ones((1, 1, 5, 5)))
    assert nn.MaxPool2D(ceil_mode=True)(mx.nd.ones((1, 1, 4, 4))).shape == (1, 1, 2, 2)
