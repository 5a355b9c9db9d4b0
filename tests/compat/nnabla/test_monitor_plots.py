"""nnabla.monitor.plot_series and plot_time_elapsed: what they hand to matplotlib.pyplot.plot
(indices as int64, values as float32, the units) equals what nnabla 1.39's hand it for the same
files (recorded with a stand-in pyplot), the plot on a real matplotlib, and the errors."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gradhub_compat.nnabla.monitor import (
    Monitor,
    MonitorSeries,
    MonitorTimeElapsed,
    plot_series,
    plot_time_elapsed,
)

_SERIES = "0 1.5\n9 0.333333\n19 1e-05\n29 123457\n"
_TIMER = "9 30.5 10 30.5\n19 90.25 10 120.75\n29 7200.125 10 7320.875\n"

# nnabla 1.39's arguments to pyplot.plot for the files above (/tmp/probe_D/mon_nn.py)
_NNABLA_SERIES = ([0, 9, 19, 29], [1.5, 0.33333298563957214, 9.999999747378752e-06, 123457.0])
_NNABLA_TIMER = {
    (False, "s"): [30.5, 90.25, 7200.125],
    (False, "m"): [0.5083333253860474, 1.5041667222976685, 120.00208282470703],
    (False, "h"): [0.008472221903502941, 0.025069445371627808, 2.000034809112549],
    (False, "d"): [0.00035300926538184285, 0.0010445602238178253, 0.083334781229496],
    (True, "s"): [30.5, 120.75, 7320.875],
    (True, "m"): [0.5083333253860474, 2.012500047683716, 122.01457977294922],
    (True, "h"): [0.008472221903502941, 0.03354166820645332, 2.033576488494873],
    (True, "d"): [0.00035300926538184285, 0.0013975694309920073, 0.08473234623670578],
}


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """A stand-in matplotlib.pyplot recording the calls of plot."""
    rec: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    plt = types.ModuleType("matplotlib.pyplot")
    plt.plot = lambda *a, **k: rec.append((a, k))  # type: ignore[attr-defined]
    mpl = types.ModuleType("matplotlib")
    mpl.pyplot = plt  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "matplotlib", mpl)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", plt)
    return rec


def _files(tmp_path: Path) -> tuple[Path, Path]:
    s, t = tmp_path / "loss.series.txt", tmp_path / "time.timer.txt"
    s.write_text(_SERIES)
    t.write_text(_TIMER)
    return s, t


def test_plot_series_as_nnabla(tmp_path: Path, calls: list[Any]) -> None:
    s, _ = _files(tmp_path)
    plot_series(str(s), {"label": "x"})
    ((x, y), kw) = calls[-1]
    assert x.dtype == np.int64 and y.dtype == np.float32 and kw == {"label": "x"}
    assert x.tolist() == _NNABLA_SERIES[0] and y.tolist() == _NNABLA_SERIES[1]
    plot_series(s)  # a path object too; no keyword arguments
    assert calls[-1][1] == {}


@pytest.mark.parametrize("elapsed", [False, True])
@pytest.mark.parametrize("unit", ["s", "m", "h", "d"])
def test_plot_time_elapsed_as_nnabla(
    tmp_path: Path, calls: list[Any], elapsed: bool, unit: str
) -> None:
    _, t = _files(tmp_path)
    plot_time_elapsed(str(t), elapsed=elapsed, unit=unit, plot_kwargs={"color": "r"})
    ((x, y), kw) = calls[-1]
    assert x.tolist() == [9, 19, 29] and y.dtype == np.float32 and kw == {"color": "r"}
    assert y.tolist() == _NNABLA_TIMER[(elapsed, unit)]


def test_files_of_the_monitors(tmp_path: Path, calls: list[Any]) -> None:
    m = Monitor(str(tmp_path))
    s = MonitorSeries("train loss", m, interval=2, verbose=False)
    t = MonitorTimeElapsed("time", m, interval=2, verbose=False)
    for i, v in enumerate([1.0, 2.0, 0.5, 0.25]):
        s.add(i, v)
        t.add(i)
    plot_series(str(tmp_path / "train-loss.series.txt"))
    assert calls[-1][0][0].tolist() == [1, 3] and calls[-1][0][1].tolist() == [1.5, 0.375]
    plot_time_elapsed(str(tmp_path / "time.timer.txt"), elapsed=True)
    x, y = calls[-1][0]
    assert x.tolist() == [1, 3] and (np.diff(y) >= 0).all()


def test_errors(tmp_path: Path, calls: list[Any]) -> None:
    _, t = _files(tmp_path)
    # nnabla 1.39: ValueError "The argument `unit` must be chosen from {s|m|h|d}."
    with pytest.raises(ValueError, match=r"`unit` must be chosen from \{s\|m\|h\|d\}"):
        plot_time_elapsed(str(t), unit="y")
    bad = tmp_path / "bad.series.txt"
    bad.write_text("0 1.0\nloss 2.0\n")
    with pytest.raises(ValueError, match=r"line 2 of .*bad\.series\.txt"):
        plot_series(str(bad))
    with pytest.raises(ValueError, match="column 3"):
        plot_time_elapsed(str(tmp_path / "loss.series.txt"), elapsed=True)
    assert calls == []


def test_missing_matplotlib_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s, t = _files(tmp_path)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="plot_series needs matplotlib"):
        plot_series(str(s))
    with pytest.raises(ImportError, match="plot_time_elapsed needs matplotlib"):
        plot_time_elapsed(str(t))


def test_real_matplotlib_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="plot_series plots with matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s, t = _files(tmp_path)
    plt.figure()
    try:
        plot_series(str(s), {"label": "loss"})
        plot_time_elapsed(str(t), elapsed=True, unit="m")
        a, b = plt.gca().lines[-2:]
        assert a.get_label() == "loss" and list(a.get_xdata()) == _NNABLA_SERIES[0]
        np.testing.assert_array_equal(b.get_ydata(), np.float32(_NNABLA_TIMER[(True, "m")]))
    finally:
        plt.close("all")
