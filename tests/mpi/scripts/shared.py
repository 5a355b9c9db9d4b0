"""gradhub_mpi.shared.SharedReduction on every rank of one host: the direct and the chunked sum
on float16/32/64, with and without a scale, taken by ready() (polled) or finish() (waited), over
several rounds of one window; prints ``ok NAME rank`` per check."""

import numpy as np
from gradhub_mpi.shared import SharedReduction, node_communicator
from mpi4py import MPI

world = MPI.COMM_WORLD
r, p = world.Get_rank(), world.Get_size()
node = node_communicator(MPI, world)
assert node is not None and node.Get_size() == p  # one host: every rank in the group
sums = node.Dup()
for direct in (True, False):
    for dt in (np.float16, np.float32, np.float64):
        n = 70001  # more than one block, not a multiple of the ranks
        red = SharedReduction(MPI, node, n, dt, direct=direct, sum_comm=sums)
        assert red.direct == direct
        for k in range(3):
            rows = [((np.arange(n) % 97) * (q + 1) + k).astype(dt) for q in range(p)]
            red.wait_free()
            red.row[...] = rows[r]
            red.start()
            scale = 1.0 / p if k % 2 else None
            out = None
            if k == 2:  # polled: the sum is handed out by ready() once every row is full
                while out is None:
                    out = red.ready(scale)
            else:
                out = red.finish(scale)
            want = rows[0]
            for q in range(1, p):
                want = want + rows[q]  # in rank order, in dt
            if scale is not None:
                want = want * dt(scale)
            assert out.dtype == dt and out.shape == (n,), (out.dtype, out.shape)
            assert (out == want).all(), (direct, dt, k, np.abs(out - want).max())
            assert red.ready(scale) is None  # handed out once
        red.free()
        print(f"ok {'direct' if direct else 'chunked'}_{np.dtype(dt).name} {r}", flush=True)
try:
    SharedReduction(MPI, node, 3, np.float64).finish()
except RuntimeError as e:
    assert "SharedReduction.finish: no sum was started" in str(e), e
    print(f"ok finish_before_start {r}", flush=True)
