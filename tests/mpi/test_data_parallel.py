"""Data-parallel training under ``mpiexec -n 2``: 20 SGD steps with half of each global batch
per rank equal one process on the whole batch (float64, within 1e-10), with backward, with an
input-gradient penalty (double backward) and with ``gh.grad``; every bucket's all-reduce starts
before backward's walk ends; mismatched parameter sets raise on every rank; a failing rank ends
the job with its message; and, in one process, the bucketing and the dataset split."""

from __future__ import annotations

import re
import time
from types import SimpleNamespace

import gradhub as gh
import numpy as np
import pytest
from mpi_helpers import needs_mpi, run

pytestmark = needs_mpi


@pytest.mark.parametrize("mode", ["plain", "penalty", "grad"])
def test_two_ranks_equal_one_process_on_the_whole_batch(mode: str) -> None:
    res = run("data_parallel.py", mode)
    assert res.returncode == 0, res.stdout
    lines = re.findall(
        r"rank (\d) diff (\S+) moved (\S+) buckets (\d+) started_before_finish (\d+) "
        r"first_start_before_finish (True|False)",
        res.stdout,
    )
    assert sorted(int(x[0]) for x in lines) == [0, 1], res.stdout
    for _, diff, moved, buckets, started, first in lines:
        assert float(diff) < 1e-10
        assert float(moved) > 0.1  # the training did change the parameters
        # overlap: every bucket (4 of them) was started while backward was still walking
        assert int(buckets) == 4 and int(started) == 4 and first == "True"


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("shape", "parameter #1 is fc/b (4,) float64 on rank 0 but fc/b (5,) float64 on rank 1"),
        ("extra", "parameter #2 is nothing on rank 0 but fc2/W (4, 2) float32 on rank 1"),
    ],
)
def test_mismatched_parameters_raise_on_every_rank(case: str, message: str) -> None:
    res = run("mismatch.py", case)
    assert res.returncode == 0, res.stdout
    for r in (0, 1):
        assert f"rank {r} error: gradhub-mpi: the parameters differ across ranks: " in res.stdout
    assert res.stdout.count(message) == 2, res.stdout


def test_a_failing_rank_ends_the_job_with_its_message() -> None:
    t0 = time.monotonic()
    res = run("fault.py", timeout=60)
    took = time.monotonic() - t0
    assert res.returncode != 0, res.stdout
    assert "gradhub-mpi: rank 1 of 2 failed; aborting the job:" in res.stdout, res.stdout
    assert "RuntimeError: the data of rank one is corrupt" in res.stdout
    assert "rank 0 passed the all_reduce" not in res.stdout
    assert took < 30, took  # about 2 s here (MPICH 5.0, 2 cores)


def test_buckets_follow_pack_size_last_parameters_first() -> None:
    from gradhub_mpi import AllReduceCallback

    comm = SimpleNamespace(size=1, rank=0)
    ps = [gh.Variable(np.zeros(n)) for n in (4, 3, 2, 5)]
    cb = AllReduceCallback(comm, ps, pack_size=5)
    assert [[v.size for v in b.members] for b in cb.buckets] == [[5], [2, 3], [4]]
    cb = AllReduceCallback(comm, ps)  # 25 MB: one bucket
    assert len(cb.buckets) == 1
    with pytest.raises(ValueError, match="all_reduce_callback: argument 'pack_size' must be"):
        AllReduceCallback(comm, ps, pack_size=0)
    with pytest.raises(TypeError, match="all_reduce_callback: parameter '#1' must be a Variable"):
        AllReduceCallback(comm, [ps[0], np.zeros(2)], pack_size=5)


def test_split_dataset_gives_contiguous_parts() -> None:
    from gradhub_mpi import split_dataset

    data = list(range(11))
    parts = [split_dataset(data, SimpleNamespace(size=3, rank=r)) for r in range(3)]
    assert parts == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    parts = [split_dataset(data, SimpleNamespace(size=3, rank=r), equal=False) for r in range(3)]
    assert parts == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10]]
