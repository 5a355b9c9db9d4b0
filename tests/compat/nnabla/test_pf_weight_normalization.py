"""F.tensor_normalization, F.weight_normalization and PF.weight_normalization as nnabla 1.39's
(values, statistics and gradients for the same inputs; the scale's name, shape, initial value and
need_grad; used as apply_w of PF.affine), and the scope nnabla gives the parameters that apply_w
and apply_b create (``fc/affine/wn/g``).
"""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest

# nnabla 1.39's outputs of the runs below
_NNABLA: dict[str, dict[str, Any]] = {
    "tn_ax1": {
        "y": [
            [
                [2.180176019668579, 1.4220492839813232, 3.945587158203125, 1.095363736152649],
                [
                    -0.27468574047088623,
                    -2.3525118827819824,
                    -0.6833920478820801,
                    1.5369726419448853,
                ],
                [0.4518626928329468, 3.436471462249756, -0.12584567070007324, 1.299480676651001],
            ],
            [
                [1.5483710765838623, 1.704958438873291, 4.217040061950684, 1.6733372211456299],
                [-0.6106685400009155, 3.2266409397125244, 1.759255290031433, 0.5527511835098267],
                [3.104705333709717, 1.0122202634811401, 0.7995071411132812, 3.560459613800049],
            ],
        ],
        "m": [[[0.024963639676570892], [-0.04280514642596245], [-0.28276973962783813]]],
        "v": [[[0.4341171681880951], [0.8419784903526306], [0.4542841911315918]]],
        "gx": [
            [
                [0.4379047751426697, -1.792529582977295, -0.23712888360023499, 3.0073258876800537],
                [-2.981135845184326, 0.32915055751800537, 2.678378105163574, 0.7510460615158081],
                [-0.6501988172531128, -0.7430583238601685, 0.698910117149353, -1.647707462310791],
            ],
            [
                [1.4318830966949463, -0.7807561159133911, 0.14194422960281372, -2.1587162017822266],
                [-1.5757886171340942, 1.3863321542739868, -1.2130751609802246, 0.5394819974899292],
                [-0.9532595872879028, 2.8945376873016357, -1.0418286323547363, 0.8770655393600464],
            ],
        ],
        "gb": [[[-3.1042802333831787], [4.2737860679626465], [-1.0943684577941895]]],
        "gg": [[[-2.2902798652648926], [0.4930436313152313], [-4.414333343505859]]],
    },
    "tn_ax01": {
        "y": [
            [
                [-0.017551017925143242, 0.6689561605453491, -1.616185188293457, 0.9647800326347351],
                [0.1218784973025322, -1.3790967464447021, -0.17336176335811615, 1.4305799007415771],
                [0.6011077165603638, -1.6039146184921265, 1.027917504310608, -0.025110527873039246],
            ],
            [
                [0.6598639488220215, 0.5197709798812866, -1.7276962995529175, 0.5480614900588989],
                [-1.2928110361099243, 1.399442195892334, 0.3699256479740143, -0.4765566885471344],
                [-0.8025245666503906, 0.9014845490455627, 1.0747069120407104, -1.1736667156219482],
            ],
        ],
        "m": [
            [[0.062050655484199524], [-0.5130025744438171], [-0.0711359828710556]],
            [[-0.012123391032218933], [0.42739227414131165], [-0.49440354108810425]],
        ],
        "v": [
            [[0.4275050163269043], [0.6027476787567139], [0.44933634996414185]],
            [[0.4379783868789673], [0.6390380859375], [0.3696543276309967]],
        ],
        "gx": [
            [
                [
                    -0.059038400650024414,
                    2.507850170135498,
                    -0.7219216823577881,
                    -1.6027888059616089,
                ],
                [-2.4985125064849854, -0.7463471293449402, 1.4640809297561646, 0.7547734975814819],
                [
                    0.38627034425735474,
                    -0.9172362685203552,
                    -0.34485894441604614,
                    0.7335530519485474,
                ],
            ],
            [
                [-1.5056476593017578, 0.4554669260978699, -0.6660698652267456, 1.6920037269592285],
                [-0.5156595706939697, 1.0943421125411987, -0.5503528714179993, 0.8264546394348145],
                [0.44776326417922974, -1.7450652122497559, 1.5561221837997437, -1.2476273775100708],
            ],
        ],
    },
    "tn_ax2int": {
        "y": [
            [
                [0.4900653660297394, 0.5250973105430603, -1.0345619916915894, 0.9903231263160706],
                [-0.4267880320549011, -1.4661680459976196, -0.5724164247512817, 0.8405247926712036],
                [1.0409016609191895, -1.0486236810684204, 1.1083606481552124, -0.24179735779762268],
            ],
            [
                [1.2224140167236328, 0.3649020791053772, -1.2481235265731812, 0.4502335786819458],
                [-0.7955639362335205, 1.5252805948257446, 1.2472846508026123, -0.03036162629723549],
                [-1.5310291051864624, 0.0995115265250206, 0.4994567930698395, -2.008922576904297],
            ],
        ],
        "m": [
            [
                [
                    -0.20004938542842865,
                    -0.049739520996809006,
                    -0.21642129123210907,
                    0.06539521366357803,
                ]
            ]
        ],
        "v": [[[0.2605125904083252, 1.0948657989501953, 0.5666823983192444, 0.4013894498348236]]],
        "gx": [
            [
                [
                    0.12597733736038208,
                    0.45250651240348816,
                    -1.0131099224090576,
                    -3.3098514080047607,
                ],
                [-1.7391159534454346, -0.00202217698097229, 2.073681116104126, 1.761892557144165],
                [1.4460606575012207, 0.11297893524169922, -0.8356059789657593, 0.48918020725250244],
            ],
            [
                [-0.4554210305213928, -0.13388310372829437, -1.4256318807601929, 1.355381727218628],
                [-0.5624158978462219, 1.452581524848938, 0.5354092717170715, 1.1279871463775635],
                [0.7848158478736877, -1.9816406965255737, 0.2324150651693344, -1.293799877166748],
            ],
        ],
    },
    "fwn": {
        "y": [
            [
                [-0.3827822208404541, 0.08818763494491577],
                [-0.8220222592353821, 0.3141091465950012],
                [0.23103785514831543, 0.13616551458835602],
                [0.4978569746017456, 0.07083006203174591],
            ],
            [
                [0.03316473215818405, -0.35993778705596924],
                [0.16781239211559296, -0.5431695580482483],
                [0.5764033794403076, -0.2935202121734619],
                [0.03185644373297691, 0.40005773305892944],
            ],
            [
                [0.5722453594207764, 0.11927730590105057],
                [0.7793186902999878, -0.030812375247478485],
                [0.3604094982147217, 0.008651797659695148],
                [-0.1820162981748581, 0.08649557083845139],
            ],
        ],
        "gw": [
            [
                [0.5762477517127991, 0.020873162895441055],
                [0.9074741005897522, 0.7522703409194946],
                [-0.2293362021446228, -0.25587761402130127],
                [0.07405909895896912, -0.019252387806773186],
            ],
            [
                [0.029247092083096504, -0.36697351932525635],
                [0.05823473632335663, 0.16965338587760925],
                [0.2217673659324646, 0.001859217882156372],
                [-0.012765253894031048, -0.1081375703215599],
            ],
            [
                [-0.053961753845214844, 0.1324223130941391],
                [0.7360354065895081, -0.026056014001369476],
                [0.027606382966041565, -0.005150788463652134],
                [-0.07888971269130707, -0.02462226338684559],
            ],
        ],
        "gg": [-1.4670559167861938, -0.26747024059295654, 0.9017030596733093, 0.6901969313621521],
    },
    "pfwn": {
        "names": ["fc/affine/W", "fc/affine/wn/g", "fc/affine/b"],
        "shapes": [[6.0, 3.0], [3.0], [3.0]],
        "h": [
            [1.7739872932434082, -0.9598838090896606, 0.7272202968597412],
            [2.530223846435547, -0.9763345718383789, 2.040915012359619],
            [-1.2601332664489746, -1.524099349975586, 0.4364238381385803],
            [-1.9670265913009644, -1.9001514911651611, -0.8227870464324951],
            [0.7199702262878418, 0.6420215368270874, 0.6946746110916138],
        ],
        "gW": [
            [0.9302917122840881, 0.1570015549659729, 1.478332281112671],
            [-0.24391615390777588, -0.8829207420349121, -0.040456026792526245],
            [-0.5945148468017578, -1.4652682542800903, 0.40786212682724],
            [-0.14110343158245087, -0.38586458563804626, 0.6895710229873657],
            [0.713640034198761, 1.7992011308670044, 1.1507365703582764],
            [-0.35589346289634705, 0.04000923037528992, -1.951208472251892],
        ],
        "gg": [0.16185277700424194, -0.6291640400886536, 0.8460554480552673],
        "gx": [
            [
                -0.08984678983688354,
                -0.6079239845275879,
                -0.6149750351905823,
                0.10930231213569641,
                -0.05631902813911438,
                0.4702010452747345,
            ],
            [
                -0.019148632884025574,
                -0.29937806725502014,
                -0.22673091292381287,
                -0.20282456278800964,
                -0.28819072246551514,
                0.3036802411079407,
            ],
            [
                -0.22558797895908356,
                -0.6479834318161011,
                -0.6725051403045654,
                0.3502596616744995,
                0.3429943323135376,
                0.3717515170574188,
            ],
            [
                -0.06367302685976028,
                -0.3442402482032776,
                -0.41352415084838867,
                0.26963570713996887,
                0.16727760434150696,
                0.21235336363315582,
            ],
            [
                -0.49761101603507996,
                -1.0610222816467285,
                -0.7957851886749268,
                -0.1310335397720337,
                0.15219396352767944,
                0.6892370581626892,
            ],
        ],
    },
    "pfwn_fix": {
        "names": ["wn/g"],
        "g0": [3.1105148792266846, 2.7527403831481934, 2.2271249294281006],
        "gg": [0.0, 0.0, 0.0],
        "gw": [
            [
                [-0.00016105175018310547, 3.7103891372680664e-05],
                [-0.0003008842468261719, 0.00011491775512695312],
                [0.00010526180267333984, 6.216764450073242e-05],
                [0.0005121231079101562, 7.277727127075195e-05],
            ],
            [
                [1.780688762664795e-05, -0.0001933574676513672],
                [7.838010787963867e-05, -0.0002537965774536133],
                [0.00033545494079589844, -0.00017082691192626953],
                [4.1812658309936523e-05, 0.0005249977111816406],
            ],
            [
                [0.00046944618225097656, 9.784102439880371e-05],
                [0.0005567073822021484, -2.199411392211914e-05],
                [0.0003205537796020508, 7.696449756622314e-06],
                [-0.0003648996353149414, 0.00017344951629638672],
            ],
        ],
        "need_grad": True,
    },
}


def _close(got: Any, exp: Any, atol: float = 1e-6) -> None:
    # float32 rounding: nnabla's kernels round in another order; the gradients through the
    # normalization subtract close numbers (atol)
    np.testing.assert_allclose(np.asarray(got), np.asarray(exp, np.float32), rtol=1e-5, atol=atol)


def _data() -> dict[str, np.ndarray]:
    """The arrays of the nnabla run, drawn in its order."""
    rs = np.random.RandomState(4)
    d = {k: rs.randn(*shape).astype(np.float32) for k, shape in _SHAPES[:4]}
    d["wd"] = rs.randn(3, 4, 2).astype(np.float32)
    d["g0"] = rs.rand(4).astype(np.float32) + 0.5
    d["cot_w"] = rs.randn(3, 4, 2).astype(np.float32)
    d["x_fc"] = rs.randn(5, 6).astype(np.float32)
    return d


_SHAPES = [("xd", (2, 3, 4)), ("bd", (1, 3, 1)), ("gd", (1, 3, 1)), ("cot", (2, 3, 4))]


@pytest.mark.parametrize(
    ("tag", "axes", "with_bg"), [("ax1", [1], True), ("ax01", [0, 1], False), ("ax2int", 2, False)]
)
def test_tensor_normalization_as_nnabla(tag: str, axes: Any, with_bg: bool) -> None:
    # regression: F.tensor_normalization raised AttributeError
    d = _data()
    xd, bd, gd, cot = d["xd"], d["bd"], d["gd"], d["cot"]
    x = nn.Variable.from_numpy_array(xd, need_grad=True)
    bg: dict[str, Any] = {}
    if with_bg:
        bg = {
            "beta": nn.Variable.from_numpy_array(bd, need_grad=True),
            "gamma": nn.Variable.from_numpy_array(gd, need_grad=True),
        }
    y, m, v = F.tensor_normalization(x, axes, eps=1e-3, output_stat=True, **bg)
    loss = F.sum(y * nn.Variable.from_numpy_array(cot)) + F.sum(m * m) + F.sum(v)
    loss.forward()
    loss.backward()
    exp = _NNABLA["tn_" + tag]
    for got, key in ((y.d, "y"), (m.d, "m"), (v.d, "v"), (x.g, "gx")):
        _close(got, exp[key])
    if with_bg:
        _close(bg["beta"].g, exp["gb"])
        _close(bg["gamma"].g, exp["gg"])


def test_tensor_normalization_statistics_formula() -> None:
    # independent: mean and biased variance over the axes not in `axes`
    xd = _data()["xd"]
    y = F.tensor_normalization(nn.Variable.from_numpy_array(xd), [0, 2], eps=1e-5)
    y.forward()
    x64 = xd.astype(np.float64)
    mu = x64.mean(axis=1, keepdims=True)
    ref = (x64 - mu) / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y.d, ref, rtol=1e-5, atol=1e-5)


def test_weight_normalization_function_as_nnabla() -> None:
    # regression: F.weight_normalization raised AttributeError
    d = _data()
    w = nn.Variable.from_numpy_array(d["wd"], need_grad=True)
    g = nn.Variable.from_numpy_array(d["g0"], need_grad=True)
    y = F.weight_normalization(w, g, dim=1, eps=0.5)
    loss = F.sum(y * y * nn.Variable.from_numpy_array(d["cot_w"]))
    loss.forward()
    loss.backward()
    exp = _NNABLA["fwn"]
    _close(y.d, exp["y"])
    _close(w.g, exp["gw"])
    _close(g.g, exp["gg"])
    with pytest.raises(ValueError, match=r"nnabla F.weight_normalization: dim=3 is out of range"):
        F.weight_normalization(w, g, dim=3)
    with pytest.raises(
        ValueError, match=r"nnabla F.weight_normalization: g must have shape \(3,\)"
    ):
        F.weight_normalization(w, g, dim=0)


def test_weight_normalization_in_apply_w_as_nnabla() -> None:
    # regression: PF.weight_normalization raised AttributeError; the scale is created in the
    # layer's scope, as nnabla's (fc/affine/wn/g)
    x = nn.Variable.from_numpy_array(_data()["x_fc"], need_grad=True)
    h = PF.affine(
        x,
        3,
        rng=np.random.RandomState(9),
        apply_w=lambda w: PF.weight_normalization(w, dim=1),
        name="fc",
    )
    loss = F.sum(F.tanh(h))
    loss.forward()
    loss.backward()
    ps = nn.get_parameters()
    exp = _NNABLA["pfwn"]
    # nnabla creates fc/affine/wn/g between W and b; gradhub's affine makes W and b first
    assert sorted(ps) == sorted(exp["names"])
    assert [list(ps[k].shape) for k in exp["names"]] == exp["shapes"]
    _close(h.d, exp["h"])
    _close(ps["fc/affine/W"].g, exp["gW"])
    _close(ps["fc/affine/wn/g"].g, exp["gg"])
    _close(x.g, exp["gx"])


def test_weight_normalization_fix_parameters_as_nnabla() -> None:
    wd = _data()["wd"]
    w = nn.Variable.from_numpy_array(wd, need_grad=True)
    y = PF.weight_normalization(w, dim=0, eps=1e-3, fix_parameters=True)
    loss = F.sum(y * y)
    loss.forward()
    loss.backward()
    ps = nn.get_parameters(grad_only=False)
    exp = _NNABLA["pfwn_fix"]
    assert list(ps) == exp["names"]
    assert ps["wn/g"].need_grad == exp["need_grad"]
    # the initial scale: sqrt(sum w^2 + eps) over the axes but dim (y = w at first)
    _close(ps["wn/g"].d, exp["g0"])
    ref = np.sqrt((wd.astype(np.float64) ** 2).sum(axis=(1, 2)) + 1e-3)
    np.testing.assert_allclose(ps["wn/g"].d, ref, rtol=1e-6)
    _close(ps["wn/g"].g, exp["gg"])
    # (here the gradient is a difference of terms near 1 that cancel to ~1e-4: both are
    # within a few float32 ulps of 1 of the exact value)
    _close(w.g, exp["gw"], atol=5e-7)


def test_apply_w_and_apply_b_parameters_get_the_layer_scope() -> None:
    # nnabla 1.39's names for these calls
    x = nn.Variable((2, 3, 5, 5))
    PF.convolution(x, 4, (3, 3), apply_w=lambda w: PF.weight_normalization(w), name="c")
    PF.deconvolution(x, 4, (3, 3), apply_w=lambda w: PF.weight_normalization(w, dim=1))
    PF.embed(nn.Variable((2, 3)), 5, 4, apply_w=lambda w: PF.weight_normalization(w, 1), name="e")
    PF.affine(nn.Variable((2, 3)), 4, apply_b=lambda b: PF.prelu(b, base_axis=0), name="a")
    assert sorted(nn.get_parameters()) == [
        "a/affine/W",
        "a/affine/b",
        "a/affine/prelu/slope",
        "c/conv/W",
        "c/conv/b",
        "c/conv/wn/g",
        "deconv/W",
        "deconv/b",
        "deconv/wn/g",
        "e/embed/W",
        "e/embed/wn/g",
    ]
