"""AffineGrid and WarpByGrid of gradhub-nn-ops: values against independent numpy loops,
gradients to order 2 in float64, argument checks."""

from __future__ import annotations

import itertools

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck

RNG = np.random.default_rng(21)


def _grid_loop(theta: np.ndarray, size: tuple[int, ...], align: bool) -> np.ndarray:
    def coords(n: int) -> np.ndarray:
        if align:
            return np.linspace(-1, 1, n) if n > 1 else np.zeros(1)
        return (2 * np.arange(n) + 1) / n - 1

    out = np.zeros((theta.shape[0], *size, len(size)))
    cs = [coords(n) for n in size]
    for b in range(theta.shape[0]):
        for pos in itertools.product(*(range(n) for n in size)):
            p = [cs[a][pos[a]] for a in reversed(range(len(size)))] + [1.0]
            out[(b, *pos)] = theta[b] @ np.array(p)
    return out


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(2, 3), (4, 1), (2, 3, 2)])
def test_affine_grid_values(size: tuple[int, ...], align: bool) -> None:
    d = len(size)
    theta = RNG.standard_normal((2, d, d + 1))
    got = F.affine_grid(gh.Variable(theta), size, align_corners=align).d
    np.testing.assert_allclose(got, _grid_loop(theta, size, align), rtol=1e-12, atol=1e-12)


def test_affine_grid_checks() -> None:
    with pytest.raises(ValueError, match=r"affine_grid: theta of shape \(1, 2, 2\)"):
        F.affine_grid(gh.Variable(np.ones((1, 2, 2))), (2, 2))
    with pytest.raises(ValueError, match="affine_grid: size must be"):
        F.affine_grid(gh.Variable(np.ones((1, 2, 3))), (2,))


def _bilinear_loop(x: np.ndarray, grid: np.ndarray, pad: str, align: bool) -> np.ndarray:
    """PyTorch's grid_sample written out pixel by pixel (zeros/border/reflection)."""
    b, c, h, w = x.shape

    def unnorm(g: float, n: int) -> float:
        return (g + 1) / 2 * (n - 1) if align else ((g + 1) * n - 1) / 2

    def fold(v: float, n: int) -> float:
        lo, hi = (0.0, n - 1.0) if align else (-0.5, n - 0.5)
        while v < lo or v > hi:  # mirror at the borders until inside
            v = 2 * lo - v if v < lo else 2 * hi - v
        return min(max(v, 0.0), n - 1.0)

    out = np.zeros((b, c, *grid.shape[1:3]))
    for k, i, j in itertools.product(range(b), *(range(n) for n in grid.shape[1:3])):
        cx, cy = unnorm(grid[k, i, j, 0], w), unnorm(grid[k, i, j, 1], h)
        if pad == "repeat":
            cx, cy = min(max(cx, 0), w - 1), min(max(cy, 0), h - 1)
        elif pad == "reflect":
            cx, cy = fold(cx, w), fold(cy, h)
        x0, y0 = int(np.floor(cx)), int(np.floor(cy))
        for dx, dy in itertools.product((0, 1), (0, 1)):
            xx, yy = x0 + dx, y0 + dy
            wt = (cx - x0 if dx else 1 - (cx - x0)) * (cy - y0 if dy else 1 - (cy - y0))
            if 0 <= xx < w and 0 <= yy < h:
                out[k, :, i, j] += wt * x[k, :, yy, xx]
    return out


def _grid(shape: tuple[int, ...]) -> np.ndarray:
    return np.round(RNG.uniform(-1.6, 1.6, shape) * 24) / 24 + 1 / 97  # away from the kinks


@pytest.mark.parametrize(
    ("pad", "align"), list(itertools.product(["zero", "repeat", "reflect"], [0, 1]))
)
def test_warp_by_grid_linear_values(pad: str, align: int) -> None:
    x = RNG.standard_normal((2, 3, 4, 5))
    g = _grid((2, 3, 6, 2))
    got = F.warp_by_grid(gh.Variable(x), gh.Variable(g), "linear", pad, bool(align)).d
    np.testing.assert_allclose(got, _bilinear_loop(x, g, pad, bool(align)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("pad", "align"), list(itertools.product(["zero", "repeat", "reflect"], [0, 1]))
)
def test_warp_by_grid_gradcheck_order_2(pad: str, align: int) -> None:
    x = RNG.standard_normal((1, 2, 3, 4))
    g = _grid((1, 2, 3, 2))
    assert gradcheck(lambda a, b: F.warp_by_grid(a, b, "linear", pad, bool(align)), [x, g], order=2)


def test_warp_by_grid_nearest_and_channel_last() -> None:
    x = RNG.standard_normal((1, 2, 3, 4))
    g = _grid((1, 2, 2, 2))
    near = F.warp_by_grid(gh.Variable(x), gh.Variable(g), "nearest", "zero", True).d
    ix = np.floor((g[..., 0] + 1) / 2 * 3 + 0.5).astype(int)
    iy = np.floor((g[..., 1] + 1) / 2 * 2 + 0.5).astype(int)
    for i, j in itertools.product(range(2), range(2)):
        a, b = ix[0, i, j], iy[0, i, j]
        want = x[0, :, b, a] if 0 <= a < 4 and 0 <= b < 3 else 0.0
        np.testing.assert_array_equal(near[0, :, i, j], want)
    cl = F.warp_by_grid(gh.Variable(x.transpose(0, 2, 3, 1)), gh.Variable(g), channel_last=True)
    ref = F.warp_by_grid(gh.Variable(x), gh.Variable(g)).d
    np.testing.assert_allclose(cl.d, ref.transpose(0, 2, 3, 1), rtol=1e-12)


def test_warp_by_grid_checks() -> None:
    x, g = gh.Variable(np.ones((1, 1, 2, 2))), gh.Variable(np.zeros((1, 1, 1, 2)))
    with pytest.raises(ValueError, match="warp_by_grid: mode must be"):
        F.warp_by_grid(x, g, mode="cubic")
    with pytest.raises(ValueError, match="warp_by_grid: padding_mode must be"):
        F.warp_by_grid(x, g, padding_mode="wrap")
    with pytest.raises(NotImplementedError, match="migration-nnabla"):
        F.warp_by_grid(
            gh.Variable(np.ones((1, 1, 2, 2, 2))), gh.Variable(np.zeros((1, 1, 1, 1, 3)))
        )
    with pytest.raises(ValueError, match="warp_by_grid: x of shape"):
        F.warp_by_grid(x, gh.Variable(np.zeros((2, 1, 1, 2))))


def _flow_loop(x: np.ndarray, flow: np.ndarray) -> np.ndarray:
    """Bilinear reads at the moved pixels, every read index clamped to the image."""
    b, _, h, w = x.shape
    out = np.zeros(x.shape)
    for k, i, j in itertools.product(range(b), range(h), range(w)):
        cx, cy = j + flow[k, 0, i, j], i + flow[k, 1, i, j]
        x0, y0 = int(np.floor(cx)), int(np.floor(cy))
        for dx, dy in itertools.product((0, 1), (0, 1)):
            wt = (cx - x0 if dx else 1 - (cx - x0)) * (cy - y0 if dy else 1 - (cy - y0))
            yy, xx = min(max(y0 + dy, 0), h - 1), min(max(x0 + dx, 0), w - 1)
            out[k, :, i, j] += wt * x[k, :, yy, xx]
    return out


def test_warp_by_flow_values_and_gradcheck() -> None:
    x = RNG.standard_normal((2, 3, 4, 5))
    flow = np.round(RNG.uniform(-3, 3, (2, 2, 4, 5)) * 8) / 8 + 1 / 37
    got = F.warp_by_flow(gh.Variable(x), gh.Variable(flow)).d
    np.testing.assert_allclose(got, _flow_loop(x, flow), rtol=1e-12, atol=1e-12)
    assert gradcheck(F.warp_by_flow, [x[:1, :2, :3, :3], flow[:1, :, :3, :3]], order=2)
    with pytest.raises(ValueError, match="warp_by_flow: flow of shape"):
        F.warp_by_flow(gh.Variable(x), gh.Variable(flow[:, :1]))
