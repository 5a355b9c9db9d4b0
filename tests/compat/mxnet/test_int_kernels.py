"""Integer arrays keep their dtype through every operator, with mxnet's integer kernels: sums
wrap around in the dtype, ``mean`` divides the wrapped sum by the element count converted to
the dtype (truncated), ``/`` truncates toward zero, an operator's number is converted to the
dtype first (``int32 * 1.5`` multiplies by 1), powers and functions such as ``exp`` are computed
in double precision and converted back (NaN and values beyond int32 give int32's minimum). The
expected values were printed by mxnet 1.9.1 for the same inputs."""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

INT_MIN = -2147483648
X = [[1, -2], [3, 4], [-3, 20]]

# mxnet 1.9.1 on nd.array(X, dtype="int32"), flattened
NDARRAY = [
    ("exp", lambda x: mx.nd.exp(x), [2, 0, 20, 54, 0, 485165195]),
    ("log", lambda x: mx.nd.log(x), [0, INT_MIN, 1, 1, INT_MIN, 2]),
    ("tanh", lambda x: mx.nd.tanh(x), [0, 0, 0, 0, 0, 1]),
    ("sigmoid", lambda x: mx.nd.sigmoid(x), [0, 0, 0, 0, 0, 0]),
    ("sqrt", lambda x: mx.nd.sqrt(x), [1, INT_MIN, 1, 2, INT_MIN, 4]),
    ("relu", lambda x: mx.nd.relu(x), [1, 0, 3, 4, 0, 20]),
    ("square", lambda x: mx.nd.square(x), [1, 4, 9, 16, 9, 400]),
    ("sum", lambda x: mx.nd.sum(x), [23]),
    ("sum0", lambda x: mx.nd.sum(x, axis=0), [1, 22]),
    ("mean", lambda x: mx.nd.mean(x), [3]),
    ("mean1", lambda x: mx.nd.mean(x, axis=1), [0, 3, 8]),
    ("mul1.5", lambda x: x * 1.5, [1, -2, 3, 4, -3, 20]),
    ("div2", lambda x: x / 2, [0, -1, 1, 2, -1, 10]),
    ("div-2", lambda x: x / -2, [0, 1, -1, -2, 1, -10]),
    ("rdiv", lambda x: 2 / x, [2, -1, 0, 0, 0, 0]),
    ("pow0.5", lambda x: x**0.5, [1, 1, 1, 1, 1, 1]),
    ("add1.7", lambda x: x + 1.7, [2, -1, 4, 5, -2, 21]),
]


@pytest.mark.parametrize(
    "f,expected", [(f, e) for _, f, e in NDARRAY], ids=[n for n, *_ in NDARRAY]
)
def test_ndarray_int32_as_mxnet(f: object, expected: list[int]) -> None:
    r = f(mx.nd.array(X, dtype="int32"))  # type: ignore[operator]
    assert r.dtype is np.int32
    np.testing.assert_array_equal(r.asnumpy().ravel(), expected)


def test_small_dtypes_wrap_as_mxnet() -> None:
    u = mx.nd.array(np.abs(X), dtype="uint8")
    for r, expected in (
        (mx.nd.exp(u), [2, 7, 20, 54, 20, 139]),  # exp(20) = 485165195 wraps to 139
        (mx.nd.square(u), [1, 4, 9, 16, 9, 144]),
        (mx.nd.sum(u), [33]),
        (mx.nd.mean(u, axis=1), [1, 3, 11]),
        (u / -2, [0, 0, 0, 0, 0, 0]),  # -2 becomes 254
        (10 - u, [9, 8, 7, 6, 7, 246]),
    ):
        assert r.dtype is np.uint8
        np.testing.assert_array_equal(r.asnumpy().ravel(), expected)
    # 300 x 200: the sum wraps (60000 -> 96), mean divides by 300 as uint8 (44): 2
    y = mx.nd.array(np.full(300, 200), dtype="uint8")
    np.testing.assert_array_equal(mx.nd.sum(y).asnumpy(), [96])
    np.testing.assert_array_equal(mx.nd.mean(y).asnumpy(), [2])
    big = mx.nd.array([2**30] * 3, dtype="int32")
    np.testing.assert_array_equal(mx.nd.sum(big).asnumpy(), [-1073741824])
    np.testing.assert_array_equal(mx.nd.mean(big).asnumpy(), [-357913941])
    np.testing.assert_array_equal(mx.nd.mean(mx.nd.array([-3, -4], dtype="int32")).asnumpy(), [-3])


def test_integer_powers_as_mxnet() -> None:
    # mxnet 1.9.1: a negative integer power truncates (numpy refuses it)
    np.testing.assert_array_equal((mx.nd.array([2, 3], dtype="int32") ** -1).asnumpy(), [0, 0])
    np.testing.assert_array_equal((2 ** mx.nd.array([1, -2], dtype="int32")).asnumpy(), [2, 0])
    x = mx.nd.array([0, -1, 1, 2, 3, -3], dtype="int32")
    for r, expected in (
        (x**-1, [INT_MIN, -1, 1, 0, 0, 0]),
        (x**31, [0, -1, 1, INT_MIN, INT_MIN, INT_MIN]),
        (2**x, [1, 0, 2, 4, 8, 0]),
        (x**x, [1, -1, 1, 4, 27, 0]),
        ((-2) ** x, [1, 0, -2, 4, -8, 0]),
    ):
        assert r.dtype is np.int32
        np.testing.assert_array_equal(r.asnumpy(), expected)
    u = mx.nd.array([0, 1, 2, 3], dtype="uint8")
    np.testing.assert_array_equal((u**-1).asnumpy(), [0, 1, 0, 0])
    np.testing.assert_array_equal((u**9).asnumpy(), [0, 1, 0, 227])


def test_symbol_int32_as_mxnet() -> None:
    a = mx.sym.Variable("a")
    x = mx.nd.array([0, -1, 1, 2, 3, -3], dtype="int32")
    outs = [
        (a * 1.5, [0, -1, 1, 2, 3, -3]),
        (a / 2, [0, 0, 0, 1, 1, -1]),
        (mx.sym.mean(a, axis=0), [0]),
        (mx.sym.exp(a), [1, 0, 2, 7, 20, 0]),
        (a**-1, [INT_MIN, -1, 1, 0, 0, 0]),
        (2**a, [1, 0, 2, 4, 8, 0]),
        (a + 1.7, [1, 0, 2, 3, 4, -2]),
        (3 - a, [3, 4, 2, 1, 0, 6]),
        (mx.sym.sum(a), [2]),
        (mx.sym.square(a), [0, 1, 1, 4, 9, 9]),
        (a / (a + 10), [0, 0, 0, 0, 0, 0]),
        (mx.sym.sqrt(a), [0, INT_MIN, 1, 1, 1, INT_MIN]),
        (mx.sym.broadcast_power(a, a), [1, -1, 1, 4, 27, 0]),
    ]
    net = mx.sym.Group([s for s, _ in outs])
    assert [t.__name__ for t in net.infer_type(a="int32")[1]] == ["int32"] * len(outs)
    ex = net.bind(mx.cpu(), {"a": x}, grad_req="null")
    for _ in range(2):  # a second forward gives the same
        for o, (_, expected) in zip(ex.forward(), outs):
            assert o.dtype is np.int32
            np.testing.assert_array_equal(o.asnumpy(), expected)
    # the repro's 2-D case: mean over axis 0 of [[1, -2], [3, 4]] is [2, 1]
    m = mx.sym.mean(a, axis=0).bind(
        mx.cpu(), {"a": mx.nd.array([[1, -2], [3, 4]], dtype="int32")}, grad_req="null"
    )
    np.testing.assert_array_equal(m.forward()[0].asnumpy(), [2, 1])
