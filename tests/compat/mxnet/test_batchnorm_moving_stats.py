"""The moving statistics of gluon.nn.BatchNorm (mx.nd.BatchNorm in training) change when a
backward pass goes through the layer, latest forward pass first, as mxnet 1.9.1 (DCGAN's
discriminator runs on real and fake images before one backward)."""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
from gradhub_compat.mxnet.gluon import nn


def test_batchnorm_moving_statistics_follow_backward_order() -> None:
    # mxnet 1.9.1: the moving statistics change in the backward pass, latest forward first;
    # a forward pass without backward leaves them alone
    bn = nn.BatchNorm(in_channels=2)
    bn.initialize()
    x1 = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    x2 = mx.nd.array([[10.0, 20.0], [30.0, 40.0]])
    with mx.autograd.record():
        y1 = bn(x1)
        y2 = bn(x2)
        loss = (y1 * y1).sum() + (y2 * y2).sum()
    np.testing.assert_array_equal(bn.running_mean.data().asnumpy(), [0, 0])
    loss.backward()
    # 0.9 * (0.1 * [20, 30]) + 0.1 * [2, 3] (mxnet 1.9.1: [2.0000005, 3.0000005])
    np.testing.assert_allclose(bn.running_mean.data().asnumpy(), [2.0, 3.0], rtol=1e-6)
    with mx.autograd.record():
        bn(x1)
    np.testing.assert_allclose(bn.running_mean.data().asnumpy(), [2.0, 3.0], rtol=1e-6)
    # mxnet 1.9.1: autograd.grad updates them too, and every backward pass through a retained
    # graph again ([0.2, 0.3], then [0.38, 0.57])
    bn2 = nn.BatchNorm(in_channels=2)
    bn2.initialize()
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with mx.autograd.record():
        y = (bn2(x) * mx.nd.array([[1.0, 2.0], [3.0, 5.0]])).sum()
    mx.autograd.grad(y, [x], retain_graph=True)
    np.testing.assert_allclose(bn2.running_mean.data().asnumpy(), [0.2, 0.3], rtol=1e-6)
    y.backward()
    np.testing.assert_allclose(bn2.running_mean.data().asnumpy(), [0.38, 0.57], rtol=1e-6)
