"""gradhub-cuda's convolution and pooling kernels with 32-bit against 64-bit index arithmetic.

Each kernel of ``gradhub_cuda.kernels`` is compiled twice (``_k(narrow)``): with ``int`` index
arithmetic for launches whose arrays hold fewer than ``NARROW_LIMIT`` elements, and with
``long long`` otherwise. This times the calls of the seed CNN (W3 at batch 256: 3x32x32 inputs,
3x3 convolutions of 8 and 16 channels with padding 1, 2x2 max pooling) both ways on the same
arrays, alternating rounds, as GPU time per call (``cupyx.profiler.benchmark``: CUDA events
around each call, so host time is not counted), and checks that both give the same bits. It also
times max pooling's backward through the kernel for any windows (one thread per input element),
which the disjoint 2x2 windows no longer use (one thread per window). Not part of the test suite;
it needs a GPU, CuPy and gradhub-cuda::

    python benchmarks/index_width_gpu.py [--rounds 5] [--batch 256]
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from typing import Any

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--batch", type=int, default=256)
    args = ap.parse_args()

    import cupy as cp
    import gradhub  # noqa: F401  (loads the plugins)
    from cupyx.profiler import benchmark
    from gradhub_cuda import kernels as k

    rng = np.random.default_rng(0)
    n = args.batch

    def arr(*shape: int) -> Any:
        return cp.asarray(rng.standard_normal(shape).astype(np.float32))

    x1, w1, b1 = arr(n, 3, 32, 32), arr(8, 3, 3, 3), arr(8)
    x2, w2, b2 = arr(n, 8, 16, 16), arr(16, 8, 3, 3), arr(16)
    h1 = arr(n, 8, 32, 32)
    h2 = arr(n, 16, 16, 16)
    pool = dict(kernel=(2, 2), stride=(2, 2))
    g1 = arr(n, 8, 16, 16)
    g2 = arr(n, 16, 8, 8)
    dy1 = arr(n, 8, 32, 32)
    dy2 = arr(n, 16, 16, 16)
    geo1 = k._pool_geometry("max_pooling_backward", h1.shape, (2, 2), (2, 2), True, None, False)
    geo2 = k._pool_geometry("max_pooling_backward", h2.shape, (2, 2), (2, 2), True, None, False)
    calls: list[tuple[str, Callable[[], Any]]] = [
        ("conv1 forward (256,3,32,32)->8", lambda: k.convolution(cp, x1, w1, b1, pad=(1, 1))),
        ("conv2 forward (256,8,16,16)->16", lambda: k.convolution(cp, x2, w2, b2, pad=(1, 1))),
        (
            "conv1 filter grad",
            lambda: k.convolution_filter_grad(cp, x1, dy1, kernel=(3, 3), pad=(1, 1)),
        ),
        (
            "conv2 filter grad",
            lambda: k.convolution_filter_grad(cp, x2, dy2, kernel=(3, 3), pad=(1, 1)),
        ),
        (
            "conv2 input grad (deconvolution)",
            lambda: k.deconvolution(cp, dy2, w2, None, pad=(1, 1)),
        ),
        ("pool1 forward", lambda: k.max_pooling(cp, h1, **pool)),
        ("pool1 backward", lambda: k.max_pooling_backward(cp, g1, h1, **pool)),
        ("pool2 backward", lambda: k.max_pooling_backward(cp, g2, h2, **pool)),
        (
            "pool1 backward, any-window kernel",
            lambda: k._pool_launch(cp, "max_pool_backward", g1, h1, geo1, h1.shape, h1.dtype),
        ),
        (
            "pool2 backward, any-window kernel",
            lambda: k._pool_launch(cp, "max_pool_backward", g2, h2, geo2, h2.shape, h2.dtype),
        ),
    ]
    limit = k.NARROW_LIMIT
    print(f"GPU time per call (us), median of {args.rounds} rounds x {args.repeat} calls")
    print(f"{'call':36s} {'64-bit':>9s} {'32-bit':>9s} {'ratio':>7s}")
    total = {"wide": 0.0, "narrow": 0.0}
    for name, fn in calls:
        times: dict[str, list[float]] = {"wide": [], "narrow": []}
        outs = {}
        for r in range(args.rounds):
            for mode in ("wide", "narrow") if r % 2 == 0 else ("narrow", "wide"):
                k.NARROW_LIMIT = 0 if mode == "wide" else limit
                res = benchmark(fn, (), n_repeat=args.repeat, n_warmup=3)
                times[mode].append(float(np.median(res.gpu_times[0])) * 1e6)
                outs[mode] = cp.asnumpy(fn())
        k.NARROW_LIMIT = limit
        same = np.array_equal(outs["wide"], outs["narrow"])
        tw, tn = statistics.median(times["wide"]), statistics.median(times["narrow"])
        total["wide"] += tw
        total["narrow"] += tn
        flag = "" if same else "  DIFFERENT BITS"
        print(f"{name:36s} {tw:9.1f} {tn:9.1f} {tn / tw:7.2f}{flag}")
    print(
        f"{'sum':36s} {total['wide']:9.1f} {total['narrow']:9.1f} "
        f"{total['narrow'] / total['wide']:7.2f}"
    )


if __name__ == "__main__":
    main()
