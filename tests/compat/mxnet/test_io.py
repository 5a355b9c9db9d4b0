"""mxnet's data iterators (``mx.io``): ``DataDesc``, ``DataBatch``, ``DataIter``,
``NDArrayIter`` (pad, discard, roll_over, shuffle), ``ResizeIter`` and the refused file
iterators. Expected batches were printed by mxnet 1.9.1 on the same inputs.
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

X = np.arange(14).reshape(7, 2)


def _epochs(it: mx.io.DataIter, n: int, col: bool = True) -> list[list[tuple]]:
    out = []
    for _ in range(n):
        out.append(
            [
                (
                    b.data[0].asnumpy().astype(int).tolist(),
                    b.label[0].asnumpy().astype(int).tolist() if b.label else None,
                    b.pad,
                )
                for b in it
            ]
        )
        it.reset()
    return out


def test_pad_default_completes_last_batch_with_first_examples() -> None:
    it = mx.io.NDArrayIter(np.arange(7), np.arange(7) * 10, batch_size=3)
    assert (
        _epochs(it, 2)
        == [
            [([0, 1, 2], [0, 10, 20], 0), ([3, 4, 5], [30, 40, 50], 0), ([6, 0, 1], [60, 0, 10], 2)]
        ]
        * 2
    )


def test_pad_larger_than_data_tiles() -> None:
    # mxnet 1.9.1: data [0, 2, 0, 2, 0], label [0, 1, 0, 1, 0], pad 3
    b = next(mx.io.NDArrayIter(X[:2], np.arange(2), 5))
    assert b.data[0].asnumpy()[:, 0].tolist() == [0.0, 2.0, 0.0, 2.0, 0.0]
    assert b.label[0].asnumpy().tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]
    assert b.pad == 3


def test_discard_drops_short_batch() -> None:
    it = mx.io.NDArrayIter(X, np.arange(7), 3, last_batch_handle="discard")
    # mxnet 1.9.1
    assert [b.data[0].asnumpy()[:, 0].tolist() for b in it] == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]


def test_roll_over_carries_rest_into_next_epoch() -> None:
    it = mx.io.NDArrayIter(np.arange(7), np.arange(7), 3, last_batch_handle="roll_over")
    first, second, third = _epochs(it, 3)
    assert [b[0] for b in first] == [[0, 1, 2], [3, 4, 5]]
    assert second == [([6, 0, 1], [6, 0, 1], 1), ([2, 3, 4], [2, 3, 4], 0)]
    assert third[0] == ([5, 6, 0], [5, 6, 0], 2)


def test_shuffle_draws_from_numpy_global_state_as_mxnet() -> None:
    np.random.seed(3)
    it = mx.io.NDArrayIter(np.arange(7), np.arange(7) * 10, 3, True, last_batch_handle="roll_over")
    # mxnet 1.9.1, np.random.seed(3)
    assert _epochs(it, 3) == [
        [([4, 6, 5], [40, 60, 50], 0), ([3, 1, 0], [30, 10, 0], 0)],
        [([2, 5, 6], [20, 50, 60], 1), ([2, 0, 3], [20, 0, 30], 0)],
        [([4, 1, 3], [40, 10, 30], 2), ([6, 4, 0], [60, 40, 0], 0), ([2, 5, 1], [20, 50, 10], 0)],
    ]
    np.random.seed(3)
    it = mx.io.NDArrayIter(np.arange(7), None, 3, True)
    # mxnet 1.9.1
    assert [[b[0] for b in e] for e in _epochs(it, 2)] == [
        [[4, 6, 5], [3, 1, 0], [2, 4, 6]],
        [[5, 6, 2], [0, 3, 4], [1, 5, 6]],
    ]


def test_provide_data_names_order_dtypes() -> None:
    it = mx.io.NDArrayIter([X, X * 2], [np.arange(7)], 4)
    # mxnet 1.9.1
    assert repr(it.provide_data) == (
        "[DataDesc[_0_data,(4, 2),<class 'numpy.float32'>,NCHW], "
        "DataDesc[_1_data,(4, 2),<class 'numpy.float32'>,NCHW]]"
    )
    assert repr(it.provide_label) == "[DataDesc[softmax_label,(4,),<class 'numpy.float32'>,NCHW]]"
    it = mx.io.NDArrayIter({"b": X, "a": X[:, :1]}, {"l": np.arange(7)}, 4)
    assert [d.name for d in it.provide_data] == ["a", "b"]  # sorted by name, as mxnet
    b = next(it)
    assert [d.shape for d in b.data] == [(4, 1), (4, 2)]
    assert b.index is None
    assert it.batch_size == 4
    it = mx.io.NDArrayIter(mx.nd.array(X, dtype="int32"), None, 4)
    b = next(it)
    assert b.data[0].dtype == np.int32 and b.label == [] and it.provide_label == []
    assert it.provide_data[0].dtype == np.int32


def test_data_desc_and_batch() -> None:
    d = mx.io.DataDesc("x", (2, 3), "float64", "TNC")
    assert d == ("x", (2, 3)) and d.dtype == "float64" and d.layout == "TNC"
    assert mx.io.DataDesc.get_batch_axis("TNC") == 1
    assert mx.io.DataDesc.get_batch_axis(None) == 0
    descs = mx.io.DataDesc.get_list(
        [("a", (1,)), ("b", (2,))], [("a", np.int32), ("b", np.float16)]
    )
    assert [x.dtype for x in descs] == [np.int32, np.float16]
    batch = mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros(2)], pad=1)
    assert str(batch) == "DataBatch: data shapes: [(2, 3)] label shapes: [(2,)]"
    with pytest.raises(TypeError, match="DataBatch: data must be a list"):
        mx.io.DataBatch(mx.nd.ones(2))


def test_resize_iter_restarts_inner_iterator() -> None:
    r = mx.io.ResizeIter(mx.io.NDArrayIter(np.arange(7), np.arange(7), 3), 5)
    got = [b.data[0].asnumpy().astype(int).tolist() for b in r]
    assert got == [[0, 1, 2], [3, 4, 5], [6, 0, 1], [0, 1, 2], [3, 4, 5]]
    assert r.provide_data[0].shape == (3,)
    r.reset()
    assert next(r).data[0].asnumpy().astype(int).tolist() == [0, 1, 2]


def test_iterating_past_end_and_bad_arguments() -> None:
    it = mx.io.NDArrayIter(np.arange(4), batch_size=2)
    assert len(list(it)) == 2
    with pytest.raises(StopIteration):
        it.next()
    with pytest.raises(ValueError, match="last_batch_handle"):
        mx.io.NDArrayIter(np.arange(4), last_batch_handle="keep")
    with pytest.raises(ValueError, match="batch_size must be positive"):
        mx.io.NDArrayIter(np.arange(4), batch_size=0)
    with pytest.raises(ValueError, match="'softmax_label' has shape"):
        mx.io.NDArrayIter(np.arange(7), np.arange(6), 3)
    with pytest.raises(TypeError, match="Input must be NDArray"):
        mx.io.NDArrayIter("abc")


@pytest.mark.parametrize(
    "name", ["MNISTIter", "ImageRecordIter", "CSVIter", "LibSVMIter", "PrefetchingIter"]
)
def test_file_iterators_refused(name: str) -> None:
    with pytest.raises(NotImplementedError, match=r"docs/migration-mxnet\.md"):
        getattr(mx.io, name)(batch_size=1)
