"""gradhub-mpi: communicators on MPI (mpi4py) for data-parallel training.

Importing this package initializes nothing and imports none of its modules: mpi4py (and with it
MPI) is imported when a communicator is made, ``gradhub.distributed.communicator("mpi")``, and
:mod:`gradhub_mpi.data_parallel` when one of its names below is first used (gradhub loads the
plugin, :mod:`gradhub_mpi.plugin`, with every program that uses gradhub). Programs start under
the MPI launcher, ``mpiexec -n 4 python train.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .data_parallel import (
        AllReduceCallback,
        broadcast_parameters,
        check_parameters,
        split_dataset,
    )

__all__ = ["AllReduceCallback", "broadcast_parameters", "check_parameters", "split_dataset"]


def __getattr__(name: str) -> Any:
    # the names of data_parallel, imported on first use (not when gradhub loads the plugin)
    if name in __all__:
        from . import data_parallel

        value = getattr(data_parallel, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gradhub_mpi' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
