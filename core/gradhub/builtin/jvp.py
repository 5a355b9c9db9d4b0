"""Native forward-mode (JVP) rules of the core's functions (see :mod:`gradhub.jvp_rules`).

Each rule maps the input tangents ``t`` of one call to its output tangent, written with
registered functions so that it is differentiable again:

* linear functions (``Sum``, ``BroadcastTo``, ``Reshape``, ``Transpose``, ``Cast``, ``ToDevice``,
  ``GetItem``, ``GetItemBackward``, ``Neg``, ``AddScalar``, ``MulScalar``) apply themselves to
  the tangent;
* ``Add2``/``Sub2`` add/subtract the tangents, ``Mul2``/``Div2``/``BatchMatmul`` use the product
  rule, ``Pow2`` both partial derivatives (with the conventions of its backward rule at
  ``x0 == 0`` and ``x1 == 0``);
* elementwise functions of one input multiply the tangent by the derivative.

Sign and EqualScalar are not differentiable: their outputs have no tangent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..jvp_rules import linear_jvp, tangent_sum, unary_jvp
from ..ops import call
from .elementwise import pow2_exponent

Vars = Sequence[Any]


def _add2(ins: Vars, outs: Vars, ts: Vars) -> tuple[Any]:
    return (tangent_sum(ts, outs[0].shape),)


def _sub2(ins: Vars, outs: Vars, ts: Vars) -> tuple[Any]:
    t0, t1 = ts
    return (tangent_sum([t0, None if t1 is None else -t1], outs[0].shape),)


def _mul2(ins: Vars, outs: Vars, ts: Vars) -> tuple[Any]:
    (x0, x1), (t0, t1) = ins, ts
    return (
        tangent_sum(
            [None if t0 is None else t0 * x1, None if t1 is None else x0 * t1], outs[0].shape
        ),
    )


def _div2(ins: Vars, outs: Vars, ts: Vars) -> tuple[Any]:
    # d(x0 / x1) = t0 / x1 - y t1 / x1
    x1, (t0, t1), y = ins[1], ts, outs[0]
    num = tangent_sum([t0, None if t1 is None else -(y * t1)], y.shape)
    return (num / x1,)


def _pow_scalar(t: Any, x: Any, y: Any, val: float) -> Any:
    if val == 0:
        return t * 0.0
    if val == 1:
        return t
    return t * (x ** (val - 1)) * val


def _rpow_scalar(t: Any, x: Any, y: Any, val: float) -> Any:
    if val == 0:  # as the backward rule: 0 ** x is taken as constant
        return t * 0.0
    return t * call("RPowScalar", x, val=val) * float(math.log(val))


def _pow2(ins: Vars, outs: Vars, ts: Vars) -> tuple[Any]:
    (x0, x1), (t0, t1), y = ins, ts, outs[0]
    parts = [None, None]
    if t0 is not None:  # x1 x0^(x1 - 1), exponent 0 where x0 == x1 == 0 (see Pow2's rule)
        parts[0] = t0 * x1 * call("Pow2", x0, pow2_exponent(x0, x1))
    if t1 is not None:  # y ln x0, with ln 1 where x0 == 0
        safe = x0 + call("EqualScalar", x0, val=0.0)
        parts[1] = t1 * y * call("Log", safe)
    return (tangent_sum(parts, y.shape),)


def _batch_matmul(
    ins: Vars, outs: Vars, ts: Vars, transpose_a: bool = False, transpose_b: bool = False
) -> tuple[Any]:
    (a, b), (ta, tb) = ins, ts
    kw = {"transpose_a": transpose_a, "transpose_b": transpose_b}
    parts = [
        None if ta is None else call("BatchMatmul", ta, b, **kw),
        None if tb is None else call("BatchMatmul", a, tb, **kw),
    ]
    return (tangent_sum(parts, outs[0].shape),)


#: name -> rule
RULES: dict[str, Any] = {
    "Add2": _add2,
    "Sub2": _sub2,
    "Mul2": _mul2,
    "Div2": _div2,
    "Pow2": _pow2,
    "BatchMatmul": _batch_matmul,
    "Neg": unary_jvp(lambda t, x, y: -t),
    "AddScalar": unary_jvp(lambda t, x, y, val: t),
    "MulScalar": unary_jvp(lambda t, x, y, val: t * val),
    "PowScalar": unary_jvp(_pow_scalar),
    "RDivScalar": unary_jvp(lambda t, x, y, val: t * (x**-2) * (-val)),
    "RPowScalar": unary_jvp(_rpow_scalar),
    "Abs": unary_jvp(lambda t, x, y: t * call("Sign", x, alpha=0.0)),
    "Log": unary_jvp(lambda t, x, y: t / x),
    **{
        name: linear_jvp(name)
        for name in (
            "Sum",
            "BroadcastTo",
            "Reshape",
            "Transpose",
            "Cast",
            "ToDevice",
            "GetItem",
            "GetItemBackward",
        )
    },
}


def register_jvp_rules(register: Any) -> None:
    """Register the JVP rules above (``register.jvp_rule``, provider ``gradhub``)."""
    for name, rule in RULES.items():
        register.jvp_rule(name, rule)
