"""The ``gradhub`` command line: registry, plugins and audit, in-process and as a real script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradhub as gh
import gradhub.plugins
import pytest
from child_helpers import run_python
from gradhub.cli import main


@pytest.fixture(autouse=True)
def _fresh_registry() -> Iterator[None]:
    """Every test starts and ends with a freshly loaded registry (no overrides, no audit)."""
    gradhub.plugins.reset()
    yield
    gradhub.plugins.reset()


def _json(capsys: pytest.CaptureFixture[str], argv: list[str], status: int = 0) -> Any:
    capsys.readouterr()
    assert main(argv) == status
    return json.loads(capsys.readouterr().out)


def _rows(capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, Any]]:
    return {r["function"]: r for r in _json(capsys, ["registry", "--json"])}


def _script() -> list[str]:
    """The installed console script ``gradhub`` (next to this Python, else on PATH)."""
    exe = Path(sys.executable).with_name("gradhub")
    found = str(exe) if exe.exists() else shutil.which("gradhub")
    if found is None:
        pytest.skip("the gradhub console script is not installed")
    return [found]


def _run_script(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="160")
    return subprocess.run([*_script(), *args], capture_output=True, text=True, timeout=120, env=env)


# -- wrong and right third-party rules for Neg (d(-x)/dx = -1) ---------------------------------


def _neg_wrong_sign(gy, inputs, input_shapes, outputs, output_shapes):  # type: ignore[no-untyped-def]
    return [gy[0]]


def _neg_right(gy, inputs, input_shapes, outputs, output_shapes):  # type: ignore[no-untyped-def]
    return [gy[0] * -1.0]


def _neg_crashes(gy, inputs, input_shapes, outputs, output_shapes):  # type: ignore[no-untyped-def]
    raise ZeroDivisionError("deliberate failure inside the rule")


def _mul_wrong_second_order(gy, inputs, input_shapes, outputs, output_shapes):  # type: ignore[no-untyped-def]
    # right values at first order, but computed from detached inputs: the second order is wrong
    from gradhub._builtin import sum_to

    a, b = inputs
    ga = sum_to(gy[0] * b.detach(), input_shapes[0])
    gb = sum_to(gy[0] * a.detach(), input_shapes[1])
    return [ga, gb]


# -- --version and usage ------------------------------------------------------------------------


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith(f"gradhub {gh.__version__} ")


@pytest.mark.nn_ops
def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "registry" in err and "audit" in err and "demo" in err


def test_importing_gradhub_and_cli_does_not_import_rich() -> None:
    code = (
        "import sys, gradhub, gradhub.cli; "
        "bad = [m for m in ('rich', 'sklearn', 'matplotlib') if m in sys.modules]; "
        "assert not bad, bad"
    )
    run_python(code, timeout=60)


# -- registry -----------------------------------------------------------------------------------


def test_registry_table(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # wide enough for every header (a usable GPU adds a
    assert main(["registry"]) == 0  # device to each row, and rich shortens headers)
    out = capsys.readouterr().out
    for word in (
        "function",
        "provider",
        "rule",
        "higher-order status",
        "devices",
        "Add2",
        f"gradhub {gh.__version__}",
        "unverified",
    ):
        assert word in out


def test_registry_json_matches_registry_table(capsys: pytest.CaptureFixture[str]) -> None:
    rows = _json(capsys, ["registry", "--json"])
    assert rows == json.loads(json.dumps(gh.registry_table()))
    add2 = next(r for r in rows if r["function"] == "Add2")
    assert add2["provider"] == "gradhub" and add2["version"] == gh.__version__
    assert add2["rule"] == "yes" and add2["status"] == "unverified"
    assert "cpu" in add2["devices"]


# -- plugins ------------------------------------------------------------------------------------


def test_plugins_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "gradhub" in out and "loaded" in out and "devices" in out and "cpu" in out


def test_plugins_json(capsys: pytest.CaptureFixture[str]) -> None:
    report = _json(capsys, ["plugins", "--json"])
    core = next(p for p in report["plugins"] if p["name"] == "gradhub")
    assert core["status"] == "loaded" and core["version"] == gh.__version__
    assert core["added"]["functions"] >= 14
    cpu = next(d for d in report["devices"] if d["device"] == "cpu")
    assert cpu["available"] is True and cpu["reason"] == ""
    for d in report["devices"]:
        assert d["available"] or d["reason"], d  # an unusable device always says why
    try:
        import gradhub_cuda  # noqa: F401
    except ImportError:
        cuda = next(d for d in report["devices"] if d["device"] == "cuda")
        assert "pip install gradhub-cuda" in cuda["reason"] and "cudnn" in cuda["aliases"]


def test_plugins_reports_a_failed_plugin_and_why(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the error is printed whole, not cut by the width
    broken = types.ModuleType("broken_plugin_for_cli_test")

    @gh.hookimpl
    def gradhub_add_functions(register: Any) -> None:
        raise RuntimeError("this plugin is broken on purpose [see extra]")

    broken.gradhub_add_functions = gradhub_add_functions  # type: ignore[attr-defined]
    gradhub.plugins.reset()
    with pytest.warns(gh.PluginLoadWarning, match="broken on purpose"):
        gradhub.plugins.load_plugins(extra=[("broken_cli", broken)])
    report = _json(capsys, ["plugins", "--json"])
    rec = next(p for p in report["plugins"] if p["name"] == "broken_cli")
    assert rec["status"] == "failed"
    assert "RuntimeError" in rec["error"] and "broken on purpose" in rec["error"]
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "broken_cli" in out and "failed" in out
    assert "broken on purpose [see extra]" in out  # printed as is, not read as rich markup


# -- audit --------------------------------------------------------------------------------------


def test_audit_verifies_and_records_in_registry(capsys: pytest.CaptureFixture[str]) -> None:
    res = _json(capsys, ["audit", "--device", "cpu", "-k", "Neg,Mul2,Sum", "--json"])
    assert res["failed"] == 0 and res["order"] is None and res["devices"] == ["cpu"]
    assert {r["function"] for r in res["results"]} == {"Neg", "Mul2", "Sum"}
    # by default elementwise functions are verified to order 3, the others to order 2
    want = {"Neg": 3, "Mul2": 3, "Sum": 2}
    for r in res["results"]:
        n = want[r["function"]]
        assert r["ok"] and r["verified"] == n and r["samples"] > 0
        assert r["verdict"] == f"verified to order {n}"
    rows = _rows(capsys)
    assert rows["Neg"]["status"] == "verified cpu<=3"
    assert rows["Sum"]["status"] == "verified cpu<=2"
    assert rows["Add2"]["status"] == "unverified"  # not audited


def test_audit_order_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["audit", "--device", "cpu", "--functions", "Sum", "-k", "mul_scalar", "--order", "3"])
        == 0
    )
    out = capsys.readouterr().out
    assert "Sum" in out and "MulScalar" in out and "verified to order 3" in out
    assert "2 verified to order 3, 0 failed" in out
    assert _rows(capsys)["Sum"]["status"] == "verified cpu<=3"


def test_audit_glob_pattern(capsys: pytest.CaptureFixture[str]) -> None:
    res = _json(capsys, ["audit", "--device", "cpu", "-k", "*Scalar", "--order", "1", "--json"])
    names = {r["function"] for r in res["results"]}
    assert {"AddScalar", "MulScalar", "PowScalar", "RDivScalar", "RPowScalar"} <= names
    assert all(n.endswith("Scalar") for n in names)
    assert not any(r["failure"] for r in res["results"])
    assert sum(res["counts"].values()) == len(names)


def test_audit_fails_on_a_wrong_third_party_rule(capsys: pytest.CaptureFixture[str]) -> None:
    gh.register("Neg", _neg_wrong_sign, override=True)
    res = _json(capsys, ["audit", "--device", "cpu", "-k", "Neg,Add2", "--json"], status=1)
    assert res["failed"] == 1
    by = {r["function"]: r for r in res["results"]}
    assert by["Neg"]["failure"] and by["Neg"]["failed"] == 1 and not by["Neg"]["ok"]
    assert "Neg" in by["Neg"]["error"] and "order 1" in by["Neg"]["error"]
    assert by["Add2"]["ok"]
    rows = _rows(capsys)
    assert rows["Neg"]["status"] == "failed (cpu@1)"
    assert __name__ in rows["Neg"]["rule_provider"]
    assert rows["Add2"]["status"] == "verified cpu<=3"
    # the table names the failure too, and the exit status is 1
    assert main(["audit", "--device", "cpu", "-k", "Neg"]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "failed at order 1" in out and "1 failed" in out


def test_audit_catches_a_wrong_second_order(capsys: pytest.CaptureFixture[str]) -> None:
    gh.register("Mul2", _mul_wrong_second_order, override=True, need_inputs=(0, 1))
    res = _json(capsys, ["audit", "--device", "cpu", "-k", "Mul2", "--order", "1", "--json"])
    assert res["failed"] == 0  # first order is right
    res = _json(capsys, ["audit", "--device", "cpu", "-k", "Mul2", "--json"], status=1)
    (r,) = res["results"]
    assert r["failed"] == 2 and r["verified"] == 1
    assert _rows(capsys)["Mul2"]["status"] == "failed (cpu@2)"


def test_audit_verifies_a_right_third_party_rule(capsys: pytest.CaptureFixture[str]) -> None:
    gh.register("Neg", _neg_right, override=True, need_inputs=())
    res = _json(capsys, ["audit", "--device", "cpu", "-k", "Neg", "--order", "3", "--json"])
    assert res["failed"] == 0 and res["results"][0]["verified"] == 3
    row = _rows(capsys)["Neg"]
    assert row["status"] == "verified cpu<=3" and __name__ in row["rule_provider"]
    assert row["overrides"]  # the override is visible in the registry


def test_audit_a_crashing_rule_is_a_failure(capsys: pytest.CaptureFixture[str]) -> None:
    gh.register("Neg", _neg_crashes, override=True)
    res = _json(capsys, ["audit", "--device", "cpu", "-k", "Neg", "--json"], status=1)
    (r,) = res["results"]
    assert r["failure"] and "ZeroDivisionError" in r["error"]
    assert "deliberate failure" in r["error"]
    assert _rows(capsys)["Neg"]["status"].startswith("failed")


def test_audit_unknown_function_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "-k", "NoSuchFunction"]) == 2
    err = capsys.readouterr().err
    assert "audit" in err and "NoSuchFunction" in err
    assert main(["audit", "-k", "Nope*"]) == 2
    assert "Nope*" in capsys.readouterr().err


def test_audit_unknown_device_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "-k", "Neg", "--device", "tpu"]) == 2
    err = capsys.readouterr().err
    assert "'tpu'" in err and "cpu" in err


def test_audit_rejects_a_bad_order(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["audit", "--order", "0"])
    assert e.value.code == 2
    assert "--order" in capsys.readouterr().err


def test_audit_explicit_cpu_device(capsys: pytest.CaptureFixture[str]) -> None:
    res = _json(capsys, ["audit", "-k", "Reshape", "--device", "cpu", "--json"])
    assert res["devices"] == ["cpu"] and res["results"][0]["ok"]


# -- the real console script --------------------------------------------------------------------


def test_script_version() -> None:
    p = _run_script("--version")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"gradhub {gh.__version__}")


def test_script_registry() -> None:
    p = _run_script("registry", "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert {"Add2", "Sum", "Reshape"} <= {r["function"] for r in rows}


def test_script_plugins() -> None:
    p = _run_script("plugins")
    assert p.returncode == 0, p.stderr
    assert "gradhub" in p.stdout and "devices" in p.stdout


def test_script_audit() -> None:
    p = _run_script("audit", "-k", "Add2,Sum", "--order", "2")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "2 verified to order 2, 0 failed" in p.stdout
    p = _run_script("audit", "-k", "NoSuchFunction")
    assert p.returncode == 2 and "NoSuchFunction" in p.stderr


def test_audit_a_crashing_kernel_is_a_failure_not_a_crash(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import numpy as np

    plugin = types.ModuleType("crashy_plugin_for_cli_test")

    def forward(xp: Any, x: Any) -> Any:
        raise ZeroDivisionError("kernel failure on purpose")

    def samples(rng: np.random.Generator) -> Iterator[gh.Sample]:
        yield gh.Sample((rng.standard_normal(3),))

    @gh.hookimpl
    def gradhub_add_functions(register: Any) -> None:
        register.function(
            "CrashyKernel", forward, rule=_neg_right, samples=samples, reference=np.negative
        )

    plugin.gradhub_add_functions = gradhub_add_functions  # type: ignore[attr-defined]
    gradhub.plugins.reset()
    gradhub.plugins.load_plugins(extra=[("crashy", plugin)])
    res = _json(capsys, ["audit", "--device", "cpu", "-k", "CrashyKernel,Neg", "--json"], status=1)
    by = {r["function"]: r for r in res["results"]}
    assert by["CrashyKernel"]["verdict"] == "raised ZeroDivisionError"
    assert "kernel failure on purpose" in by["CrashyKernel"]["error"]
    assert by["Neg"]["ok"]  # the audit went on after the crash
    # the forward kernel raised: recorded as failing at order 0 (the forward), as the JSON says
    assert by["CrashyKernel"]["failed"] == 0
    assert _rows(capsys)["CrashyKernel"]["status"] == "failed (cpu@0)"


@pytest.mark.nn_ops
def test_registry_audit_verifies_the_whole_library(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 3's bar: every function of gradhub-nn-ops verified on CPU to order 2, elementwise
    ones to order 3, the rest non-differentiable; a function whose rule is deliberately not the
    derivative (a gradient clip: every sample skips the derivative) stays unverified."""
    from gradhub.audit import samples_of
    from gradhub.registry import REGISTRY

    rows = _json(capsys, ["registry", "--audit", "--json"])
    unchecked = []
    for r in rows:
        fdef = REGISTRY.get(r["function"])
        if not fdef.differentiable:
            assert r["status"] == "non-differentiable", r
        elif all(s.grad_inputs is not None and not s.grad_inputs for s in samples_of(fdef, 0)):
            assert r["status"] == "unverified", r
            unchecked.append(r["function"])
        else:
            want = 3 if fdef.elementwise else 2
            assert r["status"].startswith("verified") and f"cpu<={want}" in r["status"], r
            assert "failed" not in r["status"], r
    assert {r["provider"] for r in rows} == {"gradhub", "gradhub-nn-ops"}
    # the functions of gradhub_nn_ops.gradient_flow whose rule changes the gradient
    assert sorted(unchecked) == ["ClipGradByNorm", "ClipGradByValue", "TopKGrad"]
