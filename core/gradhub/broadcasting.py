"""Summing a broadcast gradient back to an input's shape, for backward rules.

A function that broadcasts its inputs (``x0 + x1`` with shapes ``(2, 3)`` and ``(3,)``) gets an
output gradient of the broadcast shape; each input's gradient is that gradient summed over the
axes broadcasting added or stretched. Rules of plugins use these two helpers as the core's do:

- :func:`sum_to` on Variables, in graph rules: written with the registered functions ``Sum`` and
  ``Reshape``, so the result is differentiable again (higher-order gradients);
- :func:`sum_to_array` on arrays of any device, in array-level ("fast") first-order rules.

Example::

    >>> import numpy as np
    >>> from gradhub.broadcasting import sum_to_array
    >>> sum_to_array(np.ones((2, 3)), (3,))
    array([2., 2., 2.])
    >>> sum_to_array(np.ones((2, 3)), (2, 1))
    array([[3.],
           [3.]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .ops import call

__all__ = ["broadcast_axes", "sum_to", "sum_to_array"]


def broadcast_axes(gshape: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The axes of a gradient of shape ``gshape`` that broadcasting added to, or stretched in, an
    input of shape ``shape`` (the leading added axes, then the size-1 axes of ``shape`` that are
    not 1 in ``gshape``)."""
    lead = len(gshape) - len(shape)
    return tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and gshape[i + lead] != 1
    )


def sum_to(g: Any, shape: Sequence[int]) -> Any:
    """Sum the broadcast gradient ``g`` (a Variable) back down to ``shape`` (differentiable).

    ``g`` itself when it already has that shape; else ``Sum`` over :func:`broadcast_axes` with
    ``keepdims=True`` and a ``Reshape`` to ``shape``.
    """
    shape = tuple(shape)
    if g.shape == shape:
        return g
    axes = broadcast_axes(g.shape, shape)
    s = call("Sum", g, axis=axes, keepdims=True) if axes else g
    return call("Reshape", s, shape=shape) if s.shape != shape else s


def sum_to_array(g: Any, shape: Sequence[int]) -> Any:
    """Array version of :func:`sum_to`: ``g`` (an array of any device) summed to ``shape``."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    axes = broadcast_axes(g.shape, shape)
    return (g.sum(axis=axes, keepdims=True) if axes else g).reshape(shape)
