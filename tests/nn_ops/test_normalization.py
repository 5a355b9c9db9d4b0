"""Batch, layer, group and instance normalization of gradhub-nn-ops: running statistics,
``None`` for beta, gamma or the statistics, ``output_stat``, float16 data, argument and shape
checks. Values against independent numpy formulas, gradients against float64 finite
differences (``gradhub.testing.gradcheck``, to second order)."""

from __future__ import annotations

import inspect
import itertools
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck
from numeric_helpers import batch_normalization_reference as _bn_np

# -- batch_normalization with None ---------------------------------------------------------


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


# -- group_normalization, instance_normalization -------------------------------------------


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


# -- batch and layer normalization: running statistics -------------------------------------


def _v(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


def _bn_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    x = rng.standard_normal((5, 3, 2)).astype(np.float32)
    beta = rng.standard_normal((1, 3, 1)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, (1, 3, 1)).astype(np.float32)
    mean = np.zeros((1, 3, 1), np.float32)
    var = np.ones((1, 3, 1), np.float32)
    return x, beta, gamma, mean, var


V = gh.Variable


def const(a: Any) -> gh.Variable:
    return V(np.asarray(a), need_grad=False)


def _bn(x: Any, dtype: Any, **kw: Any) -> tuple[Any, ...]:
    c = x.shape[1]
    sh = (1, c) + (1,) * (x.ndim - 2)
    beta, gamma = V(np.zeros(sh, dtype)), V(np.ones(sh, dtype))
    mean, var = np.zeros(sh, dtype), np.ones(sh, dtype)
    return F.batch_normalization(x, beta, gamma, mean, var, **kw), beta, gamma, mean, var


def _x(shape: tuple[int, ...], seed: int = 0) -> gh.Variable:
    return gh.Variable(np.random.default_rng(seed).standard_normal(shape))


def test_batch_normalization_updates_running_statistics_in_place() -> None:
    x, beta, gamma, mean, var = _bn_inputs(np.random.default_rng(0))
    rm = gh.Variable(mean, need_grad=False)
    rv = gh.Variable(var, need_grad=False)
    arr_m, arr_v = rm.d, rv.d
    y = F.batch_normalization(x, beta, gamma, rm, rv, decay_rate=0.8)
    bm = x.mean(axis=(0, 2), keepdims=True)
    bv = x.var(axis=(0, 2), keepdims=True)
    n = 10
    np.testing.assert_allclose(rm.d, 0.2 * bm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.d, 0.8 + 0.2 * bv * n / (n - 1), rtol=1e-5)
    assert rm.d is arr_m and rv.d is arr_v  # updated in place
    np.testing.assert_allclose(
        y.d, (x - bm) / np.sqrt(bv + 1e-5) * gamma + beta, rtol=1e-4, atol=1e-5
    )
    # re-executing the graph (nnabla's static style) updates the statistics again
    y.forward()
    np.testing.assert_allclose(rm.d, 0.8 * 0.2 * bm + 0.2 * bm, rtol=1e-5, atol=1e-6)


def test_batch_normalization_inference_uses_running_statistics() -> None:
    x, beta, gamma, _, _ = _bn_inputs(np.random.default_rng(1))
    mean = np.full((1, 3, 1), 0.5, np.float32)
    var = np.full((1, 3, 1), 4.0, np.float32)
    before = (mean.copy(), var.copy())
    y = F.batch_normalization(x, beta, gamma, mean, var, batch_stat=False)
    np.testing.assert_allclose(y.d, (x - 0.5) / np.sqrt(4.0 + 1e-5) * gamma + beta, rtol=1e-5)
    np.testing.assert_array_equal(mean, before[0])
    np.testing.assert_array_equal(var, before[1])


def test_batch_normalization_training_gradient_ignores_running_statistics() -> None:
    x, beta, gamma, mean, var = (a.astype(np.float64) for a in _bn_inputs(np.random.default_rng(2)))
    xs = _v(x)
    rm, rv = _v(mean), _v(var)
    y = F.batch_normalization(xs, _v(beta), _v(gamma), rm, rv)
    gx, gm, gv = gh.grad([y], [xs, rm, rv], unreachable="zero")
    # the normalized output sums to beta per channel whatever x is: its x-gradient sums to 0
    np.testing.assert_allclose(gx.d.sum(axis=(0, 2)), 0.0, atol=1e-10)
    np.testing.assert_array_equal(gm.d, 0.0)
    np.testing.assert_array_equal(gv.d, 0.0)


def test_batch_normalization_read_only_running_mean_is_a_clear_error() -> None:
    x, beta, gamma, mean, var = _bn_inputs(np.random.default_rng(3))
    mean.flags.writeable = False
    with pytest.raises(ValueError, match=r"batch_normalization.*running mean.*read-only"):
        F.batch_normalization(x, beta, gamma, mean, var)


def test_batch_normalization_wrong_parameter_shape_names_it() -> None:
    x, beta, gamma, mean, var = _bn_inputs(np.random.default_rng(4))
    with pytest.raises(ValueError, match=r"batch_normalization.*gamma must have shape"):
        F.batch_normalization(x, beta, gamma.reshape(3), mean, var)


def test_layer_normalization_statistics() -> None:
    x = np.random.default_rng(5).standard_normal((3, 4, 2))
    y, mu, var = F.layer_normalization(_v(x), output_stat=True)
    np.testing.assert_allclose(mu.d[:, 0, 0], x.reshape(3, -1).mean(axis=1))
    np.testing.assert_allclose(var.d[:, 0, 0], x.reshape(3, -1).var(axis=1))
    np.testing.assert_allclose(y.d.reshape(3, -1).mean(axis=1), 0.0, atol=1e-12)


# -- float16 accumulates in float32 ---------------------------------------------------------


def test_layer_normalization_float16_large_variance() -> None:
    """Formerly: (1, 512) float16 data with std ~12 came back all zeros."""
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


# -- batch normalization settings -------------------------------------------------------------


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


# -- layer normalization beta/gamma shapes ----------------------------------------------------


@pytest.mark.parametrize("arg", ["beta", "gamma"])
def test_layer_normalization_parameter_shape_checked_first(arg: str) -> None:
    with pytest.raises(ValueError, match=rf"layer_normalization\(\): argument '{arg}'") as e:
        F.layer_normalization(V(np.ones((2, 3))), **{arg: V(np.ones((1, 4)))})
    assert "mul2" not in str(e.value) and "add2" not in str(e.value)


def test_group_normalization_positional_output_stat() -> None:
    x = _x((2, 4, 3, 3))
    b, g = np.zeros((1, 4, 1, 1)), np.full((1, 4, 1, 1), 3.0)
    out = F.group_normalization(x, b, g, 2, 1, 0, 1e-5, True)  # nnabla: output_stat=True
    assert [o.shape for o in out] == [(2, 4, 3, 3), (2, 2, 1, 1, 1), (2, 2, 1, 1, 1)]
    assert abs(out[0].d.std() - 3.0) < 1e-3  # gamma used (nnabla: std 3.0)
    kw = F.group_normalization(x, b, g, 2, output_stat=True)
    np.testing.assert_allclose(out[0].d, kw[0].d)
    # gradhub's extras by keyword still work
    y = F.group_normalization(x, b, g, 2, no_scale=True)
    assert abs(y.d.std() - 1.0) < 1e-3


def test_instance_normalization_positional_output_stat() -> None:
    x = _x((2, 3, 4))
    b, g = np.zeros((1, 3, 1)), np.full((1, 3, 1), 2.0)
    out = F.instance_normalization(x, b, g, 1, 0, 1e-5, True)
    assert [o.shape for o in out] == [(2, 3, 4), (2, 3, 1), (2, 3, 1)]
    np.testing.assert_allclose(out[1].d, x.d.mean(axis=2, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(out[2].d, x.d.var(axis=2, keepdims=True), rtol=1e-6)
    assert abs(out[0].d.std() - 2.0) < 1e-3


# -- missing arguments -----------------------------------------------------------------


def test_batch_normalization_output_stat() -> None:
    x = _x((4, 3, 2))
    p = [np.zeros((1, 3, 1)), np.ones((1, 3, 1)), np.zeros((1, 3, 1)), np.ones((1, 3, 1))]
    y, m, v = F.batch_normalization(x, *p, output_stat=True)
    assert m.shape == v.shape == (1, 3, 1)  # nnabla's shapes
    np.testing.assert_allclose(m.d.ravel(), x.d.mean(axis=(0, 2)), rtol=1e-6)
    np.testing.assert_allclose(v.d.ravel(), x.d.var(axis=(0, 2)), rtol=1e-6)
    np.testing.assert_allclose(y.d, F.batch_normalization(x, *[a.copy() for a in p]).d)
    assert len(F.batch_normalization(x, *p, (1,), 0.9, 1e-5, True, True)) == 3
    with pytest.raises(ValueError, match=r"batch_normalization.*output_stat.*batch_stat"):
        F.batch_normalization(x, *p, batch_stat=False, output_stat=True)
    assert "output_stat" in inspect.signature(F.batch_normalization).parameters


def test_batch_normalization_output_stat_gradient() -> None:
    p = [np.zeros((1, 3)), np.ones((1, 3)), np.zeros((1, 3)), np.ones((1, 3))]
    gh.testing.gradcheck(
        lambda x: F.batch_normalization(x, *p, output_stat=True),
        [np.random.default_rng(2).standard_normal((4, 3))],
    )


def test_running_statistics_of_a_compiled_step_follow_the_eager_ones() -> None:
    # the kernel updates the running arrays in place: a replay runs it again, so the statistics
    # after three compiled calls are those of three eager calls; reading them inside the step
    # before the function ran is refused by name (they are read-only while the step is traced)
    import gradhub.parametric_functions as PF

    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    seen: dict[str, list[Any]] = {}
    for how in ("compiled", "eager"):
        gh.clear_parameters()

        def step(x: Any) -> Any:
            y = PF.batch_normalization(x, batch_stat=True)
            return F.sum(y * y)

        run = gh.compile(step) if how == "compiled" else step
        for k in range(3):
            run(x * (k + 1) if how == "compiled" else gh.Variable(x * (k + 1), need_grad=False))
        params = gh.get_parameters(grad_only=False)
        seen[how] = [params["bn/mean"].d.copy(), params["bn/var"].d.copy()]
    for a, b in zip(seen["compiled"], seen["eager"]):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(seen["compiled"][0], np.zeros((1, 3), np.float32))

    mean = gh.get_parameters(grad_only=False)["bn/mean"]

    def reads_first(x: Any) -> Any:
        float(mean.d.sum())
        return F.sum(PF.batch_normalization(x, batch_stat=True))

    with pytest.raises(NotImplementedError, match=r"batch_normalization\(\) writes into one"):
        gh.compile(reads_first)(x)
    assert mean.d.flags.writeable
    gh.clear_parameters()


def test_layer_normalization_float16_with_a_large_variance_warns_nothing() -> None:
    # regression: the float32 variance (90000) was cast to float16 also when not returned,
    # which overflowed with a RuntimeWarning (an error under -W error)
    import warnings

    x = gh.Variable(np.array([[-300.0, 300.0]], np.float16))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = F.layer_normalization(x, batch_axis=0)
    np.testing.assert_allclose(y.d.astype(np.float64), [[-1.0, 1.0]], rtol=1e-3)
