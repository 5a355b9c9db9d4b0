"""Recorded static graphs: nnabla's loop ``x.d = batch; loss.forward(); loss.backward()`` and
mxnet's bound executors (``forward()``, ``backward()``) replayed as device graphs.

A graph run again and again with ``forward()`` runs as a plan (:mod:`gradhub.plan`; a front-end
runs the plan it made with :func:`gradhub.plan.record` by :meth:`gradhub.plan.Plan.run_static`, as
mxnet's executors do); on a device that records its work (``cuda``: CUDA graphs) the plan's
forward schedule is recorded at its third run and each later run replays it with one launch;
each first-order walk on its outputs, ``backward()`` (nnabla's ``backward(clear_buffer=True)``;
with ``retain_graph``; with ``retain_grad``: nnabla's ``clear_buffer=False``) and ``grad(outputs,
inputs, create_graph=False)`` (mxnet's ``Executor.backward``), is recorded at its third call
after that and replayed likewise. A replay computes what the plan computes, with the same kernels in
the same order; what differs is where the arrays live:

* **Leaves.** The forward graph reads the leaves' arrays it was recorded with. A leaf whose
  ``.d`` was replaced since (nnabla's ``x.d = batch`` gives a new array; a solver's update a view
  of the updated one) by an array of the same type, shape, dtype and device is copied into the
  recorded array, which becomes its ``.d`` again; anything else runs the plan (which plans again).
* **Outputs.** Every output Variable still referenced gets a copy of its recorded array after a
  forward replay (a new array per ``forward()``, as the plan gives: a value kept from one step is
  not changed by the next). The arrays the backward rules keep are the recorded ones.
* **Backward.** The recorded walk reads the arrays the recorded forward kept; it is replayed only
  when every node of it still holds those (its rule too: a ``clear_buffer`` pass frees them, a
  forward replay puts them back) and no leaf was replaced since the forward, else the plan's walk
  runs (and raises what it raises). The incoming gradient is copied into the recorded one. The
  leaves' gradients are handed to ``backward()`` as views of the recorded arrays, so that
  ``backward()`` copies them into ``.g`` (where ``.g`` was None) or adds them to it (a new array):
  no ``.g`` is an array that the next replay writes into. ``grad()`` gets copies of them (its
  results are new arrays, as the plan's walk gives). A ``retain_grad`` walk sets the ``.g`` of
  the intermediate Variables that the recording pass set, each to a copy of its recorded
  gradient.
* **Python state.** What the recorded run left on the graph's nodes (the arrays their rules keep,
  their rules, freed after a ``retain_graph=False`` walk) is put back after each replay.

A graph is not recorded, and runs as a plan, where :func:`gradhub.capture.step_device` refuses
it (functions or leaves on several devices or on the CPU, random functions) or the device
refuses the run; a plan is recorded at most :data:`gradhub.capture.MAX_CAPTURES` times.
``gradhub.capture.set_enabled(False)`` (or ``GRADHUB_GRAPH_CAPTURE=0``) stops new recordings
(a recording made already keeps being replayed, as a compiled step's).

Example (the CPU records nothing: its static graphs stay plans, and say why)::

    >>> import numpy as np
    >>> import gradhub as gh
    >>> import gradhub.functions as F
    >>> x = gh.Variable(np.array([1.0, 2.0]))
    >>> y = F.sum(x * x)
    >>> for _ in range(3):
    ...     y.forward()
    >>> gh.plan.plan_of(y).capture_refused
    "device 'cpu' cannot record its work into a graph (it runs each kernel as it is called)"
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from . import capture as _capture
from .device import DeviceGraph
from .engine import _copy_array, _Grads
from .variable import Variable


def _intermediates(prog: Any) -> list[Variable]:
    """The Variables a walk of ``prog`` may give a ``.g`` with ``retain_grad``: the outputs of
    its nodes and its own outputs that have a creator, those still referenced."""
    out: dict[int, Variable] = {}
    refs = [r for node in prog.slot_nodes for r in node.outputs]
    for ref in [*refs, *prog.outputs]:
        v = ref()
        if v is not None and v._creator is not None:
            out[id(v)] = v
    return list(out.values())


def _view(a: Any) -> Any:
    return a.view()


def _node_state(nodes: Sequence[Any]) -> list[tuple[Any, Any, Any, Any]]:
    return [(node, node.rule, node.saved_in, node.saved_out) for node in nodes]


def _put_back(state: Sequence[tuple[Any, Any, Any, Any]]) -> None:
    for node, rule, saved_in, saved_out in state:
        node.rule = rule
        node.saved_in = saved_in
        node.saved_out = saved_out


class RecordedForward:
    """The forward schedule of a plan (:class:`gradhub.plan.Plan`) recorded on its device.

    Construction records ``plan``'s run with the leaves' current arrays (nothing is computed
    until :meth:`launch`); raises :class:`gradhub.CaptureUnsupported` where it cannot be."""

    def __init__(self, plan: Any) -> None:
        dev = _capture.step_device(plan.nodes, plan.leaves)
        self.plan = plan
        self.leaves = [(v, v._data) for v in plan.leaves]
        self.graph: DeviceGraph = dev.capture(self._run)
        #: what the run left on the nodes whose rules keep arrays
        self.state = _node_state([step[0] for step in plan.steps if step[7]])
        #: (a weak reference to an output Variable still referenced, its recorded array)
        self.outputs: list[tuple[weakref.ref[Variable], Any]] = []
        for node in plan.nodes:
            for ref in node.outputs:
                v = ref()
                if v is not None:
                    self.outputs.append((ref, v._data))

    def _run(self) -> None:
        plan = self.plan
        plan.values = [None] * plan.n_values
        try:
            for k in range(len(plan.segments)):
                plan.run_segment(k)
        finally:
            plan.values = []

    def launch(self) -> bool:
        """Launch the recording; then put back the nodes' state and give each output still
        referenced a copy of its array. False (having set nothing) when a check deferred to the
        device failed: the plan's run raises its error."""
        if not self.graph.launch():
            return False
        _put_back(self.state)
        for ref, a in self.outputs:
            v = ref()
            if v is not None:
                v._data = _copy_array(a)
        return True

    def replay(self) -> bool:
        """Launch on the leaves' current data (copied into the recorded arrays); False, having
        launched nothing, where the recording no longer holds (the plan runs instead)."""
        for v, rec in self.leaves:
            if not _capture.copy_into(rec, v._data):
                return False
            v._data = rec
        if not self.plan.valid():
            return False
        return self.launch()


class RecordedWalk:
    """A first-order backward schedule (``gradhub.plan._Program``) recorded on its device, the
    walk ``backward()`` or ``grad()`` runs from a plan's outputs.

    ``seeds``: the incoming gradients of this call (copied into the recording's own);
    ``retain_graph`` and ``retain_grad``: the walk's. With ``retain_grad`` the walk sets the
    ``.g`` of the graph's intermediate Variables: the recording pass notes which, and after each
    launch each of them still referenced gets a copy of its recorded gradient (a new array per
    walk, as the plan's walk gives). Raises :class:`gradhub.CaptureUnsupported` where it cannot
    be recorded, the nodes' state left as it was."""

    def __init__(
        self,
        prog: Any,
        seeds: Sequence[Variable | None],
        retain_graph: bool,
        retain_grad: bool = False,
    ) -> None:
        dev = _capture.step_device(prog.nodes, [])
        self.prog = prog
        self.retain_graph = retain_graph
        self.retain_grad = retain_grad
        #: the nodes' state the recording reads (checked before each replay)
        self.before = _node_state(prog.nodes)
        #: (node, input position, leaf) of the leaf inputs: replaced since the forward, the
        #: plan's walk raises the engine's error
        self.leaf_inputs = [
            (node, i, src)
            for node in prog.nodes
            for i, (src, idx) in enumerate(zip(node.srcs, node.idxs))
            if idx < 0
        ]
        self.seeds = [
            None if s is None else Variable._new(_copy_array(s._data), False, None, 0)
            for s in seeds
        ]
        self.grads: _Grads | None = None
        # the Variables whose .g a retain_grad walk may set, with their .g before it
        watched = _intermediates(prog) if retain_grad else []
        grads_before = [(v, v._grad) for v in watched]
        try:
            self.graph: DeviceGraph = dev.capture(self._run)
        except BaseException:
            _put_back(self.before)  # (a retain_graph=False pass freed them)
            for v, g in grads_before:
                v._grad = g
            raise
        self.after = _node_state(prog.nodes)
        #: (a weak reference to a Variable, its recorded gradient): the .g the walk set
        self.retained: list[tuple[weakref.ref[Variable], Any]] = [
            (weakref.ref(v), v._grad._data)
            for v, g in grads_before
            if v._grad is not g and v._grad is not None
        ]

    def _run(self) -> None:
        _put_back(self.before)  # (the state it is recorded from: a replay reads no Python)
        grads = self.prog.run(self.seeds, self.retain_grad, self.retain_graph)
        if self.grads is None:  # (the recording pass: a graph writes into these arrays)
            self.grads = grads

    def holds(self) -> bool:
        """Whether the nodes hold what the recording reads (their rules and kept arrays, the
        leaves they kept still the leaves' data)."""
        for node, rule, saved_in, saved_out in self.before:
            if node.rule is not rule or node.saved_in is not saved_in:
                return False
            if node.saved_out is not saved_out:
                return False
        for node, i, src in self.leaf_inputs:
            si = node.saved_in
            if si is not None and si[i] is not None and si[i] is not src._data:
                return False
        return True

    def replay(self, seeds: Sequence[Variable | None], copy: bool = False) -> _Grads | None:
        """Launch on ``seeds``; the walk's gradients (views of the recorded arrays, or copies
        with ``copy``), or None, having launched nothing, where the recording no longer holds
        (the plan's walk runs)."""
        if len(seeds) != len(self.seeds) or not self.holds():
            return None
        for buf, s in zip(self.seeds, seeds):
            if (buf is None) != (s is None):
                return None
            if buf is not None and not _capture.copy_into(buf._data, s._data):  # type: ignore[union-attr]
                return None
        return self.launch(copy)

    def launch(self, copy: bool = False) -> _Grads | None:
        """Launch the recording and put back the nodes' state it leaves; the gradients as views
        of the recorded arrays, or with ``copy`` as new arrays (what ``grad()`` returns: the
        next launch writes into the recorded ones); None when a check deferred to the device
        failed."""
        if not self.graph.launch():
            _put_back(self.before)  # (the recording pass freed what a retain_graph=False walk
            return None  # frees: the plan's walk needs it)
        _put_back(self.after)
        for ref, a in self.retained:
            v = ref()
            if v is not None:
                v._grad = Variable._new(_copy_array(a), False, None, 0)
        rec = self.grads
        assert rec is not None
        give = _copy_array if copy else _view
        out = _Grads(True)
        for key, (leaf, a) in rec.leaves.items():
            out.leaves[key] = (leaf, give(a))
        for node, lst in rec.nodes.items():
            out.nodes[node] = [None if a is None else give(a) for a in lst]
        return out
