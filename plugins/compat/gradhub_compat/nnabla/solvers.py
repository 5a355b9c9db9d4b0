"""nnabla's solvers: ``import gradhub_compat.nnabla.solvers as S``.

:class:`Sgd`, :class:`Momentum`, :class:`Adam`, :class:`Adagrad` and :class:`RMSprop` with
nnabla's API (``set_parameters(params, reset=True, retain_state=False)``, ``zero_grad()``,
``weight_decay(rate)``, ``clip_grad_by_norm(norm)``, ``update()``, ``set_learning_rate``,
``learning_rate()``, ``get_states``/``set_states``) and nnabla 1.39's update formulas, computed in
the parameters' dtype (float32 for nnabla Variables) with float32 hyper-parameters, as nnabla's
C++ solvers (Adam folds the bias correction into the step size, ``eps`` outside the square root).

As nnabla's: the solver updates every registered parameter (also those with ``need_grad=False``)
from its ``.g``, which ``update()`` leaves as it is; ``weight_decay`` (``g += rate * w``),
``clip_grad_by_norm`` (per parameter) and ``scale_grad`` change ``.g`` at once; parameters and
states are listed by name in sorted order. A parameter's data is updated in its array (so that
every Variable sharing it, e.g. an unlinked one, sees the new values), then held as a new array
object, so that a graph recorded before the update is recomputed by ``forward()`` before it can
be differentiated again (nnabla's loop calls ``forward()`` first anyway).

Example::

    >>> import numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.solvers as S
    >>> w = nn.Variable.from_numpy_array(np.array([1.0, -2.0]), need_grad=True)
    >>> solver = S.Sgd(lr=0.25)
    >>> solver.set_parameters({"w": w})
    >>> solver.zero_grad()
    >>> (w * w).backward()
    >>> solver.update()
    >>> w.d
    array([ 0.5, -1. ], dtype=float32)
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np
from gradhub.variable import Variable as NativeVariable
from gradhub.variable import observe_write

from ._variable import Variable

__all__ = ["Adagrad", "Adam", "Momentum", "RMSprop", "Sgd", "Solver", "SolverState"]


class SolverState:
    """The state of one parameter: ``t`` (its update count) and ``pstate`` (name -> Variable:
    Momentum's ``"m"``, Adam's ``"mean"`` and ``"var"``, Adagrad's and RMSprop's ``"v"``)."""

    def __init__(self, t: int = 0, pstate: dict[str, Variable] | None = None) -> None:
        self.t = int(t)
        self.pstate: dict[str, Variable] = {} if pstate is None else dict(pstate)

    def __repr__(self) -> str:
        return f"SolverState(t={self.t}, pstate={sorted(self.pstate)})"


def _no_hooks(where: str, *hooks: Any) -> None:
    if any(h is not None for h in hooks):
        raise NotImplementedError(f"nnabla Solver.{where}: hooks are not supported by gradhub")


class Solver:
    """The shared part of nnabla's solvers: the parameters, their states and the gradient tools.

    Subclasses give ``name``, the state names (``_pstate``) and ``_step``.
    """

    name = "Solver"
    _pstate: tuple[str, ...] = ()

    def __init__(self, lr: float) -> None:
        self._lr = float(lr)
        self._params: dict[str, NativeVariable] = {}
        self._states: dict[str, SolverState] = {}
        #: name -> the gradient Variable zero_grad() set (nnabla's "zeroing" state: until
        #: something writes the gradient, update() and the gradient tools skip the parameter)
        self._zeroed: dict[str, NativeVariable] = {}

    # -- parameters ------------------------------------------------------------------------------
    def set_parameters(
        self, param_dict: Mapping[str, Any], reset: bool = True, retain_state: bool = False
    ) -> None:
        """Register the parameters of ``param_dict`` (name -> Variable), e.g.
        ``nn.get_parameters()``.

        ``reset`` (default): forget the parameters registered before. Otherwise these are added,
        or replace those of the same name with a new state (zeros, ``t = 0``); with
        ``retain_state``, as nnabla's, a name already registered keeps its Variable and state,
        and a shape other than the registered one raises.
        """
        if not isinstance(param_dict, Mapping):
            raise TypeError(
                f"nnabla {self.name}.set_parameters: param_dict must be a dict of name -> "
                f"Variable (e.g. nn.get_parameters()), got {type(param_dict).__name__}"
            )
        for k, p in param_dict.items():
            if not isinstance(p, NativeVariable):
                raise TypeError(
                    f"nnabla {self.name}.set_parameters: parameter {k!r} must be a Variable, "
                    f"got {type(p).__name__}"
                )
            if p.dtype.kind != "f":
                raise TypeError(
                    f"nnabla {self.name}.set_parameters: parameter {k!r} must hold "
                    f"floating-point data, got {p.dtype}"
                )
        if reset:
            self._params.clear()
            self._states.clear()
        elif retain_state:
            for k, p in param_dict.items():
                kept = self._params.get(k)
                if kept is not None and kept.shape != p.shape:
                    raise ValueError(
                        f"nnabla {self.name}.set_parameters: could not retain the state of "
                        f"{k!r}: its shape {p.shape} differs from the registered {kept.shape}"
                    )
        for k, p in param_dict.items():
            if retain_state and not reset and k in self._params:
                continue  # (nnabla keeps the registered Variable and its state)
            self._params[k] = p
            self._zeroed.pop(k, None)
            self._states[k] = self._new_state(p)

    def _new_state(self, p: NativeVariable) -> SolverState:
        xp = p.device.xp
        with p.device.activate():
            ps = {n: Variable.leaf(xp.zeros_like(p._data), False) for n in self._pstate}
        return SolverState(0, ps)  # type: ignore[arg-type]

    def remove_parameters(self, keys: Any) -> None:
        """Forget the parameters (and states) named in ``keys``."""
        for k in keys:
            self._params.pop(k, None)
            self._states.pop(k, None)

    def clear_parameters(self) -> None:
        """Forget every parameter and state."""
        self._params.clear()
        self._states.clear()

    def get_parameters(self) -> OrderedDict[str, Any]:
        """The registered parameters, name -> Variable, sorted by name (as nnabla's)."""
        return OrderedDict((k, self._params[k]) for k in sorted(self._params))

    def get_states(self) -> OrderedDict[str, SolverState]:
        """The states, name -> :class:`SolverState` (the solver's own; sorted by name)."""
        return OrderedDict((k, self._states[k]) for k in sorted(self._states))

    def set_states(self, states: Mapping[str, Any]) -> None:
        """Copy ``states`` (name -> state with ``t`` and ``pstate``) into the solver's states;
        the parameters must be registered first (``set_parameters``), as in nnabla."""
        for k, st in states.items():
            mine = self._states.get(k)
            if mine is None:
                raise ValueError(
                    f"nnabla {self.name}.set_states: no parameter {k!r} is registered; call "
                    "set_parameters first"
                )
            mine.t = int(st.t)
            for n, v in st.pstate.items():
                if n not in mine.pstate:
                    raise ValueError(
                        f"nnabla {self.name}.set_states: {self.name} has no state {n!r} "
                        f"(its states: {list(self._pstate)})"
                    )
                mine.pstate[n].d = v.d if isinstance(v, NativeVariable) else v

    # -- learning rate ---------------------------------------------------------------------------
    def set_learning_rate(self, learning_rate: float) -> None:
        """Set the learning rate (Adam's ``alpha``)."""
        self._lr = float(learning_rate)

    def learning_rate(self) -> float:
        """The learning rate, as nnabla stores it (a float32 value)."""
        return float(np.float32(self._lr))

    def weight_decay_is_fused(self) -> bool:
        """False: :meth:`weight_decay` changes the gradients at once, as nnabla's solvers here."""
        return False

    # -- gradients -------------------------------------------------------------------------------
    def _grad(self, p: NativeVariable) -> Any:
        gv = p._grad
        if gv is None:
            with p.device.activate():
                return p.device.xp.zeros_like(p._data)
        return gv._data

    def _set_grad(self, p: NativeVariable, g: Any, told: Any = None) -> None:
        # gradhub.compile's trace (if any) is told the assignment (``told``: the value it is
        # told instead of ``g``): it replays a clearing, refuses any other gradient
        observe_write(p, "g", g if told is None else told)
        p._grad = NativeVariable.leaf(g, False)

    def zero_grad(self) -> None:
        """Set the gradient of every registered parameter to zeros. As nnabla's (its arrays'
        "zeroing" state), a parameter whose gradient nothing writes afterwards (no backward pass
        reaches it, no assignment) is skipped by :meth:`update`, :meth:`weight_decay`,
        :meth:`clip_grad_by_norm` and :meth:`scale_grad`: its values, state and step count stay
        as they are."""
        for k, p in self._params.items():
            with p.device.activate():
                self._set_grad(p, p.device.xp.zeros_like(p._data), told=0)
            self._zeroed[k] = p._grad  # type: ignore[assignment]

    def _written(self) -> list[tuple[str, NativeVariable]]:
        """The registered parameters whose gradient was written since :meth:`zero_grad` (every
        one without a zero_grad): the gradient Variable it set was replaced, or its array holds
        a value other than zero."""
        out = []
        for k, p in self._params.items():
            z = self._zeroed.get(k)
            if z is not None and p._grad is z and not bool(p.device.xp.any(z._data)):
                continue
            out.append((k, p))
        return out

    def weight_decay(self, decay_rate: float, pre_hook: Any = None, post_hook: Any = None) -> None:
        """Add ``decay_rate * w`` to each parameter's gradient (at once, not at ``update``)."""
        _no_hooks("weight_decay", pre_hook, post_hook)
        for _, p in self._written():
            w = p._data
            with p.device.activate():
                self._set_grad(p, self._grad(p) + w.dtype.type(decay_rate) * w)

    def clip_grad_by_norm(
        self, clip_norm: float, pre_hook: Any = None, post_hook: Any = None
    ) -> None:
        """Scale each parameter's gradient whose L2 norm exceeds ``clip_norm`` down to that norm
        (per parameter, as nnabla's)."""
        _no_hooks("clip_grad_by_norm", pre_hook, post_hook)
        for _, p in self._written():
            with p.device.activate():
                g = self._grad(p)
                norm = p.device.xp.sqrt((g * g).sum())
                if float(norm) > clip_norm:
                    self._set_grad(p, g.dtype.type(clip_norm) * g / norm)

    def scale_grad(self, scale: float, pre_hook: Any = None, post_hook: Any = None) -> None:
        """Multiply each parameter's gradient by ``scale``."""
        _no_hooks("scale_grad", pre_hook, post_hook)
        for _, p in self._written():
            with p.device.activate():
                g = self._grad(p)
                self._set_grad(p, g * g.dtype.type(scale))

    def check_inf_grad(self, pre_hook: Any = None, post_hook: Any = None) -> bool:
        """Whether a gradient holds an infinity."""
        _no_hooks("check_inf_grad", pre_hook, post_hook)
        return any(bool(p.device.xp.isinf(self._grad(p)).any()) for p in self._params.values())

    def check_nan_grad(self, pre_hook: Any = None, post_hook: Any = None) -> bool:
        """Whether a gradient holds a NaN."""
        _no_hooks("check_nan_grad", pre_hook, post_hook)
        return any(bool(p.device.xp.isnan(self._grad(p)).any()) for p in self._params.values())

    def check_inf_or_nan_grad(self, pre_hook: Any = None, post_hook: Any = None) -> bool:
        """Whether a gradient holds an infinity or a NaN."""
        _no_hooks("check_inf_or_nan_grad", pre_hook, post_hook)
        return self.check_inf_grad() or self.check_nan_grad()

    # -- update ----------------------------------------------------------------------------------
    def update(self, update_pre_hook: Any = None, update_post_hook: Any = None) -> None:
        """Update the registered parameters from their ``.g`` (left unchanged); as nnabla's,
        those whose gradient nothing wrote since :meth:`zero_grad` are skipped."""
        _no_hooks("update", update_pre_hook, update_post_hook)
        for p in self._params.values():  # (refused, before any change, inside gradhub.compile)
            observe_write(p, "d", None)
        for k, p in self._written():
            state = self._states[k]
            state.t = min(state.t + 1, 2**32 - 2)
            w = p._data
            dt = w.dtype.type
            with p.device.activate():
                g = self._grad(p)
                if g.dtype != w.dtype:
                    g = g.astype(w.dtype)
                new = self._step(p.device.xp, w, g, state, dt)
                _write(p, new)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        raise NotImplementedError  # pragma: no cover - abstract

    def __repr__(self) -> str:
        return f"<nnabla {self.name} solver: {len(self._params)} parameters>"


def _write(p: NativeVariable, new: Any) -> None:
    """Store the updated values in the parameter's array (Variables sharing it see them), held
    as a new array object (a graph recorded before sees a replaced leaf: ``forward()`` first)."""
    arr = p._data
    if getattr(arr.flags, "writeable", False) and arr.shape == new.shape:
        arr[...] = new
        p._data = arr.view()
    else:
        p._data = new.astype(arr.dtype)


class Sgd(Solver):
    r"""Stochastic gradient descent: :math:`w \leftarrow w - \eta g`."""

    name = "Sgd"

    def __init__(self, lr: float = 0.001) -> None:
        super().__init__(lr)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        return w - dt(self._lr) * g


class Momentum(Solver):
    r"""SGD with momentum: :math:`v \leftarrow \gamma v + \eta g,\ w \leftarrow w - v`
    (state ``"m"``)."""

    name = "Momentum"
    _pstate = ("m",)

    def __init__(self, lr: float = 0.001, momentum: float = 0.9) -> None:
        super().__init__(lr)
        self.momentum = float(momentum)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        mv = state.pstate["m"]
        m = dt(self.momentum) * mv._data + dt(self._lr) * g
        mv._data = m
        return w - m


class Adam(Solver):
    r"""Adam, nnabla's formula (the bias correction folded into the step size):

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g,\quad v \leftarrow \beta_2 v + (1-\beta_2) g^2,
        \quad w \leftarrow w - \alpha \frac{\sqrt{1-\beta_2^t}}{1-\beta_1^t}
        \frac{m}{\sqrt{v} + \epsilon}

    (states ``"mean"`` and ``"var"``).
    """

    name = "Adam"
    _pstate = ("var", "mean")  # nnabla's order

    def __init__(
        self, alpha: float = 0.001, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8
    ) -> None:
        super().__init__(alpha)
        self.beta1 = float(beta1)
        self.beta2 = float(beta2)
        self.eps = float(eps)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        t = state.t
        b1, b2 = dt(self.beta1), dt(self.beta2)
        # as nnabla's C++: pow(float, int) in double, the correction rounded to the dtype
        corr = dt(math.sqrt(1 - float(b2) ** t) / (1 - float(b1) ** t))
        alpha_t = dt(self._lr) * corr
        mv, vv = state.pstate["mean"], state.pstate["var"]
        one = dt(1)
        m = b1 * mv._data + (one - b1) * g
        v = b2 * vv._data + (one - b2) * g * g
        mv._data, vv._data = m, v
        return w - alpha_t * m / (xp.sqrt(v) + dt(self.eps))


class Adagrad(Solver):
    r"""AdaGrad: :math:`G \leftarrow G + g^2,\ w \leftarrow w - \eta g / (\sqrt{G} + \epsilon)`
    (state ``"v"``)."""

    name = "Adagrad"
    _pstate = ("v",)

    def __init__(self, lr: float = 0.01, eps: float = 1e-8) -> None:
        super().__init__(lr)
        self.eps = float(eps)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        vv = state.pstate["v"]
        v = vv._data + g * g
        vv._data = v
        return w - dt(self._lr) * g / (xp.sqrt(v) + dt(self.eps))


class RMSprop(Solver):
    r"""RMSprop: :math:`v \leftarrow \gamma v + (1-\gamma) g^2,\
    w \leftarrow w - \eta g / (\sqrt{v} + \epsilon)` (state ``"v"``)."""

    name = "RMSprop"
    _pstate = ("v",)

    def __init__(self, lr: float = 0.001, decay: float = 0.9, eps: float = 1e-8) -> None:
        super().__init__(lr)
        self.decay = float(decay)
        self.eps = float(eps)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        vv = state.pstate["v"]
        d = dt(self.decay)
        # (nnabla's order of operations: e * decay + g * g * (1 - decay), w - lr / (sqrt(e) +
        # eps) * g; another order differs in the last bit)
        v = vv._data * d + g * g * (dt(1) - d)
        vv._data = v
        return w - dt(self._lr) / (xp.sqrt(v) + dt(self.eps)) * g
