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


def fdef(name: str) -> Any:
    """The FunctionDef of ``name`` (loads plugins on first use), cached."""
    global _cache_gen
    if _cache_gen != REGISTRY.generation:
        _cache.clear()
        _cache_gen = REGISTRY.generation
    f = _cache.get(name)
    if f is None:
        try:
            f = REGISTRY.get(name)
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


def api(name: str) -> Any:
    """The callable of the function ``name`` (loads plugins on first use)."""
    return fdef(name).api


def call(name: str, *args: Any, **attrs: Any) -> Any:
    """Call the registered function ``name`` with inputs ``args`` and attributes ``attrs``."""
    return fdef(name).api(*args, **attrs)


_apply: Any = None


def prim(name: str, inputs: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
    """Apply the function ``name`` to ``inputs`` with complete ``attrs``, skipping argument
    parsing (used by the Variable operators)."""
    global _apply
    f = fdef(name)
    if f.kind != "primitive":
        return f.api(*inputs, **attrs)
    if len(attrs) != len(f.attrs):
        attrs = {**f.attrs, **attrs}
    if _apply is None:
        from .graph import apply  # graph imports this module through variable

        _apply = apply
    return _apply(f, inputs, attrs)
