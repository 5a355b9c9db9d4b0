"""gradhub-nn-ops: linear algebra functions.

Affine (nnabla's fully connected layer, a fast primitive on the MLP hot path), Einsum and the
batch linear algebra of nnabla (BatchInv, BatchDet, BatchLogdet, BatchCholesky).
Every rule is written with registered functions (Affine's with the core's BatchMatmul, the
``@`` operator, plus Reshape and Sum), so each is differentiable to any order.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from gradhub import Sample
from gradhub.memory import output_array
from gradhub.ops import call, replace_api
from gradhub.parallel import get_blas_threads, get_num_threads

from .math import is_int

# -- Affine ------------------------------------------------------------------------------------


#: (x shape, weight shape, base_axis) -> (n, k, m) of the shapes checked so far (a training loop
#: asks for the same few at every step, forward and backward); at most _DIMS_MAX entries
_DIMS: dict[tuple[Any, Any, int], tuple[int, int, int]] = {}
_DIMS_MAX = 256


def _affine_dims(
    fn: str, x_shape: Sequence[int], w_shape: Sequence[int], base_axis: int
) -> tuple[int, int, int]:
    """Affine's ``(n, k, m)``: x as an ``n x k`` matrix, the weight as ``k x m``; the shapes and
    ``base_axis`` checked (errors name ``fn``). Remembered for shapes given as tuples."""
    key = None
    if type(base_axis) is int and type(x_shape) is tuple and type(w_shape) is tuple:
        key = (x_shape, w_shape, base_axis)
        dims = _DIMS.get(key)
        if dims is not None:
            return dims
    dims = _affine_dims_checked(fn, x_shape, w_shape, base_axis)
    if key is not None:
        if len(_DIMS) >= _DIMS_MAX:
            _DIMS.clear()
        _DIMS[key] = dims
    return dims


def _affine_dims_checked(
    fn: str, x_shape: Sequence[int], w_shape: Sequence[int], base_axis: int
) -> tuple[int, int, int]:
    if not is_int(base_axis):
        raise TypeError(f"{fn}: base_axis must be an int, got {base_axis!r}")
    if not 0 <= base_axis <= len(x_shape):
        raise ValueError(
            f"{fn}: base_axis={base_axis} is out of range for x of shape {tuple(x_shape)}"
        )
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


#: the batches (rows of x) for which Affine's CPU forward computes ``(W^T x^T)^T`` when the
#: layer has more outputs than rows and gradhub runs several threads (see _affine): measured
#: faster from 64 to 128 rows; at 256 rows (W7) 0.92-1.06x the time of ``x W`` and, with ReLU
#: following in Fortran order, 3 MB more at the peak of W7's step
_TRANSPOSED_MIN_ROWS = 64
_TRANSPOSED_MAX_ROWS = 128


def _blas_threads() -> int:
    """The threads OpenBLAS's next product runs on (the pool's count where BLAS cannot be asked):
    one while gradhub's pool holds OpenBLAS at one thread, whatever ``get_num_threads()`` says."""
    n = get_blas_threads()
    return get_num_threads() if n is None else n


def _affine(xp: Any, x: Any, weight: Any, bias: Any = None, base_axis: int = 1) -> Any:
    n, k, m = _affine_dims("affine", x.shape, weight.shape, base_axis)
    x2 = x if x.ndim == 2 and base_axis == 1 else x.reshape(n, k)
    w2 = weight if weight.ndim == 2 else weight.reshape(k, m)
    if (
        xp is np
        and _TRANSPOSED_MIN_ROWS <= n <= _TRANSPOSED_MAX_ROWS
        and n < m
        and x2 is x
        and w2 is weight
        and _blas_threads() > 1
    ):
        # y^T = W^T x^T: with two BLAS threads OpenBLAS runs a product with more rows than
        # columns 6-18% faster (128x784 @ 784x1024: 1.59-1.79 against 1.71-2.17 ms; 128x1024 @
        # 1024x1024: 2.26-2.35 against 2.56-2.60 ms), with one thread 0-14% slower; y is then a
        # view in Fortran order, and ReLU's kernel and rule keep that order, so that ReLU's
        # backward multiplies two Fortran-ordered arrays (Affine's dx is one, see _affine_fast).
        # (A new array, not a kept one of gradhub.memory: writing W2's products into kept
        # arrays made its step 2% slower, and W7's no faster: its page faults are the weight
        # gradients')
        y = xp.matmul(w2.T, x2.T).T
    else:
        y = xp.matmul(x2, w2)
    if bias is not None:
        if bias.size != m:
            raise ValueError(
                f"affine: bias has shape {bias.shape}, expected {tuple(weight.shape[1:])}"
            )
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
        x2 = x[0].reshape(n, k)
        if xp is np and g2.dtype == x2.dtype and g2.dtype.kind == "f":
            # into a kept array (gradhub.memory): a weight gradient the caller has dropped is
            # written again at the next step instead of new pages (W7: 16 MiB a layer)
            gw = xp.matmul(g2.T, x2, out=output_array(xp, (m, k), g2.dtype))
        else:
            gw = xp.matmul(g2.T, x2)
        grads[1] = gw.T.reshape(xs[1])
    if len(xs) > 2:
        grads.append(g2.sum(axis=0).reshape(xs[2]) if need_grads[2] else None)
    return grads


def _affine_samples(rng: np.random.Generator) -> Iterator[Sample]:
    n = rng.standard_normal
    yield Sample((n((3, 4)), n((4, 2)), n((2,))), {"base_axis": 1}, name="2-d with bias")
    yield Sample((n((3, 4)), n((4, 2))), {"base_axis": 1}, name="no bias")
    yield Sample((n((2, 2, 3)), n((6, 2)), n((2,))), {"base_axis": 1}, name="flattened features")
    yield Sample(
        (n((2, 2, 3)), n((3, 2, 2)), n((2, 2))), {"base_axis": 2}, name="base_axis 2, 3-d weight"
    )
    yield Sample((n((4,)), n((4, 3)), n((3,))), {"base_axis": 0}, name="base_axis 0")
    yield Sample(
        (n((4, 3)).T, n((4, 2)).T[::-1].T, n((2,))), {"base_axis": 1}, name="non-contiguous"
    )
    yield Sample((n((0, 3)), n((3, 2)), n((2,))), {"base_axis": 1}, name="empty batch")


def _affine_ref(
    x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None, base_axis: int = 1
) -> np.ndarray:
    lead = x.shape[:base_axis]
    xf = (
        x.reshape(int(np.prod(lead)), -1)
        if x.size
        else x.reshape(int(np.prod(lead)), weight.shape[0])
    )
    wf = weight.reshape(weight.shape[0], -1)
    y = np.einsum("nk,km->nm", xf, wf)
    if bias is not None:
        y = y + bias.reshape(-1)
    return y.reshape(lead + weight.shape[1:])


# -- Einsum ------------------------------------------------------------------------------------


#: einsum subscript letters (``string.ascii_letters``, without importing ``string``: 0.5 ms)
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _checked_equation(equation: Any) -> str:
    """``equation`` without spaces; a TypeError or ValueError naming einsum for one that is not
    made of letters, commas, ``...`` and at most one ``->``."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum: equation must be a str such as 'ij,jk->ik', got {equation!r}")
    eq = equation.replace(" ", "")
    bad = set(eq) - set(_LETTERS) - set(".,->")
    if (
        bad
        or eq.count("->") > 1
        or eq.replace("...", "").count(".")
        or eq.count("-") != eq.count("->")
    ):
        raise ValueError(
            f"einsum: equation {equation!r} is not valid: it takes letters, commas, "
            f"'...' and at most one '->'"
        )
    return eq


def _parse_einsum(
    equation: str, shapes: Sequence[Sequence[int]]
) -> tuple[list[str], str, dict[str, int]]:
    """Explicit subscripts (ellipses expanded, output spelled out) and each letter's size."""
    eq = _checked_equation(equation)
    if "->" in eq:
        lhs, out = eq.split("->")
        explicit = True
    else:
        lhs, out, explicit = eq, "", False
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(
            f"einsum: equation {equation!r} has {len(terms)} operands, {len(shapes)} given"
        )
    used = set(eq) - set(".,->")
    spare = [c for c in _LETTERS if c not in used]
    n_ell = max(
        (len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes) if "..." in t), default=0
    )
    ell = "".join(spare[:n_ell])
    sizes: dict[str, int] = {}
    parsed = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            k = len(s) - len(t.replace("...", ""))
            t = t.replace("...", ell[n_ell - k :])
        if len(t) != len(s):
            raise ValueError(
                f"einsum: subscripts {t!r} do not match an operand of shape {tuple(s)}"
            )
        if len(set(t)) != len(t):
            raise ValueError(
                f"einsum: repeated subscripts within one operand ({t!r}) are not supported"
            )
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


def _diagonals(term: str, x: Any) -> tuple[str, Any]:
    """``term``'s subscripts and operand ``x`` with each subscript repeated within the term
    replaced by one axis holding the diagonal (``"ii"``: ``x[ar, ar]``): the repeated axes are
    moved to the front (Transpose) and indexed together (GetItem, whose rule scatters back), so
    the result stays differentiable to any order."""
    if "..." in term:
        pre, post = term.split("...")
        letters: list[str | None] = [*pre, *[None] * (x.ndim - len(pre) - len(post)), *post]
    else:
        letters = list(term)
    if len(letters) != x.ndim:
        return term, x  # (the primitive names the mismatch)
    while True:
        named = [c for c in letters if c is not None]
        rep = next((c for c in named if named.count(c) > 1), None)
        if rep is None:
            break
        axes = [k for k, c in enumerate(letters) if c == rep]
        sizes = {int(x.shape[k]) for k in axes}
        if len(sizes) != 1:
            raise ValueError(
                f"einsum: subscript {rep!r} is repeated in {term!r} over axes of sizes "
                f"{sorted(sizes)}; a diagonal needs equal sizes"
            )
        rest = [k for k in range(x.ndim) if k not in axes]
        x = call("Transpose", x, axes=(*axes, *rest))
        ar = x.device.xp.arange(sizes.pop())
        x = call("GetItem", x, key=(ar,) * len(axes))
        letters = [rep, *(letters[k] for k in rest)]
    # the axes of "..." stay together, in order: one "..." where they start
    text = "".join(
        c if c is not None else ("..." if k == 0 or letters[k - 1] is not None else "")
        for k, c in enumerate(letters)
    )
    return text, x


def _einsum_api(primitive: Any) -> Any:
    def einsum(*xs: Any, equation: str = "") -> Any:
        eq = _checked_equation(equation)
        lhs, arrow, out = eq.partition("->")
        terms = lhs.split(",")
        if len(terms) != len(xs) or all(
            len(set(t.replace("...", ""))) == len(t.replace("...", "")) for t in terms
        ):
            return primitive(*xs, equation=equation)
        if not arrow:  # numpy's implicit output, from the subscripts as written
            letters = "".join(t.replace("...", "") for t in terms)
            once = sorted(c for c in set(letters) if letters.count(c) == 1)
            out = ("..." if "..." in lhs else "") + "".join(once)
        parts = [_diagonals(t, x) for t, x in zip(terms, xs)]
        return primitive(
            *(x for _, x in parts), equation=",".join(t for t, _ in parts) + "->" + out
        )

    return einsum


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
            g = call("BroadcastTo", call("Reshape", g, shape=shape1), shape=tuple(in_shapes[i]))
        grads.append(g)
    return grads


def _einsum_samples(rng: np.random.Generator) -> Iterator[Sample]:
    n = rng.standard_normal
    yield Sample((n((3, 3)),), {"equation": "ii->i"}, name="diagonal")
    yield Sample((n((3, 3)),), {"equation": "ii"}, name="trace (implicit output)")
    yield Sample((n((2, 3, 2)), n((3,))), {"equation": "iji,j->ij"}, name="split diagonal")
    yield Sample((n((3, 2, 2)),), {"equation": "...ii->...i"}, name="diagonal after ellipsis")
    yield Sample((n((2, 3)), n((3, 2))), {"equation": "ij,jk->ik"}, name="matmul")
    yield Sample((n((2, 3)), n((3, 4))), {"equation": "ij,jk"}, name="implicit output")
    yield Sample((n((2, 3)),), {"equation": "ij->ji"}, name="transpose")
    yield Sample((n((2, 3)),), {"equation": "ij->"}, name="total sum")
    yield Sample((n((2, 3)), n((3,))), {"equation": "ij,k->ik"}, name="summed-away letter")
    yield Sample(
        (n((2, 2, 3)), n((2, 3, 2)), n((2,))), {"equation": "bij,bjk,k->bi"}, name="three operands"
    )
    yield Sample((n((2, 2, 3)), n((3, 2))), {"equation": "...ij,jk->...ik"}, name="ellipsis")
    yield Sample((n((3,)), n((3,))), {"equation": "i,i->"}, name="dot to 0-d")


def _einsum_ref(*xs: np.ndarray, equation: str = "") -> np.ndarray:
    return np.asarray(np.einsum(equation, *xs))


# -- batch inverse, determinant, log-determinant, Cholesky --------------------------------------


def _square_batch(fn: str, x: Any) -> None:
    """A ValueError naming ``fn`` unless ``x`` is a stack of square matrices ``(..., n, n)``."""
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"{fn}: x must be a stack of square matrices (..., n, n), got shape {tuple(x.shape)}"
        )


def _last_two_swapped(ndim: int) -> tuple[int, ...]:
    return (*range(ndim - 2), ndim - 1, ndim - 2)


def _mT(v: Any) -> Any:
    """``v`` with its last two axes swapped (Transpose, differentiable)."""
    return call("Transpose", v, axes=_last_two_swapped(v.ndim))


def _per_matrix(g: Any) -> Any:
    """``g`` of shape ``s`` as ``s + (1, 1)``, to scale each matrix of a stack."""
    return call("Reshape", g, shape=(*g.shape, 1, 1))


def _batch_inv(xp: Any, x: Any) -> Any:
    _square_batch("batch_inv", x)
    try:
        return xp.linalg.inv(x)
    except xp.linalg.LinAlgError as e:
        raise ValueError(f"batch_inv: x holds a singular matrix ({e})") from None


def _batch_inv_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    # d inv(A) = -inv(A) dA inv(A), so dA = -inv(A)^T g inv(A)^T, with the output Y = inv(A)
    y = outputs[0]
    gy_t = call("BatchMatmul", y, gy[0], transpose_a=True)
    return [-call("BatchMatmul", gy_t, y, transpose_b=True)]


def _batch_det(xp: Any, x: Any) -> Any:
    _square_batch("batch_det", x)
    return xp.asarray(xp.linalg.det(x))  # (one matrix: a number, made an array)


def _batch_det_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    # d det(A) = det(A) tr(inv(A) dA), so dA = g det(A) inv(A)^T
    scale = _per_matrix(gy[0] * outputs[0])
    return [scale * _mT(call("BatchInv", inputs[0]))]


def _batch_logdet(xp: Any, x: Any) -> Any:
    _square_batch("batch_logdet", x)
    return xp.asarray(xp.linalg.slogdet(x)[1])


def _batch_logdet_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    # d log|det(A)| = tr(inv(A) dA), so dA = g inv(A)^T
    return [_per_matrix(gy[0]) * _mT(call("BatchInv", inputs[0]))]


def _batch_cholesky(xp: Any, x: Any, upper: bool = False) -> Any:
    _square_batch("batch_cholesky", x)
    sym = (x + xp.swapaxes(x, -1, -2)) * 0.5
    try:
        low = xp.linalg.cholesky(sym)
    except xp.linalg.LinAlgError as e:
        raise ValueError(f"batch_cholesky: x is not positive definite ({e})") from None
    return xp.ascontiguousarray(xp.swapaxes(low, -1, -2)) if upper else low


def _batch_cholesky_bw(gy, inputs, in_shapes, outputs, out_shapes, upper):  # type: ignore[no-untyped-def]
    # Murray (2016): with A = L L^T and P = Phi(L^T gL) (Phi: the lower triangle, its diagonal
    # halved), S = L^-T P L^-1 and dA = (S + S^T) / 2 (A is read symmetrized)
    low, g = outputs[0], gy[0]
    if upper:
        low, g = _mT(low), _mT(g)
    m = call("BatchMatmul", low, g, transpose_a=True)
    phi = (call("Trilu", m, k=0, upper=False) + call("Trilu", m, k=-1, upper=False)) * 0.5
    inv = call("BatchInv", low)
    s = call("BatchMatmul", call("BatchMatmul", inv, phi, transpose_a=True), inv)
    return [(s + _mT(s)) * 0.5]


def _well_conditioned(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    n = shape[-1]
    return rng.standard_normal(shape) * 0.3 + np.eye(n) * 1.5


def _spd(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + np.eye(shape[-1]) * shape[-1]


def _square_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((_well_conditioned(rng, (2, 3, 3)),), {}, name="batch of 3x3")
    yield Sample((_well_conditioned(rng, (4, 4)),), {}, name="one matrix")
    yield Sample((_well_conditioned(rng, (2, 2, 2, 2)),), {}, name="two leading axes")
    yield Sample((_well_conditioned(rng, (3, 1, 1)),), {}, name="1x1")


def _logdet_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield from _square_samples(rng)
    m = _well_conditioned(rng, (2, 3, 3))
    m[0] = m[0][[1, 0, 2]]  # a negative determinant: log|det|
    yield Sample((m,), {}, name="negative determinant")


def _cholesky_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((_spd(rng, (2, 3, 3)),), {"upper": False}, name="lower")
    yield Sample((_spd(rng, (2, 3, 3)),), {"upper": True}, name="upper")
    yield Sample((_spd(rng, (4, 4)),), {"upper": False}, name="one matrix")
    yield Sample((_spd(rng, (2, 1, 2, 2)),), {"upper": True}, name="two leading axes")


def _batch_cholesky_ref(x: np.ndarray, upper: bool = False) -> np.ndarray:
    low = np.linalg.cholesky((x + np.swapaxes(x, -1, -2)) / 2)
    return np.swapaxes(low, -1, -2).copy() if upper else low


# -- registration ------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register the linalg functions."""
    f = register.function
    f(
        "Affine",
        _affine,
        inputs=("x", "weight", "bias?"),
        attrs={"base_axis": 1},
        rule=_affine_bw,
        fast_backward=_affine_fast,
        need_inputs=(0, 1),
        need_outputs=(),
        samples=_affine_samples,
        reference=_affine_ref,
        doc="""Fully connected layer, as nnabla: ``y = x W + b``.

``x`` is flattened to a matrix ``(prod(x.shape[:base_axis]), prod(x.shape[base_axis:]))``;
``weight`` has shape ``(prod(x.shape[base_axis:]), *out)`` and ``bias`` (optional) shape ``out``.
The output has shape ``x.shape[:base_axis] + weight.shape[1:]``. On the CPU where OpenBLAS runs
products on several threads (``gradhub.parallel.get_blas_threads() > 1``; one while gradhub's
thread pool exists), a 2-d ``x`` of 64 to 128 rows and a layer
with more outputs than rows, the output is computed as ``(W^T x^T)^T`` and is a Fortran-ordered
array (the same values; OpenBLAS runs that product faster there); ReLU keeps that order.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.ones((8, 3, 4)))
    >>> w = gh.Variable(np.full((12, 5), 0.5))
    >>> b = gh.Variable(np.zeros(5))
    >>> y = F.affine(x, w, b)
    >>> y.shape, float(y.d[0, 0])
    ((8, 5), 6.0)
""",
    )
    einsum = f(
        "Einsum",
        _einsum,
        inputs=("*xs",),
        attrs={"equation": ""},
        rule=_einsum_bw,
        need_inputs=None,
        need_outputs=(),
        samples=_einsum_samples,
        reference=_einsum_ref,
        doc="""Einstein summation ``numpy.einsum(equation, *xs)``.

Supports explicit and implicit outputs, ``...`` and subscripts repeated within one operand
(diagonals: ``"ii->i"``, ``"ii"`` the trace, ``"iij->j"``; taken with Transpose and GetItem
first); not supported: size-1 broadcasting of ellipsis dims. The gradient of each operand is
again an einsum of the output gradient with the other operands.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> a = gh.Variable(np.ones((2, 3)))
    >>> F.einsum(a, a, equation="ij,ij->i").d
    array([3., 3.])
""",
    )
    replace_api(einsum, _einsum_api(einsum.api))
    f(
        "BatchInv",
        _batch_inv,
        rule=_batch_inv_bw,
        need_inputs=(),
        need_outputs=(0,),
        samples=_square_samples,
        reference=np.linalg.inv,
        doc="""batch_inv(x): the inverse of each matrix of ``x`` (shape ``(..., n, n)``), as
nnabla's ``BatchInv``. A singular matrix raises a ValueError. Gradient: ``dx = -Y^T g Y^T`` with
the output ``Y = inv(x)`` (BatchMatmul), so it is differentiable again.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> F.batch_inv(gh.Variable(np.array([[[2.0, 0.0], [0.0, 4.0]]]))).d
    array([[[0.5 , 0.  ],
            [0.  , 0.25]]])
""",
    )
    f(
        "BatchDet",
        _batch_det,
        rule=_batch_det_bw,
        need_inputs=(0,),
        need_outputs=(0,),
        samples=_square_samples,
        reference=np.linalg.det,
        doc="""batch_det(x): the determinant of each matrix of ``x`` (shape ``(..., n, n)``; the
output has shape ``x.shape[:-2]``), as nnabla's ``BatchDet``. Gradient: ``dx = g det(x)
inv(x)^T`` (with BatchInv: a singular matrix raises a ValueError there).

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> F.batch_det(gh.Variable(np.array([[[2.0, 1.0], [1.0, 3.0]]]))).d
    array([5.])
""",
    )
    f(
        "BatchLogdet",
        _batch_logdet,
        rule=_batch_logdet_bw,
        need_inputs=(0,),
        need_outputs=(),
        samples=_logdet_samples,
        reference=lambda x: np.linalg.slogdet(x)[1],
        doc="""batch_logdet(x): ``log|det(x)|`` of each matrix of ``x`` (shape ``(..., n, n)``), as
nnabla's ``BatchLogdet`` (the log of the absolute determinant, from ``slogdet``: no overflow).
Gradient: ``dx = g inv(x)^T`` (with BatchInv), differentiable again.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> F.batch_logdet(gh.Variable(np.array([[[0.0, 2.0], [3.0, 0.0]]]))).d  # det -6
    array([1.79175947])
""",
    )
    f(
        "BatchCholesky",
        _batch_cholesky,
        attrs={"upper": False},
        rule=_batch_cholesky_bw,
        need_inputs=(),
        need_outputs=(0,),
        samples=_cholesky_samples,
        reference=_batch_cholesky_ref,
        doc="""batch_cholesky(x, upper=False): the Cholesky factor of each symmetric positive
definite matrix of ``x`` (shape ``(..., n, n)``), as nnabla's ``BatchCholesky``: lower ``L`` with
``x = L L^T``, or with ``upper=True`` ``U = L^T`` (``x = U^T U``). ``x`` is read symmetrized,
``(x + x^T) / 2`` (nnabla reads its lower triangle: the same for a symmetric ``x``), so the
gradient is the symmetric one nnabla gives: with ``P = Phi(L^T g)`` (the lower triangle, its
diagonal halved) and ``S = L^-T P L^-1``, ``dx = (S + S^T) / 2`` (Murray 2016), written with
BatchMatmul, Trilu and BatchInv, so differentiable again. A matrix that is not positive
definite raises a ValueError (on the CPU; CuPy returns NaN).

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> F.batch_cholesky(gh.Variable(np.array([[[4.0, 2.0], [2.0, 5.0]]]))).d
    array([[[2., 0.],
            [1., 2.]]])
""",
    )
