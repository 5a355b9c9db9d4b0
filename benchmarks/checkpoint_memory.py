"""Memory and time of gradient checkpointing (``gh.checkpoint``) on a deep MLP.

A chain of ``--layers`` tanh layers (``h = tanh(h @ W_k)``) on a ``--batch`` x ``--width``
float64 batch, trained by one forward and backward pass, plain and checkpointed every
``--every`` layers (one segment per ``--every`` layers)::

    python benchmarks/checkpoint_memory.py                      # 32 layers, 1024 x 256
    python benchmarks/checkpoint_memory.py --every 2 4 8 --repeat 5

Prints, per variant: the numpy memory alive after the forward pass (tracemalloc's current size
over what existed before: the arrays the graph keeps), the peak during forward and backward
(tracemalloc's peak), and the median time of a forward+backward step (the variants' steps
interleaved, so that all see the same background load), with the ratios checkpointed/plain.
The tanh layers need gradhub-nn-ops. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import gradhub as gh
import numpy as np

F = gh.functions


def _model(layers: int, width: int, batch: int) -> tuple[gh.Variable, list[gh.Variable]]:
    rng = np.random.default_rng(0)
    ws = [gh.Variable(rng.standard_normal((width, width)) / np.sqrt(width)) for _ in range(layers)]
    x = gh.Variable(rng.standard_normal((batch, width)), need_grad=False)
    return x, ws


def _step(
    x: gh.Variable, ws: list[gh.Variable], every: int
) -> tuple[Callable[[], Any], Callable[[Any], None]]:
    def block(h: Any, k: int) -> Any:
        for w in ws[k : k + every]:
            h = F.tanh(h @ w)
        return h

    def forward() -> Any:
        h = x
        if every:
            for k in range(0, len(ws), every):
                h = gh.checkpoint(block, h, k)
        else:
            for w in ws:
                h = F.tanh(h @ w)
        return F.mean(h * h)

    def backward(loss: Any) -> None:
        gh.grad([loss], ws, create_graph=False)

    return forward, backward


def memory(layers: int, width: int, batch: int, every: int) -> dict[str, float]:
    """The bytes alive after the forward pass and the peak of forward and backward."""
    x, ws = _model(layers, width, batch)
    forward, backward = _step(x, ws, every)
    backward(forward())  # warm up (plugins, caches)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        loss = forward()
        after = tracemalloc.get_traced_memory()[0] - base
        backward(loss)
        peak = tracemalloc.get_traced_memory()[1] - base
        del loss
    finally:
        tracemalloc.stop()
    return {"after_forward": after, "peak": peak}


def times(
    layers: int, width: int, batch: int, variants: list[int], repeat: int
) -> dict[int, float]:
    """The median seconds of a forward+backward step per variant, the variants' steps
    interleaved (A, B, C, A, B, C...) so that all see the same background load."""
    steps = {}
    for every in variants:
        x, ws = _model(layers, width, batch)
        forward, backward = _step(x, ws, every)
        backward(forward())  # warm up
        steps[every] = (forward, backward)
    samples: dict[int, list[float]] = {every: [] for every in variants}
    for _ in range(repeat):
        for every, (forward, backward) in steps.items():
            t0 = time.perf_counter()
            backward(forward())
            samples[every].append(time.perf_counter() - t0)
    return {every: statistics.median(ts) for every, ts in samples.items()}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=32)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--every", type=int, nargs="+", default=[4])
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    mib = 1 << 20
    mem = {every: memory(a.layers, a.width, a.batch, every) for every in [0, *a.every]}
    secs = times(a.layers, a.width, a.batch, [0, *a.every], a.repeat)
    plain = {**mem[0], "time": secs[0]}
    print(
        f"{a.layers} tanh layers, {a.batch} x {a.width} float64 "
        f"({a.batch * a.width * 8 / mib:.1f} MiB per activation)"
    )
    print(f"{'variant':<14}{'after fwd MiB':>14}{'peak MiB':>10}{'step s':>9}   ratios")
    print(
        f"{'plain':<14}{plain['after_forward'] / mib:>14.1f}{plain['peak'] / mib:>10.1f}"
        f"{plain['time']:>9.3f}"
    )
    for every in a.every:
        r = {**mem[every], "time": secs[every]}
        print(
            f"{'every ' + str(every):<14}{r['after_forward'] / mib:>14.1f}{r['peak'] / mib:>10.1f}"
            f"{r['time']:>9.3f}   after fwd {r['after_forward'] / plain['after_forward']:.3f}, "
            f"peak {r['peak'] / plain['peak']:.3f}, time {r['time'] / plain['time']:.2f}"
        )


if __name__ == "__main__":
    main()
