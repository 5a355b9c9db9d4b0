"""nnabla's elementwise functions added to gradhub-nn-ops (acosh ... mul_n), against nnabla.

``CASES`` holds nnabla 1.39's outputs (float32, rounded to 7 decimals) for the inputs given:
``name: (inputs, attrs, output, input gradients for an all-ones output gradient or None)``,
computed with nnabla 1.39.0 (``F.<name>(*inputs, **attrs)``, then ``y.backward()``). The
gradients listed are those where gradhub's native convention and nnabla's agree (no input on a
kink); nnabla's own conventions at kinks are checked in tests/compat/nnabla/test_nnabla_ste.py.
"""

from __future__ import annotations

from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest

NAN = float("nan")
INF = float("inf")

# nnabla 1.39's outputs and gradients for these inputs
CASES = {
    "asinh": (
        [[-2.0, -0.5, 0.0, 0.7, 3.0]],
        {},
        [-1.4436355, -0.4812118, 0.0, 0.6526666, 1.8184465],
        [[0.4472136, 0.8944272, 1.0, 0.8192319, 0.3162278]],
    ),
    "acosh": (
        [[1.5, 2.0, 4.0]],
        {},
        [0.9624237, 1.316958, 2.063437],
        [[0.8944272, 0.5773503, 0.2581989]],
    ),
    "atanh": (
        [[-0.9, -0.5, 0.0, 0.3, 0.8]],
        {},
        [-1.4722193, -0.5493062, 0.0, 0.3095196, 1.0986123],
        [[5.2631564, 1.3333334, 1.0, 1.0989012, 2.7777781]],
    ),
    "hard_sigmoid": (
        [[-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0]],
        {},
        [0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 1.0],
        [[0.0, 0.2, 0.2, 0.2, 0.2, 0.2, 0.0]],
    ),
    "tanh_shrink": (
        [[-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.5]],
        {},
        [-2.0049453, -0.2384058, -0.0378828, 0.0, 0.0378828, 0.2384058, 1.5133858],
        [[0.990134, 0.5800257, 0.2135523, 0.0, 0.2135523, 0.5800257, 0.9734077]],
    ),
    "sinc": (
        [[-2.0, -0.5, 0.0, 0.05, 0.3, 1.0, 2.5]],
        {},
        [0.4546487, 0.9588511, 1.0, 0.9995834, 0.9850674, 0.841471, 0.2393889],
        [[0.4353978, 0.1625371, 0.0, -0.0166619, -0.0991028, -0.3011687, -0.416213]],
    ),
    "celu": (
        [[[-1.0, 0.0, 2.0], [0.5, -0.25, -3.0]]],
        {},
        [
            [-0.6321205, 0.0, 2.0, 1.0, -0.0, -0.8646647],
            [0.5, -0.2211992, -0.950213, -0.3934693, 0.25, 3.0],
        ],
        [[[-0.6321205, 0.0, 0.8646647], [0.3934693, -0.2211992, -0.950213]]],
    ),
    "celu_a2_ax0": (
        [[[-1.0, 0.0, 2.0], [0.5, -0.25, -3.0]]],
        {"alpha": 2.0, "axis": 0},
        [
            [-1.2642411, 0.0, 2.0],
            [0.5, -0.4423984, -1.9004259],
            [1.0, -0.0, -1.7293295],
            [-0.7869387, 0.25, 3.0],
        ],
        [[[-0.2642411, 0.0, 0.7293295], [-0.2130613, 0.5576016, -0.9004259]]],
    ),
    "crelu": (
        [[[-1.0, 0.5, 2.0], [0.5, -0.25, -3.0]]],
        {},
        [[0.0, 0.5, 2.0, 1.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0, 0.25, 3.0]],
        [[[-1.0, 1.0, 1.0], [1.0, -1.0, -1.0]]],
    ),
    "crelu_ax0": (
        [[[-1.0, 0.5, 2.0], [0.5, -0.25, -3.0]]],
        {"axis": 0},
        [[0.0, 0.5, 2.0], [0.5, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.25, 3.0]],
        [[[-1.0, 1.0, 1.0], [1.0, -1.0, -1.0]]],
    ),
    "isnan": ([[NAN, INF, -INF, 1.0, -2.0, 0.0]], {}, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0], None),
    "isinf": ([[NAN, INF, -INF, 1.0, -2.0, 0.0]], {}, [0.0, 1.0, 1.0, 0.0, 0.0, 0.0], None),
    "reset_nan": (
        [[NAN, INF, -INF, 1.0, -2.0, 0.0]],
        {"val": 5.0},
        [5.0, INF, -INF, 1.0, -2.0, 0.0],
        [[0.0, 1.0, 1.0, 1.0, 1.0, 1.0]],
    ),
    "reset_inf": (
        [[NAN, INF, -INF, 1.0, -2.0, 0.0]],
        {"val": 5.0},
        [NAN, 5.0, 5.0, 1.0, -2.0, 0.0],
        [[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]],
    ),
    "logical_and": (
        [[0.0, 0.0, 1.0, -2.0, 0.5], [0.0, 3.0, 0.0, -1.0, 0.0]],
        {},
        [0.0, 0.0, 0.0, 1.0, 0.0],
        None,
    ),
    "logical_and_scalar": (
        [[0.0, 0.0, 1.0, -2.0, 0.5]],
        {"val": True},
        [0.0, 0.0, 1.0, 1.0, 1.0],
        None,
    ),
    "logical_and_scalar_false": (
        [[0.0, 0.0, 1.0, -2.0, 0.5]],
        {"val": False},
        [0.0, 0.0, 0.0, 0.0, 0.0],
        None,
    ),
    "logical_or": (
        [[0.0, 0.0, 1.0, -2.0, 0.5], [0.0, 3.0, 0.0, -1.0, 0.0]],
        {},
        [0.0, 1.0, 1.0, 1.0, 1.0],
        None,
    ),
    "logical_or_scalar": (
        [[0.0, 0.0, 1.0, -2.0, 0.5]],
        {"val": True},
        [1.0, 1.0, 1.0, 1.0, 1.0],
        None,
    ),
    "logical_or_scalar_false": (
        [[0.0, 0.0, 1.0, -2.0, 0.5]],
        {"val": False},
        [0.0, 0.0, 1.0, 1.0, 1.0],
        None,
    ),
    "logical_xor": (
        [[0.0, 0.0, 1.0, -2.0, 0.5], [0.0, 3.0, 0.0, -1.0, 0.0]],
        {},
        [0.0, 1.0, 1.0, 0.0, 1.0],
        None,
    ),
    "logical_xor_scalar": (
        [[0.0, 0.0, 1.0, -2.0, 0.5]],
        {"val": True},
        [1.0, 1.0, 0.0, 0.0, 0.0],
        None,
    ),
    "logical_xor_scalar_false": (
        [[0.0, 0.0, 1.0, -2.0, 0.5]],
        {"val": False},
        [0.0, 0.0, 1.0, 1.0, 1.0],
        None,
    ),
    "logical_not": ([[0.0, 0.0, 1.0, -2.0, 0.5]], {}, [1.0, 1.0, 0.0, 0.0, 0.0], None),
    "mod2": (
        [[5.5, -5.5, 5.5, -5.5, 3.0], [2.0, 2.0, -2.0, -2.0, 1.5]],
        {},
        [1.5, -1.5, 1.5, -1.5, 0.0],
        None,
    ),
    "mod2_fmod": (
        [[5.5, -5.5, 5.5, -5.5], [2.0, 2.0, -2.0, -2.0]],
        {"fmod": True},
        [1.5, -1.5, 1.5, -1.5],
        None,
    ),
    "add_n": (
        [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
        {},
        [9.0, 12.0],
        [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]],
    ),
    "mul_n": (
        [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
        {},
        [15.0, 48.0],
        [[15.0, 24.0], [5.0, 12.0], [3.0, 8.0]],
    ),
    "round": (
        [[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.7, 0.7, 1.2, 2.0]],
        {},
        [-3.0, -2.0, -1.0, 1.0, 2.0, 3.0, -1.0, 1.0, 1.0, 2.0],
        None,
    ),
    "ceil": (
        [[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.7, 0.7, 1.2, 2.0]],
        {},
        [-2.0, -1.0, -0.0, 1.0, 2.0, 3.0, -0.0, 1.0, 2.0, 2.0],
        None,
    ),
    "floor": (
        [[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.7, 0.7, 1.2, 2.0]],
        {},
        [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, -1.0, 0.0, 1.0, 2.0],
        None,
    ),
}


#: functions gradhub (like nnabla) does not differentiate
NON_DIFFERENTIABLE = ("isnan", "isinf", "logical_", "mod2", "round", "ceil", "floor")


def _call(name: str, xs: list[Any], attrs: dict[str, Any]) -> tuple[Any, list[Any]]:
    fname = name.removesuffix("_false").removesuffix("_fmod").removesuffix("_a2_ax0")
    fname = fname.removesuffix("_ax0")
    diff = not fname.startswith(NON_DIFFERENTIABLE)
    vs = [gh.Variable(np.array(x, dtype=np.float32), need_grad=diff) for x in xs]
    return getattr(F, fname)(*vs, **attrs), vs


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_nnabla(name: str) -> None:
    xs, attrs, want, grads = CASES[name]
    y, vs = _call(name, xs, attrs)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.d, np.array(want), rtol=1e-6, atol=1e-6, equal_nan=True)
    if grads is None:
        assert not y.need_grad
        return
    y.backward(np.ones(y.shape, dtype=np.float32))
    for v, g in zip(vs, grads):
        assert v.g.dtype == np.float32
        np.testing.assert_allclose(v.g, np.array(g), rtol=1e-6, atol=1e-6)


def test_output_shape_of_concatenated_activations() -> None:
    x = gh.Variable(np.ones((2, 3, 4), dtype=np.float32))
    assert F.celu(x).shape == (2, 6, 4)
    assert F.crelu(x, axis=-1).shape == (2, 3, 8)
    assert F.celu(x, 0.5, 0).shape == (4, 3, 4)
    with pytest.raises(ValueError, match="axis"):
        F.crelu(x, axis=3)


def test_mod2_integers_follow_numpy_mod_unless_fmod() -> None:
    # nnabla 1.39, int32 inputs [5, -5, 5, -5] and [3, 3, -3, -3]: [2, 1, -1, -2]; fmod=True:
    # [2, -2, 2, -2]
    a = gh.Variable(np.array([5, -5, 5, -5], dtype=np.int32), need_grad=False)
    b = gh.Variable(np.array([3, 3, -3, -3], dtype=np.int32), need_grad=False)
    assert F.mod2(a, b).d.tolist() == [2, 1, -1, -2]
    assert F.mod2(a, b, fmod=True).d.tolist() == [2, -2, 2, -2]


def test_round_halves_away_from_zero_in_float64() -> None:
    x = gh.Variable(np.array([-2.5, -0.5, 0.5, 2.5, 0.49999999999999994, np.inf, np.nan]))
    np.testing.assert_array_equal(F.round(x).d, [-3.0, -1.0, 1.0, 3.0, 0.0, np.inf, np.nan])


def test_rounding_is_not_differentiable_natively() -> None:
    x = gh.Variable(np.array([0.3, 1.7]))
    for fn in (F.round, F.ceil, F.floor):
        assert not fn(x).need_grad


def test_logical_results_are_float32_for_integer_inputs() -> None:
    a = gh.Variable(np.array([0, 2, 0]), need_grad=False)
    b = gh.Variable(np.array([True, True, False]), need_grad=False)
    assert F.logical_or(a, b).d.dtype == np.float32
    np.testing.assert_array_equal(F.logical_or(a, b).d, [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(F.logical_not(a).d, [1.0, 0.0, 1.0])
    with pytest.raises(TypeError, match="val"):
        F.logical_and_scalar(a)


def test_sinc_is_smooth_at_zero() -> None:
    x = gh.Variable(np.array([0.0, 1e-3, 0.1, 1e20]))
    (g,) = gh.grad([F.sum(F.sinc(x))], [x], create_graph=True)
    (h,) = gh.grad([F.sum(g)], [x])
    np.testing.assert_allclose(g.d[:3], [0.0, -1e-3 / 3, (np.cos(0.1) - np.sin(0.1) / 0.1) / 0.1])
    assert np.isfinite(g.d[3])
    np.testing.assert_allclose(h.d[0], -1.0 / 3.0)


def test_n_ary_functions() -> None:
    a = gh.Variable(np.array([0.0, 2.0]))
    b = gh.Variable(np.array([3.0, 0.0]))
    F.sum(F.mul_n([a, b, gh.Variable(np.array([5.0, 6.0]))])).backward()
    np.testing.assert_array_equal(a.g, [15.0, 0.0])  # nnabla 1.39 gives NaN here (y / x0)
    np.testing.assert_array_equal(b.g, [0.0, 12.0])
    y = F.add_n(a)
    assert y is not a and y.d.tolist() == [0.0, 2.0]
