"""Max, average and global average pooling of gradhub-nn-ops: ties, padding, borders, shapes,
float16 accumulation, argument checks and the 2x2 fast paths against the generic ones."""

from __future__ import annotations

import itertools
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest


def _v(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


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


V = gh.Variable


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
        (
            (1, 1, 5, 5),
            {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "ignore_border": False},
            (3, 3),
        ),
        (
            (1, 1, 6, 6),
            {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "ignore_border": False},
            (4, 4),
        ),
        ((1, 1, 7, 4), {"kernel": (3, 2), "stride": (3, 1)}, (2, 3)),
        ((2, 4, 4, 3), {"kernel": (2, 2), "channel_last": True}, (2, 2)),
    ],
)
def test_pooling_output_shapes(shape: tuple[int, ...], kwargs: dict, out: tuple[int, ...]) -> None:
    x = np.zeros(shape)
    for fn in (F.max_pooling, F.average_pooling):
        y = fn(x, **kwargs)
        got = y.shape[1:3] if kwargs.get("channel_last") else y.shape[-2:]
        assert got == out, (fn.__name__, kwargs, y.shape)


def test_max_pooling_ignore_border_false_keeps_the_partial_window() -> None:
    x = _v([[[1.0, 7.0, 3.0, 4.0, 9.0]]])
    np.testing.assert_array_equal(F.max_pooling(x, (2,)).d, [[[7.0, 4.0]]])
    np.testing.assert_array_equal(
        F.max_pooling(x, (2,), ignore_border=False).d, [[[7.0, 4.0, 9.0]]]
    )


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


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pooling_2x2_fast_path_matches_the_references(dtype: type) -> None:
    from gradhub_nn_ops import pooling as P

    x = _tied_pool_input(dtype)
    rng = np.random.default_rng(15)
    dy = rng.standard_normal((2, 3, 3, 4)).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    geo = P.pool_geom("t", x.shape, (2, 2), None, True, None, False)
    assert P._fast2x2(np, geo, x, dy)
    kw = {
        "kernel": (2, 2),
        "stride": None,
        "ignore_border": True,
        "pad": None,
        "channel_last": False,
    }
    y = P._max_pooling(np, x, **kw)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, P._max_pooling_ref(x, **kw))
    dx = P._max_pooling_backward(np, dy, x, **kw)
    assert dx.dtype == dtype
    np.testing.assert_array_equal(dx, P._max_pooling_backward_ref(dy, x, **kw))
    np.testing.assert_array_equal(
        P._max_pooling_fast(np, [dy], [x], [x.shape], [y], [y.shape], **kw)[0], dx
    )
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
    kw = {
        "kernel": (2, 2),
        "stride": None,
        "ignore_border": True,
        "pad": None,
        "channel_last": False,
    }
    y = P._max_pooling(np, x, **kw)
    m = P._max_pooling_mask(np, x, y, **kw)
    assert m.dtype == bool and m.shape == x.shape
    np.testing.assert_array_equal(m, P._max_pooling_mask_ref(x, y, **kw))
    dx = P._masked_unpooling(np, dy, m, **kw)
    assert dx.dtype == dtype
    np.testing.assert_array_equal(dx, P._max_pooling_backward_ref(dy, x, **kw))
    np.testing.assert_array_equal(
        P._masked_pooling(np, g, m, **kw), P._max_pooling_gather_ref(g, x, **kw)
    )


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
                w = xd[idx][i : i + 2, j : j + 2]
                a, b = np.unravel_index(np.argmax(w), w.shape)  # the first maximum
                mask[idx][i + a, j + b] = 1.0
    # gx = 2 y routed to the first maxima = 2 x mask, so d/dx sum(gx^2) = 8 x mask
    np.testing.assert_allclose(gg.d, 8.0 * xd * mask)


def test_overlapping_windows_keep_max_pooling_backward() -> None:
    x = _v(np.arange(9.0).reshape(1, 1, 3, 3))
    y = F.max_pooling(x, (2, 2), stride=(1, 1))
    (gx,) = gh.grad([F.sum(y)], [x], create_graph=True)
    assert gx._creator.fdef.name == "MaxPoolingBackward"
    with pytest.raises(
        ValueError,
        match=r"max_pooling_mask\(\): needs windows that do not "
        r"overlap \(stride >= kernel on every axis\), got kernel "
        r"\(2, 2\) and stride \(1, 1\)",
    ):
        F.max_pooling_mask(x, y, (2, 2), stride=(1, 1))


def test_masked_pooling_functions_check_their_arguments() -> None:
    x = np.zeros((1, 1, 2, 2))
    with pytest.raises(TypeError, match=r"masked_unpooling\(\): mask must be a bool array"):
        F.masked_unpooling(np.zeros((1, 1, 1, 1)), x, (2, 2))
    m = np.zeros((1, 1, 2, 2), dtype=bool)
    with pytest.raises(ValueError, match=r"masked_unpooling\(\): dy has shape \(1, 1, 2, 2\)"):
        F.masked_unpooling(x, m, (2, 2))
    with pytest.raises(
        ValueError,
        match=r"masked_pooling\(\): g has shape \(1, 1, 1, 1\) but "
        r"mask has \(1, 1, 2, 2\)",
    ):
        F.masked_pooling(np.zeros((1, 1, 1, 1)), m, (2, 2))
    with pytest.raises(ValueError, match=r"max_pooling_mask\(\): y has shape \(1, 1, 2, 2\)"):
        F.max_pooling_mask(x, x, (2, 2))


def test_max_pooling_2x2_fast_path_nan_window_routes_to_its_nan_as_the_generic_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gradhub_nn_ops import pooling as P

    x = _tied_pool_input(np.float64)
    x[1, 2, 0, 1] = np.nan
    dy = np.ones((2, 3, 3, 4))
    kw = {"kernel": (2, 2)}
    fast = P._max_pooling_backward(np, dy, x, **kw)
    monkeypatch.setattr(P, "_fast2x2", lambda *a: False)
    np.testing.assert_array_equal(fast, P._max_pooling_backward(np, dy, x, **kw))
    np.testing.assert_array_equal(fast[1, 2, :2, :2], [[0.0, 1.0], [0.0, 0.0]])


def _nan_pool_input(dtype: type, shape: tuple[int, ...] = (2, 2, 6, 6)) -> np.ndarray:
    """Random data with NaNs: windows with one NaN (first, last or middle of the window), with
    two, and NaN next to a larger finite value."""
    rng = np.random.default_rng(20)
    x = rng.standard_normal(shape)
    x[0, 0, 0, 1] = np.nan  # after a finite element of its window
    x[0, 0, 1, 0] = np.nan  # a second NaN in the same 2x2 window
    x[0, 0, 0, 2] = 9.0  # a larger finite value beside it
    x[0, 1, 3, 3] = np.nan  # last element of a 2x2 window
    x[1, 0, 2, 2] = np.nan  # first element
    x[1, 1, 4, 5] = np.nan
    x[1, 1, 5, 4] = np.nan
    return x.astype(dtype)


def _first_argmax(
    x: np.ndarray, out_shape: tuple[int, ...], k: int, s: int, p: int
) -> dict[tuple[int, ...], tuple[int, ...]]:
    """Output index -> input index of numpy's argmax of its 2-d window (padded with -inf): the
    first maximum, or the first NaN."""
    xp_ = np.pad(x, [(0, 0), (0, 0), (p, p), (p, p)], constant_values=-np.inf)
    pos = {}
    for a, b, i, j in itertools.product(*(range(n) for n in out_shape)):
        win = xp_[a, b, i * s : i * s + k, j * s : j * s + k]
        r, q = np.unravel_index(np.argmax(win), win.shape)
        pos[(a, b, i, j)] = (a, b, i * s + r - p, j * s + q - p)
    return pos


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("k", "s", "p"),
    [(2, 2, 0), (3, 3, 0), (3, 1, 0), (2, 1, 1), (3, 2, 1)],
    ids=["2x2-fast", "3x3-tiling", "3x3-overlapping", "2x2-padded-overlapping", "3x3-padded"],
)
def test_max_pooling_gradient_goes_to_the_first_nan_of_a_window(
    dtype: type, k: int, s: int, p: int
) -> None:
    """The mask ``x == y`` gave a window holding NaN (output NaN) a zero gradient everywhere;
    now the element that produced the output, its first NaN as numpy's argmax, gets it."""
    xd = _nan_pool_input(dtype)
    x = gh.Variable(xd)
    y = F.max_pooling(x, (k, k), (s, s), pad=(p, p))
    nan_out = np.isnan(y.d)
    assert nan_out.any()
    rng = np.random.default_rng(21)
    dy = rng.standard_normal(y.shape).astype(dtype)
    dyv = gh.Variable(dy)
    (g,) = gh.grad([y], [x], [dyv], create_graph=True)
    pos = _first_argmax(xd, y.shape, k, s, p)
    expected = np.zeros_like(xd)
    for o, i in pos.items():
        expected[i] += dy[o]
    np.testing.assert_allclose(g.d, expected, rtol=1e-6)
    assert np.isnan(xd[tuple(np.array(list(pos.values()))[nan_out.ravel()].T)]).all()
    # MaxPoolingGather (the adjoint of the gradient, d g / d dy) reads the same elements
    w = rng.standard_normal(xd.shape).astype(dtype)
    (gdy,) = gh.grad([F.sum(g * gh.Variable(w, need_grad=False))], [dyv])
    np.testing.assert_array_equal(gdy.d, np.array([w[i] for i in pos.values()]).reshape(y.shape))


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


def test_average_pooling_float16() -> None:
    x = V(np.ones((1, 1, 256, 256), np.float16))
    y = F.average_pooling(x, kernel=(256, 256))
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y.d, [[[[1.0]]]])
    (g,) = gh.grad([y], [x])
    assert g.dtype == np.float16
    np.testing.assert_allclose(g.d.astype(np.float64), 1 / 65536, rtol=1e-3)
    # overlapping windows and padding against float64
    r = np.random.RandomState(2)
    x16 = (r.rand(1, 2, 9, 9) * 100).astype(np.float16)
    kw = {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}
    y16 = F.average_pooling(V(x16), **kw)
    y64 = F.average_pooling(V(x16.astype(np.float64)), **kw)
    np.testing.assert_allclose(y16.d.astype(np.float64), y64.d, rtol=2e-3)


def test_global_average_pooling_float16() -> None:
    x = V(np.ones((1, 1, 256, 256), np.float16))
    y = F.global_average_pooling(x)
    assert y.dtype == np.float16 and y.shape == (1, 1, 1, 1)
    np.testing.assert_array_equal(y.d, [[[[1.0]]]])
    (g,) = gh.grad([y], [x])
    np.testing.assert_allclose(g.d.astype(np.float64), 1 / 65536, rtol=1e-3)


# -- non-integer pooling settings and axes ----------------------------------------------------


@pytest.mark.parametrize("fn", [F.max_pooling, F.average_pooling])
@pytest.mark.parametrize(
    ("kw", "arg"),
    [
        ({"pad": (1.5, 1.5)}, "pad"),
        ({"stride": (1.7, 1.7)}, "stride"),
        ({"kernel": (2.0, 2)}, "kernel"),
        ({"stride": 1.0}, "stride"),
    ],
)
def test_pooling_rejects_non_integer_settings(fn: Any, kw: dict[str, Any], arg: str) -> None:
    args = {"kernel": (2, 2), **kw}
    with pytest.raises(TypeError, match=rf"{fn.__name__}\(\).*{arg}.*integer"):
        fn(V(np.ones((1, 1, 5, 5))), **args)


def test_pooling_accepts_numpy_integers() -> None:
    x = V(np.ones((1, 1, 5, 5)))
    y = F.max_pooling(x, kernel=np.array([2, 2]), stride=(np.int64(1), 1), pad=np.int32(1))
    assert y.shape == (1, 1, 6, 6)


# -- 2x2 kernels on several threads ------------------------------------------------------------


def _kernels_2x2(x: np.ndarray, dy: np.ndarray, g: np.ndarray) -> list[np.ndarray]:
    """Every 2x2 max-pooling kernel and fast rule of gradhub-nn-ops on one input."""
    from gradhub_nn_ops import pooling as P

    kw = {"kernel": (2, 2), "stride": None, "ignore_border": True, "pad": None}
    kw_all = {**kw, "channel_last": False}
    with np.errstate(invalid="ignore"):  # inf * 0 in the products with the masks
        y = P._max_pooling(np, x, **kw)
        m = P._max_pooling_mask(np, x, y, **kw)
        return [
            y,
            m,
            P._max_pooling_backward(np, dy, x, **kw),
            P._max_pooling_fast(np, [dy], [x], [x.shape], [y], [y.shape], **kw_all)[0],
            P._max_pooling_gather(np, g, x, **kw),
            P._masked_unpooling(np, dy, m, **kw),
            P._masked_pooling(np, g, m, **kw),
        ]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit: values, NaNs and the signs of zeros."""
    return (
        a.dtype == b.dtype
        and a.shape == b.shape
        and np.array_equal(a.view(np.uint8), b.view(np.uint8))
    )


@pytest.fixture(params=[False, True], ids=["numpy", "compiled"])
def compiled(request: pytest.FixtureRequest) -> Any:
    """The 2x2 kernels by numpy, then by gradhub_nn_ops.native (skipped where not built)."""
    from gradhub_nn_ops import native

    before = native.set_enabled(request.param)
    if request.param and not native.available():
        native.set_enabled(before)
        pytest.skip("gradhub_nn_ops._native_kernels is not built")
    yield request.param
    native.set_enabled(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pooling_2x2_kernels_give_the_same_bits_on_one_and_two_threads(
    dtype: type, monkeypatch: pytest.MonkeyPatch, compiled: bool
) -> None:
    """On several threads the 2x2 kernels split their window rows into chunks run by
    gradhub.parallel (on one thread: whole arrays): with small chunks (so that every kernel runs
    several), the results on 1 and 2 threads are the same bits as the generic kernels' (ties,
    NaN windows, non-finite gradients included)."""
    from gradhub.parallel import get_num_threads, set_num_threads
    from gradhub_nn_ops import pooling as P

    rng = np.random.default_rng(31)
    shape = (3, 5, 10, 8)
    x = rng.integers(-2, 3, shape).astype(dtype)  # many tied maxima
    x.ravel()[rng.choice(x.size, 20, replace=False)] = np.nan
    x[0, 0, 0, 0] = -0.0
    dy = rng.standard_normal((3, 5, 5, 4)).astype(dtype)
    dy.ravel()[:3] = [np.inf, np.nan, -np.inf]
    g = rng.standard_normal(shape).astype(dtype)

    counts: list[int] = []
    real = P.parallel_for

    def spy(count: int, body: Any) -> None:
        counts.append(count)
        real(count, body)

    monkeypatch.setattr(P, "parallel_for", spy)
    monkeypatch.setattr(P, "_PARALLEL_BYTES", 1)
    monkeypatch.setattr(P, "_CHUNK_BYTES", 7 * 2 * 8 * x.itemsize)  # 7 window rows a chunk
    # (28 for the compiled kernels)
    before = get_num_threads()
    try:
        set_num_threads(1)
        with monkeypatch.context() as m:
            m.setattr(P, "_KEEP_PATTERN_BYTES", 0)  # the pattern of rows 1 built at each call
            one = _kernels_2x2(x, dy, g)
        set_num_threads(2)
        two = _kernels_2x2(x, dy, g)  # the pattern kept from call to call
    finally:
        set_num_threads(before)
    # 75 window rows in chunks of 7 (compiled: 28)
    assert len(counts) == 7 and all(c == (3 if compiled else 11) for c in counts)
    monkeypatch.setattr(P, "_fast2x2", lambda *a: False)
    generic = _kernels_2x2(x, dy, g)
    for i, (a, b, c) in enumerate(zip(one, two, generic)):
        assert _same(a, b), i
        assert _same(a, c), i


def test_max_pooling_2x2_kernels_on_the_seed_cnn_shape_match_the_generic_ones(
    monkeypatch: pytest.MonkeyPatch, compiled: bool
) -> None:
    """At the seed CNN's first pooling shape (2 MiB of float32, over _PARALLEL_BYTES: run in
    chunks), on a ReLU's output (all-zero windows tie), the same bits as the generic kernels."""
    from gradhub_nn_ops import pooling as P

    rng = np.random.default_rng(32)
    x = np.maximum(rng.standard_normal((64, 8, 32, 32)), 0).astype(np.float32)
    assert x.nbytes >= P._PARALLEL_BYTES
    dy = rng.standard_normal((64, 8, 16, 16)).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    fast = _kernels_2x2(x, dy, g)
    monkeypatch.setattr(P, "_fast2x2", lambda *a: False)
    for i, (a, b) in enumerate(zip(fast, _kernels_2x2(x, dy, g))):
        assert _same(a, b), i


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pooling_2x2_pairwise_mask_matches_the_equality_mask(dtype: type) -> None:
    """Without the maxima (MaxPoolingBackward's and MaxPoolingGather's kernels), the 2x2 mask
    comes from pairwise comparisons: the same mask as ``x == y`` tie-broken in window order on
    ties in a pair, across the rows, between signed zeros and infinities; a window holding NaN
    leaves it to the equality mask."""
    from gradhub_nn_ops import pooling as P

    rng = np.random.default_rng(33)
    for shape in [(3, 5, 10, 8), (2, 3, 4, 2), (1, 1, 2, 2)]:
        x = rng.integers(-2, 3, shape).astype(dtype)
        flat = x.reshape(-1)
        flat[: min(8, flat.size)] = [-0.0, 0.0, 0.0, -0.0, np.inf, -np.inf, np.inf, -0.0][
            : min(8, flat.size)
        ]
        x3 = x.reshape(-1, 2, shape[-1])
        r, _, w = x3.shape
        y2 = P._max_pooling(np, x, kernel=(2, 2)).reshape(r, w // 2)
        want = np.empty(x3.shape, bool)
        P._mask2x2_rows(x3, y2, want, P._second_rows(r, w // 2))
        got = np.zeros(x3.shape, bool)
        assert P._pairwise_mask_rows(x3, got)
        np.testing.assert_array_equal(got, want)
        assert (got.reshape(r, 2, w // 2, 2).sum(axis=(1, 3)) == 1).all()  # one per window
        x.reshape(-1)[-1] = np.nan
        assert not P._pairwise_mask_rows(x.reshape(x3.shape), got)
