"""The mxnet layer's ``Executor.reshape``: new input shapes inferred through the symbol, arrays
shared with the original executor (views of their first elements when they shrink), new arrays
when they grow (``allow_up_sizing``), ``partial_shaping``, ``grad_req`` kept, and mxnet's errors.
Expected values were printed by mxnet 1.9.1 on the same program.
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest


def _executor(**kwargs: object) -> mx.Executor:
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc")
    net = mx.sym.SoftmaxOutput(fc, name="sm")
    ex = net.simple_bind(mx.cpu(), data=(8, 3), **kwargs)
    ex.arg_dict["fc_weight"][:] = mx.nd.array(np.arange(12).reshape(4, 3) / 10)
    ex.arg_dict["data"][:] = mx.nd.array(np.arange(24).reshape(8, 3) / 10)
    return ex


def test_down_sizing_shares_the_arrays() -> None:
    ex = _executor()
    e2 = ex.reshape(data=(4, 3), sm_label=(4,))
    assert [a.shape for a in e2.arg_arrays] == [(4, 3), (4, 3), (4,), (4,)]
    assert [g.shape for g in e2.grad_arrays] == [(4, 3), (4, 3), (4,), (4,)]
    assert [o.shape for o in e2.outputs] == [(4, 4)]
    # mxnet 1.9.1: the data of the new executor is the first 4 rows of the old one's
    np.testing.assert_allclose(e2.arg_dict["data"].asnumpy(), np.arange(12).reshape(4, 3) / 10)
    e2.arg_dict["fc_weight"][:] = 1
    np.testing.assert_array_equal(ex.arg_dict["fc_weight"].asnumpy()[0], [1, 1, 1])
    e2.arg_dict["data"][:] = 7
    np.testing.assert_allclose(ex.arg_dict["data"].asnumpy()[:5, 0], [7, 7, 7, 7, 1.2])
    out = e2.forward(is_train=True)
    e2.backward()
    assert out[0].shape == (4, 4)
    # mxnet 1.9.1: [-21, -21, -21] in both executors' gradient arrays (shared)
    np.testing.assert_allclose(e2.grad_dict["fc_weight"].asnumpy()[0], [-21, -21, -21])
    np.testing.assert_allclose(ex.grad_dict["fc_weight"].asnumpy()[0], [-21, -21, -21])


def test_up_sizing_and_partial_shaping() -> None:
    ex = _executor()
    with pytest.raises(mx.base.MXNetError, match="New shape of arg: data is larger"):
        ex.reshape(data=(16, 3), sm_label=(16,))
    e3 = ex.reshape(allow_up_sizing=True, data=(16, 3), sm_label=(16,))
    assert [a.shape for a in e3.arg_arrays] == [(16, 3), (4, 3), (4,), (16,)]
    e3.arg_dict["fc_weight"][:] = 5  # not resized: the same array
    np.testing.assert_array_equal(ex.arg_dict["fc_weight"].asnumpy()[0], [5, 5, 5])
    e3.arg_dict["data"][:] = 9  # new array: the old one is untouched
    assert ex.arg_dict["data"].asnumpy()[0, 0] != 9
    with pytest.raises(mx.base.MXNetError, match="New shape of arg: data is larger"):
        ex.reshape(data=(8, 5))
    e4 = ex.reshape(partial_shaping=True, allow_up_sizing=True, data=(8, 5))
    assert [a.shape for a in e4.arg_arrays] == [(8, 5), (4, 5), (4,), (8,)]
    e5 = ex.reshape(partial_shaping=True, data=(2, 2))
    assert [a.shape for a in e5.arg_arrays] == [(2, 2), (4, 2), (4,), (2,)]


def test_grad_req_is_kept() -> None:
    reqs = {"data": "null", "fc_weight": "add", "fc_bias": "write", "sm_label": "null"}
    ex = _executor(grad_req=reqs)
    e6 = ex.reshape(data=(4, 3), sm_label=(4,))
    assert [None if g is None else g.shape for g in e6.grad_arrays] == [None, (4, 3), (4,), None]
    e6.arg_dict["sm_label"][:] = 1
    e6.forward(is_train=True)
    e6.backward()
    first = e6.grad_dict["fc_weight"].asnumpy()
    assert np.abs(first).sum() > 0
    e6.forward(is_train=True)
    e6.backward()  # "add" is kept: the second gradient is added to the first
    np.testing.assert_allclose(e6.grad_dict["fc_weight"].asnumpy(), 2 * first, rtol=1e-6)
    e6.grad_dict["fc_bias"][:] = 123
    e6.forward(is_train=True)
    e6.backward()  # "write" is kept
    assert np.abs(e6.grad_dict["fc_bias"].asnumpy() - 123).min() > 1


def test_errors() -> None:
    ex = _executor()
    # mxnet 1.9.1: "Shape of unspecifie arg: sm_label changed. ..."
    with pytest.raises(mx.base.MXNetError, match="Shape of unspecified arg: sm_label changed"):
        ex.reshape(data=(4, 3))
    with pytest.raises(mx.base.MXNetError, match="Shape of unspecified arg: data changed"):
        ex.reshape()
    with pytest.raises(mx.base.MXNetError, match="'zz' is not an argument"):
        ex.reshape(zz=(2, 3))
    with pytest.raises(TypeError, match="the shape of 'data' must be a tuple"):
        ex.reshape(data=4)


def test_reshaped_executor_writes_its_outputs_into_the_original_ones_as_mxnet() -> None:
    y = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=2, name="fc")
    exe = y.simple_bind(mx.cpu(), x=(4, 3), grad_req="null")
    exe.arg_dict["x"][:] = 1
    exe.arg_dict["fc_weight"][:] = 1
    exe.arg_dict["fc_bias"][:] = 0
    exe.forward()
    small = exe.reshape(x=(2, 3))
    small.arg_dict["x"][:] = 2
    small.forward()
    # mxnet 1.9.1: the smaller output lives in the first elements of the original output
    assert small.outputs[0].asnumpy().tolist() == [[6.0, 6.0], [6.0, 6.0]]
    assert exe.outputs[0].asnumpy().tolist() == [[6.0, 6.0], [6.0, 6.0], [3.0, 3.0], [3.0, 3.0]]
    big = exe.reshape(allow_up_sizing=True, x=(6, 3))
    big.arg_dict["x"][:] = 5
    big.forward()
    # a grown output is a new array: the original keeps its values (mxnet 1.9.1)
    assert big.outputs[0].shape == (6, 2)
    assert exe.outputs[0].asnumpy().tolist() == [[6.0, 6.0], [6.0, 6.0], [3.0, 3.0], [3.0, 3.0]]
