"""chainer 7.8.1's ``chainer/functions/noise`` functions beyond the core of
:mod:`gradhub_compat.chainer.functions` (which re-exports them): ``gaussian``,
``gumbel_softmax``, ``simplified_dropconnect`` and ``zoneout``, their noise drawn from numpy's
global generator as chainer's."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from gradhub.variable import Variable as _NativeVariable

from ..._common import device_array
from .. import Variable
from .. import functions as F
from ..functions import _call, _dtype, _out, _shape
from ._common import _constant, _invalid, _kind

__all__ = ["gaussian", "gumbel_softmax", "simplified_dropconnect", "zoneout"]


def gaussian(mean: Any, ln_var: Any, **kwargs: Any) -> Any:
    """A sample ``mean + exp(ln_var / 2) * eps`` of N(mean, exp(ln_var)), ``eps`` drawn from
    numpy's global generator (``numpy.random.standard_normal(ln_var.shape)`` cast to mean's
    dtype, as chainer on the CPU; so after the same ``numpy.random.seed`` the sample is
    chainer's), or the given ``eps=``; ``return_eps=True`` returns ``(y, eps)``. It samples in
    test mode too, as chainer.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> m = np.zeros(2, np.float32)
        >>> F.gaussian(m, m, eps=np.array([0.5, -1.0], np.float32))
        variable([ 0.5, -1. ])
    """
    eps = kwargs.pop("eps", None)
    return_eps = kwargs.pop("return_eps", False)
    if kwargs:
        raise TypeError(f"gaussian() got unexpected keyword argument(s) {', '.join(kwargs)}")
    mdt, vdt = _dtype(mean), _dtype(ln_var)
    if mdt is None or np.dtype(mdt).kind != "f":
        raise _invalid("Gaussian", "mean.dtype.kind == f", f"{mdt} != f")
    if mdt != vdt:
        raise _invalid("Gaussian", "mean.dtype == ln_var.dtype", f"{mdt} != {vdt}")
    if _shape(mean) != _shape(ln_var):
        raise _invalid(
            "Gaussian", "mean.shape == ln_var.shape", f"{_shape(mean)} != {_shape(ln_var)}"
        )
    if eps is None:
        eps = np.random.standard_normal(_shape(ln_var)).astype(mdt, copy=False)
        like = ln_var if isinstance(ln_var, _NativeVariable) else mean
        dev = like.device if isinstance(like, _NativeVariable) else None
        if dev is not None and dev.xp is not np:
            eps = dev.asarray(eps)
    noise = _call("Mul2", F.exp(_call("MulScalar", ln_var, val=0.5)), F._const(eps, ln_var))
    y = _out(_call("Add2", mean, noise))
    return (y, eps) if return_eps else y


def gumbel_softmax(log_pi: Any, tau: float = 0.1, axis: int = 1) -> Variable:
    """A sample of the Gumbel-softmax distribution: ``softmax((log_pi + g) / tau, axis)``, the
    Gumbel noise ``g`` drawn from numpy's global generator
    (``numpy.random.gumbel(size=log_pi.shape)``, as chainer on the CPU); a 0-d ``log_pi``
    gives a constant 1.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.gumbel_softmax(np.log(np.full((1, 3), 1 / 3, np.float32))).shape
        (1, 3)
    """
    dt = getattr(log_pi, "dtype", None)
    if dt is None:
        raise TypeError("chainer F.gumbel_softmax: log_pi must be a Variable or an array")
    if len(_shape(log_pi)) < 1:
        return _constant(np.ones((), dt))
    g = np.random.gumbel(size=_shape(log_pi)).astype(dt)
    z = _out(_call("Add2", log_pi, F._const(g, log_pi)))
    return F.softmax(z / tau, axis=axis)  # (chainer's operator: tau cast to the dtype)


def zoneout(h: Any, x: Any, ratio: float = 0.5, **kwargs: Any) -> Variable:
    """Zoneout: in training mode each element is ``h`` with probability ``ratio``, else ``x``
    (the mask ``numpy.random.rand(*x.shape) >= ratio`` picks x, numpy's global generator, as
    chainer on the CPU); in test mode ``x`` itself. The gradients go to the picked operand.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> import gradhub_compat.chainer.functions as F
        >>> with chainer.using_config("train", False):
        ...     F.zoneout(np.zeros(2, np.float32), np.ones(2, np.float32))
        array([1., 1.], dtype=float32)
    """
    from .. import config

    if "train" in kwargs:
        raise ValueError("train argument is not supported anymore. Use chainer.using_config")
    if kwargs:
        raise TypeError(f"got unexpected keyword argument(s): {', '.join(sorted(kwargs))}")
    if not config.train:
        return x  # type: ignore[no-any-return]
    flag_x = np.random.rand(*_shape(x)) >= ratio
    return F.where(flag_x, x, h)


def simplified_dropconnect(
    x: Any,
    W: Any,
    b: Any = None,
    ratio: float = 0.5,
    train: bool = True,
    mask: Any = None,
    use_batchwise_mask: bool = True,
) -> Variable:
    """Linear layer with DropConnect on the weights: ``y[i] = (W * mask[i] / (1 - ratio)) x[i]
    (+ b)``, x (N, ...) flattened to (N, in), W (out, in); the mask (N, out, in) (or (out, in)
    with ``use_batchwise_mask=False``) is ``numpy.random.rand(*shape) >= ratio`` (numpy's
    global generator, as chainer on the CPU) unless given; ``train=False`` means ratio 0 (as
    chainer, this function reads its ``train`` argument, not ``chainer.config.train``).
    A composition of gradhub functions (every order of gradient).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 2), np.float32)
        >>> W = np.ones((1, 2), np.float32)
        >>> F.simplified_dropconnect(x, W, train=False)
        variable([[2.]])
    """
    if not train:
        ratio = 0
    label = "SimplifiedDropconnect"
    xs, ws = _shape(x), _shape(W)
    if (
        _kind(x) != "f"
        or _kind(W) != "f"
        or len(xs) < 2
        or len(ws) != 2
        or int(np.prod(xs[1:])) != ws[1]
    ):
        raise _invalid(
            label,
            "x.dtype.kind == f, W.dtype.kind == f, x.ndim >= 2, W.ndim == 2, "
            "prod(x.shape[1:]) == W.shape[1]",
            f"x {xs} {_dtype(x)}, W {ws} {_dtype(W)}",
        )
    if b is not None and (_dtype(b) != _dtype(x) or _shape(b) != (ws[0],)):
        raise _invalid(
            label, "b.dtype == x.dtype, b.shape == (W.shape[0],)", f"b {_shape(b)} {_dtype(b)}"
        )
    mshape = (xs[0], ws[0], ws[1]) if use_batchwise_mask else (ws[0], ws[1])
    if mask is None:
        m = np.random.rand(*mshape) >= ratio
    else:
        m = device_array(cast(Any, mask).array if isinstance(mask, _NativeVariable) else mask)
        if m.shape != mshape:
            raise _invalid(label, f"mask.shape == {mshape}", f"{m.shape}")
    wdt = np.dtype(_dtype(W))
    scale = wdt.type(1.0 / (1 - ratio))
    xm = F.reshape(x, (xs[0], ws[1]))
    wm = W * scale * F._const(m.astype(wdt), W)  # (N, out, in) or (out, in)
    y: Any
    if use_batchwise_mask:
        y = F.matmul(wm, F.expand_dims(xm, 2))  # (N, out, 1)
    else:
        y = F.matmul(xm, wm, transb=True)
    y = F.reshape(y, (xs[0], ws[0]))
    if y.dtype != np.dtype(_dtype(x)):
        y = F.cast(y, _dtype(x))
    if b is not None:
        y = y + F.broadcast_to(b, y.shape)
    return y
