"""mxnet 1.9.1's linear algebra operators of ``mx.nd`` (``linalg_gemm``, ``linalg_potrf``,
``linalg_trsm``, ``linalg_inverse``, ``linalg_det``...) and the namespace ``mx.nd.linalg``
(``mx.nd.linalg.gemm``, ``potrf``...).

Every operator works on the last two axes, batched over the leading ones, for float dtypes
(others raise ``MXNetError``, as mxnet). They are compositions of registered gradhub functions
(``batch_matmul``, ``batch_cholesky``, ``batch_inv``, ``batch_det``, ``trilu``, gathers), so
``mx.autograd`` records them and their gradients differentiate again (mxnet has no second
derivatives for them). Triangular solves use the inverse of the triangle.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> a = mx.nd.array([[4.0, 2.0], [2.0, 3.0]])
    >>> mx.nd.linalg.potrf(a).asnumpy().round(4)
    array([[2.    , 0.    ],
           [1.    , 1.4142]], dtype=float32)
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
from gradhub.variable import Variable as NativeVariable

from .._common import call_native as _call
from ._nd_array_more import _cells, _diag_map, _diag_part_index, _exact
from ._nd_tensor import _host, _leaf, _nd, _no_out, _run, linalg_gemm2
from .base import MXNetError
from .ndarray import NDArray

__all__ = [
    "linalg",
    "linalg_det",
    "linalg_extractdiag",
    "linalg_extracttrian",
    "linalg_gelqf",
    "linalg_gemm",
    "linalg_inverse",
    "linalg_makediag",
    "linalg_maketrian",
    "linalg_potrf",
    "linalg_potri",
    "linalg_slogdet",
    "linalg_sumlogdiag",
    "linalg_syrk",
    "linalg_trmm",
    "linalg_trsm",
]

_DOCS = "docs/migration-mxnet.md"


def _mat(fn: str, arg: str, a: Any, square: bool = False) -> NDArray:
    _nd(fn, arg, a)
    if a._arr.dtype.kind != "f":
        raise MXNetError(
            f"mx.nd.{fn}: This operation only supports floating point types, not "
            f"{a._arr.dtype.name}"
        )
    if a.ndim < 2:
        raise MXNetError(f"mx.nd.{fn}: {arg} must have at least 2 dimensions, got {a.shape}")
    if square and a.shape[-1] != a.shape[-2]:
        raise MXNetError(f"mx.nd.{fn}: {arg} must hold square matrices, got {a.shape}")
    return a


def _t(v: NativeVariable) -> NativeVariable:
    axes = (*range(v.ndim - 2), v.ndim - 1, v.ndim - 2)
    return _call("transpose", v, axes=axes)


def _mm(a: NativeVariable, b: NativeVariable) -> NativeVariable:
    return _call("batch_matmul", a, b)


def _scale(v: NativeVariable, alpha: float) -> NativeVariable:
    return v if alpha == 1.0 else _call("mul_scalar", v, val=float(alpha))


def _batch_shape(a: NDArray) -> tuple[int, ...]:
    return tuple(a.shape[:-2]) or (1,)


def linalg_gemm(
    A: NDArray,
    B: NDArray,
    C: NDArray,
    transpose_a: bool = False,
    transpose_b: bool = False,
    alpha: float = 1.0,
    beta: float = 1.0,
    axis: int = -2,
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``linalg_gemm`` (``linalg.gemm``): ``alpha op(A) op(B) + beta C`` with ``op``
    transposing when asked. ``axis`` other than -2 raises NotImplementedError.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> o = mx.nd.ones((2, 2))
        >>> mx.nd.linalg.gemm(o, o, o, alpha=2.0, beta=1.0).asnumpy()[0]
        array([5., 5.], dtype=float32)
    """
    fn = "linalg_gemm"
    for arg, v in (("A", A), ("B", B), ("C", C)):
        _mat(fn, arg, v)
    _no_out(fn, out)
    if int(axis) != -2:
        raise NotImplementedError(f"mx.nd.{fn}: axis={axis} is not supported ({_DOCS})")
    ta, tb = bool(transpose_a), bool(transpose_b)
    m = A.shape[-1] if ta else A.shape[-2]
    k1 = A.shape[-2] if ta else A.shape[-1]
    k2 = B.shape[-1] if tb else B.shape[-2]
    n = B.shape[-2] if tb else B.shape[-1]
    if k1 != k2 or tuple(C.shape) != (*A.shape[:-2], m, n) or A.shape[:-2] != B.shape[:-2]:
        raise MXNetError(
            f"mx.nd.{fn}: shapes A {A.shape}, B {B.shape}, C {C.shape} do not match "
            f"(transpose_a={ta}, transpose_b={tb})"
        )

    def f(a: NativeVariable, b: NativeVariable, c: NativeVariable) -> NativeVariable:
        r = _call("batch_matmul", a, b, transpose_a=ta, transpose_b=tb)
        return _scale(r, float(alpha)) + _scale(c, float(beta))

    return _run([A, B, C], f)


def _sym_lower(v: NativeVariable, data: np.ndarray) -> NativeVariable:
    """The symmetric matrix mxnet's LAPACK calls read from the lower triangle of ``v``, with the
    gradient of ``(v + v^T) / 2`` (mxnet's symmetric gradient)."""
    low = np.tril(data)
    full = low + np.swapaxes(np.tril(data, -1), -1, -2)
    s = _call("mul_scalar", v + _t(v), val=0.5)
    return s - NativeVariable.leaf(s._data.copy(), False) + _leaf(full.astype(data.dtype), v)


def linalg_potrf(A: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``linalg_potrf``: the lower Cholesky factor ``L`` of each symmetric positive
    definite matrix, ``A = L L^T`` (the lower triangle of ``A`` is read). The gradient is
    mxnet's symmetric one.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.linalg.potrf(mx.nd.array([[4.0, 0.0], [0.0, 9.0]])).asnumpy()
        array([[2., 0.],
               [0., 3.]], dtype=float32)
    """
    _mat("linalg_potrf", "A", A, square=True)
    _no_out("linalg_potrf", out)
    data = _host(A)
    try:
        np.linalg.cholesky(np.tril(data) + np.swapaxes(np.tril(data, -1), -1, -2))
    except np.linalg.LinAlgError:
        raise MXNetError(
            "mx.nd.linalg_potrf: the matrix is not positive definite (LAPACK potrf failed)"
        ) from None
    return _run([A], lambda v: _call("batch_cholesky", _sym_lower(v, data)))


def _tri_inv(v: NativeVariable, lower: bool) -> NativeVariable:
    return _call("batch_inv", _call("trilu", v, k=0, upper=not lower))


def linalg_potri(A: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``linalg_potri``: ``(L L^T)^-1`` from the Cholesky factor ``L`` (the lower
    triangle of ``A``), i.e. the inverse of the matrix :func:`linalg_potrf` factored.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.linalg.potri(mx.nd.array([[2.0, 0.0], [0.0, 4.0]])).asnumpy()
        array([[0.25  , 0.    ],
               [0.    , 0.0625]], dtype=float32)
    """
    _mat("linalg_potri", "A", A, square=True)
    _no_out("linalg_potri", out)

    def f(v: NativeVariable) -> NativeVariable:
        li = _tri_inv(v, True)
        return _mm(_t(li), li)

    return _run([A], f)


def _triangular(
    fn: str,
    A: NDArray,
    B: NDArray,
    transpose: bool,
    rightside: bool,
    lower: bool,
    alpha: float,
    solve: bool,
) -> NDArray:
    _mat(fn, "A", A, square=True)
    _mat(fn, "B", B)
    n = A.shape[-1]
    if A.shape[:-2] != B.shape[:-2] or (B.shape[-1] if rightside else B.shape[-2]) != n:
        raise MXNetError(
            f"mx.nd.{fn}: shapes A {A.shape} and B {B.shape} do not match (rightside={rightside})"
        )

    def f(a: NativeVariable, b: NativeVariable) -> NativeVariable:
        t = _tri_inv(a, lower) if solve else _call("trilu", a, k=0, upper=not lower)
        t = _t(t) if transpose else t
        r = _mm(b, t) if rightside else _mm(t, b)
        return _scale(r, alpha)

    return _run([A, B], f)


def linalg_trmm(
    A: NDArray,
    B: NDArray,
    transpose: bool = False,
    rightside: bool = False,
    lower: bool = True,
    alpha: float = 1.0,
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``linalg_trmm``: ``alpha op(A) B`` (``alpha B op(A)`` with ``rightside``), ``A``
    triangular (its lower triangle, or upper with ``lower=False``), ``op`` transposing when
    ``transpose``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> a = mx.nd.array([[1.0, 5.0], [2.0, 3.0]])
        >>> mx.nd.linalg.trmm(a, mx.nd.ones((2, 1))).asnumpy().ravel()
        array([1., 5.], dtype=float32)
    """
    _no_out("linalg_trmm", out)
    return _triangular(
        "linalg_trmm", A, B, bool(transpose), bool(rightside), bool(lower), float(alpha), False
    )


def linalg_trsm(
    A: NDArray,
    B: NDArray,
    transpose: bool = False,
    rightside: bool = False,
    lower: bool = True,
    alpha: float = 1.0,
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``linalg_trsm``: the solution ``X`` of ``op(A) X = alpha B`` (``X op(A) = alpha
    B`` with ``rightside``), ``A`` triangular (lower, or upper with ``lower=False``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> a = mx.nd.array([[2.0, 0.0], [0.0, 4.0]])
        >>> mx.nd.linalg.trsm(a, mx.nd.ones((2, 1))).asnumpy().ravel()
        array([0.5 , 0.25], dtype=float32)
    """
    _no_out("linalg_trsm", out)
    return _triangular(
        "linalg_trsm", A, B, bool(transpose), bool(rightside), bool(lower), float(alpha), True
    )


def linalg_syrk(
    A: NDArray, transpose: bool = False, alpha: float = 1.0, out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``linalg_syrk``: ``alpha A A^T`` (``alpha A^T A`` with ``transpose``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.linalg.syrk(mx.nd.ones((2, 3))).asnumpy()
        array([[3., 3.],
               [3., 3.]], dtype=float32)
    """
    _mat("linalg_syrk", "A", A)
    _no_out("linalg_syrk", out)
    tr = bool(transpose)

    def f(a: NativeVariable) -> NativeVariable:
        r = _mm(_t(a), a) if tr else _mm(a, _t(a))
        return _scale(r, float(alpha))

    return _run([A], f)


def linalg_gelqf(A: NDArray, out: Any = None, **kwargs: Any) -> list[NDArray]:
    """mxnet's ``linalg_gelqf``: the LQ factorization ``A = L Q`` of each ``m x n`` matrix with
    ``m <= n`` (``Q`` with orthonormal rows, ``L`` lower triangular), returned as ``[Q, L]``. The
    signs of ``L``'s diagonal are LAPACK's (Householder) ones, as mxnet's. The values come from
    a float64 QR of ``A^T``; the gradient from ``L = chol(A A^T) D``, ``Q = L^-1 A`` (``D`` the
    signs, composed in float64), so it differentiates again.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> q, l = mx.nd.linalg.gelqf(mx.nd.array([[3.0, 4.0]]))
        >>> l.asnumpy(), q.asnumpy()
        (array([[-5.]], dtype=float32), array([[-0.6, -0.8]], dtype=float32))
    """
    _mat("linalg_gelqf", "A", A)
    _no_out("linalg_gelqf", out)
    m, n = A.shape[-2:]
    if m > n:
        raise MXNetError(
            f"mx.nd.linalg_gelqf: the matrices must have no more rows than columns, got {A.shape}"
        )
    data = _host(A).astype(np.float64)
    flat = data.reshape(-1, m, n)
    signs = np.empty((flat.shape[0], m))
    qs = np.empty((flat.shape[0], m, n))
    ls = np.empty((flat.shape[0], m, m))
    for i, mat in enumerate(flat):
        q, r = np.linalg.qr(mat.T)  # LAPACK's Householder QR of A^T: A = R^T Q^T
        d = np.sign(np.diagonal(r))
        signs[i] = np.where(d == 0, 1.0, d)
        qs[i], ls[i] = q.T, r.T
    dt = A._arr.dtype
    signs = signs.reshape((*A.shape[:-2], 1, m)).astype(dt)
    q_val = qs.reshape(A.shape).astype(dt)
    l_val = ls.reshape((*A.shape[:-2], m, m)).astype(dt)

    def wide(a: NativeVariable) -> NativeVariable:
        # chol(A A^T) squares the condition number: the composition runs in float64
        return a if a.dtype == np.float64 else _call("cast", a, dtype="float64")

    def narrow(v: NativeVariable) -> NativeVariable:
        return v if dt == np.float64 else _call("cast", v, dtype=dt.name)

    def lraw(a: NativeVariable) -> NativeVariable:
        return _call("batch_cholesky", _mm(a, _t(a))) * _leaf(signs.astype(np.float64), a)

    def lfac(a: NativeVariable) -> NativeVariable:
        return _exact(narrow(lraw(wide(a))), l_val)

    def qfac(a: NativeVariable) -> NativeVariable:
        w = wide(a)
        return _exact(narrow(_mm(_call("batch_inv", lraw(w)), w)), q_val)

    return [_run([A], qfac), _run([A], lfac)]


def linalg_sumlogdiag(A: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``linalg_sumlogdiag``: ``sum_i log(A_ii)`` of each square matrix (shape: the batch
    shape, (1,) for one matrix).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.linalg.sumlogdiag(mx.nd.array([[1.0, 0.0], [0.0, 1.0]])).asnumpy()
        array([0.], dtype=float32)
    """
    _mat("linalg_sumlogdiag", "A", A, square=True)
    _no_out("linalg_sumlogdiag", out)
    shape = _batch_shape(A)
    return _run(
        [A],
        lambda v: _call(
            "reshape",
            _call("sum", _call("log", _call("matrix_diag_part", v)), axis=v.ndim - 2),
            shape=shape,
        ),
    )


def _gather(v: NativeVariable, lead: int, idx: np.ndarray) -> NativeVariable:
    """``v`` with its last two axes flattened (after ``lead`` batch axes), then ``[..., idx]``."""
    flat = _call("reshape", v, shape=(*v.shape[:lead], int(np.prod(v.shape[lead:]))))
    return flat[(Ellipsis, idx)]


def linalg_extractdiag(A: NDArray, offset: int = 0, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``linalg_extractdiag``: diagonal ``offset`` (above the main one for ``offset >
    0``) of each square matrix.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.linalg.extractdiag(mx.nd.array([[1.0, 2.0], [3.0, 4.0]]), offset=1).asnumpy()
        array([2.], dtype=float32)
    """
    _mat("linalg_extractdiag", "A", A, square=True)
    _no_out("linalg_extractdiag", out)
    n = A.shape[-1]
    k = int(offset)
    if abs(k) >= n:
        raise MXNetError(f"mx.nd.linalg_extractdiag: offset {k} is out of range for size {n}")
    idx = _diag_part_index(n, n, k)
    return _run([A], lambda v: _gather(v, v.ndim - 2, idx))


def linalg_makediag(A: NDArray, offset: int = 0, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``linalg_makediag``: square matrices of side ``len + |offset|`` holding the last
    axis of ``A`` on diagonal ``offset``, zeros elsewhere.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.linalg.makediag(mx.nd.array([1.0, 2.0])).asnumpy()
        array([[1., 0.],
               [0., 2.]], dtype=float32)
    """
    _nd("linalg_makediag", "A", A)
    if A._arr.dtype.kind != "f":
        _mat("linalg_makediag", "A", A)
    _no_out("linalg_makediag", out)
    k = int(offset)
    m = A.shape[-1]
    idx = _diag_map(m, k)
    return _run([A], lambda v: _cells(v, idx))


def _trian_index(n: int, offset: int, lower: bool) -> tuple[np.ndarray, bool]:
    """The flat indices, in mxnet's order, of the triangle ``extracttrian`` reads, and whether
    they index the transposed matrix (upper triangles are read column by column)."""
    upper = offset > 0 or (offset == 0 and not lower)
    k = -abs(offset)
    rows, cols = np.tril_indices(n, k)
    return (rows * n + cols).astype(np.int64), upper


def linalg_extracttrian(
    A: NDArray, offset: int = 0, lower: bool = True, out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``linalg_extracttrian``: the triangle of each square matrix as a vector, the
    lower one (rows in order) for ``offset < 0`` or ``offset == 0`` with ``lower``, else the
    upper one (columns in order), starting at diagonal ``offset``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.linalg.extracttrian(mx.nd.array([[1.0, 2.0], [3.0, 4.0]])).asnumpy()
        array([1., 3., 4.], dtype=float32)
    """
    _mat("linalg_extracttrian", "A", A, square=True)
    _no_out("linalg_extracttrian", out)
    n = A.shape[-1]
    if abs(int(offset)) >= n:
        raise MXNetError(f"mx.nd.linalg_extracttrian: offset {offset} is out of range for size {n}")
    idx, upper = _trian_index(n, int(offset), bool(lower))
    return _run([A], lambda v: _gather(_t(v) if upper else v, v.ndim - 2, idx))


def linalg_maketrian(
    A: NDArray, offset: int = 0, lower: bool = True, out: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``linalg_maketrian`` (the inverse of :func:`linalg_extracttrian`): square
    matrices with the last axis of ``A`` placed in the triangle, zeros elsewhere; the side ``n``
    is found from the length ``(n - |offset|)(n - |offset| + 1) / 2``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.linalg.maketrian(mx.nd.array([1.0, 2.0, 3.0])).asnumpy()
        array([[1., 0.],
               [2., 3.]], dtype=float32)
    """
    _nd("linalg_maketrian", "A", A)
    if A._arr.dtype.kind != "f":
        _mat("linalg_maketrian", "A", A)
    _no_out("linalg_maketrian", out)
    length = A.shape[-1]
    m = round((np.sqrt(8 * length + 1) - 1) / 2)
    if m * (m + 1) // 2 != length:
        raise MXNetError(
            f"mx.nd.linalg_maketrian: the last axis ({length}) is not a triangular number"
        )
    n = m + abs(int(offset))
    flat, upper = _trian_index(n, int(offset), bool(lower))
    idx = np.zeros(n * n, np.int64)
    idx[flat] = np.arange(1, length + 1)
    if upper:
        idx = idx.reshape(n, n).T.reshape(-1)
    cells = idx.reshape(n, n)
    return _run([A], lambda v: _cells(v, cells))


def linalg_inverse(A: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``linalg_inverse``: ``A^-1`` of each square matrix; gradient ``-A^-T g A^-T``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.linalg.inverse(mx.nd.array([[2.0, 0.0], [0.0, 4.0]])).asnumpy()
        array([[0.5 , 0.  ],
               [0.  , 0.25]], dtype=float32)
    """
    _mat("linalg_inverse", "A", A, square=True)
    _no_out("linalg_inverse", out)
    try:
        return _run([A], lambda v: _call("batch_inv", v))
    except ValueError as e:  # (a singular matrix: gradhub's batch_inv refuses it)
        raise MXNetError(f"mx.nd.linalg_inverse: {e}") from None


def linalg_det(A: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``linalg_det``: ``det(A)`` of each square matrix (shape: the batch shape, (1,)
    for one matrix); gradient ``g det(A) A^-T``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.linalg.det(mx.nd.array([[2.0, 1.0], [1.0, 2.0]])).asnumpy()
        array([3.], dtype=float32)
    """
    _mat("linalg_det", "A", A, square=True)
    _no_out("linalg_det", out)
    shape = _batch_shape(A)
    return _run([A], lambda v: _call("reshape", _call("batch_det", v), shape=shape))


def linalg_slogdet(A: NDArray, out: Any = None, **kwargs: Any) -> tuple[NDArray, NDArray]:
    """mxnet's ``linalg_slogdet``: ``(sign, log|det(A)|)`` of each square matrix (shapes: the
    batch shape); the sign has gradient 0, ``log|det|`` the gradient ``g A^-T``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> s, l = mx.nd.linalg.slogdet(mx.nd.array([[-2.0, 0.0], [0.0, 1.0]]))
        >>> s.asnumpy(), l.asnumpy().round(4)
        (array([-1.], dtype=float32), array([0.6931], dtype=float32))
    """
    _mat("linalg_slogdet", "A", A, square=True)
    _no_out("linalg_slogdet", out)
    shape = _batch_shape(A)
    sign = np.linalg.slogdet(_host(A).astype(np.float64))[0].reshape(shape).astype(A._arr.dtype)

    def s(v: NativeVariable) -> NativeVariable:
        z = _call("reshape", _call("batch_det", v), shape=shape)
        return _call("where", _leaf(np.zeros(shape, bool), v), z, _leaf(sign, v))

    return (
        _run([A], s),
        _run([A], lambda v: _call("reshape", _call("batch_logdet", v), shape=shape)),
    )


#: ``mx.nd.linalg``: the operators under their short names, as mxnet's namespace
linalg = types.ModuleType(
    "gradhub_compat.mxnet.ndarray.linalg",
    "mxnet's ``mx.nd.linalg`` namespace: ``gemm``, ``gemm2``, ``potrf``, ``potri``, ``trmm``, "
    "``trsm``, ``syrk``, ``gelqf``, ``sumlogdiag``, ``extractdiag``, ``makediag``, "
    "``extracttrian``, ``maketrian``, ``inverse``, ``det``, ``slogdet`` (the ``linalg_*`` "
    "functions of ``mx.nd``).",
)
for _name, _fn in (
    ("gemm", linalg_gemm),
    ("gemm2", linalg_gemm2),
    ("potrf", linalg_potrf),
    ("potri", linalg_potri),
    ("trmm", linalg_trmm),
    ("trsm", linalg_trsm),
    ("syrk", linalg_syrk),
    ("gelqf", linalg_gelqf),
    ("sumlogdiag", linalg_sumlogdiag),
    ("extractdiag", linalg_extractdiag),
    ("makediag", linalg_makediag),
    ("extracttrian", linalg_extracttrian),
    ("maketrian", linalg_maketrian),
    ("inverse", linalg_inverse),
    ("det", linalg_det),
    ("slogdet", linalg_slogdet),
):
    setattr(linalg, _name, _fn)
