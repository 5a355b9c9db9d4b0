"""nnabla's ``nnabla.utils.image_utils``: ``imsave`` writes 8-bit PNG files; ``imread`` and
``imresize`` are not provided.

nnabla's module dispatches to an image library (Pillow, OpenCV, pypng...). The layer depends on
none: :func:`imsave` writes PNG itself (the pixels nnabla's Pillow backend writes: uint8 data as
it is, float data in ``[0, 1]`` as ``(img * 255).astype(uint8)``), and :func:`imread` and
:func:`imresize` raise ``NotImplementedError`` (see docs/migration-nnabla.md, 'Monitors and data
iterators'); read and resize with an image library.

Example::

    >>> import os, tempfile
    >>> import numpy as np
    >>> from gradhub_compat.nnabla.utils.image_utils import imsave
    >>> tmp = tempfile.TemporaryDirectory()
    >>> imsave(os.path.join(tmp.name, "x.png"), np.linspace(0, 1, 12).reshape(3, 4))
    >>> with open(os.path.join(tmp.name, "x.png"), "rb") as f:
    ...     f.read(4)
    b'\\x89PNG'
    >>> tmp.cleanup()
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

__all__ = ["imread", "imresize", "imsave"]

_DOCS = "see docs/migration-nnabla.md, 'Monitors and data iterators'"


def _png_bytes(img: np.ndarray) -> bytes:
    """An 8-bit PNG (no interlace, every row with filter 0) of a ``(H, W)`` grey, ``(H, W, 2)``
    grey and alpha, ``(H, W, 3)`` RGB or ``(H, W, 4)`` RGBA uint8 image."""
    colour = {2: 0, 3: {2: 4, 3: 2, 4: 6}.get(img.shape[-1], -1)}.get(img.ndim, -1)
    if colour < 0:
        raise ValueError(f"nnabla.utils.image_utils.imsave: cannot write shape {img.shape}")
    h, w = img.shape[:2]
    rows = np.ascontiguousarray(img, dtype=np.uint8).reshape(h, -1)
    raw = np.concatenate([np.zeros((h, 1), np.uint8), rows], axis=1).tobytes()

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def imsave(
    path: str,
    img: Any,
    channel_first: bool = False,
    as_uint16: bool = False,
    auto_scale: bool = True,
    **kwargs: Any,
) -> None:
    """Write ``img`` (``(H, W)``, or ``(H, W, C)`` with ``C`` 1 to 4; ``(C, H, W)`` with
    ``channel_first``) to ``path`` as an 8-bit PNG, as nnabla's Pillow backend: uint8 data as it
    is, uint16 data cast to uint8, float data (``auto_scale`` required) checked to lie in
    ``[0, 1]`` and written as ``(img * 255).astype(uint8)`` (truncated); a single channel is
    written as grey. ``as_uint16=True`` raises ``NotImplementedError``; bad shapes and values
    raise ``ValueError``, as nnabla's."""
    where = "nnabla.utils.image_utils.imsave"
    if as_uint16:
        raise NotImplementedError(f"{where}: as_uint16=True is not supported ({_DOCS})")
    if not isinstance(img, np.ndarray):
        raise ValueError(f"{where}: the input img must be a numpy.ndarray, got {type(img)}")
    if img.ndim not in (2, 3):
        raise ValueError(f"{where}: invalid dimension size of the image (dims: {img.ndim})")
    if img.dtype not in (np.uint8, np.uint16):
        if not auto_scale:
            raise ValueError(f"{where}: an image of float values needs auto_scale=True")
        if np.any(img < 0) or np.any(img > 1):
            raise ValueError(
                f"{where}: except for uint8 or uint16, all the pixel values of the image must "
                "be in the range of [0, 1]"
            )
        img = np.asarray(img, np.float32)
    if channel_first and img.ndim == 3:
        img = img.transpose(1, 2, 0)
    if img.ndim == 3 and img.shape[-1] not in (1, 2, 3, 4):
        raise ValueError(f"{where}: invalid channel size of the image ({img.shape[-1]})")
    if img.dtype != np.uint8:
        img = (img * 255).astype(np.uint8) if img.dtype != np.uint16 else img.astype(np.uint8)
    if img.ndim == 3 and img.shape[-1] == 1:
        img = img[..., 0]
    with open(path, "wb") as f:
        f.write(_png_bytes(img))


def imread(path: str, *args: Any, **kwargs: Any) -> Any:
    """Not provided: raises ``NotImplementedError`` (reading images needs an image library)."""
    raise NotImplementedError(
        f"nnabla.utils.image_utils.imread: reading images needs an image library that this "
        f"layer does not depend on ({_DOCS})"
    )


def imresize(img: Any, size: Any, *args: Any, **kwargs: Any) -> Any:
    """Not provided: raises ``NotImplementedError`` (resizing needs an image library)."""
    raise NotImplementedError(
        f"nnabla.utils.image_utils.imresize: resizing images needs an image library that this "
        f"layer does not depend on ({_DOCS})"
    )
