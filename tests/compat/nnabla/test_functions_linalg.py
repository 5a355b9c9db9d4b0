"""nnabla's batch linear algebra (F.batch_inv, batch_det, batch_logdet, batch_cholesky): values,
gradients and second derivatives against nnabla 1.39 on the same inputs, the recorded function
and its arguments, and nnabla's shape checks."""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest

A = np.array(
    [
        [[2.0, 0.5, -0.3], [0.1, 1.5, 0.4], [-0.2, 0.3, 1.8]],
        [[0.4, 1.2, 0.0], [1.1, -0.3, 0.5], [0.2, 0.6, 1.0]],
    ],
    np.float32,
)  # determinants 4.931 and -1.44
S = np.array(
    [
        [[4.0, 1.0, 0.5], [1.0, 3.0, -0.4], [0.5, -0.4, 2.0]],
        [[2.0, -0.6, 0.3], [-0.6, 1.5, 0.2], [0.3, 0.2, 1.2]],
    ],
    np.float32,
)  # symmetric positive definite
G3 = np.array(
    [
        [[0.3, -0.2, 0.5], [0.1, 0.4, -0.6], [-0.3, 0.2, 0.7]],
        [[-0.5, 0.1, 0.2], [0.6, -0.4, 0.3], [0.2, 0.8, -0.1]],
    ],
    np.float32,
)
G1 = np.array([0.7, -1.3], np.float32)

# nnabla 1.39: (y.d, x.g after y.backward(g)) on the inputs above
EXPECTED: dict[tuple[str, bool], tuple[Any, Any]] = {
    ("batch_inv", False): (
        [
            [[0.5232205, -0.20077065, 0.1318191], [-0.05272764, 0.71790713, -0.16832286]]
            + [[0.06692354, -0.14195904, 0.59825593]],
            [[0.41666663, 0.8333333, -0.41666666], [0.69444436, -0.27777776, 0.13888888]]
            + [[-0.5, 0.0, 1.0]],
        ],
        [
            [[-0.13625182, 0.14484248, -0.22822022], [0.11479652, -0.31787318, 0.41601232]]
            + [[0.01002932, 0.07168238, -0.3362118]],
            [[0.6273148, -0.2993827, -0.2875], [0.11574072, 0.4475308, -0.375]]
            + [[-0.8495371, -0.12654316, 0.38750002]],
        ],
    ),
    ("batch_det", False): (
        [4.9309998, -1.44],
        [
            [[1.806, -0.182, 0.23099998], [-0.69299996, 2.478, -0.48999998]]
            + [[0.45499995, -0.581, 2.0649998]],
            [[0.7799999, 1.2999998, -0.936], [1.56, -0.52, 0.0], [-0.78, 0.26, 1.872]],
        ],
    ),
    ("batch_logdet", False): (
        [1.5955417, 0.36464316],
        [
            [[0.36625433, -0.03690935, 0.04684648], [-0.14053945, 0.502535, -0.09937133]]
            + [[0.09227337, -0.117826, 0.41877913]],
            [[-0.54166657, -0.9027776, 0.65], [-1.0833333, 0.36111107, -0.0]]
            + [[0.5416666, -0.18055554, -1.3]],
        ],
    ),
    ("batch_cholesky", False): (
        [
            [[2.0, 0.0, 0.0], [0.5, 1.6583124, 0.0], [0.25, -0.31658688, 1.3554604]],
            [[1.4142135, 0.0, 0.0], [-0.4242641, 1.1489125, 0.0]]
            + [[0.21213205, 0.25241262, 1.0446472]],
        ],
        [
            [[0.09785496, -0.02408167, -0.13467634], [-0.02408167, 0.14152777, 0.10959783]]
            + [[-0.13467634, 0.10959783, 0.25821486]],
            [[-0.17985986, 0.08246844, 0.18549135], [0.08246844, -0.25287652, 0.3586707]]
            + [[0.18549135, 0.3586707, -0.04786305]],
        ],
    ),
    ("batch_cholesky", True): (
        [
            [[2.0, 0.5, 0.25], [0.0, 1.6583124, -0.31658688], [0.0, 0.0, 1.3554604]],
            [[1.4142135, -0.4242641, 0.21213205], [0.0, 1.1489125, 0.25241262]]
            + [[0.0, 0.0, 1.0446472]],
        ],
        [
            [[0.07365133, -0.05741829, 0.12562595], [-0.05741829, 0.09547877, -0.13161126]]
            + [[0.12562595, -0.13161126, 0.25821486]],
            [[-0.20900664, -0.04732704, 0.12021223], [-0.04732704, -0.2050711, 0.14107361]]
            + [[0.12021223, 0.14107361, -0.04786305]],
        ],
    ),
}

NAMES = {
    "batch_inv": "BatchInv",
    "batch_det": "BatchDet",
    "batch_logdet": "BatchLogdet",
    "batch_cholesky": "BatchCholesky",
}


@pytest.mark.parametrize(("name", "upper"), list(EXPECTED))
def test_values_and_gradients_as_nnabla(name: str, upper: bool) -> None:
    inp = S if name == "batch_cholesky" else A
    x = nn.Variable.from_numpy_array(inp, need_grad=True)
    kw = {"upper": upper} if name == "batch_cholesky" else {}
    y = getattr(F, name)(x, **kw)
    y.forward()
    assert y.d.dtype == np.float32
    x.grad.zero()
    y.backward(G1 if y.ndim == 1 else G3)
    want_y, want_g = EXPECTED[(name, upper)]
    np.testing.assert_allclose(y.d, np.asarray(want_y), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.g, np.asarray(want_g), rtol=1e-4, atol=1e-6)
    assert y.parent.name == NAMES[name]
    assert y.parent.info.args == kw


def test_logdet_is_log_of_the_absolute_determinant() -> None:
    x = nn.Variable.from_numpy_array(A)
    y = F.batch_logdet(x)
    y.forward()
    np.testing.assert_allclose(y.d, np.log(np.abs(np.linalg.det(A.astype(np.float64)))), 1e-6)


# nnabla 1.39: d/dx sum(g * g) with g = d/dx sum(y * y), on A
SECOND = {
    "batch_inv": [
        [[-1.8449272, 2.8185453, -1.9711535], [3.900495, -6.4830284, 4.3487034]]
        + [[-2.7636633, 4.4480414, -3.2325935]],
        [[-63.43033, -16.346046, 79.64751], [-46.155632, -5.486286, 50.553215]]
        + [[88.83301, 18.017164, -108.56171]],
    ],
    "batch_det": [
        [[5324.9165, 52.7099, 273.12396], [-1325.119, 6381.705, -600.63904]]
        + [[807.8446, -867.7146, 5797.9307]],
        [[56.600983, 119.72689, -63.302868], [134.70107, -49.32403, 15.925248]]
        + [[-45.851444, 31.828377, 146.51228]],
    ],
}


@pytest.mark.parametrize("name", list(SECOND))
def test_second_derivatives_as_nnabla(name: str) -> None:
    x = nn.Variable.from_numpy_array(A, need_grad=True)
    y = getattr(F, name)(x)
    g = nn.grad([F.sum(y * y)], [x])[0]
    z = F.sum(g * g)
    z.forward()
    x.grad.zero()
    z.backward()
    np.testing.assert_allclose(x.g, np.asarray(SECOND[name]), rtol=2e-4)


def _fd_hessian_row(fn: Any, a: np.ndarray, w: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d/da <w, grad fn(a)> by float64 central differences of the gradient of fn."""
    out = np.zeros_like(a)
    for idx in np.ndindex(*a.shape):
        d = np.zeros_like(a)
        d[idx] = eps
        out[idx] = (np.sum(w * fn(a + d)) - np.sum(w * fn(a - d))) / (2 * eps)
    return out


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_second_derivative_by_finite_differences(upper: bool) -> None:
    # nnabla 1.39 raises for it (batch_cholesky_backward's signature); checked in float64
    import gradhub as gh
    import gradhub.functions as GF

    s64 = S.astype(np.float64)
    w = G3.astype(np.float64)

    def grad_of(a: np.ndarray) -> np.ndarray:
        x = gh.Variable(a)
        (g,) = gh.grad([GF.sum(GF.batch_cholesky(x, upper=upper) ** 2)], [x])
        return np.asarray(g.d)

    x = gh.Variable(s64)
    (g,) = gh.grad([GF.sum(GF.batch_cholesky(x, upper=upper) ** 2)], [x], create_graph=True)
    (h,) = gh.grad([GF.sum(g * gh.Variable(w, need_grad=False))], [x])
    # the gradient is the symmetric one: compare along symmetric directions
    fd = _fd_hessian_row(grad_of, s64, w)
    sym = lambda m: (m + np.swapaxes(m, -1, -2)) / 2  # noqa: E731
    np.testing.assert_allclose(sym(h.d), sym(fd), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(NAMES))
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 4), (2, 2, 3, 3)])
def test_shapes_checked_as_nnabla(name: str, shape: tuple[int, ...]) -> None:
    # nnabla 1.39 rejects these in setup (ndim == 3, square)
    x = nn.Variable.from_numpy_array(np.ones(shape, np.float32))
    with pytest.raises(ValueError, match=rf"nnabla F\.{name}: x must be a 3-d batch"):
        getattr(F, name)(x)


def test_singular_and_not_positive_definite_raise() -> None:
    # nnabla returns inf (batch_inv) and meaningless factors (batch_cholesky) here
    x = nn.Variable.from_numpy_array(np.ones((1, 2, 2), np.float32))
    with pytest.raises(ValueError, match="batch_inv: x holds a singular matrix"):
        F.batch_inv(x).forward()
    y = F.batch_det(x)
    y.forward()
    np.testing.assert_array_equal(y.d, [0.0])  # nnabla 1.39: [0.]
    neg = nn.Variable.from_numpy_array(-S)
    with pytest.raises(ValueError, match="batch_cholesky: x is not positive definite"):
        F.batch_cholesky(neg).forward()


def test_cholesky_reads_x_symmetrized() -> None:
    ns = S.astype(np.float64)
    ns[0, 0, 2] += 0.5  # not symmetric: nnabla reads the lower triangle only
    y = F.batch_cholesky(nn.Variable.from_numpy_array(ns))
    y.forward()
    sym = (ns + np.swapaxes(ns, 1, 2)) / 2
    np.testing.assert_allclose(y.d, np.linalg.cholesky(sym), rtol=1e-6)


def test_upper_must_be_bool() -> None:
    with pytest.raises(TypeError, match="batch_cholesky: upper must be a bool"):
        F.batch_cholesky(nn.Variable.from_numpy_array(S), upper="yes")


def test_ndarray_inputs() -> None:
    out = F.batch_inv(nn.NdArray.from_numpy_array(A))
    assert isinstance(out, nn.NdArray)
    np.testing.assert_allclose(out.data, np.linalg.inv(A), rtol=1e-5)
