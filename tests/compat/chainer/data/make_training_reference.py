"""The training-loop scenario run by chainer 7.8.1 and by gradhub's chainer layer on the same code.

``python make_training_reference.py chainer_training_loop.npz chainer_snapshot_epoch1.npz`` run
in an environment with chainer 7.8.1 (not gradhub), from this directory, writes the reference
values and chainer's own snapshot after the first epoch (the committed files were written so);
``tests/compat/chainer/test_training_loop.py`` runs :func:`train` and :func:`resume` with the
gradhub layer and compares. numpy's global generator is seeded, so both frameworks draw the same
initial weights (LeCunNormal), data and shuffled orders.

The scenario: an MLP in ``L.Classifier`` trained with ``MomentumSGD`` by ``Trainer`` and
``StandardUpdater`` for 2 epochs from a shuffling ``SerialIterator`` (30 examples, batches of
4: the 8th batch crosses into the second epoch), with ``Evaluator`` (14 test examples, batches
of 4, the last one of 2), ``LogReport`` per epoch and per 4 iterations, ``PrintReport``,
``ExponentialShift('lr', 0.5)`` per epoch, ``observe_lr`` and a ``snapshot`` per epoch.
"""

from __future__ import annotations

import io
import os
import sys
import types
from typing import Any

import numpy as np

#: the PrintReport columns
ENTRIES = [
    "epoch",
    "iteration",
    "main/loss",
    "main/accuracy",
    "validation/main/loss",
    "validation/main/accuracy",
    "lr",
]
#: the LogReport keys recorded
LOG_KEYS = ENTRIES
ITERLOG_KEYS = ["epoch", "iteration", "main/loss", "main/accuracy"]


def _data() -> tuple[np.ndarray, np.ndarray]:
    x = np.random.randn(44, 5).astype(np.float32)
    t = (np.argmax(x[:, :3] + 0.3 * np.random.randn(44, 3), axis=1)).astype(np.int32)
    return x, t


def setup(ch: types.SimpleNamespace, out: str) -> tuple[Any, Any, Any, io.StringIO]:
    """(trainer, model, optimizer, PrintReport stream) of the scenario, after
    ``numpy.random.seed(0)``."""
    chainer, L, F = ch.chainer, ch.L, ch.F
    training, extensions = ch.training, ch.extensions

    class MLP(chainer.Chain):
        def __init__(self) -> None:
            super().__init__()
            with self.init_scope():
                self.l1 = L.Linear(5, 8)
                self.l2 = L.Linear(8, 3)

        def forward(self, x: Any) -> Any:
            return self.l2(F.relu(self.l1(x)))

    np.random.seed(0)
    model = L.Classifier(MLP())
    optimizer = chainer.optimizers.MomentumSGD(lr=0.1).setup(model)
    x, t = _data()
    train = chainer.datasets.TupleDataset(x[:30], t[:30])
    test = chainer.datasets.TupleDataset(x[30:], t[30:])
    train_iter = chainer.iterators.SerialIterator(train, 4, shuffle=True)
    test_iter = chainer.iterators.SerialIterator(test, 4, repeat=False, shuffle=False)
    updater = training.updaters.StandardUpdater(train_iter, optimizer)
    trainer = training.Trainer(updater, (2, "epoch"), out=out)
    trainer.extend(extensions.Evaluator(test_iter, model))
    trainer.extend(extensions.ExponentialShift("lr", 0.5), trigger=(1, "epoch"))
    trainer.extend(extensions.observe_lr())
    trainer.extend(extensions.LogReport())
    trainer.extend(
        extensions.LogReport(
            keys=["main/loss", "main/accuracy"], trigger=(4, "iteration"), filename=None
        ),
        name="iterlog",
    )
    stream = io.StringIO()
    trainer.extend(extensions.PrintReport(ENTRIES, out=stream))
    trainer.extend(
        extensions.snapshot(filename="snapshot_epoch_{.updater.epoch}"), trigger=(1, "epoch")
    )
    return trainer, model, optimizer, stream


def _record(prefix: str, trainer: Any, model: Any, optimizer: Any) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for name, p in model.namedparams():
        out[prefix + "param" + name] = np.array(p.array)
    out[prefix + "t"] = np.array(optimizer.t)
    out[prefix + "epoch"] = np.array(optimizer.epoch)
    out[prefix + "lr"] = np.array(optimizer.lr)
    out[prefix + "iteration"] = np.array(trainer.updater.iteration)
    return out


def train(ch: types.SimpleNamespace, out: str) -> dict[str, np.ndarray]:
    """The uninterrupted run: final parameters, optimizer counters, both logs, the printed
    table."""
    trainer, model, optimizer, stream = setup(ch, out)
    trainer.run()
    res = _record("train/", trainer, model, optimizer)
    log = trainer.get_extension("LogReport").log
    for key in LOG_KEYS:
        res["log/" + key] = np.array([entry[key] for entry in log], np.float64)
    iterlog = trainer.get_extension("iterlog").log
    for key in ITERLOG_KEYS:
        res["iterlog/" + key] = np.array([entry[key] for entry in iterlog], np.float64)
    res["print"] = np.array(stream.getvalue())
    return res


def resume(ch: types.SimpleNamespace, out: str, snapshot: str) -> dict[str, np.ndarray]:
    """A new trainer of the scenario loads ``snapshot`` (taken after epoch 1) and runs to the
    end: its final parameters and both logs."""
    trainer, model, optimizer, _ = setup(ch, out)
    ch.serializers.load_npz(snapshot, trainer)
    trainer.run()
    res = _record("resume/", trainer, model, optimizer)
    log = trainer.get_extension("LogReport").log
    for key in LOG_KEYS:
        res["resume_log/" + key] = np.array([entry[key] for entry in log], np.float64)
    return res


if __name__ == "__main__":
    import shutil
    import tempfile

    import chainer
    import chainer.functions as F
    import chainer.links as L
    from chainer import serializers, training
    from chainer.training import extensions

    ns = types.SimpleNamespace(
        chainer=chainer, F=F, L=L, training=training, extensions=extensions, serializers=serializers
    )
    tmp = tempfile.mkdtemp()
    res = train(ns, os.path.join(tmp, "train"))
    snap = os.path.join(tmp, "train", "snapshot_epoch_1")
    res.update(resume(ns, os.path.join(tmp, "resume"), snap))
    np.savez(sys.argv[1], **res)
    shutil.copy(snap, sys.argv[2])
    with open(os.path.join(tmp, "train", "log")) as f:
        print(f.read())
    print(res["print"])
    for k in sorted(res):
        print(k, res[k])
