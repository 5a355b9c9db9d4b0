"""The ``gradhub`` command line: ``registry``, ``plugins``, ``audit``, and plugins' commands.

Plugins add subcommands through the hook ``gradhub_add_commands`` (gradhub-nn-ops adds
``demo``); they are collected only when the command line runs a command that is not one of the
core's, or shows the list of commands.

``rich`` draws the tables and progress bars; it is imported inside the command functions only, so
``import gradhub`` (and ``import gradhub.cli``) stays light. Tables and results go to stdout,
progress bars to stderr; ``--json`` prints machine-readable results instead of tables.

Exit status: 0 on success, 1 when ``audit`` finds a failing function, 2 on a usage error (unknown
function or device, missing optional dependency), 141 when standard output is closed early
(``gradhub audit | head -1``). A plugin command's own status is passed on.

Example::

    $ gradhub audit -k Sin,Cos --order 3
    $ gradhub registry --json | python -m json.tool
    $ gradhub demo --epochs 3 --plot curves.png
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .errors import GradhubError

if TYPE_CHECKING:
    from rich.console import Console

    from .audit import CheckResult
    from .plugins import CommandDef
    from .registry import FunctionDef

#: Exit statuses.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
#: Exit status when standard output is closed early (``gradhub audit | head -1``): 128 + SIGPIPE,
#: what a shell reports for a program that SIGPIPE ended (never 1, which means a failing audit).
EXIT_BROKEN_PIPE = 141


class UsageError(GradhubError):
    """A command-line argument names something that does not exist or cannot be used."""


# -- helpers -----------------------------------------------------------------------------------


#: Width of tables written to a file or pipe (rich would use 80 columns) unless COLUMNS is set.
PIPE_WIDTH = 160


def console(stderr: bool = False) -> Console:
    """A rich console on stdout (or stderr), created at call time so redirections are honoured.

    Output that goes to a file or a pipe is laid out PIPE_WIDTH columns wide (COLUMNS overrides).
    """
    import os

    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    isatty = getattr(stream, "isatty", None)
    tty = bool(isatty and isatty())
    width = None if tty or os.environ.get("COLUMNS") else PIPE_WIDTH
    con = Console(stderr=stderr, highlight=False, width=width)
    # rich ends the program with status 1 on a broken pipe, the status of a failing audit: hand
    # it to main() instead, which ends with EXIT_BROKEN_PIPE
    con.on_broken_pipe = _raise_broken_pipe  # type: ignore[method-assign]
    return con


def _raise_broken_pipe() -> None:
    raise BrokenPipeError("standard output was closed")


def _end_broken_pipe() -> int:
    """Python's recipe for SIGPIPE (docs.python.org/3/library/signal.html#note-on-sigpipe): point
    standard output at devnull, so that the flush at exit raises nothing, and end quietly."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (captured output)
        pass
    return EXIT_BROKEN_PIPE


def _text(value: Any, style: str = "") -> Any:
    """A rich Text of ``value``: data is shown as is, never parsed as markup (``[cuda12]``)."""
    from rich.text import Text

    return Text(str(value), style=style)


def print_json(obj: Any) -> None:
    """Write ``obj`` to stdout as indented JSON (values JSON does not know written as strings)."""
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


def _split_list(values: Sequence[str] | None) -> list[str]:
    """``["a,b", "c"]`` -> ``["a", "b", "c"]`` (for options that take comma-separated lists)."""
    out: list[str] = []
    for v in values or ():
        out.extend(s.strip() for s in v.split(",") if s.strip())
    return out


def positive_int(text: str) -> int:
    """An argparse ``type=``: ``text`` as an int >= 1, else an ArgumentTypeError saying so."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {n}")
    return n


def positive_float(text: str) -> float:
    """An argparse ``type=``: ``text`` as a float > 0, else an ArgumentTypeError saying so."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not x > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return x


def non_negative_float(text: str) -> float:
    """An argparse ``type=``: ``text`` as a float >= 0, else an ArgumentTypeError saying so."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not x >= 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text}")
    return x


def _device_rows() -> list[dict[str, Any]]:
    """Every device type the registry knows, plus known devices whose plugin is not installed."""
    from .device import KNOWN_DEVICE_DISTRIBUTIONS
    from .registry import REGISTRY, _ensure_loaded

    _ensure_loaded()
    rows: list[dict[str, Any]] = []
    for kind in sorted(REGISTRY.device_types):
        ok, why = REGISTRY.availability(kind)  # a broken probe is itself a reason
        prov = REGISTRY.device_providers.get(kind)
        rows.append(
            {
                "device": kind,
                "aliases": sorted(a for a, k in REGISTRY.device_aliases.items() if k == kind),
                "provider": (prov.distribution or prov.module) if prov else "",
                "version": prov.version if prov else "",
                "available": bool(ok),
                "reason": "" if ok else why,
            }
        )
    # devices gradhub knows of whose plugin distribution is not installed (cuda and cudnn)
    known = set(REGISTRY.device_types) | set(REGISTRY.device_aliases)
    by_dist: dict[str, list[str]] = {}
    for kind, dist in sorted(KNOWN_DEVICE_DISTRIBUTIONS.items()):
        by_dist.setdefault(dist, []).append(kind)
    for dist, kinds in sorted(by_dist.items()):
        if known & set(kinds):
            continue
        rows.append(
            {
                "device": kinds[0],
                "aliases": kinds[1:],
                "provider": dist,
                "version": "",
                "available": False,
                "reason": _not_installed_reason(dist),
            }
        )
    return rows


def _not_installed_reason(dist: str) -> str:
    from .registry import installed_but_unused

    return installed_but_unused(dist) or f"not installed: pip install {dist}"


# -- gradhub registry --------------------------------------------------------------------------


def filter_rows(rows: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """The rows of :func:`gradhub.registry_table` whose function name (CamelCase or snake_case),
    provider (distribution and version) or higher-order status contains ``text``
    (case-insensitive): ``gradhub registry -k TEXT``.

    Example::

        >>> from gradhub.cli import filter_rows
        >>> rows = [{"function": "Add2", "callable": "add2", "provider": "gradhub",
        ...          "version": "0.1", "status": "verified up to order 3"}]
        >>> len(filter_rows(rows, "VERIFIED")), len(filter_rows(rows, "conv"))
        (1, 0)
    """
    t = text.lower()
    out = []
    for r in rows:
        fields = (
            r["function"],
            r.get("callable", ""),
            r["provider"],
            r.get("version", ""),
            r["status"],
        )
        if any(t in str(f).lower() for f in fields):
            out.append(r)
    return out


def cmd_registry(args: argparse.Namespace) -> int:
    """Print every registered function: provider, rule, higher-order status and devices."""
    from .registry import REGISTRY, _ensure_loaded, registry_table, rule_cell

    if args.audit:  # verify first, so the status column says verified/failed
        _ensure_loaded()
        devices = REGISTRY.usable_devices()
        run_audit([REGISTRY.functions[n] for n in sorted(REGISTRY.functions)], devices, None)
    from .audit_store import apply_stored

    _ensure_loaded()
    stored = apply_stored()  # results of `gradhub audit --save` whose code is unchanged
    rows = registry_table()
    for r in rows:
        if r["function"] in stored:
            r["status"] += f" (stored {stored[r['function']]})"
    if args.k:
        rows = filter_rows(rows, args.k)
    if args.json:
        print_json(rows)
        return EXIT_OK
    from rich.table import Table

    shown = f" matching {args.k!r}" if args.k else ""
    table = Table(title=f"gradhub registry: {len(rows)} functions{shown}", title_justify="left")
    table.add_column("function", no_wrap=True)
    table.add_column("provider")
    table.add_column("rule")
    table.add_column("higher-order status")
    table.add_column("devices")
    table.add_column("jvp")
    table.add_column("batching")
    for r in rows:
        provider = f"{r['provider']} {r['version']}".strip()
        rule = rule_cell(r)
        status = r["status"]
        style = (
            "green"
            if status.startswith("verified") or ", verified" in status
            else "red"
            if status.startswith(("failed", "no rule"))
            else "dim"
            if status == "non-differentiable"
            else "yellow"
        )
        table.add_row(
            _text(r["function"]),
            _text(provider),
            _text(rule),
            _text(status, style),
            _text(",".join(r["devices"])),
            _text(r["jvp"]),
            _text(r.get("batching", "")),
        )
    con = console()
    con.print(table)
    unusable = [f"{d['device']}: {d['reason']}" for d in _device_rows() if not d["available"]]
    if unusable:
        con.print(_text("unusable devices: " + "; ".join(unusable), "dim"))
    return EXIT_OK


# -- gradhub plugins ---------------------------------------------------------------------------


#: the detail column of a plugin that was left out, by status
_SKIPPED_DETAIL = {
    "blocked": "GRADHUB_BLOCK_PLUGINS",
    "not selected": "GRADHUB_PLUGINS",
    "autoload off": "GRADHUB_DISABLE_PLUGIN_AUTOLOAD=1 (GRADHUB_PLUGINS={name} loads it)",
}


def cmd_plugins(args: argparse.Namespace) -> int:
    """Print what was loaded, from which distribution and version, what failed and why."""
    import warnings

    from .errors import PluginLoadWarning
    from .plugins import plugin_report

    with warnings.catch_warnings():
        # failures are reported in the table below; no need to warn about them as well
        warnings.simplefilter("ignore", PluginLoadWarning)
        records = plugin_report()
    plugins: list[dict[str, Any]] = [
        {
            "name": r.name,
            "distribution": r.distribution,
            "version": r.version,
            "module": r.module,
            "status": r.status,
            "error": r.error,
            "added": dict(r.added),
        }
        for r in records
    ]
    devices = _device_rows()
    if args.json:
        print_json({"plugins": plugins, "devices": devices})
        return EXIT_OK
    from rich.table import Table

    con = console()
    t = Table(title="plugins", title_justify="left")
    for col in ("plugin", "distribution", "status"):
        t.add_column(col, no_wrap=True)
    t.add_column("registered / error", overflow="fold")
    for p in plugins:
        dist = f"{p['distribution']} {p['version']}".strip() or "?"
        if p["status"] == "loaded":
            style = "green"
            detail = (
                ", ".join(
                    f"{n} {k if n != 1 else k.rstrip('s')}" for k, n in p["added"].items() if n
                )
                or "nothing"
            )
        elif p["status"] == "failed":
            style = "red"
            detail = p["error"]
        else:
            style = "yellow"
            detail = _SKIPPED_DETAIL.get(p["status"], "").format(name=p["name"])
        t.add_row(_text(p["name"]), _text(dist), _text(p["status"], style), _text(detail))
    con.print(t)
    d = Table(title="devices", title_justify="left")
    for col in ("device", "aliases", "provider", "available", "reason"):
        d.add_column(col, overflow="fold")
    for r in devices:
        d.add_row(
            _text(r["device"]),
            _text(",".join(r["aliases"])),
            _text(f"{r['provider']} {r['version']}".strip()),
            _text("yes", "green") if r["available"] else _text("no", "red"),
            _text(r["reason"]),
        )
    con.print(d)
    return EXIT_OK


# -- gradhub audit -----------------------------------------------------------------------------


def _select_functions(patterns: Sequence[str]) -> list[FunctionDef]:
    """The functions named (CamelCase, snake_case or glob patterns); all when none are given."""
    from .registry import REGISTRY, _ensure_loaded

    _ensure_loaded()
    if not patterns:
        return [REGISTRY.functions[n] for n in sorted(REGISTRY.functions)]
    chosen: dict[str, FunctionDef] = {}
    for pat in patterns:
        if any(c in pat for c in "*?["):
            hits = [
                f
                for n, f in sorted(REGISTRY.functions.items())
                if fnmatch.fnmatchcase(n, pat) or fnmatch.fnmatchcase(f.snake, pat)
            ]
            if not hits:
                raise UsageError(f"--functions: no registered function matches {pat!r}")
        else:
            f = REGISTRY.functions.get(pat) or REGISTRY.snake.get(pat)
            if f is None:
                raise UsageError(
                    f"--functions: no function {pat!r} is registered (see `gradhub registry`)"
                )
            hits = [f]
        for f in hits:
            chosen.setdefault(f.name, f)
    return list(chosen.values())


def _select_devices(names: Sequence[str]) -> list[str]:
    """Devices to audit on: the named ones (checked usable), or every usable one.

    A name is a kind or alias (``"cpu"``, ``"cudnn"``) or a kind with an index (``"cuda:1"``); the
    result names each device once, as its kind for index 0 (``"cuda"``) and ``kind:index``
    otherwise. An unknown kind, an index the device does not have and an unusable device are
    usage errors naming ``--device``.
    """
    from .device import parse_device_name
    from .errors import DeviceError
    from .registry import REGISTRY, _ensure_loaded

    _ensure_loaded()
    if not names:
        return REGISTRY.usable_devices()  # a device whose probe raises is left out
    devices: list[str] = []
    for name in names:
        try:
            kind, index = parse_device_name(name)
            dt = REGISTRY.device_type(kind)  # DeviceError naming the distribution to install
        except DeviceError as e:
            raise UsageError(f"--device: {e}") from e
        ok, why = REGISTRY.availability(dt.kind)
        if not ok:
            raise UsageError(f"--device: device {name!r} is unusable here: {why}")
        try:
            dt.get(index)  # the index must exist (the CPU has only index 0)
        except DeviceError as e:
            raise UsageError(f"--device: {e}") from e
        except Exception as e:  # a plugin's get() failing some other way
            raise UsageError(
                f"--device: device {name!r} cannot be used: {type(e).__name__}: {e}"
            ) from e
        key = dt.kind if index == 0 else f"{dt.kind}:{index}"
        if key not in devices:
            devices.append(key)
    return devices


#: Audit result categories, in the order the summary lists them.
CATEGORIES = ("verified", "partial", "non-differentiable", "no samples", "failed")


def _outcome(r: CheckResult, fdef: FunctionDef) -> tuple[str, str]:
    """A short verdict of one audit result and its category (one of :data:`CATEGORIES`).

    Only ``failed`` (a wrong forward result, a wrong derivative, a rule that raises) makes the
    audit exit with status 1. ``partial``: verified below the requested order because the rule is
    first-order-only or the function's samples cap the order, or unverified: none of its samples
    checks a derivative (a rule that is deliberately not the derivative, such as a gradient clip).
    """
    from .audit import NO_DERIVATIVE_CHECKED

    if r.error == "no samples":
        return "no samples", "no samples"
    if r.error == NO_DERIVATIVE_CHECKED:
        return f"forward ok, unverified ({NO_DERIVATIVE_CHECKED})", "partial"
    if r.error.startswith("raised "):
        return r.error.partition(":")[0], "failed"
    if r.failed == 0:
        return "forward mismatch", "failed"
    if r.failed is not None:
        return f"failed at order {r.failed}", "failed"
    if r.error:
        return "error", "failed"
    if not fdef.differentiable:
        return "forward ok (non-differentiable)", "non-differentiable"
    if r.verified < r.order:
        if fdef.rule is not None and fdef.rule.first_order_only:
            return f"first-order-only, verified to order {r.verified}", "partial"
        return f"verified to order {r.verified} (samples cap the order)", "partial"
    return f"verified to order {r.verified}", "verified"


def _check_one(fdef: FunctionDef, device: str, order: int) -> CheckResult:
    """``check_function``, turning any exception (a rule that crashes) into a failed result."""
    from .audit import CheckResult, check_function

    t0 = time.perf_counter()
    try:
        return check_function(fdef, device, order, record=True)
    except Exception as e:
        # a rule or kernel that raises is a failing rule: record it as failing at order 1
        if fdef.differentiable:
            fdef.audit[device] = (0, 1)
        return CheckResult(
            fdef.name,
            device,
            order,
            0,
            1,
            f"raised {type(e).__name__}: {e}",
            0,
            time.perf_counter() - t0,
        )


def default_order(fdef: FunctionDef) -> int:
    """The order the audit verifies when none is asked for: 3 for elementwise functions, else 2."""
    return 3 if fdef.elementwise else 2


def run_audit(
    functions: Sequence[FunctionDef],
    devices: Sequence[str],
    order: int | None,
    on_start: Callable[[FunctionDef, str], None] | None = None,
    on_done: Callable[[CheckResult], None] | None = None,
) -> list[CheckResult]:
    """Audit each function on each device up to ``order`` (None: :func:`default_order` of each
    function); results are recorded in the registry.

    Example::

        >>> import gradhub as gh
        >>> from gradhub.cli import run_audit
        >>> from gradhub.registry import REGISTRY
        >>> [(r.function, r.verified, r.ok) for r in run_audit([REGISTRY.get("Neg")], ["cpu"], 3)]
        [('Neg', 3, True)]
        >>> REGISTRY.get("Neg").status()
        'verified cpu<=3'
        >>> gh.plugins.reset()  # forget the recorded result
    """
    results = []
    for dev in devices:
        for fdef in functions:
            if on_start is not None:
                on_start(fdef, dev)
            r = _check_one(fdef, dev, order if order is not None else default_order(fdef))
            results.append(r)
            if on_done is not None:
                on_done(r)
    return results


def cmd_audit(args: argparse.Namespace) -> int:
    """Numerically verify backward rules per device up to ``--order``; exit 1 on any failure."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    # an option given with nothing in it (-k "$UNSET") is an error, not "all" (the option absent)
    for option, values in (("--functions", args.functions), ("--device", args.device)):
        if values is not None and not _split_list(values):
            raise UsageError(
                f"{option}: empty selection ({' '.join(repr(v) for v in values)}); name at least "
                f"one, or leave {option} out to select all"
            )
    functions = _select_functions(_split_list(args.functions))
    devices = _select_devices(_split_list(args.device))
    order = args.order
    t0 = time.perf_counter()
    progress = Progress(
        SpinnerColumn(),
        TextColumn("audit {task.description:<28}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console(stderr=True),
        transient=True,
        disable=args.json or args.no_progress,
    )
    with progress:
        task = progress.add_task("", total=len(functions) * len(devices))

        def start(fdef: FunctionDef, dev: str) -> None:
            progress.update(task, description=f"{fdef.name} on {dev}")

        def done(r: CheckResult) -> None:
            progress.advance(task)

        results = run_audit(functions, devices, order, start, done)
    seconds = time.perf_counter() - t0
    if args.save:
        from .audit_store import save, store_path

        n_saved = save(functions)
        console(stderr=True).print(_text(f"stored {n_saved} results in {store_path()}", "dim"))
    by_name = {f.name: f for f in functions}
    rows = []
    counts = dict.fromkeys(CATEGORIES, 0)
    for r in results:
        verdict, category = _outcome(r, by_name[r.function])
        counts[category] += 1
        rows.append(
            dict(r.as_dict(), verdict=verdict, category=category, failure=category == "failed")
        )
    n_failed = counts["failed"]
    if args.json:
        print_json(
            {
                "order": order,
                "devices": list(devices),
                "functions": len(functions),
                "failed": n_failed,
                "counts": counts,
                "seconds": round(seconds, 3),
                "results": rows,
            }
        )
        return EXIT_FAILED if n_failed else EXIT_OK

    from rich.table import Table

    con = console()
    order_text = str(order) if order is not None else "2 (3 for elementwise functions)"
    title = (
        f"gradhub audit: {len(functions)} functions x {len(devices)} device(s), order {order_text}"
    )
    # the title on its own line, never wrapped at the width of the (narrow) table
    con.print(_text(title), soft_wrap=True)
    table = Table()
    table.add_column("function", no_wrap=True)
    table.add_column("device")
    table.add_column("result")
    table.add_column("samples", justify="right")
    table.add_column("time", justify="right")
    for row in rows:
        style = {"failed": "red", "verified": "green", "non-differentiable": "dim"}.get(
            row["category"], "yellow"
        )
        table.add_row(
            _text(row["function"]),
            _text(row["device"]),
            _text(row["verdict"], style),
            str(row["samples"]),
            f"{row['seconds']:.2f}s",
        )
    con.print(table)
    failures = [row for row in rows if row["failure"]]
    for row in failures:
        line = _text("FAILED", "red")
        line.append(f" {row['function']} on {row['device']}: {row['error']}")
        con.print(line, overflow="fold")
    labels = {
        "verified": f"verified to order {order_text}",
        "partial": "verified to a lower order",
        "non-differentiable": "non-differentiable (forward checked)",
        "no samples": "without samples (not checked)",
        "failed": "failed",
    }
    parts = [
        f"{counts[c]} {labels[c]}" for c in CATEGORIES if counts[c] or c in ("verified", "failed")
    ]
    summary = ", ".join(parts) + f" (of {len(rows)} checks) in {seconds:.1f}s"
    con.print(_text(summary, "red" if n_failed else "green"))
    return EXIT_FAILED if n_failed else EXIT_OK


# -- parser and entry point --------------------------------------------------------------------


def _registry_arguments(r: argparse.ArgumentParser) -> None:
    r.add_argument("--json", action="store_true", help="print the rows as JSON")
    r.add_argument(
        "-k",
        metavar="TEXT",
        default="",
        help="show only the functions whose name, provider or status contains TEXT "
        "(case-insensitive), such as -k conv, -k gradhub-nn-ops, -k failed",
    )
    r.add_argument(
        "--audit",
        action="store_true",
        help="audit every function first (as `gradhub audit` with its default "
        "orders), so the status column says verified or failed",
    )


def _plugins_arguments(pl: argparse.ArgumentParser) -> None:
    pl.add_argument("--json", action="store_true", help="print the report as JSON")


def _audit_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument(
        "--order",
        type=positive_int,
        default=None,
        help="highest derivative order to verify (default: 3 for elementwise "
        "functions, 2 for the others)",
    )
    a.add_argument(
        "-k",
        "--functions",
        action="append",
        metavar="NAME,...",
        help="functions to audit (names or glob patterns, comma-separated; "
        "repeatable; default all)",
    )
    a.add_argument(
        "--device",
        action="append",
        metavar="DEV,...",
        help="devices to audit on (comma-separated; default every usable device)",
    )
    a.add_argument("--json", action="store_true", help="print the results as JSON")
    a.add_argument(
        "--save",
        action="store_true",
        help="store the results (keyed by each provider's version and a hash of its files) "
        "so that `gradhub registry` shows them in later processes while the code is unchanged",
    )
    a.add_argument("--no-progress", action="store_true", help="do not show the progress bar")


def core_commands() -> list[CommandDef]:
    """The core's own subcommands: ``registry``, ``plugins`` and ``audit`` (plugins add more
    through the hook ``gradhub_add_commands``)."""
    from .plugins import CommandDef
    from .registry import Provider

    core = Provider("gradhub", __version__, "gradhub.cli")
    return [
        CommandDef(
            "registry",
            cmd_registry,
            "show every registered function and its rule status",
            _registry_arguments,
            "Show every registered function: its provider and version, whether it has a "
            "backward rule, its higher-order status and its devices.",
            core,
        ),
        CommandDef(
            "plugins",
            cmd_plugins,
            "show loaded and failed plugins and device availability",
            _plugins_arguments,
            "Show each plugin (loaded, failed with the reason, blocked, not selected or "
            "autoload off) with its distribution and version, and every device with "
            "whether it is usable here and why not.",
            core,
        ),
        CommandDef(
            "audit",
            cmd_audit,
            "numerically verify every backward rule",
            _audit_arguments,
            "Numerically verify the backward rules of registered functions (forward vs "
            "reference, then gradcheck up to --order) on each device. Results are "
            "recorded in the registry. Exit status 1 if any fails.",
            core,
        ),
    ]


#: commands that moved to a plugin distribution: ``gradhub NAME`` without it says what to install
MOVED_COMMANDS = {
    "demo": ("gradhub-nn-ops", "pip install 'gradhub-nn-ops[demo]'"),
}


def build_parser(plugin_commands: bool = True) -> argparse.ArgumentParser:
    """The argument parser of the ``gradhub`` command: the core's commands
    (:func:`core_commands`) and, when ``plugin_commands``, those the loaded plugins add
    (:func:`gradhub.plugins.plugin_commands`, which loads the plugins)."""
    import platform

    import numpy as np

    p = argparse.ArgumentParser(
        prog="gradhub",
        description="gradhub: automatic differentiation to any order, built from plugins.",
    )
    p.add_argument(
        "--version",
        action="version",
        version=f"gradhub {__version__} "
        f"(Python {platform.python_version()}, numpy {np.__version__})",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    commands = {c.name: c for c in core_commands()}
    if plugin_commands:
        from .plugins import plugin_commands as added

        commands.update((c.name, c) for c in added(taken=tuple(commands)))
    for cmd in commands.values():
        sp = sub.add_parser(cmd.name, help=cmd.help, description=cmd.description or cmd.help)
        if cmd.add_arguments is not None:
            cmd.add_arguments(sp)
        sp.set_defaults(func=cmd.run)
    return p


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return subs.choices  # type: ignore[no-any-return]


def _command_word(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (its first word that is not an option), if any."""
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``gradhub`` command with ``argv`` (default ``sys.argv[1:]``); return the exit status.

    Example::

        >>> from gradhub.cli import main
        >>> main(["audit", "-k", "NoSuchFunction"])  # the error goes to stderr
        2
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    word = _command_word(argv)
    # the plugins' commands are collected (which loads the plugins) only for a command that is
    # not the core's own, or for the help that lists every command
    core = word in {c.name for c in core_commands()} if word is not None else "--version" in argv
    parser = build_parser(plugin_commands=not core)
    if word in MOVED_COMMANDS and word not in _subcommands(parser):
        dist, install = MOVED_COMMANDS[word]
        sys.stderr.write(
            f"gradhub {word}: error: the command {word!r} comes with the "
            f"distribution {dist}, which is not installed or not loaded (see "
            f"`gradhub plugins`): {install}\n"
        )
        return EXIT_USAGE
    args, extra = parser.parse_known_args(argv)
    if extra:  # reported by the subcommand's parser, so the message names it (gradhub audit)
        (_subcommands(parser).get(args.command) or parser).error(
            "unrecognized arguments: " + " ".join(extra)
        )
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe raises here, not in the interpreter's flush at exit
        return status
    except BrokenPipeError:
        return _end_broken_pipe()
    except GradhubError as e:
        sys.stderr.write(f"gradhub {args.command}: error: {e}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write(f"gradhub {args.command}: interrupted\n")
        return 130


if __name__ == "__main__":  # pragma: no cover - ``python -m gradhub.cli``
    sys.exit(main())
