"""The gradhub benchmark suite: W1-W7 against PyTorch and hand-written numpy, in one run.

Run by ``nox -s bench`` (not part of the test suite)::

    python benchmarks/run.py                      # CPU: gradhub, torch, numpy-manual; 3 rounds
    python benchmarks/run.py --quick              # 1 round, shorter time budgets
    python benchmarks/run.py --workloads tiny_ops,nth_sin --rounds 1
    python benchmarks/run.py --device cuda        # W2-W5 on the GPU against PyTorch CUDA

It drives the peer benchmark harness that lives beside the project (``../shared/bench/peers``
from the repository root; ``--peers`` or ``GRADHUB_PEERS_DIR`` point elsewhere): that harness
starts one fresh interpreter per (framework, workload, mode) with the same thread settings
(``--threads``, default 2), first runs one step of every framework and compares all its outputs
(loss and every gradient) with PyTorch's, then times (median over samples, median over rounds) and
measures peak memory. The adapters are ``benchmarks/fw_gradhub.py`` (ours), the harness's
``fw_torch`` and ``fw_numpy_manual`` (the limit of any numpy-based framework), and
``benchmarks/fw_torch_cuda.py`` for ``--device cuda``.

Output: the harness's JSON (``--out``) and a markdown report on stdout (and in ``--markdown``):
the targets table (medians, the ratio each target is about, met or not), then the harness's own
detailed tables. A timing whose outputs did not match PyTorch's does not count: its target is
reported as not met. Exit status: 0 when every gradhub output matched, 1 otherwise; 2 when the
harness could not run; with ``--fail-on-target``, also 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import json
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OURS = "gradhub"
REFERENCE = "torch"
MANUAL = "numpy-manual"
BASELINE = "gradhub-baseline"
STATIC = "gradhub-static"
BASELINE_STATIC = "gradhub-static-baseline"
CPU_WORKLOADS = ("tiny_ops", "mlp", "cnn", "grad_penalty", "nth_sin", "import", "deep_mlp_mem")
CUDA_WORKLOADS = ("mlp", "cnn", "grad_penalty", "nth_sin")


@dataclass(frozen=True)
class Target:
    """One target of the issue: ``ours / baseline <= max_ratio`` (or an absolute bound)."""

    wid: str
    workload: str
    metric: str  # "time" (median step), "per_op" (us/function), "import_net" (ms), "mem" (MB)
    baseline: str | None  # framework row the ratio is taken against; None for an absolute bound
    bound: float  # max ratio, or the absolute bound in the metric's unit
    strict: bool = False  # True: value < bound (W6), else value <= bound


TARGETS = (
    Target("W1", "tiny_ops", "per_op", REFERENCE, 0.8),
    Target("W2", "mlp", "time", MANUAL, 1.05),
    Target("W3", "cnn", "time", REFERENCE, 1.5),
    Target("W4", "grad_penalty", "time", REFERENCE, 1.5),
    Target("W5", "nth_sin", "time", REFERENCE, 1.0),
    Target("W6", "import", "import_net", None, 100.0, strict=True),
    Target("W7", "deep_mlp_mem", "time", MANUAL, 1.05),
    Target("W7", "deep_mlp_mem", "mem", REFERENCE, 1.0),
)
#: the targets of the static rows (issue 25): the same steps through gh.compile (plans)
STATIC_TARGETS = (
    Target("W1", "tiny_ops", "per_op", MANUAL, 1.2),
    Target("W2", "mlp", "time", MANUAL, 1.0),
    Target("W3", "cnn", "time", REFERENCE, 1.0),
    Target("W4", "grad_penalty", "time", REFERENCE, 1.0),
    Target("W5", "nth_sin", "time", REFERENCE, 0.6),
    Target("W7", "deep_mlp_mem", "time", MANUAL, 1.0),
)
UNITS = {"time": "ms per step", "per_op": "µs per function", "import_net": "ms", "mem": "MB peak"}
DESCRIPTION = {
    "tiny_ops": "100 elementwise functions on 16 elements, fwd+bwd",
    "mlp": "MLP 784-1024-1024-10, batch 128",
    "cnn": "seed CNN, batch 64x3x32x32",
    "grad_penalty": "W3 + gradient-norm penalty (double backward)",
    "nth_sin": "1st..6th derivative of sin, 1000 points",
    "import": "fresh interpreter: import + nn_ops + first call",
    "deep_mlp_mem": "16 x 1024 MLP, batch 256",
}


# -- locating the harness -------------------------------------------------------------------------


def find_peers(explicit: str | None = None) -> Path:
    """The peer harness folder: ``explicit``, ``$GRADHUB_PEERS_DIR``, else ``shared/bench/peers``
    beside the repository root or beside any folder above it (worktrees, nested checkouts)."""
    tried: list[Path] = []
    for cand in (explicit, os.environ.get("GRADHUB_PEERS_DIR")):
        if cand:
            p = Path(cand).expanduser().resolve()
            if (p / "harness.py").is_file() and (p / "run.py").is_file():
                return p
            tried.append(p)
    if explicit or os.environ.get("GRADHUB_PEERS_DIR"):
        raise FileNotFoundError(f"no peer harness (harness.py, run.py) in {tried[0]}")
    for base in (REPO, *REPO.parents):
        for p in (base / "shared" / "bench" / "peers", base / "bench" / "peers"):
            tried.append(p)
            if (p / "harness.py").is_file() and (p / "run.py").is_file():
                return p
    raise FileNotFoundError(
        "the peer benchmark harness was not found (expected ../shared/bench/peers relative to the "
        f"repository root {REPO}); pass --peers DIR or set GRADHUB_PEERS_DIR"
    )


# -- running ---------------------------------------------------------------------------------------


def _split(values: Sequence[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or ():
        out += [p for p in v.replace(",", " ").split() if p]
    return out


def peer_rows(peers: Path) -> dict[str, tuple[str, str | None]]:
    """The harness's rows: name -> (adapter module, variant), read from the ``FRAMEWORKS`` table
    of its ``run.py`` (parsed, not imported)."""
    tree = ast.parse((peers / "run.py").read_text())
    out: dict[str, tuple[str, str | None]] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "FRAMEWORKS" for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            for k, v in zip(node.value.keys, node.value.values):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Tuple) and len(v.elts) >= 2:
                    mod, var = v.elts[0], v.elts[1]
                    if isinstance(mod, ast.Constant) and isinstance(var, ast.Constant):
                        out[str(k.value)] = (str(mod.value), var.value)
    return out


def harness_command(args: argparse.Namespace, peers: Path, out: Path) -> list[str]:
    """The peer harness's ``run.py`` command line for this run."""
    py = args.python
    torch_py = args.torch_python or py
    if args.device == "cpu":
        rows = {
            OURS: f"fw_gradhub@{py}",
            STATIC: f"fw_gradhub:static@{py}",
            REFERENCE: f"fw_torch@{torch_py}",
            MANUAL: f"fw_numpy_manual@{py}",
        }
    else:
        rows = {OURS: f"fw_gradhub@{py}", REFERENCE: f"fw_torch_cuda@{torch_py}"}
    if args.baseline:
        # another revision's gradhub (its own interpreter and installs), with today's adapter
        rows[BASELINE] = f"fw_gradhub@{args.baseline}"
        if args.device == "cpu":
            rows[BASELINE_STATIC] = f"fw_gradhub:static@{args.baseline}"
    frameworks = [f for f in rows if f not in args.skip]
    extra = {}
    for spec in args.also:  # the harness's own rows (its venvs), or NAME@PYTHON (another one)
        name, _, python = spec.partition("@")
        if name in rows:
            continue
        frameworks.append(name)
        if python:
            module, variant = peer_rows(peers).get(name, (None, None))
            if module is None:
                raise SystemExit(
                    f"benchmarks/run.py: --also {spec}: the harness has no row {name!r}"
                )
            python = str(Path(python).expanduser().absolute())  # (a venv: no symlink resolved)
            extra[name] = f"{module}{':' + variant if variant else ''}@{python}"
    cmd = [
        py,
        str(peers / "run.py"),
        "--frameworks",
        ",".join(frameworks),
        "--workloads",
        ",".join(args.workloads),
        "--threads",
        str(args.threads),
        "--rounds",
        str(args.rounds),
        "--repeat-scale",
        str(args.repeat_scale),
        "--timeout",
        str(args.timeout),
        "--out",
        str(out),
        "--check",
    ]
    for name in frameworks:
        if name in rows:
            cmd += ["--extra", f"{name}={rows[name]}"]
        elif name in extra:
            cmd += ["--extra", f"{name}={extra[name]}"]
    if args.device != "cpu" or args.no_mem:
        cmd.append("--no-mem")
    return cmd


def git_revision() -> str:
    """``git describe --always --dirty`` of the repository, or ``"?"``."""
    try:
        r = subprocess.run(
            ["git", "-C", str(REPO), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return "?"
    return r.stdout.strip() or "?"


def precompile(packages: Sequence[str] = ("gradhub", "gradhub_nn_ops", "gradhub_cuda")) -> None:
    """Byte-compile the gradhub packages, as installing a wheel does, so that W6 measures
    importing and not compiling (editable installs under ``PYTHONDONTWRITEBYTECODE`` would
    otherwise compile every module in every fresh interpreter)."""
    import compileall
    import importlib.util

    for name in packages:
        spec = importlib.util.find_spec(name)  # a top-level package: nothing is executed
        for folder in (spec.submodule_search_locations or []) if spec else []:
            compileall.compile_dir(folder, quiet=1)


def harness_env(args: argparse.Namespace) -> dict[str, str]:
    """Environment of the harness: our adapters importable, the device chosen."""
    env = os.environ.copy()
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # Python's default: use and write bytecode caches
    paths = [str(HERE)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["BENCH_DEVICE"] = args.device
    if args.device != "cpu":
        # the harness sets CUDA_VISIBLE_DEVICES="" in its children; our adapters restore this
        env["BENCH_CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>")
    return env


# -- the report ------------------------------------------------------------------------------------


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def summarize(data: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(framework, workload) -> {time_ms, per_op_us, import_ms, import_net_ms, mem_mb, status,
    reason, check, max_rel}: medians over rounds of the timing medians."""
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in data.get("results", []):
        groups.setdefault((r["framework"], r["workload"]), []).append(r)
    n_ops = data["meta"]["workloads"].get("tiny_ops", {}).get("n_ops", 100)
    for key, rs in groups.items():
        ok = [r for r in rs if r.get("status") == "ok"]
        c: dict[str, Any] = {
            "status": "ok" if ok else rs[-1].get("status"),
            "reason": "" if ok else (rs[-1].get("reason") or ""),
        }
        if ok:
            med = _median([r["median_s"] for r in ok])
            c["time_ms"] = med * 1e3
            ok.sort(key=lambda r: r.get("round", 0))
            c["rounds"] = [r["median_s"] * 1e3 for r in ok]  # ms per step, per round
            if key[1] == "tiny_ops":
                c["per_op_us"] = med / n_ops * 1e6
            if key[1] == "import":
                c["import_ms"] = med * 1e3
                c["import_net_ms"] = _median([r["import_minus_startup_s"] for r in ok]) * 1e3
                c["rounds"] = [r["import_minus_startup_s"] * 1e3 for r in ok]
        cells[key] = c
    for r in data.get("memory", []):
        c = cells.setdefault((r["framework"], r["workload"]), {"status": r.get("status")})
        if r.get("status") == "ok":
            c["mem_mb"] = r["mem_peak_mb"]
        else:
            c.setdefault("mem_reason", r.get("reason") or r.get("status"))
    for ch in data.get("checks", []):
        c = cells.setdefault((ch["framework"], ch["workload"]), {"status": "not timed"})
        c["check"] = ch.get("status")
        c["max_rel"] = ch.get("max_rel")
        c["check_detail"] = ch.get("detail") or ch.get("reason") or ""
    return cells


def _value(cell: dict[str, Any] | None, metric: str) -> float | None:
    if cell is None:
        return None
    key = {"time": "time_ms", "per_op": "per_op_us", "import_net": "import_net_ms", "mem": "mem_mb"}
    return cell.get(key[metric])


def _fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def _cell_text(cell: dict[str, Any] | None, metric: str) -> str:
    v = _value(cell, metric)
    if v is not None:
        return _fmt(v)
    if cell is None:
        return "-"
    status = cell.get("status") if metric != "mem" else "no memory result"
    short = {"unsupported": "n/s", "error": "FAIL", "unavailable": "n/a"}
    return short.get(str(status), str(status))


def evaluate(
    cells: dict[tuple[str, str], dict[str, Any]],
    device: str,
    workloads: Sequence[str],
    row: str = OURS,
    table: Sequence[Target] = TARGETS,
) -> list[dict[str, Any]]:
    """One row per target (CPU) or per workload (CUDA: ratios to torch, no targets), for the
    framework row ``row`` against the targets of ``table``."""
    rows = []
    targets: Sequence[Target]
    if device == "cpu":
        targets = [t for t in table if t.workload in workloads]
    else:
        targets = [Target(_wid(w), w, "time", REFERENCE, float("nan")) for w in workloads]
    for t in targets:
        ours = cells.get((row, t.workload))
        value = _value(ours, t.metric)
        base = _value(cells.get((t.baseline, t.workload)), t.metric) if t.baseline else None
        check = (ours or {}).get("check")
        checked = t.workload == "import" or check == "match"
        if t.baseline is None:
            measured = value
        else:
            measured = value / base if value is not None and base else None
        if t.bound != t.bound:  # nan: no target on this device
            met = None
        elif measured is None or not checked:
            met = False
        else:
            met = measured < t.bound if t.strict else measured <= t.bound
        spread: tuple[float, ...] | None = None
        if t.metric in ("time", "per_op") and t.baseline:
            ra = (ours or {}).get("rounds") or []
            rb = (cells.get((t.baseline, t.workload)) or {}).get("rounds") or []
            if len(ra) > 1 and len(ra) == len(rb):
                per_round = [x / y for x, y in zip(ra, rb)]
                spread = (min(per_round), max(per_round), min(ra) / min(rb))
        elif t.metric == "import_net":
            ra = (ours or {}).get("rounds") or []
            spread = (min(ra), max(ra)) if len(ra) > 1 else None
        rows.append(
            {
                "target": t,
                "value": value,
                "baseline_value": base,
                "measured": measured,
                "spread": spread,
                "checked": checked,
                "check": check,
                "met": met,
                "max_rel": (ours or {}).get("max_rel"),
            }
        )
    return rows


def _wid(workload: str) -> str:
    ids = {t.workload: t.wid for t in TARGETS}
    return ids.get(workload, "?")


def _load(meta: dict[str, Any], when: str) -> str:
    la = meta.get(f"loadavg_{when}")
    return f"{la[0]:.2f}" if la else "?"


def render(data: dict[str, Any], device: str, workloads: Sequence[str]) -> tuple[str, list[dict]]:
    """The markdown targets table, plus the rows it was made from."""
    cells = summarize(data)
    rows = evaluate(cells, device, workloads)
    meta = data["meta"]
    fws = list(meta["frameworks"])
    lines = [
        f"gradhub benchmark (revision {meta.get('gradhub_revision', '?')}), "
        f"{meta.get('started', '?')} on {meta.get('cpu', '?')} "
        f"(nproc {meta.get('nproc', '?')}), {meta.get('threads')} threads, device {device}, "
        f"{meta.get('rounds', 1)} round(s); command: `{meta.get('command', '')}`",
        "",
        f"Load average (1 min) before/after the run: {_load(meta, 'before')} / "
        f"{_load(meta, 'after')} on {meta.get('nproc', '?')} cores (other processes distort "
        "the timings, torch's 2-thread pool most).",
        "",
    ]
    after = meta.get("gradhub_revision_after")
    if after and after != meta.get("gradhub_revision"):
        lines += [
            f"**The repository changed during the run** (now {after}): children started "
            "later imported other code; rerun for numbers of one revision.",
            "",
        ]
    lines += [
        "| id | workload | unit | " + " | ".join(fws) + " | measured | target | met |",
        "|---|---|---|" + "---|" * len(fws) + "---|---|---|",
    ]
    for row in rows:
        t: Target = row["target"]
        vals = [_cell_text(cells.get((fw, t.workload)), t.metric) for fw in fws]
        if t.baseline is None:
            total = (cells.get((OURS, t.workload)) or {}).get("import_ms")
            measured = f"{_fmt(row['measured'])} ms"
            if row["spread"]:
                measured += f" (rounds {_fmt(row['spread'][0])}-{_fmt(row['spread'][1])})"
            measured += f"; {_fmt(total)} ms with the interpreter start"
            target = f"< {t.bound:g} ms" if t.strict else f"<= {t.bound:g} ms"
        else:
            measured = (
                f"{row['measured']:.2f}x {t.baseline}" if row["measured"] is not None else "-"
            )
            if row["spread"]:
                lo, hi, best = row["spread"]
                measured += f" (rounds {lo:.2f}-{hi:.2f}; best rounds {best:.2f}x)"
            target = f"<= {t.bound:g}x {t.baseline}" if row["met"] is not None else "-"
        if row["met"] is None:
            met = "-"
        elif not row["checked"]:
            met = f"no (outputs {row['check'] or 'unchecked'})"
        else:
            met = "**yes**" if row["met"] else "no"
        desc = DESCRIPTION.get(t.workload, t.workload)
        lines.append(
            f"| {t.wid} | {t.workload}: {desc} | {UNITS[t.metric]} | "
            + " | ".join(vals)
            + f" | {measured} | {target} | {met} |"
        )
    lines += [
        "",
        "Measured: the ratio of the medians over rounds (what the targets are checked "
        "on); in parentheses the range of the per-round ratios (frameworks run "
        "interleaved within a round) and the ratio of each side's fastest round, which "
        "background load on the machine disturbs least.",
    ]
    if STATIC in fws and device == "cpu":
        lines += [
            "",
            f"Static graphs ({STATIC}: the same steps through `gh.compile`, traced once and "
            "replayed by a plan; targets of issue 25):",
            "",
            f"| id | workload | unit | {STATIC} | {OURS} | baseline | measured | target | met |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for row in evaluate(cells, device, workloads, STATIC, STATIC_TARGETS):
            t = row["target"]
            eager = _cell_text(cells.get((OURS, t.workload)), t.metric)
            measured = (
                f"{row['measured']:.2f}x {t.baseline}" if row["measured"] is not None else "-"
            )
            if row["spread"]:
                lo, hi, best = row["spread"]
                measured += f" (rounds {lo:.2f}-{hi:.2f}; best rounds {best:.2f}x)"
            if not row["checked"]:
                met = f"no (outputs {row['check'] or 'unchecked'})"
            else:
                met = "**yes**" if row["met"] else "no"
            lines.append(
                f"| {t.wid} | {t.workload} | {UNITS[t.metric]} | {_fmt(row['value'])} | {eager} | "
                f"{_fmt(row['baseline_value'])} {t.baseline} | {measured} | <= {t.bound:g}x "
                f"{t.baseline} | {met} |"
            )
    peers = [f for f in fws if f not in (OURS, STATIC, BASELINE, BASELINE_STATIC)]
    ours_rows = [f for f in (OURS, STATIC) if f in fws]
    if peers and ours_rows:
        lines += [
            "",
            "Ratios to every other row (medians over rounds; below 1 is faster):",
            "",
            "| id | workload | "
            + " | ".join(f"{o} / {p}" for o in ours_rows for p in peers)
            + " |",
            "|---|---|" + "---|" * (len(ours_rows) * len(peers)),
        ]
        for w in workloads:
            metric = "import_net" if w == "import" else ("per_op" if w == "tiny_ops" else "time")
            ratios = []
            for o in ours_rows:
                a = _value(cells.get((o, w)), metric)
                for p in peers:
                    b = _value(cells.get((p, w)), metric)
                    ratios.append(f"{a / b:.2f}x" if a is not None and b else "-")
            lines.append(f"| {_wid(w)} | {w} | " + " | ".join(ratios) + " |")
    if "import" in workloads:
        lines += [
            "",
            "W6 cells: median of 5 fresh `python -c IMPORT` runs minus the median of 5 "
            "`python -c pass` runs (the bare interpreter start, which the machine's site "
            "packages make slower or faster); bytecode is precompiled as an install "
            "would do.",
        ]
    if BASELINE in fws:
        lines += [
            "",
            f"gradhub against {BASELINE} (another revision's installs, same run; "
            "ratio of the medians, below 1 is faster):",
            "",
        ]
        for ours, base in ((OURS, BASELINE), (STATIC, BASELINE_STATIC)):
            if ours not in fws or base not in fws:
                continue
            for w in workloads:
                metric = (
                    "import_net" if w == "import" else ("per_op" if w == "tiny_ops" else "time")
                )
                a = _value(cells.get((ours, w)), metric)
                b = _value(cells.get((base, w)), metric)
                ratio = f"{a / b:.2f}x" if a is not None and b else "-"
                lines.append(
                    f"- {_wid(w)} {w}{' (static)' if ours == STATIC else ''}: {ratio} "
                    f"({_fmt(a)} against {_fmt(b)} {UNITS[metric]})"
                )
    lines += [
        "",
        "Output check of gradhub against torch (max |a-r| / max |r| over the step's "
        "outputs; an element fails above 1e-3 (|r| + max|r|)):",
        "",
    ]
    for w in workloads:
        if w == "import":
            continue
        c = cells.get((OURS, w), {})
        rel = c.get("max_rel")
        rel_s = f" {rel:.0e}" if isinstance(rel, float) else ""
        detail = (
            f" -- {c['check_detail']}"
            if c.get("check") != "match" and c.get("check_detail")
            else ""
        )
        lines.append(f"- {w}: {c.get('check', 'not run')}{rel_s}{detail}")
    failures = [
        (k, c)
        for k, c in cells.items()
        if k[0] == OURS and c.get("status") not in ("ok", None) and c.get("reason")
    ]
    if failures:
        lines += ["", "gradhub failures:", ""]
        for (_, w), c in sorted(failures, key=lambda kc: kc[0]):
            lines.append(f"- {w}: {c['status']}: {c['reason'][:400]}")
    return "\n".join(lines) + "\n", rows


def harness_report(peers: Path, out: Path) -> str:
    """The harness's own detailed markdown report of the same JSON."""
    r = subprocess.run(
        [sys.executable, str(peers / "report.py"), str(out), "--details"],
        capture_output=True,
        text=True,
        check=False,
    )
    return r.stdout if r.returncode == 0 else f"(report.py failed: {r.stderr[-500:]})\n"


# -- main ------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="cpu: W1-W7 vs torch CPU and numpy; cuda: W2-W5 vs torch CUDA",
    )
    ap.add_argument(
        "--workloads",
        nargs="*",
        default=None,
        help="subset (names: " + ",".join(CPU_WORKLOADS) + ")",
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="interleaved timing rounds; each cell is the median over rounds",
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--repeat-scale",
        type=float,
        default=1.0,
        help="scale the harness's repeats and time budgets",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="1 round, repeat-scale 0.4 (a smoke run; ratios are noisier)",
    )
    ap.add_argument("--no-mem", action="store_true", help="skip the memory children (W7 memory)")
    ap.add_argument("--timeout", type=float, default=300.0, help="per-child limit (s)")
    ap.add_argument("--skip", default="", help="framework rows to leave out, e.g. numpy-manual")
    ap.add_argument(
        "--also",
        default="",
        help="more rows of the harness's own peers, run with the pythons its setup.sh "
        "builds, e.g. chainer,nnabla,mxnet,jax,jax-jit,autograd (no targets); NAME@PYTHON runs "
        "the row with another interpreter (e.g. jax-jit@.venv-jax/bin/python)",
    )
    ap.add_argument("--python", default=sys.executable, help="interpreter for gradhub and numpy")
    ap.add_argument(
        "--torch-python", default=None, help="interpreter with torch (default: --python)"
    )
    ap.add_argument(
        "--baseline",
        default=None,
        metavar="PYTHON",
        help="also run gradhub from this interpreter's installs (e.g. a venv of an "
        "earlier revision) as the row 'gradhub-baseline', in the same run",
    )
    ap.add_argument("--peers", default=None, help="peer harness folder")
    ap.add_argument("--out", default="results-bench.json", help="the harness JSON")
    ap.add_argument("--markdown", default=None, help="also write the markdown report here")
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="only render the report of an existing --out JSON",
    )
    ap.add_argument("--fail-on-target", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)
    default = CPU_WORKLOADS if args.device == "cpu" else CUDA_WORKLOADS
    args.workloads = _split(args.workloads) or list(default)
    for w in args.workloads:
        if w not in CPU_WORKLOADS:
            ap.error(f"unknown workload {w!r} (known: {', '.join(CPU_WORKLOADS)})")
    args.skip = set(_split([args.skip]))
    args.also = _split([args.also])
    if args.quick:
        args.rounds, args.repeat_scale = 1, 0.4
    if args.rounds < 1 or args.threads < 1:
        ap.error("--rounds and --threads must be >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        peers = find_peers(args.peers)
    except FileNotFoundError as e:
        print(f"benchmarks/run.py: {e}", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    if not args.report_only:
        out.parent.mkdir(parents=True, exist_ok=True)
        precompile()
        if args.baseline:  # the same for the baseline's own installs, in its interpreter
            subprocess.run(
                [
                    args.baseline,
                    "-c",
                    "import sys; sys.path.insert(0, sys.argv[1]); import run; run.precompile()",
                    str(HERE),
                ],
                check=False,
            )
        cmd = harness_command(args, peers, out)
        print("$ " + " ".join(cmd), flush=True)
        started = datetime.datetime.now().isoformat(timespec="seconds")
        load_before = os.getloadavg()
        revision = git_revision()
        rc = subprocess.run(cmd, env=harness_env(args), check=False).returncode
        load_after = os.getloadavg()
        if rc != 0 or not out.is_file():
            print(f"benchmarks/run.py: the harness failed (exit status {rc})", file=sys.stderr)
            return 2
        data = json.loads(out.read_text())
        data["meta"].update(
            started=started,
            command="python benchmarks/run.py "
            + " ".join(argv if argv is not None else sys.argv[1:]),
            host=platform.node(),
            bench_device=args.device,
            loadavg_before=load_before,
            loadavg_after=load_after,
            gradhub_revision=revision,
            gradhub_revision_after=git_revision(),
        )
        out.write_text(json.dumps(data, indent=1, default=str))
    data = json.loads(out.read_text())
    device = data["meta"].get("bench_device", args.device)
    workloads = [w for w in data["meta"]["workloads"] if w in CPU_WORKLOADS]
    text, rows = render(data, device, workloads)
    text += "\n## Harness report (all cells)\n\n" + harness_report(peers, out)
    print()
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    ours_ok = all(row["checked"] for row in rows)
    if not ours_ok:
        return 1
    if args.fail_on_target and any(row["met"] is False for row in rows):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
