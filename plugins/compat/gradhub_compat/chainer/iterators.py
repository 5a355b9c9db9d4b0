"""chainer's ``chainer.iterators`` (chainer 7.8.1 ``chainer/iterators/``): :class:`SerialIterator`,
:class:`MultithreadIterator`, :class:`MultiprocessIterator` and the order samplers.

``SerialIterator(dataset, batch_size, repeat=True, shuffle=None, order_sampler=None)`` yields
lists of examples. With ``shuffle`` True or None (and no ``order_sampler``) each epoch's order is
``numpy.random.permutation(len(dataset))`` drawn from numpy's global generator (chainer's
:class:`ShuffleOrderSampler`), the first one when the iterator is made or reset, the next one at
the end of each epoch, so the same ``numpy.random.seed`` gives chainer's batches. A batch that
crosses the end of an epoch is completed from the next epoch's order (``repeat=True``); with
``repeat=False`` the last batch is short and the next ``next()`` raises StopIteration.

chainer's prefetching iterators give the same batches but draw the next epoch's order earlier,
so a program that also draws from numpy's global generator (dropout, noise, its own shuffles)
sees other numbers than with ``SerialIterator``. The two classes here make chainer 7.8.1's draws
at chainer's moments, in plain serial code (no threads, no processes, nothing pickled):
``MultithreadIterator`` prepares the next batch (its state, so the order draw when it crosses
an epoch, and the examples) before ``next()`` returns the current one; ``MultiprocessIterator``
keeps ``n_prefetch + 1`` batches prepared ahead, as chainer's prefetch thread does when loading
is faster than the training step (see the class docstring).

Example::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> it = chainer.iterators.SerialIterator(list(range(5)), 2, shuffle=False)
    >>> [next(it) for _ in range(3)], it.epoch, it.is_new_epoch, it.epoch_detail
    ([[0, 1], [2, 3], [4, 0]], 1, True, 1.2)
"""

from __future__ import annotations

import collections
import copy
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ._device import PAGE
from .dataset.iterator import Iterator

__all__ = [
    "MultiprocessIterator",
    "MultithreadIterator",
    "OrderSampler",
    "SerialIterator",
    "ShuffleOrderSampler",
]


class _Failed:
    """A prefetched batch whose reading raised: the exception is raised when that batch is
    requested (as chainer's ``map_async(...).get()``), the state having moved past it."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


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


def _check_batch_size(cls: str, batch_size: Any) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise TypeError(
            f"chainer {cls}: batch_size must be an int, got {type(batch_size).__name__}"
        )
    if batch_size <= 0:
        raise ValueError(f"chainer {cls}: batch_size must be positive, got {batch_size}")
    return int(batch_size)


def _default_order_sampler(shuffle: bool | None, order_sampler: Any) -> Any:
    """chainer's rule: ``shuffle`` True or None without a sampler shuffles from numpy's
    global generator; ``shuffle`` False keeps the dataset order; a sampler needs ``shuffle``
    None."""
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
    return order_sampler


class _StateIterator(Iterator):
    """What the iterators share: the state (``current_position``, ``epoch``,
    ``is_new_epoch``, ``order``) and the values read from it."""

    _state: IteratorState  # set by reset()
    _previous_epoch_detail: float = -1.0
    dataset: Any
    batch_size: int
    order_sampler: Any
    _repeat: bool

    def _setup(
        self,
        cls: str,
        dataset: Any,
        batch_size: Any,
        repeat: bool,
        shuffle: Any,
        order_sampler: Any,
    ) -> None:
        """The arguments every iterator takes: ``batch_size`` checked (errors naming ``cls``),
        and the order sampler chosen from ``shuffle`` and ``order_sampler`` as chainer."""
        self.batch_size = _check_batch_size(cls, batch_size)
        self.dataset = dataset
        self._repeat = repeat
        self.order_sampler = _default_order_sampler(shuffle, order_sampler)

    def _first_order(self) -> np.ndarray | None:
        """The first epoch's order (a draw when shuffling), as chainer's ``reset``."""
        if self.order_sampler:
            return self.order_sampler(np.arange(len(self.dataset)), 0)  # type: ignore[no-any-return]
        return None

    def reset(self) -> None:
        """Back to the start (a new order is drawn when shuffling)."""
        self._state = IteratorState(0, 0, False, self._first_order())
        self._previous_epoch_detail = -1.0

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

    @property
    def _epoch_size(self) -> int:
        order = self._state.order
        return len(self.dataset) if order is None else len(order)

    @property
    def repeat(self) -> bool:
        """Whether the iterator loops over the dataset forever."""
        return self._repeat

    def _serialize_state(
        self, serializer: Any, serialize_order: Callable[[Any, np.ndarray], Any]
    ) -> IteratorState:
        """chainer's keys ``current_position``, ``epoch``, ``is_new_epoch`` and, when there
        is an order, ``serialize_order(serializer, order)`` (the order read back): the state
        they give."""
        current_position = serializer("current_position", self.current_position)
        epoch = serializer("epoch", self.epoch)
        is_new_epoch = serializer("is_new_epoch", self.is_new_epoch)
        order = self._state.order
        if order is not None:
            order = serialize_order(serializer, order)
        return IteratorState(int(current_position), int(epoch), bool(is_new_epoch), order)

    def _serialize_previous_epoch_detail(self, serializer: Any) -> None:
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

    def _next_state(self, state: IteratorState) -> tuple[IteratorState, np.ndarray | None]:
        if self.repeat and self._epoch_size == 0:  # (chainer: ZeroDivisionError first)
            raise ValueError(
                f"chainer {type(self).__name__}: Epoch size must be positive for an iterator "
                "that repeats (the dataset is empty)."
            )
        return _statemachine(
            state, self.batch_size, self.repeat, self.order_sampler, len(self.dataset)
        )

    def _prepare(
        self, state: IteratorState, read: Callable[[np.ndarray], list[Any]]
    ) -> tuple[IteratorState, Any]:
        """The state after the batch that follows ``state`` and that batch, ``read(indices)``
        (None at the end of a non-repeating iterator; a :class:`_Failed` holding the
        exception when reading raised, raised by :meth:`_take` when the batch is requested)."""
        state, indices = self._next_state(state)
        if indices is None:
            return state, None
        try:
            return state, read(indices)
        except Exception as error:  # raised when this batch is requested, as chainer's
            return state, _Failed(error)

    def _examples(self, indices: np.ndarray) -> list[Any]:
        return [self.dataset[i] for i in indices]

    def _take(self, state: IteratorState, batch: Any) -> Any:
        """Give ``batch`` (None raises StopIteration, a :class:`_Failed` its exception) after
        moving to ``state``, the state after it (the current ``epoch_detail`` becoming
        ``previous_epoch_detail``)."""
        self._previous_epoch_detail = self.epoch_detail
        self._state = state
        if batch is None:
            raise StopIteration
        if isinstance(batch, _Failed):
            raise batch.error
        return batch


def _serialize_order(serializer: Any, order: np.ndarray) -> np.ndarray:
    """The key ``order`` (``_order`` in a file that has no ``order``), read in place."""
    try:
        serializer("order", order)
    except KeyError:
        serializer("_order", order)
    return order


class SerialIterator(_StateIterator):
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
        self._setup("SerialIterator", dataset, batch_size, repeat, shuffle, order_sampler)
        self._shuffle = shuffle
        self.reset()

    def __next__(self) -> list[Any]:
        state, indices = self._next_state(self._state)
        return self._examples(self._take(state, indices))

    next = __next__

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol (the keys of chainer's SerialIterator)."""
        self._state = self._serialize_state(serializer, _serialize_order)
        self._serialize_previous_epoch_detail(serializer)


class MultithreadIterator(_StateIterator):
    """chainer's ``MultithreadIterator(dataset, batch_size, repeat=True, shuffle=None,
    n_threads=1, order_sampler=None)``: :class:`SerialIterator`'s batches, prefetched one
    ahead as chainer 7.8.1's: ``next()`` returns the batch prepared by the previous call (at
    the first call, it prepares it then), then prepares the following one: it advances the
    state (drawing the next epoch's order from numpy's global generator when that batch
    crosses the end of an epoch) and reads its examples. So the order of epoch ``e + 1`` is
    drawn one batch earlier than with ``SerialIterator``, before the program's own draws
    between the two ``next()`` calls, as in chainer.

    The examples are read in the calling thread (``n_threads`` is kept but no thread is
    started; chainer reads them in a thread pool, so a dataset that draws random numbers while
    reading, such as a random augmentation, draws them at moments chainer does not fix).
    ``reset()``, ``finalize()`` and ``serialize`` drop the prepared batch, as chainer's (after
    a snapshot the next batch is prepared again, drawing again if it crosses an epoch).
    ``serialize`` uses chainer's keys ``current_position``, ``epoch``, ``is_new_epoch``,
    ``_order`` (not written without shuffling: chainer would write a pickled None),
    ``previous_epoch_detail``.

    An exception raised while reading a prepared batch (by the dataset's ``__getitem__``) is
    kept in place of that batch and raised by the ``next()`` that requests it, as chainer's
    ``map_async(...).get()``: the state has moved past that batch, and the following
    ``next()`` gives the batch after it.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> it = chainer.iterators.MultithreadIterator(list(range(5)), 2, shuffle=False)
        >>> [next(it) for _ in range(3)], it.epoch, it.epoch_detail
        ([[0, 1], [2, 3], [4, 0]], 1, 1.2)
    """

    _next: Any = None  # the prepared batch (a list, None at the end, or a _Failed)

    def __init__(
        self,
        dataset: Any,
        batch_size: int,
        repeat: bool = True,
        shuffle: bool | None = None,
        n_threads: int = 1,
        order_sampler: Any = None,
    ) -> None:
        self._setup("MultithreadIterator", dataset, batch_size, repeat, shuffle, order_sampler)
        self._shuffle = shuffle
        self.n_threads = n_threads
        self.reset()

    def reset(self) -> None:
        """Back to the start (a new order is drawn when shuffling); the prepared batch is
        dropped."""
        super().reset()
        self._next = None

    def finalize(self) -> None:
        """Drop the prepared batch."""
        self._next = None

    def __next__(self) -> list[Any]:
        if self._next is None:
            self._invoke_prefetch()
        batch = self._get()
        self._invoke_prefetch()  # the next batch, before this one is returned
        return batch

    next = __next__

    def _invoke_prefetch(self) -> None:
        self._next_state_value, self._next = self._prepare(self._state, self._examples)

    def _get(self) -> list[Any]:
        batch, self._next = self._next, None
        return self._take(self._next_state_value, batch)

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol (the keys of chainer's MultithreadIterator)."""
        self._state = self._serialize_state(serializer, lambda s, order: s("_order", order))
        previous = serializer("previous_epoch_detail", self._previous_epoch_detail)
        self._previous_epoch_detail = -1.0 if previous is None else float(previous)
        self._next = None


class MultiprocessIterator(_StateIterator):
    """chainer's ``MultiprocessIterator(dataset, batch_size, repeat=True, shuffle=None,
    n_processes=None, n_prefetch=1, shared_mem=None, order_sampler=None,
    dataset_timeout=30.0, maxtasksperchild=None)``: :class:`SerialIterator`'s batches, with
    chainer 7.8.1's prefetch made serial and deterministic.

    chainer's prefetch thread runs the iterator's state ahead of the program and blocks when
    ``n_prefetch`` batches wait in its queue and one more is ready; when loading is faster
    than a training step (the usual case) the draws of the next epochs' orders from numpy's
    global generator therefore happen ``n_prefetch + 1`` batches ahead, right after each
    ``next()``. Here each ``next()`` (and ``reset()`` or ``serialize`` once the first batch was
    taken: chainer's thread then starts again from the new state and draws again) prepares
    batches until ``n_prefetch + 1`` wait, before it returns. The first ``next()`` prepares
    its own batch in the program's process without a copy when ``shared_mem`` is None
    (chainer's measuring step), then starts the prefetch. When the program draws at once after
    ``next()`` (a small CPU model drawing dropout masks), chainer's thread and the program
    race for the generator and chainer 7.8.1's numbers change from run to run; the layer gives
    those of the runs where the thread is first.

    The other batches are read as chainer's worker processes read them: the examples are deep
    copies (chainer unpickles them), and numpy's global generator is swapped, while reading,
    for a "worker" generator taken as a copy of the global state when the prefetch starts (a
    fork copies it), so a dataset drawing random numbers while reading (an augmentation)
    leaves the program's generator untouched, as in chainer, and draws what chainer's single
    worker draws when ``n_processes=1`` (with several workers chainer's draws depend on which
    worker takes which example). Nothing is pickled and no process or thread is started:
    ``n_processes``, ``dataset_timeout`` and ``maxtasksperchild`` are kept but unused.

    After ``finalize()`` the iterator cannot be reset (``NotImplementedError``, chainer's
    message) nor iterated. ``serialize`` uses chainer's keys ``current_position``, ``epoch``,
    ``is_new_epoch``, ``order``, ``previous_epoch_detail``; without shuffling (no order)
    the order is not written (chainer 7.8.1 raises ``AttributeError`` there).

    An exception raised while reading a prepared batch is kept in place of that batch and
    raised by the ``next()`` that requests it, the state having moved past that batch; the
    following ``next()`` gives the batch after it, as :class:`MultithreadIterator`. (In
    chainer 7.8.1 the exception ends the prefetch thread, and the ``next()`` that waits for
    the failed batch never returns, whatever ``dataset_timeout``.)

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> it = chainer.iterators.MultiprocessIterator(list(range(5)), 2, shuffle=False)
        >>> [next(it) for _ in range(3)], it.epoch, it.epoch_detail
        ([[0, 1], [2, 3], [4, 0]], 1, 1.2)
    """

    _finalized = False
    _launched = False

    def __init__(
        self,
        dataset: Any,
        batch_size: int,
        repeat: bool = True,
        shuffle: bool | None = None,
        n_processes: int | None = None,
        n_prefetch: int = 1,
        shared_mem: int | None = None,
        order_sampler: Any = None,
        dataset_timeout: float | None = 30.0,
        maxtasksperchild: int | None = None,
    ) -> None:
        self._setup("MultiprocessIterator", dataset, batch_size, repeat, shuffle, order_sampler)
        self.shuffle = shuffle
        self.n_processes = n_processes or os.cpu_count() or 1
        self.n_prefetch = max(n_prefetch, 1)
        self.shared_mem = shared_mem
        self.dataset_timeout = dataset_timeout
        self._maxtasksperchild = maxtasksperchild
        self._queue: collections.deque[tuple[Any, IteratorState]] = collections.deque()
        self._worker_random: Any = None
        self._prefetch_state: IteratorState
        self.reset()

    @property  # type: ignore[override]
    def repeat(self) -> bool:
        """Whether the iterator loops over the dataset forever."""
        return self._repeat

    @repeat.setter
    def repeat(self, value: bool) -> None:
        self._repeat = value

    def __next__(self) -> list[Any]:
        if self._finalized:
            raise RuntimeError("chainer MultiprocessIterator: the iterator is finalized")
        if not self._launched:
            if self.shared_mem is None:  # chainer's measuring step, in the main process
                self._prefetch_state, batch = self._prepare(self._prefetch_state, self._examples)
                item = (batch, self._prefetch_state)
                self._launch()
            else:
                self._launch()
                item = self._queue.popleft()
                self._fill()
        else:
            item = self._queue.popleft()
            self._fill()
        batch, state = item
        return self._take(state, batch)

    next = __next__

    def _launch(self) -> None:
        self._worker_random = np.random.get_state()  # the workers fork with this state
        self._launched = True
        self._fill()

    def _fill(self) -> None:
        """Prepare batches until ``n_prefetch + 1`` wait (chainer's queue and the batch its
        thread holds while the queue is full)."""
        while len(self._queue) < self.n_prefetch + 1:
            self._prefetch_state, batch = self._prepare(self._prefetch_state, self._read)
            self._queue.append((batch, self._prefetch_state))

    def _read(self, indices: np.ndarray) -> list[Any]:
        main = np.random.get_state()
        np.random.set_state(self._worker_random)
        try:
            return [copy.deepcopy(self.dataset[i]) for i in indices]
        finally:
            self._worker_random = np.random.get_state()
            np.random.set_state(main)

    def finalize(self) -> None:
        """Stop: drop the prepared batches; the iterator cannot be used any more."""
        if self._finalized:
            return
        queue = getattr(self, "_queue", None)
        if queue is not None:
            queue.clear()
        self._finalized = True

    def reset(self) -> None:
        """Back to the start (a new order is drawn when shuffling)."""
        self._reset_state(IteratorState(0, 0, False, self._first_order()))
        self._previous_epoch_detail = -1.0

    def _reset_state(self, state: IteratorState) -> None:
        if self._finalized:
            raise NotImplementedError(
                "Reset of finalized MultiProcessIterator is currently not supported."
            )
        self._state = state
        self._prefetch_state = self._state
        self._queue.clear()
        if self._launched:
            self._fill()

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol (the keys of chainer's MultiprocessIterator); as chainer's, the
        prefetch starts again from the state, also after writing."""
        state = self._serialize_state(
            serializer, lambda s, order: _serialize_order(s, order.copy())
        )
        self._reset_state(state)
        self._serialize_previous_epoch_detail(serializer)


def __getattr__(name: str) -> Any:
    if name[:1].isupper():
        raise NotImplementedError(
            f"chainer.iterators.{name} is not supported by gradhub (supported: "
            f"{', '.join(__all__)}); see {PAGE}"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
