"""nnabla's packed sequences: ``PackPaddedSequence`` and ``PadPackedSequence``.

A packed sequence holds, time step after time step, the rows of the sequences still running at
that step: with the lengths sorted in decreasing order, ``batch_sizes[t]`` (the number of
sequences longer than ``t``) rows for step ``t``. Packing gathers those rows from a padded
``(T, B, *)`` array; padding scatters them back. Both are recorded functions of the layer (a
:class:`gradhub.registry.FunctionDef` applied with :func:`gradhub.graph.apply`) whose rows are
worked out from the lengths (or batch sizes) **at each execution**, so ``forward()`` follows new
lengths, and whose backward rule is the other function (packing's gradient is the padding of the
incoming gradient, and the reverse): they are linear, differentiable to any order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gradhub.graph import apply
from gradhub.registry import FunctionDef, Rule
from gradhub.variable import Variable as NativeVariable

from . import _layer_functions as _layer


def _host_ints(a: Any) -> np.ndarray:
    arr = a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)
    return arr.reshape(-1).astype(np.int64)


def _counts_above(values: Any, refusal: str) -> np.ndarray:
    """``counts[i]``: how many of the positive, non-increasing ``values`` are above ``i``, for
    ``i`` below their largest (the same map takes lengths to batch sizes and batch sizes back
    to lengths); other ``values`` raise ``ValueError`` with ``refusal`` and the values."""
    v = _host_ints(values)
    if v.size and (np.any(np.diff(v) > 0) or v[-1] < 1):
        raise ValueError(f"{refusal}, got {v.tolist()}")
    top = int(v.max()) if v.size else 0
    return np.array([(v > i).sum() for i in range(top)], dtype=np.int64)


def batch_sizes_of(lengths: Any) -> np.ndarray:
    """``batch_sizes[t]``: how many of the ``lengths`` (decreasing) are above ``t``."""
    return _counts_above(
        lengths,
        "nnabla pack_padded_sequence: lengths must be positive and sorted in decreasing order "
        "(give enforce_sorted=False to nnabla.utils.rnn's)",
    )


def lengths_of(batch_sizes: Any) -> np.ndarray:
    """The lengths of the sequences whose batch sizes are ``batch_sizes`` (non-increasing)."""
    return _counts_above(
        batch_sizes,
        "nnabla pad_packed_sequence: batch_sizes must be positive and non-increasing",
    )


def _rows(bs: np.ndarray, batch: int) -> np.ndarray:
    """The rows ``t * batch + b`` (``b < bs[t]``) of a ``(T * batch, ...)`` array, in packed
    order."""
    if not bs.size:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([t * batch + np.arange(n) for t, n in enumerate(bs)]).astype(np.int64)


def _sizes(sizes: Any, kind: str) -> np.ndarray:
    return batch_sizes_of(sizes) if kind == "lengths" else _host_ints(sizes)


# -- packing: a gather of the rows ----------------------------------------------------------------


def _pack_kernel(xp: Any, padded: Any, sizes: Any, kind: str = "lengths") -> Any:
    bs = _sizes(sizes, kind)
    t, b = int(padded.shape[0]), int(padded.shape[1])
    if bs.size > t or (bs.size and int(bs[0]) > b):
        raise ValueError(
            f"nnabla pack_padded_sequence: lengths longer than the {t} steps or more sequences "
            f"than the batch of {b} (batch sizes {bs.tolist()})"
        )
    flat = padded.reshape((t * b,) + tuple(padded.shape[2:]))
    return flat[xp.asarray(_rows(bs, b))]


def _pack_bw(
    gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, kind: str = "lengths"
) -> list[Any]:
    t, b = int(in_shapes[0][0]), int(in_shapes[0][1])
    return [unpack(gy[0], ins[1], kind, t, b, 0.0), None]


def _unpack_kernel(
    xp: Any,
    packed: Any,
    sizes: Any,
    kind: str = "batch_sizes",
    length: int = -1,
    batch: int = -1,
    padding_value: float = 0.0,
) -> Any:
    bs = _sizes(sizes, kind)
    if int(bs.sum()) != int(packed.shape[0]):
        raise ValueError(
            f"nnabla pad_packed_sequence: the batch sizes {bs.tolist()} add up to "
            f"{int(bs.sum())}, not to the {int(packed.shape[0])} rows of the packed sequence"
        )
    t = max(int(length), int(bs.size))
    b = int(batch) if batch >= 0 else (int(bs.max()) if bs.size else 0)
    tail = tuple(packed.shape[1:])
    out = xp.full((t * b,) + tail, padding_value, dtype=packed.dtype)
    out[xp.asarray(_rows(bs, b))] = packed
    return out.reshape((t, b) + tail)


def _unpack_bw(
    gy: Any,
    ins: Any,
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    kind: str = "batch_sizes",
    **a: Any,
) -> list[Any]:
    return [pack(gy[0], ins[1], kind), None]


PACK = FunctionDef(
    "PackPaddedSequence",
    _pack_kernel,
    _layer._PROVIDER,
    inputs=("padded_sequence", "sizes"),
    attrs={"kind": "lengths"},
    rule=Rule(_pack_bw, _layer._PROVIDER, (1,), ()),
    doc="nnabla's PackPaddedSequence (time major): the rows of the running sequences, in order",
)

UNPACK = FunctionDef(
    "PadPackedSequence",
    _unpack_kernel,
    _layer._PROVIDER,
    inputs=("packed_sequence", "sizes"),
    attrs={"kind": "batch_sizes", "length": -1, "batch": -1, "padding_value": 0.0},
    rule=Rule(_unpack_bw, _layer._PROVIDER, (1,), ()),
    doc="nnabla's PadPackedSequence (time major): the packed rows scattered into (T, B, *)",
)


def pack(padded: Any, sizes: Any, kind: str) -> Any:
    """Pack the time-major ``padded`` ``(T, B, *)`` by ``sizes`` (``kind``: "lengths" or
    "batch_sizes")."""
    return apply(PACK, (padded, sizes), {"kind": kind})


def unpack(
    packed: Any, sizes: Any, kind: str, length: int, batch: int, padding_value: float
) -> Any:
    """Pad ``packed`` into a time-major ``(max(length, T), batch, *)`` array (``batch`` -1: the
    largest batch size)."""
    attrs = {
        "kind": kind,
        "length": int(length),
        "batch": int(batch),
        "padding_value": float(padding_value),
    }
    return apply(UNPACK, (packed, sizes), attrs)


# -- the batch sizes and lengths as Variables -----------------------------------------------------


def _batch_sizes_kernel(xp: Any, lengths: Any) -> Any:
    return xp.asarray(batch_sizes_of(lengths).astype(np.int32))


def _lengths_kernel(xp: Any, batch_sizes: Any) -> Any:
    return xp.asarray(lengths_of(batch_sizes).astype(np.int32))


BATCH_SIZES = FunctionDef(
    "BatchSizes",
    _batch_sizes_kernel,
    _layer._PROVIDER,
    inputs=("lengths",),
    differentiable=False,
    doc="the batch sizes (int32) of a packed sequence of the decreasing lengths",
)

LENGTHS = FunctionDef(
    "Lengths",
    _lengths_kernel,
    _layer._PROVIDER,
    inputs=("batch_sizes",),
    differentiable=False,
    doc="the lengths (int32) of the sequences of a packed sequence's batch sizes",
)


def batch_sizes(lengths: NativeVariable) -> Any:
    """The int32 batch sizes of ``lengths``, recomputed by ``forward()``."""
    return apply(BATCH_SIZES, (lengths,), {})


def lengths(batch_sizes: NativeVariable) -> Any:
    """The int32 lengths of ``batch_sizes``, recomputed by ``forward()``."""
    return apply(LENGTHS, (batch_sizes,), {})
