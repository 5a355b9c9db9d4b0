"""nnabla's static loop recorded on a device that records (gradhub.capture_static): ``x.d =
batch; solver.zero_grad(); loss.forward(); loss.backward(clear_buffer=...); solver.update()``.

The device is tests/recording_device.py's stand-in for CUDA graphs (a launch writes the new
values into the arrays the recording created). The forward schedule is recorded at the third
``forward()``, ``backward(clear_buffer=True)``'s walk at its third call after that; every step's
loss, gradients and parameters equal those of the same loop run as a plan (not recorded) bit for
bit, for several solvers. ``backward(clear_buffer=False)`` keeps each intermediate's gradient
(``retain_grad``): its walk is recorded too, and each intermediate's ``.g`` is a copy of the
recorded one that later steps leave alone. Seeded random networks give the same numbers recorded,
as plans and walked by the engine; function hooks passed to forward()/backward() of a recorded
graph run around every function. tests/cuda/test_capture_static.py runs the loop on a GPU.
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
from recording_device import (
    RecArray,
    RecordingDevice,
    assert_modes_agree,
    recording_device,
    run_mode,
)


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


def _random_loop(seed: int, mode: str) -> list[np.ndarray]:
    """A seeded random network (affine layers, activations, a batch mean, maybe a second loss
    term) trained by nnabla's static loop for 7 steps, ``mode`` "engine" (plans off), "plan"
    or "recorded": every loss, gradient, parameter and (``clear_buffer=False``) intermediate
    gradient, copied to the host."""
    with run_mode(mode):
        nn.clear_parameters()
        rng = np.random.RandomState(seed)
        batch, n = rng.randint(2, 6), rng.randint(2, 6)
        x, t = nn.Variable((batch, n)), nn.Variable((batch, 1))
        h = PF.affine(x, int(rng.randint(2, 6)), name="fc0", rng=rng)
        middle = [h]
        for i in range(rng.randint(1, 5)):
            r = rng.rand()
            if r < 0.3:
                h = PF.affine(h, int(rng.randint(2, 6)), name=f"fc{i + 1}", rng=rng)
            elif r < 0.5:
                h = F.relu(h)
            elif r < 0.65:
                h = F.tanh(h)
            elif r < 0.8:
                h = F.sigmoid(h) * h
            else:
                h = h + F.mean(h, axis=0, keepdims=True)
            middle.append(h)
        classes = h.shape[1]
        loss = F.mean(F.softmax_cross_entropy(h, t))
        if rng.rand() < 0.3:
            loss = loss + F.mean(middle[0] * middle[0]) * 0.1
        clear_buffer = bool(rng.rand() < 0.5)
        solver = [S.Sgd(lr=0.1), S.Momentum(lr=0.1), S.Adam(alpha=0.01)][rng.randint(3)]
        params = nn.get_parameters()
        solver.set_parameters(params)
        out: list[np.ndarray] = []
        for step in range(7):
            x.d = np.random.RandomState(100 + step).randn(batch, n)
            t.d = np.random.RandomState(100 + step).randint(0, classes, (batch, 1))
            solver.zero_grad()
            loss.forward(clear_no_need_grad=True)
            loss.backward(clear_buffer=clear_buffer)
            solver.update()
            values = [loss.d] + [p.g for p in params.values()] + [p.d for p in params.values()]
            if not clear_buffer:
                values += [v.g for v in middle]
            out += [np.array(np.asarray(v).view(np.ndarray)) for v in values]
        p = plan.plan_of(loss)
        assert (p is not None and p.recorded is not None) is (mode == "recorded")
        return out


@pytest.mark.parametrize("seed", range(12))
def test_random_networks_recorded_planned_and_walked_agree(rec: RecordingDevice, seed: int) -> None:
    assert_modes_agree(lambda mode: _random_loop(seed, mode))


def test_function_hooks_run_on_a_recorded_static_graph(rec: RecordingDevice) -> None:
    """Hooks passed to forward()/backward() of a graph whose plan and walk are recorded are
    called around every function, and the graph gives the same numbers with them as without."""
    nn.clear_parameters()
    rng = np.random.RandomState(0)
    x, t = nn.Variable((8, 6)), nn.Variable((8, 1))
    h = F.relu(PF.affine(x, 5, name="fc1", rng=rng))
    loss = F.mean(F.softmax_cross_entropy(PF.affine(h, 3, name="fc2", rng=rng), t))
    params = list(nn.get_parameters().values())

    def step(k: int, forward_hooks: Any = None, backward_hooks: Any = None) -> list[np.ndarray]:
        x.d = np.random.RandomState(k).randn(8, 6)
        t.d = np.random.RandomState(k).randint(0, 3, (8, 1))
        for p in params:
            p.grad.zero()
        loss.forward(**(forward_hooks or {}))
        loss.backward(clear_buffer=True, **(backward_hooks or {}))
        return [np.array(v.view(np.ndarray)) for v in [loss.d] + [p.g for p in params]]

    plain = [step(k) for k in range(8)]
    p = plan.plan_of(loss)
    assert p is not None and p.recorded is not None
    calls: list[tuple[str, str]] = []
    hooked = step(
        7,
        {"function_pre_hook": lambda f: calls.append(("forward", f.name))},
        {
            "function_pre_hook": lambda f: calls.append(("backward", f.name)),
            "function_post_hook": lambda f: calls.append(("after", f.name)),
        },
    )
    forward = ["Affine", "ReLU", "Affine", "SoftmaxCrossEntropy", "Mean"]
    backward = [(w, n) for n in reversed(forward) for w in ("backward", "after")]
    assert calls == [("forward", n) for n in forward] + backward
    for a, b in zip(hooked, plain[7]):
        np.testing.assert_array_equal(a, b)
    # and the hooks are gone again: the graph runs as before, calling nothing. (The hooks were
    # shown Variables made for outputs nothing referred to, which changes the graph's links: the
    # plan is made again, and recorded again at its third run)
    for _ in range(4):
        again = step(7)
        assert calls == [("forward", n) for n in forward] + backward
        for a, b in zip(again, plain[7]):
            np.testing.assert_array_equal(a, b)
    p = plan.plan_of(loss)
    assert p is not None and p.recorded is not None
    launches = [g.launches for g in rec.graphs]
    step(7)
    assert [g.launches for g in rec.graphs] != launches
