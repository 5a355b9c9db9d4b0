"""nnabla's F/PF.sync_batch_normalization (gradhub_compat.nnabla) on a
``C.MultiProcessDataParalellCommunicator`` over two processes, as an nnabla program builds and
runs a static graph: each process's part against batch normalization of the whole batch in one
process; prints ``ok NAME rank`` per check."""

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.communicators as C
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
from gradhub_compat.nnabla.ext_utils import get_extension_context

comm = C.MultiProcessDataParalellCommunicator(get_extension_context("cpu"))
comm.init()
r = comm.rank
assert comm.size == 2
rows = slice(0, 4) if r == 0 else slice(4, 8)
rng = np.random.default_rng(0)
X = rng.uniform(-2.0, 2.0, (8, 3, 2, 2)).astype(np.float32)
W = rng.standard_normal((8, 3, 2, 2)).astype(np.float32)


def ok(name: str) -> None:
    print(f"ok {name} {r}", flush=True)


def close(a, b, what, tol=2e-5):  # type: ignore[no-untyped-def]
    err = float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
    assert np.shape(a) == np.shape(b) and err <= tol, (what, r, err)


def train(x_data, w_data, sync):  # type: ignore[no-untyped-def]
    """Two static steps (forward/backward) of PF.(sync_)batch_normalization + a linear loss;
    returns y, the parameters' gradients and the running statistics."""
    nn.clear_parameters()
    x = nn.Variable(x_data.shape, need_grad=True)
    if sync:
        y = PF.sync_batch_normalization(x, comm, name="bn1")
    else:
        y = PF.batch_normalization(x, name="bn1")
    loss = F.sum(y * nn.Variable.from_numpy_array(w_data))
    params = nn.get_parameters(grad_only=False)
    assert float(params["bn1/bn/mean"].d.sum()) == 0.0  # the build updates nothing
    for step in range(2):
        x.d = x_data * (step + 1)
        for p in nn.get_parameters().values():
            p.grad.zero()
        loss.forward()
        loss.backward()
    grads = {k: p.g.copy() for k, p in nn.get_parameters().items()}
    stats = {k: params[k].d.copy() for k in ("bn1/bn/mean", "bn1/bn/var")}
    return y.d.copy(), x.g.copy(), grads, stats


y, gx, grads, stats = train(X[rows], W[rows], True)
yf, gxf, gradsf, statsf = train(X, W, False)
close(y, yf[rows], "y")
close(gx, gxf[rows], "x.grad")
for k in stats:
    close(stats[k], statsf[k], k)
ok("static_graph")
# the parameters' gradients are each process's part: their all-reduce is the whole batch's
for k, g in grads.items():
    total = g.copy()
    comm.comm.all_reduce(total)
    close(total, gradsf[k], k, 1e-4)
ok("parameter_gradients")

# F.sync_batch_normalization with nnabla's None parameters and output_stat
x = nn.Variable.from_numpy_array(X[rows])
y, m, v = F.sync_batch_normalization(x, None, None, None, None, comm, output_stat=True)
y.forward()
close(m.d, X.mean(axis=(0, 2, 3), keepdims=True), "output_stat mean")
close(v.d, X.var(axis=(0, 2, 3), keepdims=True), "output_stat variance")
assert y.parent.name == "SyncBatchNormalization"
ok("functions")
