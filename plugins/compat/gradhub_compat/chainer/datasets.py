"""chainer's ``chainer.datasets`` (chainer 7.8.1 ``chainer/datasets/``): the dataset wrappers
:class:`TupleDataset`, :class:`DictDataset`, :class:`SubDataset` (:func:`split_dataset`,
:func:`split_dataset_random`, :func:`split_dataset_n`, :func:`split_dataset_n_random`,
:func:`get_cross_validation_datasets`, :func:`get_cross_validation_datasets_random`),
:class:`TransformDataset` and :class:`ConcatenatedDataset`.

gradhub downloads nothing: :func:`get_mnist`, :func:`get_fashion_mnist`, :func:`get_cifar10`,
:func:`get_cifar100`, :func:`get_ptb_words` and :func:`get_ptb_words_vocabulary` (a text file)
load chainer's dataset cache (``$CHAINER_DATASET_ROOT``, default
``~/.chainer/dataset``) when an earlier chainer run left its npz files there (read with
``numpy.load(allow_pickle=False)``), and raise NotImplementedError naming the page otherwise;
the other downloaders always raise it.

Example::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> ds = chainer.datasets.TupleDataset(np.arange(4), np.arange(4) * 10)
    >>> ds[1], ds[2:4]
    ((np.int64(1), np.int64(10)), [(np.int64(2), np.int64(20)), (np.int64(3), np.int64(30))])
    >>> train, test = chainer.datasets.split_dataset(ds, 3)
    >>> len(train), test[0]
    (3, (np.int64(3), np.int64(30)))
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from ._device import PAGE
from .dataset.dataset_mixin import DatasetMixin

__all__ = [
    "ConcatenatedDataset",
    "DictDataset",
    "SubDataset",
    "TransformDataset",
    "TupleDataset",
    "get_cifar10",
    "get_cifar100",
    "get_cross_validation_datasets",
    "get_cross_validation_datasets_random",
    "get_fashion_mnist",
    "get_mnist",
    "get_ptb_words",
    "get_ptb_words_vocabulary",
    "split_dataset",
    "split_dataset_n",
    "split_dataset_n_random",
    "split_dataset_random",
]


class TupleDataset:
    """``TupleDataset(*datasets)``: example ``i`` is ``(d[i] for d in datasets)`` as a tuple; a
    slice gives a list of tuples. The datasets must have the same length (ValueError)."""

    def __init__(self, *datasets: Any) -> None:
        if not datasets:
            raise ValueError("no datasets are given")
        length = len(datasets[0])
        for i, dataset in enumerate(datasets):
            if len(dataset) != length:
                raise ValueError(f"dataset of the index {i} has a wrong length")
        self._datasets = datasets
        self._length = length

    def __getitem__(self, index: Any) -> Any:
        batches = [dataset[index] for dataset in self._datasets]
        if isinstance(index, slice):
            length = len(batches[0])
            return [tuple(batch[i] for batch in batches) for i in range(length)]
        return tuple(batches)

    def __len__(self) -> int:
        return self._length


class DictDataset:
    """``DictDataset(**datasets)``: example ``i`` is ``{key: d[i]}``; a slice gives a list of
    dicts. The datasets must have the same length (ValueError)."""

    def __init__(self, **datasets: Any) -> None:
        if not datasets:
            raise ValueError("no datasets are given")
        length = None
        for key, dataset in datasets.items():
            if length is None:
                length = len(dataset)
            elif length != len(dataset):
                raise ValueError(f'dataset length conflicts at "{key}"')
        self._datasets = datasets
        self._length = length

    def __getitem__(self, index: Any) -> Any:
        batches = {key: dataset[index] for key, dataset in self._datasets.items()}
        if isinstance(index, slice):
            length = len(next(iter(batches.values())))
            return [{key: batch[i] for key, batch in batches.items()} for i in range(length)]
        return batches

    def __len__(self) -> int:
        return self._length  # type: ignore[return-value]


class SubDataset(DatasetMixin):
    """``SubDataset(dataset, start, finish, order=None)``: the examples ``start`` to
    ``finish - 1`` of ``dataset`` (taken through ``order``, a permutation of its indices, when
    given); negative indices count from ``finish``."""

    def __init__(self, dataset: Any, start: int, finish: int, order: Any = None) -> None:
        if start < 0 or finish > len(dataset):
            raise ValueError("subset overruns the base dataset.")
        self._dataset = dataset
        self._start = start
        self._finish = finish
        self._size = finish - start
        if order is not None and len(order) != len(dataset):
            raise ValueError(
                "order option must have the same length as the base dataset: "
                f"len(order) = {len(order)} while len(dataset) = {len(dataset)}"
            )
        self._order = order

    def __len__(self) -> int:
        return self._size

    def get_example(self, i: int) -> Any:
        """Example ``i`` of the subset."""
        if i >= 0:
            if i >= self._size:
                raise IndexError("dataset index out of range")
            index = self._start + i
        else:
            if i < -self._size:
                raise IndexError("dataset index out of range")
            index = self._finish + i
        if self._order is not None:
            index = self._order[index]
        return self._dataset[index]


def split_dataset(dataset: Any, split_at: int, order: Any = None) -> tuple[SubDataset, SubDataset]:
    """The two subsets ``[0, split_at)`` and ``[split_at, len)`` (through ``order``)."""
    n_examples = len(dataset)
    if isinstance(split_at, bool) or not isinstance(split_at, (int, np.integer)):
        raise TypeError(f"split_at must be int, got {type(split_at)} instead")
    if split_at < 0:
        raise ValueError("split_at must be non-negative")
    if split_at > n_examples:
        raise ValueError("split_at exceeds the dataset size")
    return (
        SubDataset(dataset, 0, split_at, order),
        SubDataset(dataset, split_at, n_examples, order),
    )


def split_dataset_random(
    dataset: Any, first_size: int, seed: int | None = None
) -> tuple[SubDataset, SubDataset]:
    """:func:`split_dataset` through ``numpy.random.RandomState(seed).permutation(len)``, as
    chainer (the same seed gives chainer's subsets)."""
    order = np.random.RandomState(seed).permutation(len(dataset))
    return split_dataset(dataset, first_size, order)


def split_dataset_n(dataset: Any, n: int, order: Any = None) -> list[SubDataset]:
    """``n`` subsets of ``len(dataset) // n`` examples each (the rest is left out)."""
    sub_size = len(dataset) // n
    return [SubDataset(dataset, sub_size * i, sub_size * (i + 1), order) for i in range(n)]


def split_dataset_n_random(dataset: Any, n: int, seed: int | None = None) -> list[SubDataset]:
    """:func:`split_dataset_n` through ``numpy.random.RandomState(seed).permutation(len)``."""
    sub_size = len(dataset) // n
    order = np.random.RandomState(seed).permutation(len(dataset))
    return [SubDataset(dataset, sub_size * i, sub_size * (i + 1), order) for i in range(n)]


def _n_folds(n_folds: int | None, kwargs: dict[str, Any]) -> int | None:
    """``n_folds``, or the deprecated ``n_fold=`` of ``kwargs`` (with chainer's
    DeprecationWarning, pointed at the caller of the public function)."""
    if "n_fold" in kwargs:
        warnings.warn(
            "Argument `n_fold` is deprecated. Please use `n_folds` instead",
            DeprecationWarning,
            stacklevel=3,
        )
        return kwargs["n_fold"]  # type: ignore[no-any-return]
    return n_folds


def get_cross_validation_datasets(
    dataset: Any, n_folds: int | None = None, order: Any = None, **kwargs: Any
) -> list[tuple[SubDataset, SubDataset]]:
    """chainer's ``n_folds`` splits ``(train, test)`` for cross validation: the test parts
    (sizes ``len * (i + 1) // n_folds - len * i // n_folds``, the last fold's first) do not
    overlap and together cover ``dataset``; ``order`` (a permutation of the indices, default
    none) is rotated by each test size, as chainer 7.8.1 (``n_fold=`` is its deprecated name).

    Example::

        >>> from gradhub_compat import chainer
        >>> (tr, te), *_ = chainer.datasets.get_cross_validation_datasets([1, 2, 3, 4], 2)
        >>> list(tr), list(te)
        ([1, 2], [3, 4])
    """
    n_folds = _n_folds(n_folds, kwargs)
    if n_folds is None:
        raise TypeError("chainer get_cross_validation_datasets: n_folds is required")
    order = np.arange(len(dataset)) if order is None else np.array(order)  # a copy
    whole_size = len(dataset)
    borders = [whole_size * i // n_folds for i in range(n_folds + 1)]
    test_sizes = [borders[i + 1] - borders[i] for i in range(n_folds)]
    splits = []
    for test_size in reversed(test_sizes):
        splits.append(split_dataset(dataset, whole_size - test_size, order))
        new_order = np.empty_like(order)
        new_order[:test_size] = order[-test_size:]
        new_order[test_size:] = order[:-test_size]
        order = new_order
    return splits


def get_cross_validation_datasets_random(
    dataset: Any, n_folds: int | None = None, seed: int | None = None, **kwargs: Any
) -> list[tuple[SubDataset, SubDataset]]:
    """:func:`get_cross_validation_datasets` through
    ``numpy.random.RandomState(seed).permutation(len)``, as chainer 7.8.1."""
    n_folds = _n_folds(n_folds, kwargs)
    order = np.random.RandomState(seed).permutation(len(dataset))
    return get_cross_validation_datasets(dataset, n_folds, order)


class TransformDataset(DatasetMixin):
    """``TransformDataset(dataset, transform)``: example ``i`` is ``transform(dataset[i])``."""

    def __init__(self, dataset: Any, transform: Any) -> None:
        self._dataset = dataset
        self._transform = transform

    def __len__(self) -> int:
        return len(self._dataset)

    def get_example(self, i: int) -> Any:
        """``transform(dataset[i])``."""
        return self._transform(self._dataset[i])


class ConcatenatedDataset(DatasetMixin):
    """``ConcatenatedDataset(*datasets)``: the datasets one after the other (a negative index
    raises IndexError, as chainer)."""

    def __init__(self, *datasets: Any) -> None:
        self._datasets = datasets

    def __len__(self) -> int:
        return sum(len(dataset) for dataset in self._datasets)

    def get_example(self, i: int) -> Any:
        """Example ``i`` of the concatenation."""
        if i < 0:
            raise IndexError
        for dataset in self._datasets:
            if i < len(dataset):
                return dataset[i]
            i -= len(dataset)
        raise IndexError


def _dataset_root() -> str:
    return os.environ.get(
        "CHAINER_DATASET_ROOT", os.path.join(os.path.expanduser("~"), ".chainer", "dataset")
    )


def _load_cached(name: str, directory: str, files: tuple[str, ...]) -> list[dict[str, np.ndarray]]:
    root = os.path.join(_dataset_root(), directory)
    paths = [os.path.join(root, f) for f in files]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise NotImplementedError(
            f"chainer.datasets.{name}: gradhub downloads nothing and chainer's dataset cache has "
            f"no {', '.join(missing)} (run chainer's {name} once, or set CHAINER_DATASET_ROOT); "
            f"see {PAGE}"
        )
    loaded = []
    for p in paths:
        with np.load(p, allow_pickle=False) as z:
            loaded.append({k: z[k] for k in z.files})
    return loaded


def _preprocess_mnist(
    raw: dict[str, np.ndarray],
    withlabel: bool,
    ndim: int,
    scale: float,
    image_dtype: Any,
    label_dtype: Any,
    rgb_format: bool,
) -> Any:
    images = raw["x"]
    if ndim == 2:
        images = images.reshape(-1, 28, 28)
    elif ndim == 3:
        images = images.reshape(-1, 1, 28, 28)
        if rgb_format:
            images = np.broadcast_to(images, (len(images), 3) + images.shape[2:])
    elif ndim != 1:
        raise ValueError("invalid ndim for MNIST dataset")
    images = images.astype(image_dtype)
    images *= scale / 255.0
    if withlabel:
        return TupleDataset(images, raw["y"].astype(label_dtype))
    return images


def _get_mnist_like(
    name: str,
    directory: str,
    withlabel: bool,
    ndim: int,
    scale: float,
    dtype: Any,
    label_dtype: Any,
    rgb_format: bool,
) -> tuple[Any, Any]:
    train_raw, test_raw = _load_cached(name, directory, ("train.npz", "test.npz"))
    dtype = np.dtype(np.float32 if dtype is None else dtype)
    return (
        _preprocess_mnist(train_raw, withlabel, ndim, scale, dtype, label_dtype, rgb_format),
        _preprocess_mnist(test_raw, withlabel, ndim, scale, dtype, label_dtype, rgb_format),
    )


def get_mnist(
    withlabel: bool = True,
    ndim: int = 1,
    scale: float = 1.0,
    dtype: Any = None,
    label_dtype: Any = np.int32,
    rgb_format: bool = False,
) -> tuple[Any, Any]:
    """chainer's ``get_mnist`` from chainer's cache only (``pfnet/chainer/mnist/train.npz`` and
    ``test.npz`` under the dataset root): the (train, test) TupleDatasets of images scaled by
    ``scale / 255`` (float32 unless ``dtype``) and labels; NotImplementedError when the cache
    lacks them (gradhub downloads nothing)."""
    return _get_mnist_like(
        "get_mnist",
        os.path.join("pfnet", "chainer", "mnist"),
        withlabel,
        ndim,
        scale,
        dtype,
        label_dtype,
        rgb_format,
    )


def get_fashion_mnist(
    withlabel: bool = True,
    ndim: int = 1,
    scale: float = 1.0,
    dtype: Any = None,
    label_dtype: Any = np.int32,
    rgb_format: bool = False,
) -> tuple[Any, Any]:
    """chainer's ``get_fashion_mnist`` from chainer's cache only
    (``pfnet/chainer/fashion-mnist/``), as :func:`get_mnist`."""
    return _get_mnist_like(
        "get_fashion_mnist",
        os.path.join("pfnet", "chainer", "fashion-mnist"),
        withlabel,
        ndim,
        scale,
        dtype,
        label_dtype,
        rgb_format,
    )


def _preprocess_cifar(
    images: np.ndarray, labels: np.ndarray, withlabel: bool, ndim: int, scale: float, dtype: Any
) -> Any:
    if ndim == 1:
        images = images.reshape(-1, 3072)
    elif ndim == 3:
        images = images.reshape(-1, 3, 32, 32)
    else:
        raise ValueError("invalid ndim for CIFAR dataset")
    images = images.astype(np.dtype(np.float32 if dtype is None else dtype))
    images *= scale / 255.0
    if withlabel:
        return TupleDataset(images, labels.astype(np.int32))
    return images


def _get_cifar(
    fname: str, name: str, withlabel: bool, ndim: int, scale: float, dtype: Any
) -> tuple[Any, Any]:
    (raw,) = _load_cached(fname, os.path.join("pfnet", "chainer", "cifar"), (f"{name}.npz",))
    return (
        _preprocess_cifar(raw["train_x"], raw["train_y"], withlabel, ndim, scale, dtype),
        _preprocess_cifar(raw["test_x"], raw["test_y"], withlabel, ndim, scale, dtype),
    )


def get_cifar10(
    withlabel: bool = True, ndim: int = 3, scale: float = 1.0, dtype: Any = None
) -> tuple[Any, Any]:
    """chainer's ``get_cifar10`` from chainer's cache only (``pfnet/chainer/cifar/cifar-10.npz``
    under the dataset root, with ``train_x``, ``train_y``, ``test_x``, ``test_y``): the (train,
    test) TupleDatasets of images (``(3, 32, 32)`` for ``ndim=3``, 3072 values for ``ndim=1``)
    scaled by ``scale / 255`` (float32 unless ``dtype``) and int32 labels; NotImplementedError
    when the cache lacks the file (gradhub downloads nothing)."""
    return _get_cifar("get_cifar10", "cifar-10", withlabel, ndim, scale, dtype)


def get_cifar100(
    withlabel: bool = True, ndim: int = 3, scale: float = 1.0, dtype: Any = None
) -> tuple[Any, Any]:
    """chainer's ``get_cifar100`` from chainer's cache only (``cifar-100.npz``), as
    :func:`get_cifar10`."""
    return _get_cifar("get_cifar100", "cifar-100", withlabel, ndim, scale, dtype)


_PTB = os.path.join("pfnet", "chainer", "ptb")


def get_ptb_words() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """chainer's ``get_ptb_words`` from chainer's cache only (``pfnet/chainer/ptb/train.npz``,
    ``valid.npz`` and ``test.npz`` under the dataset root, each with the word IDs ``x``): the
    (train, valid, test) int32 arrays of word IDs; NotImplementedError when the cache lacks them
    (gradhub downloads nothing)."""
    loaded = _load_cached("get_ptb_words", _PTB, ("train.npz", "valid.npz", "test.npz"))
    train, valid, test = (raw["x"] for raw in loaded)
    return train, valid, test


def get_ptb_words_vocabulary() -> dict[str, int]:
    """chainer's ``get_ptb_words_vocabulary`` from chainer's cache only
    (``pfnet/chainer/ptb/vocab.txt``, one word a line): the dictionary word -> ID (the line
    number); NotImplementedError when the cache lacks the file."""
    path = os.path.join(_dataset_root(), _PTB, "vocab.txt")
    if not os.path.exists(path):
        raise NotImplementedError(
            "chainer.datasets.get_ptb_words_vocabulary: gradhub downloads nothing and chainer's "
            f"dataset cache has no {path} (run chainer's get_ptb_words_vocabulary once, or set "
            f"CHAINER_DATASET_ROOT); see {PAGE}"
        )
    with open(path) as f:
        return {word.strip(): i for i, word in enumerate(f)}


def __getattr__(name: str) -> Any:
    if name.startswith("get_") or name[:1].isupper() or name.startswith("open_"):
        raise NotImplementedError(
            f"chainer.datasets.{name} is not supported by gradhub (it downloads nothing and "
            f"reads no pickles; supported: {', '.join(__all__)}); see {PAGE}"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
