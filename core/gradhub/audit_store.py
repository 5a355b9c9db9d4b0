"""Stored audit results: ``gradhub audit --save`` and the ``(stored DATE)`` of ``gradhub registry``.

An audit's results live in the process that ran it. ``gradhub audit --save`` also writes them to a
JSON file (``$GRADHUB_AUDIT_STORE``, else ``$XDG_CACHE_HOME/gradhub/audit.json``, else
``~/.cache/gradhub/audit.json``), each result keyed by the function, the device and a
*fingerprint*: the name and version of every distribution whose code the result depends on (the
function's provider, its backward rule's provider, and gradhub itself, which runs the engine)
with a SHA-256 hash of the Python files of its package. ``gradhub registry`` in a later process
shows a stored result as ``verified cpu<=3 (stored 2026-11-25)`` only when the fingerprint is the
current one: any change to one of those files (or another version) makes the result stale, and
the function shows ``unverified`` again. Functions registered by a program (no package files)
are never stored.
"""

from __future__ import annotations

import datetime
import hashlib
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from ._version import __version__
from .registry import REGISTRY, FunctionDef, Provider, rule_kernels

_FORMAT = 1
_PKG_HASH: dict[str, str | None] = {}


def store_path() -> Path:
    """The file holding stored audit results (see the module's description)."""
    env = os.environ.get("GRADHUB_AUDIT_STORE")
    if env:
        return Path(env)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "gradhub" / "audit.json"


def _package_hash(package: str) -> str | None:
    """SHA-256 over the relative paths and contents of the ``.py`` files of ``package`` (None
    when it has no files: a module defined in a program)."""
    if package in _PKG_HASH:
        return _PKG_HASH[package]
    digest: str | None = None
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        roots = list(spec.submodule_search_locations or [])
        files: list[tuple[str, Path]] = []
        if roots:
            for root in roots:
                for p in sorted(Path(root).rglob("*.py")):
                    files.append((p.relative_to(root).as_posix(), p))
        elif spec.origin and spec.origin.endswith(".py"):
            files.append((os.path.basename(spec.origin), Path(spec.origin)))
        if files:
            h = hashlib.sha256()
            for rel, p in sorted(files):
                h.update(rel.encode() + b"\0" + p.read_bytes() + b"\0")
            digest = h.hexdigest()
    _PKG_HASH[package] = digest
    return digest


def _provider_key(p: Provider) -> str | None:
    package = (p.module or ("gradhub" if p.distribution == "gradhub" else "")).split(".")[0]
    if not package:
        return None
    digest = _package_hash(package)
    if digest is None:
        return None
    return f"{p.distribution}=={p.version}:{package}:{digest}"


def fingerprint(fdef: FunctionDef) -> str | None:
    """The fingerprint of ``fdef``'s code (None when some of it has no package files)."""
    providers = [Provider("gradhub", __version__, "gradhub")]
    providers.append(fdef.provider)
    if fdef.rule is not None:
        providers.append(fdef.rule.provider)
    if fdef.jvp_rule is not None:  # the audit checks the JVP rule too
        providers.append(fdef.jvp_rule.provider)
    providers.extend(rule_kernels(fdef).values())  # and first order on each device by its kernel
    keys = set()
    for p in providers:
        k = _provider_key(p)
        if k is None:
            return None
        keys.add(k)
    return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        return {}
    results = data.get("results")
    return results if isinstance(results, dict) else {}


def save(functions: list[FunctionDef], date: str | None = None) -> int:
    """Store the audit results recorded in ``functions`` (``fdef.audit``); return how many
    (function, device) results were stored. Earlier results of other functions are kept."""
    path = store_path()
    results = _read(path)
    day = date or datetime.date.today().isoformat()
    n = 0
    for fdef in functions:
        fp = fingerprint(fdef)
        if fp is None:
            continue
        for device, (verified, failed) in fdef.audit.items():
            results[f"{fdef.name}|{device}"] = {
                "fingerprint": fp,
                "verified": verified,
                "failed": failed,
                "date": day,
            }
            n += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"format": _FORMAT, "results": results}, indent=1), "utf-8")
    os.replace(tmp, path)
    return n


def apply_stored() -> dict[str, str]:
    """Put the stored results whose fingerprint is current into the audit records of the
    functions that this process has not audited; return function name -> the stored date."""
    results = _read(store_path())
    audited_here = {name for name, f in REGISTRY.functions.items() if f.audit}
    applied: dict[str, str] = {}
    for key, entry in results.items():
        name, _, device = key.partition("|")
        fdef = REGISTRY.functions.get(name)
        if fdef is None or name in audited_here or not isinstance(entry, dict):
            continue
        if entry.get("fingerprint") != fingerprint(fdef):
            continue  # stale: the code changed since it was audited
        verified, failed = entry.get("verified"), entry.get("failed")
        if not isinstance(verified, int) or not (failed is None or isinstance(failed, int)):
            continue  # not written by save()
        fdef.audit[device] = (verified, failed)
        applied[name] = str(entry.get("date", "?"))
    return applied


__all__ = ["apply_stored", "fingerprint", "save", "store_path"]
