"""chainer's ``VariableStatisticsPlot`` extension (chainer 7.8.1
``chainer/training/extensions/variable_statistics_plot.py``): running statistics of the data
and gradients of Variables (or of the parameters of links), plotted with matplotlib.

As chainer's, the extension does nothing (and warns at each call) where matplotlib cannot be
imported; ``VariableStatisticsPlot.available()`` tells which. The module also holds chainer's
helpers :class:`Reservoir` (the fixed-size running sample) and :class:`Statistician`.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from ..extension import Extension
from ..util import get_trigger

__all__ = ["Reservoir", "Statistician", "VariableStatisticsPlot"]

_DEFAULT_PERCENTILES = (0, 0.13, 2.28, 15.87, 50, 84.13, 97.72, 99.87, 100)

#: None until the first availability check, then whether matplotlib imports
_available: bool | None = None
#: matplotlib's C0 colour (``'#1f77b4'`` as RGBA), its 0.2-alpha form and the keyword arguments
#: of the percentile bands, set when matplotlib is found
_plot_color: Any = None
_plot_color_trans: Any = None
_plot_common_kwargs: dict[str, Any] = {}


def _try_import_matplotlib() -> None:
    global _available, _plot_color, _plot_color_trans, _plot_common_kwargs
    try:
        import matplotlib
        import matplotlib.colors
    except ImportError:
        _available = False
        return
    _available = True
    _plot_color = matplotlib.colors.to_rgba("#1f77b4")
    _plot_color_trans = (*_plot_color[:3], 0.2)
    _plot_common_kwargs = {"alpha": 0.2, "linewidth": 0, "color": _plot_color_trans}


def _check_available() -> None:
    if _available is None:
        _try_import_matplotlib()
    if not _available:
        warnings.warn(
            "matplotlib is not installed on your environment, so nothing will be plotted at "
            "this time. Please install matplotlib to plot figures.\n\n"
            "  $ pip install matplotlib\n",
            stacklevel=3,
        )


def _unpack_variables(x: Any) -> tuple[Any, ...]:
    """The Variables of ``x``: a Variable, a Link (its ``params(include_uninit=True)``) or a
    (nested) list or tuple of them; anything else contributes nothing."""
    from ... import Variable
    from ...link import Link

    if isinstance(x, Variable):
        return (x,)
    if isinstance(x, Link):
        return tuple(x.params(include_uninit=True))
    if isinstance(x, (list, tuple)):
        memo: tuple[Any, ...] = ()
        for xi in x:
            memo += _unpack_variables(xi)
        return memo
    return ()


def _to_host(x: Any) -> np.ndarray:
    from ...backends import cuda

    return np.asarray(cuda.to_cpu(x))


class Reservoir:
    """``Reservoir(size, data_shape, dtype=numpy.float32)``: a reservoir sample of at most
    ``size`` items of shape ``data_shape``, each with an index.

    ``add(x, idx=None)`` keeps the first ``size`` items; the ``n``-th item after them (counting
    from 0) replaces a uniformly chosen one with probability :math:`size / (n + 1)`, drawn from
    numpy's global generator (``numpy.random.random`` then ``numpy.random.randint``, as chainer,
    so a seeded run keeps chainer's sample). The index stored is ``idx or counter`` (an ``idx``
    of 0 stores the running count). ``get_data()`` is ``(indices, items)`` sorted by index.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat.chainer.training.extensions.variable_statistics_plot import (
        ...     Reservoir)
        >>> r = Reservoir(2, (1,))
        >>> r.add(np.array([1.5]), idx=7); r.add(np.array([2.5]), idx=3)
        >>> r.get_data()
        (array([3, 7], dtype=int32), array([[2.5],
               [1.5]], dtype=float32))
    """

    def __init__(self, size: int, data_shape: tuple[int, ...], dtype: Any = np.float32) -> None:
        self.size = size
        self.data = np.zeros((size, *data_shape), dtype=dtype)
        self.idxs = np.zeros((size,), dtype=np.int32)
        self.counter = 0

    def add(self, x: Any, idx: int | None = None) -> None:
        """Offer ``x`` (with index ``idx``) to the sample."""
        if self.counter < self.size:
            self.data[self.counter] = x
            self.idxs[self.counter] = idx or self.counter
        elif np.random.random() < self.size / float(self.counter + 1):
            i = np.random.randint(self.size)
            self.data[i] = x
            self.idxs[i] = idx or self.counter
        self.counter += 1

    def get_data(self) -> tuple[np.ndarray, np.ndarray]:
        """The kept indices (int32) and items, in the order of the indices."""
        idxs = self.idxs[: min(self.counter, self.size)]
        sorted_args = np.argsort(idxs)
        return idxs[sorted_args], self.data[sorted_args]


class Statistician:
    """``Statistician(collect_mean, collect_std, percentile_sigmas)``: ``s(x, axis=0)`` is a
    dict with ``'mean'`` (``x.mean(axis)``), ``'std'`` (``x.std(axis)``, the population
    deviation) and ``'percentile'`` (``percentile(x, percentile_sigmas, axis)``, linear
    interpolation) for the statistics asked for; ``axis`` None is every axis.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat.chainer.training.extensions.variable_statistics_plot import (
        ...     Statistician)
        >>> out = Statistician(True, False, (0, 50))(np.array([1.0, 2.0, 6.0]))
        >>> float(out["mean"]), out["percentile"].tolist()
        (3.0, [1.0, 2.0])
    """

    def __init__(self, collect_mean: bool, collect_std: bool, percentile_sigmas: Any) -> None:
        self.collect_mean = collect_mean
        self.collect_std = collect_std
        self.percentile_sigmas = percentile_sigmas

    def __call__(self, x: Any, axis: Any = 0, dtype: Any = None, xp: Any = None) -> dict[str, Any]:
        if axis is None:
            axis = tuple(range(x.ndim))
        elif not isinstance(axis, (tuple, list)):
            axis = (axis,)
        return self.collect(x, tuple(axis))

    def collect(self, x: Any, axis: tuple[int, ...]) -> dict[str, Any]:
        """The statistics of ``x`` over ``axis``."""
        out: dict[str, Any] = {}
        if self.collect_mean:
            out["mean"] = x.mean(axis=axis)
        if self.collect_std:
            out["std"] = x.std(axis=axis)
        if self.percentile_sigmas:
            out["percentile"] = np.percentile(x, self.percentile_sigmas, axis=axis)
        return out


class VariableStatisticsPlot(Extension):
    """``VariableStatisticsPlot(targets, max_sample_size=1000, report_data=True,
    report_grad=True, plot_mean=True, plot_std=True, percentile_sigmas=(0, 0.13, 2.28, 15.87,
    50, 84.13, 97.72, 99.87, 100), trigger=(1, 'epoch'), filename='statistics.png',
    figsize=None, marker=None, grid=True)``: plots the statistics of the data and the
    gradients of Variables over the iterations.

    ``targets`` is a Variable, a Link (its parameters, uninitialized ones included) or a list
    of either. At each call (the extension's own trigger, default every iteration) the arrays
    of each kind asked for (``data`` with ``report_data``, ``grad`` with ``report_grad``) of
    all the Variables are flattened and joined, and their statistics computed: the mean
    :math:`\\mu = \\frac1n\\sum_i x_i` (``plot_mean``), the population standard deviation
    :math:`\\sqrt{\\frac1n\\sum_i (x_i - \\mu)^2}` (``plot_std``) and the percentiles
    ``percentile_sigmas`` (one number or a sequence; 0 and 100 are the minimum and maximum).
    Variables whose array is None are skipped; a kind with no array at all gives zeros. The
    row of statistics (float32, shape ``(kinds, mean + std + percentiles)``) goes into a
    :class:`Reservoir` of ``max_sample_size`` rows indexed by ``trainer.updater.iteration``.
    When ``trigger`` (a separate trigger, default ``(1, 'epoch')``) fires, the sample is
    plotted to ``trainer.out/filename`` (``file_name=`` is chainer's older alias): one column
    per kind, a row with the mean and std (an error bar plot when both), a row with the
    percentiles (bands between symmetric pairs, a line for an odd middle one), legends, grids
    (``grid``), ``figsize`` and ``marker`` passed to matplotlib.

    As chainer's: nothing is collected or plotted where matplotlib is missing (each call warns,
    see :meth:`available`); ``ValueError`` when ``targets`` holds no Variable or nothing is to
    be plotted; an uninitialized parameter's gradient raises RuntimeError. The statistics are
    computed on host copies of the arrays.

    Example::

        >>> import gradhub_compat.chainer.links as L
        >>> from gradhub_compat.chainer.training import extensions
        >>> ext = extensions.VariableStatisticsPlot(L.Linear(3, 2), plot_std=False)
        >>> len(ext._vars), ext._keys, ext._data_shape
        (2, ['data', 'grad'], (2, 10))
    """

    def __init__(
        self,
        targets: Any,
        max_sample_size: int = 1000,
        report_data: bool = True,
        report_grad: bool = True,
        plot_mean: bool = True,
        plot_std: bool = True,
        percentile_sigmas: Any = _DEFAULT_PERCENTILES,
        trigger: Any = (1, "epoch"),
        filename: str | None = None,
        figsize: Any = None,
        marker: Any = None,
        grid: bool = True,
        **kwargs: Any,
    ) -> None:
        file_name = kwargs.pop("file_name", "statistics.png")
        if kwargs:
            names = ", ".join(repr(k) for k in sorted(kwargs))
            raise TypeError(
                f"VariableStatisticsPlot.__init__() got unexpected keyword argument(s) {names}"
            )
        if filename is None:
            filename = file_name

        self._vars = _unpack_variables(targets)
        if not self._vars:
            raise ValueError(
                "Need at least one variables for which to collect statistics.\nActual: 0 <= 0"
            )
        if not any((plot_mean, plot_std, bool(percentile_sigmas))):
            raise ValueError("Nothing to plot")

        self._keys: list[str] = []
        if report_data:
            self._keys.append("data")
        if report_grad:
            self._keys.append("grad")
        self._report_data = report_data
        self._report_grad = report_grad

        self._statistician = Statistician(
            collect_mean=plot_mean, collect_std=plot_std, percentile_sigmas=percentile_sigmas
        )
        self._plot_mean = plot_mean
        self._plot_std = plot_std
        self._plot_percentile = bool(percentile_sigmas)

        self._trigger = get_trigger(trigger)
        self._filename = filename
        self._figsize = figsize
        self._marker = marker
        self._grid = grid

        if not self._plot_percentile:
            n_percentile = 0
        elif not isinstance(percentile_sigmas, (list, tuple)):
            n_percentile = 1  # one percentile given as a number
        else:
            n_percentile = len(percentile_sigmas)
        self._data_shape = (len(self._keys), int(plot_mean) + int(plot_std) + n_percentile)
        self._samples = Reservoir(max_sample_size, data_shape=self._data_shape)

    @staticmethod
    def available() -> bool:
        """Whether matplotlib can be imported (checked once); False also warns."""
        _check_available()
        return bool(_available)

    def __call__(self, trainer: Any) -> None:
        if not self.available():
            return
        # imported here so that a program may call matplotlib.use() after importing this
        import matplotlib.pyplot as plt

        stats = np.zeros(self._data_shape, dtype=np.float32)
        for i, k in enumerate(self._keys):
            xs = []
            for var in self._vars:
                x = getattr(var, k, None)
                if x is not None:
                    xs.append(_to_host(x).ravel())
            if xs:
                stat_dict = self._statistician(np.concatenate(xs, axis=0), axis=0)
                stat_list = []
                if self._plot_mean:
                    stat_list.append(np.atleast_1d(stat_dict["mean"]))
                if self._plot_std:
                    stat_list.append(np.atleast_1d(stat_dict["std"]))
                if self._plot_percentile:
                    stat_list.append(np.atleast_1d(stat_dict["percentile"]))
                stats[i] = np.concatenate(stat_list, axis=0)
        self._samples.add(stats, idx=trainer.updater.iteration)

        if self._trigger(trainer):
            file_path = os.path.join(trainer.out, self._filename)
            self.save_plot_using_module(file_path, plt)

    def save_plot_using_module(self, file_path: str, plt: Any) -> None:
        """Plot the sample with the pyplot module ``plt`` and save it to ``file_path``."""
        nrows = int(self._plot_mean or self._plot_std) + int(self._plot_percentile)
        ncols = len(self._keys)

        fig, axes = plt.subplots(nrows, ncols, figsize=self._figsize, sharex=True)
        if not isinstance(axes, np.ndarray):  # a single subplot
            axes = np.asarray([axes])
        if nrows == 1:
            axes = axes[None, :]
        elif ncols == 1:
            axes = axes[:, None]

        idxs, data = self._samples.get_data()

        # where the percentiles start in a row of statistics
        offset = int(self._plot_mean) + int(self._plot_std)
        n_percentile = data.shape[-1] - offset
        n_percentile_mid_floor = n_percentile // 2
        n_percentile_odd = n_percentile % 2 == 1

        for col in range(ncols):
            row = 0
            ax = axes[row, col]
            ax.set_title(self._keys[col])  # 'data' or 'grad'

            if self._plot_mean or self._plot_std:
                if self._plot_mean and self._plot_std:
                    ax.errorbar(
                        idxs,
                        data[:, col, 0],
                        data[:, col, 1],
                        color=_plot_color,
                        ecolor=_plot_color_trans,
                        label="mean, std",
                        marker=self._marker,
                    )
                else:
                    label = "mean" if self._plot_mean else "std"
                    ax.plot(
                        idxs, data[:, col, 0], color=_plot_color, label=label, marker=self._marker
                    )
                row += 1

            if self._plot_percentile:
                ax = axes[row, col]
                for i in range(n_percentile_mid_floor + 1):
                    if n_percentile_odd and i == n_percentile_mid_floor:
                        # the middle one of an odd count (or a single percentile): a line
                        ax.plot(
                            idxs,
                            data[:, col, offset + i],
                            color=_plot_color,
                            label="percentile",
                            marker=self._marker,
                        )
                    else:
                        # a band between the i-th lowest and the i-th highest percentiles;
                        # with an even count the last pass draws the innermost pair again
                        label = "percentile" if i == n_percentile_mid_floor else "_nolegend_"
                        ax.fill_between(
                            idxs,
                            data[:, col, offset + i],
                            data[:, col, -i - 1],
                            label=label,
                            **_plot_common_kwargs,
                        )
                    ax.set_xlabel("iteration")

        for ax in axes.ravel():
            ax.legend()
            if self._grid:
                ax.grid()
                ax.set_axisbelow(True)

        fig.savefig(file_path)
        plt.close()
