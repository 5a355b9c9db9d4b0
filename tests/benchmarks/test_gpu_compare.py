"""``benchmarks/gpu_compare.py``'s output check: the peer harness's rule, on arrays.

An element mismatches when ``|a - r| > rtol * (|r| + max|r|)``; the script reports the largest
relative error (``max|a - r| / max|r|``) and which arrays fail. The timing parts need a GPU and
PyTorch CUDA and are not tested here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_compare.py"


@pytest.fixture(scope="module")
def gc() -> Any:
    spec = importlib.util.spec_from_file_location("gpu_compare", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_matching_outputs(gc: Any) -> None:
    ref = [np.float32(2.0), np.array([1.0, -4.0])]
    worst, bad = gc._mismatch([np.array([2.0]), np.array([1.001, -4.0])], ref, 1e-3)
    assert bad == "" and worst == pytest.approx(0.001 / 4.0)


def test_an_element_past_the_tolerance(gc: Any) -> None:
    # |a - r| = 0.02 > 1e-3 * (|r| + max|r|) = 1e-3 * (1 + 4)
    worst, bad = gc._mismatch([np.array([1.02, -4.0])], [np.array([1.0, -4.0])], 1e-3)
    assert bad == "#0 max_rel=5.00e-03" and worst == pytest.approx(0.005)


def test_shape_and_count_mismatches(gc: Any) -> None:
    _, bad = gc._mismatch([np.ones(3)], [np.ones(2)], 1e-3)
    assert bad == "#0 shape (3,) vs (2,)"
    worst, bad = gc._mismatch([np.ones(2)], [np.ones(2), np.ones(2)], 1e-3)
    assert bad == "1 arrays vs 2" and worst == float("inf")
