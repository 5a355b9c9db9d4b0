"""Recorded static graphs (gradhub.capture_static) and recorded ``backward()`` steps on a device
that replays fixed memory.

The device is tests/recording_device.py's stand-in: a launch writes the new values into the
arrays the recording pass created, as a CUDA graph's replay does, so a result, a ``.g`` or a
kept array that is a recorded array changes at the next launch, and Python state that only the
recording pass set is what the next call sees. On it:

* a compiled step calling ``backward()`` gives every call's ``.g`` and loss bit for bit as the
  eager step (``.g`` cleared, zeros, accumulated, replaced; parameters updated in place and
  replaced), and a ``.g`` kept from one call does not change at the next;
* a graph run with ``forward()``/``backward()`` (nnabla's loop, with the native Variables here;
  tests/compat/nnabla/test_static_capture.py runs nnabla's own) is recorded: forward at its
  third call, backward's walk at its third call after that; each step's loss, ``.g`` and
  parameters equal the unrecorded plan's bit for bit, with ``retain_graph`` False or True and
  ``retain_grad`` (the intermediates' ``.g`` too: copies that later launches leave alone), and a
  leaf replaced, a rule freed, a changed shape or ``need_grad`` run the plan;
* a plan of several outputs run by ``Plan.run_static`` with ``grad(..., create_graph=False)``
  (what mxnet's executors do; tests/compat/mxnet/test_executor_capture.py runs them) is recorded
  likewise, and ``grad()``'s results are copies that later launches leave alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub import capture, plan
from recording_device import RecArray, RecordingDevice, on_rec, recording_device


@pytest.fixture
def rec(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingDevice]:
    """The core with the recording device; plans and recording on; the context on it."""
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    with recording_device() as dev:
        yield dev


_on = on_rec


def _params(seed: int) -> list[gh.Variable]:
    rng = np.random.default_rng(seed)
    return [gh.Variable(_on(rng.standard_normal(s))) for s in [(4, 3), (3,)]]


def _twin(ps: list[gh.Variable]) -> list[gh.Variable]:
    return [gh.Variable(_on(p.d.copy())) for p in ps]


def _same(got: list[gh.Variable], want: list[gh.Variable], what: str) -> None:
    for k, (u, v) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(u.d, v.d, err_msg=f"{what}: .d of {k}")
        if v.g is None:
            assert u.g is None, f"{what}: .g of {k}"
            continue
        assert type(u.g) is RecArray and u.g.dtype == v.g.dtype, f"{what}: .g of {k}"
        np.testing.assert_array_equal(u.g, v.g, err_msg=f"{what}: .g of {k}")


# -- backward() inside a compiled step ---------------------------------------------------------


def _loss_step(w: gh.Variable, b: gh.Variable) -> Callable[[Any], Any]:
    def step(x: Any) -> Any:
        h = x @ w + b
        loss = F.sum(F.log(h * h + 1.0))
        loss.backward()
        return loss

    return step


@pytest.mark.parametrize("between", ["cleared", "zeros", "accumulated", "replaced"])
def test_a_recorded_backward_step_gives_the_eager_g(rec: RecordingDevice, between: str) -> None:
    ps = _params(0)
    qs = _twin(ps)
    step, eager = gh.compile(_loss_step(*ps)), _loss_step(*qs)
    rng = np.random.default_rng(1)
    held: list[tuple[Any, np.ndarray]] = []
    for k in range(7):
        x = _on(rng.standard_normal((5, 4)))
        for p, q in zip(ps, qs):
            if between == "cleared":
                p.cleargrad()
                q.cleargrad()
            elif between == "zeros":
                p.g, q.g = _on(np.zeros(p.shape)), _on(np.zeros(q.shape))
            elif between == "replaced" and k:
                g = _on(rng.standard_normal(p.shape))
                p.g, q.g = g, g.copy()
        loss, loss_eager = step(x), eager(x)
        np.testing.assert_array_equal(loss.d, loss_eager.d, err_msg=f"call {k + 1}")
        _same(ps, qs, f"call {k + 1}")
        held += [(p.g, np.array(p.g)) for p in ps]
        for p, q in zip(ps, qs):
            if k % 2:
                p.d -= 0.05 * p.g
                q.d -= 0.05 * q.g
            else:
                p.d = p.d - 0.05 * p.g
                q.d = q.d - 0.05 * q.g
    assert step.capture_refused is None
    assert len(rec.graphs) == 1 and rec.graphs[0].launches == 5
    for k, (g, host) in enumerate(held):
        np.testing.assert_array_equal(g, host, err_msg=f".g #{k} changed by a later launch")


# -- forward()/backward() of a static graph ------------------------------------------------------


class _Loop:
    """nnabla's loop with native Variables: ``x.d = batch; loss.forward(); loss.backward(...)``,
    an SGD update of the parameters (in place, or by a new array)."""

    def __init__(
        self, seed: int, retain_graph: bool, zero: str = "none", retain_grad: bool = False
    ) -> None:
        rng = np.random.default_rng(seed)
        self.rng = rng
        self.x = gh.Variable(_on(rng.standard_normal((5, 4))), need_grad=False)
        self.ps = _params(seed + 1)
        w, b = self.ps
        self.z = self.x @ w + b
        self.h = F.log(self.z**2 + 1.0)
        self.loss = F.sum(self.h * self.h)
        self.retain_graph = retain_graph
        self.retain_grad = retain_grad
        self.zero = zero

    def step(self, batch: Any, k: int) -> list[Any]:
        self.x.d = batch
        for p in self.ps:
            if self.zero == "zeros":
                p.g = _on(np.zeros(p.shape))
            elif self.zero == "cleared":
                p.cleargrad()
        self.loss.forward()
        self.loss.backward(retain_graph=self.retain_graph, retain_grad=self.retain_grad)
        out = [self.loss.d, *(p.g for p in self.ps)]
        if self.retain_grad:  # the intermediates' gradients, the loss's own (its seed)
            out += [self.z.g, self.h.g, self.loss.g]
        for p in self.ps:
            if k % 2:
                p.d -= 0.05 * p.g
            else:
                p.d = p.d - 0.05 * p.g
        return out


@pytest.mark.parametrize(
    ("zero", "retain_grad"),
    [("zeros", False), ("cleared", False), ("none", False), ("cleared", True), ("none", True)],
)
@pytest.mark.parametrize("retain_graph", [False, True])
def test_a_static_loop_is_recorded_and_gives_the_plans_values(
    rec: RecordingDevice, retain_graph: bool, zero: str, retain_grad: bool
) -> None:
    recorded = _Loop(2, retain_graph, zero, retain_grad)
    planned = _Loop(2, retain_graph, zero, retain_grad)
    rng = np.random.default_rng(3)
    kept: list[tuple[Any, np.ndarray]] = []
    for k in range(8):
        batch = _on(rng.standard_normal((5, 4)))
        got = recorded.step(batch, k)
        before = capture.set_enabled(False)
        try:
            want = planned.step(batch.copy(), k)
        finally:
            capture.set_enabled(before)
        assert len(got) == len(want) == (6 if retain_grad else 3)
        for i, (u, v) in enumerate(zip(got, want)):
            assert type(u) is RecArray
            np.testing.assert_array_equal(u, v, err_msg=f"step {k + 1}, value {i}")
        kept += [(a, np.array(a)) for a in got]
    p = plan.plan_of(recorded.loss)
    assert p is not None and p.recorded is not None and p.capture_refused is None
    (prog,) = p.programs.values()
    assert prog.capture_refused is None and (retain_graph, retain_grad) in prog.recorded
    # forward recorded at step 3 (launched at 3..8), backward's walk at step 5 (launched 5..8)
    assert [g.launches for g in rec.graphs] == [6, 4]
    for k, (a, host) in enumerate(kept):
        np.testing.assert_array_equal(a, host, err_msg=f"value #{k} changed by a later launch")


def test_a_replaced_leaf_or_a_freed_rule_runs_the_plans_walk(rec: RecordingDevice) -> None:
    loop = _Loop(4, retain_graph=False)
    rng = np.random.default_rng(5)
    for k in range(6):
        loop.step(_on(rng.standard_normal((5, 4))), k)
    assert [g.launches for g in rec.graphs] == [4, 2]
    loop.loss.forward()
    loop.loss.backward(retain_graph=False)  # replayed
    with pytest.raises(gh.BackwardRuleError, match="saved arrays were freed"):
        loop.loss.backward(retain_graph=False)  # the plan's walk: the engine's error
    loop.loss.forward()
    w = loop.ps[0]
    w.d = w.d + 1.0  # after forward(): the walk would mix old and new data
    with pytest.raises(gh.BackwardRuleError, match="was replaced"):
        loop.loss.backward(retain_graph=False)
    assert [g.launches for g in rec.graphs] == [6, 3]


def test_a_new_batch_shape_plans_and_records_again(rec: RecordingDevice) -> None:
    recorded, planned = _Loop(6, retain_graph=False), _Loop(6, retain_graph=False)
    rng = np.random.default_rng(7)
    for k, n in enumerate([5, 5, 5, 5, 3, 3, 3, 3, 3]):
        batch = _on(rng.standard_normal((n, 4)))
        got = recorded.step(batch, k)
        before = capture.set_enabled(False)
        try:
            want = planned.step(batch.copy(), k)
        finally:
            capture.set_enabled(before)
        for i, (u, v) in enumerate(zip(got, want)):
            np.testing.assert_array_equal(u, v, err_msg=f"step {k + 1}, value {i}")
    assert plan.plan_of(recorded.loss).recorded is not None  # type: ignore[union-attr]
    assert len(rec.graphs) == 3  # forward at batch 5, forward and walk at batch 3


def test_a_failed_deferred_check_runs_the_plan(rec: RecordingDevice) -> None:
    recorded, planned = _Loop(8, retain_graph=False), _Loop(8, retain_graph=False)
    rng = np.random.default_rng(9)
    for k in range(6):
        if k == 3:
            (graph,) = rec.graphs
            graph.fail = True  # (on a GPU: the plan's run raises the kernel's error)
        batch = _on(rng.standard_normal((5, 4)))
        got = recorded.step(batch, k)
        if k == 3:
            assert plan.plan_of(recorded.loss).recorded is None  # type: ignore[union-attr]
        before = capture.set_enabled(False)
        try:
            want = planned.step(batch.copy(), k)
        finally:
            capture.set_enabled(before)
        for i, (u, v) in enumerate(zip(got, want)):
            np.testing.assert_array_equal(u, v, err_msg=f"step {k + 1}, value {i}")
    assert graph.launches == 2  # steps 3 and 4; recorded again at step 5, the walk at step 6
    assert [g.launches for g in rec.graphs] == [2, 2, 1]


class _GradLoop:
    """The loop with ``grad(..., create_graph=False)`` instead of ``backward()``: the gradients
    of the loss for the parameters and for an intermediate Variable ``h`` (a target that is not
    a leaf), as mxnet's ``Executor.backward`` asks them."""

    def __init__(self, seed: int, outputs: int = 1) -> None:
        rng = np.random.default_rng(seed)
        self.x = gh.Variable(_on(rng.standard_normal((5, 4))), need_grad=False)
        self.ps = _params(seed + 1)
        w, b = self.ps
        self.h = F.log((self.x @ w + b) ** 2 + 1.0)
        self.loss = F.sum(self.h * self.h)
        self.extra = F.sum(F.log(self.h + 2.0) * self.h)
        ys = [self.loss, self.extra][:outputs]
        self.plan = plan.record(ys)
        self.outputs = ys

    def step(self, batch: Any) -> list[Any]:
        self.x.d = batch
        assert self.plan.run_static()
        grads = gh.grad(self.outputs, [*self.ps, self.h], create_graph=False)
        for p, g in zip(self.ps, grads):
            p.d -= 0.05 * g.d
        return [y.d for y in self.outputs] + [g.d for g in grads]


@pytest.mark.parametrize("outputs", [1, 2])
def test_grad_on_a_static_graph_is_recorded_and_gives_copies(
    rec: RecordingDevice, outputs: int
) -> None:
    recorded, planned = _GradLoop(10, outputs), _GradLoop(10, outputs)
    rng = np.random.default_rng(11)
    kept: list[tuple[Any, np.ndarray]] = []
    for k in range(8):
        batch = _on(rng.standard_normal((5, 4)))
        got = recorded.step(batch)
        before = capture.set_enabled(False)
        try:
            want = planned.step(batch.copy())
        finally:
            capture.set_enabled(before)
        assert len(got) == outputs + 3
        for i, (u, v) in enumerate(zip(got, want)):
            assert type(u) is RecArray
            np.testing.assert_array_equal(u, v, err_msg=f"step {k + 1}, value {i}")
        kept += [(a, np.array(a)) for a in got]
    p = recorded.plan
    assert p.recorded is not None and p.capture_refused is None
    (prog,) = p.programs.values()
    assert prog.capture_refused is None and (True, False) in prog.recorded
    # the plan's runs 1-2, recorded at run 3 (launched 3..8); the walk at its call 5 (5..8)
    assert [g.launches for g in rec.graphs] == [6, 4]
    for k, (a, host) in enumerate(kept):
        np.testing.assert_array_equal(a, host, err_msg=f"value #{k} changed by a later launch")
    # a changed leaf shape: run_static says so (the caller builds the graph again)
    recorded.x.d = _on(rng.standard_normal((3, 4)))
    assert not p.run_static()


def test_a_cpu_static_graph_is_not_recorded_and_says_why() -> None:
    x = gh.Variable(np.ones((2, 3)), need_grad=False)
    w = gh.Variable(np.ones(3))
    y = F.sum(x * w)
    before = plan.set_enabled(True)
    try:
        for _ in range(4):
            y.forward()
            y.backward()
        p = plan.plan_of(y)
        assert p is not None and p.recorded is None
        assert p.capture_refused is not None and "device 'cpu' cannot record" in p.capture_refused
    finally:
        plan.set_enabled(before)


def test_the_walks_gradients_are_copied_into_g() -> None:
    """A recorded walk hands its gradients to ``backward()`` as views of the recorded arrays,
    which the recording still holds: ``backward()`` copies them into a ``.g`` that was None (a
    kernel's own result, not a view, would be taken as it is)."""
    from gradhub.engine import _own
    from gradhub.variable import Variable

    recorded = np.arange(3.0)  # (as a CuPy kernel's result: it owns its memory)
    held = [recorded]
    g = _own(Variable._new(recorded.view(), False, None, 0), set())
    assert not np.shares_memory(g.d, held[0])
    np.testing.assert_array_equal(g.d, recorded)
