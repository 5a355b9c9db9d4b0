"""Stored audit results (gradhub.audit_store): `gradhub audit --save`, `gradhub registry` showing
"(stored DATE)" in a later process, and stale results dropped after a change of a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from plugin_helpers import make_dist

NEG_RULE = """
from gradhub import hookimpl

def neg_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, **attrs):
    return [-grad_outputs[0]]

@hookimpl
def gradhub_add_backward_rules(register):
    register.rule("Neg", neg_backward, need_inputs=(), need_outputs=(), override=True)
"""


def _cli(site: Path, store: Path, *argv: str) -> str:
    env = dict(os.environ)
    env.update(
        GRADHUB_AUDIT_STORE=str(store),
        GRADHUB_PLUGINS="fake-neg",
        PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
    )
    env.pop("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", None)
    env.pop("GRADHUB_BLOCK_PLUGINS", None)
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from gradhub.cli import main; sys.exit(main(sys.argv[1:]))",
            *argv,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr


def _status(site: Path, store: Path, name: str) -> str:
    rows = json.loads(_cli(site, store, "registry", "-k", name, "--json"))
    return next(r["status"] for r in rows if r["function"] == name)


def test_saved_results_show_in_a_later_process_until_a_file_changes(site: Path, tmp_path: Path):
    make_dist(site, "fake-neg", "fake_neg_mod", NEG_RULE)
    store = tmp_path / "store" / "audit.json"
    assert _status(site, store, "Neg") == "unverified"
    out = _cli(
        site, store, "audit", "--functions", "Neg,Sum", "--order", "2", "--save", "--no-progress"
    )
    assert "stored 2 results in" in out
    saved = json.loads(store.read_text())
    assert set(saved["results"]) == {"Neg|cpu", "Sum|cpu"}
    # a later process: verified, with the date it was stored
    neg = _status(site, store, "Neg")
    assert neg.startswith("verified cpu<=2 (stored ") and neg.endswith(")")
    assert _status(site, store, "Sum").startswith("verified cpu<=2 (stored ")
    stored_rows = json.loads(_cli(site, store, "registry", "-k", "stored", "--json"))
    assert sorted(r["function"] for r in stored_rows) == ["Neg", "Sum"]
    # a change of the file of Neg's rule provider makes its stored result stale; Sum's stays
    mod = site / "fake_neg_mod.py"
    mod.write_text(mod.read_text() + "\n# changed\n")
    assert _status(site, store, "Neg") == "unverified"
    assert _status(site, store, "Sum").startswith("verified cpu<=2 (stored ")


def test_a_corrupted_store_is_ignored(site: Path, tmp_path: Path):
    make_dist(site, "fake-neg", "fake_neg_mod", NEG_RULE)
    store = tmp_path / "audit.json"
    store.write_text("{not json")
    assert _status(site, store, "Sum") == "unverified"
    store.write_text(
        json.dumps(
            {
                "format": 1,
                "results": {"Sum|cpu": {"fingerprint": "x", "verified": 3, "failed": None}},
            }
        )
    )
    assert _status(site, store, "Sum") == "unverified"  # a fingerprint of other code


def test_fingerprint_of_program_registered_code_is_none(fresh_plugins):
    from gradhub.audit_store import _package_hash, fingerprint
    from gradhub.registry import REGISTRY
    from plugin_helpers import identity_kernel, identity_rule, in_memory_plugin, load_with_warnings

    assert _package_hash("no_such_package_xyz") is None
    fp = fingerprint(REGISTRY.get("Sum"))
    assert isinstance(fp, str) and len(fp) == 64 and fingerprint(REGISTRY.get("Sum")) == fp

    def functions(register):
        register.function("ProgIdentity", identity_kernel, rule=identity_rule)

    rec, warnings = load_with_warnings(
        "prog_only_mod", in_memory_plugin("prog_only_mod", functions)
    )
    assert rec.status == "loaded" and not warnings
    assert fingerprint(REGISTRY.get("ProgIdentity")) is None  # no files: never stored
