"""gradhub_nn_ops.native: the compiled CPU convolution kernels against the naive loops and the
numpy kernels (every padding, dilation, group, width across a register block, output-map count
across a block of four, 1-d and 2-d, float32 and float64), the same results for one and two
threads, the choice of kernel by shape and dtype, the switches (``set_enabled``,
``GRADHUB_NATIVE=0``), and clear errors where the library is missing; the 2x2 max-pooling
kernels' mask for given maxima and their argument checks (their results against the numpy
kernels, bit for bit, are in test_pooling.py)."""

from __future__ import annotations

import itertools
import os
import platform
import shutil
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from child_helpers import run_python
from gradhub.testing import gradcheck
from gradhub_nn_ops import conv, native
from gradhub_nn_ops.conv import (
    _convolution_filter_grad_ref,
    _convolution_ref,
    _deconvolution_ref,
)

built = pytest.mark.skipif(
    not native.available(), reason="gradhub_nn_ops._conv_native is not built (no C compiler)"
)


@pytest.fixture
def compiled() -> Iterator[None]:
    before = native.set_enabled(True)
    yield
    native.set_enabled(before)


def test_built_where_a_compiler_is(compiled: None) -> None:
    """The install builds the extension wherever a C compiler and Python's C headers are (a
    failed build would otherwise only show as slower convolutions)."""
    if platform.system() != "Linux" or shutil.which("cc") is None:
        pytest.skip("not Linux with a C compiler")
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        pytest.skip("Python's C headers (Python.h) are not installed (Debian: python3-dev)")
    assert native.available()
    if platform.machine() == "x86_64":
        assert native.target() in ("avx2", "default")


# x shape, w shape, attrs: widths across the 16-wide float32 / 8-wide float64 blocks, output
# maps 1-9 (blocks of four and their tails), groups, dilation, asymmetric padding, 1-d
_CFGS = [
    ((2, 3, 7, 9), (5, 3, 3, 3), {"pad": 1}),
    ((3, 4, 11, 37), (6, 2, 3, 2), {"pad": (2, 0), "dilation": (2, 1), "group": 2}),
    ((1, 2, 5, 5), (3, 2, 1, 1), {}),
    ((2, 6, 8, 20), (9, 2, 5, 3), {"pad": (2, 1), "dilation": (1, 2), "group": 3}),
    ((2, 1, 4, 17), (1, 1, 2, 4), {"pad": (0, 3)}),
    ((1, 8, 6, 18), (16, 8, 3, 3), {"pad": 1}),  # W3's second layer, smaller
    ((3, 5, 33), (7, 5, 4), {"pad": 2, "dilation": 2}),  # 1-d
    ((2, 4, 3), (8, 2, 3), {"group": 2}),  # 1-d, one output position
]


@built
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("cfg", _CFGS)
def test_kernels_match_the_loops_and_the_numpy_kernels(
    cfg: tuple, dtype: Any, compiled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conv, "_BLOCK_BYTES", 1)  # a chunk per sample: partial sums
    xs, ws, attrs = cfg
    rng = np.random.default_rng(31)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype)
    tol = {"rtol": 1e-10, "atol": 1e-11} if dtype == np.float64 else {"rtol": 2e-5, "atol": 2e-5}
    kernel = ws[2:]

    def run() -> tuple[Any, ...]:
        y = conv._convolution(np, x, w, b, **attrs)
        u = np.linspace(-1, 1, y.size).reshape(y.shape).astype(dtype)
        return (
            y,
            conv._convolution_filter_grad(np, x, u, kernel, **attrs),
            conv._deconvolution(np, u, w, **attrs),
            u,
        )

    y, gw, gx, u = run()
    assert y.dtype == gw.dtype == gx.dtype == dtype
    x64, w64, b64, u64 = (a.astype(np.float64) for a in (x, w, b, u))
    np.testing.assert_allclose(y, _convolution_ref(x64, w64, b64, 1, **attrs), **tol)
    np.testing.assert_allclose(
        gw, _convolution_filter_grad_ref(x64, u64, kernel, 1, **attrs), **tol
    )
    np.testing.assert_allclose(gx, _deconvolution_ref(u64, w64, None, 1, **attrs), **tol)
    native.set_enabled(False)
    for a, ref in zip((y, gw, gx), run()):
        np.testing.assert_allclose(a, ref, **tol)


def _record_calls(monkeypatch: pytest.MonkeyPatch, *names: str) -> list[str]:
    """Wrap the kernels ``native.<name>``; the list records each call's name."""
    calls: list[str] = []
    for name in names:
        real = getattr(native, name)
        monkeypatch.setattr(
            native, name, lambda *a, _r=real, _n=name: (calls.append(_n), _r(*a))[1]
        )
    return calls


@built
def test_native_kernels_are_the_ones_called(
    compiled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _record_calls(monkeypatch, "conv_forward", "filter_grad")
    rng = np.random.default_rng(32)
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    y = conv._convolution(np, x, w, pad=1)
    conv._convolution_filter_grad(np, x, y, (3, 3), pad=1)
    conv._deconvolution(np, y, w, pad=1)  # 4 -> 3 maps: a gather by the forward kernel
    assert [k for k, _ in itertools.groupby(calls)] == [
        "conv_forward",
        "filter_grad",
        "conv_forward",
    ]
    calls.clear()
    # numpy kernels: stride 2, 3-d, a dtype the library has no kernel for
    conv._convolution(np, x, w, pad=1, stride=2)
    conv._convolution(np, x[..., None], w[..., None])
    conv._convolution(np, x.astype(np.float16), w.astype(np.float16))
    assert calls == []


@built
def test_deconvolution_gathers_for_every_channel_ratio(compiled: None) -> None:
    """W3's first-layer data gradient (8 -> 3 maps) scatters with the numpy kernels and is a
    convolution by the compiled forward kernel."""
    geo = conv.conv_geom("deconvolution", (1, 8, 8, 8), (8, 3, 3, 3), 1, 1, 1, 1, 1)
    assert conv._deconv_gathers(8, 3, geo, (3, 3), (0, 0), np, np.float32)
    native.set_enabled(False)
    assert not conv._deconv_gathers(8, 3, geo, (3, 3), (0, 0), np, np.float32)


@built
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_identical_for_one_and_two_threads(dtype: Any, compiled: None) -> None:
    rng = np.random.default_rng(33)
    x = rng.standard_normal((64, 3, 32, 32)).astype(dtype)
    w = rng.standard_normal((8, 3, 3, 3)).astype(dtype)
    u = rng.standard_normal((64, 8, 32, 32)).astype(dtype)
    before = gh.get_num_threads()
    results = []
    try:
        for n in (1, 2):
            gh.set_num_threads(n)
            results.append(
                (
                    conv._convolution(np, x, w, pad=1),
                    conv._convolution_filter_grad(np, x, u, (3, 3), pad=1),
                    conv._deconvolution(np, u, w, pad=1),
                )
            )
    finally:
        gh.set_num_threads(before)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@built
def test_convolution_gradients_through_the_compiled_kernels(compiled: None) -> None:
    """First and second order through Convolution's rules (numerically, float64)."""
    import gradhub.functions as F

    rng = np.random.default_rng(34)
    x = rng.standard_normal((2, 3, 5, 6))
    w = rng.standard_normal((4, 3, 3, 3))
    b = rng.standard_normal(4)

    def f(x: Any, w: Any, b: Any) -> Any:
        return F.tanh(F.convolution(x, w, b, pad=(1, 0), dilation=(1, 2)))

    assert gradcheck(f, (x, w, b), order=2)


def test_set_enabled_returns_the_previous_setting() -> None:
    before = native.set_enabled(False)
    try:
        assert not native.available()
        assert not native.usable(np, np.float32, 2, (1, 1))
        assert native.set_enabled(True) is False
    finally:
        native.set_enabled(before)


def test_environment_turns_the_kernels_off() -> None:
    code = (
        "import numpy as np\n"
        "from gradhub_nn_ops import native\n"
        "print(native.available(), native.usable(np, np.float32, 2, (1, 1)))\n"
    )
    env = {**os.environ, "GRADHUB_NATIVE": "0"}
    assert run_python(code, env).split() == ["False", "False"]


def test_missing_library_falls_back_and_explains(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "_loaded", False)
    monkeypatch.setattr(native, "_lib", None)
    monkeypatch.setattr(native, "_KERNELS", {})
    monkeypatch.setattr(native.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(native, "_enabled", True)
    assert not native.available()
    assert native.target() == "none"
    x = np.ones((1, 1, 3, 3))
    y = conv._convolution(np, x, np.ones((1, 1, 2, 2)))  # the numpy kernels
    np.testing.assert_array_equal(y, np.full((1, 1, 2, 2), 4.0))
    with pytest.raises(RuntimeError, match=r"native\.conv_forward\(\).*not built"):
        native.conv_forward(x, np.ones((1, 1, 2, 2)), None, y, (0, 0), (1, 1), 1)


@built
def test_other_dtypes_are_refused_by_name(compiled: None) -> None:
    x = np.ones((1, 1, 3, 3), np.float16)
    with pytest.raises(TypeError, match=r"native\.filter_grad\(\).*float16"):
        native.filter_grad(x, x, np.zeros((1, 1, 1, 1), np.float16), (1, 1), (0, 0), (1, 1), 1)


# -- 2x2 max pooling -------------------------------------------------------------------------


@built
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mask_follows_the_given_maxima_as_the_numpy_kernel(dtype: Any, compiled: None) -> None:
    """MaxPoolingMask's mask marks the first element equal to y's value for the window (NaN:
    the first NaN), whatever y holds: the same bits as the numpy kernel, on widths with and
    without a partial vector of windows."""
    from gradhub_nn_ops import pooling as P

    rng = np.random.default_rng(35)
    for shape in ((2, 3, 4, 40), (1, 2, 6, 6)):
        x = rng.integers(-2, 3, shape).astype(dtype)
        x.ravel()[rng.choice(x.size, 5, replace=False)] = np.nan
        y = rng.integers(-2, 3, (shape[0], shape[1], shape[2] // 2, shape[3] // 2)).astype(dtype)
        y.ravel()[:2] = np.nan
        mine = P._max_pooling_mask(np, x, y, (2, 2))
        native.set_enabled(False)
        theirs = P._max_pooling_mask(np, x, y, (2, 2))
        native.set_enabled(True)
        np.testing.assert_array_equal(mine, theirs)
        assert mine.reshape(-1).any() and not mine.reshape(-1).all()


@built
def test_pool_checks_its_arrays(compiled: None) -> None:
    x = np.zeros((3, 2, 4))
    with pytest.raises(TypeError, match=r"native\.pool\(\): name must be one of"):
        native.pool("maximum", x, np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"native\.pool\('max'\): arrays must be C-contiguous"):
        native.pool("max", x, np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"float64 \(or bool masks\)"):
        native.pool("max", x, np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        native.pool("backward", x, np.zeros((2, 3)).T, np.zeros_like(x))


@built
@pytest.mark.parametrize(
    ("xs", "ws"),
    [
        ((2, 0, 5, 5), (3, 0, 3, 3)),  # no input channels
        ((2, 4, 5, 5), (0, 4, 3, 3)),  # no output maps
        ((2, 0, 5, 5), (0, 0, 3, 3)),  # neither
    ],
)
def test_empty_channels_as_the_numpy_kernels(xs: tuple, ws: tuple, compiled: None) -> None:
    x = np.ones(xs, np.float32)
    w = np.ones(ws, np.float32)
    dy = np.ones((xs[0], ws[0], *xs[2:]), np.float32)

    def run() -> list[Any]:
        return [
            conv._convolution(np, x, w, pad=1),
            conv._convolution_filter_grad(np, x, dy, (3, 3), pad=1),
            conv._deconvolution(np, dy, w, pad=1),
        ]

    mine = run()
    native.set_enabled(False)
    for a, b in zip(mine, run()):
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)


# -- ReLU ----------------------------------------------------------------------------------------


@built
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(5000,), (64, 8, 9, 7), (3000, 4)])
def test_relu_kernels_give_the_numpy_bits(shape: tuple, dtype: Any, compiled: None) -> None:
    """ReLU's forward and fast backward by the compiled kernels: the numpy kernels' bits (NaN,
    signed zeros, infinities, infinite and NaN gradients), C and Fortran order."""
    from gradhub_nn_ops import activations as A

    rng = np.random.default_rng(36)
    x = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    x.reshape(-1)[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0]
    g.reshape(-1)[:9] = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, np.inf, np.nan, -np.inf]

    def run(a: Any, ga: Any) -> tuple[bytes, bytes]:
        y = A._relu(np, a)
        with np.errstate(invalid="ignore"):  # numpy warns for inf * 0; the C loop does not
            gx = A._relu_fast(np, [ga], a, a.shape, [y], y.shape)[0]
        return y.tobytes(order="A"), gx.tobytes(order="A")

    for a, ga in ((x, g), (np.asfortranarray(x), np.asfortranarray(g))):
        mine = run(a, ga)
        native.set_enabled(False)
        theirs = run(a, ga)
        native.set_enabled(True)
        assert mine == theirs


@built
def test_relu_kernels_are_the_ones_called_for_large_arrays(
    compiled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gradhub_nn_ops import activations as A

    calls = _record_calls(monkeypatch, "relu", "relu_backward")
    small = np.ones(16, np.float32)
    A._relu_fast(np, [small], small, small.shape, [A._relu(np, small)], small.shape)
    assert calls == []  # below _ZEROS elements a ctypes call costs more than numpy's
    big = np.ones(4096, np.float32)
    A._relu_fast(np, [big], big, big.shape, [A._relu(np, big)], big.shape)
    assert calls == ["relu", "relu_backward"]


@built
def test_relu_kernels_check_their_arrays(compiled: None) -> None:
    x = np.ones((4, 3))
    with pytest.raises(ValueError, match=r"native\.relu\(\): arrays must be C-contiguous"):
        native.relu(x, np.empty((3, 4)))
    with pytest.raises(ValueError, match=r"native\.relu_backward\(\).*float32"):
        native.relu_backward(x, x, np.empty((4, 3), np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        native.relu(x.T, np.empty((3, 4)))
    with pytest.raises(TypeError, match=r"native\.relu\(\).*float16"):
        native.relu(x.astype(np.float16), x.astype(np.float16))


# -- Standardize (layer normalization over the last axes) ---------------------------------------


@built
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "axis"), [((6, 7, 13), (2,)), ((4, 5, 3), (1, 2)), ((9,), (0,))])
def test_standardize_kernels_against_float64_formulas(
    shape: tuple, axis: tuple, dtype: Any, compiled: None
) -> None:
    """Standardize's compiled forward and first-order backward (rows of the trailing axes)
    against the formulas in float64, and against the numpy kernels."""
    from gradhub_nn_ops import normalization as N

    rng = np.random.default_rng(40)
    x = (rng.standard_normal(shape) * 3.0 + 1.5).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    y = N._standardize(np, x, axis=axis, eps=1e-3)
    dx = N._standardize_fast(np, [g], [x], [shape], None, None, axis=axis, eps=1e-3)[0]
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    mu = x64.mean(axis=axis, keepdims=True)
    r = 1.0 / np.sqrt(((x64 - mu) ** 2).mean(axis=axis, keepdims=True) + 1e-3)
    xhat = (x64 - mu) * r
    ref_dx = r * (g64 - g64.mean(axis=axis, keepdims=True)) - xhat * r * (g64 * xhat).mean(
        axis=axis, keepdims=True
    )
    tol = 1e-6 if dtype == np.float32 else 1e-14
    assert y.dtype == dtype and dx.dtype == dtype
    np.testing.assert_allclose(y, xhat, rtol=0, atol=tol)
    np.testing.assert_allclose(dx, ref_dx, rtol=0, atol=tol)
    native.set_enabled(False)
    y_np = N._standardize(np, x, axis=axis, eps=1e-3)
    dx_np = N._standardize_fast(np, [g], [x], [shape], None, None, axis=axis, eps=1e-3)[0]
    np.testing.assert_allclose(y, y_np, rtol=0, atol=10 * tol)
    np.testing.assert_allclose(dx, dx_np, rtol=0, atol=10 * tol)


@built
def test_standardize_kernels_serve_trailing_axes_of_c_arrays_only(
    compiled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _record_calls(monkeypatch, "standardize", "standardize_backward")
    x = gh.Variable(np.random.default_rng(41).standard_normal((4, 3, 5)))
    (gx,) = gh.grad([(F.standardize(x, axis=(1, 2)) ** 2.0 * x).sum()], [x], create_graph=False)
    assert calls == ["standardize", "standardize_backward"] and gx.shape == (4, 3, 5)
    calls.clear()
    F.standardize(x, axis=(0,))  # not the trailing axes: numpy's kernels
    F.standardize(gh.Variable(x.d.transpose(2, 1, 0)), axis=(2,))  # not C-contiguous
    assert calls == []
    with pytest.raises(ValueError, match=r"native\.standardize\(\): rows of 4 values"):
        native.standardize(np.ones(6), np.ones(6), 4, 1e-5)
    with pytest.raises(ValueError, match=r"native\.standardize_backward\(\): arrays must be"):
        native.standardize_backward(np.ones(6), np.ones(6, np.float32), np.ones(6), 3, 1e-5)


# -- StandardizeAffine (layer normalization with gamma and beta) --------------------------------


@built
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "axis"), [((6, 7, 13), (2,)), ((4, 5, 3), (1, 2)), ((9,), (0,))])
def test_standardize_affine_kernels_against_float64_formulas(
    shape: tuple, axis: tuple, dtype: Any, compiled: None
) -> None:
    """StandardizeAffine's compiled forward and first-order backward (one value of gamma and
    beta per position in a row) against the formulas in float64, and against the numpy path."""
    from gradhub_nn_ops import normalization as N

    rng = np.random.default_rng(42)
    x = (rng.standard_normal(shape) * 3.0 + 1.5).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    pshape = tuple(shape[i] if i in axis else 1 for i in range(len(shape)))
    gamma = rng.uniform(0.5, 1.5, pshape).astype(dtype)
    beta = rng.standard_normal(pshape).astype(dtype)
    need = (True, True, True)
    y = N._standardize_affine(np, x, gamma, beta, axis=axis, eps=1e-3)
    dx, dgamma, dbeta = N._standardize_affine_fast(
        np, [g], [x, gamma, beta], None, None, None, axis=axis, eps=1e-3, need_grads=need
    )
    x64, g64, gm64 = x.astype(np.float64), g.astype(np.float64), gamma.astype(np.float64)
    mu = x64.mean(axis=axis, keepdims=True)
    r = 1.0 / np.sqrt(((x64 - mu) ** 2).mean(axis=axis, keepdims=True) + 1e-3)
    xhat = (x64 - mu) * r
    h = g64 * gm64
    ref_dx = r * (h - h.mean(axis=axis, keepdims=True)) - xhat * r * (h * xhat).mean(
        axis=axis, keepdims=True
    )
    batch = tuple(i for i in range(len(shape)) if i not in axis)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    assert y.dtype == dtype and dx.dtype == dtype and dgamma.shape == pshape
    np.testing.assert_allclose(y, xhat * gm64 + beta, rtol=0, atol=tol)
    np.testing.assert_allclose(dx, ref_dx, rtol=0, atol=tol)
    np.testing.assert_allclose(dgamma, (g64 * xhat).sum(batch, keepdims=True), rtol=tol, atol=tol)
    np.testing.assert_allclose(dbeta, g64.sum(batch, keepdims=True), rtol=tol, atol=tol)
    native.set_enabled(False)
    y_np = N._standardize_affine(np, x, gamma, beta, axis=axis, eps=1e-3)
    grads_np = N._standardize_affine_fast(
        np, [g], [x, gamma, beta], None, None, None, axis=axis, eps=1e-3, need_grads=need
    )
    np.testing.assert_allclose(y, y_np, rtol=0, atol=10 * tol)
    for a, b in zip((dx, dgamma, dbeta), grads_np):
        np.testing.assert_allclose(a, b, rtol=10 * tol, atol=10 * tol)


@built
def test_standardize_affine_kernels_do_not_depend_on_threads(compiled: None) -> None:
    """Rows run in chunks fixed by the shape, each chunk with its own parameter sums added in
    order: one thread and two give the same bits."""
    from gradhub import parallel

    rng = np.random.default_rng(43)
    x = rng.standard_normal((700, 300)).astype(np.float32)  # several chunks of rows
    g = rng.standard_normal(x.shape).astype(np.float32)
    gamma, beta = rng.standard_normal((2, 300)).astype(np.float32)
    results = []
    before = parallel.get_num_threads()
    try:
        for threads in (1, 2):
            parallel.set_num_threads(threads)
            y, dx = np.empty_like(x), np.empty_like(x)
            dg, db = np.zeros(300), np.zeros(300)
            native.standardize(x, y, 300, 1e-5, gamma, beta)
            native.standardize_backward(x, g, dx, 300, 1e-5, gamma, dg, db)
            results.append((y, dx, dg, db))
    finally:
        parallel.set_num_threads(before)
    assert len(native._row_chunks(700, 300)) > 2
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@built
def test_standardize_affine_kernels_check_their_arrays(compiled: None) -> None:
    x = np.ones((2, 3))
    y = np.empty_like(x)
    with pytest.raises(ValueError, match=r"native\.standardize\(\): gamma and beta are given"):
        native.standardize(x, y, 3, 1e-5, np.ones(3))
    with pytest.raises(ValueError, match=r"native\.standardize\(\): beta must be a C-contig"):
        native.standardize(x, y, 3, 1e-5, np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match=r"native\.standardize\(\): gamma must be .* float64"):
        native.standardize(x, y, 3, 1e-5, np.ones(3, np.float32), np.ones(3))
    with pytest.raises(ValueError, match=r"standardize_backward\(\): dgamma must be .*float64"):
        native.standardize_backward(x, x, y, 3, 1e-5, None, np.ones(3, np.float32), np.ones(3))
    # parameter sums alone (no input gradient)
    dg, db = np.zeros(3), np.zeros(3)
    native.standardize_backward(x + np.arange(3.0), x, None, 3, 0.0, np.ones(3), dg, db)
    np.testing.assert_allclose(db, [2.0, 2.0, 2.0])
    np.testing.assert_allclose(dg, 2 * np.array([-1.0, 0.0, 1.0]) * np.sqrt(1.5), rtol=1e-12)


@built
def test_layer_normalization_with_parameters_runs_one_compiled_pass(
    compiled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _record_calls(monkeypatch, "standardize", "standardize_backward")
    rng = np.random.default_rng(44)
    x = gh.Variable(rng.standard_normal((4, 3, 8)).astype(np.float32))
    gamma = gh.Variable(rng.standard_normal((1, 1, 8)).astype(np.float32))
    beta = gh.Variable(rng.standard_normal((1, 1, 8)).astype(np.float32))
    y = F.layer_normalization(x, beta, gamma, batch_axis=(0, 1))
    assert y.creator is not None and y.creator.fdef.name == "StandardizeAffine"
    gx, gg, gb = gh.grad([(y * y).sum()], [x, gamma, beta], create_graph=False)
    assert calls == ["standardize", "standardize_backward"]
    assert gx.shape == x.shape and gg.shape == gamma.shape and gb.shape == beta.shape
