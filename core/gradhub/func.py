"""Functional transforms: ``vjp``, ``jvp``, ``grad``, ``value_and_grad``, ``hvp``, ``vhp``,
``jacrev``, ``jacfwd``, ``hessian``, ``vmap`` and ``functional_call``, as ``torch.func`` and JAX
spell them, and :class:`~gradhub.custom.custom_vjp` and :class:`~gradhub.custom.custom_jvp`
(JAX's ``jax.custom_vjp`` and ``jax.custom_jvp``: a function with its author's derivative).

Every transform is built on the engine's :func:`gradhub.grad` with ``create_graph=True``, so its
results are differentiable again and the transforms compose to any order
(``jacfwd(jacrev(f))``, ``jvp`` of ``grad``, ``grad(grad(grad(f)))``).

Conventions (those of ``torch.func``):

* Arguments are Variables or arrays, or pytrees of them (:mod:`gradhub.pytree`: dicts, tuples
  and lists nested at any depth, such as a dict of parameters); a transform's result for a
  pytree argument has its structure (``grad(loss)(params)`` is a dict of gradients), and ``f``
  may return a pytree of Variables. A Variable that needs a gradient stays connected to the
  results (``gh.grad`` through a result reaches the caller's own Variable); arrays, and Variables
  needing no gradient, are constants outside the transform. Under :func:`gradhub.no_grad`, the
  caller's Variables are used as constants too (the transform itself still records its graph).
* ``argnums`` is an int or a tuple of ints (negative values count from the end); with a tuple,
  ``grad``, ``jacrev``, ``jacfwd`` and ``hessian`` return tuples in ``argnums`` order.
* ``f`` returns a Variable or a tuple (or list) of Variables; with ``has_aux=True`` it returns
  ``(output, aux)`` and ``aux`` is handed back untouched.
* Forward mode (``jvp``, ``jacfwd``, ``hvp``) walks the recorded graph forward
  (:func:`gradhub.engine.forward_tangents`), applying each function's native JVP rule
  (:mod:`gradhub.jvp_rules`); a function without one is transposed locally: with a dummy
  cotangent ``u``, ``g(u) = J^T u`` is linear in ``u`` and its vector-Jacobian product with the
  tangent ``v`` is ``J v`` (two small reverse passes). Never a full Jacobian.
* Tangents, cotangents and ``v`` must have exactly the shape of what they pair with (no
  broadcasting); arrays are cast to its dtype, so float32 stays float32.
* What ``f`` computes under :func:`gradhub.no_grad` (or from ``x.detach()``) is a constant for
  every transform, forward mode included, as ``jax.lax.stop_gradient`` (PyTorch's forward-mode
  AD ignores ``no_grad``, so ``torch.func.jvp`` differentiates through such a block).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from . import batching, engine, modes, pytree, remat
from .batching import BatchedVariable
from .custom import custom_jvp, custom_vjp
from .modes import is_recording, set_recording
from .ops import call
from .parameters import full_name, get_parameters, parameter_table
from .pytree import TreeDef
from .variable import Variable

__all__ = [
    "checkpoint",
    "custom_jvp",
    "custom_vjp",
    "functional_call",
    "grad",
    "hessian",
    "hvp",
    "jacfwd",
    "jacrev",
    "jvp",
    "value_and_grad",
    "vhp",
    "vjp",
    "vmap",
]


# -- helpers ------------------------------------------------------------------------------------


def _primal(x: Any, connect: bool, where: str) -> Variable:
    """The Variable a transform differentiates with respect to: a node on the caller's Variable
    (so that results stay connected to it) or a fresh leaf holding the array."""
    if isinstance(x, Variable):
        if x.dtype.kind != "f":
            raise TypeError(f"{where} must hold floating-point data, got dtype {x.dtype}")
        if connect and x.need_grad:
            # a new node: d/d(node) covers f only
            return _lifted(call("Reshape", x, shape=x.shape))
        tracing = modes.state.tracing
        if isinstance(x, BatchedVariable):  # a constant batch: a leaf holding it
            base = batching.base(x)
            if tracing:
                leaf = _traced(base if connect else Variable.detach(base))
            else:
                leaf = Variable.leaf(base.d, need_grad=True)
            return _lifted(batching.rewrap(leaf, batching.levels_of(x)))
        if tracing:  # (not connected, under no_grad(): behind the stop detach() records)
            return _lifted(_traced(x if connect else Variable.detach(x)))
        return _lifted(Variable.leaf(x.d, need_grad=True))
    try:
        v = Variable(x, need_grad=False)
    except TypeError as e:  # (a string, None, an object: name the argument)
        raise TypeError(f"{where}: {e}") from e
    if v.dtype.kind != "f":
        raise TypeError(f"{where} must hold floating-point data, got dtype {v.dtype}")
    return _lifted(Variable.leaf(v.d, need_grad=True))


def _traced(x: Variable) -> Variable:
    """Inside a step that gradhub.compile traces, the Variable to differentiate with respect to
    in place of ``x`` (which needs no gradient): a leaf holding ``x``'s array would hold this
    call's array at every replay, so a node on ``x`` whose result needs a gradient (none flows
    on to ``x``), computed again from ``x`` at each replay."""
    x._need_grad = True
    try:
        with set_recording(True):  # (also where the transform is called under no_grad())
            return call("Reshape", x, shape=x.shape)  # type: ignore[no-any-return]
    finally:
        x._need_grad = False


def _lifted(x: Variable) -> Variable:
    """``x`` batched at every active vmap level: inside ``vmap``, a transform differentiates
    with respect to one copy of its primal per batch element, so that gradients are per element
    (not summed over the batch) also for arguments that are not batched."""
    return batching.lift(x) if batching.LEVELS else x


def _paired(t: Any, like: Variable, where: str, what: str) -> Variable:
    """A tangent or cotangent ``t`` for ``like``: a Variable as given (it stays connected), an
    array or number cast to ``like``'s dtype on its device. Same shape, no broadcasting."""
    if isinstance(t, Variable):
        v = t
        if v.dtype != like.dtype:
            if v.need_grad:
                raise TypeError(
                    f"{where} has dtype {v.dtype} but {what} has dtype {like.dtype}; cast it first"
                )
            if (modes.state.tracing or isinstance(v, BatchedVariable)) and v.device is like.device:
                # inside a step that gradhub.compile traces: a recorded cast, computed again from
                # the argument at each replay (a leaf would hold this call's values at every one)
                v = call("Cast", v, dtype=like.dtype.name)
            else:
                v = Variable.leaf(like.device.asarray(v._data, dtype=like.dtype))
    else:
        v = Variable.leaf(like.device.asarray(Variable(t, need_grad=False)._data, dtype=like.dtype))
    if v.shape != like.shape:
        raise ValueError(
            f"{where} has shape {v.shape} but {what} has shape {like.shape} "
            "(shapes must match exactly: no broadcasting)"
        )
    return v


def _argnums(argnums: Any, nargs: int, fname: str) -> tuple[tuple[int, ...], bool]:
    """``argnums`` as a tuple of non-negative indices, and whether it was a single int."""
    items: tuple[int, ...]
    if isinstance(argnums, (int, np.integer)) and not isinstance(argnums, bool):
        items, single = (int(argnums),), True
    elif (
        isinstance(argnums, tuple)
        and argnums
        and all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in argnums)
    ):
        items, single = tuple(int(a) for a in argnums), False
    else:
        raise TypeError(
            f"{fname}: argnums must be an int or a non-empty tuple of ints, got {argnums!r}"
        )
    out = []
    for a in items:
        if not -nargs <= a < nargs:
            raise ValueError(
                f"{fname}: argnums={argnums!r} is out of range: f was called with {nargs} "
                f"positional argument{'s' if nargs != 1 else ''}"
            )
        out.append(a % nargs)
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: argnums={argnums!r} names an argument twice")
    return tuple(out), single


def _prepare(
    args: tuple[Any, ...], idx: tuple[int, ...], fname: str, connect: bool | None = None
) -> tuple[list[Any], list[Variable], list[TreeDef]]:
    """The arguments with those at ``idx`` replaced by primals (each array of a pytree
    argument by one), the primals in order, and the structure of each argument at ``idx``
    (primals connected to the caller's Variables when ``connect``, by default when
    recording)."""
    if connect is None:
        connect = is_recording()
    new = list(args)
    xs: list[Variable] = []
    trees = []
    for i in idx:
        leaves, tree = pytree.flatten(args[i])
        prims = [
            _primal(leaf, connect, f"{fname}: argument {i}{path}")
            for leaf, path in zip(leaves, tree.paths())
        ]
        new[i] = pytree.unflatten(tree, prims)
        xs.extend(prims)
        trees.append(tree)
    if not xs:
        raise ValueError(
            f"{fname}: the arguments to differentiate hold no Variable or array (argument"
            f"{'s' if len(idx) > 1 else ''} {', '.join(map(str, idx))})"
        )
    return new, xs, trees


def _regroup(flat: Sequence[Any], trees: list[TreeDef]) -> list[Any]:
    """``flat`` (one entry per primal) as one pytree per argument, of the structures ``trees``."""
    out = []
    off = 0
    for tree in trees:
        n = tree.num_leaves
        out.append(pytree.unflatten(tree, flat[off : off + n]))
        off += n
    return out


def _paired_trees(
    ts: Sequence[Any], trees: list[TreeDef], xs: list[Variable], fname: str, tname: str
) -> list[Variable]:
    """The tangents (or ``v``) ``ts``, one pytree per primal argument of the structure in
    ``trees``, paired leaf by leaf with the primals ``xs`` (see :func:`_paired`)."""
    out = []
    it = iter(xs)
    for k, (t, tree) in enumerate(zip(ts, trees)):
        leaves = pytree.flatten_as(tree, t, f"{fname}: {tname}[{k}]")
        for leaf, path in zip(leaves, tree.paths()):
            out.append(
                _paired(leaf, next(it), f"{fname}: {tname}[{k}]{path}", f"primals[{k}]{path}")
            )
    return out


def _split_aux(out: Any, has_aux: bool, fname: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(
            f"{fname}: with has_aux=True, f must return a pair (output, aux), got "
            f"{type(out).__name__}"
        )
    return out[0], out[1]


def _outputs(out: Any, fname: str) -> tuple[list[Variable], TreeDef]:
    """The outputs of ``f`` as a list, and their structure (one Variable, or a pytree)."""
    if isinstance(out, Variable):
        return [out], _ONE
    leaves, tree = pytree.flatten(out)
    if leaves and all(isinstance(o, Variable) for o in leaves):
        return leaves, tree
    bad = next((o for o in leaves if not isinstance(o, Variable)), out)
    raise TypeError(
        f"{fname}: f must return a Variable or a tuple of Variables (or a list or dict of them, "
        f"nested), got {type(out).__name__}"
        + (f" holding a {type(bad).__name__}" if bad is not out else "")
    )


#: the structure of one output
_ONE = pytree.flatten(None)[1]


def _scalar(out: Any, fname: str) -> Variable:
    if not isinstance(out, Variable):
        raise TypeError(f"{fname}: f must return a Variable, got {type(out).__name__}")
    if out.ndim != 0:
        raise ValueError(
            f"{fname}: f must return a scalar (a 0-d Variable), got shape {out.shape}; "
            "sum it or use jacrev/vjp"
        )
    return out


def _grads(outs: Sequence[Variable], xs: Sequence[Variable], seeds: Any = None) -> list[Variable]:
    return [g for g in _engine_grad(outs, xs, seeds) if g is not None]


def _engine_grad(
    outs: Sequence[Variable], xs: Sequence[Variable], seeds: Any = None
) -> list[Variable | None]:
    """``engine.grad(outs, xs, seeds, create_graph=True)``, also inside vmap."""
    if batching.LEVELS or any(isinstance(v, BatchedVariable) for v in (*outs, *xs)):
        return _batched_grads(outs, xs, seeds)
    return engine.grad(list(outs), list(xs), seeds, create_graph=True)


def _batched_grads(
    outs: Sequence[Variable], xs: Sequence[Variable], seeds: Any
) -> list[Variable | None]:
    """:func:`_engine_grad` inside vmap: the engine runs on the Variables holding the whole batches
    (every element's computation is independent, so the gradient of the batch is the batch of
    the elements' gradients); outputs and seeds are lifted to every level, the results carry
    the levels of their inputs."""
    if seeds is not None:
        graph = {lv for v in (*outs, *xs) for lv in batching.levels_of(v)}
        extra = {lv for sd in seeds for lv in batching.levels_of(sd)} - graph
        if extra and not graph:
            # a graph recorded outside vmap (a vjp_fn made before it) and batched seeds: the
            # walk runs each backward rule on the batched seeds (the rules call registered
            # functions, which dispatch to their batching rules), one result per element
            return engine.grad(list(outs), list(xs), list(seeds), create_graph=True)
        if extra:
            raise NotImplementedError(
                "vjp_fn: the vjp was made inside an outer vmap and its cotangents are batched "
                "by an inner vmap; call vjp inside the inner vmap (or give cotangents batched "
                "only where the vjp was made)"
            )
    bouts = [batching.base(_lifted(o)) for o in outs]
    bseeds = None
    if seeds is not None:
        bseeds = [
            None
            if sd is None
            else batching.base(
                _lifted(sd if isinstance(sd, Variable) else Variable(sd, need_grad=False))
            )
            for sd in seeds
        ]
    gs = engine.grad(bouts, [batching.base(x) for x in xs], bseeds, create_graph=True)
    return [
        None if g is None else batching.rewrap(g, batching.levels_of(x)) for g, x in zip(gs, xs)
    ]


def _dummy(o: Variable) -> Variable:
    """A zero cotangent that needs a gradient: ``J^T u`` is linear in it."""
    return _lifted(Variable.leaf(o.device.xp.zeros(o.shape, dtype=o.dtype), need_grad=True))


def _onehot(like: Variable, i: int) -> Variable:
    e = like.device.xp.zeros(like.size, dtype=like.dtype)
    e[i] = 1
    return Variable.leaf(e.reshape(like.shape))


def _stack(
    parts: list[Variable], front: Sequence[int], back: Sequence[int], axis_first: bool
) -> Variable:
    """``parts`` (each of shape ``back`` when ``axis_first``, else ``front``) placed along a new
    axis, first or last, reshaped to ``front + back``."""
    if not parts:
        raise ValueError("internal: nothing to stack")
    axis = 0 if axis_first else parts[0].ndim
    out = batching.stack(parts, axis)
    return call("Reshape", out, shape=(*front, *back))  # type: ignore[no-any-return]


def _zeros(shape: Sequence[int], like: Variable) -> Variable:
    return Variable.leaf(like.device.xp.zeros(tuple(shape), dtype=like.dtype))


def _jac_rev(outs: list[Variable], xs: list[Variable]) -> list[list[Variable]]:
    """``jac[k][j]`` = d outs[k] / d xs[j], shape ``outs[k].shape + xs[j].shape``: one reverse
    pass per output element."""
    result = []
    for o in outs:
        if o.size == 0 or any(x.size == 0 for x in xs):
            result.append([_zeros((*o.shape, *x.shape), x) for x in xs])
            continue
        rows: list[list[Variable]] = [[] for _ in xs]
        for i in range(o.size):
            gs = _engine_grad([o], xs, [_onehot(o, i)])
            for j, g in enumerate(gs):
                assert g is not None
                rows[j].append(g)
        result.append([_stack(r, o.shape, x.shape, True) for r, x in zip(rows, xs)])
    return result


def _jac_fwd(outs: list[Variable], xs: list[Variable]) -> list[list[Variable]]:
    """The same Jacobians column by column: one forward-mode pass (the engine's
    :func:`~gradhub.engine.forward_plan`, made once) per input element."""
    result: list[list[Any]] = [[None] * len(xs) for _ in outs]
    for j, x in enumerate(xs):
        if x.size == 0 or any(o.size == 0 for o in outs):
            for k, o in enumerate(outs):
                result[k][j] = _zeros((*o.shape, *x.shape), x)
            continue
        push = _forward_plan(outs, x)
        cols: list[list[Variable]] = [[] for _ in outs]
        for i in range(x.size):
            cs = push([_onehot(x, i)])
            for k, c in enumerate(cs):
                cols[k].append(c)
        for k, o in enumerate(outs):
            result[k][j] = _stack(cols[k], o.shape, x.shape, False)
    return result


def _chunk_size(chunk_size: Any, fname: str) -> int | None:
    if chunk_size is None:
        return None
    if (
        not isinstance(chunk_size, (int, np.integer))
        or isinstance(chunk_size, bool)
        or chunk_size < 1
    ):
        raise ValueError(f"{fname}: chunk_size must be None or a positive int, got {chunk_size!r}")
    return int(chunk_size)


def _vectorize(outs: list[Variable], xs: list[Variable], chunk_size: int | None, n: int) -> bool:
    """Whether a Jacobian with ``n`` basis vectors goes through ``vmap``: not with
    ``chunk_size=1`` (the loop over basis vectors), one basis vector, or an empty Jacobian."""
    return chunk_size != 1 and n > 1 and all(v.size > 0 for v in (*outs, *xs))


def _basis(likes: list[Variable], chunk_size: int | None) -> list[list[Any]]:
    """The standard basis of ``likes`` flattened and joined, in chunks of at most ``chunk_size``
    vectors: per chunk, one array per entry of ``likes``, of shape ``(rows, *like.shape)``."""
    total = sum(v.size for v in likes)
    step = total if chunk_size is None else chunk_size
    chunks = []
    for a in range(0, total, step):
        b = min(total, a + step)
        parts = []
        off = 0
        for v in likes:
            xp = v.device.xp
            e = xp.zeros((b - a, v.size), dtype=v.dtype)
            lo, hi = max(a, off), min(b, off + v.size)
            if lo < hi:
                r = xp.arange(lo, hi)
                e[r - a, r - off] = 1
            parts.append(e.reshape((b - a, *v.shape)))
            off += v.size
        chunks.append(parts)
    return chunks


def _rerun(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    idx: tuple[int, ...],
    connect: bool,
    has_aux: bool,
    fname: str,
) -> tuple[list[Variable], list[Variable]]:
    """``f`` called again on fresh primals (inside ``vmap``: lifted to the basis level), its
    outputs and the primals."""
    new, xs, _ = _prepare(args, idx, fname, connect)
    out, _ = _split_aux(f(*new, **kwargs), has_aux, fname)
    outs, _ = _outputs(out, fname)
    return outs, xs


def _jac_rev_vmap(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    idx: tuple[int, ...],
    connect: bool,
    has_aux: bool,
    outs: list[Variable],
    xs: list[Variable],
    chunk_size: int | None,
) -> list[list[Variable]] | None:
    """:func:`_jac_rev` with all the cotangents of a chunk at once: ``vmap`` over the standard
    basis of the outputs of a function that runs ``f`` and one reverse pass (as
    ``torch.func.jacrev``); ``None`` where a function on the path has no batching rule."""

    outside = not batching.LEVELS

    def rows(*seeds: Variable) -> tuple[Variable, ...]:
        if outside:  # the graph f recorded, its backward rules run on the batched cotangents
            outs2, xs2 = outs, xs
        else:  # inside an outer vmap: f again, on primals lifted to the basis level
            outs2, xs2 = _rerun(f, args, kwargs, idx, connect, has_aux, "jacrev")
        gs = _engine_grad(outs2, xs2, list(seeds))
        return tuple(_zeros(x.shape, x) if g is None else g for g, x in zip(gs, xs2))

    try:
        with batching.refuse_loop():
            parts = [vmap(rows)(*basis) for basis in _basis(outs, chunk_size)]
    except batching.LoopRefused:
        return None
    result = []
    off = 0
    for o in outs:
        row = []
        for j, x in enumerate(xs):
            g = batching.concat([p[j] for p in parts], 0)
            if len(outs) > 1:
                g = call("GetItem", g, key=slice(off, off + o.size))
            row.append(call("Reshape", g, shape=(*o.shape, *x.shape)))
        result.append(row)
        off += o.size
    return result


def _jac_fwd_vmap(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    idx: tuple[int, ...],
    connect: bool,
    has_aux: bool,
    outs: list[Variable],
    xs: list[Variable],
    chunk_size: int | None,
) -> list[list[Variable]] | None:
    """:func:`_jac_fwd` with all the tangents of a chunk at once: ``vmap`` over the standard
    basis of the inputs of a function that reruns ``f`` and one forward-mode pass, the basis
    axis placed last; ``None`` where a function on the path has no batching rule. (How
    ``jacfwd`` computed it before :func:`_jac_fwd_tangents`; kept as the reference that the
    tests and the benchmark compare with, through :func:`_push_tangents`.)"""

    def cols(*tangents: Variable) -> tuple[Variable, ...]:
        outs2, xs2 = _rerun(f, args, kwargs, idx, connect, has_aux, "jacfwd")
        ts = _jvp(outs2, xs2, list(tangents))
        return tuple(_zeros(o.shape, o) if t is None else t for t, o in zip(ts, outs2))

    try:
        with batching.refuse_loop():
            parts = [vmap(cols, out_axes=-1)(*basis) for basis in _basis(xs, chunk_size)]
    except batching.LoopRefused:
        return None
    return _columns([list(p) for p in parts], outs, xs)


def _push_tangents(outs: list[Variable], xs: list[Variable]) -> bool:
    """Whether ``jacfwd`` pushes its basis tangents through the graph ``f`` recorded
    (:func:`_jac_fwd_tangents`, always) rather than rerunning ``f`` under ``vmap`` over the
    basis (:func:`_jac_fwd_vmap`, the reference the tests and the benchmark compare with)."""
    return True


def _jac_fwd_tangents(
    outs: list[Variable], xs: list[Variable], chunk_size: int | None
) -> list[list[Variable]] | None:
    """:func:`_jac_fwd` with the tangents of a chunk pushed at once through the graph already
    recorded (forward over the graph of ``outs``, as ``torch.func.jacfwd``: the primals are
    not batched, only the tangents are).

    The engine's :class:`~gradhub.engine.ForwardPlan` is made once; the basis vectors of a
    chunk enter it as one :class:`~gradhub.batching.BatchedVariable` per input, at a vmap level
    of their own, so each JVP rule (written with registered functions) runs once per chunk
    through the batching rules of the functions it calls, with the primals as unbatched
    arguments (``in_axes=None``). The result equals ``vmap`` over the basis of a function that
    reruns ``f`` and pushes one tangent (:func:`_jac_fwd_vmap`), without recomputing ``f`` and
    its primal graph for every basis vector. Inside an outer ``vmap`` the plan runs on the
    Variables holding the outer batches (as :func:`_forward_plan_batched`), each basis vector
    repeated along the outer batch axes, and the columns carry their output's levels. ``None``
    where a function on the path has no batching rule (the caller then loops over the
    basis)."""
    louts = [_lifted(o) for o in outs]
    sizes = tuple(size for _, size in batching.LEVELS)  # the outer batch axes of the bases
    plan = engine.forward_plan([batching.base(o) for o in louts], [batching.base(x) for x in xs])
    parts: list[list[Variable]] = []
    try:
        with batching.refuse_loop():
            for basis in _basis(xs, chunk_size):
                n = int(basis[0].shape[0])
                ts = []
                for b, x in zip(basis, xs):
                    if sizes:  # the same basis vector for every outer element
                        one = b.reshape((n, *(1,) * len(sizes), *x.shape))
                        b = x.device.xp.broadcast_to(one, (n, *sizes, *x.shape))
                    ts.append(Variable.leaf(b))
                level = batching.new_level(n)
                try:
                    res = plan([batching.wrap(t, level) for t in ts])
                finally:
                    batching.close_level(level)
                cols = []
                for r, o in zip(res, louts):
                    if isinstance(r, BatchedVariable) and r.level == level:
                        v = r.value
                    else:  # a tangent that does not depend on the basis (zero)
                        v = batching.to_batched(r, n)
                    v = batching.moveaxis(v, 0, v.ndim - 1)
                    cols.append(batching.rewrap(v, batching.levels_of(o)))
                parts.append(cols)
    except batching.LoopRefused:
        return None
    return _columns(parts, outs, xs)


def _columns(
    parts: list[list[Variable]], outs: list[Variable], xs: list[Variable]
) -> list[list[Variable]]:
    """The Jacobians ``jac[k][j]`` from the columns of each chunk (``parts[chunk][k]`` of shape
    ``outs[k].shape + (rows,)``)."""
    result = []
    for k, o in enumerate(outs):
        c = batching.concat([p[k] for p in parts], o.ndim)
        row = []
        off = 0
        for x in xs:
            g = c
            if len(xs) > 1:
                g = call("GetItem", c, key=(*(slice(None),) * o.ndim, slice(off, off + x.size)))
            row.append(call("Reshape", g, shape=(*o.shape, *x.shape)))
            off += x.size
        result.append(row)
    return result


def _structure(
    jac: list[list[Variable]], otree: TreeDef, trees: list[TreeDef], single: bool
) -> Any:
    """The Jacobians ``jac[output][primal]`` nested as ``f``'s outputs (``otree``), each entry
    one pytree per argument (``trees``; a tuple of them for a tuple ``argnums``)."""
    per_out = []
    for row in jac:
        parts = _regroup(row, trees)
        per_out.append(parts[0] if single else tuple(parts))
    return pytree.unflatten(otree, per_out)


def _wrap(f: Callable[..., Any], wrapper: Callable[..., Any], what: str) -> Callable[..., Any]:
    try:
        functools.update_wrapper(wrapper, f)
    except (AttributeError, TypeError):  # pragma: no cover (callables without __dict__)
        pass
    wrapper.__doc__ = f"{what} of {getattr(f, '__name__', repr(f))}"
    return wrapper


# -- reverse mode -------------------------------------------------------------------------------


def vjp(f: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(f(*primals), vjp_fn)`` (plus ``aux`` with ``has_aux=True``), where ``vjp_fn(cotangents)``
    returns the vector-Jacobian products, one per primal, as a tuple:

    .. math::

        \\mathrm{vjp\\_fn}(u)_i = \\sum_k \\left(\\frac{\\partial f_k}{\\partial x_i}\\right)^T u_k

    ``cotangents`` has the structure of the output (a Variable or array for one output, a tuple for
    a tuple). ``vjp_fn`` may be called any number of times.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.func as ghf
        >>> x = np.array([1.0, 2.0, 3.0])
        >>> y, vjp_fn = ghf.vjp(lambda x: x * x, x)
        >>> (g,) = vjp_fn(np.array([1.0, 0.0, 2.0]))
        >>> g.d
        array([ 2.,  0., 12.])
    """
    args, xs, trees = _prepare(primals, tuple(range(len(primals))), "vjp")
    with set_recording(True):
        out, aux = _split_aux(f(*args), has_aux, "vjp")
        outs, otree = _outputs(out, "vjp")
    tops = otree.children()

    def vjp_fn(cotangents: Any) -> tuple[Any, ...]:
        if tops is not None and isinstance(out, (tuple, list)):
            if not isinstance(cotangents, (tuple, list)) or len(cotangents) != len(tops):
                raise ValueError(
                    f"vjp_fn: f returned {len(tops)} outputs, so cotangents must be a tuple of "
                    f"{len(tops)} entries, got {type(cotangents).__name__}"
                    + (f" of {len(cotangents)}" if isinstance(cotangents, (tuple, list)) else "")
                )
        cts = pytree.flatten_as(otree, cotangents, "vjp_fn: cotangents")
        seeds = [
            _paired(c, o, f"vjp_fn: cotangents{path}", "the output")
            for c, o, path in zip(cts, outs, otree.paths())
        ]
        with set_recording(True):
            return tuple(_regroup(_grads(outs, xs, seeds), trees))

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def value_and_grad(
    f: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False
) -> Callable[..., Any]:
    """A function returning ``(f(*args), grad)``; with ``has_aux=True``, ``((value, aux), grad)``.

    ``f`` must return a scalar (0-d) Variable; ``grad`` is :math:`\\partial f/\\partial x_i` for
    ``i`` in ``argnums`` (a tuple of them for a tuple ``argnums``).

    Example::

        >>> import numpy as np, gradhub.func as ghf
        >>> v, g = ghf.value_and_grad(lambda x: (x ** 3.0).sum())(np.array([1.0, 2.0]))
        >>> float(v.d), g.d
        (9.0, array([ 3., 12.]))
    """

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        idx, single = _argnums(argnums, len(args), "value_and_grad")
        new, xs, trees = _prepare(args, idx, "value_and_grad")
        with set_recording(True):
            out, aux = _split_aux(f(*new, **kwargs), has_aux, "value_and_grad")
            y = _scalar(out, "value_and_grad")
            gs = _regroup(_grads([y], xs), trees)
        g = gs[0] if single else tuple(gs)
        return ((y, aux) if has_aux else y), g

    return _wrap(f, wrapper, "value and gradient")


def grad(
    f: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False
) -> Callable[..., Any]:
    """A function returning the gradient of the scalar-valued ``f`` with respect to the arguments
    ``argnums`` (with ``has_aux=True``, ``(grad, aux)``):

    .. math:: \\nabla_{x_i} f(x_0, \\dots, x_n)

    The result is differentiable again: ``grad(grad(grad(f)))`` gives third derivatives.

    Example::

        >>> import numpy as np, gradhub.func as ghf
        >>> cube = lambda x: (x ** 3.0).sum()
        >>> ghf.grad(cube)(np.array([1.0, 2.0])).d
        array([ 3., 12.])
        >>> d3 = ghf.grad(lambda x: ghf.grad(lambda x: ghf.grad(cube)(x).sum())(x).sum())
        >>> d3(np.array([1.0, 2.0])).d
        array([6., 6.])
    """

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        idx, single = _argnums(argnums, len(args), "grad")
        new, xs, trees = _prepare(args, idx, "grad")
        with set_recording(True):
            out, aux = _split_aux(f(*new, **kwargs), has_aux, "grad")
            y = _scalar(out, "grad")
            gs = _regroup(_grads([y], xs), trees)
        g = gs[0] if single else tuple(gs)
        return (g, aux) if has_aux else g

    return _wrap(f, wrapper, "gradient")


def jacrev(
    f: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """A function returning the Jacobian of ``f`` by reverse mode (one vector-Jacobian product
    per output element): ``J[i..., j...] = d out[i...] / d x[j...]``, of shape
    ``out.shape + x.shape``.

    For a tuple output, a tuple (one per output); for a tuple ``argnums``, each entry is a tuple
    in ``argnums`` order (``jac[output][argument]``, as ``torch.func``).

    As ``torch.func.jacrev``, the cotangents (the standard basis of the outputs) are pushed all
    at once: :func:`vmap` over the basis of one reverse pass through the graph ``f`` recorded
    (its backward rules, written with registered functions, run on the batched cotangents), so
    each function runs once through its batching rule. ``chunk_size`` bounds how many basis
    vectors go in one ``vmap`` (``None``: all at once; less memory, more passes);
    ``chunk_size=1`` is one reverse pass per output element, without ``vmap`` (for an ``f`` that
    cannot run inside ``vmap``, such as one reading ``.d``). Where a function on the path has no
    batching rule, the Jacobian is computed by that loop over basis vectors instead (quietly:
    no warning; the results are the same). ``f`` runs once (inside an outer ``vmap``: once more
    inside the basis ``vmap``, on primals lifted to it).

    Example::

        >>> import numpy as np, gradhub.func as ghf
        >>> A = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> ghf.jacrev(lambda x: A @ x)(np.array([1.0, 1.0])).d
        array([[1., 2.],
               [3., 4.],
               [5., 6.]])
    """

    chunk = _chunk_size(chunk_size, "jacrev")

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        idx, single = _argnums(argnums, len(args), "jacrev")
        connect = is_recording()
        new, xs, trees = _prepare(args, idx, "jacrev", connect)
        with set_recording(True):
            out, aux = _split_aux(f(*new, **kwargs), has_aux, "jacrev")
            outs, otree = _outputs(out, "jacrev")
            rows = None
            if _vectorize(outs, xs, chunk, sum(o.size for o in outs)):
                rows = _jac_rev_vmap(f, args, kwargs, idx, connect, has_aux, outs, xs, chunk)
            jac = _structure(_jac_rev(outs, xs) if rows is None else rows, otree, trees, single)
        return (jac, aux) if has_aux else jac

    return _wrap(f, wrapper, "Jacobian (reverse mode)")


# -- forward mode -------------------------------------------------------------------------------


def _tuple_arg(value: Any, fname: str, name: str) -> tuple[Any, ...]:
    if not isinstance(value, (tuple, list)):
        raise TypeError(
            f"{fname}: {name} must be a tuple (one entry per argument of f), got "
            f"{type(value).__name__}; write ({name[:-1] if name.endswith('s') else name},)"
        )
    return tuple(value)


def _paired_all(primals: Any, tangents: Any, fname: str, tname: str) -> tuple[Any, ...]:
    ps = _tuple_arg(primals, fname, "primals")
    ts = _tuple_arg(tangents, fname, tname)
    if len(ps) != len(ts):
        raise ValueError(
            f"{fname}: {tname} has {len(ts)} entries but primals has {len(ps)}; give one per primal"
        )
    return ps, ts


def jvp(
    f: Callable[..., Any], primals: Any, tangents: Any, *, has_aux: bool = False
) -> tuple[Any, ...]:
    """``(f(*primals), J v)`` (plus ``aux`` with ``has_aux=True``): the directional derivative
    of ``f`` at ``primals`` along ``tangents`` (forward mode),

    .. math:: \\mathrm{jvp} = \\sum_i \\frac{\\partial f}{\\partial x_i} v_i

    with the structure of the output (a Variable, or a tuple for a tuple output). Computed by
    one forward walk of the recorded graph applying each function's JVP rule
    (:func:`gradhub.engine.forward_tangents`; a function without a rule is transposed locally,
    ``J v = (d(J^T u)/du)^T v``); no Jacobian.

    Example::

        >>> import numpy as np, gradhub.func as ghf
        >>> y, t = ghf.jvp(lambda x: x ** 3.0, (np.array([1.0, 2.0]),), (np.array([1.0, 0.5]),))
        >>> t.d
        array([3., 6.])
    """
    ps, ts = _paired_all(primals, tangents, "jvp", "tangents")
    args, xs, trees = _prepare(ps, tuple(range(len(ps))), "jvp")
    vs = _paired_trees(ts, trees, xs, "jvp", "tangents")
    with set_recording(True):
        out, aux = _split_aux(f(*args), has_aux, "jvp")
        outs, otree = _outputs(out, "jvp")
        jv = _jvp(outs, xs, vs)
    tout = pytree.unflatten(otree, jv)
    return (out, tout, aux) if has_aux else (out, tout)


def _jvp(outs: list[Variable], xs: list[Variable], vs: list[Variable]) -> list[Variable]:
    """``J v`` by forward mode: the engine walks the graph forward applying the JVP rules
    (transposing the backward rule of a function without one)."""
    if batching.LEVELS or any(isinstance(v, BatchedVariable) for v in (*outs, *xs)):
        push = _forward_plan_batched(outs, xs)
        return push(vs)
    return engine.forward_tangents(outs, xs, vs)


def _forward_plan(outs: list[Variable], x: Variable) -> Callable[[list[Any]], list[Any]]:
    """``engine.forward_plan(outs, [x])``, also inside vmap."""
    if batching.LEVELS or any(isinstance(v, BatchedVariable) for v in (*outs, x)):
        return _forward_plan_batched(outs, [x])
    return engine.forward_plan(outs, [x])  # type: ignore[no-any-return]


def _forward_plan_batched(
    outs: list[Variable], xs: list[Variable]
) -> Callable[[list[Any]], list[Any]]:
    """Forward mode inside vmap: the plan runs on the Variables holding the whole batches (the
    outputs and tangents lifted to every level, as in :func:`_batched_grads`); the tangents
    carry their output's levels."""
    louts = [_lifted(o) for o in outs]
    plan = engine.forward_plan([batching.base(o) for o in louts], [batching.base(x) for x in xs])

    def push(ts: list[Any]) -> list[Any]:
        bts = [
            None
            if t is None
            else batching.base(
                _lifted(t if isinstance(t, Variable) else Variable(t, need_grad=False))
            )
            for t in ts
        ]
        return [
            None if r is None else batching.rewrap(r, batching.levels_of(o))
            for r, o in zip(plan(bts), louts)
        ]

    return push


def _jvp_transposed(outs: list[Variable], xs: list[Variable], vs: list[Variable]) -> list[Variable]:
    """``J v`` as the transpose of reverse mode: ``g(u) = J^T u`` for a dummy cotangent ``u``,
    then ``J v = (dg/du)^T v`` (two reverse passes; the reference of the native rules)."""
    us = [_dummy(o) for o in outs]
    return _grads(_grads(outs, xs, us), us, vs)


def jacfwd(
    f: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """A function returning the Jacobian of ``f`` by forward mode (one directional derivative per
    input element), shaped and structured as :func:`jacrev`'s.

    As ``torch.func.jacfwd``, the tangents (the standard basis of the inputs ``argnums``,
    joined) are pushed all at once: ``f`` runs once, then one forward walk of its recorded
    graph carries all the tangents as one batch (each JVP rule runs once, through the batching
    rules, with the primals unbatched; inside an outer :func:`vmap`, through the graph of the
    whole outer batch). ``chunk_size`` bounds how
    many tangents go in one batch (``None``: all at once); ``chunk_size=1`` is one forward pass
    per input element without batching, which is also taken, quietly, where a function on the
    path has no batching rule (see :func:`jacrev`).

    Example::

        >>> import numpy as np, gradhub.func as ghf
        >>> ghf.jacfwd(lambda x: x * x)(np.array([1.0, 3.0])).d
        array([[2., 0.],
               [0., 6.]])
    """

    chunk = _chunk_size(chunk_size, "jacfwd")

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        idx, single = _argnums(argnums, len(args), "jacfwd")
        connect = is_recording()
        new, xs, trees = _prepare(args, idx, "jacfwd", connect)
        with set_recording(True):
            out, aux = _split_aux(f(*new, **kwargs), has_aux, "jacfwd")
            outs, otree = _outputs(out, "jacfwd")
            cols = None
            if _vectorize(outs, xs, chunk, sum(x.size for x in xs)):
                if _push_tangents(outs, xs):
                    cols = _jac_fwd_tangents(outs, xs, chunk)
                else:
                    cols = _jac_fwd_vmap(f, args, kwargs, idx, connect, has_aux, outs, xs, chunk)
            jac = _structure(_jac_fwd(outs, xs) if cols is None else cols, otree, trees, single)
        return (jac, aux) if has_aux else jac

    return _wrap(f, wrapper, "Jacobian (forward mode)")


def hessian(
    f: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, chunk_size: int | None = None
) -> Callable[..., Any]:
    """A function returning the Hessian of the scalar-valued ``f``: ``jacfwd(jacrev(f))``, of
    shape ``x.shape + x.shape`` (for a tuple ``argnums``, ``H[i][j]`` for the arguments ``i, j``).
    Forward over reverse: one reverse pass records the gradient's graph, then the basis
    tangents are pushed through it all at once as one batch (``chunk_size`` at a time, as in
    :func:`jacfwd`; an addition to ``torch.func.hessian``), ``f`` running once.

    .. math:: H_{ij} = \\frac{\\partial^2 f}{\\partial x_i \\partial x_j}

    Example::

        >>> import numpy as np, gradhub.func as ghf
        >>> ghf.hessian(lambda x: (x ** 3.0).sum())(np.array([1.0, 2.0])).d
        array([[ 6.,  0.],
               [ 0., 12.]])
    """
    chunk = _chunk_size(chunk_size, "hessian")
    inner = jacrev(f, argnums, chunk_size=chunk)
    return _wrap(f, jacfwd(inner, argnums, chunk_size=chunk), "Hessian")


def _hessian_product(
    f: Callable[..., Any], primals: Any, v: Any, where: str, product: Callable[..., Any]
) -> tuple[Variable, tuple[Variable, ...]]:
    """``(f(*primals), product(grads, xs, vs))`` for :func:`hvp` (``product`` is ``_jvp``, the
    forward-mode derivative of the gradient) and :func:`vhp` (``_grads``, reverse over reverse)."""
    ps, ts = _paired_all(primals, v, where, "v")
    args, xs, trees = _prepare(ps, tuple(range(len(ps))), where)
    vs = _paired_trees(ts, trees, xs, where, "v")
    with set_recording(True):
        y = _scalar(f(*args), where)
        gs = _grads([y], xs)
        return y, tuple(_regroup(product(gs, xs, vs), trees))


def hvp(f: Callable[..., Any], primals: Any, v: Any) -> tuple[Variable, tuple[Variable, ...]]:
    """``(f(*primals), H v)`` for the scalar-valued ``f``: the Hessian-vector product, one tuple
    entry per primal,

    .. math:: (Hv)_i = \\sum_j \\frac{\\partial^2 f}{\\partial x_i \\partial x_j} v_j

    computed as the forward-mode derivative of the gradient along ``v`` (``jvp`` of ``grad``:
    one reverse pass, then one forward walk of the gradient's graph; :func:`vhp` takes two
    reverse passes and equals it where the Hessian is symmetric).

    Example::

        >>> import numpy as np, gradhub.func as ghf
        >>> y, (hv,) = ghf.hvp(lambda x: (x ** 3.0).sum(), (np.array([1.0, 2.0]),),
        ...                    (np.array([1.0, 1.0]),))
        >>> hv.d
        array([ 6., 12.])
    """
    return _hessian_product(f, primals, v, "hvp", _jvp)


def vhp(f: Callable[..., Any], primals: Any, v: Any) -> tuple[Variable, tuple[Variable, ...]]:
    """``(f(*primals), v^T H)`` for the scalar-valued ``f``: the vector-Hessian product by reverse
    over reverse (two reverse passes), one tuple entry per primal,

    .. math:: (v^T H)_j = \\sum_i v_i \\frac{\\partial^2 f}{\\partial x_i \\partial x_j}

    Example::

        >>> import numpy as np, gradhub.func as ghf
        >>> y, (vh,) = ghf.vhp(lambda x: (x ** 3.0).sum(), (np.array([1.0, 2.0]),),
        ...                    (np.array([1.0, 1.0]),))
        >>> vh.d
        array([ 6., 12.])
    """
    return _hessian_product(f, primals, v, "vhp", _grads)


# -- vmap ---------------------------------------------------------------------------------------


def _is_axis(a: Any) -> bool:
    return a is None or (isinstance(a, (int, np.integer)) and not isinstance(a, bool))


def _axis_spec(spec: Any, n: int, fname: str, name: str) -> list[Any]:
    """``in_axes``/``out_axes`` as one entry per argument/output: an int, None, or (for a
    pytree argument or output) a dict, tuple or list of them matching its structure."""
    if _is_axis(spec):
        return [None if spec is None else int(spec)] * n
    if isinstance(spec, (tuple, list)):
        if len(spec) != n:
            raise ValueError(
                f"{fname}: {name} has {len(spec)} entries but there are {n} "
                f"{'arguments' if name == 'in_axes' else 'outputs'}"
            )
        for k, a in enumerate(spec):
            _check_axes(a, f"{fname}: {name}[{k}]")
        return list(spec)
    raise TypeError(f"{fname}: {name} must be an int, None or a tuple of them, got {spec!r}")


def _check_axes(a: Any, where: str) -> None:
    """Raise unless ``a`` is an int, None, or a dict, tuple or list of them (nested)."""
    if _is_axis(a):
        return
    if isinstance(a, (dict, tuple, list)):
        for k, e in a.items() if isinstance(a, dict) else enumerate(a):
            _check_axes(e, f"{where}[{k!r}]")
        return
    raise TypeError(f"{where} must be an int or None (or a dict, tuple or list of them), got {a!r}")


def _out_axes(out_axes: Any, otree: TreeDef) -> list[int | None]:
    """``vmap``'s ``out_axes`` as one entry per output Variable of the structure ``otree``: one
    int or None for all, one entry per output of a tuple (as before pytrees: also a 1-tuple for
    one output), or a tree of them matching the outputs' structure."""
    if _is_axis(out_axes):
        return [None if out_axes is None else int(out_axes)] * otree.num_leaves
    if isinstance(out_axes, dict):
        _check_axes(out_axes, "vmap: out_axes")
        return _leaf_axes(out_axes, otree, "vmap: out_axes")
    tops = otree.children()
    specs = _axis_spec(out_axes, 1 if tops is None else len(tops), "vmap", "out_axes")
    if tops is None:  # one output, a 1-tuple
        return _leaf_axes(specs[0], otree, "vmap: out_axes[0]")
    return _leaf_axes(out_axes, otree, "vmap: out_axes")


def _leaf_axes(spec: Any, tree: TreeDef, where: str) -> list[int | None]:
    """The batch axis of each leaf of a pytree of structure ``tree`` from its entry ``spec``
    of ``in_axes``/``out_axes`` (one int or None for the whole tree, or a tree of them)."""
    return [None if a is None else int(a) for a in pytree.broadcast_prefix(spec, tree, where)]


def vmap(
    f: Callable[..., Any],
    in_axes: int | Sequence[int | None] | None = 0,
    out_axes: Any = 0,
    *,
    randomness: str = "error",
) -> Callable[..., Any]:
    """``f`` mapped over a batch axis of its arguments, as ``jax.vmap`` and ``torch.func.vmap``:

    .. math:: \\mathrm{vmap}(f)(x)[i] = f(x[i])

    ``in_axes``: the batch axis of every positional argument (an int), or one entry per argument
    (an int, or ``None`` for an argument passed unbatched to every call); keyword arguments are
    passed unbatched. Every batched argument must have the same size along its axis (a
    ``ValueError`` naming both sizes and the arguments otherwise). ``out_axes``: where the batch
    axis goes in each output (one int, or one per output of a tuple; ``None`` for an output that
    does not depend on the batch, returned once). ``f`` returns a Variable or a tuple of them.

    ``f`` runs once, on :class:`~gradhub.batching.BatchedVariable` arguments: Variables of the
    shape of one batch element that hold the whole batch. Each function ``f`` applies runs once
    for the whole batch through its *batching rule* (see :mod:`gradhub.batching`); a function
    without one runs once per element (a loop, with a one-time warning naming it). The results
    are ordinary graph nodes, so ``vmap`` composes with the other transforms: ``vmap(grad(f))``
    gives per-sample gradients (a transform inside ``vmap`` differentiates with respect to one
    copy of each argument per element), ``grad`` of a ``vmap`` differentiates through it, and
    ``vmap(vmap(f))`` maps over two axes. Batched arrays become Variables that need no gradient.
    ``x.detach()`` of a batched Variable is a constant batched as ``x`` (each element's values);
    ``Variable(x)`` of one is refused (its data differs across the batch).

    ``randomness`` (as ``torch.func.vmap``) says what a function that draws random numbers
    (``dropout``, ``dropout_mask`` with ``seed=-1``) does inside: ``"error"`` (the default)
    raises a ``RuntimeError`` (whether the batch's elements should share a draw is ambiguous);
    ``"different"`` draws independently for each element (as a loop over the batch would);
    ``"same"`` draws once for one element and shares it across the batch. In nested vmaps each
    level applies its own; any level with ``"error"`` raises. A deterministic seed
    (``seed >= 0``) is not random. (Functions that draw random numbers call
    :func:`gradhub.batching.random_call` and read :func:`gradhub.batching.randomness` in their
    batching rule.)

    Example::

        >>> import numpy as np, gradhub.func as ghf
        >>> x = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> ghf.vmap(lambda r: (r * r).sum())(x).d
        array([ 5., 25.])
        >>> ghf.vmap(ghf.grad(lambda r: (r ** 3.0).sum()))(x).d
        array([[ 3., 12.],
               [27., 48.]])
    """

    if randomness not in batching.RANDOMNESS:
        raise ValueError(
            f"vmap: randomness must be 'error', 'different' or 'same', got {randomness!r}"
        )

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        axes = _axis_spec(in_axes, len(args), "vmap", "in_axes")
        size = None
        first = ""
        first_axis = 0
        leaves_of: list[tuple[list[Any], TreeDef, list[int | None]] | None] = []
        for k, (x, spec) in enumerate(zip(args, axes)):
            if spec is None:  # passed as given (whatever it is)
                leaves_of.append(None)
                continue
            leaves, tree = pytree.flatten(x)
            leaf_axes = _leaf_axes(spec, tree, f"vmap: in_axes[{k}]")
            for j, (leaf, a, path) in enumerate(zip(leaves, leaf_axes, tree.paths())):
                if a is None:
                    continue
                if not isinstance(leaf, Variable):
                    leaf = leaves[j] = Variable(leaf, need_grad=False)
                if not -leaf.ndim <= a < leaf.ndim:
                    raise ValueError(
                        f"vmap: in_axes[{k}]{path}={a} is out of range for argument {k}{path} "
                        f"of shape {leaf.shape}"
                    )
                a %= leaf.ndim
                leaf_axes[j] = a
                n = leaf.shape[a]
                if size is None:
                    size, first, first_axis = n, f"{k}{path}", a
                elif n != size:
                    raise ValueError(
                        f"vmap: the batch sizes differ: argument {first} has size {size} along "
                        f"its axis {first_axis} but argument {k}{path} has size {n} along its "
                        f"axis {a}"
                    )
            leaves_of.append((leaves, tree, leaf_axes))
        if size is None:
            raise ValueError("vmap: in_axes must batch at least one argument (all are None)")
        if size == 0:
            raise ValueError("vmap: the batch axis has size 0; f cannot be called")
        level = batching.new_level(size, randomness)
        try:
            call_args = []
            for x, parts in zip(args, leaves_of):
                if parts is None:
                    call_args.append(x)
                    continue
                leaves, tree, leaf_axes = parts
                mapped = [
                    leaf if a is None else batching.wrap(batching.moveaxis(leaf, a, 0), level)
                    for leaf, a in zip(leaves, leaf_axes)
                ]
                call_args.append(pytree.unflatten(tree, mapped))
            outs, otree = _outputs(f(*call_args, **kwargs), "vmap")
        finally:
            batching.close_level(level)
        oaxes = _out_axes(out_axes, otree)
        results: list[Variable] = []
        for k, (o, oa, path) in enumerate(zip(outs, oaxes, otree.paths())):
            name = f"out_axes{path}" if path else f"out_axes[{k}]"
            where = f"output {path}" if path else f"output {k}"
            batched = isinstance(o, BatchedVariable) and o.level == level
            if oa is None:
                if batched:
                    raise ValueError(
                        f"vmap: {name} is None but {where} differs across the batch "
                        "(it depends on a batched argument)"
                    )
                results.append(o)
                continue
            nd = o.ndim
            if not -(nd + 1) <= oa <= nd:
                raise ValueError(
                    f"vmap: {name}={oa} is out of range for {where} of per-sample shape {o.shape}"
                )
            v = o.value if isinstance(o, BatchedVariable) and batched else None
            if v is None:
                v = batching.to_batched(o, size)
            results.append(batching.moveaxis(v, 0, oa % (nd + 1)))
        return pytree.unflatten(otree, results)

    return _wrap(f, wrapper, "vmap")


# -- functional_call ----------------------------------------------------------------------------


def functional_call(
    f: Callable[..., Any], params: Mapping[str, Any], *args: Any, **kwargs: Any
) -> Any:
    """Call ``f(*args, **kwargs)`` with the named parameters of the parameter scope replaced by
    ``params`` (name -> Variable or array), as ``torch.func.functional_call``.

    Names are those :func:`gradhub.get_parameters` lists where it is called (relative to the
    current scope, ``fc1/affine/W``), including parameters that need no gradient. Parametric
    functions (``PF.affine``...) inside ``f`` use the substituted values; a Variable is used as
    given, so the result is differentiable with respect to it (a MAML inner step
    ``W - lr * g`` keeps its graph), while an array is a constant. The others keep their own
    values. Each value must have the shape of the parameter it replaces. Afterwards, also when
    ``f`` raises, the replaced entries of the table are the original Variables again;
    parameters that ``f`` created are kept. An unknown name raises a ``KeyError`` naming it.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.func as ghf
        >>> w = gh.get_parameter_or_create("w", (2,), lambda s: np.ones(s))
        >>> def model(x):
        ...     return (gh.get_parameter_or_create("w", (2,), None) * x).sum()
        >>> float(ghf.functional_call(model, {"w": np.array([2.0, 3.0])}, np.array([1.0, 1.0])).d)
        5.0
        >>> gh.get_parameters()["w"] is w
        True
        >>> gh.clear_parameters()
    """
    if not isinstance(params, Mapping):
        raise TypeError(
            f"functional_call: params must be a mapping name -> Variable or array, got "
            f"{type(params).__name__}"
        )
    known = get_parameters(grad_only=False)
    unknown = [n for n in params if n not in known]
    if unknown:
        raise KeyError(
            f"functional_call: unknown parameter name{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(n) for n in unknown)}; the scope has: "
            f"{', '.join(repr(n) for n in list(known)[:20]) or 'no parameters'}"
            + (", ..." if len(known) > 20 else "")
        )
    subs: dict[str, Variable] = {}
    for name, value in params.items():
        old = known[name]
        if isinstance(value, Variable):
            v = value
        else:
            v = Variable.leaf(old.device.asarray(Variable(value, need_grad=False).d, old.dtype))
        if v.shape != old.shape:
            raise ValueError(
                f"functional_call: the value for parameter {name!r} has shape {v.shape} but the "
                f"parameter has shape {old.shape}"
            )
        subs[full_name(name)] = v
    table = parameter_table()
    saved = {full: table[full] for full in subs}
    try:
        for full, v in subs.items():
            table[full] = v
        return f(*args, **kwargs)
    finally:
        for full, old in saved.items():
            table[full] = old


def checkpoint(
    fun: Callable[..., Any],
    *,
    prevent_cse: bool = True,
    policy: Any = None,
    static_argnums: int | tuple[int, ...] = (),
) -> Callable[..., Any]:
    """``fun`` checkpointed (JAX's ``jax.checkpoint``, also ``jax.remat``): a function that
    computes ``fun(*args, **kwargs)`` through :func:`gradhub.checkpoint`, keeping none of its
    intermediates for the backward pass, which computes them again. Gradients equal those of
    ``fun`` to any order, inside every transform of this module: ``grad``, ``vjp``, ``jvp``,
    ``jacrev``, ``jacfwd``, ``hessian``, ``hvp``; inside ``vmap`` it computes ``fun`` as it is.

    ``static_argnums``: positions of arguments handed to ``fun`` as they are, never taken apart
    (a Variable among them is read as ``fun``'s closure would read it: it still receives its
    gradient). ``prevent_cse`` is accepted for JAX's signature (gradhub runs eagerly: there is
    no common-subexpression elimination to prevent). ``policy`` (JAX's choice of what to save)
    must be None: gradhub saves the segment's inputs only.

    Example::

        >>> import gradhub as gh
        >>> from gradhub import func
        >>> f = func.checkpoint(lambda x: (x * x * x).sum())
        >>> func.grad(func.grad(f))(gh.Variable(2.0)).d       # 6 x
        array(12., dtype=float32)
    """
    where = "gradhub.func.checkpoint"
    if not callable(fun):
        raise TypeError(f"{where}: fun must be callable, got {type(fun).__name__}")
    if policy is not None:
        raise NotImplementedError(
            f"{where}: policy={policy!r}: gradhub saves the inputs of a checkpointed function "
            "only (JAX's default, policy=None); see docs/checkpoint.md"
        )
    if not isinstance(prevent_cse, bool):
        raise TypeError(f"{where}: prevent_cse must be a bool, got {type(prevent_cse).__name__}")
    if isinstance(static_argnums, (int, np.integer)) and not isinstance(static_argnums, bool):
        static: tuple[int, ...] = (int(static_argnums),)
    elif isinstance(static_argnums, tuple) and all(
        isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in static_argnums
    ):
        static = tuple(int(a) for a in static_argnums)
    else:
        raise TypeError(
            f"{where}: static_argnums must be an int or a tuple of ints, got {static_argnums!r}"
        )

    @functools.wraps(fun)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        if not static:
            return remat.checkpoint(fun, *args, **kwargs)
        n = len(args)
        bad = [i for i in static if not -n <= i < n]
        if bad:
            raise ValueError(
                f"{where}: static_argnums={static_argnums!r} is out of range: the function was "
                f"called with {n} positional argument{'s' if n != 1 else ''}"
            )
        fixed = {i % n: args[i] for i in static}

        def inner(*rest: Any, **kw: Any) -> Any:
            it = iter(rest)
            return fun(*[fixed[i] if i in fixed else next(it) for i in range(len(args))], **kw)

        rest = [a for i, a in enumerate(args) if i not in fixed]
        return remat.checkpoint(inner, *rest, **kwargs)

    return checkpointed
