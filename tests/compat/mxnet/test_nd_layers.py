"""The mxnet layer's imperative layers ``mx.nd.FullyConnected``, ``mx.nd.Dropout`` and
``mx.nd.split`` under ``mx.autograd``: values and gradients printed by mxnet 1.9.1 for the same
inputs, the FullyConnected gradient also against float64 finite differences, and mxnet's errors.
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest


def _fc_inputs() -> tuple[mx.NDArray, mx.NDArray, mx.NDArray]:
    x = mx.nd.array(np.arange(6).reshape(2, 3) / 4.0)
    w = mx.nd.array(np.arange(12).reshape(4, 3) / 10.0 - 0.5)
    b = mx.nd.array([0.5, -1.0, 2.0, 0.25])
    return x, w, b


def test_fully_connected_values_and_gradients_as_mxnet() -> None:
    x, w, b = _fc_inputs()
    for a in (x, w, b):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.FullyConnected(x, w, b, num_hidden=4)
        z = (y * y).sum()
    z.backward()
    # mxnet 1.9.1
    np.testing.assert_allclose(
        y.asnumpy(), [[0.25, -1.025, 2.2, 0.675], [-0.65, -1.25, 2.65, 1.8]], rtol=1e-6
    )
    np.testing.assert_allclose(
        x.grad.asnumpy(), [[1.14, 1.56, 1.98], [3.12, 3.63, 4.14]], rtol=1e-6
    )
    np.testing.assert_allclose(
        w.grad.asnumpy(),
        [
            [-0.975, -1.175, -1.375],
            [-1.875, -3.0125, -4.15],
            [3.975, 6.4, 8.825],
            [2.7, 3.9375, 5.175],
        ],
        rtol=1e-6,
    )
    np.testing.assert_allclose(b.grad.asnumpy(), [-0.8, -4.55, 9.7, 4.95], rtol=1e-6)


def test_fully_connected_gradient_against_finite_differences() -> None:
    x, w, b = (mx.nd.array(a.asnumpy(), dtype="float64") for a in _fc_inputs())
    w.attach_grad()
    with mx.autograd.record():
        z = (mx.nd.FullyConnected(x, w, b, num_hidden=4) ** 3).sum()
    z.backward()

    def f(wv: np.ndarray) -> float:
        return float(((x.asnumpy() @ wv.T + b.asnumpy()) ** 3).sum())

    num = np.zeros_like(w.asnumpy())
    for i in np.ndindex(num.shape):
        e = np.zeros_like(num)
        e[i] = 1e-6
        num[i] = (f(w.asnumpy() + e) - f(w.asnumpy() - e)) / 2e-6
    np.testing.assert_allclose(w.grad.asnumpy(), num, rtol=1e-6, atol=1e-8)


def test_fully_connected_flatten_and_errors_as_mxnet() -> None:
    x3 = mx.nd.array(np.arange(12).reshape(2, 3, 2))
    y = mx.nd.FullyConnected(x3, mx.nd.ones((4, 2)), no_bias=True, num_hidden=4, flatten=False)
    assert y.shape == (2, 3, 4)
    flat = mx.nd.FullyConnected(x3, mx.nd.ones((4, 6)), no_bias=True, num_hidden=4)
    np.testing.assert_array_equal(flat.asnumpy(), [[15.0] * 4, [51.0] * 4])
    x, _, b = _fc_inputs()
    with pytest.raises(
        mx.base.MXNetError, match=r"Shape inconsistent, Provided = \[4,2\], inferred shape=\(4,3\)"
    ):
        mx.nd.FullyConnected(x, mx.nd.ones((4, 2)), b, num_hidden=4)
    with pytest.raises(mx.base.MXNetError, match="Required parameter num_hidden"):
        mx.nd.FullyConnected(x, mx.nd.ones((4, 3)), b)


def test_split_values_and_head_gradients_as_mxnet() -> None:
    s = mx.nd.array(np.arange(12).reshape(2, 6))
    s.attach_grad()
    with mx.autograd.record():
        p = mx.nd.split(s, num_outputs=3, axis=1)
        mx.autograd.backward(p, [mx.nd.ones((2, 2)), None, mx.nd.array([[2, 3], [4, 5]])])
    assert [q.asnumpy().tolist() for q in p] == [
        [[0.0, 1.0], [6.0, 7.0]],
        [[2.0, 3.0], [8.0, 9.0]],
        [[4.0, 5.0], [10.0, 11.0]],
    ]
    # mxnet 1.9.1: a None head gradient is ones
    assert s.grad.asnumpy().tolist() == [[1, 1, 1, 1, 2, 3], [1, 1, 1, 1, 4, 5]]
    one = mx.nd.split(mx.nd.ones((3, 1)), num_outputs=1, axis=1, squeeze_axis=True)
    assert isinstance(one, mx.NDArray) and one.shape == (3,)
    with pytest.raises(mx.base.MXNetError, match="4 does not evenly divide 6"):
        mx.nd.split(s, num_outputs=4, axis=1)


def test_dropout_training_and_predict_as_mxnet() -> None:
    mx.random.seed(3)
    d = mx.nd.ones((40, 50))
    d.attach_grad()
    with mx.autograd.record():
        o = mx.nd.Dropout(d, p=0.25)
    o.backward()
    values = np.unique(o.asnumpy())
    np.testing.assert_allclose(values, [0.0, 4 / 3], rtol=1e-6)  # kept: x / (1 - p), as mxnet
    assert 0.2 < float((o.asnumpy() == 0).mean()) < 0.3
    np.testing.assert_array_equal(d.grad.asnumpy(), o.asnumpy())
    # not training: the data pass unchanged, still recorded with gradient 1 (mxnet 1.9.1)
    with mx.autograd.record(train_mode=False):
        o = mx.nd.Dropout(d, p=0.5)
    o.backward()
    np.testing.assert_array_equal(o.asnumpy(), d.asnumpy())
    np.testing.assert_array_equal(d.grad.asnumpy(), np.ones((40, 50)))
    with mx.autograd.record():
        o = mx.nd.Dropout(d, p=0.5, axes=(1,))
    assert (o.asnumpy() == o.asnumpy()[:, :1]).all()
    assert set(mx.nd.Dropout(d, p=0.5, mode="always").asnumpy().ravel().tolist()) == {0.0, 2.0}
    with pytest.raises(mx.base.MXNetError, match=r"mx\.nd\.Dropout: Invalid Input: 'x'"):
        mx.nd.Dropout(d, mode="x")
