"""``mx.nd.sample_multinomial`` of mxnet 1.9.1: draws class indices from the probabilities on
the last axis of ``data`` (gradhub's generator, seeded by ``mx.random.seed``) and, with
``get_prob=True``, the log-probability of each draw, recorded by ``mx.autograd`` (its gradient
with respect to ``data`` is the head gradient divided by the drawn probability, as mxnet's).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> p = mx.nd.array([[0.0, 1.0], [1.0, 0.0]])
    >>> mx.nd.sample_multinomial(p).asnumpy()
    array([1, 0], dtype=int32)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .base import MXNetError
from .ndarray import NDArray

__all__ = ["sample_multinomial"]

_DOCS = "docs/migration-mxnet.md"


def sample_multinomial(
    data: NDArray,
    shape: Any = (),
    get_prob: bool = False,
    out: Any = None,
    dtype: Any = "int32",
    name: Any = None,
    **kwargs: Any,
) -> Any:
    """Draw from the categorical distributions of the last axis of ``data`` (probabilities, not
    renormalized: index ``j`` is drawn when the running sum ``p[0] + ... + p[j]`` first exceeds
    a uniform draw in [0, 1), the last index when none does, as mxnet's kernel). The result has
    shape ``data.shape[:-1] + shape`` (``(1,)`` for 1-D data and no ``shape``, as mxnet) and
    dtype ``dtype``; ``get_prob=True`` returns ``[samples, log_prob]``, ``log_prob`` =
    ``log(data[..., sample])``, recorded (gradient ``head / data[..., sample]`` at each drawn
    index). Integer ``data`` raises MXNetError, ``out=`` NotImplementedError.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> p = mx.nd.array([0.0, 0.0, 1.0])
        >>> p.attach_grad()
        >>> with mx.autograd.record():
        ...     s, logp = mx.nd.sample_multinomial(p, get_prob=True)
        >>> logp.backward()
        >>> s.asnumpy(), p.grad.asnumpy()
        (array([2], dtype=int32), array([0., 0., 1.], dtype=float32))
    """
    from . import _nd_losses, _nd_tensor
    from . import random as _random

    if not isinstance(data, NDArray):
        raise TypeError(
            f"mx.nd.sample_multinomial: data must be an NDArray, got {type(data).__name__}"
        )
    if out is not None:
        raise NotImplementedError(f"mx.nd.sample_multinomial: out= is not supported ({_DOCS})")
    if np.dtype(data.dtype).kind != "f":
        raise MXNetError(
            "mx.nd.sample_multinomial: This operation only support floating point types, not "
            f"{np.dtype(data.dtype).name}"
        )
    extra = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    k = data.shape[-1]
    lead = data.shape[:-1]
    n, m = math.prod(lead), math.prod(extra)
    probs = data.asnumpy().reshape(n, k)
    u = _random.uniform(0.0, 1.0, shape=(n, m)).asnumpy()
    above = np.cumsum(probs, axis=1)[:, None, :] > u[:, :, None]  # (n, m, k)
    idx = np.where(above.any(axis=2), above.argmax(axis=2), k - 1)
    out_shape = (lead + extra) or (1,)
    samples = NDArray(idx.reshape(out_shape).astype(np.dtype(dtype)), data.context)
    if not get_prob:
        return samples
    flat = data.reshape((n, 1, k))
    if m != 1:
        flat = _nd_tensor.broadcast_to(flat, shape=(n, m, k))
    picked = _nd_losses.pick(flat, NDArray(idx.astype(data.dtype), data.context), axis=2)
    return [samples, picked.log().reshape(out_shape)]
