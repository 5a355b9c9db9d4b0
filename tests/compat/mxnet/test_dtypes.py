"""dtypes in the mxnet layer: mixed dtypes raise in arithmetic and in ``bind``, and scalar operands
take the array's dtype, as in mxnet 1.9.1.
"""

from __future__ import annotations

from collections.abc import Callable

import gradhub_compat.mxnet as mx
import numpy as np
import pytest


def test_mixed_dtypes_raise_in_arithmetic_and_bind() -> None:
    i = mx.nd.array([3, 4], dtype="int32")
    f = mx.nd.array([0.5, 0.5])
    d = mx.nd.array([1e-9, 1e-9], dtype="float64")
    for fn, pat in (
        (lambda: i + f, r"NDArray \+: .* int32 and float32"),
        (lambda: f + d, r"NDArray \+: .* float32 and float64"),
        (lambda: f * d, r"NDArray \*: .* float32 and float64"),
    ):
        with pytest.raises(TypeError, match=pat):
            fn()
    c = mx.nd.array([1, 2])
    with pytest.raises(TypeError, match=r"NDArray \+=: .* float32 and float64"):
        c += d
    np.testing.assert_array_equal(c.asnumpy(), [1.0, 2.0])
    with pytest.raises(TypeError, match="NDArray \\+: type ndarray not supported"):
        _ = c + np.array([1.0, 2.0])
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    with pytest.raises(
        TypeError,
        match=r"bind: operator _Mul '_mul\d+' .* 'a' is float64 and "
        r"'b' is float32",
    ):
        (a * b).bind(mx.cpu(), {"a": mx.nd.array([1.5], dtype="float64"), "b": mx.nd.array([2])})


def test_scalar_operands_take_the_arrays_dtype() -> None:
    i = mx.nd.array([1, 2], dtype="int32")
    n = mx.nd.array([-1, -2], dtype="int32")
    # mxnet 1.9.1 values: the scalar is converted to int32 first (1.5 -> 1, 1.7 -> 1)
    cases: list[tuple[Callable[[], mx.NDArray], list[int]]] = [
        (lambda: i + 0.5, [1, 2]),
        (lambda: i * 1.5, [1, 2]),
        (lambda: i + 1.7, [2, 3]),
        (lambda: n + 1.7, [0, -1]),
        (lambda: n * 1.5, [-1, -2]),
        (lambda: 1.5**i, [1, 1]),
        (lambda: 5.5 - i, [4, 3]),
        (lambda: 7.9 / i, [7, 3]),
        (lambda: i / 2, [0, 1]),
    ]
    for fn, expect in cases:
        r = fn()
        assert r.dtype == np.int32 and r.asnumpy().tolist() == expect
    j = mx.nd.array([1, 2], dtype="int32")
    j *= 1.5
    assert j.asnumpy().tolist() == [1, 2] and j.dtype == np.int32
    j += 1.7
    assert j.asnumpy().tolist() == [2, 3]
    j /= 2
    assert j.asnumpy().tolist() == [1, 1]
    r = mx.nd.array([1, 2]) * np.float64(0.1)
    assert r.dtype == np.float32


def test_division_by_a_number_divides_everywhere_as_mxnet() -> None:
    """mxnet's ``_div_scalar`` divides each element by the number (and the gradient by it too);
    gradhub's own ``/`` multiplies by the reciprocal, which differs in the last bit of some
    elements. NDArrays (plain, recorded, in place) and Symbols all divide."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 16)).astype(np.float32)
    g = rng.standard_normal((16, 16)).astype(np.float32)
    want, want_g = x / np.float32(3.0), g / np.float32(3.0)
    assert not np.array_equal(want, x * np.float32(1 / 3))  # (the two forms differ here)
    np.testing.assert_array_equal((mx.nd.array(x) / 3.0).asnumpy(), want)
    a = mx.nd.array(x)
    a /= 3.0
    np.testing.assert_array_equal(a.asnumpy(), want)
    a = mx.nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = a / 3.0
    y.backward(mx.nd.array(g))
    np.testing.assert_array_equal(y.asnumpy(), want)
    np.testing.assert_array_equal(a.grad.asnumpy(), want_g)
    ex = (mx.sym.Variable("data") / 3.0).simple_bind(mx.cpu(), data=(16, 16))
    np.testing.assert_array_equal(ex.forward(is_train=True, data=mx.nd.array(x))[0].asnumpy(), want)
    ex.backward(mx.nd.array(g))
    np.testing.assert_array_equal(ex.grad_dict["data"].asnumpy(), want_g)
