"""Writes the mxnet files of this folder with mxnet itself (1.9.1 wrote the committed files):
``python make_ndarray_files.py`` in an environment with mxnet 1.9.1 (not gradhub); the files are
written next to this script.

* ``dtypes.nd``: ``mx.nd.save`` of a dict, one array per dtype (float16/32/64, uint8, int8,
  int32, int64, bool), the values ``np.arange(-3, 3).reshape(2, 3)`` cast (the floats divided by
  4, with inf, -inf and nan in float32's last row; bool: ``!= 0``);
* ``list.nd``: a list without names: ``arange(6).reshape(2, 3) / 2`` (float32) and ``[7]``
  (int64);
* ``scalar_default.nd``: a 0-d float32 array (2.5) saved in mxnet's default shape mode (magic
  V2, no dimensions, then the element: mxnet 1.9.1 cannot load this file back);
* ``scalar_np_shape.nd``: inside ``mx.np_shape(True)``: ``[2.5 (0-d), zeros((0, 2)), [1, 2]]``
  (magic V3);
* ``csr.nd``: ``{"c": csr_matrix(eye(2))}``, a sparse array;
* ``gluon.params``: ``net.save_parameters`` of ``nn.HybridSequential`` holding ``Dense(3,
  in_units=4)``, weight ``arange(12).reshape(3, 4) / 10``, bias ``[-1, 0, 1]``;
* ``mlp-symbol.json``, ``mlp-0003.params``: ``mx.model.save_checkpoint("mlp", 3, ...)`` of
  ``data -> FullyConnected(5, fc1) -> tanh -> FullyConnected(3, fc2) -> SoftmaxOutput(softmax)``
  with the parameters below, and ``mlp-expected.nd``: ``{"data", "output"}``, the input and
  mxnet's ``forward`` output of the bound checkpoint;
* ``many-symbol.json``: ``Symbol.save`` of a group of twelve outputs (the JSON writer puts an
  object of several entries and an array of more than ten items one entry per line): a
  ``FullyConnected`` of three attributes and a ``SoftmaxOutput`` of six on a variable with
  ``shape`` and ``lr_mult``, and eleven ``relu`` Activations ``a0``...``a10`` of variables
  ``v0``...``v10``.
"""

from __future__ import annotations

import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name: str) -> str:
    return os.path.join(HERE, name)


def main() -> None:
    base = np.arange(-3, 3).reshape(2, 3)
    arrays = {}
    for dt in ("float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool"):
        if dt == "bool":
            v = base != 0
        elif dt.startswith("float"):
            v = base / 4
            if dt == "float32":
                v[1] = [np.inf, -np.inf, np.nan]
        else:
            v = base
        arrays[dt] = mx.nd.array(np.asarray(v).astype(dt), dtype=dt)
    mx.nd.save(path("dtypes.nd"), arrays)

    mx.nd.save(
        path("list.nd"),
        [mx.nd.array(np.arange(6).reshape(2, 3) / 2), mx.nd.array([7], dtype="int64")],
    )
    mx.nd.save(path("scalar_default.nd"), [mx.nd.array(np.float32(2.5))])
    with mx.np_shape(True):
        mx.nd.save(
            path("scalar_np_shape.nd"),
            [mx.nd.array(np.float32(2.5)), mx.nd.zeros((0, 2)), mx.nd.array([1, 2])],
        )
    mx.nd.save(path("csr.nd"), {"c": mx.nd.sparse.csr_matrix(np.eye(2, dtype="float32"))})

    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(3, in_units=4))
    net.initialize()
    net[0].weight.set_data(mx.nd.array(np.arange(12).reshape(3, 4) / 10))
    net[0].bias.set_data(mx.nd.array([-1, 0, 1]))
    net.save_parameters(path("gluon.params"))

    data = mx.sym.Variable("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=5, name="fc1"), act_type="tanh")
    out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=3, name="fc2"), name="softmax")
    args = {
        "fc1_weight": mx.nd.array(np.sin(np.arange(20)).reshape(5, 4)),
        "fc1_bias": mx.nd.array(np.linspace(-0.5, 0.5, 5)),
        "fc2_weight": mx.nd.array(np.cos(np.arange(15)).reshape(3, 5)),
        "fc2_bias": mx.nd.array([0.1, -0.2, 0.3]),
    }
    mx.model.save_checkpoint(path("mlp"), 3, out, args, {})
    x = mx.nd.array(np.arange(8).reshape(2, 4) / 8 - 0.4)
    sym, arg_params, _ = mx.model.load_checkpoint(path("mlp"), 3)
    ex = sym.bind(
        mx.cpu(), dict(arg_params, data=x, softmax_label=mx.nd.zeros((2,))), grad_req="null"
    )
    mx.nd.save(path("mlp-expected.nd"), {"data": x, "output": ex.forward()[0]})

    many_symbol().save(path("many-symbol.json"))


def many_symbol() -> mx.sym.Symbol:
    """The graph of ``many-symbol.json`` (also built by the test, with gradhub's layer)."""
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
    return mx.sym.Group([h, *acts])


if __name__ == "__main__":
    main()
