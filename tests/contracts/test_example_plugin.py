"""The example plugins of the documentation, installed and used as a user would.

* ``docs/examples/gradhub-mish`` (an op plugin) is pip-installed into a fresh virtual environment
  that sees gradhub, its dependencies and the function library through a ``.pth`` file; it must be
  discovered through its entry point (``gradhub plugins``), listed with its distribution
  (``gradhub registry``), pass ``gradhub audit`` and its own tests, and disappear when uninstalled.
* ``docs/examples/gradhub-broken`` (two broken plugins) must leave gradhub working, be reported
  with its distribution name, raise in strict mode and be skipped when blocked.
* ``docs/examples/gradhub-toy-device`` (a device plugin) is loaded in-process: it exercises the
  hooks ``gradhub_add_devices`` and ``gradhub_add_kernels``; a small rule plugin exercises
  ``gradhub_add_backward_rules``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import site
import subprocess
import types
import venv
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gradhub
import gradhub.plugins
import numpy as np
import pytest
from gradhub import PluginLoadWarning, Sample
from gradhub.audit import check_function
from gradhub.errors import BackwardRuleError, DeviceError
from gradhub.ops import call
from gradhub.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"
TIMEOUT = 120


# -- a fresh virtual environment that sees this one ---------------------------------------------


def _wheel_tools_here() -> bool:
    """Whether this environment can build the examples without fetching anything: setuptools
    >= 77 reads their SPDX ``license = "MIT"`` and builds wheels by itself."""
    if importlib.util.find_spec("setuptools") is None:
        return False
    version = importlib.metadata.version("setuptools").split(".")
    try:
        return (int(version[0]), int(version[1])) >= (77, 0)
    except (ValueError, IndexError):
        return False


def _outer_paths() -> tuple[list[str], list[str]]:
    """(site directories whose .pth files must run, plain paths) that provide gradhub here."""
    sites = [p for p in site.getsitepackages() if os.path.isdir(p)]
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        sites.append(site.getusersitepackages())
    plain = []
    for module in ("gradhub", "gradhub_nn_ops", "numpy", "pluggy"):
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.origin:
            parent = str(Path(spec.origin).resolve().parents[1])
            if parent not in sites and parent not in plain:
                plain.append(parent)
    return sites, plain


class Venv:
    """A virtual environment without pip of its own, seeing this interpreter's packages."""

    def __init__(self, root: Path) -> None:
        venv.create(root, with_pip=False, symlinks=os.name != "nt", clear=True)
        self.root = root
        bindir = "Scripts" if os.name == "nt" else "bin"
        self.python = str(root / bindir / ("python.exe" if os.name == "nt" else "python"))
        purelib = subprocess.run(
            [self.python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
            timeout=TIMEOUT,
        ).stdout.strip()
        self.site_packages = Path(purelib)
        sites, plain = _outer_paths()
        # one line: a .pth line starting with "import" is executed, so addsitedir also runs the
        # .pth files of this environment (editable installs of gradhub and gradhub-nn-ops)
        code = "import site, sys; " + "; ".join(
            [f"site.addsitedir({p!r})" for p in sites] + [f"sys.path.append({p!r})" for p in plain]
        )
        (self.site_packages / "_gradhub_outer_env.pth").write_text(code + "\n", encoding="utf-8")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("GRADHUB_")}
        self.env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PYTHONUTF8="1")

    def run(
        self, *args: str, env: dict[str, str] | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [self.python, *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env={**self.env, **(env or {})},
            cwd=str(self.root),
        )
        if check and proc.returncode != 0:
            pytest.fail(
                f"{' '.join(args)} exited with {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def install(self, source: Path, tmp: Path) -> None:
        """pip-install a copy of ``source`` (building writes into the source tree)."""
        copy = tmp / source.name
        shutil.copytree(
            source, copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
        )
        if _wheel_tools_here():
            args = ["--no-build-isolation", "--no-index"]
        else:  # fetch setuptools into an isolated build environment (needs the package index)
            args = []
        proc = self.run("-m", "pip", "install", "--no-deps", *args, str(copy), check=False)
        if proc.returncode != 0:
            if not args and "setuptools" in proc.stdout + proc.stderr:
                pytest.skip(
                    "cannot build the example: this environment has no setuptools >= 77 "
                    "and the package index is unreachable"
                )
            pytest.fail(f"pip install {source.name} failed:\n{proc.stdout}\n{proc.stderr}")

    def uninstall(self, dist: str) -> None:
        self.run("-m", "pip", "uninstall", "-y", dist)

    def cli(self, *args: str, env: dict[str, str] | None = None, expect: int = 0) -> Any:
        """Run ``python -m gradhub.cli ARGS --json`` and return the parsed output."""
        proc = self.run("-m", "gradhub.cli", *args, "--json", env=env, check=False)
        assert proc.returncode == expect, (
            f"gradhub {' '.join(args)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        )
        return json.loads(proc.stdout)


@pytest.fixture
def fresh_venv(tmp_path: Path) -> Venv:
    if importlib.util.find_spec("pip") is None:
        pytest.skip("pip is not installed in this environment")
    if importlib.util.find_spec("gradhub.cli") is None:
        pytest.skip("gradhub.cli is not there yet")
    return Venv(tmp_path / "venv")


def _plugin(records: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((r for r in records if r["name"] == name), None)


def _row(rows: list[dict[str, Any]], function: str) -> dict[str, Any] | None:
    return next((r for r in rows if r["function"] == function), None)


# -- the op plugin: gradhub-mish -----------------------------------------------------------------


def test_mish_is_discovered_listed_audited_and_uninstalled(
    fresh_venv: Venv, tmp_path: Path
) -> None:
    v = fresh_venv
    assert _row(v.cli("registry"), "Mish") is None
    v.install(EXAMPLES / "gradhub-mish", tmp_path)

    # discovered through its entry point, loaded from its distribution
    report = v.cli("plugins")
    mish = _plugin(report["plugins"], "mish")
    assert mish is not None, report["plugins"]
    assert (mish["distribution"], mish["version"], mish["module"], mish["status"]) == (
        "gradhub-mish",
        "0.1.0",
        "gradhub_mish.plugin",
        "loaded",
    )
    assert mish["added"]["functions"] == 1
    assert _plugin(report["plugins"], "nn_ops")["status"] == "loaded"  # type: ignore[index]

    # listed with its distribution
    row = _row(v.cli("registry"), "Mish")
    assert row is not None
    assert (row["provider"], row["version"], row["callable"], row["kind"], row["rule"]) == (
        "gradhub-mish",
        "0.1.0",
        "mish",
        "primitive",
        "yes",
    )
    assert "cpu" in row["devices"]

    # the audit verifies it (elementwise: to order 3)
    audit = v.cli("audit", "-k", "Mish", "--order", "3", "--device", "cpu")
    assert audit["failed"] == 0
    (result,) = audit["results"]
    assert (result["function"], result["device"], result["ok"], result["verified"]) == (
        "Mish",
        "cpu",
        True,
        3,
    )
    assert result["samples"] >= 4

    # the plugin's own tests pass against the installed distribution
    tests = tmp_path / "gradhub-mish" / "tests"
    proc = v.run(
        "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error", str(tests), check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 passed" in proc.stdout

    # uninstalled: gone from the plugins and the registry
    v.uninstall("gradhub-mish")
    assert _plugin(v.cli("plugins")["plugins"], "mish") is None
    rows = v.cli("registry")
    assert _row(rows, "Mish") is None and _row(rows, "Mul2") is not None
    # and this environment never saw it
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        importlib.metadata.distribution("gradhub-mish")


# -- the broken plugins: gradhub-broken ----------------------------------------------------------

_USE_GRADHUB = """
import json, warnings
import gradhub as gh
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    x = gh.Variable([1.0, 2.0])
    (x * x).sum().backward()
print(json.dumps({
    "g": x.g.tolist(),
    "warnings": [str(w.message) for w in caught if issubclass(w.category, gh.PluginLoadWarning)],
}))
"""


def test_broken_plugin_is_reported_and_gradhub_keeps_working(
    fresh_venv: Venv, tmp_path: Path
) -> None:
    v = fresh_venv
    v.install(EXAMPLES / "gradhub-broken", tmp_path)

    report = v.cli("plugins")
    hook = _plugin(report["plugins"], "broken_hook")
    imp = _plugin(report["plugins"], "broken_import")
    assert hook is not None and imp is not None, report["plugins"]
    for rec in (hook, imp):
        assert (rec["distribution"], rec["version"], rec["status"]) == (
            "gradhub-broken",
            "0.0.1",
            "failed",
        )
    assert hook["error"].startswith("registration: RuntimeError")
    assert "fails on purpose" in hook["error"]
    assert imp["error"].startswith("import: ModuleNotFoundError")
    assert "gradhub_broken_missing_dependency" in imp["error"]
    for name in ("gradhub", "nn_ops"):
        assert _plugin(report["plugins"], name)["status"] == "loaded"  # type: ignore[index]

    # nothing of the failed plugin is kept; everything else works
    rows = v.cli("registry")
    assert _row(rows, "BrokenIdentity") is None
    assert _row(rows, "Mul2") is not None
    out = json.loads(v.run("-c", _USE_GRADHUB).stdout)
    assert out["g"] == [2.0, 4.0]
    assert len(out["warnings"]) == 2, out["warnings"]
    assert all("gradhub-broken" in w for w in out["warnings"])
    assert any("broken_hook" in w and "RuntimeError" in w for w in out["warnings"])

    # strict mode raises, naming the distribution
    proc = v.run("-c", _USE_GRADHUB, env={"GRADHUB_STRICT_PLUGINS": "1"}, check=False)
    assert proc.returncode != 0
    assert "PluginError" in proc.stderr and "gradhub-broken" in proc.stderr

    # blocking the distribution skips both plugins without trying them
    blocked = {"GRADHUB_BLOCK_PLUGINS": "gradhub-broken"}
    statuses = {r["name"]: r["status"] for r in v.cli("plugins", env=blocked)["plugins"]}
    assert statuses["broken_hook"] == statuses["broken_import"] == "blocked"
    out = json.loads(v.run("-c", _USE_GRADHUB, env=blocked).stdout)
    assert out["warnings"] == [] and out["g"] == [2.0, 4.0]

    v.uninstall("gradhub-broken")
    names = {r["name"] for r in v.cli("plugins")["plugins"]}
    assert not names & {"broken_hook", "broken_import"}


# -- in-process: the device plugin and a rule plugin ---------------------------------------------


@pytest.fixture
def fresh_registry() -> Iterator[None]:
    """Forget every registration before and after (the next use loads the plugins again)."""
    gradhub.plugins.reset()
    yield
    gradhub.plugins.reset()


def _load(*plugins: tuple[str, Any]) -> dict[str, Any]:
    """Load the installed plugins plus ``plugins``; return the records by plugin name."""
    return {r.name: r for r in gradhub.plugins.load_plugins(extra=plugins)}


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch, fresh_registry: None) -> Any:
    monkeypatch.syspath_prepend(str(EXAMPLES / "gradhub-toy-device"))
    monkeypatch.delenv("GRADHUB_TOY_DEVICE_OFF", raising=False)
    module = importlib.import_module("gradhub_toy_device.plugin")
    records = _load(("toy_device", module))
    assert records["toy_device"].status == "loaded", records["toy_device"].error
    return module


def test_gradhub_add_devices_registers_the_toy_device(
    toy: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gradhub as gh

    assert _added(gradhub.plugins.plugin_report(), "toy_device") == {
        "devices": 1,
        "functions": 0,
        "parametric": 0,
        "kernels": 1,
        "rules": 0,
        "jvp_rules": 0,
        "batching_rules": 0,
        "rule_kernels": 0,
    }
    ctx = gh.get_extension_context("toy")
    assert (ctx.backend, ctx.device_id) == ("toy", 0)
    assert gh.get_extension_context("toy-alias") == ctx
    with gh.context_scope(ctx):
        x = gh.Variable([1.0, 2.0, 3.0])
    assert type(x.d) is toy.ToyArray and x.device.name == "toy"
    y = (x * x * x).sum()
    assert type(y.d) is toy.ToyArray and float(y.d) == 36.0
    (g,) = gh.grad([y], [x])
    (gg,) = gh.grad([g.sum()], [x])
    assert type(g.d) is type(gg.d) is toy.ToyArray
    np.testing.assert_array_equal(np.asarray(g.d), [3.0, 12.0, 27.0])
    np.testing.assert_array_equal(np.asarray(gg.d), [6.0, 12.0, 18.0])
    y.backward()
    assert type(x.g) is toy.ToyArray

    assert "toy" in _row(gh.registry_table(), "Mul2")["devices"]  # type: ignore[index]

    # explicit transfers are differentiable: the gradient comes back to the toy device
    z = x.to("cpu")
    assert type(z.d) is np.ndarray
    (gx,) = gh.grad([(z * z).sum()], [x])
    assert type(gx.d) is toy.ToyArray
    np.testing.assert_array_equal(np.asarray(gx.d), [2.0, 4.0, 6.0])
    c = gh.Variable([1.0, 2.0])
    (gc,) = gh.grad([(c.to("toy") ** 3.0).sum()], [c])
    assert type(gc.d) is np.ndarray
    np.testing.assert_array_equal(gc.d, [3.0, 12.0])

    # mixing devices is an error naming both; an unknown index or an unusable device too
    with pytest.raises(DeviceError, match=r"add2\(\): inputs are on different devices: toy .*cpu"):
        x + gh.Variable([1.0, 1.0, 1.0])
    with pytest.raises(DeviceError, match="only index 0"):
        gh.get_extension_context("toy:1")
    monkeypatch.setenv("GRADHUB_TOY_DEVICE_OFF", "1")
    with pytest.raises(DeviceError, match="unusable here: switched off by GRADHUB_TOY_DEVICE_OFF"):
        gh.get_extension_context("toy")
    assert "toy" not in _row(gh.registry_table(), "Mul2")["devices"]  # type: ignore[index]


def _added(records: list[Any], name: str) -> dict[str, int]:
    return next(r.added for r in records if r.name == name)


def test_gradhub_add_kernels_toy_kernel_is_used_and_audited(toy: Any) -> None:
    import gradhub as gh

    rows = {r["function"]: r for r in gh.registry_table()}
    assert rows["Mul2"]["fast_kernels"] == ["toy"]
    assert rows["Add2"]["fast_kernels"] == []
    with gh.context_scope(gh.get_extension_context("toy")):
        a = gh.Variable([1.0, 2.0])
        b = gh.Variable([3.0, 4.0])
    before = toy.KERNEL_CALLS["Mul2"]
    c = a * b
    assert toy.KERNEL_CALLS["Mul2"] == before + 1
    np.testing.assert_array_equal(np.asarray(c.d), [3.0, 8.0])
    cpu_before = toy.KERNEL_CALLS["Mul2"]
    gh.Variable([1.0]) * gh.Variable([2.0])  # on the CPU: the generic kernel
    assert toy.KERNEL_CALLS["Mul2"] == cpu_before
    # the audit of every registered function on the toy device: tests/test_toy_device_audit.py


def test_a_device_registered_twice_fails_the_second_plugin(toy: Any) -> None:
    again = _module(
        "toy_again",
        gradhub_add_devices=_hook(lambda register: register.device(toy.ToyDeviceType())),
    )
    gradhub.plugins.reset()
    with pytest.warns(PluginLoadWarning, match="toy_again.*duplicate device 'toy'"):
        records = _load(("toy_device", toy), ("toy_again", again))
    assert records["toy_device"].status == "loaded"
    assert records["toy_again"].status == "failed"


def _hook(fn: Callable[[Any], None]) -> Callable[[Any], None]:
    """``fn`` as a hook implementation taking ``register``."""

    def hook(register: Any) -> None:
        fn(register)

    return gradhub.hookimpl(hook)


def _module(name: str, **hooks: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    for hook_name, fn in hooks.items():
        fn.__name__ = hook_name
        setattr(module, hook_name, fn)
    return module


def _cube(xp: Any, x: Any) -> Any:
    return x * x * x


def _cube_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.uniform(-2.0, 2.0, (3, 2)),), name="(3, 2)")
    yield Sample((rng.uniform(-2.0, 2.0, ()),), name="0-d")


def _cube_rule(gy: Any, inputs: Any, in_shapes: Any, outputs: Any, out_shapes: Any) -> Any:
    x = inputs[0]
    return [gy[0] * x * x * 3.0]


def _wrong_rule(gy: Any, inputs: Any, in_shapes: Any, outputs: Any, out_shapes: Any) -> Any:
    return [gy[0] * inputs[0] * 2.0]


def test_gradhub_add_backward_rules_gives_rules_to_other_plugins_functions(
    fresh_registry: None,
) -> None:
    import gradhub as gh

    functions = _module(
        "cube_functions",
        gradhub_add_functions=_hook(
            lambda register: register.function(
                "Cube", _cube, samples=_cube_samples, reference=lambda x: x**3, elementwise=True
            )
        ),
    )
    rules = _module(
        "cube_rules",
        gradhub_add_backward_rules=_hook(
            lambda register: register.rule("Cube", _cube_rule, need_inputs=(0,), need_outputs=())
        ),
    )

    # without the rule plugin the function has no rule
    assert _load(("cube_functions", functions))["cube_functions"].status == "loaded"
    assert _row(gh.registry_table(), "Cube")["status"] == "no rule"  # type: ignore[index]
    x = gh.Variable([2.0])
    with pytest.raises(BackwardRuleError, match=r"Cube .*has no backward rule"):
        gh.grad([call("Cube", x)], [x])

    # the rule plugin (loaded after, or before: rules run in the second phase) provides it
    gradhub.plugins.reset()
    records = _load(("cube_rules", rules), ("cube_functions", functions))
    assert records["cube_rules"].status == "loaded"
    assert records["cube_rules"].added["rules"] == 1
    row = _row(gh.registry_table(), "Cube")
    assert row is not None and row["rule"] == "yes"
    assert row["provider"] == "cube_functions" and row["rule_provider"] == "module cube_rules"
    result = check_function(REGISTRY.get("Cube"), "cpu", order=3, record=True)
    assert result.ok and result.verified == 3, result.error
    node_rule = call("Cube", gh.Variable([1.0])).creator.rule
    assert node_rule.need_inputs == (0,) and node_rule.fn is _cube_rule

    # a rival rule for the same function needs override=True; without it the rival fails
    rival = _module(
        "cube_rival",
        gradhub_add_backward_rules=_hook(
            lambda register: register.rule("Cube", _wrong_rule, need_inputs=(0,))
        ),
    )
    gradhub.plugins.reset()
    with pytest.warns(PluginLoadWarning, match="cube_rival.*duplicate backward rule for 'Cube'"):
        records = _load(("cube_functions", functions), ("cube_rules", rules), ("cube_rival", rival))
    assert records["cube_rival"].status == "failed"
    assert REGISTRY.get("Cube").rule.fn is _cube_rule  # type: ignore[union-attr]

    overriding = _module(
        "cube_override",
        gradhub_add_backward_rules=_hook(
            lambda register: register.rule("Cube", _wrong_rule, need_inputs=(0,), override=True)
        ),
    )
    gradhub.plugins.reset()
    records = _load(
        ("cube_functions", functions), ("cube_rules", rules), ("cube_override", overriding)
    )
    assert records["cube_override"].status == "loaded"
    row = _row(gh.registry_table(), "Cube")
    assert row is not None
    assert row["overrides"] == ["module cube_rules -> module cube_override"]
    # the audit catches the (deliberately wrong) overriding rule
    assert check_function(REGISTRY.get("Cube"), "cpu", order=1, record=False).failed == 1

    # a rule for a function nobody registered makes the plugin fail
    orphan = _module(
        "orphan_rules",
        gradhub_add_backward_rules=_hook(
            lambda register: register.rule("NoSuchFunction", _cube_rule)
        ),
    )
    gradhub.plugins.reset()
    with pytest.warns(PluginLoadWarning, match="orphan_rules.*unknown function 'NoSuchFunction'"):
        assert _load(("orphan_rules", orphan))["orphan_rules"].status == "failed"
