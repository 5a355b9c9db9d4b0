"""The mxnet layer's ``mx.autograd`` over NDArrays: record/pause and the mode switches,
``attach_grad``/``mark_variables`` with grad_req write/add/null, ``backward`` with head gradients,
``autograd.grad`` (higher order through ``create_graph``) and mxnet's errors. The expected values
were printed by mxnet 1.9.1; gradients are also checked against float64 finite differences.
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet import autograd as ag
from gradhub_compat.mxnet import nd


def test_modes_as_mxnet() -> None:
    assert (ag.is_recording(), ag.is_training()) == (False, False)
    with ag.record():
        assert (ag.is_recording(), ag.is_training()) == (True, True)
        with ag.pause():
            assert (ag.is_recording(), ag.is_training()) == (False, False)
        with ag.pause(train_mode=True):
            assert (ag.is_recording(), ag.is_training()) == (False, True)
    with ag.record(train_mode=False):
        assert (ag.is_recording(), ag.is_training()) == (True, False)
    with ag.train_mode():
        assert (ag.is_recording(), ag.is_training()) == (False, True)
        with ag.predict_mode():
            assert (ag.is_recording(), ag.is_training()) == (False, False)
    assert ag.set_recording(True) is False
    assert ag.set_recording(False) is True
    assert ag.set_training(True) is False
    assert ag.set_training(False) is True
    assert (ag.is_recording(), ag.is_training()) == (False, False)


def test_attach_grad_backward_and_head_gradient() -> None:
    x = nd.array([1.0, 2.0, 3.0])
    assert x.grad is None
    x.attach_grad()
    np.testing.assert_array_equal(x.grad.asnumpy(), [0, 0, 0])
    with ag.record():
        y = x * x * 2 + 1
        with ag.pause():
            z = x * 5  # not recorded
    assert z._var is None
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [4, 8, 12])  # mxnet 1.9.1
    with ag.record():
        y = x * x
    y.backward(nd.array([1.0, 10.0, 100.0]))
    np.testing.assert_array_equal(x.grad.asnumpy(), [2, 40, 600])  # mxnet 1.9.1
    assert x.grad.dtype == np.float32


def test_second_backward_needs_retain_graph() -> None:
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with ag.record():
        y = x * x
    y.backward()
    with pytest.raises(mx.base.MXNetError, match="not in a computational graph"):
        y.backward()
    with ag.record():
        y = x * x
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2, 4, 6])  # mxnet 1.9.1 (write)
    with ag.record():
        y = nd.sin(x)
        z = y * 2
    z.backward()  # frees the graph of y too: mxnet 1.9.1 raises the same error
    with pytest.raises(mx.base.MXNetError, match="not in a computational graph"):
        y.backward()


def test_grad_req_add_and_null() -> None:
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with ag.record():
            y = x * x
        y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [4, 8, 12])  # mxnet 1.9.1
    u = nd.array([1.0, 2.0])
    u.attach_grad(grad_req="null")
    with ag.record():
        w = u * 3
    with pytest.raises(mx.base.MXNetError, match="no inputs in computation graph"):
        w.backward()
    with pytest.raises(ValueError, match="attach_grad: grad_req must be one of"):
        u.attach_grad(grad_req="bogus")


def test_mark_variables_and_autograd_backward() -> None:
    a, b = nd.array([1.0, 2.0]), nd.array([3.0, 4.0])
    ga, gb = nd.zeros((2,)), nd.zeros((2,))
    ag.mark_variables([a, b], [ga, gb], grad_reqs=["write", "add"])
    for _ in range(2):
        with ag.record():
            c = a * b
        c.backward()
    # mxnet 1.9.1: ga [3, 4] (written), gb [2, 4] (added twice)
    np.testing.assert_array_equal(ga.asnumpy(), [3, 4])
    np.testing.assert_array_equal(gb.asnumpy(), [2, 4])
    with ag.record():
        c = a * b
        d = a + b
    ag.backward([c, d], [nd.array([1.0, 1.0]), nd.array([10.0, 10.0])])
    np.testing.assert_array_equal(ga.asnumpy(), [13, 14])  # mxnet 1.9.1
    np.testing.assert_array_equal(gb.asnumpy(), [13, 16])
    with pytest.raises(mx.base.MXNetError, match="1 variables but 2 gradients"):
        ag.mark_variables([a], [ga, gb])
    with pytest.raises(mx.base.MXNetError, match="same length"):
        ag.backward([c], [ga, gb])


def test_backward_with_none_head_grad_and_shape_error() -> None:
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y, z = x * 2, x * 3
    ag.backward([y, z], [None, nd.array([1.0, 2.0])])
    np.testing.assert_array_equal(x.grad.asnumpy(), [5, 8])  # mxnet 1.9.1
    with ag.record():
        y = x * 2
    with pytest.raises(mx.base.MXNetError, match=r"head_grads\[0\] has shape \(3,\)"):
        y.backward(nd.array([1.0, 2.0, 3.0]))


def test_not_recorded_and_unmarked_raise() -> None:
    a = nd.array([1.0, 2.0])
    a.attach_grad()
    with pytest.raises(mx.base.MXNetError, match="not in a computational graph"):
        (a * 2).backward()  # outside record()
    v = nd.array([1.0, 2.0])
    with ag.record():
        w = v * 2
    with pytest.raises(mx.base.MXNetError, match="not in a computational graph"):
        w.backward()
    with ag.record():
        y = a * 2
    with pytest.raises(mx.base.MXNetError, match="1-th variable because it does not require"):
        ag.grad(y, [v])


def test_inplace_in_record_raises_as_mxnet() -> None:
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * 2
        with pytest.raises(mx.base.MXNetError, match=r"NDArray \+=: Assigning to NDArrays"):
            y += 1
        with pytest.raises(mx.base.MXNetError, match="Assigning to NDArrays"):
            x[:] = 3
        first = y[0]  # mxnet 1.9.1: a recorded slice of shape (1,)
    assert first.shape == (1,)
    first.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2, 0])
    x[:] = 3  # outside record: allowed
    np.testing.assert_array_equal(x.asnumpy(), [3, 3])


def test_operators_and_functions_match_mxnet() -> None:
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x / 2 - 3 + x**2 + 1 / x - x
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [0.5, 3.25])  # mxnet 1.9.1
    with ag.record():
        y = (
            nd.exp(x)
            + nd.log(x)
            + nd.sin(x)
            + nd.relu(x)
            + nd.sigmoid(x)
            + nd.tanh(x)
            + nd.sqrt(x)
            + nd.square(x)
        )
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [8.37517, 13.002108], rtol=1e-6)  # mxnet
    m = nd.array([[1.0, 2.0], [3.0, 4.0]])
    m.attach_grad()
    with ag.record():
        y = nd.dot(m, m) + nd.mean(m)
    y.backward()
    np.testing.assert_array_equal(m.grad.asnumpy(), [[8, 12], [10, 14]])  # mxnet 1.9.1
    with ag.record():
        s = x.sum()
    assert s.shape == (1,)  # mxnet: a full reduction has shape (1,)
    s.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [1, 1])
    assert nd.sum(nd.ones((2, 3)), axis=1, keepdims=True).shape == (2, 1)
    assert nd.dot(nd.ones((3,)), nd.ones((3,))).shape == (1,)
    with pytest.raises(mx.base.MXNetError, match=r"dot shape error: \[3\] X \[2\]"):
        nd.dot(nd.ones((3,)), nd.ones((2,)))


def test_detach_stops_the_gradient() -> None:
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * x
        z = y * x.detach()
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2, 8])  # mxnet 1.9.1


def test_grad_returns_list_and_keeps_grad_arrays() -> None:
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with ag.record():
        y = x * x * x
    dx = ag.grad(y, x)
    assert isinstance(dx, list) and len(dx) == 1
    np.testing.assert_array_equal(dx[0].asnumpy(), [3, 12, 27])  # mxnet 1.9.1
    np.testing.assert_array_equal(x.grad.asnumpy(), [0, 0, 0])
    with ag.record():
        y = x * x * x
    (g,) = ag.grad([y], [x], head_grads=[nd.array([1.0, 0.5, 2.0])])
    np.testing.assert_array_equal(g.asnumpy(), [3, 6, 54])


def test_higher_order_through_create_graph() -> None:
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with ag.record():
        y = nd.sin(x)
        dx = ag.grad(y, [x], create_graph=True, retain_graph=True)[0]
    dx.backward()
    # mxnet 1.9.1: [-0.84147096, -0.9092974, -0.14112] (d/dx cos x = -sin x)
    np.testing.assert_allclose(x.grad.asnumpy(), [-0.84147096, -0.9092974, -0.14112], rtol=1e-6)
    # third order of x^4 against the known value 24 x (float64)
    z = nd.array([0.5, -1.5], dtype="float64")
    z.attach_grad()
    with ag.record():
        d1 = ag.grad(z * z * z * z, [z], create_graph=True)[0]
        d2 = ag.grad(d1, [z], create_graph=True)[0]
    d2.backward()
    np.testing.assert_allclose(z.grad.asnumpy(), [12.0, -36.0])


def test_gradient_against_finite_differences() -> None:
    rng = np.random.default_rng(0)
    a0, b0 = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    a, b = nd.array(a0, dtype="float64"), nd.array(b0, dtype="float64")
    a.attach_grad()
    b.attach_grad()

    def f(p: np.ndarray, q: np.ndarray) -> float:
        return float(np.sum(np.tanh(p @ q) * np.exp(-(p @ q))))

    with ag.record():
        h = nd.dot(a, b)
        y = nd.sum(nd.tanh(h) * nd.exp(-h))
    y.backward()
    eps = 1e-6
    for arr, base, other in ((a, a0, b0), (b, b0, a0)):
        num = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            d = np.zeros_like(base)
            d[i] = eps
            if arr is a:
                num[i] = (f(base + d, other) - f(base - d, other)) / (2 * eps)
            else:
                num[i] = (f(other, base + d) - f(other, base - d)) / (2 * eps)
        np.testing.assert_allclose(arr.grad.asnumpy(), num, rtol=1e-6, atol=1e-9)


def test_unsupported_parts_raise_not_implemented() -> None:
    with pytest.raises(NotImplementedError, match=r"get_symbol .*migration-mxnet"):
        ag.get_symbol(nd.ones((1,)))
    with pytest.raises(NotImplementedError, match=r"stype='row_sparse'.*migration-mxnet"):
        nd.ones((2,)).attach_grad(stype="row_sparse")
    x = nd.ones((2,))
    x.attach_grad()
    with (
        ag.record(),
        pytest.raises(NotImplementedError, match=r"mx.nd.exp: out= .*migration-mxnet"),
    ):
        # (out= outside autograd.record works: tests/compat/mxnet/test_nd_out.py)
        nd.exp(x, out=nd.ones((2,)))
    with pytest.raises(AttributeError, match=r"mx.nd.Custom is not part .*migration-mxnet"):
        nd.Custom  # noqa: B018


def test_backward_inside_record_and_retain_graph_with_add() -> None:
    x = mx.nd.ones((2, 2))
    dx = mx.nd.zeros((2, 2))
    ag.mark_variables([x], [dx], grad_reqs="add")
    with ag.record():
        y = x + 1
        y.backward()
    np.testing.assert_array_equal(dx.asnumpy(), np.ones((2, 2)))
    dx[:] = 0
    with ag.record():
        y = x + 1
        y.backward(retain_graph=True)
        y.backward()
    np.testing.assert_array_equal(dx.asnumpy(), 2 * np.ones((2, 2)))
    with ag.record():
        y = x + 1
        y.backward()
        with pytest.raises(mx.base.MXNetError, match="retain_graph=True"):
            y.backward()


def test_results_have_no_grad_and_like_constructors() -> None:
    x = nd.zeros((3, 3))
    assert x.stype == "default" and x.tostype("default") is x
    x.attach_grad()
    with ag.record():
        y = x * 2
        assert y.grad is None
        y.backward(out_grad=nd.ones_like(y))
    np.testing.assert_array_equal(x.grad.asnumpy(), 2 * np.ones((3, 3)))
    z = nd.zeros_like(nd.ones((2,), dtype="float64"))
    assert z.dtype == np.float64 and z.shape == (2,)
    assert nd.uniform(shape=(4, 5)).shape == (4, 5)
    with pytest.raises(NotImplementedError, match="stype='csr'"):
        x.tostype("csr")


def test_binary_gradients_are_the_known_ones() -> None:
    x, y = nd.uniform(shape=(4, 5)), nd.uniform(shape=(4, 5))
    gx, gy = nd.zeros_like(x), nd.zeros_like(y)
    ag.mark_variables([x, y], [gx, gy])
    with ag.record():
        out = x + x * y
    ag.backward([out])
    np.testing.assert_array_equal(out.asnumpy(), (x + x * y).asnumpy())
    np.testing.assert_array_equal(gx.asnumpy(), (nd.ones(x.shape) + y).asnumpy())
    np.testing.assert_array_equal(gy.asnumpy(), x.asnumpy())
    with ag.record():
        e = nd.exp(x)
    e.backward()
    np.testing.assert_array_equal(gx.asnumpy(), nd.exp(x).asnumpy())


def test_elemwise_add_second_order_as_mxnet() -> None:
    x = nd.ones((1,))
    x.attach_grad()
    with ag.record():
        z = nd.elemwise_add(nd.exp(x), x)
    (dx,) = ag.grad(z, [x], create_graph=True)
    # mxnet 1.9.1: 3.7182817 and 2.7182817 (numpy's float32 exp here is within one ulp)
    np.testing.assert_allclose(dx.asnumpy(), [3.7182817], rtol=1e-6)
    dx.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.7182817], rtol=1e-6)
    with pytest.raises(mx.base.MXNetError, match=r"elemwise_add: Incompatible attr"):
        nd.elemwise_add(nd.ones((2,)), nd.ones((3,)))


def test_broadcasting_reductions_reshape_and_transpose_as_mxnet() -> None:
    x = nd.array(np.arange(6).reshape(2, 3))
    b = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    b.attach_grad()
    with ag.record():
        y = (x * b + b / (x + 1)) ** 2
        z = nd.sum(y, axis=1) - nd.mean(y)
        w = z.reshape((1, 2)).T * 3
    w.backward()
    # mxnet 1.9.1 (b's gradient is summed over the broadcast axis)
    np.testing.assert_allclose(
        x.grad.asnumpy(), [[0.0, 18.0, 74.6667], [12.1875, 64.512, 180.8333]], rtol=1e-5
    )
    np.testing.assert_allclose(b.grad.asnumpy(), [46.25, 159.12, 385.6666], rtol=1e-5)
    x2 = nd.array([[1.0, 2.0], [3.0, 4.0]])
    x2.attach_grad()
    with ag.record():
        q = (
            nd.dot(x2, x2, transpose_a=True) * nd.relu(x2 - 2)
            + nd.sigmoid(x2).astype("float32")
            + x2.copy()
        )
    q.backward(nd.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(
        x2.grad.asnumpy(), [[7.1966, 37.21], [57.1355, 157.0706]], rtol=1e-5
    )  # mxnet 1.9.1
