"""chainer 7.8.1's ``F.add`` (``chainer/functions/math/basic_math.py``; re-exported by
:mod:`gradhub_compat.chainer.functions`)."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from gradhub.variable import Variable as _NativeVariable

from .. import Variable, as_variable
from ..functions import _out
from ._common import _invalid

__all__ = ["add"]


def add(*xs: Any) -> Variable:
    r"""Elementwise sum of the operands, broadcast together: ``add(lhs, rhs)`` is chainer's
    ``lhs + rhs`` (a scalar ``rhs`` or an array is cast to ``lhs``'s dtype; two Variables of
    different dtypes raise chainer's ``InvalidType``), ``add(x0, x1, ..., xn)`` (one, or three
    and more) is chainer's ``MultiAdd``, whose operands (Variables or arrays) must share one
    dtype (``InvalidType`` otherwise). The gradient of each operand is the output's summed to
    its shape.

    .. math:: y = \sum_i x_i

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> a = np.array([1.0, 2.0], np.float32)
        >>> F.add(a, a, np.ones((2, 1), np.float32))
        variable([[3., 5.],
                  [3., 5.]])
    """
    if len(xs) == 2:
        lhs, rhs = xs
        if not isinstance(lhs, _NativeVariable) and not hasattr(lhs, "dtype"):
            raise AttributeError(f"'{type(lhs).__name__}' object has no attribute 'dtype'")
        lhs = as_variable(lhs)
        if isinstance(rhs, _NativeVariable) and rhs.dtype != lhs.dtype:
            raise _invalid("_ + _", "lhs.dtype == rhs.dtype", f"{lhs.dtype} != {rhs.dtype}")
        if not isinstance(rhs, _NativeVariable) and not (
            np.isscalar(rhs) or isinstance(rhs, np.ndarray)
        ):
            raise TypeError(
                "Value must be a scalar, `numpy.ndarray`, `cupy.ndarray` or a `Variable`.\n"
                f"Actual: {type(rhs)}"
            )
        return cast(Variable, lhs + rhs)
    if not xs:
        raise IndexError("chainer F.add: no operand (chainer: tuple index out of range)")
    vs = [as_variable(x) for x in xs]
    dt = vs[0].dtype
    for i, v in enumerate(vs):
        if v.dtype != dt:
            raise _invalid("MultiAdd", f"x0.dtype == x{i}.dtype", f"{dt} != {v.dtype}")
    if len(vs) == 1:
        from ..functions import identity

        return identity(vs[0])  # type: ignore[return-value]
    y = vs[0] + vs[1]
    for v in vs[2:]:
        y = y + v
    return _out(y)  # type: ignore[no-any-return]
