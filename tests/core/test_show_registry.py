"""``show_registry``'s rule column: overridden rules and replaced functions without a rule."""

from __future__ import annotations

import gradhub as gh
import pytest
from gradhub import plugins

pytestmark = pytest.mark.usefixtures("fresh_plugins")


def _show_registry_line(name: str) -> str:
    import io

    from gradhub.registry import show_registry

    buf = io.StringIO()
    show_registry(file=buf)
    return next(ln for ln in buf.getvalue().splitlines() if ln.startswith(name + " "))


def test_show_registry_marks_an_overridden_rule_as_the_cli_does() -> None:
    """Formerly: show_registry printed ``yes (module __main__)`` without ``[overridden]``."""
    gh.register("Neg", lambda go, *rest: [-go[0]], override=True)
    assert f"yes (module {__name__}) [overridden]" in _show_registry_line("Neg")


def test_show_registry_rule_cell_of_a_replaced_function_without_rule() -> None:
    """Formerly: a function replaced with override=True and no rule showed ``none ()``."""
    import types

    def functions(register: plugins.FunctionRegistrar) -> None:
        register.function("Neg", lambda xp, x: -x, override=True)

    mod = types.ModuleType("neg_norule")
    mod.gradhub_add_functions = gh.hookimpl(functions)  # type: ignore[attr-defined]
    plugins.load_plugins(extra=[("neg_norule", mod)])
    line = _show_registry_line("Neg")
    assert "none [overridden]" in line and "()" not in line and "no rule" in line
