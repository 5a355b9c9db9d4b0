"""The mxnet layer's JSON form of symbols: ``Symbol.tojson`` writes mxnet 1.9.1's text (the
expected texts were printed by mxnet 1.9.1), ``mx.sym.load_json``/``load`` read it back (also text
written by mxnet) without executing anything, and ``Symbol.save``.
"""

from __future__ import annotations

import json
from pathlib import Path

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from compat.mxnet.helpers import _bind

#: mxnet 1.9.1's ``tojson()`` of the seed MLP (docs/migration-mxnet.md)
SEED_JSON = (
    "{\n"
    '  "nodes": [\n'
    "    {\n"
    '      "op": "null", \n'
    '      "name": "data", \n'
    '      "inputs": []\n'
    "    }, \n"
    "    {\n"
    '      "op": "null", \n'
    '      "name": "fc_weight", \n'
    '      "attrs": {"num_hidden": "6"}, \n'
    '      "inputs": []\n'
    "    }, \n"
    "    {\n"
    '      "op": "null", \n'
    '      "name": "fc_bias", \n'
    '      "attrs": {"num_hidden": "6"}, \n'
    '      "inputs": []\n'
    "    }, \n"
    "    {\n"
    '      "op": "FullyConnected", \n'
    '      "name": "fc", \n'
    '      "attrs": {"num_hidden": "6"}, \n'
    '      "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]\n'
    "    }, \n"
    "    {\n"
    '      "op": "Activation", \n'
    '      "name": "relu", \n'
    '      "attrs": {"act_type": "relu"}, \n'
    '      "inputs": [[3, 0, 0]]\n'
    "    }, \n"
    "    {\n"
    '      "op": "null", \n'
    '      "name": "softmax_label", \n'
    '      "inputs": []\n'
    "    }, \n"
    "    {\n"
    '      "op": "SoftmaxOutput", \n'
    '      "name": "softmax", \n'
    '      "inputs": [[4, 0, 0], [5, 0, 0]]\n'
    "    }\n"
    "  ], \n"
    '  "arg_nodes": [0, 1, 2, 5], \n'
    '  "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7], \n'
    '  "heads": [[6, 0, 0]], \n'
    '  "attrs": {"mxnet_version": ["int", 10901]}\n'
    "}"
)

#: mxnet 1.9.1's ``tojson()`` (as ``json.dumps(json.loads(...))``) of a group of every operator
#: kind, built in ``_group()``
GROUP_JSON = (
    '{"nodes": [{"op": "null", "name": "a", "attrs": {"__dtype__": "1", "__lr_mult__": "2", '
    '"__shape__": "(2, 3)"}, "inputs": []}, {"op": "_mul_scalar", "name": "_mulscalar0", '
    '"attrs": {"scalar": "2"}, "inputs": [[0, 0, 0]]}, {"op": "null", "name": "b", '
    '"attrs": {"foo": "bar"}, "inputs": []}, {"op": "elemwise_add", "name": "_plus0", '
    '"inputs": [[1, 0, 0], [2, 0, 0]]}, {"op": "_maximum_scalar", "name": "_maximumscalar0", '
    '"attrs": {"scalar": "3"}, "inputs": [[0, 0, 0]]}, {"op": "dot", "name": "dot0", '
    '"attrs": {"transpose_b": "True"}, "inputs": [[0, 0, 0], [2, 0, 0]]}, '
    '{"op": "_rminus_scalar", "name": "_rminusscalar0", "attrs": {"scalar": "1"}, '
    '"inputs": [[0, 0, 0]]}, {"op": "_power", "name": "_power0", "inputs": [[0, 0, 0], [2, '
    '0, 0]]}, {"op": "softmax", "name": "softmax0", "attrs": {"axis": "0"}, "inputs": [[0, '
    '0, 0]]}, {"op": "elemwise_div", "name": "_div0", "inputs": [[0, 0, 0], [2, 0, 0]]}, '
    '{"op": "MakeLoss", "name": "makeloss0", "attrs": {"grad_scale": "0.5"}, "inputs": [[9, '
    '0, 0]]}, {"op": "_mul_scalar", "name": "_mulscalar1", "attrs": {"scalar": "-1.0"}, '
    '"inputs": [[0, 0, 0]]}, {"op": "BlockGrad", "name": "blockgrad0", "inputs": [[11, 0, '
    '0]]}, {"op": "broadcast_sub", "name": "broadcast_minus0", "inputs": [[0, 0, 0], [2, 0, '
    '0]]}, {"op": "null", "name": "nf_weight", "attrs": {"__lr_mult__": "3", '
    '"flatten": "False", "no_bias": "True", "num_hidden": "3"}, "inputs": []}, '
    '{"op": "FullyConnected", "name": "nf", "attrs": {"__lr_mult__": "3", '
    '"flatten": "False", "no_bias": "True", "num_hidden": "3"}, "inputs": [[0, 0, 0], [14, '
    '0, 0]]}], "arg_nodes": [0, 2, 14], "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, '
    '11, 12, 13, 14, 15, 16], "heads": [[3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 0], [7, 0, '
    "0], [8, 0, 0], [10, 0, 0], [12, 0, 0], [13, 0, 0], [15, 0, 0]], "
    '"attrs": {"mxnet_version": ["int", 10901]}}'
)


def _seed() -> mx.sym.Symbol:
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(net, name="fc", num_hidden=6)
    net = mx.sym.Activation(net, name="relu", act_type="relu")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def _group() -> mx.sym.Symbol:
    a = mx.sym.Variable("a", shape=(2, 3), dtype="float64", lr_mult=2)
    b = mx.sym.Variable("b", attr={"foo": "bar"})
    return mx.sym.Group(
        [
            2 * a + b,
            mx.sym.maximum(a, 3),
            mx.sym.dot(a, b, transpose_b=True),
            1 - a,
            a**b,
            mx.sym.softmax(a, axis=0),
            mx.sym.MakeLoss(a / b, grad_scale=0.5),
            mx.sym.BlockGrad(-a),
            mx.sym.broadcast_minus(a, b),
            mx.sym.FullyConnected(
                a, num_hidden=3, no_bias=True, flatten=False, name="nf", attr={"lr_mult": "3"}
            ),
        ]
    )


def _renumbered(text: str) -> dict:
    """The JSON with automatic names made independent of the names made before in the process
    (``_plus3`` -> ``_plus#``)."""
    graph = json.loads(text)
    for node in graph["nodes"]:
        if node["op"] != "null" and node["name"] != "nf":
            node["name"] = node["name"].rstrip("0123456789") + "#"
    return graph


def test_seed_mlp_json_is_mxnets_text() -> None:
    assert _seed().tojson() == SEED_JSON


def test_every_operator_kind_as_mxnet() -> None:
    assert _renumbered(_group().tojson()) == _renumbered(GROUP_JSON)


def test_load_json_round_trip_and_mxnets_text() -> None:
    g = _group()
    again = mx.sym.load_json(g.tojson())
    assert again.tojson() == g.tojson()
    seed = mx.sym.load_json(SEED_JSON)  # written by mxnet 1.9.1
    assert seed.list_arguments() == ["data", "fc_weight", "fc_bias", "softmax_label"]
    assert seed.tojson() == SEED_JSON
    args = {
        "data": np.ones((1, 4)),
        "fc_weight": np.ones((6, 4)),
        "fc_bias": np.array([1, 4, 4, 4, 5, 6.0]),
        "softmax_label": np.ones(1),
    }
    ex = _bind(seed, args, grads=("fc_weight", "fc_bias"))
    out = ex.forward(is_train=True)[0].asnumpy()
    # the documented output of mxnet's Executor.backward example
    np.testing.assert_allclose(
        out, [[0.00378404, 0.07600445, 0.07600445, 0.07600445, 0.2066015, 0.5616011]], rtol=1e-5
    )
    loaded = mx.sym.load_json(GROUP_JSON)
    assert loaded.list_arguments() == ["a", "b", "nf_weight"] and len(loaded.list_outputs()) == 10
    assert loaded.infer_shape(a=(2, 3), b=(2, 3))[1][2] == (2, 2)


def test_save_and_load_file(tmp_path: Path) -> None:
    path = tmp_path / "net-symbol.json"
    _seed().save(str(path))
    assert path.read_text() == SEED_JSON
    assert mx.sym.load(str(path)).list_outputs() == ["softmax_output"]


def test_load_json_refuses_bad_text_without_running_it() -> None:
    with pytest.raises(mx.base.MXNetError, match="load_json: the text is not JSON"):
        mx.sym.load_json("not json")
    with pytest.raises(TypeError, match="json_str required to be a string"):
        mx.sym.load_json(5)  # type: ignore[arg-type]
    conv = {"nodes": [{"op": "_linalg_gelqf", "name": "c", "inputs": []}], "heads": [[0, 0, 0]]}
    with pytest.raises(NotImplementedError, match=r"'_linalg_gelqf'.*migration-mxnet"):
        mx.sym.load_json(json.dumps(conv))
    bad_attr = json.loads(SEED_JSON)
    bad_attr["nodes"][3]["attrs"]["num_hidden"] = "__import__('os').system('false')"
    with pytest.raises(mx.base.MXNetError, match=r"num_hidden=.* is not a valid int"):
        mx.sym.load_json(json.dumps(bad_attr))
    unknown = json.loads(SEED_JSON)
    unknown["nodes"][3]["attrs"]["kernel"] = "(3, 3)"
    with pytest.raises(mx.base.MXNetError, match="FullyConnected has no parameter 'kernel'"):
        mx.sym.load_json(json.dumps(unknown))
    forward_ref = json.loads(SEED_JSON)
    forward_ref["nodes"][3]["inputs"][0] = [5, 0, 0]
    with pytest.raises(mx.base.MXNetError, match="does not name an earlier node"):
        mx.sym.load_json(json.dumps(forward_ref))


def test_variable_dtype_is_a_hint_for_infer_type() -> None:
    x, y = mx.sym.Variable("x", dtype="float64"), mx.sym.Variable("y")
    # mxnet 1.9.1: float64 for both from the hint; a given dtype overrides the hint
    assert (x + y).infer_type() == ([np.float64, np.float64], [np.float64], [])
    assert (x + y).infer_type(x="float32") == ([np.float32, np.float32], [np.float32], [])
    loaded = mx.sym.load_json((x + y).tojson())  # the hint travels as __dtype__ "1"
    assert loaded.infer_type()[0] == [np.float64, np.float64]


def test_objects_of_several_entries_and_long_arrays_are_written_one_entry_per_line() -> None:
    # regression: attrs of several entries and arrays of more than ten items (arg_nodes,
    # node_row_ptr, heads) were written on one line, where mxnet 1.9.1's JSON writer puts one
    # entry per line (data/many-symbol.json: written by mxnet 1.9.1, make_ndarray_files.py)
    x = mx.sym.Variable("data", shape=(2, 3), lr_mult=2.0)
    h = mx.sym.FullyConnected(x, num_hidden=3, no_bias=False, flatten=True, name="fc")
    h = mx.sym.SoftmaxOutput(
        h,
        name="sm",
        grad_scale=2.0,
        use_ignore=True,
        ignore_label=1,
        normalization="batch",
        multi_output=False,
        preserve_shape=False,
    )
    acts = [
        mx.sym.Activation(mx.sym.Variable(f"v{i}"), act_type="relu", name=f"a{i}")
        for i in range(11)
    ]
    expected = (Path(__file__).parent / "data" / "many-symbol.json").read_text()
    assert mx.sym.Group([h, *acts]).tojson() == expected
    assert mx.sym.load_json(expected).tojson() == expected
