"""Review 5 (function library vs real nnabla 1.39): regression tests for the signatures and the
parametric functions of ``gradhub.functions`` / ``gradhub.parametric_functions``.

Expected values come from nnabla 1.39 (run on its CPU backend while fixing; recorded here),
numpy, or float64 finite differences.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import gradhub as gh
import gradhub.functions as F
import gradhub.parametric_functions as PF
import numpy as np
import pytest

# The positional parameters of nnabla 1.39's functions (``inspect.signature``, without nnabla's
# internal ``n_outputs``/``outputs``) for every function gradhub also has; "*x": variadic.
NNABLA_SIGNATURES: dict[str, str] = {
    "F.abs": "x",
    "F.absolute_error": "x0 x1",
    "F.acos": "x",
    "F.add2": "x0 x1 inplace",
    "F.add_scalar": "x val inplace",
    "F.affine": "x weight bias base_axis",
    "F.asin": "x",
    "F.atan": "x",
    "F.atan2": "x0 x1",
    "F.average_pooling": "x kernel stride ignore_border pad channel_last including_pad",
    "F.batch_matmul": "a b transpose_a transpose_b",
    "F.batch_normalization": "x beta gamma mean variance axes decay_rate eps batch_stat"
    " output_stat",
    "F.binary_cross_entropy": "x target",
    "F.broadcast": "x shape",
    "F.broadcast_to": "x y axis",
    "F.clip_by_value": "x min max",
    "F.concatenate": "*x",
    "F.convolution": "x weight bias base_axis pad stride dilation group channel_last",
    "F.cos": "x",
    "F.cosh": "x",
    "F.deconvolution": "x weight bias base_axis pad stride dilation group channel_last"
    " output_padding",
    "F.div2": "x0 x1 inplace",
    "F.dropout": "x p seed",
    "F.einsum": "*x",
    "F.elu": "x alpha",
    "F.embed": "x0 w",
    "F.equal": "x0 x1",
    "F.equal_scalar": "x0 val",
    "F.erf": "x",
    "F.exp": "x",
    "F.flip": "x axes",
    "F.gelu": "x",
    "F.global_average_pooling": "x",
    "F.greater": "x0 x1",
    "F.greater_equal": "x0 x1",
    "F.greater_equal_scalar": "x0 val",
    "F.greater_scalar": "x0 val",
    "F.group_normalization": "x beta gamma num_groups channel_axis batch_axis eps output_stat",
    "F.hard_tanh": "x",
    "F.huber_loss": "x0 x1 delta",
    "F.instance_normalization": "x beta gamma channel_axis batch_axis eps output_stat",
    "F.kl_multinomial": "p q base_axis",
    "F.layer_normalization": "x beta gamma batch_axis eps output_stat",
    "F.leaky_relu": "x alpha inplace",
    "F.less": "x0 x1",
    "F.less_equal": "x0 x1",
    "F.less_equal_scalar": "x0 val",
    "F.less_scalar": "x0 val",
    "F.log": "x",
    "F.log_sigmoid": "x",
    "F.log_softmax": "x axis",
    "F.max": "x axis keepdims with_index only_index",
    "F.max_pooling": "x kernel stride ignore_border pad channel_last",
    "F.max_pooling_backward": "dy x kernel stride ignore_border pad channel_last",
    "F.maximum2": "x0 x1",
    "F.maximum_scalar": "x val",
    "F.mean": "x axis keepdims",
    "F.min": "x axis keepdims with_index only_index",
    "F.minimum2": "x0 x1",
    "F.minimum_scalar": "x val",
    "F.mul2": "x0 x1 inplace",
    "F.mul_scalar": "x val inplace",
    "F.norm": "x p axis keepdims",
    "F.not_equal": "x0 x1",
    "F.not_equal_scalar": "x0 val",
    "F.one_hot": "x shape",
    "F.pad": "x pad_width mode constant_value",
    "F.pow2": "x0 x1 inplace",
    "F.pow_scalar": "x val inplace",
    "F.prelu": "x0 x1 base_axis",
    "F.prod": "x axis keepdims",
    "F.r_div_scalar": "x val",
    "F.r_pow_scalar": "x val",
    "F.r_sub_scalar": "x val",
    "F.relu": "x inplace",
    "F.relu6": "x",
    "F.reshape": "x shape inplace",
    "F.selu": "x scale alpha",
    "F.sigmoid": "x",
    "F.sigmoid_cross_entropy": "x target",
    "F.sign": "x alpha",
    "F.sin": "x",
    "F.sinh": "x",
    "F.slice": "x start stop step",
    "F.softmax": "x axis",
    "F.softmax_cross_entropy": "x target axis",
    "F.softplus": "x beta",
    "F.softsign": "x",
    "F.split": "x axis",
    "F.squared_error": "x0 x1",
    "F.stack": "*x",
    "F.sub2": "x0 x1 inplace",
    "F.sum": "x axis keepdims",
    "F.swish": "x",
    "F.tan": "x",
    "F.tanh": "x",
    "F.tile": "x reps",
    "F.transpose": "x axes",
    "F.where": "condition x_true x_false",
    "PF.affine": "inp n_outmaps base_axis w_init b_init fix_parameters rng with_bias apply_w"
    " apply_b name",
    "PF.batch_normalization": "inp axes decay_rate eps batch_stat output_stat fix_parameters"
    " param_init no_scale no_bias name",
    "PF.convolution": "inp outmaps kernel pad stride dilation group channel_last w_init b_init"
    " base_axis fix_parameters rng with_bias apply_w apply_b name",
    "PF.deconvolution": "inp outmaps kernel pad stride dilation group channel_last output_padding"
    " w_init b_init base_axis fix_parameters rng with_bias apply_w apply_b name",
    "PF.embed": "inp n_inputs n_features initializer fix_parameters apply_w name",
    "PF.group_normalization": "inp num_groups channel_axis batch_axis eps output_stat"
    " fix_parameters param_init no_scale no_bias name",
    "PF.instance_normalization": "inp channel_axis batch_axis eps output_stat fix_parameters"
    " param_init no_scale no_bias name",
    "PF.layer_normalization": "inp batch_axis eps output_stat fix_parameters param_init no_scale"
    " no_bias name",
}


def _positional(fn: Callable[..., Any]) -> tuple[list[str], bool]:
    params = inspect.signature(fn).parameters.values()
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names, any(p.kind is p.VAR_POSITIONAL for p in params)


@pytest.mark.parametrize("key", sorted(NNABLA_SIGNATURES))
def test_positional_parameters_follow_nnabla(key: str) -> None:
    """fnlib F1 / nnabla F3: nnabla's positional arguments mean the same in gradhub (gradhub's
    extras come after them)."""
    kind, name = key.split(".", 1)
    fn = getattr(F if kind == "F" else PF, name)
    want = NNABLA_SIGNATURES[key].split()
    names, variadic = _positional(fn)
    if want and want[0].startswith("*"):
        assert variadic, f"{key}: nnabla's is variadic, gradhub's {names}"
        return
    assert names[: len(want)] == want, f"{key}: nnabla {want}, gradhub {names}"


def test_every_common_function_is_checked() -> None:
    assert len(NNABLA_SIGNATURES) >= 100


# -- item 1: positional order ------------------------------------------------------------------


def _x(shape: tuple[int, ...], seed: int = 0) -> gh.Variable:
    return gh.Variable(np.random.default_rng(seed).standard_normal(shape))


def test_group_normalization_positional_output_stat() -> None:
    x = _x((2, 4, 3, 3))
    b, g = np.zeros((1, 4, 1, 1)), np.full((1, 4, 1, 1), 3.0)
    out = F.group_normalization(x, b, g, 2, 1, 0, 1e-5, True)  # nnabla: output_stat=True
    assert [o.shape for o in out] == [(2, 4, 3, 3), (2, 2, 1, 1, 1), (2, 2, 1, 1, 1)]
    assert abs(out[0].d.std() - 3.0) < 1e-3  # gamma used (nnabla: std 3.0)
    kw = F.group_normalization(x, b, g, 2, output_stat=True)
    np.testing.assert_allclose(out[0].d, kw[0].d)
    # gradhub's extras by keyword still work
    y = F.group_normalization(x, b, g, 2, no_scale=True)
    assert abs(y.d.std() - 1.0) < 1e-3


def test_instance_normalization_positional_output_stat() -> None:
    x = _x((2, 3, 4))
    b, g = np.zeros((1, 3, 1)), np.full((1, 3, 1), 2.0)
    out = F.instance_normalization(x, b, g, 1, 0, 1e-5, True)
    assert [o.shape for o in out] == [(2, 3, 4), (2, 3, 1), (2, 3, 1)]
    np.testing.assert_allclose(out[1].d, x.d.mean(axis=2, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(out[2].d, x.d.var(axis=2, keepdims=True), rtol=1e-6)
    assert abs(out[0].d.std() - 2.0) < 1e-3


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


# -- item 2: fix_parameters --------------------------------------------------------------------


def test_fix_parameters_first_use_keeps_the_stored_parameters_trainable() -> None:
    """nnabla F2 (repro_fix2.py): nnabla 1.39 gives keys [W, b], W.g = 2s, need_grad True."""
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


# -- item 3: inplace ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,args,ref",
    [
        ("add2", 2, np.add),
        ("sub2", 2, np.subtract),
        ("mul2", 2, np.multiply),
        ("div2", 2, np.divide),
        ("pow2", 2, np.power),
        ("add_scalar", 1, lambda a: a + 1.5),
        ("mul_scalar", 1, lambda a: a * 1.5),
        ("pow_scalar", 1, lambda a: a**1.5),
    ],
)
def test_inplace_is_accepted_and_ignored(name: str, args: int, ref: Callable[..., Any]) -> None:
    """fnlib F3: nnabla's inplace= (keyword or positional) is accepted; nothing is modified."""
    fn = getattr(F, name)
    a, b = gh.Variable([0.5, 1.0, 2.0]), gh.Variable([1.5, 2.0, 0.5])
    a0 = a.d.copy()
    inputs = (a, b) if args == 2 else (a, 1.5)
    for call in (
        lambda: fn(*inputs, inplace=True),
        lambda: fn(*inputs, True),
        lambda: fn(*inputs, inplace=False),
    ):
        y = call()
        want = ref(a.d, b.d) if args == 2 else ref(a.d)
        np.testing.assert_allclose(y.d, want, rtol=1e-6)
        np.testing.assert_array_equal(a.d, a0)
        (ga,) = gh.grad([F.sum(y)], [a])
        (gb,) = gh.grad([F.sum(fn(*inputs))], [a])
        np.testing.assert_allclose(ga.d, gb.d)
    assert "inplace" in inspect.signature(fn).parameters
    with pytest.raises(TypeError, match=f"{name}.*unexpected keyword argument 'inplce'"):
        fn(*inputs, inplce=True)


def test_reshape_inplace() -> None:
    x = gh.Variable(np.arange(6.0))
    assert F.reshape(x, (3, 2), inplace=False).shape == (3, 2)
    assert F.reshape(x, (2, 3), True).shape == (2, 3)
    assert inspect.signature(F.reshape).parameters["inplace"].default is True  # nnabla's


# -- item 4: broadcast_to ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "yshape,axis,first",
    [  # nnabla 1.39's outputs (first 12 values)
        ((4,), None, [1, 2, 3, 4] * 3),
        ((3, 4), None, list(range(1, 13))),
        ((3,), 1, [1] * 4 + [2] * 4 + [3] * 4),
        ((2,), 0, [1] * 12),
        ((2, 3), 0, [1] * 4 + [2] * 4 + [3] * 4),
        ((), None, [1] * 12),
        ((4,), 2, [1, 2, 3, 4] * 3),
        ((4,), -1, [1, 2, 3, 4] * 3),
    ],
)
def test_broadcast_to_nnabla_form(yshape: tuple[int, ...], axis: Any, first: list[int]) -> None:
    x = gh.Variable(np.zeros((2, 3, 4)))
    y = gh.Variable(np.arange(1.0, 1.0 + np.prod(yshape)).reshape(yshape))
    out = F.broadcast_to(x, y, axis) if axis is not None else F.broadcast_to(x, y)
    assert out.shape == (2, 3, 4)
    assert out.d.reshape(-1)[:12].tolist() == first
    # the gradient goes to y: each element counted as many times as it is repeated
    gy, gx = gh.grad([F.sum(out)], [y, x])
    np.testing.assert_allclose(gy.d, np.full(yshape, 24.0 / max(np.prod(yshape), 1)))
    np.testing.assert_allclose(gx.d, 0.0)  # x only gives the shape (as nnabla)


def test_broadcast_to_gradient_matches_finite_differences() -> None:
    x = np.zeros((2, 3, 4))
    gh.testing.gradcheck(
        lambda y: F.broadcast_to(x, y, 1), [np.random.default_rng(1).standard_normal((3,))], order=2
    )


def test_broadcast_to_shape_form_and_errors() -> None:
    v = gh.Variable([1.0, 2.0])
    assert F.broadcast_to(v, (3, 2)).shape == (3, 2)
    assert F.broadcast_to(v, [3, 2]).shape == (3, 2)
    assert F.broadcast_to(v, shape=(3, 2)).shape == (3, 2)
    x = gh.Variable(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match=r"broadcast_to.*'y' of shape \(3,\)"):
        F.broadcast_to(x, gh.Variable(np.ones(3)))
    with pytest.raises(ValueError, match=r"broadcast_to.*'axis'"):
        F.broadcast_to(x, gh.Variable(np.ones(3)), 5)
    with pytest.raises(TypeError, match=r"broadcast_to.*'axis'"):
        F.broadcast_to(v, (3, 2), 0)


# -- item 5: missing arguments -----------------------------------------------------------------


def test_batch_normalization_output_stat() -> None:
    x = _x((4, 3, 2))
    p = [np.zeros((1, 3, 1)), np.ones((1, 3, 1)), np.zeros((1, 3, 1)), np.ones((1, 3, 1))]
    y, m, v = F.batch_normalization(x, *p, output_stat=True)
    assert m.shape == v.shape == (1, 3, 1)  # nnabla's shapes
    np.testing.assert_allclose(m.d.ravel(), x.d.mean(axis=(0, 2)), rtol=1e-6)
    np.testing.assert_allclose(v.d.ravel(), x.d.var(axis=(0, 2)), rtol=1e-6)
    np.testing.assert_allclose(y.d, F.batch_normalization(x, *[a.copy() for a in p]).d)
    assert len(F.batch_normalization(x, *p, (1,), 0.9, 1e-5, True, True)) == 3
    with pytest.raises(ValueError, match=r"batch_normalization.*output_stat.*batch_stat"):
        F.batch_normalization(x, *p, batch_stat=False, output_stat=True)
    assert "output_stat" in inspect.signature(F.batch_normalization).parameters


def test_batch_normalization_output_stat_gradient() -> None:
    p = [np.zeros((1, 3)), np.ones((1, 3)), np.zeros((1, 3)), np.ones((1, 3))]
    gh.testing.gradcheck(
        lambda x: F.batch_normalization(x, *p, output_stat=True),
        [np.random.default_rng(2).standard_normal((4, 3))],
    )


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


def test_convolution_channel_last_matches_channel_first() -> None:
    rng = np.random.default_rng(3)
    x = gh.Variable(rng.standard_normal((2, 4, 5, 5)))
    w = gh.Variable(rng.standard_normal((6, 2, 3, 3)))
    b = gh.Variable(rng.standard_normal(6))
    xl = gh.Variable(x.d.transpose(0, 2, 3, 1).copy())
    wl = gh.Variable(w.d.transpose(0, 2, 3, 1).copy())  # nnabla's (O, *k, I / group)
    y = F.convolution(x, w, b, pad=(1, 1), stride=(2, 1), group=2)
    yl = F.convolution(xl, wl, b, pad=(1, 1), stride=(2, 1), group=2, channel_last=True)
    np.testing.assert_allclose(yl.d, y.d.transpose(0, 2, 3, 1), rtol=1e-12)
    g = gh.grad([F.sum(y * y)], [x, w, b])
    gl = gh.grad([F.sum(yl * yl)], [xl, wl, b])
    np.testing.assert_allclose(gl[0].d, g[0].d.transpose(0, 2, 3, 1), rtol=1e-10)
    np.testing.assert_allclose(gl[1].d, g[1].d.transpose(0, 2, 3, 1), rtol=1e-10)
    np.testing.assert_allclose(gl[2].d, g[2].d, rtol=1e-10)
    assert F.convolution(x, w, b, channel_last=False, group=2).shape == (2, 6, 3, 3)


def test_deconvolution_channel_last_and_positional_output_padding() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 4, 4))
    w = rng.standard_normal((3, 4, 2, 2))
    y = F.deconvolution(x, w, None, 1, None, (2, 2), None, 1, False, (1, 1))
    assert y.shape == (2, 4, 9, 9)
    yl = F.deconvolution(
        x.transpose(0, 2, 3, 1),
        w.transpose(0, 2, 3, 1),
        None,
        1,
        None,
        (2, 2),
        None,
        1,
        True,
        (1, 1),
    )
    np.testing.assert_allclose(yl.d, y.d.transpose(0, 2, 3, 1), rtol=1e-12)
    with pytest.raises(TypeError, match=r"deconvolution.*'channel_last'"):
        F.deconvolution(x, w, None, 1, None, (2, 2), None, 1, (1, 1))  # gradhub's old order


def test_channel_last_gradcheck() -> None:
    rng = np.random.default_rng(5)
    gh.testing.gradcheck(
        lambda x, w: F.convolution(x, w, channel_last=True),
        [rng.standard_normal((1, 3, 3, 2)), rng.standard_normal((2, 2, 2, 2))],
    )


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


# -- item 6: small ones ------------------------------------------------------------------------


def test_prelu_nnabla_keywords() -> None:
    x = gh.Variable([[-1.0, -1.0], [2.0, -4.0]])
    w = gh.Variable([0.1, 0.5])
    want = F.prelu(x, w).d
    np.testing.assert_allclose(F.prelu(x0=x, x1=w).d, want)
    np.testing.assert_allclose(F.prelu(x=x, weight=w).d, want)
    np.testing.assert_allclose(F.prelu(x, w, 1).d, want)
    with pytest.raises(TypeError, match=r"prelu.*'x1'"):
        F.prelu(x)


def test_layer_normalization_creates_beta_first() -> None:
    gh.clear_parameters()
    with gh.parameter_scope("ln"):
        PF.layer_normalization(_x((2, 3)))
    assert list(gh.get_parameters()) == [
        "ln/layer_normalization/beta",
        "ln/layer_normalization/gamma",
    ]
    gh.clear_parameters()
