"""Indexing an array of a recorded graph inside ``autograd.record()`` (the crash course's
``c = b[0]``): integers and slices give mxnet 1.9.1's shapes, values and gradients."""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

# mxnet 1.9.1: key -> (shape of x[key], sum of x[key], x.grad of sum(x[key] ** 2) at the
# flattened positions 0, 5, 10, 15, 20) for x = arange(24).reshape(2, 3, 4)
CASES = [
    (0, (3, 4), 66.0, [0.0, 10.0, 20.0, 0.0, 0.0]),
    (-1, (3, 4), 210.0, [0.0, 0.0, 0.0, 30.0, 40.0]),
    ((1, 2), (4,), 86.0, [0.0, 0.0, 0.0, 0.0, 40.0]),
    ((0, 1, 3), (1,), 7.0, [0.0, 0.0, 0.0, 0.0, 0.0]),
    (slice(0, 1), (1, 3, 4), 66.0, [0.0, 10.0, 20.0, 0.0, 0.0]),
    ((slice(None), 1), (2, 4), 92.0, [0.0, 10.0, 0.0, 0.0, 0.0]),
    ((slice(None, None, -1), slice(1, 3)), (2, 2, 4), 216.0, [0.0, 10.0, 20.0, 0.0, 40.0]),
    ((1, slice(None, None, 2), -2), (2,), 36.0, [0.0, 0.0, 0.0, 0.0, 0.0]),
]


@pytest.mark.parametrize("key, shape, total, grad", CASES)
def test_index_in_record_matches_mxnet(key: object, shape: tuple, total: float, grad: list) -> None:
    xv = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = mx.nd.array(xv)
    x.attach_grad()
    with mx.autograd.record():
        y = x[key]
        loss = (y * y).sum()
    loss.backward()
    assert y.shape == shape
    assert y.sum().asscalar() == total
    np.testing.assert_array_equal(y.asnumpy().reshape(-1), xv[key].reshape(-1))
    np.testing.assert_array_equal(x.grad.asnumpy().ravel()[::5], grad)
    expected = np.zeros_like(xv)
    expected[key] = 2 * xv[key]
    np.testing.assert_array_equal(x.grad.asnumpy(), expected)


def test_index_of_a_result_and_errors() -> None:
    v = mx.nd.array([3.0, 4.0])
    v.attach_grad()
    with mx.autograd.record():
        c = (v * 2)[1]
    c.backward()
    assert c.shape == (1,)  # mxnet 1.9.1
    np.testing.assert_array_equal(v.grad.asnumpy(), [0.0, 2.0])
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 2"):
            x[5]
        with pytest.raises(NotImplementedError, match="migration-mxnet"):
            x[mx.nd.array([0, 1])]
        with pytest.raises(IndexError, match="too many indices"):
            x[0, 1, 2]
