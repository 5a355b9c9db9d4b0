"""Plans: a static graph run again without deciding anything again.

A graph built once and run many times (nnabla's ``x.d = batch; loss.forward(); loss.backward()``,
mxnet's bound executor) needs the same decisions at every step: which nodes to run in which
order, which kernel each function has on its device, which arrays each backward rule keeps, which
nodes lie on the paths of a gradient. A :class:`Plan` takes them once, from the engine's own walk
(:func:`gradhub.engine.collect_graph`), and keeps them as tables:

* the **forward schedule**: per node its kernel resolved for its device, its attributes bound, its
  inputs as integer positions into a list of values (the leaves' current data first, then every
  node's outputs), what its rule keeps, and the values whose last consumer it is (freed there);
* per first-order walk asked for (``backward()``, or ``grad(outputs, inputs)``), the **backward
  schedule**: the nodes the engine would visit, in its order, each with the positions its
  gradients are summed into (the same sums in the same order, so results are bit for bit the
  engine's).

Running a plan creates no Variable and no graph node and looks nothing up in the registry. What it
checks at each run is what can change without the graph changing: the leaves' shape, dtype and
array type (changed: the graph is recomputed by the engine and planned again; when it cannot be,
the function's error names it), the functions' rules and kernels (a rule or kernel registered
since, ``override=True``: planned again), and ``need_grad`` settings (the backward schedules are
decided again).

:meth:`gradhub.Variable.forward` plans on its first call (a graph run with ``forward()`` is a
static graph) and runs the plan on later calls; ``backward()`` and ``grad(...,
create_graph=False)`` on the output of a planned graph run its backward schedule.
``GRADHUB_PLANS=0`` in the environment (read at import), or :func:`set_enabled`, turns plans off.
:func:`compile` traces define-by-run code into a plan; :func:`record` plans a graph of several
outputs built by a front-end (mxnet's bound executors).
"""

from __future__ import annotations

import builtins
import inspect
import itertools
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

import numpy as np

from . import capture as _capture
from . import capture_static as _static
from . import engine as _engine
from . import fusion as _fusion
from . import graph as _graph
from . import modes as _modes
from . import parameters as _parameters
from . import variable as _variable
from .device import trim_host_heap
from .engine import (
    _FREED,
    _add_arrays,
    _call_rule_arrays,
    _check_count,
    _checked_arrays,
    _collect,
    _copy_array,
    _cpu_ones,
    _fast1_failed,
    _Grads,
    _has_none,
    _on_paths,
    _own,
    _position,
    _replaced_error,
    _rule_raised,
    _run,
    _seed,
    _stale_grad_error,
    _walk,
    _zero_filled,
    _zeros,
    bind_plans,
    reexecute_eager,
)
from .engine import (
    backward as _backward,
)
from .engine import (
    grad as _grad,
)
from .errors import BackwardRuleError, CaptureUnsupported, GradhubError
from .graph import Node, _kernel_error, _kernel_result, _seq
from .modes import set_recording
from .ops import call
from .pytree import _is_container
from .registry import REGISTRY, device_rule
from .variable import Variable, _to_array

#: id(output Variable) -> its Plan (the engine looks plans up here)
_PLANS: dict[int, Plan] = {}

_enabled = os.environ.get("GRADHUB_PLANS", "1") != "0"


def set_enabled(on: bool) -> bool:
    """Turn plans on or off (for every graph); returns the previous setting. Off, ``forward()``,
    ``backward()`` and ``grad()`` walk the graph anew at each call, as before plans, and the
    plans recorded so far are dropped.

    Example::

        >>> import gradhub as gh
        >>> previous = gh.plan.set_enabled(False)
        >>> gh.plan.set_enabled(previous)
        False
    """
    global _enabled
    before = _enabled
    _enabled = bool(on)
    if not _enabled:
        _PLANS.clear()
    return before


def enabled() -> bool:
    """Whether plans are on (see :func:`set_enabled`)."""
    return _enabled


def _drop(key: int, ref: weakref.ref[Variable]) -> None:
    """The output Variable of a plan was freed: forget the plan (and with it the graph)."""
    p = _PLANS.get(key)
    if p is not None and p.refs.get(key) is ref:
        del _PLANS[key]


def plan_of(y: Variable) -> Plan | None:
    """The plan recorded for the graph producing ``y`` (by ``y.forward()``), or None."""
    p = _PLANS.get(id(y))
    return p if p is not None and p.owns(y) else None


def forward(y: Variable) -> bool:
    """Run ``y``'s plan, recording it first when there is none: what ``y.forward()`` does.
    Returns False (nothing run) when plans are off."""
    if not _enabled:
        return False
    key = id(y)
    p = _PLANS.get(key)
    if p is None or not p.owns(y) or p.marks:
        p = Plan([y])
        _PLANS[key] = p
    if not p.run_static():
        # a leaf changed shape, dtype or device, or a rule or kernel changed: the engine
        # recomputes the graph (its nodes' shapes too) and the plan is recorded again
        try:
            reexecute_eager(y)
        except GradhubError:
            raise
        except Exception as e:
            raise type(e)(
                f"forward(): the graph cannot be planned again for its leaves' new shapes or "
                f"dtypes ({p.changed_leaves()}): {e}"
            ).with_traceback(e.__traceback__) from None
        p = _PLANS[key] = Plan([y])
        p.static_runs += 1
    return True


def record(ys: Sequence[Variable]) -> Plan:
    """Record the plan of the graph producing ``ys`` (several outputs: a bound executor's heads
    and loss terms) and register it for each of them that has a creator: ``backward()`` and
    ``grad(outputs, ..., create_graph=False)`` whose first output is one of ``ys`` run its
    backward schedules, and :meth:`Plan.run` recomputes every node from the leaves' current data
    (False when a leaf's shape, dtype or device, or a rule or kernel, changed: build the graph
    again and record again), and :meth:`Plan.run_static` does so as a static graph's
    ``forward()`` does (recorded on a device that records, at its third run). With plans off the
    plan is returned but not registered.

    Example::

        >>> import numpy as np
        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> x = gh.Variable(np.array([1.0, 2.0]))
        >>> y, z = F.sin(x), F.sum(x * x)
        >>> p = gh.plan.record([y, z])
        >>> x.d = np.array([0.0, 3.0])
        >>> p.run(), y.d.tolist(), float(z.d)
        (True, [0.0, 0.1411200080598672], 9.0)
        >>> gh.grad([z], [x], create_graph=False)[0].d.tolist()   # its backward schedule
        [0.0, 6.0]
    """
    for y in ys:
        if not isinstance(y, Variable):
            raise TypeError(f"gradhub.plan.record: ys must be Variables, got {type(y).__name__}")
    unique = list({id(y): y for y in ys}.values())
    p = Plan(unique)
    if _enabled:
        for y in unique:
            if y._creator is not None:
                _PLANS[id(y)] = p
    return p


_ndarray = np.ndarray


def _device_name(a: Any) -> str | None:
    dev = REGISTRY.array_device(a)
    return None if dev is None else dev.name


class Plan:
    """The forward and backward schedules of the graph producing the Variables ``ys``.

    Built by :func:`forward` (``Variable.forward()``, one Variable) and by :func:`compile` (the
    outputs of a traced step, its forward schedule cut into segments at the sequence numbers
    ``marks``: the nodes recorded before each first-order walk of the step); the engine runs
    :meth:`first_order` for ``backward()`` and ``grad(create_graph=False)`` on ``ys[0]`` (and on
    every Variable of ``ys`` for a compiled step).
    """

    def __init__(
        self,
        ys: Sequence[Variable],
        marks: Sequence[int] = (),
        private: bool = False,
        rules_kept: bool = False,
    ) -> None:
        #: a compiled step's plan: its graph is the trace's own (no node of it is reachable from
        #: outside the step), so its generated walks need not guard nor mark nodes freed
        #: between runs (see _generate_backward)
        self.private = private
        #: (a private plan) none of its walks frees a node's rule (each is a generated walk of
        #: this plan): the rules are set once here, not again by every run of the forward
        self.rules_kept = private and rules_kept
        #: id(Variable) -> a weak reference to it: the Variables this plan serves
        self.refs = {}
        for y in ys:
            key = id(y)
            self.refs[key] = weakref.ref(y, lambda r, k=key: _drop(k, r))  # type: ignore[misc]
        self.marks = list(marks)
        roots = [y._creator for y in ys if y._creator is not None]
        nodes = _collect(roots, only_need_grad=False) if roots else []
        #: the steps of each segment: from one mark to the next
        self.segments = _segment_bounds(nodes, self.marks)
        if REGISTRY.fusers and nodes:  # the nodes of elementwise runs together (gradhub.fusion;
            nodes = _fusion.schedule(nodes, self.segments)  # within segments: the same bounds)
        self.nodes = nodes
        #: whether this plan's schedules run as generated code (else from their table, as with
        #: ``GRADHUB_PLAN_CODEGEN=0``): not for a graph of more than ``CODEGEN_MAX_NODES`` nodes
        self.codegen = _codegen and len(nodes) <= CODEGEN_MAX_NODES
        if not self.codegen:
            self.rules_kept = False  # (a walk from the table frees the rules it runs)
        leaves: list[Variable] = []
        leaf_pos: dict[int, int] = {}
        #: what the nodes were recorded (or last run) with: a leaf changed since is re-planned
        self.leaf_meta = []
        for node in nodes:
            for i, (src, idx) in enumerate(zip(node.srcs, node.idxs)):
                if idx < 0 and id(src) not in leaf_pos:
                    leaf_pos[id(src)] = len(leaves)
                    leaves.append(src)
                    self.leaf_meta.append((node.out_type, node.in_shapes[i], node.in_dtypes[i]))
        self.leaves = leaves
        #: the device of each leaf not held in numpy arrays (None: numpy)
        self.leaf_devices = [
            None if type(v._data) is _ndarray else _device_name(v._data) for v in leaves
        ]
        base: dict[Node, int] = {}
        n = len(leaves)
        for node in nodes:
            base[node] = n
            n += len(node.out_shapes)
        self.n_values = n
        ins_of = []
        last: dict[int, int] = {}
        for k, node in enumerate(nodes):
            ins = tuple(
                leaf_pos[id(src)] if idx < 0 else base[src] + idx
                for src, idx in zip(node.srcs, node.idxs)
            )
            ins_of.append(ins)
            for j in ins:
                last[j] = k
        frees: list[list[int]] = [[] for _ in nodes]
        for j, k in last.items():
            if j >= len(leaves):
                frees[k].append(j)
        fdefs: dict[int, tuple[Any, ...]] = {}
        steps = []
        for k, node in enumerate(nodes):
            fdef = node.fdef
            dev = node.device
            kernels = fdef.kernels
            kernel = kernels.get(dev.kind, fdef.forward) if kernels else fdef.forward
            fdefs[id(fdef)] = (fdef, fdef.rule, dev.kind, kernel)
            ins = ins_of[k]
            rule = fdef.rule if node.rule is not None else None
            if rule is None:
                save = 0
            elif rule.keeps == len(ins) and rule.keeps in (1, 2):
                save = 1
            elif rule.keeps == 0:
                save = 2
            else:
                save = 3
            steps.append(
                (
                    node,
                    kernel,
                    dev.xp,
                    node.attrs,
                    ins,
                    base[node],
                    fdef.n_outputs == 1,
                    save,
                    rule,
                    tuple(frees[k]),
                    dev if dev.index else None,
                )
            )
        self.steps = steps
        if self.rules_kept:
            for step in steps:
                if step[8] is not None:
                    step[0].rule = step[8]  # (the trace's own walk freed them)
        #: the fused elementwise runs (see gradhub.fusion), by the index of each of their steps
        self.fused: dict[int, _fusion.Group] = _fused(self) if REGISTRY.fusers else {}
        self.compiled = _generate_forward(self) if self.codegen else None
        self.fdefs = list(fdefs.values())
        self.generation = REGISTRY.generation
        #: the graph links this plan was made for (see gradhub.graph.links_changed)
        self.links = _graph.links_generation
        if self.codegen:  # the same checks as straight-line code (see _generate_valid)
            self.valid = _generate_valid(self)  # type: ignore[method-assign]
        #: the values of a run in progress (read by later segments)
        self.values: list[Any] = []
        #: True while a compiled step's replay runs, its checks (:meth:`valid`) passed at its
        #: start: its first-order walks need not check again (nothing else runs in between)
        self.checked = False
        #: first-order backward schedules by what they were asked for
        self.programs: dict[tuple[Any, ...], _Program] = {}
        #: a static graph's plan (run by :meth:`run_static`: ``forward()``, mxnet's executors):
        #: recorded on a device that records (gradhub.capture_static) after ``static_runs``
        #: runs; the recording, how often it was made, or why it cannot be
        self.static_runs = 0
        self.recorded: _static.RecordedForward | None = None
        self.captures = 0
        self.capture_refused: str | None = None

    def record(self) -> bool:
        """Record the forward schedule on its device and launch it (see
        :mod:`gradhub.capture_static`); False where it cannot be (the reason kept in
        ``capture_refused``) or a check deferred to the device failed (the plan runs)."""
        if self.captures < _capture.MAX_CAPTURES and not self.valid():
            return False
        rec = _try_record(self, lambda: _static.RecordedForward(self))
        if rec is None or not rec.launch():
            return False
        self.recorded = rec
        return True

    def run_static(self) -> bool:
        """Run the forward schedule as a static graph's ``forward()`` does: from its device
        recording where it has one (:mod:`gradhub.capture_static`), recorded at its third run on
        a device that records, else by :meth:`run`. Returns False, having run nothing, when the
        plan no longer holds (a leaf's shape, dtype or device, a rule or kernel changed: the
        caller builds the graph again). Its first-order walks (``backward()``, ``grad(...,
        create_graph=False)``) are then recorded too, each at its third call.

        Example (the CPU records nothing: the plan runs)::

            >>> import numpy as np
            >>> import gradhub as gh
            >>> import gradhub.functions as F
            >>> x = gh.Variable(np.array([1.0, 2.0]))
            >>> y = F.sum(x * x)
            >>> p = gh.plan.record([y])
            >>> x.d = np.array([3.0, 4.0])
            >>> p.run_static(), float(y.d)
            (True, 25.0)
        """
        rec = self.recorded
        if rec is not None:  # recorded on its device (gradhub.capture_static)
            if rec.replay():
                return True
            self.recorded = None
        elif self.static_runs >= 2 and self.capture_refused is None and _capture.enabled():
            if self.record():
                return True
        if not self.run():
            return False
        self.static_runs += 1
        return True

    # -- forward ---------------------------------------------------------------------------------
    def valid(self) -> bool:
        """Whether the recorded kernels, rules, graph links and leaf shapes still hold."""
        if REGISTRY.generation != self.generation or _graph.links_generation != self.links:
            return False
        for fdef, rule, kind, kernel in self.fdefs:
            kernels = fdef.kernels
            k = kernels.get(kind, fdef.forward) if kernels else fdef.forward
            if k is not kernel or fdef.rule is not rule:
                return False
        for leaf, (atype, shape, dtype), dev in zip(self.leaves, self.leaf_meta, self.leaf_devices):
            a = leaf._data
            if type(a) is not atype or a.shape != shape or a.dtype != dtype:
                return False
            if dev is not None and _device_name(a) != dev:
                return False  # moved to another device of the same array type
        return True

    def changed_leaves(self) -> str:
        """The leaves whose data no longer matches the plan, for messages."""
        out = []
        for k, (leaf, (atype, shape, dtype)) in enumerate(zip(self.leaves, self.leaf_meta)):
            a = leaf._data
            if type(a) is not atype or a.shape != shape or a.dtype != dtype:
                name = leaf.name or f"leaf #{k}"
                out.append(
                    f"{name}: {tuple(shape)} {dtype} -> {tuple(a.shape)} {a.dtype} "
                    f"({type(a).__name__})"
                )
        return "; ".join(out) or "a rule or kernel was registered since"

    def run(self) -> bool:
        """Run the forward schedule: every node's outputs recomputed from the leaves' current
        data, the arrays its rule keeps saved, the outputs still referenced updated (what
        ``reexecute`` does). Returns False, having run nothing, when the plan no longer holds."""
        if not self.valid():
            return False
        self.values = [None] * self.n_values
        try:
            for k in range(len(self.segments)):
                self.run_segment(k)
        finally:
            self.values = []
        return True

    def owns(self, y: Variable) -> bool:
        """Whether this plan serves ``y``."""
        r = self.refs.get(id(y))
        return r is not None and r() is y

    def run_segment(self, k: int) -> None:
        """Run the steps of segment ``k`` (values passed on to later segments in
        ``self.values``, the leaves read as they are now)."""
        lo, hi = self.segments[k]
        if lo == hi:
            return  # (the segment after a step's last walk, often empty)
        compiled = self.compiled
        if compiled is not None:
            try:
                with set_recording(False):
                    compiled[k](self.leaves, self.values)
                return
            except Exception:  # run again step by step: the error names the function
                pass
        vals = self.values
        for i, leaf in enumerate(self.leaves):
            vals[i] = leaf._data
        fused = self.fused
        with set_recording(False):
            for n, step in enumerate(self.steps[lo:hi], lo):
                node, kernel, xp, attrs, ins, b, single, save, rule, frees, dev = step
                arrays = [vals[j] for j in ins]
                group = fused.get(n) if fused else None
                if group is not None:  # a fused run: its first step computes its values
                    if n == group.first:
                        _run_fused(self, group, vals)
                    out = vals[b]  # (None: a value kept inside the fused kernel)
                else:
                    try:
                        if dev is None:
                            out = kernel(xp, *arrays, **attrs)
                        else:
                            with dev.activate():
                                out = kernel(xp, *arrays, **attrs)
                    except GradhubError:
                        raise
                    except Exception as e:
                        raise _kernel_error(node.fdef, arrays, e, node.device.kind) from e
                if single:
                    if group is not None:
                        pass  # (checked by _run_fused)
                    elif type(out) is not type(arrays[0]) or out.dtype.kind not in "biufc":
                        out = _kernel_result(node.fdef, node.device, out)
                    vals[b] = out
                    outs: Sequence[Any] = (out,)
                    v = node.outputs[0]()
                    if v is not None:
                        v._data = out
                else:
                    outs = _kernel_result(node.fdef, node.device, out)
                    for k, o in enumerate(outs):
                        vals[b + k] = o
                        v = node.outputs[k]()
                        if v is not None:
                            v._data = o
                if save:
                    node.rule = rule  # a retain_graph=False pass may have freed it
                    if save == 1:
                        node.saved_in = tuple(arrays)
                    elif save == 2:
                        node.saved_in = node.saved_out = None
                    else:
                        node.save(arrays, outs)
                for j in frees:
                    vals[j] = None

    # -- backward --------------------------------------------------------------------------------
    def first_order(
        self,
        outputs: list[Variable],
        seeds: list[Variable | None],
        targets: list[Variable] | None,
        retain_grad: bool,
        retain_graph: bool,
    ) -> _Grads | None:
        """The engine's first-order walk from ``outputs`` (to ``targets``, or to every leaf
        needing a gradient), by its recorded schedule; None where the engine must walk (the
        plan is for another output, or plans are off)."""
        if not _enabled or not self.owns(outputs[0]) or not (self.checked or self.valid()):
            return None
        key = _program_key(outputs, targets, [s is None for s in seeds])
        prog = self.programs.get(key)
        if prog is None or not prog.holds(outputs, targets):
            prog = self.programs[key] = _Program(
                outputs, seeds, targets, self.private, self.codegen
            )
        if self.recorded is not None:
            # backward() (no targets) copies the gradients into .g itself; grad() returns them:
            # copies, so that no result is an array the next replay writes into
            grads = self._recorded_walk(prog, seeds, retain_graph, retain_grad, targets is not None)
            if grads is not None:
                return grads
        return prog.run(seeds, retain_grad, retain_graph)

    def _recorded_walk(
        self,
        prog: _Program,
        seeds: list[Variable | None],
        retain_graph: bool,
        retain_grad: bool,
        copy: bool,
    ) -> _Grads | None:
        """The first-order walk (``backward()``, or ``grad()`` with ``copy``) of a static graph
        whose forward is recorded, replayed from its own recording (made at its third call; see
        :mod:`gradhub.capture_static`); None where the plan's walk runs."""
        key = (retain_graph, retain_grad)
        rec = prog.recorded.get(key)
        if rec is not None:
            grads = rec.replay(seeds, copy)
            if grads is not None:
                return grads
            del prog.recorded[key]
            prog.walks = 0
        prog.walks += 1
        if prog.walks < 3 or prog.capture_refused is not None or not _capture.enabled():
            return None
        rec = _try_record(
            prog, lambda: _static.RecordedWalk(prog, seeds, retain_graph, retain_grad)
        )
        if rec is None:
            return None
        grads = rec.launch(copy)
        if grads is not None:
            prog.recorded[key] = rec
        return grads


_R = TypeVar("_R")


def _program_key(
    outputs: Sequence[Variable], targets: Sequence[Variable] | None, no_seed: Sequence[bool]
) -> tuple[Any, ...]:
    """The key of a plan's first-order schedule (:attr:`Plan.programs`): its outputs, its
    targets (None: every leaf) and which outputs have no seed."""
    return (
        tuple(map(id, outputs)),
        None if targets is None else tuple(map(id, targets)),
        tuple(no_seed),
    )


def _try_record(owner: Any, make: Callable[[], _R]) -> _R | None:
    """A device recording made by ``make()`` for ``owner`` (a static graph's :class:`Plan`, its
    :class:`_Program` or a compiled step's trace: each counts its recordings in ``captures``
    and keeps why it cannot be recorded in ``capture_refused``); None where it is refused (a
    device that does not record, something in the graph it cannot record, or
    ``MAX_CAPTURES`` recordings made already: plans that keep changing), the reason kept."""
    if owner.captures >= _capture.MAX_CAPTURES:
        owner.capture_refused = f"recorded {owner.captures} times already (plans keep changing)"
        return None
    try:
        rec = make()
    except CaptureUnsupported as e:
        owner.capture_refused = str(e)
        return None
    owner.captures += 1
    return rec


class _Program:
    """One first-order backward schedule: the nodes the engine would visit, in its order, with
    integer positions for the gradients summed into each node's outputs."""

    def __init__(
        self,
        outputs: list[Variable],
        seeds: list[Variable | None],
        targets: list[Variable] | None,
        private: bool = False,
        codegen: bool = True,
    ) -> None:
        #: the schedule of a compiled step's own graph (see :class:`Plan`)
        self.private = private
        #: whether its walks without ``retain_grad`` run as generated code (:attr:`Plan.codegen`)
        self.codegen = codegen
        self.outputs = [weakref.ref(v) for v in outputs]
        self.targets = None if targets is None else [weakref.ref(v) for v in targets]
        self.generation = _variable.need_grad_generation
        self.links = _graph.links_generation
        roots = []
        for y, s in zip(outputs, seeds):
            if s is not None and y._creator is not None and y._need_grad:
                roots.append(y._creator)
        leaves: set[int] = set()
        nodes = _collect(roots, only_need_grad=True, leaves=leaves)
        keep: set[Node] = set()
        if targets is not None:
            target_leaves = {id(v) for v in targets if v._creator is None}
            if len(target_leaves) < len(targets) or not leaves <= target_leaves:
                nodes = _on_paths(nodes, targets)
            keep = {v._creator for v in targets if v._creator is not None}
        pos = {node: k for k, node in enumerate(nodes)}
        self.n = len(nodes)
        #: for the table (the engine's walk): the nodes, producers first, and the targets' nodes
        self.nodes, self.keep = nodes, keep
        # a seed on a node's output outside the walk (needing no gradient) is kept aside
        extra: dict[Node, int] = {}

        def where(src: Any, idx: int) -> int:
            if idx < 0:
                return -1
            p = pos.get(src)
            if p is None:
                p = extra.get(src)
                if p is None:
                    p = extra[src] = self.n + len(extra)
            return p

        self.seed_at = [(src, idx, where(src, idx)) for src, idx in map(_position, outputs)]
        self.order = []
        for node in reversed(nodes):
            ins = tuple((src, idx, where(src, idx)) for src, idx in zip(node.srcs, node.idxs))
            self.order.append((node, pos[node], node in keep, ins))
        self.slot_nodes = nodes + list(extra)
        self.leaf_flags = [(v, v._need_grad) for v in _graph_leaves(nodes)]
        self.seeds_given = [s is not None for s in seeds]
        #: the generated functions, by retain_graph (made at first use)
        self.compiled: dict[bool, Any] = {}
        #: on a static graph whose forward is recorded: the walk's recordings by
        #: (retain_graph, retain_grad), the walks run since the last one, how often it was
        #: recorded, or why it cannot be
        self.recorded: dict[tuple[bool, bool], _static.RecordedWalk] = {}
        self.walks = 0
        self.captures = 0
        self.capture_refused: str | None = None

    def holds(self, outputs: list[Variable], targets: list[Variable] | None) -> bool:
        """Whether this schedule was decided for these Variables under today's ``need_grad``
        and graph links."""
        if self.generation != _variable.need_grad_generation:
            return False
        if self.links != _graph.links_generation:
            return False
        for r, v in zip(self.outputs, outputs):
            if r() is not v:
                return False
        if targets is not None:
            for r, v in zip(self.targets, targets):  # type: ignore[arg-type]
                if r() is not v:
                    return False
        for v, flag in self.leaf_flags:
            if v._need_grad is not flag:
                return False
        return True

    def run(self, seeds: list[Variable | None], retain_grad: bool, retain_graph: bool) -> _Grads:
        """The engine's ``_run`` (first order, no callbacks) by this schedule."""
        grads = _Grads(True)
        if self.codegen and not retain_grad:
            fn = self.compiled.get(retain_graph)
            if fn is None:
                fn = self.compiled[retain_graph] = _generate_backward(self, retain_graph)
            if fn:
                with set_recording(False):  # rules on graph-less Variables record nothing
                    fn(grads, [None if s is None else s._data for s in seeds])
                return grads
        for (src, idx, _), s, ref in zip(self.seed_at, seeds, self.outputs):
            if s is None:
                continue
            grads.add(src, idx, s._data)
            if retain_grad and idx >= 0:
                y = ref()
                y._grad = _own(grads.get(y), {id(s._data)})  # type: ignore[arg-type, union-attr]
        _walk(grads, self.nodes, self.keep, retain_grad, retain_graph)  # the engine's walk
        return grads


_codegen = os.environ.get("GRADHUB_PLAN_CODEGEN", "1") != "0"
#: plans of graphs with more nodes than this run from their tables: CPython's compiler needs
#: about 70 bytes of memory per character of generated source (about 1 KB per node for a
#: backward schedule, 200 bytes for the forward), freed after the compile but resident until the
#: heap is trimmed (1,500 nodes: 0.8 s and 116 MB at the first replay; see docs/plans.md)
CODEGEN_MAX_NODES = 256


#: after compiling a generated source at least this long, glibc's free heap is given back
#: (:func:`gradhub.device.trim_host_heap`): compiling it leaves about 70 bytes per character of
#: free heap resident (a 16-layer MLP's backward schedule, 44,811 characters: 3.8 MB)
TRIM_MIN_CHARS = 16384


def _pruned(lines: list[str]) -> list[str]:
    """``lines`` of generated code without the dead branches of ``if True:`` and ``if False:``
    (conditions the generator knew when it wrote them): the live branch's lines one level
    (four spaces) less indented, or ``pass`` where no branch is live. CPython's compiler drops
    such branches too, but parses them first: this keeps what it parses and holds small.

    Example::

        >>> _pruned(["if a:", "    if True:", "        f()", "    else:", "        g()"])
        ['if a:', '    f()']
    """
    out: list[str] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        stmt = line.lstrip(" ")
        if stmt != "if True:" and stmt != "if False:":
            out.append(line)
            i += 1
            continue
        ind = len(line) - len(stmt)
        j = i + 1
        while j < n and len(lines[j]) - len(lines[j].lstrip(" ")) > ind:
            j += 1
        body, other, end = lines[i + 1 : j], [], j
        if j < n and lines[j] == " " * ind + "else:":
            end = j + 1
            while end < n and len(lines[end]) - len(lines[end].lstrip(" ")) > ind:
                end += 1
            other = lines[j + 1 : end]
        live = _pruned([ln[4:] for ln in (body if stmt == "if True:" else other)])
        out.extend(live or [" " * ind + "pass"])
        i = end
    return out


def _exec_source(src: str, name: str, env: dict[str, Any]) -> None:
    """Compile the generated ``src`` (shown as ``name`` in tracebacks) and run it in ``env``;
    give the compiler's memory back to the system when the source is long."""
    code = builtins.compile(src, name, "exec")
    if len(src) >= TRIM_MIN_CHARS:
        trim_host_heap()
    exec(code, env)


def _segment_bounds(nodes: list[Node], marks: list[int]) -> list[tuple[int, int]]:
    """The segments of ``nodes`` (sorted by sequence number) cut at the sequence numbers
    ``marks``, as ``(first, end)`` index pairs."""
    bounds = [0]
    for m in marks:
        bounds.append(next((k for k, nd in enumerate(nodes) if nd.seq > m), len(nodes)))
    bounds.append(len(nodes))
    return list(itertools.pairwise(bounds))


def _value_types(plan: Plan) -> dict[int, Any]:
    """The array type of each value position of ``plan`` that it knows: the leaves' (as
    recorded) and the single outputs of its steps."""
    type_of: dict[int, Any] = {j: meta[0] for j, meta in enumerate(plan.leaf_meta)}
    for step in plan.steps:
        if step[6]:
            type_of[step[5]] = step[0].out_type
    return type_of


def _fused(plan: Plan) -> dict[int, _fusion.Group]:
    """The plan's fused elementwise runs (see :mod:`gradhub.fusion`) by the index of each of
    their steps."""
    fusers = REGISTRY.fusers
    if not _fusion.enabled() or not any(s[0].device.kind in fusers for s in plan.steps):
        return {}  # (no step on a device with a fuser: nothing to look for)
    type_of = _value_types(plan)
    out = {}
    for g in _fusion.find_groups(plan.steps, plan.segments, type_of):
        for k in range(g.first, g.last + 1):
            out[k] = g
    return out


def _run_fused(plan: Plan, group: _fusion.Group, vals: list[Any]) -> None:
    """Run a fused group (the table's way): its values into ``vals``."""
    first = plan.steps[group.first]
    node, dev = first[0], first[10]
    arrays = [vals[j] for j in group.ins]
    try:
        if dev is None:
            outs = group.fn(group.xp, *arrays)
        else:
            with dev.activate():
                outs = group.fn(group.xp, *arrays)
    except GradhubError:
        raise
    except Exception as e:
        raise _kernel_error(node.fdef, arrays, e, node.device.kind) from e
    made = {plan.steps[k][5]: plan.steps[k][0] for k in range(group.first, group.last + 1)}
    for j, o in zip(group.outs, outs, strict=True):
        nd = made[j]
        if type(o) is not nd.out_type:
            o = _kernel_result(nd.fdef, nd.device, o)
        vals[j] = o


def _inline_operator(fn: Any, dtype: Any, attrs: dict[str, Any]) -> tuple[str, Any] | None:
    """How a plan writes a call of ``fn`` (a kernel ``fn(xp, x, **attrs)`` or a one-input
    first-order rule ``fn(xp, gy, x, y, **attrs)``) on a numpy array of ``dtype``: ``(op,
    operand)`` for ``array op operand`` (``op`` ``""``: the array itself), from the function's
    ``plan_operator`` attribute ``(op, operand(dtype, **attrs))``; None where it has none or
    its operand cannot be made."""
    form = getattr(fn, "plan_operator", None)
    if form is None:
        return None
    op, operand = form
    if op not in ("", "+", "*"):
        return None
    try:
        return op, (None if op == "" else operand(dtype, **attrs))
    except Exception:  # (the call is written as it is: its own error at run time)
        return None


def _elementwise_expression(node: Node, fn: Any, array_type: Any, *names: str | None) -> str | None:
    """How a plan writes a call of ``fn``, the kernel ``fn(xp, x)`` or the one-input first-order
    rule ``fn(xp, gy, x, y)`` of an elementwise function (``elementwise=True``), on numpy arrays
    named ``names``: its numpy expression (:func:`gradhub.expression.traced`), where it declares
    one and the node takes no attributes and keeps its input's shape (not 0-d: numpy returns
    scalars there) and dtype; None otherwise."""
    maker = getattr(fn, "plan_expression", None)
    if (
        maker is None
        or array_type is not _ndarray
        or node.attrs
        or not getattr(node.fdef, "elementwise", False)
        or node.out_type is not _ndarray
        or len(node.in_shapes) != 1
        or node.in_shapes[0] == ()
        or node.out_shapes[0] != node.in_shapes[0]
        or node.out_dtypes[0] != node.in_dtypes[0]
    ):
        return None
    try:
        expr = maker(*names)
    except Exception:  # (the call is written as it is)
        return None
    return expr if isinstance(expr, str) else None


def _positional(fn: Any, lead: int, attrs: dict[str, Any]) -> list[str] | None:
    """The attributes in the order in which ``fn(*lead arguments, *attributes)`` takes them
    positionally (a call with positional arguments is the cheaper one), or None where its
    signature does not say so (keyword-only attributes, ``**attrs``, no signature): keywords."""
    if not attrs:
        return []
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    n = lead + len(attrs)
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if len(params) < n or any(p.kind not in positional for p in params[:n]):
        return None
    names = [p.name for p in params[lead:n]]
    return names if sorted(names) == sorted(attrs) else None


def _generate_valid(plan: Plan) -> Any:
    """:meth:`Plan.valid` as one straight-line function of no arguments: the registry's
    generation, the graph links' (:func:`gradhub.graph.links_changed`), each function's kernel
    for its device and its rule, each leaf's array type, shape, dtype (and device, off numpy),
    the recorded values bound as its globals."""
    env: dict[str, Any] = {"REGISTRY": REGISTRY, "_device_name": _device_name, "GRAPH": _graph}
    lines = [
        "def valid():",
        f"    if REGISTRY.generation != {plan.generation!r}:",
        "        return False",
        f"    if GRAPH.links_generation != {plan.links!r}:",
        "        return False",
    ]
    for i, (fdef, rule, kind, kernel) in enumerate(plan.fdefs):
        env[f"F{i}"], env[f"R{i}"], env[f"K{i}"], env[f"I{i}"] = fdef, rule, kernel, kind
        lines += [
            f"    ks = F{i}.kernels",
            f"    if (ks.get(I{i}, F{i}.forward) if ks else F{i}.forward) is not K{i} or "
            f"F{i}.rule is not R{i}:",
            "        return False",
        ]
    for i, (leaf, (atype, shape, dtype), dev) in enumerate(
        zip(plan.leaves, plan.leaf_meta, plan.leaf_devices)
    ):
        env[f"L{i}"], env[f"T{i}"], env[f"S{i}"], env[f"D{i}"] = leaf, atype, shape, dtype
        lines += [
            f"    a = L{i}._data",
            f"    if type(a) is not T{i} or a.shape != S{i} or a.dtype != D{i}:",
            "        return False",
        ]
        if dev is not None:  # moved to another device of the same array type
            env[f"V{i}"] = dev
            lines += [f"    if _device_name(a) != V{i}:", "        return False"]
    lines.append("    return True")
    src = "\n".join(lines) + "\n"
    _exec_source(src, f"<gradhub plan checks of {len(plan.leaves)} leaves>", env)
    return env.pop("valid")


def _generate_forward(plan: Plan) -> list[Any] | None:
    """The forward schedule as straight-line Python functions ``run(leaves, values)``, one per
    segment (as torch.fx emits code): one statement per kernel call, its constants (kernels,
    attributes, nodes) bound as globals of the function, values as locals deleted after their
    last use (``values`` carries those a later segment reads). None for a graph with arrays of
    another device (those run by the table)."""
    n_leaves = len(plan.leaves)
    seg_of: dict[int, int] = {}  # value position -> the segment producing it
    used_in: dict[int, set[int]] = {}
    for g, (lo, hi) in enumerate(plan.segments):
        for step in plan.steps[lo:hi]:
            b = step[5]
            for j in range(b, b + len(step[0].out_shapes)):
                seg_of[j] = g
            for j in step[4]:
                used_in.setdefault(j, set()).add(g)
    shared = {j for j, gs in used_in.items() if j >= n_leaves and gs != {seg_of[j]}}
    # the array type of each value where the plan knows it: the leaves' (checked at each run),
    # a single output's (its kernel's result checked below)
    type_of = _value_types(plan)
    fused = plan.fused
    #: the values a fused run keeps inside its kernel (no local of the generated code)
    inside = {plan.steps[k][5] for k, grp in fused.items() if plan.steps[k][5] not in grp.outs}
    runs = []
    for g, (lo, hi) in enumerate(plan.segments):
        env: dict[str, Any] = {"_fix": _kernel_result}
        lines = ["def run(leaves, values):"]
        for j in sorted(used_in):
            if g in used_in[j]:
                if j < n_leaves:
                    lines.append(f"    v{j} = leaves[{j}]._data")
                elif seg_of[j] != g:
                    lines.append(f"    v{j} = values[{j}]")
        for k in range(lo, hi):
            node, kernel, xp, attrs, ins, b, single, save, rule, frees, dev = plan.steps[k]
            if dev is not None or any(not str.isidentifier(a) for a in attrs):
                return None
            env[f"K{k}"], env[f"X{k}"], env[f"N{k}"], env[f"R{k}"] = kernel, xp, node, rule
            args = [f"v{j}" for j in ins]
            order = _positional(kernel, 1 + len(ins), attrs)
            for a, value in attrs.items():
                env[f"A{k}_{a}"] = value
            if order is None:
                args += [f"{a}=A{k}_{a}" for a in attrs]
            else:
                args += [f"A{k}_{a}" for a in order]
            call = f"K{k}(X{k}, {', '.join(args)})"
            n_out = len(node.out_shapes)
            form = None
            group = fused.get(k)
            if group is not None:
                if k == group.first:  # the run's one call, making the values kept outside it
                    env[f"Z{k}"], env[f"ZX{k}"] = group.fn, group.xp
                    names = "".join(f"v{j}, " for j in group.outs)
                    lines.append(
                        f"    {names}= Z{k}(ZX{k}, {', '.join(f'v{j}' for j in group.ins)})"
                    )
                if b not in inside:
                    env[f"T{k}"] = node.out_type
                    lines.append(f"    if type(v{b}) is not T{k}:")
                    lines.append(f"        v{b} = _fix(N{k}.fdef, N{k}.device, v{b})")
                outs = f"(v{b},)"
            elif single and len(ins) == 1 and type_of.get(ins[0]) is _ndarray:
                form = _inline_operator(kernel, node.in_dtypes[0], attrs)
            inline = None
            if group is None and form is None and single and len(ins) == 1:
                expr = _elementwise_expression(node, kernel, type_of.get(ins[0]), f"v{ins[0]}")
                if expr is not None:
                    # the kernel's own numpy expression (for the input's dtype, checked: another
                    # dtype calls the kernel)
                    inline, env[f"D{k}"], env["xp"] = expr, node.in_dtypes[0], np
            if form is not None:
                # the kernel's own operation, its constant operand made once (for the input's
                # dtype, checked: another dtype calls the kernel)
                op, env[f"C{k}"], env[f"D{k}"] = *form, node.in_dtypes[0]
                x = f"v{ins[0]}"
                if not op:
                    call = x
                elif node.in_shapes[0] != () and node.out_type is _ndarray:
                    inline = f"{x} {op} C{k}"  # (an array of that type: not a 0-d result)
                else:
                    call = f"{x} {op} C{k} if {x}.dtype is D{k} else {call}"
            if group is not None:
                pass  # (written above)
            elif inline is not None:
                env[f"T{k}"] = node.out_type
                lines.append(f"    if v{ins[0]}.dtype is D{k}:")
                lines.append(f"        v{b} = {inline}")
                lines.append("    else:")
                lines.append(f"        v{b} = {call}")
                lines.append(f"        if type(v{b}) is not T{k}:")
                lines.append(f"            v{b} = _fix(N{k}.fdef, N{k}.device, v{b})")
                outs = f"(v{b},)"
            elif single:
                # (the inputs' array type: the leaves' types are checked at each run)
                env[f"T{k}"] = node.out_type
                lines.append(f"    v{b} = {call}")
                lines.append(f"    if type(v{b}) is not T{k}:")
                lines.append(f"        v{b} = _fix(N{k}.fdef, N{k}.device, v{b})")
                outs = f"(v{b},)"
            else:
                names = ", ".join(f"v{b + j}" for j in range(n_out))
                comma = "," if n_out == 1 else ""
                lines.append(f"    {names}{comma} = _fix(N{k}.fdef, N{k}.device, {call})")
                outs = f"({names},)"
            for j in range(n_out):
                # an output Variable freed already is never seen again: nothing to update
                if node.outputs[j]() is not None and b + j not in inside:
                    env[f"W{k}_{j}"] = node.outputs[j]
                    lines.append(f"    o = W{k}_{j}()")
                    lines.append("    if o is not None:")
                    lines.append(f"        o._data = v{b + j}")
                if b + j in shared:
                    lines.append(f"    values[{b + j}] = v{b + j}")
            if save:
                if not plan.rules_kept:
                    lines.append(f"    N{k}.rule = R{k}")
                if save == 1:
                    lines.append(f"    N{k}.saved_in = ({', '.join(f'v{j}' for j in ins)},)")
                elif save == 3:  # (2: the rule keeps nothing, the saved arrays stay None)
                    # (a value a fused run keeps inside is one the rule does not keep: None)
                    kept = ", ".join("None" if j in inside else f"v{j}" for j in ins)
                    lines.append(f"    N{k}.save([{kept}], {outs})")
            frees = tuple(j for j in frees if j not in inside)
            if frees:
                lines.append(f"    del {', '.join(f'v{j}' for j in frees)}")
                gone = [j for j in frees if j in shared]
                if gone:
                    lines.append(f"    {' = '.join(f'values[{j}]' for j in gone)} = None")
        lines.append("    return None")
        src = "\n".join(lines) + "\n"
        _exec_source(src, f"<gradhub plan of {hi - lo} nodes>", env)
        runs.append(env.pop("run"))  # (no cycle: the function holds env, env not it)
    return runs


def _generate_backward(prog: _Program, retain_graph: bool) -> Any:
    """A first-order schedule as one straight-line Python function ``run(grads, seeds)``: the
    engine's walk unrolled (with ``retain_graph`` as given), each gradient position a local
    variable. False for schedules with nodes of another device (run by the table)."""
    env: dict[str, Any] = {
        "_plus": None,
        "_FREED": _FREED,
        "_call": _call_rule_arrays,
        "_checked": _checked_arrays,
        "_failed": _fast1_failed,
        "_replaced": _replaced_error,
        "_filled": _zero_filled,
        "_has_none": _has_none,
        "_nd": _ndarray,
        "_count": _check_count,
        "_rule_failed": _rule_failed,
    }
    lines = ["def run(grads, seeds):", "    plus = grads._plus", "    leaves = grads.leaves"]
    used: set[str] = set()

    def slot(p: int, j: int) -> str:
        name = f"p{p}_{j}"
        used.add(name)
        return name

    # how many gradients each position receives: one is assigned, not summed
    arrivals: dict[tuple[int, int], int] = {}
    leaf_arrivals: dict[int, int] = {}  # by id: a leaf's gradient set once is not summed
    for (src, idx, p), given in zip(prog.seed_at, prog.seeds_given):
        if given and p >= 0:
            arrivals[p, idx] = arrivals.get((p, idx), 0) + 1
        elif given:
            leaf_arrivals[id(src)] = leaf_arrivals.get(id(src), 0) + 1
    for _, _, _, ins in prog.order:
        for src, idx, p in ins:
            if p >= 0:
                arrivals[p, idx] = arrivals.get((p, idx), 0) + 1
            else:
                leaf_arrivals[id(src)] = leaf_arrivals.get(id(src), 0) + 1

    def accumulate(indent: str, src: Any, idx: int, p: int, value: str, k: int, i: int) -> None:
        if p < 0:
            at = f"{k}_{i}".replace("-", "s")  # (a seed's k is negative)
            env[f"L{at}"] = src
            if leaf_arrivals[id(src)] == 1:  # (grads is new: nothing there yet)
                env[f"K{at}"] = id(src)
                lines.append(f"{indent}leaves[K{at}] = (L{at}, {value})")
            else:
                lines.append(f"{indent}grads.add(L{at}, -1, {value})")
        elif arrivals[p, idx] == 1:
            lines.append(f"{indent}{slot(p, idx)} = {value}")
        else:
            t = slot(p, idx)
            lines.append(f"{indent}{t} = {value} if {t} is None else plus({t}, {value})")

    body_start = len(lines)
    for k, ((src, idx, p), given) in enumerate(zip(prog.seed_at, prog.seeds_given)):
        if not given:
            continue
        accumulate("    ", src, idx, p, f"seeds[{k}]", -1 - k, 0)
    for node, k, keep, ins in prog.order:
        if node.device.index:
            return False
        n_out = len(node.out_shapes)
        outs = [slot(k, j) for j in range(n_out)]
        env[f"N{k}"] = node
        lines.append(f"    if {' or '.join(f'{o} is not None' for o in outs)}:")
        rule = node.fdef.rule if node.rule is not None else None
        # the rule kernel for the node's device, resolved here once (gradhub.registry)
        run = rule if rule is None or rule is _FREED else device_rule(rule, node.device.kind)
        generic = "        "
        fast1 = (
            rule is not None
            and run is not None
            and rule is not _FREED
            and run.fast1 is not None
            and len(ins) == 1
            and n_out == 1
            and all(str.isidentifier(a) for a in node.attrs)
        )
        if fast1:
            gy = outs[0]  # read where it lies, let go of after the rule (unless kept)
        else:
            lines.append(f"        gys = [{', '.join(outs)}]")
            if not keep:
                lines.append(f"        {' = '.join(outs)} = None")
        if fast1:
            assert rule is not None
            src, idx, p = ins[0]
            assert run is not None and run.fast1 is not None
            env[f"Q{k}"] = run
            env[f"R{k}"], env[f"F{k}"], env[f"X{k}"], env[f"S{k}"] = (
                rule,
                run.fast1,
                node.device.xp,
                src,
            )
            env[f"T{k}"], env[f"H{k}"], env[f"D{k}"] = (
                node.out_type,
                node.in_shapes[0],
                node.in_dtypes[0],
            )
            kw = ""
            order = _positional(run.fast1, 4, node.attrs)
            for a, value in node.attrs.items():
                env[f"A{k}_{a}"] = value
                kw += f", {a}=A{k}_{a}" if order is None else ""
            kw += "".join(f", A{k}_{a}" for a in order or ())
            # what the node keeps is what its rule R declared (checked at each run: r is R)
            x_in = "None" if rule.need_inputs == () else f"N{k}.saved_in[0]"
            y_out = "None" if rule.need_outputs == () else f"N{k}.saved_out[0]"
            x_arg = "None" if x_in == "None" else "x"
            call = f"F{k}(X{k}, {gy}, {x_arg}, {y_out}{kw})"
            frees = []
            if not retain_graph:
                # (what a rule does not keep is None already: Node.save)
                if x_in != "None" and y_out != "None":
                    frees.append(f"N{k}.saved_in = N{k}.saved_out = None")
                elif x_in != "None":
                    frees.append(f"N{k}.saved_in = None")
                elif y_out != "None":
                    frees.append(f"N{k}.saved_out = None")
                if not prog.private:
                    frees.append(f"N{k}.rule = _FREED")
            replaced = not prog.private and p < 0 and x_in != "None"  # (see _fast_call)
            form = None
            if (
                node.out_type is _ndarray
                and node.out_shapes[0] == node.in_shapes[0] != ()
                and node.out_dtypes[0] == node.in_dtypes[0]
            ):
                form = _inline_operator(run.fast1, node.out_dtypes[0], node.attrs)
            expr = None
            if form is None:
                expr = _elementwise_expression(
                    node,
                    run.fast1,
                    node.out_type,
                    gy,
                    None if x_in == "None" else "x",
                    None if y_out == "None" else "yo",
                )
            if prog.private:
                # (the step's forward set every node's rule before this walk; need_grad is the
                # one this schedule was made for, or holds() would have failed: read now)
                lines.append(f"        if {bool(src.need_grad)}:")
            else:
                lines.append(f"        if N{k}.rule is R{k} and S{k}.need_grad:")
            ind = "            "
            inline = None  # (the gradient's value written inline, the lines reading what it uses)
            if expr is not None:
                # the rule's own numpy expression on a gradient of the output's array type and
                # dtype (as for an operator below), on the arrays the node keeps; its result
                # has the gradient's type, shape and dtype (an elementwise function's input's)
                env[f"E{k}"], env["xp"] = node.out_dtypes[0], np
                reads = [] if x_in == "None" else [f"x = {x_in}"]
                reads += [] if y_out == "None" else [f"yo = {y_out}"]
                inline = expr, reads
            elif form is not None:
                # the rule's own operation on a gradient of the output's array type and dtype
                # (the engine keeps the shapes of the gradients it passes on: the output's), its
                # constant operand made once: a result of the input's type, shape and dtype,
                # summed as it is; another gradient goes through the rule and its checks
                op, env[f"C{k}"], env[f"E{k}"] = *form, node.out_dtypes[0]
                inline = (f"{gy} {op} C{k}" if op else ""), []
            if inline is not None:
                value, reads = inline
                # the only gradient its position receives: written there at once
                target = slot(p, idx) if p >= 0 and arrivals[p, idx] == 1 else "a"
                if prog.private:
                    # (a compiled step's gradients have the array types and dtypes the walk was
                    # made for: its leaves' are checked before each run, and every gradient is
                    # the seed, a checked rule result or an inline result of its input's)
                    lines.append(f"{ind}if {node.out_type is _ndarray}:")
                else:
                    lines.append(f"{ind}if type({gy}) is _nd and {gy}.dtype is E{k}:")
                lines += [f"{ind}    {r}" for r in reads]
                if value:  # (an error, such as numpy's under errstate, named as the rule's)
                    lines.append(f"{ind}    try:")
                    lines.append(f"{ind}        {target} = {value}")
                    lines.append(f"{ind}    except Exception as e:")
                    lines.append(f"{ind}        _failed(N{k}, Q{k}, e)")
                else:
                    lines.append(f"{ind}    {target} = {gy}")
                if not keep:
                    lines.append(f"{ind}    {gy} = None")
                lines += [f"{ind}    {f}" for f in frees]
                if replaced and reads[:1] == [f"x = {x_in}"]:
                    lines.append(f"{ind}    if x is not None and x is not S{k}._data:")
                    lines.append(f"{ind}        raise _replaced(N{k}, 0)")
                if target == "a":
                    accumulate(ind + "    ", src, idx, p, "a", k, 0)
                lines.append(f"{ind}else:")
                ind += "    "
            if x_in != "None":
                lines.append(f"{ind}x = {x_in}")
            lines += [
                f"{ind}try:",
                f"{ind}    a = {call}",
                f"{ind}except Exception as e:",
                f"{ind}    _failed(N{k}, Q{k}, e)",
            ]
            if not keep:
                lines.append(f"{ind}{gy} = None")
            # a result of the declared type, shape and dtype (never None) is summed at once;
            # any other is checked first (None: no gradient)
            lines.append(f"{ind}if type(a) is T{k} and a.shape == H{k} and a.dtype is D{k}:")
            lines += [f"{ind}    {f}" for f in frees]
            if replaced:
                lines.append(f"{ind}    if x is not None and x is not S{k}._data:")
                lines.append(f"{ind}        raise _replaced(N{k}, 0)")
            accumulate(ind + "    ", src, idx, p, "a", k, 0)
            lines.append(f"{ind}else:")
            lines.append(f"{ind}    a = _checked(N{k}, Q{k}, (a,))[0]")
            lines += [f"{ind}    {f}" for f in frees]
            lines.append(f"{ind}    if a is not None:")
            if replaced:
                lines.append(f"{ind}        if x is not None and x is not S{k}._data:")
                lines.append(f"{ind}            raise _replaced(N{k}, 0)")
            accumulate(ind + "        ", src, idx, p, "a", k, 0)
            lines.append("        else:")
            lines.append(f"            gys = [{gy}]")
            if not keep:
                lines.append(f"            {gy} = None")
            generic = "            "
        g = generic
        if n_out > 1:  # (one output: inside its test for None)
            lines.append(f"{g}if _has_none(gys):")
            lines.append(f"{g}    gys = _filled(N{k}, gys)")
        if not fast1 and _inline_fast(node, rule, run):
            # the array rule called here as the engine calls it, its results checked inline
            assert rule is not None and run is not None
            _fast_call(lines, env, g, node, k, rule, run, ins, prog.private)
            _release(lines, g, k, retain_graph, prog.private)
            for i, (src, idx, p) in enumerate(ins):
                if prog.private and not src.need_grad:
                    continue  # (None: see _fast_call)
                lines.append(f"{g}if g{i} is not None:")
                accumulate(g + "    ", src, idx, p, f"g{i}", k, i)
            lines.append(f"{g}{' = '.join(f'g{i}' for i in range(len(ins)))} = None")
            continue
        lines.append(f"{g}res = _call(N{k}, gys)")
        _release(lines, g, k, retain_graph, prog.private)
        for i, (src, idx, p) in enumerate(ins):
            lines.append(f"{g}g = res[{i}]")
            lines.append(f"{g}if g is not None:")
            accumulate(g + "    ", src, idx, p, "g", k, i)
    for p, node in enumerate(prog.slot_nodes):
        if p < prog.n and node not in prog.keep:
            continue  # (its gradients were let go of where its rule ran: None here)
        names = [f"p{p}_{j}" for j in range(len(node.out_shapes))]
        if any(n in used for n in names):
            used.update(names)
            env[f"M{p}"] = node
            lines.append(f"    if {' or '.join(f'{n} is not None' for n in names)}:")
            lines.append(f"        grads.nodes[M{p}] = [{', '.join(names)}]")
    lines[body_start:body_start] = [f"    {n} = None" for n in sorted(used)]
    src = "\n".join(_pruned(lines)) + "\n"  # (a compiled step's walk writes if True/False)
    _exec_source(src, f"<gradhub backward plan of {prog.n} nodes>", env)
    return env.pop("run")  # (no cycle: the function holds env, env not it)


def _inline_fast(node: Node, rule: Any, run: Any) -> bool:
    """Whether a backward plan calls the node's array rule (``run.fast``, the rule kernel for the
    node's device) itself, rather than through the engine's ``_call_rule_arrays``."""
    return (
        rule is not None
        and rule is not _FREED
        and run is not None
        and run.fast is not None
        and all(str.isidentifier(a) for a in node.attrs)
    )


def _release(lines: list[str], g: str, k: int, retain_graph: bool, private: bool) -> None:
    """Generated lines after node ``N{k}``'s rule has run: its output gradients dropped and,
    unless the graph is retained, its saved arrays and (but in a compiled step's own graph,
    whose forward sets it again before every walk) its rule freed (as the engine frees them)."""
    lines.append(f"{g}del gys")
    if not retain_graph:
        lines.append(f"{g}N{k}.saved_in = N{k}.saved_out = None")
        if not private:
            lines.append(f"{g}N{k}.rule = _FREED")


def _fast_call(
    lines: list[str],
    env: dict[str, Any],
    g: str,
    node: Node,
    k: int,
    rule: Any,
    run: Any,
    ins: Sequence[tuple[Any, int, int]],
    private: bool,
) -> None:
    """The lines (at indent ``g``) that leave in ``g0``, ``g1``, ... the gradient arrays of node
    ``k``'s inputs from its gradients ``gys``, as the engine's ``_call_rule_arrays`` does: the
    replaced-leaf check, the array rule ``run.fast`` called with the same arguments, the result
    count checked, a result of its input's array type, shape and dtype taken as it is, any other
    result (or a rule no longer the node's) through the engine's own checks; None where an input
    needs no gradient. In a compiled step's own graph (``private``) the rule and the inputs'
    ``need_grad`` are the ones the walk was generated for (its forward sets the rules before every
    walk, and a changed ``need_grad`` fails the program's ``holds``): written as constants."""
    n_in = len(ins)
    outs = ", ".join(f"g{i}" for i in range(n_in))
    env[f"R{k}"], env[f"Q{k}"], env[f"F{k}"], env[f"X{k}"] = rule, run, run.fast, node.device.xp
    env[f"NI{k}"], env[f"NO{k}"] = (None,) * n_in, (None,) * len(node.out_shapes)
    env[f"T{k}"] = node.out_type
    for i, (src, _, _) in enumerate(ins):
        env[f"S{k}_{i}"], env[f"H{k}_{i}"] = src, node.in_shapes[i]
        env[f"D{k}_{i}"] = node.in_dtypes[i]
    # each input's need_grad, read at the call (None) or known (a compiled step's graph)
    needs = [bool(src.need_grad) if private else None for src, _, _ in ins]
    flags = [f"S{k}_{i}.need_grad" if n is None else str(n) for i, n in enumerate(needs)]
    kw = ""
    if run.fast_wants_need_grads:
        kw += ", need_grads=(" + "".join(f"{f}, " for f in flags) + ")"
    for a, value in node.attrs.items():
        env[f"A{k}_{a}"] = value
        kw += f", {a}=A{k}_{a}"
    lines.append(f"{g}if {'True' if private else f'N{k}.rule is R{k}'}:")
    lines.append(f"{g}    si = N{k}.saved_in")
    lines.append(f"{g}    if si is None:")
    lines.append(f"{g}        si = NI{k}")
    # a leaf input whose data was replaced: the engine's error (not in a compiled step's graph:
    # no code of the step runs between its replayed forward, which saves the leaves' arrays as
    # they are, and its walks)
    if not private and (n_in > 1 or node.idxs[0] < 0):
        for i, (_, idx, _) in enumerate(ins):
            if idx < 0:
                lines.append(f"{g}    if si[{i}] is not None and si[{i}] is not S{k}_{i}._data:")
                lines.append(f"{g}        raise _replaced(N{k}, {i})")
    lines.append(f"{g}    so = N{k}.saved_out")
    lines.append(f"{g}    if so is None:")
    lines.append(f"{g}        so = NO{k}")
    lines.append(f"{g}    try:")
    lines.append(f"{g}        res = F{k}(X{k}, gys, si, N{k}.in_shapes, so, N{k}.out_shapes{kw})")
    lines.append(f"{g}    except Exception as e:")
    lines.append(f"{g}        _rule_failed(N{k}, Q{k}, e)")
    lines.append(f"{g}    del si, so")
    lines.append(
        f"{g}    if (type(res) is not list and type(res) is not tuple) or len(res) != {n_in}:"
    )
    lines.append(f"{g}        res = _count(N{k}, res)")
    for i, n in enumerate(needs):
        value = "None" if n is False else f"res[{i}]" if n else f"res[{i}] if {flags[i]} else None"
        lines.append(f"{g}    g{i} = {value}")
    ok = " and ".join(
        f"(g{i} is None or (type(g{i}) is T{k} and g{i}.shape == H{k}_{i} "
        f"and g{i}.dtype is D{k}_{i}))"
        for i, n in enumerate(needs)
        if n is not False
    )
    if ok:
        lines.append(f"{g}    if not ({ok}):")
        lines.append(f"{g}        {outs}{',' if n_in == 1 else ''} = _checked(N{k}, Q{k}, res)")
    lines.append(f"{g}    del res")
    lines.append(f"{g}else:")
    lines.append(f"{g}    {outs}{',' if n_in == 1 else ''} = _call(N{k}, gys)")


def _rule_failed(node: Node, rule: Any, e: Exception) -> NoReturn:
    """Raise the engine's error for an array rule that raised ``e`` (its own
    ``BackwardRuleError`` as it is)."""
    if isinstance(e, BackwardRuleError):
        raise e
    raise _rule_raised(node, rule, e) from e


def _graph_leaves(nodes: Sequence[Node]) -> list[Variable]:
    """The leaf inputs of ``nodes``, each once."""
    seen: set[int] = set()
    out = []
    for node in nodes:
        for src, idx in zip(node.srcs, node.idxs):
            if idx < 0 and id(src) not in seen:
                seen.add(id(src))
                out.append(src)
    return out


# -- compile ---------------------------------------------------------------------------------------


class _Trace:
    """What a traced step did besides recording functions: its first-order ``backward`` and
    ``grad`` calls (told by the engine) and the gradients it cleared (told by the Variables),
    each with the sequence number it came after; the thread's observer while the step is
    traced (see :func:`gradhub.variable.set_observer`)."""

    def __init__(self, inputs: Sequence[Variable]) -> None:
        self.events: list[tuple[Any, ...]] = []
        #: the Variables the step's array arguments became
        self.inputs = list(inputs)
        #: the numpy arrays handed out by ``.d``, ``.g`` and ``numpy()`` that the trace made
        #: read-only (see hand_out); writeable again when the trace ends (see thaw)
        self.frozen: list[np.ndarray] = []
        #: the gradient Variables that walks with ``retain_grad`` set on graph Variables: by
        #: id, (the gradient Variable, the Variable holding it) (see _Traced._grad_owners)
        self.retained: dict[int, tuple[Variable, Variable]] = {}
        #: the global settings the step read before setting them: (read, its value), checked
        #: before each replay (see global_state); the keys read or set so far
        self.guards: list[tuple[Callable[[], Any], Any]] = []
        self.globals_seen: set[Any] = set()
        #: the Variables needing a gradient that ``Variable(data)`` made in the step
        self.made_leaves: list[weakref.ref[Variable]] = []
        #: whether the step read or wrote the parameter table (see parameters_read)
        self.parameters = False
        #: Variables the plan computes even when no result reads them (see keep)
        self.kept: list[Variable] = []

    def keep(self, v: Variable) -> None:
        """A Variable the plan must compute at each replay (see
        :func:`gradhub.variable.keep_in_trace`)."""
        if isinstance(v, Variable):
            self.kept.append(v)

    def made(self, v: Variable) -> None:
        """A ``Variable(data)`` the step's code made (see :meth:`_Traced.__init__`)."""
        if v._need_grad:
            self.made_leaves.append(weakref.ref(v))

    def global_state(self, key: Any, read: Callable[[], Any] | None, written: bool) -> None:
        """A global setting ``key`` read (its value by ``read()``) or set by the step's code
        (see :func:`gradhub.variable.observe_global`): the first read of a setting the step has
        not set becomes a guard of the trace."""
        if key in self.globals_seen:
            return
        self.globals_seen.add(key)
        if not written and read is not None:
            self.guards.append((read, _setting(read)))

    def parameters_read(self) -> None:
        """The step's code looked parameters up in the table of :mod:`gradhub.parameters` (or
        changed it): its graph holds the Variables it found under the scope then, so the table's
        version and the scope when the trace ends become a guard of the trace (see
        :func:`gradhub.parameters.table_state`); a later call finding the table changed (cleared
        and loaded again, ``set_parameter``) or another scope traces the step again."""
        self.parameters = True

    def _retained(self, outputs: Sequence[Variable]) -> None:
        """Note the gradient Variables that a walk with ``retain_grad`` from ``outputs`` left on
        the graph's Variables (the step may return them: see _Traced._grad_owners)."""
        for node in _engine.collect_graph(outputs):
            for ref in node.outputs:
                v = ref()
                if v is not None and v._grad is not None:
                    self.retained[id(v._grad)] = (v._grad, v)

    def hand_out(self, array: Any) -> None:
        """An array handed to the step's code by ``x.d``, ``x.g`` or ``x.numpy()``: a write
        into it in place (``w.d[...] = v``, ``w.d -= lr * g``, ``out=w.d``, ``w.g.fill(0)``)
        would happen at this call only (a replay runs the graph, not the code), so the array is
        read-only until the trace ends; the write raises, and :meth:`refusal` names it.
        (Device arrays have no read-only flag: see docs/plans.md.)"""
        if type(array) is np.ndarray and array.flags.writeable:
            array.flags.writeable = False
            self.frozen.append(array)

    def thaw(self) -> None:
        """Make the arrays :meth:`hand_out` froze writeable again."""
        for a in self.frozen:
            a.flags.writeable = True
        self.frozen.clear()

    def detach(self, v: Variable, need_grad: bool = False) -> Variable:
        """``v.detach()`` in the step's code: a leaf holding ``v``'s array would hold this
        call's values at every replay, so a node on ``v`` recorded as under ``no_grad()`` (its
        result needs no gradient and is computed again at each replay), sharing the data. A
        leaf cut from the graph that needs a gradient itself (nnabla's
        ``get_unlinked_variable(need_grad=True)``) cannot be such a node: refused."""
        if need_grad:
            raise NotImplementedError(
                f"gradhub.compile: the step cuts the Variable {_named(v)} from its graph as a "
                "leaf needing a gradient (get_unlinked_variable(need_grad=True)); a compiled "
                "step replays its graph, and such a leaf would hold this call's values at every "
                "later call. Inside a compiled step, cut with need_grad=False (or detach()), "
                "or differentiate with respect to the Variable itself"
            )
        with _modes.no_grad():
            return call("Reshape", v, shape=v.shape)  # type: ignore[no-any-return]

    def kernel_failed(self, fdef: Any, arrays: Sequence[Any], e: Exception) -> Exception | None:
        """The refusal of a kernel's write into one of its input arrays (batch normalization's
        running statistics) that :meth:`hand_out` froze because the step read it before the
        function ran (None for any other failure)."""
        if not _about_read_only(e) or not any(a is f for a in arrays for f in self.frozen):
            return None
        text = str(e)
        return NotImplementedError(
            f"gradhub.compile: {fdef.snake}() writes into one of its input arrays in place (as "
            "when it updates running statistics), which the step read through .d, .g or "
            "numpy() before it ran; while a step is traced, arrays handed out are read-only "
            f"(numpy: {text}). Read that array after {fdef.snake}() in the step, or outside "
            "the compiled step"
        )

    def refusal(self, e: ValueError) -> NotImplementedError | None:
        """The refusal of a write into an array :meth:`hand_out` froze, for numpy's error
        ``e`` about a read-only array (None for any other error)."""
        if not self.frozen or not _about_read_only(e):
            return None
        return NotImplementedError(
            "gradhub.compile: the step writes in place into an array it took from a Variable "
            f"(.d, .g or numpy(); numpy: {e}); a compiled step replays its graph, not its "
            "Python code, so later calls would not make this write. Make it outside the "
            "compiled step (return the gradients and update the parameters after the call, "
            "e.g. optimizer.update(grads)); data comes in as arguments, and gradients are "
            "cleared with cleargrad(), .g = None or .g = 0"
        )

    def wrap(self, data: Any) -> None:
        """``Variable(data)`` in the step's code: a Variable made from another one, from an
        array argument's data, or from an array taken from a Variable (``.d``, ``.g``,
        ``numpy()``, or a view of one) would hold this call's array at every later call (a
        replay does not run the code that made it), so the trace refuses it."""
        if isinstance(data, Variable):
            what = "a Variable"
        elif any(data is v._data for v in self.inputs):
            what = "an array argument's data"
        else:
            base = getattr(data, "base", None) if isinstance(data, np.ndarray) else None
            if not any(data is a or base is a for a in self.frozen):
                return
            what = "an array taken from a Variable (.d, .g or numpy())"
        raise NotImplementedError(
            f"gradhub.compile: the step makes a Variable from {what}; a compiled step replays "
            "its graph, not its Python code, so that Variable would hold this call's array at "
            "every later call. Use the Variable itself, or x.detach() for one cut from the "
            "graph (an array argument arrives in the step as a Variable needing no gradient; "
            "pass a Variable, the same one at every call, for one that needs gradients)"
        )

    def write(self, v: Variable, what: str, value: Any) -> None:
        """An assignment to ``v.d`` or ``v.g`` by the step's code: clearing a gradient (None, or
        0 as nnabla's ``x.g = 0``) is replayed in its place; any other value was computed by
        Python code, which a replay does not run, so the trace refuses it."""
        if what == "need_grad":  # replayed in its place (a GAN step freezing a network)
            self.events.append(("state", next(_seq), v, value, "need_grad", v._need_grad))
            return
        clears = value is None or (
            isinstance(value, (int, float, np.generic))
            and not isinstance(value, bool)
            and value == 0
        )
        if what == "g" and clears:
            self.events.append(("state", next(_seq), v, value, "g"))
            return
        raise NotImplementedError(
            f"gradhub.compile: the step assigns .{what} of the Variable {_named(v)}; a "
            "compiled step replays its graph, not its Python code, so later calls would not "
            "make this assignment. Make it outside the compiled step (return the gradients and "
            "update the parameters after the call, e.g. optimizer.update(grads)); inside, .g "
            "may only be cleared (cleargrad(), .g = None or .g = 0), and data comes in as "
            "arguments"
        )

    def backward(self, y: Variable, grad: Any, options: dict[str, Any]) -> None:
        if options["create_graph"]:
            raise NotImplementedError(
                "gradhub.compile: backward(create_graph=True) inside a compiled step is not "
                "supported (the .g it sets would not follow later calls); use "
                "grad(outputs, inputs, create_graph=True) and return or use its results"
            )
        if options["retain_grad"]:
            self._retained([y])
        self.events.append(("backward", next(_seq), y, grad, options, None))

    def grad(
        self,
        outputs: list[Variable],
        inputs: list[Variable],
        grad_outputs: Any,
        options: dict[str, Any],
        results: list[Variable | None],
    ) -> None:
        if options["create_graph"]:
            if options["set_grad"] or options["retain_grad"]:
                raise NotImplementedError(
                    "gradhub.compile: grad(..., create_graph=True) with set_grad or retain_grad "
                    "inside a compiled step is not supported (the .g it sets would not follow "
                    "later calls)"
                )
            return  # recorded in the graph: replayed by the forward schedule
        if options["retain_grad"]:
            self._retained(outputs)
        self.events.append(("grad", next(_seq), (outputs, inputs), grad_outputs, options, results))

    def read(self, v: Variable, how: str) -> None:
        """A value taken as a Python object by the step's code (``if x:``, ``x.item()``): what
        the code does with it is not replayed (the branch taken now would be taken at every
        call), so the trace refuses it."""
        raise NotImplementedError(
            f"gradhub.compile: the step takes the value of the Variable {_named(v)} with {how}; "
            "a compiled step replays its graph, not its Python code, so what the step does with "
            "the value now (a branch, a number kept) would be done at every later call whatever "
            "the values. Select with F.where inside the step, or read the value from the "
            "step's results after the call"
        )


def _about_read_only(e: Exception) -> bool:
    """Whether ``e`` is numpy's refusal to write into a read-only array (``assignment
    destination is read-only``, ``output array is read-only``, ``... must be ... writable``)."""
    text = str(e)
    return isinstance(e, ValueError) and ("read-only" in text or "writable" in text)


def _named(v: Variable) -> str:
    """How an error names the Variable ``v``."""
    return f"{v.name!r}" if v.name else f"of shape {v.shape} and dtype {v.dtype}"


def _is_plain(ev: tuple[Any, ...]) -> bool:
    """Whether a recorded ``grad`` event is a first-order walk whose results are the gradients
    alone (no seeds or gradients given, nothing set, default scale and callbacks): replayed by
    :func:`_plain_grad`."""
    if ev[0] != "grad" or ev[3] is not None:
        return False
    o = ev[4]
    return (
        o["grad_inputs"] is None
        and not o["create_graph"]
        and not o["set_grad"]
        and not o["retain_grad"]
        and o["loss_scale"] is None
        and o["unreachable"] in ("zero", "none")
        and o["communicator_callbacks"] is None
    )


def _plain_grad(
    outputs: list[Variable],
    inputs: list[Variable],
    options: dict[str, Any],
    results: list[Variable | None],
) -> None:
    """``grad(outputs, inputs, create_graph=False, ...)`` of a plain event (see
    :func:`_is_plain`), its gradient arrays written into the step's result Variables: the same
    seeds, walk and arrays as :func:`gradhub.engine.grad` (which the trace checked), without its
    argument checks and its result Variables."""
    seeds: list[Variable | None] = [_seed(y, None, None, "grad") for y in outputs]
    grads = _run(outputs, seeds, inputs, False, False, options["retain_graph"], None)
    _write_results(grads, inputs, options, results)


def _write_results(
    grads: _Grads, inputs: list[Variable], options: dict[str, Any], results: list[Variable | None]
) -> None:
    """A plain walk's gradient arrays written into the step's result Variables (zeros for an
    unreachable input where ``unreachable="zero"``)."""
    zero = options["unreachable"] == "zero"
    for x, old in zip(inputs, results):
        if old is None:
            continue
        # (an input needing no gradient has none)
        a = grads.at(x) if x._need_grad else None
        if a is None:
            if not zero:
                continue
            a = _zeros(x.device, x.shape, x.dtype)
        old._data = a


def _backward_walk(y: Variable, grad: Any, options: dict[str, Any]) -> list[tuple[Variable, Any]]:
    """The walk of a recorded ``backward(grad, **options)`` of a compiled step (first order, no
    ``retain_grad``, no callbacks): the same seed and walk as :func:`gradhub.engine.backward`,
    without setting ``.g``; returns (leaf needing a gradient, its gradient array)."""
    seed = _seed(y, grad, options["loss_scale"], "backward: grad")
    grads = _run([y], [seed], None, False, False, options["retain_graph"], None)
    return [(leaf, a) for leaf, a in grads.leaves.values() if leaf._need_grad]


def _arg_leaves(args: Sequence[Any], leaves: list[Any]) -> Any:
    """The structure of a compiled step's positional arguments (hashable, in :func:`_rebuild`'s
    form), their leaves appended to ``leaves``: dicts, and tuples and lists that hold arrays,
    Variables or dicts, are taken apart at any depth, as JAX takes its pytrees apart (each array
    of a dict of arrays gets a leaf Variable); a list of numbers is one array-like leaf."""
    return _container(tuple(args), lambda a: _arg_leaf(a, leaves))


def _arg_leaf(x: Any, leaves: list[Any]) -> Any:
    if _is_container(x):
        return _container(x, lambda e: _arg_leaf(e, leaves))
    leaves.append(x)
    return _LEAF


def _container(x: Any, each: Callable[[Any], Any]) -> Any:
    """The structure of the dict, tuple or list ``x`` for :func:`_rebuild` (hashable), each
    member's by ``each`` (a lambda on a module function: a recursive closure would be a reference
    cycle, which keeps what it holds until the garbage collector runs)."""
    if isinstance(x, dict):
        return (dict, type(x), tuple(x), tuple(each(v) for v in x.values()))
    return (list, type(x), None, tuple(each(e) for e in x))


def _signature(a: Any) -> tuple[Any, ...]:
    """What a compiled step's trace depends on in an argument: a Variable's identity, shape and
    dtype; an array's (or a list's of numbers) shape and dtype; the value of a number, a string
    or a tuple of them (floats by their bits: 0.0 and -0.0 are two traces); any other object
    itself (held by the trace's key, so that its id is not reused by another object)."""
    if isinstance(a, Variable):
        d = a._data
        return ("Variable", id(a), type(d), d.shape, d.dtype)
    if hasattr(a, "shape") and hasattr(a, "dtype"):
        return ("array", type(a), tuple(a.shape), a.dtype)
    if isinstance(a, tuple) and _plain_scalars(a):  # (a shape, axes, pads: constants)
        return ("value", tuple, _value_key(a))
    if isinstance(a, (list, tuple)):
        return ("array", type(a), np.shape(a), np.asarray(a).dtype)
    if type(a) in _SCALARS:
        return ("value", type(a), _value_key(a))
    return ("object", _Same(a))


#: the Python types whose values (not identities) pick a trace
_SCALARS = (int, float, bool, complex, str, bytes, type(None))


def _plain_scalars(t: tuple[Any, ...]) -> bool:
    """Whether the tuple ``t`` holds only Python numbers, strings and None (at any depth)."""
    return all(type(e) in _SCALARS or (type(e) is tuple and _plain_scalars(e)) for e in t)


def _value_key(a: Any) -> Any:
    """``a`` (a Python scalar or a tuple of them) as a key that tells apart what the step could:
    floats by their bits (``-0.0`` is not ``0.0``; every NaN of one pattern is one key)."""
    if type(a) is float:
        return (float, a.hex())
    if type(a) is complex:
        return (complex, a.real.hex(), a.imag.hex())
    if type(a) is tuple:
        return tuple(_value_key(e) for e in a)
    return (type(a), a)


class _Same:
    """An object argument in a trace's key: equal to the same object only, and holding it."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return type(other) is _Same and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


def _flatten(result: Any) -> tuple[list[Any], Any]:
    """A step's result as a flat list of its Variables and the structure to rebuild it: tuples
    (named ones too), lists and dicts nested at any depth, holding Variables and constants
    (None, strings, other objects). A number or an array (``float(loss.d)``, ``loss.d``) would
    be this call's value at every replay: refused (``NotImplementedError``)."""
    flat: list[Any] = []
    return flat, _spec(result, flat)


def _spec(x: Any, flat: list[Any]) -> Any:
    """The structure of ``x`` for :func:`_rebuild`, its Variables appended to ``flat``."""
    if isinstance(x, Variable):
        flat.append(x)
        return _LEAF
    if isinstance(x, (dict, tuple, list)):
        return _container(x, lambda v: _spec(v, flat))
    if isinstance(x, (bool, int, float, complex, np.generic)) or (
        hasattr(x, "shape") and hasattr(x, "dtype")
    ):
        raise NotImplementedError(
            f"gradhub.compile: the step returns a {type(x).__name__}; a compiled step replays "
            "its graph, not its Python code, so a number or an array among its results would "
            "be this call's value at every later call. Return the Variable (loss, not loss.d "
            "or float(loss.d)) and read its value after the call"
        )
    return (None, x)  # a constant: returned as it is


#: the structure of a Variable in a step's result (see _flatten)
_LEAF = ("leaf",)


def _rebuild(flat: list[Any], kind: Any) -> Any:
    """A step's result from its flat list and structure (the inverse of :func:`_flatten`)."""
    return _built(kind, iter(flat))


def _built(sp: Any, it: Any) -> Any:
    if sp is _LEAF:
        return next(it)
    if sp[0] is None:
        return sp[1]
    _, typ, keys, parts = sp
    items = [_built(p, it) for p in parts]
    if keys is not None:
        out = dict(zip(keys, items))
        return out if typ is dict else typ(out)
    if typ is list or typ is tuple:
        return typ(items)
    if hasattr(typ, "_fields"):  # a named tuple
        return typ(*items)
    return typ(items)


def _made_by(v: Variable, events: list[tuple[Any, ...]]) -> bool:
    """Whether ``v`` is a result of one of the traced first-order ``grad`` calls."""
    return any(ev[0] == "grad" and any(r is v for r in ev[5]) for ev in events)


_RELEASED: dict[Any, np.ndarray] = {}


def _released(dtype: Any) -> np.ndarray:
    """An empty read-only array of ``dtype``: the data of a released trace Variable."""
    a = _RELEASED.get(dtype)
    if a is None:
        a = _RELEASED[dtype] = np.empty(0, dtype)
        a.flags.writeable = False
    return a


#: what a trace's replay returns when its plan no longer holds (a step may return None)
_STALE = object()


def _setting(read: Callable[[], Any]) -> Any:
    """A global setting's value by ``read()``; the exception's type where it raises (a name
    never set: chainer's AttributeError), so that a guard compares it all the same."""
    try:
        return read()
    except Exception as e:
        return type(e)


class _GradOf:
    """In a compiled step's results: the gradient Variable of ``owner`` as it is after the call
    (``owner.grad_var``), for a result that was one when the step was traced."""

    __slots__ = ("owner",)

    def __init__(self, owner: Variable) -> None:
        self.owner = owner


def _graph_free(v: Any) -> Any:
    return v._detached_copy(v._data) if isinstance(v, Variable) else v


class _Traced:
    """One trace of a compiled step: its plan, its first-order walks, its outputs."""

    def __init__(
        self,
        inputs: list[tuple[int, Variable]],
        trace: _Trace,
        flat: list[Any],
        kind: Any,
        start: int,
    ) -> None:
        self.inputs = inputs
        self.events = trace.events
        #: per event: a first-order grad whose results are the gradient arrays alone
        self.plain = [_is_plain(ev) for ev in self.events]
        self.flat = flat
        self.kind = kind
        #: runs as a plan so far; the recorded device graph (see gradhub.capture) and how
        #: often it was recorded, or why it cannot be
        self.runs = 0
        self.captured: _capture.CapturedStep | None = None
        self.captures = 0
        self.capture_refused: str | None = None
        #: per ``backward()`` of the recorded run: (leaf, the gradient array a launch writes)
        self.walks: list[list[tuple[Variable, Any]]] = []
        #: (program, its generated walk) of a step run by :meth:`_direct`, once prepared after
        #: a run as a plan (where the step is one plain walk between two generated segments)
        self.direct: tuple[_Program, Any] | None = None
        ys: list[Variable] = []
        for v in flat:
            if isinstance(v, Variable) and v._creator is not None:
                ys.append(v)
        calls = [ev for ev in self.events if ev[0] != "state"]  # (backward and grad calls)
        for ev in calls:
            if ev[0] == "backward":
                ys.append(ev[2])
            else:
                ys += ev[2][0]
            extra = ev[3]
            for g in extra if isinstance(extra, (list, tuple)) else [extra]:
                if isinstance(g, Variable) and g._creator is not None:
                    ys.append(g)
        ys += [v for v in trace.kept if v._creator is not None]  # (collectives: see keep)
        unique = list({id(v): v for v in ys}.values())
        # the walks that free no rule: plain grads, and backward() calls the plan's generated
        # walk runs (not retain_grad, no communicator callbacks: those take the engine's walk)
        kept = all(
            self.plain[k]
            or ev[0] == "state"
            or (
                ev[0] == "backward"
                and not ev[4]["retain_grad"]
                and ev[4]["communicator_callbacks"] is None
            )
            for k, ev in enumerate(self.events)
        )
        self.plan = Plan(
            unique, [ev[1] for ev in self.events], private=True, rules_kept=kept and _codegen
        )
        # a leaf needing a gradient that the step's code made, and a walk accumulated into: a
        # replay would sum every call's gradient into it, where the code (not replayed) may make
        # a new one at each call (a parameter of the table was made once, at the first call)
        leaves = {id(v) for v in self.plan.leaves}
        made_here = [v for r in trace.made_leaves if (v := r()) is not None and id(v) in leaves]
        params = {id(p) for p in _parameters.parameter_table().values()} if made_here else set()
        for v in made_here:
            if v._grad is not None and id(v) not in params:
                raise NotImplementedError(
                    f"gradhub.compile: the step makes the Variable {_named(v)}, which needs a "
                    "gradient, and a walk accumulates into its .g; a compiled step replays its "
                    "graph, not its code, so that one Variable would sum the gradients of every "
                    "call. Make it outside the step (the same one at every call: clear its "
                    ".g when you need to), or take its gradient with gh.grad(...) inside"
                )
        for node in self.plan.nodes:
            if node.seq < start:
                # a Variable computed before the step (a closure's): a replay would compute it
                # again from its inputs' values at that call, which the step's code does not
                raise NotImplementedError(
                    f"gradhub.compile: the step uses a Variable computed before it was called "
                    f"(by {node.fdef.snake}(), of shape {node.out_shapes[0]}); a compiled step "
                    "replays its graph, which would compute that Variable again at every call "
                    "from its inputs' values then, where the step's code uses the value it "
                    "has. Compute it inside the step, or pass its .detach() (a constant) or "
                    "its array as an argument"
                )
        # the leaves' need_grad when the step began (before its own need_grad events): a call
        # that begins with others traces again (the plan's nodes were recorded with these)
        began: dict[int, bool] = {}
        for ev in self.events:
            if ev[0] == "state" and ev[4] == "need_grad":
                began.setdefault(id(ev[2]), ev[5])
        self.leaf_need = [(v, began.get(id(v), v._need_grad)) for v in self.plan.leaves]
        self.guards = trace.guards
        if trace.parameters:  # (the table as the trace leaves it: parameters it made included)
            self.guards.append((_parameters.table_state, _parameters.table_state()))
        self.need_generation = _variable.need_grad_generation
        compiled = self.plan.compiled
        self.direct_ok = (
            len(self.events) == 1 and self.plain[0] and compiled is not None and len(compiled) == 2
        )
        for ev in calls:
            first = ev[2] if ev[0] == "backward" else ev[2][0][0]
            _PLANS[id(first)] = self.plan
        # the trace's own Variables whose arrays nothing reads between calls (the results
        # handed out share them): released after each call, so that a step's results do not
        # stay allocated while the next step computes its own
        # (and a leaf's gradient Variable: grad(..., set_grad=True) makes its results the .g)
        leaves.update(id(v._grad) for v in self.plan.leaves if v._grad is not None)
        made = list(ys) + list(flat)
        for ev in self.events:
            if ev[0] == "grad":
                made += ev[5]
        self.releasable = [
            v
            for v in {id(v): v for v in made if isinstance(v, Variable)}.values()
            if type(v._data) is _ndarray
            and id(v) not in leaves
            and (v._creator.seq > start if v._creator is not None else _made_by(v, self.events))
        ]
        # a result that is the gradient Variable of a leaf or of a graph Variable (w.grad_var,
        # h.grad_var after backward(retain_grad=True)): a replay's walk sets a new one, so the
        # result is that Variable's gradient as it is after each call
        owners = self._grad_owners(trace)
        if any(isinstance(v, Variable) and id(v) in owners for v in flat):
            self.flat = [
                _GradOf(owners[id(v)]) if isinstance(v, Variable) and id(v) in owners else v
                for v in flat
            ]
            self.capture_refused = (
                "the step returns a gradient Variable (.grad_var), which each call sets anew"
            )

    def _grad_owners(self, trace: _Trace) -> dict[int, Variable]:
        """The Variables that hold a gradient Variable the traced walks set, by the id of that
        gradient Variable: the plan's leaves (their ``.g`` now), and graph Variables that a walk
        with ``retain_grad`` reached (their ``.g`` then, if it is still theirs)."""
        owners: dict[int, Variable] = {}
        for g, v in trace.retained.values():
            if v._grad is g:
                owners[id(g)] = v
        for v in self.plan.leaves:
            if v._grad is not None:
                owners[id(v._grad)] = v
        return owners

    def release(self) -> None:
        """Let go of the arrays of the trace's Variables that nothing reads until the next
        call computes them again."""
        for v in self.releasable:
            v._data = _released(v._data.dtype)

    def run(self, checked: bool = False, walks: list[Any] | None = None) -> None:
        """One run of the plan and of the step's first-order walks, the leaves as they are
        (``checked``: the plan's checks passed just before). With ``walks`` (a recorded run),
        each ``backward()`` walks without touching ``.g``: its leaves' gradient arrays are
        appended to ``walks`` (see :func:`_backward_walk`), for :meth:`set_grads`."""
        plan = self.plan
        plan.values = [None] * plan.n_values
        plan.checked = checked
        try:
            for k, ev in enumerate(self.events):
                plan.run_segment(k)
                if ev[0] == "state":  # a gradient cleared, need_grad set (see _Trace.write)
                    setattr(ev[2], ev[4], ev[3])
                    continue
                if ev[0] == "backward":
                    if walks is None:
                        _backward(ev[2], ev[3], **ev[4])
                    else:
                        walks.append(_backward_walk(ev[2], ev[3], ev[4]))
                    continue
                outputs, inputs = ev[2]
                if self.plain[k] and not _modes.state.tracing:
                    _plain_grad(outputs, inputs, ev[4], ev[5])
                    continue
                new = _grad(outputs, inputs, ev[3], **ev[4])
                for old, g in zip(ev[5], new):
                    if old is not None and g is not None:
                        old._data = g._data
            plan.run_segment(len(self.events))
        finally:
            plan.values = []
            plan.checked = False

    def _prepare_direct(self) -> None:
        """After the first run as a plan: the generated functions that :meth:`_direct` calls,
        where the step is one plain ``grad`` walk (with the forward before it and the segment
        after it) on numpy arrays, all of it generated code."""
        self.direct = None
        plan = self.plan
        if not _enabled:
            return
        outputs, inputs = self.events[0][2]
        if any(type(y._data) is not _ndarray for y in outputs):
            return
        prog = plan.programs.get(_program_key(outputs, inputs, [False] * len(outputs)))
        if prog is None:
            return
        fn = prog.compiled.get(self.events[0][4]["retain_graph"])
        if fn:
            self.direct = (prog, fn)

    def _direct(self) -> bool:
        """:meth:`run` of a step of one plain walk (see :meth:`_prepare_direct`), its generated
        functions called in a row under one ``set_recording(False)``: the same kernels, rules and
        arrays as :meth:`run` (which goes through the engine's ``grad`` path: seeds as
        Variables, the plan's lookup and checks, one recording switch per segment and walk).
        False, having changed nothing that the next run does not set again, where it does not
        apply (not prepared, ``need_grad`` changed since the walk was made) or something raised
        (:meth:`run` then runs the step and raises its error)."""
        d = self.direct
        if d is None or not _enabled or _modes.state.tracing:
            return False  # (plans off: the engine walks; inside a trace: grad() records)
        prog, fn = d
        ev = self.events[0]
        outputs, inputs = ev[2]
        if (
            prog.generation != _variable.need_grad_generation
            or prog.links != _graph.links_generation
        ) and not prog.holds(outputs, inputs):
            self.direct = None
            return False
        plan = self.plan
        compiled = plan.compiled
        assert compiled is not None
        (lo0, hi0), (lo1, hi1) = plan.segments
        vals = [None] * plan.n_values
        try:
            with set_recording(False):
                if lo0 != hi0:
                    compiled[0](plan.leaves, vals)
                grads = _Grads(True)
                fn(grads, [_cpu_ones(y._data) for y in outputs])
                _write_results(grads, inputs, ev[4], ev[5])
                if lo1 != hi1:
                    compiled[1](plan.leaves, vals)
        except Exception:
            return False
        return True

    def recorded_run(self) -> None:
        """The run a device records: :meth:`run` with the ``backward()`` walks' gradients kept
        in :attr:`walks` (on a device graph: the recording's own arrays, which each launch
        writes again) instead of set on ``.g``."""
        walks: list[list[tuple[Variable, Any]]] = []
        self.run(False, walks)
        if not self.walks:  # (the recording pass: a launch writes into these arrays)
            self.walks = walks

    def set_grads(self) -> None:
        """After a launch of the recorded step: each ``backward()`` of the step, in order, sets
        its leaves' ``.g`` from the gradients the launch wrote, as ``backward()`` does (a new
        array: a copy where ``.g`` was None, ``.g + gradient`` where it was not; the same error
        for a ``.g`` of another shape, every ``.g`` of that walk left as it was), so that no
        ``.g`` handed out is an array that the next launch writes into."""
        for walk in self.walks:
            changed: list[tuple[Variable, Variable | None]] = []
            for leaf, a in walk:
                prev = leaf._grad
                if prev is None:
                    leaf._grad = Variable._new(_copy_array(a), False, None, 0)
                elif prev._data.shape != a.shape:
                    for done, before in changed:
                        done._grad = before
                    raise _stale_grad_error(leaf, prev, Variable._new(a, False, None, 0))
                else:
                    leaf._grad = Variable._new(_add_arrays(prev._data, a), False, None, 0)
                changed.append((leaf, prev))

    def replay(self, args: Sequence[Any]) -> Any:
        """Run the trace on new arguments and return the step's results; :data:`_STALE` when
        the plan no longer holds (nothing was run)."""
        for read, value in self.guards:  # global settings the trace read (chainer.config.train)
            if _setting(read) != value:
                return _STALE
        if self.need_generation != _variable.need_grad_generation:  # some need_grad was set
            for v, flag in self.leaf_need:
                if v._need_grad is not flag:
                    return _STALE
            self.need_generation = _variable.need_grad_generation
        captured = self.captured
        if captured is not None:
            out = captured.replay(args)
            if out is not None:
                if self.walks:
                    self.set_grads()
                return _rebuild(out, self.kind)
            self.captured = None  # run as a plan below (recorded again at the next call)
            self.runs = 0
        plan = self.plan
        for i, v in self.inputs:
            a = args[i]
            v._data = a if type(a) is type(v._data) else _to_array(a)
        if not plan.valid():
            return _STALE
        if self.runs and self.capture_refused is None and _capture.enabled():
            out = self._capture()
            if out is not _STALE:
                return out
        if not self._direct():
            self.run(True)
            self.runs += 1
            if self.direct is None and self.direct_ok:
                self._prepare_direct()
        out = self.result()
        self.release()
        return out

    def _capture(self) -> Any:
        """Record the step on its device, launch it and return the step's results;
        :data:`_STALE` where it cannot be recorded (the reason kept in ``capture_refused``) or
        its first launch's deferred check failed (nothing was run)."""
        for ev in self.events:
            if ev[0] == "state":
                self.capture_refused = (
                    "the step clears a gradient (.g) or sets need_grad, which the host does "
                    "between its walks"
                )
                return _STALE
            if ev[0] == "backward" and (
                ev[4]["retain_grad"] or ev[4]["communicator_callbacks"] is not None
            ):
                what = "retain_grad=True" if ev[4]["retain_grad"] else "communicator_callbacks"
                self.capture_refused = (
                    f"the step calls backward({what}), which runs host code or sets .g of "
                    "intermediate Variables during the walk"
                )
                return _STALE
        plan = self.plan
        self.walks = []
        cap = _try_record(
            self,
            lambda: _capture.CapturedStep(
                plan.nodes, self.inputs, plan.leaves, self.flat, self.recorded_run, plan.valid
            ),
        )
        if cap is None:
            self.walks = []
            return _STALE
        if not cap.ok:  # a deferred check failed: the plan's run raises its error
            return _STALE
        self.captured = cap
        out = _rebuild(cap.result(), self.kind)
        self.set_grads()
        return out

    def result(self) -> Any:
        return _rebuild(
            [_graph_free(v.owner._grad if type(v) is _GradOf else v) for v in self.flat],
            self.kind,
        )


class Compiled:
    """A step function traced once into a plan and replayed (see :func:`compile`)."""

    def __init__(self, step: Any, max_traces: int = 8) -> None:
        self.step = step
        self.max_traces = max_traces
        self.traces: dict[tuple[Any, ...], _Traced] = {}
        #: earlier traces of a signature whose guards stopped holding (another parameter scope,
        #: ``chainer.config.train`` switched): tried, newest first, before tracing again, so a
        #: step called under settings that alternate replays a trace of each
        self.earlier: dict[tuple[Any, ...], list[_Traced]] = {}
        self.max_earlier = 3
        self._lock = threading.RLock()
        self.__wrapped__ = step
        self.__doc__ = getattr(step, "__doc__", None)

    @property
    def capture_refused(self) -> str | None:
        """Why the step traced last is not replayed as a device graph (see
        :mod:`gradhub.capture`); None when it is, or has not been tried yet (at its third call).

        Example::

            >>> import numpy as np, gradhub as gh, gradhub.functions as F
            >>> step = gh.compile(lambda x: F.sum(F.sin(x)))
            >>> for _ in range(3):
            ...     _ = step(np.ones(3))
            >>> step.capture_refused
            "device 'cpu' cannot record its work into a graph (it runs each kernel as it is called)"
        """
        if not self.traces:
            return None
        return list(self.traces.values())[-1].capture_refused

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _modes.state.tracing:
            # called by a step that another compiled step is tracing: run as its code, so that
            # the outer trace records its functions (a replay's results would be constants of it)
            return self.step(*args, **kwargs)
        # the arguments' arrays, Variables and values, out of the dicts, tuples and lists that
        # hold them (see _arg_leaves): replays take the leaves, each by its position; keyword
        # arguments are one more dict (by name, in the order given)
        leaves: list[Any] = []
        shape = _arg_leaves(args, leaves)
        if kwargs:  # (a dict at the top: positional arguments alone are a tuple)
            shape = (dict, dict, ("args", "kwargs"), (shape, _arg_leaf(kwargs, leaves)))
        sig = (shape, *map(_signature, leaves))
        # one call at a time: a trace's Variables (its inputs, the values it holds between
        # calls) are shared by every call of the step, also from other threads
        with self._lock:
            t = self.traces.get(sig)
            if t is not None and _enabled:
                out = t.replay(leaves)
                if out is not _STALE:
                    return out
                earlier = self.earlier.get(sig)
                if earlier:
                    for i, e in enumerate(earlier):
                        out = e.replay(leaves)
                        if out is not _STALE:  # (this one is the current trace from now on)
                            del earlier[i]
                            earlier.insert(0, t)
                            self.traces[sig] = e
                            return out
            return self._trace(sig, leaves, shape)

    def _trace(self, sig: tuple[Any, ...], args: Sequence[Any], shape: Any) -> Any:
        inputs: list[tuple[int, Variable]] = []
        call_leaves: list[Any] = []
        for i, (a, kind) in enumerate(zip(args, sig[1:])):
            if kind[0] == "array":
                v = Variable._new(_to_array(a), False, None, 0)
                inputs.append((i, v))
                call_leaves.append(v)
            else:
                call_leaves.append(a)
        call_args = _built(shape, iter(call_leaves))
        call_kwargs: dict[str, Any] = {}
        if type(call_args) is dict:  # keyword arguments too (see __call__)
            call_args, call_kwargs = call_args["args"], call_args["kwargs"]
        trace = _Trace([v for _, v in inputs])
        start = next(_seq)
        watching = _variable.set_observer(trace)
        tracing = _modes.set_tracing(True)
        try:
            result = self.step(*call_args, **call_kwargs)
        except ValueError as e:
            refused = trace.refusal(e)
            if refused is None:
                raise
            raise refused from e
        finally:
            _modes.set_tracing(tracing)
            _variable.set_observer(watching)
            trace.thaw()
        flat, kind = _flatten(result)
        out = [_graph_free(v) for v in flat]
        if _enabled:
            stale = self.traces.pop(sig, None)
            if stale is not None:
                earlier = self.earlier.setdefault(sig, [])
                earlier.insert(0, stale)
                del earlier[self.max_earlier :]
            elif len(self.traces) >= self.max_traces:
                self.earlier.pop(oldest := next(iter(self.traces)), None)
                self.traces.pop(oldest)
            traced = self.traces[sig] = _Traced(inputs, trace, flat, kind, start)
            traced.release()
        return _rebuild(out, kind)


def compile(step: Any) -> Compiled:
    """``step`` traced once and replayed as a plan: define-by-run code whose graph does not
    change between calls, run without building the graph again.

    The first call runs ``step(*args)`` as it is (eagerly), recording its graph and its
    first-order ``grad(..., create_graph=False)`` and ``backward()`` calls; later calls with
    arguments of the same shapes and dtypes (and the same Variable objects) run the plan of
    that graph: the same kernels and backward rules in the same order, so the results are those
    of ``step`` bit for bit. Arguments (keyword ones too) that are arrays become leaves needing
    no gradient (also inside dicts, tuples and lists, taken apart as JAX's pytrees); pass
    Variables (the same ones at every call) for what ``step`` differentiates. A call with new
    shapes or dtypes traces again (up to 8 signatures are kept). A call whose trace no longer
    holds (another parameter scope, a global setting or a ``need_grad`` changed) replays one of
    the signature's three earlier traces that holds again, or traces again. Results are new
    Variables holding the values (not connected to a graph; differentiate inside ``step``),
    nested in tuples, lists and dicts as ``step`` returned them.

    Not replayed: Python control flow on values read through ``.d`` (the branch taken when
    tracing is replayed), side effects (printing, appending to lists). Arrays created inside
    ``step`` are constants of the trace; functions run under ``no_grad()`` are not (they are
    recorded while tracing, their results needing no gradient). Refused when tracing
    (``NotImplementedError``): assigning a Variable's ``.d`` (a parameter update: make it
    outside the step, with the gradients the step returns) or its ``.g`` to an array, taking a
    Variable's value with ``bool()`` (``if loss:``) or ``.item()``, a number or an array
    among the results, ``backward(create_graph=True)``. Clearing gradients before
    ``backward()`` (``cleargrad()``, ``.g = None``, ``.g = 0``) is replayed.

    .. math:: \text{compile}(f)(x) = f(x) \\quad \text{for every } x \text{ of the traced shapes}

    Example::

        >>> import numpy as np
        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> w = gh.Variable(np.array([0.5, -1.0]))
        >>> @gh.compile
        ... def step(x):
        ...     loss = F.sum(F.sin(x * w))
        ...     (g,) = gh.grad([loss], [w], create_graph=False)
        ...     return loss, g
        >>> loss, g = step(np.array([1.0, 2.0]))
        >>> loss2, g2 = step(np.array([1.0, 2.0]))   # the plan
        >>> bool(np.array_equal(g.d, g2.d)), g2.d.round(4).tolist()
        (True, [0.8776, -0.8323])
    """
    if not callable(step):
        raise TypeError(f"gradhub.compile: step must be callable, got {type(step).__name__}")
    return Compiled(step)


# the engine looks plans up in this table and runs forward() through them (see "Layers" in
# docs/design.md)
bind_plans(_PLANS, forward)
