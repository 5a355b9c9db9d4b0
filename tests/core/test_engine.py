"""The grad engine (CONTRACT section 1): every ``backward``/``grad`` option against hand-derived
values, minimal backward paths, graph recording, first-order-only rules, rule overrides, static
re-execution and n-th derivatives.

Only the core functions are used (the function library is not loaded); functions the tests need
(rule-call counters, a first-order-only rule) come from a plugin module defined here.
"""

from __future__ import annotations

import io
import types
from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import graph, plugins
from gradhub.errors import BackwardRuleError, FunctionNotFoundError, RegistrationError
from gradhub.ops import call

# -- a test plugin ---------------------------------------------------------------------------------

CALLS: list[str] = []


def _copy(xp: Any, x: Any, tag: str = "") -> Any:
    return x.copy()


def _probe_bw(gy, inputs, in_shapes, outputs, out_shapes, tag):  # type: ignore[no-untyped-def]
    CALLS.append(tag)
    return [gy[0] * 1.0]  # a registered function: differentiable, and recorded if recording


def _square(xp: Any, x: Any) -> Any:
    return x * x


def _fo_square_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    return [gy[0] * (inputs[0] * 2.0)]


def _split_int(xp: Any, x: Any) -> Any:
    return x.copy(), xp.floor(x).astype(np.int64)


def _split_int_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    return [gy[0]]


def _add_functions(register: Any) -> None:
    register.function(
        "Probe", _copy, attrs={"tag": ""}, rule=_probe_bw, need_inputs=(), need_outputs=()
    )
    register.function(
        "FOSquare",
        _square,
        rule=_fo_square_bw,
        need_inputs=(0,),
        need_outputs=(),
        first_order_only=True,
    )
    register.function(
        "SplitInt", _split_int, n_outputs=2, rule=_split_int_bw, need_inputs=(), need_outputs=()
    )
    register.function("NoRule", _copy, attrs={"tag": ""})


def _plugin(**hooks: Callable[..., Any]) -> types.ModuleType:
    mod = types.ModuleType("engine_test_plugin")
    for name, fn in hooks.items():
        setattr(mod, name, gh.hookimpl(fn))
    return mod


@pytest.fixture(autouse=True)
def _core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The built-in functions plus this file's test plugin; the registry is reset afterwards."""
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    plugins.reset()
    plugins.load_plugins(extra=[("engine_test", _plugin(gradhub_add_functions=_add_functions))])
    CALLS.clear()
    yield
    plugins.reset()


def probe(x: Any, tag: str) -> gh.Variable:
    return call("Probe", x, tag=tag)


def var(a: Any, **kw: Any) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), **kw)


def nodes_created(fn: Callable[[], Any]) -> int:
    """How many graph nodes ``fn()`` records."""
    before = next(graph._seq)
    fn()
    return next(graph._seq) - before - 1


# -- backward --------------------------------------------------------------------------------------


def test_backward_non_scalar_uses_ones() -> None:
    x = var([1.0, 2.0, 3.0])
    y = x * x * 3.0  # dy/dx = 6x, seed ones
    y.backward()
    np.testing.assert_allclose(x.g, [6.0, 12.0, 18.0])


@pytest.mark.parametrize(
    ("grad", "expected"),
    [
        (None, [6.0, 12.0]),
        (2.0, [12.0, 24.0]),
        (np.array([1.0, -1.0]), [6.0, -12.0]),
        ([0.5, 2.0], [3.0, 24.0]),
        ("variable", [-6.0, 0.0]),
    ],
)
def test_backward_incoming_gradient_forms(grad: Any, expected: list[float]) -> None:
    x = var([1.0, 2.0])
    y = x * x * 3.0
    if isinstance(grad, str):
        grad = var([-1.0, 0.0], need_grad=False)
    y.backward(grad)
    np.testing.assert_allclose(x.g, expected)


def test_backward_accumulates_and_cleargrad_resets() -> None:
    x = var([1.0])
    y = x * 2.0
    assert x.g is None
    y.backward()
    np.testing.assert_array_equal(x.g, [2.0])
    y.backward()
    np.testing.assert_array_equal(x.g, [4.0])  # accumulated, as in chainer
    x.cleargrad()
    assert x.g is None
    y.backward()
    np.testing.assert_array_equal(x.g, [2.0])


def test_backward_sums_over_every_use_of_a_leaf() -> None:
    x = var([3.0])
    y = x * x + x * 4.0 - x / 2.0  # 2x + 4 - 1/2
    y.backward()
    np.testing.assert_allclose(x.g, [2 * 3.0 + 4.0 - 0.5])


def test_backward_skips_leaves_without_need_grad() -> None:
    x = var([1.0, 2.0])
    c = var([5.0, 7.0], need_grad=False)
    (x * c).sum().backward()
    np.testing.assert_array_equal(x.g, [5.0, 7.0])
    assert c.g is None


def test_backward_intermediate_grad_only_with_retain_grad() -> None:
    x = var([1.0, 2.0])
    h = x * 3.0
    y = (h * h).sum()
    y.backward()
    assert h.g is None and y.g is None
    np.testing.assert_allclose(x.g, 18.0 * x.d)
    x.cleargrad()
    y.backward(retain_grad=True)
    np.testing.assert_allclose(h.g, 2.0 * h.d)
    np.testing.assert_array_equal(y.g, 1.0)  # the output keeps its seed
    np.testing.assert_allclose(x.g, 18.0 * x.d)


def test_backward_loss_scale_scales_default_seed_only() -> None:
    x = var([1.0, 2.0])
    y = x * x
    y.backward(loss_scale=8.0)
    np.testing.assert_allclose(x.g, 8.0 * 2.0 * x.d)  # stays scaled
    x.cleargrad()
    y.backward(np.array([1.0, 1.0]), loss_scale=8.0)  # an explicit gradient is not scaled
    np.testing.assert_allclose(x.g, 2.0 * x.d)


def test_backward_create_graph_makes_grad_differentiable() -> None:
    x = var([0.5, 2.0])
    y = (x**3.0).sum()
    y.backward(create_graph=True)
    g = x.grad_var
    assert g is not None and g.creator is not None and g.need_grad
    np.testing.assert_allclose(g.d, 3.0 * x.d**2)
    (gg,) = gh.grad([g], [x])
    np.testing.assert_allclose(gg.d, 6.0 * x.d)
    x.cleargrad()
    y.backward()
    assert x.grad_var is not None and x.grad_var.creator is None
    assert not x.grad_var.need_grad


def test_leaf_gradients_are_independent_writable_arrays() -> None:
    a = var([1.0, 2.0])
    b = var([3.0, 4.0])
    seed = np.ones(2)
    (a + b).backward(seed)
    assert not np.shares_memory(a.g, seed) and not np.shares_memory(b.g, seed)
    assert not np.shares_memory(a.g, b.g)
    a.g *= 0.5  # an in-place update (weight decay, clipping) touches only a.g
    np.testing.assert_array_equal(b.g, [1.0, 1.0])
    c = var([1.0, 2.0])
    c.sum().backward()
    c.g *= 0.5
    np.testing.assert_array_equal(c.g, [0.5, 0.5])


def test_backward_on_leaf_gives_seed() -> None:
    x = var([1.0, 2.0])
    x.backward(np.array([3.0, 4.0]))
    np.testing.assert_array_equal(x.g, [3.0, 4.0])


# -- grad: outputs, seeds, results -----------------------------------------------------------------


def test_grad_returns_one_result_per_input_and_leaves_g_alone() -> None:
    x0 = var([0.0, 1.0])
    x1 = var([2.0, 3.0])
    x0.g = np.array([100.0, 100.0])
    y = x0 * 2.0 + x1 * 3.0
    z = y * 2.0
    g0, g1 = gh.grad([z], [x0, x1])
    np.testing.assert_array_equal(g0.d, [4.0, 4.0])
    np.testing.assert_array_equal(g1.d, [6.0, 6.0])
    np.testing.assert_array_equal(x0.g, [100.0, 100.0])  # untouched
    assert x1.g is None


def test_grad_sums_over_outputs() -> None:
    x = var([1.0, 2.0])
    y1 = x * x
    y2 = (x * 3.0).sum()
    (g,) = gh.grad([y1, y2], [x])
    np.testing.assert_allclose(g.d, 2.0 * x.d + 3.0)


@pytest.mark.parametrize(
    ("grad_outputs", "expected"),
    [
        (None, [2.0, 4.0]),
        (3.0, [6.0, 12.0]),
        ([3.0], [6.0, 12.0]),
        (np.array([1.0, -2.0]), [2.0, -8.0]),
        ([np.array([0.5, 0.5])], [1.0, 2.0]),
        ([None], [2.0, 4.0]),
    ],
)
def test_grad_outputs_forms(grad_outputs: Any, expected: list[float]) -> None:
    x = var([1.0, 2.0])
    (g,) = gh.grad([x * x], [x], grad_outputs)
    np.testing.assert_allclose(g.d, expected)


def test_grad_outputs_per_output_with_none_entries() -> None:
    x = var([1.0, 2.0])
    y1 = x * 2.0
    y2 = x * 5.0
    (g,) = gh.grad([y1, y2], [x], [np.array([1.0, 10.0]), None])
    np.testing.assert_allclose(g.d, [2.0 + 5.0, 20.0 + 5.0])


def test_grad_outputs_variable_is_differentiable() -> None:
    x = var([1.0, 2.0])
    v = var([3.0, -1.0])
    (g,) = gh.grad([x * x * x], [x], [v], create_graph=True)  # g = 3 x^2 v
    np.testing.assert_allclose(g.d, 3.0 * x.d**2 * v.d)
    gx, gv = gh.grad([g.sum()], [x, v])
    np.testing.assert_allclose(gx.d, 6.0 * x.d * v.d)
    np.testing.assert_allclose(gv.d, 3.0 * x.d**2)


def test_grad_inputs_are_added() -> None:
    x0 = var([1.0, 2.0])
    x1 = var([5.0])
    y = x0 * 2.0
    g0, g1 = gh.grad([y], [x0, x1], grad_inputs=[np.array([10.0, 20.0]), var([7.0])])
    np.testing.assert_allclose(g0.d, [12.0, 22.0])
    np.testing.assert_allclose(g1.d, [7.0])  # unreachable, but grad_inputs still counts
    g0, g1 = gh.grad([y], [x0, x1], grad_inputs=[None, None])
    np.testing.assert_allclose(g0.d, [2.0, 2.0])
    np.testing.assert_allclose(g1.d, [0.0])


@pytest.mark.parametrize("create_graph", [True, False])
def test_grad_create_graph(create_graph: bool) -> None:
    x = var([1.0, 2.0])
    (g,) = gh.grad([(x**3.0).sum()], [x], create_graph=create_graph)
    np.testing.assert_allclose(g.d, 3.0 * x.d**2)
    assert (g.creator is not None) is create_graph
    assert g.need_grad is create_graph
    (gg,) = gh.grad([g], [x])
    np.testing.assert_allclose(gg.d, 6.0 * x.d if create_graph else 0.0)


def test_grad_set_grad() -> None:
    x = var([1.0, 2.0])
    x.g = np.array([9.0, 9.0])
    (g,) = gh.grad([x * 4.0], [x], set_grad=True)
    np.testing.assert_array_equal(x.g, [4.0, 4.0])  # replaced, not accumulated
    assert x.grad_var is g


@pytest.mark.parametrize("create_graph", [True, False])
def test_grad_retain_grad_stores_intermediates_and_ignores_set_grad(create_graph: bool) -> None:
    x = var([1.0, 2.0])
    h = x * 3.0
    y = h * h
    (g,) = gh.grad([y], [x], retain_grad=True, set_grad=True, create_graph=create_graph)
    assert (h.grad_var.creator is not None) is create_graph
    np.testing.assert_allclose(g.d, 18.0 * x.d)
    np.testing.assert_allclose(h.g, 2.0 * h.d)
    np.testing.assert_array_equal(y.g, [1.0, 1.0])
    assert x.g is None  # set_grad is ignored with retain_grad (chainer)


def test_grad_loss_scale_scales_default_seeds_and_results_stay_scaled() -> None:
    x = var([1.0, 2.0])
    y1 = x * x
    y2 = x * 3.0
    (g,) = gh.grad([y1, y2], [x], loss_scale=4.0)
    np.testing.assert_allclose(g.d, 4.0 * (2.0 * x.d + 3.0))
    (g,) = gh.grad([y1, y2], [x], [np.ones(2), None], loss_scale=4.0)
    np.testing.assert_allclose(g.d, 2.0 * x.d + 4.0 * 3.0)


def test_grad_unreachable_modes() -> None:
    x = var([1.0, 2.0])
    u = var([[1.0, 2.0, 3.0]])
    y = x * 2.0
    g, gu = gh.grad([y], [x, u])
    np.testing.assert_array_equal(gu.d, np.zeros((1, 3)))
    assert gu.dtype == u.dtype
    g, gu = gh.grad([y], [x, u], unreachable="none")
    assert gu is None
    np.testing.assert_array_equal(g.d, [2.0, 2.0])
    with pytest.raises(ValueError, match=r"grad: inputs\[1\] is not reachable"):
        gh.grad([y], [x, u], unreachable="error")
    with pytest.raises(ValueError, match="unreachable must be one of"):
        gh.grad([y], [x], unreachable="ignore")


def test_grad_output_without_graph_gives_unreachable() -> None:
    x = var([1.0, 2.0])
    with gh.no_grad():
        y = x * 2.0
    assert not y.need_grad and y.creator is None
    (g,) = gh.grad([y], [x], unreachable="none")
    assert g is None


def test_grad_with_respect_to_intermediates_and_outputs() -> None:
    x = var([1.0, 2.0])
    h = x * 3.0
    y = h * h
    gh_, gx, gy = gh.grad([y], [h, x, y])
    np.testing.assert_allclose(gh_.d, 2.0 * h.d)
    np.testing.assert_allclose(gx.d, 18.0 * x.d)
    np.testing.assert_array_equal(gy.d, [1.0, 1.0])
    (gx2,) = gh.grad([x], [x])
    np.testing.assert_array_equal(gx2.d, [1.0, 1.0])


def test_grad_same_input_twice() -> None:
    x = var([2.0])
    a, b = gh.grad([x * x], [x, x])
    np.testing.assert_array_equal(a.d, [4.0])
    np.testing.assert_array_equal(b.d, [4.0])


def test_grad_through_integer_output_of_a_node() -> None:
    """A float function of a differentiable node's integer output: no gradient flows there."""
    x = var([1.5, 2.5])
    a, b = call("SplitInt", x)
    assert a.need_grad and not b.need_grad and b.dtype == np.int64
    y = (a * b).sum()  # float64 * int64 -> float64
    (g,) = gh.grad([y], [x])
    np.testing.assert_allclose(g.d, [1.0, 2.0])
    y.backward()
    np.testing.assert_allclose(x.g, [1.0, 2.0])


# -- minimal paths and recording -------------------------------------------------------------------


def _side_branch_graph() -> tuple[gh.Variable, ...]:
    u = var([1.0, 2.0])
    w = var([3.0, 4.0])
    x = probe(u, "upstream")  # upstream of the target x: not on a path from x
    s = probe(w, "side")  # side branch into the output: not on a path from x
    y = probe(x, "on-path-1") * s
    z = probe(y, "on-path-2")
    probe(x, "dead-end")  # consumes x but does not lead to z
    return u, w, x, s, z


def test_grad_runs_rules_only_on_paths_from_inputs_to_outputs() -> None:
    u, w, x, s, z = _side_branch_graph()
    (gx,) = gh.grad([z], [x])
    assert sorted(CALLS) == ["on-path-1", "on-path-2"]
    np.testing.assert_array_equal(gx.d, s.d)
    CALLS.clear()
    gu, gx = gh.grad([z], [u, x])
    assert sorted(CALLS) == ["on-path-1", "on-path-2", "upstream"]
    np.testing.assert_array_equal(gu.d, w.d)
    CALLS.clear()
    (gw,) = gh.grad([z], [w])
    assert sorted(CALLS) == ["on-path-2", "side"]
    np.testing.assert_array_equal(gw.d, u.d)


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_with_respect_to_leaves_prunes_only_when_a_leaf_is_left_out(
    create_graph: bool,
) -> None:
    # every leaf needing a gradient is a target: every reached rule is on a path (no pruning
    # pass); one such leaf left out: its side branch is pruned
    u, w, _x, _s, z = _side_branch_graph()
    gu, gw = gh.grad([z], [u, w], create_graph=create_graph)
    assert sorted(CALLS) == ["on-path-1", "on-path-2", "side", "upstream"]
    np.testing.assert_array_equal(gu.d, w.d)
    np.testing.assert_array_equal(gw.d, u.d)
    CALLS.clear()
    (gu,) = gh.grad([z], [u], create_graph=create_graph)
    assert sorted(CALLS) == ["on-path-1", "on-path-2", "upstream"]
    np.testing.assert_array_equal(gu.d, w.d)
    CALLS.clear()
    (gu, gu2) = gh.grad([z], [u, u], create_graph=create_graph)  # a target given twice
    assert sorted(CALLS) == ["on-path-1", "on-path-2", "upstream"]
    np.testing.assert_array_equal(gu2.d, w.d)


def test_backward_runs_every_rule_reaching_a_leaf() -> None:
    u, w, _x, _s, z = _side_branch_graph()
    z.backward()
    assert sorted(CALLS) == ["on-path-1", "on-path-2", "side", "upstream"]
    np.testing.assert_array_equal(u.g, w.d)
    np.testing.assert_array_equal(w.g, u.d)


def test_rules_do_not_run_for_constant_subgraphs() -> None:
    x = var([1.0])
    c = probe(var([2.0], need_grad=False), "constant")
    assert not c.need_grad
    (x * c).backward()
    assert CALLS == []
    np.testing.assert_array_equal(x.g, [2.0])


@pytest.mark.parametrize("how", ["backward", "grad"])
def test_nothing_is_recorded_without_create_graph(how: str) -> None:
    x = var([1.0, 2.0])
    y = probe((probe(x, "a") * x).sum(), "b")  # probe rules call MulScalar
    if how == "backward":
        assert nodes_created(lambda: y.backward()) == 0
        assert x.grad_var.creator is None
        assert nodes_created(lambda: y.backward()) == 0  # accumulating records nothing either
    else:
        res: list[Any] = []
        assert nodes_created(lambda: res.extend(gh.grad([y], [x], create_graph=False))) == 0
        assert res[0].creator is None
    assert sorted(CALLS) == (["a", "a", "b", "b"] if how == "backward" else ["a", "b"])


def test_create_graph_records_the_backward_pass() -> None:
    x = var([1.0, 2.0])
    y = probe((probe(x, "a") * x).sum(), "b")
    res: list[Any] = []
    assert nodes_created(lambda: res.extend(gh.grad([y], [x]))) > 0
    assert res[0].creator is not None


def test_no_grad_records_nothing() -> None:
    x = var([1.0, 2.0])
    with gh.no_grad():
        assert not gh.is_recording()
        assert nodes_created(lambda: (x * x + 1.0).sum()) == 0
        y = x * x
    assert gh.is_recording()
    assert y.creator is None and not y.need_grad


# -- first-order-only rules ------------------------------------------------------------------------


def test_first_order_only_rule_gives_first_derivative() -> None:
    x = var([1.0, -3.0])
    y = call("FOSquare", x)
    (g,) = gh.grad([y], [x], create_graph=False)
    np.testing.assert_allclose(g.d, 2.0 * x.d)
    y.backward()
    np.testing.assert_allclose(x.g, 2.0 * x.d)


@pytest.mark.parametrize("chain", [False, True])
def test_first_order_only_rule_refuses_second_derivative(chain: bool) -> None:
    x = var([1.0, -3.0])
    y = call("FOSquare", x)
    if chain:  # a gradient through it that also depends on the seed path
        y = y * y * 0.5
    (g,) = gh.grad([y.sum()], [x])  # create_graph=True
    expected = 2.0 * x.d if not chain else 2.0 * x.d**3
    np.testing.assert_allclose(g.d, expected)
    with pytest.raises(BackwardRuleError, match=r"FOSquare.*first-order-only"):
        gh.grad([g.sum()], [x])
    with pytest.raises(BackwardRuleError, match="first-order-only"):
        g.sum().backward()
    with pytest.raises(BackwardRuleError, match="re-executed"):
        g.forward()


def test_first_order_only_status_in_registry() -> None:
    row = next(r for r in gh.registry_table() if r["function"] == "FOSquare")
    assert row["status"].startswith("first-order-only")
    row = next(r for r in gh.registry_table() if r["function"] == "NoRule")
    assert row["rule"] == "none"


# -- gh.register -----------------------------------------------------------------------------------


def _neg_rule(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    CALLS.append("my-neg")
    return [gy[0] * -1.0]


def test_register_needs_override_for_another_providers_rule() -> None:
    with pytest.raises(RegistrationError) as e:
        gh.register("Neg", _neg_rule)
    msg = str(e.value)
    assert "Neg" in msg and "gradhub 0.1.0" in msg and __name__ in msg and "override=True" in msg
    row = next(r for r in gh.registry_table() if r["function"] == "Neg")
    assert row["overrides"] == [] and row["rule_provider"].startswith("gradhub")


@pytest.mark.parametrize("create_graph", [False, True])
def test_register_override_is_used_and_recorded(create_graph: bool) -> None:
    gh.register("Neg", _neg_rule, override=True)
    x = var([1.0, 2.0])
    (g,) = gh.grad([(-x) * x], [x], create_graph=create_graph)  # -2x
    np.testing.assert_allclose(g.d, -2.0 * x.d)
    assert CALLS == ["my-neg"]  # the override replaces the fast first-order path too
    row = next(r for r in gh.registry_table() if r["function"] == "Neg")
    assert row["rule_provider"] == f"module {__name__}"
    assert row["overrides"] == [f"gradhub 0.1.0 -> module {__name__}"]
    assert row["status"] == "unverified"
    out = io.StringIO()
    gh.show_registry(file=out)
    line = next(ln for ln in out.getvalue().splitlines() if ln.startswith("Neg "))
    assert f"module {__name__}" in line
    gh.register("Neg", _neg_rule)  # the same provider again needs no override


def test_register_errors() -> None:
    with pytest.raises(FunctionNotFoundError, match="NoSuchFunction"):
        gh.register("NoSuchFunction", _neg_rule)
    with pytest.raises(RegistrationError, match="must be callable"):
        gh.register("Neg", "not a function", override=True)  # type: ignore[arg-type]


def test_register_a_rule_for_a_function_without_one() -> None:
    x = var([1.0, 2.0])
    with pytest.raises(BackwardRuleError, match=r"NoRule.*has no backward rule"):
        call("NoRule", x).sum().backward()
    gh.register("NoRule", lambda gy, i, ish, o, osh, tag: [gy[0] * 1.0])
    call("NoRule", x).sum().backward()
    np.testing.assert_array_equal(x.g, [1.0, 1.0])


# -- static re-execution ---------------------------------------------------------------------------


def test_forward_reexecutes_from_new_leaf_data() -> None:
    x = var([1.0, 2.0])
    c = var([10.0, 20.0], need_grad=False)
    h = x * 3.0 + 1.0
    y = (h * h + c).sum()
    x.d = np.array([2.0, -1.0])
    c.d = np.array([0.0, 1.0])
    y.forward()
    hx = 3.0 * x.d + 1.0
    np.testing.assert_allclose(h.d, hx)  # intermediates still referenced are updated
    np.testing.assert_allclose(y.d, np.sum(hx**2 + c.d))
    y.backward()  # the backward pass uses the re-executed values
    np.testing.assert_allclose(x.g, 6.0 * hx)


def test_forward_on_a_diamond_graph_and_shared_subgraphs() -> None:
    x = var([0.5])
    a = x * 2.0
    b = a * a
    y = a * b + b  # 8x^3 + 4x^2
    for v in (1.0, -2.0, 3.0):
        x.d = np.array([v])
        y.forward()
        np.testing.assert_allclose(y.d, [8 * v**3 + 4 * v**2])


def test_forward_through_a_gradient_graph() -> None:
    x = var([1.0, 2.0])
    h = x * 3.0 + 1.0
    y = (h**3.0).sum()
    (g,) = gh.grad([y], [x])  # 9 h^2
    (gg,) = gh.grad([g.sum()], [x])  # 54 h
    for new in ([2.0, -1.0], [0.0, 0.5]):
        x.d = np.array(new)
        g.forward()
        gg.forward()
        hx = 3.0 * np.array(new) + 1.0
        np.testing.assert_allclose(g.d, 9.0 * hx**2)
        np.testing.assert_allclose(gg.d, 54.0 * hx)
    x.cleargrad()
    g.sum().backward()  # backward through the re-executed gradient graph
    np.testing.assert_allclose(x.g, 54.0 * (3.0 * x.d + 1.0))


def test_forward_with_a_new_batch_size_and_constant_subgraphs() -> None:
    x = var([1.0, 2.0])
    c = var([1.0, 1.0], need_grad=False)
    c2 = c * 2.0  # a constant subgraph: re-executed too
    y = ((x * x) * c2 + x / 2.0).sum()
    x.d = np.array([1.0, 2.0, 3.0])
    c.d = np.array([1.0, 1.0, 3.0])
    y.forward()
    np.testing.assert_array_equal(c2.d, [2.0, 2.0, 6.0])
    assert y.d == pytest.approx(2 + 8 + 54 + 3.0)
    y.backward()
    np.testing.assert_allclose(x.g, 4.0 * x.d * c.d + 0.5)
    (g,) = gh.grad([y], [x])
    (gg,) = gh.grad([g.sum()], [x])
    np.testing.assert_allclose(gg.d, 4.0 * c.d)


def test_forward_on_a_leaf_is_a_no_op() -> None:
    x = var([1.0])
    x.forward()
    np.testing.assert_array_equal(x.d, [1.0])


# -- n-th derivatives ------------------------------------------------------------------------------


def test_nth_derivatives_of_x_to_the_fifth() -> None:
    xs = np.array([0.5, -1.5, 2.0])
    x = var(xs)
    expected = [5 * xs**4, 20 * xs**3, 60 * xs**2, 120 * xs, 120 + 0 * xs, 0 * xs]
    d = x**5.0
    for n, want in enumerate(expected, start=1):
        (d,) = gh.grad([d], [x])
        np.testing.assert_allclose(d.d, want, err_msg=f"derivative {n}")


def test_nth_derivatives_through_several_functions() -> None:
    xs = np.array([0.3, 1.7])
    x = var(xs)
    y = 2.0**x / x  # f = 2^x / x
    (g1,) = gh.grad([y], [x])
    (g2,) = gh.grad([g1], [x])
    ln2 = np.log(2.0)
    f = 2.0**xs / xs
    np.testing.assert_allclose(g1.d, f * (ln2 - 1 / xs))
    np.testing.assert_allclose(g2.d, f * ((ln2 - 1 / xs) ** 2 + 1 / xs**2))


# -- retain_graph=False ----------------------------------------------------------------------------


def test_retain_graph_false_frees_saved_arrays_and_refuses_a_second_pass() -> None:
    x = gh.Variable([1.0, 2.0, 3.0])
    h = x * x  # Mul2 keeps both inputs
    y = (h * 3.0).sum()
    node = h.creator
    assert node is not None and node.saved_in is not None
    y.backward(retain_graph=False)
    np.testing.assert_allclose(x.g, 6.0 * x.d)
    assert node.saved_in is None and node.saved_out is None
    with pytest.raises(BackwardRuleError, match=r"through Sum again: .*retain_graph=False"):
        y.backward()
    # forward() recomputes what was freed, and backward works again
    x.cleargrad()
    x.d = np.array([2.0, 0.5, -1.0], dtype=np.float32)
    y.forward()
    y.backward()
    np.testing.assert_allclose(x.g, 6.0 * x.d)


def test_direct_formula_path_accumulates_fan_out_and_frees_nodes() -> None:
    """One-input nodes with a one-formula rule (MulScalar, Neg) take the engine's direct path
    in first-order backward: fan-out into a recorded node and into a leaf sums correctly, and
    retain_graph=False frees each node as on the general path."""
    x = gh.Variable([0.5, -1.0, 2.0])
    h = x * 3.0  # recorded, consumed twice below
    y = ((h * 2.0) + (-h) + (x * 5.0)).sum()  # dy/dx = 3*2 - 3 + 5 = 8
    nodes = [h.creator]
    assert nodes[0] is not None and nodes[0].rule is not None
    assert nodes[0].rule.fast1 is not None
    (g,) = gh.grad([y], [x], create_graph=False, retain_graph=False)
    np.testing.assert_allclose(g.d, np.full(3, 8.0))
    assert nodes[0].saved_in is None and nodes[0].saved_out is None
    with pytest.raises(BackwardRuleError, match="retain_graph=False"):
        gh.grad([y], [x], create_graph=False)


def test_grad_retain_graph_false_frees_what_a_second_order_needs_too() -> None:
    """As in PyTorch: the gradient graph refers to the forward graph, so freeing the forward
    nodes' arrays makes differentiating the gradient again fail, clearly."""
    x = gh.Variable([0.5, -1.5])
    y = (x * x * x).sum()
    (g,) = gh.grad([y], [x], retain_graph=False)  # create_graph=True by default
    np.testing.assert_allclose(g.d, 3.0 * x.d**2)
    with pytest.raises(BackwardRuleError, match="retain_graph=False"):
        gh.grad([g.sum()], [x])
    y.forward()  # recomputes the forward graph's arrays
    (gg,) = gh.grad([g.sum()], [x])
    np.testing.assert_allclose(gg.d, 6.0 * x.d)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_default_seeds_are_fresh_ones_of_the_outputs_dtype(
    shape: tuple[int, ...], dtype: Any
) -> None:
    # the seed is built with np.array / empty+fill instead of np.ones (cheaper): same values,
    # dtype and shape, a new writable array per call, loss_scale applied
    x = gh.Variable(np.arange(1, 7, dtype=dtype)[: int(np.prod(shape))].reshape(shape))
    y = x * 1.0
    (g1,) = gh.grad([y], [x], create_graph=False, retain_grad=True)
    assert g1.d.dtype == dtype and g1.d.shape == shape
    np.testing.assert_array_equal(g1.d, np.ones(shape, dtype))
    seed = y.g
    assert seed.flags.writeable and seed.dtype == dtype and seed.shape == shape
    (g2,) = gh.grad([y], [x], create_graph=False, retain_grad=True, loss_scale=4.0)
    np.testing.assert_array_equal(g2.d, np.full(shape, 4.0, dtype))
    assert y.g is not seed
    np.testing.assert_array_equal(seed, np.ones(shape, dtype))  # the first seed is untouched


def test_sum_rule_broadcast_of_a_scalar_gradient_is_a_fresh_filled_array() -> None:
    x = gh.Variable(np.arange(6.0).reshape(2, 3))
    (g,) = gh.grad([(x * x).sum() * 3.0], [x])
    np.testing.assert_allclose(g.d, 6.0 * np.arange(6.0).reshape(2, 3))
    (gg,) = gh.grad([g.sum()], [x])
    np.testing.assert_allclose(gg.d, np.full((2, 3), 6.0))


@pytest.mark.parametrize("create_graph", [False, True])
def test_a_leaf_switched_off_after_recording_gets_no_gradient(create_graph: bool) -> None:
    # regression: the engine's direct call of one-input formulas (MulScalar) honours a leaf's
    # need_grad at backward time, as the general rule paths do
    x = gh.Variable(np.array([1.0, 2.0]))
    w = gh.Variable(np.array([3.0, 4.0]))
    y = (x * 2.0).sum() + (w * 2.0).sum()
    x.need_grad = False
    gx, gw = gh.grad([y], [x, w], create_graph=create_graph)
    np.testing.assert_array_equal(gx.d, [0.0, 0.0])
    np.testing.assert_array_equal(gw.d, [2.0, 2.0])
    y.backward()
    assert x.g is None
    np.testing.assert_array_equal(w.g, [2.0, 2.0])
