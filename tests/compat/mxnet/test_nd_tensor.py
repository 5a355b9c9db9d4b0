"""mx.nd's tensor functions (gradhub_compat.mxnet._nd_tensor): gradients against float64 finite
differences, second derivatives through ``mx.autograd.grad(..., create_graph=True)``, the
behaviours that differ from mxnet 1.9.1 on purpose, errors, and the arrays the functions return.
(test_nd_tensor_mxnet.py compares values, dtypes, shapes, gradients and errors with mxnet 1.9.1.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

nd = mx.nd

X = np.array([[0.3, -1.2, 2.1, 0.7], [-0.4, 1.6, -2.2, 0.9], [1.1, -0.6, 0.2, -1.7]])
POS = np.array([[0.3, 1.7, 0.9, 2.4], [1.2, 0.5, 3.1, 0.8], [2.2, 0.6, 1.4, 0.35]])
UNIT = np.array([[0.3, -0.7, 0.9, -0.2], [0.45, 0.5, -0.85, 0.1], [-0.6, 0.05, 0.75, -0.35]])
X3 = np.arange(24).reshape(2, 3, 4) % 7 * 0.37 - 1.1 + np.arange(24).reshape(2, 3, 4) * 0.01
Y = np.array([[1.3, 0.2, -0.8, 0.5], [0.6, -1.4, 0.1, 2.4], [-0.9, 0.8, 1.9, -0.3]])
I64 = np.array([[0, 2], [3, 1]], dtype=np.float64)


def _f64(a: np.ndarray) -> mx.nd.NDArray:
    return nd.array(a, dtype="float64")


def _numeric_grad(f: Callable[..., Any], xs: list[np.ndarray], head: np.ndarray, k: int) -> Any:
    """Central differences (float64) of ``sum(head * f(xs))`` with respect to ``xs[k]``."""
    eps = 1e-6
    g = np.zeros_like(xs[k])
    for i in np.ndindex(xs[k].shape):
        vals = []
        for s in (eps, -eps):
            moved = [x.copy() for x in xs]
            moved[k][i] += s
            vals.append(float((f(*[_f64(m) for m in moved]).asnumpy() * head).sum()))
        g[i] = (vals[0] - vals[1]) / (2 * eps)
    return g


#: name: (function of float64 NDArrays, inputs); the functions are smooth at these inputs
GRADIENT_CASES: dict[str, tuple[Callable[..., Any], list[np.ndarray]]] = {
    "concat": (lambda a, b: nd.concat(a, b, dim=0), [X, Y]),
    "stack": (lambda a, b: nd.stack(a, b, axis=2), [X, Y]),
    "transpose": (lambda a: nd.transpose(a, axes=(2, 0, 1)), [X3]),
    "expand_dims": (lambda a: nd.expand_dims(a, axis=-2) * a.expand_dims(1), [X]),
    "squeeze": (lambda a: nd.squeeze(nd.expand_dims(a, 0)) ** 2, [X]),
    "swapaxes": (lambda a: nd.swapaxes(a, 0, -1), [X3]),
    "flip": (lambda a: nd.flip(a, axis=(0, 1)) * a, [X]),
    "tile": (lambda a: nd.tile(a, reps=(2, 1, 3)), [X]),
    "repeat": (lambda a: nd.repeat(a, repeats=3, axis=0) ** 2, [X]),
    "repeat_flat": (lambda a: nd.repeat(a, repeats=2), [X]),
    "reshape": (lambda a: nd.reshape(a, shape=(0, -1, 2), reverse=True), [X3]),
    "reshape_like": (lambda a, b: nd.reshape_like(a, b) * b, [X3, X3.reshape(4, 6)]),
    "broadcast_to": (lambda a: nd.broadcast_to(nd.slice_axis(a, 0, 0, 1), shape=(5, 4)) ** 2, [X]),
    "broadcast_like": (lambda a, b: nd.broadcast_like(nd.slice_axis(a, 0, 1, 2), b) * b, [X, Y]),
    "broadcast_axis": (lambda a: nd.broadcast_axis(a.reshape((3, 1, 4)), axis=1, size=2), [X]),
    "broadcast_power": (lambda a, b: nd.broadcast_power(a, nd.slice_axis(b, 0, 0, 1)), [POS, Y]),
    "maximum": (lambda a, b: nd.maximum(a, b), [X, Y]),
    "minimum": (lambda a, b: nd.minimum(a, nd.slice_axis(b, 0, 1, 2)), [X, Y]),
    "maximum_scalar": (lambda a: nd.minimum(0.5, a) * a, [X]),
    "clip": (lambda a: nd.clip(a, -1.0, 1.0) * a, [X]),
    "power": (lambda a, b: nd.power(a, b), [POS, X]),
    "max": (lambda a: nd.max(a, axis=(0, 2), keepdims=True), [X3]),
    "min": (lambda a: nd.min(a, axis=1, exclude=True), [X3]),
    "prod": (lambda a: nd.prod(a, axis=-1), [X3]),
    "nansum": (lambda a: nd.nansum(a * a, axis=0), [X]),
    "nanprod": (lambda a: nd.nanprod(a, axis=1), [X]),
    "sort": (
        lambda a: (
            nd.sort(a, axis=0, is_ascend=False)
            * nd.array(np.arange(12.0).reshape(3, 4), dtype="float64")
        ),
        [X],
    ),
    "topk": (lambda a: nd.topk(a, k=3, ret_typ="value") ** 2, [X]),
    "take": (lambda a: nd.take(a, nd.array(I64, dtype="float64"), axis=1) ** 2, [X]),
    "slice": (lambda a: nd.slice(a, begin=(None, 3), end=(None, 0), step=(1, -2)) ** 2, [X]),
    "slice_axis": (lambda a: nd.slice_axis(a, axis=2, begin=1, end=None) ** 2, [X3]),
    "slice_like": (lambda a, b: nd.slice_like(a, b, axes=(0,)) ** 2, [X3, X3[:1]]),
    "batch_dot": (lambda a, b: nd.batch_dot(a, b, transpose_b=True), [X3, X3 * 0.5 + 0.1]),
    "linalg_gemm2": (lambda a, b: nd.linalg_gemm2(a, b, transpose_a=True, alpha=0.5), [X, Y]),
    "add_n": (lambda a, b: nd.add_n(a, b, a * b), [X, Y]),
    "L2Normalization": (lambda a: nd.L2Normalization(a), [X3]),
    "L2Normalization_channel": (lambda a: nd.L2Normalization(a, mode="channel"), [X3]),
    "L2Normalization_spatial": (lambda a: nd.L2Normalization(a, mode="spatial"), [X3]),
    "SequenceMask": (
        lambda a: (
            nd.SequenceMask(a, nd.array([2, 1, 3]), use_sequence_length=True, axis=1, value=2.0) * a
        ),
        [X3.transpose(1, 0, 2)],
    ),
    "smooth_l1": (lambda a: nd.smooth_l1(a, scalar=1.5), [X]),
    "hard_sigmoid": (lambda a: nd.hard_sigmoid(a, alpha=0.3) * a, [X]),
    "reciprocal": (lambda a: nd.reciprocal(a), [POS]),
    "rsqrt": (lambda a: nd.rsqrt(a), [POS]),
    "cbrt": (lambda a: nd.cbrt(a), [X]),
    "rcbrt": (lambda a: nd.rcbrt(a), [POS]),
    "log1p": (lambda a: nd.log1p(a), [POS]),
    "expm1": (lambda a: nd.expm1(a), [X]),
    "log2": (lambda a: nd.log2(a), [POS]),
    "log10": (lambda a: nd.log10(a), [POS]),
    "tan": (lambda a: nd.tan(a), [UNIT]),
    "arcsin": (lambda a: nd.arcsin(a), [UNIT]),
    "arccos": (lambda a: nd.arccos(a), [UNIT]),
    "arctan": (lambda a: nd.arctan(a), [X]),
    "sinh": (lambda a: nd.sinh(a), [X]),
    "cosh": (lambda a: nd.cosh(a), [X]),
    "arcsinh": (lambda a: nd.arcsinh(a), [X]),
    "arccosh": (lambda a: nd.arccosh(a), [POS + 1.0]),
    "arctanh": (lambda a: nd.arctanh(a), [UNIT]),
    "erf": (lambda a: nd.erf(a), [X]),
    "softsign": (lambda a: nd.softsign(a), [X]),
    "negative": (lambda a: nd.negative(a) * a, [X]),
    "rounding": (
        lambda a: (
            (
                nd.floor(a)
                + nd.ceil(a)
                + nd.round(a)
                + nd.rint(a)
                + nd.fix(a)
                + nd.trunc(a)
                + nd.sign(a)
            )
            * a
        ),
        [X],
    ),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradient_matches_float64_finite_differences(name: str) -> None:
    f, inputs = GRADIENT_CASES[name]
    xs = [_f64(x) for x in inputs]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = f(*xs)
    head = np.linspace(-1.0, 1.0, y.size).reshape(y.shape) + 0.35
    y.backward(_f64(head))
    for k, x in enumerate(xs):
        want = _numeric_grad(f, [np.array(v, dtype=np.float64) for v in inputs], head, k)
        np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-6, atol=1e-7)


SECOND_X = np.array([0.3, -0.6, 0.8])
SECOND_P = np.array([0.4, 1.3, 2.2])
WEIGHT = np.array([1.0, 0.5, -2.0])


def _second(src: Callable[[Any], Any], data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The gradient ``g`` of ``sum(f(x))`` and the gradient of ``sum(g * WEIGHT)``, through
    ``mx.autograd.grad(create_graph=True)``."""
    x = _f64(data)
    x.attach_grad()
    with mx.autograd.record():
        y = src(x)
        g = mx.autograd.grad(
            y, [x], head_grads=nd.ones(y.shape, dtype="float64"), create_graph=True
        )[0]
        z = (g * _f64(WEIGHT)).sum()
    z.backward()
    return g.asnumpy(), x.grad.asnumpy()


#: mxnet 1.9.1's first and second derivatives (rounded to 6 decimals) where mxnet has them
SECOND_MXNET = {
    "tan": (
        lambda x: nd.tan(x),
        SECOND_X,
        [1.095689, 1.468043, 2.060156],
        [0.677873, -1.004342, -8.484862],
    ),
    "arcsin": (
        lambda x: nd.arcsin(x),
        SECOND_X,
        [1.048285, 1.25, 1.666667],
        [0.345588, -0.585938, -7.407407],
    ),
    "arctan": (
        lambda x: nd.arctan(x),
        SECOND_X,
        [0.917431, 0.735294, 0.609756],
        [-0.505008, 0.324394, 1.189768],
    ),
    "sinh": (
        lambda x: nd.sinh(x),
        SECOND_X,
        [1.045339, 1.185465, 1.337435],
        [0.30452, -0.318327, -1.776212],
    ),
    "cosh": (
        lambda x: nd.cosh(x),
        SECOND_X,
        [0.30452, -0.636654, 0.888106],
        [1.045339, 0.592733, -2.67487],
    ),
    "log2": (
        lambda x: nd.log2(x),
        SECOND_P,
        [3.606738, 1.109765, 0.65577],
        [-9.016844, -0.426833, 0.596155],
    ),
    "log10": (
        lambda x: nd.log10(x),
        SECOND_P,
        [1.085736, 0.334073, 0.197407],
        [-2.714341, -0.128489, 0.179461],
    ),
    "log1p": (
        lambda x: nd.log1p(x),
        SECOND_P,
        [0.714286, 0.434783, 0.3125],
        [-0.510204, -0.094518, 0.195312],
    ),
    "expm1": (
        lambda x: nd.expm1(x),
        SECOND_X,
        [1.349859, 0.548812, 2.225541],
        [1.349859, 0.274406, -4.451082],
    ),
    "reciprocal": (
        lambda x: nd.reciprocal(x),
        SECOND_P,
        [-6.25, -0.591716, -0.206612],
        [31.25, 0.455166, -0.375657],
    ),
    "rsqrt": (
        lambda x: nd.rsqrt(x),
        SECOND_P,
        [-1.976424, -0.33733, -0.153227],
        [7.411588, 0.194613, -0.208946],
    ),
    "cbrt": (
        lambda x: nd.cbrt(x),
        SECOND_P,
        [0.614005, 0.279844, 0.197059],
        [-1.023342, -0.071755, 0.11943],
    ),
    "arctanh": (
        lambda x: nd.arctanh(x),
        SECOND_X,
        [1.098901, 1.5625, 2.777778],
        [0.72455, -1.464844, -24.691358],
    ),
}  # mxnet 1.9.1


@pytest.mark.parametrize("name", sorted(SECOND_MXNET))
def test_second_derivative_matches_mxnet(name: str) -> None:
    f, data, g1, g2 = SECOND_MXNET[name]
    g, gg = _second(f, data)
    np.testing.assert_allclose(g, g1, atol=2e-6)
    np.testing.assert_allclose(gg, g2, atol=2e-6)


def test_second_derivative_of_arcsinh_is_the_analytic_one() -> None:
    """d^2/dx^2 asinh(x) = -x (1 + x^2)^(-3/2); mxnet 1.9.1 gives the opposite sign
    ([0.263622, -0.189153, -0.761823] here), gradhub the formula."""
    g, gg = _second(lambda x: nd.arcsinh(x), SECOND_X)
    np.testing.assert_allclose(g, (1 + SECOND_X**2) ** -0.5, rtol=1e-12)
    np.testing.assert_allclose(gg, -SECOND_X * (1 + SECOND_X**2) ** -1.5 * WEIGHT, rtol=1e-12)


#: functions whose second derivative mxnet 1.9.1 does not have (it raises MXNetError:
#: "Operator _backward_... is non-differentiable"): checked against finite differences
SECOND_FD: dict[str, tuple[Callable[[Any], Any], np.ndarray]] = {
    "clip": (lambda x: nd.clip(x, -0.5, 0.5) * x, SECOND_X),
    "smooth_l1": (lambda x: nd.smooth_l1(x), SECOND_X * 3),
    "hard_sigmoid": (lambda x: nd.hard_sigmoid(x) * x, SECOND_X),
    "prod": (lambda x: nd.prod(x.reshape((1, 3)), axis=1), SECOND_X),
    "max": (lambda x: nd.max(x) * x, SECOND_X),
    "tile": (lambda x: nd.tile(x, reps=(2,)) * nd.tile(x, reps=(2,)), SECOND_X),
    "L2Normalization": (lambda x: nd.L2Normalization(x.reshape((1, 3))), SECOND_X),
    "erf": (lambda x: nd.erf(x), SECOND_X),
    "softsign": (lambda x: nd.softsign(x), SECOND_X),
    "take": (lambda x: nd.take(x, nd.array([0, 2, 2], dtype="float64")) ** 3, SECOND_X),
    "sort": (lambda x: nd.sort(x) ** 2, SECOND_X),
    "broadcast_power": (lambda x: nd.broadcast_power(x, _f64(np.array([2.0, 3.0, 1.5]))), SECOND_P),
    "batch_dot": (lambda x: nd.batch_dot(x.reshape((1, 1, 3)), x.reshape((1, 3, 1))) * x, SECOND_X),
}


@pytest.mark.parametrize("name", sorted(SECOND_FD))
def test_second_derivative_matches_finite_differences(name: str) -> None:
    f, data = SECOND_FD[name]
    _, gg = _second(f, data)

    def weighted_grad(v: np.ndarray) -> float:
        g, _ = _second(f, v)
        return float((g * WEIGHT).sum())

    eps = 1e-6
    want = np.zeros(3)
    for i in range(3):
        up, down = data.copy(), data.copy()
        up[i] += eps
        down[i] -= eps
        want[i] = (weighted_grad(up) - weighted_grad(down)) / (2 * eps)
    np.testing.assert_allclose(gg, want, rtol=1e-6, atol=1e-6)


# -- behaviours that differ from mxnet 1.9.1 -----------------------------------------------------


def test_stack_of_different_shapes_raises() -> None:
    """mxnet 1.9.1's imperative stack does not check the shapes (it reads past the smaller
    array); gradhub raises MXNetError."""
    with pytest.raises(mx.base.MXNetError, match="one shape"):
        nd.stack(nd.ones((2, 3)), nd.ones((3, 2)))


def test_sort_with_the_default_axis_is_differentiable() -> None:
    """mxnet 1.9.1 fails in backward of sort(axis=-1) (``Invalid Parameter format for axis``);
    here each value's gradient goes back to its position."""
    x = nd.array([[3.0, 1.0, 2.0]])
    x.attach_grad()
    with mx.autograd.record():
        y = nd.sort(x)
    y.backward(nd.array([[10.0, 20.0, 30.0]]))
    np.testing.assert_array_equal(y.asnumpy(), [[1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(x.grad.asnumpy(), [[30.0, 10.0, 20.0]])


def test_prod_gradient_at_zero_is_the_product_of_the_others() -> None:
    """mxnet 1.9.1 computes prod's gradient as prod / x (NaN where x is 0: [[-0, nan, -0],
    [nan, 0, nan]] here); gradhub gives the product of the other elements."""
    x = nd.array([[1.5, 0.0, 3.0], [0.0, 2.0, 0.0]])
    x.attach_grad()
    with mx.autograd.record():
        y = nd.prod(x, axis=1)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[0.0, 4.5, 0.0], [0.0, 0.0, 0.0]])


def test_transpose_method_takes_axes_as_arguments() -> None:
    x = nd.zeros((2, 3, 4))
    assert x.transpose(1, 0, 2).shape == x.transpose((1, 0, 2)).shape == (3, 2, 4)
    assert x.transpose(axes=(2, 1, 0)).shape == (4, 3, 2)


# -- arrays, recording, dtypes --------------------------------------------------------------


@pytest.mark.parametrize(
    "f",
    [
        lambda x: nd.transpose(x),
        lambda x: nd.swapaxes(x, 0, 1),
        lambda x: nd.expand_dims(x, 0),
        lambda x: nd.squeeze(x),
        lambda x: nd.reshape(x, shape=(-1,)),
        lambda x: nd.slice_axis(x, axis=0, begin=0, end=1),
        lambda x: nd.slice(x, begin=(0,), end=(1,)),
        lambda x: nd.concat(x),
        lambda x: nd.add_n(x),
        lambda x: nd.broadcast_to(x, x.shape),
        lambda x: nd.max(x, axis=()),
        lambda x: nd.SequenceMask(x),
    ],
)
@pytest.mark.parametrize("recording", [False, True])
def test_results_are_new_arrays(f: Callable[[Any], Any], recording: bool) -> None:
    """Writing into a result leaves the source alone (mxnet's operators return new arrays)."""
    x = nd.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    if recording:
        with mx.autograd.record():
            y = f(x)
    else:
        y = f(x)
    y[:] = 7
    np.testing.assert_array_equal(x.asnumpy(), [[1.0, 2.0], [3.0, 4.0]])


def test_integer_inputs_are_not_recorded() -> None:
    x = nd.array([[1, 2], [3, 4]], dtype="int32")
    with mx.autograd.record():
        y = nd.tile(x, reps=(1, 2))
    assert y.dtype == np.int32 and y._var is None
    np.testing.assert_array_equal(y.asnumpy(), [[1, 2, 1, 2], [3, 4, 3, 4]])


def test_comparison_outputs_pass_zero_gradients() -> None:
    a, b = nd.array([1.0, 2.0]), nd.array([2.0, 2.0])
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = nd.broadcast_greater_equal(a, b) * a
    y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), [0.0, 1.0])
    np.testing.assert_array_equal(b.grad.asnumpy(), [0.0, 0.0])


def test_unsigned_negative_wraps() -> None:
    x = nd.array([3, 250, 0], dtype="uint8")
    np.testing.assert_array_equal(nd.negative(x).asnumpy(), [253, 6, 0])


def test_numpy_formulas() -> None:
    """Independent numpy forms of the elementwise functions on float64."""
    x = _f64(X)
    np.testing.assert_allclose(nd.cbrt(x).asnumpy(), np.cbrt(X), rtol=1e-14)
    np.testing.assert_allclose(nd.log2(_f64(POS)).asnumpy(), np.log2(POS), rtol=1e-14)
    np.testing.assert_allclose(nd.arccos(_f64(UNIT)).asnumpy(), np.arccos(UNIT), rtol=1e-14)
    sm = np.where(np.abs(X) < 1 / 4, 0.5 * 4 * X**2, np.abs(X) - 0.5 / 4)
    np.testing.assert_allclose(nd.smooth_l1(x, scalar=2.0).asnumpy(), sm, rtol=1e-14)
    np.testing.assert_allclose(
        nd.hard_sigmoid(x, alpha=0.3, beta=0.4).asnumpy(), np.clip(0.3 * X + 0.4, 0, 1), rtol=1e-14
    )
    l2 = X3 / np.sqrt((X3**2).sum(axis=(1, 2), keepdims=True) + 1e-10)
    np.testing.assert_allclose(nd.L2Normalization(_f64(X3)).asnumpy(), l2, rtol=1e-14)
    np.testing.assert_allclose(
        nd.batch_dot(_f64(X3), _f64(X3), transpose_b=True).asnumpy(),
        X3 @ X3.transpose(0, 2, 1),
        rtol=1e-14,
    )
    np.testing.assert_allclose(nd.repeat(x, 2, axis=1).asnumpy(), np.repeat(X, 2, axis=1))
    np.testing.assert_allclose(nd.tile(x, (2, 1, 3)).asnumpy(), np.tile(X, (2, 1, 3)))
    np.testing.assert_allclose(nd.arange(2, 5, 0.5).asnumpy(), np.arange(2, 5, 0.5))


# -- errors ----------------------------------------------------------------------------------


def test_non_ndarray_input_raises_type_error_naming_the_function() -> None:
    with pytest.raises(TypeError, match=r"mx\.nd\.transpose: data must be an NDArray"):
        nd.transpose(np.zeros((2, 2)))
    with pytest.raises(TypeError, match=r"mx\.nd\.concat: data\[1\] must be an NDArray"):
        nd.concat(nd.zeros((2, 2)), [[1, 2]])


@pytest.mark.parametrize(
    "call",
    [
        lambda: nd.tile(nd.ones((2,)), reps=(2,), out=nd.ones((4,))),
        lambda: nd.take(nd.ones((3,)), nd.array([1]), mode="raise"),
        lambda: nd.arange(3, infer_range=True),
        lambda: nd.linalg_gemm2(nd.ones((2, 2)), nd.ones((2, 2)), axis=-3),
    ],
)
def test_unsupported_options_raise_not_implemented_naming_the_docs(call: Callable[[], Any]) -> None:
    with pytest.raises(NotImplementedError, match=r"docs/migration-mxnet\.md"):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: nd.topk(nd.ones((3,)), ret_typ="values"),
        lambda: nd.take(nd.ones((3,)), nd.array([1]), mode="bad"),
        lambda: nd.L2Normalization(nd.ones((2, 3)), mode="batch"),
        lambda: nd.L2Normalization(nd.ones((2, 3)), mode="spatial"),
        lambda: nd.linalg_gemm2(nd.ones((2, 2), dtype="int32"), nd.ones((2, 2), dtype="int32")),
        lambda: nd.add_n(nd.ones((2,)), nd.ones((3,))),
        lambda: nd.where(nd.ones((2,)), nd.ones((2,)), nd.ones((3,))),
        lambda: nd.arange(0, 3, 0),
        lambda: nd.broadcast_power(nd.ones((2,)), nd.ones((2,), dtype="float64")),
        lambda: nd.SequenceMask(nd.ones((3, 2)), nd.ones((3,)), use_sequence_length=True),
        lambda: nd.slice(nd.ones((3, 4)), begin=(0,), end=(2,), step=(0,)),
        lambda: nd.reshape(nd.ones((2, 3)), shape=(4, -1)),
    ],
)
def test_bad_input_raises_mxnet_error(call: Callable[[], Any]) -> None:
    with pytest.raises(mx.base.MXNetError):
        call()


# -- the builtins these functions shadow in mx.nd --------------------------------------------


def test_indexing_and_int_mean_still_work() -> None:
    """``mx.nd.slice``/``max`` are module functions of ndarray.py, beside its indexing code."""
    x = nd.array([1.0, 2.0, 3.0])
    assert x[1].shape == (1,)
    y = nd.zeros((3,))
    x.attach_grad()
    with mx.autograd.record():
        y[:] = x * 2
    assert y._var is not None
    np.testing.assert_array_equal(nd.mean(nd.array([1, 2, 4], dtype="int32")).asnumpy(), [2])
    assert nd.reverse is nd.flip


def test_cast_to_an_integer_dtype_is_not_recorded() -> None:
    """mxnet 1.9.1 passes a zero gradient through a cast to int32; here the integer result is
    outside the graph, so a backward from it raises MXNetError."""
    x = nd.array([1.7, -1.7])
    x.attach_grad()
    with mx.autograd.record():
        y = nd.cast(x, dtype="int32")
    np.testing.assert_array_equal(y.asnumpy(), [1, -1])
    with pytest.raises(mx.base.MXNetError):
        y.backward()
