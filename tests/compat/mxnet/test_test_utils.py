"""The mxnet layer's ``mx.test_utils``: mxnet 1.9.1's default tolerances per dtype, its failure
message, ``same``/``almost_equal``, ``rand_ndarray`` and ``discard_stderr``; the outcomes were
printed by mxnet 1.9.1 for the same arrays."""

from __future__ import annotations

import os
import sys

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

tu = mx.test_utils


def test_default_tolerances_as_mxnet() -> None:
    # float32: rtol 1e-4, atol 1e-3 (mxnet 1.9.1 passes both)
    tu.assert_almost_equal(np.float32([1.0]), np.float32([1.0009]))
    tu.assert_almost_equal(np.float32([1.0]), np.float32([1.0011]))
    tu.assert_almost_equal(mx.nd.array([1, 2]), mx.nd.array([1, 2.0001]))
    # float64: rtol 1e-5, atol 1e-20 (mxnet 1.9.1: Error 1.999960)
    with pytest.raises(
        AssertionError,
        match=r"Error 1.999960 exceeds tolerance rtol=1.000000e-05, atol=1.000000e-20",
    ):
        tu.assert_almost_equal(np.float64([1.0]), np.float64([1.00002]))
    with pytest.raises(AssertionError, match=r"Location of maximum error: \(1,\), a=2\.00000000"):
        tu.assert_almost_equal(mx.nd.array([1, 2]), mx.nd.array([1, 3]), rtol=0, atol=0.5)


def test_same_almost_equal_rand_ndarray() -> None:
    assert tu.same(np.ones(2), np.ones(2)) is True
    assert tu.same(np.ones(2), np.ones(3)) is False
    assert tu.almost_equal(np.ones(2), np.ones(2) + 1e-6) is True
    r = tu.rand_ndarray((2, 3))
    assert r.shape == (2, 3) and r.dtype == np.float32
    with pytest.raises(NotImplementedError, match=r"rand_ndarray: stype='csr'.*migration-mxnet"):
        tu.rand_ndarray((2, 3), "csr")
    assert mx.base.mx_real_t is np.float32 and mx.MXNetError is mx.base.MXNetError


def test_discard_stderr_restores_the_stream(capfd: pytest.CaptureFixture[str]) -> None:
    with tu.discard_stderr():
        os.write(sys.stderr.fileno(), b"hidden\n")
    os.write(sys.stderr.fileno(), b"shown\n")
    assert capfd.readouterr().err == "shown\n"


def test_unprovided_checks_raise_not_implemented() -> None:
    for fn in ("check_numeric_gradient", "check_symbolic_forward", "check_consistency"):
        with pytest.raises(NotImplementedError, match=rf"mx.test_utils.{fn} .*migration-mxnet"):
            getattr(tu, fn)(None, None)
