"""gradhub: automatic differentiation to any order, built as a plugin architecture.

Importing gradhub changes no state: plugins are loaded on first use.

Example::

    >>> import gradhub as gh
    >>> x = gh.Variable([1.0, 2.0])
    >>> (g,) = gh.grad([(x ** 3.0).sum()], [x])
    >>> g.d
    array([ 3., 12.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from . import engine as _engine
from . import plugins  # noqa: F401  (binds the loader that the registry's lookups call)
from ._version import __version__
from .device import (
    Context,
    Device,
    DeviceType,
    context_scope,
    get_default_context,
    get_extension_context,
    set_default_context,
    tune_host_allocator,
)
from .dtypes import default_dtype, get_default_dtype, set_default_dtype
from .engine import backward, grad
from .errors import (
    BackwardRuleError,
    CaptureUnsupported,
    DeviceError,
    FunctionNotFoundError,
    GradcheckError,
    GradhubError,
    PluginError,
    PluginLoadWarning,
    RegistrationError,
    StateFileError,
)
from .hookspecs import hookimpl
from .modes import is_recording, no_grad
from .parallel import get_num_threads, set_num_threads
from .parameters import (
    clear_parameters,
    get_parameter_or_create,
    get_parameters,
    parameter_scope,
)
from .registry import Sample, register, registry_table, show_registry
from .variable import Variable, as_variable

__all__ = [
    "BackwardRuleError",
    "CaptureUnsupported",
    "Context",
    "Device",
    "DeviceError",
    "DeviceType",
    "Function",
    "FunctionNotFoundError",
    "GradcheckError",
    "GradhubError",
    "PluginError",
    "PluginLoadWarning",
    "RegistrationError",
    "Sample",
    "StateFileError",
    "Variable",
    "__version__",
    "as_variable",
    "backward",
    "checkpoint",
    "clear_parameters",
    "compile",
    "context_scope",
    "default_dtype",
    "from_dlpack",
    "get_default_context",
    "get_default_dtype",
    "get_extension_context",
    "get_num_threads",
    "get_parameter_or_create",
    "get_parameters",
    "grad",
    "hookimpl",
    "is_recording",
    "load_parameters",
    "no_grad",
    "parameter_scope",
    "register",
    "registry_table",
    "save_parameters",
    "seed",
    "set_default_context",
    "set_default_dtype",
    "set_num_threads",
    "show_registry",
    "tune_host_allocator",
]


#: public names defined in modules imported on first use (``import gradhub`` stays cheap)
_LAZY = {
    "Function": "custom",
    "compile": "plan",
    "checkpoint": "remat",
    "save_parameters": "state",
    "load_parameters": "state",
    "seed": "random",
    "from_dlpack": "dlpack",
}


def __getattr__(name: str) -> Any:
    # submodules that are imported on demand (``gh.testing.gradcheck``)
    if name in (
        "testing",
        "functions",
        "parametric_functions",
        "state",
        "random",
        "distributed",
        "plan",
        "capture",
    ):
        import importlib

        return importlib.import_module(f"gradhub.{name}")
    module = _LAZY.get(name)
    if module is not None:
        import importlib

        value = getattr(importlib.import_module(f"gradhub.{module}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gradhub' has no attribute {name!r}")


def _first_plan(y: Any) -> bool:
    """The engine's planner until :mod:`gradhub.plan` is imported: the first ``forward()`` of a
    static graph imports it (1-2 ms that a program which never re-runs a graph does not pay at
    start-up), which binds its own planner in place of this one, and runs that."""
    from . import plan  # noqa: F401  (binds the plans of static graphs into the engine)

    planner = _engine._planner
    return planner is not _first_plan and bool(planner(y))


# Variable.forward() plans through gradhub.plan, imported on its first call (see _first_plan);
# where gradhub.plan is imported already, its planner is bound and stays
if _engine._planner is None:
    _engine.bind_plans(_engine._plans, _first_plan)
