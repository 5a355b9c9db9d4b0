"""The mxnet front-end on CUDA (gradhub-cuda): ``mx.nd`` arrays on ``mx.gpu()``, a Gluon
HybridSequential (Dense, Conv2D, BatchNorm, LayerNorm, GroupNorm, InstanceNorm) recorded with
``autograd`` and trained by ``gluon.Trainer`` ('sgd' with wd, 'adam'), the legacy operators
(LRN, UpSampling, Crop, SoftmaxOutput, LinearRegressionOutput, SVMOutput, GridGenerator,
BilinearSampler, SpatialTransformer, ROIPooling, Correlation, SliceChannel, SwapAxis), the fused
update operators, ``mx.nd.linalg``, a few array operators and a Symbol graph bound on the GPU.
Each test runs the same code with the same inputs (a seeded numpy generator) with ``mx.cpu()``
and with ``mx.gpu(0)`` and compares the host copies (``asnumpy()``) of the outputs, gradients and
updated parameters: float64 within 1e-10, float32 within 1e-5 of the largest magnitude (1e-6
for the update operators), integers exactly. Every test skips, with one reason, where no usable
CUDA device exists; on a GPU machine run ``python -m pytest tests/compat/mxnet/test_cuda.py``
(seconds).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
from cuda_helpers import agree_within, gpu
from gradhub_compat.mxnet import autograd, gluon
from gradhub_compat.mxnet.gluon import nn

pytestmark = gpu

CPU = mx.cpu()
GPU = mx.gpu(0)
RTOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-5}
RTOL_UPDATES = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-6}


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _nd(ctx: mx.Context, a: Any, dtype: Any = None) -> mx.nd.NDArray:
    """``a`` (a numpy array) as an NDArray on ``ctx`` (its own dtype unless ``dtype``)."""
    a = np.asarray(a)
    return mx.nd.array(a, ctx=ctx, dtype=a.dtype if dtype is None else dtype)


def _host(a: mx.nd.NDArray) -> np.ndarray:
    """A host (numpy) copy of ``a``."""
    return np.asarray(a.asnumpy())


def _on(ctx: mx.Context, arrays: Sequence[mx.nd.NDArray]) -> None:
    """Each array lives on ``ctx`` (the GPU run computed on the GPU)."""
    for a in arrays:
        assert a.context == ctx, (a.context, ctx)


def _same(name: str, run: Callable[[mx.Context], list[np.ndarray]], rtol: Any = None) -> None:
    """``run(ctx)`` gives the same host arrays on the GPU as on the CPU."""
    want = run(CPU)
    got = run(GPU)
    assert all(type(a) is np.ndarray for a in got), name
    agree_within(got, want, name, RTOL if rtol is None else rtol)


def _head(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    n = int(np.prod(shape))
    return np.cos(np.arange(n, dtype=np.float64)).reshape(shape).astype(dtype)


# -------------------------------------------------------------------- Gluon network and trainer


def _net() -> nn.HybridSequential:
    """Conv2D -> BatchNorm -> LayerNorm -> GroupNorm -> InstanceNorm -> Dense, every shape given
    (no deferred initialization), a tanh after each layer so that no normalization cancels the
    one before it (each parameter has a gradient well above rounding noise)."""
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, kernel_size=3, padding=1, in_channels=2, activation="tanh"))
        net.add(nn.BatchNorm(in_channels=4), nn.Activation("tanh"))
        net.add(nn.LayerNorm(in_channels=5), nn.Activation("tanh"))
        net.add(nn.GroupNorm(num_groups=2), nn.Activation("tanh"))
        net.add(nn.InstanceNorm(in_channels=4), nn.Activation("tanh"))
        net.add(nn.Dense(3, in_units=4 * 5 * 5))
    return net


def _setup(ctx: mx.Context, seed: int) -> tuple[nn.HybridSequential, list[tuple[str, Any]]]:
    """The network on ``ctx`` in float64 with seeded parameter values (running statistics
    included), and its parameters sorted by name."""
    net = _net()
    net.initialize(ctx=ctx)
    net.cast("float64")
    rng = _rng(seed)
    params = sorted(net.collect_params().items(), key=lambda kv: kv[0])
    for name, p in params:
        shape = p.shape
        if name.endswith("running_var"):
            v = rng.uniform(0.5, 1.5, shape)
        elif name.endswith("gamma"):
            v = 1.0 + 0.1 * rng.standard_normal(shape)
        else:
            v = 0.3 * rng.standard_normal(shape)
        p.set_data(_nd(ctx, v))
    return net, params


def _run_gluon_forward_backward(ctx: mx.Context) -> list[np.ndarray]:
    net, params = _setup(ctx, 3)
    rng = _rng(4)
    x = _nd(ctx, rng.standard_normal((2, 2, 5, 5)))
    x.attach_grad()
    with autograd.record():
        y = net(x)
        loss = (y * _nd(ctx, _head((2, 3), np.float64))).sum()
    loss.backward()
    _on(ctx, [y, x.grad])
    out = [_host(y), _host(loss), _host(x.grad)]
    for _, p in params:
        _on(ctx, [p.data()])
        out.append(_host(p.data()))
        if p.grad_req != "null":
            out.append(_host(p.grad()))
    return out


def test_gluon_hybrid_sequential_forward_and_gradients_match_cpu() -> None:
    _same("gluon forward/backward", _run_gluon_forward_backward)


def _run_trainer(ctx: mx.Context, optimizer: str, options: dict[str, Any]) -> list[np.ndarray]:
    net, params = _setup(ctx, 5)
    trainer = gluon.Trainer(net.collect_params(), optimizer, options)
    rng = _rng(6)
    out = []
    for _ in range(3):
        x = _nd(ctx, rng.standard_normal((2, 2, 5, 5)))
        t = _nd(ctx, rng.standard_normal((2, 3)))
        with autograd.record():
            loss = ((net(x) - t) ** 2).sum()
        loss.backward()
        trainer.step(2)
        out.append(_host(loss))
    for _, p in params:
        _on(ctx, [p.data()])
        out.append(_host(p.data()))
    return out


def test_gluon_trainer_sgd_with_weight_decay_three_steps_match_cpu() -> None:
    _same(
        "trainer sgd",
        lambda ctx: _run_trainer(ctx, "sgd", {"learning_rate": 0.05, "momentum": 0.9, "wd": 0.01}),
    )


def test_gluon_trainer_adam_three_steps_match_cpu() -> None:
    _same("trainer adam", lambda ctx: _run_trainer(ctx, "adam", {"learning_rate": 0.01}))


# -------------------------------------------------------------------- legacy nd operators


def _run_op(
    ctx: mx.Context,
    op: str,
    inputs: Sequence[np.ndarray],
    kwargs: dict[str, Any],
    grads: Sequence[int],
) -> list[np.ndarray]:
    """``mx.nd.<op>(*inputs, **kwargs)`` recorded on ``ctx``, then backward with a cosine head
    gradient: the outputs and the gradients of the inputs ``grads``."""
    arrays = [_nd(ctx, v) for v in inputs]
    for i in grads:
        arrays[i].attach_grad()
    with autograd.record(train_mode=True):
        res = getattr(mx.nd, op)(*arrays, **kwargs)
    outs = list(res) if isinstance(res, (list, tuple)) else [res]
    if grads:
        heads = [_nd(ctx, _head(o.shape, o.dtype)) for o in outs]
        autograd.backward(outs, heads)
    _on(ctx, outs)
    got = [_host(o) for o in outs]
    for i in grads:
        _on(ctx, [arrays[i].grad])
        got.append(_host(arrays[i].grad))
    return got


def _ops_same(cases: list[tuple[str, list[np.ndarray], dict[str, Any], list[int]]]) -> None:
    for op, inputs, kwargs, grads in cases:
        _same(f"{op} {kwargs}", lambda ctx: _run_op(ctx, op, inputs, kwargs, grads))  # noqa: B023


def test_lrn_upsampling_crop_match_cpu() -> None:
    r = _rng(10)
    x = r.standard_normal((2, 6, 3, 4))
    _ops_same(
        [
            ("LRN", [x], {"nsize": 3, "alpha": 0.1, "beta": 0.75, "knorm": 2.0}, [0]),
            ("UpSampling", [x], {"scale": 2, "sample_type": "nearest"}, [0]),
            (
                "UpSampling",
                [r.standard_normal((1, 2, 2, 2)), r.standard_normal((1, 1, 4, 4))],
                {"scale": 2, "sample_type": "nearest", "num_args": 2},
                [0, 1],
            ),
            ("Crop", [x], {"num_args": 1, "h_w": (2, 3), "offset": (1, 1)}, [0]),
            ("Crop", [x, np.zeros((1, 1, 2, 2))], {"num_args": 2, "center_crop": True}, [0]),
        ]
    )


def test_loss_layers_forward_and_backward_match_cpu() -> None:
    """SoftmaxOutput (plain, multi_output with ignore_label), LinearRegressionOutput and
    SVMOutput: outputs and the gradients they define."""
    r = _rng(11)
    _ops_same(
        [
            ("SoftmaxOutput", [r.standard_normal((4, 3)), np.array([0.0, 2.0, 1.0, 2.0])], {}, [0]),
            (
                "SoftmaxOutput",
                [r.standard_normal((2, 3, 4)), np.array([[0.0, 1, 2, 1], [2, 2, 0, 1]])],
                {"multi_output": True, "use_ignore": True, "ignore_label": 1, "grad_scale": 2.0},
                [0],
            ),
            (
                "LinearRegressionOutput",
                [r.standard_normal((4, 3)), r.standard_normal((4, 3))],
                {"grad_scale": 2.0},
                [0],
            ),
            ("SVMOutput", [r.standard_normal((4, 3)), np.array([0.0, 2.0, 1.0, 1.0])], {}, [0]),
            (
                "SVMOutput",
                [r.standard_normal((4, 3)), np.array([1.0, 0.0, 2.0, 0.0])],
                {"use_linear": True, "margin": 0.5, "regularization_coefficient": 2.0},
                [0],
            ),
        ]
    )


def test_grid_generator_bilinear_sampler_spatial_transformer_match_cpu() -> None:
    r = _rng(12)
    affine = np.array([[0.9, 0.1, 0.05, -0.1, 0.8, 0.1]]) + 0.05 * r.standard_normal((2, 6))
    _ops_same(
        [
            (
                "GridGenerator",
                [affine],
                {"transform_type": "affine", "target_shape": (3, 4)},
                [0],
            ),
            (
                "GridGenerator",
                [0.3 * r.standard_normal((1, 2, 3, 4))],
                {"transform_type": "warp"},
                [0],
            ),
            (
                "BilinearSampler",
                [r.standard_normal((2, 2, 4, 5)), r.uniform(-0.9, 0.9, (2, 2, 3, 3))],
                {},
                [0, 1],
            ),
            (
                "SpatialTransformer",
                [r.standard_normal((2, 2, 4, 5)), affine],
                {"target_shape": (3, 3), "transform_type": "affine", "sampler_type": "bilinear"},
                [0, 1],
            ),
        ]
    )


def test_roi_pooling_and_correlation_match_cpu() -> None:
    r = _rng(13)
    rois = np.array([[0.0, 0, 0, 3, 4], [1.0, 1, 2, 5, 5], [0.0, 2, 1, 4, 3]])
    _ops_same(
        [
            (
                "ROIPooling",
                [r.standard_normal((2, 3, 6, 6)), rois],
                {"pooled_size": (2, 2), "spatial_scale": 1.0},
                [0],
            ),
            (
                "ROIPooling",
                [r.standard_normal((2, 3, 6, 6)), rois * np.array([1.0, 2, 2, 2, 2])],
                {"pooled_size": (3, 2), "spatial_scale": 0.5},
                [0],
            ),
            (
                "Correlation",
                [r.standard_normal((1, 2, 5, 5)), r.standard_normal((1, 2, 5, 5))],
                {"kernel_size": 1, "max_displacement": 1, "pad_size": 1},
                [0, 1],
            ),
            (
                "Correlation",
                [r.standard_normal((1, 2, 6, 6)), r.standard_normal((1, 2, 6, 6))],
                {
                    "kernel_size": 3,
                    "max_displacement": 2,
                    "stride1": 1,
                    "stride2": 2,
                    "pad_size": 2,
                    "is_multiply": False,
                },
                [0, 1],
            ),
        ]
    )


def test_slice_channel_and_swap_axis_match_cpu() -> None:
    r = _rng(14)
    x = r.standard_normal((2, 3, 4))
    _ops_same(
        [
            ("SliceChannel", [x], {"num_outputs": 2, "axis": 2}, [0]),
            ("SliceChannel", [x], {"num_outputs": 3, "axis": 1, "squeeze_axis": True}, [0]),
            ("SwapAxis", [x], {"dim1": 0, "dim2": 2}, [0]),
        ]
    )


# -------------------------------------------------------------------- fused update operators


def _run_updates(ctx: mx.Context) -> list[np.ndarray]:
    r = _rng(20)

    def f32(*shape: int, scale: float = 1.0) -> np.ndarray:
        return (scale * r.standard_normal(shape)).astype(np.float32)

    w, g = f32(3, 4), f32(3, 4)
    out = []
    # sgd_update: a new array, and out= the weight
    res = mx.nd.sgd_update(_nd(ctx, w), _nd(ctx, g), lr=0.1, wd=0.01, rescale_grad=0.5)
    out.append(res)
    wv = _nd(ctx, w)
    mx.nd.sgd_update(wv, _nd(ctx, g), lr=0.1, clip_gradient=0.5, out=wv)
    out.append(wv)
    # sgd_mom_update: weight and momentum
    wv, mom = _nd(ctx, w), _nd(ctx, f32(3, 4, scale=0.1))
    mx.nd.sgd_mom_update(wv, _nd(ctx, g), mom, lr=0.1, momentum=0.9, wd=0.01, out=wv)
    out += [wv, mom]
    # adam_update: weight, mean, var
    wv, mean, var = _nd(ctx, w), _nd(ctx, f32(3, 4, scale=0.1)), _nd(ctx, np.abs(f32(3, 4)))
    mx.nd.adam_update(wv, _nd(ctx, g), mean, var, lr=0.01, wd=0.001, out=wv)
    out += [wv, mean, var]
    # mp_sgd_update: float16 weight, float32 master copy
    w16, w32 = _nd(ctx, w.astype(np.float16)), _nd(ctx, w)
    mx.nd.mp_sgd_update(w16, _nd(ctx, g.astype(np.float16)), w32, lr=0.1, wd=0.01, out=w16)
    out += [w16, w32]
    # multi_sgd_update: two weights
    w2, g2 = f32(5), f32(5)
    res = mx.nd.multi_sgd_update(
        _nd(ctx, w), _nd(ctx, g), _nd(ctx, w2), _nd(ctx, g2),
        lrs=(0.1, 0.2), wds=(0.01, 0.0), num_weights=2,
    )  # fmt: skip
    out += list(res)
    # rmsprop_update: weight and n
    wv, n = _nd(ctx, w), _nd(ctx, np.abs(f32(3, 4)))
    mx.nd.rmsprop_update(wv, _nd(ctx, g), n, lr=0.01, gamma1=0.9, wd=0.01, out=wv)
    out += [wv, n]
    # ftrl_update: weight, z and n
    wv, z, n = _nd(ctx, w), _nd(ctx, f32(3, 4)), _nd(ctx, np.abs(f32(3, 4)))
    mx.nd.ftrl_update(wv, _nd(ctx, g), z, n, lr=0.1, lamda1=0.01, beta=1.0, wd=0.01, out=wv)
    out += [wv, z, n]
    _on(ctx, out)
    return [_host(a) for a in out]


def test_fused_update_operators_match_cpu() -> None:
    _same("fused updates", _run_updates, RTOL_UPDATES)


# -------------------------------------------------------------------- linalg


def _run_linalg(ctx: mx.Context) -> list[np.ndarray]:
    r = _rng(30)
    a, b = r.standard_normal((2, 3, 4)), r.standard_normal((2, 4, 3))
    m = r.standard_normal((2, 3, 3))
    spd = m @ np.swapaxes(m, 1, 2) + 3.0 * np.eye(3)
    sq = r.standard_normal((2, 3, 3)) + 2.0 * np.eye(3)
    rhs = r.standard_normal((2, 3, 2))
    arrays = {k: _nd(ctx, v) for k, v in {"a": a, "b": b, "spd": spd, "sq": sq, "rhs": rhs}.items()}
    for v in arrays.values():
        v.attach_grad()
    la = mx.nd.linalg
    with autograd.record():
        gemm2 = la.gemm2(arrays["a"], arrays["b"], alpha=0.5)
        gemm2_t = la.gemm2(arrays["a"], arrays["b"], transpose_a=True, transpose_b=True)
        chol = la.potrf(arrays["spd"])
        trsm = la.trsm(chol, arrays["rhs"], alpha=2.0)
        det = la.det(arrays["sq"])
        sign, logabs = la.slogdet(arrays["sq"])
        inv = la.inverse(arrays["sq"])
        outs = [gemm2, gemm2_t, chol, trsm, det, sign, logabs, inv]
        total = sum((o * _nd(ctx, _head(o.shape, np.float64))).sum() for o in outs)
    total.backward()
    _on(ctx, outs)
    return [_host(o) for o in outs] + [_host(v.grad) for v in arrays.values()]


def test_linalg_gemm2_potrf_trsm_det_slogdet_inverse_match_cpu() -> None:
    _same("linalg", _run_linalg)


# -------------------------------------------------------------------- array operators


def _run_array_ops(ctx: mx.Context) -> list[np.ndarray]:
    r = _rng(40)
    x = _nd(ctx, r.standard_normal((3, 4)))
    x.attach_grad()
    vals = _nd(ctx, r.standard_normal((3,)))
    vals.attach_grad()
    with autograd.record():
        outs = [
            mx.nd.cumsum(x, axis=1),
            mx.nd.cumsum(x),
            mx.nd.diag(x, k=1),
            mx.nd.gather_nd(x, _nd(ctx, np.array([[0, 2, 1], [3, 0, 3]]))),
            mx.nd.scatter_nd(vals, _nd(ctx, np.array([[0, 2, 1], [3, 0, 2]])), shape=(3, 4)),
            *mx.nd.moments(x, axes=1, keepdims=True),
            mx.nd.sort(x, axis=1, is_ascend=False),
            mx.nd.topk(x, axis=1, k=2, ret_typ="value"),
        ]
        total = sum((o * _nd(ctx, _head(o.shape, np.float64))).sum() for o in outs)
    total.backward()
    ints = [
        mx.nd.argsort(x, axis=1),
        mx.nd.argsort(x, axis=0, is_ascend=False, dtype="int32"),
        mx.nd.topk(x, axis=1, k=2, ret_typ="indices", dtype="int64"),
        mx.nd.topk(x, axis=0, k=2, ret_typ="mask"),
        mx.nd.cumsum(_nd(ctx, np.arange(12).reshape(3, 4), dtype="int32"), axis=0),
    ]
    _on(ctx, outs + ints)
    return [_host(o) for o in outs + ints] + [_host(x.grad), _host(vals.grad)]


def test_cumsum_diag_gather_scatter_moments_topk_sort_argsort_match_cpu() -> None:
    _same("array ops", _run_array_ops)


# -------------------------------------------------------------------- Symbol graph


def _symbol() -> mx.sym.Symbol:
    data, label = mx.sym.Variable("data"), mx.sym.Variable("label")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=5, name="fc1"), act_type="tanh")
    out = mx.sym.FullyConnected(h, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(out, label, name="softmax")


def _symbol_values() -> dict[str, np.ndarray]:
    r = _rng(50)
    return {
        "data": r.standard_normal((4, 6)).astype(np.float32),
        "fc1_weight": (0.5 * r.standard_normal((5, 6))).astype(np.float32),
        "fc1_bias": (0.1 * r.standard_normal(5)).astype(np.float32),
        "fc2_weight": (0.5 * r.standard_normal((3, 5))).astype(np.float32),
        "fc2_bias": (0.1 * r.standard_normal(3)).astype(np.float32),
        "label": np.array([0.0, 2.0, 1.0, 2.0], np.float32),
    }


def _run_symbol_bind(ctx: mx.Context) -> list[np.ndarray]:
    sym, values = _symbol(), _symbol_values()
    args = {k: _nd(ctx, v) for k, v in values.items()}
    grads = {k: mx.nd.zeros(v.shape, ctx=ctx) for k, v in values.items() if k != "label"}
    ex = sym.bind(ctx, args, args_grad=grads)
    outs = ex.forward(is_train=True)
    ex.backward()
    _on(ctx, [*outs, *grads.values()])
    return [_host(o) for o in outs] + [_host(grads[k]) for k in sorted(grads)]


def _run_symbol_simple_bind(ctx: mx.Context) -> list[np.ndarray]:
    sym, values = _symbol(), _symbol_values()
    ex = sym.simple_bind(ctx, data=(4, 6), label=(4,))
    for name, arr in ex.arg_dict.items():
        if name not in ("data", "label"):
            arr[:] = values[name]
    res = []
    for step in range(2):
        outs = ex.forward(is_train=True, data=values["data"] * (step + 1), label=values["label"])
        ex.backward()
        grads = [g for g in ex.grad_arrays if g is not None]
        _on(ctx, [*outs, *grads])
        res += [_host(o) for o in outs] + [_host(g) for g in grads]
    return res


def test_symbol_bind_forward_backward_match_cpu() -> None:
    _same("symbol bind", _run_symbol_bind)


def test_symbol_simple_bind_forward_backward_match_cpu() -> None:
    _same("symbol simple_bind", _run_symbol_simple_bind)


# -------------------------------------------------------------------- arrays and contexts


def _run_nd_basics(ctx: mx.Context) -> list[np.ndarray]:
    r = _rng(60)
    a = _nd(ctx, r.standard_normal((3, 4)))
    b = mx.nd.array(r.standard_normal((4, 2)), ctx=CPU, dtype="float64").as_in_context(ctx)
    c = a.copyto(ctx)
    a.attach_grad()
    with autograd.record():
        y = mx.nd.dot(mx.nd.tanh(a) * c, b) + mx.nd.sum(a, axis=0, keepdims=True)[:, :2]
    y.backward(_nd(ctx, _head(y.shape, np.float64)))
    back = y.as_in_context(CPU)
    _on(ctx, [a, b, c, y, a.grad])
    assert back.context == CPU
    return [_host(y), _host(a.grad), _host(back), _host(c)]


def test_nd_arrays_on_gpu_context_as_in_context_and_copyto_match_cpu() -> None:
    _same("nd basics", _run_nd_basics)
