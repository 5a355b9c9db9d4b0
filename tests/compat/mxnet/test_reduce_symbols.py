"""The mxnet layer's reductions ``mx.sym.sum`` and ``mx.sym.mean``: output shapes (``axis``,
``keepdims``, a full reduction has shape (1,)), values and gradients printed by mxnet 1.9.1 for
the same inputs, float64 finite differences, JSON, unknown dimensions and mxnet's errors."""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

XS = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7.0

# mxnet 1.9.1, for 3 * op(x, **kw) with head gradient ones: output shape, first output values,
# the gradient's value (it is the same everywhere)
MXNET = [
    ("sum", {}, (1,), [118.2857], 3.0),
    ("mean", {}, (1,), [4.9286], 0.125),
    ("sum", {"axis": 1}, (2, 4), [5.1429, 6.4286, 7.7143, 9.0], 3.0),
    ("mean", {"axis": 1}, (2, 4), [1.7143, 2.1429, 2.5714, 3.0], 1.0),
    ("sum", {"axis": (0, 2)}, (3,), [25.7143, 39.4286, 53.1429], 3.0),
    ("mean", {"axis": (0, 2)}, (3,), [3.2143, 4.9286, 6.6429], 0.375),
    ("sum", {"axis": -1, "keepdims": True}, (2, 3, 1), [2.5714, 9.4286, 16.2857, 23.1429], 3.0),
    ("mean", {"axis": -1, "keepdims": True}, (2, 3, 1), [0.6429, 2.3571, 4.0714, 5.7857], 0.75),
    ("sum", {"keepdims": True}, (1, 1, 1), [118.2857], 3.0),
    ("mean", {"keepdims": True}, (1, 1, 1), [4.9286], 0.125),
]


@pytest.mark.parametrize(("op", "kw", "shape", "values", "grad"), MXNET)
def test_reductions_as_mxnet(op: str, kw: dict, shape: tuple, values: list, grad: float) -> None:
    y = getattr(mx.sym, op)(mx.sym.Variable("x"), **kw) * 3
    assert y.infer_shape(x=(2, 3, 4))[1] == [shape]
    g = mx.nd.zeros((2, 3, 4))
    ex = y.bind(mx.cpu(), {"x": mx.nd.array(XS)}, args_grad={"x": g})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones(ex.outputs[0].shape))
    np.testing.assert_allclose(ex.outputs[0].asnumpy().ravel()[: len(values)], values, atol=1e-4)
    np.testing.assert_allclose(g.asnumpy(), np.full((2, 3, 4), grad), rtol=1e-6)


def test_reduction_gradient_against_finite_differences() -> None:
    x = mx.sym.Variable("x")
    y = mx.sym.sum(mx.sym.square(x), axis=(0, 2)) * mx.sym.mean(x, axis=(0, 2))
    mx.test_utils.check_numeric_gradient(y, [XS.astype(np.float64)], dtype=np.float64)


def test_reduction_json_inference_and_errors_as_mxnet() -> None:
    x = mx.sym.Variable("x")
    s = mx.sym.sum(x, axis=(1,))
    assert '"attrs": {"axis": "(1,)"}' in s.tojson().replace("\n", "").replace("  ", "")
    assert mx.sym.load_json(s.tojson()).infer_shape(x=(2, 3, 4))[1] == [(2, 4)]
    assert mx.sym.sum(x, name="q").list_arguments() == ["x"]
    assert mx.sym.sum(x).infer_shape_partial(x=(0, 3))[1] == [(1,)]  # mxnet 1.9.1
    with pytest.raises(mx.base.MXNetError, match="axis 3 exceeds the input dimension of 3"):
        mx.sym.sum(x, axis=3).infer_shape(x=(2, 3, 4))
    # exclude=True reduces the other axes (mxnet 1.9.1; tests/compat/mxnet/test_symbol_losses.py)
    assert mx.sym.sum(x, axis=1, exclude=True).infer_shape(x=(2, 3, 4))[1] == [(3,)]
    # mxnet 1.9.1's test_simple_bind_incomplete_shape_inference_in_one_forward_pass network
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data=data, num_hidden=1, no_bias=True, name="fc")
    net = mx.sym.sum(mx.sym.abs(fc.get_internals()["fc_weight"])) + mx.sym.sum(fc)
    ex = net.simple_bind(ctx=mx.cpu(), data=(5, 13))
    assert [a.shape for a in ex.arg_arrays] == [(1, 13), (5, 13)]
    assert ex.outputs[0].shape == (1,)


@pytest.mark.parametrize("keepdims", [False, True])
def test_empty_axis_reduces_every_axis_as_mxnet(keepdims: bool) -> None:
    # mxnet 1.9.1: axis=() (its documented default) reduces every axis, in nd and sym, and the
    # JSON keeps "axis": "()"; for arange(12).reshape(3, 4): sum 66, mean 5.5, gradients 1 and
    # 1/12 everywhere
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    shape = (1, 1) if keepdims else (1,)
    for op, value, grad in (("sum", 66.0, 1.0), ("mean", 5.5, 1.0 / 12.0)):
        for axis in ((), []):
            r = getattr(mx.nd, op)(mx.nd.array(a), axis=axis, keepdims=keepdims)
            assert r.shape == shape
            np.testing.assert_allclose(r.asnumpy().ravel(), [value], rtol=1e-6)
        net = getattr(mx.sym, op)(mx.sym.Variable("a"), axis=(), keepdims=keepdims)
        assert net.infer_shape(a=(3, 4))[1] == [shape]
        assert '"axis": "()"' in net.tojson()
        for sym in (net, mx.sym.load_json(net.tojson())):
            ex = sym.bind(mx.cpu(), {"a": mx.nd.array(a)}, args_grad={"a": mx.nd.zeros((3, 4))})
            out = ex.forward(is_train=True)[0]
            ex.backward(mx.nd.ones(out.shape))
            assert out.shape == shape
            np.testing.assert_allclose(out.asnumpy().ravel(), [value], rtol=1e-6)
            np.testing.assert_allclose(
                ex.grad_dict["a"].asnumpy(), np.full((3, 4), grad), rtol=1e-6
            )
