"""``extensions.VariableStatisticsPlot`` against chainer 7.8.1: the scenarios of
data/make_variable_statistics_plot.py run with gradhub's chainer layer and a stand-in
matplotlib give chainer's sampled statistics (indices and rows: means, standard deviations,
percentiles of data and gradients), the same files and the same pyplot calls
(data/variable_statistics_plot_chainer.json, written by chainer 7.8.1 with numpy 1.26 from
that script); without matplotlib it warns and does nothing, as chainer's; with a real
matplotlib (where installed) it writes a PNG."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import training
from gradhub_compat.chainer.training import extensions
from gradhub_compat.chainer.training.extensions import variable_statistics_plot as vsp

DATA = Path(__file__).parent / "data"
REFERENCE = json.loads((DATA / "variable_statistics_plot_chainer.json").read_text())
MISSING = "matplotlib is not installed on your environment, so nothing will be plotted"


def _script() -> types.ModuleType:
    sys.path.insert(0, str(DATA))
    try:
        import make_variable_statistics_plot
    finally:
        sys.path.remove(str(DATA))
    return make_variable_statistics_plot


def _fresh_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the cached matplotlib check (restored after the test)."""
    for name in ("_available", "_plot_color", "_plot_color_trans", "_plot_common_kwargs"):
        monkeypatch.setattr(vsp, name, getattr(vsp, name))
    vsp._available = None


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The scenario script with its stand-in matplotlib installed."""
    module = _script()
    for name, mod in module.stand_in_modules().items():
        monkeypatch.setitem(sys.modules, name, mod)
    _fresh_check(monkeypatch)
    return module


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    module = _script()
    with pytest.MonkeyPatch.context() as mp:
        for name, mod in module.stand_in_modules().items():
            mp.setitem(sys.modules, name, mod)
        _fresh_check(mp)
        return module.run_all(chainer, L, extensions)  # type: ignore[no-any-return]


def _close_log(got: Any, expected: Any) -> None:
    """The recorded calls equal, numbers to float32 rounding."""
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _close_log(g, e)
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(expected)
        for k in expected:
            _close_log(got[k], expected[k])
    elif isinstance(expected, float) and not isinstance(expected, bool):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    else:
        assert got == expected


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_scenario_matches_chainer(name: str, results: dict[str, Any]) -> None:
    expected, got = REFERENCE[name], results[name]
    if "error" in expected:
        assert got.get("error") == expected["error"]
        return
    assert "error" not in got, got.get("error")
    assert got["idxs"] == expected["idxs"]
    assert got["counter"] == expected["counter"]
    assert got["files"] == expected["files"]
    np.testing.assert_allclose(
        np.array(got["data"], dtype=np.float64).reshape(np.shape(expected["data"])),
        np.array(expected["data"], dtype=np.float64),
        rtol=1e-6,
        atol=1e-7,
    )
    _close_log(got["log"], expected["log"])


def test_defaults_and_arguments(script: types.ModuleType) -> None:
    link = L.Linear(3, 2)
    ext = extensions.VariableStatisticsPlot(link)
    # chainer 7.8.1: keys, row shape, file name, priority, trigger, name, sample size
    assert ext._keys == ["data", "grad"] and ext._data_shape == (2, 11)
    assert ext._filename == "statistics.png" and ext._samples.size == 1000
    assert (ext._figsize, ext._marker, ext._grid) == (None, None, True)
    assert ext.priority == 100 and ext.trigger == (1, "iteration")
    assert ext.default_name == "VariableStatisticsPlot"
    assert [v.name for v in ext._vars] == ["W", "b"]
    assert extensions.VariableStatisticsPlot(link, file_name="a.png")._filename == "a.png"
    both = extensions.VariableStatisticsPlot(link, filename="b.png", file_name="c.png")
    assert both._filename == "b.png"  # chainer 7.8.1: filename= wins over the alias
    assert extensions.VariableStatisticsPlot(link, report_data=False, report_grad=False)._keys == []
    with pytest.raises(TypeError, match=r"VariableStatisticsPlot.__init__\(\).*'foo'"):
        extensions.VariableStatisticsPlot(link, foo=1)
    chain = chainer.Chain()
    with chain.init_scope():
        chain.a = L.Linear(2, 2)
        chain.b = L.Linear(2, 2)
    v = chainer.Variable(np.zeros(2, np.float32))
    # chainer 7.8.1: a chain's parameters in its order, then the Variable
    assert [p.name for p in extensions.VariableStatisticsPlot([chain.b, v])._vars] == [
        "W",
        "b",
        None,
    ]
    assert len(extensions.VariableStatisticsPlot(chain)._vars) == 4


def test_without_matplotlib_warns_and_does_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    _fresh_check(monkeypatch)
    v = chainer.Variable(np.arange(4, dtype=np.float32))
    ext = extensions.VariableStatisticsPlot(v, trigger=(1, "iteration"))
    with pytest.warns(UserWarning, match=MISSING):
        assert extensions.VariableStatisticsPlot.available() is False
    trainer = types.SimpleNamespace(
        updater=types.SimpleNamespace(iteration=1, epoch_detail=0.25), out=str(tmp_path)
    )
    # chainer 7.8.1: each call warns, nothing is sampled, no file is written
    with pytest.warns(UserWarning, match=MISSING):
        ext(trainer)
    assert ext._samples.counter == 0 and list(tmp_path.iterdir()) == []


def test_reservoir_and_statistician() -> None:
    np.random.seed(3)
    r = vsp.Reservoir(3, (1,))
    for i in range(1, 11):
        r.add(np.array([i], np.float32), idx=i)
    idxs, data = r.get_data()
    # chainer 7.8.1 (the same seed and draws): indices [1, 6, 10]
    assert idxs.tolist() == [1, 6, 10] and data.ravel().tolist() == [1.0, 6.0, 10.0]
    assert idxs.dtype == np.int32 and data.dtype == np.float32
    out = vsp.Statistician(True, True, (0, 50, 100))(np.array([[1.0, 4.0], [3.0, 8.0]]), axis=0)
    np.testing.assert_allclose(out["mean"], [2.0, 6.0])
    np.testing.assert_allclose(out["std"], [1.0, 2.0])
    np.testing.assert_allclose(out["percentile"], [[1.0, 4.0], [2.0, 6.0], [3.0, 8.0]])
    assert vsp.Statistician(False, False, ())(np.ones(3), axis=None) == {}


def _trainer(tmp_path: Path) -> Any:
    np.random.seed(0)
    x = np.random.randn(8, 3).astype(np.float32)
    t = (x[:, 0] > 0).astype(np.int32)
    model = L.Classifier(L.Linear(3, 2))
    opt = chainer.optimizers.SGD(lr=0.1).setup(model)
    it = chainer.iterators.SerialIterator(chainer.datasets.TupleDataset(x, t), 4, shuffle=False)
    updater = training.updaters.StandardUpdater(it, opt)
    return training.Trainer(updater, (3, "epoch"), out=str(tmp_path)), model


def test_in_a_trainer(script: types.ModuleType, tmp_path: Path) -> None:
    trainer, model = _trainer(tmp_path)
    ext = extensions.VariableStatisticsPlot(model, trigger=(2, "epoch"))
    trainer.extend(ext)
    trainer.run()
    idxs, data = ext._samples.get_data()
    assert idxs.tolist() == [1, 2, 3, 4, 5, 6]
    # the last row: the statistics of the trained parameters and of their last gradients
    w, b = model.predictor.W, model.predictor.b
    params = np.concatenate([w.array.ravel(), b.array.ravel()])
    grads = np.concatenate([w.grad.ravel(), b.grad.ravel()])
    for row, values in zip(data[-1], (params, grads)):
        expected = [values.mean(), values.std(), *np.percentile(values, vsp._DEFAULT_PERCENTILES)]
        np.testing.assert_allclose(row, np.asarray(expected, np.float32), rtol=1e-6, atol=1e-7)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["statistics.png"]
    saves = [c for c in script.LOG if c[:2] == ["fig", "savefig"]]
    assert len(saves) == 1  # epoch 2 (iteration 4)


def test_with_real_matplotlib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    matplotlib = pytest.importorskip("matplotlib", reason="the plot is drawn with matplotlib")
    matplotlib.use("Agg")
    _fresh_check(monkeypatch)
    assert extensions.VariableStatisticsPlot.available() is True
    for kw in (
        {},
        {"plot_std": False, "percentile_sigmas": (10, 90, 30, 70), "marker": "o"},
        {"report_grad": False, "plot_mean": False, "plot_std": False},
        {"report_data": False, "percentile_sigmas": 50, "grid": False, "figsize": (4, 3)},
    ):
        out = tmp_path / str(len(list(tmp_path.iterdir())))
        out.mkdir()
        trainer, model = _trainer(out)
        trainer.extend(extensions.VariableStatisticsPlot(model, trigger=(1, "epoch"), **kw))
        trainer.run()
        png = out / "statistics.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", kw
