"""SearchSorted and NonZero of gradhub-nn-ops against numpy."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest

RNG = np.random.default_rng(9)


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_row_by_row(right: bool) -> None:
    s = np.sort(RNG.integers(0, 8, (3, 2, 6)).astype(np.float64), axis=-1)
    v = RNG.integers(-1, 9, (3, 2, 5)).astype(np.float64)  # ties with the sequence included
    y = F.searchsorted(gh.Variable(s), gh.Variable(v), right=right).d
    side = "right" if right else "left"
    for idx in np.ndindex(3, 2):
        np.testing.assert_array_equal(y[idx], np.searchsorted(s[idx], v[idx], side=side))
    assert y.dtype == np.int64


def test_searchsorted_shapes_checked() -> None:
    with pytest.raises(ValueError, match="searchsorted: sorted_sequence of shape"):
        F.searchsorted(gh.Variable(np.ones(3)), gh.Variable(np.ones((1, 2))))


def test_nonzero() -> None:
    x = RNG.standard_normal((3, 4)) * (RNG.random((3, 4)) < 0.5)
    np.testing.assert_array_equal(F.nonzero(gh.Variable(x)).d, np.stack(np.nonzero(x)))
    assert F.nonzero(gh.Variable(np.zeros((2, 3)))).shape == (2, 0)


def test_no_gradient() -> None:
    x = gh.Variable(np.array([[1.0, 2.0]]))
    assert not F.nonzero(x).need_grad
    assert not F.searchsorted(x, x).need_grad
