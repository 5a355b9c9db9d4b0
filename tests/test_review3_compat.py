"""Regression tests for the third review of the chainer and nnabla compatibility layers.

chainer: ``chainer.grad`` differentiates inputs with ``requires_grad=False`` and, with
``retain_grad=True``, stores the gradient of an intermediate input; ``Variable.backward`` leaves
the output's ``.grad`` None unless ``retain_grad``. nnabla: batch normalization updates the
running statistics only when the graph is executed (``forward()``, or building it with
auto_forward on), and a second backward after ``clear_buffer=True`` names nnabla's remedy.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import gradhub_compat.chainer.functions as CF
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as NF
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest
from gradhub.errors import BackwardRuleError
from gradhub_compat import chainer
from numeric_helpers import central_differences


def _c(values: object, requires_grad: bool = True) -> chainer.Variable:
    return chainer.Variable(np.array(values, dtype=np.float64), requires_grad=requires_grad)




# -- chainer F1: inputs with requires_grad=False are differentiated ------------------------------


def test_chainer_grad_of_an_input_that_requires_no_grad_is_computed() -> None:
    x = _c([1.0, 2.0])
    w = _c([1.0, 2.0], requires_grad=False)
    (gw,) = chainer.grad([w * w], [w])
    np.testing.assert_allclose(gw.array, [2.0, 4.0])  # 2 w
    gw, gx = chainer.grad([w * x], [w, x])
    np.testing.assert_allclose(gw.array, [1.0, 2.0])  # x
    np.testing.assert_allclose(gx.array, [1.0, 2.0])  # w


def test_chainer_grad_of_a_constant_goes_through_every_path() -> None:
    # paths through functions of constants only, and through functions that also take x
    x = _c([0.5, -1.5])
    w = _c([0.3, 1.2], requires_grad=False)
    a = np.array([0.5, -1.5])

    def f(wd: np.ndarray) -> float:
        return float(np.sum(np.exp(wd) * np.sin(2 * wd) * a + wd * a * a + wd))

    y = CF.sum(CF.exp(w) * CF.sin(2 * w) * x + (w * x) * x + w)
    (gw,) = chainer.grad([y], [w])
    np.testing.assert_allclose(gw.array, central_differences(f, w.array.copy()), rtol=1e-7)
    assert w.grad is None and x.grad is None
    assert w.requires_grad is False  # restored after the call
    y.backward()  # a plain backward still leaves the constant alone
    assert w.grad is None
    np.testing.assert_allclose(x.grad, np.exp(w.array) * np.sin(2 * w.array) + 2 * w.array * a)


def test_chainer_grad_of_a_constant_whose_intermediates_are_gone() -> None:
    w = _c([0.3, 1.2], requires_grad=False)
    y = CF.sum(CF.tanh(CF.exp(w) * 3.0))  # the intermediate Variables are collected
    (gw,) = chainer.grad([y], [w])
    t = np.tanh(3 * np.exp(w.array))
    np.testing.assert_allclose(gw.array, (1 - t * t) * 3 * np.exp(w.array), rtol=1e-12)


def test_chainer_grad_of_an_intermediate_constant_and_double_backprop() -> None:
    w = _c([1.0, 2.0], requires_grad=False)
    h = 2 * w
    assert h.requires_grad is False
    (gh_,) = chainer.grad([CF.sum(h * h * h)], [h])
    np.testing.assert_allclose(gh_.array, 3 * (2 * w.array) ** 2)
    (g,) = chainer.grad([w * w * w], [w], enable_double_backprop=True)
    np.testing.assert_allclose(g.array, 3 * w.array**2)
    (gg,) = chainer.grad([g], [w])
    np.testing.assert_allclose(gg.array, 6 * w.array)


def test_chainer_grad_of_a_constant_that_is_also_the_output_is_the_seed() -> None:
    w = _c([1.0, 2.0], requires_grad=False)
    (g,) = chainer.grad([w], [w])
    np.testing.assert_array_equal(g.array, [1.0, 1.0])
    h = 2 * w
    (g,) = chainer.grad([h], [h], grad_outputs=[np.array([3.0, 4.0])])
    np.testing.assert_array_equal(g.array, [3.0, 4.0])
    assert w.requires_grad is False and h.requires_grad is False


def test_chainer_grad_of_an_unreachable_constant_is_still_none() -> None:
    x = _c([1.0, 2.0])
    w = _c([1.0, 2.0], requires_grad=False)
    c = w * 2  # not used by y
    y = x * x
    assert chainer.grad([y], [w, c]) == [None, None]
    assert c.requires_grad is False


# -- chainer F2: retain_grad stores the gradient of an intermediate input -------------------------


def test_chainer_grad_retain_grad_stores_the_gradient_of_an_intermediate_input() -> None:
    x = _c([1.0, 2.0])
    h = 2 * x
    z = 3 * h
    (gh_,) = chainer.grad([z], [h], retain_grad=True)
    np.testing.assert_allclose(gh_.array, [3.0, 3.0])
    np.testing.assert_allclose(z.grad, [1.0, 1.0])
    np.testing.assert_allclose(h.grad, [3.0, 3.0])
    assert x.grad is None  # a leaf input: retain_grad stores nothing on it


def test_chainer_grad_without_retain_grad_leaves_intermediate_inputs_alone() -> None:
    x = _c([1.0, 2.0])
    h = 2 * x
    chainer.grad([3 * h], [h])
    assert h.grad is None


# -- chainer F3: backward leaves the output's .grad None without retain_grad ----------------------


def test_chainer_backward_clears_the_output_grad_without_retain_grad() -> None:
    x = _c(1.0)
    y = 2 * x
    y.backward()
    assert y.grad is None
    np.testing.assert_allclose(x.grad, 2.0)
    y.grad = np.array(5.0)
    y.backward()  # the user's initial error is used, then dropped
    assert y.grad is None
    np.testing.assert_allclose(x.grad, 12.0)
    y.backward(retain_grad=True)
    np.testing.assert_allclose(y.grad, 1.0)
    np.testing.assert_allclose(x.grad, 14.0)
    z = CF.sum(2 * x)
    z.backward(loss_scale=3.0)
    assert z.grad is None
    np.testing.assert_allclose(x.grad, 20.0)  # 14 + 3 * 2


# -- nnabla: auto_forward and batch normalization's running statistics --------------------------

_BATCH = np.arange(24.0).reshape(8, 3)


@pytest.fixture(autouse=True)
def _fresh_parameters() -> Iterator[None]:
    nn.clear_parameters()
    yield
    nn.clear_parameters()
    nn.set_auto_forward(False)


def _stats(prefix: str = "bn/bn") -> tuple[np.ndarray, np.ndarray]:
    p = nn.get_parameters(grad_only=False)
    return p[f"{prefix}/mean"].d.ravel().copy(), p[f"{prefix}/var"].d.ravel().copy()


def test_nnabla_auto_forward_is_a_thread_local_flag_off_by_default() -> None:
    assert nn.get_auto_forward() is False
    with nn.auto_forward():
        assert nn.get_auto_forward() is True
        seen: list[bool] = []
        t = threading.Thread(target=lambda: seen.append(nn.get_auto_forward()))
        t.start()
        t.join()
        assert seen == [False]
        with nn.auto_forward(False):
            assert nn.get_auto_forward() is False
        assert nn.get_auto_forward() is True
    assert nn.get_auto_forward() is False
    nn.set_auto_forward(True)
    assert nn.get_auto_forward() is True


def test_nnabla_pf_batch_normalization_build_leaves_running_statistics_alone() -> None:
    x = nn.Variable((8, 3))
    h = PF.batch_normalization(x, name="bn")
    m, v = _stats()
    np.testing.assert_array_equal(m, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(v, [1.0, 1.0, 1.0])
    x.d = _BATCH
    h.forward()
    m, v = _stats()
    mean, var = _BATCH.mean(0), _BATCH.var(0, ddof=1)  # var = 60 for every column
    np.testing.assert_allclose(m, 0.1 * mean, rtol=1e-6)
    np.testing.assert_allclose(v, 0.9 + 0.1 * var, rtol=1e-6)  # 6.3
    h.forward()
    m2, v2 = _stats()
    np.testing.assert_allclose(m2, 0.9 * m + 0.1 * mean, rtol=1e-6)
    np.testing.assert_allclose(v2, 0.9 * v + 0.1 * var, rtol=1e-6)


def test_nnabla_pf_batch_normalization_rebuild_with_existing_parameters() -> None:
    x = nn.Variable.from_numpy_array(_BATCH)
    with nn.parameter_scope("net"):
        PF.batch_normalization(x, (1,), 0.5, 1e-5, True, name="bn").forward()
        m, v = _stats("bn/bn")
        # a second build (positional batch_stat) reuses the parameters and leaves them alone
        h = PF.batch_normalization(x, (1,), 0.5, 1e-5, True, name="bn")
        np.testing.assert_array_equal(_stats("bn/bn")[1], v)
        np.testing.assert_array_equal(_stats("bn/bn")[0], m)
        h.forward()
        np.testing.assert_allclose(_stats("bn/bn")[1], 0.5 * v + 0.5 * _BATCH.var(0, ddof=1))


def test_nnabla_pf_batch_normalization_with_auto_forward_updates_at_build() -> None:
    x = nn.Variable.from_numpy_array(_BATCH)
    var = _BATCH.var(0, ddof=1)
    with nn.auto_forward():
        h = PF.batch_normalization(x, name="bn")
    _, v = _stats()
    np.testing.assert_allclose(v, 0.9 + 0.1 * var, rtol=1e-6)
    h.forward()
    np.testing.assert_allclose(_stats()[1], 0.9 * (0.9 + 0.1 * var) + 0.1 * var, rtol=1e-6)


def test_nnabla_f_batch_normalization_build_leaves_running_statistics_alone() -> None:
    x = nn.Variable.from_numpy_array(_BATCH)
    beta = nn.Variable.from_numpy_array(np.zeros((1, 3)))
    gamma = nn.Variable.from_numpy_array(np.ones((1, 3)))
    mean = nn.Variable.from_numpy_array(np.zeros((1, 3)))
    var = nn.Variable.from_numpy_array(np.ones((1, 3)))
    mean_arr = mean.d
    y = NF.batch_normalization(x, beta, gamma, mean, var, decay_rate=0.8)
    np.testing.assert_array_equal(mean.d, np.zeros((1, 3)))
    np.testing.assert_array_equal(var.d, np.ones((1, 3)))
    assert mean.d is mean_arr  # restored in place: the graph still uses the same arrays
    y.forward()
    np.testing.assert_allclose(mean.d.ravel(), 0.2 * _BATCH.mean(0), rtol=1e-6)
    np.testing.assert_allclose(var.d.ravel(), 0.8 + 0.2 * _BATCH.var(0, ddof=1), rtol=1e-6)
    # inference mode and auto_forward on: nothing restored (nothing to, or nnabla computes)
    before = var.d.copy()
    NF.batch_normalization(x, beta, gamma, mean, var, batch_stat=False)
    np.testing.assert_array_equal(var.d, before)
    with nn.auto_forward(True):
        NF.batch_normalization(x, beta, gamma, mean, var, decay_rate=0.8)
    np.testing.assert_allclose(var.d.ravel(), 0.8 * before.ravel() + 0.2 * _BATCH.var(0, ddof=1))


# -- nnabla: clear_parameters forgets the current scope only ---------------------------------------


def test_nnabla_clear_parameters_inside_a_scope_keeps_the_other_scopes() -> None:
    x = nn.Variable.from_numpy_array(np.ones((2, 3)))
    PF.affine(x, 2, name="enc")
    PF.affine(x, 2, name="dec")
    with nn.parameter_scope("dec"):
        nn.clear_parameters()
        assert list(nn.get_parameters()) == []
    assert list(nn.get_parameters()) == ["enc/affine/W", "enc/affine/b"]
    nn.clear_parameters()
    assert list(nn.get_parameters(grad_only=False)) == []


# -- nnabla: a second backward after clear_buffer=True names nnabla's remedy ----------------------


def test_nnabla_backward_after_clear_buffer_asks_for_forward() -> None:
    x = nn.Variable.from_numpy_array(np.array([1.0, 2.0]), need_grad=True)
    y = NF.sum(NF.sin(x) * x)
    y.backward(clear_buffer=True)
    with pytest.raises(BackwardRuleError, match=r"backward\(clear_buffer=True\).*forward\(\)") as e:
        y.backward()
    assert "retain_graph" not in str(e.value)
    assert "nnabla Variable.backward" in str(e.value)
    with pytest.raises(BackwardRuleError, match=r"nnabla\.grad: .*forward\(\)") as e:
        nn.grad([y], [x])
    assert "retain_graph" not in str(e.value)
    y.forward()
    x.g = 0
    y.backward()
    xd = np.array([1.0, 2.0])
    np.testing.assert_allclose(x.g, np.sin(xd) + xd * np.cos(xd), rtol=1e-6)


def test_chainer_grad_of_a_constant_through_a_deep_chain_of_dead_intermediates() -> None:
    """Recomputing the values of collected constant nodes is iterative: no RecursionError."""
    w = _c([0.3, -0.2], requires_grad=False)
    h = w
    for _ in range(3000):  # deeper than Python's recursion limit
        h = CF.tanh(h)  # each intermediate Variable dies at the next iteration
    (gw,) = chainer.grad([CF.sum(h)], [w])
    v, d = w.array.copy(), np.ones(2)
    for _ in range(3000):
        v = np.tanh(v)
        d = d * (1 - v * v)
    np.testing.assert_allclose(gw.array, d, rtol=1e-10)
