"""PF.mean_subtraction and F.mean_subtraction as nnabla 1.39's: parameters (names, shapes,
need_grad), the running mean and counter after each forward() (not after building, unless
auto_forward), the output and nnabla's approximate gradient dy (1 - 1/(t N)), the frozen mode,
base_axis, and errors.
"""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest

# nnabla 1.39's outputs of test_mean_subtraction_as_nnabla's run (t printed as float)
_NNABLA: dict[str, dict[str, Any]] = {
    "build": {
        "names": ["m/mean_subtraction/mean", "m/mean_subtraction/t"],
        "shapes": [[3, 2], [1]],
        "need_grad": [False, False],
        "mean": [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
        "t": [0.0],
    },
    "step0": {
        "y": [
            [
                [1.782573938369751, -1.9736037254333496],
                [0.48051008582115173, 0.5399054884910583],
                [1.8118995428085327, 1.22356379032135],
            ],
            [
                [-0.3322332203388214, -0.14107546210289001],
                [-0.4530341625213623, -1.2537071704864502],
                [-0.06879183650016785, -0.0894460678100586],
            ],
            [
                [0.7431100010871887, 0.683141827583313],
                [0.047424763441085815, 0.42478659749031067],
                [-0.7694326639175415, -1.6658129692077637],
            ],
            [
                [-2.193450927734375, 1.431537389755249],
                [-0.07490062713623047, 0.2890150547027588],
                [-0.973675012588501, 0.5316953659057617],
            ],
        ],
        "mean": [
            [0.4871806502342224, 0.5192379951477051],
            [-0.43475157022476196, -0.7270893454551697],
            [-0.2791203260421753, 0.24579504132270813],
        ],
        "t": [1.0],
        "gx": [
            [
                [-1.2104233503341675, -0.15955521166324615],
                [-0.6715999245643616, 0.2901768684387207],
                [-0.3831038475036621, -0.8854742050170898],
            ],
            [
                [-0.02113667130470276, 0.3212489187717438],
                [0.04988791421055794, 0.22685393691062927],
                [-0.47574156522750854, -0.27205586433410645],
            ],
            [
                [-0.5043452978134155, -0.2696648836135864],
                [-0.6098597049713135, -1.294711947441101],
                [0.13306960463523865, -0.3013356924057007],
            ],
            [
                [-1.2226487398147583, 0.34708669781684875],
                [-0.680473804473877, 0.03895904868841171],
                [0.5468178987503052, 0.09673719108104706],
            ],
        ],
    },
    "step1": {
        "y": [
            [
                [0.6566949486732483, -1.7369040250778198],
                [0.5416866540908813, -0.44785675406455994],
                [-0.591296911239624, -0.6574886441230774],
            ],
            [
                [-0.7942582964897156, -0.44591283798217773],
                [-1.0258047580718994, 1.1377798318862915],
                [0.7451627254486084, -1.6148827075958252],
            ],
            [
                [1.0055463314056396, 1.3938109874725342],
                [1.318124532699585, 0.05702851712703705],
                [-0.7912523746490479, 0.9758127331733704],
            ],
            [
                [-0.8858827352523804, 0.7203668355941772],
                [0.3476199507713318, 1.2135924100875854],
                [0.635866641998291, 0.6279342174530029],
            ],
        ],
        "mean": [
            [0.4827057719230652, 0.5020781755447388],
            [-0.1393449902534485, -0.23695334792137146],
            [-0.279500275850296, 0.0786389708518982],
        ],
        "t": [2.0],
        "gx": [
            [
                [0.009187517687678337, 1.5626367330551147],
                [0.11104807257652283, 0.35174068808555603],
                [1.647756814956665, -1.1792891025543213],
            ],
            [
                [-1.111674427986145, 0.8482221364974976],
                [-1.0264829397201538, 1.7006685733795166],
                [-0.36191660165786743, -0.6540229916572571],
            ],
            [
                [1.6825742721557617, 1.2954504489898682],
                [1.6341140270233154, 0.792789101600647],
                [-0.7535724639892578, 1.671306848526001],
            ],
            [
                [-0.23450295627117157, 0.7021493315696716],
                [0.8288455009460449, -0.13563382625579834],
                [0.5373194217681885, 0.8069308400154114],
            ],
        ],
    },
    "step2": {
        "y": [
            [
                [0.08270952105522156, -1.4081721305847168],
                [0.48751574754714966, 1.2468820810317993],
                [-0.4481326937675476, -0.2700894773006439],
            ],
            [
                [-0.7288695573806763, 1.540492296218872],
                [0.861572265625, 0.32795801758766174],
                [-0.5234808921813965, 0.4187942445278168],
            ],
            [
                [-0.9680486917495728, -0.27694088220596313],
                [-0.4465685188770294, 0.5969294309616089],
                [0.8230260014533997, -0.32875367999076843],
            ],
            [
                [0.10229068994522095, -1.4018330574035645],
                [-1.3019800186157227, 0.35988789796829224],
                [0.4131086468696594, 0.5145765542984009],
            ],
        ],
        "mean": [
            [0.2937160134315491, 0.30877143144607544],
            [-0.1892775595188141, 0.07950380444526672],
            [-0.24643515050411224, 0.12045492976903915],
        ],
        "t": [3.0],
        "gx": [
            [
                [2.184549570083618, 0.8657728433609009],
                [-0.8367537260055542, 1.023931622505188],
                [-1.20624840259552, -0.4231192171573639],
            ],
            [
                [-0.06255480647087097, 1.5705641508102417],
                [-0.6826919317245483, -0.7575686573982239],
                [-0.09024814516305923, -0.6081884503364563],
            ],
            [
                [1.0327496528625488, -0.9899372458457947],
                [-1.0518462657928467, -0.40133506059646606],
                [-0.45652976632118225, 1.76873779296875],
            ],
            [
                [0.8703024387359619, 0.08025530725717545],
                [-1.1233159303665161, 0.7739993929862976],
                [-0.9168640375137329, -1.4160401821136475],
            ],
        ],
    },
    "frozen": {
        "y": [
            [
                [0.08270952105522156, -1.4081721305847168],
                [0.48751574754714966, 1.2468820810317993],
                [-0.4481326937675476, -0.2700894773006439],
            ],
            [
                [-0.7288695573806763, 1.540492296218872],
                [0.861572265625, 0.32795801758766174],
                [-0.5234808921813965, 0.4187942445278168],
            ],
            [
                [-0.9680486917495728, -0.27694088220596313],
                [-0.4465685188770294, 0.5969294309616089],
                [0.8230260014533997, -0.32875367999076843],
            ],
            [
                [0.10229068994522095, -1.4018330574035645],
                [-1.3019800186157227, 0.35988789796829224],
                [0.4131086468696594, 0.5145765542984009],
            ],
        ],
        "t": [3.0],
        "gx": [
            [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]],
            [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]],
            [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]],
            [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]],
        ],
    },
    "axis2": {
        "names": ["mean_subtraction/mean", "mean_subtraction/t"],
        "mean": [0.12885423004627228, -0.409604549407959, -0.6016291975975037, -0.1477310061454773],
        "gx": [
            [
                [0.9166666865348816, 0.9166666865348816, 0.9166666865348816, 0.9166666865348816],
                [0.9166666865348816, 0.9166666865348816, 0.9166666865348816, 0.9166666865348816],
                [0.9166666865348816, 0.9166666865348816, 0.9166666865348816, 0.9166666865348816],
            ],
            [
                [0.9166666865348816, 0.9166666865348816, 0.9166666865348816, 0.9166666865348816],
                [0.9166666865348816, 0.9166666865348816, 0.9166666865348816, 0.9166666865348816],
                [0.9166666865348816, 0.9166666865348816, 0.9166666865348816, 0.9166666865348816],
            ],
        ],
    },
}


def _close(got: Any, exp: Any) -> None:
    np.testing.assert_allclose(np.asarray(got), np.asarray(exp, np.float32), rtol=1e-6, atol=1e-7)


def test_mean_subtraction_as_nnabla() -> None:
    # regression: PF.mean_subtraction raised AttributeError
    rs = np.random.RandomState(0)
    x = nn.Variable.from_numpy_array(rs.randn(4, 3, 2).astype(np.float32), need_grad=True)
    y = PF.mean_subtraction(x, name="m")
    ps = nn.get_parameters(grad_only=False)
    exp = _NNABLA["build"]
    assert list(ps) == exp["names"]
    assert [list(v.shape) for v in ps.values()] == exp["shapes"]
    assert [v.need_grad for v in ps.values()] == exp["need_grad"]
    _close(ps["m/mean_subtraction/mean"].d, exp["mean"])  # building updates nothing
    _close(ps["m/mean_subtraction/t"].d, exp["t"])
    for i in range(3):
        x.d = rs.randn(4, 3, 2).astype(np.float32)
        y.forward()
        x.grad.zero()
        y.backward(rs.randn(4, 3, 2).astype(np.float32))
        exp = _NNABLA[f"step{i}"]
        _close(y.d, exp["y"])
        _close(ps["m/mean_subtraction/mean"].d, exp["mean"])
        _close(ps["m/mean_subtraction/t"].d, exp["t"])
        _close(x.g, exp["gx"])
    y2 = PF.mean_subtraction(x, update_running_mean=False, name="m")
    y2.forward()
    x.grad.zero()
    y2.backward(np.full((4, 3, 2), 2.0, np.float32))
    exp = _NNABLA["frozen"]
    _close(y2.d, exp["y"])
    _close(ps["m/mean_subtraction/t"].d, exp["t"])
    _close(x.g, exp["gx"])


def test_mean_subtraction_base_axis_as_nnabla() -> None:
    rs = np.random.RandomState(0)
    for _ in range(7):  # (the draws of the run above: x, then x and dy at each of 3 steps)
        rs.randn(4, 3, 2)
    x3 = nn.Variable.from_numpy_array(rs.randn(2, 3, 4).astype(np.float32), need_grad=True)
    y3 = PF.mean_subtraction(x3, base_axis=2)
    y3.forward()
    y3.forward()
    x3.grad.zero()
    y3.backward(np.ones((2, 3, 4), np.float32))
    ps = nn.get_parameters(grad_only=False)
    exp = _NNABLA["axis2"]
    assert list(ps) == exp["names"]
    _close(ps["mean_subtraction/mean"].d, exp["mean"])
    _close(x3.g, exp["gx"])
    # independently: the same input twice, so the running mean is the batch mean over axes 0, 1,
    # t = 2 and dx = 1 - 1 / (2 * 6)
    np.testing.assert_allclose(ps["mean_subtraction/mean"].d, x3.d.mean(axis=(0, 1)), rtol=1e-6)
    np.testing.assert_allclose(x3.g, np.full((2, 3, 4), 1 - 1 / 12), rtol=1e-6)


def test_mean_subtraction_updates_at_build_under_auto_forward() -> None:
    # nnabla 1.39: t = 1 after the build, 2 after a forward()
    x = nn.Variable.from_numpy_array(np.array([[1.0, 2.0], [3.0, 6.0]], np.float32))
    with nn.auto_forward():
        y = PF.mean_subtraction(x)
    ps = nn.get_parameters(grad_only=False)
    assert ps["mean_subtraction/t"].d.tolist() == [1.0]
    np.testing.assert_array_equal(ps["mean_subtraction/mean"].d, [2.0, 4.0])
    np.testing.assert_array_equal(y.d, [[-1.0, -2.0], [1.0, 2.0]])
    y.forward()
    assert ps["mean_subtraction/t"].d.tolist() == [2.0]
    np.testing.assert_array_equal(ps["mean_subtraction/mean"].d, [2.0, 4.0])


def test_mean_subtraction_errors() -> None:
    x = nn.Variable((2, 3))
    with pytest.raises(ValueError, match=r"nnabla F\.mean_subtraction: mean must have shape"):
        F.mean_subtraction(x, nn.Variable((2,)), nn.Variable((1,)))
    with pytest.raises(ValueError, match=r"nnabla F\.mean_subtraction: t must hold one value"):
        F.mean_subtraction(x, nn.Variable((3,)), nn.Variable((2,)))
    with pytest.raises(ValueError, match=r"nnabla PF\.mean_subtraction: base_axis=3"):
        PF.mean_subtraction(x, base_axis=3)
