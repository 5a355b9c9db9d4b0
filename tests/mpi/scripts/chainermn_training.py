"""chainermn's calls on the chainer layer under ``mpiexec -n 2``; argv[1] the communicator
("naive" or "flat"). A float64 MLP trained by MomentumSGD wrapped in
create_multi_node_optimizer, each rank on half of every global batch of a scattered dataset,
against one process (on every rank) on the whole batch: the first update broadcasts rank 0's
parameters (chainermn's rule), then 20 updates. Prints ``rank R ok NAME`` per check and
``rank R diff D moved M``."""

import sys

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
from gradhub_compat import chainer, chainermn
from gradhub_compat.chainer import optimizers

name = sys.argv[1]
comm = chainermn.create_communicator(name)
r = comm.rank
assert (comm.size, comm.intra_rank, comm.intra_size) == (2, r, 2), comm
assert (comm.inter_rank, comm.inter_size) == (0, 1)
assert comm.mpi_comm.Get_size() == 2


def ok(what: str) -> None:
    print(f"rank {r} ok {what}", flush=True)


ok("ranks")
# -- the collectives on arrays -----------------------------------------------------------------
x = np.arange(6, dtype=np.float32).reshape(2, 3) * (r + 1)
s = comm.allreduce(x)
assert (s == np.arange(6).reshape(2, 3) * 3).all() and (
    x == np.arange(6).reshape(2, 3) * (r + 1)
).all()
b = comm.bcast(x if r == 1 else None, root=1)
assert b.dtype == np.float32 and (b == np.arange(6).reshape(2, 3) * 2).all(), b
g = comm.allgather(np.full(2, float(r)))
assert isinstance(g, tuple) and [float(a[0]) for a in g] == [0.0, 1.0]
ok("arrays")
obj = comm.bcast_obj({"lr": 0.1, "layers": [5, 7]} if r == 0 else None)
assert obj == {"lr": 0.1, "layers": [5, 7]}, obj
assert comm.allreduce_obj(r + 1) == 3 and comm.allreduce_obj(0.5) == 1.0
assert (comm.allreduce_obj(np.array([r, 1])) == np.array([1, 2])).all()
try:
    comm.bcast_obj(object() if r == 0 else None)
except TypeError as e:
    assert "sends objects as JSON, never pickled" in str(e), e
try:
    comm.gather_obj(1)
except NotImplementedError as e:
    assert "gather_obj: not supported by gradhub_compat.chainermn (pickles the objects)" in str(e)
ok("objects")

# -- data-parallel training --------------------------------------------------------------------
B, D, H, STEPS = 16, 5, 7, 20
rng = np.random.default_rng(0)
X = rng.standard_normal((STEPS * B, D))
T = np.sin(X.sum(axis=1, keepdims=True))
data = list(zip(X, T))
assert len(chainermn.scatter_dataset(data, comm)) == len(data) // 2
shuffled = chainermn.scatter_dataset(data, comm, shuffle=True, seed=3)
perm = np.random.RandomState(3).permutation(len(data))
assert all((shuffled[i][0] == X[perm[r * len(data) // 2 + i]]).all() for i in range(3))
ok("scatter_dataset")


class MLP(chainer.Chain):
    def __init__(self, seed: int) -> None:
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(D, H)
            self.l2 = L.Linear(H, 1)
        g = np.random.default_rng(seed)
        for _, p in sorted(self.namedparams()):  # float64 values
            p.array = g.standard_normal(p.array.shape) * 0.5

    def forward(self, x: np.ndarray) -> chainer.Variable:
        return self.l2(F.tanh(self.l1(x)))


def lossfun(model: MLP, x: np.ndarray, t: np.ndarray) -> chainer.Variable:
    return F.mean_squared_error(model(x), t)


ref = MLP(0)  # one process, whole batches: rank 0's initial values
ref_opt = optimizers.MomentumSGD(lr=0.1, momentum=0.9).setup(ref)
model = MLP(10 + r)  # different on each rank until the first update broadcasts rank 0's
opt = chainermn.create_multi_node_optimizer(optimizers.MomentumSGD(lr=0.1, momentum=0.9), comm)
opt.setup(model)
assert model.l1.W.array.dtype == np.float64
if r == 0:  # rank 0 starts where the reference starts
    for (_, p), (_, q) in zip(sorted(model.namedparams()), sorted(ref.namedparams())):
        p.array[...] = q.array
opt.update(lossfun, model, X[:B], T[:B])  # chainermn: the first update only broadcasts
assert opt.t == 0 and all(
    (p.array == q.array).all()
    for (_, p), (_, q) in zip(sorted(model.namedparams()), sorted(ref.namedparams()))
)
ok("bcast_data")
mine = slice(r * B // 2, (r + 1) * B // 2)
for s in range(STEPS):
    xb, tb = X[s * B : (s + 1) * B], T[s * B : (s + 1) * B]
    ref_opt.update(lossfun, ref, xb, tb)
    opt.update(lossfun, model, xb[mine], tb[mine])
assert opt.t == STEPS and opt.lr == 0.1  # the wrapped optimizer's attributes
diff = max(
    float(np.abs(p.array - q.array).max())
    for (_, p), (_, q) in zip(sorted(model.namedparams()), sorted(ref.namedparams()))
)
moved = max(
    float(np.abs(p.array - q.array).max())
    for (_, p), (_, q) in zip(sorted(ref.namedparams()), sorted(MLP(0).namedparams()))
)
print(f"rank {r} diff {diff:.3e} moved {moved:.3e}", flush=True)


# -- create_multi_node_evaluator ---------------------------------------------------------------
class Evaluator:
    """The local mean squared error and a per-rank count, on this rank's half of the data."""

    def __init__(self, names: list[str] | None = None) -> None:
        self.names = names

    def evaluate(self) -> dict:
        part = chainermn.scatter_dataset(data, comm)
        xs = np.stack([a for a, _ in part])
        ts = np.stack([b for _, b in part])
        loss = lossfun(model, xs, ts)
        out = {"main/loss": loss, "rank": float(r), "vec": np.array([r, 1.0])}
        if self.names is not None:
            out = {n: 1.0 for n in self.names}
        return out


ev = chainermn.create_multi_node_evaluator(Evaluator(), comm)
res = ev.evaluate()
whole = float(lossfun(model, X, T).array)
assert sorted(res) == ["main/loss", "rank", "vec"], res
assert abs(res["main/loss"] - whole) < 1e-12, (res, whole)
assert res["rank"] == 0.5 and (res["vec"] == [0.5, 1.0]).all(), res
bad = chainermn.create_multi_node_evaluator(Evaluator(["a"] if r == 0 else ["a", "b"]), comm)
try:
    bad.evaluate()
except ValueError as e:
    assert "the ranks' evaluate() returned different names (1 rank(s) differ" in str(e), e
else:
    raise AssertionError("different names were not refused")


class OddValue:
    def evaluate(self) -> dict:
        return {"a": "text" if r == 1 else 1.0}


try:
    chainermn.create_multi_node_evaluator(OddValue(), comm).evaluate()
except TypeError as e:
    want = "returned 'a': str" if r == 1 else "cannot be averaged on 1 other rank(s)"
    assert want in str(e), e
else:
    raise AssertionError("a value that cannot be averaged was not refused")
ok("evaluator")
