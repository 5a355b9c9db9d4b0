"""The mxnet layer raises ``mx.base.MXNetError`` where mxnet 1.9.1 raises it for bad input (the
errors below were printed by mxnet 1.9.1 on the same calls); each is also the ValueError or
TypeError that earlier versions of the layer raised, and names the operator or argument.
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import pytest


def test_layer_parameters() -> None:
    x = mx.sym.Variable("x")
    # mxnet: "Required parameter num_hidden of int is not presented, in operator FullyConnected"
    with pytest.raises(mx.base.MXNetError, match="Required parameter num_hidden of int"):
        mx.sym.FullyConnected(x)
    with pytest.raises(ValueError, match="Required parameter num_hidden"):
        mx.sym.FullyConnected(x, name="f")
    # mxnet: "Invalid Input: 'bogus', valid values are: {...}, in operator Activation(...)"
    with pytest.raises(mx.base.MXNetError, match="Invalid Input: 'bogus'"):
        mx.sym.Activation(x, act_type="bogus")
    with pytest.raises(mx.base.MXNetError, match="normalization must be one of"):
        mx.sym.SoftmaxOutput(x, normalization="bogus")


def test_bind_and_backward() -> None:
    x = mx.sym.Variable("x")
    fc = mx.sym.FullyConnected(x, num_hidden=2, name="fc")
    good = {"x": mx.nd.ones((1, 3)), "fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.ones((2,))}
    # mxnet: "Error in operator fc: ... Incompatible attr in node fc ...: expected float32,
    # got float64"
    with pytest.raises(mx.base.MXNetError, match="operator FullyConnected 'fc' needs one dtype"):
        fc.bind(mx.cpu(), dict(good, fc_weight=mx.nd.ones((2, 3), dtype="float64")))
    with pytest.raises(TypeError, match="expected float32, got float64"):
        fc.bind(mx.cpu(), dict(good, fc_weight=mx.nd.ones((2, 3), dtype="float64")))
    ex = fc.bind(mx.cpu(), good, args_grad={"fc_weight": mx.nd.zeros((2, 3))})
    ex.forward(is_train=True)
    # mxnet: "operands shape mismatch from.shape = [3,2] to.shape=[1,2]"
    with pytest.raises(mx.base.MXNetError, match="head gradient of 'fc' has shape"):
        ex.backward(mx.nd.ones((3, 2)))
    # mxnet: a RuntimeError "simple_bind error ... InferShape pass cannot decide shapes"
    with pytest.raises(mx.base.MXNetError, match="simple_bind: the shapes"):
        fc.simple_bind(mx.cpu())


def test_ndarray_operands() -> None:
    # mxnet: "operands could not be broadcast together with shapes [2] [3]"
    with pytest.raises(
        mx.base.MXNetError, match=r"could not be broadcast together with shapes \[2\] \[3\]"
    ):
        mx.nd.ones((2,)) + mx.nd.ones((3,))
    # mxnet: "Incompatible attr in node at 1-th input: expected float32, got float64"
    with pytest.raises(mx.base.MXNetError, match="different dtypes float32 and float64"):
        mx.nd.ones((2,)) + mx.nd.ones((2,), dtype="float64")
    # mxnet: "Reduction axis 5 Exceeds input dimensions [2,3]"
    with pytest.raises(mx.base.MXNetError, match="axis 5 is out of range"):
        mx.nd.sum(mx.nd.ones((2, 3)), axis=5)
