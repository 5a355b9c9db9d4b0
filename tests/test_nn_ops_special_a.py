"""Special cases of gradhub-nn-ops part A that the op matrix cannot express.

Sub-gradients at ties and kinks (checked against the documented conventions), nnabla's shape
conventions of softmax_cross_entropy and max/min ``with_index``, erf accuracy, scalar operands in
either position, the dtypes of comparisons, clear errors, and the docstring examples.
"""

from __future__ import annotations

import doctest
import math

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.registry import REGISTRY, _ensure_loaded

MINE = (
    "Sin Cos Tan Exp Log Sqrt Tanh Sigmoid Sinh Cosh ASin ACos ATan ATan2 Erf Softplus Log1p "
    "Expm1 Pow2 RSubScalar Abs Maximum2 Minimum2 MaximumScalar MinimumScalar Where Clip "
    "ClipByValue Add Sub Mul Div Pow Sign Greater GreaterEqual Less LessEqual Equal NotEqual "
    "GreaterScalar GreaterEqualScalar LessScalar LessEqualScalar EqualScalar NotEqualScalar ReLU "
    "LeakyReLU ELU SELU GELU Swish SiLU Softsign ReLU6 HardTanh LogSigmoid PReLU Mean Max Min "
    "Prod LogSumExp Norm Softmax LogSoftmax SoftmaxCrossEntropy SigmoidCrossEntropy "
    "BinaryCrossEntropy SquaredError HuberLoss"
).split()
#: of MINE, the functions the core's Variable operators need: the core registers them
CORE = {"Pow2", "Abs", "Log", "Sign", "EqualScalar"}


def var(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


def grad1(fn: object, *xs: gh.Variable, create_graph: bool = False) -> list[np.ndarray]:
    """Gradients of sum(fn(*xs)) w.r.t. xs, as arrays."""
    y = fn(*xs)  # type: ignore[operator]
    gs = gh.grad([y], list(xs), create_graph=create_graph)
    return [g.d for g in gs]  # type: ignore[union-attr]


def both_modes(fn: object, *xs: gh.Variable) -> list[np.ndarray]:
    """Gradients with the fast first-order rules and with the differentiable rules; they agree."""
    fast = grad1(fn, *xs)
    slow = grad1(fn, *xs, create_graph=True)
    for a, b in zip(fast, slow):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    return fast


# -- registry ----------------------------------------------------------------------------------


def test_all_functions_are_registered_with_names_and_callables() -> None:
    _ensure_loaded()
    for name in MINE:
        fdef = REGISTRY.get(name)
        owner = "gradhub" if name in CORE else "gradhub-nn-ops"
        assert fdef.provider.distribution == owner, name
        assert getattr(F, fdef.snake) is fdef.api
    snakes = {REGISTRY.get(n).snake for n in ("ASin", "ATan2", "ReLU6", "LogSumExp", "ReLU",
                                               "LeakyReLU", "PReLU", "SiLU", "HardTanh")}
    assert snakes == {"asin", "atan2", "relu6", "logsumexp", "relu", "leaky_relu", "prelu",
                      "silu", "hard_tanh"}


def test_non_differentiable_functions_are_marked() -> None:
    for name in ("Sign", "Greater", "EqualScalar", "NotEqual"):
        assert REGISTRY.get(name).status() == "non-differentiable"
    x = var([1.0, -2.0])
    assert not F.sign(x).need_grad
    assert not F.greater_scalar(x, 0.0).need_grad


@pytest.mark.parametrize("name", MINE)
def test_docstring_example_runs(name: str) -> None:
    api = REGISTRY.get(name).api
    doc = api.__doc__ or ""
    assert ">>>" in doc, f"{name} has no example in its docstring"
    assert api.__name__ in doc.split("(")[0] or name in doc, f"{name}: doc names no function"
    test = doctest.DocTestParser().get_doctest(doc, {}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    out: list[str] = []
    result = runner.run(test, out=out.append)
    assert result.failed == 0, "".join(out)


# -- kinks and ties: the documented sub-gradients ----------------------------------------------


def test_relu_family_at_kinks() -> None:
    x = var([-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(both_modes(F.relu, x)[0], [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(both_modes(F.relu6, var([0.0, 3.0, 6.0, 7.0]))[0],
                                  [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(both_modes(F.hard_tanh, var([-1.0, 0.5, 1.0]))[0],
                                  [0.0, 1.0, 0.0])
    np.testing.assert_allclose(both_modes(lambda v: F.leaky_relu(v, alpha=0.2), x)[0],
                               [0.2, 0.2, 1.0])
    np.testing.assert_allclose(both_modes(lambda v: F.elu(v, alpha=0.5), x)[0],
                               [0.5 * math.exp(-1.0), 0.5, 1.0])
    np.testing.assert_array_equal(both_modes(F.abs, x)[0], [-1.0, 0.0, 1.0])
    gx, gw = both_modes(F.prelu, var([[0.0, -2.0], [3.0, 0.0]]), var([0.25, 0.5]))
    np.testing.assert_allclose(gx, [[0.25, 0.5], [1.0, 0.5]])
    np.testing.assert_allclose(gw, [-0.0, -2.0])


def test_relu_second_derivative_is_zero() -> None:
    x = var([-1.0, 0.5, 2.0])
    (g,) = gh.grad([F.relu(x) * x], [x], create_graph=True)  # d(x relu x)/dx = 2x (x > 0)
    np.testing.assert_allclose(g.d, [0.0, 1.0, 4.0])
    (gg,) = gh.grad([g], [x])
    np.testing.assert_allclose(gg.d, [0.0, 2.0, 2.0])


def test_scalar_bounds_pass_the_gradient_at_ties() -> None:
    x = var([-1.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(both_modes(lambda v: F.maximum_scalar(v, 0.0), x)[0],
                                  [0.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(both_modes(lambda v: F.minimum_scalar(v, 1.0), x)[0],
                                  [1.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(both_modes(lambda v: F.clip(v, 0.0, 1.0), x)[0],
                                  [0.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(both_modes(lambda v: F.clip_by_value(v, 0.0, 1.0), x)[0],
                                  [0.0, 1.0, 1.0, 0.0])


def test_maximum2_minimum2_split_ties_evenly() -> None:
    a, b = var([1.0, 2.0, 3.0]), var([2.0, 2.0, 1.0])
    ga, gb = both_modes(F.maximum2, a, b)
    np.testing.assert_array_equal(ga, [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(gb, [1.0, 0.5, 0.0])
    ga, gb = both_modes(F.minimum2, a, b)
    np.testing.assert_array_equal(ga, [1.0, 0.5, 0.0])
    np.testing.assert_array_equal(gb, [0.0, 0.5, 1.0])
    # Variable bounds of clip_by_value: a tie splits between x and the bound
    x, lo, hi = var([0.0, 0.5, 1.0]), var([0.0, 0.0, 0.0]), var([1.0, 1.0, 1.0])
    gx, glo, ghi = both_modes(F.clip_by_value, x, lo, hi)
    np.testing.assert_array_equal(gx, [0.5, 1.0, 0.5])
    np.testing.assert_array_equal(glo, [0.5, 0.0, 0.0])
    np.testing.assert_array_equal(ghi, [0.0, 0.0, 0.5])


def test_max_min_split_ties_evenly() -> None:
    x = var([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    (g,) = both_modes(lambda v: F.max(v, axis=1), x)
    np.testing.assert_allclose(g, [[0.0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    (g,) = both_modes(F.max, x)  # all axes: the two 3s tie
    np.testing.assert_allclose(g, [[0.0, 0.5, 0.5], [0.0, 0.0, 0.0]])
    (g,) = both_modes(lambda v: F.min(v, axis=0, keepdims=True), x)
    np.testing.assert_allclose(g, [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    # the rule is differentiable again: d/dx of (max * x.sum()) at ties
    (gg,) = gh.grad([F.max(x, axis=1) * F.mean(x, axis=1)], [x], create_graph=True)
    (h,) = gh.grad([gg], [x])
    assert np.all(np.isfinite(h.d))


def test_max_with_index_as_nnabla() -> None:
    x = var(np.arange(24.0).reshape(2, 3, 4) % 7)
    y, idx = F.max(x, axis=(1, 2), with_index=True)
    np.testing.assert_array_equal(y.d, [6.0, 6.0])
    # index within the flattened reduced axes (C order), the first one at ties
    flat = x.d.reshape(2, 12)
    np.testing.assert_array_equal(idx.d, np.argmax(flat, axis=1))
    assert idx.d.dtype.kind == "i" and not idx.need_grad
    only = F.min(x, axis=0, keepdims=True, only_index=True)
    assert only.shape == (1, 3, 4)
    np.testing.assert_array_equal(only.d[0], np.argmin(x.d, axis=0))
    y.backward()  # values still differentiable next to an index output
    assert x.g is not None and x.g.sum() == pytest.approx(2.0)


def test_prod_gradient_with_zeros() -> None:
    for vals, want in (([0.0, 2.0, 3.0], [6.0, 0.0, 0.0]), ([0.0, 2.0, 0.0], [0.0, 0.0, 0.0]),
                       ([1.0, 2.0, 3.0], [6.0, 3.0, 2.0])):
        (g,) = both_modes(F.prod, var(vals))
        np.testing.assert_allclose(g, want)
    # second derivative at a zero: d2/dx0 dx1 prod(x0, x1, x2) = x2
    x = var([0.0, 2.0, 3.0])
    (g,) = gh.grad([F.prod(x)], [x], create_graph=True)
    (h0,) = gh.grad([g * var([1.0, 0.0, 0.0], need_grad=False)], [x])  # d g[0] / dx
    np.testing.assert_allclose(h0.d, [0.0, 3.0, 2.0])


# -- softmax and losses --------------------------------------------------------------------------


def test_softmax_cross_entropy_shapes_as_nnabla() -> None:
    rng = np.random.default_rng(0)
    x = var(rng.standard_normal((4, 3)))
    t = gh.Variable(np.array([[0], [2], [1], [2]]), need_grad=False)
    loss = F.softmax_cross_entropy(x, t)
    assert loss.shape == (4, 1) and loss.dtype == np.float64
    logp = x.d - np.log(np.exp(x.d).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(loss.d[:, 0], -logp[np.arange(4), t.d[:, 0]])
    loss_flat = F.softmax_cross_entropy(x, gh.Variable(t.d[:, 0], need_grad=False))
    assert loss_flat.shape == (4,)
    np.testing.assert_allclose(loss_flat.d, loss.d[:, 0])
    # axis=1 of an (N, C, H) input: labels (N, 1, H), loss (N, 1, H)
    x3 = var(rng.standard_normal((2, 3, 5)))
    t3 = gh.Variable(rng.integers(0, 3, (2, 1, 5)), need_grad=False)
    assert F.softmax_cross_entropy(x3, t3, axis=1).shape == (2, 1, 5)
    # float labels holding integers (nnabla's usual float Variables) give the same loss
    tf = gh.Variable(t.d.astype(np.float32), need_grad=True)
    np.testing.assert_allclose(F.softmax_cross_entropy(x, tf).d, loss.d)


def test_softmax_cross_entropy_gradient_and_labels() -> None:
    rng = np.random.default_rng(1)
    x = var(rng.standard_normal((3, 4)))
    t = gh.Variable(np.array([[1], [0], [3]], dtype=np.float64), need_grad=True)
    (gx,) = both_modes(lambda v: F.softmax_cross_entropy(v, t), x)
    p = np.exp(x.d) / np.exp(x.d).sum(axis=1, keepdims=True)
    p[np.arange(3), [1, 0, 3]] -= 1.0
    np.testing.assert_allclose(gx, p)
    F.softmax_cross_entropy(x, t).backward()
    assert t.g is None  # no gradient w.r.t. labels, even float ones


def test_softmax_cross_entropy_errors() -> None:
    x = var(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"softmax_cross_entropy\(\).*'target'.*shape"):
        F.softmax_cross_entropy(x, gh.Variable(np.zeros((2, 3), dtype=np.int64), False))
    with pytest.raises(ValueError, match=r"softmax_cross_entropy\(\).*'target'.*\[0, 3\)"):
        F.softmax_cross_entropy(x, gh.Variable(np.array([[0], [3]]), False))
    with pytest.raises(ValueError, match=r"softmax_cross_entropy\(\).*'axis'"):
        F.softmax_cross_entropy(x, gh.Variable(np.array([[0], [1]]), False), axis=2)


def test_softmax_is_stable_and_sums_to_one() -> None:
    x = var([[1000.0, 1000.0, -1000.0], [0.0, 1.0, 2.0]])
    y = F.softmax(x)
    np.testing.assert_allclose(y.d.sum(axis=1), [1.0, 1.0])
    np.testing.assert_allclose(y.d[0], [0.5, 0.5, 0.0])
    np.testing.assert_allclose(F.log_softmax(x).d[1], np.log(y.d[1]))
    np.testing.assert_allclose(F.logsumexp(x, axis=1).d[0], 1000.0 + math.log(2.0))
    assert F.log_softmax(x).d[0, 2] == pytest.approx(-2000.0 - math.log(2.0))


def test_sigmoid_family_is_stable() -> None:
    x = var([-800.0, 0.0, 800.0])
    np.testing.assert_array_equal(F.sigmoid(x).d, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(F.softplus(x).d, [0.0, math.log(2.0), 800.0])
    np.testing.assert_allclose(F.log_sigmoid(x).d, [-800.0, -math.log(2.0), 0.0])
    t = var([1.0, 1.0, 0.0], need_grad=False)
    np.testing.assert_allclose(F.sigmoid_cross_entropy(x, t).d, [800.0, math.log(2.0), 800.0])


def test_huber_loss_matches_nnabla_definition() -> None:
    x0 = var([0.0, 0.5, -0.5, 2.0, -3.0])
    x1 = var(np.zeros(5), need_grad=False)
    np.testing.assert_allclose(F.huber_loss(x0, x1).d, [0.0, 0.25, 0.25, 3.0, 5.0])
    np.testing.assert_allclose(F.huber_loss(x0, x1, delta=2.0).d, [0.0, 0.25, 0.25, 4.0, 8.0])
    (g,) = both_modes(lambda v: F.huber_loss(v, x1), x0)
    np.testing.assert_allclose(g, [0.0, 1.0, -1.0, 2.0, -2.0])


# -- numerics --------------------------------------------------------------------------------------


def test_erf_accuracy() -> None:
    xs = np.concatenate([np.linspace(-7.0, 7.0, 20001), [0.0, 1e-300, -1e-12, 2.5, -2.5, 30.0]])
    got = F.erf(var(xs)).d
    want = np.array([math.erf(v) for v in xs])
    rel = np.abs(got - want) / np.maximum(np.abs(want), 1e-300)
    assert rel.max() < 1e-14
    assert F.erf(var([-np.inf, np.inf])).d.tolist() == [-1.0, 1.0]
    y32 = F.erf(gh.Variable(np.float32([0.5, -1.5])))
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32.d, [math.erf(0.5), math.erf(-1.5)], rtol=1e-6)


def test_gelu_is_the_exact_erf_form() -> None:
    xs = np.linspace(-4, 4, 9)
    want = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in xs]
    np.testing.assert_allclose(F.gelu(var(xs)).d, want, rtol=1e-14, atol=1e-300)


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
    np.testing.assert_allclose(both_modes(lambda v: F.pow(2.0, v), x)[0],
                               2.0**x.d * math.log(2.0))
    np.testing.assert_allclose(F.pow(x, 0.5).d, np.sqrt(x.d))
    y = var([2.0, 1.0, 0.5])
    np.testing.assert_allclose(F.pow(x, y).d, x.d**y.d)
    assert (x ** y).creator.fdef.name == "Pow2"  # type: ignore[union-attr]
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


# -- clear errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "exc", "pattern"),
    [
        (lambda x: F.mean(x, axis=3), ValueError, r"mean\(\).*'axis'"),
        (lambda x: F.max(x, axis=(0, 0)), ValueError, r"max\(\).*'axis'.*repeats"),
        (lambda x: F.norm(x, p=0), ValueError, r"norm\(\).*'p'"),
        (lambda x: F.huber_loss(x, x, delta=-1.0), ValueError, r"huber_loss\(\).*'delta'"),
        (lambda x: F.prelu(x, gh.Variable([0.1, 0.2, 0.3])), ValueError, r"prelu\(\).*'weight'"),
        (lambda x: F.clip(x, 2.0, 1.0), ValueError, r"clip\(\).*'min'"),
        (lambda x: F.softmax(x, axis=-3), ValueError, r"softmax\(\).*'axis'"),
        # (complex data is refused by Variable itself: tests/test_review2_core.py)
        (lambda x: F.sigmoid_cross_entropy(x, np.array([["a", "b"], ["c", "d"]])),
         TypeError, r"sigmoid_cross_entropy\(\).*'target'"),
        (lambda x: F.max(gh.Variable(np.zeros((0, 2))), axis=0), ValueError, r"max\(\).*size 0"),
    ],
)
def test_bad_arguments_name_function_and_argument(call: object, exc: type, pattern: str) -> None:
    x = var(np.ones((2, 2)))
    with pytest.raises(exc, match=pattern):
        call(x)  # type: ignore[operator]


def test_mean_of_nothing_is_nan_and_prod_of_nothing_is_one() -> None:
    e = var(np.zeros((0, 2)))
    assert np.isnan(F.mean(e).d)
    np.testing.assert_array_equal(F.mean(e, axis=0).d, [np.nan, np.nan])
    np.testing.assert_array_equal(F.prod(e, axis=0).d, [1.0, 1.0])
    np.testing.assert_array_equal(F.logsumexp(e, axis=0).d, [-np.inf, -np.inf])


@pytest.mark.parametrize("create_graph", [False, True])
def test_float32_backward_keeps_float32(create_graph: bool) -> None:
    """Every sample of every function, in float32: the gradients are float32 (both rule kinds)."""
    from gradhub.audit import samples_of

    for name in MINE:
        fdef = REGISTRY.get(name)
        if not fdef.differentiable:
            continue
        for s in samples_of(fdef):
            xs = [gh.Variable(a.astype(np.float32), need_grad=True) if a.dtype == np.float64
                  else gh.Variable(a, need_grad=False) for a in map(np.asarray, s.inputs)]
            out = fdef.api(*xs, **s.attrs)  # type: ignore[misc]
            outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o.dtype.kind == "f"]
            wrt = [x for x in xs if x.need_grad]
            gs = gh.grad(outs, wrt, create_graph=create_graph)
            for x, g in zip(wrt, gs):
                assert g is not None and g.dtype == np.float32, (name, s.name)
                assert g.shape == x.shape, (name, s.name)
