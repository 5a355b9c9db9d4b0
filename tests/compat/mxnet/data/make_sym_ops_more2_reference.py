"""Writes ``sym_ops_more2_reference.json`` and ``sym_ops_more2_reference.npz`` (next to this
script) with mxnet 1.9.1: run ``python make_sym_ops_more2_reference.py`` in an environment with
mxnet 1.9.1 (not gradhub).

The symbol forms of mxnet's vision operators (``LRN``, ``UpSampling``, ``Crop``,
``ROIPooling``, ``Correlation``, ``GridGenerator``, ``BilinearSampler``,
``SpatialTransformer``), array operators (``cumsum``, ``diag``, ``depth_to_space``,
``space_to_depth``, ``gather_nd``, ``scatter_nd``) and ``linalg_*`` operators. Case ``k`` of
:data:`CASES` (in order) builds ``mx.sym.<fn>(*inputs, name="n", **kwargs)`` on the variables
``x0``, ``x1``... of its inputs, binds it with the float32 inputs of :func:`make_input`, input
``i`` from ``np.random.RandomState(10 * k + i)`` (``kind``: ``"n"`` normal, ``"u"`` uniform in
(-0.9, 0.9), ``"spd"`` symmetric positive definite matrices, ``"tril"`` lower triangular
matrices with a diagonal in (1, 2), ``"roi"`` regions ``[batch, x1, y1, x2, y2]`` of a
``(2, C, 6, 6)`` batch, ``"d3"`` distinct index pairs into a 3 x 3 array, ``"iK"`` integers in
[0, K)), runs forward in training and, where the case asks for gradients, backward with the
head gradient ``randn`` of seed ``10 * k + 100`` (gradients of the inputs of kind
``n``/``u``/``spd``/``tril``, the others ``grad_req="null"``). The JSON holds per case the
arguments, output names, ``infer_shape``, the output dtype, the JSON nodes (op, attrs) and the
whole JSON text; the npz holds ``<id>/x<i>``, ``<id>/out``, ``<id>/head`` and
``<id>/grad_x<i>``. tests/compat/mxnet/test_symbol_ops_more.py reads both.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
_DIFF = ("n", "u", "spd", "tril")

#: (id, fn, inputs [(shape, kind)], kwargs, gradients?)
CASES: list[tuple[str, str, list, dict, bool]] = [
    ("lrn", "LRN", [((2, 5, 3, 3), "n")], {"nsize": 3, "alpha": 0.001, "knorm": 1.5}, True),
    (
        "upsampling",
        "UpSampling",
        [((1, 2, 3, 3), "n")],
        {"scale": 2, "sample_type": "nearest"},
        True,
    ),
    ("crop_hw", "Crop", [((1, 2, 5, 5), "n")], {"h_w": (3, 2), "offset": (1, 2)}, True),
    (
        "crop_like",
        "Crop",
        [((1, 2, 5, 5), "n"), ((1, 2, 3, 3), "n")],
        {"center_crop": True},
        True,
    ),
    (
        "roipooling",
        "ROIPooling",
        [((2, 3, 6, 6), "n"), ((3, 5), "roi")],
        {"pooled_size": (2, 2), "spatial_scale": 1.0},
        True,
    ),
    (
        "correlation",
        "Correlation",
        [((1, 3, 5, 5), "n"), ((1, 3, 5, 5), "n")],
        {"max_displacement": 1, "pad_size": 1},
        True,
    ),
    (
        "correlation_sub",
        "Correlation",
        [((1, 2, 6, 6), "n"), ((1, 2, 6, 6), "n")],
        {
            "kernel_size": 3,
            "max_displacement": 2,
            "stride2": 2,
            "pad_size": 2,
            "is_multiply": False,
        },
        True,
    ),
    (
        "gridgen_affine",
        "GridGenerator",
        [((2, 6), "n")],
        {"transform_type": "affine", "target_shape": (3, 4)},
        True,
    ),
    ("gridgen_warp", "GridGenerator", [((1, 2, 3, 4), "n")], {"transform_type": "warp"}, True),
    ("bilinear", "BilinearSampler", [((1, 2, 4, 4), "n"), ((1, 2, 3, 5), "u")], {}, True),
    (
        "spatial",
        "SpatialTransformer",
        [((1, 2, 5, 5), "n"), ((1, 6), "u")],
        {"target_shape": (3, 4), "transform_type": "affine", "sampler_type": "bilinear"},
        True,
    ),
    ("cumsum", "cumsum", [((3, 4), "n")], {"axis": 1}, True),
    ("cumsum_flat", "cumsum", [((3, 4), "n")], {}, True),
    ("diag", "diag", [((4, 4), "n")], {"k": 1}, True),
    ("diag_vec", "diag", [((3,), "n")], {"k": -1}, True),
    ("depth_to_space", "depth_to_space", [((1, 8, 2, 3), "n")], {"block_size": 2}, True),
    ("space_to_depth", "space_to_depth", [((1, 2, 4, 6), "n")], {"block_size": 2}, True),
    ("gather_nd", "gather_nd", [((3, 4), "n"), ((2, 5), "i3")], {}, True),
    ("scatter_nd", "scatter_nd", [((4,), "n"), ((2, 4), "d3")], {"shape": (3, 3)}, True),
    (
        "gemm",
        "linalg_gemm",
        [((2, 3), "n"), ((3, 4), "n"), ((2, 4), "n")],
        {"alpha": 2.0, "beta": 0.5},
        True,
    ),
    (
        "gemm_t",
        "linalg.gemm",
        [((2, 3, 2), "n"), ((2, 4, 3), "n"), ((2, 2, 4), "n")],
        {"transpose_a": True, "transpose_b": True},
        True,
    ),
    ("gemm2_ns", "linalg.gemm2", [((2, 3), "n"), ((3, 4), "n")], {}, True),
    ("potrf", "linalg_potrf", [((3, 3), "spd")], {}, True),
    ("potri", "linalg_potri", [((3, 3), "tril")], {}, True),
    ("trmm", "linalg_trmm", [((3, 3), "tril"), ((3, 2), "n")], {"alpha": 1.5}, True),
    ("trsm", "linalg_trsm", [((3, 3), "tril"), ((2, 3), "n")], {"rightside": True}, True),
    ("syrk", "linalg_syrk", [((2, 3), "n")], {"transpose": True, "alpha": 0.5}, True),
    ("sumlogdiag", "linalg_sumlogdiag", [((2, 3, 3), "spd")], {}, True),
    ("inverse", "linalg_inverse", [((3, 3), "spd")], {}, True),
    ("det", "linalg_det", [((2, 3, 3), "n")], {}, True),
    ("det_ns", "linalg.det", [((3, 3), "n")], {}, True),
    ("extractdiag", "linalg_extractdiag", [((3, 3), "n")], {"offset": 1}, True),
    ("makediag", "linalg_makediag", [((3,), "n")], {"offset": -1}, True),
]


def make_input(shape: tuple[int, ...], kind: str, seed: int) -> np.ndarray:
    g = np.random.RandomState(seed)
    v: Any
    if kind == "n":
        v = g.randn(*shape)
    elif kind == "u":
        v = g.uniform(-0.9, 0.9, shape)
    elif kind == "spd":
        m = g.randn(*shape)
        v = m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])
    elif kind == "tril":
        v = np.tril(g.randn(*shape), -1) + np.eye(shape[-1]) * g.uniform(1, 2, shape[:-1])
    elif kind == "roi":
        b = g.randint(0, 2, (shape[0], 1))
        lo = g.uniform(0, 2, (shape[0], 2))
        v = np.concatenate([b, lo, lo + g.uniform(1, 3.5, (shape[0], 2))], axis=1)
    elif kind == "d3":
        p = g.permutation(9)[: shape[1]]
        v = np.stack([p // 3, p % 3])
    else:
        v = g.randint(0, int(kind[1:]), shape)
    return np.asarray(v, dtype=np.float32)


def main() -> None:
    # (the runner of make_sym_ops_more_reference.py, whose build() makes these symbols too)
    from make_sym_ops_more_reference import write_reference

    write_reference(CASES, make_input, _DIFF, "sym_ops_more2_reference")


if __name__ == "__main__":
    main()
