"""gradhub.parallel's OpenBLAS control on and off, in one process: step time and CPU per step.

While gradhub's thread pool exists, numpy's OpenBLAS runs on one thread (see
:mod:`gradhub.parallel`): OpenBLAS's idle threads spin for about 0.1 s after each multithreaded
product and take the cores of the pool's threads. This alternates blocks of steps with the
control on and off (``gradhub.parallel.set_blas_control``), each block after 0.2 s of untimed
steps so that the threads spinning since the other setting have gone to sleep, and prints the
median step of each side, the median and quartiles of the per-round ratios (on / off), and the
CPU time of the whole process per step (all its threads, from ``/proc/self/task/*/schedstat``;
Linux), which the other processes on the machine do not change::

    python benchmarks/blas_threads.py cnn
    python benchmarks/blas_threads.py grad_penalty --rounds 12
    python benchmarks/blas_threads.py cnn:static --threads 2

``benchmarks/ab.py --baseline`` cannot show this change: the baseline's child process keeps its
OpenBLAS thread spinning after its samples, during this process's samples. Not part of the test
suite.
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


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def process_cpu_ns() -> int:
    """CPU time so far of all this process's threads (ns; 0 where /proc is missing)."""
    total = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 0
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:  # a thread that has just ended
            continue
    return total


def on_off(step: Callable[[], Any], rounds: int, block: int = 10) -> dict[str, Any]:
    """Alternating blocks of ``block`` steps with the control on and off (order swapped every
    round); per side the median step (s) of each block and the process CPU per step (s)."""
    from gradhub import parallel

    before = parallel.get_blas_control()
    out: dict[str, Any] = {"on": [], "off": [], "cpu_on": [], "cpu_off": []}
    try:
        for r in range(rounds):
            for on in (True, False) if r % 2 == 0 else (False, True):
                parallel.set_blas_control(on)
                t0 = time.perf_counter()
                while time.perf_counter() - t0 < 0.2:
                    step()
                ts = []
                c0 = process_cpu_ns()
                for _ in range(block):
                    t = time.perf_counter()
                    step()
                    ts.append(time.perf_counter() - t)
                key = "on" if on else "off"
                out["cpu_" + key].append((process_cpu_ns() - c0) / block * 1e-9)
                out[key].append(_median(ts))
    finally:
        parallel.set_blas_control(before)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload", help="cnn, grad_penalty, cnn:static, ...")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--peers", default=None, help="peer harness folder")
    args = ap.parse_args(argv)
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GRADHUB_NUM_THREADS"):
        os.environ[v] = str(args.threads)
    sys.path.insert(0, str(HERE))
    from run import find_peers

    sys.path.insert(0, str(find_peers(args.peers)))
    import fw_gradhub
    import harness

    workload, _, variant = args.workload.partition(":")
    params = harness.workload_params(workload)
    if variant:
        params = dict(params, variant=variant)
    step = fw_gradhub.make(workload, params)
    for _ in range(5):
        step()
    r = on_off(step, args.rounds)
    ratios = sorted(a / b for a, b in zip(r["on"], r["off"]))
    q1, q3 = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
    print(
        f"{args.workload}: control on {_median(r['on']) * 1e3:.2f} ms, off "
        f"{_median(r['off']) * 1e3:.2f} ms per step; on/off per round {_median(ratios):.3f} "
        f"(quartiles {q1:.3f}-{q3:.3f}, {args.rounds} rounds of 10 steps, {args.threads} "
        f"threads, load average {os.getloadavg()[0]:.2f}); process CPU per step on "
        f"{_median(r['cpu_on']) * 1e3:.1f} ms, off {_median(r['cpu_off']) * 1e3:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
