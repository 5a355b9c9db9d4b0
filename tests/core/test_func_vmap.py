"""``gradhub.func.vmap`` (CONTRACT section 3): in_axes (int, tuple, None, negative), out_axes
(int, tuple, None), tuple outputs, nesting, composition with grad (per-sample gradients against
the loop and against closed forms), differentiability of the mapped result, float32, and the
bad inputs (axis-size mismatch naming both sizes and the arguments). Core functions only."""

from __future__ import annotations

from typing import Any

import gradhub as gh
import gradhub.func as ghf
import numpy as np
import pytest

RNG = np.random.default_rng(5)


def test_in_axes_int_tuple_none_and_negative() -> None:
    x = RNG.standard_normal((4, 3))
    w = RNG.standard_normal((3, 2))
    out = ghf.vmap(lambda r, w: r @ w, in_axes=(0, None))(x, w)
    np.testing.assert_allclose(out.d, x @ w)
    out = ghf.vmap(lambda c: (c * c).sum(), in_axes=1)(x)
    np.testing.assert_allclose(out.d, (x * x).sum(axis=0))
    out = ghf.vmap(lambda c: (c * c).sum(), in_axes=-1)(x)
    np.testing.assert_allclose(out.d, (x * x).sum(axis=0))
    out = ghf.vmap(lambda a, b: a * b, in_axes=(1, 0))(x.T, x)
    np.testing.assert_allclose(out.d, x * x)


def test_out_axes_tuple_outputs_and_none() -> None:
    x = RNG.standard_normal((4, 3))
    c = gh.Variable(np.array([1.0, 2.0]), need_grad=False)
    a, b, k = ghf.vmap(lambda r: (r * 2.0, r.sum(), c * 1.0), out_axes=(1, 0, None))(x)
    np.testing.assert_allclose(a.d, 2 * x.T)
    np.testing.assert_allclose(b.d, x.sum(axis=1))
    np.testing.assert_allclose(k.d, c.d)
    np.testing.assert_allclose(ghf.vmap(lambda r: r * 1.0, out_axes=-1)(x).d, x.T)


def test_nested_vmap_maps_over_two_axes() -> None:
    x = RNG.standard_normal((2, 3, 4))
    y = RNG.standard_normal((4,))
    out = ghf.vmap(ghf.vmap(lambda r, y: (r * y).sum(), in_axes=(0, None)), in_axes=(0, None))(x, y)
    np.testing.assert_allclose(out.d, x @ y)
    out = ghf.vmap(ghf.vmap(lambda v: v * v, in_axes=1, out_axes=0), in_axes=0)(x)
    np.testing.assert_allclose(out.d, np.swapaxes(x * x, 1, 2))


def test_per_sample_gradients_match_the_loop_and_the_closed_form() -> None:
    xs = RNG.standard_normal((5, 3))
    ys = RNG.standard_normal(5)
    w = RNG.standard_normal(3)

    def loss(w: Any, x: Any, y: Any) -> Any:
        r = (w * x).sum() - y
        return r * r

    per = ghf.vmap(ghf.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    assert per.shape == (5, 3)
    loop = np.stack([ghf.grad(loss)(w, xs[i], np.float64(ys[i])).d for i in range(5)])
    np.testing.assert_allclose(per.d, loop)
    np.testing.assert_allclose(per.d, 2 * ((xs @ w) - ys)[:, None] * xs)


def test_the_mapped_result_is_differentiable() -> None:
    x = gh.Variable(RNG.standard_normal((4, 3)))
    out = ghf.vmap(lambda r: (r**3.0).sum())(x)
    (g,) = gh.grad([out.sum()], [x])
    np.testing.assert_allclose(g.d, 3 * x.d**2)
    j = ghf.jacrev(ghf.vmap(lambda r: (r * r).sum()))(x.d)
    expected = np.zeros((4, 4, 3))
    for i in range(4):
        expected[i, i] = 2 * x.d[i]
    np.testing.assert_allclose(j.d, expected)


def test_float32_stays_float32() -> None:
    x = np.ones((3, 2), dtype=np.float32)
    assert ghf.vmap(lambda r: r * 2.0)(x).dtype == np.float32
    assert ghf.vmap(ghf.grad(lambda r: (r * r).sum()))(x).dtype == np.float32


def test_axis_size_mismatch_names_both_sizes_and_arguments() -> None:
    with pytest.raises(
        ValueError,
        match=r"vmap: the batch sizes differ: argument 0 has size 4 along its axis 0 but "
        r"argument 1 has size 3 along its axis 0",
    ):
        ghf.vmap(lambda a, b: a.sum() * b.sum())(np.ones((4, 2)), np.ones((3, 2)))


def test_bad_axes_raise_naming_them() -> None:
    with pytest.raises(ValueError, match=r"vmap: in_axes\[0\]=2 is out of range for argument 0"):
        ghf.vmap(lambda a: a, in_axes=2)(np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"vmap: in_axes has 1 entries but there are 2 arg"):
        ghf.vmap(lambda a, b: a, in_axes=(0,))(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match=r"vmap: in_axes must batch at least one argument"):
        ghf.vmap(lambda a: a, in_axes=None)(np.ones(2))
    with pytest.raises(TypeError, match=r"vmap: in_axes\[0\] must be an int or None"):
        ghf.vmap(lambda a: a, in_axes=("0",))(np.ones(2))
    with pytest.raises(ValueError, match=r"vmap: out_axes\[0\]=3 is out of range for output 0"):
        ghf.vmap(lambda a: a * 1.0, out_axes=3)(np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"vmap: out_axes\[0\] is None but output 0 differs"):
        ghf.vmap(lambda a: a * 1.0, out_axes=None)(np.arange(2.0))
    with pytest.raises(ValueError, match=r"vmap: the batch axis has size 0"):
        ghf.vmap(lambda a: a)(np.ones((0, 2)))


def test_randomness_argument_is_checked_and_random_functions_follow_it() -> None:
    """``randomness`` as ``torch.func.vmap``: a bad value raises naming vmap; a function that
    draws random numbers (here one calling ``gradhub.batching.random_call``) raises in the
    default ``"error"`` mode, in any level of nested vmaps, and runs with ``"same"`` or
    ``"different"``; inside a Jacobian's own vmap it makes the Jacobian take its loop."""
    from gradhub import batching

    with pytest.raises(
        ValueError, match=r"vmap: randomness must be 'error', 'different' or 'same'"
    ):
        ghf.vmap(lambda x: x, randomness="differnt")
    drawn: list[str | None] = []

    def noisy(x: Any) -> Any:
        batching.random_call("noise()")
        drawn.append(batching.randomness())
        return x * 2.0

    x = np.ones((2, 3))
    with pytest.raises(
        RuntimeError, match=r"vmap: noise\(\) draws random numbers while vmap is in"
    ):
        ghf.vmap(noisy)(x)
    for mode in ("same", "different"):
        np.testing.assert_array_equal(ghf.vmap(noisy, randomness=mode)(x).d, 2 * x)
    assert drawn == ["same", "different"]
    with pytest.raises(RuntimeError, match=r'randomness="error" mode'):  # the outer level
        ghf.vmap(ghf.vmap(noisy, randomness="same"))(np.ones((2, 2, 3)))
    # outside vmap: nothing
    noisy(gh.Variable(x))
    assert batching.randomness() is None
    # a Jacobian runs f once more inside its own vmap: a random f takes the loop instead
    np.testing.assert_array_equal(ghf.jacrev(noisy)(np.ones(3)).d, 2 * np.eye(3))


def test_detach_inside_vmap_keeps_each_elements_values() -> None:
    # regression: x.detach() of a batched Variable made a leaf of the first element's values,
    # so every element computed with element 0 (vmap(grad(f)) with a stop-gradient: silently
    # wrong); Variable(x) of one did the same and is refused now, as is its DLPack export
    x = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(ghf.vmap(lambda r: r.detach().sum())(x).d, x.sum(axis=1))
    # d/dr sum(stop(r) * r) = stop(r) = r, per element; nested levels too
    np.testing.assert_array_equal(ghf.vmap(ghf.grad(lambda r: (r.detach() * r).sum()))(x).d, x)
    xx = np.arange(12.0).reshape(2, 3, 2)
    got = ghf.vmap(ghf.vmap(lambda r: (r.get_unlinked_variable() * 2.0).sum()))(xx)
    np.testing.assert_array_equal(got.d, xx.sum(axis=2) * 2.0)
    with pytest.raises(TypeError, match=r"Variable\(x\) of a batched Variable x inside vmap"):
        ghf.vmap(lambda r: gh.Variable(r, need_grad=False).sum())(x)
    with pytest.raises(TypeError, match=r"__dlpack__\) of a batched Variable"):
        ghf.vmap(lambda r: r.__dlpack__())(x)


def test_batched_cotangents_and_tangents_on_a_graph_made_outside_vmap() -> None:
    # regressions: vmap over a vjp_fn made before the vmap summed the cotangents (every row was
    # vjp_fn(sum of the rows): the Jacobian by torch.func's recipe came out wrong), a batched
    # tangent, cotangent or v of another dtype than its primal was cast from element 0 only,
    # and gh.grad(create_graph=False) with batched grad_outputs read element 0
    x = np.array([1.0, 2.0, 3.0])
    _, vjp_fn = ghf.vjp(lambda a: (a * a) * a, x)
    (jac,) = ghf.vmap(vjp_fn)(np.eye(3))
    np.testing.assert_array_equal(jac.d, np.diag(3 * x * x))  # d(a^3)/da, row by row
    X = np.array([[1.0, 2.0], [3.0, 4.0]])
    V = np.eye(2, dtype=np.float32)
    t = ghf.vmap(lambda p, v: ghf.jvp(lambda a: a * a, (p,), (v,))[1])(X, V)
    np.testing.assert_array_equal(t.d, 2 * X * V)
    g = ghf.vmap(lambda p, v: ghf.vjp(lambda a: a * a, p)[1](v)[0])(X, V)
    np.testing.assert_array_equal(g.d, 2 * X * V)
    t = ghf.vmap(lambda v: ghf.jvp(lambda a: a * a, (X[1],), (v,))[1])(np.eye(2, dtype=int))
    np.testing.assert_array_equal(t.d, 2 * X[1] * np.eye(2))
    hv = ghf.vmap(lambda p, v: ghf.hvp(lambda a: (a**3.0).sum(), (p,), (v,))[1][0])(X, V)
    np.testing.assert_array_equal(hv.d, 6 * X * V)
    w = gh.Variable(np.array([1.0, 2.0]))
    GO = np.arange(6.0).reshape(3, 2)
    r = ghf.vmap(lambda go: gh.grad([w**3.0], [w], grad_outputs=[go], create_graph=False)[0])(GO)
    np.testing.assert_array_equal(r.d, 3 * w.d**2 * GO)
    with pytest.raises(TypeError, match=r"backward: grad is a batched Variable"):
        ghf.vmap(lambda go: (w**3.0).backward(go))(GO)
    # a vjp made in an outer vmap, its cotangents batched by an inner one: refused
    B = np.arange(6.0).reshape(2, 3)
    with pytest.raises(NotImplementedError, match=r"vjp_fn: the vjp was made inside an outer"):
        ghf.vmap(lambda a: ghf.vmap(ghf.vjp(lambda p: p * p, a)[1])(np.eye(3)))(B)


def test_functional_call_inside_vmap_substitutes_each_elements_values() -> None:
    # regression: a substituted value whose need_grad differs from the parameter's (an array
    # for a trainable weight) became a leaf of element 0's values inside vmap
    gh.clear_parameters()
    try:
        gh.get_parameter_or_create("w", (2,), lambda s: np.ones(s))

        def model(x: Any) -> Any:
            return (gh.get_parameter_or_create("w", (2,), None) * x).sum()

        Ws = np.array([[1.0, 2.0], [3.0, 4.0], [-1.0, 0.5]])
        got = ghf.vmap(lambda W: ghf.functional_call(model, {"w": W}, np.ones(2)))(Ws)
        np.testing.assert_array_equal(got.d, Ws.sum(axis=1))
    finally:
        gh.clear_parameters()


def test_the_data_of_a_batched_variable_by_chainers_name_is_refused_clearly() -> None:
    # regression: x.array (chainer's name for the data) raised AttributeError inside vmap
    with pytest.raises(TypeError, match=r"vmap: the data \(\.array\) of a batched Variable"):
        ghf.vmap(lambda a: a.array)(np.ones((2, 3)))
