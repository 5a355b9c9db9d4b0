"""Plugin loading: entry points of the group ``gradhub.plugins``, each loaded on its own.

Loading is lazy: importing gradhub loads nothing; the first use of a function, a device or the
registry does. Each plugin is loaded inside its own try/except and registers into a staging area;
only when all its hooks succeed and nothing in it clashes with the registry is it committed, so a
broken plugin is reported once (a :class:`~gradhub.errors.PluginLoadWarning` naming its
distribution) and leaves nothing half-registered. Strict mode raises instead.

Hooks run in two phases over all plugins: devices and functions first, then kernels and rules (so
a device plugin can add kernels for functions of a plugin loaded after it). A plugin failing in the
second phase has its first-phase registrations undone, and what they replaced (``override=True``)
put back, so that a skipped plugin leaves the registry exactly as before it. A plugin that calls
``sys.exit()`` fails like any other (only ``KeyboardInterrupt`` goes through). A hook must carry
the ``@gradhub.hookimpl`` marker: an unmarked one (which pluggy would ignore) makes the plugin fail,
and so does a hookimpl option that calling each plugin's hooks once cannot honour (``wrapper``,
``hookwrapper``, ``tryfirst``, ``trylast``, ``optionalhook``).

Entry points are read from the ``*.dist-info``/``*.egg-info`` folders on ``sys.path``; where
``sys.path`` holds a zip file or a finder serves distributions of its own, they are found by
``importlib_metadata.entry_points`` (imported only then), so such distributions are found too.

Environment switches, read at load time:

* ``GRADHUB_DISABLE_PLUGIN_AUTOLOAD=1``: load no entry point (only those named in
  ``GRADHUB_PLUGINS``, if set); the others are still listed, with the status ``autoload off``.
* ``GRADHUB_PLUGINS=a,b``: load only these (entry-point names, or distribution names compared
  normalized as PEP 503 does: ``gradhub_nn_ops`` selects ``gradhub-nn-ops``).
* ``GRADHUB_BLOCK_PLUGINS=a,b``: never load these (named the same way).
* ``GRADHUB_STRICT_PLUGINS=1``: raise :class:`~gradhub.errors.PluginError` on a broken plugin,
  leaving the registry as it was before loading started.
* ``GRADHUB_TUNE_MALLOC=1``: call :func:`gradhub.device.tune_host_allocator` (opt-in).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import re
import sys
import threading
import types
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import pluggy

from . import hookspecs
from .batching import elementwise_rule
from .device import DeviceType
from .errors import PluginError, PluginLoadWarning, RegistrationError
from .jvp_rules import JvpRule, check_jvp_signature, set_jvp_rule
from .registry import (
    REGISTRY,
    CompositeDef,
    FunctionDef,
    ParametricDef,
    Provider,
    Rule,
    SampleFn,
    _normalize,
    bind_plugin_loader,
    check_function_name,
    check_needs,
    check_rule_kernel,
    check_rule_kernel_callable,
    check_rule_signature,
    did_you_mean,
    restore_composite,
    rule_kernel_rule,
    set_rule,
    snake_case,
)

ENTRY_POINT_GROUP = "gradhub.plugins"


class PluginRecord:
    """What happened to one plugin: loaded, failed (with the error), blocked, not selected or
    autoload off (installed, but ``GRADHUB_DISABLE_PLUGIN_AUTOLOAD=1`` left it out).

    (The records of this module are plain classes: dataclasses would add milliseconds to the
    start-up path.)
    """

    def __init__(
        self,
        name: str,
        distribution: str,
        version: str,
        module: str,
        status: str = "pending",
        error: str = "",
        added: dict[str, int] | None = None,
    ) -> None:
        self.name = name
        self.distribution = distribution
        self.version = version
        self.module = module
        self.status = status
        self.error = error
        self.added: dict[str, int] = {} if added is None else added

    def __repr__(self) -> str:
        return (
            f"PluginRecord(name={self.name!r}, distribution={self.distribution!r}, "
            f"status={self.status!r})"
        )


class _LoadState:
    def __init__(self) -> None:
        self.loaded = False
        self.loading = False
        self.records: list[PluginRecord] = []
        #: the module of each plugin that was imported, by plugin name (for the CLI's commands)
        self.modules: dict[str, Any] = {}


STATE = _LoadState()
_LOCK = threading.RLock()  # held while plugins load


class _Staging:
    """Everything one plugin registers, held until the plugin has fully succeeded."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        self.devices: list[tuple[DeviceType, tuple[str, ...]]] = []
        self.functions: list[tuple[FunctionDef, bool]] = []
        self.parametric: list[tuple[ParametricDef, bool]] = []
        self.kernels: list[tuple[str, str, Callable[..., Any], bool]] = []
        self.rules: list[tuple[str, Rule, bool]] = []
        #: ``(function name, JVP rule, override)`` from ``gradhub_add_jvp_rules``
        self.jvp_rules: list[tuple[str, Callable[..., Any], bool]] = []
        self.batch_rules: list[tuple[str, Callable[..., Any], bool]] = []
        #: ``(function name, device kind, rule kernel, override)`` from ``register.rule_kernel``
        self.rule_kernels: list[tuple[str, str, Callable[..., Any], bool]] = []
        #: ``(device kind, fuser, override)`` from ``register.fuser``
        self.fusers: list[tuple[str, Any, bool]] = []
        #: what committing changed, in order, so that a failure can restore the registry exactly:
        #: ``[table, key, new value, old value or _MISSING]`` for a dict entry, ``[fdef, new
        #: rule, old rule, old overrides, old audit, was a composite]`` for a backward rule
        self.undo: list[list[Any]] = []

    def staged_function(self, name: str) -> FunctionDef | None:
        for f, _ in self.functions:
            if f.name == name:
                return f
        return None


class DeviceRegistrar:
    """Passed to ``gradhub_add_devices``."""

    def __init__(self, staging: _Staging) -> None:
        self._s = staging

    def device(self, device_type: DeviceType, *, aliases: Sequence[str] = ()) -> None:
        """Register a device type (and aliases such as ``"cudnn"`` for ``"cuda"``)."""
        if not isinstance(device_type, DeviceType) or not device_type.kind:
            raise RegistrationError("register.device: expected a DeviceType with a kind")
        self._s.devices.append((device_type, tuple(aliases)))


def _checked_snake(name: Any, snake: str | None, where: str) -> str:
    """The snake_case callable name of the function ``name`` (``snake`` or derived from
    ``name``), checked with :func:`check_function_name`."""
    snake = snake or (snake_case(name) if isinstance(name, str) else "")
    check_function_name(name, snake, where)
    return snake


class FunctionRegistrar:
    """Passed to ``gradhub_add_functions``."""

    def __init__(self, staging: _Staging) -> None:
        self._s = staging

    def function(
        self,
        name: str,
        forward: Callable[..., Any],
        *,
        inputs: Sequence[str] = ("x",),
        attrs: dict[str, Any] | None = None,
        n_outputs: int | Callable[..., int] = 1,
        differentiable: bool = True,
        rule: Callable[..., Any] | None = None,
        need_inputs: Sequence[int] | None = None,
        need_outputs: Sequence[int] | None = None,
        first_order_only: bool = False,
        fast_backward: Callable[..., Any] | None = None,
        samples: SampleFn | None = None,
        reference: Callable[..., Any] | None = None,
        elementwise: bool = False,
        kinks: Sequence[float] = (),
        snake: str | None = None,
        doc: str = "",
        override: bool = False,
        jvp: Callable[..., Any] | None = None,
        batch_rule: Callable[..., Any] | None = None,
        random: bool = False,
    ) -> FunctionDef:
        """Register a primitive function.

        ``forward(xp, *arrays, **attrs)`` returns an array (or a tuple, for several outputs);
        ``rule`` is its backward rule (nnabla signature); ``need_inputs``/``need_outputs`` the
        indices the rule reads; ``fast_backward(xp, grad_outputs, inputs, input_shapes, outputs,
        output_shapes, **attrs)`` an optional array-level version of the rule used for first-order
        backward; ``samples(rng)`` yields :class:`~gradhub.registry.Sample` test
        cases; ``reference(*arrays, **attrs)`` an independent numpy implementation; ``kinks`` the
        input values where the function is not differentiable. ``jvp(inputs, outputs, tangents,
        **attrs)`` is its native forward-mode rule (see :mod:`gradhub.jvp_rules`);
        ``batch_rule(args, dims, **attrs) -> (outputs, out_dims)`` its batching rule for
        :func:`gradhub.func.vmap` (see
        :mod:`gradhub.batching`; an ``elementwise`` function gets
        :func:`gradhub.batching.elementwise_rule` unless it gives one). ``random=True`` says the
        kernel draws random numbers (a new value at each call): a compiled step holding it is
        not recorded into a device graph, which would repeat one draw (see
        :mod:`gradhub.capture`).
        """
        where = "register.function"
        snake = _checked_snake(name, snake, where)
        if not callable(forward):
            raise RegistrationError(f"{where}({name!r}): forward must be callable")
        fdef = FunctionDef(
            name=name,
            forward=forward,
            provider=self._s.provider,
            inputs=tuple(inputs),
            attrs=dict(attrs or {}),
            n_outputs=n_outputs,
            differentiable=differentiable,
            samples=samples,
            reference=reference,
            elementwise=elementwise,
            kinks=tuple(kinks),
            doc=doc,
            snake=snake,
        )
        fdef.random = bool(random)
        check_needs(fdef, need_inputs, need_outputs, where)
        if rule is not None:
            if not callable(rule):
                raise RegistrationError(f"{where}({name!r}): the rule must be callable")
            check_rule_signature(rule, name, where, self._s.provider, fdef.attrs)
            fdef.rule = Rule(
                rule,
                self._s.provider,
                None if need_inputs is None else tuple(need_inputs),
                None if need_outputs is None else tuple(need_outputs),
                first_order_only,
                fast_backward,
            )
        if jvp is not None:
            check_jvp_signature(jvp, name, where, self._s.provider)
            if not differentiable:
                raise RegistrationError(
                    f"{where}({name!r}): a non-differentiable function takes no JVP rule"
                )
            fdef.jvp_rule = JvpRule(jvp, self._s.provider)
        if batch_rule is not None:
            if not callable(batch_rule):
                raise RegistrationError(f"{where}({name!r}): the batch_rule must be callable")
            fdef.batch_rule = batch_rule
            fdef.batch_rule_provider = self._s.provider
        elif elementwise:
            fdef.batch_rule = elementwise_rule(fdef)
            fdef.batch_rule_provider = self._s.provider
        self._s.functions.append((fdef, override))
        return fdef

    def composite(
        self,
        name: str,
        fn: Callable[..., Any],
        *,
        samples: SampleFn | None = None,
        reference: Callable[..., Any] | None = None,
        elementwise: bool = False,
        kinks: Sequence[float] = (),
        snake: str | None = None,
        differentiable: bool = True,
        override: bool = False,
    ) -> FunctionDef:
        """Register a function written with other functions; it needs no backward rule."""
        snake = _checked_snake(name, snake, "register.composite")
        if not callable(fn):
            raise RegistrationError(f"register.composite({name!r}): fn must be callable")
        fdef = CompositeDef(
            name=name,
            forward=fn,
            provider=self._s.provider,
            inputs=(),
            differentiable=differentiable,
            samples=samples,
            reference=reference,
            elementwise=elementwise,
            kinks=tuple(kinks),
            doc=fn.__doc__ or "",
            snake=snake,
            api=fn,
        )
        self._s.functions.append((fdef, override))
        return fdef

    def parametric(self, name: str, fn: Callable[..., Any], *, override: bool = False) -> None:
        """Register a parametric function, offered as ``gradhub.parametric_functions.<name>``."""
        self._s.parametric.append((ParametricDef(name, fn, self._s.provider), override))


class KernelRegistrar:
    """Passed to ``gradhub_add_kernels``."""

    def __init__(self, staging: _Staging) -> None:
        self._s = staging

    def has_function(self, name: str) -> bool:
        """Whether a function of this name is registered (by any plugin loaded so far)."""
        return name in REGISTRY.functions or self._s.staged_function(name) is not None

    def kernel(
        self, name: str, device: str, fn: Callable[..., Any], *, override: bool = False
    ) -> None:
        """Register ``fn(xp, *arrays, **attrs)`` as the forward kernel of ``name`` on ``device``."""
        if not callable(fn):
            raise RegistrationError(f"register.kernel({name!r}, {device!r}): not callable")
        self._s.kernels.append((name, device, fn, override))

    def rule_kernel(
        self, name: str, device: str, fn: Callable[..., Any], *, override: bool = False
    ) -> None:
        """Register ``fn`` as the rule kernel of ``name`` on ``device``: the array-level
        first-order rule that backward runs for the function's nodes on that device, in place of
        the rule's ``fast_backward``.

        ``fn(xp, grad_outputs, inputs, input_shapes, outputs, output_shapes, **attrs)`` returns
        one gradient array (or None) per input, as ``fast_backward`` (a keyword ``need_grads``
        receives which inputs need one; :func:`gradhub.registry.one_input_fast` makes one from a
        one-input formula). It receives the arrays the function's rule keeps, and must give the
        rule's numbers. It belongs to the rule registered when it is: a rule registered later
        (``override=True``) runs without it. ``create_graph=True`` never runs it. Another
        provider's rule kernel for the same (function, device) needs ``override=True``.
        """
        check_rule_kernel_callable(name, device, fn, self._s.provider)
        self._s.rule_kernels.append((name, device, fn, bool(override)))

    def fuser(self, device: str, fuser: Any, *, override: bool = False) -> None:
        """Register ``fuser`` (a :class:`gradhub.fusion.Fuser`) as the elementwise fuser of
        ``device``: plans made for arrays of that device kind run chains of elementwise
        functions it accepts as one call it builds (see :mod:`gradhub.fusion`). Another
        provider's fuser for the same device needs ``override=True``.
        """
        accepts, build = getattr(fuser, "accepts", None), getattr(fuser, "build", None)
        if not callable(accepts) or not callable(build):
            raise RegistrationError(
                f"register.fuser({device!r}): the fuser must have the methods accepts(name, "
                f"attrs, dtype) and build(chain) of gradhub.fusion.Fuser, got "
                f"{type(fuser).__name__} (from {self._s.provider})"
            )
        self._s.fusers.append((device, fuser, bool(override)))


class RuleRegistrar:
    """Passed to ``gradhub_add_backward_rules``."""

    def __init__(self, staging: _Staging) -> None:
        self._s = staging

    def rule(
        self,
        name: str,
        fn: Callable[..., Any],
        *,
        need_inputs: Sequence[int] | None = None,
        need_outputs: Sequence[int] | None = None,
        first_order_only: bool = False,
        fast_backward: Callable[..., Any] | None = None,
        override: bool = False,
    ) -> None:
        """Set the backward rule of the existing function ``name``.

        A rule on a composite function turns it into a primitive whose forward kernel evaluates
        the composite's body on arrays (see :func:`gradhub.registry.composite_to_primitive`).

        ``fast_backward(xp, grad_outputs, inputs, input_shapes, outputs, output_shapes, **attrs)``
        is an optional array-level version of the same rule for first-order backward.
        """
        if not callable(fn):
            raise RegistrationError(f"register.rule({name!r}): the rule must be callable")
        # the positional parameters now (the plugin fails while its hook runs); the attributes
        # when the rule is set (set_rule), once the function is known
        check_rule_signature(fn, name, "register.rule", self._s.provider)
        rule = Rule(
            fn,
            self._s.provider,
            None if need_inputs is None else tuple(need_inputs),
            None if need_outputs is None else tuple(need_outputs),
            first_order_only,
            fast_backward,
        )
        self._s.rules.append((name, rule, override))


class JvpRuleRegistrar:
    """Passed to ``gradhub_add_jvp_rules``."""

    def __init__(self, staging: _Staging) -> None:
        self._s = staging

    def jvp_rule(self, name: str, fn: Callable[..., Any], *, override: bool = False) -> None:
        """Set the native forward-mode rule of the existing function ``name``:
        ``fn(inputs, outputs, tangents, **attrs)`` returns one tangent (Variable or None) per
        output (see :mod:`gradhub.jvp_rules`). A function whose JVP rule comes from another
        distribution needs ``override=True``.
        """
        check_jvp_signature(fn, name, "register.jvp_rule", self._s.provider)
        self._s.jvp_rules.append((name, fn, bool(override)))


class BatchingRuleRegistrar:
    """Passed to ``gradhub_add_batching_rules``."""

    def __init__(self, staging: _Staging) -> None:
        self._s = staging

    def batching_rule(self, name: str, fn: Callable[..., Any], *, override: bool = False) -> None:
        """Set the batching rule of the existing primitive function ``name``:
        ``fn(args, dims, **attrs) -> (outputs, out_dims)`` (see :mod:`gradhub.batching`).
        ``override=True`` replaces a rule another distribution set."""
        if not isinstance(name, str):
            raise RegistrationError(
                f"register.batching_rule: the function name must be a string, got {name!r}"
            )
        if not callable(fn):
            raise RegistrationError(
                f"register.batching_rule({name!r}): the rule must be callable, got "
                f"{type(fn).__name__}"
            )
        self._s.batch_rules.append((name, fn, bool(override)))


#: a command name: lower-case letters, digits and inner hyphens (``demo``, ``train-mnist``); a
#: pattern compiled on first use (by ``re``'s cache), not when gradhub loads
_COMMAND_NAME = r"[a-z][a-z0-9]*(-[a-z0-9]+)*"


class CommandDef:
    """One subcommand of the ``gradhub`` command line, from the core or a plugin.

    ``name`` (``gradhub NAME``), ``help`` (its line in ``gradhub --help``), ``description``
    (the text of ``gradhub NAME --help``), ``add_arguments(parser)`` (adds its options to the
    ``argparse`` sub-parser), ``run(args) -> int`` (runs it with the parsed ``argparse.Namespace``
    and returns the exit status; None counts as 0) and ``provider`` (who registered it).
    """

    def __init__(
        self,
        name: str,
        run: Callable[[Any], Any],
        help: str,
        add_arguments: Callable[[Any], None] | None,
        description: str | None,
        provider: Provider,
    ) -> None:
        self.name = name
        self.run = run
        self.help = help
        self.add_arguments = add_arguments
        self.description = description
        self.provider = provider

    def __repr__(self) -> str:
        return f"CommandDef(name={self.name!r}, provider={str(self.provider)!r})"


class CommandRegistrar:
    """Passed to ``gradhub_add_commands``."""

    def __init__(self, staging: _Staging) -> None:
        self._s = staging
        #: the commands registered through this registrar, with their ``override`` flag
        self.commands: list[tuple[CommandDef, bool]] = []

    def command(
        self,
        name: str,
        run: Callable[[Any], Any],
        *,
        help: str,
        add_arguments: Callable[[Any], None] | None = None,
        description: str | None = None,
        override: bool = False,
    ) -> None:
        """Add the subcommand ``gradhub NAME``.

        ``run(args)`` gets the parsed ``argparse.Namespace`` and returns the exit status (0 on
        success; None counts as 0); ``add_arguments(parser)`` adds the command's options to its
        ``argparse.ArgumentParser``; ``help`` is its line in ``gradhub --help``, ``description``
        the text of ``gradhub NAME --help`` (``help`` when None). A name of the core's commands
        is an error; one that another plugin already uses is an error unless ``override=True``.
        """
        where = f"register.command({name!r})"
        if not isinstance(name, str) or not re.fullmatch(_COMMAND_NAME, name):
            raise RegistrationError(
                f"{where}: the name must be lower-case letters, digits and inner hyphens "
                "(such as 'demo' or 'train-mnist')"
            )
        if not callable(run):
            raise RegistrationError(
                f"{where}: argument 'run' must be callable, got {type(run).__name__}"
            )
        if not isinstance(help, str) or not help.strip():
            raise RegistrationError(f"{where}: argument 'help' must be a non-empty string")
        if add_arguments is not None and not callable(add_arguments):
            raise RegistrationError(
                f"{where}: argument 'add_arguments' must be callable or "
                f"None, got {type(add_arguments).__name__}"
            )
        if description is not None and not isinstance(description, str):
            raise RegistrationError(f"{where}: argument 'description' must be a string or None")
        self.commands.append(
            (
                CommandDef(name, run, help, add_arguments, description, self._s.provider),
                bool(override),
            )
        )


class SeederRegistrar:
    """Passed to ``gradhub_add_seeders``."""

    def __init__(self, staging: _Staging) -> None:
        self._s = staging
        #: the seeders registered through this registrar: ``(name, fn, provider)``
        self.seeders: list[tuple[str, Callable[[int], Any], Provider]] = []

    def seeder(self, name: str, fn: Callable[[int], Any]) -> None:
        """Add ``fn(n)``, called by ``gradhub.seed(n)`` to reseed the generator called ``name``
        (``"initializers"``, ``"dropout"``, ``"cuda"``): a short label shown in errors."""
        if not isinstance(name, str) or not name:
            raise RegistrationError("register.seeder: the name must be a non-empty string")
        if not callable(fn):
            raise RegistrationError(
                f"register.seeder({name!r}): argument 'fn' must be callable, got "
                f"{type(fn).__name__}"
            )
        self.seeders.append((name, fn, self._s.provider))


def plugin_seeders() -> list[tuple[str, Callable[[int], Any], Provider]]:
    """The seeders that the loaded plugins add (``gradhub_add_seeders``), in loading order.

    Called by :func:`gradhub.seed` only. A plugin whose hook fails raises a
    :class:`~gradhub.errors.PluginError` naming it: a seed that leaves a generator unseeded would
    make runs silently irreproducible.
    """
    ensure_loaded()
    out: list[tuple[str, Callable[[int], Any], Provider]] = []
    for rec in list(STATE.records):
        module = STATE.modules.get(rec.name)
        hook = getattr(module, "gradhub_add_seeders", None)
        if rec.status != "loaded" or hook is None:
            continue
        register = SeederRegistrar(_Staging(Provider(rec.distribution, rec.version, rec.module)))
        try:
            hook(register=register)
        except Exception as e:
            raise PluginError(
                f"gradhub plugin {rec.name!r} (distribution {rec.distribution or '?'} "
                f"{rec.version}): gradhub_add_seeders failed: {type(e).__name__}: {e}"
            ) from e
        out.extend(register.seeders)
    return out


#: a communicator name: lower-case letters, digits and inner hyphens or underscores (``mpi``)
_COMMUNICATOR_NAME = r"[a-z][a-z0-9]*([-_][a-z0-9]+)*"


class CommunicatorDef:
    """One communicator kind that a plugin adds: ``name`` (``"mpi"``), ``factory(**options)``
    returning a communicator, ``help`` (one line: what it communicates with) and ``provider``."""

    def __init__(
        self, name: str, factory: Callable[..., Any], help: str, provider: Provider
    ) -> None:
        self.name = name
        self.factory = factory
        self.help = help
        self.provider = provider

    def __repr__(self) -> str:
        return f"CommunicatorDef(name={self.name!r}, provider={str(self.provider)!r})"


class CommunicatorRegistrar:
    """Passed to ``gradhub_add_communicators``."""

    def __init__(self, staging: _Staging) -> None:
        self._s = staging
        #: the communicators registered through this registrar, with their ``override`` flag
        self.communicators: list[tuple[CommunicatorDef, bool]] = []

    def communicator(
        self, name: str, factory: Callable[..., Any], *, help: str, override: bool = False
    ) -> None:
        """Add the communicator ``name``: ``gradhub.distributed.communicator(name, **options)``
        returns ``factory(**options)``. ``help`` says in one line what it communicates with. A
        name another plugin already added is an error unless ``override=True``.
        """
        where = f"register.communicator({name!r})"
        if not isinstance(name, str) or not re.fullmatch(_COMMUNICATOR_NAME, name):
            raise RegistrationError(
                f"{where}: the name must be lower-case letters, digits and inner hyphens or "
                "underscores (such as 'mpi' or 'nccl')"
            )
        if not callable(factory):
            raise RegistrationError(
                f"{where}: argument 'factory' must be callable, got {type(factory).__name__}"
            )
        if not isinstance(help, str) or not help.strip():
            raise RegistrationError(f"{where}: argument 'help' must be a non-empty string")
        self.communicators.append(
            (CommunicatorDef(name, factory, help, self._s.provider), bool(override))
        )


_REGISTRARS: dict[str, Any] = {
    "gradhub_add_devices": DeviceRegistrar,
    "gradhub_add_functions": FunctionRegistrar,
    "gradhub_add_kernels": KernelRegistrar,
    "gradhub_add_backward_rules": RuleRegistrar,
    "gradhub_add_jvp_rules": JvpRuleRegistrar,
    "gradhub_add_batching_rules": BatchingRuleRegistrar,
    "gradhub_add_commands": CommandRegistrar,
    "gradhub_add_seeders": SeederRegistrar,
    "gradhub_add_communicators": CommunicatorRegistrar,
}
#: devices and functions first (for every plugin), then kernels and rules
#: the hooks that loading calls, in two phases; ``gradhub_add_commands`` is called only by the
#: ``gradhub`` command line (:func:`plugin_commands`), never when plugins load
_PHASES = (hookspecs.HOOK_ORDER[:2], hookspecs.HOOK_ORDER[2:6])


def _split_env(name: str) -> set[str]:
    return {s.strip() for s in os.environ.get(name, "").split(",") if s.strip()}


class EntryPoint:
    """One entry point of the group ``gradhub.plugins``: its name, ``module[:attr]`` value and
    the distribution (name and version) that declares it. Compared and ordered by value, as the
    tuple of the four.

    (A plain class: a ``NamedTuple`` costs 0.15-0.25 ms of every start-up to create.)
    """

    __slots__ = ("distribution", "name", "value", "version")

    def __init__(self, name: str, value: str, distribution: str, version: str) -> None:
        self.name = name
        self.value = value
        self.distribution = distribution
        self.version = version

    def _key(self) -> tuple[str, str, str, str]:
        return (self.name, self.value, self.distribution, self.version)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EntryPoint):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: EntryPoint) -> bool:  # sorted() orders them as tuples
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"EntryPoint(name={self.name!r}, value={self.value!r}, "
            f"distribution={self.distribution!r}, version={self.version!r})"
        )

    def load(self) -> Any:
        """Import the module (and attribute) the entry point names."""
        module, _, attr = self.value.partition(":")
        obj = importlib.import_module(module.strip())
        for part in attr.strip().split(".") if attr.strip() else ():
            obj = getattr(obj, part)
        return obj


def _section(text: str, group: str) -> list[tuple[str, str]]:
    """The ``name = value`` lines of one section of an entry_points.txt (an INI file)."""
    out = []
    inside = False
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            inside = line == f"[{group}]"
            continue
        if inside and "=" in line:
            name, _, value = line.partition("=")
            out.append((name.strip(), value.strip()))
    return out


def _metadata_field(text: str, field: str) -> str:
    """The value of a header of a METADATA/PKG-INFO text ("" when it has none)."""
    prefix = field + ":"
    for line in text.splitlines():
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
        if not line.strip():
            break  # end of the headers
    return ""


def _read_text(dist: Any, filename: str) -> str:
    """The metadata file ``filename`` of the distribution ``dist`` ("" when it has none). A file
    that is not UTF-8 (a stray byte in an author's name) is read again as bytes where the
    distribution lives on disk, with the bad bytes replaced: a byte outside the group is not
    ours to refuse."""
    try:
        return dist.read_text(filename) or ""
    except ValueError:  # UnicodeDecodeError
        folder = getattr(dist, "_path", None)  # importlib_metadata.PathDistribution
        if folder is None:
            return ""
        try:
            return str(folder.joinpath(filename).read_bytes().decode("utf-8", errors="replace"))
        except OSError:
            return ""


def _name_version(dist: Any) -> tuple[str, str]:
    """The ``Name`` and ``Version`` headers of a distribution's metadata, read without parsing
    the whole file (nor any file of the distributions that declare no plugin)."""
    head = _read_text(dist, "METADATA") or _read_text(dist, "PKG-INFO")
    return _metadata_field(head, "Name"), _metadata_field(head, "Version")


def _entry_points_one_by_one(metadata: Any) -> list[tuple[str, str, Any]]:
    """``(name, value, distribution)`` of the group's entry points, each distribution read on its
    own, for when ``entry_points()`` fails on a file that is not UTF-8: the first distribution of
    a (normalized) name wins, as there."""
    found = []
    seen: set[str] = set()
    for dist in metadata.distributions():
        key = _normalize(_name_version(dist)[0])
        if key in seen:
            continue
        if key:  # a distribution without a name shadows nothing
            seen.add(key)
        text = _read_text(dist, "entry_points.txt")
        if f"[{ENTRY_POINT_GROUP}]" in text:
            found += [(name, value, dist) for name, value in _section(text, ENTRY_POINT_GROUP)]
    return found


class _NeedsMetadata(Exception):
    """Raised by :func:`_scan_folders` where only ``importlib_metadata`` can read ``sys.path``."""


def _meta_finders() -> bool:
    """Whether a finder other than the standard path finder serves distributions
    (``importlib_metadata``'s own path finder, which it adds when imported, reads ``sys.path``
    the same way)."""
    path_finder = importlib.machinery.PathFinder
    return any(
        f is not path_finder
        and getattr(f, "find_distributions", None) is not None
        and type(f).__qualname__ != "MetadataPathFinder"
        for f in sys.meta_path
    )


def _scan_folders() -> list[EntryPoint]:
    """The group's entry points read straight from the ``*.dist-info``/``*.egg-info`` folders of
    the directories on ``sys.path``, as the standard path finder finds them: the first
    distribution of a (normalized) name wins, a distribution without entry points shadowing a later
    one of its name too. Raises :class:`_NeedsMetadata` for an entry that is not a directory (a zip
    file), for a finder on ``sys.meta_path`` that serves distributions itself, and for metadata
    that is not UTF-8; the caller then asks ``importlib_metadata``."""
    if _meta_finders():
        raise _NeedsMetadata
    seen: set[str] = set()
    eps: list[EntryPoint] = []
    header = f"[{ENTRY_POINT_GROUP}]"
    for entry in sys.path:
        folder = entry or "."
        try:
            names = sorted(os.listdir(folder))
        except NotADirectoryError:
            raise _NeedsMetadata from None
        except OSError:  # a missing folder serves nothing
            if os.path.isfile(folder):
                raise _NeedsMetadata from None
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            key = _normalize(name.rpartition(".")[0].partition("-")[0])
            if key in seen:
                continue
            seen.add(key)
            meta = os.path.join(folder, name)
            try:
                with open(os.path.join(meta, "entry_points.txt"), encoding="utf-8") as fh:
                    text = fh.read()
            except (FileNotFoundError, NotADirectoryError):
                continue
            except (OSError, ValueError):
                raise _NeedsMetadata from None
            if header not in text:
                continue
            head = ""
            for fname in ("METADATA", "PKG-INFO"):
                try:
                    with open(os.path.join(meta, fname), encoding="utf-8") as fh:
                        head = fh.read()
                    break
                except FileNotFoundError:
                    continue
                except (OSError, ValueError):
                    raise _NeedsMetadata from None
            dist_name = _metadata_field(head, "Name")
            version = _metadata_field(head, "Version")
            eps += [
                EntryPoint(ep, value, dist_name, version)
                for ep, value in _section(text, ENTRY_POINT_GROUP)
            ]
    return eps


def _entry_points() -> list[EntryPoint]:
    """The entry points of the group: every distribution on ``sys.path`` that any finder serves
    (``*.dist-info``/``*.egg-info`` folders, zip files, custom finders), the first distribution of
    a name winning, with the name and version of the distribution that declares each.

    Where ``sys.path`` holds only folders and no finder serves distributions of its own (the usual
    case), the metadata folders are read directly (:func:`_scan_folders`, about 2 ms); otherwise
    ``importlib_metadata.entry_points`` finds them (about 25 ms with the ``email`` package it
    imports). Neither runs when gradhub is imported, only when plugins load.
    """
    try:
        fast = _scan_folders()
    except _NeedsMetadata:
        pass
    else:
        uniq: dict[tuple[str, str], EntryPoint] = {}
        for e in fast:
            uniq.setdefault((e.name, e.distribution), e)
        return sorted(uniq.values(), key=lambda e: e.name)
    import importlib_metadata

    try:
        found = [
            (ep.name, ep.value, ep.dist)
            for ep in importlib_metadata.entry_points(group=ENTRY_POINT_GROUP)
        ]
    except ValueError:  # a metadata file that is not UTF-8 somewhere on sys.path
        found = _entry_points_one_by_one(importlib_metadata)
    eps: dict[tuple[str, str], EntryPoint] = {}
    for name, value, dist in found:
        dist_name, version = _name_version(dist) if dist is not None else ("", "")
        eps.setdefault((name, dist_name), EntryPoint(name, value, dist_name, version))
    return sorted(eps.values(), key=lambda e: e.name)


#: hookimpl options that loading does not honour: each plugin's hooks are called once, directly,
#: so that a broken plugin fails alone (a wrapper would wrap nothing; the order of plugins is
#: gradhub's, see _commit_order; every hook is optional)
_UNSUPPORTED_OPTIONS = ("wrapper", "hookwrapper", "tryfirst", "trylast", "optionalhook")


#: module attributes that are never hooks, whatever pluggy version reads them (not routines)
_NOT_HOOKS = (type, types.ModuleType, str, bytes, int, float, tuple, list, dict, set, frozenset)
_IMPL_ATTR = hookspecs.PROJECT + "_impl"  # the attribute pluggy's HookimplMarker sets


class _Manager(pluggy.PluginManager):
    """pluggy's plugin manager, reading the hook markers of a plain module's attributes straight
    from the module's ``__dict__``.

    pluggy looks at every name of ``dir(plugin)`` through ``inspect.getattr_static``, twice
    (``_validate_hooks``, then ``register``): some 300 names each time over gradhub's own
    plugins, 3.0-3.6 ms of every start-up against 1.0 ms with this manager (2026-11-26). For a plain
    module (``type(plugin) is types.ModuleType``) the answer for a plain function is its marker
    attribute, and for a class, a module or a plain value (a string, a number, a container) it
    is None; so those are read here, and every other attribute, every other kind of plugin
    object and every name that is not in the module's ``__dict__`` go through pluggy as before.
    """

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        if type(plugin) is types.ModuleType:
            value = plugin.__dict__.get(name, _MISSING)
            if type(value) is types.FunctionType:
                opts = getattr(value, _IMPL_ATTR, None)
                return opts if isinstance(opts, dict) else None
            if value is None or isinstance(value, _NOT_HOOKS):
                return None
        return super().parse_hookimpl_opts(plugin, name)


def _validate_hooks(pm: pluggy.PluginManager, module: Any, record: PluginRecord) -> None:
    """Fail on a ``gradhub_*`` callable that is not a hook (a typo), on a hook that lacks the
    ``@gradhub.hookimpl`` marker (pluggy would silently ignore it), on a hookimpl whose
    ``specname`` is not a gradhub hook and on a hookimpl option that loading does not honour
    (:data:`_UNSUPPORTED_OPTIONS`: the hook would be reported as loaded but register nothing)."""
    for attr in dir(module):
        opts = pm.parse_hookimpl_opts(module, attr)
        if opts is None:
            if attr.startswith("gradhub_") and callable(getattr(module, attr)):
                if attr not in _REGISTRARS:
                    raise PluginError(
                        f"hook {attr!r} is not a gradhub hook; known hooks: "
                        f"{', '.join(_REGISTRARS)}"
                    )
                raise PluginError(
                    f"hook {attr!r} of {record.module} lacks the @gradhub.hookimpl marker, so it "
                    "would never be called; decorate it with @gradhub.hookimpl"
                )
            continue
        hook = opts.get("specname") or attr
        if hook not in _REGISTRARS:
            raise PluginError(
                f"hook {hook!r} is not a gradhub hook; known hooks: {', '.join(_REGISTRARS)}"
            )
        for option in _UNSUPPORTED_OPTIONS:
            if opts.get(option):
                raise PluginError(
                    f"plugin {record.name!r} ({record.module}): hook {hook!r} is marked "
                    f"@gradhub.hookimpl({option}=True), an option gradhub does not support: "
                    "each plugin's hooks are called once, in gradhub's order, so that a broken "
                    "plugin fails alone; remove the option"
                )


def _check_phase1(s: _Staging) -> None:
    names: set[str] = set()
    snakes: set[str] = set()
    for fdef, override in s.functions:
        # within the plugin: a later registration of a name needs override=True, as across plugins
        for key, seen, what in (
            (fdef.name, names, "function"),
            (fdef.snake, snakes, "snake_case name"),
        ):
            if key in seen and not override:
                raise RegistrationError(
                    f"{what} {key!r} is registered twice by the plugin; pass override=True to "
                    "the later registration to replace the earlier one"
                )
            seen.add(key)
        for key, table in ((fdef.name, REGISTRY.functions), (fdef.snake, REGISTRY.snake)):
            old = table.get(key)
            if old is not None and not override:
                raise RegistrationError(
                    f"duplicate function {key!r}: already registered by {old.provider}; pass "
                    "override=True to replace it, or register it under another name"
                )
    pnames: set[str] = set()
    for pdef, override in s.parametric:
        if pdef.name in pnames and not override:
            raise RegistrationError(
                f"parametric function {pdef.name!r} is registered twice by the plugin; pass "
                "override=True to the later registration to replace the earlier one"
            )
        pnames.add(pdef.name)
        old_p = REGISTRY.parametric.get(pdef.name)
        if old_p is not None and not override:
            raise RegistrationError(
                f"duplicate parametric function {pdef.name!r}: already registered by "
                f"{old_p.provider}; pass override=True to replace it, or register it under "
                "another name"
            )
    kinds: set[str] = set()
    for dt, aliases in s.devices:
        for key in (dt.kind, *aliases):
            if key in kinds:
                raise RegistrationError(f"device {key!r} is registered twice by the plugin")
            kinds.add(key)
            if key in REGISTRY.device_types or key in REGISTRY.device_aliases:
                raise RegistrationError(f"duplicate device {key!r}")


_MISSING: Any = object()


def _put(s: _Staging, table: dict[Any, Any], key: Any, value: Any) -> None:
    """``table[key] = value``, noted in the plugin's undo log."""
    s.undo.append([table, key, value, table.get(key, _MISSING)])
    table[key] = value


def _commit_phase1(s: _Staging) -> None:
    for dt, aliases in s.devices:
        _put(s, REGISTRY.device_types, dt.kind, dt)
        _put(s, REGISTRY.device_providers, dt.kind, s.provider)
        for a in aliases:
            _put(s, REGISTRY.device_aliases, a, dt.kind)
        for t in dt.array_types:
            _put(s, REGISTRY.by_array_type, t, dt)
    for fdef, override in s.functions:
        _put(s, REGISTRY.functions, fdef.name, fdef)
        _put(s, REGISTRY.snake, fdef.snake, fdef)
        if override:
            fdef.overrides.append(("(replaced function)", str(s.provider)))
    for pdef, _ in s.parametric:
        _put(s, REGISTRY.parametric, pdef.name, pdef)


def _check_phase2(s: _Staging) -> None:
    for name, kind, _fn, override in s.kernels:
        fdef = REGISTRY.functions.get(name)
        if fdef is None:
            raise RegistrationError(f"kernel for unknown function {name!r}")
        if fdef.kind == "composite":
            raise RegistrationError(f"kernel for {name!r}: a composite function takes no kernels")
        kind = REGISTRY.device_aliases.get(kind, kind)
        if kind not in REGISTRY.device_types:
            raise RegistrationError(f"kernel for {name!r} on unknown device {kind!r}")
        old = fdef.kernel_providers.get(kind)
        if old is not None and old != s.provider and not override:
            raise RegistrationError(
                f"duplicate kernel for {name!r} on {kind!r}: already registered by {old}"
            )
    for name, _rule, override in s.rules:
        fdef = REGISTRY.functions.get(name)
        if fdef is None:
            raise RegistrationError(f"backward rule for unknown function {name!r}")
        if not fdef.differentiable:
            raise RegistrationError(
                f"backward rule for {name!r}, which is non-differentiable and takes none"
            )
        old_rule = fdef.rule
        if old_rule is not None and old_rule.provider != s.provider and not override:
            raise RegistrationError(
                f"duplicate backward rule for {name!r}: it already has one from "
                f"{old_rule.provider}; "
                "pass override=True to replace it"
            )
    for name, kind, fn, override in s.rule_kernels:
        fdef = REGISTRY.functions.get(name)
        if fdef is None:
            raise RegistrationError(
                f"register.rule_kernel({name!r}, {kind!r}): rule kernel for unknown function "
                f"{name!r}" + did_you_mean(name, REGISTRY.functions)
            )
        kind = REGISTRY.device_aliases.get(kind, kind)
        if kind not in REGISTRY.device_types:
            raise RegistrationError(
                f"register.rule_kernel({name!r}, {kind!r}): rule kernel on unknown device "
                f"{kind!r} (devices: {', '.join(sorted(REGISTRY.device_types))})"
            )
        new_rule = any(r[0] == name for r in s.rules)
        check_rule_kernel(fdef, kind, fn, s.provider, override, new_rule)
    for kind, _fuser, override in s.fusers:
        kind = REGISTRY.device_aliases.get(kind, kind)
        if kind not in REGISTRY.device_types:
            raise RegistrationError(
                f"register.fuser({kind!r}): fuser for unknown device {kind!r} (devices: "
                f"{', '.join(sorted(REGISTRY.device_types))})"
            )
        old_p = REGISTRY.fuser_providers.get(kind)
        if old_p is not None and old_p != s.provider and not override:
            raise RegistrationError(
                f"register.fuser({kind!r}): duplicate fuser for {kind!r}: already registered by "
                f"{old_p}; {s.provider} must pass override=True to replace it"
            )
    for name, _fn, override in s.jvp_rules:
        fdef = REGISTRY.functions.get(name)
        if fdef is None:
            raise RegistrationError(
                f"register.jvp_rule({name!r}): JVP rule for unknown function {name!r}"
                + did_you_mean(name, REGISTRY.functions)
            )
        old_jvp = fdef.jvp_rule
        if old_jvp is not None and old_jvp.provider != s.provider and not override:
            raise RegistrationError(
                f"register.jvp_rule({name!r}): duplicate JVP rule for {name!r}: it already has "
                f"one from {old_jvp.provider}; pass override=True to replace it"
            )
    for name, _fn, override in s.batch_rules:
        fdef = REGISTRY.functions.get(name)
        if fdef is None:
            close = did_you_mean(name, REGISTRY.functions)
            raise RegistrationError(f"batching rule for unknown function {name!r}{close}")
        if fdef.kind == "composite" and not any(r[0] == name for r in s.rules):
            raise RegistrationError(
                f"batching rule for {name!r}, a composite function: it needs none (vmap batches "
                "the functions it calls)"
            )
        old_p = fdef.batch_rule_provider
        if (
            fdef.batch_rule is not None
            and old_p is not None
            and old_p.distribution != s.provider.distribution
            and not override
        ):
            raise RegistrationError(
                f"duplicate batching rule for {name!r}: it already has one from {old_p}; pass "
                "override=True to replace it"
            )


def _commit_phase2(s: _Staging) -> None:
    for name, kind, fn, _ in s.kernels:
        fdef = REGISTRY.functions[name]
        kind = REGISTRY.device_aliases.get(kind, kind)
        _put(s, fdef.kernels, kind, fn)
        _put(s, fdef.kernel_providers, kind, s.provider)
    for name, rule, override in s.rules:
        fdef = REGISTRY.functions[name]
        # a rule on a composite turns it into a primitive (set_rule): rollback turns it back
        entry = [
            fdef,
            None,
            fdef.rule,
            list(fdef.overrides),
            dict(fdef.audit),
            fdef.kind == "composite",
        ]
        s.undo.append(entry)
        set_rule(
            fdef,
            rule.fn,
            rule.provider,
            override,
            rule.need_inputs,
            rule.need_outputs,
            rule.first_order_only,
            rule.fast,
            where="register.rule",
        )
        entry[1] = fdef.rule
    for name, fn, override in s.jvp_rules:
        fdef = REGISTRY.functions[name]
        old_jvp, old_overrides = fdef.jvp_rule, list(fdef.overrides)
        set_jvp_rule(fdef, fn, s.provider, override)
        # undone as dict entries (see _rollback)
        s.undo.append([fdef.__dict__, "overrides", fdef.overrides, old_overrides])
        s.undo.append([fdef.__dict__, "jvp_rule", fdef.jvp_rule, old_jvp])
    for name, fn, _ in s.batch_rules:
        fdef = REGISTRY.functions[name]
        _put(s, vars(fdef), "batch_rule", fn)
        _put(s, vars(fdef), "batch_rule_provider", s.provider)
    # after the rules: a rule kernel belongs to the rule current when it is registered
    for name, kind, fn, _ in s.rule_kernels:
        fdef = REGISTRY.functions[name]
        kind = REGISTRY.device_aliases.get(kind, kind)
        current = fdef.rule
        if current is None:  # (checked in phase 2; a rule of this plugin that set none)
            raise RegistrationError(
                f"register.rule_kernel({name!r}, {kind!r}): {name} has no backward rule"
            )
        devices = dict(current.devices or {})
        old = devices.get(kind)
        if old is not None and old.provider != s.provider:
            _put(
                s,
                vars(fdef),
                "overrides",
                [*fdef.overrides, (f"{old.provider} (rule kernel on {kind})", str(s.provider))],
            )
        devices[kind] = rule_kernel_rule(current, fn, s.provider)
        _put(s, vars(current), "devices", devices)
        if current.fast1 is not None:
            # the engine calls a one-input formula directly, without looking at the device: a
            # rule with rule kernels goes through its general path, which picks the device's
            _put(s, vars(current), "fast1", None)

    for kind, fuser, _ in s.fusers:
        kind = REGISTRY.device_aliases.get(kind, kind)
        _put(s, REGISTRY.fusers, kind, fuser)
        _put(s, REGISTRY.fuser_providers, kind, s.provider)


def _rollback(s: _Staging, others: Sequence[_Staging] = ()) -> None:
    """Undo everything a plugin committed (it failed after committing some of it), restoring
    what it replaced: the registry is left as it was before the plugin.

    An entry that a plugin in ``others`` has replaced since is left to that plugin, whose undo log
    is pointed past this plugin's value, so that undoing it later does not bring this plugin back.
    """
    for entry in reversed(s.undo):
        if len(entry) == 4:
            table, key, new, old = entry
            if table.get(key, _MISSING) is new:
                if old is _MISSING:
                    del table[key]
                else:
                    table[key] = old
                continue
            for o in others:
                for e in o.undo:
                    if len(e) == 4 and e[0] is table and e[1] == key and e[3] is new:
                        e[3] = old
        else:
            fdef, new_rule, old_rule, overrides, audit, was_composite = entry
            if fdef.rule is new_rule:
                if was_composite:
                    restore_composite(fdef)
                fdef.rule = old_rule
                fdef.overrides[:] = overrides
                fdef.audit.clear()
                fdef.audit.update(audit)
    s.undo.clear()


#: gradhub's own distributions: among the plugins that only add, these commit first (in this
#: order), so that a third-party plugin clashing with one of them is the one that fails
OWN_DISTRIBUTIONS = ("gradhub", "gradhub-nn-ops", "gradhub-cuda")


def _replaces(s: _Staging) -> bool:
    """Whether a plugin registers anything with ``override=True`` (so far)."""
    return (
        any(o for _, o in s.functions)
        or any(o for _, o in s.parametric)
        or any(k[3] for k in s.kernels)
        or any(r[2] for r in s.rules)
        or any(r[2] for r in s.jvp_rules)
        or any(r[2] for r in s.batch_rules)
        or any(k[3] for k in s.rule_kernels)
        or any(f[2] for f in s.fusers)
    )


def _commit_order(
    staged: Sequence[tuple[PluginRecord, _Staging]],
) -> list[tuple[PluginRecord, _Staging]]:
    """The order in which staged plugins commit: first those that only add (no ``override=True``
    registration), gradhub's own distributions first among them, then those that replace
    something; otherwise in load order (entry-point name order, then ``extra``).

    So a plugin replacing a function of gradhub-nn-ops replaces it whatever its entry point is
    called, and a clash between two plain registrations fails the plugin that is not gradhub's
    own (or the later one by name).
    """

    def key(item: tuple[int, tuple[PluginRecord, _Staging]]) -> tuple[int, int, int]:
        i, (rec, s) = item
        if _replaces(s):
            return (1, 0, i)
        dist = _normalize(rec.distribution)
        own = OWN_DISTRIBUTIONS.index(dist) if dist in OWN_DISTRIBUTIONS else len(OWN_DISTRIBUTIONS)
        return (0, own, i)

    return [item for _, item in sorted(enumerate(staged), key=key)]


def _run_hooks(
    pm: pluggy.PluginManager, plugin_name: str, hooks: Sequence[str], s: _Staging
) -> None:
    for hook_name in hooks:
        caller = getattr(pm.hook, hook_name)
        for impl in caller.get_hookimpls():
            if impl.plugin_name != plugin_name:
                continue
            registrar = _REGISTRARS[hook_name](s)
            kwargs = {"register": registrar}
            impl.function(**{k: kwargs[k] for k in impl.argnames})


def _returning(module: Any) -> Callable[[], Any]:
    """A loader that returns an already imported plugin module."""
    return lambda: module


def builtin_plugin() -> types.ModuleType:
    from . import _builtin

    return _builtin


def load_plugins(
    strict: bool | None = None, extra: Sequence[tuple[str, Any]] = ()
) -> list[PluginRecord]:
    """Load the built-in functions and every selected plugin; return what happened to each.

    ``extra``: additional ``(name, module)`` plugins to load after the entry points (for plugins
    defined in the running program). When the plugins are loaded already, only the extras are
    loaded, into the existing registry; a second call without extras changes nothing and returns
    the same report. Called automatically on first use.

    In strict mode (``strict=True``, or ``GRADHUB_STRICT_PLUGINS=1`` when ``strict`` is None) a
    broken plugin raises :class:`~gradhub.errors.PluginError` and the registry is left as it was
    before the call (so the next attempt reports the same error).
    """
    with _LOCK:  # one loading thread; the others wait for it (see ensure_loaded)
        if STATE.loading:  # a use of gradhub from inside the loading itself
            return STATE.records
        if STATE.loaded and not extra:  # loaded already and nothing to add
            return STATE.records
        if strict is None:
            strict = os.environ.get("GRADHUB_STRICT_PLUGINS", "") not in ("", "0")
        if os.environ.get("GRADHUB_TUNE_MALLOC", "") not in ("", "0"):
            from .device import tune_host_allocator

            tune_host_allocator()
        STATE.loading = True
        try:
            return _load(strict, extra, incremental=STATE.loaded)
        finally:
            STATE.loading = False


def ensure_loaded() -> None:
    """Load the plugins unless they are loaded; a thread arriving while another one loads them
    waits for it instead of seeing a half-filled registry."""
    if STATE.loaded:
        return
    with _LOCK:
        if not STATE.loaded:
            load_plugins()


def _load(
    strict: bool, extra: Sequence[tuple[str, Any]], incremental: bool = False
) -> list[PluginRecord]:
    from ._version import __version__

    pm = _Manager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    records: list[PluginRecord] = list(STATE.records) if incremental else []
    modules: dict[str, Any] = dict(STATE.modules) if incremental else {}
    candidates: list[tuple[PluginRecord, Callable[[], Any]]] = []
    if not incremental:
        core = PluginRecord("gradhub", "gradhub", __version__, "gradhub._builtin")
        candidates.append((core, builtin_plugin))

    allow = _split_env("GRADHUB_PLUGINS")
    block = _split_env("GRADHUB_BLOCK_PLUGINS")
    autoload = os.environ.get("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "") in ("", "0")
    if not incremental:
        # an entry-point name matches as written; a distribution name also as normalized
        # (PEP 503), so gradhub_nn_ops and Gradhub.NN-ops both select gradhub-nn-ops
        allow_n = {_normalize(a) for a in allow}
        block_n = {_normalize(b) for b in block}
        for ep in _entry_points():
            dist, version = ep.distribution, ep.version
            rec = PluginRecord(ep.name, dist, version, ep.value)
            dist_n = _normalize(dist)
            if ep.name in block or dist_n in block_n:
                rec.status = "blocked"
                records.append(rec)
                continue
            if allow and not (ep.name in allow or dist_n in allow_n):
                rec.status = "not selected"
                records.append(rec)
                continue
            if not autoload and not allow:  # listed (so messages can say it is installed)
                rec.status = "autoload off"
                records.append(rec)
                continue
            candidates.append((rec, ep.load))
    for name, module in extra:
        mod_name = getattr(module, "__name__", repr(module))
        # an installed plugin that autoload or the allow list left out, loaded by hand: its
        # distribution is known from its entry point
        ep_rec = next(
            (
                r
                for r in records
                if r.module == mod_name and r.status in ("autoload off", "not selected")
            ),
            None,
        )
        rec = PluginRecord(
            name, ep_rec.distribution if ep_rec else "", ep_rec.version if ep_rec else "", mod_name
        )
        candidates.append((rec, _returning(module)))

    failures: list[PluginRecord] = []
    #: the plugins that committed something, in order (a strict failure undoes them all)
    committed: list[_Staging] = []

    def fail(rec: PluginRecord, err: BaseException, where: str) -> None:
        rec.status = "failed"
        rec.error = f"{where}: {type(err).__name__}: {err}"
        failures.append(rec)
        if strict:
            # leave the registry as before this call: the next attempt then reports this same
            # error rather than a duplicate of what the plugins before this one registered
            for done in reversed(committed):
                _rollback(done)
            REGISTRY.changed()
            raise PluginError(
                f"plugin {rec.name!r} (distribution {rec.distribution or '?'} "
                f"{rec.version}) failed to load: {rec.error}"
            ) from err

    # SystemExit too: a plugin calling sys.exit() is a broken plugin, not a request to end the
    # program (KeyboardInterrupt still interrupts)
    loaded: list[tuple[PluginRecord, _Staging]] = []
    for rec, loader in candidates:
        records.append(rec)
        try:
            module = loader()
            _validate_hooks(pm, module, rec)
            pm.register(module, name=rec.name)
        except (Exception, SystemExit) as e:
            fail(rec, e, "import")
            continue
        modules[rec.name] = module
        provider = Provider(rec.distribution, rec.version, rec.module)
        loaded.append((rec, _Staging(provider)))

    # phase 1: every plugin's hooks fill its staging area (nothing reaches the registry yet);
    # then the staged registrations are checked and committed in the order of _commit_order, so
    # that which plugin a clash fails does not depend on the entry-point names
    staged: list[tuple[PluginRecord, _Staging]] = []
    for rec, s in loaded:
        try:
            _run_hooks(pm, rec.name, _PHASES[0], s)
        except (Exception, SystemExit) as e:
            pm.unregister(name=rec.name)
            fail(rec, e, "registration")
            continue
        staged.append((rec, s))
    ok: list[tuple[PluginRecord, _Staging]] = []
    for rec, s in _commit_order(staged):
        try:
            _check_phase1(s)
        except (Exception, SystemExit) as e:
            pm.unregister(name=rec.name)
            fail(rec, e, "registration")
            continue
        committed.append(s)
        _commit_phase1(s)
        ok.append((rec, s))

    def drop(rec: PluginRecord, s: _Staging, e: BaseException) -> None:
        committed.remove(s)
        _rollback(s, committed)
        fail(rec, e, "registration")

    def commit2(rec: PluginRecord, s: _Staging) -> None:
        try:
            _check_phase2(s)
            _commit_phase2(s)
        except (Exception, SystemExit) as e:
            drop(rec, s, e)
            return
        rec.status = "loaded"
        rec.added = {
            "devices": len(s.devices),
            "functions": len(s.functions),
            "parametric": len(s.parametric),
            "kernels": len(s.kernels),
            "rules": len(s.rules),
            "jvp_rules": len(s.jvp_rules),
            "batching_rules": len(s.batch_rules),
            "rule_kernels": len(s.rule_kernels),
        }

    # phase 2, in the same order; a plugin that replaces something (override=True, in either
    # phase) commits after every plugin that only adds
    replacing: list[tuple[PluginRecord, _Staging]] = []
    for rec, s in ok:
        try:
            _run_hooks(pm, rec.name, _PHASES[1], s)
        except (Exception, SystemExit) as e:
            drop(rec, s, e)
            continue
        if _replaces(s):
            replacing.append((rec, s))
        else:
            commit2(rec, s)
    for rec, s in replacing:
        commit2(rec, s)
    STATE.records = records
    STATE.modules = modules
    STATE.loaded = True
    REGISTRY.changed()
    for rec in failures:
        warnings.warn(
            PluginLoadWarning(
                f"gradhub plugin {rec.name!r} (distribution {rec.distribution or '?'} "
                f"{rec.version}) was skipped: {rec.error}"
            ),
            stacklevel=3,
        )
    return records


def plugin_report() -> list[PluginRecord]:
    """What happened to each plugin (loading them first if needed)."""
    ensure_loaded()
    return list(STATE.records)


def _on_demand(
    hook: str,
    registrar: Callable[[_Staging], Any],
    entries: Callable[[Any], list[tuple[Any, bool]]],
    kind: str,
    taken: Sequence[str],
    strict: bool | None,
) -> dict[str, Any]:
    """Run the on-demand hook ``hook`` of every loaded plugin, each on its own, and return what
    they add by name (``entries(register)`` lists the ``(definition, override)`` pairs one
    registrar received). A plugin whose hook fails, or that adds a name in ``taken`` or one an
    earlier plugin added without ``override=True``, adds nothing and is named in a
    :class:`~gradhub.errors.PluginLoadWarning` (a :class:`~gradhub.errors.PluginError` in strict
    mode, as when plugins load)."""
    ensure_loaded()
    if strict is None:
        strict = os.environ.get("GRADHUB_STRICT_PLUGINS", "") not in ("", "0")
    found: dict[str, Any] = {}
    for rec in list(STATE.records):
        fn = getattr(STATE.modules.get(rec.name), hook, None)
        if rec.status != "loaded" or fn is None:
            continue
        register = registrar(_Staging(Provider(rec.distribution, rec.version, rec.module)))
        try:
            fn(register=register)
            for d, override in entries(register):
                if d.name in taken:
                    raise RegistrationError(
                        f"register.{kind}({d.name!r}): {d.name!r} is a {kind} of gradhub "
                        "itself, which plugins cannot replace; choose another name"
                    )
                if not override and d.name in found:
                    raise RegistrationError(
                        f"register.{kind}({d.name!r}): the {kind} {d.name!r} exists "
                        f"already (from {found[d.name].provider}); pass override=True to "
                        "replace it"
                    )
        except (Exception, SystemExit) as e:
            message = (
                f"gradhub plugin {rec.name!r} (distribution {rec.distribution or '?'} "
                f"{rec.version}) adds no {kind}: {hook}: {type(e).__name__}: {e}"
            )
            if strict:
                raise PluginError(message) from e
            warnings.warn(PluginLoadWarning(message), stacklevel=3)
            continue
        for d, _ in entries(register):
            found[d.name] = d
    return found


def plugin_commands(taken: Sequence[str] = (), strict: bool | None = None) -> list[CommandDef]:
    """The ``gradhub`` subcommands that the loaded plugins add (``gradhub_add_commands``).

    Called by the command line only, when it builds its parser for a command that is not one of
    its own (never at import time, nor when plugins load). Each plugin's hook runs on its own: a
    plugin whose hook fails, or that adds a command whose name is in ``taken`` (the core's
    commands, which cannot be replaced) or already added by a plugin before it without
    ``override=True``, adds no command and is named in a
    :class:`~gradhub.errors.PluginLoadWarning` (a :class:`~gradhub.errors.PluginError` in strict
    mode, as when plugins load). With ``override=True`` a command replaces another plugin's
    command of that name.
    """
    found = _on_demand(
        "gradhub_add_commands", CommandRegistrar, lambda r: r.commands, "command", taken, strict
    )
    return list(found.values())


def plugin_communicators(strict: bool | None = None) -> dict[str, CommunicatorDef]:
    """The communicators that the loaded plugins add (``gradhub_add_communicators``), by name.

    Called by :func:`gradhub.distributed.communicator` only (never at import time, nor when
    plugins load). Each plugin's hook runs on its own: a plugin whose hook fails, or that adds a
    name an earlier plugin added without ``override=True``, adds no communicator and is named in
    a :class:`~gradhub.errors.PluginLoadWarning` (a :class:`~gradhub.errors.PluginError` in strict
    mode).
    """
    return _on_demand(
        "gradhub_add_communicators",
        CommunicatorRegistrar,
        lambda r: r.communicators,
        "communicator",
        (),
        strict,
    )


def reset() -> None:
    """Forget every registration and plugin; the next use loads them again (for tests)."""
    REGISTRY.reset()
    STATE.loaded = False
    STATE.records = []
    STATE.modules = {}


def _records() -> list[PluginRecord]:
    return STATE.records


# lookups in the registry (below this module) load the plugins on first use through this loader
# (see "Layers" in docs/design.md)
bind_plugin_loader(ensure_loaded, _records)
