"""Argument checks of gradhub-nn-ops: errors name the function and the argument. Labels of
softmax_cross_entropy, probabilities of binary_cross_entropy, shapes of the elementwise losses,
integer geometry of the convolution family, real scalar settings (elu, selu, pad, sign,
leaky_relu, softplus), reduction axes, and a table of bad calls across the library."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest

V = gh.Variable
RNG = np.random.default_rng(11)


def const(a: Any) -> gh.Variable:
    return gh.Variable(np.asarray(a), need_grad=False)


def raises(fn: Callable[[], Any], exc: type[BaseException], pattern: str) -> None:
    with pytest.raises(exc, match=pattern):
        fn()


# -- softmax_cross_entropy labels -----------------------------------------------------------


@pytest.mark.parametrize("label", [1.9, -0.5, 0.5, np.inf])
def test_sce_rejects_fractional_labels(label: float) -> None:
    x = V(np.array([[0.0, 1.0, 2.0]]))
    raises(
        lambda: F.softmax_cross_entropy(x, const([[label]])),
        ValueError,
        rf"softmax_cross_entropy\(\): argument 'target' must hold integer labels.*"
        rf"{re.escape(str(float(label)))}",
    )


def test_sce_reports_a_nan_label_as_nan() -> None:
    x = V(np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"'target'.*float value nan") as info:
        F.softmax_cross_entropy(x, const([[1.0], [np.nan]]))
    assert "-9223372036854775808" not in str(info.value)


def test_sce_rejects_bool_labels_with_a_clear_error() -> None:
    x = V(np.zeros((2, 3)))
    raises(
        lambda: F.softmax_cross_entropy(x, const([[True], [False]])),
        TypeError,
        r"softmax_cross_entropy\(\): argument 'target' must hold integer labels.*bool",
    )
    x3 = V(np.zeros((2, 3, 2)))
    raises(
        lambda: F.softmax_cross_entropy(x3, const(np.ones((2, 1, 2), bool)), axis=1),
        TypeError,
        r"'target'.*bool",
    )


def test_sce_whole_float_labels_still_match_int_labels() -> None:
    x = RNG.standard_normal((4, 3))
    lab = np.array([[0], [2], [1], [2]])
    lp = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
    ref = -np.take_along_axis(lp, lab, axis=1)
    for t in (lab, lab.astype(np.float32), lab.astype(np.float64)):
        np.testing.assert_allclose(F.softmax_cross_entropy(V(x), const(t)).d, ref, rtol=1e-12)


# -- binary_cross_entropy range -------------------------------------------------------------


@pytest.mark.parametrize("bad", [1.5, -0.5, 1.0 + 1e-12, -1e-300])
def test_bce_rejects_probabilities_outside_0_1(bad: float) -> None:
    x = V(np.array([0.5, bad]))
    raises(
        lambda: F.binary_cross_entropy(x, const([1.0, 0.0])),
        ValueError,
        r"binary_cross_entropy\(\): argument 'x' must hold probabilities in \[0, 1\]",
    )


def test_bce_keeps_its_clamped_boundaries_and_propagates_nan() -> None:
    y = F.binary_cross_entropy(V(np.array([0.0, 1.0, 0.5, np.nan])), const([0.0, 1.0, 1.0, 1.0]))
    np.testing.assert_allclose(y.d[:3], [0.0, 0.0, np.log(2.0)], rtol=1e-12)
    assert np.isnan(y.d[3])


# -- elementwise losses: equal shapes, named function and arguments -------------------------


@pytest.mark.parametrize(
    "fname, names",
    [
        ("squared_error", ("x0", "x1")),
        ("huber_loss", ("x0", "x1")),
        ("sigmoid_cross_entropy", ("x", "target")),
        ("binary_cross_entropy", ("x", "target")),
    ],
)
@pytest.mark.parametrize("s0, s1", [((4, 3), (4, 2)), ((4, 3), (1, 3)), ((4, 1), (4,)), ((3,), ())])
def test_elementwise_losses_require_equal_shapes(
    fname: str, names: tuple[str, str], s0: tuple[int, ...], s1: tuple[int, ...]
) -> None:
    a, b = V(np.full(s0, 0.5)), V(np.full(s1, 0.5))
    with pytest.raises(ValueError) as info:
        getattr(F, fname)(a, b)
    msg = str(info.value)
    assert msg.startswith(f"{fname}(): arguments '{names[0]}' and '{names[1]}'"), msg
    assert f"{names[0]} {s0}" in msg and f"{names[1]} {s1}" in msg
    assert "sub2" not in msg.lower() and "broadcast together" not in msg


def test_squared_error_and_huber_loss_of_equal_shapes() -> None:
    a, b = RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2))
    np.testing.assert_allclose(F.squared_error(V(a), V(b)).d, (a - b) ** 2, rtol=1e-12)
    d = np.abs(a - b)
    np.testing.assert_allclose(
        F.huber_loss(V(a), V(b)).d, np.where(d < 1, d * d, 2 * d - 1), rtol=1e-12
    )


# -- convolution geometry: integers only ----------------------------------------------------


X4 = RNG.standard_normal((1, 2, 6, 6))
W4 = RNG.standard_normal((2, 2, 3, 3))


@pytest.mark.parametrize("fname", ["convolution", "deconvolution"])
@pytest.mark.parametrize(
    "arg, value",
    [
        ("pad", (1.5, 1.5)),
        ("stride", (1.7, 1.7)),
        ("dilation", 1.5),
        ("pad", 1.0),
        ("stride", (2, 2.0)),
    ],
)
def test_conv_rejects_fractional_geometry(fname: str, arg: str, value: Any) -> None:
    raises(
        lambda: getattr(F, fname)(V(X4), V(W4), **{arg: value}),
        TypeError,
        rf"{fname}\(\): {arg} must be an int or a sequence of ints",
    )


@pytest.mark.parametrize("fname", ["convolution", "deconvolution"])
@pytest.mark.parametrize("arg, value", [("group", 1.0), ("group", 1.5), ("base_axis", 1.0)])
def test_conv_rejects_fractional_group_and_base_axis(fname: str, arg: str, value: Any) -> None:
    raises(
        lambda: getattr(F, fname)(V(X4), V(W4), **{arg: value}),
        TypeError,
        rf"{fname}\(\): {arg} must be an int",
    )


def test_conv_fractional_settings_of_the_other_functions() -> None:
    raises(
        lambda: F.deconvolution(V(X4), V(W4), stride=2, output_padding=(0.5, 0)),
        TypeError,
        r"deconvolution\(\): output_padding must be an int",
    )
    dy = V(RNG.standard_normal((1, 2, 4, 4)))
    raises(
        lambda: F.convolution_filter_grad(V(X4), dy, kernel=(3, 3), pad=(0.5, 0)),
        TypeError,
        r"convolution_filter_grad\(\): pad must be an int",
    )
    raises(
        lambda: F.convolution_filter_grad(V(X4), dy, kernel=(3.0, 3)),
        TypeError,
        r"convolution_filter_grad\(\): kernel must be an int",
    )
    raises(
        lambda: F.max_pooling(V(X4), kernel=(2.5, 2)),
        TypeError,
        r"max_pooling\(\): .*kernel.* must be an int",
    )


def test_conv_accepts_numpy_integers() -> None:
    ref = F.convolution(V(X4), V(W4), pad=(1, 1), stride=(2, 2)).d
    y = F.convolution(
        V(X4),
        V(W4),
        pad=np.int64(1),
        stride=(np.int32(2), np.int64(2)),
        group=np.int64(1),
        base_axis=np.int64(1),
    )
    np.testing.assert_array_equal(y.d, ref)


# -- convolution, pooling and normalization -------------------------------------------------


def var(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: F.convolution(np.zeros((1, 3, 4, 4)), np.zeros((2, 2, 3, 3))),
            r"convolution\(\): x has 3 channels",
        ),
        (
            lambda: F.convolution(np.zeros((1, 2, 4, 4)), np.zeros((2, 2, 3, 3)), pad=(1, 1, 1)),
            r"convolution\(\): pad has 3 entries",
        ),
        (
            lambda: F.convolution(np.zeros((1, 2, 4, 4)), np.zeros((2, 2, 3, 3)), np.zeros(3)),
            r"convolution\(\): bias must have shape \(2,\)",
        ),
        (
            lambda: F.convolution(np.zeros((1, 2, 2, 2)), np.zeros((2, 2, 3, 3))),
            r"convolution\(\): the input's spatial shape",
        ),
        (
            lambda: F.convolution(np.zeros((1, 2, 4, 4)), np.zeros((2, 2, 3, 3)), stride=0),
            r"convolution\(\): every entry of stride",
        ),
        (
            lambda: F.convolution(np.zeros((2, 4, 4)), np.zeros((2, 2, 3, 3))),
            r"convolution\(\): x of shape \(2, 4, 4\) with base_axis=1",
        ),
        (
            lambda: F.deconvolution(
                np.zeros((1, 2, 3, 3)), np.zeros((2, 2, 3, 3)), stride=(2, 2), output_padding=(2, 0)
            ),
            r"deconvolution\(\): output_padding",
        ),
        (
            lambda: F.max_pooling(np.zeros((1, 1, 4, 4)), (2, 2), pad=(2, 0)),
            r"max_pooling\(\): pad",
        ),
        (lambda: F.average_pooling(np.zeros((1, 1, 1, 4)), (2, 2)), r"average_pooling\(\): kernel"),
        (lambda: F.max_pooling(np.zeros((4,)), (2, 2)), r"max_pooling\(\): x of shape"),
        (
            lambda: F.layer_normalization(np.zeros((2, 3)), batch_axis=2),
            r"layer_normalization\(\): batch_axis",
        ),
    ],
)
def test_bad_arguments_name_the_function_and_argument(call: object, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        call()  # type: ignore[operator]


# -- clear errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "exc", "pattern"),
    [
        (lambda x: F.mean(x, axis=3), ValueError, r"mean\(\).*'axis'"),
        (lambda x: F.max(x, axis=(0, 0)), ValueError, r"max\(\).*'axis'.*repeats"),
        (lambda x: F.norm(x, p=0), ValueError, r"norm\(\).*'p'"),
        (lambda x: F.huber_loss(x, x, delta=-1.0), ValueError, r"huber_loss\(\).*'delta'"),
        (lambda x: F.prelu(x, gh.Variable([0.1, 0.2, 0.3])), ValueError, r"prelu\(\).*'weight'"),
        (lambda x: F.clip(x, 2.0, 1.0), ValueError, r"clip\(\).*'min'"),
        (lambda x: F.softmax(x, axis=-3), ValueError, r"softmax\(\).*'axis'"),
        # (complex data is refused by Variable itself: tests/core/test_complex_values.py)
        (
            lambda x: F.sigmoid_cross_entropy(x, np.array([["a", "b"], ["c", "d"]])),
            TypeError,
            r"sigmoid_cross_entropy\(\).*'target'",
        ),
        (lambda x: F.max(gh.Variable(np.zeros((0, 2))), axis=0), ValueError, r"max\(\).*size 0"),
    ],
)
def test_bad_arguments_name_function_and_argument(call: object, exc: type, pattern: str) -> None:
    x = var(np.ones((2, 2)))
    with pytest.raises(exc, match=pattern):
        call(x)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda x: F.elu(x, alpha=None), r"elu\(\): argument 'alpha'"),
        (lambda x: F.selu(x, scale=None), r"selu\(\): argument 'scale'"),
        (lambda x: F.selu(x, alpha=np.ones(2)), r"selu\(\): argument 'alpha'"),
        (lambda x: F.pad(x, (1, 1), constant_value=None), r"pad\(\): argument 'constant_value'"),
    ],
)
def test_real_settings_of_nn_ops_refuse_none_and_arrays(call: Any, pattern: str) -> None:
    """Formerly: elu(alpha=None), selu(scale=None) and pad(constant_value=None) gave NaN."""
    with pytest.raises(TypeError, match=pattern + " must be a real number"):
        call(V(np.array([1.0, -2.0])))


def test_real_settings_of_nn_ops_take_numpy_scalars_and_0d_arrays() -> None:
    x = V(np.array([1.0, -2.0]))
    np.testing.assert_allclose(F.elu(x, alpha=np.array(2.0)).d, [1.0, 2.0 * np.expm1(-2.0)])
    np.testing.assert_allclose(F.pad(x, (1, 1), constant_value=np.float32(3)).d, [3, 1, -2, 3])
    np.testing.assert_array_equal(F.greater_scalar(x, np.int64(0)).d, [1.0, 0.0])


@pytest.mark.parametrize("name", ["mean", "prod", "max", "min", "logsumexp", "norm"])
def test_float_axis_error_names_function_and_axis(name: str) -> None:
    with pytest.raises(TypeError, match=rf"{name}\(\).*'axis'"):
        getattr(F, name)(V(np.ones((2, 3))), axis=1.5)


@pytest.mark.parametrize(
    ("fn", "arg", "bad"),
    [
        (F.sign, "alpha", None),
        (F.sign, "alpha", "0.1"),
        (F.leaky_relu, "alpha", None),
        (F.leaky_relu, "alpha", np.array([[0.1], [0.5]])),
        (F.softplus, "beta", [2.0]),
        (F.softplus, "beta", None),
        (F.softplus, "beta", np.array([0.1, 0.2])),
    ],
)
def test_scalar_settings_are_checked(fn: object, arg: str, bad: object) -> None:
    """These settings reached the kernels (NaN for sign, a broadcast shape for
    leaky_relu, a list taken as a number by softplus)."""
    x = gh.Variable(np.array([0.0, -2.0, 3.0]))
    name = fn.__name__  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match=rf"{name}\(\): argument '{arg}' must be a real number"):
        fn(x, **{arg: bad})  # type: ignore[operator]


def test_scalar_settings_still_take_numbers_and_0d_arrays() -> None:
    x = gh.Variable(np.array([0.0, -2.0, 3.0]))
    np.testing.assert_array_equal(F.sign(x, alpha=np.array(0.5)).d, [0.5, -1.0, 1.0])
    np.testing.assert_allclose(F.leaky_relu(x, np.float32(0.25)).d, [0.0, -0.5, 3.0])
    np.testing.assert_allclose(F.softplus(x, beta=2).d, np.log1p(np.exp(2 * x.d)) / 2)
    with pytest.raises(ValueError, match="argument 'beta' must not be 0"):
        F.softplus(x, beta=0.0)
