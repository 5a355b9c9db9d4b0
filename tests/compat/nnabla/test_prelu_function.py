"""nnabla's F.prelu / PF.prelu as one function, PReLU (y.parent with the inputs x0, x1 and
info.args {"base_axis": ...}), with nnabla 1.39's values and gradients (the gradient at 0 is the
incoming one, as nnabla's), second derivatives, and the slope shapes nnabla refuses."""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest
from gradhub.testing import gradcheck

# nnabla 1.39: /tmp/probe_D/prelu_dump.py (x0, g0 = RandomState(1).randn(3, 2, 2, 2) twice, then
# the slopes RandomState(1).rand(*shape) per case, in this order)
_NNABLA = {
    "1 ()": {
        "gw": 1.015885353088379,
        "gx": [
            [
                [
                    [0.9008560180664062, -0.2719027101993561],
                    [-0.04887060075998306, -0.3721337914466858],
                ],
                [
                    [-0.2678880989551544, 0.21091009676456451],
                    [-0.6916608214378357, -0.15777969360351562],
                ],
            ],
            [
                [
                    [-0.6871727108955383, -0.3361186981201172],
                    [-0.6712461113929749, -0.00503640016540885],
                ],
                [
                    [-0.4443283975124359, 0.09322170168161392],
                    [1.6598021984100342, 0.2950938045978546],
                ],
            ],
            [
                [
                    [-0.076288603246212, -0.3529894948005676],
                    [-0.7471582889556885, 1.6924545764923096],
                ],
                [
                    [0.020205099135637283, -0.6369956135749817],
                    [0.19091549515724182, 2.100255250930786],
                ],
            ],
        ],
        "w": 0.39767682552337646,
        "y": [
            [
                [
                    [1.6243454217910767, -0.2432813048362732],
                    [-0.21004170179367065, -0.4266948103904724],
                ],
                [
                    [0.8654075860977173, -0.91526859998703],
                    [1.744811773300171, -0.30271440744400024],
                ],
            ],
            [
                [
                    [0.31903910636901855, -0.0991687998175621],
                    [1.4621078968048096, -0.8192701935768127],
                ],
                [
                    [-0.12821780145168304, -0.15272949635982513],
                    [1.1337693929672241, -0.43740129470825195],
                ],
            ],
            [
                [
                    [-0.06857070326805115, -0.3491038978099823],
                    [0.04221370071172714, 0.5828151702880859],
                ],
                [[-0.437690794467926, 1.144723653793335], [0.9015907049179077, 0.5024943947792053]],
            ],
        ],
    },
    "1 (1,)": {
        "gw": [1.015885353088379],
        "gx": [
            [
                [
                    [0.9008560180664062, -0.11305730044841766],
                    [-0.020320400595664978, -0.15473340451717377],
                ],
                [
                    [-0.2678880989551544, 0.08769650012254715],
                    [-0.6916608214378357, -0.06560490280389786],
                ],
            ],
            [
                [
                    [-0.6871727108955383, -0.13975830376148224],
                    [-0.6712461113929749, -0.002094099996611476],
                ],
                [
                    [-0.18475200235843658, 0.038761600852012634],
                    [1.6598021984100342, 0.12270010262727737],
                ],
            ],
            [
                [
                    [-0.03172079846262932, -0.14677320420742035],
                    [-0.7471582889556885, 1.6924545764923096],
                ],
                [
                    [0.008401299826800823, -0.6369956135749817],
                    [0.19091549515724182, 2.100255250930786],
                ],
            ],
        ],
        "w": [0.1653541922569275],
        "y": [
            [
                [
                    [1.6243454217910767, -0.10115650296211243],
                    [-0.08733540028333664, -0.17741979658603668],
                ],
                [
                    [0.8654075860977173, -0.38056910037994385],
                    [1.744811773300171, -0.1258687973022461],
                ],
            ],
            [
                [
                    [0.31903910636901855, -0.04123440012335777],
                    [1.4621078968048096, -0.3406529128551483],
                ],
                [
                    [-0.053312998265028, -0.06350500136613846],
                    [1.1337693929672241, -0.18187159299850464],
                ],
            ],
            [
                [
                    [-0.02851169928908348, -0.1451576054096222],
                    [0.04221370071172714, 0.5828151702880859],
                ],
                [
                    [-0.18199199438095093, 1.144723653793335],
                    [0.9015907049179077, 0.5024943947792053],
                ],
            ],
        ],
    },
    "1 (2,)": {
        "gw": [2.536383628845215, -1.520498275756836],
        "gx": [
            [
                [
                    [0.9008560180664062, -0.6458457708358765],
                    [-0.11608149856328964, -0.8839228749275208],
                ],
                [
                    [-0.2678880989551544, 0.3110826909542084],
                    [-0.6916608214378357, -0.23271779716014862],
                ],
            ],
            [
                [
                    [-0.6871727108955383, -0.7983767986297607],
                    [-0.6712461113929749, -0.011962899938225746],
                ],
                [
                    [-0.6553640961647034, 0.1374976933002472],
                    [1.6598021984100342, 0.43524980545043945],
                ],
            ],
            [
                [
                    [-0.18120679259300232, -0.8384495973587036],
                    [-0.7471582889556885, 1.6924545764923096],
                ],
                [
                    [0.029801499098539352, -0.6369956135749817],
                    [0.19091549515724182, 2.100255250930786],
                ],
            ],
        ],
        "w": [0.9445947408676147, 0.5865550637245178],
        "y": [
            [
                [
                    [1.6243454217910767, -0.5778617858886719],
                    [-0.49890831112861633, -1.0135204792022705],
                ],
                [
                    [0.8654075860977173, -1.3499791622161865],
                    [1.744811773300171, -0.4464898109436035],
                ],
            ],
            [
                [
                    [0.31903910636901855, -0.23555399477481842],
                    [1.4621078968048096, -1.945997953414917],
                ],
                [
                    [-0.18911540508270264, -0.22526900470256805],
                    [1.1337693929672241, -0.6451467871665955],
                ],
            ],
            [
                [
                    [-0.16287480294704437, -0.8292204141616821],
                    [0.04221370071172714, 0.5828151702880859],
                ],
                [
                    [-0.6455737948417664, 1.144723653793335],
                    [0.9015907049179077, 0.5024943947792053],
                ],
            ],
        ],
    },
    "2 (2,)": {
        "gw": [0.43499261140823364, 0.58089280128479],
        "gx": [
            [
                [
                    [0.9008560180664062, -0.6176810264587402],
                    [-0.016894299536943436, -0.12864460051059723],
                ],
                [
                    [-0.2678880989551544, 0.47912418842315674],
                    [-0.6916608214378357, -0.05454359948635101],
                ],
            ],
            [
                [
                    [-0.6871727108955383, -0.76356041431427],
                    [-0.6712461113929749, -0.0017410999862477183],
                ],
                [
                    [-1.0093803405761719, 0.21177160739898682],
                    [1.6598021984100342, 0.10201229900121689],
                ],
            ],
            [
                [
                    [-0.17330460250377655, -0.801885724067688],
                    [-0.7471582889556885, 1.6924545764923096],
                ],
                [
                    [0.04589980095624924, -0.6369956135749817],
                    [0.19091549515724182, 2.100255250930786],
                ],
            ],
        ],
        "w": [0.9034019112586975, 0.13747470080852509],
        "y": [
            [
                [
                    [1.6243454217910767, -0.5526618957519531],
                    [-0.0726102963089943, -0.1475059986114502],
                ],
                [[0.8654075860977173, -2.079214572906494], [1.744811773300171, -0.104646697640419]],
            ],
            [
                [
                    [0.31903910636901855, -0.2252817004919052],
                    [1.4621078968048096, -0.283217191696167],
                ],
                [
                    [-0.2912723124027252, -0.34695538878440857],
                    [1.1337693929672241, -0.15120719373226166],
                ],
            ],
            [
                [
                    [-0.15577200055122375, -0.7930589914321899],
                    [0.04221370071172714, 0.5828151702880859],
                ],
                [
                    [-0.9943014979362488, 1.144723653793335],
                    [0.9015907049179077, 0.5024943947792053],
                ],
            ],
        ],
    },
    "3 (2,)": {
        "gw": [0.40230509638786316, 0.6135804057121277],
        "gx": [
            [
                [
                    [0.9008560180664062, -0.5520359873771667],
                    [-0.017115699127316475, -0.7555320858955383],
                ],
                [
                    [-0.2678880989551544, 0.42820438742637634],
                    [-0.6916608214378357, -0.3203352987766266],
                ],
            ],
            [
                [
                    [-0.6871727108955383, -0.6824116110801697],
                    [-0.6712461113929749, -0.010225299745798111],
                ],
                [
                    [-0.15561489760875702, 0.1892652064561844],
                    [1.6598021984100342, 0.599120020866394],
                ],
            ],
            [
                [
                    [-0.026718199253082275, -0.7166638970375061],
                    [-0.7471582889556885, 1.6924545764923096],
                ],
                [
                    [0.007076300214976072, -0.6369956135749817],
                    [0.19091549515724182, 2.100255250930786],
                ],
            ],
        ],
        "w": [0.13927634060382843, 0.8073912858963013],
        "y": [
            [
                [
                    [1.6243454217910767, -0.4939267933368683],
                    [-0.07356180250644684, -0.8663054704666138],
                ],
                [
                    [0.8654075860977173, -1.858242154121399],
                    [1.744811773300171, -0.6145917773246765],
                ],
            ],
            [
                [
                    [0.31903910636901855, -0.2013394981622696],
                    [1.4621078968048096, -1.663339614868164],
                ],
                [
                    [-0.044905100017786026, -0.31008219718933105],
                    [1.1337693929672241, -0.8880426287651062],
                ],
            ],
            [
                [
                    [-0.02401519939303398, -0.7087752223014832],
                    [0.04221370071172714, 0.5828151702880859],
                ],
                [
                    [-0.15329019725322723, 1.144723653793335],
                    [0.9015907049179077, 0.5024943947792053],
                ],
            ],
        ],
    },
    "double": {
        "gw2": [121.37789916992188, 3207.9296875],
        "gx2": [
            [
                [
                    [154.2899627685547, -1.8152199983596802],
                    [-1.3524600267410278, -5.597939968109131],
                ],
                [[23.332679748535156, -1108.362548828125], [191.22657775878906, -117.461181640625]],
            ],
            [
                [
                    [1.1690499782562256, -0.3010300099849701],
                    [112.52287292480469, -20.747020721435547],
                ],
                [
                    [-20.8797607421875, -29.664609909057617],
                    [52.46583938598633, -246.97378540039062],
                ],
            ],
            [
                [
                    [-0.14385999739170074, -3.743220090866089],
                    [0.0027099999133497477, 7.126810073852539],
                ],
                [[-247.30447387695312, 54.0013313293457], [26.383399963378906, 4.5676798820495605]],
            ],
        ],
    },
}


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(1)
    x0 = rng.randn(3, 2, 2, 2).astype(np.float32)
    g0 = rng.randn(3, 2, 2, 2).astype(np.float32)
    return x0, g0


@pytest.mark.parametrize("case", ["1 (2,)", "2 (2,)", "3 (2,)", "1 ()", "1 (1,)"])
def test_prelu_as_nnabla(case: str) -> None:
    ref = _NNABLA[case]
    x0, g0 = _inputs()
    base_axis = int(case.split()[0])
    x = nn.Variable.from_numpy_array(x0, need_grad=True)
    w = nn.Variable.from_numpy_array(np.asarray(ref["w"], np.float32), need_grad=True)
    y = F.prelu(x, w, base_axis=base_axis)
    assert y.parent.name == "PReLU" and y.parent.info.type_name == "PReLU"
    assert y.parent.info.args == {"base_axis": base_axis}
    assert len(y.parent.inputs) == 2 and y.parent.inputs[0] == x and y.parent.inputs[1] == w
    y.forward()
    y.backward(g0)
    np.testing.assert_allclose(y.d, ref["y"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(x.g, ref["gx"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(w.g, ref["gw"], rtol=1e-5, atol=1e-6)
    assert w.g.shape == w.shape


def test_gradient_at_zero_is_the_incoming_gradient() -> None:
    x = nn.Variable.from_numpy_array(np.array([[-2.0, 0.0, 1.0], [4.0, -1.0, 0.0]]), need_grad=True)
    w = nn.Variable.from_numpy_array(np.array([0.25, 0.5, 2.0]), need_grad=True)
    y = F.prelu(x, w)
    y.forward()
    y.backward(np.arange(6, dtype=np.float32).reshape(2, 3))
    # nnabla 1.39
    np.testing.assert_array_equal(y.d, [[-0.5, 0.0, 1.0], [4.0, -0.5, 0.0]])
    np.testing.assert_array_equal(x.g, [[0.0, 1.0, 2.0], [3.0, 2.0, 5.0]])
    np.testing.assert_array_equal(w.g, [0.0, -4.0, 0.0])


def test_second_derivatives_as_nnabla() -> None:
    x0, _ = _inputs()
    x = nn.Variable.from_numpy_array(x0, need_grad=True)
    w = nn.Variable.from_numpy_array(np.array([0.3, 0.7], np.float32), need_grad=True)
    y = F.prelu(x, w, base_axis=1)
    gx, gw = nn.grad([F.sum(y * y * y)], [x, w])
    z = F.sum(gx * gx) + F.sum(gw * gw)
    gx2, gw2 = nn.grad([z], [x, w])
    F.sink(gx2, gw2).forward()
    ref = _NNABLA["double"]
    np.testing.assert_allclose(gx2.d, ref["gx2"], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(gw2.d, ref["gw2"], rtol=1e-5)


@pytest.mark.parametrize("base_axis", [1, 2])
@pytest.mark.parametrize("shared", [False, True])
def test_rule_to_second_order_in_float64(base_axis: int, shared: bool) -> None:
    from gradhub.graph import apply
    from gradhub_compat.nnabla.functions import _PRELU

    rng = np.random.default_rng(0)
    x = rng.uniform(0.2, 2.0, (2, 3, 2)) * rng.choice([-1.0, 1.0], (2, 3, 2))  # away from 0
    w = rng.uniform(0.1, 0.9, () if shared else ((2, 3, 2)[base_axis],))
    assert gradcheck(lambda a, b: apply(_PRELU, (a, b), {"base_axis": base_axis}), [x, w], order=2)


@pytest.mark.parametrize("shared", [False, True])
def test_pf_prelu_is_one_function(shared: bool) -> None:
    nn.clear_parameters()
    x = nn.Variable.from_numpy_array(np.array([[-2.0, 1.0], [4.0, -1.0]]))
    y = PF.prelu(x, shared=shared, fix_parameters=True)
    assert y.parent.name == "PReLU" and len(y.parent.inputs) == 2
    assert y.parent.inputs[0] == x and not y.parent.inputs[1].need_grad
    assert nn.get_parameters()["prelu/slope"].shape == (() if shared else (2,))
    y.forward()
    np.testing.assert_array_equal(y.d, [[-0.5, 1.0], [4.0, -0.25]])
    nn.clear_parameters()


def test_refused_slope_shapes() -> None:
    x = nn.Variable.from_numpy_array(np.ones((3, 2, 2, 2), np.float32))
    # nnabla 1.39 raises RuntimeError (value error in setup_impl) for both
    for shape in [(3,), (2, 2)]:
        w = nn.Variable.from_numpy_array(np.ones(shape, np.float32))
        with pytest.raises(ValueError, match=r"nnabla F.prelu: the slopes x1 of shape"):
            F.prelu(x, w)
    with pytest.raises(ValueError, match=r"nnabla F.prelu: base_axis=4 is out of range"):
        F.prelu(x, nn.Variable.from_numpy_array(np.ones((), np.float32)), base_axis=4)


def test_prelu_on_ndarrays_computes_at_once() -> None:
    x = nn.NdArray.from_numpy_array(np.array([-2.0, 3.0], np.float32))
    w = nn.NdArray.from_numpy_array(np.array(0.5, np.float32))
    y = F.prelu(x, w, base_axis=0)
    assert isinstance(y, nn.NdArray)
    np.testing.assert_array_equal(y.data, [-1.0, 3.0])


def test_registered_backward_rule_is_used() -> None:
    import gradhub_compat.nnabla.backward_functions as B
    from gradhub.registry import REGISTRY

    fdef = REGISTRY.get("PReLU")
    saved = fdef.rule, list(fdef.overrides), dict(fdef.audit)

    def bw(grad_outputs, inputs, input_shapes, outputs, output_shapes, base_axis=1):  # type: ignore[no-untyped-def]
        assert base_axis == 1 and outputs[0] is not None
        return grad_outputs[0] * 7.0, None

    B.register("PReLU", bw)
    try:
        x = nn.Variable.from_numpy_array(np.array([[-1.0, 2.0]]), need_grad=True)
        y = F.prelu(x, nn.Variable.from_numpy_array(np.array([0.5, 0.5])))
        y.forward()
        y.backward(np.ones((1, 2), np.float32))
        np.testing.assert_array_equal(x.g, [[7.0, 7.0]])
    finally:
        fdef.rule, fdef.overrides, fdef.audit = saved
