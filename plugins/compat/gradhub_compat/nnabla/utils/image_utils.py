"""nnabla's ``nnabla.utils.image_utils``: ``imsave``, ``imread``, ``imresize``.

nnabla's module dispatches to an image library (Pillow, OpenCV, pypng...). The layer follows
nnabla's Pillow backend: :func:`imsave` writes PNG itself (8-bit as nnabla's Pillow backend
writes it; 16-bit with ``as_uint16=True`` as nnabla's pypng backend, to which the Pillow one hands
those files), and :func:`imread` and :func:`imresize` use Pillow, imported when first called
(``pip install gradhub-compat[images]``; without it they raise ``ImportError`` naming the extra).

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

__all__ = ["imload", "imread", "imresize", "imsave", "imwrite"]

_INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")


def _pil() -> Any:
    """Pillow's ``PIL.Image``, imported on first use (an optional dependency)."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(
            "nnabla.utils.image_utils.imread/imresize need Pillow: pip install "
            "'gradhub-compat[images]' (or pip install pillow)"
        ) from None
    return Image


def _png_bytes(img: np.ndarray) -> bytes:
    """A PNG (no interlace, every row with filter 0) of a ``(H, W)`` grey, ``(H, W, 2)`` grey and
    alpha, ``(H, W, 3)`` RGB or ``(H, W, 4)`` RGBA uint8 (8-bit) or uint16 (16-bit) image."""
    colour = {2: 0, 3: {2: 4, 3: 2, 4: 6}.get(img.shape[-1], -1)}.get(img.ndim, -1)
    if colour < 0:
        raise ValueError(f"nnabla.utils.image_utils.imsave: cannot write shape {img.shape}")
    h, w = img.shape[:2]
    depth = 16 if img.dtype == np.uint16 else 8
    if depth == 16:  # big-endian samples, as PNG stores them
        rows = np.ascontiguousarray(img, dtype=">u2").reshape(h, -1).view(np.uint8)
    else:
        rows = np.ascontiguousarray(img, dtype=np.uint8).reshape(h, -1)
    raw = np.concatenate([np.zeros((h, 1), np.uint8), rows], axis=1).tobytes()

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", w, h, depth, colour, 0, 0, 0)
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
    ``channel_first``) to ``path`` as a PNG, as nnabla's backends: float data must lie in
    ``[0, 1]`` (and needs ``auto_scale``); a single channel is written as grey.

    * 8-bit (nnabla's Pillow backend): uint8 data as it is, float data as
      ``(img * 255).astype(uint8)`` (truncated); uint16 data needs ``as_uint16=True``
      (``ValueError`` otherwise, as nnabla 1.39's).
    * ``as_uint16=True``, 16-bit (nnabla's pypng backend, grey or RGB): with ``auto_scale``
      uint16 data as it is, uint8 data times 256, float data as ``(img * 65535).astype(uint16)``;
      without it, the values cast to uint16. Grey-and-alpha or RGBA data raise ``ValueError``
      (pypng's writer, as nnabla uses it, takes neither).

    Bad shapes and values raise ``ValueError``, as nnabla's.

    Example::

        >>> import os, tempfile
        >>> import numpy as np
        >>> from gradhub_compat.nnabla.utils.image_utils import imread, imsave
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "d.png")
        >>> imsave(path, np.array([[0, 1000], [40000, 65535]], np.uint16), as_uint16=True)
        >>> imread(path, as_uint16=True)
        array([[    0,  1000],
               [40000, 65535]], dtype=uint16)
        >>> tmp.cleanup()
    """
    where = "nnabla.utils.image_utils.imsave"
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
    if as_uint16:
        if img.ndim == 3 and img.shape[-1] in (2, 4):
            raise ValueError(
                f"{where}: as_uint16=True writes grey or RGB images; got {img.shape[-1]} channels"
            )
        if auto_scale and img.dtype == np.uint8:
            img = img.astype(np.uint16) * 256
        elif auto_scale and img.dtype != np.uint16:
            img = (img * 65535).astype(np.uint16)
        else:
            img = img.astype(np.uint16)
    elif img.dtype == np.uint16:
        raise ValueError(
            f"{where}: the image is uint16 but as_uint16 is False; pass as_uint16=True to write "
            "16 bits, or cast it to uint8 (values in [0, 255]) first"
        )
    elif img.dtype != np.uint8:
        img = (img * 255).astype(np.uint8)
    if img.ndim == 3 and img.shape[-1] == 1:
        img = img[..., 0]
    with open(path, "wb") as f:
        f.write(_png_bytes(img))


def _png_bit_depth(path: Any) -> int | None:
    """The bit depth a PNG file's header gives (None for other files)."""
    if hasattr(path, "read"):
        pos = path.tell()
        head = path.read(25)
        path.seek(pos)
    else:
        with open(path, "rb") as f:
            head = f.read(25)
    if len(head) == 25 and head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        return head[24]
    return None


def imread(
    path: Any,
    grayscale: bool = False,
    size: Any = None,
    interpolate: str = "bilinear",
    channel_first: bool = False,
    as_uint16: bool = False,
    num_channels: int = -1,
    return_palette_indices: bool = False,
) -> np.ndarray:
    """Read the image at ``path`` (a file name or a binary file object) as nnabla's Pillow
    backend: a uint8 array ``(H, W)`` for grey images, ``(H, W, C)`` otherwise (palette images
    as RGB, or RGBA with a transparent colour, unless ``return_palette_indices``).

    ``grayscale``: converted to grey (Pillow's "L": ITU-R 601-2 luma), with ``num_channels``
    > 0 repeated on a last axis of that size; otherwise ``num_channels`` 3 or 4 converts to RGB
    or RGBA (-1 keeps the file's). ``size=(width, height)`` resizes as :func:`imresize` with
    ``interpolate``; ``channel_first`` gives ``(C, H, W)``. A 16-bit grey PNG reads as its low
    bytes (Pillow's, as nnabla's). ``as_uint16=True`` (nnabla hands it to pypng): uint16, a
    16-bit grey PNG as it is, 8-bit images times 256; 16-bit colour PNGs raise
    ``NotImplementedError`` (Pillow reads them as 8 bits). Bad arguments raise ``ValueError``,
    as nnabla's. Needs Pillow (the extra ``images``).

    Example::

        >>> import os, tempfile
        >>> import numpy as np
        >>> from gradhub_compat.nnabla.utils.image_utils import imread, imsave
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "rgb.png")
        >>> imsave(path, np.arange(24, dtype=np.uint8).reshape(2, 4, 3))
        >>> imread(path).shape, imread(path, channel_first=True).shape
        ((2, 4, 3), (3, 2, 4))
        >>> imread(path, grayscale=True)
        array([[ 1,  4,  7, 10],
               [13, 16, 19, 22]], dtype=uint8)
        >>> tmp.cleanup()
    """
    where = "nnabla.utils.image_utils.imread"
    if num_channels not in (-1, 0, 1, 3, 4):
        raise ValueError(
            f"{where}: num_channels must be one of -1, 0, 1, 3, 4, got {num_channels!r}"
        )
    if not grayscale and num_channels in (0, 1):
        raise ValueError(
            f"{where}: with grayscale=False, num_channels must be -1, 3 or 4 (for a grey image, "
            "pass grayscale=True)"
        )
    Image = _pil()
    depth = _png_bit_depth(path)
    with Image.open(path, mode="r") as pil:
        if pil.mode == "I":
            raise ValueError(f"{where}: int32 images (Pillow mode 'I') are not supported")
        if as_uint16 and depth == 16 and pil.mode not in ("I;16", "I;16B", "I;16L"):
            raise NotImplementedError(
                f"{where}: as_uint16=True reads 16-bit grey PNG files; this one is a 16-bit "
                f"colour image (Pillow mode {pil.mode!r}), which Pillow reads as 8 bits (see "
                "docs/migration-nnabla.md)"
            )
        wide = as_uint16 and pil.mode.startswith("I;16")
        if pil.mode == "P" and not return_palette_indices:
            pil = pil.convert("RGBA" if "transparency" in pil.info else "RGB")
        if grayscale:
            if wide:
                img = np.asarray(pil).astype(np.uint16)
            else:
                img = np.asarray(pil.convert("L"))
            if num_channels > 0:
                img = np.broadcast_to(img[..., np.newaxis], img.shape + (num_channels,))
        elif num_channels == 3 and not wide:
            img = np.asarray(pil.convert("RGB"))
        elif num_channels == 4 and not wide:
            img = np.asarray(pil.convert("RGBA"))
        else:
            img = np.asarray(pil)
    if wide:
        img = np.asarray(img).astype(np.uint16)
        if not grayscale and num_channels in (3, 4):
            # (nnabla's pypng backend: the grey value in every channel, alpha too)
            img = np.broadcast_to(img[..., np.newaxis], img.shape + (num_channels,))
    else:
        img = np.asarray(img).astype(np.uint8)
        if as_uint16:  # an 8-bit image read as uint16 (nnabla's pypng backend: times 256)
            img = img.astype(np.uint16) * 256
    if size is not None:
        img = imresize(img, size, interpolate=interpolate)
    if channel_first and img.ndim == 3:
        img = img.transpose(2, 0, 1)
    return img


def _resize_plane(Image: Any, arr: np.ndarray, size: tuple[int, int], resample: Any) -> Any:
    # (a float32 plane is a Pillow "F" image, as nnabla's fromarray(arr, mode="F") makes it)
    return np.asarray(Image.fromarray(arr).resize(size, resample=resample))


def imresize(
    img: Any, size: Any, interpolate: str = "bilinear", channel_first: bool = False
) -> np.ndarray:
    """Resize ``img`` (``(H, W)`` or ``(H, W, C)``; ``(C, H, W)`` with ``channel_first``) to
    ``size=(width, height)`` with Pillow, as nnabla's Pillow backend: ``interpolate`` one of
    "nearest", "bilinear", "bicubic", "hamming", "box", "lanczos"; uint8 images resized as
    Pillow images (per channel set), others channel by channel in float32 ("F" images) and
    returned as uint16 for uint16 input, float32 otherwise (also for float64 input, as
    nnabla's). A single pixel is first spread to 2 x 2, as nnabla's. Bad arguments raise
    ``ValueError``, as nnabla's. Needs Pillow (the extra ``images``).

    Example::

        >>> import numpy as np
        >>> from gradhub_compat.nnabla.utils.image_utils import imresize
        >>> img = np.array([[0, 100], [200, 250]], np.uint8)
        >>> imresize(img, (4, 2), interpolate="nearest")
        array([[  0,   0, 100, 100],
               [200, 200, 250, 250]], dtype=uint8)
    """
    where = "nnabla.utils.image_utils.imresize"
    if not isinstance(img, np.ndarray):
        raise ValueError(f"{where}: the input img must be a numpy.ndarray, got {type(img)}")
    if not isinstance(size, (list, tuple)):
        raise ValueError(f"{where}: size must be a list or a tuple (width, height), got {size!r}")
    if img.ndim not in (2, 3):
        raise ValueError(f"{where}: invalid dimension size of the image (dims: {img.ndim})")
    if interpolate not in _INTERPOLATIONS:
        raise ValueError(
            f"{where}: unknown interpolation type {interpolate!r}; one of "
            f"[{', '.join(_INTERPOLATIONS)}]"
        )
    Image = _pil()
    if img.dtype not in (np.uint8, np.uint16):
        img = np.asarray(img, np.float32)
    if channel_first and img.ndim == 3:
        img = img.transpose(1, 2, 0)
    if img.ndim == 3 and img.shape[0] * img.shape[1] == 1:
        img = (img * np.ones((2, 2, 1))).astype(img.dtype)
    size = (int(size[0]), int(size[1]))
    resample = getattr(Image.Resampling, interpolate.upper())
    expand = img.ndim == 3 and img.shape[-1] == 1
    if expand:
        img = img.reshape(img.shape[0], img.shape[1])
    if img.dtype == np.uint8:
        out = _resize_plane(Image, img, size, resample)
    else:
        dtype = img.dtype
        f32 = np.asarray(img, np.float32)
        if f32.ndim == 3:
            planes = [
                _resize_plane(Image, f32[..., i], size, resample) for i in range(f32.shape[-1])
            ]
            out = np.stack(planes, axis=2)
        else:
            out = _resize_plane(Image, f32, size, resample)
        out = np.asarray(out, dtype)
    if expand:
        out = out[..., np.newaxis]
    if channel_first and out.ndim == 3:
        out = out.transpose(2, 0, 1)
    return np.asarray(out)


#: nnabla's aliases
imwrite = imsave
imload = imread
