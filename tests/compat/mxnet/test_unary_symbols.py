"""The mxnet layer's unary symbol functions ``mx.sym.abs``, ``cos``, ``exp``, ``log``, ``relu``,
``sigmoid``, ``sin``, ``sqrt``, ``square``, ``tanh``: names, outputs and gradients (head gradient
2) printed by mxnet 1.9.1 for the same inputs, float64 finite differences through
``mx.test_utils.check_numeric_gradient``, shapes, dtypes, composition and JSON."""

from __future__ import annotations

import json
import re

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

XS = np.array([[0.5, -1.0, 2.0], [1.5, -0.3, 0.7]], dtype=np.float32)

# mxnet 1.9.1: output and the gradient for a head gradient of 2, rounded to 5 decimals
MXNET = {
    "abs": ([[0.5, 1.0, 2.0], [1.5, 0.3, 0.7]], [[2.0, -2.0, 2.0], [2.0, -2.0, 2.0]]),
    "cos": (
        [[0.87758, 0.5403, -0.41615], [0.07074, 0.95534, 0.76484]],
        [[-0.95885, 1.68294, -1.81859], [-1.99499, 0.59104, -1.28844]],
    ),
    "exp": (
        [[1.64872, 0.36788, 7.38906], [4.48169, 0.74082, 2.01375]],
        [[3.29744, 0.73576, 14.77811], [8.96338, 1.48164, 4.02751]],
    ),
    "relu": ([[0.5, 0.0, 2.0], [1.5, 0.0, 0.7]], [[2.0, 0.0, 2.0], [2.0, 0.0, 2.0]]),
    "sigmoid": (
        [[0.62246, 0.26894, 0.8808], [0.81757, 0.42556, 0.66819]],
        [[0.47001, 0.39322, 0.20999], [0.29829, 0.48892, 0.44343]],
    ),
    "sin": (
        [[0.47943, -0.84147, 0.9093], [0.9975, -0.29552, 0.64422]],
        [[1.75517, 1.0806, -0.83229], [0.14147, 1.91067, 1.52968]],
    ),
    "square": ([[0.25, 1.0, 4.0], [2.25, 0.09, 0.49]], [[2.0, -4.0, 8.0], [6.0, -1.2, 2.8]]),
    "tanh": (
        [[0.46212, -0.76159, 0.96403], [0.90515, -0.29131, 0.60437]],
        [[1.5729, 0.83995, 0.1413], [0.36141, 1.83027, 1.26948]],
    ),
}


@pytest.mark.parametrize("op", sorted(MXNET))
def test_unary_values_and_gradients_as_mxnet(op: str) -> None:
    y = getattr(mx.sym, op)(mx.sym.Variable("x"))
    # mxnet 1.9.1 names the node op + a counter: abs0_output in a fresh process
    assert re.fullmatch(rf"{op}\d+_output", y.list_outputs()[0])
    g = mx.nd.zeros((2, 3))
    ex = y.bind(mx.cpu(), {"x": mx.nd.array(XS)}, args_grad={"x": g})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((2, 3)) * 2)
    want_out, want_grad = MXNET[op]
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), want_out, atol=1e-5)
    np.testing.assert_allclose(g.asnumpy(), want_grad, atol=1e-5)


def test_log_and_sqrt_as_mxnet() -> None:
    x = mx.sym.Variable("x")
    pos = mx.nd.array(np.abs(XS))
    for op, out, grad in (
        (
            "log",
            [[-0.69315, 0.0, 0.69315], [0.40547, -1.20397, -0.35667]],
            [[2.0, 1.0, 0.5], [0.66667, 3.33333, 1.42857]],
        ),
        (
            "sqrt",
            [[0.70711, 1.0, 1.41421], [1.22474, 0.54772, 0.83666]],
            [[0.70711, 0.5, 0.35355], [0.40825, 0.91287, 0.59761]],
        ),
    ):
        g = mx.nd.zeros((2, 3))
        ex = getattr(mx.sym, op)(x).bind(mx.cpu(), {"x": pos}, args_grad={"x": g})
        ex.forward(is_train=True)
        ex.backward(mx.nd.ones((2, 3)))
        np.testing.assert_allclose(ex.outputs[0].asnumpy(), out, atol=1e-5)
        np.testing.assert_allclose(g.asnumpy(), grad, atol=1e-5)


def test_unary_gradients_against_finite_differences() -> None:
    x = mx.sym.Variable("x")
    y = mx.sym.sin(x) + mx.sym.square(x) * mx.sym.abs(x) + mx.sym.exp(mx.sym.tanh(x))
    mx.test_utils.check_numeric_gradient(y, [XS.astype(np.float64)], dtype=np.float64)


def test_unary_shapes_types_composition_and_json() -> None:
    x = mx.sym.Variable("x")
    assert mx.sym.sin(x).infer_shape(x=(2, 3))[1] == [(2, 3)]
    assert mx.sym.abs(x, name="a").infer_type(x="float64")[1] == [np.float64]  # mxnet 1.9.1
    s = mx.sym.sin(name="s")
    assert s.list_arguments() == ["s_data"]  # mxnet 1.9.1
    assert s(s_data=x).list_arguments() == ["x"]
    # backward shape inference through an elementwise operator, as mxnet
    c = mx.sym.relu(mx.sym.Variable("a")) + mx.sym.Variable("b", shape=(4, 5))
    assert c.infer_shape()[0] == [(4, 5), (4, 5)]
    y = mx.sym.sqrt(mx.sym.log(x, name="l"), name="r")
    back = mx.sym.load_json(y.tojson())
    assert back.tojson() == y.tojson()
    assert [n["op"] for n in json.loads(y.tojson())["nodes"]] == [
        "null",
        "log",
        "sqrt",
    ]
    with pytest.raises(TypeError, match=r"mx\.sym\.sin: data must be a Symbol"):
        mx.sym.sin(np.ones(2))
