"""mxnet Gluon's datasets (``gluon.data.dataset``), as mxnet 1.9.1: a dataset has
``__getitem__`` and ``__len__``; :class:`Dataset` adds ``transform``, ``transform_first``,
``filter``, ``shard``, ``take`` and ``sample``.

Example::

    >>> from gradhub_compat.mxnet import gluon
    >>> ds = gluon.data.ArrayDataset([1, 2, 3, 4], [10, 20, 30, 40])
    >>> ds.transform_first(lambda x: x * 2)[1]
    (4, 20)
    >>> len(ds.filter(lambda s: s[0] % 2 == 0)), ds.shard(3, 0)[1]
    (2, (2, 20))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...ndarray import NDArray

__all__ = ["ArrayDataset", "Dataset", "RecordFileDataset", "SimpleDataset"]

_DOCS = "docs/migration-mxnet.md"


class Dataset:
    """Base class of the datasets: subclasses define ``__getitem__`` (the ``idx``-th sample)
    and ``__len__``. An NDArray, a numpy array or a list can be used as a dataset too."""

    def __getitem__(self, idx: Any) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def filter(self, fn: Callable[[Any], Any]) -> Dataset:
        """The samples for which ``fn(sample)`` is true (``fn`` runs on every sample now; a
        lazily transformed dataset is transformed again when a sample is read)."""
        from .sampler import FilterSampler

        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards: int, index: int) -> Dataset:
        """The ``index``-th of ``num_shards`` contiguous parts: ``len // num_shards`` samples,
        one more for the first ``len % num_shards`` parts (as mxnet)."""
        if not index < num_shards:
            raise AssertionError(
                f"Dataset.shard: Shard index of out bound: {index} out of {num_shards}"
            )
        if not num_shards > 0:
            raise AssertionError("Dataset.shard: Number of shards must be greater than 0")
        if not index >= 0:
            raise AssertionError("Dataset.shard: Index must be non-negative")
        from .sampler import SequentialSampler

        length = len(self)
        shard_len, rest = divmod(length, num_shards)
        start = shard_len * index + min(index, rest)
        end = start + shard_len + (index < rest)
        return _SampledDataset(self, SequentialSampler(end - start, start))

    def take(self, count: int | None) -> Dataset:
        """The first ``count`` samples (all of them for ``None`` or a larger count)."""
        if count is None or count > len(self):
            count = len(self)
        from .sampler import SequentialSampler

        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler: Any) -> Dataset:
        """The samples at the indices ``sampler`` gives (a ``gluon.data.Sampler``, else
        ``TypeError``, as mxnet)."""
        from .sampler import Sampler

        if not isinstance(sampler, Sampler):
            raise TypeError(
                f"Dataset.sample: Invalid sampler type: {type(sampler)}. Expected "
                "gluon.data.Sampler instead."
            )
        return _SampledDataset(self, sampler)

    def transform(self, fn: Callable[..., Any], lazy: bool = True) -> Dataset:
        """Each sample through ``fn`` (``fn(*sample)`` for a tuple sample); ``lazy=False``
        transforms every sample now into a :class:`SimpleDataset`."""
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([trans[i] for i in range(len(trans))])

    def transform_first(self, fn: Callable[[Any], Any], lazy: bool = True) -> Dataset:
        """Only the first element of each sample through ``fn`` (the others unchanged)."""
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset of any object with ``len()`` and ``[]`` (a list, an array)."""

    def __init__(self, data: Any) -> None:
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: Any) -> Any:
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data: Any, fn: Callable[..., Any]) -> None:
        self._data = data
        self._fn = fn

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: Any) -> Any:
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self._fn = fn

    def __call__(self, x: Any, *args: Any) -> Any:
        if args:
            return (self._fn(x), *args)
        return self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset: Any, sampler: Any) -> None:
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self) -> int:
        return len(self._sampler)

    def __getitem__(self, idx: Any) -> Any:
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """The samples ``(a1[i], a2[i], ...)`` of datasets, lists or arrays of one length
    (``a1[i]`` itself for one argument). A one-dimensional NDArray is converted to numpy
    first (its samples are numpy scalars, as mxnet); arrays of different lengths raise
    ``AssertionError``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> from gradhub_compat.mxnet import gluon
        >>> ds = gluon.data.ArrayDataset(mx.nd.ones((3, 2)), mx.nd.array([0, 1, 2]))
        >>> x, y = ds[2]
        >>> x.shape, y
        ((2,), np.float32(2.0))
    """

    def __init__(self, *args: Any) -> None:
        if not args:
            raise AssertionError("gluon.data.ArrayDataset: Needs at least 1 arrays")
        self._length = len(args[0])
        self._data: list[Any] = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise AssertionError(
                    "gluon.data.ArrayDataset: All arrays must have the same length; array[0] "
                    f"has length {self._length} while array[{i + 1}] has {len(data)}."
                )
            if isinstance(data, NDArray) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx: Any) -> Any:
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self) -> int:
        return self._length


class RecordFileDataset(Dataset):
    """Not supported: mxnet's RecordIO files (``.rec``/``.idx``) are not read by
    gradhub_compat.mxnet; raises ``NotImplementedError``."""

    def __init__(self, filename: str) -> None:
        raise NotImplementedError(
            "gluon.data.RecordFileDataset: RecordIO files are not supported by "
            f"gradhub_compat.mxnet ({_DOCS}, section Gluon data and recurrent layers)"
        )
