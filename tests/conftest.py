"""Shared fixtures: a clean parameter table for every test; a site folder for fake plugins;
unloaded plugins (``fresh_plugins``); an empty array pool; plans and device-graph recording on
(``recording_on``). Core tests marked ``nn_ops`` call
functions of gradhub-nn-ops: they are skipped, saying so, where it is not installed (the core's
own session, ``nox -s tests_core``)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import gradhub as gh
import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if importlib.util.find_spec("gradhub_nn_ops") is not None:
        return
    skip = pytest.mark.skip(reason="calls functions of gradhub-nn-ops, which is not installed")
    for item in items:
        if item.get_closest_marker("nn_ops") is not None:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _private_audit_store(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stored audit results (``gradhub audit --save``) of the developer's cache never show in a
    test: each test reads and writes a store of its own."""
    monkeypatch.setenv("GRADHUB_AUDIT_STORE", str(tmp_path_factory.mktemp("audit") / "audit.json"))


@pytest.fixture(autouse=True)
def _clean_parameters() -> Iterator[None]:
    gh.clear_parameters()
    yield
    gh.clear_parameters()


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder on sys.path, where tests write fake distributions and plugin modules."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    return root


PLUGIN_ENV = (
    "GRADHUB_DISABLE_PLUGIN_AUTOLOAD",
    "GRADHUB_PLUGINS",
    "GRADHUB_BLOCK_PLUGINS",
    "GRADHUB_STRICT_PLUGINS",
)


@pytest.fixture
def fresh_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No plugin-selection variables set, and no plugin loaded, before and after the test."""
    from gradhub import plugins

    for var in PLUGIN_ENV:
        monkeypatch.delenv(var, raising=False)
    plugins.reset()
    yield
    plugins.reset()


@pytest.fixture
def hand_loaded_plugins(fresh_plugins: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the core and the plugins a test loads by hand (``GRADHUB_DISABLE_PLUGIN_AUTOLOAD``)."""
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def pool() -> Iterator[None]:
    """An empty array-reuse pool before and after the test (skips where arrays are never
    reused)."""
    from gradhub import memory

    if not memory.reuse_enabled():
        pytest.skip("reference counts are not available here: arrays are never reused")
    memory.release()
    yield
    memory.release()


@pytest.fixture
def recording_on() -> Iterator[None]:
    """Plans and the recording of compiled steps into device graphs on (whatever the
    environment says), restored after the test."""
    from gradhub import capture, plan

    before = plan.set_enabled(True), capture.set_enabled(True)
    yield
    plan.set_enabled(before[0])
    capture.set_enabled(before[1])
