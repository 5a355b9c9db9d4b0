"""gradhub.func with pytree arguments and outputs (dicts, tuples, lists, nested; None as an
empty subtree), as torch.func and JAX take them: grad of a dict of parameters is a dict of
gradients, vmap maps over every array of a dict, jacobians nest as jac[output][argument].
Expected values are closed forms and float64 central differences, and torch.func's where
PyTorch is installed."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import gradhub as gh
import gradhub.func as ghf
import gradhub.functions as F
import numpy as np
import pytest

RNG = np.random.default_rng(11)
PARAMS = {
    "w1": RNG.standard_normal((3, 4)),
    "b1": RNG.standard_normal(4),
    "out": (RNG.standard_normal((4, 1)), None),
}
X = RNG.standard_normal((5, 3))
Y = RNG.standard_normal((5, 1))


def mlp(p: Any, x: Any) -> Any:
    z = x @ p["w1"] + p["b1"]
    h = F.log(z * z + 1.0)
    return h @ p["out"][0]


def loss(p: Any, x: Any, y: Any) -> Any:
    return ((mlp(p, x) - y) ** 2.0).sum()


def _leaves(p: Any) -> list[tuple[str, np.ndarray]]:
    return [("w1", p["w1"]), ("b1", p["b1"]), ("out0", p["out"][0])]


def _numeric_grad(fn: Any, p: dict[str, Any], eps: float = 1e-6) -> dict[str, np.ndarray]:
    """Central differences of the float ``fn(p)`` for every array of ``p``."""
    out = {}
    for name, arr in _leaves(p):
        g = np.zeros_like(arr)
        for i in np.ndindex(arr.shape):
            old = arr[i]
            arr[i] = old + eps
            hi = fn(p)
            arr[i] = old - eps
            lo = fn(p)
            arr[i] = old
            g[i] = (hi - lo) / (2 * eps)
        out[name] = g
    return out


def test_grad_of_a_dict_of_parameters_is_a_dict_of_gradients() -> None:
    p = {k: (v[0].copy(), None) if k == "out" else v.copy() for k, v in PARAMS.items()}
    g = ghf.grad(loss)(p, X, Y)
    assert list(g) == ["w1", "b1", "out"] and g["out"][1] is None
    want = _numeric_grad(lambda q: float(loss(q, X, Y).d), p)
    np.testing.assert_allclose(g["w1"].d, want["w1"], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g["b1"].d, want["b1"], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g["out"][0].d, want["out0"], rtol=1e-6, atol=1e-8)
    # value_and_grad, and a tuple argnums: one structure per argument
    v, (gp, gx) = ghf.value_and_grad(loss, argnums=(0, 1))(p, X, Y)
    assert float(v.d) == float(loss(p, X, Y).d)
    np.testing.assert_array_equal(gp["w1"].d, g["w1"].d)
    assert gx.shape == X.shape


def test_named_tuples_lists_and_a_list_of_numbers() -> None:
    Pair = namedtuple("Pair", "a b")
    g = ghf.grad(lambda t: (t.a * t.b[0] * t.b[1]).sum())(
        Pair(np.array([2.0]), [np.array([3.0]), np.array([5.0])])
    )
    assert isinstance(g, Pair) and isinstance(g.b, list)
    assert (float(g.a.d[0]), float(g.b[0].d[0]), float(g.b[1].d[0])) == (15.0, 10.0, 6.0)
    # a list of numbers holds no array: one array-like argument, as before
    np.testing.assert_array_equal(ghf.grad(lambda x: (x * x).sum())([1.0, 2.0]).d, [2.0, 4.0])


def test_the_gradient_stays_connected_and_composes() -> None:
    # the MAML meta-gradient with dicts: grad through an inner step taken with grad of a dict
    w = gh.Variable(RNG.standard_normal((3, 1)))
    b = gh.Variable(RNG.standard_normal(1))

    def task(p: Any, x: Any, y: Any) -> Any:
        return ((x @ p["w"] + p["b"] - y) ** 2.0).sum()

    def meta(p: Any) -> Any:
        g = ghf.grad(task)(p, X[:3], Y[:3])
        adapted = {k: p[k] - 0.1 * g[k] for k in p}
        return task(adapted, X[3:], Y[3:])

    m = ghf.grad(meta)({"w": w, "b": b})

    def meta_value(q: dict[str, np.ndarray]) -> float:
        return float(meta({k: gh.Variable(v) for k, v in q.items()}).d)

    q = {"w": w.d.copy(), "b": b.d.copy()}
    for k in q:
        e = np.zeros_like(q[k])
        e.flat[0] = 1e-6
        hi = meta_value({**q, k: q[k] + e})
        lo = meta_value({**q, k: q[k] - e})
        np.testing.assert_allclose(m[k].d.flat[0], (hi - lo) / 2e-6, rtol=1e-6)
    # gh.grad through the result reaches the caller's Variables
    (gw,) = gh.grad([m["b"].sum()], [w])
    assert gw.shape == (3, 1) and np.isfinite(gw.d).all()


def test_vjp_jvp_hvp_vhp_with_pytrees() -> None:
    def f(p: Any) -> Any:
        return {"s": (p["a"] * p["b"]).sum(), "v": (p["a"] ** 2.0, p["b"] * 3.0)}

    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    out, vjp_fn = ghf.vjp(f, {"a": a, "b": b})
    assert set(out) == {"s", "v"}
    # cotangents with the outputs' structure (dict entries in any order)
    (g,) = vjp_fn({"v": (np.ones(2), np.zeros(2)), "s": np.array(1.0)})
    np.testing.assert_allclose(g["a"].d, b + 2 * a)  # d/da of a.b + 1.(a^2)
    np.testing.assert_allclose(g["b"].d, a)
    with pytest.raises(ValueError, match=r"vjp_fn: cotangents: missing key 's'"):
        vjp_fn({"v": (np.ones(2), np.zeros(2))})
    _, t = ghf.jvp(f, ({"a": a, "b": b},), ({"a": np.ones(2), "b": np.zeros(2)},))
    np.testing.assert_allclose(float(t["s"].d), b.sum())
    np.testing.assert_allclose(t["v"][0].d, 2 * a)
    np.testing.assert_allclose(t["v"][1].d, 0.0)
    with pytest.raises(ValueError, match=r"jvp: tangents\[0\]: unexpected key 'c'"):
        ghf.jvp(f, ({"a": a, "b": b},), ({"a": a, "b": b, "c": a},))
    with pytest.raises(ValueError, match=r"jvp: tangents\[0\]\['b'\] has shape \(3,\)"):
        ghf.jvp(f, ({"a": a, "b": b},), ({"a": a, "b": np.ones(3)},))

    def s(p: Any) -> Any:  # (a.b)^2: H = [[b b^T, ...]] in closed form
        return (p["a"] * p["b"]).sum() ** 2.0

    v = {"a": np.array([1.0, 0.0]), "b": np.array([0.0, 1.0])}
    for product in (ghf.hvp, ghf.vhp):
        _, (hv,) = product(s, ({"a": a, "b": b},), (v,))
        dot = float(a @ b)
        # d/da = 2 (a.b) b, d/db = 2 (a.b) a; H v = 2 b (b.va) + 2 (a.b) vb + 2 b (a.vb)...
        want_a = 2 * b * (b @ v["a"]) + 2 * b * (a @ v["b"]) + 2 * dot * v["b"]
        want_b = 2 * a * (b @ v["a"]) + 2 * dot * v["a"] + 2 * a * (a @ v["b"])
        np.testing.assert_allclose(hv["a"].d, want_a)
        np.testing.assert_allclose(hv["b"].d, want_b)


def test_jacobians_and_hessian_nest_as_outputs_then_arguments() -> None:
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0, 0.5])

    def f(p: Any) -> Any:
        return {"x": p["a"] * 2.0, "y": (p["b"] ** 2.0,)}

    for jac in (ghf.jacrev, ghf.jacfwd):
        J = jac(f)({"a": a, "b": b})
        assert J["x"]["a"].shape == (2, 2) and J["x"]["b"].shape == (2, 3)
        assert J["y"][0]["b"].shape == (3, 3)
        np.testing.assert_allclose(J["x"]["a"].d, 2 * np.eye(2))
        np.testing.assert_allclose(J["x"]["b"].d, 0.0)
        np.testing.assert_allclose(J["y"][0]["b"].d, np.diag(2 * b))
    H = ghf.hessian(lambda p: (p["a"].sum() * p["b"] ** 2.0).sum())({"a": a, "b": b})
    np.testing.assert_allclose(H["a"]["a"].d, np.zeros((2, 2)))
    np.testing.assert_allclose(H["a"]["b"].d, np.tile(2 * b, (2, 1)))
    np.testing.assert_allclose(H["b"]["b"].d, np.diag(np.full(3, 2 * a.sum())))


def test_vmap_over_dicts_with_prefix_axes_and_per_sample_gradients() -> None:
    p = {"w1": PARAMS["w1"], "b1": PARAMS["b1"], "out": (PARAMS["out"][0], None)}

    def sample_loss(q: Any, x: Any, y: Any) -> Any:
        return loss(q, x[None], y[None])

    # torch.func's per-sample-gradient recipe: parameters unbatched, data batched
    per = ghf.vmap(ghf.grad(sample_loss), in_axes=(None, 0, 0))(p, X, Y)
    assert per["w1"].shape == (5, 3, 4) and per["out"][0].shape == (5, 4, 1)
    assert per["out"][1] is None
    for i in range(5):
        one = ghf.grad(sample_loss)(p, X[i], Y[i])
        np.testing.assert_allclose(per["w1"].d[i], one["w1"].d, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(per["b1"].d[i], one["b1"].d, rtol=1e-12, atol=1e-14)
    # a dict batched along different axes (a prefix tree of in_axes), dict outputs, out_axes
    d = {"u": RNG.standard_normal((4, 2)), "v": RNG.standard_normal((2, 4))}
    r = ghf.vmap(
        lambda q: {"sum": q["u"] + q["v"], "u": q["u"]},
        in_axes=({"u": 0, "v": 1},),
        out_axes={"sum": 1, "u": 0},
    )(d)
    np.testing.assert_allclose(r["sum"].d, (d["u"] + d["v"].T).T)
    np.testing.assert_allclose(r["u"].d, d["u"])
    with pytest.raises(ValueError, match=r"argument 0\['u'\] has size 4 along its axis 0 but"):
        ghf.vmap(lambda q: q["u"], in_axes=({"u": 0, "v": 0},))(d)
    with pytest.raises(ValueError, match=r"in_axes\[0\]: missing key 'v'"):
        ghf.vmap(lambda q: q["u"], in_axes=({"u": 0},))(d)
    with pytest.raises(TypeError, match=r"in_axes\[0\]\['u'\] must be an int or None"):
        ghf.vmap(lambda q: q["u"], in_axes=({"u": "0", "v": 0},))(d)


def test_errors_name_the_place_in_the_tree() -> None:
    with pytest.raises(TypeError, match=r"grad: argument 0\['n'\] must hold floating-point"):
        ghf.grad(lambda p: p["x"].sum())({"x": np.ones(2), "n": np.arange(3)})
    with pytest.raises(TypeError, match=r"grad: argument 0\['act'\]: Variable\(data\): expected"):
        ghf.grad(lambda p: p["x"].sum())({"x": np.ones(2), "act": "relu"})
    with pytest.raises(ValueError, match=r"grad: the arguments to differentiate hold no"):
        ghf.grad(lambda p: gh.Variable(np.float64(0.0)))({})
    with pytest.raises(TypeError, match=r"f must return a Variable or a tuple .* holding a float"):
        ghf.jacrev(lambda x: {"a": x, "b": 1.0})(np.ones(2))


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_against_torch_func() -> None:
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("torch.func")
    p = {"w1": PARAMS["w1"], "b1": PARAMS["b1"]}

    def tloss(q: Any, x: Any) -> Any:
        z = x @ q["w1"] + q["b1"]
        return (torch.log(z * z + 1.0) ** 2).sum()

    def gloss(q: Any, x: Any) -> Any:
        z = x @ q["w1"] + q["b1"]
        return (F.log(z * z + 1.0) ** 2.0).sum()

    tp = {k: torch.from_numpy(v) for k, v in p.items()}
    tx = torch.from_numpy(X)
    want = tf.vmap(tf.grad(tloss), in_dims=(None, 0))(tp, tx)
    got = ghf.vmap(ghf.grad(gloss), in_axes=(None, 0))(p, X)
    for k in p:
        np.testing.assert_allclose(got[k].d, want[k].numpy(), rtol=1e-12, atol=1e-14)
    want_h = tf.hessian(lambda q: tloss(q, tx))(tp)
    got_h = ghf.hessian(lambda q: gloss(q, X))(p)
    for i in p:
        for j in p:
            np.testing.assert_allclose(got_h[i][j].d, want_h[i][j].numpy(), rtol=1e-10, atol=1e-12)
