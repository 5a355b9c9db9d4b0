"""``Variable.need_grad = False`` on a Variable produced by a function (an intermediate): no
gradient flows to it or through it, whether the flag is set before or after the Variable is used;
``True`` restores the path. Expected values are derived by hand (h = 3x held constant) and checked
against float64 finite differences of the function with h frozen.
"""

from __future__ import annotations

from collections.abc import Callable

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest

X0 = np.array([1.0, 2.0])


def _fd(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central float64 finite differences of a scalar function."""
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        out.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return out


def _h_frozen_grad() -> np.ndarray:
    """d/dx of sum(h * x) with h = 3 * X0 held constant: h."""
    h0 = 3 * X0
    return _fd(lambda x: float(np.sum(h0 * x)), X0.copy())


def test_reference_values() -> None:
    np.testing.assert_allclose(_h_frozen_grad(), [3.0, 6.0], rtol=1e-8)


@pytest.mark.parametrize("when", ["before", "after"])
def test_intermediate_stops_grad_and_backward(when: str) -> None:
    x = gh.Variable(X0.copy())
    h = x * 3
    if when == "before":
        h.need_grad = False
    y = F.sum(h * x)
    if when == "after":
        h.need_grad = False
    assert h.need_grad is False
    assert y.need_grad is True  # x still needs a gradient
    expected = _h_frozen_grad()
    np.testing.assert_allclose(gh.grad([y], [x])[0].d, expected, rtol=1e-6)
    y.backward()
    np.testing.assert_allclose(x.g, expected, rtol=1e-6)
    assert h.g is None  # no gradient flows to h


@pytest.mark.parametrize("when", ["before", "after"])
def test_only_consumer_of_a_stopped_intermediate(when: str) -> None:
    x = gh.Variable(X0.copy())
    h = x * 3
    if when == "before":
        h.need_grad = False
    y = F.sum(h * 2.0)
    if when == "after":
        h.need_grad = False
    (g,) = gh.grad([y], [x])
    np.testing.assert_array_equal(g.d, [0.0, 0.0])
    with pytest.raises(ValueError, match="not reachable"):
        gh.grad([y], [x], unreachable="error")
    if when == "before":  # y itself was recorded needing no gradient: refused, as PyTorch's
        with pytest.raises(RuntimeError, match=r"backward: .* needs no gradient"):
            y.backward()
    else:
        y.backward()
    assert x.g is None  # nothing reached x


def test_setting_true_again_restores_the_path() -> None:
    x = gh.Variable(X0.copy())
    h = x * 3
    y = F.sum(h * x)
    h.need_grad = False
    np.testing.assert_allclose(gh.grad([y], [x])[0].d, [3.0, 6.0])
    h.need_grad = True
    assert h.need_grad is True
    full = _fd(lambda v: float(np.sum(3 * v * v)), X0.copy())  # 6x
    np.testing.assert_allclose(gh.grad([y], [x])[0].d, full, rtol=1e-6)
    y.backward()
    np.testing.assert_allclose(x.g, [6.0, 12.0])
    y2 = F.sum(h * 2.0)  # built after restoring: the path is there
    np.testing.assert_allclose(gh.grad([y2], [x])[0].d, [6.0, 6.0])


def test_true_on_an_intermediate_of_constants_is_refused() -> None:
    c = gh.Variable(X0.copy(), need_grad=False)
    h = c * 3  # recorded needing no gradient: no rule, so no gradient could ever reach h
    assert h.need_grad is False and h.creator is not None and h.creator.rule is None
    with pytest.raises(ValueError, match=r"need_grad=True on an output of mul_scalar\(\)"):
        h.need_grad = True
    assert h.need_grad is False
    h.need_grad = False  # nothing to change
    leaf = h.detach()  # what the message suggests
    leaf.need_grad = True
    y = F.sum(leaf * leaf)
    np.testing.assert_allclose(gh.grad([y], [leaf])[0].d, 2 * 3 * X0)


@pytest.mark.nn_ops
def test_one_output_of_a_multi_output_function_is_refused() -> None:
    xs = gh.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]))
    a, b = F.split(xs, axis=0)
    with pytest.raises(NotImplementedError, match=r"need_grad=False on one output of split\(\)"):
        a.need_grad = False
    assert a.need_grad is True  # unchanged
    a.need_grad = True  # nothing to change: allowed
    ym = F.sum(a * 2.0) + F.sum(b * 3.0)
    ym.backward()
    np.testing.assert_allclose(xs.g, [[2.0, 2.0], [3.0, 3.0]])
    # the .detach() the message suggests does what was asked
    xs.cleargrad()
    a2, b2 = F.split(xs, axis=0)
    y2 = F.sum(a2.detach() * a2) + F.sum(b2 * 3.0)
    y2.backward()
    np.testing.assert_allclose(xs.g, [[1.0, 2.0], [3.0, 3.0]])


@pytest.mark.nn_ops
def test_multi_output_of_constants_accepts_false() -> None:
    xs = gh.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]), need_grad=False)
    a, _ = F.split(xs, axis=0)
    a.need_grad = False  # already False, no rule: nothing to refuse
    assert a.need_grad is False


def test_leaves_unchanged() -> None:
    x = gh.Variable(X0.copy())
    x.need_grad = False
    y = F.sum(x * x)
    assert y.need_grad is False
    x.need_grad = True
    y = F.sum(x * x)
    y.backward()
    np.testing.assert_allclose(x.g, [2.0, 4.0])
    labels = gh.Variable(np.array([1, 2]), need_grad=False)
    with pytest.raises(TypeError, match="need_grad=True needs floating-point data"):
        labels.need_grad = True
    assert labels.need_grad is False
    labels.need_grad = False  # allowed
    with pytest.raises(TypeError, match="need_grad=True needs floating-point data"):
        gh.Variable(np.array([1, 2]), need_grad=True)  # as the constructor


@pytest.mark.nn_ops
def test_true_on_an_integer_intermediate_raises() -> None:
    x = gh.Variable(np.array([1.0, 5.0, 2.0]))
    i = F.max(x, only_index=True)
    assert i.dtype.kind == "i" and i.need_grad is False
    with pytest.raises(TypeError, match="need_grad=True needs floating-point data"):
        i.need_grad = True
    i.need_grad = False  # nothing to change


def test_second_order_respects_the_flag() -> None:
    x = gh.Variable(X0.copy())
    h = x * 3
    h.need_grad = False
    y = F.sum(h * x * x)  # h constant: dy/dx = 2 h x, d(sum dy/dx)/dx = 2 h
    (g,) = gh.grad([y], [x], create_graph=True)
    h0 = 3 * X0
    np.testing.assert_allclose(g.d, _fd(lambda v: float(np.sum(h0 * v * v)), X0.copy()), rtol=1e-6)
    (gg,) = gh.grad([F.sum(g)], [x])
    np.testing.assert_allclose(gg.d, 2 * h0)  # [6, 12]; 18x = [18, 36] without the flag
    # set after a first-order pass, then second order through backward(create_graph=True)
    x2 = gh.Variable(X0.copy())
    h2 = x2 * 3
    y2 = F.sum(h2 * x2 * x2)
    h2.need_grad = False
    y2.backward(create_graph=True)
    np.testing.assert_allclose(x2.g, 2 * h0 * X0)
    (gg2,) = gh.grad([F.sum(x2.grad_var)], [x2])
    np.testing.assert_allclose(gg2.d, 2 * h0)


def test_retain_grad_and_backward_paths() -> None:
    x = gh.Variable(X0.copy())
    h = x * 3
    m = h * x
    y = F.sum(m)
    h.need_grad = False
    y.backward(retain_grad=True)
    np.testing.assert_allclose(x.g, [3.0, 6.0])
    np.testing.assert_array_equal(m.g, [1.0, 1.0])
    assert h.g is None
    x.cleargrad()
    y.backward(retain_graph=False)
    np.testing.assert_allclose(x.g, [3.0, 6.0])
    # grad(retain_grad=True) likewise leaves h without a gradient
    x.cleargrad()
    y.forward()
    (gx,) = gh.grad([y], [x], retain_grad=True)
    np.testing.assert_allclose(gx.d, [3.0, 6.0])
    assert h.g is None


def test_grad_with_respect_to_a_stopped_intermediate() -> None:
    x = gh.Variable(X0.copy())
    h = x * 3
    y = F.sum(h * x)
    h.need_grad = False
    g = gh.grad([y], [x, h], unreachable="none")
    np.testing.assert_allclose(g[0].d, [3.0, 6.0])
    assert g[1] is None
    with pytest.raises(ValueError, match=r"inputs\[1\] needs no gradient"):
        gh.grad([y], [x, h], unreachable="error")


def test_output_set_false_after_building_is_a_constant() -> None:
    """The chosen semantics: an output set need_grad=False is a constant, so that backward()
    from it is refused (it would accumulate nothing) and grad() finds no path (nnabla's layer
    backpropagates)."""
    x = gh.Variable(X0.copy())
    y = F.sum(x * x)
    y.need_grad = False
    with pytest.raises(RuntimeError, match="its need_grad was set to False"):
        y.backward()
    assert x.g is None
    np.testing.assert_array_equal(gh.grad([y], [x])[0].d, [0.0, 0.0])
    with pytest.raises(ValueError, match="not reachable"):
        gh.grad([y], [x], unreachable="error")
    y.need_grad = True
    y.backward()
    np.testing.assert_allclose(x.g, [2.0, 4.0])


def test_repr_shows_the_flag() -> None:
    x = gh.Variable(X0.copy())
    h = x * 3
    h.need_grad = False
    assert "need_grad=False" in repr(h)
