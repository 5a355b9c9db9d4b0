"""Every collective on every dtype, on arrays and Variables; prints ``ok NAME rank`` per check."""

import gradhub as gh
import numpy as np

comm = gh.distributed.communicator("mpi")
r, p = comm.rank, comm.size
assert p == 2, p


def ok(name: str) -> None:
    print(f"ok {name} {r}", flush=True)


for dt in (np.float16, np.float32, np.float64):
    name = np.dtype(dt).name
    mine = (np.arange(6, dtype=dt).reshape(2, 3) + 1) * (r + 1)  # rank r: (r + 1) * base
    base = np.arange(6, dtype=dt).reshape(2, 3) + 1
    total = base * 3  # 1 + 2
    a = mine.copy()
    got = comm.all_reduce(a)
    assert got is a and a.dtype == dt and (a == total).all(), (name, a)
    a = mine.copy()
    comm.all_reduce(a, division=True)
    assert np.allclose(a, total / 2), (name, a)
    a = mine.copy()
    res = comm.all_reduce(a, inplace=False)
    assert (a == mine).all() and res.dtype == dt and (res == total).all()
    a, b = mine.copy(), mine[0].copy()
    res2 = comm.all_reduce([a, b], division=True, inplace=False)
    assert np.allclose(res2[0], total / 2) and np.allclose(res2[1], total[0] / 2)
    v = gh.Variable(mine.copy())
    assert v.dtype == dt
    comm.all_reduce([v])
    assert (v.d == total).all() and v.d.dtype == dt
    ok(f"all_reduce_{name}")
    for root in (0, 1):
        a = mine.copy()
        comm.bcast(a, root=root)
        assert (a == base * (root + 1)).all()
        v = gh.Variable(mine.copy())
        comm.bcast([v], root=root)
        assert (v.d == base * (root + 1)).all()
    t = np.asfortranarray(mine.copy())  # not C-contiguous: through a copy
    comm.bcast(t, root=1)
    assert (t == base * 2).all()
    ok(f"bcast_{name}")
    out = comm.all_gather(gh.Variable(mine.copy()))
    assert isinstance(out, list) and len(out) == 2
    assert (out[0] == base).all() and (out[1] == base * 2).all() and out[1].dtype == dt
    ok(f"all_gather_{name}")
comm.barrier()
ok("barrier")
try:
    comm.all_gather(np.zeros(2 + r))
except ValueError as e:
    assert "rank 0: shape (2,) float64; rank 1: shape (3,) float64" in str(e), e
    ok("all_gather_shapes")
try:
    comm.all_reduce(np.zeros(2, dtype=np.int32))
except TypeError as e:
    assert "all_reduce: values has dtype int32" in str(e), e
    ok("dtype_error")
print(f"ranks {r} {p} {comm.local_rank} {comm.host_rank} {comm.host_count}", flush=True)
