"""Gradients that lie transposed in memory (column-major, as an affine layer's weight gradient):
stored as they lie in the bucket and handed back in that layout when every rank has them so; a
weight whose gradient is transposed on rank 0 and row-major on rank 1 is all-reduced again from
each rank's own gradient. argv[1]: the path ("shared" or "mpi"). Prints the largest difference
from the mean of the ranks' own gradients, the layouts handed back and the number of members
all-reduced again (gh.grad returns the gradients as the callback hands them back)."""

import sys

import gradhub as gh
import gradhub.functions as F
import numpy as np

path = sys.argv[1]
comm = gh.distributed.communicator("mpi")
r = comm.rank
g = np.random.default_rng(0)
W1 = gh.Variable(g.standard_normal((5, 4)), name="W1")  # transposed gradient on every rank
W2 = gh.Variable(g.standard_normal((4, 3)), name="W2")  # transposed on rank 0 only
b = gh.Variable(g.standard_normal(3), name="b")
ps = [W1, W2, b]
x = np.random.default_rng(1 + r).standard_normal((6, 5))


def loss() -> gh.Variable:
    h = F.tanh(F.affine(gh.Variable(x, need_grad=False), W1))
    if r == 0:
        y = F.affine(h, W2, b)
    else:  # W2 used elementwise: a row-major gradient
        y = F.sum(h, axis=1, keepdims=True) * F.sum(W2 * W2, axis=0, keepdims=True) + b
    return F.sum(y * y)


loss().backward()
own = [p.g.copy() for p in ps]
layouts = [p.g.flags.f_contiguous and not p.g.flags.c_contiguous for p in ps]
for p in ps:
    p.g = None
want = [sum(comm.all_gather(o)) / comm.size for o in own]
cb = comm.all_reduce_callback(ps, pack_size=100, shared_memory=path == "shared")
again = []
plain_again = cb._again
cb._again = lambda v: again.append(v.name) or plain_again(v)  # type: ignore[method-assign]
for _ in range(2):
    grads = [v.d for v in gh.grad([loss()], ps, create_graph=False, communicator_callbacks=cb)]
    diff = max(float(np.abs(d - w).max()) for d, w in zip(grads, want))
    got = ["F" if d.flags.f_contiguous and not d.flags.c_contiguous else "C" for d in grads]
print(
    f"rank {r} own {''.join('F' if x else 'C' for x in layouts)} got {''.join(got)} "
    f"again {','.join(again)} diff {diff:.3e}",
    flush=True,
)
