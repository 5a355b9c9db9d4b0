"""DeformableConvolution of gradhub-nn-ops: zero offsets with a mask of ones are the ordinary
convolution, whole-pixel offsets a shifted one; values against direct numpy loops; gradients
w.r.t. x, weight, offset, mask and bias against float64 central differences and to order 2;
channel_last, batch axes, the parametric function and argument checks."""

from __future__ import annotations

import functools
import math
from typing import Any

import gradhub as gh
import gradhub.functions as F
import gradhub.parametric_functions as PF
import numpy as np
import pytest
from gradhub.testing import gradcheck
from gradhub_nn_ops.deform import _deformable_ref
from numeric_helpers import central_differences

RNG = np.random.default_rng(7)


def _fractional(shape: tuple[int, ...], lim: float = 1.6) -> np.ndarray:
    """Offsets away from whole pixels (the kinks of bilinear sampling)."""
    return np.round(RNG.uniform(-lim, lim, shape) * 8) / 8 + 1 / 37


def _v(a: np.ndarray | None) -> gh.Variable | None:
    return None if a is None else gh.Variable(a)


@pytest.mark.parametrize(
    ("group", "dg", "pad", "stride", "dilation"),
    [
        (1, 1, (1, 1), (1, 1), (1, 1)),
        (2, 1, (0, 1), (2, 1), (1, 1)),
        (1, 2, (1, 0), (1, 2), (1, 1)),
        (2, 2, (2, 2), (1, 1), (2, 2)),
    ],
)
def test_zero_offsets_and_unit_mask_are_convolution(
    group: int,
    dg: int,
    pad: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
) -> None:
    x = RNG.standard_normal((2, 4, 6, 7))
    w = RNG.standard_normal((6, 4 // group, 3, 3))
    b = RNG.standard_normal(6)
    kw = {"pad": pad, "stride": stride, "dilation": dilation, "group": group}
    want = F.convolution(gh.Variable(x), gh.Variable(w), gh.Variable(b), **kw).d
    off = gh.Variable(np.zeros((2, 18 * dg, 6, 7)))
    ones = gh.Variable(np.ones((2, 9 * dg, 6, 7)))
    v1 = F.deformable_convolution(
        gh.Variable(x), gh.Variable(w), off, None, gh.Variable(b), deformable_group=dg, **kw
    )
    v2 = F.deformable_convolution(
        gh.Variable(x), gh.Variable(w), off, ones, gh.Variable(b), deformable_group=dg, **kw
    )
    np.testing.assert_allclose(v1.d, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(v2.d, want, rtol=1e-12, atol=1e-12)


def test_whole_pixel_offsets_shift_the_input() -> None:
    """Every kernel position moved by (dy, dx) reads the input shifted by (-dy, -dx), zeros
    outside it: a window of the convolution of the input padded on every side."""
    x = RNG.standard_normal((1, 3, 6, 5))
    w = RNG.standard_normal((2, 3, 3, 3))
    big = 3
    full = F.convolution(gh.Variable(x), gh.Variable(w), pad=(big, big)).d
    for dy, dx in [(1, 0), (0, -2), (-1, 1), (2, 2)]:
        off = np.zeros((1, 18, 6, 5))
        off[:, 0::2], off[:, 1::2] = dy, dx
        want = full[:, :, big - 1 + dy : big - 1 + dy + 6, big - 1 + dx : big - 1 + dx + 5]
        got = F.deformable_convolution(gh.Variable(x), gh.Variable(w), gh.Variable(off), pad=(1, 1))
        np.testing.assert_allclose(got.d, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("with_mask", [False, True])
@pytest.mark.parametrize(
    ("group", "dg", "pad", "stride", "dilation"),
    [
        (1, 1, (0, 1), (1, 1), (1, 1)),
        (2, 2, (1, 0), (2, 1), (1, 2)),
        (1, 2, (0, 0), (1, 1), (1, 1)),
    ],
)
def test_values_against_loops(
    with_mask: bool,
    group: int,
    dg: int,
    pad: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
) -> None:
    x = RNG.standard_normal((2, 4, 5, 6))
    w = RNG.standard_normal((4, 4 // group, 2, 3))
    off = _fractional((2, 12 * dg, 5, 6), 2.5)  # some samples fall outside the image
    mask = RNG.uniform(0, 1, (2, 6 * dg, 5, 6)) if with_mask else None
    b = RNG.standard_normal(4)
    kw: dict[str, Any] = {"pad": pad, "stride": stride, "dilation": dilation, "group": group}
    got = F.deformable_convolution(
        *(_v(a) for a in (x, w, off, mask, b)), deformable_group=dg, **kw
    ).d
    want = _deformable_ref(x, w, off, mask, b, deformable_group=dg, **kw)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_first_gradients_against_central_differences() -> None:
    x = RNG.standard_normal((1, 2, 4, 4))
    w = RNG.standard_normal((2, 1, 3, 2))
    off = _fractional((1, 24, 4, 4))
    mask = RNG.uniform(0.2, 1, (1, 12, 4, 4))
    b = RNG.standard_normal(2)
    arrays = [x, w, off, mask, b]
    kw = {"pad": (1, 0), "group": 2, "deformable_group": 2}
    gy = RNG.standard_normal((1, 2, 4, 3))

    def loss(i: int, a: np.ndarray) -> float:
        args = [gh.Variable(v) for v in arrays]
        args[i] = gh.Variable(a)
        return float((F.deformable_convolution(*args, **kw).d * gy).sum())

    vs = [gh.Variable(a) for a in arrays]
    y = F.deformable_convolution(*vs, **kw)
    grads = gh.grad([y], vs, grad_outputs=[gh.Variable(gy)])
    for i, g in enumerate(grads):
        num = central_differences(functools.partial(loss, i), arrays[i])
        assert g is not None
        np.testing.assert_allclose(g.d, num, rtol=1e-6, atol=1e-7, err_msg=f"input {i}")


@pytest.mark.parametrize("with_mask", [False, True])
def test_gradcheck_order_2(with_mask: bool) -> None:
    x = RNG.standard_normal((1, 2, 3, 4))
    w = RNG.standard_normal((2, 2, 2, 2))
    off = _fractional((1, 8, 3, 4))
    args = [x, w, off]
    if with_mask:
        args.append(RNG.uniform(0.2, 1, (1, 4, 3, 4)))
    assert gradcheck(lambda *a: F.deformable_convolution(*a, stride=(1, 2)), args, order=2)


def test_gradcheck_order_2_groups_and_bias() -> None:
    x = RNG.standard_normal((2, 4, 3, 3))
    w = RNG.standard_normal((2, 2, 1, 2))
    off = _fractional((2, 8, 3, 3))
    mask = RNG.uniform(0.2, 1, (2, 4, 3, 3))
    b = RNG.standard_normal(2)
    assert gradcheck(
        lambda *a: F.deformable_convolution(*a, group=2, deformable_group=2),
        [x, w, off, mask, b],
        order=2,
    )


def test_channel_last_and_batch_axes() -> None:
    x = RNG.standard_normal((2, 3, 4, 5))
    w = RNG.standard_normal((2, 3, 3, 3))
    off = _fractional((2, 18, 4, 5))
    mask = RNG.uniform(0, 1, (2, 9, 4, 5))
    want = F.deformable_convolution(*(_v(a) for a in (x, w, off, mask)), pad=(1, 1)).d
    t = (0, 2, 3, 1)
    cl = F.deformable_convolution(
        gh.Variable(x.transpose(t)),
        gh.Variable(w.transpose(t)),
        gh.Variable(off.transpose(t)),
        gh.Variable(mask.transpose(t)),
        pad=(1, 1),
        channel_last=True,
    )
    np.testing.assert_allclose(cl.d, want.transpose(t), rtol=1e-12, atol=1e-12)
    two = F.deformable_convolution(
        gh.Variable(x.reshape(1, 2, 3, 4, 5)),
        gh.Variable(w),
        gh.Variable(off.reshape(1, 2, 18, 4, 5)),
        gh.Variable(mask.reshape(1, 2, 9, 4, 5)),
        base_axis=2,
        pad=(1, 1),
    )
    np.testing.assert_allclose(two.d, want.reshape(1, *want.shape), rtol=1e-12, atol=1e-12)


def test_float32_stays_float32() -> None:
    x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    off = _fractional((1, 18, 4, 4)).astype(np.float32)
    y = F.deformable_convolution(gh.Variable(x), gh.Variable(w), gh.Variable(off), pad=(1, 1))
    assert y.dtype == np.float32
    want = _deformable_ref(x.astype(float), w.astype(float), off.astype(float), pad=(1, 1))
    np.testing.assert_allclose(y.d, want, rtol=1e-5, atol=1e-5)


def test_parametric_function() -> None:
    gh.clear_parameters()
    x = gh.Variable(RNG.standard_normal((2, 4, 5, 5)))
    off = gh.Variable(np.zeros((2, 36, 5, 5)))
    y = PF.deformable_convolution(
        x, 6, (3, 3), off, pad=(1, 1), group=2, deformable_group=2, name="dc"
    )
    params = gh.get_parameters()
    assert sorted(params) == ["dc/deformable_conv/W", "dc/deformable_conv/b"]
    w, b = params["dc/deformable_conv/W"], params["dc/deformable_conv/b"]
    assert w.shape == (6, 2, 3, 3) and b.shape == (6,)
    lim = math.sqrt(6 / (9 * 4 + 9 * 6))
    assert np.abs(w.d).max() <= lim and not b.d.any()
    want = F.convolution(x, w, b, pad=(1, 1), group=2).d
    np.testing.assert_allclose(y.d, want, rtol=1e-5, atol=1e-6)
    off1 = gh.Variable(np.zeros((2, 18, 5, 5)))
    y2 = PF.deformable_convolution(x, 6, (3, 3), off1, pad=(1, 1), with_bias=False, name="nb")
    assert y2.shape == (2, 6, 5, 5) and "nb/deformable_conv/b" not in gh.get_parameters()
    xt = gh.Variable(x.d.transpose(0, 2, 3, 1))
    offt = gh.Variable(np.zeros((2, 5, 5, 36)))
    y3 = PF.deformable_convolution(
        xt, 6, (3, 3), offt, pad=(1, 1), group=2, deformable_group=2, channel_last=True, name="cl"
    )
    assert y3.shape == (2, 5, 5, 6)
    assert gh.get_parameters()["cl/deformable_conv/W"].shape == (6, 3, 3, 2)
    gh.clear_parameters()


def test_argument_checks() -> None:
    x, w = gh.Variable(np.ones((1, 2, 4, 4))), gh.Variable(np.ones((2, 2, 3, 3)))
    off = gh.Variable(np.zeros((1, 18, 4, 4)))
    fn = F.deformable_convolution
    with pytest.raises(ValueError, match=r"deformable_convolution\(\): offset of shape"):
        fn(x, w, gh.Variable(np.zeros((1, 9, 4, 4))))
    with pytest.raises(ValueError, match=r"deformable_convolution\(\): mask of shape"):
        fn(x, w, off, gh.Variable(np.ones((1, 18, 4, 4))))
    with pytest.raises(ValueError, match=r"deformable_convolution\(\): bias of shape"):
        fn(x, w, off, None, gh.Variable(np.ones(3)))
    with pytest.raises(ValueError, match="deformable_group=3 must divide"):
        fn(x, w, gh.Variable(np.zeros((1, 54, 4, 4))), deformable_group=3)
    with pytest.raises(ValueError, match="with group=2"):
        fn(x, w, off, group=2)
    with pytest.raises(ValueError, match="outside the 4x4 offset map"):
        fn(x, w, off, pad=(2, 2))
    with pytest.raises(NotImplementedError, match="only 2-d"):
        fn(gh.Variable(np.ones((1, 2, 4))), gh.Variable(np.ones((2, 2, 3))), off)
    with pytest.raises(TypeError, match="deformable_group must be an int"):
        fn(x, w, off, deformable_group=1.0)
    with pytest.raises(ValueError, match="deformable_group must be >= 1"):
        fn(x, w, off, deformable_group=0)
    with pytest.raises(TypeError, match="channel_last must be a bool"):
        fn(x, w, off, channel_last="yes")
