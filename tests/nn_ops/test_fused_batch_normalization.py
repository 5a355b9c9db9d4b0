"""FusedBatchNormalization of gradhub-nn-ops (nnabla's ``relu(BN(x) + z)`` as one function):
values and running statistics against an independent numpy formula, gradients against float64
finite differences (``gradhub.testing.gradcheck``, to second order), the gradient of ``z`` and
the ReLU mask, argument checks."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck
from numeric_helpers import batch_normalization_reference as _bn_np


def _inputs(seed: int, shape: tuple[int, ...], pshape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """x, z, beta, gamma, mean, variance with every value before the ReLU at least 0.1 away from
    0 (finite differences must not cross the kink)."""
    rng = np.random.default_rng(seed)
    red = tuple(i for i, n in enumerate(pshape) if n == 1)
    while True:
        x = rng.uniform(-2, 2, shape)
        z = rng.standard_normal(shape)
        beta, gamma = rng.standard_normal(pshape), rng.uniform(0.5, 1.5, pshape)
        mean, var = rng.standard_normal(pshape) * 0.1, rng.uniform(0.5, 1.5, pshape)
        u_train = _bn_np(x, gamma, beta, red) + z
        u_inf = (x - mean) / np.sqrt(var + 1e-5) * gamma + beta + z
        if min(np.abs(u_train).min(), np.abs(u_inf).min()) > 0.1:
            return x, z, beta, gamma, mean, var


@pytest.mark.parametrize("with_z", [False, True])
def test_training_value_and_running_statistics(with_z: bool) -> None:
    x, z, beta, gamma, mean, var = _inputs(0, (4, 3, 2), (1, 3, 1))
    m, v = mean.copy(), var.copy()
    y = F.fused_batch_normalization(
        gh.Variable(x), beta, gamma, m, v, z if with_z else None, decay_rate=0.7, eps=1e-3
    )
    want = np.maximum(_bn_np(x, gamma, beta, (0, 2), eps=1e-3) + (z if with_z else 0), 0)
    np.testing.assert_allclose(y.d, want, rtol=1e-12, atol=1e-12)
    assert (y.d == 0).any() and (y.d > 0).any()  # both sides of the ReLU are exercised
    n = 4 * 2
    bm = x.mean(axis=(0, 2), keepdims=True)
    bv = x.var(axis=(0, 2), keepdims=True) * n / (n - 1)  # unbiased, as nnabla's
    np.testing.assert_allclose(m, 0.7 * mean + 0.3 * bm, rtol=1e-12)
    np.testing.assert_allclose(v, 0.7 * var + 0.3 * bv, rtol=1e-12)
    assert y.creator.fdef.name == "FusedBatchNormalization"
    assert len(y.creator.srcs) == (6 if with_z else 5)


def test_inference_value_keeps_running_statistics() -> None:
    x, z, beta, gamma, mean, var = _inputs(1, (3, 2), (1, 2))
    m, v = mean.copy(), var.copy()
    y = F.fused_batch_normalization(gh.Variable(x), beta, gamma, m, v, z, batch_stat=False)
    want = np.maximum((x - mean) / np.sqrt(var + 1e-5) * gamma + beta + z, 0)
    np.testing.assert_allclose(y.d, want, rtol=1e-12)
    assert np.array_equal(m, mean) and np.array_equal(v, var)


@pytest.mark.parametrize("batch_stat", [True, False])
@pytest.mark.parametrize("with_z", [False, True])
def test_gradients_to_second_order(batch_stat: bool, with_z: bool) -> None:
    x, z, beta, gamma, mean, var = _inputs(2, (4, 3), (1, 3))

    def fn(x, beta, gamma, *zs):  # type: ignore[no-untyped-def]
        m = gh.Variable(mean.copy(), need_grad=False)
        v = gh.Variable(var.copy(), need_grad=False)
        return F.fused_batch_normalization(x, beta, gamma, m, v, *zs, batch_stat=batch_stat)

    args = [x, beta, gamma, z] if with_z else [x, beta, gamma]
    assert gradcheck(fn, args, order=2)


def test_gradient_of_z_is_the_masked_incoming_gradient() -> None:
    x, z, beta, gamma, mean, var = _inputs(3, (4, 3), (1, 3))
    xv, zv = gh.Variable(x), gh.Variable(z)
    y = F.fused_batch_normalization(xv, beta, gamma, mean.copy(), var.copy(), zv)
    g = np.random.default_rng(5).standard_normal(y.shape)
    gx, gz = gh.grad([y], [xv, zv], [gh.Variable(g)])
    np.testing.assert_array_equal(gz.d, g * (y.d > 0))
    # x's gradient is batch normalization's for the masked gradient
    xb = gh.Variable(x)
    bn = F.batch_normalization(xb, beta, gamma, mean.copy(), var.copy())
    (gx_bn,) = gh.grad([bn], [xb], [gh.Variable(g * (y.d > 0))])
    np.testing.assert_allclose(gx.d, gx_bn.d, rtol=1e-12, atol=1e-12)


def test_reexecution_updates_running_statistics_again() -> None:
    x, _, beta, gamma, mean, var = _inputs(4, (4, 2), (1, 2))
    m, v = mean.copy(), var.copy()
    y = F.fused_batch_normalization(gh.Variable(x), beta, gamma, m, v)
    y.forward()
    bm = x.mean(axis=0, keepdims=True)
    np.testing.assert_allclose(m, 0.81 * mean + (1 - 0.81) * bm, rtol=1e-12)


def test_argument_checks() -> None:
    x, z, beta, gamma, mean, var = _inputs(5, (4, 3), (1, 3))
    with pytest.raises(NotImplementedError, match=r"fused_batch_normalization\(\).*'sigmoid'"):
        F.fused_batch_normalization(x, beta, gamma, mean, var, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match=r"fused_batch_normalization\(\): z must have"):
        F.fused_batch_normalization(x, beta, gamma, mean, var, z[:2])
    with pytest.raises(ValueError, match=r"fused_batch_normalization\(\): beta must have shape"):
        F.fused_batch_normalization(x, beta[:, :2], gamma, mean, var)
    with pytest.raises(ValueError, match=r"fused_batch_normalization\(\): argument 'eps'"):
        F.fused_batch_normalization(x, beta, gamma, mean, var, eps=0.0)
