"""``F.pack_padded_sequence``, ``F.pad_packed_sequence`` and ``nnabla.utils.rnn`` against nnabla
1.39: values, batch sizes, lengths, gradients, and re-execution on new lengths."""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.utils.rnn as rnn_utils
import numpy as np
import pytest


def _v(a: object, dtype: object = np.float32, need_grad: bool = False) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.asarray(a, dtype), need_grad=need_grad)


def _padded() -> nn.Variable:
    return _v(np.arange(4 * 3 * 2).reshape(4, 3, 2) + 1, need_grad=True)


# -- F.pack_padded_sequence / F.pad_packed_sequence ---------------------------------------------


def test_pack_padded_sequence_matches_nnabla() -> None:
    pad = _padded()
    p, bs = F.pack_padded_sequence(pad, _v([4, 2, 1], np.int64))
    # nnabla 1.39
    assert p.d.tolist() == [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10], [13, 14], [19, 20]]
    assert bs.d.tolist() == [3, 2, 1, 1]
    assert bs.d.dtype == np.int32
    assert p.parent.name == "PackPaddedSequence"
    p.backward(np.arange(p.size, dtype=np.float32).reshape(p.shape) + 1)
    # nnabla 1.39
    assert pad.g[..., 0].tolist() == [[1, 3, 5], [7, 9, 0], [11, 0, 0], [13, 0, 0]]


def test_pack_padded_sequence_batch_first_matches_nnabla() -> None:
    padded = _v(np.arange(3 * 4).reshape(3, 4) + 1)
    p, bs = F.pack_padded_sequence(padded, _v([4, 2, 1], np.int64), batch_first=True)
    assert p.d.tolist() == [1, 5, 9, 2, 6, 3, 4]  # nnabla 1.39
    assert bs.d.tolist() == [3, 2, 1, 1]


def test_pack_padded_sequence_follows_new_lengths_of_the_same_size() -> None:
    pad = _padded()
    lens = _v([4, 2, 1], np.int64)
    p, bs = F.pack_padded_sequence(pad, lens)
    y = F.sum(p * p)
    y.forward()
    lens.d = np.array([3, 2, 2])  # 7 rows, as before
    y.forward()
    bs.forward()
    assert p.shape == (7, 2)
    assert p.d[:, 0].tolist() == [1, 3, 5, 7, 9, 11, 13]
    assert bs.d.tolist() == [3, 3, 1]
    pad.grad.zero()
    y.backward()
    # d sum(p^2) / d pad: 2 pad at the packed places (numpy formula), 0 at the padding
    mask = np.arange(4)[:, None] < np.array([3, 2, 2])[None, :]
    np.testing.assert_array_equal(pad.g, 2 * pad.d * mask[..., None])


def test_pack_padded_sequence_refuses_lengths_that_change_the_packed_size() -> None:
    pad = _padded()
    lens = _v([4, 2, 1], np.int64)
    p, _ = F.pack_padded_sequence(pad, lens)
    y = F.sum(p * p)
    y.forward()
    y.backward()
    lens.d = np.array([3, 3, 2])
    with pytest.raises(
        ValueError,
        match=r"F\.pack_padded_sequence: the new lengths \[3, 3, 2\] pack 8 rows, not the 7 "
        r".*build it again",
    ):
        y.forward()
    with pytest.raises(ValueError, match="not the 7 of the graph as built"):
        p.forward()
    lens.d = np.array([4, 2, 1])  # the lengths of the build work again
    y.forward()
    assert float(y.d) == float((p.d**2).sum())
    p2, _ = F.pack_padded_sequence(pad, _v([3, 3, 2], np.int64))  # a new graph for them
    assert p2.shape == (8, 2)


def test_pad_packed_sequence_refuses_batch_sizes_that_change_the_padded_shape() -> None:
    x = _v(np.arange(5) + 1.0, need_grad=True)
    bs = _v([2, 2, 1], np.int32)
    q, _ = F.pad_packed_sequence(x, bs)
    y = F.sum(q)
    y.forward()
    bs.d = np.array([3, 1, 1], np.int32)  # 5 rows still, but 3 sequences
    with pytest.raises(
        ValueError,
        match=r"F\.pad_packed_sequence: the new batch sizes \[3, 1, 1\] pad to 3 steps of 3 "
        r"sequences, not the 3 steps of 2",
    ):
        y.forward()
    bs.d = np.array([2, 2, 1], np.int32)
    y.forward()
    assert float(y.d) == 15.0


def test_zero_lengths_are_packed_as_nnabla() -> None:
    x = _v(np.arange(12).reshape(3, 2, 2) + 1, need_grad=True)
    p, bs = F.pack_padded_sequence(x, _v([3, 0], np.int32))
    # nnabla 1.39 (its batch_sizes [1, 1, 1]; for [2, 0] nnabla's are [1, 1, 0], the layer's [1, 1])
    assert p.d.tolist() == [[1, 2], [5, 6], [9, 10]]
    assert bs.d.tolist() == [1, 1, 1]
    x.grad.zero()
    p.backward(np.arange(6, dtype=np.float32).reshape(3, 2) + 1)
    assert x.g.ravel().tolist() == [1, 2, 0, 0, 3, 4, 0, 0, 5, 6, 0, 0]  # nnabla 1.39
    q, lens = F.pad_packed_sequence(p, bs)
    assert q.shape == (3, 1, 2)  # nnabla 1.39: the sequences of batch_sizes[0]
    assert lens.d.tolist() == [3]
    with pytest.raises(ValueError, match="lengths must be non-negative, got"):
        F.pack_padded_sequence(x, _v([3, -1], np.int32))


@pytest.mark.parametrize("batch_first", [False, True])
def test_unsorted_zero_lengths_come_back_as_padding(batch_first: bool) -> None:
    # nnabla 1.39 packs them, then its pad_packed_sequence fails (RuntimeError in gather)
    data = np.arange(6, dtype=np.float32).reshape((2, 3, 1) if batch_first else (3, 2, 1)) + 1
    x = _v(data, need_grad=True)
    pk = rnn_utils.pack_padded_sequence(
        x, _v([0, 3], np.int32), batch_first=batch_first, enforce_sorted=False
    )
    seq = data[1] if batch_first else data[:, 1]
    assert pk.data.d.ravel().tolist() == seq.ravel().tolist()
    assert pk.batch_sizes.d.tolist() == [1, 1, 1]
    y, lens = rnn_utils.pad_packed_sequence(pk, batch_first=batch_first, padding_value=-1.0)
    expected = np.full_like(data, -1.0)
    if batch_first:
        expected[1] = data[1]
    else:
        expected[:, 1] = data[:, 1]
    np.testing.assert_array_equal(y.d, expected)
    assert lens.d.tolist() == [0.0, 3.0]
    s = F.sum(y * y)
    s.forward()
    x.grad.zero()
    s.backward()
    np.testing.assert_array_equal(x.g, np.where(expected == -1.0, 0.0, 2 * data))


def test_pack_padded_sequence_refuses_unsorted_lengths() -> None:
    # nnabla 1.39 packs them as if they were sorted
    with pytest.raises(ValueError, match="sorted in decreasing order"):
        F.pack_padded_sequence(_padded(), _v([1, 4, 2], np.int64))
    with pytest.raises(ValueError, match="lengths must have shape"):
        F.pack_padded_sequence(_padded(), _v([4, 2], np.int64))


def test_pad_packed_sequence_matches_nnabla() -> None:
    pk = _v(np.arange(7) + 1.0, need_grad=True)
    pd, ln = F.pad_packed_sequence(pk, _v([3, 2, 1, 1], np.int64))
    pd.backward(np.arange(12, dtype=np.float32).reshape(4, 3))
    # nnabla 1.39
    assert pd.d.tolist() == [[1, 2, 3], [4, 5, 0], [6, 0, 0], [7, 0, 0]]
    assert ln.d.tolist() == [4, 2, 1]
    assert ln.d.dtype == np.int32
    assert pk.g.tolist() == [0, 1, 2, 3, 4, 6, 9]


def test_pad_packed_sequence_batch_first_total_length_and_padding_value() -> None:
    pad = _padded()
    p, bs = F.pack_padded_sequence(pad, _v([4, 2, 1], np.int64))
    pd, ln = F.pad_packed_sequence(p, bs, True, -1.0, 6)
    assert pd.shape == (3, 6, 2)  # nnabla 1.39
    # nnabla 1.39 pads with 0 whatever padding_value; the layer pads with it
    assert pd.d[..., 0].tolist() == [
        [1, 7, 13, 19, -1, -1],
        [3, 9, -1, -1, -1, -1],
        [5, -1, -1, -1, -1, -1],
    ]
    assert ln.d.tolist() == [4, 2, 1]
    back, _ = F.pad_packed_sequence(p, bs)
    np.testing.assert_array_equal(back.d, np.where(back.d == 0, 0, pad.d))


def test_pack_pad_round_trip_second_order() -> None:
    a = np.random.RandomState(0).rand(3, 2).astype(np.float32)
    x = _v(a, need_grad=True)
    q, _ = F.pack_padded_sequence(x, _v([2, 1], np.int64))
    (g,) = nn.grad([F.sum(q * q)], [x])
    mask = np.array([[1, 1], [1, 0], [0, 0]], np.float32)
    np.testing.assert_allclose(g.d, 2 * a * mask, rtol=1e-6)
    x.g = 0
    F.sum(g).backward()
    np.testing.assert_array_equal(x.g, 2 * mask)


# -- nnabla.utils.rnn -----------------------------------------------------------------------------


def _seqs(values: list[list[float]]) -> list[nn.Variable]:
    return [_v(s) for s in values]


def test_pad_sequence_matches_nnabla() -> None:
    seqs = _seqs([[1, 1, 1, 1], [2, 2, 2], [2, 2, 2], [3, 3], [3, 3]])
    ps = rnn_utils.pad_sequence(seqs)
    # nnabla 1.39
    assert ps.d.tolist() == [
        [1, 2, 2, 3, 3],
        [1, 2, 2, 3, 3],
        [1, 2, 2, 0, 0],
        [1, 0, 0, 0, 0],
    ]
    psb = rnn_utils.pad_sequence(seqs, batch_first=True, padding_value=-1)
    assert psb.d.tolist() == [  # nnabla 1.39
        [1, 1, 1, 1],
        [2, 2, 2, -1],
        [2, 2, 2, -1],
        [3, 3, -1, -1],
        [3, 3, -1, -1],
    ]


def test_pack_sequence_unsorted_and_pad_packed_sequence_match_nnabla() -> None:
    seqs = _seqs([[3, 3], [2, 2, 2], [2, 2, 2], [1, 1, 1, 1], [3, 3]])
    pk = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    # nnabla 1.39 (sorted_indices uint64 there)
    assert pk.data.d.tolist() == [1, 2, 2, 3, 3, 1, 2, 2, 3, 3, 1, 2, 2, 1]
    assert pk.batch_sizes.d.tolist() == [5, 5, 3, 1]
    assert pk.sorted_indices.d.tolist() == [3, 1, 2, 0, 4]
    assert pk.unsorted_indices.d.tolist() == [3, 1, 2, 0, 4]
    assert pk.unsorted_indices.d.dtype == np.float32
    pp, ll = rnn_utils.pad_packed_sequence(pk)
    assert pp.d.tolist() == [  # nnabla 1.39
        [3, 2, 2, 1, 3],
        [3, 2, 2, 1, 3],
        [0, 2, 2, 1, 0],
        [0, 0, 0, 1, 0],
    ]
    assert ll.d.tolist() == [2, 3, 3, 4, 2]
    assert ll.d.dtype == np.float32  # nnabla 1.39
    pb, _ = rnn_utils.pad_packed_sequence(pk, batch_first=True, total_length=5)
    assert pb.d.tolist() == [  # nnabla 1.39
        [3, 3, 0, 0, 0],
        [2, 2, 2, 0, 0],
        [2, 2, 2, 0, 0],
        [1, 1, 1, 1, 0],
        [3, 3, 0, 0, 0],
    ]
    with pytest.raises(ValueError, match="must be greater than or equal to the maximum length"):
        rnn_utils.pad_packed_sequence(pk, total_length=2)
    assert "batch_sizes=" in str(pk)


def test_pack_sequence_sorted_has_no_indices() -> None:
    pk = rnn_utils.pack_sequence(_seqs([[1, 1, 1, 1], [2, 2, 2], [3, 3]]))
    assert pk.sorted_indices is None and pk.unsorted_indices is None
    assert pk.data.d.tolist() == [1, 2, 3, 1, 2, 3, 1, 2, 1]


def test_pack_sequence_gives_the_sequences_gradients() -> None:
    # nnabla 1.39 gives them zeros (its pad_sequence assigns into a constant)
    seqs = [_v(np.ones((3, 2)), need_grad=True), _v(np.ones((1, 2)) * 2, need_grad=True)]
    pk = rnn_utils.pack_sequence(seqs)
    assert pk.data.d.tolist() == [[1, 1], [2, 2], [1, 1], [1, 1]]  # nnabla 1.39
    pk.data.backward(np.arange(8, dtype=np.float32).reshape(4, 2))
    assert seqs[0].g.tolist() == [[0, 1], [4, 5], [6, 7]]
    assert seqs[1].g.tolist() == [[2, 3]]


def test_unsorted_pack_follows_new_lengths() -> None:
    padded = _v([[1.0, 4.0], [0.0, 5.0]])
    lengths = _v([1, 2], np.int64)
    pk = rnn_utils.pack_padded_sequence(padded, lengths, enforce_sorted=False)
    assert pk.data.d.tolist() == [4, 1, 5]
    lengths.d = np.array([2, 1])
    pk.data.forward()
    assert pk.data.d.tolist() == [1, 4, 0]
