"""chainermn's communicators on gradhub's (gradhub-mpi): ``create_communicator`` and the
communicator's calls (chainermn 7.8.1, ``chainermn/communicators``).

``"naive"`` and ``"flat"`` are gradhub's ``"mpi"`` communicator (numpy arrays: the chainer layer's
CPU parameters), ``"pure_nccl"`` is ``"nccl"`` (CuPy arrays on the rank's GPU). Gradients are
all-reduced in their own dtype (chainermn's ``flat`` packs them into float32 and ``pure_nccl``
may use float16: ``allreduce_grad_dtype`` is refused). The ``*_obj`` calls of chainermn pickle
Python objects, which gradhub never does (unpickling runs code): :meth:`Communicator.bcast_obj`
sends JSON instead (numbers, strings, lists, dicts, None), :meth:`Communicator.allreduce_obj`
sums numbers and arrays; ``send_obj``, ``recv_obj`` and ``gather_obj`` raise.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np

#: chainermn's communicator name -> gradhub's
SUPPORTED = {"naive": "mpi", "flat": "mpi", "pure_nccl": "nccl"}

#: the other names chainermn has (had), refused by name
UNSUPPORTED = {
    "non_cuda_aware": "GPU arrays through host copies and MPI; use 'pure_nccl'",
    "dummy": "a communicator that does not communicate (for measurements)",
    "hierarchical": "chainermn 5's NCCL-within-a-host and MPI-between-hosts scheme; use "
    "'pure_nccl' (NCCL chooses its own algorithms across hosts)",
    "two_dimensional": "chainermn 5's two-dimensional all-reduce; use 'pure_nccl'",
    "single_node": "chainermn 5's NCCL on one host; use 'pure_nccl'",
}

#: chainermn calls that pickle Python objects or exchange arrays point to point, refused
_REFUSED = {
    "send_obj": "pickles the object",
    "recv_obj": "unpickles what it receives",
    "gather_obj": "pickles the objects",
    "send": "point-to-point transfers are not provided",
    "recv": "point-to-point transfers are not provided",
    "alltoall": "not provided",
    "scatter": "not provided",
    "gather": "not provided",
    "split": "sub-communicators are not provided",
}


def create_communicator(
    communicator_name: str = "pure_nccl", mpi_comm: Any = None, **kwargs: Any
) -> Communicator:
    """chainermn's ``create_communicator``: ``"naive"`` or ``"flat"`` (MPI, CPU arrays) or
    ``"pure_nccl"`` (NCCL, GPU arrays; chainermn's default), over ``mpi_comm`` (an mpi4py
    communicator, default ``MPI.COMM_WORLD``).

    ``allreduce_grad_dtype`` is accepted as None only (gradients are all-reduced in their own
    dtype); ``batched_copy`` is accepted and ignored. Other names raise ``ValueError`` naming
    them; a missing gradhub-mpi (or CuPy, for ``"pure_nccl"``) raises
    :class:`gradhub.distributed.CommunicatorError` saying what to install.

    Example::

        >>> from gradhub_compat import chainermn
        >>> try:
        ...     chainermn.create_communicator("hierarchical")
        ... except ValueError as e:
        ...     print(str(e).split(" (")[0])
        chainermn.create_communicator: 'hierarchical' is not supported by gradhub_compat.chainermn
    """
    where = "chainermn.create_communicator"
    allreduce_grad_dtype = kwargs.pop("allreduce_grad_dtype", None)
    kwargs.pop("batched_copy", None)
    if kwargs:
        raise TypeError(f"{where}() got unexpected keyword argument(s) {sorted(kwargs)}")
    if not isinstance(communicator_name, str):
        raise TypeError(
            f"{where}: argument 'communicator_name' must be a string, got "
            f"{type(communicator_name).__name__}"
        )
    name = SUPPORTED.get(communicator_name)
    if name is None:
        have = ", ".join(repr(n) for n in SUPPORTED)
        why = UNSUPPORTED.get(communicator_name)
        if why is not None:
            raise ValueError(
                f"{where}: {communicator_name!r} is not supported by gradhub_compat.chainermn "
                f"({why}); the supported communicators are {have}"
            )
        raise ValueError(
            f"{where}: unrecognized communicator {communicator_name!r}; the supported "
            f"communicators are {have}"
        )
    if allreduce_grad_dtype is not None:
        if communicator_name != "pure_nccl":
            raise ValueError(f"{where}: allreduce_grad_dtype is only available at 'pure_nccl'")
        raise ValueError(
            f"{where}: allreduce_grad_dtype={allreduce_grad_dtype!r} is not supported: "
            "gradhub all-reduces the gradients in their own dtype (pass None)"
        )
    import gradhub as gh

    options = {} if mpi_comm is None else {"comm": mpi_comm}
    return Communicator(gh.distributed.communicator(name, **options), communicator_name)


def _float64(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8).astype(np.float64)


class Communicator:
    """chainermn's ``CommunicatorBase`` over a gradhub communicator (``gradhub_comm``):
    ``rank``, ``size``, ``intra_rank``/``intra_size`` (within a host), ``inter_rank``/
    ``inter_size`` (the host's index, hosts ordered by their lowest rank, and their number),
    ``mpi_comm``; the model calls ``bcast_data(model)`` and ``multi_node_mean_grad(model,
    zero_fill=False)`` (``allreduce_grad``, deprecated in chainermn, too), and the array
    collectives ``allreduce``, ``bcast``, ``allgather``."""

    def __init__(self, gradhub_comm: Any, name: str) -> None:
        self.gradhub_comm = gradhub_comm
        self.name = name
        #: the "mpi" communicator (the same, or the one under "nccl"): numpy headers, objects
        self.host = getattr(gradhub_comm, "host", gradhub_comm)

    def __repr__(self) -> str:
        return f"chainermn.Communicator({self.name!r}, rank={self.rank}, size={self.size})"

    def __getattr__(self, name: str) -> Any:
        why = _REFUSED.get(name)
        if why is None:
            raise AttributeError(f"chainermn communicator has no attribute {name!r}")
        raise NotImplementedError(
            f"chainermn communicator.{name}: not supported by gradhub_compat.chainermn ({why}); "
            "exchange arrays with allreduce, bcast and allgather, objects with bcast_obj (JSON)"
        )

    # -- ranks -----------------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        return int(self.gradhub_comm.rank)

    @property
    def size(self) -> int:
        return int(self.gradhub_comm.size)

    @property
    def intra_rank(self) -> int:
        return int(self.gradhub_comm.local_rank)

    @property
    def intra_size(self) -> int:
        return int(self.gradhub_comm.local_size)

    @property
    def inter_rank(self) -> int:
        return int(self.gradhub_comm.host_rank)

    @property
    def inter_size(self) -> int:
        return int(self.gradhub_comm.host_count)

    @property
    def mpi_comm(self) -> Any:
        """The mpi4py communicator."""
        return self.host.comm

    # -- models ----------------------------------------------------------------------------------
    def bcast_data(self, model: Any) -> None:
        """Copy rank 0's parameter values into every rank's ``model`` (in place, parameters in
        name order; uninitialized ones are skipped)."""
        arrays = [p.array for _, p in sorted(model.namedparams()) if p.array is not None]
        if arrays:
            self.gradhub_comm.bcast(arrays, root=0)

    def broadcast_data(self, model: Any) -> None:
        """chainermn's older name of :meth:`bcast_data`."""
        self.bcast_data(model)

    def multi_node_mean_grad(self, model: Any, zero_fill: bool = False) -> None:
        """Replace every gradient of ``model`` by its mean over the ranks, in place.

        .. math:: g \\leftarrow \\frac{1}{p} \\sum_{r=0}^{p-1} g_r

        ``zero_fill=True`` gives an initialized parameter without a gradient a zero one first
        (so that every rank takes part with the same arrays); otherwise such parameters are
        skipped, which every rank must then do alike.
        """
        grads = []
        for _, param in sorted(model.namedparams()):
            if param.array is None:
                continue
            if param.grad is None:
                if not zero_fill:
                    continue
                param.grad = param.xp.zeros_like(param.array)
            grads.append(param.grad)
        if grads:
            self.gradhub_comm.all_reduce(grads, division=True)

    def allreduce_grad(self, model: Any, zero_fill: bool = False) -> None:
        """Deprecated in chainermn: :meth:`multi_node_mean_grad`."""
        warnings.warn("allreduce_grad() is deprecated.", DeprecationWarning, stacklevel=2)
        self.multi_node_mean_grad(model, zero_fill)

    # -- arrays ----------------------------------------------------------------------------------
    def allreduce(self, x: Any) -> Any:
        """The sum of ``x`` over the ranks, a new array (``x`` unchanged)."""
        return self.gradhub_comm.all_reduce(x, inplace=False)

    def bcast(self, x: Any, root: int = 0) -> Any:
        """Rank ``root``'s array ``x``, on every rank: a new array; the other ranks may pass
        ``None`` (the shape and dtype come from ``root`` as numbers, not pickled)."""
        head = np.zeros(11, dtype=np.float64)
        if self.rank == root:
            if x is None:
                raise ValueError("chainermn communicator.bcast: the root's array is None")
            dtypes = ["float16", "float32", "float64"]
            if np.dtype(x.dtype).name not in dtypes:
                raise TypeError(
                    f"chainermn communicator.bcast: dtype {x.dtype} is not supported; the "
                    "collectives take float16, float32 and float64"
                )
            if x.ndim > 9:
                raise ValueError("chainermn communicator.bcast: at most 9 dimensions")
            head[0] = dtypes.index(np.dtype(x.dtype).name)
            head[1] = x.ndim
            head[2 : 2 + x.ndim] = x.shape
        self.host.bcast(head, root=root)
        dtype = np.dtype(["float16", "float32", "float64"][int(head[0])])
        shape = tuple(int(s) for s in head[2 : 2 + int(head[1])])
        if self.rank == root:
            out = x.copy()
        else:
            xp = np if x is None else _array_module(x)
            if xp is np and self.host is not self.gradhub_comm:
                xp = self.gradhub_comm.cupy  # "nccl": receive on the GPU
            out = xp.empty(shape, dtype=dtype)
        self.gradhub_comm.bcast(out, root=root)
        return out

    def allgather(self, x: Any) -> tuple[Any, ...]:
        """``x`` of every rank, a tuple (same shape and dtype on every rank)."""
        return tuple(self.gradhub_comm.all_gather(x))

    # -- objects (no pickle) ---------------------------------------------------------------------
    def bcast_obj(self, obj: Any, max_buf_len: int | None = None, root: int = 0) -> Any:
        """Rank ``root``'s ``obj`` on every rank, sent as JSON (numbers, strings, lists, dicts,
        booleans, None; tuples arrive as lists), never pickled. Other objects raise
        ``TypeError`` on the root (and the other ranks)."""
        size = np.zeros(1, dtype=np.float64)
        data = b""
        error: Exception | None = None
        if self.rank == root:
            try:
                data = json.dumps(obj).encode()
            except (TypeError, ValueError) as e:
                size[0] = -1.0
                error = e
            else:
                size[0] = len(data)
        self.host.bcast(size, root=root)
        if size[0] < 0:
            message = (
                "chainermn communicator.bcast_obj: gradhub_compat sends objects as JSON, never "
                "pickled; the object of rank {root} is not JSON ({error})"
            )
            raise TypeError(
                message.format(root=root, error=error if self.rank == root else "see that rank")
            )
        buf = _float64(data) if self.rank == root else np.zeros(int(size[0]), dtype=np.float64)
        if len(buf):
            self.host.bcast(buf, root=root)
        return json.loads(bytes(buf.astype(np.uint8)).decode())

    def allreduce_obj(self, obj: Any) -> Any:
        """The sum over the ranks of a number or a numpy array (chainermn sums any pickled
        object; other objects raise ``TypeError``)."""
        if isinstance(obj, (bool, np.bool_)) or not isinstance(
            obj, (int, float, np.integer, np.floating, np.ndarray)
        ):
            raise TypeError(
                "chainermn communicator.allreduce_obj: gradhub_compat sums numbers and numpy "
                f"arrays (nothing is pickled), got {type(obj).__name__}"
            )
        a = np.asarray(obj)
        total = self.host.all_reduce(np.atleast_1d(a).astype(np.float64), inplace=False)
        total = total.reshape(a.shape)
        if isinstance(obj, np.ndarray):
            return total.astype(obj.dtype)
        if isinstance(obj, (int, np.integer)):
            return round(float(total))
        return type(obj)(float(total))


def _array_module(x: Any) -> Any:
    """numpy for a numpy array, else the array's own module (CuPy)."""
    if isinstance(x, np.ndarray):
        return np
    import importlib

    return importlib.import_module(type(x).__module__.split(".")[0])
