"""The mxnet layer's ``gluon.utils``: ``split_data``, ``split_and_load`` and
``clip_global_norm``, with the results and messages of mxnet 1.9.1.
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet.gluon import utils


def test_split_data_and_load() -> None:
    x = mx.nd.array(np.arange(10).reshape(5, 2))
    parts = utils.split_data(x, 2, even_split=False)
    # mxnet 1.9.1: the first part takes the extra row
    assert [p.shape for p in parts] == [(3, 2), (2, 2)]
    np.testing.assert_array_equal(parts[1].asnumpy(), [[6, 7], [8, 9]])
    cols = utils.split_data(mx.nd.ones((2, 4)), 2, batch_axis=1)
    assert [p.shape for p in cols] == [(2, 2), (2, 2)]
    with pytest.raises(ValueError, match=r"data with shape \(5, 2\) cannot be evenly split into 2"):
        utils.split_data(x, 2)
    loaded = utils.split_and_load(np.ones((4, 2)), [mx.cpu(0), mx.cpu(1)])
    assert [p.context for p in loaded] == [mx.cpu(0), mx.cpu(1)]
    assert utils.split_and_load(x, [mx.cpu(0)])[0].shape == (5, 2)


def test_clip_global_norm_as_mxnet() -> None:
    arrays = [mx.nd.array([3.0, 4.0]), mx.nd.array([12.0])]
    norm = utils.clip_global_norm(arrays, 6.5)
    # mxnet 1.9.1: 13.0, [1.5, 2.0], [6.0]
    assert norm == 13.0
    np.testing.assert_allclose(arrays[0].asnumpy(), [1.5, 2.0], rtol=1e-6)
    np.testing.assert_allclose(arrays[1].asnumpy(), [6.0], rtol=1e-6)
    small = [mx.nd.array([0.3, 0.4])]
    assert abs(utils.clip_global_norm(small, 1.0) - 0.5) < 1e-7
    np.testing.assert_array_equal(small[0].asnumpy(), np.array([0.3, 0.4], np.float32))
    nd_norm = utils.clip_global_norm([mx.nd.array([3.0, 4.0])], 10.0, check_isfinite=False)
    assert isinstance(nd_norm, mx.NDArray) and nd_norm.asscalar() == 5.0
    with pytest.warns(UserWarning, match="nan or inf is detected"):
        utils.clip_global_norm([mx.nd.array([np.inf])], 1.0)
