"""`gradhub registry -k TEXT`: filtering the registry table by name, provider or status."""

from __future__ import annotations

import json

import gradhub as gh
import pytest
from gradhub.cli import filter_rows, main


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[dict]:
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_filter_by_name_is_case_insensitive_and_matches_snake_case(capsys):
    rows = _json(capsys, ["registry", "-k", "reshape", "--json"])
    assert "Reshape" in [r["function"] for r in rows]
    assert all("reshape" in (r["function"] + r["callable"]).lower() for r in rows)
    assert rows == _json(capsys, ["registry", "-k", "RESHAPE", "--json"])
    assert _json(capsys, ["registry", "-k", "no-such-thing", "--json"]) == []


def test_filter_by_provider_and_status(capsys):
    every = gh.registry_table()
    core = _json(capsys, ["registry", "-k", "gradhub", "--json"])
    assert len(core) == len(every)  # every provider name contains "gradhub"
    mine = [r for r in every if r["provider"] == "gradhub"]
    assert len(mine) > 0
    non_diff = _json(capsys, ["registry", "-k", "non-differentiable", "--json"])
    assert non_diff and all(r["status"] == "non-differentiable" for r in non_diff)
    assert len(non_diff) == sum(r["status"] == "non-differentiable" for r in every)


def test_table_title_names_the_filter(capsys):
    capsys.readouterr()
    assert main(["registry", "-k", "reshape"]) == 0
    out = capsys.readouterr().out
    assert "matching 'reshape'" in out and "Reshape" in out and "Add2" not in out


def test_filter_rows_fields():
    rows = [
        {
            "function": "Foo",
            "callable": "foo",
            "provider": "dist-a",
            "version": "1.2",
            "status": "failed",
        },
        {
            "function": "Bar",
            "callable": "bar",
            "provider": "dist-b",
            "version": "3.4",
            "status": "unverified",
        },
    ]
    assert [r["function"] for r in filter_rows(rows, "FAIL")] == ["Foo"]
    assert [r["function"] for r in filter_rows(rows, "dist-b")] == ["Bar"]
    assert [r["function"] for r in filter_rows(rows, "3.4")] == ["Bar"]
    assert [r["function"] for r in filter_rows(rows, "o")] == ["Foo"]
