"""Calling registered functions by name, with a cache that the registry invalidates."""

from __future__ import annotations

from typing import Any

from .errors import FunctionNotFoundError
from .registry import REGISTRY, _graph_apply

_cache: dict[str, Any] = {}
REGISTRY.listeners.append(_cache.clear)

#: Which distribution provides the functions that Variable operators dispatch to.
_OPERATOR_PROVIDERS = {"Pow2": "gradhub-nn-ops", "BatchMatmul": "gradhub-nn-ops",
                       "GetItem": "gradhub-nn-ops"}


def fdef(name: str) -> Any:
    """The FunctionDef of ``name`` (loads plugins on first use), cached."""
    f = _cache.get(name)
    if f is not None:
        return f
    gen = REGISTRY.generation
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
    if gen == REGISTRY.generation:  # not loaded in between (the cache was cleared then)
        _cache[name] = f
    return f


def api(name: str) -> Any:
    """The callable of the function ``name`` (loads plugins on first use)."""
    return fdef(name).api


def call(name: str, *args: Any, **attrs: Any) -> Any:
    """Call the registered function ``name`` with inputs ``args`` and attributes ``attrs``.

    Rules call functions this way; the common form (every input positional, attributes by
    keyword) goes straight to the graph without parsing the arguments again.
    """
    f = _cache.get(name) or fdef(name)
    if len(args) == f.n_plain_inputs and (not attrs or attrs.keys() <= f.attrs.keys()):
        return (_apply or _load_apply())(f, args, {**f.attrs, **attrs} if attrs else f.attrs)
    return f.api(*args, **attrs)


_apply: Any = None


def prim(name: str, inputs: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
    """Apply the function ``name`` to ``inputs`` with complete ``attrs``, skipping argument
    parsing (used by the Variable operators)."""
    f = _cache.get(name) or fdef(name)
    if f.kind != "primitive":
        return f.api(*inputs, **attrs)
    if len(attrs) != len(f.attrs):
        attrs = {**f.attrs, **attrs}
    return (_apply or _load_apply())(f, inputs, attrs)


def _load_apply() -> Any:
    global _apply
    _apply = _graph_apply()  # graph imports this module through variable: found on first use
    return _apply
