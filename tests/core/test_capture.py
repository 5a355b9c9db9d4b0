"""Captured compiled steps (gradhub.capture): the core's part, on the CPU.

The numpy device records nothing (a compiled step there stays a plan, and says why). The core's
logic around a device graph (input buffers, leaves copied back into the recorded arrays, results
handed out as copies, recording again when the plan changes, refusals) is tested here with a
stand-in device: the numpy device told that it can record, whose "graph" runs the recorded run
again at each launch, which is what a CUDA graph's replay computes. tests/cuda/test_capture.py
runs the same on a GPU with real CUDA graphs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub import capture, plan
from gradhub.device import CpuDevice


class _Graph:
    """Stands for a recorded graph: each launch runs the recorded run again."""

    def __init__(self, run: Callable[[], None], log: dict[str, int]) -> None:
        self.run = run
        self.log = log
        self.fail = False

    def launch(self) -> bool:
        self.log["launches"] += 1
        self.run()
        return not self.fail


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """The numpy device able to record (a stand-in graph); the log counts captures/launches."""
    log: dict[str, Any] = {"captures": 0, "launches": 0, "graphs": []}

    def fake_capture(self: CpuDevice, run: Callable[[], None]) -> _Graph:
        log["captures"] += 1
        run()  # the recording pass (its work only runs at the launch on a real device)
        g = _Graph(run, log)
        log["graphs"].append(g)
        return g

    monkeypatch.setattr(CpuDevice, "can_capture", True)
    monkeypatch.setattr(CpuDevice, "capture", fake_capture)
    before = plan.set_enabled(True), capture.set_enabled(True)
    yield log
    plan.set_enabled(before[0])
    capture.set_enabled(before[1])


def _mlp(w: gh.Variable, b: gh.Variable) -> Callable[[Any], Any]:
    def step(x: Any) -> Any:
        h = x @ w + b
        loss = F.sum(F.log(h * h + 1.0))
        gw, gb = gh.grad([loss], [w, b], create_graph=False)
        return loss, gw, gb

    return step


def _params(rng: np.random.Generator) -> tuple[gh.Variable, gh.Variable]:
    return gh.Variable(rng.standard_normal((4, 3))), gh.Variable(rng.standard_normal(3))


def _same(a: Any, b: Any) -> None:
    assert len(a) == len(b)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u.d, v.d)
        assert u.d.dtype == v.d.dtype


def _calls(seed: int, n: int) -> tuple[Any, Callable[[Any], Any], list[Any], list[Any]]:
    """A compiled MLP step called ``n`` times on new inputs: (step, eager step, inputs,
    results)."""
    rng = np.random.default_rng(seed)
    w, b = _params(rng)
    step = gh.compile(_mlp(w, b))
    xs = [rng.standard_normal((5, 4)) for _ in range(n)]
    return step, _mlp(w, b), xs, [step(x) for x in xs]


def test_a_compiled_step_on_the_cpu_stays_a_plan_and_says_why() -> None:
    step, eager, xs, outs = _calls(0, 4)
    assert step.capture_refused is not None
    assert "device 'cpu' cannot record its work into a graph" in step.capture_refused
    for x, out in zip(xs, outs):
        _same(out, eager(x))


def test_recorded_steps_give_the_eager_results(recording: dict[str, Any]) -> None:
    step, eager, xs, outs = _calls(1, 6)
    assert step.capture_refused is None
    assert recording["captures"] == 1  # at the third call
    assert recording["launches"] == 4  # calls 3 to 6
    for x, out in zip(xs, outs):
        _same(out, eager(x))


def test_results_are_copies_that_later_calls_leave_alone(recording: dict[str, Any]) -> None:
    step, _, xs, outs = _calls(2, 5)
    kept = [[np.array(v.d, copy=True) for v in out] for out in outs]
    step(xs[0] * 2)
    for out, k in zip(outs, kept):
        for v, a in zip(out, k):
            np.testing.assert_array_equal(v.d, a)


def test_parameters_updated_in_place_or_replaced_are_followed(recording: dict[str, Any]) -> None:
    rng = np.random.default_rng(3)
    w, b = _params(rng)
    step = gh.compile(_mlp(w, b))
    x = rng.standard_normal((5, 4))
    for k in range(6):
        loss, gw, gb = step(x)
        _same((loss, gw, gb), _mlp(w, b)(x))
        if k % 2:
            w.d -= 0.1 * gw.d  # in place: the recorded array itself
        else:
            old = w.d
            w.d = w.d - 0.1 * gw.d  # a new array: copied back into the recorded one
            assert w.d is not old
    assert recording["captures"] == 1
    assert recording["launches"] == 4


def test_a_new_leaf_shape_traces_and_records_again(recording: dict[str, Any]) -> None:
    rng = np.random.default_rng(4)
    w, b = _params(rng)
    step = gh.compile(_mlp(w, b))
    for _ in range(3):
        step(rng.standard_normal((5, 4)))
    assert recording["captures"] == 1
    b.d = b.d.reshape(1, 3)  # a leaf of another shape: planned and recorded again
    x = rng.standard_normal((5, 4))
    for _ in range(4):
        out = step(x)
        _same(out, _mlp(w, b)(x))
        assert out[2].d.shape == (1, 3)
    assert recording["captures"] == 2


def test_a_changed_need_grad_runs_the_plan_and_records_again(recording: dict[str, Any]) -> None:
    rng = np.random.default_rng(5)
    w, b = _params(rng)
    c = gh.Variable(rng.standard_normal(3))

    def f(x: Any) -> Any:
        loss = F.sum((x @ w + b) * c)
        return gh.grad([loss], [w], create_graph=False)[0]

    step = gh.compile(f)
    x = rng.standard_normal((2, 4))
    for _ in range(3):
        step(x)
    launches = recording["launches"]
    c.need_grad = False  # the step is traced again (its functions were recorded with c's flag)
    _same([step(x)], [f(x)])
    assert recording["launches"] == launches  # the recording was not launched
    assert recording["captures"] == 1
    _same([step(x)], [f(x)])  # the new trace's first replay runs its plan
    assert recording["captures"] == 1
    _same([step(x)], [f(x)])
    assert recording["captures"] == 2  # recorded again at the next call


def test_a_failed_deferred_check_runs_the_plan(recording: dict[str, Any]) -> None:
    rng = np.random.default_rng(6)
    w, b = _params(rng)
    step = gh.compile(_mlp(w, b))
    x = rng.standard_normal((5, 4))
    for _ in range(3):
        step(x)
    recording["graphs"][-1].fail = True
    _same(step(x), _mlp(w, b)(x))  # the plan's result (on a GPU: the kernel's error)


def test_backward_in_a_step_is_recorded(recording: dict[str, Any]) -> None:
    rng = np.random.default_rng(7)
    w, b = _params(rng)

    def f(x: Any) -> Any:
        loss = F.sum((x @ w + b) ** 2)
        loss.backward()
        return loss

    step = gh.compile(f)
    for _ in range(3):
        step(rng.standard_normal((2, 4)))
    assert step.capture_refused is None  # (tests/core/test_capture_backward.py: its .g)
    assert recording["captures"] == 1


@pytest.mark.nn_ops
def test_random_functions_are_not_recorded(recording: dict[str, Any]) -> None:
    rng = np.random.default_rng(8)
    w, b = _params(rng)

    def f(x: Any) -> Any:
        loss = F.sum(F.dropout(x @ w + b, p=0.5))
        return gh.grad([loss], [w], create_graph=False)[0]

    step = gh.compile(f)
    for _ in range(3):
        step(rng.standard_normal((2, 4)))
    assert step.capture_refused is not None and "DropoutMask" in step.capture_refused
    assert recording["captures"] == 0


def test_recording_stops_after_max_captures(
    recording: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(capture, "MAX_CAPTURES", 2)
    rng = np.random.default_rng(9)
    w, b = _params(rng)
    step = gh.compile(_mlp(w, b))
    x = rng.standard_normal((5, 4))
    for k in range(12):
        _same(step(x), _mlp(w, b)(x))
        w.need_grad = bool(k % 2)  # every call: planned again, recorded again
        w.need_grad = True
    assert recording["captures"] == 2
    assert step.capture_refused is not None and "recorded 2 times" in step.capture_refused


def test_recording_can_be_turned_off(recording: dict[str, Any]) -> None:
    rng = np.random.default_rng(10)
    w, b = _params(rng)
    step = gh.compile(_mlp(w, b))
    before = capture.set_enabled(False)
    try:
        for _ in range(4):
            step(rng.standard_normal((5, 4)))
    finally:
        capture.set_enabled(before)
    assert recording["captures"] == 0


def test_a_function_registered_as_random_keeps_its_step_out_of_recordings(
    recording: dict[str, Any], fresh_plugins: None
) -> None:
    import types

    from gradhub import plugins

    mod = types.ModuleType("noise_plugin")

    @gh.hookimpl
    def gradhub_add_functions(register: Any) -> None:
        register.function(
            "AddNoise",
            lambda xp, x: x + np.random.default_rng().random(x.shape),
            differentiable=False,
            random=True,
        )

    mod.gradhub_add_functions = gradhub_add_functions  # type: ignore[attr-defined]
    plugins.load_plugins(extra=[("noise_plugin", mod)])
    assert gh.ops.fdef("AddNoise").random
    w = gh.Variable(np.ones(3))

    def f(x: Any) -> Any:
        return F.sum(gh.ops.call("AddNoise", x) * w)

    step = gh.compile(f)
    for _ in range(3):
        step(np.ones(3))
    assert step.capture_refused is not None and "AddNoise draws random numbers" in (
        step.capture_refused
    )
    assert recording["captures"] == 0


def test_copy_into_a_recorded_array() -> None:
    """``capture.copy_into`` copies a leaf's new array into the recorded one; a view of all of
    the recorded array (an update in place) needs no copy; another shape, dtype or array type
    cannot be read by the recording."""
    from gradhub.capture import copy_into

    rec = np.zeros((2, 3))
    new = np.arange(6.0).reshape(2, 3)
    assert copy_into(rec, new) and rec.tolist() == new.tolist() and rec is not new
    view = rec.view()
    view -= 1.0
    assert copy_into(rec, view) and rec[0, 0] == -1.0
    assert copy_into(rec, rec)
    assert not copy_into(rec, np.zeros((3, 2)))
    assert not copy_into(rec, np.zeros((2, 3), np.float32))
    assert not copy_into(rec, np.zeros((2, 3)).view(np.matrix))
    assert rec.tolist() == (new - 1.0).tolist()
