"""nnabla's ``nnabla.function``: user-defined functions with :class:`PythonFunction`.

``from gradhub_compat.nnabla.function import PythonFunction`` (for
``from nnabla.function import PythonFunction``). Subclass it as in nnabla: ``min_outputs()``,
``setup_impl(inputs, outputs)`` (``outputs[i].reset_shape(shape, True)``),
``forward_impl(inputs, outputs)`` and ``backward_impl(inputs, outputs, propagate_down, accum)``
working on the Variables' NdArrays (``inputs[0].data``, ``outputs[0].grad``, ``copy_from``,
``+=``, the functions of :mod:`gradhub_compat.nnabla.functions` on NdArrays), and
``grad_depends_output_data(i, o)`` / ``grad_depends_input_data(i, j)``; then call an instance
on Variables. The call is a recorded graph node: ``forward()`` re-executes it and
``backward()``/``nn.grad`` run ``backward_impl``.

Example (the multiplication of nnabla's documentation)::

    >>> import numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.functions as F
    >>> from gradhub_compat.nnabla.function import PythonFunction
    >>> class Mul2(PythonFunction):
    ...     def min_outputs(self):
    ...         return 1
    ...     def setup_impl(self, inputs, outputs):
    ...         outputs[0].reset_shape(inputs[0].shape, True)
    ...     def forward_impl(self, inputs, outputs):
    ...         outputs[0].data.copy_from(F.mul2(inputs[0].data, inputs[1].data))
    ...     def backward_impl(self, inputs, outputs, propagate_down, accum):
    ...         dy = outputs[0].grad
    ...         for i, j in ((0, 1), (1, 0)):
    ...             if propagate_down[i]:
    ...                 g = F.mul2(dy, inputs[j].data)
    ...                 if accum[i]:
    ...                     inputs[i].grad += g
    ...                 else:
    ...                     inputs[i].grad.copy_from(g)
    ...     def grad_depends_output_data(self, i, o):
    ...         return False
    ...     def grad_depends_input_data(self, i, j):
    ...         return True
    >>> x = nn.Variable.from_numpy_array(np.array([1.0, 2.0]), need_grad=True)
    >>> w = nn.Variable.from_numpy_array(np.array([3.0, 4.0]), need_grad=True)
    >>> y = Mul2()(x, w)
    >>> F.sum(y).backward()
    >>> y.d, x.g, w.g
    (array([3., 8.], dtype=float32), array([3., 4.], dtype=float32), array([1., 2.], dtype=float32))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gradhub.graph import apply
from gradhub.registry import FunctionDef, Provider, Rule
from gradhub.variable import Variable as NativeVariable

from .._common import adopt
from ._variable import Variable

__all__ = ["PythonFunction"]

_PROVIDER = Provider("gradhub-compat", "", "gradhub_compat.nnabla.function")


def _proxy(arr: Any, grad: Any = None) -> Variable:
    """A layer Variable over ``arr`` (and ``grad``), outside any graph."""
    v = Variable.__new__(Variable)
    NativeVariable.__init__(v, arr, need_grad=False)
    if grad is not None:
        v._grad = NativeVariable.leaf(grad, False)
    return v


class PythonFunction:
    """A user-defined function, as nnabla's ``PythonFunction`` (subclass it; see the module).

    ``ctx`` is accepted (the context of the function; gradhub runs it on its inputs' device).
    ``name`` is the class name unless a subclass overrides it.
    """

    def __init__(self, ctx: Any = None) -> None:
        self._ctx = ctx
        self._fdef: FunctionDef | None = None

    @property
    def ctx(self) -> Any:
        """The context given to the constructor, else the current one."""
        if self._ctx is not None:
            return self._ctx
        from gradhub.device import current_context

        return current_context()

    @property
    def name(self) -> str:
        """The function's name (the class name by default)."""
        return type(self).__name__

    def min_outputs(self) -> int:
        """The number of outputs."""
        return 1

    def setup_impl(self, inputs: list[Variable], outputs: list[Variable]) -> None:
        """Give the outputs their shapes (``outputs[i].reset_shape(shape, True)``)."""
        raise NotImplementedError(f"{self.name}: implement `setup_impl` (nnabla PythonFunction)")

    def forward_impl(self, inputs: list[Variable], outputs: list[Variable]) -> None:
        """Write the outputs' data from the inputs' data."""
        raise NotImplementedError(f"{self.name}: implement `forward_impl` (nnabla PythonFunction)")

    def backward_impl(
        self,
        inputs: list[Variable],
        outputs: list[Variable],
        propagate_down: list[bool],
        accum: list[bool],
    ) -> None:
        """Write (``accum[i]``: add) the inputs' gradients from the outputs' gradients, for the
        inputs with ``propagate_down[i]``."""
        raise NotImplementedError(f"{self.name}: implement `backward_impl` (nnabla PythonFunction)")

    def grad_depends_output_data(self, i: int, o: int) -> bool:
        """Whether input ``i``'s gradient needs output ``o``'s data (nnabla: implement it)."""
        raise NotImplementedError("Implement `grad_depends_output_data`.")

    def grad_depends_input_data(self, i: int, j: int) -> bool:
        """Whether input ``i``'s gradient needs input ``j``'s data (nnabla: implement it)."""
        raise NotImplementedError("Implement `grad_depends_input_data`.")

    # -- the graph node ----------------------------------------------------------------------
    def _run_forward(self, xp: Any, *arrays: Any) -> Any:
        ins = [_proxy(a) for a in arrays]
        outs = [_proxy(xp.zeros((), dtype=np.float32)) for _ in range(self._n_outputs)]
        self.setup_impl(ins, outs)
        self.forward_impl(ins, outs)
        res = tuple(o._data for o in outs)
        return res[0] if len(res) == 1 else res

    def _run_backward(
        self,
        gy: Sequence[Any],
        ins: Sequence[Any],
        in_shapes: Any,
        outs: Sequence[Any],
        out_shapes: Any,
    ) -> list[Any]:
        xp = gy[0].device.xp
        pins = [
            _proxy(v._data, xp.zeros(v._data.shape, dtype=_grad_dtype(v._data)))  # type: ignore[union-attr]
            for v in ins
        ]
        pouts = [_proxy(v._data, g._data) for v, g in zip(outs, gy)]  # type: ignore[union-attr]
        propagate = [v._data.dtype.kind in "fc" for v in ins]  # type: ignore[union-attr]
        self.backward_impl(pins, pouts, propagate, [False] * len(pins))
        res: list[Any] = []
        for p, v, down in zip(pins, ins, propagate):
            if not down:
                res.append(None)
                continue
            g = p.g
            want = v._data.dtype  # type: ignore[union-attr]
            if g.dtype != want:
                g = g.astype(want)
            res.append(NativeVariable.leaf(g, False))
        return res

    def _definition(self, n_inputs: int) -> FunctionDef:
        n_out = int(self.min_outputs())
        if n_out < 1:
            raise ValueError(f"nnabla PythonFunction {self.name}: min_outputs() must be >= 1")
        # nnabla asks these when the function is called (the default raises, as nnabla's)
        for i in range(n_inputs):
            for o in range(n_out):
                self.grad_depends_output_data(i, o)
            for j in range(n_inputs):
                self.grad_depends_input_data(i, j)
        self._n_outputs = n_out
        fdef = self._fdef
        if fdef is None or fdef.n_outputs != n_out:
            fdef = self._fdef = FunctionDef(
                self.name,
                self._run_forward,
                _PROVIDER,
                inputs=("*x",),
                n_outputs=n_out,
                rule=Rule(self._run_backward, _PROVIDER, first_order_only=True),
                doc=f"user-defined nnabla PythonFunction {self.name}",
            )
        return fdef

    def __call__(self, *inputs: Any, n_outputs: int = -1, auto_forward: bool = False) -> Any:
        """Apply the function to the input Variables: one Variable, or a tuple of them when
        it has several outputs."""
        if not inputs:
            raise TypeError(f"nnabla PythonFunction {self.name}: give at least one input")
        for k, v in enumerate(inputs):
            if not isinstance(v, NativeVariable):
                raise TypeError(
                    f"nnabla PythonFunction {self.name}: input {k} must be a Variable, got "
                    f"{type(v).__name__}"
                )
        fdef = self._definition(len(inputs))
        return adopt(apply(fdef, inputs, {}), Variable)


def _grad_dtype(arr: Any) -> Any:
    return arr.dtype if arr.dtype.kind in "fc" else np.dtype(np.float32)
