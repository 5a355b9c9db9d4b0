"""The CPU kernels of W3/W4's max pooling and ReLU against PyTorch's, in one process.

Times, on the seed CNN's shapes (batch 64: ReLU and 2x2 max pooling with stride 2 on
(64, 8, 32, 32) and (64, 16, 16, 16), float32), each gradhub kernel or first-order fast rule
that the W3/W4 steps run and the PyTorch operation doing the same work, alternating the two
(median of ``--samples`` samples each, with the first and third quartiles), with ``--threads``
threads on both sides (gradhub.parallel and ``torch.set_num_threads``)::

    PYTHONPATH=core:plugins/nn_ops /work/main/.venv/bin/python benchmarks/pool_kernels.py

(the interpreter needs torch; ``PYTHONPATH`` picks the gradhub tree that is measured, so two
revisions compare by running this file twice). PyTorch's counterparts: ``relu``,
``threshold_backward`` (ReLU's backward), ``max_pool2d_with_indices`` and its backward; for
the double-backward kernels (MaxPoolingMask, MaskedUnpooling, MaskedPooling) PyTorch keeps
indices instead of a mask: its rows are the same backward (a scatter of the gradient by the
indices) and the gather ``take_along_dim`` (what its max_pool2d double backward runs). Not
part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any


def _quartiles(xs: Sequence[float]) -> tuple[float, float, float]:
    s = sorted(xs)
    n = len(s)
    return s[n // 4], s[n // 2], s[(3 * n) // 4]


def _inner(f: Callable[[], Any]) -> int:
    """Calls per sample so that a sample lasts about 2 ms."""
    t0 = time.perf_counter()
    f()
    return max(1, int(0.002 / max(time.perf_counter() - t0, 1e-7)))


def ab(a: Callable[[], Any], b: Callable[[], Any], samples: int) -> tuple[list[float], list[float]]:
    """Seconds per call of ``a`` and ``b``, ``samples`` alternating samples each."""
    for _ in range(3):
        a()
        b()
    na, nb = _inner(a), _inner(b)
    ta: list[float] = []
    tb: list[float] = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(na):
            a()
        t1 = time.perf_counter()
        for _ in range(nb):
            b()
        t2 = time.perf_counter()
        ta.append((t1 - t0) / na)
        tb.append((t2 - t1) / nb)
    return ta, tb


def cases(shape: tuple[int, ...]) -> list[tuple[str, Callable[[], Any], Callable[[], Any]]]:
    """(name, gradhub call, torch call) for one input shape."""
    import numpy as np
    import torch
    from gradhub.ops import kernel
    from gradhub_nn_ops import activations as A
    from gradhub_nn_ops import pooling as P

    rng = np.random.default_rng(0)
    pre = rng.standard_normal(shape).astype(np.float32)
    x = np.maximum(pre, 0)  # pooling's input: a ReLU's output (ties at 0)
    kw = {"kernel": (2, 2), "stride": None, "ignore_border": True, "pad": None}
    kw_all = {**kw, "channel_last": False}
    y = P._max_pooling(np, x, **kw)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    m = P._max_pooling_mask(np, x, y, **kw)
    relu_fast = A._relu_fast
    pool_fast = P._max_pooling_fast
    mask_k = kernel("MaxPoolingMask", x)
    unpool_k = kernel("MaskedUnpooling", dy)
    mpool_k = kernel("MaskedPooling", g)

    tpre, tx, tg, tdy = (torch.from_numpy(a) for a in (pre, x, g, dy))
    _, ti = torch.nn.functional.max_pool2d(tx, 2, return_indices=True)
    tr = torch.relu(tpre)
    bw = torch.ops.aten.max_pool2d_with_indices_backward
    flat_i = ti.flatten(-2)

    return [
        ("ReLU", lambda: A._relu(np, pre), lambda: torch.relu(tpre)),
        (
            "ReLU backward",
            lambda: relu_fast(np, [g], [pre], None, [x], None),
            lambda: torch.ops.aten.threshold_backward(tg, tr, 0),
        ),
        (
            "MaxPooling",
            lambda: P._max_pooling(np, x, **kw),
            lambda: torch.nn.functional.max_pool2d(tx, 2, return_indices=True),
        ),
        (
            "MaxPooling backward",
            lambda: pool_fast(np, [dy], [x], None, [y], None, **kw_all),
            lambda: bw(tdy, tx, [2, 2], [2, 2], [0, 0], [1, 1], False, ti),
        ),
        (
            "MaxPoolingMask",
            lambda: mask_k(np, x, y, **kw_all),
            lambda: torch.nn.functional.max_pool2d(tx, 2, return_indices=True),
        ),
        (
            "MaskedUnpooling",
            lambda: unpool_k(np, dy, m, **kw_all),
            lambda: bw(tdy, tx, [2, 2], [2, 2], [0, 0], [1, 1], False, ti),
        ),
        (
            "MaskedPooling",
            lambda: mpool_k(np, g, m, **kw_all),
            lambda: torch.take_along_dim(tg.flatten(-2), flat_i, dim=-1).view_as(ti),
        ),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--samples", type=int, default=21)
    args = p.parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import gradhub
    import numpy as np
    import torch

    gradhub.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"gradhub {gradhub.__file__}, numpy {np.__version__}, torch {torch.__version__}, "
        f"{args.threads} threads, load {load:.2f}\n"
    )
    print("| shape | kernel | gradhub ms (q1-q3) | torch ms (q1-q3) | gradhub / torch |")
    print("|---|---|---|---|---|")
    for shape in ((64, 8, 32, 32), (64, 16, 16, 16)):
        for name, a, b in cases(shape):
            ta, tb = ab(a, b, args.samples)
            qa, qb = _quartiles(ta), _quartiles(tb)
            print(
                f"| {shape} | {name} | {qa[1] * 1e3:.3f} ({qa[0] * 1e3:.3f}-{qa[2] * 1e3:.3f}) "
                f"| {qb[1] * 1e3:.3f} ({qb[0] * 1e3:.3f}-{qb[2] * 1e3:.3f}) | {qa[1] / qb[1]:.2f} |"
            )
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
