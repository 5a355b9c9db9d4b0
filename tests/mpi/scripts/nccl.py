"""The "nccl" communicator of size 1 on one GPU, run alone (``python nccl.py``) or under
``mpiexec -n 1``: every collective on every dtype (arrays, Variables, lists, non-contiguous
arrays, another stream), the errors, and data-parallel training of a small float64 MLP on cuda
(20 steps, plain and with an input-gradient penalty) against the same steps without the callback.
Prints ``ok NAME`` per check and ``nccl done`` at the end."""

import gradhub as gh
import gradhub.functions as F
import numpy as np
from gradhub_mpi import broadcast_parameters

comm = gh.distributed.communicator("nccl")
import cupy as cp  # noqa: E402  (after the communicator: its errors say what is missing)

assert (comm.rank, comm.size, comm.local_rank) == (0, 1, 0), comm
assert comm.device == "cuda:0" and cp.cuda.Device().id == 0, comm.device
print(f"communicator {comm!r} nccl {comm.nccl.get_version()}", flush=True)
ctx = gh.get_extension_context(comm.device)


def ok(name: str) -> None:
    print(f"ok {name}", flush=True)


def poisoned(shape: tuple[int, ...], dtype: type) -> None:
    """Fill then free a block of the size of the next result, so that a result NCCL did not
    write entirely shows NaNs (CuPy's pool hands the block out again)."""
    junk = cp.full(shape, np.nan, dtype=dtype)
    del junk


for dt in (np.float16, np.float32, np.float64):
    name = np.dtype(dt).name
    base = cp.asarray(np.arange(12, dtype=dt).reshape(3, 4) + 1)
    a = base.copy()
    got = comm.all_reduce(a)
    assert got is a and a.dtype == dt and bool((a == base).all()), (name, a)
    comm.all_reduce(a, division=True)
    assert bool((a == base).all()), (name, a)
    poisoned(base.shape, dt)
    res = comm.all_reduce(a, inplace=False)
    assert res is not a and res.dtype == dt and bool((res == base).all()), (name, res)
    assert res.data.ptr != a.data.ptr
    # a list, one of them not contiguous: grouped NCCL calls
    b = base.copy()
    t = cp.asfortranarray(base.copy())
    assert not t.flags.c_contiguous
    comm.all_reduce([b, t], division=True)
    assert bool((b == base).all()) and bool((t == base).all()), (name, b, t)
    poisoned(base.shape, dt)
    res2 = comm.all_reduce([base[:, ::2], base[1]], inplace=False)
    assert isinstance(res2, list) and len(res2) == 2
    assert bool((res2[0] == base[:, ::2]).all()) and bool((res2[1] == base[1]).all())
    with gh.context_scope(ctx):
        v = gh.Variable(np.arange(5, dtype=dt))
    assert isinstance(v.d, cp.ndarray) and v.dtype == dt
    comm.all_reduce([v], division=True)
    assert bool((v.d == cp.arange(5, dtype=dt)).all()) and v.d.dtype == dt
    # on another stream: the collective is queued there
    s = cp.cuda.Stream()
    with s:
        poisoned(base.shape, dt)
        res3 = comm.all_reduce(base, inplace=False)
    s.synchronize()
    assert bool((res3 == base).all()), (name, res3)
    ok(f"all_reduce_{name}")
    c = base.copy()
    assert comm.bcast(c, root=0) is c and bool((c == base).all())
    f = cp.asfortranarray(base.copy())
    comm.bcast([f, v], root=0)
    assert bool((f == base).all()) and bool((v.d == cp.arange(5, dtype=dt)).all())
    try:
        comm.bcast(c, root=1)
    except ValueError as e:
        assert "bcast: argument 'root' must be a rank in 0..0, got 1" in str(e), e
    else:
        raise AssertionError("bcast root=1 did not raise")
    ok(f"bcast_{name}")
    poisoned((1, 3, 4), dt)
    out = comm.all_gather(base)
    assert isinstance(out, list) and len(out) == 1 and out[0].shape == (3, 4)
    assert out[0].dtype == dt and bool((out[0] == base).all()), (name, out)
    out = comm.all_gather(v)
    assert bool((out[0] == v.d).all())
    ok(f"all_gather_{name}")
comm.barrier()
ok("barrier")
try:
    comm.all_reduce(np.zeros(3))
except TypeError as e:
    assert "nccl all_reduce: values must be a CuPy array or a Variable on cuda:0" in str(e), e
    assert "take the 'mpi' communicator" in str(e), e
    ok("numpy_error")
try:
    comm.all_reduce([cp.zeros(3), cp.zeros(3, dtype=cp.int32)])
except TypeError as e:
    assert "nccl all_reduce: values[1] has dtype int32" in str(e), e
    ok("dtype_error")

# -- data-parallel training of a small MLP on cuda --------------------------------------------
B, D, H, STEPS, LR, LAM = 16, 5, 7, 20, 0.1, 0.3
rng = np.random.default_rng(0)
X = rng.standard_normal((STEPS * B, D))
T = np.sin(X.sum(axis=1, keepdims=True))


def init() -> dict[str, gh.Variable]:
    g = np.random.default_rng(1)
    shapes = {"l1/W": (D, H), "l1/b": (H,), "l2/W": (H, 1), "l2/b": (1,)}
    with gh.context_scope(ctx):
        return {k: gh.Variable(g.standard_normal(s) * 0.5, name=k) for k, s in shapes.items()}


def loss_of(p: dict[str, gh.Variable], x: np.ndarray, t: np.ndarray, penalty: bool) -> gh.Variable:
    with gh.context_scope(ctx):
        xv = gh.Variable(x, need_grad=penalty)
        tv = gh.Variable(t, need_grad=False)
    h = F.tanh(F.affine(xv, p["l1/W"], p["l1/b"]))
    y = F.affine(h, p["l2/W"], p["l2/b"])
    loss = F.mean((y - tv) ** 2.0)
    if penalty:
        (gx,) = gh.grad([F.sum(y)], [xv], create_graph=True)
        loss = loss + LAM * F.mean(F.sum(gx * gx, axis=1))
    return loss


def step(p: dict[str, gh.Variable], loss: gh.Variable, cb: object = None) -> None:
    loss.backward(communicator_callbacks=cb)
    for v in p.values():
        v.d = v.d - LR * v.g
        v.g = None


for penalty in (False, True):
    ref, dp = init(), init()
    assert isinstance(dp["l1/W"].d, cp.ndarray)
    broadcast_parameters(comm, dp)
    cb = comm.all_reduce_callback(dp, pack_size=H)  # small buckets: several per step
    for s in range(STEPS):
        idx = slice(s * B, (s + 1) * B)
        step(ref, loss_of(ref, X[idx], T[idx], penalty))
        step(dp, loss_of(dp, X[idx], T[idx], penalty), cb)
    diff = max(float(cp.abs(ref[k].d - dp[k].d).max()) for k in ref)
    moved = max(float(cp.abs(ref[k].d - init()[k].d).max()) for k in ref)
    events = cb.events[-(2 * len(cb.buckets) + 1) :]  # the last step's
    kinds = [w for w, _, _ in events]
    started = kinds[: kinds.index("finish")].count("start")
    print(
        f"dp penalty={penalty} diff {diff:.3e} moved {moved:.3e} buckets {len(cb.buckets)} "
        f"started_before_finish {started} side_stream {comm.side_stream is not None}",
        flush=True,
    )
    assert diff < 1e-10 and moved > 0.1, (diff, moved)
    assert len(cb.buckets) == 4 and started == 4, (len(cb.buckets), started)
    assert comm.side_stream is not None
    ok(f"data_parallel_{'penalty' if penalty else 'plain'}")

print("nccl done", flush=True)
