"""gradhub.func on seeded random functions of the core's own functions (tests/random_graphs.py):
``vmap`` against a loop over the batch, ``vmap(grad)`` against per-sample gradients, ``jacrev``
against ``jacfwd``, ``hessian`` against ``jacrev(grad)``, and that against float64 central
differences of the gradient."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradhub as gh
import gradhub.func as ghf
import numpy as np
import pytest
from random_graphs import grow


def _function(seed: int) -> tuple[np.random.Generator, Callable[[Any, Any], Any]]:
    """``f(x, w)``: a random graph of a row ``x`` and a weight row ``w`` (of 4 elements),
    reduced to a number."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, 1 << 30, 8)
    n_ops = int(rng.integers(1, 8))

    def f(x: Any, w: Any) -> Any:
        pool = [x, w]
        grow(np.random.default_rng(picks), pool, n_ops)  # the same functions at every call
        return (pool[-1] * pool[-1]).sum() + (pool[-1] * w).sum()

    return rng, f


@pytest.mark.parametrize("seed", range(25))
def test_transforms_of_random_functions_agree(seed: int) -> None:
    rng, f = _function(seed)
    xs, w = rng.standard_normal((5, 4)), rng.standard_normal(4)
    wv = gh.Variable(w)
    loop = np.array([f(gh.Variable(r), wv).d for r in xs])
    np.testing.assert_allclose(ghf.vmap(f, in_axes=(0, None))(xs, wv).d, loop, 1e-12, 1e-12)
    g = ghf.grad(f, argnums=1)
    per_sample = np.array([g(gh.Variable(r), wv).d for r in xs])
    batched = ghf.vmap(g, in_axes=(0, None))(xs, wv).d
    np.testing.assert_allclose(batched, per_sample, 1e-10, 1e-10)

    x0 = gh.Variable(xs[0])
    gx = ghf.grad(f, argnums=0)
    rev = ghf.jacrev(gx, argnums=0)(x0, wv).d
    np.testing.assert_allclose(ghf.jacfwd(gx, argnums=0)(x0, wv).d, rev, 1e-9, 1e-9)
    np.testing.assert_allclose(ghf.hessian(f, argnums=0)(x0, wv).d, rev, 1e-9, 1e-9)
    eps = 1e-6
    central = np.stack(
        [
            (gx(gh.Variable(xs[0] + eps * e), wv).d - gx(gh.Variable(xs[0] - eps * e), wv).d)
            / (2 * eps)
            for e in np.eye(4)
        ],
        axis=1,
    )
    np.testing.assert_allclose(rev, central, 1e-4, 1e-5)
