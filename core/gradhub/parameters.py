"""Named parameters, nnabla style: ``parameter_scope``, ``get_parameters``, ``clear_parameters``.

Parameters live in one ordered table keyed by their full name (``conv1/conv/W``), shared by all
threads; the current scope (the name prefix) is per thread. ``get_parameters`` and
``clear_parameters`` act on the parameters under the current scope, as nnabla's.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from . import variable as _variable
from .variable import Variable


class _Table(OrderedDict[str, Variable]):
    """The parameter table: an OrderedDict that counts its changes in :attr:`version` (every
    insertion, replacement, removal or reordering, also by front-ends that write the live table
    of :func:`parameter_table`), so that a step :func:`gradhub.compile` traced after reading it
    can tell at a later call, by one comparison, whether the table is still the one it read."""

    #: bumped by every change of the table
    version: int = 0

    def __setitem__(self, key: str, value: Variable) -> None:
        super().__setitem__(key, value)
        self.version += 1

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self.version += 1

    def __ior__(self, other: Any) -> _Table:  # type: ignore[override,misc]
        self.update(other)
        return self

    def pop(self, key: str, *default: Any) -> Any:
        self.version += 1
        return super().pop(key, *default)

    def popitem(self, last: bool = True) -> tuple[str, Variable]:
        self.version += 1
        return super().popitem(last)

    def clear(self) -> None:
        self.version += 1
        super().clear()

    def setdefault(self, key: str, default: Any = None) -> Any:
        self.version += 1
        return super().setdefault(key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.version += 1
        super().update(*args, **kwargs)

    def move_to_end(self, key: str, last: bool = True) -> None:
        self.version += 1
        super().move_to_end(key, last)


_params: _Table = _Table()


class _Scope(threading.local):
    prefix: tuple[str, ...] = ()


_scope = _Scope()


@contextmanager
def parameter_scope(name: str) -> Iterator[None]:
    """Prefix the names of parameters created or read inside the block with ``name/``."""
    if not name or "/" in name:
        raise ValueError(f"parameter_scope: name must be non-empty without '/', got {name!r}")
    prev = _scope.prefix
    _scope.prefix = (*prev, name)
    try:
        yield
    finally:
        _scope.prefix = prev


def _full(name: str) -> str:
    return "/".join((*_scope.prefix, name))


def table_state() -> tuple[int, tuple[str, ...]]:
    """The version of the parameter table (bumped by every change of it) and this thread's
    parameter scope: a step that :func:`gradhub.compile` traced after reading the table is
    traced again at a later call where this differs (its graph holds the Variables it found).

    Example::

        >>> import gradhub as gh
        >>> from gradhub.parameters import table_state
        >>> before = table_state()
        >>> with gh.parameter_scope("fc"):
        ...     table_state()[1]
        ('fc',)
        >>> _ = gh.get_parameter_or_create("v", (1,), lambda shape: [0.0])
        >>> table_state()[0] > before[0]
        True
        >>> gh.clear_parameters()
    """
    return (_params.version, _scope.prefix)


def _told() -> None:
    """Tell the observer (an observer is set: the trace of gradhub.compile, in some thread)
    that the code reads or writes the parameter table (see :func:`table_state`)."""
    _variable._observer.parameters_read()


def full_name(name: str) -> str:
    """``name`` prefixed with the current parameter scope (``conv1/conv/W`` for ``conv/W`` inside
    ``parameter_scope("conv1")``): the key under which the parameter table stores it.

    Example::

        >>> import gradhub as gh
        >>> from gradhub.parameters import full_name
        >>> with gh.parameter_scope("fc1"):
        ...     full_name("affine/W")
        'fc1/affine/W'
    """
    return _full(name)


def parameter_table() -> OrderedDict[str, Variable]:
    """The live table of every parameter, keyed by full name, in creation order (not a copy).

    For front-ends that keep their framework's own parameter semantics (the nnabla layer's
    ``get_parameter``/``set_parameter``); changes to it are seen by ``get_parameters`` and the
    parametric functions at once.

    Example::

        >>> import gradhub as gh
        >>> from gradhub.parameters import parameter_table
        >>> gh.clear_parameters()
        >>> w = gh.get_parameter_or_create("w", (2,), lambda shape: [0.0, 0.0])
        >>> parameter_table()["w"] is w
        True
        >>> gh.clear_parameters()
    """
    if _variable._observer is not None:
        _told()
    return _params


#: the parameter uses that front-ends install around their parametric functions (innermost
#: last): ``use(parameter, need_grad) -> Variable`` (see :func:`parameter_use`)
_uses: list[Callable[[Variable, bool], Variable]] = []


@contextmanager
def parameter_use(use: Callable[[Variable, bool], Variable]) -> Iterator[None]:
    """Within the block, :func:`get_parameter_or_create` returns ``use(parameter, need_grad)``
    for the registered parameter it found or created, instead of the parameter itself (or its
    view without gradient): a front-end's own parameter semantics. gradhub-compat's nnabla layer
    gives each use an unlinked Variable sharing the parameter and sets the registered
    ``need_grad`` to the one asked for, as nnabla's ``get_parameter_or_create``.

    Example::

        >>> import gradhub as gh
        >>> from gradhub.parameters import parameter_use
        >>> gh.clear_parameters()
        >>> with parameter_use(lambda p, need_grad: p.detach()):
        ...     v = gh.get_parameter_or_create("w", (2,), lambda shape: [1.0, 2.0])
        >>> v is gh.get_parameters()["w"], v.need_grad
        (False, False)
        >>> gh.clear_parameters()
    """
    _uses.append(use)
    try:
        yield
    finally:
        _uses.pop()


def get_parameter_or_create(
    name: str,
    shape: Sequence[int],
    initializer: Callable[[tuple[int, ...]], Any],
    need_grad: bool = True,
) -> Variable:
    """The parameter ``name`` in the current scope, created with ``initializer(shape)`` if new.

    An existing parameter must have the requested shape. When it exists with another
    ``need_grad`` (``fix_parameters=True`` on a trainable parameter, or the reverse), the result
    is an unlinked Variable sharing its data with that ``need_grad``, as nnabla: a fixed use of
    shared weights passes no gradient to them. Inside :func:`parameter_use`, the result is what
    the installed use makes of the parameter.
    """
    if _variable._observer is not None:
        _told()
    full = _full(name)
    p = _params.get(full)
    shape = tuple(int(s) for s in shape)
    if p is not None:
        if p.shape != shape:
            raise ValueError(
                f"parameter {full!r} exists with shape {p.shape}, but shape {shape} was requested"
            )
        if _uses:
            return _uses[-1](p, bool(need_grad))
        if p.need_grad != bool(need_grad):
            # p.detach(): inside a step that gradhub.compile traces, a recorded function (a leaf
            # would hold this call's values at every replay: functional_call with values passed
            # as the step's arguments); inside vmap, a batched constant
            if p._batched:
                return p.detach()
            v = Variable.detach(p)
            v._need_grad = bool(need_grad) and v.dtype.kind in "fc"
            v.name = p.name
            return v
        return p
    p = Variable(initializer(shape), need_grad=need_grad, name=full)
    _params[full] = p
    return _uses[-1](p, bool(need_grad)) if _uses else p


def get_parameters(grad_only: bool = True) -> OrderedDict[str, Variable]:
    """The parameters under the current scope, in creation order, named relative to the scope.

    ``grad_only``: only those that need a gradient (as nnabla).
    """
    if _variable._observer is not None:
        _told()
    prefix = "/".join(_scope.prefix)
    out: OrderedDict[str, Variable] = OrderedDict()
    for full, p in _params.items():
        if grad_only and not p.need_grad:
            continue
        if not prefix:
            out[full] = p
        elif full.startswith(prefix + "/"):
            out[full[len(prefix) + 1 :]] = p
    return out


def set_parameter(name: str, value: Variable) -> None:
    """Put a Variable into the table under ``name`` in the current scope.

    ``value`` must be a :class:`~gradhub.Variable` (a TypeError naming the parameter otherwise;
    wrap an array with ``gh.Variable(array)``).
    """
    if not isinstance(value, Variable):
        raise TypeError(
            f"set_parameter: the value of parameter {_full(name)!r} must be a Variable, got "
            f"{type(value).__name__} (wrap an array with gradhub.Variable(array))"
        )
    if _variable._observer is not None:
        _told()
    _params[_full(name)] = value


def clear_parameters() -> None:
    """Forget the parameters under the current scope (every parameter at top level).

    As nnabla's ``clear_parameters`` ("Clear all parameters in the current scope"): inside
    ``parameter_scope("dec")`` it removes ``dec/...`` and keeps the others; outside any scope it
    empties the table. The Variables themselves are not changed; a later ``PF`` call or
    :func:`get_parameter_or_create` under a removed name creates a new parameter.
    """
    for name in get_parameters(grad_only=False):  # named relative to the scope
        del _params[_full(name)]
