"""nnabla's gradients at kinks and ties where gradhub's native functions choose otherwise
(PyTorch's conventions, see docs/numerics.md): ``F.abs`` at 0, ``F.hard_tanh`` at ±1,
``F.maximum_scalar``/``F.minimum_scalar`` at a tie, ``F.clip_by_value`` at a bound; and the 0-d
zero that ``nn.grad`` gives for an input the outputs do not reach.

Expected values are nnabla 1.39's outputs for the same inputs (CPU, float32), through
``backward()`` and through ``nn.grad`` (first and second derivatives).
"""

from __future__ import annotations

from collections.abc import Callable

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest


def _var(a: object, need_grad: bool = True) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.asarray(a, np.float32), need_grad=need_grad)


def _seed(shape: tuple[int, ...]) -> np.ndarray:
    return np.arange(1, int(np.prod(shape)) + 1, dtype=np.float32).reshape(shape)


def _backward(fn: Callable[..., nn.Variable], xs: list[list[float]]) -> list[np.ndarray]:
    vs = [_var(x) for x in xs]
    y = fn(*vs)
    y.forward()
    for v in vs:
        v.g = 0
    y.backward(_seed(y.shape))
    return [v.g.copy() for v in vs]


def _nn_grads(
    fn: Callable[..., nn.Variable], xs: list[list[float]]
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """First derivatives (seed 1, 2, ...) and second derivatives of sum(g * (2, 3, ...))."""
    vs = [_var(x) for x in xs]
    y = fn(*vs)
    s = nn.Variable.from_numpy_array(_seed(y.shape))
    gs = nn.grad([F.sum(y * s)], vs)
    total = None
    for g in gs:
        w = nn.Variable.from_numpy_array(_seed(g.shape) + 1)
        t = F.sum(g * w)
        total = t if total is None else total + t
    hs = nn.grad([total], vs)
    for g in (*gs, *hs):
        g.forward()
    return [g.d.copy() for g in gs], [h.d.copy() for h in hs]


# (function, inputs, nnabla 1.39's gradients); second derivatives are all 0 in nnabla 1.39
CASES = {
    "abs": (F.abs, [[-1.0, 0.0, 1.0]], [[-1.0, 2.0, 3.0]]),
    "hard_tanh": (F.hard_tanh, [[-2.0, -1.0, 0.0, 1.0, 2.0]], [[0.0, 2.0, 3.0, 4.0, 0.0]]),
    "maximum_scalar": (
        lambda x: F.maximum_scalar(x, 0.0),
        [[-1.0, 0.0, 1.0]],
        [[0.0, 0.0, 3.0]],
    ),
    "minimum_scalar": (
        lambda x: F.minimum_scalar(x, 0.0),
        [[-1.0, 0.0, 1.0]],
        [[1.0, 0.0, 0.0]],
    ),
    "clip_by_value_numbers": (
        lambda x: F.clip_by_value(x, -1.0, 1.0),
        [[-2.0, -1.0, 0.0, 1.0, 2.0]],
        [[0.0, 0.0, 3.0, 0.0, 0.0]],
    ),
    "clip_by_value_variables": (
        lambda x, lo, hi: F.clip_by_value(x, lo, hi),
        [[-2.0, -1.0, 0.0, 1.0, 2.0], [-1.0] * 5, [1.0] * 5],
        [[0.0, 0.0, 3.0, 0.0, 0.0], [1.0, 2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 4.0, 5.0]],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_at_kinks_is_nnabla_s(name: str) -> None:
    fn, xs, expected = CASES[name]
    for g, e in zip(_backward(fn, xs), expected):
        np.testing.assert_array_equal(g, e)  # nnabla 1.39's outputs
    firsts, seconds = _nn_grads(fn, xs)
    for g, e in zip(firsts, expected):
        np.testing.assert_array_equal(g, e)  # nnabla 1.39's outputs (nn.grad)
    for h in seconds:
        np.testing.assert_array_equal(h, np.zeros_like(h))


def test_kink_functions_keep_values_and_reexecute() -> None:
    x = _var([0.0, 1.0, -1.0, np.inf, -np.inf])
    ys = [
        F.abs(x),
        F.hard_tanh(x),
        F.maximum_scalar(x, 1.0),
        F.minimum_scalar(x, 1.0),
        F.clip_by_value(x, -1.0, 1.0),
    ]
    # nnabla 1.39's outputs
    values = [
        [0, 1, 1, np.inf, np.inf],
        [0, 1, -1, 1, -1],
        [1, 1, 1, np.inf, 1],
        [0, 1, -1, 1, -np.inf],
        [0, 1, -1, 1, -1],
    ]
    grads = [[1, 1, -1, 1, -1], [1, 1, 1, 0, 0], [0, 0, 0, 1, 0], [1, 0, 1, 0, 1], [1, 0, 0, 0, 0]]
    for y, v, g in zip(ys, values, grads):
        y.forward()
        x.g = 0
        y.backward()
        np.testing.assert_array_equal(y.d, v)
        np.testing.assert_array_equal(x.g, g)
    # the masks follow new data on forward()
    y = F.sum(F.abs(x) + F.hard_tanh(x) + F.maximum_scalar(x, 1.0) + F.clip_by_value(x, -1.0, 1.0))
    x.d = np.array([2.0, 0.0, 1.0, -1.0, 0.5], np.float32)
    y.forward()
    x.g = 0
    y.backward()
    np.testing.assert_array_equal(y.d, 13.5)  # nnabla 1.39's outputs
    np.testing.assert_array_equal(x.g, [2, 3, 2, 0, 3])


def test_kink_functions_take_ndarrays() -> None:
    nd = nn.NdArray.from_numpy_array(np.array([-2.0, 0.0, 1.0], np.float32))
    assert isinstance(F.abs(nd), nn.NdArray)
    np.testing.assert_array_equal(F.abs(nd).data, [2, 0, 1])  # nnabla 1.39's outputs
    np.testing.assert_array_equal(F.hard_tanh(nd).data, [-1, 0, 1])
    np.testing.assert_array_equal(F.maximum_scalar(nd, 0.0).data, [0, 0, 1])
    np.testing.assert_array_equal(F.minimum_scalar(nd, 0.0).data, [-2, 0, 0])
    np.testing.assert_array_equal(F.clip_by_value(nd, -1.0, 0.5).data, [-1, 0, 0.5])


def test_grad_of_an_unreached_input_is_a_0d_zero() -> None:
    x = _var(np.ones((3, 4)))
    u = _var(np.ones((3, 4)))
    k = _var(np.ones((2,)), need_grad=False)
    gx, gu, gk = nn.grad([F.sum(x * 2.0)], [x, u, k])
    gu.forward()
    # nnabla 1.39's outputs: shape () and 0.0 for both, x's gradient of x's shape
    assert gu.shape == () and gk.shape == () and gx.shape == (3, 4)
    np.testing.assert_array_equal(gu.d, 0.0)
    np.testing.assert_array_equal(gk.d, 0.0)
    assert not gu.need_grad
