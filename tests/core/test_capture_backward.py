"""``backward()`` inside a recorded compiled step (gradhub.plan, gradhub.capture), on the CPU.

A recorded step's ``backward()`` walks inside the recording without touching ``.g``; after each
launch the leaves' ``.g`` are set on the host from the gradients the launch wrote, as
``backward()`` sets them: a copy where ``.g`` was None (``opt.zero_grad()``), ``.g + gradient``
where it was not (nnabla's ``solver.zero_grad()`` sets zeros; no zero_grad at all accumulates).
Each ``.g`` is a new array, as eagerly, so a ``.g`` kept from one call is not changed by the next.
The device graph is played by tests/recording_device.py's stand-in, whose launches write into the
arrays the recording pass made (as a CUDA graph's replay); after each call the tests also fill
the recorded gradient arrays with NaN and check that no ``.g`` handed out changes.
tests/cuda/test_capture_backward.py runs the same on a GPU.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.optim import SGD
from recording_device import RecordingDevice, on_rec, recording_device


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingDevice]:
    """The core with the recording device (tests/recording_device.py); plans and recording
    on; the context on it."""
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    with recording_device() as dev:
        yield dev


def _params(seed: int) -> list[gh.Variable]:
    rng = np.random.default_rng(seed)
    return [gh.Variable(on_rec(rng.standard_normal(s))) for s in [(4, 3), (3,)]]


def _twin(ps: list[gh.Variable]) -> list[gh.Variable]:
    """Parameters with the same data (and .g) for the eager side."""
    out = []
    for p in ps:
        q = gh.Variable(on_rec(p.d.copy()))
        q.g = None if p.g is None else on_rec(p.g.copy())
        out.append(q)
    return out


def _loss_step(w: gh.Variable, b: gh.Variable, times: int = 1) -> Callable[[Any], Any]:
    def step(x: Any) -> Any:
        h = x @ w + b
        loss = F.sum(F.log(h * h + 1.0))
        for _ in range(times):
            loss.backward()
        return loss

    return step


def _trace(step: Any) -> Any:
    return list(step.traces.values())[-1]


def _overwrite_recorded(step: Any) -> None:
    """What the next launch does to the arrays the recording writes: fill them (NaN here)."""
    for walk in _trace(step).walks:
        for _, a in walk:
            a[...] = np.nan


def _same_grads(got: list[gh.Variable], want: list[gh.Variable], what: str) -> None:
    for k, (u, v) in enumerate(zip(got, want)):
        if v.g is None:
            assert u.g is None, f"{what}: .g of parameter {k}"
            continue
        assert u.g is not None, f"{what}: .g of parameter {k}"
        np.testing.assert_array_equal(u.g, v.g, err_msg=f"{what}: .g of parameter {k}")
        assert u.g.dtype == v.g.dtype
        np.testing.assert_array_equal(u.d, v.d, err_msg=f"{what}: .d of parameter {k}")


def test_a_step_calling_backward_is_recorded_with_an_optimizer(
    recording: RecordingDevice,
) -> None:
    """PyTorch's loop: ``opt.zero_grad(); loss = step(x); opt.update()``."""
    ps = _params(0)
    qs = _twin(ps)
    step, eager = gh.compile(_loss_step(*ps)), _loss_step(*qs)
    opt, opt_eager = SGD(ps, lr=0.01), SGD(qs, lr=0.01)
    rng = np.random.default_rng(1)
    for k in range(7):
        x = on_rec(rng.standard_normal((5, 4)))
        opt.zero_grad()
        opt_eager.zero_grad()
        loss, loss_eager = step(x), eager(x)
        np.testing.assert_array_equal(loss.d, loss_eager.d)
        _same_grads(ps, qs, f"call {k + 1}")
        kept = [p.g.copy() for p in ps]
        held = [p.g for p in ps]
        if k >= 2:
            _overwrite_recorded(step)
        for h, c in zip(held, kept):
            np.testing.assert_array_equal(h, c)  # not an array the next launch writes
        opt.update()
        opt_eager.update()
    assert step.capture_refused is None
    assert [g.launches for g in recording.graphs] == [5]


@pytest.mark.parametrize("between", ["nothing", "zeros", "replaced", "cleared"])
def test_g_accumulates_across_calls_as_eagerly(recording: RecordingDevice, between: str) -> None:
    """No zero_grad (``.g`` accumulates), nnabla's ``solver.zero_grad()`` (zeros), a ``.g``
    replaced by the caller, ``cleargrad()``: each call's ``.g`` is the eager one bit for bit."""
    ps = _params(2)
    qs = _twin(ps)
    step, eager = gh.compile(_loss_step(*ps)), _loss_step(*qs)
    rng = np.random.default_rng(3)
    for k in range(6):
        x = on_rec(rng.standard_normal((5, 4)))
        if k:
            for p, q in zip(ps, qs):
                if between == "zeros":
                    p.g, q.g = on_rec(np.zeros(p.shape)), on_rec(np.zeros(q.shape))
                elif between == "replaced":
                    g = on_rec(rng.standard_normal(p.shape))
                    p.g, q.g = g, g.copy()
                elif between == "cleared" and k % 2:
                    p.cleargrad()
                    q.cleargrad()
        step(x)
        eager(x)
        _same_grads(ps, qs, f"call {k + 1}")
        if k >= 2:
            _overwrite_recorded(step)
            _same_grads(ps, qs, f"call {k + 1}, after the next launch's writes")
    assert step.capture_refused is None
    assert len(recording.graphs) == 1


def test_two_backward_calls_in_one_step_accumulate_in_order(recording: RecordingDevice) -> None:
    ps = _params(4)
    qs = _twin(ps)
    step, eager = gh.compile(_loss_step(*ps, times=2)), _loss_step(*qs, times=2)
    x = on_rec(np.random.default_rng(5).standard_normal((5, 4)))
    for k in range(5):
        step(x)
        eager(x)
        _same_grads(ps, qs, f"call {k + 1}")
    assert len(_trace(step).walks) == 2
    assert [g.launches for g in recording.graphs] == [3]


def test_parameters_updated_in_place_or_replaced_are_followed(recording: RecordingDevice) -> None:
    ps = _params(6)
    qs = _twin(ps)
    step, eager = gh.compile(_loss_step(*ps)), _loss_step(*qs)
    x = on_rec(np.random.default_rng(7).standard_normal((5, 4)))
    for k in range(6):
        for v in ps + qs:
            v.cleargrad()
        loss, loss_eager = step(x), eager(x)
        np.testing.assert_array_equal(loss.d, loss_eager.d)
        _same_grads(ps, qs, f"call {k + 1}")
        for p, q in zip(ps, qs):
            if k % 2:
                p.d -= 0.1 * p.g  # in place: the recorded array itself
                q.d -= 0.1 * q.g
            else:
                p.d = p.d - 0.1 * p.g  # a new array: copied into the recorded one
                q.d = q.d - 0.1 * q.g
    assert [g.launches for g in recording.graphs] == [4]


def test_a_g_of_another_shape_raises_backwards_error_and_keeps_every_g(
    recording: RecordingDevice,
) -> None:
    ps = _params(8)
    qs = _twin(ps)
    step, eager = gh.compile(_loss_step(*ps)), _loss_step(*qs)
    x = on_rec(np.random.default_rng(9).standard_normal((5, 4)))
    for _ in range(3):
        step(x)
        eager(x)
    assert len(recording.graphs) == 1
    w, b = ps
    stale = on_rec(np.ones(2))
    b.g = None
    w_g = w.g
    b._grad = gh.Variable(stale, need_grad=False)  # (a .g the setter would refuse)
    with pytest.raises(ValueError, match=r"its \.g has shape \(2,\) but the new gradient has"):
        step(x)
    assert w.g is w_g and b.g is stale  # every .g as it was
    q = gh.Variable(qs[1].d.copy())
    q._grad = gh.Variable(stale, need_grad=False)
    with pytest.raises(ValueError, match=r"its \.g has shape \(2,\) but the new gradient has"):
        _loss_step(qs[0], q)(x)  # the eager error, word for word
    b.cleargrad()
    qs[1].cleargrad()
    step(x)
    eager(x)
    _same_grads(ps, qs, "after cleargrad()")


def test_a_failed_recording_sets_g_once(recording: RecordingDevice) -> None:
    """The recording pass itself never touches ``.g``: a step whose recording is refused after
    that pass (the step then runs as a plan) accumulates one gradient, not two."""
    recording.refuse = "refused by the test after the recording pass"
    ps = _params(10)
    qs = _twin(ps)
    step, eager = gh.compile(_loss_step(*ps)), _loss_step(*qs)
    x = on_rec(np.random.default_rng(11).standard_normal((5, 4)))
    for k in range(4):
        step(x)
        eager(x)
        _same_grads(ps, qs, f"call {k + 1}")
    assert recording.attempts == 1 and not recording.graphs
    assert step.capture_refused == "refused by the test after the recording pass"


def test_backward_with_retain_grad_is_not_recorded(recording: RecordingDevice) -> None:
    w, b = _params(12)

    def f(x: Any) -> Any:
        loss = F.sum((x @ w + b) ** 2)
        loss.backward(retain_grad=True)
        return loss

    step = gh.compile(f)
    for _ in range(3):
        step(on_rec(np.ones((2, 4))))
    assert step.capture_refused == (
        "the step calls backward(retain_grad=True), which runs host code or sets .g of "
        "intermediate Variables during the walk"
    )
    assert len(recording.graphs) == 0


def test_a_changed_need_grad_runs_the_plan_and_records_again(recording: RecordingDevice) -> None:
    ps = _params(13)
    qs = _twin(ps)
    step, eager = gh.compile(_loss_step(*ps)), _loss_step(*qs)
    x = on_rec(np.random.default_rng(14).standard_normal((5, 4)))
    for k in range(7):
        if k == 4:
            ps[1].need_grad = qs[1].need_grad = False
            ps[1].cleargrad()
            qs[1].cleargrad()
        step(x)
        eager(x)
        _same_grads(ps, qs, f"call {k + 1}")
    assert ps[1].g is None
    assert len(recording.graphs) == 2
