"""The chainer layer's ``Variable``: the array used as it is, refused data, name, ``.grad``,
``.grad_var`` (and setting them with another dtype or shape), repr, operators and methods
returning chainer Variables, comparisons, ``bool`` and ``hash`` raising, and the module helpers
(``as_variable``, ``as_array``). Expected behaviour was checked against chainer 7.8.1.
"""

from __future__ import annotations

import copy
import operator
import pickle

import gradhub as gh
import gradhub.optim
import gradhub_compat.chainer.functions as F
import numpy as np
import pytest
from compat.chainer.helpers import _v
from gradhub_compat import chainer
from gradhub_compat.chainer import Variable


def test_variable_uses_the_array_as_is() -> None:
    arr = np.array([1.0, 2.0])  # float64 stays float64
    x = Variable(arr)
    assert x.array is arr and x.data is arr and x.dtype == np.float64
    assert x.requires_grad is True and x.grad is None and x.grad_var is None
    assert Variable(arr, requires_grad=False).requires_grad is False
    assert Variable(np.array([1, 2])).requires_grad is False  # integers take no gradient
    assert Variable(np.float32(2.0)).shape == ()
    x.array = np.array([3.0, 4.0])
    np.testing.assert_array_equal(x.data, [3.0, 4.0])
    assert x.xp is np


def test_variable_rejects_lists_and_none() -> None:
    with pytest.raises(TypeError, match="chainer Variable: the data must be a numpy or cupy"):
        Variable([1.0, 2.0])
    assert Variable().array is None  # chainer's uninitialized Variable (test_link.py)


def test_variable_name_grad_and_repr() -> None:
    x = _v([4.0, 4.0], name="x", grad=np.array([1.0, 2.0], dtype=np.float32))
    np.testing.assert_array_equal(x.grad, [1.0, 2.0])
    assert repr(x) == "variable x([4., 4.])"
    assert str(_v([4.0, 4.0])) == "variable([4. 4.])"
    assert repr(_v(np.zeros((0, 2)))) == "variable([], shape=(0, 2))"
    with pytest.raises(ValueError, match=r"chainer Variable.grad: the gradient has shape \(3,\)"):
        x.grad = np.zeros(3, dtype=np.float32)
    x.grad = None
    assert x.grad is None


def test_operators_and_methods_return_chainer_variables() -> None:
    x = _v([[1.0, 2.0], [3.0, 4.0]])
    results = [
        x + 1,
        1 + x,
        x - x,
        1 - x,
        x * x,
        2 * x,
        x / 2,
        2 / x,
        x**2,
        -x,
        x[0],
        x.sum(),
        x.reshape(4),
        x.reshape((1, 4)),
        x.T,
        x.transpose(1, 0),
        x.transpose((1, 0)),
        x.transpose(None),
        x @ x,
    ]
    assert all(type(r) is Variable for r in results)
    np.testing.assert_array_equal(x.T.array, [[1.0, 3.0], [2.0, 4.0]])


def test_helpers() -> None:
    arr = np.ones(2, dtype=np.float32)
    v = chainer.as_variable(arr)
    assert isinstance(v, Variable) and v.requires_grad is False
    assert chainer.as_variable(v) is v
    native = gh.Variable(arr)
    assert isinstance(chainer.as_variable(native), Variable)
    assert chainer.as_array(v) is arr and chainer.as_array(arr) is arr
    x = _v([1.0])
    with chainer.no_backprop_mode():
        y = x * 2
        with chainer.force_backprop_mode():
            z = x * 2
    assert y.creator is None and z.creator is not None
    assert chainer.functions is F
    with pytest.raises(AttributeError):
        _ = chainer.no_such_name


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


def test_grad_var_of_an_assigned_grad_requires_grad() -> None:
    """Regression: after ``v.grad = a``, ``v.grad_var.requires_grad`` was False; chainer 7.8.1
    gives True."""
    v = _v([1.0, 2.0])
    v.grad = np.ones(2, np.float32)
    assert v.grad_var.requires_grad is True
    np.testing.assert_array_equal(v.grad, [1.0, 1.0])


def test_grad_refuses_a_numpy_scalar() -> None:
    """Regression: ``v.grad = np.float32()`` was accepted; chainer 7.8.1 raises TypeError
    "Type of grad is invalid"."""
    v = _v(1.0)
    with pytest.raises(TypeError, match=r"chainer Variable\.grad: .*Type of grad is invalid"):
        v.grad = np.float32(1)
    assert v.grad is None


def test_str_and_repr_of_empty_variables() -> None:
    """Regression: ``str()`` of a (0, 0) Variable showed the shape; chainer 7.8.1 prints
    'variable([])' for str and 'variable([], shape=(0, 0))' for repr."""
    for shape in [(0, 0), (0, 3), (0,)]:
        assert str(Variable(np.zeros(shape, np.float32))) == "variable([])"
    assert repr(Variable(np.zeros((0, 0), np.float32))) == "variable([], shape=(0, 0))"
    assert repr(Variable(np.zeros((2, 0), np.float32))) == "variable([], shape=(2, 0))"
    assert repr(Variable(np.zeros((0,), np.float32))) == "variable([])"


def test_variable_mean_is_f_average_as_chainer() -> None:
    x = _v(np.arange(6.0).reshape(2, 3))
    # chainer 7.8.1: 2.5, [1, 4], weights [1, 3] on axis 0 -> [2.25, 3.25, 4.25], keepdims (2, 1)
    np.testing.assert_allclose(x.mean().array, 2.5)
    np.testing.assert_allclose(x.mean(axis=1).array, [1.0, 4.0])
    w0 = np.array([1.0, 3.0], dtype=np.float32)
    np.testing.assert_allclose(x.mean(axis=0, weights=w0).array, [2.25, 3.25, 4.25])
    assert x.mean(1, keepdims=True).shape == (2, 1)
    m = x.mean(axis=1, weights=np.array([1.0, 2.0, 3.0], dtype=np.float32))
    m.grad = np.ones(2, dtype=np.float32)
    m.backward()
    # chainer: m = [1.3333334, 4.3333335], x.grad rows [1/6, 1/3, 1/2]
    np.testing.assert_allclose(m.array, [1.3333334, 4.3333335], rtol=1e-6)
    np.testing.assert_allclose(x.grad, [[1 / 6, 1 / 3, 1 / 2]] * 2, rtol=1e-6)


def test_addgrad_as_chainer() -> None:
    a, b = _v([1.0, 2.0]), _v([3.0, 4.0])
    a.addgrad(b)  # b has no gradient: nothing
    assert a.grad is None
    b.grad = np.array([1.0, 2.0], dtype=np.float32)
    a.addgrad(b)  # chainer: a.grad_var is b.grad_var itself
    assert a.grad_var is b.grad_var
    np.testing.assert_array_equal(a.grad, [1.0, 2.0])
    a.addgrad(b)  # chainer: a new sum, b's gradient unchanged
    assert a.grad_var is not b.grad_var
    np.testing.assert_array_equal(a.grad, [2.0, 4.0])
    np.testing.assert_array_equal(b.grad, [1.0, 2.0])
    c = _v([1.0, 2.0], np.float64)
    c.grad = np.ones(2)
    # chainer: InvalidType "Expect: lhs.dtype == rhs.dtype / Actual: float64 != float32"
    with pytest.raises(TypeError, match="different dtypes float64 and float32"):
        a.addgrad(c)
    with pytest.raises(TypeError, match=r"chainer Variable\.addgrad: var must be a Variable"):
        a.addgrad(np.ones(2, dtype=np.float32))  # type: ignore[arg-type]


def test_creator_node() -> None:
    x = _v([1.0, 2.0])
    y = x * 2
    assert x.creator_node is None
    assert y.creator_node is y.creator and y.creator_node is not None
    with pytest.raises(NotImplementedError, match=r"creator_node: setting a creator other.*migr"):
        y.creator_node = x.creator_node or object()
    y.creator_node = None  # chainer: the same as y.unchain() (tests/compat/chainer/test_unchain.py)
    assert y.creator is None and y.requires_grad


def test_copies_of_a_variable_are_roots_as_chainer() -> None:
    x = _v([1.0, 2.0])
    y = x * 3
    y.grad = np.array([5.0, 6.0], np.float32)
    d = copy.deepcopy(y)  # chainer 7.8.1: data and grad copied, no creator
    np.testing.assert_array_equal(d.array, [3.0, 6.0])
    np.testing.assert_array_equal(d.grad, [5.0, 6.0])
    assert d.creator is None and d.requires_grad and d.array is not y.array
    s = copy.copy(y)  # chainer 7.8.1: the arrays shared, no creator
    assert s.array is y.array and s.grad is y.grad and s.creator is None and s.requires_grad
    s.backward()  # a root: nothing reaches x
    assert x.grad is None
    assert copy.deepcopy(_v([1.0], requires_grad=False)).requires_grad is False
    z = x * x
    z.grad = np.ones(2, np.float32)
    z.backward(enable_double_backprop=True)
    p = pickle.loads(pickle.dumps(x))  # x.grad = 2x, with a creator
    np.testing.assert_array_equal(p.grad, [2.0, 4.0])
    assert p.grad_var.creator is None


def test_copydata_as_chainer() -> None:
    # chainer 7.8.1 (numpy.copyto): in place, broadcast, 'same_kind' casting
    x = _v([0.0, 0.0])
    a = x.array
    x.copydata(Variable(np.array([1.5, 2.0])))  # float64 into float32
    assert x.array is a and x.dtype == np.float32
    np.testing.assert_array_equal(a, [1.5, 2.0])
    x.copydata(Variable(np.array([3, 4], np.int32)))
    np.testing.assert_array_equal(a, [3.0, 4.0])
    w = _v(np.zeros((2, 3)))
    w.copydata(_v([0.0, 1.0, 2.0]))
    np.testing.assert_array_equal(w.array, [[0.0, 1.0, 2.0]] * 2)
    with pytest.raises(TypeError, match="from dtype\\('float32'\\) to dtype\\('int32'\\)"):
        Variable(np.zeros(2, np.int32)).copydata(_v([1.5, 2.0]))
    with pytest.raises(ValueError, match="could not broadcast"):
        x.copydata(_v([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="copydata: var must be a Variable"):
        x.copydata(np.ones(2, np.float32))  # type: ignore[arg-type]
    with pytest.raises(AttributeError, match="copydata: this Variable is an uninitialized"):
        Variable().copydata(x)
    with pytest.raises(AttributeError, match="copydata: var is an uninitialized"):
        x.copydata(Variable())
    Variable().copydata(Variable())  # both uninitialized: nothing
    # the gradient is kept; a graph recorded before sees the new values (x.grad = 2 * x)
    v = _v([1.0, 2.0])
    y = v * v
    v.copydata(_v([3.0, 4.0]))
    y.grad = np.ones(2, np.float32)
    y.backward()
    np.testing.assert_array_equal(v.grad, [6.0, 8.0])
    np.testing.assert_array_equal(y.array, [1.0, 4.0])
    # an uninitialized Parameter is initialized from the other's shape, either side
    p = chainer.Parameter()
    p.copydata(_v([1.0, 1.0]))
    np.testing.assert_array_equal(p.array, [1.0, 1.0])
    q = chainer.Parameter(7.0)
    d = _v([0.0, 0.0])
    d.copydata(q)
    np.testing.assert_array_equal(d.array, [7.0, 7.0])
    np.testing.assert_array_equal(q.array, [7.0, 7.0])


def test_label_summary_debug_print_raw_array_as_chainer() -> None:
    x = Variable(np.array([[1.0, 2.0], [3.0, 5.0]], np.float32), name="x")
    assert x.label == "(2, 2), float32"
    assert Variable(np.arange(3, dtype=np.int64)).label == "(3), int64"
    assert Variable(np.array(1.0)).label == "float64"
    assert x.summary() == "<variable x>"
    y = x * 2
    assert y.summary() == f"<variable at 0x{id(y):x}>"
    assert x.raw_array is x.array and Variable().raw_array is None
    assert y.retain_data() is None
    head = "<variable x>\n- device: CPU\n- backend: <class 'numpy.ndarray'>\n- shape: (2, 2)\n"
    stats = "- dtype: float32\n- statistics: mean=2.75000000, std=1.47902000\n"
    assert x.debug_print() == head + stats + "- grad: None"  # chainer 7.8.1
    x.grad = np.zeros((2, 2), np.float32)
    assert x.debug_print() == head + stats + "- grad: 0"
    x.grad = x.array.copy()
    assert x.debug_print() == head + stats + "- grad: mean=2.75000000, std=1.47902000"
    u = Variable()
    assert u.debug_print().split("\n", 1)[1] == (
        "- device: None\n- backend: None\n- shape: None\n- dtype: None\n- statistics: None\n"
        "- grad: None"
    )
    for member in ("rank", "node"):
        with pytest.raises(NotImplementedError, match=rf"chainer Variable\.{member} is not"):
            getattr(x, member)
    with pytest.raises(NotImplementedError, match=r"chainer Variable\.set_creator is not"):
        x.set_creator(None)


def test_zerograd_zeroes_the_gradient_array_in_place() -> None:
    x = _v([1.0, 2.0])
    F.sum(x * x).backward()
    g = x.grad
    with pytest.warns(DeprecationWarning, match="Variable.zerograd is deprecated"):
        x.zerograd()
    # chainer 7.8.1: fill(0) on the array, which stays x's gradient
    assert x.grad is g
    np.testing.assert_array_equal(g, [0.0, 0.0])
    F.sum(x * x).backward()  # accumulating makes a new array, as chainer: g stays zero
    np.testing.assert_array_equal(x.grad, [2.0, 4.0])
    np.testing.assert_array_equal(g, [0.0, 0.0])
    s = np.array([3.0, 4.0], np.float32)
    x.grad = s
    with pytest.warns(DeprecationWarning):
        x.zerograd()
    np.testing.assert_array_equal(s, [0.0, 0.0])
    # a gradient recorded by double backprop: zeroed and cut from its creator, as chainer
    z = _v([1.0, 2.0])
    F.sum(z * z).backward(enable_double_backprop=True)
    gv, ga = z.grad_var, z.grad
    assert gv.creator is not None
    with pytest.warns(DeprecationWarning):
        z.zerograd()
    assert z.grad is ga and z.grad_var.creator is None
    np.testing.assert_array_equal(ga, [0.0, 0.0])
    u = Variable()  # uninitialized: nothing, as chainer
    with pytest.warns(DeprecationWarning):
        u.zerograd()
    assert u.grad is None


def test_integer_variable_with_scalars_as_chainer() -> None:
    """chainer 7.8.1 casts a scalar operand to the Variable's dtype (``_preprocess_const``),
    computes ``v / s`` as ``v * dtype(1. / s)`` and ``v - s`` as ``v + dtype(-s)``; its
    ``*``, ``/``, ``**`` and ``abs`` of non-floating data raise InvalidType."""
    from gradhub_compat.chainer.utils.type_check import InvalidType

    v = Variable(np.array([1, 2, 3], np.int32))
    cases = [
        (lambda: v * 0.5, [0, 0, 0]),  # v * int32(0.5)
        (lambda: v + 1.7, [2, 3, 4]),
        (lambda: v / 2, [0, 0, 0]),  # v * int32(0.5)
        (lambda: v / 0.5, [2, 4, 6]),  # v * int32(2.0)
        (lambda: 2.5 * v, [2, 4, 6]),
        (lambda: v - 0.5, [1, 2, 3]),  # v + int32(-0.5)
        (lambda: v - 1.7, [0, 1, 2]),
        (lambda: 0.5 - v, [-1, -2, -3]),
        (lambda: v * np.float64(0.5), [0, 0, 0]),
        (lambda: v + np.array([1.5, 2.5, 3.5]), [2, 4, 6]),  # the array cast to int32
        (lambda: v + v, [2, 4, 6]),
        (lambda: -v, [-1, -2, -3]),
    ]
    for fn, expected in cases:
        y = fn()
        assert isinstance(y, Variable) and y.dtype == np.int32
        np.testing.assert_array_equal(y.array, expected)
    refused = [
        (lambda: v * np.array([0.5, 0.5, 0.5]), "_ \\* _", "lhs"),
        (lambda: np.array([0.5, 0.5, 0.5]) * v, "_ \\* _", "lhs"),
        (lambda: v * v, "_ \\* _", "lhs"),
        (lambda: v / v, "_ / _", "lhs"),
        (lambda: 2 / v, "2 / _", "x"),
        (lambda: v**2, "_ \\*\\* 2", "x"),
        (lambda: (-1.5) ** v, "\\(-1.5\\) \\*\\* _", "x"),
        (lambda: abs(v), "\\|_\\|", "x"),
    ]
    for fn, label, arg in refused:
        with pytest.raises(
            InvalidType, match=f"performed in: {label} \\(Forward\\)\n\nExpect: {arg}"
        ):
            fn()
    with pytest.raises(InvalidType, match="Actual: u != f"):
        Variable(np.array([1, 2], np.uint8)) * 0.5 * Variable(np.array([1, 2], np.uint8))
    with pytest.raises(ZeroDivisionError, match="float division by zero"):
        v / 0
    with pytest.raises(ZeroDivisionError, match="float division by zero"):
        _v([1.0]) / 0  # chainer: MulConstant(1. / 0), any dtype
    x = _v([1.0, 2.0])  # floating data keeps its operators
    np.testing.assert_array_equal((x * 0.5).array, [0.5, 1.0])
    np.testing.assert_array_equal(abs(-x).array, [1.0, 2.0])
