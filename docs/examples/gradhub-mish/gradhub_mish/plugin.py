"""The hook implementations of gradhub-mish: one function, ``Mish``.

Everything a function needs travels with it: a forward kernel written against ``xp`` (numpy on the
CPU, CuPy on a GPU), a backward rule written with registered functions (so it is differentiable to
any order), the arrays the rule needs, test samples and an independent numpy reference (so that
``gradhub audit`` and the op matrix can verify it).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from gradhub import Sample, Variable, hookimpl
from gradhub.ops import call

# -- forward kernel ----------------------------------------------------------------------------


def mish_forward(xp: Any, x: Any) -> Any:
    """``x * tanh(softplus(x))`` on the array module ``xp`` of the device holding ``x``."""
    if x.dtype.kind != "f":
        raise TypeError(f"mish(): input 'x' must be floating-point, got dtype {x.dtype}")
    # softplus(x) = log(1 + exp(x)), computed without overflow as logaddexp(0, x)
    return x * xp.tanh(xp.logaddexp(x.dtype.type(0), x))


# -- backward rule -----------------------------------------------------------------------------


def mish_backward(
    grad_outputs: Sequence[Variable],
    inputs: Sequence[Variable | None],
    input_shapes: Sequence[tuple[int, ...]],
    outputs: Sequence[Variable | None],
    output_shapes: Sequence[tuple[int, ...]],
) -> list[Variable]:
    """d mish / dx = t + x * sigmoid(x) * (1 - t**2), with t = tanh(softplus(x)).

    Only registered functions are used (``call`` and Variable operators), so the gradient is
    itself a graph that can be differentiated again. The rule declares ``need_inputs=(0,)``: it
    reads ``x`` and nothing else, so the forward graph keeps ``x`` and frees the output.
    """
    (gy,) = grad_outputs
    x = inputs[0]
    assert x is not None  # need_inputs=(0,) guarantees it
    t = call("Tanh", call("Softplus", x))
    dt = (1.0 - t * t) * call("Sigmoid", x)
    return [gy * (t + x * dt)]


# -- reference and samples ---------------------------------------------------------------------


def mish_reference(x: np.ndarray) -> np.ndarray:
    """An independent numpy implementation: x * tanh(log(1 + exp(x)))."""
    return x * np.tanh(np.log1p(np.exp(x)))


def mish_samples(rng: np.random.Generator) -> Iterator[Sample]:
    """Small float64 inputs: a matrix, edge shapes, a non-contiguous view and large |x|."""
    yield Sample((rng.uniform(-3.0, 3.0, (3, 4)),), name="(3, 4)")
    yield Sample((rng.uniform(-3.0, 3.0, ()),), name="0-d")
    yield Sample((rng.uniform(-3.0, 3.0, (2, 0)),), name="size-0")
    yield Sample((rng.uniform(-3.0, 3.0, (4, 3)).T,), name="non-contiguous")
    yield Sample((np.array([-30.0, -8.0, 8.0, 30.0]),), name="large |x|")


MISH_DOC = """Mish activation (Misra, 2019), elementwise.

.. math:: y = x \\tanh(\\operatorname{softplus}(x)) = x \\tanh(\\log(1 + e^x))

Its derivative, ``t + x * sigmoid(x) * (1 - t**2)`` with ``t = tanh(softplus(x))``, is written
with registered functions, so derivatives of any order are available.

Example::

    >>> import gradhub as gh
    >>> import gradhub.functions as F
    >>> x = gh.Variable([-1.0, 0.0, 2.0])
    >>> F.mish(x).d
    array([-0.30340147,  0.        ,  1.9439589 ], dtype=float32)
"""


# -- the hook ----------------------------------------------------------------------------------


@hookimpl
def gradhub_add_functions(register: Any) -> None:
    """Register ``Mish`` (offered as ``gradhub.functions.mish``)."""
    register.function(
        "Mish",
        mish_forward,
        inputs=("x",),
        rule=mish_backward,
        need_inputs=(0,),
        need_outputs=(),
        samples=mish_samples,
        reference=mish_reference,
        elementwise=True,
        doc=MISH_DOC,
    )
