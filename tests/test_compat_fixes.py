"""Regression tests for the compat-layer problems found in the fifth session's review."""

from __future__ import annotations

import gradhub as gh
import gradhub_compat.chainer.functions as CF
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as NF
import numpy as np
from gradhub_compat import chainer


def test_nnabla_grad_after_feeding_data_to_a_built_graph() -> None:
    """nnabla's static style: build, then x.d = data, then nn.grad and forward(). The engine
    refuses to differentiate a graph whose leaf data was replaced; nn.grad recomputes it first,
    as nnabla's forward() would."""
    x = nn.Variable((2,), need_grad=True)
    y = NF.sin(x) * NF.sin(x)
    v = np.array([0.3, 1.2])
    x.d = v
    (g,) = nn.grad([y], [x])
    g.forward()
    np.testing.assert_allclose(g.d, 2 * np.sin(v) * np.cos(v), rtol=1e-6)
    np.testing.assert_allclose(y.d, np.sin(v) ** 2, rtol=1e-6)


def test_chainer_backward_without_retain_grad_keeps_intermediate_grads() -> None:
    """chainer 7.8.1: with retain_grad=False the intermediate Variables' grads are left as they
    were (neither set nor cleared; this test used to expect None, which chainer contradicts)."""
    x = chainer.Variable(np.array([1.0, 2.0], dtype=np.float32))
    h = x * 3
    y = CF.sum(h * h)
    y.backward(retain_grad=True)
    np.testing.assert_array_equal(h.grad, [6.0, 12.0])
    h.grad = np.array([100.0, 100.0], dtype=np.float32)
    y.backward()
    np.testing.assert_array_equal(h.grad, [100.0, 100.0])
    np.testing.assert_array_equal(x.grad, [36.0, 72.0])  # 18 x, accumulated twice


def test_chainer_no_backprop_results_are_roots_that_require_grad() -> None:
    """chainer: a result computed under no_backprop_mode requires a gradient when its input
    does; it has no creator, so later graphs stop at it."""
    x = chainer.Variable(np.array([1.0, 2.0], dtype=np.float32))
    with chainer.no_backprop_mode():
        q = x * 2
    assert q.requires_grad and q.creator is None
    CF.sum(q * q).backward()
    np.testing.assert_array_equal(q.grad, [4.0, 8.0])
    assert x.grad is None
    (gq,) = chainer.grad([CF.sum(q * q)], [q])
    np.testing.assert_array_equal(gq.array, [4.0, 8.0])


def test_native_no_grad_results_still_need_no_gradient() -> None:
    """gradhub's own no_grad keeps PyTorch's semantics (results need no gradient)."""
    a = gh.Variable([1.0])
    with gh.no_grad():
        b = a * 2.0
    assert not b.need_grad
