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
