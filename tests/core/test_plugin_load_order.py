"""The order in which plugins commit does not depend on entry-point names: plugins that only add
commit first (gradhub's own distributions first among them), then those that replace something;
a clash fails the third-party plugin, not gradhub-nn-ops."""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import gradhub as gh
import pytest
from gradhub import plugins
from gradhub.errors import PluginError, PluginLoadWarning
from gradhub.registry import REGISTRY

pytestmark = pytest.mark.usefixtures("fresh_plugins")


def _installed(dist: str) -> bool:
    return any(e.distribution == dist for e in plugins._entry_points())


needs_nn_ops = pytest.mark.skipif(
    not _installed("gradhub-nn-ops"), reason="gradhub-nn-ops is not installed"
)


def make_dist(root: Path, dist: str, module: str, code: str, ep_name: str) -> None:
    """Write a fake installed distribution ``dist`` whose entry point ``ep_name`` loads
    ``module``."""
    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[gradhub.plugins]\n{ep_name} = {module}\n")
    (root / f"{module}.py").write_text(textwrap.dedent(code))


def record(name: str) -> plugins.PluginRecord:
    return next(r for r in plugins.plugin_report() if r.name == name)


def _load_quietly() -> list[str]:
    """Load the plugins; return the messages of the PluginLoadWarnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plugins.load_plugins()
    return [str(w.message) for w in caught if issubclass(w.category, PluginLoadWarning)]


def _nn_ops_alone(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The function names registered by the core and gradhub-nn-ops alone."""
    monkeypatch.setenv("GRADHUB_PLUGINS", "nn_ops")
    plugins.reset()
    plugins.load_plugins()
    names = set(REGISTRY.functions)
    plugins.reset()
    return names


# -- commit order ---------------------------------------------------------------------------

SINH_OVERRIDE = """
from gradhub import hookimpl

def _fwd(xp, x):
    return xp.sinh(x)

def _bw(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    import gradhub.functions as F
    return [grad_outputs[0] * F.cosh(inputs[0])]

@hookimpl
def gradhub_add_functions(register):
    register.function("Sinh", _fwd, rule=_bw, need_inputs=(0,), need_outputs=(), override=True)
    register.function("Phase2Cube", lambda xp, x: x ** 3)
"""

PHASE2_RAISES = (
    SINH_OVERRIDE
    + """
@hookimpl
def gradhub_add_backward_rules(register):
    raise RuntimeError("broken in phase 2")
"""
)

TANH_CLASH = """
from gradhub import hookimpl

@hookimpl
def gradhub_add_functions(register):
    register.function("Tanh", lambda xp, x: xp.tanh(x))
"""


@needs_nn_ops
def test_override_plugin_failing_in_phase2_sorting_first_leaves_nn_ops_loaded(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Formerly: entry point ``b_phase2`` (sorts before ``nn_ops``) replaced Sinh, so nn_ops
    failed with "duplicate function 'Sinh'", and then b_phase2 was rolled back: 16 functions."""
    alone = _nn_ops_alone(monkeypatch)
    make_dist(site, "review2-phase2", "review2_phase2_mod", PHASE2_RAISES, ep_name="b_phase2")
    monkeypatch.setenv("GRADHUB_PLUGINS", "nn_ops,b_phase2")
    messages = _load_quietly()
    assert record("nn_ops").status == "loaded"
    assert record("b_phase2").status == "failed" and "broken in phase 2" in record("b_phase2").error
    assert len(messages) == 1 and "b_phase2" in messages[0]
    assert set(REGISTRY.functions) == alone  # Phase2Cube undone, nothing of nn_ops lost
    assert REGISTRY.functions["Sinh"].provider.distribution == "gradhub-nn-ops"
    assert REGISTRY.functions["Sinh"].overrides == []


@needs_nn_ops
@pytest.mark.parametrize("ep_name", ["a_override", "z_override"])
def test_working_override_plugin_replaces_whatever_its_entry_point_name(
    site: Path, monkeypatch: pytest.MonkeyPatch, ep_name: str
) -> None:
    """Formerly: the same plugin as ``a_override`` knocked out nn_ops, as ``z_override`` it
    worked."""
    alone = _nn_ops_alone(monkeypatch)
    make_dist(site, "review2-override", "review2_override_mod", SINH_OVERRIDE, ep_name=ep_name)
    monkeypatch.setenv("GRADHUB_PLUGINS", f"nn_ops,{ep_name}")
    assert _load_quietly() == []
    assert record("nn_ops").status == "loaded" and record(ep_name).status == "loaded"
    assert set(REGISTRY.functions) == alone | {"Phase2Cube"}
    sinh = REGISTRY.functions["Sinh"]
    assert sinh.provider.distribution == "review2-override"
    assert sinh.overrides == [("(replaced function)", "review2-override 1.0")]
    x = gh.Variable([0.5])
    import gradhub.functions as F

    assert gh.grad([F.sinh(x)], [x])[0].d[0] == pytest.approx(1.1276259652063807)


@needs_nn_ops
def test_plain_clash_with_nn_ops_fails_the_third_party_plugin(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Formerly: ``b_clash`` registering Tanh without override made nn_ops fail instead."""
    alone = _nn_ops_alone(monkeypatch)
    make_dist(site, "review2-clash", "review2_clash_mod", TANH_CLASH, ep_name="b_clash")
    monkeypatch.setenv("GRADHUB_PLUGINS", "nn_ops,b_clash")
    messages = _load_quietly()
    assert record("nn_ops").status == "loaded"
    assert record("b_clash").status == "failed"
    assert "duplicate function 'Tanh': already registered by gradhub-nn-ops" in (
        record("b_clash").error
    )
    assert len(messages) == 1 and "b_clash" in messages[0]
    assert set(REGISTRY.functions) == alone
    assert REGISTRY.functions["Tanh"].provider.distribution == "gradhub-nn-ops"


@needs_nn_ops
def test_strict_mode_with_a_phase2_failure_of_an_override_plugin(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Strict mode still names the broken plugin and leaves the registry empty."""
    make_dist(site, "review2-phase2", "review2_phase2_mod", PHASE2_RAISES, ep_name="b_phase2")
    monkeypatch.setenv("GRADHUB_PLUGINS", "nn_ops,b_phase2")
    with pytest.raises(PluginError, match=r"plugin 'b_phase2'.*broken in phase 2"):
        plugins.load_plugins(strict=True)
    assert REGISTRY.functions == {} and not plugins.STATE.loaded


def test_two_plain_plugins_clash_the_later_by_name_fails() -> None:
    """Between two third-party plugins that only add, the later one (load order) fails."""
    import types

    def module(name: str) -> types.ModuleType:
        mod = types.ModuleType(name)

        def gradhub_add_functions(register: plugins.FunctionRegistrar) -> None:
            register.function("ClashFn", lambda xp, x: x)

        mod.gradhub_add_functions = gh.hookimpl(gradhub_add_functions)  # type: ignore[attr-defined]
        return mod

    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        plugins.load_plugins(extra=[("first", module("first")), ("second", module("second"))])
    assert record("first").status == "loaded" and record("second").status == "failed"


def test_override_extra_commits_after_a_plain_extra_loaded_later() -> None:
    """Within one load, a replacing plugin commits after a plain one, whatever the order."""
    import types

    def plain(register: plugins.FunctionRegistrar) -> None:
        register.function("OrderFn", lambda xp, x: x + 1)

    def replacing(register: plugins.FunctionRegistrar) -> None:
        register.function("OrderFn", lambda xp, x: x + 2, override=True)

    mods = []
    for name, hook in (("aa_replacing", replacing), ("zz_plain", plain)):
        mod = types.ModuleType(name)
        mod.gradhub_add_functions = gh.hookimpl(hook)  # type: ignore[attr-defined]
        mods.append((name, mod))
    plugins.load_plugins(extra=mods)
    assert record("aa_replacing").status == "loaded" and record("zz_plain").status == "loaded"
    assert REGISTRY.functions["OrderFn"].provider.module == "aa_replacing"
