"""Running a script of ``tests/mpi/scripts`` under ``mpiexec -n 2`` from pytest."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent / "mpi" / "scripts"


def mpiexec() -> str | None:
    """The ``mpiexec`` named by the environment variable ``MPIEXEC``, else the one beside this
    Python (the mpich wheel's in a virtual environment), else the one on PATH, or None."""
    named = os.environ.get("MPIEXEC")
    if named:
        return named
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


def _reason() -> str | None:
    if importlib.util.find_spec("gradhub_mpi") is None:
        return 'gradhub-mpi is not installed (pip install -e "./plugins/mpi[mpich]")'
    if importlib.util.find_spec("mpi4py") is None:
        return 'mpi4py is not installed (pip install -e "./plugins/mpi[mpich]")'
    if mpiexec() is None:
        return 'no mpiexec (pip install -e "./plugins/mpi[mpich]" brings one)'
    return None


def nccl_reason() -> str:
    """Why the "nccl" communicator cannot run here ("" when it can): MPI, CuPy, a GPU, NCCL,
    an MPI library that mpi4py loads."""
    for module in ("gradhub_mpi", "mpi4py"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install -e './plugins/mpi[mpich,nccl]')"
    try:
        import cupy
    except Exception as e:
        return f"CuPy is not usable ({type(e).__name__}: {e})"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no GPU"
    except Exception as e:
        return f"no usable GPU ({type(e).__name__}: {e})"
    try:
        from cupy.cuda import nccl
    except Exception as e:
        return f"cupy.cuda.nccl does not import ({type(e).__name__}: {e})"
    if not nccl.available:
        return "CuPy finds no NCCL library (pip install nvidia-nccl-cu13)"
    # mpi4py must find an MPI library; checked in a child: importing mpi4py.MPI starts MPI
    probe = subprocess.run(
        [sys.executable, "-c", "from mpi4py import MPI; MPI.COMM_WORLD.Get_size()"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if probe.returncode != 0:
        return f"mpi4py cannot load an MPI library: {probe.stderr.strip()[-300:]}"
    return ""


#: skips a test that needs 2 MPI ranks, with the reason, where mpi4py or mpiexec are missing
needs_mpi = pytest.mark.skipif(_reason() is not None, reason=_reason() or "")


def run(script: str, *args: str, n: int = 2, timeout: float = 60) -> subprocess.CompletedProcess:
    """``mpiexec -n N python scripts/SCRIPT ARGS`` (stdout and stderr together), ended after
    ``timeout`` seconds (a hang fails the test)."""
    return run_program(sys.executable, str(SCRIPTS / script), *args, n=n, timeout=timeout)


def run_alone(script: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python scripts/SCRIPT ARGS`` without a launcher (a communicator of size 1), stdout and
    stderr together."""
    return subprocess.run(
        [sys.executable, str(SCRIPTS / script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_program(*argv: str, n: int = 2, timeout: float = 60) -> subprocess.CompletedProcess:
    """``mpiexec -n N ARGV...`` (stdout and stderr together), ended after ``timeout`` seconds."""
    exe = mpiexec()
    assert exe is not None
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [exe, "-n", str(n), *argv]
    return subprocess.run(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
