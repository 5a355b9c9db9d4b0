"""Rules registered on composite functions (LeakyReLU, LayerNormalization): they become
primitives, pass the audit and the op matrix's samples, and are undone with their plugin."""

from __future__ import annotations

import warnings
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plugins
from gradhub.cli import main
from gradhub.errors import PluginError
from gradhub.registry import REGISTRY
from numeric_helpers import central_differences
from plugin_helpers import leaky_relu_backward

pytestmark = pytest.mark.usefixtures("fresh_plugins")


def _installed(dist: str) -> bool:
    return any(e.distribution == dist for e in plugins._entry_points())


needs_nn_ops = pytest.mark.skipif(
    not _installed("gradhub-nn-ops"), reason="gradhub-nn-ops is not installed"
)


def layer_norm_backward(
    grad_outputs: Any,
    inputs: Any,
    input_shapes: Any,
    outputs: Any,
    output_shapes: Any,
    beta: Any = None,
    gamma: Any = None,
    batch_axis: Any = 0,
    eps: float = 1e-5,
    output_stat: bool = False,
) -> Any:
    """Layer normalization of a 2-D x over axis 1, with optional beta and gamma inputs (given
    both or neither): gx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = gy * gamma."""
    import gradhub.functions as F

    assert batch_axis == 0 and not output_stat and len(inputs) in (1, 3)
    x, gy = inputs[0], grad_outputs[0]
    mu = F.mean(x, axis=1, keepdims=True)
    xc = x - mu
    rstd = F.pow_scalar(F.mean(xc * xc, axis=1, keepdims=True) + eps, -0.5)
    xhat = xc * rstd
    g = gy * inputs[2] if len(inputs) == 3 else gy
    gx = rstd * (
        g - F.mean(g, axis=1, keepdims=True) - xhat * F.mean(g * xhat, axis=1, keepdims=True)
    )
    if len(inputs) == 1:
        return [gx]
    return [gx, F.sum(gy, axis=0, keepdims=True), F.sum(gy * xhat, axis=0, keepdims=True)]


def _check_first_and_second_order(call: Any, x0: np.ndarray, w: np.ndarray) -> None:
    """gh.grad of sum(call(x) * w) and of its gradient (dotted with w) against float64 finite
    differences."""
    import gradhub.functions as F

    def loss(xa: np.ndarray) -> float:
        return float(np.sum(call(gh.Variable(xa)).d * w))

    x = gh.Variable(x0.copy())
    (gx,) = gh.grad([F.sum(call(x) * w)], [x], create_graph=True)
    np.testing.assert_allclose(gx.d, central_differences(loss, x0), rtol=1e-6, atol=1e-7)

    def grad_dot_w(xa: np.ndarray) -> float:
        xv = gh.Variable(xa)
        return float(np.sum(gh.grad([F.sum(call(xv) * w)], [xv])[0].d * w))

    (ggx,) = gh.grad([F.sum(gx * w)], [x])
    np.testing.assert_allclose(ggx.d, central_differences(grad_dot_w, x0), rtol=1e-5, atol=1e-6)


def _run_sample(f: Any, s: Any) -> list[np.ndarray]:
    arrays = [np.asarray(a) for a in s.inputs]
    out = f.api(*(gh.Variable(a, need_grad=a.dtype.kind == "f") for a in arrays), **s.attrs)
    outs = out if isinstance(out, tuple) else (out,)
    return [np.asarray(o.d) for o in outs]


@needs_nn_ops
def test_register_rule_on_leaky_relu_composite() -> None:
    """Formerly: "LeakyReLU is a composite of other functions ... it takes no rule"."""
    import gradhub.functions as F

    calls: list[float] = []

    def rule(*args: Any, **attrs: Any) -> Any:
        calls.append(attrs["alpha"])
        return leaky_relu_backward(*args, **attrs)

    gh.register("LeakyReLU", rule)
    fdef = REGISTRY.functions["LeakyReLU"]
    assert fdef.kind == "primitive" and fdef.rule is not None and fdef.rule.fn is rule
    x0 = np.array([-1.3, -0.2, 0.4, 2.0])
    w = np.array([0.3, -1.1, 0.7, 1.9])
    _check_first_and_second_order(lambda x: F.leaky_relu(x, 0.25), x0, w)
    assert calls and set(calls) == {0.25}
    y = F.leaky_relu(gh.Variable(x0), alpha=0.25)
    np.testing.assert_allclose(y.d, np.where(x0 > 0, x0, 0.25 * x0))
    # a second registration from another provider needs override=True, as for primitives
    gh.register("LeakyReLU", leaky_relu_backward)  # same module: allowed
    from gradhub.errors import RegistrationError
    from gradhub.registry import Provider, set_rule

    with pytest.raises(RegistrationError, match="override=True"):
        set_rule(fdef, leaky_relu_backward, Provider("", "", "other.module"), False)


@needs_nn_ops
def test_register_rule_on_layer_normalization_composite() -> None:
    import gradhub.functions as F

    gh.register("LayerNormalization", layer_norm_backward)
    rng = np.random.default_rng(3)
    x0 = rng.normal(size=(3, 4))
    w = rng.normal(size=(3, 4))
    _check_first_and_second_order(lambda x: F.layer_normalization(x), x0, w)
    beta0, gamma0 = rng.normal(size=(1, 4)), rng.normal(size=(1, 4))
    beta, gamma = gh.Variable(beta0), gh.Variable(gamma0)
    _check_first_and_second_order(lambda x: F.layer_normalization(x, beta, gamma), x0, w)

    def loss_of(which: int) -> Any:
        def f(a: np.ndarray) -> float:
            args = [x0, beta0, gamma0]
            args[which] = a
            y = F.layer_normalization(*(gh.Variable(v) for v in args))
            return float(np.sum(y.d * w))

        return f

    xv = gh.Variable(x0)
    grads = gh.grad([F.sum(F.layer_normalization(xv, beta, gamma) * w)], [beta, gamma])
    for g, which, at in zip(grads, (1, 2), (beta0, gamma0)):
        np.testing.assert_allclose(
            g.d, central_differences(loss_of(which), at), rtol=1e-6, atol=1e-7
        )


@needs_nn_ops
def test_audit_verifies_a_rule_on_a_composite_and_catches_a_wrong_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from gradhub.audit import check_function
    from gradhub.registry import registry_table, show_registry

    gh.register("LeakyReLU", leaky_relu_backward)
    res = check_function(REGISTRY.functions["LeakyReLU"], "cpu", order=2)
    assert res.failed is None and res.verified == 2, res.error
    assert main(["audit", "-k", "LeakyReLU", "--device", "cpu"]) == 0
    row = next(r for r in registry_table() if r["function"] == "LeakyReLU")
    assert (row["kind"], row["rule"], row["rule_provider"]) == (
        "primitive",
        "yes",
        f"module {__name__}",
    )
    assert row["status"].startswith("verified")
    capsys.readouterr()
    show_registry()
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("LeakyReLU "))
    assert f"yes (module {__name__}) [overridden]" in line

    def wrong(grad_outputs: Any, inputs: Any, *rest: Any, **attrs: Any) -> Any:
        return [grad_outputs[0]]  # forgets alpha for x < 0

    gh.register("LeakyReLU", wrong)
    res = check_function(REGISTRY.functions["LeakyReLU"], "cpu", order=2)
    assert res.failed == 1
    assert main(["audit", "-k", "LeakyReLU", "--device", "cpu"]) == 1


@needs_nn_ops
def test_op_matrix_style_sample_run_after_converting_every_composite() -> None:
    """Each composite's samples still run forward (through the primitive's kernel) after a rule
    is registered on it; the outputs are those of the composite body."""
    from gradhub.audit import samples_of

    plugins.load_plugins()
    composites = [
        f for f in REGISTRY.functions.values() if f.kind == "composite" and f.differentiable
    ]
    assert len(composites) > 20
    before = {}
    for f in composites:
        before[f.name] = [_run_sample(f, s) for s in samples_of(f, 0)]
    for f in composites:
        gh.register(f.name, lambda go, inputs, *rest, **attrs: [None] * len(inputs))
        assert f.kind == "primitive"
    for f in composites:
        after = [_run_sample(f, s) for s in samples_of(f, 0)]
        for a, b in zip(after, before[f.name]):
            for u, v in zip(a, b):
                np.testing.assert_array_equal(u, v, err_msg=f.name)


@needs_nn_ops
def test_plugin_rule_on_a_composite_is_undone_with_the_plugin() -> None:
    """A plugin that set a rule on a composite and is rolled back leaves the composite."""
    import types

    import gradhub.functions as F

    plugins.load_plugins()
    fdef = REGISTRY.functions["LeakyReLU"]
    body = fdef.api

    def rules(register: plugins.RuleRegistrar) -> None:
        register.rule("LeakyReLU", leaky_relu_backward)

    def broken(register: plugins.RuleRegistrar) -> None:
        raise RuntimeError("broken later")

    good = types.ModuleType("good_rules")
    good.gradhub_add_backward_rules = gh.hookimpl(rules)  # type: ignore[attr-defined]
    bad = types.ModuleType("bad_rules")
    bad.gradhub_add_backward_rules = gh.hookimpl(broken)  # type: ignore[attr-defined]
    with pytest.raises(PluginError, match="broken later"):
        plugins.load_plugins(strict=True, extra=[("good_rules", good), ("bad_rules", bad)])
    assert fdef.kind == "composite" and fdef.rule is None and fdef.overrides == []
    assert fdef.api is body and F.leaky_relu is body
    assert "_composite_state" not in fdef.__dict__
    # without strict mode the good plugin stays: LeakyReLU is then a primitive with its rule
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        plugins.load_plugins(extra=[("good_rules", good), ("bad_rules", bad)])
    assert fdef.kind == "primitive" and fdef.rule is not None
    assert fdef.rule.provider.module == "good_rules"
