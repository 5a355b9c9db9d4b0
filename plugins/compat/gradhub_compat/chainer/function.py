"""chainer's ``chainer.function`` module path (``from chainer import function``;
``class F(function.Function)``): the old-style :class:`Function` and its
:class:`FunctionAdapter` (defined in :mod:`gradhub_compat.chainer.function_node`), and the
backprop-mode context managers.

Example::

    >>> import numpy as np
    >>> from gradhub_compat.chainer import function
    >>> class Twice(function.Function):
    ...     def forward(self, inputs):
    ...         return inputs[0] * 2,
    >>> Twice()(np.array([1.0])).array
    array([2.])
"""

from __future__ import annotations

from . import force_backprop_mode, no_backprop_mode
from .function_node import Function, FunctionAdapter

__all__ = ["Function", "FunctionAdapter", "force_backprop_mode", "no_backprop_mode"]
