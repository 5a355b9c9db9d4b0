"""FFT and IFFT of gradhub-nn-ops: values against numpy.fft, gradients to order 2 in float64
(the adjoint relations), vmap, dtypes and argument checks."""

from __future__ import annotations

from typing import Any

import gradhub as gh
import gradhub.func as ghf
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck

RNG = np.random.default_rng(17)


def _c(x: np.ndarray) -> np.ndarray:
    return x[..., 0] + 1j * x[..., 1]


def _r(c: np.ndarray) -> np.ndarray:
    return np.stack([c.real, c.imag], axis=-1)


@pytest.mark.parametrize("sd", [1, 2, 3])
@pytest.mark.parametrize("normalized", [False, True])
def test_values_against_numpy(sd: int, normalized: bool) -> None:
    x = RNG.standard_normal((2, 3, 4, 5, 2))
    axes = tuple(range(4 - sd, 4))
    norm = "ortho" if normalized else None
    y = F.fft(gh.Variable(x), signal_ndim=sd, normalized=normalized).d
    np.testing.assert_allclose(y, _r(np.fft.fftn(_c(x), axes=axes, norm=norm)), atol=1e-12)
    z = F.ifft(gh.Variable(x), signal_ndim=sd, normalized=normalized).d
    np.testing.assert_allclose(z, _r(np.fft.ifftn(_c(x), axes=axes, norm=norm)), atol=1e-12)


def test_round_trip_and_float32() -> None:
    x = RNG.standard_normal((2, 4, 3, 2)).astype(np.float32)
    for normalized in (False, True):
        y = F.fft(gh.Variable(x), 2, normalized)
        assert y.dtype == np.float32
        np.testing.assert_allclose(F.ifft(y, 2, normalized).d, x, atol=1e-5)


@pytest.mark.parametrize("name", ["fft", "ifft"])
@pytest.mark.parametrize("normalized", [False, True])
def test_gradcheck_order_2(name: str, normalized: bool) -> None:
    x = RNG.standard_normal((2, 3, 2))
    fn = getattr(F, name)
    assert gradcheck(lambda v: fn(v, signal_ndim=2, normalized=normalized) ** 2, [x], order=2)


def test_gradient_is_the_adjoint() -> None:
    x = gh.Variable(RNG.standard_normal((6, 2)))
    g = RNG.standard_normal((6, 2))
    (gx,) = gh.grad([F.fft(x, 1)], [x], [g])
    # <F x, g> = Re sum conj(g) F x = <x, F^H g>, F^H g = 6 ifft(g)
    np.testing.assert_allclose(gx.d, _r(6 * np.fft.ifft(_c(g))), atol=1e-12)


def test_vmap() -> None:
    x = RNG.standard_normal((3, 2, 4, 2))
    got = ghf.vmap(lambda v: F.fft(v, signal_ndim=1))(gh.Variable(x)).d
    np.testing.assert_allclose(got, F.fft(gh.Variable(x), signal_ndim=1).d, atol=1e-12)


def test_checks() -> None:
    with pytest.raises(ValueError, match="fft: signal_ndim must be 1, 2 or 3"):
        F.fft(gh.Variable(np.ones((2, 2, 2, 2, 2))), signal_ndim=4)
    with pytest.raises(ValueError, match=r"ifft: x of shape \(3, 3\)"):
        F.ifft(gh.Variable(np.ones((3, 3))), signal_ndim=1)
    with pytest.raises(TypeError, match="fft: signal_ndim must be an int"):
        F.fft(gh.Variable(np.ones((3, 2))), signal_ndim=1.5)


def _stft_loop(x: np.ndarray, ws: int, st: int, fs: int, kind: str, center: bool, pad: str) -> Any:
    if center:
        x = np.pad(
            x, ((0, 0), (fs // 2, fs // 2)), mode="reflect" if pad == "reflect" else "constant"
        )
    n = np.arange(ws)
    shape = {"hanning": 0.5 - 0.5 * np.cos(2 * np.pi * n / ws)}
    shape["hamming"] = 0.54 - 0.46 * np.cos(2 * np.pi * n / ws)
    shape["rectangular"] = np.ones(ws)
    w = np.zeros(fs)
    w[(fs - ws) // 2 : (fs - ws) // 2 + ws] = shape[kind]
    cols = []
    t = 0
    while t * st + fs <= x.shape[1]:
        cols.append(np.fft.rfft(x[:, t * st : t * st + fs] * w, axis=-1))
        t += 1
    y = np.stack(cols, axis=-1)
    return y.real, y.imag


@pytest.mark.parametrize(
    "args",
    [
        (8, 4, 8, "hanning", True, "reflect"),
        (6, 3, 8, "hamming", True, "constant"),
        (7, 5, 7, "rectangular", False, "reflect"),
    ],
)
def test_stft_against_rfft(args: tuple[Any, ...]) -> None:
    x = RNG.standard_normal((2, 30))
    yr, yi = F.stft(gh.Variable(x), *args)
    rr, ri = _stft_loop(x, *args)
    np.testing.assert_allclose(yr.d, rr, atol=1e-12)
    np.testing.assert_allclose(yi.d, ri, atol=1e-12)


def test_stft_gradcheck_and_checks() -> None:
    x = RNG.standard_normal((1, 10))

    def f(v: gh.Variable) -> gh.Variable:
        yr, yi = F.stft(v, 4, 3, 4)
        return yr * yr + yi

    assert gradcheck(f, [x], order=2)
    with pytest.raises(NotImplementedError, match="migration-nnabla"):
        F.stft(gh.Variable(x), 4, 2, 4, as_istft_backward=True)
    with pytest.raises(ValueError, match="stft: window_type must be"):
        F.stft(gh.Variable(x), 4, 2, 4, window_type="blackman")
    with pytest.raises(ValueError, match="stft: need 0 < window_size <= fft_size"):
        F.stft(gh.Variable(x), 8, 2, 4)


@pytest.mark.parametrize(
    "args",
    [(8, 4, 8, "hanning", True), (6, 2, 8, "hamming", True), (8, 4, 8, "rectangular", False)],
)
def test_istft_inverts_stft_and_matches_irfft(args: tuple[Any, ...]) -> None:
    x = RNG.standard_normal((2, 24))
    yr, yi = F.stft(gh.Variable(x), *args, pad_mode="constant")
    z = F.istft(yr, yi, *args, pad_mode="constant")
    n = z.shape[1]
    np.testing.assert_allclose(z.d, x[:, :n], atol=1e-12)
    # an arbitrary spectrum: irfft of each column, windowed, overlap-added, normalized
    ws, st, fs, kind, center = args
    sr, si = RNG.standard_normal((2, 2, fs // 2 + 1, 5))
    got = F.istft(gh.Variable(sr), gh.Variable(si), *args, pad_mode="constant").d
    frames = np.fft.irfft((sr + 1j * si).transpose(0, 2, 1), n=fs, axis=-1)
    k = np.arange(ws)
    shape = {
        "hanning": 0.5 - 0.5 * np.cos(2 * np.pi * k / ws),
        "hamming": 0.54 - 0.46 * np.cos(2 * np.pi * k / ws),
        "rectangular": np.ones(ws),
    }[kind]
    w = np.zeros(fs)
    w[(fs - ws) // 2 : (fs - ws) // 2 + ws] = shape
    out, norm = np.zeros((2, 4 * st + fs)), np.zeros(4 * st + fs)
    for t in range(5):
        out[:, t * st : t * st + fs] += frames[:, t] * w
        norm[t * st : t * st + fs] += w * w
    lo, hi = (fs // 2, out.shape[1] - fs // 2) if center else (0, out.shape[1])
    np.testing.assert_allclose(got, out[:, lo:hi] / norm[lo:hi], atol=1e-12)


def test_istft_gradcheck_and_checks() -> None:
    yr, yi = RNG.standard_normal((2, 1, 3, 4))
    assert gradcheck(
        lambda a, b: F.istft(a, b, 4, 2, 4, pad_mode="constant") ** 2, [yr, yi], order=2
    )
    with pytest.raises(NotImplementedError, match="migration-nnabla"):
        F.istft(
            gh.Variable(yr), gh.Variable(yi), 4, 2, 4, pad_mode="constant", as_stft_backward=True
        )
    with pytest.raises(ValueError, match=r"istft: y_r and y_i of shapes"):
        F.istft(gh.Variable(yr), gh.Variable(yi[:, :2]), 4, 2, 4, pad_mode="constant")
