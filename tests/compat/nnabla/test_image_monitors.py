"""``MonitorImage``, ``MonitorImageTile`` and ``utils.image_utils.imsave``: the files nnabla
1.39 writes for the same calls (names, flush indices, image shapes and pixels; the pixels are
also checked against numpy's ``(normalize(x) * 255).astype(uint8)`` of the tiled batch). The
PNG files are decoded by ``helpers.png_pixels`` (every row filter)."""

from __future__ import annotations

import os
from pathlib import Path

import gradhub_compat.nnabla as nn
import numpy as np
import pytest
from compat.nnabla.helpers import png_pixels
from gradhub_compat.nnabla.monitor import Monitor, MonitorImage, MonitorImageTile, tile_images
from gradhub_compat.nnabla.utils.image_utils import imsave

HERE = Path(__file__).parent


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.RandomState(0)
    return {
        "g": rng.randn(20, 1, 7, 5),
        "rgb": rng.randn(6, 3, 4, 6),
        "two": rng.randn(3, 2, 4, 4),
        "five": rng.randn(2, 2, 5, 3, 4, 4),
    }


def _write(tmp_path: Path) -> Monitor:
    m = Monitor(str(tmp_path))
    for cls in (MonitorImage, MonitorImageTile):
        for k, x in _inputs().items():
            mi = cls(f"{cls.__name__} {k}", m, interval=3, num_images=7, verbose=False)
            for i in range(6):
                mi.add(i, x * (i + 1))
    return m


def _normalized(x: np.ndarray, n: int) -> np.ndarray:
    data = x.reshape(-1, *x.shape[-3:])[:n]
    data = (data - data.min()) / (data.max() - data.min())
    if data.shape[1] == 2:
        data = np.concatenate([data, np.ones((data.shape[0], 1) + data.shape[-2:])], axis=1)
    return data


def test_image_monitor_files_as_nnabla(tmp_path: Path) -> None:
    # regression: MonitorImage and MonitorImageTile raised NotImplementedError
    _write(tmp_path)
    # nnabla 1.39: flushes at 0 and where (index + 1) % interval == 0; num_images per flush
    for k, n in (("g", 7), ("rgb", 6), ("two", 3), ("five", 7)):
        files = sorted(os.listdir(tmp_path / f"MonitorImage-{k}"))
        assert files == [f"{i:06d}-{j:03d}.png" for i in (0, 2, 5) for j in range(n)]
        assert sorted(os.listdir(tmp_path / f"MonitorImageTile-{k}")) == [
            "000000.png",
            "000002.png",
            "000005.png",
        ]
    # nnabla 1.39 (decoded with Pillow): mode, shape, pixel sum, first pixels
    expected = {
        "MonitorImageTile-g/000002.png": ((24, 18), 32696, [223, 152, 182, 247, 228, 0]),
        "MonitorImageTile-rgb/000005.png": ((15, 21, 3), 49556, [50, 43, 33, 60, 75, 127]),
        "MonitorImageTile-two/000000.png": ((10, 10, 3), 25766, [184, 210, 255, 165, 118, 255]),
        "MonitorImage-five/000005-006.png": ((4, 4, 3), 6683, [139, 80, 115, 130, 147, 186]),
        "MonitorImage-two/000002-001.png": ((4, 4, 3), 8884, [185, 255, 255, 152, 130, 255]),
    }
    for path, (shape, total, head) in expected.items():
        px = png_pixels(str(tmp_path / path))
        assert px.shape == shape, path
        assert int(px.sum()) == total, path
        assert px.ravel()[:6].tolist() == head, path


def test_image_monitor_pixels_are_the_formula(tmp_path: Path) -> None:
    _write(tmp_path)
    for k, x in _inputs().items():
        for i in (0, 2, 5):
            data = _normalized(x * (i + 1), 7)
            tile = (tile_images(data) * 255).astype(np.uint8)
            got = png_pixels(str(tmp_path / f"MonitorImageTile-{k}" / f"{i:06d}.png"))
            np.testing.assert_array_equal(got, tile)
            for j in range(min(7, data.shape[0])):
                img = (data[j].transpose(1, 2, 0).astype(np.float32) * 255).astype(np.uint8)
                got = png_pixels(str(tmp_path / f"MonitorImage-{k}" / f"{i:06d}-{j:03d}.png"))
                np.testing.assert_array_equal(got, img[..., 0] if img.shape[-1] == 1 else img)


def test_image_monitor_takes_variables_and_normalize_method(tmp_path: Path) -> None:
    m = Monitor(str(tmp_path))
    mi = MonitorImageTile("norm", m, interval=1, normalize_method=lambda x: (x + 1) / 2.0)
    assert (tmp_path / "norm").is_dir()  # made by the constructor, as nnabla's
    mi.add(0, nn.Variable.from_numpy_array(np.full((2, 1, 3, 3), 0.5)))
    px = png_pixels(str(tmp_path / "norm" / "000000.png"))
    assert px.shape == (8, 8)  # nnabla 1.39: 'L' (8, 8), sum 3438, starts 191 191 191 0
    assert int(px.sum()) == 3438
    assert px.ravel()[:4].tolist() == [191, 191, 191, 0]
    # values outside [0, 1] after normalization: ValueError, as nnabla's imsave
    with pytest.raises(ValueError, match=r"range of \[0, 1\]"):
        mi.add(1, np.full((2, 1, 3, 3), 1.5))
    # between flushes nothing is read or written
    mi3 = MonitorImageTile("every 3", m, interval=3, normalize_method=lambda x: (x + 1) / 2.0)
    mi3.add(1, np.full((2, 1, 3, 3), 1.5))
    assert os.listdir(tmp_path / "every-3") == []


def test_imsave_uint8_float_and_errors(tmp_path: Path) -> None:
    a = np.arange(12, dtype=np.uint8).reshape(3, 4)
    imsave(str(tmp_path / "a.png"), a)
    np.testing.assert_array_equal(png_pixels(str(tmp_path / "a.png")), a)
    f = np.linspace(0, 1, 24).reshape(2, 3, 4)  # channel_first: (C, H, W)
    imsave(str(tmp_path / "f.png"), f[:2].transpose(1, 2, 0), auto_scale=True)
    imsave(str(tmp_path / "c.png"), np.linspace(0, 1, 36).reshape(3, 3, 4), channel_first=True)
    got = png_pixels(str(tmp_path / "c.png"))
    want = np.linspace(0, 1, 36).reshape(3, 3, 4).transpose(1, 2, 0).astype(np.float32) * 255
    np.testing.assert_array_equal(got, want.astype(np.uint8))
    with pytest.raises(ValueError, match="auto_scale"):
        imsave(str(tmp_path / "x.png"), f[0], auto_scale=False)
    with pytest.raises(ValueError, match="dimension"):
        imsave(str(tmp_path / "x.png"), np.zeros((1, 2, 2, 2), np.uint8))
    # as_uint16=True, imread and imresize: test_image_utils_read.py
