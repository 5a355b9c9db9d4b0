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
def test_standardize_float32_moments_hold_far_from_the_first_value(compiled: None) -> None:
    """float32 rows' moments come from one pass of sums of ``x - x[0]``: rows whose mean lies
    far from their spread (1e4 against 1e-1), rows whose first value is an outlier, a constant
    row, and rows longer than the 16 chains with a tail, against the float64 two-pass formulas
    on the same float32 data."""
    rng = np.random.default_rng(41)
    m = 16 * 20 + 7
    x = (1e4 + 0.1 * rng.standard_normal((4, m))).astype(np.float32)
    x[1, 0] = 3e4  # an outlier first
    x[2] = np.float32(-7.25)  # constant: variance 0
    x[3] *= -1.0
    y = np.empty_like(x)
    native.standardize(x, y, m, 1e-5)
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1, keepdims=True)
    var = ((x64 - mu) ** 2).mean(axis=1, keepdims=True)
    want = (x64 - mu) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(y, want, rtol=0, atol=2e-5 * np.abs(want).max())
    assert not y[2].any()
    g = rng.standard_normal(x.shape).astype(np.float32)
    dx = np.empty_like(x)
    native.standardize_backward(x, g, dx, m, 1e-5)
    g64, r = g.astype(np.float64), 1.0 / np.sqrt(var + 1e-5)
    ref = r * (g64 - g64.mean(axis=1, keepdims=True)) - want * r * (g64 * want).mean(
        axis=1, keepdims=True
    )
    for row in (0, 1, 3):  # (the constant row's gradient is r (g - mean(g)), of size 1 / sqrt(eps))
        np.testing.assert_allclose(dx[row], ref[row], rtol=0, atol=2e-5 * np.abs(ref[row]).max())


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


# -- BatchNormalization (per channel over axis 1 of (N, C, *spatial)) ---------------------------


def _bn_formulas(x: Any, g: Any, gamma: Any, beta: Any, eps: float) -> dict[str, Any]:
    """Batch normalization's training forward and backward in float64 (reduced axes: all but 1)."""
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    gm64, bt64 = gamma.astype(np.float64), beta.astype(np.float64)
    red = (0, *range(2, x.ndim))
    mu = x64.mean(axis=red, keepdims=True)
    var = ((x64 - mu) ** 2).mean(axis=red, keepdims=True)
    r = 1.0 / np.sqrt(var + eps)
    xhat = (x64 - mu) * r
    h = g64 * gm64
    dx = r * (h - h.mean(axis=red, keepdims=True)) - xhat * r * (h * xhat).mean(
        axis=red, keepdims=True
    )
    return {
        "y": xhat * gm64 + bt64,
        "mu": mu,
        "var": var,
        "dx": dx,
        "dbeta": g64.sum(axis=red, keepdims=True),
        "dgamma": (g64 * xhat).sum(axis=red, keepdims=True),
    }


@pytest.fixture
def bn_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled batch-normalization kernels for batches of any size (these are small)."""
    from gradhub_nn_ops import normalization as N

    monkeypatch.setattr(N, "_BN_MIN_SIZE", 1)


# shapes: runs of 8 values and their tails, one run per sample, a 1-d and a 3-d spatial part
_BN_SHAPES = [(3, 5, 7, 3), (4, 3, 8), (2, 4, 1, 17), (5, 2, 2, 3, 2)]


@built
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", _BN_SHAPES)
def test_batch_normalization_kernels_against_float64_formulas(
    shape: tuple, dtype: Any, compiled: None, bn_any_size: None
) -> None:
    """BatchNormalization's compiled training forward (running statistics included) and
    first-order backward against the formulas in float64, and against the numpy kernels."""
    from gradhub_nn_ops import normalization as N

    rng = np.random.default_rng(50)
    x = (rng.standard_normal(shape) * 3.0 + 1.5).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    pshape = (1, shape[1]) + (1,) * (len(shape) - 2)
    gamma = rng.uniform(0.5, 1.5, pshape).astype(dtype)
    beta = rng.standard_normal(pshape).astype(dtype)
    need = (True, True, True, False, False)

    def run() -> tuple[Any, ...]:
        mean, var = np.full(pshape, 0.5, dtype), np.full(pshape, 2.0, dtype)
        y = N._batch_normalization(np, x, beta, gamma, mean, var, (1,), 0.9, 1e-3, True)
        grads = N._batch_normalization_fast(
            np, [g], [x, beta, gamma, mean, var], [shape], None, None, (1,), 0.9, 1e-3, True, need
        )
        return y, mean, var, *grads[:3]

    y, mean, var, dx, dbeta, dgamma = run()
    ref = _bn_formulas(x, g, gamma, beta, 1e-3)
    count = x.size // shape[1]
    tol = 2e-6 if dtype == np.float32 else 1e-13
    assert all(a.dtype == dtype for a in (y, mean, var, dx, dbeta, dgamma))
    np.testing.assert_allclose(y, ref["y"], rtol=0, atol=tol)
    np.testing.assert_allclose(mean, 0.9 * 0.5 + 0.1 * ref["mu"], rtol=tol)
    np.testing.assert_allclose(var, 0.9 * 2.0 + 0.1 * ref["var"] * count / (count - 1), rtol=tol)
    np.testing.assert_allclose(dx, ref["dx"], rtol=0, atol=tol)
    np.testing.assert_allclose(dbeta, ref["dbeta"], rtol=tol, atol=tol)
    np.testing.assert_allclose(dgamma, ref["dgamma"], rtol=tol, atol=tol)
    native.set_enabled(False)
    for a, b in zip((y, mean, var, dx, dbeta, dgamma), run()):
        np.testing.assert_allclose(a, b, rtol=10 * tol, atol=10 * tol)


@built
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_normalization_inference_kernels_against_the_numpy_kernels(
    dtype: Any, compiled: None, bn_any_size: None
) -> None:
    """Inference (the running statistics normalize; their gradients too) by the compiled
    kernels against the formulas in float64 and the numpy kernels."""
    from gradhub_nn_ops import normalization as N

    rng = np.random.default_rng(51)
    shape, pshape = (3, 4, 5, 6), (1, 4, 1, 1)
    x = (rng.standard_normal(shape) + 0.5).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    beta, gamma, mean = (rng.standard_normal(pshape).astype(dtype) for _ in range(3))
    var = rng.uniform(0.5, 2.0, pshape).astype(dtype)
    inputs = [x, beta, gamma, mean, var]

    def run() -> list[Any]:
        y = N._batch_normalization(np, x, beta, gamma, mean, var, (1,), 0.9, 1e-3, False)
        grads = N._batch_normalization_fast(
            np, [g], inputs, [shape], None, None, (1,), 0.9, 1e-3, False, (True,) * 5
        )
        return [y, *grads]

    got = run()
    x64, g64, gm64, mu64 = (a.astype(np.float64) for a in (x, g, gamma, mean))
    r = 1.0 / np.sqrt(var.astype(np.float64) + 1e-3)
    red = (0, 2, 3)
    want = [
        (x64 - mu64) * r * gm64 + beta,
        g64 * gm64 * r,
        g64.sum(red, keepdims=True),
        (g64 * (x64 - mu64) * r).sum(red, keepdims=True),
        -(g64 * gm64 * r).sum(red, keepdims=True),
        (g64 * gm64 * (x64 - mu64)).sum(red, keepdims=True) * r**3 * -0.5,
    ]
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(got, want):
        assert a.dtype == dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    native.set_enabled(False)
    for a, b in zip(got, run()):
        np.testing.assert_allclose(a, b, rtol=10 * tol, atol=10 * tol)


@built
def test_batch_normalization_kernels_keep_float32_accuracy_far_from_zero(compiled: None) -> None:
    """Two passes in double: a float32 batch around 1e4 with unit spread keeps its variance."""
    rng = np.random.default_rng(52)
    x = (rng.standard_normal((16, 3, 64)) + 1e4).astype(np.float32)
    y, mean, var = np.empty_like(x), np.empty(3), np.empty(3)
    native.bn_forward(x, y, np.ones(3, np.float32), np.zeros(3, np.float32), mean, var, 1e-5)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(var, x64.var(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(y.mean(axis=(0, 2)), 0.0, atol=1e-6)


@built
def test_batch_normalization_kernels_do_not_depend_on_threads(
    compiled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each channel is summed by one call in an order fixed by the shape: one thread, two
    threads, and one channel per chunk give the same bits."""
    from gradhub import parallel

    rng = np.random.default_rng(53)
    x = (rng.standard_normal((8, 40, 25, 28)) * 2.0 + 1.0).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    gamma, beta = rng.standard_normal((2, 40)).astype(np.float32)
    assert len(native._channel_chunks(40, 8 * 25 * 28)) > 2

    def run() -> tuple[Any, ...]:
        y, dx = np.empty_like(x), np.empty_like(x)
        m, v, m2, v2, sg, sgxc = np.empty((6, 40))
        native.bn_forward(x, y, gamma, beta, m, v, 1e-5)
        native.bn_backward(x, g, dx, gamma, m2, v2, sg, sgxc, 1e-5, True, True, x.size // 40)
        return y, dx, m, v, m2, v2, sg, sgxc

    results = []
    before = parallel.get_num_threads()
    try:
        for threads in (1, 2):
            parallel.set_num_threads(threads)
            results.append(run())
        monkeypatch.setattr(native, "_ROW_CHUNK", 1)  # a chunk per channel
        results.append(run())
    finally:
        parallel.set_num_threads(before)
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(results[0][2], results[0][4])  # the same statistics twice


@built
def test_batch_normalization_kernels_take_given_statistics_and_sums(compiled: None) -> None:
    """Statistics and sums read instead of computed (the parts a normalization across
    processes gives): the same dx as the one-call kernel, and ``y=None`` for statistics alone."""
    rng = np.random.default_rng(54)
    x = rng.standard_normal((3, 2, 10))
    g = rng.standard_normal(x.shape)
    gamma = np.array([0.5, 2.0])
    m, v, sg, sgxc = np.empty((4, 2))
    dx = np.empty_like(x)
    native.bn_backward(x, g, dx, gamma, m, v, sg, sgxc, 1e-5, count=30)
    m2, v2 = np.empty((2, 2))
    native.bn_forward(x, None, None, None, m2, v2, 1e-5)
    np.testing.assert_array_equal((m, v), (m2, v2))
    s2, t2 = np.empty((2, 2))
    native.bn_backward(x, g, None, None, m2, v2, s2, t2, 1e-5, False, True)
    np.testing.assert_array_equal((sg, sgxc), (s2, t2))
    dx2 = np.empty_like(x)
    native.bn_backward(x, g, dx2, gamma, m2, v2, s2, t2, 1e-5, False, False, 30)
    np.testing.assert_array_equal(dx, dx2)
    native.bn_backward(x, g, dx2, gamma, m2, v2, s2, t2, 1e-5, False, False)  # inference
    np.testing.assert_allclose(dx2, g * (gamma / np.sqrt(v + 1e-5))[:, None], rtol=1e-15)


@built
def test_batch_normalization_kernels_are_the_ones_called(
    compiled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F.batch_normalization and F.fused_batch_normalization run the compiled kernels on
    C-contiguous float32/float64 numpy arrays normalized over axis 1 with enough values;
    every other case runs the numpy kernels; create_graph keeps the graph rules."""
    from gradhub_nn_ops import normalization as N
    from gradhub_nn_ops.distributed import ONE_PROCESS

    calls = _record_calls(monkeypatch, "bn_forward", "bn_backward")
    rng = np.random.default_rng(55)
    x = gh.Variable(rng.standard_normal((4, 8, 4, 8)).astype(np.float32))  # _BN_MIN_SIZE values
    F.batch_normalization(x, *(np.ones((1, 8, 1, 1), np.float32) for _ in range(4))).backward()
    assert calls == ["bn_forward", "bn_backward"]
    calls.clear()
    F.batch_normalization(x[:3], *(np.ones((1, 8, 1, 1), np.float32) for _ in range(4)))
    assert calls == []  # fewer values: the numpy kernels
    monkeypatch.setattr(N, "_BN_MIN_SIZE", 1)

    def params(c: int, dtype: Any = np.float32, shape: tuple = ()) -> list[Any]:
        shape = shape or (1, c, 1, 1)
        return [
            gh.Variable(rng.standard_normal(shape).astype(dtype)),
            gh.Variable(rng.uniform(0.5, 1.5, shape).astype(dtype)),
            np.zeros(shape, dtype),
            np.ones(shape, dtype),
        ]

    x = gh.Variable(rng.standard_normal((2, 3, 4, 4)).astype(np.float32))
    beta, gamma, mean, var = params(3)
    y = F.batch_normalization(x, beta, gamma, mean, var)
    gx, gb, gg = gh.grad([(y * y).sum()], [x, beta, gamma], create_graph=False)
    assert calls == ["bn_forward", "bn_backward"]
    assert gx is not None and gb is not None and gg is not None
    assert gx.shape == x.shape and gb.shape == gg.shape == (1, 3, 1, 1)
    calls.clear()
    z = gh.Variable(rng.standard_normal(x.shape).astype(np.float32))
    u = F.fused_batch_normalization(x, beta, gamma, mean, var, z)
    gh.grad([u.sum()], [x], create_graph=False)
    assert calls == ["bn_forward", "bn_backward"]
    calls.clear()
    F.batch_normalization(x, beta, gamma, mean, var, batch_stat=False).backward()
    assert calls == ["bn_forward", "bn_backward"]
    calls.clear()
    # across processes: this process's statistics first, then the normalization; the backward
    # sums, then dx from the sums of every process
    F.sync_batch_normalization(x, beta, gamma, mean, var, ONE_PROCESS).backward()
    assert calls == ["bn_forward"] * 3 + ["bn_backward"] * 2
    calls.clear()
    # the graph rules with create_graph: the forward kernel only, the same gradient
    y = F.batch_normalization(x, beta, gamma, mean, var)
    (gx2,) = gh.grad([(y * y).sum()], [x], create_graph=True)
    assert calls == ["bn_forward"] and gx2 is not None
    np.testing.assert_allclose(gx2.d, gx.d, rtol=1e-4, atol=1e-5)
    calls.clear()
    # numpy kernels: other axes, not C-contiguous, float16, few spatial values, float64 running
    # statistics of a float32 x in inference
    F.batch_normalization(x, *params(4, shape=(1, 1, 4, 1)), axes=(2,))
    F.batch_normalization(gh.Variable(x.d.transpose(0, 1, 3, 2)), beta, gamma, mean, var)
    F.batch_normalization(gh.Variable(x.d.astype(np.float16)), *params(3, np.float16))
    F.batch_normalization(gh.Variable(x.d[..., :1, :2].copy()), beta, gamma, mean, var)
    m64, v64 = params(3, np.float64)[2:]
    F.batch_normalization(x, beta, gamma, m64, v64, batch_stat=False)
    assert calls == []


@built
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sync_batch_normalization_kernels_match_batch_normalization(
    dtype: Any, compiled: None, bn_any_size: None
) -> None:
    """SyncBatchNormalization's compiled path (this process's statistics combined by its
    communicator's collectives, the backward sums added over the processes) on one process
    against BatchNormalization's one-call kernels and the numpy kernels."""
    from gradhub_nn_ops import distributed as D
    from gradhub_nn_ops import normalization as N

    rng = np.random.default_rng(56)
    shape, pshape = (3, 4, 5, 6), (1, 4, 1, 1)
    x = (rng.standard_normal(shape) * 2.0 - 1.0).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    beta, gamma = rng.standard_normal((2, *pshape)).astype(dtype)
    need = (True, True, True, False, False)

    def run(sync: bool) -> list[Any]:
        mean, var = np.zeros(pshape, dtype), np.ones(pshape, dtype)
        inputs = [x, beta, gamma, mean, var]
        if sync:
            one = D.ONE_PROCESS
            y = D._sync_batch_normalization(np, *inputs, one, (1,), 0.9, 1e-3, True)
            grads = D._sync_batch_normalization_fast(
                np, [g], inputs, [shape], None, None, one, (1,), 0.9, 1e-3, True, need
            )
        else:
            y = N._batch_normalization(np, *inputs, (1,), 0.9, 1e-3, True)
            grads = N._batch_normalization_fast(
                np, [g], inputs, [shape], None, None, (1,), 0.9, 1e-3, True, need
            )
        return [y, mean, var, *grads[:3]]

    tol = 1e-5 if dtype == np.float32 else 1e-13
    synced, single = run(True), run(False)
    native.set_enabled(False)
    numpy_path = run(True)
    for a, b, c in zip(synced, single, numpy_path):
        assert a.dtype == dtype
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
        np.testing.assert_allclose(a, c, rtol=10 * tol, atol=10 * tol)


@built
def test_batch_normalization_kernels_check_their_arrays(compiled: None) -> None:
    x = np.ones((2, 3, 4))
    m, v, sg, sgxc = np.empty((4, 3))
    with pytest.raises(ValueError, match=r"native\.bn_forward\(\): arrays must be C-contiguous"):
        native.bn_forward(x, np.empty((2, 3, 5)), np.ones(3), np.ones(3), m, v, 1e-5)
    with pytest.raises(ValueError, match=r"native\.bn_forward\(\): gamma must be .*float64.* 3"):
        native.bn_forward(x, x.copy(), np.ones(3, np.float32), np.ones(3), m, v, 1e-5)
    with pytest.raises(ValueError, match=r"native\.bn_forward\(\): mean must be .*float64"):
        native.bn_forward(x, x.copy(), np.ones(3), np.ones(3), m.astype(np.float32), v, 1e-5)
    with pytest.raises(ValueError, match=r"native\.bn_forward\(\): beta is needed"):
        native.bn_forward(x, x.copy(), np.ones(3), None, m, v, 1e-5)
    with pytest.raises(ValueError, match=r"native\.bn_forward\(\): x must have a batch and"):
        native.bn_forward(np.ones(3), None, None, None, m, v, 1e-5)
    with pytest.raises(ValueError, match=r"native\.bn_backward\(\): arrays must be C-contig"):
        native.bn_backward(x, x.transpose(1, 0, 2).copy(), None, None, m, v, sg, sgxc, 1e-5)
    with pytest.raises(ValueError, match=r"native\.bn_backward\(\): gamma is needed"):
        native.bn_backward(x, x, x.copy(), None, m, v, sg, sgxc, 1e-5)
    with pytest.raises(ValueError, match=r"native\.bn_backward\(\): sgxc is needed"):
        native.bn_backward(x, x, None, None, m, v, sg, None, 1e-5)
    with pytest.raises(ValueError, match=r"native\.bn_backward\(\): count must be >= 1"):
        native.bn_backward(x, x, x.copy(), np.ones(3), m, v, sg, sgxc, 1e-5, count=0)
    with pytest.raises(TypeError, match=r"native\.bn_forward\(\).*float16"):
        x16 = x.astype(np.float16)
        p16 = np.ones(3, np.float16)
        native.bn_forward(x16, x16.copy(), p16, p16, m, v, 1e-5)


def test_standardize_affine_parameter_sums_take_a_bounded_number_of_rows() -> None:
    """Regression: each chunk of rows had its own row of parameter sums, and rows longer than a
    chunk made one chunk each (2 rows x m doubles per row: 4x a float32 input); the sums now
    use at most native._SUM_CHUNKS chunks, fixed by the shape."""
    assert len(native._row_chunks(1000, 70000, native._SUM_CHUNKS)) == native._SUM_CHUNKS
    assert len(native._row_chunks(1000, 70000)) == 1000
    assert native._row_chunks(10, 4, native._SUM_CHUNKS) == [(0, 10)]


def test_layer_normalization_with_number_parameters_keeps_float16() -> None:
    """Regression: Python numbers as gamma and beta made a float16 layer normalization float32
    (they went to StandardizeAffine as float32 arrays); they stay scalar functions."""
    x = gh.Variable(np.random.default_rng(45).standard_normal((2, 3)).astype(np.float16))
    assert F.layer_normalization(x, 0.5, 2.0).dtype == np.float16


@built
def test_kernels_refuse_read_only_outputs(compiled: None) -> None:
    """Regression: the kernels wrote through the address of a read-only output (an array over
    ``bytes`` was changed in place); every wrapper now refuses one, naming it."""
    frozen = np.frombuffer(bytes(48), np.float64)  # read-only
    x = np.ones(6)
    with pytest.raises(ValueError, match=r"native\.relu\(\): out is read-only"):
        native.relu(x, frozen)
    with pytest.raises(ValueError, match=r"native\.standardize\(\): y is read-only"):
        native.standardize(x, frozen, 3, 1e-5)
    xb = np.ones((2, 3, 8))
    mean, var = np.zeros(3), np.ones(3)
    with pytest.raises(ValueError, match=r"native\.bn_forward\(\): mean is read-only"):
        native.bn_forward(xb, None, None, None, np.frombuffer(bytes(24)), var, 1e-5)
    with pytest.raises(ValueError, match=r"native\.bn_backward\(\): g is needed"):
        native.bn_backward(xb, None, None, None, mean, var, mean, var, 1e-5)
    assert frozen.tobytes() == bytes(48)
