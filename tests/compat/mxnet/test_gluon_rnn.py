"""gluon.rnn: the fused layers RNN (relu, tanh), LSTM, GRU (two layers, one or two directions,
TNC and NTC) and the cells RNNCell, LSTMCell, GRUCell, SequentialRNNCell, BidirectionalCell,
ResidualCell give mxnet 1.9.1's outputs, final states and gradients (inputs, initial states,
every parameter) for the same parameters; the file data/gluon_rnn_reference.npz holds mxnet's
numbers (data/make_gluon_rnn_reference.py wrote it with mxnet 1.9.1). Gradients are also
checked against float64 finite differences, and second derivatives exist."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet import autograd, gluon
from gradhub_compat.mxnet.gluon import rnn

REF = np.load(Path(__file__).parent / "data" / "gluon_rnn_reference.npz", allow_pickle=False)
T, N, C, H = 4, 3, 5, 4


def _ref(key: str, what: str) -> dict[str, np.ndarray]:
    head = f"{key}__{what}__"
    return {k[len(head) :]: REF[k] for k in REF.files if k.startswith(head)}


def _layer(kind: str, bidirectional: bool, layout: str, **kw: Any) -> gluon.HybridBlock:
    kw = {"num_layers": 2, "layout": layout, "bidirectional": bidirectional, **kw}
    if kind.startswith("rnn"):
        return rnn.RNN(H, activation=kind[4:], prefix="net_", **kw)
    return {"lstm": rnn.LSTM, "gru": rnn.GRU}[kind](H, prefix="net_", **kw)


def _cell(case: str) -> Any:
    if case == "rnn_cell":
        return rnn.RNNCell(H, prefix="net_")
    if case == "lstm_cell":
        return rnn.LSTMCell(H, prefix="net_")
    if case == "gru_cell":
        return rnn.GRUCell(H, prefix="net_")
    cell = rnn.SequentialRNNCell(prefix="net_")
    with cell.name_scope():
        if case == "sequential":
            cell.add(rnn.LSTMCell(H, prefix="a_"))
            cell.add(rnn.GRUCell(3, prefix="b_"))
        elif case == "bidirectional":
            cell.add(
                rnn.BidirectionalCell(rnn.LSTMCell(H, prefix="l_"), rnn.GRUCell(H, prefix="r_"))
            )
        else:
            cell.add(rnn.ResidualCell(rnn.GRUCell(C, prefix="g_")))
    return cell


def _run(key: str, block: Any, run: Any, dtype: str = "float32") -> dict[str, Any]:
    """Copy mxnet's parameters into ``block``, run ``run(block, x, states)`` under record and
    backward the weighted sum of outputs and states."""
    params = _ref(key, "param")
    block.initialize()
    x = mx.nd.array(REF[f"{key}__x"], dtype=dtype)
    n_states = len([k for k in REF.files if k.startswith(f"{key}__state")])
    states = [mx.nd.array(REF[f"{key}__state{i}"], dtype=dtype) for i in range(n_states)]
    # a first call (float32) fixes the deferred input sizes
    with autograd.pause():
        run(block, x.astype("float32"), [s.astype("float32") for s in states])
    got = block.collect_params()
    assert sorted(k[len(block.prefix) :] for k in got.keys()) == sorted(params)
    if dtype != "float32":
        block.cast(dtype)
    for name, p in got.items():
        p.set_data(mx.nd.array(params[name[len(block.prefix) :]], dtype=dtype))
    for a in [x, *states]:
        a.attach_grad()
    with autograd.record():
        out, new_states = run(block, x, states)
        loss = (out * mx.nd.array(REF[f"{key}__w_out"], dtype=dtype)).sum()
        for i, s in enumerate(new_states):
            loss = loss + (s * mx.nd.array(REF[f"{key}__w_state{i}"], dtype=dtype)).sum()
    loss.backward()
    return {"out": out, "states": new_states, "x": x, "init": states, "params": got, "loss": loss}


def _compare(key: str, res: dict[str, Any], block: Any) -> None:
    tol = {"rtol": 1e-4, "atol": 1e-5}
    np.testing.assert_allclose(res["out"].asnumpy(), REF[f"{key}__out"], **tol)
    for i, s in enumerate(res["states"]):
        np.testing.assert_allclose(s.asnumpy(), REF[f"{key}__out_state{i}"], **tol)
        np.testing.assert_allclose(
            res["init"][i].grad.asnumpy(), REF[f"{key}__grad_state{i}"], **tol
        )
    np.testing.assert_allclose(res["x"].grad.asnumpy(), REF[f"{key}__grad_x"], **tol)
    grads = _ref(key, "grad")
    for name, p in res["params"].items():
        np.testing.assert_allclose(p.grad().asnumpy(), grads[name[len(block.prefix) :]], **tol)


LAYER_CASES = [
    (kind, bi, layout)
    for kind in ("rnn_relu", "rnn_tanh", "lstm", "gru")
    for bi in (False, True)
    for layout in ("TNC", "NTC")
]


@pytest.mark.parametrize(("kind", "bidirectional", "layout"), LAYER_CASES)
def test_fused_layer_matches_mxnet(kind: str, bidirectional: bool, layout: str) -> None:
    key = f"layer__{kind}_{'bi' if bidirectional else 'uni'}_{layout}"
    layer = _layer(kind, bidirectional, layout)
    res = _run(key, layer, lambda b, x, s: b(x, s))
    _compare(key, res, layer)


CELL_CASES = [
    (case, layout)
    for case in ("rnn_cell", "lstm_cell", "gru_cell", "sequential", "bidirectional", "residual")
    for layout in ("TNC", "NTC")
]


@pytest.mark.parametrize(("case", "layout"), CELL_CASES)
def test_cell_unroll_matches_mxnet(case: str, layout: str) -> None:
    key = f"cell__{case}_{layout}"
    cell = _cell(case)

    def run(b: Any, x: Any, s: Any) -> Any:
        return b.unroll(T, x, s, layout=layout, merge_outputs=True)

    res = _run(key, cell, run)
    _compare(key, res, cell)


VALID_LENGTH_CASES = [
    (case, layout)
    for case in ("lstm_cell", "sequential", "bidirectional", "residual")
    for layout in ("TNC", "NTC")
]


@pytest.mark.parametrize(("case", "layout"), VALID_LENGTH_CASES)
def test_cell_unroll_valid_length_matches_mxnet(case: str, layout: str) -> None:
    key = f"cell__{case}_{layout}_vl"
    cell = _cell(case)
    lengths = mx.nd.array(REF[f"{key}__valid_length"])

    def run(b: Any, x: Any, s: Any) -> Any:
        return b.unroll(T, x, s, layout=layout, merge_outputs=True, valid_length=lengths)

    res = _run(key, cell, run)
    _compare(key, res, cell)
    # the steps after each sequence's length are 0
    out = res["out"].asnumpy()
    time_first = out if layout == "TNC" else out.swapaxes(0, 1)
    assert not time_first[2:, 0].any() and not time_first[1:, 2].any()


def _finite_difference_check(key: str, block: Any, run: Any) -> None:
    """d loss / d param against central differences in float64, for a few entries of each
    parameter."""
    res = _run(key, block, run, dtype="float64")
    assert res["out"].dtype == np.float64
    rng = np.random.RandomState(0)
    eps = 1e-6

    def loss_value() -> float:
        out, new_states = run(block, res["x"], res["init"])
        total = float((out.asnumpy() * REF[f"{key}__w_out"]).sum())
        for i, s in enumerate(new_states):
            total += float((s.asnumpy() * REF[f"{key}__w_state{i}"]).sum())
        return total

    for p in res["params"].values():
        grad = p.grad().asnumpy()
        base = p.data().asnumpy().copy()
        for flat in rng.choice(base.size, size=min(3, base.size), replace=False):
            idx = np.unravel_index(flat, base.shape)
            vals = []
            for sign in (1, -1):
                v = base.copy()
                v[idx] += sign * eps
                p.set_data(mx.nd.array(v, dtype="float64"))
                vals.append(loss_value())
            p.set_data(mx.nd.array(base, dtype="float64"))
            np.testing.assert_allclose(grad[idx], (vals[0] - vals[1]) / (2 * eps), atol=1e-6)


@pytest.mark.parametrize(
    ("kind", "bidirectional"), [("lstm", True), ("gru", False), ("rnn_tanh", True)]
)
def test_fused_layer_gradients_finite_differences(kind: str, bidirectional: bool) -> None:
    key = f"layer__{kind}_{'bi' if bidirectional else 'uni'}_TNC"
    _finite_difference_check(key, _layer(kind, bidirectional, "TNC"), lambda b, x, s: b(x, s))


@pytest.mark.parametrize("case", ["lstm_cell", "gru_cell", "bidirectional"])
def test_cell_gradients_finite_differences(case: str) -> None:
    key = f"cell__{case}_NTC"
    _finite_difference_check(
        key, _cell(case), lambda b, x, s: b.unroll(T, x, s, layout="NTC", merge_outputs=True)
    )


def test_second_derivatives_finite_differences() -> None:
    """d/dW of sum(v * d loss / dx) (autograd.grad with create_graph) against central
    differences of the first derivative, float64, for a fused GRU."""
    layer = rnn.GRU(3, input_size=2, prefix="g_")
    layer.initialize(mx.init.Uniform(0.8))
    layer.cast("float64")
    rng = np.random.RandomState(1)
    x = mx.nd.array(rng.uniform(-1, 1, (4, 2, 2)), dtype="float64")
    v = mx.nd.array(rng.uniform(-1, 1, (4, 2, 2)), dtype="float64")
    w = mx.nd.array(rng.uniform(-1, 1, (4, 2, 3)), dtype="float64")
    x.attach_grad()

    def first(create_graph: bool) -> Any:
        with autograd.record():
            loss = (layer(x) * w).sum()
            (gx,) = autograd.grad(loss, [x], create_graph=create_graph)
            s = (gx * v).sum()
        return s

    s = first(True)
    s.backward()
    p = layer.l0_h2h_weight
    grad = p.grad().asnumpy()
    assert np.abs(grad).max() > 1e-3
    base = p.data().asnumpy().copy()
    eps = 1e-6
    for idx in [(0, 0), (4, 2), (8, 1)]:
        vals = []
        for sign in (1, -1):
            b = base.copy()
            b[idx] += sign * eps
            p.set_data(mx.nd.array(b, dtype="float64"))
            vals.append(first(False).asscalar())
        p.set_data(mx.nd.array(base, dtype="float64"))
        np.testing.assert_allclose(grad[idx], (vals[0] - vals[1]) / (2 * eps), atol=1e-6)


def test_names_shapes_and_repr_as_mxnet() -> None:
    # mxnet 1.9.1
    layer = rnn.LSTM(4, num_layers=2, bidirectional=True, prefix="lstm0_")
    assert [(k, v.shape) for k, v in layer.collect_params().items()][:5] == [
        ("lstm0_l0_i2h_weight", (16, 0)),
        ("lstm0_l0_h2h_weight", (16, 4)),
        ("lstm0_l0_i2h_bias", (16,)),
        ("lstm0_l0_h2h_bias", (16,)),
        ("lstm0_r0_i2h_weight", (16, 0)),
    ]
    assert layer.r1_i2h_weight.shape == (16, 8)
    assert repr(layer) == "LSTM(None -> 4, TNC, num_layers=2, bidirectional)"
    assert repr(rnn.GRU(3, layout="NTC", input_size=2)) == "GRU(2 -> 3, NTC)"
    assert (
        repr(rnn.RNN(5, dropout=0.5, num_layers=2))
        == "RNN(None -> 5, TNC, num_layers=2, dropout=0.5)"
    )
    assert repr(rnn.LSTMCell(4)) == "LSTMCell(None -> 16)"
    assert repr(rnn.RNNCell(4, activation="relu")) == "RNNCell(None -> 4, relu)"
    assert rnn.LSTMCell(4).prefix.startswith("lstm") and rnn.GRUCell(4).prefix.startswith("gru")
    base = rnn.LSTMCell(3, prefix="c_")
    zone = rnn.ZoneoutCell(base, 0.3, 0.2)
    assert zone.prefix == "c_zoneout"
    assert repr(zone) == "ZoneoutCell(p_out=0.3, p_state=0.2, LSTMCell(None -> 12))"
    assert list(zone.collect_params().keys()) == [
        "c_i2h_weight", "c_h2h_weight", "c_i2h_bias", "c_h2h_bias"
    ]  # fmt: skip
    assert rnn.ResidualCell(rnn.GRUCell(3, prefix="g_")).prefix == "g_residualcell"
    assert repr(rnn.DropoutCell(0.5)) == "DropoutCell(rate=0.5, axes=())"
    seq = rnn.SequentialRNNCell()
    seq.add(rnn.LSTMCell(3))
    seq.add(rnn.DropoutCell(0.2))
    seq.add(rnn.GRUCell(2))
    assert seq.state_info(5) == [
        {"shape": (5, 3), "__layout__": "NC"},
        {"shape": (5, 3), "__layout__": "NC"},
        {"shape": (5, 2), "__layout__": "NC"},
    ]
    assert [s.shape for s in seq.begin_state(batch_size=5)] == [(5, 3), (5, 3), (5, 2)]
    assert len(seq) == 3 and isinstance(seq[1], rnn.DropoutCell)


def test_layer_call_forms_and_deferred_shape() -> None:
    layer = rnn.LSTM(4, input_size=3)
    layer.initialize(mx.init.Constant(0.1))
    x = mx.nd.ones((2, 3, 3))
    out = layer(x)  # no states: the outputs only (mxnet 1.9.1)
    assert isinstance(out, mx.nd.NDArray) and out.shape == (2, 3, 4)
    np.testing.assert_allclose(out.asnumpy().ravel()[:3], [0.09524119] * 3, rtol=1e-6)
    res = layer(x, layer.begin_state(3))
    assert isinstance(res, tuple) and len(res) == 2 and isinstance(res[1], list)
    with pytest.raises(ValueError, match=r"Invalid recurrent state shape. Expecting \(1, 3, 4\)"):
        layer(x, [mx.nd.zeros((1, 2, 4)), mx.nd.zeros((1, 3, 4))])
    gru = rnn.GRU(4, num_layers=2, bidirectional=True)
    gru.initialize()
    assert gru(mx.nd.ones((2, 3, 7))).shape == (2, 3, 8)
    assert gru.l0_i2h_weight.shape == (12, 7) and gru.r0_i2h_weight.shape == (12, 7)
    one = rnn.GRU(2, input_size=2)
    one.initialize()
    assert one(mx.nd.ones((2, 3, 2)), mx.nd.zeros((1, 3, 2)))[1][0].shape == (1, 3, 2)


def test_save_parameters_keys_as_mxnet(tmp_path: Path) -> None:
    f = str(tmp_path / "p.params")
    bi = rnn.GRU(4, num_layers=2, bidirectional=True, input_size=3)
    bi.initialize()
    bi.save_parameters(f)
    # mxnet 1.9.1
    assert sorted(mx.nd.load(f).keys())[:4] == [
        "_unfused.0.l_cell.h2h_bias",
        "_unfused.0.l_cell.h2h_weight",
        "_unfused.0.l_cell.i2h_bias",
        "_unfused.0.l_cell.i2h_weight",
    ]
    uni = rnn.LSTM(2, input_size=2)
    uni.initialize()
    uni.save_parameters(f)
    assert sorted(mx.nd.load(f).keys()) == [
        "_unfused.0.h2h_bias", "_unfused.0.h2h_weight", "_unfused.0.i2h_bias",
        "_unfused.0.i2h_weight",
    ]  # fmt: skip
    other = rnn.LSTM(2, input_size=2)
    other.load_parameters(f)
    np.testing.assert_array_equal(
        other.l0_h2h_weight.data().asnumpy(), uni.l0_h2h_weight.data().asnumpy()
    )


def test_cell_steps_and_unroll_forms() -> None:
    cell = rnn.GRUCell(3, input_size=2)
    cell.initialize(mx.init.Constant(0.2))
    out, st = cell(mx.nd.ones((4, 2)), cell.begin_state(batch_size=4))
    assert out.shape == (4, 3) and len(st) == 1
    outs, _ = cell.unroll(3, mx.nd.ones((4, 3, 2)))
    assert isinstance(outs, list) and len(outs) == 3 and outs[0].shape == (4, 3)
    outs, _ = cell.unroll(3, [mx.nd.ones((4, 2))] * 3, merge_outputs=True, layout="TNC")
    assert outs.shape == (3, 4, 3)
    outs, _ = cell.unroll(3, mx.nd.ones((3, 4, 2)), layout="TNC", merge_outputs=True)
    np.testing.assert_allclose(outs.asnumpy().ravel()[:2], [0.15247822] * 2, rtol=1e-6)  # mxnet
    with pytest.raises(AssertionError):
        cell.unroll(4, mx.nd.ones((4, 3, 2)), merge_outputs=True)
    with pytest.raises(NotImplementedError, match="Bidirectional cannot be stepped"):
        rnn.BidirectionalCell(rnn.GRUCell(2), rnn.GRUCell(2))(mx.nd.ones((1, 2)), [])
    outs, st = cell.unroll(3, mx.nd.ones((4, 3, 2)), valid_length=mx.nd.array([1, 2, 3, 3]))
    # mxnet 1.9.1: with valid_length the outputs come merged (merge_outputs=None)
    assert isinstance(outs, mx.nd.NDArray) and outs.shape == (4, 3, 3)
    np.testing.assert_allclose(outs.asnumpy()[0, :, 0], [0.15247822, 0, 0], rtol=1e-6)
    np.testing.assert_allclose(
        st[0].asnumpy()[:, 0], [0.15247822, 0.25683922, 0.33113566, 0.33113566], rtol=1e-6
    )
    hybrid = rnn.HybridSequentialRNNCell()
    hybrid.add(rnn.LSTMCell(3, input_size=2))
    hybrid.add(rnn.GRUCell(2, input_size=3))
    hybrid.initialize()
    out, states = hybrid(mx.nd.ones((5, 2)), hybrid.begin_state(batch_size=5))
    assert out.shape == (5, 2) and [s.shape for s in states] == [(5, 3), (5, 3), (5, 2)]


def test_modifier_cells() -> None:
    base = rnn.GRUCell(3, input_size=2)
    zone = rnn.ZoneoutCell(base, 0.5, 0.5)
    zone.initialize(mx.init.Constant(0.2))
    out, _ = zone.unroll(2, mx.nd.ones((4, 2, 2)), merge_outputs=True)
    # not training: the base cell's values (mxnet 1.9.1)
    np.testing.assert_allclose(out.asnumpy().ravel()[:3], [0.15247822] * 3, rtol=1e-6)
    with pytest.raises(AssertionError, match="After applying modifier cells"):
        base.begin_state(batch_size=2)
    with pytest.raises(AssertionError, match="is already modified"):
        rnn.ZoneoutCell(base)
    # training: each output element is the new value or the previous output (zeros at t=0)
    mx.random.seed(3)
    with autograd.record():
        out, _ = zone.unroll(2, mx.nd.ones((64, 2, 2)), merge_outputs=True)
    first = out.asnumpy()[:, 0]
    zero, new = np.isclose(first, 0.0), np.isclose(first, 0.15247822, rtol=1e-6)
    assert (zero | new).all() and zero.any() and new.any()
    drop = rnn.DropoutCell(0.5)
    out, states = drop.unroll(3, mx.nd.ones((2, 3, 2)), merge_outputs=True)
    assert out.shape == (2, 3, 2) and states == [] and float(out.sum().asscalar()) == 12.0
    with autograd.record():
        out, _ = drop.unroll(3, mx.nd.ones((50, 3, 2)), merge_outputs=True)
    assert set(np.unique(out.asnumpy())) == {0.0, 2.0}
    res = rnn.ResidualCell(rnn.GRUCell(2, input_size=2))
    res.initialize(mx.init.Constant(0.2))
    x = mx.nd.ones((4, 3, 2))
    out, _ = res.unroll(3, x, merge_outputs=True)
    res.base_cell._modified = False
    base_out, _ = res.base_cell.unroll(3, x, merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), base_out.asnumpy() + 1.0, rtol=1e-6)


def test_fused_dropout_between_layers() -> None:
    layer = rnn.LSTM(4, num_layers=2, dropout=0.5, input_size=3)
    layer.initialize()
    x = mx.nd.ones((3, 2, 3))
    a = layer(x).asnumpy()
    np.testing.assert_array_equal(a, layer(x).asnumpy())  # not training: no dropout
    mx.random.seed(0)
    with autograd.record():
        b = layer(x).asnumpy()
    assert not np.allclose(a, b)
    single = rnn.LSTM(4, num_layers=1, dropout=0.5, input_size=3)
    single.initialize()
    with autograd.record():
        c = single(x).asnumpy()
    np.testing.assert_array_equal(c, single(x).asnumpy())  # one layer: nothing between layers


def test_nd_rnn_matches_mxnet() -> None:
    x = mx.nd.array(np.linspace(-1, 1, 2 * 3 * 2).reshape(2, 3, 2))
    par = mx.nd.array(np.cos(np.arange(4 * 3 * (2 + 3) + 2 * 4 * 3)) * 0.5)
    z = mx.nd.zeros((1, 3, 3))
    out = mx.nd.RNN(x, par, z, z, state_size=3, num_layers=1, mode="lstm")
    assert isinstance(out, mx.nd.NDArray) and out.shape == (2, 3, 3)
    # mxnet 1.9.1
    np.testing.assert_allclose(
        out.asnumpy().ravel()[:4], [-0.07859082, -0.1561225, 0.26269847, -0.10589478], rtol=1e-5
    )
    res = mx.nd.RNN(x, par, z, z, state_size=3, num_layers=1, mode="lstm", state_outputs=True)
    assert len(res) == 3
    np.testing.assert_allclose(
        res[2].asnumpy().ravel()[:4], [-0.28282937, -0.39251202, 0.29363576, -0.26917583], rtol=1e-5
    )
    with pytest.raises(mx.base.MXNetError, match=r"parameters has shape \(84,\), expected"):
        mx.nd.RNN(x, par, z, state_size=3, num_layers=1, mode="gru")
    with pytest.raises(mx.base.MXNetError, match="state_cell is required for lstm"):
        mx.nd.RNN(x, par, z, state_size=3, num_layers=1, mode="lstm")
    with pytest.raises(NotImplementedError, match="state clipping"):
        mx.nd.RNN(x, par, z, z, state_size=3, num_layers=1, mode="lstm", lstm_state_clip_min=0)
    with pytest.raises(mx.base.MXNetError, match="projection_size is only supported for"):
        mx.nd.RNN(x, par, z, state_size=3, num_layers=1, mode="gru", projection_size=2)


def test_sequence_last_and_reverse_match_mxnet() -> None:
    x = mx.nd.array(np.arange(24).reshape(4, 3, 2))
    lengths = mx.nd.array([2, 4, 1])
    rev = mx.nd.SequenceReverse(x, lengths, use_sequence_length=True)
    # mxnet 1.9.1 (the steps after a sequence's length stay in place)
    assert rev.asnumpy()[:, :, 0].tolist() == [
        [6.0, 20.0, 4.0], [0.0, 14.0, 10.0], [12.0, 8.0, 16.0], [18.0, 2.0, 22.0]
    ]  # fmt: skip
    assert mx.nd.SequenceReverse(x).asnumpy()[:, :, 0].tolist() == [
        [18.0, 20.0, 22.0], [12.0, 14.0, 16.0], [6.0, 8.0, 10.0], [0.0, 2.0, 4.0]
    ]  # fmt: skip
    last = mx.nd.SequenceLast(x, lengths, use_sequence_length=True)
    assert last.asnumpy().tolist() == [[6.0, 7.0], [20.0, 21.0], [4.0, 5.0]]
    assert mx.nd.SequenceLast(x).asnumpy().tolist() == [[18.0, 19.0], [20.0, 21.0], [22.0, 23.0]]
    xs = mx.nd.array(np.arange(24).reshape(3, 4, 2))
    last1 = mx.nd.SequenceLast(xs, lengths, use_sequence_length=True, axis=1)
    assert last1.asnumpy().tolist() == [[2.0, 3.0], [14.0, 15.0], [16.0, 17.0]]
    x.attach_grad()
    with autograd.record():
        y = mx.nd.SequenceReverse(x, lengths, use_sequence_length=True)
        loss = (y * mx.nd.array(np.arange(24).reshape(4, 3, 2))).sum()
    loss.backward()
    assert x.grad.asnumpy()[:, :, 0].tolist() == rev.asnumpy()[:, :, 0].tolist()  # mxnet 1.9.1
    xs.attach_grad()
    with autograd.record():
        loss = (mx.nd.SequenceLast(xs, lengths, use_sequence_length=True, axis=1) * 2).sum()
    loss.backward()
    assert xs.grad.asnumpy()[:, :, 1].tolist() == [
        [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0], [2.0, 0.0, 0.0, 0.0]
    ]  # fmt: skip
    with pytest.raises(mx.base.MXNetError, match=r"sequence_length must lie in \[1, 4\]"):
        mx.nd.SequenceLast(x, mx.nd.array([0, 1, 2]), use_sequence_length=True)
    with pytest.raises(mx.base.MXNetError, match="only axis 0"):
        mx.nd.SequenceReverse(x, axis=1)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_projection_matches_mxnet(bidirectional: bool) -> None:
    key = f"proj__{'bi' if bidirectional else 'uni'}"
    layer = rnn.LSTM(H, num_layers=2, bidirectional=bidirectional, projection_size=2, prefix="net_")
    params = _ref(key, "param")
    # mxnet 1.9.1's names and shapes (h2r_weight after each layer and direction's biases)
    got = layer.collect_params()
    assert [k[4:] for k in got.keys()] == list(params)
    assert layer.l0_h2r_weight.shape == (2, H) and layer.l1_i2h_weight.shape == (
        4 * H,
        2 * (1 + bidirectional),
    )
    layer.initialize()
    x = mx.nd.array(REF[f"{key}__x"])
    states = [mx.nd.array(REF[f"{key}__state{i}"]) for i in range(2)]
    layer(x, states)
    for name, p in got.items():
        p.set_data(mx.nd.array(params[name[4:]]))
    out, new_states = layer(x, states)
    tol = {"rtol": 1e-4, "atol": 1e-5}
    np.testing.assert_allclose(out.asnumpy(), REF[f"{key}__out"], **tol)
    for i, st in enumerate(new_states):
        np.testing.assert_allclose(st.asnumpy(), REF[f"{key}__out_state{i}"], **tol)
    assert [st.shape for st in layer.begin_state(3)] == [
        (2 * (1 + bidirectional), 3, 2), (2 * (1 + bidirectional), 3, H)
    ]  # fmt: skip
    # mx.nd.RNN with the flat parameter vector (weights i2h, h2h, h2r; then the biases)
    names = [f"{d}{k}" for k in range(2) for d in ["l", "r"][: 1 + bidirectional]]
    flat = [
        params[f"{n}_{g}"].ravel()
        for n in names
        for g in ("i2h_weight", "h2h_weight", "h2r_weight")
    ]
    flat += [params[f"{n}_{g}"].ravel() for n in names for g in ("i2h_bias", "h2h_bias")]
    res = mx.nd.RNN(
        x, mx.nd.array(np.concatenate(flat)), states[0], states[1], state_size=H, num_layers=2,
        bidirectional=bidirectional, mode="lstm", projection_size=2, state_outputs=True,
    )  # fmt: skip
    np.testing.assert_allclose(res[0].asnumpy(), REF[f"{key}__out"], **tol)
    np.testing.assert_allclose(res[2].asnumpy(), REF[f"{key}__out_state1"], **tol)


def test_lstm_projection_gradients_finite_differences() -> None:
    layer = rnn.LSTM(3, num_layers=2, bidirectional=True, projection_size=2, input_size=2)
    layer.initialize(mx.init.Uniform(0.8))
    layer.cast("float64")
    rng = np.random.RandomState(2)
    x = mx.nd.array(rng.uniform(-1, 1, (3, 2, 2)), dtype="float64")
    w = rng.uniform(-1, 1, (3, 2, 4))

    def loss_value() -> float:
        return float((layer(x).asnumpy() * w).sum())

    with autograd.record():
        loss = (layer(x) * mx.nd.array(w, dtype="float64")).sum()
    loss.backward()
    eps = 1e-6
    for p in (layer.l0_h2r_weight, layer.r1_h2h_weight, layer.l0_i2h_weight):
        grad = p.grad().asnumpy()
        base = p.data().asnumpy().copy()
        for idx in [(0, 0), (1, 1)]:
            vals = []
            for sign in (1, -1):
                b = base.copy()
                b[idx] += sign * eps
                p.set_data(mx.nd.array(b, dtype="float64"))
                vals.append(loss_value())
            p.set_data(mx.nd.array(base, dtype="float64"))
            np.testing.assert_allclose(grad[idx], (vals[0] - vals[1]) / (2 * eps), atol=1e-6)


def test_refusals() -> None:
    with pytest.raises(ValueError, match="activation must be 'relu' or 'tanh'"):
        rnn.RNN(3, activation="sigmoid")
    with pytest.raises(AssertionError, match="Invalid layout NCT"):
        rnn.LSTM(3, layout="NCT")
    with pytest.raises(NotImplementedError, match="state_clip_min"):
        rnn.LSTM(3, state_clip_min=-1.0, state_clip_max=1.0)
    with pytest.raises(NotImplementedError, match="use_sequence_length"):
        rnn.GRU(3, use_sequence_length=True)


def test_modifier_cells_take_func_first_as_mxnet() -> None:
    # mxnet 1.9.1's ModifierCell.begin_state(func=zeros, **kwargs): func is the first positional
    # argument, the batch size a keyword (the other cells take batch_size first)
    cell = mx.gluon.rnn.ZoneoutCell(mx.gluon.rnn.LSTMCell(3, input_size=2))
    cell.initialize()
    states = cell.begin_state(mx.nd.ones, batch_size=4)
    assert [s.shape for s in states] == [(4, 3), (4, 3)]
    assert all((s.asnumpy() == 1).all() for s in states)
    assert [s.shape for s in cell.begin_state(batch_size=2)] == [(2, 3), (2, 3)]
