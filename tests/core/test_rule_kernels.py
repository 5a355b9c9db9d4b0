"""Rule kernels: array-level first-order rules keyed by (function, device kind).

A plugin registers them with ``register.rule_kernel`` in ``gradhub_add_kernels``. First-order
backward (the engine's array path, and the backward schedules of plans) runs the rule kernel of the
node's device in place of the rule's ``fast_backward``; double backward keeps differentiating the
rule. Here in-process plugins register recording rule kernels for the core functions ``Neg`` (a
one-input formula) and ``Mul2`` (a two-input array rule) on the CPU and on a fake second device
whose arrays are a numpy subclass. Only the core functions are loaded.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from fake_device import FakeArray, FakeType
from gradhub import plugins
from gradhub.audit import check_function
from gradhub.errors import PluginError, PluginLoadWarning, RegistrationError
from gradhub.registry import REGISTRY, device_rule, registry_table, rule_kernels

#: a plugin adding the fake device, and recording rule kernels for Neg and Mul2 on KIND
PLUGIN = """
import gradhub
from gradhub.registry import one_input_fast

CALLS = []
KIND = {kind!r}
SCALE = {scale!r}

def _neg(xp, gy, x, y):
    CALLS.append(("Neg", type(gy).__name__))
    return xp.negative(gy) * SCALE

def _mul2(xp, gy, x, xs, y, ys, need_grads):
    CALLS.append(("Mul2", need_grads))
    g = gy[0]
    a, b = x
    return [g * b * SCALE if need_grads[0] else None, g * a * SCALE if need_grads[1] else None]

@gradhub.hookimpl
def gradhub_add_kernels(register):
    register.rule_kernel("Neg", KIND, one_input_fast(_neg))
    register.rule_kernel("Mul2", KIND, _mul2)
"""


def _plugin(name: str, kind: str = "cpu", scale: float = 1.0, body: str = PLUGIN) -> Any:
    mod = types.ModuleType(name)
    exec(body.format(kind=kind, scale=scale), mod.__dict__)
    return mod


def _add_fake(register: Any) -> None:
    register.device(FakeType())


@pytest.fixture(autouse=True)
def _core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    monkeypatch.delenv("GRADHUB_STRICT_PLUGINS", raising=False)
    dev = types.ModuleType("fake_device_plugin")
    dev.gradhub_add_devices = gh.hookimpl(_add_fake)  # type: ignore[attr-defined]
    plugins.reset()
    plugins.load_plugins(extra=[("fake_device", dev)])
    yield
    plugins.reset()


def _load(name: str, mod: Any) -> Any:
    rec = {r.name: r for r in plugins.load_plugins(extra=[(name, mod)])}[name]
    assert rec.status == "loaded", rec.error
    return rec


def _graph(data: Any, on: Any = None) -> tuple[gh.Variable, gh.Variable, gh.Variable]:
    """``y = sum(-(a * b))`` with a, b on the device ``on`` (None: the CPU)."""
    ra, rb = (np.asarray(d, dtype=np.float64) for d in data)
    if on is None:
        a, b = gh.Variable(ra, need_grad=True), gh.Variable(rb, need_grad=True)
    else:
        with gh.context_scope(on):
            a, b = gh.Variable(ra, need_grad=True), gh.Variable(rb, need_grad=True)
    return a, b, (-(a * b)).sum()


DATA = ([1.0, -2.0, 3.0], [0.5, 4.0, -1.5])


def test_first_order_backward_runs_the_devices_rule_kernels() -> None:
    mod = _plugin("rk_cpu")
    rec = _load("rk_cpu", mod)
    assert rec.added["rule_kernels"] == 2
    a, b, y = _graph(DATA)
    ga, gb = gh.grad([y], [a, b], create_graph=False)
    assert mod.CALLS == [("Neg", "ndarray"), ("Mul2", (True, True))]
    np.testing.assert_array_equal(ga.d, -np.asarray(DATA[1]))
    np.testing.assert_array_equal(gb.d, -np.asarray(DATA[0]))
    # backward() too, and need_grads says which inputs need a gradient
    mod.CALLS.clear()
    a, b, y = _graph(DATA)
    b.need_grad = False
    y.backward()
    assert mod.CALLS == [("Neg", "ndarray"), ("Mul2", (True, False))]
    np.testing.assert_array_equal(a.g, -np.asarray(DATA[1]))


def test_the_rule_kernels_numbers_are_the_ones_used() -> None:
    """A rule kernel that scales its result by 3 (a wrong one): first order shows it (so the
    kernel really ran), double backward does not (it differentiates the rule)."""
    mod = _plugin("rk_scaled", scale=3.0)
    _load("rk_scaled", mod)
    a, b, y = _graph(DATA)
    (ga,) = gh.grad([y], [a], create_graph=False)
    np.testing.assert_array_equal(ga.d, -3.0 * 3.0 * np.asarray(DATA[1]))
    mod.CALLS.clear()
    a, b, y = _graph(DATA)
    (ga2,) = gh.grad([y], [a], create_graph=True)
    assert mod.CALLS == []
    np.testing.assert_array_equal(ga2.d, -np.asarray(DATA[1]))
    # d/db sum(-b) = -1, differentiating the graph the rules recorded
    (gab,) = gh.grad([ga2.sum()], [b], create_graph=True)
    np.testing.assert_array_equal(gab.d, [-1.0, -1.0, -1.0])
    assert mod.CALLS == []


def test_nodes_on_other_devices_keep_the_rule() -> None:
    mod = _plugin("rk_fake", kind="fake")
    _load("rk_fake", mod)
    a, b, y = _graph(DATA)  # on the CPU: the rule's own fast_backward
    ga, gb = gh.grad([y], [a, b], create_graph=False)
    assert mod.CALLS == []
    a2, b2, y2 = _graph(DATA, on=gh.get_extension_context("fake"))
    ga2, gb2 = gh.grad([y2], [a2, b2], create_graph=False)
    assert mod.CALLS == [("Neg", "FakeArray"), ("Mul2", (True, True))]
    assert type(ga2.d) is FakeArray
    np.testing.assert_array_equal(np.asarray(ga2.d), ga.d)
    np.testing.assert_array_equal(np.asarray(gb2.d), gb.d)
    rule = REGISTRY.get("Neg").rule
    assert device_rule(rule, "fake") is rule.devices["fake"]  # type: ignore[index]
    assert device_rule(rule, "cpu") is rule
    # the engine's direct one-input path never looks at the device: a rule with rule kernels
    # leaves it (its own fast_backward still computes the formula), its device kernel keeps one
    assert rule.fast1 is None and rule.fast is not None  # type: ignore[union-attr]
    assert rule.devices["fake"].fast1 is not None  # type: ignore[index]


@pytest.mark.parametrize("codegen", [True, False])
def test_plans_backward_schedules_run_the_rule_kernels(
    codegen: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A static graph (``forward()`` then ``backward()`` again and again) runs its planned
    backward schedule, generated code or table, through the rule kernels as the engine does."""
    import gradhub.plan as plan

    monkeypatch.setattr(plan, "_codegen", codegen)
    mod = _plugin("rk_plan")
    _load("rk_plan", mod)
    a, b, y = _graph(DATA)
    for step in range(3):
        a.d = np.asarray(DATA[0]) * (step + 1)
        y.forward()
        a.cleargrad()
        b.cleargrad()
        mod.CALLS.clear()
        y.backward()
        assert plan.plan_of(y) is not None
        assert mod.CALLS == [("Neg", "ndarray"), ("Mul2", (True, True))]
        np.testing.assert_array_equal(a.g, -np.asarray(DATA[1]))
        np.testing.assert_array_equal(b.g, -np.asarray(DATA[0]) * (step + 1))


def test_a_rule_kernel_registered_after_planning_is_used() -> None:
    """Loading a plugin changes the registry's generation: a plan recorded before re-plans and
    its backward schedule runs the new rule kernel."""
    import gradhub.plan as plan

    a, b, y = _graph(DATA)
    y.forward()
    y.backward()
    first = plan.plan_of(y)
    assert first is not None
    mod = _plugin("rk_late")
    _load("rk_late", mod)
    a.cleargrad()
    b.cleargrad()
    y.forward()
    y.backward()
    assert plan.plan_of(y) is not first
    assert mod.CALLS == [("Neg", "ndarray"), ("Mul2", (True, True))]
    np.testing.assert_array_equal(a.g, -np.asarray(DATA[1]))


def test_the_registry_and_the_audit_report_them() -> None:
    mod = _plugin("rk_report", kind="fake")
    _load("rk_report", mod)
    rows = {r["function"]: r for r in registry_table()}
    assert rows["Neg"]["rule_kernels"] == ["fake"]
    assert rows["Mul2"]["rule_kernels"] == ["fake"]
    assert rows["Add2"]["rule_kernels"] == []
    assert rule_kernels(REGISTRY.get("Neg")) == {
        "fake": REGISTRY.get("Neg").rule.devices["fake"].provider
    }  # type: ignore[union-attr]
    # the audit's first order on the device runs the rule kernel (against the rule)
    mod.CALLS.clear()
    assert check_function(REGISTRY.get("Neg"), "fake", order=2, record=False).ok
    assert ("Neg", "FakeArray") in mod.CALLS


def test_the_audit_finds_a_wrong_rule_kernel() -> None:
    _load("rk_wrong", _plugin("rk_wrong", kind="fake", scale=2.0))
    bad = check_function(REGISTRY.get("Mul2"), "fake", order=1, record=False)
    assert bad.failed == 1, bad
    assert check_function(REGISTRY.get("Mul2"), "cpu", order=1, record=False).ok


def test_a_second_providers_rule_kernel_needs_override() -> None:
    _load("rk_first", _plugin("rk_first"))
    with pytest.warns(PluginLoadWarning, match=r"duplicate rule kernel for 'Neg' on 'cpu'"):
        rec = {
            r.name: r for r in plugins.load_plugins(extra=[("rk_second", _plugin("rk_second"))])
        }["rk_second"]
    assert rec.status == "failed"
    assert "override=True" in rec.error
    # the failed plugin left the first one's kernels in place
    assert REGISTRY.get("Neg").rule.devices["cpu"].provider.module == "rk_first"  # type: ignore[union-attr]
    body = PLUGIN.replace(
        "KIND, one_input_fast(_neg))", "KIND, one_input_fast(_neg), override=True)"
    )
    body = body.replace("KIND, _mul2)", "KIND, _mul2, override=True)")
    mod = _plugin("rk_third", body=body)
    _load("rk_third", mod)
    fdef = REGISTRY.get("Neg")
    assert fdef.rule.devices["cpu"].provider.module == "rk_third"  # type: ignore[union-attr]
    assert any("rule kernel on cpu" in old for old, _ in fdef.overrides)
    a, _b, y = _graph(DATA)
    gh.grad([y], [a], create_graph=False)
    assert [c[0] for c in mod.CALLS] == ["Neg", "Mul2"]


def test_a_rule_registered_later_runs_without_the_old_rule_kernel() -> None:
    mod = _plugin("rk_old")
    _load("rk_old", mod)
    replacing = types.ModuleType("rk_rule")

    def neg_rule(grad_outputs: Any, inputs: Any, in_shapes: Any, outs: Any, out_shapes: Any) -> Any:
        return [grad_outputs[0] * -2.0]

    def rules(register: Any) -> None:
        register.rule("Neg", neg_rule, need_inputs=(), need_outputs=(), override=True)

    replacing.gradhub_add_backward_rules = gh.hookimpl(rules)  # type: ignore[attr-defined]
    _load("rk_rule", replacing)
    assert REGISTRY.get("Neg").rule.devices is None  # type: ignore[union-attr]
    x = gh.Variable(np.asarray([1.0, 2.0]), need_grad=True)
    (gx,) = gh.grad([(-x).sum()], [x], create_graph=False)
    np.testing.assert_array_equal(gx.d, [-2.0, -2.0])
    assert mod.CALLS == []


BAD = """
import gradhub

@gradhub.hookimpl
def gradhub_add_kernels(register):
    register.rule_kernel({args})
"""


def _fast(xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any) -> Any:
    return [gy[0]]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("'NoSuch', 'cpu', FAST", r"rule kernel for unknown function 'NoSuch'"),
        ("'Neg', 'gpu9', FAST", r"rule kernel on unknown device 'gpu9'"),
        ("'Sign', 'cpu', FAST", r"Sign is non-differentiable"),
        ("'Neg', 'cpu', lambda gy, x: gy", r"must take \(xp, grad_outputs.*takes 2 positional"),
        ("'Neg', 'cpu', 42", r"the rule kernel must be callable"),
    ],
)
def test_bad_rule_kernels_fail_the_plugin(args: str, message: str) -> None:
    if REGISTRY.functions.get("Sign") is None and "Sign" in args:
        pytest.skip("no core function Sign")
    mod = types.ModuleType("rk_bad")
    mod.FAST = _fast  # type: ignore[attr-defined]
    exec(BAD.format(args=args), mod.__dict__)
    before = REGISTRY.get("Neg").rule.devices  # type: ignore[union-attr]
    with pytest.raises(PluginError, match=message):
        plugins.load_plugins(strict=True, extra=[("rk_bad", mod)])
    assert REGISTRY.get("Neg").rule.devices is before  # type: ignore[union-attr]


def test_a_function_without_a_rule_takes_no_rule_kernel() -> None:
    fdef = REGISTRY.get("Neg")
    from gradhub.registry import Provider, check_rule_kernel

    saved = fdef.rule
    fdef.rule = None
    try:
        with pytest.raises(RegistrationError, match=r"Neg has no backward rule"):
            check_rule_kernel(fdef, "cpu", _fast, Provider("demo"), override=False)
    finally:
        fdef.rule = saved


def test_a_failing_plugin_leaves_no_rule_kernel() -> None:
    """A plugin whose hook raises after registering rule kernels leaves none behind."""
    body = PLUGIN + "\n    raise RuntimeError('after the rule kernels')\n"
    with pytest.warns(PluginLoadWarning, match="after the rule kernels"):
        plugins.load_plugins(extra=[("rk_fails", _plugin("rk_fails", body=body))])
    assert REGISTRY.get("Neg").rule.devices is None  # type: ignore[union-attr]
    assert REGISTRY.get("Mul2").rule.devices is None  # type: ignore[union-attr]
    assert REGISTRY.get("Neg").rule.fast1 is not None  # type: ignore[union-attr]
