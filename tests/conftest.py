"""Shared fixtures: a clean parameter table for every test; a site folder for fake plugins."""

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
