"""Helpers shared by the tests of the nnabla layer: Variables from values (``_var`` keeps numpy's
dtype, ``_var64`` makes float64)."""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import numpy as np


def _var(values: list[float], need_grad: bool = True) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.array(values), need_grad=need_grad)


def _var64(values: object, need_grad: bool = True) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.array(values, dtype=np.float64), need_grad=need_grad)
