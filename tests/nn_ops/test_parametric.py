"""Parametric functions: nnabla parameter names, shapes, initializers, scoping and gradients."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gradhub as gh
import gradhub.functions as F
import gradhub.parametric_functions as PF
import numpy as np
import pytest
from gradhub_nn_ops.parametric import (
    ConstantInitializer,
    UniformInitializer,
    calc_uniform_lim_glorot,
)


def _x(a: object) -> gh.Variable:
    """A float32 input, the dtype of the parameters (nnabla's default)."""
    return gh.Variable(np.asarray(a, dtype=np.float32))


def _shapes(grad_only: bool = True) -> list[tuple[str, tuple[int, ...], bool]]:
    return [(k, v.shape, v.need_grad) for k, v in gh.get_parameters(grad_only=grad_only).items()]


def test_calc_uniform_lim_glorot_is_nnabla_formula() -> None:
    lo, hi = calc_uniform_lim_glorot(30, 20, (3, 3))
    assert hi == pytest.approx(math.sqrt(6.0 / (9 * 30 + 9 * 20))) and lo == -hi


def test_affine_names_shapes_and_values() -> None:
    rng = np.random.default_rng(0)
    x = _x(rng.standard_normal((4, 3, 2)))
    y = PF.affine(x, 5, name="fc1")
    assert _shapes() == [("fc1/affine/W", (6, 5), True), ("fc1/affine/b", (5,), True)]
    p = gh.get_parameters()
    w, b = p["fc1/affine/W"], p["fc1/affine/b"]
    assert w.dtype == np.float32 and b.dtype == np.float32
    np.testing.assert_array_equal(b.d, 0.0)  # biases start at zero
    lim = calc_uniform_lim_glorot(6, 5)[1]
    assert np.abs(w.d).max() <= lim and np.abs(w.d).max() > lim / 2
    np.testing.assert_allclose(y.d, x.d.reshape(4, 6) @ w.d + b.d, rtol=1e-6)
    # a second call with the same name reuses the parameters
    PF.affine(x, 5, name="fc1")
    assert len(gh.get_parameters()) == 2


def test_affine_without_name_uses_the_current_scope_and_reuses() -> None:
    x = _x(np.ones((2, 3)))
    PF.affine(x, 4)
    PF.affine(x, 4)
    with gh.parameter_scope("net"):
        PF.affine(x, (2, 2), with_bias=False, name="head")
    assert _shapes() == [
        ("affine/W", (3, 4), True),
        ("affine/b", (4,), True),
        ("net/head/affine/W", (3, 2, 2), True),
    ]
    with pytest.raises(ValueError, match="exists with shape"):
        PF.affine(_x(np.ones((2, 5))), 4)


def test_fix_parameters_and_custom_initializers() -> None:
    x = _x(np.ones((2, 3)))
    w0 = np.arange(6.0).reshape(3, 2)
    y = PF.affine(
        x, 2, w_init=w0, b_init=ConstantInitializer(0.5), fix_parameters=True, name="fixed"
    )
    # as nnabla: the parameters are stored trainable; only this call uses them without gradient
    assert _shapes(grad_only=False) == [
        ("fixed/affine/W", (3, 2), True),
        ("fixed/affine/b", (2,), True),
    ]
    w = gh.get_parameters()["fixed/affine/W"]
    np.testing.assert_allclose(gh.grad([y.sum()], [w])[0].d, 0.0)  # no gradient through y
    np.testing.assert_allclose(y.d, np.ones((2, 3)) @ w0 + 0.5)
    with pytest.raises(ValueError, match="affine: the initializer of W is an array of shape"):
        PF.affine(x, 4, w_init=np.zeros((2, 2)), name="bad")
    with pytest.raises(TypeError, match="affine: the initializer of W must be"):
        PF.affine(x, 4, w_init="glorot", name="bad2")


def test_rng_makes_initialization_reproducible() -> None:
    x = _x(np.ones((1, 4)))
    PF.affine(x, 3, rng=np.random.RandomState(7), name="a")
    PF.affine(x, 3, rng=np.random.RandomState(7), name="b")
    p = gh.get_parameters()
    np.testing.assert_array_equal(p["a/affine/W"].d, p["b/affine/W"].d)
    init = UniformInitializer((-0.1, 0.1), rng=np.random.RandomState(7))
    assert np.abs(init((100,))).max() <= 0.1


def test_affine_gradients_reach_the_parameters() -> None:
    x = _x(np.ones((2, 3)))
    PF.affine(x, 4, name="fc").sum().backward()
    p = gh.get_parameters()
    np.testing.assert_allclose(p["fc/affine/W"].g, np.full((3, 4), 2.0))
    np.testing.assert_allclose(p["fc/affine/b"].g, np.full(4, 2.0))


def test_convolution_names_shapes_and_glorot_limits() -> None:
    x = _x(np.random.default_rng(0).standard_normal((2, 4, 6, 6)))
    y = PF.convolution(x, 6, (3, 3), pad=(1, 1), group=2, name="c1")
    assert y.shape == (2, 6, 6, 6)
    assert _shapes() == [("c1/conv/W", (6, 2, 3, 3), True), ("c1/conv/b", (6,), True)]
    lim = calc_uniform_lim_glorot(4, 6, (3, 3))[1]
    assert np.abs(gh.get_parameters()["c1/conv/W"].d).max() <= lim
    y.sum().backward()
    assert gh.get_parameters()["c1/conv/b"].g.shape == (6,)
    y2 = PF.convolution(x, 2, (3, 3), stride=(2, 2), with_bias=False)
    assert y2.shape == (2, 2, 2, 2)
    assert "conv/W" in gh.get_parameters() and "conv/b" not in gh.get_parameters()
    with pytest.raises(ValueError, match="convolution: group=3 must divide"):
        PF.convolution(x, 6, (3, 3), group=3, name="bad")


def test_deconvolution_names_and_shapes() -> None:
    x = _x(np.ones((2, 4, 3, 3)))
    y = PF.deconvolution(x, 6, (2, 2), stride=(2, 2), group=2, name="up")
    assert y.shape == (2, 6, 6, 6)
    assert _shapes() == [("up/deconv/W", (4, 3, 2, 2), True), ("up/deconv/b", (6,), True)]


def test_batch_normalization_parameters() -> None:
    x = _x(np.random.default_rng(0).standard_normal((4, 3, 2, 2)))
    y = PF.batch_normalization(x, name="bn1")
    assert y.shape == x.shape
    assert _shapes(grad_only=False) == [
        ("bn1/bn/beta", (1, 3, 1, 1), True),
        ("bn1/bn/gamma", (1, 3, 1, 1), True),
        ("bn1/bn/mean", (1, 3, 1, 1), False),
        ("bn1/bn/var", (1, 3, 1, 1), False),
    ]
    p = gh.get_parameters(grad_only=False)
    np.testing.assert_array_equal(p["bn1/bn/gamma"].d, 1.0)
    np.testing.assert_array_equal(p["bn1/bn/beta"].d, 0.0)
    # batch statistics: each channel of the output has mean 0 and variance ~1
    np.testing.assert_allclose(y.d.mean(axis=(0, 2, 3)), 0.0, atol=1e-6)
    np.testing.assert_allclose(y.d.var(axis=(0, 2, 3)), 1.0, rtol=1e-3)
    y.sum().backward()
    np.testing.assert_allclose(p["bn1/bn/beta"].g, np.full((1, 3, 1, 1), 16.0))  # N * H * W
    np.testing.assert_allclose(p["bn1/bn/gamma"].g, 0.0, atol=1e-4)  # sum of normalized x
    y2 = PF.batch_normalization(_x(np.ones((5, 2))), axes=[1])
    assert y2.shape == (5, 2)
    assert gh.get_parameters()["bn/gamma"].shape == (1, 2)


def test_layer_normalization_parameters() -> None:
    x = _x(np.random.default_rng(0).standard_normal((2, 3, 4)))
    y = PF.layer_normalization(x, name="ln1")
    assert y.shape == x.shape
    assert _shapes() == [
        ("ln1/layer_normalization/beta", (1, 3, 4), True),  # nnabla's order
        ("ln1/layer_normalization/gamma", (1, 3, 4), True),
    ]
    np.testing.assert_allclose(y.d.reshape(2, -1).mean(axis=1), 0.0, atol=1e-6)


def test_embed_names_shapes_and_initializer() -> None:
    ids = gh.Variable(np.array([[1, 2], [0, 9]]), need_grad=False)
    y = PF.embed(ids, 10, 4, name="emb")
    assert y.shape == (2, 2, 4)
    assert _shapes() == [("emb/embed/W", (10, 4), True)]
    w = gh.get_parameters()["emb/embed/W"]
    assert np.abs(w.d).max() <= math.sqrt(3.0)
    np.testing.assert_array_equal(y.d[1, 1], w.d[9])


V = gh.Variable


def const(a: Any) -> gh.Variable:
    return gh.Variable(np.asarray(a), need_grad=False)


def raises(fn: Callable[[], Any], exc: type[BaseException], pattern: str) -> None:
    with pytest.raises(exc, match=pattern):
        fn()


def _group_norm_ref(x: np.ndarray, groups: int, eps: float = 1e-5) -> np.ndarray:
    n = x.shape[0]
    xg = x.reshape(n, groups, -1)
    mu = xg.mean(axis=2, keepdims=True)
    var = xg.var(axis=2, keepdims=True)
    return ((xg - mu) / np.sqrt(var + eps)).reshape(x.shape)


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


def test_fixed_use_of_an_existing_trainable_parameter_passes_no_gradient() -> None:
    """PF.affine(..., fix_parameters=True) on weights that exist trainable returned the trainable
    Variable itself, so the 'fixed' path updated them (nnabla returns an unlinked copy)."""
    import gradhub.parametric_functions as PF

    gh.clear_parameters()
    x = gh.Variable(np.ones((2, 3), np.float32), need_grad=False)
    PF.affine(x, 4, name="fc")
    y2 = PF.affine(x, 4, name="fc", fix_parameters=True)
    w = gh.get_parameters()["fc/affine/W"]
    assert not y2.need_grad  # nothing on the fixed path needs a gradient: backward() refuses
    with pytest.raises(RuntimeError, match=r"backward: .* needs no gradient"):
        gh.functions.sum(y2).backward()
    assert w.need_grad and w.g is None
    y1 = PF.affine(x, 4, name="fc")  # the trainable use still reaches them
    gh.functions.sum(y1).backward()
    np.testing.assert_array_equal(w.g, np.full((3, 4), 2.0))
    np.testing.assert_array_equal(y1.d, y2.d)  # the same weights


@pytest.mark.parametrize(
    "n, exc",
    [
        (-1, ValueError),
        (0, ValueError),
        (2.5, TypeError),
        ((2, 0), ValueError),
        ((), ValueError),
        (None, TypeError),
    ],
)
def test_pf_affine_checks_n_outmaps(n: Any, exc: type[BaseException]) -> None:
    raises(
        lambda: PF.affine(V(np.ones((2, 3))), n, name="z"),
        exc,
        r"PF\.affine: n_outmaps must be a positive int",
    )


def test_pf_affine_accepts_numpy_ints_and_tuples() -> None:
    assert PF.affine(V(np.ones((2, 3))), np.int64(4), name="a").shape == (2, 4)
    assert PF.affine(V(np.ones((2, 3))), (2, 3), name="b").shape == (2, 2, 3)


@pytest.mark.parametrize("fname", ["convolution", "deconvolution"])
@pytest.mark.parametrize(
    "kwargs, exc, arg",
    [
        ({"outmaps": -2}, ValueError, "outmaps"),
        ({"outmaps": 2.0}, TypeError, "outmaps"),
        ({"kernel": (3.5, 3)}, ValueError, "kernel"),
        ({"kernel": 2.5}, TypeError, "kernel"),
        ({"group": 1.5}, TypeError, "group"),
        ({"group": 0}, ValueError, "group"),
        ({"base_axis": 1.0}, TypeError, "base_axis"),
    ],
)
def test_pf_convolutions_check_their_arguments(
    fname: str, kwargs: dict[str, Any], exc: type[BaseException], arg: str
) -> None:
    args = {"outmaps": 2, "kernel": (3, 3), **kwargs}
    raises(
        lambda: getattr(PF, fname)(V(np.ones((1, 2, 5, 5))), **args),
        exc,
        rf"PF\.{fname}: {arg} must",
    )


def test_pf_other_functions_check_their_arguments() -> None:
    x = V(np.ones((2, 3, 4)))
    ids = const([1, 2])
    raises(lambda: PF.embed(ids, 0, 3), ValueError, r"PF\.embed: n_inputs must be a positive")
    raises(lambda: PF.embed(ids, 3, 2.5), TypeError, r"PF\.embed: n_features must be")
    raises(
        lambda: PF.batch_normalization(x, axes=(1.5,)),
        TypeError,
        r"PF\.batch_normalization: axes must be ints",
    )
    raises(
        lambda: PF.layer_normalization(x, batch_axis=0.5),
        TypeError,
        r"PF\.layer_normalization: batch_axis must be an int",
    )


def test_pf_group_normalization_parameters_and_value() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 3, 3))
    y = PF.group_normalization(gh.Variable(x), num_groups=3, name="gn")
    params = gh.get_parameters()
    assert {k: v.shape for k, v in params.items()} == {
        "gn/group_normalization/beta": (1, 6, 1, 1),
        "gn/group_normalization/gamma": (1, 6, 1, 1),
    }
    np.testing.assert_allclose(y.d, _group_norm_ref(x, 3), rtol=1e-10, atol=1e-12)
    # the parameters are used: gamma's gradient is sum(dy * x_hat) per channel
    loss = F.sum(y * y)
    gh.grad([loss], [params["gn/group_normalization/gamma"]], set_grad=True)
    xhat = _group_norm_ref(x, 3)
    want = (2 * xhat * xhat).sum(axis=(0, 2, 3)).reshape(1, 6, 1, 1)
    np.testing.assert_allclose(params["gn/group_normalization/gamma"].g, want, rtol=1e-6)  # float32


def test_pf_instance_normalization_no_bias_and_param_init() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 5))
    g = np.arange(1.0, 5.0).reshape(1, 4, 1)
    y = PF.instance_normalization(gh.Variable(x), no_bias=True, param_init={"gamma": g})
    assert list(gh.get_parameters()) == ["instance_normalization/gamma"]
    mu, var = x.mean(axis=2, keepdims=True), x.var(axis=2, keepdims=True)
    np.testing.assert_allclose(y.d, g * (x - mu) / np.sqrt(var + 1e-5), rtol=1e-10)
    with pytest.raises(ValueError, match=r"PF.instance_normalization: param_init keys"):
        PF.instance_normalization(gh.Variable(x), param_init={"w": g})
    with pytest.raises(ValueError, match=r"PF.group_normalization: channel_axis"):
        PF.group_normalization(gh.Variable(x), 2, channel_axis=3)
