"""Per-kernel timings of gradhub-nn-ops' CPU convolution kernels against PyTorch, in one process.

The three kernels of the convolution family on the shapes of the W3/W4 CNN (batch 64, 3x3
kernels, pad 1, stride 1): the forward convolution (``fw``), the filter gradient
(``dw``: ``ConvolutionFilterGrad``) and the data gradient (``dx``: ``Deconvolution``), each
against ``torch.ops.aten.convolution`` / ``convolution_backward`` with the same thread count,
alternating gradhub and torch sample by sample so that both see the same background load::

    PYTHONPATH=core:plugins/nn_ops /work/main/.venv/bin/python benchmarks/conv_kernels.py
    ... benchmarks/conv_kernels.py --threads 1 --samples 60 --shapes conv1
    ... benchmarks/conv_kernels.py --threads 1 --cpu-time   # on a busy machine

Prints, per kernel, the first quartile and the median of each side in ms and the ratio of the
first quartiles. Needs torch (the integrator's venv has it); not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

SHAPES = {
    # name: (x shape, weight shape, pad)
    "conv1": ((64, 3, 32, 32), (8, 3, 3, 3), (1, 1)),
    "conv2": ((64, 8, 16, 16), (16, 8, 3, 3), (1, 1)),
}


_clock: Callable[[], float] = time.perf_counter


def _quartiles(ts: list[float]) -> tuple[float, float]:
    s = sorted(ts)
    return s[len(s) // 4] * 1e3, s[len(s) // 2] * 1e3


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--shapes", default="conv1,conv2")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument(
        "--cpu-time",
        action="store_true",
        help="time the calling thread's CPU time instead of the wall clock (with --threads 1: "
        "all the work runs in that thread; less disturbed by other processes on a busy machine)",
    )
    args = ap.parse_args(argv)
    if args.cpu_time and args.threads != 1:
        ap.error("--cpu-time needs --threads 1 (the other threads' time would not be counted)")
    global _clock
    _clock = time.thread_time if args.cpu_time else time.perf_counter
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(args.threads))
    import gradhub as gh
    import numpy as np
    from gradhub.ops import kernel

    gh.set_num_threads(args.threads)
    torch: Any = None
    if not args.no_torch:
        import torch as torch_mod

        torch = torch_mod
        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    dt = np.dtype(args.dtype)
    print(
        f"threads {args.threads}, dtype {dt}, numpy {np.__version__}"
        + ("" if torch is None else f", torch {torch.__version__}")
        + f", load {os.getloadavg()[0]:.2f}"
        + (", thread CPU time" if args.cpu_time else ", wall clock")
    )
    print(f"{'kernel':<12}{'gradhub q1/med ms':>20}{'torch q1/med ms':>20}{'ratio q1':>10}")
    for name in args.shapes.split(","):
        _one_shape(name, args.samples, dt, rng, np, gh, kernel, torch)


def _one_shape(
    name: str, samples: int, dt: Any, rng: Any, np: Any, gh: Any, kernel: Any, torch: Any
) -> None:
    xs, ws, pad = SHAPES[name]
    x = rng.standard_normal(xs).astype(dt)
    w = rng.standard_normal(ws).astype(dt)
    x_ = gh.Variable(x)
    conv = kernel("Convolution", x_)
    y = conv(np, x, w, None, pad=pad)
    dy = rng.standard_normal(y.shape).astype(dt)
    fg = kernel("ConvolutionFilterGrad", x_)
    dc = kernel("Deconvolution", x_)
    ours: dict[str, Callable[[], Any]] = {
        "fw": lambda: conv(np, x, w, None, pad=pad),
        "dw": lambda: fg(np, x, dy, ws[2:], pad=pad),
        "dx": lambda: dc(np, dy, w, None, pad=pad),
    }
    theirs: dict[str, Callable[[], Any]] = {}
    if torch is not None:
        tx, tw, tdy = (torch.from_numpy(a) for a in (x, w, dy))
        conv_t = torch.ops.aten.convolution
        bw_t = torch.ops.aten.convolution_backward
        args_t = ([1, 1], list(pad), [1, 1], False, [0, 0], 1)
        theirs = {
            "fw": lambda: conv_t(tx, tw, None, *args_t),
            "dw": lambda: bw_t(tdy, tx, tw, None, *args_t, [False, True, False]),
            "dx": lambda: bw_t(tdy, tx, tw, None, *args_t, [True, False, False]),
        }
        # the results agree (a check of the comparison, not a test)
        ref = {
            "fw": theirs["fw"]().numpy(),
            "dw": theirs["dw"]()[1].numpy(),
            "dx": theirs["dx"]()[0].numpy(),
        }
        for k, f in ours.items():
            err = float(np.abs(f() - ref[k]).max() / (np.abs(ref[k]).max() + 1e-30))
            if err > (1e-4 if dt == np.float32 else 1e-10):
                sys.exit(f"{name} {k}: gradhub and torch differ (relative {err:.2e})")
    with torch.no_grad() if torch is not None else _Null():
        for k, f in ours.items():
            g = theirs.get(k)
            for _ in range(3):
                f()
                if g is not None:
                    g()
            ta: list[float] = []
            tb: list[float] = []
            for _ in range(samples):
                t0 = _clock()
                f()
                ta.append(_clock() - t0)
                if g is not None:
                    t0 = _clock()
                    g()
                    tb.append(_clock() - t0)
            qa, ma = _quartiles(ta)
            line = f"{name + ' ' + k:<12}{qa:>10.3f}/{ma:<9.3f}"
            if tb:
                qb, mb = _quartiles(tb)
                line += f"{qb:>10.3f}/{mb:<9.3f}{qa / qb:>10.2f}"
            print(line)


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


if __name__ == "__main__":
    main()
