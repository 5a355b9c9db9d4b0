"""``SyncBatchNormalization``, ``DistributedMean`` and ``AllReduce`` under ``mpiexec -n 2``: each
process's part of the batch against batch normalization of the whole batch in one process
(values, running statistics, first and second derivatives, re-executed and compiled graphs), with
equal and unequal batches (tests/mpi/scripts/sync_batch_normalization.py)."""

from __future__ import annotations

import pytest
from mpi_helpers import needs_mpi, run

pytestmark = needs_mpi

CHECKS = (
    "collective_functions",
    "forward",
    "first_order",
    "second_order",
    "static_graph",
    "inference",
    "float32",
    "parametric",
    "compiled",
    "compiled_shapes",
)


@pytest.mark.parametrize("split", ["equal", "unequal"])
def test_sync_batch_normalization_equals_one_process_on_the_whole_batch(split: str) -> None:
    res = run("sync_batch_normalization.py", split, timeout=120)
    assert res.returncode == 0, res.stdout
    for what in CHECKS:
        for r in (0, 1):
            assert f"ok {what} {r}" in res.stdout, res.stdout


def test_nnabla_sync_batch_normalization_in_a_static_graph() -> None:
    """nnabla's PF/F.sync_batch_normalization on ``C.MultiProcessDataParalellCommunicator``:
    two forward/backward steps of a static graph equal batch normalization of the whole batch
    (outputs, x's gradient, running statistics; the parameters' gradients add up to the whole
    batch's), None parameters and ``output_stat``."""
    res = run("nnabla_sync_batch_normalization.py", timeout=120)
    assert res.returncode == 0, res.stdout
    for what in ("static_graph", "parameter_gradients", "functions"):
        for r in (0, 1):
            assert f"ok {what} {r}" in res.stdout, res.stdout


def test_chainermn_multi_node_batch_normalization() -> None:
    """chainermn's MultiNodeBatchNormalization against chainer's L.BatchNormalization on the
    whole batch: two training steps (outputs, gradients, running statistics), evaluation, and
    chainermn's check of ``communication_backend``."""
    res = run("chainermn_batch_normalization.py", timeout=120)
    assert res.returncode == 0, res.stdout
    for what in ("training", "evaluation", "backend"):
        for r in (0, 1):
            assert f"rank {r} ok {what}" in res.stdout, res.stdout
