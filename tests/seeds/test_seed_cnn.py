"""The seed CNN with the gradient-norm penalty (../shared/seeds/000, 001) through the native API.

conv(8, 3x3, pad 1) -> relu -> max pool 2 -> conv(16, 3x3, pad 1) -> relu -> max pool 2 ->
affine(10) -> mean softmax cross entropy; penalty = sum over parameters of ||d loss / d p||_2.
The gradient of loss + penalty needs second derivatives of every function in the network; it is
compared with central differences of the whole computation in float64.
"""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import gradhub.parametric_functions as PF
import numpy as np
from gradhub.testing import gradcheck


def _net(x: gh.Variable, t: gh.Variable, w1, b1, w2, b2, w3, b3):  # type: ignore[no-untyped-def]
    h = F.relu(F.convolution(x, w1, b1, pad=(1, 1)))
    h = F.max_pooling(h, (2, 2))
    h = F.relu(F.convolution(h, w2, b2, pad=(1, 1)))
    h = F.max_pooling(h, (2, 2))
    p = F.affine(h, w3, b3)
    return F.mean(F.softmax_cross_entropy(p, t))


def _params(rng: np.random.Generator) -> list[np.ndarray]:
    return [
        rng.standard_normal((8, 3, 3, 3)) * 0.3,
        rng.standard_normal(8) * 0.1,
        rng.standard_normal((16, 8, 3, 3)) * 0.2,
        rng.standard_normal(16) * 0.1,
        rng.standard_normal((16 * 2 * 2, 10)) * 0.2,
        rng.standard_normal(10) * 0.1,
    ]


def test_penalty_gradient_matches_numeric_second_order_derivative() -> None:
    rng = np.random.default_rng(7)
    x = gh.Variable(rng.standard_normal((2, 3, 8, 8)), need_grad=False)
    t = gh.Variable(rng.integers(0, 10, (2, 1)), need_grad=False)

    def total(*params: gh.Variable) -> gh.Variable:
        loss = _net(x, t, *params)
        grads = gh.grad([loss], list(params), create_graph=True)
        gp = sum(F.sum(g**2.0) ** 0.5 for g in grads)
        return loss + gp

    gradcheck(total, _params(rng), order=1, n_directions=4, rtol=1e-5, atol=1e-7)


def test_seed_program_runs_with_static_re_execution() -> None:
    """The seed as written (nnabla style): build once, ``loss.forward()``, ``loss.backward()``;
    the accumulated gradients equal a fresh eager computation of loss + penalty."""
    rng = np.random.default_rng(0)
    x = gh.Variable(rng.standard_normal((4, 3, 32, 32)).astype(np.float32), need_grad=False)
    y = gh.Variable(rng.integers(0, 10, (4, 1)), need_grad=False)
    h = PF.convolution(x, 8, (3, 3), (1, 1), name="conv1")
    h = F.relu(h)
    h = F.max_pooling(h, (2, 2))
    h = PF.convolution(h, 16, (3, 3), (1, 1), name="conv2")
    h = F.relu(h)
    h = F.max_pooling(h, (2, 2))
    p = PF.affine(h, 10, name="pred")
    loss = F.mean(F.softmax_cross_entropy(p, y))
    params = list(gh.get_parameters().values())
    assert [n for n in gh.get_parameters()] == [
        "conv1/conv/W",
        "conv1/conv/b",
        "conv2/conv/W",
        "conv2/conv/b",
        "pred/affine/W",
        "pred/affine/b",
    ]
    grads = gh.grad([loss], params)
    gp = sum(F.sum(g**2.0) ** 0.5 for g in grads)
    loss = loss + gp
    x.d = rng.standard_normal((4, 3, 32, 32)).astype(np.float32)  # a new batch
    loss.forward()
    loss.backward()
    got = [q.g.copy() for q in params]

    # the same on the new batch, eagerly and from scratch
    def eager() -> list[gh.Variable]:
        ws = [gh.Variable(q.d.copy()) for q in params]
        lo = _net(x, y, *ws)
        gs = gh.grad([lo], ws)
        tot = lo + sum(F.sum(g**2.0) ** 0.5 for g in gs)
        return gh.grad([tot], ws, create_graph=False)  # type: ignore[return-value]

    for a, b in zip(got, eager()):
        np.testing.assert_allclose(a, b.d, rtol=1e-4, atol=1e-6)
