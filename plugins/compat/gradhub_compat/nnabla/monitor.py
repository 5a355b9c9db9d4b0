"""nnabla's training monitors: ``from gradhub_compat.nnabla.monitor import Monitor, MonitorSeries``.

The files are nnabla 1.39's, name for name and byte for byte (for the same calls):
``MonitorSeries("train loss", Monitor(path))`` writes ``path/train-loss.series.txt``, one line
``"{index} {value:g}"`` per interval; ``MonitorTimeElapsed("time", ...)`` writes
``path/time.timer.txt``, ``"{index} {elapsed} {iterations} {total}"`` (seconds). With
``verbose=True`` each flush also logs nnabla's line (``iter=2 {train loss}=0.5``) at INFO level
on :data:`gradhub_compat.nnabla.logger.logger` (see that module for showing it).

:func:`plot_series` and :func:`plot_time_elapsed` plot those files with matplotlib (imported when
called; ``pip install matplotlib``).

``MonitorImage`` and ``MonitorImageTile`` write 8-bit PNG files of minibatches of images
(``path/<name>/<index>-<j>.png``, ``path/<name>/<index>.png``), the pixels nnabla's write (nnabla
uses an image library; the layer writes PNG itself, so the compressed bytes differ).

Example::

    >>> import tempfile
    >>> from pathlib import Path
    >>> from gradhub_compat.nnabla.monitor import Monitor, MonitorSeries
    >>> tmp = tempfile.TemporaryDirectory()
    >>> m = Monitor(tmp.name)
    >>> s = MonitorSeries("train loss", m, interval=2, verbose=False)
    >>> for i, v in enumerate([1.0, 2.0, 0.5, 0.25]):
    ...     s.add(i, v)
    >>> print(Path(m.save_path, "train-loss.series.txt").read_text(), end="")
    1 1.5
    3 0.375
    >>> tmp.cleanup()
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from .._common import host_array
from .logger import logger
from .utils.image_utils import imsave

__all__ = [
    "Monitor",
    "MonitorImage",
    "MonitorImageTile",
    "MonitorSeries",
    "MonitorTimeElapsed",
    "plot_series",
    "plot_time_elapsed",
    "tile_images",
]


def _check_interval(where: str, interval: Any) -> Any:
    if isinstance(interval, bool) or not isinstance(
        interval, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"{where}: interval must be a number, got {type(interval).__name__}")
    return interval


def _series_path(where: str, name: Any, monitor: Any, suffix: str) -> str | None:
    if not isinstance(name, str):
        raise TypeError(f"{where}: name must be a str, got {type(name).__name__}")
    if monitor is None:
        return None
    if not hasattr(monitor, "save_path"):
        raise TypeError(f"{where}: monitor must be a Monitor or None, got {type(monitor).__name__}")
    path = os.path.join(monitor.save_path, name.replace(" ", "-")) + suffix
    with open(path, "w"):  # a new monitor starts the file afresh, as nnabla's
        pass
    return path


class Monitor:
    """The folder the monitors write into: ``Monitor(save_path)`` creates it (with its parents;
    an existing one is kept) and the monitors given this object write their files there.

    Example::

        >>> import os, tempfile
        >>> from gradhub_compat.nnabla.monitor import Monitor
        >>> tmp = tempfile.TemporaryDirectory()
        >>> m = Monitor(os.path.join(tmp.name, "tmp.monitor"))
        >>> os.path.isdir(m.save_path)
        True
        >>> tmp.cleanup()
    """

    def __init__(self, save_path: str | os.PathLike[str]) -> None:
        if not isinstance(save_path, (str, os.PathLike)):
            raise TypeError(
                f"Monitor: save_path must be a path (str), got {type(save_path).__name__}"
            )
        self._save_path = save_path
        os.makedirs(save_path, exist_ok=True)

    @property
    def save_path(self) -> str | os.PathLike[str]:
        """The folder given to the constructor."""
        return self._save_path


class MonitorSeries:
    """A series of values (a loss, an error rate), averaged over each interval.

    ``add(index, value)`` buffers ``value``; once ``index - (index of the last flush)`` reaches
    ``interval`` (the first flush counts from -1, so ``interval=1`` flushes every call and
    ``interval=10`` first at index 9), it writes ``numpy.mean`` of the buffered values: a line
    ``"{index} {mean:g}"`` appended to ``<save_path>/<name with spaces as dashes>.series.txt``
    (when a ``monitor`` is given; the file is emptied by the constructor) and, with
    ``verbose``, the INFO log ``"iter={index} {{{name}}}={mean}"``, as nnabla's.

    Example::

        >>> from gradhub_compat.nnabla.monitor import MonitorSeries
        >>> s = MonitorSeries("err", interval=2, verbose=False)   # no file: keeps nothing
        >>> s.add(0, 0.5); s.add(1, 0.25); s.flush_at
        1
    """

    def __init__(
        self, name: str, monitor: Monitor | None = None, interval: int = 1, verbose: bool = True
    ) -> None:
        self.name = name
        self.interval = _check_interval("MonitorSeries", interval)
        self.verbose = verbose
        self.sp = _series_path("MonitorSeries", name, monitor, ".series.txt")
        self.flush_at = -1
        self.buf: list[Any] = []

    def add(self, index: int, value: Any) -> None:
        """Add ``value`` (a number, a 0-d array) at ``index``; flush the mean every interval."""
        self.buf.append(host_array(value))  # (a device array, x.d on a GPU, copied to the host)
        if (index - self.flush_at) < self.interval:
            return
        value = np.mean(self.buf)
        if self.verbose:
            logger.info(f"iter={index} {{{self.name}}}={value}")
        if self.sp is not None:
            with open(self.sp, "a") as fd:
                print(f"{index} {value:g}", file=fd)
        self.flush_at = index
        self.buf = []


class MonitorTimeElapsed:
    """The time elapsed between flushes (default every 100 indices).

    ``add(index)`` at a flush (as :class:`MonitorSeries`'s) appends the line
    ``"{index} {elapsed} {iterations} {total}"`` to ``<save_path>/<name>.timer.txt``: the seconds
    since the previous flush (or the construction), the number of indices since it, and the
    seconds since the construction (``time.time()`` differences, printed with ``str``), and with
    ``verbose`` logs ``"iter={index} {{{name}}}={elapsed}[sec/{iterations}iter] {total}[sec]"``.

    Example::

        >>> from gradhub_compat.nnabla.monitor import MonitorTimeElapsed
        >>> t = MonitorTimeElapsed("time", interval=2, verbose=False)
        >>> for i in range(4):
        ...     t.add(i)
        >>> t.flush_at
        3
    """

    def __init__(
        self, name: str, monitor: Monitor | None = None, interval: int = 100, verbose: bool = True
    ) -> None:
        self.name = name
        self.interval = _check_interval("MonitorTimeElapsed", interval)
        self.verbose = verbose
        self.sp = _series_path("MonitorTimeElapsed", name, monitor, ".timer.txt")
        self.flush_at = -1
        self.start = time.time()
        self.lap = self.start

    def add(self, index: int) -> None:
        """Record the time at ``index``; at each flush, write and log the elapsed times."""
        if (index - self.flush_at) < self.interval:
            return
        now = time.time()
        elapsed = now - self.lap
        elapsed_total = now - self.start
        it = index - self.flush_at
        self.lap = now
        if self.verbose:
            logger.info(
                f"iter={index} {{{self.name}}}={elapsed}[sec/{it}iter] {elapsed_total}[sec]"
            )
        if self.sp is not None:
            with open(self.sp, "a") as fd:
                print(f"{index} {elapsed} {it} {elapsed_total}", file=fd)
        self.flush_at = index


class MonitorImage:
    """Saves images of a minibatch every ``interval`` indices, as nnabla's: ``add(index, var)``
    at ``index == 0`` and wherever ``(index + 1) % interval == 0`` takes the first
    ``num_images`` images of ``var`` (a Variable, NdArray or array shaped ``(N, ..., C, H,
    W)``), maps them with ``normalize_method`` (default: min-max over the batch, ``(x - min) /
    (max - min)``), keeps at most 3 channels (adds a channel of ones to 2), and writes each as
    the 8-bit PNG ``<save_path>/<name, spaces as dashes>/<index:06d>-<j:03d>.png``
    (``(x * 255)`` truncated to uint8; values outside ``[0, 1]`` raise ``ValueError``, as
    nnabla's ``imsave``). The constructor creates the folder. nnabla's files are written by an
    image library (Pillow...); these are written by the layer itself: the same pixels, other
    compressed bytes.

    Example::

        >>> import os, tempfile
        >>> import numpy as np
        >>> from gradhub_compat.nnabla.monitor import Monitor, MonitorImage
        >>> tmp = tempfile.TemporaryDirectory()
        >>> mi = MonitorImage("noise", Monitor(tmp.name), interval=2, num_images=2, verbose=False)
        >>> for i in range(4):
        ...     mi.add(i, np.random.RandomState(0).randn(10, 3, 8, 8))
        >>> sorted(os.listdir(os.path.join(tmp.name, "noise")))[:4]
        ['000000-000.png', '000000-001.png', '000001-000.png', '000001-001.png']
        >>> tmp.cleanup()
    """

    def __init__(
        self,
        name: str,
        monitor: Monitor,
        interval: int = 1000,
        verbose: bool = True,
        num_images: int = 16,
        normalize_method: Any = None,
    ) -> None:
        where = f"nnabla.monitor.{type(self).__name__}"
        if not isinstance(name, str):
            raise TypeError(f"{where}: name must be a str, got {type(name).__name__}")
        if not hasattr(monitor, "save_path"):
            raise TypeError(f"{where}: monitor must be a Monitor, got {type(monitor).__name__}")
        self.name = name
        self.interval = _check_interval(where, interval)
        self.verbose = verbose
        self.normalize_method = (
            self.default_normalize_method if normalize_method is None else normalize_method
        )
        self.num_images = num_images
        self.save_dir = os.path.join(monitor.save_path, name.replace(" ", "-"))
        os.makedirs(self.save_dir, exist_ok=True)

    def default_normalize_method(self, x: np.ndarray) -> np.ndarray:
        """Min-max normalization over the whole batch: ``(x - x.min()) / (x.max() - x.min())``."""
        ma = x.max()
        mi = x.min()
        return (x - mi) / (ma - mi)

    def _batch(self, index: int, var: Any) -> np.ndarray | None:
        if index and (index + 1) % self.interval:
            return None
        where = f"nnabla.monitor.{type(self).__name__}.add"
        data = np.array(host_array(var.d if hasattr(var, "d") else getattr(var, "data", var)))
        if data.ndim <= 2:
            raise ValueError(f"{where}: var must be shaped (N, ..., C, H, W), got {data.shape}")
        channels = data.shape[-3]
        data = data.reshape(-1, *data.shape[-3:])
        data = data[: min(data.shape[0], self.num_images)]
        data = np.asarray(self.normalize_method(data))
        if channels > 3:
            data = data[:, :3]
        elif channels == 2:
            data = np.concatenate([data, np.ones((data.shape[0], 1) + data.shape[-2:])], axis=1)
        return data

    def add(self, index: int, var: Any) -> None:
        """Write the images of ``var`` at ``index`` if it is a flush index (see the class)."""
        data = self._batch(index, var)
        if data is None:
            return
        path_tmpl = os.path.join(self.save_dir, f"{index:06d}" + "-{}")
        for j in range(min(self.num_images, data.shape[0])):
            img = data[j].transpose(1, 2, 0)
            imsave(path_tmpl.format(f"{j:03d}.png"), img)
        if self.verbose:
            logger.info(f"iter={index} {{{self.name}}} are written to {path_tmpl.format('*.png')}.")


class MonitorImageTile(MonitorImage):
    """As :class:`MonitorImage`, but the images of each flush are tiled with
    :func:`tile_images` into one PNG, ``<save_path>/<name>/<index:06d>.png``, as nnabla's.

    Example::

        >>> import os, tempfile
        >>> import numpy as np
        >>> from gradhub_compat.nnabla.monitor import Monitor, MonitorImageTile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> mi = MonitorImageTile("fake", Monitor(tmp.name), interval=2, verbose=False)
        >>> for i in range(4):
        ...     mi.add(i, np.random.RandomState(0).randn(5, 1, 4, 4))
        >>> sorted(os.listdir(os.path.join(tmp.name, "fake")))
        ['000000.png', '000001.png', '000003.png']
        >>> tmp.cleanup()
    """

    def add(self, index: int, var: Any) -> None:
        """Write the tiled images of ``var`` at ``index`` if it is a flush index."""
        data = self._batch(index, var)
        if data is None:
            return
        path = os.path.join(self.save_dir, f"{index:06d}.png")
        imsave(path, tile_images(data))
        if self.verbose:
            logger.info(f"iter={index} {{{self.name}}} is written to {path}.")


def tile_images(data: np.ndarray, padsize: int = 1, padval: float = 0) -> np.ndarray:
    """Tile a ``(B, C, H, W)`` batch into one ``(n (H + padsize), n (W + padsize), C)`` image,
    ``n = ceil(sqrt(B))``, row by row, each tile padded below and to the right with ``padval``
    (the missing tiles too); ``(rows, columns)`` when ``C == 1``. nnabla's ``tile_images``.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat.nnabla.monitor import tile_images
        >>> tile_images(np.ones((3, 1, 2, 2))).astype(int)
        array([[1, 1, 0, 1, 1, 0],
               [1, 1, 0, 1, 1, 0],
               [0, 0, 0, 0, 0, 0],
               [1, 1, 0, 0, 0, 0],
               [1, 1, 0, 0, 0, 0],
               [0, 0, 0, 0, 0, 0]])
    """
    data = host_array(data)  # (x.d of a GPU Variable: a device array)
    if data.ndim != 4:
        raise ValueError(
            f"nnabla.monitor.tile_images: data must be a (B, C, H, W) array, got shape {data.shape}"
        )
    data = data.transpose(0, 2, 3, 1)
    n = int(np.ceil(np.sqrt(data.shape[0])))
    padding = ((0, n**2 - data.shape[0]), (0, padsize), (0, padsize)) + ((0, 0),) * (data.ndim - 3)
    data = np.pad(data, padding, mode="constant", constant_values=(padval, padval))
    data = data.reshape((n, n) + data.shape[1:]).transpose(
        (0, 2, 1, 3) + tuple(range(4, data.ndim + 1))
    )
    data = data.reshape((n * data.shape[1], n * data.shape[3]) + data.shape[4:])
    if data.shape[2] == 1:
        return data.reshape(data.shape[:2])
    return data


def _pyplot(where: str) -> Any:
    """matplotlib's ``pyplot``, imported on first use (an optional dependency, as in nnabla)."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            f"nnabla.monitor.{where} needs matplotlib: pip install matplotlib"
        ) from None
    return plt


def _read_columns(where: str, filename: Any, column: int) -> tuple[np.ndarray, np.ndarray]:
    """Column 0 (as int64) and ``column`` (as float32) of a monitor's text file (only parsed:
    whitespace-separated numbers, one row per line; blank lines skipped), as nnabla's
    ``np.genfromtxt(filename, dtype="i8,f4")`` reads them."""
    keys: list[int] = []
    values: list[float] = []
    with open(filename) as f:
        for lineno, line in enumerate(f, 1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            try:
                keys.append(int(fields[0]))
                values.append(float(fields[column]))
            except (ValueError, IndexError):
                raise ValueError(
                    f"nnabla.monitor.{where}: line {lineno} of {filename!s} is not a monitor's "
                    f"line (an integer index, then numbers; column {column} is read): {line!r}"
                ) from None
    return np.asarray(keys, np.int64), np.asarray(values, np.float32)


def plot_series(filename: Any, plot_kwargs: dict[str, Any] | None = None) -> None:
    """Plot a :class:`MonitorSeries` file (``*.series.txt``): the indices against the values,
    with ``matplotlib.pyplot.plot(index, values, **plot_kwargs)`` on the current axes, as
    nnabla's. The file is parsed as numbers only (index as int64, value as float32, as nnabla's
    ``np.genfromtxt``); a line that is not a monitor's raises ``ValueError`` naming it (where
    ``np.genfromtxt`` fills in -1 or nan or raises). Needs matplotlib.

    Example::

        >>> import os, tempfile
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> from gradhub_compat.nnabla.monitor import Monitor, MonitorSeries, plot_series
        >>> tmp = tempfile.TemporaryDirectory()
        >>> s = MonitorSeries("loss", Monitor(tmp.name), interval=1, verbose=False)
        >>> for i, v in enumerate([1.0, 0.5, 0.25]):
        ...     s.add(i, v)
        >>> plot_series(os.path.join(tmp.name, "loss.series.txt"), {"label": "loss"})
        >>> line = plt.gca().lines[-1]
        >>> line.get_xdata().tolist(), line.get_ydata().tolist(), line.get_label()
        ([0, 1, 2], [1.0, 0.5, 0.25], 'loss')
        >>> plt.close("all")
        >>> tmp.cleanup()
    """
    plt = _pyplot("plot_series")
    index, values = _read_columns("plot_series", filename, 1)
    plt.plot(index, values, **({} if plot_kwargs is None else plot_kwargs))


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 3600 * 24}


def plot_time_elapsed(
    filename: Any, elapsed: bool = False, unit: str = "s", plot_kwargs: dict[str, Any] | None = None
) -> None:
    """Plot a :class:`MonitorTimeElapsed` file (``*.timer.txt``): the indices against the
    seconds between flushes (``elapsed=False``, the second column) or since the start
    (``elapsed=True``, the fourth), divided by 60, 3600 or 86400 for ``unit`` ``"m"``, ``"h"``,
    ``"d"`` (``"s"``: as written; another unit raises ``ValueError``), with
    ``matplotlib.pyplot.plot(index, values, **plot_kwargs)``, as nnabla's (float32 values, as
    its ``np.genfromtxt``). Needs matplotlib.

    Example::

        >>> import os, tempfile
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> from gradhub_compat.nnabla.monitor import plot_time_elapsed
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "time.timer.txt")
        >>> with open(path, "w") as f:
        ...     _ = f.write("9 30.0 10 30.0\\n19 90.0 10 120.0\\n")
        >>> plot_time_elapsed(path, elapsed=True, unit="m")
        >>> plt.gca().lines[-1].get_ydata().tolist()
        [0.5, 2.0]
        >>> plt.close("all")
        >>> tmp.cleanup()
    """
    if unit not in _UNITS:
        raise ValueError(
            f"nnabla.monitor.plot_time_elapsed: the argument `unit` must be chosen from "
            f"{{s|m|h|d}}, got {unit!r}"
        )
    plt = _pyplot("plot_time_elapsed")
    index, values = _read_columns("plot_time_elapsed", filename, 3 if elapsed else 1)
    if unit != "s":
        values /= np.float32(_UNITS[unit])
    plt.plot(index, values, **({} if plot_kwargs is None else plot_kwargs))
