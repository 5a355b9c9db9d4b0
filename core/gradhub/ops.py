"""Calling registered functions by name, with a cache that the registry invalidates."""

from __future__ import annotations

from typing import Any

from .errors import FunctionNotFoundError
from .registry import REGISTRY

_cache: dict[str, Any] = {}
_cache_gen = -1

#: Which distribution provides the functions that Variable operators dispatch to.
_OPERATOR_PROVIDERS = {"Pow2": "gradhub-nn-ops", "BatchMatmul": "gradhub-nn-ops",
                       "GetItem": "gradhub-nn-ops"}


def api(name: str) -> Any:
    """The callable of the function ``name`` (loads plugins on first use)."""
    global _cache_gen
    if _cache_gen != REGISTRY.generation:
        _cache.clear()
        _cache_gen = REGISTRY.generation
    f = _cache.get(name)
    if f is None:
        try:
            f = REGISTRY.get(name).api
        except FunctionNotFoundError as e:
            dist = _OPERATOR_PROVIDERS.get(name)
            if dist:
                raise FunctionNotFoundError(
                    f"this operation needs the function {name!r}, which the distribution "
                    f"{dist} provides: pip install {dist}"
                ) from e
            raise
        if _cache_gen == REGISTRY.generation:
            _cache[name] = f
    return f


def call(name: str, *args: Any, **attrs: Any) -> Any:
    """Call the registered function ``name`` with inputs ``args`` and attributes ``attrs``."""
    return api(name)(*args, **attrs)
