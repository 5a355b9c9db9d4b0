"""Special cases of the convolution, pooling and normalization functions of gradhub-nn-ops.

The op matrix checks every function against its numpy reference and gradcheck; these tests cover
what it cannot express: max-pooling ties, nnabla's ignore_border/including_pad arithmetic on
hand-computed values, the running statistics of batch normalization, the adjoint identities of the
convolution family, double backward through a small CNN, error messages, and (when PyTorch is
installed) agreement with PyTorch's kernels.
"""

from __future__ import annotations

import itertools

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck


def _v(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


# -- max pooling: ties and sub-gradients -------------------------------------------------------


def test_max_pooling_ties_go_to_the_first_element_of_the_window() -> None:
    x = _v(np.ones((1, 1, 4, 4)))
    y = F.max_pooling(x, (2, 2))
    y.backward(np.arange(1.0, 5.0).reshape(1, 1, 2, 2))
    expected = np.array([[1, 0, 2, 0], [0, 0, 0, 0], [3, 0, 4, 0], [0, 0, 0, 0]], dtype=float)
    np.testing.assert_array_equal(x.g[0, 0], expected)


def test_max_pooling_partial_ties_pick_the_first_maximum_in_row_major_order() -> None:
    # window values: [[1, 5], [5, 2]] -> the maximum 5 appears at (0, 1) and (1, 0)
    x = _v([[[[1.0, 5.0], [5.0, 2.0]]]])
    F.max_pooling(x, (2, 2)).backward()
    np.testing.assert_array_equal(x.g[0, 0], [[0.0, 1.0], [0.0, 0.0]])


def test_max_pooling_overlapping_windows_accumulate() -> None:
    # stride 1: the centre element is the maximum of all four 2x2 windows
    x = _v([[[[0.0, 0.0, 0.0], [0.0, 9.0, 0.0], [0.0, 0.0, 0.0]]]])
    F.max_pooling(x, (2, 2), stride=(1, 1)).backward()
    expected = np.zeros((3, 3))
    expected[1, 1] = 4.0
    np.testing.assert_array_equal(x.g[0, 0], expected)


def test_max_pooling_double_backward_with_ties_is_consistent() -> None:
    # d/dgy of <gg, MaxPoolingBackward(gy, x)> gathers gg at the same first-maximum positions
    x = _v(np.ones((1, 1, 2, 4)), need_grad=False)
    gy = _v(np.ones((1, 1, 1, 2)))
    dx = F.max_pooling_backward(gy, x, (2, 2))
    np.testing.assert_array_equal(dx.d[0, 0], [[1, 0, 1, 0], [0, 0, 0, 0]])
    gg = np.arange(8.0).reshape(1, 1, 2, 4)
    (g,) = gh.grad([dx], [gy], grad_outputs=[gg])
    np.testing.assert_array_equal(g.d[0, 0, 0], [0.0, 2.0])


def test_max_pooling_padding_is_never_the_maximum() -> None:
    x = _v(-np.ones((1, 1, 2, 2)) * 5.0)
    y = F.max_pooling(x, (2, 2), stride=(1, 1), pad=(1, 1))
    assert y.shape == (1, 1, 3, 3)
    np.testing.assert_array_equal(y.d, -5.0 * np.ones((1, 1, 3, 3)))


# -- pooling shapes and values (nnabla's formulas) ---------------------------------------------


@pytest.mark.parametrize(
    ("shape", "kwargs", "out"),
    [
        ((1, 1, 5, 5), {"kernel": (2, 2)}, (2, 2)),
        ((1, 1, 5, 5), {"kernel": (2, 2), "ignore_border": False}, (3, 3)),
        ((1, 1, 5, 5), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}, (3, 3)),
        # nnabla: (5 + 1 - 1) // 2 + 1 = 3 (only one pad counts when ignore_border=False)
        ((1, 1, 5, 5), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1),
                        "ignore_border": False}, (3, 3)),
        ((1, 1, 6, 6), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1),
                        "ignore_border": False}, (4, 4)),
        ((1, 1, 7, 4), {"kernel": (3, 2), "stride": (3, 1)}, (2, 3)),
        ((2, 4, 4, 3), {"kernel": (2, 2), "channel_last": True}, (2, 2)),
    ],
)
def test_pooling_output_shapes(shape: tuple[int, ...], kwargs: dict, out: tuple[int, ...]
                               ) -> None:
    x = np.zeros(shape)
    for fn in (F.max_pooling, F.average_pooling):
        y = fn(x, **kwargs)
        got = y.shape[1:3] if kwargs.get("channel_last") else y.shape[-2:]
        assert got == out, (fn.__name__, kwargs, y.shape)


def test_max_pooling_ignore_border_false_keeps_the_partial_window() -> None:
    x = _v([[[1.0, 7.0, 3.0, 4.0, 9.0]]])
    np.testing.assert_array_equal(F.max_pooling(x, (2,)).d, [[[7.0, 4.0]]])
    np.testing.assert_array_equal(F.max_pooling(x, (2,), ignore_border=False).d,
                                  [[[7.0, 4.0, 9.0]]])


def test_average_pooling_including_pad_by_hand() -> None:
    x = _v(np.arange(1.0, 10.0).reshape(1, 1, 3, 3))
    # 2x2 windows, stride 2, pad 1: window (0, 0) holds only x[0, 0] = 1 plus three pads
    inc = F.average_pooling(x, (2, 2), pad=(1, 1), including_pad=True).d[0, 0]
    exc = F.average_pooling(x, (2, 2), pad=(1, 1), including_pad=False).d[0, 0]
    np.testing.assert_allclose(inc, [[1 / 4, (2 + 3) / 4], [(4 + 7) / 4, (5 + 6 + 8 + 9) / 4]])
    np.testing.assert_allclose(exc, [[1.0, 2.5], [5.5, 7.0]])


def test_average_pooling_ignore_border_false_divides_by_the_truncated_window() -> None:
    # nnabla: the last window ends at L + pad, so with pad 0 it holds one element only
    x = _v([[[2.0, 4.0, 6.0]]])
    y = F.average_pooling(x, (2,), ignore_border=False)
    np.testing.assert_allclose(y.d, [[[3.0, 6.0]]])
    y.backward()
    np.testing.assert_allclose(x.g, [[[0.5, 0.5, 1.0]]])


def test_global_average_pooling_shape_and_gradient() -> None:
    x = _v(np.arange(24.0).reshape(2, 3, 2, 2))
    y = F.global_average_pooling(x)
    assert y.shape == (2, 3, 1, 1)
    np.testing.assert_allclose(y.d[:, :, 0, 0], x.d.mean(axis=(2, 3)))
    y.backward()
    np.testing.assert_allclose(x.g, np.full((2, 3, 2, 2), 0.25))


# -- batch normalization: running statistics ---------------------------------------------------


def _bn_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    x = rng.standard_normal((5, 3, 2)).astype(np.float32)
    beta = rng.standard_normal((1, 3, 1)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, (1, 3, 1)).astype(np.float32)
    mean = np.zeros((1, 3, 1), np.float32)
    var = np.ones((1, 3, 1), np.float32)
    return x, beta, gamma, mean, var


def test_batch_normalization_updates_running_statistics_in_place() -> None:
    x, beta, gamma, mean, var = _bn_inputs(np.random.default_rng(0))
    rm = gh.Variable(mean, need_grad=False)
    rv = gh.Variable(var, need_grad=False)
    arr_m, arr_v = rm.d, rv.d
    y = F.batch_normalization(x, beta, gamma, rm, rv, decay_rate=0.8)
    bm = x.mean(axis=(0, 2), keepdims=True)
    bv = x.var(axis=(0, 2), keepdims=True)
    n = 10
    np.testing.assert_allclose(rm.d, 0.2 * bm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.d, 0.8 + 0.2 * bv * n / (n - 1), rtol=1e-5)
    assert rm.d is arr_m and rv.d is arr_v  # updated in place
    np.testing.assert_allclose(y.d, (x - bm) / np.sqrt(bv + 1e-5) * gamma + beta,
                               rtol=1e-4, atol=1e-5)
    # re-executing the graph (nnabla's static style) updates the statistics again
    y.forward()
    np.testing.assert_allclose(rm.d, 0.8 * 0.2 * bm + 0.2 * bm, rtol=1e-5, atol=1e-6)


def test_batch_normalization_inference_uses_running_statistics() -> None:
    x, beta, gamma, _, _ = _bn_inputs(np.random.default_rng(1))
    mean = np.full((1, 3, 1), 0.5, np.float32)
    var = np.full((1, 3, 1), 4.0, np.float32)
    before = (mean.copy(), var.copy())
    y = F.batch_normalization(x, beta, gamma, mean, var, batch_stat=False)
    np.testing.assert_allclose(y.d, (x - 0.5) / np.sqrt(4.0 + 1e-5) * gamma + beta, rtol=1e-5)
    np.testing.assert_array_equal(mean, before[0])
    np.testing.assert_array_equal(var, before[1])


def test_batch_normalization_training_gradient_ignores_running_statistics() -> None:
    x, beta, gamma, mean, var = (a.astype(np.float64) for a in
                                 _bn_inputs(np.random.default_rng(2)))
    xs = _v(x)
    rm, rv = _v(mean), _v(var)
    y = F.batch_normalization(xs, _v(beta), _v(gamma), rm, rv)
    gx, gm, gv = gh.grad([y], [xs, rm, rv], unreachable="zero")
    # the normalized output sums to beta per channel whatever x is: its x-gradient sums to 0
    np.testing.assert_allclose(gx.d.sum(axis=(0, 2)), 0.0, atol=1e-10)
    np.testing.assert_array_equal(gm.d, 0.0)
    np.testing.assert_array_equal(gv.d, 0.0)


def test_batch_normalization_read_only_running_mean_is_a_clear_error() -> None:
    x, beta, gamma, mean, var = _bn_inputs(np.random.default_rng(3))
    mean.flags.writeable = False
    with pytest.raises(ValueError, match=r"batch_normalization.*running mean.*read-only"):
        F.batch_normalization(x, beta, gamma, mean, var)


def test_batch_normalization_wrong_parameter_shape_names_it() -> None:
    x, beta, gamma, mean, var = _bn_inputs(np.random.default_rng(4))
    with pytest.raises(ValueError, match=r"batch_normalization.*gamma must have shape"):
        F.batch_normalization(x, beta, gamma.reshape(3), mean, var)


def test_layer_normalization_statistics() -> None:
    x = np.random.default_rng(5).standard_normal((3, 4, 2))
    y, mu, var = F.layer_normalization(_v(x), output_stat=True)
    np.testing.assert_allclose(mu.d[:, 0, 0], x.reshape(3, -1).mean(axis=1))
    np.testing.assert_allclose(var.d[:, 0, 0], x.reshape(3, -1).var(axis=1))
    np.testing.assert_allclose(y.d.reshape(3, -1).mean(axis=1), 0.0, atol=1e-12)


# -- convolution family ------------------------------------------------------------------------


def _conv_ref(x: np.ndarray, w: np.ndarray, pad: tuple, stride: tuple, dilation: tuple,
              group: int) -> np.ndarray:
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
    np.testing.assert_allclose(y.d, _conv_ref(x, w, pad, stride, dilation, group), rtol=1e-10,
                               atol=1e-12)


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
    xt = F.deconvolution(u, w, pad=pad, stride=stride, dilation=dilation, group=group,
                         output_padding=op).d
    assert xt.shape == x.shape
    np.testing.assert_allclose(np.sum(y * u), np.sum(x * xt), rtol=1e-10)
    # and the filter gradient is the adjoint w.r.t. the weight: <conv(x, W), u> == <W, FG(x, u)>
    fg = F.convolution_filter_grad(x, u, kernel=ws[2:], pad=pad, stride=stride,
                                   dilation=dilation, group=group).d
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


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: F.convolution(np.zeros((1, 3, 4, 4)), np.zeros((2, 2, 3, 3))),
         r"convolution\(\): x has 3 channels"),
        (lambda: F.convolution(np.zeros((1, 2, 4, 4)), np.zeros((2, 2, 3, 3)), pad=(1, 1, 1)),
         r"convolution\(\): pad has 3 entries"),
        (lambda: F.convolution(np.zeros((1, 2, 4, 4)), np.zeros((2, 2, 3, 3)),
                               np.zeros(3)), r"convolution\(\): bias must have shape \(2,\)"),
        (lambda: F.convolution(np.zeros((1, 2, 2, 2)), np.zeros((2, 2, 3, 3))),
         r"convolution\(\): the input's spatial shape"),
        (lambda: F.convolution(np.zeros((1, 2, 4, 4)), np.zeros((2, 2, 3, 3)), stride=0),
         r"convolution\(\): every entry of stride"),
        (lambda: F.convolution(np.zeros((2, 4, 4)), np.zeros((2, 2, 3, 3))),
         r"convolution\(\): x of shape \(2, 4, 4\) with base_axis=1"),
        (lambda: F.deconvolution(np.zeros((1, 2, 3, 3)), np.zeros((2, 2, 3, 3)),
                                 stride=(2, 2), output_padding=(2, 0)),
         r"deconvolution\(\): output_padding"),
        (lambda: F.max_pooling(np.zeros((1, 1, 4, 4)), (2, 2), pad=(2, 0)),
         r"max_pooling\(\): pad"),
        (lambda: F.average_pooling(np.zeros((1, 1, 1, 4)), (2, 2)),
         r"average_pooling\(\): kernel"),
        (lambda: F.max_pooling(np.zeros((4,)), (2, 2)), r"max_pooling\(\): x of shape"),
        (lambda: F.layer_normalization(np.zeros((2, 3)), batch_axis=2),
         r"layer_normalization\(\): batch_axis"),
    ],
)
def test_bad_arguments_name_the_function_and_argument(call: object, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        call()  # type: ignore[operator]


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
        ref = tf.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), stride=stride,
                        padding=pad, dilation=dil, groups=2).numpy()
        np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)
        u = rng.standard_normal(ours.shape)
        wt = rng.standard_normal((6, 3, 3, 2))
        out = F.deconvolution(u, wt, pad=pad, stride=stride, dilation=dil, group=2).d
        ref = tf.conv_transpose2d(torch.tensor(u), torch.tensor(wt), stride=stride, padding=pad,
                                  dilation=dil, groups=2).numpy()
        np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)
    xp = rng.standard_normal((2, 3, 7, 8))
    ours = F.max_pooling(xp, (3, 2), stride=(2, 2), pad=(1, 1)).d
    ref = tf.max_pool2d(torch.tensor(xp), (3, 2), stride=(2, 2), padding=(1, 1)).numpy()
    np.testing.assert_array_equal(ours, ref)
    ours = F.average_pooling(xp, (3, 2), stride=(2, 2), pad=(1, 1), including_pad=False).d
    ref = tf.avg_pool2d(torch.tensor(xp), (3, 2), stride=(2, 2), padding=(1, 1),
                        count_include_pad=False).numpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-12)


# -- CPU blocking and scratch buffers ----------------------------------------------------------


@pytest.mark.parametrize("cfg", _CONV_CONFIGS)
def test_kernels_processed_one_sample_per_block(cfg: tuple, monkeypatch: pytest.MonkeyPatch
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
    np.testing.assert_allclose(y, _conv_ref(x, w, pad, stride, dilation, group), rtol=1e-10,
                               atol=1e-12)
    u = rng.standard_normal(y.shape)
    np.testing.assert_allclose(F.convolution_filter_grad(x, u, kernel=ws[2:], **kw).d,
                               _convolution_filter_grad_ref(x, u, ws[2:], 1, **kw), rtol=1e-10,
                               atol=1e-12)
    wt = rng.standard_normal((xs[1], ws[0] // group, *ws[2:]))
    np.testing.assert_allclose(F.deconvolution(x, wt, **kw).d,
                               _deconvolution_ref(x, wt, None, 1, **kw), rtol=1e-10, atol=1e-12)


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
    for fn, weight, kw in ((F.convolution, w, {"pad": 1}), (F.deconvolution, wt, {}),
                           (F.deconvolution, wt, {"pad": last_pad})):
        first = fn(x1, weight, **kw).d
        kept = first.copy()
        fn(x2, weight, **kw)
        np.testing.assert_array_equal(first, kept)


@pytest.mark.parametrize("cfg", _CONV_CONFIGS)
def test_gemms_cut_into_single_threaded_pieces(cfg: tuple, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
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
    np.testing.assert_allclose(F.convolution_filter_grad(x, u, kernel=ws[2:], **kw).d,
                               _convolution_filter_grad_ref(x, u, ws[2:], 1, **kw), rtol=1e-10,
                               atol=1e-12)
    wt = rng.standard_normal((xs[1], ws[0] // group, *ws[2:]))
    np.testing.assert_allclose(F.deconvolution(x, wt, **kw).d,
                               _deconvolution_ref(x, wt, None, 1, **kw), rtol=1e-10, atol=1e-12)


# -- 2x2 max pooling fast path (kernel == stride == 2, exact tiling, float32/float64) ----------


def _tied_pool_input(dtype: type) -> np.ndarray:
    """relu-like data: many all-zero windows, plus hand-made partial ties in every position."""
    rng = np.random.default_rng(14)
    x = np.maximum(rng.standard_normal((2, 3, 6, 8)), 0.0)
    x[0, 0, :2, :2] = [[1.0, 1.0], [1.0, 1.0]]  # all four tie
    x[0, 0, :2, 2:4] = [[0.5, 2.0], [2.0, 2.0]]  # (0, 1) first
    x[0, 0, :2, 4:6] = [[0.5, 0.1], [2.0, 2.0]]  # (1, 0) first
    x[0, 0, :2, 6:8] = [[0.5, 0.1], [0.2, 2.0]]  # (1, 1) only
    x[0, 1, 2:4, :2] = [[-1.0, -3.0], [-1.0, -2.0]]  # negative tie across rows
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pooling_2x2_fast_path_matches_the_references(dtype: type) -> None:
    from gradhub_nn_ops import pooling as P

    x = _tied_pool_input(dtype)
    rng = np.random.default_rng(15)
    dy = rng.standard_normal((2, 3, 3, 4)).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    geo = P.pool_geom("t", x.shape, (2, 2), None, True, None, False)
    assert P._fast2x2(np, geo, x, dy)
    kw = {"kernel": (2, 2), "stride": None, "ignore_border": True, "pad": None,
          "channel_last": False}
    y = P._max_pooling(np, x, **kw)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, P._max_pooling_ref(x, **kw))
    dx = P._max_pooling_backward(np, dy, x, **kw)
    assert dx.dtype == dtype
    np.testing.assert_array_equal(dx, P._max_pooling_backward_ref(dy, x, **kw))
    np.testing.assert_array_equal(P._max_pooling_fast(np, [dy], [x], [x.shape], [y], [y.shape],
                                                      **kw)[0], dx)
    gy = P._max_pooling_gather(np, g, x, **kw)
    np.testing.assert_array_equal(gy, P._max_pooling_gather_ref(g, x, **kw))
    # a non-contiguous input takes the same path
    xt = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    np.testing.assert_array_equal(P._max_pooling_backward(np, dy, xt, **kw), dx)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pooling_mask_2x2_fast_path_matches_the_references(dtype: type) -> None:
    from gradhub_nn_ops import pooling as P

    x = _tied_pool_input(dtype)
    rng = np.random.default_rng(17)
    dy = rng.standard_normal((2, 3, 3, 4)).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    kw = {"kernel": (2, 2), "stride": None, "ignore_border": True, "pad": None,
          "channel_last": False}
    y = P._max_pooling(np, x, **kw)
    m = P._max_pooling_mask(np, x, y, **kw)
    assert m.dtype == bool and m.shape == x.shape
    np.testing.assert_array_equal(m, P._max_pooling_mask_ref(x, y, **kw))
    dx = P._masked_unpooling(np, dy, m, **kw)
    assert dx.dtype == dtype
    np.testing.assert_array_equal(dx, P._max_pooling_backward_ref(dy, x, **kw))
    np.testing.assert_array_equal(P._masked_pooling(np, g, m, **kw),
                                  P._max_pooling_gather_ref(g, x, **kw))


def test_max_pooling_double_backward_reuses_one_mask_per_layer() -> None:
    # the create_graph rule of MaxPooling (windows that do not overlap) records MaxPoolingMask
    # once; the second derivative gathers with that mask instead of finding the maxima again
    from gradhub.engine import _collect

    x = _v(_tied_pool_input(np.float64))
    y = F.max_pooling(x * 1.0, (2, 2))
    (gx,) = gh.grad([F.sum(y * y)], [x], create_graph=True)
    names = [n.fdef.name for n in _collect([gx._creator], only_need_grad=False)]
    assert names.count("MaxPoolingMask") == 1 and "MaskedUnpooling" in names
    assert "MaxPoolingBackward" not in names
    (gg,) = gh.grad([F.sum(gx * gx)], [x])
    xd = x.d
    mask = np.zeros_like(xd)
    for idx in itertools.product(*(range(k) for k in xd.shape[:2])):
        for i in range(0, xd.shape[2], 2):
            for j in range(0, xd.shape[3], 2):
                w = xd[idx][i:i + 2, j:j + 2]
                a, b = np.unravel_index(np.argmax(w), w.shape)  # the first maximum
                mask[idx][i + a, j + b] = 1.0
    # gx = 2 y routed to the first maxima = 2 x mask, so d/dx sum(gx^2) = 8 x mask
    np.testing.assert_allclose(gg.d, 8.0 * xd * mask)


def test_overlapping_windows_keep_max_pooling_backward() -> None:
    x = _v(np.arange(9.0).reshape(1, 1, 3, 3))
    y = F.max_pooling(x, (2, 2), stride=(1, 1))
    (gx,) = gh.grad([F.sum(y)], [x], create_graph=True)
    assert gx._creator.fdef.name == "MaxPoolingBackward"
    with pytest.raises(ValueError, match=r"max_pooling_mask\(\): needs windows that do not "
                                         r"overlap \(stride >= kernel on every axis\), got kernel "
                                         r"\(2, 2\) and stride \(1, 1\)"):
        F.max_pooling_mask(x, y, (2, 2), stride=(1, 1))


def test_masked_pooling_functions_check_their_arguments() -> None:
    x = np.zeros((1, 1, 2, 2))
    with pytest.raises(TypeError, match=r"masked_unpooling\(\): mask must be a bool array"):
        F.masked_unpooling(np.zeros((1, 1, 1, 1)), x, (2, 2))
    m = np.zeros((1, 1, 2, 2), dtype=bool)
    with pytest.raises(ValueError, match=r"masked_unpooling\(\): dy has shape \(1, 1, 2, 2\)"):
        F.masked_unpooling(x, m, (2, 2))
    with pytest.raises(ValueError, match=r"masked_pooling\(\): g has shape \(1, 1, 1, 1\) but "
                                         r"mask has \(1, 1, 2, 2\)"):
        F.masked_pooling(np.zeros((1, 1, 1, 1)), m, (2, 2))
    with pytest.raises(ValueError, match=r"max_pooling_mask\(\): y has shape \(1, 1, 2, 2\)"):
        F.max_pooling_mask(x, x, (2, 2))


def test_max_pooling_2x2_fast_path_nan_window_gets_no_gradient_as_the_generic_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from gradhub_nn_ops import pooling as P

    x = _tied_pool_input(np.float64)
    x[1, 2, 0, 0] = np.nan
    dy = np.ones((2, 3, 3, 4))
    kw = {"kernel": (2, 2)}
    fast = P._max_pooling_backward(np, dy, x, **kw)
    monkeypatch.setattr(P, "_fast2x2", lambda *a: False)
    np.testing.assert_array_equal(fast, P._max_pooling_backward(np, dy, x, **kw))
    assert not fast[1, 2, :2, :2].any()


def test_max_pooling_2x2_double_backward_float32_matches_float64() -> None:
    x64 = _tied_pool_input(np.float64)
    rng = np.random.default_rng(16)
    w64 = rng.standard_normal((2, 3, 3, 4))
    out = []
    for dt in (np.float32, np.float64):
        x = gh.Variable(x64.astype(dt))
        w = gh.Variable(w64.astype(dt))
        loss = F.sum(F.max_pooling(x * x, (2, 2)) * w)
        gx, gw = gh.grad([loss], [x, w], create_graph=True)
        total = loss + F.sum(gx * gx) + F.sum(gw * gw)
        out.append([v.d for v in gh.grad([total], [x, w])])
    for a, b in zip(*out):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("group", [1, 2])
def test_stride1_filter_grad_without_columns_matches_the_reference(
        group: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stride 1: the filter gradient multiplies dy with shifted views of the flat padded input
    (no column matrix); several blocks and GEMM pieces, float32 against the float64 loops."""
    from gradhub_nn_ops import conv
    from gradhub_nn_ops.conv import _convolution_filter_grad_ref

    monkeypatch.setattr(conv, "_BLOCK_BYTES", 4096)
    monkeypatch.setattr(conv, "_GEMM_ST", 64)
    rng = np.random.default_rng(18)
    x = rng.standard_normal((5, 4, 9, 7))
    dy = rng.standard_normal((5, 6, 9, 5))
    kw = {"pad": (1, 0), "dilation": (1, 1), "group": group}
    ref = _convolution_filter_grad_ref(x, dy, (3, 3), 1, **kw)
    out = conv._convolution_filter_grad(np, x.astype(np.float32), dy.astype(np.float32),
                                        (3, 3), **kw)
    assert out.dtype == np.float32 and out.shape == (6, 4 // group, 3, 3)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(conv._convolution_filter_grad(np, x, dy, (3, 3), **kw), ref,
                               rtol=1e-10, atol=1e-10)
