"""The mx.nd functions of Gluon's losses (softmax, log_softmax, pick, where, norm, broadcast_*)
and mean/sum with exclude=True: values and gradients against mxnet 1.9.1, gradients against
float64 finite differences, second derivatives through mx.autograd.grad(create_graph=True)."""

from __future__ import annotations

from collections.abc import Callable

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

D = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


@pytest.mark.parametrize(
    ("kw", "shape", "head"),
    [  # mxnet 1.9.1 on arange(24).reshape(2, 3, 4): shape of mean, first sums
        ({"axis": 0, "exclude": True}, (2,), [66.0, 210.0]),
        ({"axis": (0, 2), "exclude": True}, (2, 4), [12.0, 15.0, 18.0, 21.0]),
        ({"axis": (), "exclude": True}, (1,), [276.0]),
        ({"exclude": True}, (1,), [276.0]),
        ({"axis": 1, "exclude": True, "keepdims": True}, (1, 3, 1), [60.0, 92.0, 124.0]),
        ({"axis": -1, "exclude": True}, (4,), [60.0, 66.0, 72.0, 78.0]),
    ],
)
def test_reduce_exclude_as_mxnet(kw: dict, shape: tuple, head: list) -> None:
    x = mx.nd.array(np.arange(24).reshape(2, 3, 4))
    assert mx.nd.mean(x, **kw).shape == shape
    np.testing.assert_array_equal(mx.nd.sum(x, **kw).asnumpy().ravel()[:4], head)
    assert x.sum(**kw).shape == shape


def test_reduce_exclude_nothing_left() -> None:
    v = mx.nd.array([1.0, 2.0, 3.0])
    r = mx.nd.mean(v, axis=0, exclude=True)  # mxnet 1.9.1: (3,) [1. 2. 3.]
    assert r.shape == (3,) and r.asnumpy().tolist() == [1.0, 2.0, 3.0]
    v.attach_grad()
    with mx.autograd.record():
        y = mx.nd.mean(v, axis=0, exclude=True) * 2
    y.backward()
    assert v.grad.asnumpy().tolist() == [2.0, 2.0, 2.0]
    assert mx.nd.sum(mx.nd.array([1, 2], dtype="int32"), axis=0, exclude=True).dtype == np.int32


def test_reduce_exclude_gradient() -> None:
    x = mx.nd.array(np.arange(6.0).reshape(2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.mean(x, axis=0, exclude=True)
    y.backward(mx.nd.array([1.0, 3.0]))
    np.testing.assert_allclose(x.grad.asnumpy(), [[1 / 3] * 3, [1.0] * 3], rtol=1e-6)


@pytest.mark.parametrize(
    ("kw", "index", "ref"),
    [  # mxnet 1.9.1
        ({}, [2.7, -1], [3.0, 4.0]),
        ({"keepdims": True}, [2.7, -1], [[3.0], [4.0]]),
        ({"mode": "wrap"}, [2.7, -1], [3.0, 6.0]),
        ({"axis": 0}, [1, 0, 5], [4.0, 2.0, 6.0]),
    ],
)
def test_pick_as_mxnet(kw: dict, index: list, ref: list) -> None:
    np.testing.assert_array_equal(
        mx.nd.pick(mx.nd.array(D), mx.nd.array(index), **kw).asnumpy(), ref
    )


def test_pick_gradient_as_mxnet() -> None:
    a = mx.nd.array(D)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.pick(a, mx.nd.array([2, 0]))
    y.backward()
    assert a.grad.asnumpy().tolist() == [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]  # mxnet 1.9.1


def test_softmax_values_as_mxnet() -> None:
    d = mx.nd.array(D)
    # mxnet 1.9.1 (its float32 CPU log_softmax is about 5e-6 relative off the exact value,
    # -0.4076059644 for the last element; gradhub's is within float32 rounding of it)
    np.testing.assert_allclose(
        mx.nd.log_softmax(d).asnumpy(),
        [[-2.4076037406921387, -1.4076038599014282, -0.40760383009910583]] * 2,
        rtol=1e-5,
    )
    exact = np.array(D) - np.log(np.exp(np.array(D)).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(mx.nd.log_softmax(d).asnumpy(), exact, rtol=3e-7)
    np.testing.assert_allclose(
        mx.nd.log_softmax(d, axis=0).asnumpy(),
        [[-3.0485873222351074] * 3, [-0.04858732968568802] * 3],
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        mx.nd.softmax(d, temperature=2.0).asnumpy(),
        [[0.18632373213768005, 0.30719590187072754, 0.5064803957939148]] * 2,
        rtol=1e-6,
    )


def test_norm_where_broadcast_as_mxnet() -> None:
    d = mx.nd.array(D)
    # mxnet 1.9.1
    np.testing.assert_allclose(mx.nd.norm(d).asnumpy(), [9.5393915], rtol=1e-6)
    np.testing.assert_allclose(mx.nd.norm(d, axis=1).asnumpy(), [3.7416573, 8.774964], rtol=1e-6)
    assert mx.nd.norm(d, axis=1, keepdims=True).shape == (2, 1)
    assert mx.nd.norm(d, ord=1).asnumpy().tolist() == [21.0]
    assert mx.nd.where(d > 2, d, -d).asnumpy().tolist() == [[-1.0, -2.0, 3.0], [4.0, 5.0, 6.0]]
    assert mx.nd.where(mx.nd.array([1, 0]), d, -d).asnumpy().tolist() == [
        [1.0, 2.0, 3.0],
        [-4.0, -5.0, -6.0],
    ]
    assert mx.nd.broadcast_mul(d, mx.nd.array([[2.0], [3.0]])).asnumpy().tolist() == [
        [2.0, 4.0, 6.0],
        [12.0, 15.0, 18.0],
    ]
    assert mx.nd.broadcast_mul(d, mx.nd.array([1.0, 2.0, 3.0])).asnumpy().tolist() == [
        [1.0, 4.0, 9.0],
        [4.0, 10.0, 18.0],
    ]
    with pytest.raises(mx.MXNetError, match="could not be broadcast"):
        mx.nd.broadcast_mul(d, mx.nd.array([1.0, 2.0]))


def test_broadcast_maximum_ties_as_mxnet() -> None:
    a, b = mx.nd.array([[1.0, 2.0], [3.0, 3.0]]), mx.nd.array([[1.0, 3.0], [3.0, 1.0]])
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = mx.nd.broadcast_maximum(a, b)
    y.backward()
    # mxnet 1.9.1
    assert a.grad.asnumpy().tolist() == [[1.0, 0.0], [1.0, 1.0]]
    assert b.grad.asnumpy().tolist() == [[0.0, 1.0], [0.0, 0.0]]
    assert mx.nd.broadcast_minimum(a, mx.nd.array([2.0])).asnumpy().tolist() == [
        [1.0, 2.0],
        [2.0, 2.0],
    ]


def _fd_check(f: Callable[[mx.nd.NDArray], mx.nd.NDArray], x0: np.ndarray) -> None:
    """The recorded gradient of sum(f(x) * w) against central differences of float64 input."""
    rng = np.random.default_rng(0)
    x = mx.nd.array(x0, dtype="float64")
    w = rng.standard_normal(f(x).shape)
    x.attach_grad()
    with mx.autograd.record():
        y = (f(x) * mx.nd.array(w, dtype="float64")).sum()
    y.backward()
    num = np.zeros_like(x0)
    eps = 1e-6
    for i in np.ndindex(x0.shape):
        xp, xm = x0.copy(), x0.copy()
        xp[i] += eps
        xm[i] -= eps
        fp = (f(mx.nd.array(xp, dtype="float64")).asnumpy() * w).sum()
        fm = (f(mx.nd.array(xm, dtype="float64")).asnumpy() * w).sum()
        num[i] = (fp - fm) / (2 * eps)
    np.testing.assert_allclose(x.grad.asnumpy(), num, rtol=1e-6, atol=1e-8)


X0 = np.array([[0.3, -1.2, 2.0, 0.5], [1.1, 0.4, -0.7, -2.2], [0.0, 0.9, 1.6, -0.1]])


@pytest.mark.parametrize(
    "f",
    [
        lambda x: mx.nd.softmax(x, axis=1),
        lambda x: mx.nd.log_softmax(x, axis=0, temperature=1.5),
        lambda x: mx.nd.pick(mx.nd.log_softmax(x), mx.nd.array([3, 0, 1]), keepdims=True),
        lambda x: mx.nd.norm(x, axis=1),
        lambda x: mx.nd.where(x > 0.2, x * x, -x),
        lambda x: mx.nd.broadcast_mul(x, mx.nd.array([[2.0], [3.0], [-1.0]], dtype="float64")),
        lambda x: mx.nd.broadcast_div(mx.nd.array([1.0, 2.0, 3.0, 4.0], dtype="float64"), x + 5),
        lambda x: mx.nd.mean(x * x, axis=1, exclude=True),
    ],
)
def test_gradients_against_finite_differences(f: Callable) -> None:
    _fd_check(f, X0)


def test_second_derivative_log_softmax_pick() -> None:
    # d/dx_j of -log_softmax(x)[k] = softmax(x)_j - [j == k]; second: diag(p) - p p^T
    x0 = np.array([[0.3, -1.2, 2.0]])
    x = mx.nd.array(x0, dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = -mx.nd.pick(mx.nd.log_softmax(x), mx.nd.array([1]))
        (g,) = mx.autograd.grad(y, [x], create_graph=True)
        z = (g * mx.nd.array([[1.0, 2.0, 3.0]], dtype="float64")).sum()
    z.backward()
    p = np.exp(x0[0]) / np.exp(x0[0]).sum()
    np.testing.assert_allclose(g.asnumpy()[0], p - np.eye(3)[1], rtol=1e-10)
    hess = np.diag(p) - np.outer(p, p)
    np.testing.assert_allclose(x.grad.asnumpy()[0], hess @ [1.0, 2.0, 3.0], rtol=1e-10)


def test_errors() -> None:
    d = mx.nd.array(D)
    with pytest.raises(TypeError, match=r"mx.nd.pick: index must be an NDArray"):
        mx.nd.pick(d, [1, 2])
    with pytest.raises(mx.MXNetError, match=r"mx.nd.pick: index of shape"):
        mx.nd.pick(d, mx.nd.array([1, 2, 3]))
    with pytest.raises(mx.MXNetError, match="Invalid Input: 'raise'"):
        mx.nd.pick(d, mx.nd.array([1, 2]), mode="raise")
    with pytest.raises(mx.MXNetError, match=r"mx.nd.log_softmax: axis 2 is out of range"):
        mx.nd.log_softmax(d, axis=2)
    with pytest.raises(NotImplementedError, match=r"mx.nd.softmax: out="):
        mx.nd.softmax(d, out=d)
    with pytest.raises(mx.MXNetError, match=r"mx.nd.where: condition of shape"):
        mx.nd.where(mx.nd.array([1, 0, 1]), d, d)


@pytest.mark.parametrize(
    ("data", "dtype", "kw", "want"),
    [  # printed by mxnet 1.9.1
        ([3, 4], "int32", {}, [4]),
        ([3, 4], "uint8", {"axis": 0}, [4]),
        ([3, 4], "int8", {"ord": 1}, [7]),
        ([[1, 2, 6], [9, -2, 0]], "int32", {}, [9]),
        ([[1, 2, 6], [9, -2, 0]], "int64", {"axis": 0}, [9, 2, 6]),
        ([[1, 2, 6], [9, -2, 0]], "int32", {"ord": 1}, [20]),
        ([[1, 2, 6], [9, -2, 0]], "int32", {"ord": 1, "axis": -1}, [9, 11]),
    ],
)
def test_norm_of_integer_arrays_as_mxnet(data: list, dtype: str, kw: dict, want: list) -> None:
    # regression: integer arrays gave the float64 norm (5.0 for [3, 4]) and ord=1 an int64 sum;
    # mxnet 1.9.1 computes both in the array's dtype, the L2 norm by its scaled kernel whose
    # integer divisions truncate
    got = mx.nd.norm(mx.nd.array(data, dtype=dtype), **kw)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.asnumpy(), want)
    kept = mx.nd.norm(mx.nd.array(data, dtype=dtype), keepdims=True, **kw)
    assert kept.ndim == np.asarray(data).ndim
