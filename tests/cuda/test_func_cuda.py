"""gradhub.func on CUDA (gradhub-cuda): the batched-tangent Hessian, vmap's batching rules for
batched tables, indices and batch statistics, and vmap's ``randomness``, each against the same
call on the CPU. Every test skips, with one reason, where no usable CUDA device exists; on a GPU
machine run ``python -m pytest tests/cuda/test_func_cuda.py`` (a few seconds).
"""

from __future__ import annotations

from typing import Any

import gradhub as gh
import gradhub.func as ghf
import numpy as np
import pytest
from cuda_helpers import gpu

pytestmark = gpu

RNG = np.random.default_rng(5)


def cuda(a: Any) -> gh.Variable:
    return gh.Variable(np.asarray(a), need_grad=False).to("cuda")


def host(v: gh.Variable) -> np.ndarray:
    return v.device.to_numpy(v.d)  # type: ignore[no-any-return]


def test_hessian_pushes_batched_tangents_on_cuda() -> None:
    import gradhub.functions as F

    x = RNG.standard_normal((8, 3))
    w0 = RNG.standard_normal((3, 5)) * 0.5

    def loss(w: Any, xx: Any) -> Any:
        return F.sum(F.tanh(xx @ w) ** 2.0)

    h_cpu = ghf.hessian(loss)(w0, gh.Variable(x))
    h_gpu = ghf.hessian(loss)(cuda(w0), cuda(x))
    assert h_gpu.device.kind == "cuda" and h_gpu.shape == (3, 5, 3, 5)
    np.testing.assert_allclose(host(h_gpu), h_cpu.d, rtol=1e-10, atol=1e-12)
    hv = ghf.vmap(ghf.hessian(loss), in_axes=(0, None))(cuda(np.stack([w0, 2 * w0])), cuda(x))
    np.testing.assert_allclose(host(hv)[0], h_cpu.d, rtol=1e-10, atol=1e-12)


def test_batched_tables_indices_and_batch_statistics_on_cuda() -> None:
    import gradhub.functions as F

    tables = RNG.standard_normal((3, 5, 2))
    ids = np.array([[0, 4], [1, 3], [2, 2]])
    y = ghf.vmap(lambda i, w: F.embed(i, w))(cuda(ids), cuda(tables))
    np.testing.assert_array_equal(host(y), np.stack([t[i] for t, i in zip(tables, ids)]))
    x = RNG.standard_normal((3, 5, 2))
    g = ghf.vmap(lambda r, k: r[k])(cuda(x), cuda(ids))
    np.testing.assert_array_equal(host(g), np.stack([x[b][ids[b]] for b in range(3)]))
    xb = RNG.standard_normal((3, 4, 2))
    mean_gpu, var_gpu = cuda(np.zeros((1, 2))), cuda(np.ones((1, 2)))
    mean_cpu, var_cpu = np.zeros((1, 2)), np.ones((1, 2))
    beta, gamma = np.zeros((1, 2)), np.ones((1, 2))
    yb = ghf.vmap(lambda r: F.batch_normalization(r, cuda(beta), cuda(gamma), mean_gpu, var_gpu))(
        cuda(xb)
    )
    yc = ghf.vmap(
        lambda r: F.batch_normalization(r, beta, gamma, gh.Variable(mean_cpu), gh.Variable(var_cpu))
    )(xb)
    np.testing.assert_allclose(host(yb), yc.d, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(host(mean_gpu), mean_cpu, rtol=1e-12, atol=1e-14)


def test_dropout_randomness_on_cuda() -> None:
    import gradhub.functions as F

    x = cuda(np.ones((4, 64)))
    with pytest.raises(RuntimeError, match=r"randomness=\"error\""):
        ghf.vmap(lambda r: F.dropout(r, 0.5))(x)
    same = host(ghf.vmap(lambda r: F.dropout(r, 0.5), randomness="same")(x))
    diff = host(ghf.vmap(lambda r: F.dropout(r, 0.5), randomness="different")(x))
    assert all((same[0] == same[i]).all() for i in range(4))
    assert not all((diff[0] == diff[i]).all() for i in range(1, 4))
