"""gradhub.func against torch.func on the same functions and values (float64): vjp, jvp, grad
with tuple argnums, jacrev, jacfwd, hessian, hvp (as torch.func.jvp of torch.func.grad), vhp and
a third-order composition, vmap of grad and vmap's axes. Skipped where PyTorch is not installed."""

from __future__ import annotations

from typing import Any

import gradhub.func as ghf
import numpy as np
import pytest

# torch.func traces through torch.jit on first use, which warns about its own deprecation
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)

torch = pytest.importorskip("torch")
tf = pytest.importorskip("torch.func")

RNG = np.random.default_rng(3)
W = RNG.standard_normal((3, 4))
X = RNG.standard_normal(4)
Y = RNG.standard_normal(3)
V = RNG.standard_normal(4)


def f(x: Any, y: Any, w: Any) -> Any:
    """Works on gradhub Variables and on torch tensors alike."""
    h = w @ (x * x * x) / 3.0
    return h * y + y * y


def loss(x: Any, y: Any, w: Any) -> Any:
    return (f(x, y, w) ** 2.0).sum()


def T(a: np.ndarray) -> Any:
    return torch.from_numpy(a)


def close(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            close(a, b)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.d, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_vjp_and_jvp() -> None:
    u = RNG.standard_normal(3)
    _, fn = ghf.vjp(f, X, Y, W)
    _, tfn = tf.vjp(f, T(X), T(Y), T(W))
    close(fn(u), tfn(T(u)))
    tangents = (V, RNG.standard_normal(3), RNG.standard_normal((3, 4)))
    out, t = ghf.jvp(f, (X, Y, W), tangents)
    tout, tt = tf.jvp(f, (T(X), T(Y), T(W)), tuple(T(a) for a in tangents))
    close(out, tout)
    close(t, tt)


@pytest.mark.parametrize("argnums", [0, 1, (0, 2), (2, 0, 1)])
def test_grad_jacrev_jacfwd_with_argnums(argnums: Any) -> None:
    args = (X, Y, W)
    targs = tuple(T(a) for a in args)
    close(ghf.grad(loss, argnums)(*args), tf.grad(loss, argnums)(*targs))
    close(ghf.jacrev(f, argnums)(*args), tf.jacrev(f, argnums)(*targs))
    close(ghf.jacfwd(f, argnums)(*args), tf.jacfwd(f, argnums)(*targs))


def test_hessian_hvp_vhp_and_third_order() -> None:
    args = (X, Y, W)
    targs = tuple(T(a) for a in args)
    close(ghf.hessian(loss, (0, 1))(*args), tf.hessian(loss, (0, 1))(*targs))

    def lx(x: Any) -> Any:
        return loss(x, Y, W) if not isinstance(x, torch.Tensor) else loss(x, T(Y), T(W))

    _, (hv,) = ghf.hvp(lx, (X,), (V,))
    _, thv = tf.jvp(tf.grad(lx), (T(X),), (T(V),))
    close(hv, thv)
    _, (vh,) = ghf.vhp(lx, (X,), (V,))
    close(vh, thv)
    close(ghf.jacfwd(ghf.jacrev(ghf.grad(lx)))(X), tf.jacfwd(tf.jacrev(tf.grad(lx)))(T(X)))


def test_vmap_of_grad_and_in_out_axes() -> None:
    xs = RNG.standard_normal((6, 4))

    def lw(x: Any, w: Any) -> Any:
        return ((w @ (x * x)) ** 2.0).sum()

    ours = ghf.vmap(ghf.grad(lw, argnums=1), in_axes=(0, None))(xs, W)
    theirs = tf.vmap(tf.grad(lw, argnums=1), in_dims=(0, None))(T(xs), T(W))
    close(ours, theirs)
    close(
        ghf.vmap(lambda a, b: (a * b, a.sum()), in_axes=(1, 0), out_axes=(1, 0))(xs.T, xs),
        tf.vmap(lambda a, b: (a * b, a.sum()), in_dims=(1, 0), out_dims=(1, 0))(T(xs.T), T(xs)),
    )
