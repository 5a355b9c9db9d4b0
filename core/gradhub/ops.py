"""Calling registered functions by name, with a cache that the registry invalidates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .registry import REGISTRY

_cache: dict[str, Any] = {}
REGISTRY.listeners.append(_cache.clear)


def fdef(name: str) -> Any:
    """The FunctionDef of ``name`` (loads plugins on first use), cached."""
    f = _cache.get(name)
    if f is not None:
        return f
    gen = REGISTRY.generation
    f = REGISTRY.get(name)
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
        return _apply(f, args, {**f.attrs, **attrs} if attrs else f.attrs)
    return f.api(*args, **attrs)


def kernel(name: str, like: Any) -> Any:
    """The forward kernel of the function ``name`` for the device the array ``like`` lives on:
    a device plugin's kernel for that device kind (``register.kernel``), else the generic one.

    Array-level rules call other functions' kernels through this (``kernel("Deconvolution",
    x)(xp, gy, w, ...)``), so a device plugin's faster kernels serve them as they serve calls.

    Example::

        >>> import numpy as np
        >>> from gradhub.ops import kernel
        >>> kernel("Neg", np.ones(2))(np, np.ones(2))
        array([-1., -1.])
    """
    f = _cache.get(name) or fdef(name)
    kernels = f.kernels
    if kernels:
        dt = REGISTRY.by_array_type.get(type(like))
        if dt is not None:
            return kernels.get(dt.kind, f.forward)
    return f.forward


#: ``gradhub.graph.apply``: graph sits above this module (through Variable) and binds it here when
#: imported (see "Layers" in docs/design.md)
_apply: Any = None


def bind_apply(apply: Any) -> None:
    """Make ``apply`` the function that :func:`call` and :func:`prim` apply primitives with
    (gradhub.graph calls it)."""
    global _apply
    _apply = apply


def prim(name: str, inputs: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
    """Apply the function ``name`` to ``inputs`` with complete ``attrs``, skipping argument
    parsing (used by the Variable operators)."""
    f = _cache.get(name) or fdef(name)
    if f.kind != "primitive":
        return f.api(*inputs, **attrs)
    if len(attrs) != len(f.attrs):
        attrs = {**f.attrs, **attrs}
    return _apply(f, inputs, attrs)


_REAL_PY = (int, float, bool)
_REAL_NP = (np.integer, np.floating, np.bool_)


def real_scalar(fname: str, name: str, value: Any) -> Any:
    """``value`` checked as the real scalar argument ``name`` of the function ``fname``: a Python
    or numpy int, float or bool (returned as it is) or a 0-d real array (returned as its numpy
    scalar); anything else (None, complex numbers, arrays, Variables) raises a TypeError naming
    the function and the argument."""
    if type(value) in _REAL_PY or isinstance(value, _REAL_NP):
        return value
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf":
        return value[()]
    shape = getattr(value, "shape", None)
    what = (
        f"{type(value).__name__} of shape {tuple(shape)}"
        if shape is not None
        else repr(value)
        if value is None or isinstance(value, complex)
        else type(value).__name__
    )
    raise TypeError(
        f"{fname}(): argument {name!r} must be a real number (a Python or numpy int, float or "
        f"bool, or a 0-d real array), got {what}; for an array or Variable operand use the "
        "elementwise function or the operator instead"
    )


def with_real_scalars(fdef: Any, names: Sequence[str] = ("val",)) -> Any:
    """Make ``fdef``'s public callable (``F.add_scalar``) check its attributes ``names`` with
    :func:`real_scalar`; returns ``fdef``. Only calls through that callable pay: the Variable
    operators and rules apply the function directly."""
    inner = fdef.api
    attrs = list(fdef.attrs)
    n_in = len(fdef.inputs)
    checks = [(n, n_in + attrs.index(n)) for n in names]
    fname = fdef.snake

    def api(*args: Any, **kw: Any) -> Any:
        for name, pos in checks:
            if len(args) > pos:
                v = real_scalar(fname, name, args[pos])
                if v is not args[pos]:
                    args = (*args[:pos], v, *args[pos + 1 :])
            elif name in kw:
                kw[name] = real_scalar(fname, name, kw[name])
        return inner(*args, **kw)

    return replace_api(fdef, api)


def replace_api(fdef: Any, api: Any) -> Any:
    """Install ``api`` as ``fdef``'s public callable (``gradhub.functions.<snake>``), with the
    name, docstring and signature of the callable it replaces, which it usually calls for the
    common case; returns ``fdef``."""
    inner = fdef.api
    for attr in ("__name__", "__qualname__", "__doc__", "__signature__"):
        if hasattr(inner, attr):
            setattr(api, attr, getattr(inner, attr))
    api.fdef = fdef
    fdef.api = api
    return fdef
