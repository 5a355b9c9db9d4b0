"""Copying, pickling and composing whole networks in the mxnet layer, as mxnet 1.9.1's own symbol
tests use them: ``copy.copy``/``deepcopy`` copy the graph, pickling goes through the JSON text,
a composed network groups with its parts, ``mx.sym.elemwise_add`` and partial shape inference
feeding a full one.
"""

from __future__ import annotations

import copy
import pickle

import gradhub_compat.mxnet as mx


def _mlp() -> mx.sym.Symbol:
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data=data, name="fc1", num_hidden=10)
    net = mx.sym.Activation(net, act_type="relu", name="r1")
    return mx.sym.FullyConnected(data=net, name="fc2", num_hidden=3)


def test_copy_and_pickle_keep_the_graph() -> None:
    net = _mlp()
    for other in (copy.copy(net), copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert other is not net and other.tojson() == net.tojson()
    c = copy.copy(net)
    c._name = "renamed"  # the copy's nodes are its own
    assert net.name == "fc2"


def test_composed_network_groups_with_its_parts() -> None:
    net1 = _mlp()
    net2 = mx.sym.FullyConnected(name="fc3", num_hidden=10)
    net2 = mx.sym.Activation(data=net2, act_type="relu")
    net2 = mx.sym.FullyConnected(data=net2, name="fc4", num_hidden=20)
    composed = net2(fc3_data=net1, name="composed")
    multi = mx.sym.Group([composed, net1])
    assert len(multi.list_outputs()) == 2 and len(multi) == 2
    assert multi.list_outputs() == ["composed_output", "fc2_output"]
    args, outs, _ = multi.infer_shape(data=(4, 7))
    assert outs == [(4, 20), (4, 3)]
    assert dict(zip(multi.list_arguments(), args))["fc3_weight"] == (10, 3)


def test_elemwise_add_and_partial_then_full_inference() -> None:
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    e = mx.sym.elemwise_add(a, b)
    assert e.name.startswith("elemwise_add") and e.op == "_Plus"  # mxnet 1.9.1: elemwise_add0
    data, prev = mx.sym.Variable("data"), mx.sym.Variable("prevstate")
    x2h = mx.sym.FullyConnected(data=data, name="x2h", num_hidden=16)
    h2h = mx.sym.FullyConnected(data=prev, name="h2h", num_hidden=16)
    out = mx.sym.Activation(data=mx.sym.elemwise_add(x2h, h2h), name="out", act_type="relu")
    assert out.infer_shape(data=(5, 8)) == (None, None, None)
    args, outs, _ = out.infer_shape_partial(data=(5, 8))
    shapes = dict(zip(out.list_arguments(), args))
    assert shapes["x2h_weight"] == (16, 8) and shapes["h2h_weight"] == () and outs == [(5, 16)]
    args, _, _ = out.infer_shape(data=(5, 8), prevstate=outs[0])
    assert dict(zip(out.list_arguments(), args))["h2h_weight"] == (16, 16)
    hinted = mx.sym.elemwise_add(mx.sym.Variable("a", shape=(2, 3)), b)
    assert hinted.infer_shape()[0] == [(2, 3), (2, 3)]
    assert hinted.infer_shape(a=(5, 6))[0] == [(5, 6), (5, 6)]
