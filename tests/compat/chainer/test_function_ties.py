"""chainer's gradients at ties: ``F.max``/``F.min`` give the whole gradient to every element equal
to the extremum (chainer's ``x == y`` mask), ``F.maximum``/``F.minimum`` give it to ``x1``
(``x1 >= x2``, ``x1 <= x2``). Expected values are chainer 7.8.1's outputs for the same inputs.
"""

from __future__ import annotations

import gradhub_compat.chainer.functions as F
import numpy as np
from gradhub_compat import chainer


def _f32(a: object) -> np.ndarray:
    return np.asarray(a, np.float32)


def test_max_and_min_give_every_tie_the_whole_gradient() -> None:
    x = chainer.Variable(_f32([[1.0, 3.0, 3.0, 2.0]]))
    F.sum(F.max(x, axis=1)).backward()
    np.testing.assert_array_equal(x.grad, [[0, 1, 1, 0]])  # chainer 7.8.1
    x.cleargrad()
    F.min(x).backward()
    np.testing.assert_array_equal(x.grad, [[1, 0, 0, 0]])
    # double backprop through the mask (a constant)
    z = chainer.Variable(_f32([[1.0, 3.0], [3.0, 0.0], [3.0, 3.0]]))
    (g,) = chainer.grad([F.sum(F.max(z, axis=0) * F.sum(z))], [z], enable_double_backprop=True)
    np.testing.assert_array_equal(g.array, [[6, 19], [19, 6], [19, 19]])  # chainer 7.8.1
    (gg,) = chainer.grad([F.sum(g * g)], [z])
    np.testing.assert_array_equal(gg.array, [[152, 328], [328, 152], [328, 328]])


def test_maximum_and_minimum_give_ties_to_x1() -> None:
    a = chainer.Variable(_f32([1.0, 2.0, 3.0]))
    b = chainer.Variable(_f32([1.0, 0.0, 3.0]))
    F.sum(F.maximum(a, b)).backward()
    np.testing.assert_array_equal(a.grad, [1, 1, 1])  # chainer 7.8.1
    np.testing.assert_array_equal(b.grad, [0, 0, 0])
    a.cleargrad()
    b.cleargrad()
    F.sum(F.minimum(a, b)).backward()
    np.testing.assert_array_equal(a.grad, [1, 0, 1])  # chainer 7.8.1
    np.testing.assert_array_equal(b.grad, [0, 1, 0])
    ga, gb = chainer.grad([F.sum(F.maximum(a, b) * a)], [a, b], enable_double_backprop=True)
    np.testing.assert_array_equal(ga.array, [2, 4, 6])  # chainer 7.8.1
    np.testing.assert_array_equal(gb.array, [0, 0, 0])
