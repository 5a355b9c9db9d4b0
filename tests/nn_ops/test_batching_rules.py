"""Batching rules of gradhub-nn-ops under gradhub.func.vmap: per-sample gradients of the seed CNN
and of an MLP with no loop fallback (every function batched by its rule), checked against the
loop of per-sample ``grad`` calls and against finite differences; convolution and affine with
batched weights; the loop fallback of a case a rule does not batch.

(Each rule is compared with the loop on its function's samples by the op matrix:
tests/contracts/test_op_matrix.py::test_batching_rule_matches_the_loop.)
"""

from __future__ import annotations

import warnings
from typing import Any

import gradhub as gh
import gradhub.func as ghf
import gradhub.functions as F
import numpy as np
import pytest
from gradhub import batching

rng = np.random.default_rng(11)


def _cnn(w1, b1, w2, b2, w3, b3, x, t):  # type: ignore[no-untyped-def]
    """The seed CNN (tests/seeds/test_seed_cnn.py) on one sample (C, H, W) and its label."""
    h = x.reshape(1, *x.shape)
    h = F.max_pooling(F.relu(F.convolution(h, w1, b1, pad=(1, 1))), (2, 2))
    h = F.max_pooling(F.relu(F.convolution(h, w2, b2, pad=(1, 1))), (2, 2))
    p = F.affine(h, w3, b3)
    return F.mean(F.softmax_cross_entropy(p, t.reshape(1, 1)))


def _cnn_params() -> list[np.ndarray]:
    return [
        rng.standard_normal((8, 3, 3, 3)) * 0.3,
        rng.standard_normal(8) * 0.1,
        rng.standard_normal((16, 8, 3, 3)) * 0.2,
        rng.standard_normal(16) * 0.1,
        rng.standard_normal((16 * 2 * 2, 10)) * 0.2,
        rng.standard_normal(10) * 0.1,
    ]


def test_per_sample_gradients_of_the_seed_cnn_run_without_a_loop() -> None:
    ps = _cnn_params()
    x = rng.standard_normal((4, 3, 8, 8))
    t = gh.Variable(rng.integers(0, 10, 4), need_grad=False)
    argnums = tuple(range(6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the loop fallback warns: none may run
        gs = ghf.vmap(ghf.grad(_cnn, argnums=argnums), in_axes=(None,) * 6 + (0, 0))(*ps, x, t)
    assert [g.shape for g in gs] == [(4, *p.shape) for p in ps]
    for i in range(4):
        ref = ghf.grad(_cnn, argnums=argnums)(*ps, x[i], t[i])
        for g, r in zip(gs, ref):
            np.testing.assert_allclose(g.d[i], r.d, rtol=1e-11, atol=1e-13)
    # and one entry against central differences of the loss itself
    w3 = ps[4]
    e = np.zeros_like(w3)
    e[5, 3] = 1e-6
    lp = _cnn(*ps[:4], w3 + e, ps[5], x[2], t[2]).d
    lm = _cnn(*ps[:4], w3 - e, ps[5], x[2], t[2]).d
    np.testing.assert_allclose(gs[4].d[2, 5, 3], (lp - lm) / 2e-6, rtol=1e-6)


def test_per_sample_gradient_norms_are_differentiable_through_vmap() -> None:
    """DP-SGD style: the mean of per-sample gradient norms, differentiated with respect to the
    weights (grad of vmap of grad), against the loop written out."""
    w = rng.standard_normal((5, 3))
    b = rng.standard_normal(3)
    x = rng.standard_normal((6, 5))
    t = gh.Variable(rng.integers(0, 3, 6), need_grad=False)

    def loss(w: Any, b: Any, r: Any, ti: Any) -> Any:
        h = F.tanh(r.reshape(1, -1) @ w + b)
        return F.softmax_cross_entropy(h, ti.reshape(1, 1)).sum()

    def total(w: Any) -> Any:
        g = ghf.vmap(ghf.grad(loss), in_axes=(None, None, 0, 0))(w, b, x, t)
        return F.sum(F.sum(g * g, axis=(1, 2)) ** 0.5)

    def total_loop(w: Any) -> Any:
        out = 0.0
        for i in range(6):
            g = ghf.grad(loss)(w, b, x[i], t[i])
            out = out + F.sum(g * g) ** 0.5
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = ghf.grad(total)(w)
    np.testing.assert_allclose(got.d, ghf.grad(total_loop)(w).d, rtol=1e-11)


def test_convolution_with_a_batched_weight_is_one_grouped_convolution() -> None:
    x = rng.standard_normal((3, 2, 4, 5, 5))  # batch 3 of (N=2, C=4, 5, 5)
    w = rng.standard_normal((3, 6, 2, 3, 3))  # batch 3 of (O=6, C/group=2, 3, 3)
    b = rng.standard_normal((3, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = ghf.vmap(lambda x, w, b: F.convolution(x, w, b, pad=(1, 1), group=2))(x, w, b)
    for i in range(3):
        ref = F.convolution(
            gh.Variable(x[i]), gh.Variable(w[i]), gh.Variable(b[i]), pad=(1, 1), group=2
        )
        np.testing.assert_allclose(y.d[i], ref.d, rtol=1e-12, atol=1e-13)


def test_affine_with_batched_weight_and_bias() -> None:
    x = rng.standard_normal((4, 2, 3, 2))
    w = rng.standard_normal((4, 6, 5))
    b = rng.standard_normal((4, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = ghf.vmap(F.affine)(x, w, b)
        y2 = ghf.vmap(F.affine, in_axes=(None, 0, 0))(x[0], w, b)
    for i in range(4):
        np.testing.assert_allclose(y.d[i], x[i].reshape(2, 6) @ w[i] + b[i], rtol=1e-13)
        np.testing.assert_allclose(y2.d[i], x[0].reshape(2, 6) @ w[i] + b[i], rtol=1e-13)


def test_a_case_a_rule_does_not_batch_loops_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batching, "_warned", set())
    x = rng.standard_normal((1, 2, 4, 3))  # base_axis 2: (1, 2) samples of 4 channels
    ws = rng.standard_normal((3, 4, 2, 2))
    match = r"vmap: deconvolution\(\) \(Deconvolution, .*\) cannot batch a weight with base_axis"
    with pytest.warns(UserWarning, match=match):
        y = ghf.vmap(lambda w: F.deconvolution(x, w, base_axis=2))(ws)
    for i in range(3):
        np.testing.assert_allclose(y.d[i], F.deconvolution(x, ws[i], base_axis=2).d, rtol=1e-13)


def test_batch_normalization_batches_in_inference_and_with_batch_statistics(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(batching, "_warned", set())
    x = rng.standard_normal((3, 4, 2, 5))  # batch 3 of (N=4, C=2, 5)
    beta, gamma = rng.standard_normal((1, 2, 1)), rng.standard_normal((1, 2, 1))
    mean, var = rng.standard_normal((1, 2, 1)), rng.uniform(0.5, 2.0, (1, 2, 1))

    def bn(r: Any, batch_stat: bool, m: Any, v: Any, g: Any = gamma) -> Any:
        return F.batch_normalization(r, beta, g, m, v, batch_stat=batch_stat)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = ghf.vmap(lambda r: bn(r, False, mean.copy(), var.copy()))(x)
    np.testing.assert_allclose(y.d, (x - mean) / np.sqrt(var + 1e-5) * gamma + beta, rtol=1e-12)
    # training: each element's own statistics, one call, the running statistics as the loop's
    m_vmap, v_vmap, m_loop, v_loop = mean.copy(), var.copy(), mean.copy(), var.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = ghf.vmap(lambda r: bn(r, True, m_vmap, v_vmap))(x)
    loop = np.stack([bn(gh.Variable(r), True, m_loop, v_loop).d for r in x])
    m = x.mean(axis=(1, 3), keepdims=True)
    v = x.var(axis=(1, 3), keepdims=True)
    np.testing.assert_allclose(y.d, (x - m) / np.sqrt(v + 1e-5) * gamma + beta, rtol=1e-10)
    np.testing.assert_allclose(y.d, loop, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(m_vmap, m_loop, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(v_vmap, v_loop, rtol=1e-13, atol=1e-15)
    assert not np.allclose(m_vmap, mean)  # updated
    # per-sample gamma (batched parameters) in training
    gs = rng.uniform(0.5, 1.5, (3, 1, 2, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = ghf.vmap(lambda r, g: bn(r, True, mean.copy(), var.copy(), g))(x, gs)
    np.testing.assert_allclose(y.d, (x - m) / np.sqrt(v + 1e-5) * gs + beta, rtol=1e-10)
    # batched running statistics still loop, with the warning naming the case
    with pytest.warns(UserWarning, match=r"batch_normalization\(\) .* cannot batch batch stat"):
        ghf.vmap(lambda r, mm: bn(r, True, mm, var.copy()), in_axes=(0, 0))(x, np.stack([mean] * 3))


def test_per_sample_gradients_through_training_batch_normalization_match_the_loop() -> None:
    x = rng.standard_normal((3, 4, 2))  # 3 samples, each a (N=4, C=2) batch
    w = rng.standard_normal((2, 2))

    def loss(w: Any, r: Any) -> Any:
        h = F.batch_normalization(
            r @ w, np.zeros((1, 2)), np.ones((1, 2)), np.zeros((1, 2)), np.ones((1, 2))
        )
        return F.sum(F.tanh(h) * r)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = ghf.vmap(ghf.grad(loss), in_axes=(None, 0))(w, x)
    for i in range(3):
        np.testing.assert_allclose(g.d[i], ghf.grad(loss)(w, x[i]).d, rtol=1e-11, atol=1e-13)


def test_embed_with_batched_tables_and_per_sample_table_gradients_run_without_a_loop() -> None:
    tables = rng.standard_normal((3, 5, 2))
    ids = np.array([[0, 4, 4], [1, 1, 3], [2, 0, 4]])
    shared_ids = gh.Variable(np.array([4, 0]), need_grad=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = ghf.vmap(lambda i, w: F.embed(i, w))(ids, tables)
        y2 = ghf.vmap(lambda w: F.embed(shared_ids, w))(tables)

        def loss(w: Any, i: Any) -> Any:
            return F.sum(F.tanh(F.embed(i, w)) ** 2.0)

        g = ghf.vmap(ghf.grad(loss), in_axes=(None, 0))(tables[0], ids)
    np.testing.assert_array_equal(y.d, np.stack([t[i] for t, i in zip(tables, ids)]))
    np.testing.assert_array_equal(y2.d, tables[:, [4, 0]])
    for b in range(3):
        ref = ghf.grad(loss)(tables[0], gh.Variable(ids[b], need_grad=False)).d
        np.testing.assert_allclose(g.d[b], ref, rtol=1e-13, atol=1e-15)
    # an id out of one table's range is an error (it would pick another element's row)
    with pytest.raises(ValueError, match=r"embed: ids in x0 must be in \[0, 5\), got values in"):
        ghf.vmap(lambda i, w: F.embed(i, w))(ids + 1, tables)


def test_deconvolution_with_a_batched_weight_is_one_grouped_deconvolution() -> None:
    x = rng.standard_normal((2, 4, 3, 3))
    w = rng.standard_normal((3, 4, 3, 2, 2))  # batch 3 of (C=4, O/g=3, 2, 2), group 2
    b = rng.standard_normal((3, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = ghf.vmap(lambda w, b: F.deconvolution(x, w, b, stride=(2, 2), group=2), in_axes=(0, 0))(
            w, b
        )
    for i in range(3):
        ref = F.deconvolution(x, w[i], b[i], stride=(2, 2), group=2).d
        np.testing.assert_allclose(y.d[i], ref, rtol=1e-12, atol=1e-13)


def test_dropout_follows_vmaps_randomness() -> None:
    """``F.dropout``/``F.dropout_mask`` (``seed=-1``) inside vmap: ``"error"`` raises,
    ``"different"`` draws a mask per element (also for an input that is not batched),
    ``"same"`` one mask shared by the batch; a fixed seed is one mask, shared; nested levels
    apply their own; per-sample gradients use each element's mask; a Jacobian of a dropout
    network uses the mask of its output."""
    from gradhub.ops import call

    x = np.ones((4, 64))
    with pytest.raises(RuntimeError, match=r"vmap: dropout\(\) draws random numbers while vmap"):
        ghf.vmap(lambda r: F.dropout(r, 0.5))(x)
    with pytest.raises(RuntimeError, match=r"vmap: dropout_mask\(\) draws random numbers"):
        ghf.vmap(lambda r: F.dropout_mask(r, 0.5))(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # batched by the rule, no loop
        diff = ghf.vmap(lambda r: F.dropout(r, 0.5), randomness="different")(x).d
        same = ghf.vmap(lambda r: F.dropout(r, 0.5), randomness="same")(x).d
        shared_in = ghf.vmap(
            lambda r: F.dropout_mask(gh.Variable(np.ones(64)), 0.5) * r, randomness="different"
        )(x).d
        seeded = ghf.vmap(lambda r: F.dropout(r, 0.5, seed=5))(x).d
    assert set(np.unique(diff)) <= {0.0, 2.0} and set(np.unique(same)) <= {0.0, 2.0}
    assert not all((diff[0] == diff[i]).all() for i in range(1, 4))  # 2^-192 to fail by chance
    assert all((same[0] == same[i]).all() for i in range(1, 4))
    assert not all((shared_in[0] == shared_in[i]).all() for i in range(1, 4))
    np.testing.assert_array_equal(seeded, np.stack([F.dropout(x[0], 0.5, seed=5).d] * 4))
    nested = ghf.vmap(
        ghf.vmap(lambda r: F.dropout(r, 0.5), randomness="same"), randomness="different"
    )(np.ones((3, 2, 64))).d
    assert (nested[:, 0] == nested[:, 1]).all() and not (nested[0] == nested[1]).all()
    # a mask drawn by call() on an input that is not batched would be shared: an error
    with pytest.raises(RuntimeError, match=r"dropout_mask\(\) was called on an input that is not"):
        ghf.vmap(
            lambda r: call("DropoutMask", gh.Variable(np.ones(64)), p=0.5, seed=-1) * r,
            randomness="different",
        )(x)
    # per-sample gradients: each element's gradient is its own mask
    w = rng.uniform(1.0, 2.0, 64)
    g, y = ghf.vmap(
        ghf.grad(lambda w, r: (lambda h: (h.sum(), h))(F.dropout(r * w, 0.5)), has_aux=True),
        in_axes=(None, 0),
        randomness="different",
    )(w, x)
    np.testing.assert_allclose(g.d, y.d / w, rtol=1e-14)  # d/dw sum(x w m) = x m, y = x w m
    # Jacobians run f under their own vmap: dropout makes them loop over the recorded graph
    xx = rng.uniform(1.0, 2.0, 8)

    def f(v: Any) -> Any:
        y = F.dropout(v, 0.5)
        return y, y

    for jac in (ghf.jacrev, ghf.jacfwd):
        j, out = jac(f, has_aux=True)(xx)
        np.testing.assert_allclose(j.d, np.diag(out.d / xx), rtol=1e-14)


@pytest.mark.parametrize(
    "name",
    [
        "MaxPoolingBackward",
        "MaxPoolingGather",
        "MaxPoolingMask",
        "MaskedUnpooling",
        "MaskedPooling",
        "AveragePoolingBackward",
        "ConvolutionFilterGrad",
        "Deconvolution",
        "Embed",
        "EmbedBackward",
        "BatchNormalization",
        "DropoutMask",
    ],
)
def test_rules_batch_their_samples_without_a_loop(name: str) -> None:
    """The audit's comparison with the loop (every input batched, then each alone), with the
    loop fallback refused: these rules batch every case of their samples in one call (for
    BatchNormalization: all but batched running statistics, which loop)."""
    from gradhub.audit import check_batching, samples_of
    from gradhub.registry import REGISTRY

    fdef = REGISTRY.get(name)
    dev = REGISTRY.device_type("cpu").get(0)
    for s in samples_of(fdef):
        if name == "BatchNormalization" and s.attrs.get("batch_stat", True):
            continue  # batched running statistics in training loop (tested above)
        nd = np.ndim(s.inputs[0])
        if name in ("ConvolutionFilterGrad", "Deconvolution") and s.attrs.get("base_axis", 1) % (
            nd
        ) not in (1,):
            continue  # (a batched weight needs base_axis 1; other base axes loop)
        with batching.refuse_loop():
            check_batching(fdef, s, dev)


def test_hessian_of_a_cnn_pushes_its_tangents_through_the_backward_helpers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``hessian`` of a CNN's loss with respect to its filter runs each JVP rule once for the
    whole basis, through the batching rules of the backward helpers it meets
    (``ConvolutionFilterGrad``, ``MaxPoolingBackward``, ``AveragePoolingBackward``...), and
    equals reverse over reverse."""
    import gradhub.func as fmod

    x = rng.standard_normal((2, 1, 6, 6))

    def loss(w: Any) -> Any:
        h = F.tanh(F.convolution(x, w, pad=(1, 1)))
        h = F.average_pooling(F.max_pooling(h, (2, 2)), (3, 3))
        return F.sum(h * h)

    w = rng.standard_normal((2, 1, 3, 3)) * 0.5
    h_rev = ghf.jacrev(ghf.jacrev(loss))(w)

    def no_loop(*args: Any) -> Any:
        raise AssertionError("jacfwd looped over the basis")

    monkeypatch.setattr(fmod, "_jac_fwd", no_loop)
    h = ghf.hessian(loss)(w)
    np.testing.assert_allclose(h.d, h_rev.d, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("batched", ["data", "indices", "both"])
def test_gather_nd_and_scatter_nd_batch_without_a_loop(batched: str) -> None:
    """GatherNd/ScatterNd under vmap: one call with the batch position as one more index row
    (negative, float-held and duplicate indices included), against the loop in numpy."""
    data = rng.standard_normal((3, 4, 5, 2))
    idx = np.array([[[0, -1, 2], [3, 3, 1]], [[4, 0, -5], [1, 1, 2]]], dtype=np.float32)
    idx_b = np.stack([idx, np.roll(idx, 1, axis=2), -np.abs(idx) + 0.0 * idx])
    d = data if batched != "indices" else data[0]
    i = idx_b if batched != "data" else idx
    in_axes = (0 if batched != "indices" else None, 0 if batched != "data" else None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = ghf.vmap(F.gather_nd, in_axes=in_axes)(gh.Variable(d), gh.Variable(i))
        sc = ghf.vmap(lambda v, k: F.scatter_nd(v, k, shape=(4, 5, 2), add=False), in_axes=in_axes)
        # scatter: batched values, except for batched indices alone (shared values)
        vals = got.d[0] if batched == "indices" else got.d
        scattered = sc(gh.Variable(vals), gh.Variable(i))
    for b in range(3):
        db = d[b] if batched != "indices" else d
        ib = (i[b] if batched != "data" else i).astype(np.int64)
        np.testing.assert_array_equal(got.d[b], db[tuple(ib)])
        want = np.zeros((4, 5, 2))
        want[tuple(ib)] = vals if batched == "indices" else vals[b]
        np.testing.assert_array_equal(scattered.d[b], want)


def test_per_sample_gradients_of_deformable_convolution_run_without_a_loop() -> None:
    w = gh.Variable(rng.standard_normal((4, 2, 3, 3)))

    def f(x: Any, off: Any) -> Any:
        return F.deformable_convolution(x[None], w, off[None], pad=(1, 1)).sum()

    xs = rng.standard_normal((3, 2, 4, 4))
    offs = rng.standard_normal((3, 18, 4, 4)) * 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gx, goff = ghf.vmap(ghf.grad(f, argnums=(0, 1)))(gh.Variable(xs), gh.Variable(offs))
    for b in range(3):
        lx, loff = ghf.grad(f, argnums=(0, 1))(gh.Variable(xs[b]), gh.Variable(offs[b]))
        np.testing.assert_allclose(gx.d[b], lx.d, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(goff.d[b], loff.d, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("dtype", "size"), [(np.int8, 200), (np.uint8, 300), (np.float16, 2050)])
def test_gather_nd_and_scatter_nd_batch_positions_fit_narrow_index_dtypes(
    dtype: Any, size: int
) -> None:
    """Regression: the batch positions were cast to the indices' dtype (int8 wrapped at 128, so
    elements read and wrote other elements' data); they are int64 (float64 for float
    indices)."""
    data = rng.standard_normal((size, 3, 2))
    idx = np.array([[1], [0]], dtype)
    index = gh.Variable(idx, need_grad=False)
    got = ghf.vmap(F.gather_nd, in_axes=(0, None))(gh.Variable(data), index)
    np.testing.assert_array_equal(got.d[:, 0], data[:, 1, 0])
    vals = rng.standard_normal((size, 1))
    sc = ghf.vmap(lambda v: F.scatter_nd(v, index, shape=(3, 2)))(gh.Variable(vals))
    want = np.zeros((size, 3, 2))
    want[:, 1, 0] = vals[:, 0]
    np.testing.assert_array_equal(sc.d, want)
