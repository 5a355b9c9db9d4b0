"""gradhub-nn-ops: boolean masks (nnabla's ``BoolGather``, ``BoolScatter``, ``BoolFill``).

A mask holds nonzero (true) and zero entries, of any dtype (nnabla's masks are float32
Variables). ``BoolGather`` and ``BoolScatter`` are each other's gradients, ``BoolFill``'s gradient
is again a ``BoolFill``: every rule is a registered function, so each is differentiable to any
order in the data. Masks get no gradient.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub import Sample
from gradhub.ops import call


def _leading_mask(fn: str, data_shape: tuple[int, ...], mask: Any, what: str) -> Any:
    """``mask`` as booleans, checked to be the leading part of ``data_shape``."""
    ms = tuple(mask.shape)
    if len(ms) == 0 or ms != tuple(data_shape[: len(ms)]):
        raise ValueError(
            f"{fn}: mask of shape {ms} must be the leading axes of {what} of shape "
            f"{tuple(data_shape)}"
        )
    return mask != 0


def _bool_gather(xp: Any, input: Any, mask: Any) -> Any:
    m = _leading_mask("bool_gather", tuple(input.shape), mask, "input")
    return input[m]


def _bool_gather_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    return [call("BoolScatter", gy[0], inputs[1]), None]


def _bool_scatter(xp: Any, input: Any, mask: Any, output: Any = None) -> Any:
    m = mask != 0
    if mask.ndim == 0:
        raise ValueError("bool_scatter: mask must have at least 1 dim, got a 0-d mask")
    n = int(m.sum())
    if input.ndim < 1 or input.shape[0] != n:
        raise ValueError(
            f"bool_scatter: input of shape {tuple(input.shape)} must hold one row per true "
            f"element of the mask ({n})"
        )
    shape = (*mask.shape, *input.shape[1:])
    if output is None:
        y = xp.zeros(shape, dtype=input.dtype)
    else:
        if tuple(output.shape) != shape:
            raise ValueError(
                f"bool_scatter: output has shape {tuple(output.shape)}, expected {shape} "
                "(mask.shape + input.shape[1:])"
            )
        y = output.astype(xp.result_type(input.dtype, output.dtype), copy=True)
    y[m] = input
    return y


def _bool_scatter_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    g, mask = gy[0], inputs[1]
    grads = [call("BoolGather", g, mask), None]
    if len(in_shapes) > 2:
        # the output's elements where the mask is false pass through; reshaped so that the
        # mask's axes lead, as BoolFill broadcasts
        ms = tuple(in_shapes[1])
        m = call("Reshape", mask, shape=(*ms, *(1,) * (len(in_shapes[2]) - len(ms))))
        grads.append(call("BoolFill", g, m, value=0.0))
    return grads


def _bool_fill(xp: Any, data: Any, mask: Any, value: float = 0.0) -> Any:
    try:
        m = xp.broadcast_to(mask != 0, data.shape)
    except ValueError:
        raise ValueError(
            f"bool_fill: mask of shape {tuple(mask.shape)} does not broadcast to data of shape "
            f"{tuple(data.shape)}"
        ) from None
    return xp.where(m, xp.asarray(value, dtype=data.dtype), data)


def _bool_fill_bw(gy, inputs, in_shapes, outputs, out_shapes, value):  # type: ignore[no-untyped-def]
    return [call("BoolFill", gy[0], inputs[1], value=0.0), None]


def _mask(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    m = (rng.random(shape) < 0.5).astype(np.float64)
    m.flat[0], m.flat[-1] = 1.0, 0.0  # at least one of each
    return m


def _gather_samples(rng: np.random.Generator) -> Iterator[Sample]:
    n = rng.standard_normal
    yield Sample((n((4, 3)), _mask(rng, (4,))), grad_inputs=(0,), name="rows")
    yield Sample((n((3, 4)), _mask(rng, (3, 4))), grad_inputs=(0,), name="elements")
    yield Sample(
        (n((2, 3, 2)), np.array([[True, False, True], [False, True, False]])),
        name="bool mask",
    )
    yield Sample((n((3, 2)), np.zeros(3)), grad_inputs=(0,), name="empty mask")


def _scatter_samples(rng: np.random.Generator) -> Iterator[Sample]:
    n = rng.standard_normal
    m = np.array([1.0, 0.0, 1.0, 1.0])
    yield Sample((n((3, 2)), m), grad_inputs=(0,), name="rows")
    yield Sample((n((3, 2)), m, n((4, 2))), grad_inputs=(0, 2), name="into output")
    m2 = np.array([[1, 0], [0, 1], [1, 1]])
    yield Sample((n((4,)), m2, n((3, 2))), grad_inputs=(0, 2), name="elements into output")


def _fill_samples(rng: np.random.Generator) -> Iterator[Sample]:
    n = rng.standard_normal
    yield Sample((n((2, 3)), _mask(rng, (2, 3))), {"value": 0.0}, grad_inputs=(0,), name="zero")
    yield Sample(
        (n((2, 3)), np.array([1.0, 0.0, 1.0])), {"value": 2.5}, grad_inputs=(0,), name="broadcast"
    )
    yield Sample(
        (n((2, 3)), np.array([[0], [1]])), {"value": -1.0}, grad_inputs=(0,), name="column mask"
    )


def _gather_ref(input: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return input[mask != 0]


def _scatter_ref(
    input: np.ndarray, mask: np.ndarray, output: np.ndarray | None = None
) -> np.ndarray:
    shape = (*mask.shape, *input.shape[1:])
    y = np.zeros(shape, input.dtype) if output is None else output.copy()
    y[mask != 0] = input
    return y


def _fill_ref(data: np.ndarray, mask: np.ndarray, value: float = 0.0) -> np.ndarray:
    return np.where(np.broadcast_to(mask != 0, data.shape), data.dtype.type(value), data)


def register_functions(register: Any) -> None:
    """Register the mask functions."""
    f = register.function
    f(
        "BoolGather",
        _bool_gather,
        inputs=("input", "mask"),
        rule=_bool_gather_bw,
        need_inputs=(1,),
        need_outputs=(),
        samples=_gather_samples,
        reference=_gather_ref,
        doc="""bool_gather(input, mask): the elements (or sub-arrays) of ``input`` where ``mask``
is true, in order, ``input[mask != 0]`` (nnabla ``F.bool_gather``).

``mask`` has the shape of ``input``'s leading axes; the output has shape
``(count, *input.shape[mask.ndim:])``. The gradient of ``input`` is ``bool_scatter(dy, mask)``
(zero where the mask is false); the mask gets none.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    >>> F.bool_gather(x, np.array([1.0, 0.0, 1.0])).d
    array([[1., 2.],
           [5., 6.]])
""",
    )
    f(
        "BoolScatter",
        _bool_scatter,
        inputs=("input", "mask", "output?"),
        rule=_bool_scatter_bw,
        need_inputs=(1,),
        need_outputs=(),
        samples=_scatter_samples,
        reference=_scatter_ref,
        doc="""bool_scatter(input, mask, output=None): the rows of ``input`` put where ``mask`` is
true, in order (nnabla ``F.bool_scatter``; the inverse of ``bool_gather``).

The output has shape ``mask.shape + input.shape[1:]``: zeros where the mask is false, or the
elements of ``output`` there (a new array: ``output`` is not modified). Gradients: ``input``
gets ``bool_gather(dy, mask)``, ``output`` gets ``dy`` where the mask is false (0 elsewhere), as
nnabla's; the mask gets none.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([[1.0, 2.0], [5.0, 6.0]]))
    >>> F.bool_scatter(x, np.array([1.0, 0.0, 1.0])).d
    array([[1., 2.],
           [0., 0.],
           [5., 6.]])
""",
    )
    f(
        "BoolFill",
        _bool_fill,
        inputs=("data", "mask"),
        attrs={"value": 0.0},
        rule=_bool_fill_bw,
        need_inputs=(1,),
        need_outputs=(),
        samples=_fill_samples,
        reference=_fill_ref,
        doc="""bool_fill(data, mask, value=0): ``data`` with ``value`` where ``mask`` is true
(nnabla ``F.bool_fill``); ``mask`` broadcasts to ``data``'s shape (numpy's rules).

The gradient of ``data`` is ``dy`` where the mask is false and 0 where it is true (again a
``bool_fill``); the mask gets none.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> F.bool_fill(x, np.array([[1.0, 0.0], [0.0, 1.0]]), value=7.5).d
    array([[7.5, 2. ],
           [3. , 7.5]])
""",
    )
