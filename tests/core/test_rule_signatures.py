"""Backward rule signatures are checked at registration: a rule that cannot take
``(grad_outputs, inputs, input_shapes, outputs, output_shapes, **attrs)`` is refused by
``gh.register``, ``register.function`` and ``register.rule``, naming the function, the rule and
the plugin; a plugin with such a rule fails to load and is rolled back."""

from __future__ import annotations

from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.errors import RegistrationError
from gradhub.registry import REGISTRY
from plugin_helpers import identity_kernel as _identity
from plugin_helpers import identity_rule as _id_rule
from plugin_helpers import in_memory_plugin as _plugin
from plugin_helpers import load_with_warnings as _load
from plugin_helpers import old_rule

pytestmark = pytest.mark.usefixtures("fresh_plugins")


# -- the rule signature is checked at registration ----------------------------------------


@pytest.mark.nn_ops
def test_gh_register_refuses_a_rule_with_too_few_positional_parameters() -> None:
    before = REGISTRY.get("Tanh").rule
    with pytest.raises(TypeError, match=r"register\('Tanh'\).*'old_rule'.*takes 1 positional"):
        gh.register("Tanh", old_rule, override=True)
    with pytest.raises(RegistrationError, match=f"module {__name__}"):
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


@pytest.mark.nn_ops
def test_plugin_function_with_a_wrong_rule_signature_fails_to_load() -> None:
    mod = _plugin("oldstyle", functions=lambda r: r.function("OldStyle", _identity, rule=old_rule))
    rec, msgs = _load("oldstyle", mod)
    assert rec.status == "failed"
    assert "register.function('OldStyle')" in rec.error and "'old_rule'" in rec.error
    assert any("plugin 'oldstyle'" in m and "OldStyle" in m for m in msgs)
    assert "OldStyle" not in REGISTRY.functions
    assert REGISTRY.get("Tanh").rule is not None  # the others are untouched


@pytest.mark.nn_ops
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
