"""chainermn's ``MultiNodeBatchNormalization`` (gradhub_compat.chainermn) under ``mpiexec -n 2``:
each process normalizes half of a batch; against chainer's ``L.BatchNormalization`` on the whole
batch in one process: outputs, x's gradient, gamma's and beta's gradients (their sum over the
processes), the running statistics after two steps, evaluation mode. Prints ``rank R ok NAME``."""

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
from gradhub_compat import chainer, chainermn
from gradhub_compat.chainermn.links import MultiNodeBatchNormalization

comm = chainermn.create_communicator("naive")
r = comm.rank
rows = slice(0, 3) if r == 0 else slice(3, 6)
rng = np.random.default_rng(0)
X = rng.uniform(-2, 2, (6, 4, 3)).astype(np.float32)
W = rng.standard_normal((6, 4, 3)).astype(np.float32)


def ok(what: str) -> None:
    print(f"rank {r} ok {what}", flush=True)


def close(a, b, what, tol=1e-5):  # type: ignore[no-untyped-def]
    err = float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
    assert np.shape(a) == np.shape(b) and err <= tol, (what, r, err)


mn = MultiNodeBatchNormalization(4, comm, decay=0.5)
one = L.BatchNormalization(4, decay=0.5)
for step in range(2):
    xs = chainer.Variable(X[rows] * (step + 1))
    xf = chainer.Variable(X * (step + 1))
    y, yf = mn(xs), one(xf)
    close(y.array, yf.array[rows], "y")
    mn.cleargrads()
    one.cleargrads()
    F.sum(y * W[rows]).backward()
    F.sum(yf * W).backward()
    close(xs.grad, xf.grad[rows], "x.grad")
    for name in ("gamma", "beta"):
        total = comm.allreduce(getattr(mn, name).grad)
        close(total, getattr(one, name).grad, name)
close(mn.avg_mean, one.avg_mean, "avg_mean")
close(mn.avg_var, one.avg_var, "avg_var")
ok("training")
with chainer.using_config("train", False):
    close(mn(X[rows]).array, one(X).array[rows], "evaluation")
ok("evaluation")
try:
    MultiNodeBatchNormalization(4, comm, communication_backend="nccl")
except ValueError as e:
    assert "pure_nccl" in str(e)
    ok("backend")
