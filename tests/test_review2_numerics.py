"""Regression tests for the second review's numerics findings in gradhub-nn-ops.

1. float16 reductions accumulate in float32 and cast back (mean, norm, logsumexp, prod, layer and
   batch normalization, average and global average pooling), forward and gradients.
2. Integer and bool inputs are computed in numpy's ufunc floating type
   (``np.result_type(dtype, np.float16)``), not in the integer type (no wrap-around).
3. The exponent gradient of ``pow2`` is 0 where the base is 0 (was NaN).
4. ``norm``'s gradient at the zero vector is 0 (was NaN), for every supported ``p >= 1``.
5. batch_normalization rejects one value per channel in training mode, ``eps <= 0`` and
   ``decay_rate`` outside [0, 1].
6. Non-integer pooling settings and non-integer reduction axes raise clear errors.
7. layer_normalization checks the shapes of beta/gamma before computing.
"""

from __future__ import annotations

import math
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck

V = gh.Variable


def const(a: Any) -> gh.Variable:
    return V(np.asarray(a), need_grad=False)


# -- 1. float16 accumulates in float32 ---------------------------------------------------------


def test_layer_normalization_float16_large_variance() -> None:
    """Review repro: (1, 512) float16 data with std ~12 came back all zeros."""
    x = (np.random.RandomState(0).randn(1, 512) * 12).astype(np.float16)
    y = F.layer_normalization(V(x))
    assert y.dtype == np.float16
    x64 = x.astype(np.float64)
    ref = (x64 - x64.mean()) / np.sqrt(x64.var() + 1e-5)
    np.testing.assert_allclose(y.d.astype(np.float64), ref, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(y.d[0, :3].astype(np.float64), [1.792, 0.4263, 1.006], rtol=1e-3)


def test_layer_normalization_float16_gradient_matches_float64() -> None:
    r = np.random.RandomState(1)
    x16 = (r.randn(2, 256) * 30).astype(np.float16)  # features * variance >> 65504
    w = r.randn(2, 256)
    x = V(x16)
    (g16,) = gh.grad([F.sum(F.layer_normalization(x) * const(w.astype(np.float16)))], [x])
    x64 = V(x16.astype(np.float64))
    w64 = const(w.astype(np.float16).astype(np.float64))
    (g64,) = gh.grad([F.sum(F.layer_normalization(x64) * w64)], [x64])
    assert g16.dtype == np.float16
    np.testing.assert_allclose(g16.d.astype(np.float64), g64.d, rtol=2e-2, atol=2e-4)


def test_mean_float16_accumulates_in_float32() -> None:
    assert float(F.mean(V(np.full(70000, 1.0, np.float16))).d) == 1.0
    y = F.mean(V(np.full((3, 70000), 2.0, np.float16)), axis=1)
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y.d, [2.0, 2.0, 2.0])


def test_norm_float16() -> None:
    """Review repro: 10000 values of 300 in float16 gave inf (x * x overflows float16)."""
    x = V(np.full(10000, 300.0, np.float16))
    y = F.norm(x)
    assert y.dtype == np.float16
    assert float(y.d) == 30000.0
    (g,) = gh.grad([y], [x])
    assert g.dtype == np.float16
    np.testing.assert_allclose(g.d.astype(np.float64), 0.01, rtol=1e-3)
    for p in (3, math.inf):
        ref = np.linalg.norm(np.full(10000, 300.0), ord=p)
        np.testing.assert_allclose(float(F.norm(x, p=p).d), ref, rtol=1e-3)


def test_logsumexp_float16() -> None:
    y = F.logsumexp(V(np.zeros((1, 70000), np.float16)), axis=1)
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.d.astype(np.float64), [math.log(70000)], rtol=1e-3)
    x = V(np.zeros((1, 70000), np.float16))
    (g,) = gh.grad([F.logsumexp(x, axis=1)], [x])
    np.testing.assert_allclose(g.d.astype(np.float64), 1 / 70000, rtol=1e-2)


def test_prod_float16_intermediate_overflow() -> None:
    y = F.prod(V(np.array([300.0, 300.0, 1.0 / 300.0], np.float16)))
    assert y.dtype == np.float16
    np.testing.assert_allclose(float(y.d), 300.0, rtol=2e-3)


def test_average_pooling_float16() -> None:
    x = V(np.ones((1, 1, 256, 256), np.float16))
    y = F.average_pooling(x, kernel=(256, 256))
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y.d, [[[[1.0]]]])
    (g,) = gh.grad([y], [x])
    assert g.dtype == np.float16
    np.testing.assert_allclose(g.d.astype(np.float64), 1 / 65536, rtol=1e-3)
    # overlapping windows and padding against float64
    r = np.random.RandomState(2)
    x16 = (r.rand(1, 2, 9, 9) * 100).astype(np.float16)
    kw = {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}
    y16 = F.average_pooling(V(x16), **kw)
    y64 = F.average_pooling(V(x16.astype(np.float64)), **kw)
    np.testing.assert_allclose(y16.d.astype(np.float64), y64.d, rtol=2e-3)


def test_global_average_pooling_float16() -> None:
    x = V(np.ones((1, 1, 256, 256), np.float16))
    y = F.global_average_pooling(x)
    assert y.dtype == np.float16 and y.shape == (1, 1, 1, 1)
    np.testing.assert_array_equal(y.d, [[[[1.0]]]])
    (g,) = gh.grad([y], [x])
    np.testing.assert_allclose(g.d.astype(np.float64), 1 / 65536, rtol=1e-3)


def _bn(x: Any, dtype: Any, **kw: Any) -> tuple[Any, ...]:
    c = x.shape[1]
    sh = (1, c) + (1,) * (x.ndim - 2)
    beta, gamma = V(np.zeros(sh, dtype)), V(np.ones(sh, dtype))
    mean, var = np.zeros(sh, dtype), np.ones(sh, dtype)
    return F.batch_normalization(x, beta, gamma, mean, var, **kw), beta, gamma, mean, var


def test_batch_normalization_float16_variance_above_float16_max() -> None:
    r = np.random.RandomState(3)
    x16 = (r.randn(16, 2) * 400).astype(np.float16)  # variance ~160000 > 65504
    w = r.randn(16, 2).astype(np.float16)
    x = V(x16)
    y, beta, gamma, _, _ = _bn(x, np.float16)
    assert y.dtype == np.float16
    x64 = V(x16.astype(np.float64))
    y64, beta64, gamma64, _, _ = _bn(x64, np.float64)
    np.testing.assert_allclose(y.d.astype(np.float64), y64.d, rtol=5e-3, atol=5e-3)
    gs = gh.grad([F.sum(y * const(w))], [x, beta, gamma])
    gs64 = gh.grad([F.sum(y64 * const(w.astype(np.float64)))], [x64, beta64, gamma64])
    for g, g64 in zip(gs, gs64):
        assert g.dtype == np.float16
        np.testing.assert_allclose(g.d.astype(np.float64), g64.d, rtol=2e-2, atol=1e-4)


# -- 2. integer and bool inputs ----------------------------------------------------------------


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


def test_review_integer_repros() -> None:
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


# -- 3. pow2 at base 0 --------------------------------------------------------------------------


def test_pow2_exponent_gradient_at_base_zero() -> None:
    b = V(np.array([0.0, 2.0]))
    e = V(np.array([2.0, 2.0]))
    F.sum(b**e).backward()
    np.testing.assert_allclose(e.g, [0.0, 4.0 * math.log(2.0)])
    np.testing.assert_allclose(b.g, [0.0, 4.0])
    x = V(np.array([0.0, 0.0, 2.0, 2.0]))
    y = V(np.array([0.0, 3.0, 3.0, 0.0]))
    gx, gy = gh.grad([x**y], [x, y])
    np.testing.assert_allclose(gy.d, [0.0, 0.0, 8.0 * math.log(2.0), math.log(2.0)])
    np.testing.assert_allclose(gx.d, [0.0, 0.0, 12.0, 0.0])  # d/dx x^0 = 0, at x = 0 too


def test_pow2_exponent_gradient_at_base_zero_second_order_is_finite() -> None:
    x = V(np.array([0.0, 1.5]))
    y = V(np.array([2.0, 2.5]))
    (gy,) = gh.grad([F.sum(x**y)], [y], create_graph=True)
    gyy, gyx = gh.grad([F.sum(gy)], [y, x])
    assert np.all(np.isfinite(gyy.d)) and np.all(np.isfinite(gyx.d))
    np.testing.assert_allclose(gyy.d[1], 1.5**2.5 * math.log(1.5) ** 2)


def test_pow2_gradcheck_away_from_zero() -> None:
    r = np.random.default_rng(0)
    assert gradcheck(F.pow2, [r.uniform(0.5, 2.0, (2, 3)), r.uniform(-2.0, 2.0, (2, 3))], order=2)


# -- 4. norm at the zero vector -----------------------------------------------------------------


@pytest.mark.parametrize("p", [None, 2, 1, 3, 1.5, math.inf])
def test_norm_gradient_at_zero_vector_is_zero(p: Any) -> None:
    x = V(np.zeros(3))
    (g,) = gh.grad([F.norm(x, p=p)], [x])
    np.testing.assert_array_equal(g.d, [0.0, 0.0, 0.0])
    x = V(np.zeros((2, 3)))
    x.d[1] = [3.0, -4.0, 0.0]
    (g,) = gh.grad([F.sum(F.norm(x, p=p, axis=1))], [x])
    assert np.all(np.isfinite(g.d))
    np.testing.assert_array_equal(g.d[0], [0.0, 0.0, 0.0])


def test_norm_gradient_penalty_with_a_zero_gradient() -> None:
    """The demo's pattern: the norm of a gradient that is exactly 0 must not give NaN."""
    w = V(np.array([1.0, 2.0]))
    x = V(np.array([0.0, 0.0]), need_grad=False)
    (gw,) = gh.grad([F.sum(w * w * x)], [w], create_graph=True)  # 2 w x = 0
    F.norm(gw).backward()
    np.testing.assert_array_equal(w.g, [0.0, 0.0])


@pytest.mark.parametrize("p", [None, 3, 1.5])
def test_norm_gradcheck_order_2_away_from_zero(p: Any) -> None:
    r = np.random.default_rng(1)
    x = r.uniform(0.5, 1.5, (2, 3)) * r.choice([-1.0, 1.0], (2, 3))
    assert gradcheck(lambda v: F.norm(v, p=p, axis=1), [x], order=2)


def test_norm_propagates_nan() -> None:
    assert np.isnan(F.norm(V(np.array([np.nan, 1.0]))).d)


# -- 5. batch normalization settings -------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1, 3), (1, 3, 1, 1)])
def test_batch_normalization_one_value_per_channel_raises(shape: tuple[int, ...]) -> None:
    x = V(np.ones(shape))
    with pytest.raises(ValueError, match=r"batch_normalization\(\).*one value per channel"):
        _bn(x, np.float64)
    y, *_ = _bn(x, np.float64, batch_stat=False)  # inference is fine
    assert y.shape == shape


@pytest.mark.parametrize(
    ("kw", "arg"),
    [
        ({"eps": -1.0}, "eps"),
        ({"eps": 0.0}, "eps"),
        ({"decay_rate": 1.5}, "decay_rate"),
        ({"decay_rate": -0.1}, "decay_rate"),
    ],
)
def test_batch_normalization_settings_checked(kw: dict[str, float], arg: str) -> None:
    with pytest.raises(ValueError, match=rf"batch_normalization\(\).*'{arg}'"):
        _bn(V(np.random.RandomState(0).randn(4, 3)), np.float64, **kw)


# -- 6. non-integer pooling settings and axes ----------------------------------------------------


@pytest.mark.parametrize("fn", [F.max_pooling, F.average_pooling])
@pytest.mark.parametrize(
    ("kw", "arg"),
    [
        ({"pad": (1.5, 1.5)}, "pad"),
        ({"stride": (1.7, 1.7)}, "stride"),
        ({"kernel": (2.0, 2)}, "kernel"),
        ({"stride": 1.0}, "stride"),
    ],
)
def test_pooling_rejects_non_integer_settings(fn: Any, kw: dict[str, Any], arg: str) -> None:
    args = {"kernel": (2, 2), **kw}
    with pytest.raises(TypeError, match=rf"{fn.__name__}\(\).*{arg}.*integer"):
        fn(V(np.ones((1, 1, 5, 5))), **args)


def test_pooling_accepts_numpy_integers() -> None:
    x = V(np.ones((1, 1, 5, 5)))
    y = F.max_pooling(x, kernel=np.array([2, 2]), stride=(np.int64(1), 1), pad=np.int32(1))
    assert y.shape == (1, 1, 6, 6)


@pytest.mark.parametrize("name", ["mean", "prod", "max", "min", "logsumexp", "norm"])
def test_float_axis_error_names_function_and_axis(name: str) -> None:
    with pytest.raises(TypeError, match=rf"{name}\(\).*'axis'"):
        getattr(F, name)(V(np.ones((2, 3))), axis=1.5)


# -- 7. layer normalization beta/gamma shapes ----------------------------------------------------


@pytest.mark.parametrize("arg", ["beta", "gamma"])
def test_layer_normalization_parameter_shape_checked_first(arg: str) -> None:
    with pytest.raises(ValueError, match=rf"layer_normalization\(\): argument '{arg}'") as e:
        F.layer_normalization(V(np.ones((2, 3))), **{arg: V(np.ones((1, 4)))})
    assert "mul2" not in str(e.value) and "add2" not in str(e.value)


# -- softmax, log_softmax and softmax_cross_entropy: float16 and integer inputs ----------------


def _np_softmax64(x: np.ndarray) -> np.ndarray:
    z = x.astype(np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_softmax_family_float16_sums_in_float32() -> None:
    """Review repro: softmax of (1, 70000) float16 zeros gave 0 (the sum overflowed to inf)."""
    z = np.zeros((1, 70000), np.float16)
    y = F.softmax(V(z))
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.d.astype(np.float64), 1 / 70000, rtol=1e-2)
    ly = F.log_softmax(V(z))
    assert ly.dtype == np.float16
    np.testing.assert_allclose(ly.d.astype(np.float64), -math.log(70000), rtol=1e-3)
    t = const(np.array([[1], [0]]))
    loss = F.softmax_cross_entropy(V(np.zeros((2, 70000), np.float16)), t)
    assert loss.dtype == np.float16
    np.testing.assert_allclose(loss.d.astype(np.float64), math.log(70000), rtol=1e-3)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int64, np.bool_])
def test_softmax_family_integer_and_bool_inputs(dtype: Any) -> None:
    """Review repro: softmax of uint8 [1, 2, 3] gave [nan, nan, 0]; bool data raised numpy's
    'boolean subtract' error."""
    a = (
        np.array([[1, 0, 1]], dtype)
        if dtype is np.bool_
        else np.array([[-128 if np.dtype(dtype).kind == "i" else 0, 2, 100]], dtype)
    )
    ref = _np_softmax64(a)
    want = np.result_type(a.dtype, np.float16)
    y = F.softmax(const(a))
    assert y.dtype == want
    tol = 2e-3 if want == np.float16 else 1e-6
    np.testing.assert_allclose(y.d.astype(np.float64), ref, rtol=tol, atol=tol)
    ly = F.log_softmax(const(a))
    assert ly.dtype == want
    ok = ref > 1e-30
    np.testing.assert_allclose(ly.d.astype(np.float64)[ok], np.log(ref[ok]), rtol=tol, atol=tol)
    loss = F.softmax_cross_entropy(const(a), const(np.array([[2]])))
    np.testing.assert_allclose(float(loss.d[0, 0]), -math.log(ref[0, 2]), rtol=tol, atol=tol)
