"""chainer's dtype rule in the chainer layer: the operators cast constant operands to the
Variable's dtype and refuse Variables of different dtypes (``@`` promotes them); the functions
refuse operands, arrays too, of different dtypes, except matmul (numpy's promotion), linear and
convolution_2d (computed in x's dtype); the native API keeps numpy's promotion. Checked against
chainer 7.8.1.
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
    assert F.linear(Variable(np.ones((1, 2), np.float32)), np.ones((3, 2))).dtype == np.float32


def test_functions_refuse_arrays_of_another_dtype_too() -> None:
    """Regression: the functions used to cast array operands to the Variable's dtype; chainer
    7.8.1's functions cast nothing (only the operators do) and raise InvalidType, e.g.
    "Expect: x0.dtype == x1.dtype / Actual: float32 != float64" for mean_squared_error."""
    x = _v([[1.0, 2.0], [3.0, 4.0]])
    n = np.ones((2, 2))
    for name in ("maximum", "minimum", "squared_error", "absolute_error", "mean_squared_error"):
        with pytest.raises(TypeError, match=rf"chainer F\.{name}: .*float32 and float64"):
            getattr(F, name)(x, n)
    with pytest.raises(TypeError, match=r"chainer F\.where: .*float32 and float64"):
        F.where(np.ones((2, 2), bool), x, n)
    for name in ("concat", "stack"):
        with pytest.raises(TypeError, match=rf"chainer F\.{name}: .*float32 and float64"):
            getattr(F, name)([x, n])


def test_int_losses_are_refused() -> None:
    """Regression: int32 mean_squared_error was computed; chainer 7.8.1 raises InvalidType
    "Expect: x0.dtype.kind == f / Actual: i != f"."""
    i = Variable(np.ones((2, 2), np.int32))
    with pytest.raises(TypeError, match=r"chainer F\.mean_squared_error: x0 must be floating"):
        F.mean_squared_error(i, i)
    with pytest.raises(TypeError, match=r"chainer F\.squared_error: x0 must be floating"):
        F.squared_error(np.ones(2, np.int32), np.ones(2, np.int32))


def _ramp(shape: tuple[int, ...], dtype: object) -> Variable:
    size = int(np.prod(shape))
    return Variable((np.arange(1, size + 1).reshape(shape) / 7).astype(dtype))


_MM, _LIN, _CONV = [(2, 3), (3, 2)], [(2, 3), (4, 3)], [(1, 1, 3, 3), (1, 1, 2, 2)]
_F32, _F64, _F16 = "float32", "float64", "float16"


@pytest.mark.parametrize(
    ("fname", "shapes", "dtypes", "out", "first"),
    [  # values printed by chainer 7.8.1 for the same operands (the first three outputs)
        ("matmul", _MM, [_F32, _F64], _F64, [0.4489796, 0.5714286, 1.0]),
        ("matmul", _MM, [_F64, _F32], _F64, [0.4489796, 0.5714286, 1.0]),
        ("matmul", _MM, [_F16, _F32], _F32, [0.44887, 0.571289, 0.99986]),
        ("linear", _LIN, [_F32, _F64], _F32, [0.2857143, 0.6530613, 1.0204082]),
        ("linear", _LIN, [_F64, _F32], _F64, [0.2857143, 0.6530612, 1.0204082]),
        ("linear", _LIN, [_F16, _F32], _F16, [0.2856, 0.653, 1.0205]),
        ("convolution_2d", _CONV, [_F32, _F64], _F32, [0.755102, 0.9591837, 1.367347]),
        ("convolution_2d", _CONV, [_F64, _F32], _F64, [0.755102, 0.9591837, 1.367347]),
        ("convolution_2d", _CONV, [_F16, _F32], _F16, [0.755, 0.959, 1.367]),
    ],
)
def test_two_float_dtypes_computed_as_chainer(
    fname: str, shapes: list[tuple[int, ...]], dtypes: list[str], out: str, first: list[float]
) -> None:
    """Regression: matmul, linear and convolution_2d refused two float dtypes; chainer 7.8.1
    computes them: matmul with numpy's promotion, linear and convolution_2d in the dtype of x
    (``.astype(x.dtype)``); each gradient comes back in its input's dtype."""
    xs = [_ramp(s, d) for s, d in zip(shapes, dtypes)]
    y = getattr(F, fname)(*xs)
    assert y.dtype == np.dtype(out)
    tol = 2e-3 if "float16" in (out, *dtypes) else 1e-6
    np.testing.assert_allclose(y.array.ravel()[:3], first, rtol=tol)
    y.grad = np.ones_like(y.array)
    y.backward()
    assert [v.grad.dtype for v in xs] == [v.dtype for v in xs]
    a64 = [v.array.astype(np.float64) for v in xs]
    if fname == "linear":  # d(sum x W^T)/dx = column sums of W, /dW = column sums of x
        np.testing.assert_allclose(xs[0].grad[0], a64[1].sum(0), rtol=tol)
        np.testing.assert_allclose(xs[1].grad[0], a64[0].sum(0), rtol=tol)


def test_bias_of_another_dtype_is_refused() -> None:
    """chainer 7.8.1: "Expect: b.dtype == x.dtype / Actual: float64 != float32"."""
    x, w = _ramp((2, 3), "float32"), _ramp((4, 3), "float32")
    with pytest.raises(TypeError, match=r"chainer F\.linear: b has dtype float64 but x has"):
        F.linear(x, w, np.ones(4))
    x, w = _ramp((1, 1, 3, 3), "float32"), _ramp((1, 1, 2, 2), "float32")
    with pytest.raises(TypeError, match=r"chainer F\.convolution_2d: b has dtype float64"):
        F.convolution_2d(x, w, np.ones(1))
    with pytest.raises(TypeError, match=r"chainer F\.matmul: b must be floating point"):
        F.matmul(_ramp((2, 3), "float32"), np.ones((3, 2), np.int32))


def test_matmul_operator_of_two_variables_promotes() -> None:
    """chainer 7.8.1: ``x @ y`` of float32 and float64 Variables is F.matmul (float64), while
    ``x @ array`` casts the array (float32)."""
    x = Variable(np.ones((2, 2), np.float32))
    assert (x @ Variable(np.ones((2, 2)))).dtype == np.float64
    assert (x @ np.ones((2, 2))).dtype == np.float32
    assert (np.ones((2, 2)) @ x).dtype == np.float32


def test_native_api_keeps_numpy_promotion() -> None:
    x = gh.Variable(np.ones(2, np.float32))
    assert (x + np.ones(2)).dtype == np.float64
