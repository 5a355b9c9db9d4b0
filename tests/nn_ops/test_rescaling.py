"""Values and gradients of clip_by_norm, norm_normalization and weight_standardization
(gradhub_nn_ops.rescaling) against nnabla 1.39.

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
        "clip_by_norm",
        {"clip_norm": 1.0},
        [np.array([[0.11, -1.53, 0.8], [-0.37, 0.13, 1.2]])],
        np.array([[0.31, -0.5, 0.64], [-0.01, 1.39, 0.5]]),
        np.array([[0.05136, -0.71439, 0.37354], [-0.17276, 0.0607, 0.56031]]),
        [np.array([[0.12128, 0.09291, 0.12818], [0.07426, 0.62129, -0.02252]])],
    ),
    (
        "clip_by_norm",
        {"clip_norm": 1.5, "axis": 1},
        [np.array([[0.28, 0.26, 0.28], [-0.73, 0.84, 1.54]])],
        np.array([[-0.72, 0.6, 0.94], [-0.57, -0.43, -2.31]]),
        np.array([[0.28, 0.26, 0.28], [-0.57631, 0.66315, 1.21577]]),
        [np.array([[-0.72, 0.6, 0.94], [-1.00912, 0.30391, -0.64412]])],
    ),
    (
        "norm_normalization",
        {"p": 3, "axes": (0,)},
        [np.array([[0.76, 0.88, -0.88], [-0.87, -1.44, 1.23]])],
        np.array([[0.9, -0.59, -2.12], [-1.77, -0.22, 0.76]]),
        np.array([[0.7368, 0.57064, -0.64477], [-0.84344, -0.93377, 0.90121]]),
        [np.array([[-0.26218, -0.35487, -0.92832], [-0.22903, -0.21687, -0.66416]])],
    ),
    (
        "weight_standardization",
        {"channel_axis": 0},
        [
            np.array(
                [
                    [[-0.25, 1.4], [-0.78, -0.44]],
                    [[0.1, 0.92], [0.06, 0.21]],
                    [[0.02, 0.18], [-1.12, 0.08]],
                ]
            )
        ],
        np.array(
            [
                [[-0.09, 0.47], [-1.1, -1.34]],
                [[0.89, 0.49], [-0.03, 1.28]],
                [[-0.95, -0.42], [1.03, 1.84]],
            ]
        ),
        np.array(
            [
                [[-0.27674, 1.68723], [-0.90759, -0.50289]],
                [[-0.63694, 1.71044], [-0.75145, -0.32205]],
                [[0.4352, 0.73794], [-1.72186, 0.54873]],
            ]
        ),
        [
            np.array(
                [
                    [[0.71093, -0.07779], [-0.0238, -0.60934]],
                    [[0.61158, -0.33451], [-2.03177, 1.7547]],
                    [[-2.20094, -0.98511], [0.028, 3.15805]],
                ]
            )
        ],
    ),
    (
        "weight_standardization",
        {"channel_axis": 1, "eps": 0.1},
        [np.array([[-0.19, -0.06, 0.49], [-0.68, -0.08, -0.3]])],
        np.array([[0.01, 1.68, -0.6], [0.33, -0.17, -1.59]]),
        np.array([[0.61245, 0.03161, 0.78065], [-0.61245, -0.03161, -0.78065]]),
        [np.array([[-0.24994, 2.92072, 0.3821], [0.24994, -2.92072, -0.3821]])],
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


def test_weight_standardization_output_stat_is_mean_and_variance() -> None:
    # nnabla 1.39 on [[1, -2, 3], [0.5, 4, -1]]: mean [[0.666667], [1.166667]], third
    # output (the variance) [[4.222222], [4.388889]].
    w = gh.Variable(np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]))
    y, m, v = F.weight_standardization(w, output_stat=True)
    np.testing.assert_allclose(m.d, [[0.666667], [1.166667]], atol=1e-6)
    np.testing.assert_allclose(v.d, [[4.222222], [4.388889]], atol=1e-6)
    np.testing.assert_allclose(
        y.d, [[0.162221, -1.29777, 1.135549], [-0.318223, 1.352446, -1.034223]], atol=1e-5
    )


def test_norm_based_functions_compute_float16_in_float32() -> None:
    # regression: the squares overflowed float16 above 256, giving x / inf = 0
    x = gh.Variable(np.array([3000.0, 4000.0], np.float16))
    y = F.norm_normalization(x)
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.d.astype(np.float64), [0.6, 0.8], rtol=1e-3)
    (g,) = gh.grad([F.sum(y)], [x])
    assert g.dtype == np.float16 and np.all(np.isfinite(g.d.astype(np.float64)))
    ones = gh.Variable(np.ones(10000, np.float16))
    np.testing.assert_allclose(F.clip_by_norm(ones, 1.0).d[:2].astype(np.float64), 0.01, rtol=1e-3)
    w = gh.Variable(np.array([[-300.0, 300.0]], np.float16))
    np.testing.assert_allclose(F.weight_standardization(w).d.astype(np.float64), [[-1.0, 1.0]])
