"""mxnet 1.9.1's optimizers (``mx.optimizer``): :class:`Optimizer`, its registered subclasses
(``SGD``, ``NAG``, ``Adam``, ``AdaGrad``, ``AdaDelta``, ``RMSProp``, ``Signum``, ``FTML``,
``Adamax``, ``Nadam``, ``LAMB``), :func:`create`, :func:`register`, :func:`get_updater` and the
:class:`Updater` that applies an optimizer to indexed weights.

``update(index, weight, grad, state)`` changes ``weight`` (an NDArray) in place, with the
arithmetic of mxnet's update kernels (``src/operator/optimizer_op-inl.h``) or, for the optimizers
mxnet writes in Python (AdaGrad, AdaDelta, Adamax, Nadam), of its NDArray expressions, in the
weight's dtype (float32: the same numbers as mxnet 1.9.1 up to float32 rounding). The order of
gradient rescaling, clipping and weight decay differs between optimizers, as in mxnet: SGD, NAG,
Signum and LAMB clip ``rescale_grad * grad`` and add ``wd * weight`` afterwards, Adam, RMSProp,
FTML, Adamax and Nadam clip ``rescale_grad * grad + wd * weight``, AdaGrad and AdaDelta add the
weight decay to the step, not to the gradient.

Updater states are saved by :meth:`Updater.get_states` in a byte format of this layer (a numpy
``.npz`` archive read with ``allow_pickle=False`` and a JSON header): nothing is pickled or
unpickled; mxnet's own states (a pickle) are refused with a clear error.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> opt = mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9)
    >>> w, g = mx.nd.array([1.0, 2.0]), mx.nd.array([0.5, -1.0])
    >>> state = opt.create_state(0, w)
    >>> opt.update(0, w, g, state)
    >>> w.asnumpy()
    array([0.95, 2.1 ], dtype=float32)
"""

from __future__ import annotations

import io
import json
import math
import warnings
from typing import Any

import numpy as np

from .base import MXNetError
from .ndarray import NDArray, zeros

__all__ = [
    "FTML",
    "LAMB",
    "NAG",
    "SGD",
    "AdaDelta",
    "AdaGrad",
    "Adam",
    "Adamax",
    "Ftrl",
    "Nadam",
    "Optimizer",
    "RMSProp",
    "Signum",
    "Updater",
    "ccSGD",
    "create",
    "get_updater",
    "register",
]

_DOCS = "docs/migration-mxnet.md"


def _check_arrays(what: str, weight: Any, grad: Any) -> None:
    for arg, v in (("weight", weight), ("grad", grad)):
        if not isinstance(v, NDArray):
            raise TypeError(f"{what}: {arg} must be an NDArray, got {type(v).__name__}")
    if weight.shape != grad.shape:
        raise MXNetError(
            f"{what}: weight of shape {weight.shape} and grad of shape {grad.shape} differ"
        )
    if weight._arr.dtype.kind != "f":
        raise TypeError(f"{what}: weight must have a floating dtype, got {weight._arr.dtype.name}")


def _clip(x: Any, bound: Any) -> Any:
    """mshadow's ``clip::Map``: ``x`` limited to ``[-bound, bound]``."""
    return x.clip(-bound, bound)


def _sign(x: Any) -> Any:
    """``(x > 0) - (x < 0)`` in ``x``'s dtype."""
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


class Optimizer:
    """The base class of mxnet's optimizers.

    ``rescale_grad`` multiplies the gradient (``1 / batch_size`` in ``gluon.Trainer``),
    ``clip_gradient`` clips it to ``[-c, c]``, ``wd`` is the weight decay,
    ``learning_rate`` the learning rate (0.01 when neither it nor ``lr_scheduler`` is given; a
    given one overrides the scheduler's ``base_lr``, as mxnet). The learning rate and weight decay
    of index ``i`` are multiplied by ``param_dict[i].lr_mult``/``wd_mult`` (Gluon parameters), or
    else by :meth:`set_lr_mult`/:meth:`set_wd_mult`'s entry for ``i`` or for
    ``param_idx2name[i]``. As mxnet 1.9.1, given ``param_idx2name``, every name that ends neither
    in ``_weight`` nor in ``_gamma`` gets weight-decay multiplier 0 (biases, betas: no weight
    decay); without it (and in ``gluon.Trainer``, which passes ``param_dict``) every weight gets
    ``wd``. ``num_update`` is the largest number of updates of one index (the step the
    ``lr_scheduler`` sees). ``multi_precision`` keeps a float32 copy of float16 weights.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> opt = mx.optimizer.SGD(learning_rate=0.1, wd=0.1,
        ...                        param_idx2name={0: "fc_weight", 1: "fc_bias"})
        >>> opt._get_wd(0), opt._get_wd(1)
        (0.1, 0.0)
    """

    opt_registry: dict[str, type[Optimizer]] = {}

    def __init__(
        self,
        rescale_grad: float = 1.0,
        param_idx2name: dict[int, str] | None = None,
        wd: float = 0.0,
        clip_gradient: float | None = None,
        learning_rate: float | None = None,
        lr_scheduler: Any = None,
        sym: Any = None,
        begin_num_update: int = 0,
        multi_precision: bool = False,
        param_dict: dict[Any, Any] | None = None,
    ) -> None:
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if self.lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if self.lr_scheduler is not None and learning_rate is not None:
            if self.lr_scheduler.base_lr != learning_rate:
                # (mxnet 1.9.1 prints this warning rather than issuing it)
                print(
                    UserWarning(
                        "learning rate from ``lr_scheduler`` has been overwritten by "
                        "``learning_rate`` in optimizer."
                    )
                )
                self.lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult: dict[Any, float] = {}
        self.wd_mult: dict[Any, float] = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts: dict[int, dict[Any, int]] = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise TypeError(
                f"{type(self).__name__}: param_idx2name should be a dict of param indexes to "
                f"names, got {type(param_idx2name).__name__}"
            )
        self.idx2name = param_idx2name.copy()
        if sym is not None:
            raise NotImplementedError(
                f"{type(self).__name__}: sym= (multipliers read from a Symbol's attributes) is "
                f"not supported; pass set_lr_mult/set_wd_mult by name ({_DOCS})"
            )
        self.sym_info = ()
        self.param_dict = param_dict if param_dict else {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    @staticmethod
    def register(klass: type[Optimizer]) -> type[Optimizer]:
        """Register an optimizer class under its lower-cased name (a later class of the same
        name replaces it, with a warning, as mxnet)."""
        if not isinstance(klass, type):
            raise TypeError(f"Optimizer.register: expected a class, got {type(klass).__name__}")
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn(
                f"WARNING: New optimizer {klass.__module__}.{klass.__name__} is overriding "
                f"existing optimizer {old.__module__}.{old.__name__}",
                stacklevel=2,
            )
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name: str, **kwargs: Any) -> Optimizer:
        """The registered optimizer ``name`` (case-insensitive) built with ``kwargs``.

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> type(mx.optimizer.Optimizer.create_optimizer("adam", learning_rate=0.1)).__name__
            'Adam'
        """
        if not isinstance(name, str):
            raise TypeError(f"create_optimizer: name must be a str, got {type(name).__name__}")
        if name.lower() in Optimizer.opt_registry:
            return Optimizer.opt_registry[name.lower()](**kwargs)
        raise ValueError(f"Cannot find optimizer {name}")

    @property
    def learning_rate(self) -> float:
        """The current learning rate: the scheduler's at ``num_update``, else ``lr``."""
        if self.lr_scheduler is not None:
            return float(self.lr_scheduler(self.num_update))
        return self.lr  # type: ignore[return-value]

    def create_state(self, index: Any, weight: NDArray) -> Any:
        """The optimizer state of one weight (None for the base class)."""
        return None

    def create_state_multi_precision(self, index: Any, weight: NDArray) -> Any:
        """:meth:`create_state`, with a float32 copy of a float16 weight first when
        ``multi_precision`` (``(weight32, state)``)."""
        if self.multi_precision and weight._arr.dtype == np.float16:
            w32 = weight.astype(np.float32)
            return (w32, self.create_state(index, w32))
        if weight._arr.dtype == np.float16 and not self.multi_precision:
            warnings.warn(
                "Accumulating with float16 in optimizer can lead to poor accuracy or slow "
                "convergence. Consider using multi_precision=True option of the optimizer",
                stacklevel=2,
            )
        return self.create_state(index, weight)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """Update ``weight`` in place from ``grad`` and ``state``."""
        raise NotImplementedError(f"{type(self).__name__}.update is not implemented")

    def update_multi_precision(
        self, index: Any, weight: NDArray, grad: NDArray, state: Any
    ) -> None:
        """:meth:`update`; a float16 weight with ``multi_precision`` is updated through its
        float32 copy (the gradient cast to float32) and the copy cast back into it."""
        if self.multi_precision and weight._arr.dtype == np.float16:
            w32, inner = state
            self.update(index, w32, grad.astype(np.float32), inner)
            weight._arr[...] = w32._arr.astype(weight._arr.dtype)
        else:
            self.update(index, weight, grad, state)

    def set_learning_rate(self, lr: float) -> None:
        """Set ``lr``; with an ``lr_scheduler`` raises ``UserWarning`` (as mxnet)."""
        if self.lr_scheduler is not None:
            raise UserWarning(
                "LRScheduler of the optimizer has already been defined. Note that "
                "set_learning_rate can mutate the value of the learning rate of the optimizer "
                "only when the LRScheduler of the optimizer is undefined."
            )
        self.lr = lr

    def set_lr_scale(self, args_lrscale: Any) -> None:
        """[DEPRECATED] raises ``DeprecationWarning``, as mxnet; use :meth:`set_lr_mult`."""
        raise DeprecationWarning

    def set_lr_mult(self, args_lr_mult: dict[Any, float]) -> None:
        """Learning-rate multipliers by index or parameter name (replacing earlier ones)."""
        self.lr_mult = {}
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult: dict[Any, float]) -> None:
        """Weight-decay multipliers by index or parameter name; as mxnet 1.9.1, every name of
        ``param_idx2name`` ending neither in ``_weight`` nor in ``_gamma`` first gets 0."""
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not (n.endswith("_weight") or n.endswith("_gamma")):
                self.wd_mult[n] = 0.0
        self.wd_mult.update(args_wd_mult)

    def _set_current_context(self, device_id: int) -> None:
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index: Any) -> None:
        indices = index if isinstance(index, (list, tuple)) else [index]
        for idx in indices:
            if idx not in self._index_update_count:
                self._index_update_count[idx] = self.begin_num_update
            self._index_update_count[idx] += 1
            self.num_update = max(self._index_update_count[idx], self.num_update)

    def _get_lrs(self, indices: list[Any]) -> list[float]:
        if self.lr_scheduler is not None:
            lr = self.lr_scheduler(self.num_update)
        elif self.lr is None:
            raise TypeError(
                f"{type(self).__name__}: no learning rate (learning_rate is None and there is no "
                "lr_scheduler)"
            )
        else:
            lr = self.lr
        lrs = [lr for _ in indices]
        for i, index in enumerate(indices):
            if index in self.param_dict:
                lrs[i] *= self.param_dict[index].lr_mult
            elif index in self.lr_mult:
                lrs[i] *= self.lr_mult[index]
            elif index in self.idx2name:
                lrs[i] *= self.lr_mult.get(self.idx2name[index], 1.0)
        return lrs  # type: ignore[return-value]

    def _get_lr(self, index: Any) -> float:
        return self._get_lrs([index])[0]

    def _get_wds(self, indices: list[Any]) -> list[float]:
        wds = [self.wd for _ in indices]
        for i, index in enumerate(indices):
            if index in self.param_dict:
                wds[i] *= self.param_dict[index].wd_mult
            elif index in self.wd_mult:
                wds[i] *= self.wd_mult[index]
            elif index in self.idx2name:
                wds[i] *= self.wd_mult.get(self.idx2name[index], 1.0)
        return wds

    def _get_wd(self, index: Any) -> float:
        return self._get_wds([index])[0]

    def _prepare(self, index: Any, weight: NDArray, grad: NDArray) -> tuple[float, float]:
        """Check the arrays, count the update, return ``(lr, wd)`` of ``index``."""
        _check_arrays(f"{type(self).__name__}.update", weight, grad)
        self._update_count(index)
        return self._get_lr(index), self._get_wd(index)

    def _clip_bound(self) -> float:
        """The kernels' ``clip_gradient`` (-1: off): mxnet passes it only when truthy."""
        return float(self.clip_gradient) if self.clip_gradient else -1.0


register = Optimizer.register


def _zeros_like(weight: NDArray, dtype: Any = None) -> NDArray:
    return zeros(weight.shape, weight.context, dtype=dtype or weight._arr.dtype)


def _scalars(dt: Any, *values: float) -> list[Any]:
    """The kernel parameters as ``dt`` scalars (mxnet casts them to the weight's DType)."""
    return [np.dtype(dt).type(v) for v in values]


def _write_weight(weight: NDArray, w32: NDArray, new: Any) -> None:
    """Store ``new`` in ``w32`` and, when ``w32`` is a float32 master copy, in ``weight``."""
    w32._arr[...] = new
    if w32 is not weight:
        weight._arr[...] = new.astype(weight._arr.dtype)


class _MomentumOptimizer(Optimizer):
    """What :class:`SGD` and :class:`NAG` share: a momentum state (none without momentum),
    a float32 master copy of float16 weights under ``multi_precision`` and the clipped,
    rescaled gradient; each one's ``_step`` keeps its own arithmetic."""

    momentum: float

    def create_state_multi_precision(self, index: Any, weight: NDArray) -> Any:
        if self.multi_precision and weight._arr.dtype == np.float16:
            w32 = weight.astype(np.float32)
            return (self.create_state(index, w32), w32)
        return super().create_state_multi_precision(index, weight)

    def create_state(self, index: Any, weight: NDArray) -> NDArray | None:
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        lr, wd = self._prepare(index, weight, grad)
        self._step(weight, weight, grad, state, lr, wd)

    def update_multi_precision(
        self, index: Any, weight: NDArray, grad: NDArray, state: Any
    ) -> None:
        if self.multi_precision and weight._arr.dtype == np.float16:
            lr, wd = self._prepare(index, weight, grad)
            mom, w32 = state
            self._step(weight, w32, grad, mom, lr, wd)
        else:
            self.update(index, weight, grad, state)

    def _step(
        self, weight: NDArray, w32: NDArray, grad: NDArray, mom: Any, lr: float, wd: float
    ) -> None:
        raise NotImplementedError

    def _momentum_inputs(self, w32: NDArray, grad: NDArray, lr: float, wd: float) -> Any:
        dt = w32._arr.dtype
        lr_, wd_, rg, m = _scalars(dt, lr, wd, self.rescale_grad, self.momentum)
        w = w32._arr
        g = rg * grad._arr.astype(dt)
        if self.clip_gradient:
            g = _clip(g, dt.type(self.clip_gradient))
        return dt, lr_, wd_, m, w, g


@register
class SGD(_MomentumOptimizer):
    """SGD with momentum and weight decay, as mxnet's ``multi_sgd_(mom_)update`` kernels (the
    ones mxnet 1.9.1 uses for dense arrays)::

        g = clip(rescale_grad * grad, clip_gradient)
        state = momentum * state - lr * wd * weight - lr * g    # momentum > 0
        weight = weight + state             # (without momentum: weight + (0 - lr wd w - lr g))

    ``lazy_update`` only concerns sparse gradients, which this layer does not have.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> opt = mx.optimizer.SGD(learning_rate=0.5)
        >>> w = mx.nd.array([1.0])
        >>> opt.update(0, w, mx.nd.array([1.0]), None)
        >>> w.asnumpy()
        array([0.5], dtype=float32)
    """

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = 4

    def _step(
        self, weight: NDArray, w32: NDArray, grad: NDArray, mom: Any, lr: float, wd: float
    ) -> None:
        _dt, lr_, wd_, m, w, g = self._momentum_inputs(w32, grad, lr, wd)
        # the kernels' order of operations: mom = momentum * mom - lr * wd * w - lr * g, then
        # w + mom (mom 0 without momentum)
        if self.momentum > 0 and mom is not None:
            mom._arr[...] = m * mom._arr - (lr_ * wd_) * w - lr_ * g
            new = w + mom._arr
        else:
            new = w + (-(lr_ * wd_) * w - lr_ * g)
        _write_weight(weight, w32, new)


@register
class ccSGD(SGD):
    """[DEPRECATED] the same as :class:`SGD` (kept by mxnet 1.9.1 for compatibility)."""


@register
class NAG(_MomentumOptimizer):
    """Nesterov accelerated gradient, as mxnet's ``nag_mom_update`` kernel::

        g = clip(rescale_grad * grad, clip_gradient)
        state = momentum * state
        new = weight - state + (momentum + 1) * (state - lr * (g + wd * weight))
        state = state - lr * (g + wd * new)        # (the kernel updates weight in place first)
        weight = new

    Without momentum it is :class:`SGD`'s ``sgd_update``: ``(1 - lr wd) w - lr g``.
    """

    def __init__(self, momentum: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum

    def _step(
        self, weight: NDArray, w32: NDArray, grad: NDArray, mom: Any, lr: float, wd: float
    ) -> None:
        dt, lr_, wd_, m, w, g = self._momentum_inputs(w32, grad, lr, wd)
        if self.momentum > 0 and mom is not None:
            mom._arr[...] = m * mom._arr
            new = w - mom._arr + (m + dt.type(1)) * (mom._arr - lr_ * (g + wd_ * w))
            # mxnet's kernel writes the weight in place first, so the state reads the new one
            mom._arr[...] = mom._arr - lr_ * (g + wd_ * new)
        else:  # sgd_update
            new = (dt.type(1) - lr_ * wd_) * w - lr_ * g
        _write_weight(weight, w32, new)


@register
class Adam(Optimizer):
    """Adam, as mxnet's ``adam_update`` kernel, with the bias correction folded into the
    learning rate (``lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)``, ``t`` the update count of
    the index)::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        weight = weight - lr_t * m / (sqrt(v) + epsilon)
    """

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        lazy_update: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray]:
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        lr, wd = self._prepare(index, weight, grad)
        t = self._index_update_count[index]
        lr *= math.sqrt(1.0 - self.beta2**t) / (1.0 - self.beta1**t)
        mean, var = state
        dt = weight._arr.dtype
        lr_, wd_, rg, b1, b2, eps = _scalars(
            dt, lr, wd, self.rescale_grad, self.beta1, self.beta2, self.epsilon
        )
        one = dt.type(1)
        w = weight._arr
        g = grad._arr * rg + w * wd_
        if self.clip_gradient:
            g = _clip(g, dt.type(self.clip_gradient))
        mean._arr[...] = b1 * mean._arr + (one - b1) * g
        var._arr[...] = b2 * var._arr + (one - b2) * g * g
        weight._arr[...] = w - lr_ * mean._arr / (np.sqrt(var._arr) + eps)


@register
class AdaGrad(Optimizer):
    """AdaGrad, as mxnet 1.9.1's Python code (``eps`` is added inside the square root)::

    g = clip(rescale_grad * grad, clip_gradient)
    history += g * g
    weight += (g / sqrt(history + eps) + weight * wd) * -lr
    """

    def __init__(self, eps: float = 1e-7, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index: Any, weight: NDArray) -> NDArray:
        return zeros(weight.shape, weight.context)  # (float32, as mxnet)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        lr, wd = self._prepare(index, weight, grad)
        dt = weight._arr.dtype
        lr_, wd_, rg, eps = _scalars(dt, lr, wd, self.rescale_grad, self.float_stable_eps)
        g = grad._arr * rg
        if self.clip_gradient is not None:
            g = _clip(g, dt.type(self.clip_gradient))
        h = state._arr
        h[...] = h + np.square(g)
        div = g / np.sqrt(h + eps)
        w = weight._arr
        w[...] = w + (div + w * wd_) * (-lr_)


@register
class AdaDelta(Optimizer):
    """AdaDelta, as mxnet 1.9.1's Python code (no learning rate; the weight decay is added to
    the step). As mxnet, the gradient array is multiplied by ``rescale_grad`` in place::

        grad *= rescale_grad; g = clip(grad, clip_gradient)
        acc_g = rho * acc_g + (1 - rho) * g * g
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g
        acc_delta = rho * acc_delta + (1 - rho) * delta * delta
        weight -= delta + wd * weight
    """

    def __init__(self, rho: float = 0.90, epsilon: float = 1e-5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray]:
        return (zeros(weight.shape, weight.context), zeros(weight.shape, weight.context))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        _check_arrays("AdaDelta.update", weight, grad)
        wd = self._get_wd(index)
        self._update_count(index)
        dt = weight._arr.dtype
        wd_, rg, rho, eps = _scalars(dt, wd, self.rescale_grad, self.rho, self.epsilon)
        one_rho = dt.type(1.0 - self.rho)
        grad._arr[...] = grad._arr * rg  # (mxnet: grad *= self.rescale_grad)
        g = grad._arr
        if self.clip_gradient is not None:
            g = _clip(g, dt.type(self.clip_gradient))
        acc_g, acc_delta = state
        acc_g._arr[...] = acc_g._arr * rho
        acc_g._arr[...] = acc_g._arr + one_rho * g * g
        delta = np.sqrt(acc_delta._arr + eps) / np.sqrt(acc_g._arr + eps) * g
        acc_delta._arr[...] = acc_delta._arr * rho
        acc_delta._arr[...] = acc_delta._arr + one_rho * delta * delta
        w = weight._arr
        w[...] = w - (delta + wd_ * w)


@register
class RMSProp(Optimizer):
    """RMSProp, as mxnet's ``rmsprop_update`` (Tieleman & Hinton) and, with ``centered``,
    ``rmspropalex_update`` (Graves) kernels::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        n = (1 - gamma1) * g * g + gamma1 * n
        weight = weight - lr * g / sqrt(n + epsilon)                 # not centered
        # centered: s = (1 - gamma1) * g + gamma1 * s,
        #   delta = gamma2 * delta - lr * g / sqrt(n - s * s + epsilon), weight = weight + delta

    ``clip_weights`` clips the new weight to ``[-clip_weights, clip_weights]``.
    """

    def __init__(
        self,
        learning_rate: float = 0.001,
        gamma1: float = 0.9,
        gamma2: float = 0.9,
        epsilon: float = 1e-8,
        centered: bool = False,
        clip_weights: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, ...]:
        if self.centered:
            return tuple(zeros(weight.shape, weight.context) for _ in range(3))
        return (zeros(weight.shape, weight.context),)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        lr, wd = self._prepare(index, weight, grad)
        dt = weight._arr.dtype
        lr_, wd_, rg, g1, g2, eps = _scalars(
            dt, lr, wd, self.rescale_grad, self.gamma1, self.gamma2, self.epsilon
        )
        one = dt.type(1)
        w = weight._arr
        g = rg * grad._arr + wd_ * w
        if self.clip_gradient:
            g = _clip(g, dt.type(self.clip_gradient))
        n = state[0]._arr
        n[...] = (one - g1) * g * g + g1 * n
        if not self.centered:
            new = w - lr_ * (g / np.sqrt(n + eps))
        else:
            s, delta = state[1]._arr, state[2]._arr
            s[...] = (one - g1) * g + g1 * s
            delta[...] = g2 * delta - (lr_ * g / np.sqrt(n - s * s + eps))
            new = w + delta
        if self.clip_weights:
            new = _clip(new, dt.type(self.clip_weights))
        w[...] = new


@register
class Signum(Optimizer):
    """Signum (``momentum`` > 0, mxnet's ``signum_update``) and signSGD (``momentum`` 0,
    ``signsgd_update``)::

        state = momentum * state - (1 - momentum) * wd * weight
                - (1 - momentum) * clip(rescale_grad * grad, clip_gradient)
        weight = (1 - lr * wd_lh) * weight + lr * sign(state)
        # signSGD: weight = (1 - lr * wd) * weight - lr * sign(grad)
    """

    def __init__(
        self, learning_rate: float = 0.01, momentum: float = 0.9, wd_lh: float = 0.0, **kwargs: Any
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index: Any, weight: NDArray) -> NDArray | None:
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        lr, wd = self._prepare(index, weight, grad)
        dt = weight._arr.dtype
        lr_, wd_, rg, m, wdlh = _scalars(dt, lr, wd, self.rescale_grad, self.momentum, self.wd_lh)
        one = dt.type(1)
        w = weight._arr
        g = rg * grad._arr
        if self.clip_gradient:
            g = _clip(g, dt.type(self.clip_gradient))
        if state is not None:
            mom = state._arr
            mom[...] = m * mom - (one - m) * wd_ * w - (one - m) * g
            w[...] = (one - lr_ * wdlh) * w + lr_ * _sign(mom)
        else:  # (mxnet's signsgd_update: rescale_grad and clip_gradient have no effect)
            w[...] = (one - lr_ * wd_) * w - lr_ * _sign(grad._arr)


@register
class FTML(Optimizer):
    """FTML (Follow the Moving Leader), as mxnet's ``ftml_update`` kernel (``t`` the update
    count of the index)::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        v = beta2 * v + (1 - beta2) * g * g
        d_t = (1 - beta1^t) / lr * (sqrt(v / (1 - beta2^t)) + epsilon)
        z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * weight
        d = d_t; weight = -z / d_t
    """

    def __init__(
        self, beta1: float = 0.6, beta2: float = 0.999, epsilon: float = 1e-8, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray, NDArray]:
        return (_zeros_like(weight), _zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        lr, wd = self._prepare(index, weight, grad)
        t = self._index_update_count[index]
        dt = weight._arr.dtype
        lr_, wd_, rg, b1, b2, eps, t_ = _scalars(
            dt, lr, wd, self.rescale_grad, self.beta1, self.beta2, self.epsilon, t
        )
        one = dt.type(1)
        w = weight._arr
        g = rg * grad._arr + wd_ * w
        if self.clip_gradient:
            g = _clip(g, dt.type(self.clip_gradient))
        d, v, z = (s._arr for s in state)
        v[...] = b2 * v + (one - b2) * np.square(g)
        d_t = (one - np.power(b1, t_)) / lr_ * (np.sqrt(v / (one - np.power(b2, t_))) + eps)
        z[...] = b1 * z + (one - b1) * g - (d_t - b1 * d) * w
        d[...] = d_t
        w[...] = -z / d_t


@register
class Adamax(Optimizer):
    """AdaMax (Adam with the infinity norm), as mxnet 1.9.1's Python code::

    g = clip(rescale_grad * grad + wd * weight, clip_gradient)
    m = beta1 * m + (1 - beta1) * g
    u = maximum(beta2 * u, |g|)
    weight -= lr / (1 - beta1^t) * m / u
    """

    def __init__(
        self, learning_rate: float = 0.002, beta1: float = 0.9, beta2: float = 0.999, **kwargs: Any
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray]:
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        lr, wd = self._prepare(index, weight, grad)
        t = self._index_update_count[index]
        lr /= 1.0 - self.beta1**t
        dt = weight._arr.dtype
        lr_, wd_, rg, b1, b2, one_b1 = _scalars(
            dt, lr, wd, self.rescale_grad, self.beta1, self.beta2, 1.0 - self.beta1
        )
        w = weight._arr
        g = grad._arr * rg + wd_ * w
        if self.clip_gradient is not None:
            g = _clip(g, dt.type(self.clip_gradient))
        m, u = state[0]._arr, state[1]._arr
        m[...] = m * b1
        m[...] = m + one_b1 * g
        u[...] = np.maximum(b2 * u, np.abs(g))
        w[...] = w - lr_ * m / u


@register
class Nadam(Optimizer):
    """Nesterov Adam, as mxnet 1.9.1's Python code. As mxnet, the momentum schedule
    ``m_schedule`` belongs to the optimizer (every update of any index multiplies it)::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        mu_t = beta1 * (1 - 0.5 * 0.96^(t * schedule_decay)); mu_t1 = the same at t + 1
        m_schedule *= mu_t
        m = beta1 * m + (1 - beta1) * g; v = beta2 * v + (1 - beta2) * g * g
        m_bar = (1 - mu_t) * g / (1 - m_schedule) + mu_t1 * m / (1 - m_schedule * mu_t1)
        weight -= lr * m_bar / (sqrt(v / (1 - beta2^t)) + epsilon)
    """

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        schedule_decay: float = 0.004,
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.0

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray]:
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        lr, wd = self._prepare(index, weight, grad)
        t = self._index_update_count[index]
        dt = weight._arr.dtype
        f = dt.type
        w = weight._arr
        g = grad._arr * f(self.rescale_grad) + f(wd) * w
        if self.clip_gradient is not None:
            g = _clip(g, f(self.clip_gradient))
        mu_t = self.beta1 * (1.0 - 0.5 * (pow(0.96, t * self.schedule_decay)))
        mu_t1 = self.beta1 * (1.0 - 0.5 * (pow(0.96, (t + 1) * self.schedule_decay)))
        self.m_schedule = self.m_schedule * mu_t
        m_schedule_next = self.m_schedule * mu_t1
        m, v = state[0]._arr, state[1]._arr
        m[...] = m * f(self.beta1)
        m[...] = m + f(1.0 - self.beta1) * g
        v[...] = v * f(self.beta2)
        v[...] = v + f(1.0 - self.beta2) * g * g
        g_prime = g / f(1.0 - self.m_schedule)
        m_prime = m / f(1.0 - m_schedule_next)
        v_prime = v / f(1.0 - pow(self.beta2, t))
        m_bar = f(1.0 - mu_t) * g_prime + f(mu_t1) * m_prime
        w[...] = w - f(lr) * m_bar / (np.sqrt(v_prime) + f(self.epsilon))


@register
class LAMB(Optimizer):
    """LAMB, as mxnet's ``lamb_update_phase1``/``phase2`` kernels (``t`` the update count)::

    g = clip(rescale_grad * grad, clip_gradient)
    m = beta1 * m + (1 - beta1) * g; v = beta2 * v + (1 - beta2) * g * g
    r = m / (1 - beta1^t) / (sqrt(v / (1 - beta2^t)) + epsilon) + wd * weight
        # without bias_correction: m / (sqrt(v) + epsilon) + wd * weight
    r1 = clip(||weight||, lower_bound, upper_bound); r2 = ||r||
    weight -= lr * (r1 / r2 if r1 and r2 else 1) * r
    """

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-6,
        lower_bound: float | None = None,
        upper_bound: float | None = None,
        bias_correction: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray]:
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        lr, wd = self._prepare(index, weight, grad)
        t = self._index_update_count[index]
        dt = weight._arr.dtype
        f = dt.type
        one = f(1)
        b1, b2, eps, wd_ = f(self.beta1), f(self.beta2), f(self.epsilon), f(wd)
        w = weight._arr
        g = grad._arr * f(self.rescale_grad)
        if self.clip_gradient:
            g = _clip(g, f(self.clip_gradient))
        m, v = state[0]._arr, state[1]._arr
        m[...] = b1 * m + (one - b1) * g
        v[...] = b2 * v + (one - b2) * g * g
        if self.bias_correction:
            b1t, b2t = f(self.beta1**t), f(self.beta2**t)
            m_hat = (m / (1.0 - np.float64(b1t))).astype(dt)
            v_hat = v / (one - b2t)
            r = m_hat / (np.sqrt(v_hat) + eps) + wd_ * w
        else:
            r = m / (np.sqrt(v) + eps) + wd_ * w
        r1 = f(np.sqrt(np.sum(np.square(w.astype(np.float64)))))
        r2 = f(np.sqrt(np.sum(np.square(r.astype(np.float64)))))
        if self.lower_bound:
            r1 = max(r1, f(self.lower_bound))
        if self.upper_bound:
            r1 = min(r1, f(self.upper_bound))
        lr_ = f(lr) if r1 == 0 or r2 == 0 else f(lr) * r1 / r2
        w[...] = w - lr_ * r


@register
class Ftrl(Optimizer):
    """FTRL (Follow The Regularized Leader), as mxnet's ``ftrl_update`` kernel::

    g = clip(rescale_grad * grad, clip_gradient)
    z += g - (sqrt(n + g * g) - sqrt(n)) * weight / lr
    n += g * g
    weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)
    """

    def __init__(
        self, lamda1: float = 0.01, learning_rate: float = 0.1, beta: float = 1, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray]:
        return (zeros(weight.shape, weight.context), zeros(weight.shape, weight.context))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        lr, wd = self._prepare(index, weight, grad)
        dt = weight._arr.dtype
        lr_, wd_, rg, l1, beta = _scalars(dt, lr, wd, self.rescale_grad, self.lamda1, self.beta)
        w = weight._arr
        g = grad._arr * rg
        if self.clip_gradient:
            g = _clip(g, dt.type(self.clip_gradient))
        z, n = state[0]._arr, state[1]._arr
        z[...] = z + (g - (np.sqrt(n + np.square(g)) - np.sqrt(n)) * w / lr_)
        n[...] = n + np.square(g)
        w[...] = (
            (_sign(z) * l1 - z) / ((beta + np.sqrt(n)) / lr_ + wd_) * (np.abs(z) > l1).astype(dt)
        )


def _unsupported(name: str) -> type[Optimizer]:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"mx.optimizer.{name}: this optimizer of mxnet 1.9.1 is not supported by "
            f"gradhub_compat.mxnet ({_DOCS} lists the supported ones)"
        )

    return type(name, (Optimizer,), {"__init__": __init__, "__doc__": f"Not supported: {name}."})


for _name in ("DCASGD", "LARS", "LBSGD", "SGLD", "Test"):
    globals()[_name] = register(_unsupported(_name))

create = Optimizer.create_optimizer

# -- the updater and its state format ---------------------------------------------------------

_MAGIC = b"GRADHUB-MXNET-OPTIMIZER-STATES-1\n"


def _encode(value: Any, arrays: list[np.ndarray], what: str) -> Any:
    """``value`` as JSON, its NDArrays appended to ``arrays`` (referenced by position)."""
    if isinstance(value, NDArray):
        arrays.append(value.asnumpy())
        return {"nd": len(arrays) - 1}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else {"float": repr(v)}
    if isinstance(value, (list, tuple)):
        items = [_encode(v, arrays, what) for v in value]
        return {"tuple": items} if isinstance(value, tuple) else {"list": items}
    if isinstance(value, dict):
        return {
            "dict": [[_encode(k, arrays, what), _encode(v, arrays, what)] for k, v in value.items()]
        }
    raise TypeError(f"{what}: cannot save a value of type {type(value).__name__}")


def _decode(value: Any, arrays: Any, ctx: Any) -> Any:
    from .ndarray import array

    if isinstance(value, dict):
        if "nd" in value:
            a = arrays[f"a{int(value['nd'])}"]
            return array(a, ctx=ctx, dtype=a.dtype)
        if "float" in value:
            return float(value["float"])
        if "tuple" in value:
            return tuple(_decode(v, arrays, ctx) for v in value["tuple"])
        if "list" in value:
            return [_decode(v, arrays, ctx) for v in value["list"]]
        if "dict" in value:
            return {_decode(k, arrays, ctx): _decode(v, arrays, ctx) for k, v in value["dict"]}
        raise ValueError(f"malformed optimizer states entry {value!r}")
    return value


#: attributes of an optimizer that are not saved (the Gluon parameters: set by the Trainer)
_NOT_SAVED = {"param_dict", "sym_info"}


def _optimizer_record(opt: Optimizer, arrays: list[np.ndarray]) -> dict[str, Any]:
    attrs = {}
    for k, v in vars(opt).items():
        if k in _NOT_SAVED or k == "lr_scheduler" or k == "_index_update_count":
            continue
        attrs[k] = _encode(v, arrays, "Updater.get_states")
    sched = opt.lr_scheduler
    rec: dict[str, Any] = {"class": type(opt).__name__.lower(), "attrs": attrs}
    if sched is not None:
        rec["lr_scheduler"] = {
            "class": type(sched).__name__,
            "attrs": {k: _encode(v, arrays, "Updater.get_states") for k, v in vars(sched).items()},
        }
    return rec


def _restore_optimizer(rec: dict[str, Any], arrays: Any) -> Optimizer:
    from . import lr_scheduler as _lrs

    cls = Optimizer.opt_registry.get(rec["class"])
    if cls is None:
        raise ValueError(f"Updater.set_states: unknown optimizer {rec['class']!r} in the states")
    opt = cls.__new__(cls)
    for k, v in rec["attrs"].items():
        setattr(opt, k, _decode(v, arrays, None))
    opt.param_dict = {}
    opt.sym_info = ()
    counts = opt._all_index_update_counts
    opt._index_update_count = counts.setdefault(0, {})
    opt.lr_scheduler = None
    if "lr_scheduler" in rec:
        scls = getattr(_lrs, rec["lr_scheduler"]["class"], None)
        if not (isinstance(scls, type) and issubclass(scls, _lrs.LRScheduler)):
            raise ValueError(
                f"Updater.set_states: unknown lr_scheduler {rec['lr_scheduler']['class']!r}"
            )
        sched = scls.__new__(scls)
        for k, v in rec["lr_scheduler"]["attrs"].items():
            setattr(sched, k, _decode(v, arrays, None))
        opt.lr_scheduler = sched
    return opt


def dump_states(states: dict[Any, Any], optimizer: Optimizer | None, what: str) -> bytes:
    """``states`` (index -> state: None, NDArrays and tuples of them) and, if given, the
    optimizer's settings (its numbers, strings and dicts of them, and its lr_scheduler's) as
    bytes: a header line, then a numpy ``.npz`` archive of the arrays and a JSON record. No
    pickle."""
    arrays: list[np.ndarray] = []
    record: dict[str, Any] = {
        "states": [[_encode(k, arrays, what), _encode(v, arrays, what)] for k, v in states.items()]
    }
    if optimizer is not None:
        record["optimizer"] = _optimizer_record(optimizer, arrays)
    buf = io.BytesIO()
    meta = np.frombuffer(json.dumps(record).encode("utf-8"), dtype=np.uint8)
    # (allow_pickle given by name, so that mypy does not take the arrays for it; they are
    # numeric, and load_states reads them with allow_pickle=False)
    np.savez(buf, meta=meta, allow_pickle=False, **{f"a{i}": a for i, a in enumerate(arrays)})
    return _MAGIC + buf.getvalue()


def load_states(data: bytes, what: str) -> tuple[dict[Any, Any], Optimizer | None]:
    """The states and optimizer (or None) of :func:`dump_states`' bytes. A pickle (mxnet's own
    format) raises ``ValueError``: it is never unpickled."""
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"{what}: states must be bytes, got {type(data).__name__}")
    data = bytes(data)
    if not data.startswith(_MAGIC):
        if data[:1] == b"\x80" or data[:1] in (b"(", b"]", b"}"):
            raise ValueError(
                f"{what}: these are optimizer states written by mxnet (a Python pickle); "
                "gradhub_compat.mxnet never unpickles data (unpickling can run arbitrary code). "
                "Save the states again with this layer (Trainer.save_states / "
                f"Updater.get_states) ({_DOCS})"
            )
        raise ValueError(f"{what}: not optimizer states written by gradhub_compat.mxnet")
    try:
        with np.load(io.BytesIO(data[len(_MAGIC) :]), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        record = json.loads(arrays.pop("meta").tobytes().decode("utf-8"))
    except (ValueError, OSError, KeyError) as e:
        raise ValueError(f"{what}: malformed optimizer states: {e}") from None
    states = {_decode(k, arrays, None): _decode(v, arrays, None) for k, v in record["states"]}
    opt = _restore_optimizer(record["optimizer"], arrays) if "optimizer" in record else None
    return states, opt


class Updater:
    """Applies an optimizer to indexed weights (mxnet's kvstore updater): ``updater(index,
    grad, weight)`` creates the index's state on first use (``states[index]``) and calls
    ``optimizer.update_multi_precision``. :meth:`get_states`/:meth:`set_states` save and load
    the states (and, with ``dump_optimizer``, the optimizer) as bytes in this layer's format
    (npz + JSON, never pickle).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> upd = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=1.0, momentum=0.5))
        >>> w = mx.nd.array([1.0])
        >>> upd(0, mx.nd.array([1.0]), w)
        >>> upd(0, mx.nd.array([1.0]), w)
        >>> w.asnumpy(), upd.states[0].asnumpy()
        (array([-1.5], dtype=float32), array([-1.5], dtype=float32))
    """

    def __init__(self, optimizer: Optimizer) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"Updater: optimizer must be an mx.optimizer.Optimizer, got "
                f"{type(optimizer).__name__}"
            )
        self.optimizer = optimizer
        self.states: dict[Any, Any] = {}
        self.states_synced: dict[Any, bool] = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index: Any, grad: Any, weight: Any) -> None:
        if not isinstance(index, (list, tuple)):
            indices, grads, weights = [index], [grad], [weight]
        else:
            indices, grads, weights = list(index), list(grad), list(weight)
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        for i, (idx, g, w) in enumerate(zip(indices, grads, weights)):
            if isinstance(idx, bytes):
                idx = indices[i] = idx.decode()
            if idx not in self.states:
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, w)
                self.states_synced[idx] = True
            self.optimizer.update_multi_precision(idx, w, g, self.states[idx])

    def sync_state_context(self, state: Any, context: Any) -> Any:
        """``state`` with its arrays on ``context``."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def set_states(self, states: bytes) -> None:
        """Load :meth:`get_states`' bytes (with the optimizer, when they hold one). mxnet's
        pickled states raise ``ValueError`` (never unpickled)."""
        loaded, opt = load_states(states, "Updater.set_states")
        if opt is not None:
            opt.param_dict = self.optimizer.param_dict
            self.optimizer = opt
        self.states = loaded
        self.states_synced = dict.fromkeys(self.states.keys(), False)

    def get_states(self, dump_optimizer: bool = False) -> bytes:
        """The states (and with ``dump_optimizer`` the optimizer's settings, learning rate,
        update counts and lr_scheduler) as bytes in this layer's format (not a pickle)."""
        return dump_states(
            self.states, self.optimizer if dump_optimizer else None, "Updater.get_states"
        )


def get_updater(optimizer: Optimizer) -> Updater:
    """An :class:`Updater` of ``optimizer``."""
    return Updater(optimizer)
