""" "Did you mean" suggestions (gradhub.registry.did_you_mean) for unknown function names and
keyword arguments, and the hint of a duplicate registration (override=True or another name)."""

from __future__ import annotations

import types

import gradhub as gh
import gradhub.functions as F
import pytest
from gradhub import plugins
from gradhub.errors import PluginLoadWarning
from gradhub.registry import REGISTRY, did_you_mean


def test_did_you_mean():
    assert did_you_mean("sigmod", ["sigmoid", "softmax", "tanh"]) == " (did you mean 'sigmoid'?)"
    assert did_you_mean("SUM", ["Sum", "sum2"]) == " (did you mean 'Sum' or 'sum2'?)"
    assert did_you_mean("zzz", ["sigmoid", "tanh"]) == ""
    assert did_you_mean("x", []) == ""


def test_unknown_function_names_get_suggestions_in_their_style():
    # core functions only: Sum, Reshape... are the core's own
    with pytest.raises(
        AttributeError, match=r"no function 'reshap' is registered \(did you mean 'reshape'"
    ):
        _ = F.reshap
    with pytest.raises(
        gh.FunctionNotFoundError,
        match=r"no function 'Reshap' is registered \(did you mean 'Reshape'",
    ):
        gh.ops.call("Reshap", gh.Variable([1.0]))
    with pytest.raises(
        gh.FunctionNotFoundError, match=r"no function 'Reshap' .*did you mean 'Reshape'"
    ):
        REGISTRY.get("Reshap")
    with pytest.raises(gh.FunctionNotFoundError) as e:
        REGISTRY.get("qqqqqq")
    assert "did you mean" not in str(e.value)


def test_unknown_keyword_gets_a_suggestion():
    x = gh.Variable([[1.0, 2.0]])
    with pytest.raises(
        TypeError,
        match=r"sum\(\) got an unexpected keyword argument 'keepdim' \(did you mean 'keepdims'\?\)",
    ):
        F.sum(x, axis=0, keepdim=True)
    with pytest.raises(TypeError, match=r"sum\(\) got an unexpected keyword argument 'zzz'$"):
        F.sum(x, zzz=1)


@pytest.mark.nn_ops
def test_unknown_keyword_of_a_variadic_function():
    a = gh.Variable([1.0])
    with pytest.raises(
        TypeError,
        match=r"concatenate\(\) got unexpected keyword argument\(s\) \['axsi'\] "
        r"\(did you mean 'axis'\?\)",
    ):
        F.concatenate(a, a, axsi=0)


def test_duplicate_registration_suggests_override_or_another_name(fresh_plugins):
    mod = types.ModuleType("dup_plugin")

    @gh.hookimpl
    def gradhub_add_functions(register: plugins.FunctionRegistrar) -> None:
        register.function("Reshape", lambda xp, x: x, rule=None)

    mod.gradhub_add_functions = gradhub_add_functions  # type: ignore[attr-defined]
    with pytest.warns(
        PluginLoadWarning,
        match=r"duplicate function 'Reshape': already registered by gradhub.*; pass "
        r"override=True to replace it, or register it under another name",
    ):
        plugins.load_plugins(extra=[("dup_plugin", mod)])
    assert REGISTRY.functions["Reshape"].provider.distribution == "gradhub"
