"""The ``"nccl"`` communicator: collectives on CUDA (CuPy) arrays and Variables through NCCL.

One process per GPU, started by ``mpiexec`` as for ``"mpi"``. MPI (mpi4py) only starts the job:
rank 0 makes the NCCL unique id (``cupy.cuda.nccl.get_unique_id()``), ``MPI_Bcast`` hands its 128
bytes to every rank, and each rank builds its ``cupy.cuda.nccl.NcclCommunicator(size, id, rank)``
on the GPU ``local_rank % device count`` (a host needs at least as many GPUs as it has ranks:
NCCL refuses two ranks on one GPU). The collectives then call NCCL on the arrays' device memory
(``array.data.ptr``) on CuPy's current stream: nothing is copied to the host and nothing waits
for the GPU, except ``barrier()``. float16, float32 and float64 go to NCCL as they are.

For data-parallel training, :meth:`NCCLCommunicator.iall_reduce` starts a bucket's all-reduce on a
side stream of the communicator after an event recorded on the current stream (so that the
bucket's gradients are final when NCCL reads them); its request's ``Wait()`` makes the current
stream wait for the all-reduce's end (an event, no host synchronization).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from gradhub import Variable
from gradhub.distributed import CommunicatorError

from .communicator import DTYPES, MPICommunicator

#: what to install for the NCCL path (CuPy with NCCL, gradhub's CUDA device)
INSTALL_HINT = (
    'pip install "gradhub-mpi[mpich,nccl]" (CuPy for CUDA 13 through "gradhub-cuda[cuda13]" and '
    'NCCL from the nvidia-nccl-cu13 wheel; "gradhub-mpi[mpich,nccl12]" for CUDA 12)'
)


def import_cupy_nccl() -> tuple[Any, Any]:
    """``(cupy, cupy.cuda.nccl)``, or :class:`CommunicatorError` saying what is missing and what
    to install (CuPy, a usable NCCL library, gradhub-cuda's ``cuda`` device, a GPU)."""
    try:
        import cupy
    except Exception as e:  # ImportError, or a CUDA library that fails to load
        raise CommunicatorError(
            f"gradhub-mpi: the 'nccl' communicator needs CuPy, which is not installed or failed "
            f"to import ({type(e).__name__}: {e}); {INSTALL_HINT}"
        ) from e
    try:
        from cupy.cuda import nccl
    except Exception as e:
        raise CommunicatorError(
            f"gradhub-mpi: the 'nccl' communicator: cupy.cuda.nccl failed to import "
            f"({type(e).__name__}: {e}); {INSTALL_HINT}"
        ) from e
    if not getattr(nccl, "available", False):
        raise CommunicatorError(
            "gradhub-mpi: the 'nccl' communicator: CuPy finds no NCCL library "
            f"(cupy.cuda.nccl.available is False); {INSTALL_HINT}"
        )
    import gradhub as gh
    from gradhub.errors import DeviceError

    try:
        gh.get_extension_context("cuda")
    except DeviceError as e:  # gradhub-cuda missing, or no usable GPU
        raise CommunicatorError(
            f"gradhub-mpi: the 'nccl' communicator needs gradhub's 'cuda' device: {e}"
        ) from e
    return cupy, nccl


class _StreamRequest:
    """A started all-reduce: ``Wait()`` makes the current stream wait for its end (no host
    synchronization); ``done`` is the event recorded on the side stream after it."""

    __slots__ = ("cupy", "done")

    def __init__(self, cupy: Any, done: Any) -> None:
        self.cupy = cupy
        self.done = done

    def Wait(self) -> None:
        self.cupy.cuda.get_current_stream().wait_event(self.done)


class NCCLCommunicator:
    """A communicator of CUDA arrays over NCCL, one GPU per rank, started over MPI.

    ``comm`` is an mpi4py communicator (default ``MPI.COMM_WORLD``); ``abort_on_exception`` and
    ``require_launcher`` are those of :class:`gradhub_mpi.communicator.MPICommunicator`.
    ``rank``, ``size``, ``local_rank`` come from MPI; ``device_index`` is the GPU this rank uses
    (``local_rank % device count``; it is made CuPy's current device) and ``device`` its gradhub
    name (``"cuda:0"``), for ``gh.get_extension_context(comm.device)``. ``host`` is the
    ``"mpi"`` communicator underneath (numpy arrays, checks that need no GPU), ``nccl_comm`` the
    ``cupy.cuda.nccl.NcclCommunicator`` and ``side_stream`` the stream of the bucket all-reduces
    of data-parallel training (made by the first :meth:`iall_reduce`).

    Raises :class:`gradhub.distributed.CommunicatorError` on every rank, naming the rank and the
    cause, when CuPy, NCCL, gradhub-cuda or enough GPUs are missing on any rank.
    """

    def __init__(
        self,
        comm: Any = None,
        *,
        abort_on_exception: bool | None = None,
        require_launcher: bool = False,
    ) -> None:
        host = MPICommunicator(
            comm, abort_on_exception=abort_on_exception, require_launcher=require_launcher
        )
        self.host = host
        self.rank: int = host.rank
        self.size: int = host.size
        self.local_rank: int = host.local_rank
        self.local_size: int = host.local_size
        self.host_rank: int = host.host_rank
        self.host_count: int = host.host_count
        # every rank checks what it needs, then they agree: one failing rank makes every rank
        # raise (instead of the others waiting for it in ncclCommInitRank)
        problem = ""
        cupy: Any = None
        nccl: Any = None
        count = 0
        try:
            cupy, nccl = import_cupy_nccl()
            count = int(cupy.cuda.runtime.getDeviceCount())
            if count < self.local_size:
                problem = (
                    f"gradhub-mpi: the 'nccl' communicator needs one GPU per rank: this host runs "
                    f"{self.local_size} ranks but has {count} GPU(s) (NCCL refuses two ranks on "
                    f"one GPU); start at most {count} ranks per host (mpiexec -n {count}, or "
                    f"-hosts host1:{count},host2:{count}...)"
                )
        except CommunicatorError as e:
            problem = str(e)
        except Exception as e:  # a CUDA runtime error while counting the GPUs
            problem = f"gradhub-mpi: the 'nccl' communicator: {type(e).__name__}: {e}"
        self._agree(problem)
        self.cupy = cupy
        self.nccl = nccl
        self.device_index: int = self.local_rank % count
        self.device: str = f"cuda:{self.device_index}"
        self._cuda_device = cupy.cuda.Device(self.device_index)
        self._cuda_device.use()
        # the id's 128 chars after a flag: CuPy 14 gives the id as bytes (flag 1), earlier CuPy
        # as a tuple of chars, signed or not (flag 0); NcclCommunicator takes what it gave
        uid = np.zeros(129, dtype=np.int16)
        if self.rank == 0:
            made = nccl.get_unique_id()
            if isinstance(made, (bytes, bytearray)):
                uid[0] = 1
                uid[1 : 1 + len(made)] = np.frombuffer(bytes(made), dtype=np.uint8)
            else:
                uid[1 : 1 + len(made)] = made
        host.comm.Bcast(uid, root=0)
        comm_id: Any = bytes(uid[1:].astype(np.uint8)) if uid[0] else tuple(int(c) for c in uid[1:])
        try:
            self.nccl_comm = nccl.NcclCommunicator(self.size, comm_id, self.rank)
        except Exception as e:
            raise CommunicatorError(
                f"gradhub-mpi: rank {self.rank}: NCCL failed to start on GPU {self.device_index} "
                f"({type(e).__name__}: {e})"
            ) from e
        self._dtypes = {
            np.dtype(np.float16): nccl.NCCL_FLOAT16,
            np.dtype(np.float32): nccl.NCCL_FLOAT32,
            np.dtype(np.float64): nccl.NCCL_FLOAT64,
        }
        self.side_stream: Any = None

    def _agree(self, problem: str) -> None:
        """Raise on every rank when ``problem`` (this rank's, "" for none) or another rank's is
        not empty, naming the first failing rank and its message."""
        flags = np.zeros(self.size, dtype=np.float64)
        self.host.comm.Allgather(np.array([1.0 if problem else 0.0]), flags)
        bad = [r for r in range(self.size) if flags[r]]
        if not bad:
            return
        first = bad[0]
        text = np.zeros(1024, dtype=np.uint8)
        if self.rank == first:
            raw = problem.encode()[:1024]
            text[: len(raw)] = np.frombuffer(raw, dtype=np.uint8)
        self.host.comm.Bcast(text, root=first)
        message = bytes(text).rstrip(b"\0").decode(errors="replace")
        others = f" (ranks failing: {bad})" if len(bad) > 1 else ""
        if self.size == 1:
            raise CommunicatorError(message)
        raise CommunicatorError(f"rank {first} of {self.size}: {message}{others}")

    def __repr__(self) -> str:
        return (
            f"NCCLCommunicator(rank={self.rank}, size={self.size}, local_rank={self.local_rank}, "
            f"device={self.device!r})"
        )

    # -- helpers ---------------------------------------------------------------------------------
    def _stream(self) -> int:
        return int(self.cupy.cuda.get_current_stream().ptr)

    def _arrays(self, values: Any, where: str) -> tuple[list[Any], bool]:
        """The CuPy arrays of ``values`` (an array, a Variable or a list of them), checked."""
        single = not isinstance(values, (list, tuple))
        items: Sequence[Any] = [values] if single else values
        out = []
        cp = self.cupy
        for k, v in enumerate(items):
            a = v.d if isinstance(v, Variable) else v
            name = "values" if single else f"values[{k}]"
            if not isinstance(a, cp.ndarray):
                hint = (
                    " (numpy arrays and CPU Variables take the 'mpi' communicator: "
                    "gh.distributed.communicator('mpi'))"
                    if isinstance(a, np.ndarray)
                    else ""
                )
                raise TypeError(
                    f"gradhub-mpi: nccl {where}: {name} must be a CuPy array or a Variable on "
                    f"{self.device}, got {type(a).__name__}{hint}"
                )
            if a.dtype not in DTYPES:
                raise TypeError(
                    f"gradhub-mpi: nccl {where}: {name} has dtype {a.dtype}; the collectives "
                    "take float16, float32 and float64"
                )
            if int(a.device.id) != self.device_index:
                raise ValueError(
                    f"gradhub-mpi: nccl {where}: {name} is on cuda:{int(a.device.id)} but this "
                    f"rank's communicator uses {self.device}"
                )
            out.append(a)
        return out, single

    # -- collectives -----------------------------------------------------------------------------
    def all_reduce(self, values: Any, division: bool = False, inplace: bool = True) -> Any:
        """Sum ``values`` (a CuPy array, a Variable on this rank's GPU, or a list of them) over
        the ranks, on the current stream.

        .. math:: x \\leftarrow \\sum_{r=0}^{p-1} x_r \\quad (\\text{divided by } p \\text{ with
           ``division=True``})

        In place (default) the arrays (Variables' ``.d``) are overwritten and ``values`` is
        returned; with ``inplace=False`` they are left alone and new arrays are returned (a list
        for a list). The arrays of a list go to NCCL as one group (``ncclGroupStart/End``).
        """
        arrays, single = self._arrays(values, "all_reduce")
        cp, nccl = self.cupy, self.nccl
        stream = self._stream()
        work = []
        for a in arrays:
            contiguous = a.flags.c_contiguous
            if inplace:
                buf = a if contiguous else cp.ascontiguousarray(a)
                src = buf
            else:
                src = a if contiguous else cp.ascontiguousarray(a)
                buf = cp.empty(a.shape, dtype=a.dtype)
            work.append((a, src, buf))
        nccl.groupStart()
        try:
            for _, src, buf in work:
                self.nccl_comm.allReduce(
                    src.data.ptr,
                    buf.data.ptr,
                    buf.size,
                    self._dtypes[buf.dtype],
                    nccl.NCCL_SUM,
                    stream,
                )
        finally:
            nccl.groupEnd()
        out = []
        for a, _, buf in work:
            if division:
                buf *= buf.dtype.type(1.0 / self.size)
            if inplace and buf is not a:
                a[...] = buf
            out.append(buf)
        if inplace:
            return values
        return out[0] if single else out

    def iall_reduce(self, buf: Any) -> _StreamRequest:
        """Start the sum of the contiguous CuPy array ``buf`` over the ranks, in place, on this
        communicator's side stream once the work queued so far on the current stream is done
        (an event); returns the request, whose ``Wait()`` makes the current stream wait for the
        sum (the host does not wait)."""
        cp = self.cupy
        if self.side_stream is None:
            with self._cuda_device:
                self.side_stream = cp.cuda.Stream(non_blocking=True)
        side = self.side_stream
        ready = cp.cuda.get_current_stream().record()
        side.wait_event(ready)
        self.nccl_comm.allReduce(
            buf.data.ptr,
            buf.data.ptr,
            buf.size,
            self._dtypes[buf.dtype],
            self.nccl.NCCL_SUM,
            int(side.ptr),
        )
        return _StreamRequest(cp, side.record())

    def empty(self, size: int, dtype: Any) -> Any:
        """A new uninitialized CuPy array of ``size`` values on this rank's GPU (a bucket of
        data-parallel training)."""
        with self._cuda_device:
            return self.cupy.empty(size, dtype=dtype)

    def bcast(self, values: Any, root: int = 0) -> Any:
        """Copy ``values`` (a CuPy array, a Variable, or a list of them) of rank ``root`` into
        the same arrays of every rank, in place, on the current stream; returns ``values``."""
        self.host._check_root(root, "bcast")
        arrays, _ = self._arrays(values, "bcast")
        cp, nccl = self.cupy, self.nccl
        stream = self._stream()
        work = [(a, a if a.flags.c_contiguous else cp.ascontiguousarray(a)) for a in arrays]
        nccl.groupStart()
        try:
            for _, buf in work:
                self.nccl_comm.broadcast(
                    buf.data.ptr, buf.data.ptr, buf.size, self._dtypes[buf.dtype], root, stream
                )
        finally:
            nccl.groupEnd()
        for a, buf in work:
            if buf is not a:
                a[...] = buf
        return values

    def all_gather(self, x: Any) -> list[Any]:
        """The CuPy array ``x`` (or a Variable's ``.d``) of every rank: a list, one array per
        rank (views of one new array). The shapes and dtypes must agree across ranks (checked
        over MPI: an error names the ranks)."""
        (a,), _ = self._arrays(x, "all_gather")
        self.host._check_same(a, "all_gather")
        cp = self.cupy
        buf = a if a.flags.c_contiguous else cp.ascontiguousarray(a)
        out = cp.empty((self.size, *buf.shape), dtype=buf.dtype)
        self.nccl_comm.allGather(
            buf.data.ptr, out.data.ptr, buf.size, self._dtypes[buf.dtype], self._stream()
        )
        return [out[r] for r in range(self.size)]

    def barrier(self) -> None:
        """Wait until the work queued on the current stream is done on this rank and every rank
        has called ``barrier()``."""
        self.cupy.cuda.get_current_stream().synchronize()
        self.host.barrier()

    def abort(self, code: int = 1) -> None:
        """End every process of the job with status ``code``: NCCL's communicator is aborted
        (``ncclCommAbort``: no kernel waits for the other ranks any more), then ``MPI_Abort``."""
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            self.nccl_comm.abort()
        finally:
            self.host.abort(code)

    # -- data-parallel training ------------------------------------------------------------------
    def all_reduce_callback(
        self, params: Any, pack_size: int | None = None, division: bool = True
    ) -> Any:
        """The backward callback of data-parallel training on CUDA parameters: as
        :meth:`gradhub_mpi.communicator.MPICommunicator.all_reduce_callback`, with each bucket's
        all-reduce on the side stream (:meth:`iall_reduce`)."""
        from .data_parallel import AllReduceCallback

        return AllReduceCallback(self, params, pack_size=pack_size, division=division)
