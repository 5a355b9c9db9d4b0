"""``iterators.MultithreadIterator`` and ``MultiprocessIterator`` against chainer 7.8.1: the
programs below (seed, make the iterator over ``range(7)`` in batches of 3, then after each
``next()`` draw ``numpy.random.randint(1000)``) were run by chainer 7.8.1; the batches, the
program's draws and the iterator's state are chainer's.

chainer's ``MultiprocessIterator`` draws from a prefetch thread; the reference runs gave that
thread time after each ``next()`` (a 0.05 s pause before the program's draw, as a training
step slower than loading does), the case where chainer's draws are reproducible."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import serializers, training

MT = chainer.iterators.MultithreadIterator
MP = chainer.iterators.MultiprocessIterator


def _draws(cls: Any, steps: int = 9, seed: int = 0, **kw: Any) -> list[Any]:
    np.random.seed(seed)
    it = cls(list(range(7)), 3, **kw)
    out: list[Any] = []
    for _ in range(steps):
        try:
            batch = next(it)
        except StopIteration:
            out.append("stop")
            break
        out.append(([int(v) for v in batch], int(np.random.randint(1000))))
    it.finalize()
    return out


# chainer 7.8.1 (SerialIterator's batches and draws for the same program, for comparison:
# [6, 2, 1] 277, [3, 0, 5] 754, [4, 3, 1] 486, [2, 6, 5] 551...)
MT_DEFAULT = [
    ([6, 2, 1], 277),
    ([3, 0, 5], 705),
    ([4, 1, 6], 486),
    ([3, 5, 0], 72),
    ([4, 2, 5], 777),
    ([2, 3, 4], 847),
    ([1, 0, 6], 431),
    ([2, 6, 1], 448),
    ([5, 0, 3], 147),
]
MT_NO_SHUFFLE = [
    ([0, 1, 2], 684),
    ([3, 4, 5], 559),
    ([6, 0, 1], 629),
    ([2, 3, 4], 192),
    ([5, 6, 0], 835),
    ([1, 2, 3], 763),
    ([4, 5, 6], 707),
    ([0, 1, 2], 359),
    ([3, 4, 5], 9),
]
MT_NO_REPEAT = [([6, 2, 1], 277), ([3, 0, 5], 705), ([4], 486), "stop"]
MP_DEFAULT = [
    ([6, 2, 1], 600),
    ([3, 0, 5], 396),
    ([4, 1, 0], 845),
    ([6, 3, 4], 72),
    ([2, 5, 4], 847),
    ([6, 3, 5], 431),
    ([0, 1, 2], 448),
    ([2, 5, 6], 147),
    ([0, 3, 4], 910),
]
MP_PREFETCH_2 = [
    ([6, 2, 1], 600),
    ([3, 0, 5], 849),
    ([4, 1, 0], 677),
    ([6, 3, 4], 976),
    ([2, 5, 6], 755),
    ([0, 3, 5], 709),
    ([1, 2, 4], 755),
    ([2, 3, 4], 797),
    ([6, 0, 5], 639),
]
MP_NO_REPEAT = [([6, 2, 1], 600), ([3, 0, 5], 396), ([4], 314), "stop"]
# the state after each of the 9 batches (epoch, is_new_epoch, current_position, epoch_detail,
# previous_epoch_detail), the same for the three iterators
STATES = [
    (0, False, 3, 0.428571, 0.0),
    (0, False, 6, 0.857143, 0.428571),
    (1, True, 2, 1.285714, 0.857143),
    (1, False, 5, 1.714286, 1.285714),
    (2, True, 1, 2.142857, 1.714286),
    (2, False, 4, 2.571429, 2.142857),
    (3, True, 0, 3.0, 2.571429),
    (3, False, 3, 3.428571, 3.0),
    (3, False, 6, 3.857143, 3.428571),
]


@pytest.mark.parametrize(
    ("cls", "kw", "expected"),
    [
        (MT, {}, MT_DEFAULT),
        (MT, {"shuffle": False}, MT_NO_SHUFFLE),
        (MT, {"repeat": False}, MT_NO_REPEAT),
        (MT, {"n_threads": 4}, MT_DEFAULT),
        (MP, {"n_processes": 2}, MP_DEFAULT),
        (MP, {"n_processes": 1, "shared_mem": 1000}, MP_DEFAULT),
        (MP, {"n_processes": 1, "n_prefetch": 2}, MP_PREFETCH_2),
        (MP, {"repeat": False, "n_processes": 1}, MP_NO_REPEAT),
    ],
)
def test_batches_and_program_draws_match_chainer(
    cls: Any, kw: dict[str, Any], expected: Any
) -> None:
    assert _draws(cls, **kw) == expected  # chainer 7.8.1


@pytest.mark.parametrize("cls", [MT, MP, chainer.iterators.SerialIterator])
def test_iterator_state_matches_chainer(cls: Any) -> None:
    np.random.seed(0)
    it = cls(list(range(7)), 3)
    assert it.previous_epoch_detail is None
    states = []
    for _ in range(9):
        next(it)
        states.append(
            (
                it.epoch,
                it.is_new_epoch,
                it.current_position,
                round(it.epoch_detail, 6),
                round(it.previous_epoch_detail, 6),
            )
        )
    it.finalize()
    assert states == STATES  # chainer 7.8.1


def test_serial_iterator_draws_differ() -> None:
    # the point of the two classes: chainer's SerialIterator gives other numbers
    serial = _draws(chainer.iterators.SerialIterator)
    assert serial[:3] == [([6, 2, 1], 277), ([3, 0, 5], 754), ([4, 3, 1], 486)]  # chainer 7.8.1
    assert serial != MT_DEFAULT and serial != MP_DEFAULT


def _reset_program(cls: Any, **kw: Any) -> list[Any]:
    np.random.seed(1)
    it = cls(list(range(7)), 3, **kw)
    out: list[Any] = [([int(v) for v in next(it)], int(np.random.randint(1000))) for _ in range(4)]
    it.reset()
    out.append(int(np.random.randint(1000)))
    out += [([int(v) for v in next(it)], int(np.random.randint(1000))) for _ in range(4)]
    it.finalize()
    return out


@pytest.mark.parametrize(
    ("cls", "kw", "expected"),
    [
        (
            MT,
            {},
            [
                ([6, 2, 1], 645),
                ([0, 4, 3], 390),
                ([5, 2, 3], 281),
                ([4, 5, 1], 668),
                503,
                ([0, 6, 1], 478),
                ([3, 4, 2], 313),
                ([5, 2, 6], 513),
                ([3, 4, 1], 627),
            ],
        ),
        (
            MP,
            {"n_processes": 1},
            [
                ([6, 2, 1], 749),
                ([0, 4, 3], 508),
                ([5, 2, 3], 914),
                ([4, 1, 6], 468),
                562,
                ([5, 6, 1], 86),
                ([0, 2, 4], 141),
                ([3, 6, 0], 209),
                ([2, 3, 5], 264),
            ],
        ),
        # the prefetch after reset crosses an epoch: it draws before the program's draw
        (
            MP,
            {"n_processes": 1, "n_prefetch": 3},
            [
                ([6, 2, 1], 357),
                ([0, 4, 3], 914),
                ([5, 2, 3], 398),
                ([4, 1, 6], 562),
                313,
                ([6, 0, 2], 653),
                ([3, 5, 1], 627),
                ([4, 2, 0], 561),
                ([3, 4, 1], 313),
            ],
        ),
    ],
)
def test_reset_matches_chainer(cls: Any, kw: dict[str, Any], expected: Any) -> None:
    assert _reset_program(cls, **kw) == expected  # chainer 7.8.1


def _snapshot_program(cls: Any, path: Path, **kw: Any) -> tuple[list[Any], dict[str, Any]]:
    np.random.seed(2)
    it = cls(list(range(7)), 3, **kw)
    out = []
    for i in range(6):
        out.append(([int(v) for v in next(it)], int(np.random.randint(1000))))
        if i == 1:
            serializers.save_npz(str(path), it)
    it.finalize()
    with np.load(path) as f:
        keys = {k: f[k].tolist() for k in f.files}
    resumed = cls(list(range(7)), 3, **kw)
    serializers.load_npz(str(path), resumed)
    out += [([int(v) for v in next(resumed)], int(np.random.randint(1000))) for _ in range(4)]
    resumed.finalize()
    return out, keys


STORED = {"current_position": 6, "epoch": 0, "is_new_epoch": False, "previous_epoch_detail": 3 / 7}


@pytest.mark.parametrize(
    ("cls", "kw", "order_key", "expected"),
    [
        # writing the snapshot drops the prepared batch: it is prepared again, with a new draw
        (
            MT,
            {},
            "_order",
            [
                ([4, 1, 3], 360),
                ([2, 6, 5], 124),
                ([0, 1, 6], 875),
                ([0, 2, 3], 323),
                ([5, 4, 6], 325),
                ([4, 0, 5], 564),
                ([0, 5, 3], 745),
                ([4, 6, 2], 885),
                ([0, 1, 4], 585),
                ([3, 6, 2], 96),
            ],
        ),
        # chainer's prefetch starts again after writing: a batch with example 0 twice
        (
            MP,
            {"n_processes": 1},
            "order",
            [
                ([4, 1, 3], 831),
                ([2, 6, 5], 287),
                ([0, 3, 6], 545),
                ([1, 0, 5], 570),
                ([4, 2, 1], 351),
                ([0, 5, 6], 211),
                ([0, 0, 5], 745),
                ([1, 3, 6], 493),
                ([4, 2, 5], 697),
                ([3, 4, 1], 873),
            ],
        ),
        (
            MP,
            {"n_processes": 1, "n_prefetch": 3},
            "order",
            [
                ([4, 1, 3], 195),
                ([2, 6, 5], 102),
                ([0, 1, 0], 564),
                ([5, 6, 3], 238),
                ([2, 4, 5], 972),
                ([0, 6, 3], 942),
                ([0, 4, 3], 588),
                ([5, 2, 6], 766),
                ([1, 0, 0], 138),
                ([5, 3, 2], 838),
            ],
        ),
    ],
)
def test_snapshot_and_resume_match_chainer(
    tmp_path: Path, cls: Any, kw: dict[str, Any], order_key: str, expected: Any
) -> None:
    out, keys = _snapshot_program(cls, tmp_path / "it.npz", **kw)
    assert out == expected  # chainer 7.8.1
    assert keys == {**STORED, order_key: [4, 1, 3, 2, 6, 5, 0]}  # chainer 7.8.1


def _augment(x: int) -> tuple[int, float]:
    return x, float(np.round(np.random.rand(), 6))


@pytest.mark.parametrize(
    ("cls", "kw", "expected"),
    [
        # the examples are read with the program's generator, when the batch is prepared
        (
            MT,
            {},
            [
                ([[4, 0.510828], [6, 0.892947], [5, 0.896293]], 480),
                ([[3, 0.125585], [1, 0.207243], [0, 0.051467]], 947),
                ([[2, 0.676255], [3, 0.590863], [5, 0.023982]], 618),
                ([[1, 0.973648], [2, 0.402361], [0, 0.552772]], 405),
                ([[6, 0.780315], [4, 0.306364], [4, 0.221958]], 0),
                ([[2, 0.718422], [1, 0.020615], [5, 0.142717]], 113),
            ],
        ),
        # the first batch is read in the program's process, the others by the worker, whose
        # draws do not move the program's generator
        (
            MP,
            {"n_processes": 1},
            [
                ([[4, 0.510828], [6, 0.892947], [5, 0.896293]], 660),
                ([[3, 0.125585], [1, 0.207243], [0, 0.051467]], 940),
                ([[2, 0.44081], [3, 0.029876], [0, 0.456833]], 834),
                ([[4, 0.649144], [5, 0.278487], [2, 0.676255]], 258),
                ([[6, 0.590863], [1, 0.023982], [3, 0.558854]], 622),
                ([[6, 0.259252], [4, 0.415101], [1, 0.283525]], 609),
            ],
        ),
    ],
)
def test_random_augmentation_matches_chainer(cls: Any, kw: dict[str, Any], expected: Any) -> None:
    np.random.seed(3)
    it = cls(chainer.datasets.TransformDataset(list(range(7)), _augment), 3, **kw)
    out = []
    for _ in range(6):
        batch = next(it)
        out.append(([[int(a), b] for a, b in batch], int(np.random.randint(1000))))
    it.finalize()
    assert out == expected  # chainer 7.8.1


class _DropoutNet(chainer.Chain):
    def __init__(self) -> None:
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(3, 16)
            self.l2 = L.Linear(16, 2)

    def __call__(self, x: Any) -> Any:
        return self.l2(F.dropout(F.relu(self.l1(x)), 0.5))


def _train(iterator_cls: Any) -> tuple[list[float], float, int]:
    np.random.seed(0)
    x = np.random.randn(10, 3).astype(np.float32)
    t = (x[:, 0] > 0).astype(np.int32)
    model = L.Classifier(_DropoutNet())
    opt = chainer.optimizers.SGD(lr=0.1).setup(model)
    it = iterator_cls(chainer.datasets.TupleDataset(x, t), 4)
    trainer = training.Trainer(
        training.updaters.StandardUpdater(it, opt), (3, "epoch"), out=tempfile.mkdtemp()
    )
    losses: list[float] = []

    @training.make_extension(trigger=(1, "iteration"))
    def record(tr: Any) -> None:
        losses.append(float(tr.observation["main/loss"].array))

    trainer.extend(record)
    trainer.run()
    return losses, float(model.predictor.l1.W.array.sum()), int(np.random.randint(10**6))


def test_training_with_dropout_matches_chainer() -> None:
    # dropout draws from numpy's global generator between the iterator's draws
    losses, w_sum, after = _train(MT)
    # chainer 7.8.1 (the same program, deterministic with MultithreadIterator)
    np.testing.assert_allclose(
        losses, [0.67694, 0.40314, 1.0447, 0.38605, 0.51259, 0.2902, 0.33601, 0.46807], atol=2e-5
    )
    np.testing.assert_allclose(w_sum, -9.15867, atol=2e-5)
    assert after == 114871
    losses, _, after = _train(chainer.iterators.SerialIterator)
    np.testing.assert_allclose(losses[:3], [0.67694, 0.38504, 0.88553], atol=2e-5)  # chainer
    assert after == 4207  # chainer 7.8.1


def test_copies_finalize_and_errors() -> None:
    data = [np.arange(3) + i for i in range(5)]
    it = MP(data, 2, shuffle=False, n_processes=1)
    first, second = next(it), next(it)
    # chainer 7.8.1: the first batch is the dataset's objects, the others unpickled copies
    assert first[0] is data[0]
    assert second[0] is not data[2] and np.array_equal(second[0], data[2])
    it.finalize()
    with pytest.raises(NotImplementedError, match="Reset of finalized MultiProcessIterator"):
        it.reset()
    with pytest.raises(RuntimeError, match="MultiprocessIterator: the iterator is finalized"):
        next(it)
    it = MP(data, 2, shuffle=False, shared_mem=100)
    assert next(it)[0] is not data[0]  # chainer 7.8.1: read by a worker
    it.finalize()
    it = MT(data, 2, shuffle=False)
    assert next(it)[0] is data[0]  # chainer 7.8.1
    assert (it.n_threads, it.batch_size, it.repeat) == (1, 2, True)
    with pytest.raises(ValueError, match="`shuffle` is not `None` and a custom `order_sampler`"):
        MT(data, 2, shuffle=True, order_sampler=chainer.iterators.ShuffleOrderSampler())
    with pytest.raises(ValueError, match="`shuffle` is not `None`"):
        MP(data, 2, shuffle=False, order_sampler=chainer.iterators.ShuffleOrderSampler())
    with pytest.raises(ValueError, match="MultiprocessIterator: batch_size must be positive"):
        MP(data, 0)
    with pytest.raises(TypeError, match="MultithreadIterator: batch_size must be an int"):
        MT(data, 2.0)
    with pytest.raises(ValueError, match="MultithreadIterator: Epoch size must be positive"):
        next(MT([], 2))
    assert MP(data, 2, n_prefetch=0).n_prefetch == 1  # as chainer's max(n_prefetch, 1)


class _BadExample:
    """Eight examples; reading example 4 raises KeyError."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, i: int) -> int:
        if i == 4:
            raise KeyError("bad example 4")
        return int(i)


@pytest.mark.parametrize("cls", [MT, MP])
def test_read_error_is_raised_with_its_batch(cls: Any) -> None:
    # chainer 7.8.1 (MultithreadIterator): [[0, 1], [2, 3], KeyError, [6, 7]], then position 0
    # and epoch_detail 1.0; its MultiprocessIterator never returns from the third next()
    kw = {"n_processes": 1} if cls is MP else {}
    it = cls(_BadExample(), 2, shuffle=False, repeat=False, **kw)
    assert next(it) == [0, 1]
    assert next(it) == [2, 3]
    with pytest.raises(KeyError, match="bad example 4"):
        next(it)
    assert it.epoch_detail == 0.75
    assert next(it) == [6, 7]
    assert (it.current_position, it.epoch_detail) == (0, 1.0)
    with pytest.raises(StopIteration):
        next(it)
    it.finalize()


def test_no_shuffle_snapshot_has_no_order(tmp_path: Path) -> None:
    # without shuffling there is no order: it is not written (chainer 7.8.1's
    # MultiprocessIterator raises AttributeError there, its MultithreadIterator pickles None)
    for cls in (MT, MP):
        it = cls(list(range(5)), 2, shuffle=False)
        next(it)
        serializers.save_npz(str(tmp_path / "s.npz"), it)
        it.finalize()
        with np.load(tmp_path / "s.npz") as f:
            assert sorted(f.files) == [
                "current_position",
                "epoch",
                "is_new_epoch",
                "previous_epoch_detail",
            ]
        again = cls(list(range(5)), 2, shuffle=False)
        serializers.load_npz(str(tmp_path / "s.npz"), again)
        assert next(again) == [2, 3]
        again.finalize()


def test_trainer_finalizes_the_iterator(tmp_path: Path) -> None:
    x = np.zeros((4, 3), np.float32)
    t = np.zeros(4, np.int32)
    it = MP(chainer.datasets.TupleDataset(x, t), 2)
    opt = chainer.optimizers.SGD().setup(L.Classifier(L.Linear(3, 2)))
    trainer = training.Trainer(
        training.updaters.StandardUpdater(it, opt), (1, "epoch"), out=str(tmp_path)
    )
    trainer.run()
    with pytest.raises(NotImplementedError, match="finalized"):
        it.reset()
