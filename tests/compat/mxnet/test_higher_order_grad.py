"""Higher-order gradients that mxnet 1.9.1's own ``test_higher_order_grad.py`` exercises:
second order through ``clip``, ``Dropout`` and ``radians`` (zeros: their mxnet backward
operators register a zero gradient), ``mx.nd.radians``/``mx.nd.degrees`` themselves, the
``random_arrays``/``random_uniform_arrays`` helpers of ``mx.test_utils``, and the gradients of
``FullyConnected`` taken in turn with respect to the data and the weight, the first of them
differentiated again without ``retain_graph`` (the forward graph stays usable, as mxnet's).
Expected values are mxnet 1.9.1's outputs.
"""

from __future__ import annotations

from collections.abc import Callable

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet.test_utils import random_arrays, random_uniform_arrays

nd = mx.nd
ag = mx.autograd


def _second(f: Callable[[nd.NDArray], nd.NDArray], x: nd.NDArray, hg: nd.NDArray) -> tuple:
    x.attach_grad()
    with ag.record():
        g = ag.grad(f(x), [x], head_grads=hg, create_graph=True)[0]
    g.backward()
    return g.asnumpy(), x.grad.asnumpy()


def test_clip_second_order_is_zeros() -> None:
    x = nd.array([-0.5, 0.1, 0.5, 0.9, 1.5])
    g, gg = _second(lambda v: nd.clip(v, 0.0, 1.0), x, nd.array([1.0, 2, 3, 4, 5]))
    np.testing.assert_array_equal(g, [0.0, 2.0, 3.0, 4.0, 0.0])  # mxnet 1.9.1
    np.testing.assert_array_equal(gg, [0.0, 0.0, 0.0, 0.0, 0.0])  # mxnet 1.9.1


def test_dropout_second_order_is_zeros() -> None:
    g, gg = _second(lambda v: nd.Dropout(v, p=0.0), nd.array([1.0, -2.0, 3.0]), nd.ones((3,)))
    np.testing.assert_array_equal(g, [1.0, 1.0, 1.0])  # mxnet 1.9.1
    np.testing.assert_array_equal(gg, [0.0, 0.0, 0.0])  # mxnet 1.9.1


def test_dropout_in_training_second_order_is_zeros() -> None:
    mx.random.seed(3)
    x = nd.array(np.linspace(-1.0, 1.0, 20))
    g, gg = _second(lambda v: nd.Dropout(v, p=0.5), x, nd.ones((20,)))
    assert set(np.unique(g).tolist()) <= {0.0, 2.0}  # the mask times 1 / (1 - p)
    np.testing.assert_array_equal(gg, np.zeros(20))


def test_radians_values_gradient_and_second_order() -> None:
    x = nd.array([90.0, -45.0, 1.0])
    np.testing.assert_array_equal(  # mxnet 1.9.1 (a float32 factor pi / 180)
        nd.radians(x).asnumpy(),
        np.array([1.5707963705062866, -0.7853981852531433, 0.01745329238474369], np.float32),
    )
    g, gg = _second(nd.radians, x, nd.ones((3,)))
    np.testing.assert_array_equal(g, np.full(3, 0.01745329238474369, np.float32))  # mxnet 1.9.1
    np.testing.assert_array_equal(gg, [0.0, 0.0, 0.0])  # mxnet 1.9.1


def test_degrees_values() -> None:
    np.testing.assert_array_equal(  # mxnet 1.9.1: x * float32(180 / float32(pi))
        nd.degrees(nd.array([1.0, 0.5, -3.0])).asnumpy(),
        np.array([57.2957763671875, 28.64788818359375, -171.8873291015625], np.float32),
    )
    assert nd.degrees(nd.array([1.0], dtype="float64")).asnumpy().tolist() == [57.2957763671875]
    r = nd.radians(nd.array([100, 7], dtype="int32"))
    assert r.dtype == np.int32 and r.asnumpy().tolist() == [1, 0]  # mxnet 1.9.1


def test_degrees_second_order_raises() -> None:
    # mxnet 1.9.1: "Operator _backward_degrees is non-differentiable"
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        g = ag.grad(nd.degrees(x), [x], create_graph=True)[0]
    with pytest.raises(mx.MXNetError):
        g.backward()


def test_scaled_clip_second_order_raises_not_a_number() -> None:
    # mxnet 1.9.1 gives zeros for clip(x) * 3; the layer refuses rather than guess
    x = nd.array([1.0, -2.0, 3.0])
    x.attach_grad()
    with ag.record():
        g = ag.grad(nd.clip(x, 0.0, 1.0) * 3, [x], create_graph=True)[0]
    with pytest.raises(mx.MXNetError, match="no inputs"):
        g.backward()


def test_random_arrays_helpers() -> None:
    np.random.seed(5)
    a = random_arrays((2, 3))
    np.random.seed(5)
    np.testing.assert_array_equal(a, np.random.randn(2, 3).astype(np.float32))
    b, c = random_arrays((4,), ())
    assert b.shape == (4,) and c.shape == () and c.dtype == np.float32
    u = random_uniform_arrays((50,), low=-0.99, high=0.99)
    assert isinstance(u, list) and len(u) == 1 and u[0].dtype == np.float32
    assert (u[0] >= -0.99).all() and (u[0] < 0.99).all()


def test_fully_connected_gradients_in_turn_without_retain() -> None:
    x = nd.arange(6).reshape((2, 3))
    x.attach_grad()
    w = nd.array([[1.0, 2, 3], [4, 5, 6]])
    w.attach_grad()
    with ag.record():
        y = nd.FullyConnected(x, w, no_bias=True, num_hidden=2)
        o_y = nd.arange(4).reshape((2, 2))
        x_grad = ag.grad(y, [x], head_grads=o_y, create_graph=True, retain_graph=True)[0]
        ww = ag.grad(x_grad, [w], head_grads=nd.ones_like(x_grad), create_graph=False)[0]
        w_grad = ag.grad(y, [w], head_grads=o_y, create_graph=True, retain_graph=True)[0]
        xx = ag.grad(w_grad, [x], head_grads=nd.ones_like(w_grad), create_graph=False)[0]
    # mxnet 1.9.1
    np.testing.assert_array_equal(x_grad.asnumpy(), [[4.0, 5, 6], [14, 19, 24]])
    np.testing.assert_array_equal(ww.asnumpy(), [[2.0, 2, 2], [4, 4, 4]])
    np.testing.assert_array_equal(w_grad.asnumpy(), [[6.0, 8, 10], [9, 13, 17]])
    np.testing.assert_array_equal(xx.asnumpy(), [[1.0, 1, 1], [5, 5, 5]])


def test_first_order_backward_still_frees_the_graph() -> None:
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * 2
        z = y * 3
    z.backward()
    with pytest.raises(mx.MXNetError, match="not in a computational graph"):
        z.backward()
