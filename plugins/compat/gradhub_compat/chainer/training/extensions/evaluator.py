"""chainer's ``Evaluator`` extension (chainer 7.8.1 ``training/extensions/evaluator.py``)."""

from __future__ import annotations

import copy
import datetime
import warnings
from typing import Any

from ... import no_backprop_mode, using_config
from ..._device import get_device
from ...dataset import convert
from ...dataset.iterator import Iterator
from ...link import Link
from ...reporter import Reporter, report, report_scope
from .._summary import DictSummary
from ..extension import PRIORITY_WRITER, Extension
from .progress_bar import _ConsoleProgressBar

__all__ = ["Evaluator"]


class Evaluator(Extension):
    """``Evaluator(iterator, target, converter=concat_examples, device=None, eval_hook=None,
    eval_func=None, *, progress_bar=False)``: at each firing (default once per epoch, priority
    ``PRIORITY_WRITER``) it resets the iterator ``'main'`` and sweeps it once, calling
    ``eval_func(*batch)`` (default the target ``'main'``, a ``Classifier``) under
    ``chainer.using_config('train', False)`` and :func:`~gradhub_compat.chainer.no_backprop_mode`;
    the values reported are averaged over the batches (each batch weighs 1, as chainer) and
    reported to the trainer as ``<name>/<observer>/<key>`` (``validation/main/loss``,
    ``validation/main/accuracy``). ``evaluate()`` gives that dict without a trainer. The
    iterator should not repeat (a repeating one warns, as chainer).
    """

    trigger = 1, "epoch"
    default_name = "validation"  # type: ignore[assignment]
    priority = PRIORITY_WRITER
    name = None

    def __init__(
        self,
        iterator: Any,
        target: Any,
        converter: Any = convert.concat_examples,
        device: Any = None,
        eval_hook: Any = None,
        eval_func: Any = None,
        *,
        progress_bar: bool = False,
    ) -> None:
        if device is not None:
            device = get_device(device, "chainer Evaluator")
        if isinstance(iterator, Iterator):
            iterator = {"main": iterator}
        self._iterators = iterator
        if isinstance(target, Link):
            target = {"main": target}
        self._targets = target
        self.converter = converter
        self.device = device
        self.eval_hook = eval_hook
        self.eval_func = eval_func
        self._progress_bar = progress_bar
        for key, it in iterator.items():
            if getattr(it, "repeat", False):
                warnings.warn(
                    f"The `repeat` property of the iterator {key} is set to `True`. Typically, "
                    "the evaluator sweeps over iterators until they stop, but as the property "
                    "being `True`, this iterator might not stop and evaluation could go into an "
                    "infinite loop. We recommend to check the configuration of iterators",
                    stacklevel=2,
                )

    def get_iterator(self, name: str) -> Any:
        """The iterator ``name``."""
        return self._iterators[name]

    def get_all_iterators(self) -> dict[str, Any]:
        """``{name: iterator}``."""
        return dict(self._iterators)

    def get_target(self, name: str) -> Any:
        """The target link ``name``."""
        return self._targets[name]

    def get_all_targets(self) -> dict[str, Any]:
        """``{name: target}``."""
        return dict(self._targets)

    def __call__(self, trainer: Any = None) -> dict[str, Any]:
        reporter = Reporter()
        prefix = self.name + "/" if self.name is not None else ""
        for name, target in self._targets.items():
            reporter.add_observer(prefix + name, target)
            reporter.add_observers(prefix + name, target.namedlinks(skipself=True))
        with reporter, using_config("train", False):
            result = self.evaluate()
        report(result)
        return result

    def evaluate(self) -> dict[str, Any]:
        """One sweep of the iterator ``'main'``: ``{key: mean over the batches}`` of what was
        reported."""
        iterator = self._iterators["main"]
        eval_func = self.eval_func or self._targets["main"]
        if self.eval_hook:
            self.eval_hook(self)
        if hasattr(iterator, "reset"):
            iterator.reset()
            it = iterator
        else:
            warnings.warn(
                "This iterator does not have the reset method. Evaluator copies the iterator "
                "instead of resetting. This behavior is deprecated. Please implement the reset "
                "method.",
                DeprecationWarning,
                stacklevel=2,
            )
            it = copy.copy(iterator)
        summary = DictSummary()
        pbar = _IteratorProgressBar(it) if self._progress_bar else None
        for batch in it:
            observation: dict[str, Any] = {}
            with report_scope(observation):
                in_arrays = convert._call_converter(self.converter, batch, self.device)
                with no_backprop_mode():
                    if isinstance(in_arrays, tuple):
                        eval_func(*in_arrays)
                    elif isinstance(in_arrays, dict):
                        eval_func(**in_arrays)
                    else:
                        eval_func(in_arrays)
            summary.add(observation)
            if pbar is not None:
                pbar.update()
        if pbar is not None:
            pbar.close()
        return summary.compute_mean()

    def finalize(self) -> None:
        """Finalize the iterators."""
        for iterator in self._iterators.values():
            iterator.finalize()


class _IteratorProgressBar(_ConsoleProgressBar):
    def __init__(self, iterator: Any, bar_length: int | None = None, out: Any = None) -> None:
        if not (hasattr(iterator, "current_position") and hasattr(iterator, "epoch_detail")):
            raise TypeError(
                "Iterator must have the following attributes to enable a progress bar: "
                "current_position, epoch_detail"
            )
        self._iterator = iterator
        super().__init__(bar_length=bar_length, out=out)

    def get_lines(self) -> list[str]:
        iteration = self._iterator.current_position
        epoch_detail = self._iterator.epoch_detail
        epoch_size = getattr(self._iterator, "_epoch_size", None)
        rate = epoch_detail
        marks = "#" * int(rate * self._bar_length)
        lines = [
            "validation [{}{}] {:6.2%}\n".format(marks, "." * (self._bar_length - len(marks)), rate)
        ]
        if epoch_size:
            lines.append(f"{iteration:10} / {epoch_size} iterations\n")
        else:
            lines.append(f"{iteration:10} iterations\n")
        speed_t, speed_e = self.update_speed(iteration, epoch_detail)
        estimated_time = (1.0 - epoch_detail) / speed_e
        lines.append(
            f"{speed_t:10.5g} iters/sec. Estimated time to finish: "
            f"{datetime.timedelta(seconds=estimated_time)}.\n"
        )
        return lines
