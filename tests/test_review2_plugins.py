"""Regression tests for the second review of the plugin machinery, registry, CLI and audit.

1. The order in which plugins commit does not depend on entry-point names: plugins that only add
   commit first (gradhub's own distributions first among them), then those that replace something.
2. With ``GRADHUB_DISABLE_PLUGIN_AUTOLOAD=1`` an installed plugin is reported as installed but left
   out by the switch, not as missing.
"""

from __future__ import annotations

import json
import textwrap
import warnings
from pathlib import Path
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plugins
from gradhub.cli import main
from gradhub.errors import DeviceError, PluginError, PluginLoadWarning
from gradhub.registry import REGISTRY
from numeric_helpers import central_differences

pytestmark = pytest.mark.usefixtures("fresh_plugins")


def _installed(dist: str) -> bool:
    return any(e.distribution == dist for e in plugins._entry_points())


needs_nn_ops = pytest.mark.skipif(
    not _installed("gradhub-nn-ops"), reason="gradhub-nn-ops is not installed"
)
needs_cuda_dist = pytest.mark.skipif(
    not _installed("gradhub-cuda"), reason="gradhub-cuda is not installed"
)


def make_dist(root: Path, dist: str, module: str, code: str, ep_name: str) -> None:
    """Write a fake installed distribution ``dist`` whose entry point ``ep_name`` loads
    ``module``."""
    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[gradhub.plugins]\n{ep_name} = {module}\n")
    (root / f"{module}.py").write_text(textwrap.dedent(code))


def record(name: str) -> plugins.PluginRecord:
    return next(r for r in plugins.plugin_report() if r.name == name)


def _load_quietly() -> list[str]:
    """Load the plugins; return the messages of the PluginLoadWarnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plugins.load_plugins()
    return [str(w.message) for w in caught if issubclass(w.category, PluginLoadWarning)]


def _nn_ops_alone(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The function names registered by the core and gradhub-nn-ops alone."""
    monkeypatch.setenv("GRADHUB_PLUGINS", "nn_ops")
    plugins.reset()
    plugins.load_plugins()
    names = set(REGISTRY.functions)
    plugins.reset()
    return names


# -- 1. commit order ---------------------------------------------------------------------------

SINH_OVERRIDE = """
from gradhub import hookimpl

def _fwd(xp, x):
    return xp.sinh(x)

def _bw(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    import gradhub.functions as F
    return [grad_outputs[0] * F.cosh(inputs[0])]

@hookimpl
def gradhub_add_functions(register):
    register.function("Sinh", _fwd, rule=_bw, need_inputs=(0,), need_outputs=(), override=True)
    register.function("Phase2Cube", lambda xp, x: x ** 3)
"""

PHASE2_RAISES = (
    SINH_OVERRIDE
    + """
@hookimpl
def gradhub_add_backward_rules(register):
    raise RuntimeError("broken in phase 2")
"""
)

TANH_CLASH = """
from gradhub import hookimpl

@hookimpl
def gradhub_add_functions(register):
    register.function("Tanh", lambda xp, x: xp.tanh(x))
"""


@needs_nn_ops
def test_override_plugin_failing_in_phase2_sorting_first_leaves_nn_ops_loaded(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reproduced: entry point ``b_phase2`` (sorts before ``nn_ops``) replaced Sinh, so nn_ops
    failed with "duplicate function 'Sinh'", and then b_phase2 was rolled back: 16 functions."""
    alone = _nn_ops_alone(monkeypatch)
    make_dist(site, "review2-phase2", "review2_phase2_mod", PHASE2_RAISES, ep_name="b_phase2")
    monkeypatch.setenv("GRADHUB_PLUGINS", "nn_ops,b_phase2")
    messages = _load_quietly()
    assert record("nn_ops").status == "loaded"
    assert record("b_phase2").status == "failed" and "broken in phase 2" in record("b_phase2").error
    assert len(messages) == 1 and "b_phase2" in messages[0]
    assert set(REGISTRY.functions) == alone  # Phase2Cube undone, nothing of nn_ops lost
    assert REGISTRY.functions["Sinh"].provider.distribution == "gradhub-nn-ops"
    assert REGISTRY.functions["Sinh"].overrides == []


@needs_nn_ops
@pytest.mark.parametrize("ep_name", ["a_override", "z_override"])
def test_working_override_plugin_replaces_whatever_its_entry_point_name(
    site: Path, monkeypatch: pytest.MonkeyPatch, ep_name: str
) -> None:
    """Reproduced: the same plugin as ``a_override`` knocked out nn_ops, as ``z_override`` it
    worked."""
    alone = _nn_ops_alone(monkeypatch)
    make_dist(site, "review2-override", "review2_override_mod", SINH_OVERRIDE, ep_name=ep_name)
    monkeypatch.setenv("GRADHUB_PLUGINS", f"nn_ops,{ep_name}")
    assert _load_quietly() == []
    assert record("nn_ops").status == "loaded" and record(ep_name).status == "loaded"
    assert set(REGISTRY.functions) == alone | {"Phase2Cube"}
    sinh = REGISTRY.functions["Sinh"]
    assert sinh.provider.distribution == "review2-override"
    assert sinh.overrides == [("(replaced function)", "review2-override 1.0")]
    x = gh.Variable([0.5])
    import gradhub.functions as F

    assert gh.grad([F.sinh(x)], [x])[0].d[0] == pytest.approx(1.1276259652063807)


@needs_nn_ops
def test_plain_clash_with_nn_ops_fails_the_third_party_plugin(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reproduced: ``b_clash`` registering Tanh without override made nn_ops fail instead."""
    alone = _nn_ops_alone(monkeypatch)
    make_dist(site, "review2-clash", "review2_clash_mod", TANH_CLASH, ep_name="b_clash")
    monkeypatch.setenv("GRADHUB_PLUGINS", "nn_ops,b_clash")
    messages = _load_quietly()
    assert record("nn_ops").status == "loaded"
    assert record("b_clash").status == "failed"
    assert "duplicate function 'Tanh': already registered by gradhub-nn-ops" in (
        record("b_clash").error
    )
    assert len(messages) == 1 and "b_clash" in messages[0]
    assert set(REGISTRY.functions) == alone
    assert REGISTRY.functions["Tanh"].provider.distribution == "gradhub-nn-ops"


@needs_nn_ops
def test_strict_mode_with_a_phase2_failure_of_an_override_plugin(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Strict mode still names the broken plugin and leaves the registry empty."""
    make_dist(site, "review2-phase2", "review2_phase2_mod", PHASE2_RAISES, ep_name="b_phase2")
    monkeypatch.setenv("GRADHUB_PLUGINS", "nn_ops,b_phase2")
    with pytest.raises(PluginError, match=r"plugin 'b_phase2'.*broken in phase 2"):
        plugins.load_plugins(strict=True)
    assert REGISTRY.functions == {} and not plugins.STATE.loaded


def test_two_plain_plugins_clash_the_later_by_name_fails() -> None:
    """Between two third-party plugins that only add, the later one (load order) fails."""
    import types

    def module(name: str) -> types.ModuleType:
        mod = types.ModuleType(name)

        def gradhub_add_functions(register: plugins.FunctionRegistrar) -> None:
            register.function("ClashFn", lambda xp, x: x)

        mod.gradhub_add_functions = gh.hookimpl(gradhub_add_functions)  # type: ignore[attr-defined]
        return mod

    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        plugins.load_plugins(extra=[("first", module("first")), ("second", module("second"))])
    assert record("first").status == "loaded" and record("second").status == "failed"


def test_override_extra_commits_after_a_plain_extra_loaded_later() -> None:
    """Within one load, a replacing plugin commits after a plain one, whatever the order."""
    import types

    def plain(register: plugins.FunctionRegistrar) -> None:
        register.function("OrderFn", lambda xp, x: x + 1)

    def replacing(register: plugins.FunctionRegistrar) -> None:
        register.function("OrderFn", lambda xp, x: x + 2, override=True)

    mods = []
    for name, hook in (("aa_replacing", replacing), ("zz_plain", plain)):
        mod = types.ModuleType(name)
        mod.gradhub_add_functions = gh.hookimpl(hook)  # type: ignore[attr-defined]
        mods.append((name, mod))
    plugins.load_plugins(extra=mods)
    assert record("aa_replacing").status == "loaded" and record("zz_plain").status == "loaded"
    assert REGISTRY.functions["OrderFn"].provider.module == "aa_replacing"


# -- 2. autoload off ---------------------------------------------------------------------------

AUTOLOAD_OFF = "installed, but plugin autoload is off (GRADHUB_DISABLE_PLUGIN_AUTOLOAD=1)"


@needs_cuda_dist
def test_autoload_off_device_error_says_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reproduced: "install the distribution 'gradhub-cuda' (pip install gradhub-cuda)"."""
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    with pytest.raises(DeviceError) as info:
        gh.get_extension_context("cuda")
    msg = str(info.value)
    assert f"the distribution 'gradhub-cuda' is {AUTOLOAD_OFF}" in msg
    assert "GRADHUB_PLUGINS=cuda" in msg and "pip install" not in msg
    assert record("cuda").status == "autoload off"


@needs_nn_ops
def test_autoload_off_function_not_found_says_nn_ops_is_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    import gradhub.functions as F

    with pytest.raises(AttributeError) as info:
        F.relu  # noqa: B018
    assert f"the distribution gradhub-nn-ops, is {AUTOLOAD_OFF}" in str(info.value)


@needs_nn_ops
def test_autoload_off_plugin_loaded_by_hand_keeps_its_distribution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The message's advice works, and the loaded plugin is credited to its distribution."""
    import importlib

    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins.load_plugins(extra=[("nn_ops", importlib.import_module("gradhub_nn_ops.plugin"))])
    assert REGISTRY.functions["ReLU"].provider.distribution == "gradhub-nn-ops"


@needs_cuda_dist
@needs_nn_ops
def test_autoload_off_cli_lists_the_skipped_entry_points(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Reproduced: ``gradhub plugins`` left them out and called cuda "not installed"."""
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert main(["plugins", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    status = {p["name"]: p["status"] for p in data["plugins"]}
    assert status["nn_ops"] == "autoload off" and status["cuda"] == "autoload off"
    cuda = next(d for d in data["devices"] if d["device"] == "cuda")
    assert cuda["reason"].startswith(AUTOLOAD_OFF)
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "autoload off" in out and "not installed" not in out
    assert main(["registry"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "plugin autoload is off" in out and "not installed" not in out


# -- 3. a backward rule on a composite function ------------------------------------------------


def leaky_relu_backward(
    grad_outputs: Any,
    inputs: Any,
    input_shapes: Any,
    outputs: Any,
    output_shapes: Any,
    alpha: float = 0.1,
    inplace: bool = False,
) -> Any:
    """d/dx leaky_relu(x) = 1 where x > 0, else alpha (written with registered functions)."""
    import gradhub.functions as F

    mask = F.greater_scalar(inputs[0], 0.0)
    return [grad_outputs[0] * (mask + (1.0 - mask) * alpha)]


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


@needs_nn_ops
def test_register_rule_on_leaky_relu_composite() -> None:
    """Reproduced: "LeakyReLU is a composite of other functions ... it takes no rule"."""
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


def _run_sample(f: Any, s: Any) -> list[np.ndarray]:
    arrays = [np.asarray(a) for a in s.inputs]
    out = f.api(*(gh.Variable(a, need_grad=a.dtype.kind == "f") for a in arrays), **s.attrs)
    outs = out if isinstance(out, tuple) else (out,)
    return [np.asarray(o.d) for o in outs]


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


@needs_nn_ops
def test_nnabla_compat_register_on_a_composite() -> None:
    """Reproduced: B.register("LeakyReLU", ...) raised "it takes no rule"."""
    import gradhub.functions as F
    import gradhub_compat.nnabla.backward_functions as B

    B.register("LeakyReLU", leaky_relu_backward)
    x0 = np.array([-2.0, 1.5])
    x = gh.Variable(x0.copy())
    (g,) = gh.grad([F.sum(F.leaky_relu(x, 0.3))], [x])
    np.testing.assert_allclose(
        g.d,
        central_differences(lambda a: float(np.sum(F.leaky_relu(gh.Variable(a), 0.3).d)), x0),
        rtol=1e-7,
    )


# -- 5. registry display -----------------------------------------------------------------------


def _show_registry_line(name: str) -> str:
    import io

    from gradhub.registry import show_registry

    buf = io.StringIO()
    show_registry(file=buf)
    return next(ln for ln in buf.getvalue().splitlines() if ln.startswith(name + " "))


def test_show_registry_marks_an_overridden_rule_as_the_cli_does() -> None:
    """Reproduced: show_registry printed ``yes (module __main__)`` without ``[overridden]``."""
    gh.register("Neg", lambda go, *rest: [-go[0]], override=True)
    assert f"yes (module {__name__}) [overridden]" in _show_registry_line("Neg")


def test_show_registry_rule_cell_of_a_replaced_function_without_rule() -> None:
    """Reproduced: a function replaced with override=True and no rule showed ``none ()``."""
    import types

    def functions(register: plugins.FunctionRegistrar) -> None:
        register.function("Neg", lambda xp, x: -x, override=True)

    mod = types.ModuleType("neg_norule")
    mod.gradhub_add_functions = gh.hookimpl(functions)  # type: ignore[attr-defined]
    plugins.load_plugins(extra=[("neg_norule", mod)])
    line = _show_registry_line("Neg")
    assert "none [overridden]" in line and "()" not in line and "no rule" in line


# -- 6. CLI: the audit title, subcommand errors ------------------------------------------------


def test_audit_title_is_not_wrapped_in_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    """Reproduced: "order 2 (3 for" / "elementwise functions)" on two lines."""
    assert main(["audit", "-k", "Neg", "--device", "cpu", "--no-progress"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        "gradhub audit: 1 functions x 1 device(s), order 2 (3 for elementwise functions)"
    )


def test_unknown_option_of_a_subcommand_names_the_subcommand(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Reproduced: ``gradhub audit --bogus`` said ``gradhub: error:`` with the top-level usage."""
    with pytest.raises(SystemExit) as info:
        main(["audit", "--bogus"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "gradhub audit: error: unrecognized arguments: --bogus" in err
    assert err.startswith("usage: gradhub audit")
