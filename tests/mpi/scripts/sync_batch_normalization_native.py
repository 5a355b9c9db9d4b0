"""SyncBatchNormalization on gradhub-nn-ops' compiled kernels over two processes against batch
normalization of the whole batch in one process (float64 and float32): values, running
statistics, first derivatives (array rules) and the gradient through the graph rules; prints
``ok NAME rank`` per check.

Argument: ``equal`` (4 + 4 samples of (3, 16, 16): the compiled kernels in both processes) or
``mixed`` (1 + 7 samples: 768 values in process 0, under ``normalization._BN_MIN_SIZE``, so that
process runs the numpy kernels while process 1 runs the compiled ones; both make the same
collectives).
"""

import sys
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
from gradhub_nn_ops import native
from gradhub_nn_ops import normalization as N

comm = gh.distributed.communicator("mpi")
r, p = comm.rank, comm.size
assert p == 2, p
split = 4 if sys.argv[1] == "equal" else 1
rows = slice(0, split) if r == 0 else slice(split, 8)
compiled_here = native.available() and 3 * 16 * 16 * (rows.stop - rows.start) >= N._BN_MIN_SIZE

calls: list[str] = []


def recorded(name: str) -> Any:
    """``native.<name>``, its calls recorded in ``calls``."""
    real = getattr(native, name)

    def kernel(*args: Any) -> None:
        calls.append(name)
        real(*args)

    return kernel


native.bn_forward = recorded("bn_forward")
native.bn_backward = recorded("bn_backward")


def ok(name: str) -> None:
    print(f"ok {name} {r}", flush=True)


def close(a: np.ndarray, b: np.ndarray, what: str, tol: float) -> None:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    err = float(np.max(np.abs(a - b) / (1.0 + np.abs(b))))
    assert a.shape == b.shape and err <= tol, (what, r, err, a.shape, b.shape)


def summed(a: np.ndarray) -> np.ndarray:
    return comm.all_reduce(np.array(a, copy=True))


def params(
    beta0: np.ndarray, gamma0: np.ndarray
) -> tuple[gh.Variable, gh.Variable, np.ndarray, np.ndarray]:
    """beta and gamma (Variables), the running mean and variance."""
    return (
        gh.Variable(beta0.copy(), need_grad=True),
        gh.Variable(gamma0.copy(), need_grad=True),
        np.zeros(beta0.shape, beta0.dtype),
        np.ones(beta0.shape, beta0.dtype),
    )


for dtype, tol in ((np.float64, 1e-11), (np.float32, 2e-5)):
    name = np.dtype(dtype).name
    rng = np.random.default_rng(0)  # the same data in both processes
    X = (rng.uniform(-2.0, 2.0, (8, 3, 16, 16)) + 3.0).astype(dtype)
    W = rng.standard_normal(X.shape).astype(dtype)  # the weights of a linear loss
    beta0 = rng.standard_normal((1, 3, 1, 1)).astype(dtype)
    gamma0 = rng.uniform(0.5, 1.5, (1, 3, 1, 1)).astype(dtype)

    bf, cf, rmf, rvf = params(beta0, gamma0)
    xf = gh.Variable(X.copy(), need_grad=True)
    yf = F.batch_normalization(xf, bf, cf, rmf, rvf, eps=1e-3, decay_rate=0.5)
    gxf, gbf, gcf = gh.grad([(yf * W).sum()], [xf, bf, cf], create_graph=False)
    assert gxf is not None and gbf is not None and gcf is not None

    calls.clear()
    b, c, rm, rv = params(beta0, gamma0)
    x = gh.Variable(X[rows].copy(), need_grad=True)
    y = F.sync_batch_normalization(x, b, c, rm, rv, comm, eps=1e-3, decay_rate=0.5)
    close(y.d, yf.d[rows], "forward", tol)
    close(rm, rmf, "running mean", tol)
    close(rv, rvf, "running variance", tol)
    ok(f"forward_{name}")

    gx, gb, gc = gh.grad([(y * W[rows]).sum()], [x, b, c], create_graph=False)
    assert gx is not None and gb is not None and gc is not None
    close(gx.d, gxf.d[rows], "grad x", tol)
    close(summed(gb.d), gbf.d, "grad beta", tol)
    close(summed(gc.d), gcf.d, "grad gamma", tol)
    assert ("bn_backward" in calls) == compiled_here, (r, calls)
    ok(f"first_order_{name}")

    # the rules of registered functions (create_graph) after the compiled forward
    (gx2,) = gh.grad([(y * W[rows]).sum()], [x], create_graph=True)
    assert gx2 is not None
    close(gx2.d, gx.d, "grad x by the graph rules", 10 * tol)
    ok(f"graph_rule_{name}")
