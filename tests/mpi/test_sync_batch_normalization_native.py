"""``SyncBatchNormalization`` on gradhub-nn-ops' compiled kernels under ``mpiexec -n 2``: each
process's part of the batch against batch normalization of the whole batch in one process, with
the compiled kernels in both processes and with one process on the numpy kernels (the same
collectives either way) (tests/mpi/scripts/sync_batch_normalization_native.py)."""

from __future__ import annotations

import pytest
from mpi_helpers import needs_mpi, run

pytestmark = needs_mpi

CHECKS = tuple(
    f"{what}_{dtype}"
    for dtype in ("float64", "float32")
    for what in ("forward", "first_order", "graph_rule")
)


@pytest.mark.parametrize("split", ["equal", "mixed"])
def test_sync_batch_normalization_on_compiled_kernels_equals_one_process(split: str) -> None:
    res = run("sync_batch_normalization_native.py", split, timeout=120)
    assert res.returncode == 0, res.stdout
    for what in CHECKS:
        for r in (0, 1):
            assert f"ok {what} {r}" in res.stdout, res.stdout
