"""``gradhub.func.functional_call`` (CONTRACT section 3): substituted parameters are used where
the scope's parameters are read (parametric functions included), the call is differentiable with
respect to them (a MAML meta-gradient to second order against a closed form and central
differences), partial substitution, names relative to the current scope, the table unchanged
after success and after an exception, and the bad inputs with their messages."""

from __future__ import annotations

from typing import Any

import gradhub as gh
import gradhub.func as ghf
import numpy as np
import pytest
from gradhub.parameters import parameter_table


def _param(name: str, value: np.ndarray) -> gh.Variable:
    return gh.get_parameter_or_create(name, value.shape, lambda s: value.copy())


def model(x: Any) -> Any:
    """y = sum((w * x + b)^2), reading its parameters from the scope as PF layers do."""
    w = _param("lin/w", np.ones(3))
    b = _param("lin/b", np.zeros(3))
    return ((w * x + b) ** 2.0).sum()


X = np.array([1.0, -2.0, 0.5])


def test_substituted_values_are_used_and_the_table_is_restored() -> None:
    model(X)
    before = list(parameter_table().items())
    w = np.array([2.0, 3.0, -1.0])
    y = ghf.functional_call(model, {"lin/w": w}, X)
    np.testing.assert_allclose(float(y.d), ((w * X) ** 2).sum())
    assert list(parameter_table().items()) == before  # same names, order and Variables
    y = ghf.functional_call(model, {"lin/w": w, "lin/b": np.ones(3)}, X)
    np.testing.assert_allclose(float(y.d), ((w * X + 1.0) ** 2).sum())


def test_the_table_is_restored_when_f_raises() -> None:
    model(X)
    before = list(parameter_table().items())

    def broken(x: Any) -> Any:
        model(x)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        ghf.functional_call(broken, {"lin/w": gh.Variable(np.zeros(3))}, X)
    assert list(parameter_table().items()) == before


def test_names_are_relative_to_the_current_scope() -> None:
    with gh.parameter_scope("net"):
        model(X)
        y = ghf.functional_call(model, {"lin/b": np.full(3, 2.0)}, X)
    np.testing.assert_allclose(float(y.d), ((X + 2.0) ** 2).sum())
    assert "net/lin/b" in parameter_table()


def test_differentiable_with_respect_to_substituted_variables_maml() -> None:
    """One inner SGD step w' = w - lr dL/dw, outer loss L(w') on other data; the meta-gradient
    dL(w')/dw needs the second derivative through the inner step."""
    model(X)
    lr = 0.1
    x_in, x_out = X, np.array([0.5, 1.0, 2.0])

    def outer(w: Any) -> Any:
        g = ghf.grad(lambda w: ghf.functional_call(model, {"lin/w": w}, x_in))(w)
        return ghf.functional_call(model, {"lin/w": w - g * lr}, x_out)

    w0 = np.array([1.0, 2.0, -0.5])
    meta = ghf.grad(outer)(w0)
    # closed form (b = 0): L(w) = sum (w x)^2, w' = w (1 - 2 lr x_in^2), L' = sum (w' x_out)^2
    c = 1 - 2 * lr * x_in**2
    np.testing.assert_allclose(meta.d, 2 * w0 * c**2 * x_out**2)
    eps = 1e-6
    fd = [
        (float(outer(w0 + eps * e).d) - float(outer(w0 - eps * e).d)) / (2 * eps) for e in np.eye(3)
    ]
    np.testing.assert_allclose(meta.d, fd, rtol=1e-6)
    w = gh.Variable(w0)
    y = outer(w)
    (gw,) = gh.grad([y], [w])
    np.testing.assert_allclose(gw.d, meta.d)


def test_unknown_names_and_bad_shapes_raise_naming_them() -> None:
    model(X)
    with pytest.raises(KeyError, match=r"functional_call: unknown parameter names 'lin/W', 'x'"):
        ghf.functional_call(model, {"lin/W": np.ones(3), "x": 1.0, "lin/w": np.ones(3)}, X)
    with pytest.raises(
        ValueError,
        match=r"functional_call: the value for parameter 'lin/b' has shape \(2,\) but the "
        r"parameter has shape \(3,\)",
    ):
        ghf.functional_call(model, {"lin/b": np.ones(2)}, X)
    with pytest.raises(TypeError, match=r"functional_call: params must be a mapping"):
        ghf.functional_call(model, [("lin/b", np.ones(3))], X)


@pytest.mark.nn_ops
def test_parametric_functions_use_the_substituted_weights() -> None:
    import gradhub.functions as F
    import gradhub.parametric_functions as PF

    rng = np.random.default_rng(0)
    x = gh.Variable(rng.standard_normal((4, 3)), need_grad=False)

    def net(x: Any) -> Any:
        h = F.tanh(PF.affine(x, 5, name="fc1"))
        return PF.affine(h, 1, name="fc2").sum()

    net(x)
    params = gh.get_parameters()
    assert list(params) == ["fc1/affine/W", "fc1/affine/b", "fc2/affine/W", "fc2/affine/b"]
    w1 = gh.Variable(rng.standard_normal((3, 5)))
    y = ghf.functional_call(net, {"fc1/affine/W": w1}, x)
    expected = (np.tanh(x.d @ w1.d + params["fc1/affine/b"].d) @ params["fc2/affine/W"].d).sum()
    np.testing.assert_allclose(float(y.d), expected + 4 * params["fc2/affine/b"].d.sum())
    (g,) = gh.grad([y], [w1])
    h = np.tanh(x.d @ w1.d + params["fc1/affine/b"].d)
    gh_ = np.ones((4, 1)) @ params["fc2/affine/W"].d.T * (1 - h**2)
    np.testing.assert_allclose(g.d, x.d.T @ gh_, rtol=1e-10)
    assert gh.get_parameters()["fc1/affine/W"] is params["fc1/affine/W"]
