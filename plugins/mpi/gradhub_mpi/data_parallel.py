"""Data-parallel training: gradient buckets all-reduced while backward runs, parameter
broadcast and checks at the start, and the split of a dataset by rank.

Every rank holds the whole model and a part of each global batch. ``cb =
comm.all_reduce_callback(params)`` packs the parameters' gradients into buckets (about 25 MB each
by default, in reverse order of ``params``: the last layer's gradients are final first); passed
as ``loss.backward(communicator_callbacks=cb)`` (or to ``gh.grad``), it copies each gradient into
its bucket as soon as the engine says it is final and starts that bucket's non-blocking
all-reduce (``MPI_Iallreduce``) once the bucket is full, while the engine goes on with the layers
below. When backward ends it waits for the buckets still in flight and hands each parameter its
all-reduced gradient (divided by the number of ranks with ``division=True``, so that each rank's
loss being the mean over its part gives the gradient of the mean over the global batch).

With the ``"nccl"`` communicator the buckets are CuPy arrays on the rank's GPU, filled on the
current stream; each bucket's all-reduce is queued on the communicator's side stream behind an
event recorded when its last gradient was copied in, and the end of backward makes the current
stream wait for the side stream's events (the host waits for nothing).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gradhub import Variable

#: the default size of a gradient bucket in bytes (PyTorch DDP's ``bucket_cap_mb=25``)
DEFAULT_BUCKET_BYTES = 25 * 2**20


def _named(params: Any, where: str) -> list[tuple[str, Variable]]:
    """``(name, Variable)`` pairs of ``params``: a mapping name -> Variable (such as
    ``gh.get_parameters()``) or a sequence of Variables (named by position)."""
    if isinstance(params, Mapping):
        items = [(str(k), v) for k, v in params.items()]
    elif isinstance(params, Sequence) and not isinstance(params, (str, bytes)):
        items = [
            ((v.name if isinstance(v, Variable) else None) or f"#{k}", v)
            for k, v in enumerate(params)
        ]
    else:
        raise TypeError(
            f"gradhub-mpi: {where}: argument 'params' must be a mapping name -> Variable or a "
            f"list of Variables, got {type(params).__name__}"
        )
    for name, v in items:
        if not isinstance(v, Variable):
            raise TypeError(
                f"gradhub-mpi: {where}: parameter {name!r} must be a Variable, got "
                f"{type(v).__name__}"
            )
    return items


class _Bucket:
    __slots__ = ("buf", "dtype", "got", "left", "members", "offsets", "request", "size")

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = dtype
        self.members: list[Variable] = []
        self.offsets: list[int] = []
        self.size = 0
        self.buf: np.ndarray | None = None
        self.left = 0
        self.request: Any = None
        self.got: list[bool] = []


class AllReduceCallback:
    """All-reduces the gradients of ``params`` in buckets while backward runs (a
    :class:`gradhub.engine.BackwardCallback`).

    ``pack_size``: the number of values in a bucket (nnabla's meaning; default: 25 MB of the
    parameters' dtype). ``division=True`` divides the sums by the number of ranks. After
    ``backward`` returns, each parameter's ``.g`` holds the all-reduced gradient (added to what
    ``.g`` held before the call, as backward accumulates); a parameter that got no gradient on
    this rank gets the all-reduced one of the others. ``events`` records ``(what, bucket, time)``
    with what ``"start"`` (the all-reduce was started), ``"finish"`` (backward's walk ended;
    bucket -1) and ``"done"`` (waited for); ``wait_seconds`` the time
    spent waiting for the buckets in flight at the end of the last backward.
    """

    def __init__(
        self,
        comm: Any,
        params: Any,
        *,
        pack_size: int | None = None,
        division: bool = True,
    ) -> None:
        where = "all_reduce_callback"
        named = _named(params, where)
        if pack_size is not None and (not isinstance(pack_size, int) or pack_size < 1):
            raise ValueError(
                f"gradhub-mpi: {where}: argument 'pack_size' must be a positive int (values per "
                f"bucket), got {pack_size!r}"
            )
        self.comm = comm
        # the buckets live where the communicator reduces them: its ``empty(size, dtype)`` (a
        # CuPy array on the GPU of the "nccl" communicator), else numpy's
        self._empty = getattr(comm, "empty", None) or (lambda n, dt: np.empty(n, dtype=dt))
        self.division = division
        self.buckets: list[_Bucket] = []
        self.where: dict[int, tuple[_Bucket, int]] = {}  # id(param) -> (bucket, member index)
        current: dict[np.dtype, _Bucket] = {}
        for _, v in reversed(named):  # the last layers' gradients are final first
            if not v.need_grad or id(v) in self.where:
                continue
            dt = np.dtype(v.dtype)
            cap = pack_size if pack_size is not None else DEFAULT_BUCKET_BYTES // dt.itemsize
            b = current.get(dt)
            if b is None or (b.size and b.size + v.size > cap):
                b = current[dt] = _Bucket(dt)
                self.buckets.append(b)
            self.where[id(v)] = (b, len(b.members))
            b.members.append(v)
            b.offsets.append(b.size)
            b.size += v.size
        self.events: list[tuple[str, int, float]] = []
        self.wait_seconds = 0.0
        self._given: dict[int, Variable] = {}
        self._reset()

    def _reset(self) -> None:
        for b in self.buckets:
            b.buf = None
            b.left = len(b.members)
            b.request = None
            b.got = [False] * len(b.members)
        self._given = {}

    def _start(self, k: int, b: _Bucket) -> None:
        self.events.append(("start", k, time.perf_counter()))
        b.request = self.comm.iall_reduce(b.buf)

    def on_grad_final(self, leaf: Variable, grad: Variable) -> None:
        """Copy ``grad`` into its bucket; start the bucket's all-reduce once it is full."""
        found = self.where.get(id(leaf))
        if found is None:
            return  # not one of the parameters
        b, i = found
        if b.buf is None:
            b.buf = self._empty(b.size, b.dtype)
        n, off = b.members[i].size, b.offsets[i]
        b.buf[off : off + n] = grad.d.reshape(-1)
        b.got[i] = True
        self._given[id(leaf)] = grad
        b.left -= 1
        if b.left == 0:
            self._start(self.buckets.index(b), b)

    def on_finish_backward(self) -> None:
        """Start the buckets not full yet (their missing gradients are zeros), wait for every
        bucket, and hand each parameter its all-reduced gradient."""
        self.events.append(("finish", -1, time.perf_counter()))
        for k, b in enumerate(self.buckets):
            if b.request is None:
                if b.buf is None:
                    b.buf = self._empty(b.size, b.dtype)
                for i, got in enumerate(b.got):
                    if not got:
                        n, off = b.members[i].size, b.offsets[i]
                        b.buf[off : off + n] = 0
                self._start(k, b)
        t0 = time.perf_counter()
        for k, b in enumerate(self.buckets):
            b.request.Wait()
            self.events.append(("done", k, time.perf_counter()))
        self.wait_seconds = time.perf_counter() - t0
        scale = 1.0 / self.comm.size if self.division else None
        for b in self.buckets:
            buf = b.buf
            assert buf is not None
            if scale is not None:
                buf *= buf.dtype.type(scale)
            for i, v in enumerate(b.members):
                n, off = v.size, b.offsets[i]
                value = buf[off : off + n].reshape(v.shape)
                given = self._given.get(id(v))
                if given is not None:
                    given.d = value
                else:  # no gradient here: the others' all-reduced one
                    v.g = value if v.g is None else v.g + value
        self._reset()


def broadcast_parameters(comm: Any, params: Any, root: int = 0) -> None:
    """Check that every rank has the same parameters (:func:`check_parameters`), then copy the
    values of rank ``root`` into every rank's parameters (in place), so that training starts
    from the same point everywhere."""
    check_parameters(comm, params)
    comm.bcast([v for _, v in _named(params, "broadcast_parameters")], root=root)


def _describe(items: list[tuple[str, Variable]]) -> list[str]:
    return [f"{name} {tuple(v.shape)} {np.dtype(v.dtype).name}" for name, v in items]


def check_parameters(comm: Any, params: Any) -> None:
    """Raise ``ValueError`` on every rank when the parameters (names, shapes, dtypes, in order)
    differ between the ranks, naming the first difference; nothing is pickled."""
    lines = _describe(_named(params, "check_parameters"))
    comm = getattr(comm, "host", comm)  # the "nccl" communicator compares over its MPI one
    text = "\n".join(lines).encode()
    digest = np.frombuffer(hashlib.sha256(text).digest(), dtype=np.uint8).copy()
    every = comm.all_gather(digest.astype(np.float64))
    if all((d == every[0]).all() for d in every):
        return
    # gather every rank's description (its length first) to name the difference
    n = comm.all_gather(np.array([len(text)], dtype=np.float64))
    width = int(max(int(x[0]) for x in n))
    padded = np.zeros(width, dtype=np.float64)
    padded[: len(text)] = np.frombuffer(text, dtype=np.uint8)
    texts = [
        bytes(t[: int(k[0])].astype(np.uint8)).decode() for t, k in zip(comm.all_gather(padded), n)
    ]
    ref = texts[0].split("\n") if texts[0] else []
    for r, t in enumerate(texts[1:], start=1):
        mine = t.split("\n") if t else []
        if mine == ref:
            continue
        for j in range(max(len(ref), len(mine))):
            a = ref[j] if j < len(ref) else "nothing"
            b = mine[j] if j < len(mine) else "nothing"
            if a != b:
                raise ValueError(
                    f"gradhub-mpi: the parameters differ across ranks: parameter #{j} is {a} on "
                    f"rank 0 but {b} on rank {r} ({len(ref)} parameters on rank 0, {len(mine)} "
                    f"on rank {r})"
                )
    raise ValueError("gradhub-mpi: the parameters differ across ranks")


def split_dataset(data: Any, comm: Any, *, equal: bool = True) -> Any:
    """This rank's contiguous part of ``data`` (anything with ``len`` and slicing): rank ``r``
    of ``p`` gets items ``[r n/p, (r+1) n/p)`` (chainermn's ``scatter_dataset`` without
    copies). ``equal=True`` drops the last ``n mod p`` items so that every rank has as many;
    otherwise the first ``n mod p`` ranks get one more."""
    n = len(data)
    p, r = comm.size, comm.rank
    if equal:
        k = n // p
        return data[r * k : (r + 1) * k]
    k, extra = divmod(n, p)
    start = r * k + min(r, extra)
    return data[start : start + k + (1 if r < extra else 0)]
