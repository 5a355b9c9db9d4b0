"""``forward()`` re-execution: replaced or in-place-updated leaf data is detected, and a graph
follows a new batch size."""

from __future__ import annotations

import gradhub as gh
import numpy as np
import pytest
from gradhub.errors import BackwardRuleError


@pytest.mark.parametrize("create_graph", [False, True])
def test_replaced_leaf_data_without_forward_raises(create_graph) -> None:
    """After x.d = new (no forward()), the graph path used the new x with the old h while the
    array path used the old x: two different wrong numbers. Both now raise; forward() mends it."""
    x = gh.Variable(np.array([2.0]))
    h = x * 1.0
    y = h * x
    x.d = np.array([3.0])
    with pytest.raises(BackwardRuleError, match=r"Mul2.*input 'x1'.*forward\(\)"):
        gh.grad([y], [x], create_graph=create_graph)
    y.forward()
    (g,) = gh.grad([y], [x], create_graph=create_graph)
    np.testing.assert_allclose(g.d, [6.0])


@pytest.mark.nn_ops
def test_replaced_leaf_data_of_a_one_input_node_raises() -> None:
    x = gh.Variable(np.array([0.5, 1.0]))
    y = gh.functions.sin(x)
    x.d = np.array([1.0, 2.0])
    with pytest.raises(BackwardRuleError, match="Sin"):
        y.backward()
    y.forward()
    y.backward()
    np.testing.assert_allclose(x.g, np.cos([1.0, 2.0]), rtol=1e-6)


@pytest.mark.nn_ops
def test_an_in_place_update_of_a_leaf_is_detected_like_a_replacement() -> None:
    """w.d += v and the optimizers' in-place updates kept the array object, so a graph recorded
    before them mixed new leaf data with old saved arrays without an error."""
    from gradhub.optim import SGD

    w = gh.Variable(np.array([2.0]))
    x = gh.Variable(np.array([3.0]), need_grad=False)
    y = (w * x) * w
    y.backward()
    np.testing.assert_allclose(w.g, [12.0])
    SGD([w], lr=0.1).update()  # w = 0.8, in place
    w.cleargrad()
    with pytest.raises(BackwardRuleError, match="forward"):
        y.backward()
    y.forward()
    y.backward()
    np.testing.assert_allclose(w.g, [2 * 0.8 * 3.0])
    v = gh.Variable(np.array([2.0]))
    z = gh.functions.sin(v) * v
    v.d += 3.0
    with pytest.raises(BackwardRuleError):
        z.backward()


@pytest.mark.nn_ops
def test_mean_follows_a_new_batch_size_on_forward() -> None:
    """F.mean was sum * (1/n) with n fixed when the graph was built: after forward() on a
    larger batch its value and gradient were silently wrong."""
    F = gh.functions
    x = gh.Variable(np.ones((2, 3)))
    m = F.mean(x * x)
    x.d = np.full((4, 3), 2.0)
    m.forward()
    assert float(m.d) == 4.0
    m.backward()
    np.testing.assert_allclose(x.g, np.full((4, 3), 2 * 2.0 / 12))
    # batch normalization's batch statistics follow too (its means use the same function)
    b = gh.Variable(np.arange(6.0).reshape(2, 3))
    beta, gamma = gh.Variable(np.zeros((1, 3))), gh.Variable(np.ones((1, 3)))
    rm, rv = (
        gh.Variable(np.zeros((1, 3)), need_grad=False),
        gh.Variable(np.ones((1, 3)), need_grad=False),
    )
    y = F.batch_normalization(b, beta, gamma, rm, rv, batch_stat=True)
    new = np.arange(12.0).reshape(4, 3) ** 2
    b.d = new
    y.forward()
    want = (new - new.mean(0)) / np.sqrt(new.var(0) + 1e-5)
    np.testing.assert_allclose(y.d, want, rtol=1e-6)
