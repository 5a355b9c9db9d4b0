"""The schedule extensions ``StepShift``, ``MultistepShift``, ``InverseShift``,
``PolynomialShift``, ``WarmupShift`` and ``MicroAverage`` against chainer 7.8.1: the same
training run (10 examples in batches of 3, 3 epochs, so 10 iterations) was run by chainer 7.8.1
with each extension, recording the optimizer attribute after every iteration (and its Python
type: chainer's ``StepShift`` sets numpy float64 values), the reported micro-average, the
snapshot keys and the run resumed from a snapshot taken at iteration 8."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import reporter, serializers, training
from gradhub_compat.chainer.training import extensions as E


class _Counting(chainer.Chain):
    """A linear classifier reporting its loss and the numbers of correct and of examples."""

    def __init__(self) -> None:
        super().__init__()
        with self.init_scope():
            self.l = L.Linear(3, 2)

    def __call__(self, x: Any, t: Any) -> Any:
        y = self.l(x)
        loss = F.softmax_cross_entropy(y, t)
        correct = int((y.array.argmax(axis=1) == t).sum())
        reporter.report({"loss": loss, "correct": correct, "total": len(t)}, self)
        return loss


def _run(
    tmp_path: Path,
    ext: Any,
    *,
    opt_name: str = "MomentumSGD",
    attr: str = "lr",
    ext_trigger: Any = None,
    snapshot_at: int | None = None,
    load: Path | None = None,
) -> dict[str, Any]:
    np.random.seed(0)
    x = np.random.randn(10, 3).astype(np.float32)
    t = (x[:, 0] > 0).astype(np.int32)
    opt = getattr(chainer.optimizers, opt_name)().setup(_Counting())
    it = chainer.iterators.SerialIterator(chainer.datasets.TupleDataset(x, t), 3, shuffle=False)
    updater = training.updaters.StandardUpdater(it, opt)
    trainer = training.Trainer(updater, (3, "epoch"), out=str(tmp_path))
    trainer.extend(ext(opt), trigger=ext_trigger, name="shift")
    seq: list[Any] = []
    acc: list[tuple[int, float]] = []

    @training.make_extension(trigger=(1, "iteration"), priority=-1000)
    def record(tr: Any) -> None:
        seq.append(getattr(tr.updater.get_optimizer("main"), attr))
        if "acc" in tr.observation:
            acc.append((tr.updater.iteration, tr.observation["acc"]))

    trainer.extend(record)
    if snapshot_at:
        trainer.extend(E.snapshot(filename="snap"), trigger=(snapshot_at, "iteration"))
    if load:
        serializers.load_npz(str(load), trainer)
    error = None
    try:
        trainer.run(show_loop_exception_msg=False)
    except ZeroDivisionError as e:
        error = e
    return {"seq": seq, "acc": acc, "error": error}


# chainer 7.8.1: (the attribute after each iteration, its types: d numpy float64, f float)
CASES: dict[str, tuple[Any, dict[str, Any], list[float], str]] = {
    "step": (
        lambda o: E.StepShift("lr", 0.5, 3),
        {},
        [0.01, 0.01, 0.005, 0.005, 0.005, 0.0025, 0.0025, 0.0025, 0.00125, 0.00125],
        "d" * 10,
    ),
    "step_target": (
        lambda o: E.StepShift("lr", 0.5, 2, init=0.2, target=0.03),
        {},
        [0.2, 0.1, 0.1, 0.05, 0.05, 0.03, 0.03, 0.03, 0.03, 0.03],
        "dddddfffff",
    ),
    "step_grow": (
        lambda o: E.StepShift("lr", 2.0, 2, target=0.05),
        {"ext_trigger": (1, "iteration")},
        [0.01, 0.02, 0.02, 0.04, 0.04, 0.05, 0.05, 0.05, 0.05, 0.05],
        "dddddfffff",
    ),
    "step_epoch": (
        lambda o: E.StepShift("lr", 0.1, 1, optimizer=o),
        {"ext_trigger": (1, "epoch")},
        [
            0.01,
            0.01,
            0.01,
            0.001,
            0.001,
            0.001,
            0.00010000000000000002,
            0.00010000000000000002,
            0.00010000000000000002,
            1.0000000000000003e-05,
        ],
        "fffddddddd",
    ),
    "step_alpha": (
        lambda o: E.StepShift("alpha", 0.5, 4),
        {"opt_name": "Adam", "attr": "alpha"},
        [0.001, 0.001, 0.001, 0.0005, 0.0005, 0.0005, 0.0005, 0.00025, 0.00025, 0.00025],
        "d" * 10,
    ),
    "multistep": (
        lambda o: E.MultistepShift("lr", 0.1, [2, 5, 7], 0.3),
        {},
        [
            0.3,
            0.03,
            0.03,
            0.03,
            0.0030000000000000005,
            0.0030000000000000005,
            0.0003000000000000001,
            0.0003000000000000001,
            0.0003000000000000001,
            0.0003000000000000001,
        ],
        "f" * 10,
    ),
    "multistep_none": (
        lambda o: E.MultistepShift("lr", 0.5, [1, 2, 8], None),
        {},
        [0.005, 0.0025, 0.0025, 0.0025, 0.0025, 0.0025, 0.0025, 0.00125, 0.00125, 0.00125],
        "f" * 10,
    ),
    "multistep_epoch": (
        lambda o: E.MultistepShift("lr", 0.5, (2,), 0.2),
        {"ext_trigger": (1, "epoch")},
        [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1],
        "f" * 10,
    ),
    "inverse": (
        lambda o: E.InverseShift("lr", 0.5, 0.75),
        {},
        [
            0.007377879464668811,
            0.005946035575013605,
            0.005029733718731741,
            0.004386913376508308,
            0.003907949713906802,
            0.003535533905932738,
            0.0032366118113821563,
            0.0029906975624424408,
            0.0027843766487352603,
            0.0026084743001221454,
        ],
        "f" * 10,
    ),
    "inverse_target": (
        lambda o: E.InverseShift("lr", 1.0, 1.0, init=1.0, target=0.2),
        {},
        [0.5, 0.3333333333333333, 0.25, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2],
        "f" * 10,
    ),
    "inverse_neg": (
        lambda o: E.InverseShift("lr", 0.5, -1.0, target=0.03),
        {},
        [0.015, 0.02, 0.025, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03],
        "f" * 10,
    ),
    "poly": (
        lambda o: E.PolynomialShift("lr", 0.9, 8),
        {},
        [
            0.008867623542572074,
            0.007718895067235705,
            0.006550764934180986,
            0.005358867312681466,
            0.004136453446582762,
            0.0028717458874925874,
            0.0015389305166811453,
            0.0,
            0.0,
            0.0,
        ],
        "f" * 10,
    ),
    "poly_target": (
        lambda o: E.PolynomialShift("lr", 2.0, 20, init=0.1, target=0.06),
        {},
        [
            0.09025,
            0.08100000000000002,
            0.07225,
            0.06400000000000002,
            0.06,
            0.06,
            0.06,
            0.06,
            0.06,
            0.06,
        ],
        "f" * 10,
    ),
    "poly_neg": (
        lambda o: E.PolynomialShift("lr", -1.0, 20, target=0.02),
        {},
        [
            0.010526315789473684,
            0.011111111111111112,
            0.011764705882352941,
            0.0125,
            0.013333333333333332,
            0.014285714285714287,
            0.015384615384615384,
            0.016666666666666666,
            0.01818181818181818,
            0.02,
        ],
        "f" * 10,
    ),
    "warmup": (
        lambda o: E.WarmupShift("lr", 0.001, 4, 0.1),
        {},
        [0.025750000000000002, 0.0505, 0.07525000000000001, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1],
        "f" * 10,
    ),
    "warmup_none": (
        lambda o: E.WarmupShift("lr", None, 3, 0.05),
        {},
        [
            0.023333333333333334,
            0.03666666666666667,
            0.05000000000000001,
            0.05000000000000001,
            0.05000000000000001,
            0.05000000000000001,
            0.05000000000000001,
            0.05000000000000001,
            0.05000000000000001,
            0.05000000000000001,
        ],
        "f" * 10,
    ),
}


def _types(seq: list[Any]) -> str:
    return "".join("d" if isinstance(v, np.float64) else "f" for v in seq)


@pytest.mark.parametrize("name", sorted(CASES))
def test_shift_sequence_matches_chainer(tmp_path: Path, name: str) -> None:
    ext, kw, expected, types = CASES[name]
    out = _run(tmp_path, ext, **kw)
    assert out["error"] is None
    assert [float(v) for v in out["seq"]] == expected  # exact: chainer's arithmetic
    assert _types(out["seq"]) == types


def test_polynomial_shift_target_at_zero_divides_by_zero(tmp_path: Path) -> None:
    # chainer 7.8.1: the value reaches 0 at t=4 and ``target / value`` raises
    out = _run(tmp_path, lambda o: E.PolynomialShift("lr", 1.0, 4, target=0.001))
    assert [float(v) for v in out["seq"]] == [0.0075, 0.005, 0.0025]
    assert isinstance(out["error"], ZeroDivisionError)


# chainer 7.8.1: the snapshot at iteration 8 (keys and values), then the resumed run's last
# two iterations
RESUME: dict[str, tuple[dict[str, tuple[str, float]], list[float]]] = {
    "step": ({"_last_value": ("float64", 0.0025), "_t": ("int64", 8)}, [0.00125, 0.00125]),
    "step_target": ({"_last_value": ("float64", 0.03), "_t": ("int64", 8)}, [0.03, 0.03]),
    "multistep": ({"_current_step": ("int64", 3), "_t": ("int64", 8)}, [0.0003000000000000001] * 2),
    "inverse": (
        {"_last_value": ("float64", 0.0029906975624424408), "_t": ("int64", 8)},
        [0.0027843766487352603, 0.0026084743001221454],
    ),
    "poly": ({"_last_value": ("float64", 0.0), "_t": ("int64", 8)}, [0.0, 0.0]),
    # chainer's WarmupShift sets warmup_start again when training resumes, past the warmup
    "warmup": ({"_t": ("int64", 8)}, [0.001, 0.001]),
}


@pytest.mark.parametrize("name", sorted(RESUME))
def test_shift_snapshot_and_resume_match_chainer(tmp_path: Path, name: str) -> None:
    keys, resumed = RESUME[name]
    ext, kw, full, _ = CASES[name]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    out = _run(tmp_path / "a", ext, snapshot_at=4, **kw)
    assert [float(v) for v in out["seq"]] == full
    snap = tmp_path / "a" / "snap"  # written at iterations 4 and 8
    with np.load(snap) as f:
        stored = {
            k[len("extensions/shift/") :]: (str(f[k].dtype), f[k].item())
            for k in f.files
            if k.startswith("extensions/shift/")
        }
    assert stored == keys
    again = _run(tmp_path / "b", ext, load=snap, **kw)
    assert [float(v) for v in again["seq"]] == resumed


def test_micro_average_matches_chainer(tmp_path: Path) -> None:
    # chainer 7.8.1: sum(correct) / sum(total) reported as 'acc' at each epoch's end
    out = _run(tmp_path, lambda o: E.MicroAverage("main/correct", "main/total", "acc"))
    assert out["acc"] == [
        (4, 0.08333333333333333),
        (7, 0.1111111111111111),
        (10, 0.1111111111111111),
    ]
    assert all(type(v) is float for _, v in out["acc"])
    # the numbers recomputed: 1 correct of 12 in epoch 1 (iterations 1-4 cover 12 examples)
    assert out["acc"][0][1] == 1 / 12


def test_micro_average_trigger_and_snapshot(tmp_path: Path) -> None:
    ext = lambda o: E.MicroAverage("main/correct", "main/total", "acc", trigger=(3, "iteration"))  # noqa: E731
    out = _run(tmp_path, ext, snapshot_at=4)
    assert out["acc"] == [(3, 1 / 9), (6, 1 / 9), (9, 1 / 9)]  # chainer 7.8.1
    with np.load(tmp_path / "snap") as f:
        assert (int(f["extensions/shift/_numerator"]), int(f["extensions/shift/_denominator"])) == (
            1,
            6,
        )  # chainer 7.8.1
    (tmp_path / "b").mkdir()
    again = _run(tmp_path / "b", ext, load=tmp_path / "snap")
    assert again["acc"] == [(9, 1 / 9)]  # chainer 7.8.1: the sums carried over


def test_micro_average_skips_iterations_without_the_keys() -> None:
    ext = E.MicroAverage("n", "d", "r", trigger=lambda tr: True)
    tr = type("T", (), {"observation": {"n": 1}})()
    ext(tr)  # the denominator is missing: nothing added, the trigger not called
    assert (ext._numerator, ext._denominator) == (0, 0)
    observation: dict[str, Any] = {}
    rep = reporter.Reporter()
    with rep.scope(observation):
        tr.observation = {"n": 3, "d": 4}
        ext(tr)
    assert observation == {"r": 0.75}
    assert ext.priority == training.PRIORITY_EDITOR


def test_shift_argument_errors_and_defaults() -> None:
    with pytest.raises(ValueError, match="InverseShift does not support negative gamma"):
        E.InverseShift("lr", -0.5, 1.0)  # chainer 7.8.1's message
    opt = chainer.optimizers.SGD(lr=0.4).setup(L.Linear(1, 1))
    ms = E.MultistepShift("lr", 0.5, [1, 1, 3], None, optimizer=opt)
    ms.initialize(None)
    values = []
    for _ in range(4):
        ms(None)
        values.append(opt.lr)
    assert values == [0.2, 0.1, 0.05, 0.05]  # at most one step a firing
    ws = E.WarmupShift("lr", 0.0, 2, 1.0, optimizer=opt)
    ws.initialize(None)
    assert opt.lr == 0.0
    ws(None)
    ws(None)
    ws(None)
    assert opt.lr == 1.0


@pytest.mark.parametrize(
    ("rate", "init", "target", "expected"),
    [
        # chainer 7.8.1: the value set by initialize(), then after each of 4 firings
        (2.0, 0.1, 0.5, [0.1, 0.2, 0.4, 0.5, 0.5]),
        (0.5, 1.0, 0.3, [1.0, 0.5, 0.3, 0.3, 0.3]),
        (2.0, -0.1, -0.5, [-0.1, -0.2, -0.4, -0.5, -0.5]),
        (0.5, None, None, [0.2, 0.1, 0.05, 0.025, 0.0125]),
    ],
)
def test_exponential_shift_target_matches_chainer(
    rate: float, init: float | None, target: float | None, expected: list[float]
) -> None:
    # ExponentialShift stops at its target as StepShift does (a ceiling when rate > 1)
    opt = chainer.optimizers.SGD(lr=0.2).setup(L.Linear(1, 1))
    ext = E.ExponentialShift("lr", rate, init=init, target=target, optimizer=opt)
    ext.initialize(None)
    values = [opt.lr]
    for _ in range(4):
        ext(None)
        values.append(opt.lr)
    assert values == expected  # chainer 7.8.1
    assert all(type(v) is float for v in values)
