"""Helpers shared by the tests of the chainer layer: Variables from values (float32 by default,
float64 for ``_c``)."""

from __future__ import annotations

import numpy as np
from gradhub_compat import chainer
from gradhub_compat.chainer import Variable


def _v(values: object, dtype: object = np.float32, **kw: object) -> Variable:
    return Variable(np.array(values, dtype=dtype), **kw)  # type: ignore[arg-type]


def _c(values: object, requires_grad: bool = True) -> chainer.Variable:
    return chainer.Variable(np.array(values, dtype=np.float64), requires_grad=requires_grad)
