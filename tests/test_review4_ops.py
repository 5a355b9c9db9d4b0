"""Review 4 (ops vs PyTorch): batch_normalization with None terms, group/instance normalization,
deconvolution output_padding below max(stride, dilation).

No torch: values against independent numpy formulas, gradients against float64 finite
differences (gradhub.testing.gradcheck, to second order).
"""

from __future__ import annotations

import itertools

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck


def _bn_np(
    x: np.ndarray,
    gamma: np.ndarray | None,
    beta: np.ndarray | None,
    red: tuple[int, ...],
    eps: float = 1e-5,
) -> np.ndarray:
    mu = x.mean(axis=red, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=red, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y


# -- 1. batch_normalization with None ---------------------------------------------------------


@pytest.mark.parametrize("omit", list(itertools.product([False, True], repeat=4)))
def test_batch_normalization_accepts_none_terms(omit: tuple[bool, ...]) -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, (4, 3, 2))
    beta, gamma = rng.standard_normal((1, 3, 1)), rng.uniform(0.5, 1.5, (1, 3, 1))
    mean, var = np.zeros((1, 3, 1)), np.ones((1, 3, 1))
    args = [None if o else a for o, a in zip(omit, (beta, gamma, mean, var))]
    y = F.batch_normalization(gh.Variable(x), *args)
    want = _bn_np(x, None if omit[1] else gamma, None if omit[0] else beta, (0, 2))
    np.testing.assert_allclose(y.d, want, rtol=1e-10, atol=1e-12)
    # a running statistic that was passed is updated; None leaves nothing to update
    if not omit[2]:
        np.testing.assert_allclose(mean, 0.1 * x.mean(axis=(0, 2), keepdims=True), rtol=1e-12)
    if not omit[3]:
        assert not np.allclose(var, 1.0)


def test_batch_normalization_none_by_keyword_and_inference() -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(-2, 2, (5, 3))
    mean, var = rng.standard_normal((1, 3)) * 0.1, rng.uniform(0.5, 1.5, (1, 3))
    y = F.batch_normalization(x, beta=None, gamma=None, mean=mean, variance=var, batch_stat=False)
    np.testing.assert_allclose(y.d, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-12)
    y = F.batch_normalization(x, None, None, mean, var, (1,), 0.9, 1e-5, False)
    np.testing.assert_allclose(y.d, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-12)
    # float32 stays float32 (the dummies take x's dtype)
    y32 = F.batch_normalization(x.astype(np.float32), None, None, None, None)
    assert y32.dtype == np.float32


@pytest.mark.parametrize("which", ["mean", "variance"])
def test_batch_normalization_none_statistic_in_inference_is_an_error(which: str) -> None:
    x = np.ones((4, 3))
    kw = {"mean": np.zeros((1, 3)), "variance": np.ones((1, 3)), which: None}
    with pytest.raises(ValueError, match=rf"batch_normalization\(\).*'{which}'.*batch_stat"):
        F.batch_normalization(x, None, None, batch_stat=False, **kw)
    args = (x, None, None, kw["mean"], kw["variance"], (1,), 0.9, 1e-5, False)
    with pytest.raises(ValueError, match=rf"'{which}'"):
        F.batch_normalization(*args)


@pytest.mark.parametrize("batch_stat", [True, False])
@pytest.mark.parametrize("drop", ["none", "beta", "gamma", "both"])
def test_batch_normalization_none_gradients_order_2(batch_stat: bool, drop: str) -> None:
    rng = np.random.default_rng(2)
    x = rng.uniform(-2, 2, (4, 3))
    beta, gamma = rng.standard_normal((1, 3)), rng.uniform(0.5, 1.5, (1, 3))
    mean, var = rng.standard_normal((1, 3)) * 0.1, rng.uniform(0.5, 1.5, (1, 3))

    def fn(x, beta, gamma):  # type: ignore[no-untyped-def]
        b = None if drop in ("beta", "both") else beta
        g = None if drop in ("gamma", "both") else gamma
        m = None if batch_stat else gh.Variable(mean, need_grad=False)
        v = None if batch_stat else gh.Variable(var, need_grad=False)
        return F.batch_normalization(x, b, g, m, v, batch_stat=batch_stat)

    keep = [0] + [i for i, n in ((1, "beta"), (2, "gamma")) if drop not in (n, "both")]
    assert gradcheck(fn, [x, beta, gamma], order=2, grad_inputs=keep)


def test_batch_normalization_none_through_nnabla_compat() -> None:
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.functions as NF

    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (4, 3))
    xv = nn.Variable.from_numpy_array(x)
    y = NF.batch_normalization(xv, None, None, None, None)
    y.forward()
    np.testing.assert_allclose(y.d, _bn_np(x, None, None, (0,)), rtol=1e-6, atol=1e-6)
    assert isinstance(y, nn.Variable)
    with pytest.raises(ValueError, match="'mean'"):
        NF.batch_normalization(xv, None, None, None, None, batch_stat=False)


# -- 2. group_normalization, instance_normalization -------------------------------------------


def test_group_normalization_value_and_gradients() -> None:
    rng = np.random.default_rng(4)
    x = rng.uniform(-2, 2, (2, 6, 3))
    beta, gamma = rng.standard_normal((1, 6, 1)), rng.uniform(0.5, 1.5, (1, 6, 1))
    y = F.group_normalization(x, beta, gamma, 3)
    xg = x.reshape(2, 3, 2, 3)  # (N, G, C/G, L): statistics over the last two axes
    want = _bn_np(xg, None, None, (2, 3)).reshape(x.shape) * gamma + beta
    np.testing.assert_allclose(y.d, want, rtol=1e-10, atol=1e-12)
    assert gradcheck(
        lambda x, b, g: F.group_normalization(x, b, g, num_groups=3), [x, beta, gamma], order=2
    )
    # no_scale / no_bias / None omit the terms
    y = F.group_normalization(x, None, gamma, 3, no_scale=True)
    np.testing.assert_allclose(y.d, _bn_np(xg, None, None, (2, 3)).reshape(x.shape), rtol=1e-10)


def test_instance_normalization_value_and_gradients() -> None:
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, (2, 3, 2, 2))
    beta, gamma = rng.standard_normal((1, 3, 1, 1)), rng.uniform(0.5, 1.5, (1, 3, 1, 1))
    y = F.instance_normalization(x, beta, gamma)
    np.testing.assert_allclose(y.d, _bn_np(x, gamma, beta, (2, 3)), rtol=1e-10, atol=1e-12)
    assert gradcheck(lambda x, b, g: F.instance_normalization(x, b, g), [x, beta, gamma], order=2)
    # channel last
    y = F.instance_normalization(x, None, None, channel_axis=-1)
    np.testing.assert_allclose(y.d, _bn_np(x, None, None, (1, 2)), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    ("num_groups", "err", "msg"),
    [
        (4, ValueError, "divide the 6 channels"),
        (0, ValueError, ">= 1"),
        (-2, ValueError, ">= 1"),
        (2.0, TypeError, "must be an int"),
        (True, TypeError, "must be an int"),
    ],
)
def test_group_normalization_checks_num_groups(num_groups: object, err: type, msg: str) -> None:
    with pytest.raises(err, match=rf"group_normalization\(\): argument 'num_groups'.*{msg}"):
        F.group_normalization(np.ones((2, 6, 3)), None, None, num_groups)


def test_instance_normalization_checks_axes_and_shapes() -> None:
    x = np.ones((2, 3, 4))
    with pytest.raises(ValueError, match=r"instance_normalization\(\): channel_axis 0 .*batch"):
        F.instance_normalization(x, None, None, channel_axis=0)
    with pytest.raises(ValueError, match=r"instance_normalization\(\): argument 'gamma'"):
        F.instance_normalization(x, None, np.ones((1, 2, 1)))
    with pytest.raises(ValueError, match=r"instance_normalization\(\): argument 'eps'"):
        F.instance_normalization(x, None, None, eps=0.0)


# -- 3. deconvolution output_padding < max(stride, dilation) ----------------------------------


_DECONV_CASES = [
    # x shape, w shape, attrs (output_padding >= stride, allowed because < dilation)
    ((1, 1, 3), (1, 1, 2), {"stride": 1, "dilation": 2, "output_padding": 1}),
    ((2, 2, 3), (2, 3, 2), {"stride": 1, "dilation": 3, "output_padding": 2, "pad": 1}),
    ((1, 2, 3), (2, 1, 2), {"stride": 2, "dilation": 3, "output_padding": 2}),
    (
        (1, 2, 3, 2),
        (2, 2, 2, 2),
        {"stride": (1, 2), "dilation": (2, 1), "pad": (1, 0), "output_padding": (1, 1)},
    ),
    (
        (1, 4, 2, 3),
        (4, 1, 2, 2),
        {"group": 2, "dilation": (3, 2), "pad": (2, 1), "output_padding": (2, 1)},
    ),
]


@pytest.mark.parametrize(("xs", "ws", "attrs"), _DECONV_CASES)
def test_deconvolution_output_padding_below_dilation(xs, ws, attrs) -> None:  # type: ignore[no-untyped-def]
    from gradhub_nn_ops.conv import _deconvolution_ref

    rng = np.random.default_rng(6)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    b = rng.standard_normal(ws[1] * attrs.get("group", 1))
    y = F.deconvolution(x, w, b, **attrs)
    np.testing.assert_allclose(y.d, _deconvolution_ref(x, w, b, **attrs), rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x, w, b: F.deconvolution(x, w, b, **attrs), [x, w, b], order=2)


def test_deconvolution_output_padding_example_from_the_review() -> None:
    # torch conv_transpose1d(x, w, stride=1, dilation=2, output_padding=1) gives this (review 4)
    x = np.array([[[0.0, 1.0, 2.0]]])
    w = np.array([[[1.0, 0.0]]])
    y = F.deconvolution(x, w, stride=1, dilation=2, output_padding=1)
    np.testing.assert_array_equal(y.d, [[[0.0, 1.0, 2.0, 0.0, 0.0, 0.0]]])


def test_deconvolution_output_padding_first_order_fast_path() -> None:
    # a plain backward (the array-level rule) against central differences
    from numeric_helpers import central_differences

    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((2, 2, 3)), rng.standard_normal((2, 2, 2))
    attrs = {"stride": 1, "dilation": 3, "output_padding": 2, "pad": 1}
    wy = rng.standard_normal(F.deconvolution(x, w, **attrs).shape)
    xv, wv = gh.Variable(x), gh.Variable(w)
    F.sum(F.deconvolution(xv, wv, **attrs) * wy).backward()
    fx = central_differences(lambda a: float((F.deconvolution(a, w, **attrs).d * wy).sum()), x)
    fw = central_differences(lambda a: float((F.deconvolution(x, a, **attrs).d * wy).sum()), w)
    np.testing.assert_allclose(xv.g, fx, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(wv.g, fw, rtol=1e-6, atol=1e-8)


def test_deconvolution_output_padding_still_checked() -> None:
    x, w = np.ones((1, 1, 3)), np.ones((1, 1, 2))
    with pytest.raises(ValueError, match=r"deconvolution\(\): output_padding .*stride.*dilation"):
        F.deconvolution(x, w, stride=2, dilation=2, output_padding=2)
