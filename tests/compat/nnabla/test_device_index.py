"""The nnabla layer on device index N > 0: Variables are created on the context's index."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plugins
from two_index_device import TwoIndexPlugin as _Plugin
from two_index_device import on_index_1 as _on_one


@pytest.fixture
def one() -> Iterator[Any]:
    """Loaded with the two-index device; yields its context for index 1."""
    plugins.reset()
    plugins.load_plugins(extra=[("two-index", _Plugin)])
    yield gh.get_extension_context("two:1")
    plugins.reset()


def test_nnabla_variables_are_created_on_the_context_index(one: Any) -> None:
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.parametric_functions as PF

    gh.clear_parameters()
    with nn.context_scope(one):
        x = nn.Variable((2, 3))
        x.d = np.ones((2, 3))
        _on_one(x)
        y = PF.affine(x, 4, name="fc")
    _on_one(y)
    gh.clear_parameters()
