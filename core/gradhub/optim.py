"""Two small optimizers, :class:`SGD` and :class:`Adam`, with PyTorch's update rules.

They update the ``.d`` arrays of parameter Variables in place, with the array module of each
parameter's device (so they work on every device), under :func:`gradhub.no_grad`. Gradients are
passed to :meth:`~SGD.update` (arrays or Variables, e.g. the result of :func:`gradhub.grad`) or,
when omitted, read from each parameter's ``.g``; a parameter whose gradient is None is skipped
(its state untouched). :meth:`~SGD.zero_grad` clears every parameter's ``.g`` (to None, as
:meth:`gradhub.Variable.cleargrad`) before the next ``backward``.

The updates, hyper-parameters and defaults are those of ``torch.optim.SGD`` and
``torch.optim.Adam`` (checked against them in float64 over several steps): ``SGD(params, lr)``
has no momentum unless ``momentum`` is given, ``weight_decay`` adds ``weight_decay * p`` to the
gradient (L2, as both; not AdamW's decoupled decay), ``nesterov`` is PyTorch's formula, and
``lr=0`` (a warm-up schedule's first value) and Adam's ``eps=0`` are accepted. ``lr`` may be
changed between steps (``opt.lr = ...``). ``params`` is an iterable of Variables (a list, a
tuple, a generator) or a mapping name -> Variable (``gh.get_parameters()``); one Variable or
one array is rejected, as an empty list.

float16 parameters are updated in float32 (the gradient, the weight decay, the moments or the
momentum buffer and the step), and the parameter and the optimizer state are stored back in
float16, rounded once, as PyTorch on the CPU: Adam's ``g * g`` of a gradient above 256 and
``v / (1 - beta2**t)`` would overflow float16. The state keeps the parameter's dtype, so an Adam
second moment above 65504 (a gradient above about 8100 with ``beta2=0.999``) is still ``inf``
in float16 and that entry stops moving, as in PyTorch; use float32 parameters for such gradients.

Example::

    >>> import gradhub as gh
    >>> from gradhub.optim import SGD
    >>> w = gh.Variable([1.0, -2.0])
    >>> opt = SGD([w], lr=0.1)
    >>> opt.zero_grad()
    >>> (w * w).sum().backward()
    >>> opt.update()
    >>> w.d
    array([ 0.8, -1.6], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from . import modes as _modes
from .modes import no_grad
from .variable import Variable

_F32 = np.dtype(np.float32)


def _param_list(params: Iterable[Variable] | Mapping[str, Variable], who: str) -> list[Variable]:
    # one Variable or one array is iterable (over its first axis): list() would turn it into new
    # 0-d graph nodes whose .g stays None, an optimizer that silently changes nothing
    if isinstance(params, Variable) or (hasattr(params, "shape") and hasattr(params, "dtype")):
        raise TypeError(
            f"{who}: params must be an iterable (list, tuple, dict) of Variables, not one "
            f"{type(params).__name__}; write {who}([w], ...) for a single parameter"
        )
    if isinstance(params, (str, bytes)) or not isinstance(params, (Iterable, Mapping)):
        raise TypeError(
            f"{who}: params must be an iterable (list, tuple, dict) of Variables, got "
            f"{type(params).__name__}"
        )
    ps = list(params.values()) if isinstance(params, Mapping) else list(params)
    if not ps:
        raise ValueError(f"{who}: params is empty (create the parameters before the optimizer)")
    for i, p in enumerate(ps):
        if not isinstance(p, Variable):
            raise TypeError(f"{who}: params[{i}] must be a Variable, got {type(p).__name__}")
        if p.dtype.kind != "f":
            raise TypeError(f"{who}: params[{i}] must hold floating-point data, got {p.dtype}")
    return ps


def _number(who: str, name: str, value: Any) -> float:
    """``value`` as a float, or a TypeError naming the optimizer and the argument."""
    if isinstance(value, bool):
        raise TypeError(f"{who}: {name} must be a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{who}: {name} must be a number, got {value!r}") from None


def _non_negative(who: str, name: str, value: Any) -> float:
    """``value >= 0`` as a float; negative values and NaN raise a ValueError naming ``name``."""
    v = _number(who, name, value)
    if not v >= 0:
        raise ValueError(f"{who}: {name} must be >= 0, got {value}")
    return v


def _unit(who: str, name: str, value: Any) -> float:
    """``value`` in ``[0, 1)`` as a float (momentum, betas)."""
    v = _number(who, name, value)
    if not 0 <= v < 1:
        raise ValueError(f"{who}: {name} must be in [0, 1), got {value}")
    return v


def _descend(p: Variable, step: Any) -> None:
    """``p.d -= step``, in place; a float32 step of a float16 parameter is subtracted in float32
    and the result rounded once to float16. Either way the array is assigned back to ``p.d``
    (graphs recorded before see a replaced leaf, and a compiled step's trace refuses the
    update: see :func:`gradhub.compile`)."""
    if step.dtype != p.dtype:
        d = p.d
        d[...] = d.astype(step.dtype) - step
        p.d = d
    else:
        p.d -= step


class _Optimizer:
    """Shared parts: the parameter list, gradient fetching, L2 weight decay and
    :meth:`zero_grad`."""

    weight_decay = 0.0  # set by each optimizer's constructor

    def __init__(self, params: Iterable[Variable] | Mapping[str, Variable]) -> None:
        self.params = _param_list(params, type(self).__name__)
        self.t = 0

    def zero_grad(self) -> None:
        """Clear every parameter's gradient: ``.g`` becomes None, as ``p.cleargrad()``.

        As ``torch.optim.Optimizer.zero_grad()`` (``set_to_none=True``): call it before each
        ``backward`` (which accumulates into ``.g``); a parameter that then receives no gradient
        is skipped by :meth:`update`.
        """
        for p in self.params:
            p.cleargrad()

    def _grads(self, grads: Sequence[Any] | None) -> list[Any]:
        name = type(self).__name__
        if grads is None:
            return [p.g for p in self.params]
        grads = list(grads)
        if len(grads) != len(self.params):
            raise ValueError(
                f"{name}.update: got {len(grads)} gradients for {len(self.params)} parameters"
            )
        out = []
        for i, (p, g) in enumerate(zip(self.params, grads)):
            if isinstance(g, Variable):
                g = g.d
            if g is not None and tuple(g.shape) != p.shape:
                raise ValueError(
                    f"{name}.update: gradient {i} has shape {tuple(g.shape)}, its parameter "
                    f"{p.name or i} has shape {p.shape}"
                )
            out.append(g)
        return out

    def update(self, grads: Sequence[Any] | None = None) -> None:
        """Apply one step; ``grads`` (one per parameter, None to skip one) default to ``.g``.

        Refused inside a step that :func:`gradhub.compile` traces (``NotImplementedError``),
        before anything changes (the parameters, ``t`` and the optimizer's state)."""
        if _modes.state.tracing:
            name = type(self).__name__
            raise NotImplementedError(
                f"gradhub.compile: the step calls {name}.update(); a compiled step replays its "
                "graph, not its Python code, so later calls would neither update the parameters "
                f"nor {name}'s state (nothing was changed). Update outside the compiled step: "
                f"return the gradients and call {name}.update(grads) after the call (or "
                "update() after a step that calls backward(): .g holds the gradients)"
            )
        gs = self._grads(grads)
        self.t += 1
        with no_grad():
            for k, (p, g) in enumerate(zip(self.params, gs)):
                if g is None:
                    continue
                with p.device.activate():  # CuPy works on the current device
                    # float16 parameters are updated in float32 (g*g overflows float16 for
                    # |g| > 256) and the results stored back in float16: _step gets g in float32
                    cd = p.dtype if p.dtype.itemsize >= 4 else _F32
                    if g.dtype != cd:
                        g = g.astype(cd)
                    if self.weight_decay:  # L2: a new array (g may be the parameter's own .g)
                        g = g + self.weight_decay * (p.d if cd is p.dtype else p.d.astype(cd))
                    self._step(k, p, g)

    def _step(self, k: int, p: Variable, g: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    #: hyper-parameters kept by :meth:`state_dict` (set by each optimizer)
    _HYPER: tuple[str, ...] = ()
    #: per-parameter state: the attribute (a list, one entry per parameter) and its key
    _SLOTS: tuple[tuple[str, str], ...] = ()

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state, enough to continue training exactly (as PyTorch's).

        ``{"type": class name, "hyper": {name: value}, "t": updates so far, "state": [one dict
        per parameter, in the order of ``params``]}``; each per-parameter dict holds that
        parameter's buffers as numpy arrays (copies; absent before its first update) and its
        counters. :func:`gradhub.save_parameters` with ``optimizer=`` stores it beside the
        parameters, :func:`gradhub.load_parameters` with ``optimizer=`` restores it.

        Example::

            >>> import gradhub as gh
            >>> from gradhub.optim import Adam
            >>> w = gh.Variable([1.0])
            >>> opt = Adam([w], lr=0.1)
            >>> opt.update([gh.Variable([2.0])])
            >>> sd = opt.state_dict()
            >>> sd["t"], sd["state"][0]["step"], sd["state"][0]["m"]
            (1, 1, array([0.2], dtype=float32))
        """
        state: list[dict[str, Any]] = []
        for k, p in enumerate(self.params):
            entry: dict[str, Any] = {}
            for attr, key in self._SLOTS:
                value = getattr(self, attr)[k]
                if value is None:
                    continue
                entry[key] = p.device.to_numpy(value).copy() if hasattr(value, "shape") else value
            state.append(entry)
        return {
            "type": type(self).__name__,
            "hyper": {h: getattr(self, h) for h in self._HYPER},
            "t": self.t,
            "state": state,
        }

    def check_state_dict(self, state: Mapping[str, Any]) -> None:
        """Raise if :meth:`load_state_dict` would refuse ``state`` (changing nothing): another
        optimizer type, another number of parameters, a buffer whose shape differs from its
        parameter's."""
        name = type(self).__name__
        if state.get("type") != name:
            raise ValueError(
                f"{name}.load_state_dict: the state is of a {state.get('type')!r} optimizer"
            )
        entries = state.get("state")
        if not isinstance(entries, list) or len(entries) != len(self.params):
            n = len(entries) if isinstance(entries, list) else entries
            raise ValueError(
                f"{name}.load_state_dict: the state has {n} parameter entries, this optimizer "
                f"has {len(self.params)} parameters"
            )
        keys = {key for _, key in self._SLOTS}
        for k, (p, entry) in enumerate(zip(self.params, entries)):
            for key, value in entry.items():
                if key not in keys:
                    raise ValueError(
                        f"{name}.load_state_dict: unknown entry {key!r} of parameter {k}"
                    )
                if hasattr(value, "shape") and tuple(value.shape) != p.shape:
                    raise ValueError(
                        f"{name}.load_state_dict: {key!r} of parameter {k} ({p.name or k}) has "
                        f"shape {tuple(value.shape)}, the parameter has shape {p.shape}"
                    )
        for h in state.get("hyper", {}):
            if h not in self._HYPER:
                raise ValueError(f"{name}.load_state_dict: unknown hyper-parameter {h!r}")

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore the state returned by :meth:`state_dict` (hyper-parameters included); the
        optimizer must have been built over parameters of the same shapes in the same order.
        Buffers are copied to each parameter's device and dtype."""
        self.check_state_dict(state)
        for h, value in state.get("hyper", {}).items():
            setattr(self, h, value)
        self.t = int(state["t"])
        for attr, key in self._SLOTS:
            slot = getattr(self, attr)
            for k, (p, entry) in enumerate(zip(self.params, state["state"])):
                value = entry.get(key)
                if hasattr(value, "shape"):
                    with p.device.activate():
                        value = p.device.asarray(value, dtype=p.dtype).copy()
                elif value is None and key == "step":
                    value = 0
                slot[k] = value


class SGD(_Optimizer):
    """Stochastic gradient descent with optional momentum, Nesterov momentum and weight decay.

    The update of ``torch.optim.SGD`` (no dampening), for a parameter :math:`p` with gradient
    :math:`g`, momentum buffer :math:`b` (:math:`b = g` on the parameter's first step):

    .. math::
        g \\leftarrow g + \\lambda p, \\qquad b \\leftarrow \\mu b + g, \\qquad
        p \\leftarrow p - \\eta\\, (g + \\mu b \\text{ if nesterov else } b)

    with :math:`\\lambda` = ``weight_decay`` (L2, 0 by default), :math:`\\mu` = ``momentum``
    (0 by default, as PyTorch: plain ``p -= lr * g``; pass ``momentum=0.9`` for heavy-ball
    momentum) and :math:`\\eta` = ``lr``. ``lr`` and ``weight_decay`` must be >= 0 (``lr=0``
    is accepted, as PyTorch), ``momentum`` in ``[0, 1)``; ``nesterov=True`` needs
    ``momentum > 0``. As PyTorch, the buffer accumulates gradients unscaled, so changing
    ``opt.lr`` between steps scales the whole next step.

    Example::

        >>> import gradhub as gh
        >>> from gradhub.optim import SGD
        >>> w = gh.Variable([3.0])
        >>> opt = SGD([w], lr=0.5)
        >>> opt.update([gh.Variable([2.0])])
        >>> w.d
        array([2.], dtype=float32)
    """

    def __init__(
        self,
        params: Iterable[Variable] | Mapping[str, Variable],
        lr: float = 0.01,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
    ) -> None:
        super().__init__(params)
        self.lr = _non_negative("SGD", "lr", lr)
        self.momentum = _unit("SGD", "momentum", momentum)
        self.weight_decay = _non_negative("SGD", "weight_decay", weight_decay)
        if not isinstance(nesterov, bool):
            raise TypeError(f"SGD: nesterov must be True or False, got {nesterov!r}")
        if nesterov and self.momentum == 0:
            raise ValueError("SGD: nesterov=True requires momentum > 0 (as torch.optim.SGD)")
        self.nesterov = nesterov
        self.velocity: list[Any] = [None] * len(self.params)  # the momentum buffers

    _HYPER = ("lr", "momentum", "weight_decay", "nesterov")
    _SLOTS = (("velocity", "momentum_buffer"),)

    def _step(self, k: int, p: Variable, g: Any) -> None:
        wide = g.dtype != p.dtype  # float16 parameter, g in float32: see _Optimizer.update
        if self.momentum:
            b = self.velocity[k]
            if b is None:
                bw = g if wide else g.copy()
                self.velocity[k] = g.astype(p.dtype) if wide else bw
            else:
                bw = b.astype(g.dtype) if wide else b  # float16: in float32, stored back
                bw *= self.momentum
                bw += g
                if wide:
                    b[...] = bw
            g = g + self.momentum * bw if self.nesterov else bw
        _descend(p, self.lr * g)


class Adam(_Optimizer):
    """Adam (Kingma and Ba, 2015) with bias correction and optional L2 weight decay.

    The update of ``torch.optim.Adam`` (``amsgrad=False``):

    .. math::
        g \\leftarrow g + \\lambda p, \\quad
        m \\leftarrow \\beta_1 m + (1-\\beta_1) g, \\quad
        v \\leftarrow \\beta_2 v + (1-\\beta_2) g^2, \\quad
        p \\leftarrow p - \\eta \\frac{m / (1-\\beta_1^t)}{\\sqrt{v / (1-\\beta_2^t)} + \\epsilon}

    ``weight_decay`` (:math:`\\lambda`, 0 by default) is added to the gradient (L2, as
    ``torch.optim.Adam``; AdamW's decoupled decay is not offered). ``lr``, ``eps`` and
    ``weight_decay`` must be >= 0 (``lr=0`` and ``eps=0`` are accepted, as PyTorch; with
    ``eps=0`` an entry whose gradients were all zero becomes NaN, as there), ``beta1`` and
    ``beta2`` in ``[0, 1)``. ``t`` counts the updates of each parameter: one skipped (a None
    gradient) keeps its count, as PyTorch's and nnabla's per-parameter state.

    Example::

        >>> import gradhub as gh
        >>> from gradhub.optim import Adam
        >>> w = gh.Variable([1.0, -1.0])
        >>> opt = Adam([w], lr=0.1)
        >>> opt.update([gh.Variable([0.5, -3.0])])  # the first step moves each entry by ~lr
        >>> w.d
        array([ 0.9, -0.9], dtype=float32)
    """

    def __init__(
        self,
        params: Iterable[Variable] | Mapping[str, Variable],
        lr: float = 1e-3,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        super().__init__(params)
        self.lr = _non_negative("Adam", "lr", lr)
        self.beta1 = _unit("Adam", "beta1", beta1)
        self.beta2 = _unit("Adam", "beta2", beta2)
        self.eps = _non_negative("Adam", "eps", eps)
        self.weight_decay = _non_negative("Adam", "weight_decay", weight_decay)
        self.m: list[Any] = [None] * len(self.params)
        self.v: list[Any] = [None] * len(self.params)
        self.steps = [0] * len(self.params)  # updates per parameter: the t of the bias correction

    _HYPER = ("lr", "beta1", "beta2", "eps", "weight_decay")
    _SLOTS = (("m", "m"), ("v", "v"), ("steps", "step"))

    def _step(self, k: int, p: Variable, g: Any) -> None:
        xp = p.device.xp
        if self.m[k] is None:
            self.m[k] = xp.zeros_like(p.d)
            self.v[k] = xp.zeros_like(p.d)
        m, v = self.m[k], self.v[k]
        self.steps[k] += 1
        t = self.steps[k]
        c1 = 1 - self.beta1**t
        c2 = 1 - self.beta2**t
        wide = g.dtype != p.dtype
        # float16 parameter, g in float32 (see _Optimizer.update): m, v and the step in float32,
        # stored back in float16 (g*g and v / c2 overflow float16 past 65504)
        mw, vw = (m.astype(g.dtype), v.astype(g.dtype)) if wide else (m, v)
        mw *= self.beta1
        mw += (1 - self.beta1) * g
        vw *= self.beta2
        vw += (1 - self.beta2) * (g * g)
        if wide:
            m[...] = mw
            v[...] = vw
        _descend(p, (self.lr / c1) * mw / (xp.sqrt(vw / c2) + self.eps))
