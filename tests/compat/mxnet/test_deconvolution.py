"""mx.nd.Deconvolution and gluon.nn.Conv1DTranspose/Conv2DTranspose/Conv3DTranspose (DCGAN's
generator): values and gradients against a numpy formula of the transposed convolution and
against mxnet 1.9.1's output, mxnet's parameter names, shapes and errors."""

from __future__ import annotations

import itertools

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet.gluon import nn


def _deconv_np(x, w, b, stride, pad, dilate, adj, groups):  # type: ignore[no-untyped-def]
    """``y[n, g F/G + f, i s + k d - p] += W[c, f, k] x[n, c, i]`` (c in group g), float64."""
    n, c = x.shape[:2]
    cg, fg = c // groups, w.shape[1]
    k = w.shape[2:]
    out = [
        (L - 1) * s - 2 * p + d * (kk - 1) + 1 + a
        for L, s, p, d, kk, a in zip(x.shape[2:], stride, pad, dilate, k, adj)
    ]
    y = np.zeros((n, fg * groups, *out))
    for ci in range(c):
        g = ci // cg
        for i in itertools.product(*[range(L) for L in x.shape[2:]]):
            for kk in itertools.product(*[range(a) for a in k]):
                o = [ii * s + kj * d - p for ii, s, kj, d, p in zip(i, stride, kk, dilate, pad)]
                if all(0 <= oj < sz for oj, sz in zip(o, out)):
                    for f in range(fg):
                        y[(slice(None), g * fg + f, *o)] += (
                            w[(ci, f, *kk)] * x[(slice(None), ci, *i)]
                        )
    if b is not None:
        y += b.reshape(1, -1, *([1] * len(k)))
    return y


CASES = [
    # x shape, kernel, num_filter, options
    ((2, 4, 3, 3), (4, 4), 6, dict(stride=(2, 2), pad=(1, 1))),
    ((1, 4, 5), (3,), 4, dict(stride=(2,), pad=(1,), adj=(1,), num_group=2, no_bias=False)),
    ((1, 2, 3, 4), (3, 2), 3, dict(stride=(2, 3), dilate=(2, 1), pad=(2, 0), no_bias=False)),
    ((1, 2, 2, 2, 2), (2, 2, 2), 2, dict(stride=(1, 2, 1))),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_deconvolution_values_and_gradients_match_numpy(case: int) -> None:
    xs, k, nf, opts = CASES[case]
    rng = np.random.RandomState(case)
    g = opts.get("num_group", 1)
    xv = rng.randn(*xs).astype(np.float32)
    wv = rng.randn(xs[1], nf // g, *k).astype(np.float32)
    bv = rng.randn(nf).astype(np.float32) if not opts.get("no_bias", True) else None
    x, w = mx.nd.array(xv), mx.nd.array(wv)
    arrays = [x, w] + ([mx.nd.array(bv)] if bv is not None else [])
    for a in arrays:
        a.attach_grad()
    n = len(k)
    geo = (
        opts.get("stride", (1,) * n),
        opts.get("pad", (0,) * n),
        opts.get("dilate", (1,) * n),
        opts.get("adj", (0,) * n),
        g,
    )
    ref = _deconv_np(xv.astype(np.float64), wv.astype(np.float64), bv, *geo)
    head = rng.randn(*ref.shape)
    with mx.autograd.record():
        y = mx.nd.Deconvolution(*arrays, kernel=k, num_filter=nf, **opts)
        loss = (y * mx.nd.array(head)).sum()
    loss.backward()
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-5, atol=1e-5)
    # y is linear in x (and in w): the gradient of sum(y * head) by unit steps is exact
    for a, v, which in ((x, xv, 0), (w, wv, 1)):
        num = np.zeros(v.shape)
        for idx in np.ndindex(*v.shape):
            step = np.zeros(v.shape)
            step[idx] = 1.0
            args = [xv.astype(np.float64), wv.astype(np.float64)]
            args[which] = args[which] + step
            num[idx] = ((_deconv_np(*args, bv, *geo) - ref) * head).sum()
        np.testing.assert_allclose(a.grad.asnumpy(), num, rtol=1e-4, atol=1e-4)
    if bv is not None:
        np.testing.assert_allclose(
            arrays[2].grad.asnumpy(), head.sum(axis=(0, *range(2, head.ndim))), rtol=1e-5
        )


def test_deconvolution_matches_mxnet() -> None:
    x = mx.nd.array(np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2) / 4 - 0.5)
    w = mx.nd.array(np.cos(np.arange(24, dtype=np.float32)).reshape(2, 3, 2, 2))
    b = mx.nd.array([0.5, -1.0, 2.0])
    for a in (x, w, b):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Deconvolution(
            x, w, b, kernel=(2, 2), stride=(2, 2), pad=(1, 0), adj=(1, 0), num_filter=3,
            no_bias=False,
        )  # fmt: skip
        head = mx.nd.array(np.arange(36, dtype=np.float32).reshape(1, 3, 3, 4) / 10)
        (y * head).sum().backward()
    # mxnet 1.9.1
    ref_y = [
        [[0.776442, 0.615152, 0.70659, 0.177732], [1.343854, 1.407447, 1.804818, 1.769384],
         [0.636737, -0.259688, 0.566885, -0.697108]],
        [[-1.149927, -0.882599, -0.744805, -0.446947], [-1.95766, -1.275163, -2.360485, -1.273039],
         [-0.339683, -0.011295, 0.065439, 0.424356]],
        [[1.919555, 1.731371, 1.459797, 1.599269], [2.408082, 1.452271, 2.473728, 1.087556],
         [1.000039, 1.467167, 0.540281, 1.335065]],
    ]  # fmt: skip
    ref_gx = [[[0.030571, -0.074772], [-3.33393, -3.416535]],
              [[-1.730262, -1.831606], [-3.790193, -3.815771]]]  # fmt: skip
    np.testing.assert_allclose(y.asnumpy()[0], ref_y, atol=2e-6)
    np.testing.assert_allclose(x.grad.asnumpy()[0], ref_gx, atol=1e-5)
    np.testing.assert_allclose(b.grad.asnumpy(), [6.6, 21.0, 35.4], rtol=1e-6)


def test_deconvolution_target_shape() -> None:
    # mxnet 1.9.1 (native operator): target_shape (5, 5) for 3x3 data, kernel 3, stride 2 is
    # pad 1, adj 0; (6, 6) is pad 1, adj 1
    rng = np.random.RandomState(0)
    xv, wv = rng.randn(1, 2, 3, 3), rng.randn(2, 2, 3, 3)
    x, w = mx.nd.array(xv), mx.nd.array(wv)
    for target, pad, adj in (((5, 5), (1, 1), (0, 0)), ((6, 6), (1, 1), (1, 1))):
        y = mx.nd.Deconvolution(
            x, w, kernel=(3, 3), stride=(2, 2), target_shape=target, num_filter=2
        )
        assert y.shape == (1, 2, *target)
        ref = _deconv_np(xv, wv, None, (2, 2), pad, (1, 1), adj, 1)
        np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-5, atol=1e-5)
    with pytest.raises(mx.base.MXNetError, match="too big target shape"):
        mx.nd.Deconvolution(x, w, kernel=(3, 3), stride=(2, 2), target_shape=(9, 9), num_filter=2)


def test_deconvolution_errors() -> None:
    x, w = mx.nd.ones((1, 2, 3, 3)), mx.nd.ones((2, 4, 2, 2))
    # mxnet 1.9.1: no_bias defaults to True, and a bias then is one input too many
    with pytest.raises(mx.base.MXNetError, match="expects 2 inputs, but got 3"):
        mx.nd.Deconvolution(x, w, mx.nd.ones((4,)), kernel=(2, 2), num_filter=4)
    with pytest.raises(mx.base.MXNetError, match=r"Shape inconsistent.*inferred shape=\(2,3,2,2\)"):
        mx.nd.Deconvolution(x, w, kernel=(2, 2), num_filter=3)
    with pytest.raises(mx.base.MXNetError, match="adj must be smaller than the stride"):
        mx.nd.Deconvolution(x, w, kernel=(2, 2), num_filter=4, adj=(1, 1))
    with pytest.raises(NotImplementedError, match=r"layout=.NHWC.*migration-mxnet"):
        mx.nd.Deconvolution(x, w, kernel=(2, 2), num_filter=4, layout="NHWC")
    with pytest.raises(mx.base.MXNetError, match="kernel and num_filter"):
        mx.nd.Deconvolution(x, w, kernel=(2, 2))
    with pytest.raises(TypeError, match="Deconvolution"):
        mx.nd.Deconvolution(np.ones((1, 2, 3, 3)), w, kernel=(2, 2), num_filter=4)


def test_conv_transpose_layers() -> None:
    c = nn.Conv2DTranspose(
        3, 3, strides=2, padding=1, output_padding=1, in_channels=2, activation="relu"
    )
    # mxnet 1.9.1: named as Conv2D (conv<n>_), weight (in_channels, channels, *kernel), repr
    assert c.prefix.startswith("conv") and list(c.collect_params()) == [
        c.prefix + "weight",
        c.prefix + "bias",
    ]
    assert c.weight.shape == (2, 3, 3, 3)
    assert repr(c) == (
        "Conv2DTranspose(3 -> 2, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), "
        "Activation(relu))"
    )
    c.initialize(mx.init.Uniform(1.0))
    x = mx.nd.array(np.random.RandomState(0).randn(1, 2, 2, 2))
    y = c(x)
    assert y.shape == (1, 3, 4, 4)  # mxnet 1.9.1
    ref = mx.nd.Deconvolution(
        x, c.weight.data(), c.bias.data(), kernel=(3, 3), stride=(2, 2), pad=(1, 1),
        adj=(1, 1), num_filter=3, no_bias=False,
    )  # fmt: skip
    np.testing.assert_allclose(y.asnumpy(), np.maximum(ref.asnumpy(), 0), rtol=1e-6)
    # deferred in_channels, as mxnet 1.9.1: Conv1DTranspose(4, 3, strides=3, output_padding=2)
    c1 = nn.Conv1DTranspose(4, 3, strides=3, output_padding=2)
    assert c1.weight.shape == (0, 4, 3)
    c1.initialize()
    assert c1(mx.nd.ones((1, 2, 5))).shape == (1, 4, 17)
    assert c1.weight.shape == (2, 4, 3)
    c3 = nn.Conv3DTranspose(2, (1, 2, 2), strides=(1, 2, 2), use_bias=False, groups=2)
    c3.initialize(mx.init.One())
    y3 = c3(mx.nd.ones((1, 4, 1, 2, 2)))
    assert y3.shape == (1, 2, 1, 4, 4) and c3.weight.shape == (4, 1, 1, 2, 2)
    np.testing.assert_allclose(y3.asnumpy(), 2.0)  # each output gets 2 inputs of its group
    with pytest.raises(NotImplementedError, match="layout='NHWC'"):
        nn.Conv2DTranspose(3, 3, layout="NHWC")
    # Symbols: mx.sym.Deconvolution (mxnet 1.9.1's shapes; tests/compat/mxnet/
    # test_deconvolution_symbol.py)
    sym = nn.Conv2DTranspose(3, 3, strides=2, padding=1, output_padding=1, in_channels=2)(
        mx.sym.var("data")
    )
    assert sym.infer_shape(data=(1, 2, 5, 5))[1] == [(1, 3, 10, 10)]
