"""Shared fixtures: a clean parameter table for every test; a site folder for fake plugins;
unloaded plugins (``fresh_plugins``); an empty array pool."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import gradhub as gh
import pytest


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
def pool() -> Iterator[None]:
    """An empty array-reuse pool before and after the test (skips where arrays are never
    reused)."""
    from gradhub import memory

    if not memory.reuse_enabled():
        pytest.skip("reference counts are not available here: arrays are never reused")
    memory.release()
    yield
    memory.release()
