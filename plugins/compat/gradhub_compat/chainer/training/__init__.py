"""chainer's ``chainer.training`` (chainer 7.8.1): :class:`Trainer`, the updaters
(:class:`StandardUpdater`), the triggers, the extensions, :class:`Extension` and
:func:`make_extension`.

A chainer training script runs with its import lines changed::

    from gradhub_compat import chainer
    from gradhub_compat.chainer import training
    from gradhub_compat.chainer.training import extensions

    train_iter = chainer.iterators.SerialIterator(train, 100)
    test_iter = chainer.iterators.SerialIterator(test, 100, repeat=False, shuffle=False)
    updater = training.updaters.StandardUpdater(train_iter, optimizer)
    trainer = training.Trainer(updater, (20, "epoch"), out="result")
    trainer.extend(extensions.Evaluator(test_iter, model))
    trainer.extend(extensions.LogReport())
    trainer.extend(extensions.snapshot(), trigger=(1, "epoch"))
    trainer.run()
"""

from __future__ import annotations

from typing import Any

from .._device import _missing_attribute
from . import extensions, trigger, triggers, updaters, util
from .extension import PRIORITY_EDITOR, PRIORITY_READER, PRIORITY_WRITER, Extension, make_extension
from .trainer import Trainer
from .triggers import IntervalTrigger
from .updaters import StandardUpdater, Updater
from .util import get_trigger

__all__ = [
    "PRIORITY_EDITOR",
    "PRIORITY_READER",
    "PRIORITY_WRITER",
    "Extension",
    "IntervalTrigger",
    "StandardUpdater",
    "Trainer",
    "Updater",
    "extensions",
    "get_trigger",
    "make_extension",
    "trigger",
    "triggers",
    "updaters",
    "util",
]


def __getattr__(name: str) -> Any:
    _missing_attribute(__name__, "chainer.training", name, name[:1].isupper(), __all__)
