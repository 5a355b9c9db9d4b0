"""``triggers.OnceTrigger``, ``triggers.TimeTrigger`` and ``extensions.unchain_variables``
against chainer 7.8.1 (every expected value below was recorded from chainer 7.8.1 on the same
calls, 2026-11-28): firing sequences, ``finished``, the snapshot keys and what loading a
snapshot does, and runs in a ``Trainer`` whose clock is a stand-in (no sleeping)."""

from __future__ import annotations

import inspect
import io
import tempfile
import types
from typing import Any

import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import serializers, training
from gradhub_compat.chainer.training import extensions, triggers
from gradhub_compat.chainer.training import trainer as trainer_module

MISSING_FLAG = (
    "The flag is not saved.OnceTrigger guess it is not first when resumed. If this trigger is "
    "resumed before first called, it may not work correctly."
)


def _saved(obj: Any) -> dict[str, np.ndarray]:
    s = serializers.DictionarySerializer()
    obj.serialize(s)
    return s.target


def _load(obj: Any, saved: dict[str, np.ndarray]) -> None:
    """Load ``saved`` into ``obj`` through an NPZ file, as a snapshot is resumed."""
    buf = io.BytesIO()
    serializers.save_npz(buf, saved)
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as npz:
        obj.serialize(serializers.NpzDeserializer(npz))


# -- OnceTrigger ---------------------------------------------------------------------------------
def test_once_trigger_fires_once() -> None:
    # chainer 7.8.1: [True, False, False], finished True afterwards (False before)
    for call_on_resume in (False, True):
        t = triggers.OnceTrigger(call_on_resume)
        assert t.finished is False
        assert [t(None) for _ in range(3)] == [True, False, False]
        assert t.finished is True


def test_once_trigger_snapshot_keys() -> None:
    # chainer 7.8.1: {'_flag_first': array(True)} (bool, shape ()) before the first call,
    # array(False) after it; call_on_resume is not saved
    t = triggers.OnceTrigger(call_on_resume=True)
    before = _saved(t)
    assert list(before) == ["_flag_first"]
    assert before["_flag_first"].dtype == np.bool_ and before["_flag_first"].shape == ()
    assert bool(before["_flag_first"]) is True
    t(None)
    assert bool(_saved(t)["_flag_first"]) is False


@pytest.mark.parametrize(
    ("fired", "call_on_resume", "finished", "fires"),
    [
        # chainer 7.8.1: (loaded from a fired trigger?, call_on_resume) -> finished, 2 calls
        (True, False, True, [False, False]),
        (True, True, False, [True, False]),
        (False, False, False, [True, False]),
        (False, True, False, [True, False]),
    ],
)
def test_once_trigger_resumed(
    fired: bool, call_on_resume: bool, finished: bool, fires: list[bool]
) -> None:
    source = triggers.OnceTrigger()
    if fired:
        source(None)
    t = triggers.OnceTrigger(call_on_resume)
    _load(t, _saved(source))
    assert t.finished is finished
    assert [t(None) for _ in range(2)] == fires


def test_once_trigger_snapshot_without_the_flag_warns() -> None:
    # chainer 7.8.1: UserWarning (MISSING_FLAG); call_on_resume False: finished, never fires;
    # True: fires once
    for call_on_resume, fires in ((False, [False, False]), (True, [True, False])):
        t = triggers.OnceTrigger(call_on_resume)
        with pytest.warns(UserWarning) as caught:
            _load(t, {})
        assert [str(w.message) for w in caught] == [MISSING_FLAG]
        assert t.finished is (not call_on_resume)
        assert [t(None) for _ in range(2)] == fires


# -- TimeTrigger ---------------------------------------------------------------------------------
def test_time_trigger_sequence() -> None:
    # chainer 7.8.1, TimeTrigger(1.5): (elapsed_time, fired, _next_time after the call)
    expected = [
        (0.0, False, 1.5), (0.5, False, 1.5), (1.5, False, 1.5), (1.6, True, 3.0),
        (2.0, False, 3.0), (3.0, False, 3.0), (3.01, True, 4.5), (7.0, True, 6.0),
        (7.1, True, 7.5), (7.2, False, 7.5), (9.0, True, 9.0),
    ]  # fmt: skip
    t = triggers.TimeTrigger(1.5)
    got = []
    for elapsed, _, _ in expected:
        fired = t(types.SimpleNamespace(elapsed_time=elapsed))
        got.append((elapsed, fired, t._next_time))
    assert got == expected
    assert not hasattr(t, "finished") and not hasattr(t, "get_training_length")


def test_time_trigger_int_period() -> None:
    # chainer 7.8.1: TimeTrigger(2) at 2, 2.0001, 4, 4.5 -> [False, True, False, True], 6
    t = triggers.TimeTrigger(2)
    fired = [t(types.SimpleNamespace(elapsed_time=s)) for s in (2, 2.0001, 4, 4.5)]
    assert fired == [False, True, False, True]
    assert t._next_time == 6 and type(t._next_time) is int


def test_time_trigger_snapshot() -> None:
    # chainer 7.8.1: {'next_time': array(9.)} (float64, shape ()); loaded: 9.0 (a float);
    # a snapshot without it: KeyError 'next_time'
    t = triggers.TimeTrigger(1.5)
    for elapsed in (1.6, 3.01, 7.0, 7.1, 9.0):
        t(types.SimpleNamespace(elapsed_time=elapsed))
    saved = _saved(t)
    assert list(saved) == ["next_time"]
    assert saved["next_time"].dtype == np.float64 and saved["next_time"].shape == ()
    assert float(saved["next_time"]) == 9.0
    u = triggers.TimeTrigger(1.5)
    _load(u, saved)
    assert u._next_time == 9.0 and type(u._next_time) is float
    with pytest.raises(KeyError, match="next_time"):
        _load(triggers.TimeTrigger(1.5), {})


# -- in a Trainer, with a stand-in clock ---------------------------------------------------------
class _Clock:
    """``time.perf_counter`` of the trainer module: each call moves on by 0.4 s."""

    def __init__(self) -> None:
        self.t = 100.0
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        self.t += 0.4
        return self.t


class _Rec(training.Extension):
    def __init__(self, tag: str, log: list[Any]) -> None:
        self.tag = tag
        self.log = log

    def initialize(self, trainer: Any) -> None:
        self.log.append((self.tag, "init", trainer.updater.iteration))

    def __call__(self, trainer: Any) -> None:
        self.log.append((self.tag, trainer.updater.iteration))


def _sgd_trainer(stop_trigger: tuple[int, str]) -> Any:
    """A Trainer of a linear classifier (SGD) over 8 fixed samples, 2 a batch (4 iterations
    an epoch), until ``stop_trigger``."""
    np.random.seed(0)
    x = np.random.randn(8, 3).astype(np.float32)
    t = (x[:, 0] > 0).astype(np.int32)
    opt = chainer.optimizers.SGD(lr=0.01).setup(L.Classifier(L.Linear(3, 2)))
    it = chainer.iterators.SerialIterator(chainer.datasets.TupleDataset(x, t), 2, shuffle=False)
    return training.Trainer(
        training.updaters.StandardUpdater(it, opt), stop_trigger, out=tempfile.mkdtemp()
    )


def _trainer(epochs: int, log: list[Any]) -> Any:
    trainer = _sgd_trainer((epochs, "epoch"))
    trainer.extend(_Rec("once", log), name="once", trigger=triggers.OnceTrigger())
    trainer.extend(_Rec("once_resume", log), name="once_r", trigger=triggers.OnceTrigger(True))
    trainer.extend(_Rec("time", log), name="timed", trigger=triggers.TimeTrigger(1.0))

    @training.make_extension(trigger=(1, "iteration"))
    def rec_time(tr: Any) -> None:
        log.append(("elapsed", tr.updater.iteration, round(tr.elapsed_time, 6)))

    trainer.extend(rec_time)
    return trainer


# chainer 7.8.1 (its trainer's clock replaced by the same stand-in): 3 epochs of 4 iterations
RUN = [
    ("once", "init", 0), ("once_resume", "init", 0), ("time", "init", 0), ("once", 1),
    ("once_resume", 1), ("elapsed", 1, 0.8), ("time", 2), ("elapsed", 2, 1.6), ("time", 3),
    ("elapsed", 3, 2.4), ("elapsed", 4, 3.2), ("time", 5), ("elapsed", 5, 4.0), ("time", 6),
    ("elapsed", 6, 4.8), ("time", 7), ("elapsed", 7, 5.6), ("time", 8), ("elapsed", 8, 6.4),
    ("elapsed", 9, 7.2), ("time", 10), ("elapsed", 10, 8.0), ("time", 11), ("elapsed", 11, 8.8),
    ("time", 12), ("elapsed", 12, 9.6),
]  # fmt: skip
# then loaded into a fresh trainer of 4 epochs: the finished OnceTrigger skips initialize
RESUMED = [
    ("once_resume", "init", 12), ("time", "init", 12), ("once_resume", 13), ("time", 13),
    ("elapsed", 13, 10.8), ("time", 14), ("elapsed", 14, 11.6), ("time", 15),
    ("elapsed", 15, 12.4), ("elapsed", 16, 13.2),
]  # fmt: skip


def test_triggers_in_a_trainer_with_a_stand_in_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr(trainer_module, "time", types.SimpleNamespace(perf_counter=clock))
    log: list[Any] = []
    trainer = _trainer(3, log)
    trainer.run()
    assert log == RUN
    assert clock.calls == 26  # chainer 7.8.1: 26 clock readings
    saved = _saved(trainer)
    # chainer 7.8.1: the trigger keys of the snapshot and their values
    assert sorted(k for k in saved if k.startswith("extension_triggers")) == [
        "extension_triggers/once/_flag_first",
        "extension_triggers/once_r/_flag_first",
        "extension_triggers/rec_time/previous_epoch_detail",
        "extension_triggers/rec_time/previous_iteration",
        "extension_triggers/timed/next_time",
    ]
    assert bool(saved["extension_triggers/once/_flag_first"]) is False
    assert bool(saved["extension_triggers/once_r/_flag_first"]) is False
    assert float(saved["extension_triggers/timed/next_time"]) == 10.0

    monkeypatch.setattr(trainer_module, "time", types.SimpleNamespace(perf_counter=_Clock()))
    log.clear()
    resumed = _trainer(4, log)
    _load(resumed, saved)
    resumed.run()
    assert log == RESUMED


# -- unchain_variables ---------------------------------------------------------------------------
def test_unchain_variables_attributes_and_trigger() -> None:
    ext = extensions.unchain_variables()
    # chainer 7.8.1: priority 0, default_name 'unchain_variables', trigger a bound method,
    # _prev_flag None before initialize
    assert ext.priority == 0 and ext.default_name == "unchain_variables"
    assert inspect.ismethod(ext.trigger) and ext.trigger.__func__ is type(ext).trigger
    assert training.get_trigger(ext.trigger) == ext.trigger
    with chainer.using_config("keep_graph_on_report", True):
        assert [ext.trigger(None), ext.trigger(None)] == [None, True]
    ext.initialize(None)
    assert ext._prev_flag is False  # chainer 7.8.1: the default flag is False
    seq = []
    for flag in [False, True, True, False, False, True]:
        with chainer.using_config("keep_graph_on_report", flag):
            seq.append(ext.trigger(None))
    # chainer 7.8.1: the flag of the previous call
    assert seq == [False, False, True, True, False, False]


def test_unchain_variables_cuts_the_observed_graphs() -> None:
    x = chainer.Variable(np.array([1.0, 2.0], np.float32))
    y = chainer.functions.sum(x * x)
    z = y * 2
    obs = {"loss": z, "y": y, "n": 3.0, "arr": np.ones(2)}
    assert z.creator is not None and y.creator is not None
    extensions.unchain_variables()(types.SimpleNamespace(observation=obs))
    # chainer 7.8.1: every creator None, the arrays kept (10.0, 5.0), no gradient reaches x
    assert z.creator is None and y.creator is None and x.creator is None
    assert float(z.array) == 10.0 and float(y.array) == 5.0
    z.backward()
    assert x.grad is None
    assert obs["n"] == 3.0 and obs["arr"].tolist() == [1.0, 1.0]


def test_unchain_variables_in_a_trainer() -> None:
    trainer = _sgd_trainer((6, "iteration"))
    log: list[Any] = []
    calls: list[int] = []

    @training.make_extension(trigger=(1, "iteration"), priority=300)
    def flip(tr: Any) -> None:  # the flag for the next iteration's report
        chainer.config.keep_graph_on_report = tr.updater.iteration in (1, 2, 4)

    @training.make_extension(trigger=(1, "iteration"), priority=50)
    def before(tr: Any) -> None:
        log.append(("before", tr.updater.iteration, tr.observation["main/loss"].creator is None))

    @training.make_extension(trigger=(1, "iteration"), priority=-1)
    def after(tr: Any) -> None:
        log.append((tr.updater.iteration, tr.observation["main/loss"].creator is None))

    class Unchain(extensions.unchain_variables):
        def __call__(self, tr: Any) -> None:
            calls.append(tr.updater.iteration)
            super().__call__(tr)

    for ext in (before, flip, after):
        trainer.extend(ext)
    trainer.extend(Unchain(), name="unchain_variables")
    chainer.config.keep_graph_on_report = False
    try:
        trainer.run()
    finally:
        del chainer.config.keep_graph_on_report
    # chainer 7.8.1: called at iterations 2, 3, 5 (reported with the flag on at 2, 3, 5), the
    # loss keeps its graph until then and none is left after it
    assert calls == [2, 3, 5]
    assert [e for e in log if e[0] == "before"] == [
        ("before", 1, True), ("before", 2, False), ("before", 3, False),
        ("before", 4, True), ("before", 5, False), ("before", 6, True),
    ]  # fmt: skip
    assert [e for e in log if e[0] != "before"] == [(i, True) for i in range(1, 7)]
