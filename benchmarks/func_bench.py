"""Per-sample gradients of the W2 MLP (784-1024-1024-10, relu, softmax cross-entropy) at batch
128, three ways, in one process: ``gradhub.func.vmap(gradhub.func.grad(loss))``, a Python loop
of ``gradhub.func.grad`` over the samples, and ``torch.func.vmap(torch.func.grad(loss))`` (when
PyTorch is installed). Each result is checked against the loop, then the medians and their
ratios are printed. Not part of the test suite::

    python benchmarks/func_bench.py                      # W2, batch 128
    python benchmarks/func_bench.py --batch 16 --sizes 64 32 10 --repeat 5

Threads are pinned (``--threads``, default 2) before numpy or torch is imported.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def _time(step: Callable[[], Any], repeat: int) -> float:
    step()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return _median(times)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--sizes", type=int, nargs="+", default=[784, 1024, 1024, 10])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)

    import gradhub as gh
    import gradhub.func as ghf
    import gradhub.functions as F
    import numpy as np

    rng = np.random.default_rng(0)
    s = args.sizes
    x = rng.standard_normal((args.batch, s[0])).astype(np.float32)
    t = rng.integers(0, s[-1], args.batch)
    params = []
    for i in range(len(s) - 1):
        params.append((rng.standard_normal((s[i], s[i + 1])) * np.sqrt(2 / s[i])).astype("f4"))
        params.append(np.zeros(s[i + 1], dtype=np.float32))
    n_p = len(params)

    def loss(*args: Any) -> Any:
        *ps, xi, ti = args
        h = xi.reshape(1, -1)
        for i in range(0, n_p, 2):
            h = h @ ps[i] + ps[i + 1]
            if i < n_p - 2:
                h = F.relu(h)
        return F.softmax_cross_entropy(h, ti.reshape(1, 1)).sum()

    argnums = tuple(range(n_p))
    xv = gh.Variable(x, need_grad=False)
    tv = gh.Variable(t.astype(np.int64), need_grad=False)
    per_sample = ghf.vmap(ghf.grad(loss, argnums=argnums), in_axes=(None,) * n_p + (0, 0))

    def gradhub_vmap() -> list[Any]:
        return [g.d for g in per_sample(*params, xv, tv)]

    def gradhub_loop() -> list[Any]:
        rows = [ghf.grad(loss, argnums=argnums)(*params, xv[i], tv[i]) for i in range(args.batch)]
        return [np.stack([r[k].d for r in rows]) for k in range(n_p)]

    ref = gradhub_loop()
    for a, b in zip(gradhub_vmap(), ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    results = {
        "gradhub vmap(grad)": _time(gradhub_vmap, args.repeat),
        "gradhub loop": _time(gradhub_loop, args.repeat),
    }
    try:
        import torch
        import torch.func as tf
    except ImportError:
        print("torch is not installed: torch.func.vmap left out")
    else:
        torch.set_num_threads(args.threads)
        tps = [torch.from_numpy(p) for p in params]

        def tloss(ps: Any, xi: Any, ti: Any) -> Any:
            h = xi.reshape(1, -1)
            for i in range(0, n_p, 2):
                h = h @ ps[i] + ps[i + 1]
                if i < n_p - 2:
                    h = torch.relu(h)
            return torch.nn.functional.cross_entropy(h, ti.reshape(1), reduction="sum")

        tgrad = tf.vmap(tf.grad(tloss), in_dims=(None, 0, 0))
        xt, tt = torch.from_numpy(x), torch.from_numpy(t.astype(np.int64))

        def torch_vmap() -> list[Any]:
            return [g.numpy() for g in tgrad(tps, xt, tt)]

        for a, b in zip(torch_vmap(), ref):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
        results["torch.func vmap(grad)"] = _time(torch_vmap, args.repeat)
    base = results["gradhub vmap(grad)"]
    print(f"per-sample gradients, sizes {s}, batch {args.batch}, median of {args.repeat}")
    for name, sec in results.items():
        print(f"  {name:24s} {sec * 1e3:10.1f} ms   gradhub vmap / this = {base / sec:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
