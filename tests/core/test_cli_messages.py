"""Messages of the ``gradhub`` command line: the audit title, unknown options of a subcommand,
a closed stdout (exit status 141)."""

from __future__ import annotations

import pytest
from gradhub.cli import main

pytestmark = pytest.mark.usefixtures("fresh_plugins")


# -- a closed standard output is not the status of a failing audit -------------------------


@pytest.mark.parametrize(
    "args",
    [["registry"], ["registry", "--json"], ["plugins"], ["audit", "-k", "Neg,Sin", "--order", "1"]],
)
@pytest.mark.nn_ops
def test_closed_stdout_ends_with_141_not_1(args: list[str]) -> None:
    import subprocess
    import sys

    p = subprocess.Popen(
        [sys.executable, "-m", "gradhub.cli", *args]
        + (["--no-progress"] if args[0] == "audit" else []),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert p.stdout is not None
    p.stdout.close()  # before the command writes anything: every write meets a closed pipe
    p.stdout = None
    _, err_bytes = p.communicate(timeout=120)
    err = err_bytes.decode()
    assert p.returncode == 141, err
    assert "Traceback" not in err and "Exception ignored" not in err


# -- CLI: the audit title, subcommand errors ------------------------------------------------


def test_audit_title_is_not_wrapped_in_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    """Formerly: "order 2 (3 for" / "elementwise functions)" on two lines."""
    assert main(["audit", "-k", "Neg", "--device", "cpu", "--no-progress"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        "gradhub audit: 1 functions x 1 device(s), order 2 (3 for elementwise functions)"
    )


def test_unknown_option_of_a_subcommand_names_the_subcommand(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Formerly: ``gradhub audit --bogus`` said ``gradhub: error:`` with the top-level usage."""
    with pytest.raises(SystemExit) as info:
        main(["audit", "--bogus"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "gradhub audit: error: unrecognized arguments: --bogus" in err
    assert err.startswith("usage: gradhub audit")
