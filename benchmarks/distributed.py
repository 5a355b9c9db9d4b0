"""Data-parallel benchmarks of gradhub-mpi (results in docs/performance.md, model in
docs/distributed.md).

    python benchmarks/distributed.py                # everything below, launched with mpiexec
    mpiexec -n 2 python benchmarks/distributed.py allreduce
    mpiexec -n 2 python benchmarks/distributed.py sum
    mpiexec -n P python benchmarks/distributed.py weak --workload mlp|cnn [--path auto|shared|mpi]

``allreduce``: the time of ``Allreduce`` on float32 buffers of 4 KB to 32 MB on the ranks, with
the fit ``t(n) = alpha + beta * n`` (n bytes per rank). ``sum``: the ways to sum the W2 MLP's
7.45 MB of float32 gradients over the ranks, timed alone (median and quartiles over 40 calls,
each after a barrier), each as the callback does it (the copy into the bucket, the sum, the
division by the number of ranks): ``Allreduce``, ``Iallreduce`` + ``Wait``,
``Reduce_scatter_block`` + ``Allgather``, and the shared-memory window of gradhub_mpi.shared
(the copy into the rank's row, then the direct or the chunked sum), next to one copy of the
buffer. ``weak``: training steps
(forward, gradients all-reduced during backward through ``all_reduce_callback``, SGD update) of
the W2 MLP (784-1024-1024-10, batch 128 per rank) or the seed CNN (W3, batch 64x3x32x32 per
rank) with one thread per rank; the time per step and the time spent waiting for the all-reduce
at the end of backward. Without arguments: ``allreduce`` and ``sum`` on 2 ranks, then ``weak``
for both workloads on 1 rank and on 2 ranks (the communicator's path, the shared-memory window
on one host, and ``--path mpi``), alternated ``--repeats`` times, printing the medians and the
weak-scaling ratios (2-rank throughput over 1-rank throughput at the same per-rank batch) of each
round.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

THREADS = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


def allreduce(args: argparse.Namespace) -> None:
    import gradhub as gh

    comm = gh.distributed.communicator("mpi")
    rows = []
    for size in [4096 * 4**k for k in range(7)]:  # 4 KB .. 16 MB
        buf = np.ones(size // 4, dtype=np.float32)
        reps = max(3, min(200, int(2e8 // size)))
        comm.all_reduce(buf)
        comm.barrier()
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            for _ in range(reps):
                comm.all_reduce(buf)
            best = min(best, (time.perf_counter() - t) / reps)
        rows.append((size, best))
    n = np.array([r[0] for r in rows], dtype=float)
    t = np.array([r[1] for r in rows])
    beta, alpha = np.polyfit(n, t, 1)
    if comm.rank == 0:
        out = {"ranks": comm.size, "sizes": rows, "alpha_s": alpha, "beta_s_per_byte": beta}
        print(json.dumps(out), flush=True)


def sum_ways(args: argparse.Namespace) -> None:
    import gradhub as gh
    from gradhub_mpi.shared import SharedReduction, node_communicator

    comm = gh.distributed.communicator("mpi")
    MPI, c = comm.MPI, comm.comm
    p = comm.size
    n = (784 * 1024 + 1024 + 1024 * 1024 + 1024 + 1024 * 10 + 10) // p * p  # W2's gradients
    grads = np.ones(n, dtype=np.float32)
    buf = np.empty(n, dtype=np.float32)
    part = np.empty(n // p, dtype=np.float32)

    scale = np.float32(1.0 / p)

    def mpi_way(reduce: Any) -> Any:
        def way() -> None:  # as the callback: copy into the bucket, sum, divide
            np.copyto(buf, grads)
            reduce()
            np.multiply(buf, scale, out=buf)

        return way

    def rs_ag() -> None:
        c.Reduce_scatter_block(buf, part, op=MPI.SUM)
        c.Allgather(part, buf)

    ways: dict[str, Any] = {
        "copy of the buffer": lambda: np.copyto(buf, grads),
        "copy in, Allreduce, / p": mpi_way(lambda: c.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)),
        "copy in, Iallreduce + Wait, / p": mpi_way(
            lambda: c.Iallreduce(MPI.IN_PLACE, buf, op=MPI.SUM).Wait()
        ),
        "copy in, Reduce_scatter_block + Allgather, / p": mpi_way(rs_ag),
    }
    node = node_communicator(MPI, c)
    if node is not None:
        for direct in (True, False):
            red = SharedReduction(MPI, node, n, np.float32, direct=direct, sum_comm=node.Dup())

            def shared(red: Any = red) -> None:
                red.wait_free()
                np.copyto(red.row, grads)
                red.start()
                red.finish(1.0 / p)

            ways[f"shared window, {'direct' if direct else 'chunked'} (copy in, sum, / p)"] = shared
    out = {}
    for name, f in ways.items():
        for _ in range(3):
            f()
        ts = []
        for _ in range(40):
            c.Barrier()
            t0 = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t0)
        out[name] = [float(np.percentile(ts, q)) for q in (25, 50, 75)]
    if comm.rank == 0:
        print(json.dumps({"ranks": p, "bytes": n * 4, "ways": out}), flush=True)


def _model(workload: str, rng: np.random.Generator) -> tuple[Any, list[Any], Any, Any]:
    import gradhub as gh
    import gradhub.functions as F

    def var(a: np.ndarray, need: bool) -> Any:
        return gh.Variable(a.astype(np.float32), need_grad=need)

    if workload == "mlp":
        sizes = [784, 1024, 1024, 10]
        ps = []
        for i, o in itertools.pairwise(sizes):
            ps += [var(rng.standard_normal((i, o)) / np.sqrt(i), True), var(np.zeros(o), True)]
        x = var(rng.standard_normal((128, 784)), False)
        t = gh.Variable(rng.integers(0, 10, (128, 1)), need_grad=False)

        def loss_fn() -> Any:
            h = x
            for k in range(3):
                h = F.affine(h, ps[2 * k], ps[2 * k + 1])
                if k < 2:
                    h = F.relu(h)
            return F.mean(F.softmax_cross_entropy(h, t))

        return loss_fn, ps, x, t
    shapes = [(8, 3, 3, 3), (8,), (16, 8, 3, 3), (16,), (1024, 10), (10,)]
    ps = [var(rng.standard_normal(s) * 0.1, True) for s in shapes]
    x = var(rng.standard_normal((64, 3, 32, 32)), False)
    t = gh.Variable(rng.integers(0, 10, (64, 1)), need_grad=False)

    def loss_cnn() -> Any:
        h = F.max_pooling(F.relu(F.convolution(x, ps[0], ps[1], pad=(1, 1))), (2, 2))
        h = F.max_pooling(F.relu(F.convolution(h, ps[2], ps[3], pad=(1, 1))), (2, 2))
        return F.mean(F.softmax_cross_entropy(F.affine(h, ps[4], ps[5]), t))

    return loss_cnn, ps, x, t


def weak(args: argparse.Namespace) -> None:
    import gradhub as gh

    world = gh.distributed.communicator("mpi")
    comm = world
    if args.independent:  # every rank alone (COMM_SELF): the same work with no communication
        comm = gh.distributed.communicator("mpi", comm=world.MPI.COMM_SELF)
    loss_fn, ps, _, _ = _model(args.workload, np.random.default_rng(world.rank))
    comm.bcast(ps)
    shared = {"auto": None, "shared": True, "mpi": False}[args.path]
    cb = comm.all_reduce_callback(ps, pack_size=args.pack_size, division=True, shared_memory=shared)
    times, waits = [], []
    for k in range(args.warmup + args.steps):
        world.barrier()
        t0 = time.perf_counter()
        loss = loss_fn()
        grads = gh.grad(
            [loss], ps, create_graph=False, retain_graph=False, communicator_callbacks=cb
        )
        for p, g in zip(ps, grads):
            p.d -= 0.01 * g.d
        if k >= args.warmup:
            times.append(time.perf_counter() - t0)
            waits.append(cb.wait_seconds)
    nbytes = int(sum(p.size * 4 for p in ps))
    if world.rank == 0:
        print(
            json.dumps(
                {
                    "workload": args.workload,
                    "ranks": world.size,
                    "step_s": float(np.median(times)),
                    "wait_s": float(np.median(waits)),
                    "grad_bytes": nbytes,
                }
            ),
            flush=True,
        )


def _launch(n: int, *argv: str) -> dict[str, Any]:
    exe = Path(sys.executable).parent / "mpiexec"
    cmd = [str(exe) if exe.exists() else "mpiexec", "-n", str(n), sys.executable, __file__, *argv]
    env = dict(os.environ, **THREADS)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True, timeout=600)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def driver(args: argparse.Namespace) -> None:
    ar = _launch(2, "allreduce")
    print(
        f"allreduce, 2 ranks: alpha {ar['alpha_s'] * 1e6:.1f} us, beta "
        f"{ar['beta_s_per_byte'] * 1e9:.3f} ns/byte "
        f"({1 / ar['beta_s_per_byte'] / 1e9:.2f} GB/s)"
    )
    for size, t in ar["sizes"]:
        print(f"  {size / 1024:>8.0f} KB  {t * 1e6:9.1f} us")
    sw = _launch(2, "sum")
    print(f"sum of {sw['bytes'] / 1e6:.2f} MB of float32 over 2 ranks, ms (quartiles):")
    for name, (q1, q2, q3) in sw["ways"].items():
        print(f"  {name:<52} {q2 * 1e3:6.2f}  ({q1 * 1e3:.2f}-{q3 * 1e3:.2f})")
    extra = [] if args.pack_size is None else ["--pack-size", str(args.pack_size)]
    cells = {"1 rank": (1, []), "2 ranks": (2, []), "2 ranks, --path mpi": (2, ["--path", "mpi"])}
    for workload in ("mlp", "cnn"):
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in cells}
        for _ in range(args.repeats):
            for name, (n, more) in cells.items():
                argv = ["weak", "--workload", workload, "--steps", str(args.steps), *more, *extra]
                runs[name].append(_launch(n, *argv))
        one = runs["1 rank"]
        print(f"{workload} (gradients {one[0]['grad_bytes'] / 1e6:.2f} MB):")
        for name, rs in runs.items():
            step = float(np.median([r["step_s"] for r in rs]))
            wait = float(np.median([r["wait_s"] for r in rs]))
            line = f"  {name:<20} {step * 1e3:6.1f} ms/step (waiting {wait * 1e3:.2f} ms)"
            if name != "1 rank":
                ratios = sorted(2 * a["step_s"] / b["step_s"] for a, b in zip(one, rs))
                line += f", throughput x{float(np.median(ratios)):.2f} (rounds: " + (
                    " ".join(f"{x:.2f}" for x in ratios) + ")"
                )
            print(line, flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", nargs="?", default="all", choices=("all", "allreduce", "sum", "weak"))
    p.add_argument("--workload", default="mlp", choices=("mlp", "cnn"))
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument(
        "--independent",
        action="store_true",
        help="weak: each rank all-reduces over itself alone (no communication between ranks)",
    )
    p.add_argument(
        "--path",
        default="auto",
        choices=("auto", "shared", "mpi"),
        help="weak: sum the buckets through shared-memory windows, MPI_Iallreduce, or the "
        "communicator's choice (auto)",
    )
    p.add_argument("--pack-size", type=int, default=None, help="values per bucket (default: 25 MB)")
    args = p.parse_args()
    modes = {"all": driver, "allreduce": allreduce, "sum": sum_ways, "weak": weak}
    modes[args.mode](args)


if __name__ == "__main__":
    main()
