"""chainer's ``chainer.iterators`` (chainer 7.8.1 ``chainer/iterators/``): :class:`SerialIterator`,
and the order samplers. ``MultiprocessIterator`` and ``MultithreadIterator`` raise
NotImplementedError: chainer's prefetch the next batch, drawing the next epoch's order from
numpy's global generator earlier than a serial iterator, so their draws interleave differently
with the program's other draws (checked with chainer 7.8.1); a serial stand-in would not give
chainer's numbers.

``SerialIterator(dataset, batch_size, repeat=True, shuffle=None, order_sampler=None)`` yields
lists of examples. With ``shuffle`` True or None (and no ``order_sampler``) each epoch's order is
``numpy.random.permutation(len(dataset))`` drawn from numpy's global generator (chainer's
:class:`ShuffleOrderSampler`), the first one when the iterator is made or reset, the next one at
the end of each epoch, so the same ``numpy.random.seed`` gives chainer's batches. A batch that
crosses the end of an epoch is completed from the next epoch's order (``repeat=True``); with
``repeat=False`` the last batch is short and the next ``next()`` raises StopIteration.

Example::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> it = chainer.iterators.SerialIterator(list(range(5)), 2, shuffle=False)
    >>> [next(it) for _ in range(3)], it.epoch, it.is_new_epoch, it.epoch_detail
    ([[0, 1], [2, 3], [4, 0]], 1, True, 1.2)
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from ._device import PAGE
from .dataset.iterator import Iterator

__all__ = [
    "OrderSampler",
    "SerialIterator",
    "ShuffleOrderSampler",
]

#: chainer's iterator state: position in the epoch, epoch count, new-epoch flag, order
IteratorState = collections.namedtuple(
    "IteratorState", ("current_position", "epoch", "is_new_epoch", "order")
)


class OrderSampler:
    """The base class of order samplers: ``sampler(current_order, current_position)`` gives
    the index order of the next epoch (of the same length)."""

    def __call__(self, current_order: np.ndarray, current_position: int) -> np.ndarray:
        raise NotImplementedError


class ShuffleOrderSampler(OrderSampler):
    """Random orders: ``random_state.permutation(len(current_order))``; ``random_state``
    defaults to numpy's global generator (``numpy.random.random.__self__``), as chainer."""

    def __init__(self, random_state: np.random.RandomState | None = None) -> None:
        if random_state is None:
            random_state = np.random.random.__self__  # type: ignore[attr-defined]
        self._random = random_state

    def __call__(self, current_order: np.ndarray, current_position: int) -> np.ndarray:
        return self._random.permutation(len(current_order))  # type: ignore[no-any-return]


def _statemachine(
    state: IteratorState, batch_size: int, repeat: bool, order_sampler: Any, dataset_len: int
) -> tuple[IteratorState, np.ndarray | None]:
    """chainer's ``iterator_statemachine``: the next state and the indices of the next batch
    (None at the end of a non-repeating iterator)."""
    i, epoch, _, order = state
    if not repeat and epoch > 0:
        return state, None
    indices_list = []
    n = dataset_len if order is None else len(order)
    if repeat and n == 0:
        raise ValueError("Epoch size must be positive for an iterator that repeats.")
    i_end = i + batch_size
    is_new_epoch = False
    while i_end >= n:
        if order is None:
            indices_list.append(np.arange(i, n, dtype=np.intp))
        else:
            indices_list.append(order[i:n])
            new_order = order_sampler(order, i)
            if len(new_order) != len(order):
                raise ValueError("The size of order does not match the size of the previous order.")
            order = new_order
        epoch += 1
        is_new_epoch = True
        i = 0
        if repeat:
            i_end -= n
        else:
            i_end = 0
            break
    if order is None:
        indices_list.append(np.arange(i, i_end, dtype=np.intp))
    else:
        indices_list.append(order[i:i_end])
    return IteratorState(i_end, epoch, is_new_epoch, order), np.concatenate(indices_list)


class SerialIterator(Iterator):
    """chainer's ``SerialIterator(dataset, batch_size, repeat=True, shuffle=None,
    order_sampler=None)`` (see the module docstring).

    ``epoch`` (completed sweeps), ``is_new_epoch`` (the last batch ended an epoch),
    ``epoch_detail`` (``epoch + current_position / len(order)``), ``previous_epoch_detail``
    (None before the first batch), ``current_position``, ``reset()``, ``serialize`` (keys
    ``current_position``, ``epoch``, ``is_new_epoch``, ``order``, ``previous_epoch_detail``,
    chainer's; -1 stands for None).
    """

    _state: IteratorState  # set by reset()

    def __init__(
        self,
        dataset: Any,
        batch_size: int,
        repeat: bool = True,
        shuffle: bool | None = None,
        order_sampler: Any = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
            raise TypeError(
                "chainer SerialIterator: batch_size must be an int, got "
                f"{type(batch_size).__name__}"
            )
        if batch_size <= 0:
            raise ValueError(
                f"chainer SerialIterator: batch_size must be positive, got {batch_size}"
            )
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self._repeat = repeat
        self._shuffle = shuffle
        if shuffle is not None:
            if order_sampler is not None:
                raise ValueError(
                    "`shuffle` is not `None` and a custom `order_sampler` is set. Please set "
                    "`shuffle` to `None` to use the custom order sampler."
                )
            if shuffle:
                order_sampler = ShuffleOrderSampler()
        elif order_sampler is None:
            order_sampler = ShuffleOrderSampler()
        self.order_sampler = order_sampler
        self.reset()

    def __next__(self) -> list[Any]:
        if self.repeat and self._epoch_size == 0:  # (chainer: ZeroDivisionError first)
            raise ValueError(
                "chainer SerialIterator: Epoch size must be positive for an iterator that repeats "
                "(the dataset is empty)."
            )
        self._previous_epoch_detail = self.epoch_detail
        self._state, indices = _statemachine(
            self._state, self.batch_size, self.repeat, self.order_sampler, len(self.dataset)
        )
        if indices is None:
            raise StopIteration
        return [self.dataset[index] for index in indices]

    next = __next__

    @property
    def current_position(self) -> int:
        """The position in the current epoch."""
        return self._state.current_position  # type: ignore[no-any-return]

    @property
    def epoch(self) -> int:
        """The number of completed sweeps."""
        return self._state.epoch  # type: ignore[no-any-return]

    @property
    def is_new_epoch(self) -> bool:
        """Whether the last batch ended an epoch."""
        return self._state.is_new_epoch  # type: ignore[no-any-return]

    @property
    def epoch_detail(self) -> float:
        """``epoch + current_position / epoch size`` (``epoch`` for an empty dataset)."""
        size = self._epoch_size
        return self.epoch + (self.current_position / size if size else 0.0)

    @property
    def previous_epoch_detail(self) -> float | None:
        """``epoch_detail`` before the last batch (None before the first)."""
        if self._previous_epoch_detail < 0:
            return None
        return self._previous_epoch_detail

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol (the keys of chainer's SerialIterator)."""
        current_position = serializer("current_position", self.current_position)
        epoch = serializer("epoch", self.epoch)
        is_new_epoch = serializer("is_new_epoch", self.is_new_epoch)
        order = self._state.order
        if order is not None:
            try:
                serializer("order", order)
            except KeyError:
                serializer("_order", order)
        self._state = IteratorState(int(current_position), int(epoch), bool(is_new_epoch), order)
        try:
            self._previous_epoch_detail = serializer(
                "previous_epoch_detail", self._previous_epoch_detail
            )
        except KeyError:  # (a file of an older chainer: guessed as chainer does)
            self._previous_epoch_detail = (
                self.epoch + (self.current_position - self.batch_size) / self._epoch_size
            )
            if self.epoch_detail > 0:
                self._previous_epoch_detail = max(self._previous_epoch_detail, 0.0)
            else:
                self._previous_epoch_detail = -1.0

    def reset(self) -> None:
        """Back to the start (a new order is drawn when shuffling)."""
        if self.order_sampler:
            order = self.order_sampler(np.arange(len(self.dataset)), 0)
        else:
            order = None
        self._state = IteratorState(0, 0, False, order)
        self._previous_epoch_detail = -1.0

    @property
    def _epoch_size(self) -> int:
        order = self._state.order
        return len(self.dataset) if order is None else len(order)

    @property
    def repeat(self) -> bool:
        """Whether the iterator loops over the dataset forever."""
        return self._repeat


def __getattr__(name: str) -> Any:
    if name in ("MultiprocessIterator", "MultithreadIterator"):
        raise NotImplementedError(
            f"chainer.iterators.{name} is not supported by gradhub: chainer's prefetches, so its "
            "shuffles draw from numpy's global generator at other times than a serial iterator "
            f"(use SerialIterator); see {PAGE}"
        )
    if name[:1].isupper():
        raise NotImplementedError(
            f"chainer.iterators.{name} is not supported by gradhub (supported: "
            f"{', '.join(__all__)}); see {PAGE}"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
