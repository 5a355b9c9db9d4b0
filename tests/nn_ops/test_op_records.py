"""gradhub-nn-ops' op records: ``Elementwise`` (one derivative formula for the graph rule and the
array-level first-order rule, through ``VARIABLE_MATH``), ``Comparison``, and the functions whose
two rules come from one formula (MaximumScalar, MinimumScalar, Clip, RSubScalar, ReLU6,
HardTanh)."""

from __future__ import annotations

import doctest
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub.plugins import ensure_loaded
from gradhub.registry import REGISTRY
from gradhub_nn_ops import activations, math
from gradhub_nn_ops.math import COMPARISONS, ELEMENTWISE, VARIABLE_MATH, Elementwise

_NAMES = [op.name for op in ELEMENTWISE]

#: (function, its formula, attrs, where the inputs are drawn)
_FORMULAS: list[tuple[str, Any, dict[str, Any], tuple[float, float]]] = [
    ("MaximumScalar", math._d_maximum_scalar, {"val": 0.25}, (-2, 2)),
    ("MinimumScalar", math._d_minimum_scalar, {"val": 0.25}, (-2, 2)),
    ("Clip", math._d_clip, {"min": -1.0, "max": 1.0}, (-2, 2)),
    ("Clip", math._d_clip, {"min": None, "max": 0.5}, (-2, 2)),
    ("Clip", math._d_clip, {"min": -0.5, "max": None}, (-2, 2)),
    ("Clip", math._d_clip, {"min": None, "max": None}, (-2, 2)),
    ("RSubScalar", math._d_r_sub_scalar, {"val": 1.5}, (-2, 2)),
    ("ReLU6", activations._d_relu6, {}, (-2, 8)),
    ("HardTanh", activations._d_hard_tanh, {}, (-2, 2)),
]


def _io(name: str, lo: float, hi: float, dtype: Any, attrs: dict[str, Any]) -> tuple[Any, ...]:
    rng = np.random.default_rng(7)
    x = rng.uniform(lo, hi, (3, 4)).astype(dtype)
    x[0, 0] = 0.25  # a tie with the bounds used above
    g = rng.standard_normal((3, 4)).astype(dtype)
    y = REGISTRY.get(name).forward(np, x, **attrs)
    return g, x, y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", _NAMES)
def test_one_formula_gives_the_same_gradient_on_arrays_and_on_variables(
    name: str, dtype: Any
) -> None:
    op = next(o for o in ELEMENTWISE if o.name == name)
    g, x, y = _io(name, *op.domain, dtype, {})
    on_arrays = op.derivative(np, g, x, y)
    on_vars = op.derivative(VARIABLE_MATH, gh.Variable(g), gh.Variable(x), gh.Variable(y))
    assert isinstance(on_vars, gh.Variable)
    assert on_arrays.dtype == on_vars.dtype == dtype
    np.testing.assert_array_equal(on_vars.d, on_arrays)


@pytest.mark.parametrize(
    ("name", "formula", "attrs", "domain"), _FORMULAS, ids=[f"{n}{a}" for n, _, a, _ in _FORMULAS]
)
def test_mask_formulas_give_the_same_gradient_on_arrays_and_on_variables(
    name: str, formula: Any, attrs: dict[str, Any], domain: tuple[float, float]
) -> None:
    g, x, y = _io(name, *domain, np.float32, attrs)
    on_arrays = formula(np, g, x, y, **attrs)
    on_vars = formula(VARIABLE_MATH, gh.Variable(g), gh.Variable(x), gh.Variable(y), **attrs)
    assert on_arrays.dtype == on_vars.dtype == np.float32
    np.testing.assert_array_equal(on_vars.d, on_arrays)


@pytest.mark.parametrize("name", _NAMES + sorted({n for n, *_ in _FORMULAS}))
def test_the_engine_calls_the_formula_itself_for_first_order_backward(name: str) -> None:
    # the fast rule costs the formula's array operations and nothing more: no wrapper between
    ensure_loaded()
    rule = REGISTRY.get(name).rule
    assert rule is not None and rule.fast1 is not None
    op = next((o for o in ELEMENTWISE if o.name == name), None)
    if op is not None:
        assert rule.fast1 is op.derivative
        assert rule.fast1.__name__ == f"d_{op.snake}"


def test_uses_says_what_the_graph_keeps() -> None:
    ensure_loaded()
    for op in ELEMENTWISE:
        rule = REGISTRY.get(op.name).rule
        assert rule is not None
        assert rule.need_inputs == ((0,) if "x" in op.uses else ()), op.name
        assert rule.need_outputs == ((0,) if "y" in op.uses else ()), op.name
    assert next(o for o in ELEMENTWISE if o.name == "Tanh").uses == "y"


def test_variable_math_calls_the_registered_functions() -> None:
    x = gh.Variable([0.5, -1.0])
    for attr, name in (
        ("cos", "Cos"),
        ("sin", "Sin"),
        ("exp", "Exp"),
        ("cosh", "Cosh"),
        ("sinh", "Sinh"),
        ("tanh", "Tanh"),
        ("sqrt", "Sqrt"),
    ):
        v = getattr(VARIABLE_MATH, attr)(gh.Variable([0.5, 2.0]))
        assert v.creator is not None and v.creator.fdef.name == name
    mask = VARIABLE_MATH.greater_equal(x, 0.0)
    assert mask.creator is not None and mask.creator.fdef.name == "GreaterEqualScalar"
    assert not mask.need_grad
    mask = VARIABLE_MATH.less(x, gh.Variable([0.0, 0.0]))
    assert mask.creator is not None and mask.creator.fdef.name == "Less"
    np.testing.assert_array_equal(mask.d, np.array([0.0, 1.0], dtype=np.float32))


def test_variable_math_docstring_example_runs() -> None:
    doc = math.VariableMath.__doc__ or ""
    test = doctest.DocTestParser().get_doctest(doc, {}, "VariableMath", None, 0)
    out: list[str] = []
    result = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE).run(
        test, out=out.append
    )
    assert result.attempted > 0 and result.failed == 0, "".join(out)


def test_a_formula_is_differentiable_again() -> None:
    # d/dx of tanh's rule g * (1 - y*y), with g = 1: -2 y (1 - y^2)
    x = gh.Variable([0.3, -0.7], need_grad=True)
    (gx,) = gh.grad([gh.functions.tanh(x).sum()], [x], create_graph=True)
    (ggx,) = gh.grad([gx.sum()], [x])
    y = np.tanh(np.array([0.3, -0.7]))
    np.testing.assert_allclose(ggx.d, -2 * y * (1 - y * y), rtol=1e-6)


def test_elementwise_fields_are_keywords_and_checked() -> None:
    fields = {
        "name": "Twice",
        "kernel": lambda xp, x: 2 * x,
        "derivative": lambda F, g, x, y: g * 2.0,
        "reference": lambda x: 2 * x,
        "domain": (-1.0, 1.0),
        "doc": "twice(x)",
    }
    op = Elementwise(uses="", **fields)
    assert op.snake == "twice" and op.derivative.__name__ == "d_twice"
    assert "Twice" in repr(op)
    with pytest.raises(TypeError):
        Elementwise("Twice", *fields.values())  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"Elementwise\('Twice'\): 'uses' must name 'x'"):
        Elementwise(uses="z", **fields)


def test_comparison_records_register_both_functions_with_their_examples() -> None:
    ensure_loaded()
    assert [c.name for c in COMPARISONS] == [
        "Greater",
        "GreaterEqual",
        "Less",
        "LessEqual",
        "Equal",
        "NotEqual",
    ]
    for c in COMPARISONS:
        for name in (c.name, c.name + "Scalar") if c.scalar else (c.name,):
            fdef = REGISTRY.get(name)
            assert fdef.status() == "non-differentiable"
            assert f"array({c.example}, dtype=float32)" in (fdef.api.__doc__ or "")
            assert f"x0 {c.symbol} " in (fdef.api.__doc__ or "")
