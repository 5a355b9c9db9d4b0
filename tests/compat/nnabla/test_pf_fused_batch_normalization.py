"""PF.fused_batch_normalization and F.fused_batch_normalization as nnabla 1.39's: parameters,
training output and gradients (of x, z, beta and gamma), the running statistics after each
forward(), the inference mode, output_stat, and the nonlinearities nnabla refuses.
"""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest

# nnabla 1.39's outputs of the run of test_fused_batch_normalization_as_nnabla
_NNABLA: dict[str, dict[str, Any]] = {
    "build": {
        "names": ["f/bn/beta", "f/bn/gamma", "f/bn/mean", "f/bn/var"],
        "shapes": [[1.0, 3.0, 1.0], [1.0, 3.0, 1.0], [1.0, 3.0, 1.0], [1.0, 3.0, 1.0]],
        "mean_before": [[[0.0], [0.0], [0.0]]],
    },
    "train": {
        "y": [
            [[0.0, 0.16324466466903687], [0.0, 0.13613426685333252], [0.0, 0.8420230150222778]],
            [
                [2.669490337371826, 1.4399874210357666],
                [0.9766031503677368, 1.291725516319275],
                [0.0, 0.6326050162315369],
            ],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
            [
                [0.0, 0.0],
                [1.289639949798584, 0.22669097781181335],
                [1.4328820705413818, 1.1500012874603271],
            ],
        ],
        "gx": [
            [
                [-0.2716163396835327, 0.37220102548599243],
                [0.7143598794937134, -1.0614041090011597],
                [-0.18095871806144714, -0.9880727529525757],
            ],
            [
                [0.49864137172698975, -0.470658540725708],
                [-0.8252396583557129, -1.6318329572677612],
                [-0.15125271677970886, 0.777164101600647],
            ],
            [
                [0.20784258842468262, 0.02652883529663086],
                [0.2539744973182678, 0.3752647638320923],
                [-0.09672881662845612, -0.12582825124263763],
            ],
            [
                [-0.2096906453371048, -0.15324851870536804],
                [1.986809253692627, 0.1880684792995453],
                [-0.044477105140686035, 0.8101541996002197],
            ],
        ],
        "gz": [
            [[0.0, 1.139533519744873], [0.0, -1.7791130542755127], [0.0, -1.351017713546753]],
            [
                [1.5539672374725342, 0.696965754032135],
                [-0.8114611506462097, -1.6432509422302246],
                [0.0, 1.2249562740325928],
            ],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
            [
                [0.0, 0.0],
                [2.472511053085327, -0.14685659110546112],
                [0.11564920097589493, 1.3304306268692017],
            ],
        ],
        "gb": [[[3.3904664516448975], [-1.9081707000732422], [1.3200184106826782]]],
        "gg": [[[3.801685333251953], [2.862806558609009], [-0.4479551315307617]]],
        "mean": [[[0.19082625210285187], [-0.1245080754160881], [0.10780259966850281]]],
        "var": [[[1.1878628730773926], [1.1967136859893799], [1.698893427848816]]],
    },
    "train2": {
        "mean": [[[0.2862393856048584], [-0.18676210939884186], [0.1617038995027542]]],
        "var": [[[1.2817943096160889], [1.2950706481933594], [2.048340082168579]]],
    },
    "infer": {
        "y": [
            [[0.0, 0.227522611618042], [0.0, 0.11203634738922119], [0.0, 0.8979607820510864]],
            [
                [2.7158305644989014, 1.4728941917419434],
                [0.8938089609146118, 1.2040444612503052],
                [0.0, 0.6844324469566345],
            ],
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
            [
                [0.0, 0.0],
                [1.1919901371002197, 0.18161913752555847],
                [1.4672963619232178, 1.189399003982544],
            ],
        ],
    },
    "stat": {
        "y": [
            [[0.23673027753829956, 0.5428698062896729], [0.0, 0.0], [0.0, 1.6217972040176392]],
            [
                [1.5872236490249634, 1.4538248777389526],
                [0.8173363208770752, 0.4488823413848877],
                [0.0, 1.2180063724517822],
            ],
            [[0.0, 0.0], [0.0, 0.0], [0.8707414269447327, 0.0]],
            [[0.10728991031646729, 0.0], [1.2728619575500488, 0.0], [0.017687400802969933, 0.0]],
        ],
        "m": [[[-0.19568316638469696, 0.4278442859649658]]],
        "v": [[[1.4686349630355835, 1.4935059547424316]]],
        "gx": [
            [
                [-2.4129934310913086, 1.197875738143921],
                [0.28743261098861694, -0.12052242457866669],
                [0.30691272020339966, -0.6346616744995117],
            ],
            [
                [1.3649035692214966, 1.0091583728790283],
                [-0.5349686145782471, -1.09707772731781],
                [0.24487745761871338, 1.3963022232055664],
            ],
            [
                [0.24152784049510956, -0.00800330936908722],
                [0.20000796020030975, -0.02787715196609497],
                [-0.1215476542711258, 0.05948606878519058],
            ],
            [
                [-0.0043019503355026245, 0.0629369392991066],
                [2.14408802986145, 0.0008888095617294312],
                [0.2840619683265686, 0.1614944487810135],
            ],
        ],
    },
}


def _close(got: Any, exp: Any) -> None:
    np.testing.assert_allclose(np.asarray(got), np.asarray(exp, np.float32), rtol=1e-5, atol=1e-6)


def test_fused_batch_normalization_as_nnabla() -> None:
    # regression: PF.fused_batch_normalization raised AttributeError
    rs = np.random.RandomState(8)
    xd, zd, cot = (rs.randn(4, 3, 2).astype(np.float32) for _ in range(3))
    x = nn.Variable.from_numpy_array(xd, need_grad=True)
    z = nn.Variable.from_numpy_array(zd, need_grad=True)
    y = PF.fused_batch_normalization(x, z, decay_rate=0.5, name="f")
    loss = F.sum(y * nn.Variable.from_numpy_array(cot))
    ps = nn.get_parameters(grad_only=False)
    exp = _NNABLA["build"]
    assert list(ps) == exp["names"]
    assert [list(v.shape) for v in ps.values()] == exp["shapes"]
    _close(ps["f/bn/mean"].d, exp["mean_before"])  # building does not update the statistics
    loss.forward()
    loss.backward()
    exp = _NNABLA["train"]
    _close(y.d, exp["y"])
    _close(x.g, exp["gx"])
    _close(z.g, exp["gz"])
    _close(ps["f/bn/beta"].g, exp["gb"])
    _close(ps["f/bn/gamma"].g, exp["gg"])
    _close(ps["f/bn/mean"].d, exp["mean"])
    _close(ps["f/bn/var"].d, exp["var"])
    loss.forward()
    _close(ps["f/bn/mean"].d, _NNABLA["train2"]["mean"])
    _close(ps["f/bn/var"].d, _NNABLA["train2"]["var"])
    yi = PF.fused_batch_normalization(x, z, batch_stat=False, name="f")
    yi.forward()
    _close(yi.d, _NNABLA["infer"]["y"])
    ys, m, v = PF.fused_batch_normalization(x, None, axes=[2], output_stat=True, name="g")
    loss2 = F.sum(ys * nn.Variable.from_numpy_array(cot)) + F.sum(m) * 2.0 + F.sum(v)
    loss2.forward()
    x.grad.zero()
    loss2.backward()
    exp = _NNABLA["stat"]
    for got, key in ((ys.d, "y"), (m.d, "m"), (v.d, "v"), (x.g, "gx")):
        _close(got, exp[key])


def test_fused_batch_normalization_function_is_relu_of_bn_plus_z() -> None:
    # independent: relu((x - mean) / sqrt(var + eps) * gamma + beta + z) with the batch's
    # statistics over axes 0 and 2
    rs = np.random.RandomState(2)
    xd, zd = rs.randn(4, 3, 2).astype(np.float32), rs.randn(4, 3, 2).astype(np.float32)
    beta = nn.Variable.from_numpy_array(rs.randn(1, 3, 1).astype(np.float32))
    gamma = nn.Variable.from_numpy_array(rs.randn(1, 3, 1).astype(np.float32))
    mean = nn.Variable.from_numpy_array(np.zeros((1, 3, 1), np.float32))
    var = nn.Variable.from_numpy_array(np.ones((1, 3, 1), np.float32))
    y = F.fused_batch_normalization(
        nn.Variable.from_numpy_array(xd), beta, gamma, mean, var, nn.Variable.from_numpy_array(zd)
    )
    y.forward()
    x64 = xd.astype(np.float64)
    mu = x64.mean(axis=(0, 2), keepdims=True)
    bn = (x64 - mu) / np.sqrt(x64.var(axis=(0, 2), keepdims=True) + 1e-5) * gamma.d + beta.d
    np.testing.assert_allclose(y.d, np.maximum(bn + zd, 0), rtol=1e-5, atol=1e-5)


def test_fused_batch_normalization_refuses_other_nonlinearities() -> None:
    # nnabla 1.39: RuntimeError 'Currently "relu" is only supported as a nonlinearity.'
    x = nn.Variable((2, 3))
    with pytest.raises(RuntimeError, match=r"nnabla PF\.fused_batch_normalization: nonlinearity"):
        PF.fused_batch_normalization(x, nonlinearity="sigmoid")
    c = F.constant(0.0, (1, 3))
    with pytest.raises(NotImplementedError, match=r"nnabla F\.fused_batch_normalization: "):
        F.fused_batch_normalization(x, c, c, c, c, nonlinearity="tanh")
