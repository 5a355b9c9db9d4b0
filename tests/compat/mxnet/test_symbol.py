"""The mxnet layer's symbols (``mx.sym``): arguments, outputs and automatic names, constructor
errors, ``infer_shape``, and symbol arithmetic with its gradients through an executor.
"""

from __future__ import annotations

import re

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from compat.mxnet.helpers import _bind

_ARITH = [
    ("add", lambda a, b: a + b, lambda a, b: (np.ones(2), np.ones(2))),
    ("sub", lambda a, b: a - b, lambda a, b: (np.ones(2), -np.ones(2))),
    ("mul", lambda a, b: a * b, lambda a, b: (b, a)),
    ("div", lambda a, b: a / b, lambda a, b: (1 / b, -a / b**2)),
    ("pow", lambda a, b: a**b, lambda a, b: (b * a ** (b - 1), a**b * np.log(a))),
    (
        "scalars",
        lambda a, b: (3 - a) / 2 + 4 / b - b**2 + 2**a,
        lambda a, b: (-0.5 + 2**a * np.log(2), -4 / b**2 - 2 * b),
    ),
    ("neg", lambda a, b: -a + b - 1, lambda a, b: (-np.ones(2), np.ones(2))),
]


def test_symbol_arguments_outputs_and_auto_names() -> None:
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3)
    assert re.fullmatch(r"fullyconnected\d+", fc.name)
    assert fc.list_arguments() == ["data", f"{fc.name}_weight", f"{fc.name}_bias"]
    act = mx.sym.Activation(fc, act_type="tanh", name="act")
    out = mx.sym.SoftmaxOutput(act, name="sm")
    assert out.list_arguments()[-1] == "sm_label"
    assert out.list_outputs() == ["sm_output"]
    assert data.list_outputs() == ["data"] and data.op == "null"
    assert out.list_auxiliary_states() == [] and out.list_inputs() == out.list_arguments()
    a, b = mx.sym.Variable("a"), mx.sym.var("b")
    c = 2 * a + b
    assert c.list_arguments() == ["a", "b"]
    assert repr(c).startswith("<Symbol _plus")
    g = mx.sym.Group([c, a * b])
    assert len(g.list_outputs()) == 2 and repr(g).startswith("<Symbol group [")
    shared = a * a + a
    assert shared.list_arguments() == ["a"]


def test_symbol_constructor_errors() -> None:
    x = mx.sym.Variable("x")
    with pytest.raises(ValueError, match="num_hidden must be a positive int"):
        mx.sym.FullyConnected(x, num_hidden=0)
    with pytest.raises(ValueError, match="act_type must be one of"):
        mx.sym.Activation(x, act_type="swish")
    with pytest.raises(TypeError, match="data must be a Symbol"):
        mx.sym.Activation(np.ones(2), act_type="relu")
    with pytest.raises(ValueError, match="normalization must be one of"):
        mx.sym.SoftmaxOutput(x, normalization="mean")
    with pytest.raises(ValueError, match="normalization must be one of"):
        mx.sym.MakeLoss(x, normalization="mean")
    with pytest.raises(NotImplementedError, match="out_grad"):
        mx.sym.SoftmaxOutput(x, out_grad=True)
    with pytest.raises(NotImplementedError, match="smooth_alpha"):
        mx.sym.SoftmaxOutput(x, smooth_alpha=0.1)
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        mx.sym.Variable("")
    with pytest.raises(TypeError, match="Group"):
        mx.sym.Group([])
    with pytest.raises(TypeError):
        _ = x + "text"


def test_infer_shape() -> None:
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=6, name="fc")
    net = mx.sym.SoftmaxOutput(mx.sym.Activation(fc, act_type="relu"), name="softmax")
    arg, out, aux = net.infer_shape(data=(3, 2, 2))
    assert arg == [(3, 2, 2), (6, 4), (6,), (3,)] and out == [(3, 6)] and aux == []
    assert net.infer_shape((3, 4))[0] == [(3, 4), (6, 4), (6,), (3,)]
    assert net.infer_shape() == (None, None, None)
    fc2 = mx.sym.FullyConnected(
        mx.sym.Variable("x", shape=(2, 5, 3)), num_hidden=4, flatten=False, no_bias=True, name="f2"
    )
    assert fc2.infer_shape() == ([(2, 5, 3), (4, 3)], [(2, 5, 4)], [])
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    assert (a + b).infer_shape(a=(2, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])
    assert (a * b).infer_shape(b=(4,))[1] == [(4,)]
    assert (a + b).infer_shape(a=(2, 1), b=(1, 3))[1] == [(2, 3)]
    multi = mx.sym.SoftmaxOutput(a, multi_output=True, name="m")
    assert multi.infer_shape(a=(2, 3, 4))[0] == [(2, 3, 4), (2, 4)]
    keep = mx.sym.SoftmaxOutput(a, preserve_shape=True, name="k")
    assert keep.infer_shape(a=(2, 3, 4))[0] == [(2, 3, 4), (2, 3)]
    assert mx.sym.Group([a, b]).infer_shape(a=(1,), b=(2,))[1] == [(1,), (2,)]
    with pytest.raises(mx.base.MXNetError, match="'z' is not an argument"):
        a.infer_shape(z=(1,))


@pytest.mark.parametrize(("name", "fn", "grads"), _ARITH, ids=[c[0] for c in _ARITH])
def test_symbol_arithmetic_forward_and_gradients(name: str, fn: object, grads: object) -> None:
    av, bv = np.array([1.5, 2.0]), np.array([0.5, 3.0])
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    ex = _bind(fn(a, b), {"a": av, "b": bv})  # type: ignore[operator]
    out = ex.forward()[0].asnumpy()
    np.testing.assert_allclose(out, fn(av, bv), rtol=1e-6)  # type: ignore[operator]
    ex.backward()
    ga, gb = grads(av, bv)  # type: ignore[operator]
    np.testing.assert_allclose(ex.grad_dict["a"].asnumpy(), ga, rtol=1e-5)
    np.testing.assert_allclose(ex.grad_dict["b"].asnumpy(), gb, rtol=1e-5)


def test_infer_shape_refuses_shapes_the_operators_contradict() -> None:
    """Regression: ``infer_shape`` accepted ``fc1_weight=(1, 100)`` for ``num_hidden=1000`` and
    reported wrong shapes; mxnet 1.9.1 raises ``mx.base.MXNetError`` (a RuntimeError) naming the
    operator: "Error in operator fc1: Shape inconsistent, Provided = [1,100], inferred
    shape=(1000,100)", "... Provided = [9], inferred shape=[10]" for the softmax label, and for
    ``a + b`` with (2, 3) and (3, 3): "Error in operator _plus0: ... Incompatible attr in node
    _plus0 at 1-th input: expected [2,3], got [3,3]"."""
    assert issubclass(mx.base.MXNetError, RuntimeError)
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, name="fc1", num_hidden=1000)
    net = mx.sym.SoftmaxOutput(mx.sym.Activation(fc1, act_type="relu"), name="softmax")
    want = (
        r"Error in operator fc1: Shape inconsistent, Provided = \[1,100\], "
        r"inferred shape=\(1000,100\)"
    )
    with pytest.raises(mx.base.MXNetError, match=want):
        net.infer_shape(data=(10, 100), fc1_weight=(1, 100))
    with pytest.raises(
        mx.base.MXNetError, match=r"Error in operator fc1: .*Provided = \[1000,99\]"
    ):
        net.infer_shape(data=(10, 100), fc1_weight=(1000, 99))
    with pytest.raises(mx.base.MXNetError, match=r"Error in operator fc1: .*Provided = \[3\]"):
        net.infer_shape(data=(10, 100), fc1_bias=(3,))
    with pytest.raises(mx.base.MXNetError, match=r"Error in operator softmax: .*Provided = \[9\]"):
        net.infer_shape(data=(10, 100), softmax_label=(9,))
    arg, out, _ = net.infer_shape(data=(10, 100), fc1_weight=(1000, 100))
    assert arg == [(10, 100), (1000, 100), (1000,), (10,)] and out == [(10, 1000)]
    sm = mx.sym.SoftmaxOutput(mx.sym.Variable("x"), name="sm")  # probabilities: data's shape
    assert sm.infer_shape(x=(2, 3), sm_label=(2, 3))[0] == [(2, 3), (2, 3)]
    with pytest.raises(mx.base.MXNetError, match=r"Error in operator sm: .*Provided = \[2,1\]"):
        sm.infer_shape(x=(2, 3), sm_label=(2, 1))
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    plus = a + b
    with pytest.raises(
        mx.base.MXNetError, match=rf"Error in operator {plus.name}: .*expected \[2,3\], got \[3,3\]"
    ):
        plus.infer_shape(a=(2, 3), b=(3, 3))


def test_bool_of_a_symbol_raises() -> None:
    """Regression: ``bool(symbol)`` was True; mxnet 1.9.1 raises NotImplementedForSymbol (an
    MXNetError): 'Function __bool__ (namely operator "bool") is not implemented for Symbol and
    only available in NDArray.'"""
    a = mx.sym.Variable("a")
    want = r'Function __bool__ \(namely operator "bool"\) is not implemented for Symbol'
    with pytest.raises(mx.base.NotImplementedForSymbol, match=want):
        bool(a)
    with pytest.raises(mx.base.MXNetError, match=want):
        bool(mx.sym.FullyConnected(a, num_hidden=2, name="f"))
