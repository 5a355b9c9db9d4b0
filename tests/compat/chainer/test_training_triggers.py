"""``triggers.EarlyStoppingTrigger`` as a trainer's stop trigger against chainer 7.8.1: the
same runs (8 examples in batches of 2, so 4 iterations an epoch; an extension writes a scripted
float32 value into the observation) stop at chainer's iteration with chainer's ``count``,
``best``, printed lines and warnings."""

from __future__ import annotations

import tempfile
import warnings
from typing import Any

import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import training
from gradhub_compat.chainer.training import extensions, triggers

VALS = [5, 4, 3, 3.5, 3.2, 3.1, 2.9, 3.0, 3.3, 3.4, 3.6, 3.7, 3.9, 4, 4.1, 4.2] + [5] * 200
ACC = [0.1, 0.2, 0.3, 0.3, 0.25, 0.2, 0.1, 0.0] * 30


def _run(
    values: list[float], key: str = "main/metric", every: int = 1, offset: int = 0, **kw: Any
) -> tuple[Any, Any, list[str]]:
    np.random.seed(0)
    x = np.random.randn(8, 3).astype(np.float32)
    t = (x[:, 0] > 0).astype(np.int32)
    opt = chainer.optimizers.SGD(lr=0.01).setup(L.Classifier(L.Linear(3, 2)))
    it = chainer.iterators.SerialIterator(chainer.datasets.TupleDataset(x, t), 2, shuffle=False)
    updater = training.updaters.StandardUpdater(it, opt)
    trig = triggers.EarlyStoppingTrigger(**kw)
    trainer = training.Trainer(updater, trig, out=tempfile.mkdtemp())

    @training.make_extension(trigger=(1, "iteration"), priority=training.PRIORITY_WRITER)
    def write(tr: Any) -> None:
        i = tr.updater.iteration
        if (i - offset) % every == 0 and i - 1 < len(values):
            tr.observation[key] = np.float32(values[i - 1])

    trainer.extend(write)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer.run()
    return updater, trig, sorted({str(w.message) for w in caught})


# chainer 7.8.1: (keyword arguments, values, stop iteration, count, best, warnings)
CASES: dict[str, tuple[dict[str, Any], list[float], int, int, float, list[str]]] = {
    "per_iteration": (
        {"monitor": "main/metric", "check_trigger": (1, "iteration")}, VALS, 6, 3, 3.0, []
    ),
    # the mean over each epoch: 3.875, 3.05, 3.5, 3.95, 4.5 -> no better mean twice
    "per_epoch": ({"monitor": "main/metric", "patience": 2}, VALS, 16, 2, 3.05, []),
    "accuracy_auto_max": (
        {"monitor": "a/accuracy", "check_trigger": (1, "iteration"), "patients": 2}, ACC, 5, 2,
        0.3, [],
    ),
    "mode_max": (
        {"monitor": "main/metric", "check_trigger": (1, "iteration"), "mode": "max"}, VALS, 4, 3,
        5.0, [],
    ),
    "accuracy_mode_min": (
        {"monitor": "a/accuracy", "check_trigger": (1, "iteration"), "mode": "min"}, ACC, 4, 3,
        0.1, [],
    ),
    "max_trigger": (
        {"monitor": "main/metric", "max_trigger": (5, "iteration"),
         "check_trigger": (1, "iteration"), "patience": 100}, VALS, 5, 1, 3.0, [],
    ),
    "missing": (
        {"monitor": "nothing", "max_trigger": (2, "epoch")}, VALS, 8, 0, float("inf"),
        ["nothing is not in observation"],
    ),
    # reported at iterations 3, 6, 9...; checked at 2, 4, 6...: a check without the value warns
    # and keeps the running mean for the next check
    "sparse": (
        {"monitor": "main/metric", "check_trigger": (2, "iteration"), "patience": 2,
         "max_trigger": (40, "iteration")}, VALS, 18, 2, 3.05,
        ["main/metric is not in observation"],
    ),
    # reported at odd iterations, checked at multiples of 4: never compared
    "never_at_check": (
        {"monitor": "main/metric", "check_trigger": (4, "iteration"), "patience": 2,
         "max_trigger": (40, "iteration")}, VALS, 40, 0, float("inf"),
        ["main/metric is not in observation"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_early_stopping_matches_chainer(name: str) -> None:
    kw, values, iteration, count, best, warned = CASES[name]
    key = "main/metric" if name == "missing" else kw["monitor"]
    every, offset = {"sparse": (3, 0), "never_at_check": (2, 1)}.get(name, (1, 0))
    updater, trig, caught = _run(values, key=key, every=every, offset=offset, **kw)
    assert updater.iteration == iteration
    assert trig.count == count
    np.testing.assert_allclose(float(trig.best), best, rtol=1e-6)
    assert caught == warned


def test_early_stopping_verbose_lines(capsys: pytest.CaptureFixture[str]) -> None:
    updater, _, _ = _run(
        VALS, monitor="main/metric", check_trigger=(2, "iteration"), patience=1, verbose=True
    )
    assert updater.iteration == 10  # chainer 7.8.1
    assert capsys.readouterr().out == (
        "early stopping: operator is less\nEpoch 2: early stopping\n"
    )  # chainer 7.8.1
    _run(ACC, key="a/accuracy", monitor="a/accuracy", patience=2, verbose=True)
    assert capsys.readouterr().out.startswith("early stopping: operator is greater\n")


def test_early_stopping_defaults_and_arguments() -> None:
    trig = triggers.EarlyStoppingTrigger()
    # chainer 7.8.1
    assert (trig.patience, trig.monitor, trig.verbose, trig.count) == (3, "main/loss", False, 0)
    assert trig.best == float("inf")
    assert trig.get_training_length() == (100, "epoch")
    assert not hasattr(trig, "serialize")  # chainer's keeps no state in a snapshot
    assert triggers.EarlyStoppingTrigger(patients=5).patience == 5
    assert triggers.EarlyStoppingTrigger(max_trigger=(7, "iteration")).get_training_length() == (
        7,
        "iteration",
    )
    with pytest.raises(TypeError, match="Both 'patience' and 'patients' arguments"):
        triggers.EarlyStoppingTrigger(patience=2, patients=3)
    with pytest.raises(TypeError, match=r"EarlyStoppingTrigger.__init__\(\).*'foo'"):
        triggers.EarlyStoppingTrigger(foo=3)


def test_early_stopping_with_evaluator(tmp_path: Any) -> None:
    # the usual use: stop on the validation loss written by Evaluator once per epoch
    np.random.seed(0)
    x = np.random.randn(12, 3).astype(np.float32)
    t = (x[:, 0] > 0).astype(np.int32)
    model = L.Classifier(L.Linear(3, 2))
    opt = chainer.optimizers.SGD(lr=0.0).setup(model)  # lr 0: the loss never improves
    data = chainer.datasets.TupleDataset(x, t)
    train_iter = chainer.iterators.SerialIterator(data, 4)
    test_iter = chainer.iterators.SerialIterator(data, 4, repeat=False, shuffle=False)
    trainer = training.Trainer(
        training.updaters.StandardUpdater(train_iter, opt),
        triggers.EarlyStoppingTrigger(monitor="validation/main/loss", patience=2),
        out=str(tmp_path),
    )
    trainer.extend(extensions.Evaluator(test_iter, model))
    trainer.run()
    # epoch 1 sets best, epochs 2 and 3 equal it (not better): stop after epoch 3
    assert (trainer.updater.epoch, trainer.updater.iteration) == (3, 9)  # chainer 7.8.1
