"""nnabla's ``nnabla.communicators`` on gradhub's MPI communicator (gradhub-mpi).

``import gradhub_compat.nnabla.communicators as C`` replaces ``import nnabla.communicators as
C``::

    comm = C.MultiProcessDataParalellCommunicator(ctx)
    comm.init()
    comm.bcast([p.data for p in params.values()], src=0)
    cb = comm.all_reduce_callback([p.grad for p in params.values()], pack_size=2**20)
    loss.backward(clear_buffer=True, communicator_callbacks=cb)

The collectives take nnabla's ``NdArray`` (``x.data``, ``x.grad``), Variables (their data) and
arrays, and act in place. ``division=False`` is nnabla's default for ``all_reduce`` and for
``all_reduce_callback``. The communicator comes from ``gradhub.distributed.communicator("mpi")``
(an error says what to install); with a CUDA context (``get_extension_context("cudnn")``) it is
``"nccl"`` (NCCL on the GPU arrays, as nnabla's communicator with its CUDA extension).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gradhub import Variable as NativeVariable

from ._variable import NdArray


def _array(x: Any, where: str) -> Any:
    if isinstance(x, NdArray):
        return x.data
    if isinstance(x, NativeVariable):
        return x.d
    if isinstance(x, np.ndarray) or hasattr(x, "__cuda_array_interface__"):
        return x  # numpy for "mpi", CuPy for "nccl"
    raise TypeError(
        f"nnabla communicators: {where}: expected an NdArray (x.data, x.grad), a Variable or an "
        f"array, got {type(x).__name__}"
    )


def _arrays(data: Any, where: str) -> list[Any]:
    items = data if isinstance(data, (list, tuple)) else [data]
    return [_array(x, where) for x in items]


class Communicator:
    """nnabla's ``Communicator`` interface over a gradhub communicator (made by ``init()``)."""

    def __init__(self, ctx: Any = None, name: str | None = None) -> None:
        self.ctx = ctx
        if name is None:  # a CUDA context takes NCCL
            cuda = getattr(ctx, "backend", "cpu") in ("cuda", "cudnn")
            name = "nccl" if cuda else "mpi"
        self.name = name
        self._comm: Any = None

    def init(self) -> None:
        """Start the communicator (MPI is initialized here)."""
        import gradhub as gh

        if self._comm is None:
            self._comm = gh.distributed.communicator(self.name)

    @property
    def comm(self) -> Any:
        if self._comm is None:
            raise RuntimeError("nnabla communicators: call init() before using the communicator")
        return self._comm

    @property
    def rank(self) -> int:
        return int(self.comm.rank)

    @property
    def size(self) -> int:
        return int(self.comm.size)

    @property
    def local_rank(self) -> int:
        return int(self.comm.local_rank)

    def all_reduce(self, data: Any, division: bool = False, inplace: bool = False) -> None:
        """Sum ``data`` (an NdArray or a list of them) over the ranks, in place; divided by
        the size with ``division``. ``inplace`` chooses nnabla's packing, the result is the
        same."""
        arrays = _arrays(data, "all_reduce")
        self.comm.all_reduce(arrays, division=division, inplace=True)

    def bcast(self, data: Any, src: int = 0, inplace: bool = False) -> None:
        """Copy ``data`` of rank ``src`` into every rank's, in place."""
        arrays = _arrays(data, "bcast")
        self.comm.bcast(arrays, root=src)

    def all_gather(self, ndarray: Any, ndarray_list: list[Any]) -> None:
        """Fill ``ndarray_list`` (one NdArray per rank) with ``ndarray`` of every rank."""
        got = self.comm.all_gather(_array(ndarray, "all_gather"))
        if len(ndarray_list) != len(got):
            raise ValueError(
                f"nnabla communicators: all_gather: ndarray_list has {len(ndarray_list)} entries "
                f"but there are {len(got)} ranks"
            )
        for dst, a in zip(ndarray_list, got):
            _array(dst, "all_gather")[...] = a

    def barrier(self) -> None:
        self.comm.barrier()

    def abort(self) -> None:
        self.comm.abort()

    def all_reduce_callback(
        self, data: Any, pack_size: int, division: bool = False, **_: Any
    ) -> Any:
        """The callback of ``backward(communicator_callbacks=...)``: all-reduces the gradients
        ``data`` (``[x.grad for x in params]``) in packs of ``pack_size`` values while backward
        runs."""
        items = data if isinstance(data, (list, tuple)) else [data]
        params = []
        for k, x in enumerate(items):
            if isinstance(x, NdArray):
                x = x._var
            if not isinstance(x, NativeVariable):
                raise TypeError(
                    f"nnabla communicators: all_reduce_callback: data[{k}] must be a parameter's "
                    f"gradient NdArray (x.grad), got {type(x).__name__}"
                )
            params.append(x)
        return self.comm.all_reduce_callback(params, pack_size=pack_size, division=division)


def MultiProcessDataParalellCommunicator(ctx: Any = None) -> Communicator:
    """nnabla's multi-process data-parallel communicator (its spelling): one process per rank,
    started by ``mpiexec``; call ``init()`` before use."""
    return Communicator(ctx)


#: the corrected spelling of later nnabla versions
MultiProcessDataParallelCommunicator = MultiProcessDataParalellCommunicator

__all__ = [
    "Communicator",
    "MultiProcessDataParalellCommunicator",
    "MultiProcessDataParallelCommunicator",
]
