"""The ``"mpi"`` communicator under ``mpiexec -n 2``: all_reduce (sum, division, in place or
not, lists, Variables), bcast from either root, all_gather and barrier on float16/32/64; shape
and dtype errors; and, in one process, how it is found, that importing gradhub_mpi initializes
no MPI, and what a missing plugin says."""

from __future__ import annotations

import gradhub as gh
import pytest
from child_helpers import run_python
from mpi_helpers import needs_mpi, run

pytestmark = needs_mpi


def test_every_collective_on_every_dtype() -> None:
    res = run("collectives.py")
    assert res.returncode == 0, res.stdout
    for dt in ("float16", "float32", "float64"):
        for what in ("all_reduce", "bcast", "all_gather"):
            for r in (0, 1):
                assert f"ok {what}_{dt} {r}" in res.stdout, res.stdout
    for r in (0, 1):
        for what in ("barrier", "all_gather_shapes", "dtype_error"):
            assert f"ok {what} {r}" in res.stdout, res.stdout
        assert f"ranks {r} 2 {r} 0 1" in res.stdout  # one host: local_rank == rank, host 0 of 1


def test_importing_gradhub_mpi_initializes_no_mpi() -> None:
    code = (
        "import sys, gradhub_mpi, gradhub_mpi.plugin, gradhub as gh; "
        "print(sorted(gh.distributed.available())); print('mpi4py' in sys.modules)"
    )
    out = run_python(code, timeout=60)
    assert out.split("\n")[:2] == ["['mpi', 'nccl']", "False"]


def test_one_process_without_launcher_is_a_communicator_of_size_one() -> None:
    code = (
        "import gradhub as gh, numpy as np; c = gh.distributed.communicator('mpi'); "
        "a = np.ones(3); c.all_reduce(a, division=True); print(c.rank, c.size, a.sum())"
    )
    out = run_python(code, timeout=60)
    assert out.strip() == "0 1 3.0"


def test_require_launcher_says_what_to_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from gradhub_mpi.communicator import LAUNCHER_VARIABLES

    for v in LAUNCHER_VARIABLES:
        monkeypatch.delenv(v, raising=False)
    with pytest.raises(gh.distributed.CommunicatorError, match="start it with mpiexec -n N"):
        gh.distributed.communicator("mpi", require_launcher=True)


def test_a_missing_communicator_says_what_to_install() -> None:
    with pytest.raises(gh.distributed.CommunicatorError, match=r"no installed plugin adds the"):
        gh.distributed.communicator("gloo")
