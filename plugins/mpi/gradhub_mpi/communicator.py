"""The ``"mpi"`` communicator: collectives on numpy arrays and Variables through mpi4py.

Every collective is buffer-based (``Allreduce``, ``Bcast``, ``Allgather`` on the arrays' memory;
nothing is pickled). On a Variable a collective acts on its ``.d``; in place, it writes into that
array. float16, float32 and float64 go to MPI as they are (MPICH sums float16 natively).
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

import numpy as np
from gradhub import Variable
from gradhub.distributed import CommunicatorError

#: the dtypes the collectives take
DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))

#: environment variables one of which every MPI launcher sets (MPICH/hydra, Open MPI, Slurm)
LAUNCHER_VARIABLES = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "SLURM_PROCID")


def _import_mpi() -> Any:
    try:
        from mpi4py import MPI
    except Exception as e:  # ImportError; RuntimeError when mpi4py finds no MPI library
        raise CommunicatorError(
            f"gradhub-mpi: the 'mpi' communicator needs mpi4py and an MPI library ({e}); "
            'install them with: pip install "gradhub-mpi[mpich]"'
        ) from e
    return MPI


class MPICommunicator:
    """A communicator over ``MPI.COMM_WORLD`` (or ``comm``, an mpi4py communicator).

    ``rank``, ``size``, ``local_rank`` (the rank among the processes of this host),
    ``local_size`` (their number), ``host_rank`` (this host's index, hosts ordered by their
    lowest rank) and ``host_count``. With
    ``abort_on_exception=True`` (the default when ``size > 1``) an exception that reaches the top
    of the program on one rank prints that rank's traceback and ends the whole job
    (``MPI_Abort``), so that the other ranks do not wait in a collective for ever.
    ``require_launcher=True`` refuses to run without ``mpiexec`` (a single process otherwise
    makes a communicator of size 1).
    """

    def __init__(
        self,
        comm: Any = None,
        *,
        abort_on_exception: bool | None = None,
        require_launcher: bool = False,
    ) -> None:
        if require_launcher and not any(v in os.environ for v in LAUNCHER_VARIABLES):
            raise CommunicatorError(
                "gradhub-mpi: this program runs without an MPI launcher; start it with "
                "mpiexec -n N python PROGRAM (mpiexec comes with: pip install "
                '"gradhub-mpi[mpich]")'
            )
        MPI = _import_mpi()
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank: int = self.comm.Get_rank()
        self.size: int = self.comm.Get_size()
        local = self.comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        self.local_rank: int = local.Get_rank()
        self.local_size: int = local.Get_size()
        # the host's index: hosts ordered by their lowest rank (chainermn's inter_rank)
        leader = np.array([self.rank], dtype=np.int64)
        local.Bcast(leader, root=0)  # local rank 0 has the host's lowest rank
        local.Free()
        leaders = np.empty(self.size, dtype=np.int64)
        self.comm.Allgather(leader, leaders)
        hosts = sorted(set(leaders.tolist()))
        self.host_rank: int = hosts.index(int(leader[0]))
        self.host_count: int = len(hosts)
        if abort_on_exception is None:
            abort_on_exception = self.size > 1
        if abort_on_exception:
            install_abort_hook(self)

    def __repr__(self) -> str:
        return f"MPICommunicator(rank={self.rank}, size={self.size}, local_rank={self.local_rank})"

    # -- collectives -----------------------------------------------------------------------------
    def all_reduce(self, values: Any, division: bool = False, inplace: bool = True) -> Any:
        """Sum ``values`` (an array, a Variable, or a list of them) over the ranks.

        .. math:: x \\leftarrow \\sum_{r=0}^{p-1} x_r \\quad (\\text{divided by } p \\text{ with
           ``division=True``})

        In place (default) the arrays (Variables' ``.d``) are overwritten and ``values`` is
        returned; with ``inplace=False`` they are left alone and the results are returned as new
        arrays (a list for a list).
        """
        arrays, single = _arrays(values, "all_reduce")
        out = []
        for a in arrays:
            buf = a if inplace and a.flags.c_contiguous else np.ascontiguousarray(a).copy()
            self.comm.Allreduce(self.MPI.IN_PLACE, buf, op=self.MPI.SUM)
            if division:
                np.multiply(buf, buf.dtype.type(1.0 / self.size), out=buf)
            if inplace and buf is not a:
                a[...] = buf
            out.append(buf)
        if inplace:
            return values
        return out[0] if single else out

    def iall_reduce(self, buf: np.ndarray) -> Any:
        """Start the sum of the contiguous array ``buf`` over the ranks, in place, without
        waiting (``MPI_Iallreduce``); returns the request (``.Wait()``)."""
        return self.comm.Iallreduce(self.MPI.IN_PLACE, buf, op=self.MPI.SUM)

    def bcast(self, values: Any, root: int = 0) -> Any:
        """Copy ``values`` (an array, a Variable, or a list of them) of rank ``root`` into the
        same arrays of every rank, in place; returns ``values``."""
        self._check_root(root, "bcast")
        arrays, _ = _arrays(values, "bcast")
        for a in arrays:
            if a.flags.c_contiguous:
                self.comm.Bcast(a, root=root)
            else:
                buf = np.ascontiguousarray(a)
                self.comm.Bcast(buf, root=root)
                a[...] = buf
        return values

    def all_gather(self, x: Any) -> list[np.ndarray]:
        """The array ``x`` (or a Variable's ``.d``) of every rank: a list, one array per rank.
        The shapes and dtypes must agree across ranks (checked: an error names the ranks)."""
        (a,), _ = _arrays(x, "all_gather")
        self._check_same(a, "all_gather")
        buf = np.ascontiguousarray(a)
        out = np.empty((self.size, *buf.shape), dtype=buf.dtype)
        self.comm.Allgather(buf, out)
        return list(out)

    def barrier(self) -> None:
        """Wait until every rank has called ``barrier()``."""
        self.comm.Barrier()

    def abort(self, code: int = 1) -> None:
        """End every process of the job with status ``code`` (``MPI_Abort``)."""
        sys.stdout.flush()
        sys.stderr.flush()
        self.comm.Abort(code)

    def shared_reductions(
        self, buckets: Sequence[tuple[int, Any]], *, direct: bool | None = None
    ) -> list[Any] | None:
        """A :class:`gradhub_mpi.shared.SharedReduction` for each ``(count, dtype)`` of
        ``buckets`` when all the ranks run on one host (``MPI_Comm_split_type`` with
        ``MPI_COMM_TYPE_SHARED`` groups them all) and there are several, else None. Collective:
        every rank calls it with the same ``buckets``."""
        if self.size < 2:
            return None
        from .shared import SharedReduction, node_communicator

        node = node_communicator(self.MPI, self.comm)
        if node is None:
            return None
        sums = node.Dup()
        return [
            SharedReduction(self.MPI, node, n, dt, direct=direct, sum_comm=sums)
            for n, dt in buckets
        ]

    # -- data-parallel training ------------------------------------------------------------------
    def all_reduce_callback(
        self,
        params: Any,
        pack_size: int | None = None,
        division: bool = True,
        *,
        shared_memory: bool | None = None,
    ) -> Any:
        """The backward callback of data-parallel training (nnabla's name): pass it as
        ``loss.backward(communicator_callbacks=cb)``; see
        :class:`gradhub_mpi.data_parallel.AllReduceCallback`."""
        from .data_parallel import AllReduceCallback

        return AllReduceCallback(
            self, params, pack_size=pack_size, division=division, shared_memory=shared_memory
        )

    # -- helpers ---------------------------------------------------------------------------------
    def _check_root(self, root: int, where: str) -> None:
        if not isinstance(root, int) or not 0 <= root < self.size:
            raise ValueError(
                f"gradhub-mpi: {where}: argument 'root' must be a rank in 0..{self.size - 1}, "
                f"got {root!r}"
            )

    def _check_same(self, a: np.ndarray, where: str) -> None:
        """Raise on every rank when the shape or dtype of ``a`` differs across the ranks."""
        sig = np.zeros(10, dtype=np.int64)
        sig[0] = DTYPES.index(a.dtype)
        sig[1] = a.ndim
        sig[2 : 2 + min(a.ndim, 8)] = a.shape[:8]
        every = np.empty((self.size, 10), dtype=np.int64)
        self.comm.Allgather(sig, every)
        if (every != every[0]).any():
            desc = "; ".join(
                f"rank {r}: shape {tuple(int(s) for s in row[2 : 2 + row[1]])} "
                f"{DTYPES[row[0]].name}"
                for r, row in enumerate(every)
            )
            raise ValueError(f"gradhub-mpi: {where}: the arrays differ across ranks ({desc})")


def _arrays(values: Any, where: str) -> tuple[list[np.ndarray], bool]:
    """The numpy arrays of ``values`` (an array, a Variable or a list of them), checked."""
    single = not isinstance(values, (list, tuple))
    items: Sequence[Any] = [values] if single else values
    out = []
    for k, v in enumerate(items):
        a = v.d if isinstance(v, Variable) else v
        name = "values" if single else f"values[{k}]"
        if type(a) is not np.ndarray:
            raise TypeError(
                f"gradhub-mpi: {where}: {name} must be a numpy array or a Variable on the CPU, "
                f"got {type(a).__name__} (CUDA arrays take the 'nccl' communicator)"
            )
        if a.dtype not in DTYPES:
            raise TypeError(
                f"gradhub-mpi: {where}: {name} has dtype {a.dtype}; the collectives take "
                "float16, float32 and float64"
            )
        out.append(a)
    return out, single


_HOOKED: list[MPICommunicator] = []


def install_abort_hook(comm: MPICommunicator) -> None:
    """Make an uncaught exception end the whole job: ``sys.excepthook`` prints the traceback
    prefixed with the rank and calls ``MPI_Abort`` (as ``python -m mpi4py``). Installed once."""
    if _HOOKED:
        return
    _HOOKED.append(comm)
    previous: Callable[..., Any] = sys.excepthook

    def hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        text = "".join(traceback.format_exception(kind, error, tb))
        sys.stderr.write(
            f"gradhub-mpi: rank {comm.rank} of {comm.size} failed; aborting the job:\n{text}"
        )
        sys.stderr.flush()
        time.sleep(0.1)  # let the message reach the launcher before the processes are killed
        try:
            comm.abort(1)
        except Exception:
            previous(kind, error, tb)
            os._exit(1)

    sys.excepthook = hook
