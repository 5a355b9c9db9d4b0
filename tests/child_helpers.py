"""Running Python code in a fresh interpreter from a test: :func:`run_python`.

Tests of what happens at import time, or under an environment variable read once, run their
code in a child process: this interpreter's executable with ``-c``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping

import pytest


def run_python(code: str, env: Mapping[str, str] | None = None, timeout: float = 120) -> str:
    """The standard output of ``python -c code`` in a fresh interpreter (this one's executable);
    ``env`` is the child's whole environment (None: this process's). A child that exits with
    an error fails the test, showing the end of its standard error.

    Example::

        >>> run_python("print(6 * 7)")
        '42\\n'
    """
    r = subprocess.run(
        [sys.executable, "-c", code],
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if r.returncode != 0:
        pytest.fail(
            f"python -c exited with {r.returncode}; the end of its standard error:\n"
            f"{r.stderr[-4000:]}",
            pytrace=False,
        )
    return r.stdout
