"""F.fixed_point_quantize, PF.fixed_point_quantized_affine and
PF.fixed_point_quantized_convolution as nnabla 1.39's: the quantized values (signed and
unsigned, at the bounds, -0.0), the straight-through gradients (fine-grained or not), the
parameters W, W_q, b, b_q (need_grad, the second draw of W_q, W_q written by forward() only),
outputs and gradients; an independent numpy transcription; errors.
"""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest

# nnabla 1.39's outputs of the runs below (parameters: their first 6 values, raveled)
_NNABLA: dict[str, dict[str, Any]] = {
    "f_True_True": {
        "y": [
            -0.75,
            -0.75,
            -0.75,
            -0.75,
            -0.25,
            -0.25,
            -0.0,
            0.0,
            0.0,
            0.25,
            0.5,
            0.75,
            0.75,
            0.75,
            0.75,
            0.75,
            0.75,
        ],
        "signbit": [
            True,
            True,
            True,
            True,
            True,
            True,
            True,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
        ],
        "g": [
            0.0,
            0.0,
            0.0,
            3.0,
            4.0,
            5.0,
            6.0,
            7.0,
            8.0,
            9.0,
            10.0,
            11.0,
            12.0,
            0.0,
            0.0,
            0.0,
            0.0,
        ],
    },
    "f_True_False": {
        "y": [
            -0.75,
            -0.75,
            -0.75,
            -0.75,
            -0.25,
            -0.25,
            -0.0,
            0.0,
            0.0,
            0.25,
            0.5,
            0.75,
            0.75,
            0.75,
            0.75,
            0.75,
            0.75,
        ],
        "signbit": [
            True,
            True,
            True,
            True,
            True,
            True,
            True,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
        ],
        "g": [
            0.0,
            1.0,
            2.0,
            3.0,
            4.0,
            5.0,
            6.0,
            7.0,
            8.0,
            9.0,
            10.0,
            11.0,
            12.0,
            13.0,
            14.0,
            15.0,
            16.0,
        ],
    },
    "f_False_True": {
        "y": [
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.25,
            0.5,
            0.75,
            0.75,
            0.75,
            1.0,
            1.0,
            1.75,
        ],
        "signbit": [
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
        ],
        "g": [
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            7.0,
            8.0,
            9.0,
            10.0,
            11.0,
            12.0,
            13.0,
            14.0,
            15.0,
            0.0,
        ],
    },
    "f_False_False": {
        "y": [
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.25,
            0.5,
            0.75,
            0.75,
            0.75,
            1.0,
            1.0,
            1.75,
        ],
        "signbit": [
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
            False,
        ],
        "g": [
            0.0,
            1.0,
            2.0,
            3.0,
            4.0,
            5.0,
            6.0,
            7.0,
            8.0,
            9.0,
            10.0,
            11.0,
            12.0,
            13.0,
            14.0,
            15.0,
            16.0,
        ],
    },
    "pfa": {
        "names": [
            "qa/fp_quantized_affine/W",
            "qa/fp_quantized_affine/W_q",
            "qa/fp_quantized_affine/b",
            "qa/fp_quantized_affine/b_q",
        ],
        "need_grad": [True, False, True, False],
        "Wq_build": [
            -0.7443835139274597,
            0.7457111477851868,
            -0.10427208989858627,
            0.7331768870353699,
            0.46753570437431335,
            0.5981479287147522,
        ],
        "y": [
            [1.8427597284317017, -0.5588216185569763, 3.951815128326416],
            [-0.730980396270752, -2.100078582763672, 2.802839517593384],
            [1.10602867603302, 1.2622287273406982, 2.2057676315307617],
            [0.6692287921905518, 1.432929515838623, 2.8118629455566406],
        ],
        "W": [
            0.7626565098762512,
            0.07712993770837784,
            0.7718903422355652,
            0.3507930338382721,
            0.3228898048400879,
            -0.46362391114234924,
        ],
        "Wq": [0.75, 0.125, 0.75, 0.375, 0.375, -0.5],
        "bq": [0.25, 0.0, 1.75],
        "gW": [
            9.977373123168945,
            3.388655424118042,
            23.085365295410156,
            4.833357334136963,
            3.3058791160583496,
            1.2849864959716797,
        ],
        "gb": [5.774073600769043, 0.0, 0.0],
        "gx": [
            8.552157402038574,
            -2.988861560821533,
            0.6385107040405273,
            -4.97132682800293,
            -2.486598014831543,
            0.3109685182571411,
        ],
    },
    "pfc": {
        "names": ["fp_quantized_conv/W", "fp_quantized_conv/W_q", "fp_quantized_conv/b"],
        "shapes": [[4, 3, 3, 3], [4, 3, 3, 3], [4]],
        "loss": 91.80220794677734,
        "Wq": [
            0.20000000298023224,
            -0.10000000149011612,
            0.20000000298023224,
            -0.30000001192092896,
            -0.20000000298023224,
            0.10000000149011612,
        ],
        "gW": [
            2.325742244720459,
            -9.036487579345703,
            14.337629318237305,
            -3.1379098892211914,
            -28.553573608398438,
            -3.2492904663085938,
        ],
        "gb": [15.836507797241211, -3.1351709365844727, -15.076745986938477, -14.233163833618164],
        "gx": [
            -1.247253179550171,
            1.4007270336151123,
            2.635643482208252,
            0.7147849798202515,
            0.5521699786186218,
            1.0857398509979248,
        ],
    },
}

_XS = [-1.0, -0.875, -0.8, -0.75, -0.3, -0.125, -0.1, 0.0, 0.1, 0.125, 0.375, 0.74, 0.75, 0.76]
_XS += [0.875, 0.9, 2.0]


def _close(got: Any, exp: Any) -> None:
    want = np.asarray(exp, np.float32).ravel()
    np.testing.assert_allclose(np.asarray(got).ravel()[: want.size], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sign", [True, False])
@pytest.mark.parametrize("fine", [True, False])
def test_fixed_point_quantize_as_nnabla(sign: bool, fine: bool) -> None:
    # regression: F.fixed_point_quantize raised AttributeError
    xs = np.array(_XS, np.float32)
    x = nn.Variable.from_numpy_array(xs, need_grad=True)
    y = F.fixed_point_quantize(x, sign=sign, n=3, delta=0.25, ste_fine_grained=fine)
    y.forward()
    x.grad.zero()
    y.backward(np.arange(17, dtype=np.float32))
    exp = _NNABLA[f"f_{sign}_{fine}"]
    np.testing.assert_array_equal(y.d, exp["y"])
    assert np.signbit(y.d).tolist() == exp["signbit"]
    np.testing.assert_array_equal(x.g, exp["g"])
    # independent: the documented formula and bounds
    top = 0.75 if sign else 1.75
    low = -top if sign else 0.0
    q = np.clip(np.sign(xs) * np.floor(np.abs(xs) / 0.25 + 0.5) * 0.25, low, top)
    np.testing.assert_array_equal(y.d, q)
    mask = (xs >= low) & (xs <= top) if fine else np.ones(17, bool)
    np.testing.assert_array_equal(x.g, np.where(mask, np.arange(17), 0))


def test_fixed_point_quantize_without_quantize_returns_the_input() -> None:
    x = nn.Variable.from_numpy_array(np.array(_XS, np.float32), need_grad=True)
    assert F.fixed_point_quantize(x, quantize=False) is x  # (as nnabla's)


def test_fixed_point_quantized_affine_as_nnabla() -> None:
    # regression: PF.fixed_point_quantized_affine raised AttributeError
    rs = np.random.RandomState(3)
    x = nn.Variable.from_numpy_array(rs.randn(4, 6).astype(np.float32), need_grad=True)
    y = PF.fixed_point_quantized_affine(
        x,
        3,
        rng=np.random.RandomState(4),
        n_w=4,
        delta_w=0.125,
        b_init=np.array([0.3, -0.26, 1.9], np.float32),
        sign_b=False,
        n_b=3,
        delta_b=0.25,
        name="qa",
    )
    ps = nn.get_parameters(grad_only=False)
    exp = _NNABLA["pfa"]
    assert list(ps) == exp["names"]
    assert [v.need_grad for v in ps.values()] == exp["need_grad"]
    _close(ps["qa/fp_quantized_affine/W_q"].d, exp["Wq_build"])  # the second draw, as built
    loss = F.sum(y * y)
    loss.forward()
    loss.backward()
    for key, name in (("W", "W"), ("Wq", "W_q"), ("bq", "b_q"), ("gW", "W"), ("gb", "b")):
        p = ps[f"qa/fp_quantized_affine/{name}"]
        _close(p.g if key.startswith("g") else p.d, exp[key])
    _close(y.d, exp["y"])
    _close(x.g, exp["gx"])


def test_fixed_point_quantized_convolution_as_nnabla() -> None:
    rs = np.random.RandomState(3)
    rs.randn(4, 6)  # (the draw of the affine run)
    x = nn.Variable.from_numpy_array(rs.randn(2, 3, 5, 5).astype(np.float32), need_grad=True)
    y = PF.fixed_point_quantized_convolution(
        x, 4, (3, 3), pad=(1, 1), rng=np.random.RandomState(6), quantize_b=False, delta_w=0.1
    )
    loss = F.sum(y * y)
    loss.forward()
    loss.backward()
    ps = nn.get_parameters(grad_only=False)
    exp = _NNABLA["pfc"]
    assert list(ps) == exp["names"]
    assert [list(v.shape) for v in ps.values()] == exp["shapes"]
    assert float(loss.d) == pytest.approx(exp["loss"], rel=1e-5)
    _close(ps["fp_quantized_conv/W_q"].d, exp["Wq"])
    _close(ps["fp_quantized_conv/W"].g, exp["gW"])
    _close(ps["fp_quantized_conv/b"].g, exp["gb"])
    _close(x.g, exp["gx"])


def test_fixed_point_quantize_errors() -> None:
    x = nn.Variable((3,))
    with pytest.raises(ValueError, match=r"nnabla F\.fixed_point_quantize: n must be an int"):
        F.fixed_point_quantize(x, n=1)
    with pytest.raises(ValueError, match=r"nnabla F\.fixed_point_quantize: delta must be > 0"):
        F.fixed_point_quantize(x, delta=0.0)
    with pytest.raises(NotImplementedError, match=r"nnabla F\.fixed_point_quantize: outputs="):
        F.fixed_point_quantize(x, outputs=[np.zeros(3, np.float32)])
    with pytest.raises(NotImplementedError, match=r"channel_last=True is not supported"):
        PF.fixed_point_quantized_convolution(
            nn.Variable((1, 5, 5, 3)), 2, (3, 3), channel_last=True
        )
    pf = r"nnabla PF\.fixed_point_quantized_convolution: group must be a positive int"
    with pytest.raises(ValueError, match=pf):
        PF.fixed_point_quantized_convolution(nn.Variable((1, 3, 5, 5)), 2, (3, 3), group=0)
