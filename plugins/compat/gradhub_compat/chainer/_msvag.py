"""chainer 7.8.1's M-SVAG optimizer (``chainer.optimizers.MSVAG``, re-exported by
:mod:`gradhub_compat.chainer.optimizers`): :class:`MSVAG` and its update rule
:class:`MSVAGRule`, with chainer's defaults, state arrays (``m``, ``v``) and CPU formula.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.chainer.links as L
    >>> from gradhub_compat.chainer import optimizers
    >>> opt = optimizers.MSVAG().setup(L.Linear(2, 1))
    >>> opt.lr, opt.beta, opt.eta, opt.weight_decay_rate
    (0.1, 0.9, 1.0, 0)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .optimizer import GradientMethod, Hyperparameter, HyperparameterProxy, UpdateRule

__all__ = ["MSVAG", "MSVAGRule"]

_defaults = Hyperparameter()
_defaults.lr = 0.1
_defaults.beta = 0.9
_defaults.eta = 1.0
_defaults.weight_decay_rate = 0


class MSVAGRule(UpdateRule):
    """The M-SVAG update of one parameter (Balles and Hennig, 2017, with the decoupled weight
    decay of Loshchilov and Hutter). With ``b = beta`` and ``b_t = beta^t`` (the rule's
    ``beta_power``, ``beta`` before the first update)::

        rho = min((1 - b)^2 (1 - b_t^2) / ((1 - b_t)^2 (1 - b^2)), 0.9999)
        m += (1 - b) (g - m),   v += (1 - b) (g^2 - v)
        mt = m / (1 - b_t),     vt = v / (1 - b_t),   s = (vt - mt^2) / (1 - rho)
        factor = clip(mt^2 / (mt^2 + rho s), 0, 1)   (0 where it is NaN)
        p -= eta (lr mt factor + weight_decay_rate p)

    then ``beta_power *= beta``. The states ``m`` and ``v`` start at zeros.
    """

    is_elementwise = True

    def __init__(
        self,
        parent_hyperparam: Hyperparameter | None = None,
        lr: float | None = None,
        beta: float | None = None,
        eta: float | None = None,
        weight_decay_rate: float | None = None,
    ) -> None:
        super().__init__(parent_hyperparam or _defaults)
        for name, value in (
            ("lr", lr),
            ("beta", beta),
            ("eta", eta),
            ("weight_decay_rate", weight_decay_rate),
        ):
            if value is not None:
                setattr(self.hyperparam, name, value)
        self.beta_power = self.hyperparam.beta

    def init_state(self, param: Any) -> None:
        assert self.state is not None
        xp = param.device.xp
        self.state["m"] = xp.zeros_like(param.array)
        self.state["v"] = xp.zeros_like(param.array)

    def update_core(self, param: Any) -> None:
        grad = param.grad
        if grad is None:
            return
        assert self.state is not None
        hp = self.hyperparam
        xp = param.device.xp
        m, v = self.state["m"], self.state["v"]
        bp = self.beta_power
        rho = ((1.0 - hp.beta) ** 2) * (1.0 - bp**2) / (((1.0 - bp) ** 2) * (1.0 - hp.beta**2))
        rho = min(rho, 0.9999)
        m += (1 - hp.beta) * (grad - m)
        v += (1 - hp.beta) * (grad * grad - v)
        mt = m / (1 - bp)
        vt = v / (1 - bp)
        mt2 = mt**2
        s = (vt - mt2) / (1 - rho)
        with np.errstate(invalid="ignore", divide="ignore"):
            factor = xp.clip(mt2 / (mt2 + rho * s), 0, 1)
        factor = xp.where(xp.isnan(factor), 0, factor).astype(factor.dtype, copy=False)
        p = param.array
        p -= hp.eta * (hp.lr * mt * factor + hp.weight_decay_rate * p)
        self.beta_power *= hp.beta


class MSVAG(GradientMethod):
    """chainer's ``MSVAG(lr=0.1, beta=0.9, eta=1.0, weight_decay_rate=0)``: the M-SVAG
    optimizer (see :class:`MSVAGRule` for the update of each parameter).

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> from gradhub_compat.chainer import optimizers
        >>> link = chainer.Link()
        >>> with link.init_scope():
        ...     link.w = chainer.Parameter(np.array([1.0], np.float32))
        >>> opt = optimizers.MSVAG(lr=0.1).setup(link)
        >>> link.w.grad = np.array([2.0], np.float32)
        >>> opt.update()
        >>> link.w.array                   # the first step: factor 1, p - lr g
        array([0.8], dtype=float32)
    """

    lr = HyperparameterProxy("lr")
    beta = HyperparameterProxy("beta")
    eta = HyperparameterProxy("eta")
    weight_decay_rate = HyperparameterProxy("weight_decay_rate")

    def __init__(
        self,
        lr: float = _defaults.lr,
        beta: float = _defaults.beta,
        eta: float = _defaults.eta,
        weight_decay_rate: float = _defaults.weight_decay_rate,
    ) -> None:
        super().__init__()
        self.hyperparam.lr = lr
        self.hyperparam.beta = beta
        self.hyperparam.eta = eta
        self.hyperparam.weight_decay_rate = weight_decay_rate

    def create_update_rule(self) -> MSVAGRule:
        return MSVAGRule(self.hyperparam)
