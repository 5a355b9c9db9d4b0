"""The signatures of ``gradhub.functions`` follow nnabla 1.39: positional parameters mean the
same, and nnabla's ``inplace=`` is accepted and ignored."""

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
    """nnabla's positional arguments mean the same in gradhub (gradhub's
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


# -- inplace ---------------------------------------------------------------------------


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
    """nnabla's inplace= (keyword or positional) is accepted; nothing is modified."""
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
