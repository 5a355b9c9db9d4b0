"""``Norm`` is a primitive with its own rule (it was a composite of five to six functions).

Its value, its gradient (the array-level first-order rule and the differentiable rule) and its
second derivative are checked against float64 finite differences and known values, including
the zero vector, where the gradient is 0 at every order of the rule's use (as PyTorch).
"""

from __future__ import annotations

import math
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.registry import REGISTRY, _ensure_loaded
from gradhub.testing import gradcheck

PS = [None, 2, 1, 3, 1.5, math.inf]


def V(a: Any) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64))


def test_norm_is_one_recorded_primitive() -> None:
    _ensure_loaded()
    fdef = REGISTRY.get("Norm")
    assert fdef.kind == "primitive"
    assert fdef.rule is not None and fdef.rule.fast is not None
    y = F.norm(V([3.0, -4.0]))
    assert y.creator is not None and y.creator.fdef.name == "Norm"
    assert y.creator.srcs[0].creator is None  # straight from the leaf: no Mul2/Sum/Sqrt chain


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("create_graph", [False, True])
def test_norm_gradient_at_zero_vector_is_zero_in_both_rules(p: Any, create_graph: bool) -> None:
    """create_graph=True runs the differentiable rule, False the array rule; both give 0."""
    x = V(np.zeros((2, 3)))
    x.d[1] = [3.0, -4.0, 0.0]
    (g,) = gh.grad([F.sum(F.norm(x, p=p, axis=1))], [x], create_graph=create_graph)
    np.testing.assert_array_equal(g.d[0], [0.0, 0.0, 0.0])
    q = 2 if p is None else p
    ref = [3.0, -4.0, 0.0] / np.linalg.norm([3.0, -4.0, 0.0], ord=q)
    if q == 1:
        ref = np.sign([3.0, -4.0, 0.0])
    elif q == math.inf:
        ref = np.array([0.0, -1.0, 0.0])
    elif q != 2:
        v = np.array([3.0, -4.0, 0.0])
        ref = np.sign(v) * np.abs(v) ** (q - 1) / np.linalg.norm(v, ord=q) ** (q - 1)
    np.testing.assert_allclose(g.d[1], ref, rtol=1e-12)


@pytest.mark.parametrize("p", PS)
def test_norm_second_derivative_matches_finite_differences(p: Any) -> None:
    r = np.random.default_rng(3)
    x = r.uniform(0.5, 1.5, (2, 3)) * r.choice([-1.0, 1.0], (2, 3))
    x[0, 0] = 2.0  # a unique largest |x| per row for p=inf
    x[1, 2] = -2.0
    assert gradcheck(lambda v: F.norm(v, p=p, axis=1, keepdims=True), [x], order=3)


def test_gradient_penalty_through_norm_matches_finite_differences() -> None:
    """d/dw ||d(sum(tanh(w x)))/dw||: double backward through Norm's rule."""
    r = np.random.default_rng(4)
    xs = r.uniform(-1.0, 1.0, (4, 3))

    def penalty(w: gh.Variable) -> gh.Variable:
        (gw,) = gh.grad([F.sum(F.tanh(F.affine(gh.Variable(xs), w)))], [w], create_graph=True)
        return F.norm(gw)

    assert gradcheck(penalty, [r.uniform(-1.0, 1.0, (3, 2))], order=2)


def test_norm_float32_value_and_gradient_dtype() -> None:
    x = gh.Variable(np.array([3.0, -4.0], np.float32))
    y = F.norm(x)
    assert y.dtype == np.float32
    y.backward()
    assert x.g.dtype == np.float32
    np.testing.assert_allclose(x.g, [0.6, -0.8], rtol=1e-6)


def test_norm_max_norm_ties_split_evenly() -> None:
    x = V([[2.0, -2.0, 1.0]])
    (g,) = gh.grad([F.sum(F.norm(x, p=math.inf, axis=1))], [x])
    np.testing.assert_array_equal(g.d, [[0.5, -0.5, 0.0]])


def test_norm_of_nothing_is_zero() -> None:
    np.testing.assert_array_equal(F.norm(V(np.zeros((2, 0))), p=math.inf, axis=1).d, [0.0, 0.0])
    np.testing.assert_array_equal(F.norm(V(np.zeros((2, 0))), axis=1).d, [0.0, 0.0])


@pytest.mark.parametrize("p", [0, -1, True, "2", float("nan")])
def test_norm_bad_p_names_function_and_argument(p: Any) -> None:
    with pytest.raises(ValueError, match=r"norm\(\): argument 'p'"):
        F.norm(V([1.0]), p=p)


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("create_graph", [False, True])
def test_norm_gradient_keeps_float32_for_every_p(p: Any, create_graph: bool) -> None:
    x = gh.Variable(np.array([[3.0, -4.0, 4.0]], np.float32))
    (g,) = gh.grad([F.sum(F.norm(x, p=p, axis=1))], [x], create_graph=create_graph)
    assert g.dtype == np.float32
