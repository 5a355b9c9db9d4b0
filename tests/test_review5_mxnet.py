"""Regression tests for the fifth review of ``gradhub_compat.mxnet`` (findings F1-F12 of the
comparison with the real mxnet 1.9.1). Expected values were taken from runs of mxnet 1.9.1 (CPU)
or are derived by hand / by float64 finite differences, as each test says.
"""

from __future__ import annotations

from collections.abc import Callable

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

# -- F1: forward writes into the executor's output arrays ---------------------------------------


def test_forward_writes_into_the_held_output_arrays() -> None:
    a = mx.sym.Variable("a")
    ex = (a * 2).bind(mx.cpu(), {"a": mx.nd.array([1, 2])})
    out = ex.forward()[0]
    held = ex.outputs[0]
    ex.arg_dict["a"][:] = 10
    ex.forward()
    # mxnet 1.9.1: [20. 20.] for both
    np.testing.assert_array_equal(out.asnumpy(), [20.0, 20.0])
    assert held is ex.outputs[0] and out is ex.outputs[0]


def test_outputs_do_not_alias_the_arguments() -> None:
    a = mx.sym.Variable("a")
    ex = mx.sym.BlockGrad(a).bind(mx.cpu(), {"a": mx.nd.array([1, 2])})
    out = ex.forward()[0]
    out[:] = 0  # writing into an output leaves the argument alone
    np.testing.assert_array_equal(ex.arg_dict["a"].asnumpy(), [1.0, 2.0])
    ex.arg_dict["a"][:] = 5
    ex.forward()
    np.testing.assert_array_equal(out.asnumpy(), [5.0, 5.0])


# -- F3: comparisons --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "values"),
    [
        ("a == b", [1, 0]),
        ("a != b", [0, 1]),
        ("a < b", [0, 1]),
        ("a <= b", [1, 1]),
        ("a > b", [0, 0]),
        ("a >= b", [1, 0]),
        ("a == 1", [1, 0]),
        ("1 == a", [1, 0]),
        ("1 < a", [0, 1]),
        ("2 >= a", [1, 1]),
        ("a > 1.5", [0, 1]),
    ],
)
def test_comparisons_are_elementwise_in_the_arrays_dtype(expr: str, values: list[int]) -> None:
    env = {"a": mx.nd.array([1, 2]), "b": mx.nd.array([1, 3])}
    r = eval(expr, env)  # mxnet 1.9.1 values; float32 results
    assert isinstance(r, mx.NDArray) and r.dtype == np.float32
    np.testing.assert_array_equal(r.asnumpy(), values)


def test_comparisons_int_dtype_broadcasting_and_errors() -> None:
    i = mx.nd.array([1, 2], dtype="int32")
    r = i == 1.5  # mxnet 1.9.1: [1, 0] int32 (the scalar is converted to int32 first)
    assert r.dtype == np.int32 and r.asnumpy().tolist() == [1, 0]
    assert (i > 1.5).asnumpy().tolist() == [0, 1]
    a, c = mx.nd.array([1, 2]), mx.nd.array([[1], [2]])
    np.testing.assert_array_equal((a == c).asnumpy(), [[1, 0], [0, 1]])
    np.testing.assert_array_equal((a < c).asnumpy(), [[0, 0], [1, 0]])
    with pytest.raises(
        TypeError,
        match=r"NDArray ==: the operands have different dtypes "
        r"float32 and int32",
    ):
        _ = a == i
    for other in (None, "x", [1, 2], np.array([1, 2])):
        with pytest.raises(TypeError, match=r"NDArray ==: type .* not supported"):
            _ = a == other
    with pytest.raises(ValueError, match="truth value of an NDArray with multiple elements"):
        bool(a == a)
    assert bool(mx.nd.array([1])) and not bool(mx.nd.array([0])) and not bool(mx.nd.zeros(0))
    assert len({a, c}) == 2  # still hashable (as mxnet)


# -- F2: reshape codes ------------------------------------------------------------------------

_RESHAPES = [  # (codes, shape from mxnet 1.9.1 for an array of shape (2, 3, 4))
    ((0, -1), (2, 12)),
    ((-2,), (2, 3, 4)),
    ((-3, 4), (6, 4)),
    ((2, -4, 1, 3, 4), (2, 1, 3, 4)),
    ((2, -4, -1, 3, 4), (2, 1, 3, 4)),
    ((2, -4, 3, -1, 4), (2, 3, 1, 4)),
    ((-3, -2), (6, 4)),
    ((0, 0, 0), (2, 3, 4)),
    ((0, -3), (2, 12)),
    ((-1,), (24,)),
    ((4, -1), (4, 6)),
    ((2, -1, 2), (2, 6, 2)),
    ((0, 3, -1), (2, 3, 4)),
    ((2, -4, 1, 3, -2), (2, 1, 3, 4)),
    ((0, -4, 3, 1, -2), (2, 3, 1, 4)),
    ((-4, 2, 1, -2), (2, 1, 3, 4)),
    ((0, -2), (2, 3, 4)),
]


@pytest.mark.parametrize(("codes", "expect"), _RESHAPES)
def test_reshape_special_codes_as_mxnet(codes: tuple[int, ...], expect: tuple[int, ...]) -> None:
    assert mx.nd.zeros((2, 3, 4)).reshape(codes).shape == expect


def test_reshape_keywords_reverse_and_view() -> None:
    x = mx.nd.zeros((2, 3, 4))
    assert x.reshape(shape=(4, 6)).shape == (4, 6) and x.reshape(4, 6).shape == (4, 6)
    # mxnet 1.9.1 values
    assert x.reshape(shape=(-1, 0), reverse=True).shape == (6, 4)
    assert x.reshape(shape=(0, -1), reverse=True).shape == (3, 8)
    assert mx.nd.zeros((10, 5, 4)).reshape((-1, 0), reverse=True).shape == (50, 4)
    assert mx.nd.zeros((10, 5, 4)).reshape((-1, 0)).shape == (40, 5)
    y = x.reshape((0, -1))
    y[:] = 1  # a view, as mxnet
    assert x.asnumpy().sum() == 24
    with pytest.raises(TypeError, match="reshape: unknown keyword"):
        x.reshape(shape=(24,), order="F")


@pytest.mark.parametrize(
    "codes", [(-1, -1), (5, -1), (0, 0, 0, 0), (-5,), (-3,), (2, -4, 2, 2, 4), (-3, -3), (6, -2)]
)
def test_reshape_bad_codes_raise_naming_reshape_and_shape(codes: tuple[int, ...]) -> None:
    # every one of these raises in mxnet 1.9.1 too
    with pytest.raises(
        ValueError,
        match=r"NDArray.reshape: cannot reshape an array of shape "
        r"\(2, 3, 4\) into " + re_tuple(codes),
    ):
        mx.nd.zeros((2, 3, 4)).reshape(codes)


def re_tuple(t: tuple[int, ...]) -> str:
    import re

    return re.escape(str(t))


# -- F4: integer indexing ---------------------------------------------------------------------


def test_integer_index_gives_a_one_element_view() -> None:
    x = mx.nd.array([1, 2, 3])
    e = x[1]
    assert e.shape == (1,)
    e[:] = 9  # mxnet 1.9.1: [1. 9. 3.]
    np.testing.assert_array_equal(x.asnumpy(), [1.0, 9.0, 3.0])
    m = mx.nd.array([[1, 2], [3, 4]])
    e2 = m[1, 0]
    assert e2.shape == (1,) and m[1].shape == (2,)
    e2[:] = 9
    m[-1, -1][:] = 7
    np.testing.assert_array_equal(m.asnumpy(), [[1.0, 2.0], [9.0, 7.0]])
    assert x[-1].asnumpy().tolist() == [3.0]
    with pytest.raises(IndexError):
        x[3]


# -- F7: grad_dict ----------------------------------------------------------------------------


def test_grad_dict_lists_every_argument() -> None:
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    ex = net.simple_bind(mx.cpu(), grad_req={"fc_weight": "write", "fc_bias": "write"}, data=(1, 3))
    # mxnet 1.9.1: ['data', 'fc_bias', 'fc_weight', 'softmax_label'], grad_dict['data'] is None
    assert sorted(ex.grad_dict) == ["data", "fc_bias", "fc_weight", "softmax_label"]
    assert ex.grad_dict["data"] is None and ex.grad_dict["softmax_label"] is None
    assert ex.grad_dict["fc_weight"] is ex.grad_arrays[1]
    ex.forward(is_train=True)
    ex.backward()
    for _, g in ex.grad_dict.items():
        if g is not None:
            assert g.shape in ((2, 3), (2,))


# -- F5, F6: loss layers ----------------------------------------------------------------------


@pytest.mark.parametrize(("label", "cls"), [(1.7, 1), (3.9, 3), (0.2, 0)])
def test_softmax_output_truncates_float_labels(label: float, cls: int) -> None:
    g = mx.nd.zeros((1, 4))
    ex = mx.sym.SoftmaxOutput(mx.sym.Variable("data"), name="sm").bind(
        mx.cpu(), {"data": mx.nd.zeros((1, 4)), "sm_label": mx.nd.array([label])}, {"data": g}
    )
    ex.forward(is_train=True)
    ex.backward()
    expect = np.full((1, 4), 0.25)  # mxnet 1.9.1: class 1 for 1.7, class 3 for 3.9
    expect[0, cls] -= 1.0
    np.testing.assert_allclose(g.asnumpy(), expect, rtol=1e-6)


@pytest.mark.parametrize(
    ("shape", "divisor"), [((4,), 1), ((2, 3), 2), ((2, 3, 4), 6), ((2, 1, 3), 2), ((), 1)]
)
def test_make_loss_batch_divides_as_mxnet(shape: tuple[int, ...], divisor: int) -> None:
    d = mx.sym.Variable("d")
    g = mx.nd.zeros(shape)
    ex = mx.sym.MakeLoss(d, normalization="batch").bind(
        mx.cpu(), {"d": mx.nd.ones(shape) * 0.5}, {"d": g}
    )
    ex.forward(is_train=True)
    ex.backward()
    # mxnet 1.9.1 divisors: (4,) 1, (2, 3) 2, (2, 3, 4) 6, (2, 1, 3) 2
    np.testing.assert_allclose(g.asnumpy(), np.full(shape, 1.0 / divisor), rtol=1e-6)


# -- F8, F12: NDArray methods -----------------------------------------------------------------


def test_as_in_context_same_context_returns_the_array() -> None:
    x = mx.nd.array([1, 2, 3])
    y = x.as_in_context(mx.cpu())
    assert y is x and x.as_in_context(mx.cpu(0)) is x
    z = x.as_in_context(mx.cpu(1))
    assert z is not x and z.context == mx.cpu(1)
    z[:] = 0
    np.testing.assert_array_equal(x.asnumpy(), [1.0, 2.0, 3.0])


def test_astype_copy_false_and_asscalar_type() -> None:
    x = mx.nd.array([3])
    assert x.astype("float32", copy=False) is x
    assert x.astype("float32") is not x
    y = x.astype("float64", copy=False)
    assert y is not x and y.dtype == np.float64
    s = x.asscalar()
    assert type(s) is np.float32 and s == 3.0
    i = mx.nd.array([3], dtype="int32").asscalar()
    assert type(i) is np.int32 and i == 3


# -- F9: simple_bind type_dict ----------------------------------------------------------------


def test_simple_bind_type_dict_propagates_the_dtype() -> None:
    net = mx.sym.SoftmaxOutput(
        mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc"), name="sm"
    )
    ex = net.simple_bind(mx.cpu(), data=(1, 3), type_dict={"data": "float64"})
    # mxnet 1.9.1: every argument and gradient float64
    assert {k: v.dtype for k, v in ex.arg_dict.items()} == dict.fromkeys(
        ["data", "fc_weight", "fc_bias", "sm_label"], np.float64
    )
    assert all(g is not None and g.dtype == np.float64 for g in ex.grad_dict.values())
    ex.arg_dict["fc_weight"][:] = 1.0
    ex.forward(is_train=True)
    ex.backward()
    assert ex.grad_dict["fc_weight"].dtype == np.float64  # type: ignore[union-attr]
    ex = net.simple_bind(mx.cpu(), data=(1, 3), type_dict={"fc_weight": "float64"})
    assert ex.arg_dict["data"].dtype == np.float64  # inferred backwards, as mxnet
    assert net.simple_bind(mx.cpu(), data=(1, 3)).arg_dict["fc_bias"].dtype == np.float32
    with pytest.raises(
        TypeError,
        match=r"simple_bind: operator FullyConnected 'fc' .* float64 "
        r"and 'fc_bias' is float32",
    ):
        net.simple_bind(mx.cpu(), data=(1, 3), type_dict={"data": "float64", "fc_bias": "float32"})
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    with pytest.raises(ValueError, match=r"cannot decide the dtype of \['y'\]"):
        mx.sym.Group([x * 2, y * 2]).simple_bind(
            mx.cpu(), x=(2,), y=(2,), type_dict={"x": "float64"}
        )


# -- F10: mixed dtypes ------------------------------------------------------------------------


def test_mixed_dtypes_raise_in_arithmetic_and_bind() -> None:
    i = mx.nd.array([3, 4], dtype="int32")
    f = mx.nd.array([0.5, 0.5])
    d = mx.nd.array([1e-9, 1e-9], dtype="float64")
    for fn, pat in (
        (lambda: i + f, r"NDArray \+: .* int32 and float32"),
        (lambda: f + d, r"NDArray \+: .* float32 and float64"),
        (lambda: f * d, r"NDArray \*: .* float32 and float64"),
    ):
        with pytest.raises(TypeError, match=pat):
            fn()
    c = mx.nd.array([1, 2])
    with pytest.raises(TypeError, match=r"NDArray \+=: .* float32 and float64"):
        c += d
    np.testing.assert_array_equal(c.asnumpy(), [1.0, 2.0])
    with pytest.raises(TypeError, match="NDArray \\+: type ndarray not supported"):
        _ = c + np.array([1.0, 2.0])
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    with pytest.raises(
        TypeError,
        match=r"bind: operator _Mul '_mul\d+' .* 'a' is float64 and "
        r"'b' is float32",
    ):
        (a * b).bind(mx.cpu(), {"a": mx.nd.array([1.5], dtype="float64"), "b": mx.nd.array([2])})


def test_scalar_operands_take_the_arrays_dtype() -> None:
    i = mx.nd.array([1, 2], dtype="int32")
    n = mx.nd.array([-1, -2], dtype="int32")
    # mxnet 1.9.1 values: the scalar is converted to int32 first (1.5 -> 1, 1.7 -> 1)
    cases: list[tuple[Callable[[], mx.NDArray], list[int]]] = [
        (lambda: i + 0.5, [1, 2]),
        (lambda: i * 1.5, [1, 2]),
        (lambda: i + 1.7, [2, 3]),
        (lambda: n + 1.7, [0, -1]),
        (lambda: n * 1.5, [-1, -2]),
        (lambda: 1.5**i, [1, 1]),
        (lambda: 5.5 - i, [4, 3]),
        (lambda: 7.9 / i, [7, 3]),
        (lambda: i / 2, [0, 1]),
    ]
    for fn, expect in cases:
        r = fn()
        assert r.dtype == np.int32 and r.asnumpy().tolist() == expect
    j = mx.nd.array([1, 2], dtype="int32")
    j *= 1.5
    assert j.asnumpy().tolist() == [1, 2] and j.dtype == np.int32
    j += 1.7
    assert j.asnumpy().tolist() == [2, 3]
    j /= 2
    assert j.asnumpy().tolist() == [1, 1]
    r = mx.nd.array([1, 2]) * np.float64(0.1)
    assert r.dtype == np.float32


# -- F11: the executor keeps its bound arrays ------------------------------------------------


def test_replacing_dict_entries_does_not_redirect_the_executor() -> None:
    a = mx.sym.Variable("a")
    ex = (a * 2).bind(mx.cpu(), {"a": mx.nd.array([1, 2])}, {"a": mx.nd.zeros(2)})
    ex.arg_dict["a"] = mx.nd.array([10, 20])
    # mxnet 1.9.1: forward [2. 4.], grad_arrays[0] [2. 2.]
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [2.0, 4.0])
    ex.grad_dict["a"] = mx.nd.array([0, 0])
    ex.backward(mx.nd.ones(2))
    np.testing.assert_array_equal(ex.grad_arrays[0].asnumpy(), [2.0, 2.0])  # type: ignore[union-attr]
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), [0.0, 0.0])  # type: ignore[union-attr]
    ex.arg_arrays[0][:] = 3  # writing into the bound array still reaches the executor
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [6.0, 6.0])
    ex.forward(a=mx.nd.array([4, 4]))
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), [8.0, 8.0])
    ex.copy_params_from({"a": mx.nd.array([1, 1])})
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [2.0, 2.0])


# -- broadcast operators ----------------------------------------------------------------------

_X = np.arange(6.0).reshape(2, 3) + 1
_Y21 = np.array([[2.0], [3.0]])
_HEAD = np.arange(6.0).reshape(2, 3) + 1

# mxnet 1.9.1 (float32): forward, grad x, grad y for x = _X, y = _Y21, head gradient _HEAD
_ORACLE_21 = {
    "broadcast_add": ([3, 4, 5, 7, 8, 9], [1, 2, 3, 4, 5, 6], [6, 15]),
    "broadcast_sub": ([-1, 0, 1, 1, 2, 3], [1, 2, 3, 4, 5, 6], [-6, -15]),
    "broadcast_mul": ([2, 4, 6, 12, 15, 18], [2, 4, 6, 12, 15, 18], [14, 77]),
    "broadcast_div": (
        [0.5, 1, 1.5, 4 / 3, 5 / 3, 2],
        [0.5, 1, 1.5, 4 / 3, 5 / 3, 2],
        [-3.5, -8.55555534362793],
    ),
    "broadcast_maximum": ([2, 2, 3, 4, 5, 6], [0, 2, 3, 4, 5, 6], [1, 0]),
    "broadcast_minimum": ([1, 2, 2, 3, 3, 3], [1, 2, 0, 0, 0, 0], [3, 15]),
    "broadcast_power": (
        [1, 4, 9, 64, 125, 216],
        [2, 8, 18, 192, 375, 648],
        [35.20771026611328, 3682.910400390625],
    ),
}


@pytest.mark.parametrize("op", sorted(_ORACLE_21))
def test_broadcast_operators_match_mxnet(op: str) -> None:
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    gx, gy = mx.nd.zeros(_X.shape), mx.nd.zeros(_Y21.shape)
    ex = getattr(mx.sym, op)(x, y).bind(
        mx.cpu(), {"x": mx.nd.array(_X), "y": mx.nd.array(_Y21)}, {"x": gx, "y": gy}
    )
    out = ex.forward(is_train=True)[0]
    ex.backward(mx.nd.array(_HEAD))
    val, ex_gx, ex_gy = _ORACLE_21[op]
    np.testing.assert_allclose(out.asnumpy().ravel(), val, rtol=1e-5)
    np.testing.assert_allclose(gx.asnumpy().ravel(), ex_gx, rtol=1e-5)
    np.testing.assert_allclose(gy.asnumpy().ravel(), ex_gy, rtol=1e-5)


_NUMPY = {
    "broadcast_add": np.add,
    "broadcast_sub": np.subtract,
    "broadcast_mul": np.multiply,
    "broadcast_div": np.divide,
    "broadcast_power": np.power,
    "broadcast_maximum": np.maximum,
    "broadcast_minimum": np.minimum,
}


@pytest.mark.parametrize("yshape", [(1, 3), (2, 1), (3,), (1,), (2, 3)])
@pytest.mark.parametrize("op", sorted(_NUMPY))
def test_broadcast_gradients_against_finite_differences(op: str, yshape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(0)
    xv = rng.uniform(0.5, 2.0, (2, 3))
    yv = rng.uniform(0.5, 2.0, yshape)  # no ties: max/min are differentiable here
    head = rng.standard_normal((2, 3))
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    gx, gy = mx.nd.zeros(xv.shape, dtype="float64"), mx.nd.zeros(yshape, dtype="float64")
    ex = getattr(mx.sym, op)(x, y).bind(
        mx.cpu(),
        {"x": mx.nd.array(xv, dtype="float64"), "y": mx.nd.array(yv, dtype="float64")},
        {"x": gx, "y": gy},
    )
    out = ex.forward(is_train=True)[0]
    np.testing.assert_allclose(out.asnumpy(), _NUMPY[op](xv, yv), rtol=1e-12)
    ex.backward(mx.nd.array(head, dtype="float64"))

    def f(a: np.ndarray, b: np.ndarray) -> float:
        return float((_NUMPY[op](a, b) * head).sum())

    for arr, other_first, got in ((xv, True, gx), (yv, False, gy)):
        num = np.zeros_like(arr)
        for k in np.ndindex(arr.shape):
            p, m = arr.copy(), arr.copy()
            p[k] += 1e-6
            m[k] -= 1e-6
            fp = f(p, yv) if other_first else f(xv, p)
            fm = f(m, yv) if other_first else f(xv, m)
            num[k] = (fp - fm) / 2e-6
        np.testing.assert_allclose(got.asnumpy(), num, rtol=1e-6, atol=1e-8)


def test_broadcast_operator_shapes_names_and_errors() -> None:
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    s = mx.sym.broadcast_add(x, y, name="bb")
    assert s.list_arguments() == ["x", "y"] and s.list_outputs() == ["bb_output"]
    # mxnet 1.9.1 values
    assert s.infer_shape(x=(2, 3), y=(1, 3)) == ([(2, 3), (1, 3)], [(2, 3)], [])
    assert s.infer_shape(x=(2, 3), y=(3,)) == ([(2, 3), (3,)], [(2, 3)], [])
    assert s.infer_shape(x=(2, 3)) == (None, None, None)
    with pytest.raises(ValueError, match=r"broadcast_add 'bb': the shapes \(2, 3\) and \(2,\)"):
        s.infer_shape(x=(2, 3), y=(2,))
    assert mx.sym.broadcast_mul(x, y).name.startswith("broadcast_mul")
    assert mx.sym.broadcast_plus is mx.sym.broadcast_add
    with pytest.raises(TypeError, match="broadcast_add: rhs must be a Symbol"):
        mx.sym.broadcast_add(x, 2)
    ex = mx.sym.broadcast_maximum(x, y).simple_bind(mx.cpu(), x=(2, 3), y=(1, 3))
    assert ex.forward()[0].shape == (2, 3)
