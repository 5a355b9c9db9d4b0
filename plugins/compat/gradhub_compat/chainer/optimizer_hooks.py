"""chainer's optimizer hooks (``chainer.optimizer_hooks``), run by ``optimizer.add_hook(hook)``
before the update (``timing = 'pre'``), on the gradients in place, as chainer 7.8.1:

- :class:`WeightDecay` ``(rate)``: ``g += rate * p`` for each parameter (the gradient of
  ``rate / 2 * ||p||^2``);
- :class:`Lasso` ``(rate)``: ``g += rate * sign(p)``;
- :class:`GradientClipping` ``(threshold)``: when the L2 norm of all gradients together,
  ``norm = sqrt(sum ||g||^2)``, exceeds ``threshold``, every gradient is scaled by
  ``threshold / norm``;
- :class:`GradientHardClipping` ``(lower_bound, upper_bound)``: ``g = clip(g, lower, upper)``.

Example::

    >>> import numpy as np
    >>> from gradhub_compat.chainer import optimizers, optimizer_hooks
    >>> import gradhub_compat.chainer.links as L
    >>> layer = L.Linear(1, 1, initialW=np.array([[2.0]], dtype=np.float32), nobias=True)
    >>> opt = optimizers.SGD(lr=1.0).setup(layer)
    >>> opt.add_hook(optimizer_hooks.WeightDecay(0.1))
    >>> layer.cleargrads()
    >>> opt.update()                  # g = 0 + 0.1 * 2; W = 2 - 0.2
    >>> layer.W.array
    array([[1.8]], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._device import activate

__all__ = ["GradientClipping", "GradientHardClipping", "Lasso", "WeightDecay"]


class WeightDecay:
    """``g += rate * p`` for each parameter (L2 regularization)."""

    name = "WeightDecay"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def __call__(self, rule: Any, param: Any) -> None:
        p, g = param.array, param.grad
        if p is None or g is None:
            return
        with activate(p):
            g += self.rate * p


class Lasso:
    """``g += rate * sign(p)`` for each parameter (L1 regularization)."""

    name = "Lasso"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def __call__(self, rule: Any, param: Any) -> None:
        p, g = param.array, param.grad
        if p is None or g is None:
            return
        with activate(p):
            g += self.rate * param.device.xp.sign(p)


class GradientClipping:
    """Scale all gradients by ``threshold / norm`` when their joint L2 norm exceeds
    ``threshold``."""

    name = "GradientClipping"
    timing = "pre"

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold

    def __call__(self, opt: Any) -> None:
        params = list(opt.target.params(False))
        if not params:
            return
        groups: dict[str, list[Any]] = {}  # by device, as chainer
        for param in params:
            groups.setdefault(param.device.name, []).append(param)
        sq_sums = []
        for group in groups.values():
            with activate(group[0].array):
                dots = []
                for param in group:
                    g = param.grad.ravel()
                    dots.append(g.dot(g))
                sq_sums.append(sum(dots))
        if len(sq_sums) == 1:
            with activate(params[0].array):
                norm = params[0].device.xp.sqrt(sq_sums[0])
                rate = float(self.threshold) / float(norm)  # (chainer: a float64 quotient)
        else:
            rate = float(self.threshold / np.sqrt(sum(float(s) for s in sq_sums)))
        if rate >= 1:
            return
        for param in params:
            with activate(param.array):
                grad = param.grad
                grad *= grad.dtype.type(rate)  # (numpy 1's in-place cast of the scalar)


class GradientHardClipping:
    """``g = clip(g, lower_bound, upper_bound)`` elementwise, in place."""

    name = "GradientHardClipping"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, lower_bound: float, upper_bound: float) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def __call__(self, rule: Any, param: Any) -> None:
        grad = param.grad
        if grad is None:
            return
        with activate(grad):
            param.device.xp.clip(grad, self.lower_bound, self.upper_bound, out=grad)
