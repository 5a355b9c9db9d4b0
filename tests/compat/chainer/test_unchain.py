"""``Variable.unchain``, ``Variable.unchain_backward`` and ``FunctionNode.unchain`` as chainer
7.8.1 (values recorded from chainer 7.8.1, 2026-11-25): the cut Variable becomes a root, and
backward passes stop there also in graphs built from it before the cut."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import functions as F

from .helpers import _c


class SinCos(chainer.FunctionNode):
    def forward_cpu(self, inputs):
        self.retain_inputs((0,))
        (x,) = inputs
        return np.sin(x), np.cos(x)

    def backward(self, target_input_indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        g0, g1 = grad_outputs
        return (g0 * F.cos(x) - g1 * F.sin(x),)


class Mul(chainer.FunctionNode):
    def forward(self, inputs):
        self.retain_inputs((0, 1))
        return (inputs[0] * inputs[1],)

    def backward(self, target_input_indexes, grad_outputs):
        a, b = self.get_retained_inputs()
        return grad_outputs[0] * b, grad_outputs[0] * a


def _arrays(gs: list) -> list:
    return [None if g is None else g.array.tolist() for g in gs]


def test_unchain_stops_graphs_built_before() -> None:
    x = _c([1.0, 2.0])
    y = x * 3
    z = F.sum(y * y)
    y.unchain()
    assert y.creator is None and y.requires_grad
    z.backward()
    assert x.grad is None and y.grad.tolist() == [6.0, 12.0]  # chainer 7.8.1
    x = _c([1.0, 2.0])
    y = x * 3
    z = F.sum(y * y) + F.sum(x)
    y.unchain()
    assert _arrays(chainer.grad([z], [x, y])) == [[1.0, 1.0], [6.0, 12.0]]


def test_unchain_then_build() -> None:
    x = _c([1.0, 2.0])
    y = x * 3
    y.unchain()
    z = F.sum(y * x)
    assert _arrays(chainer.grad([z], [x, y])) == [[3.0, 6.0], [1.0, 2.0]]  # chainer 7.8.1
    x = _c([1.0, 2.0])
    y = x * 2
    y.creator_node = None
    assert y.creator is None
    x.unchain()  # a root: nothing to do
    x.unchain_backward()
    assert x.creator is None and x.requires_grad


def test_unchain_one_output_of_several() -> None:
    x = _c([0.5, 1.0])
    s, c = SinCos().apply((x,))
    z = F.sum(s * 2) + F.sum(c * 3)
    s.unchain()
    z.backward()
    # chainer 7.8.1: only the cosine's path reaches x; s keeps its gradient
    np.testing.assert_allclose(x.grad, [-1.43827662, -2.52441295])
    assert s.grad.tolist() == [2.0, 2.0] and c.grad is None
    x.cleargrad()
    s.cleargrad()
    F.sum(s * c).backward()
    np.testing.assert_allclose(x.grad, [-0.22984885, -0.70807342])
    np.testing.assert_allclose(s.grad, np.cos([0.5, 1.0]))
    (gx, gc_) = chainer.grad([z], [x, c], enable_double_backprop=True)
    np.testing.assert_allclose(gx.array, [-1.43827662, -2.52441295])
    assert gc_.array.tolist() == [3.0, 3.0]
    c.unchain()
    x.cleargrad()
    s.cleargrad()
    z.backward()
    assert x.grad is None and s.grad.tolist() == [2.0, 2.0] and c.grad.tolist() == [3.0, 3.0]


def test_forward_reexecution_keeps_the_cut() -> None:
    x = _c([0.5, 1.0])
    s, c = SinCos().apply((x,))
    z = F.sum(s * 2) + F.sum(c * 3)
    s.unchain()
    s.array = np.array([10.0, 20.0])
    x.array = np.array([0.0, 0.0])
    z.forward()
    assert z.array.tolist() == 2 * 30.0 + 3 * 2.0
    x2 = _c([1.0])
    v = F.sum(x2 * 3) * 2
    inner = v.creator.srcs[0]
    v.unchain_backward()
    with pytest.raises(RuntimeError, match=r"output 0 was cut.*Variable was gone"):
        w = chainer.Variable(np.ones(()))
        w._creator = inner  # a graph through the dropped output, re-executed
        w._idx = 0
        w.forward()


def test_unchain_backward_truncated_bptt_matches_chainer() -> None:
    x = _c([0.5, 1.0])
    h = _c([0.0, 0.0])
    W = _c([0.7, -0.3])
    expected = [  # chainer 7.8.1: W.grad, x.grad after each step
        ([0.0, 0.0], [0.72686198, 0.63970001]),
        ([0.33894078, 0.57264354], [1.46031405, 1.39160119]),
        ([0.78282238, 1.05227998], [2.11601186, 2.13199402]),
    ]
    refs = []
    for gw, gx in expected:
        h = F.tanh(h * W + x)
        loss = F.sum(h * h)
        loss.backward()
        np.testing.assert_allclose(W.grad, gw, atol=1e-8)
        np.testing.assert_allclose(x.grad, gx, atol=1e-8)
        refs.append(weakref.ref(h.creator))
        h.unchain_backward()
        assert h.creator is None
    del loss
    gc.collect()
    assert all(r() is None for r in refs)  # the cut graphs are freed


def test_unchain_backward_cuts_earlier_graphs() -> None:
    x = _c([1.0, 2.0])
    h = x * 2
    h2 = h * 3
    loss = F.sum(h2 * x)
    h2.unchain_backward()
    assert h2.creator is None and h.creator is None and h2.requires_grad
    loss.backward()
    # chainer 7.8.1
    assert x.grad.tolist() == [6.0, 12.0] and h2.grad.tolist() == [1.0, 2.0] and h.grad is None


def test_function_node_unchain() -> None:
    x, w = _c([1.0, 2.0]), _c([3.0, 4.0])
    f = Mul()
    (y,) = f.apply((x, w))
    z = F.sum(y * y)
    f.unchain()
    assert y.creator is None and f.inputs is None and f.outputs is None
    z.backward()
    assert x.grad is None and y.grad.tolist() == [6.0, 16.0]  # chainer 7.8.1


def test_unchain_backward_frees_user_functions() -> None:
    x = _c([0.5, 1.0])
    h = _c([0.0, 0.0])
    w = _c([0.7, -0.3])
    refs = []
    for _ in range(3):
        f = Mul()
        (hw,) = f.apply((h, w))
        refs.append(weakref.ref(f))
        h = F.tanh(hw + x)
        F.sum(h * h).backward()
        h.unchain_backward()
        assert f.inputs is None and f.outputs is None
    del f, hw
    gc.collect()
    assert [r() is None for r in refs] == [True, True, True]
    # chainer 7.8.1 (the gradients accumulated over the three truncated steps)
    np.testing.assert_allclose(w.grad, [0.7828223752218719, 1.0522799811946801], rtol=1e-12)
    np.testing.assert_allclose(x.grad, [2.116011857110083, 2.131994021222841], rtol=1e-12)


def test_cut_user_function_keeps_its_target_inputs() -> None:
    targets = []

    class ProdSum(chainer.FunctionNode):
        def forward(self, inputs):
            a, b = inputs
            return a * b, a + b

        def backward(self, target_input_indexes, grad_outputs):
            targets.append(target_input_indexes)
            g0, g1 = grad_outputs
            return g0 * 3.0 + g1, g0 * 2.0 + g1  # (a, b) = (2, 3) here

    a = _c([2.0])
    b = _c([3.0], requires_grad=False)
    p, s = ProdSum().apply((a, b))
    z = F.sum(p * 5) + F.sum(s * 7)
    p.unchain()
    z.backward()
    assert targets == [(0,)]  # only a needs a gradient, also after the cut
    assert a.grad.tolist() == [7.0] and p.grad.tolist() == [5.0]


@pytest.mark.parametrize("cut", ["unchain", "unchain_backward", "array"])
def test_cuts_inside_a_compiled_step_are_refused(cut: str) -> None:
    # regression: t.unchain() inside gh.compile made t a leaf holding the first call's values
    # (the loss and gradients of later calls were wrong, silently); detach() is replayed
    import gradhub as gh

    rng = np.random.default_rng(0)
    w = chainer.Variable(rng.standard_normal((4, 3)).astype(np.float32))
    x = rng.standard_normal((8, 4)).astype(np.float32)

    def step(xv: chainer.Variable, cut: str = cut) -> chainer.Variable:
        h = F.matmul(xv, w)
        t = h * 0.5
        if cut == "unchain":
            t.unchain()
        elif cut == "unchain_backward":
            t.unchain_backward()
        elif cut == "array":
            t = chainer.Variable(t.array)
        else:
            t = t.detach()
        return F.sum((h - t) ** 2)

    with pytest.raises(NotImplementedError, match=r"gradhub\.compile"):
        gh.compile(step)(x)
    fast = gh.compile(lambda xv: step(xv, "detach"))
    for k in range(3):
        want = step(chainer.Variable(x * (k + 1)), "detach").array
        assert fast(x * (k + 1)).array == want, f"call {k}"
