"""The gradhub plugin of gradhub-mpi: adds the communicator ``"mpi"`` (CPU arrays)."""

from __future__ import annotations

from typing import Any

import gradhub


def _mpi(**options: Any) -> Any:
    from .communicator import MPICommunicator  # mpi4py is imported here, not before

    return MPICommunicator(**options)


@gradhub.hookimpl
def gradhub_add_communicators(register: Any) -> None:
    """Add ``"mpi"``: collectives on numpy arrays and Variables through mpi4py."""
    register.communicator(
        "mpi", _mpi, help="MPI through mpi4py, on CPU (numpy) arrays; run under mpiexec"
    )
