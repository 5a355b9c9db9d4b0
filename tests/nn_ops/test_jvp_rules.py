"""gradhub-nn-ops' native JVP rules in networks: forward mode through an MLP and a small CNN
against the transposed backward rules and float64 central differences, ``BatchNormalization`` in
training and inference and reductions (``Max``, ``SoftmaxCrossEntropy``) mixed in, Hessians by
``jacfwd(jacrev(f))`` and ``hvp`` (jvp of grad), and the elementwise records' rules derived from
their derivative formulas. Every single rule is checked on its samples by the op matrix."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradhub as gh
import gradhub.func as ghf
import gradhub.functions as F
import numpy as np
import pytest
from gradhub import engine
from gradhub.registry import REGISTRY
from gradhub_nn_ops.jvp import SYMMETRIC, from_derivative
from gradhub_nn_ops.math import ELEMENTWISE

RNG = np.random.default_rng(3)
W1, B1 = RNG.standard_normal((5, 8)) * 0.5, RNG.standard_normal(8) * 0.1
W2, B2 = RNG.standard_normal((8, 3)) * 0.5, RNG.standard_normal(3) * 0.1
LABELS = np.array([[0], [2], [1], [2]])


def mlp(x: Any, w1: Any = W1) -> Any:
    h = F.tanh(F.affine(x, w1, B1))
    h = F.relu(h) + F.sigmoid(h) * F.softplus(h)
    y = F.affine(h, W2, B2)
    return F.log_softmax(y, axis=1) * F.softmax(y, axis=1) + F.exp(-y * y)


def mlp_with_fallbacks(x: Any, w1: Any = W1) -> Any:
    """BatchNormalization with batch statistics; Max and SoftmaxCrossEntropy use the reduction
    rule."""
    h = F.affine(x, w1, B1)
    h = F.batch_normalization(
        h, *(np.full((1, 8), v) for v in (0.0, 1.0, 0.0, 1.0)), batch_stat=True
    )
    y = F.affine(F.tanh(h), W2, B2)
    return F.softmax_cross_entropy(y, LABELS) * F.max(y, axis=1, keepdims=True)


def cnn(x: Any, w: Any) -> Any:
    h = F.convolution(x, w, np.array([0.1, -0.2]), pad=(1, 1))
    h = F.max_pooling(F.elu(h), kernel=(2, 2))
    h = F.average_pooling(h, kernel=(2, 2))
    return F.transpose(F.reshape(h, (2, -1)), (1, 0)) * 2.0


def _transposed(f: Callable[..., Any], xs: list[np.ndarray], ts: list[np.ndarray]) -> np.ndarray:
    vs = [gh.Variable(x, need_grad=True) for x in xs]
    y = f(*vs)
    u = gh.Variable(np.zeros(y.shape), need_grad=True)
    gs = gh.grad([y], vs, [u], create_graph=True)
    return gh.grad(gs, [u], [gh.Variable(t) for t in ts], create_graph=True)[0].d  # type: ignore[union-attr,no-any-return]


def _central(f: Callable[..., Any], xs: list[np.ndarray], ts: list[np.ndarray]) -> np.ndarray:
    h = 1e-6
    p = f(*[gh.Variable(x + h * t) for x, t in zip(xs, ts)]).d
    m = f(*[gh.Variable(x - h * t) for x, t in zip(xs, ts)]).d
    return (p - m) / (2 * h)  # type: ignore[no-any-return]


NETS = [
    ("mlp", mlp, [(4, 5), (5, 8)]),
    ("mlp with functions without a rule", mlp_with_fallbacks, [(4, 5), (5, 8)]),
    ("cnn", cnn, [(2, 1, 4, 4), (2, 1, 3, 3)]),
]


@pytest.mark.parametrize(("name", "f", "shapes"), NETS, ids=[n[0] for n in NETS])
def test_jvp_of_a_network_matches_transposition_and_central_differences(
    name: str, f: Callable[..., Any], shapes: list[tuple[int, ...]]
) -> None:
    xs = [RNG.standard_normal(s) for s in shapes]
    ts = [RNG.standard_normal(s) for s in shapes]
    _, t = ghf.jvp(f, tuple(xs), tuple(ts))
    np.testing.assert_allclose(t.d, _transposed(f, xs, ts), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(t.d, _central(f, xs, ts), rtol=1e-5, atol=1e-7)


def test_the_network_paths_use_native_rules_where_they_exist() -> None:
    have = {n for n, f in REGISTRY.functions.items() if f.jvp_rule is not None}
    assert {"Affine", "Tanh", "ReLU", "Softmax", "LogSoftmax", "Convolution", "MaxPooling"} <= have
    assert {"Max", "SoftmaxCrossEntropy", "BatchNormalization"} <= have


def test_hessian_by_forward_over_reverse_matches_reverse_over_reverse() -> None:
    x = RNG.standard_normal((2, 5))

    def loss(w1: Any) -> Any:
        return F.sum(mlp(x, w1) * mlp(x, w1))

    w1 = RNG.standard_normal((5, 8)) * 0.5
    h_fwd = ghf.jacfwd(ghf.jacrev(loss))(w1)
    h_rev = ghf.jacrev(ghf.jacrev(loss))(w1)
    np.testing.assert_allclose(h_fwd.d, h_rev.d, rtol=1e-9, atol=1e-11)
    v = RNG.standard_normal((5, 8))
    _, (hv,) = ghf.hvp(loss, (w1,), (v,))
    np.testing.assert_allclose(hv.d, np.tensordot(h_rev.d, v, axes=2), rtol=1e-9, atol=1e-11)


def test_third_order_through_nn_ops_rules() -> None:
    def f(x: Any) -> Any:
        return F.sum(F.sin(x) * F.tanh(x))

    x = RNG.standard_normal(3)
    third_fwd = ghf.jacfwd(ghf.jacfwd(ghf.jacrev(f)))(x)
    third_rev = ghf.jacrev(ghf.jacrev(ghf.jacrev(f)))(x)
    np.testing.assert_allclose(third_fwd.d, third_rev.d, rtol=1e-10, atol=1e-12)


def test_elementwise_rules_are_the_derivative_formulas_with_the_tangent() -> None:
    x = gh.Variable(RNG.uniform(0.2, 0.8, 4), need_grad=True)
    t = gh.Variable(RNG.standard_normal(4))
    for op in ELEMENTWISE:
        y = gh.ops.call(op.name, x)
        (got,) = from_derivative(op)((x,), (y,), (t,))
        expected = op.derivative(np, t.d, x.d, y.d)  # the same formula on arrays
        np.testing.assert_allclose(got.d, expected, rtol=1e-12, err_msg=op.name)
        (pushed,) = engine.forward_tangents([y], [x], [t])
        np.testing.assert_allclose(pushed.d, expected, rtol=1e-12, err_msg=op.name)
    assert "Softmax" in SYMMETRIC


def test_float32_network_tangent_is_float32() -> None:
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    w = W1.astype(np.float32)

    def f(x: Any) -> Any:
        return F.softmax(F.affine(x, w, B1.astype(np.float32)), axis=1)

    y, t = ghf.jvp(f, (x,), (np.ones_like(x),))
    assert y.dtype == np.float32 and t.dtype == np.float32


@pytest.mark.parametrize("batch_stat", [True, False])
def test_batch_normalization_rule_and_hessians_through_it(batch_stat: bool) -> None:
    """The JVP rule of BatchNormalization (training: through the batch statistics; inference:
    also along the running statistics) against the transposed backward rule and central
    differences, and the Hessian through it (batched tangents) against reverse over reverse."""
    x = RNG.standard_normal((5, 3, 2))
    beta, gamma = RNG.standard_normal((1, 3, 1)), RNG.uniform(0.5, 1.5, (1, 3, 1))
    mean, var = RNG.standard_normal((1, 3, 1)) * 0.1, RNG.uniform(0.5, 1.5, (1, 3, 1))

    def f(x: Any, beta: Any, gamma: Any, mean: Any, var: Any) -> Any:
        m = mean if isinstance(mean, gh.Variable) else gh.Variable(np.array(mean))
        v = var if isinstance(var, gh.Variable) else gh.Variable(np.array(var))
        y = F.batch_normalization(x, beta, gamma, m, v, batch_stat=batch_stat)
        return F.tanh(y) * x

    assert REGISTRY.get("BatchNormalization").jvp_rule is not None
    xs = [x, beta, gamma, mean, var]
    ts = [RNG.standard_normal(a.shape) for a in xs]
    _, t = ghf.jvp(f, tuple(xs), tuple(ts))
    np.testing.assert_allclose(t.d, _central(f, xs, ts), rtol=1e-6, atol=1e-8)
    if not batch_stat:  # the running statistics need a gradient only in inference
        np.testing.assert_allclose(t.d, _transposed(f, xs, ts), rtol=1e-10, atol=1e-12)
    else:  # they do not enter the output: a tangent along them changes nothing
        _, t0 = ghf.jvp(f, tuple(xs), (*ts[:3], np.zeros_like(mean), np.zeros_like(var)))
        np.testing.assert_allclose(t.d, t0.d, rtol=1e-14)

    def loss(x: Any, gamma: Any) -> Any:
        return F.sum(f(x, beta, gamma, mean, var) ** 2.0)

    h_fwd = ghf.hessian(loss, argnums=(0, 1))(x, gamma)
    h_rev = ghf.jacrev(ghf.jacrev(loss, argnums=(0, 1)), argnums=(0, 1))(x, gamma)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(h_fwd[i][j].d, h_rev[i][j].d, rtol=1e-9, atol=1e-11)


def test_forward_mode_through_training_batch_normalization_updates_its_statistics_once() -> None:
    # regressions: forward mode (jvp, jacfwd, hvp, hessian) recomputed a freed primal by running
    # batch normalization's kernel again on the running statistics themselves, so one call
    # updated them twice (and a compiled step's replays once): now on copies of the leaves;
    # jacrev ran f a second time under vmap over the output basis (7x the update): now once
    import gradhub.func as ghf
    import gradhub.parametric_functions as PF

    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((4, 2)) for _ in range(3)]
    W = rng.standard_normal((2, 3))

    def net(u: Any) -> Any:
        return F.tanh(PF.batch_normalization(F.affine(u, W), name="bn"))

    steps = {
        "plain": net,
        "jvp": lambda x: ghf.jvp(net, (x,), (x,))[1],
        "hessian": lambda x: ghf.hessian(lambda u: F.sum(net(u) ** 2.0))(x),
        # (jacrev ran f again under vmap over the basis: one update per basis vector)
        "jacrev": lambda x: ghf.jacrev(net)(x),
    }
    means = {}
    for name, step in steps.items():
        gh.clear_parameters()
        try:
            for x in xs:
                step(x)
            means[name] = gh.get_parameters(grad_only=False)["bn/bn/mean"].d.copy()
        finally:
            gh.clear_parameters()
    want = np.zeros(3)
    for x in xs:
        want = 0.9 * want + 0.1 * (x @ W).mean(axis=0)
    np.testing.assert_allclose(means["plain"].ravel(), want, rtol=1e-6)  # (float32 statistics)
    for name, m in means.items():
        np.testing.assert_array_equal(m, means["plain"], err_msg=name)
