"""mxnet's symbolic tensor layers and regression outputs: ``mx.sym.Reshape``/``reshape``,
``Concat``/``concat``, ``Embedding``, ``LeakyReLU``, ``transpose``, ``expand_dims``, ``clip``,
``log_softmax``, ``LinearRegressionOutput``, ``LogisticRegressionOutput`` and
``MAERegressionOutput``: names, shape inference, the JSON text of a symbol using them all
(``data/tensor-layers-symbol.json``, written by mxnet 1.9.1 running
``data/make_cnn_module_reference.py``), and outputs and gradients against mxnet 1.9.1's numbers
(``# mxnet 1.9.1``) or numpy formulas; planned runs equal the graph built at each call.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import gradhub as gh
import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet import symbol as _symbol_module

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def _fresh_names(monkeypatch: pytest.MonkeyPatch) -> None:
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


def _run(
    sym: mx.sym.Symbol,
    args: dict[str, np.ndarray],
    head: np.ndarray | None = None,
    nograd: tuple[str, ...] = (),
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    ex = sym.bind(
        mx.cpu(),
        {k: mx.nd.array(v) for k, v in args.items()},
        args_grad={k: mx.nd.zeros(np.shape(v)) for k, v in args.items() if k not in nograd},
    )
    out = ex.forward(is_train=True)[0].asnumpy()
    ex.backward(None if head is None else mx.nd.array(head))
    return out, {k: g.asnumpy() for k, g in ex.grad_dict.items() if g is not None}


def test_names_shapes_and_json_are_mxnets() -> None:
    net = _reference_script().tensor_layers()
    text = (DATA / "tensor-layers-symbol.json").read_text()
    assert net.tojson() == text
    # mxnet 1.9.1
    assert net.list_arguments() == [
        "data",
        "emb_weight",
        "pr_gamma",
        "fc_weight",
        "fc_bias",
        "lin_label",
        "logi_label",
        "mae_label",
    ]
    assert net.list_outputs() == ["lin_output", "logi_output", "mae_output"]
    assert net.infer_shape(data=(2, 3)) == (
        [(2, 3), (10, 4), (24,), (3, 24), (3,), (2, 3), (2, 3), (6,)],
        [(2, 3), (2, 3), (6,)],
        [],
    )
    assert net.infer_shape_partial(data=(0, 3)) == (
        [(0, 3), (10, 4), (), (), (), (), (), ()],
        [(), (), ()],
        [],
    )
    back = mx.sym.load_json(text)
    assert back.tojson() == text
    assert back.infer_shape(data=(2, 3)) == net.infer_shape(data=(2, 3))
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    assert mx.sym.concat(x, y, dim=1).infer_shape_partial(x=(2, 3), y=(2, 0))[1] == [(2, 0)]
    assert mx.sym.concat(x, y, dim=0).infer_shape(x=(2, 3), y=(4, 3))[1] == [(6, 3)]
    assert mx.sym.Reshape(x, shape=(-1, 0), reverse=True).infer_shape(x=(2, 3, 4))[1] == [(6, 4)]
    assert mx.sym.reshape(x, shape=(-3, -2)).infer_shape(x=(2, 3, 4))[1] == [(6, 4)]
    assert mx.sym.transpose(x).infer_shape(x=(2, 3, 4))[1] == [(4, 3, 2)]
    assert mx.sym.expand_dims(x, axis=-1).infer_shape(x=(2, 3))[1] == [(2, 3, 1)]
    assert mx.sym.LinearRegressionOutput(x, name="l").infer_shape(x=(4, 1))[0] == [(4, 1), (4,)]
    with pytest.raises(mx.base.MXNetError, match="Error in operator"):
        mx.sym.concat(x, y).infer_shape(x=(2, 3), y=(3, 3))
    with pytest.raises(mx.base.MXNetError, match="Error in operator"):
        mx.sym.Reshape(x, shape=(5, -1)).infer_shape(x=(2, 3))


@pytest.mark.parametrize(
    ("op", "out0", "grad0"),
    [
        # mxnet 1.9.1
        (
            "LinearRegressionOutput",
            [1.7640524, 0.4001572, 0.978738],
            [0.6686765, 0.1856548, 0.3565832],
        ),
        (
            "LogisticRegressionOutput",
            [0.8537165, 0.5987254, 0.7268578],
            [0.0617859, 0.3180336, 0.188663],
        ),
        ("MAERegressionOutput", [1.7640524, 0.4001572, 0.978738], [2 / 3, 2 / 3, 2 / 3]),
    ],
)
def test_regression_outputs_equal_mxnet(op: str, out0: list[float], grad0: list[float]) -> None:
    rng = np.random.RandomState(0)
    d = rng.randn(4, 3).astype(np.float32)
    label = rng.randn(4, 3).astype(np.float32)
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    sym = getattr(mx.sym, op)(x, y, grad_scale=2.0, name="r")
    # the head gradient is ignored (a loss layer)
    out, g = _run(sym, {"x": d, "y": label}, head=np.full((4, 3), 7.0))
    np.testing.assert_allclose(out[0], out0, rtol=1e-6)
    np.testing.assert_allclose(g["x"][0], grad0, rtol=1e-5)
    np.testing.assert_array_equal(g["y"], np.zeros((4, 3)))  # mxnet 1.9.1
    # the numpy formula: grad_scale / (label.size / batch) * (out - label)
    if op != "MAERegressionOutput":
        np.testing.assert_allclose(g["x"], 2.0 / 3 * (out - label), rtol=1e-5, atol=1e-7)
    _, g = _run(mx.sym.LinearRegressionOutput(x, y, name="r"), {"x": d[:, :1], "y": label[:, 0]})
    np.testing.assert_allclose(
        g["x"].ravel(), [1.0030147, 1.9072188, 0.6370207, -0.2430201], rtol=1e-6
    )  # mxnet 1.9.1


def test_leaky_relu_kinds_equal_mxnet() -> None:
    rng = np.random.RandomState(0)
    rng.randn(8, 3)
    a = rng.randn(2, 3, 4).astype(np.float32)
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    gamma = np.array([0.1, 0.2, 0.3], np.float32)
    out, g = _run(
        mx.sym.LeakyReLU(x, y, act_type="prelu", name="p"), {"x": a, "y": gamma}, np.ones_like(a)
    )
    np.testing.assert_allclose(out[0, :, 0], [2.2697546, 1.5327792, -0.2663357], rtol=1e-6)
    np.testing.assert_allclose(g["y"], [-2.3311791, -4.174841, -5.417016], rtol=1e-6)
    cases = {  # mxnet 1.9.1: out[0, 0], grad[0, 0]
        "leaky": ([2.2697546, -0.2908731, 0.0457585, -0.0374368], [1.0, 0.2, 1.0, 0.2]),
        "elu": (
            [2.2697546, -0.1532903, 0.0457585, -0.0341418],
            [1.0, 0.0467097, 1.0, 0.1658582],
        ),
        "gelu": (
            [2.2434, -0.106056, 0.0237143, -0.0796951],
            [1.0572846, -0.128579, 0.5364847, 0.3523795],
        ),
        # mxnet 1.9.1's values; its gradient for x <= 0 is lambda * (y + alpha), not the
        # derivative lambda * alpha * e^x given here (docs/migration-mxnet.md)
        "selu": ([2.3848336, -1.3474979, 0.0480785, -0.3001229], None),
    }
    for kind, (want_out, want_grad) in cases.items():
        out, g = _run(mx.sym.LeakyReLU(x, act_type=kind, slope=0.2), {"x": a}, np.ones_like(a))
        np.testing.assert_allclose(out[0, 0], want_out, rtol=2e-6, atol=1e-7, err_msg=kind)
        if want_grad is not None:
            np.testing.assert_allclose(g["x"][0, 0], want_grad, rtol=2e-6, err_msg=kind)
    xs = a.astype(np.float64)
    _, g = _run(mx.sym.LeakyReLU(x, act_type="selu"), {"x": a}, np.ones_like(a))
    lam, alpha = 1.0507009873554805, 1.6732632423543772
    want = np.where(xs > 0, lam, lam * alpha * np.exp(xs))
    np.testing.assert_allclose(g["x"], want, rtol=1e-5)
    with pytest.raises(NotImplementedError, match=r"rrelu.*migration-mxnet"):
        mx.sym.LeakyReLU(x, act_type="rrelu")


def test_embedding_clip_log_softmax_concat_transpose_equal_mxnet() -> None:
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    rng = np.random.RandomState(0)
    rng.randn(8, 3)
    rng.randn(2, 3, 4)
    idx = np.array([[0, 2.7], [4, 9], [-1, 1]], np.float32)
    w = rng.randn(5, 2).astype(np.float32)
    emb = mx.sym.Embedding(x, y, input_dim=5, output_dim=2)
    out, g = _run(emb, {"x": idx, "y": w}, np.ones((3, 2, 2)), nograd=("x",))
    np.testing.assert_array_equal(out[1], w[[4, 4]])  # mxnet 1.9.1: 9 clipped to 4
    np.testing.assert_array_equal(out[2], w[[0, 1]])  # -1 clipped to 0
    np.testing.assert_array_equal(g["y"][:, 0], [2.0, 1.0, 1.0, 0.0, 2.0])  # mxnet 1.9.1
    with pytest.raises(mx.base.MXNetError, match="doesn't support calculate data gradient"):
        _run(emb, {"x": idx, "y": w}, np.ones((3, 2, 2)))
    c = np.array([-2, 0, 0.5, 1, 3], np.float32)
    out, g = _run(mx.sym.clip(x, a_min=0, a_max=1), {"x": c}, np.ones(5))
    np.testing.assert_array_equal(out, [0, 0, 0.5, 1, 1])  # mxnet 1.9.1
    np.testing.assert_array_equal(g["x"], [0, 1, 1, 1, 0])  # mxnet 1.9.1: the bounds pass
    d = np.random.RandomState(0).randn(4, 3).astype(np.float32)
    head = np.arange(12).reshape(4, 3)
    out, g = _run(mx.sym.log_softmax(x, axis=0, temperature=2.0), {"x": d}, head)
    np.testing.assert_allclose(
        out[:, 0], [-1.2363944, -0.9979741, -1.6433764, -1.9131215], rtol=1e-6
    )  # mxnet 1.9.1
    np.testing.assert_allclose(
        g["x"][:, 0], [-2.6138656, -1.8176293, 1.2600641, 3.17143], rtol=1e-6
    )  # mxnet 1.9.1
    label = np.random.RandomState(1).randn(4, 3).astype(np.float32)
    out, g = _run(mx.sym.Concat(x, y, dim=0), {"x": d, "y": label}, np.arange(24).reshape(8, 3))
    np.testing.assert_array_equal(out, np.concatenate([d, label]))
    np.testing.assert_array_equal(g["y"], np.arange(12, 24).reshape(4, 3))  # mxnet 1.9.1
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    sym = mx.sym.transpose(mx.sym.expand_dims(x, axis=-1), axes=(3, 1, 0, 2))
    head = np.arange(24).reshape(1, 3, 2, 4)
    out, g = _run(sym, {"x": a}, head)
    np.testing.assert_array_equal(out, a[..., None].transpose(3, 1, 0, 2))
    np.testing.assert_array_equal(g["x"][1, 2], [20.0, 21.0, 22.0, 23.0])  # mxnet 1.9.1
    out, g = _run(mx.sym.Reshape(x, shape=(-1, 0), reverse=True), {"x": a}, np.ones((6, 4)))
    np.testing.assert_array_equal(out, a.reshape(6, 4))


def test_errors() -> None:
    x = mx.sym.Variable("x")
    with pytest.raises(mx.base.MXNetError, match="shape is not presented"):
        mx.sym.Reshape(x)
    with pytest.raises(NotImplementedError, match="target_shape"):
        mx.sym.Reshape(x, target_shape=(2, 3))
    with pytest.raises(mx.base.MXNetError, match="input_dim and output_dim"):
        mx.sym.Embedding(x, input_dim=3)
    with pytest.raises(NotImplementedError, match="sparse_grad"):
        mx.sym.Embedding(x, input_dim=3, output_dim=2, sparse_grad=True)
    with pytest.raises(NotImplementedError, match=r"a_min=2 > a_max=1"):
        mx.sym.clip(x, a_min=2, a_max=1)
    with pytest.raises(mx.base.MXNetError, match="num_args=3"):
        mx.sym.concat(x, x, num_args=3)
    with pytest.raises(TypeError, match="data\\[1\\] must be a Symbol"):
        mx.sym.concat(x, 3)
    with pytest.raises(mx.base.MXNetError, match="permutation"):
        mx.sym.transpose(x, axes=(0, 0)).infer_shape(x=(2, 3))


def _steps(planned: bool) -> list[np.ndarray]:
    net = _reference_script().tensor_layers()
    before = gh.plan.set_enabled(planned)
    try:
        ex = net.simple_bind(mx.cpu(), data=(2, 3), grad_req={"data": "null", "fc_weight": "write"})
        rng = np.random.RandomState(4)
        for arr in ex.arg_dict.values():
            arr[:] = rng.uniform(-1, 1, arr.shape).astype(np.float32)
        got: list[np.ndarray] = []
        for _ in range(3):
            ex.forward(is_train=True, data=rng.randint(0, 12, (2, 3)).astype(np.float32))
            ex.backward()
            got += [o.asnumpy().copy() for o in ex.outputs]
            got.append(ex.grad_dict["fc_weight"].asnumpy().copy())
        return got
    finally:
        gh.plan.set_enabled(before)


def test_planned_equals_the_graph_built_each_time() -> None:
    planned, built = _steps(True), _steps(False)
    for a, b in zip(planned, built):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(planned[3], planned[7])  # the indices changed the gradient


def test_embedding_takes_integer_indices() -> None:
    e = mx.sym.Embedding(mx.sym.Variable("x"), input_dim=5, output_dim=3, name="e")
    f32, i32 = np.float32, np.int32
    assert e.infer_type(x="int32") == ([i32, f32], [f32], [])  # mxnet 1.9.1
    ex = e.simple_bind(mx.cpu(), x=(2,), type_dict={"x": "int32"}, grad_req={"e_weight": "write"})
    assert ex.arg_dict["x"].dtype == np.int32 and ex.arg_dict["e_weight"].dtype == np.float32
    assert ex.outputs[0].dtype == np.float32  # allocated at bind in the inferred dtype
    ex.arg_dict["e_weight"][:] = np.arange(15).reshape(5, 3)
    ex.arg_dict["x"][:] = np.array([4, 1])
    np.testing.assert_array_equal(ex.forward(is_train=True)[0].asnumpy(), [[12, 13, 14], [3, 4, 5]])
    ex.backward(mx.nd.ones((2, 3)))
    np.testing.assert_array_equal(ex.grad_dict["e_weight"].asnumpy().sum(1), [0, 3, 0, 0, 3])
