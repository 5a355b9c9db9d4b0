"""chainer's ``chainer.training.extension`` (chainer 7.8.1): :class:`Extension`,
:func:`make_extension` and the priorities."""

from __future__ import annotations

from typing import Any

__all__ = ["PRIORITY_EDITOR", "PRIORITY_READER", "PRIORITY_WRITER", "Extension", "make_extension"]

#: extensions that write to the observation run first (Evaluator)
PRIORITY_WRITER = 300
#: extensions that edit the observation
PRIORITY_EDITOR = 200
#: extensions that only read it (LogReport, PrintReport)
PRIORITY_READER = 100


class Extension:
    """The base class of trainer extensions: ``ext(trainer)`` runs when its ``trigger``
    (default ``(1, 'iteration')``) fires, in the order of ``priority`` (highest first);
    ``initialize(trainer)`` runs when training starts, ``finalize()`` when it ends,
    ``on_error(trainer, exc, tb)`` on an exception in the loop, ``serialize`` saves its state
    in the trainer's snapshot. ``default_name`` is the class name."""

    trigger: Any = 1, "iteration"
    priority = PRIORITY_READER
    name: str | None = None

    @property
    def default_name(self) -> str:
        """The name used when ``Trainer.extend`` is given none: the class name."""
        return type(self).__name__

    def __call__(self, trainer: Any) -> Any:
        raise NotImplementedError("Extension implementation must override __call__.")

    def finalize(self) -> None:
        """Run at the end of training (nothing by default)."""

    def initialize(self, trainer: Any) -> None:
        """Run at the start of training (nothing by default)."""

    def on_error(self, trainer: Any, exc: BaseException, tb: Any) -> None:
        """Run when the training loop raises (nothing by default)."""

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: the state kept in a snapshot (nothing by default)."""


def make_extension(
    trigger: Any = None,
    default_name: str | None = None,
    priority: int | None = None,
    finalizer: Any = None,
    initializer: Any = None,
    on_error: Any = None,
) -> Any:
    """Decorator making a function ``f(trainer)`` an extension: it sets ``trigger`` (default
    ``(1, 'iteration')``), ``default_name`` (default the function's name), ``priority``
    (default :data:`PRIORITY_READER`), ``finalize``, ``initialize`` and ``on_error`` on it.

    Example::

        >>> from gradhub_compat.chainer import training
        >>> @training.make_extension(trigger=(1, "epoch"))
        ... def show(trainer):
        ...     print(trainer.updater.epoch)
        >>> show.trigger, show.default_name, show.priority
        ((1, 'epoch'), 'show', 100)
    """
    if trigger is None:
        trigger = Extension.trigger
    if priority is None:
        priority = Extension.priority

    def decorator(ext: Any) -> Any:
        ext.trigger = trigger
        ext.default_name = default_name or ext.__name__
        ext.priority = priority
        ext.finalize = finalizer
        ext.on_error = on_error
        ext.initialize = initializer
        return ext

    return decorator
