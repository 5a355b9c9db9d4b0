"""``register.function`` and ``gh.register`` check names, indices, need_inputs and keyword
names; every registered function passes the checks."""

from __future__ import annotations

from typing import Any

import gradhub as gh
import pytest
from gradhub import plugins
from gradhub.errors import RegistrationError
from gradhub.registry import REGISTRY, check_rule_signature
from plugin_helpers import identity_kernel as _identity
from plugin_helpers import identity_rule as _id_rule
from plugin_helpers import in_memory_plugin as _plugin
from plugin_helpers import load_with_warnings as _load

pytestmark = pytest.mark.usefixtures("fresh_plugins")


# -- names and need_inputs/need_outputs are checked ----------------------------------------


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


@pytest.mark.nn_ops
def test_every_registered_function_passes_the_checks() -> None:
    from gradhub.registry import check_function_name, check_needs

    plugins.ensure_loaded()
    assert len(REGISTRY.functions) > 100
    for name, f in REGISTRY.functions.items():
        check_function_name(name, f.snake, "test")
        if f.rule is not None:
            check_rule_signature(f.rule.fn, name, "test", attrs=f.attrs)
            check_needs(f, f.rule.need_inputs, f.rule.need_outputs, "test")
