"""Elementwise arithmetic of gradhub-nn-ops: ties of maximum/minimum, scalar operands in either
position, comparison dtypes and ``where`` with a float condition."""

from __future__ import annotations

import math

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.func import jvp
from numeric_helpers import both_modes


def var(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


def test_scalar_bounds_pass_the_gradient_at_ties() -> None:
    x = var([-1.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(
        both_modes(lambda v: F.maximum_scalar(v, 0.0), x)[0], [0.0, 1.0, 1.0, 1.0]
    )
    np.testing.assert_array_equal(
        both_modes(lambda v: F.minimum_scalar(v, 1.0), x)[0], [1.0, 1.0, 1.0, 0.0]
    )
    np.testing.assert_array_equal(
        both_modes(lambda v: F.clip(v, 0.0, 1.0), x)[0], [0.0, 1.0, 1.0, 0.0]
    )
    np.testing.assert_array_equal(
        both_modes(lambda v: F.clip_by_value(v, 0.0, 1.0), x)[0], [0.0, 1.0, 1.0, 0.0]
    )


def test_maximum2_minimum2_split_ties_evenly() -> None:
    a, b = var([1.0, 2.0, 3.0]), var([2.0, 2.0, 1.0])
    ga, gb = both_modes(F.maximum2, a, b)
    np.testing.assert_array_equal(ga, [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(gb, [1.0, 0.5, 0.0])
    ga, gb = both_modes(F.minimum2, a, b)
    np.testing.assert_array_equal(ga, [1.0, 0.5, 0.0])
    np.testing.assert_array_equal(gb, [0.0, 0.5, 1.0])
    # ties="first" (chainer) and "second" (nnabla), also in forward mode
    for ties, share in (("first", 1.0), ("second", 0.0)):
        for fn, tie_a in ((F.maximum2, [0.0, share, 1.0]), (F.minimum2, [1.0, share, 0.0])):
            ga, gb = both_modes(lambda u, v, f=fn, t=ties: f(u, v, ties=t), a, b)
            np.testing.assert_array_equal(ga, tie_a)
            np.testing.assert_array_equal(gb, 1.0 - np.array(tie_a))
            tangents = (var([1.0] * 3), var([10.0] * 3))
            _, jv = jvp(lambda u, v, f=fn, t=ties: f(u, v, ties=t), (a, b), tangents)
            np.testing.assert_array_equal(jv.d, np.array(tie_a) + 10.0 * (1.0 - np.array(tie_a)))
    with pytest.raises(ValueError, match=r"maximum2.*ties must be one of"):
        F.maximum2(a, b, ties="all")
    # Variable bounds of clip_by_value: a tie splits between x and the bound
    x, lo, hi = var([0.0, 0.5, 1.0]), var([0.0, 0.0, 0.0]), var([1.0, 1.0, 1.0])
    gx, glo, ghi = both_modes(F.clip_by_value, x, lo, hi)
    np.testing.assert_array_equal(gx, [0.5, 1.0, 0.5])
    np.testing.assert_array_equal(glo, [0.5, 0.0, 0.0])
    np.testing.assert_array_equal(ghi, [0.0, 0.0, 0.5])


# -- arithmetic composites with scalars ------------------------------------------------------------


def test_scalar_operands_in_either_position() -> None:
    x = var([1.0, 2.0, 4.0])
    cases = (
        (F.add, 3.0, lambda a: 3.0 + a, 1.0),
        (F.sub, 3.0, lambda a: 3.0 - a, -1.0),
        (F.mul, 3.0, lambda a: 3.0 * a, 3.0),
    )
    for fn, s, ref, slope in cases:
        np.testing.assert_allclose(fn(s, x).d, ref(x.d))
        np.testing.assert_allclose(both_modes(lambda v, fn=fn, s=s: fn(s, v), x)[0], slope)
    np.testing.assert_allclose(F.div(2.0, x).d, 2.0 / x.d)
    np.testing.assert_allclose(both_modes(lambda v: F.div(2.0, v), x)[0], -2.0 / x.d**2)
    np.testing.assert_allclose(F.div(x, 4.0).d, x.d / 4.0)
    np.testing.assert_allclose(F.pow(2.0, x).d, 2.0**x.d)
    np.testing.assert_allclose(both_modes(lambda v: F.pow(2.0, v), x)[0], 2.0**x.d * math.log(2.0))
    np.testing.assert_allclose(F.pow(x, 0.5).d, np.sqrt(x.d))
    y = var([2.0, 1.0, 0.5])
    np.testing.assert_allclose(F.pow(x, y).d, x.d**y.d)
    assert (x**y).creator.fdef.name == "Pow2"  # type: ignore[union-attr]
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(F.div(x, 0).d, [np.inf, np.inf, np.inf])
    with pytest.raises(TypeError, match=r"add\(\).*'x0', 'x1'"):
        F.add(1.0, 2.0)


def test_comparison_dtypes() -> None:
    a32 = gh.Variable(np.float32([1.0, 2.0]), need_grad=False)
    a64 = var([2.0, 2.0], need_grad=False)
    ints = gh.Variable(np.array([2, 1]), need_grad=False)
    assert F.greater(a32, a32).dtype == np.float32
    assert F.greater(a32, a64).dtype == np.float64
    assert F.less(a32, ints).dtype == np.float32
    assert F.equal(ints, ints).dtype == np.float32
    assert F.greater_equal_scalar(ints, 2).dtype == np.float32
    np.testing.assert_array_equal(F.not_equal(a32, a64).d, [1.0, 0.0])
    np.testing.assert_array_equal(F.sign(ints).d, [1.0, 1.0])
    np.testing.assert_array_equal(F.sign(var([0.0, -3.0]), alpha=0.5).d, [0.5, -1.0])


def test_where_with_float_condition() -> None:
    c = var([0.0, 2.0, -1.0], need_grad=False)
    a, b = var([1.0, 2.0, 3.0]), var([-1.0])
    y = F.where(c, a, b)
    np.testing.assert_array_equal(y.d, [-1.0, 2.0, 3.0])
    ga, gb = both_modes(lambda u, w: F.where(c, u, w), a, b)
    np.testing.assert_array_equal(ga, [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(gb, [1.0])
