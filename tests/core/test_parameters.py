"""The parameter table: ``clear_parameters`` in a scope, ``set_parameter`` type checks."""

from __future__ import annotations

import gradhub as gh
import gradhub.parametric_functions as PF
import numpy as np
import pytest
from gradhub.parameters import set_parameter

# -- the parameter table -------------------------------------------------------------------------


@pytest.mark.nn_ops
def test_clear_parameters_in_a_scope_clears_only_that_scope() -> None:
    """As nnabla's clear_parameters ("Clear all parameters in the current scope")."""
    x = gh.Variable(np.ones((2, 3)))
    PF.affine(x, 2, name="enc")
    PF.affine(x, 2, name="dec")
    PF.affine(x, 2, name="decoder")  # shares the prefix "dec" but not the scope
    with gh.parameter_scope("dec"):
        gh.clear_parameters()
        assert gh.get_parameters() == {}
    assert list(gh.get_parameters()) == [
        "enc/affine/W",
        "enc/affine/b",
        "decoder/affine/W",
        "decoder/affine/b",
    ]
    with gh.parameter_scope("enc"), gh.parameter_scope("affine"):
        gh.clear_parameters()
    assert list(gh.get_parameters()) == ["decoder/affine/W", "decoder/affine/b"]
    gh.clear_parameters()  # top level: everything
    assert gh.get_parameters(grad_only=False) == {}


def test_set_parameter_rejects_a_non_variable() -> None:
    with gh.parameter_scope("fc"), gh.parameter_scope("affine"):
        with pytest.raises(
            TypeError,
            match=r"set_parameter: the value of parameter "
            r"'fc/affine/W' must be a Variable, got ndarray",
        ):
            set_parameter("W", np.zeros((3, 2)))
        assert gh.get_parameters() == {}
        w = gh.Variable(np.zeros((3, 2)))
        set_parameter("W", w)
    assert gh.get_parameters()["fc/affine/W"] is w
