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
    __slots__ = (
        "buf",
        "dtype",
        "got",
        "left",
        "members",
        "offsets",
        "reduction",
        "request",
        "result",
        "size",
    )

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = dtype
        self.members: list[Variable] = []
        self.offsets: list[int] = []
        self.size = 0
        self.buf: np.ndarray | None = None
        self.left = 0
        self.request: Any = None
        self.got: list[bool] = []
        self.reduction: Any = None  # the SharedReduction of the shared-memory path
        self.result: Any = None  # the all-reduced values, once in


class AllReduceCallback:
    """All-reduces the gradients of ``params`` in buckets while backward runs (a
    :class:`gradhub.engine.BackwardCallback`).

    ``pack_size``: the number of values in a bucket (nnabla's meaning; default: 25 MB of the
    parameters' dtype). ``division=True`` divides the sums by the number of ranks. After
    ``backward`` returns, each parameter's ``.g`` holds the all-reduced gradient (added to what
    ``.g`` held before the call, as backward accumulates); a parameter that got no gradient on
    this rank gets the all-reduced one of the others.

    The buckets' all-reduces start in bucket order on every rank (a full bucket waits for the
    buckets before it, as PyTorch DDP's), since MPI matches the non-blocking collectives of one
    communicator in the order they are started. Each later gradient's callback asks MPI whether
    the buckets in flight are done (``MPI_Test``), which also moves them along (MPICH progresses
    them only inside MPI calls).

    ``shared_memory``: ``None`` (default) sums the buckets through MPI-3 shared-memory windows
    (:mod:`gradhub_mpi.shared`) when the communicator has such a path (the ``"mpi"`` one, with
    every rank on one host and more than one rank), else through ``MPI_Iallreduce``
    (``comm.iall_reduce``); ``False`` always the latter; ``True`` requires the former (a
    ``ValueError`` otherwise). ``direct`` picks the shared-memory sum (see
    :class:`gradhub_mpi.shared.SharedReduction`; default by the number of ranks).

    ``events`` records ``(what, bucket, time)`` with what ``"start"`` (the bucket is full and its
    all-reduce started), ``"finish"`` (backward's walk ended; bucket -1) and ``"done"`` (its
    result is in); ``wait_seconds`` the time from the end of the last backward's walk until
    every bucket's result was in (waiting, and summing on the shared-memory path).
    """

    def __init__(
        self,
        comm: Any,
        params: Any,
        *,
        pack_size: int | None = None,
        division: bool = True,
        shared_memory: bool | None = None,
        direct: bool | None = None,
    ) -> None:
        where = "all_reduce_callback"
        named = _named(params, where)
        if pack_size is not None and (not isinstance(pack_size, int) or pack_size < 1):
            raise ValueError(
                f"gradhub-mpi: {where}: argument 'pack_size' must be a positive int (values per "
                f"bucket), got {pack_size!r}"
            )
        if shared_memory not in (None, True, False):
            raise ValueError(
                f"gradhub-mpi: {where}: argument 'shared_memory' must be None, True or False, "
                f"got {shared_memory!r}"
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
        # each bucket ends with one value per member: 1 where this rank stored the member's
        # gradient transposed (as it lies in memory), else 0; summed with the values, it says
        # whether all ranks did the same. On numpy buckets only (a CuPy value would make the host
        # wait for the GPU): CuPy buckets always hold the values in row-major order.
        self._layouts = getattr(comm, "empty", None) is None
        #: whether the buckets are summed through shared-memory windows
        self.shared = False
        if shared_memory is not False:
            make = getattr(comm, "shared_reductions", None)
            reductions = None
            if make is not None:
                shapes = [(self._length(b), b.dtype) for b in self.buckets]
                reductions = make(shapes, direct=direct)
            if reductions is None and shared_memory:
                raise ValueError(
                    f"gradhub-mpi: {where}: shared_memory=True needs the 'mpi' communicator with "
                    f"more than one rank, all on one host (this one: {type(comm).__name__} of "
                    f"size {comm.size})"
                )
            if reductions is not None:
                self.shared = True
                for b, red in zip(self.buckets, reductions):
                    b.reduction = red
        self.events: list[tuple[str, int, float]] = []
        self.wait_seconds = 0.0
        self._given: dict[int, Variable] = {}
        self._reset()

    def _reset(self) -> None:
        for b in self.buckets:
            b.buf = None
            b.left = len(b.members)
            b.request = None
            b.result = None
            b.got = [False] * len(b.members)
        self._given = {}
        self._next = 0  # the first bucket not started
        self._polled = 0  # the first bucket whose result is not in

    def _length(self, b: _Bucket) -> int:
        """The values of bucket ``b``: its members', then their layout counts (numpy only)."""
        return b.size + (len(b.members) if self._layouts else 0)

    @property
    def _scale(self) -> float | None:
        return 1.0 / self.comm.size if self.division and self.comm.size > 1 else None

    def _buffer(self, b: _Bucket) -> np.ndarray:
        if b.buf is None:
            if b.reduction is not None:
                b.reduction.wait_free()  # no rank reads the last step's values any more
                b.buf = b.reduction.row
            else:
                b.buf = self._empty(self._length(b), b.dtype)
        return b.buf

    def _start_full(self) -> None:
        """Start the full buckets, in order, up to the first one that is not full."""
        while self._next < len(self.buckets) and self.buckets[self._next].left == 0:
            k = self._next
            b = self.buckets[k]
            self.events.append(("start", k, time.perf_counter()))
            if b.reduction is not None:
                b.reduction.start()
            else:
                b.request = self.comm.iall_reduce(b.buf)
            self._next += 1

    def _poll(self) -> None:
        """Take the results of the started buckets that are done, in order (``MPI_Test``)."""
        while self._polled < self._next:
            k = self._polled
            b = self.buckets[k]
            if b.reduction is not None:
                b.result = b.reduction.ready(self._scale)
                if b.result is None:
                    return
            else:
                test = getattr(b.request, "Test", None)
                if test is None or not test():
                    return
                b.result = b.buf
            self.events.append(("done", k, time.perf_counter()))
            self._polled += 1

    def on_grad_final(self, leaf: Variable, grad: Variable) -> None:
        """Copy ``grad`` into its bucket; start the bucket's all-reduce once it is full (and
        the buckets before it have started); take the results of the buckets in flight that
        are done."""
        found = self.where.get(id(leaf))
        if found is None:
            return  # not one of the parameters
        b, i = found
        buf = self._buffer(b)
        n, off = b.members[i].size, b.offsets[i]
        d = grad.d
        if self._layouts and d.ndim > 1 and d.flags.f_contiguous and not d.flags.c_contiguous:
            # a transposed gradient (the weights' of an affine layer): stored as it lies, a plain
            # copy, instead of a transposing one (10 ms for 1024x1024 float32 here)
            buf[off : off + n] = d.T.reshape(-1)
            buf[b.size + i] = 1
        else:
            buf[off : off + n] = d.reshape(-1)
            if self._layouts:
                buf[b.size + i] = 0
        b.got[i] = True
        self._given[id(leaf)] = grad
        b.left -= 1
        if b.left == 0:
            self._start_full()
        if self._polled < self._next:
            self._poll()

    def on_finish_backward(self) -> None:
        """Start the buckets not full yet (their missing gradients are zeros), wait for every
        bucket, and hand each parameter its all-reduced gradient."""
        self.events.append(("finish", -1, time.perf_counter()))
        t0 = time.perf_counter()
        for b in self.buckets[self._next :]:
            buf = self._buffer(b)
            for i, got in enumerate(b.got):
                if not got:
                    n, off = b.members[i].size, b.offsets[i]
                    buf[off : off + n] = 0
                    if self._layouts:
                        buf[b.size + i] = 0
            b.left = 0
        self._start_full()
        scale = self._scale
        for k in range(self._polled, len(self.buckets)):
            b = self.buckets[k]
            if b.reduction is not None:
                b.result = b.reduction.finish(scale)
            else:
                b.request.Wait()
                b.result = b.buf
            self.events.append(("done", k, time.perf_counter()))
        self.wait_seconds = time.perf_counter() - t0
        p = self.comm.size
        for b in self.buckets:
            buf = b.result
            assert buf is not None
            if scale is not None and b.reduction is None:
                buf *= buf.dtype.type(scale)
            if self._layouts:  # the number of ranks that stored each member transposed
                flags = np.rint(buf[b.size :].astype(np.float64) / (scale or 1.0)).astype(int)
            for i, v in enumerate(b.members):
                n, off = v.size, b.offsets[i]
                if not self._layouts or flags[i] == 0:
                    value = buf[off : off + n].reshape(v.shape)
                elif flags[i] == p:
                    value = buf[off : off + n].reshape(v.shape[::-1]).T
                else:  # the ranks' layouts differ: the sum mixed values; sum again, in order
                    value = self._again(v)
                given = self._given.get(id(v))
                if given is not None:
                    given.d = value
                else:  # no gradient here: the others' all-reduced one
                    v.g = value if v.g is None else v.g + value
        self._reset()

    def _again(self, v: Variable) -> np.ndarray:
        """The all-reduced gradient of ``v`` by a blocking all-reduce of this rank's own
        gradient (zeros if it got none), when the ranks stored it in different layouts (every
        rank sees the same layout counts, so every rank calls it, in the same order)."""
        given = self._given.get(id(v))
        mine = np.zeros(v.shape, v.dtype) if given is None else np.array(given.d, order="C")
        self.comm.all_reduce(mine, division=self.division)
        return mine

    def close(self) -> None:
        """Give back the shared-memory windows (collective: every rank calls it; the callback
        is not used afterwards). Windows left open are given back when MPI ends."""
        for b in self.buckets:
            if b.reduction is not None:
                b.reduction.free()
                b.reduction = None
        self.shared = False


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
    import hashlib  # here, not at import: hashlib costs 3-6 ms of a fresh start

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
