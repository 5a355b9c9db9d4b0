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


#: skips a test that needs 2 MPI ranks, with the reason, where mpi4py or mpiexec are missing
needs_mpi = pytest.mark.skipif(_reason() is not None, reason=_reason() or "")


def run(script: str, *args: str, n: int = 2, timeout: float = 60) -> subprocess.CompletedProcess:
    """``mpiexec -n N python scripts/SCRIPT ARGS`` (stdout and stderr together), ended after
    ``timeout`` seconds (a hang fails the test)."""
    return run_program(sys.executable, str(SCRIPTS / script), *args, n=n, timeout=timeout)


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
