"""The nnabla layer's batch_normalization with ``None`` for beta, gamma or the statistics."""

from __future__ import annotations

import numpy as np
import pytest
from numeric_helpers import batch_normalization_reference as _bn_np


def test_batch_normalization_none_through_nnabla_compat() -> None:
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.functions as NF

    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (4, 3))
    xv = nn.Variable.from_numpy_array(x)
    y = NF.batch_normalization(xv, None, None, None, None)
    y.forward()
    np.testing.assert_allclose(y.d, _bn_np(x, None, None, (0,)), rtol=1e-6, atol=1e-6)
    assert isinstance(y, nn.Variable)
    with pytest.raises(ValueError, match="'mean'"):
        NF.batch_normalization(xv, None, None, None, None, batch_stat=False)
