"""gradhub-nn-ops: normalization (nnabla semantics).

* ``BatchNormalization`` is a primitive: in training mode (``batch_stat=True``) its forward kernel
  also updates the running ``mean``/``variance`` arrays in place, so re-executing a graph
  (``y.forward()``, nnabla's static style) updates them again, as in nnabla. Its backward rule is
  written with registered functions (differentiable to any order).
* ``FusedBatchNormalization`` (nnabla's ``relu(BN(x) + z)`` as one function) is a primitive too:
  its kernel is batch normalization's (running statistics included), its rule masks the
  incoming gradient with the output and goes on with batch normalization's rule.
* ``LayerNormalization`` is a composite of registered functions (no rule of its own), and so
  are ``InstanceNormalization`` and ``GroupNormalization`` (layer normalization over the right
  axes, after a reshape for the groups).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from gradhub import Sample
from gradhub.memory import output_array

from .math import broadcasts_to, float_input, float_variable, is_int, is_scalar

# -- helpers -----------------------------------------------------------------------------------


def _norm_axes(fname: str, arg: str, axes: Any, ndim: int) -> tuple[int, ...]:
    if isinstance(axes, (int, np.integer)):
        axes = (int(axes),)
    try:
        vals = [int(a) for a in axes]
    except (TypeError, ValueError):
        raise TypeError(
            f"{fname}(): {arg} must be an int or a sequence of ints, got {axes!r}"
        ) from None
    out = []
    for a in vals:
        if not -ndim <= a < ndim:
            raise ValueError(f"{fname}(): {arg} {axes!r} is out of range for x with {ndim} axes")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}(): {arg} {axes!r} repeats an axis")
    return tuple(sorted(out))


def _call(name: str, *args: Any, **attrs: Any) -> Any:
    from gradhub.ops import call

    return call(name, *args, **attrs)


def _mean(v: Any, axes: tuple[int, ...]) -> Any:
    """Differentiable mean over ``axes``, kept as size-1 axes (the Mean function, whose count
    follows the shape when ``forward()`` re-runs the graph on another batch size)."""
    return _call("Mean", v, axis=axes, keepdims=True)


# -- BatchNormalization ------------------------------------------------------------------------


def _bn_geometry(
    x_shape: Sequence[int], axes: Any, fname: str = "batch_normalization"
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int]:
    """(axes, reduced axes, parameter shape, number of reduced elements)."""
    nd = len(x_shape)
    ax = _norm_axes(fname, "axes", axes, nd)
    red = tuple(i for i in range(nd) if i not in ax)
    pshape = tuple(int(x_shape[i]) if i in ax else 1 for i in range(nd))
    n = math.prod(int(x_shape[i]) for i in red)
    return ax, red, pshape, n


def _update_running(
    xp: Any, arr: Any, batch: Any, decay_rate: float, name: str, fname: str
) -> None:
    if not getattr(getattr(arr, "flags", None), "writeable", True):
        raise ValueError(
            f"{fname}(): the running {name} array is read-only; pass a writable "
            "array (the running statistics are updated in place when batch_stat=True)"
        )
    arr[...] = decay_rate * arr + (1.0 - decay_rate) * batch


def _batch_normalization(
    xp: Any,
    x: Any,
    beta: Any,
    gamma: Any,
    mean: Any,
    variance: Any,
    axes: Any = (1,),
    decay_rate: float = 0.9,
    eps: float = 1e-5,
    batch_stat: bool = True,
) -> Any:
    return normalize(
        xp, "batch_normalization", x, beta, gamma, mean, variance, axes, decay_rate, eps, batch_stat
    )


#: ``moments(xp, x, reduced_axes, n) -> (mean, x - mean, variance, count)``: the batch statistics
#: of a batch normalization over ``reduced_axes`` (``n`` elements in this process), kept as size-1
#: axes, and the number of values they were taken over
Moments = Callable[[Any, Any, tuple[int, ...], int], tuple[Any, Any, Any, int]]


def local_moments(xp: Any, x: Any, red: tuple[int, ...], n: int) -> tuple[Any, Any, Any, int]:
    """The batch statistics of ``x`` over the axes ``red`` in this process (see ``Moments``)."""
    m = x.mean(axis=red, keepdims=True)
    xc = _centered(xp, x, m)
    return m, xc, _mean_square(xp, xc, red), n


#: ``combine(xp, x, mean, var, n) -> (mean, var, count)``: a ``Moments`` function's attribute
#: ``combine``, for the compiled kernels: this process's per-channel mean and biased variance of
#: ``x`` (float64 vectors, over ``n`` values each) to those of the normalization (over ``count``
#: values), by the same collectives as the ``Moments`` function itself
Combine = Callable[[Any, Any, Any, Any, int], tuple[Any, Any, int]]


def _this_process(xp: Any, x: Any, mean: Any, var: Any, n: int) -> tuple[Any, Any, int]:
    """``local_moments``' ``Combine``: the statistics of this process are the normalization's."""
    return mean, var, n


def _combine_of(moments: Moments) -> Combine | None:
    """The ``Combine`` of ``moments`` (None: it has none; the numpy kernels serve it)."""
    if moments is local_moments:
        return _this_process
    return getattr(moments, "combine", None)


def _centered(xp: Any, x: Any, m: Any) -> Any:
    """``x - m`` into an array of gradhub.memory's (no fresh pages for a large one)."""
    return xp.subtract(x, m, out=output_array(xp, x.shape, np.result_type(x.dtype, m.dtype)))


def _mean_square(xp: Any, xc: Any, red: tuple[int, ...]) -> Any:
    """The mean of ``xc * xc`` over ``red`` (kept axes), the squares in a reused array."""
    sq = xp.multiply(xc, xc, out=output_array(xp, xc.shape, xc.dtype))
    return sq.mean(axis=red, keepdims=True)


def normalize(
    xp: Any,
    fname: str,
    x: Any,
    beta: Any,
    gamma: Any,
    mean: Any,
    variance: Any,
    axes: Any,
    decay_rate: float,
    eps: float,
    batch_stat: bool,
    moments: Moments = local_moments,
) -> Any:
    """The kernel of a batch normalization (``fname`` in its errors), its batch statistics taken by
    ``moments``; in training (``batch_stat``) the running ``mean`` and ``variance`` are updated in
    place, the variance unbiased by the count ``moments`` returns (``n / (n - 1)``)."""
    ax, red, pshape, n = _bn_geometry(x.shape, axes, fname)
    for name, p in (("beta", beta), ("gamma", gamma), ("mean", mean), ("variance", variance)):
        if tuple(p.shape) != pshape:
            raise ValueError(
                f"{fname}(): {name} must have shape {pshape} (x's size on axes "
                f"{ax}, 1 elsewhere), got {tuple(p.shape)}"
            )
    _check_settings(eps, decay_rate, fname)
    x = float_input(x)
    # float16: the statistics and the normalization are computed in float32 (a float16 variance
    # overflows past 65504), the result cast to the dtype the float16 formula gives
    out_dtype = np.result_type(x.dtype, beta.dtype, gamma.dtype) if x.dtype == np.float16 else None
    if out_dtype is not None:
        x = x.astype(np.float32)
    elif (not batch_stat or _combine_of(moments) is not None) and _bn_native(
        xp, x, ax, beta, gamma, *(() if batch_stat else (mean, variance))
    ):
        combine = _combine_of(moments) if batch_stat else None
        return _normalize_native(
            xp, fname, x, beta, gamma, mean, variance, ax, n, decay_rate, eps, combine
        )
    if batch_stat:
        if moments is local_moments:
            _check_count(fname, x.shape, ax, n, "")
        m, xc, v, count = moments(xp, x, red, n)
        if moments is not local_moments:
            _check_count(fname, x.shape, ax, count, " in all processes together")
        _update_running(xp, mean, m, decay_rate, "mean", fname)
        _update_running(xp, variance, v * (count / (count - 1)), decay_rate, "variance", fname)
    else:
        xc, v = x - mean, variance
    # y = xc * (gamma / sqrt(v + eps)) + beta: the per-channel factor first, then in place into
    # xc (a temporary of this kernel) where that keeps the dtype the formula gives
    scale = gamma / xp.sqrt(v + eps)
    if np.result_type(xc.dtype, scale.dtype, beta.dtype) == xc.dtype and xc.base is None:
        y = xp.multiply(xc, scale, out=xc)
        y += beta
    else:
        y = xc * scale + beta
    return y if out_dtype is None else y.astype(out_dtype)


def _check_count(fname: str, shape: Any, ax: Any, count: int, where: str) -> None:
    """Raise unless the batch statistics are taken over more than one value per channel."""
    if count == 0:
        raise ValueError(
            f"{fname}(): x of shape {tuple(shape)} has no element{where} to compute batch "
            "statistics from (batch_stat=True)"
        )
    if count == 1:
        raise ValueError(
            f"{fname}(): x of shape {tuple(shape)} has one value per channel{where} (axes "
            f"{ax}): its batch variance is 0 and the output all zeros; training mode "
            "(batch_stat=True) needs more than one value per channel"
        )


def _check_settings(eps: Any, decay_rate: Any, fname: str = "batch_normalization") -> None:
    """Raise unless ``eps > 0`` and ``0 <= decay_rate <= 1`` (real numbers)."""
    if not is_scalar(eps) or not eps > 0:
        raise ValueError(f"{fname}(): argument 'eps' must be a number > 0, got {eps!r}")
    if not is_scalar(decay_rate) or not 0 <= decay_rate <= 1:
        raise ValueError(
            f"{fname}(): argument 'decay_rate' must be a number in [0, 1], got {decay_rate!r}"
        )


def _batch_normalization_bw(  # type: ignore[no-untyped-def]
    gy,
    inputs,
    in_shapes,
    outputs,
    out_shapes,
    axes,
    decay_rate,
    eps,
    batch_stat,
):
    return bn_rule(gy, inputs, in_shapes[0], axes, eps, batch_stat, _mean)


def _batch_normalization_fast(  # type: ignore[no-untyped-def]
    xp, gy, x, xs, y, ys, axes, decay_rate, eps, batch_stat, need_grads
):
    """Array version of BatchNormalization's rule (first-order backward); see ``bn_fast``."""
    return bn_fast(xp, gy, x, xs, axes, eps, batch_stat, need_grads)


def bn_fast(
    xp: Any,
    gy: Any,
    x: Any,
    xs: Any,
    axes: Any,
    eps: float,
    batch_stat: bool,
    need_grads: Sequence[bool],
    moments: Moments = local_moments,
    summed: Callable[[Any], Any] | None = None,
) -> list[Any]:
    """The first-order backward of a batch normalization on arrays: the rule's formulas in fewer
    passes over ``x`` (the per-channel factors folded first), the products whose gradient is not
    needed skipped. ``moments`` takes the batch statistics (see ``Moments``), ``summed`` adds a
    buffer of sums over the processes (None: one process).

    With ``xc = x - mu``, ``r = (sigma^2 + eps)^{-1/2}``, the sums ``S_g``, ``S_gxc`` of ``g``
    and ``g xc`` over the reduced axes and ``N`` values per channel: in training,
    ``dx = gamma r g - gamma r S_g / N - xc gamma r^3 S_gxc / N`` (``S`` over every process),
    ``dbeta = S_g``, ``dgamma = r S_gxc`` (this process's); in inference, ``dx = gamma r g``,
    ``dmean = -sum(dx)``, ``dvar = -gamma S_gxc (var + eps)^{-3/2} / 2``.
    """
    g, xa, gamma = gy[0], x[0], x[2]
    ax, red, _, n = _bn_geometry(xs[0], axes)
    if (
        (not batch_stat or _combine_of(moments) is not None)
        and isinstance(g, np.ndarray)
        and g.dtype == xa.dtype
        and g.flags.c_contiguous
        and _bn_native(xp, xa, ax, gamma, *(() if batch_stat else (x[3], x[4])))
    ):
        combine = _combine_of(moments) if batch_stat else None
        return _bn_fast_native(g, xa, x, n, eps, combine, need_grads, summed)
    half = xa.dtype == np.float16
    if half:  # as the forward: in float32, each gradient cast back to its input's dtype
        xa = xa.astype(np.float32)
        g = g.astype(np.float32)
    need_x, need_b, need_g = need_grads[0], need_grads[1], need_grads[2]
    if batch_stat:
        _, xc, v, n = moments(xp, xa, red, n)
        r = 1.0 / xp.sqrt(v + eps)
    else:
        xc = _centered(xp, xa, x[3])
        r = 1.0 / xp.sqrt(x[4] + eps)
    s_g: Any = g.sum(axis=red, keepdims=True) if need_b or (need_x and batch_stat) else None
    gxc = xp.multiply(g, xc, out=output_array(xp, xc.shape, np.result_type(g.dtype, xc.dtype)))
    s_gxc = gxc.sum(axis=red, keepdims=True)
    del gxc
    dx = dmean = dvar = None
    if need_x or (not batch_stat and need_grads[3]):
        a = gamma * r
        dx = xp.multiply(g, a, out=output_array(xp, g.shape, np.result_type(g.dtype, a.dtype)))
        if batch_stat:
            t_g, t_gxc = s_g, s_gxc
            if summed is not None:  # the sums of every process, in one collective
                buf = xp.concatenate([s_g.reshape(-1), s_gxc.reshape(-1)])
                summed(buf)
                t_g, t_gxc = buf[: s_g.size].reshape(s_g.shape), buf[s_g.size :].reshape(s_g.shape)
            dx -= a * t_g / n
            xp.multiply(xc, gamma * r * r * r * t_gxc / n, out=xc)
            dx -= xc
        elif need_grads[3]:
            dmean = -dx.sum(axis=red, keepdims=True)
    if not batch_stat and need_grads[4]:
        dvar = gamma * s_gxc * (r * r * r) * -0.5
    grads: list[Any] = [
        dx if need_x else None,
        s_g if need_b else None,
        r * s_gxc if need_g else None,
        dmean,
        dvar,
    ]
    if half:  # the dtypes the graph rule gives: x's, g's, gamma's, mean's, variance's
        for i, dt in enumerate((x[0].dtype, gy[0].dtype, gamma.dtype, x[3].dtype, x[4].dtype)):
            if grads[i] is not None and grads[i].dtype != dt:
                grads[i] = grads[i].astype(dt)
    return grads


#: values per sample and channel (the product of the spatial sizes) below which batch
#: normalization stays with the numpy kernels: the compiled ones read a channel in runs of that
#: many contiguous values
_BN_MIN_SPATIAL = 8
#: values of x below which batch normalization stays with the numpy kernels (whose fewer Python
#: steps cost less than the compiled kernels' calls there)
_BN_MIN_SIZE = 1024


def _bn_native(xp: Any, x: Any, ax: tuple[int, ...], *params: Any) -> bool:
    """Whether the compiled kernels (:func:`gradhub_nn_ops.native.bn_forward` and
    ``bn_backward``) serve a batch normalization of ``x`` over the axes ``ax``: axis 1 of a
    C-contiguous float32/float64 numpy array ``(N, C, *spatial)`` of at least
    :data:`_BN_MIN_SIZE` values, at least :data:`_BN_MIN_SPATIAL` of them per sample and
    channel, ``params`` (gamma, beta, the running statistics
    used) of ``x``'s dtype, so that the result keeps ``x``'s dtype."""
    from . import native

    return (
        xp is np
        and ax == (1,)
        and isinstance(x, np.ndarray)
        and x.ndim >= 2
        and x.size >= max(1, _BN_MIN_SIZE)
        and x.flags.c_contiguous
        and math.prod(x.shape[2:]) >= _BN_MIN_SPATIAL
        and all(getattr(p, "dtype", None) == x.dtype for p in params)
        and native.dtype_usable(x.dtype)
    )


def _per_channel(p: Any, dtype: Any = None) -> Any:
    """The ``C`` values of a parameter shaped ``(1, C, 1, ...)`` as a C-contiguous vector."""
    return np.ascontiguousarray(p, dtype=dtype).reshape(-1)


def _normalize_native(
    xp: Any,
    fname: str,
    x: Any,
    beta: Any,
    gamma: Any,
    mean: Any,
    variance: Any,
    ax: tuple[int, ...],
    n: int,
    decay_rate: float,
    eps: float,
    combine: Combine | None,
) -> Any:
    """:func:`normalize` by the compiled kernel (see :func:`_bn_native`), the batch statistics
    (training: ``combine`` given, see ``Combine``) in double, the running statistics updated as
    by the numpy kernels."""
    from . import native

    c = int(x.shape[1])
    stats = combine is _this_process
    if combine is None:  # inference
        mu, var = _per_channel(mean, np.float64), _per_channel(variance, np.float64)
    elif stats:  # the statistics by the same call as y
        _check_count(fname, x.shape, ax, n, "")
        mu, var = np.empty(c), np.empty(c)
    else:  # this process's statistics, then those of every process
        mu, var = np.empty(c), np.empty(c)
        native.bn_forward(x, None, None, None, mu, var, float(eps))
        mu, var, n = combine(xp, x, mu, var, n)
        _check_count(fname, x.shape, ax, n, " in all processes together")
    y = output_array(xp, x.shape, x.dtype)
    native.bn_forward(x, y, _per_channel(gamma), _per_channel(beta), mu, var, float(eps), stats)
    if combine is not None:
        pshape = mean.shape
        _update_running(xp, mean, mu.reshape(pshape), decay_rate, "mean", fname)
        unbiased = (var * (n / (n - 1))).reshape(pshape)
        _update_running(xp, variance, unbiased, decay_rate, "variance", fname)
    return y


def _bn_fast_native(
    g: Any,
    xa: Any,
    x: Any,
    n: int,
    eps: float,
    combine: Combine | None,
    need_grads: Sequence[bool],
    summed: Callable[[Any], Any] | None,
) -> list[Any]:
    """:func:`bn_fast` by the compiled kernel (see :func:`_bn_native`): in one process the
    statistics, the sums ``S_g``, ``S_gxc`` and ``dx`` in one call; across processes
    (``combine``, see ``Combine``, and ``summed``) the statistics and the sums added over the
    processes first, by the same collectives as the numpy kernels. The gradients of the
    parameters come from the per-channel sums (double, cast to ``x``'s dtype)."""
    from . import native

    gamma, batch_stat = x[2], combine is not None
    pshape, dtype, c = gamma.shape, xa.dtype, int(xa.shape[1])
    stats = combine is _this_process
    if combine is None:  # inference
        mu, var = _per_channel(x[3], np.float64), _per_channel(x[4], np.float64)
    else:
        mu, var = np.empty(c), np.empty(c)
        if not stats:
            native.bn_forward(xa, None, None, None, mu, var, float(eps))
            mu, var, n = combine(np, xa, mu, var, n)
    sg, sgxc = np.empty(c), np.empty(c)
    dx = output_array(np, xa.shape, dtype) if need_grads[0] else None
    gp, eps, count = _per_channel(gamma), float(eps), n if batch_stat else None
    if batch_stat and not stats and dx is not None and summed is not None:
        # this process's sums, then the sums of every process (one collective) for dx
        native.bn_backward(xa, g, None, None, mu, var, sg, sgxc, eps, False, True)
        buf = np.concatenate([sg, sgxc]).astype(np.result_type(g.dtype, dtype))
        summed(buf)
        t_g, t_gxc = buf[:c].astype(np.float64), buf[c:].astype(np.float64)
        native.bn_backward(xa, g, dx, gp, mu, var, t_g, t_gxc, eps, False, False, count)
    elif dx is not None or batch_stat or any(need_grads[1:]):
        # the sums serve the training dx and every parameter's gradient
        sums = batch_stat or any(need_grads[1:])
        native.bn_backward(xa, g, dx, gp, mu, var, sg, sgxc, eps, stats, sums, count)
    r = 1.0 / np.sqrt(var + eps)
    gamma64 = _per_channel(gamma, np.float64)

    def out(v: Any, need: bool) -> Any:
        return v.astype(dtype).reshape(pshape) if need else None

    inference = not batch_stat
    return [
        dx,
        out(sg, need_grads[1]),
        out(r * sgxc, need_grads[2]),
        out(-(gamma64 * r) * sg, inference and need_grads[3]),
        out(gamma64 * sgxc * (r * r * r) * -0.5, inference and need_grads[4]),
    ]


def bn_rule(
    gy: Any,
    inputs: Any,
    x_shape: Any,
    axes: Any,
    eps: float,
    batch_stat: bool,
    mean_of: Callable[[Any, tuple[int, ...]], Any],
) -> list[Any]:
    """The backward rule of a batch normalization whose batch statistics are the means
    ``mean_of(v, reduced_axes)`` (a differentiable function, kept as size-1 axes)."""
    g = gy[0]
    x, _, gamma, mean, var = inputs
    _, red, _, _ = _bn_geometry(x_shape, axes)
    dbeta = _call("Sum", g, axis=red, keepdims=True)
    if x.dtype != np.float16:
        return _bn_grads(g, x, gamma, mean, var, red, eps, batch_stat, x.need_grad, dbeta, mean_of)
    # as the forward: computed in float32, each gradient cast back to its input's dtype
    g32 = _call("Cast", g, dtype="float32") if g.dtype == np.float16 else g
    res = _bn_grads(
        g32,
        _call("Cast", x, dtype="float32"),
        gamma,
        mean,
        var,
        red,
        eps,
        batch_stat,
        x.need_grad,
        dbeta,
        mean_of,
    )
    for i, like in ((0, x), (2, gamma), (3, mean), (4, var)):
        if res[i] is not None and res[i].dtype != like.dtype:
            res[i] = _call("Cast", res[i], dtype=like.dtype.name)
    return res


def standardized(
    x: Any, red: tuple[int, ...], eps: float, mean_of: Callable[[Any, tuple[int, ...]], Any]
) -> tuple[Any, Any]:
    """``(xhat, r)``: ``x`` centred and scaled over ``red``, ``(x - mu) r`` with
    ``r = (var + eps)^{-1/2}``, the statistics the means ``mean_of`` (registered functions:
    differentiable again)."""
    xc = x - mean_of(x, red)
    r = _call("PowScalar", _call("AddScalar", mean_of(xc * xc, red), val=eps), val=-0.5)
    return xc * r, r


def standardized_grad(
    g: Any,
    xhat: Any,
    r: Any,
    red: tuple[int, ...],
    mean_of: Callable[[Any, tuple[int, ...]], Any],
) -> Any:
    """The gradient of ``x`` through :func:`standardized` for the gradient ``g`` of ``xhat``:
    ``r (g - mean(g) - xhat mean(g xhat))``."""
    return r * (g - mean_of(g, red) - xhat * mean_of(g * xhat, red))


def _bn_grads(
    g: Any,
    x: Any,
    gamma: Any,
    mean: Any,
    var: Any,
    red: tuple[int, ...],
    eps: float,
    batch_stat: bool,
    need_dx: bool,
    dbeta: Any,
    mean_of: Callable[[Any, tuple[int, ...]], Any] = _mean,
) -> list[Any]:
    """The gradients (x, beta, gamma, mean, variance) of batch normalization."""
    if batch_stat:
        xhat, rstd = standardized(x, red, eps, mean_of)
        dgamma = _call("Sum", g * xhat, axis=red, keepdims=True)
        dx = standardized_grad(g * gamma, xhat, rstd, red, mean_of) if need_dx else None
        return [dx, dbeta, dgamma, None, None]
    ve = _call("AddScalar", var, val=eps)
    rstd = _call("PowScalar", ve, val=-0.5)
    xc = x - mean
    gg = g * gamma
    dx = gg * rstd
    dgamma = _call("Sum", g * xc * rstd, axis=red, keepdims=True)
    dmean = -_call("Sum", dx, axis=red, keepdims=True)
    dvar = _call("Sum", gg * xc, axis=red, keepdims=True) * _call("PowScalar", ve, val=-1.5) * -0.5
    return [dx, dbeta, dgamma, dmean, dvar]


def _batch_normalization_ref(
    x: np.ndarray,
    beta: np.ndarray,
    gamma: np.ndarray,
    mean: np.ndarray,
    variance: np.ndarray,
    axes: Any = (1,),
    decay_rate: float = 0.9,
    eps: float = 1e-5,
    batch_stat: bool = True,
) -> np.ndarray:
    ax = [a % x.ndim for a in ([axes] if isinstance(axes, int) else axes)]
    # move the normalized axes last and flatten the others into rows
    rest = [i for i in range(x.ndim) if i not in ax]
    xt = np.transpose(x, rest + ax)
    rows = xt.reshape(-1, math.prod(x.shape[a] for a in ax))
    if batch_stat:
        mu = np.array([np.mean(rows[:, j]) for j in range(rows.shape[1])])
        var = np.array([np.mean((rows[:, j] - mu[j]) ** 2) for j in range(rows.shape[1])])
    else:
        mu, var = mean.reshape(-1), variance.reshape(-1)
    out = (rows - mu) / np.sqrt(var + eps) * gamma.reshape(-1) + beta.reshape(-1)
    out = out.reshape(xt.shape)
    return np.transpose(out, np.argsort(rest + ax)).astype(np.result_type(x, beta, gamma))


def _bn_samples(rng: np.random.Generator) -> Iterator[Sample]:
    # x is drawn uniformly: gradcheck draws its incoming gradients from a standard normal
    # generator with the same seed, and an incoming gradient equal to x would hide errors in dx
    def params(shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
        return (
            rng.standard_normal(shape),
            rng.uniform(0.5, 1.5, shape),
            rng.standard_normal(shape) * 0.1,
            rng.uniform(0.5, 1.5, shape),
        )

    def x(shape: tuple[int, ...]) -> np.ndarray:
        return rng.uniform(-2.0, 2.0, shape)

    yield Sample((x((4, 3)), *params((1, 3))), {}, grad_inputs=(0, 1, 2), name="2d batch_stat")
    yield Sample(
        (x((2, 3, 2, 2)), *params((1, 3, 1, 1))), {}, grad_inputs=(0, 1, 2), name="4d batch_stat"
    )
    yield Sample(
        (x((3, 2, 2)), *params((1, 2, 2))), {"axes": (1, 2)}, grad_inputs=(0, 1, 2), name="two axes"
    )
    yield Sample(
        (x((2, 2, 3)), *params((1, 1, 3))),
        {"axes": (-1,)},
        grad_inputs=(0, 1, 2),
        name="channel last",
    )
    yield Sample(
        (x((3, 2, 4)).transpose(2, 1, 0), *params((1, 2, 1))),
        {},
        grad_inputs=(0, 1, 2),
        name="non-contiguous",
    )
    yield Sample((x((2, 3, 2)), *params((1, 3, 1))), {"batch_stat": False}, name="inference")
    yield Sample((x((0, 3)), *params((1, 3))), {"batch_stat": False}, name="inference size-0")
    # _BN_MIN_SIZE values, _BN_MIN_SPATIAL per sample and channel: the compiled kernels
    yield Sample(
        (x((2, 4, 8, 16)), *params((1, 4, 1, 1))), {}, grad_inputs=(0, 1, 2), name="compiled"
    )
    yield Sample(
        (x((4, 2, 128)), *params((1, 2, 1))), {"batch_stat": False}, name="compiled inference"
    )


_BN_OPTIONAL = ("beta", "gamma", "mean", "variance")


def _bn_api(fdef: Any) -> Any:
    """Install the public callable of BatchNormalization: the registered one, plus nnabla's None
    for ``beta``/``gamma``/``mean``/``variance`` (see :func:`_bn_fill_none`). The common calls
    (no None) go on to the registered callable after four identity tests."""
    inner = fdef.api
    defaults = fdef.attrs
    from gradhub.graph import apply
    from gradhub.ops import replace_api

    def api(*args: Any, **kw: Any) -> Any:
        if len(args) == 5 and not kw:
            if (
                args[1] is not None
                and args[2] is not None
                and args[3] is not None
                and args[4] is not None
            ):
                return apply(fdef, args, defaults)  # the common call: inputs only
            return _bn_fill_none(inner, args, kw)
        if len(args) > 9 or "output_stat" in kw:
            return _bn_output_stat(api, args, kw)
        for a in args[1:5]:
            if a is None:
                return _bn_fill_none(inner, args, kw)
        for n in _BN_OPTIONAL:
            if n in kw and kw[n] is None:
                return _bn_fill_none(inner, args, kw)
        return inner(*args, **kw)

    replace_api(fdef, api)
    P = inspect.Parameter
    params = [P(n, P.POSITIONAL_OR_KEYWORD) for n in ("x", *_BN_OPTIONAL)]
    params += [
        P(n, P.POSITIONAL_OR_KEYWORD, default=v)
        for n, v in {**defaults, "output_stat": False}.items()
    ]
    api.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return fdef


_BN_NAMES = ("x", *_BN_OPTIONAL, "axes", "decay_rate", "eps", "batch_stat", "output_stat")


def _bn_output_stat(api: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """batch_normalization with nnabla's ``output_stat`` (the 10th argument): with True, returns
    ``(y, batch mean, batch variance)`` (biased, shaped like the parameters), as nnabla, which
    allows it only with ``batch_stat=True``."""
    from gradhub import as_variable

    if len(args) > len(_BN_NAMES):
        raise TypeError(
            f"batch_normalization() takes at most {len(_BN_NAMES)} arguments ({len(args)} given)"
        )
    kw = dict(kw)
    if len(args) == len(_BN_NAMES):
        if "output_stat" in kw:
            raise TypeError("batch_normalization() got multiple values for argument 'output_stat'")
        kw["output_stat"] = args[-1]
        args = args[:-1]
    output_stat = kw.pop("output_stat")
    y = api(*args, **kw)
    if not output_stat:
        return y
    a = {**dict(zip(_BN_NAMES, args)), **kw}
    if not a.get("batch_stat", True):
        raise ValueError(
            "batch_normalization(): output_stat=True needs batch_stat=True (the "
            "batch statistics are its outputs; nnabla refuses it too)"
        )
    x = as_variable(a["x"])
    _, red, _, _ = _bn_geometry(x.shape, a.get("axes", (1,)))
    mu = _mean(x, red)
    xc = x - mu
    return y, mu, _mean(xc * xc, red)


def _bn_fill_none(inner: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """batch_normalization with some of beta/gamma/mean/variance None, as nnabla: beta None
    omits the bias (a constant 0), gamma None the scale (a constant 1); mean/variance None use a
    dummy array the running statistic goes into and is dropped. mean/variance None with
    batch_stat=False is an error (there is no statistic to normalize with)."""
    from gradhub import as_variable

    names = ("x", *_BN_OPTIONAL, "axes", "decay_rate", "eps", "batch_stat")
    if len(args) > len(names):
        return inner(*args, **kw)  # the registered callable names the problem
    a = dict(zip(names, args))
    for k, v in kw.items():
        if k in a or k not in names:
            return inner(*args, **kw)  # a repeated or unknown argument: named there
        a[k] = v
    if "x" not in a:
        return inner(*args, **kw)
    batch_stat = a.get("batch_stat", True)
    for n in ("mean", "variance"):
        if n in a and a[n] is None and not batch_stat:
            raise ValueError(
                f"batch_normalization(): argument {n!r} must not be None when batch_stat=False "
                "(inference normalizes with the running statistics; nnabla prohibits it too)"
            )
    x = as_variable(a["x"])
    _, _, pshape, _ = _bn_geometry(x.shape, a.get("axes", (1,)))
    xp = x.device.xp
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
    with x.device.activate():
        for n, val in (("beta", 0.0), ("gamma", 1.0), ("mean", 0.0), ("variance", 1.0)):
            if n in a and a[n] is None:
                a[n] = xp.full(pshape, val, dtype=dtype)
    a["x"] = x
    return inner(**a)


_DOC_BN = """Batch normalization (nnabla), over every axis not in ``axes``.

    y = (x - mu) / sqrt(sigma2 + eps) * gamma + beta

    batch_stat=True (training): mu, sigma2 are the batch mean and (biased) variance, and the
    running statistics are updated in place: mean <- decay_rate * mean + (1 - decay_rate) * mu,
    variance <- decay_rate * variance + (1 - decay_rate) * sigma2 * n / (n - 1) (n: elements per
    channel). batch_stat=False (inference): mu, sigma2 are the running mean and variance.
    beta, gamma, mean, variance have x's size on ``axes`` and 1 elsewhere (e.g. (1, C, 1, 1)).
    Gradients flow to x, beta, gamma (and, in inference mode, to mean and variance).
    As in nnabla (and PyTorch's batch_norm), each of beta, gamma, mean, variance may be None:
    beta None omits the bias, gamma None the scale; mean/variance None in training mode uses a
    dummy statistic (nothing is updated); mean/variance None with batch_stat=False is an error.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.array([[1.0, 2.0], [3.0, 6.0]], np.float32))
        >>> beta, gamma = np.zeros((1, 2), np.float32), np.ones((1, 2), np.float32)
        >>> mean, var = np.zeros((1, 2), np.float32), np.ones((1, 2), np.float32)
        >>> F.batch_normalization(x, beta, gamma, mean, var).d.round(3)
        array([[-1., -1.],
               [ 1.,  1.]], dtype=float32)
        >>> mean
        array([[0.2, 0.4]], dtype=float32)
    """


# -- FusedBatchNormalization -------------------------------------------------------------------


def _fused_check(nonlinearity: Any) -> None:
    if nonlinearity != "relu":
        # (nnabla 1.39 raises RuntimeError "not_implemented": NotImplementedError is one)
        raise NotImplementedError(
            f"fused_batch_normalization(): nonlinearity={nonlinearity!r} is not supported; as "
            "nnabla's, only 'relu' is (see docs/migration-nnabla.md)"
        )


def _fused_batch_normalization(
    xp: Any,
    x: Any,
    beta: Any,
    gamma: Any,
    mean: Any,
    variance: Any,
    z: Any = None,
    axes: Any = (1,),
    decay_rate: float = 0.9,
    eps: float = 1e-5,
    batch_stat: bool = True,
    nonlinearity: str = "relu",
) -> Any:
    _fused_check(nonlinearity)
    if z is not None and tuple(z.shape) != tuple(x.shape):
        raise ValueError(
            f"fused_batch_normalization(): z must have x's shape {tuple(x.shape)}, got "
            f"{tuple(z.shape)}"
        )
    try:
        y = _batch_normalization(
            xp, x, beta, gamma, mean, variance, axes, decay_rate, eps, batch_stat
        )
    except ValueError as e:  # the same checks, named for this function
        msg = str(e).replace("batch_normalization()", "fused_batch_normalization()")
        raise ValueError(msg) from None
    if z is not None:
        y = y + z
    return xp.maximum(y, y.dtype.type(0))


def _fused_batch_normalization_bw(  # type: ignore[no-untyped-def]
    gy,
    inputs,
    in_shapes,
    outputs,
    out_shapes,
    axes,
    decay_rate,
    eps,
    batch_stat,
    nonlinearity,
):
    # y = relu(u + z), u = BN(x): the incoming gradient masked where y > 0 goes to z and, through
    # the rule of BatchNormalization, to x, beta, gamma (and mean, variance in inference)
    gu = gy[0] * _call("GreaterScalar", outputs[0], val=0.0)
    res = _batch_normalization_bw(
        [gu], inputs[:5], in_shapes[:5], outputs, out_shapes, axes, decay_rate, eps, batch_stat
    )
    if len(in_shapes) > 5:
        res.append(gu)
    return res


def _fused_batch_normalization_fast(  # type: ignore[no-untyped-def]
    xp, gy, x, xs, y, ys, axes, decay_rate, eps, batch_stat, nonlinearity, need_grads
):
    """Array version of FusedBatchNormalization's rule: the incoming gradient masked where
    ``y > 0``, then BatchNormalization's array rule; ``z`` gets the masked gradient."""
    gu = gy[0] * (y[0] > 0)
    res = _batch_normalization_fast(
        xp, [gu], x[:5], xs[:5], y, ys, axes, decay_rate, eps, batch_stat, need_grads[:5]
    )
    if len(xs) > 5:
        res.append(gu if need_grads[5] else None)
    return res


def _fused_batch_normalization_ref(
    x: np.ndarray,
    beta: np.ndarray,
    gamma: np.ndarray,
    mean: np.ndarray,
    variance: np.ndarray,
    z: np.ndarray | None = None,
    axes: Any = (1,),
    decay_rate: float = 0.9,
    eps: float = 1e-5,
    batch_stat: bool = True,
    nonlinearity: str = "relu",
) -> np.ndarray:
    u = _batch_normalization_ref(x, beta, gamma, mean, variance, axes, decay_rate, eps, batch_stat)
    if z is not None:
        u = u + z
    return np.where(u > 0, u, 0.0).astype(u.dtype)


def _fbn_samples(rng: np.random.Generator) -> Iterator[Sample]:
    # drawn until every value before the ReLU is at least 0.1 away from its kink at 0 (the finite
    # differences of gradcheck must not cross it)
    def draw(
        xshape: tuple[int, ...], pshape: tuple[int, ...], with_z: bool, attrs: dict[str, Any]
    ) -> tuple[np.ndarray, ...]:
        while True:
            x = rng.uniform(-2.0, 2.0, xshape)
            ps = (
                rng.standard_normal(pshape),
                rng.uniform(0.5, 1.5, pshape),
                rng.standard_normal(pshape) * 0.1,
                rng.uniform(0.5, 1.5, pshape),
            )
            z = rng.standard_normal(xshape) if with_z else None
            a = {k: v for k, v in attrs.items() if k in ("axes", "eps", "batch_stat")}
            u = _batch_normalization_ref(x, *ps, **a) + (0.0 if z is None else z)
            if np.min(np.abs(u)) > 0.1:
                return (x, *ps) if z is None else (x, *ps, z)

    yield Sample(draw((4, 3), (1, 3), False, {}), grad_inputs=(0, 1, 2), name="2d batch_stat")
    yield Sample(
        draw((2, 3, 2, 2), (1, 3, 1, 1), True, {}),
        grad_inputs=(0, 1, 2, 5),
        name="4d batch_stat with z",
    )
    yield Sample(
        draw((3, 2, 2), (1, 1, 2), True, {"axes": (2,)}),
        {"axes": (2,), "decay_rate": 0.5, "eps": 1e-3},
        grad_inputs=(0, 1, 2, 5),
        name="last axis with z",
    )
    yield Sample(
        draw((2, 3, 2), (1, 3, 1), True, {"batch_stat": False}),
        {"batch_stat": False},
        name="inference with z",
    )
    yield Sample(
        draw((3, 2), (1, 2), False, {"batch_stat": False}), {"batch_stat": False}, name="inference"
    )


_DOC_FBN = """nnabla's FusedBatchNormalization: batch normalization, an addition and a ReLU.

    y = max(BN(x) + z, 0)

    ``BN`` is :func:`batch_normalization` with the same ``axes``, ``decay_rate``, ``eps`` and
    ``batch_stat`` (in training the running ``mean``/``variance`` are updated in place at each
    execution, as BatchNormalization's); ``z`` (optional, x's shape) is added before the ReLU.
    Only ``nonlinearity="relu"`` is supported, as in nnabla (``NotImplementedError`` otherwise).
    Gradients: the incoming gradient masked where y > 0 goes to z and, through batch
    normalization's rule, to x, beta, gamma (and to mean and variance in inference); the rule is
    written with registered functions, so it is differentiable again.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.array([[1.0, 2.0], [3.0, 6.0]], np.float32))
        >>> beta, gamma = np.zeros((1, 2), np.float32), np.ones((1, 2), np.float32)
        >>> mean, var = np.zeros((1, 2), np.float32), np.ones((1, 2), np.float32)
        >>> z = np.array([[0.5, 2.0], [0.5, 0.5]], np.float32)
        >>> F.fused_batch_normalization(x, beta, gamma, mean, var, z, eps=1e-8).d.round(3)
        array([[0. , 1. ],
               [1.5, 1.5]], dtype=float32)
        >>> mean
        array([[0.2, 0.4]], dtype=float32)
    """


# -- LayerNormalization (composite) ------------------------------------------------------------


# -- Standardize: the normalization step of layer, instance and group normalization -------------


def _standardize_axes(x_ndim: int, axis: Any) -> tuple[int, ...]:
    from .math import norm_axes

    return norm_axes("standardize", axis, x_ndim)


def _native_rows(xp: Any, x: Any, red: tuple[int, ...]) -> int:
    """The row length ``m`` when the compiled kernels can standardize ``x`` over ``red`` (the
    trailing axes of a C-contiguous float32/float64 numpy array), else 0."""
    from . import native

    nd = x.ndim
    if (
        xp is np
        and red == tuple(range(nd - len(red), nd))
        and x.flags.c_contiguous
        and x.size
        and native.dtype_usable(x.dtype)
    ):
        return math.prod(x.shape[nd - len(red) :])
    return 0


def _standardize(xp: Any, x: Any, axis: Any = None, eps: float = 1e-5) -> Any:
    if not is_scalar(eps) or not eps > 0:
        raise ValueError(f"standardize(): argument 'eps' must be a number > 0, got {eps!r}")
    red = _standardize_axes(x.ndim, axis)
    x = float_input(x)
    m = _native_rows(xp, x, red)
    if m:  # one compiled pass per row (layer normalization over the last axes)
        from . import native

        y = output_array(xp, x.shape, x.dtype)
        native.standardize(x, y, m, float(eps))
        return y
    half = x.dtype == np.float16  # in float32, then cast back (as layer normalization)
    xf = x.astype(np.float32) if half else x
    xc = _centered(xp, xf, xf.mean(axis=red, keepdims=True))
    r = 1.0 / xp.sqrt(_mean_square(xp, xc, red) + eps)
    y = xp.multiply(xc, r, out=xc) if r.dtype == xc.dtype else xc * r
    return y.astype(np.float16) if half else y


def _standardize_bw(gy, inputs, in_shapes, outputs, out_shapes, axis, eps):  # type: ignore[no-untyped-def]
    # d xhat: r (g - mean(g) - xhat mean(g xhat)), r and xhat recomputed from x (registered
    # functions: differentiable again)
    x, g = inputs[0], gy[0]
    red = _standardize_axes(len(in_shapes[0]), axis)
    half = x.dtype == np.float16
    if half:
        x = _call("Cast", x, dtype="float32")
        g = _call("Cast", g, dtype="float32")
    xhat, r = standardized(x, red, eps, _mean)
    dx = standardized_grad(g, xhat, r, red, _mean)
    return [_call("Cast", dx, dtype="float16") if half else dx]


def _standardize_fast(xp, gy, x, xs, y, ys, axis, eps):  # type: ignore[no-untyped-def]
    """Array version of Standardize's rule: with ``xc = x - mu`` and ``r = (var + eps)^{-1/2}``,
    ``dx = r (g - mean(g)) - xc r^3 mean(g xc)``."""
    g, xa = gy[0], x[0]
    red = _standardize_axes(xa.ndim, axis)
    m = _native_rows(xp, xa, red)
    if m and g.dtype == xa.dtype and g.flags.c_contiguous:
        from . import native

        dx = output_array(xp, xa.shape, xa.dtype)
        native.standardize_backward(xa, g, dx, m, float(eps))
        return [dx]
    half = xa.dtype == np.float16
    if half:
        xa, g = xa.astype(np.float32), g.astype(np.float32)
    xc = _centered(xp, xa, xa.mean(axis=red, keepdims=True))
    r = 1.0 / xp.sqrt(_mean_square(xp, xc, red) + eps)
    gxc = xp.multiply(g, xc, out=output_array(xp, xc.shape, np.result_type(g.dtype, xc.dtype)))
    m_gxc = gxc.mean(axis=red, keepdims=True)
    del gxc
    dx = _centered(xp, g, g.mean(axis=red, keepdims=True))
    dx *= r
    xp.multiply(xc, r * r * r * m_gxc, out=xc)
    dx -= xc
    return [dx.astype(np.float16) if half else dx]


def _standardize_ref(x: np.ndarray, axis: Any = None, eps: float = 1e-5) -> np.ndarray:
    red = tuple(range(x.ndim)) if axis is None else tuple(np.atleast_1d(axis).tolist())
    xf = x.astype(np.float64)
    mu = np.mean(xf, axis=red, keepdims=True)
    var = np.mean((xf - mu) ** 2, axis=red, keepdims=True)
    return ((xf - mu) / np.sqrt(var + eps)).astype(x.dtype)


def _standardize_samples(rng: np.random.Generator) -> Iterator[Sample]:
    u = rng.uniform
    yield Sample((u(-2.0, 2.0, (3, 4)),), {"axis": (1,)}, name="rows")
    yield Sample((u(-2.0, 2.0, (2, 3, 4)),), {"axis": (1, 2), "eps": 1e-3}, name="two axes")
    yield Sample((u(-2.0, 2.0, (4, 3)),), {"axis": (0,)}, name="columns")
    yield Sample(
        (u(-2.0, 2.0, (3, 2, 4)).transpose(2, 0, 1),), {"axis": (2,)}, name="non-contiguous"
    )
    yield Sample((u(-2.0, 2.0, (5,)),), {}, name="all axes")


# -- StandardizeAffine: Standardize with a scale and shift (layer normalization's affine) -------


def _affine_rows(xp: Any, x: Any, red: tuple[int, ...], *params: Any) -> int:
    """:func:`_native_rows` when every parameter is a C-contiguous array of ``x``'s dtype that
    varies along exactly the normalized (trailing) axes (a value per position in a row), else 0."""
    m = _native_rows(xp, x, red)
    if not m:
        return 0
    nd, k = x.ndim, len(red)
    for p in params:
        shape = (1,) * (nd - p.ndim) + tuple(p.shape)
        if (
            p.dtype != x.dtype
            or not p.flags.c_contiguous
            or any(d != 1 for d in shape[: nd - k])
            or shape[nd - k :] != x.shape[nd - k :]
        ):
            return 0
    return m


def _standardize_affine(
    xp: Any, x: Any, gamma: Any, beta: Any, axis: Any = None, eps: float = 1e-5
) -> Any:
    red = _standardize_axes(x.ndim, axis)
    if not is_scalar(eps) or not eps > 0:
        raise ValueError(f"standardize_affine(): argument 'eps' must be a number > 0, got {eps!r}")
    for name, p in (("gamma", gamma), ("beta", beta)):
        if not broadcasts_to(tuple(p.shape), tuple(x.shape)):
            raise ValueError(
                f"standardize_affine(): {name} of shape {tuple(p.shape)} does not broadcast to x "
                f"of shape {tuple(x.shape)}"
            )
    x = float_input(x)
    m = _affine_rows(xp, x, red, gamma, beta)
    if m:  # one compiled pass per row: normalization, scale and shift
        from . import native

        y = output_array(xp, x.shape, x.dtype)
        native.standardize(x, y, m, float(eps), gamma.reshape(-1), beta.reshape(-1))
        return y
    y = _standardize(xp, x, axis, eps)
    dtype = np.result_type(y.dtype, gamma.dtype, beta.dtype)
    if dtype == y.dtype:
        y *= gamma
        y += beta
        return y
    return y * gamma + beta


def _standardize_affine_bw(gy, inputs, in_shapes, outputs, out_shapes, axis, eps):  # type: ignore[no-untyped-def]
    # y = xhat gamma + beta: d gamma = sum(g xhat), d beta = sum(g), d x = Standardize's rule for
    # g gamma (registered functions: differentiable again)
    from gradhub.broadcasting import sum_to

    x, gamma = inputs[0], inputs[1]
    g = gy[0]
    red = _standardize_axes(len(in_shapes[0]), axis)
    half = x.dtype == np.float16
    xf = _call("Cast", x, dtype="float32") if half else x
    xhat, r = standardized(xf, red, eps, _mean)
    gg = g * gamma
    if half:
        gg = _call("Cast", gg, dtype="float32")
    dx = standardized_grad(gg, xhat, r, red, _mean)
    if half:
        dx = _call("Cast", dx, dtype="float16")
        xhat = _call("Cast", xhat, dtype="float16")
    dgamma = sum_to(g * xhat, in_shapes[1])
    dbeta = sum_to(g, in_shapes[2])
    return [dx, dgamma, dbeta]


def _standardize_affine_fast(xp, gy, x, xs, y, ys, axis, eps, need_grads):  # type: ignore[no-untyped-def]
    """Array version of StandardizeAffine's rule: ``dbeta = sum(g)``, ``dgamma = sum(g xhat)``
    and ``dx`` Standardize's array rule for ``g gamma``; one compiled pass per row for the three
    where the parameters hold one value per position in a row."""
    from gradhub.broadcasting import sum_to_array

    g, xa, gamma, beta = gy[0], x[0], x[1], x[2]
    red = _standardize_axes(xa.ndim, axis)
    m = _affine_rows(xp, xa, red, gamma, beta)
    if m and g.dtype == xa.dtype and g.flags.c_contiguous:
        from . import native

        dx = output_array(xp, xa.shape, xa.dtype) if need_grads[0] else None
        sums = np.zeros((2, m)) if need_grads[1] or need_grads[2] else None
        native.standardize_backward(
            xa,
            g,
            dx,
            m,
            float(eps),
            gamma.reshape(-1),
            None if sums is None else sums[0],
            None if sums is None else sums[1],
        )
        dgamma = dbeta = None
        if sums is not None:
            dgamma = sums[0].astype(gamma.dtype).reshape(gamma.shape)
            dbeta = sums[1].astype(beta.dtype).reshape(beta.shape)
        return [dx, dgamma if need_grads[1] else None, dbeta if need_grads[2] else None]
    dx = None
    if need_grads[0]:
        gg = g * gamma
        (dx,) = _standardize_fast(xp, [gg.astype(xa.dtype, copy=False)], [xa], xs, y, ys, axis, eps)
    dgamma = dbeta = None
    if need_grads[1]:
        xhat = _standardize(xp, xa, axis, eps)
        dgamma = sum_to_array(
            xp.multiply(g, xhat, out=xhat) if g.dtype == xhat.dtype else g * xhat, gamma.shape
        )
    if need_grads[2]:
        dbeta = sum_to_array(g, beta.shape)
    return [dx, dgamma, dbeta]


def _standardize_affine_ref(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, axis: Any = None, eps: float = 1e-5
) -> np.ndarray:
    y = _standardize_ref(x.astype(np.float64), axis, eps)
    out = y * gamma.astype(np.float64) + beta.astype(np.float64)
    return out.astype(np.result_type(x.dtype, gamma.dtype, beta.dtype))


def _standardize_affine_samples(rng: np.random.Generator) -> Iterator[Sample]:
    u = rng.uniform
    yield Sample(
        (u(-2.0, 2.0, (3, 4)), u(0.5, 1.5, (4,)), u(-1.0, 1.0, (4,))), {"axis": (1,)}, name="rows"
    )
    yield Sample(
        (u(-2.0, 2.0, (2, 3, 4)), u(0.5, 1.5, (1, 3, 4)), u(-1.0, 1.0, (3, 4))),
        {"axis": (1, 2), "eps": 1e-3},
        name="two axes",
    )
    yield Sample(
        (u(-2.0, 2.0, (4, 3)), u(0.5, 1.5, (4, 1)), u(-1.0, 1.0, (1, 3))),
        {"axis": (0,)},
        name="columns, broadcast parameters",
    )
    yield Sample(
        (u(-2.0, 2.0, (3, 2, 4)).transpose(2, 0, 1), u(0.5, 1.5, (4, 3, 1)), u(-1.0, 1.0, (2,))),
        {"axis": (2,)},
        name="non-contiguous",
    )


_DOC_STANDARDIZE_AFFINE = """standardize_affine(x, gamma, beta, axis=None, eps=1e-5): ``x``
    standardized over ``axis`` (:func:`standardize`), then scaled by ``gamma`` and shifted by
    ``beta`` (both broadcast against ``x``): layer normalization with its parameters, one
    function.

    .. math:: y = \\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}}\\,\\gamma + \\beta

    Gradients: :math:`\\partial\\beta = \\sum g`, :math:`\\partial\\gamma = \\sum g \\hat x`
    (summed to their shapes) and ``x`` Standardize's gradient for :math:`g\\gamma`, written with
    registered functions (differentiable again). On numpy float32/float64 arrays with
    ``gamma``/``beta`` holding one value per position of the normalized (trailing) axes, forward
    and first-order backward are one compiled pass per row each (on :mod:`gradhub.parallel`'s
    threads). ``layer_normalization`` with both parameters calls it.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.array([[1.0, 3.0], [2.0, 6.0]]))
        >>> F.standardize_affine(x, np.array([1.0, 2.0]), np.array([0.0, 1.0]), axis=1).d
        array([[-1.,  3.],
               [-1.,  3.]])
    """


_DOC_STANDARDIZE = """standardize(x, axis=None, eps=1e-5): ``x`` centered and scaled to unit
    variance over ``axis`` (all axes when None), the normalization of layer, instance and group
    normalization (without their scale and shift).

    .. math:: y = \\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}}, \\quad
       \\mu, \\sigma^2 \\text{ the mean and (biased) variance over axis}

    Gradient: :math:`r (g - \\bar g - y\\,\\overline{g y})` with
    :math:`r = (\\sigma^2 + \\epsilon)^{-1/2}` and the bars means over ``axis``, written with
    registered functions (differentiable again); a first-order array rule computes the same in
    fewer passes. float16 is computed in float32.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> F.standardize(gh.Variable(np.array([[1.0, 3.0], [2.0, 6.0]])), axis=1).d.round(3)
        array([[-1.,  1.],
               [-1.,  1.]])
    """


def layer_normalization(
    x: Any,
    beta: Any = None,
    gamma: Any = None,
    batch_axis: Any = 0,
    eps: float = 1e-5,
    output_stat: bool = False,
) -> Any:
    """Layer normalization (nnabla): normalize over every axis except ``batch_axis``.

    y = (x - mu) / sqrt(sigma2 + eps) * gamma + beta

    mu and sigma2 are the mean and (biased) variance of each sample over its non-batch axes.
    beta and gamma (optional) broadcast against x, typically shaped like x with 1 on the batch
    axes. With output_stat=True, returns (y, mu, sigma2) (statistics with size-1 axes kept).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.array([[1.0, 3.0], [2.0, 2.0]], np.float32))
        >>> F.layer_normalization(x).d.round(3)
        array([[-1.,  1.],
               [ 0.,  0.]], dtype=float32)
    """
    from gradhub import as_variable

    x = float_variable(as_variable(x))
    batch = _norm_axes("layer_normalization", "batch_axis", batch_axis, x.ndim)
    red = tuple(i for i in range(x.ndim) if i not in batch)
    n = math.prod(x.shape[i] for i in red)
    if n == 0:
        raise ValueError(
            f"layer_normalization(): x of shape {x.shape} has no element to normalize over "
            f"(batch_axis={batch_axis!r})"
        )
    if not isinstance(eps, (int, float, np.integer, np.floating)) or not eps > 0:
        raise ValueError(f"layer_normalization(): argument 'eps' must be a number > 0, got {eps!r}")
    for name, p in (("beta", beta), ("gamma", gamma)):
        if p is not None:
            _check_broadcast("layer_normalization", name, tuple(np.shape(p)), tuple(x.shape))
    half = x.dtype == np.float16  # computed in float32, then cast back (as PyTorch)
    if hasattr(gamma, "shape") and hasattr(beta, "shape"):  # (numbers: the scalar functions)
        y = _call("StandardizeAffine", x, gamma, beta, axis=red, eps=eps)
    else:
        y = _call("Standardize", x, axis=red, eps=eps)
        if gamma is not None:
            y = y * gamma
        if beta is not None:
            y = y + beta
    if output_stat:  # (the statistics, in float32 for float16: a variance above 65504 is inf)
        xf = _call("Cast", x, dtype="float32") if half else x
        mu = _mean(xf, red)
        xc = xf - mu
        var = _mean(xc * xc, red)
        if half:
            mu, var = (_call("Cast", v, dtype="float16") for v in (mu, var))
    return (y, mu, var) if output_stat else y


def _check_broadcast(
    fname: str, arg: str, shape: tuple[int, ...], x_shape: tuple[int, ...]
) -> None:
    """Raise unless ``shape`` broadcasts against ``x_shape`` to ``x_shape``."""
    if not broadcasts_to(shape, x_shape):
        raise ValueError(
            f"{fname}(): argument {arg!r} of shape {shape} does not broadcast against x of "
            f"shape {x_shape} (each of its axes must be 1 or x's size, e.g. (1, ...) on the "
            "batch axes)"
        )


def _layer_normalization_ref(
    x: np.ndarray,
    beta: np.ndarray | None = None,
    gamma: np.ndarray | None = None,
    batch_axis: Any = 0,
    eps: float = 1e-5,
    output_stat: bool = False,
) -> Any:
    b = [a % x.ndim for a in ([batch_axis] if isinstance(batch_axis, int) else batch_axis)]
    rest = [i for i in range(x.ndim) if i not in b]
    xt = np.transpose(x, b + rest)
    rows = xt.reshape(math.prod(x.shape[a] for a in b), math.prod(x.shape[a] for a in rest))
    mu = np.array([np.mean(r) for r in rows])[:, None]
    var = np.array([np.mean((r - np.mean(r)) ** 2) for r in rows])[:, None]
    y = ((rows - mu) / np.sqrt(var + eps)).reshape(xt.shape)
    inv = np.argsort(b + rest)
    y = np.transpose(y, inv)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    if not output_stat:
        return y
    kshape = [x.shape[i] if i in b else 1 for i in range(x.ndim)]
    return y, mu.reshape(kshape), var.reshape(kshape)


def _ln_samples(rng: np.random.Generator) -> Iterator[Sample]:
    r = rng.standard_normal

    def x(shape: tuple[int, ...]) -> np.ndarray:  # uniform: see _bn_samples
        return rng.uniform(-2.0, 2.0, shape)

    yield Sample((x((3, 4)), r((1, 4)), rng.uniform(0.5, 1.5, (1, 4))), name="2d")
    yield Sample((x((2, 3, 2, 2)), r((1, 3, 2, 2)), r((1, 3, 2, 2))), name="4d")
    yield Sample((x((2, 5)),), name="no beta/gamma")
    yield Sample(
        (x((2, 2, 3)), r((1, 1, 3)), r((1, 1, 3))), {"batch_axis": (0, 1)}, name="two batch axes"
    )
    yield Sample(
        (x((3, 2, 2)), r((3, 1, 1)), r((3, 1, 1))),
        {"batch_axis": 1, "eps": 1e-3},
        name="batch_axis=1",
    )
    yield Sample((x((0, 4)), r((1, 4)), r((1, 4))), name="size-0 batch")
    yield Sample((x((4, 3)).T, r((1, 4)), r((1, 4))), name="non-contiguous")
    yield Sample((x((2, 3)), r((1, 3)), r((1, 3))), {"output_stat": True}, name="output_stat")


# -- InstanceNormalization, GroupNormalization (composites) -------------------------------------


def _channel_and_batch(
    fname: str, ndim: int, channel_axis: Any, batch_axis: Any
) -> tuple[int, tuple[int, ...]]:
    """``channel_axis`` and ``batch_axis`` as non-negative axes, checked (distinct)."""
    if not is_int(channel_axis):
        raise TypeError(f"{fname}(): argument 'channel_axis' must be an int, got {channel_axis!r}")
    if not -ndim <= int(channel_axis) < ndim:
        raise ValueError(
            f"{fname}(): channel_axis {channel_axis!r} is out of range for x with {ndim} axes"
        )
    c = int(channel_axis) % ndim
    batch = _norm_axes(fname, "batch_axis", batch_axis, ndim)
    if c in batch:
        raise ValueError(
            f"{fname}(): channel_axis {channel_axis!r} is also in batch_axis {batch_axis!r}"
        )
    return c, batch


def _normalize_over(fname: str, x: Any, keep: tuple[int, ...], eps: Any, output_stat: bool) -> Any:
    """Layer normalization of ``x`` with the axes ``keep`` as its batch axes, after checking
    ``eps`` and that some element is normalized over (the errors naming ``fname``)."""
    if not is_scalar(eps) or not eps > 0:
        raise ValueError(f"{fname}(): argument 'eps' must be a number > 0, got {eps!r}")
    if math.prod(x.shape[i] for i in range(x.ndim) if i not in keep) == 0:
        raise ValueError(f"{fname}(): x of shape {x.shape} has no element to normalize over")
    return layer_normalization(x, None, None, batch_axis=keep, eps=eps, output_stat=output_stat)


def _scale_shift(
    fname: str,
    y: Any,
    beta: Any,
    gamma: Any,
    no_scale: bool,
    no_bias: bool,
    x_shape: tuple[int, ...],
) -> Any:
    for name, p, off in (("gamma", gamma, no_scale), ("beta", beta, no_bias)):
        if p is not None and not off:
            _check_broadcast(fname, name, tuple(np.shape(p)), x_shape)
    if gamma is not None and not no_scale:
        y = y * gamma
    if beta is not None and not no_bias:
        y = y + beta
    return y


def instance_normalization(
    x: Any,
    beta: Any,
    gamma: Any,
    channel_axis: int = 1,
    batch_axis: Any = 0,
    eps: float = 1e-5,
    output_stat: bool = False,
    no_scale: bool = False,
    no_bias: bool = False,
) -> Any:
    """Instance normalization (nnabla): normalize each sample's each channel over the other axes.

    y = (x - mu) / sqrt(sigma2 + eps) * gamma + beta

    mu and sigma2 are the mean and (biased) variance over every axis that is neither
    ``channel_axis`` nor in ``batch_axis`` (for (N, C, H, W): over H, W, one pair per (n, c)).
    beta and gamma broadcast against x, typically (1, C, 1, 1) (x's size on the channel axis, 1
    elsewhere); None, or ``no_bias``/``no_scale`` True, omits the term. With output_stat=True
    returns (y, mu, sigma2), the statistics shaped like x with 1 on the normalized axes.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.array([[[1.0, 3.0], [2.0, 6.0]]], np.float32))
        >>> F.instance_normalization(x, None, None).d.round(3)
        array([[[-1.,  1.],
                [-1.,  1.]]], dtype=float32)
    """
    from gradhub import as_variable

    fname = "instance_normalization"
    x = float_variable(as_variable(x))
    c, batch = _channel_and_batch(fname, x.ndim, channel_axis, batch_axis)
    out = _normalize_over(fname, x, tuple(sorted((*batch, c))), eps, output_stat)
    y = out[0] if output_stat else out
    y = _scale_shift(fname, y, beta, gamma, no_scale, no_bias, tuple(x.shape))
    return (y, *out[1:]) if output_stat else y


def group_normalization(
    x: Any,
    beta: Any,
    gamma: Any,
    num_groups: int,
    channel_axis: int = 1,
    batch_axis: Any = 0,
    eps: float = 1e-5,
    output_stat: bool = False,
    no_scale: bool = False,
    no_bias: bool = False,
) -> Any:
    """Group normalization (nnabla): the channels split into ``num_groups`` groups, each
    sample's each group normalized over its channels and the other non-batch axes.

    y = (x - mu) / sqrt(sigma2 + eps) * gamma + beta

    For (N, C, H, W), x is viewed as (N, G, C / G, H, W) and mu, sigma2 (biased variance) are
    taken over (C / G, H, W) per (n, g). ``num_groups`` must divide x's size on
    ``channel_axis``; 1 normalizes each sample as a whole, C each channel (instance
    normalization). beta and gamma broadcast against x, typically (1, C, 1, 1); None, or
    ``no_bias``/``no_scale`` True, omits the term. With output_stat=True returns
    (y, mu, sigma2), the statistics of the grouped view (e.g. (N, G, 1, 1, 1)).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.array([[[1.0], [3.0], [2.0], [6.0]]], np.float32))
        >>> F.group_normalization(x, None, None, num_groups=2).d.ravel().round(3)
        array([-1.,  1., -1.,  1.], dtype=float32)
    """
    from gradhub import as_variable

    fname = "group_normalization"
    x = float_variable(as_variable(x))
    c, batch = _channel_and_batch(fname, x.ndim, channel_axis, batch_axis)
    if not is_int(num_groups):
        raise TypeError(f"{fname}(): argument 'num_groups' must be an int, got {num_groups!r}")
    g = int(num_groups)
    nc = x.shape[c]
    if g < 1 or nc % g:
        raise ValueError(
            f"{fname}(): argument 'num_groups' must be >= 1 and divide the "
            f"{nc} channels of x (axis {c}), got {num_groups!r}"
        )
    shape = (*x.shape[:c], g, nc // g, *x.shape[c + 1 :])
    keep = tuple(sorted((*(a if a < c else a + 1 for a in batch), c)))
    out = _normalize_over(fname, _call("Reshape", x, shape=shape), keep, eps, output_stat)
    y = _call("Reshape", out[0] if output_stat else out, shape=tuple(x.shape))
    y = _scale_shift(fname, y, beta, gamma, no_scale, no_bias, tuple(x.shape))
    return (y, *out[1:]) if output_stat else y


def _norm_ref(x: np.ndarray, keep: Sequence[int], eps: float) -> tuple[np.ndarray, ...]:
    """(y, mu, var): x normalized per index of the axes ``keep`` (explicit loops)."""
    red = [i for i in range(x.ndim) if i not in keep]
    xt = np.transpose(x, [*keep, *red])
    rows = xt.reshape(math.prod(x.shape[i] for i in keep), -1)
    mu = np.array([sum(r) / len(r) for r in rows])
    var = np.array([sum((v - m) ** 2 for v in r) / len(r) for r, m in zip(rows, mu)])
    y = ((rows - mu[:, None]) / np.sqrt(var[:, None] + eps)).reshape(xt.shape)
    kshape = [x.shape[i] if i in keep else 1 for i in range(x.ndim)]
    return (np.transpose(y, np.argsort([*keep, *red])), mu.reshape(kshape), var.reshape(kshape))


def _ref_affine(y: np.ndarray, beta: Any, gamma: Any, no_scale: bool, no_bias: bool) -> np.ndarray:
    if gamma is not None and not no_scale:
        y = y * gamma
    if beta is not None and not no_bias:
        y = y + beta
    return y


def _ref_axes(ndim: int, channel_axis: int, batch_axis: Any) -> tuple[int, list[int]]:
    b = [batch_axis] if isinstance(batch_axis, int) else list(batch_axis)
    return channel_axis % ndim, [a % ndim for a in b]


def _instance_normalization_ref(
    x: np.ndarray,
    beta: Any,
    gamma: Any,
    channel_axis: int = 1,
    batch_axis: Any = 0,
    eps: float = 1e-5,
    output_stat: bool = False,
    no_scale: bool = False,
    no_bias: bool = False,
) -> Any:
    c, b = _ref_axes(x.ndim, channel_axis, batch_axis)
    y, mu, var = _norm_ref(x, sorted([*b, c]), eps)
    y = _ref_affine(y, beta, gamma, no_scale, no_bias)
    return (y, mu, var) if output_stat else y


def _group_normalization_ref(
    x: np.ndarray,
    beta: Any,
    gamma: Any,
    num_groups: int,
    channel_axis: int = 1,
    batch_axis: Any = 0,
    eps: float = 1e-5,
    output_stat: bool = False,
    no_scale: bool = False,
    no_bias: bool = False,
) -> Any:
    c, b = _ref_axes(x.ndim, channel_axis, batch_axis)
    y = np.empty_like(x)
    per = x.shape[c] // num_groups
    mus, vs = [], []
    for gi in range(num_groups):  # each group's channels normalized as one instance
        sl = (slice(None),) * c + (slice(gi * per, (gi + 1) * per),)
        part, mu, var = _norm_ref(x[sl], sorted(b), eps)
        y[sl] = part
        mus.append(np.expand_dims(mu, c))
        vs.append(np.expand_dims(var, c))
    y = _ref_affine(y, beta, gamma, no_scale, no_bias)
    if not output_stat:
        return y
    return y, np.concatenate(mus, axis=c), np.concatenate(vs, axis=c)


def _x_and_params(rng: np.random.Generator) -> tuple[Any, Any]:
    """Two sample makers: ``x(shape)`` (uniform: see _bn_samples) and ``p(shape)``, a (beta,
    gamma) pair with gamma away from 0."""

    def x(shape: tuple[int, ...]) -> np.ndarray:
        return rng.uniform(-2.0, 2.0, shape)

    def p(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        return rng.standard_normal(shape), rng.uniform(0.5, 1.5, shape)

    return x, p


def _in_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x, p = _x_and_params(rng)
    yield Sample((x((2, 3, 4)), *p((1, 3, 1))), name="1d")
    yield Sample((x((2, 3, 2, 2)), *p((1, 3, 1, 1))), {"eps": 1e-3}, name="2d")
    yield Sample((x((2, 2, 3, 2)), *p((1, 1, 1, 2))), {"channel_axis": -1}, name="channel last")
    yield Sample(
        (x((2, 2, 3, 3)), *p((1, 1, 3, 1))),
        {"channel_axis": 2, "batch_axis": (0, 1)},
        name="two batch axes",
    )
    yield Sample(
        (x((2, 3, 4)), *p((1, 3, 1))),
        {"no_scale": True, "no_bias": True},
        grad_inputs=(0,),
        name="no scale, no bias",
    )
    yield Sample((x((2, 3, 4)), *p((1, 3, 1))), {"output_stat": True}, name="output_stat")
    yield Sample((x((4, 3, 2)).transpose(2, 1, 0), *p((1, 3, 1))), name="non-contiguous")


def _gn_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x, p = _x_and_params(rng)
    yield Sample((x((2, 6, 3)), *p((1, 6, 1))), {"num_groups": 3}, name="1d 3 groups")
    yield Sample(
        (x((2, 4, 2, 2)), *p((1, 4, 1, 1))), {"num_groups": 2, "eps": 1e-3}, name="2d 2 groups"
    )
    yield Sample((x((2, 3, 3)), *p((1, 3, 1))), {"num_groups": 1}, name="one group")
    yield Sample((x((2, 3, 3)), *p((1, 3, 1))), {"num_groups": 3}, name="a group per channel")
    yield Sample(
        (x((2, 3, 4)), *p((1, 1, 4))), {"num_groups": 2, "channel_axis": -1}, name="channel last"
    )
    yield Sample(
        (x((2, 2, 4, 2)), *p((1, 1, 4, 1))),
        {"num_groups": 2, "channel_axis": 2, "batch_axis": (0, 1)},
        name="two batch axes",
    )
    yield Sample(
        (x((2, 4, 2)), *p((1, 4, 1))),
        {"num_groups": 2, "no_scale": True},
        grad_inputs=(0, 1),
        name="no scale",
    )
    yield Sample(
        (x((2, 4, 3)), *p((1, 4, 1))), {"num_groups": 2, "output_stat": True}, name="output_stat"
    )


def register_functions(register: Any) -> None:
    """Register the normalization functions."""
    bn = register.function(
        "BatchNormalization",
        _batch_normalization,
        inputs=("x", "beta", "gamma", "mean", "variance"),
        attrs={"axes": (1,), "decay_rate": 0.9, "eps": 1e-5, "batch_stat": True},
        rule=_batch_normalization_bw,
        fast_backward=_batch_normalization_fast,
        need_inputs=(0, 2, 3, 4),
        need_outputs=(),
        samples=_bn_samples,
        reference=_batch_normalization_ref,
        doc=_DOC_BN,
    )
    _bn_api(bn)
    register.function(
        "FusedBatchNormalization",
        _fused_batch_normalization,
        inputs=("x", "beta", "gamma", "mean", "variance", "z?"),
        attrs={
            "axes": (1,),
            "decay_rate": 0.9,
            "eps": 1e-5,
            "batch_stat": True,
            "nonlinearity": "relu",
        },
        rule=_fused_batch_normalization_bw,
        fast_backward=_fused_batch_normalization_fast,
        need_inputs=(0, 2, 3, 4),
        need_outputs=(0,),
        samples=_fbn_samples,
        reference=_fused_batch_normalization_ref,
        doc=_DOC_FBN,
    )
    register.function(
        "Standardize",
        _standardize,
        inputs=("x",),
        attrs={"axis": None, "eps": 1e-5},
        rule=_standardize_bw,
        fast_backward=_standardize_fast,
        need_inputs=(0,),
        need_outputs=(),
        samples=_standardize_samples,
        reference=_standardize_ref,
        doc=_DOC_STANDARDIZE,
    )
    register.function(
        "StandardizeAffine",
        _standardize_affine,
        inputs=("x", "gamma", "beta"),
        attrs={"axis": None, "eps": 1e-5},
        rule=_standardize_affine_bw,
        fast_backward=_standardize_affine_fast,
        need_inputs=(0, 1, 2),
        need_outputs=(),
        samples=_standardize_affine_samples,
        reference=_standardize_affine_ref,
        doc=_DOC_STANDARDIZE_AFFINE,
    )
    register.composite(
        "LayerNormalization",
        layer_normalization,
        samples=_ln_samples,
        reference=_layer_normalization_ref,
    )
    register.composite(
        "InstanceNormalization",
        instance_normalization,
        samples=_in_samples,
        reference=_instance_normalization_ref,
    )
    register.composite(
        "GroupNormalization",
        group_normalization,
        samples=_gn_samples,
        reference=_group_normalization_ref,
    )
