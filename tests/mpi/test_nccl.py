"""The ``"nccl"`` communicator (gradhub-mpi on CuPy's NCCL).

On a GPU (skipped with one reason elsewhere): a communicator of size 1, in a process started
alone and under ``mpiexec -n 1``, runs every collective on every dtype and trains a small MLP
data-parallel on cuda (buckets all-reduced on a side stream) equal to the plain steps (float64,
1e-10): scripts/nccl.py. NCCL refuses two ranks on one GPU, so more ranks need more GPUs.

Everywhere (with MPI, without a GPU): the registration, what a missing CuPy says, and, with a
stand-in for CuPy and NCCL (scripts/nccl_fake.py), that too few GPUs make every rank raise, that
one rank's failure reaches the others, and the arguments the collectives pass to NCCL.
"""

from __future__ import annotations

import pytest
from child_helpers import run_python
from mpi_helpers import mpiexec, nccl_reason, needs_mpi, run, run_alone

_GPU = nccl_reason()
gpu = pytest.mark.skipif(bool(_GPU), reason=f"the 'nccl' communicator cannot run: {_GPU}")

CHECKS = [
    *(
        f"ok {w}_{dt}"
        for w in ("all_reduce", "bcast", "all_gather")
        for dt in ("float16", "float32", "float64")
    ),
    "ok barrier",
    "ok numpy_error",
    "ok dtype_error",
    "ok data_parallel_plain",
    "ok data_parallel_penalty",
    "nccl done",
]


def _check(out: str) -> None:
    for line in CHECKS:
        assert line in out, out


@gpu
def test_size_one_without_launcher_on_one_gpu() -> None:
    res = run_alone("nccl.py")
    assert res.returncode == 0, res.stdout
    _check(res.stdout)


@gpu
@pytest.mark.skipif(mpiexec() is None, reason="no mpiexec (set MPIEXEC or put it on PATH)")
@needs_mpi
def test_size_one_under_mpiexec_on_one_gpu() -> None:
    res = run("nccl.py", n=1, timeout=120)
    assert res.returncode == 0, res.stdout
    _check(res.stdout)


@needs_mpi
def test_nccl_is_registered_and_a_missing_cupy_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['cupy'] = None\n"  # CuPy unimportable, here and on a GPU
        "import gradhub as gh\n"
        "print(sorted(gh.distributed.available()))\n"
        "try:\n"
        "    gh.distributed.communicator('nccl')\n"
        "except gh.distributed.CommunicatorError as e:\n"
        "    print('error:', e)\n"
    )
    out = run_python(code, timeout=60)
    assert out.startswith("['mpi', 'nccl']\n"), out
    assert "error: gradhub-mpi: the 'nccl' communicator needs CuPy, which is not installed" in out
    assert 'pip install "gradhub-mpi[mpich,nccl]" (CuPy for CUDA 13 through' in out


FAKE_CUPY = """
import sys, types
cupy = types.ModuleType("cupy")
cupy.ndarray = type("ndarray", (), {{}})
cupy.cuda = types.ModuleType("cupy.cuda")
cupy.cuda.runtime = types.SimpleNamespace(
    getDeviceCount=lambda: {gpus}, driverGetVersion=lambda: 13000, runtimeGetVersion=lambda: 13000
)
cupy.cuda.nccl = types.ModuleType("cupy.cuda.nccl")
cupy.cuda.nccl.available = {nccl}
sys.modules.update({{"cupy": cupy, "cupy.cuda": cupy.cuda, "cupy.cuda.nccl": cupy.cuda.nccl}})
from gradhub_mpi.nccl import import_cupy_nccl
try:
    import_cupy_nccl()
except Exception as e:
    print(type(e).__name__, e)
"""


@needs_mpi
@pytest.mark.parametrize(
    ("gpus", "nccl", "message"),
    [
        (1, False, "CuPy finds no NCCL library (cupy.cuda.nccl.available is False); pip install"),
        (0, True, "needs gradhub's 'cuda' device: device 'cuda' is unusable here: no GPU found"),
    ],
)
def test_a_cupy_without_nccl_or_gpu_says_what_is_missing(
    gpus: int, nccl: bool, message: str
) -> None:
    code = FAKE_CUPY.format(gpus=gpus, nccl=nccl)
    out = run_python(code, timeout=60)
    assert out.startswith("CommunicatorError gradhub-mpi: the 'nccl' communicator"), out
    assert message in out, out


@needs_mpi
def test_fewer_gpus_than_ranks_raises_on_every_rank() -> None:
    res = run("nccl_fake.py", "gpus")
    assert res.returncode == 0, res.stdout
    message = (
        "rank 0 of 2: gradhub-mpi: the 'nccl' communicator needs one GPU per rank: this host "
        "runs 2 ranks but has 1 GPU(s) (NCCL refuses two ranks on one GPU); start at most 1 "
        "ranks per host"
    )
    for r in (0, 1):
        assert f"rank {r} error: {message}" in res.stdout, res.stdout
    assert res.stdout.count("(ranks failing: [0, 1])") == 2, res.stdout


@needs_mpi
def test_one_rank_without_cupy_stops_every_rank() -> None:
    res = run("nccl_fake.py", "rank1_no_cupy")
    assert res.returncode == 0, res.stdout
    message = "rank 1 of 2: gradhub-mpi: the 'nccl' communicator needs CuPy (stand-in)"
    for r in (0, 1):
        assert f"rank {r} error: {message}" in res.stdout, res.stdout
    assert "no error" not in res.stdout


@needs_mpi
def test_collectives_pass_device_pointers_counts_dtypes_and_the_streams() -> None:
    res = run("nccl_fake.py", "calls", n=1)
    assert res.returncode == 0, res.stdout
    for what in ("init", "all_reduce", "bcast", "iall_reduce", "errors"):
        assert f"rank 0 ok {what}" in res.stdout, res.stdout


@needs_mpi
def test_a_unique_id_given_as_bytes_reaches_nccl_as_bytes() -> None:
    # CuPy 14's nccl.get_unique_id() returns bytes (earlier CuPy: a tuple of chars)
    res = run("nccl_fake.py", "bytes_id", n=1)
    assert res.returncode == 0, res.stdout
    assert "rank 0 ok bytes id" in res.stdout, res.stdout
