"""gradhub-mpi: communicators on MPI (mpi4py) for data-parallel training.

Importing this package initializes nothing: mpi4py (and with it MPI) is imported when a
communicator is made, ``gradhub.distributed.communicator("mpi")``. Programs start under the MPI
launcher, ``mpiexec -n 4 python train.py``.
"""

from __future__ import annotations

from .data_parallel import AllReduceCallback, broadcast_parameters, check_parameters, split_dataset

__all__ = ["AllReduceCallback", "broadcast_parameters", "check_parameters", "split_dataset"]
