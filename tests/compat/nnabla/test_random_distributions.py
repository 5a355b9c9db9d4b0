"""nnabla's F.rand_beta, F.rand_binomial and F.rand_gamma: shapes, dtypes, ranges, the
distributions' moments, a new draw at each forward() and the seed's sequence (numpy's
generators: nnabla's own numbers cannot be reproduced)."""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest

CASES = [
    # (function, args, mean, variance)
    (F.rand_beta, (2.0, 3.0), 2 / 5, 2 * 3 / (25 * 6)),
    (F.rand_binomial, (5, 0.3), 1.5, 5 * 0.3 * 0.7),
    (F.rand_gamma, (2.0, 1.5), 3.0, 2 * 1.5**2),
]


@pytest.mark.parametrize(("fn", "args", "mean", "var"), CASES)
def test_moments_shape_and_dtype(fn: Any, args: Any, mean: float, var: float) -> None:
    x = fn(*args, shape=(200, 100), seed=4)
    assert x.shape == (200, 100) and x.d.dtype == np.float32  # nnabla 1.39: float32
    assert not x.need_grad
    # 20000 draws: the sample mean within 5 standard errors
    assert abs(float(x.d.mean()) - mean) < 5 * np.sqrt(var / x.d.size)
    assert abs(float(x.d.var()) - var) < 0.05 * var


def test_ranges() -> None:
    b = F.rand_beta(0.5, 0.5, shape=(1000,), seed=1).d
    assert ((b >= 0) & (b <= 1)).all()
    n = F.rand_binomial(3, 0.5, shape=(1000,), seed=1).d
    assert set(np.unique(n)) <= {0.0, 1.0, 2.0, 3.0}
    assert (F.rand_gamma(shape=(1000,), seed=1).d > 0).all()


@pytest.mark.parametrize(("fn", "args", "mean", "var"), CASES)
def test_new_draw_at_each_forward_continuing_the_seed(
    fn: Any, args: Any, mean: float, var: float
) -> None:
    x = fn(*args, shape=(50,), seed=7)
    y = x * 1.0
    first = x.d.copy()
    y.forward()
    second = y.d.copy()
    y.forward()
    assert not np.array_equal(second, y.d)
    kind = {F.rand_beta: "beta", F.rand_binomial: "binomial", F.rand_gamma: "gamma"}[fn]
    rng = np.random.default_rng(7)
    draws = [np.asarray(getattr(rng, kind)(*args, (50,)), np.float32) for _ in range(2)]
    # built with auto_forward off: the first forward() keeps the build's draw, as F.rand
    np.testing.assert_array_equal(first, draws[0])
    np.testing.assert_array_equal(second, draws[0])
    np.testing.assert_array_equal(y.d, draws[1])


def test_argument_checks() -> None:
    with pytest.raises(ValueError, match="rand_beta: alpha must be a number > 0"):
        F.rand_beta(0.0, 1.0)
    with pytest.raises(ValueError, match=r"rand_binomial: p must lie in \[0, 1\]"):
        F.rand_binomial(2, 1.5)
    with pytest.raises(ValueError, match="rand_gamma: theta must be a number > 0"):
        F.rand_gamma(1.0, -1.0)
    with pytest.raises(ValueError, match="rand_gamma: seed must be -1"):
        F.rand_gamma(1.0, 1.0, seed=-3)


def test_global_generator_reseeded() -> None:
    nn.random.seed(11)
    a = F.rand_gamma(2.0, 1.0, shape=(5,)).d.copy()
    nn.random.seed(11)
    np.testing.assert_array_equal(F.rand_gamma(2.0, 1.0, shape=(5,)).d, a)


def test_random_choice_values_gradients_and_checks() -> None:
    x = nn.Variable.from_numpy_array(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), need_grad=True)
    w = nn.Variable.from_numpy_array(np.array([[0.0, 0.0, 2.0], [1.0, 3.0, 0.0]]), need_grad=True)
    y = F.random_choice(x, w, shape=(4,), seed=3)
    y.forward()
    assert y.shape == (2, 4) and y.d.dtype == np.float32
    assert (y.d[0] == 3).all() and set(y.d[1].tolist()) <= {4.0, 5.0}  # zero weights never
    g = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]], np.float32)
    x.grad.zero()
    w.grad.zero()
    y.backward(g)
    want = np.zeros((2, 3))
    for r in range(2):
        for c in range(4):
            want[r, int(y.d[r, c]) - 1 - 3 * r] += g[r, c]
    # nnabla 1.39: x and w both get the gradient summed at the chosen positions
    np.testing.assert_array_equal(x.g, want)
    np.testing.assert_array_equal(w.g, want)
    w2 = nn.Variable.from_numpy_array(np.array([[1.0, 0.0, 2.0], [1.0, 3.0, 0.0]]))
    picks = F.random_choice(x, w2, shape=(2,), replace=False, seed=0)
    assert sorted(picks.d[0].tolist()) == [1.0, 3.0]
    assert sorted(picks.d[1].tolist()) == [4.0, 5.0]
    with pytest.raises(ValueError, match="fewer positive weights than draws"):
        F.random_choice(x, w, shape=(3,), replace=False)  # nnabla 1.39: RuntimeError too
    with pytest.raises(ValueError, match="must have the same shape"):
        F.random_choice(x, nn.Variable.from_numpy_array(np.ones((2, 2))))


def test_random_choice_frequencies_follow_the_weights() -> None:
    x = nn.Variable.from_numpy_array(np.array([0.0, 1.0, 2.0]))
    w = nn.Variable.from_numpy_array(np.array([1.0, 2.0, 5.0]))
    y = F.random_choice(x, w, shape=(4000,), seed=2)
    freq = np.bincount(y.d.astype(int), minlength=3) / 4000
    np.testing.assert_allclose(freq, [1 / 8, 2 / 8, 5 / 8], atol=0.03)
    first = y.d.copy()
    y.forward()
    y.forward()
    assert not np.array_equal(first, y.d)  # drawn again at each forward()
