"""The registry: functions, backward rules, kernels and devices, as tables.

A function is a name (``"Affine"``) plus entries: a generic forward kernel written against the
array module ``xp`` (so it runs on every device), optional faster kernels keyed by device kind, one
backward rule, and metadata (which inputs/outputs the rule needs, samples and kinks for testing).
Plugins fill these tables once, at load time (see :mod:`gradhub.plugins`); calling a function
afterwards only reads them.
"""

from __future__ import annotations

import inspect
import keyword
import re
import sys
import types
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from .device import (
    CPU_TYPE,
    KNOWN_DEVICE_DISTRIBUTIONS,
    Device,
    DeviceType,
    bind_device_lookup,
)
from .errors import DeviceError, FunctionNotFoundError, RegistrationError
from .modes import set_recording

#: ``rule(grad_outputs, inputs, input_shapes, outputs, output_shapes, **attrs) -> grads``
RuleFn = Callable[..., Any]
Kernel = Callable[..., Any]


# The records below are plain classes and NamedTuples rather than dataclasses: creating a dataclass
# costs about 0.5 ms (its methods are generated with exec), and importing gradhub is on the
# start-up path (W6).


class Provider(NamedTuple):
    """Who registered something: a distribution and its version, or a module (immutable)."""

    distribution: str
    version: str = ""
    module: str = ""

    def __str__(self) -> str:
        if self.distribution:
            return f"{self.distribution} {self.version}".strip()
        return f"module {self.module}"


def one_input_fast(fn: Callable[..., Any]) -> RuleFn:
    """The array-level first-order rule of a one-input, one-output function, from one formula.

    ``fn(xp, gy, x, y, **attrs)`` returns the input's gradient array from the output's gradient
    ``gy``, the input ``x`` and the output ``y`` (each ``None`` unless the rule declared it needs
    it). The result is a regular ``fast_backward``; the engine also finds ``fn`` on it (as
    ``fast.one_input``) and calls it directly, without building lists.

    Example::

        >>> import numpy as np
        >>> from gradhub.registry import one_input_fast
        >>> fast = one_input_fast(lambda xp, gy, x, y: gy * xp.cos(x))
        >>> fast(np, [np.ones(1)], [np.zeros(1)], [(1,)], [None], [(1,)])
        [array([1.])]
    """

    def fast(
        xp: Any,
        gy: Sequence[Any],
        x: Sequence[Any],
        xs: Sequence[Any],
        y: Sequence[Any],
        ys: Sequence[Any],
        **attrs: Any,
    ) -> list[Any]:
        return [fn(xp, gy[0], x[0], y[0], **attrs)]

    fast.__name__ = getattr(fn, "__name__", "fast")
    fast.one_input = fn  # type: ignore[attr-defined]
    return fast


_KEEPS = {(): 0, (0,): 1, (0, 1): 2}


class Rule:
    """A backward rule and what it needs from the forward pass.

    ``need_inputs``/``need_outputs``: indices of the forward inputs/outputs the rule reads
    (``None``: all). The others are passed to the rule as ``None`` and freed after the forward step.
    ``first_order_only``: the rule uses raw kernels, so a graph through its result raises when it is
    differentiated again. ``fast``: an optional array-level version of the same rule,
    ``fast(xp, grad_outputs, inputs, input_shapes, outputs, output_shapes, **attrs) -> arrays``,
    used for first-order backward (``create_graph=False``) where wrapping every intermediate in a
    Variable would cost more than the arithmetic; it is replaced together with the rule. A fast
    rule with a parameter ``need_grads`` receives a tuple of bools saying which inputs need a
    gradient (so it can skip, say, the input gradient of a first layer).
    """

    def __init__(
        self,
        fn: RuleFn,
        provider: Provider,
        need_inputs: tuple[int, ...] | None = None,
        need_outputs: tuple[int, ...] | None = None,
        first_order_only: bool = False,
        fast: RuleFn | None = None,
    ) -> None:
        self.fn = fn
        self.provider = provider
        self.need_inputs = need_inputs
        self.need_outputs = need_outputs
        #: what a node keeps, as a number the recording path tests quickly: 0 nothing, 1 input 0
        #: only, 2 inputs 0 and 1 only, -1 anything else (see ``Node.save``)
        self.keeps = (
            _KEEPS.get(need_inputs, -1) if need_outputs == () and need_inputs is not None else -1
        )
        self.first_order_only = first_order_only
        self.fast = fast
        #: the formula of a fast rule built by :func:`one_input_fast`, which the engine calls
        #: directly: ``fast1(xp, gy, x, y, **attrs) -> array``
        self.fast1: Callable[..., Any] | None = getattr(fast, "one_input", None)
        #: whether ``fast`` takes the keyword ``need_grads`` (which inputs need a gradient)
        self.fast_wants_need_grads = fast is not None and _takes_keyword(fast, "need_grads")
        #: the rule kernels of this rule by device kind (see :func:`rule_kernel_rule`): a Rule
        #: whose ``fast`` (and ``fast1``) is that device's kernel; None when there is none. A rule
        #: with rule kernels has no ``fast1`` of its own (its ``fast`` still calls the formula), so
        #: the engine's direct one-input path, which never looks at the device, skips it; its
        #: general path (``_call_rule_arrays``) picks the node's device kernel
        self.devices: dict[str, Rule] | None = None

    def __repr__(self) -> str:
        return f"<Rule {getattr(self.fn, '__qualname__', self.fn)!s} from {self.provider}>"


class Sample:
    """One test case of a function: input arrays (float64 for the differentiable ones) and attrs.

    ``grad_inputs``: indices of the inputs to differentiate (default: every floating input).
    ``max_order``: highest derivative order this sample is checked to (default: the op matrix's).
    ``keeps_float32``: whether float32 inputs must give float32 outputs (False for casts).
    """

    def __init__(
        self,
        inputs: tuple[Any, ...],
        attrs: dict[str, Any] | None = None,
        grad_inputs: tuple[int, ...] | None = None,
        max_order: int | None = None,
        name: str = "",
        keeps_float32: bool = True,
    ) -> None:
        self.inputs = inputs
        self.attrs: dict[str, Any] = {} if attrs is None else attrs
        self.grad_inputs = grad_inputs
        self.max_order = max_order
        self.name = name
        self.keeps_float32 = keeps_float32

    def __repr__(self) -> str:
        shapes = [getattr(a, "shape", type(a).__name__) for a in self.inputs]
        return f"Sample({self.name!r}, inputs {shapes}, attrs {self.attrs!r})"


#: quoted, so that importing this module does not import ``numpy.random`` (about 10 ms)
SampleFn = Callable[["np.random.Generator"], Iterable[Sample]]


class FunctionDef:
    """A primitive function: forward kernels, a backward rule and metadata."""

    kind = "primitive"
    #: arguments the public callable accepts and ignores, with their defaults (nnabla's
    #: ``inplace``), after the attributes; set with :func:`ignore_arguments`
    ignored: dict[str, Any] = {}

    def __init__(
        self,
        name: str,
        forward: Kernel,
        provider: Provider,
        inputs: tuple[str, ...] = ("x",),
        attrs: dict[str, Any] | None = None,
        n_outputs: int | Callable[..., int] = 1,
        differentiable: bool = True,
        rule: Rule | None = None,
        samples: SampleFn | None = None,
        reference: Callable[..., Any] | None = None,
        elementwise: bool = False,
        kinks: tuple[float, ...] = (),
        doc: str = "",
        snake: str = "",
        kernels: dict[str, Kernel] | None = None,
        kernel_providers: dict[str, Provider] | None = None,
        kind: str | None = None,
        api: Callable[..., Any] | None = None,
    ) -> None:
        self.name = name
        self.forward = forward
        self.provider = provider
        self.inputs = inputs
        self.attrs: dict[str, Any] = {} if attrs is None else attrs
        self.n_outputs = n_outputs
        self.differentiable = differentiable
        self.rule = rule
        self.samples = samples
        self.reference = reference
        self.elementwise = elementwise
        self.kinks = kinks
        self.doc = doc
        self.snake = snake or snake_case(name)
        self.kernels: dict[str, Kernel] = {} if kernels is None else kernels
        self.kernel_providers: dict[str, Provider] = (
            {} if kernel_providers is None else kernel_providers
        )
        #: audit results: device kind -> (highest verified order, failed order or None; 0 for a
        #: wrong forward result)
        self.audit: dict[str, tuple[int, int | None]] = {}
        #: rule overrides: (previous provider, new provider)
        self.overrides: list[tuple[str, str]] = []
        if kind is not None:
            self.kind = kind
        self.api = make_api(self) if api is None else api
        #: the number of inputs when all are required and none is variadic, else -1
        plain = all(not (n.startswith("*") or n.endswith("?")) for n in self.inputs)
        self.n_plain_inputs = len(self.inputs) if plain and self.kind == "primitive" else -1
        #: the native forward-mode (JVP) rule, a :class:`gradhub.jvp.JvpRule`, or None: forward
        #: mode then transposes the backward rule (see :func:`gradhub.engine.forward_tangents`)
        self.jvp_rule: Any = None
        #: the batching rule (``rule(args, dims, **attrs) -> (outputs, out_dims)``, see
        #: :mod:`gradhub.batching`) and who set it; None: vmap loops over the batch
        self.batch_rule: Callable[..., Any] | None = None
        self.batch_rule_provider: Provider | None = None
        #: whether the kernel draws random numbers (a new value at each call): never replayed
        #: from a recorded device graph (see :mod:`gradhub.capture`)
        self.random = False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} from {self.provider}>"

    def status(self) -> str:
        """Higher-order status: verified/failed/unverified/first-order-only/non-differentiable.

        ``failed (DEVICE@N)``: the audit found the derivative of order N wrong on DEVICE; N = 0:
        the forward result differs from the reference (or the kernel raised).
        """
        if not self.differentiable:
            return "non-differentiable"
        if self.kind == "primitive" and self.rule is None:
            return "no rule"
        if self.rule is not None and self.rule.first_order_only:
            base = "first-order-only"
        else:
            base = "unverified"
        failed = [f"{dev}@{f}" for dev, (_, f) in sorted(self.audit.items()) if f is not None]
        if failed:
            return "failed (" + ", ".join(failed) + ")"
        if self.audit:
            parts = [f"{dev}<={o}" for dev, (o, _) in sorted(self.audit.items())]
            return ("verified " if base == "unverified" else base + ", verified ") + ", ".join(
                parts
            )
        return base


class CompositeDef(FunctionDef):
    """A function written in terms of other functions: it needs no rule of its own."""

    kind = "composite"


class ParametricDef:
    """A parametric function (``PF.affine``): creates parameters and calls functions."""

    def __init__(self, name: str, fn: Callable[..., Any], provider: Provider) -> None:
        self.name = name
        self.fn = fn
        self.provider = provider

    def __repr__(self) -> str:
        return f"<ParametricDef {self.name} from {self.provider}>"


def did_you_mean(name: str, candidates: Iterable[str], n: int = 3) -> str:
    """`` (did you mean 'a' or 'b'?)`` for the candidates closest to a mistyped ``name``
    (:func:`difflib.get_close_matches`, case-insensitive), or ``""`` when none is close.

    Example::

        >>> from gradhub.registry import did_you_mean
        >>> did_you_mean("sigmod", ["sigmoid", "softmax", "tanh"])
        " (did you mean 'sigmoid'?)"
    """
    import difflib  # only on the error path: importing gradhub stays cheap

    by_lower: dict[str, str] = {}
    for c in candidates:
        by_lower.setdefault(c.lower(), c)
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=n, cutoff=0.6)
    if not close:
        return ""
    names = [repr(by_lower[c]) for c in close]
    text = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f" (did you mean {text}?)"


def _takes_keyword(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` has a parameter ``name``: read from a plain function's code object (about
    50 times cheaper than ``inspect.signature``, which plugin loading would pay per rule)."""
    code = getattr(fn, "__code__", None)
    if code is not None and not hasattr(fn, "__wrapped__"):
        n = code.co_argcount + code.co_kwonlyargcount
        return name in code.co_varnames[:n]
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


class RuleSignatureError(RegistrationError, TypeError):
    """A backward rule whose signature cannot take ``(grad_outputs, inputs, input_shapes, outputs,
    output_shapes, **attrs)`` (a :class:`RegistrationError` and, as nnabla raises, a
    :class:`TypeError`)."""


#: the signature every backward rule is called with
RULE_SIGNATURE = "(grad_outputs, inputs, input_shapes, outputs, output_shapes, **kwargs)"
_CO_VARARGS = inspect.CO_VARARGS
_CO_VARKEYWORDS = inspect.CO_VARKEYWORDS


def _call_shape(fn: Callable[..., Any]) -> tuple[int, bool, bool, set[str], set[str]] | None:
    """How ``fn`` can be called: (positional parameters, takes ``*args``, takes ``**kwargs``,
    names that can be passed by keyword, names that must be passed by keyword when it is called
    with five positional arguments); None when it cannot be read (a builtin). Read from the code
    object of a plain function (about 50 times cheaper than :func:`inspect.signature`, which
    plugin loading would pay per rule)."""
    code = getattr(fn, "__code__", None)
    if type(fn) is types.FunctionType and code is not None and not hasattr(fn, "__wrapped__"):
        n_pos = code.co_argcount
        names = code.co_varnames[: n_pos + code.co_kwonlyargcount]
        kwdefaults = fn.__kwdefaults__ or {}
        n_req = n_pos - len(fn.__defaults__ or ())
        return (
            n_pos,
            bool(code.co_flags & _CO_VARARGS),
            bool(code.co_flags & _CO_VARKEYWORDS),
            set(names[code.co_posonlyargcount :]),
            set(names[5:n_req]) | {n for n in names[n_pos:] if n not in kwdefaults},
        )
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    P = inspect.Parameter
    pos = [p for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    return (
        len(pos),
        any(p.kind is P.VAR_POSITIONAL for p in params),
        any(p.kind is P.VAR_KEYWORD for p in params),
        {p.name for p in params if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)},
        {p.name for p in pos[5:] if p.default is P.empty}
        | {p.name for p in params if p.kind is P.KEYWORD_ONLY and p.default is P.empty},
    )


def check_rule_signature(
    fn: Callable[..., Any],
    func_name: str,
    where: str,
    provider: Provider | None = None,
    attrs: Iterable[str] | None = None,
) -> None:
    """Raise :class:`RuleSignatureError` unless ``fn`` can be called as the backward rule of
    ``func_name``: five positional parameters ``(grad_outputs, inputs, input_shapes, outputs,
    output_shapes)`` (or ``*args``), then the function's attributes by keyword.

    ``attrs``: the attribute names of the function, when known (None: only the positional
    parameters are checked; a composite's attributes vary with the call). The message names
    ``where`` (``"register"``, ``"register.function"``...), the function, the rule and its
    ``provider``. Run at registration (load time), never per call.

    Example::

        >>> from gradhub.registry import check_rule_signature
        >>> check_rule_signature(lambda inputs, **kw: inputs, "Tanh", "register")
        Traceback (most recent call last):
        gradhub.registry.RuleSignatureError: register('Tanh'): the backward function must take ...
    """
    shape = _call_shape(fn)
    if shape is None:
        return  # builtins and the like: trust the caller
    n_pos, var_pos, var_kw, by_name, required = shape
    problem = ""
    if n_pos < 5 and not var_pos:
        problem = f"takes {n_pos} positional arguments"
    elif attrs is not None:
        attr_names = set(attrs)
        missing = sorted(required - (attr_names & by_name))
        unknown = [] if var_kw else sorted(attr_names - by_name)
        if missing:
            problem = (
                f"also requires {missing}, which {func_name} does not pass (its attrs: "
                f"{sorted(attr_names)})"
            )
        elif unknown:
            problem = f"takes no parameter for the attr(s) {unknown} (add them, or **kwargs)"
    if problem:
        by = f" (from {provider})" if provider is not None else ""
        name = getattr(fn, "__name__", fn)
        raise RuleSignatureError(
            f"{where}({func_name!r}): the backward function must take {RULE_SIGNATURE} (nnabla "
            f">= 1.32); {name!r}{by} {problem}"
        )


def check_function_name(name: Any, snake: str, where: str) -> None:
    """Raise :class:`RegistrationError` unless ``name`` is a non-empty string whose snake_case
    callable ``snake`` can be called as ``gradhub.functions.<snake>`` (a Python identifier, not a
    keyword)."""
    if not isinstance(name, str) or not name:
        raise RegistrationError(f"{where}({name!r}): the name must be a non-empty string")
    if not snake.isidentifier() or keyword.iskeyword(snake):
        what = "is a Python keyword" if keyword.iskeyword(snake) else "is not a Python identifier"
        raise RegistrationError(
            f"{where}({name!r}): the name of its callable in gradhub.functions, {snake!r}, {what}; "
            "use a CamelCase name of letters and digits, or pass snake= a valid identifier"
        )


def check_needs(
    fdef: FunctionDef,
    need_inputs: Sequence[int] | None,
    need_outputs: Sequence[int] | None,
    where: str,
) -> None:
    """Raise :class:`RegistrationError` when ``need_inputs``/``need_outputs`` hold an index that
    is not a non-negative int or is beyond the declared inputs/outputs of ``fdef`` (the bound is
    not checked for a variadic input, a composite or a callable ``n_outputs``)."""
    n_in: int | None = len(fdef.inputs)
    if fdef.kind == "composite" or any(n.startswith("*") for n in fdef.inputs):
        n_in = None
    n_out = fdef.n_outputs if type(fdef.n_outputs) is int else None
    for arg, values, n, names in (
        ("need_inputs", need_inputs, n_in, [n.strip("*?") for n in fdef.inputs]),
        ("need_outputs", need_outputs, n_out, None),
    ):
        if values is None:
            continue
        for i in values:
            if type(i) is not int or i < 0:
                raise RegistrationError(
                    f"{where}({fdef.name!r}): {arg}={tuple(values)!r}: {i!r} is not an index "
                    "(a non-negative int)"
                )
            if n is not None and i >= n:
                which = f" ({', '.join(names)})" if names else ""
                raise RegistrationError(
                    f"{where}({fdef.name!r}): {arg}={tuple(values)!r} names index {i}, but "
                    f"{fdef.name} has {n} {arg[5:-1]}(s){which}"
                )


def snake_case(name: str) -> str:
    """``"MaxPooling"`` -> ``"max_pooling"``; ``"Add2"`` -> ``"add2"``; ``"RDivScalar"`` ->
    ``"r_div_scalar"``. Acronyms split oddly (``"ReLU"`` -> ``"re_lu"``): pass ``snake=`` then."""
    s = _ACRONYM_END.sub(_underscore, name)
    return _WORD_START.sub(_underscore, s).lower()


_ACRONYM_END = re.compile(r"([A-Z]+)([A-Z][a-z])")
_WORD_START = re.compile(r"([a-z0-9])([A-Z])")


def _underscore(m: re.Match[str]) -> str:
    return m.group(1) + "_" + m.group(2)


class _LazySignature(inspect.Signature):
    """The signature of a function's snake_case callable, built when first asked for
    (``help()``, ``inspect.signature``) rather than for each of the 100-odd functions at load."""

    __slots__ = ("_built", "_spec")

    def __init__(self, inputs: list[str], optional: list[bool], defaults: dict[str, Any]) -> None:
        self._spec = (inputs, optional, defaults)
        self._built: dict[str, inspect.Parameter] | None = None
        self._return_annotation = inspect.Signature.empty

    @property  # type: ignore[override]
    def _parameters(self) -> Any:
        if self._built is None:
            inputs, optional, defaults = self._spec
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
            params = [
                inspect.Parameter(n, kind, default=None) if opt else inspect.Parameter(n, kind)
                for n, opt in zip(inputs, optional)
            ]
            params += [inspect.Parameter(n, kind, default=v) for n, v in defaults.items()]
            self._built = inspect.Signature(params).parameters  # type: ignore[assignment]
        return self._built

    def replace(self, **changes: Any) -> inspect.Signature:  # type: ignore[override]
        """A plain :class:`inspect.Signature` with ``changes`` applied."""
        return inspect.Signature(list(self.parameters.values())).replace(**changes)


# -- bindings from the layers above (see "Layers" in docs/design.md) ---------------------------
# The callables this module builds apply functions to the graph (gradhub.graph) and composites
# make Variables (gradhub.variable); the registry loads the plugins (gradhub.plugins) on first
# lookup. Those modules import this one, so each binds what it offers here when it is imported.

#: ``gradhub.graph.apply``, bound by gradhub.graph
_apply: Callable[..., Any] = None  # type: ignore[assignment]
#: ``gradhub.variable.Variable``, bound by gradhub.graph
_variable_type: Any = None


def bind_graph(apply: Callable[..., Any], variable_type: type) -> None:
    """Give the registry the graph's ``apply`` and the Variable class (gradhub.graph calls it)."""
    global _apply, _variable_type
    _apply = apply
    _variable_type = variable_type


def _no_plugins() -> None:
    """The loader until gradhub.plugins binds its own (gradhub/__init__ imports it)."""


#: loads the plugins unless loaded (``gradhub.plugins.ensure_loaded``), bound by gradhub.plugins
_load_plugins: Callable[[], None] = _no_plugins
#: the plugin records (``gradhub.plugins.STATE.records``), bound by gradhub.plugins
_plugin_records: Callable[[], list[Any]] = list


def bind_plugin_loader(load: Callable[[], None], records: Callable[[], list[Any]]) -> None:
    """Make ``load`` the function that lookups call to load the plugins on first use, and
    ``records`` the source of the plugin records that error messages read (gradhub.plugins
    calls it)."""
    global _load_plugins, _plugin_records
    _load_plugins = load
    _plugin_records = records


def make_api(fdef: FunctionDef) -> Callable[..., Any]:
    """Build the snake_case callable of a primitive: inputs positional, then attrs.

    Input names ending in ``?`` are optional (``None`` leaves them out); a leading ``*`` makes the
    input variadic.
    """
    apply = _apply
    names = list(fdef.inputs)
    variadic = bool(names) and names[0].startswith("*")
    optional = [n.endswith("?") for n in names]
    clean = [n.strip("*?") for n in names]
    attr_names = list(fdef.attrs)
    defaults = dict(fdef.attrs)
    ignored = fdef.ignored
    fname = fdef.snake

    if variadic:

        def api(*xs: Any, **kw: Any) -> Any:
            if len(xs) == 1 and isinstance(xs[0], (list, tuple)):
                xs = tuple(xs[0])
            bad = set(kw) - set(defaults)
            if bad & ignored.keys():  # accepted and ignored (nnabla's inplace)
                kw = {k: v for k, v in kw.items() if k not in ignored}
                bad -= ignored.keys()
            if bad:
                hint = did_you_mean(sorted(bad)[0], defaults) if len(bad) == 1 else ""
                raise TypeError(f"{fname}() got unexpected keyword argument(s) {sorted(bad)}{hint}")
            return apply(fdef, xs, {**defaults, **kw} if kw else defaults)

    else:
        n_in = len(clean)
        all_names = clean + attr_names + list(ignored)
        all_required = not any(optional)

        def api(*args: Any, **kw: Any) -> Any:
            if not kw and len(args) == n_in and all_required:
                return apply(fdef, args, defaults)  # the common call: inputs only
            if len(args) > len(all_names):
                raise TypeError(
                    f"{fname}() takes at most {len(all_names)} arguments ({len(args)} given)"
                )
            inputs = list(args[:n_in])
            attrs = dict(defaults)
            for name, value in zip(attr_names, args[n_in:]):
                attrs[name] = value
            for key, value in kw.items():
                if key in attrs:
                    attrs[key] = value
                elif key in ignored:
                    continue  # accepted and ignored (nnabla's inplace); positional ones too
                elif key in clean:
                    i = clean.index(key)
                    if i < len(inputs):
                        raise TypeError(f"{fname}() got multiple values for argument {key!r}")
                    inputs.extend([None] * (i + 1 - len(inputs)))
                    inputs[i] = value
                else:
                    hint = did_you_mean(key, all_names)
                    raise TypeError(f"{fname}() got an unexpected keyword argument {key!r}{hint}")
            while len(inputs) < n_in and optional[len(inputs)]:
                inputs.append(None)
            if len(inputs) < n_in:
                raise TypeError(f"{fname}() missing required input {clean[len(inputs)]!r}")
            while inputs and inputs[-1] is None and optional[len(inputs) - 1]:
                inputs.pop()
            for i, x in enumerate(inputs):
                if x is None:
                    raise TypeError(f"{fname}(): input {clean[i]!r} must not be None")
            return apply(fdef, inputs, attrs)

        api.__signature__ = _LazySignature(  # type: ignore[attr-defined]
            clean, optional, {**defaults, **ignored} if ignored else defaults
        )
    api.__name__ = fname
    api.__qualname__ = fname
    api.__doc__ = fdef.doc or f"The function {fdef.name} (registered by {fdef.provider})."
    api.fdef = fdef  # type: ignore[attr-defined]
    return api


def ignore_arguments(fdef: FunctionDef, **defaults: Any) -> FunctionDef:
    """Make the public callable of the primitive ``fdef`` accept the arguments ``defaults``
    (name -> default) after its attributes, positionally or by keyword, and ignore them (nnabla's
    ``inplace=`` of ``add2``, ``reshape``...: gradhub never modifies an input); returns ``fdef``.

    Only calls that pass them pay (the common call is unchanged); rules and operators, which
    apply the function directly, never see them. Call it before wrapping the callable (as
    :func:`gradhub.ops.with_real_scalars` does).

    Example::

        >>> import gradhub as gh, gradhub.functions as F
        >>> F.add2(gh.Variable([1.0]), gh.Variable([2.0]), inplace=True).d
        array([3.], dtype=float32)
    """
    clash = [n for n in defaults if n in fdef.attrs or n in (i.strip("*?") for i in fdef.inputs)]
    if clash:
        raise RegistrationError(
            f"ignore_arguments({fdef.name!r}): {clash} are already inputs or attributes"
        )
    fdef.ignored = {**fdef.ignored, **defaults}
    fdef.api = make_api(fdef)
    return fdef


class Registry:
    """The global tables. Filled by plugins at load time; read on every call."""

    def __init__(self) -> None:
        self.functions: dict[str, FunctionDef] = {}
        self.snake: dict[str, FunctionDef] = {}
        self.parametric: dict[str, ParametricDef] = {}
        self.device_types: dict[str, DeviceType] = {}
        self.device_aliases: dict[str, str] = {}
        self.device_providers: dict[str, Provider] = {}
        self.by_array_type: dict[type, DeviceType] = {}
        #: device kind -> its elementwise fuser (a :class:`gradhub.fusion.Fuser`), and who
        #: registered it (``register.fuser``)
        self.fusers: dict[str, Any] = {}
        self.fuser_providers: dict[str, Provider] = {}
        self.generation = 0
        #: called whenever the tables change wholesale (reset, plugins loaded): caches clear
        self.listeners: list[Callable[[], None]] = []
        self.reset()

    def reset(self) -> None:
        """Forget everything but the built-in CPU device."""
        self.functions.clear()
        self.snake.clear()
        self.parametric.clear()
        self.device_types.clear()
        self.device_aliases.clear()
        self.device_providers.clear()
        self.by_array_type.clear()
        self.fusers.clear()
        self.fuser_providers.clear()
        self.add_device_type(CPU_TYPE, Provider("gradhub", _version()), ())
        self.changed()

    def array_device(self, a: Any) -> Device | None:
        """The Device holding the array ``a`` (None for an array type no device registered)."""
        dt = self.by_array_type.get(type(a))
        return None if dt is None else dt.device_of(a)

    def changed(self) -> None:
        """Note a wholesale change of the tables: bump the generation and clear caches."""
        self.generation += 1
        for listener in self.listeners:
            listener()

    # -- devices -------------------------------------------------------------------------------
    def add_device_type(self, dt: DeviceType, provider: Provider, aliases: Sequence[str]) -> None:
        self.device_types[dt.kind] = dt
        self.device_providers[dt.kind] = provider
        for a in aliases:
            self.device_aliases[a] = dt.kind
        for t in dt.array_types:
            self.by_array_type[t] = dt

    def device_type(self, kind: str) -> DeviceType:
        """The device type of a kind or alias; raises naming the distribution to install."""
        _ensure_loaded()
        kind = self.device_aliases.get(kind, kind)
        dt = self.device_types.get(kind)
        if dt is None:
            dist = KNOWN_DEVICE_DISTRIBUTIONS.get(kind)
            hint = (
                missing_distribution_hint(dist)
                if dist
                else "no installed plugin provides it; install the plugin distribution for it"
            )
            known = ", ".join(sorted(self.device_types))
            raise DeviceError(f"unknown device {kind!r}: {hint}. Installed devices: {known}")
        return dt

    def availability(self, kind: str) -> tuple[bool, str]:
        """Whether the registered device ``kind`` is usable here, and why not.

        The plugin's :meth:`DeviceType.availability <gradhub.device.DeviceType.availability>`
        probe is guarded: a probe that raises (or returns something other than a pair) makes the
        device unusable, with a reason naming the device, the plugin distribution that registered
        it and the original error, instead of taking down the caller (``gradhub registry``,
        :func:`show_registry`, :func:`~gradhub.device.get_extension_context`...).
        """
        kind = self.device_aliases.get(kind, kind)
        dt = self.device_types[kind]
        try:
            ok, why = dt.availability()
        except (Exception, SystemExit) as e:  # a broken probe is itself a reason
            prov = self.device_providers.get(kind)
            by = f" (registered by {prov})" if prov is not None else ""
            return False, (
                f"the availability check of device {kind!r}{by} failed: {type(e).__name__}: {e}"
            )
        return bool(ok), "" if ok else str(why)

    def usable_devices(self) -> list[str]:
        """The registered device kinds that are usable here, sorted (see :meth:`availability`)."""
        return [k for k in sorted(self.device_types) if self.availability(k)[0]]

    # -- functions -----------------------------------------------------------------------------
    def get(self, name: str) -> FunctionDef:
        """The function registered as ``name`` (CamelCase or snake_case)."""
        _ensure_loaded()
        f = self.functions.get(name) or self.snake.get(name)
        if f is None:
            hint = ""
            nn_ops_hinted = False
            if self.functions and "gradhub-nn-ops" not in {
                fd.provider.distribution for fd in self.functions.values()
            }:
                why = installed_but_unused("gradhub-nn-ops")
                nn_ops_hinted = why is not None
                hint = (
                    f" (the function library, the distribution gradhub-nn-ops, is {why})"
                    if why is not None
                    else " (the function library is the distribution gradhub-nn-ops)"
                )
            # suggest names of the same style: snake_case for a lower-case name (F.<name>)
            close = did_you_mean(name, self.snake if name.islower() else self.functions)
            raise FunctionNotFoundError(
                f"no function {name!r} is registered{close}; installed plugins provide "
                f"{len(self.functions)} functions{hint}{left_out_hint(nn_ops_hinted)}"
            )
        return f

    def add_function(self, fdef: FunctionDef, override: bool = False) -> None:
        for table, key in ((self.functions, fdef.name), (self.snake, fdef.snake)):
            old = table.get(key)
            if old is not None and not override:
                raise RegistrationError(
                    f"function {key!r} from {fdef.provider} is already registered by "
                    f"{old.provider}; pass override=True to replace it, or register it under "
                    "another name"
                )
        self.functions[fdef.name] = fdef
        self.snake[fdef.snake] = fdef


def _version() -> str:
    from ._version import __version__

    return __version__


REGISTRY = Registry()
bind_device_lookup(REGISTRY)

_RUNS = re.compile(r"[-_.]+")


def _normalize(name: str) -> str:
    """A distribution name normalized as PEP 503 says: lowercase, runs of ``-_.`` become ``-``."""
    return _RUNS.sub("-", name).lower()


def installed_but_unused(dist: str) -> str | None:
    """Why the installed plugin distribution ``dist`` provides nothing (``"installed but
    blocked (GRADHUB_BLOCK_PLUGINS)"``, not selected, left out because plugin autoload is off,
    failed to load), from the plugin records; None when it is not installed (or loaded)."""
    _ensure_loaded()
    want = _normalize(dist)
    for rec in _plugin_records():
        if _normalize(rec.distribution) != want:
            continue
        if rec.status == "blocked":
            return "installed but blocked (GRADHUB_BLOCK_PLUGINS)"
        if rec.status == "not selected":
            return "installed but not selected (GRADHUB_PLUGINS, GRADHUB_DISABLE_PLUGIN_AUTOLOAD)"
        if rec.status == "autoload off":
            return (
                "installed, but plugin autoload is off (GRADHUB_DISABLE_PLUGIN_AUTOLOAD=1): "
                f"unset the variable, or select it with GRADHUB_PLUGINS={rec.name}, or load it "
                f"with gradhub.plugins.load_plugins(extra=[({rec.name!r}, "
                f"importlib.import_module({rec.module.partition(':')[0]!r}))])"
            )
        if rec.status == "failed":
            return f"installed but failed to load: {rec.error}"
    return None


#: how to load a plugin that was left out, by the status of its record
_LEFT_OUT = {
    "autoload off": "autoload off",
    "not selected": "not selected by GRADHUB_PLUGINS",
    "blocked": "blocked by GRADHUB_BLOCK_PLUGINS",
    "failed": "failed to load, see `gradhub plugins`",
}


def left_out_hint(skip_nn_ops: bool = False) -> str:
    """``"; installed plugins left out, which may provide it: ..."`` listing the installed
    plugins that were not loaded (autoload off, not selected, blocked or failed: gradhub cannot
    tell which of them provides a name without importing them) with their distributions, and how
    to load them; ``""`` when none was left out. ``skip_nn_ops``: gradhub-nn-ops was named
    already. Only for error messages (it reads the plugin records)."""
    import os

    _ensure_loaded()
    left = [
        r
        for r in _plugin_records()
        if r.status in _LEFT_OUT
        and not (skip_nn_ops and _normalize(r.distribution) == "gradhub-nn-ops")
    ]
    if not left:
        return ""
    items = [
        f"{r.name} ({(r.distribution + ' ' + r.version).strip() or 'no distribution'}, "
        f"{_LEFT_OUT[r.status]})"
        for r in left
    ]
    how = []
    selectable = [r.name for r in left if r.status in ("autoload off", "not selected")]
    if selectable:
        allow = [a.strip() for a in os.environ.get("GRADHUB_PLUGINS", "").split(",") if a.strip()]
        names = ",".join(dict.fromkeys(allow + selectable))
        how.append(f"select them with GRADHUB_PLUGINS={names}")
        if any(r.status == "autoload off" for r in left) and not allow:
            how[-1] = "unset GRADHUB_DISABLE_PLUGIN_AUTOLOAD, or " + how[-1]
    if any(r.status == "blocked" for r in left):
        how.append("take the blocked ones out of GRADHUB_BLOCK_PLUGINS")
    example = next((r for r in left if r.status != "failed" and r.module), None)
    if example is not None:
        how.append(
            f"load one in the program with gradhub.plugins.load_plugins(extra=[({example.name!r}, "
            f"importlib.import_module({example.module.partition(':')[0]!r}))])"
        )
    to_load = f"; to load them: {'; or '.join(how)}" if how else ""
    return (
        "; installed plugins that were left out, one of which may provide it: "
        + ", ".join(items)
        + to_load
    )


def missing_distribution_hint(dist: str) -> str:
    """Why the plugin distribution ``dist`` provides nothing: installed but blocked, not selected
    or broken, else not installed (with the pip command)."""
    why = installed_but_unused(dist)
    if why is not None:
        return f"the distribution {dist!r} is {why}"
    return f"install the distribution {dist!r} (pip install {dist})"


def _ensure_loaded() -> None:
    """Load the plugins unless they are loaded (through the loader gradhub.plugins binds)."""
    _load_plugins()


def _caller_provider(depth: int = 2) -> Provider:
    frame = sys._getframe(depth)
    module = frame.f_globals.get("__name__", "?")
    return Provider("", "", module)


def register(
    func_name: str,
    backward_fn: RuleFn,
    *,
    override: bool = False,
    need_inputs: Sequence[int] | None = None,
    need_outputs: Sequence[int] | None = None,
    first_order_only: bool = False,
) -> None:
    """Set the backward rule of an existing function.

    ``backward_fn(grad_outputs, inputs, input_shapes, outputs, output_shapes, **attrs)`` returns
    one Variable (or None) per input (nnabla >= 1.32 signature). Rules written with registered
    functions are differentiable to any order. A name whose rule comes from another provider needs
    ``override=True``; the override is recorded and shown by :func:`show_registry`.

    A composite function (written with other functions, kind ``composite``) has no rule until one
    is registered: registering one (no ``override=True`` needed the first time) turns it into a
    primitive whose forward kernel evaluates the composite's body on arrays without recording a
    graph, and whose backward rule is ``backward_fn``. Its inputs are the arguments of a call that
    are Variables or arrays (and the first argument); the other parameters are attributes, passed
    to the rule by name (see :func:`composite_to_primitive`).

    Example::

        >>> import gradhub as gh
        >>> def neg_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
        ...     return [-grad_outputs[0]]
        >>> gh.register("Neg", neg_backward, override=True)
    """
    provider = _caller_provider()
    fdef = REGISTRY.get(func_name)
    set_rule(fdef, backward_fn, provider, override, need_inputs, need_outputs, first_order_only)


def set_rule(
    fdef: FunctionDef,
    fn: RuleFn,
    provider: Provider,
    override: bool,
    need_inputs: Sequence[int] | None = None,
    need_outputs: Sequence[int] | None = None,
    first_order_only: bool = False,
    fast: RuleFn | None = None,
    where: str = "register",
) -> None:
    """Install ``fn`` as the rule of ``fdef`` (shared by :func:`register` and plugins; ``where``
    names the caller in messages).

    The rule's signature and ``need_inputs``/``need_outputs`` are checked first (see
    :func:`check_rule_signature`, :func:`check_needs`): a wrong one is refused here, naming the
    function, the rule and ``provider``, rather than failing at the first backward.
    """
    if not callable(fn):
        raise RegistrationError(f"{where}({fdef.name!r}): the backward rule must be callable")
    if not fdef.differentiable:
        raise RegistrationError(f"{where}({fdef.name!r}): {fdef.name} is non-differentiable")
    # a composite's attributes (also once a rule made it a primitive) vary with the call
    composite = fdef.kind == "composite" or "_composite_state" in fdef.__dict__
    check_rule_signature(fn, fdef.name, where, provider, None if composite else fdef.attrs)
    check_needs(fdef, need_inputs, need_outputs, where)
    if fdef.kind == "composite":
        composite_to_primitive(fdef)
        fdef.overrides.append(("(composite: differentiated through its body)", str(provider)))
    old = fdef.rule
    if old is not None and old.provider != provider:
        if not override:
            raise RegistrationError(
                f"register({fdef.name!r}): function {fdef.name} already has a backward rule from "
                f"{old.provider}; {provider} must pass override=True to replace it"
            )
        fdef.overrides.append((str(old.provider), str(provider)))
    fdef.rule = Rule(
        fn,
        provider,
        tuple(need_inputs) if need_inputs is not None else None,
        tuple(need_outputs) if need_outputs is not None else None,
        first_order_only,
        fast,
    )
    fdef.audit.clear()


#: the signature every rule kernel (and every ``fast_backward``) is called with
RULE_KERNEL_SIGNATURE = "(xp, grad_outputs, inputs, input_shapes, outputs, output_shapes, **attrs)"


def rule_kernel_rule(rule: Rule, kernel: RuleFn, provider: Provider) -> Rule:
    """The Rule that first-order backward runs, on the device of the rule kernel ``kernel``, in
    place of ``rule``: the same differentiable rule, needs and ``first_order_only``, with
    ``kernel`` as its array-level rule (and ``kernel.one_input`` as its one-input formula when
    :func:`one_input_fast` built it), registered by ``provider`` (errors name it).

    Double backward (``create_graph=True``) never runs it: it differentiates ``rule.fn``.
    """
    return Rule(
        rule.fn, provider, rule.need_inputs, rule.need_outputs, rule.first_order_only, kernel
    )


def device_rule(rule: Rule, kind: str) -> Rule:
    """The rule a first-order backward runs for a node on a device of kind ``kind``: ``rule``'s
    rule kernel for ``kind`` where one is registered, else ``rule`` itself.

    Example::

        >>> import numpy as np
        >>> from gradhub.registry import Provider, Rule, device_rule, rule_kernel_rule
        >>> def neg(grad_outputs, inputs, input_shapes, outputs, output_shapes):
        ...     return [-grad_outputs[0]]
        >>> rule = Rule(neg, Provider("demo"))
        >>> def kernel(xp, gy, x, xs, y, ys):
        ...     return [xp.negative(gy[0])]
        >>> rule.devices = {"cpu": rule_kernel_rule(rule, kernel, Provider("demo-kernels"))}
        >>> device_rule(rule, "cpu").fast is kernel, device_rule(rule, "cuda") is rule
        (True, True)
    """
    devices = rule.devices
    return rule if devices is None else devices.get(kind, rule)


def check_rule_kernel(
    fdef: FunctionDef,
    kind: str,
    fn: Any,
    provider: Provider,
    override: bool,
    new_rule: bool = False,
    where: str = "register.rule_kernel",
) -> None:
    """Raise :class:`RegistrationError` unless ``fn`` can become the rule kernel of ``fdef`` on
    the device kind ``kind`` (already resolved from an alias): callable with
    :data:`RULE_KERNEL_SIGNATURE`, for a differentiable primitive that has a backward rule (or
    gets one from the same plugin: ``new_rule``), and, where another provider registered one for
    ``kind`` already, ``override=True``.

    Example::

        >>> from gradhub.registry import REGISTRY, Provider, check_rule_kernel
        >>> def kernel(xp, gy, x, xs, y, ys):
        ...     return [gy[0], gy[0]]
        >>> check_rule_kernel(REGISTRY.get("Add2"), "cpu", kernel, Provider("demo"), False)
        >>> check_rule_kernel(REGISTRY.get("Sign"), "cpu", kernel, Provider("demo"), False)
        Traceback (most recent call last):
        gradhub.errors.RegistrationError: register.rule_kernel('Sign', 'cpu'): Sign is non-...ble
    """
    check_rule_kernel_callable(fdef.name, kind, fn, provider, where)
    what = f"{where}({fdef.name!r}, {kind!r})"
    if fdef.kind == "composite":
        raise RegistrationError(
            f"{what}: {fdef.name} is a composite function (differentiated through the functions "
            "it calls); it takes no rule kernels"
        )
    if not fdef.differentiable:
        raise RegistrationError(f"{what}: {fdef.name} is non-differentiable")
    rule = fdef.rule
    if new_rule:
        return
    if rule is None:
        raise RegistrationError(
            f"{what}: {fdef.name} has no backward rule for a rule kernel to run in place of"
        )
    old = None if rule.devices is None else rule.devices.get(kind)
    if old is not None and old.provider != provider and not override:
        raise RegistrationError(
            f"{what}: duplicate rule kernel for {fdef.name!r} on {kind!r}: already registered "
            f"by {old.provider}; {provider} must pass override=True to replace it"
        )


def check_rule_kernel_callable(
    name: str, kind: str, fn: Any, provider: Provider, where: str = "register.rule_kernel"
) -> None:
    """Raise :class:`RegistrationError` unless ``fn`` is callable with
    :data:`RULE_KERNEL_SIGNATURE` (six positional parameters, or ``*args``).

    Example::

        >>> from gradhub.registry import Provider, check_rule_kernel_callable
        >>> check_rule_kernel_callable("ReLU", "cuda", lambda xp, gy: gy, Provider("demo"))
        Traceback (most recent call last):
        gradhub.errors.RegistrationError: register.rule_kernel('ReLU', 'cuda'): the rule kernel ...
    """
    what = f"{where}({name!r}, {kind!r})"
    if not callable(fn):
        raise RegistrationError(f"{what}: the rule kernel must be callable")
    shape = _call_shape(fn)
    if shape is not None and shape[0] < 6 and not shape[1]:
        fname = getattr(fn, "__name__", fn)
        raise RegistrationError(
            f"{what}: the rule kernel must take {RULE_KERNEL_SIGNATURE} (as fast_backward); "
            f"{fname!r} (from {provider}) takes {shape[0]} positional arguments"
        )


def rule_kernels(fdef: FunctionDef) -> dict[str, Provider]:
    """The device kinds with a rule kernel for ``fdef``'s current rule, and who registered
    each (for :func:`registry_table`, the audit's fingerprint and messages).

    Example::

        >>> from gradhub.registry import REGISTRY, rule_kernels
        >>> rule_kernels(REGISTRY.get("Add2"))  # the CPU runs the rule's own fast_backward
        {}
    """
    rule = fdef.rule
    if rule is None or rule.devices is None:
        return {}
    return {kind: r.provider for kind, r in sorted(rule.devices.items())}


def _is_array_input(value: Any) -> bool:
    return (
        isinstance(value, _variable_type)
        or type(value) is np.ndarray
        or type(value) in REGISTRY.by_array_type
    )


def _several_outputs(**attrs: Any) -> int:
    """``n_outputs`` of a composite turned primitive: as many as its body returns (the forward
    kernel always returns a tuple; the callable unpacks a single result)."""
    return -1


#: what :func:`composite_to_primitive` changes on a function, so that it can be put back
_COMPOSITE_FIELDS = ("kind", "forward", "api", "inputs", "n_outputs", "n_plain_inputs", "rule")


def composite_to_primitive(fdef: FunctionDef) -> None:
    """Turn the composite function ``fdef`` into a primitive (before a backward rule is set on
    it): its forward kernel evaluates the composite's body on arrays without recording a graph,
    and the rule set next differentiates it.

    The callable keeps the body's Python signature. At each call the arguments that are
    Variables or device arrays (and the first argument, always) become the inputs of the
    primitive, in signature order; every other parameter (with its default) becomes an attribute,
    passed to the rule by name. The old state is kept for :func:`restore_composite`.
    """
    body = fdef.api
    try:
        sig = inspect.signature(body)
    except (TypeError, ValueError) as e:
        raise RegistrationError(
            f"register({fdef.name!r}): the signature of the composite {fdef.name} cannot be read "
            f"({e}), so its inputs cannot be told from its attributes"
        ) from None
    params = list(sig.parameters.values())
    if not params or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        raise RegistrationError(
            f"register({fdef.name!r}): the composite {fdef.name} takes *args/**kwargs (or no "
            "argument), so its inputs cannot be told from its attributes; it takes no rule"
        )
    fdef.__dict__["_composite_state"] = {
        k: fdef.__dict__.get(k, _MISSING) for k in _COMPOSITE_FIELDS
    }
    Variable = _variable_type
    names = [p.name for p in params]
    keyword_only = {p.name for p in params if p.kind == p.KEYWORD_ONLY}
    apply = _apply

    def forward(xp: Any, *arrays: Any, **attrs: Any) -> tuple[Any, ...]:
        it = iter(arrays)
        args: list[Any] = []
        kw: dict[str, Any] = {}
        for n in names:
            v = attrs[n] if n in attrs else Variable._new(next(it), False, None, 0)
            if n in keyword_only:
                kw[n] = v
            else:
                args.append(v)
        with set_recording(False):
            out = body(*args, **kw)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return tuple(o._data if isinstance(o, Variable) else o for o in outs)

    def api(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{fdef.snake}(): {e}") from None
        bound.apply_defaults()
        inputs: list[Any] = []
        attrs: dict[str, Any] = {}
        for i, (n, v) in enumerate(bound.arguments.items()):
            if i == 0 or _is_array_input(v):
                inputs.append(v)
            else:
                attrs[n] = v
        out = apply(fdef, inputs, attrs)
        return out[0] if len(out) == 1 else out

    api.__name__ = api.__qualname__ = fdef.snake
    api.__doc__ = body.__doc__
    api.__signature__ = sig  # type: ignore[attr-defined]
    api.fdef = fdef  # type: ignore[attr-defined]
    api.composite_body = body  # type: ignore[attr-defined]
    fdef.kind = "primitive"
    fdef.forward = forward
    fdef.api = api
    fdef.inputs = tuple(f"{n}?" for n in names)  # for messages: which are inputs varies
    fdef.n_outputs = _several_outputs
    fdef.n_plain_inputs = -1
    REGISTRY.changed()  # gradhub.functions caches the callables


def restore_composite(fdef: FunctionDef) -> None:
    """Undo :func:`composite_to_primitive` (a plugin that set the rule was rolled back)."""
    state = fdef.__dict__.pop("_composite_state", None)
    if state is None:
        return
    for k, v in state.items():
        if v is _MISSING:
            fdef.__dict__.pop(k, None)
        else:
            setattr(fdef, k, v)
    REGISTRY.changed()


_MISSING: Any = object()


def registry_table() -> list[dict[str, Any]]:
    """Every registered function as a row: name, callable, provider, rule, status, devices."""
    _ensure_loaded()
    rows = []
    usable = REGISTRY.usable_devices()
    for name in sorted(REGISTRY.functions):
        f = REGISTRY.functions[name]
        if f.kind == "composite":
            rule = "composed"
            rule_provider = ""
        elif f.rule is None:
            rule = "none"
            rule_provider = ""
        else:
            rule = "yes"
            rule_provider = str(f.rule.provider)
        rows.append(
            {
                "function": name,
                "callable": f.snake,
                "kind": f.kind,
                "provider": f.provider.distribution or f.provider.module,
                "version": f.provider.version,
                "rule": rule,
                "rule_provider": rule_provider,
                "status": f.status(),
                "devices": usable,
                "fast_kernels": sorted(f.kernels),
                "rule_kernels": sorted(rule_kernels(f)),
                "overrides": [f"{a} -> {b}" for a, b in f.overrides],
                "jvp": jvp_cell(f),
                "batching": batching_cell(f),
            }
        )
    return rows


def jvp_cell(f: FunctionDef) -> str:
    """How forward mode differentiates ``f`` (the ``jvp`` column of :func:`show_registry` and
    ``gradhub registry``): ``native`` (its own JVP rule; ``native (PROVIDER)`` where the rule
    comes from another distribution than the function), ``transposed`` (its backward rule,
    transposed), ``composed`` (through the functions a composite calls) or ``-``
    (non-differentiable, or no rule at all).

    Example::

        >>> from gradhub.registry import REGISTRY, jvp_cell
        >>> jvp_cell(REGISTRY.get("Mul2")), jvp_cell(REGISTRY.get("Sign"))
        ('native', '-')
    """
    if not f.differentiable:
        return "-"
    if f.kind == "composite":
        return "composed"
    if f.jvp_rule is not None:
        by = f.jvp_rule.provider
        return "native" if by == f.provider else f"native ({by})"
    return "transposed" if f.rule is not None else "-"


def batching_cell(f: FunctionDef) -> str:
    """Whether ``gradhub.func.vmap`` batches the function: ``rule`` (a batching rule),
    ``loop`` (none: one call per batch element) or ``composed`` (a composite: its functions are
    batched)."""
    if f.kind == "composite":
        return "composed"
    return "rule" if f.batch_rule is not None else "loop"


def rule_cell(row: dict[str, Any]) -> str:
    """The rule column of a :func:`registry_table` row, as :func:`show_registry` and ``gradhub
    registry`` print it: ``yes``/``none``/``composed``, the rule's provider where it is not the
    function's, and ``[overridden]`` when a registration replaced something."""
    provider = f"{row['provider']} {row['version']}".strip()
    cell = str(row["rule"])
    if row["rule_provider"] and row["rule_provider"] != provider:
        cell += f" ({row['rule_provider']})"
    if row["overrides"]:
        cell += " [overridden]"
    return cell


def show_registry(file: Any = None) -> None:
    """Print the registry as a table: function, provider, rule, higher-order status, devices, how
    forward mode differentiates it (``jvp``: see :func:`jvp_cell`) and how ``vmap`` batches it
    (``batching``: ``rule``/``loop``/``composed``, see :func:`batching_cell`)."""
    rows = registry_table()
    header = ("function", "provider", "rule", "status", "devices", "jvp", "batching")
    table = [header] + [
        (
            r["function"],
            f"{r['provider']} {r['version']}".strip(),
            rule_cell(r),
            r["status"],
            ",".join(r["devices"]),
            r["jvp"],
            r["batching"],
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    out = file or sys.stdout
    for k, row in enumerate(table):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip(), file=out)
        if k == 0:
            print("  ".join("-" * w for w in widths), file=out)
    unusable = []
    for kind in sorted(REGISTRY.device_types):
        ok, why = REGISTRY.availability(kind)
        if not ok:
            unusable.append(f"{kind}: {why}")
    if unusable:
        print("unusable devices: " + "; ".join(unusable), file=out)
