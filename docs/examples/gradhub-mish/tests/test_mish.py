"""Tests of gradhub-mish, as the plugin's author runs them (with the distribution installed).

``pytest tests/`` in this folder, with gradhub, gradhub-nn-ops and gradhub-mish installed.
"""

from __future__ import annotations

import math

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.audit import check_function
from gradhub.registry import REGISTRY


def test_mish_is_registered_by_this_distribution() -> None:
    row = next(r for r in gh.registry_table() if r["function"] == "Mish")
    assert (row["provider"], row["version"], row["callable"]) == ("gradhub-mish", "0.1.0", "mish")
    assert row["rule"] == "yes"


def test_values_match_the_formula() -> None:
    xs = [-20.0, -1.0, 0.0, 0.5, 2.0, 20.0]
    got = F.mish(gh.Variable(np.array(xs))).d
    want = [x * math.tanh(math.log1p(math.exp(x))) for x in xs]
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-300)


def test_known_derivatives_at_zero() -> None:
    # mish'(0) = tanh(log 2) = 3/5 and mish''(0) = 2 * sigmoid(0) * (1 - (3/5)**2) = 16/25
    x = gh.Variable(np.array([0.0]))
    (g1,) = gh.grad([F.mish(x)], [x])
    (g2,) = gh.grad([g1], [x])
    assert g1.d[0] == pytest.approx(0.6, abs=1e-15)
    assert g2.d[0] == pytest.approx(0.64, abs=1e-15)


def test_large_inputs_do_not_overflow() -> None:
    x = gh.Variable(np.array([-1000.0, 1000.0], dtype=np.float32))
    y = F.mish(x)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.d, [0.0, 1000.0], atol=1e-30)


def test_audit_to_order_3() -> None:
    result = check_function(REGISTRY.get("Mish"), "cpu", order=3, record=False)
    assert result.ok, result.error
    assert result.verified == 3


def test_integer_input_is_rejected_with_the_argument_named() -> None:
    with pytest.raises(TypeError, match=r"mish\(\).*'x'.*floating-point"):
        F.mish(gh.Variable([1, 2], need_grad=False))
