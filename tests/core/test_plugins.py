"""Plugin loading with fake distributions built in tmp_path.

Each fake distribution is a ``*.dist-info`` folder with an ``entry_points.txt`` naming a module in
the group ``gradhub.plugins``, put on ``sys.path`` so that importlib.metadata discovers it.
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import gradhub as gh
import numpy as np
import pytest
from child_helpers import run_python
from gradhub import plugins
from gradhub.errors import PluginError, PluginLoadWarning, RegistrationError
from gradhub.registry import REGISTRY

GOOD = """
import gradhub
from gradhub import hookimpl

def _fwd(xp, x):
    return x * x

def _bw(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    return [grad_outputs[0] * inputs[0] * 2.0]

@hookimpl
def gradhub_add_functions(register):
    register.function("{name}", _fwd, rule=_bw, need_inputs=(0,), need_outputs=())
"""


@pytest.fixture(autouse=True)
def _fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in (
        "GRADHUB_DISABLE_PLUGIN_AUTOLOAD",
        "GRADHUB_PLUGINS",
        "GRADHUB_BLOCK_PLUGINS",
        "GRADHUB_STRICT_PLUGINS",
    ):
        monkeypatch.delenv(var, raising=False)
    plugins.reset()
    yield
    plugins.reset()


def make_dist(
    root: Path, dist: str, module: str, code: str, ep_name: str | None = None, version: str = "1.0"
) -> None:
    """Write a fake installed distribution ``dist`` whose entry point loads ``module``."""
    root.mkdir(parents=True, exist_ok=True)
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[gradhub.plugins]\n{ep_name or dist} = {module}\n")
    (root / f"{module}.py").write_text(textwrap.dedent(code))


def record(name: str) -> plugins.PluginRecord:
    return next(r for r in plugins.plugin_report() if r.name == name)


def test_good_plugin_is_discovered_and_listed(site: Path) -> None:
    make_dist(site, "fake-good", "fake_good_mod", GOOD.format(name="FakeSquare"), version="2.5")
    import gradhub.functions as F

    x = gh.Variable([3.0])
    y = F.fake_square(x)
    y.backward()
    assert x.g[0] == pytest.approx(6.0)
    row = next(r for r in gh.registry_table() if r["function"] == "FakeSquare")
    assert (row["provider"], row["version"], row["rule"]) == ("fake-good", "2.5", "yes")
    assert record("fake-good").status == "loaded"


def test_entry_point_scan_agrees_with_importlib_metadata(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast scan finds what importlib.metadata finds: dist-info and egg-info folders,
    distributions without the group skipped, the first distribution of a name winning."""
    import importlib.metadata

    make_dist(site, "fake-scan-a", "fake_scan_a", GOOD.format(name="FakeScanA"))
    egg = site / "fake_scan_egg.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: fake-scan-egg\nVersion: 0.3\n")
    (egg / "entry_points.txt").write_text(
        "[console_scripts]\nx = y:z\n\n[gradhub.plugins]\negg = fake_scan_egg_mod\n"
    )
    other = site / "fake_scan_other-1.0.dist-info"
    other.mkdir()
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-scan-other\n")
    (other / "entry_points.txt").write_text("[console_scripts]\nother = a:b\n")
    later = tmp_path / "later"  # the same distribution again, later on sys.path: shadowed
    make_dist(
        later,
        "fake-scan-a",
        "fake_scan_a_shadowed",
        GOOD.format(name="FakeScanB"),
        ep_name="shadowed",
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(sys, "path", [*sys.path, str(later)])

    ours = {(e.name, e.value, e.distribution) for e in plugins._entry_points()}
    theirs = {
        (e.name, e.value, e.dist.name if e.dist else "")
        for e in importlib.metadata.entry_points(group=plugins.ENTRY_POINT_GROUP)
    }
    assert ours == theirs
    assert ("egg", "fake_scan_egg_mod", "fake-scan-egg") in ours
    assert not any(e[0] == "shadowed" for e in ours)


def test_entry_points_file_with_invalid_utf8_elsewhere_still_loads(site: Path) -> None:
    """A stray non-UTF-8 byte in the metadata of a distribution does not stop loading."""
    make_dist(site, "fake-bytes", "fake_bytes_mod", GOOD.format(name="FakeBytes"))
    ep = next(site.glob("fake_bytes-*.dist-info")) / "entry_points.txt"
    ep.write_bytes(b"[console_scripts]\nx = caf\xe9:main\n\n" + ep.read_bytes())
    meta = ep.parent / "METADATA"
    meta.write_bytes(meta.read_bytes() + b"Author: Jos\xe9\n")  # latin-1, not UTF-8
    import gradhub.functions as F

    x = gh.Variable([2.0])
    F.fake_bytes(x).backward()
    assert x.g[0] == pytest.approx(4.0)
    assert record("fake-bytes").status == "loaded"


def test_import_error_is_reported_once_and_skipped(site: Path) -> None:
    make_dist(site, "fake-broken", "fake_broken_mod", "raise ImportError('no such dependency')")
    with pytest.warns(PluginLoadWarning, match=r"fake-broken.*no such dependency") as rec:
        plugins.load_plugins()
    assert len([w for w in rec if "fake-broken" in str(w.message)]) == 1
    r = record("fake-broken")
    assert r.status == "failed" and "ImportError" in r.error and r.distribution == "fake-broken"
    # gradhub keeps working, and later uses do not warn again
    assert (gh.Variable([1.0]) + 1.0).d[0] == 2.0
    plugins.plugin_report()


def test_bad_hook_signature_is_reported(site: Path) -> None:
    code = """
    from gradhub import hookimpl
    @hookimpl
    def gradhub_add_functions(registry, extra):
        pass
    """
    make_dist(site, "fake-badsig", "fake_badsig_mod", code)
    with pytest.warns(PluginLoadWarning, match="fake-badsig"):
        plugins.load_plugins()
    assert "registry" in record("fake-badsig").error


def test_unknown_hook_name_is_reported(site: Path) -> None:
    code = """
    from gradhub import hookimpl
    @hookimpl
    def gradhub_add_everything(register):
        pass
    """
    make_dist(site, "fake-unknown", "fake_unknown_mod", code)
    with pytest.warns(PluginLoadWarning, match="gradhub_add_everything"):
        plugins.load_plugins()


def test_raising_hook_leaves_nothing_registered(site: Path) -> None:
    code = (
        GOOD.format(name="HalfDone")
        + """
@hookimpl
def gradhub_add_devices(register):
    raise RuntimeError("device probe exploded")
"""
    )
    make_dist(site, "fake-raising", "fake_raising_mod", code)
    with pytest.warns(PluginLoadWarning, match="device probe exploded"):
        plugins.load_plugins()
    assert "HalfDone" not in REGISTRY.functions


def test_failure_in_second_phase_rolls_back_the_first(site: Path) -> None:
    code = (
        GOOD.format(name="RolledBack")
        + """
@hookimpl
def gradhub_add_backward_rules(register):
    register.rule("NoSuchFunction", lambda *a, **k: None)
"""
    )
    make_dist(site, "fake-phase2", "fake_phase2_mod", code)
    with pytest.warns(PluginLoadWarning, match="NoSuchFunction"):
        plugins.load_plugins()
    assert "RolledBack" not in REGISTRY.functions
    assert "rolled_back" not in REGISTRY.snake


def test_duplicate_function_names_are_an_error(site: Path) -> None:
    make_dist(site, "fake-a", "fake_a_mod", GOOD.format(name="Twin"))
    make_dist(site, "fake-b", "fake_b_mod", GOOD.format(name="Twin"))
    with pytest.warns(PluginLoadWarning, match=r"fake-b.*duplicate function 'Twin'.*fake-a"):
        plugins.load_plugins()
    assert REGISTRY.functions["Twin"].provider.distribution == "fake-a"
    assert record("fake-b").status == "failed"


def test_duplicate_of_a_core_function_is_an_error_unless_override(site: Path) -> None:
    make_dist(site, "fake-dup", "fake_dup_mod", GOOD.format(name="Neg"))
    with pytest.warns(PluginLoadWarning, match=r"duplicate function 'Neg'.*gradhub"):
        plugins.load_plugins()
    assert REGISTRY.functions["Neg"].provider.distribution == "gradhub"


def test_explicit_override_replaces_and_is_recorded(site: Path) -> None:
    code = """
    from gradhub import hookimpl
    def _bw(grad_outputs, inputs, input_shapes, outputs, output_shapes):
        return [grad_outputs[0] * -1.0]
    @hookimpl
    def gradhub_add_backward_rules(register):
        register.rule("Neg", _bw, need_inputs=(), need_outputs=(), override=True)
    """
    make_dist(site, "fake-override", "fake_override_mod", code)
    plugins.load_plugins()
    row = next(r for r in gh.registry_table() if r["function"] == "Neg")
    assert row["rule_provider"] == "fake-override 1.0"
    assert row["overrides"] == ["gradhub 0.1.0 -> fake-override 1.0"]


def test_rule_for_core_function_without_override_is_an_error(site: Path) -> None:
    code = """
    from gradhub import hookimpl
    @hookimpl
    def gradhub_add_backward_rules(register):
        register.rule("Neg", lambda *a: None)
    """
    make_dist(site, "fake-norule", "fake_norule_mod", code)
    with pytest.warns(PluginLoadWarning, match=r"already has one from gradhub"):
        plugins.load_plugins()


def test_autoload_off_loads_only_the_core(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_dist(site, "fake-auto", "fake_auto_mod", GOOD.format(name="AutoLoaded"))
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins.load_plugins()
    assert "AutoLoaded" not in REGISTRY.functions
    # the entry points left out are still listed, so that messages can say they are installed
    statuses = {r.name: r.status for r in plugins.plugin_report()}
    assert statuses["gradhub"] == "loaded" and statuses["fake-auto"] == "autoload off"
    assert {s for n, s in statuses.items() if n != "gradhub"} == {"autoload off"}
    assert "Add2" in REGISTRY.functions


def test_autoload_off_with_allow_list(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_dist(site, "fake-allowed", "fake_allowed_mod", GOOD.format(name="Allowed"))
    make_dist(site, "fake-other", "fake_other_mod", GOOD.format(name="Other"))
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("GRADHUB_PLUGINS", "fake-allowed")
    plugins.load_plugins()
    assert "Allowed" in REGISTRY.functions and "Other" not in REGISTRY.functions


def test_allow_list(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_dist(site, "fake-x", "fake_x_mod", GOOD.format(name="OnlyX"), ep_name="xplug")
    make_dist(site, "fake-y", "fake_y_mod", GOOD.format(name="OnlyY"))
    monkeypatch.setenv("GRADHUB_PLUGINS", "xplug")  # the entry-point name works too
    plugins.load_plugins()
    assert "OnlyX" in REGISTRY.functions and "OnlyY" not in REGISTRY.functions
    assert record("fake-y").status == "not selected"


def test_block_list(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_dist(site, "fake-blocked", "fake_blocked_mod", GOOD.format(name="Blocked"))
    monkeypatch.setenv("GRADHUB_BLOCK_PLUGINS", "fake-blocked")
    plugins.load_plugins()
    assert "Blocked" not in REGISTRY.functions
    assert record("fake-blocked").status == "blocked"


def test_strict_mode_raises(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_dist(site, "fake-strict", "fake_strict_mod", "raise ImportError('boom')")
    monkeypatch.setenv("GRADHUB_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match=r"fake-strict.*boom"):
        plugins.load_plugins()


DEVICE = """
import numpy as np
import gradhub
from gradhub import hookimpl
from gradhub.device import Device, DeviceType

class FakeArray(np.ndarray):
    pass

class FakeDevice(Device):
    def asarray(self, data, dtype=None):
        return np.asarray(data, dtype=dtype).view(FakeArray)

class FakeType(DeviceType):
    kind = "fakedev"
    array_types = (FakeArray,)
    def __init__(self):
        self.dev = FakeDevice("fakedev", np, 0)
    def get(self, index=0):
        return self.dev

class BrokenType(DeviceType):
    kind = "brokendev"
    def availability(self):
        return False, "the fake driver is too old"

def _fast_neg(xp, x):
    return (-np.asarray(x)).view(FakeArray) * 1.0

@hookimpl
def gradhub_add_devices(register):
    register.device(FakeType(), aliases=("fakealias",))
    register.device(BrokenType())

@hookimpl
def gradhub_add_kernels(register):
    if register.has_function("Neg"):
        register.kernel("Neg", "fakedev", _fast_neg)
"""


def test_device_plugin_adds_device_aliases_and_kernels(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_dist(site, "fake-device", "fake_device_mod", DEVICE)
    ctx = gh.get_extension_context("fakealias")
    assert ctx.backend == "fakedev"
    with gh.context_scope(ctx):
        x = gh.Variable([1.0, 2.0])
    assert x.device.name == "fakedev:0"
    y = -x
    assert type(y.d).__name__ == "FakeArray"
    assert REGISTRY.functions["Neg"].kernel_providers["fakedev"].distribution == "fake-device"
    with pytest.raises(gh.DeviceError, match="too old"):
        gh.get_extension_context("brokendev")
    gh.show_registry()
    assert "brokendev: the fake driver is too old" in capsys.readouterr().out
    cpu = gh.Variable(np.ones(2))
    with pytest.raises(gh.DeviceError, match=r"different devices.*fakedev:0.*cpu"):
        _ = x + cpu


def test_kernel_for_unknown_function_is_an_error(site: Path) -> None:
    code = """
    from gradhub import hookimpl
    @hookimpl
    def gradhub_add_kernels(register):
        register.kernel("NoSuchFunction", "cpu", lambda xp, x: x)
    """
    make_dist(site, "fake-kernel", "fake_kernel_mod", code)
    with pytest.warns(PluginLoadWarning, match="unknown function 'NoSuchFunction'"):
        plugins.load_plugins()


def test_in_process_plugin_via_extra() -> None:
    import types

    mod = types.ModuleType("inproc")
    exec(GOOD.format(name="InProc"), mod.__dict__)
    plugins.load_plugins(extra=[("inproc", mod)])
    assert "InProc" in REGISTRY.functions


def test_import_loads_nothing() -> None:
    code = (
        "import sys, gradhub, gradhub.functions, gradhub.parametric_functions\n"
        "from gradhub.plugins import STATE\n"
        "print(STATE.loaded, any(m.startswith('gradhub_') for m in sys.modules), "
        "'pluggy' in sys.modules and STATE.records == [])\n"
    )
    assert run_python(code).split() == ["False", "False", "True"]


@pytest.mark.nn_ops
def test_first_call_imports_only_what_it_needs() -> None:
    """W6 (import + load + first call) must not pay for modules the first call does not use:
    ``numpy.random`` alone costs about 10 ms. Plugin discovery imports the metadata backport
    (``importlib_metadata``, with ``email``): it finds every distribution any finder serves.

    gradhub-cuda is left out: where CuPy is installed, loading it imports CuPy, which imports
    some of these (seen on a GPU machine; docs/cuda.md)."""
    code = (
        "import sys, gradhub as gh, gradhub.functions as F\n"
        "F.sin(gh.Variable([1.0]))\n"
        "heavy = ('numpy.random', 'importlib.metadata', 'rich', 'dataclasses')\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    env = {**os.environ, "GRADHUB_BLOCK_PLUGINS": "gradhub-cuda"}
    assert run_python(code, env).strip() == "[]"


def test_calls_never_go_through_pluggy_after_loading() -> None:
    plugins.load_plugins()
    seen: list[str] = []

    def profiler(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "call" and (
            "pluggy" in frame.f_code.co_filename or "importlib" in frame.f_code.co_filename
        ):
            seen.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    def step() -> gh.Variable:
        y = ((x * x + 1.0) / 2.0).sum()
        (g,) = gh.grad([y], [x])
        y.backward()
        return g

    x = gh.Variable([1.0, 2.0])
    step()  # first calls look functions up (once)
    sys.setprofile(profiler)
    try:
        g = step()
    finally:
        sys.setprofile(None)
    assert seen == []
    np.testing.assert_allclose(g.d, [1.0, 2.0])


def test_register_outside_plugins_names_both_providers() -> None:
    def bw(grad_outputs, inputs, input_shapes, outputs, output_shapes):  # type: ignore[no-untyped-def]
        return [-grad_outputs[0]]

    with pytest.raises(RegistrationError, match=r"gradhub 0\.1\.0.*test_plugins.*override=True"):
        gh.register("Neg", bw)
    gh.register("Neg", bw, override=True)
    row = next(r for r in gh.registry_table() if r["function"] == "Neg")
    assert row["overrides"] == ["gradhub 0.1.0 -> module tests.test_plugins"] or row["overrides"][
        0
    ].startswith("gradhub 0.1.0 -> module ")


def test_extra_plugins_after_loading_are_added_incrementally() -> None:
    import types

    plugins.load_plugins()
    before = {r.name: r.status for r in plugins.plugin_report()}
    mod = types.ModuleType("late")
    exec(GOOD.format(name="LateComer"), mod.__dict__)
    plugins.load_plugins(extra=[("late", mod)])  # no duplicate warnings for loaded plugins
    after = {r.name: r.status for r in plugins.plugin_report()}
    assert after == {**before, "late": "loaded"}
    assert "LateComer" in REGISTRY.functions and "Add2" in REGISTRY.functions
