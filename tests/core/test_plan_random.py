"""Plans on random graphs: the same numbers as the engine's walks and as eager steps, bit for bit.

tests/core/test_plan.py checks every op-matrix sample and a few chosen graphs. Here seeded random
graphs exercise what those leave to chance: values shared by several consumers, leaves used
twice or needing no gradient, gradients of intermediate targets, ``retain_graph`` alternating
between steps, a ``need_grad`` changed between steps, a leaf's shape changed between steps,
``retain_grad`` walks, and compiled steps (``gh.compile``) holding a
first-order ``grad`` and a gradient penalty (``create_graph=True``). Each graph runs with plans
off (the engine walking it at every call) and on, from generated code and from the table, and
every value and gradient must be equal to the bit (and with generated code for graphs of up to
8 nodes only, the table above). The core's graphs use its own functions
(operators, Log, Abs, Sum, powers); those marked ``nn_ops`` use layers of gradhub-nn-ops.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plan
from numeric_helpers import assert_same_arrays
from random_graphs import grow

SEEDS = range(40)


@pytest.fixture(params=["generated", "table", "capped"])
def codegen(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Plans run from generated code, from their table (read when a plan is made), or from
    generated code up to 8 nodes and from the table above (``plan.CODEGEN_MAX_NODES``)."""
    monkeypatch.setattr(plan, "_codegen", request.param != "table")
    if request.param == "capped":
        monkeypatch.setattr(plan, "CODEGEN_MAX_NODES", 8)
    before = plan.enabled()
    yield request.param
    plan.set_enabled(before)


def _grads(vs: list[gh.Variable]) -> list[np.ndarray]:
    return [np.zeros(0) if v.g is None else np.array(v.g, copy=True) for v in vs]


def _static(seed: int, planned: bool) -> list[np.ndarray]:
    """A random graph built once, then per step: new leaf data, ``forward()``, ``grad`` of the
    leaves (and of an intermediate target), ``backward()`` with ``retain_graph`` alternating,
    a ``need_grad`` changed at the third step."""
    plan.set_enabled(planned)
    rng = np.random.default_rng(seed)
    leaves = [
        gh.Variable(rng.standard_normal((3, 4)), need_grad=bool(rng.random() < 0.75))
        for _ in range(int(rng.integers(1, 4)))
    ]
    pool = list(leaves)
    grow(rng, pool, int(rng.integers(2, 12)))
    outs = pool[-int(rng.integers(1, 3)) :]
    y = outs[0].sum()
    for o in outs[1:]:
        y = y + (o * 0.5).sum()
    middle = [v for v in pool[len(leaves) : -1] if v._creator is not None]
    target = middle[int(rng.integers(len(middle)))] if middle and rng.random() < 0.5 else None
    toggled = leaves[int(rng.integers(len(leaves)))]
    out: list[np.ndarray] = []
    for step in range(4):
        if step == 2:
            toggled.need_grad = not toggled.need_grad
        for v in leaves:
            v.d = rng.standard_normal((3, 4))
        y.forward()
        out.append(np.array(y.d, copy=True))
        wrt = [v for v in leaves if v.need_grad]
        if target is not None and target.need_grad:
            wrt.append(target)
        if not (wrt and y.need_grad):
            continue
        grads = gh.grad([y], wrt, create_graph=False)
        out += [np.array(g.d, copy=True) for g in grads]
        for v in leaves:
            v.cleargrad()
        keep = bool(step % 2)
        y.backward(retain_graph=keep)
        out += _grads(leaves)
        if not keep:
            y.forward()  # the saved arrays were freed: computed again
        y.backward()  # accumulates
        out += _grads(leaves)
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_random_static_graphs_match_the_engine(seed: int, codegen: str) -> None:
    assert_same_arrays(_static(seed, True), _static(seed, False), f"seed {seed}")


def _step(seed: int) -> tuple[np.random.Generator, list[gh.Variable], Callable[..., Any], bool]:
    """A random define-by-run step of one array argument and a few parameters: the loss, maybe
    a gradient penalty (``grad(create_graph=True)``), then the parameters' gradients through
    ``grad(create_graph=False)`` (returned) or ``backward()`` (in ``.g``)."""
    rng = np.random.default_rng(seed)
    params = [
        gh.Variable(rng.standard_normal((3, 4)) * 0.5) for _ in range(int(rng.integers(1, 4)))
    ]
    picks = rng.integers(0, 1 << 30, 24)
    n_ops = int(rng.integers(2, 10))
    penalty = bool(rng.random() < 0.4)
    use_backward = bool(rng.random() < 0.4)

    def step(x: gh.Variable) -> Any:
        pool = [x, *params]
        grow(np.random.default_rng(picks), pool, n_ops)  # the same functions at every call
        loss = (pool[-1] * pool[-1]).sum() + pool[-2].sum()
        for p in params:  # (every parameter reaches the loss)
            loss = loss + (p * p).sum() * 0.125
        if penalty:
            gs = gh.grad([loss], params, create_graph=True)
            pen = gs[0] * gs[0]
            for g in gs[1:]:
                pen = pen + g * g
            loss = loss + pen.sum()
        if use_backward:
            loss.backward()
            return (loss,)
        return (loss, *gh.grad([loss], params, create_graph=False))

    return rng, params, step, use_backward


def _compiled_run(seed: int, compiled: bool) -> list[np.ndarray]:
    """Four calls of the step (compiled or eager), the parameters updated in place between."""
    plan.set_enabled(True)
    rng, params, step, use_backward = _step(seed)
    run = gh.compile(step) if compiled else step
    out: list[np.ndarray] = []
    for _ in range(4):
        x = rng.standard_normal((3, 4))
        for p in params:
            p.cleargrad()
        res = run(x) if compiled else step(gh.Variable(x, need_grad=False))
        out += [np.array(r.d, copy=True) for r in res]
        if use_backward:
            out += _grads(params)
        for p in params:
            p.d -= 0.01 * p.d
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_random_compiled_steps_match_eager_steps(seed: int, codegen: str) -> None:
    assert_same_arrays(_compiled_run(seed, True), _compiled_run(seed, False), f"seed {seed}")


def _layers(seed: int, planned: bool) -> list[np.ndarray]:
    """A random network of gradhub-nn-ops layers ending in a mean softmax cross-entropy, run
    as a static graph: the batch size changes at one step (the plan is made again), a
    parameter's ``need_grad`` flips at the third, and walks keep the intermediates' gradients
    (``retain_grad``) in some graphs."""
    F = gh.functions
    plan.set_enabled(planned)
    rng = np.random.default_rng(seed)
    dt = np.float32 if rng.random() < 0.5 else np.float64
    batch, n = int(rng.integers(2, 6)), int(rng.integers(2, 6))
    x = gh.Variable(rng.standard_normal((batch, n)).astype(dt), need_grad=bool(rng.random() < 0.3))
    params: list[gh.Variable] = []

    def affine(h: gh.Variable, bias: bool) -> gh.Variable:
        m = int(rng.integers(2, 7))
        w = gh.Variable((rng.standard_normal((h.shape[1], m)) * 0.5).astype(dt))
        params.append(w)
        if not bias:
            return F.affine(h, w)
        b = gh.Variable(rng.standard_normal(m).astype(dt))
        params.append(b)
        return F.affine(h, w, b)

    layers: list[Callable[[gh.Variable], gh.Variable]] = [
        lambda h: affine(h, True),
        F.relu,
        F.tanh,
        lambda h: F.softmax(h, axis=1) * 3.0,
        lambda h: h * F.sigmoid(h),
        lambda h: h + F.mean(h, axis=0, keepdims=True),
    ]
    h = affine(x, False)
    middle = [h]
    for _ in range(int(rng.integers(1, 6))):
        h = layers[int(rng.integers(len(layers)))](h)
        middle.append(h)
    classes = h.shape[1]
    t = gh.Variable(rng.integers(0, classes, (batch, 1)), need_grad=False)
    loss = F.mean(F.softmax_cross_entropy(h, t))
    if rng.random() < 0.3:
        loss = loss + F.sum(middle[0] * middle[0]) * 0.1
    leaves = [x, *params]
    toggled = params[int(rng.integers(len(params)))]
    new_batch_at = int(rng.integers(1, 5))
    retain = bool(rng.random() < 0.3)
    out: list[np.ndarray] = []
    for step in range(5):
        if step == new_batch_at:
            batch += 1
        if step == 2:
            toggled.need_grad = not toggled.need_grad
        x.d = rng.standard_normal((batch, n)).astype(dt)
        t.d = rng.integers(0, classes, (batch, 1))
        loss.forward()
        out.append(np.array(loss.d, copy=True))
        if not loss.need_grad:  # (the only parameter needing a gradient was switched off)
            continue
        for v in leaves:
            v.cleargrad()
        loss.backward(retain_grad=retain, retain_graph=bool(step % 2))
        out += _grads(leaves) + (_grads(middle) if retain else [])
        wrt = [v for v in leaves if v.need_grad]
        loss.forward()
        out += [np.array(g.d, copy=True) for g in gh.grad([loss], wrt, create_graph=False)]
    return out


@pytest.mark.nn_ops
@pytest.mark.parametrize("seed", SEEDS)
def test_random_networks_of_layers_match_the_engine(seed: int, codegen: str) -> None:
    assert_same_arrays(_layers(seed, True), _layers(seed, False), f"seed {seed}")
