"""chainer's dtype rule in the chainer layer: constant operands are cast to the Variable's dtype,
Variables of different dtypes are refused, and the native API keeps numpy's promotion. Checked
against chainer 7.8.1.
"""

from __future__ import annotations

import operator

import gradhub as gh
import gradhub.optim
import gradhub_compat.chainer.functions as F
import numpy as np
import pytest
from compat.chainer.helpers import _v
from gradhub_compat.chainer import Variable


def test_constants_are_cast_to_the_variable_dtype() -> None:
    x = _v([[1.0, 2.0], [3.0, 4.0]])
    consts = [np.ones((2, 2)), np.ones((2, 2), np.int32), np.array(2.0), np.float64(2.0), 2.0]
    for c in consts:
        for r in (x + c, c + x, x - c, c - x, x * c, c * x, x / c, c / x, x**c, c**x):
            assert type(r) is Variable
            assert r.dtype == np.float32, (c, r)
    assert (x @ np.ones((2, 2))).dtype == np.float32
    np.testing.assert_allclose((x + np.full((2, 2), 0.1)).array, x.array + np.float32(0.1))
    loss = F.sum((x - np.ones((2, 2))) ** 2)
    loss.backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad, 2 * (x.array - 1))


def test_variables_of_different_dtypes_are_refused() -> None:
    x = _v([1.0, 2.0])
    d = Variable(np.ones(2))
    for op in (operator.add, operator.sub, operator.mul, operator.truediv, operator.pow):
        with pytest.raises(TypeError, match=r"chainer Variable\.__\w+__: .*float32 and float64"):
            op(x, d)
    with pytest.raises(TypeError, match=r"chainer F\.maximum: .*float32 and float64"):
        F.maximum(x, d)
    assert F.mean_squared_error(x, np.ones(2)).dtype == np.float32
    assert F.linear(Variable(np.ones((1, 2), np.float32)), np.ones((3, 2))).dtype == np.float32


def test_native_api_keeps_numpy_promotion() -> None:
    x = gh.Variable(np.ones(2, np.float32))
    assert (x + np.ones(2)).dtype == np.float64
