"""Regression tests for the fourth review (third-party plugin author / operator view).

F4. A backward rule whose signature cannot take ``(grad_outputs, inputs, input_shapes, outputs,
    output_shapes, **attrs)`` is refused at registration (``gh.register``, ``register.function``,
    ``register.rule``), naming the function, the rule and the plugin.
F5. ``register.function`` refuses an empty name, a name whose callable is not an identifier (or
    is a keyword) and ``need_inputs``/``need_outputs`` out of range.
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub import hookimpl, plugins
from gradhub.compat.nnabla import backward_functions as B
from gradhub.errors import PluginLoadWarning, RegistrationError
from gradhub.registry import REGISTRY, check_rule_signature

pytestmark = pytest.mark.usefixtures("fresh_plugins")


def _plugin(
    name: str,
    functions: Callable[[Any], None] | None = None,
    rules: Callable[[Any], None] | None = None,
) -> types.ModuleType:
    """An in-memory plugin module whose hooks call ``functions(register)``/``rules(register)``."""
    m = types.ModuleType(name)
    if functions is not None:

        @hookimpl
        def gradhub_add_functions(register: Any) -> None:
            functions(register)

        m.gradhub_add_functions = gradhub_add_functions  # type: ignore[attr-defined]
    if rules is not None:

        @hookimpl
        def gradhub_add_backward_rules(register: Any) -> None:
            rules(register)

        m.gradhub_add_backward_rules = gradhub_add_backward_rules  # type: ignore[attr-defined]
    return m


def _load(name: str, module: types.ModuleType) -> tuple[plugins.PluginRecord, list[str]]:
    """Load ``module`` as the plugin ``name``; its record and the PluginLoadWarning messages."""
    plugins.ensure_loaded()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = plugins.load_plugins(extra=[(name, module)])
    rec = next(r for r in records if r.name == name)
    return rec, [str(w.message) for w in caught if issubclass(w.category, PluginLoadWarning)]


def old_rule(inputs: Any, **kw: Any) -> Any:
    """The pre-1.32 nnabla form: one positional parameter."""
    return [inputs[0]]


def _identity(xp: Any, x: Any) -> Any:
    return x + 0


def _id_rule(
    grad_outputs: Any,
    inputs: Any,
    input_shapes: Any,
    outputs: Any,
    output_shapes: Any,
    **attrs: Any,
) -> Any:
    return [grad_outputs[0]]


# -- F4: the rule signature is checked at registration ----------------------------------------


def test_gh_register_refuses_a_rule_with_too_few_positional_parameters() -> None:
    before = REGISTRY.get("Tanh").rule
    with pytest.raises(TypeError, match=r"register\('Tanh'\).*'old_rule'.*takes 1 positional"):
        gh.register("Tanh", old_rule, override=True)
    with pytest.raises(RegistrationError, match="module test_review4_plugins"):
        gh.register("Tanh", old_rule, override=True)
    assert REGISTRY.get("Tanh").rule is before  # nothing changed: Tanh still differentiates
    x = gh.Variable(np.array([0.3]))
    F.tanh(x).backward()
    assert np.allclose(x.g, 1 - np.tanh(0.3) ** 2)


def test_rules_taking_star_args_or_attrs_by_name_are_accepted() -> None:
    def star(*args: Any, **kw: Any) -> Any:
        return [args[0][0] * 2.0]

    gh.register("Neg", star, override=True)
    x = gh.Variable(np.array([1.0, 2.0]))
    F.neg(x).backward()
    assert np.allclose(x.g, [2.0, 2.0])  # the registered rule ran

    def by_name(gy: Any, inputs: Any, xs: Any, outputs: Any, ys: Any, val: Any) -> Any:
        return [gy[0] * val]

    gh.register("MulScalar", by_name, override=True)


def test_rule_missing_an_attr_or_requiring_an_unknown_one_is_refused() -> None:
    def no_attr(gy: Any, inputs: Any, xs: Any, outputs: Any, ys: Any) -> Any:
        return [gy[0]]

    with pytest.raises(RegistrationError, match=r"'MulScalar'.*no parameter for the attr.*'val'"):
        gh.register("MulScalar", no_attr, override=True)

    def extra(gy: Any, inputs: Any, xs: Any, outputs: Any, ys: Any, val: Any, scale: Any) -> Any:
        return [gy[0]]

    with pytest.raises(RegistrationError, match=r"also requires \['scale'\]"):
        gh.register("MulScalar", extra, override=True)


def test_nnabla_register_uses_the_same_check() -> None:
    with pytest.raises(
        TypeError,
        match=r"nnabla\.backward_functions\.register\('Tanh'\): the "
        r"backward function must take",
    ):
        B.register("Tanh", old_rule)
    with pytest.raises(TypeError, match="takes 1 positional"):
        check_rule_signature(old_rule, "Tanh", "here")


def test_plugin_function_with_a_wrong_rule_signature_fails_to_load() -> None:
    mod = _plugin("oldstyle", functions=lambda r: r.function("OldStyle", _identity, rule=old_rule))
    rec, msgs = _load("oldstyle", mod)
    assert rec.status == "failed"
    assert "register.function('OldStyle')" in rec.error and "'old_rule'" in rec.error
    assert any("plugin 'oldstyle'" in m and "OldStyle" in m for m in msgs)
    assert "OldStyle" not in REGISTRY.functions
    assert REGISTRY.get("Tanh").rule is not None  # the others are untouched


def test_plugin_rule_with_a_wrong_signature_fails_to_load() -> None:
    mod = _plugin("oldrule", rules=lambda r: r.rule("Tanh", old_rule, override=True))
    before = REGISTRY.get("Tanh").rule
    rec, _ = _load("oldrule", mod)
    assert rec.status == "failed"
    assert "register.rule('Tanh')" in rec.error and "'old_rule'" in rec.error
    assert REGISTRY.get("Tanh").rule is before


def test_plugin_rule_missing_an_attr_fails_to_load_and_rolls_back() -> None:
    def no_attr(gy: Any, inputs: Any, xs: Any, outputs: Any, ys: Any) -> Any:
        return [gy[0]]

    mod = _plugin("noattr", rules=lambda r: r.rule("MulScalar", no_attr, override=True))
    before = REGISTRY.get("MulScalar").rule
    rec, _ = _load("noattr", mod)
    assert rec.status == "failed" and "'val'" in rec.error
    assert REGISTRY.get("MulScalar").rule is before


def test_plugin_with_correct_rules_still_loads() -> None:
    mod = _plugin(
        "fine",
        functions=lambda r: r.function(
            "FineId", _identity, rule=_id_rule, need_inputs=(), need_outputs=()
        ),
    )
    rec, msgs = _load("fine", mod)
    assert rec.status == "loaded" and not msgs
    x = gh.Variable(np.array([1.0, 2.0]))
    F.fine_id(x).backward()
    assert np.allclose(x.g, 1.0)


# -- F5: names and need_inputs/need_outputs are checked ----------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "My Fn"}, r"register\.function\('My Fn'\).*'my fn', is not a Python identifier"),
        ({"name": ""}, r"register\.function\(''\): the name must be a non-empty string"),
        ({"name": "Foo", "snake": "class"}, r"'class', is a Python keyword"),
        (
            {"name": "NeedBad", "need_inputs": (3,)},
            r"'NeedBad'\).*need_inputs=\(3,\) names index 3, but NeedBad has 1 input",
        ),
        ({"name": "NeedNeg", "need_inputs": (-1,)}, r"need_inputs=\(-1,\): -1 is not an index"),
        (
            {"name": "NeedOut", "need_outputs": (1,)},
            r"need_outputs=\(1,\) names index 1, but NeedOut has 1 output",
        ),
    ],
)
def test_register_function_refuses_bad_names_and_indices(
    kwargs: dict[str, Any], match: str
) -> None:
    def reg(r: Any) -> None:
        r.function(kwargs.pop("name"), _identity, rule=_id_rule, **kwargs)

    rec, msgs = _load("bad", _plugin("bad", functions=reg))
    assert rec.status == "failed"
    assert rec.error.startswith("registration: RegistrationError")
    import re

    assert re.search(match, rec.error), rec.error
    assert any("plugin 'bad'" in m for m in msgs)


def test_register_function_accepts_what_can_be_checked_only_partly() -> None:
    def reg(r: Any) -> None:
        # a variadic input: any index; a callable n_outputs: need_outputs is not bounded
        r.function(
            "VarCat",
            lambda xp, *xs: xp.concatenate(xs),
            inputs=("*xs",),
            rule=lambda *a, **k: [None] * len(a[1]),
            need_inputs=(5,),
        )
        r.function(
            "TwoOut",
            lambda xp, x: (x, x),
            n_outputs=lambda **a: 2,
            rule=lambda *a, **k: [None],
            need_outputs=(1,),
        )

    rec, _ = _load("partly", _plugin("partly", functions=reg))
    assert rec.status == "loaded", rec.error


def test_composite_with_a_keyword_name_is_refused() -> None:
    def reg(r: Any) -> None:
        r.composite("Lambda", lambda x: x * 2.0, snake="lambda")

    rec, _ = _load("comp", _plugin("comp", functions=reg))
    assert rec.status == "failed" and "register.composite('Lambda')" in rec.error


def test_gh_register_refuses_need_inputs_out_of_range() -> None:
    with pytest.raises(RegistrationError, match=r"register\('Neg'\): need_inputs=\(1,\)"):
        gh.register("Neg", _id_rule, override=True, need_inputs=(1,))


def test_every_registered_function_passes_the_checks() -> None:
    from gradhub.registry import check_function_name, check_needs

    plugins.ensure_loaded()
    assert len(REGISTRY.functions) > 100
    for name, f in REGISTRY.functions.items():
        check_function_name(name, f.snake, "test")
        if f.rule is not None:
            check_rule_signature(f.rule.fn, name, "test", attrs=f.attrs)
            check_needs(f, f.rule.need_inputs, f.rule.need_outputs, "test")


# -- F2: gradhub demo --plot checks the file before training -----------------------------------


def test_demo_plot_into_a_missing_folder_is_a_usage_error_before_training(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("sklearn")
    pytest.importorskip("matplotlib")
    from gradhub.cli import main
    from gradhub_nn_ops import demo

    def no_training(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the demo trained before checking --plot")

    monkeypatch.setattr(demo, "load_digits_split", no_training)
    target = tmp_path / "missing" / "curves.png"
    assert main(["demo", "--epochs", "1", "--max-batches", "1", "--plot", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gradhub demo: error: --plot: cannot write")
    assert "does not exist; create it" in err and "Traceback" not in err
    for bad, words in (
        (str(tmp_path / "c.nosuchformat"), "does not write .nosuchformat"),
        (str(tmp_path), "is a folder"),
    ):
        assert main(["demo", "--plot", bad]) == 2
        assert words in capsys.readouterr().err


def test_demo_plot_failing_at_the_end_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("sklearn")
    pytest.importorskip("matplotlib")
    import json

    from gradhub.cli import main
    from gradhub_nn_ops import demo

    def full_disk(result: Any, path: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(demo, "save_plot", full_disk)
    png = tmp_path / "c.png"
    args = ["demo", "--epochs", "1", "--max-batches", "2", "--plot", str(png), "--json"]
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert err.startswith("gradhub demo: error: --plot: could not save the curves to")
    assert "No space left on device" in err and "Traceback" not in err
    assert json.loads(out)["epochs"] == 1  # the results of the run are still printed


# -- F6: a closed standard output is not the status of a failing audit -------------------------


@pytest.mark.parametrize(
    "args",
    [["registry"], ["registry", "--json"], ["plugins"], ["audit", "-k", "Neg,Sin", "--order", "1"]],
)
def test_closed_stdout_ends_with_141_not_1(args: list[str]) -> None:
    import subprocess
    import sys

    p = subprocess.Popen(
        [sys.executable, "-m", "gradhub.cli", *args]
        + (["--no-progress"] if args[0] == "audit" else []),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert p.stdout is not None
    p.stdout.close()  # before the command writes anything: every write meets a closed pipe
    p.stdout = None
    _, err_bytes = p.communicate(timeout=120)
    err = err_bytes.decode()
    assert p.returncode == 141, err
    assert "Traceback" not in err and "Exception ignored" not in err


# -- F3: a missing function names the installed plugins that were left out --------------------

REVLIKE = """
    from gradhub import hookimpl

    @hookimpl
    def gradhub_add_functions(register):
        register.function("RevCubeLike", lambda xp, x: x ** 3)
"""


def _make_dist(root: Path, dist: str, module: str, code: str, ep_name: str) -> None:
    import textwrap

    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[gradhub.plugins]\n{ep_name} = {module}\n")
    (root / f"{module}.py").write_text(textwrap.dedent(code))


@pytest.mark.parametrize(
    ("env", "status"),
    [
        ({"GRADHUB_DISABLE_PLUGIN_AUTOLOAD": "1"}, "autoload off"),
        ({"GRADHUB_PLUGINS": "nn_ops"}, "not selected by GRADHUB_PLUGINS"),
    ],
)
def test_missing_function_lists_the_left_out_plugins(
    site: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], status: str
) -> None:
    from gradhub.errors import FunctionNotFoundError

    _make_dist(site, "gradhub-revlike", "revlike_plugin", REVLIKE, "revlike")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(FunctionNotFoundError) as info:
        REGISTRY.get("rev_cube_like")
    msg = str(info.value)
    assert f"revlike (gradhub-revlike 1.0, {status})" in msg
    assert "one of which may provide it" in msg
    assert "gradhub.plugins.load_plugins(extra=[(" in msg  # how to load one in the program
    # the advice works: selecting it with GRADHUB_PLUGINS loads the function
    selected = msg.split("GRADHUB_PLUGINS=")[-1].split(";")[0].split()[0]
    assert "revlike" in selected.split(",")
    monkeypatch.delenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.setenv("GRADHUB_PLUGINS", selected)
    plugins.reset()
    assert REGISTRY.get("rev_cube_like").provider.distribution == "gradhub-revlike"


def test_missing_function_with_everything_loaded_names_no_plugin(site: Path) -> None:
    from gradhub.errors import FunctionNotFoundError

    with pytest.raises(FunctionNotFoundError) as info:
        REGISTRY.get("no_such_fn")
    assert "left out" not in str(info.value)


# -- F7: an empty -k is a usage error -----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["-k", ""], "--functions"),
        (["-k", " , "], "--functions"),
        (["-k", "Neg", "--device", ""], "--device"),
    ],
)
def test_audit_with_an_empty_selection_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], args: list[str], option: str
) -> None:
    from gradhub.cli import main

    assert main(["audit", "--order", "1", "--no-progress", *args]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"gradhub audit: error: {option}: empty selection")
    assert out == ""  # nothing was audited


# -- F8: a forward mismatch is shown as such in the registry -----------------------------------


def test_forward_mismatch_is_recorded_as_order_0(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from gradhub.cli import main
    from gradhub.registry import Sample

    def samples(rng: Any) -> Iterator[Sample]:
        yield Sample((rng.standard_normal(3),), name="(3,)")

    def reg(r: Any) -> None:
        r.function(
            "BadRef", _identity, rule=_id_rule, samples=samples, reference=lambda x: x + 1.0
        )  # the kernel is right, the reference is not

    rec, _ = _load("badref", _plugin("badref", functions=reg))
    assert rec.status == "loaded", rec.error
    assert main(["audit", "--device", "cpu", "-k", "BadRef,Neg", "--json"]) == 1
    by = {r["function"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    assert by["BadRef"]["failed"] == 0 and by["BadRef"]["verdict"] == "forward mismatch"
    assert REGISTRY.get("BadRef").status() == "failed (cpu@0)"
    assert REGISTRY.get("Neg").status() == "verified cpu<=3"
    assert main(["registry", "--json"]) == 0
    rows = {r["function"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["BadRef"]["status"] == "failed (cpu@0)"
