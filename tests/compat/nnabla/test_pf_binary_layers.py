"""PF/F binary_connect_affine, binary_connect_convolution, binary_weight_affine and
binary_weight_convolution as nnabla 1.39's: the parameters (W, Wb, alpha, b: names, shapes,
need_grad, Wb's second Glorot draw as built), the binary weights and scales written by forward(),
outputs and straight-through gradients; an independent numpy transcription.
"""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest

# nnabla 1.39's outputs of _run (arrays: their first 8 values, raveled; Wb's gradient left out:
# nnabla's BinaryConnect leaves the weight's gradient there too, gradhub does not)
_NNABLA: dict[str, dict[str, Any]] = {
    "binary_connect_affine": {
        "names": ["L/bicon_affine/W", "L/bicon_affine/Wb", "L/bicon_affine/b"],
        "need_grad": [True, False, True],
        "shapes": [[6, 3], [6, 3], [3]],
        "Wb_build": [
            0.7041564583778381,
            -0.7758362889289856,
            0.1641957014799118,
            0.7350583672523499,
            -0.44041356444358826,
            0.07918370515108109,
            0.668103814125061,
            -0.5990318059921265,
        ],
        "loss": 85.41224670410156,
        "gx": [
            -5.002364158630371,
            -12.056023597717285,
            25.590572357177734,
            -25.590572357177734,
            12.056023597717285,
            25.590572357177734,
            -7.282843112945557,
            4.800039291381836,
        ],
        "y": [
            3.383636951446533,
            -4.264596939086914,
            -5.147051811218262,
            1.822956919670105,
            -0.6207010746002197,
            1.1977636814117432,
            0.7036311626434326,
            -1.7994699478149414,
        ],
        "d_W": [
            -0.6918856501579285,
            0.45710548758506775,
            -0.10057730227708817,
            0.3649170994758606,
            0.7805535793304443,
            0.06286349147558212,
            0.0018297095084562898,
            -0.6988375782966614,
        ],
        "g_W": [
            -8.33445930480957,
            -3.010955572128296,
            -16.746185302734375,
            -0.34633946418762207,
            2.096323251724243,
            5.29263162612915,
            9.923845291137695,
            -16.05615234375,
        ],
        "d_Wb": [-1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0, -1.0],
        "d_b": [0.0, 0.0, 0.0],
        "g_b": [16.783737182617188, -12.265915870666504, -2.913862705230713],
    },
    "binary_weight_affine": {
        "names": ["L/bwn_affine/W", "L/bwn_affine/Wb", "L/bwn_affine/alpha", "L/bwn_affine/b"],
        "need_grad": [True, False, False, True],
        "shapes": [[6, 3], [6, 3], [3], [3]],
        "Wb_build": [
            0.7041564583778381,
            -0.7758362889289856,
            0.1641957014799118,
            0.7350583672523499,
            -0.44041356444358826,
            0.07918370515108109,
            0.668103814125061,
            -0.5990318059921265,
        ],
        "loss": 7.0213093757629395,
        "gx": [
            0.9609286189079285,
            0.8295709490776062,
            -0.8175771832466125,
            0.8175771832466125,
            -0.8295709490776062,
            -0.8175771832466125,
            0.33080437779426575,
            -0.49876341223716736,
        ],
        "y": [
            0.00935981422662735,
            0.7885253429412842,
            -0.14710557460784912,
            -0.32939407229423523,
            -0.07396816462278366,
            -0.4181511700153351,
            -0.21883152425289154,
            2.250541925430298,
        ],
        "d_W": [
            -0.6918856501579285,
            0.45710548758506775,
            -0.10057730227708817,
            0.3649170994758606,
            0.7805535793304443,
            0.06286349147558212,
            0.0018297095084562898,
            -0.6988375782966614,
        ],
        "g_W": [
            -0.6814805269241333,
            2.326042413711548,
            -0.6301654577255249,
            -0.47648730874061584,
            7.162569046020508,
            2.578167676925659,
            -0.20079614222049713,
            -0.3443687856197357,
        ],
        "d_Wb": [-1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0, -1.0],
        "d_alpha": [0.3203516900539398, 0.5676734447479248, 0.24362003803253174],
        "g_alpha": [0.0, 0.0, 0.0],
        "d_b": [0.0, 0.0, 0.0],
        "g_b": [-1.9827592372894287, 5.753929138183594, 0.43472009897232056],
    },
    "binary_connect_convolution": {
        "names": ["L/bicon_conv/W", "L/bicon_conv/Wb", "L/bicon_conv/b"],
        "need_grad": [True, False, True],
        "shapes": [[4, 3, 3, 3], [4, 3, 3, 3], [4]],
        "Wb_build": [
            -0.3041977882385254,
            -0.04921855032444,
            -0.02275281958281994,
            -0.27435165643692017,
            0.025578638538718224,
            0.06651755422353745,
            0.20272570848464966,
            0.2726905941963196,
        ],
        "loss": 3963.5576171875,
        "gx": [
            -30.125579833984375,
            -5.322741508483887,
            -26.23672103881836,
            -18.131778717041016,
            -25.8916015625,
            -56.140625,
            -73.45612335205078,
            43.42928695678711,
        ],
        "y": [
            3.1386032104492188,
            2.193140983581543,
            -2.5656962394714355,
            4.2988786697387695,
            -5.968904495239258,
            -2.995206594467163,
            -4.9871649742126465,
            -0.8291609287261963,
        ],
        "d_W": [
            -0.26150819659233093,
            0.17276963591575623,
            -0.038014646619558334,
            0.13792569935321808,
            0.29502153396606445,
            0.023760167881846428,
            0.0006915651611052454,
            -0.26413577795028687,
        ],
        "g_W": [
            34.359683990478516,
            103.14227294921875,
            20.41115951538086,
            113.84510803222656,
            175.33505249023438,
            163.07046508789062,
            12.198675155639648,
            -91.48399353027344,
        ],
        "d_Wb": [-1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0, -1.0],
        "d_b": [0.0, 0.0, 0.0, 0.0],
        "g_b": [-45.49763488769531, -27.872852325439453, -35.1712760925293, 43.25051498413086],
    },
    "binary_weight_convolution": {
        "names": ["L/bwn_conv/W", "L/bwn_conv/Wb", "L/bwn_conv/alpha", "L/bwn_conv/b"],
        "need_grad": [True, False, False, True],
        "shapes": [[4, 3, 3, 3], [4, 3, 3, 3], [4], [4]],
        "Wb_build": [
            -0.3041977882385254,
            -0.04921855032444,
            -0.02275281958281994,
            -0.27435165643692017,
            0.025578638538718224,
            0.06651755422353745,
            0.20272570848464966,
            0.2726905941963196,
        ],
        "loss": 77.03147888183594,
        "gx": [
            0.7335079908370972,
            -0.15698295831680298,
            0.7418324947357178,
            -0.5760125517845154,
            -0.779263973236084,
            -1.293343186378479,
            -0.1945357620716095,
            0.5093022584915161,
        ],
        "y": [
            0.34156638383865356,
            -0.15115565061569214,
            0.5764359831809998,
            0.11615318059921265,
            -0.38934874534606934,
            -0.2960261106491089,
            -0.9994232654571533,
            1.5463335514068604,
        ],
        "d_W": [
            -0.26150819659233093,
            0.17276963591575623,
            -0.038014646619558334,
            0.13792569935321808,
            0.29502153396606445,
            0.023760167881846428,
            0.0006915651611052454,
            -0.26413577795028687,
        ],
        "g_W": [
            -19.766189575195312,
            11.742111206054688,
            -15.44247055053711,
            4.241851806640625,
            12.242658615112305,
            11.160197257995605,
            17.919055938720703,
            -25.757667541503906,
        ],
        "d_Wb": [-1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0, -1.0],
        "d_alpha": [
            0.15390270948410034,
            0.09677771478891373,
            0.1546507030725479,
            0.14463123679161072,
        ],
        "g_alpha": [0.0, 0.0, 0.0, 0.0],
        "d_b": [0.0, 0.0, 0.0, 0.0],
        "g_b": [-1.631840705871582, 8.311674118041992, -10.162102699279785, -7.226140022277832],
    },
}

_KINDS = list(_NNABLA)


def _run(kind: str, rs: Any) -> tuple[dict[str, Any], Any, Any, Any]:
    conv = kind.endswith("convolution")
    shape = (2, 3, 5, 5) if conv else (4, 6)
    x = nn.Variable.from_numpy_array(rs.randn(*shape).astype(np.float32), need_grad=True)
    fn = getattr(PF, kind)
    if conv:
        y = fn(
            x, 4, (3, 3), pad=(1, 1), rng=np.random.RandomState(7), quantize_zero_to=0.5, name="L"
        )
    else:
        y = fn(x, 3, rng=np.random.RandomState(7), name="L")
    ps = nn.get_parameters(grad_only=False)
    res: dict[str, Any] = {
        "names": list(ps),
        "need_grad": [v.need_grad for v in ps.values()],
        "shapes": [list(v.shape) for v in ps.values()],
        "Wb_build": ps[next(k for k in ps if k.endswith("/Wb"))].d.copy(),
    }
    loss = F.sum(y * y)
    loss.forward()
    loss.backward()
    res.update(loss=float(loss.d), gx=x.g, y=y.d)
    for k, v in ps.items():
        res["d_" + k.split("/")[-1]] = v.d
        res["g_" + k.split("/")[-1]] = v.g
    return res, x, y, ps


def test_binary_layers_as_nnabla() -> None:
    # regression: the binary layers raised AttributeError
    rs = np.random.RandomState(5)
    for kind in _KINDS:
        nn.clear_parameters()
        got, _, _, _ = _run(kind, rs)
        exp = _NNABLA[kind]
        for k in ("names", "need_grad", "shapes"):
            assert got[k] == exp[k], (kind, k)
        assert got["loss"] == pytest.approx(exp["loss"], rel=1e-5), kind
        for k, v in exp.items():
            if isinstance(v, list) and k not in ("names", "need_grad", "shapes"):
                want = np.asarray(v, np.float32)
                np.testing.assert_allclose(
                    np.asarray(got[k]).ravel()[: want.size], want, rtol=1e-5, atol=1e-5, err_msg=k
                )
        assert not got["g_Wb"].any()  # (nnabla's BinaryConnect leaves W's gradient there too)


def test_binary_weights_follow_the_formulas() -> None:
    # independent: Wb = sign(W) (zero -> quantize_zero_to), alpha = mean |W| over the inputs,
    # y = x (alpha Wb) + b, dW = x^T dy (straight through), dx = dy (alpha Wb)^T
    rs = np.random.RandomState(0)
    xd = rs.randn(3, 4).astype(np.float32)
    wd = rs.randn(4, 2).astype(np.float32)
    wd[0, 0] = 0.0
    bd = rs.randn(2).astype(np.float32)
    g = rs.randn(3, 2).astype(np.float32)
    sb = np.where(wd > 0, 1.0, np.where(wd < 0, -1.0, 0.5)).astype(np.float32)
    for scaled in (False, True):
        x = nn.Variable.from_numpy_array(xd, need_grad=True)
        w = nn.Variable.from_numpy_array(wd, need_grad=True)
        wb = nn.Variable((4, 2))
        b = nn.Variable.from_numpy_array(bd, need_grad=True)
        if scaled:
            al = nn.Variable((2,))
            y = F.binary_weight_affine(x, w, wb, al, b, 1, 0.5)
            alpha = np.abs(wd).mean(0)
        else:
            y = F.binary_connect_affine(x, w, wb, b, 1, 0.5)
            alpha = np.ones(2, np.float32)
        y.forward()
        y.backward(g)
        np.testing.assert_array_equal(wb.d, sb)
        if scaled:
            np.testing.assert_allclose(al.d, alpha, rtol=1e-6)
        np.testing.assert_allclose(y.d, xd @ (sb * alpha) + bd, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(w.g, xd.T @ g, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(x.g, g @ (sb * alpha).T, rtol=1e-5, atol=1e-6)


def test_binary_layer_errors() -> None:
    x, w = nn.Variable((3, 4)), nn.Variable((4, 2))
    with pytest.raises(ValueError, match=r"nnabla F\.binary_connect_affine: binary_weight must"):
        F.binary_connect_affine(x, w, nn.Variable((2, 4)))
    with pytest.raises(ValueError, match=r"nnabla F\.binary_weight_affine: alpha must have shape"):
        F.binary_weight_affine(x, w, nn.Variable((4, 2)), nn.Variable((4,)))
