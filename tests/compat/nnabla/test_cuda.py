"""The nnabla front-end on CUDA (gradhub-cuda): a static MLP trained by Adam and Sgd
(``loss.forward(); loss.backward(clear_buffer=True)``), convolution with batch normalization
(training and ``batch_stat=False``) and max pooling, layer, instance and group normalization,
``F.roi_align``, ``F.deformable_convolution`` and ``PF.deformable_convolution``,
``F.onnx_resize``, ``F.patch_correlation``, ``F.adaptive_separable_convolution``, the
quantization functions and layers (``F.min_max_quantize``, ``F.inq_affine``, ``PF.inq_affine``,
``PF.pow2_quantized_affine``, ``PF.min_max_quantized_convolution``), the NMS functions
(``F.nms_detection2d``, ``F.onnx_non_max_suppression``) and ``nn.grad`` to second order.

Each test runs the same code with the same inputs (a seeded numpy generator; parameters drawn
from ``nn.random.seed``'s host generator) under ``get_extension_context("cpu")`` and under
``get_extension_context("cudnn")`` and compares the host copies of the outputs, gradients and
updated parameters: float32 (the front-end's type) within 1e-5 of the largest magnitude, float64
within 1e-10, integers exactly. Every test skips, with one reason, where no usable CUDA device
exists; on a GPU machine run ``python -m pytest tests/compat/nnabla/test_cuda.py`` (seconds).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradhub as gh
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import gradhub_compat.nnabla.solvers as S
import numpy as np
from cuda_helpers import agree_within, gpu
from gradhub_compat.nnabla.ext_utils import get_extension_context

pytestmark = gpu

RTOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-5}


def _host(a: Any) -> np.ndarray:
    """A host (numpy) copy of an array (numpy or CuPy) or of a Variable's data."""
    if isinstance(a, gh.Variable):
        a = a.d
    get = getattr(a, "get", None)  # CuPy arrays; numpy arrays have no ``get``
    return np.array(get() if callable(get) else a, copy=True)


def _on(ctx: Any, *vs: Any) -> None:
    """Each Variable of ``vs`` lives on the device of ``ctx``."""
    for v in vs:
        assert v.device.kind == ctx.backend, (v.device, ctx)


def _var(ctx: Any, a: Any, need_grad: bool = False) -> Any:
    """An nnabla Variable holding ``a`` (a numpy array) on the device of ``ctx``."""
    with nn.context_scope(ctx):
        v = nn.Variable.from_numpy_array(a, need_grad=need_grad)
    _on(ctx, v)
    return v


def _params(grad_only: bool = False, grads: bool = True) -> list[np.ndarray]:
    """The parameters (sorted by name) and, with ``grads``, their gradients, as host arrays."""
    out = []
    for _, p in sorted(nn.get_parameters(grad_only=grad_only).items()):
        out.append(_host(p.d))
        if grads and p.need_grad:
            out.append(_host(p.g))
    return out


def _same(name: str, run: Callable[[Any], list[np.ndarray]]) -> None:
    """``run(ctx)`` gives the same host arrays under the cudnn context as under the CPU's."""
    nn.clear_parameters()
    want = run(get_extension_context("cpu"))
    nn.clear_parameters()
    got = run(get_extension_context("cudnn"))
    nn.clear_parameters()
    assert got and all(type(a) is np.ndarray for a in got), name
    agree_within(got, want, name, RTOL)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# -- training ---------------------------------------------------------------------------------


def _run_mlp(ctx: Any, solver: str) -> list[np.ndarray]:
    rng = _rng(1)
    xs = rng.standard_normal((3, 8, 5))
    ts = rng.integers(0, 3, size=(3, 8, 1)).astype(np.int32)
    before = gh.get_default_context()
    nn.set_default_context(ctx)
    try:
        nn.random.seed(11)
        x = nn.Variable((8, 5))
        t = nn.Variable.from_numpy_array(ts[0])
        h = F.relu(PF.affine(x, 6, name="fc1"))
        y = PF.affine(h, 3, name="fc2")
        loss = F.mean(F.softmax_cross_entropy(y, t))
        s = S.Adam(alpha=0.01) if solver == "adam" else S.Sgd(lr=0.1)
        s.set_parameters(nn.get_parameters())
        losses = []
        for step in range(3):
            x.d = xs[step]
            t.d = ts[step]
            loss.forward()
            losses.append(_host(loss.d))
            s.zero_grad()
            loss.backward(clear_buffer=True)
            s.update()
        _on(ctx, x, t, loss, *nn.get_parameters().values())
    finally:
        gh.set_default_context(before)
    return [*losses, *_params()]


def test_mlp_trained_by_adam_gives_the_cpus_parameters() -> None:
    _same("mlp adam", lambda ctx: _run_mlp(ctx, "adam"))


def test_mlp_trained_by_sgd_gives_the_cpus_parameters() -> None:
    _same("mlp sgd", lambda ctx: _run_mlp(ctx, "sgd"))


# -- convolution, normalization, pooling ------------------------------------------------------


def _run_conv_bn_pool(ctx: Any, batch_stat: bool) -> list[np.ndarray]:
    rng = _rng(2)
    xa = rng.standard_normal((2, 3, 6, 6))
    dy = rng.standard_normal((2, 4, 3, 3))
    with nn.context_scope(ctx):
        nn.random.seed(12)
        x = _var(ctx, xa, need_grad=True)
        # (no bias: batch normalization cancels it, its gradient is rounding noise)
        c = PF.convolution(x, 4, (3, 3), pad=(1, 1), with_bias=False, name="conv")
        if not batch_stat:  # running statistics to normalize with
            PF.batch_normalization(c, batch_stat=False, name="bn")
            ps = nn.get_parameters(grad_only=False)
            ps["bn/bn/mean"].d = rng.standard_normal(ps["bn/bn/mean"].shape) * 0.1
            ps["bn/bn/var"].d = rng.uniform(0.5, 1.5, ps["bn/bn/var"].shape)
            ps["bn/bn/gamma"].d = rng.uniform(0.5, 1.5, ps["bn/bn/gamma"].shape)
            ps["bn/bn/beta"].d = rng.standard_normal(ps["bn/bn/beta"].shape) * 0.1
        h = PF.batch_normalization(c, batch_stat=batch_stat, name="bn")
        y = F.max_pooling(h, (2, 2))
        loss = F.sum(y * _var(ctx, dy))
        loss.forward()
        out = [_host(y.d), _host(loss.d)]
        loss.backward(clear_buffer=True)
        _on(ctx, x, y, *nn.get_parameters(grad_only=False).values())
    return [*out, _host(x.g), *_params()]


def test_convolution_batch_normalization_training_and_max_pooling() -> None:
    _same("conv bn train pool", lambda ctx: _run_conv_bn_pool(ctx, True))


def test_convolution_batch_normalization_with_running_statistics_and_max_pooling() -> None:
    _same("conv bn batch_stat=False pool", lambda ctx: _run_conv_bn_pool(ctx, False))


def _run_norm(ctx: Any, which: str) -> list[np.ndarray]:
    rng = _rng(3)
    xa = rng.standard_normal((2, 4, 3, 5)) * 2.0 + 0.5
    dy = rng.standard_normal((2, 4, 3, 5))
    with nn.context_scope(ctx):
        x = _var(ctx, xa, need_grad=True)
        if which == "layer":
            y = PF.layer_normalization(x, name="ln")
        elif which == "instance":
            y = PF.instance_normalization(x, name="in")
        else:
            y = PF.group_normalization(x, 2, name="gn")
        # scale and bias away from 1 and 0, so that their gradients reach the input
        for k, p in sorted(nn.get_parameters().items()):
            p.d = (
                rng.uniform(0.5, 1.5, p.shape)
                if k.endswith("gamma")
                else rng.uniform(-0.5, 0.5, p.shape)
            )
        loss = F.sum(y * y * _var(ctx, dy))
        loss.forward()
        out = _host(y.d)
        loss.backward(clear_buffer=True)
        _on(ctx, x, y, *nn.get_parameters().values())
    return [out, _host(x.g), *_params()]


def test_layer_normalization_forward_and_backward() -> None:
    _same("layer_normalization", lambda ctx: _run_norm(ctx, "layer"))


def test_instance_normalization_forward_and_backward() -> None:
    _same("instance_normalization", lambda ctx: _run_norm(ctx, "instance"))


def test_group_normalization_forward_and_backward() -> None:
    _same("group_normalization", lambda ctx: _run_norm(ctx, "group"))


# -- sampling functions -----------------------------------------------------------------------


def _grads_of(ctx: Any, y: Any, dy: np.ndarray, inputs: list[Any]) -> list[np.ndarray]:
    """``y``'s data and the gradients of ``inputs`` for the output gradient ``dy``."""
    for v in inputs:
        v.grad.zero()
    loss = F.sum(y * _var(ctx, dy))
    loss.forward()
    out = _host(y.d)
    loss.backward(clear_buffer=True)
    _on(ctx, y, *inputs)
    return [out, *(_host(v.g) for v in inputs)]


def _run_roi_align(ctx: Any) -> list[np.ndarray]:
    rng = _rng(4)
    xa = rng.standard_normal((2, 3, 8, 8))
    boxes = np.array(
        [
            [0.0, 0.7, 1.3, 5.2, 6.1],
            [1.0, 2.2, 0.4, 7.6, 3.9],
            [1.0, -1.3, 2.7, 4.1, 9.4],  # partly outside
        ]
    )
    dy = rng.standard_normal((3, 3, 2, 3))
    with nn.context_scope(ctx):
        x = _var(ctx, xa, need_grad=True)
        b = _var(ctx, boxes)
        res = _grads_of(ctx, F.roi_align(x, b, (2, 3), sampling_ratio=2), dy, [x])
        y2 = F.roi_align(x, b, (2, 3), spatial_scale=(0.5, 0.75))  # the adaptive grid
        y2.forward()
    return [*res, _host(y2.d)]


def test_roi_align_forward_and_input_gradient() -> None:
    _same("roi_align", _run_roi_align)


def _run_deformable(ctx: Any) -> list[np.ndarray]:
    rng = _rng(5)
    xa = rng.standard_normal((2, 4, 5, 5))
    wa = rng.standard_normal((4, 2, 3, 3)) * 0.3
    offa = rng.uniform(-1.5, 1.5, (2, 2 * 2 * 9, 5, 5))  # deformable_group 2
    maska = rng.uniform(0.0, 1.0, (2, 2 * 9, 5, 5))
    ba = rng.standard_normal(4)
    dy = rng.standard_normal((2, 4, 5, 5))
    with nn.context_scope(ctx):
        vs = [_var(ctx, a, need_grad=True) for a in (xa, wa, offa, maska, ba)]
        y = F.deformable_convolution(*vs, pad=(1, 1), group=2, deformable_group=2)
        return _grads_of(ctx, y, dy, vs)


def test_deformable_convolution_forward_and_gradients() -> None:
    _same("F.deformable_convolution", _run_deformable)


def _run_pf_deformable(ctx: Any) -> list[np.ndarray]:
    rng = _rng(6)
    xa = rng.standard_normal((1, 2, 5, 5))
    offa = rng.uniform(-1.5, 1.5, (1, 18, 5, 5))
    maska = rng.uniform(0.0, 1.0, (1, 9, 5, 5))
    dy = rng.standard_normal((1, 4, 5, 5))
    with nn.context_scope(ctx):
        nn.random.seed(13)
        x, off, mask = (_var(ctx, a, need_grad=True) for a in (xa, offa, maska))
        y = PF.deformable_convolution(x, 4, (3, 3), off, mask, pad=(1, 1), name="dc")
        res = _grads_of(ctx, y, dy, [x, off, mask])
        _on(ctx, *nn.get_parameters().values())
    return [*res, *_params()]


def test_parametric_deformable_convolution_forward_and_gradients() -> None:
    _same("PF.deformable_convolution", _run_pf_deformable)


def _run_onnx_resize(ctx: Any) -> list[np.ndarray]:
    rng = _rng(7)
    xa = rng.standard_normal((1, 2, 3, 4))
    out = []
    with nn.context_scope(ctx):
        x = _var(ctx, xa, need_grad=True)
        for kw in (
            {"scales": [1.0, 1.0, 2.0, 1.5], "mode": "linear"},
            {
                "sizes": [1, 2, 5, 7],
                "mode": "cubic",
                "coordinate_transformation_mode": "align_corners",
            },
            {"scales": [1.0, 1.0, 2.0, 2.0], "mode": "nearest"},
        ):
            y = F.onnx_resize(x, **kw)
            out += _grads_of(ctx, y, rng.standard_normal(y.shape), [x])
    return out


def test_onnx_resize_linear_cubic_nearest_forward_and_input_gradient() -> None:
    _same("onnx_resize", _run_onnx_resize)


def _run_patch_correlation(ctx: Any) -> list[np.ndarray]:
    rng = _rng(8)
    a = rng.standard_normal((2, 3, 5, 6))
    b = rng.standard_normal((2, 3, 5, 6))
    with nn.context_scope(ctx):
        x1, x2 = _var(ctx, a, need_grad=True), _var(ctx, b, need_grad=True)
        y = F.patch_correlation(x1, x2, patch=(3, 3), shift=(1, 2), padding=(1, 1, 1, 1))
        return _grads_of(ctx, y, rng.standard_normal(y.shape), [x1, x2])


def test_patch_correlation_forward_and_input_gradients() -> None:
    _same("patch_correlation", _run_patch_correlation)


def _run_adaptive_separable(ctx: Any) -> list[np.ndarray]:
    rng = _rng(9)
    xa = rng.standard_normal((2, 3, 6, 7))
    kv = rng.standard_normal((2, 3, 4, 4))
    kh = rng.standard_normal((2, 4, 4, 4))
    with nn.context_scope(ctx):
        vs = [_var(ctx, a, need_grad=True) for a in (xa, kv, kh)]
        y = F.adaptive_separable_convolution(*vs)
        return _grads_of(ctx, y, rng.standard_normal(y.shape), vs)


def test_adaptive_separable_convolution_forward_and_input_gradients() -> None:
    _same("adaptive_separable_convolution", _run_adaptive_separable)


# -- quantization -----------------------------------------------------------------------------


def _run_min_max_quantize(ctx: Any) -> list[np.ndarray]:
    rng = _rng(10)
    xa = rng.uniform(-1.5, 1.5, (4, 3))
    out = []
    with nn.context_scope(ctx):
        for x_min_max, ema in ((False, False), (True, True), (True, False)):
            x = _var(ctx, xa, need_grad=True)
            qr_min = _var(ctx, np.full((1, 3), -1.0), need_grad=True)
            qr_max = _var(ctx, np.full((1, 3), 1.0), need_grad=True)
            ql_min = _var(ctx, np.zeros((1, 3)))
            ql_max = _var(ctx, np.full((1, 3), 255.0))
            y = F.min_max_quantize(
                x, qr_min, qr_max, ql_min, ql_max, decay=0.9, x_min_max=x_min_max, ema=ema
            )
            out += _grads_of(ctx, y, rng.standard_normal(y.shape), [x, qr_min, qr_max])
            out += [_host(qr_min.d), _host(qr_max.d)]
    return out


def test_min_max_quantize_forward_ranges_and_gradients() -> None:
    _same("F.min_max_quantize", _run_min_max_quantize)


def _run_min_max_quantized_convolution(ctx: Any) -> list[np.ndarray]:
    rng = _rng(11)
    xa = rng.standard_normal((2, 3, 5, 5))
    with nn.context_scope(ctx):
        nn.random.seed(14)
        x = _var(ctx, xa, need_grad=True)
        y = PF.min_max_quantized_convolution(x, 4, (3, 3), pad=(1, 1), name="mmq")
        res = _grads_of(ctx, y, rng.standard_normal(y.shape), [x])
        _on(ctx, *nn.get_parameters(grad_only=False).values())
    return [*res, *_params()]


def test_min_max_quantized_convolution_forward_and_gradients() -> None:
    _same("PF.min_max_quantized_convolution", _run_min_max_quantized_convolution)


def _run_inq(ctx: Any) -> list[np.ndarray]:
    rng = _rng(12)
    xa = rng.standard_normal((4, 6))
    wa = rng.standard_normal((6, 3))
    ba = rng.standard_normal(3)
    out = []
    with nn.context_scope(ctx):
        x, w, b = (_var(ctx, a, need_grad=True) for a in (xa, wa, ba))
        ind = _var(ctx, np.zeros((6, 3), np.int32))
        y = F.inq_affine(
            x, w, ind, b, num_bits=4, inq_iterations=(1, 2), selection_algorithm="largest_abs"
        )
        for _ in range(3):  # executions 0 (nothing fixed), 1 (half fixed), 2 (all fixed)
            out += _grads_of(ctx, y, rng.standard_normal(y.shape), [x, w, b])
            out += [_host(w.d), _host(ind.d)]
        nn.random.seed(15)
        h = PF.inq_affine(
            x, 5, num_bits=3, inq_iterations=(0,), selection_algorithm="largest_abs", name="inq"
        )
        out += _grads_of(ctx, h, rng.standard_normal(h.shape), [x])
        _on(ctx, *nn.get_parameters(grad_only=False).values())
    return [*out, *_params()]


def test_inq_affine_function_and_layer_forward_and_gradients() -> None:
    _same("inq_affine", _run_inq)


def _run_pow2_affine(ctx: Any) -> list[np.ndarray]:
    rng = _rng(13)
    xa = rng.standard_normal((4, 5))
    with nn.context_scope(ctx):
        nn.random.seed(16)
        x = _var(ctx, xa, need_grad=True)
        y = PF.pow2_quantized_affine(x, 3, name="p2")
        res = _grads_of(ctx, y, rng.standard_normal(y.shape), [x])
        _on(ctx, *nn.get_parameters(grad_only=False).values())
    return [*res, *_params()]


def test_pow2_quantized_affine_forward_and_gradients() -> None:
    _same("PF.pow2_quantized_affine", _run_pow2_affine)


# -- non-maximum suppression ------------------------------------------------------------------


def _run_nms(ctx: Any) -> list[np.ndarray]:
    rng = _rng(14)
    n = 10
    det = np.concatenate(
        [
            rng.uniform(0.5, 3.0, (1, n, 2)),  # centres
            rng.uniform(0.5, 1.5, (1, n, 2)),  # sizes
            rng.uniform(0.0, 1.0, (1, n, 1)),  # objectness
            rng.uniform(0.0, 1.0, (1, n, 3)),  # class probabilities
        ],
        axis=2,
    )
    corners = rng.uniform(0.0, 2.0, (2, n, 2))
    boxes = np.concatenate([corners, corners + rng.uniform(0.5, 1.5, (2, n, 2))], axis=2)
    scores = rng.uniform(0.0, 1.0, (2, 3, n))
    out = []
    with nn.context_scope(ctx):
        x = _var(ctx, det)
        for per_class in (True, False):
            y = F.nms_detection2d(x, 0.3, 0.4, per_class)
            y.forward()
            _on(ctx, y)
            out.append(_host(y.d))
        idx = F.onnx_non_max_suppression(
            _var(ctx, boxes),
            _var(ctx, scores),
            max_output_boxes_per_class=4,
            iou_threshold=0.3,
            score_threshold=0.2,
        )
        idx.forward()
        _on(ctx, idx)
        out.append(_host(idx.d))
    assert out[-1].dtype.kind == "u" and len(out[-1]) > 0
    return out


def test_nms_detection2d_and_onnx_non_max_suppression_keep_the_same_boxes() -> None:
    _same("nms", _run_nms)


# -- higher-order gradients -------------------------------------------------------------------


def _run_second_derivative(ctx: Any) -> list[np.ndarray]:
    rng = _rng(15)
    xa = rng.standard_normal((3, 4))
    with nn.context_scope(ctx):
        nn.random.seed(17)
        x = _var(ctx, xa, need_grad=True)
        h = F.tanh(PF.affine(x, 5, name="l1"))
        y = F.sum(F.tanh(PF.affine(h, 2, name="l2")))
        (gx,) = nn.grad([y], [x])
        (ggx,) = nn.grad([F.sum(gx * gx)], [x])  # d/dx |dy/dx|^2
        ggx.forward()
        penalty = F.sum(gx * gx)
        penalty.forward()
        penalty.backward()  # second derivatives into x and the parameters
        _on(ctx, gx, ggx, *nn.get_parameters().values())
    return [_host(gx.d), _host(ggx.d), _host(penalty.d), _host(x.g), *_params()]


def test_grad_of_a_tanh_net_to_second_order() -> None:
    _same("nn.grad second order", _run_second_derivative)


def _run_weight_normalization(ctx: Any) -> list[np.ndarray]:
    """PF.weight_normalization reads the weight's data for g's initial value (a device array on
    the GPU: it went through ``numpy.asarray`` and raised before 2026-11-28)."""
    rng = _rng(41)
    with nn.context_scope(ctx):
        x = _var(ctx, rng.standard_normal((3, 4)).astype(np.float32), need_grad=True)
        w = nn.Variable.from_numpy_array(
            rng.standard_normal((4, 5)).astype(np.float32), need_grad=True
        )
        with nn.parameter_scope("wn"):
            wn = PF.weight_normalization(w, dim=1)
        y = F.sum(F.tanh(F.affine(x, wn)))
        y.forward()
        y.backward()
    return [_host(y.d), _host(x.g), _host(w.g), *_params()]


def test_weight_normalization_initializes_g_from_device_data() -> None:
    _same("weight_normalization", _run_weight_normalization)


def _run_from_device_data(ctx: Any) -> list[np.ndarray]:
    """nnabla's ``nn.Variable.from_numpy_array(other.d)`` and ``nn.NdArray.from_numpy_array``
    with another Variable's data: a device array under the cudnn context."""
    rng = _rng(43)
    a = _var(ctx, rng.standard_normal((2, 3)).astype(np.float32))
    with nn.context_scope(ctx):
        b = nn.Variable.from_numpy_array(a.d, need_grad=True)
        c = nn.NdArray.from_numpy_array(a.d)
        y = F.sum(b * b)
        y.forward()
        y.backward()
    _on(ctx, b)
    return [_host(b.d), _host(b.g), _host(c.data), _host(y.d)]


def test_from_numpy_array_takes_another_variables_device_data() -> None:
    _same("from_numpy_array", _run_from_device_data)


def test_monitor_series_takes_device_data(tmp_path: Any) -> None:
    """nnabla's loop ``monitor.add(i, loss.d.copy())`` with ``loss`` on the GPU: the series
    file holds the CPU run's means (MonitorSeries averaged a list of CuPy arrays through
    ``numpy.mean`` before 2026-11-28)."""
    from gradhub_compat.nnabla.monitor import Monitor, MonitorSeries

    def run(ctx: Any) -> list[np.ndarray]:
        folder = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        series = MonitorSeries("loss", Monitor(str(folder)), interval=2, verbose=False)
        for i, value in enumerate((0.5, 0.25, 2.0, 1.0)):
            loss = _var(ctx, np.array(value, np.float32))
            series.add(i, loss.d.copy())
        rows = (folder / "loss.series.txt").read_text().split()
        return [np.array([float(r) for r in rows])]

    _same("MonitorSeries", run)


def _run_from_device_data_and_grad(ctx: Any) -> list[np.ndarray]:
    """``nn.Variable.from_numpy_array(a.d, grad=a.g)`` with ``a`` on the device of ``ctx``: the
    gradient went through ``numpy.asarray`` (which a CuPy array refuses) before 2026-11-28."""
    rng = _rng(44)
    a = _var(ctx, rng.standard_normal((3, 4)).astype(np.float32), need_grad=True)
    w = _var(ctx, rng.standard_normal((3, 4)).astype(np.float32))
    with nn.context_scope(ctx):
        y = F.sum(F.tanh(a) * w)
        y.forward()
        a.grad.zero()
        y.backward()  # a.g: a device array on the GPU
        b = nn.Variable.from_numpy_array(a.d, grad=a.g, need_grad=True)
        c = nn.Variable.from_numpy_array(a.d * 2.0, grad=a.g * 3.0)
        labels = nn.Variable.from_numpy_array(np.array([2, 0, 1], np.int32), grad=a.g[:, 0])
        z = F.sum(b * b * w)
        z.forward()
        z.backward()  # accumulates into the gradient b was given
    _on(ctx, b, c, labels)
    return [
        _host(y.d),
        _host(a.g),
        _host(b.d),
        _host(b.g),
        _host(c.d),
        _host(c.g),
        _host(labels.d),
        _host(labels.g),
        _host(z.d),
    ]


def test_from_numpy_array_takes_another_variables_device_gradient() -> None:
    _same("from_numpy_array(grad=)", _run_from_device_data_and_grad)


def _run_tile_images(ctx: Any) -> list[np.ndarray]:
    """``monitor.tile_images(x.d)`` with ``x`` on the device of ``ctx`` (a device array went
    through ``numpy.asarray`` before 2026-11-28): the host image, of 1 and of 3 channels."""
    from gradhub_compat.nnabla.monitor import tile_images

    rng = _rng(45)
    out = []
    for shape, padsize, padval in (((5, 1, 3, 4), 1, 0.0), ((3, 3, 2, 2), 2, -1.0)):
        x = _var(ctx, rng.uniform(0.0, 1.0, shape).astype(np.float32))
        with nn.context_scope(ctx):
            y = F.relu(x - 0.25)  # (a computed Variable's data)
            y.forward()
        _on(ctx, y)
        out.append(tile_images(y.d, padsize=padsize, padval=padval))
    return out


def test_tile_images_takes_a_variables_device_data() -> None:
    _same("tile_images", _run_tile_images)
