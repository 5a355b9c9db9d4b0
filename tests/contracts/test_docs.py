"""The examples of the documentation are executed: docstrings of the core and of gradhub-nn-ops'
modules, and the pages of docs/.

* Every ``>>>`` example in the docstrings of the ``gradhub`` package and its modules, and of
  ``gradhub_nn_ops`` and its modules, runs with the standard :mod:`doctest` (one test per module).
* Every ``{doctest}`` block of the Markdown pages in ``docs/`` runs the same way (one test per
  page), as ``sphinx-build -b doctest`` runs them, so the examples stay right without Sphinx.

Examples may change global state (a doctest of ``gh.register`` replaces a rule); each test restores
what it can observe: the registry (reloaded if any function, rule, device or parametric function
changed), the default context, graph recording and the environment.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import os
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradhub
import gradhub.plugins
import numpy as np
import pytest
from gradhub.modes import state as _mode_state
from gradhub.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.DONT_ACCEPT_TRUE_FOR_1
#: Modules whose docstrings must carry examples (so that this test can never pass vacuously).
MUST_HAVE_EXAMPLES = (
    "gradhub",
    "gradhub.engine",
    "gradhub.variable",
    "gradhub.testing",
    "gradhub.func",
)


def _core_modules() -> list[str]:
    """The core's modules, then those of gradhub-nn-ops where it is installed (the demo's
    docstrings among them)."""
    names = ["gradhub"]
    names += sorted(m.name for m in pkgutil.walk_packages(gradhub.__path__, "gradhub."))
    spec = importlib.util.find_spec("gradhub_nn_ops")
    if spec is not None and spec.submodule_search_locations:
        names += ["gradhub_nn_ops"] + sorted(
            m.name
            for m in pkgutil.walk_packages(spec.submodule_search_locations, "gradhub_nn_ops.")
        )
    return names


def _registry_snapshot() -> tuple[Any, ...]:
    gradhub.registry._ensure_loaded()
    return (
        {n: (id(f), id(f.rule), tuple(sorted(f.kernels))) for n, f in REGISTRY.functions.items()},
        {n: id(p) for n, p in REGISTRY.parametric.items()},
        dict(REGISTRY.device_types),
        dict(REGISTRY.device_aliases),
    )


@pytest.fixture
def _isolated() -> Iterator[None]:
    """Restore the registry, context, recording switch and environment after the examples."""
    before = _registry_snapshot()
    ctx = gradhub.get_default_context()
    recording = _mode_state.recording
    env = dict(os.environ)
    try:
        yield
    finally:
        _mode_state.recording = recording
        gradhub.set_default_context(ctx)
        for key in set(os.environ) - set(env):
            del os.environ[key]
        os.environ.update(env)
        if not gradhub.plugins.STATE.loaded or _registry_snapshot() != before:
            gradhub.plugins.reset()


def _run(tests: list[doctest.DocTest]) -> tuple[int, str]:
    """Run doctests; return the number of examples and the failure report ('' if none)."""
    out: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    attempted = 0
    for test in tests:
        result = runner.run(test, out=out.append, clear_globs=True)
        attempted += result.attempted
    return attempted, "".join(out)


def _module_tests(name: str) -> list[doctest.DocTest]:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name and not e.name.startswith("gradhub"):
            pytest.skip(f"{name} needs the optional dependency {e.name}")
        raise
    finder = doctest.DocTestFinder(exclude_empty=True)
    return sorted(finder.find(module, name), key=lambda t: t.name)


@pytest.mark.parametrize("name", _core_modules())
@pytest.mark.usefixtures("_isolated")
def test_docstring_examples(name: str) -> None:
    _, report = _run(_module_tests(name))
    assert not report, f"docstring examples of {name} failed:\n{report}"


@pytest.mark.parametrize("name", MUST_HAVE_EXAMPLES)
def test_core_docstrings_carry_examples(name: str) -> None:
    assert sum(len(t.examples) for t in _module_tests(name)) > 0, f"{name}: no >>> examples"


# -- the pages of docs/ --------------------------------------------------------------------------

_FENCE = re.compile(
    r"^(```+|:::+)\{(doctest|testsetup|testcleanup)\}[^\n]*\n(.*?)^\1[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


def _pages() -> list[Path]:
    return sorted(p for p in DOCS.glob("*.md") if _FENCE.search(p.read_text(encoding="utf-8")))


def _page_test(page: Path) -> tuple[str, str, str]:
    """The setup code, the doctest text and the cleanup code of a page."""
    setup, body, cleanup = [], [], []
    for m in _FENCE.finditer(page.read_text(encoding="utf-8")):
        text = "\n".join(line for line in m.group(3).splitlines() if not line.startswith(":"))
        {"doctest": body, "testsetup": setup, "testcleanup": cleanup}[m.group(2)].append(text)
    return "\n".join(setup), "\n".join(body), "\n".join(cleanup)


def test_docs_pages_have_examples() -> None:
    names = {p.stem for p in _pages()}
    assert {"index", "quickstart", "concepts", "op-plugins", "device-plugins"} <= names


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
@pytest.mark.usefixtures("_isolated")
def test_docs_page_examples(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the same environment as docs/conf.py gives sphinx-build -b doctest
    for example in ("gradhub-mish", "gradhub-toy-device"):
        monkeypatch.syspath_prepend(str(DOCS / "examples" / example))
    for var in (
        "GRADHUB_PLUGINS",
        "GRADHUB_BLOCK_PLUGINS",
        "GRADHUB_DISABLE_PLUGIN_AUTOLOAD",
        "GRADHUB_STRICT_PLUGINS",
    ):
        monkeypatch.delenv(var, raising=False)
    gradhub.plugins.reset()
    gradhub.clear_parameters()
    setup, body, cleanup = _page_test(page)
    globs: dict[str, Any] = {"np": np, "gh": gradhub, "gradhub": gradhub}
    try:
        exec(compile(setup, f"{page.name} (setup)", "exec"), globs)
        test = doctest.DocTestParser().get_doctest(body, globs, page.name, str(page), 0)
        attempted, report = _run([test])
    finally:
        exec(compile(cleanup, f"{page.name} (cleanup)", "exec"), globs)
        gradhub.plugins.reset()
        gradhub.clear_parameters()
    assert attempted > 0
    assert not report, f"examples of docs/{page.name} failed:\n{report}"
