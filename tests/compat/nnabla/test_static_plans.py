"""nnabla's static loop (``x.d = batch; loss.forward(); loss.backward(clear_buffer=...)``) runs
through gradhub's plans (docs/plans.md) and gives the numbers of the engine's walks bit for bit,
with ``clear_buffer`` on and off."""

from __future__ import annotations

import gradhub as gh
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest


def _loop(planned: bool, clear_buffer: bool) -> list[np.ndarray]:
    before = gh.plan.set_enabled(planned)
    try:
        nn.clear_parameters()
        rng = np.random.RandomState(0)
        x = nn.Variable((4, 6))
        t = nn.Variable((4, 1))
        h = F.relu(PF.affine(x, 5, name="fc1", rng=rng))
        loss = F.mean(F.softmax_cross_entropy(PF.affine(h, 3, name="fc2", rng=rng), t))
        params = list(nn.get_parameters().values())
        out = []
        for step in range(3):
            x.d = np.random.RandomState(step).randn(4, 6)
            t.d = np.random.RandomState(step).randint(0, 3, (4, 1))
            for p in params:
                p.grad.zero()
            loss.forward(clear_no_need_grad=True)
            loss.backward(clear_buffer=clear_buffer)
            out += [loss.d.copy()] + [p.g.copy() for p in params]
        assert (gh.plan.plan_of(loss) is not None) is planned
        return out
    finally:
        gh.plan.set_enabled(before)


@pytest.mark.parametrize("clear_buffer", [True, False])
def test_the_static_loop_through_plans_matches_the_engine(clear_buffer: bool) -> None:
    planned, eager = _loop(True, clear_buffer), _loop(False, clear_buffer)
    assert len(planned) == len(eager) == 15
    for a, b in zip(planned, eager):
        np.testing.assert_array_equal(a, b)


def _with_plans(planned: bool, run):  # type: ignore[no-untyped-def]
    before = gh.plan.enabled()
    gh.plan.set_enabled(planned)
    try:
        return run()
    finally:
        gh.plan.set_enabled(before)


def test_forward_after_setitem_on_a_planned_result_runs_the_new_graph() -> None:
    # regression: m[0] = v on a Variable whose forward() was planned left the old plan (keyed
    # by m) in use: forward() ignored the assignment, and backward() failed with AttributeError
    def run() -> list[np.ndarray]:
        a = nn.Variable((2, 3), need_grad=True)
        v = nn.Variable((3,), need_grad=True)
        a.d = np.arange(6.0).reshape(2, 3) / 10
        v.d = 5.0
        m = F.tanh(a)
        for _ in range(2):
            m.forward()
            m.backward(grad=np.ones((2, 3)))
        a.grad.zero()
        m[0] = v
        out = []
        for k in range(2):
            v.d = 5.0 + k
            m.forward()
            m.backward(grad=np.ones((2, 3)))
            out += [m.d.copy(), a.g.copy(), v.g.copy()]
        return out

    planned, plain = _with_plans(True, run), _with_plans(False, run)
    for a, b in zip(planned, plain):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(planned[3][0], [6.0, 6.0, 6.0])


@pytest.mark.parametrize("how", ["parent", "visit"])
def test_intermediates_taken_after_a_plan_is_made_follow_forward(how: str) -> None:
    # regression: an intermediate Variable nothing referred to, made again by loss.parent.inputs
    # or loss.visit after the plan's code was generated, was never written by forward() (zeros,
    # or the previous batch's values)
    def run() -> list[np.ndarray]:
        x = nn.Variable((2, 3))
        loss = F.sum(F.tanh(x * 2.0))
        for it in range(3):
            x.d = np.full((2, 3), 0.1 * it)
            loss.forward()
        if how == "parent":
            t = loss.parent.inputs[0]
        else:
            seen: dict[str, nn.Variable] = {}
            loss.visit(lambda f: seen.setdefault(f.info.type_name, f.outputs[0]))
            t = seen["Tanh"]
        out = []
        for it in range(3, 5):
            x.d = np.full((2, 3), 0.1 * it)
            loss.forward()
            out.append(t.d.copy())
        return out

    planned, plain = _with_plans(True, run), _with_plans(False, run)
    for k, (a, b) in enumerate(zip(planned, plain)):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, np.tanh(0.2 * (k + 3)), rtol=1e-6)
