"""The nnabla compatibility layer: ``import gradhub_compat.nnabla as nn``.

Replace the import lines of an nnabla program and it runs on gradhub with nnabla's semantics::

    import gradhub_compat.nnabla as nn                          # import nnabla as nn
    import gradhub_compat.nnabla.functions as F                 # import nnabla.functions as F
    import gradhub_compat.nnabla.parametric_functions as PF     # ... as PF
    from gradhub_compat.nnabla.ext_utils import get_extension_context

What differs from the native API (see ``docs/migration-nnabla.md``): :class:`Variable` takes a
shape and defaults to ``need_grad=False``; ``.g`` is always an array (zeros before any backward);
``backward(grad=1, clear_buffer=False)`` keeps intermediate gradients; :func:`grad` always builds
a differentiable graph and gives zeros for inputs the outputs do not depend on.

Example (the n-th derivative program of nnabla's documentation)::

    >>> import numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.functions as F
    >>> x = nn.Variable.from_numpy_array(np.array([0.5, 1.0])).apply(need_grad=True)
    >>> y = x * x * x
    >>> dx = nn.grad([y], [x])[0]          # 3 x^2
    >>> ddx = nn.grad([dx], [x])[0]        # 6 x
    >>> ddx.d
    array([3., 6.], dtype=float32)
"""

from __future__ import annotations

import importlib
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from gradhub import parameters as _parameters
from gradhub.device import Context as _NativeContext
from gradhub.device import context_scope, current_context, set_default_context
from gradhub.engine import collect_graph as _collect_graph
from gradhub.engine import grad as _native_grad
from gradhub.engine import leaves_replaced as _leaves_replaced
from gradhub.engine import reexecute as _reexecute
from gradhub.errors import BackwardRuleError
from gradhub.modes import no_grad
from gradhub.variable import Variable as _NativeVariable

from .._common import adopt
from ._auto_forward import get_auto_forward as _get_auto_forward
from ._auto_forward import set_auto_forward as _set_auto_forward
from ._hooks import forward_with_hooks as _forward_with_hooks
from ._parameter_files import load_parameters, save_parameters
from ._variable import (
    NdArray,
    Variable,
    _buffer_owner,
    _Unlinked,
    freed_buffers_error,
    redraw_random_leaves,
)
from .ext_utils import NnablaContextConstructor as Context
from .logger import logger as logger  # nn.logger: the Logger, not the module, as nnabla

__all__ = [
    "Context",
    "NdArray",
    "Variable",
    "auto_forward",
    "clear_parameters",
    "context_scope",
    "forward_all",
    "get_auto_forward",
    "get_current_context",
    "get_parameters",
    "grad",
    "load_parameters",
    "no_grad",
    "parameter_scope",
    "save_parameters",
    "set_auto_forward",
    "set_default_context",
]

_SUBMODULES = (
    "function",
    "functions",
    "parametric_functions",
    "backward_functions",
    "ext_utils",
    "parameter",
    "solvers",
    "solver",
    "random",
    "initializer",
    "testing",
    "monitor",
    "utils",
    "config",
)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "seed":  # nnabla's nn.seed is nnabla.random.seed
        return importlib.import_module(f"{__name__}.random").seed
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _force_list(x: Any) -> list[Any]:
    if isinstance(x, list):
        return x
    if isinstance(x, _NativeVariable):  # one Variable (iterable over its rows) is one entry
        return [x]
    if hasattr(x, "__iter__"):
        return list(x)
    return [x]


def _grad_output(go: Any, o: Any, i: int) -> Any:
    if go is None or isinstance(go, (bool, int, float, np.number)):
        return go
    if isinstance(go, NdArray):
        go = go.data
    if isinstance(go, _NativeVariable) or hasattr(go, "shape"):
        if tuple(go.shape) != o.shape:
            raise ValueError(
                f"nnabla.grad: grad_outputs[{i}] has shape {tuple(go.shape)} but outputs[{i}] "
                f"has shape {o.shape}"
            )
        return go
    raise ValueError(
        f"nnabla.grad: grad_outputs[{i}] must be None, a scalar, an array, an NdArray or a "
        f"Variable, got {type(go).__name__}"
    )


def forward_all(
    variables: Any,
    clear_buffer: bool = False,
    clear_no_need_grad: bool = False,
    function_pre_hook: Any = None,
    function_post_hook: Any = None,
) -> None:
    """Re-execute the graphs producing several Variables at once, each function once (nnabla's
    ``forward_all``); the hooks are called around each function as in ``Variable.forward``.
    ``clear_buffer``/``clear_no_need_grad`` are accepted and have no effect, as in ``forward``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> x = nn.Variable.from_numpy_array(np.array([1.0, 2.0]))
        >>> h = x * 2
        >>> y, z = h + 1, h * 3
        >>> x.d = [3.0, 4.0]
        >>> nn.forward_all([y, z])
        >>> y.d, z.d
        (array([7., 9.], dtype=float32), array([18., 24.], dtype=float32))
    """
    variables = list(variables)
    for i, v in enumerate(variables):
        if not isinstance(v, _NativeVariable):
            raise TypeError(
                f"nnabla.forward_all: variables[{i}] must be a Variable, got {type(v).__name__}"
            )
    redraw_random_leaves(variables)
    _forward_with_hooks(variables, function_pre_hook, function_post_hook)


def _aliases_in_graph(outs: list[Any], ins: list[Any]) -> list[list[Any]]:
    """Per input, the other leaves of the outputs' graph that share its buffers (unlinked
    Variables of the same shape over the same source); [] when there is none at all."""
    owners: dict[int, int] = {}
    for i, x in enumerate(ins):
        owners.setdefault(id(_buffer_owner(x)), i)
    groups: list[list[Any]] = [[] for _ in ins]
    found = False
    seen: set[int] = {id(x) for x in ins}
    for node in _collect_graph(outs):
        for src, idx in zip(node.srcs, node.idxs):
            if idx != -1 or id(src) in seen or not isinstance(src, _Unlinked):
                continue
            seen.add(id(src))
            i = owners.get(id(_buffer_owner(src)), -1)
            if i >= 0:
                groups[i].append(src)
                found = True
    return groups if found else []


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    persistent_outputs: Any = (),
    bind_grad_output: bool = False,
) -> list[Variable]:
    r"""The gradients of the outputs with respect to the inputs, as differentiable Variables.

    .. math:: g_i = \sum_j \frac{\partial y_j}{\partial x_i}

    weighted by ``grad_outputs`` (None: 1; a scalar, an array, an NdArray or a Variable per
    output). Inputs the outputs do not depend on (or that do not need a gradient) get a 0-d zero
    (shape ``()``, whatever the input's shape), not connected to the graph, as nnabla 1.39. The
    results are always differentiable again, and ``y.forward()`` on anything built from them
    re-executes the gradient graph too.
    ``persistent_outputs`` (one flag per output) is accepted; gradhub never clears data.
    ``bind_grad_output=True`` makes each reached input's ``.g`` show its gradient's data.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> x = nn.Variable.from_numpy_array(np.array([1.0, 2.0]), need_grad=True)
        >>> z = nn.Variable((2,), need_grad=True)
        >>> gx, gz = nn.grad([x * x], [x, z])
        >>> gx.d, gz.d
        (array([2., 4.], dtype=float32), array(0., dtype=float32))
    """
    outs = _force_list(outputs)
    ins = _force_list(inputs)
    for k, o in enumerate(outs):
        if not isinstance(o, _NativeVariable):
            raise ValueError(
                f"nnabla.grad: outputs[{k}] must be a Variable, got {type(o).__name__}"
            )
    for k, x in enumerate(ins):
        if not isinstance(x, _NativeVariable):
            raise ValueError(f"nnabla.grad: inputs[{k}] must be a Variable, got {type(x).__name__}")
    persistent = list(persistent_outputs)
    if persistent and len(persistent) != len(outs):
        raise ValueError(
            f"nnabla.grad: persistent_outputs has {len(persistent)} flags but there are "
            f"{len(outs)} outputs (give one per output, or none)"
        )
    if grad_outputs is None:
        gos: list[Any] = [None] * len(outs)
    elif isinstance(grad_outputs, list):
        if len(grad_outputs) != len(outs):
            raise ValueError(
                f"nnabla.grad: grad_outputs has {len(grad_outputs)} entries but there are "
                f"{len(outs)} outputs"
            )
        gos = [_grad_output(g, o, i) for i, (g, o) in enumerate(zip(grad_outputs, outs))]
    else:
        if len(outs) != 1:
            raise ValueError(
                "nnabla.grad: give grad_outputs as a list with one entry per output "
                f"({len(outs)} outputs)"
            )
        gos = [_grad_output(grad_outputs, outs[0], 0)]
    # nnabla's grad only connects functions; values appear on forward(). Leaves given new data
    # since the graph was built: recompute it first, as that forward() would
    for y in outs:
        if _leaves_replaced([y]):
            _reexecute(y)
    # an input is also reached through the unlinked Variables sharing its buffers (a parameter
    # through the views its parametric functions used), as nnabla's
    aliases = _aliases_in_graph(outs, ins)
    targets = ins + [a for group in aliases for a in group]
    try:
        res = _native_grad(outs, targets, gos, create_graph=True, unreachable="none")
    except BackwardRuleError:
        freed = freed_buffers_error(outs, "nnabla.grad")
        if freed is None:
            raise
        raise freed from None
    if aliases:
        k = len(ins)
        summed = []
        for i, group in enumerate(aliases):
            parts = [p for p in (res[i], *res[k : k + len(group)]) if p is not None]
            k += len(group)
            total: Any = parts[0] if parts else None
            for part in parts[1:]:
                total = total + part
            summed.append(total)
        res = summed
    out: list[Variable] = []
    for x, g in zip(ins, res):
        if g is None:
            dtype = x.dtype if x.dtype.kind in "fc" else np.dtype(np.float32)
            g = _NativeVariable.leaf(x.device.xp.zeros((), dtype=dtype), False)  # nnabla's 0-d 0
        elif bind_grad_output:
            x.grad_var = g
        out.append(adopt(g, Variable))
    return out


def get_parameters(
    params: Any = None, path: str | None = None, grad_only: bool = True
) -> OrderedDict[str, Variable]:
    """The parameters (name -> Variable) under the current scope, or under ``path`` within it.

    ``grad_only``: only those that need a gradient. The Variables follow nnabla semantics
    (``.g`` is an array). ``path`` differs from nnabla's (documented there as internal): here it
    selects the sub-scope ``path`` and names relative to it, as ``parameter_scope(path)`` would;
    nnabla's only prefixes every name of the current scope with ``path/``.
    """
    if params is not None:
        raise NotImplementedError("nnabla.get_parameters: the params argument is not supported")
    if path:
        with _scopes(path.split("/")):
            found = _parameters.get_parameters(grad_only=grad_only)
    else:
        found = _parameters.get_parameters(grad_only=grad_only)
    return OrderedDict((k, adopt(v, Variable)) for k, v in found.items())


@contextmanager
def _scopes(names: list[str]) -> Iterator[None]:
    if not names:
        yield
        return
    with _parameters.parameter_scope(names[0]), _scopes(names[1:]):
        yield


@contextmanager
def parameter_scope(name: str, scope: Any = None) -> Iterator[None]:
    """Prefix the names of parameters created or read in the block with ``name/``.

    ``name`` may contain ``/`` (nested scopes). A custom ``scope`` dict is not supported.
    """
    if scope is not None:
        raise NotImplementedError("nnabla.parameter_scope: the scope argument is not supported")
    with _scopes([n for n in str(name).split("/") if n] or [str(name)]):
        yield


def clear_parameters() -> None:
    """Forget the parameters of the current scope (all at top level), as nnabla's.

    Inside ``parameter_scope("dec")`` it removes ``dec/...`` and keeps the other parameters.
    """
    _parameters.clear_parameters()


def get_current_context() -> _NativeContext:
    """The context in force (the innermost ``context_scope``, else the default)."""
    return current_context()


@contextmanager
def auto_forward(auto: bool = True) -> Iterator[None]:
    """Set this thread's auto_forward flag in the block (nnabla's ``nn.auto_forward``).

    gradhub computes every graph as it is built either way; the flag decides whether building
    counts as executing for the running statistics of batch normalization: off (the default,
    as nnabla's), building leaves them alone and each ``forward()`` updates them once; on,
    building updates them too, as nnabla's dynamic mode computes at build time.
    """
    prev = _get_auto_forward()
    _set_auto_forward(auto)
    try:
        yield
    finally:
        _set_auto_forward(prev)


def set_auto_forward(auto: bool) -> None:
    """Set this thread's auto_forward flag (see :func:`auto_forward`)."""
    _set_auto_forward(auto)


def get_auto_forward() -> bool:
    """This thread's auto_forward flag: False by default, as nnabla (see :func:`auto_forward`)."""
    return _get_auto_forward()
