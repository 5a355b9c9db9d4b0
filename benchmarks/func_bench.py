"""gradhub.func against torch.func and the Python loop, in one process. Not part of the test
suite. Three measurements (``--what``):

* ``per-sample``: per-sample gradients of the W2 MLP (784-1024-1024-10, relu, softmax
  cross-entropy) at batch 128 by ``gradhub.func.vmap(gradhub.func.grad(loss))``, by a Python
  loop of ``gradhub.func.grad``, and by ``torch.func.vmap(torch.func.grad(loss))``; the row
  "numpy outer products only" computes just the per-sample weight gradients' outer products
  (``a[:, :, None] * g[:, None, :]``), the output any method must write;
* ``hvp``: a Hessian-vector product of the same MLP's batch loss with respect to all its
  parameters, ``gradhub.func.hvp`` (forward over reverse: the native JVP rules pushed through
  the gradient's graph) against the same product by two more reverse passes (the transposed
  backward rules, gradhub's mechanism before native JVP rules) and against
  ``torch.func.jvp(torch.func.grad(loss))``;
* ``jvp``: a Jacobian-vector product of the same MLP's batch logits with respect to all its
  parameters, ``gradhub.func.jvp`` (native JVP rules) against two reverse passes and against
  ``torch.func.jvp``;
* ``hessian``: the full Hessian of a 203-parameter MLP (6-20-3, tanh, squared error, batch 32),
  ``gradhub.func.hessian`` (forward over reverse: the basis tangents pushed at once through the
  gradient's graph, recorded once) against ``vmap`` over the basis of ``f`` rerun with one
  tangent each (how it was computed from 2026-11-25 to 2026-11-26), against ``chunk_size=1``
  (one forward-mode pass per parameter: before 2026-11-25) and against ``torch.func.hessian``;
  then ``vmap(hessian)`` of 8 parameter vectors (per-sample curvature) against the previous
  path and ``torch.func.vmap(torch.func.hessian)``.

Each result is checked against the reference (the loop, or PyTorch), then the medians and the
ratios are printed::

    python benchmarks/func_bench.py                      # W2, batch 128
    python benchmarks/func_bench.py --batch 16 --sizes 64 32 10 --repeat 5 --what per-sample

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


def _rerunning_f(call: Any) -> Any:
    """``call()`` with jacfwd/hessian taking their path before 2026-11-26: ``f`` run again under
    vmap with the batched tangents, not the tangents pushed through one recorded graph."""
    fmod = sys.modules["gradhub.func"]
    saved = fmod._push_tangents
    fmod._push_tangents = lambda outs, xs: False
    try:
        return call()
    finally:
        fmod._push_tangents = saved


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
    ap.add_argument(
        "--what",
        nargs="+",
        default=["per-sample", "hvp", "jvp", "hessian"],
        choices=["per-sample", "hvp", "jvp", "hessian"],
    )
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

    try:
        import torch
        import torch.func as tf
    except ImportError:
        torch = tf = None
        print("torch is not installed: the torch.func columns are left out")
    else:
        torch.set_num_threads(args.threads)

    def report(title: str, results: dict[str, float]) -> None:
        base = next(iter(results.values()))
        print(title)
        for name, sec in results.items():
            print(
                f"  {name:24s} {sec * 1e3:10.1f} ms   {next(iter(results))} / this = "
                f"{base / sec:6.2f}"
            )

    def tloss_fn(ps: Any, xi: Any, ti: Any) -> Any:
        h = xi.reshape(xi.shape[0] if xi.ndim > 1 else 1, -1)
        for i in range(0, n_p, 2):
            h = h @ ps[i] + ps[i + 1]
            if i < n_p - 2:
                h = torch.relu(h)
        return torch.nn.functional.cross_entropy(h, ti.reshape(-1), reduction="sum")

    if "per-sample" in args.what:
        per_sample_bench(args, ghf, gh, np, loss, params, x, t, n_p, torch, tf, tloss_fn, report)
    if "hvp" in args.what:

        def batch_loss(*ps: Any) -> Any:
            h = xv
            for i in range(0, n_p, 2):
                h = h @ ps[i] + ps[i + 1]
                if i < n_p - 2:
                    h = F.relu(h)
            return F.softmax_cross_entropy(h, tv.reshape(-1, 1)).sum()

        xv = gh.Variable(x, need_grad=False)
        tv = gh.Variable(t.astype(np.int64), need_grad=False)
        vs = tuple(rng.standard_normal(p.shape).astype(np.float32) for p in params)

        def hvp_transposed() -> list[Any]:
            ps = [gh.Variable(p, need_grad=True) for p in params]
            gs = gh.grad([batch_loss(*ps)], ps, create_graph=True)
            return [h.d for h in transposed_jvp(gh, list(gs), ps, vs)]

        for a, b in zip(ghf.hvp(batch_loss, tuple(params), vs)[1], hvp_transposed()):
            np.testing.assert_allclose(a.d, b, rtol=2e-3, atol=2e-4)
        res = {
            "gradhub hvp": _time(
                lambda: [h.d for h in ghf.hvp(batch_loss, tuple(params), vs)[1]], args.repeat
            ),
            "gradhub hvp, transposed": _time(hvp_transposed, args.repeat),
        }
        if torch is not None:
            tps = tuple(torch.from_numpy(p) for p in params)
            tvs = tuple(torch.from_numpy(v) for v in vs)
            xt, tt = torch.from_numpy(x), torch.from_numpy(t.astype(np.int64))

            def t_hvp() -> Any:
                return tf.jvp(tf.grad(lambda ps: tloss_fn(ps, xt, tt)), (tps,), (tvs,))[1]

            for a, b in zip(ghf.hvp(batch_loss, tuple(params), vs)[1], t_hvp()):
                np.testing.assert_allclose(a.d, b.numpy(), rtol=2e-3, atol=2e-4)
            res["torch.func jvp(grad)"] = _time(t_hvp, args.repeat)
        report(f"Hessian-vector product, sizes {s}, batch {args.batch}", res)
    if "jvp" in args.what:
        jvp_bench(args, ghf, gh, F, np, rng, params, x, n_p, torch, tf, report)
    if "hessian" in args.what:
        hs = (6, 20, 3)
        hx = rng.standard_normal((32, hs[0]))
        hy = rng.standard_normal((32, hs[2]))
        shapes = [(hs[0], hs[1]), (hs[1],), (hs[1], hs[2]), (hs[2],)]
        sizes_ = [int(np.prod(sh)) for sh in shapes]
        offs = np.cumsum([0, *sizes_])
        theta = rng.standard_normal(int(offs[-1])) * 0.3

        def hloss(th: Any, tanh: Any, xx: Any, yy: Any) -> Any:
            w = [th[int(offs[k]) : int(offs[k + 1])].reshape(shapes[k]) for k in range(4)]
            h = tanh(xx @ w[0] + w[1]) @ w[2] + w[3]
            return ((h - yy) ** 2).sum()

        hxv, hyv = gh.Variable(hx, need_grad=False), gh.Variable(hy, need_grad=False)
        gfun = ghf.hessian(lambda th: hloss(th, F.tanh, hxv, hyv))
        gloop = ghf.hessian(lambda th: hloss(th, F.tanh, hxv, hyv), chunk_size=1)
        np.testing.assert_allclose(gfun(theta).d, gloop(theta).d, rtol=1e-12, atol=1e-12)

        def rerun() -> Any:  # the tangents batched with f rerun under vmap (before 2026-11-26)
            return _rerunning_f(lambda: gfun(theta).d)

        np.testing.assert_allclose(gfun(theta).d, rerun(), rtol=1e-12, atol=1e-12)
        res = {
            "gradhub hessian": _time(lambda: gfun(theta).d, args.repeat),
            "gradhub, vmap rerunning f": _time(rerun, args.repeat),
            "gradhub, chunk_size=1": _time(lambda: gloop(theta).d, args.repeat),
        }
        if torch is not None:
            hxt, hyt = torch.from_numpy(hx), torch.from_numpy(hy)
            tfun = tf.hessian(lambda th: hloss(th, torch.tanh, hxt, hyt))
            tth = torch.from_numpy(theta)
            np.testing.assert_allclose(gfun(theta).d, tfun(tth).numpy(), rtol=1e-8, atol=1e-10)
            res["torch.func hessian"] = _time(lambda: tfun(tth), args.repeat)
        report(f"full Hessian, {int(offs[-1])} parameters (MLP {hs}, batch 32, float64)", res)
        # per-sample curvature: the Hessians of 8 parameter vectors at once
        thetas = rng.standard_normal((8, int(offs[-1]))) * 0.3
        vfun = ghf.vmap(ghf.hessian(lambda th: hloss(th, F.tanh, hxv, hyv)))

        def vrerun() -> Any:
            return _rerunning_f(lambda: vfun(thetas).d)

        np.testing.assert_allclose(vfun(thetas).d, vrerun(), rtol=1e-12, atol=1e-12)
        res = {
            "gradhub vmap(hessian)": _time(lambda: vfun(thetas).d, args.repeat),
            "gradhub, vmap rerunning f": _time(vrerun, args.repeat),
        }
        if torch is not None:
            tv = tf.vmap(tf.hessian(lambda th: hloss(th, torch.tanh, hxt, hyt)))
            tths = torch.from_numpy(thetas)
            np.testing.assert_allclose(vfun(thetas).d, tv(tths).numpy(), rtol=1e-8, atol=1e-10)
            res["torch.func vmap(hessian)"] = _time(lambda: tv(tths), args.repeat)
        report(f"8 full Hessians at once, vmap(hessian), {int(offs[-1])} parameters", res)
    return 0


def transposed_jvp(gh: Any, outs: list[Any], xs: list[Any], vs: Sequence[Any]) -> list[Any]:
    """``J v`` by two reverse passes (``g(u) = J^T u``, then ``(dg/du)^T v``): how
    ``gradhub.func.jvp`` computed it before native JVP rules."""
    import numpy as np

    us = [gh.Variable(np.zeros(o.shape, o.dtype), need_grad=True) for o in outs]
    gs = gh.grad(outs, xs, us, create_graph=True)
    return gh.grad(gs, us, [gh.Variable(v) for v in vs], create_graph=True)  # type: ignore[no-any-return]


def jvp_bench(
    args: Any,
    ghf: Any,
    gh: Any,
    F: Any,
    np: Any,
    rng: Any,
    params: list[Any],
    x: Any,
    n_p: int,
    torch: Any,
    tf: Any,
    report: Any,
) -> None:
    xv = gh.Variable(x, need_grad=False)

    def logits(*ps: Any) -> Any:
        h = xv
        for i in range(0, n_p, 2):
            h = h @ ps[i] + ps[i + 1]
            if i < n_p - 2:
                h = F.relu(h)
        return h

    vs = tuple(rng.standard_normal(p.shape).astype(np.float32) for p in params)

    def native() -> Any:
        return ghf.jvp(logits, tuple(params), vs)[1].d

    def transposed() -> Any:
        ps = [gh.Variable(p, need_grad=True) for p in params]
        return transposed_jvp(gh, [logits(*ps)], ps, vs)[0].d

    np.testing.assert_allclose(native(), transposed(), rtol=1e-4, atol=1e-4)
    res = {
        "gradhub jvp": _time(native, args.repeat),
        "gradhub jvp, transposed": _time(transposed, args.repeat),
    }
    if torch is not None:
        tps = tuple(torch.from_numpy(p) for p in params)
        tvs = tuple(torch.from_numpy(v) for v in vs)
        xt = torch.from_numpy(x)

        def tlogits(ps: Any) -> Any:
            h = xt
            for i in range(0, n_p, 2):
                h = h @ ps[i] + ps[i + 1]
                if i < n_p - 2:
                    h = torch.relu(h)
            return h

        def t_jvp() -> Any:
            return tf.jvp(tlogits, (tps,), (tvs,))[1]

        np.testing.assert_allclose(native(), t_jvp().numpy(), rtol=1e-3, atol=1e-3)
        res["torch.func jvp"] = _time(t_jvp, args.repeat)
    report(f"Jacobian-vector product of the logits, sizes {args.sizes}, batch {args.batch}", res)


def per_sample_bench(
    args: Any,
    ghf: Any,
    gh: Any,
    np: Any,
    loss: Any,
    params: list[Any],
    x: Any,
    t: Any,
    n_p: int,
    torch: Any,
    tf: Any,
    tloss: Any,
    report: Any,
) -> None:
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
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)  # float32, other sum orders
    outer_a = [np.ascontiguousarray(x.reshape(args.batch, -1))] + [
        np.ones((args.batch, p.shape[1]), np.float32) for p in params[0:-2:2]
    ]
    outer_g = [np.ones((args.batch, p.shape[1]), np.float32) for p in params[0::2]]

    def outer_products() -> list[Any]:  # only the per-sample weight gradients' outer products
        return [a[:, :, None] * g[:, None, :] for a, g in zip(outer_a, outer_g)]

    results = {
        "gradhub vmap(grad)": _time(gradhub_vmap, args.repeat),
        "gradhub loop": _time(gradhub_loop, args.repeat),
        "numpy outer products only": _time(outer_products, args.repeat),
    }
    if torch is not None:
        tps = [torch.from_numpy(p) for p in params]
        tgrad = tf.vmap(tf.grad(tloss), in_dims=(None, 0, 0))
        xt, tt = torch.from_numpy(x), torch.from_numpy(t.astype(np.int64))

        def torch_vmap() -> list[Any]:
            return [g.numpy() for g in tgrad(tps, xt, tt)]

        for a, b in zip(torch_vmap(), ref):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
        results["torch.func vmap(grad)"] = _time(torch_vmap, args.repeat)
    report(f"per-sample gradients, sizes {args.sizes}, batch {args.batch}", results)


if __name__ == "__main__":
    sys.exit(main())
