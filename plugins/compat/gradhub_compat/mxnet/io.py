"""mxnet 1.9.1's data iterators (``mx.io``): :class:`DataDesc`, :class:`DataBatch`,
:class:`DataIter`, :class:`NDArrayIter`, :class:`ResizeIter`.

:class:`NDArrayIter` serves batches of NDArrays or numpy arrays (one array, a list or a dict of
them) as mxnet's: the arrays are sorted by name, numpy arrays become NDArrays (float32 unless
they are NDArrays already, as ``mx.nd.array``), a short last batch is padded with the first
examples (``"pad"``), dropped (``"discard"``) or carried into the next epoch (``"roll_over"``),
and ``shuffle=True`` permutes the examples at construction and at every :meth:`~NDArrayIter.reset`
with ``numpy.random.shuffle`` (numpy's global RandomState, as mxnet: the same ``np.random.seed``
gives the same batches as mxnet 1.9.1). The iterators of files (``MNISTIter``,
``ImageRecordIter``, ``CSVIter``, ``LibSVMIter``, ``ImageDetRecordIter``) raise
``NotImplementedError``.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.mxnet as mx
    >>> it = mx.io.NDArrayIter(np.arange(10).reshape(5, 2), np.arange(5), batch_size=2)
    >>> it.provide_data
    [DataDesc[data,(2, 2),<class 'numpy.float32'>,NCHW]]
    >>> [(b.data[0].asnumpy()[:, 0].tolist(), b.pad) for b in it]
    [([0.0, 2.0], 0), ([4.0, 6.0], 0), ([8.0, 0.0], 1)]
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from collections.abc import Iterator
from typing import Any

import numpy as np

from .base import mx_real_t
from .ndarray import NDArray, array

__all__ = [
    "CSVIter",
    "DataBatch",
    "DataDesc",
    "DataIter",
    "ImageDetRecordIter",
    "ImageRecordIter",
    "LibSVMIter",
    "MNISTIter",
    "NDArrayIter",
    "PrefetchingIter",
    "ResizeIter",
]

_DOCS = "docs/migration-mxnet.md"


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """The name, shape, dtype and layout of one input (a ``(name, shape)`` namedtuple with the
    attributes ``dtype`` and ``layout``), as mxnet's ``mx.io.DataDesc``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> d = mx.io.DataDesc("data", (4, 3))
        >>> d, d.name, d.shape, mx.io.DataDesc.get_batch_axis("TNC")
        (DataDesc[data,(4, 3),<class 'numpy.float32'>,NCHW], 'data', (4, 3), 1)
    """

    dtype: Any
    layout: str

    def __new__(
        cls, name: str, shape: tuple[int, ...], dtype: Any = mx_real_t, layout: str = "NCHW"
    ) -> DataDesc:
        ret = super().__new__(cls, name, shape)
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self) -> str:
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout: str | None) -> int:
        """The position of ``N`` in ``layout`` (0 for None, -1 when there is none)."""
        if layout is None:
            return 0
        return layout.find("N")

    @staticmethod
    def get_list(shapes: Any, types: Any) -> list[DataDesc]:
        """DataDescs of ``(name, shape)`` pairs, with the dtypes of the ``(name, dtype)`` pairs
        ``types`` (float32 when None)."""
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(x[0], x[1], type_dict[x[0]]) for x in shapes]
        return [DataDesc(x[0], x[1]) for x in shapes]


class DataBatch:
    """One batch: ``data`` and ``label`` (lists of NDArrays), ``pad`` (the number of padding
    examples at its end), ``index``, ``bucket_key``, ``provide_data``, ``provide_label``, as
    mxnet's ``mx.io.DataBatch``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> print(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros(2)], pad=0))
        DataBatch: data shapes: [(2, 3)] label shapes: [(2,)]
    """

    def __init__(
        self,
        data: Any,
        label: Any = None,
        pad: int | None = None,
        index: Any = None,
        bucket_key: Any = None,
        provide_data: Any = None,
        provide_label: Any = None,
    ) -> None:
        if data is not None and not isinstance(data, (list, tuple)):
            raise TypeError(
                f"DataBatch: data must be a list of NDArrays, got {type(data).__name__}"
            )
        if label is not None and not isinstance(label, (list, tuple)):
            raise TypeError(
                f"DataBatch: label must be a list of NDArrays, got {type(label).__name__}"
            )
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self) -> str:
        data: Any = self.data  # (None raises TypeError, as mxnet's)
        label = self.label
        data_shapes = [d.shape for d in data]
        label_shapes = [lab.shape for lab in label] if label else None
        return f"{type(self).__name__}: data shapes: {data_shapes} label shapes: {label_shapes}"


class DataIter:
    """The base class of data iterators, as mxnet's ``mx.io.DataIter``: iterating calls
    :meth:`next`, which asks :meth:`iter_next` to advance and builds a :class:`DataBatch` from
    :meth:`getdata`, :meth:`getlabel`, :meth:`getpad` and :meth:`getindex`; :meth:`reset` goes
    back to the start. Subclasses define ``provide_data``/``provide_label`` (lists of
    :class:`DataDesc`).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> class Three(mx.io.DataIter):
        ...     def __init__(self):
        ...         super().__init__(batch_size=1)
        ...         self.i = 0
        ...     def reset(self):
        ...         self.i = 0
        ...     def iter_next(self):
        ...         self.i += 1
        ...         return self.i <= 3
        ...     def getdata(self):
        ...         return [mx.nd.full((1,), self.i)]
        ...     def getpad(self):
        ...         return 0
        >>> [float(b.data[0].asscalar()) for b in Three()]
        [1.0, 2.0, 3.0]
    """

    def __init__(self, batch_size: int = 0) -> None:
        self.batch_size = batch_size

    def __iter__(self) -> Iterator[DataBatch]:
        return self

    def reset(self) -> None:
        """Go back to the first batch."""

    def next(self) -> DataBatch:
        """The next batch; ``StopIteration`` at the end of the data."""
        if self.iter_next():
            return DataBatch(
                data=self.getdata(),
                label=self.getlabel(),
                pad=self.getpad(),
                index=self.getindex(),
            )
        raise StopIteration

    def __next__(self) -> DataBatch:
        return self.next()

    def iter_next(self) -> bool:
        """Advance to the next batch; whether there is one."""
        return False

    def getdata(self) -> Any:
        """The data of the current batch (a list of NDArrays)."""
        return None

    def getlabel(self) -> Any:
        """The labels of the current batch (a list of NDArrays)."""
        return None

    def getindex(self) -> Any:
        """The indices of the current batch's examples (None)."""
        return None

    def getpad(self) -> Any:
        """The number of padding examples at the end of the current batch."""
        return None


class ResizeIter(DataIter):
    """``data_iter`` resized to ``size`` batches per epoch, as mxnet's ``mx.io.ResizeIter``: it
    starts ``data_iter`` again when that ends early and stops after ``size`` batches;
    :meth:`reset` resets ``data_iter`` too when ``reset_internal``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> it = mx.io.ResizeIter(mx.io.NDArrayIter(mx.nd.ones((100, 10)), batch_size=25), 2)
        >>> [b.data[0].shape for b in it]
        [(25, 10), (25, 10)]
    """

    def __init__(self, data_iter: DataIter, size: int, reset_internal: bool = True) -> None:
        super().__init__()
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch: DataBatch | None = None
        self.provide_data = data_iter.provide_data  # type: ignore[attr-defined]
        self.provide_label = data_iter.provide_label  # type: ignore[attr-defined]
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self) -> None:
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self) -> bool:
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True

    def getdata(self) -> Any:
        return self.current_batch.data  # type: ignore[union-attr]

    def getlabel(self) -> Any:
        return self.current_batch.label  # type: ignore[union-attr]

    def getindex(self) -> Any:
        return self.current_batch.index  # type: ignore[union-attr]

    def getpad(self) -> Any:
        return self.current_batch.pad  # type: ignore[union-attr]


def _init_data(data: Any, allow_empty: bool, default_name: str) -> list[tuple[str, NDArray]]:
    """mxnet's ``io.utils._init_data``: ``(name, NDArray)`` pairs sorted by name."""
    if data is None:
        if not allow_empty:
            raise ValueError("NDArrayIter: data must be given (got None)")
        data = []
    if isinstance(data, (np.ndarray, NDArray)):
        data = [data]
    if isinstance(data, (list, tuple)):
        if not allow_empty and len(data) == 0:
            raise ValueError("NDArrayIter: data must hold at least one array (got an empty list)")
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict([(f"_{i}_{default_name}", d) for i, d in enumerate(data)])
    if not isinstance(data, dict):
        raise TypeError(
            "NDArrayIter: Input must be NDArray, numpy.ndarray, a list of them or dict with "
            f"them as values (got {type(data).__name__})"
        )
    out = {}
    for k, v in data.items():
        if not isinstance(v, NDArray):
            try:
                v = array(v)
            except Exception:
                raise TypeError(
                    f"NDArrayIter: Invalid type '{type(v)}' for {k}, should be NDArray or "
                    "numpy.ndarray"
                ) from None
        out[k] = v
    return sorted(out.items())


def _shuffled(data: list[tuple[str, NDArray]], idx: np.ndarray) -> list[tuple[str, NDArray]]:
    return [(k, array(v.asnumpy()[idx], v.context, dtype=v.dtype)) for k, v in data]


def _rows(arr: NDArray, start: int, end: int) -> NDArray:
    """Rows ``start:end`` (a copy, as mxnet's ``slice_axis``)."""
    return array(arr.asnumpy()[start:end], arr.context, dtype=arr.dtype)


def _concat(first: list[NDArray], second: list[NDArray]) -> list[NDArray]:
    if not first or not second:
        return first if first else second
    return [
        array(np.concatenate([a.asnumpy(), b.asnumpy()], axis=0), a.context, dtype=a.dtype)
        for a, b in zip(first, second)
    ]


class NDArrayIter(DataIter):
    """Batches of in-memory arrays, as mxnet 1.9.1's ``mx.io.NDArrayIter``.

    ``data``/``label``: an NDArray or numpy array, a list of them (named ``_0_data``,
    ``_1_data``... when there are several) or a dict name -> array; the arrays are served in
    the order of their names, numpy arrays converted by ``mx.nd.array`` (float32). Each batch
    holds ``batch_size`` examples (rows of the first axis). ``last_batch_handle``: ``"pad"``
    completes the short last batch with the first examples (``DataBatch.pad`` says how many),
    ``"discard"`` drops it, ``"roll_over"`` keeps it and puts it at the start of the first
    batch after :meth:`reset` (whose ``pad`` is then minus the cursor, as mxnet).
    ``shuffle=True`` shuffles the example order with ``numpy.random.shuffle`` at construction
    and at each :meth:`reset`, as mxnet (seed with ``np.random.seed``). ``layout`` must put
    ``N`` first.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.mxnet as mx
        >>> it = mx.io.NDArrayIter(np.arange(5), batch_size=2, last_batch_handle="roll_over")
        >>> [b.data[0].asnumpy().tolist() for b in it]
        [[0.0, 1.0], [2.0, 3.0]]
        >>> it.reset()
        >>> b = it.next()
        >>> b.data[0].asnumpy().tolist(), b.pad
        ([4.0, 0.0], 1)
    """

    def __init__(
        self,
        data: Any,
        label: Any = None,
        batch_size: int = 1,
        shuffle: bool = False,
        last_batch_handle: str = "pad",
        data_name: str = "data",
        label_name: str = "softmax_label",
        layout: str = "NCHW",
    ) -> None:
        super().__init__(batch_size)
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
            raise TypeError(
                f"NDArrayIter: batch_size must be an int, got {type(batch_size).__name__}"
            )
        if batch_size <= 0:
            raise ValueError(f"NDArrayIter: batch_size must be positive, got {batch_size}")
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise ValueError(
                "NDArrayIter: last_batch_handle must be 'pad', 'discard' or 'roll_over', got "
                f"{last_batch_handle!r}"
            )
        if layout.find("N") != 0:
            raise NotImplementedError(
                f"NDArrayIter: layout {layout!r} has its batch axis elsewhere than first; only "
                f"layouts starting with N are supported ({_DOCS})"
            )
        self.data = _init_data(data, allow_empty=False, default_name=data_name)
        self.label = _init_data(label, allow_empty=True, default_name=label_name)
        n = self.data[0][1].shape[0]
        for k, v in self.data + self.label:
            if len(v.shape) == 0 or v.shape[0] != n:
                raise ValueError(
                    f"NDArrayIter: every array needs {n} examples along the first axis, "
                    f"{k!r} has shape {v.shape}"
                )
        self.idx = np.arange(n)
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.batch_size = int(batch_size)
        self.cursor = -self.batch_size
        self.num_data = n
        self.layout = layout
        self._cache_data: list[NDArray] | None = None
        self._cache_label: list[NDArray] | None = None
        self.reset()
        self.data_list = [x[1] for x in self.data] + [x[1] for x in self.label]
        self.num_source = len(self.data_list)

    def _descs(self, arrays: list[tuple[str, NDArray]]) -> list[DataDesc]:
        return [
            DataDesc(k, (self.batch_size, *v.shape[1:]), v.dtype, layout=self.layout)
            for k, v in arrays
        ]

    @property
    def provide_data(self) -> list[DataDesc]:
        """The name, batch shape and dtype of each data array."""
        return self._descs(self.data)

    @property
    def provide_label(self) -> list[DataDesc]:
        """The name, batch shape and dtype of each label array."""
        return self._descs(self.label)

    def hard_reset(self) -> None:
        """Go back to the start, dropping the examples kept by ``"roll_over"``."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self) -> None:
        """Go back to the start (shuffling again with ``shuffle``)."""
        if self.shuffle:
            self._shuffle_data()
        if (
            self.last_batch_handle == "roll_over"
            and self.num_data - self.batch_size < self.cursor < self.num_data
        ):
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self) -> bool:
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        if data[0].shape[0] != self.batch_size:
            # an incomplete last batch ("discard", "roll_over"): kept for the next epoch
            self._cache_data = data
            self._cache_label = label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _getdata(
        self, source: list[tuple[str, NDArray]], start: int | None = None, end: int | None = None
    ) -> list[NDArray]:
        start = start if start is not None else 0
        if end is None:
            end = source[0][1].shape[0] if source else 0
        return [_rows(x[1], start, end) for x in source]

    def _batchify(self, source: list[tuple[str, NDArray]]) -> list[NDArray]:
        if self.cursor >= self.num_data:
            raise RuntimeError("NDArrayIter: DataIter needs reset.")
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            cache = self._cache_data if self._cache_data is not None else self._cache_label
            if cache is None:
                raise RuntimeError("NDArrayIter: next epoch should have cached data")
            second = self._getdata(source, end=self.cursor + self.batch_size)
            if self._cache_data is not None:
                self._cache_data = None
            else:
                self._cache_label = None
            return _concat(cache, second)
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            pad = self.batch_size - self.num_data + self.cursor
            first = self._getdata(source, start=self.cursor)
            if pad > self.num_data:
                whole = self._getdata(source, end=self.num_data)
                second = [
                    array(
                        np.tile(a.asnumpy(), (pad // self.num_data,) + (1,) * (a.ndim - 1)),
                        a.context,
                        dtype=a.dtype,
                    )
                    for a in whole
                ]
                if pad % self.num_data != 0:
                    second = _concat(second, self._getdata(source, end=pad % self.num_data))
            else:
                second = self._getdata(source, end=pad)
            return _concat(first, second)
        end = min(self.cursor + self.batch_size, self.num_data)
        return self._getdata(source, self.cursor, end)

    def getdata(self) -> list[NDArray]:
        return self._batchify(self.data)

    def getlabel(self) -> list[NDArray]:
        return self._batchify(self.label)

    def getpad(self) -> int:
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self) -> None:
        np.random.shuffle(self.idx)
        self.data = _shuffled(self.data, self.idx)
        self.label = _shuffled(self.label, self.idx)


def _file_iter(name: str) -> type:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"mx.io.{name} (mxnet's C++ file iterators) is not supported; read the file with "
            f"numpy and use mx.io.NDArrayIter ({_DOCS})"
        )

    return type(name, (DataIter,), {"__init__": __init__, "__doc__": f"Not supported ({_DOCS})."})


MNISTIter = _file_iter("MNISTIter")
ImageRecordIter = _file_iter("ImageRecordIter")
ImageDetRecordIter = _file_iter("ImageDetRecordIter")
CSVIter = _file_iter("CSVIter")
LibSVMIter = _file_iter("LibSVMIter")


class PrefetchingIter(DataIter):
    """Not supported (mxnet's background-thread prefetching); raises ``NotImplementedError``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"mx.io.PrefetchingIter is not supported; iterate the wrapped iterator directly "
            f"({_DOCS})"
        )
