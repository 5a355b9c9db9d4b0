"""A step holding Embed, BatchMatmul and Softmax: replayed as a CUDA graph against the same step
run as a plan and eagerly, on one GPU, in one run.

The step (an attention block over embedded tokens, batch 32, 16 tokens, width 64, float32):
``e = Embed(ids, table)``, ``s = softmax(e @ e^T / 8)``, ``loss = sum((s @ e @ w) ** 2)``, with
the gradients of ``table`` and ``w`` (``gh.grad``, ``create_graph=False``). Before 2026-11-26
such a step could not be recorded (BatchMatmul's cuBLAS calls, Embed's index check); this prints
whether it is recorded now and the time per step of each variant, as ratios to the recorded one
(alternating blocks, each ending with a device synchronisation; the median over rounds). It
checks first that the three give the same numbers. Not part of the test suite; it needs a GPU,
CuPy and gradhub-cuda; it runs in well under a minute::

    python benchmarks/capture_batched_gpu.py [--rounds 7] [--calls 50]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=50)
    args = ap.parse_args()

    import cupy as cp
    import gradhub as gh
    from gradhub import capture

    F = gh.functions
    rng = np.random.default_rng(0)
    table = gh.Variable(cp.asarray(rng.standard_normal((1000, 64)).astype(np.float32) * 0.1))
    w = gh.Variable(cp.asarray(rng.standard_normal((64, 64)).astype(np.float32) * 0.1))
    ids = cp.asarray(rng.integers(0, 1000, (32, 16)))

    def eager(ids: Any) -> Any:
        e = F.embed(ids, table)
        s = F.softmax(F.batch_matmul(e, e, transpose_b=True) * 0.125, axis=-1)
        y = F.batch_matmul(F.batch_matmul(s, e), w)
        loss = F.sum(y * y)
        return (loss, *gh.grad([loss], [table, w], create_graph=False))

    recorded = gh.compile(eager)
    before = capture.set_enabled(False)
    planned = gh.compile(eager)
    for _ in range(3):
        planned(ids)
    capture.set_enabled(before)
    for _ in range(3):
        recorded(ids)
    print(f"recorded: {recorded.capture_refused is None} ({recorded.capture_refused})")

    def host(out: Any) -> list[np.ndarray]:
        return [cp.asnumpy(v.d) for v in out]

    want = host(eager(ids))
    for name, fn, graphs in (("recorded", recorded, True), ("plan", planned, False)):
        capture.set_enabled(graphs)
        got = host(fn(ids))
        capture.set_enabled(before)
        err = max(
            float(np.max(np.abs(g - v)) / max(float(np.max(np.abs(v))), 1e-30))
            for g, v in zip(got, want)
        )
        print(f"{name}: largest difference to eager, relative to the largest value: {err:.2e}")

    sync = cp.cuda.Device().synchronize

    def timed(fn: Callable[[Any], Any], graphs: bool) -> float:
        before = capture.set_enabled(graphs)  # a plan records itself at its next call when on
        try:
            sync()
            t0 = time.perf_counter()
            for _ in range(args.calls):
                fn(ids)
            sync()
        finally:
            capture.set_enabled(before)
        return (time.perf_counter() - t0) / args.calls

    times: dict[str, list[float]] = {"recorded": [], "plan": [], "eager": []}
    variants = {"recorded": (recorded, True), "plan": (planned, False), "eager": (eager, False)}
    for _ in range(args.rounds):
        for name, (fn, graphs) in variants.items():
            times[name].append(timed(fn, graphs))
    base = statistics.median(times["recorded"])
    for name, ts in times.items():
        t = statistics.median(ts)
        print(f"{name:9s} {t * 1e3:8.3f} ms per step  {t / base:5.2f}x the recorded step")


if __name__ == "__main__":
    main()
