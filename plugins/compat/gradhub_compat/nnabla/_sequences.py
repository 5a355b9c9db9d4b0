"""nnabla's packed sequences: ``PackPaddedSequence`` and ``PadPackedSequence``.

A packed sequence holds, time step after time step, the rows of the sequences still running at
that step: with the lengths sorted in decreasing order, ``batch_sizes[t]`` (the number of
sequences longer than ``t``) rows for step ``t``. Packing gathers those rows from a padded
``(T, B, *)`` array; padding scatters them back. Both are recorded functions of the layer (a
:class:`gradhub.registry.FunctionDef` applied with :func:`gradhub.graph.apply`) whose rows are
worked out from the lengths (or batch sizes) **at each execution**, so ``forward()`` follows new
lengths, and whose backward rule is the other function (packing's gradient is the padding of the
incoming gradient, and the reverse): they are linear, differentiable to any order.

The shapes of a graph are those of its build (gradhub's planned ``forward()`` replays them, and
the functions downstream keep them, as nnabla's): the functions built by ``F.pack_padded_sequence``
and ``F.pad_packed_sequence`` remember their output's rows (``built_rows``) and padded steps and
batch (``built_shape``), and a later execution on new lengths or batch sizes that change them
raises ``ValueError`` saying that the graph must be built again.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gradhub.graph import apply
from gradhub.registry import FunctionDef, Rule
from gradhub.variable import Variable as NativeVariable

from .._common import host_array
from . import _layer_functions as _layer


def _host_ints(a: Any) -> np.ndarray:
    return host_array(a).reshape(-1).astype(np.int64)


def _counts_above(values: Any, refusal: str, lowest: int = 1, below: str = "") -> np.ndarray:
    """``counts[i]``: how many of the non-increasing ``values`` (at least ``lowest``) are above
    ``i``, for ``i`` below their largest (the same map takes lengths to batch sizes and batch
    sizes back to lengths); other ``values`` raise ``ValueError`` with ``below`` (a value under
    ``lowest``) or ``refusal`` and the values."""
    v = _host_ints(values)
    if v.size and int(v.min()) < lowest:
        raise ValueError(f"{below or refusal}, got {v.tolist()}")
    if v.size and np.any(np.diff(v) > 0):
        raise ValueError(f"{refusal}, got {v.tolist()}")
    top = int(v.max()) if v.size else 0
    return np.array([(v > i).sum() for i in range(top)], dtype=np.int64)


def batch_sizes_of(lengths: Any) -> np.ndarray:
    """``batch_sizes[t]``: how many of the ``lengths`` (decreasing, zeros allowed: they pack no
    row) are above ``t``."""
    return _counts_above(
        lengths,
        "nnabla pack_padded_sequence: lengths must be sorted in decreasing order "
        "(give enforce_sorted=False to nnabla.utils.rnn's)",
        lowest=0,
        below="nnabla pack_padded_sequence: lengths must be non-negative",
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


def _pack_kernel(
    xp: Any, padded: Any, sizes: Any, kind: str = "lengths", built_rows: int = -1
) -> Any:
    bs = _sizes(sizes, kind)
    t, b = int(padded.shape[0]), int(padded.shape[1])
    if bs.size > t or (bs.size and int(bs[0]) > b):
        raise ValueError(
            f"nnabla pack_padded_sequence: lengths longer than the {t} steps or more sequences "
            f"than the batch of {b} (batch sizes {bs.tolist()})"
        )
    if built_rows >= 0 and int(bs.sum()) != built_rows:
        raise ValueError(
            f"nnabla F.pack_padded_sequence: the new {kind} {_host_ints(sizes).tolist()} pack "
            f"{int(bs.sum())} rows, not the {built_rows} of the graph as built; a graph keeps "
            "the shapes of its build: build it again (call F.pack_padded_sequence again) for "
            "lengths that change the packed size"
        )
    flat = padded.reshape((t * b,) + tuple(padded.shape[2:]))
    return flat[xp.asarray(_rows(bs, b))]


def _pack_bw(
    gy: Any,
    ins: Any,
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    kind: str = "lengths",
    built_rows: int = -1,
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
    built_shape: tuple[int, ...] = (),
) -> Any:
    bs = _sizes(sizes, kind)
    if int(bs.sum()) != int(packed.shape[0]):
        raise ValueError(
            f"nnabla pad_packed_sequence: the batch sizes {bs.tolist()} add up to "
            f"{int(bs.sum())}, not to the {int(packed.shape[0])} rows of the packed sequence"
        )
    t = max(int(length), int(bs.size))
    b = int(batch) if batch >= 0 else (int(bs.max()) if bs.size else 0)
    if built_shape and (t, b) != tuple(built_shape):
        raise ValueError(
            f"nnabla F.pad_packed_sequence: the new batch sizes {bs.tolist()} pad to {t} steps "
            f"of {b} sequences, not the {built_shape[0]} steps of {built_shape[1]} of the graph "
            "as built; a graph keeps the shapes of its build: build it again (call "
            "F.pad_packed_sequence again) for batch sizes that change the padded shape"
        )
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
    attrs={"kind": "lengths", "built_rows": -1},
    rule=Rule(_pack_bw, _layer._PROVIDER, (1,), ()),
    doc="nnabla's PackPaddedSequence (time major): the rows of the running sequences, in order",
)

UNPACK = FunctionDef(
    "PadPackedSequence",
    _unpack_kernel,
    _layer._PROVIDER,
    inputs=("packed_sequence", "sizes"),
    attrs={
        "kind": "batch_sizes",
        "length": -1,
        "batch": -1,
        "padding_value": 0.0,
        "built_shape": (),
    },
    rule=Rule(_unpack_bw, _layer._PROVIDER, (1,), ()),
    doc="nnabla's PadPackedSequence (time major): the packed rows scattered into (T, B, *)",
)


def _keep_built(y: Any, key: str, value: Any) -> None:
    """Make the function that made ``y`` refuse executions whose output shape differs from the
    build's (``value`` under the attribute ``key``)."""
    node = getattr(y, "_creator", None)
    if node is not None:
        node.attrs[key] = value


def pack(padded: Any, sizes: Any, kind: str, check: bool = False) -> Any:
    """Pack the time-major ``padded`` ``(T, B, *)`` by ``sizes`` (``kind``: "lengths" or
    "batch_sizes"); with ``check``, later executions must pack as many rows."""
    y = apply(PACK, (padded, sizes), {"kind": kind, "built_rows": -1})
    if check:
        _keep_built(y, "built_rows", int(y.shape[0]))
    return y


def unpack(
    packed: Any,
    sizes: Any,
    kind: str,
    length: int,
    batch: int,
    padding_value: float,
    check: bool = False,
) -> Any:
    """Pad ``packed`` into a time-major ``(max(length, T), batch, *)`` array (``batch`` -1: the
    largest batch size); with ``check``, later executions must give the same steps and batch."""
    attrs = {
        "kind": kind,
        "length": int(length),
        "batch": int(batch),
        "padding_value": float(padding_value),
        "built_shape": (),
    }
    y = apply(UNPACK, (packed, sizes), attrs)
    if check:
        _keep_built(y, "built_shape", (int(y.shape[0]), int(y.shape[1])))
    return y


# -- the batch sizes and lengths as Variables -----------------------------------------------------


def _batch_sizes_kernel(xp: Any, lengths: Any) -> Any:
    return xp.asarray(batch_sizes_of(lengths).astype(np.int32))


def _lengths_kernel(xp: Any, batch_sizes: Any, batch: int = -1) -> Any:
    out = lengths_of(batch_sizes).astype(np.int32)
    if batch > out.size:  # the sequences of length 0 that packed no row
        out = np.concatenate([out, np.zeros(batch - out.size, np.int32)])
    return xp.asarray(out)


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
    attrs={"batch": -1},
    differentiable=False,
    doc="the lengths (int32) of the sequences of a packed sequence's batch sizes",
)


def batch_sizes(lengths: NativeVariable) -> Any:
    """The int32 batch sizes of ``lengths``, recomputed by ``forward()``."""
    return apply(BATCH_SIZES, (lengths,), {})


def lengths(batch_sizes: NativeVariable, batch: int = -1) -> Any:
    """The int32 lengths of ``batch_sizes``, recomputed by ``forward()`` (``batch`` given: that
    many, the sequences that packed no row of length 0)."""
    return apply(LENGTHS, (batch_sizes,), {"batch": int(batch)})
