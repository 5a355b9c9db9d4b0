"""Values and gradients of depthwise (de)convolution (gradhub_nn_ops.conv) against nnabla 1.39.

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
        "depthwise_convolution",
        {"multiplier": 2, "pad": (1,), "stride": (2,)},
        [
            np.array([[[1.62, -0.61, -0.53, -1.07, 0.87], [-2.3, 1.74, -0.76, 0.32, -0.25]]]),
            np.array(
                [
                    [1.46, -2.06, -0.32],
                    [-0.38, 1.13, -1.1],
                    [-0.17, -0.88, 0.04],
                    [0.58, -1.1, 1.14],
                ]
            ),
            np.array([0.9, 0.5, 0.9, -0.68]),
        ],
        np.array(
            [[[1.69, -0.47, 0.03], [0.41, -0.79, 0.0], [-0.0, -1.75, 1.02], [0.6, -0.63, -0.17]]]
        ),
        np.array(
            [
                [
                    [-2.242, 1.4436, -2.4544],
                    [3.0016, 1.3099, 1.8897],
                    [2.9936, 1.2858, 1.0656],
                    [3.8336, 1.53, -0.2194],
                ]
            ]
        ),
        [
            np.array(
                [
                    [
                        [-3.0181, -1.3778, 0.0755, 1.0632, -0.0618],
                        [-0.66, 0.6161, 2.233, -1.0602, -0.7106],
                    ]
                ]
            ),
            np.array(
                [
                    [0.2546, 3.013, -0.528],
                    [0.4819, 1.0829, 0.5952],
                    [-2.7186, 1.075, -0.56],
                    [-1.1506, -0.8587, 0.8424],
                ]
            ),
            np.array([1.25, -0.38, -0.73, -0.2]),
        ],
    ),
    (
        "depthwise_convolution",
        {"dilation": (1, 2), "pad": (1, 1)},
        [
            np.array(
                [
                    [
                        [[-0.12, -0.94, -0.27], [0.53, -0.69, -0.4], [-0.69, -0.85, -0.67]],
                        [[-0.01, -1.12, 0.23], [1.66, 0.74, -0.19], [-0.89, -0.75, 1.69]],
                    ]
                ]
            ),
            np.array([[[0.05, -0.64], [0.19, 2.1]], [[0.12, 0.62], [0.3, -0.35]]]),
        ],
        np.array(
            [
                [
                    [
                        [0.51, -0.26, -0.24],
                        [-1.45, 0.55, 0.12],
                        [0.27, -1.53, 1.65],
                        [0.15, -0.39, 2.03],
                    ],
                    [
                        [-0.05, -1.45, -0.41],
                        [-2.29, 1.05, -0.42],
                        [-0.74, 1.07, -1.65],
                        [0.54, -2.06, -0.66],
                    ],
                ]
            ]
        ),
        np.array(
            [
                [
                    [
                        [-1.974, -0.5898, -0.1786],
                        [-0.8474, -0.5725, -0.1781],
                        [-1.3434, -1.2556, -0.196],
                        [0.544, 0.3943, -0.0425],
                    ],
                    [
                        [0.392, -0.0835, -0.336],
                        [-0.9534, 0.7059, 0.0876],
                        [0.7213, -0.7771, -0.1362],
                        [-0.465, 0.941, -0.09],
                    ],
                ]
            ]
        ),
        [
            np.array(
                [
                    [
                        [
                            [-0.0219, 1.9594, -0.898],
                            [0.028, -3.1125, 2.1342],
                            [-0.3102, 0.886, -2.9634],
                        ],
                        [
                            [-0.309, -1.5757, 1.1585],
                            [0.4434, 0.0187, 0.2959],
                            [0.0738, 0.0196, -1.6517],
                        ],
                    ]
                ]
            ),
            np.array([[[-3.5846, 1.774], [0.1187, 1.1669]], [[3.3435, -1.831], [2.1911, 0.1917]]]),
        ],
    ),
    (
        "depthwise_deconvolution",
        {"divisor": 2, "stride": (2,), "pad": (1,)},
        [
            np.array(
                [
                    [
                        [-1.14, -0.35, -0.21],
                        [0.59, 0.84, 0.93],
                        [0.29, 0.89, -0.75],
                        [1.25, 0.51, -0.3],
                    ]
                ]
            ),
            np.array([[0.49, -0.08], [1.13, 1.52], [2.19, -1.4], [-1.44, -0.5]]),
            np.array([0.16, 0.88]),
        ],
        np.array([[[-1.2, 1.46, 1.77, -0.33], [0.84, -0.18, 0.57, -0.75]]]),
        np.array([[[1.148, 0.9377, 1.4648, 1.108], [-0.151, 2.0947, -0.621, -0.3305]]]),
        [
            np.array(
                [
                    [
                        [0.096, 0.5738, -0.1617],
                        [-1.824, 4.3402, -0.3729],
                        [-1.176, -1.1922, -1.6425],
                        [-0.42, -0.0258, 1.08],
                    ]
                ]
            ),
            np.array([[-0.4417, 0.7485], [0.9195, 0.7788], [0.4023, 0.7509], [0.1332, 1.3407]]),
            np.array([1.7, 0.48]),
        ],
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


def test_depthwise_errors() -> None:
    x = gh.Variable(np.zeros((1, 2, 5)))
    with pytest.raises(ValueError, match="multiplier"):
        F.depthwise_convolution(x, gh.Variable(np.zeros((3, 2))))
    with pytest.raises(ValueError, match="divisor"):
        F.depthwise_deconvolution(x, gh.Variable(np.zeros((2, 2))), divisor=3)
