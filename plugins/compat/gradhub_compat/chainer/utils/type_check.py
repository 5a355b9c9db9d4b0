"""chainer's ``chainer.utils.type_check`` for ``check_type_forward`` of user functions, in
chainer's light mode: ``in_types`` holds each input's actual ``shape``, ``dtype``, ``ndim`` and
``size``, so a condition such as ``in_types[0].dtype == numpy.float32`` is a plain bool, and
:func:`expect` raises :class:`InvalidType` for a false one. chainer's symbolic expressions (the
text of the failed condition in the message) are not reproduced: the message names the function
and the position of the condition.

Example::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> from gradhub_compat.chainer.utils import type_check
    >>> class Double(chainer.FunctionNode):
    ...     def check_type_forward(self, in_types):
    ...         type_check.expect(in_types.size() == 1, in_types[0].dtype.kind == "f")
    ...     def forward(self, inputs):
    ...         return inputs[0] * 2,
    >>> Double().apply((np.array([1, 2]),))
    Traceback (most recent call last):
    ...
    gradhub_compat.chainer.utils.type_check.InvalidType: ...
"""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["InvalidType", "argname", "eval", "expect", "same_types"]


class InvalidType(Exception):
    """A condition of ``check_type_forward`` does not hold (as chainer's ``InvalidType``)."""

    def __init__(self, expect: str, actual: str, msg: str | None = None) -> None:
        if msg is None:
            msg = f"Expect: {expect}\nActual: {actual}"
        super().__init__(msg)
        self.expect = expect
        self.actual = actual


def _caller_function() -> str:
    """The label of the function whose ``check_type_forward`` is running, for messages."""
    frame = inspect.currentframe()
    try:
        f = frame.f_back if frame is not None else None
        while f is not None:
            obj = f.f_locals.get("self")
            if f.f_code.co_name == "check_type_forward" and obj is not None:
                return str(getattr(obj, "label", type(obj).__name__))
            f = f.f_back
    finally:
        del frame
    return "a function"


def expect(*bool_exprs: Any) -> None:
    """Raise :class:`InvalidType` unless every condition is true."""
    for k, cond in enumerate(bool_exprs):
        if not bool(cond):
            raise InvalidType(
                f"condition {k + 1} of {len(bool_exprs)} passed to type_check.expect",
                "False",
                f"\nInvalid operation is performed in: {_caller_function()} (Forward)\n\n"
                f"Expect: condition {k + 1} of {len(bool_exprs)} passed to type_check.expect "
                "holds\nActual: it is False",
            )


def same_types(*arrays: Any) -> bool:
    """Whether the inputs have one array type (always true on one device)."""
    return len({type(a) for a in arrays}) <= 1


def eval(exp: Any) -> Any:
    """The value of ``exp`` (in light mode, ``exp`` is already a value)."""
    return exp


def argname(in_types: Any, names: Any) -> None:
    """Name the inputs for messages (accepted; the light mode does not use the names)."""
