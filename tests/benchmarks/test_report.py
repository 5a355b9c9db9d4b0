"""Tests of the benchmark report logic (targets, ratios, checks) on synthetic harness JSON.

Run alone with ``python -m pytest -q tests/benchmarks/test_report.py``. Needs neither torch
nor, except for the W6 profile, the function library.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import run


def _timing(fw: str, wl: str, *medians_s: float, **extra: Any) -> list[dict[str, Any]]:
    return [
        {
            "framework": fw,
            "workload": wl,
            "status": "ok",
            "median_s": m,
            "min_s": m,
            "max_s": m,
            "round": i,
            **extra,
        }
        for i, m in enumerate(medians_s)
    ]


def _data(ours_w1_s: float = 0.5e-3, check: str = "match") -> dict[str, Any]:
    results = (
        _timing("gradhub", "tiny_ops", ours_w1_s, ours_w1_s * 3, ours_w1_s)
        + _timing("torch", "tiny_ops", 1e-3, 1e-3, 1e-3)
        + _timing("numpy-manual", "tiny_ops", 1e-4)
        + _timing("gradhub", "mlp", 10e-3)
        + _timing("numpy-manual", "mlp", 9e-3)
        + _timing("torch", "mlp", 8e-3)
        + _timing("gradhub", "import", 0.09, import_minus_startup_s=0.08)
        + _timing("gradhub", "deep_mlp_mem", 0.1)
        + _timing("numpy-manual", "deep_mlp_mem", 0.1)
        + _timing("torch", "deep_mlp_mem", 0.09)
    )
    checks = [
        {"framework": "gradhub", "workload": w, "status": check, "max_rel": 1e-6}
        for w in ("tiny_ops", "mlp", "deep_mlp_mem")
    ]
    memory = [
        {"framework": "gradhub", "workload": "deep_mlp_mem", "status": "ok", "mem_peak_mb": 80.0},
        {"framework": "torch", "workload": "deep_mlp_mem", "status": "ok", "mem_peak_mb": 78.0},
    ]
    meta = {
        "frameworks": {"gradhub": {}, "torch": {}, "numpy-manual": {}},
        "workloads": {
            w: {"n_ops": 100} if w == "tiny_ops" else {}
            for w in ("tiny_ops", "mlp", "import", "deep_mlp_mem")
        },
        "threads": 2,
        "rounds": 3,
    }
    return {"meta": meta, "results": results, "checks": checks, "memory": memory}


def _rows(data: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    cells = run.summarize(data)
    rows = run.evaluate(cells, "cpu", list(data["meta"]["workloads"]))
    return {(r["target"].workload, r["target"].metric): r for r in rows}


def test_ratios_use_the_median_over_rounds_and_the_right_baseline() -> None:
    rows = _rows(_data())
    w1 = rows[("tiny_ops", "per_op")]
    assert w1["value"] == pytest.approx(5.0)  # median of 0.5, 1.5, 0.5 ms over 100 functions
    assert w1["measured"] == pytest.approx(0.5) and w1["met"] is True  # vs torch 10 us
    w2 = rows[("mlp", "time")]
    assert w2["measured"] == pytest.approx(10 / 9) and w2["met"] is False  # vs numpy-manual
    assert rows[("deep_mlp_mem", "time")]["met"] is True
    mem = rows[("deep_mlp_mem", "mem")]
    assert mem["measured"] == pytest.approx(80 / 78) and mem["met"] is False
    w6 = rows[("import", "import_net")]  # net of the bare interpreter start
    assert w6["measured"] == pytest.approx(80.0) and w6["met"] is True


def test_a_mismatched_output_makes_the_target_unmet() -> None:
    rows = _rows(_data(check="MISMATCH"))
    w1 = rows[("tiny_ops", "per_op")]
    assert w1["measured"] == pytest.approx(0.5)
    assert w1["checked"] is False and w1["met"] is False


def test_the_markdown_table_says_which_targets_are_met() -> None:
    text, _ = run.render(_data(), "cpu", ["tiny_ops", "mlp", "import", "deep_mlp_mem"])
    line = next(ln for ln in text.splitlines() if ln.startswith("| W1 "))
    assert "0.50x torch" in line and "<= 0.8x torch" in line and line.endswith("**yes** |")
    line = next(ln for ln in text.splitlines() if ln.startswith("| W2 "))
    assert "1.11x numpy-manual" in line and line.endswith("| no |")
    text, _ = run.render(_data(check="MISMATCH"), "cpu", ["tiny_ops"])
    assert "no (outputs MISMATCH)" in text


def _peers() -> Path:
    """The peer benchmark harness beside the repository (``../shared/bench/peers``, or
    ``GRADHUB_PEERS_DIR``); the test is skipped where there is none."""
    try:
        return run.find_peers()
    except FileNotFoundError:
        pytest.skip(
            "the peer benchmark harness (../shared/bench/peers) is not beside the repository"
        )


def test_the_harness_is_found_and_a_bad_folder_is_an_error(tmp_path: Path) -> None:
    peers = _peers()
    assert (peers / "harness.py").is_file()
    with pytest.raises(FileNotFoundError, match="no peer harness"):
        run.find_peers(str(tmp_path))


def test_the_harness_command_runs_every_row_with_check_first() -> None:
    args = run.parse_args(["--quick", "--workloads", "tiny_ops,nth_sin"])
    cmd = run.harness_command(args, Path("/peers"), Path("/tmp/o.json"))
    assert "--check" in cmd and cmd[cmd.index("--rounds") + 1] == "1"
    assert cmd[cmd.index("--frameworks") + 1] == "gradhub,gradhub-static,torch,numpy-manual"
    assert f"gradhub=fw_gradhub@{sys.executable}" in cmd
    assert f"gradhub-static=fw_gradhub:static@{sys.executable}" in cmd
    more = run.parse_args(["--also", "chainer, jax-jit", "--skip", "numpy-manual"])
    cmd = run.harness_command(more, Path("/peers"), Path("/tmp/o.json"))
    assert cmd[cmd.index("--frameworks") + 1] == "gradhub,gradhub-static,torch,chainer,jax-jit"
    assert not any(c.startswith(("chainer=", "jax-jit=")) for c in cmd)  # the harness's pythons
    peers = _peers()
    other = run.parse_args(["--also", "jax-jit@/venvs/jax/bin/python,mxnet"])
    cmd = run.harness_command(other, peers, Path("/tmp/o.json"))
    assert cmd[cmd.index("--frameworks") + 1].endswith(",numpy-manual,jax-jit,mxnet")
    assert "jax-jit=fw_jax:jit@/venvs/jax/bin/python" in cmd
    assert not any(c.startswith("mxnet=") for c in cmd)
    with pytest.raises(SystemExit, match="--also nope@/x/python: the harness has no row 'nope'"):
        run.harness_command(run.parse_args(["--also", "nope@/x/python"]), peers, Path("/o"))
    cuda = run.parse_args(["--device", "cuda"])
    assert cuda.workloads == ["mlp", "cnn", "grad_penalty", "nth_sin"]
    cmd = run.harness_command(cuda, Path("/peers"), Path("/tmp/o.json"))
    assert f"torch=fw_torch_cuda@{sys.executable}" in cmd and "--no-mem" in cmd
    with pytest.raises(SystemExit):
        run.parse_args(["--workloads", "nope"])


def test_a_baseline_interpreter_adds_a_row_and_its_ratios() -> None:
    args = run.parse_args(["--workloads", "tiny_ops,mlp", "--baseline", "/old/bin/python"])
    cmd = run.harness_command(args, Path("/peers"), Path("/tmp/o.json"))
    assert (
        cmd[cmd.index("--frameworks") + 1]
        == "gradhub,gradhub-static,torch,numpy-manual,gradhub-baseline,gradhub-static-baseline"
    )
    assert "gradhub-baseline=fw_gradhub@/old/bin/python" in cmd
    assert "gradhub-static-baseline=fw_gradhub:static@/old/bin/python" in cmd
    data = _data()
    data["meta"]["frameworks"]["gradhub-baseline"] = {}
    data["results"] += _timing("gradhub-baseline", "tiny_ops", 1e-3) + _timing(
        "gradhub-baseline", "mlp", 8e-3
    )
    text, _ = run.render(data, "cpu", ["tiny_ops", "mlp"])
    assert "- W1 tiny_ops: 0.50x (5.00 against 10.0" in text  # 5 us against 10 us per function
    assert "- W2 mlp: 1.25x (10.0 against 8.00" in text
    assert "(static)" not in text  # no static rows in this run
    for fw in ("gradhub-static", "gradhub-static-baseline"):
        data["meta"]["frameworks"][fw] = {}
    data["results"] += _timing("gradhub-static", "tiny_ops", 2e-4) + _timing(
        "gradhub-static-baseline", "tiny_ops", 4e-4
    )
    text, _ = run.render(data, "cpu", ["tiny_ops", "mlp"])
    assert "- W1 tiny_ops (static): 0.50x (2.00 against 4.00" in text
    # the ratios to every other row: numpy-manual's W1 is 1 us per function, torch's 10
    head = "| id | workload | gradhub / torch | gradhub / numpy-manual | "
    assert head + "gradhub-static / torch | gradhub-static / numpy-manual |" in text
    assert "| W1 | tiny_ops | 0.50x | 5.00x | 0.20x | 2.00x |" in text
    assert "gradhub-baseline" not in run.render(_data(), "cpu", ["tiny_ops"])[0]


def test_import_over_the_bound_and_gpu_rows_without_targets() -> None:
    data = _data()
    for r in data["results"]:
        if r["workload"] == "import":
            r["import_minus_startup_s"] = 0.1  # exactly 100 ms: the bound is strict
    assert _rows(data)[("import", "import_net")]["met"] is False
    cells = run.summarize(_data())
    rows = run.evaluate(cells, "cuda", ["mlp"])
    assert len(rows) == 1 and rows[0]["met"] is None
    assert rows[0]["measured"] == pytest.approx(10 / 8)  # against torch on the GPU


def test_bytecode_profile_counts_each_function_of_a_step() -> None:
    import profile_core

    def inner(n: int) -> int:
        total = 0
        for i in range(n):
            total += i
        return total

    def step() -> int:
        return inner(10) + inner(20)

    rows, total, c_calls = profile_core.bytecode_rows(step)
    by_name = {r["where"].split(":")[1].split(" ")[0]: r for r in rows}
    assert by_name["inner"]["calls"] == 2 and by_name["step"]["calls"] == 1
    assert by_name["inner"]["self"] > by_name["step"]["self"] > 0  # the loop dominates
    assert by_name["step"]["cum"] == pytest.approx(1.0)  # everything runs under step
    assert abs(sum(r["self"] for r in rows) - 1.0) < 1e-9
    assert total > 50 and c_calls >= 2  # range() twice
    assert profile_core.bytecode_rows(step)[1] == total  # deterministic


def test_kernel_profile_times_each_kernel_and_restores_the_registry() -> None:
    import gradhub as gh
    import numpy as np
    import profile_core
    from gradhub.registry import REGISTRY

    x = gh.Variable(np.ones(1000))

    def step() -> Any:
        y = ((x * 2.0) + x).sum()
        return gh.grad([y], [x], create_graph=False)

    fdef = REGISTRY.get("MulScalar")
    before = (fdef.forward, fdef.rule.fast, fdef.rule.fast1)  # type: ignore[union-attr]
    times, step_s = profile_core.kernel_times(step, n_steps=5, warmup=1)
    for key in ("fw MulScalar", "bw MulScalar", "fw Add2", "bw Add2", "fw Sum", "bw Sum"):
        assert times[key] > 0, key
    assert 0 < sum(times.values()) < step_s
    assert (fdef.forward, fdef.rule.fast, fdef.rule.fast1) == before  # type: ignore[union-attr]
    text = profile_core.render_kernels("t", times, step_s, top=3)
    assert text.count("| `") == 3 and "the rest (core, Python" in text


def test_import_parts_split_a_fresh_start_into_parts_that_add_up() -> None:
    pytest.importorskip("gradhub_nn_ops", reason="W6 calls F.sin, from gradhub-nn-ops")
    import profile_core

    parts = profile_core.import_parts(runs=2)
    for key, _ in profile_core.IMPORT_PARTS:
        assert len(parts[key]) == 2, key
    for i in range(2):
        p = {k: v[i] for k, v in parts.items()}
        for key in (
            "import numpy",
            "import gradhub",
            "entry points",
            "nn_ops modules",
            "registration",
            "first call",
        ):
            assert p[key] > 0, key
        assert p["other loading"] >= 0
        whole = (
            p["import gradhub"]
            + p["entry points"]
            + p["nn_ops modules"]
            + p["registration"]
            + p["other loading"]
            + p["first call"]
        )
        assert p["gradhub"] == pytest.approx(whole)
    text = profile_core.render_import(parts)
    assert text.count("\n| ") == 1 + len(profile_core.IMPORT_PARTS)


def test_import_parts_alternate_with_a_baseline_interpreter() -> None:
    """``--baseline PYTHON``: each run of this interpreter is paired with one of the baseline's;
    the table gives both medians and their ratio, and the per-pair ratios of gradhub's share."""
    import profile_core

    parts = profile_core.import_parts(runs=2, baseline=sys.executable)
    for key, _ in profile_core.IMPORT_PARTS:
        assert len(parts[key]) == 2 and len(parts["baseline " + key]) == 2, key
    # the same interpreter on both sides imports the same modules
    assert parts["modules"] == parts["baseline modules"] and parts["modules"][0] > 10
    text = profile_core.render_import(parts)
    assert "| part | ms | baseline | ratio |" in text
    assert text.count("\n| ") == 1 + len(profile_core.IMPORT_PARTS)
    assert "per pair of runs: median" in text
    assert "| modules imported after numpy (a count) | " in text


def test_static_rows_are_reported_against_the_targets_of_plans() -> None:
    data = _data()
    data["meta"]["frameworks"]["gradhub-static"] = {}
    data["results"] += _timing("gradhub-static", "tiny_ops", 1e-3) + _timing(
        "gradhub-static", "mlp", 7e-3
    )
    data["checks"] += [
        {"framework": "gradhub-static", "workload": w, "status": "match", "max_rel": 0.0}
        for w in ("tiny_ops", "mlp")
    ]
    rows = {
        r["target"].workload: r
        for r in run.evaluate(
            run.summarize(data), "cpu", ["tiny_ops", "mlp"], run.STATIC, run.STATIC_TARGETS
        )
    }
    assert rows["mlp"]["baseline_value"] is not None
    assert rows["mlp"]["measured"] == pytest.approx(7e-3 * 1e3 / rows["mlp"]["baseline_value"])
    text, _ = run.render(data, "cpu", ["tiny_ops", "mlp"])
    assert "Static graphs (gradhub-static" in text
    assert "| W2 | mlp | ms per step | 7.00 |" in text
