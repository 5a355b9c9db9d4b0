"""Regression tests for the second review's validation findings in gradhub-nn-ops.

1. softmax_cross_entropy rejects labels that are not whole numbers (1.9, -0.5, NaN, inf) and
   bool labels instead of truncating them.
2. binary_cross_entropy rejects probabilities outside [0, 1] (NaN still propagates).
3. The elementwise losses require equal shapes and name the called function and arguments.
4. The convolution family (and pooling, which shares its checks) rejects fractional geometry.
5. convolution_filter_grad with an int kernel differentiates (against float64 central
   differences).
6. batch_matmul names a, b and their batch dims when those do not broadcast; einsum and affine
   check their attributes.
7. The parametric functions check n_outmaps/outmaps/kernel/group/base_axis/axes/sizes.
8. Shape and misc functions reject fractional sizes and name their arguments.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import gradhub as gh
import gradhub.functions as F
import gradhub.parametric_functions as PF
import numpy as np
import pytest
from gradhub.testing import gradcheck

V = gh.Variable
RNG = np.random.default_rng(11)


def const(a: Any) -> gh.Variable:
    return gh.Variable(np.asarray(a), need_grad=False)


def raises(fn: Callable[[], Any], exc: type[BaseException], pattern: str) -> None:
    with pytest.raises(exc, match=pattern):
        fn()


# -- 1. softmax_cross_entropy labels -----------------------------------------------------------


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


# -- 2. binary_cross_entropy range -------------------------------------------------------------


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


# -- 3. elementwise losses: equal shapes, named function and arguments -------------------------


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


# -- 4. convolution geometry: integers only ----------------------------------------------------


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


# -- 5. convolution_filter_grad with an int kernel ---------------------------------------------


def _central_diff(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


def _filter_grad_np(x: np.ndarray, dy: np.ndarray, k: int) -> np.ndarray:
    """Independent reference, 1-d, stride 1: dW[o, c, j] = sum_{n, t} dy[n, o, t] x[n, c, t+j]."""
    out = np.zeros((dy.shape[1], x.shape[1], k))
    for j in range(k):
        out[:, :, j] = np.einsum("not,nct->oc", dy, x[:, :, j : j + dy.shape[2]])
    return out


@pytest.mark.parametrize("create_graph", [False, True])
def test_filter_grad_with_an_int_kernel_differentiates(create_graph: bool) -> None:
    rng = np.random.default_rng(0)
    x0, dy0 = rng.standard_normal((1, 2, 5)), rng.standard_normal((1, 2, 3))
    gw = rng.standard_normal((2, 2, 3))  # the seed of the backward pass
    xv, dyv = V(x0), V(dy0)
    w = F.convolution_filter_grad(xv, dyv, kernel=3)
    np.testing.assert_allclose(w.d, _filter_grad_np(x0, dy0, 3), rtol=1e-12)
    gx, gdy = gh.grad([w], [xv, dyv], grad_outputs=[gw], create_graph=create_graph)
    fd_x = _central_diff(lambda a: float((_filter_grad_np(a, dy0, 3) * gw).sum()), x0)
    fd_dy = _central_diff(lambda a: float((_filter_grad_np(x0, a, 3) * gw).sum()), dy0)
    np.testing.assert_allclose(gx.d, fd_x, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gdy.d, fd_dy, rtol=1e-6, atol=1e-8)
    # the same as kernel=(3,)
    gx1, gdy1 = gh.grad(
        [F.convolution_filter_grad(xv, dyv, kernel=(3,))], [xv, dyv], grad_outputs=[gw]
    )
    np.testing.assert_array_equal(gx.d, gx1.d)
    np.testing.assert_array_equal(gdy.d, gdy1.d)


def test_filter_grad_with_an_int_kernel_passes_gradcheck_to_order_2() -> None:
    rng = np.random.default_rng(1)
    gradcheck(
        lambda a, b: F.convolution_filter_grad(a, b, kernel=2),
        [rng.standard_normal((2, 2, 4)), rng.standard_normal((2, 2, 3))],
        order=2,
    )


# -- 6. linalg -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sa, sb, ta, tb",
    [
        ((3, 2, 4), (2, 4, 5), False, False),
        ((3, 2, 4), (2, 5, 4), False, True),
        ((2, 3, 2, 4), (2, 4, 5), False, False),
    ],
)
def test_batch_matmul_names_the_batch_dims(
    sa: tuple[int, ...], sb: tuple[int, ...], ta: bool, tb: bool
) -> None:
    with pytest.raises(ValueError) as info:
        F.batch_matmul(V(np.ones(sa)), V(np.ones(sb)), transpose_a=ta, transpose_b=tb)
    msg = str(info.value)
    assert f"batch dims of a {sa} and b {sb} do not broadcast" in msg, msg
    assert "remapped" not in msg


def test_batch_matmul_contracted_dims_named_with_the_shapes_given() -> None:
    raises(
        lambda: F.batch_matmul(V(np.ones((3, 2, 4))), V(np.ones((3, 4, 5))), transpose_b=True),
        ValueError,
        re.escape(
            "contracted dims differ: a (3, 2, 4) (transpose_a=False) and "
            "b (3, 4, 5) (transpose_b=True)"
        ),
    )


def test_einsum_and_affine_check_their_attributes() -> None:
    a, b = V(np.ones((2, 3))), V(np.ones((3, 2)))
    raises(lambda: F.einsum(a, b, equation=None), TypeError, r"einsum: equation must be a str")
    for eq in ("i1,jk", "ij,jk->ik->i", "ij,jk-ik", "..ij,jk"):
        raises(
            lambda eq=eq: F.einsum(a, b, equation=eq),
            ValueError,
            rf"einsum: equation {re.escape(repr(eq))} is not valid",
        )
    raises(lambda: F.affine(a, b, base_axis=1.5), TypeError, r"affine: base_axis must be an int")


# -- 7. parametric functions -------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _fresh_parameters() -> Any:
    gh.clear_parameters()
    yield
    gh.clear_parameters()


@pytest.mark.parametrize(
    "n, exc",
    [
        (-1, ValueError),
        (0, ValueError),
        (2.5, TypeError),
        ((2, 0), ValueError),
        ((), ValueError),
        (None, TypeError),
    ],
)
def test_pf_affine_checks_n_outmaps(n: Any, exc: type[BaseException]) -> None:
    raises(
        lambda: PF.affine(V(np.ones((2, 3))), n, name="z"),
        exc,
        r"PF\.affine: n_outmaps must be a positive int",
    )


def test_pf_affine_accepts_numpy_ints_and_tuples() -> None:
    assert PF.affine(V(np.ones((2, 3))), np.int64(4), name="a").shape == (2, 4)
    assert PF.affine(V(np.ones((2, 3))), (2, 3), name="b").shape == (2, 2, 3)


@pytest.mark.parametrize("fname", ["convolution", "deconvolution"])
@pytest.mark.parametrize(
    "kwargs, exc, arg",
    [
        ({"outmaps": -2}, ValueError, "outmaps"),
        ({"outmaps": 2.0}, TypeError, "outmaps"),
        ({"kernel": (3.5, 3)}, ValueError, "kernel"),
        ({"kernel": 2.5}, TypeError, "kernel"),
        ({"group": 1.5}, TypeError, "group"),
        ({"group": 0}, ValueError, "group"),
        ({"base_axis": 1.0}, TypeError, "base_axis"),
    ],
)
def test_pf_convolutions_check_their_arguments(
    fname: str, kwargs: dict[str, Any], exc: type[BaseException], arg: str
) -> None:
    args = {"outmaps": 2, "kernel": (3, 3), **kwargs}
    raises(
        lambda: getattr(PF, fname)(V(np.ones((1, 2, 5, 5))), **args),
        exc,
        rf"PF\.{fname}: {arg} must",
    )


def test_pf_other_functions_check_their_arguments() -> None:
    x = V(np.ones((2, 3, 4)))
    ids = const([1, 2])
    raises(lambda: PF.embed(ids, 0, 3), ValueError, r"PF\.embed: n_inputs must be a positive")
    raises(lambda: PF.embed(ids, 3, 2.5), TypeError, r"PF\.embed: n_features must be")
    raises(
        lambda: PF.batch_normalization(x, axes=(1.5,)),
        TypeError,
        r"PF\.batch_normalization: axes must be ints",
    )
    raises(
        lambda: PF.layer_normalization(x, batch_axis=0.5),
        TypeError,
        r"PF\.layer_normalization: batch_axis must be an int",
    )


# -- 8. shape and misc functions ---------------------------------------------------------------


def test_shape_functions_reject_fractional_sizes() -> None:
    x = V(np.ones((2, 3)))
    raises(lambda: F.pad(x, (1.5, 1)), TypeError, r"pad: pad_width must be a sequence of ints")
    raises(lambda: F.pad(x, 1), TypeError, r"pad: pad_width must be a sequence of ints")
    raises(lambda: F.tile(x, (1.5, 2)), TypeError, r"tile: reps must be an int")
    raises(lambda: F.tile(x, "ab"), TypeError, r"tile: reps must be an int")
    raises(lambda: F.broadcast(x, (2.5, 3)), TypeError, r"broadcast: shape must be an int")
    raises(lambda: F.slice(x, start=(0.5, 0)), TypeError, r"slice: start must hold ints")
    raises(
        lambda: F.one_hot(const([[0], [2]]), (2.5,)),
        TypeError,
        r"one_hot: shape must be a sequence of ints",
    )
    raises(
        lambda: F.embed_backward(const([0]), V(np.ones((1, 2))), shape=(2.5, 2)),
        TypeError,
        r"embed_backward: shape must be a sequence of ints",
    )
    raises(lambda: F.dropout(x, p=None), TypeError, r"dropout: p must be a number")


def test_shape_functions_name_mismatched_inputs() -> None:
    x = V(np.ones((2, 3)))
    raises(
        lambda: F.concatenate(x, V(np.ones((3, 3))), axis=1),
        ValueError,
        re.escape(
            "concatenate: the inputs xs must have the same number of dims and the same "
            "size on every axis but axis=1, got shapes [(2, 3), (3, 3)]"
        ),
    )
    raises(
        lambda: F.stack(x, V(np.ones((3, 3)))),
        ValueError,
        re.escape("stack: the inputs xs must all have the same shape, got shapes [(2, 3), (3, 3)]"),
    )
    raises(
        lambda: F.broadcast(x, (4, 3)),
        ValueError,
        re.escape("broadcast: x of shape (2, 3) cannot be broadcast to shape (4, 3)"),
    )


def test_shape_functions_still_accept_ints() -> None:
    x = V(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(F.pad(x, np.array([1, 1])).d, np.pad(x.d, ((0, 0), (1, 1))))
    np.testing.assert_array_equal(F.tile(x, (np.int64(2), 1)).d, np.tile(x.d, (2, 1)))
    np.testing.assert_array_equal(F.broadcast(V(np.ones((1, 3))), (5, 2, 3)).d, np.ones((5, 2, 3)))
    np.testing.assert_array_equal(F.slice(x, start=(np.int64(1), None)).d, x.d[1:])
    np.testing.assert_array_equal(
        F.one_hot(const([[0], [2]]), (np.int64(3),)).d, np.eye(3, dtype=np.float32)[[0, 2]]
    )
