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
from gradhub.modes import is_recording

from .._common import adopt, wrapped_attribute
from ._auto_forward import get_auto_forward, kept_unless_auto_forward
from ._variable import Variable, _Unlinked

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


def _nnabla_use(p: Any, need_grad: bool) -> Any:
    """nnabla's use of a parameter in a parametric function (``get_parameter_or_create(name,
    shape, init, need_grad)``): the registered flag becomes ``need_grad`` (a trainable layer
    makes its parameters trainable again), and the function gets an unlinked Variable sharing
    the parameter's data and gradient, so that a ``need_grad`` set on the registered parameter
    afterwards does not change the graphs built before (False inside ``nn.no_grad()``)."""
    p = adopt(p, Variable)
    if p.need_grad != need_grad:
        p.need_grad = need_grad
    v = _Unlinked.of(p, need_grad and is_recording(), None)
    v.name = p.name
    return v


def _wrap(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if name == "affine":
            args, kwargs = _affine_base_axis(fn, args, kwargs)
        with _parameters.parameter_use(_nnabla_use):
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


def parametric_function_api(
    scope_name: str | None = None, param_desc: Any = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator for user-defined parametric functions, as nnabla's: the decorated function is
    called under ``parameter_scope(scope_name)`` (default: the function's name) and gets an
    extra last argument ``name=None``; with ``name`` given, that scope comes under
    ``parameter_scope(name)``. The function must take ``fix_parameters`` (as nnabla requires;
    otherwise ``AssertionError`` naming the function). ``param_desc`` (a list of
    ``(name, description, shape, need_grad)``) is added to the docstring.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> from gradhub_compat.nnabla.parameter import get_parameter_or_create
        >>> nn.clear_parameters()
        >>> @PF.parametric_function_api("scale")
        ... def scale(x, fix_parameters=False):
        ...     return x * get_parameter_or_create("a", (1,), np.ones(1, np.float32))
        >>> y = scale(nn.Variable((2,)), name="s1")
        >>> list(nn.get_parameters())
        ['s1/scale/a']
        >>> nn.clear_parameters()
    """

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        import functools
        from contextlib import nullcontext

        from . import parameter_scope

        fname = getattr(func, "__name__", "parametric function")
        scope = fname if scope_name is None else scope_name
        sig = inspect.signature(func)
        if "fix_parameters" not in sig.parameters:
            raise AssertionError(
                f"nnabla parametric_function_api: a parametric function must take "
                f"`fix_parameters` as an argument. `{fname}{sig}` doesn't have it."
            )
        params = list(sig.parameters.values())
        kinds = {p.kind for p in params}
        name_kind = (
            inspect.Parameter.KEYWORD_ONLY
            if kinds & {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.KEYWORD_ONLY}
            else inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        extra = inspect.Parameter("name", name_kind, default=None)
        at = next(
            (i for i, p in enumerate(params) if p.kind == inspect.Parameter.VAR_KEYWORD),
            len(params),
        )
        new_sig = sig.replace(parameters=[*params[:at], extra, *params[at:]])

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = new_sig.bind(*args, **kwargs)
            name = bound.arguments.pop("name", None)
            with parameter_scope(name) if name is not None else nullcontext():
                with parameter_scope(scope):
                    return func(*bound.args, **bound.kwargs)

        del wrapper.__wrapped__  # type: ignore[attr-defined]  # show the new signature
        wrapper.__signature__ = new_sig  # type: ignore[attr-defined]
        if param_desc:
            lines = [
                f"    * {d[0]} (``need_grad={d[3]}``) : {d[1]}. (shape: ``{d[2]}``)"
                for d in param_desc
            ]
            wrapper.__doc__ = (
                (func.__doc__ or "")
                + f"\n\nParameters registered in the scope ``{scope!r}``:\n\n"
                + "\n".join(lines)
            )
        wrapper.__parametric_function_api_base__ = func  # type: ignore[attr-defined]
        wrapper.__scope_name__ = scope  # type: ignore[attr-defined]
        return wrapper

    return decorate


def __getattr__(name: str) -> Any:
    return wrapped_attribute(__name__, _native, name, _wrappers, lambda fn: _wrap(fn, name))


def __dir__() -> list[str]:
    return _native.__dir__()
