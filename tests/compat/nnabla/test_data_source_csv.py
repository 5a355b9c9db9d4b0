"""``gradhub_compat.nnabla.utils.data_iterator.data_iterator_csv_dataset``,
``data_source_implements.CsvDataSource`` and ``data_source_loader``: nnabla's dataset CSV
layout (images, numbers, ``NAME__INDEX`` columns, CSV files, comment columns), the batches and
their order for a seeded ``rng`` with and without the memory cache (against nnabla 1.39's run of
the same calls with ``use_thread=False, with_file_cache=False``), ``normalize``, and the
refusals (URLs, pickled ``.npy`` files, file caches)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from gradhub_compat.nnabla.config import nnabla_config
from gradhub_compat.nnabla.utils.data_iterator import DataIterator, data_iterator_csv_dataset
from gradhub_compat.nnabla.utils.data_source_implements import CacheDataSource, CsvDataSource
from gradhub_compat.nnabla.utils.data_source_loader import FileReader, load, load_image
from gradhub_compat.nnabla.utils.image_utils import imsave

pytest.importorskip("PIL")

BASE = np.arange(12).reshape(1, 3, 4) * 3


def _png_dataset(d: Path) -> str:
    """7 grey 3x4 PNGs, image n = arange(12) * 3 + 7 n, label n; a comment column."""
    lines = ["x:image,y:label,#c"]
    for n in range(7):
        imsave(str(d / f"i{n}.png"), (BASE[0] + n * 7).astype(np.uint8))
        lines.append(f"i{n}.png,{n},zz")
    path = d / "a.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _labels(di: DataIterator, n: int) -> tuple[list[list[int]], list[int]]:
    labels, epochs = [], []
    for _ in range(n):
        x, y = di.next()
        # the image of each example is that of its label (an independent formula)
        want = (BASE[None] + 7 * y.reshape(-1, 1, 1, 1)).astype(np.float64)
        if x.dtype == np.uint8:
            np.testing.assert_array_equal(x, want)
        else:
            assert x.dtype == np.float64
            np.testing.assert_allclose(x, want / 255.0, rtol=1e-15)
        assert x.shape == (3, 1, 3, 4) and y.shape == (3, 1) and y.dtype == np.float64
        labels.append(y[:, 0].astype(int).tolist())
        epochs.append(di.epoch)
    return labels, epochs


# nnabla 1.39: data_iterator_csv_dataset(a.csv, 3, shuffle=True, rng=RandomState(5), ...)
# (WITH_CACHE is also nnabla's with its default with_file_cache=True: the memory cache serves)
WITH_CACHE = [[6, 2, 4], [1, 0, 5], [3, 6, 2], [4, 1, 0], [5, 3, 1], [5, 3, 0]]
WITHOUT_CACHE = [[5, 1, 4], [2, 0, 3], [6, 2, 5], [6, 3, 0], [1, 4, 6], [0, 5, 2]]


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize(
    ("with_memory_cache", "want"), [(True, WITH_CACHE), (False, WITHOUT_CACHE)]
)
def test_csv_dataset_batches_as_nnabla(
    tmp_path: Path, normalize: bool, with_memory_cache: bool, want: list[list[int]]
) -> None:
    path = _png_dataset(tmp_path)
    with data_iterator_csv_dataset(
        path,
        3,
        shuffle=True,
        rng=np.random.RandomState(5),
        normalize=normalize,
        with_memory_cache=with_memory_cache,
    ) as di:
        assert di.variables == ("x", "y") and di.size == 7
        assert _labels(di, 6) == (want, [0, 0, 1, 1, 2, 2])  # nnabla 1.39


def test_buffer_size_from_nnabla_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _png_dataset(tmp_path)
    monkeypatch.setitem(nnabla_config["DATA_ITERATOR"], "data_source_buffer_max_size", "100")
    di = data_iterator_csv_dataset(path, 3, shuffle=True, rng=np.random.RandomState(5))
    assert not di._data_source._on_memory
    # nnabla 1.39 with the same setting: read through, the source's orders
    assert _labels(di, 6) == (WITHOUT_CACHE, [0, 0, 1, 1, 2, 2])


def test_numbers_indexed_columns_and_csv_files(tmp_path: Path) -> None:
    rows = ["x__0:a,x__1:b,t,v"]
    for n in range(5):
        (tmp_path / f"v{n}.csv").write_text(f"{n},{n + 0.5}\n{2 * n},{3 * n}\n")
        rows.append(f"{n * 1.5},{-n},{n % 2},v{n}.csv")
    (tmp_path / "b.csv").write_text("\n".join(rows) + "\n")
    di = data_iterator_csv_dataset(str(tmp_path / "b.csv"), 2)
    assert di.variables == ("x", "t", "v")
    batches = [[a.tolist() for a in di.next()] for _ in range(3)]
    assert batches == [  # nnabla 1.39
        [
            [[0.0, 0.0], [1.5, -1.0]],
            [[0.0], [1.0]],
            [[[0.0, 0.5], [0.0, 0.0]], [[1.0, 1.5], [2.0, 3.0]]],
        ],
        [
            [[3.0, -2.0], [4.5, -3.0]],
            [[0.0], [1.0]],
            [[[2.0, 2.5], [4.0, 6.0]], [[3.0, 3.5], [6.0, 9.0]]],
        ],
        [
            [[6.0, -4.0], [0.0, 0.0]],
            [[0.0], [0.0]],
            [[[4.0, 4.5], [8.0, 12.0]], [[0.0, 0.5], [0.0, 0.0]]],
        ],
    ]
    assert di.epoch == 1


def test_rgb_images_are_channel_first(tmp_path: Path) -> None:
    lines = ["x:image,y"]
    for n in range(3):
        imsave(
            str(tmp_path / f"r{n}.png"), (np.arange(24).reshape(2, 4, 3) * 5 + n).astype(np.uint8)
        )
        lines.append(f"r{n}.png,{n}")
    (tmp_path / "rgb.csv").write_text("\n".join(lines) + "\n")
    x, y = data_iterator_csv_dataset(str(tmp_path / "rgb.csv"), 2).next()
    want = np.stack([(np.arange(24).reshape(2, 4, 3) * 5 + n).transpose(2, 0, 1) for n in (0, 1)])
    assert x.shape == (2, 3, 2, 4) and x.dtype == np.float64
    np.testing.assert_allclose(x, want / 255.0, rtol=1e-15)
    assert y.tolist() == [[0.0], [1.0]]


def test_csv_data_source_orders_and_header(tmp_path: Path) -> None:
    path = _png_dataset(tmp_path)
    ds = CsvDataSource(path, shuffle=True, rng=np.random.RandomState(7))
    # the constructor's reset draws the first order: rng.permutation(7), then one per reset
    rng = np.random.RandomState(7)
    assert ds.variables == ("x", "y") and ds.size == 7
    assert ds._order == list(rng.permutation(7))
    ds.reset()
    assert ds._order == list(rng.permutation(7))
    x, y = ds.next()
    assert y == [float(ds._order[0])] and x.dtype == np.uint8 and x.shape == (1, 3, 4)
    plain = CsvDataSource(path)
    assert [plain.next()[1] for _ in range(3)] == [[0.0], [1.0], [2.0]]


def test_load_image_shape_and_loaders(tmp_path: Path) -> None:
    _png_dataset(tmp_path)
    with open(tmp_path / "i1.png", "rb") as f:
        img = load_image(f)
    np.testing.assert_array_equal(img, BASE + 7)
    arr = np.arange(6.0).reshape(2, 3)
    np.save(tmp_path / "a.npy", arr)
    reader = FileReader(str(tmp_path / "index.csv"))
    with reader.open("a.npy") as f:
        assert f.ext == ".npy"
        np.testing.assert_array_equal(load(f.ext)(f), arr)
    with reader.open("sub\\..\\a.npy") as f:  # backslashes read as slashes, as nnabla's
        np.testing.assert_array_equal(load(".npy")(f, shape=(3, 2)), arr.reshape(3, 2))


def test_refusals(tmp_path: Path) -> None:
    path = _png_dataset(tmp_path)
    with pytest.raises(NotImplementedError, match=r"data_iterator_csv_dataset: with_file_cache"):
        data_iterator_csv_dataset(path, 2, with_file_cache=True)
    for url in ("http://example.com/a.csv", "https://x/a.csv", "s3://bucket/a.csv"):
        with pytest.raises(NotImplementedError, match="is a URL; only local files"):
            data_iterator_csv_dataset(url, 2)
    with pytest.raises(ValueError, match=r'extension "\.txt" is not supported'):
        load(".txt")
    with pytest.raises(NotImplementedError, match=r"audio \(.wav\) files are not supported"):
        load(".wav")(None)
    np.save(tmp_path / "o.npy", np.array([{"a": 1}], dtype=object))
    with open(tmp_path / "o.npy", "rb") as f, pytest.raises(ValueError, match="never unpickles"):
        load(".npy")(f)
    (tmp_path / "missing.csv").write_text("x:image,y\nnone.png,0\n")
    ds = CsvDataSource(str(tmp_path / "missing.csv"))
    with pytest.raises(FileNotFoundError):
        ds.next()
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match=r"CsvDataSource: .* is empty"):
        CsvDataSource(str(tmp_path / "empty.csv"))
    with pytest.raises(NotImplementedError, match="CacheDataSource: cache folders"):
        CacheDataSource(str(tmp_path))
    with pytest.raises(ValueError, match="data_iterator_csv_dataset: batch_size must be positive"):
        data_iterator_csv_dataset(path, 0)
    assert sorted(os.listdir(tmp_path))[0] == "a.csv"


def test_load_image_resizes_to_a_shape(tmp_path: Path) -> None:
    from gradhub_compat.nnabla.utils.image_utils import imresize

    grey = (np.arange(12).reshape(3, 4) * 20).astype(np.uint8)
    imsave(str(tmp_path / "g.png"), grey)
    with open(tmp_path / "g.png", "rb") as f:
        got = load_image(f, shape=(1, 3, 5))
    # nnabla 1.39 (imresize(img, (3, 5)), reshaped to (1, 3, 5))
    assert got.tolist() == [
        [[6, 30, 54, 38, 62], [86, 86, 110, 134, 134], [158, 182, 166, 190, 214]]
    ]
    rgb = (np.arange(24).reshape(2, 4, 3) * 10).astype(np.uint8)
    imsave(str(tmp_path / "c.png"), rgb)
    with open(tmp_path / "c.png", "rb") as f:
        got = load_image(f, shape=(3, 4, 6), normalize=True)
    # (nnabla 1.39 raises TypeError here): imresize to (width 6, height 4), channel first
    np.testing.assert_allclose(got, imresize(rgb, (6, 4)).transpose(2, 0, 1) / 255.0)
    with open(tmp_path / "g.png", "rb") as f, pytest.raises(ValueError, match="3 channels"):
        load_image(f, shape=(3, 3, 4))
