"""Memory: graphs are freed by reference counting alone (checked with weak references while the
cyclic garbage collector is off); the forward graph keeps only the arrays some backward rule
declared it needs; backward drops each gradient once its consumer has run; a 100,000-op chain runs
backward, re-executes and is freed without RecursionError. Only the core functions are loaded.
"""

from __future__ import annotations

import gc
import sys
import types
import weakref
from collections.abc import Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plugins
from gradhub.ops import call

DEEP = 100_000

# -- a test plugin: a function whose rule checks which gradients are still alive ------------------

ALIVE: list[weakref.ref[Any]] = []
CHECKS: list[bool] = []


def _copy(xp: Any, x: Any, tag: int = 0) -> Any:
    return x.copy()


def _watch_bw(gy, inputs, in_shapes, outputs, out_shapes, tag):  # type: ignore[no-untyped-def]
    # every gradient array seen by an earlier (downstream) call must be gone by now
    CHECKS.append(all(r() is None for r in ALIVE))
    ALIVE.append(weakref.ref(gy[0].d))
    return [gy[0] * 1.0]


def _add_functions(register: Any) -> None:
    register.function(
        "Watch", _copy, attrs={"tag": 0}, rule=_watch_bw, need_inputs=(), need_outputs=()
    )


@pytest.fixture(autouse=True)
def _core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    mod = types.ModuleType("memory_test_plugin")
    mod.gradhub_add_functions = gh.hookimpl(_add_functions)  # type: ignore[attr-defined]
    plugins.reset()
    plugins.load_plugins(extra=[("memory_test", mod)])
    ALIVE.clear()
    CHECKS.clear()
    yield
    plugins.reset()


@pytest.fixture
def no_gc() -> Iterator[None]:
    """Only reference counting frees objects inside the test."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def var(a: Any, **kw: Any) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), **kw)


def refs_to_graph(y: gh.Variable) -> list[weakref.ref[Any]]:
    """Weak references to every node upstream of ``y`` and to the arrays they saved (but not to
    the leaves' own data, which the leaves keep)."""
    nodes = []
    stack = [y.creator]
    seen = set()
    leaf_data = set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        nodes.append(n)
        for s in n.srcs:
            if isinstance(s, gh.Variable):
                leaf_data.add(id(s.d))
            else:
                stack.append(s)
    refs: list[weakref.ref[Any]] = [weakref.ref(n) for n in nodes]
    for n in nodes:
        for a in (n.saved_in or ()) + (n.saved_out or ()):
            if a is not None and id(a) not in leaf_data:
                refs.append(weakref.ref(a))
    return refs


# -- freeing without gc ----------------------------------------------------------------------------


@pytest.mark.usefixtures("no_gc")
def test_dropped_graph_is_freed_without_gc() -> None:
    x = var([1.0, 2.0, 3.0])
    h = x * 2.0
    y = ((h * h + x) / (h + 1.0)).sum()
    refs = refs_to_graph(y)
    intermediate = weakref.ref(h)
    assert len(refs) > 8
    del h, y
    assert intermediate() is None
    assert [r for r in refs if r() is not None] == []


@pytest.mark.usefixtures("no_gc")
def test_graph_is_freed_after_backward_and_grad() -> None:
    x = var([1.0, 2.0])
    y = (x**3.0 * x).sum()
    refs = refs_to_graph(y)
    y.backward()
    (g,) = gh.grad([y], [x], create_graph=False)
    assert x.grad_var.creator is None and g.creator is None
    del y
    assert [r for r in refs if r() is not None] == []
    np.testing.assert_allclose(x.g, 4.0 * x.d**3)


@pytest.mark.usefixtures("no_gc")
def test_gradient_graph_is_freed_with_its_results() -> None:
    x = var([1.0, 2.0])
    y = (x**3.0).sum()
    (g,) = gh.grad([y], [x])  # create_graph=True: g holds a gradient graph
    grefs = refs_to_graph(g)
    frefs = refs_to_graph(y)
    del y  # the gradient graph does not need the forward graph's output
    (gg,) = gh.grad([g.sum()], [x])
    np.testing.assert_allclose(gg.d, 6.0 * x.d)
    del g, gg
    assert [r for r in grefs + frefs if r() is not None] == []


@pytest.mark.usefixtures("no_gc")
def test_backward_create_graph_is_freed_by_cleargrad() -> None:
    """x.g of ``backward(create_graph=True)`` refers to a graph that refers to x (a cycle, as in
    PyTorch); ``cleargrad`` breaks it."""
    x = var([1.0, 2.0])
    y = (x**3.0).sum()
    y.backward(create_graph=True)
    refs = refs_to_graph(x.grad_var) + refs_to_graph(y)
    del y
    x.cleargrad()
    assert [r for r in refs if r() is not None] == []


# -- what the forward graph keeps ------------------------------------------------------------------


def test_only_declared_arrays_are_kept() -> None:
    x = var([1.0, 2.0])
    a = x * 2.0  # MulScalar: needs nothing
    b = a + 1.0  # AddScalar: needs nothing
    c = b**3.0  # PowScalar: needs its input
    d = c * b  # Mul2: needs both inputs
    e = d.sum()  # Sum: needs nothing
    assert a.creator.saved_in is None and a.creator.saved_out is None
    assert b.creator.saved_in is None
    assert c.creator.saved_in == (b.d,) and c.creator.saved_in[0] is b.d
    assert c.creator.saved_out is None
    assert d.creator.saved_in[0] is c.d and d.creator.saved_in[1] is b.d
    assert e.creator.saved_in is None


@pytest.mark.parametrize(
    ("n_in", "need_inputs", "need_outputs", "kept_in", "kept_out"),
    [
        (1, (0,), (), (0,), None),
        (1, (), (0,), None, (0,)),
        (1, None, None, (0,), (0,)),
        (2, (0, 1), (), (0, 1), None),
        (2, (1,), (), (None, 1), None),
        (2, (0,), (), (0, None), None),
        (3, (0, 1), (), (0, 1, None), None),
        (3, (), (), None, None),
    ],
)
def test_nodes_keep_what_their_rule_declares(
    n_in: int, need_inputs: Any, need_outputs: Any, kept_in: Any, kept_out: Any
) -> None:
    # regression for the recording path's shortcuts (Rule.keeps): each input/output count and
    # declaration keeps exactly the declared arrays, at their positions
    from gradhub.graph import apply
    from gradhub.registry import FunctionDef, Provider, Rule

    def rule(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
        return [gy[0]] * n_in

    provider = Provider("test")
    fdef = FunctionDef(
        "KeepTest",
        lambda xp, *xs: sum(xs) * 1.0,
        provider,
        inputs=("*xs",),
        rule=Rule(rule, provider, need_inputs, need_outputs),
    )
    xs = [var([float(i), 1.0]) for i in range(n_in)]
    y = apply(fdef, xs, {})
    node = y.creator

    def expect(kept: Any, arrays: list[Any]) -> Any:
        return None if kept is None else tuple(None if k is None else arrays[k] for k in kept)

    for got, want in (
        (node.saved_in, expect(kept_in, [x.d for x in xs])),
        (node.saved_out, expect(kept_out, [y.d])),
    ):
        assert (got is None) == (want is None)
        if want is not None:
            assert len(got) == len(want)
            assert all(g is w for g, w in zip(got, want))


def test_arrays_nobody_needs_are_freed_with_their_variable() -> None:
    x = var([1.0, 2.0])
    h = x * 2.0
    h_data = weakref.ref(h.d)
    k = x * 3.0
    k_data = weakref.ref(k.d)
    y = (h + 1.0).sum() + (k * k).sum()  # AddScalar does not need h; Mul2 needs k
    del h, k
    assert h_data() is None
    assert k_data() is not None
    del y
    assert k_data() is None


def test_graphs_without_gradients_keep_nothing() -> None:
    c = var([1.0, 2.0], need_grad=False)
    y = c * c
    assert y.creator is not None and not y.creator.need_grad
    assert y.creator.saved_in is None and y.creator.rule is None
    with gh.no_grad():
        x = var([1.0])
        z = x * x
    assert z.creator is None


@pytest.mark.parametrize("create_graph", [False, True])
def test_backward_drops_each_gradient_after_its_consumer(create_graph: bool) -> None:
    x = var(np.ones(1000))
    h = x
    for k in range(6):
        h = call("Watch", h, tag=k)
    (g,) = gh.grad([h.sum()], [x], create_graph=create_graph)
    np.testing.assert_array_equal(g.d, np.ones(1000))
    assert CHECKS == [True] * 6


# -- the deep chain --------------------------------------------------------------------------------


def test_deep_chain_backward_reexecution_and_freeing() -> None:
    assert sys.getrecursionlimit() < DEEP
    x = var([1.0, 2.0])
    h = x
    for _ in range(DEEP):
        h = h + 1.0
    y = h * 0.5
    first = weakref.ref(h.creator)
    y.backward()
    np.testing.assert_array_equal(x.g, [0.5, 0.5])
    x.d = np.array([0.0, -DEEP])
    y.forward()
    np.testing.assert_array_equal(y.d, [DEEP / 2, 0.0])
    gc.disable()
    try:
        del h, y
        assert first() is None  # freed by reference counting, without recursion errors
    finally:
        gc.enable()


def test_deep_chain_with_create_graph() -> None:
    x = var([2.0])
    h = x
    for _ in range(5_000):  # deeper than the recursion limit; a gradient graph of the same depth
        h = h * 1.0
    y = h * h  # x^2
    (g,) = gh.grad([y], [x])
    (gg,) = gh.grad([g], [x])
    np.testing.assert_array_equal(g.d, [4.0])
    np.testing.assert_array_equal(gg.d, [2.0])
    probe = weakref.ref(g.creator)
    del h, y, g, gg
    assert probe() is None
