"""gradhub-nn-ops: functions that change the gradient flowing through them.

``StopGradient`` (the identity with no gradient, as ``jax.lax.stop_gradient``), nnabla's
``ClipGradByValue``/``ClipGradByNorm`` (the identity whose backward rule clips the gradient, as
nnabla's) and ``TopKGrad`` (the identity whose backward rule keeps the k largest gradients). The
clipped gradient is built with registered functions, so it can be differentiated again.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub import Sample
from gradhub.builtin.samples import unary_samples
from gradhub.ops import call

from .math import axes_arg

# -- StopGradient ------------------------------------------------------------------------------


def _stop_gradient(xp: Any, x: Any) -> Any:
    return x.copy()  # a new array: the output is never the input's buffer


# -- ClipGradByValue / ClipGradByNorm (identity forward, clipped gradient) -----------------------


def _identity(xp: Any, x: Any, *rest: Any, **attrs: Any) -> Any:
    return x.copy()


def _clip_grad_by_value_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    g = call("Minimum2", call("Maximum2", gy[0], inputs[1]), inputs[2])
    return [g, None, None]


def _clip_grad_by_norm_bw(gy, inputs, in_shapes, outputs, out_shapes, clip_norm, axes):  # type: ignore[no-untyped-def]
    g = gy[0]
    ax = axes_arg("clip_grad_by_norm", axes, len(in_shapes[0]))
    n2 = call("Sum", g * g, axis=ax, keepdims=True)
    return [call("MulScalar", g, val=float(clip_norm)) * call("PowScalar", n2, val=-0.5)]


def _clip_grad_samples(rng: np.random.Generator) -> Iterator[Sample]:
    # The gradient is not the derivative of the identity: the values are checked here, the
    # gradients against nnabla's in tests/nn_ops/test_gradient_clipping.py.
    x = rng.standard_normal((2, 3))
    yield Sample((x, -np.ones((2, 3)), np.ones((2, 3))), grad_inputs=(), name="values")


def _clip_grad_norm_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.standard_normal((2, 3))
    yield Sample((x,), {"clip_norm": 1.0, "axes": None}, grad_inputs=(), name="all axes")
    yield Sample((x,), {"clip_norm": 2.0, "axes": (1,)}, grad_inputs=(), name="axis 1")


def _top_k_grad_bw(gy, inputs, in_shapes, outputs, out_shapes, k, abs, base_axis):  # type: ignore[no-untyped-def]
    return [call("TopKData", gy[0], k=k, abs=abs, reduce=False, base_axis=base_axis)]


def _top_k_grad_samples(rng: np.random.Generator) -> Iterator[Sample]:
    # The gradient is not the derivative of the identity: the values are checked here, the
    # gradients against nnabla's in tests/nn_ops/test_top_k_grad.py.
    x = rng.standard_normal((2, 4))
    yield Sample((x,), {"k": 2, "abs": False, "base_axis": 1}, grad_inputs=(), name="k 2")
    yield Sample((x,), {"k": 1, "abs": True, "base_axis": 0}, grad_inputs=(), name="abs, axis 0")


# -- registration ------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register the functions that change the gradient flow."""
    f = register.function
    f(
        "StopGradient",
        _stop_gradient,
        differentiable=False,
        samples=unary_samples(),
        reference=lambda x: x,
        elementwise=True,
        doc="""stop_gradient(x): :math:`y = x` with no gradient (``jax.lax.stop_gradient``).

A recorded function, unlike ``x.detach()`` (a new leaf holding the data of the moment): a
graph re-executed with ``forward()`` recomputes it from ``x``'s new value. With it, a
straight-through estimator is ``f(x) + (x - stop_gradient(x))``: the value of ``f``, the
gradient of the identity.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([1.0, 2.0]))
    >>> y = F.sum(x * F.stop_gradient(x))
    >>> gh.grad([y], [x])[0].d
    array([1., 2.])
""",
    )
    register.function(
        "ClipGradByValue",
        _identity,
        inputs=("x", "min", "max"),
        rule=_clip_grad_by_value_bw,
        need_inputs=(1, 2),
        need_outputs=(),
        samples=_clip_grad_samples,
        reference=lambda x, lo, hi: x,
        doc=r"""clip_grad_by_value(x, min, max): the identity whose gradient is clipped
(nnabla ``F.clip_grad_by_value``).

Forward :math:`y = x`; backward :math:`g_x = \min(\max(g_y, min), max)` elementwise.
``min`` and ``max`` are arrays of ``x``'s shape and get no gradient. The clipped gradient is
built with ``Maximum2``/``Minimum2``, so it can be differentiated again.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([1.0, 2.0, 3.0]))
    >>> lo, hi = gh.Variable(-np.ones(3)), gh.Variable(np.ones(3))
    >>> y = F.clip_grad_by_value(x, lo, hi)
    >>> y.backward(np.array([3.0, -0.5, -2.0]))
    >>> x.g
    array([ 1. , -0.5, -1. ])
""",
    )
    register.function(
        "TopKGrad",
        _identity,
        attrs={"k": 1, "abs": False, "base_axis": 1},
        rule=_top_k_grad_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_top_k_grad_samples,
        reference=lambda x, k=1, abs=False, base_axis=1: x,
        doc=r"""top_k_grad(x, k, abs=False, base_axis=1): the identity whose gradient keeps, in
each sample (the axes from ``base_axis`` on), only the ``k`` largest elements of the incoming
gradient (by magnitude with ``abs=True``), the others set to 0 (nnabla ``F.top_k_grad``).

The kept gradient is ``top_k_data(dy, k, abs, reduce=False, base_axis)``, a registered function,
so it can be differentiated again. Ties are ranked in order of position.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([[1.0, -4.0, 3.0, 2.0]]))
    >>> y = F.top_k_grad(x, 2)
    >>> y.backward(np.array([[1.0, 2.0, 3.0, 4.0]]))
    >>> x.g
    array([[0., 0., 3., 4.]])
""",
    )
    register.function(
        "ClipGradByNorm",
        _identity,
        attrs={"clip_norm": 1.0, "axes": None},
        rule=_clip_grad_by_norm_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_clip_grad_norm_samples,
        reference=lambda x, clip_norm=1.0, axes=None: x,
        doc=r"""clip_grad_by_norm(x, clip_norm=1.0, axes=None): the identity whose gradient is
rescaled to the L2 norm ``clip_norm`` over ``axes`` (all axes when None) (nnabla
``F.clip_grad_by_norm``).

Forward :math:`y = x`; backward :math:`g_x = N g_y / \|g_y\|_2`, always (also when the norm
is smaller than ``N``, as nnabla's). A zero gradient gives NaN, as nnabla's.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([1.0, 2.0]))
    >>> y = F.clip_grad_by_norm(x, 1.0)
    >>> y.backward(np.array([3.0, 4.0]))
    >>> x.g
    array([0.6, 0.8])
""",
    )
