"""chainer's ``chainer.training.extensions`` (chainer 7.8.1): :class:`Evaluator`,
:class:`LogReport`, :class:`PrintReport`, :class:`ProgressBar`, :func:`snapshot`,
:func:`snapshot_object`, :class:`ExponentialShift`, :class:`LinearShift`, :class:`StepShift`,
:class:`MultistepShift`, :class:`InverseShift`, :class:`PolynomialShift`, :class:`WarmupShift`,
:class:`MicroAverage`, :class:`ParameterStatistics`, :func:`observe_lr`,
:func:`observe_value`, :class:`FailOnNonNumber`, :func:`dump_graph` (``DumpGraph``: a DOT
file with gradhub's function names), :class:`VariableStatisticsPlot` (plots with matplotlib
when it is installed, as chainer's) and :class:`unchain_variables`.
:class:`PlotReport` only answers ``PlotReport.available()`` with False (it draws no plots;
scripts guard on it, as for a chainer without matplotlib) and refuses to be made."""

from __future__ import annotations

from typing import Any

from ..._device import PAGE, _missing_attribute
from ._snapshot import snapshot, snapshot_object
from .computational_graph import DumpGraph, dump_graph
from .evaluator import Evaluator
from .log_report import LogReport, PrintReport
from .micro_average import MicroAverage
from .parameter_statistics import ParameterStatistics
from .progress_bar import ProgressBar
from .shifts import InverseShift, MultistepShift, PolynomialShift, StepShift, WarmupShift
from .value_extensions import (
    ExponentialShift,
    FailOnNonNumber,
    LinearShift,
    observe_lr,
    observe_value,
)
from .variable_statistics_plot import VariableStatisticsPlot
from .variable_unchain import unchain_variables


class PlotReport:
    """chainer's ``PlotReport``, which gradhub does not provide: ``PlotReport.available()`` is
    False (chainer's answer without matplotlib), so the usual guard ``if
    extensions.PlotReport.available(): trainer.extend(extensions.PlotReport(...))`` skips it;
    making one raises NotImplementedError naming the page."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "chainer.training.extensions.PlotReport is not supported by gradhub (it draws no "
            f"plots; PlotReport.available() is False); see {PAGE}"
        )

    @staticmethod
    def available() -> bool:
        """False: gradhub draws no plots."""
        return False


__all__ = [
    "DumpGraph",
    "Evaluator",
    "ExponentialShift",
    "FailOnNonNumber",
    "InverseShift",
    "LinearShift",
    "LogReport",
    "MicroAverage",
    "MultistepShift",
    "ParameterStatistics",
    "PlotReport",
    "PolynomialShift",
    "PrintReport",
    "ProgressBar",
    "StepShift",
    "VariableStatisticsPlot",
    "WarmupShift",
    "dump_graph",
    "observe_lr",
    "observe_value",
    "snapshot",
    "snapshot_object",
    "unchain_variables",
]

# chainer's module paths without a file here (``extensions.exponential_shift``...)
from ..._module_paths import install_extensions  # noqa: E402

install_extensions(__name__)


def __getattr__(name: str) -> Any:
    _missing_attribute(
        __name__, "chainer.training.extensions", name, not name.startswith("__"), __all__
    )
