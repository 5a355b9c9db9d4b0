"""Gradient checkpointing: ``gh.checkpoint`` and ``gradhub.func.checkpoint`` (gradhub.remat).

Every gradient is compared with that of the same function without checkpointing: bit for bit
where the recomputation runs the same kernels in the same order (first order, closures,
parameters, dropout, compiled steps), else within 1e-12 in float64 (higher orders, transforms),
and with float64 finite differences (gradcheck to the third order)."""

from __future__ import annotations

import tracemalloc
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import engine, func, remat
from gradhub.errors import BackwardRuleError
from gradhub.registry import REGISTRY
from gradhub.testing import gradcheck

F = gh.functions


def soft(h: Any) -> Any:
    """A smooth squashing function of core functions only: h / sqrt(1 + h^2)."""
    return h * (h * h + 1.0) ** -0.5


def _weights(n: int, d: int = 4, seed: int = 0) -> list[gh.Variable]:
    rng = np.random.default_rng(seed)
    return [gh.Variable(rng.standard_normal((d, d)) * 0.6) for _ in range(n)]


def _x(shape: tuple[int, ...] = (3, 4), seed: int = 1) -> gh.Variable:
    return gh.Variable(np.random.default_rng(seed).standard_normal(shape))


def _grads(y: gh.Variable, xs: list[gh.Variable]) -> list[np.ndarray]:
    return [g.d for g in gh.grad([y], xs, create_graph=False)]  # type: ignore[union-attr]


def _equal(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    assert len(a) == len(b)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


def _close(a: Any, b: Any, tol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# -- first order --------------------------------------------------------------------------------


def test_mlp_segment_with_closed_over_weights_bit_for_bit() -> None:
    ws = _weights(3)

    def seg(h: Any) -> Any:
        for w in ws:
            h = soft(h @ w)
        return h

    x = _x()
    plain = _grads((seg(x) ** 2.0).sum(), [x, *ws])
    y = (gh.checkpoint(seg, x) ** 2.0).sum()
    _equal(_grads(y, [x, *ws]), plain)
    # backward() accumulates the same into .g, twice (the segment is recomputed each time)
    y.backward()
    y.backward()
    _equal([x.g, *(w.g for w in ws)], [2 * g for g in plain])


def test_the_graph_holds_one_node_and_no_intermediate() -> None:
    ws = _weights(4)

    def seg(h: Any) -> Any:
        for w in ws:
            h = soft(h @ w)
        return h

    x = _x()
    y = gh.checkpoint(seg, x)
    nodes = engine.collect_graph([y])
    assert [n.fdef.name for n in nodes] == ["Checkpoint"]
    (node,) = nodes
    # its inputs: the argument and the four weights read from the closure
    assert node.srcs[0] is x and node.srcs[1:] == ws
    assert node.saved_out is None
    assert node.saved_in is not None and all(
        a is v.d for a, v in zip(node.saved_in, [x, *ws])
    )  # only the inputs' own arrays


def test_arguments_as_pytrees_keywords_and_constants() -> None:
    ws = _weights(2)
    x = _x()
    scale = np.full((3, 4), 0.5)

    def seg(h: Any, params: dict[str, Any], *, k: float, s: np.ndarray) -> Any:
        return soft(soft(h @ params["a"]) @ params["b"]) * k + s

    def loss(fn: Any) -> Any:
        return (fn(x, {"a": ws[0], "b": ws[1]}, k=3.0, s=scale) ** 2.0).sum()

    plain = _grads(loss(seg), [x, *ws])
    _equal(_grads(loss(lambda *a, **k: gh.checkpoint(seg, *a, **k)), [x, *ws]), plain)


def test_several_outputs_as_tuple_and_dict() -> None:
    (w,) = _weights(1)
    x = _x()

    def seg(h: Any) -> Any:
        a = soft(h @ w)
        return a, {"sq": a * a, "lin": a @ w}

    def loss(out: Any) -> Any:
        a, d = out
        return (a * 2.0).sum() + (d["sq"] * d["lin"]).sum()

    plain = _grads(loss(seg(x)), [x, w])
    out = gh.checkpoint(seg, x)
    assert isinstance(out, tuple) and set(out[1]) == {"sq", "lin"}
    _equal(_grads(loss(out), [x, w]), plain)
    # only one output used: the others receive zeros
    (g,) = _grads(gh.checkpoint(seg, x)[1]["sq"].sum(), [x])
    _equal([g], _grads(seg(x)[1]["sq"].sum(), [x]))


def test_nested_checkpoints() -> None:
    ws = _weights(4)
    x = _x()

    def inner(h: Any, a: Any, b: Any) -> Any:
        return soft(soft(h @ a) @ b)

    def outer_plain(h: Any) -> Any:
        return inner(inner(h, ws[0], ws[1]), ws[2], ws[3])

    def outer(h: Any) -> Any:
        h = gh.checkpoint(inner, h, ws[0], ws[1])
        return gh.checkpoint(inner, h, ws[2], ws[3])

    plain = (outer_plain(x) ** 2.0).sum()
    y = (gh.checkpoint(outer, x) ** 2.0).sum()
    _equal(_grads(y, [x, *ws]), _grads(plain, [x, *ws]))
    # second order through both levels
    g1 = gh.grad([plain], [x])[0]
    g2 = gh.grad([y], [x])[0]
    assert g1 is not None and g2 is not None
    (h2,) = gh.grad([(g2 * g2).sum()], ws[:1])
    (h1,) = gh.grad([(g1 * g1).sum()], ws[:1])
    assert h1 is not None and h2 is not None
    _close(h2.d, h1.d)


def test_parameters_read_from_the_parameter_scope() -> None:
    rng = np.random.default_rng(3)

    def layer(h: Any, name: str) -> Any:
        with gh.parameter_scope(name):
            w = gh.get_parameter_or_create("W", (4, 4), lambda s: rng.standard_normal(s) * 0.5)
        return soft(h @ w)

    def seg(h: Any) -> Any:
        return layer(layer(h, "l1"), "l2")

    x = _x()
    y = (gh.checkpoint(seg, x) ** 2.0).sum()
    params = list(gh.get_parameters().values())
    assert len(params) == 2
    _equal(_grads(y, [x, *params]), _grads((seg(x) ** 2.0).sum(), [x, *params]))
    y.backward()
    assert all(p.g is not None and np.abs(p.g).sum() > 0 for p in params)


@pytest.mark.nn_ops
def test_parametric_functions_inside_receive_gradients() -> None:
    PF = gh.parametric_functions
    x = _x((3, 5))

    def seg(h: Any) -> Any:
        with gh.parameter_scope("block"):
            h = F.tanh(PF.affine(h, 6, name="fc1"))
            return F.tanh(PF.affine(h, 4, name="fc2"))

    y_plain = (seg(x) ** 2.0).sum()  # creates the parameters
    params = list(gh.get_parameters().values())
    assert len(params) == 4
    want = _grads(y_plain, [x, *params])
    y = (gh.checkpoint(seg, x) ** 2.0).sum()
    (node,) = [n for n in engine.collect_graph([y]) if n.fdef.name == "Checkpoint"]
    assert node.srcs[0] is x and set(map(id, node.srcs[1:])) == set(map(id, params))
    _equal(_grads(y, [x, *params]), want)


def test_argument_also_read_from_the_closure() -> None:
    x = _x()

    def seg(h: Any) -> Any:
        return soft(h) * x  # x is the argument h and read again from the closure

    (plain,) = _grads((soft(x) * x).sum(), [x])
    (got,) = _grads(gh.checkpoint(seg, x).sum(), [x])
    _close(got, plain, 1e-15)  # the two paths' gradients are summed in another order


@pytest.mark.parametrize("create_graph", [False, True])
def test_a_closure_variable_upstream_of_the_argument_is_not_counted_twice(
    create_graph: bool,
) -> None:
    # regression: with create_graph=True the recomputation's vector-Jacobian product walked
    # below the segment, so w (read by fn and upstream of its argument h) got the path through
    # h twice: once inside the rule, once from the engine through h (1.135 for 0.642)
    x = _x((3,))
    w = gh.Variable(np.array([0.5, 2.0, -1.0]))
    h = soft(x * w)

    def seg(a: Any) -> Any:
        return a * w + a * a

    plain = gh.grad([seg(h).sum()], [x, w], create_graph=create_graph)
    got = gh.grad([gh.checkpoint(seg, h).sum()], [x, w], create_graph=create_graph)
    for g, r in zip(got, plain):
        _close(g.d, r.d, 1e-15)  # type: ignore[union-attr]
    if create_graph:  # and the second derivatives through the segment
        plain2 = gh.grad([(plain[1] * plain[1]).sum()], [x, w], create_graph=False)
        got2 = gh.grad([(got[1] * got[1]).sum()], [x, w], create_graph=False)
        for g, r in zip(got2, plain2):
            _close(g.d, r.d, 1e-13)  # type: ignore[union-attr]


def test_segment_vjp_stays_in_the_segment() -> None:
    # the engine's walk for a recomputed segment: nothing recorded before ``since`` is walked,
    # so an input reached only through the older graph gets no gradient (x below), and one
    # both read in the segment and upstream of another input gets its direct part only (w)
    x = gh.Variable(np.array([1.5, -0.5]))
    w = gh.Variable(np.array([2.0, 3.0]))
    h = x * w
    mark = next(gh.graph._seq)
    y = h * w + h
    gh_, gw, gx = engine.segment_vjp(
        [y], [h, w, x], [gh.Variable(np.ones(2))], since=mark, create_graph=False
    )
    np.testing.assert_array_equal(gh_.d, w.d + 1.0)  # type: ignore[union-attr]
    np.testing.assert_array_equal(gw.d, h.d)  # type: ignore[union-attr]
    assert gx is None


def test_outputs_passed_through_and_constants() -> None:
    x = _x()
    (w,) = _weights(1)

    def seg(h: Any) -> Any:
        return h, w, soft(h @ w)

    a, b, c = gh.checkpoint(seg, x)
    assert a is not x and b is not w  # results of the node, holding the same data
    assert a.d is x.d and b.d is w.d
    y = (a * 2.0).sum() + (b * 3.0).sum() + (c * c).sum()
    _equal(
        _grads(y, [x, w]),
        _grads((x * 2.0).sum() + (w * 3.0).sum() + (soft(x @ w) ** 2.0).sum(), [x, w]),
    )


def test_no_grad_calls_fn_and_constants_need_no_node() -> None:
    x = _x()
    with gh.no_grad():
        y = gh.checkpoint(lambda h: soft(h) * 2.0, x)
    assert y.creator is None and not y.need_grad
    np.testing.assert_array_equal(y.d, soft(x).d * 2.0)
    c = gh.Variable(np.ones(3), need_grad=False)
    z = gh.checkpoint(lambda h: h * 2.0, c)
    assert not z.need_grad
    np.testing.assert_array_equal(z.d, np.full(3, 2.0))


# -- higher orders --------------------------------------------------------------------------------


def test_gradcheck_to_the_third_order_through_a_segment() -> None:
    def seg(h: Any, w: Any) -> Any:
        return soft(soft(h @ w) @ w)

    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3))
    w = rng.standard_normal((3, 3)) * 0.5
    assert gradcheck(lambda a, b: gh.checkpoint(seg, a, b), [x, w], order=3)
    assert gradcheck(lambda a, b: func.checkpoint(seg)(a, b), [x, w], order=2)


def test_gradient_penalty_and_third_order_equal_the_plain_function() -> None:
    ws = _weights(2)
    x = _x()

    def seg(h: Any) -> Any:
        return soft(soft(h @ ws[0]) @ ws[1])

    def orders(fn: Any) -> list[np.ndarray]:
        (g,) = gh.grad([(fn(x) ** 2.0).sum()], [x])
        assert g is not None
        pen = (g * g).sum()  # a gradient penalty
        gw = gh.grad([pen], ws)
        assert gw[0] is not None
        (g3,) = gh.grad([(gw[0] * gw[0]).sum()], [x])
        assert g3 is not None
        return [g.d, *(v.d for v in gw if v is not None), g3.d]

    plain = orders(seg)
    for a, b in zip(orders(lambda h: gh.checkpoint(seg, h)), plain):
        _close(a, b)


def test_func_transforms_through_func_checkpoint() -> None:
    ws = _weights(2)
    x = _x((2, 4))
    v = gh.Variable(np.random.default_rng(5).standard_normal((2, 4)))

    def f(h: Any) -> Any:
        return (soft(soft(h @ ws[0]) @ ws[1]) ** 2.0).sum()

    fc = func.checkpoint(f)
    cases = {
        "grad": lambda g: func.grad(g)(x),
        "grad2": lambda g: func.grad(lambda a: (func.grad(g)(a) ** 2.0).sum())(x),
        "vjp": lambda g: func.vjp(g, x)[1](gh.Variable(np.float64(1.5)))[0],
        "jvp": lambda g: func.jvp(g, (x,), (v,))[1],
        "jacrev": lambda g: func.jacrev(lambda a: soft(a @ ws[0]) if g is f else fc2(a))(x),
        "jacfwd": lambda g: func.jacfwd(lambda a: soft(a @ ws[0]) if g is f else fc2(a))(x),
        "hessian": lambda g: func.hessian(g)(x),
        "hvp": lambda g: func.hvp(g, (x,), (v,))[1][0],
        "vmap(grad)": lambda g: func.vmap(func.grad(g))(x),
    }
    fc2 = func.checkpoint(lambda a: soft(a @ ws[0]))
    for name, run in cases.items():
        a, b = run(fc), run(f)
        assert a.shape == b.shape, name
        _close(a.d, b.d)


def test_vmap_of_grad_of_checkpoint_is_per_example() -> None:
    (w,) = _weights(1)
    x = _x((5, 4))

    def loss(row: Any) -> Any:
        return (soft(row @ w) ** 2.0).sum()

    got = func.vmap(func.grad(func.checkpoint(loss)))(x)
    for i in range(5):
        (g,) = gh.grad([loss(x[i])], [x])
        assert g is not None
        _close(got.d[i], g.d[i])


def test_func_checkpoint_static_argnums_and_refusals() -> None:
    (w,) = _weights(1)
    x = _x()

    def f(h: Any, power: float, m: Any) -> Any:
        return (soft(h @ m) ** power).sum()

    fc = func.checkpoint(f, static_argnums=(1, -1))
    (g,) = gh.grad([fc(x, 2.0, w)], [w])
    (ge,) = gh.grad([f(x, 2.0, w)], [w])
    assert g is not None and ge is not None
    _close(g.d, ge.d)  # w, static, still receives its gradient (read as a closure would)
    with pytest.raises(NotImplementedError, match=r"func.checkpoint: policy=.*docs/checkpoint.md"):
        func.checkpoint(f, policy="dots_saveable")
    with pytest.raises(TypeError, match="static_argnums must be an int or a tuple"):
        func.checkpoint(f, static_argnums=[1])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="out of range"):
        func.checkpoint(f, static_argnums=5)(x, 2.0, w)
    with pytest.raises(TypeError, match="fun must be callable"):
        func.checkpoint(3)  # type: ignore[arg-type]


# -- random functions --------------------------------------------------------------------------


def test_the_shared_and_numpy_generators_draw_the_same_in_the_recomputation() -> None:
    x = _x()

    def seg(h: Any) -> Any:
        noise = gh.Variable(gh.random.generator().standard_normal(h.shape), need_grad=False)
        legacy = gh.Variable(np.random.standard_normal(h.shape), need_grad=False)
        return soft(h + noise) * noise + soft(h * legacy)

    gh.seed(7)
    np.random.seed(7)
    plain = _grads(seg(x).sum(), [x])
    after_plain = gh.random.generator().random(), np.random.random()
    gh.seed(7)
    np.random.seed(7)
    y = gh.checkpoint(seg, x).sum()
    _equal(_grads(y, [x]), plain)
    # the recomputation put the generators back: the streams go on as without checkpointing
    assert (gh.random.generator().random(), np.random.random()) == after_plain


@pytest.mark.nn_ops
def test_dropout_inside_draws_the_same_mask() -> None:
    ws = _weights(3)
    x = _x((8, 4))

    def seg(h: Any) -> Any:
        for w in ws:
            h = F.dropout(F.tanh(h @ w), p=0.4)
        return h

    gh.seed(11)
    y_plain = seg(x)
    plain = _grads((y_plain**2.0).sum(), [x, *ws])
    gh.seed(11)
    y = gh.checkpoint(seg, x)
    np.testing.assert_array_equal(y.d, y_plain.d)
    _equal(_grads((y**2.0).sum(), [x, *ws]), plain)
    _equal(_grads((y**2.0).sum(), [x, *ws]), plain)  # and again


@pytest.mark.nn_ops
def test_nested_checkpoints_with_dropout_draw_the_forwards_masks() -> None:
    ws = _weights(4)
    x = _x((6, 4))

    def inner(h: Any, a: Any, b: Any) -> Any:
        return F.dropout(F.tanh(F.dropout(h @ a, p=0.3) @ b), p=0.3)

    def plain(h: Any) -> Any:
        return inner(inner(h, ws[0], ws[1]), ws[2], ws[3])

    def nested(h: Any) -> Any:
        # the inner segments' draws, made again while the outer one is recomputed, come from
        # the outer segment's; each inner node then replays its own
        h = gh.checkpoint(inner, h, ws[0], ws[1])
        return gh.checkpoint(inner, h, ws[2], ws[3])

    gh.seed(5)
    y_plain = plain(x)
    want = _grads((y_plain**2.0).sum(), [x, *ws])
    gh.seed(5)
    y = gh.checkpoint(nested, x)
    np.testing.assert_array_equal(y.d, y_plain.d)
    _equal(_grads((y**2.0).sum(), [x, *ws]), want)


@pytest.mark.nn_ops
def test_dropout_without_preserve_rng_state_draws_anew() -> None:
    x = _x((50, 4))

    def seg(h: Any) -> Any:
        return F.dropout(h * 1.0, p=0.5)

    gh.seed(0)
    y = gh.checkpoint(seg, x, preserve_rng_state=False)
    (g,) = _grads(y.sum(), [x])
    kept = (y.d != 0).astype(float) * 2.0
    assert not np.array_equal(g, kept)  # another mask: PyTorch's preserve_rng_state=False too
    gh.seed(0)
    y = gh.checkpoint(seg, x)
    (g,) = _grads(y.sum(), [x])
    np.testing.assert_array_equal(g, (y.d != 0).astype(float) * 2.0)


@pytest.mark.nn_ops
def test_random_calls_that_differ_in_the_recomputation_raise() -> None:
    x = _x((6, 4))
    calls = []

    def seg(h: Any) -> Any:
        calls.append(1)
        return F.dropout(h, p=0.5) if len(calls) == 1 else h * 2.0

    y = gh.checkpoint(seg, x)
    with pytest.raises(BackwardRuleError, match=r"called 0 random function.*forward pass called 1"):
        y.sum().backward()


# -- static graphs --------------------------------------------------------------------------------


def test_forward_replay_then_backward() -> None:
    ws = _weights(2)
    x = _x()

    def seg(h: Any) -> Any:
        return soft(soft(h @ ws[0]) @ ws[1])

    y = (gh.checkpoint(seg, x) ** 2.0).sum()
    x.d = np.random.default_rng(9).standard_normal((3, 4))
    ws[0].d = ws[0].d * 0.5
    y.forward()
    plain = (seg(x) ** 2.0).sum()
    np.testing.assert_array_equal(y.d, plain.d)
    _equal(_grads(y, [x, *ws]), _grads(plain, [x, *ws]))


@pytest.mark.nn_ops
def test_compiled_step_with_checkpoint_and_dropout_equals_eager() -> None:
    ws = _weights(3)
    calls = []

    def seg(h: Any) -> Any:
        calls.append(1)
        for w in ws:
            h = F.dropout(F.tanh(h @ w), p=0.3)
        return h

    def step(x: Any, ckpt: bool = True) -> Any:
        h = gh.checkpoint(seg, x) if ckpt else seg(x)
        loss = (h**2.0).sum()
        return loss, gh.grad([loss], ws, create_graph=False)

    compiled = gh.compile(step)
    rng = np.random.default_rng(2)
    for i in range(3):
        xa = rng.standard_normal((4, 4))
        gh.seed(i)
        del calls[:]
        loss, gs = compiled(xa)
        assert len(calls) == 2  # the forward (trace or replay) and the recomputation
        gh.seed(i)
        loss_e, gs_e = step(gh.Variable(xa, need_grad=False), ckpt=False)
        np.testing.assert_array_equal(loss.d, loss_e.d)
        _equal([g.d for g in gs], [g.d for g in gs_e])
        ws[0].d = ws[0].d * 0.9  # the replay reads the closure's weights anew
    assert len(compiled.traces) == 1


# -- memory -------------------------------------------------------------------------------------


def _live_bytes_after_forward(every: int) -> int:
    """tracemalloc's current size after the forward of a 32-layer chain of 256x64 float64
    arrays (checkpointed every ``every`` layers; 0: not), over what existed before."""
    rng = np.random.default_rng(0)
    ws = [gh.Variable(rng.standard_normal((64, 64)) * 0.1) for _ in range(32)]
    x = gh.Variable(rng.standard_normal((256, 64)))

    def block(h: Any, k: int, n: int) -> Any:
        for w in ws[k : k + n]:
            h = soft(h @ w)
        return h

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        h = x
        if every:
            for k in range(0, 32, every):
                h = gh.checkpoint(block, h, k, every)
        else:
            h = block(h, 0, 32)
        y = (h * h).sum()
        live = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert y.need_grad
    return live


def test_a_checkpointed_chain_keeps_fewer_arrays_after_the_forward() -> None:
    plain = _live_bytes_after_forward(0)
    every4 = _live_bytes_after_forward(4)
    array = 256 * 64 * 8
    # plain: about 6 arrays per layer (matmul result, squares, sums, power, product) are saved;
    # checkpointed every 4 layers: the 8 segment boundaries (and the loss's input)
    assert plain > 32 * 4 * array
    assert every4 < 12 * array
    assert every4 * 10 < plain


# -- errors ---------------------------------------------------------------------------------------


def test_errors() -> None:
    x = _x()
    with pytest.raises(TypeError, match=r"gradhub\.checkpoint: fn must be callable"):
        gh.checkpoint(3, x)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="preserve_rng_state must be a bool"):
        gh.checkpoint(soft, x, preserve_rng_state=1)
    with pytest.raises(TypeError, match=r"fn must return a Variable.*got ndarray"):
        gh.checkpoint(lambda h: h.d * 2.0, x)
    with pytest.raises(TypeError, match=r"fn must return a Variable.*got tuple holding a float"):
        gh.checkpoint(lambda h: (h * 2.0, 1.0), x)

    def replaces(h: Any) -> Any:
        h.d = h.d * 2.0
        return h * 1.0

    with pytest.raises(ValueError, match="fn replaced the data of its argument"):
        gh.checkpoint(replaces, x)

    def fails(h: Any) -> Any:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):  # fn's own error, as it is
        gh.checkpoint(fails, x)
    # the random functions' kernels are back as they were (none wrapped outside a checkpoint)
    assert not remat._WRAPPED
    assert not any(hasattr(f.forward, "taped") for f in REGISTRY.functions.values() if f.random)


def test_a_scope_left_before_the_backward_raises() -> None:
    (w,) = _weights(1)
    w2 = gh.Variable(w.d * 2.0)
    x = _x()
    with gh.parameter_scope("m"):
        gh.get_parameter_or_create("W", (4, 4), lambda s: w.d)

    def seg(h: Any) -> Any:
        with gh.parameter_scope("m"):
            p = gh.get_parameter_or_create("W", (4, 4), lambda s: np.zeros(s))
        return soft(h @ p)

    # the forward reads w2 (functional_call's substitute), the recomputation the scope's own W
    y = func.functional_call(lambda h: gh.checkpoint(seg, h), {"m/W": w2}, x).sum()
    with pytest.raises(BackwardRuleError, match="read other Variables from outside"):
        y.backward()


def test_a_recomputation_of_other_shapes_raises() -> None:
    x = _x()
    calls = []

    def seg(h: Any) -> Any:
        calls.append(1)
        return soft(h) if len(calls) == 1 else soft(h)[:1]

    y = gh.checkpoint(seg, x)
    with pytest.raises(BackwardRuleError, match="returned outputs of shapes"):
        y.sum().backward()
