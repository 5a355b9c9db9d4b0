"""``out=`` of the elementwise ``mx.nd`` functions (``square``, ``sqrt``, ``clip``, ``log1p``...
as mxnet's optimizer reference code uses them, ``mx.nd.square(g[row], out=g[row])``): the
result is written into ``out`` (a view writes through to its base) and ``out`` is returned.
Expected values are mxnet 1.9.1's outputs."""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

nd = mx.nd


def test_square_out_row_view_writes_into_the_base() -> None:
    a = nd.array([[1.0, -2.0], [3.0, 4.0]])
    r = nd.square(a[1], out=a[1])
    np.testing.assert_array_equal(a.asnumpy(), [[1.0, -2.0], [9.0, 16.0]])  # mxnet 1.9.1
    np.testing.assert_array_equal(r.asnumpy(), [9.0, 16.0])


def test_clip_out_is_returned() -> None:
    a = nd.array([[1.0, -2.0], [9.0, 16.0]])
    r = nd.clip(a, 0, 5, out=a)
    assert r is a  # mxnet 1.9.1
    np.testing.assert_array_equal(a.asnumpy(), [[1.0, 0.0], [5.0, 5.0]])  # mxnet 1.9.1


def test_unary_out() -> None:
    b = nd.array([1.0, 4.0])
    nd.sqrt(b, out=b)
    nd.log1p(b, out=b)
    np.testing.assert_allclose(b.asnumpy(), np.log1p([1.0, 2.0]).astype(np.float32))
    c = nd.zeros((2,))
    assert nd.exp(nd.array([0.0, 1.0]), out=c) is c
    np.testing.assert_allclose(c.asnumpy(), [1.0, np.e], rtol=1e-6)
    i = nd.array([1, 5], dtype="int32")
    nd.negative(i, out=i)
    assert i.asnumpy().tolist() == [-1, -5]


@pytest.mark.parametrize("out_shape,out_dtype", [((2, 2), "float64"), ((3,), "float32")])
def test_out_shape_or_dtype_mismatch_raises(out_shape: tuple, out_dtype: str) -> None:
    a = nd.array([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(mx.MXNetError, match=r"mx\.nd\.square: out has shape"):  # mxnet 1.9.1 raises
        nd.square(a, out=nd.zeros(out_shape, dtype=out_dtype))


def test_out_while_recording_is_refused() -> None:
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        with pytest.raises(NotImplementedError, match=r"docs/migration-mxnet\.md"):
            nd.square(x, out=nd.zeros((2,)))
