"""``nn.grad`` of the nnabla layer: gradients with zeros for unreachable inputs, differentiable
results re-executed by ``forward()``, sums over outputs, the forms and errors of
``grad_outputs``, ``persistent_outputs``, ``bind_grad_output``, parameters given as dict values,
and a graph built before its leaves got data.
"""

from __future__ import annotations

import gradhub as gh
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as NF
import numpy as np
import pytest
from compat.nnabla.helpers import _var


def test_nnabla_grad_after_feeding_data_to_a_built_graph() -> None:
    """nnabla's static style: build, then x.d = data, then nn.grad and forward(). The engine
    refuses to differentiate a graph whose leaf data was replaced; nn.grad recomputes it first,
    as nnabla's forward() would."""
    x = nn.Variable((2,), need_grad=True)
    y = NF.sin(x) * NF.sin(x)
    v = np.array([0.3, 1.2])
    x.d = v
    (g,) = nn.grad([y], [x])
    g.forward()
    np.testing.assert_allclose(g.d, 2 * np.sin(v) * np.cos(v), rtol=1e-6)
    np.testing.assert_allclose(y.d, np.sin(v) ** 2, rtol=1e-6)


def test_grad_returns_gradients_and_zeros_for_unreachable_inputs() -> None:
    x = _var([1.0, 2.0])
    z = nn.Variable((2,), need_grad=True)
    c = _var([5.0, 5.0], need_grad=False)
    y = x * x * x + c
    gx, gz, gc = nn.grad([y], [x, z, c])
    assert all(isinstance(g, nn.Variable) for g in (gx, gz, gc))
    np.testing.assert_allclose(gx.d, [3.0, 12.0])
    # nnabla 1.39's outputs: a 0-d 0.0 for an unreached input and one that needs no gradient
    np.testing.assert_array_equal(gz.d, 0.0)
    np.testing.assert_array_equal(gc.d, 0.0)
    assert gz.shape == () and gc.shape == ()
    assert gz.parent is None  # not connected to the graph
    np.testing.assert_array_equal(x.g, [0.0, 0.0])  # .g untouched


def test_grad_is_differentiable_and_reexecutes_with_forward() -> None:
    x = _var([1.0, 2.0])
    y = x * x * x
    (dx,) = nn.grad(y, x)  # single Variables are accepted
    (ddx,) = nn.grad([dx], [x])
    np.testing.assert_allclose(ddx.d, [6.0, 12.0])
    x.d = [3.0, 4.0]
    ddx.forward()
    np.testing.assert_allclose(ddx.d, [18.0, 24.0])
    ddx.backward()  # third derivative 6 per element
    np.testing.assert_allclose(x.g, [6.0, 6.0])


def test_grad_sums_over_outputs() -> None:
    x = _var([1.0, 2.0])
    (g,) = nn.grad([x * x, x * 3.0], [x])
    np.testing.assert_allclose(g.d, [5.0, 7.0])


@pytest.mark.parametrize("kind", ["scalar", "numpy", "NdArray", "Variable", "list"])
def test_grad_outputs_forms(kind: str) -> None:
    x = _var([1.0, 2.0])
    y = x * x
    go: object = {
        "scalar": 3.0,
        "numpy": np.array([3.0, 3.0]),
        "NdArray": nn.Variable.from_numpy_array(np.array([3.0, 3.0])).data,
        "Variable": _var([3.0, 3.0], need_grad=False),
        "list": [3.0],
    }[kind]
    (g,) = nn.grad([y], [x], grad_outputs=go)
    np.testing.assert_allclose(g.d, [6.0, 12.0])


def test_grad_outputs_errors() -> None:
    x = _var([1.0, 2.0])
    y = x * x
    with pytest.raises(ValueError, match=r"grad_outputs\[0\] has shape \(3,\)"):
        nn.grad([y], [x], grad_outputs=[np.ones(3)])
    with pytest.raises(ValueError, match="grad_outputs has 2 entries but there are 1 outputs"):
        nn.grad([y], [x], grad_outputs=[1.0, 1.0])
    with pytest.raises(ValueError, match=r"grad_outputs\[0\] must be None, a scalar"):
        nn.grad([y], [x], grad_outputs=["one"])
    with pytest.raises(ValueError, match="one entry per output"):
        nn.grad([y, y], [x], grad_outputs=2.0)


def test_grad_with_a_variable_grad_output_is_differentiable_in_it() -> None:
    x = _var([1.0, 2.0])
    v = _var([1.0, 1.0])
    (g,) = nn.grad([x * x], [x], grad_outputs=[v])  # 2 x v
    (gv,) = nn.grad([g], [v])
    np.testing.assert_allclose(gv.d, [2.0, 4.0])


def test_grad_rejects_non_variables() -> None:
    x = _var([1.0])
    with pytest.raises(ValueError, match=r"nnabla.grad: outputs\[0\] must be a Variable"):
        nn.grad([np.ones(1)], [x])
    with pytest.raises(ValueError, match=r"nnabla.grad: inputs\[1\] must be a Variable"):
        nn.grad([x * 2.0], [x, 3.0])


def test_grad_persistent_outputs() -> None:
    x = _var([1.0, 2.0])
    y = x * x
    (g,) = nn.grad([y], [x], persistent_outputs=[True])
    np.testing.assert_allclose(g.d, [2.0, 4.0])
    with pytest.raises(ValueError, match="persistent_outputs has 2 flags but there are 1"):
        nn.grad([y], [x], persistent_outputs=[True, False])


def test_grad_bind_grad_output_binds_reached_inputs_only() -> None:
    x = _var([1.0, 2.0])
    z = _var([0.0, 0.0])
    y = x * x * x
    gx, _ = nn.grad([y], [x, z], bind_grad_output=True)
    np.testing.assert_allclose(x.g, [3.0, 12.0])
    np.testing.assert_array_equal(z.g, [0.0, 0.0])
    x.d = [2.0, 3.0]
    gx.forward()  # the bound gradient follows re-execution
    np.testing.assert_allclose(x.g, [12.0, 27.0])


def test_grad_accepts_dict_values_of_parameters() -> None:
    with nn.parameter_scope("p"):
        w = gh.get_parameter_or_create("w", (2,), lambda s: np.full(s, 2.0, np.float32))
    y = w * w
    (g,) = nn.grad([y], nn.get_parameters().values())
    np.testing.assert_allclose(g.d, [4.0, 4.0])
