"""F.prune, PF.pruned_affine and PF.pruned_convolution as nnabla 1.39's: the pruned values (the
threshold's index, rate 0 and 1), the straight-through gradient, the parameters W, W_q, b, b_q
(need_grad, W_q's second draw as built, written by forward()), outputs and gradients; an
independent numpy transcription; errors.
"""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest

# nnabla 1.39's outputs of the runs below (parameters: their first 8 values, raveled)
_NNABLA: dict[str, dict[str, Any]] = {
    "f0.0": {
        "y": [
            0.5,
            -0.10000000149011612,
            0.30000001192092896,
            -0.699999988079071,
            0.20000000298023224,
            0.0,
            -0.30000001192092896,
            0.8999999761581421,
            0.05000000074505806,
            -0.20000000298023224,
        ],
        "g": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0],
    },
    "f0.5": {
        "y": [
            0.5,
            0.0,
            0.30000001192092896,
            -0.699999988079071,
            0.20000000298023224,
            0.0,
            -0.30000001192092896,
            0.8999999761581421,
            0.0,
            -0.20000000298023224,
        ],
        "g": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0],
    },
    "f0.9": {
        "y": [0.0, 0.0, 0.0, -0.699999988079071, 0.0, 0.0, 0.0, 0.8999999761581421, 0.0, 0.0],
        "g": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0],
    },
    "f1.0": {
        "y": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        "g": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0],
    },
    "pfa": {
        "names": [
            "pa/pruned_affine/W",
            "pa/pruned_affine/W_q",
            "pa/pruned_affine/b",
            "pa/pruned_affine/b_q",
        ],
        "need_grad": [True, False, True, False],
        "Wq_build": [
            0.5659325122833252,
            -0.6864360570907593,
            0.00856682937592268,
            -0.7098841667175293,
            -0.11737574636936188,
            -0.6588622331619263,
            -0.6088452339172363,
            0.1579844206571579,
        ],
        "y": [
            0.8447855710983276,
            -0.2789733111858368,
            1.2601075172424316,
            1.0941543579101562,
            2.180511951446533,
            0.4510621726512909,
            -2.0834619998931885,
            -0.7503314018249512,
        ],
        "loss": 14.189586639404297,
        "Wq": [0.0, -0.7741591930389404, 0.0, 0.0, 0.0, 0.0, -0.48230674862861633, 0.0],
        "bq": [0.30000001192092896, 0.0, 0.699999988079071],
        "gW": [
            -4.442752838134766,
            -7.152390480041504,
            -1.7778739929199219,
            -5.571469783782959,
            -2.194582223892212,
            -2.1353495121002197,
            -10.55950927734375,
            -2.7219202518463135,
        ],
        "gb": [-1.105927586555481, 2.9546263217926025, 2.051562786102295],
        "gx": [
            0.4319395124912262,
            0.0,
            -1.639411449432373,
            -0.643337070941925,
            -2.306900978088379,
            0.46474120020866394,
            -3.376126766204834,
            0.0,
        ],
    },
    "pfc": {
        "names": ["pruned_conv/W", "pruned_conv/W_q", "pruned_conv/b"],
        "shapes": [[4, 2, 3, 3], [4, 2, 3, 3], [4]],
        "loss": 32.29006576538086,
        "Wq": [
            0.0,
            0.12017419934272766,
            -0.12072120606899261,
            0.0,
            0.22686803340911865,
            0.22879992425441742,
            -0.21616841852664948,
            -0.16902340948581696,
        ],
        "gW": [
            9.502639770507812,
            12.76601505279541,
            -21.896169662475586,
            -2.8693695068359375,
            13.152982711791992,
            8.904529571533203,
            -4.556395053863525,
            -2.609070301055908,
        ],
        "gx": [
            0.5080493688583374,
            -0.43913209438323975,
            0.5927647352218628,
            -0.44797566533088684,
            0.16340649127960205,
            -0.3013741970062256,
            -0.09375300258398056,
            1.642585039138794,
        ],
    },
}

_XS = [0.5, -0.1, 0.3, -0.7, 0.2, 0.0, -0.3, 0.9, 0.05, -0.2]


def _close(got: Any, exp: Any) -> None:
    want = np.asarray(exp, np.float32).ravel()
    np.testing.assert_allclose(np.asarray(got).ravel()[: want.size], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rate", [0.0, 0.5, 0.9, 1.0])
def test_prune_as_nnabla(rate: float) -> None:
    # regression: F.prune raised AttributeError
    xs = np.array(_XS, np.float32)
    x = nn.Variable.from_numpy_array(xs, need_grad=True)
    y = F.prune(x, rate=rate)
    y.forward()
    x.grad.zero()
    y.backward(np.arange(10, dtype=np.float32) + 1)
    exp = _NNABLA[f"f{rate}"]
    np.testing.assert_array_equal(y.d, exp["y"])
    np.testing.assert_array_equal(x.g, exp["g"])
    # independent: the documented threshold (rate 1: everything pruned, as nnabla's)
    thr = np.sort(np.abs(xs))[int(9 * rate)]
    ref = np.zeros(10, np.float32) if rate == 1.0 else np.where(np.abs(xs) < thr, 0, xs)
    np.testing.assert_array_equal(y.d, ref)


def test_pruned_affine_as_nnabla() -> None:
    # regression: PF.pruned_affine raised AttributeError
    rs = np.random.RandomState(9)
    x = nn.Variable.from_numpy_array(rs.randn(4, 6).astype(np.float32), need_grad=True)
    y = PF.pruned_affine(
        x,
        3,
        rng=np.random.RandomState(2),
        rate_w=0.6,
        b_init=np.array([0.3, -0.1, 0.7], np.float32),
        rate_b=0.5,
        name="pa",
    )
    ps = nn.get_parameters(grad_only=False)
    exp = _NNABLA["pfa"]
    assert list(ps) == exp["names"]
    assert [v.need_grad for v in ps.values()] == exp["need_grad"]
    _close(ps["pa/pruned_affine/W_q"].d, exp["Wq_build"])
    loss = F.sum(y * y)
    loss.forward()
    loss.backward()
    assert float(loss.d) == pytest.approx(exp["loss"], rel=1e-5)
    _close(y.d, exp["y"])
    _close(ps["pa/pruned_affine/W_q"].d, exp["Wq"])
    _close(ps["pa/pruned_affine/b_q"].d, exp["bq"])
    _close(ps["pa/pruned_affine/W"].g, exp["gW"])
    _close(ps["pa/pruned_affine/b"].g, exp["gb"])
    _close(x.g, exp["gx"])


def test_pruned_convolution_as_nnabla() -> None:
    rs = np.random.RandomState(9)
    rs.randn(4, 6)  # (the draw of the affine run)
    x = nn.Variable.from_numpy_array(rs.randn(2, 4, 5, 5).astype(np.float32), need_grad=True)
    y = PF.pruned_convolution(
        x, 4, (3, 3), group=2, rng=np.random.RandomState(3), prune_b=False, rate_w=0.3
    )
    loss = F.sum(y * y)
    loss.forward()
    loss.backward()
    ps = nn.get_parameters(grad_only=False)
    exp = _NNABLA["pfc"]
    assert list(ps) == exp["names"]
    assert [list(v.shape) for v in ps.values()] == exp["shapes"]
    assert float(loss.d) == pytest.approx(exp["loss"], rel=1e-5)
    _close(ps["pruned_conv/W_q"].d, exp["Wq"])
    _close(ps["pruned_conv/W"].g, exp["gW"])
    _close(x.g, exp["gx"])


def test_prune_errors() -> None:
    x = nn.Variable((3,))
    with pytest.raises(ValueError, match=r"nnabla F\.prune: rate must be in \[0, 1\]"):
        F.prune(x, rate=1.5)
    with pytest.raises(NotImplementedError, match=r"nnabla F\.prune: outputs="):
        F.prune(x, outputs=[np.zeros(3, np.float32)])
    with pytest.raises(NotImplementedError, match=r"channel_last=True is not supported"):
        PF.pruned_convolution(nn.Variable((1, 5, 5, 3)), 2, (3, 3), channel_last=True)
    with pytest.raises(ValueError, match=r"nnabla PF\.pruned_convolution: group must be"):
        PF.pruned_convolution(nn.Variable((1, 3, 5, 5)), 2, (3, 3), group=1.0)
