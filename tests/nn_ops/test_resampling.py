"""Values and gradients of interpolation and shifts (gradhub_nn_ops.resampling) against nnabla 1.39.

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
        "interpolate",
        {"output_size": (7,), "mode": "linear"},
        [np.array([[[-1.0, 0.25, -0.3, 0.5], [-0.17, 0.99, 0.21, 2.19]]])],
        np.array(
            [
                [
                    [-1.12, -1.24, -0.51, -0.27, -0.82, -0.28, -1.54],
                    [0.01, -1.79, -0.19, 0.7, 1.09, 1.71, -1.56],
                ]
            ]
        ),
        np.array(
            [
                [
                    [-1.0, -0.28571, 0.17143, -0.14286, -0.07143, 0.38571, 0.5],
                    [-0.17, 0.49286, 0.87857, 0.43286, 0.77571, 1.90714, 2.19],
                ]
            ]
        ),
        [
            np.array(
                [[[-1.65143, -1.22286, -0.89143, -2.01429], [-0.75714, -0.98571, 1.49571, 0.21714]]]
            )
        ],
    ),
    (
        "interpolate",
        {"output_size": (3,), "mode": "linear", "half_pixel": True},
        [np.array([[[-1.9, -0.65, 0.9, 2.53], [-0.25, 0.04, -0.23, 1.33]]])],
        np.array([[[0.76, 1.21, 0.98], [-0.93, 0.41, 1.86]]]),
        np.array([[[-1.69167, 0.125, 2.25833], [-0.20167, -0.095, 1.07]]]),
        [np.array([[[0.63333, 0.73167, 0.76833, 0.81667], [-0.775, 0.05, 0.515, 1.55]]])],
    ),
    (
        "interpolate",
        {"output_size": (7,), "mode": "linear", "align_corners": True},
        [np.array([[[-0.29, 0.68, -0.32, -1.27], [0.31, 0.5, 1.29, -0.11]]])],
        np.array(
            [
                [
                    [-1.5, 0.48, 1.11, -0.7, 0.58, -1.07, -0.81],
                    [-0.82, 0.19, -0.09, 0.95, -0.94, -0.13, 0.96],
                ]
            ]
        ),
        np.array(
            [
                [
                    [-0.29, 0.195, 0.68, 0.18, -0.32, -0.795, -1.27],
                    [0.31, 0.405, 0.5, 0.895, 1.29, 0.59, -0.11],
                ]
            ]
        ),
        [np.array([[[-1.26, 1.0, -0.305, -1.345], [-0.725, 0.48, -0.53, 0.895]]])],
    ),
    (
        "interpolate",
        {"output_size": (7,), "mode": "nearest", "half_pixel": True},
        [np.array([[[-0.62, 0.56, 0.24, 0.28], [-0.07, 1.16, 0.37, 1.9]]])],
        np.array(
            [
                [
                    [0.56, -1.32, 0.67, -0.48, 0.39, 0.3, 1.22],
                    [0.12, -1.85, -1.37, 0.73, -0.26, 1.14, 0.27],
                ]
            ]
        ),
        np.array(
            [
                [
                    [-0.62, -0.62, -0.62, 0.56, 0.24, 0.24, 0.28],
                    [-0.07, -0.07, -0.07, 1.16, 0.37, 0.37, 1.9],
                ]
            ]
        ),
        [np.array([[[-0.09, -0.48, 0.69, 1.22], [-3.1, 0.73, 0.88, 0.27]]])],
    ),
    (
        "interpolate",
        {"output_size": (3,), "mode": "nearest", "align_corners": True},
        [np.array([[[1.11, 0.66, -1.63, 0.6], [0.42, 0.81, 1.04, -0.4]]])],
        np.array([[[-0.75, 1.08, -0.81], [-2.05, 2.06, -1.91]]]),
        np.array([[[1.11, 0.66, 0.6], [0.42, 0.81, -0.4]]]),
        [np.array([[[-0.75, 1.08, 0.0, -0.81], [-2.05, 2.06, 0.0, -1.91]]])],
    ),
    (
        "interpolate",
        {"output_size": (5,), "mode": "nearest", "half_pixel_for_nn": True},
        [np.array([[[0.82, -0.56, 1.95, -1.33], [-1.76, -1.65, -0.89, -1.12]]])],
        np.array([[[0.64, 0.94, 0.15, -1.68, 1.02], [-1.44, -1.34, -0.36, 0.79, 0.3]]]),
        np.array([[[0.82, -0.56, 1.95, 1.95, -1.33], [-1.76, -1.65, -0.89, -0.89, -1.12]]]),
        [np.array([[[0.64, 0.94, -1.53, 1.02], [-1.44, -1.34, 0.43, 0.3]]])],
    ),
    (
        "interpolate",
        {"scale": (1.5, 2), "mode": "linear"},
        [np.array([[[[1.96, -0.33, -1.34], [1.11, -0.59, -1.24], [0.88, 0.62, -0.43]]]])],
        np.array(
            [
                [
                    [
                        [0.81, -0.44, -0.17, -1.14, -0.32, 0.59],
                        [-0.3, 0.48, -0.57, -0.59, 0.04, -0.19],
                        [0.59, 0.18, 1.74, -0.22, -0.23, -1.04],
                        [0.02, 0.68, -0.74, -0.05, 0.72, -0.13],
                    ]
                ]
            ]
        ),
        np.array(
            [
                [
                    [
                        [1.96, 0.815, -0.33, -0.835, -1.34, -1.34],
                        [1.3225, 0.39875, -0.525, -0.895, -1.265, -1.265],
                        [0.995, 0.505, 0.015, -0.41, -0.835, -0.835],
                        [0.88, 0.75, 0.62, 0.095, -0.43, -0.43],
                    ]
                ]
            ]
        ),
        [
            np.array(
                [[[[0.575, -1.11625, -0.41125], [0.295, 0.39125, -1.02375], [0.7, 0.435, -0.125]]]]
            )
        ],
    ),
    (
        "interpolate",
        {"output_size": (5, 2), "mode": "nearest"},
        [np.array([[[[1.41, 0.13, 1.62], [0.5, 1.56, 0.11], [-1.22, 2.45, -0.55]]]])],
        np.array([[[[-0.52, 0.97], [0.1, 0.4], [1.17, 1.15], [-0.35, -0.53], [0.28, -0.13]]]]),
        np.array([[[[1.41, 0.13], [1.41, 0.13], [0.5, 1.56], [0.5, 1.56], [-1.22, 2.45]]]]),
        [np.array([[[[-0.42, 1.37, 0.0], [0.82, 0.62, 0.0], [0.28, -0.13, 0.0]]]])],
    ),
    (
        "interpolate",
        {"output_size": (1, 2), "mode": "linear", "align_corners": True},
        [np.array([[[[-0.2, -0.7, -0.2], [0.24, 0.2, 0.66], [1.79, -0.12, -1.23]]]])],
        np.array([[[[-1.9, 1.28]]]]),
        np.array([[[[-0.2, -0.2]]]]),
        [np.array([[[[-1.9, 0.0, 1.28], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]])],
    ),
    (
        "shift",
        {"shifts": (-1, -3), "border_mode": "reflect"},
        [
            np.array(
                [[-1.18, -0.67, -1.67, 0.83], [-0.5, -0.31, -0.0, -1.4], [-0.86, 0.67, 0.62, -0.44]]
            )
        ],
        np.array(
            [[0.02, 0.74, -1.17, 1.29], [-0.59, -0.11, -1.4, -0.17], [-0.23, -0.19, 0.44, 0.06]]
        ),
        np.array(
            [[-1.4, -1.4, -0.0, -0.31], [-0.44, -0.44, 0.62, 0.67], [-0.44, -0.44, 0.62, 0.67]]
        ),
        [np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 1.29, -1.17, 0.76], [0.0, -0.11, -0.96, -1.12]])],
    ),
    (
        "shift",
        {"shifts": (5, 1), "border_mode": "reflect"},
        [
            np.array(
                [[1.81, -1.31, -0.34, -0.23], [-2.79, 1.94, 0.37, -1.04], [2.05, 0.59, 0.43, -0.61]]
            )
        ],
        np.array(
            [[0.98, -0.47, -1.0, -0.02], [0.63, 1.24, 0.81, -1.77], [0.38, 1.46, 0.06, -0.52]]
        ),
        np.array([[-2.79, -2.79, 1.94, 0.37], [2.05, 2.05, 0.59, 0.43], [2.05, 2.05, 0.59, 0.43]]),
        [np.array([[0.0, 0.0, 0.0, 0.0], [0.51, -1.0, -0.02, 0.0], [3.71, 0.87, -2.29, 0.0]])],
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


def test_interpolate_defaults_and_errors() -> None:
    x = gh.Variable(np.array([[[0.0, 1.0, 4.0, 9.0]]]))
    # nnabla 1.39 F.interpolate(x, output_size=(7,)) (linear, align_corners=False):
    np.testing.assert_allclose(
        F.interpolate(x, output_size=(7,)).d.ravel(),
        [0.0, 0.57143, 1.42857, 3.14286, 5.42857, 8.28572, 9.0],
        atol=1e-5,
    )
    assert F.interpolate(x, scale=(1.3,), mode="nearest").shape == (1, 1, 5)
    with pytest.raises(ValueError, match="align_corners and half_pixel"):
        F.interpolate(x, output_size=(3,), align_corners=True, half_pixel=True)
    with pytest.raises(ValueError, match="mode"):
        F.interpolate(x, output_size=(3,), mode="cubic")
    with pytest.raises(ValueError, match="scale or output_size"):
        F.interpolate(x)


def test_interpolate_to_one_element_reads_the_first_as_nnabla() -> None:
    # regression: with half_pixel and an output of one element nnabla's scale is 0 (its
    # compute_scale), so the output reads element 0; the middle of the input was read
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 4) * 10
    for mode in ("linear", "nearest"):
        y = F.interpolate(gh.Variable(x), output_size=(1,), mode=mode, half_pixel=True)
        np.testing.assert_array_equal(y.d.ravel(), [0.0])  # nnabla 1.39: [0] in both modes
    x2 = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    v = gh.Variable(x2)
    y2 = F.interpolate(v, output_size=(1, 1), half_pixel=True)
    np.testing.assert_array_equal(y2.d.ravel(), [0.0])
    (g,) = gh.grad([F.sum(y2)], [v])
    want = np.zeros(16, np.float32)
    want[0] = 1.0
    np.testing.assert_array_equal(g.d.ravel(), want)
