"""``gradhub_compat.nnabla.utils.data_iterator`` / ``data_source``: the batches, their order for
a seeded ``rng``, the epoch boundaries (a batch running past the end continues from the start),
the epoch callbacks, ``position``, ``stop_exhausted``, the memory cache, user ``DataSource``
subclasses, ``slice`` and ``data_iterator_concat_datasets``, each against nnabla 1.39's run of
the same calls (with ``use_thread=False``, whose ``position`` is deterministic); and the
refusals of what is not supported."""

from __future__ import annotations

import logging
from typing import Any

import gradhub_compat.nnabla as nn
import numpy as np
import pytest
from gradhub_compat.nnabla.utils.data_iterator import (
    DataIterator,
    SimpleDataSource,
    data_iterator,
    data_iterator_cache,
    data_iterator_concat_datasets,
    data_iterator_csv_dataset,
    data_iterator_simple,
)
from gradhub_compat.nnabla.utils.data_source import DataSource, DataSourceWithFileCache

Row = tuple[list[int], int, int, list[tuple[str, int]]]


def _load(i: int) -> tuple[np.ndarray, np.ndarray]:
    return np.array([i, 10 * i], np.float32), np.array(i % 3)


def _run(di: DataIterator, n: int) -> list[Any]:
    """n calls of next(): (indices of the batch, epoch, position, callbacks since the last)."""
    events: list[tuple[str, int]] = []
    di.register_epoch_end_callback(lambda e: events.append(("end", e)))
    di.register_epoch_begin_callback(lambda e: events.append(("begin", e)))
    out: list[Any] = []
    for _ in range(n):
        try:
            batch = di.next()
        except StopIteration:
            out.append("stop")
            continue
        out.append((batch[0][:, 0].astype(int).tolist(), di.epoch, di.position, list(events)))
        events.clear()
    return out


E0 = [("end", 0), ("begin", 1)]
E1 = [("end", 1), ("begin", 2)]
E2 = [("end", 2), ("begin", 3)]
E3 = [("end", 3), ("begin", 4)]


def test_simple_iterator_without_shuffle_wraps_a_batch_past_the_end() -> None:
    di = data_iterator_simple(_load, 10, 4, shuffle=False, rng=np.random.RandomState(0))
    assert _run(di, 8) == [  # nnabla 1.39
        ([0, 1, 2, 3], 0, 4, []),
        ([4, 5, 6, 7], 0, 8, []),
        ([8, 9, 0, 1], 1, 2, E0),
        ([2, 3, 4, 5], 1, 6, []),
        ([6, 7, 8, 9], 2, 0, E1),
        ([0, 1, 2, 3], 2, 4, []),
        ([4, 5, 6, 7], 2, 8, []),
        ([8, 9, 0, 1], 3, 2, E2),
    ]
    assert (di.size, di.batch_size, di.variables) == (10, 4, ["x0", "x1"])  # nnabla 1.39


def test_simple_iterator_shuffles_with_the_rng_as_nnabla() -> None:
    di = data_iterator_simple(_load, 10, 4, shuffle=True, rng=np.random.RandomState(0))
    # nnabla 1.39: the batch that runs past the end finishes with the start of the old order;
    # the next epoch's permutation applies from the next batch on
    assert _run(di, 8) == [
        ([2, 8, 4, 9], 0, 4, []),
        ([1, 6, 7, 3], 0, 8, []),
        ([0, 5, 2, 8], 1, 2, E0),
        ([1, 2, 9, 8], 1, 6, []),
        ([0, 6, 7, 4], 2, 0, E1),
        ([2, 3, 8, 4], 2, 4, []),
        ([5, 1, 0, 6], 2, 8, []),
        ([9, 7, 2, 3], 3, 2, E2),
    ]
    di = data_iterator_simple(_load, 7, 3, shuffle=True, rng=np.random.RandomState(1))
    assert _run(di, 8) == [  # nnabla 1.39
        ([6, 2, 1], 0, 3, []),
        ([0, 4, 3], 0, 6, []),
        ([5, 6, 2], 1, 2, E0),
        ([4, 1, 6], 1, 5, []),
        ([0, 5, 2], 2, 1, E1),
        ([3, 0, 2], 2, 4, []),
        ([1, 4, 5], 3, 0, E2),
        ([1, 6, 0], 3, 3, []),
    ]


def test_batches_are_numpy_arrays_of_the_examples() -> None:
    x, y = data_iterator_simple(_load, 10, 4).next()
    assert (x.dtype, x.shape, y.dtype, y.shape) == (np.float32, (4, 2), np.int64, (4,))
    np.testing.assert_array_equal(x, [[0, 0], [1, 10], [2, 20], [3, 30]])
    di = data_iterator_simple(lambda i: (np.array([i, i]), i * 0.5, [i, 1]), 5, 2)
    a, b, c = di.next()  # nnabla 1.39: <i8 (2, 2), <f8 (2,), <i8 (2, 2)
    assert [(t.dtype.str, t.shape) for t in (a, b, c)] == [
        ("<i8", (2, 2)),
        ("<f8", (2,)),
        ("<i8", (2, 2)),
    ]
    np.testing.assert_array_equal(b, [0.0, 0.5])


def test_the_default_rng_is_seeded_313() -> None:
    di = data_iterator_simple(_load, 10, 10, shuffle=True)
    expected = np.random.RandomState(313).permutation(10)
    np.testing.assert_array_equal(di.next()[0][:, 0], expected)


def test_memory_cache_serves_its_own_orders_after_the_first_epoch() -> None:
    di = data_iterator_simple(
        _load, 10, 4, shuffle=True, rng=np.random.RandomState(0), with_memory_cache=True
    )
    assert _run(di, 12) == [  # nnabla 1.39
        ([2, 8, 4, 9], 0, 4, []),
        ([1, 6, 7, 3], 0, 8, []),
        ([0, 5, 2, 8], 1, 2, E0),
        ([4, 9, 1, 6], 1, 6, []),
        ([7, 3, 0, 5], 2, 0, E1),
        ([6, 9, 4, 1], 2, 4, []),
        ([2, 7, 8, 5], 2, 8, []),
        ([3, 0, 1, 7], 3, 2, E2),
        ([8, 9, 3, 6], 3, 6, []),
        ([4, 0, 5, 2], 4, 0, E3),
        ([0, 4, 2, 9], 4, 4, []),
        ([8, 1, 6, 7], 4, 8, []),
    ]


def test_memory_cache_reads_through_data_over_its_buffer_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gradhub_compat.nnabla.config import nnabla_config

    monkeypatch.setitem(nnabla_config["DATA_ITERATOR"], "data_source_buffer_max_size", "1")
    di = data_iterator_simple(
        _load, 10, 4, shuffle=True, rng=np.random.RandomState(0), with_memory_cache=True
    )
    assert not di._data_source._on_memory
    assert _run(di, 8) == [  # nnabla 1.39 (the source's first order, every epoch)
        ([2, 8, 4, 9], 0, 4, []),
        ([1, 6, 7, 3], 0, 8, []),
        ([0, 5, 2, 8], 1, 2, E0),
        ([4, 9, 1, 6], 1, 6, []),
        ([7, 3, 0, 5], 2, 0, E1),
        ([2, 8, 4, 9], 2, 4, []),
        ([1, 6, 7, 3], 2, 8, []),
        ([0, 5, 2, 8], 3, 2, E2),
    ]


def test_stop_exhausted_drops_the_short_batch_and_stops() -> None:
    di = data_iterator_simple(
        _load, 10, 4, shuffle=True, rng=np.random.RandomState(0), stop_exhausted=True
    )
    assert _run(di, 5) == [  # nnabla 1.39
        ([2, 8, 4, 9], 0, 4, []),
        ([1, 6, 7, 3], 0, 8, []),
        "stop",
        "stop",
        "stop",
    ]
    di = data_iterator_simple(_load, 8, 4, stop_exhausted=True)
    assert [b[0][:, 0].tolist() for b in di] == [[0, 1, 2, 3], [4, 5, 6, 7]]  # nnabla 1.39
    assert di.epoch == 0


class MyDataSource(DataSource):
    """nnabla's tutorial pattern: a new permutation in every reset()."""

    def _get_data(self, position: int) -> tuple[np.ndarray, np.ndarray]:
        i = self._indexes[position]
        return np.array([i, 0], np.float32), np.array(i % 2)

    def reset(self) -> None:
        self._indexes = (
            self._rng.permutation(self._size) if self._shuffle else np.arange(self._size)
        )
        super().reset()

    def __init__(self, size: int, shuffle: bool = False, rng: Any = None) -> None:
        super().__init__(shuffle=shuffle, rng=rng)
        self._size = size
        self._variables = ("x", "y")
        self.reset()


def test_a_user_data_source_without_cache() -> None:
    ds = MyDataSource(10, True, np.random.RandomState(2))
    di = data_iterator(ds, 4, np.random.RandomState(5), with_memory_cache=False)
    assert _run(di, 8) == [  # nnabla 1.39: reset() draws at once, mid-batch
        ([1, 6, 0, 2], 0, 4, []),
        ([3, 9, 7, 8], 0, 8, []),
        ([4, 5, 4, 9], 1, 2, E0),
        ([5, 0, 8, 1], 1, 6, []),
        ([2, 6, 7, 3], 2, 0, E1),
        ([5, 9, 8, 0], 2, 4, []),
        ([2, 1, 3, 7], 2, 8, []),
        ([6, 4, 5, 3], 3, 2, E2),
    ]
    assert di.variables == ("x", "y")


def test_a_user_data_source_with_the_default_memory_cache() -> None:
    ds = MyDataSource(10, True, np.random.RandomState(2))
    di = data_iterator(ds, 4, np.random.RandomState(5))
    assert _run(di, 12) == [  # nnabla 1.39
        ([4, 1, 5, 0], 0, 4, []),
        ([7, 2, 3, 6], 0, 8, []),
        ([9, 8, 4, 1], 1, 2, E0),
        ([5, 0, 7, 2], 1, 6, []),
        ([3, 6, 9, 8], 2, 0, E1),
        ([8, 2, 5, 7], 2, 4, []),
        ([6, 1, 4, 9], 2, 8, []),
        ([3, 0, 5, 2], 3, 2, E2),
        ([3, 0, 9, 1], 3, 6, []),
        ([7, 6, 8, 4], 4, 0, E3),
        ([4, 0, 6, 9], 4, 4, []),
        ([8, 5, 2, 3], 4, 8, []),
    ]


def test_slices_step_through_one_permutation_per_epoch() -> None:
    base = data_iterator_simple(_load, 10, 3, shuffle=True, rng=np.random.RandomState(3))
    s0 = base.slice(None, num_of_slices=3, slice_pos=0)
    s2 = base.slice(None, num_of_slices=3, slice_pos=2)
    sd = base.slice(None, num_of_slices=3, slice_pos=2, drop_last=True)
    sr = base.slice(None, slice_start=2, slice_end=7)
    assert [d.size for d in (s0, s2, sd, sr)] == [4, 4, 3, 5]  # nnabla 1.39
    assert s0.batch_size == 3
    got = []
    for _ in range(5):
        got.append(
            (
                [d.next()[0][:, 0].astype(int).tolist() for d in (s0, s2, sd, sr)],
                [d.epoch for d in (s0, s2, sd, sr)],
            )
        )
    assert got == [  # nnabla 1.39
        ([[5, 4, 1], [7, 0, 3], [7, 0, 3], [1, 2, 9]], [0, 0, 1, 0]),
        ([[2, 5, 4], [8, 7, 0], [0, 6, 7], [6, 7, 1]], [1, 1, 2, 1]),
        ([[2, 1, 3], [7, 5, 0], [7, 2, 6], [1, 9, 4]], [2, 2, 3, 1]),
        ([[5, 8, 3], [2, 6, 1], [2, 5, 1], [0, 2, 1]], [3, 3, 4, 2]),
        ([[4, 9, 7], [2, 5, 1], [4, 5, 0], [9, 4, 7]], [3, 3, 5, 3]),
    ]
    bm = data_iterator_simple(_load, 10, 3, shuffle=True, rng=np.random.RandomState(3))
    sm = bm.slice(np.random.RandomState(9), num_of_slices=2, slice_pos=1, use_cache=True)
    got_m = [sm.next()[0][:, 0].astype(int).tolist() for _ in range(6)]
    assert got_m == [[6, 7, 0], [3, 8, 6], [7, 0, 3], [8, 3, 6], [7, 0, 8], [8, 7, 0]]  # nnabla


def test_slice_refuses_a_wrong_combination_of_arguments() -> None:
    di = data_iterator_simple(_load, 10, 3)
    # nnabla 1.39 logs a critical message and returns None; gradhub raises
    with pytest.raises(ValueError, match=r"DataIterator\.slice: give either num_of_slices"):
        di.slice(None, num_of_slices=3)
    with pytest.raises(ValueError, match="slice_pos must be in"):
        di.slice(None, num_of_slices=3, slice_pos=3)
    with pytest.raises(NotImplementedError, match=r"docs/migration-nnabla\.md"):
        di.slice(None, num_of_slices=2, slice_pos=0, use_cache=True, cache_dir="/tmp/x")


def test_concat_datasets_as_nnabla() -> None:
    def sources() -> list[SimpleDataSource]:
        a = SimpleDataSource(lambda i: (np.array(i),), 4)
        b = SimpleDataSource(lambda i: (np.array(100 + i),), 3)
        return [a, b]

    di = data_iterator_concat_datasets(sources(), 3, shuffle=True, rng=np.random.RandomState(4))
    got = [di.next()[0].tolist() for _ in range(6)]
    assert got == [  # nnabla 1.39
        [100, 102, 3],
        [0, 1, 101],
        [2, 100, 102],
        [3, 0, 1],
        [101, 2, 0],
        [101, 2, 1],
    ]
    di = data_iterator_concat_datasets(
        sources(), 3, shuffle=True, rng=np.random.RandomState(4), with_memory_cache=False
    )
    got = [di.next()[0].tolist() for _ in range(6)]
    assert got == [  # nnabla 1.39
        [101, 0, 102],
        [3, 100, 2],
        [1, 102, 3],
        [101, 2, 100],
        [0, 1, 101],
        [1, 0, 3],
    ]


def test_callbacks_given_to_the_constructor_and_iteration_protocol() -> None:
    begins: list[int] = []
    ends: list[int] = []
    di = data_iterator_simple(
        _load, 5, 2, epoch_begin_callbacks=[begins.append], epoch_end_callbacks=[ends.append]
    )
    it = iter(di)
    batches = [next(it)[0][:, 0].astype(int).tolist() for _ in range(5)]
    assert batches == [[0, 1], [2, 3], [4, 0], [1, 2], [3, 4]]
    assert (ends, begins, di.epoch, di.position) == ([0, 1], [1, 2], 2, 0)


def test_context_manager_closes_the_source() -> None:
    with data_iterator_simple(_load, 5, 2) as di:
        np.testing.assert_array_equal(di.next()[0][:, 0], [0.0, 1.0])  # nnabla 1.39
    assert di._data_source._closed
    di.close()  # a second close does nothing


def test_the_modules_are_reachable_from_the_package() -> None:
    assert nn.utils.data_iterator.data_iterator_simple is data_iterator_simple
    assert nn.utils.data_source.DataSource is DataSource


def test_sources_log_as_nnabla(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="nnabla")
    data_iterator_simple(_load, 10, 4, shuffle=True, with_memory_cache=True)
    msgs = [r.getMessage() for r in caplog.records if r.name == "nnabla"]
    assert msgs == [  # nnabla 1.39 (its DataSource, memory cache and iterator messages)
        "DataSource with shuffle(True)",
        "Using DataSourceWithMemoryCache",
        "DataSource with shuffle(True)",
        "On-memory",
        "Using DataIterator",
    ]


def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="data_iterator_simple: batch_size must be positive"):
        data_iterator_simple(_load, 10, 0)
    with pytest.raises(TypeError, match="data_iterator_simple: batch_size must be an int"):
        data_iterator_simple(_load, 10, 2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="data_iterator_simple: num_examples must be positive"):
        data_iterator_simple(_load, 0, 2)
    with pytest.raises(TypeError, match="data_iterator_simple: load_func must be callable"):
        data_iterator_simple([1, 2], 2, 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="DataIterator: data_source must be a DataSource"):
        DataIterator([1, 2, 3], 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"rng must be a numpy\.random\.RandomState"):
        data_iterator_simple(_load, 10, 2, rng=3)  # type: ignore[arg-type]

    class NoGetData(DataSource):
        def __init__(self) -> None:
            super().__init__()
            self._size, self._variables = 3, ("x",)

    with pytest.raises(NotImplementedError, match="must define _get_data"):
        data_iterator(NoGetData(), 2, with_memory_cache=False).next()


def test_file_caches_and_file_datasets_are_not_supported(tmp_path: Any) -> None:
    with pytest.raises(NotImplementedError, match=r"with_file_cache=True .* docs/migration-nnabla"):
        data_iterator_simple(_load, 10, 2, with_file_cache=True, cache_dir=str(tmp_path))
    with pytest.raises(NotImplementedError, match="with_file_cache=True"):
        data_iterator(MyDataSource(4), 2, with_file_cache=True)
    with pytest.raises(NotImplementedError, match="data_iterator_csv_dataset: with_file_cache"):
        data_iterator_csv_dataset(str(tmp_path / "train.csv"), 2, with_file_cache=True)
    with pytest.raises(NotImplementedError, match="data_iterator_cache: cache folders"):
        data_iterator_cache(str(tmp_path), 2, shuffle=True)
    with pytest.raises(NotImplementedError, match="DataSourceWithFileCache"):
        DataSourceWithFileCache(MyDataSource(4), cache_dir=str(tmp_path))
    assert list(tmp_path.iterdir()) == []
