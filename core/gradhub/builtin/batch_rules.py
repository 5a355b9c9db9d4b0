"""Batching rules (for :func:`gradhub.func.vmap`) of the core's functions that are not
elementwise (the elementwise ones get :func:`gradhub.batching.elementwise_rule` when they are
registered): ``Sum``, ``BroadcastTo``, ``Reshape``, ``Transpose``, ``Cast``, ``ToDevice``,
``BatchMatmul``, ``GetItem`` and ``GetItemBackward``.

Each rule receives the inputs with the batched ones holding the whole batch, batch axis first
(``dims[i] == 0``; ``None``: not batched), and returns ``(output, 0)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..batching import loop, shift_axes
from ..ops import call
from ..variable import Variable
from .shape import permutation


def _sum(args: tuple[Any, ...], dims: tuple[Any, ...], axis: Any, keepdims: bool) -> Any:
    (x,) = args
    return call("Sum", x, axis=shift_axes(axis, x.ndim - 1), keepdims=keepdims), 0


def _broadcast_to(args: tuple[Any, ...], dims: tuple[Any, ...], shape: Any) -> Any:
    (x,) = args
    shape = tuple(int(s) for s in shape)
    nd = x.ndim - 1
    if len(shape) > nd:
        x = call("Reshape", x, shape=(x.shape[0], *(1,) * (len(shape) - nd), *x.shape[1:]))
    return call("BroadcastTo", x, shape=(x.shape[0], *shape)), 0


def _reshape(args: tuple[Any, ...], dims: tuple[Any, ...], shape: Any) -> Any:
    (x,) = args
    return call("Reshape", x, shape=(x.shape[0], *tuple(shape))), 0


def _passthrough(name: str) -> Any:
    def rule(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
        return call(name, *args, **attrs), 0

    rule.__name__ = rule.__qualname__ = f"batch_{name}"
    return rule


def _batch_matmul(
    args: tuple[Any, ...], dims: tuple[Any, ...], transpose_a: bool, transpose_b: bool
) -> Any:
    """``a @ b`` for a batch: a batched 1-d operand is promoted to a matrix (and the promoted
    axis dropped from the result), the batched operands get size-1 batch axes after the vmap
    axis so that numpy's broadcasting of the leading axes pairs the elements' ones."""
    a, b = args
    da, db = dims
    ta, tb = bool(transpose_a), bool(transpose_b)
    drop = []
    if db is not None and b.ndim == 2:  # one element is 1-d: (B, k) -> (B, k, 1)
        b = call("Reshape", b, shape=(b.shape[0], b.shape[1], 1))
        tb = False
        drop.append(-1)
    if da is not None and a.ndim == 2:  # (B, k) -> (B, 1, k)
        a = call("Reshape", a, shape=(a.shape[0], 1, a.shape[1]))
        ta = False
        # the promoted row: before b's columns, unless b is an unbatched vector (numpy drops it)
        drop.append(-2 if db is not None or b.ndim >= 2 else -1)
    leads = [max(v.ndim - (d is not None) - 2, 0) for v, d in ((a, da), (b, db))]
    lead = max(leads)
    out = []
    for v, d, n in ((a, da, leads[0]), (b, db, leads[1])):
        if d is not None and n < lead:
            v = call("Reshape", v, shape=(v.shape[0], *(1,) * (lead - n), *v.shape[1:]))
        out.append(v)
    y = call("BatchMatmul", out[0], out[1], transpose_a=ta, transpose_b=tb)
    if drop:
        keep = [s for i, s in enumerate(y.shape) if i - y.ndim not in drop]
        y = call("Reshape", y, shape=tuple(keep))
    return y, 0


def _is_advanced(k: Any) -> bool:
    return isinstance(k, (Variable, np.ndarray, list, bool, np.bool_)) or (
        hasattr(k, "dtype") and hasattr(k, "shape")
    )


def batched_key(key: Any) -> tuple[Any, ...] | None:
    """``(slice(None), *key)``: the key of one element for the batch (batch axis first); None
    when numpy would move the indexed axes in front of the batch axis (advanced indices that are
    not next to each other)."""
    k = key if isinstance(key, tuple) else (key,)
    adv = [i for i, e in enumerate(k) if _is_advanced(e)]
    if adv:
        # with an array in the key, ints index as arrays too (numpy's advanced indexing)
        pos = [i for i, e in enumerate(k) if i in adv or isinstance(e, (int, np.integer))]
        if pos[-1] - pos[0] + 1 != len(pos):
            return None
    return (slice(None), *k)


def _gather_key(key: Any, n: int) -> tuple[Any, ...] | None:
    """The key of the batch for an element's key holding batched integer Variables (indices
    that differ across the batch): ``(arange(n), *entries)`` with each batched entry replaced by
    its batch of indices, when the element's array entries come first and next to each other
    (so numpy keeps the indexed axes in place); None otherwise, or when the indices are not
    available (an outer vmap's batch)."""
    from ..batching import BatchedVariable

    k = key if isinstance(key, tuple) else (key,)
    adv = [i for i, e in enumerate(k) if _is_advanced(e) or isinstance(e, (int, np.integer))]
    if not adv or adv != list(range(len(adv))):
        return None
    entries: list[Any] = []
    rank = 0
    for e in k:
        if isinstance(e, BatchedVariable):
            v = e.value
            if isinstance(v, BatchedVariable) or v.dtype.kind not in "iu":
                return None
            arr = v.device.to_numpy(v.d)
            rank = max(rank, arr.ndim - 1)
            entries.append(arr)
        elif isinstance(e, Variable):
            arr = e.device.to_numpy(e.d)
            rank = max(rank, arr.ndim)
            entries.append(arr)
        else:
            if _is_advanced(e):
                rank = max(rank, np.ndim(e))
            entries.append(e)
    # each batched entry (n, *shape) gets its size-1 axes after the batch axis, as align does
    for i, e in enumerate(k):
        if isinstance(e, BatchedVariable):
            a = entries[i]
            entries[i] = a.reshape((n, *(1,) * (rank - a.ndim + 1), *a.shape[1:]))
    return (np.arange(n).reshape((n, *(1,) * rank)), *entries)


def _key_loop(x: Any, key: Any) -> Any:
    """The loop fallback for a batched key that one gather cannot express: element ``i`` of
    ``x`` indexed with element ``i`` of each batched entry (with the one-time warning)."""
    import warnings

    from .. import batching
    from ..batching import BatchedVariable

    k = key if isinstance(key, tuple) else (key,)
    values: list[Any] = []
    for e in k:
        if isinstance(e, BatchedVariable):
            if isinstance(e.value, BatchedVariable):
                raise TypeError(
                    "get_item(): the indices differ across an outer vmap's batch as well; "
                    "index with them in that vmap's function, or use gradhub.functions.embed"
                )
            values.append(e.value.device.to_numpy(e.value.d))
        else:
            values.append(None)
    why = "cannot batch this batched key"
    if batching._refusing:
        raise batching.LoopRefused(f"get_item() (GetItem) {why}")
    if ("GetItem", why) not in batching._warned:
        batching._warned.add(("GetItem", why))
        warnings.warn(
            f"vmap: get_item() (GetItem, from gradhub) {why}; it runs once per batch element "
            "(a Python loop) and the results are stacked",
            UserWarning,
            stacklevel=4,
        )
    rows = []
    for i in range(int(x.shape[0])):
        ki = tuple(e if v is None else v[i] for e, v in zip(k, values))
        rows.append(
            call("GetItem", call("GetItem", x, key=i), key=ki if isinstance(key, tuple) else ki[0])
        )
    return batching.stack(rows)


def _holds_batched(key: Any) -> bool:
    from ..batching import BatchedVariable

    k = key if isinstance(key, tuple) else (key,)
    return any(isinstance(e, BatchedVariable) for e in k)


def _get_item(args: tuple[Any, ...], dims: tuple[Any, ...], key: Any) -> Any:
    if _holds_batched(key):  # indices that differ across the batch: one gather
        gk = _gather_key(key, int(args[0].shape[0]))
        if gk is None:
            return _key_loop(args[0], key), 0
        return call("GetItem", args[0], key=gk), 0
    bk = batched_key(key)
    if bk is None:
        return loop("GetItem", args, dims, {"key": key}, "cannot batch this key")
    return call("GetItem", args[0], key=bk), 0


def _get_item_backward(args: tuple[Any, ...], dims: tuple[Any, ...], key: Any, shape: Any) -> Any:
    bk = batched_key(key)
    g = args[0]
    if bk is None:
        return loop(
            "GetItemBackward", args, dims, {"key": key, "shape": shape}, "cannot batch this key"
        )
    return call("GetItemBackward", g, key=bk, shape=(g.shape[0], *tuple(shape))), 0


def _transpose(args: tuple[Any, ...], dims: tuple[Any, ...], axes: Any) -> Any:
    (x,) = args
    perm = permutation(axes, x.ndim - 1)
    return call("Transpose", x, axes=(0, *(a + 1 for a in perm))), 0


def register_batching_rules(register: Any) -> None:
    """Set the batching rules of the core's functions that are not elementwise."""
    r = register.batching_rule
    r("Sum", _sum)
    r("BroadcastTo", _broadcast_to)
    r("Reshape", _reshape)
    r("Transpose", _transpose)
    r("Cast", _passthrough("Cast"))
    r("ToDevice", _passthrough("ToDevice"))
    r("BatchMatmul", _batch_matmul)
    r("GetItem", _get_item)
    r("GetItemBackward", _get_item_backward)
