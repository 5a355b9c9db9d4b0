"""mxnet Gluon's image datasets (``gluon.data.vision.datasets``), as mxnet 1.9.1, read from
the files mxnet downloads when they are already under ``root``: MNIST and Fashion-MNIST from
``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz`` (``t10k-...`` for
``train=False``), CIFAR-10 from ``data_batch_1.bin`` ... ``data_batch_5.bin`` and
``test_batch.bin``, CIFAR-100 from ``train.bin`` and ``test.bin``. The files are parsed with
numpy (gzip and the binary formats; nothing is unpickled). Nothing is downloaded: a missing file
raises ``NotImplementedError`` naming the file (put mxnet's files under ``root``). A file that is
present is read as it is (mxnet would download it again when its SHA-1 differs from the
published one).

A sample is ``(image, label)``: the image an NDArray of shape ``(28, 28, 1)`` or ``(32, 32, 3)``
and dtype uint8, the label a numpy int32 scalar; ``transform(image, label)`` is applied when
given, as mxnet.

Example::

    >>> import gzip, os, struct, tempfile
    >>> import numpy as np
    >>> from gradhub_compat.mxnet.gluon.data.vision import MNIST
    >>> root = tempfile.mkdtemp()
    >>> with gzip.open(os.path.join(root, "t10k-images-idx3-ubyte.gz"), "wb") as f:
    ...     _ = f.write(struct.pack(">IIII", 2051, 2, 28, 28) + bytes(range(256)) * 6 + bytes(32))
    >>> with gzip.open(os.path.join(root, "t10k-labels-idx1-ubyte.gz"), "wb") as f:
    ...     _ = f.write(struct.pack(">II", 2049, 2) + bytes([7, 3]))
    >>> ds = MNIST(root=root, train=False)
    >>> img, label = ds[1]
    >>> len(ds), img.shape, img.dtype.__name__, label
    (2, (28, 28, 1), 'uint8', np.int32(3))
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from .... import ndarray as nd
from ..dataset import Dataset

__all__ = ["CIFAR10", "CIFAR100", "MNIST", "FashionMNIST"]

_DOCS = "docs/migration-mxnet.md"


def _data_dir() -> str:
    """mxnet's ``base.data_dir()``: ``$MXNET_HOME`` or ``~/.mxnet``."""
    return os.getenv("MXNET_HOME", os.path.join(os.path.expanduser("~"), ".mxnet"))


def _need(cls: str, path: str) -> str:
    if not os.path.isfile(path):
        raise NotImplementedError(
            f"gluon.data.vision.{cls}: {path} is not there and mxnet would download it; "
            f"gradhub_compat.mxnet downloads nothing: put mxnet's file there ({_DOCS}, section "
            "Gluon data and recurrent layers)"
        )
    return path


class _DownloadedDataset(Dataset):
    def __init__(self, root: str, transform: Callable[..., Any] | None) -> None:
        self._transform = transform
        self._data: Any = None
        self._label: Any = None
        self._root = os.path.expanduser(root)
        self._get_data()

    def __getitem__(self, idx: Any) -> Any:
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self) -> int:
        return len(self._label)

    def _get_data(self) -> None:
        raise NotImplementedError


class MNIST(_DownloadedDataset):
    """The MNIST digits: images ``(28, 28, 1)`` uint8 NDArrays, labels int32, from mxnet's
    ``root`` (``$MXNET_HOME/datasets/mnist``, ``~/.mxnet`` when ``MXNET_HOME`` is not set);
    ``train`` picks the training or the test files (see the module documentation)."""

    _namespace = "mnist"

    def __init__(
        self,
        root: str = os.path.join(_data_dir(), "datasets", "mnist"),
        train: bool = True,
        transform: Callable[..., Any] | None = None,
    ) -> None:
        self._train = train
        super().__init__(root, transform)

    def _get_data(self) -> None:
        part = "train" if self._train else "t10k"
        cls = type(self).__name__
        label_file = _need(cls, os.path.join(self._root, f"{part}-labels-idx1-ubyte.gz"))
        data_file = _need(cls, os.path.join(self._root, f"{part}-images-idx3-ubyte.gz"))
        with gzip.open(label_file, "rb") as fin:
            fin.read(8)
            label = np.frombuffer(fin.read(), dtype=np.uint8).astype(np.int32)
        with gzip.open(data_file, "rb") as fin:
            fin.read(16)
            data = np.frombuffer(fin.read(), dtype=np.uint8)
        if data.size != len(label) * 28 * 28:
            raise ValueError(
                f"gluon.data.vision.{cls}: {data_file} holds {data.size} pixels, not "
                f"{len(label)} images of 28 x 28 ({label_file} has {len(label)} labels)"
            )
        data = data.reshape(len(label), 28, 28, 1)
        self._data = nd.array(data, dtype=data.dtype)
        self._label = label


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, in MNIST's format and file names, from
    ``$MXNET_HOME/datasets/fashion-mnist`` by default."""

    _namespace = "fashion-mnist"

    def __init__(
        self,
        root: str = os.path.join(_data_dir(), "datasets", "fashion-mnist"),
        train: bool = True,
        transform: Callable[..., Any] | None = None,
    ) -> None:
        super().__init__(root, train, transform)


class CIFAR10(_DownloadedDataset):
    """CIFAR-10: images ``(32, 32, 3)`` uint8 NDArrays (height, width, channel), labels int32,
    from mxnet's ``data_batch_1.bin`` ... ``data_batch_5.bin`` (``test_batch.bin`` for
    ``train=False``) under ``root`` (``$MXNET_HOME/datasets/cifar10``). Each record is one
    label byte then 3072 pixel bytes, channel-major, as mxnet reads them."""

    _train_files = [f"data_batch_{i}.bin" for i in range(1, 6)]
    _test_files = ["test_batch.bin"]
    _label_bytes = 1

    def __init__(
        self,
        root: str = os.path.join(_data_dir(), "datasets", "cifar10"),
        train: bool = True,
        transform: Callable[..., Any] | None = None,
    ) -> None:
        self._train = train
        self._label_offset = 0
        super().__init__(root, transform)

    def _read_batch(self, filename: str) -> tuple[np.ndarray, np.ndarray]:
        n = 3072 + self._label_bytes
        with open(filename, "rb") as fin:
            raw = np.frombuffer(fin.read(), dtype=np.uint8)
        if raw.size % n:
            raise ValueError(
                f"gluon.data.vision.{type(self).__name__}: {filename} holds {raw.size} bytes, "
                f"not a whole number of records of {n}"
            )
        raw = raw.reshape(-1, n)
        images = raw[:, self._label_bytes :].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return images, raw[:, self._label_offset].astype(np.int32)

    def _get_data(self) -> None:
        cls = type(self).__name__
        names = self._train_files + self._test_files
        paths = {name: _need(cls, os.path.join(self._root, name)) for name in names}
        files = self._train_files if self._train else self._test_files
        data, label = zip(*(self._read_batch(paths[name]) for name in files))
        images = np.concatenate(data)
        self._data = nd.array(images, dtype=images.dtype)
        self._label = np.concatenate(label)


class CIFAR100(CIFAR10):
    """CIFAR-100 from ``train.bin``/``test.bin`` under ``root``
    (``$MXNET_HOME/datasets/cifar100``): each record is a coarse label byte, a fine label byte
    and 3072 pixel bytes; ``fine_label=True`` gives the 100 fine classes, else the 20 coarse
    ones."""

    _train_files = ["train.bin"]
    _test_files = ["test.bin"]
    _label_bytes = 2

    def __init__(
        self,
        root: str = os.path.join(_data_dir(), "datasets", "cifar100"),
        fine_label: bool = False,
        train: bool = True,
        transform: Callable[..., Any] | None = None,
    ) -> None:
        self._train = train
        self._fine_label = fine_label
        self._label_offset = int(bool(fine_label))
        _DownloadedDataset.__init__(self, root, transform)
