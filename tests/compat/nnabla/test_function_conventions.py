"""nnabla's own conventions where gradhub's functions choose otherwise: the gradient of
``F.max``/``F.min`` at ties (the first extremum), of ``F.maximum2``/``F.minimum2`` at ties (``x1``),
``F.sign``'s straight-through gradient and ``F.gelu``'s tanh approximation.

Expected values are nnabla 1.39's outputs for the same inputs (CPU, float32).
"""

from __future__ import annotations

import math

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest


def _var(a: object, need_grad: bool = True) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.asarray(a, np.float32), need_grad=need_grad)


def _grads(y: nn.Variable, xs: list[nn.Variable], seed: object = None) -> list[np.ndarray]:
    y.forward()
    for x in xs:
        x.g = 0
    if seed is None:
        y.backward()
    else:
        y.backward(np.asarray(seed, np.float32))
    return [x.g.copy() for x in xs]


def test_max_and_min_give_ties_gradient_to_the_first() -> None:
    x = _var([[1.0, 3.0, 3.0, 2.0], [0.0, 0.0, 0.0, 0.0]])
    (g,) = _grads(F.max(x, axis=1), [x], [1.0, 2.0])
    np.testing.assert_array_equal(g, [[0, 1, 0, 0], [2, 0, 0, 0]])  # nnabla 1.39
    z = _var([[[1.0, 3.0], [3.0, 0.0]], [[3.0, 3.0], [0.0, 1.0]]])
    for axis in ((2, 0), (0, 2)):
        (g,) = _grads(F.min(z, axis=axis), [z])
        np.testing.assert_array_equal(g, [[[1, 0], [0, 1]], [[0, 0], [0, 0]]])  # nnabla 1.39
    _, idx = F.max(x, axis=1, with_index=True)
    np.testing.assert_array_equal(idx.d, [1, 0])


def test_maximum2_and_minimum2_give_ties_gradient_to_x1() -> None:
    a, b = _var([1.0, 2.0, 3.0]), _var([1.0, 0.0, 3.0])
    ga, gb = _grads(F.maximum2(a, b), [a, b])
    np.testing.assert_array_equal(ga, [0, 1, 0])  # nnabla 1.39
    np.testing.assert_array_equal(gb, [1, 0, 1])
    ga, gb = _grads(F.minimum2(a, b), [a, b])
    np.testing.assert_array_equal(ga, [0, 0, 0])  # nnabla 1.39
    np.testing.assert_array_equal(gb, [1, 1, 1])


def test_sign_passes_the_gradient_straight_through() -> None:
    x = _var([-1.5, 0.0, 2.0, 3e38])
    y = F.sign(x)
    (g,) = _grads(y, [x], [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(y.d, [-1, 1, 1, 1])  # nnabla 1.39 (alpha=1 at 0)
    np.testing.assert_array_equal(g, [1, 2, 3, 4])
    np.testing.assert_array_equal(F.sign(x, alpha=0.5).d, [-1, 0.5, 1, 1])
    inf = _var([-np.inf, np.inf])
    np.testing.assert_array_equal(F.sign(inf).d, [-1, 1])  # exact, no NaN from the cut
    # the gradient does not depend on x: its derivative is 0
    (gx,) = nn.grad([F.sign(x) * x], [x])
    gx.forward()
    np.testing.assert_array_equal(gx.d, [-1.5 - 1, 0 + 1, 2 + 1, np.float32(3e38) + 1])
    (h,) = nn.grad([F.sum(F.sign(x) * 2.0)], [x])
    (hh,) = nn.grad([F.sum(h * h)], [x])
    hh.forward()
    np.testing.assert_array_equal(hh.d, [0, 0, 0, 0])
    # a static graph re-executed on new data: the value is recomputed, the gradient passes
    x2 = _var([-4.0, 2.0])
    y2 = F.sign(x2)
    x2.d = np.array([3.0, -0.5], np.float32)
    (g2,) = _grads(y2, [x2], [5.0, 6.0])
    np.testing.assert_array_equal(y2.d, [1, -1])  # nnabla 1.39
    np.testing.assert_array_equal(g2, [5, 6])
    # NdArrays in, NdArray out (computed at once)
    nd = F.sign(nn.NdArray.from_numpy_array(np.array([-2.0, 5.0], np.float32)))
    np.testing.assert_array_equal(nd.data, [-1, 1])


def test_gelu_is_the_tanh_approximation() -> None:
    x = _var([-2.0, 1.0, 2.5, -10.0, 10.0])
    y = F.gelu(x)
    (g,) = _grads(y, [x])
    # nnabla 1.39
    # (at -10 nnabla's float32 tanh form underflows to 0; the value is -1.2e-37)
    np.testing.assert_allclose(
        y.d, [-0.04540231, 0.841192, 2.4849157, 0.0, 10.0], rtol=2e-6, atol=1e-30
    )
    np.testing.assert_allclose(
        g, [-0.08609927, 1.0829641, 1.0379516, 0.0, 1.0], rtol=2e-6, atol=1e-30
    )
    (gx,) = nn.grad([y], [x])
    (gg,) = nn.grad([gx], [x])
    gg.forward()
    np.testing.assert_allclose(
        gg.d, [-0.10787506, 0.24214816, -0.07624557, 0.0, 0.0], rtol=1e-5, atol=1e-7
    )
    c = math.sqrt(2 / math.pi)
    assert y.d[1] == pytest.approx(0.5 * (1 + math.tanh(c * 1.044715)), rel=1e-6)
