"""nnabla's static loop recorded on a device that records (gradhub.capture_static): ``x.d =
batch; solver.zero_grad(); loss.forward(); loss.backward(clear_buffer=...); solver.update()``.

The device is tests/recording_device.py's stand-in for CUDA graphs (a launch writes the new
values into the arrays the recording created). The forward schedule is recorded at the third
``forward()``, ``backward(clear_buffer=True)``'s walk at its third call after that; every step's
loss, gradients and parameters equal those of the same loop run as a plan (not recorded) bit for
bit, for several solvers. ``backward(clear_buffer=False)`` keeps each intermediate's gradient
(``retain_grad``): its walk is recorded too, and each intermediate's ``.g`` is a copy of the
recorded one that later steps leave alone. tests/cuda/test_capture_static.py runs the loop on a
GPU.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import gradhub_compat.nnabla.solvers as S
import numpy as np
import pytest
from gradhub import capture, plan
from recording_device import RecArray, RecordingDevice, recording_device


@pytest.fixture
def rec(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingDevice]:
    """Every installed plugin and the recording device; plans and recording on."""
    for var in ("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "GRADHUB_PLUGINS", "GRADHUB_BLOCK_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    with recording_device() as dev:
        yield dev


def _loop(solver: Any, clear_buffer: bool, recorded: bool, steps: int) -> list[np.ndarray]:
    """The loop's loss, gradients and parameters at each step (copies on the host)."""
    before = capture.set_enabled(recorded)
    try:
        nn.clear_parameters()
        rng = np.random.RandomState(0)
        x = nn.Variable((8, 6))
        t = nn.Variable((8, 1))
        h = F.relu(PF.affine(x, 5, name="fc1", rng=rng))
        loss = F.mean(F.softmax_cross_entropy(PF.affine(h, 3, name="fc2", rng=rng), t))
        params = nn.get_parameters()
        solver.set_parameters(params)
        out: list[np.ndarray] = []
        kept: list[tuple[Any, np.ndarray]] = []
        for step in range(steps):
            x.d = np.random.RandomState(step).randn(8, 6)
            t.d = np.random.RandomState(step).randint(0, 3, (8, 1))
            solver.zero_grad()
            loss.forward(clear_no_need_grad=True)
            loss.backward(clear_buffer=clear_buffer)
            solver.weight_decay(1e-4)
            solver.update()
            values = [loss.d] + [p.g for p in params.values()] + [p.d for p in params.values()]
            # clear_buffer=False keeps the intermediates' gradients (nnabla's h.g)
            held = [] if clear_buffer else [h.g]
            assert all(type(v) is RecArray for v in values + held)
            out += [np.array(v.view(np.ndarray)) for v in values + held]
            # (the parameters are updated in their arrays, as nnabla's solvers do)
            kept += [(v, np.array(v.view(np.ndarray))) for v in values[: 1 + len(params)] + held]
        for v, host in kept:  # no loss or gradient handed out was written by a later step
            np.testing.assert_array_equal(v, host)
        p = plan.plan_of(loss)
        assert p is not None and (p.recorded is not None) is recorded
        return out
    finally:
        capture.set_enabled(before)


@pytest.mark.parametrize(
    "make",
    [lambda: S.Sgd(lr=0.1), lambda: S.Momentum(lr=0.1), lambda: S.Adam(alpha=0.01)],
    ids=["Sgd", "Momentum", "Adam"],
)
@pytest.mark.parametrize("clear_buffer", [True, False])
def test_the_recorded_static_loop_gives_the_plans_numbers(
    rec: RecordingDevice, make: Any, clear_buffer: bool
) -> None:
    got = _loop(make(), clear_buffer, True, 8)
    launches = [g.launches for g in rec.graphs]
    want = _loop(make(), clear_buffer, False, 8)
    assert len(got) == len(want) == 8 * (9 if clear_buffer else 10)
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(a, b, err_msg=f"value {k}")
    # forward recorded at step 3, the walk at step 5 (with clear_buffer=False a retain_grad walk,
    # which gives the intermediates' .g copies of its recorded gradients)
    assert launches == [6, 4]
