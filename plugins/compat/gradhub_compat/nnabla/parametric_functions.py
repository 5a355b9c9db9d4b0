"""nnabla's parametric functions: ``import gradhub_compat.nnabla.parametric_functions as PF``.

Every parametric function registered in gradhub (``gradhub.parametric_functions``:
``PF.convolution``, ``PF.affine``...; nnabla names, arguments and parameter names such as
``conv1/conv/W``) is offered here. Its result and the parameters it creates are
:class:`gradhub_compat.nnabla.Variable` objects (nnabla semantics: ``.g`` is an array).

Example::

    >>> import numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.parametric_functions as PF
    >>> h = PF.affine(nn.Variable((4, 3)), 5, name="fc")
    >>> h.shape, sorted(nn.get_parameters())
    ((4, 5), ['fc/affine/W', 'fc/affine/b'])
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from gradhub import parameters as _parameters
from gradhub import parametric_functions as _native

from .._common import adopt, wrapped_attribute
from ._auto_forward import get_auto_forward, kept_unless_auto_forward
from ._variable import Variable

_wrappers: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {}


def _batch_normalization(fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    """``PF.batch_normalization`` that, while auto_forward is off (nnabla's default), leaves the
    running statistics ``bn/mean`` and ``bn/var`` as they were before the build (their initial
    values for new parameters): only ``forward()`` updates them."""
    if get_auto_forward():
        return fn(*args, **kwargs)
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        return fn(*args, **kwargs)  # the native call names the problem
    if not bound.arguments.get("batch_stat", True):
        return fn(*args, **kwargs)
    name = bound.arguments.get("name")
    keys = [
        _parameters.full_name("bn/" + k if name is None else f"{name}/bn/{k}")
        for k in ("mean", "var")
    ]
    stats = [_parameters.parameter_table().get(k) for k in keys]
    if any(p is None for p in stats):
        # new parameters: created (with their initial values) by an inference-mode call, which
        # updates nothing
        bound.arguments["batch_stat"] = False
        if "output_stat" in bound.arguments:  # the inference mode has no batch statistics
            bound.arguments["output_stat"] = False
        fn(*bound.args, **bound.kwargs)
        stats = [_parameters.parameter_table().get(k) for k in keys]
    with kept_unless_auto_forward([p._data for p in stats if p is not None]):
        return fn(*args, **kwargs)


def _affine_base_axis(fn: Callable[..., Any], args: Any, kwargs: Any) -> tuple[Any, Any]:
    """``PF.affine``'s arguments with a negative ``base_axis`` counted from the end of the
    input's shape (-1: the last axis), as nnabla."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        return args, kwargs  # the native call names the problem
    a = bound.arguments
    ba: Any = a.get("base_axis", 1)
    inp: Any = a.get("inp")
    if isinstance(ba, int) and not isinstance(ba, bool) and ba < 0 and hasattr(inp, "shape"):
        nd = len(inp.shape)
        if ba < -nd:
            raise ValueError(
                f"nnabla PF.affine: base_axis={ba} is out of range for an input of shape "
                f"{tuple(inp.shape)} (from -{nd} to {nd - 1})"
            )
        a["base_axis"] = ba + nd
    return bound.args, bound.kwargs


def _wrap(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if name == "affine":
            args, kwargs = _affine_base_axis(fn, args, kwargs)
        if name == "batch_normalization":
            out = adopt(_batch_normalization(fn, args, kwargs), Variable)
        else:
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
