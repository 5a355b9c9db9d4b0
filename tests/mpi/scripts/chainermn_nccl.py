"""chainermn's "pure_nccl" on one GPU (a communicator of size 1, alone or under ``mpiexec -n
1``): the ranks, the array collectives on CuPy arrays, and 20 MomentumSGD updates of a float64
MLP on the GPU through create_multi_node_optimizer equal to the plain optimizer's (after the
first update, which broadcasts). Prints ``ok NAME`` per check and ``chainermn nccl done``."""

import cupy as cp
import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
from gradhub_compat import chainer, chainermn
from gradhub_compat.chainer import optimizers

comm = chainermn.create_communicator("pure_nccl")
assert (comm.rank, comm.size, comm.intra_rank, comm.inter_rank, comm.inter_size) == (0, 1, 0, 0, 1)
assert comm.gradhub_comm.device == "cuda:0"


def ok(what: str) -> None:
    print(f"ok {what}", flush=True)


x = cp.arange(6, dtype=cp.float32).reshape(2, 3)
y = comm.allreduce(x)
assert isinstance(y, cp.ndarray) and y is not x and bool((y == x).all())
z = comm.bcast(x)
assert isinstance(z, cp.ndarray) and z.dtype == cp.float32 and bool((z == x).all())
(g,) = comm.allgather(x)
assert bool((g == x).all())
ok("arrays")

B, D, H, STEPS = 16, 5, 7, 20
rng = np.random.default_rng(0)
X = rng.standard_normal((STEPS * B, D))
T = np.sin(X.sum(axis=1, keepdims=True))


class MLP(chainer.Chain):
    def __init__(self) -> None:
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(D, H)
            self.l2 = L.Linear(H, 1)
        g = np.random.default_rng(1)
        for _, p in sorted(self.namedparams()):  # float64 values
            p.array = g.standard_normal(p.array.shape) * 0.5

    def forward(self, x: cp.ndarray) -> chainer.Variable:
        return self.l2(F.tanh(self.l1(x)))


def lossfun(model: MLP, x: cp.ndarray, t: cp.ndarray) -> chainer.Variable:
    return F.mean_squared_error(model(x), t)


ref, model = MLP().to_gpu(comm.intra_rank), MLP().to_gpu(comm.intra_rank)
assert isinstance(model.l1.W.array, cp.ndarray) and model.l1.W.array.dtype == np.float64
ref_opt = optimizers.MomentumSGD(lr=0.1, momentum=0.9).setup(ref)
opt = chainermn.create_multi_node_optimizer(optimizers.MomentumSGD(lr=0.1, momentum=0.9), comm)
opt.setup(model)
Xg, Tg = cp.asarray(X), cp.asarray(T)
opt.update(lossfun, model, Xg[:B], Tg[:B])  # broadcasts rank 0's parameters, no update
assert opt.t == 0
ok("bcast_data")
for s in range(STEPS):
    xb, tb = Xg[s * B : (s + 1) * B], Tg[s * B : (s + 1) * B]
    ref_opt.update(lossfun, ref, xb, tb)
    opt.update(lossfun, model, xb, tb)
pairs = list(zip(sorted(model.namedparams()), sorted(ref.namedparams())))
diff = max(float(cp.abs(p.array - q.array).max()) for (_, p), (_, q) in pairs)
start = dict(sorted(MLP().namedparams()))  # the initial values, on the CPU
moved = max(
    float(cp.abs(q.array - cp.asarray(start[n].array)).max()) for n, q in sorted(ref.namedparams())
)
print(f"chainermn training diff {diff:.3e} moved {moved:.3e} t {opt.t}", flush=True)
assert opt.t == STEPS and diff < 1e-10 and moved > 0.5, (opt.t, diff, moved)
ok("training")
print("chainermn nccl done", flush=True)
