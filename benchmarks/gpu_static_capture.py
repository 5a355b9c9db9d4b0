"""Recorded ``backward()`` steps and nnabla's recorded static loop against the same loops run as
plans (recording off), on one GPU, in one run.

Two training loops of an MLP (784-512-10, ReLU, SoftmaxCrossEntropy, mean; batch 256, float32):

* ``compile+backward``: ``opt.zero_grad(); loss = step(x, t); opt.update()`` with a step compiled
  by ``gh.compile`` that calls ``loss.backward()`` (gradhub.optim.SGD);
* ``nnabla static``: ``x.d = batch; t.d = labels; solver.zero_grad(); loss.forward();
  loss.backward(clear_buffer=True); solver.update()`` (gradhub_compat.nnabla, Sgd).

Each loop is built twice, one run with recording on (replayed from CUDA graphs after its first
calls) and one with recording off (plans); both run the same number of warm-up steps, their
losses are checked to agree, then they are timed in alternating blocks (each block ends with a
device synchronisation; median over rounds of the mean time per step). Prints each loop's times
and the ratio recorded / plan. Not part of the test suite; it needs a GPU, CuPy and
gradhub-cuda; about 20 s::

    python benchmarks/gpu_static_capture.py [--rounds 7] [--steps 50]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def _timed(fn: Callable[[], Any], steps: int, sync: Callable[[], None]) -> float:
    sync()
    t0 = time.perf_counter()
    for _ in range(steps):
        fn()
    sync()
    return (time.perf_counter() - t0) / steps


def _with_capture(on: bool, fn: Callable[[], Any]) -> Callable[[], Any]:
    from gradhub import capture

    def run() -> Any:
        before = capture.set_enabled(on)
        try:
            return fn()
        finally:
            capture.set_enabled(before)

    run.why = getattr(fn, "why", None)  # type: ignore[attr-defined]
    return run


def _compiled_loop(cp: Any, rng: np.random.Generator, batches: list[Any]) -> Callable[[], Any]:
    import gradhub as gh
    import gradhub.functions as F
    from gradhub.optim import SGD

    shapes = [(784, 512), (512,), (512, 10), (10,)]
    p = [gh.Variable(cp.asarray(rng.standard_normal(s).astype(np.float32) * 0.05)) for s in shapes]

    def body(x: Any, t: Any) -> Any:
        h = F.relu(F.affine(x, p[0], p[1]))
        loss = F.mean(F.softmax_cross_entropy(F.affine(h, p[2], p[3]), t))
        loss.backward()
        return loss

    step = gh.compile(body)
    opt = SGD(p, lr=0.01)
    k = [0]

    def one() -> Any:
        x, t = batches[k[0] % len(batches)]
        k[0] += 1
        opt.zero_grad()
        loss = step(x, t)
        opt.update()
        return loss.d

    one.why = lambda: step.capture_refused  # type: ignore[attr-defined]
    return one


def _nnabla_loop(rng: np.random.RandomState, batches: list[Any]) -> Callable[[], Any]:
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.functions as F
    import gradhub_compat.nnabla.parametric_functions as PF
    import gradhub_compat.nnabla.solvers as S
    from gradhub_compat.nnabla.ext_utils import get_extension_context

    nn.clear_parameters()  # (the other loop's stay with its graph and solver)
    with nn.context_scope(get_extension_context("cuda")):
        x = nn.Variable((256, 784))
        t = nn.Variable((256, 1))
        h = F.relu(PF.affine(x, 512, name="fc1", rng=rng))
        loss = F.mean(F.softmax_cross_entropy(PF.affine(h, 10, name="fc2", rng=rng), t))
        solver = S.Sgd(lr=0.01)
        solver.set_parameters(nn.get_parameters())
    k = [0]

    def one() -> Any:
        xb, tb = batches[k[0] % len(batches)]
        k[0] += 1
        x.d = xb
        t.d = tb
        solver.zero_grad()
        loss.forward(clear_no_need_grad=True)
        loss.backward(clear_buffer=True)
        solver.update()
        return loss.d

    def why() -> str | None:
        from gradhub import plan

        p = plan.plan_of(loss)
        if p is None or p.recorded is None:
            return "forward not recorded: " + str(p and p.capture_refused)
        if not any(prog.recorded for prog in p.programs.values()):
            return "walk not recorded: " + str([g.capture_refused for g in p.programs.values()])
        return None

    one.why = why  # type: ignore[attr-defined]
    return one


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=50)
    args = ap.parse_args()

    import cupy as cp
    from gradhub import plan

    plan.set_enabled(True)
    sync = cp.cuda.Device().synchronize
    rng = np.random.default_rng(0)
    batches = [
        (
            cp.asarray(rng.standard_normal((256, 784)).astype(np.float32)),
            cp.asarray(rng.integers(0, 10, (256, 1))),
        )
        for _ in range(4)
    ]
    loops = {
        "compile+backward": (
            _with_capture(True, _compiled_loop(cp, np.random.default_rng(1), batches)),
            _with_capture(False, _compiled_loop(cp, np.random.default_rng(1), batches)),
        ),
        "nnabla static": (
            _with_capture(True, _nnabla_loop(np.random.RandomState(1), batches)),
            _with_capture(False, _nnabla_loop(np.random.RandomState(1), batches)),
        ),
    }
    for name, (recorded, planned) in loops.items():
        for _ in range(5):  # warm-up: both recorded by now
            a, b = recorded(), planned()
        a, b = cp.asnumpy(a), cp.asnumpy(b)
        refused = recorded.why()  # type: ignore[attr-defined]
        if refused is not None:
            print(f"{name}: NOT RECORDED ({refused})")
        assert np.allclose(a, b, rtol=1e-4), (name, a, b)
        tr, tp = [], []
        for _ in range(args.rounds):
            tr.append(_timed(recorded, args.steps, sync))
            tp.append(_timed(planned, args.steps, sync))
        mr, mp = statistics.median(tr), statistics.median(tp)
        print(
            f"{name:18s} plan {mp * 1e3:7.3f} ms   recorded {mr * 1e3:7.3f} ms   "
            f"recorded/plan {mr / mp:5.2f}"
        )


if __name__ == "__main__":
    main()
