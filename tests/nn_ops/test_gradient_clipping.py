"""Values and gradients of clip_grad_by_value and clip_grad_by_norm
(gradhub_nn_ops.gradient_flow) against nnabla 1.39.

Every expected number below is nnabla 1.39's (CPU, float32) for that input and output
gradient, rounded to 5 decimals; gradhub computes in float64.
"""

from __future__ import annotations

from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest

# (function, attrs, inputs, dy, nnabla 1.39's y, nnabla 1.39's gradients of the inputs)
NNABLA_CASES: list[tuple[str, dict[str, Any], list[Any], Any, Any, list[Any]]] = [
    (
        "clip_grad_by_norm",
        {"clip_norm": 2.0, "axes": (1,)},
        [np.array([[0.42, 0.78, -0.96], [0.59, 2.07, -1.47]])],
        np.array([[0.26, 0.93, -0.15], [-0.07, 1.39, -1.25]]),
        np.array([[0.42, 0.78, -0.96], [0.59, 2.07, -1.47]]),
        [np.array([[0.53211, 1.90332, -0.30699], [-0.07484, 1.48608, -1.3364]])],
    ),
    (
        "clip_grad_by_norm",
        {"clip_norm": 0.5},
        [np.array([[-0.83, -0.88, -0.28], [1.62, 0.01, -0.69]])],
        np.array([[-1.5, -0.65, -1.2], [1.35, 0.31, -0.86]]),
        np.array([[-0.83, -0.88, -0.28], [1.62, 0.01, -0.69]]),
        [np.array([[-0.28823, -0.1249, -0.23059], [0.25941, 0.05957, -0.16525]])],
    ),
]


@pytest.mark.parametrize(
    ("name", "attrs", "inputs", "dy", "y_nn", "grads_nn"),
    NNABLA_CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(NNABLA_CASES)],
)
def test_matches_nnabla(
    name: str, attrs: dict[str, Any], inputs: list[Any], dy: Any, y_nn: Any, grads_nn: list[Any]
) -> None:
    xs = [gh.Variable(np.asarray(a, dtype=np.float64)) for a in inputs]
    y = getattr(F, name)(*xs, **attrs)
    np.testing.assert_allclose(y.d, y_nn, atol=2e-5)
    y.backward(dy)
    for x, g in zip(xs, grads_nn):
        np.testing.assert_allclose(x.g, g, atol=2e-5)


def test_clip_grad_by_value_matches_nnabla() -> None:
    # nnabla 1.39: x = [[1, -2, 3], [0.5, 4, -1]], min = -1, max = 1, dy below.
    x = gh.Variable(np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]))
    lo = gh.Variable(-np.ones((2, 3)), need_grad=False)
    hi = gh.Variable(np.ones((2, 3)), need_grad=False)
    y = F.clip_grad_by_value(x, lo, hi)
    np.testing.assert_array_equal(y.d, x.d)
    y.backward(np.array([[3.0, -0.2, 0.5], [-4.0, 1.0, 0.1]]))
    np.testing.assert_allclose(x.g, [[1.0, -0.2, 0.5], [-1.0, 1.0, 0.1]])


def test_clip_grad_by_norm_scales_up_small_gradients_as_nnabla() -> None:
    # nnabla 1.39 rescales to clip_norm also when the norm is smaller: clip_norm=100 on
    # dy = [[3, -0.2, 0.5], [-4, 1, 0.1]] gives [[58.49832, -3.89989, 9.74972], ...].
    x = gh.Variable(np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]))
    y = F.clip_grad_by_norm(x, 100.0)
    y.backward(np.array([[3.0, -0.2, 0.5], [-4.0, 1.0, 0.1]]))
    np.testing.assert_allclose(
        x.g, [[58.498318, -3.899888, 9.74972], [-77.99776, 19.49944, 1.949944]], rtol=1e-6
    )


def test_clip_grad_by_value_double_backward() -> None:
    x = gh.Variable(np.array([1.0, 2.0]))
    lo = gh.Variable(-np.ones(2), need_grad=False)
    hi = gh.Variable(np.ones(2), need_grad=False)
    dy = gh.Variable(np.array([0.5, 3.0]))
    (gx,) = gh.grad([F.clip_grad_by_value(x, lo, hi)], [x], grad_outputs=[dy], create_graph=True)
    np.testing.assert_allclose(gx.d, [0.5, 1.0])
    (gdy,) = gh.grad([F.sum(gx)], [dy])
    np.testing.assert_allclose(gdy.d, [1.0, 0.0])
