"""rand, randn and randint (gradhub_nn_ops.stochastic): dtypes, ranges, seeds and
errors (nnabla 1.39's conventions).
"""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest


def test_random_sources() -> None:
    a = F.rand(-1, 2, shape=(2, 3), seed=3)
    assert a.d.dtype == np.float32 and a.shape == (2, 3) and not a.need_grad
    assert ((a.d >= -1) & (a.d < 2)).all()
    np.testing.assert_array_equal(a.d, F.rand(-1, 2, shape=(2, 3), seed=3).d)
    n = F.randn(1.0, 0.5, shape=(1000,), seed=0)
    assert n.d.dtype == np.float32 and abs(float(n.d.mean()) - 1.0) < 0.1
    i = F.randint(2, 5, shape=(50,), seed=1)
    assert i.d.dtype == np.int32 and set(i.d.tolist()) == {2, 3, 4}
    gh.seed(11)
    first = F.rand(shape=(4,)).d
    gh.seed(11)
    np.testing.assert_array_equal(F.rand(shape=(4,)).d, first)
    assert F.rand().shape == ()
    with pytest.raises(ValueError, match="high"):
        F.randint(3, 3)
