"""Regression tests for the fourth review round: PF group/instance normalization, scalar
settings of sign/leaky_relu/softplus, absolute_error and kl_multinomial."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import gradhub.parametric_functions as PF
import numpy as np
import pytest


def _group_norm_ref(x: np.ndarray, groups: int, eps: float = 1e-5) -> np.ndarray:
    n = x.shape[0]
    xg = x.reshape(n, groups, -1)
    mu = xg.mean(axis=2, keepdims=True)
    var = xg.var(axis=2, keepdims=True)
    return ((xg - mu) / np.sqrt(var + eps)).reshape(x.shape)


def test_pf_group_normalization_parameters_and_value() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 3, 3))
    y = PF.group_normalization(gh.Variable(x), num_groups=3, name="gn")
    params = gh.get_parameters()
    assert {k: v.shape for k, v in params.items()} == {
        "gn/group_normalization/beta": (1, 6, 1, 1),
        "gn/group_normalization/gamma": (1, 6, 1, 1),
    }
    np.testing.assert_allclose(y.d, _group_norm_ref(x, 3), rtol=1e-10, atol=1e-12)
    # the parameters are used: gamma's gradient is sum(dy * x_hat) per channel
    loss = F.sum(y * y)
    gh.grad([loss], [params["gn/group_normalization/gamma"]], set_grad=True)
    xhat = _group_norm_ref(x, 3)
    want = (2 * xhat * xhat).sum(axis=(0, 2, 3)).reshape(1, 6, 1, 1)
    np.testing.assert_allclose(params["gn/group_normalization/gamma"].g, want, rtol=1e-6)  # float32


def test_pf_instance_normalization_no_bias_and_param_init() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 5))
    g = np.arange(1.0, 5.0).reshape(1, 4, 1)
    y = PF.instance_normalization(gh.Variable(x), no_bias=True, param_init={"gamma": g})
    assert list(gh.get_parameters()) == ["instance_normalization/gamma"]
    mu, var = x.mean(axis=2, keepdims=True), x.var(axis=2, keepdims=True)
    np.testing.assert_allclose(y.d, g * (x - mu) / np.sqrt(var + 1e-5), rtol=1e-10)
    with pytest.raises(ValueError, match=r"PF.instance_normalization: param_init keys"):
        PF.instance_normalization(gh.Variable(x), param_init={"w": g})
    with pytest.raises(ValueError, match=r"PF.group_normalization: channel_axis"):
        PF.group_normalization(gh.Variable(x), 2, channel_axis=3)


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
    """Review 4: these settings reached the kernels (NaN for sign, a broadcast shape for
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


def test_absolute_error_value_and_gradient() -> None:
    a = gh.Variable(np.array([1.0, 2.0, -1.5]))
    b = gh.Variable(np.array([3.0, 2.0, -4.0]))
    y = F.absolute_error(a, b)
    np.testing.assert_array_equal(y.d, [2.0, 0.0, 2.5])
    ga, gb = gh.grad([F.sum(y)], [a, b])
    np.testing.assert_array_equal(ga.d, [-1.0, 0.0, 1.0])  # 0 at equality, as torch's l1_loss
    np.testing.assert_array_equal(gb.d, [1.0, 0.0, -1.0])
    with pytest.raises(ValueError, match=r"absolute_error\(\): arguments 'x0' and 'x1'"):
        F.absolute_error(a, gh.Variable(np.zeros((3, 1))))


def test_kl_multinomial_matches_nnabla_values() -> None:
    """Values printed by nnabla 1.39's F.kl_multinomial (float32) for these inputs."""
    p = np.array([[[0.2, 0.8], [0.5, 0.5]]])
    q = np.array([[[0.4, 0.6], [0.1, 0.9]]])
    y1 = F.kl_multinomial(gh.Variable(p), gh.Variable(q))
    assert y1.shape == (1, 1)
    np.testing.assert_allclose(y1.d, [[0.6023418]], rtol=1e-6)
    y2 = F.kl_multinomial(gh.Variable(p), gh.Variable(q), base_axis=2)
    assert y2.shape == (1, 2, 1)
    np.testing.assert_allclose(y2.d.ravel(), [0.09151623, 0.5108255], rtol=1e-6)
    # the clamps: p = 0 adds nothing; q = 0 is taken as 1e-8
    y0 = F.kl_multinomial(gh.Variable([[0.0, 1.0]]), gh.Variable([[0.4, 0.6]]))
    np.testing.assert_allclose(y0.d, [[0.5108256]], rtol=1e-6)
    yq = F.kl_multinomial(gh.Variable([[0.3, 0.7]]), gh.Variable([[0.0, 1.0]]))
    np.testing.assert_allclose(yq.d, [[4.9153404]], rtol=1e-6)
    assert F.kl_multinomial(
        gh.Variable(np.full((2, 3), 0.3)), gh.Variable(np.full((2, 3), 0.5)), base_axis=0
    ).shape == (1,)
    with pytest.raises(ValueError, match=r"kl_multinomial\(\): argument 'base_axis'"):
        F.kl_multinomial(gh.Variable(p), gh.Variable(q), base_axis=4)


def test_kl_multinomial_gradients_to_second_order() -> None:
    rng = np.random.default_rng(3)
    p = rng.uniform(0.2, 1.0, (2, 3))
    q = rng.uniform(0.2, 1.0, (2, 3))
    pv, qv = gh.Variable(p), gh.Variable(q)
    gp, gq = gh.grad([F.sum(F.kl_multinomial(pv, qv))], [pv, qv], create_graph=True)
    np.testing.assert_allclose(gp.d, np.log(p) + 1 - np.log(q), rtol=1e-12)
    np.testing.assert_allclose(gq.d, -p / q, rtol=1e-12)
    (hq,) = gh.grad([F.sum(gq)], [qv])  # d/dq sum(-p/q) = p/q^2
    np.testing.assert_allclose(hq.d, p / q**2, rtol=1e-12)
