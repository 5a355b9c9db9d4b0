"""nnabla's functions: ``import gradhub_compat.nnabla.functions as F``.

Every function registered in gradhub (``gradhub.functions``: nnabla names and arguments, e.g.
``F.convolution``, ``F.max_pooling``, ``F.softmax_cross_entropy``) is offered here, with its
Variable results adopted as :class:`gradhub_compat.nnabla.Variable` (so ``.g`` is an array and
``backward`` has nnabla's signature). Looking a name up loads the plugins, as in
``gradhub.functions``.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.functions as F
    >>> x = nn.Variable.from_numpy_array(np.array([1.0, 2.0, 3.0]))
    >>> F.sum(x * 2.0).d
    array(12., dtype=float32)
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from gradhub import functions as _native
from gradhub.device import context_device
from gradhub.variable import Variable as _NativeVariable

from .._common import adopt, wrap_function, wrapped_attribute
from ._auto_forward import kept_unless_auto_forward, running_array
from ._variable import Variable

_wrappers: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {}


def constant(val: float = 0, shape: Iterable[int] = ()) -> Variable:
    """A Variable of ``shape`` filled with ``val`` that needs no gradient (nnabla's F.constant).

    Example::

        >>> import gradhub_compat.nnabla.functions as F
        >>> F.constant(2.5, (2,)).d
        array([2.5, 2.5], dtype=float32)
    """
    dev = context_device()
    with dev.activate():
        arr = dev.xp.full(tuple(int(s) for s in shape), val, dtype=np.float32)
    v = Variable.__new__(Variable)
    _NativeVariable.__init__(v, arr, need_grad=False)
    return v


def _batch_normalization(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``F.batch_normalization`` that, while auto_forward is off (nnabla's default), leaves the
    running ``mean``/``variance`` as they were before the build: only ``forward()`` updates them
    (see :mod:`gradhub_compat.nnabla._auto_forward`)."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            return adopt(fn(*args, **kwargs), Variable)  # the native call names the problem
        a = bound.arguments
        stats = [running_array(a.get("mean")), running_array(a.get("variance"))]
        with kept_unless_auto_forward(stats if a.get("batch_stat", True) else []):
            return adopt(fn(*args, **kwargs), Variable)

    return wrapped


def _wrap(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    if name == "batch_normalization":
        return _batch_normalization(fn)
    return wrap_function(fn, Variable, name)


def __getattr__(name: str) -> Any:
    return wrapped_attribute(__name__, _native, name, _wrappers, lambda fn: _wrap(fn, name))


def __dir__() -> list[str]:
    return sorted({*_native.__dir__(), "constant"})
