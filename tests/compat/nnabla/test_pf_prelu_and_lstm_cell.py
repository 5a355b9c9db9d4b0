"""PF.prelu, PF.lstm_cell and PF.LSTMCell as nnabla 1.39's: parameter names, shapes, initial
values and need_grad, forward values and the gradients of the input, the states and the
parameters (nnabla 1.39's outputs for the same inputs and initializers), fix_parameters, and an
independent numpy transcription of the LSTM step.
"""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.initializer as I
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest

# nnabla 1.39's outputs of the runs below (pf_runs)
_NNABLA: dict[str, dict[str, Any]] = {
    "prelu_True": {
        "names": ["p/prelu/slope"],
        "shapes": [[]],
        "init": 0.25,
        "y": [
            [
                [-0.5, -0.45652174949645996, -0.41304346919059753, -0.3695652186870575],
                [
                    -0.32608696818351746,
                    -0.28260868787765503,
                    -0.239130437374115,
                    -0.19565217196941376,
                ],
                [
                    -0.15217390656471252,
                    -0.10869564861059189,
                    -0.06521739065647125,
                    -0.021739130839705467,
                ],
            ],
            [
                [0.08695652335882187, 0.260869562625885, 0.43478259444236755, 0.6086956262588501],
                [0.782608687877655, 0.95652174949646, 1.1304347515106201, 1.3043478727340698],
                [1.47826087474823, 1.6521738767623901, 1.8260869979858398, 2.0],
            ],
        ],
        "gx": [
            [
                [0.125, 0.135869562625885, 0.14673912525177002, 0.15760868787765503],
                [
                    0.16847825050354004,
                    0.17934781312942505,
                    0.19021737575531006,
                    0.20108696818351746,
                ],
                [0.21195653080940247, 0.22282609343528748, 0.23369565606117249, 0.2445652186870575],
            ],
            [
                [1.08695650100708, 1.2608695030212402, 1.4347825050354004, 1.6086955070495605],
                [1.7826087474822998, 1.95652174949646, 2.13043475151062, 2.3043479919433594],
                [2.4782609939575195, 2.6521739959716797, 2.82608699798584, 3.0],
            ],
        ],
        "gw": -8.173912048339844,
        "need_grad": [True],
    },
    "prelu_False": {
        "names": ["p/prelu/slope"],
        "shapes": [[3.0]],
        "init": [0.25, 0.25, 0.25],
        "y": [
            [
                [-0.5, -0.45652174949645996, -0.41304346919059753, -0.3695652186870575],
                [
                    -0.32608696818351746,
                    -0.28260868787765503,
                    -0.239130437374115,
                    -0.19565217196941376,
                ],
                [
                    -0.15217390656471252,
                    -0.10869564861059189,
                    -0.06521739065647125,
                    -0.021739130839705467,
                ],
            ],
            [
                [0.08695652335882187, 0.260869562625885, 0.43478259444236755, 0.6086956262588501],
                [0.782608687877655, 0.95652174949646, 1.1304347515106201, 1.3043478727340698],
                [1.47826087474823, 1.6521738767623901, 1.8260869979858398, 2.0],
            ],
        ],
        "gx": [
            [
                [0.125, 0.135869562625885, 0.14673912525177002, 0.15760868787765503],
                [
                    0.16847825050354004,
                    0.17934781312942505,
                    0.19021737575531006,
                    0.20108696818351746,
                ],
                [0.21195653080940247, 0.22282609343528748, 0.23369565606117249, 0.2445652186870575],
            ],
            [
                [1.08695650100708, 1.2608695030212402, 1.4347825050354004, 1.6086955070495605],
                [1.7826087474822998, 1.95652174949646, 2.13043475151062, 2.3043479919433594],
                [2.4782609939575195, 2.6521739959716797, 2.82608699798584, 3.0],
            ],
        ],
        "gw": [-3.8941397666931152, -3.0472588539123535, -1.2325141429901123],
        "need_grad": [True],
    },
    "prelu_axis2": {
        "names": ["prelu/slope"],
        "y": [
            [
                [
                    -0.20000000298023224,
                    -0.3652174174785614,
                    -0.4956521689891815,
                    -0.591304361820221,
                ],
                [
                    -0.1304347962141037,
                    -0.22608695924282074,
                    -0.2869565486907959,
                    -0.313043475151062,
                ],
                [
                    -0.06086956337094307,
                    -0.08695652335882187,
                    -0.0782608687877655,
                    -0.03478261083364487,
                ],
            ],
            [
                [0.08695652335882187, 0.260869562625885, 0.43478259444236755, 0.6086956262588501],
                [0.782608687877655, 0.95652174949646, 1.1304347515106201, 1.3043478727340698],
                [1.47826087474823, 1.6521738767623901, 1.8260869979858398, 2.0],
            ],
        ],
        "gw": [1.2143667936325073, 1.920604944229126, 2.2275993824005127, 2.244234561920166],
        "gx": [
            [
                [
                    -0.04000000283122063,
                    -0.14608697593212128,
                    -0.2973913252353668,
                    -0.4730435013771057,
                ],
                [
                    -0.0260869599878788,
                    -0.09043478220701218,
                    -0.17217393219470978,
                    -0.2504347860813141,
                ],
                [
                    -0.012173912487924099,
                    -0.03478261083364487,
                    -0.04695652425289154,
                    -0.027826089411973953,
                ],
            ],
            [
                [0.17391304671764374, 0.52173912525177, 0.8695651888847351, 1.2173912525177002],
                [1.56521737575531, 1.91304349899292, 2.2608695030212402, 2.6086957454681396],
                [2.95652174949646, 3.3043477535247803, 3.6521739959716797, 4.0],
            ],
        ],
    },
    "lstm_cell": {
        "names": ["cell/lstm/affine/W", "cell/lstm/affine/b"],
        "shapes": [[7.0, 4.0, 4.0], [4.0, 4.0]],
        "W0": [
            -0.32660701870918274,
            -0.4908598065376282,
            -0.03757256269454956,
            0.22977177798748016,
            -0.08151264488697052,
            -0.014886333607137203,
        ],
        "h1": [
            [0.07961059361696243, -0.014134558849036694, -0.1785493940114975, -0.17287591099739075],
            [0.14474333822727203, -0.2899061441421509, -0.1980655938386917, -0.024256255477666855],
        ],
        "c1": [
            [0.2056165486574173, -0.023778468370437622, -0.5910183191299438, -0.5232512950897217],
            [0.3896489441394806, -0.6128501892089844, -0.2326774150133133, -0.04302922263741493],
        ],
        "loss": -0.2162836641073227,
        "gW": [
            0.2194143533706665,
            0.06746616214513779,
            0.07782967388629913,
            -0.02180471457540989,
            -0.009695131331682205,
            -0.001494883792474866,
            -0.005309339612722397,
            0.0045989686623215675,
            -0.09943115711212158,
            -0.19113914668560028,
            -0.01726326160132885,
            0.026823818683624268,
            0.022185862064361572,
            -0.008975043892860413,
            0.013845343142747879,
            -0.006643478758633137,
        ],
        "gb": [
            [
                -0.02398161217570305,
                0.037977829575538635,
                -0.04068098962306976,
                0.019794968888163567,
            ],
            [0.033255234360694885, 0.07902417331933975, 0.05277574062347412, 0.038766924291849136],
            [0.07926045358181, -0.03946675360202789, -0.02131020650267601, -0.09098301827907562],
            [0.11901676654815674, 0.07686424255371094, 0.01845197007060051, 0.2408318966627121],
        ],
        "gx": [
            [-0.013138189911842346, -0.03561778366565704, 0.08293213695287704],
            [0.1329139769077301, 0.05174452066421509, -0.04344816505908966],
        ],
        "gh": [
            [-0.01630857214331627, 0.04078260436654091, -0.026433533057570457, 0.07294327765703201],
            [
                -0.05547591671347618,
                0.07407530397176743,
                -0.03375348821282387,
                0.0023795943707227707,
            ],
        ],
        "gc": [
            [0.2498883754014969, 0.1657802015542984, 0.12233903259038925, 0.08591549843549728],
            [0.29335469007492065, 0.012416294775903225, -0.010147225111722946, 0.13291873037815094],
        ],
    },
    "LSTMCell": {
        "names": ["rnn/lstm/affine/W", "rnn/lstm/affine/b"],
        "h": [
            [
                [-0.09557995945215225, -0.16929349303245544, 0.09257293492555618],
                [0.1081787571310997, 0.11856596916913986, 0.032428618520498276],
            ],
            [
                [0.004897219128906727, -0.03994148597121239, 0.024511583149433136],
                [0.06362155079841614, 0.10324767976999283, -0.17166277766227722],
            ],
        ],
        "c": [
            [
                [0.011440522968769073, -0.08157480508089066, 0.05150613188743591],
                [0.2726261019706726, 0.22207733988761902, -0.5224952101707458],
            ]
        ],
        "reset": [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
        "resetc": [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
    },
}


def _close(got: Any, exp: Any) -> None:
    np.testing.assert_allclose(np.asarray(got), np.asarray(exp, np.float32), rtol=1e-6, atol=1e-7)


def _x() -> nn.Variable:
    data = np.linspace(-2, 2, 24).astype(np.float32).reshape(2, 3, 4)
    return nn.Variable.from_numpy_array(data, need_grad=True)


@pytest.mark.parametrize("shared", [True, False])
def test_prelu_as_nnabla(shared: bool) -> None:
    # regression: PF.prelu raised AttributeError
    exp = _NNABLA[f"prelu_{shared}"]
    x = _x()
    y = PF.prelu(x, shared=shared, name="p")
    loss = F.sum(y * y * np.float32(0.5) + y)
    loss.forward()
    x.grad.zero()
    loss.backward()
    ps = nn.get_parameters()
    assert list(ps) == exp["names"]
    assert [list(v.shape) for v in ps.values()] == exp["shapes"]
    assert [v.need_grad for v in ps.values()] == exp["need_grad"]
    slope = ps["p/prelu/slope"]
    _close(slope.d, exp["init"])
    _close(y.d, exp["y"])
    _close(x.g, exp["gx"])
    _close(slope.g, exp["gw"])


def test_prelu_base_axis_and_initializer_as_nnabla() -> None:
    exp = _NNABLA["prelu_axis2"]
    x = _x()
    y = PF.prelu(
        x, base_axis=2, shared=False, slope_init=np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    )
    loss = F.sum(y * y)
    loss.forward()
    loss.backward()
    ps = nn.get_parameters()
    assert list(ps) == exp["names"]
    _close(y.d, exp["y"])
    _close(ps["prelu/slope"].g, exp["gw"])
    _close(x.g, exp["gx"])


def test_prelu_fix_parameters_and_errors() -> None:
    x = _x()
    y = PF.prelu(x, fix_parameters=True, name="p")
    F.sum(y).forward()
    F.sum(y).backward()
    slope = nn.get_parameters(grad_only=False)["p/prelu/slope"]
    assert float(slope.g) == 0.0  # no gradient reaches the slope in this call
    assert x.g.any()
    with pytest.raises(ValueError, match=r"nnabla PF.prelu: base_axis=3 is out of range"):
        PF.prelu(x, base_axis=3, shared=False)


def _lstm_inputs() -> tuple[nn.Variable, nn.Variable, nn.Variable, Any, Any]:
    rng = np.random.RandomState(3)
    x = nn.Variable.from_numpy_array(rng.randn(2, 3).astype(np.float32), need_grad=True)
    h = nn.Variable.from_numpy_array(rng.randn(2, 4).astype(np.float32), need_grad=True)
    c = nn.Variable.from_numpy_array(rng.randn(2, 4).astype(np.float32), need_grad=True)
    winit = I.UniformInitializer(I.calc_uniform_lim_glorot(7, 16), rng=np.random.RandomState(11))
    binit = I.UniformInitializer((-0.5, 0.5), rng=np.random.RandomState(12))
    return x, h, c, winit, binit


def test_lstm_cell_as_nnabla() -> None:
    # regression: PF.lstm_cell raised AttributeError
    exp = _NNABLA["lstm_cell"]
    x, h, c, winit, binit = _lstm_inputs()
    h1, c1 = PF.lstm_cell(x, h, c, 4, w_init=winit, b_init=binit, name="cell")
    loss = F.sum(h1 * h1) + F.sum(c1 * np.float32(0.3))
    loss.forward()
    loss.backward()
    ps = nn.get_parameters()
    assert list(ps) == exp["names"]
    assert [list(v.shape) for v in ps.values()] == exp["shapes"]
    _close(ps["cell/lstm/affine/W"].d.ravel()[:6], exp["W0"])
    _close(h1.d, exp["h1"])
    _close(c1.d, exp["c1"])
    assert float(loss.d) == pytest.approx(exp["loss"], rel=1e-6)
    _close(ps["cell/lstm/affine/W"].g.ravel()[::7], exp["gW"])
    _close(ps["cell/lstm/affine/b"].g, exp["gb"])
    _close(x.g, exp["gx"])
    _close(h.g, exp["gh"])
    _close(c.g, exp["gc"])


def _sigmoid(a: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-a))


def test_lstm_cell_follows_the_gate_order_i_o_f_g() -> None:
    # an independent float64 transcription of nnabla's formula with the created parameters
    x, h, c, winit, binit = _lstm_inputs()
    h1, c1 = PF.lstm_cell(x, h, c, 4, w_init=winit, b_init=binit)
    h1.forward()
    ps = nn.get_parameters()
    w = ps["lstm/affine/W"].d.astype(np.float64)
    b = ps["lstm/affine/b"].d.astype(np.float64)
    xh = np.concatenate([x.d, h.d], axis=1).astype(np.float64)
    z = np.einsum("nk,kgs->ngs", xh, w) + b
    i, o, f, g = z[:, 0], z[:, 1], z[:, 2], z[:, 3]
    c_ref = _sigmoid(f) * c.d + _sigmoid(i) * np.tanh(g)
    h_ref = _sigmoid(o) * np.tanh(c_ref)
    np.testing.assert_allclose(c1.d, c_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h1.d, h_ref, rtol=1e-5, atol=1e-6)


def test_lstm_cell_default_initializer_is_glorot_uniform() -> None:
    x, h, c = nn.Variable((5, 6)), nn.Variable((5, 10)), nn.Variable((5, 10))
    PF.lstm_cell(x, h, c, 10)
    ps = nn.get_parameters()
    w, b = ps["lstm/affine/W"].d, ps["lstm/affine/b"].d
    lim = np.sqrt(6.0 / (16 + 40))  # nnabla's calc_uniform_lim_glorot(16, 4 * 10)
    assert w.shape == (16, 4, 10) and np.abs(w).max() <= lim and np.abs(w).max() > 0.8 * lim
    assert not b.any()


def test_lstm_cell_class_as_nnabla() -> None:
    # regression: PF.LSTMCell raised AttributeError
    exp = _NNABLA["LSTMCell"]
    cell = PF.LSTMCell(2, 3, name="rnn")
    xs = [
        nn.Variable.from_numpy_array(np.random.RandomState(s).randn(2, 2).astype(np.float32))
        for s in (1, 2)
    ]
    w = np.random.RandomState(5).uniform(-0.5, 0.5, (5, 4, 3)).astype(np.float32)
    hs = []
    for xv in xs:
        hh = cell(xv, w_init=w)
        hh.forward()
        hs.append(hh.d.copy())
    assert list(nn.get_parameters()) == exp["names"]
    _close(hs, exp["h"])
    _close(cell.c.d, exp["c"][0])
    cell.reset_state()
    _close(cell.h.d, exp["reset"])
    _close(cell.c.d, exp["resetc"])


def test_pf_module_offers_nnabla_helpers_and_lists_its_functions() -> None:
    # as nnabla's module: the helpers are those of the parameter and initializer modules
    import gradhub_compat.nnabla.parameter as P

    assert PF.get_parameter is P.get_parameter
    assert PF.get_parameter_or_create is P.get_parameter_or_create
    assert PF.calc_uniform_lim_glorot is I.calc_uniform_lim_glorot
    names = set(dir(PF))
    for n in ("prelu", "lstm_cell", "LSTMCell", "lstm", "gru", "rnn", "mean_subtraction"):
        assert n in names
    for n in ("weight_normalization", "spectral_norm", "fused_batch_normalization"):
        assert n in names
    assert {"depthwise_deconvolution", "fixed_point_quantized_affine", "affine"} <= names
