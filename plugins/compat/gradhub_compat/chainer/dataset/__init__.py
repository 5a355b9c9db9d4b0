"""chainer's ``chainer.dataset``: :func:`concat_examples` (and the rest of
``chainer.dataset.convert``), :class:`DatasetMixin` and the :class:`Iterator` base class, as
chainer 7.8.1's ``chainer/dataset/``.

Example::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> batch = [(np.array([1, 2]), 1), (np.array([3, 4]), 2)]
    >>> chainer.dataset.concat_examples(batch)
    (array([[1, 2],
           [3, 4]]), array([1, 2]))
"""

from __future__ import annotations

from typing import Any

from .._device import _missing_attribute
from . import convert, dataset_mixin, iterator
from .convert import Converter, concat_examples, converter, to_device
from .dataset_mixin import DatasetMixin
from .iterator import Iterator

__all__ = [
    "Converter",
    "DatasetMixin",
    "Iterator",
    "concat_examples",
    "convert",
    "converter",
    "dataset_mixin",
    "iterator",
    "to_device",
]


def __getattr__(name: str) -> Any:
    _missing_attribute(__name__, "chainer.dataset", name, not name.startswith("__"), __all__)
