"""A plugin whose hook raises after it has registered a function."""

from __future__ import annotations

from typing import Any

from gradhub import hookimpl


def _identity(xp: Any, x: Any) -> Any:
    return x


@hookimpl
def gradhub_add_functions(register: Any) -> None:
    """Register ``BrokenIdentity``, then fail: the registration must not be kept."""
    register.function("BrokenIdentity", _identity, doc="x (never registered: the hook fails).")
    raise RuntimeError("gradhub-broken: this hook fails on purpose")
