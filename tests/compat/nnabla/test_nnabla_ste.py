"""nnabla's straight-through and kink gradients in ``gradhub_compat.nnabla.functions``:
``round``/``ceil``/``floor`` (gradient 1), ``binary_tanh``/``binary_sigmoid`` (1 or 1/2 for
``|x| < 1``, else 0), and ``hard_sigmoid`` at ``x = ±2.5`` and ``crelu`` at ``x = 0``, where
gradhub's native functions choose otherwise (see docs/numerics.md).

Expected values are nnabla 1.39's outputs for the same inputs (CPU, float32): ``y.backward()``
with an all-ones (or the given) output gradient, and ``nn.grad`` of ``sum(2 y)`` with its
derivative ``nn.grad`` of ``sum(3 g)`` (second derivatives, all 0 in nnabla 1.39).
"""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest

# name: (x, nnabla 1.39's y, nnabla 1.39's x.g after y.backward() with dy = 1)
BACKWARD = {
    "round": (
        [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.7, 0.7, 1.2, 2.0],
        [-3.0, -2.0, -1.0, 1.0, 2.0, 3.0, -1.0, 1.0, 1.0, 2.0],
        [1.0] * 10,
    ),
    "ceil": (
        [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.7, 0.7, 1.2, 2.0],
        [-2.0, -1.0, -0.0, 1.0, 2.0, 3.0, -0.0, 1.0, 2.0, 2.0],
        [1.0] * 10,
    ),
    "floor": (
        [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.7, 0.7, 1.2, 2.0],
        [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, -1.0, 0.0, 1.0, 2.0],
        [1.0] * 10,
    ),
    "binary_tanh": (
        [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0],
        [-1.0, -1.0, -1.0, -1.0, 1.0, 1.0, 1.0],
        [0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0],
    ),
    "binary_sigmoid": (
        [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0],
        [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
        [0.0, 0.0, 0.5, 0.5, 0.5, 0.0, 0.0],
    ),
    "hard_sigmoid": (
        [-3.0, -2.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.5, 3.0],
        [0.0, 0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 1.0, 1.0],
        [0.0, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.0],
    ),
    "crelu": (
        [[-1.0, 0.0, 2.0], [0.5, -0.25, -3.0]],
        [[0.0, 0.0, 2.0, 1.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0, 0.25, 3.0]],
        [[-1.0, -1.0, 1.0], [1.0, -1.0, -1.0]],
    ),
}

# name: (x, nnabla 1.39's nn.grad of sum(2 y)); the second derivatives are all 0
NN_GRAD = {
    "round": ([-2.5, 0.5, 1.2], [2.0, 2.0, 2.0]),
    "ceil": ([-1.5, 1.2], [2.0, 2.0]),
    "floor": ([-1.5, 1.2], [2.0, 2.0]),
    "binary_tanh": ([-2.0, -1.0, 0.0, 0.5, 1.0], [0.0, 0.0, 2.0, 2.0, 0.0]),
    "binary_sigmoid": ([-2.0, -1.0, 0.0, 0.5, 1.0], [0.0, 0.0, 1.0, 1.0, 0.0]),
    "crelu": ([[-1.0, 0.0, 2.0]], [[-2.0, -2.0, 2.0]]),
}


def _var(a: object, need_grad: bool = True) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.asarray(a, np.float32), need_grad=need_grad)


@pytest.mark.parametrize("name", sorted(BACKWARD))
def test_backward_matches_nnabla(name: str) -> None:
    x, want_y, want_g = BACKWARD[name]
    v = _var(x)
    y = getattr(F, name)(v)
    y.forward()
    v.g = 0
    y.backward()
    assert y.d.dtype == np.float32
    np.testing.assert_allclose(y.d, want_y, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(v.g, want_g, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(NN_GRAD))
def test_nn_grad_and_second_derivative_match_nnabla(name: str) -> None:
    x, want = NN_GRAD[name]
    v = _var(x)
    y = getattr(F, name)(v)
    (g,) = nn.grad([F.sum(y * 2.0)], [v])
    np.testing.assert_allclose(g.d, want, rtol=1e-6)
    (h,) = nn.grad([F.sum(g * 3.0)], [v])
    np.testing.assert_array_equal(np.broadcast_to(h.d, v.shape), np.zeros(v.shape))


def test_straight_through_values_follow_new_data() -> None:
    """The value is exactly the rounded one, also when forward() re-executes on new data."""
    v = _var([0.4, 1.6])
    y = F.round(v)
    z = F.binary_tanh(v)
    v.d = np.array([np.inf, -2.5], np.float32)
    y.forward()
    z.forward()
    np.testing.assert_array_equal(y.d, [np.inf, -3.0])
    np.testing.assert_array_equal(z.d, [1.0, -1.0])
    v.g = 0
    y.backward()
    assert v.g[1] == 1.0  # (at inf the clipped gradient path gives 0)


def test_ndarrays_compute_at_once() -> None:
    out = F.floor(nn.NdArray.from_numpy_array(np.array([1.5, -0.5], np.float32)))
    assert type(out) is nn.NdArray
    np.testing.assert_array_equal(out.data, [1.0, -1.0])


def test_native_functions_keep_pytorch_conventions() -> None:
    import gradhub as gh
    import gradhub.functions as G

    x = gh.Variable(np.array([-2.5, 0.0, 2.5]))
    G.sum(G.hard_sigmoid(x)).backward()
    np.testing.assert_allclose(x.g, [0.0, 0.2, 0.0])
    x = gh.Variable(np.array([[0.0, 1.0]]))
    G.sum(G.crelu(x)).backward()
    np.testing.assert_allclose(x.g, [[0.0, 1.0]])
    assert not G.round(x).need_grad
