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


def test_custom_functions_batched_under_vmap_on_cuda() -> None:
    """custom_vjp, custom_jvp and gradhub.Function inside vmap with CuPy arrays: one node for the
    batch (fwd/bwd run once), per-sample gradients and second derivatives equal the CPU's."""
    from gradhub.func import custom_jvp, custom_vjp, grad, vmap

    calls: list[str] = []

    def f(x: Any, y: Any) -> Any:
        return x * y * 2.0

    fc = custom_vjp(f)

    def fwd(x: Any, y: Any) -> Any:
        calls.append("fwd")
        return fc(x, y), (x, y)

    def bwd(res: Any, g: Any) -> Any:
        calls.append("bwd")
        x, y = res
        return (g * y * y * 3.0, g * x * x * 2.0)

    fc.defvjp(fwd, bwd)

    @custom_jvp
    def h(x: Any, y: Any) -> Any:
        return x * x * x * y

    @h.defjvp
    def h_jvp(primals: Any, tangents: Any) -> Any:
        (x, y), (xd, yd) = primals, tangents
        return h(x, y), 3.0 * x * x * xd * y * y + x * x * x * yd

    class Cube(gh.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g * 3.0 * x * x

    x = RNG.standard_normal((4, 3))
    y = RNG.standard_normal(3)

    def per_sample(xv: Any, yv: Any) -> list[Any]:
        gf = vmap(grad(lambda a, b: fc(a * a, b).sum(), argnums=(0, 1)), in_axes=(0, None))(xv, yv)
        gh_ = vmap(grad(lambda a, b: h(a, b).sum(), argnums=(0, 1)), in_axes=(0, None))(xv, yv)
        gc = vmap(grad(lambda a: grad(lambda b: Cube.apply(b).sum())(a).sum()))(xv)
        return [*gf, *gh_, gc]

    want = [v.d for v in per_sample(gh.Variable(x), gh.Variable(y))]
    calls.clear()
    got = per_sample(cuda(x), cuda(y))
    assert calls == ["fwd", "bwd"]
    for g, w in zip(got, want):
        assert g.device.kind == "cuda"
        np.testing.assert_allclose(host(g), w, rtol=1e-12, atol=1e-14)


def test_standardize_affine_and_layer_normalization_on_cuda() -> None:
    """StandardizeAffine's array rule (its numpy fallback serves CuPy arrays) and layer
    normalization with gamma and beta: values and first and second derivatives equal the CPU's."""
    import gradhub.functions as F

    x = RNG.standard_normal((6, 16))
    gamma = RNG.standard_normal((1, 16))
    beta = RNG.standard_normal((1, 16))

    def run(a: gh.Variable, g: gh.Variable, b: gh.Variable) -> list[Any]:
        y = F.layer_normalization(a, b, g, batch_axis=0)
        loss = F.sum(F.tanh(y) ** 2.0)
        ga, gg, gb = gh.grad([loss], [a, g, b], create_graph=True)
        (gga,) = gh.grad([F.sum(ga * ga)], [a])
        return [y, ga, gg, gb, gga]

    want = [v.d for v in run(*(gh.Variable(v) for v in (x, gamma, beta)))]
    got = run(*(gh.Variable(v).to("cuda") for v in (x, gamma, beta)))
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.device.kind == "cuda"
        np.testing.assert_allclose(host(g), w, rtol=1e-10, atol=1e-12, err_msg=f"value {k}")
