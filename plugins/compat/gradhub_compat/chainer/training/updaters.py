"""chainer's ``chainer.training.updaters`` (chainer 7.8.1): :class:`Updater` and
:class:`StandardUpdater`."""

from __future__ import annotations

from typing import Any

from .._device import PAGE, _missing_attribute, get_device
from ..dataset import convert
from ..dataset.iterator import Iterator

__all__ = ["StandardUpdater", "Updater"]


class Updater:
    """The base class of updaters: ``update()`` runs one training iteration; ``iteration``,
    ``epoch``, ``epoch_detail``, ``previous_epoch_detail``, ``is_new_epoch``,
    ``get_optimizer(name)``, ``get_all_optimizers()``, ``serialize``, ``finalize``."""

    def connect_trainer(self, trainer: Any) -> None:
        """Called by the trainer that takes this updater (nothing by default)."""

    def finalize(self) -> None:
        """Release resources at the end of training."""
        raise NotImplementedError

    def get_optimizer(self, name: str) -> Any:
        """The optimizer ``name``."""
        raise NotImplementedError

    def get_all_optimizers(self) -> dict[str, Any]:
        """``{name: optimizer}``."""
        raise NotImplementedError

    def update(self) -> None:
        """One iteration."""
        raise NotImplementedError

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol."""
        raise NotImplementedError


class StandardUpdater(Updater):
    """``StandardUpdater(iterator, optimizer, converter=concat_examples, device=None,
    loss_func=None, loss_scale=None, auto_new_epoch=True, *, input_device=None)``.

    Each ``update()`` takes the next batch of the iterator ``'main'``, converts it
    (``converter(batch, input_device)``; ``input_device`` defaults to ``device``) and calls
    ``optimizer.update(loss_func, *arrays)`` (``**arrays`` for a dict, one argument
    otherwise); ``loss_func`` defaults to the optimizer's target (a ``Classifier``). ``device``
    also moves the optimizer's target there. At the end of each epoch
    ``optimizer.new_epoch(auto=True)`` counts it (``auto_new_epoch``). ``iterator`` and
    ``optimizer`` may be dicts (the one named ``'main'`` is used). ``loss_scale`` is refused
    (NotImplementedError), as the optimizers' loss scaling. ``serialize`` saves each
    iterator (``iterator:<name>/``), optimizer (``optimizer:<name>/``), target
    (``model:<name>/``) and ``iteration``, chainer's keys.
    """

    def __init__(
        self,
        iterator: Any,
        optimizer: Any,
        converter: Any = convert.concat_examples,
        device: Any = None,
        loss_func: Any = None,
        loss_scale: float | None = None,
        auto_new_epoch: bool = True,
        *,
        input_device: Any = None,
    ) -> None:
        where = "chainer StandardUpdater"
        if device is not None:
            device = get_device(device, where)
        input_device = device if input_device is None else get_device(input_device, where)
        if isinstance(iterator, Iterator):
            iterator = {"main": iterator}
        if not isinstance(iterator, dict) or "main" not in iterator:
            raise TypeError(
                f"{where}: iterator must be a chainer Iterator or a dict of them with the key "
                f"'main', got {type(iterator).__name__}"
            )
        self._iterators = iterator
        if not isinstance(optimizer, dict):
            optimizer = {"main": optimizer}
        self._optimizers = optimizer
        for opt in self._optimizers.values():
            if getattr(opt, "target", None) is None:
                raise RuntimeError(f"{where}: the optimizer is not set up (call optimizer.setup)")
        if device is not None:
            for opt in self._optimizers.values():
                opt.target.to_device(device)
        if loss_scale is not None:
            raise NotImplementedError(
                f"{where}: loss_scale (dynamic or static loss scaling) is not supported by "
                f"gradhub; see {PAGE}"
            )
        self.converter = converter
        self.loss_func = loss_func
        self.iteration = 0
        self._device = device
        self._input_device = input_device
        self.loss_scale = loss_scale
        self.auto_new_epoch = auto_new_epoch
        if auto_new_epoch:
            for o in self._optimizers.values():
                o.use_auto_new_epoch = True

    @property
    def device(self) -> Any:
        """The device given (a gradhub device) or None."""
        return self._device

    @property
    def input_device(self) -> Any:
        """The device the batches are sent to, or None."""
        return self._input_device

    @property
    def epoch(self) -> int:
        """The main iterator's ``epoch``."""
        return self._iterators["main"].epoch  # type: ignore[no-any-return]

    @property
    def epoch_detail(self) -> float:
        """The main iterator's ``epoch_detail``."""
        return self._iterators["main"].epoch_detail  # type: ignore[no-any-return]

    @property
    def previous_epoch_detail(self) -> float | None:
        """The main iterator's ``previous_epoch_detail``."""
        return self._iterators["main"].previous_epoch_detail  # type: ignore[no-any-return]

    @property
    def is_new_epoch(self) -> bool:
        """The main iterator's ``is_new_epoch``."""
        return self._iterators["main"].is_new_epoch  # type: ignore[no-any-return]

    def finalize(self) -> None:
        """Finalize the iterators."""
        for iterator in self._iterators.values():
            iterator.finalize()

    def get_optimizer(self, name: str) -> Any:
        """The optimizer ``name`` (``'main'``)."""
        return self._optimizers[name]

    def get_all_optimizers(self) -> dict[str, Any]:
        """``{name: optimizer}``."""
        return dict(self._optimizers)

    def get_iterator(self, name: str) -> Any:
        """The iterator ``name`` (``'main'``)."""
        return self._iterators[name]

    def update(self) -> None:
        """One iteration (:meth:`update_core`), then ``iteration += 1``."""
        self.update_core()
        self.iteration += 1

    def update_core(self) -> None:
        """Take a batch, convert it and update the main optimizer with it."""
        iterator = self._iterators["main"]
        batch = iterator.next()
        in_arrays = convert._call_converter(self.converter, batch, self.input_device)
        optimizer = self._optimizers["main"]
        loss_func = self.loss_func or optimizer.target
        if isinstance(in_arrays, tuple):
            optimizer.update(loss_func, *in_arrays)
        elif isinstance(in_arrays, dict):
            optimizer.update(loss_func, **in_arrays)
        else:
            optimizer.update(loss_func, in_arrays)
        if self.auto_new_epoch and iterator.is_new_epoch:
            optimizer.new_epoch(auto=True)

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol (keys ``iterator:main/...``, ``optimizer:main/...``,
        ``model:main/...``, ``iteration``)."""
        for name, iterator in self._iterators.items():
            iterator.serialize(serializer["iterator:" + name])
        for name, optimizer in self._optimizers.items():
            optimizer.serialize(serializer["optimizer:" + name])
            optimizer.target.serialize(serializer["model:" + name])
        self.iteration = serializer("iteration", self.iteration)


def __getattr__(name: str) -> Any:
    _missing_attribute(__name__, "chainer.training.updaters", name, name[:1].isupper(), __all__)
