"""Parametric functions registered by plugins (``PF.affine``, ``PF.convolution``...).

They create their parameters under the current :func:`gradhub.parameter_scope` with nnabla's
names (``NAME/affine/W``) on first call and reuse them afterwards.
"""

from __future__ import annotations

from typing import Any

from .registry import REGISTRY, _ensure_loaded


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    _ensure_loaded()
    pdef = REGISTRY.parametric.get(name)
    if pdef is None:
        raise AttributeError(
            f"module 'gradhub.parametric_functions' has no function {name!r} "
            f"(registered: {', '.join(sorted(REGISTRY.parametric)) or 'none'}; the library of "
            "parametric functions is the distribution gradhub-nn-ops)"
        )
    return pdef.fn


def __dir__() -> list[str]:
    _ensure_loaded()
    return sorted(REGISTRY.parametric)
