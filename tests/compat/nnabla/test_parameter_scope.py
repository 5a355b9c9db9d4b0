"""Parameters in the nnabla layer: ``clear_parameters`` inside a scope forgets that scope only,
and ``get_parameters(grad_only=...)``.
"""

from __future__ import annotations

import gradhub as gh
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest


def test_nnabla_clear_parameters_inside_a_scope_keeps_the_other_scopes() -> None:
    x = nn.Variable.from_numpy_array(np.ones((2, 3)))
    PF.affine(x, 2, name="enc")
    PF.affine(x, 2, name="dec")
    with nn.parameter_scope("dec"):
        nn.clear_parameters()
        assert list(nn.get_parameters()) == []
    assert list(nn.get_parameters()) == ["enc/affine/W", "enc/affine/b"]
    nn.clear_parameters()
    assert list(nn.get_parameters(grad_only=False)) == []


def test_get_parameters_grad_only() -> None:
    with nn.parameter_scope("s"):
        gh.get_parameter_or_create("a", (1,), np.zeros, need_grad=True)
        gh.get_parameter_or_create("b", (1,), np.zeros, need_grad=False)
    assert list(nn.get_parameters()) == ["s/a"]
    assert list(nn.get_parameters(grad_only=False)) == ["s/a", "s/b"]
    with pytest.raises(NotImplementedError, match="params argument"):
        nn.get_parameters(params={})
    with pytest.raises(NotImplementedError, match="scope argument"), nn.parameter_scope("a", {}):
        pass


def test_nnabla_compat_clear_parameters_follows_the_scope() -> None:
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.parametric_functions as NPF

    x = gh.Variable(np.ones((2, 3)))
    NPF.affine(x, 2, name="enc")
    NPF.affine(x, 2, name="dec")
    with nn.parameter_scope("dec"):
        nn.clear_parameters()
    assert list(nn.get_parameters()) == ["enc/affine/W", "enc/affine/b"]
