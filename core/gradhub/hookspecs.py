"""The plugin hooks. Every hook takes one typed registrar argument, ``register``.

A plugin is a module named by an entry point in the group ``gradhub.plugins``; it implements
some of these hooks, marked with :data:`gradhub.hookimpl`. gradhub calls each hook once per
plugin, at load time, in this order: devices, functions, kernels, rules, JVP rules, batching
rules. Nothing a plugin registers is used until all its hooks have succeeded. The last two hooks
are never called at load time: commands only by the ``gradhub`` command line when it builds its
parser, communicators only when :func:`gradhub.distributed.communicator` is asked for one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .plugins import (
        BatchingRuleRegistrar,
        CommandRegistrar,
        CommunicatorRegistrar,
        DeviceRegistrar,
        FunctionRegistrar,
        JvpRuleRegistrar,
        KernelRegistrar,
        RuleRegistrar,
        SeederRegistrar,
    )

PROJECT = "gradhub"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def gradhub_add_devices(register: DeviceRegistrar) -> None:
    """Add device types: ``register.device(device_type, aliases=("cudnn",))``.

    ``device_type`` is a :class:`gradhub.device.DeviceType` saying its kind, array types and
    availability (with a reason when unusable).
    """


@hookspec
def gradhub_add_functions(register: FunctionRegistrar) -> None:
    """Add functions: ``register.function(name, forward, ...)`` for primitives (a generic forward
    kernel written against ``xp``, optionally with its rule and metadata),
    ``register.composite(name, fn, ...)`` for functions built from other functions, and
    ``register.parametric(name, fn)`` for parametric functions (``PF.affine``).
    """


@hookspec
def gradhub_add_kernels(register: KernelRegistrar) -> None:
    """Add faster forward kernels of existing functions for one device kind:
    ``register.kernel(name, device_kind, kernel)``. ``register.has_function(name)`` tells whether
    a function is registered (so a device plugin can add kernels only for functions present).

    ``register.rule_kernel(name, device_kind, fn, override=False)`` adds a rule kernel: the
    array-level first-order backward of the function's rule on that device (signature of
    ``fast_backward``), which ``backward()`` runs for nodes on the device in place of the rule's
    ``fast_backward``; ``create_graph=True`` keeps differentiating the rule.

    ``register.fuser(device_kind, fuser, override=False)`` adds the device's elementwise fuser
    (a :class:`gradhub.fusion.Fuser`): plans on that device run chains of elementwise functions
    as one call it builds.
    """


@hookspec
def gradhub_add_backward_rules(register: RuleRegistrar) -> None:
    """Add backward rules to existing functions: ``register.rule(name, fn, need_inputs=...,
    need_outputs=..., first_order_only=False, override=False)``.
    """


@hookspec
def gradhub_add_jvp_rules(register: JvpRuleRegistrar) -> None:
    """Add native forward-mode (JVP) rules to existing functions:
    ``register.jvp_rule(name, fn, override=False)``, with ``fn(inputs, outputs, tangents,
    **attrs)`` returning one output tangent (a Variable, or None) per output from the input
    tangents (see :mod:`gradhub.jvp_rules`). A function without one is differentiated in forward
    mode by transposing its backward rule.

    Called at load time, after the backward rules (in the second phase).
    """


@hookspec
def gradhub_add_batching_rules(register: BatchingRuleRegistrar) -> None:
    """Add batching rules (for :func:`gradhub.func.vmap`) to existing primitive functions:
    ``register.batching_rule(name, fn, override=False)``, with ``fn(args, dims, **attrs)``
    returning ``(outputs, out_dims)``: the whole batch's result computed with registered
    functions, batched inputs carrying their batch axis at ``dims[i]`` (None: not batched).

    Called when plugins load, after ``gradhub_add_jvp_rules`` (the last hook of the second
    phase).
    """


@hookspec
def gradhub_add_commands(register: CommandRegistrar) -> None:
    """Add subcommands to the ``gradhub`` command line: ``register.command(name, run,
    help=..., add_arguments=None, description=None, override=False)``, with ``run(args)``
    returning the exit status and ``add_arguments(parser)`` adding the command's options.

    Called only when the ``gradhub`` command runs a command that is not one of the core's (or
    shows its help), after the plugins have loaded; never at import or load time.
    """


@hookspec
def gradhub_add_seeders(register: SeederRegistrar) -> None:
    """Add the random generators of a plugin to :func:`gradhub.seed`: ``register.seeder(name,
    fn)``, with ``fn(n)`` reseeding the plugin's generator (a device's own generator, an
    initializer's default) from the integer ``n`` given to ``gradhub.seed(n)``.

    Called only by :func:`gradhub.seed`, after the plugins have loaded; never at import or load
    time.
    """


@hookspec
def gradhub_add_communicators(register: CommunicatorRegistrar) -> None:
    """Add communicators for distributed training: ``register.communicator(name, factory,
    help=..., override=False)``, with ``factory(**options)`` returning the communicator (``rank``,
    ``size``, ``local_rank``, ``all_reduce``, ``bcast``, ``all_gather``, ``barrier``, ``abort``).

    Called only when :func:`gradhub.distributed.communicator` is asked for a communicator, after
    the plugins have loaded; never at import or load time.
    """


#: Hook names in the order gradhub calls them: the first five when plugins load, the last three
#: (``gradhub_add_commands``, ``gradhub_add_seeders``, ``gradhub_add_communicators``) only on
#: demand: from the ``gradhub`` command line, from :func:`gradhub.seed` and from
#: :func:`gradhub.distributed.communicator`.
HOOK_ORDER = (
    "gradhub_add_devices",
    "gradhub_add_functions",
    "gradhub_add_kernels",
    "gradhub_add_backward_rules",
    "gradhub_add_jvp_rules",
    "gradhub_add_batching_rules",
    "gradhub_add_commands",
    "gradhub_add_seeders",
    "gradhub_add_communicators",
)
