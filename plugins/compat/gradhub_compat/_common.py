"""Helpers shared by the compatibility layers.

A layer's Variable class is a subclass of :class:`gradhub.Variable` with no slots of its own, so a
native Variable produced by a registered function or by the engine can be *adopted* (its class
switched in place) without copying anything: it stays the same graph node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from gradhub.variable import Variable as NativeVariable

V = TypeVar("V", bound=NativeVariable)

#: Native binary operators (the Variable and one operand, on either side).
BINARY_OPERATORS = (
    "__add__",
    "__radd__",
    "__sub__",
    "__rsub__",
    "__mul__",
    "__rmul__",
    "__truediv__",
    "__rtruediv__",
    "__pow__",
    "__rpow__",
    "__matmul__",
    "__rmatmul__",
)

#: Native Variable methods whose results are Variables the layer must adopt.
OPERATORS = (
    *BINARY_OPERATORS,
    "__neg__",
    "__pos__",
    "__abs__",
    "__getitem__",
    "reshape",
    "sum",
    "to",
    "detach",
    "get_unlinked_variable",
)


def host_array(a: Any) -> Any:
    """``a`` as a numpy array: a device array (CuPy's, or any with ``get()``) is copied to the
    host, anything else goes through ``numpy.asarray``.

    Example::

        >>> host_array([1.0, 2.0])
        array([1., 2.])
    """
    import numpy as np

    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


def device_array(a: Any) -> Any:
    """``a`` itself where it is an array of a registered device other than the CPU (a CuPy
    array under gradhub-cuda: never copied to the host), else ``numpy.asarray(a)``.

    Example::

        >>> device_array([1, 2])
        array([1, 2])
    """
    import numpy as np
    from gradhub.registry import REGISTRY

    if not isinstance(a, np.ndarray) and REGISTRY.array_device(a) is not None:
        return a
    return np.asarray(a)


def adopt(obj: Any, cls: type[V]) -> Any:
    """Switch native Variables in ``obj`` (a Variable, or a list/tuple of them) to ``cls``.

    Only plain native Variables are switched; Variables of another layer are left alone.
    """
    if type(obj) is NativeVariable:
        obj.__class__ = cls
        return obj
    if isinstance(obj, tuple):
        return tuple(adopt(o, cls) for o in obj)
    if isinstance(obj, list):
        return [adopt(o, cls) for o in obj]
    return obj


def _operator(name: str, cls: type[V]) -> Callable[..., Any]:
    base = getattr(NativeVariable, name)

    def method(self: NativeVariable, *args: Any, **kwargs: Any) -> Any:
        return adopt(base(self, *args, **kwargs), cls)

    method.__name__ = name
    method.__qualname__ = f"{cls.__name__}.{name}"
    method.__doc__ = base.__doc__
    return method


def install_operators(cls: type[V]) -> type[V]:
    """Class decorator: the operators of ``cls`` return ``cls`` instances."""
    for name in OPERATORS:
        if name not in cls.__dict__:
            setattr(cls, name, _operator(name, cls))
    return cls


def wrap_function(fn: Callable[..., Any], cls: type[V], name: str) -> Callable[..., Any]:
    """``fn`` with its Variable results adopted into ``cls`` (signature and docstring kept)."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return adopt(fn(*args, **kwargs), cls)

    wrapped.__name__ = name
    wrapped.__qualname__ = name
    wrapped.__doc__ = fn.__doc__
    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    sig = getattr(fn, "__signature__", None)
    if sig is not None:
        wrapped.__signature__ = sig  # type: ignore[attr-defined]
    return wrapped


def call_native(name: str, *args: Any, **attrs: Any) -> Any:
    """Call the registered function ``name`` (CamelCase or snake_case)."""
    from gradhub.ops import call

    return call(name, *args, **attrs)


def wrapped_attribute(
    module: str,
    native: Any,
    name: str,
    cache: dict[str, tuple[Callable[..., Any], Callable[..., Any]]],
    wrap: Callable[[Callable[..., Any]], Callable[..., Any]],
) -> Callable[..., Any]:
    """``native.<name>`` wrapped by ``wrap`` for a compat module's ``__getattr__``; the wrapper is
    cached until the native function changes (plugins reloaded)."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        fn = getattr(native, name)
    except AttributeError as e:
        raise AttributeError(f"module {module!r} has no function {name!r}: {e}") from None
    cached = cache.get(name)
    if cached is None or cached[0] is not fn:
        cached = cache[name] = (fn, wrap(fn))
    return cached[1]
