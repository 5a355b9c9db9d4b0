"""gradhub-nn-ops: misc functions.

Dropout (a composite of the non-differentiable DropoutMask and a product, so backward reuses the
forward's mask), Embed with its scatter-add adjoint EmbedBackward, OneHot and StopGradient.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from gradhub import Sample, Variable, batching
from gradhub.builtin.samples import unary_samples
from gradhub.ops import call, replace_api

from .math import is_int, whole_numbers

# -- Dropout -----------------------------------------------------------------------------------

_GLOBAL_RNG: list[np.random.Generator] = []


def _global_rng() -> np.random.Generator:
    """The generator of ``seed=-1`` dropout (created on first use)."""
    if not _GLOBAL_RNG:
        _GLOBAL_RNG.append(np.random.default_rng())
    return _GLOBAL_RNG[0]


def seed_dropout(seed: int) -> None:
    """Reseed the global generator used by dropout with ``seed=-1``.

    Example::

        >>> from gradhub_nn_ops.misc import seed_dropout
        >>> seed_dropout(0)
    """
    _GLOBAL_RNG[:] = [np.random.default_rng(seed)]


def _check_p(fn: str, p: float) -> float:
    if not isinstance(p, (int, float, np.integer, np.floating)) or isinstance(p, bool):
        raise TypeError(f"{fn}: p must be a number in [0, 1), got {p!r}")
    p = float(p)
    if not 0.0 <= p < 1.0:
        raise ValueError(f"{fn}: p must be in [0, 1), got {p}")
    return p


def _keep(shape: Sequence[int], p: float, seed: int) -> np.ndarray:
    rng = _global_rng() if seed == -1 else np.random.default_rng(seed)
    return rng.random(tuple(shape)) >= p


def _dropout_mask(xp: Any, x: Any, p: float = 0.5, seed: int = -1) -> Any:
    p = _check_p("dropout_mask", p)
    if not isinstance(seed, (int, np.integer)) or (seed < 0 and seed != -1):
        raise ValueError(f"dropout_mask: seed must be -1 (global generator) or >= 0, got {seed}")
    if seed == -1 and batching.LEVELS:  # inside vmap: see vmap's randomness
        batching.random_call("dropout_mask()")
        batching.unlifted_random_call("dropout_mask()")
    if x.dtype.kind != "f":
        raise TypeError(f"dropout_mask: x must be floating point, got dtype {x.dtype}")
    keep = _keep(x.shape, p, int(seed))
    mask = keep.astype(x.dtype) * x.dtype.type(1.0 / (1.0 - p))
    return mask if xp is np else xp.asarray(mask)


def _dropout_mask_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((4, 5)),), {"p": 0.5, "seed": 3})
    yield Sample((rng.standard_normal((3,)),), {"p": 0.0, "seed": 1}, name="p=0")
    yield Sample((rng.standard_normal(()),), {"p": 0.2, "seed": 7}, name="0-d")


def _dropout_mask_ref(x: np.ndarray, p: float = 0.5, seed: int = -1) -> np.ndarray:
    u = np.random.default_rng(seed).random(x.shape)
    return np.where(u < p, 0.0, 1.0 / (1.0 - p))


def dropout(x: Any, p: float = 0.5, seed: int = -1) -> Variable:
    """Dropout: zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    ``y = x * m / (1 - p)`` with ``m_i ~ Bernoulli(1 - p)``. ``seed=-1`` draws ``m`` from a global
    generator (a new mask each call; reseed with ``gradhub_nn_ops.misc.seed_dropout``); ``seed >=
    0`` gives the same mask each call. The mask comes from the non-differentiable function
    DropoutMask, so backward (and any higher derivative) reuses the forward's mask; re-executing
    the graph with ``y.forward()`` draws a new one when ``seed=-1``.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.ones(6))
        >>> y = F.dropout(x, p=0.5, seed=0)
        >>> sorted(set(y.d.tolist())) in ([0.0, 2.0], [0.0], [2.0])
        True
    """
    p = _check_p("dropout", p)
    mask = call("DropoutMask", _lifted_for_draw(x, seed, "dropout()"), p=p, seed=seed)
    return call("Mul2", x, mask)  # type: ignore[no-any-return]


def _lifted_for_draw(x: Any, seed: Any, fname: str) -> Any:
    """Inside vmap, the input that shapes a random mask, lifted to the levels whose
    ``randomness`` is ``"different"`` (one mask per batch element there); the error of
    ``randomness="error"``. Outside vmap, or with a fixed seed, ``x`` itself."""
    if seed != -1 or not batching.LEVELS:
        return x
    batching.random_call(fname)
    return batching.lift_random(x if isinstance(x, Variable) else Variable(x, need_grad=False))


def _dropout_mask_api(fdef: Any) -> Any:
    """Install the public callable of DropoutMask: the registered one, with ``x`` lifted inside
    vmap as :func:`_lifted_for_draw` says."""
    inner = fdef.api

    def api(x: Any, p: float = 0.5, seed: int = -1) -> Any:
        return inner(_lifted_for_draw(x, seed, "dropout_mask()"), p=p, seed=seed)

    return replace_api(fdef, api)


def dropout_mask_batching_rule(
    args: tuple[Any, ...], dims: tuple[Any, ...], p: float = 0.5, seed: int = -1
) -> Any:
    """The batching rule of DropoutMask: with a fixed seed, or ``randomness="same"``, one mask
    of one element's shape, shared by the batch (not batched); with ``"different"``, the mask of
    the whole batch (independent draws); ``"error"`` raises (see
    :func:`gradhub.batching.random_call`)."""
    x = args[0]
    if seed == -1:
        batching.random_call("dropout_mask()")
    if seed != -1 or batching.randomness() == "same":
        return call("DropoutMask", call("GetItem", x, key=0), p=p, seed=seed), None
    return call("DropoutMask", x, p=p, seed=seed), 0


def _dropout_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((4, 5)),), {"p": 0.5, "seed": 3})
    yield Sample((rng.standard_normal((2, 3)),), {"p": 0.25, "seed": 11}, name="p=0.25")
    yield Sample((rng.standard_normal((3,)),), {"p": 0.0, "seed": 1}, name="p=0 keeps all")
    yield Sample((rng.standard_normal((0, 2)),), {"p": 0.5, "seed": 2}, name="size-0")


def _dropout_ref(x: np.ndarray, p: float = 0.5, seed: int = -1) -> np.ndarray:
    return x * _dropout_mask_ref(x, p, seed)


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


# -- StopGradient ------------------------------------------------------------------------------


def _stop_gradient(xp: Any, x: Any) -> Any:
    return x.copy()  # a new array: the output is never the input's buffer


# -- registration ------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register the misc functions."""
    f = register.function
    mask = f(
        "DropoutMask",
        _dropout_mask,
        attrs={"p": 0.5, "seed": -1},
        differentiable=False,
        random=True,
        samples=_dropout_mask_samples,
        reference=_dropout_mask_ref,
        doc="""The scaled keep-mask of dropout, shaped and typed like ``x``: ``m_i / (1 - p)``.

``m_i ~ Bernoulli(1 - p)``; ``seed=-1`` draws from the global generator, ``seed >= 0`` gives the
same mask on every call. Non-differentiable (its output needs no gradient).

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> m = F.dropout_mask(gh.Variable(np.ones(4)), p=0.5, seed=0)
    >>> bool(np.all((m.d == 0) | (m.d == 2)))
    True
""",
    )
    _dropout_mask_api(mask)
    register.composite("Dropout", dropout, samples=_dropout_samples, reference=_dropout_ref)
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
    f(
        "StopGradient",
        _stop_gradient,
        differentiable=False,
        samples=unary_samples(),
        reference=lambda x: x,
        elementwise=True,
        doc="""stop_gradient(x): :math:`y = x` with no gradient (``jax.lax.stop_gradient``).

A recorded function, unlike ``x.detach()`` (a new leaf holding the data of the moment): a
graph re-executed with ``forward()`` recomputes it from ``x``'s new value. With it, a
straight-through estimator is ``f(x) + (x - stop_gradient(x))``: the value of ``f``, the
gradient of the identity.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([1.0, 2.0]))
    >>> y = F.sum(x * F.stop_gradient(x))
    >>> gh.grad([y], [x])[0].d
    array([1., 2.])
""",
    )
