"""The mxnet layer's layers: ``Activation``, ``FullyConnected``, ``SoftmaxOutput`` (the head
gradient ignored, normalization, ignore_label, multi_output, preserve_shape, probability and
float labels), ``MakeLoss``, ``BlockGrad``, and loss layers inside a graph. Expected values
come from mxnet 1.9.1 or are derived by hand.
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from compat.mxnet.helpers import _bind


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _softmax_exec(xv: np.ndarray, label: np.ndarray, **kw: object) -> mx.Executor:
    sm = mx.sym.SoftmaxOutput(mx.sym.Variable("x"), name="sm", **kw)  # type: ignore[arg-type]
    return _bind(sm, {"x": xv, "sm_label": label}, grads=("x",))


@pytest.mark.parametrize(
    ("act", "ref", "dref"),
    [
        ("relu", lambda x: np.maximum(x, 0), lambda x: (x > 0) * 1.0),
        ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2),
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
    np.testing.assert_allclose(
        ex.grad_dict["fc_weight"].asnumpy(), np.ones((4, 2)) @ xv.reshape(2, 6), rtol=1e-5
    )
    np.testing.assert_allclose(ex.grad_dict["fc_bias"].asnumpy(), [2.0] * 4)
    np.testing.assert_allclose(
        ex.grad_dict["x"].asnumpy(), (np.ones((2, 4)) @ wv).reshape(2, 2, 3), rtol=1e-5
    )
    nf = mx.sym.FullyConnected(
        mx.sym.Variable("x"), num_hidden=4, flatten=False, no_bias=True, name="nf"
    )
    assert nf.list_arguments() == ["x", "nf_weight"]
    ex = _bind(nf, {"x": xv, "nf_weight": wv[:, :3]})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), xv @ wv[:, :3].T, rtol=1e-5)
    # mxnet 1.9.1 refuses at bind: "Error in operator fc: Shape inconsistent, Provided = ..."
    with pytest.raises(mx.base.MXNetError, match=r"Error in operator fc: .*Provided = \[4,5\]"):
        _bind(fc, {"x": xv, "fc_weight": wv[:, :5], "fc_bias": bv})
    with pytest.raises(mx.base.MXNetError, match=r"Error in operator fc: .*Provided = \[3\]"):
        _bind(fc, {"x": xv, "fc_weight": wv, "fc_bias": bv[:3]})


def test_softmax_output_gradient_ignores_the_head_gradient() -> None:
    rng = np.random.default_rng(2)
    xv, label = rng.standard_normal((3, 4)), np.array([1.0, 0.0, 3.0])
    p = _softmax(xv)
    ex = _softmax_exec(xv, label, grad_scale=2.0)
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), p, rtol=1e-5)
    onehot = np.eye(4)[label.astype(int)]
    for og in (None, mx.nd.full((3, 4), 100.0)):
        ex.backward(og)
        np.testing.assert_allclose(
            ex.grad_dict["x"].asnumpy(), 2.0 * (p - onehot), rtol=1e-5, atol=1e-7
        )


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
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), (p - onehot) / 2, rtol=1e-5, atol=1e-7)
    ex = _softmax_exec(xv, label, multi_output=True, normalization="batch")
    ex.forward()
    ex.backward()
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), (p - onehot) / 4, rtol=1e-5, atol=1e-7)

    label2 = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    ex = _softmax_exec(xv, label2, preserve_shape=True)
    p2 = _softmax(xv, axis=-1)
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), p2, rtol=1e-5)
    ex.backward()
    np.testing.assert_allclose(
        ex.grad_dict["x"].asnumpy(), p2 - np.eye(2)[label2.astype(int)], rtol=1e-5, atol=1e-7
    )
    ex = _softmax_exec(xv, label2, preserve_shape=True, normalization="batch")
    ex.forward()
    ex.backward()  # "batch" divides by the number of (flattened) labels: 6
    np.testing.assert_allclose(
        ex.grad_dict["x"].asnumpy(), (p2 - np.eye(2)[label2.astype(int)]) / 6, rtol=1e-5, atol=1e-7
    )

    # flattened to (2, 6); the label has shape (2, 3) and row i reads flattened entry i
    ex = _softmax_exec(xv, np.array([[5.0, 0.0, 1.0], [2.0, 3.0, 4.0]]))
    p3 = _softmax(xv.reshape(2, 6)).reshape(2, 3, 2)
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), p3, rtol=1e-5)
    ex.backward()
    np.testing.assert_allclose(
        ex.grad_dict["x"].asnumpy(),
        (p3.reshape(2, 6) - np.eye(6)[[5, 0]]).reshape(2, 3, 2),
        rtol=1e-5,
        atol=1e-7,
    )


def test_softmax_output_probability_labels() -> None:
    rng = np.random.default_rng(5)
    xv = rng.standard_normal((2, 3))
    target = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
    ex = _softmax_exec(xv, target, grad_scale=3.0, normalization="batch")
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), _softmax(xv), rtol=1e-5)
    ex.backward()  # mxnet: (softmax - label) * grad_scale, not normalized
    np.testing.assert_allclose(
        ex.grad_dict["x"].asnumpy(), 3.0 * (_softmax(xv) - target), rtol=1e-5, atol=1e-6
    )


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
    # mxnet 1.9.1: "Error in operator sm: Shape inconsistent, Provided = [3], inferred shape=[2]"
    with pytest.raises(mx.base.MXNetError, match=r"Error in operator sm: .*Provided = \[3\]"):
        _softmax_exec(xv, np.array([0.0, 1.0, 2.0]))


@pytest.mark.parametrize(("norm", "div"), [("null", 1.0), ("batch", 2.0), ("valid", 3.0)])
def test_make_loss_gradient_is_grad_scale_over_norm(norm: str, div: float) -> None:
    xv = np.array([[0.5, -1.0], [2.0, 0.25]])  # 3 elements above valid_thresh=0.2
    loss = mx.sym.MakeLoss(
        mx.sym.Variable("x") * 3, grad_scale=0.5, valid_thresh=0.2, normalization=norm
    )
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
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), _softmax(xv) - [[0.0, 1.0]], rtol=1e-5)


@pytest.mark.parametrize(("label", "cls"), [(1.7, 1), (3.9, 3), (0.2, 0)])
def test_softmax_output_truncates_float_labels(label: float, cls: int) -> None:
    g = mx.nd.zeros((1, 4))
    ex = mx.sym.SoftmaxOutput(mx.sym.Variable("data"), name="sm").bind(
        mx.cpu(), {"data": mx.nd.zeros((1, 4)), "sm_label": mx.nd.array([label])}, {"data": g}
    )
    ex.forward(is_train=True)
    ex.backward()
    expect = np.full((1, 4), 0.25)  # mxnet 1.9.1: class 1 for 1.7, class 3 for 3.9
    expect[0, cls] -= 1.0
    np.testing.assert_allclose(g.asnumpy(), expect, rtol=1e-6)


@pytest.mark.parametrize(
    ("shape", "divisor"), [((4,), 1), ((2, 3), 2), ((2, 3, 4), 6), ((2, 1, 3), 2), ((), 1)]
)
def test_make_loss_batch_divides_as_mxnet(shape: tuple[int, ...], divisor: int) -> None:
    d = mx.sym.Variable("d")
    g = mx.nd.zeros(shape)
    ex = mx.sym.MakeLoss(d, normalization="batch").bind(
        mx.cpu(), {"d": mx.nd.ones(shape) * 0.5}, {"d": g}
    )
    ex.forward(is_train=True)
    ex.backward()
    # mxnet 1.9.1 divisors: (4,) 1, (2, 3) 2, (2, 3, 4) 6, (2, 1, 3) 2
    np.testing.assert_allclose(g.asnumpy(), np.full(shape, 1.0 / divisor), rtol=1e-6)
