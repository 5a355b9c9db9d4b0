"""custom_vjp and custom_jvp inside ``vmap``: one node for the whole batch, its ``fwd``/``bwd``
(or ``jvp``) mapped over the batch as JAX batches them, instead of one call per element. Values
against jax 0.10.2 on the same functions (float64, ``jax_enable_x64``); core functions only."""

from __future__ import annotations

import warnings
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub.func import custom_jvp, custom_vjp, grad, hessian, jacfwd, jacrev, jvp, vmap

X = np.arange(6.0).reshape(3, 2) * 0.5 + 0.25
Y = np.array([1.5, -2.0])


def _f(calls: list[str]) -> custom_vjp:
    """x y k with a VJP that is deliberately not the true one, ``(3 k g y^2, 2 g x^2)``; the
    residuals hold a Python float (JAX allows it)."""

    def f(x: Any, y: Any, k: float) -> Any:
        return x * y * k

    f = custom_vjp(f, nondiff_argnums=(2,))

    def fwd(x: Any, y: Any, k: float) -> Any:
        calls.append(f"fwd {type(x).__name__}")
        return f(x, y, k), (x, y, 2.0)

    def bwd(k: float, res: Any, g: Any) -> Any:
        calls.append(f"bwd {type(g).__name__}")
        x, y, two = res
        return (g * y * y * 3.0 * k, g * x * x * two)

    f.defvjp(fwd, bwd)
    return f


def _h(calls: list[str]) -> custom_jvp:
    """x^3 y with a JVP that is deliberately not the true one: 3 x^2 x' y^2 + x^3 y'."""

    @custom_jvp
    def h(x: Any, y: Any) -> Any:
        return x * x * x * y

    @h.defjvp
    def h_jvp(primals: Any, tangents: Any) -> Any:
        calls.append(f"jvp {type(primals[0]).__name__}")
        (x, y), (xd, yd) = primals, tangents
        return h(x, y), 3.0 * x * x * xd * y * y + x * x * x * yd

    return h


@pytest.fixture(autouse=True)
def _no_loop() -> Any:
    """The loop fallback warns; here it must not run."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="vmap:.*runs once per batch element")
        yield


def test_per_sample_gradients_run_fwd_and_bwd_once_for_the_batch() -> None:
    calls: list[str] = []
    f = _f(calls)
    x, y = gh.Variable(X), gh.Variable(Y)

    def loss(a: Any, b: Any) -> Any:
        return f(a * a, b, 2.0).sum()

    gx, gy = vmap(grad(loss, argnums=(0, 1)), in_axes=(0, None))(x, y)
    # jax 0.10.2: vmap(grad(loss, argnums=(0, 1)), in_axes=(0, None))(X, y)
    np.testing.assert_allclose(gx.d, [[6.75, 36.0], [33.75, 84.0], [60.75, 132.0]], rtol=1e-13)
    np.testing.assert_allclose(
        gy.d,
        [[7.8125e-03, 6.328125e-01], [4.8828125, 18.7578125], [51.2578125, 114.3828125]],
        rtol=1e-13,
    )
    assert calls == ["fwd BatchedVariable", "bwd BatchedVariable"]


def test_gradient_of_a_vmapped_function_sums_unbatched_cotangents() -> None:
    calls: list[str] = []
    f = _f(calls)
    x, y = gh.Variable(X), gh.Variable(Y)
    out = vmap(lambda a, b: f(a * a, b, 2.0), in_axes=(0, None))(x, y)
    gx, gy = gh.grad([out.sum()], [x, y])
    # jax 0.10.2: grad(lambda X, y: vmap(lambda a: f(a * a, y, 2.0))(X).sum(), (0, 1))
    np.testing.assert_allclose(gx.d, [[6.75, 36.0], [33.75, 84.0], [60.75, 132.0]], rtol=1e-13)
    np.testing.assert_allclose(gy.d, [56.1484375, 133.7734375], rtol=1e-13)
    assert calls == ["fwd BatchedVariable", "bwd Variable"] or calls == [
        "fwd BatchedVariable",
        "bwd BatchedVariable",
    ]


def test_jacobians_and_second_derivatives_through_the_batched_node() -> None:
    f = _f([])
    y = gh.Variable(Y)
    # jax 0.10.2: jacrev(lambda x: f(x, x * x, 0.5))(y), jacrev(jacrev(s))(y) (JAX's hessian
    # (jacfwd of jacrev) refuses a custom_vjp function; gradhub's transposes the rule)
    np.testing.assert_allclose(
        jacrev(lambda v: f(v, v * v, 0.5))(y).d, [[21.09375, 0.0], [0.0, -8.0]], rtol=1e-13
    )
    hess = [[47.25, 0.0], [0.0, 0.0]]
    np.testing.assert_allclose(
        jacrev(jacrev(lambda v: f(v, v * v, 0.5).sum()))(y).d, hess, atol=1e-12
    )
    np.testing.assert_allclose(hessian(lambda v: f(v, v * v, 0.5).sum())(y).d, hess, atol=1e-12)


def test_nested_vmap_and_another_batch_axis() -> None:
    calls: list[str] = []
    f = _f(calls)
    y = gh.Variable(Y)
    z = gh.Variable(np.arange(12.0).reshape(2, 3, 2) * 0.1 + 0.3)
    got = vmap(vmap(grad(lambda a: f(a * a, y, 2.0).sum())))(z)
    # jax 0.10.2: vmap(vmap(grad(lambda a: f(a * a, y, 2.0).sum())))(Z)
    want = [[[8.1, 19.2], [13.5, 28.8], [18.9, 38.4]], [[24.3, 48.0], [29.7, 57.6], [35.1, 67.2]]]
    np.testing.assert_allclose(got.d, want, rtol=1e-13)
    assert calls.count("fwd BatchedVariable") == 1 and calls.count("bwd BatchedVariable") == 1
    xt = gh.Variable(X.T.copy())
    out = vmap(lambda c: f(c, y, 1.0), in_axes=1)(xt)
    np.testing.assert_allclose(out.d, X * Y, rtol=1e-15)
    (g,) = gh.grad([vmap(lambda c: f(c, y, 1.0), in_axes=1)(xt).sum()], [xt])
    np.testing.assert_allclose(g.d, (3.0 * Y * Y * np.ones_like(X)).T, rtol=1e-15)


def test_none_cotangents_and_residuals_that_do_not_depend_on_the_batch() -> None:
    @custom_vjp
    def scale(x: Any, w: Any) -> Any:
        return x * w

    def fwd(x: Any, w: Any) -> Any:
        return scale(x, w), (w, None, "label")

    def bwd(res: Any, g: Any) -> Any:
        w, nothing, label = res
        assert nothing is None and label == "label"
        return (g * w * 10.0, None)

    scale.defvjp(fwd, bwd)
    x, w = gh.Variable(X), gh.Variable(Y)
    gx, gw = vmap(grad(lambda a, b: scale(a, b).sum(), argnums=(0, 1)), in_axes=(0, None))(x, w)
    np.testing.assert_allclose(gx.d, np.broadcast_to(Y * 10.0, X.shape))
    np.testing.assert_array_equal(gw.d, np.zeros(X.shape))  # (None: a zero cotangent)


def test_custom_jvp_batched_as_jax() -> None:
    calls: list[str] = []
    h = _h(calls)
    x, y = gh.Variable(X), gh.Variable(Y)
    gx, gy = vmap(grad(lambda a, b: h(a, b).sum(), argnums=(0, 1)), in_axes=(0, None))(x, y)
    # jax 0.10.2: vmap(grad(lambda a, b: h(a, b).sum(), argnums=(0, 1)), in_axes=(0, None))
    np.testing.assert_allclose(
        gx.d, [[0.421875, 6.75], [10.546875, 36.75], [34.171875, 90.75]], rtol=1e-13
    )
    np.testing.assert_allclose(
        gy.d, [[1.5625e-02, 4.21875e-01], [1.953125, 5.359375], [11.390625, 20.796875]], rtol=1e-13
    )
    assert calls.count("jvp BatchedVariable") >= 1 and "jvp Variable" not in calls
    calls.clear()
    t = gh.Variable(np.ones_like(X))
    got = vmap(lambda a, tt: jvp(lambda v: h(v, y), (a,), (tt,))[1])(x, t)
    # jax 0.10.2: vmap(lambda a, t: jvp(lambda v: h(v, y), (a,), (t,))[1])(X, ones)
    np.testing.assert_allclose(
        got.d, [[0.421875, 6.75], [10.546875, 36.75], [34.171875, 90.75]], rtol=1e-13
    )
    # jax 0.10.2: jacfwd(lambda a: h(a, a * a))(y), hessian(lambda a: h(a, a * a).sum())(y)
    np.testing.assert_allclose(
        jacfwd(lambda a: h(a, a * a))(y).d, [[44.296875, 0.0], [0.0, 224.0]], rtol=1e-13
    )
    np.testing.assert_allclose(
        hessian(lambda a: h(a, a * a).sum())(y).d, [[163.6875, 0.0], [0.0, -640.0]], rtol=1e-13
    )


def test_a_batched_node_runs_again_on_new_data() -> None:
    """``forward()`` on a graph holding the batch's node runs the mapped ``fwd`` on the new
    data; a backward after it follows ``bwd`` on them."""
    calls: list[str] = []
    f = _f(calls)
    x, y = gh.Variable(X.copy()), gh.Variable(Y)
    z = vmap(lambda a: f(a, y, 2.0))(x).sum()
    x.d = X * 2.0
    z.forward()
    assert z.d == pytest.approx((X * 2.0 * Y * 2.0).sum())
    (gx,) = gh.grad([z], [x], create_graph=False)
    np.testing.assert_allclose(gx.d, np.broadcast_to(3.0 * 2.0 * Y * Y, X.shape), rtol=1e-15)


def test_a_function_subclass_is_batched_with_its_ctx() -> None:
    """gradhub.Function under vmap: ``forward`` and ``backward`` run once for the batch, the
    Variables saved on ``ctx`` (``save_for_backward`` and attributes) mapped over it (PyTorch
    batches an autograd.Function with ``generate_vmap_rule=True`` the same way)."""
    runs: list[str] = []

    class Cube(gh.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, k: float) -> Any:
            runs.append("forward")
            ctx.save_for_backward(x)
            ctx.twice = x * 2.0
            ctx.k = k
            return x * x * x * k

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            runs.append("backward")
            (x,) = ctx.saved_tensors
            return g * 1.5 * x * ctx.twice * ctx.k, None

    x = gh.Variable(X)
    got = vmap(grad(lambda a: Cube.apply(a, 0.5).sum()))(x)
    np.testing.assert_allclose(got.d, 3.0 * X * X * 0.5, rtol=1e-15)
    assert runs == ["forward", "backward"]
    # second derivative through the batched backward: d/dx of 1.5 k x (2x) = 6 k x
    hess = vmap(grad(lambda a: grad(lambda b: Cube.apply(b, 0.5).sum())(a).sum()))(x)
    np.testing.assert_allclose(hess.d, 6.0 * 0.5 * X, rtol=1e-15)


def test_a_batched_nondiff_argument_is_refused_by_name() -> None:
    """Regression: a nondiff_argnums argument batched by vmap gave every element the first
    element's value (a silently wrong gradient); JAX refuses it, and so does gradhub."""
    f = _f([])
    k = gh.Variable(np.array([1.0, 4.0, -2.0]))
    x, y = gh.Variable(X), gh.Variable(Y)
    with pytest.raises(gh.GradhubError, match=r"function f: argument 2 is in nondiff_argnums"):
        vmap(grad(lambda kk, a: f(a, y, kk).sum(), argnums=1), in_axes=(0, 0))(k, x)


def test_function_ctx_attributes_set_in_backward_persist() -> None:
    """Regression: ctx was rebuilt at each backward, losing what backward set on it (PyTorch
    2.13 keeps it: two backward passes count 1, then 2)."""

    class Count(gh.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.calls = 0
            return x * 1.0

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            ctx.calls += 1
            return g * float(ctx.calls)

    x = gh.Variable(np.ones(3))
    y = Count.apply(x).sum()
    (g1,) = gh.grad([y], [x], create_graph=False)
    (g2,) = gh.grad([y], [x], create_graph=False)
    np.testing.assert_array_equal(g1.d, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(g2.d, [2.0, 2.0, 2.0])


def test_residuals_in_plain_objects_fall_back_to_the_loop() -> None:
    """Regression: residuals holding Variables in an object that is not a pytree (a plain
    class) cannot be mapped over the batch; the call runs once per element (with the loop's
    warning), as before batched custom functions, and gives the right values."""

    class Box:
        def __init__(self, v: Any) -> None:
            self.v = v

    @custom_vjp
    def cube(x: Any) -> Any:
        return x * x * x

    cube.defvjp(lambda x: (cube(x), Box(x)), lambda res, g: (g * 3.0 * res.v * res.v,))
    x = gh.Variable(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = vmap(grad(lambda a: cube(a).sum()))(x)
    np.testing.assert_allclose(got.d, 3.0 * X * X, rtol=1e-15)


def test_a_wrong_cotangent_shape_names_one_element_s_shape() -> None:
    @custom_vjp
    def f(x: Any) -> Any:
        return x * 2.0

    f.defvjp(lambda x: (f(x), None), lambda res, g: (g.sum(),))
    with pytest.raises(
        gh.BackwardRuleError, match=r"argument 0 has shape \(\), expected .* \(2,\)"
    ):
        vmap(grad(lambda a: f(a).sum()))(gh.Variable(X))


def test_a_closure_over_the_same_vmap_s_batch_is_refused() -> None:
    """Regression: fwd closing over a value batched by the vmap that maps the call lost that
    batch axis (its result escaped vmap); it raises, naming the function."""
    s = gh.Variable(np.array([0.5, 2.0, -1.0]))

    def per(x: Any, k: Any) -> Any:
        f = custom_vjp(lambda v: v * k)
        f.defvjp(lambda v: (v * k, v), lambda res, g: (g * k * 3.0,))
        return (f(x) ** 2.0).sum()

    with pytest.raises(gh.GradhubError, match="use a value batched by the vmap"):
        vmap(grad(per))(gh.Variable(X), s)
