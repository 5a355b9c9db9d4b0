"""mxnet 1.9.1's legacy layer and loss operators of ``mx.nd`` (``Reshape``, ``SoftmaxOutput``,
``LRN``, ``UpSampling``, ``ROIPooling``...) against mxnet.

``data/mxlegacy_reference.npz`` and ``data/mxlegacy_reference.json`` were written by mxnet
1.9.1 running ``data/make_mxlegacy_reference.py``: each case's inputs, the head gradient, the
outputs and the input gradients after ``backward`` inside ``autograd.record()``. The gradients
are also checked against float64 finite differences (the operators that follow the head
gradient) and differentiated again where mxnet has no second derivative.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from numeric_helpers import central_differences

DATA = Path(__file__).parent / "data"
SPEC = json.loads((DATA / "mxlegacy_reference.json").read_text())
REF = np.load(DATA / "mxlegacy_reference.npz", allow_pickle=False)
CASES = {c["case"]: c for c in SPEC["cases"]}


def _grad(a: mx.nd.NDArray) -> np.ndarray:
    """The gradient array of ``a`` (marked with ``attach_grad``)."""
    assert a.grad is not None
    return np.asarray(a.grad.asnumpy())


def _kwargs(case: dict[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}


def _run(case: dict[str, Any]) -> tuple[list[mx.nd.NDArray], dict[str, np.ndarray]]:
    name = case["case"]
    arrays = {
        k: mx.nd.array(REF[f"{name}/in/{k}"], dtype=REF[f"{name}/in/{k}"].dtype)
        for k in case["inputs"]
    }
    for k in case["grads"]:
        arrays[k].attach_grad()
    with mx.autograd.record(train_mode=True):
        out = getattr(mx.nd, case["op"])(*arrays.values(), **_kwargs(case))
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if case["grads"]:
        heads = [
            mx.nd.array(REF[f"{name}/head/{i}"], dtype=REF[f"{name}/head/{i}"].dtype)
            for i in range(len(outs))
        ]
        mx.autograd.backward(outs, heads)
    return outs, {k: _grad(arrays[k]) for k in case["grads"]}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_mxnet(name: str) -> None:
    """Outputs and gradients as mxnet 1.9.1's (values written by mxnet 1.9.1, see the module
    docstring)."""
    case = CASES[name]
    outs, grads = _run(case)
    n_out = len([k for k in REF.files if k.startswith(f"{name}/out/")])
    assert len(outs) == n_out
    for i, o in enumerate(outs):
        want = REF[f"{name}/out/{i}"]
        got = o.asnumpy()
        assert got.shape == want.shape, (i, got.shape, want.shape)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    for k, g in grads.items():
        np.testing.assert_allclose(g, REF[f"{name}/grad/{k}"], rtol=1e-4, atol=1e-5, err_msg=k)


# -- finite differences (float64) ------------------------------------------------------------------

_rng = np.random.default_rng(7)

#: (operator, inputs, keyword arguments, index of the input checked): operators that follow the
#: head gradient, checked against float64 finite differences of sum(head * out)
FD_CASES: list[tuple[str, list[np.ndarray], dict[str, Any], int]] = [
    ("LRN", [_rng.standard_normal((2, 4, 2, 2))], {"nsize": 3, "alpha": 0.1}, 0),
    ("SoftmaxActivation", [_rng.standard_normal((2, 3, 2))], {"mode": "channel"}, 0),
    ("SoftmaxActivation", [_rng.standard_normal((2, 3, 2))], {}, 0),
    ("UpSampling", [_rng.standard_normal((1, 2, 2, 2))], {"scale": 2}, 0),
    ("Crop", [_rng.standard_normal((1, 2, 4, 4))], {"h_w": (2, 3), "offset": (1, 0)}, 0),
    (
        "GridGenerator",
        [_rng.standard_normal((2, 6))],
        {"transform_type": "affine", "target_shape": (2, 3)},
        0,
    ),
    ("GridGenerator", [_rng.standard_normal((1, 2, 2, 3))], {"transform_type": "warp"}, 0),
    (
        "BilinearSampler",
        [_rng.standard_normal((1, 2, 3, 4)), _rng.uniform(-0.9, 0.9, (1, 2, 2, 2))],
        {},
        1,
    ),
    (
        "BilinearSampler",
        [_rng.standard_normal((1, 2, 3, 4)), _rng.uniform(-0.9, 0.9, (1, 2, 2, 2))],
        {},
        0,
    ),
    (
        "Correlation",
        [_rng.standard_normal((1, 2, 4, 4)), _rng.standard_normal((1, 2, 4, 4))],
        {"kernel_size": 3, "max_displacement": 1, "pad_size": 2},
        0,
    ),
    (
        "ROIPooling",
        [_rng.standard_normal((1, 2, 5, 5)), np.array([[0.0, 0, 0, 3, 4]])],
        {"pooled_size": (2, 2), "spatial_scale": 1.0},
        0,
    ),
]


@pytest.mark.parametrize("op,inputs,kwargs,at", FD_CASES, ids=lambda v: str(v)[:20])
def test_gradient_matches_finite_differences(
    op: str, inputs: list[np.ndarray], kwargs: dict[str, Any], at: int
) -> None:
    def f(*vals: np.ndarray) -> tuple[float, np.ndarray]:
        arrays = [mx.nd.array(v, dtype="float64") for v in vals]
        arrays[at].attach_grad()
        with mx.autograd.record():
            y = getattr(mx.nd, op)(*arrays, **kwargs)
        head = np.cos(np.arange(y.size, dtype=np.float64)).reshape(y.shape)
        y.backward(mx.nd.array(head, dtype="float64"))
        return float((y.asnumpy() * head).sum()), _grad(arrays[at])

    _, g = f(*inputs)
    eps = 1e-6
    num = np.zeros_like(inputs[at])
    for i in np.ndindex(*inputs[at].shape):
        up = [v.copy() for v in inputs]
        dn = [v.copy() for v in inputs]
        up[at][i] += eps
        dn[at][i] -= eps
        num[i] = (f(*up)[0] - f(*dn)[0]) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-6)


# -- the loss layers: the head gradient is ignored, the gradient differentiates again --------


def test_loss_layers_ignore_the_head_gradient() -> None:
    x = mx.nd.array(_rng.standard_normal((3, 4)), dtype="float64")
    lab = mx.nd.array([0.0, 3.0, 1.0], dtype="float64")
    for layer in (
        lambda v: mx.nd.SoftmaxOutput(v, lab),
        lambda v: mx.nd.SVMOutput(v, lab),
        lambda v: mx.nd.MakeLoss(v),
        lambda v: mx.nd.LinearRegressionOutput(v, mx.nd.zeros((3, 4), dtype="float64")),
    ):
        grads = []
        for scale in (1.0, 5.0):
            x.attach_grad()
            with mx.autograd.record():
                y = layer(x)
            y.backward(mx.nd.ones(y.shape, dtype="float64") * scale)
            grads.append(_grad(x))
        np.testing.assert_array_equal(grads[0], grads[1])


def test_softmax_output_second_derivative() -> None:
    """The gradient of SoftmaxOutput is p - onehot: its derivative (a Hessian-vector product
    with v) is the softmax Jacobian applied to v, per row."""
    xv = _rng.standard_normal((2, 3))
    v = _rng.standard_normal((2, 3))
    x = mx.nd.array(xv, dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.SoftmaxOutput(x, mx.nd.array([1.0, 2.0], dtype="float64"))
        (g,) = mx.autograd.grad(y, [x], create_graph=True, retain_graph=True)
        z = (g * mx.nd.array(v, dtype="float64")).sum()
    z.backward()
    p = np.exp(xv) / np.exp(xv).sum(1, keepdims=True)
    want = p * v - p * (p * v).sum(1, keepdims=True)
    np.testing.assert_allclose(_grad(x), want, rtol=1e-10, atol=1e-12)


def test_logistic_regression_second_derivative() -> None:
    xv = _rng.standard_normal((4, 1))
    x = mx.nd.array(xv, dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LogisticRegressionOutput(x, mx.nd.ones((4, 1), dtype="float64"))
        (g,) = mx.autograd.grad(y, [x], create_graph=True, retain_graph=True)
        z = g.sum()
    z.backward()
    s = 1 / (1 + np.exp(-xv))
    np.testing.assert_allclose(_grad(x), s * (1 - s), rtol=1e-10)


#: (operator, inputs, keyword arguments, index of the input): second derivatives checked
SECOND_ORDER = [
    ("LRN", [_rng.standard_normal((1, 4, 2, 2))], {"nsize": 3, "alpha": 0.5, "beta": 0.75}, 0),
    ("SoftmaxActivation", [_rng.standard_normal((2, 3, 2))], {"mode": "channel"}, 0),
    (
        "BilinearSampler",
        [_rng.standard_normal((1, 1, 3, 3)), _rng.uniform(-0.8, 0.8, (1, 2, 2, 2))],
        {},
        1,
    ),
    (
        "SoftmaxOutput",
        [_rng.standard_normal((3, 4)), np.array([0.0, 2.0, 3.0])],
        {"normalization": "batch", "smooth_alpha": 0.1},
        0,
    ),
]


@pytest.mark.parametrize("op,inputs,kwargs,at", SECOND_ORDER, ids=lambda v: str(v)[:20])
def test_second_derivative_matches_finite_differences(
    op: str, inputs: list[np.ndarray], kwargs: dict[str, Any], at: int
) -> None:
    """d/dx <v, grad_x sum(head * out)> through mx.autograd.grad(create_graph=True) against
    central differences of the first gradient (mxnet 1.9.1 has no second derivative here)."""
    v = np.sin(np.arange(inputs[at].size, dtype=np.float64)).reshape(inputs[at].shape)

    def first(x: np.ndarray) -> np.ndarray:
        vals = [x if i == at else a for i, a in enumerate(inputs)]
        arrays = [mx.nd.array(a, dtype="float64") for a in vals]
        arrays[at].attach_grad()
        with mx.autograd.record():
            y = getattr(mx.nd, op)(*arrays, **kwargs)
        head = np.cos(np.arange(y.size, dtype=np.float64)).reshape(y.shape)
        y.backward(mx.nd.array(head, dtype="float64"))
        return np.asarray(_grad(arrays[at]))

    arrays = [mx.nd.array(a, dtype="float64") for a in inputs]
    arrays[at].attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, op)(*arrays, **kwargs)
        head = np.cos(np.arange(y.size, dtype=np.float64)).reshape(y.shape)
        (g,) = mx.autograd.grad(
            y, [arrays[at]], head_grads=mx.nd.array(head, dtype="float64"), create_graph=True
        )
        z = (g * mx.nd.array(v, dtype="float64")).sum()
    z.backward()
    got = _grad(arrays[at])
    want = central_differences(lambda x: float((first(x) * v).sum()), inputs[at].copy())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_blockgrad_blocks_and_identity_passes() -> None:
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.identity(x) * 3 + mx.nd.stop_gradient(x) * x
    y.backward()
    np.testing.assert_allclose(_grad(x), [4.0, 5.0])


def test_aliases() -> None:
    x = mx.nd.zeros((2, 12))  # (Reshape adds the deprecated target_shape to reshape)
    assert mx.nd.Reshape(x, (4, 6)).shape == mx.nd.reshape(x, (4, 6)).shape == (4, 6)
    assert mx.nd.Concat is mx.nd.concat
    assert mx.nd.Cast is mx.nd.cast
    assert mx.nd.SliceChannel is mx.nd.split
    assert mx.nd.SwapAxis is mx.nd.swapaxes
    assert mx.nd.crop is mx.nd.slice
    assert mx.nd.Softmax is mx.nd.SoftmaxOutput
    assert mx.nd.stop_gradient is mx.nd.BlockGrad


def test_kl_sparse_reg_updates_moving_avg_at_backward() -> None:
    xv = np.array([[0.2, 0.6], [0.4, 0.8]], dtype=np.float32)
    x = mx.nd.array(xv)
    avg = mx.nd.array([0.5, 0.1])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.IdentityAttachKLSparseReg(x, moving_avg=avg, momentum=0.5, penalty=0.1)
    np.testing.assert_allclose(avg.asnumpy(), [0.5, 0.1], rtol=1e-7)  # (forward: unchanged)
    y.backward()
    a = 0.5 * np.array([0.5, 0.1]) + 0.5 * xv.mean(0)
    np.testing.assert_allclose(avg.asnumpy(), a, rtol=1e-6)
    np.testing.assert_allclose(_grad(x), 1 + 0.1 * (-0.1 / a + 0.9 / (1 - a)) + 0 * xv, rtol=1e-6)


def test_batchnorm_v1_is_batchnorm() -> None:
    x = mx.nd.array(_rng.standard_normal((4, 3, 2)))
    g, b = mx.nd.array([1.0, 2.0, 0.5]), mx.nd.array([0.0, 1.0, -1.0])
    with mx.autograd.record(train_mode=True):
        y1 = mx.nd.BatchNorm_v1(x, g, b, fix_gamma=False)
        y2 = mx.nd.BatchNorm(x, g, b, mx.nd.zeros(3), mx.nd.ones(3), fix_gamma=False)
    np.testing.assert_allclose(y1.asnumpy(), y2.asnumpy())


# -- errors, as mxnet ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call,match",
    [
        (
            lambda: mx.nd.SoftmaxActivation(mx.nd.ones((2, 3)), mode="channel"),
            "SoftmaxActivation: Input need to have a least 3 dimensions",
        ),
        (lambda: mx.nd.SoftmaxActivation(mx.nd.ones((2, 3)), mode="x"), "SoftmaxActivation"),
        (
            lambda: mx.nd.SoftmaxOutput(mx.nd.ones((2, 3)), mx.nd.ones((3,))),
            "SoftmaxOutput: Shape inconsistent",
        ),
        (
            lambda: mx.nd.SoftmaxOutput(mx.nd.ones((2, 3)), mx.nd.array([0.0, 5.0])),
            "SoftmaxOutput: labels must be class indices",
        ),
        (
            lambda: mx.nd.SoftmaxOutput(mx.nd.ones((2, 3)), mx.nd.ones((2,)), normalization="x"),
            "SoftmaxOutput: Invalid Input",
        ),
        (
            lambda: mx.nd.LinearRegressionOutput(mx.nd.ones((2, 3)), mx.nd.ones((3, 2))),
            "LinearRegressionOutput: Shape inconsistent",
        ),
        (lambda: mx.nd.LRN(mx.nd.ones((1, 3, 2, 2))), "LRN: Required parameter nsize"),
        (
            lambda: mx.nd.UpSampling(mx.nd.ones((1, 1, 2, 2)), scale=2, sample_type="x"),
            "UpSampling: Invalid Input",
        ),
        (
            lambda: mx.nd.UpSampling(
                mx.nd.ones((1, 1, 2, 2)), mx.nd.ones((1, 1, 3, 3)), scale=2, num_args=2
            ),
            "UpSampling: input 1",
        ),
        (
            lambda: mx.nd.Crop(mx.nd.ones((1, 1, 2, 2)), num_args=1, h_w=(3, 3)),
            "Crop: the crop of size",
        ),
        (
            lambda: mx.nd.GridGenerator(mx.nd.ones((1, 5)), target_shape=(2, 2)),
            "GridGenerator: transform_type='affine' needs",
        ),
        (
            lambda: mx.nd.ROIPooling(mx.nd.ones((1, 1, 4, 4)), mx.nd.ones((1, 4)), (2, 2), 1.0),
            "ROIPooling: data of shape",
        ),
        (
            lambda: mx.nd.Correlation(mx.nd.ones((1, 1, 4, 4)), mx.nd.ones((1, 1, 4, 5))),
            "Correlation: data1 and data2",
        ),
        (lambda: mx.nd.MakeLoss(mx.nd.ones((2,)), normalization="x"), "MakeLoss: Invalid Input"),
        (
            lambda: mx.nd.SVMOutput(mx.nd.ones((2, 3)), mx.nd.array([0.0, 3.0])),
            "SVMOutput: labels must be class indices",
        ),
    ],
)
def test_errors_name_the_operator(call: Any, match: str) -> None:
    with pytest.raises(mx.base.MXNetError, match=match):
        call()


def test_softmax_output_multi_output_ignores_smooth_alpha_as_mxnet() -> None:
    """Regression: smooth_alpha smoothed the multi-output form too; mxnet 1.9.1 smooths the
    single-output form only (its gradient[0, :, 0] here is [-0.197, 0.0791, 0.1179] for
    smooth_alpha 0 and 0.3 alike)."""
    x = mx.nd.array(np.arange(12, dtype=np.float32).reshape(1, 3, 4) * 0.1)
    label = mx.nd.array([[0, 1, 2, 1]])
    x.attach_grad()
    grads = []
    for alpha in (0.0, 0.3):
        with mx.autograd.record():
            y = mx.nd.SoftmaxOutput(x, label, multi_output=True, smooth_alpha=alpha)
        y.backward()
        grads.append(x.grad.asnumpy().copy())
    np.testing.assert_allclose(grads[0][0, :, 0], [-0.197, 0.0791, 0.1179], atol=1e-4)
    np.testing.assert_array_equal(grads[0], grads[1])


def test_reshape_takes_mxnet_s_deprecated_target_shape() -> None:
    """``Reshape(target_shape=...)``: its 0 is inferred, ``keep_highest`` keeps data's first
    size (mxnet 1.9.1: (4, 6) and (2, 12) for these)."""
    x = mx.nd.zeros((2, 12))
    assert mx.nd.Reshape(x, target_shape=(4, 0)).shape == (4, 6)
    assert mx.nd.Reshape(x, target_shape=(4, 6)).shape == (4, 6)
    assert mx.nd.Reshape(x, target_shape=(4, 0), keep_highest=True).shape == (2, 12)


def test_linalg_inverse_of_a_singular_matrix_names_the_operator() -> None:
    with pytest.raises(mx.base.MXNetError, match=r"mx\.nd\.linalg_inverse: .*singular"):
        mx.nd.linalg.inverse(mx.nd.array([[1.0, 2.0], [2.0, 4.0]]))
