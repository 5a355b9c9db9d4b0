"""Batch and layer normalization's forward and backward pass against PyTorch's, in one run.

One training step (forward, then backward with a fixed incoming gradient) of
``F.batch_normalization`` on an NCHW float32 batch against ``torch.nn.BatchNorm2d``, and of
``F.layer_normalization`` over the last axis (with gamma and beta) against
``torch.nn.LayerNorm``, on the same data with the same number of threads, the steps interleaved
so that both see the same background load::

    python benchmarks/normalization.py                          # both, 15 rounds
    python benchmarks/normalization.py --kind batch --shape 32 128 16 16 --rounds 31
    python benchmarks/normalization.py --kind layer --shape 64 128 512 --threads 1

Default shapes: (64, 64, 32, 32) for batch normalization, (64, 128, 512) for layer
normalization. Prints the median time of each and the ratio gradhub / torch, and checks that
both give the same output and input gradient (float32, within 1e-4). Needs gradhub-nn-ops and
torch. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import gradhub as gh
import numpy as np

F = gh.functions


def _steps(
    kind: str, shape: tuple[int, ...]
) -> tuple[Callable[[], np.ndarray], Callable[[], np.ndarray]]:
    import torch

    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    if kind == "batch":
        c = shape[1]
        pshape = (1, c) + (1,) * (len(shape) - 2)
    else:
        c = shape[-1]
        pshape = (1,) * (len(shape) - 1) + (c,)
    beta = gh.Variable(np.zeros(pshape, np.float32), need_grad=True)
    gamma = gh.Variable(np.ones(pshape, np.float32), need_grad=True)

    def ours() -> np.ndarray:
        xv = gh.Variable(x, need_grad=True)
        if kind == "batch":
            mean, var = np.zeros(pshape, np.float32), np.ones(pshape, np.float32)
            y = F.batch_normalization(xv, beta, gamma, mean, var)
        else:
            y = F.layer_normalization(xv, beta, gamma, batch_axis=tuple(range(len(shape) - 1)))
        y.backward(g)
        return np.stack([y.d, xv.g])

    xt = torch.tensor(x, requires_grad=True)
    gt = torch.tensor(g)
    if kind == "batch":
        norm = torch.nn.BatchNorm2d(c) if len(shape) == 4 else torch.nn.BatchNorm1d(c)
    else:
        norm = torch.nn.LayerNorm(c)

    def theirs() -> np.ndarray:
        xt.grad = None
        norm.zero_grad()
        y = norm(xt)
        y.backward(gt)
        return np.stack([y.detach().numpy(), xt.grad.numpy()])

    return ours, theirs


def _run(kind: str, shape: tuple[int, ...], rounds: int, threads: int) -> None:
    import torch

    ours, theirs = _steps(kind, shape)
    diff = float(np.max(np.abs(ours() - theirs())))
    assert diff < 1e-4, f"outputs differ from PyTorch's by {diff}"
    times: dict[str, list[float]] = {"gradhub": [], "torch": []}
    for _ in range(3):
        ours(), theirs()
    for _ in range(rounds):
        for name, step in (("gradhub", ours), ("torch", theirs)):
            t0 = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    print(
        f"{kind} normalization {shape} float32, forward + backward, {threads} thread(s): "
        f"gradhub {med['gradhub']:.2f} ms, torch {torch.__version__} {med['torch']:.2f} ms, "
        f"ratio {med['gradhub'] / med['torch']:.2f} (max difference {diff:.1e})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kind", choices=("batch", "layer", "both"), default="both")
    ap.add_argument("--shape", type=int, nargs="+", default=None)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    gh.set_num_threads(args.threads)
    defaults = {"batch": (64, 64, 32, 32), "layer": (64, 128, 512)}
    for kind in ("batch", "layer") if args.kind == "both" else (args.kind,):
        shape = tuple(args.shape) if args.shape else defaults[kind]
        _run(kind, shape, args.rounds, args.threads)


if __name__ == "__main__":
    main()
