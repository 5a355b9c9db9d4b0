"""Batching: the values :func:`gradhub.func.vmap` maps over, and the dispatch of a function
applied to them to the function's *batching rule* (JAX's ``primitive_batchers``).

Inside ``vmap``, a batched argument is a :class:`BatchedVariable`: a Variable whose shape, dtype
and device are those of **one** element of the batch, and which holds the whole batch in
``value`` (a Variable, or a BatchedVariable of an outer ``vmap`` when they are nested), the batch
axis first. Every function applied to it (the Variable operators, ``gradhub.functions``, the
parametric functions: everything ends in :func:`gradhub.graph.apply`) goes to the function's
batching rule::

    outputs, out_dims = rule(args, dims, **attrs)

``args`` are the inputs with each batched one replaced by its ``value`` (batch axis at
``dims[i] == 0``; ``dims[i] is None`` for an input that is not batched at this level), ``attrs``
the function's attributes; the rule computes the result of the whole batch by calling registered
functions on these Variables (so the result stays differentiable) and returns it with the batch
axis of each output (``0``; ``None`` for an output that does not depend on the batch; another
axis is moved to the front). A function with several outputs returns a tuple of outputs and a
tuple of axes.

A function without a batching rule runs once per batch element, and its results are stacked
(the *loop fallback*), with a one-time :class:`UserWarning` naming the function. Functions
registered with ``elementwise=True`` get :func:`elementwise_rule` unless they give their own.
Rules are set with ``register.function(..., batch_rule=...)`` or the hook
``gradhub_add_batching_rules`` (``register.batching_rule(name, fn)``).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from . import ops
from .errors import BackwardRuleError
from .ops import call
from .variable import Variable

__all__ = [
    "BatchedVariable",
    "align",
    "batch_size",
    "elementwise_rule",
    "lift",
    "lift_random",
    "loop",
    "moveaxis",
    "random_call",
    "randomness",
    "refuse_data",
    "shift_axes",
    "size_of",
    "stack",
    "suspended",
    "to_batched",
    "unlifted_random_call",
]

#: the active vmap levels, outermost first: ``(level, size)``
LEVELS: list[tuple[int, int]] = []
#: the ``randomness`` of each active level ("error", "different" or "same")
_MODES: dict[int, str] = {}
#: the levels whose batching rule is running, innermost last
_DISPATCH: list[int] = []
#: the values of vmap's ``randomness`` argument
RANDOMNESS = ("error", "different", "same")
_ids = itertools.count(1)
#: functions whose loop fallback has been warned about
_warned: set[tuple[str, str]] = set()
#: while positive, the loop fallback raises :class:`LoopRefused` instead of looping (set by
#: :func:`refuse_loop`; gradhub.func's Jacobians then take their own loop over basis vectors)
_refusing = 0


class LoopRefused(BackwardRuleError):
    """Raised by the loop fallback inside :func:`refuse_loop`: a function on the path has no
    batching rule (or its rule cannot batch the case). A :class:`~gradhub.errors.BackwardRuleError`,
    so that the engine lets it through unchanged when a backward or JVP rule's own calls raise
    it (it wraps other exceptions of rules)."""


class refuse_loop:
    """A context in which the loop fallback raises :class:`LoopRefused` (quietly: no warning)
    instead of running a function once per batch element; contexts nest."""

    def __enter__(self) -> None:
        global _refusing
        _refusing += 1

    def __exit__(self, *exc: Any) -> None:
        global _refusing
        _refusing -= 1


class BatchedVariable(Variable):
    """One element of a batch, as ``f`` sees it inside :func:`gradhub.func.vmap`.

    ``shape``, ``ndim``, ``dtype`` and ``device`` are those of one element; ``value`` holds the
    whole batch (batch axis first), ``level`` says which ``vmap`` it belongs to. Its data is not
    available (``.d`` raises): compute with functions and operators and return the result from
    ``f``.
    """

    __slots__ = ("_level", "_value")

    _batched = True  # (Variable(x) of one refuses: see Variable.__init__)

    _value: Variable
    _level: int

    @property
    def value(self) -> Variable:
        """The whole batch, batch axis first."""
        return self._value

    @property
    def level(self) -> int:
        """The vmap level this batch belongs to (nested vmaps have higher levels inside)."""
        return self._level

    def _no_data(self, what: str) -> TypeError:
        return TypeError(
            f"vmap: {what} of a batched Variable is not available inside vmap (f sees one "
            "element of the batch, whose values differ across the batch); compute with "
            "functions and operators and return the result from f"
        )

    @property  # type: ignore[override]
    def d(self) -> Any:
        raise self._no_data("the data (.d)")

    @d.setter
    def d(self, value: Any) -> None:
        raise self._no_data("assigning the data (.d)")

    data = d  # type: ignore[assignment]

    @property
    def array(self) -> Any:
        """(chainer's name for the data: not available either)"""
        raise self._no_data("the data (.array)")

    def numpy(self) -> Any:
        raise self._no_data("the data (.numpy())")

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        raise self._no_data("the data (__dlpack__)")

    def detach(self) -> Variable:
        """The batch cut from the graph: a constant batched as this Variable (its elements'
        values, needing no gradient), as ``x.detach()`` inside ``torch.func.vmap``."""
        return wrap(self._value.detach(), self._level)

    get_unlinked_variable = detach

    def item(self) -> Any:
        raise self._no_data("the value (.item())")

    def __bool__(self) -> bool:
        raise self._no_data("the truth value (bool(x), if x:)")

    def backward(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(
            "vmap: backward() of a batched Variable is not supported inside vmap; use "
            "gradhub.func.grad (or vjp) inside vmap for per-sample gradients"
        )

    def __repr__(self) -> str:
        return (
            f"BatchedVariable(shape={self.shape}, dtype={self.dtype}, batch size "
            f"{self._value.shape[0]}, level {self._level})"
        )


def wrap(value: Variable, level: int) -> BatchedVariable:
    """``value`` (batch axis first) as a batch of ``vmap`` level ``level``."""
    t = object.__new__(BatchedVariable)
    t._value = value
    t._level = level
    # one element (a view; 0-d for a vector): the shape, dtype and device f sees, never computed
    t._data = value._data[0, ...]
    t._grad = None
    t._creator = None
    t._idx = 0
    t._need_grad = value._need_grad
    t.name = None
    return t


def batch_size(x: Any) -> int:
    """The size of the batch ``x`` (a BatchedVariable) holds."""
    return int(x._value.shape[0])


def refuse_data(x: Any, where: str) -> None:
    """Raise a ``TypeError`` naming ``where`` if ``x`` is a batched Variable: code that reads a
    Variable's array in Python (a front-end computing labels or masks with numpy, or making a
    new Variable from the data) would read one element's placeholder inside :func:`vmap`, whose
    values differ across the batch. Front-ends call it where they take a Variable's array.

    Example::

        >>> import numpy as np, gradhub.func as ghf
        >>> from gradhub.batching import refuse_data
        >>> def f(r):
        ...     refuse_data(r, "my_function()")
        ...     return r * 2.0
        >>> ghf.vmap(f)(np.ones((2, 3)))
        Traceback (most recent call last):
        ...
        TypeError: vmap: my_function() reads the data of a batched Variable in Python, which ...
    """
    if isinstance(x, BatchedVariable):
        raise TypeError(
            f"vmap: {where} reads the data of a batched Variable in Python, which is not "
            "available inside vmap (f sees one element of the batch, whose values differ "
            "across the batch); compute with functions and operators, or call it outside vmap"
        )


# -- the dispatch ------------------------------------------------------------------------------


def apply_batched(fdef: Any, inputs: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """Apply ``fdef`` to ``inputs``, some of which are batched: its batching rule (or the loop
    fallback) at the innermost level among them. Called by :func:`gradhub.graph.apply`."""
    level = max(x._level for x in inputs if isinstance(x, BatchedVariable))
    args: list[Any] = []
    dims: list[int | None] = []
    size = 0
    for x in inputs:
        if isinstance(x, BatchedVariable) and x._level == level:
            args.append(x._value)
            dims.append(0)
            size = x._value.shape[0]
        else:
            args.append(x)
            dims.append(None)
    rule = fdef.batch_rule
    _DISPATCH.append(level)
    try:
        if rule is None:
            outs, odims = _loop(fdef, args, dims, attrs, size, "has no batching rule")
        else:
            outs, odims = rule(tuple(args), tuple(dims), **attrs)
    finally:
        _DISPATCH.pop()
    if isinstance(outs, (tuple, list)):
        if not isinstance(odims, (tuple, list)) or len(odims) != len(outs):
            raise TypeError(
                f"the batching rule of {fdef.snake}() ({fdef.name}) returned {len(outs)} "
                f"outputs but out_dims {odims!r}; give one axis (or None) per output"
            )
        return tuple(_out(fdef, o, d, level) for o, d in zip(outs, odims))
    return _out(fdef, outs, odims, level)


def _out(fdef: Any, o: Any, d: Any, level: int) -> Any:
    if d is None:
        return o
    if not isinstance(o, Variable):
        raise TypeError(
            f"the batching rule of {fdef.snake}() ({fdef.name}) returned "
            f"{type(o).__name__}, not a Variable"
        )
    if d != 0:
        o = moveaxis(o, int(d), 0)
    return wrap(o, level)


def loop(
    name: str, args: Sequence[Any], dims: Sequence[int | None], attrs: dict[str, Any], why: str
) -> tuple[Any, Any]:
    """The loop fallback for a batching rule that cannot batch a case (``why`` says which, in
    the one-time warning): the function ``name`` once per batch element, the results stacked,
    returned as ``(outputs, out_dims)``."""
    return _loop(ops.fdef(name), list(args), list(dims), attrs, size_of(args, dims), why)


def _loop(
    fdef: Any, args: list[Any], dims: list[int | None], attrs: dict[str, Any], size: int, why: str
) -> tuple[Any, Any]:
    """The loop fallback: ``fdef`` once per batch element, the results stacked."""
    if _refusing:
        raise LoopRefused(f"{fdef.snake}() ({fdef.name}) {why}")
    if (fdef.name, why) not in _warned:
        _warned.add((fdef.name, why))
        warnings.warn(
            f"vmap: {fdef.snake}() ({fdef.name}, from {fdef.provider}) {why}; "
            "it runs once per batch element (a Python loop) and the results are stacked",
            UserWarning,
            stacklevel=4,
        )
    rows = []
    for i in range(size):
        one = [x if d is None else call("GetItem", x, key=i) for x, d in zip(args, dims)]
        rows.append(ops._apply(fdef, one, attrs))
    if isinstance(rows[0], tuple):
        outs = tuple(stack([r[k] for r in rows]) for k in range(len(rows[0])))
        return outs, (0,) * len(outs)
    return stack(rows), 0


# -- helpers for rules -------------------------------------------------------------------------


def stack(parts: list[Variable], axis: int = 0) -> Variable:
    """``parts`` (all of one shape) stacked along a new ``axis`` (differentiable; the core's
    GetItemBackward, so that it needs no plugin), pairwise: ``n`` parts cost ``O(n log n)``.

    Example::

        >>> import numpy as np, gradhub as gh
        >>> from gradhub.batching import stack
        >>> stack([gh.Variable(np.ones(2)), gh.Variable(np.zeros(2))], axis=1).d
        array([[1., 0.],
               [1., 0.]])
    """
    shape = tuple(parts[0].shape)
    one = (*shape[:axis], 1, *shape[axis:])
    return concat([call("Reshape", p, shape=one) for p in parts], axis)


def concat(parts: list[Variable], axis: int) -> Variable:
    """``parts`` joined along their existing ``axis`` (differentiable: GetItemBackward, whose
    rule is GetItem), pairwise, so that ``n`` parts of size ``s`` cost ``O(n s log n)``.

    Example::

        >>> import numpy as np, gradhub as gh
        >>> from gradhub.batching import concat
        >>> concat([gh.Variable(np.ones((1, 2))), gh.Variable(np.zeros((2, 2)))], axis=0).d
        array([[1., 1.],
               [0., 0.],
               [0., 0.]])
    """
    vs = list(parts)
    while len(vs) > 1:
        joined = []
        for k in range(0, len(vs) - 1, 2):
            a, b = vs[k], vs[k + 1]
            na, nb = a.shape[axis], b.shape[axis]
            full = (*a.shape[:axis], na + nb, *a.shape[axis + 1 :])
            lead = (slice(None),) * axis
            joined.append(
                call("GetItemBackward", a, key=(*lead, slice(0, na)), shape=full)
                + call("GetItemBackward", b, key=(*lead, slice(na, na + nb)), shape=full)
            )
        if len(vs) % 2:
            joined.append(vs[-1])
        vs = joined
    return vs[0]


def moveaxis(x: Variable, src: int, dst: int) -> Variable:
    """``x`` with its axis ``src`` moved to ``dst`` (differentiable, the function Transpose).

    Example::

        >>> import numpy as np, gradhub as gh
        >>> from gradhub.batching import moveaxis
        >>> moveaxis(gh.Variable(np.zeros((2, 3, 4))), 2, 0).shape
        (4, 2, 3)
    """
    nd = x.ndim
    src %= nd
    dst %= nd
    if src == dst:
        return x
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return call("Transpose", x, axes=tuple(perm))  # type: ignore[no-any-return]


def to_batched(x: Any, size: int) -> Variable:
    """``x`` (a Variable or array-like, not batched) repeated ``size`` times along a new first
    axis (BroadcastTo: no copy on the CPU), for rules whose inputs must all be batched."""
    if not isinstance(x, Variable):
        x = Variable(x, need_grad=False)
    one = call("Reshape", x, shape=(1, *x.shape))
    return call("BroadcastTo", one, shape=(size, *x.shape))  # type: ignore[no-any-return]


def size_of(args: Sequence[Any], dims: Sequence[int | None]) -> int:
    """The batch size of a rule's call: that of its first batched argument."""
    for a, d in zip(args, dims):
        if d is not None:
            return int(a.shape[d])
    raise ValueError("internal: a batching rule called without a batched argument")


def shift_axes(axis: Any, ndim: int, none: str = "all") -> Any:
    """An ``axis`` attribute of a function of one batch element (``ndim`` axes) for the batch
    (batch axis first): non-negative axes move by one, negative ones count from the end as
    before; ``None`` becomes every axis but the batch axis (``none="all"``) or stays None
    (``none="keep"``, for functions where None means one axis, such as the last).

    Example::

        >>> from gradhub.batching import shift_axes
        >>> shift_axes(None, 2), shift_axes(0, 2), shift_axes((0, -1), 2)
        ((1, 2), 1, (1, -1))
    """
    if axis is None:
        return tuple(range(1, ndim + 1)) if none == "all" else None
    if isinstance(axis, (tuple, list)):
        return tuple(int(a) + 1 if int(a) >= 0 else int(a) for a in axis)
    a = int(axis)
    return a + 1 if a >= 0 else a


def align(args: Sequence[Any], dims: Sequence[int | None]) -> list[Any]:
    """The arguments of a broadcasting function for the batch: each batched one (batch axis
    first) gets size-1 axes after its batch axis up to the largest per-element rank, so that
    numpy's broadcasting (from the right) pairs the elements' axes as for one element; the
    unbatched ones are left as they are."""
    rank = max((a.ndim - (d is not None)) if hasattr(a, "ndim") else 0 for a, d in zip(args, dims))
    out = []
    for a, d in zip(args, dims):
        if d is not None and a.ndim - 1 < rank:
            a = call("Reshape", a, shape=(a.shape[0], *(1,) * (rank - a.ndim + 1), *a.shape[1:]))
        out.append(a)
    return out


def elementwise_rule(fdef: Any) -> Callable[..., Any]:
    """The batching rule of an elementwise (broadcasting) function ``fdef``: the function
    applied once to the aligned batch (see :func:`align`); the result's batch axis is first.

    Registering a function with ``elementwise=True`` installs it unless ``batch_rule`` is given.
    """

    def rule(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> tuple[Any, Any]:
        out = ops._apply(fdef, align(args, dims), attrs)
        if isinstance(out, tuple):
            return out, (0,) * len(out)
        return out, 0

    rule.__name__ = rule.__qualname__ = f"elementwise_rule({fdef.name})"
    return rule


# -- vmap levels -------------------------------------------------------------------------------


def new_level(size: int, randomness: str = "error") -> int:
    """Open a vmap level of batch size ``size`` (innermost) whose random functions follow
    ``randomness`` (see :func:`random_call`); returns its number."""
    level = next(_ids)
    LEVELS.append((level, size))
    _MODES[level] = randomness
    return level


def close_level(level: int) -> None:
    """Close the vmap level ``level`` (opened by :func:`new_level`)."""
    _MODES.pop(level, None)
    for k in range(len(LEVELS) - 1, -1, -1):
        if LEVELS[k][0] == level:
            del LEVELS[k]
            return


class suspended:
    """A context in which the open vmap level ``level`` is not active (random functions and
    lifting do not see it), for code that maps that level's batch at a level of its own (the
    batched rule of a custom_vjp function); the level is active again on exit.

    Example::

        >>> from gradhub import batching
        >>> level = batching.new_level(3)
        >>> with batching.suspended(level):
        ...     [lv for lv, _ in batching.LEVELS].count(level)
        0
        >>> batching.close_level(level)
    """

    def __init__(self, level: int) -> None:
        self.level = level
        self._at: tuple[int, tuple[int, int]] | None = None

    def __enter__(self) -> None:
        for k, entry in enumerate(LEVELS):
            if entry[0] == self.level:
                self._at = (k, LEVELS.pop(k))
                return

    def __exit__(self, *exc: Any) -> None:
        if self._at is not None:
            LEVELS.insert(*self._at)
            self._at = None


# -- randomness --------------------------------------------------------------------------------


def randomness(level: int | None = None) -> str | None:
    """The ``randomness`` of vmap level ``level`` (default: the level whose batching rule is
    running, else the innermost active one); None outside vmap.

    Example::

        >>> from gradhub import batching
        >>> batching.randomness() is None
        True
    """
    if level is None:
        if _DISPATCH:
            level = _DISPATCH[-1]
        elif LEVELS:
            level = LEVELS[-1][0]
        else:
            return None
    return _MODES.get(level, "error")


def random_call(fname: str) -> None:
    """What a function that draws random numbers calls (from its kernel, or its public API)
    before drawing: outside vmap nothing; inside, a ``RuntimeError`` where an active level has
    ``randomness="error"`` (vmap's default, as ``torch.func.vmap``: which draws a batch would
    get is ambiguous), or :class:`LoopRefused` inside :func:`refuse_loop` (a Jacobian then
    takes its loop over basis vectors through the graph recorded once).

    Example::

        >>> import numpy as np, gradhub.func as ghf
        >>> from gradhub import batching
        >>> def f(x):
        ...     batching.random_call("my_noise()")
        ...     return x
        >>> ghf.vmap(f)(np.zeros(2))
        Traceback (most recent call last):
        RuntimeError: vmap: my_noise() draws random numbers while vmap is in randomness="error" ...
        >>> ghf.vmap(f, randomness="same")(np.zeros(2)).d
        array([0., 0.])
    """
    if not LEVELS:
        return
    if any(_MODES.get(level, "error") == "error" for level, _ in LEVELS):
        if _refusing:
            raise LoopRefused(f"{fname} draws random numbers")
        raise RuntimeError(
            f'vmap: {fname} draws random numbers while vmap is in randomness="error" mode '
            '(its default): pass randomness="different" (independent draws for each batch '
            'element) or "same" (one draw shared by the batch) to vmap, or draw outside vmap'
        )


def lift_random(x: Variable) -> Variable:
    """``x`` (the input that shapes a random draw) lifted to every active vmap level with
    ``randomness="different"`` where it is not batched, so that the draw gets one element per
    batch element there; levels with ``"same"`` are left as they are (one draw, shared). Call
    :func:`random_call` first. Outside vmap, ``x`` itself.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.func as ghf
        >>> from gradhub import batching
        >>> shape = gh.Variable(np.zeros(3))              # not batched
        >>> def f(r):
        ...     lifted = batching.lift_random(shape)
        ...     return lifted + r
        >>> ghf.vmap(f, randomness="different")(np.ones((2, 3))).shape
        (2, 3)
        >>> batching.lift_random(shape) is shape          # outside vmap
        True
    """
    if not LEVELS:
        return x
    own = set(levels_of(x))
    keep = [(lv, n) for lv, n in LEVELS if lv in own or _MODES.get(lv) == "different"]
    if len(keep) == len(own):
        return x
    return lift(x, keep)


def unlifted_random_call(fname: str) -> None:
    """Raise where a random function's kernel runs inside vmap with
    ``randomness="different"`` on an input that was not lifted (called with ``call`` on an
    unbatched input, not through its public function, which lifts it): its draw would be shared
    by the batch.

    Example::

        >>> import numpy as np, gradhub.func as ghf
        >>> from gradhub import batching
        >>> def f(r):
        ...     batching.unlifted_random_call("noise()")
        ...     return r
        >>> ghf.vmap(f, randomness="different")(np.zeros(2))
        Traceback (most recent call last):
        RuntimeError: vmap: noise() was called on an input that is not batched inside ...
    """
    if LEVELS and not _DISPATCH and any(_MODES.get(lv) == "different" for lv, _ in LEVELS):
        raise RuntimeError(
            f"vmap: {fname} was called on an input that is not batched inside "
            'vmap(randomness="different"), so its draw would be shared by the batch; call it '
            "through gradhub.functions, which lifts the input to the batch"
        )


def lift(x: Variable, levels: Sequence[tuple[int, int]] | None = None) -> Variable:
    """``x`` batched at every active vmap level (``levels``, outermost first; default: all
    active ones): repeated (BroadcastTo) along each level where it is not batched. The
    functional transforms differentiate with respect to lifted primals, so that a gradient
    taken inside vmap is one per batch element, not their sum."""
    if levels is None:
        levels = LEVELS
    if not levels:
        return x
    level, size = levels[-1]
    if isinstance(x, BatchedVariable) and x._level == level:
        return wrap(lift(x._value, levels[:-1]), level)
    inner = lift(x, levels[:-1])
    return wrap(to_batched(inner, size), level)


def base(x: Variable) -> Variable:
    """The Variable holding every level's batch of ``x`` (outermost batch axis first)."""
    while isinstance(x, BatchedVariable):
        x = x._value
    return x


def levels_of(x: Variable) -> list[int]:
    """The vmap levels ``x`` is batched at, innermost first."""
    out = []
    while isinstance(x, BatchedVariable):
        out.append(x._level)
        x = x._value
    return out


def rewrap(v: Variable, levels: Sequence[int]) -> Variable:
    """``v`` (a base Variable) wrapped at ``levels`` (innermost first), as :func:`levels_of`
    gives them."""
    for level in reversed(levels):
        v = wrap(v, level)
    return v
