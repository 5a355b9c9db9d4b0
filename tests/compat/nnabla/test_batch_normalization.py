"""Batch normalization in the nnabla layer's static graphs: ``PF``/``F.batch_normalization``
update the running statistics only when the graph is executed (``forward()``, or building it
with auto_forward on), also when rebuilt with existing parameters, and ``output_stat`` in a
static graph, and ``F.batch_normalization`` with ``None`` for beta, gamma or the statistics.
Expected values are those of nnabla 1.39, re-derived with numpy.
"""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as NF
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest
from numeric_helpers import batch_normalization_reference as _bn_np

_BATCH = np.arange(24.0).reshape(8, 3)


def _stats(prefix: str = "bn/bn") -> tuple[np.ndarray, np.ndarray]:
    p = nn.get_parameters(grad_only=False)
    return p[f"{prefix}/mean"].d.ravel().copy(), p[f"{prefix}/var"].d.ravel().copy()


def test_nnabla_pf_batch_normalization_build_leaves_running_statistics_alone() -> None:
    x = nn.Variable((8, 3))
    h = PF.batch_normalization(x, name="bn")
    m, v = _stats()
    np.testing.assert_array_equal(m, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(v, [1.0, 1.0, 1.0])
    x.d = _BATCH
    h.forward()
    m, v = _stats()
    mean, var = _BATCH.mean(0), _BATCH.var(0, ddof=1)  # var = 60 for every column
    np.testing.assert_allclose(m, 0.1 * mean, rtol=1e-6)
    np.testing.assert_allclose(v, 0.9 + 0.1 * var, rtol=1e-6)  # 6.3
    h.forward()
    m2, v2 = _stats()
    np.testing.assert_allclose(m2, 0.9 * m + 0.1 * mean, rtol=1e-6)
    np.testing.assert_allclose(v2, 0.9 * v + 0.1 * var, rtol=1e-6)


def test_nnabla_pf_batch_normalization_rebuild_with_existing_parameters() -> None:
    x = nn.Variable.from_numpy_array(_BATCH)
    with nn.parameter_scope("net"):
        PF.batch_normalization(x, (1,), 0.5, 1e-5, True, name="bn").forward()
        m, v = _stats("bn/bn")
        # a second build (positional batch_stat) reuses the parameters and leaves them alone
        h = PF.batch_normalization(x, (1,), 0.5, 1e-5, True, name="bn")
        np.testing.assert_array_equal(_stats("bn/bn")[1], v)
        np.testing.assert_array_equal(_stats("bn/bn")[0], m)
        h.forward()
        np.testing.assert_allclose(_stats("bn/bn")[1], 0.5 * v + 0.5 * _BATCH.var(0, ddof=1))


def test_nnabla_pf_batch_normalization_with_auto_forward_updates_at_build() -> None:
    x = nn.Variable.from_numpy_array(_BATCH)
    var = _BATCH.var(0, ddof=1)
    with nn.auto_forward():
        h = PF.batch_normalization(x, name="bn")
    _, v = _stats()
    np.testing.assert_allclose(v, 0.9 + 0.1 * var, rtol=1e-6)
    h.forward()
    np.testing.assert_allclose(_stats()[1], 0.9 * (0.9 + 0.1 * var) + 0.1 * var, rtol=1e-6)


def test_nnabla_f_batch_normalization_build_leaves_running_statistics_alone() -> None:
    x = nn.Variable.from_numpy_array(_BATCH)
    beta = nn.Variable.from_numpy_array(np.zeros((1, 3)))
    gamma = nn.Variable.from_numpy_array(np.ones((1, 3)))
    mean = nn.Variable.from_numpy_array(np.zeros((1, 3)))
    var = nn.Variable.from_numpy_array(np.ones((1, 3)))
    mean_arr = mean.d
    y = NF.batch_normalization(x, beta, gamma, mean, var, decay_rate=0.8)
    np.testing.assert_array_equal(mean.d, np.zeros((1, 3)))
    np.testing.assert_array_equal(var.d, np.ones((1, 3)))
    assert mean.d is mean_arr  # restored in place: the graph still uses the same arrays
    y.forward()
    np.testing.assert_allclose(mean.d.ravel(), 0.2 * _BATCH.mean(0), rtol=1e-6)
    np.testing.assert_allclose(var.d.ravel(), 0.8 + 0.2 * _BATCH.var(0, ddof=1), rtol=1e-6)
    # inference mode and auto_forward on: nothing restored (nothing to, or nnabla computes)
    before = var.d.copy()
    NF.batch_normalization(x, beta, gamma, mean, var, batch_stat=False)
    np.testing.assert_array_equal(var.d, before)
    with nn.auto_forward(True):
        NF.batch_normalization(x, beta, gamma, mean, var, decay_rate=0.8)
    np.testing.assert_allclose(var.d.ravel(), 0.8 * before.ravel() + 0.2 * _BATCH.var(0, ddof=1))


def test_pf_batch_normalization_output_stat_in_a_static_graph() -> None:
    """PF.batch_normalization(output_stat=True) through the layer's static-graph wrapper, which
    first creates new parameters with an inference-mode call (that call must not pass
    output_stat, which needs batch statistics): (y, batch mean, biased batch variance)."""
    import gradhub_compat.nnabla.parametric_functions as PF

    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 3, 2)).astype(np.float32)
    with nn.parameter_scope("bn_output_stat"):
        y, mean, var = PF.batch_normalization(nn.Variable.from_numpy_array(a), output_stat=True)
    y.forward()
    np.testing.assert_allclose(mean.d.ravel(), a.mean(axis=(0, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var.d.ravel(), a.var(axis=(0, 2)), rtol=1e-5, atol=1e-6)
    assert mean.shape == var.shape == (1, 3, 1)


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
