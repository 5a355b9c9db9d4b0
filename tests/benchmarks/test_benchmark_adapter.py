"""The benchmark adapter (``benchmarks/fw_gradhub.py``) computes the right numbers.

Correctness only, no timing: every workload that a hand-written numpy forward and backward covers
(W1, W2, W3, W7) is compared with the harness's ``fw_numpy_manual`` adapter on the harness's own
data, and W5 with the closed form ``d^k sin(x)/dx^k = sin(x + k pi/2)``. W4 has no hand-written
reference; it is compared with PyTorch where PyTorch is installed. The harness lives beside the
repository (``../shared/bench/peers``); without it these tests skip.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def _peers() -> Path | None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from run import find_peers

        return find_peers()
    except FileNotFoundError:
        return None
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
        sys.modules.pop("run", None)


@pytest.fixture(scope="module")
def bench() -> Any:
    """The harness and the two adapters, imported without touching the process environment."""
    peers = _peers()
    if peers is None:
        pytest.skip(
            "the peer benchmark harness (../shared/bench/peers) is not beside the repository"
        )
    mp = pytest.MonkeyPatch()
    # the harness pins thread variables (and hides GPUs) at import unless BENCH_THREADS is set
    mp.setenv("BENCH_THREADS", "2")
    mp.syspath_prepend(str(peers))
    mp.syspath_prepend(str(REPO / "benchmarks"))
    names = ("harness", "fw_gradhub", "fw_numpy_manual")
    mods = {n: importlib.import_module(n) for n in names}
    yield mods
    mp.undo()
    for n in names:
        sys.modules.pop(n, None)


def _params(bench: dict[str, ModuleType], workload: str) -> dict[str, Any]:
    p = bench["harness"].workload_params(workload)
    p["device"] = "cpu"
    return p


def _outputs(adapter: ModuleType, step: Any) -> list[np.ndarray]:
    return [np.asarray(a, dtype=np.float64) for a in adapter.to_numpy(step())]


def _run(adapter: ModuleType, workload: str, params: dict[str, Any]) -> list[np.ndarray]:
    return _outputs(adapter, adapter.make(workload, params))


def _assert_close(got: list[np.ndarray], ref: list[np.ndarray], workload: str) -> None:
    """The harness's criterion: an element fails if |a - r| > 1e-3 (|r| + max|r|)."""
    assert len(got) == len(ref), workload
    for i, (a, r) in enumerate(zip(got, ref)):
        assert a.shape == r.shape, f"{workload} output {i}: {a.shape} against {r.shape}"
        tol = 1e-3 * (np.abs(r) + np.abs(r).max())
        bad = np.abs(a - r) > tol
        assert not bad.any(), f"{workload} output {i}: {int(bad.sum())} of {a.size} elements differ"


@pytest.mark.parametrize("workload", ["tiny_ops", "mlp", "cnn", "deep_mlp_mem"])
def test_first_order_workloads_match_hand_written_numpy(bench: Any, workload: str) -> None:
    params = _params(bench, workload)
    got = _run(bench["fw_gradhub"], workload, params)
    ref = _run(bench["fw_numpy_manual"], workload, _params(bench, workload))
    _assert_close(got, ref, workload)
    # a second step on the same graph objects gives the same numbers (no state leaks between steps)
    step = bench["fw_gradhub"].make(workload, params)
    step()
    again = _outputs(bench["fw_gradhub"], step)
    _assert_close(again, ref, workload)


@pytest.mark.parametrize("workload", ["tiny_ops", "mlp", "cnn", "grad_penalty", "nth_sin"])
def test_the_static_variant_gives_the_eager_steps_numbers(bench: Any, workload: str) -> None:
    # gradhub-static: the same step through gh.compile, bit for bit, on its trace and replays
    adapter = bench["fw_gradhub"]
    want = _outputs(adapter, adapter.make(workload, _params(bench, workload)))
    params = _params(bench, workload)
    params["variant"] = "static"
    step = adapter.make(workload, params)
    for _ in range(3):
        got = _outputs(adapter, step)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b, err_msg=workload)


def test_nth_sin_matches_the_closed_form(bench: Any) -> None:
    params = _params(bench, "nth_sin")
    x = np.asarray(params["data"]["x"], dtype=np.float64)
    got = _run(bench["fw_gradhub"], "nth_sin", params)
    ref = [np.sin(x + k * np.pi / 2) for k in range(1, int(params["order"]) + 1)]
    _assert_close(got, ref, "nth_sin")


def test_grad_penalty_matches_pytorch(bench: Any) -> None:
    pytest.importorskip(
        "torch", reason="W4 has no hand-written reference; PyTorch is not installed"
    )
    fw_torch = importlib.import_module("fw_torch")
    try:
        got = _run(bench["fw_gradhub"], "grad_penalty", _params(bench, "grad_penalty"))
        ref = _run(fw_torch, "grad_penalty", _params(bench, "grad_penalty"))
    finally:
        sys.modules.pop("fw_torch", None)
    _assert_close(got, ref, "grad_penalty")
