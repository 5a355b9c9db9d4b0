"""gradhub-cuda's convolution and pooling kernels (``gradhub_cuda.kernels``) against references.

* ``_im2col`` (one thread per channel and output position, looping over the kernel offsets) against
  the column matrix built on the host from a zero-padded copy, exactly, for strided, padded and
  dilated geometries;
* MaxPoolingBackward's kernel for windows that do not overlap (one thread per window) against the
  kernel for any windows (one thread per input element), bit for bit: windows tiling the input,
  remainders of rows and columns, padding, strides larger than the kernel, ties, NaN and
  infinite inputs and gradients, negative zeros;
* SoftmaxCrossEntropy's forward kernel with whole-number float labels against integer labels,
  and its errors for labels that are not whole or out of range.

The op matrix (``tests/contracts/test_op_matrix.py``) and the CPU parity test
(``tests/cuda/test_cuda.py``) run both through every function's samples as well. These tests
skip, with one reason, where no usable CUDA device exists.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from cuda_helpers import gpu


def _k() -> Any:
    from gradhub_cuda import kernels

    return kernels


def _im2col_reference(x: np.ndarray, kh: int, kw: int, pad: Any, stride: Any, dil: Any) -> Any:
    n, c, h, w = x.shape
    (ph, pw), (sh, sw), (dh, dw) = pad, stride, dil
    xp = np.zeros((n, c, h + 2 * ph, w + 2 * pw), x.dtype)
    xp[:, :, ph : ph + h, pw : pw + w] = x
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    col = np.empty((c, kh, kw, n, ho, wo), x.dtype)
    for ky in range(kh):
        for kx in range(kw):
            ys, xs = ky * dh, kx * dw
            win = xp[:, :, ys : ys + sh * (ho - 1) + 1 : sh, xs : xs + sw * (wo - 1) + 1 : sw]
            col[:, ky, kx] = win.transpose(1, 0, 2, 3)
    return col.reshape(c * kh * kw, n * ho * wo), (ho, wo)


@gpu
@pytest.mark.parametrize(
    "shape, kernel, pad, stride, dil",
    [
        ((2, 3, 7, 6), (3, 3), (1, 1), (1, 1), (1, 1)),
        ((1, 2, 9, 8), (3, 2), (0, 2), (2, 3), (2, 1)),
        ((3, 1, 5, 5), (1, 1), (0, 0), (1, 1), (1, 1)),
        ((2, 4, 4, 6), (5, 4), (2, 1), (1, 2), (1, 1)),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_im2col_equals_the_host_column_matrix(
    shape: Any, kernel: Any, pad: Any, stride: Any, dil: Any, dtype: Any
) -> None:
    """The column matrix equals the one built on the host from a zero-padded copy."""
    import cupy as cp
    from gradhub_nn_ops import conv

    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    want, out = _im2col_reference(x, *kernel, pad, stride, dil)
    w_shape = (1, shape[1], *kernel)
    geo = conv.conv_geom("convolution", shape, w_shape, 1, pad, stride, dil, 1)
    got = _k()._im2col(cp, cp.asarray(x), *kernel, out, geo)
    np.testing.assert_array_equal(cp.asnumpy(got), want)


def _special(rng: np.random.Generator, shape: Any, dtype: Any) -> np.ndarray:
    """Small integers (ties), with NaN, +-inf and negative zeros sprinkled in."""
    a = rng.integers(-2, 3, shape).astype(dtype)
    flat = a.reshape(-1)
    idx = rng.permutation(flat.size)
    flat[idx[:3]] = np.nan
    flat[idx[3:5]] = np.inf
    flat[idx[5:7]] = -np.inf
    flat[idx[7:10]] = -0.0
    return a


@gpu
@pytest.mark.parametrize(
    "shape, kernel, stride, pad",
    [
        ((2, 3, 8, 6), (2, 2), (2, 2), (0, 0)),  # tiles the input
        ((2, 3, 9, 7), (2, 2), (2, 2), (0, 0)),  # a row and a column left over
        ((1, 2, 8, 8), (2, 3), (3, 4), (0, 0)),  # strides larger than the kernel
        ((2, 2, 7, 7), (3, 3), (3, 3), (1, 1)),  # padding
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pooling_backward_for_disjoint_windows_equals_the_general_kernel(
    shape: Any, kernel: Any, stride: Any, pad: Any, dtype: Any
) -> None:
    """Same bits as the one-thread-per-input kernel, with ties, NaN, inf and -0.0 in x and dy."""
    import cupy as cp

    k = _k()
    rng = np.random.default_rng(5)
    geo = k._pool_geometry("max_pooling_backward", shape, kernel, stride, True, pad, False)
    assert geo is not None and k._pool_module().disjoint_windows(geo)
    for trial in range(3):
        x = cp.asarray(_special(rng, shape, dtype) if trial else rng.standard_normal(shape))
        x = x.astype(dtype)
        dy = cp.asarray(_special(rng, geo.out_shape, dtype))
        got = k.max_pooling_backward(cp, dy, x, kernel, stride, True, pad)
        want = k._pool_launch(cp, "max_pool_backward", dy, x, geo, x.shape, x.dtype)
        g, w = cp.asnumpy(got), cp.asnumpy(want)
        np.testing.assert_array_equal(g, w)
        assert (np.signbit(g) == np.signbit(w)).all()


@gpu
@pytest.mark.parametrize("ldtype", [np.float32, np.float64, np.int32, np.uint8])
def test_softmax_cross_entropy_takes_whole_float_labels(ldtype: Any) -> None:
    """Labels given as floats holding whole numbers (nnabla's label Variables are float) give
    the loss of the same integer labels, bit for bit; a label of 1.5, NaN, -1 or C raises the
    generic kernel's error."""
    import cupy as cp

    k = _k()
    rng = np.random.default_rng(2)
    x = cp.asarray(rng.standard_normal((9, 5)).astype(np.float32))
    t = rng.integers(0, 5, (9, 1))
    want = cp.asnumpy(k.softmax_cross_entropy(cp, x, cp.asarray(t)))
    got = cp.asnumpy(k.softmax_cross_entropy(cp, x, cp.asarray(t.astype(ldtype))))
    np.testing.assert_array_equal(got, want)
    bad_values = [1.5, np.nan, -1, 5] if ldtype in (np.float32, np.float64) else [5]
    for bad in bad_values:
        tb = t.astype(np.float64)
        tb[3, 0] = bad
        if ldtype in (np.int32, np.uint8):
            tb = tb.astype(ldtype)
        with pytest.raises(ValueError, match=r"softmax_cross_entropy\(\): argument 'target'"):
            k.softmax_cross_entropy(cp, x, cp.asarray(tb.astype(ldtype)))
