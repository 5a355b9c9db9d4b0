"""``gradhub audit``: an empty selection is a usage error; a forward mismatch is recorded as
order 0."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from gradhub.registry import REGISTRY
from plugin_helpers import identity_kernel as _identity
from plugin_helpers import identity_rule as _id_rule
from plugin_helpers import in_memory_plugin as _plugin
from plugin_helpers import load_with_warnings as _load

pytestmark = pytest.mark.usefixtures("fresh_plugins")


# -- an empty -k is a usage error -----------------------------------------------------------


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


# -- a forward mismatch is shown as such in the registry -----------------------------------


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


# -- a rule no sample checks is not called verified ------------------------------------------


def test_a_rule_no_sample_checks_stays_unverified(capsys: pytest.CaptureFixture[str]) -> None:
    # regression: a function whose samples all skip the derivative (grad_inputs=(): a rule that
    # is deliberately not the derivative, such as a gradient clip) was reported "verified to
    # order 2" and shown as verified by the registry, though no derivative was checked
    import json

    from gradhub.cli import main
    from gradhub.registry import Sample

    def samples(rng: Any) -> Iterator[Sample]:
        yield Sample((rng.standard_normal(3),), grad_inputs=(), name="(3,) forward only")

    def reg(r: Any) -> None:
        r.function("Unchecked", _identity, rule=_id_rule, samples=samples, reference=lambda x: x)

    rec, _ = _load("unchecked", _plugin("unchecked", functions=reg))
    assert rec.status == "loaded", rec.error
    assert main(["audit", "--device", "cpu", "-k", "Unchecked", "--json"]) == 0
    (res,) = json.loads(capsys.readouterr().out)["results"]
    assert res["verdict"] == "forward ok, unverified (no sample checks a derivative)"
    assert res["verified"] == 0
    assert REGISTRY.get("Unchecked").status() == "unverified"
