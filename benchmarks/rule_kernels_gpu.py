"""gradhub-cuda's rule kernels against the generic rules they replace, on one GPU, in one run.

For each rule kernel (``gradhub_cuda.kernels.RULE_KERNELS``) this times one first-order backward
call of the generic rule (its ``fast_backward`` on CuPy) and of the rule kernel on the same
arrays, in alternating blocks (each block ends with a device synchronisation; the median over
rounds of the mean time per call), and then a training step of an MLP (affine, ReLU, affine,
ReLU, affine, SoftmaxCrossEntropy, mean; batch 256, float32; ``gh.grad`` with
``create_graph=False``) with the rule kernels on and off (``Rule.devices`` set aside). It checks
first that both give the same numbers. Not part of the test suite; it needs a GPU, CuPy and
gradhub-cuda::

    python benchmarks/rule_kernels_gpu.py [--rounds 7] [--calls 200]
"""

from __future__ import annotations

import argparse
import functools
import itertools
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def _timed(fn: Callable[[], Any], calls: int, sync: Callable[[], None]) -> float:
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - t0) / calls


def _compare(
    name: str, a: Callable[[], Any], b: Callable[[], Any], rounds: int, calls: int, sync: Any
) -> None:
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(_timed(a, calls, sync))
        tb.append(_timed(b, calls, sync))
    ma, mb = statistics.median(ta), statistics.median(tb)
    print(
        f"{name:44s} generic {ma * 1e6:8.1f} us   rule kernel {mb * 1e6:8.1f} us   "
        f"ratio {mb / ma:5.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()

    import cupy as cp
    import gradhub as gh
    import gradhub.functions as F
    from gradhub.registry import REGISTRY
    from gradhub_cuda.kernels import RULE_KERNELS

    sync = cp.cuda.Device().synchronize
    rng = np.random.default_rng(0)
    print(f"cupy {cp.__version__}, {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")

    # -- one call each -----------------------------------------------------------------------
    for n, c in ((256, 10), (256, 1000)):
        x = cp.asarray(rng.standard_normal((n, c)).astype(np.float32))
        t = cp.asarray(rng.integers(0, c, (n, 1)))
        g = cp.asarray(rng.standard_normal((n, 1)).astype(np.float32))
        argv = (cp, [g], [x, t], [x.shape, t.shape], [None], [t.shape])
        generic = REGISTRY.get("SoftmaxCrossEntropy").rule.fast  # type: ignore[union-attr]
        kernel = RULE_KERNELS["SoftmaxCrossEntropy"]
        np.testing.assert_allclose(
            cp.asnumpy(kernel(*argv)[0]), cp.asnumpy(generic(*argv)[0]), rtol=1e-5, atol=1e-7
        )
        _compare(
            f"SoftmaxCrossEntropy backward ({n}, {c})",
            functools.partial(generic, *argv),
            functools.partial(kernel, *argv),
            args.rounds,
            args.calls,
            sync,
        )
    for shape in ((256, 1000), (256, 64, 32, 32)):
        y = cp.maximum(cp.asarray(rng.standard_normal(shape).astype(np.float32)), 0)
        g = cp.asarray(rng.standard_normal(shape).astype(np.float32))
        argv = (cp, [g], [None], [shape], [y], [shape])
        generic = REGISTRY.get("ReLU").rule.fast  # type: ignore[union-attr]
        kernel = RULE_KERNELS["ReLU"]
        np.testing.assert_array_equal(cp.asnumpy(kernel(*argv)[0]), cp.asnumpy(generic(*argv)[0]))
        _compare(
            f"ReLU backward {shape}",
            functools.partial(generic, *argv),
            functools.partial(kernel, *argv),
            args.rounds,
            args.calls,
            sync,
        )

    # -- an MLP step -------------------------------------------------------------------------
    ctx = gh.get_extension_context("cuda")
    sizes = (784, 1000, 1000, 10)
    with gh.context_scope(ctx):
        x = gh.Variable(rng.standard_normal((256, 784)).astype(np.float32))
        t = gh.Variable(rng.integers(0, 10, (256, 1)), need_grad=False)
        ws = [
            gh.Variable((rng.standard_normal((a, b)) * 0.05).astype(np.float32), need_grad=True)
            for a, b in itertools.pairwise(sizes)
        ]
        bs = [gh.Variable(np.zeros(b, np.float32), need_grad=True) for b in sizes[1:]]

    def step() -> list[Any]:
        h = x
        for i, (w, b) in enumerate(zip(ws, bs)):
            h = F.affine(h, w, b)
            if i < len(ws) - 1:
                h = F.relu(h)
        loss = F.mean(F.softmax_cross_entropy(h, t))
        return gh.grad([loss], [*ws, *bs], create_graph=False)

    rules = [REGISTRY.get(n).rule for n in RULE_KERNELS]
    kept = [r.devices for r in rules]  # type: ignore[union-attr]

    def off() -> Any:
        for r in rules:
            r.devices = None  # type: ignore[union-attr]
        try:
            return step()
        finally:
            for r, d in zip(rules, kept):
                r.devices = d  # type: ignore[union-attr]

    for a, b in zip(off(), step()):
        np.testing.assert_allclose(cp.asnumpy(b.d), cp.asnumpy(a.d), rtol=1e-5, atol=1e-7)
    _compare("MLP step (batch 256, 784-1000-1000-10)", off, step, args.rounds, 30, sync)


if __name__ == "__main__":
    main()
