"""``Variable.backward`` of the chainer layer (``gradhub_compat.chainer``): the initial error (1
for one element, ``y.grad`` otherwise), accumulation into the leaves, ``loss_scale``,
``retain_grad`` (and the intermediate and output ``.grad`` left as they were without it),
``enable_double_backprop``, a leaf as the output, and the deprecated ``zerograd``. Expected
behaviour was checked against chainer 7.8.1.
"""

from __future__ import annotations

import warnings

import gradhub_compat.chainer.functions as CF
import gradhub_compat.chainer.functions as F
import numpy as np
import pytest
from compat.chainer.helpers import _c, _v
from gradhub_compat import chainer
from gradhub_compat.chainer import Variable


def test_backward_of_a_scalar_starts_from_one_and_accumulates() -> None:
    x = _v(3.0)
    y = x * x
    y.backward()
    np.testing.assert_allclose(x.grad, 6.0)
    assert y.grad is None  # chainer 7: the initial error is not kept without retain_grad
    y.backward()
    np.testing.assert_allclose(x.grad, 12.0)
    x.cleargrad()
    assert x.grad is None
    y.backward()
    np.testing.assert_allclose(x.grad, 6.0)


def test_backward_of_a_one_element_array_warns_as_chainer() -> None:
    x = _v([1.0])
    y = 2 * x
    with pytest.warns(DeprecationWarning, match="Treating a scalar as a variable"):
        y.backward()
    np.testing.assert_array_equal(x.grad, [2.0])


def test_backward_of_a_vector_needs_its_grad() -> None:
    x = _v([1.0, 2.0])
    y = x * x
    with pytest.raises(ValueError, match=r"has 2 elements; set its \.grad"):
        y.backward()
    y.grad = np.array([1.0, 10.0], dtype=np.float32)
    y.backward()
    np.testing.assert_allclose(x.grad, [2.0, 40.0])


def test_backward_loss_scale_scales_the_default_seed_and_the_gradients() -> None:
    x = _v(3.0)
    y = x * x
    y.backward(loss_scale=8.0, retain_grad=True)  # chainer keeps y.grad only with retain_grad
    np.testing.assert_allclose(y.grad, 8.0)
    np.testing.assert_allclose(x.grad, 48.0)  # stays scaled, as in chainer


def test_backward_retain_grad_keeps_intermediate_gradients() -> None:
    x = _v([1.0, 2.0])
    h = x * x
    y = (h * 3).sum()
    y.backward()
    assert h.grad is None
    y.backward(retain_grad=True)
    np.testing.assert_allclose(h.grad, [3.0, 3.0])
    np.testing.assert_allclose(x.grad, [12.0, 24.0])


def test_backward_enable_double_backprop() -> None:
    x = _v([1.0, 2.0])
    y = (x * x * x).sum()
    y.backward()
    assert x.grad_var.creator is None  # not differentiable
    x.cleargrad()
    y.backward(enable_double_backprop=True)
    gx = x.grad_var
    assert isinstance(gx, Variable) and gx.creator is not None
    (ggx,) = chainer.grad([gx], [x], grad_outputs=[_v([1.0, 1.0])])
    np.testing.assert_allclose(ggx.array, [6.0, 12.0])


def test_backward_on_a_leaf_only_seeds_a_one_element_grad() -> None:
    """chainer 7.8.1 fills the initial error of a one-element leaf (was: "does nothing")."""
    x = _v(2.0)
    x.backward()
    np.testing.assert_array_equal(x.grad, 1.0)
    big = _v([1.0, 2.0])
    big.backward()
    assert big.grad is None


def test_zerograd_is_deprecated_but_works() -> None:
    x = _v([1.0, 2.0])
    with pytest.warns(DeprecationWarning, match="zerograd is deprecated"):
        x.zerograd()
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])


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


def test_chainer_backward_without_retain_grad_keeps_intermediate_grads() -> None:
    """chainer 7.8.1: with retain_grad=False the intermediate Variables' grads are left as they
    were (neither set nor cleared; this test used to expect None, which chainer contradicts)."""
    x = chainer.Variable(np.array([1.0, 2.0], dtype=np.float32))
    h = x * 3
    y = CF.sum(h * h)
    y.backward(retain_grad=True)
    np.testing.assert_array_equal(h.grad, [6.0, 12.0])
    h.grad = np.array([100.0, 100.0], dtype=np.float32)
    y.backward()
    np.testing.assert_array_equal(h.grad, [100.0, 100.0])
    np.testing.assert_array_equal(x.grad, [36.0, 72.0])  # 18 x, accumulated twice


def test_backward_from_constants_does_nothing_as_chainer() -> None:
    """The native ``backward()`` refuses a Variable that needs no gradient; chainer's runs and
    accumulates nothing (chainer 7.8.1: no error, the leaves' ``.grad`` stay None)."""
    x = Variable(np.array([1.0, 2.0]), requires_grad=False)
    y = F.sum(x * x)
    y.backward()
    assert x.grad is None
    with chainer.no_backprop_mode():
        z = F.sum(_v([1.0, 2.0]) * 2.0)
    z.backward()  # no creator: nothing to do


# -- chainer.backward(outputs, grad_outputs) (values of chainer 7.8.1) -----------------------


def test_chainer_backward_of_several_outputs_as_chainer() -> None:
    ones = np.ones(2, dtype=np.float32)
    x = _v([1.0, 2.0])
    y1, y2 = x * x, 3 * x
    chainer.backward([y1, y2], [Variable(ones), _v([1.0, 10.0])])
    np.testing.assert_array_equal(x.grad, [5.0, 34.0])
    assert y1.grad is None and y2.grad is None
    # grad_outputs None: the outputs' .grad, cleared afterwards; the leaves accumulate
    y1.grad, y2.grad = ones, ones.copy()
    chainer.backward([y1, y2])
    np.testing.assert_array_equal(x.grad, [10.0, 41.0])
    assert y1.grad_var is None and y2.grad_var is None
    # an output without .grad: skipped with chainer's RuntimeWarning (no default 1)
    x.cleargrad()
    y1.grad = ones
    with pytest.warns(RuntimeWarning, match="chainer.backward does not set default grad"):
        chainer.backward([y1, y2])
    np.testing.assert_array_equal(x.grad, [2.0, 4.0])
    # an output upstream of another
    x.cleargrad()
    z = x * 2
    chainer.backward([z * z, z], [Variable(ones), Variable(ones)])
    np.testing.assert_array_equal(x.grad, [10.0, 18.0])
    assert z.grad is None
    # a leaf output accumulates its seed
    x.cleargrad()
    x.grad = ones
    chainer.backward([x], [_v([5.0, 5.0])])
    np.testing.assert_array_equal(x.grad, [6.0, 6.0])
    # an output that needs no gradient is skipped
    c = _v([1.0, 1.0], requires_grad=False)
    chainer.backward([c * 2], [Variable(ones)])
    assert c.grad is None


def test_chainer_backward_double_backprop() -> None:
    x = _v([1.0, 2.0])
    chainer.backward(
        [x * x * x], [Variable(np.ones(2, dtype=np.float32))], enable_double_backprop=True
    )
    g = x.grad_var
    np.testing.assert_array_equal(g.array, [3.0, 12.0])  # chainer: 3 x^2
    x.cleargrad()
    g.grad = np.ones(2, dtype=np.float32)
    g.backward()
    np.testing.assert_array_equal(x.grad, [6.0, 12.0])  # chainer: 6 x


def test_chainer_backward_refusals_as_chainer() -> None:
    x = _v([1.0, 2.0])
    with pytest.raises(ValueError, match="semantics for retain_grad=True is under discussion"):
        chainer.backward([x * x], retain_grad=True)
    with pytest.raises(ValueError, match=r"chainer\.backward does not support loss_scale option"):
        chainer.backward([x * x], loss_scale=2.0)
    with pytest.raises(TypeError, match=r"got unexpected keyword argument.*'foo'"):
        chainer.backward([x * x], foo=1)
    with pytest.raises(TypeError, match="outputs must be a tuple or a list, not"):
        chainer.backward(x)
    with pytest.raises(TypeError, match="each output must be a Variable, not <class 'int'>"):
        chainer.backward([1])
    with pytest.raises(ValueError, match=r"len\(outputs\) = 1, len\(grad_outputs\) = 2"):
        chainer.backward([x], (x, x))
    with pytest.raises(TypeError, match="grad_outputs must be None, a tuple, or a list, not"):
        chainer.backward([x], {})
    # chainer fails on an array there (AttributeError); here a TypeError naming the entry
    with pytest.raises(TypeError, match=r"grad_outputs\[0\] must be a Variable or None"):
        chainer.backward([x * x], [np.ones(2, dtype=np.float32)])
