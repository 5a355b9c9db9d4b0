"""Parametric functions: nnabla parameter names, shapes, initializers, scoping and gradients."""

from __future__ import annotations

import math

import gradhub as gh
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
    assert _shapes() == [("affine/W", (3, 4), True), ("affine/b", (4,), True),
                         ("net/head/affine/W", (3, 2, 2), True)]
    with pytest.raises(ValueError, match="exists with shape"):
        PF.affine(_x(np.ones((2, 5))), 4)


def test_fix_parameters_and_custom_initializers() -> None:
    x = _x(np.ones((2, 3)))
    w0 = np.arange(6.0).reshape(3, 2)
    y = PF.affine(x, 2, w_init=w0, b_init=ConstantInitializer(0.5), fix_parameters=True,
                  name="fixed")
    # as nnabla: the parameters are stored trainable; only this call uses them without gradient
    assert _shapes(grad_only=False) == [("fixed/affine/W", (3, 2), True),
                                        ("fixed/affine/b", (2,), True)]
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
        ("bn1/bn/beta", (1, 3, 1, 1), True), ("bn1/bn/gamma", (1, 3, 1, 1), True),
        ("bn1/bn/mean", (1, 3, 1, 1), False), ("bn1/bn/var", (1, 3, 1, 1), False)]
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
    assert _shapes() == [("ln1/layer_normalization/beta", (1, 3, 4), True),  # nnabla's order
                         ("ln1/layer_normalization/gamma", (1, 3, 4), True)]
    np.testing.assert_allclose(y.d.reshape(2, -1).mean(axis=1), 0.0, atol=1e-6)


def test_embed_names_shapes_and_initializer() -> None:
    ids = gh.Variable(np.array([[1, 2], [0, 9]]), need_grad=False)
    y = PF.embed(ids, 10, 4, name="emb")
    assert y.shape == (2, 2, 4)
    assert _shapes() == [("emb/embed/W", (10, 4), True)]
    w = gh.get_parameters()["emb/embed/W"]
    assert np.abs(w.d).max() <= math.sqrt(3.0)
    np.testing.assert_array_equal(y.d[1, 1], w.d[9])
