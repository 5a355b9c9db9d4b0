"""mxnet's symbolic layers of convolutional networks: ``mx.sym.Convolution``, ``Pooling``,
``Flatten`` and ``Dropout``: the names of the created variables, shape inference, the JSON text
of a LeNet (``data/lenet-symbol.json``, written by mxnet 1.9.1 running
``data/make_cnn_module_reference.py``), executor outputs and gradients (mxnet 1.9.1's numbers,
``# mxnet 1.9.1``, or numpy formulas), a CNN with batch normalization run by an executor for 3
training steps against mxnet 1.9.1 (``data/cnn_module_reference.npz``), and planned runs equal
bit for bit to the graph built at each call (docs/plans.md).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import gradhub as gh
import gradhub.graph
import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet import symbol as _symbol_module

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def _fresh_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unnamed layers numbered from 0 in each test (as in the fresh process of mxnet's)."""
    monkeypatch.setattr(_symbol_module._names, "counters", {})


def _reference_script() -> ModuleType:
    """data/make_cnn_module_reference.py with ``import mxnet`` resolved to this layer."""
    saved = sys.modules.get("mxnet")
    sys.modules["mxnet"] = mx
    try:
        spec = importlib.util.spec_from_file_location(
            "make_cnn_module_reference", DATA / "make_cnn_module_reference.py"
        )
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        if saved is None:
            del sys.modules["mxnet"]
        else:
            sys.modules["mxnet"] = saved
    return mod


def test_lenet_names_shapes_and_internals_are_mxnets() -> None:
    net = _reference_script().lenet()
    # mxnet 1.9.1
    assert net.list_arguments() == [
        "data",
        "conv1_weight",
        "conv1_bias",
        "bn1_gamma",
        "bn1_beta",
        "convolution0_weight",
        "bn2_gamma",
        "bn2_beta",
        "fc_weight",
        "fc_bias",
        "softmax_label",
    ]
    assert net.list_auxiliary_states() == [
        "bn1_moving_mean",
        "bn1_moving_var",
        "bn2_moving_mean",
        "bn2_moving_var",
    ]
    args, outs, aux = net.infer_shape(data=(2, 1, 28, 28))
    assert args == [
        (2, 1, 28, 28),
        (20, 1, 5, 5),
        (20,),
        (20,),
        (20,),
        (8, 20, 3, 3),
        (8,),
        (8,),
        (10, 8),
        (10,),
        (2,),
    ]
    assert outs == [(2, 10)] and aux == [(20,), (20,), (8,), (8,)]
    internals = net.get_internals().list_outputs()
    assert internals[8:16] == [
        "bn1_output",
        "act1_output",
        "pool1_output",
        "convolution0_weight",
        "convolution0_output",
        "bn2_gamma",
        "bn2_beta",
        "bn2_moving_mean",
    ]
    assert "dropout0_output" in internals and "flatten0_output" in internals


def test_lenet_json_is_mxnets_text_and_loads_back() -> None:
    text = (DATA / "lenet-symbol.json").read_text()
    net = _reference_script().lenet()
    assert net.tojson() == text
    back = mx.sym.load_json(text)
    assert back.list_arguments() == net.list_arguments()
    assert back.list_auxiliary_states() == net.list_auxiliary_states()
    assert back.tojson() == text
    assert back.infer_shape(data=(2, 1, 28, 28)) == net.infer_shape(data=(2, 1, 28, 28))


def test_shape_inference_is_mxnets() -> None:
    x = mx.sym.Variable("x")
    conv = mx.sym.Convolution(
        x, kernel=(3,), num_filter=4, stride=2, dilate=2, pad=1, num_group=2, name="c"
    )
    assert conv.infer_shape(x=(2, 4, 11)) == (
        [(2, 4, 11), (4, 2, 3), (4,)],
        [(2, 4, 5)],
        [],
    )  # mxnet 1.9.1
    c3 = mx.sym.Convolution(x, kernel=(2, 2, 2), num_filter=3, name="c")
    assert c3.infer_shape(x=(1, 2, 4, 5, 6))[:2] == (
        [(1, 2, 4, 5, 6), (3, 2, 2, 2, 2), (3,)],
        [(1, 3, 3, 4, 5)],
    )  # mxnet 1.9.1
    c2 = mx.sym.Convolution(x, kernel=(3, 3), num_filter=4, name="c")
    assert c2.infer_shape_partial(x=(0, 3, 8, 8)) == (
        [(0, 3, 8, 8), (4, 3, 3, 3), (4,)],
        [(0, 4, 6, 6)],
        [],
    )  # mxnet 1.9.1
    assert c2.infer_shape_partial(x=(2, 3, 0, 8))[1] == [(2, 4, 0, 6)]  # mxnet 1.9.1
    with pytest.raises(mx.base.MXNetError, match="Error in operator c"):
        c2.infer_shape(x=(2, 3, 8))
    pool = mx.sym.Pooling
    assert pool(x, kernel=(3,), stride=(2,), pool_type="sum").infer_shape(x=(2, 3, 9))[1] == [
        (2, 3, 4)
    ]  # mxnet 1.9.1
    assert pool(x, kernel=(2, 2), global_pool=True).infer_shape(x=(2, 3, 5, 7))[1] == [
        (2, 3, 1, 1)
    ]  # mxnet 1.9.1
    full = pool(x, kernel=(3, 3), stride=(2, 2), pooling_convention="full")
    assert full.infer_shape(x=(2, 3, 8, 8))[1] == [(2, 3, 4, 4)]  # mxnet 1.9.1 (valid: 3)
    assert mx.sym.Flatten(x).infer_shape(x=(2, 3, 4))[1] == [(2, 12)]
    assert mx.sym.Flatten(x).infer_shape_partial(x=(2, 0, 3))[1] == [()]  # mxnet 1.9.1
    assert mx.sym.Dropout(x).infer_shape(x=(2, 3))[1] == [(2, 3)]


def _conv1d(x: np.ndarray, w: np.ndarray, b: np.ndarray, s: int, d: int, p: int, g: int):
    """float64 grouped 1-D convolution, the definition."""
    n, _, length = x.shape
    f, cg, k = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p, p)))
    out_len = (length + 2 * p - d * (k - 1) - 1) // s + 1
    y = np.zeros((n, f, out_len))
    for o in range(f):
        grp = o // (f // g)
        for t in range(out_len):
            win = xp[:, grp * cg : (grp + 1) * cg, t * s : t * s + d * (k - 1) + 1 : d]
            y[:, o, t] = (win * w[o]).sum(axis=(1, 2)) + b[o]
    return y


def test_grouped_dilated_convolution_equals_mxnet_and_the_definition() -> None:
    rng = np.random.RandomState(0)
    xd = rng.randn(2, 4, 11).astype(np.float32)
    w = rng.randn(4, 2, 3).astype(np.float32)
    b = rng.randn(4).astype(np.float32)
    x = mx.sym.Variable("x")
    conv = mx.sym.Convolution(
        x, kernel=(3,), num_filter=4, stride=2, dilate=2, pad=1, num_group=2, name="c"
    )
    arrays = {"x": xd, "c_weight": w, "c_bias": b}
    ex = conv.bind(
        mx.cpu(),
        {k: mx.nd.array(v) for k, v in arrays.items()},
        args_grad={k: mx.nd.zeros(v.shape) for k, v in arrays.items()},
    )
    out = ex.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(out, _conv1d(xd, w, b, 2, 2, 1, 2), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        out[0, :, 1], [3.9491825, 5.6418114, -2.0010273, 3.2681746], rtol=1e-5
    )  # mxnet 1.9.1
    ex.backward(mx.nd.ones(out.shape))
    np.testing.assert_allclose(
        ex.grad_dict["c_weight"].asnumpy()[1, 0], [2.0259936, 1.25596, 1.293877], rtol=1e-5
    )  # mxnet 1.9.1
    np.testing.assert_allclose(ex.grad_dict["c_bias"].asnumpy(), np.full(4, 10.0))
    # the gradient of x: float64 central differences of sum(y)
    eps = 1e-3
    num = np.zeros(xd.shape)
    for i in np.ndindex(*xd.shape):
        hi, lo = xd.astype(np.float64), xd.astype(np.float64)
        hi[i] += eps
        lo[i] -= eps
        num[i] = (_conv1d(hi, w, b, 2, 2, 1, 2).sum() - _conv1d(lo, w, b, 2, 2, 1, 2).sum()) / (
            2 * eps
        )
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), num, rtol=1e-4, atol=1e-4)


def test_pooling_kinds() -> None:
    x = mx.sym.Variable("x")
    data = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)

    def run(sym: mx.sym.Symbol) -> np.ndarray:
        return sym.bind(mx.cpu(), {"x": mx.nd.array(data)}).forward()[0].asnumpy()

    avg = mx.sym.Pooling(
        x, kernel=(2, 2), stride=(1, 1), pad=(1, 1), pool_type="avg", count_include_pad=False
    )
    np.testing.assert_array_equal(
        run(avg)[0, 0, :2], [[0.0, 0.5, 1.5, 2.5, 3.0], [2.0, 2.5, 3.5, 4.5, 5.0]]
    )  # mxnet 1.9.1
    windows = data[0, 0].reshape(2, 2, 2, 2).transpose(0, 2, 1, 3).reshape(2, 2, 4)
    mx_pool = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max")
    np.testing.assert_array_equal(run(mx_pool)[0, 0], windows.max(-1))
    sum_pool = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="sum")
    np.testing.assert_array_equal(run(sum_pool)[0, 0], windows.sum(-1))
    glob = mx.sym.Pooling(x, kernel=(1, 1), pool_type="avg", global_pool=True)
    np.testing.assert_array_equal(run(glob), [[[[7.5]]]])
    full = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pooling_convention="full")
    np.testing.assert_array_equal(run(full)[0, 0], windows.max(-1))  # no partial window here
    partial = mx.sym.Pooling(x, kernel=(3, 3), stride=(2, 2), pooling_convention="full")
    with pytest.raises(NotImplementedError, match=r"partial windows.*migration-mxnet"):
        run(partial)


def test_flatten_and_dropout() -> None:
    x = mx.sym.Variable("x")
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    ex = mx.sym.Flatten(x, name="f").bind(
        mx.cpu(), {"x": mx.nd.array(data)}, args_grad={"x": mx.nd.zeros((2, 3, 4))}
    )
    np.testing.assert_array_equal(ex.forward(is_train=True)[0].asnumpy(), data.reshape(2, 12))
    ex.backward(mx.nd.array(np.arange(24).reshape(2, 12)))
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), data)
    drop = mx.sym.Dropout(x, p=0.5)
    ex = drop.simple_bind(mx.cpu(), x=(1000,))
    ex.arg_dict["x"][:] = 1
    mx.random.seed(3)
    out = ex.forward(is_train=True)[0].asnumpy()
    assert set(np.unique(out)) == {0.0, 2.0}  # mxnet 1.9.1: kept elements scaled by 1 / (1 - p)
    assert 400 < (out == 0).sum() < 600
    ex.backward(mx.nd.ones((1000,)))
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), out)  # mxnet 1.9.1: the mask
    again = ex.forward(is_train=True)[0].asnumpy()  # a new mask at each training forward
    assert not np.array_equal(again, out)
    np.testing.assert_array_equal(ex.forward(is_train=False)[0].asnumpy(), np.ones(1000))
    always = mx.sym.Dropout(x, p=0.5, mode="always").simple_bind(mx.cpu(), x=(1000,))
    always.arg_dict["x"][:] = 1
    assert set(np.unique(always.forward(is_train=False)[0].asnumpy())) == {0.0, 2.0}
    # the same seed gives the same masks, planned or not
    masks = []
    for planned in (True, False):
        before = gh.plan.set_enabled(planned)
        try:
            ex = drop.simple_bind(mx.cpu(), x=(50,))
            ex.arg_dict["x"][:] = 1
            mx.random.seed(11)
            masks.append([ex.forward(is_train=True)[0].asnumpy().copy() for _ in range(3)])
        finally:
            gh.plan.set_enabled(before)
    np.testing.assert_array_equal(masks[0], masks[1])
    shared = mx.sym.Dropout(x, p=0.5, axes=(1,)).simple_bind(mx.cpu(), x=(50, 4))
    shared.arg_dict["x"][:] = 1
    rows = shared.forward(is_train=True)[0].asnumpy()
    assert (rows == rows[:, :1]).all() and 0 < (rows[:, 0] == 0).sum() < 50  # one draw per row
    with pytest.raises(mx.base.MXNetError, match="Invalid Input: 'sometimes'"):
        mx.sym.Dropout(x, mode="sometimes")


def test_errors_and_unsupported_options() -> None:
    x = mx.sym.Variable("x")
    with pytest.raises(mx.base.MXNetError, match="kernel and num_filter"):
        mx.sym.Convolution(x, num_filter=3)
    with pytest.raises(NotImplementedError, match=r"layout='NHWC'.*migration-mxnet"):
        mx.sym.Convolution(x, kernel=(3, 3), num_filter=3, layout="NHWC")
    with pytest.raises(mx.base.MXNetError, match="stride"):
        mx.sym.Convolution(x, kernel=(3, 3), num_filter=3, stride=(1, 1, 1))
    with pytest.raises(mx.base.MXNetError, match="num_group"):
        mx.sym.Convolution(x, kernel=(3, 3), num_filter=3, num_group=2)
    with pytest.raises(NotImplementedError, match=r"'lp'.*migration-mxnet"):
        mx.sym.Pooling(x, kernel=(2, 2), pool_type="lp")
    with pytest.raises(mx.base.MXNetError, match="Invalid Input: 'median'"):
        mx.sym.Pooling(x, kernel=(2, 2), pool_type="median")
    with pytest.raises(mx.base.MXNetError, match="kernel must be given"):
        mx.sym.Pooling(x)
    conv = mx.sym.Convolution(x, kernel=(3, 3), num_filter=2, name="c")
    with pytest.raises(mx.base.MXNetError, match="exceeds the padded input"):
        conv.infer_shape(x=(1, 1, 2, 2))
    ex = conv.simple_bind(mx.cpu(), x=(1, 1, 4, 4))
    with pytest.raises(ValueError, match="Shape not match"):
        ex.forward(x=np.zeros((1, 2, 4, 4), np.float32))


def test_cnn_executor_equals_mxnet_for_three_training_steps() -> None:
    ref = np.load(DATA / "cnn_module_reference.npz", allow_pickle=False)
    out = _reference_script().run_executor()
    assert len(out) == 3 * (1 + 10 + 4) + 1
    for key, got in out.items():
        want = ref[f"exec_{key}"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=key)
    # the steps moved the statistics well beyond the tolerance
    assert np.abs(ref["exec_s2_aux_bn2_moving_var"] - ref["init_bn2_moving_var"]).max() > 0.1


def _cnn_steps(planned: bool) -> list[np.ndarray]:
    script = _reference_script()
    before = gh.plan.set_enabled(planned)
    try:
        ex = script.network().simple_bind(mx.cpu(), data=(6, 2, 10, 10), softmax_label=(6,))
        args, auxs = script.initial_params()
        ex.copy_params_from(args, auxs)
        got: list[np.ndarray] = []
        for x, y in script.exec_batches() * 2:
            got.append(ex.forward(is_train=True, data=x, softmax_label=y)[0].asnumpy().copy())
            ex.backward()
            got += [g.asnumpy().copy() for g in ex.grad_arrays if g is not None]
            got += [a.asnumpy().copy() for a in ex.aux_arrays]
            got.append(ex.forward(is_train=False)[0].asnumpy().copy())
        if planned:
            assert ex._plan is not None
        return got
    finally:
        gh.plan.set_enabled(before)


def test_cnn_planned_runs_build_no_graph() -> None:
    script = _reference_script()
    net = mx.sym.Dropout(script.network(), p=0.2)
    ex = net.simple_bind(mx.cpu(), data=(6, 2, 10, 10), softmax_label=(6,))
    args, auxs = script.initial_params()
    ex.copy_params_from(args, auxs)
    made: list[int] = []
    counts: list[int] = []
    init = gradhub.graph.Node.__init__

    def counting(self: object, *a: object, **k: object) -> None:
        made.append(1)
        init(self, *a, **k)

    for x, y in script.exec_batches() * 2:
        made.clear()
        gradhub.graph.Node.__init__ = counting  # type: ignore[method-assign]
        try:
            ex.forward(is_train=True, data=x, softmax_label=y)
            ex.backward()
            ex.forward(is_train=False)
        finally:
            gradhub.graph.Node.__init__ = init  # type: ignore[method-assign]
        counts.append(len(made))
    # the first step built both graphs; the later ones ran their plans: no graph node made
    assert counts[0] > 0 and counts[1:] == [0] * 5


def test_cnn_planned_equals_the_graph_built_each_time() -> None:
    planned, built = _cnn_steps(True), _cnn_steps(False)
    assert len(planned) == len(built)
    for a, b in zip(planned, built):
        np.testing.assert_array_equal(a, b)
