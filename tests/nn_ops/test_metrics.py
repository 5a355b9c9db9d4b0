"""ConfusionMatrix of gradhub-nn-ops against a loop over the samples."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest

RNG = np.random.default_rng(11)


def _loop(x: np.ndarray, t: np.ndarray, axis: int) -> np.ndarray:
    pred = np.argmax(x, axis=axis).reshape(-1)
    out = np.zeros((x.shape[axis],) * 2, np.int64)
    for a, b in zip(t.reshape(-1), pred):
        out[a, b] += 1
    return out


def test_last_axis_and_other_axis() -> None:
    x = RNG.standard_normal((20, 4))
    t = RNG.integers(0, 4, (20, 1))
    np.testing.assert_array_equal(F.confusion_matrix(gh.Variable(x), t).d, _loop(x, t, 1))
    x3 = RNG.standard_normal((3, 5, 2))
    t3 = RNG.integers(0, 5, (3, 1, 2))
    np.testing.assert_array_equal(
        F.confusion_matrix(gh.Variable(x3), t3, axis=1).d, _loop(x3, t3, 1)
    )


def test_checks() -> None:
    x = gh.Variable(np.ones((3, 2)))
    with pytest.raises(ValueError, match="confusion_matrix: target holds labels outside"):
        F.confusion_matrix(x, np.array([[0], [2], [1]]))
    with pytest.raises(ValueError, match="confusion_matrix: target of shape"):
        F.confusion_matrix(x, np.zeros((2, 1)))
    with pytest.raises(ValueError, match="axis=2 is out of range"):
        F.confusion_matrix(x, np.zeros((3, 1)), axis=2)
