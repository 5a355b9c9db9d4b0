"""The op matrix: every registered function on every usable device.

Samples travel with each function (``register.function(..., samples=...)``). For each one this runs
the forward pass against the function's numpy reference (float64, and float32 dtype preservation)
and gradcheck in float64 to order 2, or 3 for elementwise functions. Results are recorded in the
registry, as ``gradhub audit`` does. Every function with a native JVP rule (forward mode) also
gets a JVP case: its rule on each sample against central differences, the transposed backward
rule and, for its derivative, the transposed path (:func:`gradhub.audit.check_jvp`).
"""

from __future__ import annotations

import pytest
from gradhub.audit import check_forward, check_gradients, check_jvp, samples_of
from gradhub.registry import REGISTRY, _ensure_loaded


def _functions() -> list[str]:
    _ensure_loaded()
    return sorted(REGISTRY.functions)


def _devices() -> list[str]:
    _ensure_loaded()
    return REGISTRY.usable_devices()


def _cases() -> list[tuple[str, str]]:
    return [(d, f) for d in _devices() for f in _functions()]


@pytest.mark.parametrize(("device", "name"), _cases())
def test_op_matrix(device: str, name: str) -> None:
    fdef = REGISTRY.get(name)
    samples = samples_of(fdef)
    assert samples, f"{name} (from {fdef.provider}) carries no samples"
    dev = REGISTRY.device_type(device).get(0)
    order = 3 if fdef.elementwise else 2
    for s in samples:
        check_forward(fdef, s, dev)
        if fdef.differentiable:
            check_gradients(fdef, s, dev, min(order, s.max_order or order))


def _jvp_cases() -> list[tuple[str, str]]:
    return [(d, f) for d, f in _cases() if REGISTRY.functions[f].jvp_rule is not None]


@pytest.mark.parametrize(("device", "name"), _jvp_cases())
def test_op_matrix_jvp(device: str, name: str) -> None:
    fdef = REGISTRY.get(name)
    dev = REGISTRY.device_type(device).get(0)
    for s in samples_of(fdef):
        check_jvp(fdef, s, dev, order=2)


@pytest.mark.parametrize("name", _functions())
def test_kinks_are_avoided_by_samples(name: str) -> None:
    """Samples keep differentiable inputs away from the kinks their function declares."""
    import numpy as np

    fdef = REGISTRY.get(name)
    if not fdef.kinks or not fdef.elementwise or len(fdef.inputs) != 1:
        return
    for s in samples_of(fdef):
        for a in s.inputs:
            a = np.asarray(a)
            if a.dtype.kind == "f" and a.size:
                for k in fdef.kinks:
                    assert np.min(np.abs(a - k)) > 1e-3, f"{name}[{s.name}] sample near kink {k}"


def _batched() -> list[str]:
    _ensure_loaded()
    return [n for n in _functions() if REGISTRY.functions[n].batch_rule is not None]


@pytest.mark.parametrize("name", _batched())
def test_batching_rule_matches_the_loop(name: str) -> None:
    """Every batching rule, on each sample of its function batched (3 variations of the
    sample; all inputs batched, then each alone), equals the loop over the batch (float64)."""
    from gradhub.audit import check_batching

    fdef = REGISTRY.get(name)
    dev = REGISTRY.device_type("cpu").get(0)
    for s in samples_of(fdef):
        check_batching(fdef, s, dev)
