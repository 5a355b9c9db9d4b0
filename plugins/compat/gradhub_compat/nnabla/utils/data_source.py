"""nnabla's data sources: ``from gradhub_compat.nnabla.utils.data_source import DataSource``.

A data source hands out one example at a time to a
:class:`~gradhub_compat.nnabla.utils.data_iterator.DataIterator`. Subclass :class:`DataSource`
as with nnabla: set ``self._size`` and ``self._variables`` (the names of the parts of an
example), define ``_get_data(position)`` (the example at that position of the current order,
a tuple with one entry per variable) and ``reset()`` (a new order, then ``super().reset()``);
``self._shuffle`` and ``self._rng`` (``numpy.random.RandomState(313)`` unless given) come from
the constructor.

The classes follow nnabla 1.39's, step for step, so that the same calls draw the same orders
from the same generators: :class:`SimpleDataSource` (``load_func(i)``; a new order per epoch
from its ``rng``), :class:`DataSourceWithMemoryCache` (keeps the examples read in the first
epoch, then serves them in its own orders), :class:`SlicedDataSource` and
:class:`ConcatDataSource`. :class:`DataSourceWithFileCache` (cache files on disk) raises
``NotImplementedError`` (see docs/migration-nnabla.md, 'Monitors and data iterators').

Example::

    >>> import numpy as np
    >>> from gradhub_compat.nnabla.utils.data_source import DataSource
    >>> from gradhub_compat.nnabla.utils.data_iterator import data_iterator
    >>> class Squares(DataSource):
    ...     def __init__(self, shuffle=False, rng=None):
    ...         super().__init__(shuffle=shuffle, rng=rng)
    ...         self._size = 4
    ...         self._variables = ("x", "y")
    ...         self.reset()
    ...     def _get_data(self, position):
    ...         i = self._indexes[position]
    ...         return np.float32(i), np.float32(i * i)
    ...     def reset(self):
    ...         self._indexes = np.arange(self._size)
    ...         super().reset()
    >>> x, y = data_iterator(Squares(), batch_size=3).next()
    >>> y.tolist()
    [0.0, 1.0, 4.0]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from ..config import nnabla_config
from ..logger import logger

__all__ = [
    "ConcatDataSource",
    "DataSource",
    "DataSourceWithFileCache",
    "DataSourceWithFileCacheError",
    "DataSourceWithMemoryCache",
    "SimpleDataSource",
    "SlicedDataSource",
]

DOCS = "see docs/migration-nnabla.md, 'Monitors and data iterators'"
#: nnabla 1.39's default ``[DATA_ITERATOR] data_source_buffer_max_size`` (1 GiB): the memory
#: cache keeps the examples only when all of them take fewer bytes (read from
#: :data:`gradhub_compat.nnabla.config.nnabla_config` when a cache is built).
BUFFER_MAX_SIZE = 1073741824


class DataSource:
    """The base of the data sources (nnabla's ``DataSource(shuffle=False, rng=None)``).

    ``next()`` returns ``_get_data(position)`` and advances ``position``; ``reset()`` sets it
    back to 0 (a subclass draws its new order first); ``apply_order()`` is called by the
    iterator after a batch in which an epoch ended (nothing here). ``size``, ``variables``,
    ``position``, ``shuffle`` (settable) and ``order`` are read-only views of the attributes
    ``_size``, ``_variables``, ``_position``, ``_shuffle`` and ``_order``.
    """

    def __init__(self, shuffle: bool = False, rng: numpy.random.RandomState | None = None) -> None:
        logger.info(f"DataSource with shuffle({shuffle})")
        if rng is not None and not hasattr(rng, "permutation"):
            raise TypeError(
                f"{type(self).__name__}: rng must be a numpy.random.RandomState or None, got "
                f"{type(rng).__name__}"
            )
        self._rng = rng if rng is not None else numpy.random.RandomState(313)
        self._variables: Any = None
        self._generation = -1
        self._shuffle = shuffle
        self._position = 0
        self._size = 0
        self._closed = False
        self._order: Any = None
        self._original_order: Any = None
        self._original_source_uri: Any = None

    def _get_data(self, position: int) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__}._get_data: a DataSource subclass must define "
            "_get_data(position), returning the example at that position"
        )

    def _get_data_of_generation(self, position: int, generation: int) -> Any:
        return self._get_data(position)

    def _generate_order(self, generation: int) -> None:
        pass

    def __next__(self) -> Any:
        return self.next()

    def __enter__(self) -> DataSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Mark the source closed (a second call does nothing)."""
        self._closed = True

    @property
    def order(self) -> Any:
        """The current order of the examples, where the source keeps one (else None)."""
        return self._order

    @property
    def variables(self) -> Any:
        """The names of the parts of an example (``("x", "y")``)."""
        return self._variables

    def next(self) -> Any:
        """The example at ``position``, then ``position += 1``."""
        data = self._get_data(self._position)
        self._position += 1
        return data

    @property
    def position(self) -> int:
        """The position in the current epoch."""
        return self._position

    @property
    def size(self) -> int:
        """The number of examples."""
        return self._size

    @property
    def shuffle(self) -> bool:
        """Whether each epoch draws a new order."""
        return self._shuffle

    @shuffle.setter
    def shuffle(self, value: bool) -> None:
        self._shuffle = value

    def reset(self) -> None:
        """Start the epoch again: ``position = 0``."""
        self._position = 0

    def apply_order(self) -> None:
        """Called after a batch in which an epoch ended; a subclass draws its new order here."""


class SimpleDataSource(DataSource):
    """Examples from ``load_func(i)`` (a tuple of arrays per index ``i``), nnabla's source of
    ``data_iterator_simple``; the variables are named ``x0``, ``x1``... (``load_func(0)`` is
    called once by the constructor to count them).

    Each generation (epoch) has its own order: ``rng.permutation(num_examples)`` when
    ``shuffle``, else ``0, 1, ...``; ``apply_order()`` moves to the next generation, so the
    examples after the end of an epoch in the same batch still come from the old order (from
    its start), as nnabla's.
    """

    def __init__(
        self,
        load_func: Callable[[int], Any],
        num_examples: int,
        shuffle: bool = False,
        rng: numpy.random.RandomState | None = None,
    ) -> None:
        if not callable(load_func):
            raise TypeError(
                f"data_iterator_simple: load_func must be callable, got {type(load_func).__name__}"
            )
        if isinstance(num_examples, bool) or not isinstance(num_examples, (int, numpy.integer)):
            raise TypeError(
                f"data_iterator_simple: num_examples must be an int, got {num_examples!r}"
            )
        if num_examples < 1:
            raise ValueError(
                f"data_iterator_simple: num_examples must be positive, got {num_examples}"
            )
        super().__init__(shuffle=shuffle, rng=rng)
        self._load_func = load_func
        self._size = int(num_examples)
        self._generation = 0
        self._variables = ["x" + str(x) for x in range(len(self._load_func(0)))]
        self._orders: deque[tuple[int, Any]] = deque(maxlen=15)  # (generation, order)
        self.reset()
        self._generate_order(0)

    def _get_data(self, position: int) -> Any:
        return self._get_data_of_generation(position, self._generation)

    def _get_data_of_generation(self, position: int, generation: int) -> Any:
        for gen, order in self._orders:
            if gen == generation:
                return self._load_func(order[position])
        raise ValueError(
            "SimpleDataSource: its client is not synchronized (no order for this epoch)"
        )

    def apply_order(self) -> None:
        """Move to the next generation (drawing its order)."""
        self._generation += 1
        self._generate_order(self._generation)

    def _generate_order(self, generation: int) -> None:
        if any(gen == generation for gen, _ in self._orders):
            return
        order = self._rng.permutation(self._size) if self._shuffle else numpy.arange(self._size)
        self._orders.append((generation, order))


class DataSourceWithMemoryCache(DataSource):
    """Keeps the examples of another source in memory (nnabla's, ``data_iterator``'s default).

    When all examples take fewer bytes than ``[DATA_ITERATOR] data_source_buffer_max_size``
    of :data:`~gradhub_compat.nnabla.config.nnabla_config` (1 GiB unless set; measured on the
    first one, read when the cache is built), the examples are kept in the order the first
    epoch reads them; the second epoch serves them in that order again
    and each later one in ``rng.permutation`` (when ``shuffle``) of it, without asking the
    wrapped source; ``apply_order()`` does not reach the wrapped source. Larger data is read
    through.
    """

    def __init__(
        self,
        data_source: DataSource,
        shuffle: bool = False,
        rng: numpy.random.RandomState | None = None,
    ) -> None:
        logger.info("Using DataSourceWithMemoryCache")
        super().__init__(shuffle=shuffle, rng=rng)
        self._buffer_max_size = int(
            nnabla_config.get("DATA_ITERATOR", "data_source_buffer_max_size")
        )
        self._size = data_source._size
        self._variables = data_source.variables
        self._data_source = data_source
        self._order = list(range(self._size))
        self._on_memory = False
        self._cache: list[Any] = []
        data = self._get_data_func(0)
        self._data_size = 0
        for d in data:
            arr = numpy.array(d, dtype=numpy.float32) if isinstance(d, list) else numpy.asarray(d)
            self._data_size += arr.size * arr.itemsize
        if self._data_size * self._size < self._buffer_max_size:
            logger.info("On-memory")
            self._on_memory = True
        self._generation = -1

    def _get_data_func(self, position: int) -> Any:
        return self._data_source._get_data(position)

    def _get_data(self, position: int) -> Any:
        if self._on_memory:
            if self._order[position] < len(self._cache):
                data = self._cache[self._order[position]]
            else:
                data = self._get_data_func(position)
                self._cache.append(data)
        else:
            data = self._data_source._get_data(position)
        self._position = position
        return data

    def close(self) -> None:
        """Close this source and the wrapped one."""
        if not self._closed:
            self._data_source.close()
            self._closed = True

    def reset(self) -> None:
        """Draw the next epoch's order (see the class) and start it."""
        if self._on_memory:
            self._generation += 1
            if self._shuffle and self._generation > 0:
                self._order = list(self._rng.permutation(self._size))
            else:
                self._order = list(range(self._size))
            if self._position == 0:
                self._generation = -1
            else:
                self._data_source._position = self._position
                self._data_source.reset()
        else:
            self._data_source.reset()
            self._generation = self._data_source._generation
            self._position = self._data_source._position
        super().reset()


class SlicedDataSource(DataSource):
    """The examples ``slice_start`` to ``slice_end`` (excluded) of another source, in that
    source's order of the same generation (what ``DataIterator.slice`` builds)."""

    def __init__(
        self,
        data_source: DataSource,
        shuffle: bool = False,
        rng: numpy.random.RandomState | None = None,
        slice_start: int | None = None,
        slice_end: int | None = None,
    ) -> None:
        logger.info("Using SlicedDataSource")
        super().__init__(shuffle=shuffle, rng=rng)
        if slice_start is None or slice_end is None:
            raise ValueError("SlicedDataSource: give slice_start and slice_end")
        self._data_source = data_source
        self._variables = data_source._variables[:]
        self._slice_start = slice_start
        self._slice_end = slice_end
        self._size = self._slice_end - self._slice_start
        self._generation = 0

    def apply_order(self) -> None:
        """Move to the next generation of the sliced source's orders."""
        self._generation += 1
        self._data_source._generate_order(self._generation)

    def reset(self) -> None:
        """Start again at the slice's first example."""
        self._data_source.reset()
        self._data_source._position = self._slice_start
        self._position = 0

    def _get_data(self, position: int) -> Any:
        self._position = position
        return self._data_source._get_data_of_generation(
            self._slice_start + position, self._generation
        )


class ConcatDataSource(DataSource):
    """The examples of several sources one after the other (nnabla's; ``shuffle``: a new
    ``rng.permutation`` of all of them at each reset)."""

    def __init__(
        self,
        data_source_list: Sequence[DataSource],
        shuffle: bool = True,
        rng: numpy.random.RandomState | None = None,
    ) -> None:
        super().__init__(shuffle=shuffle, rng=rng)
        sources = list(data_source_list)
        if not sources:
            raise ValueError("data_iterator_concat_datasets: data_source_list is empty")
        self._data_sources = sources
        self._sw_points = list(numpy.cumsum([s.size for s in sources]).tolist())
        self._size = self._sw_points[-1]
        self._variables = sources[0].variables
        self.reset()

    def _get_data(self, position: int) -> Any:
        idx = self._indexes[position]
        for i, data_bound in enumerate(self._sw_points):
            if idx < data_bound:
                _idx = idx - self._sw_points[i - 1] if i > 0 else idx
                return self._data_sources[i]._get_data(_idx)
        return None

    def reset(self) -> None:
        """Draw the order of the next epoch and start it."""
        if self._shuffle:
            self._indexes = self._rng.permutation(self._size)
        else:
            self._indexes = numpy.arange(self._size)
        super().reset()


class DataSourceWithFileCacheError(Exception):
    """nnabla's error of the file cache (kept for ``except`` clauses)."""


class DataSourceWithFileCache(DataSource):
    """nnabla's file cache (examples written to ``.npy``/``.h5`` files and read back): not
    supported; the constructor raises ``NotImplementedError``."""

    def __init__(
        self, data_source: DataSource, cache_dir: str | None = None, *args: Any, **kwargs: Any
    ) -> None:
        raise NotImplementedError(
            "nnabla.utils.data_source.DataSourceWithFileCache: file caches are not supported "
            f"({DOCS}); use the memory cache (with_memory_cache=True)"
        )
