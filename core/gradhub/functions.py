"""Every registered function as a snake_case callable: ``gradhub.functions.affine`` etc.

Attributes are looked up in the registry on first access (which loads the plugins) and cached.

Example::

    >>> import gradhub.functions as F
    >>> import gradhub as gh
    >>> F.add2(gh.Variable([1.0]), gh.Variable([2.0])).d
    array([3.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from .registry import REGISTRY

_cached: set[str] = set()


def _forget() -> None:
    """Drop the cached callables (the registry changed wholesale)."""
    g = globals()
    for n in _cached:
        g.pop(n, None)
    _cached.clear()


REGISTRY.listeners.append(_forget)


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    gen = REGISTRY.generation
    try:
        fdef = REGISTRY.get(name)
    except LookupError as e:
        raise AttributeError(f"module 'gradhub.functions' has no function {name!r}: {e}") from None
    if gen == REGISTRY.generation:  # not loaded in between (that clears the cache)
        globals()[name] = fdef.api
        _cached.add(name)
    return fdef.api


def __dir__() -> list[str]:
    from .registry import _ensure_loaded

    _ensure_loaded()
    return sorted(REGISTRY.snake)
