"""Regressions of the third training review: optimizers, the parameter table, PF initializers.

The optimizers are compared with ``torch.optim`` in float64 over several steps (skipped where
torch is not installed); the rest checks values known independently (hand computations).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gradhub as gh
import gradhub.parametric_functions as PF
import numpy as np
import pytest
from gradhub.optim import SGD, Adam
from gradhub.parameters import set_parameter

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


# -- the parameter table -------------------------------------------------------------------------


def test_clear_parameters_in_a_scope_clears_only_that_scope() -> None:
    """As nnabla's clear_parameters ("Clear all parameters in the current scope")."""
    x = gh.Variable(np.ones((2, 3)))
    PF.affine(x, 2, name="enc")
    PF.affine(x, 2, name="dec")
    PF.affine(x, 2, name="decoder")  # shares the prefix "dec" but not the scope
    with gh.parameter_scope("dec"):
        gh.clear_parameters()
        assert gh.get_parameters() == {}
    assert list(gh.get_parameters()) == [
        "enc/affine/W",
        "enc/affine/b",
        "decoder/affine/W",
        "decoder/affine/b",
    ]
    with gh.parameter_scope("enc"), gh.parameter_scope("affine"):
        gh.clear_parameters()
    assert list(gh.get_parameters()) == ["decoder/affine/W", "decoder/affine/b"]
    gh.clear_parameters()  # top level: everything
    assert gh.get_parameters(grad_only=False) == {}


def test_nnabla_compat_clear_parameters_follows_the_scope() -> None:
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.parametric_functions as NPF

    x = gh.Variable(np.ones((2, 3)))
    NPF.affine(x, 2, name="enc")
    NPF.affine(x, 2, name="dec")
    with nn.parameter_scope("dec"):
        nn.clear_parameters()
    assert list(nn.get_parameters()) == ["enc/affine/W", "enc/affine/b"]


def test_set_parameter_rejects_a_non_variable() -> None:
    with gh.parameter_scope("fc"), gh.parameter_scope("affine"):
        with pytest.raises(
            TypeError,
            match=r"set_parameter: the value of parameter "
            r"'fc/affine/W' must be a Variable, got ndarray",
        ):
            set_parameter("W", np.zeros((3, 2)))
        assert gh.get_parameters() == {}
        w = gh.Variable(np.zeros((3, 2)))
        set_parameter("W", w)
    assert gh.get_parameters()["fc/affine/W"] is w


# -- PF initializers -----------------------------------------------------------------------------


def test_an_explicit_float64_array_initializer_keeps_its_dtype() -> None:
    """w_init=float64 array made a float32 W (0.1 became 0.10000000149)."""
    w0 = np.array([[0.1, 0.2], [0.3, 0.4]])
    b0 = np.array([0.01, -0.02])
    x = gh.Variable(np.array([[1.0, 3.0]]))
    y = PF.affine(x, 2, w_init=w0, b_init=b0, name="fc")
    p = gh.get_parameters()
    assert p["fc/affine/W"].dtype == np.float64 and p["fc/affine/b"].dtype == np.float64
    np.testing.assert_array_equal(p["fc/affine/W"].d, w0)
    np.testing.assert_array_equal(y.d, x.d @ w0 + b0)
    assert p["fc/affine/W"].d is not w0  # a copy
    # a Variable and a numpy scalar keep their dtype too; a float32 array stays float32
    bn = {
        "gamma": gh.Variable(np.full((1, 2), 1.5)),
        "beta": np.float64(0.1),
        "mean": np.zeros((1, 2), np.float32),
    }
    PF.batch_normalization(gh.Variable(np.ones((4, 2))), param_init=bn, name="bn")
    p = gh.get_parameters(grad_only=False)
    assert p["bn/bn/gamma"].dtype == np.float64 and p["bn/bn/beta"].dtype == np.float64
    assert p["bn/bn/beta"].d[0, 0] == 0.1
    assert p["bn/bn/mean"].dtype == np.float32
    assert p["bn/bn/var"].dtype == np.float32  # the built-in default


def test_built_in_initializers_callables_lists_and_numbers_give_float32() -> None:
    x = gh.Variable(np.ones((1, 2)))
    PF.affine(x, 2, name="a")
    PF.affine(x, 2, w_init=lambda s: np.full(s, 0.5), b_init=[0.1, 0.2], name="b")
    PF.affine(x, 2, w_init=0.5, b_init=np.array([1, 2]), name="c")
    for name, p in gh.get_parameters().items():
        assert p.dtype == np.float32, name


def test_initializer_errors_name_the_function_and_the_argument() -> None:
    x = gh.Variable(np.ones((2, 3)))
    with pytest.raises(
        ValueError,
        match=r"PF.affine: the initializer of W is an array of shape "
        r"\(2, 2\), but the parameter has shape \(3, 4\) "
        r"\(argument w_init\)",
    ):
        PF.affine(x, 4, w_init=np.zeros((2, 2)), name="bad")
    with pytest.raises(
        ValueError,
        match=r"PF.convolution: the initializer of b .*"
        r"\(argument b_init\)",
    ):
        PF.convolution(
            gh.Variable(np.ones((1, 1, 4, 4))), 2, (3, 3), b_init=np.zeros(3), name="bad_conv"
        )
    with pytest.raises(
        ValueError,
        match=r"PF.batch_normalization: .*"
        r"\(argument param_init\['var'\]\)",
    ):
        PF.batch_normalization(
            gh.Variable(np.ones((4, 2))), param_init={"var": np.ones(5)}, name="bad_bn"
        )
    with pytest.raises(
        TypeError,
        match=r"PF.embed: the initializer of W must be .*"
        r"\(argument initializer\), got str",
    ):
        PF.embed(
            gh.Variable(np.array([0, 1]), need_grad=False),
            3,
            2,
            initializer="uniform",
            name="bad_emb",
        )
