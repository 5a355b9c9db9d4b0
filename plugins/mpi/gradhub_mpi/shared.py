"""The sum of a gradient bucket over the ranks of one host through an MPI-3 shared-memory window.

When every rank of the communicator runs on one host (``MPI_Comm_split_type`` with
``MPI_COMM_TYPE_SHARED`` gives one group of all of them), each bucket of
:class:`gradhub_mpi.data_parallel.AllReduceCallback` is a slot of a window made by
``MPI_Win_allocate_shared``: one row of ``count`` values per rank, which every rank can read.
The gradients are copied into the rank's own row as they become final (the copy the bucket needs
anyway); when the row is full the rank starts an ``MPI_Ibarrier`` and goes on with backward. Once
the barrier has completed (every rank's row is full), each rank computes the sum itself:

- **direct** (2 ranks by default): every rank adds all rows into its own (private) result,
  ``out = (x_0 + x_1 + ... + x_{p-1}) * scale``, reading ``p`` rows;
- **chunked** (more ranks): rank ``r`` adds chunk ``r`` of all rows into a shared result row
  (each value summed once on the host, in rank order), an ``MPI_Barrier`` waits for every chunk,
  then every rank copies the result row into its own result.

Both read the others' rows straight from memory (no message is sent but the barriers'), and the
division by the number of ranks is done on cache-sized blocks right after their sum instead of in
a separate pass. A second ``MPI_Ibarrier`` started after the sum tells when no rank reads the
rows any more; the next copy into the row waits for it (it has long completed by then).

The sum is in rank order ``((x_0 + x_1) + x_2) + ...``, as MPICH's reduction for commutative
operations on one host; with 2 ranks it is exact-order independent (``a + b == b + a``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: values summed per block (256 KB of float32): the block stays in the core's cache between its
#: sum and its division
BLOCK = 65536

#: the largest number of ranks that sum directly (every rank reads every row); more ranks sum
#: chunks (every rank reads each row's chunk once, plus the result)
DIRECT_MAX_RANKS = 2


class SharedReduction:
    """Sums a buffer of ``count`` values of ``dtype`` over the ranks of ``comm`` (an mpi4py
    intracommunicator whose processes share memory), through a window of
    ``MPI_Win_allocate_shared``. Collective: every rank of ``comm`` makes it, with the same
    ``count`` and ``dtype``.

    ``sum_comm``: a duplicate of ``comm`` for the barriers of the sum (default ``comm``); the
    barriers on each communicator are matched in the order the ranks call them, so all the
    reductions made on one pair of communicators must be started, and summed, in one order on
    every rank.

    Use: fill :attr:`row` (this rank's values), :meth:`start`, then :meth:`ready` (non-blocking)
    or :meth:`finish` (blocking), which return the sum (times ``scale``) as a new array;
    :meth:`free` (collective) gives the window back.
    ``direct``: whether every rank sums all rows itself (default: ``size <= DIRECT_MAX_RANKS``).
    """

    def __init__(
        self,
        MPI: Any,
        comm: Any,
        count: int,
        dtype: Any,
        *,
        direct: bool | None = None,
        sum_comm: Any = None,
    ):
        self.MPI = MPI
        self.comm = comm
        # the barriers of the sums on their own communicator: the "row full" barriers follow the
        # order the buckets start in, the others the order they are summed in
        self.sum_comm = comm if sum_comm is None else sum_comm
        self.count = int(count)
        self.dtype = np.dtype(dtype)
        p, r = comm.Get_size(), comm.Get_rank()
        self.size, self.rank = p, r
        self.direct = p <= DIRECT_MAX_RANKS if direct is None else bool(direct)
        rows = p if self.direct else p + 1  # chunked: a shared result row after the ranks' rows
        item = self.dtype.itemsize
        nbytes = rows * self.count * item
        # rank 0 allocates the whole segment (contiguous); the others map it
        self.win = MPI.Win.Allocate_shared(nbytes if r == 0 else 0, item, comm=comm)
        mem, _ = self.win.Shared_query(0)
        flat = np.frombuffer(mem, dtype=self.dtype, count=rows * self.count)
        self.rows = flat.reshape(rows, self.count)
        #: this rank's row: the values to sum
        self.row: np.ndarray = self.rows[r]
        self.win.Lock_all(MPI.MODE_NOCHECK)  # a passive epoch for MPI_Win_sync (memory barrier)
        self._full: Any = None  # Ibarrier: every rank's row is full
        self._free: Any = None  # Ibarrier: no rank reads the rows any more

    def wait_free(self) -> None:
        """Wait until no rank reads the rows of the last sum (before writing :attr:`row`)."""
        if self._free is not None:
            self._free.Wait()
            self._free = None

    def start(self) -> None:
        """This rank's row is full: tell the others (non-blocking)."""
        self.win.Sync()  # this rank's writes are visible before the barrier
        self._full = self.comm.Ibarrier()

    def ready(self, scale: float | None = None) -> np.ndarray | None:
        """The sum (a new array, times ``scale`` unless None) if every rank's row is full
        (computing it now), else None; does not wait. The sum is handed out once: by this call
        or by :meth:`finish`."""
        if self._full is None or not self._full.Test():
            return None
        self._full = None
        return self._sum(scale)

    def finish(self, scale: float | None = None) -> np.ndarray:
        """Wait until every rank's row is full and return the sum (a new array), times
        ``scale`` unless None (after :meth:`start`, when :meth:`ready` has not returned it)."""
        if self._full is None:
            raise RuntimeError("gradhub-mpi: SharedReduction.finish: no sum was started")
        self._full.Wait()
        self._full = None
        return self._sum(scale)

    def _sum(self, scale: float | None) -> np.ndarray:
        self.win.Sync()  # the others' writes are visible after the barrier
        rows, p, n = self.rows, self.size, self.count
        s = None if scale is None else self.dtype.type(scale)
        out = np.empty(n, dtype=self.dtype)
        if self.direct:
            lo, hi, dest = 0, n, out
        else:
            lo, hi, dest = self.rank * n // p, (self.rank + 1) * n // p, rows[p]
        for a in range(lo, hi, BLOCK):
            b = min(a + BLOCK, hi)
            d = dest[a:b]
            if p == 1:
                d[...] = rows[0, a:b]
            else:
                np.add(rows[0, a:b], rows[1, a:b], out=d)
            for q in range(2, p):
                np.add(d, rows[q, a:b], out=d)
            if s is not None:
                np.multiply(d, s, out=d)
        if not self.direct:
            self.win.Sync()
            self.sum_comm.Barrier()  # every chunk of the result row is there
            self.win.Sync()
            np.copyto(out, rows[p])
        self._free = self.sum_comm.Ibarrier()
        return out

    def free(self) -> None:
        """Give the window back (collective over the ranks of ``comm``)."""
        self.wait_free()
        self.win.Unlock_all()
        self.win.Free()


def node_communicator(MPI: Any, comm: Any) -> Any:
    """``comm`` split by host (``MPI_COMM_TYPE_SHARED``) when all its ranks share one host (the
    group has every rank on every rank), else None. Collective over ``comm``."""
    local = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
    one = np.array([int(local.Get_size() == comm.Get_size())], dtype=np.int64)
    comm.Allreduce(MPI.IN_PLACE, one, op=MPI.MIN)
    if one[0]:
        return local
    local.Free()
    return None
