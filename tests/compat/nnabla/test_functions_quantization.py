"""``F.quantize_linear`` and ``F.dequantize_linear`` against nnabla 1.39: round modes and ties,
saturation to int8/uint8, narrow range, per-channel scales, output dtype, gradients."""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest


def _v(a: object, dtype: object = np.float32, need_grad: bool = False) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.array(a, dtype=dtype), need_grad=need_grad)


_X = [-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 1000, -1000, 0.49, -0.51]


@pytest.mark.parametrize(
    ("round_mode", "narrow", "dtype", "expected"),
    [
        # nnabla 1.39 (scale 1, zero point 0)
        ("HALF_AWAY_FROM_ZERO", False, np.int8, [-4, -3, -2, -1, 1, 2, 3, 4, 127, -128, 0, -1]),
        ("HALF_AWAY_FROM_ZERO", False, np.uint8, [0, 0, 0, 0, 1, 2, 3, 4, 255, 0, 0, 0]),
        ("HALF_AWAY_FROM_ZERO", True, np.int8, [-4, -3, -2, -1, 1, 2, 3, 4, 127, -127, 0, -1]),
        ("HALF_AWAY_FROM_ZERO", True, np.uint8, [1, 1, 1, 1, 2, 3, 4, 5, 255, 1, 1, 1]),
        ("HALF_TO_EVEN", False, np.int8, [-4, -2, -2, 0, 0, 2, 2, 4, 127, -128, 0, -1]),
        ("HALF_TO_EVEN", False, np.uint8, [0, 0, 0, 0, 0, 2, 2, 4, 255, 0, 0, 0]),
        ("HALF_TO_EVEN", True, np.int8, [-4, -2, -2, 0, 0, 2, 2, 4, 127, -127, 0, -1]),
        ("HALF_TO_EVEN", True, np.uint8, [1, 1, 1, 1, 1, 3, 3, 5, 255, 1, 1, 1]),
    ],
)
def test_quantize_linear_rounding_and_saturation(
    round_mode: str, narrow: bool, dtype: object, expected: list[int]
) -> None:
    x = _v(_X)
    y = F.quantize_linear(x, _v([1.0]), _v([0], dtype), round_mode, narrow, dtype)
    y.forward()
    assert y.d.dtype == np.float32  # nnabla 1.39: float values
    np.testing.assert_array_equal(y.d, expected)


def test_quantize_linear_float32_edge_values() -> None:
    x = _v([0.49999997, -0.49999997, 2.5000002, 1e10, np.nan, -2.5, 126.5, 127.5])
    away = F.quantize_linear(x, _v([1.0]), _v([0.0]))
    even = F.quantize_linear(x, _v([1.0]), _v([0.0]), "HALF_TO_EVEN")
    # nnabla 1.39
    np.testing.assert_array_equal(away.d, [0, 0, 3, 127, np.nan, -3, 127, 127])
    np.testing.assert_array_equal(even.d, [0, 0, 3, 127, np.nan, -2, 126, 127])


def test_quantize_linear_zero_point_is_rounded_and_saturated() -> None:
    x = _v([-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 1000, -1000, 0.49, -0.51])
    y = F.quantize_linear(x, _v([2.0]), _v([3], np.int8))
    y.forward()
    # nnabla 1.39
    np.testing.assert_array_equal(y.d, [1, 2, 2, 3, 3, 4, 4, 5, 127, -128, 3, 3])
    z = _v([2.6])
    y2 = F.quantize_linear(_v([0.0, 1.0]), _v([1.0]), z)
    np.testing.assert_array_equal(y2.d, [3, 4])  # nnabla 1.39
    z300 = _v([300], np.int32)
    y3 = F.quantize_linear(_v([-2.5, 0.0]), _v([1.0]), z300)
    np.testing.assert_array_equal(y3.d, [124, 127])  # nnabla 1.39


def test_quantize_linear_per_channel() -> None:
    x = _v(np.arange(-6, 6, dtype=np.float32).reshape(1, 3, 2, 2) * 1.3)
    s = _v(np.array([0.5, 1.0, 2.0]).reshape(1, 3, 1, 1))
    y = F.quantize_linear(x, s, _v(np.zeros((1, 3, 1, 1)), np.int8))
    y.forward()
    # nnabla 1.39
    assert y.d.ravel().tolist() == [-16, -13, -10, -8, -3, -1, 0, 1, 1, 2, 3, 3]
    s2 = _v(np.full((1, 1, 2, 2), 0.5))
    y2 = F.quantize_linear(x, s2, _v(np.zeros((1, 1, 2, 2)), np.int8))
    assert y2.d.ravel().tolist() == [-16, -13, -10, -8, -5, -3, 0, 3, 5, 8, 10, 13]


def test_quantize_linear_gradient_and_recorded_function() -> None:
    x = _v(np.ones((2, 3)), need_grad=True)
    s = _v([[0.5, 2.0, 4.0]])
    y = F.quantize_linear(x, s, _v([[0, 0, 0]], np.int8))
    y.forward()
    y.backward(np.full((2, 3), 2.0, np.float32))
    np.testing.assert_array_equal(x.g, [[4.0, 1.0, 0.5]] * 2)  # nnabla 1.39: dy / scale
    assert y.parent.name == "QuantizeLinear"
    y8 = F.quantize_linear(x, _v([[1.0]]), _v([[0]], np.uint8), dtype=np.uint8)
    # nnabla 1.39 (dtype as nnabla's code)
    assert y8.parent.info.args == {
        "round_mode": "HALF_AWAY_FROM_ZERO",
        "narrow_range": False,
        "dtype": 2,
    }
    # the saturated values get the gradient too (nnabla 1.39)
    big = _v([1000.0, -1000.0], need_grad=True)
    q = F.quantize_linear(big, _v([2.0]), _v([0], np.int8))
    q.backward(np.ones(2, np.float32))
    np.testing.assert_array_equal(big.g, [0.5, 0.5])
    (g,) = nn.grad([F.quantize_linear(x, _v([[2.0]]), _v([[0]], np.int8))], [x])
    g.forward()
    np.testing.assert_array_equal(g.d, np.full((2, 3), 0.5))  # nnabla 1.39


def test_quantize_linear_follows_new_data() -> None:
    x = _v([0.0, 0.0])
    s = _v([1.0])
    y = F.quantize_linear(x, s, _v([0], np.int8))
    x.d = np.array([3.4, -7.6])
    s.d = np.array([0.5])
    y.forward()
    np.testing.assert_array_equal(y.d, [7, -15])


def test_quantize_linear_scale_gradient_is_refused_as_nnabla() -> None:
    x = _v([1.0], need_grad=True)
    s = _v([1.0], need_grad=True)
    y = F.quantize_linear(x, s, _v([0], np.int8))
    y.forward()  # building and running need no gradient
    with pytest.raises(RuntimeError, match="with respect to scale is not supported"):
        y.backward()
    z = _v([0.0], need_grad=True)
    y2 = F.quantize_linear(x, _v([1.0]), z)
    with pytest.raises(RuntimeError, match="with respect to zero_point is not supported"):
        y2.backward()


def test_quantize_linear_refuses_bad_arguments() -> None:
    x = nn.Variable((2, 3))
    with pytest.raises(ValueError, match="scale must have x's number of axes"):
        F.quantize_linear(x, nn.Variable((3,)), nn.Variable((1, 1)))
    with pytest.raises(ValueError, match="zero_point must have"):
        F.quantize_linear(x, nn.Variable((1, 1)), nn.Variable((1, 2)))
    with pytest.raises(ValueError, match="round_mode"):
        F.quantize_linear(x, nn.Variable((1, 1)), nn.Variable((1, 1)), "FOO")
    with pytest.raises(ValueError, match=r"dtype must be numpy\.int8 or numpy\.uint8"):
        F.quantize_linear(x, nn.Variable((1, 1)), nn.Variable((1, 1)), dtype=np.int32)


# -- dequantize_linear --------------------------------------------------------------------------


def test_dequantize_linear_matches_nnabla() -> None:
    q = _v([-128, -1, 0, 5, 127], np.int8, need_grad=True)
    d = F.dequantize_linear(q, _v([0.5]), _v([3], np.int8))
    d.forward()
    assert d.d.dtype == np.float32
    np.testing.assert_array_equal(d.d, [-65.5, -2.0, -1.5, 1.0, 62.0])  # nnabla 1.39
    d.backward(np.ones(5, np.float32))
    np.testing.assert_array_equal(q.g, np.full(5, 0.5))  # nnabla 1.39
    u = F.dequantize_linear(_v([0, 200, 255], np.uint8), _v([0.5]), _v([128], np.uint8))
    np.testing.assert_array_equal(u.d, [-64.0, 36.0, 63.5])  # nnabla 1.39
    f = F.dequantize_linear(_v([1.0, 2.0, 3.0]), _v([0.5]), _v([1.0]))
    np.testing.assert_array_equal(f.d, [0.0, 0.5, 1.0])  # nnabla 1.39
    assert d.parent.name == "DequantizeLinear"


def test_dequantize_linear_per_channel_gradient() -> None:
    x = _v(np.ones((2, 3)), need_grad=True)
    d = F.dequantize_linear(x, _v([[0.5, 2.0, 4.0]]), _v([[1, 0, 0]], np.int8))
    d.forward()
    d.backward(np.full((2, 3), 2.0, np.float32))
    # nnabla 1.39
    np.testing.assert_array_equal(d.d, [[0.0, 2.0, 4.0]] * 2)
    np.testing.assert_array_equal(x.g, [[1.0, 4.0, 8.0]] * 2)
    (g,) = nn.grad([F.dequantize_linear(x, _v([[2.0]]), _v([[0]], np.int8))], [x])
    g.forward()
    np.testing.assert_array_equal(g.d, np.full((2, 3), 2.0))  # nnabla 1.39


def test_dequantize_linear_scale_gradient_is_refused() -> None:
    d = F.dequantize_linear(_v([1.0], need_grad=True), _v([1.0], need_grad=True), _v([0.0]))
    with pytest.raises(RuntimeError, match="with respect to scale is not supported"):
        d.backward()
    with pytest.raises(ValueError, match="dequantize_linear: scale must have"):
        F.dequantize_linear(nn.Variable((2, 3)), nn.Variable((3,)), nn.Variable((1, 1)))


def test_quantize_dequantize_round_trip() -> None:
    rng = np.random.RandomState(0)
    a = rng.randn(4, 3).astype(np.float32)
    x = _v(a)
    s = _v(np.array([[0.02, 0.05, 0.1]]))
    z = _v([[10, 0, 0]], np.int8)
    r = F.dequantize_linear(F.quantize_linear(x, s, z), s, z)
    r.forward()
    sc = np.array([[0.02, 0.05, 0.1]], np.float32)
    q = np.clip(np.floor(np.abs(a / sc) + 0.5) * np.sign(a / sc) + [[10, 0, 0]], -128, 127)
    np.testing.assert_allclose(r.d, (q - [[10, 0, 0]]) * sc, rtol=1e-6)


# -- pow2_quantize ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sign", "with_zero", "fine", "values", "grads"),
    [
        # nnabla 1.39 (n=4, m=0)
        (True, True, True, [-1, -0.25, 0, 0, 0.5, 1], [0, 1, 1, 1, 1, 0]),
        (True, True, False, [-1, -0.25, 0, 0, 0.5, 1], [1, 1, 1, 1, 1, 1]),
        (True, False, True, [-1, -0.25, 0.0078125, 0.0625, 0.5, 1], [0, 1, 1, 1, 1, 0]),
        (False, True, True, [0, 0, 0, 0.0625, 0.5, 1], [0, 0, 1, 1, 1, 0]),
        (False, False, True, [2**-15, 2**-15, 2**-15, 0.0625, 0.5, 1], [0, 0, 1, 1, 1, 0]),
        (False, False, False, [2**-15, 2**-15, 2**-15, 0.0625, 0.5, 1], [1, 1, 1, 1, 1, 1]),
    ],
)
def test_pow2_quantize_matches_nnabla(
    sign: bool, with_zero: bool, fine: bool, values: list[float], grads: list[float]
) -> None:
    x = _v([-3.0, -0.2, 0.0, 0.05, 0.7, 3.0], need_grad=True)
    y = F.pow2_quantize(x, sign, with_zero, 4, 0, True, fine)
    y.forward()
    y.backward()
    np.testing.assert_array_equal(y.d, values)
    np.testing.assert_array_equal(x.g, grads)
    assert y.parent.name == "Pow2Quantize"


def test_pow2_quantize_random_values_against_formula() -> None:
    rng = np.random.RandomState(0)
    a = np.concatenate([rng.randn(200) * 2, rng.randn(100) * 0.01]).astype(np.float32)
    y = F.pow2_quantize(_v(a))  # sign, with_zero, n=8, m=1: p_min = 2^(1 - 63)
    y.forward()
    q = np.exp2(np.round(np.log2(np.abs(a.astype(np.float64)))))
    q = np.minimum(q, 2.0)
    q = np.where(q < 2.0**-62, np.where(np.abs(a) < 2.0**-62 / np.sqrt(2), 0, 2.0**-62), q)
    np.testing.assert_array_equal(y.d, np.sign(a) * q)


def test_pow2_quantize_second_derivative_is_zero_and_follows_new_data() -> None:
    x = _v([0.3, -0.7], need_grad=True)
    (g,) = nn.grad([F.sum(F.pow2_quantize(x) * x)], [x])
    g.forward()
    x.g = 0
    F.sum(g).backward()
    # d/dx (q(x) x) = x + q(x) with q' = 1 (STE): second derivative 1 + 1
    np.testing.assert_allclose(g.d, [0.3 + 0.25, -0.7 - 0.5], rtol=1e-6)
    np.testing.assert_array_equal(x.g, [2.0, 2.0])
    y = F.pow2_quantize(x)
    x.d = np.array([3.0, 0.2])
    y.forward()
    np.testing.assert_array_equal(y.d, [2.0, 0.25])


def test_pow2_quantize_arguments() -> None:
    x = _v([1.0])
    assert F.pow2_quantize(x, quantize=False) is x  # nnabla 1.39
    with pytest.raises(ValueError, match="no bit for the value"):
        F.pow2_quantize(x, n=2)  # nnabla 1.39 refuses it too
    with pytest.raises(ValueError, match="must be positive"):
        F.pow2_quantize(x, n=0)
    with pytest.raises(NotImplementedError, match="outputs"):
        F.pow2_quantize(x, outputs=[nn.Variable((1,))])


@pytest.mark.parametrize(
    ("kw", "expected_y", "expected_g"),
    [
        # nnabla 1.39 on [nan, -nan, inf, -inf, 1, -1, 300]: NaN passes the gradient
        ({}, [np.nan, np.nan, 2, -2, 1, -1, 2], [1, 1, 0, 0, 1, 1, 0]),
        ({"sign": False}, [np.nan, np.nan, 2, 0, 1, 0, 2], [1, 1, 0, 0, 1, 0, 0]),
        (
            {"sign": False, "with_zero": False},
            [np.nan, np.nan, 2, 0, 1, 0, 2],
            [1, 1, 0, 0, 1, 0, 0],
        ),
    ],
)
def test_pow2_quantize_nan_and_inf_match_nnabla(
    kw: dict[str, bool], expected_y: list[float], expected_g: list[float]
) -> None:
    x = _v([np.nan, -np.nan, np.inf, -np.inf, 1.0, -1.0, 300.0], need_grad=True)
    y = F.pow2_quantize(x, **kw)
    y.forward()
    x.grad.zero()
    y.backward(grad=np.ones(7, np.float32))
    np.testing.assert_array_equal(y.d, expected_y)
    np.testing.assert_array_equal(x.g, expected_g)
