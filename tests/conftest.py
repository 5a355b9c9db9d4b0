"""Shared fixtures: a clean parameter table for every test."""

from __future__ import annotations

from collections.abc import Iterator

import gradhub as gh
import pytest


@pytest.fixture(autouse=True)
def _clean_parameters() -> Iterator[None]:
    gh.clear_parameters()
    yield
    gh.clear_parameters()
