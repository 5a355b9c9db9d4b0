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


def _check_equal_to_one_process(res: object, ranks: int, shared: str, direct: str) -> None:
    assert res.returncode == 0, res.stdout
    lines = re.findall(
        r"rank (\d) shared (\w+) direct (\w+) diff (\S+) moved (\S+) buckets (\d+) "
        r"started_before_finish (\d+) first_start_before_finish (True|False)",
        res.stdout,
    )
    assert sorted(int(x[0]) for x in lines) == list(range(ranks)), res.stdout
    for _, sh, di, diff, moved, buckets, started, first in lines:
        assert (sh, di) == (shared, direct), res.stdout  # the path taken
        assert float(diff) < 1e-10
        assert float(moved) > 0.1  # the training did change the parameters
        # overlap: every bucket (4 of them) was started while backward was still walking
        assert int(buckets) == 4 and int(started) == 4 and first == "True"


@pytest.mark.parametrize("mode", ["plain", "penalty", "grad"])
@pytest.mark.parametrize(
    ("path", "shared", "direct"),
    [
        ("auto", "True", "True"),
        ("chunked", "True", "False"),
        ("mpi", "False", "None"),
        ("hosts", "False", "None"),  # ranks on different hosts: MPI_Iallreduce
    ],
)
def test_two_ranks_equal_one_process_on_the_whole_batch(
    mode: str, path: str, shared: str, direct: str
) -> None:
    # auto: all ranks on this host, so the shared-memory window, each rank summing every row
    res = run("data_parallel.py", mode, path)
    _check_equal_to_one_process(res, 2, shared, direct)


@pytest.mark.parametrize(("path", "shared", "direct"), [("auto", "True", "False")])
def test_three_ranks_equal_one_process_on_the_whole_batch(
    path: str, shared: str, direct: str
) -> None:
    # more than 2 ranks on one host: each rank sums a chunk of the window
    res = run("data_parallel.py", "penalty", path, n=3, timeout=120)
    _check_equal_to_one_process(res, 3, shared, direct)


@pytest.mark.parametrize("path", ["shared", "mpi"])
def test_a_bucket_filled_late_on_one_rank_meets_its_partner(path: str) -> None:
    # rank 1 gives a middle bucket no gradient: it is filled (zeros) when backward ends; before,
    # the buckets started in the order they filled, and MPI paired unrelated buckets
    res = run("unused.py", path)
    assert res.returncode == 0, res.stdout
    lines = re.findall(
        r"rank (\d) buckets 4 order \[0, 1, 2, 3\] diff ([0-9.e+-]+) shared (\w+) closed True",
        res.stdout,
    )
    assert sorted(r for r, _, _ in lines) == ["0", "1"], res.stdout
    assert all(float(d) == 0.0 and sh == str(path == "shared") for _, d, sh in lines), res.stdout


@pytest.mark.parametrize("path", ["shared", "mpi"])
def test_transposed_gradients_are_stored_as_they_lie(path: str) -> None:
    # W1's gradient is column-major on both ranks: copied as it lies and handed back so; W2's is
    # column-major on rank 0 only: the layout counts disagree and it is all-reduced again
    res = run("layouts.py", path)
    assert res.returncode == 0, res.stdout
    lines = re.findall(
        r"rank (\d) own (\w+) got FCC again W2,W2 diff ([0-9.e+-]+)", res.stdout.replace("\n", " ")
    )
    assert sorted((r, own) for r, own, _ in lines) == [("0", "FFC"), ("1", "FCC")], res.stdout
    assert all(float(d) == 0.0 for _, _, d in lines), res.stdout


def test_shared_memory_true_needs_several_ranks_on_one_host() -> None:
    comm = gh.distributed.communicator("mpi")  # no launcher: one rank
    ps = [gh.Variable(np.zeros(3))]
    assert comm.all_reduce_callback(ps).shared is False
    with pytest.raises(ValueError, match="shared_memory=True needs the 'mpi' communicator with"):
        comm.all_reduce_callback(ps, shared_memory=True)
    with pytest.raises(ValueError, match="argument 'shared_memory' must be None, True or False"):
        comm.all_reduce_callback(ps, shared_memory="yes")


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
