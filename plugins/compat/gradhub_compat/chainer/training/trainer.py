"""chainer's ``chainer.training.Trainer`` (chainer 7.8.1 ``training/trainer.py``)."""

from __future__ import annotations

import collections
import os
import sys
import time
import traceback
from typing import Any

from ..reporter import Reporter
from . import extension as extension_module
from ._summary import is_writer
from .util import get_trigger

__all__ = ["Trainer"]


class _ExtensionEntry:
    def __init__(self, extension: Any, priority: int, trigger: Any, call_before_training: bool):
        self.extension = extension
        self.trigger = trigger
        self.priority = priority
        self.call_before_training = call_before_training


class Trainer:
    """``Trainer(updater, stop_trigger=None, out='result', extensions=None)``: chainer's
    training loop.

    ``run()`` creates ``out``, calls each extension's ``initialize(trainer)`` (in priority
    order, highest first), then until ``stop_trigger(trainer)`` (a ``(length, unit)`` pair,
    e.g. ``(20, 'epoch')``) fires: a fresh ``observation`` dict becomes the reporter's
    observation, ``updater.update()`` runs one iteration (what the models report lands in
    ``observation``, under ``main/...`` for the optimizer ``'main'``'s target and its links),
    then every extension whose trigger fires is called. On an exception each extension's
    ``on_error`` runs; ``finalize`` always runs. ``extend(ext, name=None, trigger=None,
    priority=None, *, call_before_training=False)`` adds an extension (a repeated name gets
    ``_1``, ``_2``...); ``get_extension(name)``; ``elapsed_time`` (seconds of training, kept
    across a snapshot); ``serialize`` saves the updater, the stop trigger, each extension and
    its trigger (chainer's keys: ``updater/``, ``stop_trigger/``, ``extensions/<name>/``,
    ``extension_triggers/<name>/``, ``_snapshot_elapsed_time``).

    Example::

        >>> import os, tempfile, numpy as np
        >>> from gradhub_compat import chainer
        >>> import gradhub_compat.chainer.links as L
        >>> from gradhub_compat.chainer import training
        >>> from gradhub_compat.chainer.training import extensions
        >>> np.random.seed(0)
        >>> x = np.random.randn(8, 3).astype(np.float32)
        >>> t = (x.sum(axis=1) > 0).astype(np.int32)
        >>> model = L.Classifier(L.Linear(3, 2))
        >>> optimizer = chainer.optimizers.SGD(lr=0.1).setup(model)
        >>> it = chainer.iterators.SerialIterator(chainer.datasets.TupleDataset(x, t), 4)
        >>> updater = training.updaters.StandardUpdater(it, optimizer)
        >>> trainer = training.Trainer(updater, (2, "epoch"), out=tempfile.mkdtemp())
        >>> trainer.extend(extensions.LogReport())
        >>> trainer.run()
        >>> updater.iteration, [e["epoch"] for e in trainer.get_extension("LogReport").log]
        (4, [1, 2])
        >>> sorted(os.listdir(trainer.out))
        ['log']
    """

    def __init__(
        self,
        updater: Any,
        stop_trigger: Any = None,
        out: str = "result",
        extensions: Any = None,
    ) -> None:
        self.updater = updater
        self.stop_trigger = get_trigger(stop_trigger)
        self.observation: dict[str, Any] = {}
        self.out = out
        if extensions is None:
            extensions = []
        reporter = Reporter()
        for name, optimizer in updater.get_all_optimizers().items():
            reporter.add_observer(name, optimizer.target)
            reporter.add_observers(name, optimizer.target.namedlinks(skipself=True))
        self.reporter = reporter
        self._done = False
        self._extensions: collections.OrderedDict[str, _ExtensionEntry] = collections.OrderedDict()
        self._start_at: float | None = None
        self._snapshot_elapsed_time = 0.0
        self._final_elapsed_time: float | None = None
        updater.connect_trainer(self)
        for ext in extensions:
            self.extend(ext)

    @property
    def is_before_training(self) -> bool:
        """Whether no iteration has run yet."""
        return self.updater.iteration == 0  # type: ignore[no-any-return]

    @property
    def elapsed_time(self) -> float:
        """Seconds since ``run()`` started (plus those of the run a snapshot was taken in);
        RuntimeError before ``run()``."""
        if self._done:
            return self._final_elapsed_time  # type: ignore[return-value]
        if self._start_at is None:
            raise RuntimeError("training has not been started yet")
        return time.perf_counter() - self._start_at + self._snapshot_elapsed_time

    def extend(
        self,
        extension: Any,
        name: str | None = None,
        trigger: Any = None,
        priority: int | None = None,
        *,
        call_before_training: bool = False,
    ) -> None:
        """Register ``extension`` (its ``name``/``default_name``/``__name__``, ``trigger``
        (default ``(1, 'iteration')``) and ``priority`` (default ``PRIORITY_READER``) unless
        given)."""
        if name is None:
            name = getattr(extension, "name", None)
            if name is None:
                name = getattr(extension, "default_name", None)
                if name is None:
                    name = getattr(extension, "__name__", None)
                    if name is None:
                        raise TypeError("name is not given for the extension")
        if name == "training":
            raise ValueError('the name "training" is prohibited as an extension name')
        if trigger is None:
            trigger = getattr(extension, "trigger", (1, "iteration"))
        trigger = get_trigger(trigger)
        if priority is None:
            priority = getattr(extension, "priority", extension_module.PRIORITY_READER)
        modified_name = name
        ordinal = 0
        while modified_name in self._extensions:
            ordinal += 1
            modified_name = f"{name}_{ordinal}"
        extension.name = modified_name
        self._extensions[modified_name] = _ExtensionEntry(
            extension,
            priority,
            trigger,
            call_before_training,  # type: ignore[arg-type]
        )

    def get_extension(self, name: str) -> Any:
        """The extension registered as ``name`` (ValueError when none)."""
        if name in self._extensions:
            return self._extensions[name].extension
        raise ValueError(f"extension {name} not found")

    def run(self, show_loop_exception_msg: bool = True) -> None:
        """Run the training loop until the stop trigger fires (once per trainer)."""
        if self._done:
            raise RuntimeError("cannot run training loop multiple times")
        os.makedirs(self.out, exist_ok=True)
        extension_order = sorted(
            self._extensions.keys(), key=lambda n: self._extensions[n].priority, reverse=True
        )
        extensions = [(name, self._extensions[name]) for name in extension_order]
        self._start_at = time.perf_counter()
        for _, entry in extensions:
            initializer = getattr(entry.extension, "initialize", None)
            finished = getattr(entry.trigger, "finished", False)
            if initializer and not finished:
                initializer(self)
        update = self.updater.update
        reporter = self.reporter
        stop_trigger = self.stop_trigger
        if self.is_before_training:
            self.observation = {}
            with reporter.scope(self.observation):
                for _, entry in extensions:
                    if entry.call_before_training:
                        entry.extension(self)
        try:
            while not stop_trigger(self):
                self.observation = {}
                with reporter.scope(self.observation):
                    update()
                    for _, entry in extensions:
                        if entry.trigger(self):
                            entry.extension(self)
        except Exception as e:
            f = sys.stderr
            if show_loop_exception_msg:
                f.write(f"Exception in main training loop: {e}\n")
                f.write("Traceback (most recent call last):\n")
                traceback.print_tb(sys.exc_info()[2])
                f.write(
                    "Will finalize trainer extensions and updater before reraising the exception.\n"
                )
            for _, entry in extensions:
                handler = getattr(entry.extension, "on_error", None)
                if handler:
                    try:
                        handler(self, e, sys.exc_info()[2])
                    except Exception as he:
                        f.write(f"Exception in error handler: {he}\n")
                        f.write("Traceback (most recent call last):\n")
                        traceback.print_tb(sys.exc_info()[2])
            raise
        finally:
            for _, entry in extensions:
                finalize = getattr(entry.extension, "finalize", None)
                if finalize:
                    finalize()
            self.updater.finalize()
        self._final_elapsed_time = self.elapsed_time
        self._done = True

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol (see the class docstring)."""
        self.updater.serialize(serializer["updater"])
        if hasattr(self.stop_trigger, "serialize"):
            self.stop_trigger.serialize(serializer["stop_trigger"])
        s = serializer["extensions"]
        t = serializer["extension_triggers"]
        for name, entry in self._extensions.items():
            if hasattr(entry.extension, "serialize"):
                entry.extension.serialize(s[name])
            if hasattr(entry.trigger, "serialize"):
                entry.trigger.serialize(t[name])
        if is_writer(serializer):
            serializer("_snapshot_elapsed_time", self.elapsed_time)
        else:
            self._snapshot_elapsed_time = serializer("_snapshot_elapsed_time", 0.0)
