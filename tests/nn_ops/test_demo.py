"""``gradhub demo`` (training the seed network on digits): the gradient penalty, missing optional
dependencies, arguments, the data split and training runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import gradhub as gh
import numpy as np
import pytest
from gradhub.cli import main

# -- the gradient penalty -----------------------------------------------------------------------


def test_gradient_penalty_is_the_sum_of_norms() -> None:
    from gradhub_nn_ops.demo import gradient_penalty

    g1 = gh.Variable(np.array([3.0, 4.0]))
    g2 = gh.Variable(np.array([[1.0, 0.0], [0.0, 0.0]]))
    p = gradient_penalty([g1, g2])
    assert p.item() == pytest.approx(6.0, rel=1e-9)
    (d1, d2) = gh.grad([p], [g1, g2])  # d||g||/dg = g / ||g||
    np.testing.assert_allclose(d1.d, [0.6, 0.8], rtol=1e-9)
    np.testing.assert_allclose(d2.d, [[1.0, 0.0], [0.0, 0.0]], rtol=1e-9)


# -- missing optional dependencies (no training needed) -----------------------------------------


def test_demo_without_scikit_learn_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    assert main(["demo", "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert "scikit-learn" in err and "pip install 'gradhub-nn-ops[demo]'" in err


def test_demo_plot_without_matplotlib_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("sklearn")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert main(["demo", "--epochs", "1", "--plot", str(tmp_path / "c.png")]) == 2
    err = capsys.readouterr().err
    assert "matplotlib" in err and "pip install 'gradhub-nn-ops[plot]'" in err
    assert not (tmp_path / "c.png").exists()


def test_demo_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sklearn")
    from gradhub_nn_ops.demo import run

    with pytest.raises(SystemExit):
        main(["demo", "--epochs", "0"])
    assert "--epochs" in capsys.readouterr().err
    with pytest.raises(ValueError, match="demo: batch_size"):
        run(batch_size=0)
    with pytest.raises(ValueError, match="demo: penalty_weight"):
        run(penalty_weight=-1.0)
    assert main(["demo", "--device", "tpu"]) == 2
    assert "'tpu'" in capsys.readouterr().err


def test_digits_split_is_stratified_and_reproducible() -> None:
    pytest.importorskip("sklearn")
    from gradhub_nn_ops.demo import load_digits_split

    xtr, ytr, xte, yte = load_digits_split(seed=3)
    assert xte.shape[1:] == (1, 8, 8) and len(xte) == len(yte)
    assert xtr.shape[1:] == (1, 8, 8) and xtr.dtype == np.float32
    assert len(ytr) + len(yte) == 1797 and 0.18 < len(yte) / 1797 < 0.22
    assert ytr.shape == (len(ytr), 1) and ytr.dtype.kind == "i"
    assert 0.0 <= xtr.min() and xtr.max() <= 1.0
    assert np.all(np.bincount(yte[:, 0], minlength=10) >= 30)  # every class held out
    assert np.array_equal(load_digits_split(seed=3)[3], yte)


# -- training (needs the function library and scikit-learn) -------------------------------------


def _needs_library() -> None:
    """Training needs scikit-learn (extra ``demo``) and the function library gradhub-nn-ops."""
    pytest.importorskip("sklearn")
    pytest.importorskip("gradhub_nn_ops")


def test_short_demo_decreases_the_loss_and_keeps_caller_parameters() -> None:
    _needs_library()
    from gradhub_nn_ops.demo import run

    with gh.parameter_scope("mine"):
        mine = gh.get_parameter_or_create("w", (2,), np.ones)
    t0 = time.perf_counter()
    r = run(epochs=1, max_batches=12, batch_size=32, seed=0)
    assert time.perf_counter() - t0 < 20
    assert len(r.batch_loss) == 12 and len(r.batch_penalty) == 12
    assert np.all(np.isfinite(r.batch_loss)) and np.all(np.isfinite(r.batch_penalty))
    assert np.mean(r.batch_loss[-4:]) < np.mean(r.batch_loss[:4])
    assert r.test_loss < r.initial_test_loss
    assert r.initial_test_loss == pytest.approx(np.log(10), rel=0.2)  # untrained: near chance
    assert set(r.parameters) == {
        "conv1/conv/W",
        "conv1/conv/b",
        "conv2/conv/W",
        "conv2/conv/b",
        "pred/affine/W",
        "pred/affine/b",
    }
    assert r.parameters["conv1/conv/W"].shape == (8, 1, 3, 3)
    assert r.parameters["pred/affine/W"].shape == (16 * 2 * 2, 10)
    # the caller's parameter table is as it was
    assert list(gh.get_parameters()) == ["mine/w"] and gh.get_parameters()["mine/w"] is mine


def test_penalty_enters_the_update_and_runs_are_reproducible() -> None:
    _needs_library()
    from gradhub_nn_ops.demo import run

    a = run(epochs=1, max_batches=2, penalty_weight=0.5, seed=1)
    b = run(epochs=1, max_batches=2, penalty_weight=0.5, seed=1)
    c = run(epochs=1, max_batches=2, penalty_weight=0.0, seed=1)
    assert a.batch_loss == b.batch_loss and a.batch_penalty == b.batch_penalty
    assert a.batch_loss[0] == c.batch_loss[0]  # same initialisation and first batch
    assert a.batch_penalty[0] == pytest.approx(c.batch_penalty[0], rel=1e-4)
    w_a, w_c = a.parameters["conv1/conv/W"], c.parameters["conv1/conv/W"]
    assert not np.allclose(w_a, w_c)  # the penalty's gradient changed the update


def test_demo_command_json_and_plot(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _needs_library()
    pytest.importorskip("matplotlib")
    png = tmp_path / "curves.png"
    argv = [
        "demo",
        "--epochs",
        "2",
        "--max-batches",
        "3",
        "--seed",
        "2",
        "--penalty-weight",
        "0.02",
        "--plot",
        str(png),
        "--json",
    ]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["epochs"] == 2 and res["penalty_weight"] == 0.02 and res["seed"] == 2
    assert len(res["batch_loss"]) == 6 and len(res["epoch_loss"]) == 2
    assert 0.0 <= res["accuracy"] <= 1.0 and res["plot"] == str(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_command_shows_progress_and_accuracy(capsys: pytest.CaptureFixture[str]) -> None:
    _needs_library()
    assert main(["demo", "--epochs", "1", "--max-batches", "3"]) == 0
    out = capsys.readouterr().out
    for word in ("gradhub demo", "penalty", "epoch 1/1", "held-out accuracy", "Adam"):
        assert word in out


def test_demo_console_script() -> None:
    _needs_library()
    exe = Path(sys.executable).with_name("gradhub")
    script = str(exe) if exe.exists() else shutil.which("gradhub")
    if script is None:
        pytest.skip("the gradhub console script is not installed")
    p = subprocess.run(
        [script, "demo", "--epochs", "1", "--max-batches", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, COLUMNS="120"),
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "held-out accuracy" in p.stdout


@pytest.mark.slow
def test_full_default_demo_reaches_90_percent_in_under_a_minute() -> None:
    _needs_library()
    from gradhub_nn_ops.demo import run

    r = run()
    assert r.accuracy >= 0.9, r.accuracy
    assert r.seconds < 60, r.seconds
    assert r.epoch_loss[-1] < r.epoch_loss[0]
