"""Native forward-mode (JVP) rules: the record, how one is set, and helpers to write them.

A function may have, besides its backward rule, a JVP rule (``FunctionDef.jvp_rule``):

.. code-block:: text

    rule(inputs, outputs, tangents, **attrs) -> output tangents

``inputs``/``outputs`` are the primal Variables of one recorded call (tuples), ``tangents`` the
tangent of each input (a Variable of the input's shape and dtype, or None for a zero tangent);
the rule returns one tangent per output (a Variable of the output's shape and dtype, or None)::

    \\dot y_k = \\sum_i \\frac{\\partial y_k}{\\partial x_i} \\dot x_i

Written with registered functions (``call``, Variable operators), the result is differentiable
again, so forward mode composes with itself and with reverse mode to any order. A function
without a JVP rule still works in forward mode: :func:`gradhub.engine.forward_tangents`
transposes its backward rule instead (two local reverse passes), with the same result.

Plugins add rules with the hook ``gradhub_add_jvp_rules`` (``register.jvp_rule(name, fn)``) or
``register.function(..., jvp=fn)``; a program with :func:`register_jvp_rule`. The audit
(``gradhub audit``) checks every JVP rule against the transposed backward rule and central
differences.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .errors import RegistrationError
from .ops import call
from .ops import fdef as _fdef_of
from .registry import REGISTRY, FunctionDef, Provider, _call_shape, _caller_provider

#: ``rule(inputs, outputs, tangents, **attrs) -> tangents``
JvpFn = Callable[..., Any]

#: the signature every JVP rule is called with
JVP_RULE_SIGNATURE = "(inputs, outputs, tangents, **attrs)"

__all__ = [
    "JVP_RULE_SIGNATURE",
    "JvpRule",
    "check_jvp_signature",
    "linear_jvp",
    "register_jvp_rule",
    "set_jvp_rule",
    "symmetric_jvp",
    "tangent_sum",
    "unary_jvp",
]


class JvpRule:
    """A JVP rule and who registered it (``fn``, ``provider``)."""

    __slots__ = ("fn", "provider")

    def __init__(self, fn: JvpFn, provider: Provider) -> None:
        self.fn = fn
        self.provider = provider

    def __repr__(self) -> str:
        return f"<JvpRule {getattr(self.fn, '__qualname__', self.fn)!s} from {self.provider}>"


def check_jvp_signature(fn: Any, func_name: str, where: str, provider: Provider | None) -> None:
    """Raise :class:`~gradhub.errors.RegistrationError` unless ``fn`` is callable with three
    positional arguments ``(inputs, outputs, tangents)`` (the attributes come by keyword).

    Example::

        >>> from gradhub.jvp_rules import check_jvp_signature
        >>> check_jvp_signature(lambda inputs, tangents: tangents, "Neg", "register", None)
        Traceback (most recent call last):
        gradhub.errors.RegistrationError: register('Neg'): the JVP rule must take ...
    """
    by = f" (from {provider})" if provider is not None else ""
    if not callable(fn):
        raise RegistrationError(
            f"{where}({func_name!r}): the JVP rule must be callable, got {type(fn).__name__}{by}"
        )
    shape = _call_shape(fn)
    if shape is None:
        return
    n_pos, var_pos = shape[0], shape[1]
    if n_pos < 3 and not var_pos:
        raise RegistrationError(
            f"{where}({func_name!r}): the JVP rule must take {JVP_RULE_SIGNATURE}; "
            f"{getattr(fn, '__name__', fn)!r}{by} takes {n_pos} positional arguments"
        )


def set_jvp_rule(
    fdef: FunctionDef,
    fn: JvpFn,
    provider: Provider,
    override: bool = False,
    where: str = "register.jvp_rule",
) -> None:
    """Install ``fn`` as the JVP rule of ``fdef``. A rule from another provider is replaced
    only with ``override=True`` (the replacement is recorded in ``fdef.overrides``); a
    composite (differentiated through its body) or a non-differentiable function takes none.

    Example::

        >>> from gradhub.jvp_rules import set_jvp_rule, unary_jvp
        >>> from gradhub.registry import REGISTRY, Provider
        >>> set_jvp_rule(REGISTRY.get("Sign"), unary_jvp(lambda t, x, y: t), Provider("me"))
        Traceback (most recent call last):
        gradhub.errors.RegistrationError: register.jvp_rule('Sign'): Sign is non-differentiable ...
    """
    check_jvp_signature(fn, fdef.name, where, provider)
    if not fdef.differentiable:
        raise RegistrationError(
            f"{where}({fdef.name!r}): {fdef.name} is non-differentiable and takes no JVP rule"
        )
    if fdef.kind == "composite":
        raise RegistrationError(
            f"{where}({fdef.name!r}): {fdef.name} is a composite; forward mode goes through the "
            "functions it calls, so it takes no JVP rule (register a backward rule first to make "
            "it a primitive)"
        )
    old = fdef.jvp_rule
    if old is not None and old.provider != provider:
        if not override:
            raise RegistrationError(
                f"{where}({fdef.name!r}): function {fdef.name} already has a JVP rule from "
                f"{old.provider}; {provider} must pass override=True to replace it"
            )
        fdef.overrides.append((f"JVP rule of {old.provider}", str(provider)))
    fdef.jvp_rule = JvpRule(fn, provider)


def register_jvp_rule(func_name: str, fn: JvpFn, *, override: bool = False) -> None:
    """Set the JVP rule of the registered function ``func_name`` from a program (plugins use
    the hook ``gradhub_add_jvp_rules``). See :mod:`gradhub.jvp_rules` for the signature.

    Example::

        >>> import gradhub as gh
        >>> from gradhub.jvp_rules import register_jvp_rule, unary_jvp
        >>> register_jvp_rule("Neg", unary_jvp(lambda t, x, y: -t), override=True)
        >>> import gradhub.func as ghf
        >>> ghf.jvp(lambda x: -x, (gh.Variable([1.0]),), (gh.Variable([2.0]),))[1].d
        array([-2.], dtype=float32)
    """
    set_jvp_rule(REGISTRY.get(func_name), fn, _caller_provider(), override, "register_jvp_rule")


def unary_jvp(fn: Callable[..., Any]) -> JvpFn:
    """The JVP rule ``(fn(t, x, y, **attrs),)`` of a one-input, one-output function, from the
    tangent ``t`` of its input ``x`` and its output ``y``.

    For an elementwise function the Jacobian is diagonal, so the tangent is the derivative times
    ``t``, :math:`\\dot y = f'(x)\\, t`: the backward formula ``g * f'(x)`` with ``t`` for ``g``
    (gradhub-nn-ops derives its elementwise JVP rules from their derivative formulas so).

    Example::

        >>> import gradhub as gh
        >>> from gradhub.jvp_rules import unary_jvp
        >>> rule = unary_jvp(lambda t, x, y: t / x)          # the JVP of log
        >>> x, t = gh.Variable([2.0]), gh.Variable([1.0])
        >>> rule((x,), (None,), (t,))[0].d
        array([0.5], dtype=float32)
    """

    def rule(
        inputs: Sequence[Any], outputs: Sequence[Any], tangents: Sequence[Any], **attrs: Any
    ) -> tuple[Any]:
        return (fn(tangents[0], inputs[0], outputs[0], **attrs),)

    rule.__name__ = rule.__qualname__ = f"jvp_{getattr(fn, '__name__', 'rule')}"
    return rule


def linear_jvp(name: str) -> JvpFn:
    """The JVP rule of a one-input function linear in its input (``Reshape``, ``Sum``,
    ``GetItem``...): the function ``name`` itself applied to the tangent, with the same
    attributes, :math:`\\dot y = f(\\dot x)`.

    Example::

        >>> import gradhub as gh
        >>> from gradhub.jvp_rules import linear_jvp
        >>> t = gh.Variable([[1.0, 2.0], [3.0, 4.0]])
        >>> linear_jvp("Sum")((t,), (None,), (t,), axis=0, keepdims=False)[0].d
        array([4., 6.], dtype=float32)
    """

    def rule(
        inputs: Sequence[Any], outputs: Sequence[Any], tangents: Sequence[Any], **attrs: Any
    ) -> tuple[Any]:
        t = tangents[0]
        return (None if t is None else call(name, t, **attrs),)

    rule.__name__ = rule.__qualname__ = f"jvp_linear_{name}"
    return rule


def symmetric_jvp(name: str) -> JvpFn:
    """The JVP rule of a one-input, one-output function whose Jacobian is symmetric (every
    elementwise function: its Jacobian is diagonal; softmax: :math:`\\mathrm{diag}(y) - y y^T`):
    :math:`J t = J^T t`, so the function's own backward rule (looked up when the rule runs)
    applied to the tangent in place of the output gradient.

    Example::

        >>> import gradhub as gh
        >>> from gradhub.jvp_rules import symmetric_jvp
        >>> x = gh.Variable([-1.0, 2.0])
        >>> symmetric_jvp("Abs")((x,), (abs(x),), (gh.Variable([1.0, 1.0]),))[0].d
        array([-1.,  1.], dtype=float32)
    """

    def rule(
        inputs: Sequence[Any], outputs: Sequence[Any], tangents: Sequence[Any], **attrs: Any
    ) -> tuple[Any]:
        t = tangents[0]
        if t is None:
            return (None,)
        back = _fdef_of(name).rule
        if back is None:
            raise RegistrationError(f"symmetric_jvp({name!r}): {name} has no backward rule")
        res = back.fn(
            [t],
            list(inputs),
            [x.shape for x in inputs],
            list(outputs),
            [y.shape for y in outputs],
            **attrs,
        )
        return (res[0],)

    rule.__name__ = rule.__qualname__ = f"jvp_symmetric_{name}"
    return rule


def tangent_sum(parts: Sequence[Any], shape: Sequence[int]) -> Any:
    """The sum of the Variables in ``parts`` that are not None, broadcast to ``shape`` (an
    output tangent from per-input contributions); None when all are None.

    Example::

        >>> import gradhub as gh
        >>> from gradhub.jvp_rules import tangent_sum
        >>> tangent_sum([None, gh.Variable([1.0, 2.0])], (2, 2)).d
        array([[1., 2.],
               [1., 2.]], dtype=float32)
    """
    total = None
    for p in parts:
        if p is None:
            continue
        total = p if total is None else total + p
    if total is not None and total.shape != tuple(shape):
        total = call("BroadcastTo", total, shape=tuple(shape))
    return total
