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
    for fn in ("check_consistency", "check_speed"):
        with pytest.raises(NotImplementedError, match=rf"mx.test_utils.{fn} .*migration-mxnet"):
            getattr(tu, fn)(None, None)


def _mlp_location() -> tuple[mx.sym.Symbol, dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    x = mx.sym.Variable("x")
    net = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=3, name="fc"), act_type="tanh")
    loc = {
        "x": rng.random((2, 4)),
        "fc_weight": rng.random((3, 4)) - 0.5,
        "fc_bias": rng.random(3),
    }
    return net, loc


def test_check_numeric_gradient_passes_and_catches_as_mxnet() -> None:
    net, loc = _mlp_location()
    tu.check_numeric_gradient(net, loc, dtype=np.float64, rtol=1e-5, atol=1e-7)
    tu.check_numeric_gradient(net, loc, grad_nodes={"x": "add", "fc_weight": "null"})
    # BlockGrad's gradient is 0, the finite differences are not: mxnet 1.9.1 fails it too
    with pytest.raises(AssertionError, match=r"(?s)Items are not equal:\nError .* NUMERICAL_x="):
        tu.check_numeric_gradient(mx.sym.BlockGrad(mx.sym.Variable("x") * 2), [np.ones((2, 2))])


def test_check_symbolic_forward_and_backward_as_mxnet() -> None:
    x = mx.sym.Variable("x")
    out = tu.check_symbolic_forward(x * x + 1, {"x": np.array([1.0, 3.0])}, [np.array([2.0, 10.0])])
    assert isinstance(out, list) and out[0].asnumpy().tolist() == [2.0, 10.0]
    with pytest.raises(AssertionError, match=r"EXPECTED_.*=8\.00000000, FORWARD_.*=9\.00000000"):
        tu.check_symbolic_forward(x * x, [np.array([1.0, 3.0])], [np.array([1.0, 8.0])])
    args = ([np.array([1.0, 3.0])], [np.array([1.0, 0.5])])
    g = tu.check_symbolic_backward(x * x, *args, [np.array([2.0, 3.0])])
    assert sorted(g) == ["x"] and g["x"].asnumpy().tolist() == [2.0, 3.0]  # mxnet 1.9.1
    tu.check_symbolic_backward(x * x, *args, [np.array([2.0, 3.0])], grad_req="add")
    tu.check_symbolic_backward(x * x, *args, {"x": np.array([9.0, 9.0])}, grad_req="null")
    with pytest.raises(AssertionError, match=r"EXPECTED_x=4\.00000000, BACKWARD_x=3\.00000000"):
        tu.check_symbolic_backward(x * x, *args, [np.array([2.0, 4.0])])
    with pytest.raises(ValueError, match="Symbol arguments and keys of the given location"):
        tu.check_symbolic_forward(x * x, {"y": np.ones(2)}, [np.ones(2)])
