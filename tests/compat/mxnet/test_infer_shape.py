"""The mxnet layer's shape inference with unknown (0) dimensions: ``infer_shape`` (None when a
dimension stays unknown) and ``infer_shape_partial`` (``()`` for an unknown shape), inference in
both directions through elementwise operators and ``FullyConnected``, broadcasting with unknown
dimensions, and the errors. Every expected value was printed by mxnet 1.9.1.
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest


def _fc() -> mx.sym.Symbol:
    return mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=4, name="fc")


def test_partial_shapes_of_a_layer() -> None:
    fc = _fc()
    assert fc.infer_shape_partial(x=(2, 3)) == ([(2, 3), (4, 3), (4,)], [(2, 4)], [])
    assert fc.infer_shape_partial() == ([(), (), ()], [()], [])
    assert fc.infer_shape_partial(fc_weight=(4, 5)) == ([(), (4, 5), ()], [()], [])
    assert fc.infer_shape(fc_weight=(4, 5)) == (None, None, None)
    assert fc.infer_shape(x=(0, 5)) == (None, None, None)
    assert fc.infer_shape_partial(x=(0, 5)) == ([(0, 5), (4, 5), (4,)], [(0, 4)], [])
    # a given (0, 0) weight is unknown and gets inferred
    f = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=4, name="f")
    assert f.infer_shape(x=(2, 3, 5), f_weight=(0, 0)) == (
        [(2, 3, 5), (4, 15), (4,)],
        [(2, 4)],
        [],
    )
    assert f.infer_shape_partial(x=(2, 4), f_weight=(0, 4))[0] == [(2, 4), (4, 4), (4,)]
    # mxnet accepts a (num_hidden, 1) bias
    g = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=3, name="g")
    assert g.infer_shape(x=(2, 4), g_bias=(3, 1)) == ([(2, 4), (3, 4), (3, 1)], [(2, 3)], [])


def test_unknown_dimensions_merge_through_elementwise_operators() -> None:
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    assert (x + y).infer_shape(x=(0, 3), y=(2, 0)) == ([(2, 3), (2, 3)], [(2, 3)], [])
    assert (x + y).infer_shape_partial(x=(0, 3)) == ([(0, 3), (0, 3)], [(0, 3)], [])
    assert ((x + y) * 2).infer_shape_partial() == ([(), ()], [()], [])
    relu = mx.sym.Activation(x + y, act_type="relu")
    assert relu.infer_shape_partial(y=(2, 0), x=(0, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])
    # backward: the output shape of _plus gives the shape of relu's input
    back = mx.sym.Activation(x, act_type="relu") + y
    assert back.infer_shape(y=(2, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])
    # FullyConnected's output gives the batch size of its data
    fcb = mx.sym.FullyConnected(x, num_hidden=3, name="f") + y
    assert fcb.infer_shape_partial(x=(0, 4), y=(5, 3)) == (
        [(5, 4), (3, 4), (3,), (5, 3)],
        [(5, 3)],
        [],
    )
    assert mx.sym.MakeLoss(x * y).infer_shape_partial(x=(0, 3), y=(2, 0))[0] == [(2, 3), (2, 3)]
    assert mx.sym.maximum(x, y).infer_shape(x=(0, 3), y=(2, 0))[1] == [(2, 3)]
    assert mx.sym.Activation(x, act_type="relu").infer_shape(x=(0, 3)) == (None, None, None)


def test_shape_hints_merge_and_given_shapes_override_them() -> None:
    y = mx.sym.Variable("y")
    assert (mx.sym.Variable("h", shape=(2, 0)) + y).infer_shape(y=(0, 3))[0] == [(2, 3), (2, 3)]
    assert (mx.sym.Variable("h", shape=(2, 3)) + y).infer_shape(h=(4, 3))[0] == [(4, 3), (4, 3)]
    v = mx.sym.Variable("v", shape=(0, 3))
    assert v.infer_shape() == (None, None, None)
    assert v.infer_shape_partial() == ([(0, 3)], [(0, 3)], [])


def test_softmax_output_dot_and_broadcast_with_unknown_dimensions() -> None:
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    s = mx.sym.SoftmaxOutput(x, name="s")
    assert s.infer_shape_partial(x=(0, 3)) == ([(0, 3), (0,)], [(0, 3)], [])
    assert s.infer_shape_partial(x=(0, 3), s_label=(4,)) == ([(0, 3), (4,)], [(0, 3)], [])
    assert s.infer_shape_partial(s_label=(7,)) == ([(), (7,)], [()], [])
    d = mx.sym.dot(x, y)
    assert d.infer_shape_partial(x=(0, 3), y=(3, 4)) == ([(0, 3), (3, 4)], [(0, 4)], [])
    assert d.infer_shape_partial(x=(2, 3), y=(3, 0)) == ([(2, 3), (3, 0)], [(2, 0)], [])
    assert d.infer_shape_partial(x=(2, 3)) == ([(2, 3), ()], [()], [])
    with pytest.raises(mx.base.MXNetError, match=r"Error in operator dot.*cannot be a negative"):
        d.infer_shape_partial(x=(2, 3), y=(0, 4))
    with pytest.raises(mx.base.MXNetError, match="cannot be a negative value"):
        d.infer_shape(x=(2, 0), y=(3, 4))
    b = mx.sym.broadcast_mul(x, y)
    assert b.infer_shape_partial(x=(2, 3), y=(0, 3)) == ([(2, 3), (0, 3)], [(0, 3)], [])
    assert b.infer_shape_partial(x=(2, 3)) == ([(2, 3), ()], [()], [])
    assert mx.sym.broadcast_add(x, y).infer_shape(x=(2, 0), y=(2, 3)) == (None, None, None)


def test_errors_as_mxnet() -> None:
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    f = mx.sym.FullyConnected(x, num_hidden=4, name="f")
    # mxnet 1.9.1: "Error in operator f: ... Shape dim size must be known, while received -1"
    with pytest.raises(mx.base.MXNetError, match="Error in operator f: Shape dim size must be"):
        f.infer_shape(x=(2, 0, 5))
    # mxnet 1.9.1: "Error in operator fc: ... Unexpected shape for bias [5]"
    with pytest.raises(
        mx.base.MXNetError, match=r"Error in operator fc: Unexpected shape for bias"
    ):
        _fc().infer_shape(x=(2, 3), fc_bias=(5,))
    # mxnet 1.9.1: "Error in operator f: Shape inconsistent, Provided = [3,-1,1], inferred
    # shape=(3,4)"
    with pytest.raises(
        mx.base.MXNetError,
        match=r"Error in operator f: Shape inconsistent, Provided = \[3,-1,1\], inferred "
        r"shape=\(3,4\)",
    ):
        mx.sym.FullyConnected(x, num_hidden=3, name="f").infer_shape_partial(
            x=(2, 4), f_weight=(3, 0, 1)
        )
    with pytest.raises(mx.base.MXNetError, match=r"expected \[2,3\], got \[2,4\]"):
        (x + y).infer_shape(x=(2, 3), y=(2, 4))
    with pytest.raises(mx.base.MXNetError, match="InferShapeKeyword argument name z not found"):
        (x + y).infer_shape_partial(z=(2, 3))
    with pytest.raises(ValueError, match="either by positional or kwargs way"):
        _fc().infer_shape((2, 3), x=(2, 3))


def test_bind_a_bias_of_shape_num_hidden_by_one() -> None:
    fc = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=2, name="fc")
    args = {
        "x": mx.nd.array([[1.0, 2.0]]),
        "fc_weight": mx.nd.array([[1.0, 0.0], [0.0, 1.0]]),
        "fc_bias": mx.nd.array([[10.0], [20.0]]),
    }
    ex = fc.bind(mx.cpu(), args, args_grad={"fc_bias": mx.nd.zeros((2, 1))})
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [[11, 22]])
    ex.backward(mx.nd.array([[1.0, 3.0]]))
    np.testing.assert_array_equal(ex.grad_dict["fc_bias"].asnumpy(), [[1], [3]])
