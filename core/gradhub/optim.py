"""Two small optimizers, :class:`SGD` (with momentum) and :class:`Adam`.

They update the ``.d`` arrays of parameter Variables in place, with the array module of each
parameter's device (so they work on every device), under :func:`gradhub.no_grad`. Gradients are
passed to :meth:`update` (arrays or Variables, e.g. the result of :func:`gradhub.grad`) or, when
omitted, read from each parameter's ``.g``.

Example::

    >>> import gradhub as gh
    >>> from gradhub.optim import SGD
    >>> w = gh.Variable([1.0, -2.0])
    >>> opt = SGD([w], lr=0.1, momentum=0.0)
    >>> (w * w).sum().backward()
    >>> opt.update()
    >>> w.d
    array([ 0.8, -1.6], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .modes import no_grad
from .variable import Variable


def _param_list(params: Iterable[Variable] | Mapping[str, Variable], who: str) -> list[Variable]:
    ps = list(params.values()) if isinstance(params, Mapping) else list(params)
    for i, p in enumerate(ps):
        if not isinstance(p, Variable):
            raise TypeError(f"{who}: params[{i}] must be a Variable, got {type(p).__name__}")
        if p.dtype.kind != "f":
            raise TypeError(f"{who}: params[{i}] must hold floating-point data, got {p.dtype}")
    return ps


class _Optimizer:
    """Shared parts: the parameter list and gradient fetching."""

    def __init__(self, params: Iterable[Variable] | Mapping[str, Variable]) -> None:
        self.params = _param_list(params, type(self).__name__)
        self.t = 0

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
        """Apply one step; ``grads`` (one per parameter, None to skip one) default to ``.g``."""
        gs = self._grads(grads)
        self.t += 1
        with no_grad():
            for k, (p, g) in enumerate(zip(self.params, gs)):
                if g is None:
                    continue
                with p.device.activate():  # CuPy works on the current device
                    self._step(k, p, g if g.dtype == p.dtype else g.astype(p.dtype))

    def _step(self, k: int, p: Variable, g: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class SGD(_Optimizer):
    """Gradient descent with (heavy-ball) momentum.

    .. math:: v \\leftarrow \\mu v - \\eta g, \\qquad p \\leftarrow p + v

    Example::

        >>> import gradhub as gh
        >>> from gradhub.optim import SGD
        >>> w = gh.Variable([3.0])
        >>> opt = SGD([w], lr=0.5, momentum=0.0)
        >>> opt.update([gh.Variable([2.0])])
        >>> w.d
        array([2.], dtype=float32)
    """

    def __init__(
        self,
        params: Iterable[Variable] | Mapping[str, Variable],
        lr: float = 0.01,
        momentum: float = 0.9,
    ) -> None:
        super().__init__(params)
        if not lr > 0:
            raise ValueError(f"SGD: lr must be positive, got {lr}")
        if not 0 <= momentum < 1:
            raise ValueError(f"SGD: momentum must be in [0, 1), got {momentum}")
        self.lr = float(lr)
        self.momentum = float(momentum)
        self.velocity: list[Any] = [None] * len(self.params)

    def _step(self, k: int, p: Variable, g: Any) -> None:
        v = self.velocity[k]
        if v is None:
            v = self.velocity[k] = p.device.xp.zeros_like(p.d)
        v *= self.momentum
        v -= self.lr * g
        p.d += v


class Adam(_Optimizer):
    """Adam (Kingma and Ba, 2015) with bias correction.

    .. math::
        m \\leftarrow \\beta_1 m + (1-\\beta_1) g, \\quad
        v \\leftarrow \\beta_2 v + (1-\\beta_2) g^2, \\quad
        p \\leftarrow p - \\eta \\frac{m / (1-\\beta_1^t)}{\\sqrt{v / (1-\\beta_2^t)} + \\epsilon}

    ``t`` counts the updates of each parameter: one skipped (a None gradient) keeps its count, as
    PyTorch's and nnabla's per-parameter state.

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
    ) -> None:
        super().__init__(params)
        if not lr > 0:
            raise ValueError(f"Adam: lr must be positive, got {lr}")
        for name, b in (("beta1", beta1), ("beta2", beta2)):
            if not 0 <= b < 1:
                raise ValueError(f"Adam: {name} must be in [0, 1), got {b}")
        if not eps > 0:
            raise ValueError(f"Adam: eps must be positive, got {eps}")
        self.lr, self.beta1, self.beta2, self.eps = float(lr), float(beta1), float(beta2), eps
        self.m: list[Any] = [None] * len(self.params)
        self.v: list[Any] = [None] * len(self.params)
        self.steps = [0] * len(self.params)  # updates per parameter: the t of the bias correction

    def _step(self, k: int, p: Variable, g: Any) -> None:
        xp = p.device.xp
        if self.m[k] is None:
            self.m[k] = xp.zeros_like(p.d)
            self.v[k] = xp.zeros_like(p.d)
        m, v = self.m[k], self.v[k]
        m *= self.beta1
        m += (1 - self.beta1) * g
        v *= self.beta2
        v += (1 - self.beta2) * (g * g)
        self.steps[k] += 1
        t = self.steps[k]
        c1 = 1 - self.beta1**t
        c2 = 1 - self.beta2**t
        p.d -= (self.lr / c1) * m / (xp.sqrt(v / c2) + self.eps)
