"""The state of ``mx.autograd`` in this thread: whether NDArray operations are recorded, whether
the training mode is on, and the gradient buffer of every marked variable.

``ndarray`` reads the switches on every operation and ``autograd`` sets them; both import this
module, which imports neither.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any


class _Mode(threading.local):
    def __init__(self) -> None:
        self.recording = False
        self.training = False


state = _Mode()

#: leaf Variable of a marked NDArray -> (its gradient NDArray, its grad_req). Weak: a mark lives
#: as long as the NDArray (or a recorded graph) holds its leaf.
MARKED: weakref.WeakKeyDictionary[Any, tuple[Any, str]] = weakref.WeakKeyDictionary()

#: leaves of marked NDArrays whose gradient array ``backward`` wrote (or added into) since
#: their mark or since a ``gluon.Trainer`` update last read it (mxnet's ``_fresh_grad``)
FRESH: weakref.WeakSet[Any] = weakref.WeakSet()

#: recorded node -> a function to run when a backward pass goes through it (at every pass while
#: the graph is retained, as mxnet): the moving statistics updates of ``mx.nd.BatchNorm`` in
#: training, which mxnet makes in the operator's backward. ``autograd`` runs those of the nodes
#: a backward pass reaches, latest node first.
ON_BACKWARD: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

#: recorded node -> the mxnet operator it stands for, where that is not the node's gradhub
#: function: ``mx.nd.clip`` (a ``Where`` node) and ``mx.nd.Dropout`` (a ``Mul2`` or ``MulScalar``
#: node) and ``mx.nd.radians`` (a ``MulScalar`` node), whose mxnet 1.9.1 backward operators
#: (``_backward_clip``, ``_backward_Dropout``, ``_backward_radians``) have a zero gradient, so
#: ``autograd.grad(..., create_graph=True)`` gives zeros at second order.
MX_OPS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()

#: Variables of the gradients ``autograd.grad(..., create_graph=True)`` returned. A backward
#: pass from them with ``retain_graph=False`` keeps the forward graph they were computed from:
#: gradhub's gradient graphs can share nodes of the forward graph (the transposed weight of
#: ``FullyConnected``) where mxnet's backward operators read only the forward operator's inputs
#: and outputs, and mxnet leaves that forward graph differentiable.
HIGHER: weakref.WeakSet[Any] = weakref.WeakSet()

GRAD_REQS = ("write", "add", "null")


def check_grad_req(req: Any, where: str) -> str:
    """``req`` if it is one of mxnet's grad_req values (``"inplace"`` is ``"write"``)."""
    if req == "inplace":
        return "write"
    if req not in GRAD_REQS:
        raise ValueError(f"{where}: grad_req must be one of {GRAD_REQS}, got {req!r}")
    return str(req)
