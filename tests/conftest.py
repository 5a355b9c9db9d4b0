"""Shared fixtures: a clean parameter table for every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import gradhub as gh


@pytest.fixture(autouse=True)
def _clean_parameters() -> Iterator[None]:
    gh.clear_parameters()
    yield
    gh.clear_parameters()
