"""An nnabla program using the array functions (``cumsum``, ``sort``, ``top_k_data``,
``gather_nd``, ``matrix_diag_part``, ``categorical_cross_entropy``, ``top_n_error``) runs
unchanged on the nnabla layer; the expected values are nnabla 1.39's outputs for this program
(recorded with nnabla 1.39.0, CPU context)."""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np

X = np.array(
    [[0.3, -1.2, 2.0, 0.7], [1.5, 0.1, -0.4, 0.9], [-0.6, 0.8, 1.1, -2.0]], dtype=np.float32
)

# nnabla 1.39's outputs of ``program``
LOSS = 2.8264331817626953
ERR = [0.0, 1.0, 0.0]
GRAD = [
    [0.6000000238418579, 0.5483771562576294, 0.5358405709266663, 0.5565406084060669],
    [0.7600001096725464, 1.0119268894195557, 0.6130104064941406, 0.5601111650466919],
    [0.3199999928474426, 0.27918222546577454, 0.5039293766021729, 0.03788506239652634],
]
SORTED = [
    [1.7999999523162842, 1.0999999046325684, 0.30000001192092896, -0.9000000357627869],
    [2.0999999046325684, 1.600000023841858, 1.5, 1.2000000476837158],
    [1.2999999523162842, 0.19999998807907104, -0.6000000238418579, -0.7000000476837158],
]


def program() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The nnabla program, written against ``nn`` and ``F`` as a user would."""
    x = nn.Variable.from_numpy_array(X, need_grad=True)
    t = nn.Variable.from_numpy_array(np.array([[2], [0], [1]]))
    c = F.cumsum(x, axis=1)
    s = F.sort(c, axis=1, reverse=True)
    top = F.top_k_data(c, 2)
    p = F.softmax(c, axis=1)
    idx = nn.Variable.from_numpy_array(np.array([[0, 1, 2]]))
    picked = F.reshape(F.gather_nd(c, idx), (3, 2, 2))
    loss = (
        F.mean(F.categorical_cross_entropy(p, t))
        + 0.1 * F.sum(top * top)
        + 0.01 * F.sum(F.matrix_diag_part(picked))
    )
    err = F.top_n_error(p, t, n=2)
    loss.forward()
    err.forward()
    loss.backward()
    s.forward()
    return loss.d.copy(), err.d.copy(), x.g.copy(), s.d.copy()


def test_array_functions_program_matches_nnabla() -> None:
    loss, err, grad, srt = program()
    np.testing.assert_allclose(float(loss), LOSS, rtol=1e-6)
    assert err.ravel().tolist() == ERR
    np.testing.assert_allclose(grad, GRAD, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(srt, SORTED, rtol=1e-6)


def test_array_functions_follow_new_data_on_forward() -> None:
    # the indices are inputs of the graph: a new .d is honoured by forward(), as in nnabla
    data = nn.Variable.from_numpy_array(np.arange(1.0, 11.0).reshape(2, 5), need_grad=True)
    idx = nn.Variable.from_numpy_array(np.array([[0], [0]]))
    y = F.gather_nd(data, idx)
    y.forward()
    assert y.d.tolist() == [1.0]
    idx.d = np.array([[1], [4]])
    y.forward()
    assert y.d.tolist() == [10.0]  # nnabla 1.39's docstring example
    y.backward()
    assert data.g[1, 4] == 1.0 and data.g.sum() == 1.0
