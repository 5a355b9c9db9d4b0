"""Regression tests for the fifth review of gradhub_compat.chainer against chainer 7.8.1.

Each expected behaviour was checked with the real chainer 7.8.1 (the reviewer's scripts in the
review report); gradients are compared with independently known values.
"""

from __future__ import annotations

import operator
import threading
import warnings

import gradhub as gh
import gradhub.optim
import gradhub_compat.chainer.functions as F
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import Variable


def _v(data: object, dtype: object = np.float32) -> Variable:
    return Variable(np.array(data, dtype=dtype))


# -- 1. elementwise losses refuse operands of different shapes ----------------------------------


@pytest.mark.parametrize(
    "name", ["mean_squared_error", "mean_absolute_error", "squared_error", "absolute_error"]
)
def test_elementwise_losses_refuse_different_shapes(name: str) -> None:
    y = _v([[1.0], [2.0], [3.0], [4.0]])  # (N, 1) prediction
    t = np.array([1.0, 2.0, 3.0, 4.0], np.float32)  # (N,) target
    with pytest.raises(ValueError, match=rf"chainer F\.{name}: .*\(4, 1\) and \(4,\)"):
        getattr(F, name)(y, t)


def test_mean_squared_error_of_equal_shapes_and_its_gradient() -> None:
    y = _v([1.0, 2.0, 4.0])
    t = np.array([1.0, 1.0, 1.0], np.float32)
    loss = F.mean_squared_error(y, t)
    assert float(loss.array) == pytest.approx((0 + 1 + 9) / 3)
    loss.backward()
    np.testing.assert_allclose(y.grad, 2 * (y.array - t) / 3, rtol=1e-6)


# -- 2. operators return chainer Variables -------------------------------------------------------


def test_abs_and_other_operators_return_chainer_variables() -> None:
    x = _v([[-1.0, 2.0], [3.0, -4.0]])
    a = abs(x)
    assert type(a) is Variable
    np.testing.assert_array_equal(a.array, [[1.0, 2.0], [3.0, 4.0]])
    assert a.creator is not None
    assert type(abs(x) * 2) is Variable
    results = [
        +x,
        -x,
        2.0 / x,
        2.0**x,
        x**2,
        x.T,
        x.reshape(4),
        x.transpose(),
        x[0],
        x.sum(),
        x @ x,
        x.detach(),
        x.get_unlinked_variable(),
    ]
    for r in results:
        assert type(r) is Variable, r
    F.sum(abs(x)).backward()
    np.testing.assert_array_equal(x.grad, [[-1.0, 1.0], [1.0, -1.0]])


# -- 3. .grad / .grad_var of another dtype or shape ----------------------------------------------


def test_grad_setter_refuses_another_dtype_and_shape() -> None:
    w = _v([1.0, 2.0])
    with pytest.raises(TypeError, match=r"Variable\.grad: .*float64.*float32"):
        w.grad = np.zeros(2, np.float64)
    with pytest.raises(ValueError, match=r"Variable\.grad: .*\(3,\).*\(2,\)"):
        w.grad = np.zeros(3, np.float32)
    with pytest.raises(TypeError, match=r"Variable\.grad_var: .*float64.*float32"):
        w.grad_var = Variable(np.zeros(2, np.float64))
    with pytest.raises(ValueError, match=r"Variable\.grad_var: .*\(3,\).*\(2,\)"):
        w.grad_var = Variable(np.zeros(3, np.float32))
    assert w.grad is None
    F.sum(w * w).backward()
    assert w.grad.dtype == np.float32
    np.testing.assert_array_equal(w.grad, [2.0, 4.0])


# -- 4. backward without retain_grad leaves intermediate grads alone ---------------------------


def test_backward_without_retain_grad_keeps_intermediate_grads() -> None:
    x = _v([1.0, 2.0])
    h = x * 3
    y = F.sum(h * h)
    y.backward(retain_grad=True)
    np.testing.assert_array_equal(h.grad, [6.0, 12.0])
    y.backward()
    np.testing.assert_array_equal(h.grad, [6.0, 12.0])  # chainer: neither set nor cleared
    h.grad = np.array([100.0, 100.0], np.float32)
    y.backward()
    np.testing.assert_array_equal(h.grad, [100.0, 100.0])
    np.testing.assert_array_equal(x.grad, 3 * (18 * x.array))  # three backward passes


# -- 5. backward on a Variable without a creator ------------------------------------------------


def test_backward_on_a_leaf_seeds_one_element_only() -> None:
    x = _v(3.0)
    x.backward()
    np.testing.assert_array_equal(x.grad, 1.0)
    x.grad = np.array(5.0, np.float32)
    x.backward()  # an existing grad is kept
    np.testing.assert_array_equal(x.grad, 5.0)
    s = _v(3.0)
    s.backward(loss_scale=4.0)
    np.testing.assert_array_equal(s.grad, 4.0)
    one = _v([3.0])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        one.backward()
    assert any(issubclass(w.category, DeprecationWarning) for w in rec)
    np.testing.assert_array_equal(one.grad, [1.0])
    big = _v([1.0, 2.0])
    big.backward()  # nothing, no error
    assert big.grad is None


# -- 6. comparisons, bool and hash raise ---------------------------------------------------------


def test_comparisons_bool_and_hash_raise() -> None:
    loss = _v(0.0)
    a, b = _v([1.0, 2.0]), _v([1.0, 2.0])
    for op in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge):
        for left, right in ((a, b), (loss, 0.0), (np.ones(2, np.float32), a)):
            with pytest.raises(TypeError, match="do not support"):
                op(left, right)
    with pytest.raises(TypeError, match="cannot be evaluated as Python bool"):
        bool(loss)
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)
    assert a in [a]  # identity, as chainer


def test_unhashable_variables_work_with_grad_and_optimizers() -> None:
    """Nothing in gradhub hashes Variables: chainer.grad, double backprop and an optimizer."""
    x = _v([1.0, 2.0])
    y = F.sum(x * x * x)
    (gx,) = chainer.grad([y], [x], enable_double_backprop=True)
    np.testing.assert_allclose(gx.array, 3 * x.array**2)
    (ggx,) = chainer.grad([F.sum(gx)], [x])
    np.testing.assert_allclose(ggx.array, 6 * x.array)
    opt = gradhub.optim.SGD([x], lr=0.1)
    x.cleargrad()
    F.sum(x * x).backward()
    opt.update()
    np.testing.assert_allclose(x.array, [0.8, 1.6], rtol=1e-6)


# -- 7. one-sided F.clip ---------------------------------------------------------------------------


def test_clip_with_one_bound() -> None:
    x = _v([-2.0, 0.5, 3.0])
    hi = F.clip(x, None, 1.0)
    np.testing.assert_array_equal(hi.array, [-2.0, 0.5, 1.0])
    lo = F.clip(x, 0.0, None)
    np.testing.assert_array_equal(lo.array, [0.0, 0.5, 3.0])
    F.sum(hi).backward()
    np.testing.assert_array_equal(x.grad, [1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match=r"chainer F\.clip: x_min and x_max are both None"):
        F.clip(x, None, None)


# -- 8. split_axis past the end --------------------------------------------------------------------


def test_split_axis_refuses_indices_past_the_axis() -> None:
    x = Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    with pytest.raises(ValueError, match=r"chainer F.split_axis: the last index 5 .* length 3"):
        F.split_axis(x, [1, 5], axis=1)
    assert [p.shape for p in F.split_axis(x, [1, 3], axis=1)] == [(2, 1), (2, 2), (2, 0)]


# -- 9. F.mean with a one-element tuple axis and weights ----------------------------------------


def test_mean_weights_with_one_element_tuple_axis() -> None:
    x = Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    w = np.array([1.0, 2.0, 3.0], np.float32)
    for axis in ((1,), (-1,), [1]):
        m = F.mean(x, axis=axis, weights=w)
        np.testing.assert_allclose(m.array, [8 / 6, 26 / 6], rtol=1e-6)
    with pytest.raises(ValueError, match=r"chainer F\.mean: weights need axis None, an int"):
        F.mean(x, axis=(0, 1), weights=np.ones((2, 3), np.float32))


# -- 10. chainer's dtype rule ---------------------------------------------------------------------


def test_constants_are_cast_to_the_variable_dtype() -> None:
    x = _v([[1.0, 2.0], [3.0, 4.0]])
    consts = [np.ones((2, 2)), np.ones((2, 2), np.int32), np.array(2.0), np.float64(2.0), 2.0]
    for c in consts:
        for r in (x + c, c + x, x - c, c - x, x * c, c * x, x / c, c / x, x**c, c**x):
            assert type(r) is Variable
            assert r.dtype == np.float32, (c, r)
    assert (x @ np.ones((2, 2))).dtype == np.float32
    np.testing.assert_allclose((x + np.full((2, 2), 0.1)).array, x.array + np.float32(0.1))
    loss = F.sum((x - np.ones((2, 2))) ** 2)
    loss.backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad, 2 * (x.array - 1))


def test_variables_of_different_dtypes_are_refused() -> None:
    x = _v([1.0, 2.0])
    d = Variable(np.ones(2))
    for op in (operator.add, operator.sub, operator.mul, operator.truediv, operator.pow):
        with pytest.raises(TypeError, match=r"chainer Variable\.__\w+__: .*float32 and float64"):
            op(x, d)
    with pytest.raises(TypeError, match=r"chainer F\.maximum: .*float32 and float64"):
        F.maximum(x, d)
    assert F.mean_squared_error(x, np.ones(2)).dtype == np.float32
    assert F.linear(Variable(np.ones((1, 2), np.float32)), np.ones((3, 2))).dtype == np.float32


def test_native_api_keeps_numpy_promotion() -> None:
    x = gh.Variable(np.ones(2, np.float32))
    assert (x + np.ones(2)).dtype == np.float64


# -- 11. chainer.config and using_config ---------------------------------------------------------


def test_config_train_switches_dropout_off() -> None:
    x = _v(np.ones(1000))
    assert chainer.config.train is True
    with chainer.using_config("train", False):
        assert chainer.config.train is False
        assert F.dropout(x) is x
    assert chainer.config.train is True
    assert (F.dropout(x).array == 0).any()
    chainer.config.train = False
    try:
        assert F.dropout(x) is x
        seen: list[object] = []
        t = threading.Thread(target=lambda: seen.append(chainer.config.train))
        t.start()
        t.join()
        assert seen == [True]  # thread-local, as chainer
    finally:
        chainer.config.train = True


def test_config_enable_backprop() -> None:
    x = _v([1.0, 2.0])
    assert chainer.config.enable_backprop is True
    with chainer.using_config("enable_backprop", False):
        assert chainer.config.enable_backprop is False
        y = x * 2
    assert y.creator is None and y.requires_grad  # as chainer's no_backprop_mode
    assert chainer.config.enable_backprop is True
    with chainer.no_backprop_mode():
        assert chainer.config.enable_backprop is False
    assert (x * 2).creator is not None


def test_config_other_names() -> None:
    with pytest.raises(AttributeError, match="foo"):
        _ = chainer.config.foo
    with chainer.using_config("foo", 3):
        assert chainer.config.foo == 3
    with pytest.raises(AttributeError, match="foo"):
        _ = chainer.config.foo
