"""Helpers shared by the tests of the mxnet layer: binding a symbol to arguments given as arrays."""

from __future__ import annotations

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
