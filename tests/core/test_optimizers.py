"""The optimizers (``gradhub.optim``): SGD and Adam against ``torch.optim`` over a changing
schedule (skipped where torch is not installed), hand computations and a numpy reference,
defaults, weight decay and Nesterov, ``zero_grad``, per-parameter bias correction, float16
parameters, and the argument checks."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub.optim import SGD, Adam

W0 = np.array([0.7, -1.3, 2.1, 0.05])
C = np.array([1.0, 0.5, -0.25, 2.0])


def _loss(w: gh.Variable) -> gh.Variable:
    """A non-quadratic loss, so the gradients change from step to step in every direction."""
    return (w * w * gh.Variable(C, need_grad=False)).sum() + gh.functions.sin(w * 3.0).sum()


def _run_gradhub(make: Callable[[list[gh.Variable]], Any], lrs: list[float]) -> np.ndarray:
    w = gh.Variable(W0.copy())
    opt = make([w])
    for lr in lrs:
        opt.lr = lr
        opt.zero_grad()
        _loss(w).backward()
        opt.update()
    assert w.dtype == np.float64
    return np.asarray(w.d)


def _run_torch(make: Callable[[list[Any]], Any], lrs: list[float]) -> np.ndarray:
    torch = pytest.importorskip("torch")
    w = torch.tensor(W0.copy(), dtype=torch.float64, requires_grad=True)
    opt = make([w])
    c = torch.tensor(C)
    for lr in lrs:
        for group in opt.param_groups:
            group["lr"] = lr
        opt.zero_grad()
        ((w * w * c).sum() + torch.sin(w * 3.0).sum()).backward()
        opt.step()
    return np.asarray(w.detach().numpy())


# a schedule that starts at lr=0 (warm-up) and changes every step: PyTorch's momentum buffer
# accumulates unscaled gradients, so the lr of each step multiplies the whole buffer
SCHEDULE = [0.0, 0.02, 0.05, 0.05, 0.03, 0.1, 0.01, 0.07]

SGD_CASES: list[dict[str, Any]] = [
    {},
    {"momentum": 0.9},
    {"momentum": 0.9, "nesterov": True},
    {"weight_decay": 0.1},
    {"momentum": 0.5, "weight_decay": 0.01},
    {"momentum": 0.7, "weight_decay": 0.2, "nesterov": True},
]


@pytest.mark.parametrize("kw", SGD_CASES, ids=lambda kw: ",".join(kw) or "defaults")
def test_sgd_matches_torch_over_a_changing_schedule(kw: dict[str, Any]) -> None:
    torch = pytest.importorskip("torch")
    ours = _run_gradhub(lambda p: SGD(p, lr=0.1, **kw), SCHEDULE)
    ref = _run_torch(lambda p: torch.optim.SGD(p, lr=0.1, **kw), SCHEDULE)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-14)
    assert not np.allclose(ours, W0)  # it moved


ADAM_CASES: list[dict[str, Any]] = [
    {},
    {"weight_decay": 0.1},
    {"eps": 0.0},
    {"betas": (0.8, 0.9), "eps": 1e-6, "weight_decay": 0.01},
]


@pytest.mark.parametrize("kw", ADAM_CASES, ids=lambda kw: ",".join(kw) or "defaults")
def test_adam_matches_torch_over_a_changing_schedule(kw: dict[str, Any]) -> None:
    torch = pytest.importorskip("torch")
    ours_kw = dict(kw)
    if "betas" in ours_kw:
        ours_kw["beta1"], ours_kw["beta2"] = ours_kw.pop("betas")
    ours = _run_gradhub(lambda p: Adam(p, lr=0.1, **ours_kw), SCHEDULE)
    ref = _run_torch(lambda p: torch.optim.Adam(p, lr=0.1, **kw), SCHEDULE)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-14)
    assert not np.allclose(ours, W0)


def test_sgd_defaults_are_torchs_plain_gradient_descent() -> None:
    """SGD(params, lr) had momentum 0.9 by default: a port of torch.optim.SGD(p, lr=0.1)
    trained with momentum. Two steps of plain descent on w^2 (gradient 2w): w * 0.8^2."""
    w = gh.Variable(np.array([1.0, -2.0]))
    opt = SGD([w], lr=0.1)
    assert opt.momentum == 0.0 and opt.weight_decay == 0.0 and not opt.nesterov
    for _ in range(2):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.update()
    np.testing.assert_allclose(w.d, [0.64, -1.28], rtol=1e-15)


def test_weight_decay_and_nesterov_by_hand() -> None:
    """Known values: L2 adds wd * p to the gradient; Nesterov steps with g + mu * b."""
    w = gh.Variable(np.array([2.0]))
    opt = SGD([w], lr=0.1, weight_decay=0.5)
    opt.update([np.array([1.0])])  # g = 1 + 0.5 * 2 = 2
    np.testing.assert_allclose(w.d, [1.8], rtol=1e-15)
    w = gh.Variable(np.array([0.0]))
    opt = SGD([w], lr=1.0, momentum=0.5, nesterov=True)
    opt.update([np.array([1.0])])  # b = 1, step = 1 + 0.5 * 1
    np.testing.assert_allclose(w.d, [-1.5], rtol=1e-15)
    opt.update([np.array([2.0])])  # b = 0.5 + 2 = 2.5, step = 2 + 1.25
    np.testing.assert_allclose(w.d, [-4.75], rtol=1e-15)
    w = gh.Variable(np.array([1.0]))
    opt2 = Adam([w], lr=0.1, weight_decay=1.0)
    opt2.update([np.array([-1.0])])  # g = -1 + 1 = 0: m = v = 0, no move
    np.testing.assert_allclose(w.d, [1.0], rtol=0, atol=0)


def test_weight_decay_does_not_modify_the_gradient_array() -> None:
    w = gh.Variable(np.array([1.0, 2.0]))
    (w * w).sum().backward()
    g = w.g
    for opt in (SGD([w], lr=0.1, momentum=0.9, weight_decay=0.1), Adam([w], weight_decay=0.1)):
        opt.update()
        opt.update()
        np.testing.assert_array_equal(w.g, [2.0, 4.0])
        assert w.g is g


def test_zero_grad_clears_every_gradient_like_cleargrad() -> None:
    a = gh.Variable(np.array([1.0, 2.0]))
    b = gh.Variable(np.array([3.0]))
    for make in (lambda p: SGD(p, lr=0.1), lambda p: Adam(p)):
        opt = make({"a": a, "b": b})
        (a.sum() * b.sum()).backward()
        assert a.g is not None and b.g is not None
        opt.zero_grad()
        assert a.g is None and b.g is None  # None, as Variable.cleargrad()
        opt.update()  # every gradient None: nothing moves
        np.testing.assert_array_equal(a.d, [1.0, 2.0])
        np.testing.assert_array_equal(b.d, [3.0])


@pytest.mark.parametrize("opt_type", [SGD, Adam])
def test_one_variable_or_array_as_params_is_rejected(opt_type: type) -> None:
    """SGD(w) iterated the Variable into 0-d graph nodes w[0], w[1]... whose .g stays None,
    so update() silently changed nothing."""
    name = opt_type.__name__
    w = gh.Variable(np.array([1.0, -2.0, 3.0]))
    with pytest.raises(
        TypeError,
        match=rf"{name}: params must be an iterable \(list, tuple, "
        r"dict\) of Variables, not one Variable",
    ):
        opt_type(w, lr=0.1)
    with pytest.raises(
        TypeError,
        match=rf"{name}: params must be an iterable .* not one "
        r"ndarray",
    ):
        opt_type(np.ones(3), lr=0.1)
    with pytest.raises(TypeError, match=rf"{name}: params must be an iterable .* got int"):
        opt_type(3, lr=0.1)
    with pytest.raises(ValueError, match=rf"{name}: params is empty"):
        opt_type([], lr=0.1)
    # a tuple and a generator still work
    opt = opt_type((p for p in (w,)), lr=0.1)
    assert opt.params == [w]


def test_hyper_parameter_checks() -> None:
    w = gh.Variable(np.array([1.0]))
    SGD([w], lr=0.0)  # accepted, as torch (warm-up schedules start there)
    Adam([w], lr=0.0, eps=0.0)
    for kw, msg in (
        ({"lr": -0.1}, "SGD: lr must be >= 0"),
        ({"lr": math.nan}, "SGD: lr must be >= 0"),
        ({"weight_decay": -1e-4}, "SGD: weight_decay must be >= 0"),
        ({"momentum": 1.0}, r"SGD: momentum must be in \[0, 1\)"),
        ({"nesterov": True}, "SGD: nesterov=True requires momentum > 0"),
    ):
        with pytest.raises(ValueError, match=msg):
            SGD([w], **kw)
    for kw, msg in (
        ({"lr": -1.0}, "Adam: lr must be >= 0"),
        ({"eps": -1e-8}, "Adam: eps must be >= 0"),
        ({"weight_decay": math.nan}, "Adam: weight_decay must be >= 0"),
        ({"beta1": math.nan}, r"Adam: beta1 must be in \[0, 1\)"),
    ):
        with pytest.raises(ValueError, match=msg):
            Adam([w], **kw)
    with pytest.raises(TypeError, match="SGD: lr must be a number, got 'fast'"):
        SGD([w], lr="fast")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="SGD: nesterov must be True or False"):
        SGD([w], momentum=0.9, nesterov=1)  # type: ignore[arg-type]


def _adam_f64(
    p: np.ndarray, grads: list[np.ndarray], lr: float, wd: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """torch.optim.Adam's update in float64: the parameter, m and v after ``grads``."""
    p = p.astype(np.float64)
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        g = g.astype(np.float64) + wd * p
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        p = p - lr / (1 - 0.9**t) * m / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return p, m, v


# -- optimizers (independent of the function library) -------------------------------------------


def test_sgd_momentum_matches_hand_computation() -> None:
    w = gh.Variable(np.array([1.0, -2.0]))
    opt = SGD([w], lr=0.1, momentum=0.5)
    g1 = np.array([0.5, 1.0])
    g2 = np.array([-1.0, 2.0])
    opt.update([g1])
    np.testing.assert_allclose(w.d, [1.0 - 0.05, -2.0 - 0.1])
    opt.update([gh.Variable(g2)])
    v2 = 0.5 * np.array([-0.05, -0.1]) - 0.1 * g2
    np.testing.assert_allclose(w.d, np.array([0.95, -2.1]) + v2)


def test_adam_matches_a_numpy_reference_and_reads_dot_g() -> None:
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 2))
    w = gh.Variable(w0.copy())
    opt = Adam({"w": w}, lr=0.05, beta1=0.8, beta2=0.9, eps=1e-6)
    ref, m, v = w0.copy(), np.zeros_like(w0), np.zeros_like(w0)
    for t in range(1, 6):
        w.cleargrad()
        (w * w * w).sum().backward()  # d/dw sum(w^3) = 3 w^2
        g = 3 * ref**2
        np.testing.assert_allclose(w.g, g, rtol=1e-12)
        opt.update()
        m = 0.8 * m + 0.2 * g
        v = 0.9 * v + 0.1 * g * g
        ref = ref - 0.05 * (m / (1 - 0.8**t)) / (np.sqrt(v / (1 - 0.9**t)) + 1e-6)
        np.testing.assert_allclose(w.d, ref, rtol=1e-12)


def test_optimizers_minimise_a_quadratic_and_keep_dtype() -> None:
    for make in (lambda p: SGD(p, lr=0.1, momentum=0.9), lambda p: Adam(p, lr=0.1)):
        w = gh.Variable([3.0, -4.0])  # float32
        opt = make([w])
        for _ in range(200):
            (g,) = gh.grad([(w * w).sum()], [w], create_graph=False)
            opt.update([g])
        assert w.dtype == np.float32
        assert np.abs(w.d).max() < 0.05


def test_optimizer_errors_name_the_argument() -> None:
    w = gh.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match=r"Adam\.update: got 2 gradients for 1 parameters"):
        Adam([w]).update([np.ones(2), np.ones(2)])
    with pytest.raises(ValueError, match=r"SGD.update: gradient 0 has shape \(3,\)"):
        SGD([w]).update([np.ones(3)])
    with pytest.raises(ValueError, match="SGD: lr must be >= 0"):
        SGD([w], lr=-0.1)  # lr=0 is accepted, as torch.optim.SGD
    with pytest.raises(ValueError, match="Adam: beta2"):
        Adam([w], beta2=1.0)
    with pytest.raises(TypeError, match=r"SGD: params\[0\] must be a Variable"):
        SGD([np.ones(2)])  # type: ignore[list-item]
    opt = SGD([w], lr=0.1, momentum=0.0)
    opt.update([None])  # None skips a parameter
    np.testing.assert_array_equal(w.d, [1.0, 2.0])


def test_adam_bias_correction_counts_each_parameters_own_updates() -> None:
    """Adam's t was one counter for all parameters: a parameter skipped (None) for 10 calls then
    moved by 0.048 on its first update instead of lr (PyTorch, nnabla: per-parameter steps)."""
    from gradhub.optim import Adam

    g = np.array([0.5], np.float32)
    a, b = gh.Variable([1.0]), gh.Variable([1.0])
    opt = Adam([a, b], lr=0.1)
    for _ in range(10):
        opt.update([g, None])
    opt.update([g, g])
    np.testing.assert_allclose(b.d, [0.9], rtol=1e-6)
    # a: 11 updates with a constant gradient, each m_hat / sqrt(v_hat) = 1: moved by 11 lr
    np.testing.assert_allclose(a.d, [1.0 - 11 * 0.1], rtol=1e-5)


def test_adam_float16_large_gradient_does_not_overflow_v() -> None:
    g = np.array([0.5, 200.0, 300.0, 1000.0, 5000.0], np.float16)
    w = gh.Variable(np.ones(5, np.float16))
    opt = Adam([w], lr=0.01)
    opt.update([g])
    p, m, v = _adam_f64(np.ones(5), [g], 0.01)
    assert w.d.dtype == opt.m[0].dtype == opt.v[0].dtype == np.float16
    assert np.isfinite(opt.v[0]).all()
    np.testing.assert_allclose(opt.v[0], v, rtol=1e-3)  # 90, 1000 and 25000: was inf
    np.testing.assert_allclose(opt.m[0], m, rtol=1e-3)
    np.testing.assert_allclose(w.d, p, rtol=1e-3)  # every entry moves by lr (was 0 past 256)


def test_adam_float16_entry_keeps_moving_after_a_large_gradient() -> None:
    grads = [np.array([300.0, 0.5], np.float16)] + [np.array([0.5, 0.5], np.float16)] * 100
    w = gh.Variable(np.ones(2, np.float16))
    opt = Adam([w], lr=0.01)
    for g in grads:
        opt.update([g])
    p, _, v = _adam_f64(np.ones(2), grads, 0.01)
    assert np.isfinite(opt.v[0]).all()
    # v stored in float16 decays in steps of its spacing (0.0625 near 80): 83.75 vs 81.5, as torch
    np.testing.assert_allclose(opt.v[0], v, rtol=4e-2)
    # 100 float16 roundings of p drift by ~0.01 (torch too); entry 0 was frozen at 1.0 (off 0.07)
    np.testing.assert_allclose(w.d, p, atol=2e-2)


def test_adam_float16_weight_decay_matches_float64() -> None:
    grads = [np.array([300.0, -0.5, 4.0], np.float16)] * 5
    w = gh.Variable(np.array([2.0, -1.0, 0.5], np.float16))
    opt = Adam([w], lr=0.01, weight_decay=0.1)
    for g in grads:
        opt.update([g])
    p, _, _ = _adam_f64(np.array([2.0, -1.0, 0.5]), grads, 0.01, wd=0.1)
    assert w.d.dtype == np.float16
    np.testing.assert_allclose(w.d, p, atol=2e-3)


def test_adam_float32_unchanged() -> None:
    grads = [np.array([0.3, -2.0, 1e3], np.float32)] * 3
    w = gh.Variable(np.array([1.0, 2.0, 3.0], np.float32))
    opt = Adam([w], lr=0.1)
    for g in grads:
        opt.update([g])
    p, _, v = _adam_f64(np.array([1.0, 2.0, 3.0]), grads, 0.1)
    assert w.d.dtype == opt.v[0].dtype == np.float32
    np.testing.assert_allclose(w.d, p, rtol=1e-6)
    np.testing.assert_allclose(opt.v[0], v, rtol=1e-6)


@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_float16_momentum_matches_float64(nesterov: bool) -> None:
    g = np.array([3000.0, -0.25, 7.0], np.float16)
    w = gh.Variable(np.array([1.0, 2.0, -3.0], np.float16))
    opt = SGD([w], lr=1e-3, momentum=0.9, weight_decay=0.01, nesterov=nesterov)
    p = w.d.astype(np.float64)
    b = None
    for _ in range(5):
        opt.update([g])
        gg = g.astype(np.float64) + 0.01 * p
        b = gg if b is None else 0.9 * b + gg
        p = p - 1e-3 * (gg + 0.9 * b if nesterov else b)
    assert w.d.dtype == opt.velocity[0].dtype == np.float16
    np.testing.assert_allclose(w.d, p, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(opt.velocity[0], b, rtol=2e-3)


@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam"])
@pytest.mark.parametrize("grads", ["from .g", "given"])
def test_update_inside_a_compiled_step_is_refused_before_any_change(kind: str, grads: str) -> None:
    # regression: refused only when it assigned the first parameter's .d, after t, the momentum
    # buffers or Adam's m, v and step counts had changed
    w = gh.Variable(W0.copy())
    make = {
        "sgd": lambda: SGD([w], lr=0.1),
        "momentum": lambda: SGD([w], lr=0.1, momentum=0.9),
        "adam": lambda: Adam([w], lr=0.1),
    }[kind]
    opt = make()
    name = type(opt).__name__
    before = (w.d.copy(), opt.state_dict())

    def step(x: Any) -> Any:
        opt.zero_grad()
        loss = (w * x).sum()
        if grads == "given":
            opt.update(gh.grad([loss], [w], create_graph=False))
        else:
            loss.backward()
            opt.update()
        return loss

    with pytest.raises(NotImplementedError, match=rf"gradhub.compile: .*calls {name}\.update\(\)"):
        gh.compile(step)(np.ones(4))
    np.testing.assert_array_equal(w.d, before[0])
    after = opt.state_dict()
    assert after["t"] == before[1]["t"] == 0
    assert after == before[1]
    # the same optimizer outside the compiled step: its first update, as a fresh one's
    fresh = gh.Variable(W0.copy())
    ref = {"sgd": SGD, "momentum": SGD, "adam": Adam}[kind]
    kw = {"momentum": 0.9} if kind == "momentum" else {}
    ref_opt = ref([fresh], lr=0.1, **kw)
    for o, v in ((opt, w), (ref_opt, fresh)):
        o.zero_grad()
        (v * gh.Variable(np.ones(4), need_grad=False)).sum().backward()
        o.update()
    np.testing.assert_array_equal(w.d, fresh.d)
