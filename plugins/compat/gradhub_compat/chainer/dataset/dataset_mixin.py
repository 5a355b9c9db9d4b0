"""chainer's ``DatasetMixin`` (chainer 7.8.1 ``chainer/dataset/dataset_mixin.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["DatasetMixin"]


class DatasetMixin:
    """A dataset defined by ``__len__`` and ``get_example(i)``: indexing with an int gives
    ``get_example(i)``, with a slice, a list or a numpy array a list of examples, as chainer.

    Example::

        >>> from gradhub_compat.chainer.dataset import DatasetMixin
        >>> class Squares(DatasetMixin):
        ...     def __len__(self):
        ...         return 5
        ...     def get_example(self, i):
        ...         return i * i
        >>> Squares()[1:4], Squares()[[0, 4]]
        ([1, 4, 9], [0, 16])
    """

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            current, stop, step = index.indices(len(self))
            return [self.get_example(i) for i in range(current, stop, step)]
        if isinstance(index, (list, np.ndarray)):
            return [self.get_example(i) for i in index]
        return self.get_example(index)

    def __len__(self) -> int:
        """The number of examples (defined by subclasses)."""
        raise NotImplementedError

    def get_example(self, i: int) -> Any:
        """The ``i``-th example (defined by subclasses)."""
        raise NotImplementedError
