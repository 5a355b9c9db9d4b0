"""The CPU kernels of W3/W4's max pooling and ReLU against PyTorch's, in one process.

Times, on the seed CNN's shapes (batch 64: ReLU and 2x2 max pooling with stride 2 on
(64, 8, 32, 32) and (64, 16, 16, 16), float32), each gradhub kernel or first-order fast rule
that the W3/W4 steps run and the PyTorch operation doing the same work, taken in turn
(median of ``--samples`` samples each, with the first and third quartiles), with ``--threads``
threads on both sides (gradhub.parallel and ``torch.set_num_threads``)::

    PYTHONPATH=core:plugins/nn_ops /work/main/.venv/bin/python benchmarks/pool_kernels.py

(the interpreter needs torch; ``PYTHONPATH`` picks the gradhub tree that is measured;
``--baseline TREE`` adds the kernels of another checkout, imported from its files under another
package name, as a column in the same process). PyTorch's counterparts: ``relu``,
``threshold_backward`` (ReLU's backward), ``max_pool2d_with_indices`` and its backward; for
the double-backward kernels (MaxPoolingMask, MaskedUnpooling, MaskedPooling) PyTorch keeps
indices instead of a mask: its rows are the same forward (the indices), the same backward (a
scatter of the gradient by the indices) and the gather ``take_along_dim`` (what its max_pool2d
double backward runs). MaxPoolingBackward and MaxPoolingGather (the kernels without the forward's
output, which find the first maxima from ``x`` alone) have as PyTorch's rows the indices from
``max_pool2d`` followed by that scatter or gather. Not part of the test suite.
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


def interleaved(fs: Sequence[Callable[[], Any]], samples: int) -> list[list[float]]:
    """Seconds per call of each of ``fs``, ``samples`` samples each, taken in turn, each
    sample's turn starting at the next function: the call after PyTorch's (which leaves other
    data in the caches) is not always the same one."""
    for _ in range(3):
        for f in fs:
            f()
    inner = [_inner(f) for f in fs]
    times: list[list[float]] = [[] for _ in fs]
    k = len(fs)
    for s in range(samples):
        for j in range(k):
            i = (s + j) % k
            f, n = fs[i], inner[i]
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            times[i].append((time.perf_counter() - t0) / n)
    return times


def load_modules(tree: str | None) -> tuple[Any, Any]:
    """gradhub-nn-ops' activations and pooling modules: this interpreter's, or with ``tree`` the
    ones of another checkout, imported as the package ``gradhub_nn_ops_baseline`` (importing
    them registers nothing; they share this interpreter's gradhub core)."""
    if tree is None:
        from gradhub_nn_ops import activations, pooling

        return activations, pooling
    import importlib
    import importlib.util

    root = os.path.join(tree, "plugins", "nn_ops", "gradhub_nn_ops")
    name = "gradhub_nn_ops_baseline"
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(root, "__init__.py"), submodule_search_locations=[root]
    )
    assert spec is not None and spec.loader is not None
    pkg = importlib.util.module_from_spec(spec)
    sys.modules[name] = pkg
    spec.loader.exec_module(pkg)
    return (
        importlib.import_module(name + ".activations"),
        importlib.import_module(name + ".pooling"),
    )


def cases(
    shape: tuple[int, ...], mods: Sequence[tuple[Any, Any]]
) -> list[tuple[str, list[Callable[[], Any]]]]:
    """(name, [one call per (activations, pooling) pair of ``mods``, then torch's]) for one
    input shape."""
    import numpy as np
    import torch

    rng = np.random.default_rng(0)
    pre = rng.standard_normal(shape).astype(np.float32)
    x = np.maximum(pre, 0)  # pooling's input: a ReLU's output (ties at 0)
    kw = {"kernel": (2, 2), "stride": None, "ignore_border": True, "pad": None}
    kw_all = {**kw, "channel_last": False}
    first = mods[0][1]
    y = first._max_pooling(np, x, **kw)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    m = first._max_pooling_mask(np, x, y, **kw)

    tpre, tx, tg, tdy = (torch.from_numpy(a) for a in (pre, x, g, dy))
    _, ti = torch.nn.functional.max_pool2d(tx, 2, return_indices=True)
    tr = torch.relu(tpre)
    bw = torch.ops.aten.max_pool2d_with_indices_backward
    flat_i = ti.flatten(-2)

    def _indices(t: Any) -> Any:
        return torch.nn.functional.max_pool2d(t, 2, return_indices=True)[1]

    def ours(name: str, A: Any, P: Any) -> Callable[[], Any]:
        calls: dict[str, Callable[[], Any]] = {
            "ReLU": lambda: A._relu(np, pre),
            "ReLU backward": lambda: A._relu_fast(np, [g], [pre], None, [x], None),
            "MaxPooling": lambda: P._max_pooling(np, x, **kw),
            "MaxPooling backward": lambda: P._max_pooling_fast(
                np, [dy], [x], None, [y], None, **kw_all
            ),
            "MaxPoolingMask": lambda: P._max_pooling_mask(np, x, y, **kw),
            "MaskedUnpooling": lambda: P._masked_unpooling(np, dy, m, **kw),
            "MaskedPooling": lambda: P._masked_pooling(np, g, m, **kw),
            "MaxPoolingBackward": lambda: P._max_pooling_backward(np, dy, x, **kw),
            "MaxPoolingGather": lambda: P._max_pooling_gather(np, g, x, **kw),
        }
        return calls[name]

    theirs: dict[str, Callable[[], Any]] = {
        "ReLU": lambda: torch.relu(tpre),
        "ReLU backward": lambda: torch.ops.aten.threshold_backward(tg, tr, 0),
        "MaxPooling": lambda: torch.nn.functional.max_pool2d(tx, 2, return_indices=True),
        "MaxPooling backward": lambda: bw(tdy, tx, [2, 2], [2, 2], [0, 0], [1, 1], False, ti),
        "MaxPoolingMask": lambda: torch.nn.functional.max_pool2d(tx, 2, return_indices=True),
        "MaskedUnpooling": lambda: bw(tdy, tx, [2, 2], [2, 2], [0, 0], [1, 1], False, ti),
        "MaskedPooling": lambda: torch.take_along_dim(tg.flatten(-2), flat_i, dim=-1).view_as(ti),
        "MaxPoolingBackward": lambda: bw(
            tdy, tx, [2, 2], [2, 2], [0, 0], [1, 1], False, _indices(tx)
        ),
        "MaxPoolingGather": lambda: torch.take_along_dim(
            tg.flatten(-2), _indices(tx).flatten(-2), dim=-1
        ),
    }
    return [(name, [ours(name, A, P) for A, P in mods] + [t]) for name, t in theirs.items()]


def _cell(ts: Sequence[float]) -> str:
    q1, q2, q3 = _quartiles(ts)
    return f"{q2 * 1e3:.3f} ({q1 * 1e3:.3f}-{q3 * 1e3:.3f})"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--samples", type=int, default=21)
    p.add_argument(
        "--baseline",
        metavar="TREE",
        help="a checkout of another revision: its kernels as another column, in the same process",
    )
    args = p.parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import gradhub
    import numpy as np
    import torch

    gradhub.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    mods = [load_modules(None)]
    if args.baseline:
        mods.append(load_modules(args.baseline))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"gradhub {gradhub.__file__}, numpy {np.__version__}, torch {torch.__version__}, "
        f"{args.threads} threads, load {load:.2f}; ms per call: median (first-third quartile)\n"
    )
    cols = ["shape", "kernel", "gradhub"]
    if args.baseline:
        cols += ["baseline", "gradhub / baseline"]
    cols += ["torch", "gradhub / torch"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for shape in ((64, 8, 32, 32), (64, 16, 16, 16)):
        for name, fs in cases(shape, mods):
            times = interleaved(fs, args.samples)
            med = [_quartiles(ts)[1] for ts in times]
            row = [str(shape), name, _cell(times[0])]
            if args.baseline:
                row += [_cell(times[1]), f"{med[0] / med[1]:.2f}"]
            row += [_cell(times[-1]), f"{med[0] / med[-1]:.2f}"]
            print("| " + " | ".join(row) + " |")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
