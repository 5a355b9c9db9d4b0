"""The nox sessions (noxfile.py): one per task, each with a docstring, each named in the README,
and the CI script (.ci/run) runs the README's test command and the sessions it says it runs.

The noxfile is read with ``ast`` (not imported: nox need not be installed for the tests).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _sessions() -> dict[str, str | None]:
    """Session name -> docstring, for every function decorated with ``nox.session``."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    out: dict[str, str | None] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            if (
                isinstance(target, ast.Attribute)
                and target.attr == "session"
                and isinstance(target.value, ast.Name)
                and target.value.id == "nox"
            ):
                out[node.name] = ast.get_docstring(node)
    return out


def test_every_session_has_a_docstring() -> None:
    sessions = _sessions()
    assert {"tests", "tests_core", "lint", "typecheck", "docs", "sanitize"} <= set(sessions)
    missing = [name for name, doc in sessions.items() if not doc or len(doc.split()) < 5]
    assert not missing, f"nox sessions without a docstring: {missing}"


def test_the_readme_lists_every_session() -> None:
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"`nox -l` lists the sessions[^:]*:(.*?)\.\n", readme, re.S)
    assert m, "README.md: no sentence listing the nox sessions (`nox -l` lists the sessions ...)"
    listed = set(re.findall(r"`(\w+)`", m.group(1)))
    assert listed == set(_sessions()), (listed, set(_sessions()))


def test_ci_runs_the_readme_test_command_and_its_sessions() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    test_command = [b for b in blocks if "pytest" in b]
    assert len(test_command) == 1, "README.md: expected one bash block running pytest"
    assert test_command[0].strip() in ci
    sessions = _sessions()
    run = [s for line in ci.splitlines() if line.startswith("nox -s") for s in line.split()[2:]]
    assert run and set(run) <= set(sessions), run
    assert "sanitize" in run and "tests_core" in run and "typecheck" in run and "docs" in run
