"""gradhub_mpi.shared under ``mpiexec`` (2 and 3 ranks on this host): the shared-memory sum of a
bucket, direct and chunked, on float16/32/64, equal to the sum in rank order in that dtype."""

from __future__ import annotations

import pytest
from mpi_helpers import needs_mpi, run

pytestmark = needs_mpi


@pytest.mark.parametrize("ranks", [2, 3])
def test_shared_reduction_sums_in_rank_order(ranks: int) -> None:
    res = run("shared.py", n=ranks, timeout=120)
    assert res.returncode == 0, res.stdout
    for r in range(ranks):
        for how in ("direct", "chunked"):
            for dt in ("float16", "float32", "float64"):
                assert f"ok {how}_{dt} {r}" in res.stdout, res.stdout
        assert f"ok finish_before_start {r}" in res.stdout, res.stdout
