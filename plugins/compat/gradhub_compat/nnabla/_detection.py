"""nnabla's detection functions ``NmsDetection2d`` and ``ONNXNonMaxSuppression``.

Both are recorded functions of the layer (a :class:`gradhub.registry.FunctionDef` applied with
:func:`gradhub.graph.apply`, not added to gradhub's registry): ``forward()`` runs them again on
the inputs' current data. Their kernels follow nnabla 1.39's CPU kernels step by step, in
float32: the boxes are ranked with the same sort as nnabla's (``std::sort`` of GCC's libstdc++,
reproduced by :func:`std_sort`), so boxes of equal scores are taken in nnabla's order, and every
intersection over union is computed with nnabla's operations in nnabla's order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gradhub.graph import apply
from gradhub.registry import FunctionDef
from gradhub.variable import Variable as NativeVariable

from .._common import host_array as _host
from . import _layer_functions as _layer
from .functions import _grads_rule, _no_grads

_F32 = np.float32


# -- GCC libstdc++'s std::sort --------------------------------------------------------------------


def std_sort(items: list[Any], comp: Callable[[Any, Any], bool]) -> None:
    """Sort ``items`` in place as GCC's ``std::sort(first, last, comp)`` does (introsort: median
    of three quicksort down to 16 elements, heapsort past ``2 log2(n)`` levels, then insertion
    sort). Not stable: elements that compare equal end up in libstdc++'s order, which this
    reproduces exactly."""
    n = len(items)
    if n < 2:
        return
    _introsort_loop(items, 0, n, 2 * (n.bit_length() - 1), comp)
    _final_insertion_sort(items, 0, n, comp)


_THRESHOLD = 16


def _introsort_loop(a: list[Any], first: int, last: int, depth: int, comp: Any) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_sort(a, first, last, comp)
            return
        depth -= 1
        mid = first + (last - first) // 2
        _move_median_to_first(a, first, first + 1, mid, last - 1, comp)
        cut = _unguarded_partition(a, first + 1, last, first, comp)
        _introsort_loop(a, cut, last, depth, comp)
        last = cut


def _move_median_to_first(a: list[Any], r: int, x: int, y: int, z: int, comp: Any) -> None:
    if comp(a[x], a[y]):
        if comp(a[y], a[z]):
            k = y
        elif comp(a[x], a[z]):
            k = z
        else:
            k = x
    elif comp(a[x], a[z]):
        k = x
    elif comp(a[y], a[z]):
        k = z
    else:
        k = y
    a[r], a[k] = a[k], a[r]


def _unguarded_partition(a: list[Any], first: int, last: int, pivot: int, comp: Any) -> int:
    while True:
        while comp(a[first], a[pivot]):
            first += 1
        last -= 1
        while comp(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _adjust_heap(a: list[Any], first: int, hole: int, n: int, value: Any, comp: Any) -> None:
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if comp(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and comp(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value


def _heap_sort(a: list[Any], first: int, last: int, comp: Any) -> None:
    n = last - first
    if n >= 2:  # make_heap
        parent = (n - 2) // 2
        while True:
            _adjust_heap(a, first, parent, n, a[first + parent], comp)
            if parent == 0:
                break
            parent -= 1
    while last - first > 1:  # sort_heap
        last -= 1
        value = a[last]
        a[last] = a[first]
        _adjust_heap(a, first, 0, last - first, value, comp)


def _unguarded_linear_insert(a: list[Any], last: int, comp: Any) -> None:
    val = a[last]
    nxt = last - 1
    while comp(val, a[nxt]):
        a[last] = a[nxt]
        last = nxt
        nxt -= 1
    a[last] = val


def _insertion_sort(a: list[Any], first: int, last: int, comp: Any) -> None:
    for i in range(first + 1, last):
        if comp(a[i], a[first]):
            val = a[i]
            a[first + 1 : i + 1] = a[first:i]
            a[first] = val
        else:
            _unguarded_linear_insert(a, i, comp)


def _final_insertion_sort(a: list[Any], first: int, last: int, comp: Any) -> None:
    if last - first > _THRESHOLD:
        _insertion_sort(a, first, first + _THRESHOLD, comp)
        for i in range(first + _THRESHOLD, last):
            _unguarded_linear_insert(a, i, comp)
    else:
        _insertion_sort(a, first, last, comp)


def descending_order(scores: np.ndarray, used: np.ndarray | None = None) -> list[int]:
    """``0 .. n-1`` ordered as nnabla's ``std::sort`` with ``scores[i] > scores[j]``: by
    decreasing score, ties in libstdc++'s order. Without ties (and NaN) among the elements
    ``used`` (all when None; the caller ignores the places of the others) the relative order of
    those is the only one, and is taken from numpy's sort."""
    n = int(scores.shape[0])
    kept = scores if used is None else scores[used]
    if n < 2 or (np.unique(kept).size == kept.size and not np.isnan(scores).any()):
        return [int(i) for i in np.argsort(-scores.astype(np.float64), kind="stable")]
    vals = scores.tolist()
    order = list(range(n))
    std_sort(order, lambda i, j: vals[i] > vals[j])
    return order


# -- NmsDetection2d -------------------------------------------------------------------------------


def _center_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """nnabla's ``calculate_iou`` of the (x, y, w, h) boxes ``a`` with ``b`` (broadcast against
    each other on their leading axes), in float32, operation by operation: NmsDetection2d's, and
    ONNXNonMaxSuppression's with ``center_point_box=1`` (the same operations)."""
    two = _F32(2)
    wa, ha, wb, hb = a[..., 2], a[..., 3], b[..., 2], b[..., 3]
    wi = np.minimum(a[..., 0] + wa / two, b[..., 0] + wb / two) - np.maximum(
        a[..., 0] - wa / two, b[..., 0] - wb / two
    )
    hi = np.minimum(a[..., 1] + ha / two, b[..., 1] + hb / two) - np.maximum(
        a[..., 1] - ha / two, b[..., 1] - hb / two
    )
    return _ratio(wi, hi, wa * ha, wb * hb)


def _ratio(wi: np.ndarray, hi: np.ndarray, area_a: Any, area_b: np.ndarray) -> np.ndarray:
    """The intersection over union of boxes of areas ``area_a`` and ``area_b`` whose
    intersection is ``wi`` by ``hi`` (0 where either is not positive), in float32."""
    inter = wi * hi
    union = (area_a + area_b) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / union
    return np.where((wi <= 0) | (hi <= 0), _F32(0), iou).astype(_F32)


#: up to this many boxes, the IoU of every pair is computed at once (else one row at a time)
_MATRIX_BOXES = 4096


class _Overlaps:
    """Whether ``iou(boxes[i], boxes[j]) > threshold`` (``i`` the first argument, as nnabla
    calls it), from a matrix of every pair computed once, or row by row for many boxes."""

    def __init__(self, boxes: np.ndarray, iou: Any, threshold: Any) -> None:
        self.boxes, self.iou, self.threshold = boxes, iou, threshold
        n = boxes.shape[0]
        self.matrix = (
            iou(boxes[:, None, :], boxes[None, :, :]) > threshold if n <= _MATRIX_BOXES else None
        )

    def __call__(self, i: int, js: np.ndarray) -> np.ndarray:
        if self.matrix is not None:
            return self.matrix[i, js]  # type: ignore[no-any-return]
        return self.iou(self.boxes[i], self.boxes[js]) > self.threshold  # type: ignore[no-any-return]


def _greedy(order: list[int], keep: np.ndarray, over: _Overlaps) -> np.ndarray:
    """nnabla's per-class suppression: in ``order``, each box still kept drops the later kept
    ones it overlaps; returns the boolean ``keep`` by box after it."""
    cand = np.asarray([i for i in order if keep[i]], dtype=np.intp)
    alive = np.ones(cand.size, dtype=bool)
    for k in range(cand.size - 1):
        if alive[k]:
            alive[k + 1 :] &= ~over(int(cand[k]), cand[k + 1 :])
    out = np.zeros_like(keep)
    out[cand[alive]] = True
    return out


def nms_detection2d_values(x: np.ndarray, thresh: float, nms: float, per_class: bool) -> np.ndarray:
    """nnabla 1.39's ``NmsDetection2d`` forward on ``x`` ``(B, N, 5 + C)`` (float32)."""
    x = x.astype(_F32, copy=False)
    th, nm = _F32(thresh), _F32(nms)
    y = x.copy()
    obj = np.where(x[..., 4] < th, _F32(0), x[..., 4])
    y[..., 4] = obj
    prob = obj[..., None] * x[..., 5:]
    y[..., 5:] = np.where(prob < th, _F32(0), prob)
    n_b, n, _ = x.shape
    n_cls = x.shape[2] - 5
    for b in range(n_b):
        over = _Overlaps(y[b, :, :4].copy(), _center_iou, nm)
        if per_class:
            for k in range(n_cls):
                p = y[b, :, 5 + k]
                kept = _greedy(descending_order(p, p != 0), p != 0, over)
                p[~kept] = 0
        else:
            order = descending_order(y[b, :, 4])
            for i in range(n - 1, 0, -1):
                bi = order[i]
                if y[b, bi, 4] == 0:
                    continue
                if over(bi, np.asarray(order[:i], dtype=np.intp)).any():
                    y[b, bi, 4:] = 0
    return y


def _nms_detection2d_kernel(
    xp: Any, x: Any, thresh: float = 0.5, nms: float = 0.45, nms_per_class: bool = True
) -> Any:
    y = nms_detection2d_values(_host(x), thresh, nms, nms_per_class)
    return xp.asarray(y.astype(x.dtype, copy=False))


NMS_DETECTION2D = FunctionDef(
    "NmsDetection2d",
    _nms_detection2d_kernel,
    _layer._PROVIDER,
    inputs=("x",),
    attrs={"thresh": 0.5, "nms": 0.45, "nms_per_class": True},
    rule=_grads_rule(_no_grads),
    doc="nnabla's NmsDetection2d: YOLO-style non-maximum suppression; no gradient",
)


def nms_detection2d(x: NativeVariable, thresh: float, nms: float, nms_per_class: bool) -> Any:
    """Apply nnabla's NmsDetection2d to ``x`` (checked by the caller)."""
    attrs = {
        "thresh": float(_F32(thresh)),
        "nms": float(_F32(nms)),
        "nms_per_class": bool(nms_per_class),
    }
    return apply(NMS_DETECTION2D, (x,), attrs)


# -- ONNXNonMaxSuppression ------------------------------------------------------------------------


def _corner_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """nnabla's ONNX ``calculate_iou`` with ``center_point_box=0``: the boxes ``a`` and ``b``
    (broadcast) are ``[y1, x1, y2, x2]`` of any diagonal pair of corners."""
    ya0, ya1 = np.minimum(a[..., 0], a[..., 2]), np.maximum(a[..., 0], a[..., 2])
    xa0, xa1 = np.minimum(a[..., 1], a[..., 3]), np.maximum(a[..., 1], a[..., 3])
    yb0, yb1 = np.minimum(b[..., 0], b[..., 2]), np.maximum(b[..., 0], b[..., 2])
    xb0, xb1 = np.minimum(b[..., 1], b[..., 3]), np.maximum(b[..., 1], b[..., 3])
    wa, ha, wb, hb = xa1 - xa0, ya1 - ya0, xb1 - xb0, yb1 - yb0
    wi = np.minimum(xa1, xb1) - np.maximum(xa0, xb0)
    hi = np.minimum(ya1, yb1) - np.maximum(ya0, yb0)
    return _ratio(wi, hi, wa * ha, wb * hb)


def onnx_nms_values(
    boxes: np.ndarray,
    scores: np.ndarray,
    center_point_box: int,
    max_output: int,
    iou_threshold: float,
    score_threshold: float,
) -> np.ndarray:
    """nnabla 1.39's ``ONNXNonMaxSuppression`` on ``boxes`` ``(B, N, 4)`` and ``scores``
    ``(B, C, N)``: the selected ``[batch, class, box]`` rows, uint64."""
    boxes = boxes.astype(_F32, copy=False)
    scores = scores.astype(_F32, copy=False)
    iou_th, score_th = _F32(iou_threshold), _F32(score_threshold)
    iou = _corner_iou if center_point_box == 0 else _center_iou
    rows: list[tuple[int, int, int]] = []
    if max_output > 0:
        n_b, n_c = scores.shape[:2]
        for b in range(n_b):
            over = _Overlaps(boxes[b], iou, iou_th)
            for k in range(n_c):
                s = scores[b, k]
                selected = s >= score_th
                order = descending_order(s, selected)
                kept = _greedy(order, selected, over)
                count = 0
                for bi in order:
                    if kept[bi]:
                        rows.append((b, k, bi))
                        count += 1
                        if count >= max_output:
                            break
    return np.asarray(rows, dtype=np.uint64).reshape(len(rows), 3)


def _onnx_nms_kernel(
    xp: Any,
    boxes: Any,
    scores: Any,
    center_point_box: int = 0,
    max_output_boxes_per_class: int = 0,
    iou_threshold: float = 0.0,
    score_threshold: float = 0.0,
) -> Any:
    rows = onnx_nms_values(
        _host(boxes),
        _host(scores),
        center_point_box,
        max_output_boxes_per_class,
        iou_threshold,
        score_threshold,
    )
    return xp.asarray(rows)


ONNX_NON_MAX_SUPPRESSION = FunctionDef(
    "ONNXNonMaxSuppression",
    _onnx_nms_kernel,
    _layer._PROVIDER,
    inputs=("boxes", "scores"),
    attrs={
        "center_point_box": 0,
        "max_output_boxes_per_class": 0,
        "iou_threshold": 0.0,
        "score_threshold": 0.0,
    },
    differentiable=False,
    doc="nnabla's ONNXNonMaxSuppression: the [batch, class, box] indices kept; no gradient",
)


def onnx_non_max_suppression(
    boxes: NativeVariable,
    scores: NativeVariable,
    center_point_box: int,
    max_output_boxes_per_class: int,
    iou_threshold: float,
    score_threshold: float,
) -> Any:
    """Apply nnabla's ONNXNonMaxSuppression (arguments checked by the caller)."""
    attrs = {
        "center_point_box": int(center_point_box),
        "max_output_boxes_per_class": int(max_output_boxes_per_class),
        "iou_threshold": float(_F32(iou_threshold)),
        "score_threshold": float(_F32(score_threshold)),
    }
    return apply(ONNX_NON_MAX_SUPPRESSION, (boxes, scores), attrs)
