"""Interleaved in-process A/B timing of gradhub against one peer, for work on the hot paths.

The suite (``benchmarks/run.py``) measures each framework in its own fresh process, which is the
fair comparison but sensitive to what else the machine runs at that moment. While optimizing, a
tighter ratio comes from running both steps in one process, alternating A, B, A, B, so that both
see the same background load::

    python benchmarks/ab.py mlp                    # gradhub vs numpy-manual (W2)
    python benchmarks/ab.py tiny_ops --peer torch  # gradhub vs torch (W1)
    python benchmarks/ab.py deep_mlp_mem --pairs 10
    python benchmarks/ab.py tiny_ops:static --baseline BASE/.venv/bin/python  # two revisions

With ``--baseline PYTHON`` the other side is gradhub from that interpreter's installs (another
revision), run by this file in a child process that times its samples when told to, alternating
with this process's samples; ``WORKLOAD:static`` times the ``gradhub-static`` step (``gh.compile``).

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
import subprocess
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


class _Child:
    """A step timed in another interpreter: ``calls(n)`` runs it ``n`` times there and returns
    the seconds taken (measured there)."""

    def __init__(self, python: str, workload: str, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            [python, str(Path(__file__).resolve()), workload, "--worker", *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        if self._ask("0") is None:
            raise RuntimeError(f"ab.py: the baseline interpreter {python} could not run the step")

    def _ask(self, line: str) -> float | None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        out = self.proc.stdout.readline()
        return float(out) if out.strip() else None

    def calls(self, n: int) -> float:
        t = self._ask(str(n))
        if t is None:
            raise RuntimeError("ab.py: the baseline child stopped")
        return t

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _worker(step: Callable[[], Any]) -> int:
    """The child's loop: a number n on stdin, n calls, their seconds on stdout."""
    for line in sys.stdin:
        n = int(line)
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        print(time.perf_counter() - t0 if n else 0.0, flush=True)
    return 0


def ab_children(a: _Child, b: _Child, pairs: int) -> dict[str, float]:
    """As :func:`ab`, each side the step of a child process (both in the same conditions)."""
    a.calls(3)
    b.calls(3)
    na = max(1, int(0.005 / max(a.calls(1), 1e-7)))
    nb = max(1, int(0.005 / max(b.calls(1), 1e-7)))
    ta: list[float] = []
    tb: list[float] = []
    for _ in range(pairs):
        ta.append(a.calls(na) / na)
        tb.append(b.calls(nb) / nb)
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
    ap.add_argument(
        "--baseline",
        default=None,
        metavar="PYTHON",
        help="the other side: gradhub from this interpreter's installs (another revision)",
    )
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
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

    workload, _, variant = args.workload.partition(":")
    params = harness.workload_params(workload)
    ours = dict(params, variant=variant) if variant else params
    if args.worker:
        return _worker(fw_gradhub.make(workload, ours))
    if args.baseline:  # both sides in child processes, this interpreter's and the baseline's
        more = ["--threads", str(args.threads)] + (["--peers", args.peers] if args.peers else [])
        sides = [_Child(py, args.workload, more) for py in (sys.executable, args.baseline)]
        try:
            r = ab_children(sides[0], sides[1], args.pairs)
        finally:
            for c in sides:
                c.close()
        other = "baseline"
    else:
        a = fw_gradhub.make(workload, ours)
        peer = importlib.import_module(PEER_MODULES[args.peer])
        for name, mod in (("gradhub", fw_gradhub), (args.peer, peer)):
            ok, why = mod.available()
            if not ok:
                print(f"ab.py: {name} is not usable here: {why}", file=sys.stderr)
                return 2
        r = ab(a, peer.make(workload, params), args.pairs)
        other = args.peer
    print(
        f"{args.workload}: gradhub {r['a'] * 1e3:.3f} ms, {other} {r['b'] * 1e3:.3f} ms "
        f"per step; ratio of medians {r['ratio']:.3f}, median pair ratio "
        f"{r['pair_ratio']:.3f} ({args.pairs} pairs, {args.threads} threads, "
        f"load average {os.getloadavg()[0]:.2f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
