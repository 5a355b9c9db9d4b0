"""SyncBatchNormalization, DistributedMean and AllReduce over two processes against the same
computation in one process on the whole batch (float64): values, running statistics, first
and second derivatives, a re-executed graph; prints ``ok NAME rank`` per check.

Argument: ``equal`` (3 + 3 samples) or ``unequal`` (2 + 4 samples).
"""

import sys

import gradhub as gh
import gradhub.functions as F
import gradhub.parametric_functions as PF
import numpy as np

comm = gh.distributed.communicator("mpi")
r, p = comm.rank, comm.size
assert p == 2, p
split = 3 if sys.argv[1] == "equal" else 2
rows = slice(0, split) if r == 0 else slice(split, 6)


def ok(name: str) -> None:
    print(f"ok {name} {r}", flush=True)


def close(a: np.ndarray, b: np.ndarray, what: str, tol: float = 1e-11) -> None:
    err = float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) if np.size(a) else 0.0
    assert np.shape(a) == np.shape(b) and err <= tol, (what, r, err, np.shape(a), np.shape(b))


rng = np.random.default_rng(0)  # the same data in both processes
X = rng.uniform(-2.0, 2.0, (6, 3, 2, 2))
W = rng.standard_normal((6, 3, 2, 2))  # the weights of a linear loss
beta0 = rng.standard_normal((1, 3, 1, 1))
gamma0 = rng.uniform(0.5, 1.5, (1, 3, 1, 1))


def params() -> tuple[gh.Variable, gh.Variable, np.ndarray, np.ndarray]:
    return (
        gh.Variable(beta0.copy(), need_grad=True),
        gh.Variable(gamma0.copy(), need_grad=True),
        np.zeros((1, 3, 1, 1)),
        np.ones((1, 3, 1, 1)),
    )


def summed(a: np.ndarray) -> np.ndarray:
    return comm.all_reduce(np.array(a, copy=True))


# -- AllReduce and DistributedMean ---------------------------------------------------------------
x = gh.Variable(X[rows].copy(), need_grad=True)
s = F.all_reduce(x[0], comm)
close(s.d, X[0] + X[split], "all_reduce")
(g,) = gh.grad([(s * s).sum()], [x], create_graph=True)
# d/dx_r of sum_q |sum_r x_r[0]|^2 over both processes' losses: 2 * p * s
close(g.d[0], 2 * p * s.d, "all_reduce grad")
(gg,) = gh.grad([g.sum()], [x])
close(gg.d[0], np.full_like(s.d, 2 * p * p), "all_reduce second derivative")
m = F.distributed_mean(x, comm, axis=(0, 2, 3), keepdims=True)
close(m.d, X.mean(axis=(0, 2, 3), keepdims=True), "distributed_mean")
(g,) = gh.grad([(m * m * m).sum()], [x], create_graph=True)
xf = gh.Variable(X.copy(), need_grad=True)
mf = F.mean(xf, axis=(0, 2, 3), keepdims=True)
(gf,) = gh.grad([(mf * mf * mf).sum() * p], [xf], create_graph=True)
close(g.d, gf.d[rows], "distributed_mean grad")
(gg,) = gh.grad([(g * g).sum()], [x])
(ggf,) = gh.grad([(gf * gf).sum()], [xf])
close(gg.d, ggf.d[rows], "distributed_mean second derivative")
ok("collective_functions")

# -- SyncBatchNormalization against BatchNormalization on the whole batch ------------------------
b, c, rm, rv = params()
x = gh.Variable(X[rows].copy(), need_grad=True)
y = F.sync_batch_normalization(x, b, c, rm, rv, comm)
bf, cf, rmf, rvf = params()
xf = gh.Variable(X.copy(), need_grad=True)
yf = F.batch_normalization(xf, bf, cf, rmf, rvf)
close(y.d, yf.d[rows], "forward")
close(rm, rmf, "running mean")
close(rv, rvf, "running variance")
ok("forward")

loss = (y * W[rows]).sum()
gx, gb, gc = gh.grad([loss], [x, b, c], create_graph=True)
lossf = (yf * W).sum()
gxf, gbf, gcf = gh.grad([lossf], [xf, bf, cf], create_graph=True)
close(gx.d, gxf.d[rows], "grad x")
close(summed(gb.d), gbf.d, "grad beta")
close(summed(gc.d), gcf.d, "grad gamma")
ok("first_order")

# a gradient penalty: the second derivatives through the synchronized statistics
pen = (gx * gx).sum()
hx, hc = gh.grad([pen], [x, c])
penf = (gxf * gxf).sum()
hxf, hcf = gh.grad([penf], [xf, cf])
close(hx.d, hxf.d[rows], "second derivative x", 1e-9)
close(summed(hc.d), hcf.d, "second derivative gamma", 1e-9)
ok("second_order")

# backward() and .g, as a training step uses them
b, c, rm, rv = params()
x = gh.Variable(X[rows].copy(), need_grad=True)
y = F.sync_batch_normalization(x, b, c, rm, rv, comm, eps=1e-3, decay_rate=0.5)
(y * W[rows]).sum().backward()
bf, cf, rmf, rvf = params()
xf = gh.Variable(X.copy(), need_grad=True)
yf = F.batch_normalization(xf, bf, cf, rmf, rvf, eps=1e-3, decay_rate=0.5)
(yf * W).sum().backward()
close(x.g, xf.g[rows], "backward x")
close(summed(c.g), cf.g, "backward gamma")
# the graph run again (nnabla's static style): the running statistics are updated again
x.d = X[rows] * 2.0
y.forward()
xf.d = X * 2.0
yf.forward()
close(y.d, yf.d[rows], "forward again")
close(rm, rmf, "running mean again")
close(rv, rvf, "running variance again")
ok("static_graph")

# inference: the running statistics, no collective
z = F.sync_batch_normalization(x, b, c, rm, rv, comm, batch_stat=False)
zf = F.batch_normalization(xf, bf, cf, rmf, rvf, batch_stat=False)
close(z.d, zf.d[rows], "inference")
ok("inference")


# float32
def f32(*arrays: np.ndarray) -> list[np.ndarray]:
    return [np.asarray(a, np.float32) for a in arrays]


stats = (beta0, gamma0, np.zeros((1, 3, 1, 1)), np.ones((1, 3, 1, 1)))
y32 = F.sync_batch_normalization(gh.Variable(X[rows].astype(np.float32)), *f32(*stats), comm)
y32f = F.batch_normalization(gh.Variable(X.astype(np.float32)), *f32(*stats))
assert y32.dtype == np.float32
close(y32.d, y32f.d[rows], "float32", 1e-5)
ok("float32")

# the parametric function: nnabla's parameters, the same in every process
gh.clear_parameters()
x = gh.Variable(X[rows].copy())
y = PF.sync_batch_normalization(x, comm, name="sbn")
names = sorted(gh.get_parameters(grad_only=False))
assert names == ["sbn/bn/beta", "sbn/bn/gamma", "sbn/bn/mean", "sbn/bn/var"], names
gh.clear_parameters()
yf = PF.batch_normalization(gh.Variable(X.copy()), name="sbn")
close(y.d, yf.d[rows], "PF")
ok("parametric")

# a compiled training step (a plan replayed): the same gradients and statistics as eager steps
gh.clear_parameters()
xs = gh.Variable(X[rows].copy())


def step() -> list[gh.Variable]:
    y = PF.sync_batch_normalization(xs, comm, name="sbn")
    loss = (F.tanh(y) * W[rows]).sum()
    return gh.grad([loss], list(gh.get_parameters().values()))


eager = [[g.d.copy() for g in step()] for _ in range(3)]
stats_eager = [a.d.copy() for a in gh.get_parameters(grad_only=False).values()]
gh.clear_parameters()
compiled = gh.compile(step)
planned = [
    [np.array(g.d if isinstance(g, gh.Variable) else g) for g in compiled()] for _ in range(3)
]
for e, q in zip(eager, planned):
    for a, b in zip(e, q):
        close(a, b, "compiled step", 0.0)
for a, b in zip(stats_eager, gh.get_parameters(grad_only=False).values()):
    close(a, b.d, "compiled step statistics", 0.0)
ok("compiled")

# a compiled step whose batch changes size in one process only (the last batch of an uneven
# shard): that process traces again, the other replays, and their collectives still pair up
# (the total count of DistributedMean's rule is an AllReduce of the plan, not a constant)
gh.clear_parameters()
xs2 = gh.Variable(np.zeros((3, 3, 2, 2)))


def step3() -> list[gh.Variable]:
    y = PF.sync_batch_normalization(xs2, comm, name="u")
    return gh.grad([(y * y * y).sum()], list(gh.get_parameters().values()))


sizes = [(3, 3), (3, 3), (3, 1)]  # (rows of process 0, of process 1) per step
compiled3 = gh.compile(step3)
got3 = []
for n0, n1 in sizes:
    xs2.d = (X[:n0] if r == 0 else X[n0 : n0 + n1]).copy()
    got3.append([np.array(getattr(g, "d", g)) for g in compiled3()])
gh.clear_parameters()
for k, (n0, n1) in enumerate(sizes):
    xs2.d = (X[:n0] if r == 0 else X[n0 : n0 + n1]).copy()
    for a, b in zip(got3[k], step3()):
        close(a, b.d, f"compiled step {k} with a changed batch", 1e-10)
ok("compiled_shapes")
