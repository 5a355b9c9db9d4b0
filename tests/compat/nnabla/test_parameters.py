"""The nnabla layer's ``clear_parameters`` follows the parameter scope."""

from __future__ import annotations

import gradhub as gh
import numpy as np


def test_nnabla_compat_clear_parameters_follows_the_scope() -> None:
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.parametric_functions as NPF

    x = gh.Variable(np.ones((2, 3)))
    NPF.affine(x, 2, name="enc")
    NPF.affine(x, 2, name="dec")
    with nn.parameter_scope("dec"):
        nn.clear_parameters()
    assert list(nn.get_parameters()) == ["enc/affine/W", "enc/affine/b"]
