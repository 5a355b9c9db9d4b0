"""Regression tests for the engine and Variable bugs found in the fifth session's review."""

from __future__ import annotations

import warnings

import gradhub as gh
import numpy as np
import pytest
from gradhub.errors import BackwardRuleError


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize(
    "make", [lambda x, m: x * m, lambda x, m: x + m, lambda x, m: x / (m + 2), lambda x, m: x**m],
    ids=["mul", "add", "div", "pow"],
)
def test_float32_with_integer_data_keeps_the_float32_gradient(make, create_graph) -> None:
    """float32 combined with int64 data: numpy promotes the output to float64, the gradient of
    the float32 input comes back as float32 (it used to raise BackwardRuleError)."""
    x0 = np.array([1.5, 2.0], np.float32)
    m = np.array([1, 2])
    x = gh.Variable(x0)
    y = make(x, gh.Variable(m, need_grad=False)).sum()
    (g,) = gh.grad([y], [x], create_graph=create_graph)
    assert g.dtype == np.float32
    eps = 1e-6
    x64 = x0.astype(np.float64)
    num = [
        (make(x64 + eps * e, m).sum() - make(x64 - eps * e, m).sum()) / (2 * eps)
        for e in np.eye(2)
    ]
    np.testing.assert_allclose(g.d, num, rtol=1e-5)


def test_float32_times_integer_array_with_backward() -> None:
    x = gh.Variable([1.0, 2.0])
    (x * np.array([1, 0])).sum().backward()
    assert x.g.dtype == np.float32
    np.testing.assert_array_equal(x.g, [1.0, 0.0])


@pytest.mark.parametrize("scalar", [np.uint8(3), np.uint32(3), np.int8(-128), np.int64(5)])
def test_subtracting_a_numpy_integer_scalar_is_numpy_subtraction(scalar) -> None:
    """x - s with an unsigned or minimal numpy integer used to negate s in its own dtype (wrap)."""
    a = np.array([10.0, 20.0], np.float32)
    x = gh.Variable(a)
    y = x - scalar
    np.testing.assert_array_equal(y.d, a - scalar)
    assert y.dtype == (a - scalar).dtype
    (g,) = gh.grad([y.sum()], [x])
    np.testing.assert_array_equal(g.d, [1.0, 1.0])


def test_division_by_a_zero_scalar_is_infinite_not_zero_division_error() -> None:
    x = gh.Variable(np.array([-1.0, 2.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal((x / 0).d, [-np.inf, np.inf])
        np.testing.assert_array_equal((x / -0.0).d, [np.inf, -np.inf])
        (g,) = gh.grad([(x / 0).sum()], [x], create_graph=False)
    np.testing.assert_array_equal(g.d, [np.inf, np.inf])


def test_backward_retain_grad_on_a_leaf_accumulates_once() -> None:
    """backward(retain_grad=True) on a leaf set .g to the seed and then added the seed again."""
    x = gh.Variable([1.0, 2.0])
    x.backward(retain_grad=True)
    np.testing.assert_array_equal(x.g, [1.0, 1.0])
    x.g = 5.0
    x.backward(retain_grad=True)
    np.testing.assert_array_equal(x.g, [6.0, 6.0])


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


def test_replaced_leaf_data_of_a_one_input_node_raises() -> None:
    x = gh.Variable(np.array([0.5, 1.0]))
    y = gh.functions.sin(x)
    x.d = np.array([1.0, 2.0])
    with pytest.raises(BackwardRuleError, match="Sin"):
        y.backward()
    y.forward()
    y.backward()
    np.testing.assert_allclose(x.g, np.cos([1.0, 2.0]), rtol=1e-6)


def test_assigning_a_scalar_to_d_fills() -> None:
    """x.d = 1.0 turned a (2, 3) Variable into a 0-d one; it fills, as nnabla's x.d = 0."""
    x = gh.Variable(np.zeros((2, 3)))
    y = (x * x).sum()
    x.d = 1.0
    assert x.shape == (2, 3)
    y.forward()
    assert float(y.d) == 6.0


def test_retained_intermediate_grad_is_not_the_leaf_grad() -> None:
    x = gh.Variable([1.0, 2.0])
    h = x + 1.0
    (h * h).sum().backward(retain_grad=True)
    np.testing.assert_array_equal(h.g, [4.0, 6.0])
    h.g[0] = 99.0
    np.testing.assert_array_equal(x.g, [4.0, 6.0])


def test_set_grad_gives_each_input_its_own_array() -> None:
    a = gh.Variable([1.0, 2.0])
    b = gh.Variable([3.0, 4.0])
    gh.grad([a + b], [a, b], create_graph=False, set_grad=True)
    a.g[0] = 100.0
    np.testing.assert_array_equal(b.g, [1.0, 1.0])


def test_create_graph_backward_gives_writable_grads_of_their_own() -> None:
    """Sum's gradient is a read-only broadcast view; .g must be a writable array of its own."""
    w = gh.Variable(np.ones((100, 100)))
    w.sum().backward(create_graph=True)
    w.g *= 0.5
    np.testing.assert_array_equal(w.g, np.full((100, 100), 0.5))
    v = np.ones(2, np.float32)
    a = gh.Variable([1.0, 2.0])
    (a * 1.0).backward(grad=v, create_graph=True)
    a.g[0] = 7.0
    np.testing.assert_array_equal(v, [1.0, 1.0])


def test_create_graph_backward_grad_stays_differentiable() -> None:
    """The copy made for .g under create_graph=True is recorded: d(sum(x.g))/dx = 2 for x*x."""
    x = gh.Variable(np.array([1.0, 3.0]))
    (x * x).sum().backward(create_graph=True)
    (gg,) = gh.grad([x._grad.sum()], [x])  # type: ignore[union-attr]
    np.testing.assert_allclose(gg.d, [2.0, 2.0])


@pytest.mark.parametrize("create_graph", [False, True])
def test_gradient_of_zero_to_the_x_is_zero_not_nan(create_graph) -> None:
    x = gh.Variable(np.array([0.5, 2.0]))
    (g,) = gh.grad([(0.0**x).sum()], [x], create_graph=create_graph)
    np.testing.assert_array_equal(g.d, [0.0, 0.0])


def test_kernel_errors_of_private_numpy_types_still_name_the_function() -> None:
    """numpy's ufunc errors cannot be rebuilt from a message; the wrapper raised a TypeError about
    a missing constructor argument instead of naming the function."""
    with pytest.raises(TypeError, match=r"add2\(\) \(Add2"):
        gh.Variable([1.0]) + "a"


def test_fixed_use_of_an_existing_trainable_parameter_passes_no_gradient() -> None:
    """PF.affine(..., fix_parameters=True) on weights that exist trainable returned the trainable
    Variable itself, so the 'fixed' path updated them (nnabla returns an unlinked copy)."""
    import gradhub.parametric_functions as PF

    gh.clear_parameters()
    x = gh.Variable(np.ones((2, 3), np.float32), need_grad=False)
    PF.affine(x, 4, name="fc")
    y2 = PF.affine(x, 4, name="fc", fix_parameters=True)
    w = gh.get_parameters()["fc/affine/W"]
    gh.functions.sum(y2).backward()
    assert w.need_grad and w.g is None
    y1 = PF.affine(x, 4, name="fc")  # the trainable use still reaches them
    gh.functions.sum(y1).backward()
    np.testing.assert_array_equal(w.g, np.full((3, 4), 2.0))
    np.testing.assert_array_equal(y1.d, y2.d)  # the same weights


def test_adam_bias_correction_counts_each_parameters_own_updates() -> None:
    """Adam's t was one counter for all parameters: a parameter skipped (None) for 10 calls then
    moved by 0.048 on its first update instead of lr (PyTorch, nnabla: per-parameter steps)."""
    from gradhub.optim import Adam

    g = np.array([0.5], np.float32)
    a, b = gh.Variable([1.0]), gh.Variable([1.0])
    opt = Adam([a, b], lr=0.1)
    for _ in range(10):
        opt.update([g, None])
    opt.update([g, g])
    np.testing.assert_allclose(b.d, [0.9], rtol=1e-6)
    # a: 11 updates with a constant gradient, each m_hat / sqrt(v_hat) = 1: moved by 11 lr
    np.testing.assert_allclose(a.d, [1.0 - 11 * 0.1], rtol=1e-5)


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
    rm, rv = gh.Variable(np.zeros((1, 3)), need_grad=False), gh.Variable(np.ones((1, 3)),
                                                                       need_grad=False)
    y = F.batch_normalization(b, beta, gamma, rm, rv, batch_stat=True)
    new = np.arange(12.0).reshape(4, 3) ** 2
    b.d = new
    y.forward()
    want = (new - new.mean(0)) / np.sqrt(new.var(0) + 1e-5)
    np.testing.assert_allclose(y.d, want, rtol=1e-6)
