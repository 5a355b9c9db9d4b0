"""The "nccl" communicator's checks without a GPU: CuPy and NCCL are replaced by a stand-in that
reports a number of GPUs and records the NCCL calls. argv[1]:

- "gpus": every rank sees 1 GPU; under ``mpiexec -n 2`` both ranks must raise naming the count;
- "rank1_no_cupy": rank 1 cannot import CuPy, rank 0 can: both ranks raise with rank 1's message;
- "calls": one rank, 2 GPUs seen: the unique id reaches NcclCommunicator, the GPU is selected,
  and all_reduce/bcast/all_gather pass pointers, counts, dtypes and the current stream; a numpy
  array says to use "mpi".

Prints ``rank R error: MESSAGE`` or ``rank R ok NAME``."""

import sys
import types

import gradhub as gh
import gradhub_mpi.nccl as gn
import numpy as np
from gradhub.distributed import CommunicatorError

mode = sys.argv[1]
CALLS: list[tuple] = []


class FakeArray:
    """A stand-in of a CuPy array: shape, dtype, device memory address, flags."""

    def __init__(self, shape: tuple[int, ...], dtype: type, ptr: int) -> None:
        self.shape, self.dtype, self.size = shape, np.dtype(dtype), int(np.prod(shape))
        self.ndim = len(shape)
        self.data = types.SimpleNamespace(ptr=ptr)
        self.flags = types.SimpleNamespace(c_contiguous=True)
        self.device = types.SimpleNamespace(id=1)


def fake(gpus: int) -> tuple[types.SimpleNamespace, types.SimpleNamespace]:
    class Device:
        def __init__(self, i: int) -> None:
            self.id = i

        def use(self) -> None:
            CALLS.append(("use", self.id))

        def __enter__(self) -> "Device":
            return self

        def __exit__(self, *a: object) -> None:
            pass

    class Comm:
        def __init__(self, n: int, uid: tuple, rank: int) -> None:
            CALLS.append(("init", n, uid[:3], len(uid), rank))

        def allReduce(self, *a: object) -> None:
            CALLS.append(("allReduce", *a))

        def broadcast(self, *a: object) -> None:
            CALLS.append(("broadcast", *a))

        def allGather(self, *a: object) -> None:
            CALLS.append(("allGather", *a))

    class Stream:
        def __init__(self, non_blocking: bool = False, ptr: int = 888) -> None:
            self.ptr = ptr
            CALLS.append(("Stream", non_blocking))

        def record(self) -> str:
            CALLS.append(("record", self.ptr))
            return f"event@{self.ptr}"

        def wait_event(self, event: str) -> None:
            CALLS.append(("wait_event", self.ptr, event))

    stream = Stream(ptr=777)
    cuda = types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceCount=lambda: gpus),
        Device=Device,
        Stream=Stream,
        get_current_stream=lambda: stream,
    )
    cupy = types.SimpleNamespace(
        ndarray=FakeArray, cuda=cuda, empty=lambda shape, dtype: FakeArray(shape, dtype, 5000)
    )
    nccl = types.SimpleNamespace(
        # CuPy 14 gives the id as bytes, earlier CuPy as a tuple of signed chars
        get_unique_id=(lambda: bytes([253, 7, 127] + [0] * 125))
        if mode == "bytes_id"
        else (lambda: tuple([-3, 7, 127] + [0] * 125)),
        NcclCommunicator=Comm,
        groupStart=lambda: CALLS.append(("groupStart",)),
        groupEnd=lambda: CALLS.append(("groupEnd",)),
        NCCL_FLOAT16=6,
        NCCL_FLOAT32=7,
        NCCL_FLOAT64=8,
        NCCL_SUM=0,
    )
    return cupy, nccl


def no_cupy() -> None:
    raise CommunicatorError("gradhub-mpi: the 'nccl' communicator needs CuPy (stand-in)")


if mode == "gpus":
    gn.import_cupy_nccl = lambda: fake(1)
elif mode == "rank1_no_cupy":
    import mpi4py.MPI as MPI

    gn.import_cupy_nccl = no_cupy if MPI.COMM_WORLD.Get_rank() == 1 else (lambda: fake(4))
else:
    gn.import_cupy_nccl = lambda: fake(2)
try:
    comm = gh.distributed.communicator("nccl", abort_on_exception=False)
except CommunicatorError as e:
    import mpi4py.MPI as MPI

    print(f"rank {MPI.COMM_WORLD.Get_rank()} error: {e}", flush=True)
    sys.exit(0)
if mode == "bytes_id":
    assert ("init", 1, b"\xfd\x07\x7f", 128, 0) in CALLS, CALLS
    print("rank 0 ok bytes id", flush=True)
    sys.exit(0)
if mode != "calls":
    print(f"rank {comm.rank} no error", flush=True)
    sys.exit(0)
assert comm.device == "cuda:0" and comm.device_index == 0, comm.device
assert ("use", 0) in CALLS and ("init", 1, (-3, 7, 127), 128, 0) in CALLS, CALLS
print("rank 0 ok init", flush=True)
comm.device_index, comm.device = 1, "cuda:1"  # the stand-in arrays live on "GPU 1"
a = FakeArray((3, 4), np.float32, 1000)
CALLS.clear()
assert comm.all_reduce(a, inplace=True) is a
assert CALLS == [("groupStart",), ("allReduce", 1000, 1000, 12, 7, 0, 777), ("groupEnd",)], CALLS
CALLS.clear()
res = comm.all_reduce([a, FakeArray((2,), np.float16, 2000)], inplace=False)
assert [r.data.ptr for r in res] == [5000, 5000], res
assert CALLS[1] == ("allReduce", 1000, 5000, 12, 7, 0, 777), CALLS
assert CALLS[2] == ("allReduce", 2000, 5000, 2, 6, 0, 777), CALLS
print("rank 0 ok all_reduce", flush=True)
CALLS.clear()
comm.bcast([FakeArray((5,), np.float64, 3000)], root=0)
assert CALLS[1] == ("broadcast", 3000, 3000, 5, 8, 0, 777), CALLS
print("rank 0 ok bcast", flush=True)
CALLS.clear()
request = comm.iall_reduce(FakeArray((4,), np.float32, 4000))
request.Wait()
assert CALLS == [
    ("Stream", True),  # the side stream, made once
    ("record", 777),  # the gradients copied so far on the current stream
    ("wait_event", 888, "event@777"),
    ("allReduce", 4000, 4000, 4, 7, 0, 888),  # queued on the side stream
    ("record", 888),
    ("wait_event", 777, "event@888"),  # Wait(): the current stream waits, not the host
], CALLS
CALLS.clear()
comm.iall_reduce(FakeArray((2,), np.float64, 4100))
assert CALLS[0] == ("record", 777) and CALLS[2] == ("allReduce", 4100, 4100, 2, 8, 0, 888), CALLS
print("rank 0 ok iall_reduce", flush=True)
for bad, text in [
    (np.zeros(3), "values must be a CuPy array or a Variable on cuda:1, got ndarray (numpy"),
    (FakeArray((2,), np.int32, 1), "values has dtype int32"),
    (gh.Variable(np.zeros(2)), "values must be a CuPy array or a Variable on cuda:1, got ndarray"),
]:
    try:
        comm.all_reduce(bad)
    except TypeError as e:
        assert f"gradhub-mpi: nccl all_reduce: {text}" in str(e), e
        assert "'mpi' communicator" in str(e) or "int32" in text, e
    else:
        raise AssertionError(f"no error for {bad!r}")
other = FakeArray((2,), np.float32, 1)
other.device.id = 0
try:
    comm.bcast(other)
except ValueError as e:
    assert "nccl bcast: values is on cuda:0 but this rank's communicator uses cuda:1" in str(e), e
else:
    raise AssertionError("no error for an array on another GPU")
print("rank 0 ok errors", flush=True)
