"""chainer's optimizer machinery (chainer 7.8.1 ``optimizer.py``): :class:`Hyperparameter`,
:class:`UpdateRule`, :class:`Optimizer`, :class:`GradientMethod`.

An optimizer is ``setup(link)`` on a :class:`~gradhub_compat.chainer.link.Link`; a
:class:`GradientMethod` gives each parameter an :class:`UpdateRule` (its own ``t``, state
arrays and hooks, its hyperparameters falling back on the optimizer's).
``optimizer.update()`` updates every parameter from its gradient (a cleared gradient counts as
zeros); ``optimizer.update(lossfun, *args)`` first computes ``loss = lossfun(*args)``, clears
the gradients and runs ``loss.backward()``. Hooks (``add_hook``) run before (``timing='pre'``,
the default of WeightDecay and GradientClipping) or after the update. The updates work on the
parameters' arrays in place, in chainer's CPU formulas (see :mod:`.optimizers`).

Example::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> import gradhub_compat.chainer.links as L
    >>> from gradhub_compat.chainer import optimizers
    >>> layer = L.Linear(1, 1, initialW=np.array([[2.0]], dtype=np.float32))
    >>> opt = optimizers.SGD(lr=0.5).setup(layer)
    >>> x = np.ones((1, 1), dtype=np.float32)
    >>> opt.update(lambda: chainer.functions.sum(layer(x)))   # d/dW = x = 1
    >>> layer.W.array, opt.t
    (array([[1.5]], dtype=float32), 1)
"""

from __future__ import annotations

import collections
import copy
import warnings
from typing import Any

import numpy as np
from gradhub.variable import Variable as _NativeVariable

from ._device import PAGE, activate, serialize_value
from .link import Link

__all__ = [
    "GradientMethod",
    "Hyperparameter",
    "HyperparameterProxy",
    "Optimizer",
    "UpdateRule",
]


def _unsupported(feature: str) -> NotImplementedError:
    return NotImplementedError(f"chainer {feature} is not supported by gradhub; see {PAGE}")


class _Hookable:
    def __init__(self, invalid_timing_fallback: bool = False) -> None:
        self._pre_update_hooks: collections.OrderedDict[str, Any] = collections.OrderedDict()
        self._post_update_hooks: collections.OrderedDict[str, Any] = collections.OrderedDict()
        self._invalid_timing_fallback = invalid_timing_fallback

    def add_hook(self, hook: Any, name: str | None, timing: str) -> None:
        if not callable(hook):
            raise TypeError("hook function must be callable")
        if timing not in ("pre", "post", "auto"):
            raise ValueError("timing must be one of ('pre', 'post', 'auto')")
        if timing == "auto":
            timing = getattr(hook, "timing", "pre")
            if timing not in ("pre", "post") and self._invalid_timing_fallback:
                warnings.warn(
                    "Hook timing attribute not in ('pre', 'post'), defaulting timing to 'pre'.",
                    stacklevel=3,
                )
                timing = "pre"
        if name is None:
            name = getattr(hook, "name", getattr(hook, "__name__", None))
            if name is None:
                raise ValueError("the name of the hook function is not specified")
        if name in self._pre_update_hooks or name in self._post_update_hooks:
            raise KeyError(f'hook "{name}" already exists')
        if timing == "pre":
            self._pre_update_hooks[name] = hook
        else:
            self._post_update_hooks[name] = hook

    def remove_hook(self, name: str) -> None:
        try:
            del self._pre_update_hooks[name]
        except KeyError:
            del self._post_update_hooks[name]

    def hooks(self, timing: str) -> list[Any]:
        if timing == "pre":
            return list(self._pre_update_hooks.values())
        if timing == "post":
            return list(self._post_update_hooks.values())
        raise ValueError("timing must be either 'pre' or 'post'")


class Hyperparameter:
    """A set of hyperparameters; a name not set here is read from the parent (chainer's
    chain of defaults: the rule's own, then the optimizer's, then the module defaults)."""

    def __init__(self, parent: Hyperparameter | None = None) -> None:
        self._parent = parent

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        if "_parent" not in self.__dict__:
            raise AttributeError("_parent is not set up yet")
        if self._parent is None:
            raise AttributeError(f"Hyperparameter has no attribute {name!r}")
        return getattr(self._parent, name)

    def __repr__(self) -> str:
        d = self.get_dict()
        return "Hyperparameter(" + ", ".join(f"{k}={d[k]}" for k in sorted(d)) + ")"

    @property
    def parent(self) -> Hyperparameter | None:
        """The hyperparameters this one falls back on."""
        return self._parent

    def get_dict(self) -> dict[str, Any]:
        """All the values, the parents' overridden by this one's."""
        d = {} if self._parent is None else self._parent.get_dict()
        d.update({k: v for k, v in self.__dict__.items() if k != "_parent"})
        return d


class HyperparameterProxy:
    """A class attribute that reads and writes ``obj.hyperparam.<name>``."""

    def __init__(self, attr_name: str) -> None:
        self._attr_name = attr_name
        self.__doc__ = f"Alias to ``self.hyperparam.{attr_name}``"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return getattr(obj.hyperparam, self._attr_name)

    def __set__(self, obj: Any, value: Any) -> None:
        setattr(obj.hyperparam, self._attr_name, value)


class UpdateRule:
    """The update of one parameter: ``update(param)`` counts ``t``, makes the state arrays at
    the first update of an initialized parameter (``init_state``), runs the rule's ``pre``
    hooks, ``update_core(param)`` and the ``post`` hooks. ``enabled = False`` skips it."""

    is_elementwise = False

    def __init__(self, parent_hyperparam: Hyperparameter | None = None) -> None:
        self._state: dict[str, Any] | None = None
        self.enabled = True
        self.hyperparam = Hyperparameter(parent_hyperparam)
        self.t = 0
        self._hookable = _Hookable()

    @property
    def state(self) -> dict[str, Any] | None:
        """The state arrays (None before the first update)."""
        return self._state

    def add_hook(self, hook: Any, name: str | None = None, timing: str = "auto") -> None:
        """Add ``hook(rule, param)``, run before (``'pre'``) or after (``'post'``) the update."""
        self._hookable.add_hook(hook, name, timing)

    def remove_hook(self, name: str) -> None:
        """Remove the hook ``name``."""
        self._hookable.remove_hook(name)

    def update(self, param: Any) -> None:
        """Update ``param`` (see the class)."""
        if not self.enabled:
            return
        self.t += 1
        with activate(param.array):  # the parameter's device is current (chainer's using_device)
            if param.array is not None:
                if self._state is None:
                    self._state = {}
                    self.init_state(param)
            for hook in self._hookable.hooks("pre"):
                hook(self, param)
            self.update_core(param)
            for hook in self._hookable.hooks("post"):
                hook(self, param)

    def update_core(self, param: Any) -> None:
        """The update formula (defined by subclasses)."""
        raise NotImplementedError

    def init_state(self, param: Any) -> None:
        """Make the state arrays for ``param`` (none by default)."""

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``t`` and the state arrays (a deserializer into a rule without
        state makes it from the stored arrays)."""
        from .serializers import NpzDeserializer

        self.t = serializer("t", self.t)
        if self._state is None:
            if isinstance(serializer, NpzDeserializer):
                self._state = {}
                probe = copy.copy(self)
                arr = np.empty(1, dtype=np.float32)
                from . import Variable

                probe.init_state(Variable(arr, grad=arr))
                for key in list(self._state):
                    try:
                        value = serializer(key, None)
                    except KeyError:
                        if self.enabled:
                            raise
                        value = None
                    if value is None:
                        self._state = None
                        break
                    self._state[key] = value
        else:
            for key in self._state:
                self._state[key] = serialize_value(serializer, key, self._state[key])

    def use_fp32_update(self, flag: bool = True) -> None:
        """Not supported (NotImplementedError)."""
        raise _unsupported("UpdateRule.use_fp32_update")


class Optimizer:
    """chainer's ``Optimizer``: ``setup(link)`` (returns self), ``update``, ``t`` (the number
    of updates), ``epoch``/``new_epoch()``, optimizer hooks (``add_hook``)."""

    target: Link | None = None
    t = 0
    epoch = 0
    use_auto_new_epoch = False
    _hookable: _Hookable | None = None

    def setup(self, link: Link) -> Optimizer:
        """Make ``link`` the target; resets ``t`` and ``epoch``."""
        if not isinstance(link, Link):
            raise TypeError("optimization target must be a link")
        self.target = link
        self.t = 0
        self.epoch = 0
        self._hookable = _Hookable(invalid_timing_fallback=True)
        return self

    def update(self, lossfun: Any = None, *args: Any, **kwds: Any) -> None:
        """Update the target (defined by subclasses)."""
        raise NotImplementedError

    def new_epoch(self, auto: bool = False) -> None:
        """Count an epoch."""
        if auto and not self.use_auto_new_epoch:
            raise RuntimeError(
                "invalid new_epoch call with auto=True.\n"
                "Fix the updater to set optimizer.use_auto_new_epoch = True."
            )
        if not auto and self.use_auto_new_epoch:
            raise RuntimeError(
                "duplicated new_epoch with the updater.\nPass auto_new_epoch=False to the "
                "updater or stop calling new_epoch outside the updater."
            )
        self.epoch += 1

    def _check_set_up(self) -> _Hookable:
        if self._hookable is None:
            raise RuntimeError("Optimizer is not set up. Call `setup` method.")
        return self._hookable

    def add_hook(self, hook: Any, name: str | None = None, timing: str = "auto") -> None:
        """Add an optimizer hook: ``hook(optimizer)``, or ``hook(rule, param)`` for each
        parameter when ``hook.call_for_each_param``; ``timing`` 'pre', 'post' or 'auto' (the
        hook's ``timing`` attribute, else 'pre')."""
        self._check_set_up().add_hook(hook, name, timing)

    def remove_hook(self, name: str) -> None:
        """Remove the hook ``name``."""
        self._check_set_up().remove_hook(name)

    def call_hooks(self, timing: str = "pre") -> None:
        """Run the hooks of ``timing``."""
        for hook in self._check_set_up().hooks(timing):
            self.call_hook(hook)

    def call_hook(self, hook: Any) -> None:
        """Run one hook."""
        if getattr(hook, "call_for_each_param", False):
            assert self.target is not None
            for param in self.target.params():
                hook(param.update_rule, param)
        else:
            hook(self)

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``t``, ``epoch`` and each parameter's update rule by path."""
        self.t = serializer("t", self.t)
        self.epoch = serializer("epoch", self.epoch)
        assert self.target is not None
        for name, param in self.target.namedparams():
            rule = getattr(param, "update_rule", None)
            if rule is not None:
                rule.serialize(serializer[name])

    def loss_scaling(self, interval: int = 1000, scale: float | None = None) -> None:
        """Not supported (NotImplementedError)."""
        raise _unsupported("Optimizer.loss_scaling")

    def set_loss_scale(self, loss_scale: float) -> None:
        """Not supported (NotImplementedError)."""
        raise _unsupported("Optimizer.set_loss_scale")


class GradientMethod(Optimizer):
    """An optimizer that updates each parameter from its gradient with an :class:`UpdateRule`
    made by :meth:`create_update_rule`."""

    def __init__(self) -> None:
        super().__init__()
        self.hyperparam = Hyperparameter()

    def setup(self, link: Link) -> GradientMethod:
        """Make ``link`` the target and give each of its parameters an update rule."""
        super().setup(link)
        for param in link.params():
            param.update_rule = self.create_update_rule()
        return self

    def reallocate_cleared_grads(self) -> None:
        """Give each initialized parameter without a gradient a zero gradient."""
        assert self.target is not None
        for _, param in self.target.namedparams(False):
            if param._grad is None:
                with activate(param.array):
                    zeros = param.device.xp.zeros_like(param.array)
                param._grad = _NativeVariable.leaf(zeros, True)
                param._grad_valid = True

    def call_hook(self, hook: Any) -> None:
        super().call_hook(hook)
        self.reallocate_cleared_grads()

    def update(self, lossfun: Any = None, *args: Any, **kwds: Any) -> None:
        """Update the parameters of the target.

        With ``lossfun``: ``loss = lossfun(*args, **kwds)``, then the target's gradients are
        cleared and ``loss.backward()`` fills them (chainer's order). Then cleared gradients
        become zeros, the 'pre' hooks run, ``t`` counts one, each parameter is updated by its
        rule, and the 'post' hooks run.
        """
        if self.target is None:
            raise RuntimeError("Optimizer is not set up. Call `setup` method.")
        if lossfun is not None:
            loss = lossfun(*args, **kwds)
            if getattr(self, "_use_cleargrads", True):
                self.target.cleargrads()
            else:
                self.target.zerograds()
            loss.backward()
            del loss
        self.reallocate_cleared_grads()
        self.call_hooks("pre")
        self.t += 1
        for param in self.target.params():
            param.update()
        self.reallocate_cleared_grads()
        self.call_hooks("post")

    def use_cleargrads(self, use: bool = True) -> None:
        """Deprecated in chainer: whether ``update(lossfun)`` clears (True) or zeroes the
        gradients."""
        warnings.warn(
            "GradientMethod.use_cleargrads is deprecated.", DeprecationWarning, stacklevel=2
        )
        self._use_cleargrads = use

    def create_update_rule(self) -> UpdateRule:
        """A new update rule for one parameter (defined by subclasses)."""
        raise NotImplementedError

    def use_fp32_update(self, flag: bool = True) -> None:
        """Not supported (NotImplementedError)."""
        raise _unsupported("GradientMethod.use_fp32_update")
