"""Helpers shared by the tests of the mxnet layer: binding a symbol to arguments given as arrays,
a small classifier symbol, and a reference script of ``data/`` loaded as a module."""

from __future__ import annotations

import importlib.util
import pathlib
from types import ModuleType
from typing import Any

import gradhub_compat.mxnet as mx


def _bind(
    sym: mx.sym.Symbol,
    args: dict[str, object],
    grad_req: object = "write",
    grads: tuple[str, ...] | None = None,
) -> mx.Executor:
    nd_args = {k: mx.nd.array(v) for k, v in args.items()}
    names = grads if grads is not None else tuple(nd_args)
    args_grad = {k: mx.nd.zeros(nd_args[k].shape) for k in names}
    return sym.bind(mx.cpu(), nd_args, args_grad=args_grad, grad_req=grad_req)


def _reference_script(name: str) -> ModuleType:
    """The reference script ``data/<name>.py`` as a module, for its cases and inputs (the script
    imports mxnet only when it runs as a script)."""
    spec = importlib.util.spec_from_file_location(
        name, pathlib.Path(__file__).parent / "data" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _mlp(**softmax: Any) -> mx.sym.Symbol:
    """``data`` -> FullyConnected(5) -> tanh -> maximum(h, 0.1) + BlockGrad(h) * h ->
    FullyConnected(3) -> SoftmaxOutput with ``label`` (``softmax``: its options)."""
    data, label = mx.sym.Variable("data"), mx.sym.Variable("label")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=5, name="fc1"), act_type="tanh")
    h = mx.sym.maximum(h, 0.1) + mx.sym.BlockGrad(h) * h
    out = mx.sym.FullyConnected(h, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(out, label, name="softmax", **softmax)
