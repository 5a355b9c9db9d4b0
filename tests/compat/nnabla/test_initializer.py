"""``gradhub_compat.nnabla.initializer`` and ``.testing``: nnabla 1.39's modules of the same names
(values recorded with nnabla 1.39.0)."""

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.initializer as I
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest
from gradhub_compat.nnabla.testing import assert_allclose


def test_constant_initializer_in_affine_gives_nnabla_hessian():
    # nnabla's test_compute_simple_hessian network: W = 1, b = 1, loss = sum((x W + b)^2)
    state = nn.Variable((1, 2))
    out = PF.affine(
        state, 1, w_init=I.ConstantInitializer(value=1.0), b_init=I.ConstantInitializer(value=1.0)
    )
    params = list(nn.get_parameters().values())
    assert [p.d.tolist() for p in params] == [[[1.0], [1.0]], [1.0]]
    import gradhub_compat.nnabla.functions as F

    loss = F.sum(out**2)
    state.d = np.array([[1.0, 0.5]])
    grads = nn.grad([loss], params)
    F.sink(*grads).forward()
    # d loss / dW = 2 (x W + b) x = 2 * 2.5 * [1, 0.5]; d loss / db = 5 (nnabla: same)
    assert grads[0].d.ravel().tolist() == [5.0, 2.5]
    assert grads[1].d.tolist() == [5.0]


def test_std_and_limit_formulas_match_nnabla():
    # nnabla 1.39: calc_normal_std_he_forward(3, 5, (3, 3)) = 0.27216552697590868 ...
    assert I.calc_normal_std_he_forward(3, 5, (3, 3)) == pytest.approx(0.27216552697590868)
    assert I.calc_normal_std_he_backward(3, 5, (3, 3)) == pytest.approx(0.21081851067789195)
    assert I.calc_normal_std_glorot(3, 5, (3, 3)) == pytest.approx(0.16666666666666666)
    assert I.calc_uniform_lim_glorot(3, 5, (3, 3)) == pytest.approx(
        (-0.28867513459481287, 0.28867513459481287)
    )


def test_range_uniform_int_and_orthogonal():
    assert I.RangeInitializer(1, 2)((2, 3)).tolist() == [[1, 3, 5], [1, 3, 5]]
    ints = I.UniformIntInitializer((-1, 2), rng=np.random.RandomState(0))((50,))
    assert ints.dtype.kind == "i" and set(ints.tolist()) == {-1, 0, 1}
    q = I.OrthogonalInitializer(2.0, rng=np.random.RandomState(0))((3, 4))
    assert q.dtype == np.float32
    np.testing.assert_allclose(q @ q.T, 4.0 * np.eye(3), atol=1e-5)


def test_base_initializer_subclass_and_missing_call():
    class Twos(I.BaseInitializer):
        def __call__(self, shape):
            return np.full(shape, 2.0)

    PF.affine(nn.Variable((1, 2)), 1, w_init=Twos(), name="t")
    assert nn.get_parameters()["t/affine/W"].d.tolist() == [[2.0], [2.0]]
    with pytest.raises(NotImplementedError, match="Bare must define __call__"):

        class Bare(I.BaseInitializer):
            pass

        Bare()((2,))


def test_testing_assert_allclose_uses_nnabla_tolerances():
    assert_allclose(np.float32(-1.11700439453125), -1.1170042777186502)  # rtol 1e-5
    with pytest.raises(AssertionError):
        assert_allclose(1.0, 1.001)
