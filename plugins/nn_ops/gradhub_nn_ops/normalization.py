"""gradhub-nn-ops: normalization functions."""

from __future__ import annotations

from typing import Any


def register_functions(register: Any) -> None:
    """Register the normalization functions."""
