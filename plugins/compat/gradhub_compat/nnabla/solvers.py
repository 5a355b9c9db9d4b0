"""nnabla's solvers: ``import gradhub_compat.nnabla.solvers as S``.

:class:`Sgd`, :class:`Momentum`, :class:`Nesterov`, :class:`Adam`, :class:`Adamax`,
:class:`AMSGRAD`, :class:`Adagrad`, :class:`Adadelta`, :class:`RMSprop` and
:class:`RMSpropGraves` with nnabla's API (``set_parameters(params, reset=True,
retain_state=False)``, ``zero_grad()``, ``weight_decay(rate)``, ``clip_grad_by_norm(norm)``,
``update()``, ``set_learning_rate``, ``learning_rate()``, ``get_states``/``set_states``) and
nnabla 1.39's update formulas, computed in the parameters' dtype (float32 for nnabla Variables)
with float32 hyper-parameters in the order of operations of nnabla's C++ solvers (Adam folds the
bias correction into the step size, ``eps`` outside the square root). nnabla's ``SgdW``,
``AdamW``, ``AdaBound``, ``AMSBound``, ``Lars``, ``Lamb``, ``Lion`` and ``AdaBelief`` are not
provided.

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

from ._variable import Variable, grad_is_zeroing, set_zeroing_grad

__all__ = [
    "AMSGRAD",
    "Adadelta",
    "Adagrad",
    "Adam",
    "Adamax",
    "Momentum",
    "Nesterov",
    "RMSprop",
    "RMSpropGraves",
    "Sgd",
    "Solver",
    "SolverState",
]


class SolverState:
    """The state of one parameter: ``t`` (its update count) and ``pstate`` (name -> Variable:
    Momentum's and Nesterov's ``"m"``, Adam's ``"mean"`` and ``"var"``, Adagrad's and RMSprop's
    ``"v"``, Adadelta's ``"e_sqr_grad"`` and ``"e_sqr_delta"``, Adamax's ``"m"`` and ``"u"``,
    AMSGRAD's ``"m"``, ``"v"`` and ``"v_hat"``, RMSpropGraves' ``"n"``, ``"g"`` and ``"d"``)."""

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

    def _set_grad(self, p: NativeVariable, g: Any) -> None:
        # gradhub.compile's trace (if any) is told the assignment: it refuses it
        observe_write(p, "g", g)
        p._grad = NativeVariable.leaf(g, False)

    def zero_grad(self) -> None:
        """Set the gradient of every registered parameter to zeros. As nnabla's (its arrays'
        "zeroing" state, which ``p.g = 0`` and ``p.grad.zero()`` set too), a parameter whose
        gradient nothing writes or takes afterwards (no backward pass reaches it, no
        assignment, no ``p.g`` read) is skipped by :meth:`update`, :meth:`weight_decay`,
        :meth:`clip_grad_by_norm` and :meth:`scale_grad`: its values, state and step count stay
        as they are."""
        for p in self._params.values():
            observe_write(p, "g", 0)  # (gradhub.compile's trace replays it as p.g = 0)
            set_zeroing_grad(p)

    def _written(self) -> list[tuple[str, NativeVariable]]:
        """The registered parameters whose gradient is not in nnabla's "zeroing" state (see
        :meth:`zero_grad`)."""
        return [(k, p) for k, p in self._params.items() if not grad_is_zeroing(p)]

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
        (per parameter, as nnabla's: ``g = clip_norm * g / norm`` where the sum of squares, in
        the gradient's dtype, exceeds ``clip_norm * clip_norm``)."""
        _no_hooks("clip_grad_by_norm", pre_hook, post_hook)
        for _, p in self._written():
            xp = p.device.xp
            with p.device.activate():
                g = self._grad(p)
                dt = g.dtype.type
                sq = (g * g).ravel()
                if sq.size == 0:
                    continue
                # nnabla's CPU solvers add the squares one after the other in the dtype (numpy's
                # pairwise sum rounds differently)
                total = xp.add.accumulate(sq)[-1] if xp is np else sq.sum()
                clip = dt(clip_norm)
                if float(total) > 0.0 and total > clip * clip:
                    self._set_grad(p, clip * g / xp.sqrt(total))

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


def _hyper(solver: str, name: str, value: Any) -> float:
    """A hyper-parameter as a float; a clear error naming the solver and argument otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(
            f"nnabla {solver}: {name} must be a number, got {type(value).__name__} ({value!r})"
        )
    return float(value)


class Nesterov(Solver):
    r"""Nesterov's accelerated gradient (state ``"m"``), nnabla's order of operations:

    .. math::
        v \leftarrow \gamma v_{prev} - \eta g,\quad
        w \leftarrow w + \left(-\gamma v_{prev} + (1 + \gamma) v\right)
    """

    name = "Nesterov"
    _pstate = ("m",)

    def __init__(self, lr: float = 0.001, momentum: float = 0.9) -> None:
        super().__init__(_hyper("Nesterov", "lr", lr))
        self.momentum = _hyper("Nesterov", "momentum", momentum)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        mv = state.pstate["m"]
        mom = dt(self.momentum)
        prev = mv._data
        v = mom * prev - dt(self._lr) * g
        mv._data = v
        return w + (-mom * prev + (dt(1) + mom) * v)


class Adadelta(Solver):
    r"""AdaDelta (states ``"e_sqr_grad"`` and ``"e_sqr_delta"``), nnabla's order of operations:

    .. math::
        E_g \leftarrow E_g \rho + g^2 (1 - \rho),\quad
        \delta = \sqrt{\frac{E_\delta + \epsilon}{E_g + \epsilon}}\, g,\quad
        E_\delta \leftarrow E_\delta \rho + \delta^2 (1 - \rho),\quad
        w \leftarrow w - \eta \delta
    """

    name = "Adadelta"
    _pstate = ("e_sqr_delta", "e_sqr_grad")  # nnabla's order

    def __init__(self, lr: float = 1.0, decay: float = 0.95, eps: float = 1e-6) -> None:
        super().__init__(_hyper("Adadelta", "lr", lr))
        self.decay = _hyper("Adadelta", "decay", decay)
        self.eps = _hyper("Adadelta", "eps", eps)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        gv, dv = state.pstate["e_sqr_grad"], state.pstate["e_sqr_delta"]
        rho, eps = dt(self.decay), dt(self.eps)
        one_rho = dt(1) - rho
        eg = gv._data * rho + g * g * one_rho
        delta = xp.sqrt((dv._data + eps) / (eg + eps)) * g
        ed = dv._data * rho + delta * delta * one_rho
        gv._data, dv._data = eg, ed
        return w - dt(self._lr) * delta


class Adamax(Solver):
    r"""AdaMax (states ``"m"`` and ``"u"``), nnabla's formula:

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g,\quad u \leftarrow \max(\beta_2 u, |g|),
        \quad w \leftarrow w - \frac{\alpha}{1-\beta_1^t} \frac{m}{u + \epsilon}
    """

    name = "Adamax"
    _pstate = ("u", "m")  # nnabla's order

    def __init__(
        self, alpha: float = 0.002, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8
    ) -> None:
        super().__init__(_hyper("Adamax", "alpha", alpha))
        self.beta1 = _hyper("Adamax", "beta1", beta1)
        self.beta2 = _hyper("Adamax", "beta2", beta2)
        self.eps = _hyper("Adamax", "eps", eps)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        b1, b2 = dt(self.beta1), dt(self.beta2)
        # as nnabla's C++: pow(float, int) in double, the correction rounded to the dtype
        alpha_t = dt(self._lr) * dt(1 / (1 - float(b1) ** state.t))
        mv, uv = state.pstate["m"], state.pstate["u"]
        m = b1 * mv._data + (dt(1) - b1) * g
        u = xp.maximum(b2 * uv._data, xp.abs(g))
        mv._data, uv._data = m, u
        return w - alpha_t * m / (u + dt(self.eps))


class AMSGRAD(Solver):
    r"""AMSGrad (states ``"m"``, ``"v"`` and ``"v_hat"``), nnabla's formula:

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g,\quad v \leftarrow \beta_2 v + (1-\beta_2) g^2,
        \quad \hat v \leftarrow \max(\hat v, v),\quad
        w \leftarrow w - \alpha_t \frac{m}{\sqrt{\hat v} + \epsilon}

    with :math:`\alpha_t = \alpha \sqrt{1-\beta_2^t} / (1-\beta_1^t)` when ``bias_correction``,
    :math:`\alpha` otherwise (nnabla's default).
    """

    name = "AMSGRAD"
    _pstate = ("v_hat", "v", "m")  # nnabla's order

    def __init__(
        self,
        alpha: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
        bias_correction: bool = False,
    ) -> None:
        super().__init__(_hyper("AMSGRAD", "alpha", alpha))
        self.beta1 = _hyper("AMSGRAD", "beta1", beta1)
        self.beta2 = _hyper("AMSGRAD", "beta2", beta2)
        self.eps = _hyper("AMSGRAD", "eps", eps)
        self.bias_correction = bool(bias_correction)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        t = state.t
        b1, b2 = dt(self.beta1), dt(self.beta2)
        alpha_t = dt(self._lr)
        if self.bias_correction:  # (pow in double, the correction rounded to the dtype)
            alpha_t = alpha_t * dt(math.sqrt(1 - float(b2) ** t) / (1 - float(b1) ** t))
        mv, vv, hv = state.pstate["m"], state.pstate["v"], state.pstate["v_hat"]
        one = dt(1)
        m = b1 * mv._data + (one - b1) * g
        v = b2 * vv._data + (one - b2) * g * g
        v_hat = xp.maximum(hv._data, v)
        mv._data, vv._data, hv._data = m, v, v_hat
        return w - alpha_t * m / (xp.sqrt(v_hat) + dt(self.eps))


class RMSpropGraves(Solver):
    r"""Graves' RMSprop (states ``"n"``, ``"g"`` and ``"d"``), nnabla's order of operations:

    .. math::
        n \leftarrow \rho n + (1-\rho) e^2,\quad g \leftarrow \rho g + (1-\rho) e,\quad
        d \leftarrow \beta d - \frac{\eta e}{\sqrt{n - g^2 + \epsilon}},\quad w \leftarrow w + d

    (:math:`e` the gradient).
    """

    name = "RMSpropGraves"
    _pstate = ("g", "d", "n")  # nnabla's order

    def __init__(
        self, lr: float = 0.0001, decay: float = 0.95, momentum: float = 0.9, eps: float = 0.0001
    ) -> None:
        super().__init__(_hyper("RMSpropGraves", "lr", lr))
        self.decay = _hyper("RMSpropGraves", "decay", decay)
        self.momentum = _hyper("RMSpropGraves", "momentum", momentum)
        self.eps = _hyper("RMSpropGraves", "eps", eps)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        nv, gv, dv = state.pstate["n"], state.pstate["g"], state.pstate["d"]
        rho = dt(self.decay)
        one_rho = dt(1) - rho
        n = rho * nv._data + one_rho * g * g
        mean = rho * gv._data + one_rho * g
        d = dt(self.momentum) * dv._data - dt(self._lr) * g / xp.sqrt(
            n - mean * mean + dt(self.eps)
        )
        nv._data, gv._data, dv._data = n, mean, d
        return w + d
