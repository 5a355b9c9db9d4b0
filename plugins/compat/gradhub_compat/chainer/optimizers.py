"""chainer's optimizers: ``from gradhub_compat.chainer import optimizers`` (``chainer.optimizers``).

:class:`SGD`, :class:`MomentumSGD` and :class:`Adam` (with :class:`AdamW`, :class:`AMSGrad`,
:class:`AdaBound`, :class:`AMSBound`), with chainer 7.8.1's defaults and CPU update formulas,
applied in place to each parameter's array (``p`` the parameter, ``g`` its gradient):

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


def __getattr__(name: str) -> Any:
    if name[:1].isupper():  # another chainer optimizer class
        raise NotImplementedError(
            f"chainer.optimizers.{name} is not supported by gradhub (supported: "
            f"{', '.join(n for n in __all__ if not n.endswith('Rule'))}); see {PAGE}"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
