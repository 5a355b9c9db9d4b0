"""``nn.NdArray`` of the nnabla layer: standalone buffers (``NdArray(shape)``,
``from_numpy_array``), ``zero``/``fill``/``copy_from``/``cast``, arithmetic, the functions on
NdArrays, and ``x.data``/``x.grad`` as NdArrays of a Variable (behaviour recorded from nnabla
1.39.0, 2026-11-25)."""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest


def test_standalone_ndarray_as_nnabla() -> None:
    a = nn.NdArray((2, 3))
    assert a.shape == (2, 3) and a.size == 6 and a.ndim == 2 and a.dtype == np.float32
    assert nn.NdArray().shape == () and nn.NdArray(3).shape == (3,)
    a.fill(2)
    np.testing.assert_array_equal(a.data, np.full((2, 3), 2.0))
    a.zero()
    np.testing.assert_array_equal(a.data, np.zeros((2, 3)))
    # from_numpy_array keeps the dtype (nnabla: float64 stays float64, int64 int64)
    b = nn.NdArray.from_numpy_array(np.arange(6.0).reshape(2, 3))
    assert b.dtype == np.float64
    assert nn.NdArray.from_numpy_array(np.arange(6)).dtype == np.int64
    np.testing.assert_array_equal(b.cast(np.int32), [[0, 1, 2], [3, 4, 5]])
    assert b.dtype == np.int32
    d = nn.NdArray((2, 3))
    d.data = np.ones((2, 3)) * 7  # the array and its dtype are taken (nnabla: float64)
    assert d.dtype == np.float64
    d.data[0, 0] = 9
    assert d.data[0, 0] == 9
    assert "NdArray((2, 3))" in repr(d)
    assert nn.NdArray((1,)) != nn.NdArray((1,))


def test_ndarray_arithmetic_computes_in_float32() -> None:
    b = nn.NdArray.from_numpy_array(np.arange(6.0).reshape(2, 3))
    s = b + b
    assert isinstance(s, nn.NdArray) and s.dtype == np.float32  # nnabla: float32
    np.testing.assert_array_equal(s.data, [[0, 2, 4], [6, 8, 10]])
    np.testing.assert_array_equal((2 - b).data, [[2, 1, 0], [-1, -2, -3]])
    np.testing.assert_array_equal((b**2).data, [[0, 1, 4], [9, 16, 25]])
    np.testing.assert_allclose((1 / (b + 1)).data.ravel()[:3], [1, 0.5, 0.33333334])
    np.testing.assert_array_equal((-b).data, -np.arange(6.0).reshape(2, 3))
    b += 1
    np.testing.assert_array_equal(b.data, [[1, 2, 3], [4, 5, 6]])
    with pytest.raises(TypeError, match=r"NdArray \+: the other operand must be an NdArray"):
        b + np.ones((2, 3))


def test_functions_on_ndarrays_compute_at_once() -> None:
    b = nn.NdArray.from_numpy_array(np.arange(1.0, 7.0).reshape(2, 3))
    r = F.relu(b - 3)
    assert isinstance(r, nn.NdArray)
    np.testing.assert_array_equal(r.data, [[0, 0, 0], [1, 2, 3]])
    d = nn.NdArray((2, 3))
    d.copy_from(F.mul2(b, b))
    np.testing.assert_array_equal(d.data, np.arange(1.0, 7.0).reshape(2, 3) ** 2)
    with pytest.raises(ValueError, match="copy_from: cannot copy an array of shape"):
        d.copy_from(nn.NdArray((4,)))


def test_variable_data_and_grad_are_ndarrays_over_its_buffers() -> None:
    x = nn.Variable((2, 3))
    assert isinstance(x.data, nn.NdArray) and x.data == x.data and x.data is not x.data
    assert np.shares_memory(x.d, x.data.data)
    view = x.data
    x.d = 5
    np.testing.assert_array_equal(view.data, np.full((2, 3), 5.0))
    b = nn.NdArray.from_numpy_array(np.arange(6.0).reshape(2, 3))
    x.data = b  # nnabla: x now uses b's buffer
    np.testing.assert_array_equal(x.d, np.arange(6.0).reshape(2, 3))
    b.fill(0)
    np.testing.assert_array_equal(x.d, np.zeros((2, 3)))
    x.grad.fill(3)
    np.testing.assert_array_equal(x.g, np.full((2, 3), 3.0))
    x.grad += x.grad
    np.testing.assert_array_equal(x.g, np.full((2, 3), 6.0))


def test_copy_from_takes_the_source_dtype_as_nnabla() -> None:
    # nnabla 1.39: a float32 NdArray copying a uint8 one becomes uint8 ([1, 2]), with
    # use_current_context True, False or not given
    for kwargs in ({}, {"use_current_context": False}, {"use_current_context": True}):
        src = nn.NdArray((2,))
        src.data = np.array([1, 2], np.uint8)
        dst = nn.NdArray((2,))
        dst.data = np.array([0.5, 0.5], np.float32)
        dst.copy_from(src, **kwargs)
        assert dst.dtype == np.uint8
        assert dst.data.tolist() == [1, 2]


def test_clear_and_clear_called_as_nnabla() -> None:
    # nnabla 1.39's sequence: False, clear -> True, fill -> False, clear, zero -> False,
    # clear, a write through .data -> False
    a = nn.NdArray(1)
    assert a.clear_called is False
    a.clear()
    assert a.clear_called is True
    a.fill(3)
    assert a.clear_called is False
    a.clear()
    a.zero()
    assert a.clear_called is False
    a.clear()
    a.data[0] = -1
    assert a.clear_called is False
    assert a.data.tolist() == [-1.0]
