"""RandBeta, RandBinomial and RandGamma of gradhub-nn-ops: numpy's generators (the same numbers
for the same seed), float32, no gradient, argument checks."""

from __future__ import annotations

import gradhub.functions as F
import numpy as np
import pytest


def test_seeded_draws_are_numpys() -> None:
    np.testing.assert_array_equal(
        F.rand_beta(2.0, 3.0, (3, 2), seed=5).d,
        np.random.default_rng(5).beta(2.0, 3.0, (3, 2)).astype(np.float32),
    )
    np.testing.assert_array_equal(
        F.rand_binomial(7, 0.2, (4,), seed=5).d,
        np.random.default_rng(5).binomial(7, 0.2, (4,)).astype(np.float32),
    )
    np.testing.assert_array_equal(
        F.rand_gamma(0.7, 2.0, (2, 2), seed=5).d,
        np.random.default_rng(5).gamma(0.7, 2.0, (2, 2)).astype(np.float32),
    )


def test_dtype_and_no_gradient() -> None:
    for x in (F.rand_beta(shape=(2,)), F.rand_binomial(shape=(2,)), F.rand_gamma(shape=(2,))):
        assert x.d.dtype == np.float32
        assert not x.need_grad


def test_checks() -> None:
    with pytest.raises(ValueError, match="rand_beta: beta must be a number > 0"):
        F.rand_beta(1.0, 0.0)
    with pytest.raises(ValueError, match="rand_binomial: n must be >= 0"):
        F.rand_binomial(-1, 0.5)
    with pytest.raises(TypeError, match="rand_binomial: n must be an int"):
        F.rand_binomial(2.5, 0.5)
    with pytest.raises(ValueError, match="rand_gamma: k must be a number > 0"):
        F.rand_gamma(-1.0)
