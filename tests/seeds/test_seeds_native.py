"""The examples of the seed documents (/work/shared/seeds/), written with the native API.

* 004: the chainer blog on accumulating ``backward``, ``cleargrad`` and ``chainer.grad`` (results
  4 and 5 follow chainer's documented behaviour, as the seeds README says);
* 002: the ``chainer.grad`` reference: ``grad_inputs``, ``set_grad``, ``retain_grad``,
  ``enable_double_backprop`` (``create_graph``) and ``loss_scale``;
* 000/001: nnabla's ``grad``: the n-th derivative loop with ``forward()``/``backward()`` on the
  gradient graph, and the gradient-norm penalty, on a small affine model written with the core
  functions (the seed's convolutions need the function library);
* 003: mxnet's ``Executor.backward(out_grads)``, both examples.

Only the core functions are loaded; expected values are the documents' printed numbers or are
derived by hand.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plugins


@pytest.fixture(autouse=True)
def _core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    plugins.reset()
    yield
    plugins.reset()


def f32(a: Any) -> np.ndarray:
    return np.asarray(a, dtype=np.float32)


# -- 004: the chainer blog -------------------------------------------------------------------------


def test_blog_backward_accumulates_until_cleargrad() -> None:
    x = gh.Variable(f32([1]))
    y = 2 * x
    y.backward()
    np.testing.assert_array_equal(x.g, f32([2.0]))
    y.backward()
    np.testing.assert_array_equal(x.g, f32([4.0]))  # accumulated
    y.backward()
    np.testing.assert_array_equal(x.g, f32([6.0]))
    x.cleargrad()
    y.backward()
    np.testing.assert_array_equal(x.g, f32([2.0]))
    assert x.g.dtype == np.float32


@pytest.fixture
def blog_graph() -> tuple[gh.Variable, ...]:
    x0 = gh.Variable(f32([0, 1]))
    x1 = gh.Variable(f32([2, 3]))
    y = 2 * x0 + 3 * x1
    z = 2 * y
    return x0, x1, y, z


def test_blog_result_1(blog_graph: tuple[gh.Variable, ...]) -> None:
    x0, _x1, _y, z = blog_graph
    (g,) = gh.grad([z], [x0])
    np.testing.assert_array_equal(g.d, f32([4.0, 4.0]))
    assert x0.g is None  # set_grad=False leaves no gradient
    (g,) = gh.grad([z], [x0])  # the same result again, without cleargrad
    np.testing.assert_array_equal(g.d, f32([4.0, 4.0]))


def test_blog_result_2(blog_graph: tuple[gh.Variable, ...]) -> None:
    x0, x1, _y, z = blog_graph
    g0, g1 = gh.grad([z], [x0, x1])
    np.testing.assert_array_equal(g0.d, f32([4.0, 4.0]))
    np.testing.assert_array_equal(g1.d, f32([6.0, 6.0]))


def test_blog_result_3(blog_graph: tuple[gh.Variable, ...]) -> None:
    x0, _x1, y, _z = blog_graph
    (g,) = gh.grad([y], [x0])
    np.testing.assert_array_equal(g.d, f32([2.0, 2.0]))


def test_blog_result_4_set_grad(blog_graph: tuple[gh.Variable, ...]) -> None:
    x0, _x1, y, _z = blog_graph
    (g,) = gh.grad([y], [x0], set_grad=True)
    np.testing.assert_array_equal(g.d, f32([2.0, 2.0]))  # the blog printed [4, 4]
    np.testing.assert_array_equal(x0.g, f32([2.0, 2.0]))


def test_blog_result_5_retain_grad(blog_graph: tuple[gh.Variable, ...]) -> None:
    x0, _x1, y, _z = blog_graph
    (g,) = gh.grad([y], [x0], retain_grad=True)
    np.testing.assert_array_equal(g.d, f32([2.0, 2.0]))  # the blog printed [4, 4]
    np.testing.assert_array_equal(y.g, f32([1.0, 1.0]))  # the output keeps its seed
    assert x0.g is None  # the input keeps no gradient


# -- 002: the chainer.grad reference ---------------------------------------------------------------


def test_chainer_grad_selects_minimal_paths_and_does_not_accumulate() -> None:
    x = gh.Variable(f32([1.0, 2.0]))
    w = gh.Variable(f32([3.0, 4.0]))
    y = (x * w).sum()
    for _ in range(2):
        gx, gw = gh.grad([y], [x, w])
        np.testing.assert_array_equal(gx.d, w.d)
        np.testing.assert_array_equal(gw.d, x.d)
    assert x.g is None and w.g is None


def test_chainer_grad_inputs_accumulate_not_in_place() -> None:
    x = gh.Variable(f32([1.0, 2.0]))
    gi = gh.Variable(f32([10.0, 10.0]), need_grad=False)
    (g,) = gh.grad([x * x], [x], grad_inputs=[gi])
    np.testing.assert_array_equal(g.d, f32([12.0, 14.0]))
    np.testing.assert_array_equal(gi.d, f32([10.0, 10.0]))  # unchanged
    (g,) = gh.grad([x * x], [x], grad_inputs=[None])  # None: nothing accumulated
    np.testing.assert_array_equal(g.d, f32([2.0, 4.0]))


def test_chainer_set_grad_replaces_the_previous_gradient() -> None:
    x = gh.Variable(f32([1.0, 2.0]))
    (x * 5.0).sum().backward()
    (g,) = gh.grad([x * x], [x], set_grad=True)
    np.testing.assert_array_equal(x.g, f32([2.0, 4.0]))  # updated even though it was set
    assert x.grad_var is g


def test_chainer_retain_grad_ignores_set_grad() -> None:
    x = gh.Variable(f32([1.0, 2.0]))
    h = x * 3.0
    y = h * h
    gh.grad([y], [x], set_grad=True, retain_grad=True)
    np.testing.assert_array_equal(h.g, 2.0 * h.d)
    assert x.g is None


@pytest.mark.parametrize("double", [False, True])
def test_chainer_enable_double_backprop(double: bool) -> None:
    x = gh.Variable(f32([1.0, 2.0]))
    (g,) = gh.grad([(x * x * x).sum()], [x], create_graph=double)
    np.testing.assert_allclose(g.d, 3.0 * x.d**2)
    (gg,) = gh.grad([g.sum()], [x], unreachable="none")
    if double:
        np.testing.assert_allclose(gg.d, 6.0 * x.d)
    else:
        assert gg is None  # not differentiable further


def test_chainer_loss_scale_propagates_to_every_gradient() -> None:
    x = gh.Variable(f32([1.0, 2.0]))
    h = x * 3.0
    y = (h * h).sum()
    (g,) = gh.grad([y], [x], loss_scale=128.0, retain_grad=True)
    np.testing.assert_allclose(g.d, 128.0 * 18.0 * x.d)  # not divided back
    np.testing.assert_allclose(h.g, 128.0 * 2.0 * h.d)
    np.testing.assert_array_equal(y.g, f32(128.0))


# -- 000/001: nnabla ---------------------------------------------------------------------------


def test_nnabla_nth_derivative_loop() -> None:
    """The seed loop with ``F.sin`` replaced by ``2 ** x`` (the n-th derivative is
    ``ln(2)^n 2^x``): each derivative is a graph that re-executes and differentiates again."""
    ln2 = np.log(2.0)
    x = gh.Variable(np.random.default_rng(0).standard_normal(5))
    y = 2.0**x
    dx = [y]
    for n in range(1, 5):
        dx = gh.grad(dx, [x])
        dnx = dx[0]
        x.d = np.random.default_rng(n).standard_normal(5)
        dnx.forward()
        np.testing.assert_allclose(dnx.d, ln2**n * 2.0**x.d)
        x.cleargrad()
        dnx.backward()
        np.testing.assert_allclose(x.g, ln2 ** (n + 1) * 2.0**x.d)


def _affine(x: gh.Variable, n_out: int, name: str) -> gh.Variable:
    rng = np.random.default_rng(len(name))
    n_in = x.shape[1]
    with gh.parameter_scope(name):
        w = gh.get_parameter_or_create("W", (n_in, n_out), lambda s: rng.standard_normal(s))
        b = gh.get_parameter_or_create("b", (n_out,), lambda s: rng.standard_normal(s) * 0.1)
    xb = x.reshape(x.shape[0], n_in, 1)
    return (xb * w.reshape(1, n_in, n_out)).sum(axis=1) + b


def _penalized_loss_numpy(w: np.ndarray, b: np.ndarray, x: np.ndarray, t: float) -> float:
    """The same model and penalty by hand: loss = sum(h^2) / (2N), h = x W + b."""
    n = x.shape[0]
    h = x @ w + b
    loss = 0.5 * np.sum(h**2) / n
    gw = x.T @ h / n
    gb = h.sum(axis=0) / n
    gp = sum((np.sqrt(np.sum(g**2)) - t) ** 2 for g in (gw, gb))
    return float(loss + gp)


@pytest.mark.parametrize("t", [0.0, 1.0])
def test_nnabla_gradient_penalty(t: float) -> None:
    rng = np.random.default_rng(3)
    xdata = rng.standard_normal((4, 3))
    x = gh.Variable(xdata, need_grad=False)
    h = _affine(x, 2, name="pred")
    loss = (h * h).sum() * (0.5 / x.shape[0])
    params = gh.get_parameters()
    assert list(params) == ["pred/W", "pred/b"]
    inputs = list(params.values())
    grads = gh.grad([loss], inputs)
    gp = sum(((g**2).sum() ** 0.5 - t) ** 2 for g in grads)
    loss = loss + gp
    loss.forward()
    w, b = (p.d.copy() for p in inputs)
    assert loss.d == pytest.approx(_penalized_loss_numpy(w, b, xdata, t), rel=1e-12)
    loss.backward()
    eps = 1e-6
    for p, base in zip(inputs, (w, b)):
        num = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            args = {"w": w.copy(), "b": b.copy()}
            key = "w" if p is inputs[0] else "b"
            args[key][i] += eps
            up = _penalized_loss_numpy(args["w"], args["b"], xdata, t)
            args[key][i] -= 2 * eps
            down = _penalized_loss_numpy(args["w"], args["b"], xdata, t)
            num[i] = (up - down) / (2 * eps)
        np.testing.assert_allclose(p.g, num, rtol=1e-6, atol=1e-8)
    # a new input batch: the whole graph, the penalty's gradient graph included, re-executes
    xdata2 = rng.standard_normal((4, 3))
    x.d = xdata2
    loss.forward()
    assert loss.d == pytest.approx(_penalized_loss_numpy(w, b, xdata2, t), rel=1e-12)


def test_nnabla_unreachable_gives_zero() -> None:
    x = gh.Variable(f32([1.0]))
    unused = gh.Variable(f32([[1.0, 2.0]]))
    _, gu = gh.grad([x * 2.0], [x, unused])
    np.testing.assert_array_equal(gu.d, np.zeros((1, 2), dtype=np.float32))
    assert gu.creator is None


# -- 003: mxnet Executor.backward ------------------------------------------------------------------


def test_mxnet_backward_with_out_grads() -> None:
    a = gh.Variable(f32([1, 2]))
    b = gh.Variable(f32([2, 3]))
    c = 2 * a + b
    out = c.d.copy()
    np.testing.assert_array_equal(out, f32([4.0, 7.0]))
    c.backward(out)  # out is the head gradient
    np.testing.assert_array_equal(a.g, f32([8.0, 14.0]))
    np.testing.assert_array_equal(b.g, f32([4.0, 7.0]))


def test_mxnet_softmax_output_example() -> None:
    """FullyConnected(6) -> relu -> SoftmaxOutput, with the document's arguments; the head
    gradient of the softmax probabilities is that of -log p[label], so the gradient of the
    logits is p - onehot, as mxnet's SoftmaxOutput defines it."""
    data = gh.Variable(np.ones((1, 4), np.float32), need_grad=False)
    weight = gh.Variable(np.ones((6, 4), np.float32))
    bias = gh.Variable(f32([1, 4, 4, 4, 5, 6]))
    label = 1
    fc = (data.reshape(1, 1, 4) * weight.reshape(1, 6, 4)).sum(axis=2) + bias
    assert np.all(fc.d > 0)  # relu is the identity here
    e = float(np.e) ** fc
    p = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(
        p.d,
        f32([[0.00378404, 0.07600445, 0.07600445, 0.07600445, 0.20660152, 0.5616011]]),
        atol=1e-7,
    )
    onehot = np.eye(6, dtype=np.float32)[[label]]
    p.backward(-onehot / p.d)
    expected = np.repeat(
        f32([0.00378404, -0.92399555, 0.07600445, 0.07600445, 0.20660152, 0.5616011])[:, None],
        4,
        axis=1,
    )
    np.testing.assert_allclose(weight.g, expected, atol=1e-6)
    np.testing.assert_allclose(bias.g, expected[:, 0], atol=1e-6)
    assert weight.g.dtype == np.float32
