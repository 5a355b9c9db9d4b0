"""Gradient checkpointing (rematerialization): :func:`checkpoint`, exported as
``gradhub.checkpoint`` (and, in JAX's form, ``gradhub.func.checkpoint``). The module is named
``remat`` (JAX's name for the technique) so that importing it never hides the function
``gradhub.checkpoint`` behind a module of the same name.

``gh.checkpoint(fn, *args)`` computes ``fn(*args)`` and records it in the graph as **one** node,
keeping none of the arrays of the functions ``fn`` calls: only the node's inputs (the Variables
among the arguments, and those ``fn`` reads from elsewhere) stay referenced. Its backward rule
calls ``fn`` again on the node's inputs, with recording on, and takes the vector-Jacobian product
of that recomputed graph with the incoming gradients through the engine
(:func:`gradhub.engine.segment_vjp`: the walk stays in the recomputed segment).
Memory for compute: a backward pass through a checkpointed segment runs its forward twice, and
only one segment's intermediates are alive at a time.

As everywhere in gradhub, the gradient is differentiable again: under ``create_graph=True``
(``gh.grad``, ``gradhub.func``) the recomputation and its vector-Jacobian product are recorded,
connected to the node's inputs, so second and higher derivatives (Hessian-vector products,
gradient penalties) go through a checkpointed segment; each order recomputes ``fn`` once more.

How the pieces work:

* **The Variables ``fn`` reads.** ``fn`` runs once with recording on, on leaves holding the
  arguments' arrays (so the graph it records stands alone); the recorded functions are looked
  through for the Variables needing a gradient that they take from outside the
  segment (``fn``'s closure, the parameter scope of :func:`gradhub.get_parameters` and the
  parametric functions, globals): those become inputs of the node besides the arguments, so
  they receive gradients (as PyTorch's non-reentrant checkpoint does). The graph of that run is
  dropped as soon as ``fn`` returns: the intermediates of one segment are alive while it runs,
  none after.
* **Random functions.** With ``preserve_rng_state=True`` (the default) the recomputation draws
  the same numbers as the forward: the outputs of the functions registered with
  ``random=True`` (dropout's ``DropoutMask``) that ``fn`` called are kept with the node and
  handed back, in order, when ``fn`` runs again (while ``fn`` runs, their kernels go through
  a wrapper that serves this thread's checkpoints and is removed after); the states of the
  shared generator (:func:`gradhub.random.generator`) and of numpy's global one
  (``numpy.random.rand``, which chainer's dropout and legacy code draw from) are saved with
  the node and restored for the recomputation (and put back after it). PyTorch keeps only the
  generators' states: gradhub's random functions draw from their plugins' own generators,
  which the core does not reach, so it keeps the draws (one array per random call: a dropout
  mask is the size of its input). ``preserve_rng_state=False`` keeps nothing: the
  recomputation draws new numbers, as PyTorch's does then.
* **Where it runs as a plain call.** Under :func:`gradhub.no_grad` (nothing to differentiate)
  and inside ``gradhub.func.vmap`` (batched arguments), ``checkpoint(fn, *args)`` is
  ``fn(*args)``.
* **Static graphs.** ``y.forward()`` and the steps of :func:`gradhub.compile` run the node's
  kernel, which calls ``fn`` again without recording (keeping its random draws anew); a
  backward pass that follows recomputes from the new data.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from . import batching, engine, modes, pytree
from . import random as _random
from .batching import BatchedVariable
from .errors import BackwardRuleError
from .graph import Node, _seq
from .modes import set_recording
from .ops import call
from .registry import REGISTRY, FunctionDef, Provider, Rule, _ensure_loaded
from .variable import Variable

__all__ = ["checkpoint"]

_PROVIDER = Provider("gradhub", "", "gradhub.remat")


# -- the random functions' draws ------------------------------------------------------------------


class _Tape:
    """The outputs of the random functions that one run of ``fn`` called, in order: recorded
    (``replay`` False) or handed back (``replay`` True) at the next call of each."""

    __slots__ = ("draws", "pos", "replay")

    def __init__(self, draws: list[tuple[str, Any]] | None = None) -> None:
        self.replay = draws is not None
        self.draws: list[tuple[str, Any]] = [] if draws is None else draws
        self.pos = 0

    def next(self, fdef: FunctionDef) -> Any:
        if self.pos >= len(self.draws):
            raise RuntimeError(
                f"gradhub.checkpoint: recomputing the segment, fn called the random function "
                f"{fdef.name} more often than in the forward pass; a checkpointed fn must call "
                "the same random functions in the same order each time (or pass "
                "preserve_rng_state=False)"
            )
        name, out = self.draws[self.pos]
        if name != fdef.name:
            raise RuntimeError(
                f"gradhub.checkpoint: recomputing the segment, fn called the random function "
                f"{fdef.name} where the forward pass called {name}; a checkpointed fn must call "
                "the same random functions in the same order each time"
            )
        self.pos += 1
        return out


class _Local(threading.local):
    tapes: list[_Tape]

    def __init__(self) -> None:
        self.tapes = []


_LOCAL = _Local()
_LOCK = threading.Lock()
#: the random functions whose kernels are wrapped now: id -> [fdef, forward, kernels, users]
_WRAPPED: dict[int, list[Any]] = {}
_MISSING = object()


def _taped(fdef: FunctionDef, kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` of the random function ``fdef``, serving the tapes of this thread (the kernel
    itself where there are none: other threads, code outside a checkpoint)."""

    def run(xp: Any, *arrays: Any, **attrs: Any) -> Any:
        tapes = _LOCAL.tapes
        if not tapes:
            return kernel(xp, *arrays, **attrs)
        recording = []
        out = _MISSING
        for tape in reversed(tapes):  # the innermost replaying tape serves the draw
            if tape.replay:
                out = tape.next(fdef)
                break
            recording.append(tape)
        if out is _MISSING:
            out = kernel(xp, *arrays, **attrs)
        for tape in recording:  # every checkpoint inside it keeps the draw too
            tape.draws.append((fdef.name, out))
        return out

    run.taped = kernel  # type: ignore[attr-defined]  # (the kernel it wraps)
    return run


class _taping:
    """Within the block, the random functions' kernels go through ``tape`` (this thread)."""

    __slots__ = ("ids", "tape")

    def __init__(self, tape: _Tape) -> None:
        self.tape = tape

    def __enter__(self) -> None:
        _ensure_loaded()
        fdefs = [f for f in REGISTRY.functions.values() if f.random]
        with _LOCK:
            for f in fdefs:
                entry = _WRAPPED.get(id(f))
                if entry is None:
                    entry = _WRAPPED[id(f)] = [f, f.forward, f.kernels, 0]
                    f.forward = _taped(f, f.forward)
                    f.kernels = {k: _taped(f, kern) for k, kern in f.kernels.items()}
                entry[3] += 1
        self.ids = [id(f) for f in fdefs]
        _LOCAL.tapes.append(self.tape)

    def __exit__(self, *exc: object) -> None:
        _LOCAL.tapes.pop()
        with _LOCK:
            for i in self.ids:
                entry = _WRAPPED[i]
                entry[3] -= 1
                if entry[3] == 0:
                    f = entry[0]
                    f.forward, f.kernels = entry[1], entry[2]
                    del _WRAPPED[i]


def _rng_state() -> tuple[Any, Any]:
    """The states of the shared generator (:func:`gradhub.random.generator`) and of numpy's
    global one (``numpy.random.seed``, which chainer's and legacy code draw from)."""
    return _random.generator().bit_generator.state, np.random.get_state()


class _restored_rng:
    """Within the block the generators are in ``state`` (of :func:`_rng_state`); after it,
    back where they were."""

    __slots__ = ("before", "state")

    def __init__(self, state: tuple[Any, Any]) -> None:
        self.state = state

    def __enter__(self) -> None:
        self.before = _rng_state()
        _random.generator().bit_generator.state = self.state[0]
        np.random.set_state(self.state[1])

    def __exit__(self, *exc: object) -> None:
        _random.generator().bit_generator.state = self.before[0]
        np.random.set_state(self.before[1])


# -- the segment and its node ---------------------------------------------------------------------


class _Segment:
    """One checkpointed call, held by its node (attribute ``segment``): ``fn``, its arguments
    (the Variables among them replaced at each run), the Variables ``fn`` reads from outside,
    the structure of its outputs, and what the recomputation must draw again."""

    __slots__ = (
        "args_tree",
        "externals",
        "fn",
        "leaves",
        "out_tree",
        "preserve",
        "rng",
        "tape",
        "var_pos",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        leaves: list[Any],
        args_tree: pytree.TreeDef,
        var_pos: list[int],
        preserve: bool,
    ) -> None:
        self.fn = fn
        self.leaves = leaves
        self.args_tree = args_tree
        self.var_pos = var_pos
        self.preserve = preserve
        self.externals: list[Variable] = []
        self.out_tree: pytree.TreeDef | None = None
        self.rng: Any = None
        self.tape: list[tuple[str, Any]] = []

    def call(self, variables: list[Any]) -> Any:
        """``fn`` on the arguments with ``variables`` in place of the Variables among them."""
        leaves = list(self.leaves)
        for k, v in zip(self.var_pos, variables):
            leaves[k] = v
        args, kwargs = pytree.unflatten(self.args_tree, leaves)
        return self.fn(*args, **kwargs)

    def run(self, variables: list[Any]) -> Any:
        """:meth:`call`, keeping (``preserve``) the generators' states before it and the
        random functions' draws during it for the recomputation."""
        if not self.preserve:
            return self.call(variables)
        self.rng = _rng_state()
        tape = _Tape()
        with _taping(tape):
            out = self.call(variables)
        self.tape = tape.draws
        return out

    def rerun(self, variables: list[Any]) -> Any:
        """:meth:`call` drawing what the last :meth:`run` drew (with ``preserve``)."""
        if not self.preserve:
            return self.call(variables)
        tape = _Tape(self.tape)
        with _restored_rng(self.rng), _taping(tape):
            out = self.call(variables)
        if tape.pos != len(tape.draws):
            raise RuntimeError(
                f"gradhub.checkpoint: recomputing the segment, fn called {tape.pos} random "
                f"function(s) where the forward pass called {len(tape.draws)}; a checkpointed "
                "fn must call the same random functions in the same order each time"
            )
        return out


def _outputs(out: Any, where: str) -> tuple[list[Variable], pytree.TreeDef]:
    """``fn``'s result as a list of Variables and its structure; anything else raises."""
    if isinstance(out, Variable):
        return [out], _ONE
    leaves, tree = pytree.flatten(out)
    bad = [o for o in leaves if not isinstance(o, Variable)]
    if not leaves or bad:
        what = type(out).__name__
        held = f" holding a {type(bad[0]).__name__}" if bad and bad[0] is not out else ""
        raise TypeError(
            f"{where}: fn must return a Variable or a tuple, list or dict of Variables (nested), "
            f"got {what}{held}"
        )
    return leaves, tree


_ONE = pytree.flatten(None)[1]


def _leaf(v: Variable) -> Variable:
    """A leaf holding ``v``'s array, needing a gradient where ``v`` does, of its name."""
    p = Variable._new(v._data, v._need_grad, None, 0)
    p.name = v.name
    return p


def _key(v: Variable) -> tuple[int, int]:
    """Where the graph takes ``v`` from: the node and output index, or the leaf itself."""
    c = v._creator
    return (id(v), -1) if c is None else (id(c), v._idx)


def _kernel(xp: Any, *arrays: Any, segment: _Segment) -> tuple[Any, ...]:
    """The node's forward kernel, run by ``y.forward()`` and compiled steps: ``fn`` again on
    the arrays of the arguments, recording nothing (the outer Variables ``fn`` reads hold their
    new data by then), keeping its random draws for the next recomputation."""
    n = len(segment.var_pos)
    variables = [Variable._new(a, False, None, 0) for a in arrays[:n]]
    with set_recording(False):
        out = segment.run(variables)
    outs, _ = _outputs(out, "gradhub.checkpoint")
    return tuple(o._data for o in outs)


def _several(**attrs: Any) -> int:
    return -1


def _rule(
    grad_outputs: list[Variable],
    inputs: list[Variable],
    input_shapes: list[Any],
    outputs: list[Any],
    output_shapes: list[Any],
    segment: _Segment,
) -> list[Variable | None]:
    """The backward rule: ``fn`` again on the node's inputs with recording on, then the
    vector-Jacobian product of that graph with ``grad_outputs`` (recorded, connected to the
    inputs, when the outer pass records: ``create_graph=True``)."""
    create_graph = modes.is_recording()
    n = len(segment.var_pos)
    args = inputs[:n]
    if create_graph:  # new nodes on the inputs: the recomputed graph hangs off them
        prims = [call("Reshape", v, shape=v.shape) if v._need_grad else v for v in args]
    else:  # leaves holding the inputs' arrays: the recomputed graph stands alone
        prims = [_leaf(v) for v in args]
    mark = next(_seq)
    with set_recording(True):
        out = segment.rerun(prims)
    outs, _ = _outputs(out, "gradhub.checkpoint")
    # the Variables fn read from outside must be those of the forward pass
    known = {_key(v) for v in segment.externals}
    if any(_key(v) not in known for v in _externals(outs, prims, mark)):
        raise BackwardRuleError(
            "gradhub.checkpoint: recomputing the segment, fn read other Variables from outside "
            "its arguments than in the forward pass (a parameter scope or functional_call "
            "left since, a closure that changed); their gradients would be wrong: pass them to "
            "fn as arguments, or keep the scope open until the backward pass"
        )
    shapes = [o.shape for o in outs]
    if shapes != [tuple(s) for s in output_shapes]:
        raise RuntimeError(
            f"gradhub.checkpoint: recomputing the segment, fn returned outputs of shapes "
            f"{shapes} where the forward pass returned {[tuple(s) for s in output_shapes]}; a "
            "checkpointed fn must compute the same thing each time"
        )
    targets = [p for p in prims if p._need_grad]
    targets += segment.externals
    pairs = [(o, g) for o, g in zip(outs, grad_outputs) if o._need_grad and g is not None]
    if not pairs or not targets:
        return [None] * len(inputs)
    # the segment's partial derivatives: the walk stays in the graph recorded since ``mark``
    # (a Variable fn reads that also lies upstream of an argument gets its direct part only;
    # the engine adds the rest through the argument)
    gs = engine.segment_vjp(
        [o for o, _ in pairs],
        targets,
        [g for _, g in pairs],
        since=mark,
        create_graph=create_graph,
    )
    res: list[Variable | None] = []
    it = iter(gs)
    for p in prims:
        res.append(next(it) if p._need_grad else None)
    res.extend(it)
    return res


#: the primitive of every checkpointed segment (not entered in the registry; the segment is
#: its attribute). ``random``: its kernel may draw (a compiled step is never replayed from a
#: device recording).
FDEF = FunctionDef(
    "Checkpoint",
    _kernel,
    _PROVIDER,
    inputs=("*inputs",),
    n_outputs=_several,
    rule=Rule(_rule, _PROVIDER, None, ()),
    doc="A checkpointed segment (gradhub.checkpoint).",
    snake="checkpoint",
)
FDEF.random = True


def checkpoint(
    fn: Callable[..., Any], *args: Any, preserve_rng_state: bool = True, **kwargs: Any
) -> Any:
    """``fn(*args, **kwargs)``, recorded as one node that keeps none of ``fn``'s intermediates;
    its backward pass calls ``fn`` again (PyTorch's ``torch.utils.checkpoint.checkpoint`` with
    ``use_reentrant=False``).

    ``args`` and ``kwargs`` may hold Variables, arrays and other values, nested in tuples, lists
    and dicts; the Variables among them, and the Variables needing a gradient that ``fn`` reads
    from elsewhere (its closure, the parameter scope), are the node's inputs and receive
    gradients. ``fn`` returns a Variable or a tuple, list or dict of Variables (nested); the
    result has that structure. Gradients equal those of ``fn`` itself, to any order: with
    ``create_graph=True`` the recomputation is recorded and differentiable again.

    ``preserve_rng_state``: the recomputation draws what the forward drew (the outputs of
    random functions such as dropout's mask are kept with the node, the states of the shared
    generator and of numpy's global one restored); ``False``: it draws anew. Under
    :func:`gradhub.no_grad`, and inside ``vmap``, this is ``fn(*args, **kwargs)``. See
    docs/checkpoint.md.

    Example::

        >>> import gradhub as gh
        >>> x = gh.Variable([1.0, 2.0])
        >>> def block(h):
        ...     return (h * h + 1.0) * h
        >>> y = gh.checkpoint(block, x).sum()
        >>> y.backward()
        >>> x.g                                         # 3 x^2 + 1
        array([ 4., 13.], dtype=float32)
        >>> (g,) = gh.grad([gh.checkpoint(block, x).sum()], [x], create_graph=True)
        >>> gh.grad([g.sum()], [x])[0].d                # 6 x, through the recomputation
        array([ 6., 12.], dtype=float32)
    """
    where = "gradhub.checkpoint"
    if not callable(fn):
        raise TypeError(f"{where}: fn must be callable, got {type(fn).__name__}")
    if not isinstance(preserve_rng_state, bool):
        raise TypeError(
            f"{where}: preserve_rng_state must be a bool, got {type(preserve_rng_state).__name__}"
        )
    if not modes.state.recording:  # no_grad(): nothing to recompute
        return fn(*args, **kwargs)
    leaves, tree = pytree.flatten((args, kwargs))
    var_pos = [k for k, a in enumerate(leaves) if isinstance(a, Variable)]
    if batching.LEVELS or any(isinstance(leaves[k], BatchedVariable) for k in var_pos):
        return fn(*args, **kwargs)  # inside vmap: the batched computation as it is
    variables: list[Variable] = [leaves[k] for k in var_pos]
    segment = _Segment(fn, leaves, tree, var_pos, preserve_rng_state)
    for k in var_pos:  # (the node holds the arguments; each run of fn gets its own)
        leaves[k] = None
    # fn runs on leaves holding the arguments' arrays: the graph it records stands alone (an
    # argument fn also reads from its closure is found below as a Variable read from outside)
    prims = [_leaf(v) for v in variables]
    mark = next(_seq)  # the nodes fn records come after this number
    out = segment.run(prims)
    for v, p, k in zip(variables, prims, var_pos):
        if p._data is not v._data:
            raise ValueError(
                f"{where}: fn replaced the data of its argument {_path(tree, k)} (Variable.d); "
                "a checkpointed fn must not change its inputs (the recomputation would see "
                "other values)"
            )
    outs, out_tree = _outputs(out, where)
    segment.out_tree = out_tree
    externals = _externals(outs, prims, mark)
    inputs = variables + externals
    if not inputs:  # nothing fn read can need a gradient: its results are constants
        return out
    segment.externals = externals
    arrays = [v._data for v in inputs]
    out_arrays = [o._data for o in outs]
    need = any(v._need_grad for v in inputs)
    node = Node(FDEF, {"segment": segment}, inputs, arrays, out_arrays, need, inputs[0].device)
    res = [
        Variable._new(a, need and o._need_grad, node, i)
        for i, (a, o) in enumerate(zip(out_arrays, outs))
    ]
    for r, o in zip(res, outs):
        r.name = o.name
    node.outputs = tuple(weakref.ref(r) for r in res)
    del out, outs  # the graph fn recorded goes with them
    return res[0] if out_tree is _ONE else pytree.unflatten(out_tree, res)


def _path(tree: pytree.TreeDef, k: int) -> str:
    """The argument path of leaf ``k`` of ``(args, kwargs)`` for messages."""
    paths = tree.paths()
    return paths[k] if k < len(paths) and paths[k] else f"#{k}"


def _externals(outs: list[Variable], variables: list[Variable], mark: int) -> list[Variable]:
    """The Variables needing a gradient that the graph ``fn`` recorded (its nodes numbered after
    ``mark``) takes from outside the segment, other than the arguments ``variables``: leaves,
    and results of functions recorded before, in the order the graph reaches them."""
    known = {_key(v) for v in variables}
    found: list[Variable] = []

    def note(v: Variable) -> None:
        k = _key(v)
        if k not in known and v._need_grad:
            known.add(k)
            found.append(v)

    for o in outs:  # an output fn passed through (an argument, a closure's Variable)
        c = o._creator
        if c is None or c.seq < mark:
            note(o)
    # the segment's nodes only: the walk stops at what was recorded before it
    for node in engine.collect_graph(outs, only_need_grad=True, since=mark):
        for src, idx in zip(node.srcs, node.idxs):
            if idx < 0:
                note(src)
            elif src.seq < mark and src.need_grad:
                v = src.outputs[idx]()
                if v is None:
                    raise RuntimeError(
                        f"gradhub.checkpoint: fn read a result of {src.fdef.name} computed "
                        "before the segment that nothing references any more; pass it to fn as "
                        "an argument"
                    )
                note(v)
    return found
