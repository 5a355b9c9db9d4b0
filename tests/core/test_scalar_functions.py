"""The core's scalar functions (AddScalar, MulScalar, ...): ``val`` must be a real number;
numpy scalars and 0-d arrays are accepted."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest

V = gh.Variable


_SCALAR_FNS = [
    "add_scalar",
    "mul_scalar",
    "pow_scalar",
    "r_div_scalar",
    "r_pow_scalar",
    "equal_scalar",
    # gradhub-nn-ops' scalar functions
    *(
        pytest.param(name, marks=pytest.mark.nn_ops)
        for name in ("r_sub_scalar", "maximum_scalar", "minimum_scalar", "greater_scalar")
    ),
]


@pytest.mark.parametrize(
    "val",
    [None, 1j, np.complex64(1j), np.ones((3, 2)), np.array([1.0, 2.0]), "2", V(np.array(2.0))],
    ids=lambda v: type(v).__name__,
)
@pytest.mark.parametrize("fname", _SCALAR_FNS)
def test_scalar_functions_refuse_a_val_that_is_not_a_real_number(fname: str, val: object) -> None:
    x = V(np.array([1.0, 2.0]))
    fn = getattr(F, fname)
    with pytest.raises(TypeError, match=rf"{fname}\(\): argument 'val' must be a real number"):
        fn(x, val)
    with pytest.raises(TypeError, match=rf"{fname}\(\): argument 'val' must be a real number"):
        fn(x, val=val)


@pytest.mark.parametrize(
    ("fname", "ref"),
    [
        ("add_scalar", lambda x, v: x + v),
        ("mul_scalar", lambda x, v: x * v),
        ("pow_scalar", lambda x, v: x**v),
        ("r_div_scalar", lambda x, v: v / x),
        ("r_pow_scalar", lambda x, v: v**x),
    ],
)
@pytest.mark.parametrize(
    "val", [3, 2.5, True, np.float32(1.5), np.int64(2), np.array(0.5)], ids=repr
)
def test_scalar_functions_take_real_numbers_and_0d_arrays(
    fname: str, ref: object, val: object
) -> None:
    xd = np.array([0.5, 2.0])
    v = val[()] if isinstance(val, np.ndarray) else val
    x = V(xd)
    y = getattr(F, fname)(x, val)
    np.testing.assert_allclose(y.d, ref(xd, v))  # type: ignore[operator]
    assert y.dtype == np.float64
    y.sum().backward()  # the rule gets the scalar too: against float64 central differences
    h = 1e-6
    fd = (ref(xd + h, v) - ref(xd - h, v)) / (2 * h)  # type: ignore[operator]
    np.testing.assert_allclose(x.g, fd, rtol=1e-6, atol=1e-8)
