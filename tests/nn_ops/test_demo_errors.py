"""``gradhub demo --plot``: a missing folder is a usage error before training; a failure at
the end is a clear error. ``gradhub demo --distributed`` without a communicator says what to
install, before training."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.usefixtures("fresh_plugins")


# -- gradhub demo --plot checks the file before training -----------------------------------


def test_demo_plot_into_a_missing_folder_is_a_usage_error_before_training(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("sklearn")
    pytest.importorskip("matplotlib")
    from gradhub.cli import main
    from gradhub_nn_ops import demo

    def no_training(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the demo trained before checking --plot")

    monkeypatch.setattr(demo, "load_digits_split", no_training)
    target = tmp_path / "missing" / "curves.png"
    assert main(["demo", "--epochs", "1", "--max-batches", "1", "--plot", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gradhub demo: error: --plot: cannot write")
    assert "does not exist; create it" in err and "Traceback" not in err
    for bad, words in (
        (str(tmp_path / "c.nosuchformat"), "does not write .nosuchformat"),
        (str(tmp_path), "is a folder"),
    ):
        assert main(["demo", "--plot", bad]) == 2
        assert words in capsys.readouterr().err


def test_demo_plot_failing_at_the_end_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("sklearn")
    pytest.importorskip("matplotlib")
    import json

    from gradhub.cli import main
    from gradhub_nn_ops import demo

    def full_disk(result: Any, path: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(demo, "save_plot", full_disk)
    png = tmp_path / "c.png"
    args = ["demo", "--epochs", "1", "--max-batches", "2", "--plot", str(png), "--json"]
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert err.startswith("gradhub demo: error: --plot: could not save the curves to")
    assert "No space left on device" in err and "Traceback" not in err
    assert json.loads(out)["epochs"] == 1  # the results of the run are still printed


# -- gradhub demo --distributed without gradhub-mpi ------------------------------------------


def test_demo_distributed_without_a_communicator_says_what_to_install(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("sklearn")
    from gradhub import plugins
    from gradhub.cli import main
    from gradhub_nn_ops import demo

    def no_training(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the demo trained without a communicator")

    monkeypatch.setattr(demo, "load_digits_split", no_training)
    monkeypatch.setattr(plugins, "plugin_communicators", lambda strict=None: {})
    assert main(["demo", "--distributed", "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gradhub demo: error: --distributed: gradhub.distributed.communicator:")
    assert 'install gradhub-mpi (pip install "gradhub-mpi[mpich]")' in err
