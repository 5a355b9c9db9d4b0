"""``x[key] = value`` on a Variable of the nnabla layer: recorded in the graph as nnabla 1.39
records it (there as ScatterNd), with nnabla's data and gradients (recorded 2026-11-25)."""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest


def test_setitem_records_and_differentiates_as_nnabla() -> None:
    a = nn.Variable.from_numpy_array(np.arange(12.0).reshape(3, 4), need_grad=True)
    b = nn.Variable.from_numpy_array(np.ones((2, 4)) * 10, need_grad=True)
    c = a * 1
    c[0:2, :] = b
    assert c.parent.name == "SetItem"
    s = F.sum(c * c)
    s.forward()
    np.testing.assert_array_equal(c.d, [[10] * 4, [10] * 4, [8, 9, 10, 11]])
    s.backward()
    # nnabla 1.39: a.g = [[0]*4, [0]*4, [16, 18, 20, 22]], b.g = 20 everywhere
    np.testing.assert_array_equal(a.g, [[0] * 4, [0] * 4, [16, 18, 20, 22]])
    np.testing.assert_array_equal(b.g, np.full((2, 4), 20.0))
    # c.g shows the gradient of c's old value (nnabla assigns in place): a's
    np.testing.assert_array_equal(c.g, a.g)
    # forward() recomputes through the assignment
    a.d = np.zeros((3, 4))
    b.d = np.full((2, 4), 2.0)
    s.forward()
    np.testing.assert_array_equal(c.d, [[2] * 4, [2] * 4, [0] * 4])
    assert s.d == 32.0


def test_setitem_scalars_broadcasts_and_second_order() -> None:
    a = nn.Variable.from_numpy_array(np.arange(12.0).reshape(3, 4), need_grad=True)
    c = a * 2.0
    c[0] = 5.0
    np.testing.assert_array_equal(c.d[0], [5.0] * 4)
    v = nn.Variable.from_numpy_array(np.array([1.0, 2.0, 3.0, 4.0]), need_grad=True)
    c[1:3] = v  # broadcast over two rows: v's gradient sums them
    y = F.sum(c * c)
    ga, gv = nn.grad([y], [a, v])
    np.testing.assert_array_equal(ga.d, np.zeros((3, 4)))
    np.testing.assert_array_equal(gv.d, 4 * v.d)
    (ggv,) = nn.grad([F.sum(gv)], [v])
    np.testing.assert_array_equal(ggv.d, [4.0] * 4)
    leaf = nn.Variable.from_numpy_array(np.zeros(3))
    leaf[1] = 7.0  # a leaf becomes the output of the assignment (nnabla: of ScatterNd)
    assert leaf.parent is not None
    np.testing.assert_array_equal(leaf.d, [0.0, 7.0, 0.0])
    with pytest.raises(NotImplementedError, match="a Variable as the index"):
        leaf[nn.Variable((1,))] = 1.0


def test_setitem_on_a_leaf_as_nnabla() -> None:
    # nnabla 1.39: a = [0, 1, 2] (need_grad), a[1:2] = v (v = [7]), sum(a * a).backward() gives
    # a.d = [0, 7, 2], a.g = [0, 0, 4] (its old value's gradient), v.g = [14]; for a leaf b
    # with need_grad=False the same, and b.need_grad becomes True
    a = nn.Variable.from_numpy_array(np.arange(3.0), need_grad=True)
    v = nn.Variable.from_numpy_array(np.array([7.0]), need_grad=True)
    a[1:2] = v
    y = F.sum(a * a)
    y.forward()
    y.backward()
    np.testing.assert_array_equal(a.d, [0.0, 7.0, 2.0])
    np.testing.assert_array_equal(a.g, [0.0, 0.0, 4.0])
    np.testing.assert_array_equal(v.g, [14.0])
    assert a.need_grad is True
    b = nn.Variable.from_numpy_array(np.arange(3.0))
    b[1:2] = v
    v.g = 0
    F.sum(b * b).backward()
    np.testing.assert_array_equal(b.g, [0.0, 0.0, 4.0])
    np.testing.assert_array_equal(v.g, [14.0])
    assert b.need_grad is True
