"""nnabla's parametric functions: ``import gradhub.compat.nnabla.parametric_functions as PF``.

Every parametric function registered in gradhub (``gradhub.parametric_functions``:
``PF.convolution``, ``PF.affine``...; nnabla names, arguments and parameter names such as
``conv1/conv/W``) is offered here. Its result and the parameters it creates are
:class:`gradhub.compat.nnabla.Variable` objects (nnabla semantics: ``.g`` is an array).

Example::

    >>> import numpy as np
    >>> import gradhub.compat.nnabla as nn
    >>> import gradhub.compat.nnabla.parametric_functions as PF
    >>> h = PF.affine(nn.Variable((4, 3)), 5, name="fc")
    >>> h.shape, sorted(nn.get_parameters())
    ((4, 5), ['fc/affine/W', 'fc/affine/b'])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import parameters as _parameters
from ... import parametric_functions as _native
from .._common import adopt, wrapped_attribute
from ._variable import Variable

_wrappers: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {}


def _wrap(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        out = adopt(fn(*args, **kwargs), Variable)
        for p in _parameters.get_parameters(grad_only=False).values():
            adopt(p, Variable)
        return out

    wrapped.__name__ = wrapped.__qualname__ = name
    wrapped.__doc__ = fn.__doc__
    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapped


def __getattr__(name: str) -> Any:
    return wrapped_attribute(__name__, _native, name, _wrappers, lambda fn: _wrap(fn, name))


def __dir__() -> list[str]:
    return _native.__dir__()
