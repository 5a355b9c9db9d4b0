"""Complex numbers are refused everywhere: Variable data, ``.d``/``.g`` setters, operators,
functions and the seeds of ``backward``/``grad``."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest

V = gh.Variable


_COMPLEX = "complex data"


@pytest.mark.parametrize("need_grad", [True, False])
def test_variable_refuses_complex_data(need_grad: bool) -> None:
    with pytest.raises(TypeError, match=r"Variable\(data\): complex data \(dtype complex128\)"):
        V(np.array([1 + 2j]), need_grad=need_grad)
    with pytest.raises(TypeError, match=r"Variable\(data\): complex"):
        V(1j, need_grad=need_grad)


@pytest.mark.parametrize(
    "value", [np.array([1 + 5j, 2]), 1j, np.complex64(1j), [1j, 2.0]], ids=repr
)
@pytest.mark.parametrize("attr", ["d", "g"])
def test_data_and_grad_setters_refuse_complex_values(attr: str, value: object) -> None:
    x = V(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match=rf"Variable\.{attr}: {_COMPLEX}"):
        setattr(x, attr, value)
    np.testing.assert_array_equal(x.d, [1.0, 2.0])
    assert x.g is None


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x * np.complex128(2j),
        lambda x: x + np.complex64(1j),
        lambda x: x + 1j,
        lambda x: 1j * x,
        lambda x: x / np.complex64(1j),
        lambda x: x - np.complex128(1j),
        lambda x: x**1j,
        lambda x: x * np.array([1j, 1j]),
    ],
)
def test_operators_refuse_complex_operands(fn: object) -> None:
    x = V(np.array([1.0, 2.0], np.float32))
    with pytest.raises(TypeError, match=rf"\w+2\(\): input 'x[01]': {_COMPLEX}"):
        fn(x)  # type: ignore[operator]


@pytest.mark.nn_ops
def test_functions_refuse_complex_arrays() -> None:
    with pytest.raises(TypeError, match=rf"sigmoid\(\): input 'x': {_COMPLEX}"):
        F.sigmoid(np.array([1 + 2j]))
    with pytest.raises(TypeError, match=rf"add2\(\): input 'x1': {_COMPLEX}"):
        F.add2(V(np.ones(2)), np.array([1j, 0]))
    with pytest.raises(TypeError, match=f"as_variable: {_COMPLEX}"):
        gh.as_variable(np.array([1j]))


@pytest.mark.parametrize("seed", [np.array([1j, 1j]), 1j, np.complex128(1j)], ids=repr)
def test_backward_and_grad_refuse_complex_seeds(seed: object) -> None:
    x = V(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match=f"backward: grad: {_COMPLEX}"):
        (x * x).backward(seed)
    assert x.g is None
    with pytest.raises(TypeError, match=rf"grad: grad_outputs\[0\]: {_COMPLEX}"):
        gh.grad([x * x], [x], grad_outputs=[seed])
    with pytest.raises(TypeError, match=rf"grad: grad_inputs\[0\]: {_COMPLEX}"):
        gh.grad([x * x], [x], grad_inputs=[seed])
