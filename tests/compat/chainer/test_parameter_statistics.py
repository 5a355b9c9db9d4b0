"""``extensions.ParameterStatistics`` against chainer 7.8.1: an MLP in ``L.Classifier``
trained with SGD (8 examples in batches of 2) with the extension on various links and
options. The report keys (their order and names, ``None/`` for the unnamed model, the
``percentile/0..6`` indices, the prefix) are chainer's; the values are chainer's within float32
rounding (chainer 7.8.1 averages them in float64, the layer in float32), and are also checked
against numpy statistics of the parameters recorded at each iteration."""

from __future__ import annotations

import tempfile
from typing import Any

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import reporter, training
from gradhub_compat.chainer.training import extensions as E


class _MLP(chainer.Chain):
    def __init__(self) -> None:
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(3, 4)
            self.l2 = L.Linear(4, 2)

    def __call__(self, x: Any) -> Any:
        return self.l2(F.relu(self.l1(x)))


def _run(
    make: Any, iters: int = 6, nan: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, np.ndarray]], Any]:
    """The reported statistics after each iteration, and the parameters and gradients."""
    np.random.seed(0)
    x = np.random.randn(8, 3).astype(np.float32)
    t = (x[:, 0] > 0).astype(np.int32)
    model = L.Classifier(_MLP())
    opt = chainer.optimizers.SGD(lr=0.1).setup(model)
    it = chainer.iterators.SerialIterator(chainer.datasets.TupleDataset(x, t), 2, shuffle=False)
    updater = training.updaters.StandardUpdater(it, opt)
    trainer = training.Trainer(updater, (iters, "iteration"), out=tempfile.mkdtemp())
    ext = make(model)
    trainer.extend(ext)
    if nan:
        model.predictor.l1.b.array[1] = np.nan
    logs: list[dict[str, Any]] = []
    params: list[dict[str, np.ndarray]] = []

    @training.make_extension(trigger=(1, "iteration"), priority=-1000)
    def record(tr: Any) -> None:
        logs.append({k: v for k, v in tr.observation.items() if "/data/" in k or "/grad/" in k})

    @training.make_extension(trigger=(1, "iteration"), priority=1000)
    def record_params(tr: Any) -> None:
        d = {}
        for name, p in model.predictor.namedparams():
            d[name + "/data"] = p.array.astype(np.float64).ravel()
            d[name + "/grad"] = p.grad.astype(np.float64).ravel()
        params.append(d)

    trainer.extend(record)
    trainer.extend(record_params)
    trainer.run()
    return logs, params, trainer


def _keys(prefix: str, links: list[str], attrs: list[str], stats: list[str]) -> list[str]:
    out = []
    for link in links:
        for p in ("W", "b"):
            for a in attrs:
                for s in stats:
                    out.append(f"{prefix}{link}/{p}/{a}/{s}")
    return out


DEFAULT = ["mean", "std", "min", "max", "zeros"] + [f"percentile/{i}" for i in range(7)]


def test_default_statistics_keys_and_values_match_chainer() -> None:
    logs, params, trainer = _run(
        lambda m: E.ParameterStatistics(m.predictor.l1, trigger=(2, "iteration"))
    )
    assert "parameter_statistics" in trainer._extensions  # chainer 7.8.1's default name
    assert [bool(log) for log in logs] == [False, True] * 3  # reported every 2 iterations
    # chainer 7.8.1: the keys in this order
    assert list(logs[1]) == _keys("", ["l1"], ["data", "grad"], DEFAULT)
    expected = {  # chainer 7.8.1, iteration 2
        "l1/W/data/mean": -0.022360591683536768,
        "l1/W/data/std": 0.6475515067577362,
        "l1/W/data/min": -1.143613338470459,
        "l1/W/data/max": 1.071512222290039,
        "l1/W/data/zeros": 0.0,
        "l1/W/data/percentile/0": -1.1410383496463299,
        "l1/W/data/percentile/1": -1.0984519960165025,
        "l1/W/data/percentile/2": -0.6036232756048442,
        "l1/W/data/percentile/3": 0.006955467164516449,
        "l1/W/data/percentile/4": 0.7584882555365562,
        "l1/W/data/percentile/5": 1.007019840836525,
        "l1/W/data/percentile/6": 1.0678350251019,
        "l1/W/grad/mean": 0.42685242742300034,
        "l1/W/grad/std": 0.5591173097491264,
    }
    for key, value in expected.items():
        np.testing.assert_allclose(float(logs[1][key]), value, rtol=1e-6, atol=2e-7, err_msg=key)
    # independently: the mean over the two iterations of numpy's statistics (float64)
    funcs = {
        "mean": np.mean,
        "std": np.std,
        "min": np.min,
        "max": np.max,
        "zeros": lambda a: np.count_nonzero(a == 0),
    }
    for step in (1, 3, 5):
        for key in logs[step]:
            _, p, attr, *stat = key.split("/")
            values = [params[i][f"/l1/{p}/{attr}"] for i in (step - 1, step)]
            if stat[0] == "percentile":
                q = (0.13, 2.28, 15.87, 50, 84.13, 97.72, 99.87)[int(stat[1])]
                want = np.mean([np.percentile(v, q) for v in values])
            else:
                want = np.mean([funcs[stat[0]](v) for v in values])
            np.testing.assert_allclose(float(logs[step][key]), want, rtol=1e-5, atol=1e-6)


def test_unnamed_model_gives_none_and_the_defaults() -> None:
    logs, _, _ = _run(lambda m: E.ParameterStatistics(m), iters=4)
    assert [bool(log) for log in logs] == [False, False, False, True]  # once per epoch
    keys = _keys("None/predictor/", ["l1", "l2"], ["data", "grad"], DEFAULT)
    assert list(logs[3]) == keys  # chainer 7.8.1: 96 keys
    # chainer 7.8.1
    np.testing.assert_allclose(float(logs[3]["None/predictor/l2/W/grad/zeros"]), 2.5)
    np.testing.assert_allclose(
        float(logs[3]["None/predictor/l1/W/data/percentile/3"]), 0.0019626475404947996, atol=2e-7
    )
    np.testing.assert_allclose(
        float(logs[3]["None/predictor/l1/W/data/mean"]), -0.0281154855620116, atol=2e-7
    )


def test_prefix_custom_statistics_and_no_gradients() -> None:
    ext = lambda m: E.ParameterStatistics(  # noqa: E731
        [m.predictor.l1, m.predictor.l2],
        statistics={"sum": lambda a: a.sum(), "sq": lambda a: (a * a).mean()},
        report_grads=False,
        prefix="p",
        trigger=(3, "iteration"),
    )
    logs, _, _ = _run(ext)
    expected = {  # chainer 7.8.1, iterations 3 and 6
        2: {"p/l1/W/data/sum": -0.3349880228439967, "p/l1/W/data/sq": 0.4148949285348256,
            "p/l1/b/data/sum": -0.37207802136739093, "p/l1/b/data/sq": 0.014222514039526383,
            "p/l2/W/data/sum": -0.24051242073376974, "p/l2/W/data/sq": 0.3199058175086975,
            "p/l2/b/data/sum": 1.9868214925130207e-08, "p/l2/b/data/sq": 0.029418235334257286},
        5: {"p/l1/W/data/sum": -0.5321317315101624, "p/l1/W/data/sq": 0.3884926736354828,
            "p/l1/b/data/sum": -0.5817966262499491, "p/l1/b/data/sq": 0.03151675562063853,
            "p/l2/W/data/sum": -0.24051237106323242, "p/l2/W/data/sq": 0.2871805628140767,
            "p/l2/b/data/sum": 5.960464477539063e-08, "p/l2/b/data/sq": 0.11307523647944133},
    }  # fmt: skip
    assert [bool(log) for log in logs] == [False, False, True] * 2
    for step, want in expected.items():
        assert list(logs[step]) == list(want)
        for key, value in want.items():
            np.testing.assert_allclose(float(logs[step][key]), value, rtol=1e-6, atol=2e-7)


def test_gradients_only_registered_and_none() -> None:
    ext = lambda m: E.ParameterStatistics(  # noqa: E731
        m.predictor, statistics={"mx": np.max}, report_params=False, trigger=(1, "iteration")
    )
    logs, _, _ = _run(ext, iters=2)
    want = [  # chainer 7.8.1
        [2.5262644290924072, 1.263082504272461, 1.6138983964920044, 0.9633034467697144],
        [0.6527304649353027, 0.5879678130149841, 0.44744277000427246, 0.7199821472167969],
    ]
    for log, values in zip(logs, want, strict=True):
        assert list(log) == _keys("predictor/", ["l1", "l2"], ["grad"], ["mx"])
        np.testing.assert_allclose([float(v) for v in log.values()], values, rtol=1e-6)

    def registered(m: Any) -> Any:
        e = E.ParameterStatistics(
            m.predictor.l2, statistics={}, report_grads=False, trigger=(1, "iteration")
        )
        e.register_statistics("first", lambda a: a[0])
        return e

    logs, _, _ = _run(registered, iters=1)
    assert list(logs[0]) == ["l2/W/data/first", "l2/b/data/first"]  # chainer 7.8.1
    np.testing.assert_allclose(
        [float(v) for v in logs[0].values()], [0.4537554979324341, -0.09633034467697144]
    )
    logs, _, _ = _run(
        lambda m: E.ParameterStatistics(m, statistics=None, trigger=(1, "iteration")), iters=2
    )
    assert logs == [{}, {}]  # chainer 7.8.1


def test_nan_parameters() -> None:
    # a NaN in l1/b spreads into l1/W with the first update
    ext = lambda m: E.ParameterStatistics(  # noqa: E731
        m.predictor.l1, skip_nan_params=True, report_grads=False, trigger=(1, "iteration")
    )
    logs, _, _ = _run(ext, iters=1, nan=True)
    # chainer 7.8.1: one nan per statistic, the percentile under one key
    stats = ["mean", "std", "min", "max", "zeros", "percentile"]
    assert list(logs[0]) == _keys("", ["l1"], ["data"], stats)
    assert all(np.isnan(float(v)) for v in logs[0].values())
    ext = lambda m: E.ParameterStatistics(  # noqa: E731
        m.predictor.l1,
        report_grads=False,
        statistics={"mean": np.mean, "zeros": lambda a: np.count_nonzero(a == 0)},
        trigger=(1, "iteration"),
    )
    logs, _, _ = _run(ext, iters=1, nan=True)
    values = {k: float(v) for k, v in logs[0].items()}
    assert list(values) == [
        "l1/W/data/mean",
        "l1/W/data/zeros",
        "l1/b/data/mean",
        "l1/b/data/zeros",
    ]
    assert np.isnan(values["l1/W/data/mean"]) and values["l1/W/data/zeros"] == 0.0  # chainer 7.8.1


def test_extension_attributes_and_errors() -> None:
    ext = E.ParameterStatistics(L.Linear(2, 2))
    assert (ext.default_name, ext.priority, ext.trigger) == (
        "parameter_statistics",
        300,
        (1, "iteration"),
    )
    assert sorted(E.ParameterStatistics.default_statistics) == sorted(
        ["mean", "std", "min", "max", "zeros", "percentile"]
    )
    with pytest.raises(ValueError, match="ParameterStatistics: statistics"):
        E.ParameterStatistics(L.Linear(2, 2), statistics="mean")
    # chainer 7.8.1: an uninitialized parameter raises on its data (None), or on its gradient
    # when only gradients are reported; before the first backward the gradients are NaN
    with pytest.raises(AttributeError, match="ravel"):
        E.ParameterStatistics(L.Linear(None, 2), trigger=lambda tr: True)(None)
    with pytest.raises(RuntimeError, match=r"Cannot retrieve Variable\.grad"):
        E.ParameterStatistics(L.Linear(None, 2), report_params=False, trigger=lambda tr: True)(None)
    fresh = E.ParameterStatistics(
        L.Linear(2, 2),
        statistics={"zeros": lambda a: np.count_nonzero(a == 0)},
        trigger=lambda tr: True,
    )
    observation: dict[str, Any] = {}
    with reporter.Reporter().scope(observation):
        fresh(None)
    assert {k: float(v) for k, v in observation.items()} == {
        "None/W/data/zeros": 0.0,
        "None/W/grad/zeros": 0.0,
        "None/b/data/zeros": 2.0,
        "None/b/grad/zeros": 0.0,
    }  # chainer 7.8.1
    # reported without an observer prefix into the current reporter's observation
    link = L.Linear(2, 1)
    link.W.array[...] = np.array([[1.0, 3.0]], np.float32)
    link.b.array[...] = 0
    ext = E.ParameterStatistics(
        link, statistics={"mean": np.mean}, report_grads=False, trigger=lambda tr: True
    )
    observation = {}
    with reporter.Reporter().scope(observation):
        ext(None)
    assert {k: float(v) for k, v in observation.items()} == {
        "None/W/data/mean": 2.0,
        "None/b/data/mean": 0.0,
    }
