"""Native forward-mode (JVP) rules: the core's rules against float64 central differences and the
transposed backward rules, the engine's forward walk (``forward_tangents``/``forward_plan``), the
fallback for a function without a rule, compositions to third order, float32, the hook
``gradhub_add_jvp_rules`` and ``register.function(jvp=...)``, the registry's ``jvp`` column, and
the bad registrations and rule results with their messages. Core functions only."""

from __future__ import annotations

import io
import types
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import gradhub.func as ghf
import numpy as np
import pytest
from gradhub import engine, plugins
from gradhub.audit import check_jvp, samples_of
from gradhub.errors import BackwardRuleError, PluginLoadWarning, RegistrationError
from gradhub.jvp_rules import register_jvp_rule, unary_jvp
from gradhub.ops import call
from gradhub.registry import REGISTRY, registry_table, show_registry

RNG = np.random.default_rng(7)


def _transposed(outs: list[gh.Variable], xs: list[gh.Variable], ts: list[Any]) -> list[Any]:
    """J t from two reverse passes (the reference)."""
    us = [gh.Variable(np.zeros(o.shape, o.dtype), need_grad=True) for o in outs]
    gs = gh.grad(outs, xs, us, create_graph=True)
    return gh.grad(gs, us, [gh.Variable(t) for t in ts], create_graph=True)


def _central(f: Callable[..., Any], xs: list[np.ndarray], ts: list[np.ndarray]) -> np.ndarray:
    h = 1e-6
    plus = f(*[gh.Variable(x + h * t) for x, t in zip(xs, ts)]).d
    minus = f(*[gh.Variable(x - h * t) for x, t in zip(xs, ts)]).d
    return (plus - minus) / (2 * h)  # type: ignore[no-any-return]


A = RNG.standard_normal((3, 4))
CASES: list[tuple[str, Callable[..., Any], list[tuple[int, ...]]]] = [
    ("product and quotient with broadcasting", lambda x, y: x * y / (y * y + 1.0), [(2, 3), (3,)]),
    ("sub, neg, scalars", lambda x, y: -(x - y) * 2.5 + 1.0 - 3.0 / (x * x + 1.0), [(3,), (3,)]),
    ("powers", lambda x, y: (x * x + 1.0) ** y + 2.0**x + x**3.0, [(4,), (4,)]),
    ("abs, log", lambda x, y: abs(x) * call("Log", y * y + 1.0), [(2, 2), (2, 2)]),
    (
        "sum, reshape, broadcast",
        lambda x, y: (x.reshape((6,)) * y).sum(keepdims=True),
        [(2, 3), (6,)],
    ),
    ("matmul", lambda x, y: (x @ y) * (x @ y), [(2, 3), (3, 4)]),
    ("getitem", lambda x, y: x[1:, ::2] * y[np.array([0, 0, 2])][:2], [(3, 4), (3, 2)]),
    (
        "batch matmul transposed",
        lambda x, y: call("BatchMatmul", x, y, transpose_b=True),
        [(2, 2, 3), (2, 4, 3)],
    ),
]


@pytest.mark.parametrize(("name", "f", "shapes"), CASES, ids=[c[0] for c in CASES])
def test_native_rules_match_central_differences_and_the_transposed_rules(
    name: str, f: Callable[..., Any], shapes: list[tuple[int, ...]]
) -> None:
    arrays = [RNG.uniform(0.5, 1.5, s) for s in shapes]
    ts = [RNG.standard_normal(s) for s in shapes]
    xs = [gh.Variable(a, need_grad=True) for a in arrays]
    y = f(*xs)
    (native,) = engine.forward_tangents([y], xs, [gh.Variable(t) for t in ts])
    (reference,) = _transposed([y], xs, ts)
    np.testing.assert_allclose(native.d, reference.d, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(native.d, _central(f, arrays, ts), rtol=1e-6, atol=1e-8)


def test_every_core_rule_passes_the_audit_check() -> None:
    names = [
        n
        for n, f in REGISTRY.functions.items()
        if f.jvp_rule is not None and f.provider.distribution == "gradhub"
    ]
    assert {"Add2", "Mul2", "Div2", "Pow2", "BatchMatmul", "GetItem", "Sum", "Log"} <= set(names)
    dev = REGISTRY.device_type("cpu").get(0)
    for name in names:
        fdef = REGISTRY.get(name)
        for s in samples_of(fdef):
            check_jvp(fdef, s, dev, order=2)


@pytest.fixture
def counted_mul2() -> Iterator[list[int]]:
    """Mul2's JVP rule, counting its calls."""
    fdef = REGISTRY.get("Mul2")
    old = fdef.jvp_rule
    calls = [0]

    def counting(ins: Any, outs: Any, ts: Any) -> Any:
        calls[0] += 1
        return old.fn(ins, outs, ts)

    fdef.jvp_rule = type(old)(counting, old.provider)
    yield calls
    fdef.jvp_rule = old


def test_jvp_runs_each_rule_once_per_node_not_per_element(counted_mul2: list[int]) -> None:
    x = RNG.standard_normal(1000)
    _, t = ghf.jvp(lambda x: ((x * x) * x).sum(), (x,), (np.ones(1000),))
    assert counted_mul2[0] == 2  # two Mul2 nodes, each once: no Jacobian, no basis loop
    np.testing.assert_allclose(t.d, (3 * x * x).sum())


def test_forward_plan_pushes_several_tangents_and_zeros_where_nothing_depends() -> None:
    x = gh.Variable([1.0, 2.0], need_grad=True)
    c = gh.Variable([5.0, 6.0])
    y, z = x * x * c, c * 2.0
    push = engine.forward_plan([y, z, x], [x])
    for v in ([1.0, 0.0], [0.0, 1.0]):
        ty, tz, tx = push([gh.Variable(v)])
        np.testing.assert_allclose(ty.d, 2 * np.array([1.0, 2.0]) * np.array([5.0, 6.0]) * v)
        np.testing.assert_array_equal(tz.d, [0.0, 0.0])  # z does not depend on x
        np.testing.assert_array_equal(tx.d, v)  # an output that is an input: its own tangent


def test_forward_tangents_recomputes_dropped_intermediates() -> None:
    # x * x is dropped after Sum recorded it and Sum saves nothing: its value is recomputed
    x = gh.Variable([1.0, 2.0, 3.0], need_grad=True)
    y = ((x * x).sum() * (x * x).sum()).reshape((1,))
    (t,) = engine.forward_tangents([y], [x], [gh.Variable([1.0, 1.0, 1.0])])
    np.testing.assert_allclose(t.d, [2 * 14.0 * 2 * 6.0])


def test_forward_tangents_bad_arguments() -> None:
    x = gh.Variable([1.0, 2.0], need_grad=True)
    y = x * x
    with pytest.raises(TypeError, match=r"forward_tangents: outputs\[0\] must be a Variable"):
        engine.forward_tangents([np.ones(2)], [x], [np.ones(2)])
    with pytest.raises(ValueError, match="1 tangents for 2 inputs"):
        engine.forward_tangents([y], [x, x], [np.ones(2)])
    with pytest.raises(ValueError, match=r"tangents\[0\] has shape \(3,\) but the input has"):
        engine.forward_tangents([y], [x], [np.ones(3)])


# -- a function without a JVP rule: the backward rule is transposed ------------------------------

CUBE_PLUGIN = """
import gradhub

def cube(xp, x):
    return x * x * x

def cube_bw(gy, inputs, in_shapes, outputs, out_shapes):
    x = inputs[0]
    return [gy[0] * x * x * 3.0]

def cube_jvp(inputs, outputs, tangents):
    x = inputs[0]
    return (tangents[0] * x * x * 3.0,)

@gradhub.hookimpl
def gradhub_add_functions(register):
    register.function("CubeNoJvp", cube, rule=cube_bw, need_inputs=(0,), need_outputs=())
    register.function("CubeJvp", cube, rule=cube_bw, need_inputs=(0,), need_outputs=(),
                      jvp=cube_jvp)
    register.function("CubeHooked", cube, rule=cube_bw, need_inputs=(0,), need_outputs=())

@gradhub.hookimpl
def gradhub_add_jvp_rules(register):
    register.jvp_rule("CubeHooked", cube_jvp)
"""


@pytest.fixture
def cube_plugin(fresh_plugins: None) -> Iterator[None]:
    mod = types.ModuleType("cube_jvp_plugin")
    exec(CUBE_PLUGIN, mod.__dict__)
    plugins.load_plugins(extra=[("cube_jvp_plugin", mod)])
    yield


def _tangents_of(name: str, x: np.ndarray, v: np.ndarray) -> Any:
    def f(x: Any) -> Any:
        return call("Sum", call(name, call(name, x) + 1.0))

    return ghf.jvp(f, (x,), (v,))[1]


def test_a_function_without_a_rule_works_by_transposition_with_the_same_result(
    cube_plugin: None,
) -> None:
    assert REGISTRY.get("CubeNoJvp").jvp_rule is None
    assert REGISTRY.get("CubeJvp").jvp_rule is not None
    assert REGISTRY.get("CubeHooked").jvp_rule is not None  # from gradhub_add_jvp_rules
    x, v = RNG.uniform(0.5, 1.0, 5), RNG.standard_normal(5)
    by_transposition = _tangents_of("CubeNoJvp", x, v)
    native = _tangents_of("CubeJvp", x, v)
    hooked = _tangents_of("CubeHooked", x, v)
    expected = (3 * (x**3 + 1) ** 2 * 3 * x**2 * v).sum()
    np.testing.assert_allclose(native.d, expected, rtol=1e-12)
    np.testing.assert_allclose(by_transposition.d, native.d, rtol=1e-12)
    np.testing.assert_allclose(hooked.d, native.d, rtol=1e-12)
    rows = {r["function"]: r for r in registry_table()}
    assert rows["CubeNoJvp"]["jvp"] == "transposed"
    assert rows["CubeJvp"]["jvp"] == "native"
    assert rows["Mul2"]["jvp"] == "native"
    assert rows["Sign"]["jvp"] == "-"


def test_transposition_needs_a_recorded_backward_rule(cube_plugin: None) -> None:
    x = gh.Variable([1.0, 2.0], need_grad=False)  # the call records no rule
    y = call("CubeNoJvp", x)
    with pytest.raises(BackwardRuleError, match=r"forward mode: CubeNoJvp \(from .*\) has no JVP"):
        engine.forward_tangents([y], [x], [np.ones(2)])
    z = call("CubeJvp", x)  # a native rule needs none
    np.testing.assert_allclose(engine.forward_tangents([z], [x], [np.ones(2)])[0].d, [3.0, 12.0])


def test_compositions_to_third_order_with_and_without_rules(cube_plugin: None) -> None:
    x = RNG.uniform(0.5, 1.0, 3)

    def f(name: str) -> Callable[..., Any]:
        return lambda x: (call(name, x) * x).sum()  # sum x^4: H = diag(12 x^2)

    for name in ("CubeJvp", "CubeNoJvp"):
        hess = ghf.jacfwd(ghf.jacrev(f(name)))(x)
        np.testing.assert_allclose(hess.d, np.diag(12 * x**2), rtol=1e-12)
        third = ghf.jacfwd(ghf.jacfwd(ghf.jacrev(f(name))))(x)
        expected = np.zeros((3, 3, 3))
        for i in range(3):
            expected[i, i, i] = 24 * x[i]
        np.testing.assert_allclose(third.d, expected, rtol=1e-12, atol=1e-12)
        _, (hv,) = ghf.hvp(f(name), (x,), (np.ones(3),))  # jvp of grad
        np.testing.assert_allclose(hv.d, 12 * x**2, rtol=1e-12)


def test_float32_stays_float32() -> None:
    x = np.array([1.0, 2.0], np.float32)
    y, t = ghf.jvp(lambda x: (x * x / (x + 1.0)) ** 2.0, (x,), (np.ones(2, np.float32),))
    assert y.dtype == np.float32 and t.dtype == np.float32
    hess = ghf.hessian(lambda x: (x**3.0).sum())(x)
    assert hess.dtype == np.float32
    np.testing.assert_allclose(hess.d, np.diag(6 * x), rtol=1e-6)


# -- bad registrations and bad rules -------------------------------------------------------------


def _load_plugin(code: str, name: str) -> list[Any]:
    mod = types.ModuleType(name)
    exec(code, mod.__dict__)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plugins.load_plugins(extra=[(name, mod)])
    return [w for w in caught if issubclass(w.category, PluginLoadWarning)]


def test_a_rule_for_an_unknown_function_fails_the_plugin(fresh_plugins: None) -> None:
    code = (
        "import gradhub\n"
        "@gradhub.hookimpl\n"
        "def gradhub_add_jvp_rules(register):\n"
        "    register.jvp_rule('Mull2', lambda i, o, t: t)\n"
    )
    (w,) = _load_plugin(code, "typo_jvp")
    msg = str(w.message)
    assert "'typo_jvp'" in msg
    assert "JVP rule for unknown function 'Mull2' (did you mean 'Mul2'" in msg


def test_a_duplicate_rule_needs_override(fresh_plugins: None) -> None:
    code = (
        "import gradhub\n"
        "@gradhub.hookimpl\n"
        "def gradhub_add_jvp_rules(register):\n"
        "    register.jvp_rule('Neg', lambda i, o, t: (-t[0],){override})\n"
    )
    (w,) = _load_plugin(code.format(override=""), "dup_jvp")
    assert "duplicate JVP rule for 'Neg': it already has one from gradhub" in str(
        w.message
    ) and "pass override=True" in str(w.message)
    assert REGISTRY.get("Neg").jvp_rule.provider.distribution == "gradhub"  # untouched
    assert not _load_plugin(code.format(override=", override=True"), "over_jvp")
    rule = REGISTRY.get("Neg").jvp_rule
    assert rule.provider.module == "over_jvp"
    assert any("JVP rule of gradhub" in a for a, _ in REGISTRY.get("Neg").overrides)
    x = gh.Variable([1.0], need_grad=True)
    np.testing.assert_array_equal(engine.forward_tangents([-x], [x], [np.ones(1)])[0].d, [-1.0])


def test_a_plugin_failing_later_takes_its_jvp_rules_back(fresh_plugins: None) -> None:
    code = (
        "import gradhub\n"
        "@gradhub.hookimpl\n"
        "def gradhub_add_jvp_rules(register):\n"
        "    register.jvp_rule('Neg', lambda i, o, t: (t[0],), override=True)\n"
        "    register.jvp_rule('NoSuch', lambda i, o, t: (t[0],))\n"
    )
    (w,) = _load_plugin(code, "half_jvp")
    assert "unknown function 'NoSuch'" in str(w.message)
    assert REGISTRY.get("Neg").jvp_rule.provider.distribution == "gradhub"


def test_registration_errors_name_the_function_and_the_problem() -> None:
    with pytest.raises(RegistrationError, match=r"register_jvp_rule\('Sign'\): Sign is non-"):
        register_jvp_rule("Sign", lambda i, o, t: t)
    with pytest.raises(
        RegistrationError, match=r"must take \(inputs, outputs, tangents, \*\*attrs"
    ):
        register_jvp_rule("Neg", lambda i, o: o, override=True)
    with pytest.raises(RegistrationError, match="the JVP rule must be callable, got int"):
        register_jvp_rule("Neg", 3, override=True)  # type: ignore[arg-type]
    with pytest.raises(RegistrationError, match="already has a JVP rule from gradhub"):
        register_jvp_rule("Neg", lambda i, o, t: t)
    with pytest.raises(gh.FunctionNotFoundError, match="no function 'NoSuchFn'"):
        register_jvp_rule("NoSuchFn", lambda i, o, t: t)


@pytest.fixture
def neg_rule() -> Iterator[None]:
    fdef = REGISTRY.get("Neg")
    old, overrides = fdef.jvp_rule, list(fdef.overrides)
    yield
    fdef.jvp_rule, fdef.overrides[:] = old, overrides


def test_bad_rule_results_are_errors_naming_the_function(neg_rule: None) -> None:
    x = gh.Variable([1.0, 2.0], need_grad=True)
    y = -x
    for rule, message in (
        (lambda i, o, t: t[0], r"JVP rule of Neg \(from .*\) returned Variable; it must return a"),
        (lambda i, o, t: (t[0], t[0]), r"returned 2 values; it must return a sequence of 1"),
        (lambda i, o, t: (t[0].sum(),), r"a tangent of shape \(\) for output 0, which has shape"),
        (lambda i, o, t: (1 / 0,), r"JVP rule of Neg \(from .*\) raised ZeroDivisionError"),
        (lambda i, o, t: (np.ones(2),), "returned ndarray for output 0; a Variable is expected"),
    ):
        register_jvp_rule("Neg", rule, override=True)
        with pytest.raises(BackwardRuleError, match=message):
            engine.forward_tangents([y], [x], [np.ones(2)])


def test_the_audit_catches_a_wrong_jvp_rule(neg_rule: None) -> None:
    from gradhub.audit import check_function

    register_jvp_rule("Neg", unary_jvp(lambda t, x, y: t), override=True)
    r = check_function(REGISTRY.get("Neg"), "cpu", 1, record=False)
    assert r.failed == 1 and "JVP rule of Neg" in r.error
    assert "differs from central differences" in r.error


def test_show_registry_has_a_jvp_column() -> None:
    out = io.StringIO()
    show_registry(out)
    header, _, *rows = out.getvalue().splitlines()
    assert header.split()[-2:] == ["jvp", "batching"]
    mul2 = next(r for r in rows if r.startswith("Mul2 "))
    assert mul2.split()[-2] == "native"


def test_the_audit_catches_a_rule_that_reads_the_tangents_array(neg_rule: None) -> None:
    """A rule computing with the tangent's array instead of registered functions is right for
    one tangent but not for a batch of them (it sees one element): ``check_jvp`` pushes a
    batch of tangents as ``jacfwd`` and ``hessian`` do and compares with one at a time."""
    from gradhub.audit import check_batched_tangents, check_function

    def reads_data(t: Any, x: Any, y: Any) -> Any:
        return gh.Variable(-np.asarray(t._data), need_grad=False)

    register_jvp_rule("Neg", unary_jvp(reads_data), override=True)
    fdef = REGISTRY.get("Neg")
    with pytest.raises(AssertionError, match=r"Neg\[.*batched tangents: output 0 differs from"):
        check_batched_tangents(fdef, samples_of(fdef)[0], REGISTRY.device_type("cpu").get(0))
    r = check_function(fdef, "cpu", 1, record=False)
    assert r.failed == 1 and "differs from the tangents pushed one at a time" in r.error


def test_a_jvp_rule_calling_a_function_without_a_batching_rule_makes_jacfwd_loop() -> None:
    """Regression: a JVP rule whose own calls reach the loop fallback under ``refuse_loop``
    raised ``BackwardRuleError: the JVP rule of ... raised LoopRefused`` instead of letting
    ``jacfwd`` fall back to one tangent at a time."""
    from gradhub import batching

    assert issubclass(batching.LoopRefused, BackwardRuleError)
    fdef = REGISTRY.get("Neg")
    saved = fdef.batch_rule
    fdef.batch_rule = None  # the rule of Neg' calls Neg on the tangent
    try:
        x = RNG.standard_normal(3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            j = ghf.jacfwd(lambda z: -(z * z))(x)
    finally:
        fdef.batch_rule = saved
    np.testing.assert_allclose(j.d, np.diag(-2 * x), rtol=1e-15)
