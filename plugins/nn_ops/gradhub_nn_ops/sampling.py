"""gradhub-nn-ops: sampling grids and warps (nnabla's ``AffineGrid``, ``WarpByGrid`` and
``WarpByFlow``).

All are composites of registered functions (``AffineGrid``: a constant base grid and
``BatchMatmul``; ``WarpByGrid``: ``Gather`` of the neighbouring pixels weighted by the grid's
fractional parts; ``WarpByFlow``: ``WarpByGrid`` of the moved pixels), so each is
differentiable to any order through its parts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub import Sample, Variable, as_variable
from gradhub.ops import call

from .math import int_arg


def _base_coords(n: int, align_corners: bool) -> np.ndarray:
    """Normalized coordinates of ``n`` positions in [-1, 1]: the centers of the pixels, or with
    ``align_corners`` the pixels at the ends on -1 and 1 (nnabla's)."""
    if align_corners:
        return np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
    return (2.0 * np.arange(n) + 1.0) / n - 1.0


def _base_grid(size: tuple[int, ...], align_corners: bool) -> np.ndarray:
    """``(prod(size), d + 1)``: at each position ``(x, y[, z], 1)``, ``x`` along the last axis."""
    axes = [_base_coords(n, align_corners) for n in size]
    mesh = np.meshgrid(*axes, indexing="ij")
    cols = [m.reshape(-1) for m in reversed(mesh)]
    return np.stack([*cols, np.ones(int(np.prod(size)))], axis=1)


def _grid_size(size: Any) -> tuple[int, ...]:
    try:
        dims = tuple(int_arg("affine_grid", "size", s) for s in size)
    except TypeError as e:
        if "size must be" in str(e):
            raise
        raise TypeError(f"affine_grid: size must be a tuple of ints, got {size!r}") from None
    if len(dims) not in (2, 3) or min(dims) < 1:
        raise ValueError(
            f"affine_grid: size must be (H, W) or (D, H, W) of positive ints, got {size!r}"
        )
    return dims


def affine_grid(theta: Any, size: Any, align_corners: bool = False) -> Variable:
    r"""affine_grid(theta, size, align_corners=False): the sampling grid of the affine maps
    ``theta`` (nnabla ``F.affine_grid``; PyTorch's ``affine_grid``).

    ``theta`` has shape ``(B, 2, 3)`` for ``size = (H, W)`` or ``(B, 3, 4)`` for ``(D, H, W)``;
    the grid has shape ``(B, *size, d)``: at each output position the normalized source
    coordinates :math:`\theta\,(x, y[, z], 1)^T`, ``x`` along the last axis, ``x, y, z`` in
    [-1, 1] (pixel centers, or with ``align_corners`` the corner pixels on -1 and 1). Composed
    of ``BatchMatmul`` with a constant base grid, so differentiable to any order in ``theta``.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> theta = gh.Variable(np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]))
        >>> F.affine_grid(theta, (1, 2)).d
        array([[[[-0.5,  0. ],
                 [ 0.5,  0. ]]]])
    """
    theta = as_variable(theta)
    dims = _grid_size(size)
    d = len(dims)
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (d, d + 1):
        raise ValueError(
            f"affine_grid: theta of shape {tuple(theta.shape)} must be (B, {d}, {d + 1}) for "
            f"size {dims}"
        )
    base = _base_grid(dims, bool(align_corners))
    xp = theta.device.xp
    b = Variable.leaf(xp.asarray(base.astype(theta.dtype if theta.dtype.kind == "f" else float)))
    b = call("Reshape", b, shape=(1, *base.shape))
    grid = call("BatchMatmul", b, theta, transpose_b=True)  # (B, prod(size), d)
    return call("Reshape", grid, shape=(int(theta.shape[0]), *dims, d))


def _affine_grid_ref(theta: np.ndarray, size: Any, align_corners: bool = False) -> np.ndarray:
    dims = tuple(int(s) for s in size)
    base = _base_grid(dims, align_corners)
    out = np.einsum("pk,bdk->bpd", base, theta)
    return out.reshape(theta.shape[0], *dims, len(dims))


def _affine_grid_samples(rng: np.random.Generator) -> Iterator[Sample]:
    t2 = rng.standard_normal((2, 2, 3))
    yield Sample((t2,), {"size": (2, 3), "align_corners": False}, name="2-d")
    yield Sample((t2,), {"size": (3, 2), "align_corners": True}, name="2-d, align_corners")
    yield Sample((rng.standard_normal((1, 3, 4)),), {"size": (2, 1, 3)}, name="3-d")
    yield Sample((t2,), {"size": (1, 1), "align_corners": True}, name="one position")


_PADDING = ("zero", "repeat", "reflect")


def _unnormalized(g: Any, n: int, align_corners: bool) -> Any:
    """Pixel coordinates of the normalized ``g``: ``(g + 1)/2 (n - 1)`` with ``align_corners``,
    else ``((g + 1) n - 1)/2``."""
    if align_corners:
        return call("AddScalar", call("MulScalar", g, val=(n - 1) / 2.0), val=(n - 1) / 2.0)
    return call("AddScalar", call("MulScalar", g, val=n / 2.0), val=(n - 1) / 2.0)


def _reflected(c: Any, n: int, align_corners: bool) -> Any:
    """``c`` reflected at the borders (``0, n - 1``, or ``-0.5, n - 0.5`` without
    ``align_corners``) into the image, then clipped: ``lo + s - |mod(c - lo, 2 s) - s|``."""
    lo, hi = (0.0, n - 1.0) if align_corners else (-0.5, n - 0.5)
    span = hi - lo
    if span <= 0:
        return call("MulScalar", c, val=0.0)
    t = call("AddScalar", c, val=-lo)
    wraps = call("Floor", call("MulScalar", t, val=1.0 / (2 * span)))  # no gradient
    t = t - call("MulScalar", wraps, val=2 * span)
    r = call("AddScalar", -call("Abs", call("AddScalar", t, val=-span)), val=lo + span)
    return call("MinimumScalar", call("MaximumScalar", r, val=0.0), val=n - 1.0)


def _round_half_away(c: Any) -> Any:
    """``c`` rounded to the nearest integer, halves away from zero (nnabla's ``std::round``):
    ``sign(c) floor(|c| + 0.5)``, recorded (no gradient)."""
    return call("Sign", c) * call("Floor", call("AddScalar", call("Abs", c), val=0.5))


def _round_half_away_np(c: float) -> int:
    return int(np.sign(c) * np.floor(abs(c) + 0.5))


def warp_by_grid(
    x: Any,
    grid: Any,
    mode: str = "linear",
    padding_mode: str = "zero",
    align_corners: bool = False,
    channel_last: bool = False,
) -> Variable:
    r"""warp_by_grid(x, grid, mode='linear', padding_mode='zero', align_corners=False,
    channel_last=False): ``x`` sampled at the normalized coordinates ``grid`` (nnabla
    ``F.warp_by_grid``; PyTorch's ``grid_sample``), 2-d.

    ``x`` has shape ``(B, C, H, W)`` (``(B, H, W, C)`` with ``channel_last``), ``grid``
    ``(B, Ho, Wo, 2)`` holding ``(x, y)`` in [-1, 1] (see :func:`affine_grid` for
    ``align_corners``); the output has shape ``(B, C, Ho, Wo)``. ``mode``: ``"linear"``
    (bilinear) or ``"nearest"``; ``padding_mode``: outside the image ``"zero"`` reads zeros,
    ``"repeat"`` the nearest border pixel, ``"reflect"`` the pixel mirrored at the borders.
    Composed of registered functions (``Gather`` of the neighbours weighted by the grid's
    fractional parts), so the gradients of ``x`` and, for ``"linear"``, of ``grid`` are
    differentiable again; ``"nearest"`` gives ``grid`` a zero gradient. 3-d grids raise
    NotImplementedError (see docs/migration-nnabla.md).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.arange(4.0).reshape(1, 1, 2, 2))
        >>> g = gh.Variable(np.array([[[[0.0, 0.0], [-0.5, -0.5]]]]))
        >>> F.warp_by_grid(x, g).d
        array([[[[1.5, 0. ]]]])
    """
    x, grid = as_variable(x), as_variable(grid)
    if mode not in ("linear", "nearest"):
        raise ValueError(f"warp_by_grid: mode must be 'linear' or 'nearest', got {mode!r}")
    if padding_mode not in _PADDING:
        raise ValueError(
            f"warp_by_grid: padding_mode must be one of {_PADDING}, got {padding_mode!r}"
        )
    if grid.ndim == 5 or x.ndim == 5:
        raise NotImplementedError(
            "warp_by_grid: 3-d warps (5-d x and grid) are not supported; see "
            "docs/migration-nnabla.md"
        )
    if x.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2 or grid.shape[0] != x.shape[0]:
        raise ValueError(
            f"warp_by_grid: x of shape {tuple(x.shape)} must be (B, C, H, W) and grid of shape "
            f"{tuple(grid.shape)} (B, Ho, Wo, 2) with the same B"
        )
    if channel_last:
        x = call("Transpose", x, axes=(0, 3, 1, 2))
    b, c, h, w = (int(n) for n in x.shape)
    ho, wo = int(grid.shape[1]), int(grid.shape[2])
    ac = bool(align_corners)
    cx = _unnormalized(call("GetItem", grid, key=(Ellipsis, 0)), w, ac)
    cy = _unnormalized(call("GetItem", grid, key=(Ellipsis, 1)), h, ac)
    if padding_mode == "repeat":
        cx = call("MinimumScalar", call("MaximumScalar", cx, val=0.0), val=w - 1.0)
        cy = call("MinimumScalar", call("MaximumScalar", cy, val=0.0), val=h - 1.0)
    elif padding_mode == "reflect":
        cx, cy = _reflected(cx, w, ac), _reflected(cy, h, ac)
    # (B, H W, C): one row per pixel, gathered with per-sample indices. The indices and the
    # in-image masks are recorded functions of the grid (Floor, comparisons: no gradient), so a
    # graph re-executed with new grid values reads the new pixels
    rows = call("Reshape", call("Transpose", x, axes=(0, 2, 3, 1)), shape=(b, h * w, c))

    def inside(v: Any, n: int) -> Any:
        return call("GreaterEqualScalar", v, val=0.0) * call("LessScalar", v, val=float(n))

    def read(ix: Any, iy: Any, weight: Any) -> Any:
        mask = inside(ix, w) * inside(iy, h)
        cix = call("MinimumScalar", call("MaximumScalar", ix, val=0.0), val=w - 1.0)
        ciy = call("MinimumScalar", call("MaximumScalar", iy, val=0.0), val=h - 1.0)
        idx = call("Reshape", call("MulScalar", ciy, val=float(w)) + cix, shape=(b, ho * wo))
        vals = call("Gather", rows, idx, axis=1, batch_dims=1)
        wt = mask if weight is None else mask * weight
        return vals * call("Reshape", wt, shape=(b, ho * wo, 1))

    if mode == "nearest":
        out = read(_round_half_away(cx), _round_half_away(cy), None)
    else:
        fx, fy = call("Floor", cx), call("Floor", cy)
        wx1, wy1 = cx - fx, cy - fy
        wx0, wy0 = call("RSubScalar", wx1, val=1.0), call("RSubScalar", wy1, val=1.0)
        fx1, fy1 = call("AddScalar", fx, val=1.0), call("AddScalar", fy, val=1.0)
        out = (
            read(fx, fy, wx0 * wy0)
            + read(fx1, fy, wx1 * wy0)
            + read(fx, fy1, wx0 * wy1)
            + read(fx1, fy1, wx1 * wy1)
        )
    out = call("Reshape", out, shape=(b, ho, wo, c))
    return call("Transpose", out, axes=(0, 1, 2, 3) if channel_last else (0, 3, 1, 2))


def _warp_ref(
    x: np.ndarray,
    grid: np.ndarray,
    mode: str = "linear",
    padding_mode: str = "zero",
    align_corners: bool = False,
    channel_last: bool = False,
) -> np.ndarray:
    if channel_last:
        x = x.transpose(0, 3, 1, 2)
    bsz, c, h, w = x.shape

    def unnorm(g: np.ndarray, n: int) -> np.ndarray:
        return (g + 1) / 2 * (n - 1) if align_corners else ((g + 1) * n - 1) / 2

    def reflect(v: np.ndarray, n: int) -> np.ndarray:
        lo, hi = (0.0, n - 1.0) if align_corners else (-0.5, n - 0.5)
        span = hi - lo
        if span <= 0:
            return np.zeros_like(v)
        v = np.abs(v - lo)
        flips = np.floor(v / span)
        extra = v - flips * span
        return np.clip(np.where(flips % 2 == 0, extra + lo, span - extra + lo), 0, n - 1)

    gx, gy = unnorm(grid[..., 0], w), unnorm(grid[..., 1], h)
    if padding_mode == "repeat":
        gx, gy = np.clip(gx, 0, w - 1), np.clip(gy, 0, h - 1)
    elif padding_mode == "reflect":
        gx, gy = reflect(gx, w), reflect(gy, h)
    ho, wo = grid.shape[1:3]
    out = np.zeros((bsz, c, ho, wo), np.result_type(x, grid))

    def px(k: int, yy: int, xx: int) -> np.ndarray:
        return x[k, :, yy, xx] if 0 <= yy < h and 0 <= xx < w else np.zeros(c)

    for k in range(bsz):
        for i in range(ho):
            for j in range(wo):
                cx, cy = gx[k, i, j], gy[k, i, j]
                if mode == "nearest":
                    out[k, :, i, j] = px(k, _round_half_away_np(cy), _round_half_away_np(cx))
                    continue
                x0, y0 = int(np.floor(cx)), int(np.floor(cy))
                ax, ay = cx - x0, cy - y0
                out[k, :, i, j] = (
                    px(k, y0, x0) * (1 - ax) * (1 - ay)
                    + px(k, y0, x0 + 1) * ax * (1 - ay)
                    + px(k, y0 + 1, x0) * (1 - ax) * ay
                    + px(k, y0 + 1, x0 + 1) * ax * ay
                )
    return out.transpose(0, 2, 3, 1) if channel_last else out


def warp_by_flow(data: Any, flow: Any) -> Variable:
    r"""warp_by_flow(data, flow): ``data`` (``(B, C, H, W)``) sampled bilinearly at each pixel
    moved by its flow (nnabla ``F.warp_by_flow``): ``y[b, :, i, j] = data[b, :, i + flow[b, 1, i,
    j], j + flow[b, 0, i, j]]``, positions outside the image clamped to its border.

    ``flow`` has shape ``(B, 2, H, W)`` (x then y displacements, in pixels). Composed as
    ``warp_by_grid(data, grid, "linear", "repeat", align_corners=True)`` with the grid of the
    moved pixel centers, so the gradients of ``data`` and ``flow`` are differentiable again.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.array([[[[0.0, 1.0, 2.0]]]]))
        >>> flow = gh.Variable(np.array([[[[0.5, 0.5, 0.5]], [[0.0, 0.0, 0.0]]]]))
        >>> F.warp_by_flow(x, flow).d
        array([[[[0.5, 1.5, 2. ]]]])
    """
    data, flow = as_variable(data), as_variable(flow)
    if data.ndim != 4:
        raise ValueError(f"warp_by_flow: data of shape {tuple(data.shape)} must be (B, C, H, W)")
    b, _, h, w = (int(n) for n in data.shape)
    if tuple(flow.shape) != (b, 2, h, w):
        raise ValueError(
            f"warp_by_flow: flow of shape {tuple(flow.shape)} must be (B, 2, H, W) = {(b, 2, h, w)}"
        )
    xp = data.device.xp
    dt = flow.dtype if flow.dtype.kind == "f" else np.dtype(float)
    jj, ii = np.meshgrid(np.arange(w), np.arange(h))
    base = Variable.leaf(xp.asarray(np.stack([jj, ii], axis=-1).astype(dt)))  # (H, W, 2)
    scale = np.array([2.0 / (w - 1) if w > 1 else 0.0, 2.0 / (h - 1) if h > 1 else 0.0], dt)
    pos = call("Transpose", flow, axes=(0, 2, 3, 1)) + base
    grid = call("AddScalar", pos * Variable.leaf(xp.asarray(scale)), val=-1.0)
    return warp_by_grid(data, grid, "linear", "repeat", True)


def _warp_by_flow_ref(data: np.ndarray, flow: np.ndarray) -> np.ndarray:
    b, _, h, w = data.shape
    out = np.zeros(data.shape, np.result_type(data, flow))
    for k in range(b):
        for i in range(h):
            for j in range(w):
                cx = min(max(j + flow[k, 0, i, j], 0.0), w - 1.0)
                cy = min(max(i + flow[k, 1, i, j], 0.0), h - 1.0)
                x0, y0 = int(np.floor(cx)), int(np.floor(cy))
                x1, y1 = min(x0 + 1, w - 1), min(y0 + 1, h - 1)
                ax, ay = cx - x0, cy - y0
                out[k, :, i, j] = (
                    data[k, :, y0, x0] * (1 - ax) * (1 - ay)
                    + data[k, :, y0, x1] * ax * (1 - ay)
                    + data[k, :, y1, x0] * (1 - ax) * ay
                    + data[k, :, y1, x1] * ax * ay
                )
    return out


def _warp_by_flow_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.standard_normal((2, 2, 3, 4))
    flow = np.round(rng.uniform(-2.5, 2.5, (2, 2, 3, 4)) * 8) / 8 + 1 / 37  # off whole pixels
    yield Sample((x, flow), name="(2, 2, 3, 4)")
    yield Sample((x[:1, :1, :1], flow[:1, :, :1]), name="one row")


def _away_from_pixels(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Grid values in [-1.4, 1.4] whose pixel coordinates (both conventions, sizes 3 and 4) stay
    away from whole and half numbers and the borders' reflections (the kinks)."""
    g = rng.uniform(-1.4, 1.4, shape)
    return np.round(g * 24) / 24 + 1 / 97


def _warp_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.standard_normal((2, 2, 3, 4))
    for pm in _PADDING:
        for ac in (False, True):
            yield Sample(
                (x, _away_from_pixels(rng, (2, 2, 3, 2))),
                {"mode": "linear", "padding_mode": pm, "align_corners": ac},
                name=f"linear, {pm}, align_corners={ac}",
            )
    yield Sample(
        (x, _away_from_pixels(rng, (2, 2, 3, 2))),
        {"mode": "nearest", "padding_mode": "zero"},
        grad_inputs=(0,),
        name="nearest",
    )
    yield Sample(
        (x.transpose(0, 2, 3, 1), _away_from_pixels(rng, (2, 1, 2, 2))),
        {"channel_last": True, "padding_mode": "reflect"},
        name="channel_last",
    )


def register_functions(register: Any) -> None:
    """Register the sampling grid functions."""
    register.composite(
        "AffineGrid", affine_grid, samples=_affine_grid_samples, reference=_affine_grid_ref
    )
    register.composite("WarpByGrid", warp_by_grid, samples=_warp_samples, reference=_warp_ref)
    register.composite(
        "WarpByFlow", warp_by_flow, samples=_warp_by_flow_samples, reference=_warp_by_flow_ref
    )
