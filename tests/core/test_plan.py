"""Plans of static graphs (gradhub.plan): the same numbers as the engine's walks, bit for bit.

Each test builds a graph, runs it as a static graph (``forward()`` then ``backward()`` or
``grad(..., create_graph=False)``) with plans on, and again with plans off (the engine walking
the graph at every call), and compares every value and gradient exactly.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plan
from gradhub.audit import samples_of
from gradhub.registry import REGISTRY, _ensure_loaded
from numeric_helpers import assert_same_arrays
from step_helpers import CNN_SHAPES, cnn_penalty


@pytest.fixture(autouse=True)
def _plans_on() -> Iterator[None]:
    before = plan.set_enabled(True)
    yield
    plan.set_enabled(before)


def _functions() -> list[str]:
    _ensure_loaded()
    return sorted(REGISTRY.functions)


def _static_run(
    build: Callable[[], tuple[list[gh.Variable], gh.Variable, list[gh.Variable]]],
    planned: bool,
    feeds: list[list[np.ndarray]],
) -> list[np.ndarray]:
    """Build once, then per feed: new leaf data, forward(), grad and backward; every value."""
    plan.set_enabled(planned)
    leaves, y, wrt = build()
    out: list[np.ndarray] = []
    for feed in feeds:
        for v, a in zip(leaves, feed):
            v.d = a.copy()
        y.forward()
        out.append(np.array(y.d, copy=True))
        if wrt and y.need_grad:
            grads = gh.grad([y], wrt, create_graph=False)
            out += [np.array(g.d, copy=True) for g in grads]
            for v in wrt:
                v.cleargrad()
            y.backward()
            out += [np.array(v.g, copy=True) for v in wrt if v.g is not None]
    if planned:
        assert plan.plan_of(y) is not None
    return out


def _sample_graph(
    fdef: Any, arrays: list[np.ndarray], attrs: dict[str, Any]
) -> Callable[[], tuple[list[gh.Variable], gh.Variable, list[gh.Variable]]]:
    """A builder of the graph ``sum_k (out_k * w_k).sum()`` of one call of ``fdef`` (fixed random
    weights ``w_k`` per floating output), its leaves and the leaves to differentiate."""

    def build() -> tuple[list[gh.Variable], gh.Variable, list[gh.Variable]]:
        rng = np.random.default_rng(0)
        xs = [
            gh.Variable(a.copy(), need_grad=fdef.differentiable and a.dtype.kind == "f")
            for a in arrays
        ]
        res = fdef.api(*xs, **attrs)
        outs = [o for o in (res if isinstance(res, tuple) else (res,)) if o.dtype.kind == "f"]
        if not outs:
            pytest.skip("no floating output")
        weights = [gh.Variable(rng.standard_normal(o.shape), need_grad=False) for o in outs]
        y = sum(((o * w).sum() for o, w in zip(outs, weights)), start=gh.Variable(0.0))
        return xs, y, [x for x in xs if x.need_grad]

    return build


@pytest.mark.parametrize("name", _functions())
def test_plans_match_the_engine_on_every_sample(name: str) -> None:
    fdef = REGISTRY.get(name)
    for s in samples_of(fdef):
        arrays = [np.asarray(a) for a in s.inputs]
        build = _sample_graph(fdef, arrays, s.attrs)
        # new values (scaled by 1 + 1e-3, which keeps them in the sample's domain), then the
        # sample's own again: forward() recomputes the graph, backward uses the new values
        moved = (s.grad_inputs or range(len(arrays))) if fdef.differentiable else ()
        feeds = [
            [
                a * (1 + 1e-3) if a.dtype.kind == "f" and i in moved else a
                for i, a in enumerate(arrays)
            ],
            arrays,
        ]
        eager = _static_run(build, False, feeds)
        planned = _static_run(build, True, feeds)
        assert_same_arrays(planned, eager, f"{name}[{s.name}]")


@pytest.mark.nn_ops
def test_plans_match_the_engine_on_the_seed_cnn_with_gradient_penalty() -> None:
    rng = np.random.default_rng(1)
    params0 = [rng.standard_normal(sh).astype(np.float32) * 0.3 for sh in CNN_SHAPES]
    xs = [rng.standard_normal((3, 3, 8, 8)).astype(np.float32) for _ in range(2)]
    t = rng.integers(0, 5, (3, 1))

    def build() -> tuple[list[gh.Variable], gh.Variable, list[gh.Variable]]:
        x = gh.Variable(xs[0], need_grad=False)
        p = [gh.Variable(a.copy()) for a in params0]
        return [x], cnn_penalty(x, gh.Variable(t, need_grad=False), p), p

    feeds = [[xs[0]], [xs[1]], [xs[0]]]
    assert_same_arrays(
        _static_run(build, True, feeds), _static_run(build, False, feeds), "cnn + gp"
    )


@pytest.mark.nn_ops
def test_a_changed_leaf_shape_plans_again() -> None:
    F = gh.functions
    x = gh.Variable(np.ones((2, 3)))
    m = F.mean(F.sin(x) * x)
    m.forward()
    first = plan.plan_of(m)
    assert first is not None
    x.d = np.full((4, 3), 2.0)
    m.forward()
    assert plan.plan_of(m) is not first
    np.testing.assert_allclose(m.d, np.sin(2.0) * 2.0, rtol=1e-6)
    m.backward()
    np.testing.assert_allclose(
        x.g, np.full((4, 3), (np.cos(2.0) * 2 + np.sin(2.0)) / 12), rtol=1e-6
    )
    m.forward()  # the new plan runs
    assert plan.plan_of(m) is not first


def test_a_graph_that_cannot_be_planned_again_says_why() -> None:
    a = gh.Variable(np.ones((2, 3)))
    b = gh.Variable(np.ones((2, 3)))
    y = (a * b).sum()
    y.forward()
    a.d = np.ones((4, 3))
    with pytest.raises(ValueError, match=r"cannot be planned again.*\(2, 3\).*-> \(4, 3\)"):
        y.forward()


def test_a_changed_need_grad_decides_the_backward_schedule_again() -> None:
    a = gh.Variable(np.array([1.0, 2.0]))
    b = gh.Variable(np.array([3.0, 4.0]))
    y = (gh.functions.log(a) * b).sum()
    y.forward()
    y.backward()
    np.testing.assert_array_equal(b.g, np.log(a.d))
    b.need_grad = False
    a.cleargrad()
    b.cleargrad()
    y.forward()
    y.backward()
    assert b.g is None
    np.testing.assert_array_equal(a.g, b.d / a.d)
    # an intermediate Variable set need_grad=False stops the gradient there
    b.need_grad = True
    h = gh.functions.log(a)
    z = (h * b).sum()
    z.forward()
    (ga,) = gh.grad([z], [a], create_graph=False)
    h.need_grad = False
    (ga2,) = gh.grad([z], [a], create_graph=False)
    assert np.any(ga.d != 0) and np.all(ga2.d == 0)


def test_a_rule_registered_since_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    fdef = REGISTRY.get("Neg")
    monkeypatch.setattr(fdef, "rule", fdef.rule)
    monkeypatch.setattr(fdef, "overrides", list(fdef.overrides))
    x = gh.Variable(np.array([1.0, 2.0]))
    y = (-x).sum()
    y.forward()
    (g,) = gh.grad([y], [x], create_graph=False)
    np.testing.assert_array_equal(g.d, [-1.0, -1.0])

    def doubled(
        grad_outputs: Any, inputs: Any, input_shapes: Any, outputs: Any, output_shapes: Any
    ) -> Any:
        return [grad_outputs[0] * -2.0]

    gh.register("Neg", doubled, override=True, need_inputs=(), need_outputs=())
    y.forward()
    (g,) = gh.grad([y], [x], create_graph=False)
    np.testing.assert_array_equal(g.d, [-2.0, -2.0])


def test_a_kernel_error_in_a_plan_names_the_function() -> None:
    x = gh.Variable(np.array([1.0, 2.0]))
    y = gh.functions.log(x).sum()
    y.forward()
    x.d = np.array([1.0, 2.0])  # same shape: the plan runs
    fdef = REGISTRY.get("Log")
    kernel = fdef.forward
    try:
        calls = []

        def broken(xp: Any, a: Any) -> Any:
            calls.append(1)
            raise ValueError("boom")

        fdef.forward = broken
        y.forward()  # a kernel changed: planned again, the new kernel's error names Sin
    except ValueError as e:
        assert "log() (Log" in str(e) and "boom" in str(e)
    else:
        raise AssertionError("no error")
    finally:
        fdef.forward = kernel
    y.forward()
    np.testing.assert_array_equal(y.d, np.log(x.d).sum())


def test_outputs_freed_drop_their_plan() -> None:
    x = gh.Variable(np.array([1.0, 2.0]))
    y = (x * x).sum()
    y.forward()
    key = id(y)
    assert key in plan._PLANS
    del y
    assert key not in plan._PLANS


def test_retain_graph_false_then_forward_restores_the_saved_arrays() -> None:
    x = gh.Variable(np.array([1.0, 2.0]))
    y = (gh.functions.log(x) * x).sum()
    y.forward()
    for _ in range(3):
        (g,) = gh.grad([y], [x], create_graph=False, retain_graph=False)
        np.testing.assert_allclose(g.d, 1.0 + np.log(x.d))
        with pytest.raises(gh.BackwardRuleError, match="retain_graph=False"):
            gh.grad([y], [x], create_graph=False)
        y.forward()


def _mlp(layers: int, width: int, batch: int) -> tuple[list[gh.Variable], Callable[[], Any]]:
    F = gh.functions
    rng = np.random.default_rng(0)
    x = gh.Variable(rng.standard_normal((batch, width)).astype(np.float32), need_grad=False)
    ps = []
    for _ in range(layers):
        ps.append(gh.Variable((rng.standard_normal((width, width)) * 0.05).astype(np.float32)))
        ps.append(gh.Variable(np.zeros(width, np.float32)))

    def loss() -> gh.Variable:
        h = x
        for i in range(layers):
            h = F.affine(h, ps[2 * i], ps[2 * i + 1])
            if i < layers - 1:
                h = F.relu(h)
        return F.mean(h * h)

    return ps, loss


def _peak(step: Callable[[], Any]) -> int:
    step()  # warm (array pools, caches)
    tracemalloc.start()
    try:
        for _ in range(3):
            step()  # each result dropped, as a training loop drops last step's gradients
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.nn_ops
def test_a_planned_deep_mlp_step_peaks_no_higher_than_the_eager_step() -> None:
    ps, loss = _mlp(8, 256, 64)

    def eager() -> Any:
        return gh.grad([loss()], ps, create_graph=False, retain_graph=False)

    y = loss()

    def static() -> Any:
        y.forward()
        return gh.grad([y], ps, create_graph=False, retain_graph=False)

    a, b = eager(), static()
    for g, h in zip(a, b):
        np.testing.assert_array_equal(g.d, h.d)
    assert plan.plan_of(y) is not None
    assert _peak(static) <= _peak(eager)


def test_a_long_generated_source_is_followed_by_a_heap_trim(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    monkeypatch.setattr(plan, "_codegen", True)
    monkeypatch.setattr(plan, "trim_host_heap", lambda: calls.append(1) or True)

    def chain(n: int) -> Callable[[], Any]:
        x = gh.Variable(np.linspace(0.1, 1.0, 4))
        h = x
        for _ in range(n):
            h = gh.functions.log(gh.functions.abs(h) + 1.0) * 1.5
        y = h.sum()

        def run() -> Any:
            y.forward()
            return gh.grad([y], [x])

        return run

    short = chain(1)
    for _ in range(3):
        short()
    assert calls == []  # sources of a few hundred characters
    long = chain(60)
    for _ in range(3):
        long()
    assert calls, "no trim after compiling a long plan"


def test_dead_branches_of_generated_code_are_pruned() -> None:
    lines = [
        "def run(a):",
        "    if a:",
        "        if True:",
        "            if False:",
        "                x = 1",
        "            else:",
        "                x = 2",
        "            y = x",
        "        else:",
        "            y = 3",
        "        if False:",
        "            y = 4",
        "    else:",
        "        y = 5",
        "    return y",
    ]
    assert plan._pruned(lines) == [
        "def run(a):",
        "    if a:",
        "        x = 2",
        "        y = x",
        "        pass",
        "    else:",
        "        y = 5",
        "    return y",
    ]


def test_a_compiled_steps_generated_code_has_no_constant_branches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a compiled step's walk knows each gradient's array type and need_grad when it is written;
    # the branches it cannot take are not compiled (W1's walk: 103,265 characters, 19,584 pruned),
    # and its results are the eager step's bit for bit
    sources: list[str] = []
    compile_ = plan.builtins.compile

    def keep(src: str, *args: Any, **kwargs: Any) -> Any:
        sources.append(src)
        return compile_(src, *args, **kwargs)

    monkeypatch.setattr(plan, "_codegen", True)
    monkeypatch.setattr(plan.builtins, "compile", keep)
    w = gh.Variable(np.linspace(0.5, 1.5, 5))
    c = gh.Variable(np.linspace(-1.0, 1.0, 5), need_grad=False)

    def step(x: Any) -> Any:
        y = (gh.functions.log(gh.functions.abs(x * w) + 1.0) * 2.0 + c).sum()
        return [y, *gh.grad([y], [w], create_graph=False)]

    fast = gh.compile(step)
    x = np.linspace(1.0, 2.0, 5)
    for _ in range(3):
        got, want = fast(x), step(gh.Variable(x, need_grad=False))
    assert_same_arrays([v.d for v in got], [v.d for v in want], "pruned")
    walks = [s for s in sources if s.startswith("def run(grads")]
    assert walks and not any("if True:" in s or "if False:" in s for s in walks)
    # nor reads what it knows: the rules of several inputs (Mul2, Add2) called with their
    # inputs' need_grad as constants, without testing the node's rule or its leaves' arrays
    assert not any(".need_grad" in s or ".rule is R" in s or "_replaced(" in s for s in walks)
    assert any("need_grads=(False, True, )" in s for s in walks)  # x * w


def test_a_planned_graph_is_freed_by_reference_counting() -> None:
    # the generated functions once formed a cycle with their globals: the graph waited for gc
    import gc
    import weakref

    x = gh.Variable(np.array([1.0, 2.0]))
    h = x * 2.0
    y = (h * h).sum()
    y.forward()
    gh.grad([y], [x], create_graph=False)
    first = weakref.ref(h.creator)
    gc.disable()
    try:
        del h, y
        assert first() is None
    finally:
        gc.enable()


def test_a_planned_backward_through_a_variable_level_rule_records_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rule without an array-level form runs on graph-less Variables: with codegen the plan
    once ran it recording, so each planned backward built (and dropped) graph nodes."""
    fdef = REGISTRY.get("Neg")
    monkeypatch.setattr(fdef, "rule", fdef.rule)
    monkeypatch.setattr(fdef, "overrides", list(fdef.overrides))

    def doubled(
        grad_outputs: Any, inputs: Any, input_shapes: Any, outputs: Any, output_shapes: Any
    ) -> Any:
        return [grad_outputs[0] * -2.0]

    gh.register("Neg", doubled, override=True, need_inputs=(), need_outputs=())
    x = gh.Variable(np.array([1.0, 2.0]))
    y = (-x).sum()
    y.forward()
    gh.grad([y], [x], create_graph=False)  # records the backward schedule
    made = []
    init = gh.graph.Node.__init__

    def counting(self: Any, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(gh.graph.Node, "__init__", counting)
    y.forward()
    (g,) = gh.grad([y], [x], create_graph=False)
    np.testing.assert_array_equal(g.d, [-2.0, -2.0])
    assert made == []


def test_record_plans_several_outputs() -> None:
    x = gh.Variable(np.array([1.0, 2.0]))
    w = gh.Variable(np.array([0.5, -1.0]))
    a = -(x * w)
    b = (a * a * x).sum()
    p = plan.record([a, b, b])
    assert plan.plan_of(a) is p and plan.plan_of(b) is p
    for k in range(3):
        x.d = np.array([1.0 + k, 2.0 - k])
        assert p.run()
        got = [a.d.copy(), b.d.copy(), *(g.d for g in gh.grad([b], [x, w], create_graph=False))]
        plan.set_enabled(False)
        x2 = gh.Variable(x.d.copy())
        w2 = gh.Variable(w.d.copy())
        a2 = -(x2 * w2)
        b2 = (a2 * a2 * x2).sum()
        want = [a2.d, b2.d, *(g.d for g in gh.grad([b2], [x2, w2], create_graph=False))]
        plan.set_enabled(True)
        p = plan.record([a, b])  # (turning plans off dropped it)
        for u, v in zip(got, want):
            np.testing.assert_array_equal(u, v)
    x.d = np.ones(3)
    assert not p.run()  # a leaf changed shape: the caller builds the graph again
    with pytest.raises(TypeError, match=r"gradhub.plan.record: ys must be Variables, got int"):
        plan.record([a, 3])  # type: ignore[list-item]


def test_generated_calls_pass_attributes_positionally_only_where_the_signature_allows() -> None:
    def positional(xp: Any, x: Any, axis: Any, keepdims: bool = False) -> Any:
        return x

    def keyword_only(xp: Any, x: Any, *, axis: Any) -> Any:
        return x

    def var_keyword(xp: Any, x: Any, **attrs: Any) -> Any:
        return x

    attrs = {"keepdims": True, "axis": 0}
    assert plan._positional(positional, 2, attrs) == ["axis", "keepdims"]
    assert plan._positional(positional, 2, {}) == []
    assert plan._positional(keyword_only, 2, {"axis": 0}) is None
    assert plan._positional(var_keyword, 2, {"axis": 0}) is None
    assert plan._positional(positional, 2, {"axis": 0, "other": 1}) is None
    assert plan._positional(np.add, 2, {"axis": 0}) is None  # a ufunc: no usable signature


_SCALARS = [1.01, 0.0, -0.0, float("nan"), 3, np.float64(2.5), np.float32(-0.5)]


@pytest.mark.parametrize("shape", [(5,), ()], ids=["1-d", "0-d"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("val", _SCALARS, ids=repr)
def test_scalar_operators_written_inline_match_the_engine(
    dtype: Any, val: Any, shape: tuple[int, ...]
) -> None:
    # AddScalar and MulScalar run as `x + C` and `x * C` in a plan (their plan_operator), the
    # constant made once: the same bits as the kernels, -0.0 and NaN included (0-d: numpy's
    # scalar results made arrays, as the kernels' are)
    def build() -> tuple[list[gh.Variable], gh.Variable, list[gh.Variable]]:
        x = gh.Variable(np.zeros(shape, dtype))
        y = ((x * val + val) * 1.5 + 0.25).sum()
        return [x], y, [x]

    rng = np.random.default_rng(1)
    feeds = [[np.asarray(rng.standard_normal(shape), dtype)] for _ in range(3)]
    assert_same_arrays(_static_run(build, True, feeds), _static_run(build, False, feeds), repr(val))


def test_given_seeds_through_inline_operators_match_the_engine() -> None:
    # the inline `gy * C` reads the seed as the engine's rule does (a float64 constant seed of
    # a float32 output is cast to float32 first, by grad)
    def run(planned: bool) -> list[np.ndarray]:
        plan.set_enabled(planned)
        x = gh.Variable(np.array([1.0, -2.0, 3.0], np.float32))
        y = (x * 1.1 + 0.5) * 0.3
        y.forward()
        out = []
        for seed in (np.ones(3, np.float64) / 3, np.full(3, 0.7, np.float32)):
            (g,) = gh.grad(
                [y], [x], grad_outputs=[gh.Variable(seed, need_grad=False)], create_graph=False
            )
            out.append(np.array(g.d, copy=True))
        return out

    assert_same_arrays(run(True), run(False), "seeds")


def test_a_kernel_s_plan_operator_is_what_the_plan_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # plan_operator declares that the kernel is `x op operand(dtype, **attrs)`: the plan runs
    # that (here a declaration that differs from the kernel shows which one ran); an operand
    # that cannot be made leaves the call as it is
    monkeypatch.setattr(plan, "_codegen", True)  # (the generated code writes operators inline)
    fdef = REGISTRY.get("MulScalar")

    def kernel(xp: Any, x: Any, val: float) -> Any:
        return x * val

    kernel.plan_operator = ("+", lambda dtype, val: np.array(val, dtype))  # type: ignore[attr-defined]
    monkeypatch.setattr(fdef, "forward", kernel)
    x = gh.Variable(np.array([1.0, 2.0]))
    y = x * 3.0
    np.testing.assert_array_equal(y.d, [3.0, 6.0])  # eager: the kernel
    y.forward()  # planned: the declared operator
    np.testing.assert_array_equal(y.d, [4.0, 5.0])

    def refused(dtype: Any, val: float) -> Any:
        raise TypeError("no operand")

    kernel.plan_operator = ("*", refused)  # type: ignore[attr-defined]
    monkeypatch.setattr(fdef, "forward", lambda xp, x, val: kernel(xp, x, val))  # re-planned
    y.forward()
    np.testing.assert_array_equal(y.d, [3.0, 6.0])
    assert plan._inline_operator(kernel, np.dtype(np.float64), {"val": 3.0}) is None
    assert plan._inline_operator(kernel.__call__, np.dtype(np.float64), {"val": 3.0}) is None


def test_gradients_of_intermediate_targets_come_out_of_a_plan() -> None:
    # the gradients left at the end of a planned walk: those of the targets' nodes
    def run(planned: bool) -> list[np.ndarray]:
        plan.set_enabled(planned)
        x = gh.Variable(np.array([0.5, -1.5]))
        h = x * 3.0
        y = ((h + 1.0) * (h * 0.5)).sum()
        out = []
        for feed in ([0.5, -1.5], [2.0, 0.25]):
            x.d = np.array(feed)
            y.forward()
            gh_, gx = gh.grad([y], [h, x], create_graph=False)
            out += [np.array(gh_.d, copy=True), np.array(gx.d, copy=True)]
        return out

    planned, eager = run(True), run(False)
    assert_same_arrays(planned, eager, "intermediate targets")
    h = np.array([2.0, 0.25]) * 3.0
    np.testing.assert_allclose(planned[2], (h * 0.5) + (h + 1.0) * 0.5)


def test_an_inline_operator_s_error_is_the_rule_s_error() -> None:
    # numpy's overflow error under errstate(over="raise") in MulScalar's backward: the same
    # error, naming the function, from the plan's inline `gy * C` as from the engine's rule
    def error(planned: bool) -> str:
        plan.set_enabled(planned)
        x = gh.Variable(np.ones(3, np.float32))
        y = x * 1e30
        y.forward()
        seed = gh.Variable(np.full(3, 1e30, np.float32), need_grad=False)
        with np.errstate(over="raise"), pytest.raises(Exception) as info:
            gh.grad([y], [x], grad_outputs=[seed], create_graph=False)
        return f"{type(info.value).__name__}: {info.value}"

    planned, eager = error(True), error(False)
    assert planned == eager
    assert "overflow" in planned and "MulScalar" in planned, planned


@pytest.mark.nn_ops
@pytest.mark.parametrize("threads", [1, 2])
def test_plans_match_the_engine_on_an_mlp_in_either_product_order(
    threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Affine's CPU forward computes ``(W^T x^T)^T`` (Fortran-ordered) where OpenBLAS runs
    several threads and ``x W`` on one; ReLU's kernel and rule follow the order they get. A
    planned MLP step gives the engine's values and gradients bit for bit in both cases, at every
    feed."""
    from gradhub.parallel import get_num_threads, set_num_threads
    from gradhub_nn_ops import linalg

    F = gh.functions
    rng = np.random.default_rng(5)
    shapes = [(64, 32), (32, 96), (96,), (96, 80), (80,), (80, 10), (10,)]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    labels = rng.integers(0, 10, (64, 1))
    feeds = [[a + np.float32(0.1 * i) for a in arrays] for i in range(3)]

    def build() -> tuple[list[gh.Variable], gh.Variable, list[gh.Variable]]:
        leaves = [gh.Variable(a.copy(), need_grad=i > 0) for i, a in enumerate(arrays)]
        h = F.relu(F.affine(leaves[0], leaves[1], leaves[2]))
        h = F.relu(F.affine(h, leaves[3], leaves[4]))
        h = F.affine(h, leaves[5], leaves[6])
        y = F.mean(F.softmax_cross_entropy(h, gh.Variable(labels, need_grad=False)))
        return leaves, y, leaves[1:]

    monkeypatch.setattr(linalg, "get_blas_threads", lambda: threads)
    before = get_num_threads()
    set_num_threads(threads)
    try:
        assert F.affine(gh.Variable(arrays[0]), gh.Variable(arrays[1])).d.flags.f_contiguous == (
            threads > 1
        )
        eager = _static_run(build, False, feeds)
        planned = _static_run(build, True, feeds)
    finally:
        set_num_threads(before)
    assert_same_arrays(planned, eager, f"MLP with {threads} threads")


def _mul2_graph() -> tuple[gh.Variable, gh.Variable, gh.Variable]:
    x = gh.Variable(np.array([1.0, 2.0, 3.0]))
    w = gh.Variable(np.array([0.5, -1.0, 2.0]))
    return x, w, (x * w).sum()


def _mul2_error(planned: bool, fast: Any, replace: bool = False) -> str:
    """The error of a planned (or engine-walked) backward through Mul2 whose array rule is
    ``fast`` (and whose leaf ``x`` was given new data after the forward when ``replace``)."""
    from gradhub.registry import Rule

    plan.set_enabled(planned)
    fdef = REGISTRY.get("Mul2")
    rule = fdef.rule
    x, w, y = _mul2_graph()
    y.forward()
    y.forward()  # (planned, and run as a plan)
    fdef.rule = Rule(rule.fn, rule.provider, rule.need_inputs, rule.need_outputs, False, fast)
    try:
        y.forward()  # a rule changed: planned again; the nodes keep the new rule
        if replace:
            x.d = np.array([4.0, 5.0, 6.0])
        with pytest.raises(Exception) as info:
            gh.grad([y], [x, w], create_graph=False)
    finally:
        fdef.rule = rule
    return f"{type(info.value).__name__}: {info.value}"


def test_a_multi_input_array_rule_s_error_in_a_plan_is_the_engine_s() -> None:
    def broken(xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any) -> Any:
        raise ValueError("boom")

    planned, eager = _mul2_error(True, broken), _mul2_error(False, broken)
    assert planned == eager
    assert "backward rule of Mul2" in planned and "ValueError: boom" in planned, planned


def test_a_multi_input_array_rule_s_wrong_count_in_a_plan_is_the_engine_s_error() -> None:
    def one(xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any) -> Any:
        return [gy[0]]

    planned, eager = _mul2_error(True, one), _mul2_error(False, one)
    assert planned == eager
    assert "returned 1 gradients for 2 inputs" in planned, planned


def test_a_multi_input_array_rule_s_wrong_shape_in_a_plan_is_the_engine_s_error() -> None:
    def short(xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any) -> Any:
        return [gy[0][:2], gy[0]]

    planned, eager = _mul2_error(True, short), _mul2_error(False, short)
    assert planned == eager
    assert "Mul2" in planned and "(2,)" in planned, planned


def test_a_replaced_leaf_of_a_multi_input_node_in_a_plan_is_the_engine_s_error() -> None:
    def ok(xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any) -> Any:
        return [gy[0] * x[1], gy[0] * x[0]]

    planned = _mul2_error(True, ok, replace=True)
    eager = _mul2_error(False, ok, replace=True)
    assert planned == eager
    assert "input 'x0' (#0, a leaf Variable) was replaced" in planned, planned


def test_a_multi_input_array_rule_s_results_are_mended_in_a_plan_as_by_the_engine() -> None:
    # 0-d gradients returned as numpy scalars, and a list where a float32 input's gradient came
    # out float64 (numpy promoted the float64 other input): mended alike, summed alike
    def build() -> tuple[list[gh.Variable], gh.Variable, list[gh.Variable]]:
        a = gh.Variable(np.float32(1.5) * np.ones((), np.float32))
        b = gh.Variable(np.array(-2.0))
        c = gh.Variable(np.array([1.0, 2.0], np.float32))
        d = gh.Variable(np.array([0.25, 4.0]))
        y = (a * b) * 3.0 + ((c * d) * (c * d)).sum()
        return [a, b, c, d], y, [a, b, c, d]

    feeds = [
        [np.array(1.5, np.float32), np.array(-2.0), np.array([1, 2], np.float32), np.ones(2)],
        [np.array(0.5, np.float32), np.array(3.0), np.array([3, 1], np.float32), np.zeros(2)],
    ]
    assert_same_arrays(_static_run(build, True, feeds), _static_run(build, False, feeds), "mended")


def test_a_plan_calls_multi_input_array_rules_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    # Mul2, Add2 and Sum: array rules of two inputs and one, called by the generated backward,
    # not through the engine's per-node call (which a rule no longer the node's still takes)
    calls: list[str] = []

    def counted(node: Any, gys: Any) -> Any:
        calls.append(node.fdef.name)
        return call_rule_arrays(node, gys)

    call_rule_arrays = plan._call_rule_arrays
    monkeypatch.setattr(plan, "_call_rule_arrays", counted)
    x, w, y = _mul2_graph()
    y = y + (x + w).sum()
    y.forward()
    for _ in range(2):
        y.forward()
        gx, gw = gh.grad([y], [x, w], create_graph=False)
    np.testing.assert_array_equal(gx.d, w.d + 1.0)
    np.testing.assert_array_equal(gw.d, x.d + 1.0)
    assert calls == []


def test_leaf_gradients_reached_once_twice_or_as_an_output_match_the_engine() -> None:
    # a leaf reached by one path (its gradient set as it comes), by two (summed), and a leaf
    # that is also an output of the walk (its seed summed with what reaches it; at 861e861 the
    # generated backward named such a seed's leaf `L-1_0`: "NameError: name 'L' is not defined")
    def run(planned: bool) -> list[np.ndarray]:
        plan.set_enabled(planned)
        a = gh.Variable(np.array([1.0, -2.0, 0.5]))
        b = gh.Variable(np.array([0.25, 3.0, -1.0]))
        c = gh.Variable(np.array([2.0, 2.0, -4.0]))
        y = (gh.functions.log(gh.functions.abs(a) + 1.0) * b).sum() + (b * c).sum()
        out = []
        for k in range(3):
            a.d = a.d + 0.5 * k
            y.forward()
            out += [g.d.copy() for g in gh.grad([y], [a, b, c], create_graph=False)]
            out += [g.d.copy() for g in gh.grad([y, c], [a, c], create_graph=False)]
        return out

    assert_same_arrays(run(True), run(False), "leaf gradients")


def test_grad_of_no_outputs_while_a_plan_is_registered() -> None:
    """``grad([], inputs, create_graph=False)`` gives zero gradients while some static graph's
    plan is registered (it raised ``IndexError: list index out of range`` looking up the plan of
    the first output)."""
    F = gh.functions
    x = gh.Variable(np.array([1.0, 2.0]), need_grad=True)
    z = F.sum(x * x)
    plan = gh.plan.record([z])
    (g,) = gh.grad([], [x], create_graph=False)
    assert plan is not None and g.d.tolist() == [0.0, 0.0]


@pytest.mark.nn_ops
def test_an_elementwise_expression_is_what_the_plan_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # plan_expression (gradhub.expression.traced) declares that an elementwise kernel or rule
    # formula is one numpy expression: the generated code runs the expression (here declarations
    # that differ from the functions show which one ran); eager runs the functions
    monkeypatch.setattr(plan, "_codegen", True)
    _ensure_loaded()
    fdef = REGISTRY.get("Sin")
    formula = fdef.rule.fast1
    assert formula is not None and fdef.elementwise

    def kernel(xp: Any, x: Any) -> Any:
        return xp.sin(x)

    kernel.plan_expression = lambda x: f"({x} * 2.0)"  # type: ignore[attr-defined]
    monkeypatch.setattr(fdef, "forward", kernel)
    monkeypatch.setattr(formula, "plan_expression", lambda g, x, y: f"({g} + {x})")
    x = gh.Variable(np.array([0.5, 1.5, -1.0], np.float32))
    y = gh.functions.sin(x)
    np.testing.assert_array_equal(y.d, np.sin(x.d))  # eager: the kernel
    y.forward()  # planned: the declared expression
    np.testing.assert_array_equal(y.d, x.d * 2.0)
    (g,) = gh.grad([y], [x], create_graph=False)
    np.testing.assert_array_equal(g.d, 1.0 + x.d)
    # a 0-d input (numpy's ufuncs return scalars there) calls the kernel and the rule
    x0 = gh.Variable(np.array(0.5, np.float32))
    y0 = gh.functions.sin(x0)
    y0.forward()
    np.testing.assert_array_equal(y0.d, np.sin(np.float32(0.5)))
    (g0,) = gh.grad([y0], [x0], create_graph=False)
    np.testing.assert_array_equal(g0.d, np.cos(np.float32(0.5)))


@pytest.mark.nn_ops
@pytest.mark.parametrize("name", ["Sin", "Cos", "Tanh", "Exp", "Sqrt", "ASin", "Log1p", "Erf"])
def test_elementwise_expressions_match_the_engine(name: str) -> None:
    # the functions written as expressions in the generated code (Erf's kernel is not one: its
    # rule is): the engine's bits, in float32 and float64, with and without a kept input
    _ensure_loaded()
    api = REGISTRY.get(name).api

    def build(dtype: Any) -> Any:
        def b() -> tuple[list[gh.Variable], gh.Variable, list[gh.Variable]]:
            x = gh.Variable(np.zeros(6, dtype))
            w = gh.Variable(np.arange(6, dtype=dtype), need_grad=False)
            y = (api(api(x) * 0.5) * w).sum()
            return [x], y, [x]

        return b

    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        feeds = [[rng.uniform(0.05, 0.6, 6).astype(dtype)] for _ in range(3)]
        assert_same_arrays(
            _static_run(build(dtype), True, feeds), _static_run(build(dtype), False, feeds), name
        )


def test_a_recording_is_tried_until_refused_or_made_too_often() -> None:
    # the one sequence of every recording (static graphs' forward and walk, compiled steps):
    # made and counted, refused with the device's reason, or refused after MAX_CAPTURES
    from gradhub import capture
    from gradhub.errors import CaptureUnsupported

    class Owner:
        captures = 0
        capture_refused: str | None = None

    owner = Owner()
    for n in range(capture.MAX_CAPTURES):
        assert plan._try_record(owner, lambda n=n: ("recording", n)) == ("recording", n)
        assert owner.captures == n + 1 and owner.capture_refused is None

    def never() -> Any:
        raise AssertionError("not tried again")

    assert plan._try_record(owner, never) is None
    assert owner.capture_refused == (
        f"recorded {capture.MAX_CAPTURES} times already (plans keep changing)"
    )

    def refused() -> Any:
        raise CaptureUnsupported("the device does not record")

    fresh = Owner()
    assert plan._try_record(fresh, refused) is None
    assert fresh.capture_refused == "the device does not record" and fresh.captures == 0


def test_a_graph_of_more_nodes_than_the_limit_runs_from_its_table() -> None:
    # compiling the generated code of a large graph takes CPython's compiler about 70 bytes of
    # memory per character (and glibc keeps it): above plan.CODEGEN_MAX_NODES the table runs it
    def build() -> tuple[list[gh.Variable], gh.Variable, list[gh.Variable]]:
        x = gh.Variable(np.linspace(-1.0, 1.0, 6))
        h = x
        for _ in range(plan.CODEGEN_MAX_NODES // 2 + 1):
            h = h * 0.999 + x
        return [x], h.sum(), [x]

    feeds = [[np.linspace(-2.0, 2.0, 6)], [np.linspace(0.0, 1.0, 6)]]
    assert_same_arrays(_static_run(build, True, feeds), _static_run(build, False, feeds), "large")
    plan.set_enabled(True)
    _, y, _ = build()
    y.forward()
    p = plan.plan_of(y)
    assert p is not None and len(p.nodes) > plan.CODEGEN_MAX_NODES
    assert not p.codegen and p.compiled is None
    y.backward()
    assert all(not prog.codegen and not prog.compiled for prog in p.programs.values())


def test_a_compiled_step_over_the_limit_runs_from_its_table_call_after_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(plan, "CODEGEN_MAX_NODES", 4)
    w = gh.Variable(np.array([0.5, -1.0, 2.0]))

    def step(x: gh.Variable) -> Any:
        h = x * w
        for _ in range(4):
            h = h * h * 0.5 + w
        loss = h.sum()
        return loss, *gh.grad([loss], [w], create_graph=False)

    fast = gh.compile(step)
    for k in range(4):
        x = np.array([1.0, 0.5, -0.25]) * (1 + 0.1 * k)
        got, want = fast(x), step(gh.Variable(x, need_grad=False))
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.d, b.d)
    (trace,) = fast.traces.values()
    assert not trace.plan.codegen and not trace.plan.rules_kept and trace.plan.compiled is None
