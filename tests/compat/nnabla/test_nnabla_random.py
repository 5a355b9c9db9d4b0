"""``nn.random`` (``seed``, ``set_parameter_seed``, ``set_function_seed``, ``prng``, ``pseed``)
and ``nn.seed``: the parameters drawn after ``nn.random.seed(n)`` are nnabla 1.39's; the random
functions' draws repeat after the same seed (numpy's numbers, not nnabla's)."""

from __future__ import annotations

from collections.abc import Iterator

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest
from gradhub_nn_ops import parametric as _parametric
from gradhub_nn_ops import stochastic as _stochastic


@pytest.fixture(autouse=True)
def _kept_generators() -> Iterator[None]:
    saved = (list(_parametric._PRNG), list(_stochastic._GLOBAL_RNG), nn.random.pseed)
    yield
    _parametric._PRNG[:] = saved[0]
    _stochastic._GLOBAL_RNG[:] = saved[1]
    nn.random.__dict__["pseed"] = saved[2]


def _affine_w() -> np.ndarray:
    nn.clear_parameters()
    PF.affine(nn.Variable((2, 3)), 2, name="a")
    return nn.get_parameters()["a/affine/W"].d.ravel()[:3]


def test_seed_gives_nnabla_s_parameters() -> None:
    # regression: nn.random and nn.seed did not exist
    assert nn.seed is nn.random.seed
    nn.random.seed(5)
    assert nn.random.pseed == 5
    # nnabla 1.39: nn.random.seed(5); PF.affine(Variable((2, 3)), 2) -> W[:3]
    np.testing.assert_allclose(_affine_w(), [-0.60908246, 0.8122338, -0.6425461], rtol=1e-6)
    nn.random.prng = np.random.RandomState(5)  # nnabla 1.39: the same parameters
    np.testing.assert_allclose(_affine_w(), [-0.60908246, 0.8122338, -0.6425461], rtol=1e-6)
    nn.random.set_parameter_seed(9)
    assert nn.random.pseed == 9
    assert isinstance(nn.random.prng, np.random.RandomState)
    # nnabla 1.39: nn.random.prng.uniform(size=2) after set_parameter_seed(9)
    np.testing.assert_allclose(nn.random.prng.uniform(size=2), [0.01037415, 0.50187459], rtol=1e-6)


def test_function_seed_repeats_the_draws() -> None:
    def draws() -> np.ndarray:
        a = F.rand(shape=(3,))
        y = a * 1
        y.forward()
        first = y.d.copy()
        y.forward()
        return np.concatenate([first, y.d])

    nn.random.seed(7)
    one = draws()
    nn.random.seed(7, set_parameter_seed=False)
    np.testing.assert_array_equal(draws(), one)
    nn.random.set_function_seed(7)
    np.testing.assert_array_equal(draws(), one)
    assert nn.random.pseed == 7  # (set by the first seed call only)
    x = nn.Variable.from_numpy_array(np.tile(np.arange(5.0), (20, 1)))
    nn.random.seed(1)
    y = F.random_shift(x, (2,))
    y.forward()
    first = y.d.copy()
    nn.random.seed(1)
    z = F.random_shift(x, (2,))
    z.forward()
    np.testing.assert_array_equal(z.d, first)


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="seed_value"):
        nn.random.seed(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="RandomState"):
        nn.random.prng = np.random.default_rng(0)
