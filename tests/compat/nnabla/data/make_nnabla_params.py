"""Writes ``nnabla_params.h5`` with nnabla itself (1.39.0 wrote the committed file):
``python make_nnabla_params.py nnabla_params.h5`` in an environment with nnabla (not gradhub)."""

import sys

import nnabla as nn
import nnabla.parametric_functions as PF
import numpy as np
from nnabla.parameter import get_parameter_or_create

nn.clear_parameters()
x = nn.Variable((2, 3))
with nn.parameter_scope("fc1"):
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    PF.affine(x, 4, w_init=w, b_init=np.arange(4, dtype=np.float32) - 1.5)
with nn.parameter_scope("bn"):
    PF.batch_normalization(nn.Variable((2, 4)))
get_parameter_or_create("scale", (2, 2), np.array([[1.0, 2.0], [3.0, 4.0]]), need_grad=True)
nn.save_parameters(sys.argv[1])
for k, v in nn.get_parameters(grad_only=False).items():
    print(k, v.shape, v.d.dtype, v.need_grad)
