"""gradhub on ``cuda`` against PyTorch CUDA (eager), in one process, at a chosen batch size.

Issue 6's goal is stated at batch 256 for the seed CNN (W3), the MLP (W2) and the gradient
penalty (W4), where the peer harness fixes W2 at 128 and W3/W4 at 64. This script builds the
same steps as the harness's adapters (``benchmarks/fw_gradhub.py`` and
``benchmarks/fw_torch_cuda.py``, from the harness's seeded data with the batch replaced), checks
that every output (loss and every gradient) matches PyTorch's with the harness's rule
(``|a - r| <= rtol * (|r| + max|r|)``, rtol 1e-3), then times both in alternating blocks (each
step ends with a device synchronisation) and reports the median over rounds of the mean step
time::

    python benchmarks/gpu_compare.py --batch 256                 # W2 W3 W4 W5
    python benchmarks/gpu_compare.py --workloads mlp --batch 512 --rounds 9
    python benchmarks/gpu_compare.py --profile prof.txt          # + cProfile of gradhub's steps
    python benchmarks/gpu_compare.py --profile p.txt --gpu-activity   # + kernels and copies
    python benchmarks/gpu_compare.py --variant static    # gradhub through gh.compile

PyTorch runs with TF32 off (``allow_tf32 = False`` for cuBLAS and cuDNN), so that both sides
compute in float32; PyTorch's default uses TF32 for its convolutions. Not part of the test suite;
it needs a GPU, CuPy, gradhub-cuda and a CUDA build of PyTorch.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORKLOADS = ("mlp", "cnn", "grad_penalty", "nth_sin")
BATCHED = ("mlp", "cnn", "grad_penalty")
GOAL = 1.25  # issue 6: within 1.25x of PyTorch CUDA at batch 256 (W2, W3, W4)


def _setup(peers: str | None, device: str) -> Any:
    os.environ["BENCH_DEVICE"] = device
    sys.path.insert(0, str(HERE))
    from run import find_peers

    sys.path.insert(0, str(find_peers(peers)))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    import harness  # pins the CPU libraries' threads, and hides the GPUs (for its children)

    if visible is None:
        os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    else:
        os.environ["CUDA_VISIBLE_DEVICES"] = visible
    return harness


def _mismatch(ours: Sequence[Any], ref: Sequence[Any], rtol: float) -> tuple[float, str]:
    """(largest relative error, description of mismatching arrays) with the harness's rule."""
    import numpy as np

    if len(ours) != len(ref):
        return float("inf"), f"{len(ours)} arrays vs {len(ref)}"
    worst, bad = 0.0, []
    for i, (u, v) in enumerate(zip(ours, ref)):
        u, v = np.asarray(u, np.float64), np.asarray(v, np.float64)
        if u.size == 1 and v.size == 1:
            u, v = u.reshape(()), v.reshape(())
        if u.shape != v.shape:
            bad.append(f"#{i} shape {u.shape} vs {v.shape}")
            continue
        scale = float(np.max(np.abs(v))) if v.size else 0.0
        err = np.abs(u - v)
        rel = float(np.max(err)) / scale if scale > 0 else float(np.max(err))
        worst = max(worst, rel)
        if not np.all(err <= rtol * (np.abs(v) + scale)):
            bad.append(f"#{i} max_rel={rel:.2e}")
    return worst, "; ".join(bad)


def _block(step: Callable[[], Any], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    return (time.perf_counter() - t0) / n


def compare(
    harness: Any,
    workload: str,
    batch: int,
    rounds: int,
    block_s: float,
    rtol: float,
    device: str = "cuda",
    variant: str = "eager",
) -> dict[str, Any]:
    """Check and time one workload; returns a row of the report."""
    import fw_gradhub

    if device == "cuda":
        import fw_torch_cuda as fw_ref
    else:  # a dry run of this script on the CPU, against PyTorch CPU
        import fw_torch as fw_ref

    if workload in BATCHED:
        harness.WORKLOADS[workload]["batch"] = batch
    params = harness.workload_params(workload)
    ours = fw_gradhub.make(workload, {**params, "variant": variant})
    ref = fw_ref.make(workload, params)
    worst, bad = _mismatch(fw_gradhub.to_numpy(ours()), fw_ref.to_numpy(ref()), rtol)
    for _ in range(3):  # warm-up: CuPy compiles its kernels, cuBLAS/cuDNN pick algorithms
        ours()
        ref()
    # again after the warm-up: a static step is replayed by now (as a CUDA graph on cuda)
    worst2, bad2 = _mismatch(fw_gradhub.to_numpy(ours()), fw_ref.to_numpy(ref()), rtol)
    worst, bad = max(worst, worst2), "; ".join(b for b in (bad, bad2 and f"replayed: {bad2}") if b)
    n = {
        k: max(1, int(block_s / max(_block(f, 2), 1e-6))) for k, f in (("ours", ours), ("ref", ref))
    }
    times: dict[str, list[float]] = {"ours": [], "ref": []}
    for _ in range(rounds):
        times["ours"].append(_block(ours, n["ours"]))
        times["ref"].append(_block(ref, n["ref"]))
    t_ours, t_ref = statistics.median(times["ours"]), statistics.median(times["ref"])
    return {
        "workload": workload,
        "id": harness.WORKLOADS[workload]["id"],
        "batch": harness.WORKLOADS[workload].get("batch", "-"),
        "ours_ms": t_ours * 1e3,
        "ref_ms": t_ref * 1e3,
        "ratio": t_ours / t_ref,
        "spread": (min(times["ours"]) / max(times["ref"]), max(times["ours"]) / min(times["ref"])),
        "max_rel": worst,
        "match": not bad,
        "detail": bad,
        "step": ours,
        "ref": ref,
    }


def profile(step: Callable[[], Any], n: int, top: int) -> str:
    """cProfile of ``n`` gradhub steps: the ``top`` functions by self time."""
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(n):
        step()
    pr.disable()
    buf = io.StringIO()
    pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def gpu_activity(step: Callable[[], Any], n: int, top: int) -> tuple[dict[str, float], str]:
    """What ``n`` steps run on the GPU, seen by PyTorch's profiler (CUPTI sees every kernel of
    the process, CuPy's too): per step, the kernels launched, their summed GPU time, the copies
    between host and device (each one a synchronisation), and the ``top`` kernels by time."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            step()
    kernels: dict[str, list[float]] = {}
    copies = 0
    for e in prof.events():
        if e.device_type.name != "CUDA":
            continue
        if "Memcpy" in e.name and ("HtoD" in e.name or "DtoH" in e.name):
            copies += 1
        kernels.setdefault(e.name, []).append(e.time_range.elapsed_us())
    n_k = sum(len(v) for v in kernels.values())
    busy = sum(sum(v) for v in kernels.values())
    summary = {"kernels": n_k / n, "gpu_us": busy / n, "copies": copies / n}
    lines = [
        f"{len(v) / n:6.1f} x {sum(v) / len(v):8.1f} us  {name[:90]}"
        for name, v in sorted(kernels.items(), key=lambda kv: -sum(kv[1]))[:top]
    ]
    return summary, "\n".join(lines)


def environment() -> list[str]:
    """GPU, driver and library versions, for the record."""
    import gradhub
    import numpy
    import torch

    versions = (
        f"torch {torch.__version__}, numpy {numpy.__version__}, "
        f"gradhub {gradhub.__version__}, Python {sys.version.split()[0]}"
    )
    if not torch.cuda.is_available():
        return [f"CPU dry run: {versions}"]
    import cupy

    rt = cupy.cuda.runtime
    props = rt.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    drv, run = rt.driverGetVersion(), rt.runtimeGetVersion()
    return [
        f"GPU: {name}",
        f"CUDA driver API {drv // 1000}.{drv % 1000 // 10}, "
        f"CuPy runtime {run // 1000}.{run % 1000 // 10}",
        f"CuPy {cupy.__version__}, torch CUDA {torch.version.cuda}, "
        f"cuDNN {torch.backends.cudnn.version()}; {versions}",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--batch", type=int, default=256, help="batch of W2, W3 and W4")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--block", type=float, default=0.25, help="seconds per timed block")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--peers", default=None, help="peer harness folder")
    ap.add_argument("--profile", default=None, help="write cProfile reports of gradhub here")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument(
        "--gpu-activity",
        action="store_true",
        help="also profile the GPU side (kernels, copies) of both, into --profile",
    )
    ap.add_argument(
        "--variant",
        choices=("eager", "static"),
        default="eager",
        help="static: gradhub's steps through gh.compile (plans; CUDA graphs on cuda)",
    )
    ap.add_argument(
        "--device",
        choices=("cuda", "cpu"),
        default="cuda",
        help="cpu: a dry run of this script against PyTorch CPU",
    )
    args = ap.parse_args(argv)

    harness = _setup(args.peers, args.device)
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rows, reports = [], []
    for w in [w for w in args.workloads.replace(",", " ").split() if w]:
        row = compare(
            harness, w, args.batch, args.rounds, args.block, args.rtol, args.device, args.variant
        )
        rows.append(row)
        print(
            f"{row['id']} {w}: gradhub ({args.variant}) {row['ours_ms']:.3f} ms, "
            f"torch {row['ref_ms']:.3f} ms, "
            f"ratio {row['ratio']:.2f}, max_rel {row['max_rel']:.1e} {row['detail']}",
            flush=True,
        )
        if args.profile:
            reports.append(
                f"## {row['id']} {w} (batch {row['batch']})\n" + profile(row["step"], 20, args.top)
            )
        if args.gpu_activity and args.device == "cuda":
            for who, step in (("gradhub", row["step"]), ("torch", row["ref"])):
                summary, table = gpu_activity(step, 10, args.top)
                print(
                    f"   {who}: {summary['kernels']:.0f} kernels, "
                    f"{summary['gpu_us']:.0f} us of GPU time, {summary['copies']:.1f} "
                    "host<->device copies per step",
                    flush=True,
                )
                reports.append(f"## GPU activity: {row['id']} {w}, {who}\n{summary}\n{table}\n")
    if args.profile:
        Path(args.profile).write_text("\n".join(reports))
    print()
    for line in environment():
        print(f"- {line}")
    print()
    print(
        f"| id | workload | batch | gradhub (ms) | torch {args.device} (ms) | ratio | spread | "
        f"goal ≤ {GOAL}x | outputs |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        goal = ("met" if r["ratio"] <= GOAL else "not met") if r["workload"] in BATCHED else "-"
        out = f"match ({r['max_rel']:.0e})" if r["match"] else f"MISMATCH {r['detail']}"
        print(
            f"| {r['id']} | {r['workload']} | {r['batch']} | {r['ours_ms']:.3f} | "
            f"{r['ref_ms']:.3f} | {r['ratio']:.2f}x | {r['spread'][0]:.2f}-"
            f"{r['spread'][1]:.2f} | {goal} | {out} |"
        )
    return 0 if all(r["match"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
