"""gradhub.func's ``jacrev``, ``jacfwd`` and ``hessian`` push their basis vectors all at once
through ``vmap`` (``chunk_size`` at a time): the results equal the loop over basis vectors
(``chunk_size=1``) and float64 central differences, stay differentiable, keep float32, tuple
``argnums``/outputs and ``has_aux``; a function without a batching rule on the path makes them
take the loop quietly (no warning); bad ``chunk_size`` values raise naming the function."""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterator
from typing import Any

import gradhub as gh
import gradhub.func as ghf
import numpy as np
import pytest
from func_helpers import X, Y, f_vec, f_vec_np, num_jac
from gradhub import batching, plugins
from gradhub.ops import call

RNG = np.random.default_rng(7)


def mlp_loss(th: Any) -> Any:
    """The squared error of a small network (activation z / (1 + z^2)), its 23 parameters in
    ``th``."""
    xs = gh.Variable(np.linspace(-1.0, 1.0, 12).reshape(4, 3), need_grad=False)
    w1 = th[0:12].reshape(3, 4)
    b1 = th[12:16]
    w2 = th[16:20].reshape(4, 1)
    z = xs @ w1 + b1
    h = (z / (z * z + 1.0)) @ w2 + th[20:21]
    return ((h - th[21:23].sum()) ** 2.0).sum()


def both(f: Any, chunk: int | None, **kw: Any) -> tuple[Any, Any]:
    return ghf.jacrev(f, chunk_size=chunk, **kw), ghf.jacfwd(f, chunk_size=chunk, **kw)


def flat(j: Any) -> list[np.ndarray]:
    if isinstance(j, tuple):
        return [a for e in j for a in flat(e)]
    return [j.d]


@pytest.mark.parametrize("chunk", [None, 2, 3, 100])
def test_vectorized_jacobians_equal_the_loop_and_central_differences(chunk: int | None) -> None:
    for kw in ({}, {"argnums": (0, 1)}, {"argnums": 1}):
        for jac in both(f_vec, chunk, **kw):
            got = jac(X, Y)
            ref = (ghf.jacrev if jac.__doc__.startswith("Jacobian (r") else ghf.jacfwd)(
                f_vec, chunk_size=1, **kw
            )(X, Y)
            for a, b in zip(flat(got), flat(ref)):
                np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)
        idx = kw.get("argnums", 0)
        for k, i in enumerate(idx if isinstance(idx, tuple) else (idx,)):
            num = num_jac(f_vec_np, [X, Y], i)
            for jac in both(f_vec, chunk, **kw):
                got = jac(X, Y)
                g = got[k] if isinstance(got, tuple) else got
                np.testing.assert_allclose(g.d, num, rtol=1e-6, atol=1e-7)


def test_tuple_outputs_and_has_aux_through_the_vectorized_path() -> None:
    x = RNG.standard_normal(3)

    def f(x: Any) -> Any:
        return (x * x, (x**3.0).sum(), x.reshape(3, 1) * x), "aux"

    for jac in both(f, None, has_aux=True):
        (a, b, c), aux = jac(x)
        assert aux == "aux"
        np.testing.assert_allclose(a.d, np.diag(2 * x), atol=1e-15)
        np.testing.assert_allclose(b.d, 3 * x**2)
        expected = np.einsum("ik,j->ijk", np.eye(3), x) + np.einsum("i,jk->ijk", x, np.eye(3))
        np.testing.assert_allclose(c.d, expected, atol=1e-15)
        assert c.shape == (3, 3, 3)


def test_the_vectorized_path_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    import gradhub.func as fmod

    def refuse(*args: Any) -> Any:
        raise AssertionError("the loop over basis vectors ran")

    th = RNG.standard_normal(23) * 0.5
    ref = ghf.hessian(mlp_loss, chunk_size=1)(th).d
    monkeypatch.setattr(fmod, "_jac_fwd", refuse)
    monkeypatch.setattr(fmod, "_jac_rev", refuse)
    np.testing.assert_allclose(ghf.jacrev(f_vec)(X, Y).d, num_jac(f_vec_np, [X, Y], 0), rtol=1e-6)
    np.testing.assert_allclose(ghf.jacfwd(f_vec)(X, Y).d, num_jac(f_vec_np, [X, Y], 0), rtol=1e-6)
    # hessian: the scalar's jacrev is one reverse pass; jacfwd pushes the 23 tangents at once
    monkeypatch.setattr(fmod, "_jac_rev", lambda outs, xs: [[ghf._grads(outs, xs)[0]]])
    h = ghf.hessian(mlp_loss)(th).d
    np.testing.assert_allclose(h, ref, rtol=1e-12, atol=1e-13)


def test_hessian_of_an_mlp_against_central_differences_float64_and_float32() -> None:
    th = RNG.standard_normal(23) * 0.5
    h = ghf.hessian(mlp_loss)(th)
    fd = num_jac(lambda z: ghf.grad(mlp_loss)(z).d, [th], 0)
    np.testing.assert_allclose(h.d, fd, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(h.d, h.d.T, atol=1e-13)
    for chunk in (None, 5):
        h32 = ghf.hessian(mlp_loss, chunk_size=chunk)(th.astype(np.float32))
        assert h32.dtype == np.float32
        np.testing.assert_allclose(h32.d, h.d, rtol=1e-3, atol=1e-4)
        j32 = ghf.jacrev(lambda x: x * x, chunk_size=chunk)(np.ones(4, np.float32))
        assert j32.dtype == np.float32


def test_vectorized_results_stay_differentiable_to_the_callers_variable() -> None:
    th = RNG.standard_normal(23) * 0.5
    c = RNG.standard_normal((23, 23))

    def weighted(z: Any) -> Any:
        return (ghf.hessian(mlp_loss)(z) * c).sum()

    x = gh.Variable(th, need_grad=True)
    (g,) = gh.grad([weighted(x)], [x])
    fd = num_jac(lambda z: np.array([(ghf.hessian(mlp_loss)(z).d * c).sum()]), [th], 0)[0]
    np.testing.assert_allclose(g.d, fd, rtol=1e-5, atol=1e-6)
    # third order: the Jacobian of the Hessian, vectorized at both levels
    f = lambda x: (x**3.0).sum() * x[0] * x[1] + (x * x).sum() * x[2]  # noqa: E731
    x0 = np.array([0.7, -1.2, 0.4])
    t3 = ghf.jacfwd(ghf.hessian(f))(x0).d
    t3_loop = ghf.jacfwd(ghf.hessian(f, chunk_size=1), chunk_size=1)(x0).d
    np.testing.assert_allclose(t3, t3_loop, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        t3, num_jac(lambda z: ghf.hessian(f)(z).d, [x0], 0), rtol=1e-5, atol=1e-6
    )


def test_under_no_grad_the_callers_variable_is_a_constant() -> None:
    x = gh.Variable(RNG.standard_normal(3), need_grad=True)
    with gh.no_grad():
        j = ghf.jacrev(lambda z: z * z)(x)
    np.testing.assert_allclose(j.d, np.diag(2 * x.d))
    (g0,) = gh.grad([j.sum()], [x])  # not connected: as on the loop path, a zero gradient
    np.testing.assert_array_equal(g0.d, np.zeros(3))
    y = ghf.jacfwd(lambda z: z * z)(x)
    (g,) = gh.grad([y.sum()], [x])
    np.testing.assert_allclose(g.d, 2.0 * np.ones(3))


CUBE = """
import gradhub

def cube(xp, x):
    return x * x * x

def cube_bw(gy, inputs, in_shapes, outputs, out_shapes):
    x = inputs[0]
    return [gy[0] * x * x * 3.0]

@gradhub.hookimpl
def gradhub_add_functions(register):
    register.function(NAME, cube, rule=cube_bw, need_inputs=(0,), need_outputs=(), **OPTIONS)
"""


def _load_cube(name: str, **options: Any) -> None:
    """A plugin adding ``x ** 3`` as the function ``name`` with a rule and no JVP rule, and no
    batching rule unless ``elementwise=True`` gives it the generic one."""
    mod = types.ModuleType(f"{name.lower()}_plugin")
    mod.__dict__.update(NAME=name, OPTIONS=options)
    exec(CUBE, mod.__dict__)
    plugins.load_plugins(extra=[(mod.__name__, mod)])


@pytest.fixture
def cube_plugin(fresh_plugins: None) -> Iterator[None]:
    _load_cube("CubeNoBatching")
    yield


def test_a_function_without_a_batching_rule_takes_the_loop_quietly(
    cube_plugin: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batching, "_warned", set())
    x = RNG.uniform(0.5, 1.0, 4)

    def f(x: Any) -> Any:
        return call("CubeNoBatching", x) * 2.0

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jr = ghf.jacrev(f)(x)
        jf = ghf.jacfwd(f)(x)
        h = ghf.hessian(lambda x: f(x).sum())(x)
    assert batching._warned == set()
    np.testing.assert_allclose(jr.d, np.diag(6 * x**3 / x), rtol=1e-14)
    np.testing.assert_allclose(jf.d, jr.d, rtol=1e-14)
    np.testing.assert_allclose(h.d, np.diag(12 * x), rtol=1e-13)
    assert batching._refusing == 0
    # vmap itself still loops with its one-time warning
    with pytest.warns(UserWarning, match=r"CubeNoBatching.*has no batching rule"):
        ghf.vmap(f)(x.reshape(2, 2))


def test_bad_chunk_size_raises_naming_the_function() -> None:
    for fn in (ghf.jacrev, ghf.jacfwd, ghf.hessian):
        for bad in (0, -2, 1.5, True):
            with pytest.raises(ValueError, match=rf"{fn.__name__}: chunk_size must be None or a"):
                fn(lambda x: x, chunk_size=bad)


def rerun_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``jacfwd`` take ``vmap`` over the basis of ``f`` rerun with one tangent each (the
    path used inside an outer ``vmap``) instead of pushing the tangents through the graph."""
    import gradhub.func as fmod

    monkeypatch.setattr(fmod, "_push_tangents", lambda outs, xs: False)


@pytest.mark.parametrize("chunk", [None, 4, 7])
def test_forward_over_reverse_hessian_runs_f_once_and_equals_the_rerun_path(
    chunk: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    th = RNG.standard_normal(23) * 0.5
    calls = []

    def counted(z: Any) -> Any:
        calls.append(1)
        return mlp_loss(z)

    h = ghf.hessian(counted, chunk_size=chunk)(th)
    assert len(calls) == 1  # the gradient's graph is recorded once; only the tangents batch
    fd = num_jac(lambda z: ghf.grad(mlp_loss)(z).d, [th], 0)
    np.testing.assert_allclose(h.d, fd, rtol=1e-6, atol=1e-7)
    with monkeypatch.context() as m:
        rerun_path(m)
        calls.clear()
        old = ghf.hessian(counted, chunk_size=chunk)(th)
        # once as given, then once per chunk inside vmap over the basis
        assert len(calls) == 1 + (1 if chunk is None else -(-23 // chunk))
    np.testing.assert_allclose(h.d, old.d, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(
        h.d, ghf.hessian(mlp_loss, chunk_size=1)(th).d, rtol=1e-13, atol=1e-14
    )


def test_batched_tangents_through_tuple_argnums_and_outputs_equal_the_rerun_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def f(x: Any, y: Any) -> Any:
        return (x * y).sum() * x, y * 3.0, (x**2.0).sum()  # the 2nd ignores x; the 3rd y

    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    new = ghf.jacfwd(f, argnums=(0, 1), chunk_size=2)(x, y)
    with monkeypatch.context() as m:
        rerun_path(m)
        old = ghf.jacfwd(f, argnums=(0, 1), chunk_size=2)(x, y)
    for a, b in zip(flat(new), flat(old)):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(new[1][0].d, np.zeros((3, 3)))
    np.testing.assert_allclose(new[1][1].d, 3.0 * np.eye(3))
    np.testing.assert_allclose(new[0][0].d, np.outer(x, y) + (x * y).sum() * np.eye(3))
    np.testing.assert_allclose(new[2][1].d, np.zeros(3))


def test_a_function_without_a_jvp_rule_is_transposed_under_batched_tangents(
    fresh_plugins: None,
) -> None:
    _load_cube("CubeNoJvp", elementwise=True)
    assert gh.ops.fdef("CubeNoJvp").jvp_rule is None
    x = RNG.uniform(0.5, 1.5, 4)
    calls = []

    def f(z: Any) -> Any:
        calls.append(1)
        return (call("CubeNoJvp", z) * z).sum()  # sum x^4: Hessian diag(12 x^2)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no loop fallback on the way
        h = ghf.hessian(f)(x)
    assert len(calls) == 1
    np.testing.assert_allclose(h.d, np.diag(12 * x**2), rtol=1e-13, atol=1e-13)


def test_inside_vmap_the_tangents_are_pushed_through_the_batch_graph(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``vmap(hessian(f))`` and ``vmap(jacfwd(f))`` (per-sample curvature): the basis tangents
    go through the graph of the whole outer batch, each repeated along the outer batch axes;
    ``f`` runs once; the results equal the rerun path, the loop over the elements and central
    differences, also nested and with an argument that is not batched."""
    ths = RNG.standard_normal((3, 23)) * 0.5
    calls = []

    def counted(z: Any) -> Any:
        calls.append(1)
        return mlp_loss(z)

    h = ghf.vmap(ghf.hessian(counted))(ths)
    assert len(calls) == 1 and h.shape == (3, 23, 23)
    for b in range(3):
        fd = num_jac(lambda z: ghf.grad(mlp_loss)(z).d, [ths[b]], 0)
        np.testing.assert_allclose(h.d[b], fd, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(h.d[b], ghf.hessian(mlp_loss)(ths[b]).d, rtol=1e-13, atol=1e-14)
    with monkeypatch.context() as m:
        rerun_path(m)
        old = ghf.vmap(ghf.hessian(mlp_loss, chunk_size=7))(ths)
    np.testing.assert_allclose(h.d, old.d, rtol=1e-13, atol=1e-14)

    def g(x: Any, y: Any) -> Any:  # y is not batched; its Jacobian is per element too
        return (x * y).sum() * x + y**2.0

    xs, y = RNG.standard_normal((2, 4, 3)), RNG.standard_normal(3)
    inner = ghf.vmap(ghf.jacfwd(g, argnums=(0, 1)), in_axes=(0, None))
    jx, jy = ghf.vmap(inner, in_axes=(0, None))(xs, y)
    assert jx.shape == jy.shape == (2, 4, 3, 3)
    for a in range(2):
        for b in range(4):
            x = xs[a, b]
            np.testing.assert_allclose(jx.d[a, b], np.outer(x, y) + (x * y).sum() * np.eye(3))
            np.testing.assert_allclose(jy.d[a, b], np.outer(x, x) + np.diag(2 * y))
