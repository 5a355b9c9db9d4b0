"""The functions across processes in one process (tests/mpi runs them over two): with a
communicator of one process ``AllReduce`` is the identity, ``DistributedMean`` the mean and
``SyncBatchNormalization`` batch normalization; the errors name the function and argument."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import gradhub.parametric_functions as PF
import numpy as np
import pytest
from gradhub_nn_ops.distributed import ONE_PROCESS


class _Doubling:
    """A communicator of two processes holding the same values (each sum is twice the value)."""

    size = 2
    rank = 0

    def all_reduce(self, values, division=False, inplace=True):  # type: ignore[no-untyped-def]
        values *= 1 if division else 2
        return values


def _stats(c: int) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [
        rng.standard_normal((1, c)),
        rng.uniform(0.5, 1.5, (1, c)),
        np.zeros((1, c)),
        np.ones((1, c)),
    ]


def test_one_process_is_batch_normalization_with_its_running_statistics() -> None:
    x = np.random.default_rng(0).uniform(-2, 2, (5, 3))
    a, b = _stats(3), _stats(3)
    y = F.sync_batch_normalization(gh.Variable(x), *a, ONE_PROCESS, decay_rate=0.7)
    yb = F.batch_normalization(gh.Variable(x), *b, decay_rate=0.7)
    np.testing.assert_allclose(y.d, yb.d, rtol=0, atol=1e-14)
    np.testing.assert_allclose(a[2], b[2], rtol=0, atol=1e-15)  # running mean
    np.testing.assert_allclose(a[3], b[3], rtol=0, atol=1e-15)  # running variance, n / (n - 1)


def test_processes_with_the_same_batch_give_that_batch_s_statistics() -> None:
    # two processes holding the same 4 rows: the statistics of 8 rows, the unbiased variance
    # with N = 8 (not 4)
    x = np.random.default_rng(2).uniform(-2, 2, (4, 3))
    a = _stats(3)
    F.sync_batch_normalization(gh.Variable(x), *a, _Doubling(), decay_rate=0.0)
    np.testing.assert_allclose(a[2], x.mean(0, keepdims=True), atol=1e-14)
    np.testing.assert_allclose(a[3], x.var(0, keepdims=True) * 8 / 7, atol=1e-14)
    m = F.distributed_mean(gh.Variable(x), _Doubling(), axis=0)
    np.testing.assert_allclose(m.d, x.mean(0), atol=1e-15)
    np.testing.assert_array_equal(F.all_reduce(gh.Variable(x), _Doubling()).d, 2 * x)


def test_a_missing_or_wrong_communicator_is_named() -> None:
    x = gh.Variable(np.ones((3, 2)))
    with pytest.raises(
        TypeError, match=r"sync_batch_normalization\(\): argument 'comm' is required"
    ):
        F.sync_batch_normalization(x, *_stats(2))
    with pytest.raises(TypeError, match=r"all_reduce\(\): argument 'comm' must be a communicator"):
        F.all_reduce(x, object())
    with pytest.raises(TypeError, match=r"distributed_mean\(\): argument 'comm' is required"):
        F.distributed_mean(x)
    with pytest.raises(TypeError, match=r"all_reduce\(\): input 'x' must be floating-point"):
        F.all_reduce(gh.Variable(np.ones(3, np.int64), need_grad=False), ONE_PROCESS)


def test_too_few_values_in_all_processes_together_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"sync_batch_normalization\(\): .* one value per channel"):
        F.sync_batch_normalization(gh.Variable(np.ones((1, 2))), *_stats(2), ONE_PROCESS)
    # one row in each of two processes is enough
    a = _stats(2)
    F.sync_batch_normalization(gh.Variable(np.arange(2.0)[None]), *a, _Doubling())


def test_parametric_layer_has_batch_normalization_s_parameters() -> None:
    gh.clear_parameters()
    x = gh.Variable(np.random.default_rng(3).standard_normal((4, 3, 2)))
    y, mu, var = PF.sync_batch_normalization(x, ONE_PROCESS, output_stat=True, name="l")
    assert sorted(gh.get_parameters(grad_only=False)) == [
        "l/bn/beta",
        "l/bn/gamma",
        "l/bn/mean",
        "l/bn/var",
    ]
    np.testing.assert_allclose(mu.d, x.d.mean(axis=(0, 2), keepdims=True), atol=1e-15)
    np.testing.assert_allclose(var.d, x.d.var(axis=(0, 2), keepdims=True), atol=1e-15)
    np.testing.assert_allclose(y.d, (x.d - mu.d) / np.sqrt(var.d + 1e-5), atol=1e-14)
    z = PF.sync_batch_normalization(x, ONE_PROCESS, no_scale=True, no_bias=True, name="m")
    np.testing.assert_allclose(z.d.mean(axis=(0, 2)), 0.0, atol=1e-12)
    with pytest.raises(NotImplementedError, match="group='node' is not provided"):
        PF.sync_batch_normalization(x, ONE_PROCESS, group="node")
    gh.clear_parameters()
