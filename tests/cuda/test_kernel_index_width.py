"""The two index widths of gradhub-cuda's kernels (``gradhub_cuda.kernels._k``).

Each CUDA source of ``gradhub_cuda.kernels`` is compiled with 32-bit index arithmetic for launches
whose arrays hold fewer than ``NARROW_LIMIT`` elements, and with 64-bit arithmetic otherwise.
Arrays of 2**31 elements do not fit a test, so the 64-bit kernels are checked by lowering the
limit to 0 (every launch takes them) and comparing both widths bit for bit on the same inputs:
convolution, deconvolution, the filter gradient, the max-pooling family and SoftmaxCrossEntropy
with its rule kernel, strided, padded and dilated. The choice itself needs no GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradhub.functions as F
import numpy as np
import pytest
from cuda_helpers import gpu


def _kernels() -> Any:
    return pytest.importorskip("gradhub_cuda.kernels", reason="gradhub-cuda is not installed")


def test_launches_below_the_limit_take_the_32_bit_kernels() -> None:
    """``_narrow`` is true only when every array of a launch is below ``NARROW_LIMIT``."""
    k = _kernels()
    assert k.NARROW_LIMIT == 2**31
    assert k._narrow(0, 1, 2**31 - 1)
    assert not k._narrow(10, 2**31)
    assert not k._narrow(2**40)


def _calls(cp: Any) -> list[tuple[str, Callable[[], Any]]]:
    rng = np.random.default_rng(7)
    k = _kernels()

    def arr(*shape: int, dtype: Any = np.float32) -> Any:
        return cp.asarray(rng.standard_normal(shape).astype(dtype))

    x = arr(3, 4, 11, 9)
    w = arr(5, 4, 3, 2)
    b = arr(5)
    conv = dict(pad=(1, 2), stride=(2, 1), dilation=(1, 2))
    y = k.convolution(cp, x, w, b, **conv)
    xd = arr(2, 5, 6, 7, dtype=np.float64)
    wd = arr(5, 3, 3, 2, dtype=np.float64)
    pool = dict(kernel=(3, 2), stride=(2, 2), pad=(1, 1))
    xp_ = arr(2, 3, 9, 8)
    yp = k.max_pooling(cp, xp_, **pool)
    dis = dict(kernel=(2, 2), stride=(2, 2))
    xm = arr(2, 3, 8, 6)
    ym = k.max_pooling(cp, xm, **dis)
    mask = k.max_pooling_mask(cp, xm, ym, **dis)
    logits = arr(17, 10)
    labels = cp.asarray(rng.integers(0, 10, (17, 1)))
    wide = arr(6, 200, dtype=np.float64)
    wide_t = cp.asarray(rng.integers(0, 200, (6,)))
    return [
        ("Convolution", lambda: k.convolution(cp, x, w, b, **conv)),
        ("Deconvolution", lambda: k.deconvolution(cp, xd, wd, None, pad=(1, 0), stride=(2, 3))),
        (
            "ConvolutionFilterGrad",
            lambda: k.convolution_filter_grad(cp, x, y, kernel=(3, 2), **conv),
        ),
        ("MaxPooling", lambda: k.max_pooling(cp, xp_, **pool)),
        ("MaxPoolingBackward", lambda: k.max_pooling_backward(cp, arr(*yp.shape), xp_, **pool)),
        ("MaxPoolingGather", lambda: k.max_pooling_gather(cp, xp_ * 2, xp_, **pool)),
        ("MaxPoolingBackward, disjoint", lambda: k.max_pooling_backward(cp, ym * 2, xm, **dis)),
        ("MaxPoolingMask", lambda: k.max_pooling_mask(cp, xm, ym, **dis)),
        ("MaskedUnpooling", lambda: k.masked_unpooling(cp, ym * 3, mask, **dis)),
        ("MaskedPooling", lambda: k.masked_pooling(cp, xm, mask, **dis)),
        ("SoftmaxCrossEntropy", lambda: k.softmax_cross_entropy(cp, logits, labels)),
        (
            "SoftmaxCrossEntropy backward",
            lambda: k.softmax_cross_entropy_backward(
                cp, [cp.ones((17, 1), np.float32)], [logits, labels], [], [], []
            )[0],
        ),
        (
            "SoftmaxCrossEntropy backward, 200 classes",
            lambda: k.softmax_cross_entropy_backward(
                cp, [cp.ones((6,), np.float64)], [wide, wide_t], [], [], []
            )[0],
        ),
    ]


@gpu
def test_64_bit_kernels_equal_the_32_bit_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kernel gives the same bits with 32-bit and 64-bit index arithmetic."""
    import cupy as cp

    k = _kernels()
    narrow = [(name, cp.asnumpy(call())) for name, call in _calls(cp)]
    monkeypatch.setattr(k, "NARROW_LIMIT", 0)
    used: list[bool] = []
    real = k._k
    monkeypatch.setattr(k, "_k", lambda narrow=False: used.append(narrow) or real(narrow))
    wide = [(name, cp.asnumpy(call())) for name, call in _calls(cp)]
    assert used and not any(used)
    for (name, a), (_, b) in zip(narrow, wide):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_array_equal(a, b, err_msg=name)


@gpu
def test_the_32_bit_kernels_agree_with_the_cpu() -> None:
    """A strided, padded, dilated convolution and its gradients on ``cuda`` (32-bit kernels)
    agree with the CPU in float64."""
    import gradhub as gh

    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((2, 3, 10, 9))
    w0 = rng.standard_normal((4, 3, 3, 3))

    def run(device: str) -> list[np.ndarray]:
        with gh.context_scope(gh.get_extension_context(device)):
            x = gh.Variable(x0, need_grad=True)
            w = gh.Variable(w0, need_grad=True)
        y = F.convolution(x, w, pad=(1, 1), stride=(2, 1), dilation=(1, 2))
        z = F.max_pooling(y, kernel=(2, 2), stride=(1, 2), pad=(1, 0))
        loss = F.sum(z * z)
        gx, gw = gh.grad([loss], [x, w])
        return [np.asarray(a.to("cpu").d) for a in (z, gx, gw)]

    for a, b in zip(run("cuda"), run("cpu")):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
