"""``mx.sym.Deconvolution``: the arguments it creates, the shapes it infers (stride, pad, adj,
target_shape, dilate, num_group, 1-D), its JSON attributes, the output and the gradients of data,
weight and bias after an executor's forward and backward, compared with mxnet 1.9.1's
(data/deconvolution_symbol_reference.json, written by
data/make_deconvolution_symbol_reference.py); float64 gradients against finite differences;
the JSON round trip, ``Module`` training and the errors.
"""

from __future__ import annotations

import json
import pathlib

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

REF = json.loads(
    (pathlib.Path(__file__).parent / "data" / "deconvolution_symbol_reference.json").read_text(
        encoding="utf-8"
    )
)
CASES = {  # data/make_deconvolution_symbol_reference.py's CASES
    "basic": {"kernel": (3, 3), "num_filter": 4},
    "stride_pad_adj": {
        "kernel": (4, 3),
        "stride": (2, 3),
        "pad": (1, 1),
        "adj": (1, 2),
        "num_filter": 2,
        "no_bias": False,
    },
    "target": {"kernel": (4, 4), "stride": (2, 2), "target_shape": (9, 8), "num_filter": 3},
    "group": {
        "kernel": (3, 2),
        "stride": (1, 2),
        "num_filter": 6,
        "num_group": 2,
        "no_bias": False,
    },
    "dil": {"kernel": (3, 2), "stride": (1, 2), "dilate": (2, 1), "num_filter": 3},
    "1d": {"kernel": (3,), "stride": (2,), "pad": (1,), "num_filter": 3, "no_bias": False},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_deconvolution_symbol_matches_mxnet(name: str) -> None:
    want = REF[name]
    x0 = np.random.RandomState(0).randn(2, 4, 4, 5).astype(np.float32)
    xv = x0[:, :, :, 0] if name == "1d" else x0
    d = mx.sym.Deconvolution(mx.sym.var("x"), name="dc", **CASES[name])
    args, outs, _ = d.infer_shape(x=xv.shape)
    assert d.list_arguments() == want["args"]
    assert [list(a) for a in args] == want["shapes"]
    assert list(outs[0]) == want["out"]
    assert json.loads(d.tojson())["nodes"][-1].get("attrs") == want["attrs"]
    # the parameters, then the head gradient, from one generator (as the reference script)
    rs = np.random.RandomState(1)
    params = {n: rs.randn(*s).astype(np.float32) for n, s in zip(d.list_arguments()[1:], args[1:])}
    head = mx.nd.array(rs.randn(*outs[0]).astype(np.float32))
    ex = d.simple_bind(mx.cpu(), x=xv.shape)
    for n, v in {"x": xv, **params}.items():
        ex.arg_dict[n][:] = v
    for _ in range(2):  # (the second run goes through the recorded plan)
        o = ex.forward(is_train=True)[0]
        ex.backward(head)
    np.testing.assert_allclose(o.asnumpy(), want["y"], rtol=1e-5, atol=1e-5)
    for n, g in want["grads"].items():
        np.testing.assert_allclose(ex.grad_dict[n].asnumpy(), g, rtol=1e-5, atol=1e-5)


def test_gradients_match_finite_differences() -> None:
    rs = np.random.RandomState(4)
    d = mx.sym.Deconvolution(
        mx.sym.var("x"),
        kernel=(3, 2),
        stride=(2, 1),
        pad=(1, 0),
        adj=(1, 0),
        num_filter=4,
        num_group=2,
        no_bias=False,
        name="dc",
    )
    shapes = {"x": (2, 2, 3, 4)}
    args, outs, _ = d.infer_shape(**shapes)
    vals = {n: rs.randn(*s) for n, s in zip(d.list_arguments(), args)}
    head = rs.randn(*outs[0])
    ex = d.simple_bind(mx.cpu(), type_dict={"x": "float64"}, **shapes)

    def f(v: dict[str, np.ndarray]) -> float:
        for n, a in v.items():
            ex.arg_dict[n][:] = a
        return float((ex.forward(is_train=True)[0].asnumpy() * head).sum())

    f(vals)
    ex.backward(mx.nd.array(head, dtype="float64"))
    grads = {n: ex.grad_dict[n].asnumpy().copy() for n in vals}
    eps = 1e-6
    for n in vals:
        direction = rs.randn(*vals[n].shape)
        up = {**vals, n: vals[n] + eps * direction}
        down = {**vals, n: vals[n] - eps * direction}
        fd = (f(up) - f(down)) / (2 * eps)
        assert (grads[n] * direction).sum() == pytest.approx(fd, rel=1e-7), n


def test_json_round_trip_and_module_training() -> None:
    net = mx.sym.Deconvolution(
        mx.sym.var("data"), kernel=(2, 2), stride=(2, 2), num_filter=2, no_bias=False, name="up"
    )
    assert mx.sym.load_json(net.tojson()).tojson() == net.tojson()
    plain = mx.sym.Deconvolution(mx.sym.var("data"), kernel=(2, 2), num_filter=2, name="p")
    assert mx.sym.load_json(plain.tojson()).list_arguments() == ["data", "p_weight"]
    loss = mx.sym.make_loss(mx.sym.mean(mx.sym.square(net - mx.sym.var("target"))))
    rs = np.random.RandomState(0)
    x = rs.randn(8, 3, 2, 2).astype(np.float32)
    y = rs.randn(8, 2, 4, 4).astype(np.float32)
    it = mx.io.NDArrayIter(x, y, batch_size=4, label_name="target")
    mod = mx.mod.Module(loss, data_names=("data",), label_names=("target",))
    mod.fit(
        it,
        num_epoch=5,
        optimizer="sgd",
        optimizer_params={"learning_rate": 0.5},
        eval_metric=mx.metric.Loss(),
    )
    first = mod.score(it, mx.metric.Loss())[0][1]
    it.reset()
    with pytest.warns(UserWarning, match="already initialized"):  # (as mxnet: fit again)
        mod.fit(
            it,
            num_epoch=20,
            optimizer="sgd",
            optimizer_params={"learning_rate": 0.5},
            eval_metric=mx.metric.Loss(),
        )
    assert mod.score(it, mx.metric.Loss())[0][1] < first


def test_errors() -> None:
    x = mx.sym.var("x")
    with pytest.raises(ValueError, match="kernel and num_filter"):
        mx.sym.Deconvolution(x, num_filter=2)
    with pytest.raises(ValueError, match="must have 2 values"):
        mx.sym.Deconvolution(x, kernel=(2, 2), stride=(1,), num_filter=2)
    with pytest.raises(ValueError, match="no_bias=True"):
        mx.sym.Deconvolution(x, mx.sym.var("w"), mx.sym.var("b"), kernel=(2, 2), num_filter=2)
    with pytest.raises(NotImplementedError, match="layout"):
        mx.sym.Deconvolution(x, kernel=(2, 2), num_filter=2, layout="NHWC")
    bad = mx.sym.Deconvolution(x, kernel=(3, 3), stride=(2, 2), adj=(2, 2), num_filter=2)
    with pytest.raises(mx.base.MXNetError, match="adj must be smaller"):
        bad.infer_shape(x=(1, 2, 4, 4))
    grouped = mx.sym.Deconvolution(x, kernel=(3, 3), num_filter=4, num_group=2)
    with pytest.raises(mx.base.MXNetError, match="num_group=2 must divide"):
        grouped.infer_shape(x=(1, 3, 4, 4))
    too_big = mx.sym.Deconvolution(x, kernel=(2, 2), target_shape=(9, 9), num_filter=2)
    with pytest.raises(mx.base.MXNetError, match="too big target shape"):
        too_big.infer_shape(x=(1, 2, 4, 4))
