"""``F.rand``, ``F.randn`` and ``F.randint`` draw new values at each ``forward()`` of a graph
holding them, as nnabla 1.39's random functions (nnabla's VAE draws new reparameterization noise
and WGAN-GP new interpolation points at every step). The numbers come from numpy's generators,
not nnabla's; what is checked against nnabla 1.39 is when values are drawn: built with
auto_forward off, the first ``forward()`` gives the first draw of the function's generator (a
``seed >= 0`` sequence starts the same for every function with that seed), each later
``forward()`` (also on the random Variable itself, and ``nn.forward_all``) the next one; built
with auto_forward on, the build draws the first; ``backward()`` and ``nn.grad`` draw nothing."""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest


@pytest.mark.parametrize("fn", ["rand", "randn", "randint"])
def test_each_forward_draws_again(fn: str) -> None:
    # regression: the values drawn when the graph was built stayed for every forward()
    args = {"rand": (0, 1), "randn": (0, 1), "randint": (0, 1000)}[fn]
    e = getattr(F, fn)(*args, shape=(50,))
    y = e * 1
    draws = []
    for _ in range(3):
        y.forward()
        draws.append(y.d.copy())
    assert not np.array_equal(draws[0], draws[1]) and not np.array_equal(draws[1], draws[2])
    e.forward()  # forward() on the random Variable itself draws too (nnabla 1.39)
    assert not np.array_equal(e.d, draws[2])


def test_seeded_sequence_as_nnabla() -> None:
    first = []
    for _ in range(2):
        e = F.rand(shape=(4,), seed=5)
        y = e * 1
        y.forward()
        first.append(y.d.copy())
        y.forward()
        first.append(y.d.copy())
    # nnabla 1.39: two F.rand(seed=5) give the same sequence of draws, one per forward()
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_array_equal(first[1], first[3])
    assert not np.array_equal(first[0], first[1])
    # the sequence is numpy's default_rng(5) (not nnabla's numbers)
    rng = np.random.default_rng(5)
    np.testing.assert_allclose(first[0], rng.uniform(0, 1, 4).astype(np.float32))
    np.testing.assert_allclose(first[1], rng.uniform(0, 1, 4).astype(np.float32))


def test_auto_forward_build_draws_the_first() -> None:
    nn.set_auto_forward(True)
    try:
        e = F.rand(shape=(3,), seed=5)
        y = e * 1
        built = y.d.copy()
        y.forward()
    finally:
        nn.set_auto_forward(False)
    # nnabla 1.39: built under auto_forward, the build is the first execution
    assert not np.array_equal(y.d, built)
    s = F.rand(shape=(3,), seed=5)
    z = s * 1
    z.forward()
    np.testing.assert_array_equal(z.d, built)


def test_backward_and_grad_draw_nothing() -> None:
    x = nn.Variable.from_numpy_array(np.ones(3), need_grad=True)
    e = F.rand(shape=(3,), seed=3)
    z = F.sum(x * e)
    z.forward()
    d0 = e.d.copy()
    z.backward()
    (g,) = nn.grad([z], [x])
    np.testing.assert_array_equal(e.d, d0)  # nnabla 1.39: kept
    np.testing.assert_allclose(x.g, d0)
    np.testing.assert_allclose(g.d, d0)
    assert not e.need_grad


def test_forward_all_draws_again() -> None:
    x = nn.Variable.from_numpy_array(np.ones(3), need_grad=True)
    f = F.randn(shape=(3,), seed=3)
    h = F.sum(x * f)
    nn.forward_all([h])
    d1 = f.d.copy()
    nn.forward_all([h])
    assert not np.array_equal(f.d, d1)  # nnabla 1.39: True
    np.testing.assert_allclose(h.d, f.d.sum(), rtol=1e-6)


def test_distribution_and_dtype() -> None:
    u = F.rand(-2, 3, shape=(2000,), seed=1)
    n = F.randn(1, 2, shape=(2000,), seed=1)
    i = F.randint(3, 7, shape=(2000,), seed=1)
    for v in (u, n, i):
        (v * 1).forward()
    assert u.d.dtype == np.float32 and n.d.dtype == np.float32 and i.d.dtype == np.int32
    assert -2 <= u.d.min() and u.d.max() < 3
    assert abs(n.d.mean() - 1) < 0.15 and abs(n.d.std() - 2) < 0.15
    assert set(np.unique(i.d)) == {3, 4, 5, 6}
    with pytest.raises(ValueError, match="high must be larger"):
        F.randint(5, 5, shape=(2,))
