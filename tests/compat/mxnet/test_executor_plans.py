"""The mxnet layer's bound executors run through gradhub's plans (docs/plans.md): the first
``forward`` builds the graph and records its plan, later ``forward``/``backward`` calls run the
plan with no graph node created, and every output and gradient is bit for bit the one of the
graph built anew at each call (plans off); a reshaped executor records its own plan; a graph
that reads an intermediate value in Python is built again at each call."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import gradhub as gh
import gradhub.graph
import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from compat.mxnet.helpers import _mlp


@contextmanager
def _nodes_made() -> Iterator[list[int]]:
    """Count the graph nodes created inside the block (``count[0]``)."""
    count = [0]
    init = gradhub.graph.Node.__init__

    def counting(self: Any, *args: Any, **kwargs: Any) -> None:
        count[0] += 1
        init(self, *args, **kwargs)

    gradhub.graph.Node.__init__ = counting  # type: ignore[method-assign]
    try:
        yield count
    finally:
        gradhub.graph.Node.__init__ = init  # type: ignore[method-assign]


def _batch(step: int, n: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(step)
    return rng.randn(n, 6).astype(np.float32), rng.randint(-1, 3, n).astype(np.float32)


def _bound(sym: mx.sym.Symbol, grad_req: str = "write", n: int = 4) -> mx.Executor:
    ex = sym.simple_bind(mx.cpu(), data=(n, 6), label=(n,), grad_req=grad_req)
    rng = np.random.RandomState(7)
    for name, arr in ex.arg_dict.items():
        if name not in ("data", "label"):
            arr[:] = rng.randn(*arr.shape).astype(np.float32) * 0.5
    return ex


def _loop(
    planned: bool, make: Callable[[], mx.Executor], steps: int = 3, n: int = 4
) -> tuple[list[np.ndarray], list[int]]:
    """Outputs and gradients of ``steps`` forward/backward calls, and the nodes each made."""
    before = gh.plan.set_enabled(planned)
    try:
        ex = make()
        out: list[np.ndarray] = []
        made: list[int] = []
        for step in range(steps):
            x, t = _batch(step, n)
            with _nodes_made() as count:
                ex.forward(is_train=True, data=x, label=t)
                ex.backward()
            made.append(count[0])
            out += [o.asnumpy().copy() for o in ex.outputs]
            out += [g.asnumpy().copy() for g in ex.grad_arrays if g is not None]
        return out, made
    finally:
        gh.plan.set_enabled(before)


@pytest.mark.parametrize(
    "softmax",
    [
        {"use_ignore": True, "ignore_label": -1, "normalization": "valid"},
        {"use_ignore": True, "ignore_label": -1, "normalization": "null"},
        {"use_ignore": True, "ignore_label": -1, "normalization": "batch", "grad_scale": 0.5},
    ],
)
@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_a_bound_executor_runs_its_plan_bit_for_bit(softmax: dict[str, Any], grad_req: str) -> None:
    sym = _mlp(**softmax)

    def make() -> mx.Executor:
        return _bound(sym, grad_req)

    planned, made = _loop(True, make)
    eager, made_eager = _loop(False, make)
    assert len(planned) == len(eager) == 3 * (1 + 6)  # the output, 6 gradient arrays
    for a, b in zip(planned, eager):
        np.testing.assert_array_equal(a, b)
    assert made[0] > 0 and made[1:] == [0, 0], made  # the plan: no node after the first call
    assert made_eager == [made[0]] * 3  # plans off: the graph is built at every call


def test_integer_labels_without_ignore_through_the_plan() -> None:
    data, label = mx.sym.Variable("data"), mx.sym.Variable("label")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    sym = mx.sym.SoftmaxOutput(fc, label, name="sm", normalization="batch")

    def make() -> mx.Executor:
        return _bound(sym)

    def loop(planned: bool) -> tuple[list[np.ndarray], list[int]]:
        before = gh.plan.set_enabled(planned)
        try:
            ex, out, made = make(), [], []
            for step in range(3):
                x, t = _batch(step)
                with _nodes_made() as count:
                    ex.forward(is_train=True, data=x, label=np.abs(t))
                    ex.backward()
                made.append(count[0])
                out += [ex.outputs[0].asnumpy().copy(), ex.grad_dict["fc_weight"].asnumpy().copy()]
            # a label out of range on a planned call: the layer's own error
            with pytest.raises(ValueError, match=r"SoftmaxOutput 'sm': labels must be class "):
                ex.forward(label=np.array([0, 1, 5, 0], dtype=np.float32))
            return out, made
        finally:
            gh.plan.set_enabled(before)

    (planned, made), (eager, _) = loop(True), loop(False)
    for a, b in zip(planned, eager):
        np.testing.assert_array_equal(a, b)
    assert made[1:] == [0, 0]


def test_a_reshaped_executor_plans_again() -> None:
    sym = _mlp(use_ignore=True, ignore_label=-1)

    def run(planned: bool) -> tuple[list[np.ndarray], list[int]]:
        before = gh.plan.set_enabled(planned)
        try:
            ex = _bound(sym)
            out, made = [], []
            for ex_now, n in ((ex, 4), (ex.reshape(data=(2, 6), label=(2,)), 2), (ex, 4)):
                for step in range(2):
                    x, t = _batch(step + n, n)
                    with _nodes_made() as count:
                        ex_now.forward(is_train=True, data=x, label=t)
                        ex_now.backward()
                    made.append(count[0])
                    out.append(ex_now.outputs[0].asnumpy().copy())
                    out += [g.asnumpy().copy() for g in ex_now.grad_arrays if g is not None]
            return out, made
        finally:
            gh.plan.set_enabled(before)

    (planned, made), (eager, _) = run(True), run(False)
    assert len(planned) == len(eager) == 6 * 7
    for a, b in zip(planned, eager):
        np.testing.assert_array_equal(a, b)
    # the reshaped executor records its own plan; the first one's plan still serves it after
    assert made[0] > 0 and made[1] == 0 and made[2] > 0 and made[3:] == [0, 0, 0]


def test_probability_labels_and_make_loss() -> None:
    data, label = mx.sym.Variable("data"), mx.sym.Variable("label")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    prob = mx.sym.SoftmaxOutput(fc, label, name="sm")
    ml = mx.sym.MakeLoss(mx.sym.square(fc), name="ml", normalization="batch")
    sym = mx.sym.Group([prob, ml])
    rng = np.random.RandomState(3)

    def run(planned: bool) -> tuple[list[np.ndarray], list[int]]:
        before = gh.plan.set_enabled(planned)
        try:
            ex = sym.simple_bind(mx.cpu(), data=(4, 6), label=(4, 3))
            ex.arg_dict["fc_weight"][:] = np.random.RandomState(1).randn(3, 6)
            out, made = [], []
            for _ in range(3):
                p = rng.rand(4, 3).astype(np.float32)
                with _nodes_made() as count:
                    ex.forward(data=rng.randn(4, 6).astype(np.float32), label=p / p.sum(1)[:, None])
                    ex.backward()
                made.append(count[0])
                out += [o.asnumpy().copy() for o in ex.outputs]
                out.append(ex.grad_dict["fc_weight"].asnumpy().copy())
            return out, made
        finally:
            gh.plan.set_enabled(before)

    planned, made = run(True)
    rng = np.random.RandomState(3)
    eager, _ = run(False)
    for a, b in zip(planned, eager):
        np.testing.assert_array_equal(a, b)
    assert made[1:] == [0, 0]


def test_make_loss_valid_is_built_at_every_call() -> None:
    data = mx.sym.Variable("data")
    sym = mx.sym.MakeLoss(mx.sym.square(data - 0.5), normalization="valid", valid_thresh=0.1)
    ex = sym.simple_bind(mx.cpu(), data=(4,))
    grads = []
    for values in ([0.0, 0.5, 1.0, 0.7], [0.0, 0.55, 0.5, 0.2]):
        with _nodes_made() as count:
            ex.forward(is_train=True, data=np.array(values, dtype=np.float32))
            ex.backward()
        assert count[0] > 0  # the normalizer depends on the values: no plan
        grads.append(ex.grad_dict["data"].asnumpy().copy())
    # d/dx sum((x - 0.5)^2) / #{(x - 0.5)^2 > 0.1}: 2 valid entries, then 1
    np.testing.assert_allclose(grads[0], 2 * (np.array([0.0, 0.5, 1.0, 0.7]) - 0.5) / 2, rtol=1e-6)
    np.testing.assert_allclose(grads[1], 2 * (np.array([0.0, 0.55, 0.5, 0.2]) - 0.5) / 1, rtol=1e-6)
