"""gradhub-nn-ops: losses functions."""

from __future__ import annotations

from typing import Any


def register_functions(register: Any) -> None:
    """Register the losses functions."""
