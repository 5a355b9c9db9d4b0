"""A parameter that gets no gradient on rank 1 only, in the middle of four equal buckets: rank 1
fills that bucket only when backward ends, after the buckets below it; the buckets still meet
their partners on the other rank (they start in bucket order on every rank). argv[1]: the path
("shared" or "mpi"). Prints the largest difference from the mean of the ranks' own gradients,
the path and whether ``close()`` gave the windows back."""

import sys

import gradhub as gh
import gradhub.functions as F
import numpy as np

path = sys.argv[1]
comm = gh.distributed.communicator("mpi")
r = comm.rank
g = np.random.default_rng(0)
ps = [gh.Variable(g.standard_normal(6), name=f"p{k}") for k in range(4)]
x = np.random.default_rng(1 + r).standard_normal(6)


def loss() -> gh.Variable:
    xv = gh.Variable(x, need_grad=False)
    used = ps if r == 0 else [ps[0], ps[1], ps[3]]  # rank 1: no gradient for p2
    h = xv
    for p in used:
        h = F.tanh(h * p)
    return F.sum(h * h)


# each rank's own gradients (no callback; p2 zero on rank 1), then their mean over the ranks
loss().backward()
mine = np.stack([np.zeros(6) if p.g is None else p.g for p in ps])
for p in ps:
    p.g = None
want = sum(comm.all_gather(mine)) / comm.size
cb = comm.all_reduce_callback(ps, pack_size=6, shared_memory=path == "shared")
for _ in range(3):  # several steps: the windows and requests are reused
    loss().backward(communicator_callbacks=cb)
    got = np.stack([p.g for p in ps])
    for p in ps:
        p.g = None
order = [k for w, k, _ in cb.events[-9:] if w == "start"]
was_shared = cb.shared
cb.close()  # collective: gives the windows back
closed = not cb.shared and all(b.reduction is None for b in cb.buckets)
print(
    f"rank {r} buckets {len(cb.buckets)} order {order} diff {np.abs(got - want).max():.3e} "
    f"shared {was_shared} closed {closed}",
    flush=True,
)
