"""Plugin discovery: the metadata folders on ``sys.path`` are read directly (agreeing with
``importlib_metadata``, the first distribution of a name winning); distributions served by a zip
file on ``sys.path`` or by a custom finder on ``sys.meta_path`` are found through
``importlib_metadata.entry_points``, with their distribution's name and version; neither importing
gradhub nor loading plugins from folders imports the metadata package."""

from __future__ import annotations

import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradhub as gh
import importlib_metadata
import pytest
from child_helpers import run_python
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


def test_loading_from_folders_needs_no_metadata_package() -> None:
    """Neither importing gradhub nor loading plugins from ordinary folders on ``sys.path``
    imports ``importlib_metadata`` (25 ms): the metadata folders are read directly."""
    code = (
        "import sys, gradhub, gradhub.functions\n"
        "before = 'importlib_metadata' in sys.modules\n"
        "gradhub.plugins.load_plugins()\n"
        "print(before, 'importlib_metadata' in sys.modules)\n"
    )
    assert run_python(code).split() == ["False", "False"]


def test_the_folder_scan_agrees_with_importlib_metadata() -> None:
    import importlib_metadata

    by_metadata = sorted(
        plugins.EntryPoint(ep.name, ep.value, *plugins._name_version(ep.dist))
        for ep in importlib_metadata.entry_points(group=plugins.ENTRY_POINT_GROUP)
    )
    assert sorted(plugins._scan_folders()) == by_metadata


def _dist(folder: Path, dist: str, version: str, ep: str | None, egg: bool = False) -> None:
    meta = folder / (f"{dist}.egg-info" if egg else f"{dist}-{version}.dist-info")
    meta.mkdir(parents=True)
    head = f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
    (meta / ("PKG-INFO" if egg else "METADATA")).write_text(head)
    if ep is not None:
        (meta / "entry_points.txt").write_text(f"[gradhub.plugins]\n{ep} = {ep}_mod\n")


def test_the_first_distribution_of_a_name_wins_in_the_folder_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    _dist(first, "fake_shadow", "2.0", None)  # no entry points, yet it shadows b's
    _dist(second, "Fake.Shadow", "1.0", "shadowed")
    _dist(first, "fake_egg", "0.1", "egg", egg=True)
    _dist(second, "fake.egg", "0.2", "egg2")
    monkeypatch.setattr(sys, "path", [str(first), str(second), str(tmp_path / "missing")])
    found = plugins._scan_folders()
    assert found == [plugins.EntryPoint("egg", "egg_mod", "fake_egg", "0.1")]
    import importlib_metadata

    names = sorted(ep.name for ep in importlib_metadata.entry_points(group="gradhub.plugins"))
    assert names == ["egg"]  # importlib_metadata agrees


def test_a_zip_file_on_the_path_sends_discovery_to_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "x.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("m.py", "")
    monkeypatch.setattr(sys, "path", [str(archive)])
    with pytest.raises(plugins._NeedsMetadata):
        plugins._scan_folders()
