"""chainer's ``LogReport`` and ``PrintReport`` extensions (chainer 7.8.1
``training/extensions/log_report.py``, ``print_report.py``)."""

from __future__ import annotations

import json
import os
import sys
import warnings
from typing import Any

from gradhub.state import atomic_write

from .._summary import DictSummary, is_writer
from ..extension import Extension
from ..util import get_trigger

__all__ = ["LogReport", "PrintReport"]


class LogReport(Extension):
    """``LogReport(keys=None, trigger=(1, 'epoch'), postprocess=None, filename='log')``: called
    at every iteration, it accumulates the observation's scalar values (``keys`` only, when
    given); when ``trigger`` fires it appends to ``log`` a dict of their means (as Python
    floats) with ``epoch``, ``iteration`` and ``elapsed_time``, runs ``postprocess(entry)``,
    and writes the whole log to ``<out>/<filename>`` as chainer's JSON (``json.dump(log,
    indent=4)``; the file name may use the entry's keys, ``'log_{epoch}'``; None writes
    nothing). The file is replaced atomically. ``serialize`` keeps the trigger, the running
    sums and the log (as a JSON string, chainer's ``_log``)."""

    def __init__(
        self,
        keys: Any = None,
        trigger: Any = (1, "epoch"),
        postprocess: Any = None,
        filename: str | None = None,
        *,
        log_name: str | None = "log",
    ) -> None:
        self._keys = keys
        self._trigger = get_trigger(trigger)
        self._postprocess = postprocess
        self._log: list[dict[str, Any]] = []
        self._log_name = log_name if filename is None else filename
        self._init_summary()

    def __call__(self, trainer: Any) -> None:
        keys = self._keys
        observation = trainer.observation
        if keys is None:
            self._summary.add(observation)
        else:
            self._summary.add({k: observation[k] for k in keys if k in observation})
        if trainer.is_before_training or self._trigger(trainer):
            stats = self._summary.compute_mean()
            stats_cpu = {name: float(value) for name, value in stats.items()}
            updater = trainer.updater
            stats_cpu["epoch"] = updater.epoch
            stats_cpu["iteration"] = updater.iteration
            stats_cpu["elapsed_time"] = trainer.elapsed_time
            if self._postprocess is not None:
                self._postprocess(stats_cpu)
            self._log.append(stats_cpu)
            if self._log_name is not None:
                log_name = self._log_name.format(**stats_cpu)
                text = json.dumps(self._log, indent=4)
                atomic_write(os.path.join(trainer.out, log_name), text.encode("utf-8"))
            self._init_summary()

    @property
    def log(self) -> list[dict[str, Any]]:
        """The entries so far (a list of dicts)."""
        return self._log

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``_trigger/...``, ``_summary/...``, ``_log`` (JSON)."""
        if hasattr(self._trigger, "serialize"):
            self._trigger.serialize(serializer["_trigger"])
        try:
            self._summary.serialize(serializer["_summary"])
        except KeyError:
            warnings.warn("The statistics are not saved.", stacklevel=2)
        if is_writer(serializer):
            serializer("_log", json.dumps(self._log))
        else:
            self._log = json.loads(serializer("_log", ""))

    def _init_summary(self) -> None:
        self._summary = DictSummary()


class PrintReport(Extension):
    """``PrintReport(entries, log_report='LogReport', out=sys.stdout)``: prints the new
    entries of the :class:`LogReport` (an extension name or an instance) as a table: a header
    of the ``entries`` (each column ``max(10, len(name))`` wide, two spaces apart) at the first
    call, then one row per log entry (``'{:<Wg}'``, blank when the entry lacks the key), each
    preceded by the ANSI erase ``\\033[J``, as chainer's."""

    def __init__(self, entries: list[str], log_report: Any = "LogReport", out: Any = sys.stdout):
        self._entries = entries
        self._log_report = log_report
        self._out = out
        self._log_len = 0
        entry_widths = [max(10, len(s)) for s in entries]
        header = "  ".join(f"{{:{w}}}" for w in entry_widths).format(*entries) + "\n"
        self._header: str | None = header
        self._templates = [
            (entry, f"{{:<{w}g}}  ", " " * (w + 2)) for entry, w in zip(entries, entry_widths)
        ]

    def __call__(self, trainer: Any) -> None:
        out = self._out
        if self._header:
            out.write(self._header)
            self._header = None
        log_report = self._log_report
        if isinstance(log_report, str):
            log_report = trainer.get_extension(log_report)
        elif isinstance(log_report, LogReport):
            log_report(trainer)
        else:
            raise TypeError(f"log report has a wrong type {type(log_report)}")
        log = log_report.log
        log_len = self._log_len
        while len(log) > log_len:
            out.write("\033[J")
            self._print(log[log_len])
            log_len += 1
        self._log_len = log_len

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: the LogReport instance given, if any."""
        if isinstance(self._log_report, LogReport):
            self._log_report.serialize(serializer["_log_report"])

    def _print(self, observation: dict[str, Any]) -> None:
        out = self._out
        for entry, template, empty in self._templates:
            if entry in observation:
                out.write(template.format(observation[entry]))
            else:
                out.write(empty)
        out.write("\n")
        if hasattr(out, "flush"):
            out.flush()
