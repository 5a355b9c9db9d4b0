"""``gradhub_compat.chainer.functions``: every function against a numpy reference and numeric
gradients, argument errors, the options of the losses, convolution and pooling, dropout,
``embed_id``, ``split_axis``, one-sided ``clip``, ``mean`` with weights, and the elementwise
losses refusing operands of different shapes. Expected behaviour was checked against chainer
7.8.1.
"""

from __future__ import annotations

import gradhub_compat.chainer.functions as F
import numpy as np
import pytest
from compat.chainer.helpers import _v
from gradhub.testing import gradcheck
from gradhub_compat import chainer
from gradhub_compat.chainer import Variable

_RNG = np.random.default_rng(0)


_X = _RNG.uniform(0.2, 0.9, (2, 3))


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


_ELEMENTWISE = [
    ("sin", F.sin, np.sin),
    ("cos", F.cos, np.cos),
    ("tan", F.tan, np.tan),
    ("arcsin", F.arcsin, np.arcsin),
    ("arccos", F.arccos, np.arccos),
    ("arctan", F.arctan, np.arctan),
    ("sinh", F.sinh, np.sinh),
    ("cosh", F.cosh, np.cosh),
    ("exp", F.exp, np.exp),
    ("expm1", F.expm1, np.expm1),
    ("log", F.log, np.log),
    ("log1p", F.log1p, np.log1p),
    ("sqrt", F.sqrt, np.sqrt),
    ("tanh", F.tanh, np.tanh),
    ("sigmoid", F.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    ("relu", F.relu, lambda x: np.maximum(x, 0)),
    ("absolute", F.absolute, np.abs),
    ("square", F.square, np.square),
    ("erf", F.erf, np.vectorize(__import__("math").erf)),
    ("leaky_relu", F.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x)),
    ("elu", F.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    (
        "selu",
        F.selu,
        lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
    ),
    ("softplus", F.softplus, lambda x: np.log1p(np.exp(x))),
    ("softplus_beta2", lambda x: F.softplus(x, beta=2.0), lambda x: np.log1p(np.exp(2 * x)) / 2),
    ("softmax", F.softmax, lambda x: _softmax(x, 1)),
    ("softmax_axis0", lambda x: F.softmax(x, axis=0), lambda x: _softmax(x, 0)),
    ("log_softmax", F.log_softmax, lambda x: np.log(_softmax(x, 1))),
    ("sum", F.sum, np.sum),
    ("sum_axis", lambda x: F.sum(x, axis=1, keepdims=True), lambda x: x.sum(1, keepdims=True)),
    ("mean", F.mean, np.mean),
    ("mean_axis", lambda x: F.mean(x, axis=0), lambda x: x.mean(0)),
    (
        "mean_weights",
        lambda x: F.mean(x, axis=1, weights=np.array([1.0, 2.0, 3.0])),
        lambda x: (x * [1.0, 2.0, 3.0]).sum(1) / 6.0,
    ),
    (
        "mean_weights_all",
        lambda x: F.mean(x, weights=np.arange(1.0, 7.0).reshape(2, 3)),
        lambda x: (x * np.arange(1.0, 7.0).reshape(2, 3)).sum() / 21.0,
    ),
    ("max", lambda x: F.max(x, axis=1), lambda x: x.max(1)),
    ("min", lambda x: F.min(x, axis=0, keepdims=True), lambda x: x.min(0, keepdims=True)),
    ("prod", lambda x: F.prod(x, axis=1), lambda x: x.prod(1)),
    ("logsumexp", lambda x: F.logsumexp(x, axis=1), lambda x: np.log(np.exp(x).sum(1))),
    ("clip", lambda x: F.clip(x, 0.3, 0.6), lambda x: np.clip(x, 0.3, 0.6)),
    ("reshape", lambda x: F.reshape(x, (3, -1)), lambda x: x.reshape(3, 2)),
    ("flatten", F.flatten, lambda x: x.reshape(-1)),
    ("transpose", F.transpose, lambda x: x.T),
    (
        "broadcast_to",
        lambda x: F.broadcast_to(x, (4, 2, 3)),
        lambda x: np.broadcast_to(x, (4, 2, 3)),
    ),
    ("expand_dims", lambda x: F.expand_dims(x, 1), lambda x: x[:, None]),
    ("squeeze", lambda x: F.squeeze(F.expand_dims(x, 0)), lambda x: x),
    ("get_item", lambda x: F.get_item(x, (slice(None), 1)), lambda x: x[:, 1]),
    ("tile", lambda x: F.tile(x, (2, 1)), lambda x: np.tile(x, (2, 1))),
    ("flip", lambda x: F.flip(x, 1), lambda x: x[:, ::-1]),
    ("concat", lambda x: F.concat([x, x * 2]), lambda x: np.concatenate([x, x * 2], 1)),
    ("stack", lambda x: F.stack([x, x * 2], axis=1), lambda x: np.stack([x, x * 2], 1)),
    ("maximum", lambda x: F.maximum(x, 1 - x), lambda x: np.maximum(x, 1 - x)),
    ("minimum", lambda x: F.minimum(x, 1 - x), lambda x: np.minimum(x, 1 - x)),
    (
        "where",
        lambda x: F.where(np.array([[True, False, True]] * 2), x, -x),
        lambda x: np.where([[True, False, True]] * 2, x, -x),
    ),
    ("squared_error", lambda x: F.squared_error(x, 1 - x), lambda x: (2 * x - 1) ** 2),
    ("absolute_error", lambda x: F.absolute_error(x, 1 - x), lambda x: np.abs(2 * x - 1)),
    ("mse", lambda x: F.mean_squared_error(x, 1 - x), lambda x: ((2 * x - 1) ** 2).mean()),
    ("mae", lambda x: F.mean_absolute_error(x, 1 - x), lambda x: np.abs(2 * x - 1).mean()),
    (
        "linear",
        lambda x: F.linear(x, np.arange(6.0).reshape(2, 3), np.array([1.0, -1.0])),
        lambda x: x @ np.arange(6.0).reshape(2, 3).T + [1.0, -1.0],
    ),
    ("linear_nobias", lambda x: F.linear(x, np.ones((4, 3))), lambda x: x @ np.ones((3, 4))),
    ("matmul", lambda x: F.matmul(x, x, transb=True), lambda x: x @ x.T),
    ("matmul_ta", lambda x: F.matmul(x, x, transa=True), lambda x: x.T @ x),
]


def _conv_ref(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = xp.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride : i * stride + kh, j * stride : j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out


def _pool_ref(x: np.ndarray, k: int, s: int, p: int, cover_all: bool) -> np.ndarray:
    n, c, h, w = x.shape

    def size(d: int) -> int:
        return (d + 2 * p - k + (s - 1 if cover_all else 0)) // s + 1

    oh, ow = size(h), size(w)
    big = np.full((n, c, h + 2 * p + k + s, w + 2 * p + k + s), -np.inf)
    big[:, :, p : p + h, p : p + w] = x
    out = np.empty((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = big[:, :, i * s : i * s + k, j * s : j * s + k].max(axis=(2, 3))
    return out


@pytest.mark.parametrize(("name", "fn", "ref"), _ELEMENTWISE, ids=[c[0] for c in _ELEMENTWISE])
def test_function_matches_numpy_and_gradcheck(name: str, fn: object, ref: object) -> None:
    x = Variable(_X.copy())
    y = fn(x)  # type: ignore[operator]
    assert type(y) is Variable
    np.testing.assert_allclose(y.array, ref(_X), rtol=1e-10, atol=1e-12)  # type: ignore[operator]
    if name not in ("max", "min", "clip", "maximum", "minimum", "absolute_error", "mae"):
        gradcheck(fn, [_X], order=1)  # type: ignore[arg-type]


def test_split_axis() -> None:
    x = Variable(np.arange(12.0).reshape(2, 6))
    parts = F.split_axis(x, 3, axis=1)
    assert [p.shape for p in parts] == [(2, 2)] * 3
    np.testing.assert_array_equal(parts[2].array, [[4.0, 5.0], [10.0, 11.0]])
    _, b = F.split_axis(x, [1], axis=0)
    np.testing.assert_array_equal(b.array, [[6.0, 7.0, 8.0, 9.0, 10.0, 11.0]])
    (whole,) = F.split_axis(x, 1, axis=0)
    assert F.split_axis(x, 1, axis=0, force_tuple=False).shape == whole.shape
    with pytest.raises(ValueError, match="cannot split length 6 into 4 sections"):
        F.split_axis(x, 4, axis=1)


def test_function_argument_errors() -> None:
    x = Variable(_X.copy())
    with pytest.raises(ValueError, match=r"chainer F\.clip: need x_min < x_max"):
        F.clip(x, 1.0, 0.0)
    with pytest.raises(ValueError, match="cannot reshape"):
        F.reshape(x, (4, 2))
    with pytest.raises(ValueError, match="axis 0 of shape"):
        F.squeeze(x, 0)
    with pytest.raises(ValueError, match="weights must have shape"):
        F.mean(x, axis=1, weights=np.ones(2))
    with pytest.raises(ValueError, match="must have x's shape"):
        F.mean(x, weights=np.ones(3))
    with pytest.raises(ValueError, match="W must be 2-d"):
        F.linear(x, np.ones(3))
    with pytest.raises(ValueError, match="n_batch_axes"):
        F.linear(x, np.ones((2, 3)), n_batch_axes=0)
    with pytest.raises(ValueError, match="ratio must be in"):
        F.dropout(x, 1.5)


def test_softmax_cross_entropy_options() -> None:
    x = _RNG.standard_normal((4, 3))
    t = np.array([0, 2, -1, 1])
    logp = np.log(_softmax(x, 1))
    per = np.array([-logp[i, t[i]] if t[i] >= 0 else 0.0 for i in range(4)])
    np.testing.assert_allclose(F.softmax_cross_entropy(Variable(x), t).array, per.sum() / 3)
    np.testing.assert_allclose(
        F.softmax_cross_entropy(Variable(x), t, normalize=False).array, per.sum() / 4
    )
    np.testing.assert_allclose(F.softmax_cross_entropy(Variable(x), t, reduce="no").array, per)
    gradcheck(lambda v: F.softmax_cross_entropy(v, t), [x], order=2)
    t2 = np.array([0, 2, 7, 1])  # a custom ignore label
    per2 = np.where(t2 == 7, 0.0, per)
    np.testing.assert_allclose(
        F.softmax_cross_entropy(Variable(x), t2, ignore_label=7, reduce="no").array,
        np.where(t2 == 7, 0.0, per2),
    )
    # (N, C, d) scores with (N, d) labels
    x3 = _RNG.standard_normal((2, 3, 2))
    t3 = np.array([[0, 1], [2, 0]])
    lp3 = np.log(_softmax(x3, 1))
    ref3 = -np.array([[lp3[n, t3[n, d], d] for d in range(2)] for n in range(2)])
    np.testing.assert_allclose(F.softmax_cross_entropy(Variable(x3), t3, reduce="no").array, ref3)
    with pytest.raises(ValueError, match="does not match"):
        F.softmax_cross_entropy(Variable(x), np.array([0, 1]))
    with pytest.raises(ValueError, match="reduce must be"):
        F.softmax_cross_entropy(Variable(x), t, reduce="sum")


def test_sigmoid_cross_entropy_options() -> None:
    x = _RNG.standard_normal((2, 3))
    t = np.array([[1, 0, -1], [0, 1, 1]])
    p = 1 / (1 + np.exp(-x))
    per = np.where(t == -1, 0.0, -(t * np.log(p) + (1 - t) * np.log(1 - p)))
    np.testing.assert_allclose(F.sigmoid_cross_entropy(Variable(x), t).array, per.sum() / 5)
    np.testing.assert_allclose(
        F.sigmoid_cross_entropy(Variable(x), t, normalize=False).array, per.sum() / 2
    )
    np.testing.assert_allclose(F.sigmoid_cross_entropy(Variable(x), t, reduce="no").array, per)
    gradcheck(lambda v: F.sigmoid_cross_entropy(v, t), [x], order=2)
    with pytest.raises(ValueError, match="must have x's shape"):
        F.sigmoid_cross_entropy(Variable(x), t[0])
    with pytest.raises(ValueError, match="reduce must be"):
        F.sigmoid_cross_entropy(Variable(x), t, reduce="sum")


def test_convolution_2d() -> None:
    x = _RNG.standard_normal((1, 2, 4, 4))
    w = _RNG.standard_normal((3, 2, 3, 3))
    b = _RNG.standard_normal(3)
    y = F.convolution_2d(Variable(x), w, b, stride=2, pad=1)
    np.testing.assert_allclose(y.array, _conv_ref(x, w, 2, 1) + b[:, None, None], rtol=1e-10)
    gradcheck(
        lambda v, u: F.convolution_2d(v, u, stride=1, pad=0), [x[:, :, :3, :3], w[:1]], order=1
    )
    with pytest.raises(ValueError, match="stride must be an int or a pair"):
        F.convolution_2d(Variable(x), w, stride=(1, 2, 3))


@pytest.mark.parametrize(
    ("k", "s", "p", "cover_all"),
    [(2, None, 0, True), (2, None, 0, False), (3, 2, 1, True), (2, 1, 0, False)],
)
def test_max_pooling_2d(k: int, s: int | None, p: int, cover_all: bool) -> None:
    x = _RNG.permutation(50).astype(np.float64).reshape(1, 2, 5, 5)  # distinct values: no ties
    y = F.max_pooling_2d(Variable(x), k, s, p, cover_all=cover_all)
    np.testing.assert_array_equal(y.array, _pool_ref(x, k, s or k, p, cover_all))
    gradcheck(lambda v: F.max_pooling_2d(v, k, s, p, cover_all=cover_all), [x], order=1)


def test_max_pooling_2d_errors() -> None:
    with pytest.raises(ValueError, match="x must be 4-d"):
        F.max_pooling_2d(Variable(np.ones((2, 2))), 2)


def test_average_pooling_2d_counts_padding() -> None:
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    y = F.average_pooling_2d(Variable(x), 2)
    np.testing.assert_allclose(y.array, [[[[2.5, 4.5], [10.5, 12.5]]]])
    yp = F.average_pooling_2d(Variable(x), 3, stride=3, pad=1)  # corner window: 4 of 9 cells
    np.testing.assert_allclose(yp.array[0, 0, 0, 0], (0 + 1 + 4 + 5) / 9)
    gradcheck(lambda v: F.average_pooling_2d(v, 2, 1, 1), [x], order=1)


def test_dropout_scales_the_kept_elements() -> None:
    x = Variable(np.ones((50, 40)))
    y = F.dropout(x, 0.25).array
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.75)
    assert 0.6 < kept.mean() < 0.9
    np.testing.assert_array_equal(F.dropout(x, 0.0).array, x.array)


def test_embed_id() -> None:
    w = _RNG.standard_normal((5, 3))
    ids = np.array([[0, 4], [2, 0]])
    np.testing.assert_allclose(F.embed_id(ids, Variable(w)).array, w[ids])
    y = F.embed_id(ids, Variable(w), ignore_label=0)
    np.testing.assert_allclose(y.array, np.where((ids == 0)[..., None], 0.0, w[ids]))
    gradcheck(lambda u: F.embed_id(ids, u, ignore_label=0), [w], order=1)
    with pytest.raises(TypeError, match="integer ids"):
        F.embed_id(np.ones(2), Variable(w))


@pytest.mark.parametrize(
    "name", ["mean_squared_error", "mean_absolute_error", "squared_error", "absolute_error"]
)
def test_elementwise_losses_refuse_different_shapes(name: str) -> None:
    y = _v([[1.0], [2.0], [3.0], [4.0]])  # (N, 1) prediction
    t = np.array([1.0, 2.0, 3.0, 4.0], np.float32)  # (N,) target
    with pytest.raises(ValueError, match=rf"chainer F\.{name}: .*\(4, 1\) and \(4,\)"):
        getattr(F, name)(y, t)


def test_mean_squared_error_of_equal_shapes_and_its_gradient() -> None:
    y = _v([1.0, 2.0, 4.0])
    t = np.array([1.0, 1.0, 1.0], np.float32)
    loss = F.mean_squared_error(y, t)
    assert float(loss.array) == pytest.approx((0 + 1 + 9) / 3)
    loss.backward()
    np.testing.assert_allclose(y.grad, 2 * (y.array - t) / 3, rtol=1e-6)


def test_clip_with_one_bound() -> None:
    x = _v([-2.0, 0.5, 3.0])
    hi = F.clip(x, None, 1.0)
    np.testing.assert_array_equal(hi.array, [-2.0, 0.5, 1.0])
    lo = F.clip(x, 0.0, None)
    np.testing.assert_array_equal(lo.array, [0.0, 0.5, 3.0])
    F.sum(hi).backward()
    np.testing.assert_array_equal(x.grad, [1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match=r"chainer F\.clip: x_min and x_max are both None"):
        F.clip(x, None, None)


def test_split_axis_refuses_indices_past_the_axis() -> None:
    x = Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    with pytest.raises(ValueError, match=r"chainer F.split_axis: the last index 5 .* length 3"):
        F.split_axis(x, [1, 5], axis=1)
    assert [p.shape for p in F.split_axis(x, [1, 3], axis=1)] == [(2, 1), (2, 2), (2, 0)]


def test_mean_weights_with_one_element_tuple_axis() -> None:
    x = Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    w = np.array([1.0, 2.0, 3.0], np.float32)
    for axis in ((1,), (-1,), [1]):
        m = F.mean(x, axis=axis, weights=w)
        np.testing.assert_allclose(m.array, [8 / 6, 26 / 6], rtol=1e-6)
    with pytest.raises(ValueError, match=r"chainer F\.mean: weights need axis None, an int"):
        F.mean(x, axis=(0, 1), weights=np.ones((2, 3), np.float32))


def test_sum_refuses_a_list_axis() -> None:
    """Regression: ``F.sum(x, axis=[0])`` was accepted; chainer 7.8.1 raises TypeError "None,
    int or tuple of int are required"."""
    x = _v([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match=r"chainer F\.sum: axis .*None, int or tuple of int"):
        F.sum(x, axis=[0])
    np.testing.assert_array_equal(F.sum(x, axis=(0,)).array, [4.0, 6.0])


# -- log2, log10, identity, cast, average, batch_matmul (chainer 7.8.1's values) -------------


def test_log2_and_log10_values_and_gradients_as_chainer() -> None:
    # chainer 7.8.1 for x = [1, 2, 4] (float32), y.grad = 1:
    # log2 -> [0, 1, 2], x.grad [1.442695, 0.7213475, 0.36067376];
    # log10 -> [0, 0.30103, 0.60206], x.grad [0.4342945, 0.21714725, 0.10857362]
    for fn, value, grad in (
        (F.log2, [0.0, 1.0, 2.0], [1.442695, 0.7213475, 0.36067376]),
        (F.log10, [0.0, 0.30103, 0.60206], [0.4342945, 0.21714725, 0.10857362]),
    ):
        x = _v([1.0, 2.0, 4.0])
        y = fn(x)
        assert y.dtype == np.float32
        y.grad = np.ones(3, dtype=np.float32)
        y.backward()
        np.testing.assert_allclose(y.array, value, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(x.grad, grad, rtol=1e-6)
        gradcheck(fn, [np.array([0.5, 1.5, 3.0])], order=2)


def test_log2_refuses_integer_input_as_chainer() -> None:
    # chainer: InvalidType "Expect: x.dtype.kind == f / Actual: i != f"
    with pytest.raises(TypeError, match=r"chainer F.log2: x must be floating point.*int32"):
        F.log2(np.array([1, 2], dtype=np.int32))
    with pytest.raises(TypeError, match=r"chainer F.log10: x must be floating point"):
        F.log10(np.array([1, 2], dtype=np.int64))


def test_identity_returns_new_variables_of_the_graph() -> None:
    x = _v([1.0, 2.0])
    y = F.identity(x)
    assert type(y) is Variable and y is not x and y.creator is not None
    np.testing.assert_array_equal(y.array, [1.0, 2.0])
    a, b = F.identity(x, 2 * x)  # several inputs: a tuple, as chainer
    (a * b).sum().backward()
    np.testing.assert_allclose(x.grad, [4.0, 8.0])  # d(2x^2)/dx
    with pytest.raises(TypeError, match=r"chainer F\.identity: at least one input"):
        F.identity()


def test_cast_values_gradient_and_same_dtype_rule_as_chainer() -> None:
    # chainer 7.8.1: F.cast(x float32, float64) is float64; its gradient comes back float32
    x = _v([1.0, 2.0, 4.0])
    c = F.cast(x, np.float64)
    assert c.dtype == np.float64
    c.grad = np.array([1.0, 2.0, 3.0])
    c.backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad, [1.0, 2.0, 3.0])
    # same dtype: a new Variable with a creator while recording, x itself without (as chainer)
    same = F.cast(x, "float32")
    assert same is not x and same.creator is not None
    with chainer.no_backprop_mode():
        assert F.cast(x, np.float32) is x
    ints = F.cast(np.array([1, 2], dtype=np.int32), np.float32)
    assert ints.dtype == np.float32
    np.testing.assert_array_equal(ints.array, [1.0, 2.0])
    gradcheck(lambda v: F.cast(v, np.float64) * v, [np.array([0.5, 1.5])], order=2)


def test_average_is_mean_as_in_chainer() -> None:
    assert F.average is F.mean  # chainer 7.8.1: F.mean is F.average
    x = _v(np.arange(6.0).reshape(2, 3))
    # chainer: 2.5, [1, 4], weights [1, 3] on axis 0: [2.25, 3.25, 4.25]
    np.testing.assert_allclose(F.average(x).array, 2.5)
    np.testing.assert_allclose(F.average(x, axis=1).array, [1.0, 4.0])
    w = np.array([1.0, 3.0], dtype=np.float32)
    np.testing.assert_allclose(F.average(x, axis=0, weights=w).array, [2.25, 3.25, 4.25])


def test_batch_matmul_as_chainer() -> None:
    a = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    with pytest.warns(DeprecationWarning, match="batch_matmul is deprecated. Use matmul"):
        y = F.batch_matmul(a, np.ones((2, 3, 2), dtype=np.float32))
    # chainer 7.8.1's values
    np.testing.assert_array_equal(y.array, [[[3, 3], [12, 12]], [[21, 21], [30, 30]]])
    with pytest.warns(DeprecationWarning):
        t = F.batch_matmul(a[:, :, :2], a[:, :, :2], transa=True)
        # a 2-d operand is a batch of column vectors: (2, 3) x (2, 3)^T -> (2, 3, 3)
        v = F.batch_matmul(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32), transb=True)
    np.testing.assert_array_equal(t.array, [[[9, 12], [12, 17]], [[117, 132], [132, 149]]])
    assert v.shape == (2, 3, 3)
    with pytest.warns(DeprecationWarning):
        with pytest.raises(TypeError, match=r"chainer F.batch_matmul: a must be float32"):
            F.batch_matmul(a.astype(np.float64), a)
        with pytest.raises(TypeError, match=r"chainer F.batch_matmul: b must have 2 or 3 axes"):
            F.batch_matmul(a, np.ones((1, 2, 3, 2), np.float32))
        with pytest.raises(ValueError, match=r"chainer F.batch_matmul: the inner sizes differ"):
            F.batch_matmul(a, a)
    # gradient against finite differences (float32 operands: a loose tolerance)
    rng = np.random.default_rng(0)
    av = Variable(rng.standard_normal((2, 2, 3)).astype(np.float32))
    bv = Variable(rng.standard_normal((2, 3, 2)).astype(np.float32))
    with pytest.warns(DeprecationWarning):
        (F.batch_matmul(av, bv) ** 2).sum().backward()
    ref_a = 2 * np.einsum("bij,bkj->bik", av.array @ bv.array, bv.array)
    ref_b = 2 * np.einsum("bji,bjk->bik", av.array, av.array @ bv.array)
    np.testing.assert_allclose(av.grad, ref_a, rtol=1e-5)
    np.testing.assert_allclose(bv.grad, ref_b, rtol=1e-5)


def _compiled_matches_eager(step, *feeds) -> None:  # type: ignore[no-untyped-def]
    import gradhub as gh

    fast = gh.compile(step)
    for k, args in enumerate(feeds):
        got = fast(*args)
        want = step(*(Variable(a, requires_grad=False) for a in args))
        for a, b in zip(got if isinstance(got, tuple) else (got,), want):
            np.testing.assert_array_equal(a.array, b.array, err_msg=f"call {k}")


def test_labels_ids_and_conditions_inside_a_compiled_step_follow_each_call() -> None:
    # regression: softmax_cross_entropy, where and embed_id read their labels, conditions and ids
    # in Python: inside gh.compile they were the first call's at every call, silently
    rng = np.random.default_rng(0)
    w = Variable(rng.standard_normal((4, 5)).astype(np.float32))
    emb = Variable(rng.standard_normal((6, 3)).astype(np.float32))

    def step(x, t, c, ids):  # type: ignore[no-untyped-def]
        y = F.matmul(x, w)
        loss = F.softmax_cross_entropy(y, t) + F.sum(F.softmax_cross_entropy(y, t, reduce="no"))
        return loss, F.where(c, y, -y), F.embed_id(ids, emb)

    feeds = [
        (
            rng.standard_normal((3, 4)).astype(np.float32),
            rng.integers(-1, 5, 3),  # (-1: ignored)
            rng.standard_normal((3, 5)) > 0,
            rng.integers(0, 6, 3).astype(np.int32),
        )
        for _ in range(4)
    ]
    _compiled_matches_eager(step, *feeds)


@pytest.mark.parametrize("what", ["sigmoid_cross_entropy", "accuracy", "bn_finetune"])
def test_functions_that_compute_from_values_in_python_are_refused_when_traced(what: str) -> None:
    import gradhub as gh
    import gradhub_compat.chainer.links as L

    bn = L.BatchNormalization(3)

    def step(x, t):  # type: ignore[no-untyped-def]
        if what == "sigmoid_cross_entropy":
            return F.sigmoid_cross_entropy(x, t)
        if what == "accuracy":
            return F.accuracy(x, t)
        return bn(x, finetune=True)  # (counts its calls in Python)

    x, t = np.ones((2, 3), np.float32), np.array([[0, 1, 1], [1, 0, 1]], np.int32)
    with pytest.raises(NotImplementedError, match=r"gradhub\.compile"):
        gh.compile(step)(x, t if what != "accuracy" else t[:, 0])


def test_a_compiled_evaluation_step_reads_the_running_statistics_at_each_call() -> None:
    # regression: fixed_batch_normalization (L.BatchNormalization in test mode) computed
    # 1 / sqrt(var + eps) in Python: a compiled evaluation step kept the first call's statistics
    # while training (outside it) moved them
    import gradhub_compat.chainer.links as L

    rng = np.random.default_rng(1)
    bn = L.BatchNormalization(3)

    def evaluate(x):  # type: ignore[no-untyped-def]
        with chainer.using_config("train", False):
            return bn(x)

    import gradhub as gh

    fast = gh.compile(evaluate)
    for k in range(3):
        bn(Variable(rng.standard_normal((8, 3)).astype(np.float32) * (k + 2)))  # training
        x = rng.standard_normal((4, 3)).astype(np.float32)
        got, want = fast(x), evaluate(Variable(x))
        np.testing.assert_array_equal(got.array, want.array, err_msg=f"call {k}")


@pytest.mark.parametrize("axis", [None, (0, 2)])
def test_a_compiled_training_step_updates_the_running_statistics_at_each_call(axis: object) -> None:
    # L.BatchNormalization in training mode inside gh.compile was refused (its running
    # statistics were updated in Python, which a replay does not run); the update is now made
    # by nn_ops' BatchNormalization kernel, part of the graph: every replay gives the eager
    # step's outputs, gradients and running statistics, bit for bit
    import gradhub as gh
    import gradhub_compat.chainer.links as L

    rng = np.random.default_rng(5)
    shape = (6, 3, 4) if axis is None else (4, 3, 5)
    nets = []
    for _ in range(2):
        bn = L.BatchNormalization(3, axis=axis)
        lin = L.Linear(3 * shape[2], 2, initialW=np.linspace(-1, 1, 6 * shape[2]).reshape(2, -1))
        nets.append((bn, lin))

    def step(net, x):  # type: ignore[no-untyped-def]
        bn, lin = net
        bn.cleargrads()
        lin.cleargrads()
        loss = F.sum(F.tanh(lin(bn(x * 2.0))) ** 2)
        loss.backward()
        return loss

    fast = gh.compile(lambda x: step(nets[0], x))
    for k in range(4):
        x = rng.standard_normal(shape).astype(np.float32) + k
        got, want = fast(x), step(nets[1], Variable(x))
        np.testing.assert_array_equal(got.array, want.array, err_msg=f"call {k}")
        (bn0, lin0), (bn1, lin1) = nets
        for a, b in ((bn0.avg_mean, bn1.avg_mean), (bn0.avg_var, bn1.avg_var)):
            np.testing.assert_array_equal(a, b, err_msg=f"call {k}")
        for a, b in zip((bn0.gamma, bn0.beta, lin0.W), (bn1.gamma, bn1.beta, lin1.W)):
            np.testing.assert_array_equal(a.grad, b.grad, err_msg=f"call {k}")
    # the running mean follows every call's batch (chainer's update with decay 0.9)
    want_mean = np.zeros(3, np.float32)
    rng = np.random.default_rng(5)
    red = (0, 2)
    for k in range(4):
        xb = (rng.standard_normal(shape).astype(np.float32) + k) * 2.0
        want_mean = 0.9 * want_mean + 0.1 * xb.mean(axis=red)
    np.testing.assert_allclose(nets[0][0].avg_mean, want_mean, rtol=1e-5, atol=1e-6)


def test_functions_reading_values_in_python_are_refused_inside_vmap() -> None:
    # regression: inside gradhub.func.vmap these read the placeholder of a batched Variable
    # (element 0's values) and gave every element element 0's labels, masks or data, silently
    import gradhub as gh
    import gradhub.func as ghf
    import gradhub_compat.chainer.links as L

    x = np.array([[[1.0, -1.0]], [[2.0, 0.0]], [[-3.0, 1.0]]])
    labels = gh.Variable(np.array([[[1, 0]], [[0, 1]], [[1, 1]]]), need_grad=False)
    ids = gh.Variable(np.array([[0], [1], [1]], np.int32), need_grad=False)
    soft = np.array([[[1.0, 0.0]], [[0.0, 1.0]], [[0.5, 0.5]]])
    W = np.array([[1.0, 2.0], [3.0, 4.0]])
    cases = [
        (lambda a, t: F.sigmoid_cross_entropy(a, t), (x, labels), "sigmoid_cross_entropy"),
        (lambda a, t: F.softmax_cross_entropy(a, t), (x, soft), "softmax_cross_entropy"),
        (lambda a, t: F.accuracy(a, t), (x, ids), "accuracy"),
        (lambda i: F.embed_id(i, W, ignore_label=-1), (ids,), "embed_id"),
        (lambda a: chainer.Variable(a) * 1.0, (x,), "chainer Variable"),
        (lambda a: F.identity(chainer.as_array(a)), (x,), "chainer.as_array"),
        (lambda a: L.Linear(2, 2).W.copydata(a[0]), (x,), "copydata"),
    ]
    for fn, args, name in cases:
        with pytest.raises(TypeError, match=rf"vmap: .*{name}.* reads the data of a batched"):
            ghf.vmap(fn)(*args)
    pool = np.random.default_rng(0).standard_normal((3, 1, 1, 2, 2))
    with pytest.raises(TypeError, match=r"max_pooling_2d\(return_indices=True\) reads the data"):
        ghf.vmap(lambda h: F.max_pooling_2d(h, 2, return_indices=True)[0])(pool)
    # the running statistics updated in Python (x float64, statistics float32)
    rm, rv = np.zeros(2, np.float32), np.ones(2, np.float32)
    xb = np.arange(12.0).reshape(3, 2, 2)
    g1, b0 = np.ones(2), np.zeros(2)
    with pytest.raises(TypeError, match=r"batch_normalization \(running statistics"):
        ghf.vmap(lambda a: F.batch_normalization(a, g1, b0, running_mean=rm, running_var=rv))(xb)
    assert not rm.any()
    # what reads no values in Python still maps: labels that are not batched
    t0 = np.array([[1, 0]], np.int32)
    got = ghf.vmap(lambda a: F.sigmoid_cross_entropy(a, t0))(x)
    want = [F.sigmoid_cross_entropy(chainer.Variable(x[i]), t0).array for i in range(3)]
    np.testing.assert_allclose(got.d, want, rtol=1e-12)
