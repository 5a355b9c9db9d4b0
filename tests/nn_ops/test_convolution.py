"""Convolution and deconvolution of gradhub-nn-ops: naive-loop references, adjoint identities,
float32 and bias dtypes, double backward through a small CNN, channel_last, output_padding,
filter gradients with an int kernel, the CPU blocking and scratch buffers, and (when PyTorch is
installed) agreement with PyTorch's kernels."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck


def _v(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


# -- convolution family ------------------------------------------------------------------------


def _conv_ref(
    x: np.ndarray, w: np.ndarray, pad: tuple, stride: tuple, dilation: tuple, group: int
) -> np.ndarray:
    from gradhub_nn_ops.conv import _convolution_ref

    return _convolution_ref(x, w, None, 1, pad, stride, dilation, group)


_CONV_CONFIGS = [
    # (x shape, w shape, pad, stride, dilation, group)
    ((2, 3, 7), (4, 3, 3), (2,), (2,), (1,), 1),
    ((1, 4, 6, 5), (6, 2, 3, 2), (1, 0), (1, 2), (1, 2), 2),
    ((2, 2, 5, 6), (3, 2, 1, 3), (0, 1), (3, 1), (1, 1), 1),
    ((1, 3, 6, 6), (3, 1, 3, 3), (2, 2), (1, 1), (2, 2), 3),
    ((1, 2, 4, 3, 5), (2, 2, 2, 2, 3), (1, 0, 1), (2, 1, 2), (1, 1, 1), 1),
]


@pytest.mark.parametrize("cfg", _CONV_CONFIGS)
def test_convolution_matches_naive_loops(cfg: tuple) -> None:
    xs, ws, pad, stride, dilation, group = cfg
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    y = F.convolution(x, w, pad=pad, stride=stride, dilation=dilation, group=group)
    np.testing.assert_allclose(
        y.d, _conv_ref(x, w, pad, stride, dilation, group), rtol=1e-10, atol=1e-12
    )


@pytest.mark.parametrize("cfg", _CONV_CONFIGS)
def test_deconvolution_is_the_adjoint_of_convolution(cfg: tuple) -> None:
    # <conv(x, W), u> == <x, deconv(u, W)>, with output_padding restoring x's shape
    xs, ws, pad, stride, dilation, group = cfg
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    y = F.convolution(x, w, pad=pad, stride=stride, dilation=dilation, group=group).d
    u = rng.standard_normal(y.shape)
    op = tuple(
        L - ((o - 1) * s - 2 * p + d * (k - 1) + 1)
        for L, o, k, p, s, d in zip(xs[2:], y.shape[2:], ws[2:], pad, stride, dilation)
    )
    xt = F.deconvolution(
        u, w, pad=pad, stride=stride, dilation=dilation, group=group, output_padding=op
    ).d
    assert xt.shape == x.shape
    np.testing.assert_allclose(np.sum(y * u), np.sum(x * xt), rtol=1e-10)
    # and the filter gradient is the adjoint w.r.t. the weight: <conv(x, W), u> == <W, FG(x, u)>
    fg = F.convolution_filter_grad(
        x, u, kernel=ws[2:], pad=pad, stride=stride, dilation=dilation, group=group
    ).d
    np.testing.assert_allclose(np.sum(y * u), np.sum(w * fg), rtol=1e-10)


def test_convolution_float32_stays_float32() -> None:
    rng = np.random.default_rng(8)
    x = gh.Variable(rng.standard_normal((2, 3, 5, 5)).astype(np.float32))
    w = gh.Variable(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    b = gh.Variable(np.zeros(4, np.float32))
    y = F.convolution(x, w, b, pad=(1, 1))
    assert y.dtype == np.float32
    F.max_pooling(y, (2, 2)).backward()
    assert x.g.dtype == w.g.dtype == b.g.dtype == np.float32


def test_small_cnn_double_backward_gradient_penalty() -> None:
    """The seed's gradient penalty: differentiate d(loss)/d(params) again (order 2 gradcheck)."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 1, 4, 4))
    w1 = rng.standard_normal((2, 1, 3, 3)) * 0.5
    b1 = rng.standard_normal(2) * 0.1
    w2 = rng.standard_normal((1, 2, 2, 2)) * 0.5

    def net(w1v: gh.Variable, b1v: gh.Variable, w2v: gh.Variable) -> gh.Variable:
        h = F.convolution(_v(x, need_grad=False), w1v, b1v, pad=(1, 1))
        h = F.max_pooling(h, (2, 2))
        h = F.convolution(h, w2v, pad=(1, 1))
        return F.average_pooling(h, (2, 2), ignore_border=False)

    gradcheck(net, [w1, b1, w2], order=2)

    def penalty(w1v: gh.Variable, b1v: gh.Variable, w2v: gh.Variable) -> gh.Variable:
        loss = (net(w1v, b1v, w2v) ** 2.0).sum()
        grads = gh.grad([loss], [w1v, b1v, w2v], create_graph=True)
        return sum(((g * g).sum() for g in grads), loss)

    gradcheck(penalty, [w1, b1, w2], order=1)


# -- cross-check with PyTorch's kernels (skipped when PyTorch is not installed) ----------------


def test_agrees_with_pytorch() -> None:
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 4, 7, 6))
    w = rng.standard_normal((6, 2, 3, 2))
    b = rng.standard_normal(6)
    for pad, stride, dil in itertools.product([(0, 0), (1, 2)], [(1, 1), (2, 3)], [(1, 1), (2, 1)]):
        ours = F.convolution(x, w, b, pad=pad, stride=stride, dilation=dil, group=2).d
        ref = tf.conv2d(
            torch.tensor(x),
            torch.tensor(w),
            torch.tensor(b),
            stride=stride,
            padding=pad,
            dilation=dil,
            groups=2,
        ).numpy()
        np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)
        u = rng.standard_normal(ours.shape)
        wt = rng.standard_normal((6, 3, 3, 2))
        out = F.deconvolution(u, wt, pad=pad, stride=stride, dilation=dil, group=2).d
        ref = tf.conv_transpose2d(
            torch.tensor(u), torch.tensor(wt), stride=stride, padding=pad, dilation=dil, groups=2
        ).numpy()
        np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)
    xp = rng.standard_normal((2, 3, 7, 8))
    ours = F.max_pooling(xp, (3, 2), stride=(2, 2), pad=(1, 1)).d
    ref = tf.max_pool2d(torch.tensor(xp), (3, 2), stride=(2, 2), padding=(1, 1)).numpy()
    np.testing.assert_array_equal(ours, ref)
    ours = F.average_pooling(xp, (3, 2), stride=(2, 2), pad=(1, 1), including_pad=False).d
    ref = tf.avg_pool2d(
        torch.tensor(xp), (3, 2), stride=(2, 2), padding=(1, 1), count_include_pad=False
    ).numpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-12)


# -- CPU blocking and scratch buffers ----------------------------------------------------------


@pytest.mark.parametrize("cfg", _CONV_CONFIGS)
def test_kernels_processed_one_sample_per_block(
    cfg: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gradhub_nn_ops import conv
    from gradhub_nn_ops.conv import _convolution_filter_grad_ref, _deconvolution_ref

    monkeypatch.setattr(conv, "_BLOCK_BYTES", 1)  # every sample is its own block
    xs, ws, pad, stride, dilation, group = cfg
    rng = np.random.default_rng(11)
    x = rng.standard_normal((3, *xs[1:]))
    w = rng.standard_normal(ws)
    kw = {"pad": pad, "stride": stride, "dilation": dilation, "group": group}
    y = F.convolution(x, w, **kw).d
    np.testing.assert_allclose(
        y, _conv_ref(x, w, pad, stride, dilation, group), rtol=1e-10, atol=1e-12
    )
    u = rng.standard_normal(y.shape)
    np.testing.assert_allclose(
        F.convolution_filter_grad(x, u, kernel=ws[2:], **kw).d,
        _convolution_filter_grad_ref(x, u, ws[2:], 1, **kw),
        rtol=1e-10,
        atol=1e-12,
    )
    wt = rng.standard_normal((xs[1], ws[0] // group, *ws[2:]))
    np.testing.assert_allclose(
        F.deconvolution(x, wt, **kw).d,
        _deconvolution_ref(x, wt, None, 1, **kw),
        rtol=1e-10,
        atol=1e-12,
    )


@pytest.mark.parametrize(
    ("xs", "ws"),
    [((1, 1, 5), (1, 1, 3)), ((2, 2, 4, 4), (3, 2, 3, 3)), ((1, 1, 1, 4), (1, 1, 1, 2))],
)
def test_results_never_alias_scratch_buffers(xs: tuple, ws: tuple) -> None:
    rng = np.random.default_rng(12)
    x1, x2 = rng.standard_normal(xs), rng.standard_normal(xs)
    w = rng.standard_normal(ws)
    wt = rng.standard_normal((ws[1], ws[0], *ws[2:]))
    last_pad = (0,) * (len(ws) - 3) + (1,)
    for fn, weight, kw in (
        (F.convolution, w, {"pad": 1}),
        (F.deconvolution, wt, {}),
        (F.deconvolution, wt, {"pad": last_pad}),
    ):
        first = fn(x1, weight, **kw).d
        kept = first.copy()
        fn(x2, weight, **kw)
        np.testing.assert_array_equal(first, kept)


@pytest.mark.parametrize("cfg", _CONV_CONFIGS)
def test_gemms_cut_into_single_threaded_pieces(cfg: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    from gradhub_nn_ops import conv
    from gradhub_nn_ops.conv import _convolution_filter_grad_ref, _deconvolution_ref

    monkeypatch.setattr(conv, "_GEMM_ST", 7)  # pieces of a column or two, with a remainder
    xs, ws, pad, stride, dilation, group = cfg
    rng = np.random.default_rng(13)
    x = rng.standard_normal((2, *xs[1:]))
    w = rng.standard_normal(ws)
    b = rng.standard_normal(ws[0])
    kw = {"pad": pad, "stride": stride, "dilation": dilation, "group": group}
    y = F.convolution(x, w, b, **kw).d
    ref = _conv_ref(x, w, pad, stride, dilation, group)
    ref = ref + b.reshape((-1,) + (1,) * (ref.ndim - 2))
    np.testing.assert_allclose(y, ref, rtol=1e-10, atol=1e-12)
    u = rng.standard_normal(y.shape)
    np.testing.assert_allclose(
        F.convolution_filter_grad(x, u, kernel=ws[2:], **kw).d,
        _convolution_filter_grad_ref(x, u, ws[2:], 1, **kw),
        rtol=1e-10,
        atol=1e-12,
    )
    wt = rng.standard_normal((xs[1], ws[0] // group, *ws[2:]))
    np.testing.assert_allclose(
        F.deconvolution(x, wt, **kw).d,
        _deconvolution_ref(x, wt, None, 1, **kw),
        rtol=1e-10,
        atol=1e-12,
    )


# -- the filter gradient in chunks ---------------------------------------------------------------


@pytest.mark.parametrize("group", [1, 2])
def test_filter_grad_in_chunks_and_pieces_matches_the_reference(
    group: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The filter gradient's partial sums over several chunks of the batch and several GEMM
    pieces, float32 against the float64 loops."""
    from gradhub_nn_ops import conv
    from gradhub_nn_ops.conv import _convolution_filter_grad_ref

    monkeypatch.setattr(conv, "_BLOCK_BYTES", 4096)
    monkeypatch.setattr(conv, "_GEMM_ST", 64)
    rng = np.random.default_rng(18)
    x = rng.standard_normal((5, 4, 9, 7))
    dy = rng.standard_normal((5, 6, 9, 5))
    kw = {"pad": (1, 0), "dilation": (1, 1), "group": group}
    ref = _convolution_filter_grad_ref(x, dy, (3, 3), 1, **kw)
    out = conv._convolution_filter_grad(
        np, x.astype(np.float32), dy.astype(np.float32), (3, 3), **kw
    )
    assert out.dtype == np.float32 and out.shape == (6, 4 // group, 3, 3)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        conv._convolution_filter_grad(np, x, dy, (3, 3), **kw), ref, rtol=1e-10, atol=1e-10
    )


RNG = np.random.default_rng(7)


def _check_grad_dtypes_and_values(fn: object, arrays: list[np.ndarray]) -> None:
    """fn on the mixed-dtype arrays: result and gradients vs fn on float64 copies."""
    vs = [gh.Variable(a) for a in arrays]
    v64s = [gh.Variable(a.astype(np.float64)) for a in arrays]
    y = fn(*vs)  # type: ignore[operator]
    y64 = fn(*v64s)  # type: ignore[operator]
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.d, y64.d, rtol=1e-5, atol=1e-5)
    gy = RNG.standard_normal(y.shape)
    ref = gh.grad([y64], v64s, [gy], create_graph=False)
    for create_graph in (False, True):
        gs = gh.grad([y], vs, [gy], create_graph=create_graph)
        for a, g, r in zip(arrays, gs, ref):
            assert g.dtype == a.dtype  # each input gets a gradient of its own dtype
            np.testing.assert_allclose(g.d, r.d, rtol=1e-4, atol=1e-4)


_DECONV_CASES = [
    # x shape, w shape, attrs (output_padding >= stride, allowed because < dilation)
    ((1, 1, 3), (1, 1, 2), {"stride": 1, "dilation": 2, "output_padding": 1}),
    ((2, 2, 3), (2, 3, 2), {"stride": 1, "dilation": 3, "output_padding": 2, "pad": 1}),
    ((1, 2, 3), (2, 1, 2), {"stride": 2, "dilation": 3, "output_padding": 2}),
    (
        (1, 2, 3, 2),
        (2, 2, 2, 2),
        {"stride": (1, 2), "dilation": (2, 1), "pad": (1, 0), "output_padding": (1, 1)},
    ),
    (
        (1, 4, 2, 3),
        (4, 1, 2, 2),
        {"group": 2, "dilation": (3, 2), "pad": (2, 1), "output_padding": (2, 1)},
    ),
]


V = gh.Variable


def _central_diff(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


def _filter_grad_np(x: np.ndarray, dy: np.ndarray, k: int) -> np.ndarray:
    """Independent reference, 1-d, stride 1: dW[o, c, j] = sum_{n, t} dy[n, o, t] x[n, c, t+j]."""
    out = np.zeros((dy.shape[1], x.shape[1], k))
    for j in range(k):
        out[:, :, j] = np.einsum("not,nct->oc", dy, x[:, :, j : j + dy.shape[2]])
    return out


@pytest.mark.parametrize(
    "name, w_shape, pad, stride",
    [
        ("convolution", (3, 2, 3, 3), (0, 0), (1, 1)),
        ("convolution", (3, 2, 3, 3), (1, 1), (1, 1)),
        ("convolution", (3, 2, 3, 3), (1, 0), (2, 2)),
        ("convolution", (3, 2, 3, 3), (0, 0), (2, 1)),
        ("deconvolution", (2, 3, 3, 3), (0, 0), (1, 1)),
        ("deconvolution", (2, 3, 3, 3), (1, 1), (2, 2)),
    ],
)
def test_convolutions_with_a_float64_bias_promote(
    name: str, w_shape: tuple[int, ...], pad: tuple[int, int], stride: tuple[int, int]
) -> None:
    fn = getattr(F, name)
    x = RNG.standard_normal((2, 2, 5, 5)).astype(np.float32)
    w = RNG.standard_normal(w_shape).astype(np.float32)
    b = RNG.standard_normal(3) + 1e-3 * np.pi
    y = fn(gh.Variable(x), gh.Variable(w), gh.Variable(b), pad=pad, stride=stride)
    nob = fn(gh.Variable(x), gh.Variable(w), pad=pad, stride=stride)
    assert nob.dtype == np.float32
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.d, nob.d.astype(np.float64) + b[:, None, None], rtol=0, atol=1e-12)
    _check_grad_dtypes_and_values(lambda *a: fn(*a, pad=pad, stride=stride), [x, w, b])


def test_convolution_same_dtype_bias_stays_float32() -> None:
    x = gh.Variable(RNG.standard_normal((1, 2, 4, 4)).astype(np.float32))
    w = gh.Variable(RNG.standard_normal((3, 2, 3, 3)).astype(np.float32))
    b = gh.Variable(RNG.standard_normal(3).astype(np.float32))
    assert F.convolution(x, w, b, pad=(1, 1)).dtype == np.float32
    assert F.convolution(x, w, b).dtype == np.float32


@pytest.mark.parametrize(("xs", "ws", "attrs"), _DECONV_CASES)
def test_deconvolution_output_padding_below_dilation(xs, ws, attrs) -> None:  # type: ignore[no-untyped-def]
    from gradhub_nn_ops.conv import _deconvolution_ref

    rng = np.random.default_rng(6)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    b = rng.standard_normal(ws[1] * attrs.get("group", 1))
    y = F.deconvolution(x, w, b, **attrs)
    np.testing.assert_allclose(y.d, _deconvolution_ref(x, w, b, **attrs), rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x, w, b: F.deconvolution(x, w, b, **attrs), [x, w, b], order=2)


def test_deconvolution_output_padding_reported_example() -> None:
    # torch conv_transpose1d(x, w, stride=1, dilation=2, output_padding=1) gives this
    x = np.array([[[0.0, 1.0, 2.0]]])
    w = np.array([[[1.0, 0.0]]])
    y = F.deconvolution(x, w, stride=1, dilation=2, output_padding=1)
    np.testing.assert_array_equal(y.d, [[[0.0, 1.0, 2.0, 0.0, 0.0, 0.0]]])


def test_deconvolution_output_padding_first_order_fast_path() -> None:
    # a plain backward (the array-level rule) against central differences
    from numeric_helpers import central_differences

    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((2, 2, 3)), rng.standard_normal((2, 2, 2))
    attrs = {"stride": 1, "dilation": 3, "output_padding": 2, "pad": 1}
    wy = rng.standard_normal(F.deconvolution(x, w, **attrs).shape)
    xv, wv = gh.Variable(x), gh.Variable(w)
    F.sum(F.deconvolution(xv, wv, **attrs) * wy).backward()
    fx = central_differences(lambda a: float((F.deconvolution(a, w, **attrs).d * wy).sum()), x)
    fw = central_differences(lambda a: float((F.deconvolution(x, a, **attrs).d * wy).sum()), w)
    np.testing.assert_allclose(xv.g, fx, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(wv.g, fw, rtol=1e-6, atol=1e-8)


def test_deconvolution_output_padding_still_checked() -> None:
    x, w = np.ones((1, 1, 3)), np.ones((1, 1, 2))
    with pytest.raises(ValueError, match=r"deconvolution\(\): output_padding .*stride.*dilation"):
        F.deconvolution(x, w, stride=2, dilation=2, output_padding=2)


@pytest.mark.parametrize("create_graph", [False, True])
def test_filter_grad_with_an_int_kernel_differentiates(create_graph: bool) -> None:
    rng = np.random.default_rng(0)
    x0, dy0 = rng.standard_normal((1, 2, 5)), rng.standard_normal((1, 2, 3))
    gw = rng.standard_normal((2, 2, 3))  # the seed of the backward pass
    xv, dyv = V(x0), V(dy0)
    w = F.convolution_filter_grad(xv, dyv, kernel=3)
    np.testing.assert_allclose(w.d, _filter_grad_np(x0, dy0, 3), rtol=1e-12)
    gx, gdy = gh.grad([w], [xv, dyv], grad_outputs=[gw], create_graph=create_graph)
    fd_x = _central_diff(lambda a: float((_filter_grad_np(a, dy0, 3) * gw).sum()), x0)
    fd_dy = _central_diff(lambda a: float((_filter_grad_np(x0, a, 3) * gw).sum()), dy0)
    np.testing.assert_allclose(gx.d, fd_x, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gdy.d, fd_dy, rtol=1e-6, atol=1e-8)
    # the same as kernel=(3,)
    gx1, gdy1 = gh.grad(
        [F.convolution_filter_grad(xv, dyv, kernel=(3,))], [xv, dyv], grad_outputs=[gw]
    )
    np.testing.assert_array_equal(gx.d, gx1.d)
    np.testing.assert_array_equal(gdy.d, gdy1.d)


def test_filter_grad_with_an_int_kernel_passes_gradcheck_to_order_2() -> None:
    rng = np.random.default_rng(1)
    gradcheck(
        lambda a, b: F.convolution_filter_grad(a, b, kernel=2),
        [rng.standard_normal((2, 2, 4)), rng.standard_normal((2, 2, 3))],
        order=2,
    )


def test_convolution_channel_last_matches_channel_first() -> None:
    rng = np.random.default_rng(3)
    x = gh.Variable(rng.standard_normal((2, 4, 5, 5)))
    w = gh.Variable(rng.standard_normal((6, 2, 3, 3)))
    b = gh.Variable(rng.standard_normal(6))
    xl = gh.Variable(x.d.transpose(0, 2, 3, 1).copy())
    wl = gh.Variable(w.d.transpose(0, 2, 3, 1).copy())  # nnabla's (O, *k, I / group)
    y = F.convolution(x, w, b, pad=(1, 1), stride=(2, 1), group=2)
    yl = F.convolution(xl, wl, b, pad=(1, 1), stride=(2, 1), group=2, channel_last=True)
    np.testing.assert_allclose(yl.d, y.d.transpose(0, 2, 3, 1), rtol=1e-12)
    g = gh.grad([F.sum(y * y)], [x, w, b])
    gl = gh.grad([F.sum(yl * yl)], [xl, wl, b])
    np.testing.assert_allclose(gl[0].d, g[0].d.transpose(0, 2, 3, 1), rtol=1e-10)
    np.testing.assert_allclose(gl[1].d, g[1].d.transpose(0, 2, 3, 1), rtol=1e-10)
    np.testing.assert_allclose(gl[2].d, g[2].d, rtol=1e-10)
    assert F.convolution(x, w, b, channel_last=False, group=2).shape == (2, 6, 3, 3)


def test_deconvolution_channel_last_and_positional_output_padding() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 4, 4))
    w = rng.standard_normal((3, 4, 2, 2))
    y = F.deconvolution(x, w, None, 1, None, (2, 2), None, 1, False, (1, 1))
    assert y.shape == (2, 4, 9, 9)
    yl = F.deconvolution(
        x.transpose(0, 2, 3, 1),
        w.transpose(0, 2, 3, 1),
        None,
        1,
        None,
        (2, 2),
        None,
        1,
        True,
        (1, 1),
    )
    np.testing.assert_allclose(yl.d, y.d.transpose(0, 2, 3, 1), rtol=1e-12)
    with pytest.raises(TypeError, match=r"deconvolution.*'channel_last'"):
        F.deconvolution(x, w, None, 1, None, (2, 2), None, 1, (1, 1))  # gradhub's old order


def test_channel_last_gradcheck() -> None:
    rng = np.random.default_rng(5)
    gh.testing.gradcheck(
        lambda x, w: F.convolution(x, w, channel_last=True),
        [rng.standard_normal((1, 3, 3, 2)), rng.standard_normal((2, 2, 2, 2))],
    )


@pytest.mark.parametrize(
    ("fn", "name", "ws"),
    [
        (F.convolution, "convolution", (3, 2, 0, 3)),
        (F.convolution, "convolution", (3, 2, 3, 0)),
        (F.convolution, "convolution", (3, 2, 0)),
        (F.deconvolution, "deconvolution", (2, 3, 3, 0)),
    ],
)
def test_weight_with_a_kernel_axis_of_size_0_is_named(
    fn: Callable[..., gh.Variable], name: str, ws: tuple[int, ...]
) -> None:
    """Such a weight reached an internal reshape error about the input."""
    x = gh.Variable(np.ones((1, 2) + (5,) * (len(ws) - 2)))
    shape = str(ws).replace("(", r"\(").replace(")", r"\)")
    with pytest.raises(
        ValueError,
        match=rf"{name}\(\): weight of shape {shape} has a kernel axis of size 0",
    ):
        fn(x, gh.Variable(np.ones(ws)))
