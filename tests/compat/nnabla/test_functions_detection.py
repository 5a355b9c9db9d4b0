"""``F.nms_detection2d`` and ``F.onnx_non_max_suppression`` against nnabla 1.39, ties included
(nnabla ranks equal scores with GCC's unstable ``std::sort``, which the layer reproduces)."""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest
from gradhub_compat.nnabla._detection import _heap_sort, descending_order, std_sort


def _nms_input() -> np.ndarray:
    rng = np.random.RandomState(7)
    n, c = 24, 2
    xy = np.round(rng.rand(1, n, 2) * 3 * 4) / 4
    wh = np.round(rng.rand(1, n, 2) * 4) / 4 + 0.5
    obj = np.round(rng.rand(1, n, 1) * 4) / 4
    p = np.round(rng.rand(1, n, c) * 2) / 2
    return np.concatenate([xy, wh, obj, p], 2).astype(np.float32)


def _onnx_inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(3)
    n = 20
    yx = np.round(rng.rand(2, n, 2) * 8) / 4
    boxes = np.concatenate([yx, yx + np.round(rng.rand(2, n, 2) * 4) / 4 + 0.5], 2)
    scores = np.round(rng.rand(2, 2, n) * 3) / 3
    return boxes.astype(np.float32), scores.astype(np.float32)


def _nonzero(a: np.ndarray) -> list[int]:
    return [int(i) for i in np.nonzero(a)[0]]


# -- nms_detection2d ----------------------------------------------------------------------------


def test_nms_detection2d_per_class_with_ties_matches_nnabla() -> None:
    x = _nms_input()
    y = F.nms_detection2d(nn.Variable.from_numpy_array(x), 0.2, 0.3, True)
    y.forward()
    # nnabla 1.39
    obj = [0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 13, 14, 16, 17, 18, 19, 20, 21, 22, 23]
    assert _nonzero(y.d[0, :, 4]) == obj
    assert _nonzero(y.d[0, :, 5]) == [2, 3, 6, 7, 8, 9, 10, 18, 19, 22]
    assert _nonzero(y.d[0, :, 6]) == [0, 1, 3, 5, 7, 9, 11, 18, 20, 23]
    np.testing.assert_array_equal(
        y.d[0, :3, 4:], [[0.75, 0, 0.375], [0.75, 0, 0.75], [0.25, 0.25, 0]]
    )
    np.testing.assert_array_equal(y.d[..., :4], x[..., :4])


def test_nms_detection2d_all_classes_with_ties_matches_nnabla() -> None:
    x = _nms_input()
    y = F.nms_detection2d(nn.Variable.from_numpy_array(x), 0.2, 0.3, False)
    y.forward()
    # nnabla 1.39
    assert _nonzero(y.d[0, :, 4]) == [0, 2, 3, 6, 7, 8, 9, 10, 11, 14, 18, 19, 22]
    assert _nonzero(y.d[0, :, 5]) == [2, 3, 6, 7, 8, 9, 10, 18, 19, 22]
    assert _nonzero(y.d[0, :, 6]) == [0, 3, 7, 9, 11, 18, 22]
    np.testing.assert_array_equal(y.d[0, 1, 4:], [0, 0, 0])


def test_nms_detection2d_defaults_and_thresholds() -> None:
    x = np.array(
        [[[0.5, 0.5, 1, 1, 0.9, 1.0], [0.6, 0.5, 1, 1, 0.8, 1.0], [3, 3, 1, 1, 0.3, 1.0]]],
        np.float32,
    )
    y = F.nms_detection2d(nn.Variable.from_numpy_array(x))
    y.forward()
    # IoU of the first two: 0.9 / 1.1 > 0.45; the third is below thresh 0.5
    np.testing.assert_allclose(y.d[0, :, 4:], [[0.9, 0.9], [0.8, 0.0], [0.0, 0.0]])
    y2 = F.nms_detection2d(nn.Variable.from_numpy_array(x), thresh=0.2, nms=0.9)
    y2.forward()
    np.testing.assert_allclose(y2.d[0, :, 4:], [[0.9, 0.9], [0.8, 0.8], [0.3, 0.3]])
    assert y.parent.name == "NmsDetection2d"
    assert y.parent.info.args == {
        "thresh": 0.5,
        "nms": 0.44999998807907104,  # nnabla 1.39 (a float32)
        "nms_per_class": True,
    }


def test_nms_detection2d_recomputes_on_forward_and_has_no_gradient() -> None:
    x = nn.Variable.from_numpy_array(np.zeros((1, 2, 6)), need_grad=True)
    w = nn.Variable.from_numpy_array(np.ones((1, 2, 6)), need_grad=True)
    y = F.nms_detection2d(x)
    loss = F.sum(y * w)
    x.d = np.array([[[0, 0, 1, 1, 0.9, 1.0], [5, 5, 1, 1, 0.7, 1.0]]])
    loss.forward()
    np.testing.assert_allclose(y.d[0, :, 4:], [[0.9, 0.9], [0.7, 0.7]])
    loss.backward()
    # nnabla 1.39: the output needs a gradient, the backward gives x none
    assert y.need_grad
    np.testing.assert_array_equal(x.g, np.zeros((1, 2, 6)))
    np.testing.assert_allclose(w.g, y.d)


def test_nms_detection2d_refuses_bad_shapes() -> None:
    with pytest.raises(ValueError, match="nms_detection2d: x must have shape"):
        F.nms_detection2d(nn.Variable((2, 5)))
    with pytest.raises(ValueError, match="at least one class"):
        F.nms_detection2d(nn.Variable((1, 2, 5)))


# -- onnx_non_max_suppression -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("center_point_box", "expected"),
    [
        # nnabla 1.39
        (
            0,
            [[0, 0, 1], [0, 0, 16], [0, 0, 6], [0, 0, 14], [0, 0, 3], [0, 1, 0], [0, 1, 18],
             [0, 1, 3], [0, 1, 5], [0, 1, 16], [1, 0, 2], [1, 0, 7], [1, 0, 8], [1, 0, 10],
             [1, 0, 13], [1, 1, 16], [1, 1, 10], [1, 1, 19], [1, 1, 4], [1, 1, 2]],
        ),
        (
            1,
            [[0, 0, 1], [0, 0, 16], [0, 1, 0], [0, 1, 3], [1, 0, 2], [1, 0, 13], [1, 0, 6],
             [1, 1, 16], [1, 1, 19]],
        ),
    ],
)  # fmt: skip
def test_onnx_nms_with_ties_matches_nnabla(center_point_box: int, expected: list[int]) -> None:
    boxes, scores = _onnx_inputs()
    y = F.onnx_non_max_suppression(
        nn.Variable.from_numpy_array(boxes),
        nn.Variable.from_numpy_array(scores),
        center_point_box,
        5,
        0.2,
        0.3,
    )
    y.forward()
    assert y.d.dtype == np.uint64
    assert y.d.tolist() == expected


def test_onnx_nms_defaults_keep_nothing_and_output_follows_new_data() -> None:
    b = nn.Variable.from_numpy_array(np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3]]]))
    s = nn.Variable.from_numpy_array(np.array([[[0.9, 0.8, 0.7]]]))
    none = F.onnx_non_max_suppression(b, s)
    assert none.shape == (0, 3)  # nnabla 1.39: max_output_boxes_per_class=0 keeps none
    y = F.onnx_non_max_suppression(b, s, 0, 10, 0.5, 0.5)
    y.forward()
    assert y.d.tolist() == [[0, 0, 0], [0, 0, 2]]  # nnabla 1.39
    assert not y.need_grad
    assert y.parent.name == "ONNXNonMaxSuppression"
    # nnabla 1.39 keeps the indices of the build here; the layer computes them again
    s.d = np.array([[[0.1, 0.8, 0.0]]])
    y.forward()
    assert y.d.tolist() == [[0, 0, 1]]
    s.d = np.array([[[0.1, 0.0, 0.0]]])
    y.forward()
    assert y.shape == (0, 3)


def test_onnx_nms_refuses_bad_arguments() -> None:
    b, s = nn.Variable((1, 3, 4)), nn.Variable((1, 2, 3))
    with pytest.raises(ValueError, match="center_point_box must be 0 or 1"):
        F.onnx_non_max_suppression(b, s, 2)
    with pytest.raises(ValueError, match="non-negative"):
        F.onnx_non_max_suppression(b, s, 0, -1)
    with pytest.raises(ValueError, match="boxes must have shape"):
        F.onnx_non_max_suppression(nn.Variable((1, 3, 5)), s)
    with pytest.raises(ValueError, match="scores must have shape"):
        F.onnx_non_max_suppression(b, nn.Variable((1, 2, 4)))
    for name, args in (("iou_threshold", ("0.5", 0.0)), ("score_threshold", (0.5, [0.1]))):
        with pytest.raises(TypeError, match=f"onnx_non_max_suppression: {name} must be a real"):
            F.onnx_non_max_suppression(b, s, 0, 1, *args)
    with pytest.raises(ValueError, match="onnx_non_max_suppression: iou_threshold must not be NaN"):
        F.onnx_non_max_suppression(b, s, 0, 1, float("nan"))
    with pytest.raises(ValueError, match="onnx_non_max_suppression: score_threshold must not"):
        F.onnx_non_max_suppression(b, s, 0, 1, 0.5, np.float32("nan"))


@pytest.mark.parametrize(
    ("score_threshold", "iou_threshold", "expected"),
    [
        # nnabla 1.39: None is 0.0
        (None, None, [[0, 0, 0]]),
        (None, 0.7, [[0, 0, 0], [0, 0, 2]]),
        (0.2, None, [[0, 0, 0]]),
        (True, 0.7, []),  # a bool is a number (1.0)
    ],
)
def test_onnx_nms_none_thresholds_are_zero(
    score_threshold: object, iou_threshold: object, expected: list[list[int]]
) -> None:
    b = nn.Variable.from_numpy_array(np.array([[[0, 0, 1, 1], [0, 0, 1, 1.1], [0, 0, 1, 1.8]]]))
    s = nn.Variable.from_numpy_array(np.array([[[0.9, -0.8, 0.3]]]))
    y = F.onnx_non_max_suppression(b, s, 0, 5, iou_threshold, score_threshold)
    y.forward()
    np.testing.assert_array_equal(y.d, np.array(expected, np.uint64).reshape(-1, 3))


def test_nms_detection2d_refuses_bad_thresholds() -> None:
    x = nn.Variable((1, 2, 6))
    for name in ("thresh", "nms"):
        with pytest.raises(TypeError, match=f"nms_detection2d: {name} must be a real number"):
            F.nms_detection2d(x, **{name: "a"})
        with pytest.raises(ValueError, match=f"nms_detection2d: {name} must not be NaN"):
            F.nms_detection2d(x, **{name: float("nan")})


# -- the sort -----------------------------------------------------------------------------------


def test_std_sort_orders_ties_as_libstdcxx() -> None:
    # g++ 'std::sort(idx, idx + 20, [&](int i, int j) { return s[i] > s[j]; })' (libstdc++)
    s = [1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1]
    order = list(range(20))
    std_sort(order, lambda i, j: s[i] > s[j])
    assert order == [10, 19, 18, 16, 15, 13, 12, 0, 9, 8, 5, 3, 2, 7, 11, 6, 14, 4, 17, 1]
    assert descending_order(np.array(s, np.float32)) == order
    # g++ 'std::partial_sort(idx, idx + 20, idx + 20, ...)': introsort's heapsort fallback
    heap = list(range(20))
    _heap_sort(heap, 0, 20, lambda i, j: s[i] > s[j])
    assert heap == [18, 10, 8, 15, 12, 16, 19, 3, 5, 9, 13, 0, 2, 7, 17, 1, 4, 11, 6, 14]


def test_std_sort_sorts() -> None:
    rng = np.random.RandomState(0)
    for n in (0, 1, 5, 16, 17, 100, 1000):
        vals = rng.randint(0, 5, n).tolist()
        order = list(range(n))
        std_sort(order, lambda i, j, v=vals: v[i] > v[j])
        assert sorted(order) == list(range(n))
        assert [vals[i] for i in order] == sorted(vals, reverse=True)


def test_row_by_row_overlaps_give_the_same_results(monkeypatch: pytest.MonkeyPatch) -> None:
    from gradhub_compat.nnabla import _detection

    x = _nms_input()
    boxes, scores = _onnx_inputs()
    before = [
        _detection.nms_detection2d_values(x, 0.2, 0.3, True),
        _detection.nms_detection2d_values(x, 0.2, 0.3, False),
        _detection.onnx_nms_values(boxes, scores, 0, 5, 0.2, 0.3),
    ]
    monkeypatch.setattr(_detection, "_MATRIX_BOXES", 0)  # (what many boxes use)
    after = [
        _detection.nms_detection2d_values(x, 0.2, 0.3, True),
        _detection.nms_detection2d_values(x, 0.2, 0.3, False),
        _detection.onnx_nms_values(boxes, scores, 0, 5, 0.2, 0.3),
    ]
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
