"""Helpers shared by the tests of the nnabla layer: Variables from values (``_var`` keeps numpy's
dtype, ``_var64`` makes float64) and the pixels of a PNG file (``png_pixels``)."""

from __future__ import annotations

import struct
import zlib

import gradhub_compat.nnabla as nn
import numpy as np


def _var(values: list[float], need_grad: bool = True) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.array(values), need_grad=need_grad)


def _var64(values: object, need_grad: bool = True) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.array(values, dtype=np.float64), need_grad=need_grad)


def png_pixels(path: str) -> np.ndarray:
    """The pixels of an 8-bit, non-interlaced PNG (any row filter), shaped (H, W) or (H, W, C)."""
    with open(path, "rb") as f:
        data = f.read()
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert header is not None and header[2] == 8 and header[6] == 0, header
    w, h, _, colour = header[:4]
    c = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + w * c)
    out = np.zeros((h, w * c), np.int64)
    prev = np.zeros(w * c, np.int64)
    for y in range(h):
        ft, line = raw[y, 0], raw[y, 1:].astype(np.int64)
        row = np.zeros(w * c, np.int64)
        for x in range(w * c):
            a = row[x - c] if x >= c else 0
            b = prev[x]
            cc = prev[x - c] if x >= c else 0
            if ft == 0:
                pred = 0
            elif ft == 1:
                pred = a
            elif ft == 2:
                pred = b
            elif ft == 3:
                pred = (a + b) // 2
            else:
                p = a + b - cc
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - cc)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else cc)
            row[x] = (line[x] + pred) & 255
        out[y] = prev = row
    return out.reshape(h, w, c)[..., 0] if c == 1 else out.reshape(h, w, c)
