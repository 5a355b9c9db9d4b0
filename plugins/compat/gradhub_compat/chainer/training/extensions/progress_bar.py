"""chainer's ``ProgressBar`` extension (chainer 7.8.1 ``training/extensions/progress_bar.py``
and ``util.ProgressBar``)."""

from __future__ import annotations

import collections
import datetime
import sys
import time
from typing import Any

from ..extension import Extension

__all__ = ["ProgressBar"]


class _ConsoleProgressBar:
    """chainer's ``extensions.util.ProgressBar``: lines written to ``out``, then the cursor
    moved back up (ANSI escapes) so that the next update overwrites them."""

    def __init__(self, bar_length: int | None = None, out: Any = None) -> None:
        self._bar_length = 50 if bar_length is None else bar_length
        self._out = sys.stdout if out is None else out
        self._recent_timing: collections.deque[tuple[float, float, float]] = collections.deque(
            maxlen=100
        )

    def update_speed(self, iteration: float, epoch_detail: float) -> tuple[float, float]:
        now = time.time()
        self._recent_timing.append((iteration, epoch_detail, now))
        old_t, old_e, old_sec = self._recent_timing[0]
        span = now - old_sec
        if span != 0:
            return (iteration - old_t) / span, (epoch_detail - old_e) / span
        return float("inf"), float("inf")

    def get_lines(self) -> list[str]:
        raise NotImplementedError

    def update(self) -> None:
        self._out.write("\033[J")
        lines = self.get_lines()
        for line in lines:
            self._out.write(line)
        self._out.write(f"\033[{len(lines):d}A")
        self.flush()

    def close(self) -> None:
        self._out.write("\033[J")
        self.flush()

    def flush(self) -> None:
        if hasattr(self._out, "flush"):
            self._out.flush()


class ProgressBar(Extension):
    """``ProgressBar(training_length=None, update_interval=100, bar_length=50,
    out=sys.stdout)``: every ``update_interval`` iterations writes to ``out`` the total and
    this epoch's progress bars, the iteration and epoch counts and the speed with the
    estimated time left, as chainer's (the same text; the speed is measured here), the
    terminal cursor moved back up with ANSI escapes so that the next update overwrites it.
    ``training_length`` (``(length, unit)``) defaults to the stop trigger's."""

    def __init__(
        self,
        training_length: Any = None,
        update_interval: int = 100,
        bar_length: int = 50,
        out: Any = sys.stdout,
    ) -> None:
        self._training_length = training_length
        self._update_interval = update_interval
        self._bar_length = bar_length
        self._out = out
        self._pbar = _TrainerProgressBar(bar_length, out)
        self._pbar.training_length = training_length

    def __call__(self, trainer: Any) -> None:
        self._pbar.trainer = trainer
        iteration = trainer.updater.iteration
        if iteration % self._update_interval == 0:
            self._pbar.update()

    def finalize(self) -> None:
        """Erase the bar."""
        self._pbar.close()


class _TrainerProgressBar(_ConsoleProgressBar):
    trainer: Any = None
    training_length: Any = None
    status_template: str | None = None

    def get_lines(self) -> list[str]:
        lines = []
        iteration = self.trainer.updater.iteration
        epoch = self.trainer.updater.epoch_detail
        if self.training_length is None:
            self.training_length = self.trainer.stop_trigger.get_training_length()
        length, unit = self.training_length
        rate = iteration / length if unit == "iteration" else epoch / length
        rate = min(rate, 1.0)
        bar_length = self._bar_length
        marks = "#" * int(rate * bar_length)
        lines.append(
            "     total [{}{}] {:6.2%}\n".format(marks, "." * (bar_length - len(marks)), rate)
        )
        epoch_rate = epoch - int(epoch)
        marks = "#" * int(epoch_rate * bar_length)
        lines.append(
            "this epoch [{}{}] {:6.2%}\n".format(marks, "." * (bar_length - len(marks)), epoch_rate)
        )
        if self.status_template is None:
            length_, unit_ = self.training_length
            self.status_template = (
                "{0.iteration:10} iter, {0.epoch} epoch / " + f"{length_} {unit_}s\n"
            )
        lines.append(self.status_template.format(self.trainer.updater))
        speed_t, speed_e = self.update_speed(iteration, epoch)
        if unit == "iteration":
            estimated_time = (length - iteration) / speed_t
        else:
            estimated_time = (length - epoch) / speed_e
        estimated_time = max(estimated_time, 0.0)
        lines.append(
            f"{speed_t:10.5g} iters/sec. Estimated time to finish: "
            f"{datetime.timedelta(seconds=estimated_time)}.\n"
        )
        return lines
