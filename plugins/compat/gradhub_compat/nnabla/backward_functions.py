"""nnabla's ``backward_functions``: ``register`` and ``show_registry``.

As in nnabla, :func:`register` *replaces* the backward rule of a function (no override flag is
needed), and the native engine uses the new rule too (``gradhub.grad``, ``Variable.backward``,
every layer). The rule has nnabla's (>= 1.32) signature::

    def sin_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, **kwargs):
        return grad_outputs[0] * F.cos(inputs[0])     # one Variable (or None) per input

Example::

    >>> import gradhub_compat.nnabla.backward_functions as B
    >>> "Add2" in B.registry
    True
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from gradhub.registry import REGISTRY, Provider, check_rule_signature, set_rule
from gradhub.registry import show_registry as _native_show

_WHERE = "nnabla.backward_functions.register"


def register(func_name: str, func: Callable[..., Any]) -> None:
    """Make ``func`` the backward rule of the function ``func_name`` (e.g. ``"Affine"``).

    ``func(grad_outputs, inputs, input_shapes, outputs, output_shapes, **kwargs)`` receives the
    gradients w.r.t. the outputs, the forward inputs and outputs (as Variables) and the function's
    arguments; it returns one Variable (or None: no gradient) per input, written with functions
    so that it is differentiable again. An existing rule is replaced (recorded in the registry).
    """
    if not callable(func):
        raise TypeError(f"nnabla.backward_functions.register({func_name!r}): func must be callable")
    check_rule_signature(func, func_name, _WHERE)  # before the look-up, as nnabla
    fdef = REGISTRY.get(func_name)
    module = sys._getframe(1).f_globals.get("__name__", "?")
    set_rule(fdef, func, Provider("", "", module), override=True, where=_WHERE)


def show_registry(file: Any = None) -> None:
    """Print every registered function with its backward-rule status and devices."""
    _native_show(file)


class _RuleRegistry(Mapping[str, Callable[..., Any]]):
    """Function name -> backward rule, read live from the gradhub registry (read-only)."""

    def _rules(self) -> dict[str, Callable[..., Any]]:
        from gradhub.plugins import ensure_loaded

        ensure_loaded()
        return {n: f.rule.fn for n, f in REGISTRY.functions.items() if f.rule is not None}

    def __getitem__(self, name: str) -> Callable[..., Any]:
        return self._rules()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rules())

    def __len__(self) -> int:
        return len(self._rules())

    def __repr__(self) -> str:
        return f"<backward rule registry: {len(self)} functions>"


#: Function name -> backward rule (read-only view of the registry, as nnabla's ``registry``).
registry: Mapping[str, Callable[..., Any]] = _RuleRegistry()
