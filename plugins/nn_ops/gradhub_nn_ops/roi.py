"""gradhub-nn-ops: RoI Align (nnabla 1.39's ``RoiAlign``, names and argument conventions).

``RoIAlign(x, boxes)`` averages, for each box and each output cell, bilinear samples of the
input on a regular grid inside the cell. It is linear in ``x``; its adjoint is the registered
``RoIAlignBackward(dy, boxes)`` (the scatter of ``dy`` with the same weights), whose own backward
rule is ``RoIAlign`` again, so both differentiate to any order. The boxes get no gradient (as
nnabla's ``RoiAlign``, whose backward leaves them alone).

The bilinear weights are separable: with one weight matrix per box and spatial axis
(:math:`A^y_k` of shape ``(out_h, H)``, :math:`A^x_k` of shape ``(out_w, W)``) the output is
:math:`y_k = c_k\\, A^y_k\\, x_{b_k}\\, {A^x_k}^T` per channel, and the adjoint
:math:`dx_b = \\sum_{k: b_k = b} c_k\\, {A^y_k}^T dy_k\\, A^x_k`; both are matrix products (one
Python iteration per image of the batch that some box reads, none per output element). The
sample coordinates follow nnabla's kernel operation by operation in the input's precision
(float32 for float32 and float16 data, float64 for float64), so the sample grids (``ceil`` of the
cell size) are nnabla's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from gradhub import Sample
from gradhub.ops import call

from .math import int_arg

ATTRS: dict[str, Any] = {
    "output_size": None,
    "spatial_scale": (1.0, 1.0),
    "sampling_ratio": -1,
    "channel_last": False,
}


# -- arguments ---------------------------------------------------------------------------------


def _pair_of_ints(fn: str, arg: str, v: Any) -> tuple[int, int]:
    if v is None:
        raise TypeError(f"{fn}: {arg} must be given, a (height, width) pair of ints")
    if isinstance(v, (str, bytes)) or not isinstance(v, Sequence | np.ndarray):
        raise TypeError(f"{fn}: {arg} must be a (height, width) pair of ints, got {v!r}")
    vals = tuple(int_arg(fn, arg, e) for e in v)
    if len(vals) != 2:
        raise ValueError(f"{fn}: {arg} must be a (height, width) pair, got {len(vals)} values")
    if vals[0] < 1 or vals[1] < 1:
        raise ValueError(f"{fn}: {arg} must be positive, got {vals}")
    return vals[0], vals[1]


def _pair_of_reals(fn: str, arg: str, v: Any) -> tuple[float, float]:
    if isinstance(v, (str, bytes)) or not isinstance(v, Sequence | np.ndarray):
        raise TypeError(f"{fn}: {arg} must be a (y, x) pair of real numbers, got {v!r}")
    vals = []
    for e in v:
        if isinstance(e, bool) or not isinstance(e, (int, float, np.integer, np.floating)):
            raise TypeError(f"{fn}: {arg} must hold real numbers, got {e!r}")
        if not math.isfinite(float(e)):
            raise ValueError(f"{fn}: {arg} must be finite, got {e!r}")
        vals.append(float(e))
    if len(vals) != 2:
        raise ValueError(f"{fn}: {arg} must be a (y, x) pair, got {len(vals)} values")
    return vals[0], vals[1]


def check_args(
    fn: str,
    x_shape: Sequence[int],
    boxes_shape: Sequence[int],
    output_size: Any,
    spatial_scale: Any,
    sampling_ratio: Any,
    channel_last: Any,
) -> tuple[tuple[int, int], tuple[float, float], int]:
    """Check RoI Align's arguments (``fn`` names the function in the messages) and return
    ``(output_size, spatial_scale, sampling_ratio)`` normalized.

    ``x`` must be 4-D (``(N, C, H, W)``, or ``(N, H, W, C)`` with ``channel_last``) with
    ``H, W >= 1``; ``boxes`` of shape ``(K, 5)``; ``output_size`` a pair of positive ints;
    ``spatial_scale`` a pair of finite reals; ``sampling_ratio`` an int; ``channel_last`` a bool.
    """
    if not isinstance(channel_last, (bool, np.bool_)):
        raise TypeError(f"{fn}: channel_last must be a bool, got {channel_last!r}")
    if len(x_shape) != 4:
        layout = "(N, H, W, C)" if channel_last else "(N, C, H, W)"
        raise ValueError(f"{fn}: input must be 4-D {layout}, got shape {tuple(x_shape)}")
    h, w = (x_shape[1], x_shape[2]) if channel_last else (x_shape[2], x_shape[3])
    if h < 1 or w < 1:
        raise ValueError(f"{fn}: input of shape {tuple(x_shape)} has no spatial element")
    if len(boxes_shape) != 2 or boxes_shape[1] != 5:
        raise ValueError(
            f"{fn}: boxes must have shape (K, 5) (batch index, x1, y1, x2, y2), got "
            f"{tuple(boxes_shape)}"
        )
    size = _pair_of_ints(fn, "output_size", output_size)
    scale = _pair_of_reals(fn, "spatial_scale", spatial_scale)
    ratio = int_arg(fn, "sampling_ratio", sampling_ratio)
    return size, scale, ratio


# -- the sampling plan -------------------------------------------------------------------------


def _compute_dtype(dtype: Any) -> Any:
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def _axis_weights(
    xp: Any, start: Any, end: Any, n_out: int, n_in: int, ratio: int, ct: Any
) -> tuple[Any, Any]:
    """The weights along one axis, ``(K, n_out, n_in)`` (summed over the samples of each cell,
    not yet divided by their count), and the number of samples per cell of each box ``(K,)``.

    ``start``/``end``: the boxes' scaled, half-pixel shifted edges (``ct``). Per sample
    ``s = start + o * step + g * step_g + step_g / 2`` (nnabla's order of operations); a sample
    below -1 or above ``n_in`` is skipped, the others are clamped into ``[0, n_in - 1]`` and
    split between their two neighbours."""
    step = (end - start) / ct(n_out)
    if ratio > 0:
        grid = xp.full(step.shape, ratio, dtype=np.int64)
    else:
        grid = xp.ceil(step).astype(np.int64)
    g_max = max(int(grid.max()) if grid.size else 0, 0)
    gf = grid.astype(ct)
    o = xp.arange(n_out, dtype=ct)
    g = xp.arange(g_max, dtype=ct)
    cell = start[:, None] + o[None, :] * step[:, None]  # (K, n_out)
    with np.errstate(divide="ignore", invalid="ignore"):
        step_g = step / gf  # inf or NaN where the grid is empty: no sample reads it
        half = ct(0.5) * step_g
        s = (cell[:, :, None] + g[None, None, :] * step_g[:, None, None]) + half[:, None, None]
    with np.errstate(invalid="ignore"):
        used = (xp.arange(g_max)[None, None, :] < grid[:, None, None]) & (
            (s >= ct(-1)) & (s <= ct(n_in))
        )
    s = xp.where(used, xp.clip(s, ct(0), ct(n_in - 1)), ct(0))
    lo = s.astype(np.int64)
    hi = xp.minimum(lo + 1, n_in - 1)
    frac = s - xp.floor(s)
    w_hi = xp.where(used, frac, ct(0))
    w_lo = xp.where(used, ct(1) - frac, ct(0))
    k = int(step.shape[0])
    weights = xp.zeros(k * n_out * n_in, dtype=ct)
    row = (xp.arange(k * n_out) * n_in).reshape(k, n_out, 1)
    xp.add.at(weights, (row + lo).ravel(), w_lo.ravel())  # samples sharing a pixel add up
    xp.add.at(weights, (row + hi).ravel(), w_hi.ravel())
    return weights.reshape(k, n_out, n_in), grid


def _plan(
    xp: Any,
    fn: str,
    boxes: Any,
    n: int,
    h: int,
    w: int,
    size: tuple[int, int],
    scale: tuple[float, float],
    ratio: int,
    ct: Any,
) -> tuple[Any, Any, Any, Any, Any]:
    """``(image index (K,), A^y (K, out_h, H), A^x (K, out_w, W), forward factor (K,),
    backward factor (K,))``; the factors are ``1 / (grid_y * grid_x)``, the backward one 0 for
    a box without samples (nnabla's backward adds nothing for it; its forward gives
    ``0 * (1 / 0)``, NaN, for an empty grid)."""
    b = boxes.astype(ct)
    if b.size and not bool(xp.all(xp.isfinite(b))):
        raise ValueError(f"{fn}: boxes must be finite")
    idx = xp.trunc(b[:, 0]).astype(np.int64)  # nnabla's static_cast<int>
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
        raise ValueError(
            f"{fn}: the batch index of each box (boxes[:, 0]) must be in [0, {n}), got "
            f"{int(idx.min())}..{int(idx.max())}"
        )
    sy, sx = ct(scale[0]), ct(scale[1])
    shift = ct(0.5)
    x1, y1 = b[:, 1] * sx - shift, b[:, 2] * sy - shift
    x2, y2 = b[:, 3] * sx - shift, b[:, 4] * sy - shift
    ay, gy = _axis_weights(xp, y1, y2, size[0], h, ratio, ct)
    ax, gx = _axis_weights(xp, x1, x2, size[1], w, ratio, ct)
    count = (gy * gx).astype(ct)
    with np.errstate(divide="ignore"):
        fwd = ct(1) / count
    bwd = xp.where((gy > 0) & (gx > 0), fwd, ct(0))
    return idx, ay, ax, fwd, bwd


def _to_nchw(xp: Any, a: Any, channel_last: bool) -> Any:
    return xp.moveaxis(a, 3, 1) if channel_last else a


def _from_nchw(xp: Any, a: Any, channel_last: bool) -> Any:
    return xp.ascontiguousarray(xp.moveaxis(a, 1, 3)) if channel_last else a


def _nchw_shape(shape: Sequence[int], channel_last: bool) -> tuple[int, int, int, int]:
    n, a, b, c = (int(d) for d in shape)
    return (n, c, a, b) if channel_last else (n, a, b, c)


# -- kernels -----------------------------------------------------------------------------------


def _roi_align(
    xp: Any,
    x: Any,
    boxes: Any,
    output_size: Any = None,
    spatial_scale: Any = (1.0, 1.0),
    sampling_ratio: int = -1,
    channel_last: bool = False,
) -> Any:
    fn = "roi_align"
    size, scale, ratio = check_args(
        fn, x.shape, boxes.shape, output_size, spatial_scale, sampling_ratio, channel_last
    )
    if x.dtype.kind != "f":
        raise TypeError(f"{fn}: input must be floating point, got {x.dtype}")
    ct = _compute_dtype(x.dtype)
    xn = _to_nchw(xp, x, bool(channel_last)).astype(ct, copy=False)
    n, c, h, w = xn.shape
    k = int(boxes.shape[0])
    out = xp.zeros((k, c, size[0], size[1]), dtype=ct)
    if k:
        idx, ay, ax, fwd, _ = _plan(xp, fn, boxes, n, h, w, size, scale, ratio, ct)
        # box by box, on the rows and columns its samples touch: A^y x[b, :, rows, cols] A^x^T
        for j, (img, (y0, y1), (x0, x1)) in enumerate(_spans(xp, idx, ay, ax)):
            if y1 > y0 and x1 > x0:
                rows = xp.matmul(ay[j, :, y0:y1], xn[img, :, y0:y1, x0:x1])  # (C, out_h, cols)
                out[j] = xp.matmul(rows, ax[j, :, x0:x1].T)
        with np.errstate(invalid="ignore"):
            out *= fwd[:, None, None, None]  # (0 * inf: NaN for an empty grid, as nnabla)
    return _from_nchw(xp, out, bool(channel_last)).astype(x.dtype, copy=False)


def _spans(
    xp: Any, idx: Any, ay: Any, ax: Any
) -> Iterator[tuple[int, tuple[int, int], tuple[int, int]]]:
    """Per box: its image and the ``[start, stop)`` rows and columns of the image its samples
    read (where its weights ``ay``/``ax`` are not zero; empty for a box without samples)."""

    def bounds(a: Any) -> list[tuple[int, int]]:
        hit = xp.asnumpy(a.any(axis=1)) if hasattr(xp, "asnumpy") else a.any(axis=1)
        first = hit.argmax(axis=1)
        last = hit.shape[1] - hit[:, ::-1].argmax(axis=1)
        some = hit.any(axis=1)
        return [(int(f), int(t)) if s else (0, 0) for f, t, s in zip(first, last, some)]

    images = idx.tolist()
    yield from zip(images, bounds(ay), bounds(ax))


def _roi_align_backward(
    xp: Any,
    dy: Any,
    boxes: Any,
    output_size: Any = None,
    spatial_scale: Any = (1.0, 1.0),
    sampling_ratio: int = -1,
    channel_last: bool = False,
    x_shape: Any = (),
) -> Any:
    fn = "roi_align_backward"
    x_shape = tuple(int(d) for d in x_shape)
    size, scale, ratio = check_args(
        fn, x_shape, boxes.shape, output_size, spatial_scale, sampling_ratio, channel_last
    )
    n, c, h, w = _nchw_shape(x_shape, bool(channel_last))
    k = int(boxes.shape[0])
    want = (k, size[0], size[1], c) if channel_last else (k, c, size[0], size[1])
    if tuple(dy.shape) != want:
        raise ValueError(f"{fn}: dy has shape {tuple(dy.shape)}, expected {want}")
    if dy.dtype.kind != "f":
        raise TypeError(f"{fn}: dy must be floating point, got {dy.dtype}")
    ct = _compute_dtype(dy.dtype)
    dx = xp.zeros((n, c, h, w), dtype=ct)
    if k:
        g = _to_nchw(xp, dy, bool(channel_last)).astype(ct, copy=False)
        idx, ay, ax, _, bwd = _plan(xp, fn, boxes, n, h, w, size, scale, ratio, ct)
        gs = g * bwd[:, None, None, None]
        # box by box, into the rows and columns its samples read: A^y^T g A^x
        for j, (img, (y0, y1), (x0, x1)) in enumerate(_spans(xp, idx, ay, ax)):
            if y1 > y0 and x1 > x0:
                cols = xp.matmul(gs[j], ax[j, :, x0:x1])  # (C, out_h, cols)
                dx[img, :, y0:y1, x0:x1] += xp.matmul(ay[j, :, y0:y1].T, cols)
    return _from_nchw(xp, dx, bool(channel_last)).astype(dy.dtype, copy=False)


# -- backward rules, forward mode, batching ----------------------------------------------------


def _roi_align_bw(gy, inputs, in_shapes, outputs, out_shapes, **attrs):  # type: ignore[no-untyped-def]
    dx = call("RoIAlignBackward", gy[0], inputs[1], x_shape=tuple(in_shapes[0]), **attrs)
    return [dx, None]  # the boxes get no gradient (nnabla's RoiAlign)


def _roi_align_backward_bw(  # type: ignore[no-untyped-def]
    gy, inputs, in_shapes, outputs, out_shapes, x_shape, **attrs
):
    return [call("RoIAlign", gy[0], inputs[1], **attrs), None]


def _jvp_in_x(name: str) -> Any:
    """The forward-mode rule of a function linear in its first input (the boxes are constant,
    as in the backward rule): the function applied to the tangent of that input."""

    def rule(ins: Sequence[Any], outs: Sequence[Any], ts: Sequence[Any], **attrs: Any) -> Any:
        t = ts[0]
        return (None if t is None else call(name, t, ins[1], **attrs),)

    rule.__name__ = rule.__qualname__ = f"jvp_{name}"
    return rule


def _loop(name: str, args: Any, dims: Any, attrs: dict[str, Any]) -> Any:
    from gradhub.batching import loop

    return loop(name, args, dims, attrs, "cannot batch batched boxes")


def _merge_batch(a: Any, channel_last: bool) -> Any:
    """A batched 4-D operand ``(B, N, C, H, W)`` (or ``(B, N, H, W, C)``) with the vmap axis
    merged into the channels: ``(N, B * C, H, W)`` (or ``(N, H, W, B * C)``)."""
    b = int(a.shape[0])
    if channel_last:
        t = call("Transpose", a, axes=(1, 2, 3, 0, 4))
        s = tuple(int(d) for d in t.shape)
        return call("Reshape", t, shape=(s[0], s[1], s[2], b * s[4]))
    t = call("Transpose", a, axes=(1, 0, 2, 3, 4))
    s = tuple(int(d) for d in t.shape)
    return call("Reshape", t, shape=(s[0], b * s[2], s[3], s[4]))


def _split_batch(y: Any, b: int, channel_last: bool) -> Any:
    """The inverse of :func:`_merge_batch` on a result: the vmap axis first again."""
    s = tuple(int(d) for d in y.shape)
    if channel_last:
        t = call("Reshape", y, shape=(s[0], s[1], s[2], b, s[3] // b))
        return call("Transpose", t, axes=(3, 0, 1, 2, 4))
    t = call("Reshape", y, shape=(s[0], b, s[1] // b, s[2], s[3]))
    return call("Transpose", t, axes=(1, 0, 2, 3, 4))


def _batch_roi_align(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
    """vmap of ``RoIAlign`` over ``x`` with shared boxes: the vmap axis joins the channels (one
    call); batched boxes loop."""
    if dims[1] is not None or dims[0] is None:
        return _loop("RoIAlign", args, dims, attrs)
    cl = bool(attrs.get("channel_last", False))
    merged = _merge_batch(args[0], cl)
    y = call("RoIAlign", merged, args[1], **attrs)
    return _split_batch(y, int(args[0].shape[0]), cl), 0


def _batch_roi_align_backward(
    args: tuple[Any, ...], dims: tuple[Any, ...], x_shape: Any = (), **attrs: Any
) -> Any:
    """vmap of ``RoIAlignBackward`` over ``dy`` with shared boxes (as :func:`_batch_roi_align`)."""
    if dims[1] is not None or dims[0] is None:
        return _loop("RoIAlignBackward", args, dims, {**attrs, "x_shape": x_shape})
    cl = bool(attrs.get("channel_last", False))
    b = int(args[0].shape[0])
    xs = [int(d) for d in x_shape]
    xs[3 if cl else 1] *= b
    # dy (B, K, C, oh, ow) merges like an input (K plays N's part)
    merged = _merge_batch(args[0], cl)
    dx = call("RoIAlignBackward", merged, args[1], x_shape=tuple(xs), **attrs)
    return _split_batch(dx, b, cl), 0


# -- references (independent loops over every sample, float64) ---------------------------------


def _bilinear_ref(img: np.ndarray, yy: float, xx: float) -> np.ndarray:
    h, w = img.shape[1:]
    if yy < -1 or yy > h or xx < -1 or xx > w:
        return np.zeros(img.shape[0])
    yy, xx = min(max(yy, 0.0), h - 1.0), min(max(xx, 0.0), w - 1.0)
    y0, x0 = int(yy), int(xx)
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    ly, lx = yy - math.floor(yy), xx - math.floor(xx)
    return (
        (1 - ly) * (1 - lx) * img[:, y0, x0]
        + (1 - ly) * lx * img[:, y0, x1]
        + ly * (1 - lx) * img[:, y1, x0]
        + ly * lx * img[:, y1, x1]
    )


def _roi_align_ref(
    x: np.ndarray,
    boxes: np.ndarray,
    output_size: Any = None,
    spatial_scale: Any = (1.0, 1.0),
    sampling_ratio: int = -1,
    channel_last: bool = False,
) -> np.ndarray:
    """Per box, output cell and sample, as nnabla's CPU kernel."""
    xn = np.moveaxis(x, 3, 1) if channel_last else x
    oh, ow = output_size
    sy, sx = spatial_scale
    out = np.zeros((boxes.shape[0], xn.shape[1], oh, ow))
    for k, (bi, bx1, by1, bx2, by2) in enumerate(boxes.astype(np.float64)):
        img = xn[int(bi)]
        x1, y1 = bx1 * sx - 0.5, by1 * sy - 0.5
        x2, y2 = bx2 * sx - 0.5, by2 * sy - 0.5
        step_y, step_x = (y2 - y1) / oh, (x2 - x1) / ow
        gy = sampling_ratio if sampling_ratio > 0 else math.ceil(step_y)
        gx = sampling_ratio if sampling_ratio > 0 else math.ceil(step_x)
        for i in range(oh):
            for j in range(ow):
                acc = np.zeros(xn.shape[1])
                for a in range(gy):
                    yy = y1 + i * step_y + a * (step_y / gy) + 0.5 * (step_y / gy)
                    for b in range(gx):
                        xx = x1 + j * step_x + b * (step_x / gx) + 0.5 * (step_x / gx)
                        acc += _bilinear_ref(img, yy, xx)
                out[k, :, i, j] = acc / (gy * gx)
    return np.moveaxis(out, 1, 3) if channel_last else out


def _roi_align_backward_ref(
    dy: np.ndarray,
    boxes: np.ndarray,
    output_size: Any = None,
    spatial_scale: Any = (1.0, 1.0),
    sampling_ratio: int = -1,
    channel_last: bool = False,
    x_shape: Any = (),
) -> np.ndarray:
    """The transpose of the forward reference, built column by column."""
    size = math.prod(x_shape)
    dx = np.zeros(size)
    for j in range(size):
        e = np.zeros(size)
        e[j] = 1.0
        col = _roi_align_ref(
            e.reshape(x_shape), boxes, output_size, spatial_scale, sampling_ratio, channel_last
        )
        dx[j] = np.sum(col * dy)
    return dx.reshape(x_shape)


# -- samples -----------------------------------------------------------------------------------

_BOXES = np.array(
    [
        [0.0, 1.2, 0.7, 4.9, 5.3],
        [1.0, 0.3, 2.1, 6.6, 3.9],
        [0.0, -2.3, -1.7, 3.1, 8.4],  # partly outside the image
        [1.0, 5.5, 4.2, 9.9, 7.7],
    ]
)

#: (x shape, boxes rows, attrs, name)
_CASES: list[tuple[tuple[int, ...], list[int], dict[str, Any], str]] = [
    ((2, 2, 6, 7), [0, 1], {"output_size": (2, 3)}, "adaptive grid"),
    ((2, 2, 6, 7), [0, 1, 2, 3], {"output_size": (3, 2), "sampling_ratio": 2}, "ratio 2"),
    (
        (2, 1, 4, 5),
        [0, 2, 3],
        {"output_size": (2, 2), "spatial_scale": (0.5, 0.75)},
        "spatial scale",
    ),
    ((2, 6, 7, 2), [1, 2], {"output_size": (2, 2), "channel_last": True}, "channel_last"),
    ((2, 2, 6, 7), [], {"output_size": (2, 2)}, "no boxes"),
]


def _roi_align_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for shape, rows, attrs, name in _CASES:
        boxes = _BOXES[rows].reshape(len(rows), 5)
        yield Sample((rng.standard_normal(shape), boxes), dict(attrs), grad_inputs=(0,), name=name)
    x = rng.standard_normal((7, 6, 2, 2)).transpose(3, 2, 1, 0)
    yield Sample((x, _BOXES[[1, 0]]), {"output_size": (2, 2)}, grad_inputs=(0,), name="strided")


def _out_shape(shape: tuple[int, ...], k: int, attrs: dict[str, Any]) -> tuple[int, ...]:
    oh, ow = attrs["output_size"]
    if attrs.get("channel_last"):
        return (k, oh, ow, shape[3])
    return (k, shape[1], oh, ow)


def _roi_align_backward_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for shape, rows, attrs, name in _CASES:
        boxes = _BOXES[rows].reshape(len(rows), 5)
        dy = rng.standard_normal(_out_shape(shape, len(rows), attrs))
        yield Sample((dy, boxes), {**attrs, "x_shape": shape}, grad_inputs=(0,), name=name)


_DOC = """RoI Align (nnabla ``F.roi_align``): for each box, the input averaged over a regular
    grid of bilinear samples in each of the ``output_size`` cells of the box.

    ``boxes`` has shape ``(K, 5)``: ``(batch index, x1, y1, x2, y2)`` in input coordinates
    before ``spatial_scale`` ``(scale_y, scale_x)``; ``x`` is ``(N, C, H, W)`` (``(N, H, W, C)``
    with ``channel_last``) and the output ``(K, C, out_h, out_w)`` (``(K, out_h, out_w, C)``).
    With half-pixel alignment :math:`x_1' = x_1 s_x - 1/2` (likewise the other edges), cell
    size :math:`\\Delta_x = (x_2' - x_1') / out_w`, :math:`g_x` samples per cell
    (``sampling_ratio``, or :math:`\\lceil \\Delta_x \\rceil` when it is ``<= 0``):

    .. math::

        y_{k,c,i,j} = \\frac{1}{g_y g_x} \\sum_{a < g_y} \\sum_{b < g_x}
        \\mathrm{bilinear}(x_{b_k, c},\\; y_1' + (i + \\tfrac{a + 1/2}{g_y}) \\Delta_y,\\;
        x_1' + (j + \\tfrac{b + 1/2}{g_x}) \\Delta_x)

    A sample below -1 or beyond the size along an axis counts as 0; the others are clamped into
    the image. Linear in ``x`` (backward: ``RoIAlignBackward``); the boxes get no gradient. The
    batch index is truncated to an int and must be in ``[0, N)``.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.arange(16.0).reshape(1, 1, 4, 4))
        >>> boxes = gh.Variable(np.array([[0.0, 0.5, 0.5, 2.5, 2.5]]))
        >>> F.roi_align(x, boxes, (2, 2), sampling_ratio=1).d
        array([[[[2.5, 3.5],
                 [6.5, 7.5]]]])
    """

_DOC_BW = """The adjoint of ``RoIAlign`` in its input: ``dy`` scattered back to an input of
    shape ``x_shape`` with the bilinear weights of the samples (see ``roi_align``),

    .. math::

        dx_{n} = \\sum_{k: b_k = n} \\frac{1}{g_y g_x} {A^y_k}^T dy_k\\, A^x_k

    Its backward rule is ``RoIAlign``; the boxes get no gradient.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> dy = gh.Variable(np.ones((1, 1, 1, 1)))
        >>> boxes = gh.Variable(np.array([[0.0, 0.5, 0.5, 1.5, 1.5]]))
        >>> F.roi_align_backward(dy, boxes, (1, 1), x_shape=(1, 1, 2, 2)).d
        array([[[[0.25, 0.25],
                 [0.25, 0.25]]]])
    """


# -- registration ------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register ``RoIAlign`` and its adjoint ``RoIAlignBackward``."""
    register.function(
        "RoIAlign",
        _roi_align,
        inputs=("x", "boxes"),
        attrs=dict(ATTRS),
        rule=_roi_align_bw,
        need_inputs=(1,),
        need_outputs=(),
        samples=_roi_align_samples,
        reference=_roi_align_ref,
        snake="roi_align",
        doc=_DOC,
        jvp=_jvp_in_x("RoIAlign"),
        batch_rule=_batch_roi_align,
    )
    register.function(
        "RoIAlignBackward",
        _roi_align_backward,
        inputs=("dy", "boxes"),
        attrs={**ATTRS, "x_shape": ()},
        rule=_roi_align_backward_bw,
        need_inputs=(1,),
        need_outputs=(),
        samples=_roi_align_backward_samples,
        reference=_roi_align_backward_ref,
        snake="roi_align_backward",
        doc=_DOC_BW,
        jvp=_jvp_in_x("RoIAlignBackward"),
        batch_rule=_batch_roi_align_backward,
    )
