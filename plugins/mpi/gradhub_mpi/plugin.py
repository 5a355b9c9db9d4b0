"""The gradhub plugin of gradhub-mpi: adds the communicators ``"mpi"`` (CPU arrays) and
``"nccl"`` (CUDA arrays, with CuPy and gradhub-cuda)."""

from __future__ import annotations

from typing import Any

import gradhub


def _mpi(**options: Any) -> Any:
    from .communicator import MPICommunicator  # mpi4py is imported here, not before

    return MPICommunicator(**options)


def _nccl(**options: Any) -> Any:
    from .nccl import NCCLCommunicator  # mpi4py and CuPy are imported here, not before

    return NCCLCommunicator(**options)


@gradhub.hookimpl
def gradhub_add_communicators(register: Any) -> None:
    """Add ``"mpi"`` (collectives on numpy arrays and Variables through mpi4py) and ``"nccl"``
    (on CuPy arrays and CUDA Variables through NCCL, started over MPI)."""
    register.communicator(
        "mpi", _mpi, help="MPI through mpi4py, on CPU (numpy) arrays; run under mpiexec"
    )
    register.communicator(
        "nccl",
        _nccl,
        help="NCCL (cupy.cuda.nccl) on CUDA arrays, one GPU per rank; run under mpiexec",
    )
