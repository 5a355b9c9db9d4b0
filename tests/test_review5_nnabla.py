"""Review 5 of the nnabla compatibility layer against the real nnabla 1.39.

Each behaviour was run on nnabla 1.39 (CPU) first; the expected values below are what nnabla
gave, re-derived here independently with numpy (or by hand) so that the tests need no nnabla.
"""

from __future__ import annotations

import gradhub as gh
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest


def _var(values: object, need_grad: bool = True) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.array(values, dtype=np.float64), need_grad=need_grad)


# -- F1: get_unlinked_variable / reshape(unlink=True) share the source's buffers -----------------


def test_unlinked_variable_follows_forward_of_its_source() -> None:
    z = nn.Variable((2, 2))
    fake = z * 2
    fake_dis = fake.get_unlinked_variable(need_grad=True)
    loss_dis = F.sum(fake_dis * 1.0)
    z.d = np.ones((2, 2))
    fake.forward()
    loss_dis.forward()
    np.testing.assert_array_equal(fake_dis.d, np.full((2, 2), 2.0))
    assert float(loss_dis.d) == 8.0  # nnabla 1.39: 8.0 (gradhub gave 0.0: the build-time zeros)


def test_gan_loop_trains_the_discriminator_on_the_current_fake_data() -> None:
    # nnabla's DCGAN idiom; nnabla 1.39 gives exactly the numpy values below (checked), the
    # unlinked leaf accumulating into the generator output's .g over the iterations
    rng = np.random.RandomState(1)
    z = nn.Variable((4, 2))
    wg = _var(rng.randn(2, 3))
    wd = _var(rng.randn(3, 1))
    fake = F.affine(z, wg)
    loss_gen = F.mean(F.affine(fake, wd))
    fake_dis = fake.get_unlinked_variable(need_grad=True)
    loss_dis = F.mean(F.affine(fake_dis, wd) ** 2)
    acc = np.zeros((4, 3))
    for _ in range(3):
        zd = rng.randn(4, 2)
        z.d = zd
        loss_gen.forward()
        loss_dis.forward()
        wd.g = 0
        loss_dis.backward(clear_buffer=True)
        f = zd @ wg.d.astype(np.float64)
        o = f @ wd.d.astype(np.float64)
        np.testing.assert_allclose(loss_dis.d, np.mean(o**2), rtol=1e-5)
        np.testing.assert_allclose(wd.g, f.T @ (2 * o / 4), rtol=1e-5, atol=1e-5)
        acc += (2 * o / 4) @ wd.d.astype(np.float64).T
        np.testing.assert_allclose(fake_dis.g, acc, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(fake.g, fake_dis.g)
        assert not wg.g.any()  # the unlinked Variable stops the path to the generator
    # a generator pass overwrites the intermediate's .g, which the unlinked Variable shows too
    loss_gen.backward()
    expected = np.broadcast_to(wd.d.astype(np.float64).T / 4, (4, 3))
    np.testing.assert_allclose(fake.g, expected, rtol=1e-6)
    np.testing.assert_array_equal(fake_dis.g, fake.g)


def test_unlinked_variable_shares_assignments_both_ways() -> None:
    z = nn.Variable((2, 2), need_grad=True)
    fake = z * 2
    u = fake.get_unlinked_variable()
    assert u.need_grad is True and u.parent is None
    fake.g = 5
    np.testing.assert_array_equal(u.g, np.full((2, 2), 5.0))
    u.g = 7
    np.testing.assert_array_equal(fake.g, np.full((2, 2), 7.0))
    u.d = 9
    np.testing.assert_array_equal(fake.d, np.full((2, 2), 9.0))
    fake.d = 4
    np.testing.assert_array_equal(u.d, np.full((2, 2), 4.0))
    # a leaf source: parameters unlinked with need_grad=False (PF's fix_parameters) follow it
    w = _var(np.ones((2, 3)))
    wu = w.get_unlinked_variable(need_grad=False)
    w.d = 3
    np.testing.assert_array_equal(wu.d, np.full((2, 3), 3.0))
    wu.d = 2
    np.testing.assert_array_equal(w.d, np.full((2, 3), 2.0))
    assert wu.need_grad is False and w.need_grad is True


def test_reshape_unlink_shares_data_and_grad_through_the_new_shape() -> None:
    z = nn.Variable((4, 2))
    fake = F.affine(z, _var(np.arange(6.0).reshape(2, 3)))
    r = fake.reshape((12,), unlink=True)
    assert r.shape == (12,) and r.parent is None
    z.d = np.ones((4, 2))
    fake.forward()
    np.testing.assert_array_equal(r.d, np.tile([3.0, 5.0, 7.0], 4))
    r.need_grad = True
    lr = F.sum(r * r)
    lr.forward()
    lr.backward()
    np.testing.assert_array_equal(r.g, np.tile([6.0, 10.0, 14.0], 4))
    np.testing.assert_array_equal(fake.g, np.tile([6.0, 10.0, 14.0], (4, 1)))
    lr.backward()  # a leaf: accumulates into the shared buffer
    np.testing.assert_array_equal(fake.g, np.tile([12.0, 20.0, 28.0], (4, 1)))
    r.d = np.arange(12.0)
    np.testing.assert_array_equal(fake.d, np.arange(12.0).reshape(4, 3))
    with pytest.raises(ValueError, match="cannot reshape a Variable of shape"):
        fake.reshape((5,), unlink=True)


# -- F4: need_grad=False on an intermediate Variable stops the gradient there -------------------


def test_need_grad_false_on_an_intermediate_stops_backward_and_grad() -> None:
    x = _var([1.0, 2.0])
    h = x * 3
    y = F.sum(h * x)  # dy/dx = 6x through both paths; with h held fixed: h = 3x
    h.need_grad = False  # set after the graph was built
    assert h.need_grad is False
    y.forward()
    y.backward()
    np.testing.assert_allclose(x.g, [3.0, 6.0])  # nnabla 1.39: [3, 6]
    assert not h.g.any()  # nnabla leaves h.g at zeros
    g = nn.grad([y], [x])[0]
    g.forward()
    np.testing.assert_allclose(g.d, [3.0, 6.0])
    h.need_grad = True  # restores the path
    x.g = 0
    y.backward()
    np.testing.assert_allclose(x.g, [6.0, 12.0])
    np.testing.assert_allclose(nn.grad([y], [x])[0].d, [6.0, 12.0])


def test_need_grad_false_before_building_and_on_the_root() -> None:
    x = _var([1.0, 2.0])
    h = x * 3
    h.need_grad = False
    y = F.sum(h * x)
    assert y.need_grad is True
    y.backward()
    np.testing.assert_allclose(x.g, [3.0, 6.0])
    x.g = 0
    y3 = F.sum(h)
    assert y3.need_grad is False  # built from h only
    y3.backward()
    assert not x.g.any()
    r = x * 2
    r.need_grad = False
    r.backward()  # nnabla backpropagates from a root all the same
    np.testing.assert_allclose(x.g, [2.0, 2.0])
    assert r.need_grad is False
    # the layer reuses the native Variable's need_grad (a property with these semantics)
    assert "need_grad" not in nn.Variable.__dict__
    assert isinstance(gh.Variable.__dict__["need_grad"], property)


def test_need_grad_false_on_one_output_of_a_multi_output_function_is_refused() -> None:
    xs = _var([[1.0, 2.0], [3.0, 4.0]])
    a, b = F.split(xs, axis=0)
    with pytest.raises(NotImplementedError, match="need_grad=False on one output of split"):
        a.need_grad = False
    a.need_grad = True  # allowed (nothing to change)
    ym = F.sum(a * 2.0) + F.sum(b * 3.0)
    ym.backward()
    np.testing.assert_allclose(xs.g, [[2.0, 2.0], [3.0, 3.0]])


# -- F11: nnabla.solvers, nnabla.parameter, ext_utils.import_extension_module ---------------------


def _sgd_params() -> tuple[nn.Variable, nn.Variable]:
    w = _var([1.0, -2.0, 3.0])
    b = _var([[0.5, 0.25]])
    return w, b


def _run_solver(solver: object, steps: int = 3) -> list[tuple[np.ndarray, np.ndarray]]:
    w, b = _sgd_params()
    solver.set_parameters({"w": w, "b": b})  # type: ignore[attr-defined]
    out = []
    for it in range(steps):
        solver.zero_grad()  # type: ignore[attr-defined]
        assert not w.g.any()
        w.g = np.array([0.5, -1.0, 2.0]) * (it + 1)
        b.g = np.array([[3.0, -4.0]])
        solver.weight_decay(0.01)  # type: ignore[attr-defined]
        solver.update()  # type: ignore[attr-defined]
        out.append((w.d.copy(), b.d.copy()))
    return out


def _reference(kind: str, steps: int = 3) -> list[tuple[np.ndarray, np.ndarray]]:
    """nnabla 1.39's formulas in float64 (the values nnabla gave agree to float32 rounding)."""
    ws = [np.array([1.0, -2.0, 3.0]), np.array([[0.5, 0.25]])]
    st: list[dict[str, np.ndarray]] = [{}, {}]
    out = []
    for it in range(steps):
        gs = [np.array([0.5, -1.0, 2.0]) * (it + 1), np.array([[3.0, -4.0]])]
        t = it + 1
        for k in range(2):
            w, g, s = ws[k], gs[k] + 0.01 * ws[k], st[k]
            if kind == "sgd":
                w = w - 0.1 * g
            elif kind == "momentum":
                s["m"] = 0.9 * s.get("m", 0) + 0.1 * g
                w = w - s["m"]
            elif kind == "adam":
                s["m"] = 0.9 * s.get("m", 0) + 0.1 * g
                s["v"] = 0.999 * s.get("v", 0) + 0.001 * g * g
                alpha_t = 0.01 * np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
                w = w - alpha_t * s["m"] / (np.sqrt(s["v"]) + 1e-8)
            elif kind == "adagrad":
                s["v"] = s.get("v", 0) + g * g
                w = w - 0.1 * g / (np.sqrt(s["v"]) + 1e-8)
            elif kind == "rmsprop":
                s["v"] = 0.9 * s.get("v", 0) + 0.1 * g * g
                w = w - 0.01 * g / (np.sqrt(s["v"]) + 1e-8)
            ws[k] = w
        out.append((ws[0].copy(), ws[1].copy()))
    return out


@pytest.mark.parametrize(
    ("kind", "make"),
    [
        ("sgd", lambda S: S.Sgd(0.1)),
        ("momentum", lambda S: S.Momentum(0.1, 0.9)),
        ("adam", lambda S: S.Adam(0.01)),
        ("adagrad", lambda S: S.Adagrad(0.1)),
        ("rmsprop", lambda S: S.RMSprop(0.01)),
    ],
)
def test_solvers_follow_nnabla_update_formulas(kind: str, make: object) -> None:
    import gradhub_compat.nnabla.solvers as S

    got = _run_solver(make(S))  # type: ignore[operator]
    for (w, b), (rw, rb) in zip(got, _reference(kind)):
        assert w.dtype == np.float32
        np.testing.assert_allclose(w, rw, rtol=2e-6, atol=1e-6)
        np.testing.assert_allclose(b, rb, rtol=2e-6, atol=1e-6)


def test_adam_values_given_by_nnabla() -> None:
    import gradhub_compat.nnabla.solvers as S

    got = _run_solver(S.Adam(0.01))
    # printed by nnabla 1.39 for the same program
    np.testing.assert_allclose(
        got[2][0], [0.970747172832489, -1.9707472324371338, 2.97075247], 1e-6
    )
    np.testing.assert_allclose(got[2][1], [[0.4700000286102295, 0.2799999713897705]], 1e-6)


def test_solver_api_as_nnabla() -> None:
    import gradhub_compat.nnabla.solvers as S

    w, b = _sgd_params()
    s = S.Momentum(0.1, 0.9)
    assert s.name == "Momentum" and s.learning_rate() == float(np.float32(0.1))
    s.set_parameters({"w": w, "b": b})
    assert list(s.get_parameters()) == ["b", "w"]  # sorted, as nnabla's
    w.g = np.array([3.0, 4.0, 0.0])
    b.g = np.array([[0.3, 0.4]])
    s.clip_grad_by_norm(1.0)  # per parameter
    np.testing.assert_allclose(w.g, [0.6, 0.8, 0.0], rtol=1e-6)
    np.testing.assert_allclose(b.g, [[0.3, 0.4]], rtol=1e-6)
    s.scale_grad(2.0)
    np.testing.assert_allclose(w.g, [1.2, 1.6, 0.0], rtol=1e-6)
    assert s.check_inf_or_nan_grad() is False
    w.g = 1.0
    s.update()
    g_after = w.g.copy()
    np.testing.assert_array_equal(g_after, np.ones(3))  # update leaves .g alone
    states = s.get_states()
    assert states["w"].t == 1 and list(states["w"].pstate) == ["m"]
    np.testing.assert_allclose(states["w"].pstate["m"].d, np.full(3, 0.1), rtol=1e-6)
    s.set_parameters({"w": w}, reset=False, retain_state=True)
    np.testing.assert_allclose(s.get_states()["w"].pstate["m"].d, np.full(3, 0.1), rtol=1e-6)
    s.set_parameters({"w": w}, reset=False)
    assert not s.get_states()["w"].pstate["m"].d.any()
    s.remove_parameters(["b"])
    assert list(s.get_parameters()) == ["w"]
    s.set_learning_rate(0.5)
    assert s.learning_rate() == 0.5
    with pytest.raises(TypeError, match=r"Sgd\.set_parameters: param_dict must be a dict"):
        S.Sgd(0.1).set_parameters([w, b])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="set_states: no parameter 'zz' is registered"):
        s.set_states({"zz": states["w"]})


def test_solver_training_loop_with_shared_parameter_views() -> None:
    # the solver updates the parameter's array, so an unlinked view (fix_parameters) follows,
    # and a graph recorded before the update is recomputed by forward()
    import gradhub_compat.nnabla.solvers as S
    from gradhub_compat.nnabla.parameter import get_parameter_or_create

    with nn.parameter_scope("review5_solver"):
        try:
            w = get_parameter_or_create("w", (2,), np.array([1.0, 2.0]))
            frozen = get_parameter_or_create("w", (2,), as_need_grad=False)
            assert w.need_grad is True and frozen.need_grad is False and w.name == "w"
            params = nn.get_parameters()
            assert list(params) == ["w"] and params["w"].need_grad is True
            x = _var([3.0, 4.0], need_grad=False)
            loss = F.sum(w * x)
            solver = S.Sgd(0.5)
            solver.set_parameters(params)
            for _ in range(2):
                loss.forward()
                solver.zero_grad()
                loss.backward()
                solver.update()
            np.testing.assert_allclose(params["w"].d, [1.0 - 3.0, 2.0 - 4.0])
            np.testing.assert_allclose(w.d, params["w"].d)
            np.testing.assert_allclose(frozen.d, params["w"].d)
            with pytest.raises(ValueError, match="exists with shape \\(2,\\)"):
                get_parameter_or_create("w", (3,))
        finally:
            nn.clear_parameters()


def test_import_extension_module_cpu() -> None:
    from gradhub_compat.nnabla.ext_utils import get_extension_context, import_extension_module

    ext = import_extension_module("cpu")
    ext.synchronize(device_id="0")
    ext.clear_memory_cache()
    assert ext.context() == get_extension_context("cpu")
    assert ext.get_device_count() == 1


# -- F8, F7, F10 ------------------------------------------------------------------------------


def test_cpu_context_ignores_the_device_id() -> None:
    from gradhub_compat.nnabla.ext_utils import get_extension_context

    ctx = get_extension_context("cpu", device_id="1")  # nnabla 1.39 accepts it
    assert ctx.backend == "cpu" and ctx.device_id == 0
    with pytest.raises(ValueError, match="device_id must be a non-negative integer"):
        get_extension_context("cpu", device_id="-1")


def test_backward_of_a_leaf_raises() -> None:
    x = _var([1.0, 2.0])
    with pytest.raises(
        RuntimeError, match=r"nnabla Variable\.backward: the variable has no parent"
    ):
        x.backward()


def test_persistent_stores_what_is_set() -> None:
    v = nn.Variable((2,))
    assert v.persistent is False  # nnabla's default
    v.persistent = True
    assert v.persistent is True
    v.persistent = False
    assert v.persistent is False


def test_pf_batch_normalization_output_stat_in_a_static_graph() -> None:
    """PF.batch_normalization(output_stat=True) through the layer's static-graph wrapper, which
    first creates new parameters with an inference-mode call (that call must not pass
    output_stat, which needs batch statistics): (y, batch mean, biased batch variance)."""
    import gradhub_compat.nnabla.parametric_functions as PF

    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 3, 2)).astype(np.float32)
    with nn.parameter_scope("bn_output_stat"):
        y, mean, var = PF.batch_normalization(nn.Variable.from_numpy_array(a), output_stat=True)
    y.forward()
    np.testing.assert_allclose(mean.d.ravel(), a.mean(axis=(0, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var.d.ravel(), a.var(axis=(0, 2)), rtol=1e-5, atol=1e-6)
    assert mean.shape == var.shape == (1, 3, 1)
