"""chainermn's ``scatter_dataset`` (chainermn 7.8.1, ``chainermn/datasets/scatter.py``) without
pickling: every rank holds the dataset (read from the same files) and takes its part."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np


class SubDataset:
    """chainer's ``SubDataset(dataset, start, finish, order=None)``: the items ``start`` to
    ``finish - 1`` of ``dataset``, read through the permutation ``order`` when given."""

    def __init__(self, dataset: Any, start: int, finish: int, order: Any = None) -> None:
        if start < 0 or finish > len(dataset) or start > finish:
            raise ValueError(
                f"SubDataset: subset range [{start}, {finish}) is out of the dataset of "
                f"{len(dataset)} items"
            )
        if order is not None and len(order) != len(dataset):
            raise ValueError(
                f"SubDataset: order has {len(order)} items but the dataset {len(dataset)}"
            )
        self._dataset, self._start, self._finish, self._order = dataset, start, finish, order

    def __len__(self) -> int:
        return self._finish - self._start

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < -n or index >= n:
            raise IndexError(f"SubDataset: index {index} out of range for {n} items")
        i = self._start + (index % n)
        if self._order is not None:
            i = int(self._order[i])
        return self._dataset[i]

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))


def scatter_index(
    n_total_samples: int, comm: Any, root: int = 0, *, force_equal_length: bool = True
) -> tuple[int, int]:
    """``(begin, end)`` of this rank's part of ``n_total_samples`` items, computed by every
    rank alike (chainermn's arithmetic): with ``force_equal_length`` each part has
    ``ceil(n / p)`` items, starting at ``n r // p`` (parts may overlap); otherwise the first
    ``n mod p`` ranks get ``n // p + 1`` and the others ``n // p``, without overlap."""
    size, rank = comm.size, comm.rank
    if force_equal_length:
        b = n_total_samples * rank // size
        return b, b + (n_total_samples + size - 1) // size
    stride, extra = divmod(n_total_samples, size)
    b = rank * stride + min(rank, extra)
    return b, b + stride + (1 if rank < extra else 0)


def scatter_dataset(
    dataset: Any,
    comm: Any,
    root: int = 0,
    shuffle: bool = False,
    seed: int | None = None,
    max_buf_len: int = 256 * 1024 * 1024,
    *,
    force_equal_length: bool = True,
) -> SubDataset:
    """This rank's part of ``dataset`` (a :class:`SubDataset`), as chainermn's
    ``scatter_dataset``.

    chainermn pickles rank ``root``'s dataset to every rank; here every rank passes its own
    copy of the dataset (the lengths are compared: a difference raises on every rank) and
    nothing is pickled. With ``shuffle`` rank ``root`` draws the permutation
    (``numpy.random.RandomState(seed)``, as chainermn) and broadcasts it as an array.
    ``max_buf_len`` is accepted for chainermn's signature.
    """
    where = "chainermn.scatter_dataset"
    if dataset is None:
        raise ValueError(
            f"{where}: every rank passes the dataset (gradhub_compat does not pickle rank "
            f"{root}'s dataset to the others); load it on every rank"
        )
    host = getattr(comm, "host", None)
    if host is None:
        raise TypeError(
            f"{where}: argument 'comm' must be a chainermn communicator "
            f"(gradhub_compat.chainermn.create_communicator), got {type(comm).__name__}"
        )
    n = len(dataset)
    every = [int(x[0]) for x in host.all_gather(np.array([float(n)]))]
    if any(k != n for k in every):
        raise ValueError(
            f"{where}: the ranks hold datasets of different lengths ({every}: rank r has the "
            "r-th); every rank must load the same dataset"
        )
    order = None
    if shuffle:
        perm = np.zeros(n, dtype=np.float64)
        if comm.rank == root:
            perm[:] = np.random.RandomState(seed).permutation(n)
        host.bcast(perm, root=root)
        order = perm.astype(np.int64)
    b, e = scatter_index(n, comm, root, force_equal_length=force_equal_length)
    return SubDataset(dataset, b, e, order)
