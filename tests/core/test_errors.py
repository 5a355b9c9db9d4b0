"""Bad input gets a clear error naming the function and the argument (CONTRACT section 1).

Covers Variables with integer data needing a gradient, wrong grad_outputs/grad_inputs counts,
shapes and dtypes, malformed backward rules (checked at run time for count, shape and dtype, the
error naming the function and its provider), failing kernels and wrong call arguments. Devices
are in test_devices.py. Only the core functions are loaded.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub import plugins
from gradhub.errors import BackwardRuleError, FunctionNotFoundError, GradhubError
from gradhub.ops import call
from gradhub.registry import one_input_fast

PROVIDER = "module errors_test_plugin"


def _copy(xp: Any, x: Any) -> Any:
    return x.copy()


def _add(xp: Any, a: Any, b: Any) -> Any:
    return a + b


def _rule(kind: str) -> Callable[..., Any]:
    def rule(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
        g = gy[0]
        if kind == "count":
            return [g, g]
        if kind == "count2":
            return g  # a single gradient for a two-input function
        if kind == "shape":
            return [g.sum()]
        if kind == "dtype":
            return [gh.Variable(np.ones(g.shape, dtype=np.float32), need_grad=False)]
        if kind == "raises":
            raise KeyError("no such thing")
        if kind == "type":
            return "gradient"
        return [g]

    return rule


def _add_functions(register: Any) -> None:
    for kind in ("count", "shape", "dtype", "raises", "type"):
        register.function(
            f"Bad{kind.capitalize()}", _copy, rule=_rule(kind), need_inputs=(), need_outputs=()
        )
    register.function(
        "BadCount2", _add, inputs=("a", "b"), rule=_rule("count2"), need_inputs=(), need_outputs=()
    )
    for kind in ("count", "shape", "dtype"):
        register.function(
            f"FastBad{kind.capitalize()}",
            _copy,
            rule=_rule("good"),
            fast_backward=_fast_rule(kind),
            need_inputs=(),
            need_outputs=(),
        )
    for kind in ("shape", "dtype", "raises", "type"):
        register.function(
            f"Fast1Bad{kind.capitalize()}",
            _copy,
            rule=_rule("good"),
            fast_backward=one_input_fast(_fast1_formula(kind)),
            need_inputs=(),
            need_outputs=(),
        )
    register.function(
        "Fast1Scale",
        lambda xp, x, k: x * k,
        attrs={"k": 1.0},
        rule=lambda gy, i, ish, o, osh, k: [gy[0] * k],
        fast_backward=_formula_only(),
        need_inputs=(0,),
        need_outputs=(0,),
    )


FORMULA_CALLS: list[tuple[Any, ...]] = []


def _formula_only() -> Callable[..., Any]:
    """A fast rule whose general form fails: only the direct call of its formula works."""

    def formula(xp, gy, x, y, k):  # type: ignore[no-untyped-def]
        FORMULA_CALLS.append((xp, gy, x, y, k))
        return gy * k

    def general(*args: Any, **kw: Any) -> Any:
        raise AssertionError("the engine must call the formula of a one-input fast rule")

    general.one_input = one_input_fast(formula).one_input  # type: ignore[attr-defined]
    return general


def _fast1_formula(kind: str) -> Callable[..., Any]:
    def fn(xp, gy, x, y):  # type: ignore[no-untyped-def]
        if kind == "shape":
            return gy[:1]
        if kind == "dtype":
            return gy.astype(np.float32)
        if kind == "raises":
            raise KeyError("no such thing")
        return "gradient"

    return fn


def _fast_rule(kind: str) -> Callable[..., Any]:
    def fast(xp, gy, x, xs, y, ys):  # type: ignore[no-untyped-def]
        g = gy[0]
        if kind == "count":
            return [g, g]
        if kind == "shape":
            return [g[:1]]
        return [g.astype(np.float32)]

    return fast


@pytest.fixture(autouse=True)
def _core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    mod = types.ModuleType("errors_test_plugin")
    mod.gradhub_add_functions = gh.hookimpl(_add_functions)  # type: ignore[attr-defined]
    plugins.reset()
    plugins.load_plugins(extra=[("errors_test", mod)])
    yield
    plugins.reset()


def var(a: Any, **kw: Any) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), **kw)


# -- Variables -------------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [[1, 2], np.arange(3), np.array([True]), 7])
def test_integer_data_needing_a_gradient(data: Any) -> None:
    with pytest.raises(
        TypeError,
        match=r"Variable: need_grad=True needs floating-point data, "
        r"got dtype (int|bool)",
    ):
        gh.Variable(data)
    v = gh.Variable(data, need_grad=False)  # fine for labels
    assert not v.need_grad


# -- backward / grad arguments ---------------------------------------------------------------------


def test_backward_grad_of_wrong_shape() -> None:
    x = var([1.0, 2.0])
    y = x * 2.0
    with pytest.raises(
        ValueError,
        match=r"backward: grad has shape \(3,\) but the output has "
        r"shape \(2,\)",
    ):
        y.backward(np.ones(3))
    with pytest.raises(ValueError, match=r"backward: grad has shape \(2, 1\)"):
        y.backward(var([[1.0], [1.0]], need_grad=False))
    assert x.g is None


def test_backward_needs_a_variable() -> None:
    with pytest.raises(TypeError, match="backward: expected a Variable, got ndarray"):
        gh.backward(np.ones(2))  # type: ignore[arg-type]


def test_grad_outputs_count() -> None:
    x = var([1.0, 2.0])
    y = x * 2.0
    with pytest.raises(
        ValueError,
        match=r"grad: grad_outputs has 2 entries but there are 1 "
        r"outputs",
    ):
        gh.grad([y], [x], [None, None])
    with pytest.raises(
        ValueError,
        match=r"grad_outputs must be a list with one entry per output "
        r"\(2 outputs\)",
    ):
        gh.grad([y, y], [x], np.ones(2))


def test_grad_outputs_shape() -> None:
    x = var([1.0, 2.0])
    y1 = x * 2.0
    y2 = x.sum()
    with pytest.raises(
        ValueError,
        match=r"grad: grad_outputs\[1\] has shape \(2,\) but the "
        r"output has shape \(\)",
    ):
        gh.grad([y1, y2], [x], [None, np.ones(2)])


def test_grad_outputs_dtype_of_a_variable() -> None:
    """A float64 seed Variable for a float32 output: a clear error naming grad_outputs, or the
    seed is cast like an array would be; never an error blaming a backward rule."""
    x = gh.Variable([1.0, 2.0])  # float32
    y = x * 2.0
    seed = gh.Variable(np.array([1.0, 3.0]), need_grad=False)  # float64, a constant
    (g,) = gh.grad([y], [x], [seed])
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g.d, [2.0, 6.0])
    seed_var = gh.Variable(np.array([1.0, 3.0])) * 1.0  # float64 and part of a graph
    with pytest.raises(
        ValueError,
        match=r"grad: grad_outputs\[0\] has dtype float64 but the "
        r"output has dtype float32",
    ):
        gh.grad([y], [x], [seed_var])


def test_grad_inputs_count_shape_and_dtype() -> None:
    x = gh.Variable([1.0, 2.0])
    y = x * 2.0
    with pytest.raises(
        ValueError,
        match=r"grad: grad_inputs has 2 entries but there are 1 "
        r"inputs",
    ):
        gh.grad([y], [x], grad_inputs=[None, None])
    with pytest.raises(
        ValueError,
        match=r"grad: grad_inputs\[0\] has shape \(3,\) but the input "
        r"has shape \(2,\)",
    ):
        gh.grad([y], [x], grad_inputs=[np.ones(3)])
    (g,) = gh.grad([y], [x], grad_inputs=[gh.Variable(np.ones(2), need_grad=False)])
    assert g.dtype == np.float32  # the float64 constant is cast like an array


@pytest.mark.parametrize(
    ("value", "what"),
    [
        (np.array(["1", "2"]), "data of dtype <U1"),
        (["a", "b"], "data of dtype <U1"),
        (np.array([None, 1.0], dtype=object), "data of dtype object"),
        ("a", "data of dtype <U1"),
    ],
)
def test_gradients_given_take_only_numeric_data(value: Any, what: str) -> None:
    """``grad_outputs=[np.array(["1", "2", "3"])]`` was read as numbers, ``["a"]`` gave a bare
    ``could not convert string to float`` naming nothing, and None became NaN."""
    x = var([1.0, 2.0])
    y = x * 2.0
    ok = r": expected numeric data \(bool, integer or floating-point\), got "
    with pytest.raises(TypeError, match=r"grad: grad_outputs\[0\]" + ok + what):
        gh.grad([y], [x], [value])
    with pytest.raises(TypeError, match=r"grad: grad_inputs\[0\]" + ok + what):
        gh.grad([y], [x], grad_inputs=[value])
    with pytest.raises(TypeError, match=r"backward: grad" + ok + what):
        y.backward(value)
    assert x.g is None
    (g,) = gh.grad([y], [x], [np.array([1, 0])])  # integer and bool gradients are numbers
    np.testing.assert_array_equal(g.d, [2.0, 0.0])


@pytest.mark.parametrize(
    ("outputs", "inputs", "match"),
    [
        ("y", [np.ones(2)], r"grad: inputs\[0\] must be a Variable, got ndarray"),
        (["y", 3.0], ["x"], r"grad: outputs\[1\] must be a Variable, got float"),
        ("y", 5, r"grad: inputs must be a Variable or a sequence of Variables, got 5"),
    ],
)
def test_grad_arguments_must_be_variables(outputs: Any, inputs: Any, match: str) -> None:
    x = var([1.0, 2.0])
    y = x * 2.0
    env = {"x": x, "y": y}

    def sub(v: Any) -> Any:
        if isinstance(v, list):
            return [env.get(e, e) if isinstance(e, str) else e for e in v]
        return env.get(v, v) if isinstance(v, str) else v

    with pytest.raises(TypeError, match=match):
        gh.grad(sub(outputs), sub(inputs))


# -- backward rules checked at run time ------------------------------------------------------------


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize(
    ("name", "match"),
    [
        (
            "BadCount",
            r"the backward rule of BadCount \(from {p}\) returned 2 gradients for 1 "
            r"inputs",
        ),
        (
            "BadShape",
            r"the backward rule of BadShape \(from {p}\) returned a gradient of shape "
            r"\(\) for input 0, whose shape is \(2,\)",
        ),
        (
            "BadDtype",
            r"the backward rule of BadDtype \(from {p}\) returned a gradient of dtype "
            r"float32 for input 0, whose dtype is float64",
        ),
        (
            "BadRaises",
            r"the backward rule of BadRaises \(from {p}\) raised KeyError: 'no such "
            r"thing'",
        ),
        ("BadType", r"the backward rule of BadType \(from {p}\) (returned|raised)"),
    ],
)
def test_malformed_rule_results_raise_naming_function_and_provider(
    name: str, match: str, create_graph: bool
) -> None:
    x = var([1.0, 2.0])
    y = call(name, x)
    with pytest.raises(BackwardRuleError, match=match.format(p=PROVIDER)):
        gh.grad([y], [x], create_graph=create_graph)
    with pytest.raises(BackwardRuleError, match=name):
        y.backward()


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("FastBadCount", r"FastBadCount \(from {p}\) returned 2 gradients for 1 inputs"),
        (
            "FastBadShape",
            r"FastBadShape \(from {p}\) returned a gradient of shape \(1,\) for "
            r"input 0, whose shape is \(2,\)",
        ),
        (
            "FastBadDtype",
            r"FastBadDtype \(from {p}\) returned a gradient of dtype float32 for "
            r"input 0, whose dtype is float64",
        ),
    ],
)
def test_malformed_fast_rule_results_raise_in_first_order_backward(name: str, match: str) -> None:
    # regression: single-input fast rules skip the general validation loop only when their one
    # gradient is well formed
    x = var([1.0, 2.0])
    with pytest.raises(BackwardRuleError, match=match.format(p=PROVIDER)):
        gh.grad([call(name, x)], [x], create_graph=False)
    (g,) = gh.grad([call(name, x)], [x], create_graph=True)  # the graph rule is fine
    np.testing.assert_array_equal(g.d, [1.0, 1.0])


@pytest.mark.parametrize(
    ("name", "match"),
    [
        (
            "Fast1BadShape",
            r"Fast1BadShape \(from {p}\) returned a gradient of shape \(1,\) for "
            r"input 0, whose shape is \(2,\)",
        ),
        (
            "Fast1BadDtype",
            r"Fast1BadDtype \(from {p}\) returned a gradient of dtype float32 for "
            r"input 0, whose dtype is float64",
        ),
        ("Fast1BadRaises", r"Fast1BadRaises \(from {p}\) raised KeyError: 'no such thing'"),
        (
            "Fast1BadType",
            r"Fast1BadType \(from {p}\) returned a str for input 0, not a "
            r"gradient",
        ),
    ],
)
def test_malformed_one_input_fast_rule_results_raise(name: str, match: str) -> None:
    # the engine calls the formula of a one_input_fast rule directly; its result gets the same
    # validation as any fast rule's
    x = var([1.0, 2.0])
    with pytest.raises(BackwardRuleError, match=match.format(p=PROVIDER)):
        gh.grad([call(name, x)], [x], create_graph=False)
    (g,) = gh.grad([call(name, x)], [x], create_graph=True)  # the graph rule is fine
    np.testing.assert_array_equal(g.d, [1.0, 1.0])


def test_engine_calls_the_formula_of_a_one_input_fast_rule_directly() -> None:
    FORMULA_CALLS.clear()
    x = var([1.0, 2.0])
    y = call("Fast1Scale", x, k=3.0)
    (g,) = gh.grad([y], [x], [np.array([1.0, 10.0])], create_graph=False)
    np.testing.assert_array_equal(g.d, [3.0, 30.0])
    ((xp, gy, xa, ya, k),) = FORMULA_CALLS
    assert xp is np and k == 3.0
    np.testing.assert_array_equal(gy, [1.0, 10.0])
    np.testing.assert_array_equal(xa, [1.0, 2.0])  # the arrays the rule declared it needs
    np.testing.assert_array_equal(ya, [3.0, 6.0])


def test_rule_with_too_few_gradients() -> None:
    a = var([1.0])
    b = var([2.0])
    with pytest.raises(
        BackwardRuleError,
        match=r"BadCount2 .*returned Variable gradients for 2 "
        r"inputs",
    ):
        call("BadCount2", a, b).backward()


def test_errors_share_a_base_class() -> None:
    x = var([1.0])
    with pytest.raises(GradhubError):
        call("BadShape", x).backward()


def test_mixed_float_dtypes_in_one_function() -> None:
    """float32 * float64: numpy promotes the output to float64; gradients must come back in each
    input's own dtype (as in PyTorch), not fail in the rule's dtype check."""
    x = gh.Variable([1.0, 2.0])  # float32
    c = gh.Variable(np.array([3.0, 4.0]))  # float64
    y = x * c
    assert y.dtype == np.float64
    y.sum().backward()
    assert x.g.dtype == np.float32 and c.g.dtype == np.float64
    np.testing.assert_array_equal(x.g, [3.0, 4.0])
    np.testing.assert_array_equal(c.g, [1.0, 2.0])


# -- kernels and arguments -------------------------------------------------------------------------


def test_failing_kernel_names_function_provider_and_shapes() -> None:
    with pytest.raises(
        ValueError,
        match=r"add2\(\) \(Add2, from gradhub 0.1.0\) failed on inputs "
        r"of shapes \(2,\), \(3,\): operands could not be "
        r"broadcast",
    ):
        var([1.0, 2.0]) + var([1.0, 2.0, 3.0])
    with pytest.raises(
        ValueError,
        match=r"reshape\(\) \(Reshape, from gradhub 0.1.0\) failed on "
        r"inputs of shapes \(2, 3\)",
    ):
        var(np.ones((2, 3))).reshape(4)


def test_call_arguments() -> None:
    x = var([1.0])
    with pytest.raises(
        TypeError,
        match=r"add_scalar\(\) got an unexpected keyword argument "
        r"'bogus'",
    ):
        F.add_scalar(x, bogus=1.0)
    with pytest.raises(TypeError, match=r"add2\(\) missing required input 'x1'"):
        F.add2(x)
    # the third argument is nnabla's inplace (accepted and ignored)
    with pytest.raises(TypeError, match=r"add_scalar\(\) takes at most 3 arguments \(4 given\)"):
        F.add_scalar(x, 1.0, False, 2.0)
    with pytest.raises(TypeError, match=r"add2\(\) got multiple values for argument 'x0'"):
        F.add2(x, x, x0=x)
    with pytest.raises(TypeError, match=r"add2\(\): input 'x1' must not be None"):
        F.add2(x, None)


def test_unknown_functions() -> None:
    with pytest.raises(AttributeError, match=r"gradhub\.functions' has no function 'no_such_fn'"):
        F.no_such_fn  # noqa: B018
    with pytest.raises(FunctionNotFoundError, match="no function 'NoSuchFn' is registered"):
        call("NoSuchFn", var([1.0]))


@pytest.mark.parametrize(
    ("op", "name"),
    [
        (lambda x: x**x, "Pow2"),
        (lambda x: x @ x, "BatchMatmul"),
        (lambda x: x[0], "GetItem"),
        (lambda x: abs(x), "Abs"),
    ],
)
def test_operators_need_no_plugin(op: Callable[[gh.Variable], Any], name: str) -> None:
    # the functions the operators dispatch to are the core's own (no function library loaded)
    y = op(var([1.0, 2.0]))
    assert y.creator is not None and y.creator.fdef.name == name
    assert y.creator.fdef.provider.distribution == "gradhub"
