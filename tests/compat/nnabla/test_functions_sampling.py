"""nnabla's F.affine_grid and F.warp_by_grid: values and gradients (input and grid) against
nnabla 1.39 on the same inputs, in every padding mode and both corner conventions."""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest

X = np.array([[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]], np.float32)
GRID = np.array([[[[-0.3, 0.2], [0.9, -0.7], [1.3, 1.1]]]], np.float32)
GY = np.array([[[[1.0, -2.0, 0.5]]]], np.float32)

# nnabla 1.39: (y, x.g, grid.g) of warp_by_grid(X, GRID, "linear", padding_mode, align_corners)
# after y.backward(GY)
LINEAR: dict[tuple[str, bool], tuple[Any, Any, Any]] = {
    ("zero", False): (
        [0.47125011682510376, 1.0400002002716064, -0.015000061132013798],
        [0.135, 0.165, -1.0400002002716064, 0.315000057220459, 0.385, 0.010000040754675865],
        [-1.9875000715255737, 1.1375000476837158, 4.800000190734863, -2.6000003814697266]
        + [0.2250000536441803, 0.01875007152557373],
    ),
    ("zero", True): (
        [0.15500004589557648, 1.3474998474121094, -0.49875006079673767],
        [0.12, 0.11, -1.53, 0.18, 0.39, 0.06250002980232239],
        [-1.35, 0.5875, -4.800000190734863, 2.3499999046325684, 0.35625001788139343]
        + [0.13125000894069672],
    ),
    ("repeat", False): (
        [0.47125011682510376, 2.0, -0.75],
        [0.135, 0.165, -2.0, 0.315000057220459, 0.385, 0.5],
        [-1.9875000715255737, 1.1375000476837158, 0.0, 0.0, 0.0, 0.0],
    ),
    ("repeat", True): (
        [0.15500004589557648, 1.3474998474121094, -0.75],
        [0.12, 0.11, -1.53, 0.18, 0.39, 0.23],
        [-1.35, 0.5875, -4.800000190734863, 2.3499999046325684, 0.0, 0.0],
    ),
    ("reflect", False): (
        [0.47125011682510376, 2.0, -0.75],
        [0.135, 0.165, -2.0, 0.315000057220459, 0.385, 0.5],
        [-1.9875000715255737, 1.1375000476837158, 0.0, 0.0, 0.0, 0.0],
    ),
    ("reflect", True): (
        [0.15500004589557648, 1.3474998474121094, -0.37250012159347534],
        [0.12, 0.11749991774559021, -1.5124999284744263, 0.18, 0.5325000286102295]
        + [0.06250002980232239],
        [-1.35, 0.5875, -4.800000190734863, 2.3499999046325684, 0.40000009536743164]
        + [0.3875000476837158],
    ),
}

# nnabla 1.39: (y, x.g) in the nearest mode (align_corners=False; the grid gets no gradient)
NEAREST = {
    "zero": ([0.25, 2.0, 0.0], [0.0, 0.0, -2.0, 0.0, 1.0, 0.0]),
    "repeat": ([0.25, 2.0, -0.75], [0.0, 0.0, -2.0, 0.0, 1.0, 0.5]),
    "reflect": ([0.25, 2.0, -0.75], [0.0, 0.0, -2.0, 0.0, 1.0, 0.5]),
}


@pytest.mark.parametrize(("padding_mode", "align_corners"), list(LINEAR))
def test_linear_as_nnabla(padding_mode: str, align_corners: bool) -> None:
    xv = nn.Variable.from_numpy_array(X, need_grad=True)
    gv = nn.Variable.from_numpy_array(GRID, need_grad=True)
    y = F.warp_by_grid(xv, gv, "linear", padding_mode, align_corners)
    y.forward()
    xv.grad.zero()
    gv.grad.zero()
    y.backward(GY)
    want_y, want_x, want_g = LINEAR[(padding_mode, align_corners)]
    assert y.d.dtype == np.float32 and y.shape == (1, 1, 1, 3)
    np.testing.assert_allclose(y.d.ravel(), want_y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xv.g.ravel(), want_x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gv.g.ravel(), want_g, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("padding_mode", list(NEAREST))
def test_nearest_as_nnabla(padding_mode: str) -> None:
    xv = nn.Variable.from_numpy_array(X, need_grad=True)
    y = F.warp_by_grid(xv, nn.Variable.from_numpy_array(GRID), "nearest", padding_mode)
    y.forward()
    xv.grad.zero()
    y.backward(GY)
    want_y, want_x = NEAREST[padding_mode]
    np.testing.assert_allclose(y.d.ravel(), want_y)
    np.testing.assert_allclose(xv.g.ravel(), want_x)


def test_nearest_rounds_halves_away_from_zero_as_nnabla() -> None:
    x = nn.Variable.from_numpy_array(np.arange(8.0).reshape(1, 1, 2, 4))
    g = [[[[-0.5, -0.5], [0.0, -0.5], [0.5, -0.5], [-1.0, -0.5], [-0.5, -1.0], [-0.5, 1.0]]]]
    y = F.warp_by_grid(x, nn.Variable.from_numpy_array(np.array(g)), "nearest")
    y.forward()
    np.testing.assert_array_equal(y.d.ravel(), [1, 2, 3, 0, 0, 0])  # nnabla 1.39


def test_second_derivative_through_the_grid() -> None:
    # nnabla 1.39 raises (warp_by_grid_backward is not implemented); here the gradient is a graph
    xv = nn.Variable.from_numpy_array(X, need_grad=True)
    gv = nn.Variable.from_numpy_array(GRID, need_grad=True)
    y = F.warp_by_grid(xv, gv)
    (gg,) = nn.grad([F.sum(y * y)], [gv])
    z = F.sum(gg * gg)
    z.forward()
    assert np.isfinite(z.d)


def test_affine_grid_as_nnabla() -> None:
    theta = np.array(
        [[[0.9, 0.2, 0.1], [-0.1, 1.1, -0.2]], [[1.0, 0.0, 0.3], [0.2, 0.8, 0.0]]], np.float32
    )
    t = nn.Variable.from_numpy_array(theta, need_grad=True)
    g = F.affine_grid(t, (2, 3))
    g.forward()
    # nnabla 1.39 (align_corners=False), first sample
    np.testing.assert_allclose(
        g.d[0].reshape(-1, 2),
        [[-0.6, -0.6833333], [0.0, -0.75], [0.6, -0.8166667]]
        + [[-0.4, 0.4166667], [0.2, 0.35], [0.8000001, 0.2833334]],
        rtol=1e-5,
        atol=1e-6,
    )
    t.grad.zero()
    g.backward(np.arange(24, dtype=np.float32).reshape(2, 2, 3, 2) / 10)
    np.testing.assert_allclose(
        t.g,
        [[[0.5333333, 0.9, 3.0], [0.5333334, 0.9, 3.6]]]
        + [[[0.5333333, 0.9000001, 10.2], [0.5333334, 0.9, 10.8]]],
        rtol=1e-5,
    )
    g = F.affine_grid(t, (2, 3), align_corners=True)
    g.forward()
    np.testing.assert_allclose(  # nnabla 1.39
        g.d[1].reshape(-1, 2),
        [[-0.7, -1.0], [0.3, -0.8], [1.3, -0.6], [-0.7, 0.6], [0.3, 0.8], [1.3, 1.0]],
        rtol=1e-5,
        atol=1e-6,
    )


def test_warp_by_flow_as_nnabla() -> None:
    flow = np.array(
        [[[[0.3, -0.6, 1.4], [-1.7, 0.2, 0.45]], [[0.25, 0.6, -0.3], [-0.4, -1.2, 0.7]]]],
        np.float32,
    )
    xv = nn.Variable.from_numpy_array(X, need_grad=True)
    fv = nn.Variable.from_numpy_array(flow, need_grad=True)
    y = F.warp_by_flow(xv, fv)
    y.forward()
    xv.grad.zero()
    fv.grad.zero()
    y.backward(np.array([[[[1.0, -2.0, 0.5], [0.3, 0.7, -1.1]]]], np.float32))
    # nnabla 1.39
    np.testing.assert_allclose(
        y.d.ravel(), [0.31875, 0.56, 2.0, 1.1, -0.39999985694885254, -0.75], rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        xv.g.ravel(), [0.165, 0.465, 0.64, -0.365, -0.405, -1.1], rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        fv.g.ravel(),
        [-1.4375, 2.7, 0.0, 0.0, 2.1, 0.0, 1.075, -2.2, 0.0, 0.3, 0.0, 0.0],
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_forward_reexecutes_with_new_grid_values(mode: str) -> None:
    xv = nn.Variable.from_numpy_array(X)
    gv = nn.Variable.from_numpy_array(GRID)
    y = F.warp_by_grid(xv, gv, mode)
    y.forward()
    new = np.array([[[[0.5, -0.5], [-0.9, 0.7], [0.1, 0.1]]]], np.float32)
    gv.d = new
    y.forward()
    fresh = F.warp_by_grid(xv, nn.Variable.from_numpy_array(new), mode)
    fresh.forward()
    np.testing.assert_array_equal(y.d, fresh.d)
