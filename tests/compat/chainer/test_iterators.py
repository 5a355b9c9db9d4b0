"""chainer's ``chainer.iterators`` in gradhub's chainer layer: SerialIterator's batches,
epoch bookkeeping, shuffling from numpy's global generator, serialization; expected values
written by chainer 7.8.1 on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import serializers


def test_shuffled_batches_and_draw_order_are_chainers() -> None:
    np.random.seed(3)
    it = chainer.iterators.SerialIterator(list(range(7)), 3)
    rows = []
    for _ in range(6):
        batch = next(it)
        # a draw between batches: the shuffles must take from the same global generator
        rows.append(
            (
                batch,
                it.epoch,
                it.is_new_epoch,
                it.epoch_detail,
                it.previous_epoch_detail,
                float(np.random.rand()),
            )
        )
    # chainer 7.8.1
    expected = [
        ([4, 6, 5], 0, False, 0.42857142857142855, 0.0, 0.510827605197663),
        ([3, 1, 0], 0, False, 0.8571428571428571, 0.42857142857142855, 0.8929469543476547),
        ([2, 0, 5], 1, True, 1.2857142857142856, 0.8571428571428571, 0.05146720330082988),
        ([6, 4, 1], 1, False, 1.7142857142857144, 1.2857142857142856, 0.44080984365063647),
        ([3, 2, 3], 2, True, 2.142857142857143, 1.7142857142857144, 0.6762549019801313),
        ([6, 1, 2], 2, False, 2.571428571428571, 2.142857142857143, 0.5908628174163508),
    ]
    assert [(list(map(int, r[0])),) + r[1:] for r in rows] == expected


def test_no_repeat_no_shuffle() -> None:
    it = chainer.iterators.SerialIterator(list(range(5)), 2, repeat=False, shuffle=False)
    assert it.previous_epoch_detail is None
    assert [b for b in it] == [[0, 1], [2, 3], [4]]  # chainer 7.8.1
    assert (it.epoch, it.epoch_detail, it.previous_epoch_detail) == (1, 1.0, 1.0)
    with pytest.raises(StopIteration):
        next(it)
    it.reset()
    assert next(it) == [0, 1]


def test_no_repeat_shuffled() -> None:
    np.random.seed(1)
    it = chainer.iterators.SerialIterator(list(range(5)), 2, repeat=False)
    assert [[int(i) for i in b] for b in it] == [[2, 1], [4, 0], [3]]  # chainer 7.8.1


def test_reset_draws_a_new_order_and_serialize_keys() -> None:
    np.random.seed(0)
    it = chainer.iterators.SerialIterator(list(range(6)), 4)
    assert next(it) == [5, 2, 1, 3] and it.previous_epoch_detail == 0.0  # chainer 7.8.1
    it.reset()
    assert next(it) == [1, 3, 4, 0] and it.epoch_detail == 4 / 6
    s = serializers.DictionarySerializer()
    it.serialize(s)
    # chainer 7.8.1's keys and values
    assert sorted(s.target) == [
        "current_position",
        "epoch",
        "is_new_epoch",
        "order",
        "previous_epoch_detail",
    ]
    np.testing.assert_array_equal(s.target["order"], [1, 3, 4, 0, 2, 5])
    assert int(s.target["current_position"]) == 4 and float(s.target["previous_epoch_detail"]) == 0


def test_serialize_round_trip_continues_identically(tmp_path: object) -> None:
    np.random.seed(2)
    a = chainer.iterators.SerialIterator(list(range(5)), 2)
    next(a)
    next(a)
    s = serializers.DictionarySerializer()
    a.serialize(s)
    path = f"{tmp_path}/it.npz"
    serializers.save_npz(path, s.target)
    b = chainer.iterators.SerialIterator(list(range(5)), 2)
    serializers.load_npz(path, b)
    assert (b.epoch, b.current_position, b.is_new_epoch) == (a.epoch, a.current_position, False)
    assert b.previous_epoch_detail == a.previous_epoch_detail
    state = np.random.get_state()
    first = [next(a) for _ in range(4)]
    np.random.set_state(state)
    assert [next(b) for _ in range(4)] == first


def test_order_sampler_and_errors() -> None:
    class Reverse(chainer.iterators.OrderSampler):
        def __call__(self, order: np.ndarray, position: int) -> np.ndarray:
            return np.arange(len(order))[::-1]

    it = chainer.iterators.SerialIterator(list("abcd"), 3, order_sampler=Reverse())
    assert next(it) == ["d", "c", "b"] and next(it) == ["a", "d", "c"]
    rs = np.random.RandomState(0)
    it = chainer.iterators.SerialIterator(
        list(range(4)), 4, order_sampler=chainer.iterators.ShuffleOrderSampler(rs)
    )
    assert next(it) == list(np.random.RandomState(0).permutation(4))
    with pytest.raises(ValueError, match="order_sampler"):
        chainer.iterators.SerialIterator([1], 1, shuffle=True, order_sampler=Reverse())
    with pytest.raises(ValueError, match="Epoch size must be positive"):
        next(chainer.iterators.SerialIterator([], 1))
    # an empty dataset without repeat: one empty batch (chainer divides by zero there)
    assert list(chainer.iterators.SerialIterator([], 2, repeat=False)) == [[]]
    with pytest.raises(ValueError, match="batch_size must be positive"):
        chainer.iterators.SerialIterator([1], 0)
    with pytest.raises(TypeError, match="batch_size must be an int"):
        chainer.iterators.SerialIterator([1], 2.0)


def test_other_iterators_are_refused() -> None:
    # MultiprocessIterator and MultithreadIterator: tests/compat/chainer/test_iterators_prefetch.py
    with pytest.raises(NotImplementedError, match="migration-chainer"):
        chainer.iterators.DaliIterator  # noqa: B018
