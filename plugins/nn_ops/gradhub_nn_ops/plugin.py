"""The hook implementations of gradhub-nn-ops: each module of the library registers its part, and
the command ``gradhub demo`` (:mod:`gradhub_nn_ops.demo`) is added to the command line."""

from __future__ import annotations

import importlib
from typing import Any

from gradhub import hookimpl

#: Modules of the library; each defines ``register_functions(register)``.
MODULES = (
    "math",
    "activations",
    "reductions",
    "losses",
    "shape",
    "linalg",
    "conv",
    "pooling",
    "normalization",
    "stochastic",
    "embedding",
    "gradient_flow",
    "parametric",
    "arrays",
    "rescaling",
    "special",
    "resampling",
    "roi",
    "masking",
    "searching",
    "metrics",
    "sampling",
    "spectral",
    "distributed",
    "deform",
)


@hookimpl
def gradhub_add_functions(register: Any) -> None:
    """Register every function and parametric function of the library."""
    for name in MODULES:
        module = importlib.import_module(f"gradhub_nn_ops.{name}")
        module.register_functions(register)


@hookimpl
def gradhub_add_batching_rules(register: Any) -> None:
    """Set the batching rules (for ``gradhub.func.vmap``) of the library's functions that are
    not elementwise (:mod:`gradhub_nn_ops.batch_rules`)."""
    from . import batch_rules

    batch_rules.register_batching_rules(register)


@hookimpl
def gradhub_add_commands(register: Any) -> None:
    """Add ``gradhub demo`` (training the seed network on digits; the extra ``demo``)."""
    from . import demo

    register.command(
        "demo",
        demo.run_command,
        help=demo.COMMAND_HELP,
        description=demo.COMMAND_DESCRIPTION,
        add_arguments=demo.add_arguments,
    )


@hookimpl
def gradhub_add_seeders(register: Any) -> None:
    """Let ``gradhub.seed(n)`` reseed the initializers' default generator and dropout's global
    generator (``seed=-1``)."""
    from . import parametric, stochastic

    register.seeder("initializers", parametric.seed)
    register.seeder("dropout", stochastic.seed_dropout)


@hookimpl
def gradhub_add_jvp_rules(register: Any) -> None:
    """Register the native forward-mode rules of the library (:mod:`gradhub_nn_ops.jvp`)."""
    from . import jvp

    jvp.register_jvp_rules(register)
