"""Where gradhub spends its time on the benchmark workloads (W1 tiny_ops, W2 mlp, W5 nth_sin).

Four views of the same steps, built by ``benchmarks/fw_gradhub.py`` from the harness's data,
and one of W6:

* ``cprofile`` (default): deterministic, in this process. Exact call counts per step and the
  self time (``tottime``) of each function as a share of the profiled total; cProfile inflates
  cheap Python calls, so shares of many-call functions are upper bounds.
* ``bytecodes``: deterministic, in this process. The Python bytecodes one step executes, per
  function (self and inclusive) and in all, plus the C functions it calls. Python-heavy steps
  (W1, W5) cost roughly in proportion to their bytecodes, and the count does not depend on what
  else the machine runs, so it compares two revisions of the hot path where timings are noise.
* ``kernels``: timers around every registered function's forward kernels (``fw NAME``) and
  its first-order fast rule (``bw NAME``): milliseconds per step spent in each (first quartile
  over the steps), the rest being the core and Python. A kernel that calls another registered
  function's kernel counts in both (nn_ops' rules call module functions, which count in theirs).
  For the array-heavy workloads (W3, W4), where the bytecodes say little.
* ``pyspy``: sampling (``py-spy record``, 1000 Hz) of a child process running the steps without
  instrumentation; self time of the innermost Python frame (numpy/C work is charged to the Python
  function calling it) and inclusive time per function (on the stack).
* ``import`` (W6): ``--runs`` fresh interpreters run W6's statement with timers around each step
  of plugin loading; the median and quartiles of each part (numpy, the core, entry points, the
  library's modules, registration, the first call), gradhub's share in CPU time of the main
  thread (steadier than the wall-clock parts where other processes compete for the cores) and the
  count of modules it imports after numpy; ``--baseline PYTHON`` alternates each run with one of
  another revision's interpreter.

Rows are grouped by area: ``core/gradhub/<file>`` (the core), ``nn_ops/<file>`` (the function
library's kernels and rules), ``numpy`` and ``other``. Usage::

    python benchmarks/profile_core.py                    # cProfile, W1 W2 W5
    python benchmarks/profile_core.py --mode pyspy --workloads tiny_ops --seconds 5
    python benchmarks/profile_core.py --mode bytecodes --workloads tiny_ops,nth_sin
    python benchmarks/profile_core.py --mode bytecodes --workloads tiny_ops:static  # gh.compile
    python benchmarks/profile_core.py --mode kernels --workloads cnn,grad_penalty
    python benchmarks/profile_core.py --mode import --runs 12
    python benchmarks/profile_core.py --mode import --runs 12 --baseline BASE/.venv/bin/python
    python benchmarks/profile_core.py --top 30 --markdown prof.md

Not part of the test suite. Threads are pinned to ``--threads`` (default 2) as in the benchmark.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_WORKLOADS = ("tiny_ops", "mlp", "nth_sin")


def _setup_path(peers: str | None) -> None:
    sys.path.insert(0, str(HERE))
    from run import find_peers

    sys.path.insert(0, str(find_peers(peers)))


def _make_step(workload: str) -> Callable[[], Any]:
    import fw_gradhub
    import harness

    ok, why = fw_gradhub.available()
    if not ok:
        raise RuntimeError(f"gradhub is not usable: {why}")
    workload, _, variant = workload.partition(":")  # tiny_ops:static: the gradhub-static row
    params = harness.workload_params(workload)
    if variant:
        params = dict(params, variant=variant)
    return fw_gradhub.make(workload, params)


def area(filename: str) -> str:
    """``core/<file>``, ``nn_ops/<file>``, ``numpy``, ``python`` or ``other`` for a code file."""
    f = filename.replace(os.sep, "/")
    for marker, label in (
        ("/core/gradhub/", "core/"),
        ("/gradhub_nn_ops/", "nn_ops/"),
        ("gradhub/", "core/"),
        ("gradhub_nn_ops/", "nn_ops/"),
    ):
        if marker in f:
            return label + f.split(marker, 1)[1]
    if f.endswith("benchmarks/fw_gradhub.py"):
        return "adapter"
    if "numpy" in f:
        return "numpy"
    if f.startswith("~") or f.startswith("<"):
        return "builtins"
    return "other"


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def time_steps(step: Callable[[], Any], seconds: float) -> tuple[float, int]:
    """Median step time (s) over samples of >= 5 ms each, for about ``seconds``; and the inner
    count per sample."""
    for _ in range(3):
        step()
    t0 = time.perf_counter()
    step()
    est = max(time.perf_counter() - t0, 1e-7)
    inner = max(1, int(0.005 / est))
    samples: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(samples) < 5:
        t0 = time.perf_counter()
        for _ in range(inner):
            step()
        samples.append((time.perf_counter() - t0) / inner)
    return _median(samples), inner


def gc_share(step: Callable[[], Any], seconds: float, pairs: int = 6) -> tuple[float, float]:
    """Mean step time (s) with Python's cyclic garbage collector on and off, alternating
    ``pairs`` times; the collector's cost is ``1 - off / on``. Means, not medians: collections
    hit a few steps hard."""
    import gc

    def mean_time(budget: float) -> float:
        n, t0 = 0, time.perf_counter()
        while True:
            step()
            n += 1
            dt = time.perf_counter() - t0
            if dt >= budget:
                return dt / n

    on: list[float] = []
    off: list[float] = []
    was = gc.isenabled()
    try:
        for _ in range(pairs):
            gc.enable()
            on.append(mean_time(seconds / (2 * pairs)))
            gc.disable()
            off.append(mean_time(seconds / (2 * pairs)))
    finally:
        if was:
            gc.enable()
    return _median(on), _median(off)


# -- cProfile --------------------------------------------------------------------------------------


def cprofile_rows(step: Callable[[], Any], n_steps: int) -> tuple[list[dict[str, Any]], float]:
    """Per function: self time, cumulative time and calls per step, from ``n_steps`` steps."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n_steps):
        step()
    prof.disable()
    st = pstats.Stats(prof)
    total = st.total_tt  # type: ignore[attr-defined]
    rows = []
    for (filename, line, name), (_cc, nc, tt, ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
        where = f"{_short(filename)}:{name}" + (f" (l.{line})" if line else "")
        rows.append(
            {
                "where": where,
                "line": line,
                "area": area(filename),
                "self": tt / total,
                "cum": ct / total,
                "calls": nc / n_steps,
            }
        )
    return rows, total / n_steps


# C calls the 3.11 path's own measurement makes and counts with the step's: sys.settrace(trace),
# sys.settrace(None) and sys.setprofile(None) each fire a "c_call" event. The sys.monitoring path
# adds them so its C-call counts stay comparable with those recorded on 3.11.
_SETTRACE_HARNESS_C_CALLS = 3


def _monitoring_counts(
    step: Callable[[], Any],
) -> tuple[dict[Any, int], dict[Any, int], dict[Any, int], int]:
    """``bytecode_rows``'s counts for one run of ``step`` with ``sys.monitoring`` (3.12+).

    Same meaning as the settrace path: INSTRUCTION events per code object (self) and per code
    object on the stack above the instruction (inclusive, once per code object); PY_START,
    PY_RESUME and PY_THROW per code object (the settrace "call" event, which also fires when a
    generator resumes); CALL events whose callable is a builtin function or a method descriptor
    (what sys.setprofile reports as "c_call"). Only this thread, under ``step``, is counted:
    unlike settrace, the events are global."""
    import threading
    import types

    mon = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
    ev = mon.events
    tool = next((t for t in (mon.PROFILER_ID, 3, 4, 5, 1, 0) if mon.get_tool(t) is None), None)
    if tool is None:
        raise RuntimeError("no free sys.monitoring tool id to count bytecodes with")
    self_n: dict[Any, int] = defaultdict(int)
    cum_n: dict[Any, int] = defaultdict(int)
    calls: dict[Any, int] = defaultdict(int)
    c_calls = 0
    here = sys._getframe()
    thread = threading.get_ident()
    get_ident = threading.get_ident
    getframe = sys._getframe
    missing = mon.MISSING
    builtin, method_descriptor = types.BuiltinFunctionType, types.MethodDescriptorType

    def on_instruction(code: Any, offset: int) -> None:
        frame = getframe(1)
        if frame is here or get_ident() != thread:
            return
        self_n[code] += 1
        seen = set()
        f: Any = frame
        while f is not None and f is not here:
            if f.f_code not in seen:
                seen.add(f.f_code)
                cum_n[f.f_code] += 1
            f = f.f_back

    def on_start(code: Any, offset: int, *exc: Any) -> None:
        if getframe(1) is not here and get_ident() == thread:
            calls[code] += 1

    def on_call(code: Any, offset: int, callable_: Any, arg0: Any) -> None:
        nonlocal c_calls
        if getframe(1) is here or get_ident() != thread:
            return
        if isinstance(callable_, builtin) or (
            type(callable_) is method_descriptor and arg0 is not missing
        ):
            c_calls += 1

    handlers: dict[int, Callable[..., Any]] = {
        ev.INSTRUCTION: on_instruction,
        ev.PY_START: on_start,
        ev.PY_RESUME: on_start,
        ev.PY_THROW: on_start,
        ev.CALL: on_call,
    }
    mon.use_tool_id(tool, "gradhub bytecode_rows")
    try:
        for event, handler in handlers.items():
            mon.register_callback(tool, event, handler)
        # Global events instrument every code object, those already run (warm-up) included;
        # no callback returns DISABLE, so no restart_events is needed.
        mon.set_events(tool, sum(handlers))
        step()
    finally:
        mon.set_events(tool, 0)
        for event in handlers:
            mon.register_callback(tool, event, None)
        mon.free_tool_id(tool)
    return self_n, cum_n, calls, c_calls + _SETTRACE_HARNESS_C_CALLS


def bytecode_rows(step: Callable[[], Any]) -> tuple[list[dict[str, Any]], int, int]:
    """Bytecodes executed by one step per function (self, inclusive), the total, and C calls."""
    for _ in range(2):
        step()
    if sys.version_info >= (3, 12):
        # Python 3.12+ implements sys.settrace over sys.monitoring and its opcode events are
        # unreliable there (none at all on the first traced run on 3.12.1/3.12.3, none on later
        # runs on 3.13.0): count with sys.monitoring directly. 3.11 and earlier keep the
        # settrace path below, which measured the numbers recorded so far.
        m_self, m_cum, m_calls, m_c_calls = _monitoring_counts(step)
        return _bytecode_table(m_self, m_cum, m_calls), sum(m_self.values()), m_c_calls
    self_n: dict[Any, int] = defaultdict(int)
    cum_n: dict[Any, int] = defaultdict(int)
    calls: dict[Any, int] = defaultdict(int)
    c_calls = 0

    def trace(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode":
            code = frame.f_code
            self_n[code] += 1
            seen = set()
            f = frame
            while f is not None:
                if f.f_code not in seen:
                    seen.add(f.f_code)
                    cum_n[f.f_code] += 1
                f = f.f_back
        elif event == "call":
            calls[frame.f_code] += 1
        return trace

    def prof(frame: Any, event: str, arg: Any) -> None:
        nonlocal c_calls
        if event == "c_call":
            c_calls += 1

    sys.setprofile(prof)
    sys.settrace(trace)
    try:
        step()
    finally:
        sys.settrace(None)
        sys.setprofile(None)
    return _bytecode_table(self_n, cum_n, calls), sum(self_n.values()), c_calls


def _bytecode_table(
    self_n: dict[Any, int], cum_n: dict[Any, int], calls: dict[Any, int]
) -> list[dict[str, Any]]:
    total = sum(self_n.values())
    return [
        {
            "where": f"{_short(c.co_filename)}:{c.co_name} (l.{c.co_firstlineno})",
            "area": area(c.co_filename),
            "self": n / total,
            "cum": min(1.0, cum_n[c] / total),
            "calls": calls.get(c, 0),
        }
        for c, n in self_n.items()
    ]


def _quartile(xs: Sequence[float]) -> float:
    return sorted(xs)[len(xs) // 4]


def kernel_times(
    step: Callable[[], Any], n_steps: int = 20, warmup: int = 5
) -> tuple[dict[str, float], float]:
    """Seconds per step in each registered function's forward kernels (``"fw NAME"``) and
    first-order fast rule (``"bw NAME"``), and of the whole step: first quartiles over
    ``n_steps`` steps. The registry's callables are wrapped for the measurement and restored."""
    from gradhub.plugins import ensure_loaded
    from gradhub.registry import REGISTRY

    ensure_loaded()
    now: dict[str, float] = defaultdict(float)
    clock = time.perf_counter

    def timed(key: str, f: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kw: Any) -> Any:
            t0 = clock()
            try:
                return f(*args, **kw)
            finally:
                now[key] += clock() - t0

        return run

    saved: list[tuple[Any, str, Any]] = []

    def patch(obj: Any, attr: str, key: str) -> None:
        f = getattr(obj, attr)
        if f is None:
            return
        saved.append((obj, attr, f))
        if isinstance(f, dict):
            setattr(obj, attr, {k: timed(key, v) for k, v in f.items()})
        else:
            setattr(obj, attr, timed(key, f))

    for name, fdef in REGISTRY.functions.items():
        if fdef.kind != "primitive":
            continue
        patch(fdef, "forward", f"fw {name}")
        patch(fdef, "kernels", f"fw {name}")
        if fdef.rule is not None:
            patch(fdef.rule, "fast", f"bw {name}")
            patch(fdef.rule, "fast1", f"bw {name}")
    per: dict[str, list[float]] = defaultdict(list)
    steps: list[float] = []
    try:
        for _ in range(warmup):
            step()
        for i in range(n_steps):
            now.clear()
            t0 = clock()
            step()
            steps.append(clock() - t0)
            for k, v in now.items():
                per[k] += [0.0] * (i - len(per[k])) + [v]
    finally:
        for obj, attr, f in reversed(saved):
            setattr(obj, attr, f)
    return (
        {k: _quartile(v + [0.0] * (n_steps - len(v))) for k, v in per.items()},
        _quartile(steps),
    )


def render_kernels(workload: str, times: dict[str, float], step_s: float, top: int) -> str:
    total = sum(times.values())
    out = [
        f"### {workload} (kernels)",
        "",
        f"Step {step_s * 1e3:.2f} ms (first quartile); the kernels and fast rules below "
        f"{total * 1e3:.2f} ms, the rest (core, Python, other numpy calls) "
        f"{(step_s - total) * 1e3:.2f} ms.",
        "",
        "| kernel | ms per step | share of the step |",
        "|---|---|---|",
    ]
    for k, v in sorted(times.items(), key=lambda kv: -kv[1])[:top]:
        out.append(f"| `{k}` | {v * 1e3:.2f} | {100 * v / step_s:.1f}% |")
    return "\n".join(out) + "\n"


# -- W6: the parts of a fresh start ---------------------------------------------------------------

#: Run in a fresh interpreter: W6's statement, with timers around each step of plugin loading
#: (wrapped module functions of gradhub.plugins and importlib.import_module); prints a dict (ms).
_IMPORT_CHILD = r"""
import time
T = {}
import sys
t = time.perf_counter()
import numpy
T["import numpy"] = time.perf_counter() - t
N = len(sys.modules)
c = time.thread_time()
t = time.perf_counter()
import gradhub as gh, gradhub.functions as F
T["import gradhub"] = time.perf_counter() - t
import importlib
from gradhub import plugins

def timed(owner, name, key):
    f = getattr(owner, name)
    def w(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            T[key] = T.get(key, 0.0) + time.perf_counter() - t
    setattr(owner, name, w)

timed(plugins, "_entry_points", "entry points")
timed(plugins, "_run_hooks", "hooks")
_import = importlib.import_module
def import_module(name, *a):
    t = time.perf_counter()
    try:
        return _import(name, *a)
    finally:
        if name.startswith("gradhub_nn_ops."):
            T["nn_ops modules"] = T.get("nn_ops modules", 0.0) + time.perf_counter() - t
importlib.import_module = import_module
t = time.perf_counter()
sin = F.sin  # loads the plugins
T["loading"] = time.perf_counter() - t
t = time.perf_counter()
sin(gh.Variable([1.0]))
T["first call"] = time.perf_counter() - t
T["cpu"] = time.thread_time() - c
T = {k: v * 1e3 for k, v in T.items()}
T["modules"] = len(sys.modules) - N
print(repr(T))
"""

IMPORT_PARTS = (
    ("import numpy", "`import numpy`"),
    ("import gradhub", "`import gradhub` (pluggy, the core modules)"),
    ("entry points", "entry-point discovery"),
    ("nn_ops modules", "importing gradhub-nn-ops' library modules"),
    ("registration", "registering the functions (the hooks, less those imports)"),
    ("other loading", "the rest of loading (pluggy's manager, other plugins)"),
    ("first call", "the first call"),
    ("gradhub", "gradhub's share: all but `import numpy`"),
    ("cpu", "gradhub's share, CPU time of the main thread (not the time waited for a core)"),
    ("modules", "modules imported after numpy (a count)"),
)


def _import_run(python: str) -> dict[str, float]:
    """One fresh interpreter ``python`` running W6's statement: milliseconds per part (and the
    count of modules it imported after numpy)."""
    import ast
    import subprocess

    env = os.environ.copy()
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as the suite: use the bytecode caches
    r = subprocess.run(
        [python, "-c", _IMPORT_CHILD], capture_output=True, text=True, env=env, check=False
    )
    if r.returncode != 0:
        raise RuntimeError(f"the import child ({python}) failed: {r.stderr[-500:]}")
    t: dict[str, float] = ast.literal_eval(r.stdout.strip().splitlines()[-1])
    t.setdefault("nn_ops modules", 0.0)
    t["registration"] = t.get("hooks", 0.0) - t["nn_ops modules"]
    t["other loading"] = t["loading"] - t.get("entry points", 0.0) - t.get("hooks", 0.0)
    t["gradhub"] = t["import gradhub"] + t["loading"] + t["first call"]
    return t


def import_parts(
    runs: int = 12, python: str = sys.executable, baseline: str | None = None
) -> dict[str, list[float]]:
    """W6 split into its parts: milliseconds per part, one value per fresh interpreter.

    With ``baseline`` (another interpreter: gradhub of another revision), each run of
    ``python`` is followed by one of ``baseline``, so that both see the same load; its parts
    come back under the same keys prefixed ``"baseline "``.
    """
    out: dict[str, list[float]] = defaultdict(list)
    for _ in range(runs + 1):  # the first run warms the page cache and is dropped
        for prefix, exe in (("", python), ("baseline ", baseline)):
            if exe is None:
                continue
            for k, v in _import_run(exe).items():
                out[prefix + k].append(v)
    return {k: v[1:] for k, v in out.items()}


def render_import(parts: dict[str, list[float]]) -> str:
    """The markdown table of :func:`import_parts`: median and quartiles per part; with a
    baseline, its column, the ratio of the medians and the median of the per-run ratios."""

    def cell(key: str) -> str:
        xs = sorted(parts[key])
        q1, q3 = _quartile(xs), xs[min(len(xs) - 1, (3 * len(xs)) // 4)]
        if key in ("modules", "baseline modules"):
            return f"{_median(xs):.0f}"
        return f"{_median(xs):.2f} ({q1:.2f}-{q3:.2f})"

    n = len(parts["gradhub"])
    ab = "baseline gradhub" in parts
    lines = [
        "### import (W6 parts)",
        "",
        f"Medians over {n} fresh interpreters (first and third quartile in parentheses), "
        "each part timed inside the interpreter"
        + (", alternating with the baseline's interpreters." if ab else "."),
        "",
        "| part | ms | baseline | ratio |" if ab else "| part | ms |",
        "|---|---|---|---|" if ab else "|---|---|",
    ]
    for key, label in IMPORT_PARTS:
        if not ab:
            lines.append(f"| {label} | {cell(key)} |")
            continue
        base = _median(sorted(parts["baseline " + key]))
        ratio = _median(sorted(parts[key])) / base if base else float("nan")
        lines.append(f"| {label} | {cell(key)} | {cell('baseline ' + key)} | {ratio:.2f} |")
    if ab:
        pairs = sorted(a / b for a, b in zip(parts["gradhub"], parts["baseline gradhub"]))
        lines += [
            "",
            "gradhub's share against the baseline's, per pair of runs: median "
            f"{_median(pairs):.2f} (from {pairs[0]:.2f} to {pairs[-1]:.2f}).",
        ]
    return "\n".join(lines) + "\n"


def _short(filename: str) -> str:
    a = area(filename)
    if a.startswith(("core/", "nn_ops/")):
        return a
    if filename.startswith("~"):
        return ""
    return Path(filename).name


# -- py-spy ----------------------------------------------------------------------------------------


def pyspy_rows(
    workload: str, seconds: float, peers: str | None, threads: int
) -> tuple[list[dict[str, Any]], int]:
    """Sample a child running ``workload`` steps; self and inclusive shares per function."""
    import shutil
    import subprocess
    import tempfile

    exe = shutil.which("py-spy")
    if exe is None:
        raise RuntimeError("py-spy is not installed (pip install py-spy)")
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.txt"
        cmd = [
            exe,
            "record",
            "--format",
            "raw",
            "--rate",
            "1000",
            "--function",
            "--full-filenames",
            "-o",
            str(raw),
            "--",
            sys.executable,
            str(Path(__file__)),
            "--worker",
            workload,
            "--seconds",
            str(seconds),
            "--threads",
            str(threads),
        ]
        if peers:
            cmd += ["--peers", peers]
        r = subprocess.run(
            cmd, capture_output=True, text=True, env=_thread_env(threads), check=False
        )
        if r.returncode != 0 or not raw.is_file():
            raise RuntimeError(f"py-spy failed: {r.stderr[-800:]}")
        lines = raw.read_text().splitlines()
    selfc: dict[tuple[str, str, int], int] = defaultdict(int)
    incl: dict[tuple[str, str, int], int] = defaultdict(int)
    total = 0
    for ln in lines:
        stack, _, count_s = ln.rpartition(" ")
        if not stack:
            continue
        frames = stack.split(";")
        # only samples taken inside the measured steps
        if not any("_worker_loop" in f for f in frames):
            continue
        n = int(count_s)
        total += n
        parsed = [_frame(f) for f in frames]
        selfc[parsed[-1]] += n
        for fr in set(parsed):
            incl[fr] += n
    rows = []
    for key, n in incl.items():
        name, filename, line = key
        where = f"{_short(filename)}:{name}" + (f" (l.{line})" if line else "")
        rows.append(
            {
                "where": where,
                "line": line,
                "area": area(filename),
                "self": selfc.get(key, 0) / total,
                "cum": n / total,
                "calls": None,
            }
        )
    return rows, total


def _frame(f: str) -> tuple[str, str, int]:
    """``'name (file:line)'`` (line: the function's first line) -> (name, file, line)."""
    name, _, rest = f.partition(" (")
    rest = rest.rstrip(")")
    line = 0
    if ":" in rest and rest.rsplit(":", 1)[1].isdigit():
        rest, line_s = rest.rsplit(":", 1)
        line = int(line_s)
    return name, rest, line


def _thread_env(threads: int) -> dict[str, str]:
    env = os.environ.copy()
    for v in (
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "VECLIB_MAXIMUM_THREADS",
        "NUMEXPR_NUM_THREADS",
        "BLIS_NUM_THREADS",
        "BENCH_THREADS",
    ):
        env[v] = str(threads)
    return env


def _worker_loop(step: Callable[[], Any], seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        step()


# -- report ----------------------------------------------------------------------------------------


def by_area(rows: list[dict[str, Any]]) -> list[tuple[str, float]]:
    acc: dict[str, float] = defaultdict(float)
    for r in rows:
        acc[r["area"]] += r["self"]
    return sorted(acc.items(), key=lambda kv: -kv[1])


def render(workload: str, mode: str, rows: list[dict[str, Any]], top: int, header: str) -> str:
    out = [
        f"### {workload} ({mode})",
        "",
        header,
        "",
        "Self time by area (sums to 100%):",
        "",
        "| area | self % |",
        "|---|---|",
    ]
    out += [f"| {a} | {100 * s:.1f} |" for a, s in by_area(rows) if s >= 0.002]
    out += [
        "",
        f"Top {top} functions by self time:",
        "",
        "| function | self % | incl. % | calls/step |",
        "|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: -r["self"])[:top]:
        calls = "-" if r["calls"] is None else f"{r['calls']:.0f}"
        out.append(f"| `{r['where']}` | {100 * r['self']:.1f} | {100 * r['cum']:.1f} | {calls} |")
    core = [r for r in rows if r["area"].startswith("core/")]
    out += [
        "",
        "Core functions by inclusive time (on the stack):",
        "",
        "| function | incl. % | self % | calls/step |",
        "|---|---|---|---|",
    ]
    for r in sorted(core, key=lambda r: -r["cum"])[:top]:
        calls = "-" if r["calls"] is None else f"{r['calls']:.0f}"
        out.append(f"| `{r['where']}` | {100 * r['cum']:.1f} | {100 * r['self']:.1f} | {calls} |")
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS))
    ap.add_argument(
        "--mode",
        choices=("cprofile", "pyspy", "both", "bytecodes", "kernels", "import"),
        default="cprofile",
    )
    ap.add_argument("--seconds", type=float, default=3.0, help="time per workload")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--runs", type=int, default=12, help="fresh interpreters (--mode import)")
    ap.add_argument(
        "--baseline",
        default=None,
        help="--mode import: also run W6 with this interpreter (another revision's venv), "
        "alternating with this one",
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--peers", default=None, help="peer harness folder")
    ap.add_argument("--markdown", default=None, help="also write the report here")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    os.environ.update({k: v for k, v in _thread_env(args.threads).items() if k.endswith("THREADS")})
    _setup_path(args.peers)
    if args.worker:  # the py-spy child: run the steps un-instrumented
        step = _make_step(args.worker)
        for _ in range(3):
            step()
        _worker_loop(step, args.seconds)
        return 0
    import numpy as np

    parts = [
        f"Profile of gradhub (numpy {np.__version__}, python {sys.version.split()[0]}, "
        f"{args.threads} threads); `python benchmarks/profile_core.py "
        + " ".join(argv if argv is not None else sys.argv[1:])
        + "`",
        "",
    ]
    modes = ("cprofile", "pyspy") if args.mode == "both" else (args.mode,)
    if args.mode == "import":  # W6: fresh interpreters, no workload
        parts.append(render_import(import_parts(args.runs, baseline=args.baseline)))
        args.workloads = ""
    for w in [w for w in args.workloads.replace(",", " ").split() if w]:
        step = _make_step(w)
        if args.mode == "bytecodes":
            rows, total, c_calls = bytecode_rows(step)
            header = (
                f"One step executes {total} Python bytecodes and calls {c_calls} C "
                "functions; shares below are of the bytecodes."
            )
            parts.append(render(w, "bytecodes", rows, args.top, header))
            continue
        if args.mode == "kernels":
            times, step_s = kernel_times(step)
            parts.append(render_kernels(w, times, step_s, args.top))
            continue
        med, _ = time_steps(step, min(args.seconds, 2.0))
        on, off = gc_share(step, min(args.seconds, 3.0))
        gc_line = (
            f" Cyclic GC: mean step {on * 1e3:.3f} ms with the collector, "
            f"{off * 1e3:.3f} ms without: {100 * (1 - off / on):.0f}% of the step."
        )
        for mode in modes:
            if mode == "cprofile":
                n = max(3, int(args.seconds / max(med, 1e-6) / 3))
                rows, per_step = cprofile_rows(step, n)
                header = (
                    f"Step median without profiler {med * 1e3:.3f} ms; under cProfile "
                    f"{per_step * 1e3:.3f} ms per step ({n} steps profiled)." + gc_line
                )
            else:
                rows, total = pyspy_rows(w, args.seconds, args.peers, args.threads)
                header = (
                    f"Step median without profiler {med * 1e3:.3f} ms; {total} py-spy "
                    "samples at 1000 Hz inside the step loop." + gc_line
                )
            parts.append(render(w, mode, rows, args.top, header))
    text = "\n".join(parts)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
