"""``chainer.config.dtype`` and the parameters of gradhub's chainer layer: chainer 7.8.1 makes
the parameters of links (and the arrays of initializers without a dtype) in
``chainer.config.dtype``; the layer makes float32 parameters only, so under another
``config.dtype`` it raises NotImplementedError naming the page (before: float32 parameters,
silently)."""

from __future__ import annotations

import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import initializers


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
@pytest.mark.parametrize(
    "make",
    [
        lambda: L.Linear(2, 3),
        lambda: L.Linear(2, 3, initialW=1.0, initial_bias=2.0),
        lambda: L.Maxout(2, 3, 4),
        lambda: L.Convolution2D(1, 2, 3),
        lambda: L.LayerNormalization(3),
        lambda: L.BatchNormalization(3),
    ],
    ids=["Linear", "Linear_scalar", "Maxout", "Convolution2D", "LayerNormalization", "BN"],
)
def test_links_refuse_other_config_dtype(make: object, dtype: type) -> None:
    # chainer 7.8.1 makes W and b of `dtype` here (float16 or float64)
    with chainer.using_config("dtype", dtype):
        with pytest.raises(NotImplementedError, match="migration-chainer"):
            make()  # type: ignore[operator]


def test_generate_array_follows_config_dtype() -> None:
    # chainer 7.8.1: generate_array(Constant(1.0), (2,), numpy) is float32 by default
    a = initializers.generate_array(initializers.Constant(1.0), (2,), np)
    assert a.dtype == np.float32
    # an explicit dtype is kept whatever config.dtype is
    with chainer.using_config("dtype", np.float64):
        b = initializers.generate_array(initializers.Constant(1.0), (2,), np, dtype=np.float64)
        assert b.dtype == np.float64
        with pytest.raises(NotImplementedError, match="migration-chainer"):
            initializers.generate_array(initializers.Constant(1.0), (2,), np)


def test_float32_config_dtype_is_default() -> None:
    with chainer.using_config("dtype", np.float32):
        layer = L.Linear(2, 3)
    assert layer.W.dtype == np.float32 and layer.b.dtype == np.float32
