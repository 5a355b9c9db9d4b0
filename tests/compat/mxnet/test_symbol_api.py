"""The mxnet layer's symbol operators and graph introspection: ``mx.sym.maximum``/``minimum``/
``dot``/``softmax`` (values and gradients recorded from mxnet 1.9.1), ``get_internals``,
``get_children``, indexing a group, and ``infer_type`` (results and errors as mxnet 1.9.1's).
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from compat.mxnet.helpers import _bind


def _run(sym: mx.sym.Symbol, args: dict[str, object], head: object) -> tuple[np.ndarray, list]:
    ex = _bind(sym, args)
    out = ex.forward(is_train=True)[0].asnumpy()
    ex.backward(mx.nd.array(head))
    return out, [g.asnumpy() for g in ex.grad_arrays]


def test_maximum_minimum_names_values_and_tie_gradients() -> None:
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    m = mx.sym.maximum(a, b)
    assert m.name.startswith("_maximum") and m.op == "_Maximum"
    # mxnet 1.9.1: forward [2, 5, 3]; at the tie (5, 5) the gradient goes to the left operand
    out, (ga, gb) = _run(m, {"a": [1, 5, 3], "b": [2, 5, 1]}, np.ones(3))
    np.testing.assert_array_equal(out, [2, 5, 3])
    np.testing.assert_array_equal(ga, [0, 1, 1])
    np.testing.assert_array_equal(gb, [1, 0, 0])
    n = mx.sym.minimum(a, 2)
    assert n.name.startswith("_minimumscalar") and n.list_arguments() == ["a"]
    out, (ga,) = _run(n, {"a": [1, 2, 3]}, np.ones(3))
    np.testing.assert_array_equal(out, [1, 2, 2])  # mxnet 1.9.1
    np.testing.assert_array_equal(ga, [1, 1, 0])  # the tie goes to the symbol
    r = mx.sym.maximum(3, a, name="r")
    assert r.op == "_MaximumScalar" and r.list_outputs() == ["r_output"]
    out, (ga,) = _run(r, {"a": [1, 3, 5]}, [2, 2, 2])
    np.testing.assert_array_equal(out, [3, 3, 5])
    np.testing.assert_array_equal(ga, [0, 2, 2])
    assert mx.sym.maximum(2, 3) == 3 and mx.sym.minimum(2, 3) == 2  # as mxnet: plain numbers
    with pytest.raises(TypeError, match=r"mx.sym.maximum: types \(str, Symbol\) not supported"):
        mx.sym.maximum("x", a)


def test_dot_values_gradients_shapes_and_errors() -> None:
    a = np.arange(12, dtype=np.float32).reshape(2, 3, 2) / 10
    b = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    g = np.arange(18, dtype=np.float32).reshape(2, 3, 3) / 7
    lhs, rhs = mx.sym.Variable("a"), mx.sym.Variable("b")
    d = mx.sym.dot(lhs, rhs)
    assert d.name.startswith("dot") and d.list_outputs() == [f"{d.name}_output"]
    out, (ga, gb) = _run(d, {"a": a, "b": b}, g)
    # recorded from mxnet 1.9.1 (rounded to 5 decimals)
    np.testing.assert_allclose(
        out[1], [[-0.5, 0.8, 2.1], [-0.7, 1.0, 2.7], [-0.9, 1.2, 3.3]], rtol=1e-5
    )
    np.testing.assert_allclose(
        ga[1], [[-4.0, 8.85714], [-5.28571, 11.42857], [-6.57143, 14.0]], rtol=1e-5
    )
    np.testing.assert_allclose(
        gb, [[4.71429, 5.14286, 5.57143], [5.35714, 5.87143, 6.38571]], rtol=1e-5
    )
    np.testing.assert_allclose(out, np.tensordot(a, b, axes=1), rtol=1e-6)
    # transposes reverse the axes (x.T), as mxnet; the shape mxnet 1.9.1 infers
    t = mx.sym.dot(lhs, rhs, transpose_a=True, transpose_b=True)
    assert t.infer_shape(a=(3, 2), b=(4, 3)) == ([(3, 2), (4, 3)], [(2, 4)], [])
    x = np.random.default_rng(0).normal(size=(3, 2)).astype(np.float32)
    y = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    out, (gx, gy) = _run(t, {"a": x, "b": y}, np.ones((2, 4)))
    np.testing.assert_allclose(out, x.T @ y.T, rtol=1e-5)
    np.testing.assert_allclose(gx, (np.ones((2, 4)) @ y).T, rtol=1e-5)
    np.testing.assert_allclose(gy, (x @ np.ones((2, 4))).T, rtol=1e-5)
    assert mx.sym.dot(lhs, rhs).infer_shape(a=(3,), b=(3,))[1] == [(1,)]
    # mxnet 1.9.1: "Error in operator d: ... dot shape error: [3,4] X [2,4]"
    bad = mx.sym.dot(lhs, rhs, transpose_a=True, transpose_b=True, name="d")
    with pytest.raises(mx.base.MXNetError, match=r"Error in operator d: .*\[3,4\] X \[2,4\]"):
        bad.infer_shape(a=(3, 4), b=(2, 4))
    with pytest.raises(TypeError, match=r"mx\.sym\.dot: rhs must be a Symbol"):
        mx.sym.dot(lhs, 2)
    with pytest.raises(NotImplementedError, match="forward_stype"):
        mx.sym.dot(lhs, rhs, forward_stype="csr")


def test_softmax_values_and_gradient() -> None:
    x = np.array([[1.0, 2, 3], [0, -1, 4]], dtype=np.float32)
    head = np.array([[1, 0, 0], [0, 2, 0]], dtype=np.float32)
    s = mx.sym.softmax(mx.sym.Variable("a"))
    assert s.name.startswith("softmax")
    out, (g,) = _run(s, {"a": x}, head)
    # mxnet 1.9.1
    np.testing.assert_allclose(
        out, [[0.09003057, 0.24472848, 0.6652409], [0.01786798, 0.00657326, 0.9755587]], rtol=1e-5
    )
    np.testing.assert_allclose(
        g,
        [[0.08192506, -0.02203304, -0.05989201], [-0.0002349, 0.01306011, -0.01282521]],
        rtol=1e-4,
        atol=1e-7,
    )
    s2 = mx.sym.softmax(mx.sym.Variable("a"), axis=0, temperature=2.0, name="sm")
    out, (g,) = _run(s2, {"a": x}, head)
    np.testing.assert_allclose(
        out,
        [[0.62245935, 0.81757444, 0.37754068], [0.37754068, 0.18242551, 0.62245935]],
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        g, [[0.11750185, -0.14914644, 0.0], [-0.11750186, 0.14914645, 0.0]], rtol=1e-4, atol=1e-7
    )
    with pytest.raises(NotImplementedError, match="use_length"):
        mx.sym.softmax(mx.sym.Variable("a"), use_length=True)


def _net() -> mx.sym.Symbol:
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=6, name="fc")
    act = mx.sym.Activation(fc, act_type="relu", name="relu")
    return mx.sym.SoftmaxOutput(act, name="softmax")


def test_get_internals_children_and_indexing() -> None:
    net = _net()
    internals = net.get_internals()
    # mxnet 1.9.1's list
    assert internals.list_outputs() == [
        "data", "fc_weight", "fc_bias", "fc_output", "relu_output", "softmax_label",
        "softmax_output",
    ]  # fmt: skip
    assert len(internals) == 7 and len(net) == 1
    fc = internals["fc_output"]
    assert repr(fc) == "<Symbol fc>" and fc.list_arguments() == ["data", "fc_weight", "fc_bias"]
    assert repr(internals[1]) == "<Symbol fc_weight>" and internals[6] is net
    assert fc.infer_shape(data=(2, 4))[1] == [(2, 6)]
    assert net.get_children().list_outputs() == ["relu_output", "softmax_label"]
    assert mx.sym.Variable("data").get_children() is None
    assert fc.get_children().list_outputs() == ["data", "fc_weight", "fc_bias"]
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    assert (a + b).get_children().list_outputs() == ["a", "b"]
    mul = a * 2
    assert mul.get_internals().list_outputs() == ["a", f"{mul.name}_output"]
    g = mx.sym.Group([fc, a])
    assert g.get_internals().list_outputs() == [
        "data", "fc_weight", "fc_bias", "fc_output", "a"
    ]  # fmt: skip
    assert g.get_children().list_outputs() == ["data", "fc_weight", "fc_bias"]
    with pytest.raises(ValueError, match='Cannot find output that matches name "nope"'):
        internals["nope"]
    with pytest.raises(IndexError, match="out of range"):
        internals[7]
    # mxnet 1.9.1: "Symbol only accept nonnegative index"
    with pytest.raises(mx.base.MXNetError, match="Symbol only accept nonnegative index"):
        internals[-1]
    # mxnet 1.9.1: the inputs of every output, repeated ones included
    assert mx.sym.Group([a + b, a * 2]).get_children().list_outputs() == ["a", "b", "a"]


def test_infer_type() -> None:
    f32, f64, f16 = np.float32, np.float64, np.float16
    net = _net()
    assert net.infer_type(data="float32") == ([f32] * 4, [f32], [])  # mxnet 1.9.1
    assert net.infer_type(data=np.float64) == ([f64] * 4, [f64], [])
    assert net.infer_type() == (None, None, None)
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    assert (a + b).infer_type(a="float16") == ([f16, f16], [f16], [])
    assert mx.sym.dot(a, b).infer_type(a="float64") == ([f64, f64], [f64], [])
    fc = mx.sym.FullyConnected(a, num_hidden=2, name="f")
    assert fc.infer_type(f_weight="float16") == ([f16] * 3, [f16], [])
    assert (a + b).infer_type(f16) == ([f16, f16], [f16], [])
    # mxnet 1.9.1: "Error in operator _plus0: ... Incompatible attr in node _plus0 at 1-th input:
    # expected float16, got float32"
    s = a + b
    with pytest.raises(
        mx.base.MXNetError, match=rf"Error in operator {s.name}: .*expected float16"
    ):
        s.infer_type(a="float16", b="float32")
    # mxnet 1.9.1: "InferTypeKeyword argument name c not found."
    with pytest.raises(mx.base.MXNetError, match="InferTypeKeyword argument name c not found"):
        s.infer_type(c="float16")
