"""``gradhub_compat.nnabla.backward_functions``: ``register`` replacing a rule for every user of
the engine (also on a composite), its errors (the same signature check as ``gh.register``), and
the registry mapping and ``show_registry``.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import gradhub as gh
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.backward_functions as B
import numpy as np
import pytest
from compat.nnabla.helpers import _var
from gradhub.registry import REGISTRY, check_rule_signature
from numeric_helpers import central_differences
from plugin_helpers import leaky_relu_backward, old_rule


@pytest.fixture
def restore_neg_rule() -> Iterator[None]:
    fdef = REGISTRY.get("Neg")
    rule, overrides, audit = fdef.rule, list(fdef.overrides), dict(fdef.audit)
    yield
    fdef.rule, fdef.overrides, fdef.audit = rule, overrides, audit


def test_register_replaces_a_rule_for_every_engine_user(restore_neg_rule: None) -> None:
    def neg_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):  # type: ignore[no-untyped-def]
        return grad_outputs[0] * -3.0  # deliberately not -1: shows which rule ran

    B.register("Neg", neg_backward)  # no override flag needed, as in nnabla
    x = _var([1.0, 2.0])
    (g,) = nn.grad([-x], [x])
    np.testing.assert_allclose(g.d, [-3.0, -3.0])
    xn = gh.Variable(np.array([1.0, 2.0]))
    (gn,) = gh.grad([-xn], [xn])  # the native engine uses it too
    np.testing.assert_allclose(gn.d, [-3.0, -3.0])
    (-x).backward()
    np.testing.assert_allclose(x.g, [-3.0, -3.0])
    row = next(r for r in gh.registry_table() if r["function"] == "Neg")
    assert row["rule_provider"] == f"module {__name__}"
    assert row["overrides"] and row["overrides"][-1].endswith(f"module {__name__}")
    assert B.registry["Neg"] is neg_backward


def test_register_errors() -> None:
    def old_style(inputs, **kwargs):  # type: ignore[no-untyped-def]
        return inputs

    with pytest.raises(TypeError, match=r"register\('Neg'\): the backward function must take"):
        B.register("Neg", old_style)
    with pytest.raises(TypeError, match="func must be callable"):
        B.register("Neg", 3)  # type: ignore[arg-type]
    with pytest.raises(gh.FunctionNotFoundError, match="NoSuchFunction"):
        B.register("NoSuchFunction", lambda *a, **k: None)


def test_registry_mapping_and_show_registry() -> None:
    assert "Add2" in B.registry and len(B.registry) > 5
    assert "Add2" in list(B.registry)
    assert "backward rule registry" in repr(B.registry)
    buf = io.StringIO()
    B.show_registry(file=buf)
    text = buf.getvalue()
    assert "function" in text.splitlines()[0] and "Add2" in text


@pytest.mark.usefixtures("fresh_plugins")
def test_nnabla_register_uses_the_same_check() -> None:
    with pytest.raises(
        TypeError,
        match=r"nnabla\.backward_functions\.register\('Tanh'\): the "
        r"backward function must take",
    ):
        B.register("Tanh", old_rule)
    with pytest.raises(TypeError, match="takes 1 positional"):
        check_rule_signature(old_rule, "Tanh", "here")


@pytest.mark.usefixtures("fresh_plugins")
def test_nnabla_compat_register_on_a_composite() -> None:
    """Formerly: B.register("LeakyReLU", ...) raised "it takes no rule"."""
    import gradhub.functions as F

    B.register("LeakyReLU", leaky_relu_backward)
    x0 = np.array([-2.0, 1.5])
    x = gh.Variable(x0.copy())
    (g,) = gh.grad([F.sum(F.leaky_relu(x, 0.3))], [x])
    np.testing.assert_allclose(
        g.d,
        central_differences(lambda a: float(np.sum(F.leaky_relu(gh.Variable(a), 0.3).d)), x0),
        rtol=1e-7,
    )
