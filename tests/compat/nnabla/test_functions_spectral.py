"""nnabla's F.fft and F.ifft: nnabla's layout (real and imaginary parts on the last axis),
normalizations and gradients. nnabla 1.39 computes them only on CUDA (its CPU kernel raises
"FFT forward not implemented in CPU yet"), so the expected values are numpy.fft's formulas, the
ones nnabla's documentation gives."""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest

RNG = np.random.default_rng(23)


def _c(x: np.ndarray) -> np.ndarray:
    return x[..., 0].astype(np.float64) + 1j * x[..., 1]


def test_the_documented_round_trip() -> None:
    # nnabla's docstring example: a batched 2-D FFT and IFFT (batch 2, data 4x3)
    x_data = RNG.random((2, 4, 3)) + 1j * RNG.random((2, 4, 3))
    x = nn.Variable.from_numpy_array(np.stack([np.real(x_data), np.imag(x_data)], axis=3))
    y = F.fft(x, signal_ndim=2, normalized=True)
    z = F.ifft(y, signal_ndim=2, normalized=True)
    z.forward()
    assert z.d.dtype == np.float32
    np.testing.assert_allclose(z.d[..., 0] + 1j * z.d[..., 1], x_data, atol=1e-6)
    np.testing.assert_allclose(
        _c(y.d), np.fft.fftn(x_data, axes=(1, 2), norm="ortho"), rtol=1e-5, atol=1e-6
    )


def test_unnormalized_formulas_and_gradients() -> None:
    x = RNG.standard_normal((3, 5, 2)).astype(np.float32)
    g = RNG.standard_normal((3, 5, 2)).astype(np.float32)
    xv = nn.Variable.from_numpy_array(x, need_grad=True)
    y = F.fft(xv, 1)
    y.forward()
    np.testing.assert_allclose(_c(y.d), np.fft.fft(_c(x)), rtol=1e-5, atol=1e-5)
    xv.grad.zero()
    y.backward(g)
    np.testing.assert_allclose(_c(xv.g), 5 * np.fft.ifft(_c(g)), rtol=1e-5, atol=1e-5)
    z = F.ifft(xv, 1)
    z.forward()
    np.testing.assert_allclose(_c(z.d), np.fft.ifft(_c(x)), rtol=1e-5, atol=1e-6)
    xv.grad.zero()
    z.backward(g)
    np.testing.assert_allclose(_c(xv.g), np.fft.fft(_c(g)) / 5, rtol=1e-5, atol=1e-6)
    assert z.parent.name == "IFFT"
    assert z.parent.info.args == {"signal_ndim": 1, "normalized": False}


def test_stft_as_nnabla() -> None:
    x = np.array([[0.5, -1.0, 2.0, 1.5, 0.25, -0.75, 1.0, 0.3]], np.float32)
    xv = nn.Variable.from_numpy_array(x, need_grad=True)
    yr, yi = F.stft(xv, 4, 2, 4)
    s = F.sum(yr * yr) + F.sum(yi * 0.5)
    s.forward()
    xv.grad.zero()
    s.backward()
    # nnabla 1.39 (hanning window, centered with reflection)
    assert yr.shape == yi.shape == (1, 3, 5)
    np.testing.assert_allclose(
        yr.d.ravel(),
        [-0.5, 2.25, 0.625, 0.775, 0.775, -0.5, -2.0, -0.25, -1.0, -1.0]
        + [1.5, 1.75, -0.125, 1.225, 1.225],
        rtol=1e-5,
        atol=1e-6,
    )
    np.testing.assert_allclose(
        yi.d.ravel(),
        [0.0] * 6 + [1.25, -1.125, 0.525, -0.525] + [0.0] * 5,
        rtol=1e-5,
        atol=1e-6,
    )
    np.testing.assert_allclose(
        xv.g.ravel(), [3.0, -3.75, 12.0, 1.25, 1.5, 0.1, 12.0, -0.9], rtol=1e-5, atol=1e-5
    )


def test_istft_as_nnabla() -> None:
    yr = np.array([[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [1.0, 0.3, -0.2]]], np.float32)
    yi = np.array([[[0.1, 0.4, -0.3], [0.2, -0.6, 0.9], [0.5, -0.1, 0.7]]], np.float32)
    a = nn.Variable.from_numpy_array(yr, need_grad=True)
    b = nn.Variable.from_numpy_array(yi, need_grad=True)
    z = F.istft(a, b, 4, 2, 4, "hanning", True, "constant")
    z.forward()
    a.grad.zero()
    b.grad.zero()
    z.backward(np.array([[1.0, -2.0, 0.5, 3.0]], np.float32))
    # nnabla 1.39
    np.testing.assert_allclose(z.d.ravel(), [-0.375, -0.05, -0.3, -0.525], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        a.g.ravel(), [-0.25, 0.375, 0.75, -0.5, -0.25, 0.0, 0.75, -0.125, -0.75], atol=1e-6
    )
    np.testing.assert_allclose(
        b.g.ravel(), [0.0, 0.0, 0.0, -1.0, 2.5, -1.5, 0.0, 0.0, 0.0], atol=1e-6
    )


def test_istft_refuses_what_nnabla_refuses() -> None:
    y = nn.Variable.from_numpy_array(np.zeros((1, 3, 3), np.float32))
    with pytest.raises(ValueError, match="istft: pad_mode must be 'constant'"):
        F.istft(y, y, 4, 2, 4)  # nnabla 1.39: its default pad_mode fails in setup too
    with pytest.raises(ValueError, match="multiple of stride"):
        F.istft(y, y, 4, 3, 4, pad_mode="constant")
    yk = nn.Variable.from_numpy_array(np.zeros((1, 4, 7), np.float32))
    with pytest.raises(ValueError, match="NOLA"):  # nnabla 1.39: the NOLA condition fails
        F.istft(yk, yk, 5, 2, 6, center=False, pad_mode="constant")
