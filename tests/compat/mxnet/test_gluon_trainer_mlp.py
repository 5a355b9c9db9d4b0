"""End to end: a two-layer MLP of gluon.nn.Dense layers (relu), SoftmaxCrossEntropyLoss and
gluon.Trainer ("sgd" with momentum and wd, "adam") for five steps from given initial weights,
against mxnet 1.9.1 running the same program."""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet import gluon

W1 = (np.cos(np.arange(20, dtype=np.float32)).reshape(5, 4) * 0.5).astype(np.float32)
B1 = np.linspace(-0.2, 0.2, 5).astype(np.float32)
W2 = (np.sin(np.arange(15, dtype=np.float32) * 0.7).reshape(3, 5) * 0.5).astype(np.float32)
B2 = np.array([0.05, -0.05, 0.0], np.float32)
X = np.sin(np.arange(24, dtype=np.float32) * 1.3).reshape(6, 4).astype(np.float32)
Y = np.array([0, 2, 1, 1, 0, 2], np.float32)

# mxnet 1.9.1: {optimizer: ([dense0 weight, dense0 bias, dense1 weight, dense1 bias] after five
# steps, [mean loss of each step])}
REF = {
    "adam": (
        [
            [
                [0.5500450134277344, 0.3201966881752014, -0.2580867409706116, -0.5450417399406433],
                [-0.2774919867515564, 0.19157934188842773, 0.5286855101585388, 0.32729995250701904],
                [
                    -0.022990502417087555,
                    -0.4057588577270508,
                    -0.4679797887802124,
                    -0.047579821199178696,
                ],
                [
                    0.47187790274620056,
                    0.5036946535110474,
                    0.018441341817378998,
                    -0.42980659008026123,
                ],
                [
                    -0.42963746190071106,
                    -0.18705056607723236,
                    0.2804826498031616,
                    0.4494593143463135,
                ],
            ],
            [
                -0.14979547262191772,
                -0.14963795244693756,
                -0.04980727285146713,
                0.1499815285205841,
                0.15160292387008667,
            ],
            [
                [
                    0.05018046870827675,
                    0.2725659906864166,
                    0.44604021310806274,
                    0.4816869795322418,
                    0.11778521537780762,
                ],
                [
                    -0.22540590167045593,
                    -0.38679036498069763,
                    -0.4418101906776428,
                    -0.36560431122779846,
                    0.05819384753704071,
                ],
                [
                    0.37830373644828796,
                    0.5440030097961426,
                    0.37745803594589233,
                    0.20916368067264557,
                    -0.13469725847244263,
                ],
            ],
            [0.0002430817112326622, -8.440297096967697e-05, -0.05017140507698059],
        ],
        [
            1.1606448888778687,
            1.1321035623550415,
            1.1048249006271362,
            1.0788114070892334,
            1.0540449619293213,
        ],
    ),
    "sgd": (
        [
            [
                [0.5137479305267334, 0.29387131333351135, -0.20932471752166748, -0.51923668384552],
                [-0.2699717581272125, 0.2720959782600403, 0.4928247630596161, 0.25315773487091064],
                [
                    0.05352442339062691,
                    -0.21885524690151215,
                    -0.4188443124294281,
                    -0.2338264137506485,
                ],
                [0.4613632261753082, 0.49136999249458313, 0.04874785989522934, -0.4280366003513336],
                [
                    -0.44942960143089294,
                    -0.16265608370304108,
                    0.2874421179294586,
                    0.4963368773460388,
                ],
            ],
            [
                -0.1943635195493698,
                -0.15855108201503754,
                -0.24125033617019653,
                0.196408212184906,
                0.1798979789018631,
            ],
            [
                [
                    0.026132436469197273,
                    0.19736075401306152,
                    0.4770761728286743,
                    0.49451878666877747,
                    -0.09421428292989731,
                ],
                [
                    -0.24054713547229767,
                    -0.37843477725982666,
                    -0.3894748389720917,
                    -0.40796712040901184,
                    0.24124716222286224,
                ],
                [
                    0.36731410026550293,
                    0.5609787106513977,
                    0.34063297510147095,
                    0.18860547244548798,
                    -0.1543629914522171,
                ],
            ],
            [-0.07811437547206879, 0.1296205073595047, -0.051508814096450806],
        ],
        [
            1.1606448888778687,
            1.1233465671539307,
            1.059938907623291,
            0.9993881583213806,
            0.9411380887031555,
        ],
    ),
}


@pytest.mark.parametrize(
    ("name", "kw"),
    [
        ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3}),
        ("adam", {"learning_rate": 0.01}),
    ],
)
def test_mlp_training_as_mxnet(name: str, kw: dict) -> None:
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(5, activation="relu", in_units=4))
        net.add(gluon.nn.Dense(3, in_units=5))
    net.initialize(mx.init.Zero())
    for layer, (w, b) in zip(net, ((W1, B1), (W2, B2))):
        layer.weight.set_data(mx.nd.array(w))
        layer.bias.set_data(mx.nd.array(b))
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), name, kw)
    losses = []
    for _ in range(5):
        with mx.autograd.record():
            loss = loss_fn(net(mx.nd.array(X)), mx.nd.array(Y))
        loss.backward()
        trainer.step(X.shape[0])
        losses.append(float(loss.mean().asscalar()))
    weights, ref_losses = REF[name]
    got = [p.data().asnumpy() for p in (net[0].weight, net[0].bias, net[1].weight, net[1].bias)]
    # float32 tolerance: mxnet's CPU log_softmax is itself about 5e-6 relative off the exact value
    for g, r in zip(got, weights):
        np.testing.assert_allclose(g, np.array(r, np.float32), rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    # the weights moved: the comparison is not of the initial values
    assert np.abs(got[0] - W1).max() > 1e-3
