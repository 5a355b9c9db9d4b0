"""nnabla's data iterators: ``from gradhub_compat.nnabla.utils.data_iterator import
data_iterator_simple``.

``data_iterator_simple(load_func, num_examples, batch_size, shuffle=False, rng=None, ...)``
and ``data_iterator(data_source, batch_size, rng=None, ...)`` build a :class:`DataIterator`
whose ``next()`` returns one batch: a tuple with one array per variable, ``numpy.array`` of the
``batch_size`` examples. The batches, their order for the same ``rng``
(``numpy.random.RandomState(seed)``; 313 when None) and the epoch boundaries are nnabla 1.39's:
the iterator never returns a short batch; a batch that runs past the end of the data
continues from the start after the source's ``reset()`` (for ``data_iterator_simple``, in the
finished epoch's order, whose next permutation applies from the next batch on), the epoch
counter moves on and the epoch callbacks run when that batch is returned
(``stop_exhausted=True``: ``StopIteration`` instead of a batch that would run past the end).

Batches are read when ``next()`` asks for them (``use_thread`` is accepted and changes nothing):
nnabla reads one batch ahead in a thread, so there ``position`` already counts the batch after
the one returned; here it counts the examples returned, as nnabla's ``use_thread=False``.
``data_iterator_csv_dataset(uri, batch_size, ...)`` reads a dataset CSV file (a
:class:`~gradhub_compat.nnabla.utils.data_source_implements.CsvDataSource`), and
``data_iterator_concat_datasets`` several sources one after the other. File caches
(``with_file_cache=True``) and ``data_iterator_cache`` raise ``NotImplementedError`` (see
docs/migration-nnabla.md, 'Monitors and data iterators').

Example::

    >>> import numpy as np
    >>> from gradhub_compat.nnabla.utils.data_iterator import data_iterator_simple
    >>> def load(i):
    ...     return np.array([i, 10 * i], np.float32), np.array(i % 3)
    >>> di = data_iterator_simple(load, 10, 4, shuffle=True, rng=np.random.RandomState(0))
    >>> x, y = di.next()
    >>> x.shape, y.tolist(), di.epoch
    ((4, 2), [2, 2, 1, 0], 0)
    >>> [di.next()[0][:, 0].astype(int).tolist() for _ in range(2)], di.epoch
    ([[1, 6, 7, 3], [0, 5, 2, 8]], 1)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy

from ..logger import logger
from .data_source import (
    DOCS,
    ConcatDataSource,
    DataSource,
    DataSourceWithFileCache,
    DataSourceWithMemoryCache,
    SimpleDataSource,
    SlicedDataSource,
)
from .data_source_implements import CsvDataSource

__all__ = [
    "ConcatDataSource",
    "CsvDataSource",
    "DataIterator",
    "DataSourceWithFileCache",
    "DataSourceWithMemoryCache",
    "SimpleDataSource",
    "SlicedDataSource",
    "data_iterator",
    "data_iterator_cache",
    "data_iterator_concat_datasets",
    "data_iterator_csv_dataset",
    "data_iterator_simple",
]

Callback = Callable[[int], Any]


def _check_batch_size(where: str, batch_size: Any) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, numpy.integer)):
        raise TypeError(f"{where}: batch_size must be an int, got {batch_size!r}")
    if batch_size < 1:
        raise ValueError(f"{where}: batch_size must be positive, got {batch_size}")
    return int(batch_size)


class DataIterator:
    """Batches from a :class:`~gradhub_compat.nnabla.utils.data_source.DataSource` (nnabla's
    ``DataIterator(data_source, batch_size, rng=None, use_thread=True, epoch_begin_callbacks=[],
    epoch_end_callbacks=[], stop_exhausted=False)``).

    ``next()`` (also ``next(di)``, ``for batch in di``) reads ``batch_size`` examples; when the
    source's position reaches ``size`` (and not ``stop_exhausted``), the source is reset and the
    batch continues from its start; after such a batch the source's ``apply_order()`` runs and,
    once per reset, the epoch-end callbacks (with the finished epoch), ``epoch += 1`` and the
    epoch-begin callbacks (with the new one). ``size`` is the source's size, ``position`` its
    position, ``variables`` its variable names. ``slice(rng, num_of_slices, slice_pos)`` gives
    an iterator over one of ``num_of_slices`` parts (see :meth:`slice`). A context manager;
    ``close()`` closes the source.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat.nnabla.utils.data_iterator import data_iterator_simple
        >>> ends = []
        >>> with data_iterator_simple(lambda i: (np.array(i),), 5, 2) as di:
        ...     di.register_epoch_end_callback(ends.append)
        ...     batches = [di.next()[0].tolist() for _ in range(3)]
        >>> batches, ends, di.epoch, di.position
        ([[0, 1], [2, 3], [4, 0]], [0], 1, 1)
    """

    def __init__(
        self,
        data_source: DataSource,
        batch_size: int,
        rng: numpy.random.RandomState | None = None,
        use_thread: bool = True,
        epoch_begin_callbacks: Iterable[Callback] = (),
        epoch_end_callbacks: Iterable[Callback] = (),
        stop_exhausted: bool = False,
    ) -> None:
        logger.info("Using DataIterator")
        for attr in ("variables", "size", "position", "next", "reset", "apply_order"):
            if not hasattr(data_source, attr):
                raise TypeError(
                    f"DataIterator: data_source must be a DataSource, got "
                    f"{type(data_source).__name__} (no {attr!r})"
                )
        self._batch_size = _check_batch_size("DataIterator", batch_size)
        if rng is None:
            rng = numpy.random.RandomState(313)
        self._stop_exhausted = stop_exhausted
        self._rng = rng
        self._data_source = data_source
        self._shuffle = data_source.shuffle
        self._variables = data_source.variables
        self._num_of_variables = len(data_source.variables)
        self._epoch_end_callbacks = list(epoch_end_callbacks)
        self._epoch_begin_callbacks = list(epoch_begin_callbacks)
        self._size = data_source.size
        self._use_thread = use_thread
        self._reset()
        self._current_epoch = 0
        self._closed = False

    def __iter__(self) -> DataIterator:
        return self

    def __next__(self) -> tuple[numpy.ndarray, ...]:
        return self.next()

    def __enter__(self) -> DataIterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the data source (a second call does nothing)."""
        if not self._closed:
            self._data_source.close()
            self._closed = True

    @property
    def epoch(self) -> int:
        """The number of times the position went back to zero."""
        return self._current_epoch

    @property
    def position(self) -> int:
        """The data source's position in the current epoch."""
        return self._data_source.position

    @property
    def size(self) -> int:
        """The number of examples of the data source."""
        return self._size

    @property
    def variables(self) -> Any:
        """The variable names of the data (``["x0", "x1"]`` for ``data_iterator_simple``)."""
        return self._variables

    @property
    def batch_size(self) -> int:
        """The number of examples ``next()`` returns."""
        return self._batch_size

    def _reset(self) -> None:
        self._data_source.reset()

    def _next(self) -> tuple[Any, int]:
        n_reset = 0
        data: list[list[Any]] = [[] for _ in self._variables]
        if self._data_source.position + self._batch_size > self._size and self._stop_exhausted:
            return None, 0
        for _ in range(self._batch_size):
            d = self._data_source.next()
            if d is None:
                return None, 0
            if self._data_source.position >= self._size and not self._stop_exhausted:
                n_reset += 1
                self._reset()
            for i in range(len(self._variables)):
                data[i].append(d[i])
        if n_reset != 0:
            self._data_source.apply_order()
        return tuple(numpy.array(x) for x in data), n_reset

    def next(self) -> tuple[numpy.ndarray, ...]:
        """The next batch: a tuple with one array per variable, ``batch_size`` examples long.

        Raises ``StopIteration`` with ``stop_exhausted`` once fewer than ``batch_size``
        examples are left (and at each call after that).
        """
        data, n_reset = self._next()
        if data is None:
            if self._data_source.position + self._batch_size >= self._size and (
                self._stop_exhausted
            ):
                raise StopIteration
            raise ValueError(
                f"DataIterator.next: the data source returned None at position "
                f"{self._data_source.position - 1}"
            )
        for _ in range(n_reset):
            if self._current_epoch >= 0:
                self._callback_epoch_end()
            self._current_epoch += 1
            self._callback_epoch_begin()
        return data

    def slice(
        self,
        rng: numpy.random.RandomState | None,
        num_of_slices: int | None = None,
        slice_pos: int | None = None,
        slice_start: int | None = None,
        slice_end: int | None = None,
        cache_dir: str | None = None,
        use_cache: bool = False,
        drop_last: bool = False,
    ) -> DataIterator:
        """An iterator over a part of the data (nnabla's ``slice``), with this batch size.

        Either ``num_of_slices`` and ``slice_pos``: part ``slice_pos`` of ``num_of_slices``,
        each ``ceil(size / num_of_slices)`` examples long, the last one moved back to end at
        ``size`` (with ``drop_last``: ``size // num_of_slices`` long, the rest dropped); or
        ``slice_start`` and ``slice_end``. The slices read this iterator's source in the order
        of the same generation (epoch), so that slices stepped together see one permutation.
        ``use_cache=True`` puts a memory cache (with ``rng``) in front; ``cache_dir`` (a file
        cache) raises ``NotImplementedError``. Where nnabla logs an error and returns None
        for a wrong combination of arguments, this raises ``ValueError``.

        Example::

            >>> from gradhub_compat.nnabla.utils.data_iterator import data_iterator_simple
            >>> di = data_iterator_simple(lambda i: (i,), 10, batch_size=2)
            >>> part = di.slice(None, num_of_slices=3, slice_pos=2)
            >>> part.size, part.next()[0].tolist()
            (4, [6, 7])
        """
        size = self._size
        if (
            num_of_slices is not None
            and slice_pos is not None
            and slice_start is None
            and slice_end is None
        ):
            n = int(num_of_slices)
            if n < 1 or not 0 <= int(slice_pos) < n:
                raise ValueError(
                    f"DataIterator.slice: slice_pos must be in [0, num_of_slices), got "
                    f"slice_pos={slice_pos}, num_of_slices={num_of_slices}"
                )
            if drop_last:
                size_rank = size // n
                slice_start = size_rank * slice_pos
                slice_end = slice_start + size_rank
            else:
                size_rank = (size + n - 1) // n
                slice_start = (size_rank * slice_pos) % size
                slice_end = slice_start + size_rank
                if slice_end > size:
                    offset = slice_end - size
                    slice_end -= offset
                    slice_start -= offset
        elif (
            num_of_slices is None
            and slice_pos is None
            and slice_start is not None
            and slice_end is not None
        ):
            if not 0 <= slice_start < slice_end <= size:
                raise ValueError(
                    f"DataIterator.slice: need 0 <= slice_start < slice_end <= size ({size}), got "
                    f"slice_start={slice_start}, slice_end={slice_end}"
                )
        else:
            raise ValueError(
                "DataIterator.slice: give either num_of_slices and slice_pos, or slice_start and "
                "slice_end"
            )
        sliced = SlicedDataSource(
            self._data_source,
            self._data_source.shuffle,
            slice_start=slice_start,
            slice_end=slice_end,
        )
        if use_cache:
            if cache_dir is not None:
                raise NotImplementedError(
                    f"DataIterator.slice: cache_dir (a file cache) is not supported ({DOCS})"
                )
            return DataIterator(
                DataSourceWithMemoryCache(sliced, shuffle=self._shuffle, rng=rng),
                self._batch_size,
            )
        return DataIterator(sliced, self._batch_size)

    def _callback_epoch_end(self) -> None:
        for callback in self._epoch_end_callbacks:
            callback(self.epoch)

    def _callback_epoch_begin(self) -> None:
        for callback in self._epoch_begin_callbacks:
            callback(self.epoch)

    def register_epoch_end_callback(self, callback: Callback) -> None:
        """Call ``callback(epoch)`` at the end of each epoch (with the epoch that ended)."""
        self._epoch_end_callbacks.append(callback)

    def register_epoch_begin_callback(self, callback: Callback) -> None:
        """Call ``callback(epoch)`` at the beginning of each epoch after the first."""
        self._epoch_begin_callbacks.append(callback)


def _no_file_cache(where: str, with_file_cache: bool) -> None:
    if with_file_cache:
        raise NotImplementedError(
            f"nnabla.utils.data_iterator.{where}: with_file_cache=True (cache files on disk) is "
            f"not supported ({DOCS}); use with_memory_cache=True"
        )


def data_iterator(
    data_source: DataSource,
    batch_size: int,
    rng: numpy.random.RandomState | None = None,
    use_thread: bool = True,
    with_memory_cache: bool = True,
    with_file_cache: bool = False,
    cache_dir: str | None = None,
    epoch_begin_callbacks: Iterable[Callback] = (),
    epoch_end_callbacks: Iterable[Callback] = (),
    stop_exhausted: bool = False,
) -> DataIterator:
    """A :class:`DataIterator` over ``data_source`` (nnabla's ``data_iterator``).

    ``with_memory_cache`` (the default) wraps the source in a
    :class:`~gradhub_compat.nnabla.utils.data_source.DataSourceWithMemoryCache` shuffled with
    ``rng`` (313 when None) when the source shuffles; ``with_file_cache=True`` raises
    ``NotImplementedError``; ``cache_dir`` is then unused.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat.nnabla.utils.data_source import DataSource
        >>> from gradhub_compat.nnabla.utils.data_iterator import data_iterator
        >>> class Range(DataSource):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self._size, self._variables = 3, ("x",)
        ...     def _get_data(self, position):
        ...         return (np.float32(position),)
        >>> data_iterator(Range(), 2, with_memory_cache=False).next()[0].tolist()
        [0.0, 1.0]
    """
    _no_file_cache("data_iterator", with_file_cache)
    if with_memory_cache:
        data_source = DataSourceWithMemoryCache(data_source, shuffle=data_source.shuffle, rng=rng)
    return DataIterator(
        data_source,
        batch_size,
        use_thread=use_thread,
        epoch_begin_callbacks=epoch_begin_callbacks,
        epoch_end_callbacks=epoch_end_callbacks,
        stop_exhausted=stop_exhausted,
    )


def _source_iterator(
    data_source: DataSource,
    batch_size: int,
    use_thread: bool,
    with_memory_cache: bool,
    epoch_begin_callbacks: Iterable[Callback],
    epoch_end_callbacks: Iterable[Callback],
    stop_exhausted: bool,
) -> DataIterator:
    """:func:`data_iterator` over ``data_source``, for the iterators that build their source
    (which check ``with_file_cache`` themselves; ``cache_dir`` is unused)."""
    return data_iterator(
        data_source,
        use_thread=use_thread,
        batch_size=batch_size,
        with_memory_cache=with_memory_cache,
        epoch_begin_callbacks=epoch_begin_callbacks,
        epoch_end_callbacks=epoch_end_callbacks,
        stop_exhausted=stop_exhausted,
    )


def data_iterator_simple(
    load_func: Callable[[int], Any],
    num_examples: int,
    batch_size: int,
    shuffle: bool = False,
    rng: numpy.random.RandomState | None = None,
    use_thread: bool = True,
    with_memory_cache: bool = False,
    with_file_cache: bool = False,
    cache_dir: str | None = None,
    epoch_begin_callbacks: Iterable[Callback] = (),
    epoch_end_callbacks: Iterable[Callback] = (),
    stop_exhausted: bool = False,
) -> DataIterator:
    """Batches of ``load_func(i)`` for ``i`` in ``range(num_examples)`` (nnabla's
    ``data_iterator_simple``).

    ``load_func(i)`` returns a tuple of arrays (the same shapes for every ``i``); a batch is
    ``numpy.array`` of ``batch_size`` of them per entry. With ``shuffle`` each epoch reads the
    examples in ``rng.permutation(num_examples)`` (a new one per epoch, drawn after the batch
    that ran past the end of the previous one; 313 seeds ``rng`` when None). As in nnabla,
    ``rng`` shuffles the source, while a ``with_memory_cache=True`` cache shuffles its later
    epochs with its own generator seeded 313.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat.nnabla.utils.data_iterator import data_iterator_simple
        >>> di = data_iterator_simple(lambda i: (np.float32(i),), 3, batch_size=2)
        >>> di.next()[0].tolist(), di.next()[0].tolist(), di.epoch
        ([0.0, 1.0], [2.0, 0.0], 1)
    """
    _no_file_cache("data_iterator_simple", with_file_cache)
    batch_size = _check_batch_size("data_iterator_simple", batch_size)
    return _source_iterator(
        SimpleDataSource(load_func, num_examples, shuffle=shuffle, rng=rng),
        batch_size,
        use_thread,
        with_memory_cache,
        epoch_begin_callbacks,
        epoch_end_callbacks,
        stop_exhausted,
    )


def data_iterator_concat_datasets(
    data_source_list: list[DataSource],
    batch_size: int,
    shuffle: bool = False,
    rng: numpy.random.RandomState | None = None,
    use_thread: bool = True,
    with_memory_cache: bool = True,
    with_file_cache: bool = False,
    cache_dir: str | None = None,
    epoch_begin_callbacks: Iterable[Callback] = (),
    epoch_end_callbacks: Iterable[Callback] = (),
    stop_exhausted: bool = False,
) -> DataIterator:
    """Batches from several data sources one after the other (nnabla's
    ``data_iterator_concat_datasets``; with ``shuffle``, a permutation of all of them per epoch
    drawn from ``rng``)."""
    _no_file_cache("data_iterator_concat_datasets", with_file_cache)
    ds = ConcatDataSource(data_source_list, shuffle=shuffle, rng=rng)
    return _source_iterator(
        ds,
        batch_size,
        use_thread,
        with_memory_cache,
        epoch_begin_callbacks,
        epoch_end_callbacks,
        stop_exhausted,
    )


def data_iterator_csv_dataset(
    uri: str,
    batch_size: int,
    shuffle: bool = False,
    rng: numpy.random.RandomState | None = None,
    use_thread: bool = True,
    normalize: bool = True,
    with_memory_cache: bool = True,
    with_file_cache: bool = False,
    cache_dir: str | None = None,
    epoch_begin_callbacks: Iterable[Callback] = (),
    epoch_end_callbacks: Iterable[Callback] = (),
    stop_exhausted: bool = False,
) -> DataIterator:
    """Batches of the examples of a dataset CSV file (nnabla's ``data_iterator_csv_dataset``).

    ``uri`` is a local CSV file in nnabla's layout (see
    :class:`~gradhub_compat.nnabla.utils.data_source_implements.CsvDataSource`: a header
    ``x:image,y:label``, then rows of numbers or of file names relative to the CSV file);
    ``normalize`` divides uint8 image values by 255. ``shuffle`` draws the source's orders from
    ``rng`` (313 when None); ``with_memory_cache`` (the default) keeps the examples read in
    the first epoch, its later orders drawn from its own generator seeded 313 (nnabla passes
    the iterator no ``rng``). nnabla's default ``with_file_cache=True`` writes the examples to
    cache files first; here the default is False and True raises ``NotImplementedError``. When
    the examples fit the memory cache, nnabla's batches with and without the file cache are the
    same (the memory cache serves them); without the memory cache they differ.

    Example::

        >>> import os, tempfile
        >>> from gradhub_compat.nnabla.utils.data_iterator import data_iterator_csv_dataset
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "train.csv")
        >>> with open(path, "w") as f:
        ...     _ = f.write("x__0,x__1,y\\n" + "".join(f"{i},{2 * i},{i % 2}\\n" for i in range(5)))
        >>> di = data_iterator_csv_dataset(path, 2)
        >>> x, y = di.next()
        >>> di.variables, x.tolist(), y.tolist()
        (('x', 'y'), [[0.0, 0.0], [1.0, 2.0]], [[0.0], [1.0]])
        >>> tmp.cleanup()
    """
    _no_file_cache("data_iterator_csv_dataset", with_file_cache)
    batch_size = _check_batch_size("data_iterator_csv_dataset", batch_size)
    ds = CsvDataSource(uri, shuffle=shuffle, rng=rng, normalize=normalize)
    return _source_iterator(
        ds,
        batch_size,
        use_thread,
        with_memory_cache,
        epoch_begin_callbacks,
        epoch_end_callbacks,
        stop_exhausted,
    )


def data_iterator_cache(uri: str, batch_size: int, *args: Any, **kwargs: Any) -> DataIterator:
    """nnabla's iterator over a folder of cache files (``.npy`` read with pickling allowed, or
    ``.h5``): not supported; raises ``NotImplementedError``."""
    raise NotImplementedError(
        f"nnabla.utils.data_iterator.data_iterator_cache: cache folders are not supported "
        f"({DOCS}); load the examples in a load_func and use data_iterator_simple"
    )
