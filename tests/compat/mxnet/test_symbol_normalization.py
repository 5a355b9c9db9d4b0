"""``mx.sym.LayerNorm``, ``InstanceNorm``, ``GroupNorm`` and ``pad``: the arguments they create,
the shapes they infer, their JSON, the outputs and gradients of an executor's forward and
backward (compared with mxnet 1.9.1's, data/symbol_normalization_reference.json written by
data/make_symbol_normalization_reference.py, and with the ``mx.nd`` forms), float64 gradients
against finite differences, the export of Gluon's ``LayerNorm``, ``GroupNorm``,
``InstanceNorm``, ``ReflectionPad2D`` and the files mxnet 1.9.1 exported for them
(data/normnet-symbol.json, data/normnet-0000.params) loaded by ``SymbolBlock.imports``.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from compat.mxnet.helpers import _reference_script
from gradhub_compat.mxnet.gluon import nn

DATA = pathlib.Path(__file__).parent / "data"
REF = json.loads((DATA / "symbol_normalization_reference.json").read_text(encoding="utf-8"))

#: (name, operator, data shape, seed, kwargs): the cases of the reference script
CASES: list[Any] = _reference_script("make_symbol_normalization_reference").CASES
IDS = [c[0] for c in CASES]


def _bound(op: str, shape: tuple[int, ...], seed: int, kw: dict[str, Any], dtype: str = "float32"):
    """The symbol, its executor with the reference script's argument values, and the head
    gradients (the same generator, after the arguments)."""
    s = getattr(mx.sym, op)(mx.sym.var("x"), name="n", **kw)
    args, outs, _ = s.infer_shape(x=shape)
    rs = np.random.RandomState(seed)
    ex = s.simple_bind(mx.cpu(), type_dict={"x": dtype}, x=shape)
    values = {}
    for n, a in zip(s.list_arguments(), args):
        values[n] = rs.randn(*a).astype(np.float32).astype(dtype)
        ex.arg_dict[n][:] = values[n]
    heads = [rs.randn(*o).astype(np.float32).astype(dtype) for o in outs]
    return s, ex, values, heads


@pytest.mark.parametrize(("name", "op", "shape", "seed", "kw"), CASES, ids=IDS)
def test_symbol_matches_mxnet(name: str, op: str, shape: tuple, seed: int, kw: dict) -> None:
    want = REF["ops"][name]  # mxnet 1.9.1
    s, ex, _, heads = _bound(op, shape, seed, kw)
    args, outs, aux = s.infer_shape(x=shape)
    assert s.list_arguments() == want["args"]
    assert [list(a) for a in args] == want["shapes"]
    assert s.list_outputs() == want["outputs"]
    assert [list(o) for o in outs] == want["out_shapes"]
    assert aux == []
    graph = json.loads(s.tojson())
    assert graph["nodes"][-1]["op"] == want["op"]
    assert graph["nodes"][-1].get("attrs") == want["attrs"]
    assert graph["node_row_ptr"] == want["node_row_ptr"]
    for _ in range(2):  # (the second run goes through the recorded plan)
        ys = ex.forward(is_train=True)
        ex.backward([mx.nd.array(h) for h in heads])
    for y, w in zip(ys, want["y"]):
        np.testing.assert_allclose(y.asnumpy(), w, rtol=1e-5, atol=2e-6)
    for n, g in want["grads"].items():
        np.testing.assert_allclose(ex.grad_dict[n].asnumpy(), g, rtol=1e-4, atol=2e-5)


def _nd_forms(op: str, values: dict[str, np.ndarray], kw: dict[str, Any], heads: list) -> Any:
    arrays = [mx.nd.array(values[k]) for k in ("x", "n_gamma", "n_beta") if k in values]
    for a in arrays:
        a.attach_grad()
    with mx.autograd.record():
        out = getattr(mx.nd, op)(*arrays, **kw)
        outs = out if isinstance(out, list) else [out]
        loss = sum((o * mx.nd.array(h)).sum() for o, h in zip(outs, heads))
    loss.backward()
    return outs, [a.grad for a in arrays]


@pytest.mark.parametrize(("name", "op", "shape", "seed", "kw"), CASES, ids=IDS)
def test_executor_equals_the_nd_forms(
    name: str, op: str, shape: tuple, seed: int, kw: dict
) -> None:
    s, ex, values, heads = _bound(op, shape, seed, kw)
    ys = ex.forward(is_train=False)
    ex.backward([mx.nd.array(h) for h in heads])
    outs, grads = _nd_forms(op, values, kw, heads)
    assert len(ys) == len(outs)
    for y, o in zip(ys, outs):
        np.testing.assert_allclose(y.asnumpy(), o.asnumpy(), rtol=1e-6, atol=1e-6)
    for n, g in zip(s.list_arguments(), grads):
        np.testing.assert_allclose(ex.grad_dict[n].asnumpy(), g.asnumpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("name", "op", "shape", "seed", "kw"),
    [c for c in CASES if c[0] in ("ln_axis1_stats", "in", "gn_stats", "pad_reflect", "pad_edge")],
    ids=["ln_axis1_stats", "in", "gn_stats", "pad_reflect", "pad_edge"],
)
def test_float64_gradients_match_finite_differences(
    name: str, op: str, shape: tuple, seed: int, kw: dict
) -> None:
    _, ex, values, heads = _bound(op, shape, seed, kw, dtype="float64")

    def f(v: dict[str, np.ndarray]) -> float:
        for n, a in v.items():
            ex.arg_dict[n][:] = a
        ys = ex.forward(is_train=True)
        return float((ys[0].asnumpy() * heads[0]).sum())

    f(values)
    ex.backward([mx.nd.array(h, dtype="float64") for h in heads])  # (mean/std: no gradient)
    grads = {n: ex.grad_dict[n].asnumpy().copy() for n in values}
    rs = np.random.RandomState(100 + seed)
    eps = 1e-6
    for n in values:
        direction = rs.randn(*values[n].shape)
        up = {**values, n: values[n] + eps * direction}
        down = {**values, n: values[n] - eps * direction}
        fd = (f(up) - f(down)) / (2 * eps)
        assert (grads[n] * direction).sum() == pytest.approx(fd, rel=1e-6, abs=1e-8), n


def test_infer_shape() -> None:
    x = mx.sym.var("x")
    ln = mx.sym.LayerNorm(x, axis=1, output_mean_var=True, name="ln")
    # mxnet 1.9.1: ([(2, 3, 4), (3,), (3,)], [(2, 3, 4), (2, 1, 4), (2, 1, 4)], [])
    assert ln.infer_shape(x=(2, 3, 4)) == (
        [(2, 3, 4), (3,), (3,)],
        [(2, 3, 4), (2, 1, 4), (2, 1, 4)],
        [],
    )
    gn = mx.sym.GroupNorm(x, num_groups=2, output_mean_var=True)
    # mxnet 1.9.1: ([(2, 4, 3), (2,), (2,)], [(2, 4, 3), (2, 2), (2, 2)], [])
    assert gn.infer_shape(x=(2, 4, 3)) == ([(2, 4, 3), (2,), (2,)], [(2, 4, 3), (2, 2), (2, 2)], [])
    assert mx.sym.InstanceNorm(x).infer_shape(x=(2, 3, 5))[0] == [(2, 3, 5), (3,), (3,)]
    p = mx.sym.pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 2, 2))
    assert p.infer_shape(x=(1, 3, 4, 5))[1] == [(1, 3, 6, 9)]  # mxnet 1.9.1
    assert p.infer_shape_partial(x=(0, 3, 4, 5))[1] == [(0, 3, 6, 9)]
    assert mx.sym.LayerNorm(x).infer_shape_partial(x=(0, 3, 0))[1] == [(0, 3, 0)]
    assert mx.sym.LayerNorm(x).infer_shape(x=(0, 3, 4)) == (None, None, None)
    # the output's shape flows back into data, the parameters' into nothing else
    y = mx.sym.LayerNorm(x, name="ln2") + mx.sym.var("z")
    assert y.infer_shape(z=(2, 5))[0] == [(2, 5), (5,), (5,), (2, 5)]
    # a network: padding, then normalizations, then a dense layer
    net = mx.sym.pad(x, mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 1, 1))
    net = mx.sym.GroupNorm(net, num_groups=3, name="g")
    net = mx.sym.FullyConnected(mx.sym.InstanceNorm(net, name="i"), num_hidden=2, name="fc")
    args, outs, _ = net.infer_shape(x=(4, 6, 2, 2))
    assert dict(zip(net.list_arguments(), args)) == {
        "x": (4, 6, 2, 2), "g_gamma": (3,), "g_beta": (3,), "i_gamma": (6,), "i_beta": (6,),
        "fc_weight": (2, 96), "fc_bias": (2,),
    }  # fmt: skip
    assert outs == [(4, 2)]


def test_shape_errors_name_the_operator() -> None:
    x = mx.sym.var("x")
    err = mx.base.MXNetError
    with pytest.raises(err, match=r"groupnorm\w*: # of channels must be divisible by # of groups"):
        mx.sym.GroupNorm(x, num_groups=3).infer_shape(x=(2, 4, 3))
    with pytest.raises(err, match=r"GroupNorm needs data of at least 3 axes"):
        mx.sym.GroupNorm(x).infer_shape(x=(2, 3))
    with pytest.raises(err, match=r"Channel axis out of range: axis=3"):
        mx.sym.LayerNorm(x, axis=3).infer_shape(x=(2, 3))
    pad = mx.sym.pad
    with pytest.raises(err, match=r"reflection padding only supports padding sizes smaller"):
        pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 5, 1, 2, 2)).infer_shape(x=(1, 3, 4, 5))
    with pytest.raises(err, match=r"Input shape vs padding spec mismatch"):
        pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 1, 2, 2)).infer_shape(x=(1, 3, 4, 5))
    with pytest.raises(err, match=r"only supports 4-D or 5-D input"):
        pad(x, mode="edge", pad_width=(0, 0, 0, 0, 1, 2)).infer_shape(x=(3, 4, 5))
    with pytest.raises(err, match=r"padding on the first two axes to be zero"):
        pad(x, mode="edge", pad_width=(0, 1, 0, 0, 1, 2, 2, 2)).infer_shape(x=(1, 3, 4, 5))
    # as mxnet 1.9.1, InstanceNorm's shape inference accepts 2-D data; its forward refuses it
    ins = mx.sym.InstanceNorm(x, name="i")
    assert ins.infer_shape(x=(2, 3))[0] == [(2, 3), (3,), (3,)]
    ex = ins.simple_bind(mx.cpu(), x=(2, 3))
    with pytest.raises(ValueError, match=r"InstanceNorm 'i': .*rank >= 3"):
        ex.forward()
    # parameters of the wrong shape, bound directly
    ln = mx.sym.LayerNorm(x, name="ln")
    bad = {"x": mx.nd.ones((2, 3)), "ln_gamma": mx.nd.ones((2,)), "ln_beta": mx.nd.ones((3,))}
    with pytest.raises((ValueError, err), match=r"ln_gamma"):
        ln.bind(mx.cpu(), bad).forward()


def test_constructor_errors() -> None:
    x = mx.sym.var("x")
    with pytest.raises(ValueError, match=r"mx.sym.pad: Required parameter mode"):
        mx.sym.pad(x, pad_width=(0, 0, 0, 0, 1, 1, 1, 1))
    with pytest.raises(ValueError, match=r"mx.sym.pad: Invalid Input: 'wrap'"):
        mx.sym.pad(x, mode="wrap", pad_width=(0, 0, 0, 0, 1, 1, 1, 1))
    with pytest.raises(ValueError, match=r"mx.sym.pad: Required parameter pad_width"):
        mx.sym.pad(x, mode="reflect")
    with pytest.raises(ValueError, match=r"mx.sym.pad: pad_width=.* must not be negative"):
        mx.sym.pad(x, mode="edge", pad_width=(0, 0, 0, 0, -1, 1, 1, 1))
    with pytest.raises(ValueError, match=r"mx.sym.GroupNorm: num_groups=0 must be positive"):
        mx.sym.GroupNorm(x, num_groups=0)
    with pytest.raises(ValueError, match=r"mx.sym.LayerNorm: axis must be an int"):
        mx.sym.LayerNorm(x, axis=1.5)
    with pytest.raises(ValueError, match=r"mx.sym.InstanceNorm: eps must be a number"):
        mx.sym.InstanceNorm(x, eps="small")
    with pytest.raises(TypeError, match=r"mx.sym.LayerNorm: data must be a Symbol"):
        mx.sym.LayerNorm(np.ones(3))
    with pytest.raises(TypeError, match=r"mx.sym.GroupNorm: gamma must be a Symbol"):
        mx.sym.GroupNorm(x, gamma=np.ones(1))


def test_names_and_composition() -> None:
    # mxnet 1.9.1: the automatic names and the arguments of a layer built without data
    assert mx.sym.InstanceNorm(mx.sym.var("x")).name.startswith("instancenorm")
    assert mx.sym.pad(mx.sym.var("x"), mode="edge", pad_width=(0,) * 8).name.startswith("pad")
    ln = mx.sym.LayerNorm(name="ln")
    assert ln.list_arguments() == ["ln_data", "ln_gamma", "ln_beta"]
    assert ln(ln_data=mx.sym.var("y")).list_arguments() == ["y", "ln_gamma", "ln_beta"]
    g, b = mx.sym.var("g"), mx.sym.var("b")
    gn = mx.sym.GroupNorm(mx.sym.var("x"), g, b, num_groups=2, output_mean_var=True, name="gn")
    assert gn.list_arguments() == ["x", "g", "b"]
    assert gn.get_internals().list_outputs() == ["x", "g", "b", "gn_output", "gn_mean", "gn_std"]
    assert gn["gn_std"].infer_shape(x=(3, 4, 5))[1] == [(3, 2)]
    assert mx.sym.Pad is mx.sym.pad


@pytest.mark.parametrize(("name", "op", "shape", "seed", "kw"), CASES, ids=IDS)
def test_json_round_trip(name: str, op: str, shape: tuple, seed: int, kw: dict) -> None:
    s, ex, values, _ = _bound(op, shape, seed, kw)
    back = mx.sym.load_json(s.tojson())
    assert back.tojson() == s.tojson()
    assert back.list_outputs() == s.list_outputs()
    ex2 = back.bind(mx.cpu(), {n: mx.nd.array(v) for n, v in values.items()})
    for a, b in zip(ex.forward(), ex2.forward()):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def _normnet(instance_axis: int = 1) -> nn.HybridSequential:
    """data/make_symbol_normalization_reference.py's net."""
    seq = nn.HybridSequential(prefix="net_")
    with seq.name_scope():
        seq.add(
            nn.ReflectionPad2D(1),
            nn.LayerNorm(),
            nn.GroupNorm(num_groups=2),
            nn.InstanceNorm(axis=instance_axis, scale=True),
        )
    return seq


def _x() -> Any:
    return mx.nd.array(np.random.RandomState(0).randn(2, 4, 3, 3).astype(np.float32))


def test_mxnet_export_loads_with_equal_outputs() -> None:
    x = _x()
    with pytest.warns(UserWarning, match=r"Cannot decide type"):  # (as mxnet)
        blk = nn.SymbolBlock.imports(
            str(DATA / "normnet-symbol.json"), ["data"], str(DATA / "normnet-0000.params")
        )
    # mxnet 1.9.1's output of the exported network (its reference script)
    np.testing.assert_allclose(blk(x).asnumpy(), REF["net"], rtol=1e-5, atol=2e-6)
    sym = mx.sym.load(str(DATA / "normnet-symbol.json"))
    assert sym.list_outputs() == ["net_instancenorm0_fwd_output"]
    args = sym.infer_shape(data=(2, 4, 3, 3))[0]
    assert args is not None and args[1:] == [(5,), (5,), (2,), (2,), (4,), (4,)]


def test_gluon_export_writes_mxnet_graph_and_round_trips(tmp_path: pathlib.Path) -> None:
    x = _x()
    seq = _normnet()
    seq.initialize()
    seq(x)
    for k, p in enumerate(seq.collect_params().values()):  # (the reference script's values)
        p.set_data(mx.nd.array(np.random.RandomState(10 + k).randn(*p.shape).astype(np.float32)))
    seq.hybridize()
    y = seq(x)
    np.testing.assert_allclose(y.asnumpy(), REF["net"], rtol=1e-5, atol=2e-6)  # mxnet 1.9.1
    seq.export(str(tmp_path / "net"))
    ours = json.loads((tmp_path / "net-symbol.json").read_text(encoding="utf-8"))
    theirs = json.loads((DATA / "normnet-symbol.json").read_text(encoding="utf-8"))
    # the operator nodes, their attributes and inputs, and the graph's layout are mxnet's
    for a, b in zip(ours["nodes"], theirs["nodes"], strict=True):
        assert (a["op"], a["name"], a["inputs"]) == (b["op"], b["name"], b["inputs"])
        if a["op"] != "null":
            assert a.get("attrs") == b.get("attrs")
    for key in ("arg_nodes", "node_row_ptr", "heads", "attrs"):
        assert ours[key] == theirs[key]
    with pytest.warns(UserWarning, match=r"Cannot decide type"):
        back = nn.SymbolBlock.imports(
            str(tmp_path / "net-symbol.json"), ["data"], str(tmp_path / "net-0000.params")
        )
    np.testing.assert_array_equal(back(x).asnumpy(), y.asnumpy())


def test_gluon_instancenorm_on_another_axis_exports(tmp_path: pathlib.Path) -> None:
    x = _x()
    seq = _normnet(instance_axis=2)
    seq.initialize(mx.init.Uniform(1.0))
    seq.hybridize()
    y = seq(x)
    seq.export(str(tmp_path / "net"), epoch=2)
    ops = [
        n["op"]
        for n in json.loads((tmp_path / "net-symbol.json").read_text(encoding="utf-8"))["nodes"]
        if n["op"] != "null"
    ]
    assert ops == ["Pad", "LayerNorm", "GroupNorm", "SwapAxis", "InstanceNorm", "SwapAxis"]
    with pytest.warns(UserWarning, match=r"Cannot decide type"):
        back = nn.SymbolBlock.imports(
            str(tmp_path / "net-symbol.json"), "data", str(tmp_path / "net-0002.params")
        )
    np.testing.assert_allclose(back(x).asnumpy(), y.asnumpy(), rtol=1e-6, atol=1e-6)


def test_hybrid_block_infers_deferred_shapes_through_the_symbols() -> None:
    class Net(mx.gluon.HybridBlock):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            with self.name_scope():
                self.gamma = self.params.get(
                    "gamma", shape=(0,), init="ones", allow_deferred_init=True
                )
                self.beta = self.params.get(
                    "beta", shape=(0,), init="zeros", allow_deferred_init=True
                )

        def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any) -> Any:
            y = F.pad(x, mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 0, 0))
            return F.LayerNorm(y, gamma, beta, axis=2)

    net = Net(prefix="n_")
    net.initialize()
    x = _x()
    y = net(x)
    assert net.gamma.shape == (5,)
    want = mx.nd.LayerNorm(
        mx.nd.pad(x, mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 0, 0)),
        mx.nd.ones((5,)),
        mx.nd.zeros((5,)),
        axis=2,
    )
    np.testing.assert_array_equal(y.asnumpy(), want.asnumpy())


def test_module_trains_a_network_of_the_symbols() -> None:
    net = mx.sym.pad(mx.sym.var("data"), mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 1, 1))
    net = mx.sym.InstanceNorm(mx.sym.GroupNorm(net, num_groups=2, name="gn"), name="in")
    net = mx.sym.FullyConnected(mx.sym.LayerNorm(mx.sym.Flatten(net), name="ln"), num_hidden=3)
    rs = np.random.RandomState(0)
    x = rs.randn(16, 4, 3, 3).astype(np.float32)
    y = (rs.rand(16) * 3).astype(np.float32)
    it = mx.io.NDArrayIter(x, y, batch_size=8, label_name="softmax_label")
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(net, name="softmax"))
    mod.fit(it, num_epoch=30, optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    assert mod.score(it, "acc")[0][1] == 1.0
    params, _ = mod.get_params()
    # the initializer's rule for *_gamma (ones) and *_beta (zeros), then training moved them
    assert params["gn_gamma"].shape == (2,) and params["ln_beta"].shape == (100,)
    assert not np.array_equal(params["gn_gamma"].asnumpy(), np.ones(2, np.float32))
