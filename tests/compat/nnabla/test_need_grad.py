"""``need_grad=False`` in the nnabla layer: on an intermediate Variable it stops ``backward`` and
``grad`` there, before building and on the root, and on one output of a multi-output function
it is refused. Expected values are those of nnabla 1.39, re-derived with numpy.
"""

from __future__ import annotations

import gradhub as gh
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest
from compat.nnabla.helpers import _var64


def test_need_grad_false_on_an_intermediate_stops_backward_and_grad() -> None:
    x = _var64([1.0, 2.0])
    h = x * 3
    y = F.sum(h * x)  # dy/dx = 6x through both paths; with h held fixed: h = 3x
    h.need_grad = False  # set after the graph was built
    assert h.need_grad is False
    y.forward()
    y.backward()
    np.testing.assert_allclose(x.g, [3.0, 6.0])  # nnabla 1.39: [3, 6]
    assert not h.g.any()  # nnabla leaves h.g at zeros
    g = nn.grad([y], [x])[0]
    g.forward()
    np.testing.assert_allclose(g.d, [3.0, 6.0])
    h.need_grad = True  # restores the path
    x.g = 0
    y.backward()
    np.testing.assert_allclose(x.g, [6.0, 12.0])
    np.testing.assert_allclose(nn.grad([y], [x])[0].d, [6.0, 12.0])


def test_need_grad_false_before_building_and_on_the_root() -> None:
    x = _var64([1.0, 2.0])
    h = x * 3
    h.need_grad = False
    y = F.sum(h * x)
    assert y.need_grad is True
    y.backward()
    np.testing.assert_allclose(x.g, [3.0, 6.0])
    x.g = 0
    y3 = F.sum(h)
    assert y3.need_grad is False  # built from h only
    y3.backward()
    assert not x.g.any()
    r = x * 2
    r.need_grad = False
    r.backward()  # nnabla backpropagates from a root all the same
    np.testing.assert_allclose(x.g, [2.0, 2.0])
    assert r.need_grad is False
    # the layer reuses the native Variable's need_grad (a property with these semantics)
    assert "need_grad" not in nn.Variable.__dict__
    assert isinstance(gh.Variable.__dict__["need_grad"], property)


def test_need_grad_false_on_one_output_of_a_multi_output_function_is_refused() -> None:
    xs = _var64([[1.0, 2.0], [3.0, 4.0]])
    a, b = F.split(xs, axis=0)
    with pytest.raises(NotImplementedError, match="need_grad=False on one output of split"):
        a.need_grad = False
    a.need_grad = True  # allowed (nothing to change)
    ym = F.sum(a * 2.0) + F.sum(b * 3.0)
    ym.backward()
    np.testing.assert_allclose(xs.g, [[2.0, 2.0], [3.0, 3.0]])


def test_backward_from_a_graph_that_needs_no_gradient_does_nothing_as_nnabla() -> None:
    """The native ``backward()`` refuses a Variable that needs no gradient; nnabla's runs and
    leaves the gradients as they were (nnabla 1.39: no error)."""
    x = _var64([1.0, 2.0], need_grad=False)
    y = F.sum(x * x)
    y.forward()
    y.backward()
    assert not x.g.any()
    with gh.no_grad():
        z = F.sum(x * 2.0)
    with pytest.raises(RuntimeError, match="no parent"):  # a leaf here, as in nnabla
        z.backward()


@pytest.mark.parametrize("planned", [True, False])
def test_need_grad_set_on_a_leaf_after_the_graph_was_built(planned: bool) -> None:
    # regression: functions recorded while none of their inputs needed a gradient kept no rule,
    # so x.need_grad = True set after the graph was built gave x zero gradients; nnabla works
    # need_grad out again at every forward() (its graph visit), and so does the front-end now

    before = gh.plan.enabled()
    gh.plan.set_enabled(planned)
    try:
        rs = np.random.RandomState
        x = nn.Variable((3, 4), need_grad=False)
        w = nn.Variable((3, 4), need_grad=False)
        loss = F.sum((F.tanh(x) * w) ** 2)
        for it in range(6):
            x.d, w.d = rs(it).randn(3, 4), rs(it + 9).randn(3, 4)
            if it == 2:
                x.need_grad = True
            if it == 4:
                w.need_grad = True
            x.grad.zero()
            w.grad.zero()
            loss.forward()
            loss.backward()
            # d/dx sum((tanh(x) w)^2) = 2 tanh(x) w^2 (1 - tanh(x)^2); d/dw = 2 tanh(x)^2 w
            t = np.tanh(x.d)
            want_x = 2 * t * w.d**2 * (1 - t * t) if it >= 2 else np.zeros((3, 4))
            want_w = 2 * t * t * w.d if it >= 4 else np.zeros((3, 4))
            np.testing.assert_allclose(x.g, want_x, rtol=1e-5, atol=1e-6, err_msg=f"{it}")
            np.testing.assert_allclose(w.g, want_w, rtol=1e-5, atol=1e-6, err_msg=f"{it}")
    finally:
        gh.plan.set_enabled(before)


def _compiled_need_grad_step(stop: str) -> tuple[nn.Variable, nn.Variable, object]:
    """A step that builds sum(tanh(x) * w) on the argument x, sets w.need_grad = True after
    building (as in nnabla's GAN idiom) and runs forward() and backward(); ``stop`` puts
    ``no_grad()`` or an unlinked copy between tanh(x) and the product."""
    rs = np.random.RandomState(3)
    w = nn.Variable.from_numpy_array(rs.randn(3, 4))
    p = nn.Variable.from_numpy_array(rs.randn(3, 4), need_grad=True)

    def step(x: gh.Variable) -> nn.Variable:
        xv = nn.Variable.from_numpy_array(x)
        h = F.tanh(xv * p)
        if stop == "no_grad":
            with gh.no_grad():
                h = h * 1.0
        elif stop == "unlinked":
            h = h.get_unlinked_variable(need_grad=False)
        loss = F.sum(h * w)
        w.need_grad = True
        loss.forward()
        w.grad.zero()
        p.grad.zero()
        loss.backward()
        return loss

    return w, p, step


@pytest.mark.parametrize("stop", ["", "no_grad", "unlinked"])
def test_need_grad_set_after_building_inside_a_compiled_step(stop: str) -> None:
    # regression: inside a step that gradhub.compile traced, a function recorded while none of
    # its inputs needed a gradient kept no rule, so w.need_grad = True set after building gave
    # w zero gradients at every call (eagerly it has them); deliberate stops (no_grad(), an
    # unlinked copy) still stop the gradient of p there
    w, p, step = _compiled_need_grad_step(stop)
    fast = gh.compile(step)
    for call in range(4):
        w.need_grad = False
        x = np.random.RandomState(call).randn(3, 4)
        loss = fast(x)
        t = np.tanh(x.astype(np.float32) * p.d)
        # d/dw sum(tanh(x p) w) = tanh(x p); d/dp = w x (1 - tanh(x p)^2), stopped: 0
        np.testing.assert_allclose(w.g, t, rtol=1e-6, err_msg=f"call {call}")
        want_p = np.zeros((3, 4)) if stop else w.d * x * (1 - t * t)
        np.testing.assert_allclose(p.g, want_p, rtol=1e-5, atol=1e-6, err_msg=f"call {call}")
        np.testing.assert_allclose(loss.d, np.sum(t * w.d), rtol=1e-5)
        got = (w.g.copy(), p.g.copy(), loss.d.copy())
        w.need_grad = False
        eager = step(gh.Variable(x))  # the same numbers, bit for bit
        for a, b in zip(got, (w.g, p.g, eager.d)):
            np.testing.assert_array_equal(a, b, err_msg=f"call {call}")
