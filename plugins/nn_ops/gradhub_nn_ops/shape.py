"""gradhub-nn-ops: shape functions.

Slice, Concatenate, Stack, Split, Pad, Flip, Tile, Squeeze, ExpandDims and Broadcast,
with nnabla's names and argument conventions. Every backward rule is written with registered
functions, so each function is differentiable to any order; the rules of Slice, Concatenate,
Stack and Pad use the core's indexing functions GetItem and GetItemBackward
(:mod:`gradhub.builtin.indexing`), each other's adjoints.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any

import numpy as np
from gradhub import Sample, Variable
from gradhub.ops import call, with_real_scalars

from .math import broadcasts_to, is_int

# -- helpers -----------------------------------------------------------------------------------


def _axis(fn: str, arg: str, axis: Any, ndim: int) -> int:
    """Normalize one axis (negative counts from the end); raise naming the function and arg."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{fn}: {arg} must be an int, got {axis!r}")
    a = int(axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"{fn}: {arg}={axis} is out of range for an input with {ndim} dims")
    return a % ndim


def _axes(fn: str, arg: str, axes: Any, ndim: int) -> tuple[int, ...]:
    if isinstance(axes, (int, np.integer)):
        axes = (axes,)
    out = tuple(_axis(fn, arg, a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}: {arg}={tuple(axes)} repeats an axis")
    return out


def _ints(fn: str, arg: str, value: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple; a TypeError naming ``fn`` and ``arg`` for
    anything else (1.5 is never truncated to 1)."""
    if is_int(value):
        return (int(value),)
    try:
        vals = tuple(value)
    except TypeError:
        vals = (None,)
    if isinstance(value, (str, bytes)) or not all(is_int(v) for v in vals):
        raise TypeError(f"{fn}: {arg} must be an int or a sequence of ints, got {value!r}")
    return tuple(int(v) for v in vals)


# -- Slice (composite) -------------------------------------------------------------------------


def slice_(x: Any, start: Any = None, stop: Any = None, step: Any = None) -> Variable:
    """Slice ``x`` as nnabla's ``F.slice``: ``y = x[start_0:stop_0:step_0, ...]``.

    ``start``, ``stop``, ``step`` are sequences of equal length (entries may be None); when shorter
    than ``x.ndim`` they apply to the last axes, the leading axes being taken whole. Negative
    values count from the end, as in Python. Differentiable through GetItem.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.arange(12.0).reshape(3, 4))
        >>> F.slice(x, start=(0, 1), stop=(3, 4), step=(2, 2)).d
        array([[ 1.,  3.],
               [ 9., 11.]])
    """
    ndim = len(x.shape)
    lengths = {len(v) for v in (start, stop, step) if v is not None}
    if len(lengths) > 1:
        raise ValueError(
            f"slice: start, stop and step must have the same length, got start={start}, "
            f"stop={stop}, step={step}"
        )
    n = lengths.pop() if lengths else ndim
    if n > ndim:
        raise ValueError(f"slice: start/stop/step have {n} entries but x has only {ndim} dims")
    start = tuple(start) if start is not None else (None,) * n
    stop = tuple(stop) if stop is not None else (None,) * n
    step = tuple(step) if step is not None else (None,) * n
    for arg, vals in (("start", start), ("stop", stop), ("step", step)):
        if not all(v is None or is_int(v) for v in vals):
            raise TypeError(f"slice: {arg} must hold ints or None, got {arg}={vals}")
    if any(s == 0 for s in step if s is not None):
        raise ValueError(f"slice: step must not contain 0, got step={step}")
    key = (slice(None),) * (ndim - n) + tuple(slice(a, b, c) for a, b, c in zip(start, stop, step))
    return call("GetItem", x, key=key)  # type: ignore[no-any-return]


def _slice_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.standard_normal((3, 5))
    yield Sample((x,), {"start": (0, 1), "stop": (3, 5), "step": (1, 2)}, name="all axes")
    yield Sample(
        (x,), {"start": (-1,), "stop": (None,), "step": (-2,)}, name="last axis, negative step"
    )
    yield Sample(
        (rng.standard_normal((2, 3, 4)),),
        {"start": (1, 0), "stop": (3, 3), "step": (1, 3)},
        name="trailing axes",
    )
    yield Sample((x,), {"start": (1, 7), "stop": (2, 9), "step": (1, 1)}, name="empty (clamped)")
    yield Sample((x,), {}, name="defaults take all")


def _slice_ref(x: np.ndarray, start: Any = None, stop: Any = None, step: Any = None) -> Any:
    # nnabla's index arithmetic, written out per axis
    ndim = x.ndim
    n = len(start) if start is not None else ndim
    out = x
    for i in range(n):
        ax = ndim - n + i
        size = x.shape[ax]
        st = 1 if step is None or step[i] is None else step[i]
        a = None if start is None else start[i]
        b = None if stop is None else stop[i]
        if a is not None and a < 0:
            a += size
        if b is not None and b < 0:
            b += size
        if a is None:
            a = 0 if st > 0 else size - 1
        if b is None:
            b = size if st > 0 else -1
        lo, hi = (0, size) if st > 0 else (-1, size - 1)
        a, b = min(max(a, lo), hi), min(max(b, lo), hi)
        idx = list(range(a, b, st))
        out = np.take(out, np.array(idx, dtype=np.intp), axis=ax)
    return out


# -- Concatenate / Stack / Split ---------------------------------------------------------------


def _concat_axis(axis: Any, ndim: int) -> int:
    return ndim - 1 if axis is None else _axis("concatenate", "axis", axis, ndim)


def _concatenate(xp: Any, *xs: Any, axis: Any = None) -> Any:
    if not xs:
        raise ValueError("concatenate: needs at least one input")
    ax = _concat_axis(axis, xs[0].ndim)
    try:
        return xp.concatenate(xs, axis=ax)
    except ValueError:  # only a failing call pays for the message
        shapes = [tuple(x.shape) for x in xs]
        raise ValueError(
            f"concatenate: the inputs xs must have the same number of dims and the same size "
            f"on every axis but axis={ax}, got shapes {shapes}"
        ) from None


def _concatenate_bw(gy, inputs, in_shapes, outputs, out_shapes, axis):  # type: ignore[no-untyped-def]
    ax = _concat_axis(axis, len(in_shapes[0]))
    grads = []
    off = 0
    for s in in_shapes:
        n = s[ax]
        key = (slice(None),) * ax + (slice(off, off + n),)
        grads.append(call("GetItem", gy[0], key=key))
        off += n
    return grads


def _concatenate_samples(rng: np.random.Generator) -> Iterator[Sample]:
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 2))
    yield Sample((a, b), {"axis": None}, name="default last axis")
    yield Sample(
        (a, rng.standard_normal((1, 3)), rng.standard_normal((2, 3))),
        {"axis": 0},
        name="three inputs, axis 0",
    )
    yield Sample((a, b), {"axis": -1}, name="negative axis")
    yield Sample((a, rng.standard_normal((2, 0))), {"axis": 1}, name="size-0 piece")
    yield Sample((rng.standard_normal((3, 2)).T, b), {"axis": 1}, name="non-contiguous")
    yield Sample((rng.standard_normal((4,)),), {"axis": 0}, name="one input")


def _concatenate_ref(*xs: np.ndarray, axis: Any = None) -> np.ndarray:
    return np.concatenate(xs, axis=xs[0].ndim - 1 if axis is None else axis)


def _stack(xp: Any, *xs: Any, axis: int = 0) -> Any:
    if not xs:
        raise ValueError("stack: needs at least one input")
    ax = _axis("stack", "axis", axis, xs[0].ndim + 1)
    try:
        return xp.stack(xs, axis=ax)
    except ValueError:  # only a failing call pays for the message
        raise ValueError(
            f"stack: the inputs xs must all have the same shape, got shapes "
            f"{[tuple(x.shape) for x in xs]}"
        ) from None


def _stack_bw(gy, inputs, in_shapes, outputs, out_shapes, axis):  # type: ignore[no-untyped-def]
    ax = _axis("stack", "axis", axis, len(in_shapes[0]) + 1)
    return [call("GetItem", gy[0], key=(slice(None),) * ax + (i,)) for i in range(len(in_shapes))]


def _stack_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((2, 3)), rng.standard_normal((2, 3))), {"axis": 0})
    yield Sample(
        (rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), rng.standard_normal((2, 3))),
        {"axis": -1},
        name="axis -1",
    )
    yield Sample((rng.standard_normal(()), rng.standard_normal(())), {"axis": 0}, name="0-d")
    yield Sample((rng.standard_normal((3, 2)).T,), {"axis": 1}, name="one non-contiguous input")


def _split(xp: Any, x: Any, axis: int = 0) -> tuple[Any, ...]:
    ax = _axis("split", "axis", axis, x.ndim)
    lead = (slice(None),) * ax
    return tuple(xp.asarray(x[(*lead, i)]) for i in range(x.shape[ax]))


def _split_n_outputs(n_inputs: int, axis: int = 0) -> int:
    """Split has ``x.shape[axis]`` outputs: unknown before the input's shape is (-1)."""
    return -1


def _split_bw(gy, inputs, in_shapes, outputs, out_shapes, axis):  # type: ignore[no-untyped-def]
    ax = _axis("split", "axis", axis, len(in_shapes[0]))
    return [call("Stack", *gy, axis=ax)]


def _split_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((3, 4)),), {"axis": 0})
    yield Sample((rng.standard_normal((2, 3, 2)),), {"axis": -1}, name="axis -1")
    yield Sample((rng.standard_normal((4,)),), {"axis": 0}, name="1-d to 0-d outputs")
    yield Sample((rng.standard_normal((1, 3)),), {"axis": 0}, name="one output")


def _split_ref(x: np.ndarray, axis: int = 0) -> tuple[np.ndarray, ...]:
    return tuple(np.moveaxis(x, axis, 0))


# -- Pad ---------------------------------------------------------------------------------------

_PAD_MODES = ("constant", "reflect", "repeat")


def _pad_pairs(pad_width: Any, ndim: int) -> list[tuple[int, int]]:
    """nnabla's flat pad_width (before, after pairs of the last dims) -> one pair per dim."""
    flat: list[int] = []
    try:
        items = list(pad_width)
    except TypeError:
        items = [None]
    for v in items:
        vals = list(v) if isinstance(v, (tuple, list)) else [v]
        if not all(is_int(u) for u in vals):  # 1.5 is never truncated to 1
            raise TypeError(
                f"pad: pad_width must be a sequence of ints (or of int pairs), got {pad_width!r}"
            )
        flat.extend(int(u) for u in vals)
    if len(flat) % 2:
        raise ValueError(f"pad: pad_width must hold an even number of values, got {pad_width}")
    if len(flat) > 2 * ndim:
        raise ValueError(
            f"pad: pad_width has {len(flat)} values, more than 2 per dim of a {ndim}-d input"
        )
    if any(v < 0 for v in flat):
        raise ValueError(f"pad: pad_width values must be >= 0, got {pad_width}")
    pairs = [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]
    return [(0, 0)] * (ndim - len(pairs)) + pairs


def _pad_index(n: int, before: int, after: int, mode: str, xp: Any = np) -> Any:
    """Which input index each output index of one padded axis reads (reflect/repeat), built
    with ``xp`` on its device (no host data copied: a CUDA-graph recording could not replay
    such a copy)."""
    i = xp.arange(-before, n + after)
    if mode == "repeat":
        return xp.clip(i, 0, n - 1)
    if n == 1:
        return xp.zeros_like(i)
    period = 2 * (n - 1)
    i = xp.abs(i) % period
    return xp.where(i < n, i, period - i)


@cache
def _host_pad_index(n: int, before: int, after: int, mode: str) -> np.ndarray:
    """:func:`_pad_index` on the host, one read-only array per geometry: the key of Pad's
    backward is then the same array at every call (a device keeps one copy of it, see
    gradhub-cuda's GetItemBackward kernel)."""
    idx = _pad_index(n, before, after, mode)
    idx.flags.writeable = False
    return idx  # type: ignore[no-any-return]


def _check_pad_mode(mode: str, shape: Sequence[int], pairs: Sequence[tuple[int, int]]) -> None:
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be one of {_PAD_MODES}, got {mode!r}")
    if mode != "constant":
        for n, (b, a) in zip(shape, pairs):
            if n == 0 and (b or a):
                raise ValueError(f"pad: mode {mode!r} cannot pad an axis of size 0")


def _pad(
    xp: Any, x: Any, pad_width: Any = (), mode: str = "constant", constant_value: float = 0.0
) -> Any:
    pairs = _pad_pairs(pad_width, x.ndim)
    _check_pad_mode(mode, x.shape, pairs)
    if mode == "constant":
        return xp.pad(x, pairs, mode="constant", constant_values=x.dtype.type(constant_value))
    y = x
    for ax, (b, a) in enumerate(pairs):
        if b or a:
            idx = _pad_index(x.shape[ax], b, a, mode, xp)
            y = xp.take(y, idx, axis=ax)
    return y


def _pad_bw(gy, inputs, in_shapes, outputs, out_shapes, pad_width, mode, constant_value):  # type: ignore[no-untyped-def]
    shape = tuple(in_shapes[0])
    pairs = _pad_pairs(pad_width, len(shape))
    g = gy[0]
    if mode == "constant":
        key = tuple(slice(b, b + n) for n, (b, _) in zip(shape, pairs))
        return [call("GetItem", g, key=key)]
    # reflect/repeat: the forward gathers axis by axis; scatter back in reverse order
    cur = list(g.shape)
    for ax in reversed(range(len(shape))):
        b, a = pairs[ax]
        if not (b or a):
            continue
        idx = _host_pad_index(shape[ax], b, a, mode)
        cur[ax] = shape[ax]
        key = (slice(None),) * ax + (idx,)
        g = call("GetItemBackward", g, key=key, shape=tuple(cur))
    return [g]


def _pad_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.standard_normal((2, 3))
    yield Sample(
        (x,),
        {"pad_width": (1, 2), "mode": "constant", "constant_value": 0.5},
        name="constant, last dim",
    )
    yield Sample(
        (x,),
        {"pad_width": (1, 0, 2, 1), "mode": "constant", "constant_value": 0.0},
        name="constant, two dims",
    )
    yield Sample(
        (x,),
        {"pad_width": (2, 4), "mode": "reflect", "constant_value": 0.0},
        name="reflect, wider than the axis",
    )
    yield Sample(
        (rng.standard_normal((2, 2, 3)),),
        {"pad_width": (1, 1, 0, 2), "mode": "reflect", "constant_value": 0.0},
        name="reflect, 3-d",
    )
    yield Sample(
        (x,), {"pad_width": (2, 1, 1, 3), "mode": "repeat", "constant_value": 0.0}, name="repeat"
    )
    yield Sample(
        (rng.standard_normal((0, 2)),),
        {"pad_width": (1, 1, 0, 0), "mode": "constant", "constant_value": 1.0},
        name="size-0 axis",
    )
    yield Sample(
        (rng.standard_normal((3, 2)).T,),
        {"pad_width": (1, 1), "mode": "reflect", "constant_value": 0.0},
        name="non-contiguous",
    )


def _pad_ref(
    x: np.ndarray, pad_width: Any = (), mode: str = "constant", constant_value: float = 0.0
) -> np.ndarray:
    flat = [int(v) for v in pad_width]
    pairs = [(0, 0)] * (x.ndim - len(flat) // 2) + [
        (flat[i], flat[i + 1]) for i in range(0, len(flat), 2)
    ]
    if mode == "constant":
        return np.pad(x, pairs, mode="constant", constant_values=constant_value)
    return np.pad(x, pairs, mode="reflect" if mode == "reflect" else "edge")


# -- Flip / Tile -------------------------------------------------------------------------------


def _flip_axes(axes: Any, ndim: int) -> tuple[int, ...]:
    if axes is None:
        return (ndim - 1,) if ndim else ()
    return _axes("flip", "axes", axes, ndim)


def _flip(xp: Any, x: Any, axes: Any = None) -> Any:
    ax = _flip_axes(axes, x.ndim)
    return xp.flip(x, axis=ax) if ax else x


def _flip_bw(gy, inputs, in_shapes, outputs, out_shapes, axes):  # type: ignore[no-untyped-def]
    return [call("Flip", gy[0], axes=axes)]


def _flip_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((2, 3)),), {"axes": None}, name="default last axis")
    yield Sample((rng.standard_normal((2, 3, 2)),), {"axes": (0, -1)}, name="two axes")
    yield Sample((rng.standard_normal(()),), {"axes": None}, name="0-d")
    yield Sample((rng.standard_normal((3, 2)).T,), {"axes": 0}, name="non-contiguous")


def _flip_ref(x: np.ndarray, axes: Any = None) -> np.ndarray:
    if axes is None:
        axes = (x.ndim - 1,) if x.ndim else ()
    if isinstance(axes, int):
        axes = (axes,)
    out = x
    for a in axes:
        idx = [slice(None)] * x.ndim
        idx[a] = slice(None, None, -1)
        out = out[tuple(idx)]
    return out


def _tile(xp: Any, x: Any, reps: Any = ()) -> Any:
    r = _ints("tile", "reps", reps)
    if any(v < 0 for v in r):
        raise ValueError(f"tile: reps must be >= 0, got {reps}")
    return xp.tile(x, r)


def _tile_bw(gy, inputs, in_shapes, outputs, out_shapes, reps):  # type: ignore[no-untyped-def]
    shape = tuple(in_shapes[0])
    r = _ints("tile", "reps", reps)
    d = max(len(r), len(shape))
    s = (1,) * (d - len(shape)) + shape
    r = (1,) * (d - len(r)) + r
    inter = tuple(v for pair in zip(r, s) for v in pair)
    g = call("Reshape", gy[0], shape=inter)
    g = call("Sum", g, axis=tuple(range(0, 2 * d, 2)), keepdims=False)
    return [call("Reshape", g, shape=shape) if g.shape != shape else g]


def _tile_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((2, 3)),), {"reps": (2, 1)})
    yield Sample((rng.standard_normal((3,)),), {"reps": (2, 2)}, name="more reps than dims")
    yield Sample((rng.standard_normal((2, 1, 2)),), {"reps": 3}, name="int reps")
    yield Sample((rng.standard_normal(()),), {"reps": (4,)}, name="0-d")
    yield Sample((rng.standard_normal((2, 2)),), {"reps": (0, 1)}, name="zero reps")


# -- Squeeze / ExpandDims / Broadcast (composites of Reshape and BroadcastTo) ------------------


def squeeze(x: Any, axis: Any = None) -> Variable:
    """Remove axes of size 1: all of them (``axis=None``) or those in ``axis``.

    ``y = reshape(x, [n for i, n in enumerate(x.shape) if i not in axes])``.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> F.squeeze(gh.Variable(np.zeros((1, 3, 1))), axis=0).shape
        (3, 1)
    """
    shape = tuple(x.shape)
    if axis is None:
        axes = tuple(i for i, n in enumerate(shape) if n == 1)
    else:
        axes = _axes("squeeze", "axis", axis, len(shape))
        bad = [a for a in axes if shape[a] != 1]
        if bad:
            raise ValueError(f"squeeze: axis {bad[0]} has size {shape[bad[0]]}, not 1")
    return call("Reshape", x, shape=tuple(n for i, n in enumerate(shape) if i not in axes))  # type: ignore[no-any-return]


def expand_dims(x: Any, axis: int) -> Variable:
    """Insert an axis of size 1 at position ``axis`` (nnabla ``F.expand_dims``).

    The output has ``x.ndim + 1`` dims; negative ``axis`` counts from the end of the output.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> F.expand_dims(gh.Variable(np.zeros((2, 3))), axis=-1).shape
        (2, 3, 1)
    """
    shape = tuple(x.shape)
    ax = _axis("expand_dims", "axis", axis, len(shape) + 1)
    return call("Reshape", x, shape=shape[:ax] + (1,) + shape[ax:])  # type: ignore[no-any-return]


def broadcast(x: Any, shape: Sequence[int]) -> Variable:
    """Broadcast ``x`` to ``shape`` (nnabla ``F.broadcast``; an alias of ``broadcast_to``).

    ``y[i...] = x[j...]`` where ``j_k = 0`` on the axes where ``x`` has size 1.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> F.broadcast(gh.Variable(np.array([[1.0], [2.0]])), (2, 3)).d
        array([[1., 1., 1.],
               [2., 2., 2.]])
    """
    target = _ints("broadcast", "shape", shape)
    xs = tuple(x.shape)
    if not broadcasts_to(xs, target):
        raise ValueError(
            f"broadcast: x of shape {xs} cannot be broadcast to shape {target} "
            f"(each axis of x must equal the target's or be 1; the target may add "
            f"leading axes)"
        )
    return call("BroadcastTo", x, shape=target)  # type: ignore[no-any-return]


def _squeeze_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((1, 3, 1)),), {"axis": None}, name="all")
    yield Sample((rng.standard_normal((1, 3, 1)),), {"axis": -1}, name="one axis")
    yield Sample((rng.standard_normal((1, 1)),), {}, name="to 0-d")


def _squeeze_ref(x: np.ndarray, axis: Any = None) -> np.ndarray:
    return np.squeeze(x, axis=axis)


def _expand_dims_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((2, 3)),), {"axis": 0})
    yield Sample((rng.standard_normal((2, 3)),), {"axis": -1}, name="axis -1")
    yield Sample((rng.standard_normal(()),), {"axis": 0}, name="0-d")


def _broadcast_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((2, 1)),), {"shape": (2, 3)})
    yield Sample((rng.standard_normal((3,)),), {"shape": (2, 3)}, name="new leading axis")
    yield Sample((rng.standard_normal(()),), {"shape": (2, 2)}, name="0-d")


# -- registration ------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register the shape functions."""
    f = register.function
    register.composite("Slice", slice_, snake="slice", samples=_slice_samples, reference=_slice_ref)
    f(
        "Concatenate",
        _concatenate,
        inputs=("*xs",),
        attrs={"axis": None},
        rule=_concatenate_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_concatenate_samples,
        reference=_concatenate_ref,
        doc="""Join the inputs along an existing ``axis`` (nnabla default: the last axis).

``y = [x_0, x_1, ...]`` along ``axis``; the gradient of each input is its slice of ``dy``.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> a, b = gh.Variable(np.zeros((2, 3))), gh.Variable(np.ones((2, 1)))
    >>> F.concatenate(a, b).shape
    (2, 4)
    >>> F.concatenate(a, a, axis=0).shape
    (4, 3)
""",
    )
    f(
        "Stack",
        _stack,
        inputs=("*xs",),
        attrs={"axis": 0},
        rule=_stack_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_stack_samples,
        reference=lambda *xs, axis=0: np.stack(xs, axis),
        doc="""Join same-shaped inputs along a new ``axis``: ``y[..., i, ...] = x_i``.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> a = gh.Variable(np.zeros((2, 3)))
    >>> F.stack(a, a, a, axis=1).shape
    (2, 3, 3)
""",
    )
    f(
        "Split",
        _split,
        attrs={"axis": 0},
        n_outputs=_split_n_outputs,
        rule=_split_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_split_samples,
        reference=_split_ref,
        doc="""Split ``x`` into its ``x.shape[axis]`` slices along ``axis`` (nnabla ``F.split``).

``y_i = x[..., i, ...]``; always returns a tuple (also when there is one slice). The gradient
stacks the output gradients back.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> a, b, c = F.split(gh.Variable(np.arange(6.0).reshape(3, 2)), axis=0)
    >>> b.d
    array([2., 3.])
""",
    )
    with_real_scalars(
        f(
            "Pad",
            _pad,
            attrs={"pad_width": (), "mode": "constant", "constant_value": 0.0},
            rule=_pad_bw,
            need_inputs=(),
            need_outputs=(),
            samples=_pad_samples,
            reference=_pad_ref,
            doc="""Pad the last dims of ``x`` as nnabla's ``F.pad``.

``pad_width`` is flat, ``(before_0, after_0, before_1, after_1, ...)`` for the last
``len(pad_width) // 2`` dims. ``mode``: ``"constant"`` (fill with ``constant_value``),
``"reflect"`` (mirror without repeating the edge, bouncing when the pad is wider than the axis)
or ``"repeat"`` (repeat the edge value). The gradient of the copied elements is accumulated.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([1.0, 2.0, 3.0]))
    >>> F.pad(x, (2, 1), mode="reflect").d
    array([3., 2., 1., 2., 3., 2.])
""",
        ),
        ("constant_value",),
    )
    f(
        "Flip",
        _flip,
        attrs={"axes": None},
        rule=_flip_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_flip_samples,
        reference=_flip_ref,
        doc="""Reverse ``x`` along ``axes`` (nnabla default: the last axis).

``y[..., i, ...] = x[..., n - 1 - i, ...]`` on each flipped axis.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> F.flip(gh.Variable(np.array([[1.0, 2.0], [3.0, 4.0]])), axes=(0, 1)).d
    array([[4., 3.],
           [2., 1.]])
""",
    )
    f(
        "Tile",
        _tile,
        attrs={"reps": ()},
        rule=_tile_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_tile_samples,
        reference=lambda x, reps: np.tile(x, reps),
        doc="""Repeat ``x`` ``reps[i]`` times along each axis (as ``numpy.tile``).

The gradient sums the copies: ``dx = sum over copies of dy``.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> F.tile(gh.Variable(np.array([1.0, 2.0])), (2, 2)).d
    array([[1., 2., 1., 2.],
           [1., 2., 1., 2.]])
""",
    )
    register.composite("Squeeze", squeeze, samples=_squeeze_samples, reference=_squeeze_ref)
    register.composite(
        "ExpandDims",
        expand_dims,
        samples=_expand_dims_samples,
        reference=lambda x, axis: np.expand_dims(x, axis),
    )
    register.composite(
        "Broadcast",
        broadcast,
        samples=_broadcast_samples,
        reference=lambda x, shape: np.broadcast_to(x, shape),
    )
