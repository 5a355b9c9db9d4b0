"""gradhub.batching: vmap runs each function once for the whole batch through its batching rule
(the core's functions here; gradhub-nn-ops' in tests/nn_ops/test_batching_rules.py), falls back
to a loop with a one-time warning for a function without one, and the hook
``gradhub_add_batching_rules`` / ``register.function(batch_rule=...)`` set rules."""

from __future__ import annotations

import types
import warnings
from typing import Any

import gradhub as gh
import gradhub.func as ghf
import numpy as np
import pytest
from gradhub import batching, hookimpl
from gradhub.batching import BatchedVariable
from gradhub.ops import call
from gradhub.registry import REGISTRY, show_registry
from plugin_helpers import load_with_warnings

rng = np.random.default_rng(3)


def test_f_runs_once_on_batched_values_with_the_shape_of_one_element() -> None:
    seen = []

    def f(r: gh.Variable) -> gh.Variable:
        seen.append((type(r), r.shape, r.ndim, r.dtype))
        return (r * r).sum() + 1.0

    x = rng.standard_normal((5, 3))
    y = ghf.vmap(f)(x)
    assert seen == [(BatchedVariable, (3,), 1, np.float64)]
    np.testing.assert_allclose(y.d, (x * x).sum(1) + 1.0, rtol=1e-14)


def test_core_functions_batch_without_a_loop() -> None:
    x = rng.standard_normal((4, 2, 3))
    w = rng.standard_normal((3, 5))
    v = rng.standard_normal(3)

    def f(a: gh.Variable) -> tuple[gh.Variable, ...]:
        b = gh.functions.broadcast_to(a[0], (4, 3))
        return (
            a @ w,  # BatchMatmul, element (2, 3) @ (3, 5)
            a @ v,  # matrix @ unbatched vector
            v @ a.reshape(3, 2),  # unbatched vector @ matrix
            a[:, 1] @ a[:, 2],  # vector @ vector, both batched
            a.sum(axis=0, keepdims=True) - a.sum(),
            b * 2.0,
            a[..., np.array([2, 0])],
        )

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = ghf.vmap(f)(x)
    for k, g in enumerate(got):
        want = np.stack([np.asarray(f(gh.Variable(e))[k].d) for e in x])
        np.testing.assert_allclose(g.d, want, rtol=1e-13, err_msg=f"output {k}")


def test_in_axes_out_axes_and_none() -> None:
    x = rng.standard_normal((3, 4))
    c = gh.Variable(rng.standard_normal(3))
    y = ghf.vmap(lambda a, b: a * b, in_axes=(1, None), out_axes=1)(x, c)
    np.testing.assert_allclose(y.d, x * c.d[:, None], rtol=1e-15)
    y0, y1 = ghf.vmap(lambda a, b: (a.sum(), b * 2.0), in_axes=(1, None), out_axes=(0, None))(x, c)
    np.testing.assert_allclose(y0.d, x.sum(0), rtol=1e-14)
    np.testing.assert_allclose(y1.d, c.d * 2.0, rtol=1e-15)
    with pytest.raises(ValueError, match=r"vmap: out_axes\[0\] is None but output 0 differs"):
        ghf.vmap(lambda a: a * 2.0, out_axes=None)(x)


def test_an_unbatched_output_is_repeated_along_the_batch() -> None:
    c = gh.Variable(np.array([1.0, 2.0]))
    y = ghf.vmap(lambda a: c * 3.0)(np.zeros((4, 7)))
    np.testing.assert_allclose(y.d, np.tile([3.0, 6.0], (4, 1)))


def test_nested_vmap_and_batch_size_error_names_the_arguments() -> None:
    x = rng.standard_normal((2, 3, 4))
    y = ghf.vmap(ghf.vmap(lambda r: r * r.sum(), in_axes=1), in_axes=0)(x)
    np.testing.assert_allclose(y.d, (x * x.sum(1, keepdims=True)).transpose(0, 2, 1), rtol=1e-14)
    inner = ghf.vmap(lambda a, b: a + b)
    with pytest.raises(
        ValueError, match="argument 0 has size 3 along its axis 0 but argument 1 has size 5"
    ):
        ghf.vmap(lambda r: inner(r, np.zeros((5, 4))))(x)


def test_vmap_of_grad_gives_per_sample_gradients_of_unbatched_weights() -> None:
    w = rng.standard_normal((3, 2))
    x = rng.standard_normal((6, 3))

    def loss(w: gh.Variable, r: gh.Variable) -> gh.Variable:
        return ((r @ w) ** 2.0).sum()

    g = ghf.vmap(ghf.grad(loss), in_axes=(None, 0))(w, x)
    assert g.shape == (6, 3, 2)
    for i in range(6):
        np.testing.assert_allclose(g.d[i], 2.0 * np.outer(x[i], x[i] @ w), rtol=1e-13)


def test_grad_of_vmap_and_vmap_of_hessian_match_closed_forms() -> None:
    w = gh.Variable(rng.standard_normal(3))
    x = rng.standard_normal((4, 3))
    out = ghf.vmap(lambda r, w: ((r * w).sum()) ** 2.0, in_axes=(0, None))(x, w)
    (gw,) = gh.grad([out.sum()], [w])
    s = x @ w.d
    np.testing.assert_allclose(gw.d, (2.0 * s[:, None] * x).sum(0), rtol=1e-13)
    h = ghf.vmap(ghf.hessian(lambda r: (r**3.0).sum()))(x)
    np.testing.assert_allclose(h.d, np.stack([np.diag(6.0 * r) for r in x]), rtol=1e-13)
    # the per-sample gradient is differentiable again: d/dw of the sum of its squares
    gs = ghf.vmap(ghf.grad(lambda w, r: ((r * w).sum()) ** 2.0), in_axes=(None, 0))(w, x)
    (gg,) = gh.grad([(gs * gs).sum()], [w])
    want = sum(8.0 * (r @ w.d) * (r @ r) * r for r in x)
    np.testing.assert_allclose(gg.d, want, rtol=1e-12)


def test_batched_values_refuse_their_data() -> None:
    def f(r: gh.Variable) -> gh.Variable:
        return r.d

    with pytest.raises(TypeError, match=r"vmap: the data \(\.d\) of a batched Variable"):
        ghf.vmap(f)(np.zeros((2, 3)))
    w = gh.Variable(np.ones(3))
    with pytest.raises(TypeError, match=r"grad: outputs\[0\] is a batched Variable \(inside"):
        ghf.vmap(lambda r: gh.grad([(r * w).sum()], [w])[0])(np.zeros((2, 3)))
    with pytest.raises(TypeError, match=r"vmap: backward\(\) of a batched Variable"):
        ghf.vmap(lambda r: r.sum().backward())(np.zeros((2, 3)))
    with pytest.raises(TypeError, match="the truth value"):
        ghf.vmap(lambda r: r * float(bool(r)))(np.zeros((2, 1)))


def _toy_plugin(with_rule: bool) -> types.ModuleType:
    def forward(xp: Any, x: Any) -> Any:
        return xp.cumsum(x, axis=-1)

    def rule(args: tuple[Any, ...], dims: tuple[Any, ...]) -> Any:
        calls.append(dims)
        return call("ToyCumsum", args[0]), 0

    calls: list[Any] = []
    m = types.ModuleType("toy_batching")

    @hookimpl
    def gradhub_add_functions(register: Any) -> None:
        register.function("ToyCumsum", forward, differentiable=False)

    m.gradhub_add_functions = gradhub_add_functions  # type: ignore[attr-defined]
    if with_rule:

        @hookimpl
        def gradhub_add_batching_rules(register: Any) -> None:
            register.batching_rule("ToyCumsum", rule)

        m.gradhub_add_batching_rules = gradhub_add_batching_rules  # type: ignore[attr-defined]
    m.calls = calls  # type: ignore[attr-defined]
    return m


@pytest.mark.usefixtures("fresh_plugins")
def test_a_function_without_a_rule_loops_with_a_one_time_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(batching, "_warned", set())
    rec, errors = load_with_warnings("toy_batching", _toy_plugin(False))
    assert rec.status == "loaded", errors
    x = rng.standard_normal((3, 4))
    f = ghf.vmap(lambda r: gh.functions.toy_cumsum(r) * 2.0)
    with pytest.warns(UserWarning, match=r"vmap: toy_cumsum\(\) \(ToyCumsum, from .*\) has no "):
        y = f(x)
    np.testing.assert_allclose(y.d, 2.0 * np.cumsum(x, axis=1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(x)  # warned once only
    assert REGISTRY.functions["ToyCumsum"].batch_rule is None


@pytest.mark.usefixtures("fresh_plugins")
def test_the_hook_sets_a_rule_and_the_registry_shows_it(capsys: pytest.CaptureFixture) -> None:
    m = _toy_plugin(True)
    rec, errors = load_with_warnings("toy_batching", m)
    assert rec.status == "loaded" and rec.added["batching_rules"] == 1, errors
    x = rng.standard_normal((3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = ghf.vmap(gh.functions.toy_cumsum)(x)
    np.testing.assert_allclose(y.d, np.cumsum(x, axis=1))
    assert m.calls == [(0,)]  # type: ignore[attr-defined]
    show_registry()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[-1] == "batching"
    assert next(ln for ln in lines if ln.startswith("ToyCumsum ")).split()[-1] == "rule"
    assert next(ln for ln in lines if ln.startswith("Sum ")).split()[-1] == "rule"


@pytest.mark.usefixtures("fresh_plugins")
def test_bad_batching_rule_registrations_fail_the_plugin() -> None:
    m = types.ModuleType("toy_bad_batching")

    @hookimpl
    def unknown(register: Any) -> None:
        register.batching_rule("NoSuchFunction", lambda args, dims: (args[0], 0))

    m.gradhub_add_batching_rules = unknown  # type: ignore[attr-defined]
    rec, errors = load_with_warnings("toy_bad_batching", m)
    assert rec.status == "failed"
    assert "batching rule for unknown function 'NoSuchFunction'" in errors[0]

    m2 = types.ModuleType("toy_dup_batching")

    @hookimpl
    def gradhub_add_batching_rules(register: Any) -> None:
        register.batching_rule("Sum", lambda args, dims, **a: (args[0], 0))

    m2.gradhub_add_batching_rules = gradhub_add_batching_rules  # type: ignore[attr-defined]
    rec, errors = load_with_warnings("toy_dup_batching", m2)
    assert rec.status == "failed"
    assert "duplicate batching rule for 'Sum'" in errors[0]
    assert REGISTRY.functions["Sum"].batch_rule_provider.distribution == "gradhub"

    m3 = types.ModuleType("toy_not_callable")

    @hookimpl
    def gradhub_add_batching_rules(register: Any) -> None:
        register.batching_rule("Sum", 3)

    m3.gradhub_add_batching_rules = gradhub_add_batching_rules  # type: ignore[attr-defined]
    rec, errors = load_with_warnings("toy_not_callable", m3)
    assert "register.batching_rule('Sum'): the rule must be callable, got int" in errors[0]


def test_elementwise_functions_get_the_generic_rule() -> None:
    for name in ("Add2", "Mul2", "Neg", "PowScalar", "Pow2", "Abs", "Log", "Sign"):
        rule = REGISTRY.get(name).batch_rule
        assert rule is not None and rule.__name__ == f"elementwise_rule({name})"
    a = rng.standard_normal((4, 1, 3))
    b = rng.standard_normal((4, 2, 1))
    got = ghf.vmap(lambda x, y: abs(x) ** y)(a, b)
    np.testing.assert_allclose(got.d, np.abs(a) ** b, rtol=1e-14)
    # a batched 1-d operand against an unbatched 2-d one broadcasts per element
    c = rng.standard_normal((2, 3))
    got = ghf.vmap(lambda x: x * c)(a[:, 0])
    np.testing.assert_allclose(got.d, a[:, 0][:, None, :] * c, rtol=1e-15)


def test_matmul_with_a_repeated_weight_is_one_product() -> None:
    a = rng.standard_normal((5, 2, 3))
    w = rng.standard_normal((3, 4))
    wb = np.broadcast_to(w, (5, 3, 4))
    y = call("BatchMatmul", gh.Variable(a), gh.Variable(wb))
    np.testing.assert_allclose(y.d, np.matmul(a, w), rtol=1e-14)
    u, v = a[..., :1], rng.standard_normal((5, 1, 4))
    outer = call("BatchMatmul", gh.Variable(u), gh.Variable(v))
    np.testing.assert_allclose(outer.d, np.matmul(u, v), rtol=1e-15)


def test_vmap_of_jacobians_and_jvp_equals_the_loop() -> None:
    x = rng.standard_normal((4, 3))
    v = rng.standard_normal((4, 3))
    w = rng.standard_normal((3, 3))

    def f(r: gh.Variable) -> gh.Variable:
        return (r @ w) ** 3.0

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jr = ghf.vmap(ghf.jacrev(f))(x)
        jf = ghf.vmap(ghf.jacfwd(f))(x)
        _, t = ghf.vmap(lambda a, b: ghf.jvp(f, (a,), (b,)))(x, v)
    want = np.stack([3.0 * ((r @ w) ** 2)[:, None] * w.T for r in x])
    np.testing.assert_allclose(jr.d, want, rtol=1e-12)
    np.testing.assert_allclose(jf.d, want, rtol=1e-12)
    np.testing.assert_allclose(t.d, np.einsum("bij,bj->bi", want, v), rtol=1e-12)


def test_a_key_numpy_would_reorder_falls_back_to_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batching, "_warned", set())
    x = rng.standard_normal((2, 3, 4, 5))
    key = (np.array([0, 2]), slice(None), np.array([1, 4]))
    with pytest.warns(UserWarning, match=r"get_item\(\) \(GetItem, .*\) cannot batch this key"):
        y = ghf.vmap(lambda r: r[key])(x)
    np.testing.assert_allclose(y.d, np.stack([e[key] for e in x]))


def test_batched_integer_indices_gather_in_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """``x[i]`` with indices ``i`` that differ across the batch (a batched integer Variable in
    the key): one gather (the key ``(arange(B), i)``), differentiable; a key whose indexed axes
    numpy would move loops with the warning naming the case."""
    monkeypatch.setattr(batching, "_warned", set())
    x = rng.standard_normal((3, 5, 2))
    i = np.array([1, 3, 0])
    j = np.array([[1, 4], [0, 0], [2, 3]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y1 = ghf.vmap(lambda r, k: r[k])(x, i)
        y2 = ghf.vmap(lambda r, k: r[k, 1])(x, j)
        g = ghf.vmap(ghf.grad(lambda r, k: (r[k] ** 2.0).sum()))(x, j)
    np.testing.assert_array_equal(y1.d, np.stack([x[b][i[b]] for b in range(3)]))
    np.testing.assert_array_equal(y2.d, np.stack([x[b][j[b], 1] for b in range(3)]))
    # an unbatched x indexed by batched indices never reaches a batching rule: an error saying
    # so, never a wrong number (gradhub.functions.embed batches a lookup in a shared table)
    with pytest.raises(TypeError, match=r"get_item\(\).*the data \(.d\) of a batched Variable"):
        ghf.vmap(lambda k: gh.Variable(x[0])[k], in_axes=0)(j)
    for b in range(3):
        ref = np.zeros((5, 2))
        np.add.at(ref, j[b], 2.0 * x[b][j[b]])
        np.testing.assert_allclose(g.d[b], ref, rtol=1e-15)
    with pytest.warns(
        UserWarning, match=r"get_item\(\) \(GetItem, from gradhub\) cannot batch this"
    ):
        y4 = ghf.vmap(lambda r, k: r[:, k])(x, i % 2)
    np.testing.assert_array_equal(y4.d, np.stack([x[b][:, i[b] % 2] for b in range(3)]))
