"""mxnet Gluon's samplers (``gluon.data.sampler``), as mxnet 1.9.1: a sampler is an iterable
of dataset indices with a length. :class:`RandomSampler` draws its permutation with
``numpy.random.shuffle`` (numpy's global generator, as mxnet), so ``numpy.random.seed`` gives
mxnet's order.

Example::

    >>> from gradhub_compat.mxnet import gluon
    >>> list(gluon.data.BatchSampler(gluon.data.SequentialSampler(5), 2, "keep"))
    [[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = [
    "BatchSampler",
    "FilterSampler",
    "IntervalSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
]

_LAST_BATCH = ("keep", "discard", "rollover")


class Sampler:
    """Base class of the samplers: subclasses define ``__iter__`` (the indices) and
    ``__len__``."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """The indices ``start, start + 1, ..., start + length - 1``.

    Example::

        >>> from gradhub_compat.mxnet.gluon.data import SequentialSampler
        >>> list(SequentialSampler(3, start=2))
        [2, 3, 4]
    """

    def __init__(self, length: int, start: int = 0) -> None:
        self._length = length
        self._start = start

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._start, self._start + self._length))

    def __len__(self) -> int:
        return self._length


class RandomSampler(Sampler):
    """A random permutation of ``0 .. length - 1``, drawn at each iteration with
    ``numpy.random.shuffle`` of ``numpy.arange(length)`` (numpy's global generator, as mxnet
    1.9.1: the same ``numpy.random.seed`` gives mxnet's order). The indices are numpy int64.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat.mxnet.gluon.data import RandomSampler
        >>> np.random.seed(0)
        >>> [int(i) for i in RandomSampler(5)]
        [2, 0, 1, 3, 4]
    """

    def __init__(self, length: int) -> None:
        self._length = length

    def __iter__(self) -> Iterator[Any]:
        indices = np.arange(self._length)
        np.random.shuffle(indices)
        return iter(indices)

    def __len__(self) -> int:
        return self._length


class FilterSampler(Sampler):
    """The indices ``i`` of ``dataset`` for which ``fn(dataset[i])`` is true (``fn`` is called
    on every sample once, when the sampler is made)."""

    def __init__(self, fn: Callable[[Any], Any], dataset: Any) -> None:
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i, sample in enumerate(dataset) if fn(sample)]

    def __iter__(self) -> Iterator[int]:
        return iter(self._indices)

    def __len__(self) -> int:
        return len(self._indices)


class IntervalSampler(Sampler):
    """Every ``interval``-th index: ``0, k, 2k, ...`` then, with ``rollover=True``,
    ``1, k + 1, ...`` and so on, so that every index of ``0 .. length - 1`` comes once
    (``rollover=False``: only the first pass). mxnet 1.9.1 has it as
    ``gluon.contrib.data.IntervalSampler``; its ``len`` is ``length`` even with
    ``rollover=False``, here it is the number of indices the iteration gives.

    Example::

        >>> from gradhub_compat.mxnet.gluon.data import IntervalSampler
        >>> list(IntervalSampler(6, interval=3))
        [0, 3, 1, 4, 2, 5]
    """

    def __init__(self, length: int, interval: int, rollover: bool = True) -> None:
        if not interval <= length:
            raise AssertionError(
                f"gluon.data.IntervalSampler: Interval {interval} must be smaller than or "
                f"equal to length {length}"
            )
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self) -> Iterator[int]:
        for i in range(self._interval if self._rollover else 1):
            yield from range(i, self._length, self._interval)

    def __len__(self) -> int:
        if self._rollover:
            return self._length
        return len(range(0, self._length, self._interval))


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices of ``sampler``. ``last_batch`` says what becomes of an
    incomplete last batch: ``"keep"`` yields it, ``"discard"`` drops it, ``"rollover"`` puts its
    indices in front of the next iteration's first batch (as mxnet 1.9.1; another value raises
    ``ValueError`` when iterated or measured, as mxnet).

    Example::

        >>> from gradhub_compat.mxnet import gluon
        >>> bs = gluon.data.BatchSampler(gluon.data.SequentialSampler(5), 2, "rollover")
        >>> list(bs), list(bs)
        ([[0, 1], [2, 3]], [[4, 0], [1, 2], [3, 4]])
    """

    def __init__(self, sampler: Any, batch_size: int, last_batch: str = "keep") -> None:
        self._sampler = sampler
        self._batch_size = batch_size
        self._last_batch = last_batch
        self._prev: list[Any] = []

    def _bad_last_batch(self) -> ValueError:
        return ValueError(
            "gluon.data.BatchSampler: last_batch must be one of 'keep', 'discard', or "
            f"'rollover', but got {self._last_batch}"
        )

    def __iter__(self) -> Iterator[list[Any]]:
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "discard":
                return
            elif self._last_batch == "rollover":
                self._prev = batch
            else:
                raise self._bad_last_batch()

    def __len__(self) -> int:
        if self._last_batch == "keep":
            return (len(self._sampler) + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return len(self._sampler) // self._batch_size
        if self._last_batch == "rollover":
            return (len(self._prev) + len(self._sampler)) // self._batch_size
        raise self._bad_last_batch()
