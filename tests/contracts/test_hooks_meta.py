"""Every plugin hook is documented and tested.

For each hook specification in :mod:`gradhub.hookspecs` (names start with ``gradhub_``) this fails
when the hook has no docstring, no heading in the hook reference page (``docs/hooks.md``), no
mention of each public method of its registrar in that heading's section, or no test under
``tests/`` that mentions it. A new hook therefore cannot land without its documentation and tests.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from gradhub import hookspecs, plugins

ROOT = Path(__file__).resolve().parents[2]
HOOK_PAGE = ROOT / "docs" / "hooks.md"
TESTS = Path(__file__).resolve().parents[1]
SPEC_MARK = f"{hookspecs.PROJECT}_spec"  # the attribute pluggy's HookspecMarker sets


def _hookspecs() -> dict[str, object]:
    return {
        name: obj
        for name, obj in vars(hookspecs).items()
        if name.startswith("gradhub_") and inspect.isfunction(obj) and hasattr(obj, SPEC_MARK)
    }


HOOKS = sorted(_hookspecs())


def _sections() -> dict[str, str]:
    """Markdown headings of the hook page -> the text of their section (up to the next heading)."""
    text = HOOK_PAGE.read_text(encoding="utf-8")
    parts = re.split(r"^(#{1,6} .*)$", text, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _section_of(hook: str) -> str:
    for heading, body in _sections().items():
        if re.search(rf"\b{hook}\b", heading):
            return body
    pytest.fail(f"{hook}: no heading in {HOOK_PAGE.relative_to(ROOT)} names it")


def test_the_hooks_are_found() -> None:
    assert len(HOOKS) >= 4, HOOKS
    # every module-level gradhub_* function of hookspecs is a real hookspec
    stray = [
        n
        for n, o in vars(hookspecs).items()
        if n.startswith("gradhub_") and inspect.isfunction(o) and n not in HOOKS
    ]
    assert not stray, f"gradhub_* functions in hookspecs without @hookspec: {stray}"


def test_hook_order_lists_every_hook() -> None:
    assert sorted(hookspecs.HOOK_ORDER) == HOOKS
    assert sorted(plugins._REGISTRARS) == HOOKS


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_has_a_docstring(hook: str) -> None:
    doc = inspect.getdoc(_hookspecs()[hook]) or ""
    assert len(doc.split()) >= 5, f"{hook}: missing or trivial docstring"


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_has_a_heading_in_the_hook_reference(hook: str) -> None:
    section = _section_of(hook)
    # the section gives the signature and documents every public method of the registrar
    assert f"def {hook}(register" in section, f"{hook}: the section shows no signature"
    registrar = plugins._REGISTRARS[hook]
    assert registrar.__name__ in section, f"{hook}: {registrar.__name__} is not documented"
    methods = [m for m, f in vars(registrar).items() if not m.startswith("_") and callable(f)]
    assert methods, f"{registrar.__name__} has no public methods"
    for m in methods:
        assert f"register.{m}" in section, f"{hook}: `register.{m}` is not described in its section"


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_mentioned_by_a_test(hook: str) -> None:
    mentions = [
        p.name
        for p in sorted(TESTS.rglob("*.py"))
        if p.resolve() != Path(__file__).resolve() and hook in p.read_text(encoding="utf-8")
    ]
    assert mentions, f"{hook}: no test under tests/ mentions it"
