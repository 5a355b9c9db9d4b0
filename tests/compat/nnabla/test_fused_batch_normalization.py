"""nnabla's F.fused_batch_normalization / PF.fused_batch_normalization as one function,
FusedBatchNormalization (y.parent with five or six inputs and nnabla's info.args): values,
gradients, running statistics and second derivatives equal to nnabla 1.39's; None parameters,
output_stat, NdArrays, the running statistics left alone by the build (auto_forward off), and
the arguments nnabla refuses."""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest

# nnabla 1.39 (/tmp/probe_D/fbn_dump.py): the inputs of _inputs(), decay_rate=0.8, eps=1e-3, the
# incoming gradient linspace(-1, 1, 24); "double": the second derivatives of
# sum(gx * gx) + sum(gb * gg), (gx, gb, gg) = nn.grad(sum(y * y)), default arguments;
# "none_stat": beta, gamma, mean, variance None with output_stat=True
_NNABLA = {
    "batch_stat=False z=False": {
        "gb": [[[0.0], [-0.434783], [0.608696]]],
        "gg": [[[0.0], [-1.614129], [0.128451]]],
        "gx": [
            [[0.0, 0.0], [-0.644394, -0.576563], [-1.172173, 0.0]],
            [[0.0, 0.0], [0.0, -0.169577], [0.0, -0.078145]],
            [[0.0, 0.0], [0.169577, 0.237408], [0.703304, 0.0]],
            [[0.0, 0.0], [0.0, 0.644394], [1.641042, 0.0]],
        ],
        "gz": None,
        "m": [[[0.03869], [0.042539], [-0.002797]]],
        "v": [[[1.104846], [1.239264], [0.539188]]],
        "y": [
            [[0.0, 0.0], [0.517546, 1.502097], [2.466182, 0.0]],
            [[0.0, 0.0], [0.0, 0.074366], [0.0, 1.723372]],
            [[0.0, 0.0], [0.100315, 0.014361], [1.794916, 0.0]],
            [[0.0, 0.0], [0.0, 0.263935], [0.663239, 0.0]],
        ],
    },
    "batch_stat=False z=True": {
        "gb": [[[-0.956522], [-1.565217], [-0.304348]]],
        "gg": [[[-1.610849], [-2.153465], [-0.948895]]],
        "gx": [
            [[-0.662408, 0.0], [-0.644394, -0.576563], [-1.172173, 0.0]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, -0.078145]],
            [[0.0288, 0.0], [0.0, 0.0], [0.703304, 0.0]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
        ],
        "gz": [
            [[-1.0, 0.0], [-0.826087, -0.73913], [-0.652174, 0.0]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, -0.043478]],
            [[0.043478, 0.0], [0.0, 0.0], [0.391304, 0.0]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
        ],
        "m": [[[0.03869], [0.042539], [-0.002797]]],
        "v": [[[1.104846], [1.239264], [0.539188]]],
        "y": [
            [[1.79875, 0.0], [0.563305, 1.314914], [3.998961, 0.0]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 1.879721]],
            [[0.094881, 0.0], [0.0, 0.0], [0.746363, 0.0]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
        ],
    },
    "batch_stat=True z=False": {
        "gb": [[[0.0], [-0.73913], [-0.304348]]],
        "gg": [[[0.0], [-1.351529], [-0.539573]]],
        "gx": [
            [[0.0, 0.0], [-0.443229, -0.266553], [-0.679374, -0.076965]],
            [[0.0, 0.0], [0.026364, 0.073877], [0.019821, 0.076382]],
            [[0.0, 0.0], [0.076953, 0.066764], [0.645124, -0.01032]],
            [[0.0, 0.0], [-0.200169, 0.665993], [0.082001, -0.056671]],
        ],
        "gz": None,
        "m": [[[0.113568], [0.094161], [0.095257]]],
        "v": [[[1.005419], [1.353953], [0.667061]]],
        "y": [
            [[0.0, 0.0], [0.254849, 1.125191], [0.898924, 0.0]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.36157]],
            [[0.0, 0.0], [0.0, 0.0], [0.413325, 0.0]],
            [[0.0, 0.0], [0.0, 0.030657], [0.0, 0.0]],
        ],
    },
    "batch_stat=True z=True": {
        "gb": [[[-1.0], [-1.565217], [-0.695652]]],
        "gg": [[[-1.850912], [-1.582981], [-0.927263]]],
        "gx": [
            [[-0.426374, 0.115386], [-0.361285, -0.164623], [-0.530187, -0.104208]],
            [[0.281748, -0.051455], [0.091174, 0.146824], [0.062119, 0.199938]],
            [[0.224558, 0.031141], [0.150427, 0.138493], [0.262373, 0.010322]],
            [[0.08904, -0.264044], [-0.174154, 0.173145], [0.168977, -0.069334]],
        ],
        "gz": [
            [[-1.0, 0.0], [-0.826087, -0.73913], [-0.652174, 0.0]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, -0.043478]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
        ],
        "m": [[[0.113568], [0.094161], [0.095257]]],
        "v": [[[1.005419], [1.353953], [0.667061]]],
        "y": [
            [[1.94517, 0.0], [0.300608, 0.938007], [2.431703, 0.0]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.517919]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
        ],
    },
    "double": {
        "hb": [[[35.183678], [25.113602], [72.780121]]],
        "hg": [[[82.887444], [31.425255], [123.563324]]],
        "hx": [
            [[16.422678, -5.476259], [2.876577, 6.185162], [33.979691, 18.81934]],
            [[-15.035448, 4.110448], [-1.597535, -2.975867], [-6.141821, -3.502021]],
            [[-11.749271, -0.635538], [-3.065101, -2.769515], [-36.194271, 1.631583]],
            [[-3.962425, 16.325813], [4.974054, -3.627776], [-22.178112, 13.585615]],
        ],
        "hz": [
            [[35.183678, 0.0], [9.242739, 15.870863], [50.439178, 0.0]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 22.340946]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
        ],
    },
    "none_stat": {
        "mean": [[[0.413078], [0.300647], [0.487474]]],
        "shapes": [[4, 3, 2], [1, 3, 1], [1, 3, 1]],
        "var": [[[0.531749], [1.586124], [1.031235]]],
        "y": [
            [[1.852635, 0.0], [0.538416, 1.540589], [1.359016, 0.0]],
            [[0.736419, 0.0], [0.0, 0.087303], [0.0, 0.952041]],
            [[0.477168, 0.0], [0.113716, 0.026224], [0.991239, 0.0]],
            [[0.0, 0.0], [0.0, 0.280265], [0.371208, 0.0]],
        ],
    },
}


def _inputs() -> tuple[np.ndarray, ...]:
    rng = np.random.RandomState(0)
    x0 = rng.randn(4, 3, 2).astype(np.float32)
    z0 = rng.randn(4, 3, 2).astype(np.float32)
    b0 = rng.randn(1, 3, 1).astype(np.float32)
    g0 = (rng.rand(1, 3, 1) + 0.5).astype(np.float32)
    m0 = (rng.randn(1, 3, 1) * 0.1).astype(np.float32)
    v0 = (rng.rand(1, 3, 1) + 0.5).astype(np.float32)
    return x0, z0, b0, g0, m0, v0


def _var(a: np.ndarray, need_grad: bool = True) -> nn.Variable:
    return nn.Variable.from_numpy_array(a.copy(), need_grad=need_grad)


@pytest.mark.parametrize("batch_stat", [True, False])
@pytest.mark.parametrize("with_z", [True, False])
def test_fused_batch_normalization_as_nnabla(batch_stat: bool, with_z: bool) -> None:
    ref = _NNABLA[f"batch_stat={batch_stat} z={with_z}"]
    x0, z0, b0, g0, m0, v0 = _inputs()
    x, z, b, g = _var(x0), _var(z0), _var(b0), _var(g0)
    m, v = _var(m0, False), _var(v0, False)
    y = F.fused_batch_normalization(
        x, b, g, m, v, z if with_z else None, decay_rate=0.8, eps=1e-3, batch_stat=batch_stat
    )
    f = y.parent
    assert f.name == "FusedBatchNormalization" and f.info.type_name == f.name
    assert f.inputs == ([x, b, g, m, v, z] if with_z else [x, b, g, m, v])
    args = f.info.args
    assert args["axes"] == [1] and args["batch_stat"] == batch_stat
    assert args["nonlinearity"] == "relu"
    assert np.isclose(args["decay_rate"], 0.8) and np.isclose(args["eps"], 1e-3)
    np.testing.assert_array_equal(m.d, m0)  # built, not executed: nothing updated yet
    y.forward()
    y.backward(np.linspace(-1, 1, 24).reshape(4, 3, 2).astype(np.float32))
    tol = {"rtol": 1e-5, "atol": 2e-6}
    np.testing.assert_allclose(y.d, ref["y"], **tol)
    np.testing.assert_allclose(m.d, ref["m"], **tol)
    np.testing.assert_allclose(v.d, ref["v"], **tol)
    np.testing.assert_allclose(x.g, ref["gx"], **tol)
    np.testing.assert_allclose(b.g, ref["gb"], **tol)
    np.testing.assert_allclose(g.g, ref["gg"], **tol)
    if with_z:
        np.testing.assert_allclose(z.g, ref["gz"], **tol)


def test_second_derivatives_as_nnabla() -> None:
    x0, z0, b0, g0, m0, v0 = _inputs()
    x, z, b, g = _var(x0), _var(z0), _var(b0), _var(g0)
    y = F.fused_batch_normalization(x, b, g, _var(m0, False), _var(v0, False), z)
    gx, gb, gg = nn.grad([F.sum(y * y)], [x, b, g])
    s = F.sum(gx * gx) + F.sum(gb * gg)
    hx, hb, hg, hz = nn.grad([s], [x, b, g, z])
    F.sink(hx, hb, hg, hz).forward()
    ref = _NNABLA["double"]
    for got, name in ((hx, "hx"), (hb, "hb"), (hg, "hg"), (hz, "hz")):
        np.testing.assert_allclose(got.d, ref[name], rtol=2e-5, atol=2e-4, err_msg=name)


def test_none_parameters_and_output_stat_as_nnabla() -> None:
    x0 = _inputs()[0]
    x = _var(x0)
    ys = F.fused_batch_normalization(x, None, None, None, None, output_stat=True)
    assert len(ys) == 3 and ys[0].parent.name == "FusedBatchNormalization"
    assert len(ys[0].parent.inputs) == 5
    F.sink(*ys).forward()
    ref = _NNABLA["none_stat"]
    assert [list(t.shape) for t in ys] == ref["shapes"]
    for t, name in zip(ys, ("y", "mean", "var")):
        np.testing.assert_allclose(t.d, ref[name], rtol=1e-5, atol=2e-6, err_msg=name)


def test_forward_updates_the_running_statistics_each_time() -> None:
    x0, _, b0, g0, m0, v0 = _inputs()
    m, v = _var(m0, False), _var(v0, False)
    y = F.fused_batch_normalization(_var(x0), _var(b0), _var(g0), m, v, decay_rate=0.8)
    y.forward()
    y.forward()
    n = 8
    bm = x0.astype(np.float64).mean(axis=(0, 2), keepdims=True)
    bv = x0.astype(np.float64).var(axis=(0, 2), keepdims=True) * n / (n - 1)
    np.testing.assert_allclose(m.d, 0.64 * m0 + 0.36 * bm, rtol=1e-5)
    np.testing.assert_allclose(v.d, 0.64 * v0 + 0.36 * bv, rtol=1e-5)


def test_auto_forward_computes_and_updates_at_once() -> None:
    x0, _, b0, g0, m0, v0 = _inputs()
    m = _var(m0, False)
    with nn.auto_forward():
        y = F.fused_batch_normalization(_var(x0), _var(b0), _var(g0), m, _var(v0, False))
    assert not np.array_equal(m.d, m0) and (y.d > 0).any()


def test_ndarrays_compute_at_once() -> None:
    x0, z0, b0, g0, m0, v0 = _inputs()
    arrs = [nn.NdArray.from_numpy_array(a.copy()) for a in (x0, b0, g0, m0, v0, z0)]
    y = F.fused_batch_normalization(*arrs, batch_stat=False, decay_rate=0.8, eps=1e-3)
    assert isinstance(y, nn.NdArray)
    ref = _NNABLA["batch_stat=False z=True"]
    np.testing.assert_allclose(y.data, ref["y"], rtol=1e-5, atol=2e-6)


def test_refusals() -> None:
    x0, _, b0, g0, m0, v0 = _inputs()
    x, b, g, m, v = _var(x0), _var(b0), _var(g0), _var(m0, False), _var(v0, False)
    # nnabla 1.39: RuntimeError "not_implemented" (NotImplementedError is one)
    with pytest.raises(NotImplementedError, match="only 'relu'"):
        F.fused_batch_normalization(x, b, g, m, v, nonlinearity="")
    # nnabla 1.39: ValueError for both
    with pytest.raises(ValueError, match="mean and variance must not be None"):
        F.fused_batch_normalization(x, b, g, None, v, batch_stat=False)
    with pytest.raises(ValueError, match="must not have a parent function"):
        F.fused_batch_normalization(x, b, g, m * 1.0, v)
    with pytest.raises(ValueError, match=r"fused_batch_normalization\(\): z must have"):
        F.fused_batch_normalization(x, b, g, m, v, _var(x0[:2]))


@pytest.mark.parametrize("with_z", [False, True])
@pytest.mark.parametrize("output_stat", [False, True])
def test_pf_fused_batch_normalization_is_one_function(with_z: bool, output_stat: bool) -> None:
    nn.clear_parameters()
    x0, z0 = _inputs()[:2]
    x, z = _var(x0), _var(z0)
    init = {"beta": np.ones((1, 3, 1)), "mean": np.full((1, 3, 1), 0.5)}
    y = PF.fused_batch_normalization(
        x,
        z if with_z else None,
        output_stat=output_stat,
        fix_parameters=True,
        param_init=init,
        name="f",
    )
    h = y[0] if output_stat else y
    assert h.parent.name == "FusedBatchNormalization"
    ins = h.parent.inputs
    assert len(ins) == (6 if with_z else 5) and ins[0] == x
    assert [i.need_grad for i in ins[1:5]] == [False, False, False, False]
    params = nn.get_parameters(grad_only=False)
    assert list(params) == ["f/bn/beta", "f/bn/gamma", "f/bn/mean", "f/bn/var"]
    np.testing.assert_array_equal(ins[1].d, np.ones((1, 3, 1)))
    np.testing.assert_array_equal(ins[3].d, np.full((1, 3, 1), 0.5))
    assert len(nn.get_parameters()) == 2
    nn.clear_parameters()


def test_pf_no_scale_no_bias() -> None:
    nn.clear_parameters()
    y = PF.fused_batch_normalization(_var(_inputs()[0]), no_scale=True, no_bias=True)
    assert sorted(nn.get_parameters(grad_only=False)) == ["bn/mean", "bn/var"]
    assert len(y.parent.inputs) == 5
    nn.clear_parameters()
