"""Elementwise fusion in plans (:mod:`gradhub.fusion`) on a fake device whose fuser runs each
chain with the functions' own kernels in one call: chains are found where expected (and cut where
a middle value is used outside, kept by a rule or held by a Variable), plans with fusion give the
unfused plans' numbers bit for bit, by the generated code and by the table, and the hook
``register.fuser`` checks what it is given."""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import gradhub as gh
import gradhub.plan as plan
import numpy as np
import pytest
from fake_device import FakeArray, FakeType
from gradhub import fusion, plugins
from gradhub.errors import PluginLoadWarning
from gradhub.registry import REGISTRY


class ByKernels(fusion.Fuser):
    """Runs a chain by its functions' own kernels (so the numbers are the unfused ones), and
    records the chains it built and the calls."""

    def __init__(self, names: set[str] | None = None) -> None:
        self.names = names
        self.chains: list[fusion.Chain] = []
        self.calls = 0

    def accepts(self, name: str, attrs: dict[str, Any], dtype: Any) -> bool:
        return self.names is None or name in self.names

    def build(self, chain: fusion.Chain) -> Any:
        self.chains.append(chain)
        fns = [REGISTRY.get(op.name).forward for op in chain.ops]

        def run(xp: Any, *arrays: Any) -> list[Any]:
            self.calls += 1
            vals = list(arrays)
            for fn, op in zip(fns, chain.ops):
                vals.append(fn(xp, *[vals[a] for a in op.args], **dict(op.attrs)))
            return [vals[o] for o in chain.outputs]

        return run


FUSER = ByKernels()


def _add_fake(register: Any) -> None:
    register.device(FakeType())


def _add_fuser(register: Any) -> None:
    register.fuser("fake", FUSER)


@pytest.fixture(autouse=True)
def _core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    monkeypatch.delenv("GRADHUB_STRICT_PLUGINS", raising=False)
    dev = types.ModuleType("fake_device_plugin")
    dev.gradhub_add_devices = gh.hookimpl(_add_fake)  # type: ignore[attr-defined]
    dev.gradhub_add_kernels = gh.hookimpl(_add_fuser)  # type: ignore[attr-defined]
    plugins.reset()
    plugins.load_plugins(extra=[("fake_device", dev)])
    FUSER.chains.clear()
    FUSER.calls = 0
    yield
    plugins.reset()


def _fake(a: Any, need_grad: bool = False) -> gh.Variable:
    with gh.context_scope(gh.get_extension_context("fake")):
        return gh.Variable(np.asarray(a), need_grad=need_grad)


RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4))


def _chain(x: gh.Variable, b: gh.Variable) -> gh.Variable:
    """``(-(x * 2 + 1) + b) * 0.5``: five elementwise nodes, one run."""
    return (-(x * 2.0 + 1.0) + b) * 0.5


def _run_twice(y: gh.Variable) -> np.ndarray:
    y.forward()  # plans
    y.forward()  # runs the plan
    return np.array(y.d.view(np.ndarray))


@pytest.mark.parametrize("codegen", [True, False])
def test_a_chain_runs_as_one_call_with_the_unfused_numbers(
    codegen: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plan, "_codegen", codegen)
    x, b = _fake(X), _fake(B)
    y = _chain(x, b)
    got = _run_twice(y)
    p = plan.plan_of(y)
    assert p is not None and len(set(map(id, p.fused.values()))) == 1
    (chain,) = FUSER.chains
    assert [op.name for op in chain.ops] == ["MulScalar", "AddScalar", "Neg", "Add2", "MulScalar"]
    assert chain.outputs == (len(chain.inputs) + 4,)  # only the result leaves the kernel
    assert chain.dtype == np.float64 and chain.shape == (3, 4)
    assert FUSER.calls == 2
    assert type(y.d) is FakeArray
    with fusion_off():
        x2, b2 = _fake(X), _fake(B)
        want = _run_twice(_chain(x2, b2))
    assert np.array_equal(got, want)
    assert np.array_equal(got, (-(X * 2.0 + 1.0) + B) * 0.5)
    x.d = _fake(X * 3).d  # new data: the plan's call reads it
    y.forward()
    assert np.array_equal(np.asarray(y.d), (-(X * 6.0 + 1.0) + B) * 0.5)


class fusion_off:
    def __enter__(self) -> None:
        self.before = fusion.set_enabled(False)

    def __exit__(self, *exc: Any) -> None:
        fusion.set_enabled(self.before)


def test_off_no_chain_is_fused() -> None:
    with fusion_off():
        y = _chain(_fake(X), _fake(B))
        _run_twice(y)
        assert plan.plan_of(y).fused == {}  # type: ignore[union-attr]
    assert FUSER.chains == []


def test_a_middle_value_used_outside_the_run_is_an_output() -> None:
    x = _fake(X)
    h = x * 2.0
    y = (h + 1.0) * 3.0
    z = y + h.sum()  # (Sum is not elementwise: the run is cut there, h leaves the kernel)
    _ = z.forward(), z.forward()
    (chain,) = FUSER.chains
    n = len(chain.inputs)
    assert [op.name for op in chain.ops] == ["MulScalar", "AddScalar", "MulScalar"]
    assert chain.outputs == (n, n + 2)  # h (read by Sum) and y (read by Add2)
    assert np.array_equal(np.asarray(z.d), (X * 2.0 + 1.0) * 3.0 + (X * 2.0).sum())


def test_values_kept_by_rules_or_held_by_variables_leave_the_kernel() -> None:
    x = _fake(X, need_grad=True)
    b = _fake(B + 3.0)
    h = x * 2.0  # MulScalar keeps nothing
    y = F_log(h + b) * 0.5  # Log keeps its input; MulScalar nothing
    y.forward()
    y.forward()
    (chain,) = FUSER.chains
    n = len(chain.inputs)
    assert [op.name for op in chain.ops] == ["MulScalar", "Add2", "Log", "MulScalar"]
    # h is held by a Variable, Log's input is kept for backward, y is the result
    assert chain.outputs == (n, n + 1, n + 3)
    (g,) = gh.grad([y.sum()], [x])
    with fusion_off():
        x2 = _fake(X, need_grad=True)
        y2 = F_log(x2 * 2.0 + _fake(B + 3.0)) * 0.5
        y2.forward()
        y2.forward()
        (g2,) = gh.grad([y2.sum()], [x2])
    assert np.array_equal(np.asarray(y.d), np.asarray(y2.d))
    assert np.array_equal(np.asarray(g.d), np.asarray(g2.d))
    del h


def F_log(v: gh.Variable) -> gh.Variable:
    return gh.ops.call("Log", v)


def test_a_value_held_by_no_one_stays_inside() -> None:
    x = _fake(X)
    y = (x * 2.0 + 1.0) * 3.0  # the middle Variables are gone
    _run_twice(y)
    (chain,) = FUSER.chains
    assert chain.outputs == (len(chain.inputs) + 2,)


def test_other_shapes_dtypes_and_unaccepted_functions_stay_unfused() -> None:
    FUSER.names = {"MulScalar", "AddScalar"}
    try:
        x = _fake(X)
        y = -((x * 2.0 + 1.0) * 3.0)  # Neg not accepted: the run is the three before it
        _run_twice(y)
        assert [[op.name for op in c.ops] for c in FUSER.chains] == [
            ["MulScalar", "AddScalar", "MulScalar"]
        ]
        FUSER.chains.clear()
        xi = _fake(np.arange(6).reshape(2, 3))  # int64: not fused
        _run_twice((xi * 2 + 1) * 3)
        x32 = _fake(X.astype(np.float32))  # float32: fused
        _run_twice((x32 * 2.0 + 1.0) * 3.0)
        assert [c.dtype for c in FUSER.chains] == [np.float32]
    finally:
        FUSER.names = None


def test_a_broadcast_operand_cuts_the_run() -> None:
    x = _fake(X)
    row = _fake(B[0])  # (4,) against (3, 4): not the chain's shape, not 0-d
    y = (x * 2.0 + row) * 3.0
    _run_twice(y)
    assert FUSER.chains == []
    s = _fake(np.array(2.5))  # 0-d operands join the chain
    y2 = (x * 2.0 + s) * 3.0
    _run_twice(y2)
    (chain,) = FUSER.chains
    assert ((), np.float64) in chain.inputs
    assert np.array_equal(np.asarray(y2.d), (X * 2.0 + 2.5) * 3.0)


def test_a_run_of_0d_values_is_fused() -> None:
    x = _fake(X)
    s = x.sum()  # (not elementwise: the run starts after it)
    y = (s * 0.5 + 1.0) * s
    got = _run_twice(y)
    (chain,) = FUSER.chains
    assert chain.shape == () and [op.name for op in chain.ops] == ["MulScalar", "AddScalar", "Mul2"]
    assert np.array_equal(got, (X.sum() * 0.5 + 1.0) * X.sum())


def test_nodes_between_the_nodes_of_a_run_stay_before_it() -> None:
    x = _fake(X)
    h = x * 2.0
    s = x.sum()  # (between h and its consumers in the schedule; it does not read h)
    y = (h + 1.0) * s
    del h
    got = _run_twice(y)
    (chain,) = FUSER.chains
    assert [op.name for op in chain.ops] == ["MulScalar", "AddScalar", "Mul2"]
    p = plan.plan_of(y)
    assert [n.fdef.name for n in p.nodes] == ["Sum", "MulScalar", "AddScalar", "Mul2"]  # type: ignore[union-attr]
    assert np.array_equal(got, (X * 2.0 + 1.0) * X.sum())


def test_a_node_reading_the_run_ends_it() -> None:
    x = _fake(X)
    h = x * 2.0
    s = h.sum()  # reads h: the run cannot pass it
    y = (h + 1.0) * s
    del h
    got = _run_twice(y)
    assert [[op.name for op in c.ops] for c in FUSER.chains] == [["AddScalar", "Mul2"]]
    assert np.array_equal(got, (X * 2.0 + 1.0) * (X * 2.0).sum())


def test_a_sum_of_terms_between_their_producers_is_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """W4's shape: the penalty's total summed term by term, each term's nodes in between."""
    vs = [_fake(X * k) for k in (1.0, 2.0, 3.0, 4.0)]

    def total(vs: list[gh.Variable]) -> gh.Variable:
        t = vs[0].sum()
        for v in vs[1:]:
            t = t + (v * v).sum()
        return t

    y = total(vs)
    got = _run_twice(y)
    names = [[op.name for op in c.ops] for c in FUSER.chains]
    assert names == [["Add2", "Add2", "Add2"]]
    want = X.sum()
    for k in (2.0, 3.0, 4.0):
        want = want + (X * k * (X * k)).sum()
    assert np.array_equal(got, want)
    with fusion_off():
        unfused = _run_twice(total([_fake(X * k) for k in (1.0, 2.0, 3.0, 4.0)]))
    assert np.array_equal(got, unfused)
    # a run passes over at most MAX_SKIPPED nodes
    monkeypatch.setattr(fusion, "MAX_SKIPPED", 1)
    FUSER.chains.clear()
    _run_twice(total([_fake(X * k) for k in (1.0, 2.0, 3.0, 4.0)]))
    assert FUSER.chains == []


def test_a_compiled_step_fuses_and_matches_the_eager_step() -> None:
    w = _fake(B, need_grad=True)

    def step(x: gh.Variable) -> Any:
        loss = (((x * w) * 2.0 + 1.0) * 0.5).sum()
        (g,) = gh.grad([loss], [w], create_graph=False)
        return loss, g

    c = gh.compile(step)
    xs = _fake(X).d
    outs = [c(xs) for _ in range(3)]
    assert FUSER.chains and FUSER.calls >= 2
    with fusion_off():
        want = step(_fake(X))
    for loss, g in outs:
        assert np.array_equal(np.asarray(loss.d), np.asarray(want[0].d))
        assert np.array_equal(np.asarray(g.d), np.asarray(want[1].d))


def test_numpy_arrays_are_not_fused_without_a_cpu_fuser() -> None:
    x = gh.Variable(X)
    _run_twice((x * 2.0 + 1.0) * 3.0)
    assert FUSER.chains == []


def _load_failing(name: str, mod: Any) -> Any:
    with pytest.warns(PluginLoadWarning, match=name):
        return {r.name: r for r in plugins.load_plugins(extra=[(name, mod)])}[name]


def test_register_fuser_checks_its_arguments() -> None:
    def bad(register: Any) -> None:
        register.fuser("fake", object())

    mod = types.ModuleType("bad_fuser")
    mod.gradhub_add_kernels = gh.hookimpl(bad)  # type: ignore[attr-defined]
    rec = _load_failing("bad_fuser", mod)
    assert rec.status != "loaded"
    assert "register.fuser('fake'): the fuser must have the methods accepts" in str(rec.error)


def test_a_second_fuser_needs_override() -> None:
    def second(register: Any) -> None:
        register.fuser("fake", ByKernels())

    mod = types.ModuleType("second_fuser")
    mod.gradhub_add_kernels = gh.hookimpl(second)  # type: ignore[attr-defined]
    rec = _load_failing("second_fuser", mod)
    assert rec.status != "loaded"
    assert "duplicate fuser for 'fake'" in str(rec.error)
    assert REGISTRY.fusers["fake"] is FUSER


def test_a_fuser_on_an_unknown_device_is_refused() -> None:
    def unknown(register: Any) -> None:
        register.fuser("nowhere", ByKernels())

    mod = types.ModuleType("unknown_fuser")
    mod.gradhub_add_kernels = gh.hookimpl(unknown)  # type: ignore[attr-defined]
    rec = _load_failing("unknown_fuser", mod)
    assert rec.status != "loaded"
    assert "fuser for unknown device 'nowhere'" in str(rec.error)


def test_a_run_on_a_device_of_index_1_runs_with_its_device_current() -> None:
    """Plans of arrays on another index than 0 run by the table, the fused call inside the
    device's ``activate()`` (where the two-index device refuses arrays of another index)."""
    import two_index_device as two

    seen: list[int] = []

    class OnIndex(ByKernels):
        def build(self, chain: fusion.Chain) -> Any:
            run = super().build(chain)

            def fused(xp: Any, *arrays: Any) -> Any:
                seen.append(two.CURRENT[0])
                return run(xp, *arrays)

            return fused

    mod = types.ModuleType("two_index_fuser")
    mod.gradhub_add_devices = two.TwoIndexPlugin.gradhub_add_devices  # type: ignore[attr-defined]
    mod.gradhub_add_kernels = gh.hookimpl(  # type: ignore[attr-defined]
        lambda register: register.fuser("two", OnIndex())
    )
    plugins.load_plugins(extra=[("two_index_fuser", mod)])
    with gh.context_scope(gh.get_extension_context("two:1")):
        x = gh.Variable(X)
    y = (x * 2.0 + 1.0) * 3.0
    y.forward()
    y.forward()
    two.on_index_1(y)
    assert seen == [1, 1]
    assert np.array_equal(np.asarray(y.d), (X * 2.0 + 1.0) * 3.0)


def test_a_step_recorded_on_a_device_records_the_fused_call() -> None:
    """On the stand-in of a device that records its work (tests/recording_device.py), a compiled
    step with a fused run is recorded and replayed: its results are the eager step's."""
    import gradhub.functions as F
    from recording_device import on_rec, recording_device

    fuser = ByKernels()
    mod = types.ModuleType("rec_fuser")
    mod.gradhub_add_kernels = gh.hookimpl(  # type: ignore[attr-defined]
        lambda register: register.fuser("rec", fuser)
    )
    with recording_device():
        plugins.load_plugins(extra=[("rec_fuser", mod)])
        rng = np.random.default_rng(4)
        w = gh.Variable(on_rec(rng.standard_normal((4, 3))))
        b = gh.Variable(on_rec(rng.standard_normal((3,))))

        def step(x: Any) -> Any:
            h = x @ w + b
            loss = F.sum(F.log(h * h + 1.0) * 0.5)
            gw, gb = gh.grad([loss], [w, b], create_graph=False)
            return loss, gw, gb

        c = gh.compile(step)
        xs = [on_rec(rng.standard_normal((5, 4))) for _ in range(5)]
        outs = [[np.array(o.d) for o in c(x)] for x in xs]
        assert c.capture_refused is None, c.capture_refused
        tr = list(c.traces.values())[-1]
        assert tr.captured is not None and tr.plan.fused
        assert [[op.name for op in ch.ops] for ch in fuser.chains] == [
            ["Mul2", "AddScalar", "Log", "MulScalar"]
        ]
        with fusion_off():
            want = [[np.array(o.d) for o in step(gh.Variable(x))] for x in xs]
    for got, exp in zip(outs, want):
        for g, e in zip(got, exp):
            assert np.array_equal(g, e)
