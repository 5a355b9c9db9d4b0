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


# ---------------------------------------------------------------- functions given device arrays
# (each of these read an array argument through ``numpy.asarray``, which a CuPy array refuses,
# before 2026-11-28: the arrays below are passed as device arrays, not Variables)


def _grads(loss: Any, vs: list[Any]) -> list[np.ndarray]:
    """Backward ``loss`` (a scalar Variable) and return the host gradients of ``vs``."""
    loss.backward()
    return [_host(v.grad) for v in vs]


def test_where_with_a_mask_and_mean_with_weights_given_as_device_arrays() -> None:
    rng = _rng(61)
    x0, y0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    mask = rng.random((3, 4)) > 0.5
    w_all = rng.uniform(0.5, 1.5, (3, 4))
    w_ax = rng.uniform(0.5, 1.5, 4)
    dz = rng.standard_normal((3, 4))
    dm = rng.standard_normal(3)

    def run(ctx: str) -> list[np.ndarray]:
        x, y = chainer.Variable(_put(ctx, x0)), chainer.Variable(_put(ctx, y0))
        z = F.where(_put(ctx, mask), x, y)
        m_all = F.mean(x, weights=_put(ctx, w_all))
        m_ax = F.mean(y, axis=1, weights=_put(ctx, w_ax))
        loss = F.sum(z * _put(ctx, dz)) + 2.0 * m_all + F.sum(m_ax * _put(ctx, dm))
        return [_host(z), _host(m_all), _host(m_ax), *_grads(loss, [x, y])]

    _same("where/mean(weights)", run)


def test_clipped_relu_prelu_and_rrelu_given_device_arrays() -> None:
    rng = _rng(62)
    x0 = rng.standard_normal((3, 4, 2)) * 2.0
    w0 = rng.uniform(0.1, 0.4, 4)
    r0 = rng.uniform(0.125, 0.3, (3, 4, 2))
    dy = rng.standard_normal((3, 4, 2))

    def run(ctx: str) -> list[np.ndarray]:
        xd = _put(ctx, x0)
        out = [
            _host(F.clipped_relu(xd, z=1.5)),  # (raw device arrays: no gradient)
            _host(F.prelu(xd, _put(ctx, w0))),
            _host(F.rrelu(xd, r=_put(ctx, r0))),
            _host(F.fix(xd)),
        ]
        with chainer.using_config("train", False):
            out.append(_host(F.rrelu(xd, l=0.1, u=0.2)))
        x, w = chainer.Variable(_put(ctx, x0)), chainer.Variable(_put(ctx, w0))
        y1 = F.clipped_relu(x, z=1.5)
        y2 = F.prelu(x, w)
        y3, r = F.rrelu(x, r=_put(ctx, r0), return_r=True)
        with chainer.using_config("train", False):
            y4 = F.rrelu(x, l=0.1, u=0.2)
        d = _put(ctx, dy)
        loss = F.sum((y1 + 2.0 * y2 + 3.0 * y3 + 0.5 * y4) * d)
        out += [_host(y1), _host(y2), _host(y3), _host(r), _host(y4), *_grads(loss, [x, w])]
        return out

    _same("clipped_relu/prelu/rrelu/fix", run)


def test_pad_sequence_and_permutate_given_device_arrays() -> None:
    rng = _rng(63)
    seqs = [rng.standard_normal((n, 3)) for n in (4, 2, 3)]
    x0 = rng.standard_normal((2, 5, 3))
    perm = np.array([3, 0, 4, 1, 2], np.int32)

    def run(ctx: str) -> list[np.ndarray]:
        out = [_host(F.pad_sequence([_put(ctx, s) for s in seqs], length=5, padding=-1.5))]
        vs = [chainer.Variable(_put(ctx, s)) for s in seqs]
        p = F.pad_sequence(vs, padding=0.25)
        x = chainer.Variable(_put(ctx, x0))
        fwd = F.permutate(x, _put(ctx, perm), axis=1)
        inv = F.permutate(x, _put(ctx, perm), axis=-2, inv=True)
        back = F.permutate(fwd, _put(ctx, perm), axis=1, inv=True)  # x again
        w = _rng(64).standard_normal((2, 5, 3))
        loss = F.sum(p * p * p) + F.sum((fwd + 2.0 * inv + 3.0 * back) * _put(ctx, w))
        out += [_host(p), _host(fwd), _host(inv), _host(back), *_grads(loss, [*vs, x])]
        return out

    _same("pad_sequence/permutate", run)


def test_select_item_and_resize_images_given_device_arrays() -> None:
    rng = _rng(65)
    s0 = rng.standard_normal((5, 4))
    t = np.array([3, 0, 2, 2, 1], np.int32)
    img = rng.standard_normal((2, 2, 3, 4)).astype(np.float32)

    def run(ctx: str) -> list[np.ndarray]:
        out = [_host(F.select_item(_put(ctx, s0), _put(ctx, t)))]
        s = chainer.Variable(_put(ctx, s0))
        sel = F.select_item(s, _put(ctx, t))
        out += [_host(sel), *_grads(F.sum(sel * sel * sel), [s])]
        for kw in (
            {},
            {"align_corners": False},
            {"mode": "nearest"},
        ):
            out.append(_host(F.resize_images(_put(ctx, img), (5, 7), **kw)))
            x = chainer.Variable(_put(ctx, img))
            y = F.resize_images(x, (5, 7), **kw)
            w = _rng(66).standard_normal(y.shape).astype(np.float32)
            out += [_host(y), *_grads(F.sum(y * _put(ctx, w)), [x])]
        return out

    _same("select_item/resize_images", run)


def test_evaluation_functions_given_device_arrays() -> None:
    rng = _rng(67)
    yb = rng.standard_normal((4, 3))
    tb = np.array([[1, 0, -1], [0, 1, 1], [1, -1, 0], [0, 0, 1]], np.int32)
    yc = rng.standard_normal((8, 3, 2))
    tc = np.array([[0, 1], [2, 2], [1, -1], [0, 2], [1, 1], [2, 0], [-1, 1], [0, 0]], np.int32)
    pred = rng.standard_normal((6, 3))
    true = rng.standard_normal((6, 3))

    def run(ctx: str) -> list[np.ndarray]:
        out = [_host(F.binary_accuracy(_put(ctx, yb), _put(ctx, tb)))]
        y, t = _put(ctx, yc), _put(ctx, tc)
        out += [_host(v) for v in F.classification_summary(y, t, beta=2.0)]
        out += [_host(v) for v in F.classification_summary(y, t, label_num=4)]
        for fn in (F.precision, F.recall, F.f1_score):
            out += [_host(v) for v in fn(y, t)]
        out.append(_host(F.r2_score(_put(ctx, pred), _put(ctx, true))))
        out.append(_host(F.r2_score(_put(ctx, pred), _put(ctx, true), multioutput="raw_values")))
        return out

    _same("binary_accuracy/classification_summary/precision/recall/f1_score/r2_score", run)


def test_connectionist_temporal_classification_with_device_lengths() -> None:
    rng = _rng(68)
    xs0 = rng.standard_normal((6, 3, 4))  # T, B, V
    t = np.array([[1, 2, 1], [3, 3, 0], [2, 0, 0]], np.int32)
    input_length = np.array([6, 5, 3], np.int32)
    label_length = np.array([3, 2, 1], np.int32)

    def run(ctx: str) -> list[np.ndarray]:
        xs = [chainer.Variable(_put(ctx, a)) for a in xs0]
        args = (_put(ctx, t), 0, _put(ctx, input_length), _put(ctx, label_length))
        each = F.connectionist_temporal_classification(xs, *args, reduce="no")
        mean = F.connectionist_temporal_classification(xs, *args)
        w = _put(ctx, np.array([1.0, -0.5, 2.0]))
        gs = _grads(F.sum(each * w) + mean, xs)
        return [_host(each), _host(mean), *gs]

    _same("connectionist_temporal_classification", run)


def test_discriminative_loss_with_device_labels() -> None:
    rng = _rng(69)
    # (batch == max_embedding_dim: chainer's broadcast of the embeddings needs it for B > 1)
    emb0 = rng.standard_normal((3, 3, 4, 5))
    labels = rng.integers(0, 4, size=(3, 4, 5)).astype(np.int32)  # 0: the background
    labels[:, 0, 1:4] = [1, 2, 3]  # (each instance in each image)

    def run(ctx: str) -> list[np.ndarray]:
        out = []
        for norm in (1, 2):
            emb = chainer.Variable(_put(ctx, emb0))
            terms = F.discriminative_margin_based_clustering_loss(
                emb, _put(ctx, labels), 0.5, 3.0, 3, norm=norm, gamma=0.01
            )
            out += [_host(v) for v in terms]
            if norm == 1:  # (the L2 norm of the masked-out pixels' zero rows: sqrt'(0), inf)
                out += _grads(terms[0] + 2.0 * terms[1] + 3.0 * terms[2], [emb])
        return out

    _same("discriminative_margin_based_clustering_loss", run)


def test_negative_sampling_with_a_fixed_sampler_and_device_labels() -> None:
    rng = _rng(70)
    x0 = rng.standard_normal((4, 3))
    w0 = rng.standard_normal((6, 3))
    t = np.array([2, -1, 5, 0], np.int32)
    fixed = np.array([[0, 1, 4], [0, 3, 2], [0, 0, 1], [0, 5, 5]], np.int32)

    def run(ctx: str) -> list[np.ndarray]:
        def sampler(shape: tuple[int, int]) -> Any:
            assert shape == fixed.shape
            return _put(ctx, fixed)  # (chainer's samplers give arrays of x's device)

        x, w = chainer.Variable(_put(ctx, x0)), chainer.Variable(_put(ctx, w0))
        each = F.negative_sampling(x, _put(ctx, t), w, sampler, 2, reduce="no")
        total, samples = F.negative_sampling(x, _put(ctx, t), w, sampler, 2, return_samples=True)
        d = _put(ctx, np.array([1.0, 2.0, -0.5, 0.75]))
        gs = _grads(F.sum(each * d) + total, [x, w])
        return [_host(each), _host(total), _host(samples).astype(np.int64), *gs]

    _same("negative_sampling", run)


def test_fix_and_zeta_given_device_arrays() -> None:
    rng = _rng(71)
    x0 = rng.uniform(-3.0, 3.0, (3, 4))
    s = rng.uniform(1.5, 4.0, (3, 4))  # the exponents
    q0 = rng.uniform(0.5, 2.5, (3, 4))

    def run(ctx: str) -> list[np.ndarray]:
        out = [_host(F.fix(_put(ctx, x0))), _host(F.fix(chainer.Variable(_put(ctx, x0))))]
        q = chainer.Variable(_put(ctx, q0))
        z = F.zeta(_put(ctx, s), q)
        z2 = F.zeta(2.5, q)
        return [*out, _host(z), _host(z2), *_grads(F.sum(z) + F.sum(z2 * z2), [q])]

    _same("fix/zeta", run)


def test_roi_poolings_and_aligns_given_device_rois() -> None:
    rng = _rng(72)
    x0 = rng.standard_normal((2, 3, 8, 9))
    rois5 = np.array(
        [[0, 0.6, 1.2, 6.3, 5.1], [1, 2.2, 0.4, 8.4, 7.3], [1, 1.0, 3.0, 4.6, 6.9]], np.float64
    )
    rois4 = np.ascontiguousarray(rois5[:, [2, 1, 4, 3]])  # (ymin, xmin, ymax, xmax)
    idx = np.array([0, 1, 1], np.int32)
    dy = rng.standard_normal((3, 3, 2, 3))

    def run(ctx: str) -> list[np.ndarray]:
        out = []
        calls = [
            lambda x: F.roi_pooling_2d(x, _put(ctx, rois5), 2, 3, 0.8),
            lambda x: F.roi_max_pooling_2d(x, _put(ctx, rois4), _put(ctx, idx), (2, 3), 0.8),
            lambda x: F.roi_average_pooling_2d(x, _put(ctx, rois4), _put(ctx, idx), (2, 3), 0.8),
        ]
        for call in calls:
            x = chainer.Variable(_put(ctx, x0))
            y = call(x)
            out += [_host(y), *_grads(F.sum(y * _put(ctx, dy)), [x])]
        r32 = _put(ctx, rois4.astype(np.float32))  # (the aligns take float32 only, as chainer)
        for align in (F.roi_average_align_2d, F.roi_max_align_2d):
            x = chainer.Variable(_put(ctx, x0.astype(np.float32)))
            y = align(x, r32, _put(ctx, idx), (2, 3), 0.8, sampling_ratio=2)
            d = _put(ctx, dy.astype(np.float32))
            out += [_host(y), *_grads(F.sum(y * d), [x])]
        return out

    _same("roi poolings/aligns", run)


def test_upsampling_2d_with_the_indexes_of_max_pooling() -> None:
    x0 = _rng(73).standard_normal((2, 2, 6, 7))

    def run(ctx: str) -> list[np.ndarray]:
        out = []
        for ksize, stride, pad, cover_all in ((2, 2, 0, False), (3, 2, 1, True)):
            x = chainer.Variable(_put(ctx, x0))
            y, indexes = F.max_pooling_2d(
                x, ksize, stride, pad, cover_all=cover_all, return_indices=True
            )
            u = F.upsampling_2d(y, indexes, ksize, stride, pad, outsize=(6, 7), cover_all=cover_all)
            w = _rng(74).standard_normal(u.shape)
            out += [_host(y), _host(indexes).astype(np.int64), _host(u)]
            out += _grads(F.sum(u * _put(ctx, w)), [x])
        return out

    _same("max_pooling_2d(return_indices)/upsampling_2d", run)
