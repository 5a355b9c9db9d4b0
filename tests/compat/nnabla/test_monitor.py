"""``gradhub_compat.nnabla.monitor``: the files (names, bytes) and log lines of ``Monitor``,
``MonitorSeries`` and ``MonitorTimeElapsed`` against nnabla 1.39's for the same calls,
``tile_images``, the image monitors' folders, and a small training script (``data/
make_monitor_reference.py``) whose batches, losses and series file equal nnabla 1.39's run of
the same script (``data/monitor_reference.json``)."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
from pathlib import Path

import numpy as np
import pytest
from gradhub_compat.nnabla.monitor import (
    Monitor,
    MonitorImage,
    MonitorImageTile,
    MonitorSeries,
    MonitorTimeElapsed,
    tile_images,
)

VALUES = [0.1, 1e-7, 123456789.0, np.float32(0.3), 2.5, 1 / 3, 7, np.float32(1e10), 0.0, -1.5]
VALUES += [1e-5, 3]


def _messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "nnabla"]


def test_monitor_creates_its_folder_with_parents(tmp_path: Path) -> None:
    path = tmp_path / "a" / "tmp.monitor"
    m = Monitor(str(path))
    assert path.is_dir() and m.save_path == str(path)
    Monitor(str(path))  # an existing folder is kept
    with pytest.raises(TypeError, match="Monitor: save_path must be a path"):
        Monitor(3)  # type: ignore[arg-type]


def test_series_file_and_log_lines_are_nnabla_s(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="nnabla")
    m = Monitor(str(tmp_path / "mon a"))
    s = MonitorSeries("train loss", m, interval=3)
    for i, v in enumerate(VALUES):
        s.add(i, v)
    s2 = MonitorSeries("ints", m)
    for i, v in [(0, 3), (5, 4), (6, np.float64(2.0)), (10, np.float32(0.1)), (11, 1e16)]:
        s2.add(i, v)
    s2.add(12, float("nan"))
    s2.add(13, float("inf"))
    assert sorted(os.listdir(m.save_path)) == ["ints.series.txt", "train-loss.series.txt"]
    text = (tmp_path / "mon a" / "train-loss.series.txt").read_text()
    # nnabla 1.39
    assert text == "2 4.11523e+07\n5 1.04444\n8 3.33333e+09\n11 0.500003\n"
    text = (tmp_path / "mon a" / "ints.series.txt").read_text()
    assert text == "0 3\n5 4\n6 2\n10 0.1\n11 1e+16\n12 nan\n13 inf\n"  # nnabla 1.39
    assert _messages(caplog) == [  # nnabla 1.39
        "iter=2 {train loss}=41152263.03333337",
        "iter=5 {train loss}=1.0444444484180875",
        "iter=8 {train loss}=3333333335.6666665",
        "iter=11 {train loss}=0.5000033333333334",
        "iter=0 {ints}=3.0",
        "iter=5 {ints}=4.0",
        "iter=6 {ints}=2.0",
        "iter=10 {ints}=0.10000000149011612",
        "iter=11 {ints}=1e+16",
        "iter=12 {ints}=nan",
        "iter=13 {ints}=inf",
    ]


def test_series_interval_counts_from_the_last_flush(tmp_path: Path) -> None:
    m = Monitor(str(tmp_path))
    s = MonitorSeries("loss", m, interval=10, verbose=False)
    for i in range(25):
        s.add(i, float(i))
    # flushes at 9 (mean of 0..9) and 19 (mean of 10..19); 20..24 stay buffered
    assert (tmp_path / "loss.series.txt").read_text() == "9 4.5\n19 14.5\n"
    assert s.buf == [20.0, 21.0, 22.0, 23.0, 24.0] and s.flush_at == 19


def test_a_new_series_empties_its_file_and_without_monitor_writes_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    m = Monitor(str(tmp_path))
    s = MonitorSeries("loss", m, verbose=False)
    s.add(0, 1.0)
    assert (tmp_path / "loss.series.txt").read_text() == "0 1\n"
    MonitorSeries("loss", m)
    assert (tmp_path / "loss.series.txt").read_text() == ""
    caplog.set_level(logging.INFO, logger="nnabla")
    quiet = MonitorSeries("q", interval=1, verbose=False)
    quiet.add(0, 2.0)
    assert quiet.sp is None and _messages(caplog) == []
    assert sorted(os.listdir(tmp_path)) == ["loss.series.txt"]
    with pytest.raises(TypeError, match="MonitorSeries: name must be a str"):
        MonitorSeries(1, m)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="MonitorSeries: monitor must be a Monitor"):
        MonitorSeries("x", str(tmp_path))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="MonitorTimeElapsed: interval must be a number"):
        MonitorTimeElapsed("t", interval="2")  # type: ignore[arg-type]


def test_time_elapsed_file_and_log_lines(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="nnabla")
    m = Monitor(str(tmp_path))
    t = MonitorTimeElapsed("epoch time", m, interval=2)
    for i in range(5):
        t.add(i)
    assert os.listdir(tmp_path) == ["epoch-time.timer.txt"]
    lines = (tmp_path / "epoch-time.timer.txt").read_text().splitlines()
    # nnabla 1.39 writes "1 9.298324584960938e-06 2 9.298324584960938e-06" and
    # "3 0.0001308917999267578 2 0.00014019012451171875": index, lap, indices, total
    assert [ln.split()[0] for ln in lines] == ["1", "3"]
    assert [ln.split()[2] for ln in lines] == ["2", "2"]
    laps = [float(ln.split()[1]) for ln in lines]
    totals = [float(ln.split()[3]) for ln in lines]
    assert laps[0] == totals[0] and totals[1] == pytest.approx(laps[0] + laps[1])
    assert all(x >= 0 for x in laps)
    msgs = _messages(caplog)
    assert len(msgs) == 2
    assert re.fullmatch(r"iter=1 \{epoch time\}=[0-9.e-]+\[sec/2iter\] [0-9.e-]+\[sec\]", msgs[0])
    assert msgs[1].startswith(f"iter=3 {{epoch time}}={lines[1].split()[1]}[sec/2iter] ")


def test_time_elapsed_default_interval_is_100() -> None:
    t = MonitorTimeElapsed("t", verbose=False)
    for i in range(99):
        t.add(i)
    assert t.flush_at == -1
    t.add(99)
    assert t.flush_at == 99


def test_image_monitors_make_their_folder(tmp_path: Path) -> None:
    # (the image monitors write PNG files since 2026-11-27, see test_image_monitors.py; before,
    # they raised NotImplementedError)
    m = Monitor(str(tmp_path))
    for cls in (MonitorImage, MonitorImageTile):
        cls(f"{cls.__name__} images", m, interval=1)
    assert sorted(os.listdir(tmp_path)) == ["MonitorImage-images", "MonitorImageTile-images"]


def test_tile_images_is_nnabla_s() -> None:
    out = tile_images(np.arange(5 * 1 * 2 * 2, dtype=float).reshape(5, 1, 2, 2))
    expected = np.zeros((9, 9))  # nnabla 1.39
    expected[:2, :2] = [[0, 1], [2, 3]]
    expected[:2, 3:5] = [[4, 5], [6, 7]]
    expected[:2, 6:8] = [[8, 9], [10, 11]]
    expected[3:5, :2] = [[12, 13], [14, 15]]
    expected[3:5, 3:5] = [[16, 17], [18, 19]]
    np.testing.assert_array_equal(out, expected)
    rgb = np.arange(2 * 3 * 2 * 2, dtype=float).reshape(2, 3, 2, 2)
    tiled = tile_images(rgb, padsize=0)
    assert tiled.shape == (4, 4, 3)  # nnabla 1.39 gives (6, 6, 3) with padsize=1
    np.testing.assert_array_equal(tiled[:2, :2], rgb[0].transpose(1, 2, 0))
    np.testing.assert_array_equal(tiled[:2, 2:], rgb[1].transpose(1, 2, 0))
    with pytest.raises(ValueError, match=r"tile_images: data must be a \(B, C, H, W\) array"):
        tile_images(np.zeros((2, 3, 4)))


DATA = Path(__file__).parent / "data"


def test_training_script_gives_nnabla_s_batches_losses_and_series(tmp_path: Path) -> None:
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.functions as F
    import gradhub_compat.nnabla.monitor as monitor
    import gradhub_compat.nnabla.parametric_functions as PF
    import gradhub_compat.nnabla.solvers as S
    import gradhub_compat.nnabla.utils.data_iterator as data_iterator

    spec = importlib.util.spec_from_file_location(
        "make_monitor_reference", DATA / "make_monitor_reference.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    ref = json.loads((DATA / "monitor_reference.json").read_text())  # nnabla 1.39
    assert ref["nnabla"] == "1.39.0"
    got = script.train(nn, F, PF, S, monitor, data_iterator, str(tmp_path))
    assert got["batches"] == ref["batches"]
    assert got["epochs"] == ref["epochs"]
    np.testing.assert_allclose(got["losses"], ref["losses"], rtol=2e-5, atol=1e-6)
    assert sorted(os.listdir(tmp_path)) == ref["files"]
    lines, ref_lines = got["series"].splitlines(), ref["series"].splitlines()
    assert [ln.split()[0] for ln in lines] == [ln.split()[0] for ln in ref_lines]
    np.testing.assert_allclose(
        [float(ln.split()[1]) for ln in lines],
        [float(ln.split()[1]) for ln in ref_lines],
        rtol=2e-5,
    )
    # the series holds the mean of each pair of losses, printed with {:g}
    means = np.mean(np.array(got["losses"], np.float32).reshape(-1, 2), axis=1)
    assert got["series"] == "".join(f"{2 * k + 1} {m:g}\n" for k, m in enumerate(means))
    timer = (tmp_path / "training-time.timer.txt").read_text().splitlines()
    assert [ln.split()[0] for ln in timer] == ["3", "7", "11"]
    assert [ln.split()[2] for ln in timer] == ["4", "4", "4"]
