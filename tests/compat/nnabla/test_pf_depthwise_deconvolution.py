"""PF.depthwise_deconvolution as nnabla 1.39's: parameter names and shapes, the initial weights
drawn from the same rng (Glorot limits of (inmaps, inmaps, kernel)), the output, loss and
gradients; base_axis, with_bias and divisor; errors naming the function.
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
    "dd": {
        "names": ["dd/depthwise_deconv/W", "dd/depthwise_deconv/b"],
        "shapes": [[4, 3, 3], [2]],
        "W": [
            -0.2446185201406479,
            0.1616111844778061,
            -0.03555944561958313,
            0.1290176808834076,
            0.2759673595428467,
            0.022225601598620415,
        ],
        "yshape": [2, 2, 7, 7],
        "loss": 37.08587646484375,
        "gW": [
            1.6487840414047241,
            -5.058837890625,
            1.6023564338684082,
            -2.9807116985321045,
            -1.6410040855407715,
            -2.9200563430786133,
        ],
        "gb": [-8.431367874145508, 1.0143756866455078],
        "gx": [
            -0.06515449285507202,
            -0.124669149518013,
            -0.12040230631828308,
            -0.10130034387111664,
            0.07689514756202698,
            0.12828482687473297,
            0.0799381285905838,
            0.4161721467971802,
        ],
    },
    "dd2": {
        "names": ["depthwise_deconv/W"],
        "shapes": [[4, 2]],
        "y": [
            0.0,
            -0.02450374886393547,
            0.08898229151964188,
            0.08560823649168015,
            -0.09330481290817261,
            -0.2139958143234253,
            0.17546527087688446,
            0.008619684725999832,
            -0.6068605184555054,
            0.2653222978115082,
            0.44917577505111694,
            -0.838376522064209,
            0.2846696078777313,
            1.1679623126983643,
            -1.0698925256729126,
            -0.3585236668586731,
            1.4418373107910156,
            -0.5677086114883423,
            -0.40898028016090393,
            1.715712308883667,
            0.1161336824297905,
            -0.47778135538101196,
            0.9949837327003479,
        ],
        "yshape": [2, 4, 4, 5],
    },
}


def _x() -> nn.Variable:
    data = np.arange(2 * 4 * 4 * 4, dtype=np.float32).reshape(2, 4, 4, 4) / 60
    return nn.Variable.from_numpy_array(data, need_grad=True)


def test_depthwise_deconvolution_as_nnabla() -> None:
    # regression: PF.depthwise_deconvolution raised AttributeError
    x = _x()
    y = PF.depthwise_deconvolution(
        x, (3, 3), pad=(1, 1), stride=(2, 2), divisor=2, rng=np.random.RandomState(7), name="dd"
    )
    loss = F.sum(y * y)
    loss.forward()
    loss.backward()
    ps = nn.get_parameters()
    exp = _NNABLA["dd"]
    assert list(ps) == exp["names"]
    assert [list(v.shape) for v in ps.values()] == exp["shapes"]
    assert list(y.shape) == exp["yshape"]
    w = ps["dd/depthwise_deconv/W"]
    np.testing.assert_allclose(w.d.ravel()[:6], exp["W"], rtol=1e-6)
    assert float(loss.d) == pytest.approx(exp["loss"], rel=1e-6)
    np.testing.assert_allclose(w.g.ravel()[:6], exp["gW"], rtol=1e-5)
    np.testing.assert_allclose(ps["dd/depthwise_deconv/b"].g, exp["gb"], rtol=1e-5)
    np.testing.assert_allclose(x.g.ravel()[::5][:8], exp["gx"], rtol=1e-5)
    lim = np.sqrt(6.0 / (9 * 4 + 9 * 4))  # calc_uniform_lim_glorot(4, 4, (3, 3))
    assert np.abs(w.d).max() <= lim


def test_depthwise_deconvolution_base_axis_without_bias_as_nnabla() -> None:
    y = PF.depthwise_deconvolution(
        _x(), (2,), base_axis=2, with_bias=False, rng=np.random.RandomState(3)
    )
    y.forward()
    ps = nn.get_parameters()
    exp = _NNABLA["dd2"]
    assert list(ps) == exp["names"]
    assert [list(v.shape) for v in ps.values()] == exp["shapes"]
    assert list(y.shape) == exp["yshape"]
    np.testing.assert_allclose(y.d.ravel()[::7], exp["y"], rtol=1e-5, atol=1e-6)


def test_depthwise_deconvolution_errors() -> None:
    with pytest.raises(ValueError, match=r"nnabla PF\.depthwise_deconvolution: base_axis=4"):
        PF.depthwise_deconvolution(_x(), (3, 3), base_axis=4)
    with pytest.raises(TypeError, match=r"nnabla PF\.depthwise_deconvolution: kernel must be"):
        PF.depthwise_deconvolution(_x(), 3)
