"""gradhub.compile: a define-by-run step traced once and replayed by a plan gives the step's own
results, bit for bit, call after call; new shapes trace again; what cannot be replayed is
refused or documented behaviour."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plan
from gradhub.optim import SGD, Adam
from step_helpers import CNN_SHAPES, cnn_penalty

F = gh.functions


@pytest.fixture(autouse=True)
def _plans_on() -> Iterator[None]:
    before = plan.set_enabled(True)
    yield
    plan.set_enabled(before)


def _tiny_step(w: gh.Variable) -> Any:
    def step(x: Any) -> Any:
        h = x * w
        for k in range(12):
            h = F.log(F.abs(h) + 1.0) if k % 2 else (h * h) * 1.01 + 0.1
        y = h.sum()
        (g,) = gh.grad([y], [w], create_graph=False)
        return y, g

    return step


def test_a_compiled_step_gives_the_steps_results_bit_for_bit() -> None:
    rng = np.random.default_rng(0)
    w = gh.Variable(rng.standard_normal(5))
    step = _tiny_step(w)
    fast = gh.compile(step)
    for _ in range(4):
        x = rng.standard_normal(5)
        want = step(gh.Variable(x, need_grad=False))
        got = fast(x)
        assert isinstance(got, tuple) and len(got) == 2
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.d, b.d)
            assert a.creator is None if hasattr(a, "creator") else a._creator is None
    assert len(fast.traces) == 1


def test_new_shapes_trace_again() -> None:
    w = gh.Variable(np.array(0.7))
    fast = gh.compile(_tiny_step(w))
    fast(np.ones(3))
    fast(np.ones(3))
    y, g = fast(np.full(4, 2.0))  # a new shape: traced again, both traces kept
    assert len(fast.traces) == 2
    want_y, want_g = _tiny_step(w)(gh.Variable(np.full(4, 2.0), need_grad=False))
    np.testing.assert_array_equal(y.d, want_y.d)
    np.testing.assert_array_equal(g.d, want_g.d)
    y3, _ = fast(np.ones(3))
    np.testing.assert_array_equal(
        y3.d, _tiny_step(w)(gh.Variable(np.ones(3), need_grad=False))[0].d
    )


def test_backward_inside_a_compiled_step_accumulates_as_eager() -> None:
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((1, 3, 2))

    def run(compiled: bool) -> list[np.ndarray]:
        w = gh.Variable(w0.copy())

        def step(x: Any) -> Any:
            loss = F.sum(F.log(F.abs(F.batch_matmul(x, w)) + 1.0)) * 0.5
            loss.backward()
            return loss

        f = gh.compile(step) if compiled else step
        out = []
        for k in range(3):
            x = np.arange(6.0).reshape(1, 2, 3) * (k + 1) * 0.1
            loss = f(x if compiled else gh.Variable(x, need_grad=False))
            out += [loss.d.copy(), w.g.copy()]  # .g accumulates across calls
        return out

    for a, b in zip(run(True), run(False)):
        np.testing.assert_array_equal(a, b)


def test_a_gradient_used_later_in_the_step_follows_each_call() -> None:
    w = gh.Variable(np.array([0.3, -0.2]))

    def step(x: Any) -> Any:
        loss = F.sum(F.log(x * w * (x * w) + 1.0))
        (g,) = gh.grad([loss], [w], create_graph=False)
        w_next = w - 0.1 * g  # computed from the gradient: recorded after the walk
        return F.sum(w_next * w_next)

    fast = gh.compile(step)
    for v in ([1.0, 2.0], [0.5, -1.0], [3.0, 0.0]):
        x = np.array(v)
        np.testing.assert_array_equal(fast(x).d, step(gh.Variable(x, need_grad=False)).d)


def test_python_branches_are_replayed_as_traced() -> None:
    # documented: control flow that depends on values is fixed by the trace
    def step(x: Any) -> Any:
        return x * 2.0 if float(x.d.sum()) > 0 else x * -1.0

    fast = gh.compile(step)
    np.testing.assert_array_equal(fast(np.array([1.0])).d, [2.0])
    np.testing.assert_array_equal(fast(np.array([-1.0])).d, [-2.0])  # the traced branch


def test_backward_with_create_graph_inside_is_refused() -> None:
    w = gh.Variable(np.array([1.0]))

    def step(x: Any) -> Any:
        loss = F.sum(x * w * w)
        loss.backward(create_graph=True)
        return loss

    with pytest.raises(
        NotImplementedError, match=r"gradhub.compile: backward\(create_graph=True\)"
    ):
        gh.compile(step)(np.array([2.0]))


def test_compile_refuses_what_is_not_callable() -> None:
    with pytest.raises(TypeError, match=r"gradhub\.compile: step must be callable, got int"):
        gh.compile(3)


@pytest.mark.nn_ops
def test_a_compiled_gradient_penalty_step_matches_the_eager_step() -> None:
    rng = np.random.default_rng(2)
    p = [gh.Variable(rng.standard_normal(sh) * 0.3) for sh in CNN_SHAPES]
    t = gh.Variable(rng.integers(0, 5, (3, 1)), need_grad=False)

    def step(x: Any) -> Any:
        total = cnn_penalty(x, t, p)
        return [total, *gh.grad([total], p, create_graph=False, retain_graph=False)]

    fast = gh.compile(step)
    for _ in range(3):
        x = rng.standard_normal((3, 3, 8, 8))
        got, want = fast(x), step(gh.Variable(x, need_grad=False))
        assert isinstance(got, list)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.d, b.d)


@pytest.mark.nn_ops
def test_a_compiled_deep_mlp_step_peaks_no_higher_than_the_eager_step() -> None:
    # the trace's own result Variables let go of their arrays between calls: the gradients of
    # one call are not kept while the next call computes its own
    import tracemalloc

    rng = np.random.default_rng(0)
    x = gh.Variable(rng.standard_normal((64, 256)).astype(np.float32), need_grad=False)
    ps = []
    for _ in range(6):
        ps += [gh.Variable((rng.standard_normal((256, 256)) * 0.05).astype(np.float32))]
        ps += [gh.Variable(np.zeros(256, np.float32))]

    def step() -> Any:
        h = x
        for i in range(6):
            h = F.affine(h, ps[2 * i], ps[2 * i + 1])
            h = F.relu(h) if i < 5 else h
        loss = F.mean(h * h)
        return [loss, *gh.grad([loss], ps, create_graph=False, retain_graph=False)]

    fast = gh.compile(step)

    def peak(f: Any) -> int:
        f()
        f()
        tracemalloc.start()
        try:
            for _ in range(3):
                f()  # each result is dropped, as a training loop drops last step's gradients
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    for a, b in zip(fast(), step()):
        np.testing.assert_array_equal(a.d, b.d)
    # arrays: one activation of this step is 64 KiB; the plan's own Python objects (the frame of
    # its generated code, its list of values: a few KiB) may differ from the eager graph's
    assert peak(fast) <= peak(step) + 8192


@pytest.mark.parametrize("unreachable", ["zero", "none"])
@pytest.mark.parametrize("retain_graph", [True, False])
def test_plain_gradients_of_every_kind_of_input_follow_each_call(
    unreachable: str, retain_graph: bool
) -> None:
    # a first-order grad of leaves, of an intermediate Variable, of a leaf no output depends on
    # and of one needing no gradient, with either `unreachable` and `retain_graph`: the replayed
    # step's gradients are the eager step's at every call
    rng = np.random.default_rng(3)
    w = gh.Variable(rng.standard_normal(4))
    u = gh.Variable(rng.standard_normal(4))  # unreachable from the output
    c = gh.Variable(rng.standard_normal(4), need_grad=False)

    def step(x: Any) -> Any:
        h = F.log(F.abs(x * w) + 1.0) * c
        y = (h * h).sum() + (w * 2.0).sum()
        gs = gh.grad(
            [y],
            [w, h, u, c],
            create_graph=False,
            unreachable=unreachable,
            retain_graph=retain_graph,
        )
        return (y, *gs)

    fast = gh.compile(step)
    for _ in range(4):
        x = rng.standard_normal(4)
        want = step(gh.Variable(x, need_grad=False))
        got = fast(x)
        assert len(got) == len(want) == 5
        for k, (a, b) in enumerate(zip(got, want)):
            assert (a is None) == (b is None), k
            if b is not None:
                np.testing.assert_array_equal(a.d, b.d, err_msg=str(k))
                assert a.d.dtype == b.d.dtype and a.d.shape == b.d.shape
    assert len(fast.traces) == 1
    assert fast.traces[next(iter(fast.traces))].plain == [True]


def test_a_parameter_s_need_grad_changed_between_calls() -> None:
    # a compiled step's walks are made for the need_grad flags they were recorded with (read at
    # generation, not at each run): a flag changed between calls makes them again, and the
    # results (the loss, each .g) stay the eager step's
    rng = np.random.default_rng(7)
    w1 = gh.Variable(rng.standard_normal(4))
    w2 = gh.Variable(rng.standard_normal(4))

    def step(x: Any) -> Any:
        h = F.log(F.abs(x * w1) + 1.0) * w2
        y = (F.abs(h) * 0.5 + h * h).sum()
        y.backward()
        return y

    def grads() -> list[Any]:
        out = [None if w.g is None else np.array(w.g, copy=True) for w in (w1, w2)]
        w1.cleargrad()
        w2.cleargrad()
        return out

    fast = gh.compile(step)
    for flags in [(True, True)] * 3 + [(False, True)] * 3 + [(True, False), (True, True)]:
        w1.need_grad, w2.need_grad = flags
        x = rng.standard_normal(4)
        want_y = step(gh.Variable(x, need_grad=False))
        want_g = grads()
        got_y = fast(x)
        got_g = grads()
        np.testing.assert_array_equal(got_y.d, want_y.d)
        for a, b, flag in zip(got_g, want_g, flags):
            assert (a is None) == (b is None) == (not flag)
            if a is not None:
                np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("first", [(False, True), (True, False), (False, False)])
@pytest.mark.parametrize("walk", ["backward", "grad"])
def test_a_step_traced_with_a_frozen_parameter_follows_its_need_grad(
    first: tuple[bool, bool], walk: str
) -> None:
    # regression: traced while a parameter needed no gradient (its functions recorded without
    # rules), a step went on giving it no gradient (and grad() zeros) after need_grad=True, and
    # one traced with both frozen replayed silently where the eager step raises
    rng = np.random.default_rng(8)
    w1, w2 = gh.Variable(rng.standard_normal(4)), gh.Variable(rng.standard_normal(4))

    def step(x: Any) -> Any:
        y = (abs(x * w1) * w2).sum()
        if walk == "grad":
            return y, *gh.grad([y], [w1, w2], create_graph=False)
        y.backward()
        return y, w1.grad_var, w2.grad_var

    fast = gh.compile(step)
    for flags in [first, (True, True), first, (True, True)]:
        w1.need_grad, w2.need_grad = flags
        x = rng.standard_normal(4)
        results = []
        for run in (fast, lambda x: step(gh.Variable(x, need_grad=False))):
            w1.cleargrad()
            w2.cleargrad()
            try:
                results.append([None if v is None else v.d.copy() for v in run(x)])
            except Exception as e:  # (both frozen: backward() of y needing no gradient)
                results.append(type(e))
        assert type(results[0]) is type(results[1]), (flags, results)
        if isinstance(results[0], list):
            for a, b in zip(*results):
                assert (a is None) == (b is None), flags
                if a is not None:
                    np.testing.assert_array_equal(a, b, err_msg=f"{flags}")


def test_need_grad_set_inside_a_compiled_step_is_replayed() -> None:
    # regression: a step freezing a parameter for its walk (a GAN's generator step:
    # d.need_grad = False; backward(); d.need_grad = True) gave it a gradient on replays
    rng = np.random.default_rng(9)
    g, d = gh.Variable(rng.standard_normal(3)), gh.Variable(rng.standard_normal(3))

    def step(z: Any) -> Any:
        d.need_grad = False
        loss = (abs(z * g) * d).sum()
        loss.backward()
        d.need_grad = True
        return loss

    fast = gh.compile(step)
    for k in range(3):
        z = rng.standard_normal(3)
        seen = []
        for run in (fast, lambda z: step(gh.Variable(z, need_grad=False))):
            g.cleargrad()
            d.cleargrad()
            run(z)
            seen.append((g.g.copy(), d.g, d.need_grad))
        np.testing.assert_array_equal(seen[0][0], seen[1][0], err_msg=f"call {k}")
        assert seen[0][1:] == seen[1][1:] == (None, True), f"call {k}"


@pytest.mark.parametrize("retain_grad", [False, True])
def test_walks_that_free_rules_have_them_set_again_by_the_forward(retain_grad: bool) -> None:
    # a compiled step whose walks are all the plan's generated ones keeps its nodes' rules (set
    # once); a backward(retain_grad=True) walks with the engine, which frees them, so the
    # forward sets them again at every call: either way every call gives the eager step's .g
    rng = np.random.default_rng(9)
    w = gh.Variable(rng.standard_normal(3))
    v = gh.Variable(rng.standard_normal(3))

    def step(x: Any) -> Any:
        y = (F.log(F.abs(x * w) + 1.0) * v).sum()
        y.backward(retain_grad=retain_grad)
        return y

    fast = gh.compile(step)
    for _ in range(4):
        x = rng.standard_normal(3)
        want = step(gh.Variable(x, need_grad=False))
        want_g = [np.array(p.g, copy=True) for p in (w, v)]
        w.cleargrad()
        v.cleargrad()
        got = fast(x)
        np.testing.assert_array_equal(got.d, want.d)
        for p, g in zip((w, v), want_g):
            np.testing.assert_array_equal(p.g, g)
            p.cleargrad()
    (trace,) = fast.traces.values()
    assert trace.plan.rules_kept is (not retain_grad and plan._codegen)  # (table runs set them)


def _grad_step(w1: gh.Variable, w2: gh.Variable) -> Any:
    def step(x: Any) -> Any:
        h = F.log(F.abs(x * w1) + 1.0) * w2
        y = (h * h + h * 0.5).sum()
        g1, g2 = gh.grad([y], [w1, w2], create_graph=False)
        return y, g1, g2

    return step


def test_a_step_of_one_grad_runs_its_generated_functions_in_a_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the common static step (forward, one plain grad): run directly by its generated forward
    # and walk after the first run as a plan; the eager step's values bit for bit, and a
    # need_grad changed in between traces the step again (its functions were recorded with the
    # flags it began with), while flags set back replay the first trace
    monkeypatch.setattr(plan, "_codegen", True)
    rng = np.random.default_rng(11)
    w1, w2 = gh.Variable(rng.standard_normal(5)), gh.Variable(rng.standard_normal(5))
    step = _grad_step(w1, w2)
    fast = gh.compile(step)
    traces = []
    for k in range(9):
        if k == 4:
            w1.need_grad = False
        if k == 7:
            w1.need_grad = True
        x = rng.standard_normal(5)
        want = step(gh.Variable(x, need_grad=False))
        got = fast(x)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.d, b.d)
        (trace,) = fast.traces.values()
        assert (trace.direct is None) == (k in (0, 4)), k
        traces.append(trace)
    # one trace for the first flags, another after the change; the flags set back make the
    # first trace hold again, and it replays (kept among the signature's earlier traces)
    assert [len({id(t) for t in traces[a:b]}) for a, b in ((0, 4), (4, 7), (7, 9))] == [1, 1, 1]
    assert traces[0] is not traces[4] and traces[7] is traces[0]
    assert fast.earlier[next(iter(fast.traces))] == [traces[4]]


def test_an_error_in_a_direct_run_is_the_step_s_own() -> None:
    # what raises inside the direct run is raised by the plan's run, as eagerly
    rng = np.random.default_rng(12)
    w1, w2 = gh.Variable(rng.standard_normal(4)), gh.Variable(rng.standard_normal(4))
    step = _grad_step(w1, w2)
    fast = gh.compile(step)
    for _ in range(3):
        fast(rng.standard_normal(4))
    bad = np.full(4, np.inf)
    with np.errstate(all="raise"):
        with pytest.raises(Exception) as want:
            step(gh.Variable(bad, need_grad=False))
        with pytest.raises(Exception) as got:
            fast(bad)
    assert type(got.value) is type(want.value)
    assert str(got.value) == str(want.value)


def _registered() -> list[str]:
    from gradhub.registry import REGISTRY, _ensure_loaded

    _ensure_loaded()
    return sorted(REGISTRY.functions)


def _weighted_sum_step(fdef: Any, xs: list[gh.Variable], attrs: dict[str, Any]) -> Any:
    """The step ``y = sum_k (out_k * w_k).sum()`` of one call of ``fdef`` (fixed random weights
    per floating output), returning ``y`` and its gradients with respect to the leaves that need
    one."""
    wrt = [x for x in xs if x.need_grad]
    rng = np.random.default_rng(0)
    weights: list[gh.Variable] = []

    def step() -> Any:
        res = fdef.api(*xs, **attrs)
        outs = [o for o in (res if isinstance(res, tuple) else (res,)) if o.dtype.kind == "f"]
        if not weights:
            weights.extend(gh.Variable(rng.standard_normal(o.shape), need_grad=False) for o in outs)
        y = sum(((o * w).sum() for o, w in zip(outs, weights)), start=gh.Variable(0.0))
        gs = gh.grad([y], wrt, create_graph=False) if wrt and y.need_grad else []
        return (y, *gs)

    return step


@pytest.mark.parametrize("name", _registered())
def test_compiled_steps_match_the_eager_step_on_every_sample(name: str) -> None:
    # every sample of every function as a compiled step (its own plan: walks without the rule
    # and type guards of static graphs, run in a row): the eager step's values and gradients
    # bit for bit, over new leaf data and back
    from gradhub.audit import samples_of
    from gradhub.registry import REGISTRY

    fdef = REGISTRY.get(name)
    if getattr(fdef, "random", False):
        pytest.skip("draws random numbers: eager and replayed steps draw differently")
    for s in samples_of(fdef):
        arrays = [np.asarray(a) for a in s.inputs]
        xs = [
            gh.Variable(a.copy(), need_grad=fdef.differentiable and a.dtype.kind == "f")
            for a in arrays
        ]
        step = _weighted_sum_step(fdef, xs, s.attrs)
        moved = (s.grad_inputs or range(len(arrays))) if fdef.differentiable else ()
        new = [
            a * (1 + 1e-3) if a.dtype.kind == "f" and i in moved else a
            for i, a in enumerate(arrays)
        ]
        fast = gh.compile(step)
        for k, feed in enumerate([arrays, new, arrays, new]):
            for v, a in zip(xs, feed):
                v.d = a.copy()
            want = step()
            got = fast()
            assert len(got) == len(want)
            for j, (a, b) in enumerate(zip(got, want)):
                what = f"{name}[{s.name}] call {k + 1} value {j}"
                assert a.d.dtype == b.d.dtype and a.d.shape == b.d.shape, what
                np.testing.assert_array_equal(a.d, b.d, err_msg=what)


def _sgd_problem() -> tuple[gh.Variable, np.ndarray]:
    rng = np.random.default_rng(5)
    w = gh.Variable(rng.standard_normal((4, 3)).astype(np.float32), name="w")
    return w, rng.standard_normal((8, 4)).astype(np.float32)


@pytest.mark.parametrize("clear", ["g0", "gnone", "cleargrad", "zero_grad"])
def test_clearing_gradients_inside_a_compiled_step_is_replayed(clear: str) -> None:
    # regression: `w.g = 0` (or zero_grad) before backward() inside a compiled step ran at the
    # first call only, so .g summed the gradients of every later call (0.29, 0.58, 0.87, ...)
    w, x = _sgd_problem()
    opt = SGD([w], lr=0.1)

    def step(x: Any) -> Any:
        if clear == "g0":
            w.g = 0
        elif clear == "gnone":
            w.g = None
        elif clear == "cleargrad":
            w.cleargrad()
        else:
            opt.zero_grad()
        loss = ((x @ w) ** 2).sum()
        loss.backward()
        return loss

    fast = gh.compile(step)
    for k in range(4):
        w.g = np.full((4, 3), 7.0, np.float32)  # what the clearing must undo
        fast(x)
        got = w.g.copy()
        w.g = np.full((4, 3), 7.0, np.float32)
        step(gh.Variable(x, need_grad=False))
        np.testing.assert_array_equal(got, w.g, err_msg=f"call {k}")
    assert fast.traces and len(fast.traces) == 1


@pytest.mark.parametrize(
    "how", ["isub", "assign", "optimizer", "float16 optimizer", "adam", "grad array"]
)
def test_assignments_a_replay_would_not_make_are_refused_when_traced(how: str) -> None:
    # regression: `w.d -= lr * g.d` (or an optimizer's update) inside a compiled step changed w
    # at the first call only, silently
    w, x = _sgd_problem()
    if how == "float16 optimizer":  # (its update writes into the array, then assigns it)
        w, x = gh.Variable(w.d.astype(np.float16), name="w"), x.astype(np.float16)
    elif how == "adam":
        opt_adam = Adam([w], lr=0.1)
    before = w.d.copy()
    opt = SGD([w], lr=0.1)

    def step(x: Any) -> Any:
        loss = ((x @ w) ** 2).sum()
        (g,) = gh.grad([loss], [w], create_graph=False)
        if how == "isub":
            w.d -= 0.1 * g.d
        elif how == "assign":
            w.d = w.d - 0.1 * g.d
        elif how in ("optimizer", "float16 optimizer"):
            opt.update([g])
        elif how == "adam":
            opt_adam.update([g])
        else:
            w.g = g.d
        return loss

    what = ".g" if how == "grad array" else ".d"
    refused = rf"gradhub.compile: the step (assigns \{what} |writes in place into an array)"
    if how in ("optimizer", "float16 optimizer", "adam"):  # (named, since 2026-11-27)
        refused = r"gradhub.compile: the step calls (SGD|Adam)\.update\(\)"
    with pytest.raises(NotImplementedError, match=refused):
        gh.compile(step)(x)
    # refused before anything changed: `w.d -= ...` writes into w's array (read-only while the
    # step is traced) before it assigns it
    np.testing.assert_array_equal(w.d, before)
    assert w.d.flags.writeable

    # outside the compiled step the same update is fine: each call sees the new w
    def grads(x: Any) -> Any:
        return gh.grad([((x @ w) ** 2).sum()], [w], create_graph=False)

    fast = gh.compile(grads)
    seen = []
    for f in (fast, lambda x: grads(gh.Variable(x, need_grad=False))):
        w.d = before.copy()
        for _ in range(3):
            opt.update(f(x))
        seen.append(w.d.copy())
    np.testing.assert_array_equal(seen[0], seen[1])
    assert not np.array_equal(seen[0], before)


@pytest.mark.parametrize(
    "how", ["setitem", "out", "fill g", "setitem g", "numpy", "intermediate", "argument"]
)
def test_writes_in_place_a_replay_would_not_make_are_refused_when_traced(how: str) -> None:
    # regression: a write into an array taken from a Variable (`w.d[...] = v`, `out=w.d`,
    # `w.g.fill(0)`) inside a compiled step happened at the first call only, silently: numpy
    # writes are not functions of the graph that a replay runs
    w, x = _sgd_problem()
    w.g = np.ones((4, 3), np.float32)
    before, g_before = w.d.copy(), w.g.copy()

    def step(x: Any) -> Any:
        if how == "setitem":
            w.d[0] = 1.0
        elif how == "out":
            np.multiply(w.d, 0.5, out=w.d)
        elif how == "fill g":
            w.g.fill(0.0)
        elif how == "setitem g":
            w.g[...] = 0.0
        elif how == "numpy":
            w.numpy()[:] = 2.0
        elif how == "argument":  # the batch: a Variable made for this call
            x.d[:] = 0.0
        h = x @ w
        if how == "intermediate":  # a replay's h is a new array, not doubled
            h.d *= 2.0
        loss = (h**2).sum()
        loss.backward()
        return loss

    with pytest.raises(NotImplementedError, match="the step writes in place into an array"):
        gh.compile(step)(x)
    np.testing.assert_array_equal(w.d, before)
    np.testing.assert_array_equal(w.g, g_before)
    assert w.d.flags.writeable and w.g.flags.writeable  # (read-only while traced only)


def test_arrays_read_inside_a_compiled_step_are_writeable_again_after_it() -> None:
    # reading .d, .g or numpy() inside a step (to look at it, or to compute from it) is fine:
    # the arrays are read-only while the step is traced, and writeable again after it
    w, x = _sgd_problem()
    frozen = np.arange(3.0)
    frozen.flags.writeable = False
    c = gh.Variable(frozen, need_grad=False)
    seen: list[float] = []
    writeable: list[bool] = []

    def step(x: Any) -> Any:
        loss = ((x @ w) ** 2).sum()
        loss.backward()
        seen.append(float(w.d.sum() + w.g.sum() + w.numpy().sum() + c.d.sum()))
        writeable.append(w.d.flags.writeable)
        return loss

    fast = gh.compile(step)
    w.cleargrad()
    first = fast(x).d.copy()
    assert writeable == [False]  # while traced
    assert len(seen) == 1 and w.d.flags.writeable and w.g.flags.writeable
    assert not c.d.flags.writeable  # (read-only before: stays so)
    w.d[0] = 3.0  # the caller writes into w between calls: the replay sees it
    w.cleargrad()
    got = fast(x).d
    w.cleargrad()
    want = step(gh.Variable(x, need_grad=False)).d
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got, first)
    assert len(seen) == 2 and writeable == [False, True]  # (the replay ran no Python)


def test_assignments_made_by_communicator_callbacks_are_not_the_steps() -> None:
    # a callback sets .g itself during the walk, at every replay as at the trace
    w, x = _sgd_problem()

    class Halve:
        def on_grad_final(self, leaf: gh.Variable, grad: gh.Variable) -> None:
            leaf.g = grad.d * 0.5

        def on_finish_backward(self) -> None:
            pass

    def step(x: Any) -> Any:
        w.cleargrad()
        loss = ((x @ w) ** 2).sum()
        loss.backward(communicator_callbacks=Halve())
        return loss

    fast = gh.compile(step)
    for _ in range(3):
        fast(x)
        got = w.g.copy()
        step(gh.Variable(x, need_grad=False))
        np.testing.assert_array_equal(got, w.g)


@pytest.mark.parametrize("how", ["if", "item"])
def test_a_step_that_takes_a_value_as_a_python_object_is_refused_when_traced(how: str) -> None:
    # regression: the branch taken (or the number kept) at the trace was replayed at every call
    # whatever the values, silently
    w, x = _sgd_problem()

    def step(x: Any) -> Any:
        loss = ((x @ w) ** 2).sum()
        if how == "if":
            if loss:  # (bool() of a one-element Variable: its value is not zero)
                loss = loss * 0.5
            return loss
        return loss, loss.item()

    with pytest.raises(NotImplementedError, match=r"the step takes the value of the Variable"):
        gh.compile(step)(x)
    # outside a trace both work as before
    loss = step(gh.Variable(x, need_grad=False))
    assert isinstance(loss, gh.Variable if how == "if" else tuple)


def _replays_agree(step: Any, rng: np.random.Generator, shape: tuple[int, ...]) -> Any:
    """``gh.compile(step)`` called four times on new arrays of ``shape`` gives ``step``'s
    results bit for bit, from one trace; returns the last results and argument."""
    fast = gh.compile(step)
    for k in range(4):
        x = rng.standard_normal(shape)
        got, want = fast(x), step(gh.Variable(x, need_grad=False))
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.d, b.d, err_msg=f"call {k}")
    assert len(fast.traces) == 1
    return got, x


def test_a_no_grad_block_inside_a_compiled_step_is_computed_at_every_call() -> None:
    # regression: a value computed under no_grad() (a distillation target, a target network's
    # output) had no graph, so replays kept the value of the first call, silently
    rng = np.random.default_rng(7)
    w = gh.Variable(rng.standard_normal((4, 3)))
    t = gh.Variable(rng.standard_normal((4, 3)))

    def step(x: Any) -> Any:
        with gh.no_grad():
            target = F.log(F.abs(x @ t) + 1.0)
        assert not target.need_grad
        if gh.modes.is_tracing():  # recorded, marked as a deliberate stop (which front-ends
            # working need_grad out again leave without a rule)
            assert target.creator.stop and getattr((x @ t).creator, "stop", False) is False
        loss = ((x @ w - target) ** 2).sum()
        return [loss, *gh.grad([loss], [w, t], create_graph=False)]

    got, x = _replays_agree(step, rng, (8, 4))
    assert not got[2].d.any()  # no gradient flows through the block, as without compile
    # outside a trace, no_grad() records nothing, as always
    with gh.no_grad():
        assert (x @ t).creator is None


@pytest.mark.parametrize("source", ["variable", "array"])
def test_a_variable_made_from_an_argument_inside_a_step_is_refused_when_traced(source: str) -> None:
    # regression: gh.Variable(x) of the step's argument held the first call's array at every
    # later call, silently
    w, _ = _sgd_problem()

    def step(x: Any) -> Any:
        xv = gh.Variable(x if source == "variable" else x.d, need_grad=False)
        return ((xv @ w) ** 2).sum()

    with pytest.raises(NotImplementedError, match="the step makes a Variable from"):
        gh.compile(step)(np.ones((2, 4), np.float32))
    # a Variable of new data, made inside the step, is a constant of the trace, as documented
    fast = gh.compile(lambda x: ((x @ w) * gh.Variable(np.full(3, 2.0, np.float32))).sum())
    for _ in range(3):
        x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
        got, want = fast(x), ((gh.Variable(x) @ w) * 2.0).sum()
        np.testing.assert_array_equal(got.d, want.d)


def test_functional_transforms_of_an_argument_inside_a_compiled_step_follow_each_call() -> None:
    # regression: grad, hessian, jacrev and vmap(grad) with respect to the step's array argument
    # differentiated a leaf holding the first call's array, at every later call
    from gradhub import func

    rng = np.random.default_rng(11)
    w = gh.Variable(rng.standard_normal(4))

    def f(y: Any) -> Any:
        return ((y * w) ** 3).sum()

    def step(x: Any) -> Any:
        return (
            func.grad(f)(x[0]),
            func.hessian(f)(x[1]),
            func.jacrev(lambda y: (y * w) ** 2)(x[2]),
            func.vmap(func.grad(f))(x),
        )

    got, x = _replays_agree(step, rng, (5, 4))
    # the gradient itself: d/dy sum((y w)^3) = 3 y^2 w^3
    np.testing.assert_allclose(got[0].d, 3 * x[0] ** 2 * w.d**3, rtol=1e-12)


def test_a_jvp_tangent_of_another_dtype_follows_each_call() -> None:
    # regression: a float64 tangent for a float32 primal was cast into a leaf holding the first
    # call's tangent, so a compiled jvp step gave the first call's derivative at every call
    from gradhub import func

    def step(x: Any, t: Any) -> Any:
        return func.jvp(lambda y: (y * y).sum(), (x,), (t,))[1]

    fast = gh.compile(step)
    x = np.arange(3, dtype=np.float32)
    for k in range(3):
        t = np.full(3, k + 1.0)  # float64
        got = fast(x, t).d
        want = step(gh.Variable(x, need_grad=False), gh.Variable(t, need_grad=False)).d
        assert got == want == np.float32(2 * (k + 1) * x.sum()), f"call {k}"


@pytest.mark.parametrize("clear", [True, False])
def test_gradient_variables_among_the_results_follow_each_call(clear: bool) -> None:
    # regression: a step returning w.grad_var, or h.grad_var after backward(retain_grad=True),
    # returned the first call's gradient at every call (each walk sets a new gradient Variable)
    seen = []
    for compiled in (True, False):
        w, x = _sgd_problem()

        def step(x: Any, w: gh.Variable = w) -> Any:
            h = x @ w
            loss = (h**2).sum()
            loss.backward(retain_grad=True)
            return loss, w.grad_var, {"h": h.grad_var}

        run = gh.compile(step) if compiled else step
        calls = []
        for k in range(3):
            xk = x * (k + 1)
            if clear:
                w.cleargrad()
            got = run(xk if compiled else gh.Variable(xk, need_grad=False))
            np.testing.assert_array_equal(got[1].d, w.g)
            np.testing.assert_array_equal(got[2]["h"].d, 2 * (xk @ w.d), err_msg=f"call {k}")
            calls.append([got[1].d.copy(), got[2]["h"].d.copy()])
        seen.append(calls)
    for k, (a, b) in enumerate(zip(*seen)):
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v, err_msg=f"call {k}")


def test_a_trace_sees_only_its_own_thread() -> None:
    # regression: the trace's observer and recorder were process-wide: while one thread traced a
    # step, another thread's writes into its own Variables were refused (their arrays read-only),
    # its .g clearings and backward() calls went into the trace, and its no_grad() recorded
    import threading

    w, x = _sgd_problem()
    inside, done = threading.Event(), threading.Event()
    seen: list[Any] = []

    def step(x: Any) -> Any:
        loss = ((x @ w) ** 2).sum()
        inside.set()
        assert done.wait(10)
        loss.backward()
        return loss

    def other() -> None:
        try:
            assert inside.wait(10)
            v = gh.Variable(np.ones(3, np.float32))
            v.d[0] = 5.0
            v.d = v.d * 2.0
            (v * v).sum().backward()
            v.g = 0
            with gh.no_grad():
                y = v * 3.0
            seen.extend([v.d.copy(), v.g.copy(), y.creator is None])
        except BaseException as e:  # (reported below)
            seen.append(e)
        finally:
            done.set()

    t = threading.Thread(target=other)
    t.start()
    fast = gh.compile(step)
    w.cleargrad()
    fast(x)
    t.join()
    assert not any(isinstance(s, BaseException) for s in seen), seen
    np.testing.assert_array_equal(seen[0], [10.0, 2.0, 2.0])
    np.testing.assert_array_equal(seen[1], np.zeros(3))
    assert seen[2]
    (ev,) = next(iter(fast.traces.values())).events  # its own backward() only
    assert ev[0] == "backward"


def test_calls_of_one_compiled_step_from_two_threads_do_not_mix() -> None:
    # regression: two threads replaying one compiled step at once shared the trace's input
    # Variables and results, and got each other's losses now and then
    import sys
    import threading

    rng = np.random.default_rng(6)
    w = gh.Variable(rng.standard_normal((64, 64)) / 8)

    def step(x: Any) -> Any:
        h = x
        for _ in range(12):
            h = abs(h @ w)
        return (h * h).sum()

    fast = gh.compile(step)
    xs = [rng.standard_normal((32, 64)) for _ in range(2)]
    want = [step(gh.Variable(x, need_grad=False)).d for x in xs]
    fast(xs[0])
    wrong: list[Any] = []

    def run(i: int) -> None:
        for _ in range(150):
            got = fast(xs[i]).d
            if got != want[i]:
                wrong.append((i, got))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch between a few bytecodes
    try:
        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not wrong


def test_detached_values_inside_a_compiled_step_follow_each_call() -> None:
    # regression: x.detach() inside a compiled step made a leaf holding the first call's values,
    # so a target computed with detach() (PyTorch's idiom) was the first call's at every call
    w, x = _sgd_problem()
    s = gh.Variable(np.float32(0.5), name="s")

    def step(x: Any) -> Any:
        h = x @ w
        target = h.detach() * s.detach()  # (a parameter's detach() too: s may be updated)
        loss = ((h - target) ** 2).sum()
        (g,) = gh.grad([loss], [w], create_graph=False)
        return loss, g

    fast = gh.compile(step)
    for k in range(3):
        xk, s.d = x * (k + 1), np.float32(0.5 + k)
        got, want = fast(xk), step(gh.Variable(xk, need_grad=False))
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.d, b.d, err_msg=f"call {k}")
        h = xk @ w.d  # d/dw sum((h - c)^2), c = s h held constant: x^T 2 (h - s h)
        np.testing.assert_allclose(got[1].d, xk.T @ (2 * (h - s.d * h)), rtol=1e-4)


@pytest.mark.parametrize("make", ["d", "view", "numpy"])
def test_variables_made_from_arrays_taken_inside_a_compiled_step_are_refused(make: str) -> None:
    # regression: gh.Variable(h.d) of a result h inside a compiled step held the first call's
    # values at every call, silently
    w, x = _sgd_problem()

    def step(x: Any) -> Any:
        h = x @ w
        a = {"d": lambda: h.d, "view": lambda: h.d[1:], "numpy": h.numpy}[make]()
        return (h[1:] * gh.Variable(a if make == "view" else a[1:])).sum()

    with pytest.raises(NotImplementedError, match="makes a Variable from an array taken from"):
        gh.compile(step)(x)


def test_results_keep_a_front_ends_variable_class() -> None:
    # a front-end's Variable class (chainer's: .array) stays the class of a compiled step's
    # results; a subclass with attributes of its own (a parameter class) gives its nearest base
    # that a plain Variable's layout fits
    class FrontVariable(gh.Variable):
        __slots__ = ()

        @property
        def array(self) -> Any:
            return self._data

    class Parameter(FrontVariable):  # (a __dict__: another layout)
        pass

    w = Parameter(np.ones((4, 3), np.float32))
    w.tag = "w"

    def step(x: Any) -> Any:
        y = x @ w
        y.__class__ = FrontVariable  # (as a front-end adopts a function's result)
        return y, w

    fast = gh.compile(step)
    for k in range(2):
        y, wr = fast(np.full((2, 4), k + 1.0, np.float32))
        assert type(y) is FrontVariable and type(wr) is FrontVariable, f"call {k}"
        np.testing.assert_array_equal(y.array, np.full((2, 3), 4.0 * (k + 1)))
        assert wr.array is w.d and wr.creator is None and not wr.need_grad


def test_a_step_returning_nothing_runs_once_per_call() -> None:
    # regression: a replay's result None was read as "the plan no longer holds", so a step
    # returning nothing (loss.backward() and no return) was traced again at every call, running
    # its code a second time: every .g was twice the eager one
    w, x = _sgd_problem()
    runs = [0]

    def step(x: Any) -> None:
        runs[0] += 1
        ((x @ w) ** 2).sum().backward()

    fast = gh.compile(step)
    for k in range(3):
        xk = x * (k + 1)
        w.cleargrad()
        assert fast(xk) is None
        got = w.g.copy()
        w.cleargrad()
        step(gh.Variable(xk, need_grad=False))
        np.testing.assert_array_equal(got, w.g, err_msg=f"call {k}")
    assert runs[0] == 1 + 3  # the trace, then the eager calls only


def test_grad_with_set_grad_inside_a_compiled_step_leaves_the_gradient() -> None:
    # regression: after the tracing call of a step with grad(..., set_grad=True), w.g was an
    # empty array (the trace let go of its results' arrays, which were w's .g)
    w, x = _sgd_problem()

    def step(x: Any) -> Any:
        loss = ((x @ w) ** 2).sum()
        gh.grad([loss], [w], create_graph=False, set_grad=True)
        return loss

    fast = gh.compile(step)
    for k in range(3):
        xk = x * (k + 1)
        w.cleargrad()
        fast(xk)
        got = w.g.copy()
        w.cleargrad()
        step(gh.Variable(xk, need_grad=False))
        np.testing.assert_array_equal(got, w.g, err_msg=f"call {k}")


def test_number_tuple_and_object_arguments_pick_their_traces() -> None:
    # regression: 0.0 and -0.0 shared a trace (x / s gave inf for -0.0); a tuple of ints (a
    # shape) became an array Variable; an object argument was told by its id, which a new
    # object of a later call could reuse (its attributes were the first object's)
    import types

    def step(x: Any, s: float, shape: tuple[int, ...], obj: Any) -> Any:
        return (x / s).reshape(shape) * obj.scale

    fast = gh.compile(step)
    x = np.arange(1.0, 7.0)
    for k, (s, shape) in enumerate([(0.0, (2, 3)), (-0.0, (2, 3)), (2.0, (3, 2)), (-0.0, (6,))]):
        obj = types.SimpleNamespace(scale=float(k + 1))  # (a new object each call)
        with np.errstate(divide="ignore"):
            got = fast(x, s, shape, obj)
            want = step(gh.Variable(x, need_grad=False), s, shape, obj)
        np.testing.assert_array_equal(got.d, want.d, err_msg=f"call {k}")
        assert got.shape == shape


def test_a_variable_computed_before_the_step_is_refused() -> None:
    # regression: a closure's Variable computed outside the step (a fixed target) was computed
    # again by every replay from its inputs' values then (and its .d overwritten), where the
    # step's code uses the value it has; its .detach() is the constant the step means
    w, x = _sgd_problem()
    target = abs(w) * 2.0

    def step(x: Any, t: Any) -> Any:
        return (((x @ w) - (x @ t)) ** 2).sum()

    with pytest.raises(NotImplementedError, match=r"computed before it was called \(by abs"):
        gh.compile(lambda x: step(x, target))(x)
    fixed = target.detach()
    fast = gh.compile(lambda x: step(x, fixed))
    for k in range(3):
        w.d = w.d * 1.5  # (an update between calls: the target stays)
        got, want = fast(x), step(gh.Variable(x, need_grad=False), fixed)
        assert got.d == want.d, f"call {k}"


def test_a_leaf_made_inside_the_step_that_backward_accumulates_into_is_refused() -> None:
    # regression: b = gh.Variable(zeros, need_grad=True) made inside the step was the trace's one
    # leaf: backward() summed every call's gradient into its .g, where the eager step makes a new
    # one at each call. Its gradient by gh.grad, and a parameter of the table made at the first
    # call (as a parametric function makes it), are fine
    def accumulates(x: Any) -> Any:
        b = gh.Variable(np.zeros(3), need_grad=True)
        loss = ((x + b) ** 2).sum()
        loss.backward()
        return loss, b.grad_var

    with pytest.raises(NotImplementedError, match=r"makes the Variable .* accumulates into its"):
        gh.compile(accumulates)(np.ones(3))

    def by_grad(x: Any) -> Any:
        b = gh.Variable(np.zeros(3), need_grad=True)
        return gh.grad([((x + b) ** 2).sum()], [b], create_graph=False)[0]

    fast = gh.compile(by_grad)
    for k in range(3):
        np.testing.assert_array_equal(fast(np.full(3, k + 1.0)).d, np.full(3, 2.0 * (k + 1)))

    gh.clear_parameters()
    try:

        def with_parameter(x: Any) -> Any:
            with gh.parameter_scope("layer"):
                w = gh.get_parameter_or_create("w", (3,), np.ones)
            loss = (x * w).sum()
            loss.backward()
            return loss

        fast = gh.compile(with_parameter)
        for k in range(3):
            fast(np.full(3, k + 1.0))
        w = gh.get_parameters()["layer/w"]
        np.testing.assert_array_equal(w.g, np.full(3, 6.0))  # 1 + 2 + 3, as eagerly
    finally:
        gh.clear_parameters()


def test_results_nested_in_dicts_and_tuples_follow_each_call() -> None:
    # regression: Variables inside a dict or a nested tuple were the trace's own, whose arrays
    # are let go of after each call: even the first call's came back empty
    import collections

    pair = collections.namedtuple("pair", "loss grads")
    w, _ = _sgd_problem()
    rng = np.random.default_rng(2)

    def step(x: Any) -> Any:
        loss = ((x @ w) ** 2).sum()
        (g,) = gh.grad([loss], [w], create_graph=False)
        return {"loss": loss, "parts": (g, [None, "tag"])}, pair(loss, [g])

    fast = gh.compile(step)
    for k in range(3):
        x = rng.standard_normal((8, 4)).astype(np.float32)
        got, want = fast(x), step(gh.Variable(x, need_grad=False))
        assert set(got[0]) == {"loss", "parts"} and got[0]["parts"][1] == [None, "tag"]
        assert type(got[1]) is pair and type(got[1].grads) is list
        for a, b in [
            (got[0]["loss"], want[0]["loss"]),
            (got[0]["parts"][0], want[0]["parts"][0]),
            (got[1].loss, want[1].loss),
            (got[1].grads[0], want[1].grads[0]),
        ]:
            assert a.creator is None
            np.testing.assert_array_equal(a.d, b.d, err_msg=f"call {k}")


@pytest.mark.parametrize("value", ["array", "float", "numpy scalar"])
def test_numbers_and_arrays_among_the_results_are_refused_when_traced(value: str) -> None:
    # regression: `return loss, float(loss.d)` gave the first call's number at every call
    w, x = _sgd_problem()

    def step(x: Any) -> Any:
        loss = ((x @ w) ** 2).sum()
        extra = {"array": loss.d, "float": float(loss.d), "numpy scalar": loss.d.sum()}[value]
        return loss, extra

    with pytest.raises(NotImplementedError, match="the step returns a"):
        gh.compile(step)(x)


def test_arrays_in_dicts_tuples_and_lists_of_arguments_follow_each_call() -> None:
    # regression: a dict argument was one object to the trace, its arrays constants: a batch
    # dict updated in place between calls gave the first batch's results at every call
    w, _ = _sgd_problem()
    rng = np.random.default_rng(4)

    def step(batch: Any, pair: Any, scale: float) -> Any:
        x, t = batch["x"], batch["t"]
        loss = (((x @ w) - t) ** 2).sum() * scale + (pair[0] * pair[1][0]).sum()
        return [loss, *gh.grad([loss], [w], create_graph=False)]

    def as_variables(a: Any) -> Any:
        if isinstance(a, dict):
            return {k: as_variables(v) for k, v in a.items()}
        if isinstance(a, (tuple, list)):
            return type(a)(as_variables(v) for v in a)
        return gh.Variable(a, need_grad=False)

    fast = gh.compile(step)
    batch: dict[str, Any] = {}
    for k in range(4):
        batch["x"] = rng.standard_normal((8, 4)).astype(np.float32)  # the same dict, refilled
        batch["t"] = rng.standard_normal((8, 3)).astype(np.float32)
        pair = (rng.standard_normal(3).astype(np.float32), [rng.standard_normal(3)])
        got = fast(batch, pair, 2.0)
        want = step(as_variables(batch), as_variables(pair), 2.0)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.d, b.d, err_msg=f"call {k}")
    assert len(fast.traces) == 1
    fast(batch, pair, 3.0)  # another value of a number: another trace
    assert len(fast.traces) == 2
    # a list of numbers is still one array-like argument
    total = gh.compile(lambda v: v.sum())
    assert float(total([1.0, 2.0, 4.0]).d) == 7.0


def test_keyword_arguments_are_arguments_of_the_trace() -> None:
    # (they raised TypeError before): arrays among them follow each call, numbers pick a trace
    w = gh.Variable(np.linspace(0.5, 1.5, 4))

    def step(x: Any, t: Any = None, scale: float = 1.0) -> Any:
        loss = (((x * w) - t) ** 2).sum() * scale
        return loss, gh.grad([loss], [w], create_graph=False)[0]

    fast = gh.compile(step)
    rng = np.random.default_rng(9)
    for k in range(3):
        x, t = rng.standard_normal(4), rng.standard_normal(4)
        got = fast(x, t=t, scale=2.0)
        want = step(gh.Variable(x, need_grad=False), t=gh.Variable(t, need_grad=False), scale=2.0)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.d, b.d, err_msg=f"call {k}")
    assert len(fast.traces) == 1
    fast(x, t=t, scale=3.0)
    assert len(fast.traces) == 2


def test_a_compiled_step_called_inside_another_ones_trace_is_part_of_its_graph() -> None:
    # regression: the inner step replayed its own plan, whose results were constants of the
    # outer trace: the outer step gave its first call's value at every call
    w = gh.Variable(np.linspace(0.5, 1.5, 4))
    inner = gh.compile(lambda x: (x * w) ** 2)
    rng = np.random.default_rng(8)
    for _ in range(3):
        inner(rng.standard_normal(4))  # traced, then replayed
    outer = gh.compile(lambda x: (inner(x).sum() * 2.0, gh.grad([inner(x).sum()], [w])[0]))
    for k in range(3):
        x = rng.standard_normal(4)
        loss, g = outer(x)
        np.testing.assert_allclose(loss.d, ((x * w.d) ** 2).sum() * 2.0, rtol=1e-14)
        np.testing.assert_allclose(g.d, 2 * x * x * w.d, rtol=1e-14, err_msg=f"call {k}")
    assert len(outer.traces) == 1


def test_transforms_and_stops_inside_a_compiled_step() -> None:
    # regressions, each silently wrong before: forward mode (jvp, hessian) passed tangents
    # through a detach() or no_grad() block of a traced step (eagerly none passes); a
    # gradhub.func transform called under no_grad() differentiated with respect to a leaf
    # holding the first call's argument; functional_call with values passed as the step's
    # arguments (a need_grad other than the parameter's) used the first call's values
    import gradhub.func as ghf

    rng = np.random.default_rng(21)

    def f(u: Any) -> Any:
        return ((F.abs(u) + 1.0).detach() * u * u).sum()

    def g(u: Any) -> Any:
        with gh.no_grad():
            c = F.log(F.abs(u) + 1.0)
        return (c * u * u).sum()

    def jvps(x: Any) -> Any:
        return [ghf.jvp(f, (x,), (x * 0.0 + 1.0,))[1], ghf.hessian(g)(x)]

    got, x = _replays_agree(jvps, rng, (3,))
    np.testing.assert_allclose(got[0].d, (2 * (np.abs(x) + 1) * x).sum(), rtol=1e-12)
    np.testing.assert_allclose(got[1].d, np.diag(2 * np.log(np.abs(x) + 1)), rtol=1e-12)

    def under_no_grad(x: Any) -> Any:
        with gh.no_grad():
            return [ghf.grad(lambda u: (u * u * u).sum())(x)]

    got, x = _replays_agree(under_no_grad, rng, (3,))
    np.testing.assert_allclose(got[0].d, 3 * x * x, rtol=1e-12)

    gh.clear_parameters()
    try:
        gh.get_parameter_or_create("w", (3,), lambda s: np.ones(s))

        def model(u: Any) -> Any:
            return (gh.get_parameter_or_create("w", (3,), None) * u).sum()

        w = gh.Variable(np.zeros(3), need_grad=False)

        def substituted(x: Any) -> Any:
            return [ghf.functional_call(model, {"w": x * 2.0}, w + 1.0)]

        got, x = _replays_agree(substituted, rng, (3,))
        np.testing.assert_allclose(got[0].d, (2 * x).sum(), rtol=1e-12)
    finally:
        gh.clear_parameters()


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
def test_copying_a_variable_inside_a_step_is_refused_when_traced(how: str) -> None:
    # regression: copy.copy, copy.deepcopy or a pickle round trip of the step's argument made a
    # Variable holding the first call's array at every later call, silently (as Variable(x))
    import copy
    import pickle

    make = {
        "copy": copy.copy,
        "deepcopy": copy.deepcopy,
        "pickle": lambda v: pickle.loads(pickle.dumps(v)),
    }[how]

    def step(x: Any) -> Any:
        return [make(x) * 2.0]

    with pytest.raises(NotImplementedError, match=r"gradhub.compile: the step makes a Variable"):
        gh.compile(step)(np.ones(2))
    x = gh.Variable(np.array([1.0, 2.0]))  # outside a traced step, as for any object
    np.testing.assert_array_equal(make(x).d, x.d)


def test_a_variable_kept_in_the_trace_is_computed_at_each_replay() -> None:
    """gradhub.variable.keep_in_trace: a function whose result no output reads (a collective of
    data-parallel training) still runs at each replay of the compiled step; without it, the
    plan leaves it out."""
    from gradhub.variable import keep_in_trace

    runs = []

    class Effect(gh.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            runs.append(1)
            return x * 1.0

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    x = gh.Variable(np.array([1.0, 2.0]))

    def step(keep: bool) -> Any:
        out = Effect.apply(x)
        if keep:
            keep_in_trace(out)
        return x * 2.0

    for keep, expected in ((True, 3), (False, 1)):
        runs.clear()
        compiled = gh.compile(lambda keep=keep: step(keep))
        for _ in range(3):
            np.testing.assert_array_equal(np.asarray(getattr(r := compiled(), "d", r)), [2.0, 4.0])
        assert len(runs) == expected, (keep, runs)
