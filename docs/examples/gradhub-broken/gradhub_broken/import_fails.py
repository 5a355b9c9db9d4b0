"""A plugin module that fails at import time (a missing dependency)."""

from __future__ import annotations

import gradhub_broken_missing_dependency  # noqa: F401  (deliberately not installable)
