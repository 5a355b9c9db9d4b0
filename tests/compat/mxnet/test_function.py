"""The mxnet layer's ``mx.autograd.Function`` (user-defined forward/backward on NDArrays):
values and gradients printed by mxnet 1.9.1 for the same function and inputs, also checked
against float64 finite differences; one call per instance and the errors of a bad backward."""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest


class DivMul(mx.autograd.Function):
    def forward(self, x: mx.NDArray, y: mx.NDArray) -> tuple[mx.NDArray, mx.NDArray]:
        assert not mx.autograd.is_recording()  # forward is not recorded (as mxnet)
        self.save_for_backward(x, y)
        return x / y, x * y

    def backward(self, dm: mx.NDArray, dn: mx.NDArray) -> tuple[mx.NDArray, mx.NDArray]:
        x, y = self.saved_tensors
        return dm / y + dn * y, dn * x - dm * x / y / y


def _run(dtype: str) -> tuple[mx.NDArray, ...]:
    x = mx.nd.array([1.0, 2.0, 3.0], dtype=dtype)
    y = mx.nd.array([0.5, 4.0, -2.0], dtype=dtype)
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        m, n = DivMul()(x, y)
        z = (m * 3 + n * n).sum()
    z.backward()
    return m, n, x.grad, y.grad


def test_function_values_and_gradients_as_mxnet() -> None:
    m, n, gx, gy = _run("float32")
    # mxnet 1.9.1
    assert m.asnumpy().tolist() == [2.0, 0.5, -1.5]
    assert n.asnumpy().tolist() == [0.5, 8.0, -6.0]
    assert gx.asnumpy().tolist() == [6.5, 64.75, 22.5]
    assert gy.asnumpy().tolist() == [-11.0, 31.625, -38.25]


def test_function_gradient_against_finite_differences() -> None:
    _, _, gx, gy = _run("float64")

    def f(x: np.ndarray, y: np.ndarray) -> float:
        return float((3 * x / y + (x * y) ** 2).sum())

    x0, y0 = np.array([1.0, 2.0, 3.0]), np.array([0.5, 4.0, -2.0])
    eps = 1e-6
    for g, which in ((gx, 0), (gy, 1)):
        num = []
        for i in range(3):
            e = np.zeros(3)
            e[i] = eps
            a = (x0 + e, y0) if which == 0 else (x0, y0 + e)
            b = (x0 - e, y0) if which == 0 else (x0, y0 - e)
            num.append((f(*a) - f(*b)) / (2 * eps))
        np.testing.assert_allclose(g.asnumpy(), num, rtol=1e-6)


def test_function_is_called_once_and_checks_backward() -> None:
    x = mx.nd.array([1.0, 2.0])
    f = DivMul()
    outs = f(x, x)  # not recording: the outputs of forward, no graph
    assert isinstance(outs, tuple) and len(outs) == 2
    with pytest.raises(AssertionError, match="Each Function instance can only be called once"):
        f(x, x)

    class Bad(mx.autograd.Function):
        def forward(self, a: mx.NDArray, b: mx.NDArray) -> mx.NDArray:
            return a * b

        def backward(self, dy: mx.NDArray) -> mx.NDArray:
            return dy

    x.attach_grad()
    with mx.autograd.record():
        y = Bad()(x, x)
    with pytest.raises(Exception, match="Expecting 2 got 1"):
        y.backward()
