"""gradhub-nn-ops: softmax, log-softmax and losses (nnabla names and conventions).

Losses are elementwise / per-sample, without reduction (as nnabla): take ``F.mean`` or ``F.sum``
of the result. ``softmax_cross_entropy`` is a primitive (it is on the training hot path) whose rule
is written with ``softmax``; the other losses are composed from registered functions.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from gradhub import Sample, as_variable, batching
from gradhub.ops import call

from .math import Shape, draw, floating_kernel, is_int, norm_axis, whole_numbers

# -- softmax / log_softmax -----------------------------------------------------------------------


@floating_kernel  # integer inputs in floating point, float16 in float32
def _softmax(xp: Any, x: Any, axis: Any = None) -> Any:
    ax = norm_axis("softmax", axis, x.ndim)
    if x.size == 0:
        return x.copy()
    e = xp.exp(x - x.max(axis=ax, keepdims=True))
    e /= e.sum(axis=ax, keepdims=True)
    return e


def _softmax_bw(
    gy: Sequence[Any],
    ins: Sequence[Any],
    in_shapes: Sequence[Shape],
    outs: Sequence[Any],
    out_shapes: Sequence[Shape],
    axis: Any = None,
) -> list[Any]:
    ax = norm_axis("softmax", axis, len(in_shapes[0]))
    y = outs[0]
    g = gy[0]
    return [y * (g - call("Sum", g * y, axis=ax, keepdims=True))]


def _softmax_fast(
    xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any, axis: Any = None
) -> list[Any]:
    ax = norm_axis("softmax", axis, len(xs[0]))
    yy, g = y[0], gy[0]
    return [yy * (g - (g * yy).sum(axis=ax, keepdims=True))]


@floating_kernel  # integer inputs in floating point, float16 in float32
def _log_softmax(xp: Any, x: Any, axis: Any = None) -> Any:
    ax = norm_axis("log_softmax", axis, x.ndim)
    if x.size == 0:
        return x.copy()
    z = x - x.max(axis=ax, keepdims=True)
    return z - xp.log(xp.exp(z).sum(axis=ax, keepdims=True))


def _log_softmax_bw(
    gy: Sequence[Any],
    ins: Sequence[Any],
    in_shapes: Sequence[Shape],
    outs: Sequence[Any],
    out_shapes: Sequence[Shape],
    axis: Any = None,
) -> list[Any]:
    ax = norm_axis("log_softmax", axis, len(in_shapes[0]))
    g = gy[0]
    return [g - call("Exp", outs[0]) * call("Sum", g, axis=ax, keepdims=True)]


def _log_softmax_fast(
    xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any, axis: Any = None
) -> list[Any]:
    ax = norm_axis("log_softmax", axis, len(xs[0]))
    g = gy[0]
    return [g - xp.exp(y[0]) * g.sum(axis=ax, keepdims=True)]


# -- softmax_cross_entropy -----------------------------------------------------------------------


def _label_shape(x_shape: Shape, ax: int) -> Shape:
    return tuple(1 if i == ax else n for i, n in enumerate(x_shape))


def _check_target(x_shape: Shape, t_shape: Shape, ax: int) -> None:
    kshape = _label_shape(x_shape, ax)
    squeezed = x_shape[:ax] + x_shape[ax + 1 :]
    if tuple(t_shape) not in (kshape, squeezed):
        raise ValueError(
            f"softmax_cross_entropy(): argument 'target' has shape {tuple(t_shape)}; for x of "
            f"shape {tuple(x_shape)} and axis {ax} it must have shape {kshape} (as nnabla) or "
            f"{squeezed}"
        )


def _labels(xp: Any, x: Any, target: Any, ax: int) -> Any:
    """The labels as an integer array of x's shape with size 1 at ``ax``, checked in range."""
    _check_target(x.shape, target.shape, ax)
    target = whole_numbers(xp, "softmax_cross_entropy(): argument 'target'", target, "labels")
    lab = target.reshape(_label_shape(x.shape, ax))
    n = x.shape[ax]
    if lab.size and int(_unsigned(lab).max()) >= n:  # (a negative label: a large unsigned one)
        raise ValueError(
            f"softmax_cross_entropy(): argument 'target' holds labels outside "
            f"[0, {n}) (min {int(lab.min())}, max {int(lab.max())})"
        )
    return lab


def _unsigned(a: Any) -> Any:
    """The integer array ``a`` viewed as unsigned integers of its size (negative values become
    ones above every valid label), so that one reduction checks both ends of a range."""
    if a.dtype.kind != "i":
        return a
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


#: the widest class axis, and the fewest rows, for which :func:`_class_max` reduces a contiguous
#: transposed copy: numpy reduces along a short contiguous axis row by row (128 x 10 float32:
#: 8.7 us against 5.1 us; 1024 x 10: 51 against 11 us; equal at 64 classes, 8 rows)
_NARROW_CLASSES = 32
_NARROW_MIN_ROWS = 32


def _class_max(xp: Any, x: Any, ax: int) -> Any:
    """``x.max(axis=ax, keepdims=True)`` (the same numbers: a maximum does not depend on the
    order of its operands)."""
    if (
        xp is np
        and x.ndim == 2
        and ax == 1
        and x.shape[1] <= _NARROW_CLASSES
        and x.shape[0] >= _NARROW_MIN_ROWS
    ):
        return np.ascontiguousarray(x.T).max(axis=0)[:, None]
    return x.max(axis=ax, keepdims=True)


@floating_kernel  # integer inputs in floating point, float16 in float32
def _sce(xp: Any, x: Any, target: Any, axis: Any = None) -> Any:
    ax = norm_axis("softmax_cross_entropy", axis, x.ndim)
    lab = _labels(xp, x, target, ax)
    if x.size == 0:
        return xp.zeros(target.shape, dtype=x.dtype)
    z = x - _class_max(xp, x, ax)
    lse = xp.log(xp.exp(z).sum(axis=ax, keepdims=True))
    if x.ndim == 2 and ax == 1:  # the (N, C) case: plain fancy indexing is the cheapest
        loss = lse[:, 0] - z[xp.arange(x.shape[0]), lab[:, 0]]
    else:
        loss = lse - xp.take_along_axis(z, lab, axis=ax)
    return loss.reshape(target.shape)


def _sce_bw(
    gy: Sequence[Any],
    ins: Sequence[Any],
    in_shapes: Sequence[Shape],
    outs: Sequence[Any],
    out_shapes: Sequence[Shape],
    axis: Any = None,
) -> list[Any]:
    x, t = ins
    shape = tuple(in_shapes[0])
    ax = norm_axis("softmax_cross_entropy", axis, len(shape))
    kshape = _label_shape(shape, ax)
    g = gy[0] if tuple(gy[0].shape) == kshape else call("Reshape", gy[0], shape=kshape)
    tk = t if tuple(t.shape) == kshape else call("Reshape", t, shape=kshape)
    # one-hot of the labels: a comparison with the class indices (a constant of x's dtype)
    iota = x.device.xp.arange(shape[ax], dtype=x.dtype).reshape(
        tuple(n if i == ax else 1 for i, n in enumerate(shape))
    )
    onehot = call("Equal", tk, as_variable(iota))
    return [g * (call("Softmax", x, axis=ax) - onehot), None]


def _sce_fast(xp: Any, gy: Any, x: Any, xs: Any, y: Any, ys: Any, axis: Any = None) -> list[Any]:
    xx, t = x
    ax = norm_axis("softmax_cross_entropy", axis, xx.ndim)
    kshape = _label_shape(xx.shape, ax)
    lab = t.reshape(kshape)
    if lab.dtype.kind == "f":
        lab = lab.astype(xp.int64)
    p = xp.exp(xx - _class_max(xp, xx, ax))
    p /= p.sum(axis=ax, keepdims=True)
    # subtract 1 at the labels
    if xx.ndim == 2 and ax == 1:
        p[xp.arange(xx.shape[0]), lab[:, 0]] -= 1
    else:
        classes = xp.arange(xx.shape[ax]).reshape([-1 if i == ax else 1 for i in range(xx.ndim)])
        p -= lab == classes
    p *= gy[0].reshape(kshape)
    return [p, None]


# -- composite losses ----------------------------------------------------------------------------


def _same_shape(fname: str, a: Any, b: Any, names: tuple[str, str]) -> tuple[Any, Any]:
    """``a`` and ``b`` as Variables, checked to have the same shape.

    The elementwise losses do not broadcast (as chainer, and as PyTorch's BCE): a prediction of
    shape (N, 1) against a target of shape (N,) would silently give an (N, N) loss. Broadcast
    explicitly with ``F.broadcast`` when that is meant.
    """
    for v, arg in zip((a, b), names):
        if v is None:
            raise TypeError(f"{fname}(): argument '{arg}' must not be None")
    a, b = as_variable(a), as_variable(b)
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(
            f"{fname}(): arguments '{names[0]}' and '{names[1]}' must have the same shape (the "
            f"elementwise losses do not broadcast; use F.broadcast to do it explicitly), got "
            f"{names[0]} {tuple(a.shape)} and {names[1]} {tuple(b.shape)}"
        )
    return a, b


def _prob_pair(fname: str, x: Any, target: Any) -> tuple[Any, Any]:
    """``x`` and ``target`` as Variables of the same shape, the target of a floating dtype.

    Integer and boolean targets (labels, as nnabla accepts them) are cast to x's dtype by a
    recorded Cast (no gradient flows to them); the shapes must be equal (no broadcasting, as
    nnabla and PyTorch).
    """
    x, t = _same_shape(fname, x, target, ("x", "target"))
    if t.dtype.kind in "iub":
        dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
        t = call("Cast", t, dtype=dtype.name)
    elif t.dtype.kind != "f":
        raise TypeError(
            f"{fname}(): argument 'target' must hold probabilities or 0/1 labels "
            f"(a floating, integer or boolean dtype), got dtype {t.dtype}"
        )
    return x, t


def sigmoid_cross_entropy(x: Any, target: Any) -> Any:
    """sigmoid_cross_entropy(x, target): the elementwise cross entropy of ``sigmoid(x)`` (nnabla).

    :math:`y = -(t \\ln \\sigma(x) + (1 - t) \\ln(1 - \\sigma(x))) = \\mathrm{softplus}(x) - t x`,
    computed in that stable form; ``x`` are logits, ``target`` probabilities (usually 0 or 1) of
    x's shape (no broadcasting, as nnabla). Integer or boolean targets (labels) are cast to x's
    dtype. No reduction. Gradients :math:`\\sigma(x) - t` w.r.t. x and :math:`-x` w.r.t. a
    floating target (none for labels).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.sigmoid_cross_entropy(gh.Variable([0.0, 100.0]), gh.Variable([1.0, 1.0])).d
        array([0.6931472, 0.       ], dtype=float32)
    """
    x, t = _prob_pair("sigmoid_cross_entropy", x, target)
    return call("Softplus", x) - x * t


def binary_cross_entropy(x: Any, target: Any) -> Any:
    """binary_cross_entropy(x, target): the elementwise cross entropy of probabilities (nnabla).

    As nnabla, with each logarithm's argument clamped at :math:`\\epsilon`, the smallest normal
    number of x's dtype (``numpy.finfo(dtype).tiny``: about 1.2e-38 in float32, so a clamped log
    is about -87.3; 2.2e-308 in float64, about -708.4):

    .. math:: y = -(t \\ln \\max(x, \\epsilon) + (1 - t) \\ln \\max(1 - x, \\epsilon))

    The second logarithm is computed as :math:`\\max(\\mathrm{log1p}(-x), \\ln \\epsilon)`, so
    it keeps its precision for small ``x`` (``1 - x`` is not rounded first), as PyTorch.

    ``x`` are probabilities in [0, 1] (e.g. a sigmoid that may round to exactly 0 or 1; a value
    outside [0, 1] raises a ValueError, as PyTorch; NaN propagates),
    ``target`` probabilities (usually 0 or 1) of x's shape (no broadcasting, as nnabla); integer
    or boolean targets (labels) are cast to x's dtype. A perfect prediction (``x == t`` in
    {0, 1}) gives loss 0 and the finite gradient of its unclamped term (1 at ``x = t = 0``, -1
    at ``x = t = 1``); a term whose weight is 0 (``t == 0`` or ``t == 1``) contributes exactly 0
    at every order (never ``0 * inf``). No reduction.

    Gradient w.r.t. x: :math:`-t / x + (1 - t) / (1 - x)` (:math:`= (x - t) / (x (1 - x))`)
    where both arguments are at least :math:`\\epsilon`; inside the clamped region
    (:math:`x < \\epsilon` or :math:`1 - x < \\epsilon`) that log is a constant, so its part of
    the gradient w.r.t. x is 0 (use ``sigmoid_cross_entropy`` on logits to keep a gradient
    there). W.r.t. a floating target:
    :math:`\\ln \\max(1 - x, \\epsilon) - \\ln \\max(x, \\epsilon)` (none for labels).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.binary_cross_entropy(gh.Variable([0.5, 0.9]), gh.Variable([1.0, 0.0])).d
        array([0.6931472, 2.302585 ], dtype=float32)
        >>> F.binary_cross_entropy(gh.Variable([0.0, 1.0]), gh.Variable([0.0, 1.0])).d
        array([0., 0.], dtype=float32)
    """
    x, t = _prob_pair("binary_cross_entropy", x, target)
    # (inside vmap and jacrev: the values of the whole batch)
    d = batching.base(x).d if isinstance(x, batching.BatchedVariable) else x.d
    if d.size and bool(((d < 0) | (d > 1)).any()):  # NaN fails both tests: it propagates
        bad = d[(d < 0) | (d > 1)].reshape(-1)[0]
        raise ValueError(
            f"binary_cross_entropy(): argument 'x' must hold probabilities in "
            f"[0, 1] (apply F.sigmoid to logits, or use sigmoid_cross_entropy), "
            f"got the value {float(bad)}"
        )
    tiny = (
        float(np.finfo(x.dtype).tiny) if x.dtype.kind == "f" else float(np.finfo(np.float32).tiny)
    )
    lp = call("Log", call("MaximumScalar", x, val=tiny))  # ln max(x, eps)
    # ln max(1 - x, eps) = max(log1p(-x), ln eps): log1p, as 1 - x rounds (loss 0 at x = 1e-8 in
    # float32). For x in [0, 1], 1 - x >= eps except at x = 1 exactly (the smallest non-zero
    # 1 - x is about ulp(1)), so the clamp is: ln eps and no gradient at x = 1, where Log1p gets
    # 0 (a masked x) so that no order of its rule divides by 0. NaN fails both masks: propagates.
    below = call("LessScalar", x, val=1.0)  # constant masks
    ln = call("Log1p", -(x * below)) + call(
        "MulScalar", call("GreaterEqualScalar", x, val=1.0), val=math.log(tiny)
    )
    # t * ln(x) and (1 - t) * ln(1 - x) as products, so that a zero weight kills its clamped
    # (finite) log cleanly; written -(a) - b so that a perfect prediction gives +0, not -0
    return -(t * lp) - call("RSubScalar", t, val=1.0) * ln


def squared_error(x0: Any, x1: Any) -> Any:
    """squared_error(x0, x1): elementwise :math:`y = (x_0 - x_1)^2` (nnabla).

    ``x0`` and ``x1`` must have the same shape: the elementwise losses do not broadcast (a
    prediction of shape (N, 1) against targets of shape (N,) would silently give an (N, N)
    loss); broadcast explicitly with ``F.broadcast`` when that is meant.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.squared_error(gh.Variable([1.0, 2.0]), gh.Variable([3.0, 2.0])).d
        array([4., 0.], dtype=float32)
    """
    x0, x1 = _same_shape("squared_error", x0, x1, ("x0", "x1"))
    d = call("Sub2", x0, x1)
    return d * d


def absolute_error(x0: Any, x1: Any) -> Any:
    r"""absolute_error(x0, x1): elementwise :math:`y = |x_0 - x_1|` (nnabla).

    ``x0`` and ``x1`` must have the same shape (no broadcasting, as ``squared_error``). Composed
    as ``abs(x0 - x1)``: the gradient w.r.t. x0 is :math:`\operatorname{sign}(x_0 - x_1)`, 0
    where the two are equal (as PyTorch's ``l1_loss``).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.absolute_error(gh.Variable([1.0, 2.0]), gh.Variable([3.0, 2.0])).d
        array([2., 0.], dtype=float32)
    """
    x0, x1 = _same_shape("absolute_error", x0, x1, ("x0", "x1"))
    return call("Abs", call("Sub2", x0, x1))


def epsilon_insensitive_loss(x0: Any, x1: Any, epsilon: float = 0.0) -> Any:
    r"""epsilon_insensitive_loss(x0, x1, epsilon): elementwise
    :math:`y = \max(|x_0 - x_1| - \epsilon, 0)` (nnabla ``F.epsilon_insensitive_loss``; the loss
    of support vector regression).

    ``x0`` and ``x1`` must have the same shape. Composed as ``relu(abs(x0 - x1) - epsilon)``: the
    gradient w.r.t. x0 is :math:`\operatorname{sign}(x_0 - x_1)` where
    :math:`|x_0 - x_1| > \epsilon`, else 0 (also at :math:`|x_0 - x_1| = \epsilon`, as
    nnabla's).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.epsilon_insensitive_loss(gh.Variable([1.0, 2.0]), gh.Variable([3.0, 2.2]), 0.5).d
        array([1.5, 0. ], dtype=float32)
    """
    x0, x1 = _same_shape("epsilon_insensitive_loss", x0, x1, ("x0", "x1"))
    d = call("Abs", call("Sub2", x0, x1))
    return call("ReLU", call("AddScalar", d, val=-float(epsilon)))


def _eil_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for eps in (0.5, 0.0):
        x1 = rng.uniform(-2, 2, (2, 3))
        d = draw(rng, (2, 3), -3, 3, avoid=(-eps, eps) if eps else (0.0,))
        yield Sample((x1 + d, x1), {"epsilon": eps}, name=f"epsilon={eps}")
    yield Sample((np.zeros((0, 2)), np.zeros((0, 2))), {"epsilon": 0.1}, name="size-0")


def _eil_ref(x0: np.ndarray, x1: np.ndarray, epsilon: float = 0.0) -> np.ndarray:
    return np.maximum(np.abs(x0 - x1) - epsilon, 0.0)


_KL_EPS = 1e-8  # nnabla's clamp of p and q inside the logarithms


def kl_multinomial(p: Any, q: Any, base_axis: int = 1) -> Any:
    r"""kl_multinomial(p, q, base_axis=1): the Kullback-Leibler divergence of multinomial
    (categorical) distributions, as nnabla.

    :math:`D = \sum_i p_i \left(\ln \max(p_i, \epsilon) - \ln \max(q_i, \epsilon)\right)`
    with :math:`\epsilon = 10^{-8}` (nnabla's clamp; the smallest normal number in float16),
    summed over the axes from ``base_axis`` on (the axes before it are sample axes). The result
    has shape ``p.shape[:base_axis] + (1,)``. ``p`` and ``q`` must have the same shape. Where
    :math:`p_i = 0` the term is 0. Gradients: :math:`\ln p_i + 1 - \ln q_i` w.r.t. p and
    :math:`-p_i / q_i` w.r.t. q; where :math:`p_i < \epsilon` the clamp is constant, so p's
    gradient there is :math:`\ln \epsilon - \ln q_i` (nnabla's rule adds 1 there too), and
    where :math:`q_i < \epsilon` q's gradient is 0.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.kl_multinomial(gh.Variable([[0.5, 0.5]]), gh.Variable([[0.5, 0.5]])).d
        array([[0.]], dtype=float32)
    """
    p, q = _same_shape("kl_multinomial", p, q, ("p", "q"))
    nd = len(p.shape)
    if not is_int(base_axis) or not 0 <= base_axis <= nd:
        raise ValueError(
            f"kl_multinomial(): argument 'base_axis' must be an int in [0, {nd}] "
            f"for p of shape {tuple(p.shape)}, got {base_axis!r}"
        )
    dt = np.dtype(p.dtype)
    eps = max(_KL_EPS, float(np.finfo(dt).tiny)) if dt.kind == "f" else _KL_EPS
    d = call(
        "Sub2",
        call("Log", call("MaximumScalar", p, val=eps)),
        call("Log", call("MaximumScalar", q, val=eps)),
    )
    axes = tuple(range(int(base_axis), nd))
    s = call("Sum", p * d, axis=axes, keepdims=False) if axes else p * d
    return call("Reshape", s, shape=(*p.shape[:base_axis], 1))


def huber_loss(x0: Any, x1: Any, delta: float = 1.0) -> Any:
    """huber_loss(x0, x1, delta=1.0): the elementwise Huber loss, as nnabla defines it.

    With :math:`d = x_0 - x_1`: :math:`y = d^2` for :math:`|d| < \\delta`, else
    :math:`\\delta (2|d| - \\delta)` (nnabla's scaling: twice the textbook Huber loss). Composed as
    :math:`c (2d - c)` with :math:`c = \\mathrm{clip}(d, -\\delta, \\delta)`, which is smooth at
    :math:`d = 0`; the second derivative jumps at :math:`|d| = \\delta`. ``x0`` and ``x1`` must
    have the same shape (no broadcasting, as the other elementwise losses).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.huber_loss(gh.Variable([0.5, 3.0]), gh.Variable([0.0, 0.0])).d
        array([0.25, 5.  ], dtype=float32)
    """
    if not isinstance(delta, (int, float, np.integer, np.floating)) or not delta > 0:
        raise ValueError(f"huber_loss(): argument 'delta' must be a positive number, got {delta!r}")
    x0, x1 = _same_shape("huber_loss", x0, x1, ("x0", "x1"))
    d = call("Sub2", x0, x1)
    c = call("Clip", d, min=-float(delta), max=float(delta))
    return c * (call("MulScalar", d, val=2.0) - c)


# -- samples and references ----------------------------------------------------------------------


def _softmax_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.uniform(-2, 2, (2, 4)),), {}, name="default axis")
    yield Sample((rng.uniform(-2, 2, (2, 3, 2)),), {"axis": 1}, name="axis=1")
    yield Sample((rng.uniform(-2, 2, (3, 2)).T,), {"axis": 0}, name="transposed")
    yield Sample((rng.uniform(-2, 2, (4,)) + 300.0,), {"axis": -1}, name="large values")
    yield Sample((rng.uniform(-2, 2, (0, 3)),), {}, name="size-0")


def _np_softmax(x: np.ndarray, axis: Any) -> np.ndarray:
    ax = x.ndim - 1 if axis is None else axis
    e = np.exp(x - np.max(x, axis=ax, keepdims=True)) if x.size else x
    return e / np.sum(e, axis=ax, keepdims=True) if x.size else x


def _np_log_softmax(x: np.ndarray, axis: Any = None) -> np.ndarray:
    ax = x.ndim - 1 if axis is None else axis
    if not x.size:
        return x
    m = np.max(x, axis=ax, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=ax, keepdims=True))


def _sce_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.uniform(-2, 2, (3, 4)), rng.integers(0, 4, (3, 1))), name="(N,C), (N,1)")
    yield Sample((rng.uniform(-2, 2, (3, 4)), rng.integers(0, 4, (3,))), name="(N,C), (N,)")
    yield Sample(
        (rng.uniform(-2, 2, (2, 3, 2)), rng.integers(0, 3, (2, 1, 2))),
        {"axis": 1},
        name="(N,C,H), axis=1",
    )
    yield Sample(
        (rng.uniform(-2, 2, (4, 3)).T, rng.integers(0, 4, (3, 1)).astype(np.int32)),
        name="transposed, int32 labels",
    )
    yield Sample((rng.uniform(-2, 2, (0, 3)), np.zeros((0, 1), dtype=np.int64)), name="size-0")


def _sce_ref(x: np.ndarray, t: np.ndarray, axis: Any = None) -> np.ndarray:
    ax = x.ndim - 1 if axis is None else axis
    lp = _np_log_softmax(x, ax)
    lab = np.asarray(t).reshape(tuple(1 if i == ax else n for i, n in enumerate(x.shape)))
    picked = np.take_along_axis(lp, lab.astype(np.int64), axis=ax) if x.size else lab * 0.0
    return (-picked).reshape(np.shape(t))


def _prob_samples(logits: bool) -> Any:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        def x_of(shape: Shape) -> np.ndarray:
            return draw(rng, shape, -3, 3) if logits else rng.uniform(0.1, 0.9, shape)

        yield Sample(
            (x_of((2, 3)), rng.integers(0, 2, (2, 3)).astype(np.float64)),
            grad_inputs=(0,),
            name="0/1 targets",
        )
        yield Sample((x_of((2, 3)), rng.uniform(0, 1, (2, 3))), name="soft targets")
        yield Sample((x_of(()), np.asarray(1.0)), grad_inputs=(0,), name="0-d")
        yield Sample((x_of((3, 2)).T, rng.uniform(0, 1, (2, 3))), name="transposed")
        yield Sample((x_of((0, 2)), rng.uniform(0, 1, (0, 2))), name="size-0")
        yield Sample(
            (x_of((2, 3)), rng.integers(0, 2, (2, 3))), grad_inputs=(0,), name="int64 labels"
        )
        yield Sample(
            (x_of((3,)), np.array([True, False, True])), grad_inputs=(0,), name="bool labels"
        )
        if not logits:  # the clamped logs at x = 0 and 1 (nnabla); linear in t
            yield Sample(
                (np.array([0.0, 1.0, 0.0, 1.0]), np.array([0.0, 1.0, 1.0, 0.0])),
                grad_inputs=(1,),
                name="x at 0 and 1 (clamped)",
            )

    return samples


def _sigmoid_ce_ref(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    p = 1.0 / (1.0 + np.exp(-x))
    return -(t * np.log(p) + (1 - t) * np.log(1 - p))


def _bce_ref(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    tiny = np.finfo(np.float64).tiny
    with np.errstate(divide="ignore"):
        lx = np.log(np.maximum(x, tiny))
        l1 = np.maximum(np.log1p(-x), np.log(tiny))
    return -(t * lx + (1 - t) * l1)


def _pair_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, (2, 3))), name="(2,3)")
    yield Sample((rng.uniform(-2, 2, ()), rng.uniform(-2, 2, ())), name="0-d")
    yield Sample((rng.uniform(-2, 2, (3, 2)).T, rng.uniform(-2, 2, (2, 3))), name="transposed")
    yield Sample((rng.uniform(-2, 2, (0, 2)), rng.uniform(-2, 2, (0, 2))), name="size-0")


def _kl_samples(rng: np.random.Generator) -> Iterator[Sample]:
    def probs(shape: tuple[int, ...]) -> np.ndarray:
        a = rng.uniform(0.2, 1.0, shape)
        return a / a.sum(axis=-1, keepdims=True)

    yield Sample((probs((2, 3)), probs((2, 3))), name="(2,3)")
    yield Sample((probs((2, 2, 3)), probs((2, 2, 3))), {"base_axis": 2}, name="base_axis=2")
    yield Sample((probs((4,)), probs((4,))), {"base_axis": 0}, name="base_axis=0")


def _kl_ref(p: np.ndarray, q: np.ndarray, base_axis: int = 1) -> np.ndarray:
    d = p * (np.log(np.maximum(p, _KL_EPS)) - np.log(np.maximum(q, _KL_EPS)))
    return d.reshape(*p.shape[:base_axis], -1).sum(axis=-1)[..., None]


def _huber_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for delta in (1.0, 0.5):
        x1 = rng.uniform(-2, 2, (2, 3))
        d = draw(rng, (2, 3), -3, 3, avoid=(-delta, delta))
        yield Sample((x1 + d, x1), {"delta": delta}, name=f"delta={delta}")
    yield Sample((np.asarray(0.3), np.asarray(0.0)), name="0-d")
    yield Sample((np.zeros((0, 2)), np.zeros((0, 2))), name="size-0")


def _huber_ref(x0: np.ndarray, x1: np.ndarray, delta: float = 1.0) -> np.ndarray:
    d = np.abs(x0 - x1)
    return np.where(d < delta, d * d, delta * (2 * d - delta))


# -- registration --------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register softmax, log_softmax and the losses."""
    f = register.function
    f(
        "Softmax",
        _softmax,
        attrs={"axis": None},
        rule=_softmax_bw,
        fast_backward=_softmax_fast,
        need_inputs=(),
        need_outputs=(0,),
        samples=_softmax_samples,
        reference=lambda x, axis=None: _np_softmax(x, axis),
        doc=r"""softmax(x, axis=None): :math:`y_i = e^{x_i} / \sum_j e^{x_j}` along ``axis``.

    ``axis=None`` means the last axis (nnabla). Computed with the maximum subtracted, so large
    inputs do not overflow. Gradient :math:`y \odot (g - \sum_j g_j y_j)`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.softmax(gh.Variable([[0.0, 0.0], [1000.0, 1000.0]])).d
        array([[0.5, 0.5],
               [0.5, 0.5]], dtype=float32)
    """,
    )
    f(
        "LogSoftmax",
        _log_softmax,
        attrs={"axis": None},
        rule=_log_softmax_bw,
        fast_backward=_log_softmax_fast,
        need_inputs=(),
        need_outputs=(0,),
        samples=_softmax_samples,
        reference=_np_log_softmax,
        doc=r"""log_softmax(x, axis=None): :math:`y_i = x_i - \ln\sum_j e^{x_j}` along ``axis``.

    ``axis=None`` means the last axis (nnabla). Stable for large inputs. Gradient
    :math:`g - e^{y} \sum_j g_j`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.log_softmax(gh.Variable([0.0, 0.0])).d
        array([-0.6931472, -0.6931472], dtype=float32)
    """,
    )
    f(
        "SoftmaxCrossEntropy",
        _sce,
        inputs=("x", "target"),
        attrs={"axis": None},
        rule=_sce_bw,
        fast_backward=_sce_fast,
        need_inputs=(0, 1),
        need_outputs=(),
        samples=_sce_samples,
        reference=_sce_ref,
        doc=r"""softmax_cross_entropy(x, target, axis=None): per-sample cross entropy of
    ``softmax(x)`` with integer labels, as nnabla.

    :math:`y = -\ln \mathrm{softmax}(x)_{t} = \ln\sum_j e^{x_j} - x_t` along ``axis`` (the last
    axis when None). ``target`` holds integer labels in ``[0, x.shape[axis])`` (integer dtype, or
    floats holding whole numbers, as nnabla; 1.9, -0.5, NaN or a bool dtype raise) with x's shape
    and size 1 at ``axis`` (e.g. ``(N, 1)`` for x of shape ``(N, C)``); the loss has the
    target's shape. A target without the axis (``(N,)``) is accepted too. No reduction.
    Gradient :math:`\mathrm{softmax}(x) - \mathrm{onehot}(t)` w.r.t. x; none w.r.t. the labels.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> x = gh.Variable([[0.0, 0.0], [0.0, 100.0]])
        >>> t = gh.Variable([[1], [1]], need_grad=False)
        >>> F.softmax_cross_entropy(x, t).d
        array([[0.6931472],
               [0.       ]], dtype=float32)
    """,
    )
    c = register.composite
    c(
        "SigmoidCrossEntropy",
        sigmoid_cross_entropy,
        elementwise=True,
        samples=_prob_samples(logits=True),
        reference=_sigmoid_ce_ref,
    )
    c(
        "BinaryCrossEntropy",
        binary_cross_entropy,
        elementwise=True,
        samples=_prob_samples(logits=False),
        reference=_bce_ref,
    )
    c(
        "SquaredError",
        squared_error,
        elementwise=True,
        samples=_pair_samples,
        reference=lambda x0, x1: (x0 - x1) ** 2,
    )
    c("HuberLoss", huber_loss, elementwise=True, samples=_huber_samples, reference=_huber_ref)
    c(
        "EpsilonInsensitiveLoss",
        epsilon_insensitive_loss,
        elementwise=True,
        samples=_eil_samples,
        reference=_eil_ref,
    )
    c(
        "AbsoluteError",
        absolute_error,
        elementwise=True,
        kinks=(0.0,),
        samples=_pair_samples,
        reference=lambda x0, x1: np.abs(x0 - x1),
    )
    c(
        "KLMultinomial",
        kl_multinomial,
        snake="kl_multinomial",
        samples=_kl_samples,
        reference=_kl_ref,
    )
