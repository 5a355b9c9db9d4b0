"""mxnet's NDArray files: ``mx.nd.save``, ``mx.nd.load``, ``mx.nd.load_frombuffer``.

The format is mxnet 1.9.1's (``NDArray::Save``/``Load`` in ``src/ndarray/ndarray.cc``), all
numbers little-endian:

* the list header: ``uint64`` 0x112 (``kMXAPINDArrayListMagic``), ``uint64`` 0 (reserved);
* ``uint64`` the number of arrays, then each array: ``uint32`` magic (0xF993FAC9 for mxnet's
  default shape mode, V2; 0xF993FACA for its numpy shape mode, V3), ``int32`` storage type
  (0 dense), the shape (``int32`` ndim, ``int64`` per dimension), the context (``int32`` device
  type: 1 cpu, 2 gpu, 3 cpu_pinned; ``int32`` device id), ``int32`` dtype flag (0 float32,
  1 float64, 2 float16, 3 uint8, 4 int32, 5 int8, 6 int64, 7 bool), then the elements in C order;
* ``uint64`` the number of names (0 for a list, else one per array), then each name: ``uint64``
  length and its UTF-8 bytes.

Reading only parses (:mod:`struct` and :func:`numpy.frombuffer`): nothing in a file is executed
or unpickled. The older layouts mxnet 1.9.1 still reads (magic 0xF993FAC8, V1, and the first
one, whose magic is the number of dimensions followed by ``uint32`` dimensions) are read too.
Sparse arrays, bfloat16, uninitialized arrays, unknown magics and dtype flags, and truncated
files raise :class:`~.base.MXNetError` naming the file and the array.

Example::

    >>> import os, tempfile
    >>> import gradhub_compat.mxnet as mx
    >>> with tempfile.TemporaryDirectory() as d:
    ...     mx.nd.save(os.path.join(d, "w.params"), {"w": mx.nd.array([[1, 2], [3, 4]])})
    ...     loaded = mx.nd.load(os.path.join(d, "w.params"))
    >>> loaded["w"].asnumpy()
    array([[1., 2.],
           [3., 4.]], dtype=float32)
"""

from __future__ import annotations

import math
import os
import struct
from typing import Any

import numpy as np

from .base import MXNetError, _MXNetTypeError
from .context import Context
from .ndarray import NDArray, _make, refuse_traced

__all__ = ["load", "load_frombuffer", "save"]

#: ``kMXAPINDArrayListMagic``: the first eight bytes of a file
LIST_MAGIC = 0x112
#: the magic numbers of one array: V1 (int64 shape), V2 (storage type), V3 (numpy shape mode)
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
#: before V1 the magic was the number of dimensions; larger values are not a legacy shape
_MAX_LEGACY_NDIM = 32

#: mshadow's dtype flags (``mshadow/base.h``) -> numpy dtypes (little-endian)
_DTYPES: dict[int, np.dtype] = {
    0: np.dtype("<f4"),
    1: np.dtype("<f8"),
    2: np.dtype("<f2"),
    3: np.dtype("u1"),
    4: np.dtype("<i4"),
    5: np.dtype("i1"),
    6: np.dtype("<i8"),
    7: np.dtype("?"),
}
_FLAGS = {dt.newbyteorder("="): flag for flag, dt in _DTYPES.items()}
#: dtype flags mxnet knows that have no numpy dtype here
_UNSUPPORTED_DTYPES = {12: "bfloat16"}
#: mxnet's storage types other than dense (0)
_SPARSE = {1: "row_sparse", 2: "csr"}
#: mxnet's device types (``Context::DeviceType``) and the layer's contexts written as them
_DEVICES = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
_DEVICE_FLAGS = {"cpu": 1, "gpu": 2, "cpu_pinned": 3}

_DOCS = "docs/migration-mxnet.md"


class _MXNetFileNotFoundError(MXNetError, FileNotFoundError):
    """A file to load that does not exist: mxnet's MXNetError, also a FileNotFoundError."""


class _MXNetNotImplementedError(MXNetError, NotImplementedError):
    """Content of an mxnet file the layer does not read (sparse arrays, bfloat16): mxnet's
    MXNetError, also a NotImplementedError."""


class _Reader:
    """Reads little-endian numbers from ``buf``; running out raises MXNetError naming
    ``where`` (the function and the file) and what was being read."""

    def __init__(self, buf: bytes | bytearray | memoryview, where: str) -> None:
        self.buf = memoryview(buf).cast("B")
        self.pos = 0
        self.where = where

    def fail(self, why: str) -> MXNetError:
        return MXNetError(f"{self.where}: {why} (Invalid NDArray file format)")

    def take(self, n: int, what: str) -> memoryview:
        left = len(self.buf) - self.pos
        if n > left:
            raise self.fail(
                f"the file is truncated: {what} needs {n} bytes at offset {self.pos}, "
                f"{left} are left"
            )
        view = self.buf[self.pos : self.pos + n]
        self.pos += n
        return view

    def number(self, fmt: str, what: str) -> int:
        size = struct.calcsize(fmt)
        return int(struct.unpack(fmt, self.take(size, what))[0])


def _read_shape(r: _Reader, magic: int, what: str) -> tuple[int, ...] | None:
    """The shape of an array of this ``magic`` (after the storage type for V2/V3); None for the
    empty shape, whose meaning depends on the version (see :func:`_read_array`)."""
    if magic in (V1_MAGIC, V2_MAGIC, V3_MAGIC):
        ndim = r.number("<i", f"{what}'s number of dimensions")
        if ndim < 0:
            raise r.fail(f"{what} has an unknown shape (ndim {ndim}): an uninitialized array")
        dims = [r.number("<q", f"{what}'s dimension {k}") for k in range(ndim)]
    else:  # the first layout: the magic is ndim, then uint32 dimensions
        ndim = magic
        dims = [r.number("<I", f"{what}'s dimension {k}") for k in range(ndim)]
    if any(d < 0 for d in dims):
        raise r.fail(f"{what} has an unknown shape {tuple(dims)}: an uninitialized array")
    return tuple(dims) if dims else None


def _read_array(r: _Reader, i: int) -> np.ndarray:
    """Array ``i`` (numpy, native byte order) at the reader's position."""
    what = f"array {i}"
    magic = r.number("<I", f"{what}'s magic number")
    if magic in (V2_MAGIC, V3_MAGIC):
        stype = r.number("<i", f"{what}'s storage type")
        if stype in _SPARSE:
            raise _MXNetNotImplementedError(
                f"{r.where}: {what} has {_SPARSE[stype]} storage, which gradhub_compat.mxnet "
                f"does not read (dense arrays only; {_DOCS})"
            )
        if stype == -1:
            raise r.fail(f"{what} is an uninitialized array (storage type -1)")
        if stype != 0:
            raise r.fail(f"{what} has the unknown storage type {stype}")
    elif magic != V1_MAGIC and magic > _MAX_LEGACY_NDIM:
        raise r.fail(
            f"{what} has the unknown magic number {magic:#x} (expected {V2_MAGIC:#x} or "
            f"{V3_MAGIC:#x})"
        )
    shape = _read_shape(r, magic, what)
    if shape is None:
        if magic not in (V2_MAGIC, V3_MAGIC):
            # V1 and the first layout: an uninitialized array, nothing follows
            raise r.fail(f"{what} is an uninitialized array (empty shape, no data)")
        # V3: a 0-d array; V2: mxnet 1.9.1 writes a 0-d array of its default shape mode so,
        # context, dtype and element included (mxnet itself then reads no further)
        shape = ()
    dev_type = r.number("<i", f"{what}'s device type")
    r.number("<i", f"{what}'s device id")
    if dev_type not in _DEVICES:
        raise r.fail(f"{what} has the unknown device type {dev_type}")
    flag = r.number("<i", f"{what}'s dtype flag")
    if flag in _UNSUPPORTED_DTYPES:
        raise _MXNetNotImplementedError(
            f"{r.where}: {what} has the dtype {_UNSUPPORTED_DTYPES[flag]}, which "
            f"gradhub_compat.mxnet does not read (numpy has no such dtype; {_DOCS})"
        )
    if flag not in _DTYPES:
        raise r.fail(f"{what} has the unknown dtype flag {flag}")
    dt = _DTYPES[flag]
    count = math.prod(shape)
    raw = r.take(count * dt.itemsize, f"{what}'s data ({count} x {dt.name})")
    if flag == 7:  # bool: any nonzero byte is True
        return (np.frombuffer(raw, dtype=np.uint8) != 0).reshape(shape)
    return np.frombuffer(raw, dtype=dt).astype(dt.newbyteorder("="), copy=True).reshape(shape)


def _parse(buf: bytes | bytearray | memoryview, where: str) -> list[NDArray] | dict[str, NDArray]:
    r = _Reader(buf, where)
    header = r.number("<Q", "the header")
    if header != LIST_MAGIC:
        raise r.fail(
            f"not an mxnet NDArray file: the header is {header:#x}, expected {LIST_MAGIC:#x} "
            "(kMXAPINDArrayListMagic)"
        )
    r.number("<Q", "the reserved field")
    n = r.number("<Q", "the number of arrays")
    arrays = [_read_array(r, i) for i in range(n)]
    n_names = r.number("<Q", "the number of names")
    if n_names not in (0, n):
        raise r.fail(f"the file has {n_names} names for {n} arrays")
    names = []
    for i in range(n_names):
        length = r.number("<Q", f"the length of name {i}")
        raw = bytes(r.take(length, f"name {i}"))
        try:
            names.append(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise r.fail(f"name {i} is not UTF-8 text ({e})") from None
    # loaded onto cpu(0), as a CPU build of mxnet 1.9.1 does for any saved context
    ctx = Context("cpu", 0)
    nds = [_make(a, ctx, a.dtype) for a in arrays]
    if not names:
        return nds
    return dict(zip(names, nds))


def _fname(fname: Any, fn: str) -> str:
    if not isinstance(fname, (str, os.PathLike)):
        raise TypeError(f"{fn}: fname required to be a string, got {type(fname).__name__}")
    return os.fspath(fname)


def load(fname: str | os.PathLike[str]) -> list[NDArray] | dict[str, NDArray]:
    """The arrays of the mxnet NDArray file ``fname`` (:func:`save`; ``mx.nd.save``,
    ``net.save_parameters`` and ``mx.model.save_checkpoint`` of mxnet 1.9.1 write it): a list
    when the file has no names, else a dict name -> NDArray in the file's order, as mxnet.

    The arrays are dense and on ``cpu(0)`` whatever context they were saved from; their
    dtypes are the file's. Only parses the bytes: nothing is executed or unpickled. A missing
    file, a file in another format, a truncated file, an unknown magic, storage or dtype raise
    :class:`~.base.MXNetError` naming the file and what is wrong; sparse and bfloat16 arrays
    raise it too (also a ``NotImplementedError``).

    Example::

        >>> import os, tempfile
        >>> import gradhub_compat.mxnet as mx
        >>> with tempfile.TemporaryDirectory() as d:
        ...     f = os.path.join(d, "l.nd")
        ...     mx.nd.save(f, [mx.nd.ones((2,)), mx.nd.array([7], dtype="int64")])
        ...     a, b = mx.nd.load(f)
        >>> a.asnumpy(), b.asnumpy()
        (array([1., 1.], dtype=float32), array([7]))
    """
    path = _fname(fname, "mx.nd.load")
    try:
        with open(path, "rb") as f:
            buf = f.read()
    except FileNotFoundError:
        raise _MXNetFileNotFoundError(
            f"mx.nd.load: cannot open {path!r}: No such file or directory"
        ) from None
    return _parse(buf, f"mx.nd.load: file {path!r}")


def load_frombuffer(buf: bytes | bytearray | memoryview) -> list[NDArray] | dict[str, NDArray]:
    """The arrays of mxnet's NDArray file format held in the bytes ``buf`` (a file's
    content), as :func:`load`.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> empty = bytes.fromhex("1201" + "00" * 30)   # the file of mx.nd.save(f, [])
        >>> mx.nd.load_frombuffer(empty)
        []
    """
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(
            f"mx.nd.load_frombuffer: buf required to be bytes, got {type(buf).__name__}"
        )
    return _parse(buf, "mx.nd.load_frombuffer: the buffer")


def _entry(a: NDArray, label: str, magic: int) -> bytes:
    arr = a.asnumpy()
    flag = _FLAGS.get(arr.dtype.newbyteorder("="))
    if flag is None:
        raise _MXNetTypeError(
            f"mx.nd.save: {label} has the dtype {arr.dtype}, which mxnet's files do not hold "
            "(float16, float32, float64, uint8, int8, int32, int64, bool)"
        )
    dev = _DEVICE_FLAGS[a.context.device_type]
    head = struct.pack("<Iii", magic, 0, arr.ndim) + struct.pack(f"<{arr.ndim}q", *arr.shape)
    data = np.ascontiguousarray(arr, dtype=_DTYPES[flag]).tobytes()
    return head + struct.pack("<iii", dev, a.context.device_id, flag) + data


def _dumps(arrays: list[NDArray], names: list[str]) -> bytes:
    """The file content of ``arrays`` and ``names`` (none, or one per array)."""
    # a 0-d array is written as mxnet's numpy shape mode writes it (V3, a file mxnet reads in
    # that mode): in its default mode mxnet 1.9.1 writes one it cannot read back
    magic = V3_MAGIC if any(a.ndim == 0 for a in arrays) else V2_MAGIC
    labels = [f"array {n!r}" for n in names] or [f"array {i}" for i in range(len(arrays))]
    parts = [struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays))]
    parts += [_entry(a, label, magic) for a, label in zip(arrays, labels)]
    parts.append(struct.pack("<Q", len(names)))
    for name in names:
        raw = name.encode("utf-8")
        parts.append(struct.pack("<Q", len(raw)) + raw)
    return b"".join(parts)


def save(fname: str | os.PathLike[str], data: NDArray | list[NDArray] | dict[str, NDArray]) -> None:
    """Write ``data`` (an NDArray, a list of NDArrays or a dict str -> NDArray) to the file
    ``fname`` in mxnet 1.9.1's NDArray format, which mxnet's ``mx.nd.load`` (and Gluon's
    ``load_parameters``) reads: names are written for a dict, none for a list or one array
    (:func:`load` then returns a list). Values, shapes, dtypes and contexts are kept.

    An array of shape ``()`` makes the whole file mxnet's numpy shape mode format (magic
    0xF993FACA), which mxnet 1.9.1 reads inside ``with mx.np_shape(True):``; other files are its
    default format. Bad ``data`` raises ``TypeError``/``ValueError`` with mxnet's message.

    Example::

        >>> import pathlib, tempfile
        >>> import gradhub_compat.mxnet as mx
        >>> with tempfile.TemporaryDirectory() as d:
        ...     mx.nd.save(pathlib.Path(d, "x.nd"), mx.nd.array([1.5], dtype="float64"))
        ...     content = pathlib.Path(d, "x.nd").read_bytes()
        >>> content[:8].hex(), len(content)
        ('1201000000000000', 72)
    """
    refuse_traced(
        "nd.save()", "the file would be written once, with this call's values, not at each call"
    )
    if isinstance(data, NDArray):
        arrays, names = [data], []
    elif isinstance(data, dict):
        if any(not isinstance(k, str) for k in data) or any(
            not isinstance(v, NDArray) for v in data.values()
        ):
            raise TypeError("mx.nd.save: save only accept dict str->NDArray or list of NDArray")
        arrays, names = list(data.values()), list(data)
    elif isinstance(data, list):
        if any(not isinstance(v, NDArray) for v in data):
            raise TypeError("mx.nd.save: save only accept dict str->NDArray or list of NDArray")
        arrays, names = list(data), []
    else:
        raise ValueError(
            "mx.nd.save: data needs to either be a NDArray, dict of str, NDArray pairs or a list "
            f"of NDarrays, got {type(data).__name__}"
        )
    content = _dumps(arrays, names)
    with open(_fname(fname, "mx.nd.save"), "wb") as f:
        f.write(content)
