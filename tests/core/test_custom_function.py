"""gradhub.Function: PyTorch's ``torch.autograd.Function`` (``forward(ctx, ...)``,
``backward(ctx, ...)``, ``apply``) on the custom_vjp node: values, saved tensors, Python
arguments, several outputs, ``setup_context``, double backward, and the errors. Expected values
of the first tests come from torch 2.13 on the same classes (float64). Core functions only:
these tests run without plugins."""

from __future__ import annotations

from typing import Any

import gradhub as gh
import numpy as np
import pytest


class Cube(gh.Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * 3.0 * x * x


class Two(gh.Function):
    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a, b)
        return a * b, a + b

    @staticmethod
    def backward(ctx: Any, g1: Any, g2: Any) -> Any:
        a, b = ctx.saved_tensors
        return g1 * b + g2, g1 * a + g2


def test_double_backward_through_saved_inputs_as_torch() -> None:
    x = gh.Variable(np.array([1.0, 2.0]))
    (g,) = gh.grad([Cube.apply(x).sum()], [x])
    (gg,) = gh.grad([g.sum()], [x])
    # torch 2.13: tensor([3., 12.]) and tensor([6., 12.])
    np.testing.assert_array_equal(g.d, [3.0, 12.0])
    np.testing.assert_array_equal(gg.d, [6.0, 12.0])


def test_several_outputs_and_second_derivatives_as_torch() -> None:
    a, b = gh.Variable(np.array(2.0)), gh.Variable(np.array(5.0))
    p, q = Two.apply(a, b)
    ga, gb = gh.grad([p * q], [a, b])
    daa, dab = gh.grad([ga], [a, b])
    # torch 2.13: ga 45, gb 24; d ga / d (a, b) = (10, 14)
    assert (float(ga.d), float(gb.d), float(daa.d), float(dab.d)) == (45.0, 24.0, 10.0, 14.0)


def test_python_arguments_get_no_gradient_and_need_none() -> None:
    class ScaleGradient(gh.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, k: float) -> Any:
            assert ctx.needs_input_grad == (True, False)
            ctx.k = k
            return x * 1.0

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * ctx.k, None

    x = gh.Variable(np.array([1.0, 2.0]))
    y = ScaleGradient.apply(x, -0.5)
    np.testing.assert_array_equal(y.d, [1.0, 2.0])
    # torch 2.13: grad of (ScaleGradient(x, -0.5) * x).sum() is tensor([0.5, 1.0])
    np.testing.assert_array_equal(gh.grad([(y * x).sum()], [x])[0].d, [0.5, 1.0])


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
