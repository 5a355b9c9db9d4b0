"""Interleaved in-process A/B timing of gradhub against one peer, for work on the hot paths.

The suite (``benchmarks/run.py``) measures each framework in its own fresh process, which is the
fair comparison but sensitive to what else the machine runs at that moment. While optimizing, a
tighter ratio comes from running both steps in one process, alternating A, B, A, B, so that both
see the same background load::

    python benchmarks/ab.py mlp                    # gradhub vs numpy-manual (W2)
    python benchmarks/ab.py tiny_ops --peer torch  # gradhub vs torch (W1)
    python benchmarks/ab.py deep_mlp_mem --pairs 10

Prints both medians, the ratio of the medians and the median of the per-pair ratios. The data
and adapters are the suite's; thread variables are pinned (``--threads``, default 2) before
numpy or torch is imported. Against numpy-manual (same numpy, same BLAS) the in-process ratio is
tight. Against torch it is only indicative: alternating with a Python-heavy step slows torch's
per-op path (W1: about 10 us per function here against 7 us in its own process), so quote the
suite's fresh-process ratios for torch. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PEER_MODULES = {"numpy-manual": "fw_numpy_manual", "torch": "fw_torch"}


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def _inner(step: Callable[[], Any]) -> int:
    """Calls per sample so that a sample lasts >= 5 ms."""
    t0 = time.perf_counter()
    step()
    return max(1, int(0.005 / max(time.perf_counter() - t0, 1e-7)))


def ab(a: Callable[[], Any], b: Callable[[], Any], pairs: int) -> dict[str, float]:
    """Median seconds per call of ``a`` and ``b`` over ``pairs`` alternating samples."""
    for _ in range(3):
        a()
        b()
    na, nb = _inner(a), _inner(b)
    ta: list[float] = []
    tb: list[float] = []
    for _ in range(pairs):
        t0 = time.perf_counter()
        for _ in range(na):
            a()
        ta.append((time.perf_counter() - t0) / na)
        t0 = time.perf_counter()
        for _ in range(nb):
            b()
        tb.append((time.perf_counter() - t0) / nb)
    return {
        "a": _median(ta),
        "b": _median(tb),
        "ratio": _median(ta) / _median(tb),
        "pair_ratio": _median([x / y for x, y in zip(ta, tb)]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("workload", help="tiny_ops, mlp, cnn, grad_penalty, nth_sin, deep_mlp_mem")
    ap.add_argument("--peer", choices=sorted(PEER_MODULES), default="numpy-manual")
    ap.add_argument("--pairs", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--peers", default=None, help="peer harness folder")
    args = ap.parse_args(argv)
    for v in (
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "VECLIB_MAXIMUM_THREADS",
        "NUMEXPR_NUM_THREADS",
        "BLIS_NUM_THREADS",
        "BENCH_THREADS",
    ):
        os.environ[v] = str(args.threads)
    sys.path.insert(0, str(HERE))
    from run import find_peers

    sys.path.insert(0, str(find_peers(args.peers)))
    import importlib

    import fw_gradhub
    import harness

    peer = importlib.import_module(PEER_MODULES[args.peer])
    for name, mod in (("gradhub", fw_gradhub), (args.peer, peer)):
        ok, why = mod.available()
        if not ok:
            print(f"ab.py: {name} is not usable here: {why}", file=sys.stderr)
            return 2
    a = fw_gradhub.make(args.workload, harness.workload_params(args.workload))
    b = peer.make(args.workload, harness.workload_params(args.workload))
    r = ab(a, b, args.pairs)
    print(
        f"{args.workload}: gradhub {r['a'] * 1e3:.3f} ms, {args.peer} {r['b'] * 1e3:.3f} ms "
        f"per step; ratio of medians {r['ratio']:.3f}, median pair ratio "
        f"{r['pair_ratio']:.3f} ({args.pairs} pairs, {args.threads} threads, "
        f"load average {os.getloadavg()[0]:.2f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
