"""mxnet's ``mx.base`` errors: :class:`MXNetError` (a RuntimeError, as mxnet's) and
:class:`NotImplementedForSymbol`.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1000, name="fc1")
    >>> try:
    ...     fc.infer_shape(data=(10, 100), fc1_weight=(1, 100))
    ... except mx.base.MXNetError as e:
    ...     print(str(e).split("Error in ")[1].split(" (argument")[0])
    operator fc1: Shape inconsistent, Provided = [1,100], inferred shape=(1000,100)
"""

from __future__ import annotations

import numpy as np

__all__ = ["MXNetError", "NotImplementedForSymbol", "mx_real_t"]

mx_real_t = np.float32
"""mxnet's default real dtype (``numpy.float32``)."""


class MXNetError(RuntimeError):
    """The error mxnet raises for operator and shape errors (``mx.base.MXNetError``)."""


class NotImplementedForSymbol(MXNetError):
    """An NDArray operation used on a Symbol (``bool(symbol)``), as mxnet's."""

    def __init__(self, function: str, alias: str | None) -> None:
        self.function = function
        self.alias = alias
        super().__init__(
            f"Function {function}"
            + (f' (namely operator "{alias}")' if alias else "")
            + " is not implemented for Symbol and only available in NDArray."
        )


class _MXNetValueError(MXNetError, ValueError):
    """An MXNetError (as mxnet raises) that is also the ValueError earlier versions raised."""


class _MXNetTypeError(MXNetError, TypeError):
    """An MXNetError (as mxnet raises) that is also the TypeError earlier versions raised."""
