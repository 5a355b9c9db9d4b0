"""gradhub.Function: PyTorch's ``torch.autograd.Function`` (``forward(ctx, ...)``,
``backward(ctx, ...)``, ``apply``) on the custom_vjp node: values, saved tensors, Python
arguments, several outputs, ``setup_context``, double backward, and the errors. Expected values
of the first tests come from torch 2.13 on the same classes (float64)."""

from __future__ import annotations

from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest


class Exp(gh.Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        y = F.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (y,) = ctx.saved_tensors
        return g * y


class Two(gh.Function):
    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a, b)
        return a * b, a + b

    @staticmethod
    def backward(ctx: Any, g1: Any, g2: Any) -> Any:
        a, b = ctx.saved_tensors
        return g1 * b + g2, g1 * a + g2


def test_double_backward_through_saved_outputs_as_torch() -> None:
    x = gh.Variable(np.array([0.0, 1.0]))
    (g,) = gh.grad([Exp.apply(x).sum()], [x])
    (gg,) = gh.grad([g.sum()], [x])
    # torch 2.13: tensor([1.0000, 2.7183]) for both
    np.testing.assert_allclose(g.d, np.exp([0.0, 1.0]), rtol=1e-15)
    np.testing.assert_allclose(gg.d, np.exp([0.0, 1.0]), rtol=1e-15)


def test_several_outputs_and_second_derivatives_as_torch() -> None:
    a, b = gh.Variable(np.array(2.0)), gh.Variable(np.array(5.0))
    p, q = Two.apply(a, b)
    ga, gb = gh.grad([p * q], [a, b])
    daa, dab = gh.grad([ga], [a, b])
    # torch 2.13: ga 45, gb 24; d ga / d (a, b) = (10, 14)
    assert (float(ga.d), float(gb.d), float(daa.d), float(dab.d)) == (45.0, 24.0, 10.0, 14.0)


def test_python_arguments_get_no_gradient_and_need_none() -> None:
    class StraightThroughClamp(gh.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, lo: float, hi: float) -> Any:
            assert ctx.needs_input_grad == (True, False, False)
            return F.clip_by_value(x, lo, hi)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g, None, None

    x = gh.Variable(np.array([-2.0, 0.5, 3.0]))
    y = StraightThroughClamp.apply(x, -1.0, 1.0)
    np.testing.assert_array_equal(y.d, [-1.0, 0.5, 1.0])
    # torch 2.13: tensor([1., 1., 1.])
    np.testing.assert_array_equal(gh.grad([y.sum()], [x])[0].d, [1.0, 1.0, 1.0])


def test_setup_context_style_and_ctx_attributes() -> None:
    class MulConst(gh.Function):
        @staticmethod
        def forward(x: Any, k: float) -> Any:
            return x * k

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * ctx.k, None

    x = gh.Variable(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(gh.grad([MulConst.apply(x, 3.0).sum()], [x])[0].d, [3.0, 3.0])
    y = MulConst.apply(x, 3.0)
    y.backward(np.ones(2))
    np.testing.assert_array_equal(x.g, [3.0, 3.0])


def test_backward_of_the_wrong_length_names_the_class() -> None:
    class Bad(gh.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, k: float) -> Any:
            return x * k

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return (g,)

    x = gh.Variable(np.array([1.0]))
    with pytest.raises(
        gh.BackwardRuleError, match=r"Bad.backward returned 1 gradient\(s\); expected 2"
    ):
        gh.grad([Bad.apply(x, 2.0).sum()], [x])
    with pytest.raises(NotImplementedError, match="must define forward"):
        gh.Function.apply(x)
