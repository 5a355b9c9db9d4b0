"""gradhub-nn-ops: linear algebra functions.

BatchMatmul (the ``@`` operator), Affine (nnabla's fully connected layer, a fast primitive on the
MLP hot path) and Einsum. Every rule is written with these same functions (plus Reshape and Sum),
so each is differentiable to any order.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from gradhub import Sample
from gradhub._builtin import sum_to, sum_to_array
from gradhub.ops import call

from .math import is_int

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


def _batch_matmul(xp: Any, a: Any, b: Any, transpose_a: bool = False,
                  transpose_b: bool = False) -> Any:
    sa, sb = a.shape, b.shape
    if transpose_a and a.ndim >= 2:
        a = a.swapaxes(-1, -2)
    if transpose_b and b.ndim >= 2:
        b = b.swapaxes(-1, -2)
    try:
        return xp.matmul(a, b)
    except ValueError:  # the shapes as given, in a message naming a and b
        _check_matmul(sa, sb, bool(transpose_a), bool(transpose_b))
        raise


def _promoted(in_shapes: Sequence[Sequence[int]], ta: bool, tb: bool
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


def _batch_matmul_bw(gy, inputs, in_shapes, outputs, out_shapes,  # type: ignore[no-untyped-def]
                     transpose_a, transpose_b):
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


def _batch_matmul_fast(xp, gy, x, xs, y, ys, transpose_a, transpose_b,  # type: ignore[no-untyped-def]
                       need_grads):
    """Array version of the BatchMatmul rule (first-order backward)."""
    a, b = x
    ta = transpose_a and len(xs[0]) >= 2
    tb = transpose_b and len(xs[1]) >= 2
    sa, sb, so = _promoted(xs, ta, tb)
    g = gy[0].reshape(so)
    A, B = a.reshape(sa), b.reshape(sb)
    ga = gb = None
    if need_grads[0]:
        ga = (_batch_matmul(xp, g, B, False, not tb) if not ta
              else _batch_matmul(xp, B, g, tb, True))
        ga = sum_to_array(ga, sa).reshape(xs[0])
    if need_grads[1]:
        gb = (_batch_matmul(xp, A, g, not ta, False) if not tb
              else _batch_matmul(xp, g, A, True, ta))
        gb = sum_to_array(gb, sb).reshape(xs[1])
    return [ga, gb]


def _batch_matmul_samples(rng: np.random.Generator) -> Iterator[Sample]:
    n = rng.standard_normal
    yield Sample((n((2, 3)), n((3, 2))), {"transpose_a": False, "transpose_b": False},
                 name="2-d")
    yield Sample((n((2, 2, 3)), n((2, 3, 2))), {"transpose_a": False, "transpose_b": False},
                 name="batched")
    yield Sample((n((2, 3, 2)), n((2, 3, 2))), {"transpose_a": True, "transpose_b": False},
                 name="transpose_a")
    yield Sample((n((2, 3)), n((2, 4, 3))), {"transpose_a": False, "transpose_b": True},
                 name="transpose_b, broadcast a")
    yield Sample((n((3, 2)), n((2, 2, 3))), {"transpose_a": True, "transpose_b": True},
                 name="both transposed, broadcast a")
    yield Sample((n((2, 1, 2, 3)), n((3, 3, 2))), {"transpose_a": False, "transpose_b": False},
                 name="broadcast batch dims")
    yield Sample((n((3,)), n((3, 2))), {"transpose_a": False, "transpose_b": False},
                 name="vector @ matrix")
    yield Sample((n((2, 2, 3)), n((3,))), {"transpose_a": False, "transpose_b": False},
                 name="batched matrix @ vector")
    yield Sample((n((4,)), n((4,))), {"transpose_a": False, "transpose_b": False},
                 name="vector @ vector")
    yield Sample((n((3, 2)).T, n((0, 3, 2))), {"transpose_a": False, "transpose_b": False},
                 name="non-contiguous, size-0 batch")


def _batch_matmul_ref(a: np.ndarray, b: np.ndarray, transpose_a: bool = False,
                      transpose_b: bool = False) -> np.ndarray:
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


# -- Affine ------------------------------------------------------------------------------------


def _affine_dims(fn: str, x_shape: Sequence[int], w_shape: Sequence[int], base_axis: int
                 ) -> tuple[int, int, int]:
    if not is_int(base_axis):
        raise TypeError(f"{fn}: base_axis must be an int, got {base_axis!r}")
    if not 0 <= base_axis <= len(x_shape):
        raise ValueError(f"{fn}: base_axis={base_axis} is out of range for x of shape "
                         f"{tuple(x_shape)}")
    if len(w_shape) < 1:
        raise ValueError(f"{fn}: weight must have at least 1 dim, got shape {tuple(w_shape)}")
    n = math.prod(x_shape[:base_axis])
    k = math.prod(x_shape[base_axis:])
    if w_shape[0] != k:
        raise ValueError(
            f"{fn}: weight.shape[0] ({w_shape[0]}) must equal prod(x.shape[base_axis:]) ({k}) "
            f"for x of shape {tuple(x_shape)} and base_axis={base_axis}"
        )
    return n, k, math.prod(w_shape[1:])


def _affine(xp: Any, x: Any, weight: Any, bias: Any = None, base_axis: int = 1) -> Any:
    n, k, m = _affine_dims("affine", x.shape, weight.shape, base_axis)
    x2 = x if x.ndim == 2 and base_axis == 1 else x.reshape(n, k)
    w2 = weight if weight.ndim == 2 else weight.reshape(k, m)
    y = xp.matmul(x2, w2)
    if bias is not None:
        if bias.size != m:
            raise ValueError(f"affine: bias has shape {bias.shape}, expected "
                             f"{tuple(weight.shape[1:])}")
        b = bias.reshape(m) if bias.ndim != 1 else bias
        if b.dtype != y.dtype and np.result_type(y.dtype, b.dtype) != y.dtype:
            y = y + b  # a wider bias promotes the result (numpy's rules), as x and w do
        else:
            y += b
    shape = (*x.shape[:base_axis], *weight.shape[1:])
    return y if y.shape == shape else y.reshape(shape)


def _affine_bw(gy, inputs, in_shapes, outputs, out_shapes, base_axis):  # type: ignore[no-untyped-def]
    x, w = inputs[0], inputs[1]
    xs, ws = tuple(in_shapes[0]), tuple(in_shapes[1])
    n, k, m = _affine_dims("affine", xs, ws, base_axis)
    g = gy[0]
    g2 = g if g.shape == (n, m) else call("Reshape", g, shape=(n, m))
    grads: list[Any] = [None, None]
    if x.need_grad:
        w2 = w if w.shape == (k, m) else call("Reshape", w, shape=(k, m))
        gx = call("BatchMatmul", g2, w2, transpose_b=True)
        grads[0] = gx if gx.shape == xs else call("Reshape", gx, shape=xs)
    if w.need_grad:
        x2 = x if x.shape == (n, k) else call("Reshape", x, shape=(n, k))
        gw = call("BatchMatmul", x2, g2, transpose_a=True)
        grads[1] = gw if gw.shape == ws else call("Reshape", gw, shape=ws)
    if len(in_shapes) > 2:
        bs = tuple(in_shapes[2])
        gb = call("Sum", g2, axis=0)
        grads.append(gb if gb.shape == bs else call("Reshape", gb, shape=bs))
    return grads




def _affine_fast(xp, gy, x, xs, y, ys, base_axis, need_grads):  # type: ignore[no-untyped-def]
    """Array version of the Affine rule (first-order backward); skips unneeded products."""
    n, k, m = _affine_dims("affine", xs[0], xs[1], base_axis)
    g2 = gy[0].reshape(n, m)
    grads: list[Any] = [None, None]
    # dx = g W^T and dW = x^T g are computed transposed, as (W g^T)^T and (g^T x)^T: OpenBLAS
    # runs them 10-25% faster with the row-major operand on the left (128x1024 @ 1024x1024: 1.45
    # against 1.71 ms; 784x128 @ 128x1024: 1.01 against 1.28 ms); both results are views in
    # Fortran order, which later kernels accept as they are
    if need_grads[0]:
        grads[0] = xp.matmul(x[1].reshape(k, m), g2.T).T.reshape(xs[0])
    if need_grads[1]:
        grads[1] = xp.matmul(g2.T, x[0].reshape(n, k)).T.reshape(xs[1])
    if len(xs) > 2:
        grads.append(g2.sum(axis=0).reshape(xs[2]) if need_grads[2] else None)
    return grads


def _affine_samples(rng: np.random.Generator) -> Iterator[Sample]:
    n = rng.standard_normal
    yield Sample((n((3, 4)), n((4, 2)), n((2,))), {"base_axis": 1}, name="2-d with bias")
    yield Sample((n((3, 4)), n((4, 2))), {"base_axis": 1}, name="no bias")
    yield Sample((n((2, 2, 3)), n((6, 2)), n((2,))), {"base_axis": 1},
                 name="flattened features")
    yield Sample((n((2, 2, 3)), n((3, 2, 2)), n((2, 2))), {"base_axis": 2},
                 name="base_axis 2, 3-d weight")
    yield Sample((n((4,)), n((4, 3)), n((3,))), {"base_axis": 0}, name="base_axis 0")
    yield Sample((n((4, 3)).T, n((4, 2)).T[::-1].T, n((2,))), {"base_axis": 1},
                 name="non-contiguous")
    yield Sample((n((0, 3)), n((3, 2)), n((2,))), {"base_axis": 1}, name="empty batch")


def _affine_ref(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None,
                base_axis: int = 1) -> np.ndarray:
    lead = x.shape[:base_axis]
    xf = x.reshape(int(np.prod(lead)), -1) if x.size else x.reshape(int(np.prod(lead)),
                                                                     weight.shape[0])
    wf = weight.reshape(weight.shape[0], -1)
    y = np.einsum("nk,km->nm", xf, wf)
    if bias is not None:
        y = y + bias.reshape(-1)
    return y.reshape(lead + weight.shape[1:])


# -- Einsum ------------------------------------------------------------------------------------


#: einsum subscript letters (``string.ascii_letters``, without importing ``string``: 0.5 ms)
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_einsum(equation: str, shapes: Sequence[Sequence[int]]
                  ) -> tuple[list[str], str, dict[str, int]]:
    """Explicit subscripts (ellipses expanded, output spelled out) and each letter's size."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum: equation must be a str such as 'ij,jk->ik', got {equation!r}")
    eq = equation.replace(" ", "")
    bad = set(eq) - set(_LETTERS) - set(".,->")
    if bad or eq.count("->") > 1 or eq.replace("...", "").count(".") or eq.count("-") != eq.count(
            "->"):
        raise ValueError(f"einsum: equation {equation!r} is not valid: it takes letters, commas, "
                         f"'...' and at most one '->'")
    if "->" in eq:
        lhs, out = eq.split("->")
        explicit = True
    else:
        lhs, out, explicit = eq, "", False
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: equation {equation!r} has {len(terms)} operands, "
                         f"{len(shapes)} given")
    used = set(eq) - set(".,->")
    spare = [c for c in _LETTERS if c not in used]
    n_ell = max((len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes)
                 if "..." in t), default=0)
    ell = "".join(spare[:n_ell])
    sizes: dict[str, int] = {}
    parsed = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            k = len(s) - len(t.replace("...", ""))
            t = t.replace("...", ell[n_ell - k:])
        if len(t) != len(s):
            raise ValueError(f"einsum: subscripts {t!r} do not match an operand of shape "
                             f"{tuple(s)}")
        if len(set(t)) != len(t):
            raise ValueError(f"einsum: repeated subscripts within one operand ({t!r}) are not "
                             "supported")
        for c, n in zip(t, s):
            if sizes.get(c, n) != n:
                if c in ell and 1 in (n, sizes[c]):
                    raise ValueError("einsum: broadcasting of ellipsis dims is not supported")
                raise ValueError(f"einsum: subscript {c!r} has sizes {sizes[c]} and {n}")
            sizes[c] = n
        parsed.append(t)
    if explicit:
        out = out.replace("...", ell)
        if len(set(out)) != len(out) or any(c not in sizes for c in out):
            raise ValueError(f"einsum: invalid output subscripts in {equation!r}")
    else:
        counts = {c: sum(t.count(c) for t in parsed) for c in sizes}
        out = ell + "".join(sorted(c for c in sizes if counts[c] == 1 and c not in ell))
    return parsed, out, sizes


def _einsum(xp: Any, *xs: Any, equation: str = "") -> Any:
    terms, out, _ = _parse_einsum(equation, [x.shape for x in xs])
    return xp.einsum(",".join(terms) + "->" + out, *xs, optimize=len(xs) > 2)


def _einsum_bw(gy, inputs, in_shapes, outputs, out_shapes, equation):  # type: ignore[no-untyped-def]
    terms, out, sizes = _parse_einsum(equation, in_shapes)
    grads = []
    for i, t in enumerate(terms):
        if not inputs[i].need_grad:
            grads.append(None)
            continue
        others = [inputs[j] for j in range(len(terms)) if j != i]
        other_terms = [terms[j] for j in range(len(terms)) if j != i]
        present = set(out).union(*other_terms)
        # letters only in this operand were summed away: rebuild them by broadcasting
        kept = "".join(c for c in t if c in present)
        g = call("Einsum", gy[0], *others, equation=",".join([out, *other_terms]) + "->" + kept)
        if kept != t:
            shape1 = tuple(sizes[c] if c in kept else 1 for c in t)
            g = call("BroadcastTo", call("Reshape", g, shape=shape1),
                     shape=tuple(in_shapes[i]))
        grads.append(g)
    return grads


def _einsum_samples(rng: np.random.Generator) -> Iterator[Sample]:
    n = rng.standard_normal
    yield Sample((n((2, 3)), n((3, 2))), {"equation": "ij,jk->ik"}, name="matmul")
    yield Sample((n((2, 3)), n((3, 4))), {"equation": "ij,jk"}, name="implicit output")
    yield Sample((n((2, 3)),), {"equation": "ij->ji"}, name="transpose")
    yield Sample((n((2, 3)),), {"equation": "ij->"}, name="total sum")
    yield Sample((n((2, 3)), n((3,))), {"equation": "ij,k->ik"}, name="summed-away letter")
    yield Sample((n((2, 2, 3)), n((2, 3, 2)), n((2,))), {"equation": "bij,bjk,k->bi"},
                 name="three operands")
    yield Sample((n((2, 2, 3)), n((3, 2))), {"equation": "...ij,jk->...ik"}, name="ellipsis")
    yield Sample((n((3,)), n((3,))), {"equation": "i,i->"}, name="dot to 0-d")


def _einsum_ref(*xs: np.ndarray, equation: str = "") -> np.ndarray:
    return np.asarray(np.einsum(equation, *xs))


# -- registration ------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register the linalg functions."""
    f = register.function
    f("BatchMatmul", _batch_matmul, inputs=("a", "b"),
      attrs={"transpose_a": False, "transpose_b": False}, rule=_batch_matmul_bw,
      fast_backward=_batch_matmul_fast,
      need_inputs=(0, 1), need_outputs=(), samples=_batch_matmul_samples,
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
""")
    f("Affine", _affine, inputs=("x", "weight", "bias?"), attrs={"base_axis": 1},
      rule=_affine_bw, fast_backward=_affine_fast, need_inputs=(0, 1), need_outputs=(),
      samples=_affine_samples,
      reference=_affine_ref,
      doc="""Fully connected layer, as nnabla: ``y = x W + b``.

``x`` is flattened to a matrix ``(prod(x.shape[:base_axis]), prod(x.shape[base_axis:]))``;
``weight`` has shape ``(prod(x.shape[base_axis:]), *out)`` and ``bias`` (optional) shape ``out``.
The output has shape ``x.shape[:base_axis] + weight.shape[1:]``.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.ones((8, 3, 4)))
    >>> w = gh.Variable(np.full((12, 5), 0.5))
    >>> b = gh.Variable(np.zeros(5))
    >>> y = F.affine(x, w, b)
    >>> y.shape, float(y.d[0, 0])
    ((8, 5), 6.0)
""")
    f("Einsum", _einsum, inputs=("*xs",), attrs={"equation": ""}, rule=_einsum_bw,
      need_inputs=None, need_outputs=(), samples=_einsum_samples, reference=_einsum_ref,
      doc="""Einstein summation ``numpy.einsum(equation, *xs)``.

Supports explicit and implicit outputs and ``...``; not supported: a subscript repeated within
one operand (diagonals) and size-1 broadcasting of ellipsis dims. The gradient of each operand
is again an einsum of the output gradient with the other operands.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> a = gh.Variable(np.ones((2, 3)))
    >>> F.einsum(a, a, equation="ij,ij->i").d
    array([3., 3.])
""")
