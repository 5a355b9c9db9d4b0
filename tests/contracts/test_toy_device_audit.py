"""The documentation's toy device passes the audit for every registered function.

docs/device-plugins.md presents the toy device as going through every step a real device does and
the audit as the acceptance test of a device plugin, so the audit on "toy" must pass for the
function library too, not only for the core functions. Kernels that scatter-add (``GetItem``'s
and ``Pad``'s backward, ``EmbedBackward``) need ``xp.add.at``: the toy's ``xp`` must keep numpy's
ufunc methods, and the kernels must not assume that an ``xp`` other than numpy is CuPy.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradhub
import gradhub.plugins
import numpy as np
import pytest
from gradhub.audit import check_function
from gradhub.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "docs" / "examples" / "gradhub-toy-device"

# the functions whose kernels scatter-add with duplicate indices (each failed before: no cupyx)
SCATTERING = ("Embed", "EmbedBackward", "GetItem", "GetItemBackward", "Pad")


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The installed plugins plus the toy device plugin, loaded in-process (as the docs do)."""
    monkeypatch.syspath_prepend(str(TOY))
    monkeypatch.delenv("GRADHUB_TOY_DEVICE_OFF", raising=False)
    monkeypatch.delenv("GRADHUB_BLOCK_PLUGINS", raising=False)
    monkeypatch.delenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    module = importlib.import_module("gradhub_toy_device.plugin")
    gradhub.plugins.reset()
    records = {r.name: r for r in gradhub.plugins.load_plugins(extra=[("toy_device", module)])}
    assert records["toy_device"].status == "loaded", records["toy_device"].error
    yield module
    gradhub.plugins.reset()


def test_toy_xp_keeps_ufunc_methods(toy: Any) -> None:
    xp = toy.toy_xp
    out = xp.zeros(4)
    assert type(out) is toy.ToyArray
    xp.add.at(out, np.array([1, 1, 3]), np.array([1.0, 2.0, 5.0]))
    assert type(out) is toy.ToyArray
    np.testing.assert_array_equal(np.asarray(out), [0.0, 3.0, 0.0, 5.0])
    # calling the ufunc and its other methods still gives toy arrays
    assert type(xp.add(np.ones(2), 1.0)) is toy.ToyArray
    assert type(xp.add.reduce(np.ones((2, 3)), axis=0)) is toy.ToyArray
    assert type(xp.multiply.outer(np.ones(2), np.ones(3))) is toy.ToyArray
    assert type(xp.maximum.accumulate(np.arange(3.0))) is toy.ToyArray
    assert xp.add.nin == 2 and xp.add.__name__ == "add"
    # numbers are not tagged
    assert type(xp.add(1.0, 2.0)) is not toy.ToyArray


@pytest.mark.parametrize("name", SCATTERING)
def test_scattering_functions_pass_the_audit_on_toy(toy: Any, name: str) -> None:
    if name not in REGISTRY.functions:
        pytest.skip(f"{name} is not registered (gradhub-nn-ops not installed)")
    r = check_function(REGISTRY.get(name), device="toy", order=2, record=False)
    assert r.ok and r.verified == 2, f"{name} on toy: {r.error}"


def test_every_registered_function_passes_the_audit_on_toy(toy: Any) -> None:
    # ToDevice included: its output is on another device than its input, so the gradient check
    # seeds each output on its own device
    names = list(REGISTRY.functions)
    assert len(names) >= 10
    failures = {}
    for name in names:
        r = check_function(REGISTRY.get(name), device="toy", order=2, record=False)
        if not r.ok:
            failures[name] = r.error
    assert not failures, failures


def test_scatter_kernels_have_no_device_branch() -> None:
    """The op files use ``xp`` only: no CuPy import in the kernels that scatter-add."""
    ops = ROOT / "plugins" / "nn_ops" / "gradhub_nn_ops"
    core = ROOT / "core" / "gradhub" / "builtin"
    for path in (ops / "shape.py", ops / "embedding.py", core / "indexing.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+cupy", text, re.M), path.name
