"""mxnet Gluon's :class:`DataLoader` (``gluon.data.dataloader``), as mxnet 1.9.1: batches of
a dataset's samples, merged by ``batchify_fn`` (:func:`default_batchify_fn`: NDArrays stacked,
tuples merged element by element, numbers and numpy arrays made into an NDArray of their numpy
dtype).

Example::

    >>> import numpy as np
    >>> from gradhub_compat.mxnet import gluon
    >>> ds = gluon.data.ArrayDataset(np.arange(10.0).reshape(5, 2), np.arange(5))
    >>> for x, y in gluon.data.DataLoader(ds, batch_size=2, last_batch="discard"):
    ...     print(x.shape, x.dtype.__name__, y.asnumpy())
    (2, 2) float64 [0 1]
    (2, 2) float64 [2 3]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ... import ndarray as nd
from ...ndarray import NDArray
from . import sampler as _sampler

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn"]


def default_batchify_fn(data: list[Any]) -> Any:
    """mxnet's default merge of a list of samples into a batch: NDArrays are stacked along a
    new first axis (``mx.nd.stack``), tuples are merged element by element into a list,
    anything else goes through ``numpy.asarray`` and becomes an NDArray of that dtype (Python
    ints int64, floats float64, numpy float32 scalars float32, as mxnet)."""
    if isinstance(data[0], NDArray):
        return nd.stack(*data)
    if isinstance(data[0], tuple):
        return [default_batchify_fn(list(i)) for i in zip(*data)]
    arr = np.asarray(data)
    return nd.array(arr, dtype=arr.dtype)


def default_mp_batchify_fn(data: list[Any]) -> Any:
    """The merge mxnet uses with ``num_workers > 0``: the same values as
    :func:`default_batchify_fn` (mxnet puts them in shared memory, ``cpu_shared(0)``; here they
    are ordinary ``cpu(0)`` arrays)."""
    return default_batchify_fn(data)


class _PrefetchIter:
    """The iterator of a loader with ``num_workers > 0``: as mxnet's, it takes ``prefetch``
    batches of indices from the batch sampler when made and one more before each batch
    (``numpy.random`` is drawn at the same moments), and computes each batch in this
    process."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        self._iter = iter(loader._batch_sampler)
        self._pending: deque[Any] = deque()
        for _ in range(loader._prefetch):
            self._push_next()

    def _push_next(self) -> None:
        r = next(self._iter, None)
        if r is not None:
            self._pending.append(r)

    def __iter__(self) -> _PrefetchIter:
        return self

    def __next__(self) -> Any:
        self._push_next()
        if not self._pending:
            raise StopIteration
        return self._loader._batch(self._pending.popleft())


class DataLoader:
    """Mini-batches of ``dataset`` (a Dataset, an NDArray, a numpy array, a list), as mxnet
    1.9.1's ``gluon.data.DataLoader``.

    The indices come from ``batch_sampler`` or, when it is ``None``, from a
    ``BatchSampler(sampler, batch_size, last_batch or "keep")`` whose ``sampler`` defaults to
    ``RandomSampler(len(dataset))`` with ``shuffle=True`` (``numpy.random.shuffle``: after the
    same ``numpy.random.seed`` the batches are mxnet's) and ``SequentialSampler`` otherwise.
    ``batch_size`` is required without ``batch_sampler`` and ``batch_size``, ``shuffle``,
    ``sampler``, ``last_batch`` are refused with it (``ValueError``, as mxnet). Each batch is
    ``batchify_fn([dataset[i] for i in indices])`` (:func:`default_batchify_fn`).

    ``num_workers > 0`` runs in this process: the batches and their order are the ones mxnet's
    workers give (the indices are drawn from the sampler at the same moments, ``prefetch``
    batches ahead, default ``2 * num_workers``); only randomness inside the dataset's
    transforms differs (it draws from this process's generators, mxnet's workers from
    copies of theirs). ``thread_pool``, ``pin_memory``, ``pin_device_id`` and ``timeout`` are
    accepted; the arrays are on ``cpu(0)``.
    ``auto_reload=True`` prepares the next epoch's iterator when one ends, as mxnet.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat.mxnet import gluon
        >>> np.random.seed(0)
        >>> loader = gluon.data.DataLoader(np.arange(6), batch_size=4, shuffle=True)
        >>> [b.asnumpy().tolist() for b in loader]
        [[5, 2, 1, 3], [0, 4]]
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = None,
        shuffle: bool = False,
        sampler: Any = None,
        last_batch: str | None = None,
        batch_sampler: Any = None,
        batchify_fn: Callable[[list[Any]], Any] | None = None,
        num_workers: int = 0,
        pin_memory: bool = False,
        pin_device_id: int = 0,
        prefetch: int | None = None,
        thread_pool: bool = False,
        timeout: int = 120,
        auto_reload: bool = False,
    ) -> None:
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = thread_pool
        self._timeout = timeout
        if not timeout > 0:
            raise AssertionError(
                f"gluon.data.DataLoader: timeout must be positive, given {timeout}"
            )
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError(
                    "gluon.data.DataLoader: batch_size must be specified unless batch_sampler "
                    "is specified"
                )
            if sampler is None:
                if shuffle:
                    sampler = _sampler.RandomSampler(len(dataset))
                else:
                    sampler = _sampler.SequentialSampler(len(dataset))
            elif shuffle:
                raise ValueError(
                    "gluon.data.DataLoader: shuffle must not be specified if sampler is specified"
                )
            batch_sampler = _sampler.BatchSampler(
                sampler, batch_size, last_batch if last_batch else "keep"
            )
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ValueError(
                "gluon.data.DataLoader: batch_size, shuffle, sampler and last_batch must not be "
                "specified if batch_sampler is specified."
            )
        self._batch_sampler = batch_sampler
        self._num_workers = num_workers if num_workers >= 0 else 0
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        self._batchify_fn: Callable[[list[Any]], Any]
        if batchify_fn is None:
            self._batchify_fn = default_mp_batchify_fn if num_workers > 0 else default_batchify_fn
        else:
            self._batchify_fn = batchify_fn
        self.auto_reload = auto_reload
        self._iter: Iterator[Any] | None = None
        if self.auto_reload:
            self.refresh()

    def _batch(self, indices: list[Any]) -> Any:
        return self._batchify_fn([self._dataset[idx] for idx in indices])

    def _prefetch_iter(self) -> Iterator[Any]:
        if self._num_workers == 0:

            def same_process_iter() -> Iterator[Any]:
                for batch in self._batch_sampler:
                    yield self._batch(batch)

            return same_process_iter()
        return _PrefetchIter(self)

    def __iter__(self) -> Iterator[Any]:
        if self._iter is None:
            self.refresh()
        t = self._iter
        self._iter = None
        assert t is not None
        yield from t
        if self._iter is None and self.auto_reload:
            self.refresh()

    def __len__(self) -> int:
        return len(self._batch_sampler)

    def refresh(self) -> None:
        """Prepare a new iterator over the dataset (the next ``iter`` uses it)."""
        self._iter = self._prefetch_iter()

    def clean(self) -> None:
        """Drop the prepared iterator (the next ``iter`` prepares one)."""
        self._iter = None
