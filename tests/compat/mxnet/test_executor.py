"""The mxnet layer's executors: ``bind`` and ``simple_bind`` (arguments as a list or a dict,
``type_dict``, errors), ``forward`` on the current argument data writing into the held output
arrays, ``backward`` with ``grad_req`` write/add/null and ``out_grads``, ``grad_dict``, groups,
and bound arrays kept when dictionary entries are replaced. Expected values come from mxnet
1.9.1 or are derived by hand.
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from compat.mxnet.helpers import _bind


def test_bind_args_as_list_or_dict_and_errors() -> None:
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    c = a * b
    ex = c.bind(mx.cpu(), [mx.nd.array([2.0]), mx.nd.array([3.0])])
    assert ex.forward()[0].asnumpy().tolist() == [6.0]
    assert list(ex.arg_dict) == ["a", "b"] and ex.grad_dict == {"a": None, "b": None}
    assert ex.grad_arrays == [None, None] and ex.aux_arrays == [] and ex.aux_dict == {}
    assert list(ex.output_dict) == [c.list_outputs()[0]]
    with pytest.raises(ValueError, match="no array given for the argument 'b'"):
        c.bind(mx.cpu(), {"a": mx.nd.ones(1)})
    with pytest.raises(ValueError, match="args has 1 arrays but the symbol has 2 arguments"):
        c.bind(mx.cpu(), [mx.nd.ones(1)])
    with pytest.raises(TypeError, match="must be an NDArray"):
        c.bind(mx.cpu(), {"a": np.ones(1), "b": mx.nd.ones(1)})
    with pytest.raises(TypeError, match="ctx must be a Context"):
        c.bind("cpu", {"a": mx.nd.ones(1), "b": mx.nd.ones(1)})
    args = {"a": mx.nd.ones(2), "b": mx.nd.ones(2)}
    with pytest.raises(ValueError, match="the gradient array of 'a' has shape"):
        c.bind(mx.cpu(), args, args_grad={"a": mx.nd.zeros(3)})
    with pytest.raises(ValueError, match="args_grad names unknown arguments"):
        c.bind(mx.cpu(), args, args_grad={"q": mx.nd.zeros(2)})
    with pytest.raises(ValueError, match="grad_req for 'a' must be one of"):
        c.bind(mx.cpu(), args, args_grad={"a": mx.nd.zeros(2)}, grad_req="sometimes")
    with pytest.raises(ValueError, match="grad_req has 1 entries"):
        c.bind(mx.cpu(), args, args_grad={"a": mx.nd.zeros(2)}, grad_req=["write"])
    with pytest.raises(ValueError, match="grad_req names unknown arguments"):
        c.bind(mx.cpu(), args, args_grad={"a": mx.nd.zeros(2)}, grad_req={"z": "add"})
    with pytest.raises(TypeError, match="grad_req must be a str, list or dict"):
        c.bind(mx.cpu(), args, args_grad={"a": mx.nd.zeros(2)}, grad_req=3)
    with pytest.raises(ValueError, match="auxiliary states"):
        c.bind(mx.cpu(), args, aux_states=[mx.nd.ones(1)])


def test_forward_picks_up_new_argument_data() -> None:
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    ex = _bind(2 * a + b, {"a": [1.0, 2.0], "b": [2.0, 3.0]})
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [4.0, 7.0])
    ex.arg_dict["a"][:] = [10.0, 20.0]
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [22.0, 43.0])
    np.testing.assert_array_equal(ex.forward(b=mx.nd.array([0.0, 0.0]))[0].asnumpy(), [20.0, 40.0])
    np.testing.assert_array_equal(ex.arg_dict["b"].asnumpy(), [0.0, 0.0])
    with pytest.raises(ValueError, match="'c' is not an argument"):
        ex.forward(c=mx.nd.ones(2))
    ex.copy_params_from(
        {"a": mx.nd.array([1.0, 1.0]), "extra": mx.nd.ones(1)}, allow_extra_params=True
    )
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [2.0, 2.0])
    with pytest.raises(ValueError, match="'extra' is not an argument"):
        ex.copy_params_from({"extra": mx.nd.ones(1)})


def test_backward_before_forward_raises() -> None:
    a = mx.sym.Variable("a")
    ex = _bind(a * 2, {"a": [1.0]})
    with pytest.raises(RuntimeError, match="call forward"):
        ex.backward()


def test_grad_req_write_overwrites_add_accumulates_null_skips() -> None:
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    c = a * b
    for req, expect in (("write", [3.0, 3.0]), ("add", [6.0, 6.0])):
        ex = _bind(c, {"a": [1.0, 2.0], "b": [3.0, 3.0]}, grad_req=req)
        ex.forward(is_train=True)
        ex.backward()  # non-loss output without out_grads: head gradient of ones
        ex.backward()
        np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), expect)
    ex = _bind(c, {"a": [1.0, 2.0], "b": [3.0, 3.0]}, grad_req={"a": "null", "b": "write"})
    ex.grad_dict["a"][:] = 9.0
    ex.forward()
    ex.backward()
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), [9.0, 9.0])
    np.testing.assert_array_equal(ex.grad_dict["b"].asnumpy(), [1.0, 2.0])
    ex = _bind(c, {"a": [1.0, 2.0], "b": [3.0, 3.0]}, grad_req=["add", "inplace"])
    ex.forward()
    ex.backward()
    ex.backward()
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), [6.0, 6.0])
    np.testing.assert_array_equal(ex.grad_dict["b"].asnumpy(), [1.0, 2.0])
    ex = _bind(c, {"a": [1.0, 2.0], "b": [3.0, 3.0]}, grads=("a",))  # b has no gradient array
    ex.forward()
    ex.backward()
    assert list(ex.grad_dict) == ["a", "b"] and ex.grad_arrays[1] is None
    assert ex.grad_dict["b"] is None  # every argument, None without a gradient array (mxnet)


def test_out_grads_forms() -> None:
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    c = 2 * a + b
    ex = _bind(c, {"a": [1.0, 2.0], "b": [2.0, 3.0]})
    out = ex.forward(is_train=True)[0].copy()
    for og in (out, [out], {c.list_outputs()[0]: out}):
        ex.backward(og)
        np.testing.assert_array_equal(ex.grad_arrays[0].asnumpy(), [8.0, 14.0])
        np.testing.assert_array_equal(ex.grad_arrays[1].asnumpy(), [4.0, 7.0])
    ex.backward(np.array([1.0, 0.0]))
    np.testing.assert_array_equal(ex.grad_arrays[0].asnumpy(), [2.0, 0.0])
    with pytest.raises(ValueError, match="expected 1 out_grads"):
        ex.backward([out, out])
    with pytest.raises(ValueError, match="out_grads names unknown outputs"):
        ex.backward({"nope": out})
    with pytest.raises(ValueError, match=r"head gradient of .* has shape"):
        ex.backward(mx.nd.ones(3))


def test_group_outputs_take_one_head_gradient_each() -> None:
    a = mx.sym.Variable("a")
    g = mx.sym.Group([a * 2, a * a])
    ex = _bind(g, {"a": [3.0]})
    outs = ex.forward()
    assert [o.asnumpy().tolist() for o in outs] == [[6.0], [9.0]]
    ex.backward([mx.nd.array([1.0]), mx.nd.array([10.0])])
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), [62.0])
    ex.backward([None, mx.nd.array([1.0])])  # None: ones
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), [8.0])


def test_simple_bind_allocates_arrays() -> None:
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    ex = net.simple_bind(mx.cpu(), data=(3, 4))
    assert {k: v.shape for k, v in ex.arg_dict.items()} == {
        "data": (3, 4),
        "fc_weight": (2, 4),
        "fc_bias": (2,),
    }
    assert set(ex.grad_dict) == {"data", "fc_weight", "fc_bias"}
    ex.arg_dict["fc_bias"][:] = [1.0, 2.0]
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [[1.0, 2.0]] * 3)
    ex2 = net.simple_bind(
        mx.cpu(), grad_req={"fc_weight": "write"}, data=(1, 4), type_dict={"data": np.float32}
    )
    assert {k for k, g in ex2.grad_dict.items() if g is not None} == {"fc_weight"}
    with pytest.raises(ValueError, match="do not determine every argument shape"):
        net.simple_bind(mx.cpu())


def test_forward_writes_into_the_held_output_arrays() -> None:
    a = mx.sym.Variable("a")
    ex = (a * 2).bind(mx.cpu(), {"a": mx.nd.array([1, 2])})
    out = ex.forward()[0]
    held = ex.outputs[0]
    ex.arg_dict["a"][:] = 10
    ex.forward()
    # mxnet 1.9.1: [20. 20.] for both
    np.testing.assert_array_equal(out.asnumpy(), [20.0, 20.0])
    assert held is ex.outputs[0] and out is ex.outputs[0]


def test_outputs_do_not_alias_the_arguments() -> None:
    a = mx.sym.Variable("a")
    ex = mx.sym.BlockGrad(a).bind(mx.cpu(), {"a": mx.nd.array([1, 2])})
    out = ex.forward()[0]
    out[:] = 0  # writing into an output leaves the argument alone
    np.testing.assert_array_equal(ex.arg_dict["a"].asnumpy(), [1.0, 2.0])
    ex.arg_dict["a"][:] = 5
    ex.forward()
    np.testing.assert_array_equal(out.asnumpy(), [5.0, 5.0])


def test_grad_dict_lists_every_argument() -> None:
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    ex = net.simple_bind(mx.cpu(), grad_req={"fc_weight": "write", "fc_bias": "write"}, data=(1, 3))
    # mxnet 1.9.1: ['data', 'fc_bias', 'fc_weight', 'softmax_label'], grad_dict['data'] is None
    assert sorted(ex.grad_dict) == ["data", "fc_bias", "fc_weight", "softmax_label"]
    assert ex.grad_dict["data"] is None and ex.grad_dict["softmax_label"] is None
    assert ex.grad_dict["fc_weight"] is ex.grad_arrays[1]
    ex.forward(is_train=True)
    ex.backward()
    for _, g in ex.grad_dict.items():
        if g is not None:
            assert g.shape in ((2, 3), (2,))


def test_simple_bind_type_dict_propagates_the_dtype() -> None:
    net = mx.sym.SoftmaxOutput(
        mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc"), name="sm"
    )
    ex = net.simple_bind(mx.cpu(), data=(1, 3), type_dict={"data": "float64"})
    # mxnet 1.9.1: every argument and gradient float64
    assert {k: v.dtype for k, v in ex.arg_dict.items()} == dict.fromkeys(
        ["data", "fc_weight", "fc_bias", "sm_label"], np.float64
    )
    assert all(g is not None and g.dtype == np.float64 for g in ex.grad_dict.values())
    ex.arg_dict["fc_weight"][:] = 1.0
    ex.forward(is_train=True)
    ex.backward()
    assert ex.grad_dict["fc_weight"].dtype == np.float64  # type: ignore[union-attr]
    ex = net.simple_bind(mx.cpu(), data=(1, 3), type_dict={"fc_weight": "float64"})
    assert ex.arg_dict["data"].dtype == np.float64  # inferred backwards, as mxnet
    assert net.simple_bind(mx.cpu(), data=(1, 3)).arg_dict["fc_bias"].dtype == np.float32
    with pytest.raises(
        TypeError,
        match=r"simple_bind: operator FullyConnected 'fc' .* float64 "
        r"and 'fc_bias' is float32",
    ):
        net.simple_bind(mx.cpu(), data=(1, 3), type_dict={"data": "float64", "fc_bias": "float32"})
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    with pytest.raises(ValueError, match=r"cannot decide the dtype of \['y'\]"):
        mx.sym.Group([x * 2, y * 2]).simple_bind(
            mx.cpu(), x=(2,), y=(2,), type_dict={"x": "float64"}
        )


def test_replacing_dict_entries_does_not_redirect_the_executor() -> None:
    a = mx.sym.Variable("a")
    ex = (a * 2).bind(mx.cpu(), {"a": mx.nd.array([1, 2])}, {"a": mx.nd.zeros(2)})
    ex.arg_dict["a"] = mx.nd.array([10, 20])
    # mxnet 1.9.1: forward [2. 4.], grad_arrays[0] [2. 2.]
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [2.0, 4.0])
    ex.grad_dict["a"] = mx.nd.array([0, 0])
    ex.backward(mx.nd.ones(2))
    np.testing.assert_array_equal(ex.grad_arrays[0].asnumpy(), [2.0, 2.0])  # type: ignore[union-attr]
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), [0.0, 0.0])  # type: ignore[union-attr]
    ex.arg_arrays[0][:] = 3  # writing into the bound array still reaches the executor
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [6.0, 6.0])
    ex.forward(a=mx.nd.array([4, 4]))
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), [8.0, 8.0])
    ex.copy_params_from({"a": mx.nd.array([1, 1])})
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [2.0, 2.0])


def test_outputs_are_allocated_at_bind() -> None:
    """Regression: ``executor.outputs`` was empty until the first forward; mxnet 1.9.1 allocates
    them at bind (simple_bind of a 1000-unit softmax net on data (2, 100): one float32 (2, 1000)
    output of zeros) and forward writes into them, so an output taken before forward shows the
    results ([[2, 2], [2, 2]] for ``a * 2`` with ``a`` ones)."""
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, name="fc1", num_hidden=1000)
    net = mx.sym.SoftmaxOutput(mx.sym.Activation(fc1, act_type="relu"), name="softmax")
    ex = net.simple_bind(mx.cpu(), data=(2, 100))
    assert [(o.shape, o.dtype) for o in ex.outputs] == [((2, 1000), np.float32)]
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), np.zeros((2, 1000)))
    assert list(ex.output_dict) == ["softmax_output"]
    a = mx.sym.Variable("a")
    ex = (a * 2).bind(mx.cpu(), {"a": mx.nd.ones((2, 2), dtype="float64")})
    held = ex.outputs[0]
    assert (held.shape, held.dtype) == ((2, 2), np.float64)
    ex.forward()
    np.testing.assert_array_equal(held.asnumpy(), [[2.0, 2.0], [2.0, 2.0]])
    b = mx.sym.Variable("b")
    group = mx.sym.Group([a + b, a * b])
    ex = group.bind(mx.cpu(), {"a": mx.nd.ones((3,)), "b": mx.nd.ones((3,))})
    assert [o.shape for o in ex.outputs] == [(3,), (3,)]


def test_dot_transposes_operands_of_more_than_two_axes_as_mxnet() -> None:
    # regression: a transposed operand had all its axes reversed (x.T); mxnet's dot-inl.h views
    # a transposed lhs as the matrix (shape[0], rest) and a transposed rhs as (rest, shape[-1]),
    # so lhs (3, 2, 2) with transpose_a gave the right shape and transposed values, silently
    rng = np.random.default_rng(2)
    A = rng.standard_normal((3, 2, 5))
    B = rng.standard_normal((3, 4))
    C = rng.standard_normal((2, 4, 5))
    want_a = (A.reshape(3, -1).T @ B).reshape(2, 5, 4)
    want_b = (A.reshape(-1, 5) @ C.reshape(-1, 5).T).reshape(3, 2, 2, 4)
    got_a = mx.nd.dot(mx.nd.array(A, dtype="float64"), mx.nd.array(B, dtype="float64"), True)
    np.testing.assert_allclose(got_a.asnumpy(), want_a, rtol=1e-12)
    got_b = mx.nd.dot(
        mx.nd.array(A, dtype="float64"), mx.nd.array(C, dtype="float64"), transpose_b=True
    )
    np.testing.assert_allclose(got_b.asnumpy(), want_b, rtol=1e-12)
    a, b = mx.sym.var("a"), mx.sym.var("b")
    net = mx.sym.dot(a, b, transpose_a=True)
    assert net.infer_shape(a=(3, 2, 5), b=(3, 4))[1] == [(2, 5, 4)]
    ex = net.simple_bind(
        mx.cpu(), a=(3, 2, 5), b=(3, 4), type_dict={"a": "float64", "b": "float64"}
    )
    out = ex.forward(a=A, b=B)[0]
    np.testing.assert_allclose(out.asnumpy(), want_a, rtol=1e-12)
    G = rng.standard_normal((2, 5, 4))
    ex.backward(mx.nd.array(G, dtype="float64"))
    # d/dA of sum(G * (A2.T @ B)) = (B @ G2.T) reshaped, with A2 = A.reshape(3, -1)
    want_ga = (B @ G.reshape(10, 4).T).reshape(3, 2, 5)
    np.testing.assert_allclose(ex.grad_dict["a"].asnumpy(), want_ga, rtol=1e-12)


def test_forward_and_copy_params_from_refuse_another_shape() -> None:
    # regression: ex.forward(data=<(1, 4) array>) on an executor bound with data (3, 4) copied
    # the row into all three rows, and copy_params_from broadcast a (1, 4) weight into (2, 4),
    # silently; mxnet raises "Shape not match!"
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    ex = net.simple_bind(mx.cpu(), data=(3, 4))
    with pytest.raises(ValueError, match=r"Shape not match! Argument data, need: \(3, 4\)"):
        ex.forward(data=np.ones((1, 4), np.float32))
    with pytest.raises(ValueError, match=r"Shape not match! Argument fc_weight, need: \(2, 4\)"):
        ex.copy_params_from({"fc_weight": mx.nd.ones((1, 4))})
    ex.copy_params_from({"fc_weight": mx.nd.ones((2, 4)), "fc_bias": mx.nd.zeros((2,))})
    out = ex.forward(data=np.full((3, 4), 2.0, np.float32))[0]
    np.testing.assert_array_equal(out.asnumpy(), np.full((3, 2), 8.0))


def test_simple_bind_shares_the_arguments_named_by_shared_arg_names() -> None:
    # regression: shared_exec and shared_arg_names were dropped, so a bucketing executor got
    # weights of its own (zeros) instead of the shared executor's, silently
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    ex1 = net.simple_bind(mx.cpu(), data=(3, 4))
    ex1.arg_dict["fc_weight"][:] = 1.0
    ex1.arg_dict["fc_bias"][:] = 5.0
    names = ["fc_weight", "fc_bias"]
    ex2 = net.simple_bind(
        mx.cpu(), data=(2, 4), shared_exec=ex1, shared_arg_names=names, shared_buffer={}
    )
    assert ex2.arg_dict["fc_weight"] is ex1.arg_dict["fc_weight"]
    np.testing.assert_array_equal(ex2.forward(data=np.ones((2, 4)))[0].asnumpy(), [[9, 9]] * 2)
    ex1.arg_dict["fc_weight"][:] = 2.0  # one array: an update shows in both
    np.testing.assert_array_equal(ex2.forward(data=np.ones((2, 4)))[0].asnumpy(), [[13, 13]] * 2)
    ex2.backward(mx.nd.ones((2, 2)))
    np.testing.assert_array_equal(ex1.grad_dict["fc_weight"].asnumpy(), np.full((2, 4), 2.0))
    other = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    with pytest.raises(mx.base.MXNetError, match=r"shared argument 'fc_weight' has shape"):
        other.simple_bind(
            mx.cpu(), data=(2, 4), shared_exec=ex1, shared_arg_names=names, shared_buffer={}
        )


def test_simple_bind_without_shared_buffer_shares_nothing() -> None:
    # mxnet 1.9.1 (MXExecutorSimpleBindEx): shared_exec and shared_arg_names share arrays only
    # together with a shared_buffer dict; without one the new executor has arrays of its own:
    # zero weights, forward of ones gives 0, ex1's gradient stays 0
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    ex1 = net.simple_bind(mx.cpu(), data=(4, 3))
    ex1.arg_dict["fc_weight"][:] = 1.0
    names = ["fc_weight", "fc_bias"]
    ex2 = net.simple_bind(mx.cpu(), data=(2, 3), shared_exec=ex1, shared_arg_names=names)
    assert ex2.arg_dict["fc_weight"] is not ex1.arg_dict["fc_weight"]
    np.testing.assert_array_equal(ex2.arg_dict["fc_weight"].asnumpy(), np.zeros((2, 3)))
    ex1.arg_dict["fc_weight"][:] = 2.0
    np.testing.assert_array_equal(ex2.arg_dict["fc_weight"].asnumpy(), np.zeros((2, 3)))
    out = ex2.forward(is_train=True, data=mx.nd.ones((2, 3)))[0]
    np.testing.assert_array_equal(out.asnumpy(), np.zeros((2, 2)))
    ex2.backward([mx.nd.ones((2, 2))])
    np.testing.assert_array_equal(ex1.grad_dict["fc_weight"].asnumpy(), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="shared_buffer in simple_bind must be dict or None"):
        net.simple_bind(mx.cpu(), data=(2, 3), shared_exec=ex1, shared_buffer=[])
