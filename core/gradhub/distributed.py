"""Distributed training: communicators that plugins provide.

``gradhub.distributed.communicator(name="mpi", **options)`` returns a communicator added by a
plugin through the hook ``gradhub_add_communicators`` (gradhub-mpi adds ``"mpi"`` for CPU arrays
and ``"nccl"`` for CUDA arrays). The core has none of its own: asking for one whose plugin is
missing says which distribution to install, and a plugin whose launcher is missing says what to
run. The hook is called the first time a communicator is asked for, not before.

A communicator has ``rank``, ``size``, ``local_rank`` and the collectives ``all_reduce(values,
division=False, inplace=True)``, ``bcast(values, root=0)``, ``all_gather(x)``, ``barrier()`` and
``abort()`` (see docs/distributed.md).
"""

from __future__ import annotations

from typing import Any

from .errors import GradhubError

#: the distribution that provides each communicator gradhub knows of, for the error when missing
KNOWN_PROVIDERS = {
    "mpi": 'gradhub-mpi (pip install "gradhub-mpi[mpich]")',
    "nccl": 'gradhub-mpi with gradhub-cuda (pip install "gradhub-mpi[mpich,nccl]" gradhub-cuda)',
}


class CommunicatorError(GradhubError):
    """A communicator cannot be made: its plugin is missing, or it cannot start."""


def available() -> dict[str, str]:
    """The communicators the installed plugins add: name -> one line saying what it is.

    Example::

        >>> import gradhub as gh
        >>> isinstance(gh.distributed.available(), dict)
        True
    """
    from .plugins import plugin_communicators

    return {name: c.help for name, c in sorted(plugin_communicators().items())}


def communicator(name: str = "mpi", **options: Any) -> Any:
    """A new communicator of the kind ``name`` (``"mpi"``, ``"nccl"``), made by the plugin that
    added it with ``options``.

    Raises :class:`CommunicatorError` naming the distribution to install when no installed
    plugin adds ``name``.

    Example (without gradhub-mpi)::

        >>> import gradhub as gh
        >>> try:
        ...     gh.distributed.communicator("no-such")
        ... except gh.distributed.CommunicatorError as e:
        ...     print(str(e).split(";")[0])
        gradhub.distributed.communicator: no installed plugin adds the communicator 'no-such'
    """
    from .plugins import plugin_communicators

    if not isinstance(name, str):
        raise TypeError(
            "gradhub.distributed.communicator: argument 'name' must be a string, got "
            f"{type(name).__name__}"
        )
    found = plugin_communicators()
    c = found.get(name)
    if c is None:
        have = ", ".join(repr(n) for n in sorted(found)) or "none"
        hint = KNOWN_PROVIDERS.get(name)
        install = f"install {hint}" if hint else "install the plugin that provides it"
        raise CommunicatorError(
            f"gradhub.distributed.communicator: no installed plugin adds the communicator "
            f"{name!r}; {install} (communicators installed: {have})"
        )
    return c.factory(**options)


__all__ = ["KNOWN_PROVIDERS", "CommunicatorError", "available", "communicator"]
