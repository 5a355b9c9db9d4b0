"""Device types whose availability probe raises, and ``get_extension_context``'s arguments:
the registry, the CLI and the audit report the device as unavailable; bad arguments are
clear errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plugins
from gradhub.audit import audit, check_function
from gradhub.cli import main
from gradhub.errors import DeviceError
from gradhub.registry import REGISTRY
from plugin_helpers import BOOM_DEVICE, make_dist


@pytest.fixture(autouse=True)
def _core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Only the core functions (plus what a test adds): no installed plugin takes part."""
    for var in ("GRADHUB_PLUGINS", "GRADHUB_BLOCK_PLUGINS", "GRADHUB_STRICT_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins.reset()
    yield
    plugins.reset()


@pytest.fixture
def boom(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_dist(site, "fake-boom", "fake_boom_mod", BOOM_DEVICE, version="0.7")
    monkeypatch.setenv("GRADHUB_PLUGINS", "fake-boom")


BOOM_REASON = (
    r"availability check of device 'boomdev' \(registered by fake-boom 0\.7\) failed: "
    r"RuntimeError: probe exploded"
)


def test_raising_probe_is_unavailable_in_registry_table_and_show_registry(
    boom: None, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = gh.registry_table()
    assert rows and all(r["devices"] == ["cpu"] for r in rows)
    gh.show_registry()
    out = capsys.readouterr().out
    assert "unusable devices: boomdev: the " in out
    assert REGISTRY.availability("boomdev")[0] is False
    import re

    assert re.search(BOOM_REASON, out)


def test_raising_probe_get_extension_context_raises_device_error(boom: None) -> None:
    with pytest.raises(DeviceError, match=r"device 'boomdev' is unusable here: the " + BOOM_REASON):
        gh.get_extension_context("boomdev")


def test_raising_probe_in_the_cli(boom: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["registry"]) == 0
    assert "boomdev" in capsys.readouterr().out
    assert main(["registry", "--json"]) == 0
    capsys.readouterr()
    assert main(["audit", "-k", "Neg", "--json", "--no-progress"]) == 0
    assert '"devices": [\n    "cpu"\n  ]' in capsys.readouterr().out
    assert main(["audit", "-k", "Neg", "--device", "boomdev", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--device" in err and "probe exploded" in err and "fake-boom" in err
    assert main(["plugins", "--json"]) == 0
    assert "probe exploded" in capsys.readouterr().out
    assert [r.device for r in audit(["Neg"])] == ["cpu"]


def test_raising_probe_in_registry_audit(boom: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["registry", "--audit", "--json"]) == 0
    assert "boomdev" not in capsys.readouterr().out


# -- device names and the audit's --device ------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (
            ("cpu", "abc"),
            ValueError,
            r"get_extension_context: device_id must be a non-negative "
            r"integer, got 'abc'",
        ),
        (("cpu", 1.7), TypeError, r"get_extension_context: device_id must be an int.*1\.7"),
        (("cpu", None), TypeError, r"get_extension_context: device_id must be an int"),
        (("cpu", -1), ValueError, r"get_extension_context: device_id must be a non-negative"),
        (
            ("cpu", 0, "bogus"),
            ValueError,
            r"get_extension_context: type_config must be one of "
            r"'float', 'half', got 'bogus'",
        ),
        (("cpu", 0, None), TypeError, r"get_extension_context: type_config must be a string"),
        (("cpu:",), DeviceError, r"device name 'cpu:': the index after ':' must be an integer"),
        ((":0",), DeviceError, r"device name ':0': the device kind before ':' is missing"),
        (("cpu:-1",), DeviceError, r"device name 'cpu:-1': the index after ':' must be"),
    ],
)
def test_get_extension_context_rejects_bad_arguments(
    args: tuple[Any, ...], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        gh.get_extension_context(*args)


def test_get_extension_context_accepts_the_documented_forms() -> None:
    assert gh.get_extension_context("cpu", "0") == gh.Context("cpu", 0, "float")
    assert gh.get_extension_context("cpu", np.int64(0), "half") == gh.Context("cpu", 0, "half")
    assert gh.get_extension_context("cpu:0") == gh.Context("cpu", 0, "float")


def test_audit_device_index_is_honoured(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--device", "cpu:1", "-k", "Neg", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--device" in err and "cpu:1" in err and "only index 0" in err
    assert main(["audit", "--device", "cpu:0", "-k", "Neg", "--json"]) == 0
    assert '"devices": [\n    "cpu"\n  ]' in capsys.readouterr().out
    with pytest.raises(DeviceError, match="only index 0"):
        check_function(REGISTRY.get("Neg"), "cpu:1")
    assert check_function(REGISTRY.get("Neg"), "cpu:0", record=False).ok


@pytest.mark.parametrize("name", ["foo", "cpu:", "cpu:x"])
def test_audit_unknown_device_names_the_option(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    assert main(["audit", "--device", name, "-k", "Neg", "--no-progress"]) == 2
    assert "--device" in capsys.readouterr().err
