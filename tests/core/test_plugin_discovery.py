"""Plugin discovery through ``importlib_metadata.entry_points``: distributions served by a zip file
on ``sys.path`` or by a custom finder on ``sys.meta_path`` are found, with their distribution's
name and version; importing gradhub does not import the metadata package (loading the plugins
does)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradhub as gh
import importlib_metadata
import pytest
from gradhub import plugins
from gradhub.registry import REGISTRY

MODULE = """
from gradhub import hookimpl

def _fwd(xp, x):
    return x * 3.0

def _bw(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    return [grad_outputs[0] * 3.0]

@hookimpl
def gradhub_add_functions(register):
    register.function("{name}", _fwd, rule=_bw)
"""


@pytest.fixture(autouse=True)
def _fresh(fresh_plugins: None) -> Iterator[None]:
    yield


def record(name: str) -> plugins.PluginRecord:
    return next(r for r in plugins.plugin_report() if r.name == name)


def test_a_plugin_served_from_a_zip_file_is_discovered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "fake_zipped.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(
            "fake_zipped-0.7.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: fake-zipped\nVersion: 0.7\n",
        )
        z.writestr(
            "fake_zipped-0.7.dist-info/entry_points.txt",
            "[gradhub.plugins]\nzipped = fake_zipped_mod\n",
        )
        z.writestr("fake_zipped_mod.py", MODULE.format(name="FakeZipped"))
    monkeypatch.syspath_prepend(str(archive))

    eps = [e for e in plugins._entry_points() if e.name == "zipped"]
    assert eps == [plugins.EntryPoint("zipped", "fake_zipped_mod", "fake-zipped", "0.7")]
    x = gh.Variable([2.0])
    assert REGISTRY.get("FakeZipped").api(x).d[0] == 6.0
    rec = record("zipped")
    assert (rec.status, rec.distribution, rec.version) == ("loaded", "fake-zipped", "0.7")
    assert sys.modules["fake_zipped_mod"].__file__.startswith(str(archive))


class _Served(importlib_metadata.Distribution):
    """A distribution whose metadata lives in memory (as a custom finder may serve it)."""

    files_ = {
        "METADATA": "Metadata-Version: 2.1\nName: fake-served\nVersion: 3.1\n",
        "entry_points.txt": "[gradhub.plugins]\nserved = fake_served_mod\n",
    }

    def read_text(self, filename: Any) -> str | None:
        return self.files_.get(str(filename))

    def locate_file(self, path: Any) -> Any:
        return Path(str(path))


class _Finder(importlib_metadata.DistributionFinder):
    def find_spec(self, *args: Any) -> None:
        return None  # serves metadata, not modules

    def find_distributions(self, context: Any = None) -> Iterator[importlib_metadata.Distribution]:
        name = getattr(context, "name", None)
        if name is None or name.replace("_", "-") == "fake-served":
            yield _Served()


def test_a_plugin_served_by_a_custom_finder_is_discovered(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (site / "fake_served_mod.py").write_text(MODULE.format(name="FakeServed"))
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, _Finder()])

    x = gh.Variable([1.0])
    assert REGISTRY.get("FakeServed").api(x).d[0] == 3.0
    rec = record("served")
    assert (rec.status, rec.distribution, rec.version) == ("loaded", "fake-served", "3.1")


def test_importing_gradhub_does_not_import_the_metadata_package() -> None:
    code = (
        "import sys, gradhub, gradhub.functions\n"
        "before = 'importlib_metadata' in sys.modules\n"
        "gradhub.plugins.load_plugins()\n"
        "print(before, 'importlib_metadata' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
