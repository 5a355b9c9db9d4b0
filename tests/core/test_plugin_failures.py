"""Plugins that fail while loading: a skipped plugin restores what it overrode, ``sys.exit()``
and KeyboardInterrupt in a plugin, a second ``load_plugins()``, strict mode leaving nothing half
registered, hooks without ``@gradhub.hookimpl``, duplicates within one plugin, and the
normalization of distribution names in the plugin selection."""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plugins
from gradhub.device import Device, DeviceType
from gradhub.errors import PluginError, PluginLoadWarning
from gradhub.registry import REGISTRY
from plugin_helpers import make_dist
from plugin_helpers import marked_plugin as plugin

TABLES = (
    "functions",
    "snake",
    "parametric",
    "device_types",
    "device_aliases",
    "device_providers",
    "by_array_type",
)


@pytest.fixture(autouse=True)
def _core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Only the core functions (plus what a test adds): no installed plugin takes part."""
    for var in ("GRADHUB_PLUGINS", "GRADHUB_BLOCK_PLUGINS", "GRADHUB_STRICT_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins.reset()
    yield
    plugins.reset()


def record(name: str) -> plugins.PluginRecord:
    return next(r for r in plugins.plugin_report() if r.name == name)


def snapshot() -> dict[str, Any]:
    """Every registry table, and the rule, kernels and overrides of every function."""
    snap: dict[str, Any] = {t: dict(getattr(REGISTRY, t)) for t in TABLES}
    snap["per_function"] = {
        n: (f.rule, dict(f.kernels), dict(f.kernel_providers), list(f.overrides))
        for n, f in REGISTRY.functions.items()
    }
    return snap


def _rule_for_unknown(register: Any) -> None:
    register.rule("NoSuchFunction", lambda *a, **k: None)


# -- a skipped plugin restores what it replaced -------------------------------------------------


class _NdarrayType(DeviceType):
    """A device that claims numpy arrays (as the CPU does)."""

    kind = "claimsnumpy"
    array_types = (np.ndarray,)

    def get(self, index: int = 0) -> Device:
        return gh.device.CPU


def test_skipped_plugin_restores_the_function_it_overrode() -> None:
    def add_functions(register: Any) -> None:
        register.function("Neg", lambda xp, x: x * 0.0, override=True)
        register.function("Bogus", lambda xp, x: x, snake="sum", override=True)  # Sum's callable
        register.parametric("my_pf", lambda x: x, override=True)

    def add_devices(register: Any) -> None:
        register.device(_NdarrayType())  # takes over numpy arrays from the CPU

    first = plugin(
        "pf_owner",
        gradhub_add_functions=lambda register: register.parametric("my_pf", lambda x: x * 2.0),
    )
    plugins.load_plugins(extra=[("pf_owner", first)])
    before = snapshot()
    neg, total = REGISTRY.functions["Neg"], REGISTRY.functions["Sum"]
    bad = plugin(
        "overrider",
        gradhub_add_functions=add_functions,
        gradhub_add_devices=add_devices,
        gradhub_add_backward_rules=_rule_for_unknown,
    )
    with pytest.warns(PluginLoadWarning, match=r"'overrider'.*NoSuchFunction"):
        plugins.load_plugins(extra=[("overrider", bad)])
    assert record("overrider").status == "failed"
    assert snapshot() == before  # exactly as before, not just "the new entries gone"
    assert REGISTRY.functions["Neg"] is neg and REGISTRY.snake["neg"] is neg
    assert REGISTRY.snake["sum"] is total
    import gradhub.functions as F

    np.testing.assert_allclose(F.neg(gh.Variable([0.5])).d, [-0.5])
    np.testing.assert_allclose(F.sum(gh.Variable([0.5, 1.0])).d, 1.5)
    assert gh.Variable(np.ones(1)).device.name == "cpu"


def test_two_skipped_overriders_of_one_function_restore_the_original() -> None:
    """The second plugin replaced the first's replacement: when both are skipped, the original
    comes back, not the first plugin's version."""
    plugins.load_plugins()
    neg = REGISTRY.functions["Neg"]
    mods = [
        plugin(
            name,
            gradhub_add_functions=lambda register: register.function(
                "Neg", lambda xp, x: x, override=True
            ),
            gradhub_add_backward_rules=_rule_for_unknown,
        )
        for name in ("over_a", "over_b")
    ]
    with pytest.warns(PluginLoadWarning, match="NoSuchFunction"):
        plugins.load_plugins(extra=[("over_a", mods[0]), ("over_b", mods[1])])
    assert REGISTRY.functions["Neg"] is neg and REGISTRY.snake["neg"] is neg


def test_skipped_plugin_from_a_distribution_leaves_the_registry_as_before(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reported case: an installed plugin overrides a function, then fails in phase 2."""
    code = """
    from gradhub import hookimpl
    @hookimpl
    def gradhub_add_functions(register):
        register.function("Neg", lambda xp, x: x, override=True)
    @hookimpl
    def gradhub_add_backward_rules(register):
        register.rule("NoSuchFunction", lambda *a: None)
    """
    make_dist(site, "fake-sin-override", "fake_sin_override_mod", code)
    plugins.load_plugins()
    before = snapshot()
    plugins.reset()
    monkeypatch.setenv("GRADHUB_PLUGINS", "fake-sin-override")
    with pytest.warns(PluginLoadWarning, match=r"fake-sin-override.*NoSuchFunction"):
        plugins.load_plugins()
    after = snapshot()
    # a fresh load creates fresh function objects: compare what they are, not which object
    assert {t: sorted(map(str, after[t])) for t in TABLES} == {
        t: sorted(map(str, before[t])) for t in TABLES
    }
    assert REGISTRY.functions["Neg"].provider.distribution == "gradhub"
    assert REGISTRY.snake["neg"] is REGISTRY.functions["Neg"]


# -- sys.exit() in a plugin ---------------------------------------------------------------------


def test_sys_exit_at_import_is_a_failed_plugin(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_dist(site, "fake-exit", "fake_exit_mod", "import sys\nsys.exit(3)\n")
    make_dist(
        site,
        "fake-fine",
        "fake_fine_mod",
        """
    from gradhub import hookimpl
    @hookimpl
    def gradhub_add_functions(register):
        register.function("StillHere", lambda xp, x: x, differentiable=False)
    """,
    )
    monkeypatch.setenv("GRADHUB_PLUGINS", "fake-exit,fake-fine")
    with pytest.warns(PluginLoadWarning, match=r"'fake-exit'.*SystemExit"):
        plugins.load_plugins()
    assert record("fake-exit").status == "failed"
    assert record("fake-fine").status == "loaded" and "StillHere" in REGISTRY.functions


def test_sys_exit_in_a_hook_is_a_failed_plugin() -> None:
    def exits(register: Any) -> None:
        sys.exit("bye")

    mods = [
        ("exit_p1", plugin("exit_p1", gradhub_add_functions=exits)),
        ("exit_p2", plugin("exit_p2", gradhub_add_backward_rules=exits)),
    ]
    with pytest.warns(PluginLoadWarning, match="SystemExit: bye"):
        plugins.load_plugins(extra=mods)
    assert record("exit_p1").status == "failed" and record("exit_p2").status == "failed"
    assert (gh.Variable([1.0]) + 1.0).d[0] == 2.0


def test_keyboard_interrupt_in_a_plugin_still_interrupts() -> None:
    def interrupted(register: Any) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        plugins.load_plugins(extra=[("ki", plugin("ki", gradhub_add_functions=interrupted))])
    assert not plugins.STATE.loading


# -- load_plugins() a second time ---------------------------------------------------------------


def test_second_load_plugins_without_extras_changes_nothing() -> None:
    first = [(r.name, r.status, r.error) for r in plugins.load_plugins()]
    before = snapshot()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        second = [(r.name, r.status, r.error) for r in plugins.load_plugins()]
    assert caught == []
    # (autoload is off here: the installed entry points are listed as such, not loaded)
    assert second == first and all(s in ("loaded", "autoload off") for _, s, _ in second)
    assert snapshot() == before


# -- strict mode --------------------------------------------------------------------------------


def _raising(register: Any) -> None:
    raise RuntimeError("strict boom")


@pytest.mark.parametrize("phase", [1, 2])
def test_strict_failure_leaves_the_registry_as_before_and_repeats(
    monkeypatch: pytest.MonkeyPatch, phase: int
) -> None:
    monkeypatch.setenv("GRADHUB_STRICT_PLUGINS", "1")
    good = plugin(
        "strict_good",
        gradhub_add_functions=lambda register: register.function(
            "StrictGood", lambda xp, x: x, differentiable=False
        ),
    )
    hook = "gradhub_add_functions" if phase == 1 else "gradhub_add_backward_rules"
    bad = plugin("strict_bad", **{hook: _raising})
    before = snapshot()
    for _ in range(2):  # the second attempt reports the same real error
        with pytest.raises(PluginError, match=r"'strict_bad'.*strict boom"):
            plugins.load_plugins(extra=[("strict_good", good), ("strict_bad", bad)])
        assert snapshot() == before and not plugins.STATE.loaded


def test_strict_failure_then_normal_use_reports_the_real_error(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_dist(
        site,
        "fake-strict-late",
        "fake_strict_late_mod",
        """
    from gradhub import hookimpl
    @hookimpl
    def gradhub_add_functions(register):
        raise RuntimeError("late boom")
    """,
    )
    monkeypatch.setenv("GRADHUB_PLUGINS", "fake-strict-late")
    monkeypatch.setenv("GRADHUB_STRICT_PLUGINS", "1")
    for _ in range(2):
        with pytest.raises(PluginError, match=r"fake-strict-late.*late boom"):
            gh.Variable([1.0]) + 1.0


# -- hooks without @gradhub.hookimpl ------------------------------------------------------------


def test_hook_without_hookimpl_marker_is_a_failure() -> None:
    mod = types.ModuleType("nomark")

    def gradhub_add_functions(register: Any) -> None:
        register.function("NoMarkFn", lambda xp, x: x * 3)

    mod.gradhub_add_functions = gradhub_add_functions  # type: ignore[attr-defined]
    with pytest.warns(
        PluginLoadWarning, match=r"'nomark'.*gradhub_add_functions.*lacks the @gradhub\.hookimpl"
    ):
        plugins.load_plugins(extra=[("nomark", mod)])
    assert record("nomark").status == "failed"
    assert "NoMarkFn" not in REGISTRY.functions


# -- duplicates within one plugin ---------------------------------------------------------------


def _two_functions(override: bool) -> Callable[[Any], None]:
    def add(register: Any) -> None:
        register.function("MyA", lambda xp, x: x + 1.0, snake="my_x", differentiable=False)
        register.function(
            "MyB", lambda xp, x: x * 100.0, snake="my_x", differentiable=False, override=override
        )

    return add


class _KindA(DeviceType):
    kind = "dupkind"


class _KindB(DeviceType):
    kind = "dupkind"


@pytest.mark.parametrize(
    ("hooks", "match"),
    [
        (
            {"gradhub_add_functions": _two_functions(False)},
            "snake_case name 'my_x' is registered twice by the plugin",
        ),
        (
            {
                "gradhub_add_functions": lambda register: [
                    register.parametric("twice", lambda x: x),
                    register.parametric("twice", lambda x: x),
                ]
            },
            "parametric function 'twice' is registered twice by the plugin",
        ),
        (
            {
                "gradhub_add_devices": lambda register: [
                    register.device(_KindA()),
                    register.device(_KindB()),
                ]
            },
            "device 'dupkind' is registered twice by the plugin",
        ),
        (
            {
                "gradhub_add_devices": lambda register: [
                    register.device(_KindA(), aliases=("dupalias",)),
                    register.device(_NdarrayType(), aliases=("dupalias",)),
                ]
            },
            "device 'dupalias' is registered twice by the plugin",
        ),
    ],
)
def test_duplicates_within_one_plugin_are_errors(hooks: dict[str, Any], match: str) -> None:
    with pytest.warns(PluginLoadWarning, match=match):
        plugins.load_plugins(extra=[("dups", plugin("dups", **hooks))])
    assert record("dups").status == "failed"
    assert not {"MyA", "MyB"} & set(REGISTRY.functions) and "my_x" not in REGISTRY.snake
    assert "twice" not in REGISTRY.parametric and "dupkind" not in REGISTRY.device_types


def test_duplicate_snake_name_within_one_plugin_with_override() -> None:
    plugins.load_plugins(
        extra=[("dups", plugin("dups", gradhub_add_functions=_two_functions(True)))]
    )
    assert record("dups").status == "loaded"
    assert REGISTRY.snake["my_x"].name == "MyB"


# -- distribution names in the plugin selection -------------------------------------------------


@pytest.mark.parametrize("spelling", ["Fake_Norm.Dist", "fake-norm-dist", "FAKE__NORM--DIST"])
def test_plugin_selection_normalizes_distribution_names(
    site: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    make_dist(
        site,
        "fake-norm-dist",
        "fake_norm_mod",
        """
    from gradhub import hookimpl
    @hookimpl
    def gradhub_add_functions(register):
        register.function("NormFn", lambda xp, x: x, differentiable=False)
    """,
        ep_name="normep",
    )
    monkeypatch.setenv("GRADHUB_PLUGINS", spelling)
    plugins.load_plugins()
    assert record("normep").status == "loaded" and "NormFn" in REGISTRY.functions
    plugins.reset()
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "0")
    monkeypatch.delenv("GRADHUB_PLUGINS")
    monkeypatch.setenv("GRADHUB_BLOCK_PLUGINS", spelling)
    plugins.load_plugins()
    assert record("normep").status == "blocked" and "NormFn" not in REGISTRY.functions
