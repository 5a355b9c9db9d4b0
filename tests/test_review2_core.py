"""Regression tests for the second review of the core (Variable, engine, built-in functions and
the array-reuse pool)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub import memory

V = gh.Variable

# -- the array-reuse pool: arrays changed in place by their last user ------------------------------

_BIG = (128, 256)  # 128 KiB of float32: above memory.MIN_BYTES


def _big_input() -> gh.Variable:
    return V(np.random.default_rng(0).standard_normal(_BIG).astype(np.float32))


def _set_in_place(a: np.ndarray, attr: str, value: Any) -> None:
    """``a.shape = value`` or ``a.dtype = value``: still possible, but deprecated since NumPy 2.5
    (a DeprecationWarning, an error under this suite's warning filter)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        setattr(a, attr, value)


@pytest.mark.usefixtures("pool")
def test_pool_skips_an_output_reshaped_in_place() -> None:
    x = _big_input()
    a = F.relu(x).d
    _set_in_place(a, "shape", (1, *_BIG))  # a batch axis added in place, then dropped
    del a
    y = F.relu(x)
    assert y.shape == _BIG
    np.testing.assert_array_equal(F.sum(y, axis=0).d, np.maximum(x.d, 0).sum(axis=0))


@pytest.mark.usefixtures("pool")
def test_pool_skips_a_product_reshaped_in_place() -> None:
    x = _big_input()
    p = (x * x).d
    _set_in_place(p, "shape", (1, *_BIG))
    del p
    y = x * x
    assert y.shape == _BIG
    np.testing.assert_array_equal(y.d, x.d * x.d)


@pytest.mark.usefixtures("pool")
def test_pool_skips_an_output_whose_dtype_was_changed_in_place() -> None:
    x = V(np.random.default_rng(1).standard_normal(_BIG))  # float64
    a = F.relu(x).d
    _set_in_place(a, "dtype", np.complex64)  # the same bytes reinterpreted
    del a
    y = F.relu(x)
    assert y.dtype == np.float64 and y.shape == _BIG
    np.testing.assert_array_equal(y.d, np.maximum(x.d, 0))


@pytest.mark.usefixtures("pool")
def test_pool_skips_an_output_made_read_only() -> None:
    x = _big_input()
    a = F.relu(x).d
    a.flags.writeable = False
    del a
    y = F.relu(x)
    assert y.d.flags.writeable
    np.testing.assert_array_equal(y.d, np.maximum(x.d, 0))


@pytest.mark.usefixtures("pool")
def test_pool_drops_the_changed_array_from_its_list() -> None:
    a = memory.output_array(np, _BIG, np.float32)
    kept = memory.kept_bytes()
    _set_in_place(a, "shape", (-1,))
    del a
    b = memory.output_array(np, _BIG, np.float32)
    assert b.shape == _BIG
    assert memory.kept_bytes() == kept  # the changed one went, the new one came


# -- grad(set_grad=True) never stores the caller's arrays as .g ------------------------------------


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_set_grad_copies_the_callers_grad_outputs(create_graph: bool) -> None:
    x = V(np.zeros(4, np.float32))
    y = x + 1.0
    go = np.full(4, 3.0, np.float32)
    gh.grad([y], [x], grad_outputs=[go], set_grad=True, create_graph=create_graph)
    assert x.g is not go
    x.g *= 0.5
    np.testing.assert_array_equal(go, np.full(4, 3.0, np.float32))
    np.testing.assert_array_equal(x.g, np.full(4, 1.5, np.float32))


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_set_grad_copies_a_grad_outputs_variable(create_graph: bool) -> None:
    x = V(np.zeros(3))
    gov = V(np.arange(3.0), need_grad=False)
    gh.grad([x + 1.0], [x], grad_outputs=[gov], set_grad=True, create_graph=create_graph)
    assert x.g is not gov.d
    x.g[:] = 7.0
    np.testing.assert_array_equal(gov.d, np.arange(3.0))


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_set_grad_copies_the_callers_grad_inputs(create_graph: bool) -> None:
    x = V(np.ones(3))
    unreached = V(np.ones(3))
    gi = np.full(3, 2.0)
    gh.grad(
        [x * x], [x, unreached], grad_inputs=[None, gi], set_grad=True, create_graph=create_graph
    )
    assert unreached.g is not gi
    unreached.g[:] = 0.0
    np.testing.assert_array_equal(gi, np.full(3, 2.0))
    np.testing.assert_array_equal(x.g, np.full(3, 2.0))


def test_grad_set_grad_of_an_output_that_is_an_input() -> None:
    x = V(np.zeros(3))
    go = np.ones(3)
    gh.grad([x], [x], grad_outputs=[go], set_grad=True, create_graph=False)
    assert x.g is not go
    np.testing.assert_array_equal(x.g, go)


# -- complex data is refused, naming the place -----------------------------------------------------

_COMPLEX = "complex data"


@pytest.mark.parametrize("need_grad", [True, False])
def test_variable_refuses_complex_data(need_grad: bool) -> None:
    with pytest.raises(TypeError, match=r"Variable\(data\): complex data \(dtype complex128\)"):
        V(np.array([1 + 2j]), need_grad=need_grad)
    with pytest.raises(TypeError, match=r"Variable\(data\): complex"):
        V(1j, need_grad=need_grad)


@pytest.mark.parametrize(
    "value", [np.array([1 + 5j, 2]), 1j, np.complex64(1j), [1j, 2.0]], ids=repr
)
@pytest.mark.parametrize("attr", ["d", "g"])
def test_data_and_grad_setters_refuse_complex_values(attr: str, value: object) -> None:
    x = V(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match=rf"Variable\.{attr}: {_COMPLEX}"):
        setattr(x, attr, value)
    np.testing.assert_array_equal(x.d, [1.0, 2.0])
    assert x.g is None


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x * np.complex128(2j),
        lambda x: x + np.complex64(1j),
        lambda x: x + 1j,
        lambda x: 1j * x,
        lambda x: x / np.complex64(1j),
        lambda x: x - np.complex128(1j),
        lambda x: x**1j,
        lambda x: x * np.array([1j, 1j]),
    ],
)
def test_operators_refuse_complex_operands(fn: object) -> None:
    x = V(np.array([1.0, 2.0], np.float32))
    with pytest.raises(TypeError, match=rf"\w+2\(\): input 'x[01]': {_COMPLEX}"):
        fn(x)  # type: ignore[operator]


def test_functions_refuse_complex_arrays() -> None:
    with pytest.raises(TypeError, match=rf"sigmoid\(\): input 'x': {_COMPLEX}"):
        F.sigmoid(np.array([1 + 2j]))
    with pytest.raises(TypeError, match=rf"add2\(\): input 'x1': {_COMPLEX}"):
        F.add2(V(np.ones(2)), np.array([1j, 0]))
    with pytest.raises(TypeError, match=f"as_variable: {_COMPLEX}"):
        gh.as_variable(np.array([1j]))


@pytest.mark.parametrize("seed", [np.array([1j, 1j]), 1j, np.complex128(1j)], ids=repr)
def test_backward_and_grad_refuse_complex_seeds(seed: object) -> None:
    x = V(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match=f"backward: grad: {_COMPLEX}"):
        (x * x).backward(seed)
    assert x.g is None
    with pytest.raises(TypeError, match=rf"grad: grad_outputs\[0\]: {_COMPLEX}"):
        gh.grad([x * x], [x], grad_outputs=[seed])
    with pytest.raises(TypeError, match=rf"grad: grad_inputs\[0\]: {_COMPLEX}"):
        gh.grad([x * x], [x], grad_inputs=[seed])


# -- the public *_scalar functions check their val ---------------------------------------------

_SCALAR_FNS = [
    "add_scalar",
    "mul_scalar",
    "pow_scalar",
    "r_div_scalar",
    "r_pow_scalar",
    # gradhub-nn-ops' scalar functions
    "r_sub_scalar",
    "maximum_scalar",
    "minimum_scalar",
    "greater_scalar",
    "equal_scalar",
]


@pytest.mark.parametrize(
    "val",
    [None, 1j, np.complex64(1j), np.ones((3, 2)), np.array([1.0, 2.0]), "2", V(np.array(2.0))],
    ids=lambda v: type(v).__name__,
)
@pytest.mark.parametrize("fname", _SCALAR_FNS)
def test_scalar_functions_refuse_a_val_that_is_not_a_real_number(fname: str, val: object) -> None:
    x = V(np.array([1.0, 2.0]))
    fn = getattr(F, fname)
    with pytest.raises(TypeError, match=rf"{fname}\(\): argument 'val' must be a real number"):
        fn(x, val)
    with pytest.raises(TypeError, match=rf"{fname}\(\): argument 'val' must be a real number"):
        fn(x, val=val)


@pytest.mark.parametrize(
    ("fname", "ref"),
    [
        ("add_scalar", lambda x, v: x + v),
        ("mul_scalar", lambda x, v: x * v),
        ("pow_scalar", lambda x, v: x**v),
        ("r_div_scalar", lambda x, v: v / x),
        ("r_pow_scalar", lambda x, v: v**x),
    ],
)
@pytest.mark.parametrize(
    "val", [3, 2.5, True, np.float32(1.5), np.int64(2), np.array(0.5)], ids=repr
)
def test_scalar_functions_take_real_numbers_and_0d_arrays(
    fname: str, ref: object, val: object
) -> None:
    xd = np.array([0.5, 2.0])
    v = val[()] if isinstance(val, np.ndarray) else val
    x = V(xd)
    y = getattr(F, fname)(x, val)
    np.testing.assert_allclose(y.d, ref(xd, v))  # type: ignore[operator]
    assert y.dtype == np.float64
    y.sum().backward()  # the rule gets the scalar too: against float64 central differences
    h = 1e-6
    fd = (ref(xd + h, v) - ref(xd - h, v)) / (2 * h)  # type: ignore[operator]
    np.testing.assert_allclose(x.g, fd, rtol=1e-6, atol=1e-8)


# -- bool(Variable) follows numpy ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (np.array([0.0]), False),
        (np.array([2.0]), True),
        (np.array(0.0), False),
        (np.array(-1.5), True),
        (np.array([[0]], np.int32), False),
        (np.array([True]), True),
    ],
    ids=repr,
)
def test_bool_of_a_single_element(data: np.ndarray, expected: bool) -> None:
    assert bool(V(data, need_grad=False)) is expected
    assert bool(V(data, need_grad=False)) is bool(data)


@pytest.mark.parametrize("shape", [(2,), (0,), (2, 3)])
def test_bool_of_several_elements_is_ambiguous(shape: tuple[int, ...]) -> None:
    with pytest.raises(
        ValueError,
        match=r"truth value of a Variable with \d+ elements .*"
        r"is ambiguous",
    ):
        bool(V(np.zeros(shape)))


# -- reduction axes: numpy integers, clear errors -----------------------------------------------


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize(
    "axis", [np.int64(1), np.int32(-1), (np.int64(0),), [0, np.intp(1)], np.array([1])], ids=repr
)
def test_sum_takes_numpy_integer_axes(axis: object, keepdims: bool, create_graph: bool) -> None:
    ax = tuple(int(a) for a in np.atleast_1d(axis))  # type: ignore[call-overload]
    xd = np.random.default_rng(2).standard_normal((2, 3))
    x = V(xd)
    ref = np.sum(xd, axis=ax, keepdims=keepdims)
    w = np.random.default_rng(3).standard_normal(ref.shape)
    y = F.sum(x, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(y.d, ref)
    (g,) = gh.grad([y], [x], grad_outputs=[w], create_graph=create_graph)
    # d(sum(w * sum(x, axis)))/dx is w broadcast back over the summed axes
    expected = np.broadcast_to(w if keepdims else np.expand_dims(w, ax), xd.shape)
    np.testing.assert_allclose(g.d, expected)


@pytest.mark.parametrize("axis", [1.5, (0, 1.5), np.float64(1.0), "1"], ids=repr)
def test_sum_refuses_a_non_integer_axis_naming_it(axis: object) -> None:
    with pytest.raises(TypeError, match=r"sum\(\).*argument 'axis' must be an int"):
        F.sum(V(np.ones((2, 3))), axis=axis)


# -- float16 sums accumulate in float32 ---------------------------------------------------------


def test_float16_sum_accumulates_in_float32() -> None:
    a = np.full((10000, 2), 0.1, np.float16)  # along axis 0, numpy adds float16 to float16
    y = F.sum(V(a), axis=0)
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.d.astype(np.float64), a.astype(np.float64).sum(axis=0), rtol=1e-3)
    b = np.tile(np.array([[6e4], [6e4], [-6e4], [-6e4]], np.float16), (1, 3))
    np.testing.assert_array_equal(F.sum(V(b), axis=0).d, np.zeros(3, np.float16))  # not inf - inf
    c = np.full((3000, 2), 1.0, np.float16)
    np.testing.assert_array_equal(F.sum(V(c), axis=0, keepdims=True).d, [[3000.0, 3000.0]])
    assert F.sum(V(c)).d == 6000.0 and F.sum(V(c)).dtype == np.float16


# -- a stale .g of another shape is not accumulated into ----------------------------------------


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize(("old", "new"), [((3, 1), (3, 3)), ((3,), (2,))])
def test_backward_refuses_to_accumulate_into_a_stale_grad(
    old: tuple[int, ...], new: tuple[int, ...], create_graph: bool
) -> None:
    x = V(np.ones(old), name="w")
    (x * x).sum().backward(create_graph=create_graph)
    np.testing.assert_array_equal(x.g, np.full(old, 2.0))
    x.d = np.ones(new)
    with pytest.raises(ValueError, match=r"Variable 'w'.*stale: call cleargrad\(\)"):
        (x * x).sum().backward(create_graph=create_graph)
    np.testing.assert_array_equal(x.g, np.full(old, 2.0))  # untouched
    x.cleargrad()
    (x * x).sum().backward(create_graph=create_graph)
    np.testing.assert_array_equal(x.g, np.full(new, 2.0))


def test_stale_grad_error_names_the_variable_and_both_shapes() -> None:
    x = V(np.ones((3, 1)), name="w")
    (x * x).sum().backward()
    x.d = np.ones((3, 3))
    with pytest.raises(ValueError) as e:
        (x * x).sum().backward()
    assert "'w'" in str(e.value) and "(3, 1)" in str(e.value) and "(3, 3)" in str(e.value)
    y = V(np.ones(2))
    (y * 1.0).sum().backward()
    y.d = np.ones(3)
    with pytest.raises(ValueError, match=r"a leaf Variable of shape \(3,\).*\(2,\).*\(3,\)"):
        (y * 1.0).sum().backward()


def test_a_refused_accumulation_leaves_every_grad_as_it_was() -> None:
    a = V(np.ones(2))
    b = V(np.ones(2))
    c = V(np.ones(2))
    (a * b * c).sum().backward()
    b.d = np.ones((1, 2))  # broadcasts with a and c: the new gradient of b is (1, 2)
    fresh = V(np.ones(2))
    with pytest.raises(ValueError, match="stale"):
        (a * b * c * fresh).sum().backward()
    for v in (a, b, c):
        np.testing.assert_array_equal(v.g, np.ones(v.g.shape))
    assert b.g.shape == (2,)
    assert fresh.g is None


# -- undeclared inputs arrive as None, leaves included -----------------------------------------

_SEEN: list[tuple[bool, ...]] = []


def _scale2(xp: object, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a * 2.0 + b * 3.0


def _scale2_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    _SEEN.append(tuple(v is None for v in inputs))
    return [gy[0] * 2.0, gy[0] * 3.0]


def _scale2_needs_b_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    _SEEN.append(tuple(v is None for v in inputs))
    assert inputs[1].d.shape == in_shapes[1]  # declared: the Variable (a leaf) or its saved array
    return [gy[0] * 2.0, gy[0] * 3.0]


def _add_test_functions(register: Any) -> None:
    f = register.function
    f("Scale2None", _scale2, inputs=("a", "b"), rule=_scale2_bw, need_inputs=(), need_outputs=())
    f(
        "Scale2B",
        _scale2,
        inputs=("a", "b"),
        rule=_scale2_needs_b_bw,
        need_inputs=(1,),
        need_outputs=(),
    )


@pytest.fixture
def test_functions(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import types

    from gradhub import plugins

    mod = types.ModuleType("review2_test_plugin")
    mod.gradhub_add_functions = gh.hookimpl(_add_test_functions)  # type: ignore[attr-defined]
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    plugins.reset()
    plugins.load_plugins(extra=[("review2_test", mod)])
    _SEEN.clear()
    yield
    plugins.reset()


@pytest.mark.usefixtures("test_functions")
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("leaves", [True, False])
def test_rule_inputs_not_declared_arrive_as_none(leaves: bool, create_graph: bool) -> None:
    from gradhub.ops import call

    a, b = V(np.array([1.0, 2.0])), V(np.array([3.0, 4.0]))
    ia, ib = (a, b) if leaves else (a * 1.0, b * 1.0)
    (ga, gb) = gh.grad([call("Scale2None", ia, ib)], [a, b], create_graph=create_graph)
    np.testing.assert_array_equal(ga.d, [2.0, 2.0])
    np.testing.assert_array_equal(gb.d, [3.0, 3.0])
    (ga, gb) = gh.grad([call("Scale2B", ia, ib)], [a, b], create_graph=create_graph)
    np.testing.assert_array_equal(gb.d, [3.0, 3.0])
    assert _SEEN == [(True, True), (True, False)]


# -- abs(Variable); integer powers --------------------------------------------------------------


@pytest.mark.parametrize("create_graph", [False, True])
def test_abs_of_a_variable_is_the_function_abs(create_graph: bool) -> None:
    xd = np.array([-1.5, 2.0, -0.25])
    x = V(xd)
    y = abs(x)
    assert y.creator is not None and y.creator.fdef.name == "Abs"
    np.testing.assert_array_equal(y.d, np.abs(xd))
    (g,) = gh.grad([y], [x], create_graph=create_graph)
    np.testing.assert_array_equal(g.d, np.sign(xd))  # known: d|x|/dx = sign(x) away from 0


def test_abs_without_the_function_library(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gradhub import plugins

    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    plugins.reset()
    try:
        plugins.load_plugins()
        # Abs (and Sign, which its rule calls) is the core's: no function library needed
        x = V(np.array([-1.0, 2.0]))
        y = abs(x)
        np.testing.assert_array_equal(y.d, [1.0, 2.0])
        (g,) = gh.grad([y], [x], create_graph=True)
        np.testing.assert_array_equal(g.d, [-1.0, 1.0])
    finally:
        plugins.reset()


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int64])
@pytest.mark.parametrize("val", [-1, np.int64(-2)], ids=repr)
def test_integer_base_to_a_negative_integer_power_is_a_clear_error(dtype: type, val: int) -> None:
    u = V(np.array([1, 2], dtype), need_grad=False)
    with pytest.raises(
        ValueError,
        match=r"pow_scalar\(\).*argument 'val'.*integer base.*"
        r"negative integer power",
    ):
        u**val
    with pytest.raises(ValueError, match=r"pow_scalar\(\).*negative integer power"):
        F.pow_scalar(u, val)
    np.testing.assert_array_equal((u**-1.0).d, [1.0, 0.5])  # a float power is fine


def test_integer_overflow_in_a_kernel_names_the_function() -> None:
    u = V(np.array([1, 2], np.uint8), need_grad=False)
    with pytest.raises(OverflowError, match=r"add_scalar\(\).*300"):
        u + 300


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda x: F.elu(x, alpha=None), r"elu\(\): argument 'alpha'"),
        (lambda x: F.selu(x, scale=None), r"selu\(\): argument 'scale'"),
        (lambda x: F.selu(x, alpha=np.ones(2)), r"selu\(\): argument 'alpha'"),
        (lambda x: F.pad(x, (1, 1), constant_value=None), r"pad\(\): argument 'constant_value'"),
    ],
)
def test_real_settings_of_nn_ops_refuse_none_and_arrays(call: Any, pattern: str) -> None:
    """Review repro: elu(alpha=None), selu(scale=None) and pad(constant_value=None) gave NaN."""
    with pytest.raises(TypeError, match=pattern + " must be a real number"):
        call(V(np.array([1.0, -2.0])))


def test_real_settings_of_nn_ops_take_numpy_scalars_and_0d_arrays() -> None:
    x = V(np.array([1.0, -2.0]))
    np.testing.assert_allclose(F.elu(x, alpha=np.array(2.0)).d, [1.0, 2.0 * np.expm1(-2.0)])
    np.testing.assert_allclose(F.pad(x, (1, 1), constant_value=np.float32(3)).d, [3, 1, -2, 3])
    np.testing.assert_array_equal(F.greater_scalar(x, np.int64(0)).d, [1.0, 0.0])
