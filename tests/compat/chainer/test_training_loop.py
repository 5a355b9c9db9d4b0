"""chainer's training loop in gradhub's chainer layer against chainer 7.8.1.

data/make_training_reference.py (an MLP ``Classifier``, ``MomentumSGD``, ``Trainer`` and
``StandardUpdater`` over a shuffling ``SerialIterator``, ``Evaluator``, two ``LogReport``s,
``PrintReport``, ``ExponentialShift``, ``observe_lr``, ``snapshot``) was run by chainer 7.8.1,
which wrote data/chainer_training_loop.npz (its parameters, logs and printed table) and
data/chainer_snapshot_epoch1.npz (its own snapshot after the first epoch). The same code runs
here with the gradhub layer: the numbers must be chainer's (float32 tolerance), the snapshots
interchangeable, and a resumed run must end where the uninterrupted one does.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import types
from pathlib import Path
from typing import Any

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import serializers, training
from gradhub_compat.chainer.training import extensions

DATA = Path(__file__).parent / "data"
NS = types.SimpleNamespace(
    chainer=chainer, F=F, L=L, training=training, extensions=extensions, serializers=serializers
)


def _scenario() -> types.ModuleType:
    sys.path.insert(0, str(DATA))
    try:
        import make_training_reference
    finally:
        sys.path.remove(str(DATA))
    return make_training_reference


def _ref() -> dict[str, np.ndarray]:
    with np.load(DATA / "chainer_training_loop.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _compare(out: dict[str, Any], ref: dict[str, np.ndarray], prefixes: tuple[str, ...]) -> None:
    keys = [k for k in ref if k.startswith(prefixes) and k != "print"]
    assert keys and sorted(k for k in out if k.startswith(prefixes) and k != "print") == sorted(
        keys
    )
    for key in keys:
        np.testing.assert_allclose(
            np.asarray(out[key], np.float64), ref[key], rtol=0, atol=2e-6, err_msg=key
        )


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("train")
    return _scenario().train(NS, str(out)), out


def test_training_matches_chainer(trained: tuple[dict[str, Any], Path]) -> None:
    res, _ = trained
    ref = _ref()
    _compare(res, ref, ("train/", "log/", "iterlog/"))
    # chainer 7.8.1: 15 iterations (30 examples, batches of 4, 2 epochs), lr halved twice
    assert int(res["train/iteration"]) == 15 and int(res["train/epoch"]) == 2
    assert float(res["train/lr"]) == 0.025
    np.testing.assert_array_equal(res["log/iteration"], [8, 15])
    np.testing.assert_array_equal(res["iterlog/iteration"], [4, 8, 12])
    assert res["log/main/loss"][1] < res["log/main/loss"][0]  # it trains


def test_print_report_prints_chainers_table(trained: tuple[dict[str, Any], Path]) -> None:
    res, _ = trained
    assert str(res["print"]) == str(_ref()["print"])


def test_log_file_is_chainers_json(trained: tuple[dict[str, Any], Path]) -> None:
    res, out = trained
    text = (out / "log").read_text()
    log = json.loads(text)
    assert text == json.dumps(log, indent=4)  # chainer's json.dump(log, f, indent=4)
    assert [sorted(e) for e in log] == [
        sorted(
            [
                "main/loss",
                "main/accuracy",
                "validation/main/loss",
                "validation/main/accuracy",
                "lr",
                "epoch",
                "iteration",
                "elapsed_time",
            ]
        )
    ] * 2
    np.testing.assert_allclose([e["main/loss"] for e in log], res["log/main/loss"], rtol=1e-7)
    assert [e["epoch"] for e in log] == [1, 2]
    assert 0 < log[0]["elapsed_time"] <= log[1]["elapsed_time"]
    assert sorted(p.name for p in out.iterdir()) == ["log", "snapshot_epoch_1", "snapshot_epoch_2"]


def test_snapshot_has_chainers_keys(trained: tuple[dict[str, Any], Path]) -> None:
    _, out = trained
    with (
        np.load(out / "snapshot_epoch_1", allow_pickle=False) as mine,
        np.load(DATA / "chainer_snapshot_epoch1.npz", allow_pickle=False) as theirs,
    ):
        assert sorted(mine.files) == sorted(theirs.files)
        for key in theirs.files:
            assert mine[key].shape == theirs[key].shape, key
            if theirs[key].dtype.kind == "U":
                assert mine[key].dtype.kind == "U", key
                continue
            assert mine[key].dtype == theirs[key].dtype, key
            if key.endswith("elapsed_time"):
                continue
            np.testing.assert_allclose(mine[key], theirs[key], rtol=0, atol=2e-6, err_msg=key)


def test_resume_from_own_snapshot_ends_as_uninterrupted(
    trained: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    res, out = trained
    resumed = _scenario().resume(NS, str(tmp_path), str(out / "snapshot_epoch_1"))
    for key in [k for k in res if k.startswith("train/")]:
        np.testing.assert_array_equal(
            resumed["resume/" + key[len("train/") :]], res[key], err_msg=key
        )
    for key in [k for k in res if k.startswith("log/")]:
        np.testing.assert_array_equal(resumed["resume_" + key], res[key], err_msg=key)
    _compare(resumed, _ref(), ("resume/", "resume_log/"))


def test_resume_from_chainers_snapshot(tmp_path: Path) -> None:
    resumed = _scenario().resume(NS, str(tmp_path), str(DATA / "chainer_snapshot_epoch1.npz"))
    _compare(resumed, _ref(), ("resume/", "resume_log/"))


# -- the pieces, one by one --------------------------------------------------------------------


def _tiny_trainer(tmp_path: Path, n: int = 8, batch: int = 4, **kw: Any) -> Any:
    np.random.seed(0)
    x = np.random.randn(n, 3).astype(np.float32)
    t = (x[:, 0] > 0).astype(np.int32)
    model = L.Classifier(L.Linear(3, 2))
    opt = chainer.optimizers.SGD(lr=0.1).setup(model)
    it = chainer.iterators.SerialIterator(chainer.datasets.TupleDataset(x, t), batch)
    updater = training.updaters.StandardUpdater(it, opt, **kw)
    return training.Trainer(updater, (2, "epoch"), out=str(tmp_path))


def test_trainer_extension_order_names_and_errors(tmp_path: Path) -> None:
    trainer = _tiny_trainer(tmp_path)
    calls: list[str] = []

    @training.make_extension(trigger=(1, "epoch"), priority=training.PRIORITY_READER)
    def reader(tr: Any) -> None:
        calls.append("reader")

    @training.make_extension(trigger=(1, "epoch"), priority=training.PRIORITY_WRITER)
    def writer(tr: Any) -> None:
        calls.append("writer")
        tr.observation["x"] = 1.0

    trainer.extend(reader)
    trainer.extend(writer)
    trainer.extend(writer)  # a repeated name gets _1
    assert trainer.get_extension("writer_1") is writer
    with pytest.raises(ValueError, match="prohibited"):
        trainer.extend(reader, name="training")
    with pytest.raises(ValueError, match="extension nope not found"):
        trainer.get_extension("nope")
    with pytest.raises(RuntimeError, match="not been started"):
        trainer.elapsed_time  # noqa: B018
    trainer.run()
    # per epoch: the writers (priority 300) before the reader (100)
    assert calls == ["writer", "writer", "reader"] * 2
    assert trainer.updater.iteration == 4 and trainer.elapsed_time > 0
    with pytest.raises(RuntimeError, match="multiple times"):
        trainer.run()


def test_trainer_on_error_and_finalize(tmp_path: Path) -> None:
    trainer = _tiny_trainer(tmp_path)
    seen: list[str] = []

    class Boom(training.Extension):
        def __call__(self, tr: Any) -> None:
            if tr.updater.iteration == 2:
                raise ValueError("boom")

        def on_error(self, tr: Any, exc: BaseException, tb: Any) -> None:
            seen.append(f"on_error {exc}")

        def finalize(self) -> None:
            seen.append("finalize")

    trainer.extend(Boom())
    with pytest.raises(ValueError, match="boom"):
        trainer.run(show_loop_exception_msg=False)
    assert seen == ["on_error boom", "finalize"]


def test_standard_updater_dict_batches_and_loss_func(tmp_path: Path) -> None:
    np.random.seed(0)
    x = np.random.randn(4, 3).astype(np.float32)
    model = L.Linear(3, 1)
    opt = chainer.optimizers.SGD(lr=0.5).setup(model)
    ds = chainer.datasets.DictDataset(x=x, y=np.zeros((4, 1), np.float32))
    it = chainer.iterators.SerialIterator(ds, 4, shuffle=False)
    got: list[Any] = []

    def loss_func(x: Any, y: Any) -> Any:
        got.append((x.shape, y.shape))
        return F.sum((model(x) - y) ** 2)

    w0 = model.W.array.copy()
    b0 = model.b.array.copy()
    updater = training.updaters.StandardUpdater(it, opt, loss_func=loss_func)
    updater.update()
    assert got == [((4, 3), (4, 1))]
    # one SGD step on sum((x w + b)^2): grad W = 2 r^T x, grad b = 2 sum r
    r = x @ w0.T + b0
    np.testing.assert_allclose(model.W.array, w0 - 0.5 * 2 * r.T @ x, rtol=1e-5)
    assert updater.iteration == 1 and updater.epoch == 1 and updater.is_new_epoch
    assert opt.epoch == 1  # auto_new_epoch
    assert updater.get_optimizer("main") is opt and updater.get_iterator("main") is it


def test_standard_updater_refusals() -> None:
    model = L.Linear(3, 1)
    opt = chainer.optimizers.SGD().setup(model)
    it = chainer.iterators.SerialIterator([np.zeros(3, np.float32)], 1)
    with pytest.raises(NotImplementedError, match="loss_scale"):
        training.updaters.StandardUpdater(it, opt, loss_scale=128.0)
    with pytest.raises(TypeError, match="iterator must be"):
        training.updaters.StandardUpdater([1, 2], opt)
    with pytest.raises(RuntimeError, match="not set up"):
        training.updaters.StandardUpdater(it, chainer.optimizers.SGD())
    with pytest.raises(NotImplementedError, match="migration-chainer"):
        training.updaters.ParallelUpdater  # noqa: B018


def test_interval_and_manual_triggers() -> None:
    class Up:
        iteration = 0
        epoch_detail = 0.0
        previous_epoch_detail = None

    tr = types.SimpleNamespace(updater=Up())
    every3 = training.triggers.IntervalTrigger(3, "iteration")
    half = training.triggers.IntervalTrigger(0.5, "epoch")
    manual = training.triggers.ManualScheduleTrigger([2, 5], "iteration")
    fired = []
    for i in range(1, 8):
        Up.iteration = i
        Up.epoch_detail = i * 0.2  # 5 iterations an epoch
        fired.append((every3(tr), half(tr), manual(tr)))
    # chainer 7.8.1 (the same loop)
    assert [f[0] for f in fired] == [False, False, True, False, False, True, False]
    # epoch_detail 0.2, 0.4, 0.6 (crosses 0.5), 0.8, 1.0 (crosses 1.0), 1.2, 1.4
    assert [f[1] for f in fired] == [False, False, True, False, True, False, False]
    assert [f[2] for f in fired] == [False, True, False, False, True, False, False]
    assert manual.finished
    with pytest.raises(ValueError, match="Trigger unit"):
        training.triggers.IntervalTrigger(1, "day")
    assert training.get_trigger(None)(tr) is False
    assert isinstance(training.get_trigger((1, "epoch")), training.IntervalTrigger)
    assert str(training.IntervalTrigger(2, "epoch")) == "IntervalTrigger(2, 'epoch')"


def test_min_max_value_triggers() -> None:
    class Up:
        iteration = 0
        epoch_detail = 0.0
        previous_epoch_detail = None

    tr = types.SimpleNamespace(updater=Up(), observation={})
    tmin = training.triggers.MinValueTrigger("loss", trigger=(2, "iteration"))
    tmax = training.triggers.MaxValueTrigger("loss", trigger=(2, "iteration"))
    got = []
    for i, loss in enumerate([3.0, 1.0, 2.0, 4.0, 1.0, 0.5], start=1):
        Up.iteration = i
        tr.observation = {"loss": np.float32(loss)}
        got.append((tmin(tr), tmax(tr)))
    # the means over each pair: 2.0, 3.0, 0.75 (chainer 7.8.1 gave the same firings)
    assert got == [
        (False, False),
        (True, True),
        (False, False),
        (False, True),
        (False, False),
        (True, False),
    ]


def test_evaluator_averages_batches_and_restores_train_mode() -> None:
    seen: list[tuple[bool, bool, int]] = []

    class Probe(chainer.Chain):
        def forward(self, x: Any) -> Any:
            seen.append((chainer.config.train, chainer.config.enable_backprop, len(x)))
            chainer.report({"n": np.float32(len(x)), "first": x[0, 0]}, self)
            return x

    data = np.arange(10, dtype=np.float32).reshape(5, 2)
    it = chainer.iterators.SerialIterator(data, 2, repeat=False, shuffle=False)
    probe = Probe()
    ev = extensions.Evaluator(it, probe)
    ev.name = "validation"
    reporter = chainer.Reporter()
    obs: dict[str, Any] = {}
    with reporter.scope(obs):
        result = ev()
    assert seen == [(False, False, 2), (False, False, 2), (False, False, 1)]
    assert chainer.config.train is True
    # each batch weighs 1 (chainer): mean of 2, 2, 1 and of x[0, 0] = 0, 4, 8
    np.testing.assert_allclose(result["validation/main/n"], 5 / 3, rtol=1e-6)
    np.testing.assert_allclose(result["validation/main/first"], 4.0)
    assert sorted(obs) == ["validation/main/first", "validation/main/n"]
    other = chainer.Reporter()  # evaluate() reports to the current reporter, as chainer's
    other.add_observer("main", probe)
    with other:
        again = ev.evaluate()  # the iterator is reset: the same sweep
    np.testing.assert_allclose(again["main/n"], 5 / 3, rtol=1e-6)


def test_evaluator_warns_on_repeating_iterator() -> None:
    it = chainer.iterators.SerialIterator([np.zeros(1, np.float32)], 1)
    with pytest.warns(UserWarning, match="repeat"):
        extensions.Evaluator(it, L.Linear(1, 1))


def test_progress_bar_writes_to_its_stream(tmp_path: Path) -> None:
    trainer = _tiny_trainer(tmp_path)
    out = io.StringIO()
    trainer.extend(extensions.ProgressBar(update_interval=2, out=out))
    trainer.run()
    text = out.getvalue()
    assert "     total [" in text and "this epoch [" in text
    assert "         2 iter, 1 epoch / 2 epochs" in text
    assert "         4 iter, 2 epoch / 2 epochs" in text
    assert "100.00%" in text and "\033[4A" in text


def test_shifts_and_observers(tmp_path: Path) -> None:
    trainer = _tiny_trainer(tmp_path, n=8, batch=2)  # 4 iterations an epoch, 8 in all
    trainer.extend(extensions.LinearShift("lr", (0.1, 0.5), (1, 3)))  # every iteration
    trainer.extend(
        extensions.observe_value("twice_lr", lambda tr: 2 * tr.updater.get_optimizer("main").lr)
    )
    trainer.extend(extensions.observe_lr(), trigger=(1, "iteration"))
    trainer.extend(extensions.LogReport(keys=["lr", "twice_lr"], trigger=(1, "iteration")))
    trainer.run()
    log = trainer.get_extension("LogReport").log
    # t = 1..8 firings: 0.1 until t=1, then linear to 0.5 at t=3; observe_lr (priority 300)
    # reads the value set at the previous iteration (LinearShift has priority 100)
    lrs = [e["lr"] for e in log]  # chainer 7.8.1 (the same code)
    np.testing.assert_allclose(lrs, [0.1, 0.1, 0.3, 0.5, 0.5, 0.5, 0.5, 0.5])
    assert [("twice_lr" in e) for e in log] == [False, False, False, True] * 2
    np.testing.assert_allclose(log[3]["twice_lr"], 1.0)


def test_exponential_shift_target_and_refusal() -> None:
    opt = chainer.optimizers.SGD(lr=1.0).setup(L.Linear(1, 1))
    ext = extensions.ExponentialShift("lr", 0.5, target=0.3, optimizer=opt)
    tr = types.SimpleNamespace()
    ext.initialize(tr)
    values = []
    for _ in range(3):
        ext(tr)
        values.append(opt.lr)
    assert values == [0.5, 0.3, 0.3]  # chainer 7.8.1
    with pytest.raises(ValueError, match="negative rate"):
        extensions.ExponentialShift("lr", -1.0)


def test_fail_on_non_number(tmp_path: Path) -> None:
    trainer = _tiny_trainer(tmp_path)
    trainer.extend(extensions.FailOnNonNumber())
    model = trainer.updater.get_optimizer("main").target
    model.predictor.W.array[0, 0] = np.nan
    with pytest.raises(RuntimeError, match="diverge"):
        trainer.run(show_loop_exception_msg=False)


def test_snapshot_object_and_retains(tmp_path: Path) -> None:
    trainer = _tiny_trainer(tmp_path, n=8, batch=2)
    model = trainer.updater.get_optimizer("main").target
    trainer.extend(
        extensions.snapshot_object(model, "model_iter_{.updater.iteration}", n_retains=2),
        trigger=(2, "iteration"),
    )
    trainer.run()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["model_iter_6", "model_iter_8"]
    other = L.Classifier(L.Linear(3, 2))
    serializers.load_npz(str(tmp_path / "model_iter_8"), other)
    np.testing.assert_array_equal(other.predictor.W.array, model.predictor.W.array)
    with pytest.raises(TypeError, match="savefun and writer"):
        extensions.snapshot(savefun=serializers.save_npz, writer=object())


@pytest.mark.parametrize(
    "make",
    ["SimpleWriter", "ThreadWriter", "ThreadQueueWriter", "ProcessWriter", "ProcessQueueWriter"],
)
def test_snapshot_writers_write_every_snapshot_and_keep_n_retains(
    tmp_path: Path, make: str
) -> None:
    """chainer's snapshot writers: each snapshot written (through a temporary folder) to the
    trainer's output, the stale ones removed after each save (``n_retains``), the last one
    loadable once the trainer has finalized the writer; ``savefun`` receives the writer's
    keyword arguments."""
    writers = extensions.snapshot_writers
    calls: list[str] = []

    def savefun(path: str, target: Any, **kwds: Any) -> None:
        calls.append(os.path.basename(os.path.dirname(path)))
        serializers.save_npz(path, target, **kwds)

    cls = getattr(writers, make)
    if make in ("ThreadWriter", "SimpleWriter"):
        writer = cls(savefun=savefun, compression=False)
    else:  # (processes: a function of a module, which a child process can run)
        writer = cls(savefun=serializers.save_npz)
    trainer = _tiny_trainer(tmp_path)
    model = trainer.updater.get_optimizer("main").target
    trainer.extend(
        extensions.snapshot_object(
            model, "model_iter_{.updater.iteration}", writer=writer, n_retains=2
        ),
        trigger=(2, "iteration"),
    )
    trainer.run()
    files = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("model_iter_"))
    last = max(files, key=lambda f: int(f.rsplit("_", 1)[1]))
    assert len(files) == 2 and not [p for p in tmp_path.iterdir() if p.name.startswith("tmp")]
    other = type(model)(L.Linear(3, 2))
    serializers.load_npz(str(tmp_path / last), other)
    np.testing.assert_array_equal(other.predictor.W.array, model.predictor.W.array)
    if make in ("ThreadWriter", "SimpleWriter"):
        assert calls and all(c.startswith("tmpmodel_iter_") for c in calls)
    with pytest.raises(NotImplementedError):
        writers.Writer()("f", str(tmp_path), {})


def test_autoload_snapshot(tmp_path: Path) -> None:
    first = _tiny_trainer(tmp_path)
    first.extend(extensions.snapshot(), trigger=(1, "epoch"))
    first.run()
    second = _tiny_trainer(tmp_path)
    second.stop_trigger = training.get_trigger((3, "epoch"))
    second.extend(extensions.snapshot(autoload=True), trigger=(1, "epoch"))
    second.run()
    assert second.updater.iteration == 6  # resumed at 4 (epoch 2), one more epoch


def test_unsupported_extensions_name_the_page() -> None:
    assert extensions.PlotReport.available() is False  # the guard of chainer's examples
    with pytest.raises(NotImplementedError, match=r"PlotReport.*migration-chainer"):
        extensions.PlotReport(["main/loss"])
    # (VariableStatisticsPlot, unchain_variables, OnceTrigger and TimeTrigger are provided:
    # test_variable_statistics_plot.py, test_triggers_time_once.py)


def test_cpu_device_specifiers_give_the_same_run(tmp_path: Path) -> None:
    def final_w(**kw: Any) -> np.ndarray:
        trainer = _tiny_trainer(tmp_path, **kw)
        test_iter = chainer.iterators.SerialIterator(
            trainer.updater.get_iterator("main").dataset, 4, repeat=False, shuffle=False
        )
        model = trainer.updater.get_optimizer("main").target
        dev = kw.get("device")
        trainer.extend(extensions.Evaluator(test_iter, model, device=dev))
        trainer.extend(extensions.LogReport(filename=None))
        trainer.run()
        assert "validation/main/loss" in trainer.get_extension("LogReport").log[-1]
        return np.array(model.predictor.W.array)

    plain = final_w()
    np.testing.assert_array_equal(final_w(device=-1), plain)
    np.testing.assert_array_equal(final_w(device="@numpy"), plain)
    with pytest.raises(TypeError, match="invalid device"):
        _tiny_trainer(tmp_path, device=object())


def test_resume_initializes_deferred_parameters_and_adam_state(tmp_path: Path) -> None:
    def make(out: Path) -> tuple[Any, Any]:
        np.random.seed(0)
        x = np.random.randn(12, 3).astype(np.float32)
        t = (x[:, 0] > 0).astype(np.int32)
        seq = chainer.Sequential(L.Linear(None, 4), F.relu, L.Linear(None, 2))
        model = L.Classifier(seq)
        opt = chainer.optimizers.Adam().setup(model)
        it = chainer.iterators.SerialIterator(chainer.datasets.TupleDataset(x, t), 4)
        tr = training.Trainer(
            training.updaters.StandardUpdater(it, opt), (2, "epoch"), out=str(out)
        )
        tr.extend(extensions.snapshot(filename="s{.updater.epoch}"), trigger=(1, "epoch"))
        tr.extend(extensions.LogReport())
        return tr, model

    first, m1 = make(tmp_path / "a")
    first.run()
    second, m2 = make(tmp_path / "b")
    assert m2.predictor[0].W.array is None  # L.Linear(None, 4): the snapshot sets its shape
    serializers.load_npz(str(tmp_path / "a" / "s1"), second)
    second.run()
    np.testing.assert_array_equal(m2.predictor[0].W.array, m1.predictor[0].W.array)
    # chainer 7.8.1 ran the same code: the same sum, and the same after its own resume
    np.testing.assert_allclose(float(m1.predictor[0].W.array.sum()), 1.2187869548797607, rtol=1e-6)


def test_dump_graph_writes_the_loss_graph_once(tmp_path: Path) -> None:
    np.random.seed(0)
    x = np.random.randn(8, 3).astype(np.float32)
    t = (x[:, 0] > 0).astype(np.int32)
    model = L.Classifier(chainer.Sequential(L.Linear(3, 4), F.relu, L.Linear(4, 2)))
    opt = chainer.optimizers.SGD().setup(model)
    it = chainer.iterators.SerialIterator(chainer.datasets.TupleDataset(x, t), 4)
    trainer = training.Trainer(
        training.updaters.StandardUpdater(it, opt), (1, "epoch"), out=str(tmp_path)
    )
    trainer.extend(extensions.dump_graph("main/loss"))
    trainer.extend(extensions.LogReport())
    trainer.run()
    text = (tmp_path / "cg.dot").read_text()
    assert text.startswith("digraph graphname{rankdir=TB;") and text.endswith("}")
    nodes = dict(re.findall(r'(\d+) \[label="([^"]*)",shape="(?:octagon|record)"', text))
    edges = re.findall(r"(\d+) -> (\d+);", text)
    assert set(sum(edges, ())) == set(nodes)  # every edge joins drawn nodes, all are joined
    # chainer 7.8.1's dump of the same model has these variable labels (its function names
    # differ: LinearFunction where gradhub records Transpose and Affine)
    labels = set(nodes.values())
    for label in ("W: (4, 3), float32", "b: (4), float32", "W: (2, 4), float32", "(4, 3), float32"):
        assert label in labels, label
    assert {"ReLU", "SoftmaxCrossEntropy", "Affine"} <= labels
    # the root: the loss (0-d float32) made by the last function
    root = next(k for k, v in nodes.items() if v == "float32")
    assert any(b == root for _, b in edges)
    assert getattr(chainer.config, "keep_graph_on_report", False) is False  # restored
    assert trainer.get_extension("LogReport").log[0]["main/loss"] > 0
    with pytest.raises(ValueError, match="rankdir"):
        extensions.computational_graph.graph_to_dot(model.loss, rankdir="XX")


def test_graphviz_helpers_and_the_rendered_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """chainer's ``is_return_code_zero``/``is_graphviz_available``, and ``DumpGraph`` running
    ``dot -Tpng <dot file> -o <name>.png`` where ``dot`` runs (a stand-in ``dot`` on PATH that
    records its arguments and writes the image file)."""
    import sys

    cg = extensions.computational_graph
    assert cg.is_return_code_zero([sys.executable, "-c", "pass"])
    assert not cg.is_return_code_zero([sys.executable, "-c", "raise SystemExit(2)"])
    assert not cg.is_return_code_zero([str(tmp_path / "no-such-command")])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    assert not cg.is_graphviz_available()
    log = tmp_path / "dot.log"
    dot = bin_dir / "dot"
    dot.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"open({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        "if '-o' in sys.argv: open(sys.argv[sys.argv.index('-o') + 1], 'wb').write(b'png')\n"
    )
    dot.chmod(0o755)
    assert cg.is_graphviz_available()
    log.write_text("")
    x = np.ones((4, 3), np.float32)
    t = np.zeros(4, np.int32)
    model = L.Classifier(L.Linear(3, 2))
    opt = chainer.optimizers.SGD().setup(model)
    it = chainer.iterators.SerialIterator(chainer.datasets.TupleDataset(x, t), 4)
    out = tmp_path / "out"
    trainer = training.Trainer(
        training.updaters.StandardUpdater(it, opt), (1, "epoch"), out=str(out)
    )
    trainer.extend(extensions.dump_graph("main/loss", filename="graph.dot"))
    trainer.run()
    assert (out / "graph.dot").read_text().startswith("digraph")
    assert (out / "graph.png").read_bytes() == b"png"
    calls = log.read_text().splitlines()
    assert calls == ["-V", f"-Tpng {out / 'graph.dot'} -o {out / 'graph.png'}"]
