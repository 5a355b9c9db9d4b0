"""The ``mx.nd`` functions of Gluon's losses: ``softmax``, ``log_softmax``, ``pick``, ``where``,
``norm``, ``CTCLoss`` and the ``broadcast_*`` operators on NDArrays, as mxnet 1.9.1, recorded by
``mx.autograd`` (differentiable again with ``create_graph=True``).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> x = mx.nd.array([[1.0, 2.0, 3.0]])
    >>> mx.nd.pick(mx.nd.log_softmax(x), mx.nd.array([2])).asnumpy().round(4)
    array([-0.4076], dtype=float32)
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
from gradhub.variable import Variable as NativeVariable

from .._common import call_native as _call
from .base import MXNetError, _MXNetValueError
from .ndarray import NDArray, _divide, _record

__all__ = [
    "CTCLoss",
    "broadcast_add",
    "broadcast_div",
    "broadcast_maximum",
    "broadcast_minimum",
    "broadcast_minus",
    "broadcast_mul",
    "broadcast_plus",
    "broadcast_sub",
    "contrib",
    "ctc_loss",
    "log_softmax",
    "norm",
    "pick",
    "softmax",
    "where",
]

_DOCS = "docs/migration-mxnet.md"


def _nd(fn: str, **arrays: Any) -> None:
    for arg, v in arrays.items():
        if not isinstance(v, NDArray):
            raise TypeError(f"mx.nd.{fn}: {arg} must be an NDArray, got {type(v).__name__}")


def _no_out(fn: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"mx.nd.{fn}: out= is not supported ({_DOCS})")


def _axis(fn: str, axis: int, ndim: int) -> int:
    if not -ndim <= int(axis) < ndim:
        raise MXNetError(f"mx.nd.{fn}: axis {axis} is out of range for data of {ndim} axes")
    return int(axis) % ndim


def _result(r: NativeVariable, rec: bool, like: NDArray) -> NDArray:
    return NDArray(r._data, like._ctx, r if rec else None)


def _const(arr: np.ndarray, like: NDArray) -> NativeVariable:
    return NativeVariable.leaf(like._ctx.device().asarray(np.ascontiguousarray(arr)), False)


def _softmax_like(
    fn: str, native: str, data: Any, axis: int, temperature: Any, dtype: Any, use_length: Any
) -> NDArray:
    _nd(fn, data=data)
    if dtype is not None or use_length:
        raise NotImplementedError(f"mx.nd.{fn}: dtype and use_length are not supported ({_DOCS})")
    if data._arr.dtype.kind != "f":
        raise TypeError(f"mx.nd.{fn}: data must have a floating dtype, got {data._arr.dtype.name}")
    ax = _axis(fn, axis, data.ndim)
    t = 1.0 if temperature is None else float(temperature)

    def f(x: NativeVariable) -> NativeVariable:
        if t != 1.0:
            x = _divide(x, t)
        return _call(native, x, axis=ax)  # type: ignore[no-any-return]

    r, rec = _record([data], f)
    return _result(r, rec, data)


def softmax(
    data: NDArray,
    axis: int = -1,
    temperature: float | None = None,
    dtype: Any = None,
    use_length: bool = False,
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """``exp(x / t) / sum(exp(x / t), axis)`` (``t``: ``temperature``, 1 by default).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.softmax(mx.nd.array([[0.0, 0.0]])).asnumpy()
        array([[0.5, 0.5]], dtype=float32)
    """
    _no_out("softmax", out)
    return _softmax_like("softmax", "Softmax", data, axis, temperature, dtype, use_length)


def log_softmax(
    data: NDArray,
    axis: int = -1,
    temperature: float | None = None,
    dtype: Any = None,
    use_length: bool = False,
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """``x / t - log(sum(exp(x / t), axis))`` (the log of :func:`softmax`, computed stably).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.log_softmax(mx.nd.array([0.0, 0.0])).asnumpy().round(4)
        array([-0.6931, -0.6931], dtype=float32)
    """
    _no_out("log_softmax", out)
    return _softmax_like("log_softmax", "LogSoftmax", data, axis, temperature, dtype, use_length)


def pick(
    data: NDArray,
    index: NDArray,
    axis: int = -1,
    keepdims: bool = False,
    mode: str = "clip",
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """The element of ``data`` at ``index`` along ``axis``: ``out[i] = data[i, index[i]]``
    (``index`` has data's shape without ``axis``; float indices are truncated toward zero).
    ``mode="clip"`` clips indices into ``[0, n - 1]``, ``"wrap"`` wraps them modulo ``n``, as
    mxnet. The gradient goes to the picked elements.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> d = mx.nd.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        >>> mx.nd.pick(d, mx.nd.array([2, -1])).asnumpy()  # -1 is clipped to 0
        array([3., 4.], dtype=float32)
    """
    _nd("pick", data=data, index=index)
    _no_out("pick", out)
    if mode not in ("clip", "wrap"):
        raise MXNetError(
            f"mx.nd.pick: Invalid Input: '{mode}', valid values are: {{'clip', 'wrap'}}"
        )
    ax = _axis("pick", axis, data.ndim)
    n = data.shape[ax]
    rest = data.shape[:ax] + data.shape[ax + 1 :]
    idx = index.asnumpy()
    if idx.size != int(np.prod(rest)):
        raise MXNetError(
            f"mx.nd.pick: index of shape {index.shape} does not match data of shape {data.shape} "
            f"without axis {ax} ({rest})"
        )
    with np.errstate(invalid="ignore"):
        k = np.trunc(idx.astype(np.float64)).astype(np.int64).reshape(rest)
    k = np.clip(k, 0, n - 1) if mode == "clip" else np.mod(k, n)
    mask = np.moveaxis(np.eye(n, dtype=data._arr.dtype)[k], -1, ax)
    m = _const(mask, data)
    shape = (*rest[:ax], 1, *rest[ax:]) if keepdims else rest

    def f(x: NativeVariable) -> NativeVariable:
        y = _call("Sum", x * m, axis=ax, keepdims=bool(keepdims))
        return _call("Reshape", y, shape=shape or (1,))  # type: ignore[no-any-return]

    r, rec = _record([data], f)
    return _result(r, rec, data)


def where(condition: NDArray, x: NDArray, y: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
    """``x`` where ``condition`` is non-zero, else ``y`` (``condition`` of x's shape, or 1-D
    selecting whole rows of the first axis, as mxnet). The gradient goes to ``x`` at the
    selected elements and to ``y`` at the others.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> d = mx.nd.array([1.0, 3.0])
        >>> mx.nd.where(d > 2, d, -d).asnumpy()
        array([-1.,  3.], dtype=float32)
    """
    _nd("where", condition=condition, x=x, y=y)
    _no_out("where", out)
    if x.shape != y.shape:
        raise _MXNetValueError(f"mx.nd.where: x of shape {x.shape} and y of {y.shape} differ")
    c = condition.asnumpy() != 0
    if c.shape != x.shape:
        if c.ndim == 1 and x.ndim >= 1 and c.shape[0] == x.shape[0]:
            c = np.broadcast_to(c.reshape((-1,) + (1,) * (x.ndim - 1)), x.shape)
        else:
            raise _MXNetValueError(
                f"mx.nd.where: condition of shape {condition.shape} must have x's shape "
                f"{x.shape} or be 1-D of length {x.shape[0] if x.ndim else 0}"
            )
    cv = _const(c, x)
    r, rec = _record([x, y], lambda a, b: _call("Where", cv, a, b))
    return _result(r, rec, x)


def norm(
    data: NDArray,
    ord: int = 2,
    axis: Any = None,
    keepdims: bool = False,
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """The L2 norm ``sqrt(sum(x^2, axis))`` (``ord=1``: ``sum(|x|, axis)``) over ``axis``
    (every axis by default; a full reduction has shape (1,)).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.norm(mx.nd.array([3.0, 4.0])).asnumpy()
        array([5.], dtype=float32)
    """
    _nd("norm", data=data)
    _no_out("norm", out)
    if ord not in (1, 2):
        raise MXNetError(f"mx.nd.norm: ord={ord} is not supported (1 or 2, as mxnet)")
    if axis is not None:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axis = tuple(_axis("norm", a, data.ndim) for a in axes) or None
    if data._arr.dtype.kind in "iu":  # mxnet's integer kernels (no gradient)
        host = np.asarray(data._ctx.device().to_numpy(data._arr))
        r = _int_norm(host, ord, axis, bool(keepdims))
        return NDArray(data._ctx.device().asarray(r), data._ctx, None)

    def f(x: NativeVariable) -> NativeVariable:
        if ord == 1:
            s = _call("Sum", _call("Abs", x), axis=axis, keepdims=bool(keepdims))
        else:
            s = _call("Sqrt", _call("Sum", x * x, axis=axis, keepdims=bool(keepdims)))
        return _call("Reshape", s, shape=s.shape or (1,))  # type: ignore[no-any-return]

    r, rec = _record([data], f)
    return _result(r, rec, data)


def _int_norm(a: np.ndarray, ord: int, axis: tuple[int, ...] | None, keepdims: bool) -> Any:
    """``mx.nd.norm`` of an integer array as mxnet 1.9.1's reduction kernel computes it, in the
    array's dtype: ``ord=1`` sums ``|x|`` (wrapping around); ``ord=2`` is the scaled sum of
    squares of ``mshadow_op::nrm2`` (``broadcast_reduce_op.h``) run over the reduced elements in
    order, every division truncating: for ``x != 0`` with ``|x| > scale``,
    ``ssq = 1 + ssq (scale / |x|)^2`` and ``scale = |x|``, else ``ssq += (|x| / scale)^2``; the
    result is ``scale * sqrt(ssq)`` truncated (``[3, 4]`` gives 4, as mxnet)."""
    dt = a.dtype
    axes = tuple(range(a.ndim)) if axis is None else axis
    kept = [i for i in range(a.ndim) if i not in axes]
    out_shape = tuple(a.shape[i] for i in kept)
    rows = np.transpose(a, kept + list(axes)).reshape(int(np.prod(out_shape)), -1)
    with np.errstate(all="ignore"):
        if ord == 1:
            r = np.abs(rows).sum(axis=1, dtype=dt)
        else:
            ssq = np.zeros(len(rows), dt)
            scale = np.zeros(len(rows), dt)
            for j in range(rows.shape[1]):
                ab = np.abs(rows[:, j]).astype(dt)
                grow = (ab != 0) & (scale < ab)
                stay = (ab != 0) & ~grow
                q = (scale // np.where(grow, ab, 1)).astype(dt)
                ssq = np.where(grow, 1 + ssq * q * q, ssq).astype(dt)
                q = (ab // np.where(stay, scale, 1)).astype(dt)
                ssq = np.where(stay, ssq + q * q, ssq).astype(dt)
                scale = np.where(grow, ab, scale).astype(dt)
            r = np.trunc(scale * np.sqrt(ssq.astype(np.float32))).astype(dt)
    if keepdims:
        return r.reshape(tuple(1 if i in axes else n for i, n in enumerate(a.shape)))
    return r.reshape(out_shape or (1,))


def _check_broadcast(fn: str, lhs: NDArray, rhs: NDArray) -> None:
    a, b = lhs.shape, rhs.shape
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    if any(x != y and x != 1 and y != 1 for x, y in zip(pa, pb)):
        raise _MXNetValueError(
            f"mx.nd.{fn}: operands could not be broadcast together with shapes {list(a)} {list(b)}"
        )


def _broadcast(fn: str, op: Any) -> Any:
    def function(lhs: NDArray, rhs: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
        _nd(fn, lhs=lhs, rhs=rhs)
        _no_out(fn, out)
        _check_broadcast(fn, lhs, rhs)
        return lhs._binary(rhs, op, fn)  # type: ignore[no-any-return]

    function.__name__ = function.__qualname__ = fn
    return function


def _tie_left(fn: str, take_left: Any) -> Any:
    """mxnet's ``broadcast_maximum``/``minimum``: at ties the gradient goes to ``lhs``."""

    def function(lhs: NDArray, rhs: NDArray, out: Any = None, **kwargs: Any) -> NDArray:
        _nd(fn, lhs=lhs, rhs=rhs)
        _no_out(fn, out)
        _check_broadcast(fn, lhs, rhs)
        shape = np.broadcast_shapes(lhs.shape, rhs.shape)
        a, b = lhs.asnumpy(), rhs.asnumpy()
        c = _const(np.broadcast_to(take_left(a, b), shape), lhs)

        def f(x: NativeVariable, y: NativeVariable) -> NativeVariable:
            if tuple(x.shape) != shape:
                x = _call("BroadcastTo", x, shape=shape)
            if tuple(y.shape) != shape:
                y = _call("BroadcastTo", y, shape=shape)
            return _call("Where", c, x, y)  # type: ignore[no-any-return]

        if lhs._arr.dtype != rhs._arr.dtype:
            lhs._operand(rhs, fn)  # (raises mxnet's mixed-dtype error)
        r, rec = _record([lhs, rhs], f)
        return _result(r, rec, lhs)

    function.__name__ = function.__qualname__ = fn
    return function


broadcast_add = _broadcast("broadcast_add", lambda a, b: a + b)
broadcast_sub = _broadcast("broadcast_sub", lambda a, b: a - b)
broadcast_mul = _broadcast("broadcast_mul", lambda a, b: a * b)
broadcast_div = _broadcast("broadcast_div", lambda a, b: a / b)
broadcast_plus = broadcast_add
broadcast_minus = broadcast_sub
broadcast_maximum = _tie_left("broadcast_maximum", lambda a, b: a >= b)
broadcast_minimum = _tie_left("broadcast_minimum", lambda a, b: a <= b)
for _f, _formula in (
    (broadcast_add, "lhs + rhs"),
    (broadcast_sub, "lhs - rhs"),
    (broadcast_mul, "lhs * rhs"),
    (broadcast_div, "lhs / rhs"),
    (broadcast_maximum, "max(lhs, rhs) (at ties the gradient goes to lhs)"),
    (broadcast_minimum, "min(lhs, rhs) (at ties the gradient goes to lhs)"),
):
    _f.__doc__ = (
        f"``{_formula}`` with numpy broadcasting (shapes padded with leading 1s; each axis "
        "equal or 1, else MXNetError, as mxnet), recorded by ``mx.autograd``."
    )


# -- CTC loss -----------------------------------------------------------------------------------

#: the log of an impossible state in the CTC recursion (finite: its gradients stay 0, not NaN)
_CTC_NEG = -1e30


def _ctc_lengths(fn: str, arr: Any, n: int, what: str, upper: int, lower: int = 0) -> np.ndarray:
    """The ``(n,)`` integer lengths of ``arr`` (an array of any dtype), checked in
    ``[lower, upper]``."""
    v = np.asarray(arr).reshape(-1)
    if v.shape != (n,):
        raise _MXNetValueError(
            f"{fn}: {what} must have one entry per sequence ({n}), got {v.shape}"
        )
    k = np.trunc(v.astype(np.float64)).astype(np.int64)
    if (k < lower).any() or (k > upper).any():
        raise _MXNetValueError(f"{fn}: {what} must be in [{lower}, {upper}], got {k.tolist()}")
    return k


def ctc_tables(
    fn: str,
    labels: Any,
    shape: tuple[int, ...],
    data_lengths: Any,
    label_lengths: Any,
    blank_first: bool,
    dtype: Any,
) -> list[np.ndarray]:
    """The constant arrays of the CTC recursion for data of ``shape`` ``(T, N, C)`` and the label
    array ``labels`` ``(N, L)`` (mxnet 1.9.1's rules): the label of sequence ``n`` is its entries
    up to the first padding value (0 with the blank first, -1 with the blank last), or its first
    ``label_lengths[n]`` entries; its extended sequence interleaves blanks, ``S = 2 L_max + 1``.
    Returns ``[onehot (N, C, S), skip (N, S), step masks (T, N, 1), end (N, S), feasible (N,)]``:
    the class of each extended position, 0 where the transition from ``s - 2`` is allowed (else
    ``_CTC_NEG``), whether step ``t`` is within sequence ``n``'s data length, 0 at the last two
    positions of each extended label (else ``_CTC_NEG``), and whether a path exists at all (as
    warp-ctc, mxnet gives the loss 0 and no gradient to a label longer than its data allows)."""
    t_max, n, c = shape
    lab = np.asarray(labels)
    if lab.ndim != 2 or lab.shape[0] != n:
        raise _MXNetValueError(
            f"{fn}: the label must have shape (batch, max_label_length) = ({n}, L), got "
            f"{lab.shape} (mxnet: The number of dimensions of labels array must be 2)"
        )
    lab = np.trunc(lab.astype(np.float64)).astype(np.int64)
    blank = 0 if blank_first else c - 1
    pad = 0 if blank_first else -1
    if label_lengths is not None:
        lens = _ctc_lengths(fn, label_lengths, n, "label_lengths", lab.shape[1])
    else:
        hit = lab == pad
        lens = np.where(hit.any(1), hit.argmax(1), lab.shape[1])
    steps = (
        np.full(n, t_max, np.int64)
        if data_lengths is None
        else _ctc_lengths(fn, data_lengths, n, "data_lengths", t_max)
    )
    big = int(lens.max()) if n else 0
    s = 2 * big + 1
    ext = np.full((n, s), blank, np.int64)
    for i in range(n):
        seq = lab[i, : lens[i]]
        if ((seq < 0) | (seq >= c)).any():
            raise _MXNetValueError(
                f"{fn}: label values must be class indices in [0, {c}), got {seq.tolist()} "
                f"(sequence {i})"
            )
        ext[i, 1 : 2 * lens[i] : 2] = seq
    onehot = np.zeros((n, c, s), dtype)
    onehot[np.arange(n)[:, None], ext, np.arange(s)[None, :]] = 1
    skip = np.full((n, s), _CTC_NEG, dtype)
    same = np.zeros((n, s), bool)
    same[:, 2:] = ext[:, 2:] == ext[:, :-2]
    odd = (np.arange(s) % 2 == 1)[None, :]
    skip[odd & ~same & (np.arange(s)[None, :] >= 2)] = 0
    step_masks = (np.arange(t_max)[:, None] < steps[None, :])[:, :, None]
    end = np.full((n, s), _CTC_NEG, dtype)
    for i in range(n):
        end[i, 2 * lens[i]] = 0
        if lens[i]:
            end[i, 2 * lens[i] - 1] = 0
    repeats = np.array(
        [int(np.count_nonzero(np.diff(lab[i, : lens[i]]) == 0)) for i in range(n)], np.int64
    )
    feasible = lens + repeats <= steps
    return [onehot, skip, step_masks, end, feasible]


def ctc_native(x: NativeVariable, tables: list[NativeVariable]) -> NativeVariable:
    """``-log p(label | x)`` per sequence (shape ``(N,)``) of the activations ``x`` ``(T, N, C)``
    (a softmax over the classes at each step), by the CTC forward recursion in log space over
    the extended labels, composed of recorded gradhub functions (a ``LogSoftmax``, one batched
    matmul picking the classes, and per step a ``LogSumExp`` of the three predecessors), so its
    gradient (and that gradient's gradient) comes from their rules: for each step within the
    data length ``softmax(x) - posterior``, 0 after it. ``tables`` are :func:`ctc_tables`'s
    arrays as leaves."""
    onehot, skip, step_masks, end, feasible = tables
    t_max, n, _ = x.shape
    s = onehot.shape[2]
    logp = _call("LogSoftmax", x, axis=2)
    # (N, T, C) @ (N, C, S): the log-probability of each extended position's class at each step
    lp = _call("transpose", logp, axes=(1, 0, 2)) @ onehot
    dt = np.dtype(x.dtype)

    def const(a: np.ndarray) -> NativeVariable:
        return NativeVariable.leaf(x.device.asarray(np.ascontiguousarray(a, dtype=dt)), False)

    start = np.full((n, s), _CTC_NEG, dt)
    start[:, : min(2, s)] = 0
    neg1, neg2 = const(np.full((n, 1), _CTC_NEG)), const(np.full((n, 2), _CTC_NEG))

    def at(t: int) -> NativeVariable:
        y = _call("Slice", lp, start=(0, t, 0), stop=(n, t + 1, s), step=(1, 1, 1))
        return _call("Reshape", y, shape=(n, s))  # type: ignore[no-any-return]

    alpha = at(0) + const(start)
    for t in range(1, t_max):
        one = _call("concatenate", neg1, _slice_last(alpha, s - 1), axis=1) if s > 1 else neg1
        two = (
            _call("concatenate", neg2, _slice_last(alpha, s - 2), axis=1) + skip
            if s > 2
            else const(np.full((n, s), _CTC_NEG))
        )
        new = _call("LogSumExp", _call("Stack", alpha, one, two, axis=0), axis=0) + at(t)
        mask = _call("Slice", step_masks, start=(t, 0, 0), stop=(t + 1, n, 1), step=(1, 1, 1))
        alpha = _call("Where", _call("Reshape", mask, shape=(n, 1)), new, alpha)
    loss = -_call("LogSumExp", alpha + end, axis=1)
    return _call("Where", feasible, loss, const(np.zeros(n)))  # type: ignore[no-any-return]


def _slice_last(a: NativeVariable, k: int) -> NativeVariable:
    """The first ``k`` columns of the ``(N, S)`` array ``a``."""
    return _call("Slice", a, start=(0, 0), stop=(a.shape[0], k), step=(1, 1))  # type: ignore[no-any-return]


def CTCLoss(
    data: NDArray,
    label: NDArray,
    data_lengths: NDArray | None = None,
    label_lengths: NDArray | None = None,
    use_data_lengths: bool = False,
    use_label_lengths: bool = False,
    blank_label: str = "first",
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's connectionist temporal classification loss ``CTCLoss`` (``ctc_loss``,
    ``contrib.CTCLoss``): ``-log p(label | data)`` per sequence, shape ``(N,)``, for the
    unnormalized activations ``data`` of shape ``(T, N, C)`` (a softmax over the ``C`` classes at
    each step) and the labels ``label`` ``(N, L)``. ``blank_label="first"``: the blank is class 0
    and labels are padded with 0; ``"last"``: the blank is class ``C - 1`` and the padding -1. A
    label ends at its first padding value, or after ``label_lengths[n]`` entries with
    ``use_label_lengths``; with ``use_data_lengths`` sequence ``n`` has ``data_lengths[n]``
    steps (the later steps get no gradient). A label that no alignment fits (longer than its
    steps, counting a blank between repeated classes) has loss 0 and no gradient, as mxnet
    1.9.1. The forward recursion runs in log space with recorded functions, so the gradient
    (``softmax - posterior`` at each step, as mxnet's) is differentiable again.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x, label = mx.nd.ones((20, 2, 4)), mx.nd.array([[1, 2, 0], [3, 3, 1]])
        >>> mx.nd.CTCLoss(x, label).asnumpy().round(3)
        array([18.828, 16.506], dtype=float32)
    """
    fn = "mx.nd.CTCLoss"
    _nd("CTCLoss", data=data, label=label)
    _no_out("CTCLoss", out)
    if blank_label not in ("first", "last"):
        raise MXNetError(
            f"{fn}: Invalid Input: '{blank_label}', valid values are: {{'first', 'last'}}"
        )
    if data.ndim != 3:
        raise _MXNetValueError(
            f"{fn}: data must have shape (sequence_length, batch, alphabet_size), got {data.shape}"
        )
    if data._arr.dtype.kind != "f":
        raise TypeError(f"{fn}: data must have a floating dtype, got {data._arr.dtype.name}")
    dl = ll = None
    if use_data_lengths:
        if not isinstance(data_lengths, NDArray):
            raise _MXNetValueError(f"{fn}: use_data_lengths=True needs the NDArray data_lengths")
        dl = data_lengths.asnumpy()
    if use_label_lengths:
        if not isinstance(label_lengths, NDArray):
            raise _MXNetValueError(f"{fn}: use_label_lengths=True needs the NDArray label_lengths")
        ll = label_lengths.asnumpy()
    tables = ctc_tables(
        fn, label.asnumpy(), data.shape, dl, ll, blank_label == "first", data._arr.dtype
    )
    leaves = [_const(t, data) for t in tables]
    r, rec = _record([data], lambda x: ctc_native(x, leaves))
    return _result(r, rec, data)


ctc_loss = CTCLoss

#: ``mx.nd.contrib``'s names of the functions here (mxnet 1.x kept the CTC loss there too)
contrib = types.SimpleNamespace(CTCLoss=CTCLoss, ctc_loss=CTCLoss)
