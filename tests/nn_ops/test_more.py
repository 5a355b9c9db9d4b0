"""Values and gradients of the functions of gradhub_nn_ops.more against nnabla 1.39.

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
    (
        "sum_pooling",
        {"kernel": (2, 2), "ignore_border": False},
        [
            np.array(
                [
                    [
                        [
                            [0.32, -2.02, -0.31, 0.83, 0.23],
                            [0.76, -0.22, -0.2, 0.19, 0.41],
                            [0.2, 0.12, -0.67, 0.38, 0.12],
                            [1.13, 1.2, 0.19, -0.38, -0.64],
                            [0.42, 0.08, -0.34, 0.04, -0.62],
                        ]
                    ]
                ]
            )
        ],
        np.array([[[[-1.71, -1.8, 0.38], [2.25, 0.27, -0.52], [1.91, 0.24, 0.1]]]]),
        np.array([[[[-1.16, 0.51, 0.64], [2.65, -0.48, -0.52], [0.5, -0.3, -0.62]]]]),
        [
            np.array(
                [
                    [
                        [
                            [-1.71, -1.71, -1.8, -1.8, 0.38],
                            [-1.71, -1.71, -1.8, -1.8, 0.38],
                            [2.25, 2.25, 0.27, 0.27, -0.52],
                            [2.25, 2.25, 0.27, 0.27, -0.52],
                            [1.91, 1.91, 0.24, 0.24, 0.1],
                        ]
                    ]
                ]
            )
        ],
    ),
    (
        "sum_pooling",
        {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)},
        [
            np.array(
                [
                    [
                        [
                            [0.7, -0.45, 1.22, 0.4, 0.59],
                            [-1.09, 0.17, 0.74, -0.95, -0.27],
                            [0.03, -1.37, 0.32, 0.85, -0.86],
                            [0.35, -1.31, -0.04, -1.62, 1.12],
                            [0.41, -0.02, -0.78, 1.27, 1.97],
                        ]
                    ]
                ]
            )
        ],
        np.array([[[[0.25, -0.13, -0.31], [-1.43, 0.5, -0.09], [1.19, -0.37, -1.91]]]]),
        np.array([[[[-0.67, 1.13, -0.23], [-3.22, -3.21, -1.73], [-0.57, -2.5, 2.74]]]]),
        [
            np.array(
                [
                    [
                        [
                            [0.25, 0.12, -0.13, -0.44, -0.31],
                            [-1.18, -0.81, 0.37, -0.03, -0.4],
                            [-1.43, -0.93, 0.5, 0.41, -0.09],
                            [-0.24, -0.11, 0.13, -1.87, -2.0],
                            [1.19, 0.82, -0.37, -2.28, -1.91],
                        ]
                    ]
                ]
            )
        ],
    ),
    (
        "sum_pooling",
        {"kernel": (2, 2), "pad": (1, 1), "ignore_border": False},
        [
            np.array(
                [
                    [
                        [
                            [-1.86, 1.24, 1.63, 0.34, -1.2],
                            [0.86, -0.18, -0.6, -1.23, 0.55],
                            [0.79, -0.62, 0.52, -1.14, 0.8],
                            [0.05, -0.19, -0.1, 0.87, 0.75],
                            [0.53, 0.14, 0.08, 0.62, 0.23],
                        ]
                    ]
                ]
            )
        ],
        np.array([[[[-0.1, 1.7, -0.38], [-0.89, -1.19, -1.05], [-0.3, -1.18, 1.5]]]]),
        np.array([[[[-1.86, 2.87, -0.86], [1.65, -0.88, -1.02], [0.58, -0.07, 2.47]]]]),
        [
            np.array(
                [
                    [
                        [
                            [-0.1, 1.7, 1.7, -0.38, -0.38],
                            [-0.89, -1.19, -1.19, -1.05, -1.05],
                            [-0.89, -1.19, -1.19, -1.05, -1.05],
                            [-0.3, -1.18, -1.18, 1.5, 1.5],
                            [-0.3, -1.18, -1.18, 1.5, 1.5],
                        ]
                    ]
                ]
            )
        ],
    ),
    (
        "unpooling",
        {"kernel": (2, 3)},
        [
            np.array(
                [
                    [
                        [[0.68, -0.31, -2.43], [1.04, 2.19, 0.44]],
                        [[-0.1, -0.14, -0.12], [0.02, -1.12, -0.52]],
                    ]
                ]
            )
        ],
        np.array(
            [
                [
                    [
                        [-0.28, 0.11, 1.44, 1.5, -0.21, 0.33, 0.74, -0.19, -1.78],
                        [0.65, 0.89, 0.42, -0.92, -0.2, -0.59, -0.3, 1.3, 1.53],
                        [0.67, 0.55, 0.68, -0.01, -0.08, -0.67, -0.06, 2.26, 0.87],
                        [-0.34, -0.47, -0.86, 0.37, 0.39, -1.44, 0.49, -0.57, 1.43],
                    ],
                    [
                        [0.16, 1.72, -0.46, -0.29, 0.3, 1.06, 0.57, -1.23, 0.18],
                        [0.02, -0.43, -0.65, 1.75, -0.39, -0.85, 0.64, 0.13, -0.08],
                        [0.78, 0.49, 0.36, 0.96, 0.28, -0.62, -0.36, -0.52, 0.21],
                        [-1.08, -1.83, 0.09, -1.34, -1.95, 0.37, -0.71, 0.5, -0.53],
                    ],
                ]
            ]
        ),
        np.array(
            [
                [
                    [
                        [0.68, 0.68, 0.68, -0.31, -0.31, -0.31, -2.43, -2.43, -2.43],
                        [0.68, 0.68, 0.68, -0.31, -0.31, -0.31, -2.43, -2.43, -2.43],
                        [1.04, 1.04, 1.04, 2.19, 2.19, 2.19, 0.44, 0.44, 0.44],
                        [1.04, 1.04, 1.04, 2.19, 2.19, 2.19, 0.44, 0.44, 0.44],
                    ],
                    [
                        [-0.1, -0.1, -0.1, -0.14, -0.14, -0.14, -0.12, -0.12, -0.12],
                        [-0.1, -0.1, -0.1, -0.14, -0.14, -0.14, -0.12, -0.12, -0.12],
                        [0.02, 0.02, 0.02, -1.12, -1.12, -1.12, -0.52, -0.52, -0.52],
                        [0.02, 0.02, 0.02, -1.12, -1.12, -1.12, -0.52, -0.52, -0.52],
                    ],
                ]
            ]
        ),
        [
            np.array(
                [
                    [
                        [[3.23, -0.09, 1.3], [0.23, -1.44, 4.42]],
                        [[0.36, 1.58, 0.21], [-1.19, -2.3, -1.41]],
                    ]
                ]
            )
        ],
    ),
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


def test_depthwise_errors() -> None:
    x = gh.Variable(np.zeros((1, 2, 5)))
    with pytest.raises(ValueError, match="multiplier"):
        F.depthwise_convolution(x, gh.Variable(np.zeros((3, 2))))
    with pytest.raises(ValueError, match="divisor"):
        F.depthwise_deconvolution(x, gh.Variable(np.zeros((2, 2))), divisor=3)


def test_random_sources() -> None:
    a = F.rand(-1, 2, shape=(2, 3), seed=3)
    assert a.d.dtype == np.float32 and a.shape == (2, 3) and not a.need_grad
    assert ((a.d >= -1) & (a.d < 2)).all()
    np.testing.assert_array_equal(a.d, F.rand(-1, 2, shape=(2, 3), seed=3).d)
    n = F.randn(1.0, 0.5, shape=(1000,), seed=0)
    assert n.d.dtype == np.float32 and abs(float(n.d.mean()) - 1.0) < 0.1
    i = F.randint(2, 5, shape=(50,), seed=1)
    assert i.d.dtype == np.int32 and set(i.d.tolist()) == {2, 3, 4}
    gh.seed(11)
    first = F.rand(shape=(4,)).d
    gh.seed(11)
    np.testing.assert_array_equal(F.rand(shape=(4,)).d, first)
    assert F.rand().shape == ()
    with pytest.raises(ValueError, match="high"):
        F.randint(3, 3)


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
