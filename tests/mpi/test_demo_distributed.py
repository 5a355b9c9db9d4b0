"""``gradhub demo --distributed`` under ``mpiexec -n 2`` trains data-parallel (each rank half of
every minibatch, the gradient-norm penalty through all-reduced gradients) and reports the same
held-out accuracy, losses and penalties as one process at the same minibatch size; only rank 0
prints; without gradhub-mpi's communicator the option says what to install."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from mpi_helpers import needs_mpi, run_program

pytestmark = [
    needs_mpi,
    pytest.mark.skipif(
        importlib.util.find_spec("sklearn") is None,
        reason="gradhub demo needs scikit-learn (gradhub-nn-ops[demo])",
    ),
]

ARGS = ["--epochs", "1", "--max-batches", "6", "--batch-size", "32"]


def test_distributed_demo_equals_the_single_process_run() -> None:
    from gradhub_nn_ops.demo import run

    gradhub = str(Path(sys.executable).parent / "gradhub")
    res = run_program(gradhub, "demo", "--distributed", "--json", *ARGS, timeout=120)
    assert res.returncode == 0, res.stdout
    dist = json.loads(res.stdout)  # one JSON document: rank 0's alone
    one = run(epochs=1, max_batches=6, batch_size=32)
    assert dist["ranks"] == 2 and one.ranks == 1
    assert dist["accuracy"] == one.accuracy
    np.testing.assert_allclose(dist["batch_loss"], one.batch_loss, rtol=1e-5)
    np.testing.assert_allclose(dist["batch_penalty"], one.batch_penalty, rtol=1e-5)
    np.testing.assert_allclose(dist["test_loss"], one.test_loss, rtol=1e-5)
    assert one.batch_loss[-1] < one.batch_loss[0]  # it trained
