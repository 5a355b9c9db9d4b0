"""Plugin selection (autoload off, allow and block lists): the errors and the CLI say which
plugins were left out and how to load them."""

from __future__ import annotations

import json
from pathlib import Path

import gradhub as gh
import pytest
from gradhub import plugins
from gradhub.cli import main
from gradhub.errors import DeviceError
from gradhub.registry import REGISTRY

pytestmark = pytest.mark.usefixtures("fresh_plugins")


REVLIKE = """
    from gradhub import hookimpl

    @hookimpl
    def gradhub_add_functions(register):
        register.function("RevCubeLike", lambda xp, x: x ** 3)
"""


def _make_dist(root: Path, dist: str, module: str, code: str, ep_name: str) -> None:
    import textwrap

    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[gradhub.plugins]\n{ep_name} = {module}\n")
    (root / f"{module}.py").write_text(textwrap.dedent(code))


def _installed(dist: str) -> bool:
    return any(e.distribution == dist for e in plugins._entry_points())


needs_nn_ops = pytest.mark.skipif(
    not _installed("gradhub-nn-ops"), reason="gradhub-nn-ops is not installed"
)


needs_cuda_dist = pytest.mark.skipif(
    not _installed("gradhub-cuda"), reason="gradhub-cuda is not installed"
)


def record(name: str) -> plugins.PluginRecord:
    return next(r for r in plugins.plugin_report() if r.name == name)


AUTOLOAD_OFF = "installed, but plugin autoload is off (GRADHUB_DISABLE_PLUGIN_AUTOLOAD=1)"


@pytest.mark.parametrize(
    ("env", "status"),
    [
        ({"GRADHUB_DISABLE_PLUGIN_AUTOLOAD": "1"}, "autoload off"),
        ({"GRADHUB_PLUGINS": "nn_ops"}, "not selected by GRADHUB_PLUGINS"),
    ],
)
def test_missing_function_lists_the_left_out_plugins(
    site: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], status: str
) -> None:
    from gradhub.errors import FunctionNotFoundError

    _make_dist(site, "gradhub-revlike", "revlike_plugin", REVLIKE, "revlike")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(FunctionNotFoundError) as info:
        REGISTRY.get("rev_cube_like")
    msg = str(info.value)
    assert f"revlike (gradhub-revlike 1.0, {status})" in msg
    assert "one of which may provide it" in msg
    assert "gradhub.plugins.load_plugins(extra=[(" in msg  # how to load one in the program
    # the advice works: selecting it with GRADHUB_PLUGINS loads the function
    selected = msg.split("GRADHUB_PLUGINS=")[-1].split(";")[0].split()[0]
    assert "revlike" in selected.split(",")
    monkeypatch.delenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.setenv("GRADHUB_PLUGINS", selected)
    plugins.reset()
    assert REGISTRY.get("rev_cube_like").provider.distribution == "gradhub-revlike"


def test_missing_function_with_everything_loaded_names_no_plugin(site: Path) -> None:
    from gradhub.errors import FunctionNotFoundError

    with pytest.raises(FunctionNotFoundError) as info:
        REGISTRY.get("no_such_fn")
    assert "left out" not in str(info.value)


@needs_cuda_dist
def test_autoload_off_device_error_says_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Formerly: "install the distribution 'gradhub-cuda' (pip install gradhub-cuda)"."""
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
    """Formerly: ``gradhub plugins`` left them out and called cuda "not installed"."""
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
