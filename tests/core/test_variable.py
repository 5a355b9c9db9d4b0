"""``gh.Variable`` (CONTRACT section 1): construction, ``.d``/``.g``, attributes and the operators
that dispatch to the core functions. Only the core functions are loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plugins


@pytest.fixture(autouse=True)
def _core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    plugins.reset()
    yield
    plugins.reset()


# -- construction ----------------------------------------------------------------------------------


def test_python_floats_become_float32() -> None:
    x = gh.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], name="x")
    assert x.dtype == np.float32
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and len(x) == 2
    assert x.name == "x" and x.need_grad and x.is_leaf and x.creator is None
    s = gh.Variable(2.5)
    assert s.shape == () and s.dtype == np.float32 and s.item() == 2.5


def test_numpy_data_keeps_its_dtype_and_is_not_copied() -> None:
    a = np.arange(6.0).reshape(2, 3)
    x = gh.Variable(a)
    assert x.d is a and x.dtype == np.float64
    assert gh.Variable(np.float64(0.1)).d.item() == 0.1
    h = gh.Variable(np.ones(2, dtype=np.float16))
    assert h.dtype == np.float16
    y = gh.Variable(x)  # from a Variable: shares the data, a new leaf
    assert y.d is a and y is not x and y.is_leaf


def test_integer_data_without_gradient() -> None:
    labels = gh.Variable([1, 2, 3], need_grad=False)
    assert labels.dtype == np.int64 and not labels.need_grad
    assert "need_grad=False" in repr(labels)


def test_complex_data_is_refused() -> None:
    # gradhub computes with real data: complex data used to be accepted and its imaginary part
    # silently dropped by the kernels (see tests/core/test_complex_values.py)
    with pytest.raises(TypeError, match=r"Variable\(data\): complex data"):
        gh.Variable(np.array([1 + 2j]))


def test_as_variable() -> None:
    x = gh.Variable([1.0])
    assert gh.as_variable(x) is x
    c = gh.as_variable(np.array([1.0, 2.0]))
    assert isinstance(c, gh.Variable) and not c.need_grad and c.dtype == np.float64


# -- .d --------------------------------------------------------------------------------------------


def test_d_is_assignable_and_keeps_the_dtype() -> None:
    x = gh.Variable(np.zeros(3))
    new = np.array([1.0, 2.0, 3.0])
    x.d = new
    assert x.d is new  # an array of the right dtype is used as is
    x.d = np.array([1, 2, 3], dtype=np.int32)
    assert x.dtype == np.float64
    np.testing.assert_array_equal(x.d, [1.0, 2.0, 3.0])
    x.d = gh.Variable(np.array([4.0, 5.0, 6.0]))
    np.testing.assert_array_equal(x.d, [4.0, 5.0, 6.0])
    assert x.data is x.d


def test_d_from_python_numbers_keeps_full_precision() -> None:
    """Lists and Python floats assigned to a float64 Variable are not rounded through float32."""
    x = gh.Variable(np.zeros(2))
    x.d = [0.1, 0.2]
    assert x.dtype == np.float64
    assert x.d[0] == 0.1 and x.d[1] == 0.2
    x.d = 0.1  # a scalar fills (nnabla's x.d = 0), still at full precision
    assert x.shape == (2,) and (x.d == 0.1).all()


# -- .g --------------------------------------------------------------------------------------------


def test_g_is_none_until_accumulated_and_assignable() -> None:
    x = gh.Variable([1.0, 2.0])
    assert x.g is None and x.grad_var is None
    x.g = np.array([3.0, 4.0], dtype=np.float32)
    np.testing.assert_array_equal(x.g, [3.0, 4.0])
    assert isinstance(x.grad_var, gh.Variable)
    x.g = None
    assert x.g is None
    v = gh.Variable([5.0, 6.0], need_grad=False)
    x.grad_var = v
    assert x.grad_var is v and x.grad is x.g
    x.cleargrad()
    assert x.g is None


def test_g_assignment_keeps_dtype_and_shape_of_the_data() -> None:
    """``x.g = value`` gives a gradient of x's dtype and shape (scalars fill, as nnabla's
    ``x.g = 0``); accumulating onto it keeps that dtype."""
    x = gh.Variable([1.0, 2.0])  # float32
    x.g = 0
    assert x.g.dtype == np.float32 and x.g.shape == (2,)
    (x * 2.0).sum().backward()
    assert x.g.dtype == np.float32
    np.testing.assert_array_equal(x.g, [2.0, 2.0])
    x.g = np.array([1.0, 1.0])  # float64 array onto a float32 Variable
    assert x.g.dtype == np.float32
    d = gh.Variable(np.zeros(2))
    d.g = [0.1, 0.2]
    assert d.g.dtype == np.float64 and d.g[0] == 0.1
    with pytest.raises(ValueError, match=r"Variable.g: .*shape \(3,\).*shape \(2,\)"):
        x.g = np.ones(3)


# -- operators -------------------------------------------------------------------------------------

BINARY: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b),
]


@pytest.mark.parametrize(("name", "op"), BINARY)
def test_binary_operators(name: str, op: Callable[[Any, Any], Any]) -> None:
    a = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    b = np.array([2.0, 0.25, -3.0])
    x, y = gh.Variable(a), gh.Variable(b)
    for left, right, want in (
        (x, y, op(a, b)),  # Variable op Variable (broadcasting)
        (x, b, op(a, b)),  # Variable op array
        (a, y, op(a, b)),  # array op Variable (numpy defers to Variable)
        (x, 1.5, op(a, 1.5)),  # Variable op scalar
        (1.5, x, op(1.5, a)),  # scalar op Variable
        (x, np.float32(2.0), op(a, 2.0)),
    ):
        r = op(left, right)
        assert isinstance(r, gh.Variable)
        np.testing.assert_allclose(r.d, want, rtol=1e-15)
        assert r.dtype == np.float64


@pytest.mark.parametrize(("name", "op"), BINARY)
def test_scalar_operators_keep_float32(name: str, op: Callable[[Any, Any], Any]) -> None:
    x = gh.Variable([1.0, 2.0])
    assert op(x, 3.0).dtype == np.float32
    assert op(3.0, x).dtype == np.float32
    assert op(x, 3).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("val", [1.1, -3, 0.0, -0.0, float("inf"), float("nan"), 2**40 + 1])
def test_scalar_operators_give_numpys_result(dtype: Any, val: float) -> None:
    # regression for the cached 0-d operands of AddScalar/MulScalar: the same values, dtypes and
    # signed zeros as numpy with a Python scalar, also when the cache already holds a value
    # equal to this one (0.0 == -0.0, 1 == 1.0)
    a = np.array([1.0, -2.0, 0.0]).astype(dtype)
    for _ in range(2):
        for other in (val, -val, float(val) if val == val else val):
            with np.errstate(all="ignore"):
                want_mul, want_add = a * other, a + other
                v = gh.Variable(a, need_grad=a.dtype.kind == "f")
                got_mul, got_add = (v * other).d, (v + other).d
            for got, want in ((got_mul, want_mul), (got_add, want_add)):
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)
                np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_cached_scalar_operands_are_read_only_and_bounded() -> None:
    from gradhub import _builtin

    x = gh.Variable([1.0, 2.0])
    for k in range(1, 600):
        x * (k + 0.5)
    assert 0 < len(_builtin._OPERANDS) <= 256
    assert not any(a.flags.writeable for a in _builtin._OPERANDS.values())
    x * float("nan")
    assert all(k == k for k, _ in _builtin._OPERANDS)  # NaN keys would never be found again


def test_power_and_unary_operators() -> None:
    a = np.array([0.5, 2.0, 3.0])
    x = gh.Variable(a)
    np.testing.assert_allclose((x**3.0).d, a**3.0)
    np.testing.assert_allclose((x**2).d, a**2)
    np.testing.assert_allclose((x**-0.5).d, a**-0.5)
    np.testing.assert_allclose((2.0**x).d, 2.0**a)
    np.testing.assert_array_equal((-x).d, -a)
    assert +x is x


def test_operators_record_the_function_called() -> None:
    x = gh.Variable([1.0, 2.0])
    y = gh.Variable([3.0, 4.0])
    cases = {
        "Add2": x + y,
        "Sub2": x - y,
        "Mul2": x * y,
        "Div2": x / y,
        "Neg": -x,
        "AddScalar": x + 1.0,
        "MulScalar": x * 2.0,
        "PowScalar": x**3.0,
        "RDivScalar": 1.0 / x,
        "RPowScalar": 2.0**x,
    }
    for name, v in cases.items():
        assert v.creator is not None and v.creator.fdef.name == name
    assert (1.0 - x).creator.fdef.name == "AddScalar"  # 1 - x = (-x) + 1
    assert (x - 1.0).creator.attrs["val"] == -1.0


def test_reshape_and_sum() -> None:
    a = np.arange(12.0).reshape(3, 4)
    x = gh.Variable(a)
    assert x.reshape(4, 3).shape == (4, 3)
    assert x.reshape((2, 6)).shape == (2, 6)
    assert x.reshape([12]).shape == (12,)
    np.testing.assert_array_equal(x.sum().d, a.sum())
    np.testing.assert_array_equal(x.sum(axis=1).d, a.sum(axis=1))
    np.testing.assert_array_equal(x.sum(axis=(0, 1), keepdims=True).d, a.sum(keepdims=True))
    np.testing.assert_array_equal(x.sum(axis=-1, keepdims=True).d, a.sum(-1, keepdims=True))


# -- other attributes ------------------------------------------------------------------------------


def test_detach_shares_data_and_cuts_the_graph() -> None:
    x = gh.Variable([1.0, 2.0])
    y = x * 2.0
    d = y.detach()
    assert d.d is y.d and d.is_leaf and not d.need_grad
    (d * x).sum().backward()
    np.testing.assert_array_equal(x.g, y.d)  # no gradient through the detached factor
    assert y.get_unlinked_variable().is_leaf


def test_numpy_item_repr_device() -> None:
    x = gh.Variable([1.5, -2.0])
    assert isinstance(x.numpy(), np.ndarray)
    np.testing.assert_array_equal(x.numpy(), [1.5, -2.0])
    assert repr(x) == "Variable([ 1.5, -2. ], dtype=float32)"
    assert x.device.name == "cpu"
    with pytest.raises(ValueError):
        x.item()


def test_variables_hash_by_identity() -> None:
    a = gh.Variable([1.0])
    b = gh.Variable([1.0])
    table = {a: "a", b: "b"}
    assert table[a] == "a" and table[b] == "b"
    assert len({a, b, a}) == 2


def test_to_cpu_is_differentiable() -> None:
    x = gh.Variable([1.0, 2.0])
    y = x.to("cpu")
    assert y.device.name == "cpu" and y.creator.fdef.name == "ToDevice"
    (y * y).sum().backward()
    np.testing.assert_array_equal(x.g, [2.0, 4.0])


def test_creator_links_inputs() -> None:
    x = gh.Variable([1.0])
    h = x * 2.0
    y = h + x
    node = y.creator
    assert node.fdef.name == "Add2"
    assert node.srcs[0] is h.creator and node.idxs[0] == 0
    assert node.srcs[1] is x and node.idxs[1] == -1
