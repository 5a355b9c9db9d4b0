"""mxnet's normalization operators and layers besides BatchNorm: ``mx.nd.LayerNorm``,
``mx.nd.InstanceNorm``, ``mx.nd.GroupNorm`` (values, ``output_mean_var`` outputs and gradients
compared with mxnet 1.9.1's, data/normalization_reference.json written by
data/make_normalization_reference.py; second derivatives, which mxnet 1.9.1 refuses, against
float64 finite differences of the first; ``eps <= 0``; the errors), and ``gluon.nn.LayerNorm``,
``InstanceNorm``, ``GroupNorm`` and ``BatchNormReLU`` (parameter names, shapes, ``grad_req``,
deferred shapes, reprs, ``save_parameters`` keys, forward and backward); ``mx.nd.pad`` and
``gluon.nn.ReflectionPad2D`` (values and gradients against mxnet 1.9.1's, the errors).
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet.gluon import nn

HERE = pathlib.Path(__file__).parent
REF = json.loads((HERE / "data" / "normalization_reference.json").read_text(encoding="utf-8"))

#: data/make_normalization_reference.py's CASES: (name, operator, data shape, gamma/beta shape,
#: seed, keyword arguments)
CASES = [
    ("ln_last", "LayerNorm", (2, 3, 4), (4,), 0, {}),
    ("ln_axis1", "LayerNorm", (2, 3, 4), (3,), 10, {"axis": 1, "eps": 1e-3}),
    ("ln_axis0_stats", "LayerNorm", (3, 2), (3,), 20, {"axis": 0, "output_mean_var": True}),
    ("ln_stats", "LayerNorm", (2, 5), (5,), 30, {"output_mean_var": True}),
    ("in_4d", "InstanceNorm", (2, 3, 4, 5), (3,), 40, {}),
    ("in_3d_eps", "InstanceNorm", (2, 3, 5), (3,), 50, {"eps": 1e-5}),
    ("gn_2", "GroupNorm", (2, 4, 3, 3), (2,), 60, {"num_groups": 2}),
    ("gn_1", "GroupNorm", (3, 2, 4), (1,), 70, {}),
    ("gn_4_stats", "GroupNorm", (2, 4, 3), (4,), 80, {"num_groups": 4, "output_mean_var": True}),
    ("gn_3d", "GroupNorm", (2, 6, 2), (3,), 90, {"num_groups": 3, "eps": 1e-3}),
]

#: data/make_normalization_reference.py's PADS: (mode, pad_width, constant_value)
PADS = [
    ("reflect", (0, 0, 0, 0, 1, 2, 2, 1), 0.0),
    ("edge", (0, 0, 0, 0, 2, 0, 1, 3), 0.0),
    ("constant", (0, 0, 0, 0, 1, 1, 0, 2), 5.0),
]


def randn(seed: int, shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


def _norm(x: np.ndarray, red: tuple[int, ...], eps: float) -> np.ndarray:
    """numpy (float64): ``(x - mean) / sqrt(var + eps)`` over ``red``."""
    x = x.astype(np.float64)
    m = x.mean(axis=red, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(axis=red, keepdims=True) + eps)


# -- mx.nd operators ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "op", "dshape", "pshape", "seed", "kw"), CASES)
def test_nd_values_and_gradients_match_mxnet(
    name: str, op: str, dshape: tuple, pshape: tuple, seed: int, kw: dict
) -> None:
    arrays = [mx.nd.array(randn(seed + i, s)) for i, s in enumerate((dshape, pshape, pshape))]
    for a in arrays:
        a.attach_grad()
    head = mx.nd.array(randn(seed + 3, dshape))
    with mx.autograd.record():
        out = getattr(mx.nd, op)(*arrays, **kw)
        first = out[0] if isinstance(out, list) else out
        loss = (first * head).sum()
    loss.backward()
    outs = out if isinstance(out, list) else [out]
    ref = REF[name]  # mxnet 1.9.1
    assert len(outs) == len(ref["outputs"])
    for o, r in zip(outs, ref["outputs"]):
        assert o.shape == np.shape(r) and o.dtype == np.float32
        np.testing.assert_allclose(o.asnumpy(), r, rtol=1e-5, atol=1e-6)
    for a, r in zip(arrays, ref["grads"]):
        np.testing.assert_allclose(a.grad.asnumpy(), r, rtol=1e-4, atol=1e-5)


def test_layernorm_formula_along_each_axis() -> None:
    x = randn(1, (2, 3, 4))
    for axis in (0, 1, 2, -1, -3):
        c = x.shape[axis]
        g, b = randn(2, (c,)), randn(3, (c,))
        y = mx.nd.LayerNorm(mx.nd.array(x), mx.nd.array(g), mx.nd.array(b), axis=axis, eps=1e-4)
        bs = [1, 1, 1]
        bs[axis] = c
        want = _norm(x, (axis,), 1e-4) * g.reshape(bs) + b.reshape(bs)
        np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_groupnorm_gamma_and_beta_are_per_group() -> None:
    x = randn(4, (2, 6, 3))
    g, b = np.array([1.0, -2.0, 0.5], np.float32), np.array([0.1, 0.2, 0.3], np.float32)
    y = mx.nd.GroupNorm(mx.nd.array(x), mx.nd.array(g), mx.nd.array(b), num_groups=3)
    xg = x.reshape(2, 3, 2, 3)
    want = _norm(xg, (2, 3), 1e-5) * g.reshape(1, 3, 1, 1) + b.reshape(1, 3, 1, 1)
    np.testing.assert_allclose(y.asnumpy(), want.reshape(x.shape), rtol=1e-5, atol=1e-5)


def test_instancenorm_default_eps_is_1e_3() -> None:
    x = randn(5, (1, 2, 3))
    one, zero = mx.nd.ones((2,)), mx.nd.zeros((2,))
    y = mx.nd.InstanceNorm(mx.nd.array(x), one, zero)
    np.testing.assert_allclose(y.asnumpy(), _norm(x, (2,), 1e-3), rtol=1e-5, atol=1e-6)


def test_statistics_outputs_carry_no_gradient() -> None:
    x = mx.nd.array(randn(6, (2, 3, 4)))
    x.attach_grad()
    for op, g in (("LayerNorm", 4), ("GroupNorm", 1)):
        with mx.autograd.record():
            _, m, s = getattr(mx.nd, op)(
                x, mx.nd.ones((g,)), mx.nd.zeros((g,)), output_mean_var=True
            )
            loss = (m * 2).sum() + (s * 3).sum()
        loss.backward()
        np.testing.assert_array_equal(x.grad.asnumpy(), np.zeros((2, 3, 4)))  # mxnet 1.9.1


def test_eps_zero_and_negative_as_mxnet() -> None:
    x = mx.nd.array([[1.0, 3.0], [2.0, 2.0]])
    one, zero = mx.nd.ones((2,)), mx.nd.zeros((2,))
    y = mx.nd.LayerNorm(x, one, zero, eps=0.0).asnumpy()
    np.testing.assert_array_equal(y[0], [-1.0, 1.0])  # mxnet 1.9.1
    assert np.isnan(y[1]).all()  # mxnet 1.9.1: nan for a constant row
    y = mx.nd.LayerNorm(x, one, zero, eps=-0.5).asnumpy()
    np.testing.assert_allclose(y[0], [-1.4142135381698608, 1.4142135381698608])  # mxnet 1.9.1
    y = mx.nd.InstanceNorm(x.reshape((1, 2, 2)), one, zero, eps=0.0).asnumpy()
    np.testing.assert_array_equal(y[0, 0], [-1.0, 1.0])  # mxnet 1.9.1
    assert np.isnan(y[0, 1]).all()  # mxnet 1.9.1
    y = mx.nd.GroupNorm(x.reshape((1, 2, 2)), one[:1], zero[:1], eps=0.0).asnumpy()
    np.testing.assert_allclose(  # mxnet 1.9.1
        y.ravel(), [-1.4142135381698608, 1.4142135381698608, 0.0, 0.0]
    )


def _first(op: str, x: Any, g: Any, b: Any, w: Any, kw: dict) -> Any:
    """The gradient of ``sum(op(x)^3 * w)`` with respect to ``x`` (a graph, for a second)."""
    with mx.autograd.record():
        y = getattr(mx.nd, op)(x, g, b, **kw)
        return mx.autograd.grad((y * y * y * w).sum(), [x], create_graph=True)[0]


@pytest.mark.parametrize(
    ("op", "dshape", "pshape", "kw"),
    [
        ("LayerNorm", (2, 3, 4), (4,), {}),
        ("LayerNorm", (3, 4), (3,), {"axis": 0, "eps": 1e-3}),
        ("InstanceNorm", (2, 2, 3), (2,), {}),
        ("GroupNorm", (2, 4, 2), (2,), {"num_groups": 2}),
    ],
)
def test_second_derivatives_match_finite_differences(
    op: str, dshape: tuple, pshape: tuple, kw: dict
) -> None:
    f64 = np.float64
    x0 = randn(11, dshape, f64)
    g, b = mx.nd.array(randn(12, pshape, f64), dtype=f64), mx.nd.array(randn(13, pshape, f64))
    b = b.astype(f64)
    w = mx.nd.array(randn(14, dshape, f64), dtype=f64)
    v = randn(15, dshape, f64)
    x = mx.nd.array(x0, dtype=f64)
    x.attach_grad()
    with mx.autograd.record():
        gx = _first(op, x, g, b, w, kw)
        loss = (gx * mx.nd.array(v, dtype=f64)).sum()
    loss.backward()
    hv = x.grad.asnumpy()

    def dot(xv: np.ndarray) -> float:
        xa = mx.nd.array(xv, dtype=f64)
        xa.attach_grad()
        return float((_first(op, xa, g, b, w, kw).asnumpy() * v).sum())

    h = 1e-5
    fd = np.zeros(x0.size)
    for i in range(x0.size):
        e = np.zeros(x0.size)
        e[i] = h
        e = e.reshape(dshape)
        fd[i] = (dot(x0 + e) - dot(x0 - e)) / (2 * h)
    np.testing.assert_allclose(hv.ravel(), fd, rtol=1e-5, atol=1e-6)


def test_nd_errors() -> None:
    x3 = mx.nd.ones((2, 4, 3))
    one, zero = mx.nd.ones((3,)), mx.nd.zeros((3,))
    with pytest.raises(mx.base.MXNetError, match=r"mx.nd.LayerNorm: Shape inconsistent.*gamma"):
        mx.nd.LayerNorm(x3, mx.nd.ones((4,)), zero)
    with pytest.raises(mx.base.MXNetError, match=r"mx.nd.LayerNorm: Shape inconsistent.*beta"):
        mx.nd.LayerNorm(x3, one, mx.nd.zeros((4,)))
    with pytest.raises(mx.base.MXNetError, match=r"mx.nd.LayerNorm: axis 3 is out of range"):
        mx.nd.LayerNorm(x3, one, zero, axis=3)
    with pytest.raises(mx.base.MXNetError, match=r"mx.nd.InstanceNorm: .*rank >= 3"):
        mx.nd.InstanceNorm(mx.nd.ones((2, 3)), one, zero)
    with pytest.raises(mx.base.MXNetError, match=r"mx.nd.InstanceNorm: Shape inconsistent"):
        mx.nd.InstanceNorm(x3, one, zero)
    with pytest.raises(mx.base.MXNetError, match=r"mx.nd.GroupNorm: data must have at least 3"):
        mx.nd.GroupNorm(mx.nd.ones((2, 4)), one, zero)
    with pytest.raises(mx.base.MXNetError, match=r"mx.nd.GroupNorm: num_groups=3 must be"):
        mx.nd.GroupNorm(x3, one, zero, num_groups=3)
    with pytest.raises(mx.base.MXNetError, match=r"mx.nd.GroupNorm: Shape inconsistent.*\(2,\)"):
        mx.nd.GroupNorm(x3, mx.nd.ones((4,)), mx.nd.zeros((4,)), num_groups=2)
    with pytest.raises(TypeError, match=r"mx.nd.LayerNorm: gamma must be an NDArray"):
        mx.nd.LayerNorm(x3, np.ones(3), zero)
    with pytest.raises(NotImplementedError, match=r"mx.nd.GroupNorm: out= .*migration-mxnet"):
        mx.nd.GroupNorm(x3, one[:1], zero[:1], out=mx.nd.zeros((2, 4, 3)))
    with pytest.raises(mx.base.MXNetError, match=r"mx.nd.InstanceNorm: beta has dtype float64"):
        mx.nd.InstanceNorm(x3, mx.nd.ones((4,)), mx.nd.zeros((4,), dtype="float64"))


# -- gluon.nn layers ---------------------------------------------------------------------------


def test_gluon_names_shapes_grad_req_and_reprs() -> None:
    net = nn.HybridSequential(prefix="t_")  # (a scope of its own: the counters start at 0)
    with net.name_scope():
        ln, inorm = nn.LayerNorm(), nn.InstanceNorm()
        gn, bnr = nn.GroupNorm(num_groups=2), nn.BatchNormReLU()
    # mxnet 1.9.1
    assert repr(ln) == "LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=0)"
    assert repr(inorm) == "InstanceNorm(eps=1e-05, axis=1, center=True, scale=False, in_channels=0)"
    assert repr(gn) == "GroupNorm(eps=1e-05, num_groups=2, center=True, scale=True)"
    assert repr(bnr) == (
        "BatchNormReLU(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, use_global_stats=False,"
        " in_channels=None)"
    )
    assert list(ln.collect_params().keys()) == ["t_layernorm0_gamma", "t_layernorm0_beta"]
    assert list(inorm.collect_params().keys()) == ["t_instancenorm0_gamma", "t_instancenorm0_beta"]
    assert list(gn.collect_params().keys()) == ["t_groupnorm0_gamma", "t_groupnorm0_beta"]
    assert list(bnr.collect_params().keys()) == [
        "t_batchnormrelu0_gamma",
        "t_batchnormrelu0_beta",
        "t_batchnormrelu0_running_mean",
        "t_batchnormrelu0_running_var",
    ]
    for blk in (ln, inorm, gn, bnr):
        blk.initialize()
        blk(mx.nd.array(randn(0, (2, 4, 3, 3))))
    got = {
        k: (v.shape, v.grad_req)
        for blk in (ln, inorm, gn, bnr)
        for k, v in blk.collect_params().items()
    }
    assert got == {  # mxnet 1.9.1
        "t_layernorm0_gamma": ((3,), "write"),
        "t_layernorm0_beta": ((3,), "write"),
        "t_instancenorm0_gamma": ((4,), "null"),
        "t_instancenorm0_beta": ((4,), "write"),
        "t_groupnorm0_gamma": ((2,), "write"),
        "t_groupnorm0_beta": ((2,), "write"),
        "t_batchnormrelu0_gamma": ((4,), "write"),
        "t_batchnormrelu0_beta": ((4,), "write"),
        "t_batchnormrelu0_running_mean": ((4,), "null"),
        "t_batchnormrelu0_running_var": ((4,), "null"),
    }
    assert repr(ln) == "LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=3)"
    assert repr(inorm) == "InstanceNorm(eps=1e-05, axis=1, center=True, scale=False, in_channels=4)"
    assert repr(bnr).endswith("in_channels=4)")
    off = nn.LayerNorm(center=False, scale=False, in_channels=3)
    assert repr(off) == "LayerNorm(eps=1e-05, axis=-1, center=False, scale=False, in_channels=3)"
    assert [v.grad_req for v in off.collect_params().values()] == ["null", "null"]


def test_gluon_save_parameters_keys(tmp_path: pathlib.Path) -> None:
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(
            nn.Conv2D(4, 1),
            nn.LayerNorm(axis=1),
            nn.InstanceNorm(scale=True),
            nn.GroupNorm(num_groups=2),
            nn.BatchNormReLU(),
        )
    net.initialize()
    net(mx.nd.ones((2, 3, 3, 3)))
    assert list(net.collect_params().keys()) == [  # mxnet 1.9.1
        "net_conv0_weight",
        "net_conv0_bias",
        "net_layernorm0_gamma",
        "net_layernorm0_beta",
        "net_instancenorm0_gamma",
        "net_instancenorm0_beta",
        "net_groupnorm0_gamma",
        "net_groupnorm0_beta",
        "net_batchnormrelu0_gamma",
        "net_batchnormrelu0_beta",
        "net_batchnormrelu0_running_mean",
        "net_batchnormrelu0_running_var",
    ]
    path = str(tmp_path / "n.params")
    net.save_parameters(path)
    assert sorted(mx.nd.load(path)) == [  # mxnet 1.9.1
        "0.bias",
        "0.weight",
        "1.beta",
        "1.gamma",
        "2.beta",
        "2.gamma",
        "3.beta",
        "3.gamma",
        "4.beta",
        "4.gamma",
        "4.running_mean",
        "4.running_var",
    ]
    net.load_parameters(path)


def test_gluon_layernorm_and_groupnorm_forward_backward() -> None:
    x = mx.nd.array(randn(21, (2, 4, 3)))
    ln = nn.LayerNorm(axis=1, epsilon=1e-3, gamma_initializer="zeros")
    gn = nn.GroupNorm(num_groups=2, beta_initializer="ones")
    for blk in (ln, gn):
        blk.initialize()
    ln.gamma.set_data(mx.nd.array([1.0, 2.0, 3.0, 4.0]))
    ln.hybridize()
    with mx.autograd.record():
        y = gn(ln(x))
    y.backward()
    h = _norm(x.asnumpy(), (1,), 1e-3) * np.arange(1.0, 5.0).reshape(1, 4, 1)
    want = _norm(h.reshape(2, 2, 2, 3), (2, 3), 1e-5).reshape(2, 4, 3) + 1.0
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-4, atol=1e-5)
    # d sum(y) / d beta: the count of each group's elements; d / d gamma: sum of the normalized
    np.testing.assert_allclose(gn.beta.grad().asnumpy(), [12.0, 12.0])
    np.testing.assert_allclose(gn.gamma.grad().asnumpy(), [0.0, 0.0], atol=1e-5)
    # the normalized values sum to zero per group: nothing flows back to ln's parameters
    np.testing.assert_allclose(ln.beta.grad().asnumpy(), np.zeros(4), atol=1e-5)


def test_gluon_instancenorm_other_axis_and_fixed_gamma() -> None:
    x = randn(22, (2, 3, 4))
    net = nn.InstanceNorm(axis=2, gamma_initializer=mx.init.Constant(2.0))
    net.initialize()
    xa = mx.nd.array(x)
    xa.attach_grad()
    with mx.autograd.record():
        y = net(xa)
    y.backward()
    assert net.gamma.shape == (4,)
    want = 2.0 * _norm(x, (1,), 1e-5)  # channels on axis 2: normalized over axis 1
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(net.beta.grad().asnumpy(), np.full(4, 6.0))
    assert net.gamma.grad_req == "null"
    np.testing.assert_allclose(xa.grad.asnumpy(), np.zeros((2, 3, 4)), atol=1e-5)


def test_gluon_batchnormrelu_matches_mxnet() -> None:
    ref = REF["bnrelu"]  # mxnet 1.9.1
    x = mx.nd.array(randn(7, (2, 3, 2, 2)))
    x.attach_grad()
    head = mx.nd.array(randn(8, (2, 3, 2, 2)))
    net = nn.BatchNormReLU(in_channels=3)
    net.initialize()
    net.gamma.set_data(mx.nd.array([0.5, 1.5, -1.0]))
    net.beta.set_data(mx.nd.array([0.1, -0.2, 0.3]))
    with mx.autograd.record():
        y = net(x)
        loss = (y * head).sum()
    loss.backward()
    np.testing.assert_allclose(y.asnumpy(), ref["train"], rtol=1e-5, atol=1e-6)
    assert (y.asnumpy() >= 0).all() and (y.asnumpy() == 0).any()
    np.testing.assert_allclose(x.grad.asnumpy(), ref["grad"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(net.gamma.grad().asnumpy(), ref["gamma_grad"], rtol=1e-4)
    np.testing.assert_allclose(net.running_mean.data().asnumpy(), ref["running_mean"], rtol=1e-5)
    np.testing.assert_allclose(net.running_var.data().asnumpy(), ref["running_var"], rtol=1e-5)
    np.testing.assert_allclose(net(x).asnumpy(), ref["predict"], rtol=1e-5, atol=1e-6)


def test_gluon_batchnormrelu_exports_batchnorm_then_relu(tmp_path: pathlib.Path) -> None:
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.BatchNormReLU())
    net.initialize()
    net.hybridize()
    x = mx.nd.array([[[-1.0, 2.0]], [[3.0, -4.0]]])
    y = net(x)
    net.export(str(tmp_path / "bnr"))
    nodes = json.loads((tmp_path / "bnr-symbol.json").read_text(encoding="utf-8"))["nodes"]
    assert [(n["op"], n["name"]) for n in nodes if n["op"] != "null"] == [
        ("BatchNorm", "net_batchnormrelu0_fwd"),
        ("relu", "net_batchnormrelu0_relu"),
    ]
    sym = mx.sym.load(str(tmp_path / "bnr-symbol.json"))
    with pytest.warns(UserWarning, match=r"Cannot decide type"):
        back = nn.SymbolBlock(sym, mx.sym.var("data"))
    back.collect_params().load(str(tmp_path / "bnr-0000.params"), allow_missing=False)
    # mxnet 1.9.1 (SymbolBlock.imports of this file): 0, 1.99999, 2.999985, 0
    np.testing.assert_allclose(back(x).asnumpy().ravel(), [0.0, 1.99999, 2.999985, 0.0], 1e-6)
    np.testing.assert_array_equal(back(x).asnumpy(), y.asnumpy())


@pytest.mark.parametrize("op", ["LayerNorm", "InstanceNorm", "GroupNorm"])
def test_symbol_forms_export(op: str, tmp_path: pathlib.Path) -> None:
    # (the symbol forms themselves: test_symbol_normalization.py)
    blk = {"LayerNorm": nn.LayerNorm, "InstanceNorm": nn.InstanceNorm, "GroupNorm": nn.GroupNorm}
    net = blk[op]()
    net.initialize()
    net.hybridize()
    y = net(mx.nd.ones((2, 3, 2)))
    net.export(str(tmp_path / "net"))
    nodes = json.loads((tmp_path / "net-symbol.json").read_text(encoding="utf-8"))["nodes"]
    assert [n["op"] for n in nodes if n["op"] != "null"] == [op]
    with pytest.warns(UserWarning, match=r"Cannot decide type"):
        back = nn.SymbolBlock.imports(
            str(tmp_path / "net-symbol.json"), "data", str(tmp_path / "net-0000.params")
        )
    np.testing.assert_array_equal(back(mx.nd.ones((2, 3, 2))).asnumpy(), y.asnumpy())


# -- mx.nd.pad, gluon.nn.ReflectionPad2D -------------------------------------------------------


@pytest.mark.parametrize(("i", "case"), list(enumerate(PADS)))
def test_nd_pad_values_and_gradients_match_mxnet(i: int, case: tuple) -> None:
    mode, width, value = case
    x = mx.nd.array(randn(0, (1, 2, 3, 3)))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.pad(x, mode=mode, pad_width=width, constant_value=value)
        loss = (y * mx.nd.array(randn(1, y.shape))).sum()
    loss.backward()
    want_y, want_g = REF["pad"][i]  # mxnet 1.9.1
    np.testing.assert_array_equal(y.asnumpy(), np.array(want_y, np.float32))
    np.testing.assert_allclose(x.grad.asnumpy(), want_g, rtol=1e-5, atol=1e-6)


def test_nd_pad_five_axes_and_numpy() -> None:
    x = randn(2, (1, 2, 2, 3, 4))
    y = mx.nd.pad(mx.nd.array(x), mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 2, 0, 0, 3))
    want = np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 0), (0, 3)), mode="reflect")
    np.testing.assert_array_equal(y.asnumpy(), want)
    y = mx.nd.Pad(mx.nd.array(x), mode="edge", pad_width=(0, 0, 0, 0, 0, 2, 1, 1, 3, 0))
    want = np.pad(x, ((0, 0), (0, 0), (0, 2), (1, 1), (3, 0)), mode="edge")
    np.testing.assert_array_equal(y.asnumpy(), want)


def test_nd_pad_errors() -> None:
    x = mx.nd.ones((1, 1, 3, 4))
    with pytest.raises(mx.base.MXNetError, match=r"mx.nd.pad: Current implementation of refl"):
        mx.nd.pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 3, 0, 0, 0))
    with pytest.raises(mx.base.MXNetError, match=r"mx.nd.pad: .*first two axes to be zero"):
        mx.nd.pad(x, mode="reflect", pad_width=(0, 0, 1, 0, 1, 1, 1, 1))
    with pytest.raises(mx.base.MXNetError, match=r"mx.nd.pad: Input shape vs padding spec"):
        mx.nd.pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 1, 1))
    with pytest.raises(mx.base.MXNetError, match=r"mx.nd.pad: .*4-D or 5-D"):
        mx.nd.pad(mx.nd.ones((2, 3)), pad_width=(0, 0, 1, 1))
    with pytest.raises(mx.base.MXNetError, match=r"mx.nd.pad: Invalid Input: 'wrap'"):
        mx.nd.pad(x, mode="wrap", pad_width=(0, 0, 0, 0, 1, 1, 1, 1))


def test_gluon_reflectionpad2d() -> None:
    x = mx.nd.array(randn(0, (1, 2, 3, 3)))
    seq = nn.HybridSequential(prefix="t_")
    with seq.name_scope():
        net = nn.ReflectionPad2D(2)
    assert net.prefix == "t_reflectionpad2d0_" and not net.collect_params()  # mxnet 1.9.1
    assert repr(net) == "ReflectionPad2D(\n\n)"  # mxnet 1.9.1
    assert net(x).shape == (1, 2, 7, 7)  # mxnet 1.9.1
    want = np.pad(x.asnumpy(), ((0, 0), (0, 0), (2, 2), (2, 2)), mode="reflect")
    np.testing.assert_array_equal(net(x).asnumpy(), want)
    net = nn.ReflectionPad2D((0, 0, 0, 0, 1, 2, 2, 1))
    np.testing.assert_array_equal(net(x).asnumpy(), np.array(REF["pad"][0][0], np.float32))
    with pytest.raises(AssertionError, match=r"gluon.nn.ReflectionPad2D: padding"):
        nn.ReflectionPad2D((1, 1))
    sym = net(mx.sym.var("data"))  # (mx.sym.pad: test_symbol_normalization.py)
    assert sym.infer_shape(data=(1, 2, 3, 3))[1] == [(1, 2, 6, 6)]
