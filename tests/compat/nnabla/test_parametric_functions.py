"""The nnabla layer's parametric functions with float32 Variables as ids (embed)."""

from __future__ import annotations

import numpy as np


def test_nnabla_style_pf_embed_with_a_float32_variable() -> None:
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.parametric_functions as PF

    x = nn.Variable((2, 3))  # float32, as nnabla's nn.Variable
    x.d = np.array([[0, 1, 2], [3, 4, 1]])
    y = PF.embed(x, 5, 4)
    y.forward()
    assert y.shape == (2, 3, 4)
    assert np.isfinite(y.d).all()
