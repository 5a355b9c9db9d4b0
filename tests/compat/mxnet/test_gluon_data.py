"""gluon.data: datasets (transform, transform_first, filter, shard, take, sample), samplers,
DataLoader (shuffle after numpy.random.seed, last_batch, num_workers, auto_reload, the
default batchify's dtypes) against mxnet 1.9.1's outputs for the same programs."""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet import gluon

D = gluon.data
X = np.arange(20, dtype=np.float32).reshape(10, 2)


def _ds() -> D.ArrayDataset:
    return D.ArrayDataset(mx.nd.array(X), mx.nd.array(np.arange(10)))


def _labels(loader: D.DataLoader) -> list[list[float]]:
    return [b[1].asnumpy().tolist() for b in loader]


# mxnet 1.9.1: np.random.seed(3); DataLoader(ds, batch_size=4, shuffle=True, last_batch=...),
# labels of two epochs and len
SHUFFLED = {
    "keep": (
        3,
        [[5, 4, 1, 2], [9, 6, 7, 0], [3, 8]],
        [[3, 8, 2, 1], [9, 4, 0, 6], [7, 5]],
    ),
    "discard": (2, [[5, 4, 1, 2], [9, 6, 7, 0]], [[3, 8, 2, 1], [9, 4, 0, 6]]),
    "rollover": (
        2,
        [[5, 4, 1, 2], [9, 6, 7, 0]],
        [[3, 8, 3, 8], [2, 1, 9, 4], [0, 6, 7, 5]],
    ),
}


@pytest.mark.parametrize("last_batch", ["keep", "discard", "rollover"])
def test_shuffle_matches_mxnet(last_batch: str) -> None:
    np.random.seed(3)
    loader = D.DataLoader(_ds(), batch_size=4, shuffle=True, last_batch=last_batch)
    n, first, second = SHUFFLED[last_batch]
    assert len(loader) == n
    assert _labels(loader) == first
    assert _labels(loader) == second
    # the data rows follow the labels
    np.random.seed(3)
    for x, y in D.DataLoader(_ds(), batch_size=4, shuffle=True, last_batch=last_batch):
        np.testing.assert_array_equal(x.asnumpy(), X[y.asnumpy().astype(int)])


def test_num_workers_same_batches_as_mxnet() -> None:
    # mxnet 1.9.1: np.random.seed(7), batch_size=3, shuffle=True, num_workers=2 (and 0)
    expected = [[8, 5, 0], [2, 1, 9], [7, 3, 6], [4]]
    for workers in (0, 2):
        np.random.seed(7)
        assert _labels(D.DataLoader(_ds(), batch_size=3, shuffle=True, num_workers=workers)) == (
            expected
        )


def test_auto_reload_draw_moment_as_mxnet() -> None:
    # mxnet 1.9.1: with workers and auto_reload the permutation is drawn in the constructor,
    # without workers at the first batch (a numpy draw in between changes only the latter)
    np.random.seed(1)
    loader = D.DataLoader(_ds(), batch_size=5, shuffle=True, num_workers=1, auto_reload=True)
    np.random.rand()
    assert _labels(loader) == [[2, 9, 6, 4, 0], [3, 1, 7, 8, 5]]
    np.random.seed(1)
    loader = D.DataLoader(_ds(), batch_size=5, shuffle=True, num_workers=0, auto_reload=True)
    np.random.rand()
    assert _labels(loader) == [[2, 3, 4, 9, 1], [6, 0, 7, 5, 8]]


def test_random_sampler_is_numpy_shuffle() -> None:
    np.random.seed(0)
    got = [int(i) for i in D.RandomSampler(5)]
    np.random.seed(0)
    ref = np.arange(5)
    np.random.shuffle(ref)
    assert got == ref.tolist() == [2, 0, 1, 3, 4]  # mxnet 1.9.1


@pytest.mark.parametrize(
    ("data", "shape", "dtype", "values"),
    [  # mxnet 1.9.1: default_batchify_fn(data)
        ([1, 2, 3], (3,), np.int64, [1, 2, 3]),
        ([1.5, 2.0], (2,), np.float64, [1.5, 2.0]),
        ([np.float32(1), np.float32(2)], (2,), np.float32, [1, 2]),
        ([np.int32(1)], (1,), np.int32, [1]),
        ([np.array([1, 2], dtype=np.uint8)] * 2, (2, 2), np.uint8, [[1, 2], [1, 2]]),
        ([np.float16(1)], (1,), np.float16, [1]),
    ],
)
def test_default_batchify_dtypes(data: list, shape: tuple, dtype: type, values: list) -> None:
    b = D.dataloader.default_batchify_fn(data)
    assert isinstance(b, mx.nd.NDArray)
    assert b.shape == shape and b.dtype == dtype
    assert b.asnumpy().tolist() == values


def test_default_batchify_tuples_and_ndarrays() -> None:
    b = D.dataloader.default_batchify_fn([(1, 2.0), (3, 4.0)])
    assert isinstance(b, list) and [x.dtype for x in b] == [np.int64, np.float64]  # mxnet 1.9.1
    assert [x.asnumpy().tolist() for x in b] == [[1, 3], [2.0, 4.0]]
    b = D.dataloader.default_batchify_fn([(mx.nd.ones((2,)) * 3, 1), (mx.nd.ones((2,)), 2)])
    assert b[0].shape == (2, 2) and b[0].dtype == np.float32 and b[1].dtype == np.int64
    assert b[0].asnumpy().tolist() == [[3, 3], [1, 1]]
    # num_workers > 0 uses the multiprocessing merge, with the same values
    loader = D.DataLoader(np.arange(6), batch_size=4, num_workers=1)
    assert [x.asnumpy().tolist() for x in loader] == [[0, 1, 2, 3], [4, 5]]


def test_array_dataset() -> None:
    ds = _ds()
    x, y = ds[3]
    assert isinstance(x, mx.nd.NDArray) and x.shape == (2,)
    # mxnet 1.9.1: a 1-d NDArray becomes numpy, its samples numpy float32 scalars
    assert isinstance(y, np.float32) and y == 3.0
    assert isinstance(D.ArrayDataset(mx.nd.arange(5))[0], np.float32)
    assert isinstance(D.ArrayDataset(mx.nd.ones((3, 2)))[0], mx.nd.NDArray)
    with pytest.raises(AssertionError, match=r"ArrayDataset: All arrays must have the same"):
        D.ArrayDataset([1, 2], [1])
    with pytest.raises(AssertionError, match="at least 1"):
        D.ArrayDataset()
    b = next(iter(D.DataLoader(D.SimpleDataset([(np.float32(1.0), 2)] * 3), batch_size=2)))
    assert [v.dtype for v in b] == [np.float32, np.int64]  # mxnet 1.9.1


def test_dataset_methods() -> None:
    ds = _ds()
    # mxnet 1.9.1: shard sizes 4, 3, 3; first samples 4.0 / 7.0
    assert [len(ds.shard(3, i)) for i in range(3)] == [4, 3, 3]
    assert ds.shard(3, 1)[0][1] == 4.0 and ds.shard(3, 2)[0][1] == 7.0
    assert (len(ds.take(4)), len(ds.take(None)), len(ds.take(20))) == (4, 10, 10)
    f = ds.filter(lambda s: s[1] % 3 == 0)
    assert [float(f[i][1]) for i in range(len(f))] == [0.0, 3.0, 6.0, 9.0]
    assert ds.transform(lambda a, b: (b, a))[2][0] == 2.0
    t = ds.transform_first(lambda a: a * 2, lazy=False)
    assert type(t).__name__ == "SimpleDataset"
    assert t[2][0].asnumpy().tolist() == [8.0, 10.0] and t[2][1] == 2.0
    calls: list[int] = []
    lazy = D.SimpleDataset([1, 2, 3]).transform(lambda v: calls.append(v) or v * 10)
    assert calls == [] and lazy[1] == 20 and calls == [2]
    assert D.SimpleDataset([1, 2, 3]).sample(D.SequentialSampler(2, 1))[1] == 3
    with pytest.raises(TypeError, match=r"Dataset\.sample: Invalid sampler type"):
        ds.sample([1, 2])
    with pytest.raises(AssertionError, match="Shard index of out bound"):
        ds.shard(2, 2)


def test_samplers() -> None:
    assert list(D.SequentialSampler(3, start=2)) == [2, 3, 4]
    assert list(D.BatchSampler(D.SequentialSampler(7), 3, "discard")) == [[0, 1, 2], [3, 4, 5]]
    assert list(D.BatchSampler(D.SequentialSampler(7), 3, "keep")) == [[0, 1, 2], [3, 4, 5], [6]]
    bs = D.BatchSampler(D.SequentialSampler(5), 2, "rollover")
    assert (list(bs), len(bs), list(bs)) == ([[0, 1], [2, 3]], 3, [[4, 0], [1, 2], [3, 4]])
    assert list(D.FilterSampler(lambda x: x > 2, [1, 5, 2, 7])) == [1, 3]
    with pytest.raises(ValueError, match="last_batch must be one of"):
        list(D.BatchSampler(D.SequentialSampler(3), 2, "foo"))
    with pytest.raises(ValueError, match="last_batch must be one of"):
        len(D.BatchSampler(D.SequentialSampler(3), 2, "foo"))
    # mxnet 1.9.1 (gluon.contrib.data.IntervalSampler)
    assert list(D.IntervalSampler(13, 3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    assert list(D.IntervalSampler(7, 3, rollover=False)) == [0, 3, 6]
    assert len(D.IntervalSampler(7, 3)) == 7 and len(D.IntervalSampler(7, 3, rollover=False)) == 3
    with pytest.raises(AssertionError, match="IntervalSampler"):
        D.IntervalSampler(2, 3)


def test_loader_arguments() -> None:
    ds = _ds()
    with pytest.raises(ValueError, match="DataLoader: batch_size must be specified"):
        D.DataLoader(ds)
    with pytest.raises(ValueError, match="must not be specified if batch_sampler"):
        D.DataLoader(ds, batch_size=2, batch_sampler=D.BatchSampler(D.SequentialSampler(10), 2))
    with pytest.raises(ValueError, match="shuffle must not be specified if sampler"):
        D.DataLoader(ds, batch_size=2, shuffle=True, sampler=D.SequentialSampler(10))
    loader = D.DataLoader(
        ds, batch_sampler=D.BatchSampler(D.SequentialSampler(4, 6), 3), batchify_fn=list
    )
    assert [[float(s[1]) for s in b] for b in loader] == [[6, 7, 8], [9]]
    loader = D.DataLoader(ds, batch_size=4, sampler=D.SequentialSampler(5, 5))
    assert _labels(loader) == [[5, 6, 7, 8], [9]]


def test_record_file_dataset_refused() -> None:
    with pytest.raises(NotImplementedError, match=r"docs/migration-mxnet\.md"):
        D.RecordFileDataset("x.rec")


def _show(b: object) -> object:
    if isinstance(b, list):
        return [_show(x) for x in b]
    assert isinstance(b, mx.nd.NDArray)
    return (b.shape, np.dtype(b.dtype).name, b.asnumpy().tolist())


def test_raw_datasets_and_dtypes_as_mxnet() -> None:
    # mxnet 1.9.1
    first = next(iter(D.DataLoader(mx.nd.arange(6).reshape(3, 2), batch_size=2)))
    assert _show(first) == ((2, 2), "float32", [[0.0, 1.0], [2.0, 3.0]])
    first = next(iter(D.DataLoader(np.arange(6, dtype=np.float32).reshape(3, 2), batch_size=2)))
    assert _show(first) == ((2, 2), "float32", [[0.0, 1.0], [2.0, 3.0]])
    first = next(iter(D.DataLoader([[1, 2], [3, 4]], batch_size=2)))
    assert _show(first) == ((2, 2), "int64", [[1, 2], [3, 4]])
    ds = D.ArrayDataset(np.ones((3, 2)), [1, 2, 3])
    assert _show(next(iter(D.DataLoader(ds, batch_size=2)))) == [
        ((2, 2), "float64", [[1.0, 1.0], [1.0, 1.0]]),
        ((2,), "int64", [1, 2]),
    ]
    ds = D.ArrayDataset(mx.nd.ones((3, 2), dtype="float16"), mx.nd.array([1, 2, 3], dtype="int32"))
    assert _show(next(iter(D.DataLoader(ds, batch_size=2)))) == [
        ((2, 2), "float16", [[1.0, 1.0], [1.0, 1.0]]),
        ((2,), "int32", [1, 2]),
    ]


def test_sampler_and_rollover_with_workers_as_mxnet() -> None:
    ds = D.SimpleDataset(list(range(10)))
    assert (len(ds.shard(4, 3)), list(ds.shard(4, 3)), list(ds.shard(4, 0))) == (
        2,
        [8, 9],
        [0, 1, 2],
    )  # mxnet 1.9.1
    np.random.seed(5)
    loader = D.DataLoader(ds, batch_size=3, sampler=D.RandomSampler(10), batchify_fn=list)
    assert [[int(i) for i in b] for b in loader] == [[9, 5, 2], [4, 7, 1], [0, 8, 6], [3]]
    np.random.seed(5)
    loader = D.DataLoader(
        ds, batch_size=3, shuffle=True, last_batch="rollover", num_workers=3, prefetch=1
    )
    assert [b.asnumpy().tolist() for b in loader] == [[9, 5, 2], [4, 7, 1], [0, 8, 6]]
    assert len(D.DataLoader(ds, batch_size=3, last_batch="rollover")) == 3
