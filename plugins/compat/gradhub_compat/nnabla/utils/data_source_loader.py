"""nnabla's readers of dataset files: ``from gradhub_compat.nnabla.utils.data_source_loader
import load, FileReader`` (``nnabla.utils.data_source_loader``).

:class:`FileReader` opens local files, names relative to a base path (a CSV file's folder);
``load(ext)`` gives the reader of one file type, called as ``load(ext)(file, normalize=...)``
on an open binary file:

* images (``.png``, ``.jpg``, ``.jpeg``, ``.bmp``, ``.gif``, ``.tif``, ``.tiff``) with
  :func:`~gradhub_compat.nnabla.utils.image_utils.imread` (Pillow): ``(C, H, W)`` (grey
  images ``(1, H, W)``), uint8 as read, or with ``normalize`` float64 ``value / 255``;
* ``.csv``: the rows of numbers as a float64 array (``(rows, columns)``);
* ``.npy``: ``numpy.load`` with ``allow_pickle=False`` (nnabla allows pickles; an object
  array raises ``ValueError`` here, so that loading never runs code from a file).

What differs from nnabla 1.39: URLs (``http://``, ``https://``, ``s3://``) raise
``NotImplementedError`` (this layer reads local files only; nothing is downloaded); ``.wav``
and ``.dcm`` files and the h5 caches of ``FileReader.open_cache`` raise
``NotImplementedError`` (see docs/migration-nnabla.md, 'Monitors and data iterators'). Other
extensions raise nnabla's ``ValueError``.

Example::

    >>> import os, tempfile
    >>> import numpy as np
    >>> from gradhub_compat.nnabla.utils.data_source_loader import FileReader, load
    >>> tmp = tempfile.TemporaryDirectory()
    >>> with open(os.path.join(tmp.name, "v.csv"), "w") as f:
    ...     _ = f.write("1,2\\n3,4\\n")
    >>> reader = FileReader(os.path.join(tmp.name, "index.csv"))
    >>> with reader.open("v.csv") as f:
    ...     load(f.ext)(f)
    array([[1., 2.],
           [3., 4.]])
    >>> tmp.cleanup()
"""

from __future__ import annotations

import contextlib
import csv
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy

from .image_utils import imread, imresize

__all__ = [
    "FileReader",
    "load",
    "load_csv",
    "load_image",
    "load_image_imread",
    "load_npy",
]

DOCS = "see docs/migration-nnabla.md, 'Monitors and data iterators'"


def _is_url(uri: str) -> bool:
    low = uri[:8].lower()
    return low.startswith(("http://", "https://", "s3://"))


class FileReader:
    """Local files named relative to ``base_uri`` (nnabla's ``FileReader``).

    ``open(filename=None, textmode=False, encoding="utf-8-sig")`` is a context manager
    yielding the open file (``base_uri`` itself when ``filename`` is None, else ``filename``
    relative to the folder of ``base_uri``, backslashes read as slashes), with its lowercased
    extension in ``f.ext``; ``listdir()`` lists the ``.h5`` files of the folder ``base_uri``.
    A ``http://``, ``https://`` or ``s3://`` ``base_uri`` raises ``NotImplementedError``.
    """

    def __init__(self, base_uri: str) -> None:
        if not isinstance(base_uri, (str, os.PathLike)):
            raise TypeError(
                f"nnabla.utils.data_source_loader.FileReader: base_uri must be a path, got "
                f"{type(base_uri).__name__}"
            )
        base_uri = os.fspath(base_uri)
        if _is_url(base_uri):
            raise NotImplementedError(
                f"nnabla.utils.data_source_loader.FileReader: {base_uri!r} is a URL; only local "
                f"files are read ({DOCS}); download the dataset first"
            )
        self._base_uri = base_uri
        self.base_ext = os.path.splitext(self._base_uri)[1].lower()
        self._file_type = "file"

    def _path(self, filename: str | None) -> str:
        if filename is None:
            return self._base_uri
        filename = os.fspath(filename)
        if _is_url(filename):
            raise NotImplementedError(
                f"nnabla.utils.data_source_loader.FileReader.open: {filename!r} is a URL; only "
                f"local files are read ({DOCS})"
            )
        return os.path.abspath(
            os.path.join(
                os.path.dirname(self._base_uri.replace("\\", "/")), filename.replace("\\", "/")
            )
        )

    @contextlib.contextmanager
    def open(
        self, filename: str | None = None, textmode: bool = False, encoding: str = "utf-8-sig"
    ) -> Iterator[Any]:
        """Open ``filename`` (relative to ``base_uri``'s folder; ``base_uri`` when None)."""
        path = self._path(filename)
        f: Any = open(path, encoding=encoding) if textmode else open(path, "rb")
        try:
            f.ext = os.path.splitext(path)[1].lower()
            yield f
        finally:
            f.close()

    def open_cache(self, cache_name: str) -> Any:
        """nnabla's reader of ``.h5`` cache files: not supported (``NotImplementedError``)."""
        raise NotImplementedError(
            f"nnabla.utils.data_source_loader.FileReader.open_cache: cache files are not "
            f"supported ({DOCS})"
        )

    def listdir(self) -> list[str]:
        """The ``.h5`` files of the folder ``base_uri``, sorted."""
        return [
            f for f in sorted(os.listdir(self._base_uri)) if os.path.splitext(f)[1].lower() == ".h5"
        ]


def load_image_imread(file: Any, shape: Any = None, max_range: float = 1.0) -> numpy.ndarray:
    """An image file as ``(C, H, W)`` (nnabla's): read by ``imread`` (uint8), resized when
    ``shape=(C, H, W)`` differs from the file's size, then scaled to ``[0, max_range]``
    (``img * (max_range / 255)``, float64; ``max_range < 0`` or 255: the uint8 values).

    A grey image is resized as nnabla 1.39 does it: ``imresize(img, (H, W))`` (``imresize``
    takes ``(width, height)``), reshaped to ``(1, H, W)``, so the same values as nnabla's. A
    colour image is resized to ``(W, H)`` (nnabla 1.39 raises ``TypeError`` there). A
    ``shape`` with another number of channels raises ``ValueError`` (nnabla: an assertion)."""
    orig_img = imread(file)
    if orig_img.ndim == 2:
        height, width = orig_img.shape
        if shape is None:
            out_height, out_width, out_n_color = height, width, 1
        else:
            out_n_color, out_height, out_width = shape
        if out_n_color != 1:
            raise ValueError(
                f"nnabla.utils.data_source_loader.load_image: shape {tuple(shape)} asks for "
                f"{out_n_color} channels of a grey image"
            )
        if out_height != height or out_width != width:
            # (nnabla passes (height, width) where imresize takes (width, height); kept)
            orig_img = imresize(orig_img, (out_height, out_width))
        orig_img = orig_img.reshape((out_n_color, out_height, out_width))
    else:
        height, width, n_color = orig_img.shape
        if shape is None:
            out_height, out_width, out_n_color = height, width, n_color
        else:
            out_n_color, out_height, out_width = shape
        if out_n_color != n_color:
            raise ValueError(
                f"nnabla.utils.data_source_loader.load_image: shape {tuple(shape)} asks for "
                f"{out_n_color} channels of an image with {n_color}"
            )
        if out_height != height or out_width != width:
            # (nnabla 1.39 hands imresize (height, width, channels) here, which fails with a
            # TypeError; resized to (width, height) here)
            orig_img = imresize(orig_img, (out_width, out_height))
        orig_img = orig_img.transpose(2, 0, 1)
    if max_range < 0:
        return orig_img
    if orig_img.dtype == numpy.uint16:
        return orig_img if max_range == 65535.0 else orig_img * (max_range / 65535.0)
    return orig_img if max_range == 255.0 else orig_img * (max_range / 255.0)


def load_image(file: Any, shape: Any = None, normalize: bool = False) -> numpy.ndarray:
    """An image file as ``(C, H, W)``: uint8, or with ``normalize`` float64 in ``[0, 1]``
    (``value / 255``), as nnabla's (Pillow backend).

    Example::

        >>> import io
        >>> import numpy as np
        >>> from gradhub_compat.nnabla.utils.image_utils import imsave
        >>> from gradhub_compat.nnabla.utils.data_source_loader import load_image
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "a.png")
        >>> imsave(path, np.array([[0, 51], [102, 255]], np.uint8))
        >>> with open(path, "rb") as f:
        ...     load_image(f, normalize=True)
        array([[[0. , 0.2],
                [0.4, 1. ]]])
        >>> tmp.cleanup()
    """
    return load_image_imread(file, shape, 1.0 if normalize else -1)


def load_csv(file: Any, shape: Any = None, normalize: bool = False) -> numpy.ndarray:
    """A CSV file of numbers (an open binary file) as a float64 array, one row per non-empty
    line, reshaped to ``shape`` when given (nnabla's; ``normalize`` is unused)."""
    value_list = []
    for row in csv.reader([line.decode("utf-8") for line in file.readlines()]):
        if len(row):
            try:
                value_list.append([float(v) for v in row])
            except ValueError as e:
                name = getattr(file, "name", "the file")
                raise ValueError(f"nnabla.utils.data_source_loader.load_csv: {name}: {e}") from None
    if shape is None:
        return numpy.array(value_list)
    return numpy.array(value_list).reshape(shape)


def load_npy(path: Any, shape: Any = None, normalize: bool = False) -> numpy.ndarray:
    """A ``.npy`` file (a path or an open binary file), reshaped to ``shape`` when given.
    Pickled (object) arrays raise ``ValueError``: nothing is unpickled."""
    try:
        arr = numpy.load(path, allow_pickle=False)
    except ValueError as e:
        raise ValueError(
            f"nnabla.utils.data_source_loader.load_npy: {e} (object arrays are not loaded: "
            "loading never unpickles)"
        ) from None
    return arr if shape is None else arr.reshape(shape)


def _unsupported(kind: str) -> Callable[..., numpy.ndarray]:
    def loader(file: Any, shape: Any = None, normalize: bool = False) -> numpy.ndarray:
        raise NotImplementedError(
            f"nnabla.utils.data_source_loader.load: {kind} files are not supported ({DOCS})"
        )

    return loader


_load_functions: dict[str, Callable[..., numpy.ndarray]] = {
    ".bmp": load_image,
    ".jpg": load_image,
    ".jpeg": load_image,
    ".png": load_image,
    ".gif": load_image,
    ".tif": load_image,
    ".tiff": load_image,
    ".dcm": _unsupported("DICOM (.dcm)"),
    ".csv": load_csv,
    ".npy": load_npy,
    ".wav": _unsupported("audio (.wav)"),
}


def load(ext: str) -> Callable[..., numpy.ndarray]:
    """The reader of files with extension ``ext`` (``".png"``, ``".csv"``, ``".npy"``...),
    called as ``load(ext)(file, shape=None, normalize=False)``; an unknown extension raises
    ``ValueError`` as nnabla's."""
    if ext in _load_functions:
        return _load_functions[ext]
    raise ValueError(f'File format with extension "{ext}" is not supported.')
