"""Linear algebra of the core: ``BatchMatmul``, the ``@`` operator of Variables.

Batched matrix products with numpy's broadcasting and 1-d promotion; its rule is written with
``BatchMatmul``, ``Reshape`` and ``Sum``, so it is differentiable to any order with no plugin.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..broadcasting import sum_to, sum_to_array
from ..ops import call
from ..registry import Sample

# -- BatchMatmul -------------------------------------------------------------------------------


def _check_matmul(a_shape: Sequence[int], b_shape: Sequence[int], ta: bool, tb: bool) -> None:
    if len(a_shape) == 0 or len(b_shape) == 0:
        raise ValueError(
            f"batch_matmul: inputs must have at least 1 dim, got a {tuple(a_shape)} and "
            f"b {tuple(b_shape)}"
        )
    ka = a_shape[-2] if ta and len(a_shape) >= 2 else a_shape[-1]
    kb = b_shape[-1] if tb and len(b_shape) >= 2 else b_shape[0 if len(b_shape) == 1 else -2]
    if ka != kb:
        raise ValueError(
            f"batch_matmul: the contracted dims differ: a {tuple(a_shape)} "
            f"(transpose_a={ta}) and b {tuple(b_shape)} (transpose_b={tb})"
        )
    ba, bb = tuple(a_shape[:-2]), tuple(b_shape[:-2])
    try:
        np.broadcast_shapes(ba, bb)
    except ValueError:
        raise ValueError(
            f"batch_matmul: the batch dims of a {tuple(a_shape)} and b {tuple(b_shape)} do not "
            f"broadcast: {ba} against {bb} (numpy's rules: equal, or 1 in either)"
        ) from None


def _batch_matmul(
    xp: Any, a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False
) -> Any:
    sa, sb = a.shape, b.shape
    if transpose_a and a.ndim >= 2:
        a = a.swapaxes(-1, -2)
    if transpose_b and b.ndim >= 2:
        b = b.swapaxes(-1, -2)
    if b.ndim > 2 and a.ndim >= 2:
        fast = _repeated_b(xp, a, b)
        if fast is not None:
            return fast
    if a.ndim >= 2 and b.ndim >= 2 and a.shape[-1] == 1 and b.shape[-2] == 1:
        return a * b  # outer products (per-sample weight gradients): no BLAS call per pair
    try:
        return xp.matmul(a, b)
    except ValueError:  # the shapes as given, in a message naming a and b
        _check_matmul(sa, sb, bool(transpose_a), bool(transpose_b))
        raise


def _repeated_b(xp: Any, a: Any, b: Any) -> Any:
    """``a @ b`` as one matrix product when ``b`` is one matrix repeated along its batch axes
    (stride 0: a weight that ``vmap`` lifted by BroadcastTo) and ``a``'s batch axes cover
    ``b``'s; else None. ``matmul`` would multiply the batch one pair at a time."""
    if any(b.strides[:-2]) or not b.size:
        return None
    lead = tuple(a.shape[:-2])
    try:
        if np.broadcast_shapes(lead, tuple(b.shape[:-2])) != lead:
            return None
    except ValueError:
        return None
    b0 = b[(0,) * (b.ndim - 2)]
    if a.shape[-1] != b0.shape[0]:
        return None
    y = xp.matmul(a.reshape(-1, a.shape[-1]), b0)
    return y.reshape(*lead, a.shape[-2], b0.shape[-1])


def _promoted(
    in_shapes: Sequence[Sequence[int]], ta: bool, tb: bool
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Shapes of a, b and the output with 1-d operands promoted to matrices as numpy does."""
    sa, sb = tuple(in_shapes[0]), tuple(in_shapes[1])
    if len(sa) == 1:
        sa = (1, *sa)
    if len(sb) == 1:
        sb = (*sb, 1)
    m = sa[-1] if ta else sa[-2]
    p = sb[-2] if tb else sb[-1]
    return sa, sb, (*np.broadcast_shapes(sa[:-2], sb[:-2]), m, p)


def _batch_matmul_bw(  # type: ignore[no-untyped-def]
    gy,
    inputs,
    in_shapes,
    outputs,
    out_shapes,
    transpose_a,
    transpose_b,
):
    a, b = inputs
    ta = transpose_a and len(in_shapes[0]) >= 2
    tb = transpose_b and len(in_shapes[1]) >= 2
    sa, sb, so = _promoted(in_shapes, ta, tb)
    g = gy[0]
    if g.shape != so:
        g = call("Reshape", g, shape=so)
    A = a if a.shape == sa else call("Reshape", a, shape=sa)
    B = b if b.shape == sb else call("Reshape", b, shape=sb)
    ga = gb = None
    if a.need_grad:
        if not ta:  # d(A) = g @ op(B)^T
            ga = call("BatchMatmul", g, B, transpose_a=False, transpose_b=not tb)
        else:  # d(A) = op(B) @ g^T
            ga = call("BatchMatmul", B, g, transpose_a=tb, transpose_b=True)
        ga = sum_to(ga, sa)
        if ga.shape != tuple(in_shapes[0]):
            ga = call("Reshape", ga, shape=tuple(in_shapes[0]))
    if b.need_grad:
        if not tb:  # d(B) = op(A)^T @ g
            gb = call("BatchMatmul", A, g, transpose_a=not ta, transpose_b=False)
        else:  # d(B) = g^T @ op(A)
            gb = call("BatchMatmul", g, A, transpose_a=True, transpose_b=ta)
        gb = sum_to(gb, sb)
        if gb.shape != tuple(in_shapes[1]):
            gb = call("Reshape", gb, shape=tuple(in_shapes[1]))
    return [ga, gb]


def _batch_matmul_fast(  # type: ignore[no-untyped-def]
    xp,
    gy,
    x,
    xs,
    y,
    ys,
    transpose_a,
    transpose_b,
    need_grads,
):
    """Array version of the BatchMatmul rule (first-order backward)."""
    a, b = x
    ta = transpose_a and len(xs[0]) >= 2
    tb = transpose_b and len(xs[1]) >= 2
    sa, sb, so = _promoted(xs, ta, tb)
    g = gy[0].reshape(so)
    A, B = a.reshape(sa), b.reshape(sb)
    ga = gb = None
    if need_grads[0]:
        ga = _batch_matmul(xp, g, B, False, not tb) if not ta else _batch_matmul(xp, B, g, tb, True)
        ga = sum_to_array(ga, sa).reshape(xs[0])
    if need_grads[1]:
        gb = _batch_matmul(xp, A, g, not ta, False) if not tb else _batch_matmul(xp, g, A, True, ta)
        gb = sum_to_array(gb, sb).reshape(xs[1])
    return [ga, gb]


def _batch_matmul_samples(rng: np.random.Generator) -> Iterator[Sample]:
    n = rng.standard_normal
    yield Sample((n((2, 3)), n((3, 2))), {"transpose_a": False, "transpose_b": False}, name="2-d")
    yield Sample(
        (n((2, 2, 3)), n((2, 3, 2))), {"transpose_a": False, "transpose_b": False}, name="batched"
    )
    yield Sample(
        (n((2, 3, 2)), n((2, 3, 2))),
        {"transpose_a": True, "transpose_b": False},
        name="transpose_a",
    )
    yield Sample(
        (n((2, 3)), n((2, 4, 3))),
        {"transpose_a": False, "transpose_b": True},
        name="transpose_b, broadcast a",
    )
    yield Sample(
        (n((3, 2)), n((2, 2, 3))),
        {"transpose_a": True, "transpose_b": True},
        name="both transposed, broadcast a",
    )
    yield Sample(
        (n((2, 1, 2, 3)), n((3, 3, 2))),
        {"transpose_a": False, "transpose_b": False},
        name="broadcast batch dims",
    )
    yield Sample(
        (n((3,)), n((3, 2))), {"transpose_a": False, "transpose_b": False}, name="vector @ matrix"
    )
    yield Sample(
        (n((2, 2, 3)), n((3,))),
        {"transpose_a": False, "transpose_b": False},
        name="batched matrix @ vector",
    )
    yield Sample(
        (n((4,)), n((4,))), {"transpose_a": False, "transpose_b": False}, name="vector @ vector"
    )
    yield Sample(
        (n((3, 2)).T, n((0, 3, 2))),
        {"transpose_a": False, "transpose_b": False},
        name="non-contiguous, size-0 batch",
    )


def _batch_matmul_ref(
    a: np.ndarray, b: np.ndarray, transpose_a: bool = False, transpose_b: bool = False
) -> np.ndarray:
    if transpose_a and a.ndim >= 2:
        a = np.swapaxes(a, -1, -2)
    if transpose_b and b.ndim >= 2:
        b = np.swapaxes(b, -1, -2)
    # an einsum over explicit broadcast shapes, independent of matmul
    va, vb = a.ndim == 1, b.ndim == 1
    a2 = a[None, :] if va else a
    b2 = b[:, None] if vb else b
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a2 = np.broadcast_to(a2, batch + a2.shape[-2:])
    b2 = np.broadcast_to(b2, batch + b2.shape[-2:])
    out = np.einsum("...ij,...jk->...ik", a2, b2)
    if va:
        out = out[..., 0, :]
    if vb:
        out = out[..., 0]
    return out


def register_functions(register: Any) -> None:
    """Register BatchMatmul (provider ``gradhub``)."""
    f = register.function
    f(
        "BatchMatmul",
        _batch_matmul,
        inputs=("a", "b"),
        attrs={"transpose_a": False, "transpose_b": False},
        rule=_batch_matmul_bw,
        fast_backward=_batch_matmul_fast,
        need_inputs=(0, 1),
        need_outputs=(),
        samples=_batch_matmul_samples,
        reference=_batch_matmul_ref,
        doc="""Batched matrix product ``y[..., i, k] = sum_j op(a)[..., i, j] op(b)[..., j, k]``.

``op`` transposes the last two dims when ``transpose_a``/``transpose_b``. Batch dims broadcast as
in numpy, 2-d matrices are plain matrix products and 1-d operands are promoted as ``numpy.matmul``
does, so ``a @ b`` on Variables dispatches here.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> a = gh.Variable(np.ones((5, 2, 3)))
    >>> b = gh.Variable(np.ones((3, 4)))
    >>> (a @ b).shape
    (5, 2, 4)
    >>> F.batch_matmul(a, a, transpose_b=True).shape
    (5, 2, 2)
""",
    )
