"""mxnet's ``mx.sym.SliceChannel``/``split``: a symbol of several outputs (``NAME_output0``...),
its JSON form (one node read as ``[node, output, 0]``, ``node_row_ptr`` counting every output),
``get_internals`` listing every output, shape inference both ways, and outputs and gradients,
against mxnet 1.9.1 (``# mxnet 1.9.1``).
"""

from __future__ import annotations

import gradhub as gh
import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet import symbol as _symbol_module


@pytest.fixture(autouse=True)
def _fresh_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_symbol_module._names, "counters", {})


#: mxnet 1.9.1's ``tojson()`` of ``Group([split(x, 3, axis=1, name="sp")[1], sp[0] + sp[2]])``
GROUP_JSON = (
    "{\n"
    '  "nodes": [\n'
    "    {\n"
    '      "op": "null", \n'
    '      "name": "x", \n'
    '      "inputs": []\n'
    "    }, \n"
    "    {\n"
    '      "op": "SliceChannel", \n'
    '      "name": "sp", \n'
    '      "attrs": {\n'
    '        "axis": "1", \n'
    '        "num_outputs": "3"\n'
    "      }, \n"
    '      "inputs": [[0, 0, 0]]\n'
    "    }, \n"
    "    {\n"
    '      "op": "elemwise_add", \n'
    '      "name": "_plus0", \n'
    '      "inputs": [[1, 0, 0], [1, 2, 0]]\n'
    "    }\n"
    "  ], \n"
    '  "arg_nodes": [0], \n'
    '  "node_row_ptr": [0, 1, 4, 5], \n'
    '  "heads": [[1, 1, 0], [2, 0, 0]], \n'
    '  "attrs": {"mxnet_version": ["int", 10901]}\n'
    "}"
)


def _parts() -> tuple[mx.sym.Symbol, mx.sym.Symbol]:
    x = mx.sym.Variable("x")
    sp = mx.sym.split(x, num_outputs=3, axis=1, name="sp")
    return sp, sp[0] + sp[2]


def test_outputs_names_internals_and_json_are_mxnets() -> None:
    sp, y = _parts()
    # mxnet 1.9.1
    assert len(sp) == 3 and sp.list_outputs() == ["sp_output0", "sp_output1", "sp_output2"]
    assert sp[1].name == "sp"
    assert y.list_arguments() == ["x"]
    assert y.get_internals().list_outputs() == [
        "x",
        "sp_output0",
        "sp_output1",
        "sp_output2",
        "_plus0_output",
    ]
    group = mx.sym.Group([sp[1], y])
    assert group.list_outputs() == ["sp_output1", "_plus0_output"]
    assert group.tojson() == GROUP_JSON
    back = mx.sym.load_json(GROUP_JSON)
    assert back.list_outputs() == ["sp_output1", "_plus0_output"]
    assert back.tojson() == GROUP_JSON
    one = mx.sym.split(mx.sym.Variable("x"), num_outputs=1)
    assert len(one) == 1 and one.list_outputs() == ["split0_output0"]  # mxnet 1.9.1
    sc = mx.sym.SliceChannel(mx.sym.Variable("x"), num_outputs=2)
    assert sc.list_outputs() == ["slicechannel0_output0", "slicechannel0_output1"]


def test_shape_inference() -> None:
    sp, y = _parts()
    assert y.infer_shape(x=(2, 6)) == ([(2, 6)], [(2, 2)], [])  # mxnet 1.9.1
    assert sp.infer_shape(x=(2, 6))[1] == [(2, 2)] * 3
    x = mx.sym.Variable("x")
    sq = mx.sym.split(x, num_outputs=2, axis=0, squeeze_axis=True)
    assert sq.infer_shape(x=(2, 5)) == ([(2, 5)], [(5,), (5,)], [])  # mxnet 1.9.1
    # an output's shape gives data's
    assert mx.sym.split(x, num_outputs=3, axis=1)[0].infer_shape_partial()[0] == [()]
    fc = mx.sym.FullyConnected(mx.sym.split(x, num_outputs=2, axis=0)[1], num_hidden=4)
    assert fc.infer_shape(x=(6, 3))[0][0] == (6, 3)
    with pytest.raises(mx.base.MXNetError, match=r"Error in operator split\d: Check failed"):
        mx.sym.split(x, num_outputs=4, axis=1).infer_shape(x=(2, 6))
    with pytest.raises(mx.base.MXNetError, match="num_outputs"):
        mx.sym.split(x, num_outputs=0)


def test_forward_backward_equal_mxnet_planned_or_not() -> None:
    _, y = _parts()
    for planned in (True, False):
        before = gh.plan.set_enabled(planned)
        try:
            ex = y.bind(
                mx.cpu(),
                {"x": mx.nd.array(np.arange(12).reshape(2, 6))},
                args_grad={"x": mx.nd.zeros((2, 6))},
            )
            for _ in range(2):
                out = ex.forward(is_train=True)[0].asnumpy()
                ex.backward(mx.nd.array([[1, 2], [3, 4]]))
                np.testing.assert_array_equal(out, [[4, 6], [16, 18]])  # mxnet 1.9.1
                np.testing.assert_array_equal(
                    ex.grad_dict["x"].asnumpy(), [[1, 2, 0, 0, 1, 2], [3, 4, 0, 0, 3, 4]]
                )  # mxnet 1.9.1: 0 for the output not used
        finally:
            gh.plan.set_enabled(before)
    x = mx.sym.Variable("x")
    sq = mx.sym.split(x, num_outputs=2, axis=0, squeeze_axis=True)
    ex = sq.bind(mx.cpu(), {"x": mx.nd.array(np.arange(10).reshape(2, 5))})
    outs = ex.forward()
    np.testing.assert_array_equal(outs[1].asnumpy(), np.arange(5, 10))
    assert list(ex.output_dict) == ["split0_output0", "split0_output1"]
