"""chainer's optimizers: ``from gradhub_compat.chainer import optimizers`` (``chainer.optimizers``).

:class:`SGD`, :class:`MomentumSGD` and :class:`Adam` (with :class:`AdamW`, :class:`AMSGrad`,
:class:`AdaBound`, :class:`AMSBound`), and ``RMSprop``, ``AdaGrad``, ``AdaDelta``,
``NesterovAG``, ``RMSpropGraves``, ``SMORMS3``, ``CorrectedMomentumSGD`` (their formulas in
their docstrings), with chainer 7.8.1's defaults and CPU update formulas, applied in place to
each parameter's array (``p`` the parameter, ``g`` its gradient):

- SGD (``lr=0.01``): ``p -= lr * g``;
- MomentumSGD (``lr=0.01, momentum=0.9``): ``v = momentum * v - lr * g; p += v``;
- Adam (``alpha=0.001, beta1=0.9, beta2=0.999, eps=1e-8, eta=1.0, weight_decay_rate=0,
  amsgrad=False, adabound=False, final_lr=0.1, gamma=1e-3``):
  ``m += (1 - beta1) (g - m)``, ``v += (1 - beta2) (g^2 - v)``,
  ``alpha_t = alpha sqrt(1 - beta2^t) / (1 - beta1^t)`` (bias correction; t the rule's update
  count), ``p = (1 - eta wd) p - eta alpha_t m / (sqrt(v) + eps)`` (``vhat = max(vhat, v)``
  in place of ``v`` with amsgrad; the step clipped to AdaBound's bounds with adabound).

Example::

    >>> import numpy as np
    >>> from gradhub_compat.chainer import optimizers
    >>> import gradhub_compat.chainer.links as L
    >>> layer = L.Linear(2, 1)
    >>> opt = optimizers.Adam().setup(layer)
    >>> opt.alpha, opt.beta1, opt.beta2, opt.eps
    (0.001, 0.9, 0.999, 1e-08)
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ._device import PAGE
from .optimizer import GradientMethod, Hyperparameter, HyperparameterProxy, UpdateRule

__all__ = [
    "SGD",
    "AMSBound",
    "AMSGrad",
    "AdaBound",
    "Adam",
    "AdamRule",
    "AdamW",
    "MomentumSGD",
    "MomentumSGDRule",
    "SGDRule",
]


def _xp(param: Any) -> Any:
    return param.device.xp


# -- SGD -----------------------------------------------------------------------------------------
_sgd_defaults = Hyperparameter()
_sgd_defaults.lr = 0.01


class SGDRule(UpdateRule):
    """``p -= lr * g``."""

    is_elementwise = True

    def __init__(self, parent_hyperparam: Hyperparameter | None = None, lr: float | None = None):
        super().__init__(parent_hyperparam or _sgd_defaults)
        if lr is not None:
            self.hyperparam.lr = lr

    def update_core(self, param: Any) -> None:
        grad = param.grad
        if grad is None:
            return
        param.array -= self.hyperparam.lr * grad


class SGD(GradientMethod):
    """Vanilla stochastic gradient descent, ``SGD(lr=0.01)``."""

    lr = HyperparameterProxy("lr")

    def __init__(self, lr: float = _sgd_defaults.lr) -> None:
        super().__init__()
        self.hyperparam.lr = lr

    def create_update_rule(self) -> SGDRule:
        return SGDRule(self.hyperparam)


# -- MomentumSGD ---------------------------------------------------------------------------------
_msgd_defaults = Hyperparameter()
_msgd_defaults.lr = 0.01
_msgd_defaults.momentum = 0.9


class MomentumSGDRule(UpdateRule):
    """``v = momentum * v - lr * g; p += v`` (state ``v``, zeros at first)."""

    is_elementwise = True

    def __init__(
        self,
        parent_hyperparam: Hyperparameter | None = None,
        lr: float | None = None,
        momentum: float | None = None,
    ) -> None:
        super().__init__(parent_hyperparam or _msgd_defaults)
        if lr is not None:
            self.hyperparam.lr = lr
        if momentum is not None:
            self.hyperparam.momentum = momentum

    def init_state(self, param: Any) -> None:
        assert self.state is not None
        self.state["v"] = _xp(param).zeros_like(param.array)

    def update_core(self, param: Any) -> None:
        grad = param.grad
        if grad is None:
            return
        assert self.state is not None
        v = self.state["v"]
        v *= self.hyperparam.momentum
        v -= self.hyperparam.lr * grad
        param.array += v


class MomentumSGD(GradientMethod):
    """Momentum SGD, ``MomentumSGD(lr=0.01, momentum=0.9)``."""

    lr = HyperparameterProxy("lr")
    momentum = HyperparameterProxy("momentum")

    def __init__(
        self, lr: float = _msgd_defaults.lr, momentum: float = _msgd_defaults.momentum
    ) -> None:
        super().__init__()
        self.hyperparam.lr = lr
        self.hyperparam.momentum = momentum

    def create_update_rule(self) -> MomentumSGDRule:
        return MomentumSGDRule(self.hyperparam)


# -- Adam ----------------------------------------------------------------------------------------
_adam_defaults = Hyperparameter()
_adam_defaults.alpha = 0.001
_adam_defaults.beta1 = 0.9
_adam_defaults.beta2 = 0.999
_adam_defaults.eps = 1e-8
_adam_defaults.eta = 1.0
_adam_defaults.weight_decay_rate = 0
_adam_defaults.amsgrad = False
_adam_defaults.adabound = False
_adam_defaults.final_lr = 0.1
_adam_defaults.gamma = 1e-3


def _learning_rate(hp: Any, t: int) -> float:
    if t == 0:
        raise RuntimeError(
            "Can't determine the learning rate of Adam optimizer because the update steps have "
            "not been started."
        )
    fix1 = 1.0 - math.pow(hp.beta1, t)
    fix2 = 1.0 - math.pow(hp.beta2, t)
    return float(hp.alpha * math.sqrt(fix2) / fix1)


def _inplace_axpby(x: Any, a: float, b: float, y: Any) -> None:
    """``x = a x + b y`` in place, as chainer's CPU path (``x += b y`` when ``a == 1``)."""
    if a == 1:
        x += b * y
    else:
        x[...] = a * x + b * y


class AdamRule(UpdateRule):
    """Adam's update of one parameter (see the module); states ``m``, ``v`` (and ``vhat``)."""

    is_elementwise = True

    def __init__(self, parent_hyperparam: Hyperparameter | None = None, **hyperparams: Any):
        super().__init__(parent_hyperparam or _adam_defaults)
        for name, value in hyperparams.items():
            if name not in _adam_defaults.__dict__:
                raise TypeError(f"AdamRule got an unexpected keyword argument {name!r}")
            if value is not None:
                setattr(self.hyperparam, name, value)
        if self.hyperparam.adabound:
            self.initial_alpha = self.hyperparam.alpha

    def init_state(self, param: Any) -> None:
        assert self.state is not None
        xp = _xp(param)
        self.state["m"] = xp.zeros_like(param.array)
        self.state["v"] = xp.zeros_like(param.array)
        if self.hyperparam.amsgrad:
            self.state["vhat"] = xp.zeros_like(param.array)

    def update_core(self, param: Any) -> None:
        grad = param.grad
        if grad is None:
            return
        assert self.state is not None
        hp = self.hyperparam
        xp = _xp(param)
        dtype = np.float32 if param.dtype == np.float16 else param.dtype.type
        if hp.eps != 0 and dtype(hp.eps) == 0:
            raise ValueError(
                f"eps of Adam optimizer is too small for {np.dtype(dtype).name} ({hp.eps})"
            )
        grad = grad.astype(dtype, copy=False)
        m, v = self.state["m"], self.state["v"]
        _inplace_axpby(m, 1.0, 1.0 - hp.beta1, grad - m)
        _inplace_axpby(v, 1.0, 1.0 - hp.beta2, grad * grad - v)
        if hp.amsgrad:
            vhat = self.state["vhat"]
            xp.maximum(vhat, v, out=vhat)
        else:
            vhat = v
        vhat = vhat.astype(dtype, copy=False)
        step = self.alpha_t / (xp.sqrt(vhat) + hp.eps)
        if hp.adabound:
            lower, upper = self.bounds
            step = xp.clip(step, lower, upper)
        _inplace_axpby(param.array, 1.0 - hp.eta * hp.weight_decay_rate, -hp.eta, step * m)

    @property
    def alpha_t(self) -> float:
        """The bias-corrected step size ``alpha sqrt(1 - beta2^t) / (1 - beta1^t)``."""
        return _learning_rate(self.hyperparam, self.t)

    @property
    def lr(self) -> float:
        """Deprecated alias of :attr:`alpha_t`."""
        warnings.warn(
            "AdamRule.lr has been renamed to AdamRule.alpha_t. Use of AdamRule.lr is deprecated "
            "in Chainer v6.",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.alpha_t

    @property
    def bounds(self) -> tuple[float, float]:
        """AdaBound's (lower, upper) step bounds at the current ``t``."""
        if self.t == 0:
            raise RuntimeError(
                "Can't determine the bounds of AdaBound optimizer because the update steps have "
                "not been started."
            )
        hp = self.hyperparam
        final_lr = hp.final_lr * hp.alpha / self.initial_alpha
        lower = final_lr * (1.0 - 1.0 / (hp.gamma * self.t + 1))
        upper = final_lr * (1.0 + 1.0 / (hp.gamma * self.t))
        return lower, upper


class Adam(GradientMethod):
    """Adam (Kingma & Ba), with chainer's defaults and options (see the module)."""

    alpha = HyperparameterProxy("alpha")
    beta1 = HyperparameterProxy("beta1")
    beta2 = HyperparameterProxy("beta2")
    eps = HyperparameterProxy("eps")
    eta = HyperparameterProxy("eta")
    weight_decay_rate = HyperparameterProxy("weight_decay_rate")
    amsgrad = HyperparameterProxy("amsgrad")
    adabound = HyperparameterProxy("adabound")
    final_lr = HyperparameterProxy("final_lr")
    gamma = HyperparameterProxy("gamma")

    def __init__(
        self,
        alpha: float = _adam_defaults.alpha,
        beta1: float = _adam_defaults.beta1,
        beta2: float = _adam_defaults.beta2,
        eps: float = _adam_defaults.eps,
        eta: float = _adam_defaults.eta,
        weight_decay_rate: float = _adam_defaults.weight_decay_rate,
        amsgrad: bool = _adam_defaults.amsgrad,
        adabound: bool = _adam_defaults.adabound,
        final_lr: float = _adam_defaults.final_lr,
        gamma: float = _adam_defaults.gamma,
    ) -> None:
        super().__init__()
        hp = self.hyperparam
        hp.alpha, hp.beta1, hp.beta2, hp.eps, hp.eta = alpha, beta1, beta2, eps, eta
        hp.weight_decay_rate, hp.amsgrad, hp.adabound = weight_decay_rate, amsgrad, adabound
        hp.final_lr, hp.gamma = final_lr, gamma

    def create_update_rule(self) -> AdamRule:
        return AdamRule(self.hyperparam)

    @property
    def alpha_t(self) -> float:
        """The bias-corrected step size at the optimizer's ``t``."""
        return _learning_rate(self.hyperparam, self.t)

    @property
    def lr(self) -> float:
        """Deprecated alias of :attr:`alpha_t`."""
        warnings.warn(
            "Adam.lr has been renamed to AdamRule.alpha_t. Use of Adam.lr is deprecated in "
            "Chainer v6.",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.alpha_t


class AdamW(Adam):
    """Adam with decoupled weight decay (``weight_decay_rate``)."""

    def __init__(
        self,
        alpha: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
        eta: float = 1.0,
        weight_decay_rate: float = 0,
    ) -> None:
        super().__init__(alpha, beta1, beta2, eps, eta, weight_decay_rate)


class AMSGrad(Adam):
    """Adam with ``amsgrad=True``."""

    def __init__(
        self,
        alpha: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
        eta: float = 1.0,
    ) -> None:
        super().__init__(alpha, beta1, beta2, eps, eta, amsgrad=True)


class AdaBound(Adam):
    """Adam with ``adabound=True``."""

    def __init__(
        self,
        alpha: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        final_lr: float = 0.1,
        gamma: float = 1e-3,
        eps: float = 1e-8,
        eta: float = 1.0,
    ) -> None:
        super().__init__(
            alpha, beta1, beta2, eps, eta, adabound=True, final_lr=final_lr, gamma=gamma
        )


class AMSBound(Adam):
    """Adam with ``amsgrad=True`` and ``adabound=True``."""

    def __init__(
        self,
        alpha: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        final_lr: float = 0.1,
        gamma: float = 1e-3,
        eps: float = 1e-8,
        eta: float = 1.0,
    ) -> None:
        super().__init__(
            alpha,
            beta1,
            beta2,
            eps,
            eta,
            amsgrad=True,
            adabound=True,
            final_lr=final_lr,
            gamma=gamma,
        )


# -- RMSprop, AdaGrad, AdaDelta, NesterovAG, RMSpropGraves, SMORMS3, CorrectedMomentumSGD --------
# chainer 7.8.1's CPU update formulas (``update_core_cpu``), in its operation order. Each is
# one table entry: its hyper-parameters with chainer's defaults (in the constructor's order),
# its state arrays (zeros, or ones) and its step on (hyper-parameters, state, gradient, array,
# array module).


def _rmsprop(hp: Any, st: dict[str, Any], grad: Any, p: Any, xp: Any) -> None:
    eps = grad.dtype.type(hp.eps)
    if hp.eps != 0 and eps == 0:
        raise ValueError(f"eps of RMSprop optimizer is too small for {grad.dtype.name} ({hp.eps})")
    ms = st["ms"]
    ms *= hp.alpha
    ms += (1 - hp.alpha) * grad * grad
    denom = xp.sqrt(ms + eps) if hp.eps_inside_sqrt else xp.sqrt(ms) + eps
    p -= hp.lr * grad / denom


def _ada_grad(hp: Any, st: dict[str, Any], grad: Any, p: Any, xp: Any) -> None:
    h = st["h"]
    h += grad * grad
    p -= hp.lr * grad / (xp.sqrt(h) + hp.eps)


def _ada_delta(hp: Any, st: dict[str, Any], grad: Any, p: Any, xp: Any) -> None:
    msg, msdx = st["msg"], st["msdx"]
    msg *= hp.rho
    msg += (1 - hp.rho) * grad * grad
    dx = xp.sqrt((msdx + hp.eps) / (msg + hp.eps)) * grad
    msdx *= hp.rho
    msdx += (1 - hp.rho) * dx * dx
    p -= dx


def _nesterov_ag(hp: Any, st: dict[str, Any], grad: Any, p: Any, xp: Any) -> None:
    v = st["v"]
    v *= hp.momentum
    v -= hp.lr * grad
    p += hp.momentum * hp.momentum * v
    p -= (1 + hp.momentum) * hp.lr * grad


def _rmsprop_graves(hp: Any, st: dict[str, Any], grad: Any, p: Any, xp: Any) -> None:
    n, g, delta = st["n"], st["g"], st["delta"]
    n *= hp.alpha
    n += (1 - hp.alpha) * grad * grad
    g *= hp.alpha
    g += (1 - hp.alpha) * grad
    delta *= hp.momentum
    delta -= hp.lr * grad / xp.sqrt(n - g * g + hp.eps)
    p += delta


def _smorms3(hp: Any, st: dict[str, Any], grad: Any, p: Any, xp: Any) -> None:
    mem, g, g2 = st["mem"], st["g"], st["g2"]
    r = 1 / (mem + 1)
    g = (1 - r) * g + r * grad
    g2 = (1 - r) * g2 + r * grad * grad
    x = g * g / (g2 + hp.eps)
    p -= grad * xp.minimum(x, hp.lr) / (xp.sqrt(g2) + hp.eps)
    st["mem"], st["g"], st["g2"] = 1 + mem * (1 - x), g, g2


def _corrected_momentum_sgd(hp: Any, st: dict[str, Any], grad: Any, p: Any, xp: Any) -> None:
    v = st["v"]
    v *= hp.momentum
    v -= grad
    p += hp.lr * v


#: name -> (hyper-parameters with defaults, state arrays: name -> initial fill, step, formula)
_MORE: dict[str, tuple[dict[str, Any], dict[str, float], Any, str]] = {
    "RMSprop": (
        {"lr": 0.01, "alpha": 0.99, "eps": 1e-8, "eps_inside_sqrt": False},
        {"ms": 0.0},
        _rmsprop,
        "``ms = alpha ms + (1 - alpha) g^2; p -= lr g / (sqrt(ms) + eps)`` (``sqrt(ms + eps)`` "
        "with ``eps_inside_sqrt``)",
    ),
    "AdaGrad": (
        {"lr": 0.001, "eps": 1e-8},
        {"h": 0.0},
        _ada_grad,
        "``h += g^2; p -= lr g / (sqrt(h) + eps)``",
    ),
    "AdaDelta": (
        {"rho": 0.95, "eps": 1e-6},
        {"msg": 0.0, "msdx": 0.0},
        _ada_delta,
        "``msg = rho msg + (1 - rho) g^2; dx = sqrt((msdx + eps) / (msg + eps)) g; "
        "msdx = rho msdx + (1 - rho) dx^2; p -= dx``",
    ),
    "NesterovAG": (
        {"lr": 0.01, "momentum": 0.9},
        {"v": 0.0},
        _nesterov_ag,
        "``v = momentum v - lr g; p += momentum^2 v - (1 + momentum) lr g``",
    ),
    "RMSpropGraves": (
        {"lr": 1e-4, "alpha": 0.95, "momentum": 0.9, "eps": 1e-4},
        {"n": 0.0, "g": 0.0, "delta": 0.0},
        _rmsprop_graves,
        "``n = alpha n + (1 - alpha) g^2; m = alpha m + (1 - alpha) g; "
        "delta = momentum delta - lr g / sqrt(n - m^2 + eps); p += delta``",
    ),
    "SMORMS3": (
        {"lr": 0.001, "eps": 1e-16},
        {"mem": 1.0, "g": 0.0, "g2": 0.0},
        _smorms3,
        "``r = 1 / (mem + 1); m = (1 - r) m + r g; m2 = (1 - r) m2 + r g^2; "
        "x = m^2 / (m2 + eps); p -= g min(x, lr) / (sqrt(m2) + eps); mem = 1 + mem (1 - x)``",
    ),
    "CorrectedMomentumSGD": (
        {"lr": 0.01, "momentum": 0.9},
        {"v": 0.0},
        _corrected_momentum_sgd,
        "``v = momentum v - g; p += lr v``",
    ),
}


def _more_method(name: str) -> tuple[type[UpdateRule], type[GradientMethod]]:
    """The update rule and optimizer classes of ``_MORE[name]``, with chainer's names,
    constructor arguments (in chainer's order) and hyper-parameter proxies."""
    defaults, states, step, formula = _MORE[name]
    base = Hyperparameter()
    for k, v in defaults.items():
        setattr(base, k, v)

    def rule_init(self: Any, parent_hyperparam: Hyperparameter | None = None, **hps: Any) -> None:
        UpdateRule.__init__(self, parent_hyperparam or base)
        for k, v in hps.items():
            if k not in defaults:
                raise TypeError(f"chainer {name}Rule: unexpected argument {k!r}")
            if v is not None:
                setattr(self.hyperparam, k, v)

    def init_state(self: Any, param: Any) -> None:
        xp = param.device.xp
        for k, fill in states.items():
            self.state[k] = xp.ones_like(param.array) if fill else xp.zeros_like(param.array)

    def update_core(self: Any, param: Any) -> None:
        grad = param.grad
        if grad is None:
            return
        step(self.hyperparam, self.state, grad, param.array, param.device.xp)

    rule = type(
        f"{name}Rule",
        (UpdateRule,),
        {
            "__doc__": f"chainer's {name} update: {formula}.",
            "is_elementwise": True,
            "__init__": rule_init,
            "init_state": init_state,
            "update_core": update_core,
        },
    )
    order = list(defaults)

    def method_init(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(order):
            raise TypeError(f"chainer {name}: takes at most {len(order)} arguments")
        values = dict(defaults)
        values.update(zip(order, args))
        for k, v in kwargs.items():
            if k not in defaults:
                raise TypeError(f"chainer {name}: unexpected argument {k!r}")
            values[k] = v
        GradientMethod.__init__(self)
        for k, v in values.items():
            setattr(self.hyperparam, k, v)

    sig = ", ".join(f"{k}={v!r}" for k, v in defaults.items())
    attrs: dict[str, Any] = {
        "__doc__": f"chainer's ``{name}({sig})``: {formula}.",
        "__init__": method_init,
        "create_update_rule": lambda self: rule(self.hyperparam),
    }
    attrs.update({k: HyperparameterProxy(k) for k in defaults})
    method = type(name, (GradientMethod,), attrs)
    rule.__module__ = method.__module__ = __name__
    return rule, method


RMSpropRule, RMSprop = _more_method("RMSprop")
AdaGradRule, AdaGrad = _more_method("AdaGrad")
AdaDeltaRule, AdaDelta = _more_method("AdaDelta")
NesterovAGRule, NesterovAG = _more_method("NesterovAG")
RMSpropGravesRule, RMSpropGraves = _more_method("RMSpropGraves")
SMORMS3Rule, SMORMS3 = _more_method("SMORMS3")
CorrectedMomentumSGDRule, CorrectedMomentumSGD = _more_method("CorrectedMomentumSGD")
__all__ += [n for m in _MORE for n in (m, f"{m}Rule")]

from ._msvag import MSVAG, MSVAGRule  # noqa: E402

__all__ += ["MSVAG", "MSVAGRule"]

# chainer's module paths (``chainer.optimizers.adam``...) holding these optimizers
from ._module_paths import install_optimizers  # noqa: E402

install_optimizers(__name__)


def __getattr__(name: str) -> Any:
    if name[:1].isupper():  # another chainer optimizer class
        raise NotImplementedError(
            f"chainer.optimizers.{name} is not supported by gradhub (supported: "
            f"{', '.join(n for n in __all__ if not n.endswith('Rule'))}); see {PAGE}"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
