"""Gluon's utilities (``mx.gluon.utils``): ``split_data``, ``split_and_load`` and
``clip_global_norm``, as mxnet 1.9.1.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> parts = mx.gluon.utils.split_data(mx.nd.ones((4, 2)), 2)
    >>> [p.shape for p in parts]
    [(2, 2), (2, 2)]
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import ndarray as nd
from ..ndarray import NDArray

__all__ = ["clip_global_norm", "split_and_load", "split_data"]


def split_data(
    data: NDArray, num_slice: int, batch_axis: int = 0, even_split: bool = True
) -> list[NDArray]:
    """``data`` cut into ``num_slice`` parts along ``batch_axis`` (the first parts one longer
    when the size does not divide and ``even_split=False``; else ``ValueError``)."""
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            f"data with shape {data.shape} cannot be evenly split into {num_slice} slices along "
            f"axis {batch_axis}. Use a batch size that's multiple of {num_slice} or set "
            "even_split=False to allow uneven partitioning of data."
        )
    each, extras = divmod(size, num_slice)
    sizes = [0] + extras * [each + 1] + (num_slice - extras) * [each]
    points = np.cumsum(sizes)
    out = []
    for i in range(num_slice):
        key = [slice(None)] * data.ndim
        key[batch_axis] = slice(int(points[i]), int(points[i + 1]))
        out.append(data[tuple(key)])
    return out


def split_and_load(
    data: Any, ctx_list: list[Any], batch_axis: int = 0, even_split: bool = True
) -> list[NDArray]:
    """``data`` split (:func:`split_data`) and each part copied to one context of
    ``ctx_list``."""
    if not isinstance(data, NDArray):
        data = nd.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(c) for s, c in zip(slices, ctx_list)]


def clip_global_norm(arrays: list[NDArray], max_norm: float, check_isfinite: bool = True) -> Any:
    """Scale ``arrays`` in place by ``min(1, max_norm / (norm + 1e-8))``, ``norm`` the 2-norm
    of all their elements together; returns ``norm`` (a float; an NDArray of shape (1,) when
    ``check_isfinite=False``). A NaN or infinite norm warns."""
    if not arrays:
        raise AssertionError("gluon.utils.clip_global_norm: arrays is empty")
    ctx = arrays[0].context
    total = float(sum(float(np.sum(np.square(a.asnumpy(), dtype=np.float64))) for a in arrays))
    norm = np.float32(np.sqrt(np.float32(total)))
    if check_isfinite and not np.isfinite(norm):
        warnings.warn(
            UserWarning("nan or inf is detected. Clipping results will be undefined."),
            stacklevel=2,
        )
    scale = min(np.float32(max_norm) / (norm + np.float32(1e-8)), np.float32(1.0))
    with np.errstate(invalid="ignore", over="ignore"):  # (NaN results, as mxnet)
        for a in arrays:
            a *= float(scale)
    if check_isfinite:
        return norm
    return nd.array([norm], ctx=ctx)
