"""``F.deconvolution_2d`` with W of another float dtype than x in gradhub's chainer layer:
computed with numpy's promotion and cast to x's dtype, as chainer 7.8.1 (before: refused with
TypeError); b must still have x's dtype, except with ``chainer.config.type_check`` False (as
in gradient_check's numerical gradients), where it is added with numpy's promotion, as chainer
(before: TypeError). Values recorded from chainer 7.8.1."""

from __future__ import annotations

import gradhub_compat.chainer.functions as F
import numpy as np
import pytest
from gradhub_compat import chainer


def _data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rs = np.random.RandomState(0)
    x = rs.rand(2, 3, 3, 2)
    W = rs.rand(3, 4, 3, 3).astype(np.float32)
    b = rs.rand(4)
    return x, W, b


@pytest.mark.parametrize(
    ("xd", "wd", "y_sum", "gx_sum", "gw_sum"),
    [
        # chainer 7.8.1: sums of y, x.grad, W.grad (y.grad ones; b.grad sums to 120)
        (np.float64, np.float32, 247.93167158152875, 319.7560384683311, 374.48096),
        (np.float32, np.float64, 247.93167, 319.756, 374.4809286594391),
    ],
)
def test_deconvolution_2d_mixed_dtypes(
    xd: type, wd: type, y_sum: float, gx_sum: float, gw_sum: float
) -> None:
    x, W, b = _data()
    xv = chainer.Variable(x.astype(xd))
    Wv = chainer.Variable(W.astype(wd))
    bv = chainer.Variable(b.astype(xd))
    y = F.deconvolution_2d(xv, Wv, bv, stride=2, pad=1)
    assert y.dtype == xd  # chainer 7.8.1: x's dtype
    y.grad = np.ones_like(y.array)
    y.backward()
    assert xv.grad.dtype == xd and Wv.grad.dtype == wd and bv.grad.dtype == xd
    rtol = 1e-12 if xd == np.float64 else 1e-6
    np.testing.assert_allclose(float(y.array.sum()), y_sum, rtol=rtol)
    np.testing.assert_allclose(float(xv.grad.sum()), gx_sum, rtol=rtol)
    np.testing.assert_allclose(float(Wv.grad.sum()), gw_sum, rtol=1e-6)
    np.testing.assert_allclose(float(bv.grad.sum()), 120.0)


def test_deconvolution_2d_mixed_dtypes_match_cast_weights() -> None:
    # independent: W cast to x's dtype first gives the same float64 result
    x, W, _ = _data()
    y = F.deconvolution_2d(x, W, stride=2, pad=1)
    ref = F.deconvolution_2d(x, W.astype(np.float64), stride=2, pad=1)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.array, ref.array, rtol=1e-12)


def test_deconvolution_2d_bias_of_other_dtype_refused() -> None:
    # chainer 7.8.1: InvalidType (in_types[2].dtype == in_types[0].dtype)
    x, W, b = _data()
    with pytest.raises(TypeError, match="deconvolution_2d"):
        F.deconvolution_2d(x, W, b.astype(np.float32), stride=2, pad=1)


def test_deconvolution_2d_bias_of_other_dtype_without_type_check() -> None:
    W = np.random.RandomState(1).rand(3, 6, 3, 3).astype(np.float32)
    b = np.random.RandomState(2).rand(6).astype(np.float32)
    x = np.random.RandomState(3).rand(2, 3, 3, 2)
    with chainer.using_config("type_check", False):
        y = F.deconvolution_2d(x, W, b, stride=2, pad=1)
        y2 = F.deconvolution_2d(
            x.astype(np.float32), W.astype(np.float64), b.astype(np.float64), stride=2, pad=1
        )
    # chainer 7.8.1: float64 306.0983609515671 and float32 306.0983581542969 (x's dtype)
    assert y.dtype == np.float64 and y2.dtype == np.float32
    np.testing.assert_allclose(float(y.array.sum()), 306.0983609515671, rtol=1e-13)
    np.testing.assert_allclose(float(y2.array.sum()), 306.0983581542969, rtol=1e-6)


def test_deconvolution_nd_bias_of_other_dtype_without_type_check() -> None:
    W = np.random.RandomState(1).rand(2, 3, 2, 2, 2).astype(np.float32).astype(np.float64)
    b = np.random.RandomState(2).rand(3).astype(np.float32)
    x = np.random.RandomState(3).rand(1, 2, 2, 2, 2)
    with chainer.using_config("type_check", False):
        y = F.deconvolution_nd(x, W, b, stride=2)
    # chainer 7.8.1: float64, sum 147.72976422136404
    assert y.dtype == np.float64
    np.testing.assert_allclose(float(y.array.sum()), 147.72976422136404, rtol=1e-13)
