"""mxnet's bound executors recorded on a device that records (gradhub.capture_static): the loop
``ex.forward(is_train=True, data=..., label=...); ex.backward()`` with the forward recorded at its
third run of the plan and ``backward``'s walk (``grad(..., create_graph=False)`` over the graph)
at its third call after that.

The device is tests/recording_device.py's stand-in for CUDA graphs (a launch writes the new
values into the arrays the recording created); mxnet's ``gpu`` context is pointed at it. Every
step's outputs and gradient arrays equal those of the same loop run as a plan (not recorded) bit
for bit, with ``grad_req`` "write" and "add", for a symbol with a loss layer and for one with a
head gradient given to ``backward``; arrays the caller kept from one step are left alone by the
next launches. Executors of seeded random symbols give the same numbers recorded, as plans and
walked by the engine.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradhub_compat.mxnet as mx
import gradhub_compat.mxnet.context as mx_context
import numpy as np
import pytest
from compat.mxnet.helpers import _mlp
from gradhub import capture
from recording_device import (
    RecArray,
    RecordingDevice,
    assert_modes_agree,
    recording_device,
    run_mode,
)


@pytest.fixture
def rec(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingDevice]:
    """Every installed plugin and the recording device as mxnet's ``gpu``; plans and recording
    on."""
    for var in ("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "GRADHUB_PLUGINS", "GRADHUB_BLOCK_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setitem(mx_context._KINDS, "gpu", "rec")
    with recording_device() as dev:
        yield dev


def _regression() -> mx.sym.Symbol:
    data = mx.sym.Variable("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=4, name="fc1"), act_type="relu")
    return mx.sym.FullyConnected(h, num_hidden=2, name="fc2")


def _loop(kind: str, grad_req: str, recorded: bool, steps: int) -> tuple[list[np.ndarray], Any]:
    """Each step's outputs and gradient arrays (host copies) and the executor's plan."""
    before = capture.set_enabled(recorded)
    try:
        sym = _mlp(use_ignore=True, ignore_label=-1) if kind == "softmax" else _regression()
        shapes = {"data": (4, 6), "label": (4,)} if kind == "softmax" else {"data": (4, 6)}
        ex = sym.simple_bind(mx.gpu(), grad_req=grad_req, **shapes)
        rng = np.random.RandomState(7)
        for name, arr in ex.arg_dict.items():
            if name not in ("data", "label"):
                arr[:] = rng.randn(*arr.shape).astype(np.float32) * 0.5
        out: list[np.ndarray] = []
        for step in range(steps):
            r = np.random.RandomState(step)
            x = r.randn(4, 6).astype(np.float32)
            if kind == "softmax":
                outs = ex.forward(is_train=True, data=x, label=r.randint(-1, 3, 4))
                ex.backward()
            else:
                outs = ex.forward(is_train=True, data=x)
                ex.backward(mx.nd.array(r.randn(4, 2), ctx=mx.gpu()))
            for a in [*outs, *(g for g in ex.grad_arrays if g is not None)]:
                assert type(a._arr) is RecArray
                out.append(np.array(a._arr))
        return out, ex._plan[0] if ex._plan is not None else None
    finally:
        capture.set_enabled(before)


@pytest.mark.parametrize("grad_req", ["write", "add"])
@pytest.mark.parametrize("kind", ["softmax", "head_gradient"])
def test_a_bound_executor_is_recorded_and_gives_the_plans_values(
    rec: RecordingDevice, kind: str, grad_req: str
) -> None:
    got, p = _loop(kind, grad_req, recorded=True, steps=8)
    launches = [g.launches for g in rec.graphs]
    want, _ = _loop(kind, grad_req, recorded=False, steps=8)
    assert len(got) == len(want)
    for i, (u, v) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(u, v, err_msg=f"value #{i}")
    # forward: built at step 1, the plan runs at steps 2 and 3, recorded at step 4 (launched at
    # 4..8); backward's walk recorded at its third call after that, step 6 (launched at 6..8)
    assert p is not None and p.recorded is not None and p.capture_refused is None
    (prog,) = p.programs.values()
    assert prog.capture_refused is None and prog.recorded
    assert launches == [5, 3]


def _random_symbol(rng: np.random.RandomState) -> tuple[mx.sym.Symbol, bool]:
    """A seeded random MLP symbol (1-3 hidden layers, activations or a scale and shift), with a
    SoftmaxOutput loss layer or without (then ``backward`` takes a head gradient)."""
    h = mx.sym.Variable("data")
    for i in range(rng.randint(1, 4)):
        h = mx.sym.FullyConnected(h, num_hidden=int(rng.randint(2, 6)), name=f"fc{i}")
        act = ["relu", "tanh", "sigmoid", "", "scale"][rng.randint(5)]
        if act == "scale":
            h = h * 0.5 + 0.1
        elif act:
            h = mx.sym.Activation(h, act_type=act)
    out = mx.sym.FullyConnected(h, num_hidden=3, name="out")
    if rng.rand() < 0.5:
        return mx.sym.SoftmaxOutput(out, name="softmax"), True
    return out, False


def _random_loop(seed: int, mode: str) -> list[np.ndarray]:
    """8 steps of a bound executor of a random symbol, ``mode`` "engine" (plans off), "plan" or
    "recorded": every output and gradient array, copied to the host."""
    with run_mode(mode):
        rng = np.random.RandomState(seed)
        sym, loss = _random_symbol(rng)
        grad_req = ["write", "add"][rng.randint(2)]
        shapes = {"data": (4, 5), "softmax_label": (4,)} if loss else {"data": (4, 5)}
        ex = sym.simple_bind(mx.gpu(), grad_req=grad_req, **shapes)
        for name, arr in ex.arg_dict.items():
            if name not in shapes:
                arr[:] = rng.randn(*arr.shape).astype(np.float32) * 0.5
        out: list[np.ndarray] = []
        for step in range(8):
            r = np.random.RandomState(100 + step)
            x = r.randn(4, 5).astype(np.float32)
            if loss:
                outs = ex.forward(is_train=True, data=x, softmax_label=r.randint(0, 3, 4))
                ex.backward()
            else:
                outs = ex.forward(is_train=True, data=x)
                ex.backward(mx.nd.array(r.randn(4, 3), ctx=mx.gpu()))
            for a in [*outs, *(g for g in ex.grad_arrays if g is not None)]:
                out.append(np.array(a._arr.view(np.ndarray)))
        p = ex._plan[0] if ex._plan is not None else None
        assert (p is not None and p.recorded is not None) is (mode == "recorded")
        return out


@pytest.mark.parametrize("seed", range(10))
def test_random_symbols_recorded_planned_and_walked_agree(rec: RecordingDevice, seed: int) -> None:
    assert_modes_agree(lambda mode: _random_loop(seed, mode))
