"""The mxnet layer's symbol composition: layers built without data (their free input is the
variable ``NAME_data``), ``Symbol.__call__`` with keyword arguments (``sym(NAME=other)``), renaming
with ``name=``, and mxnet's errors. Expected names and errors were printed by mxnet 1.9.1.
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from compat.mxnet.helpers import _bind


def test_layer_without_data_and_keyword_composition() -> None:
    net = mx.sym.FullyConnected(num_hidden=10, name="fc")
    assert net.list_arguments() == ["fc_data", "fc_weight", "fc_bias"]  # mxnet 1.9.1
    other = mx.sym.Variable("x")
    net2 = net(fc_data=other)
    assert net2.list_arguments() == ["x", "fc_weight", "fc_bias"]
    assert net2.name == "fc" and net2.list_outputs() == ["fc_output"]
    assert net.list_arguments() == ["fc_data", "fc_weight", "fc_bias"]  # the original is kept
    net4 = net(fc_data=other, name="fc2")
    assert net4.name == "fc2" and net4.list_outputs() == ["fc2_output"]
    assert net4.list_arguments() == ["x", "fc_weight", "fc_bias"]
    assert net.name == "fc"
    assert mx.sym.SoftmaxOutput(name="sm").list_arguments() == ["sm_data", "sm_label"]
    assert mx.sym.SoftmaxOutput(name="sm")(sm_data=other).list_arguments() == ["x", "sm_label"]
    act = mx.sym.Activation(act_type="relu")
    assert act.list_arguments() == [f"{act.name}_data"] and act.name.startswith("activation")
    q = mx.sym.FullyConnected(weight=mx.sym.Variable("W"), num_hidden=2, name="q")
    assert q.list_arguments() == ["q_data", "W", "q_bias"]
    assert mx.sym.dot(name="dd").list_arguments() == ["dd_lhs", "dd_rhs"]
    assert mx.sym.broadcast_add(name="bb").list_arguments() == ["bb_lhs", "bb_rhs"]


def test_composition_replaces_arguments_deep_in_the_graph() -> None:
    f = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="h")
    g = mx.sym.Activation(f, act_type="relu", name="r")
    h = g(data=mx.sym.Variable("x"), h_weight=mx.sym.Variable("W"))
    assert h.list_arguments() == ["x", "W", "h_bias"]  # mxnet 1.9.1
    assert h.get_internals().list_outputs() == ["x", "W", "h_bias", "h_output", "r_output"]
    assert g.list_arguments() == ["data", "h_weight", "h_bias"]
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    c = a + b
    d = c(a=mx.sym.Variable("p") * 2)
    assert d.list_arguments() == ["p", "b"] and d.name == c.name
    z = c(a=b, name="zz")
    assert z.name == "zz" and z.list_outputs() == ["zz_output"]
    assert mx.sym.Group([a, b])(a=b).list_outputs() == ["b", "b"]


def test_composed_network_computes_as_the_direct_one() -> None:
    layer = mx.sym.FullyConnected(num_hidden=2, name="fc")
    x = mx.sym.Variable("x")
    composed = mx.sym.Activation(layer(fc_data=x * 2), act_type="tanh", name="t")
    direct = mx.sym.Activation(
        mx.sym.FullyConnected(x * 2, num_hidden=2, name="fc"), act_type="tanh", name="t"
    )
    args = {
        "x": np.array([[0.1, -0.2, 0.3]]),
        "fc_weight": np.array([[0.5, 0.1, -0.3], [0.2, 0.2, 0.2]]),
        "fc_bias": np.array([0.1, -0.1]),
    }
    results = []
    for sym in (composed, direct):
        ex = _bind(sym, args)
        out = ex.forward(is_train=True)[0].asnumpy()
        ex.backward(mx.nd.ones((1, 2)))
        results.append((out, [g.asnumpy() for g in ex.grad_arrays]))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    for ga, gb in zip(results[0][1], results[1][1]):
        np.testing.assert_array_equal(ga, gb)


def test_composition_errors_as_mxnet() -> None:
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    c = a + b
    with pytest.raises(TypeError, match="either as positional or keyword arguments, not both"):
        c(mx.sym.Variable("q"), a=mx.sym.Variable("r"))
    with pytest.raises(mx.base.MXNetError, match="ComposeKeyword argument name zz not found"):
        c(zz=mx.sym.Variable("q"))
    with pytest.raises(mx.base.MXNetError, match="General composition only support kwargs"):
        c(a, b)
    with pytest.raises(TypeError, match="Compose expect `Symbol` as arguments"):
        c(a=1)
    with pytest.raises(TypeError, match="Compose expect `Symbol` as arguments"):
        c(1)
    net = mx.sym.FullyConnected(num_hidden=10, name="fc")
    # mxnet 1.9.1: the free input is fc_data, not data
    with pytest.raises(mx.base.MXNetError, match="argument name data not found"):
        net(data=a)
    with pytest.raises(mx.base.MXNetError, match="has 2 outputs"):
        c(a=mx.sym.Group([a, b]))
    assert a(b).name == "a"  # mxnet 1.9.1 returns a copy of a variable unchanged
