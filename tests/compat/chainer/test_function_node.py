"""User-defined chainer functions: ``chainer.FunctionNode`` (new style, double backprop through
a backward written with chainer functions) and ``chainer.Function`` (old style, first order
only), against chainer 7.8.1's values (recorded from chainer 7.8.1, 2026-11-25) and float64
finite differences."""

from __future__ import annotations

import gc

import gradhub as gh
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import functions as F
from gradhub_compat.chainer.utils import type_check

from .helpers import _c


class Exp(chainer.FunctionNode):
    def forward(self, inputs):
        self.retain_outputs((0,))
        return (np.exp(inputs[0]),)

    def backward(self, target_input_indexes, grad_outputs):
        (y,) = self.get_retained_outputs()
        return (grad_outputs[0] * y,)


class Mul(chainer.FunctionNode):
    seen_targets: list[tuple[int, ...]] = []

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        a, b = inputs
        return (a * b,)

    def backward(self, target_input_indexes, grad_outputs):
        Mul.seen_targets.append(target_input_indexes)
        a, b = self.get_retained_inputs()
        (gy,) = grad_outputs
        return gy * b, gy * a


class SinCos(chainer.FunctionNode):
    def forward_cpu(self, inputs):
        self.retain_inputs((0,))
        (x,) = inputs
        return np.sin(x), np.cos(x)

    def backward(self, target_input_indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        g0, g1 = grad_outputs
        return (g0 * F.cos(x) - g1 * F.sin(x),)


class Square(chainer.Function):
    def forward(self, inputs):
        self.retain_inputs(())
        self.retain_outputs((0,))
        return (inputs[0] ** 2,)

    def backward(self, inputs, grad_outputs):
        assert inputs == (None,)  # not retained
        return (2 * np.sqrt(self.output_data[0]) * grad_outputs[0],)


class SumProd(chainer.Function):
    def forward_cpu(self, inputs):
        a, b = inputs
        return a + b, a * b

    def backward_cpu(self, inputs, grad_outputs):
        a, b = inputs
        g0, g1 = grad_outputs
        return g0 + g1 * b, g0 + g1 * a


def test_function_node_double_backprop_matches_chainer() -> None:
    x = _c([0.5, 1.0, 2.0])
    w = _c([1.5, -1.0, 3.0])
    (y,) = Exp().apply((x,))
    (z,) = Mul().apply((y, w))
    assert type(z) is chainer.Variable and isinstance(z.creator_node, Mul)
    Mul.seen_targets.clear()
    gx, gw = chainer.grad([F.sum(z)], [x, w], enable_double_backprop=True)
    assert Mul.seen_targets == [(0, 1)]
    # chainer 7.8.1
    np.testing.assert_allclose(gx.array, [2.47308191, -2.71828183, 22.1671683])
    np.testing.assert_allclose(gw.array, [1.64872127, 2.71828183, 7.3890561])
    (ggx,) = chainer.grad([F.sum(gx * gx)], [x])
    np.testing.assert_allclose(ggx.array, [12.23226823, 14.7781122, 982.7667006])
    (ggw,) = chainer.grad([F.sum(gx)], [w])
    np.testing.assert_allclose(ggw.array, [1.64872127, 2.71828183, 7.3890561])


def test_function_node_derivatives_match_finite_differences() -> None:
    def f(x, w):
        (y,) = Exp().apply((x,))
        (z,) = Mul().apply((y, w))
        (s, c) = SinCos().apply((z,))
        return s * c + s

    rng = np.random.default_rng(0)
    assert gh.testing.gradcheck(f, [rng.normal(size=4), rng.normal(size=4)], order=2)


def test_multi_output_function_node_matches_chainer() -> None:
    x = _c([0.5, 1.0, 2.0])
    s, _ = SinCos().apply((x,))
    (gs,) = chainer.grad([F.sum(s)], [x], enable_double_backprop=True)
    np.testing.assert_allclose(gs.array, [0.87758256, 0.54030231, -0.41614684])
    (g2,) = chainer.grad([F.sum(gs)], [x])
    np.testing.assert_allclose(g2.array, [-0.47942554, -0.84147098, -0.90929743])


def test_accumulating_backward_and_constant_inputs() -> None:
    x = _c([0.5, 1.0, 2.0])
    w = _c([1.5, -1.0, 3.0])
    (y,) = Exp().apply((x,))
    (z,) = Mul().apply((y, w))
    F.sum(z).backward()
    np.testing.assert_allclose(x.grad, [2.47308191, -2.71828183, 22.1671683])
    np.testing.assert_allclose(w.grad, [1.64872127, 2.71828183, 7.3890561])
    Mul.seen_targets.clear()
    (y2,) = Mul().apply((x, np.ones(3)))  # an array input needs no gradient
    assert chainer.grad([F.sum(y2)], [x])[0].array.tolist() == [1.0, 1.0, 1.0]
    assert Mul.seen_targets == [(0,)]  # chainer 7.8.1: only the input that needs one


def test_retained_arrays_only_are_kept() -> None:
    x = _c([0.5, 1.0])
    f = Exp()
    (y,) = f.apply((x,))
    node = y._creator
    assert node.saved_in == (None,)  # chainer keeps no input unless retained
    assert node.saved_out[0] is y.array
    assert f.output_data[0] is y.array
    assert f.inputs[0].shape == (2,) and f.inputs[0].data is None
    assert f.inputs[0].requires_grad and f.outputs[0]() is y
    g = Mul()
    g.apply((x, x))
    assert g.inputs[1].data is x.array
    assert [v is x for v in g.get_retained_inputs()] == [True, True]


def test_retained_output_of_a_dropped_variable() -> None:
    x = _c([0.5, 1.0])
    f = Exp()
    (y,) = f.apply((x,))
    z = F.sum(y * 1)
    del y
    gc.collect()
    (r,) = f.get_retained_outputs()
    np.testing.assert_allclose(r.array, np.exp([0.5, 1.0]))
    z.backward()
    np.testing.assert_allclose(x.grad, np.exp([0.5, 1.0]))


def test_no_backprop_mode_records_nothing() -> None:
    x = _c([1.0])
    f = Exp()
    with chainer.no_backprop_mode():
        (y,) = f.apply((x,))
    # chainer 7.8.1: a root that requires a gradient; the node is not linked
    assert y.requires_grad and y.creator is None and f.inputs is None


def test_old_style_function_matches_chainer() -> None:
    x = _c([1.0, 2.0])
    f = Square()
    y = f(x)
    assert y.creator is f and isinstance(y.creator_node, chainer.FunctionAdapter)
    assert f.inputs[0].shape == (2,) and f.label == "Square"
    y.grad = np.ones(2)
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0]
    a, b = _c([1.0, 2.0]), _c([3.0, 5.0])
    p, q = SumProd()(a, b)
    F.sum(p * q).backward()
    assert a.grad.tolist() == [15.0, 45.0] and b.grad.tolist() == [7.0, 24.0]  # chainer 7.8.1


def test_old_style_function_is_first_order_only() -> None:
    x = _c([1.0, 2.0])
    (gx,) = chainer.grad([F.sum(Square()(x))], [x], enable_double_backprop=True)
    assert gx.array.tolist() == [2.0, 4.0]
    # chainer 7.8.1: RuntimeError 'cannot twice-differentiate an old style Function "Square"'
    with pytest.raises(RuntimeError, match=r"Square.*first-order-only.*cannot be differentiated"):
        chainer.grad([F.sum(gx)], [x])


def test_function_without_backward_gives_no_gradient() -> None:
    class NoBackward(chainer.Function):
        def forward(self, inputs):
            return (inputs[0] * 2,)

    a = _c([1.0])
    assert chainer.grad([F.sum(NoBackward()(a))], [a]) == [None]  # chainer 7.8.1: [None]


def test_errors_name_the_function() -> None:
    class NotTuple(chainer.FunctionNode):
        def forward(self, inputs):
            return inputs[0]

    class NotArrays(chainer.FunctionNode):
        def forward(self, inputs):
            return (1.0,)

    class TooMany(chainer.FunctionNode):
        def forward(self, inputs):
            return (inputs[0] * 3,)

        def backward(self, target_input_indexes, grad_outputs):
            return grad_outputs * 3

    a = _c([1.0, 2.0])
    # chainer 7.8.1's messages
    with pytest.raises(TypeError, match=r"forward output must be a tuple \(NotTuple\)"):
        NotTuple().apply((a,))
    with pytest.raises(TypeError, match=r"tuple of ndarrays.\nFunction: NotArrays"):
        NotArrays().apply((a,))
    with pytest.raises(RuntimeError, match=r"TooMany.backward returned 3 gradients"):
        F.sum(TooMany().apply((a,))[0]).backward()
    with pytest.raises(RuntimeError, match=r"\(Mul\) .*called as if it were a callable"):
        Mul()(a, a)
    with pytest.raises(TypeError, match=r"Mul.apply: input 1 must be a Variable or an array"):
        Mul().apply((a, [1.0, 2.0]))
    with pytest.raises(NotImplementedError, match=r"function hooks.*migration-chainer.md"):
        Mul().add_hook(object())


def test_check_type_forward() -> None:
    class Float32Only(chainer.FunctionNode):
        def check_type_forward(self, in_types):
            type_check.expect(in_types.size() == 1, in_types[0].dtype == np.float32)

        def forward(self, inputs):
            return (inputs[0] * 2,)

    with pytest.raises(type_check.InvalidType, match=r"Float32Only \(Forward\)\n\nExpect: con"):
        Float32Only().apply((_c([1.0]),))
    (y,) = Float32Only().apply((np.ones(1, np.float32),))
    assert y.dtype == np.float32
    with chainer.using_config("type_check", False):
        Float32Only().apply((_c([1.0]),))


def test_backward_accumulate_is_used_when_overridden() -> None:
    class Triple(chainer.FunctionNode):
        def forward(self, inputs):
            return (inputs[0] * 3,)

        def backward_accumulate(self, target_input_indexes, grad_outputs, grad_inputs):
            assert grad_inputs == (None,)
            return (grad_outputs[0] * 3,)

    a = _c([1.0, 2.0])
    F.sum(Triple().apply((a,))[0]).backward()
    assert a.grad.tolist() == [3.0, 3.0]


def test_chainer_module_paths() -> None:
    from gradhub_compat.chainer import function, function_node

    assert function.Function is chainer.Function is function_node.Function
    assert function_node.FunctionNode is chainer.FunctionNode
    assert function.no_backprop_mode is chainer.no_backprop_mode
