"""chainer's ``Iterator`` base class (chainer 7.8.1 ``chainer/dataset/iterator.py``)."""

from __future__ import annotations

from typing import Any

__all__ = ["Iterator"]


class Iterator:
    """The base class of dataset iterators: ``next(it)`` gives a mini-batch (a list of
    examples); subclasses provide ``batch_size``, ``epoch``, ``epoch_detail``,
    ``previous_epoch_detail``, ``is_new_epoch`` and ``serialize``. ``finalize()`` (also run by
    ``with it:`` and on deletion) releases resources; nothing by default."""

    def __del__(self) -> None:
        self.finalize()

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> Any:
        raise NotImplementedError

    def next(self) -> Any:
        """``__next__()``."""
        return self.__next__()

    def finalize(self) -> None:
        """Release resources (nothing by default)."""

    def __enter__(self) -> Iterator:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.finalize()

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: the iteration state (nothing by default)."""
