"""Writes ``mxlegacy_reference.json`` and ``mxlegacy_reference.npz`` (next to this script) with
mxnet 1.9.1: run ``python make_mxlegacy_reference.py`` in an environment with mxnet 1.9.1 (not
gradhub).

Each case of :data:`CASES` calls one legacy operator of ``mx.nd`` (``Reshape``,
``SoftmaxOutput``, ``LRN``, ``UpSampling``...) on fixed inputs inside ``autograd.record()``,
then ``backward`` with a fixed head gradient (random, so that the operators which ignore it
show it). The json file lists the cases (operator, keyword arguments, input names, which inputs
get a gradient); the npz file holds the inputs (``CASE/in/NAME``), the head gradient
(``CASE/head/K``), the outputs (``CASE/out/K``) and the gradients (``CASE/grad/NAME``).
"""

from __future__ import annotations

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

rng = np.random.default_rng(20261128)


def randn(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def labels(k: int, *shape: int) -> np.ndarray:
    return rng.integers(0, k, size=shape).astype(np.float32)


def uniform(lo: float, hi: float, *shape: int) -> np.ndarray:
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


x234 = randn(2, 3, 4)
x4 = randn(2, 3, 4, 5)
lab_ignore = np.array([0, 2, 1, 2], dtype=np.float32)
theta = np.array(
    [[0.9, 0.1, 0.05, -0.1, 1.1, -0.05], [0.8, -0.2, 0.1, 0.15, 0.7, 0.1]], dtype=np.float32
)
rois = np.array([[0, 0, 0, 4, 3], [1, 1, 2, 5, 5], [0, 2.4, 1.6, 5.2, 4.9]], dtype=np.float32)

#: (case, operator, inputs {name: array}, keyword arguments, inputs given a gradient)
CASES: list[tuple[str, str, dict[str, np.ndarray], dict[str, object], list[str]]] = [
    ("reshape_0_m1", "Reshape", {"data": x234}, {"shape": (0, -1)}, ["data"]),
    ("reshape_m2", "Reshape", {"data": x234}, {"shape": (-3, -2)}, []),
    ("reshape_m3", "Reshape", {"data": x234}, {"shape": (-3, 0)}, ["data"]),
    ("reshape_m4", "Reshape", {"data": x234}, {"shape": (-4, 1, 2, -2)}, []),
    ("reshape_rev", "Reshape", {"data": x234}, {"shape": (-1, 0), "reverse": True}, []),
    ("concat", "Concat", {"a": randn(2, 3), "b": randn(2, 2)}, {"dim": 1}, ["a", "b"]),
    ("cast", "Cast", {"data": x234}, {"dtype": "float64"}, ["data"]),
    ("cast_int", "Cast", {"data": x234 * 3}, {"dtype": "int32"}, []),
    ("slicechannel", "SliceChannel", {"data": x234}, {"num_outputs": 2, "axis": 2}, ["data"]),
    (
        "slicechannel_squeeze",
        "SliceChannel",
        {"data": x234},
        {"num_outputs": 3, "axis": 1, "squeeze_axis": True},
        ["data"],
    ),
    ("swapaxis", "SwapAxis", {"data": x234}, {"dim1": 0, "dim2": 2}, ["data"]),
    ("blockgrad", "BlockGrad", {"data": x234}, {}, []),
    ("stop_gradient", "stop_gradient", {"data": x234}, {}, []),
    ("identity", "identity", {"data": x234}, {}, ["data"]),
    ("crop_slice", "crop", {"data": x234}, {"begin": (0, 1), "end": (2, 3)}, ["data"]),
    ("crop_hw", "Crop", {"data": x4}, {"num_args": 1, "h_w": (2, 3), "offset": (1, 1)}, ["data"]),
    ("crop_center", "Crop", {"data": x4}, {"num_args": 1, "h_w": (2, 2), "center_crop": True}, []),
    (
        "crop_like",
        "Crop",
        {"data": x4, "like": randn(1, 1, 3, 2)},
        {"num_args": 2, "center_crop": True},
        ["data"],
    ),
    (
        "upsampling_nearest",
        "UpSampling",
        {"data": randn(2, 2, 2, 3)},
        {"scale": 2, "sample_type": "nearest"},
        ["data"],
    ),
    (
        "upsampling_concat",
        "UpSampling",
        {"a": randn(1, 2, 2, 2), "b": randn(1, 1, 4, 4)},
        {"scale": 2, "sample_type": "nearest", "num_args": 2},
        ["a", "b"],
    ),
    (
        "upsampling_sum",
        "UpSampling",
        {"a": randn(1, 2, 2, 2), "b": randn(1, 2, 1, 1)},
        {"scale": 3, "sample_type": "nearest", "num_args": 2, "multi_input_mode": "sum"},
        ["a", "b"],
    ),
    (
        "upsampling_bilinear",
        "UpSampling",
        {"data": randn(1, 2, 3, 3), "weight": randn(2, 1, 4, 4)},
        {"scale": 2, "sample_type": "bilinear", "num_filter": 2},
        ["data", "weight"],
    ),
    ("lrn3", "LRN", {"data": x4}, {"nsize": 3}, ["data"]),
    (
        "lrn4_even",
        "LRN",
        {"data": randn(1, 6, 2, 1)},
        {"nsize": 4, "alpha": 1.0, "beta": 1.0, "knorm": 1.0},
        ["data"],
    ),
    (
        "lrn5",
        "LRN",
        {"data": randn(2, 6, 2, 2)},
        {"nsize": 5, "alpha": 0.01, "beta": 0.5, "knorm": 1.0},
        ["data"],
    ),
    ("softmaxact_instance", "SoftmaxActivation", {"data": randn(3, 4)}, {}, ["data"]),
    # (on more than 2 axes mxnet's backward sums over axis 1, not the softmax's last axis: only
    # the output is compared)
    ("softmaxact_instance_3d", "SoftmaxActivation", {"data": x234}, {}, []),
    ("softmaxact_channel", "SoftmaxActivation", {"data": x4}, {"mode": "channel"}, ["data"]),
    ("softmaxout", "SoftmaxOutput", {"data": randn(4, 3), "label": labels(3, 4)}, {}, ["data"]),
    (
        "softmax_alias",
        "Softmax",
        {"data": randn(4, 3), "label": labels(3, 4)},
        {"grad_scale": 2.0},
        ["data"],
    ),
    (
        "softmaxout_ignore_valid",
        "SoftmaxOutput",
        {"data": randn(4, 3), "label": lab_ignore},
        {"ignore_label": 2, "use_ignore": True, "normalization": "valid"},
        ["data"],
    ),
    (
        "softmaxout_ignore_null",
        "SoftmaxOutput",
        {"data": randn(4, 3), "label": lab_ignore},
        {"ignore_label": 2, "use_ignore": True},
        ["data"],
    ),
    (
        "softmaxout_batch",
        "SoftmaxOutput",
        {"data": randn(4, 3), "label": labels(3, 4)},
        {"normalization": "batch", "grad_scale": 3.0},
        ["data"],
    ),
    (
        "softmaxout_multi",
        "SoftmaxOutput",
        {"data": randn(2, 3, 4), "label": labels(3, 2, 4)},
        {"multi_output": True},
        ["data"],
    ),
    (
        "softmaxout_multi_batch",
        "SoftmaxOutput",
        {"data": randn(2, 3, 2, 2), "label": labels(3, 2, 2, 2)},
        {"multi_output": True, "normalization": "batch"},
        ["data"],
    ),
    (
        "softmaxout_multi_valid",
        "SoftmaxOutput",
        {"data": randn(2, 3, 4), "label": labels(3, 2, 4)},
        {"multi_output": True, "normalization": "valid", "use_ignore": True, "ignore_label": 1},
        ["data"],
    ),
    (
        "softmaxout_preserve",
        "SoftmaxOutput",
        {"data": randn(2, 3, 4), "label": labels(4, 2, 3)},
        {"preserve_shape": True},
        ["data"],
    ),
    (
        "softmaxout_3d_default",
        "SoftmaxOutput",
        {"data": randn(2, 3, 2), "label": labels(2, 2, 3)},
        {},
        ["data"],
    ),
    (
        "softmaxout_prob",
        "SoftmaxOutput",
        {"data": randn(3, 4), "label": np.full((3, 4), 0.25, dtype=np.float32)},
        {"grad_scale": 0.5},
        ["data"],
    ),
    (
        "softmaxout_smooth",
        "SoftmaxOutput",
        {"data": randn(4, 3), "label": labels(3, 4)},
        {"smooth_alpha": 0.2},
        ["data"],
    ),
    (
        "linreg",
        "LinearRegressionOutput",
        {"data": randn(4, 3), "label": randn(4, 3)},
        {"grad_scale": 2.0},
        ["data"],
    ),
    (
        "linreg_1d",
        "LinearRegressionOutput",
        {"data": randn(5), "label": randn(5)},
        {},
        ["data"],
    ),
    (
        "logreg",
        "LogisticRegressionOutput",
        {"data": randn(4, 2), "label": uniform(0, 1, 4, 2)},
        {},
        ["data"],
    ),
    (
        "maereg",
        "MAERegressionOutput",
        {"data": randn(2, 3, 2), "label": randn(2, 3, 2)},
        {"grad_scale": 0.5},
        ["data"],
    ),
    ("svm_l2", "SVMOutput", {"data": randn(4, 3), "label": labels(3, 4)}, {}, ["data"]),
    (
        "svm_l1",
        "SVMOutput",
        {"data": randn(4, 3), "label": labels(3, 4)},
        {"use_linear": True, "margin": 0.5, "regularization_coefficient": 2.0},
        ["data"],
    ),
    ("makeloss", "MakeLoss", {"data": randn(3, 4)}, {"grad_scale": 2.0}, ["data"]),
    ("makeloss_batch", "MakeLoss", {"data": randn(2, 3, 4)}, {"normalization": "batch"}, ["data"]),
    (
        "makeloss_valid",
        "MakeLoss",
        {"data": randn(3, 4)},
        {"normalization": "valid", "valid_thresh": 0.3},
        ["data"],
    ),
    ("make_loss", "make_loss", {"data": randn(3, 4)}, {}, ["data"]),
    (
        "gridgen_affine",
        "GridGenerator",
        {"data": theta},
        {"transform_type": "affine", "target_shape": (3, 4)},
        ["data"],
    ),
    (
        "gridgen_warp",
        "GridGenerator",
        {"data": randn(2, 2, 3, 4)},
        {"transform_type": "warp"},
        ["data"],
    ),
    (
        "bilinear_sampler",
        "BilinearSampler",
        {"data": randn(2, 2, 4, 5), "grid": uniform(-1.1, 1.1, 2, 2, 3, 3)},
        {},
        ["data", "grid"],
    ),
    (
        "spatial_transformer",
        "SpatialTransformer",
        {"data": randn(2, 2, 4, 5), "loc": theta},
        {"target_shape": (3, 3), "transform_type": "affine", "sampler_type": "bilinear"},
        ["data", "loc"],
    ),
    (
        "roipooling",
        "ROIPooling",
        {"data": randn(2, 2, 6, 7), "rois": rois},
        {"pooled_size": (2, 2), "spatial_scale": 1.0},
        ["data"],
    ),
    (
        "roipooling_scale",
        "ROIPooling",
        {"data": randn(2, 1, 6, 6), "rois": rois * np.array([1, 2, 2, 2, 2], np.float32)},
        {"pooled_size": (3, 2), "spatial_scale": 0.5},
        ["data"],
    ),
    (
        "correlation",
        "Correlation",
        {"a": randn(1, 2, 5, 5), "b": randn(1, 2, 5, 5)},
        {"kernel_size": 1, "max_displacement": 1, "stride1": 1, "stride2": 1, "pad_size": 1},
        ["a", "b"],
    ),
    (
        "correlation_k3",
        "Correlation",
        {"a": randn(1, 2, 6, 6), "b": randn(1, 2, 6, 6)},
        {
            "kernel_size": 3,
            "max_displacement": 2,
            "stride1": 1,
            "stride2": 2,
            "pad_size": 2,
            "is_multiply": False,
        },
        ["a", "b"],
    ),
    (
        "correlation_stride1",
        "Correlation",
        {"a": randn(2, 3, 7, 8), "b": randn(2, 3, 7, 8)},
        {"kernel_size": 1, "max_displacement": 2, "stride1": 2, "stride2": 1, "pad_size": 1},
        ["a", "b"],
    ),
    (
        "upsampling_bilinear3",
        "UpSampling",
        {"data": randn(1, 1, 2, 3), "weight": randn(1, 1, 5, 5)},
        {"scale": 3, "sample_type": "bilinear", "num_filter": 1},
        ["data", "weight"],
    ),
    (
        "crop_like_offset",
        "Crop",
        {"data": x4, "like": randn(2, 1, 2, 2)},
        {"num_args": 2, "offset": (1, 2)},
        ["data"],
    ),
    (
        "softmaxout_multi_ignore",
        "SoftmaxOutput",
        {"data": randn(2, 3, 4), "label": labels(3, 2, 4)},
        {"multi_output": True, "use_ignore": True, "ignore_label": 0, "grad_scale": 2.0},
        ["data"],
    ),
    (
        "convolution_v1",
        "Convolution_v1",
        {"data": randn(2, 2, 5, 5), "weight": randn(3, 2, 3, 3), "bias": randn(3)},
        {"kernel": (3, 3), "num_filter": 3, "pad": (1, 1)},
        ["data", "weight", "bias"],
    ),
    (
        "pooling_v1_max",
        "Pooling_v1",
        {"data": randn(2, 2, 5, 5)},
        {"kernel": (2, 2), "stride": (2, 2), "pool_type": "max", "pooling_convention": "full"},
        ["data"],
    ),
    (
        "pooling_v1_max_pad",
        "Pooling_v1",
        {"data": randn(1, 2, 4, 5) - 1.0},
        {"kernel": (2, 2), "stride": (2, 2), "pad": (1, 1), "pool_type": "max"},
        ["data"],
    ),
    (
        "pooling_v1_avg_full",
        "Pooling_v1",
        {"data": randn(1, 2, 5, 5)},
        {"kernel": (2, 2), "stride": (2, 2), "pool_type": "avg", "pooling_convention": "full"},
        ["data"],
    ),
    (
        "pooling_v1_sum_full",
        "Pooling_v1",
        {"data": randn(1, 1, 5, 6)},
        {
            "kernel": (3, 2),
            "stride": (2, 2),
            "pad": (1, 0),
            "pool_type": "sum",
            "pooling_convention": "full",
        },
        ["data"],
    ),
    (
        "pooling_v1_global",
        "Pooling_v1",
        {"data": randn(2, 2, 3, 3)},
        {"kernel": (1, 1), "global_pool": True, "pool_type": "avg"},
        ["data"],
    ),
    (
        "pooling_v1_avg",
        "Pooling_v1",
        {"data": randn(2, 2, 5, 5)},
        {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "avg"},
        ["data"],
    ),
]


def run(
    op: str, inputs: dict[str, np.ndarray], kwargs: dict[str, object], grads: list[str]
) -> tuple[list[np.ndarray], list[np.ndarray], dict[str, np.ndarray]]:
    import mxnet as mx

    arrays = {k: mx.nd.array(v, dtype=v.dtype) for k, v in inputs.items()}
    for k in grads:
        arrays[k].attach_grad()
    with mx.autograd.record(train_mode=True):
        out = getattr(mx.nd, op)(*arrays.values(), **kwargs)
    outs = out if isinstance(out, (list, tuple)) else [out]
    heads = [randn(*o.shape).astype(o.dtype) for o in outs]
    if grads:
        mx.autograd.backward([o for o in outs], [mx.nd.array(h, dtype=h.dtype) for h in heads])
    return (
        heads,
        [o.asnumpy() for o in outs],
        {k: arrays[k].grad.asnumpy() for k in grads},
    )


def run_symbol(
    op: str, inputs: dict[str, np.ndarray], kwargs: dict[str, object], grads: list[str]
) -> tuple[list[np.ndarray], list[np.ndarray], dict[str, np.ndarray]]:
    """The operator through ``mx.sym`` (``forward(is_train=True)`` and ``backward``, the
    auxiliary states as ``simple_bind`` makes them): mxnet 1.9.1's ``mx.nd.BatchNorm_v1`` and
    ``mx.nd.IdentityAttachKLSparseReg`` cannot be called (they take fewer arrays than their
    operators need)."""
    import mxnet as mx

    sym = getattr(mx.sym, op)(*[mx.sym.var(k) for k in inputs], name="op", **kwargs)
    ex = sym.simple_bind(
        mx.cpu(),
        grad_req={k: "write" if k in grads else "null" for k in inputs},
        **{k: v.shape for k, v in inputs.items()},
    )
    for k, v in inputs.items():
        ex.arg_dict[k][:] = v
    outs = ex.forward(is_train=True)
    heads = [randn(*o.shape) for o in outs]
    ex.backward([mx.nd.array(h) for h in heads])
    return heads, [o.asnumpy() for o in outs], {k: ex.grad_dict[k].asnumpy() for k in grads}


bn_inputs = {"data": randn(4, 3, 2, 2), "gamma": uniform(0.5, 1.5, 3), "beta": randn(3)}
#: the cases run through mx.sym (as CASES)
SYMBOL_CASES: list[tuple[str, str, dict[str, np.ndarray], dict[str, object], list[str]]] = [
    ("batchnorm_v1", "BatchNorm_v1", bn_inputs, {"fix_gamma": False}, ["data", "gamma", "beta"]),
    ("batchnorm_v1_fix_gamma", "BatchNorm_v1", bn_inputs, {"eps": 0.01}, ["data", "beta"]),
    (
        "kl_sparse_reg",
        "IdentityAttachKLSparseReg",
        {"data": uniform(0.1, 0.9, 3, 4)},
        {"sparseness_target": 0.2, "penalty": 0.01, "momentum": 0.5},
        ["data"],
    ),
]


def main() -> None:
    spec = []
    data: dict[str, np.ndarray] = {}
    runs = [(c, run) for c in CASES] + [(c, run_symbol) for c in SYMBOL_CASES]
    for (case, op, inputs, kwargs, grads), runner in runs:
        heads, outs, gs = runner(op, inputs, kwargs, grads)
        spec.append(
            {"case": case, "op": op, "inputs": list(inputs), "kwargs": kwargs, "grads": grads}
        )
        for k, v in inputs.items():
            data[f"{case}/in/{k}"] = v
        for i, (h, o) in enumerate(zip(heads, outs)):
            data[f"{case}/head/{i}"] = h
            data[f"{case}/out/{i}"] = o
        for k, g in gs.items():
            data[f"{case}/grad/{k}"] = g
    with open(os.path.join(HERE, "mxlegacy_reference.json"), "w") as f:
        json.dump({"mxnet": "1.9.1", "cases": spec}, f, indent=1)
    np.savez_compressed(os.path.join(HERE, "mxlegacy_reference.npz"), **data)


if __name__ == "__main__":
    main()
