"""``data_iterator_concat_datasets`` over CSV data sources and ``DataIterator.slice`` (with and
without shuffle, ``drop_last``, ``use_cache``, ``slice_start``/``slice_end``): the examples,
their order for seeded generators and the epochs, against nnabla 1.39's run of the same calls
(``use_thread=False``, ``with_file_cache=False``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gradhub_compat.nnabla.utils.data_iterator import (
    DataIterator,
    data_iterator_concat_datasets,
    data_iterator_simple,
)
from gradhub_compat.nnabla.utils.data_source_implements import CsvDataSource
from gradhub_compat.nnabla.utils.image_utils import imsave

pytest.importorskip("PIL")


def _png_dataset(d: Path) -> str:
    lines = ["x:image,y:label"]
    for n in range(7):
        imsave(str(d / f"i{n}.png"), (np.arange(12).reshape(3, 4) * 3 + n * 7).astype(np.uint8))
        lines.append(f"i{n}.png,{n}")
    path = d / "a.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _run(di: DataIterator, n: int) -> tuple[list[list[float]], list[int]]:
    labels, epochs = [], []
    for _ in range(n):
        x, y = di.next()
        # each image is its label's: 7 y from the first source (not normalized), 7 y / 255
        # from the second (normalized), in one float64 batch
        first = x.reshape(len(x), -1)[:, 0]
        raw = np.isclose(first, 7 * y[:, 0], rtol=1e-12)
        scaled = np.isclose(first, 7 * y[:, 0] / 255.0, rtol=1e-12)
        assert x.dtype == np.float64 and (raw | scaled).all()
        labels.append(y[:, 0].tolist())
        epochs.append(di.epoch)
    return labels, epochs


CONCAT = {  # nnabla 1.39
    True: [
        [4.0, 4.0, 3.0, 6.0], [2.0, 0.0, 2.0, 3.0], [0.0, 5.0, 1.0, 5.0], [6.0, 1.0, 4.0, 4.0],
        [3.0, 6.0, 2.0, 0.0], [2.0, 3.0, 0.0, 5.0], [1.0, 5.0, 6.0, 1.0], [4.0, 2.0, 6.0, 6.0],
    ],
    False: [
        [1.0, 2.0, 6.0, 6.0], [2.0, 1.0, 3.0, 5.0], [4.0, 4.0, 5.0, 0.0], [0.0, 3.0, 0.0, 4.0],
        [5.0, 2.0, 3.0, 6.0], [1.0, 2.0, 6.0, 5.0], [4.0, 1.0, 3.0, 0.0], [5.0, 6.0, 5.0, 0.0],
    ],
}  # fmt: skip


@pytest.mark.parametrize("with_memory_cache", [True, False])
def test_concat_csv_sources_as_nnabla(tmp_path: Path, with_memory_cache: bool) -> None:
    path = _png_dataset(tmp_path)
    ds1 = CsvDataSource(path, shuffle=True, rng=np.random.RandomState(1), normalize=False)
    ds2 = CsvDataSource(path, normalize=True)
    with data_iterator_concat_datasets(
        [ds1, ds2],
        4,
        shuffle=True,
        rng=np.random.RandomState(2),
        with_memory_cache=with_memory_cache,
    ) as di:
        assert di.size == 14 and di.variables == ("x", "y")
        labels, epochs = _run(di, 8)
    assert labels == CONCAT[with_memory_cache]
    assert epochs == [0, 0, 0, 1, 1, 1, 2, 2]  # nnabla 1.39
    # each epoch's first 14 examples are every example once (7 labels, twice)
    flat = [v for batch in labels for v in batch][:14]
    assert sorted(flat) == sorted(list(range(7)) * 2)


def _load(i: int) -> tuple[np.ndarray, np.ndarray]:
    return np.array([i]), np.array(i * 10)


Slices = list[list[Any]]
SLICES: dict[tuple[bool, bool], Slices] = {  # nnabla 1.39: [size, (x of a batch, epoch)...]
    (False, False): [
        [4, ([0, 1], 0), ([2, 3], 1), ([0, 1], 1), ([2, 3], 2), ([0, 1], 2)],
        [4, ([4, 5], 0), ([6, 7], 1), ([4, 5], 1), ([6, 7], 2), ([4, 5], 2)],
        [4, ([7, 8], 0), ([9, 10], 1), ([7, 8], 1), ([9, 10], 2), ([7, 8], 2)],
    ],
    (False, True): [
        [3, ([0, 1], 0), ([2, 0], 1), ([1, 2], 2), ([0, 1], 2), ([2, 0], 3)],
        [3, ([3, 4], 0), ([5, 3], 1), ([4, 5], 2), ([3, 4], 2), ([5, 3], 3)],
        [3, ([6, 7], 0), ([8, 6], 1), ([7, 8], 2), ([6, 7], 2), ([8, 6], 3)],
    ],
    (True, False): [
        [4, ([5, 4], 0), ([1, 2], 1), ([3, 8], 1), ([2, 1], 2), ([0, 5], 2)],
        [4, ([9, 6], 0), ([7, 0], 1), ([9, 4], 1), ([0, 6], 2), ([9, 4], 2)],
        [4, ([0, 3], 0), ([8, 10], 1), ([6, 7], 1), ([5, 10], 2), ([2, 6], 2)],
    ],
    (True, True): [
        [3, ([5, 4], 0), ([1, 5], 1), ([8, 2], 2), ([0, 5], 2), ([8, 0], 3)],
        [3, ([2, 9], 0), ([6, 2], 1), ([9, 4], 2), ([3, 9], 2), ([4, 3], 3)],
        [3, ([7, 0], 0), ([3, 7], 1), ([6, 7], 2), ([7, 2], 2), ([6, 7], 3)],
    ],
}


def _slice_run(s: DataIterator, n: int) -> list[Any]:
    out: list[Any] = [s.size]
    for _ in range(n):
        x, y = s.next()
        np.testing.assert_array_equal(y, 10 * x[:, 0])
        out.append((x[:, 0].tolist(), s.epoch))
    return out


@pytest.mark.parametrize(("shuffle", "drop_last"), sorted(SLICES))
def test_slices_as_nnabla(shuffle: bool, drop_last: bool) -> None:
    di = data_iterator_simple(_load, 11, 2, shuffle=shuffle, rng=np.random.RandomState(3))
    got = [
        _slice_run(di.slice(np.random.RandomState(4), 3, pos, drop_last=drop_last), 5)
        for pos in range(3)
    ]
    assert got == SLICES[(shuffle, drop_last)]
    # the slice sizes: ceil(11 / 3) (the last moved back to end at 11), or 11 // 3 (drop_last)
    assert [g[0] for g in got] == ([3] * 3 if drop_last else [4] * 3)


def test_slice_with_memory_cache_and_explicit_bounds() -> None:
    di = data_iterator_simple(_load, 9, 2, shuffle=True, rng=np.random.RandomState(3))
    cached = di.slice(np.random.RandomState(4), 2, 1, use_cache=True)
    assert _slice_run(cached, 6) == [  # nnabla 1.39
        5, ([5, 0], 0), ([3, 1], 0), ([8, 5], 1), ([0, 3], 1), ([1, 8], 2), ([5, 1], 2),
    ]  # fmt: skip
    bounded = di.slice(None, slice_start=2, slice_end=6)
    assert [bounded.size] + [bounded.next()[0][:, 0].tolist() for _ in range(3)] == [
        4, [7, 4], [5, 0], [4, 7],  # nnabla 1.39
    ]  # fmt: skip


def test_concat_refusals(tmp_path: Path) -> None:
    path = _png_dataset(tmp_path)
    with pytest.raises(
        ValueError, match="data_iterator_concat_datasets: data_source_list is empty"
    ):
        data_iterator_concat_datasets([], 2)
    with pytest.raises(NotImplementedError, match="data_iterator_concat_datasets: with_file_cache"):
        data_iterator_concat_datasets([CsvDataSource(path)], 2, with_file_cache=True)
    di = data_iterator_simple(_load, 5, 2)
    with pytest.raises(NotImplementedError, match="cache_dir"):
        di.slice(None, 2, 0, use_cache=True, cache_dir=str(tmp_path))
