"""``gradhub_compat.nnabla.functions`` and ``parametric_functions``: results, operators included,
are nnabla Variables, parametric functions create nnabla parameters, and ``PF.embed`` takes
float32 Variables holding ids (nnabla's ``nn.Variable`` default dtype).
"""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest
from compat.nnabla.helpers import _var


def test_functions_return_nnabla_variables() -> None:
    x = _var([0.5, 1.0])
    y = F.sum(x * x, axis=0, keepdims=True)
    assert isinstance(y, nn.Variable)
    np.testing.assert_allclose(y.d, [1.25])
    np.testing.assert_array_equal(y.g, [0.0])  # nnabla semantics on results
    assert F.sum is F.sum  # cached wrapper
    assert "sum" in dir(F) and "constant" in dir(F)
    with pytest.raises(AttributeError, match="has no function 'no_such_function'"):
        _ = F.no_such_function
    c = F.constant(2.5, (2,))
    assert isinstance(c, nn.Variable) and c.need_grad is False
    np.testing.assert_array_equal(c.d, [2.5, 2.5])


def test_operators_return_nnabla_variables() -> None:
    x = _var([1.0, 2.0])
    results = [
        x + 1.0,
        1.0 + x,
        x - x,
        2.0 - x,
        x * x,
        x / 2.0,
        2.0 / x,
        x**2.0,
        -x,
        x[0],
        x.sum(),
        sum([x, x]),
    ]
    assert all(type(r) is nn.Variable for r in results)


def test_parametric_functions_create_nnabla_parameters() -> None:
    import gradhub_compat.nnabla.parametric_functions as PF

    x = nn.Variable((4, 3))
    with nn.parameter_scope("net"):
        h = PF.affine(x, 5, name="fc")
    assert isinstance(h, nn.Variable) and h.shape == (4, 5)
    params = nn.get_parameters()
    assert list(params) == ["net/fc/affine/W", "net/fc/affine/b"]
    assert params["net/fc/affine/W"].shape == (3, 5)
    assert all(isinstance(p, nn.Variable) for p in params.values())
    np.testing.assert_array_equal(params["net/fc/affine/b"].g, np.zeros(5))
    assert list(nn.get_parameters(path="net/fc")) == ["affine/W", "affine/b"]
    with nn.parameter_scope("net/fc"):
        assert list(nn.get_parameters()) == ["affine/W", "affine/b"]
    assert "affine" in dir(PF)
    with pytest.raises(AttributeError, match="has no function 'nope'"):
        _ = PF.nope
    nn.clear_parameters()
    assert nn.get_parameters() == {}


def test_nnabla_style_pf_embed_with_a_float32_variable() -> None:
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.parametric_functions as PF

    x = nn.Variable((2, 3))  # float32, as nnabla's nn.Variable
    x.d = np.array([[0, 1, 2], [3, 4, 1]])
    y = PF.embed(x, 5, 4)
    y.forward()
    assert y.shape == (2, 3, 4)
    assert np.isfinite(y.d).all()


def test_pf_depthwise_convolution_as_nnabla() -> None:
    # nnabla 1.39's values: the same input and rng give the same initial W, loss and gradients
    import gradhub_compat.nnabla.parametric_functions as PF

    nn.clear_parameters()
    x = nn.Variable.from_numpy_array(
        np.arange(2 * 3 * 5 * 5, dtype=np.float32).reshape(2, 3, 5, 5) / 50
    )
    rng = np.random.RandomState(7)
    y = PF.depthwise_convolution(x, (3, 3), pad=(1, 1), multiplier=2, rng=rng, name="dw")
    ps = nn.get_parameters()
    assert sorted(ps) == ["dw/depthwise_conv/W", "dw/depthwise_conv/b"]
    w = ps["dw/depthwise_conv/W"]
    assert w.shape == (6, 3, 3) and y.shape == (2, 6, 5, 5)
    np.testing.assert_allclose(
        w.d.ravel()[:4], [-0.23062855, 0.15236849, -0.03352577, 0.12163904], rtol=1e-6
    )
    loss = F.sum(y * y)
    loss.forward()
    loss.backward()
    assert float(loss.d) == pytest.approx(32.4231071472168, rel=1e-6)
    np.testing.assert_allclose(w.g.ravel()[:3], [5.8456984, 8.853213, 5.332874], rtol=1e-6)
    np.testing.assert_allclose(
        ps["dw/depthwise_conv/b"].g[:3], [4.8526883, -20.346897, 5.5431504], rtol=1e-6
    )
