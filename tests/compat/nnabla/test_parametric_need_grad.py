"""The parameters of nnabla's parametric functions: each use is an unlinked Variable sharing the
registered parameter, and each call sets the registered ``need_grad`` back to the function's
(``get_parameter_or_create(name, shape, init, True, not fix_parameters)``), as nnabla 1.39.

Expected values are nnabla 1.39's outputs for the same programs.
"""

from __future__ import annotations

import gradhub as gh
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import gradhub_compat.nnabla.solvers as S
import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _fresh_parameters() -> None:
    nn.clear_parameters()


def _net() -> tuple[nn.Variable, nn.Variable]:
    x = nn.Variable.from_numpy_array(np.array([[1.0, 2.0]], np.float32))
    h = PF.affine(x, 1, name="fc", with_bias=False)
    nn.get_parameters()["fc/affine/W"].d = np.array([[0.5], [-1.0]], np.float32)
    return x, h


def test_need_grad_set_on_the_parameter_after_the_build_leaves_the_graph_alone() -> None:
    _, h = _net()
    loss = F.sum(h**2)
    w = nn.get_parameters()["fc/affine/W"]
    w.need_grad = False
    w.g = 0
    loss.forward()
    loss.backward()
    np.testing.assert_array_equal(w.g.ravel(), [-3.0, -6.0])  # nnabla 1.39
    assert h.parent.inputs[1] == w and h.parent.inputs[1] is not w
    assert list(nn.get_parameters()) == []  # grad_only: the registered flag is False


def test_a_parametric_call_makes_the_parameter_trainable_again() -> None:
    x, _ = _net()
    w = nn.get_parameters()["fc/affine/W"]
    w.need_grad = False
    h2 = PF.affine(x, 1, name="fc", with_bias=False)
    assert w.need_grad is True  # nnabla 1.39
    assert list(nn.get_parameters()) == ["fc/affine/W"]
    loss = F.sum(h2**2)
    w.g = 0
    loss.forward()
    loss.backward()
    np.testing.assert_array_equal(w.g.ravel(), [-3.0, -6.0])
    # fix_parameters: this use passes no gradient; the registered flag stays True
    h3 = PF.affine(x, 1, name="fc", with_bias=False, fix_parameters=True)
    assert w.need_grad is True and not h3.parent.inputs[1].need_grad


def test_nn_grad_reaches_the_parameter_through_its_views() -> None:
    x, h = _net()
    w = nn.get_parameters()["fc/affine/W"]
    (g,) = nn.grad([F.sum(h**2) + F.sum(PF.affine(x, 1, name="fc", with_bias=False))], [w])
    # 2 (x W) x + x: both uses of W summed
    np.testing.assert_allclose(g.d.ravel(), [-3.0 + 1.0, -6.0 + 2.0])
    # the native gh.grad differentiates with respect to the Variables in the graph (the views)
    view = h.parent.inputs[1]
    (gv,) = gh.grad([F.sum(h**2)], [view])
    np.testing.assert_allclose(gv.d.ravel(), [-3.0, -6.0])


def test_training_with_a_toggled_flag_updates_as_nnabla() -> None:
    # the graph is built once; the registered flag of W flips before each backward: nnabla
    # still computes W's gradient through the view, and the solver, set up before, updates it
    _, h = _net()
    loss = F.sum(h)
    w = nn.get_parameters()["fc/affine/W"]
    solver = S.Sgd(0.1)
    solver.set_parameters(nn.get_parameters())
    for it in range(3):
        w.need_grad = it % 2 == 1
        solver.zero_grad()
        loss.forward()
        loss.backward()
        solver.update()
    # three steps of W -= 0.1 x^T with x = [1, 2] (nnabla 1.39)
    np.testing.assert_allclose(w.d.ravel(), [0.5 - 0.3, -1.0 - 0.6], rtol=1e-6)
