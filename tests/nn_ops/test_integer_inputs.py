"""Integer and bool inputs of gradhub-nn-ops: computed in floating point, except for the
functions that are exact on integers."""

from __future__ import annotations

import math
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest

V = gh.Variable


def const(a: Any) -> gh.Variable:
    return V(np.asarray(a), need_grad=False)


U8 = np.array([1, 2, 3], np.uint8)


def _sig(x: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -x))


@pytest.mark.parametrize(
    ("fn", "ref"),
    [
        (F.sigmoid, _sig),
        (F.softplus, lambda x: np.logaddexp(0.0, x)),
        (F.silu, lambda x: x * _sig(x)),
        (F.swish, lambda x: x * _sig(x)),
        (F.log_sigmoid, lambda x: -np.logaddexp(0.0, -x)),
        (F.softsign, lambda x: x / (1 + np.abs(x))),
        (F.gelu, lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
        (F.erf, np.vectorize(math.erf)),
    ],
)
@pytest.mark.parametrize(
    "data",
    [
        np.array([1, 2, 3, 255], np.uint8),
        np.array([-128, -1, 0, 100, 127], np.int8),
        np.array([-32768, 0, 7], np.int16),
        np.array([0, 65535], np.uint16),
        np.array([-(2**31), 50000], np.int32),
        np.array([True, False]),
    ],
    ids=lambda a: str(a.dtype),
)
def test_integer_and_bool_inputs_computed_in_floating_point(
    fn: Any, ref: Any, data: np.ndarray
) -> None:
    y = fn(const(data))
    want = np.result_type(data.dtype, np.float16)
    assert y.dtype == want
    tol = {np.float16: 2e-3, np.float32: 1e-6, np.float64: 1e-12}[want.type]
    expected = ref(data.astype(np.float64))
    np.testing.assert_allclose(y.d.astype(np.float64), expected, rtol=tol, atol=tol)


def test_reported_integer_input_cases() -> None:
    np.testing.assert_allclose(F.sigmoid(const(U8)).d, [0.731, 0.881, 0.953], rtol=1e-3)
    np.testing.assert_allclose(F.softplus(const(U8)).d, [1.313, 2.127, 3.049], rtol=1e-3)
    np.testing.assert_allclose(F.norm(const(np.array([200, 1], np.uint8))).d, 200.0, rtol=1e-3)
    np.testing.assert_allclose(F.norm(const(np.array([50000, 0], np.int32))).d, 50000.0)
    np.testing.assert_allclose(F.erf(const(np.array([-128], np.int8))).d, [-1.0])
    lse = F.logsumexp(const(U8))
    np.testing.assert_allclose(float(lse.d), np.log(np.exp([1.0, 2.0, 3.0]).sum()), rtol=1e-3)


def test_bool_inputs_do_not_raise() -> None:
    b = const(np.array([True, False]))
    for fn in (F.sigmoid, F.softplus, F.silu, F.swish, F.log_sigmoid, F.sign):
        y = fn(b)
        assert y.dtype.kind == "f"
    np.testing.assert_array_equal(F.sign(b, alpha=0.0).d, [1.0, 0.0])


def test_exact_integer_functions_keep_integer_results() -> None:
    i8 = const(np.array([-3, 0, 5], np.int8))
    assert F.relu(i8).dtype == np.int8
    assert F.max(i8).dtype == np.int8
    assert F.prod(i8).d.dtype.kind == "i"
    assert F.sin(i8).dtype == np.sin(np.int8(1)).dtype  # unchanged: numpy's ufunc rule
    assert F.mean(i8).dtype == np.float64  # as numpy's mean
    assert F.average_pooling(const(np.ones((1, 1, 2, 2), np.uint8)), kernel=(2, 2)).dtype == (
        np.float64
    )


def test_integer_normalization() -> None:
    x = const(np.array([[0, 10], [4, 30]], np.uint8))
    y = F.layer_normalization(x)
    ref = F.layer_normalization(V(np.array([[0.0, 10.0], [4.0, 30.0]])))
    np.testing.assert_allclose(y.d.astype(np.float64), ref.d, rtol=2e-3, atol=2e-3)
