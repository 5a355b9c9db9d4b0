"""gradhub-nn-ops: discrete Fourier transforms (nnabla's ``FFT``, ``IFFT``, ``STFT``, ``ISTFT``).

Complex signals are real arrays whose last axis holds the real and imaginary parts (nnabla's
layout, ``x[..., 0]`` and ``x[..., 1]``). The kernels call ``xp.fft`` (numpy's or CuPy's), and
each rule is the other transform (the adjoint of a DFT is its inverse times the size), so both
are differentiable to any order. ``STFT`` and ``ISTFT`` are composites of registered functions
(``Pad``, ``Gather`` of the frames, ``BatchMatmul`` with the windowed DFT matrices, the
overlap-add as sums of padded pieces).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub import Sample, Variable, as_variable
from gradhub.ops import call

from .math import int_arg


def _check(fn: str, shape: tuple[int, ...], signal_ndim: Any) -> tuple[int, ...]:
    """The signal axes of the complex array (``x`` without its last axis)."""
    sd = int_arg(fn, "signal_ndim", signal_ndim)
    if sd not in (1, 2, 3):
        raise ValueError(f"{fn}: signal_ndim must be 1, 2 or 3, got {sd}")
    if len(shape) < sd + 1 or shape[-1] != 2:
        raise ValueError(
            f"{fn}: x of shape {tuple(shape)} must be (..., {', '.join(['N'] * sd)}, 2) "
            "(the last axis: real and imaginary parts)"
        )
    nd = len(shape) - 1
    return tuple(range(nd - sd, nd))


def _transform(fn: str, inverse: bool) -> Any:
    def kernel(xp: Any, x: Any, signal_ndim: int = 1, normalized: bool = False) -> Any:
        axes = _check(fn, tuple(x.shape), signal_ndim)
        c = x[..., 0] + 1j * x[..., 1]
        norm = "ortho" if normalized else "backward"
        y = (xp.fft.ifftn if inverse else xp.fft.fftn)(c, axes=axes, norm=norm)
        dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
        return xp.stack([y.real, y.imag], axis=-1).astype(dt, copy=False)

    kernel.__name__ = f"_{fn}"
    return kernel


def _size(in_shape: Any, signal_ndim: int) -> int:
    return math.prod(int(n) for n in tuple(in_shape)[-1 - signal_ndim : -1])


def _fft_bw(gy, inputs, in_shapes, outputs, out_shapes, signal_ndim, normalized):  # type: ignore[no-untyped-def]
    # y = F x: dx = F^H g = n IFFT(g) (unitary: IFFT(g))
    g = call("IFFT", gy[0], signal_ndim=signal_ndim, normalized=normalized)
    return [g if normalized else call("MulScalar", g, val=float(_size(in_shapes[0], signal_ndim)))]


def _ifft_bw(gy, inputs, in_shapes, outputs, out_shapes, signal_ndim, normalized):  # type: ignore[no-untyped-def]
    # y = F^-1 x = F^H x / n: dx = F g / n (unitary: FFT(g))
    g = call("FFT", gy[0], signal_ndim=signal_ndim, normalized=normalized)
    if normalized:
        return [g]
    return [call("MulScalar", g, val=1.0 / _size(in_shapes[0], signal_ndim))]


def _samples(rng: np.random.Generator) -> Iterator[Sample]:
    n = rng.standard_normal
    yield Sample((n((2, 5, 2)),), {"signal_ndim": 1, "normalized": False}, name="1-d, batch")
    yield Sample((n((3, 4, 2)),), {"signal_ndim": 2, "normalized": True}, name="2-d, unitary")
    yield Sample((n((2, 3, 4, 2)),), {"signal_ndim": 2, "normalized": False}, name="2-d, batch")
    yield Sample((n((2, 2, 3, 2)),), {"signal_ndim": 3, "normalized": False}, name="3-d")


def _ref(inverse: bool) -> Any:
    def ref(x: np.ndarray, signal_ndim: int = 1, normalized: bool = False) -> np.ndarray:
        c = x[..., 0] + 1j * x[..., 1]
        axes = tuple(range(c.ndim - signal_ndim, c.ndim))
        f = np.fft.ifftn if inverse else np.fft.fftn
        y = f(c, axes=axes, norm="ortho" if normalized else None)
        return np.stack([y.real, y.imag], axis=-1)

    return ref


_WINDOWS = ("hanning", "hamming", "rectangular")


def _window(kind: str, window_size: int, fft_size: int) -> np.ndarray:
    """nnabla's periodic window of ``window_size`` centered in ``fft_size`` zeros."""
    k = np.arange(window_size)
    if kind == "hanning":
        w = 0.5 - 0.5 * np.cos(2 * np.pi * k / window_size)
    elif kind == "hamming":
        w = 0.54 - 0.46 * np.cos(2 * np.pi * k / window_size)
    else:
        w = np.ones(window_size)
    out = np.zeros(fft_size)
    off = (fft_size - window_size) // 2
    out[off : off + window_size] = w
    return out


def _stft_args(
    x_shape: tuple[int, ...],
    window_size: Any,
    stride: Any,
    fft_size: Any,
    window_type: Any,
    pad_mode: Any,
) -> tuple[int, int, int]:
    ws = int_arg("stft", "window_size", window_size)
    st = int_arg("stft", "stride", stride)
    fs = int_arg("stft", "fft_size", fft_size)
    if len(x_shape) != 2:
        raise ValueError(f"stft: x of shape {tuple(x_shape)} must be (B, L)")
    if not 0 < ws <= fs or st < 1:
        raise ValueError(
            f"stft: need 0 < window_size <= fft_size and stride >= 1, got window_size={ws}, "
            f"fft_size={fs}, stride={st}"
        )
    if window_type not in _WINDOWS:
        raise ValueError(f"stft: window_type must be one of {_WINDOWS}, got {window_type!r}")
    if pad_mode not in ("reflect", "constant"):
        raise ValueError(f"stft: pad_mode must be 'reflect' or 'constant', got {pad_mode!r}")
    return ws, st, fs


def stft(
    x: Any,
    window_size: int,
    stride: int,
    fft_size: int,
    window_type: str = "hanning",
    center: bool = True,
    pad_mode: str = "reflect",
    as_istft_backward: bool = False,
) -> tuple[Variable, Variable]:
    r"""stft(x, window_size, stride, fft_size, window_type='hanning', center=True,
    pad_mode='reflect', as_istft_backward=False): the short-time Fourier transform of the
    signals ``x`` (``(B, L)``), as nnabla's ``F.stft``: the real and imaginary parts
    ``(B, fft_size // 2 + 1, frames)``.

    With ``center`` the signals are padded by ``fft_size // 2`` on both sides (``pad_mode``
    ``"reflect"`` or ``"constant"`` zeros); frame ``t`` is ``x[t stride : t stride + fft_size]``
    times the periodic window (``"hanning"`` :math:`0.5 - 0.5\cos(2\pi k/W)`, ``"hamming"``
    :math:`0.54 - 0.46\cos(2\pi k/W)` or ``"rectangular"``) of ``window_size`` centered in
    ``fft_size``, and its one-sided DFT gives the output column. Composed of ``Pad``, ``Gather``
    and ``BatchMatmul`` with the windowed DFT matrices, so differentiable to any order.
    ``as_istft_backward=True`` raises NotImplementedError (see docs/migration-nnabla.md).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> yr, yi = F.stft(gh.Variable(np.ones((1, 8))), 4, 4, 4, window_type="rectangular")
        >>> yr.shape, bool(np.allclose(yr.d[0, :, 0], [4.0, 0.0, 0.0]))
        ((1, 3, 3), True)
    """
    x = as_variable(x)
    ws, st, fs = _stft_args(tuple(x.shape), window_size, stride, fft_size, window_type, pad_mode)
    if as_istft_backward:
        raise NotImplementedError(
            "stft: as_istft_backward=True is not supported; see docs/migration-nnabla.md"
        )
    if center:
        half = fs // 2
        x = call("Pad", x, pad_width=(half, half), mode=pad_mode)
    length = int(x.shape[1])
    if length < fs:
        raise ValueError(f"stft: the (padded) signals of length {length} are shorter than fft_size")
    nf = (length - fs) // st + 1
    xp = x.device.xp
    idx = np.arange(nf)[:, None] * st + np.arange(fs)[None, :]
    frames = call("Gather", x, Variable.leaf(xp.asarray(idx)), axis=1)  # (B, nf, fs)
    w = _window(window_type, ws, fs)
    k = np.arange(fs // 2 + 1)
    ang = 2 * np.pi * np.outer(np.arange(fs), k) / fs
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    outs = []
    for basis in (np.cos(ang), -np.sin(ang)):
        m = Variable.leaf(xp.asarray((w[:, None] * basis).astype(dt)))
        y = call("BatchMatmul", frames, m)  # (B, nf, K)
        outs.append(call("Transpose", y, axes=(0, 2, 1)))
    return outs[0], outs[1]


def _stft_ref(
    x: np.ndarray,
    window_size: int,
    stride: int,
    fft_size: int,
    window_type: str = "hanning",
    center: bool = True,
    pad_mode: str = "reflect",
    as_istft_backward: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    if center:
        half = fft_size // 2
        x = np.pad(
            x, ((0, 0), (half, half)), mode="reflect" if pad_mode == "reflect" else "constant"
        )
    w = _window(window_type, window_size, fft_size)
    nf = (x.shape[1] - fft_size) // stride + 1
    fr = np.stack([x[:, t * stride : t * stride + fft_size] for t in range(nf)], axis=1) * w
    y = np.fft.rfft(fr, axis=-1)
    return y.real.transpose(0, 2, 1), y.imag.transpose(0, 2, 1)


def _stft_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.standard_normal((2, 12))
    yield Sample((x,), {"window_size": 4, "stride": 2, "fft_size": 4}, name="hanning, reflect")
    yield Sample(
        (x,),
        {
            "window_size": 3,
            "stride": 3,
            "fft_size": 6,
            "window_type": "hamming",
            "pad_mode": "constant",
        },
        name="hamming, constant pad, window inside fft_size",
    )
    yield Sample(
        (x,),
        {
            "window_size": 5,
            "stride": 4,
            "fft_size": 5,
            "window_type": "rectangular",
            "center": False,
        },
        name="rectangular, odd size, no centering",
    )


def _istft_norm(window_size: int, stride: int, fft_size: int, kind: str, nf: int) -> np.ndarray:
    """The overlap-added squared window (the denominator of the inverse)."""
    w = _window(kind, window_size, fft_size)
    norm = np.zeros((nf - 1) * stride + fft_size)
    for t in range(nf):
        norm[t * stride : t * stride + fft_size] += w * w
    return norm


def istft(
    y_r: Any,
    y_i: Any,
    window_size: int,
    stride: int,
    fft_size: int,
    window_type: str = "hanning",
    center: bool = True,
    pad_mode: str = "reflect",
    as_stft_backward: bool = False,
) -> Variable:
    r"""istft(y_r, y_i, window_size, stride, fft_size, window_type='hanning', center=True,
    pad_mode='reflect', as_stft_backward=False): the inverse of :func:`stft`, as nnabla's
    ``F.istft``: the signals ``(B, L)`` of the spectra ``y_r + i y_i`` (``(B, fft_size // 2 + 1,
    frames)``).

    Each frame is the inverse one-sided DFT of its column times the window; the frames are
    overlap-added and divided by the overlap-added squared window; with ``center`` the
    ``fft_size // 2`` samples at both ends are dropped. As nnabla's, ``fft_size`` must be a
    multiple of ``stride``, ``pad_mode`` must be ``"constant"`` (nnabla ignores it and refuses
    another value, its default included) and the squared windows must overlap everywhere kept
    (NOLA), else ValueError. Composed of ``BatchMatmul`` with the windowed inverse DFT matrices,
    ``Pad`` and sums (the overlap-add), so differentiable to any order.
    ``as_stft_backward=True`` raises NotImplementedError (see docs/migration-nnabla.md).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.sin(np.arange(16.0)).reshape(1, 16))
        >>> yr, yi = F.stft(x, 8, 4, 8, pad_mode="constant")
        >>> z = F.istft(yr, yi, 8, 4, 8, pad_mode="constant")
        >>> bool(np.allclose(z.d, x.d))
        True
    """
    y_r, y_i = as_variable(y_r), as_variable(y_i)
    ws = int_arg("istft", "window_size", window_size)
    st = int_arg("istft", "stride", stride)
    fs = int_arg("istft", "fft_size", fft_size)
    if as_stft_backward:
        raise NotImplementedError(
            "istft: as_stft_backward=True is not supported; see docs/migration-nnabla.md"
        )
    if pad_mode != "constant":
        raise ValueError(
            f"istft: pad_mode must be 'constant' (got {pad_mode!r}): it has no effect on the "
            "inverse, and nnabla refuses another value"
        )
    if window_type not in _WINDOWS:
        raise ValueError(f"istft: window_type must be one of {_WINDOWS}, got {window_type!r}")
    if not 0 < ws <= fs or st < 1 or fs % st:
        raise ValueError(
            f"istft: need 0 < window_size <= fft_size and fft_size a multiple of stride, got "
            f"window_size={ws}, stride={st}, fft_size={fs}"
        )
    k = fs // 2 + 1
    if y_r.ndim != 3 or tuple(y_r.shape) != tuple(y_i.shape) or y_r.shape[1] != k:
        raise ValueError(
            f"istft: y_r and y_i of shapes {tuple(y_r.shape)}, {tuple(y_i.shape)} must both be "
            f"(B, fft_size // 2 + 1 = {k}, frames)"
        )
    b, nf = int(y_r.shape[0]), int(y_r.shape[2])
    length = (nf - 1) * st + fs
    norm = _istft_norm(ws, st, fs, window_type, nf)
    lo, hi = (fs // 2, length - fs // 2) if center else (0, length)
    if hi <= lo or (norm[lo:hi] < 1e-11).any():
        raise ValueError(
            "istft: the nonzero overlap-add (NOLA) condition is not met: the squared windows "
            "add up to 0 somewhere in the output"
        )
    xp = y_r.device.xp
    dt = y_r.dtype if y_r.dtype.kind == "f" else np.dtype(np.float64)
    c = np.full(k, 2.0)
    c[0] = 1.0
    if fs % 2 == 0:
        c[-1] = 1.0
    ang = 2 * np.pi * np.outer(np.arange(k), np.arange(fs)) / fs
    w = _window(window_type, ws, fs)
    frames = None
    for part, basis in ((y_r, np.cos(ang)), (y_i, -np.sin(ang))):
        m = Variable.leaf(xp.asarray((c[:, None] * basis * w[None, :] / fs).astype(dt)))
        f = call("BatchMatmul", part, m, transpose_a=True)  # (B, nf, fs)
        frames = f if frames is None else frames + f
    r = fs // st
    chunks = call("Reshape", frames, shape=(b, nf, r, st))
    out = None
    for q in range(r):
        piece = call("GetItem", chunks, key=(slice(None), slice(None), q))  # (B, nf, st)
        piece = call("Pad", piece, pad_width=(q, r - 1 - q, 0, 0), mode="constant")
        out = piece if out is None else out + piece
    signal = call("Reshape", out, shape=(b, length))
    inv = np.where(norm > 1e-11, 1.0 / np.where(norm > 1e-11, norm, 1.0), 0.0)
    signal = signal * Variable.leaf(xp.asarray(inv.astype(dt)))
    if center:
        signal = call("GetItem", signal, key=(slice(None), slice(lo, hi)))
    return signal


def _istft_ref(
    y_r: np.ndarray,
    y_i: np.ndarray,
    window_size: int,
    stride: int,
    fft_size: int,
    window_type: str = "hanning",
    center: bool = True,
    pad_mode: str = "reflect",
    as_stft_backward: bool = False,
) -> np.ndarray:
    fr = np.fft.irfft((y_r + 1j * y_i).transpose(0, 2, 1), n=fft_size, axis=-1)
    w = _window(window_type, window_size, fft_size)
    nf = fr.shape[1]
    out = np.zeros((fr.shape[0], (nf - 1) * stride + fft_size))
    for t in range(nf):
        out[:, t * stride : t * stride + fft_size] += fr[:, t] * w
    norm = _istft_norm(window_size, stride, fft_size, window_type, nf)
    out = out / np.where(norm > 1e-11, norm, np.inf)
    return out[:, fft_size // 2 : out.shape[1] - fft_size // 2] if center else out


def _istft_samples(rng: np.random.Generator) -> Iterator[Sample]:
    n = rng.standard_normal
    yield Sample(
        (n((2, 3, 5)), n((2, 3, 5))),
        {"window_size": 4, "stride": 2, "fft_size": 4, "pad_mode": "constant"},
        name="hanning, centered",
    )
    yield Sample(
        (n((1, 4, 4)), n((1, 4, 4))),
        {
            "window_size": 6,
            "stride": 3,
            "fft_size": 6,
            "window_type": "rectangular",
            "center": False,
            "pad_mode": "constant",
        },
        name="rectangular, not centered",
    )


def register_functions(register: Any) -> None:
    """Register the Fourier transforms."""
    f = register.function
    f(
        "FFT",
        _transform("fft", False),
        attrs={"signal_ndim": 1, "normalized": False},
        rule=_fft_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_samples,
        reference=_ref(False),
        doc=r"""fft(x, signal_ndim, normalized=False): the complex-to-complex DFT over the last
``signal_ndim`` (1, 2 or 3) axes of the signal (nnabla ``F.fft``),
:math:`X_k = \sum_n x_n e^{-2\pi i \sum_d k_d n_d / N_d}`, times :math:`1/\sqrt{N}` with
``normalized`` (unitary).

``x`` has shape ``(..., N_1, ..., N_d, 2)``: the last axis holds the real and imaginary parts,
the axes before the signal's are batch axes. Computed with ``xp.fft.fftn``; the gradient is
``N ifft(dy)`` (``ifft(dy)`` when normalized), so differentiable to any order.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [4.0, 0.0]]))
    >>> F.fft(x, signal_ndim=1).d
    array([[10.,  0.],
           [-2.,  2.],
           [-2.,  0.],
           [-2., -2.]])
""",
    )
    f(
        "IFFT",
        _transform("ifft", True),
        attrs={"signal_ndim": 1, "normalized": False},
        rule=_ifft_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_samples,
        reference=_ref(True),
        doc=r"""ifft(x, signal_ndim, normalized=False): the inverse DFT over the last
``signal_ndim`` axes of the signal (nnabla ``F.ifft``),
:math:`x_n = \frac{1}{N} \sum_k X_k e^{2\pi i \sum_d k_d n_d / N_d}`, with :math:`1/\sqrt{N}`
instead of :math:`1/N` when ``normalized``.

Same layout as :func:`fft` (real and imaginary parts on the last axis). The gradient is
``fft(dy) / N`` (``fft(dy)`` when normalized), so differentiable to any order.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> y = F.fft(gh.Variable(np.array([[1.0, 2.0], [3.0, -1.0]])), signal_ndim=1)
    >>> F.ifft(y, signal_ndim=1).d
    array([[ 1.,  2.],
           [ 3., -1.]])
""",
    )
    register.composite("STFT", stft, snake="stft", samples=_stft_samples, reference=_stft_ref)
    register.composite("ISTFT", istft, snake="istft", samples=_istft_samples, reference=_istft_ref)
