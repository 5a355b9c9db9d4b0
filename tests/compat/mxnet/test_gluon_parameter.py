"""The mxnet layer's Gluon parameters: ``gluon.Parameter`` (initialization, deferred
initialization, data/grad on contexts, grad_req, set_data, cast, var), ``Constant`` and
``ParameterDict``, with the messages and behaviour mxnet 1.9.1 shows for the same calls.
"""

from __future__ import annotations

import warnings

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet.gluon import Constant, Parameter, ParameterDict


def test_initialize_data_grad_and_backward() -> None:
    p = Parameter("w", shape=(2, 3), init=mx.init.One())
    assert repr(p) == "Parameter w (shape=(2, 3), dtype=<class 'numpy.float32'>)"  # mxnet 1.9.1
    p.initialize()
    assert p.list_ctx() == [mx.cpu(0)] and p.data().dtype == np.float32
    assert p.data(mx.cpu(0)) is p.data() and p.list_data() == [p.data()]
    np.testing.assert_array_equal(p.grad().asnumpy(), np.zeros((2, 3)))
    x = mx.nd.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with mx.autograd.record():
        y = (p.data() * x).sum()
    y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), x.asnumpy())
    assert p.list_grad() == [p.grad()]
    p.zero_grad()
    np.testing.assert_array_equal(p.grad().asnumpy(), np.zeros((2, 3)))


def test_grad_req_add_null_and_setter() -> None:
    p = Parameter("w", shape=(2,), grad_req="add", init="ones")
    p.initialize()
    for _ in range(2):
        with mx.autograd.record():
            y = (p.data() * 3).sum()
        y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [6, 6])
    p.grad_req = "write"
    np.testing.assert_array_equal(p.grad().asnumpy(), [0, 0])  # new buffers, as mxnet
    p.grad_req = "null"
    # mxnet 1.9.1's message
    with pytest.raises(RuntimeError, match="Cannot get gradient array for Parameter 'w' because"):
        p.grad()
    with pytest.raises(AssertionError, match="grad_req must be one of 'write', 'add', or 'null'"):
        p.grad_req = "foo"
    q = Parameter("q", shape=(2,), differentiable=False)
    assert q.grad_req == "null"


def test_errors_before_initialization_as_mxnet() -> None:
    p = Parameter("dense0_weight", shape=(2, 3))
    # mxnet 1.9.1's message
    with pytest.raises(RuntimeError, match=r"Parameter 'dense0_weight' has not been initialized. "):
        p.data()
    with pytest.raises(RuntimeError, match="has not been initialized"):
        p.list_ctx()
    with pytest.raises(
        ValueError,
        match=r"Cannot initialize Parameter 'p' because it has invalid "
        r"shape: \(0, 3\)\.",
    ):
        Parameter("p", shape=(0, 3)).initialize()
    with pytest.raises(ValueError, match="Cannot reset context for Parameter 'dense0_weight'"):
        p.reset_ctx(mx.cpu())
    p.initialize()
    with pytest.raises(RuntimeError, match="was not initialized on context cpu\\(1\\)"):
        p.data(mx.cpu(1))
    with pytest.warns(
        UserWarning,
        match="Parameter 'dense0_weight' is already initialized, "
        "ignoring. Set force_reinit=True to re-initialize.",
    ):
        p.initialize()


def test_deferred_initialization() -> None:
    w = Parameter("w", shape=(2, 0), allow_deferred_init=True, init=mx.init.One())
    w.initialize()
    assert w.list_ctx() == [mx.cpu(0)]
    # mxnet 1.9.1's message
    with pytest.raises(mx.gluon.DeferredInitializationError, match="initialization was deferred"):
        w.data()
    assert isinstance(mx.gluon.DeferredInitializationError("x"), mx.MXNetError)
    w.shape = (2, 3)
    with pytest.raises(AssertionError, match="incompatible"):
        w.shape = (3, 3)
    w._finish_deferred_init()
    np.testing.assert_array_equal(w.data().asnumpy(), np.ones((2, 3)))
    # set_data before the deferred initialization gives the initial value (as mxnet)
    v = Parameter("v", shape=(2, 0), allow_deferred_init=True)
    v.initialize()
    v.set_data(mx.nd.full((2, 4), 7.0))
    assert v.shape == (2, 4)
    v._finish_deferred_init()
    np.testing.assert_array_equal(v.data().asnumpy(), np.full((2, 4), 7.0))


def test_default_initializer_is_used_whatever_the_name() -> None:
    # Gluon passes the initializer as the __init__ attribute: no name dispatch, so a bias
    # without an initializer of its own is drawn from Uniform (mxnet 1.9.1: nonzero)
    mx.random.seed(0)
    p = Parameter("x_bias", shape=(50,))
    p.initialize()
    b = p.data().asnumpy()
    assert np.abs(b).max() <= 0.07 and np.abs(b).min() > 0
    q = Parameter("odd_name", shape=(3,))
    q.initialize(default_init=mx.init.Constant(2.0))
    np.testing.assert_array_equal(q.data().asnumpy(), [2, 2, 2])
    r = Parameter("r_weight", shape=(3,), init=mx.init.Zero())
    r.initialize(init=mx.init.One())  # init= wins over the parameter's own
    np.testing.assert_array_equal(r.data().asnumpy(), [1, 1, 1])


def test_set_data_cast_reset_ctx_and_var() -> None:
    p = Parameter("w", shape=(2,), init="zeros")
    p.initialize()
    data = p.data()
    p.set_data(mx.nd.array([1.0, 2.0]))
    assert p.data() is data
    np.testing.assert_array_equal(data.asnumpy(), [1, 2])
    p.set_data([3.0, 4.0])
    np.testing.assert_array_equal(data.asnumpy(), [3, 4])
    p.cast("float64")
    assert p.dtype == "float64" and p.data().dtype == np.float64 and p.grad().dtype == np.float64
    with mx.autograd.record():
        y = (p.data() * p.data()).sum()
    y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [6, 8])
    p.reset_ctx(mx.cpu(0))
    np.testing.assert_array_equal(p.data().asnumpy(), [3, 4])
    v = p.var()
    assert v.list_arguments() == ["w"] and p.var() is v


def test_stype_refused() -> None:
    with pytest.raises(NotImplementedError, match="sparse storage"):
        Parameter("w", shape=(2,), stype="row_sparse")


def test_constant() -> None:
    c = Constant("const", [[1, 2], [3, 4]])
    assert repr(c) == "Constant const (shape=(2, 2), dtype=<class 'numpy.float32'>)"
    c.initialize(default_init=mx.init.Zero())  # its value wins over the default
    np.testing.assert_array_equal(c.data().asnumpy(), [[1, 2], [3, 4]])
    assert c.grad_req == "null"
    with pytest.warns(UserWarning, match='Constant parameter "const" does not support grad_req'):
        c.grad_req = "write"
    assert c.grad_req == "null"


def test_parameter_dict() -> None:
    pd = ParameterDict("pd_")
    w = pd.get("w", shape=(2, 0))
    assert pd.get("w", shape=(2, 3)) is w and w.shape == (2, 3)  # mxnet 1.9.1: merged
    with pytest.raises(
        AssertionError,
        match="Cannot retrieve Parameter 'pd_w' because desired "
        "attribute does not match with stored for attribute 'shape': desired "
        r"'\(4, 3\)' vs stored '\(2, 3\)'\.",
    ):
        pd.get("w", shape=(4, 3))
    b = pd.get("b", shape=(3,), init="ones")
    assert list(pd) == ["pd_w", "pd_b"] and list(pd.keys()) == ["pd_w", "pd_b"]
    assert list(pd.values()) == [w, b] and dict(pd.items())["pd_b"] is b
    assert pd["pd_b"] is b and pd.prefix == "pd_" and "pd_w" in pd and len(pd) == 2
    assert repr(pd) == (
        "pd_ (\n  Parameter pd_w (shape=(2, 3), dtype=<class 'numpy.float32'>)\n"
        "  Parameter pd_b (shape=(3,), dtype=<class 'numpy.float32'>)\n)"
    )
    pd.initialize(mx.init.Zero())
    np.testing.assert_array_equal(w.data().asnumpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(b.data().asnumpy(), np.ones(3))
    assert pd.list_ctx() == [mx.cpu(0)]
    b.grad()[:] = 5
    pd.zero_grad()
    np.testing.assert_array_equal(b.grad().asnumpy(), np.zeros(3))
    pd.setattr("lr_mult", 0.5)
    assert w.lr_mult == 0.5 and b.lr_mult == 0.5
    pd.reset_ctx(mx.cpu(0))
    shared = ParameterDict("pd_", shared=pd)
    assert shared.get("w") is w
    other = ParameterDict("o_")
    other.update(pd)
    assert list(other.keys()) == ["pd_w", "pd_b"]
    clash = ParameterDict()
    clash.get("pd_w", shape=(1,))
    with pytest.raises(AssertionError, match="different Parameters with the same name 'pd_w'"):
        clash.update(pd)
    k = pd.get_constant("k", [1.0, 2.0])
    assert isinstance(k, Constant) and pd.get_constant("k") is k
    with pytest.raises(KeyError, match="No constant named 'pd_q'"):
        pd.get_constant("q")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pd.initialize(force_reinit=True)


def test_several_contexts() -> None:
    d = mx.gluon.nn.Dense(2, in_units=3)
    d.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    w = d.weight
    assert w.list_ctx() == [mx.cpu(0), mx.cpu(1)] and len(w.list_data()) == 2
    np.testing.assert_array_equal(w.data(mx.cpu(0)).asnumpy(), w.data(mx.cpu(1)).asnumpy())
    assert w.data(mx.cpu(1)).context == mx.cpu(1)
    with mx.autograd.record():
        y = d(mx.nd.ones((1, 3), ctx=mx.cpu(1))).sum()
    y.backward()
    np.testing.assert_array_equal(w.grad(mx.cpu(1)).asnumpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(w.grad(mx.cpu(0)).asnumpy(), np.zeros((2, 3)))
    assert len(w.list_grad()) == 2
    w.set_data(mx.nd.full((2, 3), 2.0))
    for a in w.list_data():
        np.testing.assert_array_equal(a.asnumpy(), np.full((2, 3), 2.0))
