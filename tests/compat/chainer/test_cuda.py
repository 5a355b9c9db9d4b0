"""The chainer front-end on CUDA (gradhub-cuda): a Chain moved with ``to_gpu()`` trained by SGD,
Adam and MSVAG, the links added last (BatchRenormalization, DecorrelatedBatchNormalization,
LocalConvolution2D, MLPConvolution2D, DeformableConvolution2D, Inception, InceptionBN,
BlackOut with fixed samples, SimplifiedDropconnect with a given mask), the recurrent links
(MGU, peephole and zoneout LSTMs, tree LSTMs, CRF1d), a few functions and ``chainer.grad`` with
double backprop. Each test runs the same code with the same inputs (a seeded numpy generator) on
the CPU (``'@numpy'``) and on the GPU (``'@cupy:0'``) and compares the host copies of the outputs,
gradients and updated parameters: float64 within 1e-10, float32 within 1e-5 of the largest
magnitude, integers exactly. Every test skips, with one reason, where no usable CUDA device
exists; on a GPU machine run ``python -m pytest tests/compat/chainer/test_cuda.py`` (seconds).
"""

from __future__ import annotations

from typing import Any

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
from cuda_helpers import agree_within, gpu
from gradhub_compat import chainer
from gradhub_compat.chainer import backend, initializers, optimizers
from gradhub_compat.chainer.backends import cuda

pytestmark = gpu

CPU = "@numpy"
GPU = "@cupy:0"
RTOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-5}


def _put(ctx: str, a: Any) -> Any:
    """``a`` (a numpy array) on the device ``ctx``."""
    return backend.get_device(ctx).send(a)


def _move(ctx: str, link: Any) -> Any:
    """``link`` with its parameters and persistent arrays on the device ``ctx``, gradients
    cleared (chainer fills a new parameter's gradient with NaN)."""
    link.to_device(ctx)
    link.cleargrads()
    return link


def _host(a: Any) -> np.ndarray:
    """A host (numpy) copy of an array or of a Variable's data."""
    if isinstance(a, chainer.Variable):
        a = a.array
    return np.asarray(cuda.to_cpu(a))


def _params_and_grads(link: Any) -> list[np.ndarray]:
    """The link's parameters and their gradients (sorted by name), as host arrays."""
    out = []
    for _, p in sorted(link.namedparams(), key=lambda kv: kv[0]):
        out.append(_host(p.array))
        out.append(_host(p.grad))
    return out


def _same(name: str, run: Any, rtol: dict[Any, float] | None = None) -> None:
    """``run(ctx)`` gives the same host arrays on the GPU as on the CPU (within ``rtol``,
    default RTOL)."""
    want = run(CPU)
    got = run(GPU)
    assert all(type(a) is np.ndarray for a in got), name
    agree_within(got, want, name, rtol or RTOL)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# ---------------------------------------------------------------- a chain and its optimizers


class _MLP(chainer.Chain):
    def __init__(self) -> None:
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(5, 8)
            self.l2 = L.Linear(8, 3)

    def forward(self, x: Any) -> Any:
        return self.l2(F.relu(self.l1(x)))


def _run_chain_training(ctx: str, make_opt: Any) -> list[np.ndarray]:
    rng = _rng(1)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    t = rng.integers(0, 3, size=6).astype(np.int32)
    np.random.seed(0)  # the initial weights
    model = _MLP()
    if ctx == GPU:
        model.to_gpu()
    else:
        _move(ctx, model)
    xd, td = _put(ctx, x), _put(ctx, t)
    opt = make_opt().setup(model)
    losses = []
    for _ in range(3):
        model.cleargrads()
        loss = F.softmax_cross_entropy(model(xd), td)
        loss.backward()
        opt.update()
        losses.append(_host(loss))
    return [np.stack(losses), *_params_and_grads(model)]


def test_chain_to_gpu_keeps_arrays_on_the_device() -> None:
    import cupy

    np.random.seed(0)
    model = _MLP().to_gpu()
    assert model.xp is cupy
    for name, p in model.namedparams():
        assert isinstance(p.array, cupy.ndarray), name
    y = model(cuda.to_gpu(np.ones((2, 5), np.float32)))
    assert isinstance(y.array, cupy.ndarray)
    assert cuda.get_array_module(y) is cupy and backend.get_array_module(y.array) is cupy
    model.to_cpu()
    assert type(model.l1.W.array) is np.ndarray


def test_chain_trained_by_sgd_matches_the_cpu() -> None:
    _same("SGD", lambda ctx: _run_chain_training(ctx, lambda: optimizers.SGD(lr=0.1)))


def test_chain_trained_by_adam_matches_the_cpu() -> None:
    _same("Adam", lambda ctx: _run_chain_training(ctx, lambda: optimizers.Adam(alpha=0.01)))


def test_chain_trained_by_msvag_matches_the_cpu() -> None:
    # (MSVAG scales each step by m^2 / (m^2 + variance estimate), which magnifies float32
    # rounding differences between the devices: 3e-5 of the largest weight after 3 steps on the
    # H200, 2026-11-28)
    _same(
        "MSVAG",
        lambda ctx: _run_chain_training(ctx, lambda: optimizers.MSVAG(lr=0.1)),
        {**RTOL, np.dtype(np.float32): 1e-4},
    )


# ---------------------------------------------------------------- the links added last


def _run_link(ctx: str, make: Any, x: np.ndarray, train: bool = True) -> list[np.ndarray]:
    """Forward ``x`` through ``make()`` on ``ctx``, backward a weighted sum of the output: the
    output, the input's gradient, the parameters and their gradients."""
    np.random.seed(0)
    link = _move(ctx, make())  # (every shape given: the weights drawn on the CPU)
    xv = chainer.Variable(_put(ctx, x))
    with chainer.using_config("train", train):
        y = link(xv)
    w = _rng(9).standard_normal(y.shape).astype(y.dtype)
    F.sum(y * _put(ctx, w)).backward()
    return [_host(y), _host(xv.grad), *_params_and_grads(link)]


def test_batch_renormalization_matches_the_cpu() -> None:
    x = _rng(2).standard_normal((6, 3)).astype(np.float32)
    # (a cotangent independent of x: with x itself the input gradient nearly cancels)
    dy = _rng(22).standard_normal((6, 3)).astype(np.float32)

    def run(ctx: str) -> list[np.ndarray]:
        np.random.seed(0)
        link = _move(ctx, L.BatchRenormalization(3, rmax=1.5, dmax=0.5))
        xv = chainer.Variable(_put(ctx, x))
        y = link(xv)  # training: the batch statistics, the running ones updated
        F.sum(y * _put(ctx, dy)).backward()
        with chainer.using_config("train", False):
            yt = link(_put(ctx, x[:2] + 1))
        return [
            _host(y),
            _host(yt),
            _host(xv.grad),
            _host(link.avg_mean),
            _host(link.avg_var),
            *_params_and_grads(link),
        ]

    _same("BatchRenormalization", run)


def test_decorrelated_batch_normalization_matches_the_cpu() -> None:
    x = _rng(3).standard_normal((16, 4)).astype(np.float32)
    # (a cotangent independent of x: with x itself the input gradient nearly cancels)
    dy = _rng(33).standard_normal((16, 4)).astype(np.float32)

    def run(ctx: str) -> list[np.ndarray]:
        link = _move(ctx, L.DecorrelatedBatchNormalization(4, groups=2))
        xv = chainer.Variable(_put(ctx, x))
        y = link(xv)
        F.sum(y * _put(ctx, dy)).backward()
        with chainer.using_config("train", False):
            yt = link(_put(ctx, x[:3]))
        return [
            _host(y),
            _host(yt),
            _host(xv.grad),
            _host(link.avg_mean),
            _host(link.avg_projection),
        ]

    _same("DecorrelatedBatchNormalization", run)


def test_local_and_mlp_convolutions_match_the_cpu() -> None:
    x = _rng(4).standard_normal((2, 2, 5, 5)).astype(np.float32)
    _same(
        "LocalConvolution2D",
        lambda ctx: _run_link(ctx, lambda: L.LocalConvolution2D(2, 3, 5, 3), x),
    )
    _same(
        "MLPConvolution2D",
        lambda ctx: _run_link(ctx, lambda: L.MLPConvolution2D(2, (3, 4, 2), 3, pad=1), x),
    )


def test_deformable_convolution_link_matches_the_cpu() -> None:
    x = _rng(5).standard_normal((2, 2, 5, 5)).astype(np.float32)

    def make() -> Any:
        # non-zero sampler weights and offsets of a fraction of a pixel (offset_conv's
        # LeCunNormal weights), so the bilinear sampling and its gradients are exercised
        return L.DeformableConvolution2D(2, 3, 3, pad=1, deform_initialW=initializers.Normal(0.5))

    _same("DeformableConvolution2D", lambda ctx: _run_link(ctx, make, x))


def test_inception_blocks_match_the_cpu() -> None:
    x = _rng(6).standard_normal((2, 3, 5, 5)).astype(np.float32)
    _same("Inception", lambda ctx: _run_link(ctx, lambda: L.Inception(3, 2, 2, 3, 1, 2, 2), x))
    _same(
        "InceptionBN",
        lambda ctx: _run_link(
            ctx, lambda: L.InceptionBN(3, 2, 2, 2, 2, 3, "avg", proj_pool=2), x, train=True
        ),
    )
    _same(
        "InceptionBN max stride 2",
        lambda ctx: _run_link(ctx, lambda: L.InceptionBN(3, 0, 2, 2, 2, 2, "max", stride=2), x),
    )


def test_black_out_with_fixed_samples_matches_the_cpu() -> None:
    rng = _rng(7)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    t = np.array([0, 2, 4, 1], np.int32)
    samples = np.array([[1, 3], [0, 4], [2, 3], [4, 0]], np.int32)
    w0 = rng.standard_normal((5, 3)).astype(np.float32)

    def run(ctx: str) -> list[np.ndarray]:
        link = L.BlackOut(3, [3, 1, 2, 2, 1], 2)
        link.W.array[...] = w0  # (NaN until set, as chainer's)
        _move(ctx, link)
        link.sample_data = _put(ctx, samples)
        xv = chainer.Variable(_put(ctx, x))
        loss = link(xv, _put(ctx, t))
        loss.backward()
        return [_host(loss), _host(xv.grad), *_params_and_grads(link)]

    _same("BlackOut", run)


def test_simplified_dropconnect_with_a_mask_and_in_test_mode_matches_the_cpu() -> None:
    rng = _rng(8)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    mask = (rng.random((3, 2, 4)) > 0.5).astype(np.float32)

    def run(ctx: str) -> list[np.ndarray]:
        np.random.seed(0)
        link = _move(ctx, L.SimplifiedDropconnect(4, 2, ratio=0.5))
        xv = chainer.Variable(_put(ctx, x))
        y = link(xv, train=True, mask=_put(ctx, mask))
        yt = link(xv, train=False)
        F.sum(y * y + yt).backward()
        return [_host(y), _host(yt), _host(xv.grad), *_params_and_grads(link)]

    _same("SimplifiedDropconnect", run)


# ---------------------------------------------------------------- recurrent links


def test_mgu_links_match_the_cpu() -> None:
    rng = _rng(10)
    xs = rng.standard_normal((3, 2, 3)).astype(np.float32)
    h0 = rng.standard_normal((2, 4)).astype(np.float32)

    def run(ctx: str) -> list[np.ndarray]:
        np.random.seed(0)
        stateless = _move(ctx, L.StatelessMGU(3, 4))
        stateful = _move(ctx, L.StatefulMGU(3, 4))
        h = chainer.Variable(_put(ctx, h0))
        loss = 0
        for x in xs:
            xd = _put(ctx, x)
            h = stateless(h, xd)
            loss = loss + F.sum(h * h) + F.sum(stateful(xd))
        loss.backward()
        return [
            _host(h),
            _host(stateful.h),
            *_params_and_grads(stateless),
            *_params_and_grads(stateful),
        ]

    _same("MGU", run)


def test_peephole_and_zoneout_lstms_match_the_cpu() -> None:
    xs = _rng(11).standard_normal((3, 2, 3)).astype(np.float32)

    def run(ctx: str) -> list[np.ndarray]:
        np.random.seed(0)
        peep = _move(ctx, L.StatefulPeepholeLSTM(3, 4))
        zone = _move(ctx, L.StatefulZoneoutLSTM(3, 4, c_ratio=0.3, h_ratio=0.4))
        loss = 0
        with chainer.using_config("train", False):  # zoneout: the identity, deterministic
            for x in xs:
                xd = _put(ctx, x)
                loss = loss + F.sum(peep(xd) ** 2) + F.sum(zone(xd) ** 2)
        loss.backward()
        return [
            _host(peep.h),
            _host(peep.c),
            _host(zone.h),
            _host(zone.c),
            *_params_and_grads(peep),
            *_params_and_grads(zone),
        ]

    _same("peephole/zoneout LSTM", run)


def test_tree_lstms_match_the_cpu() -> None:
    rng = _rng(12)
    xl, xr, xp = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3))

    def run(ctx: str) -> list[np.ndarray]:
        np.random.seed(0)
        child = _move(ctx, L.ChildSumTreeLSTM(3, 4))
        nary = _move(ctx, L.NaryTreeLSTM(3, 4, n_ary=2))
        cl, hl = child(_put(ctx, xl))  # leaves
        cr, hr = child(_put(ctx, xr))
        c, h = child(cl, cr, hl, hr, _put(ctx, xp))
        c2, h2 = nary(cl, None, hl, None, _put(ctx, xl))
        c3, h3 = nary(c2, cr, h2, hr, _put(ctx, xp))
        (F.sum(h * c) + F.sum(h3) + F.sum(c3 * c3)).backward()
        return [
            _host(c),
            _host(h),
            _host(c3),
            _host(h3),
            *_params_and_grads(child),
            *_params_and_grads(nary),
        ]

    _same("tree LSTMs", run)


def test_crf1d_loss_and_argmax_match_the_cpu() -> None:
    rng = _rng(13)
    lengths = [4, 3, 1]
    xs_b = [rng.standard_normal((n, 3)).astype(np.float32) for n in lengths]
    ys_b = [rng.integers(0, 3, size=n).astype(np.int32) for n in lengths]
    cost0 = rng.standard_normal((3, 3)).astype(np.float32)

    def run(ctx: str) -> list[np.ndarray]:
        crf = _move(ctx, L.CRF1d(3, initial_cost=cost0))
        xs = [chainer.Variable(_put(ctx, a)) for a in xs_b]
        ys = [_put(ctx, a) for a in ys_b]
        loss = crf(xs, ys, transpose=True)
        loss.backward()
        score, path = crf.argmax(xs, transpose=True)
        return [
            _host(loss),
            _host(score),
            *(_host(p).astype(np.int64) for p in path),
            *(_host(v.grad) for v in xs),
            *_params_and_grads(crf),
        ]

    _same("CRF1d", run)


# ---------------------------------------------------------------- functions


def test_deformable_convolution_sampler_and_add_in_float64_match_the_cpu() -> None:
    rng = _rng(14)
    x0 = rng.standard_normal((2, 2, 4, 4))
    off0 = rng.standard_normal((2, 18, 4, 4)) * 0.7
    w0 = rng.standard_normal((3, 2, 3, 3))
    b0 = rng.standard_normal(3)

    def run(ctx: str) -> list[np.ndarray]:
        x, off, w, b = (chainer.Variable(_put(ctx, a)) for a in (x0, off0, w0, b0))
        y = F.deformable_convolution_2d_sampler(x, off, w, b, stride=1, pad=1)
        z = F.add(y, F.add(y, y, y), _put(ctx, np.full((1, 3, 1, 1), 0.5)))
        F.sum(z * z).backward()
        return [_host(y), _host(z), *(_host(v.grad) for v in (x, off, w, b))]

    _same("deformable_convolution_2d_sampler/add", run)


def test_convolution_batch_normalization_and_pooling_in_float64_match_the_cpu() -> None:
    rng = _rng(15)
    x0 = rng.standard_normal((2, 3, 6, 6))
    w0 = rng.standard_normal((4, 3, 3, 3))
    b0 = rng.standard_normal(4)
    g0 = rng.standard_normal(4) + 1.0
    be0 = rng.standard_normal(4)

    def run(ctx: str) -> list[np.ndarray]:
        x, w, b, g, be = (chainer.Variable(_put(ctx, a)) for a in (x0, w0, b0, g0, be0))
        # (tanh between: right after the convolution, batch normalization would make b's
        # gradient zero up to rounding, which no tolerance relative to it can compare)
        h = F.tanh(F.convolution_2d(x, w, b, stride=1, pad=1))
        h = F.batch_normalization(h, g, be)
        y = F.average_pooling_2d(h, 2, stride=2)
        F.sum(y * y).backward()
        return [_host(y), *(_host(v.grad) for v in (x, w, b, g, be))]

    _same("convolution_2d/batch_normalization/average_pooling_2d", run)


def test_grad_with_double_backprop_matches_the_cpu() -> None:
    x0 = _rng(16).standard_normal((3, 4))

    def run(ctx: str) -> list[np.ndarray]:
        x = chainer.Variable(_put(ctx, x0))
        y = F.sum(F.tanh(x) ** 3 + x * x * x)
        (gx,) = chainer.grad([y], [x], enable_double_backprop=True)
        (ggx,) = chainer.grad([F.sum(gx * gx)], [x])  # the Hessian-vector product H (2 gx)
        return [_host(y), _host(gx), _host(ggx)]

    _same("grad double backprop", run)


def test_binary_hierarchical_softmax_and_spatial_transformer_sampler_match_the_cpu() -> None:
    """BinaryHierarchicalSoftmax reads its labels on the host (its tables are host arrays), the
    spatial transformer sampler its sample positions on the device (both went through
    ``numpy.asarray`` of device arrays before 2026-11-28)."""
    x = _rng(51).standard_normal((4, 3)).astype(np.float32)
    t = np.array([0, 2, 1, 3], np.int32)
    tree = L.BinaryHierarchicalSoftmax.create_huffman_tree({0: 8, 1: 5, 2: 6, 3: 4})

    def run_hsm(ctx: str) -> list[np.ndarray]:
        np.random.seed(0)
        link = _move(ctx, L.BinaryHierarchicalSoftmax(3, tree))
        xv = chainer.Variable(_put(ctx, x))
        loss = link(xv, _put(ctx, t))
        loss.backward()
        return [_host(loss), _host(xv.grad), _host(link.W), _host(link.W.grad)]

    _same("BinaryHierarchicalSoftmax", run_hsm)
    img = _rng(52).standard_normal((2, 2, 5, 6))
    grid = _rng(53).uniform(-1.2, 1.2, (2, 2, 4, 3))

    def run_sts(ctx: str) -> list[np.ndarray]:
        xv = chainer.Variable(_put(ctx, img))
        gv = chainer.Variable(_put(ctx, grid))
        y = F.spatial_transformer_sampler(xv, gv)
        F.sum(y * y).backward()
        return [_host(y), _host(xv.grad), _host(gv.grad)]

    _same("spatial_transformer_sampler", run_sts)
