"""nnabla's ``nnabla.parameter``: ``get_parameter_or_create`` and the parameter table helpers.

``import gradhub_compat.nnabla.parameter as P`` (or ``from ... import get_parameter_or_create``).
The table is gradhub's (:mod:`gradhub.parameters`): the same one ``PF`` functions and
``nn.get_parameters`` use. Names may contain ``/`` (nested scopes), as nnabla's.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> from gradhub_compat.nnabla.parameter import get_parameter_or_create
    >>> with nn.parameter_scope("doc_example"):
    ...     w = get_parameter_or_create("w", (2,), np.array([1.0, 2.0]))
    ...     w.d
    array([1., 2.], dtype=float32)
    >>> with nn.parameter_scope("doc_example"):
    ...     nn.clear_parameters()
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gradhub import parameters as _parameters
from gradhub.modes import is_recording

from . import clear_parameters, get_parameters, load_parameters, parameter_scope, save_parameters
from ._variable import Variable, _Unlinked

__all__ = [
    "clear_parameters",
    "get_parameter",
    "get_parameter_or_create",
    "get_parameters",
    "load_parameters",
    "parameter_scope",
    "pop_parameter",
    "save_parameters",
    "set_parameter",
]


def _full(key: str) -> str:
    return _parameters.full_name("/".join(n for n in str(key).split("/") if n))


def get_parameter(key: str) -> Variable | None:
    """The parameter ``key`` (relative to the current scope), or None."""
    p = _parameters.parameter_table().get(_full(key))
    return None if p is None else _adopted(p)


def set_parameter(key: str, param: Any) -> None:
    """Register the Variable ``param`` under ``key`` (relative to the current scope)."""
    _parameters.set_parameter("/".join(n for n in str(key).split("/") if n), param)


def pop_parameter(key: str) -> Variable | None:
    """Remove the parameter ``key`` from the table and return it (None if absent)."""
    p = _parameters.parameter_table().pop(_full(key), None)
    return None if p is None else _adopted(p)


def _adopted(p: Any) -> Any:
    from .._common import adopt

    return adopt(p, Variable)


def _create(name: str, shape: Any, initializer: Any, need_grad: bool) -> Variable:
    where = f"nnabla get_parameter_or_create({name!r})"
    if initializer is None:
        if shape is None:
            raise ValueError(f"{where}: give a shape or an initializer")
        return Variable(tuple(shape), need_grad=need_grad)
    if isinstance(initializer, np.ndarray):
        if shape is not None and tuple(shape) != initializer.shape:
            raise ValueError(
                f"{where}: the initializer array has shape {initializer.shape} but shape "
                f"{tuple(shape)} was requested"
            )
        return Variable.from_numpy_array(initializer, need_grad=need_grad)
    if callable(initializer):
        if shape is None:
            raise ValueError(f"{where}: an initializer function needs a shape")
        init: Callable[..., Any] = initializer
        return Variable.from_numpy_array(init(shape=[int(s) for s in shape]), need_grad=need_grad)
    raise ValueError(
        f"{where}: initializer must be a numpy array or an initializer (a callable taking the "
        f"shape), got {type(initializer).__name__}"
    )


def get_parameter_or_create(
    name: str,
    shape: Any = None,
    initializer: Any = None,
    need_grad: bool = True,
    as_need_grad: bool | None = None,
) -> Variable:
    """The parameter ``name`` of the current scope, created if it does not exist, as nnabla's.

    ``initializer``: None (zeros of ``shape``), a numpy array (its values; ``shape`` may be
    None) or an initializer called with ``shape=[...]``. An existing parameter must have the
    requested shape; a different ``need_grad`` overwrites its flag (values kept). The result is
    an unlinked Variable sharing the parameter's data and gradient, with ``need_grad`` =
    ``as_need_grad`` (default ``need_grad``; False inside ``nn.no_grad()``): changing its
    ``need_grad`` does not change the registered parameter.
    """
    if as_need_grad is None:
        as_need_grad = need_grad
    if not is_recording():
        as_need_grad = False
    key = "/".join(n for n in str(name).split("/") if n)
    full = _parameters.full_name(key)
    param = _parameters.parameter_table().get(full)
    if param is not None:
        if shape is not None and param.shape != tuple(int(s) for s in shape):
            raise ValueError(
                f"nnabla get_parameter_or_create: the parameter {full!r} exists with shape "
                f"{param.shape}, but shape {tuple(shape)} was requested (nn.clear_parameters() "
                "forgets the parameters)"
            )
        if bool(need_grad) != param.need_grad:
            param.need_grad = bool(need_grad)
    else:
        param = _create(full, shape, initializer, bool(need_grad))
        param.name = full
        _parameters.parameter_table()[full] = param
    v = _Unlinked.of(param, bool(as_need_grad), None)
    v.name = key.split("/")[-1]
    return v
