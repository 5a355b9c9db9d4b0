"""Regression tests for the second review of the plugin machinery, registry, CLI and audit.

1. The order in which plugins commit does not depend on entry-point names: plugins that only add
   commit first (gradhub's own distributions first among them), then those that replace something.
2. With ``GRADHUB_DISABLE_PLUGIN_AUTOLOAD=1`` an installed plugin is reported as installed but left
   out by the switch, not as missing.
"""

from __future__ import annotations

import json
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path

import gradhub as gh
import pytest
from gradhub import plugins
from gradhub.cli import main
from gradhub.errors import DeviceError, PluginError, PluginLoadWarning
from gradhub.registry import REGISTRY

ENV = (
    "GRADHUB_DISABLE_PLUGIN_AUTOLOAD",
    "GRADHUB_PLUGINS",
    "GRADHUB_BLOCK_PLUGINS",
    "GRADHUB_STRICT_PLUGINS",
)


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    plugins.reset()
    yield
    plugins.reset()


def _installed(dist: str) -> bool:
    return any(e.distribution == dist for e in plugins._entry_points())


needs_nn_ops = pytest.mark.skipif(
    not _installed("gradhub-nn-ops"), reason="gradhub-nn-ops is not installed"
)
needs_cuda_dist = pytest.mark.skipif(
    not _installed("gradhub-cuda"), reason="gradhub-cuda is not installed"
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


# -- 1. commit order ---------------------------------------------------------------------------

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
    """Reproduced: entry point ``b_phase2`` (sorts before ``nn_ops``) replaced Sinh, so nn_ops
    failed with "duplicate function 'Sinh'", and then b_phase2 was rolled back: 16 functions."""
    alone = _nn_ops_alone(monkeypatch)
    make_dist(site, "fake-phase2", "fake_phase2_mod", PHASE2_RAISES, ep_name="b_phase2")
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
    """Reproduced: the same plugin as ``a_override`` knocked out nn_ops, as ``z_override`` it
    worked."""
    alone = _nn_ops_alone(monkeypatch)
    make_dist(site, "fake-override", "fake_override_mod", SINH_OVERRIDE, ep_name=ep_name)
    monkeypatch.setenv("GRADHUB_PLUGINS", f"nn_ops,{ep_name}")
    assert _load_quietly() == []
    assert record("nn_ops").status == "loaded" and record(ep_name).status == "loaded"
    assert set(REGISTRY.functions) == alone | {"Phase2Cube"}
    sinh = REGISTRY.functions["Sinh"]
    assert sinh.provider.distribution == "fake-override"
    assert sinh.overrides == [("(replaced function)", "fake-override 1.0")]
    x = gh.Variable([0.5])
    import gradhub.functions as F

    assert gh.grad([F.sinh(x)], [x])[0].d[0] == pytest.approx(1.1276259652063807)


@needs_nn_ops
def test_plain_clash_with_nn_ops_fails_the_third_party_plugin(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reproduced: ``b_clash`` registering Tanh without override made nn_ops fail instead."""
    alone = _nn_ops_alone(monkeypatch)
    make_dist(site, "fake-clash", "fake_clash_mod", TANH_CLASH, ep_name="b_clash")
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
    make_dist(site, "fake-phase2", "fake_phase2_mod", PHASE2_RAISES, ep_name="b_phase2")
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


# -- 2. autoload off ---------------------------------------------------------------------------

AUTOLOAD_OFF = "installed, but plugin autoload is off (GRADHUB_DISABLE_PLUGIN_AUTOLOAD=1)"


@needs_cuda_dist
def test_autoload_off_device_error_says_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reproduced: "install the distribution 'gradhub-cuda' (pip install gradhub-cuda)"."""
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    with pytest.raises(DeviceError) as info:
        gh.get_extension_context("cuda")
    msg = str(info.value)
    assert f"the distribution 'gradhub-cuda' is {AUTOLOAD_OFF}" in msg
    assert "GRADHUB_PLUGINS=cuda" in msg and "pip install" not in msg
    assert record("cuda").status == "autoload off"


@needs_nn_ops
def test_autoload_off_function_not_found_says_nn_ops_is_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    import gradhub.functions as F

    with pytest.raises(AttributeError) as info:
        F.relu  # noqa: B018
    assert f"the distribution gradhub-nn-ops, is {AUTOLOAD_OFF}" in str(info.value)


@needs_nn_ops
def test_autoload_off_plugin_loaded_by_hand_keeps_its_distribution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The message's advice works, and the loaded plugin is credited to its distribution."""
    import importlib

    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins.load_plugins(extra=[("nn_ops", importlib.import_module("gradhub_nn_ops.plugin"))])
    assert REGISTRY.functions["ReLU"].provider.distribution == "gradhub-nn-ops"


@needs_cuda_dist
@needs_nn_ops
def test_autoload_off_cli_lists_the_skipped_entry_points(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Reproduced: ``gradhub plugins`` left them out and called cuda "not installed"."""
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert main(["plugins", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    status = {p["name"]: p["status"] for p in data["plugins"]}
    assert status["nn_ops"] == "autoload off" and status["cuda"] == "autoload off"
    cuda = next(d for d in data["devices"] if d["device"] == "cuda")
    assert cuda["reason"].startswith(AUTOLOAD_OFF)
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "autoload off" in out and "not installed" not in out
    assert main(["registry"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "plugin autoload is off" in out and "not installed" not in out
