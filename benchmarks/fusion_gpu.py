"""Elementwise fusion in plans on ``cuda`` (gradhub.fusion, gradhub_cuda.fusion): the static step
time of compiled training steps with and without fusion, in one process.

Two steps, batch 256, float32, each a ``gh.compile`` of forward and ``gh.grad``:

* **W2**: the MLP 784-1024-1024-10 with ReLU and softmax cross entropy (the benchmarks' W2). Its
  elementwise nodes (ReLU) stand alone between products, so nothing is fused: the row checks that
  fusion costs nothing there.
* **W2-swish**: the same MLP with ``h * sigmoid(1.702 * h)`` in place of ReLU: runs of three
  elementwise nodes (MulScalar, Sigmoid, Mul2), whose values the backward rules keep, so the
  fused kernel writes them all (one launch instead of three).

Each step is run as a plan (device graphs off: each kernel launched from Python) and recorded as
a CUDA graph (``gradhub.capture``, one launch per step), with fusion off and on, alternating in
blocks of calls that end with a device synchronisation; the medians of the rounds are printed
with the ratio fused / unfused, the kernels a forward pass saves and the fused launches per step.
The fused results are checked against the unfused ones (bit for bit) first.

Usage (a GPU; about 20 s)::

    python benchmarks/fusion_gpu.py
    python benchmarks/fusion_gpu.py --rounds 7 --calls 50 --batch 256
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--batch", type=int, default=256)
    args = ap.parse_args()

    import cupy as cp
    import gradhub as gh
    import gradhub.functions as F
    from gradhub import capture, fusion
    from gradhub_cuda.fusion import FUSED_CALLS

    sync = cp.cuda.Device().synchronize
    rng = np.random.default_rng(0)
    sizes = (784, 1024, 1024, 10)
    with gh.context_scope(gh.get_extension_context("cuda")):
        ws = [
            gh.Variable((rng.standard_normal((a, b)) * 0.05).astype(np.float32), need_grad=True)
            for a, b in itertools.pairwise(sizes)
        ]
        bs = [gh.Variable(np.zeros(b, np.float32), need_grad=True) for b in sizes[1:]]
    x = cp.asarray(rng.standard_normal((args.batch, 784)).astype(np.float32))
    t = cp.asarray(rng.integers(0, 10, (args.batch, 1)))

    def mlp(act: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
        def step(xv: Any, tv: Any) -> Any:
            h = xv
            for i, (w, b) in enumerate(zip(ws, bs)):
                h = F.affine(h, w, b)
                if i < len(ws) - 1:
                    h = act(h)
            loss = F.mean(F.softmax_cross_entropy(h, tv))
            return (loss, *gh.grad([loss], [*ws, *bs], create_graph=False))

        return step

    steps = {
        "W2": mlp(F.relu),
        "W2-swish": mlp(lambda h: h * F.sigmoid(h * 1.702)),
    }
    print(f"batch {args.batch}, float32, {args.rounds} rounds of {args.calls} calls (medians)")
    for name, step in steps.items():
        for recorded in (False, True):
            capture.set_enabled(recorded)
            compiled = {}
            for on in (False, True):
                fusion.set_enabled(on)
                c = compiled[on] = gh.compile(step)
                for _ in range(4):  # traced, planned, recorded (with capture on)
                    c(x, t)
            fusion.set_enabled(True)
            off_out = [cp.asnumpy(v.d) for v in compiled[False](x, t)]
            on_out = [cp.asnumpy(v.d) for v in compiled[True](x, t)]
            same = all(np.array_equal(a, b) for a, b in zip(off_out, on_out))
            plan = list(compiled[True].traces.values())[-1].plan
            groups = {id(g): g for g in plan.fused.values()}.values()
            saved = sum(g.last - g.first for g in groups)
            n0 = FUSED_CALLS[0]
            compiled[True](x, t)
            launches = FUSED_CALLS[0] - n0
            times: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(args.rounds):
                for on in (False, True):
                    times[on].append(_timed(lambda c=compiled[on]: c(x, t), args.calls, sync))
            off, on_ = statistics.median(times[False]), statistics.median(times[True])
            mode = "recorded" if recorded else "plan"
            print(
                f"{name:9s} {mode:8s} unfused {off * 1e6:8.1f} us  fused {on_ * 1e6:8.1f} us  "
                f"ratio {on_ / off:5.2f}  kernels saved per forward {saved:2d}  "
                f"fused launches per step {launches} (0 when recorded)  equal {same}"
            )
            if recorded and compiled[True].capture_refused:
                print(f"  (not recorded: {compiled[True].capture_refused})")
    capture.set_enabled(True)


if __name__ == "__main__":
    main()
