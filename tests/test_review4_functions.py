"""Regression tests for the fourth review round: PF group/instance normalization, scalar
settings of sign/leaky_relu/softplus, absolute_error and kl_multinomial."""

from __future__ import annotations

from collections.abc import Iterator

import gradhub as gh
import gradhub.functions as F
import gradhub.parametric_functions as PF
import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _fresh_parameters() -> Iterator[None]:
    gh.clear_parameters()
    yield
    gh.clear_parameters()


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
