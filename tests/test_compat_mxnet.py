"""The mxnet compatibility layer (``gradhub_compat.mxnet``): symbols, NDArrays and executors with
mxnet's semantics (grad_req write/add/null, loss layers ignoring the head gradient), option by
option, against hand-derived or numpy values.
"""

from __future__ import annotations

import re

import gradhub as gh
import gradhub_compat.mxnet as mx
import numpy as np
import pytest


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _bind(sym: mx.sym.Symbol, args: dict[str, object], grad_req: object = "write",
          grads: tuple[str, ...] | None = None) -> mx.Executor:
    nd_args = {k: mx.nd.array(v) for k, v in args.items()}
    names = grads if grads is not None else tuple(nd_args)
    args_grad = {k: mx.nd.zeros(nd_args[k].shape) for k in names}
    return sym.bind(mx.cpu(), nd_args, args_grad=args_grad, grad_req=grad_req)


# -- NDArray -----------------------------------------------------------------------------------


def test_ndarray_constructors_and_dtypes() -> None:
    a = mx.nd.array(np.array([1.0, 2.0]))  # float64 source -> float32, as mxnet
    assert a.dtype == np.float32 and a.shape == (2,) and a.size == 2 and a.ndim == 1
    assert mx.nd.array(mx.nd.array([1, 2], dtype=np.int32)).dtype == np.int32
    assert mx.nd.array([1, 2], dtype="float64").dtype == np.float64
    np.testing.assert_array_equal(mx.nd.ones((2, 3)).asnumpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(mx.nd.zeros(3).asnumpy(), np.zeros(3))
    np.testing.assert_array_equal(mx.nd.full((2,), 7).asnumpy(), [7.0, 7.0])
    assert mx.nd.empty((2, 2)).shape == (2, 2)
    assert mx.nd.ones(1).shape == (1,)
    assert mx.nd.ones(2).context == mx.cpu() and mx.nd.ones(2).ctx == mx.cpu(0)
    with pytest.raises(TypeError, match="ctx must be a Context"):
        mx.nd.ones(2, ctx="cpu")


def test_ndarray_copies_indexing_and_arithmetic() -> None:
    a = mx.nd.array([1.0, 2.0, 3.0])
    host = a.asnumpy()
    host[0] = 100.0
    assert a.asnumpy()[0] == 1.0  # asnumpy copies
    b = a.copy()
    b[:] = 5
    np.testing.assert_array_equal(a.asnumpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(b.asnumpy(), [5.0, 5.0, 5.0])
    a[1:] = mx.nd.array([7.0, 8.0])
    np.testing.assert_array_equal(a.asnumpy(), [1.0, 7.0, 8.0])
    a[0:1] = [0.5]
    np.testing.assert_array_equal((a * 2 + 1).asnumpy(), [2.0, 15.0, 17.0])
    np.testing.assert_array_equal((1 - a).asnumpy(), [0.5, -6.0, -7.0])
    np.testing.assert_array_equal((a / a).asnumpy(), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal((2 / mx.nd.array([4.0])).asnumpy(), [0.5])
    np.testing.assert_array_equal((a**2).asnumpy(), [0.25, 49.0, 64.0])
    np.testing.assert_array_equal((2 ** mx.nd.array([3.0])).asnumpy(), [8.0])
    np.testing.assert_array_equal((-a + a - a).asnumpy(), -a.asnumpy())
    assert (a * 2).dtype == np.float32
    c = mx.nd.ones(2)
    c += 1
    c *= 3
    c -= 1
    c /= 5
    np.testing.assert_allclose(c.asnumpy(), [1.0, 1.0])
    assert mx.nd.array([3.5]).asscalar() == 3.5
    with pytest.raises(ValueError, match="asscalar"):
        a.asscalar()
    assert a[1].asscalar() == 7.0 and len(a) == 3
    assert a.reshape(3, 1).shape == (3, 1) and a.reshape((1, 3)).shape == (1, 3)
    assert mx.nd.ones((2, 3)).T.shape == (3, 2)
    assert a.astype(np.float64).dtype == np.float64
    np.testing.assert_array_equal(np.asarray(a), a.asnumpy())
    assert re.search(r"<NDArray 3 @cpu\(0\)>$", repr(a))
    assert "<NDArray 2x3 @cpu(0)>" in repr(mx.nd.ones((2, 3)))
    a.wait_to_read()


def test_ndarray_copyto() -> None:
    a = mx.nd.array([1.0, 2.0])
    dst = mx.nd.zeros(2)
    assert a.copyto(dst) is dst
    np.testing.assert_array_equal(dst.asnumpy(), [1.0, 2.0])
    c = a.copyto(mx.cpu())
    assert c is not a and c.context == mx.cpu()
    with pytest.raises(ValueError, match="shapes differ"):
        a.copyto(mx.nd.zeros(3))


def test_contexts() -> None:
    assert repr(mx.cpu()) == "cpu(0)" and str(mx.gpu(2)) == "gpu(2)"
    assert mx.cpu() == mx.Context("cpu", 0) and mx.cpu() != mx.gpu(0)
    assert mx.Context(mx.gpu(1)) == mx.gpu(1) and hash(mx.gpu(1)) == hash(mx.gpu(1))
    assert mx.cpu_pinned().device() is mx.cpu().device()
    assert mx.current_context() == mx.cpu()
    with mx.cpu(0) as ctx:
        assert mx.current_context() is ctx
    with pytest.raises(ValueError, match="device_type must be one of"):
        mx.Context("tpu")
    assert mx.num_gpus() >= 0


def test_gpu_without_a_usable_device_raises_clearly() -> None:
    if mx.num_gpus() > 0:
        pytest.skip("a usable GPU is installed here")
    with pytest.raises(gh.DeviceError, match=r"gradhub-cuda|CuPy"):
        mx.nd.ones(2, ctx=mx.gpu(0))
    a = mx.sym.Variable("a")
    with pytest.raises(gh.DeviceError, match=r"gradhub-cuda|CuPy"):
        (a * 2).bind(mx.gpu(0), {"a": mx.nd.ones(2)})


# -- symbols -----------------------------------------------------------------------------------


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
        mx.sym.FullyConnected(x)
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
    fc2 = mx.sym.FullyConnected(mx.sym.Variable("x", shape=(2, 5, 3)), num_hidden=4,
                                flatten=False, no_bias=True, name="f2")
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
    with pytest.raises(ValueError, match="'z' is not an argument"):
        a.infer_shape(z=(1,))


# -- binding -----------------------------------------------------------------------------------


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
    ex.copy_params_from({"a": mx.nd.array([1.0, 1.0]), "extra": mx.nd.ones(1)},
                        allow_extra_params=True)
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


_ARITH = [
    ("add", lambda a, b: a + b, lambda a, b: (np.ones(2), np.ones(2))),
    ("sub", lambda a, b: a - b, lambda a, b: (np.ones(2), -np.ones(2))),
    ("mul", lambda a, b: a * b, lambda a, b: (b, a)),
    ("div", lambda a, b: a / b, lambda a, b: (1 / b, -a / b**2)),
    ("pow", lambda a, b: a**b, lambda a, b: (b * a ** (b - 1), a**b * np.log(a))),
    ("scalars", lambda a, b: (3 - a) / 2 + 4 / b - b**2 + 2**a,
     lambda a, b: (-0.5 + 2**a * np.log(2), -4 / b**2 - 2 * b)),
    ("neg", lambda a, b: -a + b - 1, lambda a, b: (-np.ones(2), np.ones(2))),
]


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


# -- layers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("act", "ref", "dref"),
    [
        ("relu", lambda x: np.maximum(x, 0), lambda x: (x > 0) * 1.0),
        ("sigmoid", lambda x: 1 / (1 + np.exp(-x)),
         lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2),
        ("tanh", np.tanh, lambda x: 1 - np.tanh(x) ** 2),
        ("softrelu", lambda x: np.log1p(np.exp(x)), lambda x: 1 / (1 + np.exp(-x))),
        ("softsign", lambda x: x / (1 + np.abs(x)), lambda x: 1 / (1 + np.abs(x)) ** 2),
    ],
)
def test_activation_types(act: str, ref: object, dref: object) -> None:
    xv = np.array([-1.5, -0.25, 0.5, 2.0])
    ex = _bind(mx.sym.Activation(mx.sym.Variable("x"), act_type=act), {"x": xv})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), ref(xv), rtol=1e-6)  # type: ignore[operator]
    ex.backward()
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), dref(xv), rtol=1e-5)  # type: ignore[operator]


def test_fully_connected_flatten_no_bias_and_shape_errors() -> None:
    rng = np.random.default_rng(1)
    xv, wv, bv = rng.standard_normal((2, 2, 3)), rng.standard_normal((4, 6)), rng.standard_normal(4)
    fc = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=4, name="fc")
    ex = _bind(fc, {"x": xv, "fc_weight": wv, "fc_bias": bv})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), xv.reshape(2, 6) @ wv.T + bv, rtol=1e-5)
    ex.backward()
    np.testing.assert_allclose(ex.grad_dict["fc_weight"].asnumpy(),
                               np.ones((4, 2)) @ xv.reshape(2, 6), rtol=1e-5)
    np.testing.assert_allclose(ex.grad_dict["fc_bias"].asnumpy(), [2.0] * 4)
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(),
                               (np.ones((2, 4)) @ wv).reshape(2, 2, 3), rtol=1e-5)
    nf = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=4, flatten=False, no_bias=True,
                               name="nf")
    assert nf.list_arguments() == ["x", "nf_weight"]
    ex = _bind(nf, {"x": xv, "nf_weight": wv[:, :3]})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), xv @ wv[:, :3].T, rtol=1e-5)
    ex = _bind(fc, {"x": xv, "fc_weight": wv[:, :5], "fc_bias": bv})
    with pytest.raises(ValueError, match="FullyConnected 'fc': the weight 'fc_weight' has shape"):
        ex.forward()
    ex = _bind(fc, {"x": xv, "fc_weight": wv, "fc_bias": bv[:3]})
    with pytest.raises(ValueError, match="the bias 'fc_bias' has shape"):
        ex.forward()


def _softmax_exec(xv: np.ndarray, label: np.ndarray, **kw: object) -> mx.Executor:
    sm = mx.sym.SoftmaxOutput(mx.sym.Variable("x"), name="sm", **kw)  # type: ignore[arg-type]
    return _bind(sm, {"x": xv, "sm_label": label}, grads=("x",))


def test_softmax_output_gradient_ignores_the_head_gradient() -> None:
    rng = np.random.default_rng(2)
    xv, label = rng.standard_normal((3, 4)), np.array([1.0, 0.0, 3.0])
    p = _softmax(xv)
    ex = _softmax_exec(xv, label, grad_scale=2.0)
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), p, rtol=1e-5)
    onehot = np.eye(4)[label.astype(int)]
    for og in (None, mx.nd.full((3, 4), 100.0)):
        ex.backward(og)
        np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), 2.0 * (p - onehot), rtol=1e-5,
                                   atol=1e-7)


@pytest.mark.parametrize(("norm", "div"), [("null", 1.0), ("batch", 4.0), ("valid", 3.0)])
def test_softmax_output_normalization_and_ignore(norm: str, div: float) -> None:
    rng = np.random.default_rng(3)
    xv, label = rng.standard_normal((4, 3)), np.array([2.0, -1.0, 0.0, 1.0])
    ex = _softmax_exec(xv, label, normalization=norm, use_ignore=True)
    ex.forward()
    ex.backward()
    expect = _softmax(xv) - np.eye(3)[np.where(label < 0, 0, label).astype(int)]
    expect[1] = 0.0  # the ignored label gets no gradient
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), expect / div, rtol=1e-5, atol=1e-7)


def test_softmax_output_multi_output_and_preserve_shape() -> None:
    rng = np.random.default_rng(4)
    xv = rng.standard_normal((2, 3, 2))
    label = np.array([[0.0, 2.0], [1.0, 1.0]])
    ex = _softmax_exec(xv, label, multi_output=True)
    p = _softmax(xv, axis=1)
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), p, rtol=1e-5)
    ex.backward()
    onehot = np.moveaxis(np.eye(3)[label.astype(int)], -1, 1)
    # mxnet's kernel divides multi-output gradients by the spatial size d ("null")
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), (p - onehot) / 2, rtol=1e-5,
                               atol=1e-7)
    ex = _softmax_exec(xv, label, multi_output=True, normalization="batch")
    ex.forward()
    ex.backward()
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), (p - onehot) / 4, rtol=1e-5,
                               atol=1e-7)

    label2 = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    ex = _softmax_exec(xv, label2, preserve_shape=True)
    p2 = _softmax(xv, axis=-1)
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), p2, rtol=1e-5)
    ex.backward()
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), p2 - np.eye(2)[label2.astype(int)],
                               rtol=1e-5, atol=1e-7)
    ex = _softmax_exec(xv, label2, preserve_shape=True, normalization="batch")
    ex.forward()
    ex.backward()  # "batch" divides by the number of (flattened) labels: 6
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(),
                               (p2 - np.eye(2)[label2.astype(int)]) / 6, rtol=1e-5, atol=1e-7)

    ex = _softmax_exec(xv, np.array([5.0, 0.0]))  # flattened to (2, 6)
    p3 = _softmax(xv.reshape(2, 6)).reshape(2, 3, 2)
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), p3, rtol=1e-5)
    ex.backward()
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(),
                               (p3.reshape(2, 6) - np.eye(6)[[5, 0]]).reshape(2, 3, 2),
                               rtol=1e-5, atol=1e-7)


def test_softmax_output_probability_labels() -> None:
    rng = np.random.default_rng(5)
    xv = rng.standard_normal((2, 3))
    target = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
    ex = _softmax_exec(xv, target, grad_scale=3.0, normalization="batch")
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), _softmax(xv), rtol=1e-5)
    ex.backward()  # mxnet: (softmax - label) * grad_scale, not normalized
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), 3.0 * (_softmax(xv) - target),
                               rtol=1e-5, atol=1e-6)


def test_softmax_output_valid_count_ignores_ignore_label_even_without_use_ignore() -> None:
    xv = np.zeros((3, 4))
    ex = _softmax_exec(xv, np.array([1.0, 2.0, 3.0]), ignore_label=3, normalization="valid")
    ex.forward()
    ex.backward()  # 2 valid labels (mxnet counts labels != ignore_label), all rows get gradient
    expect = (0.25 - np.eye(4)[[1, 2, 3]]) / 2
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), expect, rtol=1e-6)


def test_softmax_output_label_errors() -> None:
    xv = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"'sm': labels must be class indices in \[0, 3\)"):
        _softmax_exec(xv, np.array([0.0, 3.0])).forward()
    with pytest.raises(ValueError, match="needs labels of shape"):
        _softmax_exec(xv, np.array([0.0, 1.0, 2.0])).forward()


@pytest.mark.parametrize(("norm", "div"), [("null", 1.0), ("batch", 2.0), ("valid", 3.0)])
def test_make_loss_gradient_is_grad_scale_over_norm(norm: str, div: float) -> None:
    xv = np.array([[0.5, -1.0], [2.0, 0.25]])  # 3 elements above valid_thresh=0.2
    loss = mx.sym.MakeLoss(mx.sym.Variable("x") * 3, grad_scale=0.5, valid_thresh=0.2,
                           normalization=norm)
    ex = _bind(loss, {"x": xv})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), 3 * xv)
    ex.backward(mx.nd.full((2, 2), 50.0))  # ignored: MakeLoss is a loss layer
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), np.full((2, 2), 1.5 / div))


def test_block_grad_stops_the_gradient() -> None:
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    out = mx.sym.BlockGrad(a * b) + a
    ex = _bind(out, {"a": [2.0], "b": [3.0]})
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [8.0])
    ex.backward()
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), [1.0])
    np.testing.assert_array_equal(ex.grad_dict["b"].asnumpy(), [0.0])


def test_loss_layer_inside_a_graph_still_ignores_downstream_gradients() -> None:
    x = mx.sym.Variable("x")
    sm = mx.sym.SoftmaxOutput(x, name="sm")
    out = sm * 10  # mxnet ignores what flows back into a loss layer
    xv, label = np.array([[0.0, 1.0]]), np.array([1.0])
    ex = _bind(out, {"x": xv, "sm_label": label}, grads=("x",))
    ex.forward()
    ex.backward()
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), _softmax(xv) - [[0.0, 1.0]],
                               rtol=1e-5)


def test_simple_bind_allocates_arrays() -> None:
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    ex = net.simple_bind(mx.cpu(), data=(3, 4))
    assert {k: v.shape for k, v in ex.arg_dict.items()} == {
        "data": (3, 4), "fc_weight": (2, 4), "fc_bias": (2,)}
    assert set(ex.grad_dict) == {"data", "fc_weight", "fc_bias"}
    ex.arg_dict["fc_bias"][:] = [1.0, 2.0]
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [[1.0, 2.0]] * 3)
    ex2 = net.simple_bind(mx.cpu(), grad_req={"fc_weight": "write"}, data=(1, 4),
                          type_dict={"data": np.float32})
    assert {k for k, g in ex2.grad_dict.items() if g is not None} == {"fc_weight"}
    with pytest.raises(ValueError, match="do not determine every argument shape"):
        net.simple_bind(mx.cpu())
