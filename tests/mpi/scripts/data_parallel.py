"""20 SGD steps of a two-layer MLP (float64) on P ranks, each with 1/P of every global batch,
against one process on the whole batch; argv[1]: "plain", "penalty" (an input-gradient penalty,
double backward) or "grad" (gh.grad with the callback instead of backward); argv[2] (optional):
the path of the buckets' sums, "auto" (default), "shared" (shared-memory window, the sum chosen
by the number of ranks), "chunked" (shared-memory window, each rank summing a chunk) or "mpi"
(MPI_Iallreduce) or "hosts" (auto, with MPI_Comm_split_type made to put each rank on a host of
its own, so that the shared-memory path is not possible). Prints the largest difference of the
parameters, the path taken and the overlap evidence of the last step."""

import sys

import gradhub as gh
import gradhub.functions as F
import numpy as np
from gradhub_mpi import broadcast_parameters, split_dataset

mode = sys.argv[1]
path = sys.argv[2] if len(sys.argv) > 2 else "auto"


class OwnHosts:
    """An mpi4py communicator whose split by host puts every rank on a host of its own."""

    def __init__(self, comm: object) -> None:
        self.inner = comm

    def Split_type(self, kind: int, key: int = 0) -> object:
        return self.inner.Split(color=self.inner.Get_rank(), key=key)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


if path == "hosts":
    from mpi4py import MPI

    comm = gh.distributed.communicator("mpi", comm=OwnHosts(MPI.COMM_WORLD))
    assert (comm.local_size, comm.host_count) == (1, comm.size)
else:
    comm = gh.distributed.communicator("mpi")
r = comm.rank
B, D, H, STEPS, LR, LAM = 8 * comm.size, 5, 7, 20, 0.1, 0.3
data = np.random.default_rng(0)
X = data.standard_normal((STEPS * B, D))
T = np.sin(X.sum(axis=1, keepdims=True))


def init(seed: int) -> dict[str, gh.Variable]:
    g = np.random.default_rng(seed)
    shapes = {"l1/W": (D, H), "l1/b": (H,), "l2/W": (H, 1), "l2/b": (1,)}
    return {k: gh.Variable(g.standard_normal(s) * 0.5, name=k) for k, s in shapes.items()}


def loss_of(p: dict[str, gh.Variable], x: np.ndarray, t: np.ndarray) -> gh.Variable:
    xv = gh.Variable(x, need_grad=(mode == "penalty"))
    h = F.tanh(F.affine(xv, p["l1/W"], p["l1/b"]))
    y = F.affine(h, p["l2/W"], p["l2/b"])
    loss = F.mean((y - gh.Variable(t, need_grad=False)) ** 2.0)
    if mode == "penalty":
        (gx,) = gh.grad([F.sum(y)], [xv], create_graph=True)
        loss = loss + LAM * F.mean(F.sum(gx * gx, axis=1))
    return loss


def step(p: dict[str, gh.Variable], loss: gh.Variable, cb: object = None) -> None:
    if mode == "grad":
        grads = gh.grad([loss], list(p.values()), create_graph=False, communicator_callbacks=cb)
        for v, g in zip(p.values(), grads):
            v.d = v.d - LR * g.d
        return
    loss.backward(communicator_callbacks=cb)
    for v in p.values():
        v.d = v.d - LR * v.g
        v.g = None


ref = init(0)  # one process, whole batch: rank 0's initial values
dp = init(r)  # different on each rank until the broadcast
broadcast_parameters(comm, dp)
if path == "chunked":
    from gradhub_mpi import AllReduceCallback

    cb = AllReduceCallback(comm, dp, pack_size=H, shared_memory=True, direct=False)
else:
    shared = {"auto": None, "hosts": None, "shared": True, "mpi": False}[path]
    cb = comm.all_reduce_callback(dp, pack_size=H, shared_memory=shared)  # several buckets
for s in range(STEPS):
    idx = np.arange(s * B, (s + 1) * B)
    step(ref, loss_of(ref, X[idx], T[idx]))
    mine = split_dataset(idx, comm)
    step(dp, loss_of(dp, X[mine], T[mine]), cb)
diff = max(float(np.abs(ref[k].d - dp[k].d).max()) for k in ref)
moved = max(float(np.abs(ref[k].d - init(0)[k].d).max()) for k in ref)
events = cb.events[-(2 * len(cb.buckets) + 1) :]  # the last step's
kinds = [w for w, _, _ in events]
first_start = kinds.index("start")
direct = cb.buckets[0].reduction.direct if cb.shared else None
print(
    f"rank {r} shared {cb.shared} direct {direct} diff {diff:.3e} moved {moved:.3e} "
    f"buckets {len(cb.buckets)} "
    f"started_before_finish {kinds[: kinds.index('finish')].count('start')} "
    f"first_start_before_finish {first_start < kinds.index('finish')}",
    flush=True,
)
