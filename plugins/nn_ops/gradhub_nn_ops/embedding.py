"""gradhub-nn-ops: lookups by integer ids.

Embed with its scatter-add adjoint EmbedBackward (each the other's derivative, so every order),
and OneHot (non-differentiable).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from gradhub import Sample
from gradhub.ops import call

from .math import is_int, whole_numbers

# -- Embed / EmbedBackward ---------------------------------------------------------------------


def _integral(xp: Any, fn: str, arg: str, ids: Any) -> Any:
    """``ids`` as an integer array (:func:`~gradhub_nn_ops.math.whole_numbers`, naming them
    "ids")."""
    return whole_numbers(xp, f"{fn}: {arg}", ids, "ids")


def _check_ids(xp: Any, fn: str, ids: Any, n: int) -> Any:
    """The ids ``x0`` as an integer array, checked to lie in ``[0, n)``."""
    ids = _integral(xp, fn, "x0", ids)
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= n):
        raise ValueError(
            f"{fn}: ids in x0 must be in [0, {n}), got values in [{int(ids.min())}, "
            f"{int(ids.max())}]"
        )
    return ids


def _embed(xp: Any, x0: Any, w: Any) -> Any:
    if w.ndim < 1:
        raise ValueError("embed: w must have at least 1 dim (n_inputs, ...)")
    ids = _check_ids(xp, "embed", x0, w.shape[0])
    return xp.take(w, ids, axis=0)


def _embed_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    return [None, call("EmbedBackward", inputs[0], gy[0], shape=tuple(in_shapes[1]))]


def _embed_backward(xp: Any, x0: Any, g: Any, shape: Sequence[int] = ()) -> Any:
    shape = _shape("embed_backward", shape)
    x0 = _check_ids(xp, "embed_backward", x0, shape[0] if shape else 0)
    if g.shape != x0.shape + shape[1:]:
        raise ValueError(f"embed_backward: g has shape {g.shape}, expected {x0.shape + shape[1:]}")
    out = xp.zeros(shape, dtype=g.dtype)
    rows = g.reshape((x0.size, *shape[1:]))
    ids = x0.reshape(-1)
    xp.add.at(out, ids, rows)  # repeated ids accumulate (numpy and CuPy alike)
    return out


def _embed_backward_bw(gy, inputs, in_shapes, outputs, out_shapes, shape):  # type: ignore[no-untyped-def]
    return [None, call("Embed", inputs[0], gy[0])]


def _embed_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((np.array([0, 2, 2, 4]), rng.standard_normal((5, 3))), name="1-d ids")
    yield Sample(
        (np.array([[1, 0], [1, 1]]), rng.standard_normal((3, 2, 2))), name="2-d ids, 3-d w"
    )
    yield Sample((np.array(2), rng.standard_normal((3, 4))), name="0-d id")
    yield Sample((np.zeros((0,), dtype=np.int64), rng.standard_normal((3, 2))), name="no ids")
    yield Sample((np.array([1, 1]), rng.standard_normal((2, 3)).T), name="non-contiguous w")
    yield Sample(
        (np.array([[3.0, 0.0], [3.0, 1.0]]), rng.standard_normal((4, 2))),
        grad_inputs=(1,),
        name="float ids (nnabla's float32 nn.Variable)",
    )


def _embed_ref(x0: np.ndarray, w: np.ndarray) -> np.ndarray:
    out = np.empty(x0.shape + w.shape[1:], dtype=w.dtype)
    for pos in np.ndindex(*x0.shape):
        out[pos] = w[int(x0[pos])]
    return out


def _embed_backward_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample(
        (np.array([0, 2, 2, 4]), rng.standard_normal((4, 3))),
        {"shape": (5, 3)},
        name="duplicates accumulate",
    )
    yield Sample(
        (np.array([[1, 0], [1, 1]]), rng.standard_normal((2, 2, 2))),
        {"shape": (3, 2)},
        name="2-d ids",
    )
    yield Sample((np.array(1), rng.standard_normal((2,))), {"shape": (3, 2)}, name="0-d id")
    yield Sample(
        (np.array([2.0, 0.0, 2.0]), rng.standard_normal((3, 2))),
        {"shape": (3, 2)},
        grad_inputs=(1,),
        name="float ids",
    )


def _embed_backward_ref(x0: np.ndarray, g: np.ndarray, shape: Sequence[int] = ()) -> np.ndarray:
    out = np.zeros(tuple(shape), dtype=g.dtype)
    for pos in np.ndindex(*x0.shape):
        out[int(x0[pos])] += g[pos]
    return out


# -- OneHot ------------------------------------------------------------------------------------


def _shape(fn: str, shape: Any) -> tuple[int, ...]:
    """``shape`` as a tuple of ints >= 0; a TypeError/ValueError naming ``fn`` and ``shape``
    (2.5 is never truncated to 2)."""
    try:
        vals = tuple(shape)
    except TypeError:
        vals = (None,)
    if not all(is_int(v) for v in vals):
        raise TypeError(f"{fn}: shape must be a sequence of ints, got {shape!r}")
    if any(v < 0 for v in vals):
        raise ValueError(f"{fn}: shape must hold sizes >= 0, got {shape!r}")
    return tuple(int(v) for v in vals)


def _one_hot(xp: Any, x: Any, shape: Sequence[int] = ()) -> Any:
    shape = _shape("one_hot", shape)
    x = _integral(xp, "one_hot", "x", x)
    if x.ndim < 1 or x.shape[-1] != len(shape):
        raise ValueError(
            f"one_hot: the last dim of x ({x.shape[-1] if x.ndim else 'none'}) must equal "
            f"len(shape) ({len(shape)})"
        )
    lead = x.shape[:-1]
    m = math.prod(lead)
    idx = x.reshape(m, len(shape))
    if m and shape:
        lo = idx.min(axis=0)
        hi = idx.max(axis=0)
        for k, n in enumerate(shape):
            if int(lo[k]) < 0 or int(hi[k]) >= n:
                raise ValueError(
                    f"one_hot: x[..., {k}] must be in [0, {n}), got values in "
                    f"[{int(lo[k])}, {int(hi[k])}]"
                )
    flat = xp.zeros((m,), dtype=np.int64)
    stride = 1
    for k in reversed(range(len(shape))):
        flat += idx[:, k].astype(np.int64) * stride
        stride *= shape[k]
    out = xp.zeros((m, math.prod(shape)), dtype=np.float32)
    out[xp.arange(m), flat] = 1.0
    return out.reshape((*lead, *shape))


def _one_hot_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((np.array([[0], [3], [1]]),), {"shape": (4,)}, name="labels")
    yield Sample(
        (np.array([[[0, 2], [1, 1]], [[1, 0], [0, 0]]]),), {"shape": (2, 3)}, name="2-d positions"
    )
    yield Sample((np.array([2]),), {"shape": (3,)}, name="single")
    yield Sample((np.array([[1.0, 2.0], [0.0, 0.0]]),), {"shape": (2, 3)}, name="float indices")


def _one_hot_ref(x: np.ndarray, shape: Sequence[int] = ()) -> np.ndarray:
    out = np.zeros(x.shape[:-1] + tuple(shape), dtype=np.float32)
    for pos in np.ndindex(*x.shape[:-1]):
        out[pos + tuple(int(v) for v in x[pos])] = 1.0
    return out


# -- registration ------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register the lookup functions."""
    f = register.function
    f(
        "Embed",
        _embed,
        inputs=("x0", "w"),
        rule=_embed_bw,
        need_inputs=(0,),
        need_outputs=(),
        samples=_embed_samples,
        reference=_embed_ref,
        doc="""Look up rows of ``w`` by integer ids (nnabla ``F.embed``): ``y[i...] = w[x0[i...]]``.

The output has shape ``x0.shape + w.shape[1:]``. ``x0`` holds ids in ``[0, w.shape[0])``: an
integer dtype, or floats holding whole numbers (cast to int, as nnabla, whose ``nn.Variable`` is
float32); other floats raise a ValueError. The gradient w.r.t. ``w`` scatter-adds the output
gradient into the rows (duplicate ids accumulate); ``x0`` gets none.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> w = gh.Variable(np.arange(6.0).reshape(3, 2))
    >>> ids = gh.Variable(np.array([2, 0, 2]), need_grad=False)
    >>> y = F.embed(ids, w)
    >>> y.backward()
    >>> w.g[:, 0]
    array([1., 0., 2.])
""",
    )
    f(
        "EmbedBackward",
        _embed_backward,
        inputs=("x0", "g"),
        attrs={"shape": ()},
        rule=_embed_backward_bw,
        need_inputs=(0,),
        need_outputs=(),
        samples=_embed_backward_samples,
        reference=_embed_backward_ref,
        doc="""The adjoint of Embed: ``y = zeros(shape); y[x0[i...]] += g[i...]``.

Duplicate ids accumulate. Its gradient w.r.t. ``g`` is ``Embed(x0, dy)``.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> ids = gh.Variable(np.array([1, 1]), need_grad=False)
    >>> F.embed_backward(ids, gh.Variable(np.ones((2, 2))), shape=(3, 2)).d
    array([[0., 0.],
           [2., 2.],
           [0., 0.]])
""",
    )
    f(
        "OneHot",
        _one_hot,
        attrs={"shape": ()},
        differentiable=False,
        samples=_one_hot_samples,
        reference=_one_hot_ref,
        doc="""One-hot encoding as nnabla's ``F.one_hot`` (float32 output, non-differentiable).

``x`` holds integer indices (an integer dtype, or floats holding whole numbers, cast as nnabla
does) of shape ``(..., N)`` with ``N == len(shape)``; the output has shape
``x.shape[:-1] + shape`` with ``y[i..., x[i..., 0], ..., x[i..., N-1]] = 1`` and zeros elsewhere.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> labels = gh.Variable(np.array([[0], [2]]), need_grad=False)
    >>> F.one_hot(labels, (3,)).d
    array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
""",
    )
