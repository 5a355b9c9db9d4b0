"""The mxnet layer inside ``gradhub.compile``: its imperative NDArrays are not traced, so the
calls whose effects a replay would not repeat (copies of the step's arguments, gradients written
into ``.grad`` or returned by ``autograd.grad``, writes into NDArrays, random draws, an
Executor's runs) are refused when the step is traced, naming ``gradhub.compile`` and the call,
before anything changed; the same steps run eagerly as before."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradhub as gh
import gradhub_compat.mxnet as mx
import numpy as np
import pytest

X = [np.full((1, 2), k + 1.0, np.float32) for k in range(3)]


def _fc_step(w: Any, make_input: Callable[[Any], Any]) -> Callable[[Any], None]:
    def step(x: Any) -> None:
        xn = make_input(x)
        with mx.autograd.record():
            loss = mx.nd.sum(mx.nd.FullyConnected(xn, w, None, num_hidden=1, no_bias=True) ** 2)
        loss.backward()

    return step


def _weights() -> Any:
    w = mx.nd.array(np.ones((1, 2), np.float32))
    w.attach_grad()
    return w


def test_a_step_copying_its_argument_into_an_ndarray_is_refused_when_traced() -> None:
    # regression: mx.nd.array(x) of the argument held the first call's copy, and backward()
    # wrote W.grad at the first call only: the compiled step gave [4, 4] at every call
    w = _weights()
    eager = _fc_step(w, mx.nd.array)
    want = []
    for x in X:
        eager(x)
        want.append(w.grad.asnumpy())
    np.testing.assert_array_equal(np.concatenate(want), [[4, 4], [16, 16], [36, 36]])

    w = _weights()
    fast = gh.compile(_fc_step(w, mx.nd.array))
    with pytest.raises(NotImplementedError, match=r"gradhub.compile: .*mxnet's nd\.array\(\)"):
        fast(X[0])
    np.testing.assert_array_equal(w.grad.asnumpy(), np.zeros((1, 2), np.float32))

    # (an array taken from a Variable argument, x.d)
    fast = gh.compile(_fc_step(w, lambda x: mx.nd.array(x.d)))
    with pytest.raises(NotImplementedError, match=r"gradhub.compile: .*mxnet's nd\.array\(\)"):
        fast(gh.Variable(X[0]))


@pytest.mark.parametrize("how", ["NDArray.backward", "autograd.backward"])
def test_backward_inside_a_compiled_step_is_refused_before_writing_the_gradients(how: str) -> None:
    # with the input a constant of the step (no argument copied): backward() writes .grad in
    # Python, which a replay would not do
    w = _weights()
    xn = mx.nd.array(X[1])

    def step() -> None:
        with mx.autograd.record():
            loss = mx.nd.sum(mx.nd.FullyConnected(xn, w, None, num_hidden=1, no_bias=True) ** 2)
        if how == "NDArray.backward":
            loss.backward()
        else:
            mx.autograd.backward([loss])

    with pytest.raises(NotImplementedError, match=r"gradhub.compile: .*autograd\.backward\(\)"):
        gh.compile(step)()
    np.testing.assert_array_equal(w.grad.asnumpy(), np.zeros((1, 2), np.float32))
    step()  # eagerly, as before
    np.testing.assert_array_equal(w.grad.asnumpy(), [[16.0, 16.0]])


def test_autograd_grad_inside_a_compiled_step_is_refused() -> None:
    w = _weights()
    xn = mx.nd.array(X[0])

    def step() -> Any:
        with mx.autograd.record():
            loss = mx.nd.sum(mx.nd.FullyConnected(xn, w, None, num_hidden=1, no_bias=True) ** 2)
        (g,) = mx.autograd.grad(loss, [w])
        return g

    with pytest.raises(NotImplementedError, match=r"gradhub.compile: .*autograd\.grad\(\)"):
        gh.compile(step)()
    np.testing.assert_array_equal(step().asnumpy(), [[4.0, 4.0]])


@pytest.mark.parametrize("how", ["setitem", "iadd", "copyto"])
def test_writes_into_ndarrays_inside_a_compiled_step_are_refused(how: str) -> None:
    # an update inside the step (W[:] = W - lr * W.grad) would be made at the first call only
    w = mx.nd.array(np.ones((1, 2), np.float32))
    before = w.asnumpy()

    def step() -> None:
        new = w - 0.5
        if how == "setitem":
            w[:] = new
        elif how == "iadd":
            v = w
            v += 1.0
        else:
            new.copyto(w)

    with pytest.raises(NotImplementedError, match=r"gradhub.compile: .*mxnet's NDArray "):
        gh.compile(step)()
    np.testing.assert_array_equal(w.asnumpy(), before)


def test_random_draws_inside_a_compiled_step_are_refused() -> None:
    def step() -> None:
        mx.nd.random.uniform(0, 1, shape=(2,))

    with pytest.raises(NotImplementedError, match=r"gradhub.compile: .*nd\.random\.uniform\(\)"):
        gh.compile(step)()


def test_an_executor_run_inside_a_compiled_step_is_refused() -> None:
    data = mx.sym.Variable("data")
    ex = (data * 2.0).simple_bind(mx.cpu(), data=(2,))

    def step() -> None:
        ex.forward(data=mx.nd.array([1.0, 2.0]))

    with pytest.raises(NotImplementedError, match=r"gradhub.compile: .*Executor\.forward\(\)"):
        gh.compile(step)()
    np.testing.assert_array_equal(ex.forward(data=mx.nd.array([1.0, 2.0]))[0].asnumpy(), [2, 4])
