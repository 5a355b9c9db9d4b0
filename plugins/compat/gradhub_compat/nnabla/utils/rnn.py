"""nnabla's ``nnabla.utils.rnn``: variable-length sequences for the recurrent layers.

:class:`PackedSequence`, :func:`pad_sequence`, :func:`pack_padded_sequence`,
:func:`pack_sequence` and :func:`pad_packed_sequence`, as nnabla 1.39's, built on
``F.pack_padded_sequence``/``F.pad_packed_sequence`` and gathers, so that every result is
recorded (``forward()`` recomputes it) and differentiable with respect to the sequences. nnabla
documents them for its dynamic mode (auto_forward); gradhub computes every graph as it is built,
so they work either way.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.utils.rnn as rnn_utils
    >>> l2v = lambda a: nn.Variable.from_numpy_array(np.asarray(a, np.float32))
    >>> packed = rnn_utils.pack_sequence([l2v([3, 3]), l2v([1, 1, 1])], enforce_sorted=False)
    >>> packed.data.d, packed.batch_sizes.d
    (array([1., 3., 1., 3., 1.], dtype=float32), array([2, 2, 1], dtype=int32))
    >>> padded, lengths = rnn_utils.pad_packed_sequence(packed, batch_first=True)
    >>> padded.d
    array([[3., 3., 0.],
           [1., 1., 1.]], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import functions as F
from .._variable import Variable

__all__ = [
    "PackedSequence",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
]


class PackedSequence:
    """nnabla's packed sequence: ``data`` (the packed rows, ``(N, *)``), ``batch_sizes``
    (int32, ``(T,)``), and, when the sequences were sorted by :func:`pack_padded_sequence` with
    ``enforce_sorted=False``, ``sorted_indices`` (the batch order by decreasing length, int64;
    nnabla's are uint64) and ``unsorted_indices`` (its inverse, float32 as nnabla's); else
    None."""

    def __init__(self) -> None:
        self.data: Any = None
        self.batch_sizes: Any = None
        self.sorted_indices: Any = None
        self.unsorted_indices: Any = None

    def __str__(self) -> str:
        # (nnabla 1.39's raises KeyError: its format string names ``self``)
        return (
            f"data={self.data}, batch_sizes={self.batch_sizes}, "
            f"sorted_indices={self.sorted_indices}, unsorted_indices={self.unsorted_indices}"
        )


def pad_sequence(
    sequences: Sequence[Any], batch_first: bool = False, padding_value: float = 0.0
) -> Any:
    """Stack the Variables ``sequences`` (``(T_i, *)``) into ``(T, B, *)`` (``(B, T, *)`` with
    ``batch_first``), ``T = max T_i``, each padded with ``padding_value`` after its end.
    Composed of ``F.pad`` and ``F.stack``: the sequences get their gradients (nnabla 1.39's,
    built with item assignments into a constant, gives them none).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.utils.rnn as rnn_utils
        >>> a = nn.Variable.from_numpy_array(np.array([1.0, 1.0, 1.0]))
        >>> b = nn.Variable.from_numpy_array(np.array([2.0]))
        >>> rnn_utils.pad_sequence([a, b]).d
        array([[1., 2.],
               [1., 0.],
               [1., 0.]], dtype=float32)
    """
    if not sequences:
        raise ValueError("nnabla.utils.rnn.pad_sequence: give at least one sequence")
    tail = tuple(sequences[0].shape[1:])
    for i, s in enumerate(sequences):
        if len(s.shape) < 1 or tuple(s.shape[1:]) != tail:
            raise ValueError(
                "nnabla.utils.rnn.pad_sequence: every sequence must have the shape (T_i, "
                f"*{tail}), sequence {i} has {tuple(s.shape)}"
            )
    t = max(int(s.shape[0]) for s in sequences)
    rest = (0, 0) * len(tail)
    padded = [
        s
        if int(s.shape[0]) == t
        else F.pad(s, (0, t - int(s.shape[0]), *rest), "constant", float(padding_value))
        for s in sequences
    ]
    return F.stack(*padded, axis=0 if batch_first else 1)


def pack_padded_sequence(
    padded_sequence: Any, lengths: Any, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Pack ``padded_sequence`` (``(T, B, *)``, ``(B, T, *)`` with ``batch_first``) of
    ``lengths`` (``(B,)``) with ``F.pack_padded_sequence``. With ``enforce_sorted`` the lengths
    must be in decreasing order; otherwise the sequences are first ordered by decreasing length
    (ties keep their order, as nnabla's ``F.sort``) with a gather, and the
    :class:`PackedSequence` keeps ``sorted_indices`` and ``unsorted_indices`` for
    :func:`pad_packed_sequence`. A length of 0 packs no row (sorted last, as nnabla's).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.utils.rnn as rnn_utils
        >>> padded = nn.Variable.from_numpy_array(np.array([[1.0, 4.0], [0.0, 5.0]]))
        >>> lengths = nn.Variable.from_numpy_array(np.array([1, 2]))
        >>> p = rnn_utils.pack_padded_sequence(padded, lengths, enforce_sorted=False)
        >>> p.data.d, p.sorted_indices.d
        (array([4., 1., 5.], dtype=float32), array([1, 0]))
    """
    sorted_indices = unsorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = F.sort(lengths, axis=0, reverse=True, with_index=True)
        b = int(sorted_indices.shape[0])
        unsorted_indices = F.scatter_nd(
            F.arange(0, b), F.reshape(sorted_indices, (1, b)), shape=(b,)
        )
        padded_sequence = F.gather(padded_sequence, sorted_indices, axis=0 if batch_first else 1)
    data, batch_sizes = F.pack_padded_sequence(padded_sequence, lengths, batch_first)
    packed = PackedSequence()
    packed.data = data
    packed.batch_sizes = batch_sizes
    packed.sorted_indices = sorted_indices
    packed.unsorted_indices = unsorted_indices
    return packed


def pack_sequence(
    sequences: Sequence[Any], batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Pack the Variables ``sequences`` (``(T_i, *)``): :func:`pad_sequence` then
    :func:`pack_padded_sequence` with their lengths (``batch_first`` is ignored, as nnabla's:
    the packed rows are the same).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.utils.rnn as rnn_utils
        >>> a = nn.Variable.from_numpy_array(np.array([1.0, 1.0]))
        >>> b = nn.Variable.from_numpy_array(np.array([2.0]))
        >>> rnn_utils.pack_sequence([a, b]).data.d
        array([1., 2., 1.], dtype=float32)
    """
    padded = pad_sequence(sequences)
    lengths = Variable.from_numpy_array(np.array([int(s.shape[0]) for s in sequences]))
    return pack_padded_sequence(padded, lengths, enforce_sorted=enforce_sorted)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Any, Any]:
    """Unpack the :class:`PackedSequence` ``sequence`` into ``(padded_sequence, lengths)``
    with ``F.pad_packed_sequence`` (``(T, B, *)``, ``(B, T, *)`` with ``batch_first``, padded
    with ``padding_value`` up to ``total_length`` steps when given), in the batch order before
    sorting when ``sequence`` has ``unsorted_indices`` (``lengths`` is then float32, as
    nnabla's; the sequences of length 0 come back all ``padding_value``, with length 0, where
    nnabla 1.39's gather fails with ``RuntimeError``). A ``total_length`` below the longest
    sequence raises ``ValueError``, as nnabla's. nnabla 1.39 pads with 0 whatever
    ``padding_value``; the layer pads with ``padding_value``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.utils.rnn as rnn_utils
        >>> a = nn.Variable.from_numpy_array(np.array([1.0, 1.0]))
        >>> b = nn.Variable.from_numpy_array(np.array([2.0]))
        >>> padded, lengths = rnn_utils.pad_packed_sequence(rnn_utils.pack_sequence([a, b]))
        >>> padded.d, lengths.d
        (array([[1., 2.],
               [1., 0.]], dtype=float32), array([2, 1], dtype=int32))
    """
    t = int(sequence.batch_sizes.shape[0])
    if total_length is not None and total_length < t:
        raise ValueError(
            f"`total length ({total_length})` must be greater than or equal to the maximum "
            f"length ({t})."
        )
    if sequence.unsorted_indices is None:
        padded, lengths = F.pad_packed_sequence(
            sequence.data, sequence.batch_sizes, batch_first, padding_value, total_length
        )
    else:  # every sequence, those of length 0 (sorted last, packing no row) too
        padded, lengths = F._pad_packed_sequence(
            sequence.data,
            sequence.batch_sizes,
            batch_first,
            padding_value,
            total_length,
            int(sequence.unsorted_indices.shape[0]),
        )
        padded = F.gather(padded, sequence.unsorted_indices, axis=0 if batch_first else 1)
        lengths = F.cast(F.gather(lengths, sequence.unsorted_indices, axis=0), "float32")
    return padded, lengths
