"""Parametric functions in nnabla 1.39's forms: positional output_stat and channel_last,
fix_parameters, apply_w/apply_b, no_scale/no_bias and the order parameters are created in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradhub as gh
import gradhub.functions as F
import gradhub.parametric_functions as PF
import numpy as np
import pytest


def _x(shape: tuple[int, ...], seed: int = 0) -> gh.Variable:
    return gh.Variable(np.random.default_rng(seed).standard_normal(shape))


def test_pf_normalization_positional_output_stat_keeps_parameters_trainable() -> None:
    gh.clear_parameters()
    x = _x((4, 3, 5))
    y = PF.layer_normalization(x, 0, 1e-5, True)  # nnabla: 4th positional is output_stat
    assert [o.shape for o in y] == [(4, 3, 5), (4, 1, 1), (4, 1, 1)]
    np.testing.assert_allclose(y[1].d.ravel(), x.d.mean(axis=(1, 2)), rtol=1e-6)
    np.testing.assert_allclose(y[2].d.ravel(), x.d.var(axis=(1, 2)), rtol=1e-5)
    y = PF.batch_normalization(x, (1,), 0.9, 1e-5, True, True)  # 6th: output_stat
    assert [o.shape for o in y] == [(4, 3, 5), (1, 3, 1), (1, 3, 1)]
    np.testing.assert_allclose(y[1].d.ravel(), x.d.mean(axis=(0, 2)), rtol=1e-6)
    np.testing.assert_allclose(y[2].d.ravel(), x.d.var(axis=(0, 2)), rtol=1e-5)
    params = gh.get_parameters(grad_only=False)
    assert {k: p.need_grad for k, p in params.items()} == {
        "layer_normalization/beta": True,
        "layer_normalization/gamma": True,
        "bn/beta": True,
        "bn/gamma": True,
        "bn/mean": False,
        "bn/var": False,
    }
    gh.clear_parameters()


def test_pf_convolution_positional_channel_last() -> None:
    gh.clear_parameters()
    x = _x((4, 3, 5, 5))
    assert PF.convolution(x, 8, (3, 3), None, None, None, 1, False).shape == (4, 8, 3, 3)
    y = PF.deconvolution(x, 8, (3, 3), None, (2, 2), None, 1, False, (1, 1))
    assert y.shape == (4, 8, 12, 12)  # nnabla: 9th positional is output_padding
    gh.clear_parameters()


# -- fix_parameters --------------------------------------------------------------------


def test_fix_parameters_first_use_keeps_the_stored_parameters_trainable() -> None:
    """nnabla 1.39 gives keys [W, b], W.g = 2s, need_grad True."""
    gh.clear_parameters()
    x = gh.Variable(np.ones((2, 3)))
    with gh.parameter_scope("fc"):
        frozen = PF.affine(x, 2, fix_parameters=True)
        train = PF.affine(x, 2)
    params = gh.get_parameters()
    assert list(params) == ["fc/affine/W", "fc/affine/b"]
    w = params["fc/affine/W"]
    assert w.need_grad
    F.sum(train).backward()
    np.testing.assert_allclose(w.g, np.full((3, 2), 2.0))
    # the fixed use passes no gradient to the stored parameter
    g = gh.grad([F.sum(frozen)], [w])[0]
    np.testing.assert_allclose(g.d, 0.0)
    gh.clear_parameters()


@pytest.mark.parametrize(
    "make",
    [
        lambda x: PF.affine(x, 2, fix_parameters=True),
        lambda x: PF.convolution(x, 2, (1,), fix_parameters=True),
        lambda x: PF.deconvolution(x, 2, (1,), fix_parameters=True),
        lambda x: PF.batch_normalization(x, fix_parameters=True),
        lambda x: PF.layer_normalization(x, fix_parameters=True),
        lambda x: PF.group_normalization(x, 1, fix_parameters=True),
        lambda x: PF.instance_normalization(x, fix_parameters=True),
    ],
)
def test_fix_parameters_creates_trainable_parameters(make: Callable[[Any], Any]) -> None:
    gh.clear_parameters()
    x = _x((2, 3, 4))
    y = make(x)
    params = gh.get_parameters()
    assert params and all(p.need_grad for p in params.values())
    grads = gh.grad([F.sum(y * y)], list(params.values()))
    for gr in grads:
        np.testing.assert_allclose(gr.d, 0.0)
    gh.clear_parameters()


def test_embed_fix_parameters_and_apply_w() -> None:
    gh.clear_parameters()
    ids = gh.Variable(np.array([[1, 2], [0, 1]]), need_grad=False)
    seen = []
    y = PF.embed(
        ids, 5, 3, fix_parameters=True, apply_w=lambda w: (seen.append(w.need_grad), w * 2.0)[1]
    )
    w = gh.get_parameters()["embed/W"]
    assert w.need_grad and seen == [False]
    np.testing.assert_allclose(y.d, 2.0 * w.d[ids.d])
    gh.clear_parameters()


@pytest.mark.parametrize(
    "fn,kw,keys",
    [  # nnabla 1.39's parameter names
        (PF.batch_normalization, {"no_scale": True}, ["bn/beta", "bn/mean", "bn/var"]),
        (PF.batch_normalization, {"no_bias": True}, ["bn/gamma", "bn/mean", "bn/var"]),
        (PF.batch_normalization, {"no_scale": True, "no_bias": True}, ["bn/mean", "bn/var"]),
        (PF.layer_normalization, {"no_scale": True}, ["layer_normalization/beta"]),
        (PF.layer_normalization, {"no_bias": True}, ["layer_normalization/gamma"]),
        (PF.layer_normalization, {}, ["layer_normalization/beta", "layer_normalization/gamma"]),
    ],
)
def test_pf_normalization_no_scale_no_bias(
    fn: Callable[..., Any], kw: dict[str, Any], keys: list[str]
) -> None:
    gh.clear_parameters()
    x = _x((4, 3, 2))
    y = fn(x, **kw)
    assert list(gh.get_parameters(grad_only=False)) == keys
    m = x.d.mean(axis=(0, 2) if fn is PF.batch_normalization else (1, 2), keepdims=True)
    s = x.d.std(axis=(0, 2) if fn is PF.batch_normalization else (1, 2), keepdims=True)
    np.testing.assert_allclose(y.d, (x.d - m) / np.sqrt(s**2 + 1e-5), rtol=1e-5, atol=1e-6)
    gh.clear_parameters()


def test_pf_convolution_channel_last_parameter_layout() -> None:
    """nnabla 1.39: channel_last W (O, *k, I/g) = (4, 3, 3, 3), deconv (I, *k, O/g) =
    (6, 3, 3, 2) for a (2, 5, 5, 6) input, group 2; outputs (2, 3, 3, 4) and (2, 7, 7, 4)."""
    gh.clear_parameters()
    x = _x((2, 5, 5, 6))
    assert PF.convolution(x, 4, (3, 3), channel_last=True, group=2).shape == (2, 3, 3, 4)
    assert PF.deconvolution(x, 4, (3, 3), channel_last=True, group=2).shape == (2, 7, 7, 4)
    shapes = {k: v.shape for k, v in gh.get_parameters().items()}
    assert shapes == {
        "conv/W": (4, 3, 3, 3),
        "conv/b": (4,),
        "deconv/W": (6, 3, 3, 2),
        "deconv/b": (4,),
    }
    gh.clear_parameters()


def test_pf_affine_and_convolution_apply_w_apply_b() -> None:
    gh.clear_parameters()
    x = _x((2, 3))
    seen = []
    y = PF.affine(
        x,
        2,
        apply_w=lambda w: (seen.append(w.need_grad), w * 2.0)[1],
        apply_b=lambda b: b + 1.0,
        fix_parameters=True,
    )
    p = gh.get_parameters()
    np.testing.assert_allclose(y.d, x.d @ (2 * p["affine/W"].d) + p["affine/b"].d + 1.0, rtol=1e-6)
    assert seen == [False] and all(v.need_grad for v in p.values())  # as nnabla
    xc = _x((1, 2, 4, 4))
    yc = PF.convolution(xc, 3, (3, 3), apply_w=lambda w: w * 0.0, apply_b=lambda b: b + 2.0)
    np.testing.assert_allclose(yc.d, 2.0)
    with pytest.raises(TypeError, match=r"PF.affine.*apply_w"):
        PF.affine(x, 2, apply_w=3)
    gh.clear_parameters()


def test_layer_normalization_creates_beta_first() -> None:
    gh.clear_parameters()
    with gh.parameter_scope("ln"):
        PF.layer_normalization(_x((2, 3)))
    assert list(gh.get_parameters()) == [
        "ln/layer_normalization/beta",
        "ln/layer_normalization/gamma",
    ]
    gh.clear_parameters()
