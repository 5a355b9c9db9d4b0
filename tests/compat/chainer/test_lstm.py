"""F.lstm, F.slstm, L.LSTM and L.StatelessLSTM in gradhub's chainer layer, against chainer
7.8.1.

The values in ``_CHAINER`` are chainer 7.8.1's (written 2026-11-27 by chainer 7.8.1 on the CPU
for exactly these inputs and ``numpy.random`` seeds: each scenario below ran unchanged, with
chainer's imports): outputs, first and second derivatives of the functions, the initial
parameters of the links after ``numpy.random.seed``, truncated backprop through time with a
shrinking batch, and three Adam updates of a small LSTM language model.
"""

from __future__ import annotations

from typing import Any

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import initializers, optimizers
from gradhub_compat.chainer.utils.type_check import InvalidType

# chainer 7.8.1's values for the scenarios below (float32, shortest round-trip repr)
_CHAINER: dict[str, Any] = {
    "bptt2_c": [[0.53780967, 0.42006487], [-0.33285803, 0.28824693], [-0.34795892, 0.43690145]],
    "bptt2_glateral_W": [
        [-0.011986445, 0.0071078325],
        [0.0050358744, -0.0006197301],
        [-0.0104370965, 0.0016459848],
        [-0.013338317, -0.0055307047],
        [-0.00020167977, -0.000042239495],
        [0.013688897, 0.001074479],
        [-0.0012126707, 0.00036698015],
        [0.014288502, 0.0030400197],
    ],
    "bptt2_gupward_W": [
        [-0.0056052934, 0.064701885, -0.006076296],
        [0.019975577, -0.04101861, -0.009092372],
        [-0.013477219, 0.013492415, -0.008752176],
        [-0.109527215, 0.10978724, 0.0020801686],
        [0.10980049, -0.23424867, -0.07669918],
        [0.03916327, -0.05239395, -0.0032626726],
        [0.0033071819, 0.0040603597, 0.0015701033],
        [0.09025496, -0.04192385, 0.0098039275],
    ],
    "bptt2_gupward_b": [
        -0.02987371,
        0.07073499,
        -0.021448739,
        0.08302307,
        0.24951081,
        0.115948826,
        -0.0012702462,
        0.14556229,
    ],
    "bptt2_h": [[0.1912504, 0.2053483], [-0.137276, 0.11426417], [-0.14465207, 0.17776111]],
    "bptt2_loss": 0.50417155,
    "bptt5_c": [[0.67450726, 0.60581285], [-0.43928552, 0.24833824], [-0.34795892, 0.43690145]],
    "bptt5_glateral_W": [
        [-0.018930133, -0.026649369],
        [0.0010138396, -0.01213917],
        [-0.0139386365, -0.0034088152],
        [-0.023100685, -0.033363704],
        [0.056895867, 0.025486376],
        [0.034279153, 0.01999716],
        [0.01799564, 0.023849282],
        [0.044508077, 0.028489795],
    ],
    "bptt5_gupward_W": [
        [0.035103053, 0.058120318, 0.024355698],
        [0.06349794, -0.047229934, 0.004595277],
        [-0.009469235, 0.021150438, -0.0049435003],
        [-0.017525181, 0.10006147, 0.03510542],
        [-0.036258355, -0.34207457, -0.07327859],
        [0.07606463, -0.09957889, 0.025256133],
        [-0.018439868, -0.02559477, 0.0069640796],
        [0.035899844, -0.081718445, 0.034546185],
    ],
    "bptt5_gupward_b": [
        -0.15227903,
        0.045896947,
        -0.036386035,
        0.017250791,
        0.20262949,
        0.19137895,
        0.066855915,
        0.193084,
    ],
    "bptt5_h": [[0.3533932, 0.34478018], [-0.22520098, 0.100727096], [-0.14465207, 0.17776111]],
    "bptt5_loss": 0.018495426,
    "deferred_lateral_W": [[1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1]],
    "deferred_upward_W": [
        [0.029191814, 0.28864703, -0.5749883],
        [0.40044928, -0.2415065, -0.9148561],
        [-0.37395367, 0.34558755, 0.19182464],
        [-0.662496, 0.35718912, -0.050799277],
        [0.24541566, 0.19182645, -0.66788816],
        [0.2026483, -0.35038653, 0.89314896],
        [0.41762146, 0.026636383, -0.5675305],
        [0.031426758, 0.09231423, -0.69798654],
    ],
    "deferred_upward_b": [
        0.66700804,
        0.5077073,
        -0.103099994,
        -0.19536775,
        0.11828856,
        -0.33384365,
        0.12391611,
        0.16273539,
    ],
    "full_c": [[-0.14739466, 0.6952739], [0.25602293, -0.6900191]],
    "full_gc": [[0.1484984, 0.52831393], [-0.028135631, 0.7725167]],
    "full_ggc": [[-0.08620378, 0.12367775], [0.00031906366, -0.0035565123]],
    "full_ggx": [
        [
            -0.008435196,
            -0.0044264826,
            0.0023512586,
            0.0044423137,
            -0.006478175,
            0.015458883,
            -0.045305483,
            -0.0008882594,
        ],
        [
            0.03141945,
            0.007944179,
            0.011580405,
            0.040256813,
            0.056884293,
            0.014407802,
            0.11221516,
            -0.0055078864,
        ],
    ],
    "full_gx": [
        [
            0.1985689,
            -0.023090975,
            0.0081488835,
            0.015957044,
            0.024931528,
            0.15626937,
            0.05398242,
            0.041931216,
        ],
        [
            -0.14513206,
            -0.0063945753,
            -0.0049013197,
            -0.024131773,
            0.067002386,
            -0.1625824,
            0.017154919,
            -0.080325656,
        ],
    ],
    "full_h": [[-0.1210742, 0.3180366], [0.040319186, -0.4871141]],
    "init_lateral_W": [
        [1.2647513, 0.30865908],
        [0.06823401, -1.3176883],
        [-0.9290427, 0.6255225],
        [0.623186, 1.2088507],
        [-0.83795446, -0.14541644],
        [1.0508655, 0.16738367],
        [0.5268343, 1.3973213],
        [-0.879728, -0.44294363],
    ],
    "init_upward_W": [
        [-0.16015016, -0.20482019, -0.047770817],
        [-0.361999, -0.025298432, -0.27552196],
        [0.028886937, -0.23364061, -0.3148637],
        [-0.8928591, 0.5671701, -0.6357017],
        [-0.59108263, -0.4116468, 0.36098534],
        [-0.09267243, -0.44388786, -0.1328083],
        [-0.46405458, -1.3966583, -0.5333516],
        [-0.59113497, 0.648929, -0.07616072],
    ],
    "init_upward_b": [0, 0, 1, 0, 0, 0, 1, 0],
    "lm_embed_W": [
        [0.088204205, 1.0882831, -1.9499713],
        [-1.3893496, -2.2934883, 2.4068353],
        [1.7308387, 2.207555, 0.79782397],
        [0.97942454, -1.1864227, 1.9193666],
        [-1.1263278, -0.6610382, -0.3813583],
    ],
    "lm_l1_lateral_W": [
        [-0.4600391, 0.49925223, -0.13624637],
        [-0.034909487, -0.1174574, 0.78061515],
        [-0.3475326, -0.09760371, 0.2418245],
        [0.10803552, -0.033332195, -0.30968967],
        [0.27696294, -0.67537606, -0.28620017],
        [-0.23290892, -0.5364467, 0.045791004],
        [-1.0301745, 0.07076143, -0.78301305],
        [0.90017533, 0.40539458, -0.47149777],
        [-0.9457347, 0.18790787, 0.7102265],
        [-0.08178922, 0.06976951, 0.7711229],
        [0.060274974, 0.12140398, 0.24472393],
        [-0.6676838, 0.88331574, 0.20515513],
    ],
    "lm_l1_upward_W": [
        [-0.94731295, -0.27617323, 0.30615368],
        [0.676272, 0.09035788, -0.38546154],
        [0.82984155, -0.13087267, 0.021052161],
        [0.07996031, 0.040618844, -0.092863634],
        [0.3150374, 0.97966754, 0.5838688],
        [-1.8129467, 0.65491045, -1.07653],
        [0.058525607, 1.080578, 0.31117985],
        [0.46393442, -0.17971373, 0.22122505],
        [-0.13375597, -1.0917337, 1.4245062],
        [-0.34979367, 0.54007715, 0.20283358],
        [-0.54673016, 0.08471599, 0.0033662126],
        [0.19642805, 0.21339025, 0.4151223],
    ],
    "lm_l1_upward_b": [
        0.0029990547,
        -0.0029996536,
        0.9970077,
        -0.0029990515,
        -0.0030004373,
        -0.002995504,
        1.0030028,
        -0.003000436,
        -0.0029977923,
        -0.0029973052,
        1.0029998,
        -0.0029986408,
    ],
    "lm_losses": [8.1444645, 8.137487, 8.130514],
    "lm_out_W": [
        [-0.6902902, -0.00220189, -0.5290057],
        [0.2834982, -0.7658395, -1.2677268],
        [-0.25476667, 1.4724066, 0.6610008],
        [0.04575467, 1.4324361, -0.11521103],
        [-0.1045113, 0.49597856, 0.1804653],
    ],
    "lm_out_b": [0.0029987316, -0.003000969, -0.002998413, 0.0030000012, -0.0029995055],
    "nd_c": [[[-0.11200822, -0.63220173]], [[-0.11815737, -0.022807747]]],
    "nd_gc": [[[-0.13789408, -0.22565062]], [[-0.46355918, -0.45974952]]],
    "nd_ggc": [[[-0.015460774, -0.02432476]], [[0.0073094657, 0.00609581]]],
    "nd_ggx": [
        [
            [0.010611383, 0.04291216],
            [-0.027421057, 0.009286183],
            [0.052394632, 0.058249388],
            [0.02577198, -0.0026009239],
        ],
        [
            [-0.054965366, 0.011707261],
            [0.017165486, -0.0020719902],
            [0.006946272, 0.14045925],
            [0.012052307, 0.031382546],
        ],
    ],
    "nd_gx": [
        [
            [-0.09460656, -0.3210715],
            [0.024650944, 0.11152989],
            [0.01218454, 0.15353505],
            [0.019619444, -0.026975973],
        ],
        [
            [-0.024605937, -0.70296246],
            [0.088938415, -0.009260494],
            [-0.008992427, 0.030078229],
            [0.010311941, 0.0023714234],
        ],
    ],
    "nd_h": [[[-0.06902432, -0.2960717]], [[-0.09408753, -0.0035780922]]],
    "short_c": [[-0.36371714, -0.10816319], [-1.0524977, -0.50962615], [-0.7064882, -0.8153228]],
    "short_gc": [[-0.27305216, 0.23399471], [0.24207585, 0.5249654], [-0.8299116, -0.92189044]],
    "short_ggc": [[-0.20088127, -0.15581605], [-0.08142465, -0.038272593], [0, 0]],
    "short_ggx": [
        [
            0.07779864,
            0.08120072,
            -0.14103602,
            -0.021691008,
            -0.089068666,
            -0.06842659,
            -0.025974825,
            -0.04007718,
        ],
        [
            0.044714507,
            0.0035055918,
            0.076444425,
            -0.017198173,
            -0.04382031,
            -0.050839167,
            -0.062498063,
            0.007834713,
        ],
    ],
    "short_gx": [
        [
            -0.06678942,
            0.13259633,
            0.02726991,
            0.057184063,
            0.60936266,
            -0.06810265,
            0.07891401,
            -0.012056995,
        ],
        [
            0.033530947,
            -0.12340169,
            -0.14084366,
            0.15505596,
            0.031709958,
            -0.10804371,
            -0.047929835,
            0.008555346,
        ],
    ],
    "short_h": [[-0.1877419, -0.0882878], [-0.43711886, -0.40710083]],
    "slstm_c": [[-0.022673935, 0.76663345], [-0.19649541, -0.3777045]],
    "slstm_gc1": [[-0.027166685, 0.16737428], [-0.12190124, -0.19644761]],
    "slstm_gc2": [[-0.064768866, 0.21764955], [-0.16782348, -0.16268958]],
    "slstm_ggc1": [[0.0008232053, -0.08766967], [-0.0070792153, -0.004616024]],
    "slstm_ggc2": [[0.000110739864, -0.11496321], [-0.004124675, 0.0019266527]],
    "slstm_ggx1": [
        [
            0.0027278834,
            0.0007536283,
            0.0015882349,
            0.0004118399,
            -0.03795826,
            -0.008360951,
            -0.0003672894,
            0.021846399,
        ],
        [
            0.0026503922,
            0.0014555829,
            0.016154591,
            -0.0014040845,
            0.04254039,
            0.009372261,
            0.017881664,
            0.0068735383,
        ],
    ],
    "slstm_ggx2": [
        [
            -0.0022575718,
            0.00051379175,
            0.001237669,
            0.0004118399,
            -0.08470935,
            0.008681437,
            -0.007539492,
            0.021846399,
        ],
        [
            -0.003184795,
            0.0041772835,
            0.01349766,
            -0.0014040845,
            -0.033078264,
            0.013099138,
            0.01963088,
            0.0068735383,
        ],
    ],
    "slstm_gx1": [
        [
            -0.00948209,
            0.047887288,
            -0.002394782,
            0.0003256795,
            0.05213818,
            0.027634725,
            0.023042263,
            0.08917684,
        ],
        [
            -0.02093573,
            0.10406839,
            0.03689376,
            -0.0035927098,
            -0.1558096,
            0.06736188,
            -0.002379183,
            0.011209634,
        ],
    ],
    "slstm_gx2": [
        [
            -0.1500001,
            -0.0067251525,
            -0.034842223,
            0.0003256795,
            0.17529033,
            -0.0133001655,
            0.022366866,
            0.08917684,
        ],
        [
            -0.05199884,
            -0.06531385,
            0.07787097,
            -0.0035927098,
            -0.17425357,
            -0.06011049,
            0.060488533,
            0.011209634,
        ],
    ],
    "slstm_h": [[-0.0049132393, 0.4781454], [-0.023728903, -0.02807143]],
    "stateless0_c": [[0.14149101, -0.04805675], [-0.009056242, 0.13412721]],
    "stateless0_h": [[0.04939222, -0.019530835], [-0.00570721, 0.08311559]],
    "stateless_c": [[0.66644895, -0.0076760054], [0.43407118, -0.5307527]],
    "stateless_h": [[0.24331112, -0.0031031803], [0.24945381, -0.30423218]],
}


def _expected(key: str) -> np.ndarray:
    return np.array(_CHAINER[key], dtype=np.float32)


def _close(got: Any, key: str, rtol: float = 1e-6, atol: float = 1e-7) -> None:
    got = got.array if hasattr(got, "array") else got
    np.testing.assert_allclose(got, _expected(key), rtol=rtol, atol=atol, err_msg=key)


@pytest.mark.parametrize(
    ("name", "cshape", "xshape", "seed"),
    [
        ("full", (2, 2), (2, 8), 0),
        ("short", (3, 2), (2, 8), 1),  # c_prev has more rows than x: c[2:] is kept
        ("nd", (2, 1, 2), (2, 4, 2), 2),  # trailing axes
    ],
)
def test_lstm_values_gradients_and_double_backprop_match_chainer(
    name: str, cshape: tuple[int, ...], xshape: tuple[int, ...], seed: int
) -> None:
    rs = np.random.RandomState(seed)
    c = chainer.Variable(rs.uniform(-1, 1, cshape).astype(np.float32))
    x = chainer.Variable(rs.uniform(-2, 2, xshape).astype(np.float32))
    wc = rs.uniform(-1, 1, cshape).astype(np.float32)
    wh = rs.uniform(-1, 1, (xshape[0], *cshape[1:])).astype(np.float32)
    cn, h = F.lstm(c, x)
    assert cn.shape == cshape and h.shape == (xshape[0], *cshape[1:])
    _close(cn, f"{name}_c", rtol=0, atol=0)  # the same float32 operations as chainer's CPU code
    _close(h, f"{name}_h", rtol=0, atol=0)
    loss = F.sum(cn * wc) + F.sum(h * wh)
    gc, gx = chainer.grad([loss], [c, x], enable_double_backprop=True)
    _close(gc, f"{name}_gc")
    _close(gx, f"{name}_gx")
    l2 = F.sum(gc * rs.uniform(-1, 1, cshape).astype(np.float32)) + F.sum(
        gx * rs.uniform(-1, 1, xshape).astype(np.float32)
    )
    ggc, ggx = chainer.grad([l2], [c, x])
    _close(ggc, f"{name}_ggc")
    _close(ggx, f"{name}_ggx")
    if name == "short":  # the rows past x's batch pass through unchanged, gradient 1
        np.testing.assert_array_equal(cn.array[2:], c.array[2:])
        np.testing.assert_array_equal(gc.array[2:], wc[2:])


def test_lstm_gate_layout_is_chainers() -> None:
    # x.reshape(B, n, 4)[:, :, k] are a, i, f, o: with a = i = f = o = 0 except the cell
    # input a of unit 1, only c[:, 1] moves
    x = np.zeros((1, 8), np.float32)
    x[0, 4] = 100.0  # unit 1, gate a
    c, h = F.lstm(np.zeros((1, 2), np.float32), x)
    np.testing.assert_allclose(c.array, [[0.0, 0.5]])
    np.testing.assert_allclose(h.array, [[0.0, 0.5 * np.tanh(0.5)]], rtol=1e-6)


def test_lstm_type_checks_raise_chainers_invalid_type() -> None:
    f32 = np.float32
    with pytest.raises(InvalidType, match=r"Expect: c.dtype.kind == f\nActual: i != f"):
        F.lstm(np.ones((2, 2), np.int32), np.ones((2, 8), np.int32))
    with pytest.raises(InvalidType, match=r"x\.dtype == c\.dtype"):
        F.lstm(np.ones((2, 2), f32), np.ones((2, 8), np.float64))
    with pytest.raises(InvalidType, match=r"x.shape\[0\] <= c.shape\[0\]\nActual: 3 > 2"):
        F.lstm(np.ones((2, 2), f32), np.ones((3, 8), f32))
    with pytest.raises(InvalidType, match=r"x.shape\[1\] == 4 \* c.shape\[1\]"):
        F.lstm(np.ones((2, 2), f32), np.ones((2, 6), f32))
    with pytest.raises(InvalidType, match=r"c\.ndim >= 2"):
        F.lstm(np.ones((2,), f32), np.ones((2,), f32))  # (chainer: an IndexError)
    with pytest.raises(InvalidType, match=r"c_prev1.shape\[0\] == x2.shape\[0\]"):
        F.slstm(
            np.ones((2, 2), f32), np.ones((2, 2), f32), np.ones((2, 8), f32), np.ones((1, 8), f32)
        )


def test_lstm_empty_batch_keeps_the_cell() -> None:
    c, h = F.lstm(np.ones((2, 2), np.float32), np.ones((0, 8), np.float32))
    np.testing.assert_array_equal(c.array, np.ones((2, 2), np.float32))
    assert h.shape == (0, 2)


def test_slstm_values_gradients_and_double_backprop_match_chainer() -> None:
    rs = np.random.RandomState(3)
    c1, c2 = (chainer.Variable(rs.uniform(-1, 1, (2, 2)).astype(np.float32)) for _ in range(2))
    x1, x2 = (chainer.Variable(rs.uniform(-2, 2, (2, 8)).astype(np.float32)) for _ in range(2))
    c, h = F.slstm(c1, c2, x1, x2)
    _close(c, "slstm_c", rtol=0, atol=0)
    _close(h, "slstm_h", rtol=0, atol=0)
    loss = F.sum(c * rs.uniform(-1, 1, (2, 2)).astype(np.float32)) + F.sum(
        h * rs.uniform(-1, 1, (2, 2)).astype(np.float32)
    )
    gs = chainer.grad([loss], [c1, c2, x1, x2], enable_double_backprop=True)
    l2 = F.sum(gs[0] * gs[1]) + F.sum(gs[2] * gs[3])
    ggs = chainer.grad([l2], [c1, c2, x1, x2])
    for k, g, gg in zip(("c1", "c2", "x1", "x2"), gs, ggs, strict=True):
        _close(g, f"slstm_g{k}")
        _close(gg, f"slstm_gg{k}")


def test_lstm_link_initial_values_match_chainer() -> None:
    np.random.seed(3)
    m = L.LSTM(3, 2)
    # chainer's draws: LeCunNormal block by block (lateral, then upward, per gate), biases
    # 0 for a, i, o and 1 for the forget gate f, interleaved as F.lstm reads them
    np.testing.assert_array_equal(m.lateral.W.array, _expected("init_lateral_W"))
    np.testing.assert_array_equal(m.upward.W.array, _expected("init_upward_W"))
    np.testing.assert_array_equal(m.upward.b.array, np.array([0, 0, 1, 0] * 2, np.float32))
    assert m.lateral.b is None
    assert [n for n, _ in m.namedparams()] == ["/lateral/W", "/upward/W", "/upward/b"]
    assert str(m) == (
        "LSTM(\n  (lateral): Linear(in_size=2, out_size=8, nobias=True),\n"
        "  (upward): Linear(in_size=3, out_size=8, nobias=False),\n)"
    )
    # deferred input size, with initializers that draw: the draws happen at the first call
    np.random.seed(4)
    m = L.LSTM(
        2,
        lateral_init=initializers.One(),
        bias_init=initializers.Normal(0.3),
        forget_bias_init=initializers.Uniform(0.5),
    )
    assert m.upward.W.array is None
    m(np.ones((1, 3), np.float32))
    np.testing.assert_array_equal(m.lateral.W.array, _expected("deferred_lateral_W"))
    np.testing.assert_array_equal(m.upward.W.array, _expected("deferred_upward_W"))
    np.testing.assert_array_equal(m.upward.b.array, _expected("deferred_upward_b"))


def test_stateless_lstm_matches_chainer() -> None:
    np.random.seed(5)
    sl = L.StatelessLSTM(3, 2)
    rs = np.random.RandomState(6)
    c0, h0, x0 = (rs.uniform(-1, 1, s).astype(np.float32) for s in ((2, 2), (2, 2), (2, 3)))
    c, h = sl(c0, h0, x0)
    _close(c, "stateless_c")
    _close(h, "stateless_h")
    c, h = sl(None, None, x0)  # zero cell, no lateral term
    _close(c, "stateless0_c")
    _close(h, "stateless0_h")


def test_lstm_state_api() -> None:
    np.random.seed(0)
    m = L.LSTM(3, 2)
    assert m.c is None and m.h is None
    y = m(np.ones((2, 3), np.float32))
    assert m.h is y and m.c.shape == (2, 2)
    y0 = m(np.ones((0, 3), np.float32))  # an empty batch keeps the state
    assert y0.shape == (0, 2)
    np.testing.assert_array_equal(m.h.array, y.array)
    y1 = m(np.ones((1, 3), np.float32))  # a smaller batch updates the first rows only
    assert y1.shape == (1, 2) and m.h.shape == (2, 2)
    np.testing.assert_array_equal(m.h.array[1:], y.array[1:])
    np.testing.assert_array_equal(m.h.array[:1], y1.array)
    with pytest.raises(TypeError, match="equal to or less than the size of the previous state"):
        m(np.ones((3, 3), np.float32))
    m.reset_state()
    assert m.c is None and m.h is None
    c = chainer.Variable(np.zeros((2, 2), np.float32))
    h = chainer.Variable(np.ones((2, 2), np.float32))
    m.set_state(c, h)
    assert m.c is c and m.h is h
    y = m(np.ones((2, 3), np.float32))
    # chainer 7.8.1: LSTM(3, 2) after numpy.random.seed(0), x = ones, c = 0, h = ones
    np.testing.assert_allclose(
        y.array, [[0.39375272, -0.0789356], [0.39375272, -0.0789356]], rtol=1e-6
    )


def test_lstm_truncated_bptt_with_shrinking_batch_matches_chainer() -> None:
    np.random.seed(6)
    m = L.LSTM(3, 2)
    rs = np.random.RandomState(7)
    sizes = (3, 3, 2, 2, 1, 1)
    xs = [rs.uniform(-1, 1, (b, 3)).astype(np.float32) for b in sizes]
    ws = [rs.uniform(-1, 1, (b, 2)).astype(np.float32) for b in sizes]
    m.cleargrads()
    loss: Any = 0
    for t in range(6):
        y = m(xs[t])
        loss += F.sum(y * ws[t])
        if t % 3 == 2:  # backprop through the last 3 steps, then cut the history
            loss.backward()
            loss.unchain_backward()
            assert y.creator is None  # cut, as chainer's LSTM node
            _close(loss, f"bptt{t}_loss")
            _close(m.h, f"bptt{t}_h")
            _close(m.c, f"bptt{t}_c")
            _close(m.lateral.W.grad, f"bptt{t}_glateral_W")  # accumulated over both windows
            _close(m.upward.W.grad, f"bptt{t}_gupward_W")
            _close(m.upward.b.grad, f"bptt{t}_gupward_b")
            loss = 0


class _RNNLM(chainer.Chain):
    def __init__(self, n_vocab: int, n_units: int) -> None:
        super().__init__()
        with self.init_scope():
            self.embed = L.EmbedID(n_vocab, n_units)
            self.l1 = L.LSTM(n_units, n_units)
            self.out = L.Linear(n_units, n_vocab)

    def forward(self, x: Any) -> Any:
        return self.out(self.l1(self.embed(x)))


def test_lstm_language_model_adam_training_matches_chainer() -> None:
    np.random.seed(8)
    model = _RNNLM(5, 3)
    opt = optimizers.Adam().setup(model)
    seq = np.random.RandomState(9).randint(0, 5, (3, 6)).astype(np.int32)
    losses = []
    for _ in range(3):
        model.l1.reset_state()
        loss: Any = 0
        for t in range(5):
            loss += F.softmax_cross_entropy(model(seq[:, t]), seq[:, t + 1])
        model.cleargrads()
        loss.backward()
        loss.unchain_backward()
        opt.update()
        losses.append(loss.array)
    np.testing.assert_allclose(np.array(losses), _expected("lm_losses"), rtol=1e-6, atol=0)
    for n, p in model.namedparams():
        np.testing.assert_allclose(
            p.array, _expected("lm" + n.replace("/", "_")), rtol=0, atol=1e-6, err_msg=n
        )
