"""``benchmarks/func_bench.py`` on a tiny MLP: the ways of computing per-sample gradients and
Hessian-vector products agree (the script checks each against its reference and raises
otherwise) and a ratio is printed for each. The timings themselves are not tested."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "func_bench.py"


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_per_sample_gradients_agree_and_ratios_are_printed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(var, "2")  # the script pins them; restored after the test
    spec = importlib.util.spec_from_file_location("func_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    argv = [
        "--batch",
        "3",
        "--sizes",
        "5",
        "4",
        "3",
        "--repeat",
        "1",
        "--what",
        "per-sample",
        "hvp",
    ]
    assert mod.main(argv) == 0
    out = capsys.readouterr().out
    assert "per-sample gradients, sizes [5, 4, 3], batch 3" in out
    assert "gradhub loop" in out and out.count("gradhub vmap(grad) / this =") >= 2
    assert "gradhub hvp" in out
