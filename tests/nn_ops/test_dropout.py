"""Dropout: seeded masks reused by backward, the global generator, re-execution and bad ``p``."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest


def _v(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


# -- dropout, embed, one_hot -------------------------------------------------------------------


def test_dropout_seeded_mask_and_backward_reuses_it() -> None:
    x = _v(np.ones((50,)))
    y1, y2 = F.dropout(x, p=0.3, seed=5), F.dropout(x, p=0.3, seed=5)
    np.testing.assert_array_equal(y1.d, y2.d)
    assert set(np.unique(y1.d)) <= {0.0, 1.0 / 0.7}
    assert 0 < np.count_nonzero(y1.d) < 50
    y1.backward()
    np.testing.assert_array_equal(x.g, y1.d)  # dy/dx is the scaled mask itself


def test_dropout_global_generator_and_reexecution() -> None:
    from gradhub_nn_ops.stochastic import seed_dropout

    seed_dropout(123)
    x = _v(np.ones((200,)))
    y = F.dropout(x, p=0.5)
    first = y.d.copy()
    y2 = F.dropout(x, p=0.5)
    assert not np.array_equal(first, y2.d)  # a new mask on every call
    y.forward()  # re-execution draws a new mask ...
    assert not np.array_equal(first, y.d)
    y.backward()
    np.testing.assert_array_equal(x.g, y.d)  # ... and backward uses that one
    seed_dropout(123)
    np.testing.assert_array_equal(F.dropout(x, p=0.5).d, first)


def test_dropout_rejects_bad_p() -> None:
    with pytest.raises(ValueError, match=r"dropout: p must be in \[0, 1\)"):
        F.dropout(_v([1.0]), p=1.0)


def test_dropout_in_a_custom_vjp_fwd_under_vmap_draws_once_per_element() -> None:
    """Regression: a custom_vjp function whose fwd draws a dropout mask, under
    ``vmap(grad(...), randomness="different")``, drew along the vmap level and the level its
    fwd is mapped at, and its gradient escaped vmap with shape (3, 3, 4); each element now draws
    its own mask once, and the gradient follows it (bwd: 2 y)."""
    from gradhub.func import custom_vjp, grad, vmap

    r = custom_vjp(lambda x: F.dropout(x, p=0.5))
    r.defvjp(
        lambda x: (lambda y: (y, (y,)))(F.dropout(x, p=0.5)), lambda res, g: (g * res[0] * 2.0,)
    )

    def one(x: gh.Variable) -> tuple[gh.Variable, gh.Variable]:
        g, y = grad(lambda z: (lambda yy: (yy.sum(), yy))(r(z)), has_aux=True)(x)
        return y, g

    xs = np.abs(np.arange(24.0).reshape(6, 4) * 0.3 - 1.0) + 1.0
    gh.seed(3)
    y, g = vmap(one, randomness="different")(gh.Variable(xs))
    assert type(g) is gh.Variable and g.shape == (6, 4) and y.shape == (6, 4)
    np.testing.assert_allclose(g.d, 2.0 * y.d)
    kept = y.d != 0
    np.testing.assert_allclose(y.d[kept], 2.0 * xs[kept])
    assert len({tuple(row) for row in kept}) > 1  # the elements' masks differ
