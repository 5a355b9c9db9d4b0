"""chainer 7.8.1's ``chainer/functions/normalization`` functions beyond the core of
:mod:`gradhub_compat.chainer.functions` (which re-exports them): ``normalize``,
``layer_normalization``, ``group_normalization``, ``local_response_normalization``,
``batch_renormalization``, ``fixed_batch_renormalization``, ``decorrelated_batch_normalization``
and ``fixed_decorrelated_batch_normalization`` (``batch_normalization`` and
``fixed_batch_normalization`` are in :mod:`gradhub_compat.chainer._training_functions`).

``decorrelated_batch_normalization`` keeps chainer's hand-written gradient, which refuses to be
differentiated again; the others are compositions of the registered gradhub functions."""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
from gradhub.variable import Variable as _NativeVariable

from ..._common import call_native as _call
from ..._common import device_array
from .. import Variable
from .. import functions as F
from ..function_node import FunctionNode
from ..functions import _as_dtype, _check_float, _dtype, _out, _shape
from ._common import _fdtype, _invalid, _kind, _xp_of

__all__ = [
    "batch_renormalization",
    "decorrelated_batch_normalization",
    "fixed_batch_renormalization",
    "fixed_decorrelated_batch_normalization",
    "group_normalization",
    "layer_normalization",
    "local_response_normalization",
    "normalize",
]


def batch_renormalization(
    x: Any,
    gamma: Any,
    beta: Any,
    rmax: float,
    dmax: float,
    eps: float = 2e-5,
    running_mean: Any = None,
    running_var: Any = None,
    decay: float = 0.9,
    update_statistics: bool = False,
) -> Variable:
    """Batch renormalization (training mode only, as chainer): with the batch statistics
    ``mean``, ``var`` over every axis but those of ``gamma`` (which follow the batch axis) and
    ``std = sqrt(var + eps)``, ``r = clip(std / sqrt(running_var + eps), 1 / rmax, rmax)`` and
    ``d = clip((mean - running_mean) / sqrt(running_var + eps), -dmax, dmax)``,
    ``y = gamma ((x - mean) / std * r + d) + beta``; ``r`` and ``d`` are constants of the
    gradient, as chainer's. ``running_mean`` and ``running_var`` (arrays of gamma's shape) are
    required; with ``update_statistics`` they are updated in place afterwards
    (``decay * old + (1 - decay) * batch``, the variance unbiased), as chainer. A composition of
    gradhub functions, so the gradient (chainer's) can be differentiated again (chainer's, an
    old-style Function, cannot).

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[1.0], [3.0]], np.float32)
        >>> one, zero = np.ones(1, np.float32), np.zeros(1, np.float32)
        >>> with chainer.using_config("train", True):
        ...     y = F.batch_renormalization(x, one, zero, 1.0, 0.0, eps=0.0,
        ...                                 running_mean=zero.copy(), running_var=one.copy())
        >>> y
        variable([[-1.],
                  [ 1.]])
    """
    from .. import config

    if running_mean is None:
        raise TypeError("running_mean is required")
    if running_var is None:
        raise TypeError("running_var is required")
    label = "BatchRenormalizationFunction"
    xs, gs = _shape(x), _shape(gamma)
    m_nd = len(gs)
    if (
        _kind(x) != "f"
        or len(xs) < m_nd + 1
        or xs[1 : 1 + m_nd] != gs
        or _kind(gamma) != "f"
        or _dtype(gamma) != _dtype(beta)
        or gs != _shape(beta)
    ):
        raise _invalid(
            label,
            "x.dtype.kind == f, x.ndim >= gamma.ndim + 1, x.shape[1:1 + M] == gamma.shape, "
            "gamma.dtype == beta.dtype, gamma.shape == beta.shape",
            f"x {xs} {_dtype(x)}, gamma {gs} {_dtype(gamma)}, beta {_shape(beta)} {_dtype(beta)}",
        )
    if not config.train:
        raise RuntimeError(
            "chainer F.batch_renormalization computes in training mode only "
            "(chainer.config.train is False; chainer asserts it)"
        )
    gdt = np.dtype(_dtype(gamma))
    head = m_nd + 1
    axes = (0, *range(head, len(xs)))
    expand = (1, *gs) + (1,) * (len(xs) - head)
    xc = x if np.dtype(_dtype(x)) == gdt else F.cast(x, gdt)
    mean = F.mean(xc, axis=axes)
    diff = xc - F.broadcast_to(F.reshape(mean, expand), xs)
    var = F.mean(diff * diff, axis=axes)
    std = F.sqrt(var + eps)
    rm = device_array(running_mean)
    rv = device_array(running_var)
    running_sigma = np.sqrt(rv + eps, dtype=rm.dtype)
    r = np.clip(std.array / running_sigma, 1.0 / rmax, rmax)
    d = np.clip((mean.array - rm) / running_sigma, -dmax, dmax)
    x_hat = diff / F.broadcast_to(F.reshape(std, expand), xs)
    renorm = x_hat * F.broadcast_to(F._const(r.astype(gdt).reshape(expand), x), xs)
    renorm = renorm + F.broadcast_to(F._const(d.astype(gdt).reshape(expand), x), xs)
    y = F.broadcast_to(F.reshape(gamma, expand), xs) * renorm
    y = y + F.broadcast_to(F.reshape(beta, expand), xs)
    if update_statistics:
        m = int(np.prod(xs)) // int(np.prod(gs))
        adjust = m / max(m - 1.0, 1.0)
        running_mean *= decay
        running_mean += mean.array * (1 - decay)
        running_var *= decay
        running_var += var.array * ((1 - decay) * adjust)
    return cast(Variable, y) if y.dtype == np.dtype(_dtype(x)) else F.cast(y, _dtype(x))


def fixed_batch_renormalization(
    x: Any, gamma: Any, beta: Any, mean: Any, var: Any, eps: float = 2e-5
) -> Variable:
    """Deprecated in chainer (its ``DeprecationWarning``): :func:`fixed_batch_normalization`
    in test mode."""
    import warnings

    from .. import using_config
    from .._training_functions import fixed_batch_normalization

    warnings.warn(
        "fixed_batch_renormalization is deprecated. Use fixed_batch_normalization instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    with using_config("train", False):
        return fixed_batch_normalization(x, gamma, beta, mean, var, eps)


def _group_layout(shape: tuple[int, ...], groups: int) -> tuple[tuple[int, ...], int, int]:
    b, c = shape[:2]
    spatial = tuple(range(2, len(shape)))
    m = b
    for i in spatial:
        m *= shape[i]
    return spatial, m, c // groups


def _decorrelated_check(label: str, x: Any, groups: int) -> None:
    s = _shape(x)
    if _kind(x) != "f" or len(s) < 2 or s[1] % groups:
        raise _invalid(label, f"x.dtype.kind == f, x.ndim >= 2, x.shape[1] % {groups} == 0", f"{s}")


class _DecorrelatedBN(FunctionNode):
    """chainer's ``DecorrelatedBatchNormalization``: ZCA whitening per group of channels with
    the batch covariance (``numpy.linalg.eigh``), its hand-written gradient (first order only:
    it refuses to be differentiated again, as chainer's raises NotImplementedError)."""

    _first_order_only = True

    def __init__(self, groups: int, eps: float, mean: Any, projection: Any, decay: float) -> None:
        self.groups = groups
        self.eps = eps
        self.running_mean = mean
        self.running_projection = projection
        self.decay = decay

    @property
    def label(self) -> str:
        return "DecorrelatedBatchNormalization"

    def forward(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        # x is kept so that the gradient is connected to it: differentiating the gradient again
        # then raises (chainer's gives None, a wrong zero)
        self.retain_inputs((0,))
        (x,) = inputs
        xp = _xp_of(x)
        shape = x.shape
        b, c = shape[:2]
        g = self.groups
        spatial, m, cg = _group_layout(shape, g)
        x_hat = x.transpose((1, 0, *spatial)).reshape(g, cg, m)
        mean = x_hat.mean(axis=2, keepdims=True)
        x_hat = x_hat - mean
        eps = x.dtype.type(self.eps)
        cov = xp.matmul(x_hat, x_hat.transpose(0, 2, 1)) / x.dtype.type(m) + eps * xp.eye(
            cg, dtype=x.dtype
        )
        self.eigvals, self.eigvectors = xp.linalg.eigh(cov)
        u = xp.matmul(_batch_diag(self.eigvals**-0.5, xp), self.eigvectors.transpose(0, 2, 1))
        self.y_hat_pca = xp.matmul(u, x_hat)
        y_hat = xp.matmul(self.eigvectors, self.y_hat_pca)
        y = y_hat.reshape((c, b, *shape[2:])).transpose((1, 0, *spatial))
        if self.running_mean is not None:
            self.running_mean *= self.decay
            self.running_mean += (1 - self.decay) * mean.squeeze(axis=2)
        if self.running_projection is not None:
            adjust = m / max(m - 1.0, 1.0)
            self.running_projection *= self.decay
            proj = xp.matmul(self.eigvectors, u)
            self.running_projection += (1 - self.decay) * adjust * proj
        return (xp.ascontiguousarray(y),)

    def backward(self, indexes: tuple[int, ...], grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        (gyv,) = grad_outputs
        gy = gyv.array
        xp = _xp_of(gy)
        shape = gy.shape
        b, c = shape[:2]
        g = self.groups
        spatial, m, cg = _group_layout(shape, g)
        ar = np.arange(cg)
        gy_hat = gy.transpose((1, 0, *spatial)).reshape(g, cg, m)
        ev, vec, ypca = self.eigvals, self.eigvectors, self.y_hat_pca
        gy_pca = xp.matmul(vec.transpose(0, 2, 1), gy_hat)
        f = gy_pca.mean(axis=2, keepdims=True)
        k = ev[:, :, None] - ev[:, None, :]
        valid = k != 0
        k[valid] = xp.reciprocal(k[valid])
        v = _batch_diag(ev, xp)
        v_sqrt = _batch_diag(ev**0.5, xp)
        v_invsqrt = _batch_diag(ev**-0.5, xp)
        f_c = xp.matmul(gy_pca, ypca.transpose(0, 2, 1)) / gy.dtype.type(m)
        mm = xp.zeros_like(f_c)
        mm[:, ar, ar] = f_c[:, ar, ar]
        mat = k.transpose(0, 2, 1) * (
            xp.matmul(v, f_c.transpose(0, 2, 1)) + xp.matmul(xp.matmul(v_sqrt, f_c), v_sqrt)
        )
        s = mat + mat.transpose(0, 2, 1)
        r = gy_pca - f + xp.matmul((s - mm).transpose(0, 2, 1), ypca)
        gx_hat = xp.matmul(
            xp.matmul(r.transpose(0, 2, 1), v_invsqrt), vec.transpose(0, 2, 1)
        ).transpose(0, 2, 1)
        gx = gx_hat.reshape((c, b, *shape[2:])).transpose((1, 0, *spatial))
        return (Variable(xp.ascontiguousarray(gx).astype(gy.dtype), requires_grad=False),)


def _batch_diag(a: Any, xp: Any) -> Any:
    s0, s1 = a.shape
    ret = xp.zeros((s0, s1, s1), a.dtype)
    ar = np.arange(s1)
    ret[:, ar, ar] = a
    return ret


def decorrelated_batch_normalization(x: Any, **kwargs: Any) -> Variable:
    """Decorrelated batch normalization (ZCA whitening of each group of ``x.shape[1] /
    groups`` channels over the batch and spatial axes), chainer's keywords ``groups=16``,
    ``eps=2e-5``, ``running_mean=None`` (g, C / g), ``running_projection=None`` (g, C / g,
    C / g) (updated in place when given, as chainer), ``decay=0.9``. chainer's forward and its
    hand-written gradient, first order only (differentiating it again raises, as chainer).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[1.0, 2.0], [-1.0, -2.0]], np.float32)
        >>> F.decorrelated_batch_normalization(x, groups=2).array.round(3)
        array([[ 1.,  1.],
               [-1., -1.]], dtype=float32)
    """
    allowed = {"groups", "eps", "running_mean", "running_projection", "decay"}
    extra = set(kwargs) - allowed
    if extra:
        raise TypeError(f"got unexpected keyword argument(s): {', '.join(sorted(extra))}")
    groups = kwargs.get("groups", 16)
    _decorrelated_check("DecorrelatedBatchNormalization", x, groups)
    node = _DecorrelatedBN(
        groups,
        kwargs.get("eps", 2e-5),
        kwargs.get("running_mean"),
        kwargs.get("running_projection"),
        kwargs.get("decay", 0.9),
    )
    return node.apply((x,))[0]


def fixed_decorrelated_batch_normalization(
    x: Any, mean: Any, projection: Any, groups: int = 16
) -> Variable:
    """Decorrelated batch normalization with given statistics: for each group of channels,
    ``projection[g] @ (x_g - mean[g])`` (``mean`` (g, C / g), ``projection`` (g, C / g, C / g),
    of x's dtype). A composition of gradhub functions: the derivatives with respect to x, mean
    and projection, of every order.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[1.0, 2.0]], np.float32)
        >>> proj = np.array([[[2.0]], [[3.0]]], np.float32)
        >>> F.fixed_decorrelated_batch_normalization(x, np.zeros((2, 1), np.float32), proj,
        ...                                          groups=2)
        variable([[2., 6.]])
    """
    label = "FixedDecorrelatedBatchNormalization"
    if _kind(x) != "f" or _dtype(mean) != _dtype(x) or _dtype(projection) != _dtype(x):
        raise _invalid(
            label,
            "x.dtype.kind == f, mean.dtype == x.dtype, projection.dtype == x.dtype",
            f"{_dtype(x)}, {_dtype(mean)}, {_dtype(projection)}",
        )
    shape = _shape(x)
    if len(shape) < 2:
        raise _invalid(label, "x.ndim >= 2", f"{len(shape)} < 2")
    _decorrelated_check(label, x, groups)
    b, c = shape[:2]
    spatial, m, cg = _group_layout(shape, groups)
    x_hat: Any = F.reshape(F.transpose(x, (1, 0, *spatial)), (groups, cg, m))
    x_hat = x_hat - F.broadcast_to(F.expand_dims(mean, 2), (groups, cg, m))
    y_hat = F.matmul(projection, x_hat)
    return F.transpose(F.reshape(y_hat, (c, b, *shape[2:])), (1, 0, *spatial))


def normalize(x: Any, eps: float = 1e-5, axis: Any = 1) -> Variable:
    """``x / (sqrt(sum(x ** 2, axis)) + eps)``: each vector along ``axis`` (an int or a tuple)
    scaled to unit L2 norm.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.normalize(np.array([[3.0, 4.0]], np.float32), eps=0.0)
        variable([[0.6, 0.8]])
    """
    _check_float("normalize", x=x)
    x2 = _call("Mul2", x, x) if isinstance(x, _NativeVariable) else _call("PowScalar", x, val=2.0)
    sq = _call("Sum", x2, axis=axis, keepdims=True)
    # the norm, with the gradient 0 (not nan) at a zero vector, as chainer's backward
    nonzero = _call("GreaterScalar", sq, val=0.0)
    safe = _call("Where", nonzero, sq, _call("AddScalar", _call("MulScalar", sq, val=0.0), val=1.0))
    norm = _call("Where", nonzero, _call("Sqrt", safe), _call("MulScalar", sq, val=0.0))
    norm = _call("AddScalar", norm, val=float(eps))
    return _out(_call("Div2", x, _call("BroadcastTo", norm, shape=_shape(x))))  # type: ignore[no-any-return]


def layer_normalization(x: Any, gamma: Any, beta: Any, eps: float = 1e-5) -> Variable:
    """Each row of x (N, D) normalized, ``(x - mean) / sqrt(var + eps)`` (the biased variance
    of the row), then scaled by gamma (D,) and shifted by beta (D,).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[1.0, 3.0]], np.float32)
        >>> g, b = np.ones(2, np.float32), np.zeros(2, np.float32)
        >>> F.layer_normalization(x, g, b, eps=0.0)
        variable([[-1.,  1.]])
    """
    _check_float("layer_normalization", x=x)
    xs, gs, bs = _shape(x), _shape(gamma), _shape(beta)
    dt = _fdtype(x)
    if (
        len(xs) != 2
        or len(gs) != 1
        or len(bs) != 1
        or _fdtype(gamma) != dt
        or _fdtype(beta) != dt
        or gs != bs
    ):
        raise TypeError(
            f"chainer F.layer_normalization: x must be 2-d and gamma, beta 1-d of one shape "
            f"and x's dtype; got shapes {xs}, {gs}, {bs}"
        )
    mu = _call("Mean", x, axis=1, keepdims=True)
    x_mu = _call("Sub2", x, _call("BroadcastTo", mu, shape=xs))
    var = _call("Mean", _call("Mul2", x_mu, x_mu), axis=1, keepdims=True)
    inv_std = _call("RDivScalar", _call("Sqrt", _call("AddScalar", var, val=float(eps))), val=1.0)
    x_hat = _call("Mul2", x_mu, _call("BroadcastTo", inv_std, shape=xs))
    g = _call("BroadcastTo", _call("Reshape", gamma, shape=(1, *gs)), shape=xs)
    b = _call("BroadcastTo", _call("Reshape", beta, shape=(1, *bs)), shape=xs)
    return _out(_call("Add2", _call("Mul2", x_hat, g), b))  # type: ignore[no-any-return]


def group_normalization(x: Any, groups: int, gamma: Any, beta: Any, eps: float = 1e-5) -> Variable:
    """x (N, C, ...) normalized within each of ``groups`` groups of channels of each sample,
    ``(x - mean) / sqrt(var + eps)`` (the biased variance of the group), then scaled by gamma
    (C,) and shifted by beta (C,) per channel.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[[1.0], [3.0]]], np.float32)
        >>> g, b = np.ones(2, np.float32), np.zeros(2, np.float32)
        >>> F.group_normalization(x, 1, g, b, eps=0.0)
        variable([[[-1.],
                   [ 1.]]])
    """
    if not isinstance(groups, (int, np.integer)) or isinstance(groups, bool):
        raise TypeError("Argument: 'groups' type must be (int).")
    _check_float("group_normalization", x=x, gamma=gamma)
    xs, gs, bs = _shape(x), _shape(gamma), _shape(beta)
    if (
        len(xs) < 2
        or len(gs) != 1
        or len(bs) != 1
        or _fdtype(gamma) != _fdtype(beta)
        or xs[1] != gs[0]
        or gs != bs
    ):
        raise TypeError(
            f"chainer F.group_normalization: x must have 2 axes or more and gamma, beta be 1-d "
            f"of shape (C,), one dtype; got shapes {xs}, {gs}, {bs}"
        )
    if xs[1] % groups:
        raise ValueError(
            f"The number of channels {xs[1]} is not divisible by 'groups' argument {groups}."
        )
    n, c = xs[:2]
    rest = int(math.prod(xs[2:]))
    h = _call("Reshape", x, shape=(n * groups, (c // groups) * rest))
    mu = _call("Mean", h, axis=1, keepdims=True)
    x_mu = _call("Sub2", h, _call("BroadcastTo", mu, shape=tuple(h.shape)))
    var = _call("Mean", _call("Mul2", x_mu, x_mu), axis=1, keepdims=True)
    inv_std = _call("RDivScalar", _call("Sqrt", _call("AddScalar", var, val=float(eps))), val=1.0)
    x_hat = _call("Mul2", x_mu, _call("BroadcastTo", inv_std, shape=tuple(h.shape)))
    x_hat = _call("Reshape", x_hat, shape=(n, c, rest))
    g = _call("BroadcastTo", _call("Reshape", gamma, shape=(1, c, 1)), shape=(n, c, rest))
    b = _call("BroadcastTo", _call("Reshape", beta, shape=(1, c, 1)), shape=(n, c, rest))
    y = _call("Add2", _call("Mul2", x_hat, _as_dtype(g, x_hat.dtype)), _as_dtype(b, x_hat.dtype))
    return _out(_call("Reshape", y, shape=xs))  # type: ignore[no-any-return]


def local_response_normalization(
    x: Any, n: int = 5, k: float = 2, alpha: float = 1e-4, beta: float = 0.75
) -> Variable:
    """``y[:, c] = x[:, c] / (k + alpha * sum(x[:, c'] ** 2)) ** beta`` over the channels
    ``c - n // 2 <= c' <= c + n // 2`` (axis 1; x has 2 axes or more).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.local_response_normalization(np.ones((1, 3), np.float32), n=3, k=1, alpha=1,
        ...                                beta=1)
        variable([[0.33333334, 0.25      , 0.33333334]])
    """
    _check_float("local_response_normalization", x=x)
    xs = _shape(x)
    if len(xs) < 2:
        raise TypeError("chainer F.local_response_normalization: x.ndim >= 2 is required")
    half = n // 2
    x2 = _call("Mul2", x, x) if isinstance(x, _NativeVariable) else _call("PowScalar", x, val=2.0)
    widths = (half, half) + (0, 0) * (len(xs) - 2)
    padded = _call("Pad", x2, pad_width=widths, mode="constant", constant_value=0.0)
    c = xs[1]
    parts = [
        _call("GetItem", padded, key=(slice(None), slice(i, i + c))) for i in range(2 * half + 1)
    ]
    total = parts[0] if len(parts) == 1 else _call("AddN", *parts)
    unit = _call("AddScalar", _call("MulScalar", total, val=float(alpha)), val=float(k))
    return _out(_call("Mul2", x, _call("PowScalar", unit, val=-float(beta))))  # type: ignore[no-any-return]
