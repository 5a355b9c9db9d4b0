"""Elementwise functions as one line of numpy: the expression a plan writes instead of a call.

A plan (:mod:`gradhub.plan`) runs each function's kernel and first-order rule by calling them. For
an elementwise function whose kernel is a numpy expression, such as ``lambda xp, x: xp.sin(x)``,
and whose rule is one too (``lambda xp, g, x, y: g * xp.cos(x)``), the generated code can write
that expression itself, ``v4 = xp.sin(v3)``, saving a Python call and the checks of its result
(the result of an elementwise expression has its input's type, shape and dtype).

:func:`traced` marks such a function: it sets ``fn.plan_expression``, which gives the expression
as Python source for given local names, found by calling ``fn`` once on symbols in place of the
arrays (and of ``xp``): every operator and every ``xp.<ufunc>(...)`` call it makes is written down
in the order it makes them, fully parenthesized, with Python ``int`` and ``float`` constants as
literals (exact: ``repr`` round-trips). Anything else refuses the expression (``None``: the plan
calls the function): an attribute of ``xp`` that is not a numpy ufunc, a keyword argument, a
constant of another type (a numpy scalar, an array), reading an attribute of an array, a
comparison used as a truth value, a non-finite constant. ``None`` given for a name stands for an
array the call would get as ``None`` (a rule's unkept input or output), exactly as the plan calls
the rule.

The function must be elementwise (gradhub's ``elementwise=True``: the output has the input's
shape, and, for a floating input, its dtype), and, with ``xp`` numpy, compute exactly the traced
expression: a plan runs the expression, not the function.

Example::

    >>> from gradhub.expression import traced
    >>> f = traced(lambda xp, g, x, y: -(g * xp.sin(x)) + 1.0)
    >>> f.plan_expression("gy", "x", None)
    '((-(gy * xp.sin(x))) + 1.0)'
    >>> g = traced(lambda xp, x: xp.where(x > 0, x, 0.0))  # not a ufunc: no expression
    >>> g.plan_expression("x") is None
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import numpy as np

__all__ = ["expression", "traced"]

_F = TypeVar("_F", bound=Callable[..., Any])


class _Refused(BaseException):
    """The traced function did something an expression cannot say (a BaseException: the
    function's own ``except Exception`` does not take it for one of its errors)."""


def _src(v: Any) -> str:
    if isinstance(v, _Sym):
        return v.src
    if type(v) in (int, float) and math.isfinite(v):
        return repr(v)
    raise _Refused(f"a constant of type {type(v).__name__}")


def _binary(op: str, reflected: bool = False) -> Callable[[_Sym, Any], _Sym]:
    def method(self: _Sym, other: Any) -> _Sym:
        a, b = (_src(other), self.src) if reflected else (self.src, _src(other))
        return _Sym(f"({a} {op} {b})")

    return method


class _Sym:
    """An array of the traced call, by its expression."""

    __slots__ = ("src",)
    __hash__ = object.__hash__

    def __init__(self, src: str) -> None:
        self.src = src

    __add__, __radd__ = _binary("+"), _binary("+", True)
    __sub__, __rsub__ = _binary("-"), _binary("-", True)
    __mul__, __rmul__ = _binary("*"), _binary("*", True)
    __truediv__, __rtruediv__ = _binary("/"), _binary("/", True)
    __pow__, __rpow__ = _binary("**"), _binary("**", True)
    __lt__, __le__ = _binary("<"), _binary("<=")
    __gt__, __ge__ = _binary(">"), _binary(">=")

    def __neg__(self) -> _Sym:
        return _Sym(f"(-{self.src})")

    def __eq__(self, other: object) -> bool:  # (an identity test would be silently wrong)
        raise _Refused("==")

    def __ne__(self, other: object) -> bool:
        raise _Refused("!=")

    def __bool__(self) -> bool:
        raise _Refused("a truth value")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # (introspection: hasattr() answers False)
            raise AttributeError(name)
        raise _Refused(f"the attribute {name!r} of an array")


class _Module:
    """``xp`` of the traced call: its numpy ufuncs, written as ``xp.<name>(...)``."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Callable[..., _Sym]:
        if name.startswith("_"):  # (introspection: hasattr() answers False)
            raise AttributeError(name)
        if not isinstance(getattr(np, name, None), np.ufunc):
            raise _Refused(f"xp.{name} (not a numpy ufunc)")

        def call(*args: Any, **kwargs: Any) -> _Sym:
            if kwargs:
                raise _Refused(f"keyword arguments of xp.{name}")
            return _Sym(f"xp.{name}({', '.join(_src(a) for a in args)})")

        return call


_MODULE = _Module()


def expression(fn: Callable[..., Any], *names: str | None) -> str | None:
    """The numpy expression that ``fn`` (a kernel ``fn(xp, x)`` or a one-input rule formula
    ``fn(xp, gy, x, y)``) computes, as Python source on the local names ``names`` (``None``: an
    array the call gets as ``None``); None where it cannot be written (see
    :mod:`gradhub.expression`).

    Example::

        >>> from gradhub.expression import expression
        >>> expression(lambda xp, g, x, y: g * xp.cos(x), "gy", "x", None)
        '(gy * xp.cos(x))'
    """
    try:
        out = fn(_MODULE, *(None if n is None else _Sym(n) for n in names))
    except (_Refused, Exception):
        return None
    return out.src if isinstance(out, _Sym) else None


def traced(fn: _F) -> _F:
    """Mark ``fn`` (a kernel ``fn(xp, x)`` or a one-input rule ``fn(xp, gy, x, y)`` of an
    elementwise function, written as one numpy expression) as its expression: sets
    ``fn.plan_expression(*names)``, the expression as Python source on those local names (``xp``:
    numpy), or None where it cannot be written (see :mod:`gradhub.expression`). Returns ``fn``.

    Example::

        >>> from gradhub.expression import traced
        >>> traced(lambda xp, x: xp.exp(x) * 0.5).plan_expression("v1")
        '(xp.exp(v1) * 0.5)'
    """

    fn.plan_expression = partial(expression, fn)  # type: ignore[attr-defined]
    return fn
