"""RoI Align (gradhub_nn_ops.roi): values against a float64 reference written here with plain
loops (one bilinear sample at a time, as nnabla's CPU kernel), derivatives against finite
differences to the third order, the boxes' (absent) gradient, vmap and bad arguments."""

from __future__ import annotations

import math
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.func import vmap
from gradhub.testing import gradcheck


def _sample(img: np.ndarray, yy: float, xx: float) -> np.ndarray:
    """One bilinear sample of ``img`` (C, H, W): 0 outside [-1, size], else clamped."""
    _, h, w = img.shape
    if not (-1.0 <= yy <= h and -1.0 <= xx <= w):
        return np.zeros(img.shape[0])
    yy = min(max(yy, 0.0), h - 1.0)
    xx = min(max(xx, 0.0), w - 1.0)
    y0, x0 = math.floor(yy), math.floor(xx)
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    ly, lx = yy - y0, xx - x0
    return (
        img[:, y0, x0] * (1 - ly) * (1 - lx)
        + img[:, y0, x1] * (1 - ly) * lx
        + img[:, y1, x0] * ly * (1 - lx)
        + img[:, y1, x1] * ly * lx
    )


def reference(
    x: np.ndarray,
    boxes: np.ndarray,
    output_size: tuple[int, int],
    spatial_scale: tuple[float, float] = (1.0, 1.0),
    sampling_ratio: int = -1,
    channel_last: bool = False,
) -> np.ndarray:
    xn = np.moveaxis(x, -1, 1) if channel_last else x
    oh, ow = output_size
    out = np.zeros((len(boxes), xn.shape[1], oh, ow))
    for k, box in enumerate(boxes):
        img = xn[int(box[0])]
        top = box[2] * spatial_scale[0] - 0.5
        left = box[1] * spatial_scale[1] - 0.5
        cell_h = (box[4] * spatial_scale[0] - 0.5 - top) / oh
        cell_w = (box[3] * spatial_scale[1] - 0.5 - left) / ow
        ny = sampling_ratio if sampling_ratio > 0 else math.ceil(cell_h)
        nx = sampling_ratio if sampling_ratio > 0 else math.ceil(cell_w)
        for i in range(oh):
            for j in range(ow):
                total = np.zeros(xn.shape[1])
                for a in range(ny):
                    for b in range(nx):
                        yy = top + (i + (a + 0.5) / ny) * cell_h
                        xx = left + (j + (b + 0.5) / nx) * cell_w
                        total += _sample(img, yy, xx)
                out[k, :, i, j] = total / (ny * nx)
    return np.moveaxis(out, 1, -1) if channel_last else out


BOXES = np.array(
    [
        [0.0, 1.2, 0.7, 4.9, 5.3],
        [1.0, 0.3, 2.1, 6.6, 3.9],
        [0.0, -2.3, -1.7, 3.1, 8.4],  # partly outside
        [1.0, 5.5, 4.2, 9.9, 7.7],  # partly outside, past the far edges
        [1.0, -6.0, -5.0, -2.5, -3.0],  # wholly outside: zeros
        [0.0, 2.0, 1.0, 2.6, 1.3],  # smaller than a pixel
    ]
)

CASES: list[dict[str, Any]] = [
    {"output_size": (2, 3)},
    {"output_size": (3, 2), "sampling_ratio": 2},
    {"output_size": (1, 1), "sampling_ratio": 3},
    {"output_size": (2, 2), "spatial_scale": (0.5, 0.75)},
    {"output_size": (4, 3), "spatial_scale": (1.5, 0.8), "sampling_ratio": 1},
    {"output_size": (2, 3), "channel_last": True},
    {"output_size": (3, 2), "sampling_ratio": 2, "channel_last": True},
]


def _input(attrs: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    shape = (2, 6, 7, 3) if attrs.get("channel_last") else (2, 3, 6, 7)
    return rng.standard_normal(shape)


@pytest.mark.parametrize("attrs", CASES, ids=lambda a: ",".join(f"{k}={v}" for k, v in a.items()))
def test_values_match_the_loop_reference(attrs: dict[str, Any]) -> None:
    x = _input(attrs, np.random.default_rng(0))
    y = F.roi_align(gh.Variable(x), gh.Variable(BOXES), **attrs)
    want = reference(x, BOXES, **attrs)
    assert y.shape == want.shape
    np.testing.assert_allclose(y.d, want, rtol=1e-12, atol=1e-13)


def test_float32_in_float32_out_and_close() -> None:
    x = _input({}, np.random.default_rng(1))
    y = F.roi_align(gh.Variable(x.astype(np.float32)), gh.Variable(BOXES), (2, 3))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.d, reference(x, BOXES, (2, 3)), rtol=1e-5, atol=1e-5)


def test_positional_arguments_in_nnablas_order() -> None:
    x = _input({}, np.random.default_rng(2))
    y = F.roi_align(gh.Variable(x), gh.Variable(BOXES[:2]), (2, 2), (0.5, 0.75), 2, False)
    np.testing.assert_allclose(y.d, reference(x, BOXES[:2], (2, 2), (0.5, 0.75), 2), rtol=1e-12)


def test_batch_index_is_truncated() -> None:
    x = _input({}, np.random.default_rng(3))
    frac = BOXES[:2].copy()
    frac[:, 0] += 0.7  # 0.7 -> image 0, 1.7 -> image 1 (static_cast<int>)
    a = F.roi_align(gh.Variable(x), gh.Variable(frac), (2, 2)).d
    b = F.roi_align(gh.Variable(x), gh.Variable(BOXES[:2]), (2, 2)).d
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("attrs", CASES, ids=lambda a: ",".join(f"{k}={v}" for k, v in a.items()))
def test_gradients_to_the_third_order(attrs: dict[str, Any]) -> None:
    x = _input(attrs, np.random.default_rng(4))

    def fn(x: gh.Variable, b: gh.Variable) -> gh.Variable:
        return F.roi_align(x, b, **attrs)

    assert gradcheck(fn, [x, BOXES], order=3, grad_inputs=(0,))


def test_backward_is_the_adjoint() -> None:
    """<dy, roi_align(x)> == <roi_align_backward(dy), x> (the rule's function is the transpose)."""
    rng = np.random.default_rng(5)
    attrs = {"output_size": (3, 2), "spatial_scale": (0.8, 1.2), "sampling_ratio": -1}
    x = rng.standard_normal((2, 3, 6, 7))
    dy = rng.standard_normal((len(BOXES), 3, 3, 2))
    y = F.roi_align(gh.Variable(x), gh.Variable(BOXES), **attrs).d
    dx = F.roi_align_backward(gh.Variable(dy), gh.Variable(BOXES), x_shape=x.shape, **attrs).d
    assert np.isclose(np.sum(y * dy), np.sum(dx * x), rtol=1e-12)


def test_roi_align_backward_gradients_to_the_third_order() -> None:
    rng = np.random.default_rng(6)
    dy = rng.standard_normal((len(BOXES), 3, 2, 2))  # channel_last: (K, oh, ow, C)

    def fn(g: gh.Variable, b: gh.Variable) -> gh.Variable:
        return F.roi_align_backward(
            g, b, (3, 2), sampling_ratio=2, channel_last=True, x_shape=(2, 6, 7, 2)
        )

    assert gradcheck(fn, [dy, BOXES], order=3, grad_inputs=(0,))


def test_the_boxes_get_no_gradient() -> None:
    x = gh.Variable(_input({}, np.random.default_rng(7)), need_grad=True)
    b = gh.Variable(BOXES.copy(), need_grad=True)
    F.sum(F.roi_align(x, b, (2, 2))).backward()
    assert np.any(x.g != 0)
    assert b.g is None  # no gradient reaches the boxes


def test_empty_grid_as_nnabla() -> None:
    """sampling_ratio -1 and a box of zero width: no sample, nnabla's forward gives 0 * (1 / 0)
    (NaN) and its backward adds nothing."""
    x = gh.Variable(_input({}, np.random.default_rng(8)), need_grad=True)
    boxes = gh.Variable(np.array([[0.0, 2.0, 1.0, 2.0, 4.0], [1.0, 1.0, 1.0, 3.0, 3.0]]))
    y = F.roi_align(x, boxes, (2, 2))
    assert np.all(np.isnan(y.d[0])) and np.all(np.isfinite(y.d[1]))
    dy = np.zeros(y.shape)
    dy[1] = 1.0
    y.backward(dy)
    assert np.all(np.isfinite(x.g)) and np.any(x.g != 0)
    # with a fixed sampling_ratio the same box is sampled on its line
    z = F.roi_align(x, boxes, (2, 2), sampling_ratio=2).d
    assert np.all(np.isfinite(z))


def test_no_boxes() -> None:
    x = gh.Variable(_input({}, np.random.default_rng(9)), need_grad=True)
    y = F.roi_align(x, gh.Variable(np.zeros((0, 5))), (2, 3))
    assert y.shape == (0, 3, 2, 3)
    y.backward(np.zeros((0, 3, 2, 3)))
    np.testing.assert_array_equal(x.g, np.zeros(x.shape))


def test_vmap_over_the_input_matches_the_loop() -> None:
    rng = np.random.default_rng(10)
    xs = rng.standard_normal((4, 2, 3, 6, 7))
    boxes = gh.Variable(BOXES)

    def f(x: gh.Variable) -> gh.Variable:
        return F.roi_align(x, boxes, (2, 3), sampling_ratio=2)

    got = vmap(f)(gh.Variable(xs)).d
    want = np.stack([reference(x, BOXES, (2, 3), sampling_ratio=2) for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize(
    ("x_shape", "boxes", "kwargs", "error", "match"),
    [
        ((2, 3, 6), BOXES, {"output_size": (2, 2)}, ValueError, "input must be 4-D"),
        ((2, 3, 6, 7), BOXES[:, :4], {"output_size": (2, 2)}, ValueError, r"shape \(K, 5\)"),
        ((2, 3, 6, 7), BOXES[0], {"output_size": (2, 2)}, ValueError, r"shape \(K, 5\)"),
        ((2, 3, 6, 7), BOXES, {"output_size": (2, 0)}, ValueError, "output_size must be pos"),
        ((2, 3, 6, 7), BOXES, {"output_size": (2,)}, ValueError, "output_size must be a"),
        ((2, 3, 6, 7), BOXES, {"output_size": (2.0, 2)}, TypeError, "output_size must be an int"),
        ((2, 3, 6, 7), BOXES, {}, TypeError, "output_size must be given"),
        (
            (2, 3, 6, 7),
            BOXES,
            {"output_size": (2, 2), "spatial_scale": 0.5},
            TypeError,
            "spatial_scale must be a",
        ),
        (
            (2, 3, 6, 7),
            BOXES,
            {"output_size": (2, 2), "spatial_scale": (1.0, float("nan"))},
            ValueError,
            "spatial_scale must be finite",
        ),
        (
            (2, 3, 6, 7),
            BOXES,
            {"output_size": (2, 2), "sampling_ratio": 1.5},
            TypeError,
            "sampling_ratio must be an int",
        ),
        (
            (2, 3, 6, 7),
            BOXES,
            {"output_size": (2, 2), "channel_last": 1},
            TypeError,
            "channel_last must be a bool",
        ),
        ((1, 3, 6, 7), BOXES, {"output_size": (2, 2)}, ValueError, r"batch index .* \[0, 1\)"),
        (
            (2, 3, 6, 7),
            np.array([[0.0, 1.0, 1.0, np.inf, 2.0]]),
            {"output_size": (2, 2)},
            ValueError,
            "boxes must be finite",
        ),
        ((2, 3, 0, 7), BOXES, {"output_size": (2, 2)}, ValueError, "no spatial element"),
    ],
)
def test_bad_arguments_name_the_function_and_argument(
    x_shape: tuple[int, ...], boxes: np.ndarray, kwargs: dict[str, Any], error: type, match: str
) -> None:
    x = gh.Variable(np.zeros(x_shape))
    with pytest.raises(error, match=f"roi_align.*{match}"):
        F.roi_align(x, gh.Variable(np.asarray(boxes)), **kwargs)


def test_backward_function_checks_dy() -> None:
    with pytest.raises(ValueError, match=r"roi_align_backward: dy has shape"):
        F.roi_align_backward(
            gh.Variable(np.zeros((6, 3, 2, 2))),
            gh.Variable(BOXES),
            (2, 3),
            x_shape=(2, 3, 6, 7),
        )


def test_a_box_inverted_by_less_than_a_cell_gives_nan_without_a_warning() -> None:
    """Regression: with the adaptive grid, a box whose x2 is below x1 by less than a cell has an
    empty grid and an infinite sample step; numpy warned "invalid value in multiply" outside the
    error-state guard (an error under warnings-as-errors). Its cells are NaN, as nnabla 1.39's
    (``0 * (1 / 0)``), the other box's are not, and the backward adds nothing for it."""
    x = gh.Variable(np.ones((1, 1, 6, 6), np.float32))
    boxes = gh.Variable(np.array([[0, 1, 1, 4, 4], [0, 3.0, 1, 2.5, 4]], np.float32))
    y = F.roi_align(x, boxes, (2, 2))
    assert np.isnan(y.d[1]).all() and np.isfinite(y.d[0]).all()
    (gx,) = gh.grad([F.sum(y[0:1])], [x], create_graph=False)
    assert np.isfinite(gx.d).all()


def test_large_maps_read_only_the_rows_and_columns_of_each_box() -> None:
    """The kernels work box by box on the part of the image its samples touch (they made dense
    weight products over the whole image: 8.4 s and 2.4 GB for 512 boxes on (1, 256, 200, 336)
    float32, 2026-11-28; now the time of the touched parts): values against the loop reference
    on a map much larger than the boxes, forward and backward."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 3, 40, 50))
    xy = rng.uniform(0, 40, (6, 2))
    boxes = np.concatenate([rng.integers(0, 2, (6, 1)), xy, xy + rng.uniform(1, 8, (6, 2))], 1)
    xv = gh.Variable(x)
    y = F.roi_align(xv, gh.Variable(boxes), (3, 2), sampling_ratio=2)
    np.testing.assert_allclose(y.d, reference(x, boxes, (3, 2), (1.0, 1.0), 2), rtol=1e-12)
    g = rng.standard_normal(y.shape)
    (gx,) = gh.grad([F.sum(y * gh.Variable(g))], [xv], create_graph=False)
    # the adjoint: <roi_align(x), g> == <x, dx> for this linear map
    np.testing.assert_allclose((y.d * g).sum(), (x * gx.d).sum(), rtol=1e-12)
