"""mxnet's symbolic ``BatchNorm`` with its auxiliary states: the names of the created
variables, ``list_auxiliary_states``, shape and dtype inference of the auxiliary states,
``bind(aux_states=...)``, ``simple_bind`` (zeros, as mxnet), ``aux_dict``/``aux_arrays``,
``copy_params_from(arg_params, aux_params)``, the moving statistics updated at ``backward``
after ``forward(is_train=True)`` (as mxnet 1.9.1, with the batch's biased variance), fixed gamma
written to 1 at every forward, ``use_global_stats``, and planned runs equal to the graph built at
each call. Expected values are mxnet 1.9.1's outputs (``# mxnet 1.9.1``) or numpy formulas.
"""

from __future__ import annotations

import json
from pathlib import Path

import gradhub as gh
import gradhub_compat.mxnet as mx
import numpy as np
import pytest

DATA = Path(__file__).parent / "data"

GAMMA = np.array([0.5, 2.0, 3.0], np.float32)
BETA = np.array([0.1, 0.2, 0.3], np.float32)
MEAN = np.array([0.1, 0.2, 0.3], np.float32)
VAR = np.array([1.5, 2.0, 3.0], np.float32)
HEAD = (np.arange(48).reshape(4, 3, 2, 2) / 10).astype(np.float32)


def _data() -> np.ndarray:
    np.random.seed(0)
    return np.random.randn(4, 3, 2, 2).astype(np.float32)


def _bound(**kwargs: object) -> mx.Executor:
    bn = mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn", **kwargs)
    ex = bn.simple_bind(mx.cpu(), data=(4, 3, 2, 2))
    ex.arg_dict["data"][:] = _data()
    ex.arg_dict["bn_gamma"][:] = GAMMA
    ex.arg_dict["bn_beta"][:] = BETA
    ex.aux_dict["bn_moving_mean"][:] = MEAN
    ex.aux_dict["bn_moving_var"][:] = VAR
    return ex


def test_names_aux_states_and_inference() -> None:
    x = mx.sym.Variable("data")
    bn = mx.sym.BatchNorm(x, name="bn1")
    # mxnet 1.9.1
    assert bn.list_arguments() == ["data", "bn1_gamma", "bn1_beta"]
    assert bn.list_auxiliary_states() == ["bn1_moving_mean", "bn1_moving_var"]
    assert bn.list_outputs() == ["bn1_output"]
    assert bn.list_inputs() == [
        "data",
        "bn1_gamma",
        "bn1_beta",
        "bn1_moving_mean",
        "bn1_moving_var",
    ]
    assert mx.sym.BatchNorm(x).list_arguments()[1].startswith("batchnorm")
    assert bn.infer_shape(data=(4, 3, 5, 5)) == (
        [(4, 3, 5, 5), (3,), (3,)],
        [(4, 3, 5, 5)],
        [(3,), (3,)],
    )  # mxnet 1.9.1
    assert bn.infer_shape_partial(data=(0, 3, 0)) == (
        [(0, 3, 0), (3,), (3,)],
        [(0, 3, 0)],
        [(3,), (3,)],
    )  # mxnet 1.9.1
    assert bn.infer_shape(data=(0, 3)) == (None, None, None)
    f64 = np.float64
    assert bn.infer_type(data="float64") == ([f64] * 3, [f64], [f64] * 2)  # mxnet 1.9.1
    # axis picks the channel axis of gamma, beta and the statistics
    last = mx.sym.BatchNorm(x, axis=-1, name="b")
    assert last.infer_shape(data=(2, 3, 7))[2] == [(7,), (7,)]
    # given statistics variables are auxiliary states too (their position decides, as mxnet)
    mm, mv = mx.sym.Variable("mm"), mx.sym.Variable("mv")
    own = mx.sym.BatchNorm(x, moving_mean=mm, moving_var=mv, name="b")
    assert own.list_auxiliary_states() == ["mm", "mv"]
    assert own.list_arguments() == ["data", "b_gamma", "b_beta"]
    with pytest.raises(mx.base.MXNetError, match="Error in operator bn1"):
        bn.infer_shape(data=(4, 3, 5, 5), bn1_moving_mean=(4,))


def test_json_of_batchnorm_is_mxnets() -> None:
    bn = mx.sym.BatchNorm(mx.sym.Variable("x"), name="bn", fix_gamma=False, eps=1e-5, momentum=0.8)
    graph = json.loads(bn.tojson())
    common = {"eps": "1e-05", "fix_gamma": "False", "momentum": "0.8"}
    # mxnet 1.9.1: the layer's attributes on every created variable, mxnet's initializers on the
    # statistics, the statistics read at version 1 and three outputs in node_row_ptr
    assert [n.get("attrs") for n in graph["nodes"]] == [
        None,
        common,
        common,
        {"__init__": '["zero", {}]', **common},
        {"__init__": '["one", {}]', **common},
        common,
    ]
    assert graph["nodes"][-1]["inputs"] == [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]
    assert graph["node_row_ptr"] == [0, 1, 2, 3, 4, 5, 8]
    back = mx.sym.load_json(bn.tojson())
    assert back.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert back.tojson() == bn.tojson()


def test_simple_bind_allocates_zero_aux_states_and_bind_checks_them() -> None:
    bn = mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn")
    ex = bn.simple_bind(mx.cpu(), data=(2, 3))
    assert list(ex.aux_dict) == ["bn_moving_mean", "bn_moving_var"]
    for a in ex.aux_arrays:  # mxnet 1.9.1: both zeros (the initializers fill them)
        np.testing.assert_array_equal(a.asnumpy(), np.zeros(3, np.float32))
    args = {"data": mx.nd.ones((2, 3)), "bn_gamma": mx.nd.ones(3), "bn_beta": mx.nd.zeros(3)}
    aux = [mx.nd.zeros(3), mx.nd.ones(3)]
    ex = bn.bind(mx.cpu(), args, aux_states=aux)
    assert ex.aux_arrays[0] is aux[0] and ex.aux_dict["bn_moving_var"] is aux[1]
    ex = bn.bind(mx.cpu(), args, aux_states={"bn_moving_mean": aux[0], "bn_moving_var": aux[1]})
    assert ex.aux_dict["bn_moving_mean"] is aux[0]
    with pytest.raises(ValueError, match="auxiliary states"):
        bn.bind(mx.cpu(), args)
    with pytest.raises(ValueError, match="Length of aux_states"):
        bn.bind(mx.cpu(), args, aux_states=aux[:1])
    with pytest.raises(ValueError, match="key `bn_moving_var` is missing in `aux_states`"):
        bn.bind(mx.cpu(), args, aux_states={"bn_moving_mean": aux[0]})
    with pytest.raises(mx.base.MXNetError, match="Error in operator bn"):
        bn.bind(mx.cpu(), args, aux_states=[mx.nd.zeros(4), mx.nd.ones(3)])


def test_training_step_equals_mxnet_and_updates_statistics_at_backward() -> None:
    ex = _bound()
    out = ex.forward(is_train=False)[0].asnumpy()
    np.testing.assert_allclose(out[0, :, 0, 0], [1.4582404, 1.378847, 0.06724027], rtol=1e-6)
    # mxnet 1.9.1: a fixed gamma is set to 1 at every forward, inference included
    np.testing.assert_array_equal(ex.arg_dict["bn_gamma"].asnumpy(), np.ones(3))
    out = ex.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(
        out[0, :, 0, 0], [1.3079697, 1.5892117, 0.4645205], rtol=1e-5
    )  # mxnet 1.9.1
    # mxnet 1.9.1: forward alone leaves the moving statistics
    np.testing.assert_array_equal(ex.aux_dict["bn_moving_mean"].asnumpy(), MEAN)
    ex.backward(mx.nd.array(HEAD))
    g = {k: v.asnumpy() for k, v in ex.grad_dict.items()}
    np.testing.assert_allclose(
        g["data"].ravel()[:3], [-1.3921434, -2.0060685, -1.5989337], rtol=1e-5
    )  # mxnet 1.9.1
    np.testing.assert_array_equal(g["bn_gamma"], np.zeros(3))  # mxnet 1.9.1
    np.testing.assert_allclose(g["bn_beta"], [31.2, 37.6, 44.0], rtol=1e-6)  # mxnet 1.9.1
    np.testing.assert_allclose(
        ex.aux_dict["bn_moving_mean"].asnumpy(), [0.14913186, 0.20342554, 0.24278387], rtol=1e-6
    )  # mxnet 1.9.1
    np.testing.assert_allclose(
        ex.aux_dict["bn_moving_var"].asnumpy(), [1.4441512, 1.9381281, 2.8053477], rtol=1e-6
    )  # mxnet 1.9.1
    # the numpy formula: the batch's biased variance, momentum 0.9
    d = _data().astype(np.float64)
    np.testing.assert_allclose(
        ex.aux_dict["bn_moving_var"].asnumpy(), 0.9 * VAR + 0.1 * d.var(axis=(0, 2, 3)), rtol=1e-6
    )
    # inference uses the updated statistics and changes nothing
    before = ex.aux_dict["bn_moving_mean"].asnumpy().copy()
    out = ex.forward(is_train=False)[0].asnumpy()
    mm = before.astype(np.float64)
    mv = ex.aux_dict["bn_moving_var"].asnumpy().astype(np.float64)
    want = (d - mm[None, :, None, None]) / np.sqrt(mv[None, :, None, None] + 1e-3)
    np.testing.assert_allclose(out, want + BETA[None, :, None, None], rtol=1e-5, atol=1e-6)
    ex.backward(mx.nd.array(HEAD))  # after an inference forward: no update
    np.testing.assert_array_equal(ex.aux_dict["bn_moving_mean"].asnumpy(), before)


def test_free_gamma_equals_mxnet() -> None:
    ex = _bound(fix_gamma=False)
    out = ex.forward(is_train=False)[0].asnumpy()
    np.testing.assert_allclose(
        out[0, :, 0, 0], [0.7791202, 2.557694, -0.3982792], rtol=1e-5
    )  # mxnet 1.9.1
    np.testing.assert_array_equal(ex.arg_dict["bn_gamma"].asnumpy(), GAMMA)
    out = ex.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(
        out[0, :, 0, 0], [0.70398486, 2.9784234, 0.79356146], rtol=1e-5
    )  # mxnet 1.9.1
    ex.backward(mx.nd.array(HEAD))
    np.testing.assert_allclose(
        ex.grad_dict["data"].asnumpy().ravel()[:3],
        [-0.6960717, -1.0030342, -0.79946685],
        rtol=1e-5,
    )  # mxnet 1.9.1
    np.testing.assert_allclose(
        ex.grad_dict["bn_gamma"].asnumpy(), [-7.926884, -4.8543077, -5.7148757], rtol=1e-5
    )  # mxnet 1.9.1


@pytest.mark.parametrize("fix_gamma", [True, False])
def test_use_global_stats_equals_mxnet(fix_gamma: bool) -> None:
    ex = _bound(use_global_stats=True, fix_gamma=fix_gamma)
    test = ex.forward(is_train=False)[0].asnumpy()
    train = ex.forward(is_train=True)[0].asnumpy()
    np.testing.assert_array_equal(train, test)
    ex.backward(mx.nd.array(HEAD))
    # mxnet 1.9.1
    want_x = [0.0, 0.08162245, 0.1632449] if fix_gamma else [0.0, 0.04081123, 0.08162245]
    want_g = [0.0, 0.0, 0.0] if fix_gamma else [6.23063, -3.1240888, -17.920033]
    np.testing.assert_allclose(
        ex.grad_dict["data"].asnumpy().ravel()[:3], want_x, rtol=1e-5, atol=1e-7
    )
    np.testing.assert_allclose(ex.grad_dict["bn_gamma"].asnumpy(), want_g, rtol=1e-5)
    np.testing.assert_array_equal(ex.aux_dict["bn_moving_mean"].asnumpy(), MEAN)
    np.testing.assert_array_equal(ex.aux_dict["bn_moving_var"].asnumpy(), VAR)


def test_copy_params_from_with_aux_params() -> None:
    ex = _bound()
    ex.copy_params_from(
        {"bn_beta": mx.nd.array([1.0, 2.0, 3.0])},
        {"bn_moving_var": mx.nd.array([4.0, 5.0, 6.0])},
    )
    np.testing.assert_array_equal(ex.aux_dict["bn_moving_var"].asnumpy(), [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(ex.arg_dict["bn_beta"].asnumpy(), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="not an auxiliary state"):
        ex.copy_params_from({}, {"bn_other": mx.nd.zeros(3)})
    ex.copy_params_from({}, {"bn_other": mx.nd.zeros(3)}, allow_extra_params=True)
    with pytest.raises(ValueError, match="Shape not match"):
        ex.copy_params_from({}, {"bn_moving_var": mx.nd.zeros(4)})


def _steps(planned: bool, mean_var: bool = False) -> list[np.ndarray]:
    """Outputs, gradients and statistics of 4 training steps and an inference forward."""
    before = gh.plan.set_enabled(planned)
    try:
        ex = _bound(fix_gamma=False, momentum=0.7, output_mean_var=mean_var)
        rng = np.random.RandomState(1)
        got: list[np.ndarray] = []
        heads = [mx.nd.array(HEAD), mx.nd.ones(3), mx.nd.ones(3)] if mean_var else None
        for _ in range(4):
            out = ex.forward(is_train=True, data=rng.randn(4, 3, 2, 2).astype(np.float32))
            ex.backward(heads or mx.nd.array(HEAD))
            got += [out[-1].asnumpy().copy(), *(g.asnumpy().copy() for g in ex.grad_arrays)]
            got += [a.asnumpy().copy() for a in ex.aux_arrays]
        got.append(ex.forward(is_train=False)[0].asnumpy().copy())
        if planned:
            assert ex._plan is not None  # the inference graph has its own plan
        return got
    finally:
        gh.plan.set_enabled(before)


@pytest.mark.parametrize("mean_var", [False, True])
def test_planned_steps_update_statistics_as_the_graph_built_each_time(mean_var: bool) -> None:
    planned, built = _steps(True, mean_var), _steps(False, mean_var)
    assert len(planned) == len(built) == 4 * 6 + 1
    for a, b in zip(planned, built):
        np.testing.assert_array_equal(a, b)
    # the statistics moved at every step
    assert not np.array_equal(planned[4], planned[10])
    assert not np.array_equal(planned[10], planned[16])


def test_output_mean_var_equals_mxnet() -> None:
    bn = mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn", output_mean_var=True, fix_gamma=False)
    # mxnet 1.9.1
    assert len(bn) == 3 and bn.list_outputs() == ["bn_output", "bn_mean", "bn_var"]
    assert bn.get_internals().list_outputs()[-3:] == ["bn_output", "bn_mean", "bn_var"]
    assert bn.infer_shape(data=(4, 3, 2)) == (
        [(4, 3, 2), (3,), (3,)],
        [(4, 3, 2), (3,), (3,)],
        [(3,), (3,)],
    )
    graph = json.loads(bn.tojson())
    assert graph["heads"] == [[5, 0, 0], [5, 1, 0], [5, 2, 0]]
    assert graph["node_row_ptr"] == [0, 1, 2, 3, 4, 5, 8]
    assert mx.sym.load_json(bn.tojson()).tojson() == bn.tojson()
    assert bn[1].list_outputs() == ["bn_mean"]
    ex = bn.simple_bind(mx.cpu(), data=(4, 3, 2))
    np.random.seed(0)
    d = np.random.randn(4, 3, 2).astype(np.float32)
    ex.arg_dict["data"][:] = d
    ex.arg_dict["bn_gamma"][:] = 1
    ex.aux_dict["bn_moving_var"][:] = 2
    ex.aux_dict["bn_moving_mean"][:] = 0.5
    outs = ex.forward(is_train=True)
    # mxnet 1.9.1: the batch mean and 1 / sqrt(var + eps)
    np.testing.assert_allclose(outs[1].asnumpy(), [0.41307822, 0.30064714, 0.48747367], rtol=1e-6)
    np.testing.assert_allclose(outs[2].asnumpy(), [1.3700576, 0.7937698, 0.9842619], rtol=1e-6)
    ex.backward([mx.nd.ones((4, 3, 2)), mx.nd.ones(3), mx.nd.ones(3)])
    # the mean and var outputs pass no gradient (mxnet 1.9.1: ~1e-7, float32 rounding of 0)
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), 0, atol=1e-6)
    outs = ex.forward(is_train=False)
    # mxnet 1.9.1: the (updated) moving mean and 1 / sqrt(moving_var + eps)
    np.testing.assert_allclose(outs[1].asnumpy(), [0.49130782, 0.48006472, 0.49874738], rtol=1e-6)
    np.testing.assert_allclose(outs[2].asnumpy(), [0.73438644, 0.71435636, 0.72469026], rtol=1e-6)
    # one update per backward, though the operator has three output nodes
    np.testing.assert_allclose(
        ex.aux_dict["bn_moving_mean"].asnumpy(), 0.45 + 0.1 * d.mean(axis=(0, 2)), rtol=1e-6
    )


def test_unsupported_options_raise() -> None:
    x = mx.sym.Variable("x")
    with pytest.raises(NotImplementedError, match=r"calib_range.*migration-mxnet"):
        mx.sym.BatchNorm(x, min_calib_range=0.0)
    with pytest.raises(mx.base.MXNetError, match="eps"):
        mx.sym.BatchNorm(x, eps=0.0)


def test_reshaped_and_shared_executors_share_the_aux_states() -> None:
    ex = _bound()
    small = ex.reshape(data=(2, 3, 2, 2))
    for name in ("bn_moving_mean", "bn_moving_var"):
        assert small.aux_dict[name] is ex.aux_dict[name]
    small.forward(is_train=True, data=_data()[:2])
    small.backward(mx.nd.array(HEAD[:2]))
    d = _data()[:2].astype(np.float64)
    np.testing.assert_allclose(
        ex.aux_dict["bn_moving_mean"].asnumpy(),
        0.9 * MEAN + 0.1 * d.mean(axis=(0, 2, 3)),
        rtol=1e-6,
    )
    bn = mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn")
    shared = bn.simple_bind(
        mx.cpu(), data=(8, 3, 2, 2), shared_exec=ex, shared_arg_names=["bn_gamma"], shared_buffer={}
    )
    assert shared.aux_dict["bn_moving_var"] is ex.aux_dict["bn_moving_var"]
    assert shared.arg_dict["bn_gamma"] is ex.arg_dict["bn_gamma"]


def test_float16_data_with_float32_parameters_as_mxnet() -> None:
    bn = mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn", fix_gamma=False)
    f16, f32 = np.float16, np.float32
    assert bn.infer_type(data="float16") == ([f16, f32, f32], [f16], [f32, f32])  # mxnet 1.9.1
    with pytest.raises(mx.base.MXNetError, match="needs float32"):
        bn.infer_type(data="float16", bn_gamma="float16")
    got = []
    for planned in (True, False):
        before = gh.plan.set_enabled(planned)
        try:
            ex = bn.simple_bind(mx.cpu(), data=(4, 3), type_dict={"data": "float16"})
            assert (
                ex.arg_dict["bn_gamma"].dtype == f32 and ex.aux_dict["bn_moving_var"].dtype == f32
            )
            np.random.seed(0)
            x = np.random.randn(4, 3).astype(np.float16)
            ex.arg_dict["bn_gamma"][:] = np.array([0.5, 2, 3])
            ex.aux_dict["bn_moving_var"][:] = 1
            out = ex.forward(is_train=True, data=x)[0]
            ex.backward(mx.nd.ones((4, 3), dtype="float16"))
            np.testing.assert_allclose(
                ex.aux_dict["bn_moving_mean"].asnumpy(),
                [0.13411869, 0.05650026, 0.03380891],  # mxnet 1.9.1
                rtol=1e-5,
            )
            out = ex.forward(is_train=True, data=x)[0]
            ex.backward(mx.nd.ones((4, 3), dtype="float16"))
            assert out.dtype == f16
            xd = x.astype(np.float64)
            want = (xd - xd.mean(0)) / np.sqrt(xd.var(0) + 1e-3) * [0.5, 2, 3]
            np.testing.assert_allclose(out.asnumpy(), want, rtol=2e-3, atol=2e-3)
            np.testing.assert_allclose(
                ex.aux_dict["bn_moving_mean"].asnumpy(), 0.19 * xd.mean(0), rtol=1e-5
            )
            got.append([out.asnumpy().copy(), ex.grad_dict["bn_gamma"].asnumpy().copy()])
        finally:
            gh.plan.set_enabled(before)
    for a, b in zip(*got):
        np.testing.assert_array_equal(a, b)
