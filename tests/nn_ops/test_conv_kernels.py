"""The numpy CPU kernels of the convolution family (gradhub_nn_ops.conv; the compiled kernels are
turned off here, see test_native.py): the same results for one and two threads (bit for bit, the
compiled kernels too), the deconvolution's choice between a gather (a convolution with the
flipped weight) and a scatter of products, both against the naive loops, the columns of a 1x1
kernel taken from x itself, and the first-order rules of Convolution and Deconvolution building
one set of columns for their two products."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub_nn_ops import conv, native
from gradhub_nn_ops.conv import (
    _convolution_filter_grad_ref,
    _convolution_ref,
    _deconvolution_ref,
)


@pytest.fixture(autouse=True)
def numpy_kernels() -> Iterator[None]:
    before = native.set_enabled(False)
    yield
    native.set_enabled(before)


@pytest.fixture
def threads() -> Iterator[Callable[[int], None]]:
    before = gh.get_num_threads()
    yield gh.set_num_threads
    gh.set_num_threads(before)


def _w3_kernels(dtype: Any) -> list[tuple[str, Callable[[], Any]]]:
    """Every kernel on the W3/W4 shapes (batch 64, 3x3, pad 1): forward with bias, filter
    gradient, deconvolution by gather and by scatter, Deconvolution's fused backward."""
    rng = np.random.default_rng(21)
    calls: list[tuple[str, Callable[[], Any]]] = []
    for xs, ws in (((64, 3, 32, 32), (8, 3, 3, 3)), ((64, 8, 16, 16), (16, 8, 3, 3))):
        x = rng.standard_normal(xs).astype(dtype)
        w = rng.standard_normal(ws).astype(dtype)
        b = rng.standard_normal(ws[0]).astype(dtype)
        dy = rng.standard_normal((xs[0], ws[0], *xs[2:])).astype(dtype)
        geo = conv.conv_geom("deconvolution", dy.shape, w.shape, 1, 1, 1, 1, 1)
        calls += [
            (f"fw {xs}", lambda x=x, w=w, b=b: conv._convolution(np, x, w, b, pad=1)),
            (
                f"dw {xs}",
                lambda x=x, dy=dy: conv._convolution_filter_grad(np, x, dy, (3, 3), pad=1),
            ),
            (f"dx {xs}", lambda dy=dy, w=w: conv._deconvolution(np, dy, w, pad=1)),
            (
                f"deconv bw {xs}",
                lambda x=x, w=w, dy=dy, g=geo: conv._conv_and_filter_grad(np, x, w, dy, g),
            ),
        ]
        if xs[1] == 8:  # the second layer: Convolution's two gradients from gy's columns
            cgeo = conv.conv_geom("convolution", xs, ws, 1, 1, 1, 1, 1)
            calls.append(
                (
                    f"conv bw {xs}",
                    lambda x=x, w=w, dy=dy, g=cgeo: conv._data_and_filter_grads(np, dy, w, x, g),
                )
            )
    return calls


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_w3_kernels_identical_for_one_and_two_threads(
    dtype: Any, compiled: bool, threads: Callable[[int], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    native.set_enabled(compiled)
    if compiled and not native.available():
        pytest.skip("gradhub_nn_ops._conv_native is not built")
    loops: list[int] = []
    real = conv.parallel_for

    def counting(count: int, body: Callable[[int], object]) -> None:
        loops.append(count)
        real(count, body)

    monkeypatch.setattr(conv, "parallel_for", counting)
    for name, call in _w3_kernels(dtype):
        threads(1)
        one = call()
        threads(2)
        loops.clear()
        two = call()
        assert loops and min(loops) > 1, name  # the batch ran as several chunks
        for a, b in zip(
            one if isinstance(one, tuple) else (one,), two if isinstance(two, tuple) else (two,)
        ):
            np.testing.assert_array_equal(a, b, err_msg=name)


def test_many_small_chunks_identical_for_one_and_two_threads(
    threads: Callable[[int], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One sample per chunk (partial filter-gradient sums of 7 chunks), groups, strides."""
    monkeypatch.setattr(conv, "_BLOCK_BYTES", 1)
    rng = np.random.default_rng(22)
    x = rng.standard_normal((7, 4, 9, 8))
    w = rng.standard_normal((6, 2, 3, 2))
    kw = {"pad": (1, 0), "stride": (2, 1), "dilation": (1, 2), "group": 2}
    y = conv._convolution(np, x, w, **kw)
    u = rng.standard_normal(y.shape)
    results = []
    for n in (1, 2):
        threads(n)
        results.append(
            (
                conv._convolution(np, x, w, **kw),
                conv._convolution_filter_grad(np, x, u, (3, 2), **kw),
                conv._deconvolution(np, u, w, **kw),
            )
        )
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(
        results[0][1], _convolution_filter_grad_ref(x, u, (3, 2), 1, **kw), rtol=1e-10, atol=1e-12
    )


# -- deconvolution: gather or scatter ----------------------------------------------------------


def _geo(ws: tuple, pad: Any = 1, stride: Any = 1, dilation: Any = 1, group: int = 1) -> Any:
    return conv.conv_geom("deconvolution", (1, ws[0], 8, 8), ws, 1, pad, stride, dilation, group)


@pytest.mark.parametrize(
    ("ws", "attrs", "gathers"),
    [
        ((16, 8, 3, 3), {}, True),  # W3's conv2 data gradient: Cin 16 -> Cout 8
        ((8, 3, 3, 3), {}, False),  # W3's conv1 data gradient: Cin 8 -> Cout 3 (ratio 2.67)
        ((16, 16, 3, 3), {}, True),
        ((8, 8, 3, 3), {"stride": 2}, False),  # stride 2: scatter only
        ((4, 4, 2, 2), {"pad": 2}, False),  # pad past dilation * (kernel - 1)
        ((4, 1, 3, 3), {"group": 2}, True),  # per group: 2 inputs, 1 output
    ],
)
def test_deconvolution_choice_on_measured_shapes(ws: tuple, attrs: dict, gathers: bool) -> None:
    geo = _geo(ws, **attrs)
    cig = ws[0] // geo.group
    assert conv._deconv_gathers(cig, ws[1], geo, ws[2:], (0, 0), np, np.float64) is gathers
    assert not conv._deconv_gathers(
        cig, ws[1], geo, ws[2:], (1, 0), np, np.float64
    )  # output_padding


_DECONV_CFGS = [
    # x shape, w shape, attrs
    ((2, 3, 5, 4), (3, 2, 3, 3), {"pad": 1}),
    ((2, 4, 5, 6), (4, 3, 3, 2), {"pad": (2, 0), "dilation": (1, 2), "group": 2}),
    ((1, 2, 6), (2, 3, 3), {"pad": 0, "dilation": 3}),
    ((1, 2, 3, 3, 4), (2, 1, 2, 2, 3), {"pad": (1, 0, 2)}),
]


@pytest.mark.parametrize("cfg", _DECONV_CFGS)
@pytest.mark.parametrize("ratio", [0.0, 1e9])  # scatter every time, gather where allowed
def test_deconvolution_by_gather_and_by_scatter_match_the_loops(
    cfg: tuple, ratio: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    xs, ws, attrs = cfg
    monkeypatch.setattr(conv, "_GATHER_RATIO", ratio)
    geo = conv.conv_geom(
        "deconvolution",
        xs,
        ws,
        1,
        attrs.get("pad"),
        attrs.get("stride"),
        attrs.get("dilation"),
        attrs.get("group", 1),
    )
    assert conv._deconv_gathers(
        ws[0] // geo.group, ws[1], geo, ws[2:], (0,) * geo.nd, np, np.float64
    ) is (ratio > 1)
    rng = np.random.default_rng(23)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    np.testing.assert_allclose(
        conv._deconvolution(np, x, w, **attrs),
        _deconvolution_ref(x, w, None, 1, **attrs),
        rtol=1e-10,
        atol=1e-12,
    )


def test_one_by_one_kernel_uses_x_as_its_columns() -> None:
    rng = np.random.default_rng(24)
    x = rng.standard_normal((3, 4, 5, 2))
    cols = conv._columns(np, x, (1, 1), (5, 2), (0, 0), (1, 1), (1, 1), x.dtype)
    assert np.shares_memory(cols, x)  # no copy
    w = rng.standard_normal((2, 4, 1, 1))
    np.testing.assert_allclose(
        conv._convolution(np, x, w), _convolution_ref(x, w), rtol=1e-12, atol=1e-12
    )
    xt = x.transpose(0, 1, 3, 2)  # not contiguous: copied into the columns
    assert not np.shares_memory(
        conv._columns(np, xt, (1, 1), (2, 5), (0, 0), (1, 1), (1, 1), x.dtype), x
    )
    np.testing.assert_allclose(
        conv._convolution(np, xt, w), _convolution_ref(xt, w), rtol=1e-12, atol=1e-12
    )


def _spy(monkeypatch: pytest.MonkeyPatch, name: str) -> list[bool]:
    """Replace ``conv.<name>`` by a wrapper; the list records, per call, whether it gave a result
    (None: the caller falls back to the separate kernels)."""
    calls: list[bool] = []
    real = getattr(conv, name)

    def spy(*args: Any) -> Any:
        out = real(*args)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(conv, name, spy)
    return calls


# -- Deconvolution's first-order rule: one set of columns for both products ----------------------


@pytest.mark.parametrize(
    "attrs", [{"pad": 1}, {"stride": 2, "output_padding": 1}, {"dilation": 2, "group": 2}]
)
def test_deconvolution_rule_shares_columns_and_equals_the_two_kernels(
    attrs: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conv, "_BLOCK_BYTES", 1)  # several chunks
    rng = np.random.default_rng(25)
    x = gh.Variable(rng.standard_normal((3, 4, 4, 5)))
    w = gh.Variable(rng.standard_normal((4, 3, 3, 3)))
    import gradhub.functions as F

    y = F.deconvolution(x, w, **attrs)
    seed = rng.standard_normal(y.shape)
    calls = _spy(monkeypatch, "_conv_and_filter_grad")
    gx, gw = gh.grad([y], [x, w], [seed], create_graph=False)
    assert calls == [True]
    # the separate kernels, as the differentiable rule computes them
    gx2, gw2 = gh.grad([y], [x, w], [seed], create_graph=True)
    np.testing.assert_array_equal(gx.d, gx2.d)
    np.testing.assert_array_equal(gw.d, gw2.d)


def test_shared_columns_fall_back_for_mixed_dtypes() -> None:
    geo = conv.conv_geom("deconvolution", (2, 3, 4, 4), (3, 2, 3, 3), 1, 1, 1, 1, 1)
    g = np.ones((2, 2, 4, 4), np.float32)
    assert (
        conv._conv_and_filter_grad(np, g, np.ones((3, 2, 3, 3)), np.ones((2, 3, 4, 4)), geo) is None
    )


# -- Convolution's first-order rule: both gradients from the columns of gy ----------------------


@pytest.mark.parametrize(
    ("xs", "ws", "attrs"),
    [
        ((64, 8, 16, 16), (16, 8, 3, 3), {"pad": 1}),  # W3's second layer
        ((3, 4, 6, 5), (6, 2, 3, 2), {"pad": (2, 0), "dilation": (1, 2), "group": 2}),
        ((2, 3, 7), (4, 3, 3), {"pad": 0}),
        ((2, 2, 2, 4), (2, 2, 3), {"base_axis": 2, "pad": 1}),
    ],
)
def test_convolution_rule_gradients_from_the_columns_of_gy(
    xs: tuple, ws: tuple, attrs: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gradhub.functions as F

    rng = np.random.default_rng(26)
    x = gh.Variable(rng.standard_normal(xs))
    w = gh.Variable(rng.standard_normal(ws))
    y = F.convolution(x, w, **attrs)
    seed = rng.standard_normal(y.shape)
    calls = _spy(monkeypatch, "_data_and_filter_grads")
    gx, gw = gh.grad([y], [x, w], [seed], create_graph=False)
    assert calls == [True]
    # against the two kernels (the differentiable rule) and, on the small shapes, the loops
    rx, rw = gh.grad([y], [x, w], [seed], create_graph=True)
    np.testing.assert_allclose(gx.d, rx.d, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gw.d, rw.d, rtol=1e-10, atol=1e-10)
    if x.size < 1000:
        ba = attrs.get("base_axis", 1)
        kw = {k: v for k, v in attrs.items() if k != "base_axis"}
        ref_w = _convolution_filter_grad_ref(x.d, seed, ws[2:], ba, **kw)
        np.testing.assert_allclose(gw.d, ref_w, rtol=1e-10, atol=1e-10)
        ref_x = _deconvolution_ref(seed, w.d, None, ba, **kw)
        np.testing.assert_allclose(gx.d, ref_x, rtol=1e-10, atol=1e-10)


def test_convolution_rule_with_a_scattering_data_gradient_calls_the_two_kernels() -> None:
    geo = conv.conv_geom("convolution", (64, 3, 32, 32), (8, 3, 3, 3), 1, 1, 1, 1, 1)
    x = np.ones((2, 3, 8, 8))
    gy = np.ones((2, 8, 8, 8))
    w = np.ones((8, 3, 3, 3))
    assert conv._data_and_filter_grads(np, gy, w, x, geo) is None  # W3's first layer: 8 -> 3


def test_shared_columns_only_where_the_generic_kernels_serve(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A device plugin's kernel for either function (here: a stand-in) keeps the two kernels."""
    geo = conv.conv_geom("convolution", (2, 8, 6, 6), (16, 8, 3, 3), 1, 1, 1, 1, 1)
    x, gy, w = np.ones((2, 8, 6, 6)), np.ones((2, 16, 6, 6)), np.ones((16, 8, 3, 3))
    dgeo = conv.conv_geom("deconvolution", gy.shape, w.shape, 1, 1, 1, 1, 1)
    assert conv._data_and_filter_grads(np, gy, w, x, geo) is not None
    assert conv._conv_and_filter_grad(np, x, w, gy, dgeo) is not None
    real = conv.kernel_of

    def device_kernel(name: str, like: Any) -> Any:
        return (lambda *a, **k: None) if name == "ConvolutionFilterGrad" else real(name, like)

    monkeypatch.setattr(conv, "kernel_of", device_kernel)
    assert conv._data_and_filter_grads(np, gy, w, x, geo) is None
    assert conv._conv_and_filter_grad(np, x, w, gy, dgeo) is None


# -- stride 1: flat (extended grid) or exact columns -------------------------------------------

_STRIDE1_CFGS = [
    # x shape, w shape, attrs
    ((3, 4, 7, 6), (6, 2, 3, 2), {"pad": (1, 2), "dilation": (2, 1), "group": 2}),
    ((2, 3, 8), (4, 3, 3), {"pad": 0}),
    ((1, 2, 4, 3, 5), (2, 2, 2, 2, 3), {"pad": (1, 0, 1)}),
    ((2, 3, 5, 5), (3, 3, 1, 1), {"pad": 1}),  # 1x1 kernel with padding: columns built
]


@pytest.mark.parametrize("cfg", _STRIDE1_CFGS)
@pytest.mark.parametrize("flat_below", [0, 10**9])  # exact grid every time, flat every time
def test_stride1_layouts_match_the_loops(
    cfg: tuple, flat_below: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conv, "_FLAT_BELOW", flat_below)
    monkeypatch.setattr(conv, "_BLOCK_BYTES", 1)  # several chunks
    xs, ws, attrs = cfg
    rng = np.random.default_rng(27)
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    y = conv._convolution(np, x, w, b, **attrs)
    ref = _convolution_ref(x, w, b, 1, **attrs)
    np.testing.assert_allclose(y, ref, rtol=1e-10, atol=1e-12)
    u = rng.standard_normal(y.shape)
    np.testing.assert_allclose(
        conv._convolution_filter_grad(np, x, u, ws[2:], **attrs),
        _convolution_filter_grad_ref(x, u, ws[2:], 1, **attrs),
        rtol=1e-10,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        conv._deconvolution(np, u, w, **attrs),
        _deconvolution_ref(u, w, None, 1, **attrs),
        rtol=1e-10,
        atol=1e-12,
    )
    geo = conv.conv_geom(
        "convolution",
        xs,
        ws,
        1,
        attrs.get("pad"),
        None,
        attrs.get("dilation"),
        attrs.get("group", 1),
    )
    both = conv._data_and_filter_grads(np, u, w, x, geo)
    if both is not None:
        np.testing.assert_allclose(
            both[0], _deconvolution_ref(u, w, None, 1, **attrs), rtol=1e-10, atol=1e-12
        )
        np.testing.assert_allclose(
            both[1], _convolution_filter_grad_ref(x, u, ws[2:], 1, **attrs), rtol=1e-10, atol=1e-12
        )


def test_gemm_pieces_are_never_a_few_columns() -> None:
    """Regression: where one column of a product already exceeded the single-thread size
    (``rest > _GEMM_ST``: the filter gradient of a 256 -> 256 3x3 strided convolution), the
    pieces were one column long, thousands of matrix-vector products (5.6 s against 0.16 s for
    (2, 256, 64, 64) with stride 2 on the 2-core machine, 2026-11-28)."""
    from gradhub_nn_ops import conv

    assert conv._piece(np, 256 * 256 * 9, 4096) == conv._PIECE_MIN
    assert conv._piece(np, 256 * 256 * 9, 100) == 100
    assert conv._piece(np, 64, 1 << 16) == 4096  # below the minimum: single-threaded pieces
    assert conv._piece(np, 10, 50) == 50
